/*
 * rtp_stream.c - RTP header parsing and per-stream statistics.
 *
 * rtp_hdr_parse() checks the RFC 3550 §5.1 framing; rtp_stream_update() folds one packet into
 * a struct rtp_stream. The statistics reproduce the arithmetic of Wireshark 4.0's RTP stream
 * analysis (ui/tap-rtp-analysis.c, rtppacket_analyse(), as shipped in 4.0.x), which is what
 * `tshark -z rtp,streams` prints, so the two agree to the displayed precision:
 *
 *   - arrival times are ms (double) since the stream's first packet;
 *   - "in time sequence" means the RTP timestamp is at or after the first packet's, modulo
 *     2^31 (the raw 32-bit timestamps: not the extended one, not the previous packet's); a
 *     packet before it gets the wrong-timestamp flag, and only in-time-sequence packets update
 *     delta, jitter, skew and the reference arrival time;
 *   - the nominal time of a packet is (ts - first ts) mod 2^32 divided by the integer
 *     clock_rate/1000 (11025 Hz counts as 11 kHz); D = |arrival - (last in-time-sequence
 *     arrival + nominal - nominal of the last timed packet)|, J = (15 J + D) / 16;
 *   - delta = arrival - last in-time-sequence arrival;
 *   - a packet whose payload type has no clock (a telephone-event type, or a dynamic type the
 *     SDP does not map: Wireshark then has no payload name and uses clock 0) gets a delta and
 *     moves the reference arrival, but J and the reference nominal time stay: the next timed
 *     packet's D spans back to the last timed packet's timestamp;
 *   - comfort noise (PT 13, 19) is timed like audio (8000 Hz), but it and the packet after it
 *     are not regular;
 *   - "regular" packets (not the first, not marker, not comfort noise or the packet after it,
 *     not a wrong timestamp) feed min/max/mean delta and min/max/mean jitter; the means divide
 *     by the number of packets received before this one (duplicates and irregular packets
 *     included), exactly as Wireshark does;
 *   - sequence errors, wrap cycles and expected = last seq + 65536 cycles - first seq + 1 follow
 *     its heuristics, so lost = expected - received may be negative;
 *   - skew = nominal time - arrival time, both counted from the first packet.
 * So an RTP timestamp reset to below the first packet's (a re-INVITE keeping the SSRC) leaves
 * every packet irregular until the timestamps pass the first one again; that packet then shows
 * the whole gap as its delta and a jitter of about |gap + timestamp jump| / 16, as tshark does.
 *
 * Additions that Wireshark does not have: duplicates and out-of-order packets from a window of
 * RTP_DUP_WINDOW extended sequence numbers, loss bursts measured at the moment a gap is seen
 * (a late packet filling a hole reduces gap_lost but not max_burst_loss), and RFC 4733 digits,
 * one per event, an event being identified by its RTP timestamp (RFC 4733 §2.5.1.1: the end
 * packet is sent three times and long events are refreshed with the same timestamp).
 *
 * Not done here: SRTP, RTP header extensions' content, payload decoding other than RFC 4733,
 * and choosing the stream key (the engine does that). No allocation; no per-packet division
 * other than the ones the metrics need.
 * Ownership: the caller owns struct rtp_stream. Threading: one worker per stream; the static
 * clock-rate table is const.
 */
#include "config.h"

#include "sipnab/rtp_stream.h"

#include <math.h>
#include <string.h>

/* RFC 3551 §6 Tables 4 and 5, the same rates as Wireshark's clock_map. */
static const uint32_t rtp_static_clock[35] = {
	[0] = 8000,   [1] = 8000,   [2] = 8000,	  [3] = 8000,	[4] = 8000,   [5] = 8000,
	[6] = 16000,  [7] = 8000,   [8] = 8000,	  [9] = 8000,	[10] = 44100, [11] = 44100,
	[12] = 8000,  [13] = 8000,  [14] = 90000, [15] = 8000,	[16] = 11025, [17] = 22050,
	[18] = 8000,  [19] = 8000,  [25] = 90000, [26] = 90000, [28] = 90000, [31] = 90000,
	[32] = 90000, [33] = 90000, [34] = 90000,
};

