/*
 * rtcp.c - RTCP compound parsing and per-SSRC report summaries.
 *
 * rtcp_parse() validates a compound the way RFC 3550 A.2 suggests (version 2 everywhere,
 * lengths that add up to the datagram exactly, padding only in the last packet) but accepts a
 * first packet other than SR/RR (reduced-size RTCP, RFC 5506). It decodes SR sender info and
 * report blocks, RR report blocks, SDES CNAME items, counts BYE, APP and feedback packets,
 * and decodes the XR VoIP Metrics block (RFC 3611 §4.7); other XR blocks are skipped by their
 * length. Fixed arrays bound what is kept; extra report blocks or CNAMEs are dropped, not
 * errors. Nothing is copied: CNAMEs are slices into the packet.
 *
 * rtcp_summary_update() keeps, for one media SSRC, the last values receivers reported about
 * it and the RTT from LSR/DLSR (see rtcp.h for the two ways it is computed).
 *
 * Not done here: SRTCP, feedback message contents, SDES items other than CNAME.
 * Ownership: the caller owns both structs. Threading: no shared state.
 */
#include "config.h"

#include "sipnab/rtcp.h"

#include <string.h>

#define RTCP_NTP_UNIX_OFFSET 2208988800LL /* seconds from 1900-01-01 to 1970-01-01 */
#define RTCP_XR_BT_VOIP	     7
#define RTCP_RB_LEN	     24u

bool rtcp_is_plausible(const uint8_t *p, size_t len)
{
	if (len < 8 || (p[0] >> 6) != 2 || p[1] < RTCP_PT_SR || p[1] > RTCP_PT_XR) {
		return false;
	}
	return 4u * ((size_t)sn_be16(p + 2) + 1) <= len;
}

static void rtcp_report_block(struct rtcp_compound *out, uint32_t reporter, const uint8_t *b)
{
	struct rtcp_report_block *rb;
	uint32_t cum;

	if (out->report_count >= RTCP_MAX_REPORTS) {
		return;
	}
	rb = &out->reports[out->report_count++];
	rb->reporter_ssrc = reporter;
	rb->ssrc = sn_be32(b);
	rb->fraction_lost = b[4];
	cum = ((uint32_t)b[5] << 16) | ((uint32_t)b[6] << 8) | b[7];
	rb->cum_lost = (cum & 0x800000u) ? (int32_t)cum - 0x1000000 : (int32_t)cum;
	rb->ext_high_seq = sn_be32(b + 8);
	rb->jitter = sn_be32(b + 12);
	rb->lsr = sn_be32(b + 16);
	rb->dlsr = sn_be32(b + 20);
}

/* SR (with_sender) or RR body: SSRC [sender info] report blocks [profile extension]. */
static enum sn_status rtcp_parse_report(struct rtcp_compound *out, const uint8_t *b, size_t n,
					uint8_t rc, bool with_sender)
{
	size_t need = 4 + (with_sender ? 20u : 0u) + (size_t)rc * RTCP_RB_LEN;
	const uint8_t *rb;
	uint32_t ssrc;
	uint8_t i;

	if (n < need) {
		return SN_EPARSE;
	}
	ssrc = sn_be32(b);
	rb = b + 4;
	if (with_sender) {
		if (!out->has_sr) {
			out->has_sr = true;
			out->sr.ssrc = ssrc;
			out->sr.ntp = ((uint64_t)sn_be32(b + 4) << 32) | sn_be32(b + 8);
			out->sr.rtp_ts = sn_be32(b + 12);
			out->sr.pkt_count = sn_be32(b + 16);
			out->sr.octet_count = sn_be32(b + 20);
		}
		rb += 20;
	}
	for (i = 0; i < rc; i++) {
		rtcp_report_block(out, ssrc, rb + (size_t)i * RTCP_RB_LEN);
	}
	return SN_OK;
}

