/*
 * sip_txn.h - SIP transaction matching (RFC 3261 §17.1.3, §17.2.3) for an observer that sees
 * both sides of a transaction (the capture analyser) and, later, for the proxy.
 *
 * Input is a small fact record, struct sip_txn_msg, not a parsed struct sip_msg: the capture
 * engine keeps one summary per message and replays them here later, in timestamp order.
 * sip_txn_table_observe() matches each message to a transaction, creates transactions for new
 * requests, advances the transaction state and reports what the message was (new request,
 * retransmission, provisional, final, ACK for a non-2xx, ACK for a 2xx, CANCEL, stray).
 *
 * A transaction is keyed by (hop, top-Via branch, top-Via sent-by, method) when the branch
 * starts with the magic cookie "z9hG4bK"; otherwise by the RFC 2543 rules (Request-URI, tags,
 * Call-ID, CSeq, top Via). ACK for a non-2xx final is part of the INVITE transaction; ACK for a
 * 2xx is transaction-less (§13.2.2.4, §17.1.1.3); CANCEL has its own transaction, linked to the
 * INVITE transaction it cancels.
 *
 * Ownership: the table owns every struct sip_txn and the bytes it keeps (copied from the
 * borrowed slices of struct sip_txn_msg). A transaction lives until it is expired or evicted;
 * the on_free callback given at creation is called just before that, so a caller that stores
 * txn pointers (or txn->user) can drop them.
 * Thread: a table belongs to one thread (one capture worker, or the proxy loop); no locks.
 */
#ifndef SIPNAB_SIP_TXN_H
#define SIPNAB_SIP_TXN_H

#include "sipnab/sip_msg.h"
#include "sipnab/sn_base.h"

/* RFC 3261 §17.1.1.1 timer values, used for the default expiry times. */
#define SIP_TXN_T1_NS	(500LL * 1000 * 1000)
#define SIP_TXN_64T1_NS (64 * SIP_TXN_T1_NS)

/*
 * Bit 0 of struct sip_txn_msg.hop may carry the direction of travel; matching ignores it,
 * because a response travels the other way along the same path as its request.
 */
#define SIP_TXN_HOP_DIR 1u

/* Facts transaction and dialog matching need; every slice is borrowed. */
struct sip_txn_msg {
	bool is_request;
	enum sip_method method;	     /* request: its method; response: the CSeq method */
	struct sn_slice method_name; /* for SIP_METHOD_UNKNOWN */
	uint16_t status;	     /* responses */
	struct sn_slice ruri;	     /* requests */
	struct sn_slice call_id;
	struct sn_slice from_tag;
	struct sn_slice to_tag;
	uint32_t cseq;
	struct sn_slice branch;	 /* top Via branch ("" if none) */
	struct sn_slice sent_by; /* top Via sent-by host[:port] as written */
	struct sn_slice top_via; /* whole top Via value, for the RFC 2543 fallback */
	int64_t ts_ns;		 /* when it was seen */
	/* Where it was seen: capture: host pair id << 1 | direction; proxy: 0. SIP_TXN_HOP_DIR */
	uint32_t hop;
};

/* What a message was, as decided by sip_txn_table_observe(). */
enum sip_txn_event {
	SIP_TXN_EV_NEW_REQUEST,		    /* first sight of a request: a new transaction */
	SIP_TXN_EV_REQUEST_RETRANSMISSION,  /* same request again on the same hop */
	SIP_TXN_EV_ACK_NON2XX,		    /* ACK absorbed into its INVITE transaction */
	SIP_TXN_EV_ACK_2XX,		    /* transaction-less ACK (for a 2xx, or unmatched) */
	SIP_TXN_EV_CANCEL,		    /* new CANCEL transaction */
	SIP_TXN_EV_PROVISIONAL,		    /* 1xx, first sight of this status and To tag */
	SIP_TXN_EV_FINAL,		    /* 2xx-6xx, first sight of this status and To tag */
	SIP_TXN_EV_RESPONSE_RETRANSMISSION, /* status and To tag already seen for the txn */
	/* No transaction: one is made so that its retransmissions are recognised. */
	SIP_TXN_EV_STRAY_RESPONSE,
};

/*
 * Transaction state (RFC 3261 §17). An observer sees both client and server, so the state is
 * derived from what was seen: INVITE: CALLING -> PROCEEDING -> COMPLETED (3xx-6xx) ->
 * CONFIRMED (ACK seen, the server's view), or TERMINATED on a 2xx; non-INVITE: TRYING ->
 * PROCEEDING -> COMPLETED. TERMINATED after COMPLETED/CONFIRMED needs timers (D, I, J, K),
 * which only the proxy will run.
 */
enum sip_txn_state {
	SIP_TXN_ST_CALLING,    /* INVITE seen, no response */
	SIP_TXN_ST_TRYING,     /* non-INVITE seen, no response */
	SIP_TXN_ST_PROCEEDING, /* a provisional response seen */
	SIP_TXN_ST_COMPLETED,  /* final response seen (INVITE: 3xx-6xx) */
	SIP_TXN_ST_CONFIRMED,  /* INVITE: ACK for the non-2xx final seen */
	SIP_TXN_ST_TERMINATED, /* INVITE: 2xx seen */
};