static const char rtp_dtmf_chars[16] = {'0', '1', '2', '3', '4', '5', '6', '7',
					'8', '9', '*', '#', 'A', 'B', 'C', 'D'};

uint32_t rtp_pt_clock_rate(uint8_t pt)
{
	if (pt >= SN_ARRAY_SIZE(rtp_static_clock)) {
		return 0;
	}
	return rtp_static_clock[pt];
}

/* Header length (fixed + CSRC + extension) or 0 when it does not fit in len. */
static uint32_t rtp_hdr_len(const uint8_t *p, size_t len, uint32_t *ext_len)
{
	size_t n = RTP_HDR_MIN_LEN + 4u * (p[0] & 0x0f);

	*ext_len = 0;
	if (n > len) {
		return 0;
	}
	if (p[0] & 0x10) {
		if (n + 4 > len) {
			return 0;
		}
		*ext_len = 4u * sn_be16(p + n + 2);
		n += 4 + *ext_len;
		if (n > len) {
			return 0;
		}
	}
	return (uint32_t)n;
}

enum sn_status rtp_hdr_parse(const uint8_t *p, size_t len, struct rtp_hdr *out)
{
	uint32_t hlen;
	uint32_t ext_len;
	uint32_t pad = 0;

	if (len < RTP_HDR_MIN_LEN || (p[0] >> 6) != 2 || len > UINT32_MAX) {
		return SN_EPARSE;
	}
	hlen = rtp_hdr_len(p, len, &ext_len);
	if (hlen == 0) {
		return SN_EPARSE;
	}
	if (p[0] & 0x20) {
		pad = p[len - 1];
		/* RFC 3550 §5.1: the last octet counts itself, so 0 is invalid. */
		if (pad == 0 || pad > len - hlen) {
			return SN_EPARSE;
		}
	}
	out->version = 2;
	out->padding = (p[0] & 0x20) != 0;
	out->extension = (p[0] & 0x10) != 0;
	out->csrc_count = p[0] & 0x0f;
	out->marker = (p[1] & 0x80) != 0;
	out->pt = p[1] & 0x7f;
	out->seq = sn_be16(p + 2);
	out->ts = sn_be32(p + 4);
	out->ssrc = sn_be32(p + 8);
	out->ext_profile = out->extension ? sn_be16(p + RTP_HDR_MIN_LEN + 4u * out->csrc_count) : 0;
	out->ext_len = ext_len;
	out->hdr_len = hlen;
	out->pad_len = pad;
	out->payload = sn_slice_make(p + hlen, len - hlen - pad);
	return SN_OK;
}

bool rtp_is_plausible(const uint8_t *p, size_t len)
{
	uint32_t ext_len;
	uint8_t pt;

	if (len < RTP_HDR_MIN_LEN || (p[0] >> 6) != 2) {
		return false;
	}
	pt = p[1] & 0x7f;
	if (pt >= 72 && pt <= 95) {
		return false;
	}
	return rtp_hdr_len(p, len, &ext_len) != 0;
}

void rtp_stream_init(struct rtp_stream *s, uint32_t ssrc, int32_t clock_rate, int te_pt)
{
	memset(s, 0, sizeof(*s));
	s->ssrc = ssrc;
	s->clock_rate = clock_rate > 0 ? clock_rate : 0;
	s->te_pt = (int16_t)(te_pt >= 0 && te_pt <= 127 ? te_pt : RTP_PT_NONE);
	s->min_delta_ms = -1;
	s->min_jitter_ms = -1;
}

