/*
 * rtp_stream.h - RTP header parsing (RFC 3550 §5.1) and per-stream statistics computed the way
 * Wireshark's RTP stream analysis does (ui/tap-rtp-analysis.c, Wireshark 4.0), so that the
 * numbers agree with `tshark -q -z rtp,streams`: packets, expected, lost, sequence errors,
 * min/mean/max delta, min/mean/max jitter (RFC 3550 A.8), clock skew. On top of that:
 * duplicates and out-of-order packets (a 256-packet window), loss bursts, marker packets,
 * payload-type changes, comfort noise and RFC 4733 DTMF digits.
 *
 * A stream is one SSRC on one 5-tuple; the caller decides the key and owns the storage
 * (rtp_stream_init()); nothing here allocates. Times are nanoseconds since the epoch as given
 * by the caller; results are in milliseconds as doubles.
 * Thread: a stream belongs to the worker that updates it; no shared state.
 */
#ifndef SIPNAB_RTP_STREAM_H
#define SIPNAB_RTP_STREAM_H

#include "sipnab/sn_base.h"

#define RTP_HDR_MIN_LEN 12u
#define RTP_PT_NONE	(-1) /* "no telephone-event payload type" for rtp_stream_init() */
#define RTP_PT_CN	13   /* comfort noise (RFC 3389) */
#define RTP_PT_CN_OLD	19   /* old comfort-noise type, treated like 13 (as Wireshark does) */
#define RTP_DTMF_MAX	32u  /* digits kept per stream; later ones are counted, not kept */
#define RTP_DUP_WINDOW	256u /* sequence numbers remembered for duplicate detection */

/* Fixed header and its extensions, as parsed by rtp_hdr_parse(). */
struct rtp_hdr {
	uint8_t version;	 /* always 2 after a successful parse */
	bool padding;		 /* P bit */
	bool extension;		 /* X bit */
	bool marker;		 /* M bit */
	uint8_t csrc_count;	 /* CC */
	uint8_t pt;		 /* payload type, 0..127 */
	uint16_t seq;		 /* sequence number */
	uint32_t ts;		 /* RTP timestamp */
	uint32_t ssrc;		 /* synchronisation source */
	uint16_t ext_profile;	 /* "defined by profile" word of the extension, if any */
	uint32_t ext_len;	 /* extension data bytes (without its 4-byte header) */
	uint32_t hdr_len;	 /* fixed header + CSRCs + extension, in bytes */
	uint32_t pad_len;	 /* padding bytes at the end (last octet), 0 without P */
	struct sn_slice payload; /* payload without padding; borrowed from the packet */
};

/**
 * Parse an RTP header (RFC 3550 §5.1).
 * @param p the UDP payload
 * @param len its length in bytes
 * @param out filled on success
 * @return SN_OK; SN_EPARSE when the version is not 2, the packet is shorter than its header
 *         (CSRC list, extension) or the padding count does not fit.
 */
enum sn_status rtp_hdr_parse(const uint8_t *p, size_t len, struct rtp_hdr *out);

/**
 * Cheap heuristic: could this UDP payload be RTP? Version 2, at least 12 bytes, payload type
 * not in 72..95 (the RTCP range, RFC 5761 §4), CSRC list and extension fit in the packet.
 * @param p the UDP payload
 * @param len its length in bytes
 * @return true when the bytes pass every check
 */
bool rtp_is_plausible(const uint8_t *p, size_t len);

/**
 * Clock rate of a static payload type (RFC 3551 §6 Tables 4 and 5, as Wireshark's table).
 * @param pt payload type 0..127
 * @return the rate in Hz, or 0 for dynamic and unassigned types
 */
uint32_t rtp_pt_clock_rate(uint8_t pt);

