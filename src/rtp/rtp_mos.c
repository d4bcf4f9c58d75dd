/*
 * rtp_mos.c - MOS estimate of an RTP stream with a simplified ITU-T G.107 E-model.
 *
 * Model (the man page copies this paragraph):
 *
 *   R   = R0 - Is - Id - Ie,eff + A, with the G.107 defaults R0 - Is = 93.2 and A = 0.
 *   Ie,eff = Ie + (95 - Ie) * Ppl / (Ppl / BurstR + Bpl)          (G.107 §3.6)
 *       Ppl    = packet loss in percent = max(lost, 0) / expected * 100 (RFC 3550 A.3);
 *       BurstR = mean observed loss-burst length / mean burst length expected for random
 *                loss at that rate, i.e. mean_burst * (1 - Ppl/100); 1 for random loss and
 *                never below 1 (loss bursts are measured when a sequence gap is seen).
 *   Id  = Idd(Ta) of G.107 §3.5: 0 for Ta <= 100 ms, else with X = log2(Ta / 100)
 *         Idd = 25 * ((1 + X^6)^(1/6) - 3 * (1 + (X/3)^6)^(1/6) + 2).
 *         Talker and listener echo (Idte, Idle) are taken as 0 (echo cancelled).
 *       Ta  = one-way delay estimate = network delay (0 unless the caller knows it, e.g.
 *             RTCP RTT / 2) + packetisation time (ptime, default 20 ms) + a jitter buffer of
 *             2 x the stream's mean jitter. A capture at one point cannot see the real
 *             mouth-to-ear delay, so Id is 0 for almost every LAN stream.
 *   MOS = 1 + 0.035 R + 7e-6 R (R - 60) (100 - R) for 0 < R < 100, 1 below, 4.5 above
 *         (G.107 Annex B), then clamped to [1, 4.5].
 *
 *   A clean G.711 stream thus scores R = 93.2, MOS 4.41; clean G.729 R = 82.2, MOS 4.10.
 *
 * Codec values (narrowband scale). From ITU-T G.113 (11/2007) Appendix I, Tables I.1 (Ie)
 * and I.3 (Bpl): G.711 Ie 0 with PLC Bpl 25.1, without PLC Bpl 4.3; G.723.1 (6.3 kbit/s, VAD)
 * Ie 15 Bpl 16.1; G.729A (VAD) Ie 11 Bpl 19.0; Ie only: G.726 32 kbit/s 7, G.728 7, GSM 06.10
 * FR 20, GSM 06.60 EFR 5. sipnab's own assumptions where G.113 gives no number: Bpl 10 for
 * G.726, G.728, GSM FR and EFR/AMR (no concealment beyond the codec's own); AMR-NB at
 * 12.2 kbit/s is scored as EFR (the same codec); iLBC Ie 10 and Bpl 25.1 (built-in PLC);
 * wideband codecs (G.722, AMR-WB, opus, EVS) are scored on the narrowband scale as G.711
 * with PLC, which under-rates them (G.107.1's wideband scale is not used). Unknown codecs
 * are scored as G.711 with PLC.
 *
 * Not done here: per-interval (sliding window) MOS, the full Idte/Idle echo terms, codec
 * mode-rate detection. Pure functions; no state; any thread.
 */
#include "config.h"

#include "sipnab/rtp_mos.h"

#include <math.h>

struct rtp_mos_codec_row {
	const char *name; /* SDP encoding name, "" for none */
	double ie;
	double bpl;
};

static const struct rtp_mos_codec_row rtp_mos_codecs[RTP_MOS_CODEC_COUNT] = {
	[RTP_MOS_CODEC_UNKNOWN] = {"", 0, 25.1},   [RTP_MOS_CODEC_G711] = {"PCMU", 0, 25.1},
	[RTP_MOS_CODEC_G711_NOPLC] = {"", 0, 4.3}, [RTP_MOS_CODEC_G722] = {"G722", 0, 25.1},
	[RTP_MOS_CODEC_G723] = {"G723", 15, 16.1}, [RTP_MOS_CODEC_G726] = {"G726-32", 7, 10},
	[RTP_MOS_CODEC_G728] = {"G728", 7, 10},	   [RTP_MOS_CODEC_G729] = {"G729", 11, 19.0},
	[RTP_MOS_CODEC_GSM] = {"GSM", 20, 10},	   [RTP_MOS_CODEC_GSM_EFR] = {"GSM-EFR", 5, 10},
	[RTP_MOS_CODEC_AMR] = {"AMR", 5, 10},	   [RTP_MOS_CODEC_AMR_WB] = {"AMR-WB", 0, 25.1},
	[RTP_MOS_CODEC_ILBC] = {"iLBC", 10, 25.1}, [RTP_MOS_CODEC_OPUS] = {"opus", 0, 25.1},
	[RTP_MOS_CODEC_EVS] = {"EVS", 0, 25.1},
};

