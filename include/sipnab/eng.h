/*
 * eng.h - the analysis engine: takes capture records, decodes them, reassembles TCP, SCTP and
 * WebSocket transports, finds SIP messages by content on any port and counts what it saw.
 *
 * One struct eng is one single-threaded pipeline instance (the future per-core workers each own
 * one; their struct eng_stats are summed by eng_stats_merge()).
 * Thread: an engine belongs to one thread. Ownership: the engine copies nothing it is given
 * beyond the call, except TCP/SCTP/WebSocket bytes waiting for the rest of their message.
 */
#ifndef SIPNAB_ENG_H
#define SIPNAB_ENG_H

#include "sipnab/cap_reader.h"
#include "sipnab/sn_base.h"

#define ENG_MAX_METHOD_NAMES 64 /* distinct request methods counted by name */
#define ENG_METHOD_NAME_LEN  32 /* longer method tokens are counted as "(long)" */

struct eng_method_count {
	char name[ENG_METHOD_NAME_LEN]; /* NUL-terminated method token */
	uint64_t count;
};

/* What the engine saw; every field is a sum, so instances merge by addition. */
struct eng_stats {
	uint64_t packets;           /* records read */
	uint64_t bytes;             /* sum of original (wire) lengths */
	uint64_t sip_messages;      /* SIP messages parsed (requests + responses) */
	uint64_t sip_packets;       /* records that completed at least one SIP message */
	uint64_t rtp_packets;       /* UDP payloads that look like RTP */
	uint64_t rtcp_packets;      /* UDP payloads that look like RTCP */
	uint64_t other_packets;     /* everything else */
	uint64_t decode_errors;     /* malformed link/IP/transport headers, SCTP chunks, WS frames */
	uint64_t sip_errors;        /* payloads that started like SIP but did not parse */
	uint64_t truncated_packets; /* records cut by the snap length */
	int64_t first_ts_ns;        /* earliest record time; INT64_MAX when none */
	int64_t last_ts_ns;         /* latest record time; INT64_MIN when none */
	uint64_t sip_udp, sip_tcp, sip_ws, sip_sctp; /* SIP messages per transport */
	uint64_t ip_fragments, ip_reassembled, frag_timeouts, tunnels;
	uint64_t tcp_retransmissions, tcp_out_of_order, tcp_gaps;
	uint64_t requests, responses;
	uint64_t rtp_candidates;     /* UDP payloads that passed the RTP header checks */
	uint64_t streams_dropped;    /* candidate streams not tracked: max_streams reached */
	uint64_t rtp_dropped;        /* RTP packets not kept: stream budget or max_streams */
	uint64_t msgs_dropped;       /* SIP messages not kept: a call or memory bound */
	uint64_t calls_dropped;      /* Call-IDs not kept: max_calls reached (rotate: evicted) */
	uint64_t calls_rotated;      /* kept Call-IDs evicted for a newer one (rotate); also in
				      * calls_dropped, and their kept messages in msgs_dropped */
	uint64_t responses_by_code[700];    /* index = status code (100..699) */
	uint32_t method_count;              /* entries used in methods */
	struct eng_method_count methods[ENG_MAX_METHOD_NAMES];
	uint64_t methods_other;             /* methods past ENG_MAX_METHOD_NAMES */
};

struct eng_config {
	bool rtp_heuristic;          /* keep RTP streams no SDP announced when they look like RTP */
	bool invite_only;            /* -c: report only INVITE calls */
	uint32_t max_streams;        /* candidate RTP streams per worker; 0 = default (1,000,000) */
	uint32_t stream_max_packets; /* packets kept per stream; 0 = default (16,777,216) */
	size_t keep_bytes;           /* budget for message summaries and bytes; 0 = 4 GiB */
	uint32_t max_calls;          /* Call-IDs kept per worker (-l); 0 = default (200,000) */
	bool rotate;                 /* -R: at max_calls, evict the worker's oldest Call-ID for the
				      * new one instead of dropping the new one */
	uint32_t call_max_msgs;      /* messages kept per Call-ID; 0 = default (10,000) */
	size_t msgs_reserve;         /* bytes of address space the message array starts with, so
				      * that it seldom moves; less than 1,024 messages' worth: it
				      * grows from 1,024. eng_run() chooses it when 0 (eng_run.c) */
	size_t flows_reserve;        /* bytes of address space the RTP flow array moves to when
				      * it outgrows its first 256 flows (bounded by max_streams);
				      * less than 514 flows' worth: none, it doubles. eng_run()
				      * chooses it when 0 (eng_run.c) */
	size_t keep_huge;            /* bytes of the keep arena's first blocks that are whole huge
				      * pages (sn_arena.huge_max); 0 = none. For a mapped file
				      * eng_run() shares ENG_KEEP_HUGE out over the engines */
	const uint8_t *input_map;    /* the mapping of the one input file when it is read in
				      * windows (cap_reader_read_windowed(); eng_run() sets it):
				      * a message that lies in one record is referred to there,
				      * as for records read through the mapping, not copied */
	bool merge_keys;             /* several workers: eng_msgs_sort() writes each message's
				      * time and Call-ID hash into an array of their own, which
				      * the merge of the workers' messages reads (eng_merge.c);
				      * eng_run() sets it */
	bool copy_messages;          /* keep a copy of every SIP message's bytes that the input
				      * does not keep (reassembled TCP/WebSocket/fragments, and all
				      * of streamed gzip or pipe input), for views that show them;
				      * the headless report does not, so it leaves them out (raw is
				      * then NULL for those messages) */
};

struct eng;

/** New engine; @p cfg may be NULL for defaults. */
struct eng *eng_new(const struct eng_config *cfg);

/**
 * Process one record (any link type).
 * @param e the engine
 * @param rec the record; its file_index and offset (with its time) order the outputs
 * Thread: the engine's thread.
 */
void eng_packet(struct eng *e, const struct cap_record *rec);

/**
 * eng_packet() on @p n records in order. For records handed over by another thread (a
 * worker's share of a chunk or batch): they are scattered over the input and were last
 * touched on another core, so their bytes are prefetched a few records ahead.
 * Thread: the engine's thread.
 */
void eng_packets(struct eng *e, const struct cap_record *recs, uint32_t n);

/** Flush transport state (TCP streams with buffered bytes); call once after the last record. */
void eng_finish(struct eng *e);

/** The counters so far. */
const struct eng_stats *eng_stats(const struct eng *e);

/** Initialise empty stats. */
void eng_stats_init(struct eng_stats *s);

/** Add @p src into @p dst (used to merge per-worker results). */
void eng_stats_merge(struct eng_stats *dst, const struct eng_stats *src);

void eng_free(struct eng *e);

#endif
