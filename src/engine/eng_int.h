/*
 * eng_int.h - private state shared by the engine's files: one worker (struct eng) and what it
 * hands to eng_result_build(): SIP message summaries, candidate RTP flows with their packets in
 * compact form, and raw RTCP packets. Statistics that need the SDP of another host pair (clock
 * rates of dynamic payload types, telephone-event types) are computed at build time, so that
 * the outcome does not depend on which worker saw which packet first.
 */
#ifndef SIPNAB_ENG_INT_H
#define SIPNAB_ENG_INT_H

#include <glib.h>

#include "sipnab/cap_decode.h"
#include "sipnab/cap_sctp.h"
#include "sipnab/cap_tcp.h"
#include "sipnab/eng.h"
#include "sipnab/eng_result.h"
#include "sipnab/rtp_stream.h"
#include "sipnab/sn_arena.h"

/* One RTP packet as kept for the stream statistics (24 bytes). */
struct eng_rtp_pkt {
	int64_t ts_ns;     /* arrival */
	uint32_t rtp_ts;   /* RTP timestamp */
	uint16_t seq;
	uint16_t udp_len;  /* RTP packet length, saturated at 65535 */
	uint8_t pt;        /* payload type; bit 7 = marker */
	uint8_t pl_len;    /* bytes of the payload kept in pl (<= 4) */
	uint8_t pl[4];     /* first payload bytes (RFC 4733 event, E bit, duration) */
	uint8_t pad[2];
};

struct eng_flow_key {
	struct sn_addr src, dst;
	uint16_t sport, dport;
	uint32_t ssrc;
};

/*
 * A candidate RTP stream seen by one worker. Its statistics are computed as packets arrive
 * (online) as long as every packet has a static payload type, whose clock rate no SDP can
 * change; from the first dynamic-type packet on (its clock rate and whether it is
 * telephone-event depend on an SDP that another worker may hold) the packets are kept in
 * compact form (pkts) and eng_result_build() continues the same computation with the SDP's
 * answer. Either way the numbers are those of one pass over the packets in order.
 */
struct eng_flow {
	struct eng_flow_key key;
	uint32_t file_index;      /* first packet's position, for ordering */
	uint64_t offset;
	int64_t first_ns;         /* first packet's arrival */
	uint8_t first_pt;         /* first packet's payload type */
	bool deferred;            /* a dynamic payload type was seen: pkts holds the rest */
	uint16_t last_seq;        /* for the sequence heuristic */
	uint32_t total;           /* packets seen (online + kept) */
	uint32_t seq_steps;       /* packets whose seq was the previous one's + 1 */
	struct rtp_stream online; /* statistics of the packets before the first dynamic type */
	struct eng_rtp_pkt *pkts; /* owned, count entries: packets from the first dynamic type */
	uint32_t count, cap;
	uint32_t dropped;         /* packets past the per-stream budget */
};

/* An RTCP compound packet kept raw (bytes in the worker's arena). */
struct eng_rtcp_pkt {
	int64_t ts_ns;
	struct sn_addr src, dst;
	uint16_t sport, dport;
	const uint8_t *data;
	uint32_t len;
};

struct ws_msg;

/* A message's time and Call-ID hash (eng_config.merge_keys): 16 bytes where the message is 216 */
struct eng_msg_key {
	int64_t ts_ns;
	uint32_t call_id_hash;
};

struct eng {
	struct eng_config cfg;
	struct eng_stats st;
	struct cap_decoder *dec;      /* owned */
	struct cap_tcp *tcp;          /* owned */
	struct cap_sctp_reasm *sctp;  /* owned */
	struct sn_arena parse;        /* reset after every SIP message */
	struct sn_arena sdp;          /* reset before every SDP body */
	struct sn_arena keep;         /* summaries, raw messages, RTCP bytes */
	bool record_had_sip;          /* the record being processed completed a SIP message */
	uint8_t *scratch;             /* unmask buffer for one WebSocket frame */
	size_t scratch_cap;
	/* the record being processed */
	uint32_t cur_file;
	uint64_t cur_offset;
	uint32_t cur_sub;
	int64_t cur_ts;
	const uint8_t *cur_data;      /* the record's bytes (valid while its reader lives) */
	bool cur_transient;           /* ... unless transient: then kept parts are copied */
	uint8_t cur_data_at;          /* the record's data_at */
	uint32_t cur_len;
	GHashTable *calls;            /* Call-ID -> struct call_cache (keys in keep) */
	uint32_t calls_dropped_kept;  /* dropped Call-IDs remembered in calls */
	/* kept Call-IDs in the order they were first seen (a FIFO through call_cache.next), for
	 * eng_config.rotate; each kept Call-ID is a "life" numbered from 0, and evicting the
	 * oldest first makes the evicted lives exactly those numbered below lives_evicted */
	struct call_cache *oldest, *youngest;
	struct call_cache *cc_free;   /* evicted entries for reuse */
	uint32_t lives;               /* lives started */
	uint32_t lives_evicted;       /* lives evicted (the oldest ones) */
	uint32_t msgs_evicted;        /* messages in msgs that belong to evicted lives */
	/* outputs */
	struct eng_msg *msgs;         /* owned array */
	bool msgs_sorted;             /* compacted and sorted (eng_msgs_sort()); no more come */
	struct eng_msg_key *msg_keys; /* msg_count, with cfg.merge_keys once sorted; owned */
	uint32_t msg_count, msg_cap;
	uint32_t msgs_populated;      /* msgs[0, this) faulted in ahead (eng_msg_record()) */
	struct eng_flow *flows;       /* owned array */
	uint32_t flow_count, flow_cap;
	uint32_t flows_populated;     /* flows[0, this) faulted in ahead (flow_get()) */
	uint32_t *flow_index;         /* open addressing: flow number + 1, 0 = empty */
	uint32_t flow_index_cap;      /* power of two */
	GHashTable *dropped_flows;    /* hashes of flows not tracked (max_streams); owned keys */
	struct eng_rtcp_pkt *rtcp;    /* owned array */
	uint32_t rtcp_count, rtcp_cap;
};

struct sip_msg;

/* eng_summary.c: keep a parsed message as a struct eng_msg (strings copied). */
void eng_msg_record(struct eng *e, enum eng_transport tr, const struct cap_packet *pkt,
		    const struct sip_msg *msg, const uint8_t *raw);
void eng_msgs_free(struct eng *e);
/* Remove the messages of evicted Call-IDs (eng_config.rotate) from e->msgs, keeping the order. */
void eng_msgs_compact(struct eng *e);

/* eng_merge.c: drop evicted messages and sort the rest by time (once, after the input). */
void eng_msgs_sort(struct eng *e);

/* eng_call.c: group the sorted messages into calls; sets msg->call and msg->retransmission.
 * @p call_id_hash: each message's eng_msg.call_id_hash in the order of r->msgs, or NULL (then
 * the grouping by Call-ID runs on one thread). */
void eng_calls_build(struct eng_result *r, bool invite_only, uint32_t threads,
		     const uint32_t *call_id_hash);

/* eng_media.c */
void eng_media_udp(struct eng *e, const struct cap_packet *pkt);
void eng_media_free(struct eng *e);
/* Free the candidate flows only (after eng_result_build() used them). */
void eng_flows_free(struct eng *e);
/* The same, when the packet lists of flows [0, first) were freed already and their memory
 * may have been given back (sn_mem_release()): those flows are not read again. Reading a
 * page given back faults in a fresh one on some kernels (the development VM's maps no
 * shared zero page for a read), so reading them all back would undo the give-back. */
void eng_flows_free_from(struct eng *e, uint32_t first);

#endif
