/*
 * rtp_mos.h - listening-quality estimate (MOS) of an RTP stream with a simplified ITU-T G.107
 * E-model; the model and the codec values are described at the top of src/rtp/rtp_mos.c.
 * Pure functions over numbers; no state. Thread: any.
 */
#ifndef SIPNAB_RTP_MOS_H
#define SIPNAB_RTP_MOS_H

#include "sipnab/rtp_stream.h"
#include "sipnab/sn_base.h"

/* Codec classes with their own equipment impairment values. */
enum rtp_mos_codec {
	RTP_MOS_CODEC_UNKNOWN = 0, /* scored like G.711 with PLC */
	RTP_MOS_CODEC_G711,	   /* PCMU, PCMA, with packet loss concealment */
	RTP_MOS_CODEC_G711_NOPLC,  /* PCMU, PCMA, no concealment */
	RTP_MOS_CODEC_G722,
	RTP_MOS_CODEC_G723,
	RTP_MOS_CODEC_G726,
	RTP_MOS_CODEC_G728,
	RTP_MOS_CODEC_G729,
	RTP_MOS_CODEC_GSM, /* GSM 06.10 full rate */
	RTP_MOS_CODEC_GSM_EFR,
	RTP_MOS_CODEC_AMR,
	RTP_MOS_CODEC_AMR_WB,
	RTP_MOS_CODEC_ILBC,
	RTP_MOS_CODEC_OPUS,
	RTP_MOS_CODEC_EVS,
	RTP_MOS_CODEC_COUNT
};

/* E-model inputs. */
struct rtp_mos_input {
	enum rtp_mos_codec codec; /* selects Ie and Bpl */
	double loss_pct;	  /* Ppl, packet loss in percent, clamped to 0..100 */
	double burst_r;		  /* BurstR, 1 for random loss; values below 1 count as 1 */
	double delay_ms;	  /* Ta, mean one-way mouth-to-ear delay */
};

/**
 * Codec class of an encoding name as in SDP a=rtpmap ("PCMU", "G729", "opus"...), ignoring case.
 * @param name the encoding name (borrowed)
 * @return the class, RTP_MOS_CODEC_UNKNOWN when not recognised
 */
enum rtp_mos_codec rtp_mos_codec_from_name(struct sn_slice name);

/**
 * Codec class of a static payload type (RFC 3551).
 * @param pt payload type
 * @return the class, RTP_MOS_CODEC_UNKNOWN for dynamic or unassigned types
 */
enum rtp_mos_codec rtp_mos_codec_from_pt(uint8_t pt);

/**
 * Equipment impairment values of a codec class.
 * @param c the class
 * @param ie out: Ie
 * @param bpl out: Bpl
 */
void rtp_mos_codec_values(enum rtp_mos_codec c, double *ie, double *bpl);

/**
 * Delay impairment Id for a one-way delay (G.107 Idd; Idte and Idle taken as 0).
 * @param ta_ms one-way delay in ms
 * @return Id, 0 up to 100 ms
 */
double rtp_mos_delay_impairment(double ta_ms);

/**
 * Transmission rating factor R = 93.2 - Id - Ie,eff.
 * @param in the inputs
 * @return R (may be below 0 for very bad input)
 */
double rtp_mos_r_factor(const struct rtp_mos_input *in);

/**
 * G.107 Annex B conversion of R to MOS-CQE.
 * @param r the rating factor
 * @return MOS in [1, 4.5]
 */
double rtp_mos_from_r(double r);

/**
 * E-model inputs measured on a stream: Ppl = max(lost, 0) / expected, BurstR from the mean
 * loss burst, Ta = @p network_delay_ms + @p ptime_ms + 2 * mean jitter (jitter buffer).
 * @param s the stream
 * @param codec its codec class
 * @param ptime_ms packetisation time, 0 = 20 ms
 * @param network_delay_ms one-way network delay if known (e.g. RTCP RTT / 2), else 0
 * @param out filled
 */
void rtp_mos_input_from_stream(const struct rtp_stream *s, enum rtp_mos_codec codec,
			       uint32_t ptime_ms, double network_delay_ms,
			       struct rtp_mos_input *out);

/**
 * MOS of a stream: rtp_mos_input_from_stream() then rtp_mos_from_r(rtp_mos_r_factor()).
 * @param s the stream
 * @param codec its codec class
 * @param ptime_ms packetisation time, 0 = 20 ms
 * @return MOS in [1, 4.5]
 */
double rtp_mos_stream(const struct rtp_stream *s, enum rtp_mos_codec codec, uint32_t ptime_ms);

#endif