/*
 * The duplicate window is circular: bit x mod RTP_DUP_WINDOW stands for extended sequence
 * number x, for x in (max_ext_seq - RTP_DUP_WINDOW, max_ext_seq]. Moving the top clears the
 * bits the window leaves, so the usual step of one packet is one bit set, not a shift of the
 * whole window.
 */
_Static_assert((RTP_DUP_WINDOW & (RTP_DUP_WINDOW - 1)) == 0 && RTP_DUP_WINDOW % 64 == 0,
	       "RTP_DUP_WINDOW must be a power of two and whole words");

static void rtp_seen_set(struct rtp_stream *s, uint32_t x)
{
	x %= RTP_DUP_WINDOW;
	s->seen[x / 64] |= (uint64_t)1 << (x % 64);
}

/* Clear n < RTP_DUP_WINDOW bits of the window from extended sequence number x on. */
static void rtp_seen_clear(struct rtp_stream *s, uint32_t x, uint32_t n)
{
	x %= RTP_DUP_WINDOW;
	while (n > 0) {
		uint32_t b = x % 64;
		uint32_t k = SN_MIN(64 - b, n);
		uint64_t m = k == 64 ? ~(uint64_t)0 : (((uint64_t)1 << k) - 1) << b;

		s->seen[x / 64] &= ~m;
		x = (x + k) % RTP_DUP_WINDOW;
		n -= k;
	}
}

/*
 * Duplicate / out-of-order window and loss bursts, on extended sequence numbers.
 * @return RTP_STREAM_F_DUPLICATE or 0 (the helpers return flags rather than set them through a
 * pointer, which would keep the caller's flags in memory)
 */
static uint32_t rtp_stream_track_seq(struct rtp_stream *s, uint16_t seq)
{
	int32_t d = (int32_t)((uint16_t)(seq - (uint16_t)s->max_ext_seq));
	uint32_t i;

	if (d >= 32768) {
		d -= 65536;
	}
	if (d > 0) {
		uint32_t gap = (uint32_t)d - 1;

		if ((uint32_t)d >= RTP_DUP_WINDOW) {
			memset(s->seen, 0, sizeof(s->seen));
		} else if (gap) {
			rtp_seen_clear(s, s->max_ext_seq + 1, gap);
		}
		s->max_ext_seq += (uint32_t)d;
		rtp_seen_set(s, s->max_ext_seq);
		if (gap) {
			s->loss_bursts++;
			s->gap_lost += gap;
			if (gap > s->max_burst_loss) {
				s->max_burst_loss = gap;
			}
		}
		return 0;
	}
	i = (uint32_t)-d;
	if (i < RTP_DUP_WINDOW) {
		uint32_t x = (s->max_ext_seq - i) % RTP_DUP_WINDOW;
		uint64_t bit = (uint64_t)1 << (x % 64);

		if (s->seen[x / 64] & bit) {
			s->duplicates++;
			return RTP_STREAM_F_DUPLICATE;
		}
		s->seen[x / 64] |= bit;
		if (s->gap_lost) {
			s->gap_lost--;
		}
	}
	s->out_of_order++;
	return 0;
}

/* RFC 4733 §2.3: one digit per event; the event is named by its RTP timestamp. */
static void rtp_stream_dtmf(struct rtp_stream *s, const struct rtp_hdr *h)
{
	uint8_t ev;

	if (h->payload.len < 4) {
		return;
	}
	if (s->dtmf_active && s->dtmf_ts == h->ts) {
		return;
	}
	s->dtmf_active = true;
	s->dtmf_ts = h->ts;
	ev = h->payload.ptr[0];
	if (ev >= SN_ARRAY_SIZE(rtp_dtmf_chars)) {
		return;
	}
	if (s->dtmf_count < RTP_DTMF_MAX) {
		s->dtmf[s->dtmf_count] = rtp_dtmf_chars[ev];
		s->dtmf[s->dtmf_count + 1] = '\0';
	}
	s->dtmf_count++;
}

