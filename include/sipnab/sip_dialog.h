/*
 * sip_dialog.h - INVITE dialogs of one Call-ID (RFC 3261 §12, §13, §15) and the call summary
 * a report needs.
 *
 * A struct sip_dialog_set follows every message of one Call-ID, in timestamp order, fed as the
 * same fact records and transaction events that sip_txn_table_observe() produced, so that
 * retransmissions never change dialog state. It tracks the dialogs created by the initial
 * INVITE (id = Call-ID, caller tag = From tag of the INVITE, callee tag = To tag of a
 * response): early on a 101-199 with a To tag, confirmed on a 2xx, several of them when the
 * request forks; terminated by BYE (either side), by a final non-2xx (early dialogs) or
 * by CANCEL/487. A new INVITE without To tag and with a higher CSeq after a final failure is
 * the same call continuing (an auth retry after 401/407); the call's outcome is that of the
 * last attempt. INVITEs inside a confirmed dialog are re-INVITEs.
 *
 * Ownership: the set owns its dialogs and copies every tag it keeps into its own arena.
 * Thread: a set belongs to one thread; no locks.
 * Limits: past SIP_DIALOG_SET_MAX_DIALOGS dialogs or SIP_DIALOG_SET_BUDGET bytes of tags the
 * set is marked truncated and stops creating dialogs.
 */
#ifndef SIPNAB_SIP_DIALOG_H
#define SIPNAB_SIP_DIALOG_H

#include "sipnab/sip_txn.h"
#include "sipnab/sn_base.h"

#define SIP_DIALOG_SET_MAX_DIALOGS 16u
#define SIP_DIALOG_SET_BUDGET	   8192u /* arena bytes for Call-ID and tags */

enum sip_dialog_state {
	SIP_DIALOG_ST_EARLY,
	SIP_DIALOG_ST_CONFIRMED,
	SIP_DIALOG_ST_TERMINATED,
};

/* A party of the call, for "who ended it". */
enum sip_dialog_party {
	SIP_DIALOG_PARTY_NONE,
	SIP_DIALOG_PARTY_CALLER,  /* the UA that sent the initial INVITE */
	SIP_DIALOG_PARTY_CALLEE,  /* the UA that answered, or a server that rejected */
	SIP_DIALOG_PARTY_UNKNOWN, /* capture began mid-call: the caller is not known */
};

/* How a dialog ended. */
enum sip_dialog_end {
	SIP_DIALOG_END_NONE,
	SIP_DIALOG_END_BYE,	  /* BYE (its response is not needed) */
	SIP_DIALOG_END_CANCEL,	  /* early dialog ended by CANCEL/487 */
	SIP_DIALOG_END_FAILURE,	  /* early dialog ended by a final 3xx-6xx (other than 487) */
	SIP_DIALOG_END_ABANDONED, /* early dialog left over when the answered call ended */
};

/* One INVITE dialog. Owner: its set; read-only for callers. */
struct sip_dialog {
	enum sip_dialog_state state;
	struct sn_slice callee_tag; /* To tag of the response; the set's arena */
	int64_t created_ns;	    /* 0 when unknown */
	int64_t confirmed_ns;	    /* 0 when never confirmed or unknown */
	int64_t terminated_ns;	    /* 0 while not terminated */
	enum sip_dialog_party terminated_by;
	enum sip_dialog_end end;
	uint16_t end_status; /* the final response for END_FAILURE/END_CANCEL, else 0 */
	uint32_t attempt;    /* INVITE attempt that created it, from 1 */
	uint32_t reinvite_count;
	bool partial; /* known only from in-dialog messages (capture began mid-call) */
};

/*
 * Call state of the report contract. Exactly these values and meanings:
 *   CALL_SETUP  INVITE sent, no response beyond 100
 *   RINGING     18x seen, no final
 *   IN_CALL     2xx, no BYE yet
 *   COMPLETED   answered and ended by BYE
 *   CANCELLED   CANCEL or 487 before answer
 *   REJECTED    4xx except 486 and 408, or 603 (a 401/407 followed by a retry is not final)
 *   BUSY        486 or 600
 *   DIVERTED    3xx
 *   FAILED      5xx, 6xx other than 600/603, 408, or no response at all within 64*T1
 */
enum sip_dialog_call_state {
	SIP_DIALOG_CALL_SETUP,
	SIP_DIALOG_CALL_RINGING,
	SIP_DIALOG_CALL_IN_CALL,
	SIP_DIALOG_CALL_COMPLETED,
	SIP_DIALOG_CALL_CANCELLED,
	SIP_DIALOG_CALL_REJECTED,
	SIP_DIALOG_CALL_BUSY,
	SIP_DIALOG_CALL_DIVERTED,
	SIP_DIALOG_CALL_FAILED,
};