/* Per-packet flags of the last update (Wireshark's STAT_FLAG_* meanings). */
enum rtp_stream_flag {
	RTP_STREAM_F_FIRST = 1u << 0,	      /* first packet of the stream */
	RTP_STREAM_F_MARKER = 1u << 1,	      /* marker bit set */
	RTP_STREAM_F_WRONG_SEQ = 1u << 2,     /* sequence number not previous+1 */
	RTP_STREAM_F_WRONG_TS = 1u << 3,      /* timestamp before the first packet's (mod 2^31) */
	RTP_STREAM_F_PT_CHANGE = 1u << 4,     /* payload type differs from the previous packet */
	RTP_STREAM_F_REG_PT_CHANGE = 1u << 5, /* change of the regular (non-CN) payload type */
	RTP_STREAM_F_CN = 1u << 6,	      /* comfort noise (PT 13 or 19) */
	RTP_STREAM_F_FOLLOW_CN = 1u << 7,     /* packet after a comfort-noise packet */
	RTP_STREAM_F_EVENT = 1u << 8,	      /* RFC 4733 telephone-event packet */
	RTP_STREAM_F_DUPLICATE = 1u << 9,     /* sequence number already seen */
	RTP_STREAM_F_REGULAR = 1u << 10,      /* counted in delta/jitter statistics */
};

/*
 * State and results of one stream. Read the public result fields directly; the Wireshark
 * state block is internal. Owner: the caller (engine worker); no pointers inside.
 */
struct rtp_stream {
	/* configuration */
	uint32_t ssrc;	    /* the stream's SSRC */
	int32_t clock_rate; /* Hz for dynamic payload types; <= 0 = unknown */
	int16_t te_pt;	    /* telephone-event payload type, or RTP_PT_NONE */

	/* results */
	uint64_t packets;	 /* RTP packets received, duplicates included */
	uint64_t bytes;		 /* UDP payload bytes (RTP header + payload + padding) */
	int64_t first_ns;	 /* arrival of the first packet, ns since the epoch */
	int64_t last_ns;	 /* arrival of the last packet */
	uint32_t seq_errors;	 /* packets whose seq was not previous+1 (Wireshark "sequence") */
	uint32_t duplicates;	 /* seq seen before within RTP_DUP_WINDOW */
	uint32_t out_of_order;	 /* seq below the highest seen, not a duplicate */
	uint32_t marker_packets; /* packets with the M bit */
	uint32_t pt_changes;	 /* packets whose PT differs from the previous packet's */
	uint32_t reg_pt_changes; /* changes of the regular PT, comfort noise ignored */
	uint32_t cn_packets;	 /* comfort-noise packets (PT 13, 19) */
	uint32_t event_packets;	 /* telephone-event packets */
	uint32_t max_burst_loss; /* longest run of consecutive missing seqs (at gap time) */
	uint32_t loss_bursts;	 /* number of gaps (loss events) */
	uint32_t gap_lost;	 /* seqs missing at gap time, summed (late arrivals not undone) */
	uint8_t first_pt;	 /* payload type of the first packet */
	uint8_t last_pt;	 /* payload type of the last packet */
	uint32_t last_clock_hz;	 /* clock rate used for the last timed packet, 0 = none yet */
	double max_delta_ms;	 /* max arrival gap between regular packets */
	double min_delta_ms;	 /* -1 until a regular packet arrives */
	double mean_delta_ms;	 /* Wireshark's mean delta */
	double jitter_ms;	 /* current J (RFC 3550 A.8) */
	double max_jitter_ms;	 /* max J over regular packets */
	double min_jitter_ms;	 /* -1 until a regular timed packet arrives */
	double mean_jitter_ms;	 /* Wireshark's "Mean Jitter" */
	double skew_ms;		 /* current clock skew (nominal - arrival) */
	double max_skew_ms;	 /* skew with the largest magnitude */
	uint32_t flags;		 /* enum rtp_stream_flag bits of the last packet */
	char dtmf[RTP_DTMF_MAX + 1]; /* RFC 4733 digits "0-9*#A-D", NUL-terminated */
	uint32_t dtmf_count;	     /* digits seen, including those beyond RTP_DTMF_MAX */

	/* internal: Wireshark's analysis state */
	uint16_t start_seq;	/* first seq */
	uint16_t stop_seq;	/* last received seq */
	uint16_t seq_num;	/* last in-order seq */
	bool under;		/* wrap detection flag */
	uint32_t seq_cycles;	/* sequence wraps */
	uint8_t pt;		/* previous packet's PT */
	uint8_t reg_pt;		/* regular PT */
	uint32_t first_ts;	/* RTP timestamp of the first packet */
	double time_ms;		/* arrival of the last in-time-sequence packet, from first_ns */
	double delta_ms;	/* last delta */
	double last_nominal_ms; /* nominal time (ts - first_ts) of the last timed packet */
	uint32_t pow2_khz;	/* the last power-of-two clock in kHz, 0 = none yet */
	uint32_t pow2_shift;	/* log2(pow2_khz) */