/* SDES (RFC 3550 §6.5): sc chunks of SSRC + items ending in a null item, 32-bit aligned. */
static enum sn_status rtcp_parse_sdes(struct rtcp_compound *out, const uint8_t *b, size_t n,
				      uint8_t sc)
{
	size_t off = 0;
	uint8_t i;

	for (i = 0; i < sc; i++) {
		uint32_t ssrc;

		if (off + 4 > n) {
			return SN_EPARSE;
		}
		ssrc = sn_be32(b + off);
		off += 4;
		for (;;) {
			uint8_t type;
			uint8_t ilen;

			if (off >= n) {
				return SN_EPARSE;
			}
			type = b[off];
			if (type == 0) {
				off = (off + 4) & ~(size_t)3;
				break;
			}
			if (off + 2 > n) {
				return SN_EPARSE;
			}
			ilen = b[off + 1];
			if (off + 2 + ilen > n) {
				return SN_EPARSE;
			}
			if (type == 1 && out->cname_count < RTCP_MAX_SDES) {
				out->cnames[out->cname_count].ssrc = ssrc;
				out->cnames[out->cname_count].name =
					sn_slice_make(b + off + 2, ilen);
				out->cname_count++;
			}
			off += 2u + ilen;
		}
		if (off > n) {
			return SN_EPARSE;
		}
	}
	return SN_OK;
}

static void rtcp_parse_xr_voip(struct rtcp_compound *out, const uint8_t *v)
{
	struct rtcp_xr_voip *x = &out->xr_voip;

	out->has_xr_voip = true;
	x->ssrc = sn_be32(v);
	x->loss_rate = v[4];
	x->discard_rate = v[5];
	x->burst_density = v[6];
	x->gap_density = v[7];
	x->burst_duration = sn_be16(v + 8);
	x->gap_duration = sn_be16(v + 10);
	x->round_trip_ms = sn_be16(v + 12);
	x->end_system_ms = sn_be16(v + 14);
	x->signal_level = (int8_t)v[16];
	x->noise_level = (int8_t)v[17];
	x->rerl = v[18];
	x->gmin = v[19];
	x->r_factor = v[20];
	x->ext_r_factor = v[21];
	x->mos_lq = v[22];
	x->mos_cq = v[23];
	x->rx_config = v[24];
	x->jb_nominal_ms = sn_be16(v + 26);
	x->jb_max_ms = sn_be16(v + 28);
	x->jb_abs_max_ms = sn_be16(v + 30);
}

/* XR (RFC 3611 §2): SSRC, then blocks of BT, type-specific, length in words, contents. */
static enum sn_status rtcp_parse_xr(struct rtcp_compound *out, const uint8_t *b, size_t n)
{
	size_t off = 4;

	if (n < 4) {
		return SN_EPARSE;
	}
	while (off < n) {
		size_t blen;

		if (off + 4 > n) {
			return SN_EPARSE;
		}
		blen = 4u * (size_t)sn_be16(b + off + 2);
		if (off + 4 + blen > n) {
			return SN_EPARSE;
		}
		if (b[off] == RTCP_XR_BT_VOIP) {
			if (blen != 32) {
				return SN_EPARSE;
			}
			if (!out->has_xr_voip) {
				rtcp_parse_xr_voip(out, b + off + 4);
			}
		}
		off += 4 + blen;
	}
	return SN_OK;
}

enum sn_status rtcp_parse(const uint8_t *p, size_t len, struct rtcp_compound *out)
{
	size_t off = 0;
	enum sn_status st;

	memset(out, 0, sizeof(*out));
	if (!rtcp_is_plausible(p, len)) {
		return SN_EPARSE;
	}
	while (off < len) {
		const uint8_t *h = p + off;
		size_t plen;
		size_t body;
		uint8_t cnt;

		if (len - off < 4 || (h[0] >> 6) != 2) {
			return SN_EPARSE;
		}
		plen = 4u * ((size_t)sn_be16(h + 2) + 1);
		if (plen > len - off) {
			return SN_EPARSE;
		}
		body = plen - 4;
		if (h[0] & 0x20) {
			/* RFC 3550 §6.4.1: only the last packet of a compound may be padded. */
			if (off + plen != len || body == 0 || h[plen - 1] == 0 ||
			    h[plen - 1] > body) {
				return SN_EPARSE;
			}
			body -= h[plen - 1];
		}
		cnt = h[0] & 0x1f;
		if (out->packets == 0 && body >= 4) {
			out->sender_ssrc = sn_be32(h + 4);
		}
		out->packets++;
		st = SN_OK;
		switch (h[1]) {
		case RTCP_PT_SR:
			st = rtcp_parse_report(out, h + 4, body, cnt, true);
			break;
		case RTCP_PT_RR:
			st = rtcp_parse_report(out, h + 4, body, cnt, false);
			break;
		case RTCP_PT_SDES:
			st = rtcp_parse_sdes(out, h + 4, body, cnt);
			break;
		case RTCP_PT_BYE:
			st = body >= 4u * cnt ? SN_OK : SN_EPARSE;
			out->bye_count++;
			break;
		case RTCP_PT_APP:
			st = body >= 8 ? SN_OK : SN_EPARSE;
			out->app_count++;
			break;
		case RTCP_PT_RTPFB:
		case RTCP_PT_PSFB:
			st = body >= 8 ? SN_OK : SN_EPARSE;
			out->fb_count++;
			break;
		case RTCP_PT_XR:
			st = rtcp_parse_xr(out, h + 4, body);
			break;
		default:
			break;
		}
		if (st != SN_OK) {
			return st;
		}
		off += plen;
	}
	return SN_OK;
}