static bool rtp_pt_is_cn(uint8_t pt)
{
	return pt == RTP_PT_CN || pt == RTP_PT_CN_OLD;
}

static bool rtp_stream_is_event(const struct rtp_stream *s, uint8_t pt)
{
	return s->te_pt >= 0 && pt == (uint8_t)s->te_pt;
}

/* Clock rate for a packet's PT other than telephone-event, 0 when jitter cannot be computed
 * (Wireshark's rules). */
static uint32_t rtp_stream_clock(const struct rtp_stream *s, uint8_t pt)
{
	uint32_t hz;

	hz = pt < 96 ? rtp_pt_clock_rate(pt) : 0;
	if (hz == 0) {
		hz = (uint32_t)s->clock_rate;
	}
	return hz;
}

/* Wireshark's sequence-cycle and sequence-error heuristics; RTP_STREAM_F_WRONG_SEQ or 0. */
static uint32_t rtp_stream_seq(struct rtp_stream *s, uint16_t q, bool in_ts)
{
	int32_t sn = s->seq_num;

	if (q < s->start_seq && in_ts && !s->under) {
		s->seq_cycles++;
		s->under = true;
	} else if (q == 0 && s->stop_seq == 65535 && in_ts && !s->under) {
		s->seq_cycles++;
		s->under = true;
	} else if (q > s->start_seq && in_ts && s->under) {
		s->under = false;
	}

	if (in_ts && sn + 1 == q) {
		s->seq_num = q;
	} else if (in_ts && sn == 65535 && q == 0) {
		s->seq_num = q;
	} else if (in_ts && (sn + 1 < q || sn - q > 0xFF00)) {
		s->seq_num = q;
		s->seq_errors++;
		return RTP_STREAM_F_WRONG_SEQ;
	} else if (sn + 1 > q) {
		s->seq_errors++;
		return RTP_STREAM_F_WRONG_SEQ;
	}
	return 0;
}

static void rtp_stream_first(struct rtp_stream *s, int64_t arrival_ns, const struct rtp_hdr *h,
			     uint32_t flags)
{
	s->first_ns = arrival_ns;
	s->first_pt = h->pt;
	s->start_seq = h->seq;
	s->stop_seq = h->seq;
	s->seq_num = h->seq;
	s->first_ts = h->ts;
	s->pt = h->pt;
	s->reg_pt = h->pt;
	s->max_ext_seq = 65536u + h->seq;
	rtp_seen_set(s, s->max_ext_seq);
	s->flags = flags | RTP_STREAM_F_FIRST | (h->marker ? RTP_STREAM_F_MARKER : 0);
}

/* Wireshark 4.0: at or after the first packet's timestamp, within half the 32-bit range. */
static bool rtp_stream_in_time(const struct rtp_stream *s, uint32_t ts)
{
	int64_t first = s->first_ts;

	if (first <= ts) {
		return (int64_t)ts - first < 0x80000000LL;
	}
	return (0xFFFFFFFFLL - first) + ts < 0x80000000LL;
}

/*
 * v / khz in ms. When khz is a power of two, 2^k (8 and 16 kHz: G.711, G.722, comfort noise),
 * the quotient is v with k taken off its binary exponent: exact, so equal to the division bit
 * for bit, and done on the bits so that no compiler can fuse it into a neighbouring add (an
 * FMA would round differently). k is found once per clock; other clocks divide.
 */
static double rtp_stream_nominal(struct rtp_stream *s, uint32_t v, uint32_t khz)
{
	double r = (double)v;
	uint64_t bits;

	if (khz != s->pow2_khz) {
		if (khz & (khz - 1)) {
			return r / khz;
		}
		s->pow2_khz = khz;
		s->pow2_shift = 0;
		while ((khz >> s->pow2_shift) > 1) {
			s->pow2_shift++;
		}
	}
	if (v == 0) {
		return r;
	}
	/* v >= 1 and k <= 22: the result is a normal number */
	memcpy(&bits, &r, sizeof(bits));
	bits -= (uint64_t)s->pow2_shift << 52;
	memcpy(&r, &bits, sizeof(r));
	return r;
}

