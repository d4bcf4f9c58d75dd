/*
 * rtcp.h - RTCP compound packet parsing (RFC 3550 §6.4-6.6, RFC 3611 §4.7) and a per-SSRC
 * summary of what receivers reported about a stream: loss fraction, jitter, round-trip time,
 * CNAME and XR VoIP metrics.
 *
 * rtcp_parse() fills a fixed-size struct rtcp_compound; text (CNAME) is a slice borrowed from
 * the packet. struct rtcp_summary owns copies of everything it keeps. Nothing allocates.
 * Thread: no shared state; a summary belongs to the worker that owns its stream.
 */
#ifndef SIPNAB_RTCP_H
#define SIPNAB_RTCP_H

#include "sipnab/sn_base.h"

#define RTCP_MAX_REPORTS 31u /* report blocks kept per compound (RC is 5 bits) */
#define RTCP_MAX_SDES	 8u  /* SDES CNAME chunks kept per compound */
#define RTCP_CNAME_MAX	 64u /* CNAME bytes kept by a summary */

/* RTCP packet types (RFC 3550 §12.1, RFC 3611). */
enum rtcp_pt {
	RTCP_PT_SR = 200,
	RTCP_PT_RR = 201,
	RTCP_PT_SDES = 202,
	RTCP_PT_BYE = 203,
	RTCP_PT_APP = 204,
	RTCP_PT_RTPFB = 205,
	RTCP_PT_PSFB = 206,
	RTCP_PT_XR = 207,
};

/* Sender info of an SR (RFC 3550 §6.4.1). */
struct rtcp_sender_info {
	uint32_t ssrc;	      /* sender's SSRC */
	uint64_t ntp;	      /* NTP timestamp, 32.32 fixed point */
	uint32_t rtp_ts;      /* RTP timestamp for the same instant */
	uint32_t pkt_count;   /* sender's packet count */
	uint32_t octet_count; /* sender's payload octet count */
};

/* A reception report block (RFC 3550 §6.4.1). */
struct rtcp_report_block {
	uint32_t reporter_ssrc; /* SSRC of the SR/RR sender that carried the block */
	uint32_t ssrc;		/* the source this block reports on */
	uint8_t fraction_lost;	/* fraction lost since the last report, /256 */
	int32_t cum_lost;	/* cumulative lost, 24-bit signed, sign-extended */
	uint32_t ext_high_seq;	/* extended highest sequence number received */
	uint32_t jitter;	/* interarrival jitter, RTP timestamp units */
	uint32_t lsr;		/* middle 32 bits of the last SR's NTP time, 0 = none */
	uint32_t dlsr;		/* delay since that SR, 1/65536 s */
};

/* An SDES CNAME item (RFC 3550 §6.5.1). */
struct rtcp_cname {
	uint32_t ssrc;	      /* chunk SSRC/CSRC */
	struct sn_slice name; /* borrowed from the packet */
};

/* XR VoIP Metrics Report Block, BT=7 (RFC 3611 §4.7). 127/255 values mean "unavailable". */
struct rtcp_xr_voip {
	uint32_t ssrc;		 /* source the metrics are about */
	uint8_t loss_rate;	 /* fraction lost, /256 */
	uint8_t discard_rate;	 /* fraction discarded by the jitter buffer, /256 */
	uint8_t burst_density;	 /* /256 */
	uint8_t gap_density;	 /* /256 */
	uint16_t burst_duration; /* ms */
	uint16_t gap_duration;	 /* ms */
	uint16_t round_trip_ms;	 /* round-trip delay */
	uint16_t end_system_ms;	 /* end system delay */
	int8_t signal_level;	 /* dBm, 127 = unavailable */
	int8_t noise_level;	 /* dBm, 127 = unavailable */
	uint8_t rerl;		 /* residual echo return loss, dB */
	uint8_t gmin;		 /* gap threshold */
	uint8_t r_factor;	 /* 0..100, 127 = unavailable */
	uint8_t ext_r_factor;	 /* external R factor */
	uint8_t mos_lq;		 /* MOS x10, 127 = unavailable */
	uint8_t mos_cq;		 /* MOS x10, 127 = unavailable */
	uint8_t rx_config;	 /* PLC / jitter buffer configuration */
	uint16_t jb_nominal_ms;	 /* jitter buffer nominal delay */
	uint16_t jb_max_ms;	 /* jitter buffer maximum delay */
	uint16_t jb_abs_max_ms;	 /* jitter buffer absolute maximum */
};