uint32_t rtcp_ntp_short(int64_t unix_ns)
{
	int64_t sec = unix_ns / 1000000000LL;
	int64_t rem = unix_ns % 1000000000LL;
	uint64_t frac16;

	if (rem < 0) {
		rem += 1000000000LL;
		sec--;
	}
	frac16 = ((uint64_t)rem << 16) / 1000000000u;
	return (uint32_t)(((uint64_t)(sec + RTCP_NTP_UNIX_OFFSET) & 0xffffu) << 16) |
	       (uint32_t)frac16;
}

void rtcp_summary_init(struct rtcp_summary *s, uint32_t ssrc)
{
	memset(s, 0, sizeof(*s));
	s->ssrc = ssrc;
}

/* RTT in ms from one report block, false when it cannot be known. */
static bool rtcp_block_rtt(const struct rtcp_summary *s, const struct rtcp_report_block *rb,
			   int64_t arrival_ns, double *rtt_ms)
{
	uint32_t d;

	if (rb->lsr == 0) {
		return false;
	}
	if (s->sr_count > 0 && rb->lsr == s->last_sr_key && arrival_ns >= s->last_sr_arrival_ns) {
		double ms = (double)(arrival_ns - s->last_sr_arrival_ns) / 1e6 -
			    (double)rb->dlsr * 1000.0 / 65536.0;

		/* Rounding of DLSR to 1/65536 s may give a hair below 0. */
		if (ms < -1.0) {
			return false;
		}
		*rtt_ms = ms < 0 ? 0 : ms;
		return true;
	}
	d = rtcp_ntp_short(arrival_ns) - rb->lsr - rb->dlsr;
	if (d >= 60u * 65536u) {
		return false;
	}
	*rtt_ms = (double)d * 1000.0 / 65536.0;
	return true;
}

void rtcp_summary_update(struct rtcp_summary *s, const struct rtcp_compound *c, int64_t arrival_ns,
			 int32_t clock_rate)
{
	uint32_t i;

	for (i = 0; i < c->report_count; i++) {
		const struct rtcp_report_block *rb = &c->reports[i];
		double rtt;

		if (rb->ssrc != s->ssrc) {
			continue;
		}
		s->reports++;
		s->loss_pct = rb->fraction_lost * 100.0 / 256.0;
		s->cum_lost = rb->cum_lost;
		if (clock_rate > 0) {
			s->has_jitter = true;
			s->jitter_ms = (double)rb->jitter * 1000.0 / clock_rate;
			if (s->jitter_ms > s->max_jitter_ms) {
				s->max_jitter_ms = s->jitter_ms;
			}
		}
		if (rtcp_block_rtt(s, rb, arrival_ns, &rtt)) {
			s->has_rtt = true;
			s->rtt_ms = rtt;
		}
	}
	/* The SR goes after the blocks: an SR never reports on its own sender's LSR. */
	if (c->has_sr && c->sr.ssrc == s->ssrc) {
		s->sr_count++;
		s->last_sr_key = (uint32_t)(c->sr.ntp >> 16);
		s->last_sr_arrival_ns = arrival_ns;
	}
	for (i = 0; i < c->cname_count; i++) {
		const struct rtcp_cname *cn = &c->cnames[i];
		size_t n;

		if (cn->ssrc != s->ssrc) {
			continue;
		}
		n = SN_MIN(cn->name.len, RTCP_CNAME_MAX);
		memcpy(s->cname, cn->name.ptr, n);
		s->cname[n] = '\0';
	}
	if (c->has_xr_voip && c->xr_voip.ssrc == s->ssrc) {
		s->has_xr = true;
		s->xr = c->xr_voip;
		if (!s->has_rtt && c->xr_voip.round_trip_ms != 0) {
			s->has_rtt = true;
			s->rtt_ms = c->xr_voip.round_trip_ms;
		}
	}
}