/* Delta, jitter and skew of an in-time-sequence packet; khz (hz / 1000) 0 = no clock (delta
 * only). */
static void rtp_stream_timing(struct rtp_stream *s, double now_ms, uint32_t ts, uint32_t hz,
			      uint32_t khz)
{
	double nominal;
	double diff;

	s->delta_ms = now_ms - s->time_ms;
	if (khz == 0) {
		return;
	}
	nominal = rtp_stream_nominal(s, (uint32_t)(ts - s->first_ts), khz);
	diff = fabs(now_ms - (s->time_ms + (nominal - s->last_nominal_ms)));
	s->last_clock_hz = hz;
	s->jitter_ms = (15 * s->jitter_ms + diff) / 16;
	s->last_nominal_ms = nominal;
	s->skew_ms = nominal - now_ms;
	if (fabs(s->skew_ms) > fabs(s->max_skew_ms)) {
		s->max_skew_ms = s->skew_ms;
	}
}

void rtp_stream_update(struct rtp_stream *s, int64_t arrival_ns, const struct rtp_hdr *h,
		       uint32_t udp_len)
{
	/* The header fields are read once: the stores to s (some are uint8_t, which may alias
	 * anything) would otherwise make the compiler read them again and again. */
	const uint8_t pt = h->pt;
	const uint16_t seq = h->seq;
	const uint32_t ts = h->ts;
	const bool marker = h->marker;
	const bool cn = rtp_pt_is_cn(pt);
	const uint8_t prev_pt = s->pt;
	uint32_t flags = 0;
	uint32_t hz;
	uint32_t khz;
	bool in_ts;
	double now_ms;
	double n;

	s->packets++;
	s->bytes += udp_len;
	s->last_ns = arrival_ns;
	s->last_pt = pt;
	if (marker) {
		s->marker_packets++;
	}
	if (cn) {
		s->cn_packets++;
	}
	if (rtp_stream_is_event(s, pt)) {
		flags = RTP_STREAM_F_EVENT;
		hz = 0;
		s->event_packets++;
		rtp_stream_dtmf(s, h);
	} else {
		hz = rtp_stream_clock(s, pt);
	}
	if (s->packets == 1) {
		rtp_stream_first(s, arrival_ns, h, flags);
		return;
	}
	flags |= rtp_stream_track_seq(s, seq);

	in_ts = rtp_stream_in_time(s, ts);
	if (!in_ts) {
		flags |= RTP_STREAM_F_WRONG_TS;
	}
	flags |= rtp_stream_seq(s, seq, in_ts);

	if (cn) {
		flags |= RTP_STREAM_F_CN;
	}
	if (rtp_pt_is_cn(prev_pt)) {
		flags |= RTP_STREAM_F_FOLLOW_CN;
	}
	if (pt != prev_pt) {
		flags |= RTP_STREAM_F_PT_CHANGE;
		s->pt_changes++;
	}
	s->pt = pt;
	khz = hz / 1000;
	if (in_ts) {
		now_ms = (double)(arrival_ns - s->first_ns) / 1e6;
		rtp_stream_timing(s, now_ms, ts, hz, khz);
		s->time_ms = now_ms;
	}

	if (marker) {
		flags |= RTP_STREAM_F_MARKER;
	}
	if (!(flags & (RTP_STREAM_F_MARKER | RTP_STREAM_F_CN | RTP_STREAM_F_WRONG_TS |
		       RTP_STREAM_F_FOLLOW_CN))) {
		/* Wireshark divides by the packets received before this one. */
		n = (double)(s->packets - 1);
		flags |= RTP_STREAM_F_REGULAR;
		if (s->delta_ms > s->max_delta_ms) {
			s->max_delta_ms = s->delta_ms;
		}
		if (s->min_delta_ms < 0 || s->delta_ms < s->min_delta_ms) {
			s->min_delta_ms = s->delta_ms;
		}
		s->mean_delta_ms = (s->mean_delta_ms * (n - 1) + s->delta_ms) / n;
		if (khz != 0) {
			if (s->jitter_ms > s->max_jitter_ms) {
				s->max_jitter_ms = s->jitter_ms;
			}
			if (s->min_jitter_ms < 0 || s->jitter_ms < s->min_jitter_ms) {
				s->min_jitter_ms = s->jitter_ms;
			}
			s->mean_jitter_ms = (s->mean_jitter_ms * (n - 1) + s->jitter_ms) / n;
		}
	}
	if (!cn) {
		if (pt != s->reg_pt) {
			flags |= RTP_STREAM_F_REG_PT_CHANGE;
			s->reg_pt_changes++;
		}
		s->reg_pt = pt;
	}
	s->stop_seq = seq;
	s->flags = flags;
}