/* One transaction. Fields are read-only for callers, except user. Owner: the table. */
struct sip_txn {
	enum sip_method method;	     /* method that created it (INVITE, CANCEL, BYE ...) */
	struct sn_slice method_name; /* as written; owned by the txn */
	enum sip_txn_state state;
	uint32_t hop; /* hop of the first message, as given */
	uint32_t cseq;
	struct sn_slice call_id;      /* owned by the txn */
	struct sn_slice branch;	      /* owned by the txn; empty for RFC 2543 transactions */
	bool rfc2543;		      /* matched by the RFC 2543 rules (no magic cookie) */
	bool orphan;		      /* created by a stray response: the request was not seen */
	int64_t first_request_ns;     /* 0 when orphan */
	int64_t first_provisional_ns; /* 0 when none */
	int64_t final_ns;	      /* first final response; 0 when none */
	int64_t last_ns;	      /* last message of any kind */
	uint16_t final_status;	      /* first final status; 0 when none */
	uint32_t request_count;	      /* retransmissions = request_count - 1 */
	uint32_t response_count;      /* every response, retransmissions included */
	uint32_t response_retransmission_count;
	uint32_t ack_count; /* INVITE: ACKs for the non-2xx final (retransmissions too) */
	/* INVITE: its CANCEL transaction; CANCEL: the INVITE it cancels; NULL when unknown or
	 * dropped from the table. */
	struct sip_txn *cancel;
	void *user; /* the caller's; never touched by the table */
};

/* Called just before the table frees a transaction (eviction, expiry, table free). */
typedef void sip_txn_free_fn(struct sip_txn *txn, void *ctx);

/* Creation parameters of a table. */
struct sip_txn_table_cfg {
	uint32_t capacity; /* most transactions kept; past it the least recently used goes */
	/* A finished transaction is dropped this long after its last message (0: 64*T1 = 32 s,
	 * which covers 2xx and final retransmissions; < 0: never). */
	int64_t linger_ns;
	/* An unanswered or provisional-only transaction is dropped this long after its last
	 * message (0: 10 min; < 0: never). */
	int64_t pending_ns;
	sip_txn_free_fn *on_free; /* may be NULL */
	void *cb_ctx;		  /* passed to on_free */
};

struct sip_txn_table;

/**
 * Fill a fact record from a parsed message.
 * @param m     a parsed message (sip_msg_parse() returned SN_OK or SN_ETRUNC)
 * @param out   filled; slices borrow the bytes @p m borrows
 * @param ts_ns when the message was seen
 * @param hop   where it was seen; see SIP_TXN_HOP_DIR
 */
void sip_txn_msg_from(const struct sip_msg *m, struct sip_txn_msg *out, int64_t ts_ns,
		      uint32_t hop);

/**
 * True when a branch starts with the RFC 3261 magic cookie "z9hG4bK" (§8.1.1.7).
 * @param branch the top Via branch value
 * @return true for an RFC 3261 branch
 */
bool sip_txn_branch_is_rfc3261(struct sn_slice branch);

/**
 * Create a table.
 * @param cfg capacity (at least 1), expiry times and free callback
 * @return the table; never NULL
 * Ownership: the caller frees it with sip_txn_table_free().
 */
struct sip_txn_table *sip_txn_table_new(const struct sip_txn_table_cfg *cfg);

/**
 * Free a table and every transaction in it (on_free is called for each).
 * @param t the table, or NULL
 */
void sip_txn_table_free(struct sip_txn_table *t);

/**
 * Match one message to a transaction and advance it. Messages must come in timestamp order;
 * transactions idle longer than the configured times (measured at @p m->ts_ns) are dropped
 * first, and when the table is full the least recently used transaction is dropped.
 * @param t   the table
 * @param m   the message facts; slices are copied when kept
 * @param txn set to the transaction, or NULL for SIP_TXN_EV_ACK_2XX
 * @param ev  set to what the message was
 * @return SN_OK; SN_EPARSE when a response carries a status outside 100..699 or answers an
 *         ACK, or the message has no method (nothing is changed).
 * Thread: the table's owner.
 */
enum sn_status sip_txn_table_observe(struct sip_txn_table *t, const struct sip_txn_msg *m,
				     struct sip_txn **txn, enum sip_txn_event *ev);

/**
 * Drop transactions idle for longer than the configured times at @p now_ns.
 * @param t      the table
 * @param now_ns the current time
 * @return the number of transactions dropped
 */
uint32_t sip_txn_table_expire(struct sip_txn_table *t, int64_t now_ns);

/**
 * Number of transactions held.
 * @param t the table
 * @return the count
 */
uint32_t sip_txn_table_count(const struct sip_txn_table *t);

/**
 * Number of transactions dropped because the table was full (not by expiry).
 * @param t the table
 * @return the count
 */
uint64_t sip_txn_table_evicted_count(const struct sip_txn_table *t);

/**
 * Name of an event ("NEW_REQUEST" ...), for logs and tests.
 * @param ev the event
 * @return a static string
 */
const char *sip_txn_event_name(enum sip_txn_event ev);

/**
 * Name of a state ("CALLING" ...), for logs and tests.
 * @param st the state
 * @return a static string
 */
const char *sip_txn_state_name(enum sip_txn_state st);

#endif
