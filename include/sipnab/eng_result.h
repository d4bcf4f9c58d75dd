/*
 * eng_result.h - what the engine reconstructed from a capture: SIP messages (as compact
 * summaries), calls, RTP streams. Built by eng_result_build() from the workers' outputs in a
 * deterministic order, so the same input gives the same result however many workers ran.
 *
 * Ownership: a struct eng_result owns everything it points to (its arena and arrays) and is
 * freed by eng_result_free(). Immutable once built: any thread may read it.
 */
#ifndef SIPNAB_ENG_RESULT_H
#define SIPNAB_ENG_RESULT_H

#include "sipnab/eng.h"
#include "sipnab/rtcp.h"
#include "sipnab/rtp_stream.h"
#include "sipnab/sn_arena.h"
#include "sipnab/sn_base.h"

enum eng_transport {
	ENG_TR_UDP,
	ENG_TR_TCP,
	ENG_TR_WS,
	ENG_TR_SCTP,
};

/* Call states of REPORT.md. */
enum eng_call_state {
	ENG_CALL_SETUP,
	ENG_CALL_RINGING,
	ENG_CALL_IN_CALL,
	ENG_CALL_COMPLETED,
	ENG_CALL_CANCELLED,
	ENG_CALL_REJECTED,
	ENG_CALL_BUSY,
	ENG_CALL_DIVERTED,
	ENG_CALL_FAILED,
	ENG_CALL__COUNT,
};

/** "CALL_SETUP", "COMPLETED", ... */
const char *eng_call_state_name(enum eng_call_state st);

#define ENG_SDP_MAX_MEDIA 4
#define ENG_SDP_MAX_FMTS  128 /* every format the SDP parser takes (SDP_MAX_FORMATS) */
#define ENG_CODEC_LEN     24

/* One payload format of an SDP media line. */
struct eng_sdp_fmt {
	int16_t pt;                 /* payload type, -1 if not RTP */
	uint32_t clock_rate;        /* rtpmap or static rate, 0 unknown */
	char name[ENG_CODEC_LEN];   /* rtpmap encoding name or static name, "" unknown */
};

/* One m= line as the call and stream association need it. */
struct eng_sdp_media {
	struct sn_addr addr;        /* effective c= address */
	bool rtcp_mux;              /* (the one-byte fields next to addr's 17 bytes: 32 bytes in
				     * all on 64-bit systems) */
	bool rtp;                   /* RTP profile (not udptl/T.38 ...) */
	uint8_t fmt_count;          /* at most ENG_SDP_MAX_FMTS */
	uint16_t port;              /* 0 = disabled */
	uint16_t rtcp_port;         /* a=rtcp, else port+1 (0 when rtcp-mux) */
	struct eng_sdp_fmt *fmts;   /* fmt_count entries (NULL without any), in the message's
				     * arena: as many as the m= line has (a one-format media line
				     * took 280 bytes with room for 8, now 64) */
};

/* One SIP message. Strings are NUL-terminated, in the result's arena; "" when absent. */
struct eng_msg {
	int64_t ts_ns;
	uint32_t file_index;        /* input file */
	uint32_t sub;               /* message number within the record (TCP segments) */
	uint64_t offset;            /* record offset in its input: with ts and file, the order key */
	struct sn_addr src, dst;
	uint16_t sport, dport;
	uint8_t transport;          /* enum eng_transport */
	bool is_request;
	uint8_t method;             /* enum sip_method: request method, CSeq method for responses */
	uint16_t status;
	uint32_t cseq;
	const char *method_name;    /* request method token; CSeq method token for responses */
	const char *reason;
	const char *ruri;
	const char *call_id;
	const char *x_call_id;      /* X-Call-ID / X-CID, "" when absent */
	const char *from_uri, *to_uri;
	const char *from_tag, *to_tag;
	const char *branch, *sent_by;
	const char *top_via;        /* only when the branch lacks the RFC 3261 cookie */
	const char *user_agent;     /* requests without To tag only */
	uint8_t media_count;
	uint32_t life;              /* engine-private: which kept life of its Call-ID in its worker
				     * (eng_config.rotate evicts lives oldest first); sits in what
				     * was padding, so the struct does not grow */
	struct eng_sdp_media *media; /* media_count entries, NULL without SDP */
	const uint8_t *raw;          /* message bytes: in the file's mapping when the message lay
				      * in one record of a mapped file (valid while the readers live;
				      * read in when touched), else a copy in the result (reassembled
				      * TCP/WebSocket/fragments, streamed input) when
				      * eng_config.copy_messages, else NULL */
	uint32_t raw_len;
	/* set by eng_result_build() */
	bool retransmission;
	int32_t call;               /* index into eng_result.calls, -1 if none */
	uint32_t call_id_hash;      /* engine-private: sn_str_hash(call_id), for the build's
				     * grouping by Call-ID; in what was padding */
};