/* What a call report needs. Timestamps are 0 when not seen. */
struct sip_dialog_summary {
	enum sip_dialog_call_state state;
	int64_t invite_ns;	      /* first INVITE */
	int64_t attempt_ns;	      /* INVITE of the last attempt (after auth challenges) */
	int64_t first_provisional_ns; /* first 1xx (100 included) to an initial INVITE */
	int64_t first_18x_ns;	      /* first 180-189 to an initial INVITE */
	int64_t answer_ns;	      /* first 2xx to the initial INVITE */
	int64_t end_ns;		      /* BYE, final failure or CANCEL */
	uint16_t final_status;	      /* final response of the last INVITE attempt; 0 = none */
	bool cancelled;		      /* CANCEL or 487 ended the last attempt before answer */
	bool timed_out;		      /* no response to the last INVITE within 64*T1 */
	bool partial;		      /* capture began after the initial INVITE */
	bool truncated;		      /* a limit was hit; some dialogs were not tracked */
	bool has_invite;	      /* any INVITE or INVITE response was seen */
	enum sip_dialog_party hangup_by;
	uint32_t dialog_count;
	uint32_t confirmed_count;  /* dialogs that were confirmed at some point */
	uint32_t attempt_count;	   /* initial INVITEs with distinct CSeq (1 + retries) */
	uint32_t auth_retry_count; /* attempts that followed a 401/407 */
	uint32_t reinvite_count;
};

struct sip_dialog_set;

/**
 * Create the dialog set of one Call-ID.
 * @param call_id the Call-ID (copied)
 * @return the set; never NULL
 * Ownership: the caller frees it with sip_dialog_set_free().
 */
struct sip_dialog_set *sip_dialog_set_new(struct sn_slice call_id);

/**
 * Free a set and its dialogs.
 * @param s the set, or NULL
 */
void sip_dialog_set_free(struct sip_dialog_set *s);

/**
 * Apply one message, in timestamp order, with the event sip_txn_table_observe() gave it.
 * Retransmission events change nothing.
 * @param s  the set
 * @param m  the message facts (slices are copied when kept)
 * @param ev the transaction event of @p m
 * @return SN_OK; SN_ENOTFOUND when @p m has another Call-ID (ignored); SN_ELIMIT when a
 *         dialog could not be created (too many, or the arena budget): the set is marked
 *         truncated and the rest of the message is still applied.
 * Thread: the set's owner.
 */
enum sn_status sip_dialog_set_observe(struct sip_dialog_set *s, const struct sip_txn_msg *m,
				      enum sip_txn_event ev);

/**
 * Number of dialogs.
 * @param s the set
 * @return the count
 */
uint32_t sip_dialog_set_dialog_count(const struct sip_dialog_set *s);

/**
 * One dialog, in creation order.
 * @param s the set
 * @param i index below sip_dialog_set_dialog_count()
 * @return the dialog, or NULL when @p i is out of range
 */
const struct sip_dialog *sip_dialog_set_dialog(const struct sip_dialog_set *s, uint32_t i);

/**
 * The dialog with a callee tag.
 * @param s          the set
 * @param callee_tag the To tag of the response that created it
 * @return the dialog, or NULL
 */
const struct sip_dialog *sip_dialog_set_find(const struct sip_dialog_set *s,
					     struct sn_slice callee_tag);

/**
 * The caller tag (From tag of the initial INVITE), owned by the set.
 * @param s the set
 * @return the tag; empty when no INVITE was seen
 */
struct sn_slice sip_dialog_set_caller_tag(const struct sip_dialog_set *s);

/**
 * Summarise the call.
 * @param s      the set
 * @param now_ns the end of observation (e.g. the last packet of the capture), used only to
 *               decide that an unanswered INVITE timed out; 0 = do not decide
 * @param out    filled
 */
void sip_dialog_set_summary(const struct sip_dialog_set *s, int64_t now_ns,
			    struct sip_dialog_summary *out);

/**
 * Report name of a call state ("CALL_SETUP", "RINGING", ...).
 * @param st the state
 * @return a static string
 */
const char *sip_dialog_call_state_name(enum sip_dialog_call_state st);

/**
 * Name of a dialog state ("EARLY", "CONFIRMED", "TERMINATED").
 * @param st the state
 * @return a static string
 */
const char *sip_dialog_state_name(enum sip_dialog_state st);

#endif