/* Extra names mapping to a class. */
static const struct {
	const char *name;
	enum rtp_mos_codec codec;
} rtp_mos_aliases[] = {
	{"PCMA", RTP_MOS_CODEC_G711},	 {"G711", RTP_MOS_CODEC_G711},
	{"G729A", RTP_MOS_CODEC_G729},	 {"G729D", RTP_MOS_CODEC_G729},
	{"G729E", RTP_MOS_CODEC_G729},	 {"G726-16", RTP_MOS_CODEC_G726},
	{"G726-24", RTP_MOS_CODEC_G726}, {"G726-40", RTP_MOS_CODEC_G726},
	{"G7221", RTP_MOS_CODEC_G722},	 {"AAL2-G726-32", RTP_MOS_CODEC_G726},
};

enum rtp_mos_codec rtp_mos_codec_from_name(struct sn_slice name)
{
	size_t i;

	for (i = 1; i < SN_ARRAY_SIZE(rtp_mos_codecs); i++) {
		if (rtp_mos_codecs[i].name[0] &&
		    sn_slice_caseeq_str(name, rtp_mos_codecs[i].name)) {
			return (enum rtp_mos_codec)i;
		}
	}
	for (i = 0; i < SN_ARRAY_SIZE(rtp_mos_aliases); i++) {
		if (sn_slice_caseeq_str(name, rtp_mos_aliases[i].name)) {
			return rtp_mos_aliases[i].codec;
		}
	}
	return RTP_MOS_CODEC_UNKNOWN;
}

enum rtp_mos_codec rtp_mos_codec_from_pt(uint8_t pt)
{
	switch (pt) {
	case 0:
	case 8:
		return RTP_MOS_CODEC_G711;
	case 2:
		return RTP_MOS_CODEC_G726;
	case 3:
		return RTP_MOS_CODEC_GSM;
	case 4:
		return RTP_MOS_CODEC_G723;
	case 9:
		return RTP_MOS_CODEC_G722;
	case 15:
		return RTP_MOS_CODEC_G728;
	case 18:
		return RTP_MOS_CODEC_G729;
	default:
		return RTP_MOS_CODEC_UNKNOWN;
	}
}

void rtp_mos_codec_values(enum rtp_mos_codec c, double *ie, double *bpl)
{
	if ((unsigned)c >= RTP_MOS_CODEC_COUNT) {
		c = RTP_MOS_CODEC_UNKNOWN;
	}
	*ie = rtp_mos_codecs[c].ie;
	*bpl = rtp_mos_codecs[c].bpl;
}

double rtp_mos_delay_impairment(double ta_ms)
{
	double x;

	if (!(ta_ms > 100.0)) {
		return 0.0;
	}
	x = log2(ta_ms / 100.0);
	return 25.0 *
	       (pow(1.0 + pow(x, 6), 1.0 / 6) - 3.0 * pow(1.0 + pow(x / 3.0, 6), 1.0 / 6) + 2.0);
}

double rtp_mos_r_factor(const struct rtp_mos_input *in)
{
	double ie, bpl, ppl, burst_r, ie_eff;

	rtp_mos_codec_values(in->codec, &ie, &bpl);
	ppl = in->loss_pct > 0 ? SN_MIN(in->loss_pct, 100.0) : 0.0;
	burst_r = in->burst_r > 1.0 ? in->burst_r : 1.0;
	ie_eff = ie + (95.0 - ie) * ppl / (ppl / burst_r + bpl);
	return 93.2 - rtp_mos_delay_impairment(in->delay_ms) - ie_eff;
}

double rtp_mos_from_r(double r)
{
	double mos;

	if (!(r > 0.0)) {
		return 1.0;
	}
	if (r >= 100.0) {
		return 4.5;
	}
	mos = 1.0 + 0.035 * r + 7e-6 * r * (r - 60.0) * (100.0 - r);
	return mos < 1.0 ? 1.0 : mos > 4.5 ? 4.5 : mos;
}

void rtp_mos_input_from_stream(const struct rtp_stream *s, enum rtp_mos_codec codec,
			       uint32_t ptime_ms, double network_delay_ms,
			       struct rtp_mos_input *out)
{
	int64_t expected = rtp_stream_expected(s);
	int64_t lost = rtp_stream_lost(s);
	double mean_burst = rtp_stream_mean_burst(s);

	out->codec = codec;
	out->loss_pct = expected > 0 && lost > 0 ? 100.0 * (double)lost / (double)expected : 0.0;
	out->burst_r = 1.0;
	if (mean_burst > 0 && out->loss_pct < 100.0) {
		out->burst_r = mean_burst * (1.0 - out->loss_pct / 100.0);
	}
	if (out->burst_r < 1.0) {
		out->burst_r = 1.0;
	}
	out->delay_ms = network_delay_ms + (ptime_ms ? ptime_ms : 20) + 2.0 * s->mean_jitter_ms;
}

double rtp_mos_stream(const struct rtp_stream *s, enum rtp_mos_codec codec, uint32_t ptime_ms)
{
	struct rtp_mos_input in;

	rtp_mos_input_from_stream(s, codec, ptime_ms, 0.0, &in);
	return rtp_mos_from_r(rtp_mos_r_factor(&in));
}