	/* internal: duplicate window and DTMF state */
	uint32_t max_ext_seq;		    /* highest extended seq seen */
	uint64_t seen[RTP_DUP_WINDOW / 64]; /* circular: bit x % RTP_DUP_WINDOW, for x in
					     * (max_ext_seq - RTP_DUP_WINDOW, max_ext_seq]:
					     * extended seq x was received */
	uint32_t dtmf_ts;		    /* RTP timestamp of the current event */
	bool dtmf_active;		    /* an event timestamp is known */
};

/**
 * Prepare @p s for a new stream.
 * @param s caller-provided storage
 * @param ssrc the SSRC
 * @param clock_rate clock rate in Hz for dynamic payload types (from SDP a=rtpmap or the codec
 *        name); static types (< 96) always use rtp_pt_clock_rate(); <= 0 means unknown, which
 *        disables jitter, skew and the jitter part of the statistics (delta is still computed).
 *        Wireshark gives a dynamic type that the SDP does not map no clock at all, so pass 0
 *        when the stream's dynamic types are not announced.
 * @param te_pt payload type of RFC 4733 telephone-event packets in this stream, or
 *        RTP_PT_NONE; such packets are decoded as DTMF and get no jitter statistics
 */
void rtp_stream_init(struct rtp_stream *s, uint32_t ssrc, int32_t clock_rate, int te_pt);

/**
 * Account one packet of the stream.
 * @param s the stream (its SSRC is not checked against @p h)
 * @param arrival_ns capture time, ns since the epoch
 * @param h the parsed header
 * @param udp_len UDP payload length (the whole RTP packet); added to bytes
 * Thread: the worker that owns @p s.
 */
void rtp_stream_update(struct rtp_stream *s, int64_t arrival_ns, const struct rtp_hdr *h,
		       uint32_t udp_len);

/** Expected packets (RFC 3550 A.3, Wireshark's formula); 0 before the first packet. */
int64_t rtp_stream_expected(const struct rtp_stream *s);
/** Lost packets = expected - received; negative when duplicates outnumber losses. */
int64_t rtp_stream_lost(const struct rtp_stream *s);
/** Lost as a percentage of expected (may be negative); 0 when nothing was expected. */
double rtp_stream_loss_pct(const struct rtp_stream *s);
/**
 * Mean length of a loss burst (gap_lost / loss_bursts), 0 without losses. Used for the
 * E-model BurstR.
 */
double rtp_stream_mean_burst(const struct rtp_stream *s);

/*
 * What is kept of a finished stream (rtp_stream_summarise()): the results a report, a filter
 * and a call's view read, without the analysis state that only further packets would need
 * (the sequence and timing state, the duplicate window). 128 bytes on x86-64 against the
 * stream's 320: a result that keeps one for each of many streams keeps 40 % less of them.
 * Fields as in struct rtp_stream.
 */
struct rtp_stats {
	uint64_t packets;
	uint64_t bytes;
	int64_t first_ns;
	int64_t last_ns;
	double max_delta_ms;
	double mean_delta_ms;
	double max_jitter_ms;
	double mean_jitter_ms;
	uint32_t seq_cycles; /* with start_seq and stop_seq: what rtp_stats_expected() needs */
	uint16_t start_seq;
	uint16_t stop_seq;
	uint32_t seq_errors;
	uint32_t duplicates;
	uint32_t out_of_order;
	uint32_t max_burst_loss;
	uint32_t marker_packets;
	char dtmf[RTP_DTMF_MAX + 1];
};

/** Copy the results of @p s into @p out. */
void rtp_stream_summarise(const struct rtp_stream *s, struct rtp_stats *out);
/** As rtp_stream_expected(), rtp_stream_lost() and rtp_stream_loss_pct(), of a summary: each
 *  gives what its namesake gives for the stream that was summarised. */
int64_t rtp_stats_expected(const struct rtp_stats *s);
int64_t rtp_stats_lost(const struct rtp_stats *s);
double rtp_stats_loss_pct(const struct rtp_stats *s);

#endif