/* Everything rtcp_parse() extracts from one compound packet. */
struct rtcp_compound {
	uint32_t packets;	    /* RTCP packets in the compound */
	uint32_t sender_ssrc;	    /* SSRC of the first packet */
	bool has_sr;		    /* an SR was present */
	struct rtcp_sender_info sr; /* the (first) SR's sender info */
	uint32_t report_count;	    /* report blocks kept in reports[] */
	struct rtcp_report_block reports[RTCP_MAX_REPORTS];
	uint32_t cname_count; /* CNAMEs kept in cnames[] */
	struct rtcp_cname cnames[RTCP_MAX_SDES];
	uint32_t bye_count;	     /* BYE packets */
	uint32_t app_count;	     /* APP packets (skipped) */
	uint32_t fb_count;	     /* RTPFB/PSFB packets (skipped) */
	bool has_xr_voip;	     /* an XR VoIP metrics block was present */
	struct rtcp_xr_voip xr_voip; /* the (first) one */
};

/**
 * Parse a compound RTCP packet.
 * @param p the UDP payload
 * @param len its length in bytes
 * @param out filled on success (and possibly partly on failure)
 * @return SN_OK; SN_EPARSE when the first packet is not version 2 with a PT in 200..207, a
 *         length field overruns the datagram, a block does not fit its packet, or padding is
 *         set anywhere but in the last packet (RFC 3550 A.2). Unknown packet types and XR
 *         block types after a valid first packet are skipped.
 */
enum sn_status rtcp_parse(const uint8_t *p, size_t len, struct rtcp_compound *out);

/**
 * Cheap heuristic: version 2, PT 200..207, first length field fits.
 * @param p the UDP payload
 * @param len its length in bytes
 * @return true when the bytes could start an RTCP compound
 */
bool rtcp_is_plausible(const uint8_t *p, size_t len);

/*
 * What the RTCP traffic said about one media SSRC. Owner: the stream's owner (an engine
 * worker). Values are the last ones reported.
 */
struct rtcp_summary {
	uint32_t ssrc;		    /* media source this summarises */
	uint32_t reports;	    /* report blocks about ssrc */
	double loss_pct;	    /* last fraction lost, in percent */
	int32_t cum_lost;	    /* last cumulative lost */
	bool has_jitter;	    /* jitter_ms is valid (clock rate known) */
	double jitter_ms;	    /* last reported jitter, ms */
	double max_jitter_ms;	    /* largest reported jitter, ms */
	bool has_rtt;		    /* rtt_ms is valid */
	double rtt_ms;		    /* last round-trip time, ms */
	uint32_t sr_count;	    /* SRs sent by ssrc */
	uint32_t last_sr_key;	    /* middle 32 bits of the NTP time of the last SR from ssrc */
	int64_t last_sr_arrival_ns; /* capture time of that SR */
	char cname[RTCP_CNAME_MAX + 1]; /* CNAME of ssrc, NUL-terminated, "" if unknown */
	bool has_xr;			/* xr holds an XR VoIP metrics block about ssrc */
	struct rtcp_xr_voip xr;		/* the last one */
};

/**
 * Prepare a summary for media source @p ssrc.
 * @param s caller-provided storage
 * @param ssrc the media SSRC
 */
void rtcp_summary_init(struct rtcp_summary *s, uint32_t ssrc);

/**
 * Fold a parsed compound into the summary: report blocks and XR blocks about s->ssrc, the
 * SDES CNAME and SRs sent by s->ssrc.
 * Round-trip time (RFC 3550 §6.4.1): when the SR named by a block's LSR was captured, RTT =
 * (arrival of the report - arrival of that SR) - DLSR, which needs no clock sync; otherwise
 * RTT = A - LSR - DLSR with A the report's arrival in NTP short format, kept only when it is
 * between 0 and 60 s (clocks of the capture host and the sender agree).
 * @param s the summary
 * @param c the parsed compound
 * @param arrival_ns capture time of the compound, ns since the Unix epoch
 * @param clock_rate the stream's RTP clock rate in Hz, <= 0 if unknown (no jitter then)
 */
void rtcp_summary_update(struct rtcp_summary *s, const struct rtcp_compound *c, int64_t arrival_ns,
			 int32_t clock_rate);

/**
 * NTP short format (16.16 s) of a Unix time in ns: the middle 32 bits of the 64-bit NTP time.
 * @param unix_ns ns since 1970-01-01
 * @return seconds since 1900 mod 65536, in 1/65536 s
 */
uint32_t rtcp_ntp_short(int64_t unix_ns);

#endif