/* An RTP stream: one SSRC on one 5-tuple. */
struct eng_stream {
	struct sn_addr src, dst;
	uint16_t sport, dport;
	uint32_t ssrc;
	int16_t pt;                 /* first payload type */
	char codec[ENG_CODEC_LEN];  /* from SDP, else the static table, else "" */
	uint32_t clock_rate;
	struct rtp_stats rtp;       /* statistics (the stream's results, rtp_stream_summarise()) */
	double mos;                 /* E-model estimate, 0 when not computable */
	int32_t call;               /* index into eng_result.calls, -1 when no SDP announced it */
	bool announced;             /* an SDP endpoint matched */
	bool has_rtcp;              /* rtcp is set */
	struct rtcp_summary *rtcp;  /* RTCP about this SSRC from the receiver; NULL if none.
				     * Owned by the result (its arena) */
};

/* A call: every dialog and hop sharing a Call-ID, plus legs linked by X-Call-ID. */
struct eng_call {
	const char *call_id;        /* Call-ID of the first message */
	const char *from_uri, *to_uri, *from_tag, *to_tag;
	const char *kind;           /* "INVITE" for calls, else the method (REGISTER, OPTIONS ...) */
	bool is_invite;
	enum eng_call_state state;
	int64_t start_ns, ring_ns, answer_ns, end_ns; /* -1 when not seen */
	int64_t attempt_ns;         /* INVITE of the attempt that set the outcome (after auth
				     * challenges); post-dial delay counts from here; -1 = start */
	uint16_t final_code;        /* 0 when none */
	const char *hangup;         /* "caller", "callee" or "" */
	uint32_t messages;
	uint32_t retransmissions;
	uint32_t dialogs;
	uint32_t auth_retries;
	uint32_t hops;              /* distinct host pairs */
	uint32_t legs;              /* Call-IDs joined into this call */
	/* The three lists below point into the result's call_* arrays (one allocation each for
	 * every call, not three per call). */
	const char **leg_ids;       /* legs entries */
	uint32_t *msgs;             /* indexes into eng_result.msgs, in time order */
	uint32_t msg_count;
	uint32_t *streams;          /* indexes into eng_result.streams */
	uint32_t stream_count;
};

struct eng_result {
	struct eng_stats stats;
	struct eng_msg **msgs;      /* sorted by time: each points into one of msg_store */
	uint32_t msg_count;
	struct eng_msg **msg_store; /* the workers' message arrays, owned (msg_store_count) */
	size_t msg_store_count;
	struct eng_call *calls;     /* sorted by first message time, then Call-ID */
	uint32_t call_count;
	struct eng_stream *streams; /* sorted by first packet, then src, dst, SSRC */
	uint32_t stream_count;
	uint32_t dialogs;
	uint32_t by_state[ENG_CALL__COUNT];
	/* what the calls' leg_ids, msgs and streams point into, owned */
	const char **call_leg_ids;
	uint32_t *call_msgs;
	uint32_t *call_streams;
	struct sn_arena arena;      /* strings and small arrays */
	struct sn_arena *keep;      /* the workers' keep arenas (message strings and bytes) */
	size_t keep_count;
};

/**
 * Build the result from finished engines (after eng_finish()). This consumes their outputs:
 * message summaries, kept bytes and candidate flows move into the result or are freed as soon
 * as they are used, so they are never held twice; afterwards the engines can only be freed.
 * @param engines the engines whose outputs are merged
 * @param count number of engines
 * @return the result; free it with eng_result_free()
 * Thread: any one thread, after every engine finished.
 */
struct eng_result *eng_result_build(struct eng *const *engines, size_t count);

void eng_result_free(struct eng_result *r);

/** Format "addr:port" ("[v6]:port" for IPv6) into @p buf (at least 64 bytes). */
const char *eng_endpoint_str(const struct sn_addr *a, uint16_t port, char *buf, size_t len);

#endif