/* Expected packets from the first and last sequence numbers and the wraps between them. */
static int64_t expected_of(uint64_t packets, uint16_t start_seq, uint16_t stop_seq,
			   uint32_t seq_cycles)
{
	if (packets == 0) {
		return 0;
	}
	return (int64_t)stop_seq + 65536 * (int64_t)seq_cycles - start_seq + 1;
}

static double loss_pct_of(int64_t expected, int64_t lost)
{
	if (expected <= 0) {
		return 0.0;
	}
	return 100.0 * (double)lost / (double)expected;
}

int64_t rtp_stream_expected(const struct rtp_stream *s)
{
	return expected_of(s->packets, s->start_seq, s->stop_seq, s->seq_cycles);
}

int64_t rtp_stream_lost(const struct rtp_stream *s)
{
	return rtp_stream_expected(s) - (int64_t)s->packets;
}

double rtp_stream_loss_pct(const struct rtp_stream *s)
{
	return loss_pct_of(rtp_stream_expected(s), rtp_stream_lost(s));
}

double rtp_stream_mean_burst(const struct rtp_stream *s)
{
	if (s->loss_bursts == 0) {
		return 0.0;
	}
	return (double)s->gap_lost / s->loss_bursts;
}

void rtp_stream_summarise(const struct rtp_stream *s, struct rtp_stats *out)
{
	memset(out, 0, sizeof(*out));
	out->packets = s->packets;
	out->bytes = s->bytes;
	out->first_ns = s->first_ns;
	out->last_ns = s->last_ns;
	out->max_delta_ms = s->max_delta_ms;
	out->mean_delta_ms = s->mean_delta_ms;
	out->max_jitter_ms = s->max_jitter_ms;
	out->mean_jitter_ms = s->mean_jitter_ms;
	out->seq_cycles = s->seq_cycles;
	out->start_seq = s->start_seq;
	out->stop_seq = s->stop_seq;
	out->seq_errors = s->seq_errors;
	out->duplicates = s->duplicates;
	out->out_of_order = s->out_of_order;
	out->max_burst_loss = s->max_burst_loss;
	out->marker_packets = s->marker_packets;
	memcpy(out->dtmf, s->dtmf, sizeof(out->dtmf));
}

int64_t rtp_stats_expected(const struct rtp_stats *s)
{
	return expected_of(s->packets, s->start_seq, s->stop_seq, s->seq_cycles);
}

int64_t rtp_stats_lost(const struct rtp_stats *s)
{
	return rtp_stats_expected(s) - (int64_t)s->packets;
}

double rtp_stats_loss_pct(const struct rtp_stats *s)
{
	return loss_pct_of(rtp_stats_expected(s), rtp_stats_lost(s));
}
