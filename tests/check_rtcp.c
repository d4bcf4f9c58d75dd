/*
 * check_rtcp.c - unit tests for RTCP parsing and summaries (src/rtp/rtcp.c): SR + SDES
 * compound, RR round-trip time from LSR/DLSR (matched SR and NTP arithmetic), XR VoIP
 * metrics, and truncated or garbage input (SN_EPARSE, never a crash).
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "sipnab/rtcp.h"

#define T0_NS 1767225600000000000LL /* 2026-01-01 00:00:00 UTC */

struct wbuf {
	uint8_t b[512];
	size_t len;
};

static void put8(struct wbuf *w, uint32_t v)
{
	ck_assert_uint_lt(w->len, sizeof(w->b));
	w->b[w->len++] = (uint8_t)v;
}

static void put16(struct wbuf *w, uint32_t v)
{
	put8(w, v >> 8);
	put8(w, v);
}

static void put32(struct wbuf *w, uint32_t v)
{
	put16(w, v >> 16);
	put16(w, v);
}

/* Start an RTCP packet header; fix its length with end_pkt(). */
static size_t begin_pkt(struct wbuf *w, uint8_t count, uint8_t pt)
{
	size_t at = w->len;

	put8(w, 0x80 | count);
	put8(w, pt);
	put16(w, 0);
	return at;
}

static void end_pkt(struct wbuf *w, size_t at)
{
	size_t words = (w->len - at) / 4 - 1;

	ck_assert_uint_eq((w->len - at) % 4, 0);
	w->b[at + 2] = (uint8_t)(words >> 8);
	w->b[at + 3] = (uint8_t)words;
}

static void put_block(struct wbuf *w, uint32_t ssrc, uint8_t frac, uint32_t cum, uint32_t jitter,
		      uint32_t lsr, uint32_t dlsr)
{
	put32(w, ssrc);
	put8(w, frac);
	put8(w, cum >> 16);
	put16(w, cum & 0xffff);
	put32(w, 0x00010064);
	put32(w, jitter);
	put32(w, lsr);
	put32(w, dlsr);
}

static uint64_t ntp64(int64_t unix_ns)
{
	uint64_t sec = (uint64_t)(unix_ns / 1000000000LL) + 2208988800ULL;
	uint64_t frac = ((uint64_t)(unix_ns % 1000000000LL) << 32) / 1000000000ULL;

	return (sec << 32) | frac;
}

/* SR from 0xAAAA0001 (one block about 0xBBBB0002) + SDES CNAME. */
static void build_sr_sdes(struct wbuf *w, int64_t t_ns)
{
	uint64_t ntp = ntp64(t_ns);
	size_t at;

	w->len = 0;
	at = begin_pkt(w, 1, RTCP_PT_SR);
	put32(w, 0xAAAA0001);
	put32(w, (uint32_t)(ntp >> 32));
	put32(w, (uint32_t)ntp);
	put32(w, 160000);
	put32(w, 1000);
	put32(w, 160000);
	put_block(w, 0xBBBB0002, 64, 0xFFFFFE, 80, 0, 0); /* 25 %, cum -2, 10 ms at 8 kHz */
	end_pkt(w, at);
	at = begin_pkt(w, 1, RTCP_PT_SDES);
	put32(w, 0xAAAA0001);
	put8(w, 1);
	put8(w, 11);
	memcpy(w->b + w->len, "alice@host1", 11);
	w->len += 11;
	put8(w, 0);
	while (w->len % 4) {
		put8(w, 0);
	}
	end_pkt(w, at);
}

START_TEST(test_rtcp_parse_sr_and_sdes_compound)
{
	struct rtcp_compound c;
	struct rtcp_summary s;
	struct wbuf w;

	build_sr_sdes(&w, T0_NS);
	ck_assert(rtcp_is_plausible(w.b, w.len));
	ck_assert_int_eq(rtcp_parse(w.b, w.len, &c), SN_OK);
	ck_assert_uint_eq(c.packets, 2);
	ck_assert_uint_eq(c.sender_ssrc, 0xAAAA0001);
	ck_assert(c.has_sr);
	ck_assert_uint_eq(c.sr.ntp, ntp64(T0_NS));
	ck_assert_uint_eq(c.sr.pkt_count, 1000);
	ck_assert_uint_eq(c.report_count, 1);
	ck_assert_uint_eq(c.reports[0].reporter_ssrc, 0xAAAA0001);
	ck_assert_uint_eq(c.reports[0].ssrc, 0xBBBB0002);
	ck_assert_int_eq(c.reports[0].cum_lost, -2);
	ck_assert_uint_eq(c.reports[0].ext_high_seq, 0x00010064);
	ck_assert_uint_eq(c.cname_count, 1);
	ck_assert(sn_slice_eq_str(c.cnames[0].name, "alice@host1"));

	/* Summary of the reported-on stream: loss and jitter. */
	rtcp_summary_init(&s, 0xBBBB0002);
	rtcp_summary_update(&s, &c, T0_NS, 8000);
	ck_assert_uint_eq(s.reports, 1);
	ck_assert_double_eq_tol(s.loss_pct, 25.0, 1e-9);
	ck_assert_int_eq(s.cum_lost, -2);
	ck_assert(s.has_jitter);
	ck_assert_double_eq_tol(s.jitter_ms, 10.0, 1e-9);
	ck_assert(!s.has_rtt);
	ck_assert_str_eq(s.cname, "");

	/* Summary of the sender: its CNAME and SR. */
	rtcp_summary_init(&s, 0xAAAA0001);
	rtcp_summary_update(&s, &c, T0_NS, 0);
	ck_assert_str_eq(s.cname, "alice@host1");
	ck_assert_uint_eq(s.sr_count, 1);
	ck_assert(!s.has_jitter);
}
END_TEST

START_TEST(test_rtcp_rr_round_trip_from_matched_sr)
{
	struct rtcp_compound c;
	struct rtcp_summary s;
	uint32_t lsr = (uint32_t)(ntp64(T0_NS) >> 16);
	struct wbuf w;
	size_t at;

	rtcp_summary_init(&s, 0xAAAA0001);
	build_sr_sdes(&w, T0_NS);
	ck_assert_int_eq(rtcp_parse(w.b, w.len, &c), SN_OK);
	rtcp_summary_update(&s, &c, T0_NS + 5000000, 8000); /* SR captured 5 ms after its NTP */

	/* RR 1.5 s later, receiver held it 1.4 s: RTT = 100 ms. */
	w.len = 0;
	at = begin_pkt(&w, 1, RTCP_PT_RR);
	put32(&w, 0xBBBB0002);
	put_block(&w, 0xAAAA0001, 0, 0, 8, lsr, 65536u * 14 / 10);
	end_pkt(&w, at);
	ck_assert_int_eq(rtcp_parse(w.b, w.len, &c), SN_OK);
	ck_assert(!c.has_sr);
	ck_assert_uint_eq(c.report_count, 1);
	rtcp_summary_update(&s, &c, T0_NS + 5000000 + 1500000000LL, 8000);
	ck_assert(s.has_rtt);
	ck_assert_double_eq_tol(s.rtt_ms, 100.0, 0.02);
	ck_assert_double_eq_tol(s.jitter_ms, 1.0, 1e-9);
}
END_TEST

START_TEST(test_rtcp_rr_round_trip_from_ntp_arithmetic)
{
	struct rtcp_compound c;
	struct rtcp_summary s;
	int64_t arrival = T0_NS + 777000000;
	uint32_t a = rtcp_ntp_short(arrival);
	uint32_t dlsr = 65536u / 2;			    /* 0.5 s */
	uint32_t lsr = a - dlsr - (uint32_t)(65536 * 0.25); /* RTT 250 ms */
	struct wbuf w;
	size_t at;

	ck_assert_uint_eq(rtcp_ntp_short(0), 0x7E800000u);
	ck_assert_uint_eq(rtcp_ntp_short(500000000), 0x7E808000u);
	ck_assert_uint_eq(a, (uint32_t)(ntp64(arrival) >> 16));

	w.len = 0;
	at = begin_pkt(&w, 1, RTCP_PT_RR);
	put32(&w, 0xBBBB0002);
	put_block(&w, 0xAAAA0001, 0, 0, 0, lsr, dlsr);
	end_pkt(&w, at);
	ck_assert_int_eq(rtcp_parse(w.b, w.len, &c), SN_OK);
	rtcp_summary_init(&s, 0xAAAA0001);
	rtcp_summary_update(&s, &c, arrival, 8000);
	ck_assert(s.has_rtt);
	ck_assert_double_eq_tol(s.rtt_ms, 250.0, 0.02);

	/* An LSR from the future (unsynchronised clocks): RTT unknown. */
	rtcp_summary_init(&s, 0xAAAA0001);
	w.b[4 + 4 + 16] += 0x10; /* LSR + 4096 s */
	ck_assert_int_eq(rtcp_parse(w.b, w.len, &c), SN_OK);
	rtcp_summary_update(&s, &c, arrival, 8000);
	ck_assert(!s.has_rtt);
}
END_TEST

static void build_xr(struct wbuf *w)
{
	size_t at;

	w->len = 0;
	at = begin_pkt(w, 0, RTCP_PT_RR); /* empty RR first, as RFC 3550 wants */
	put32(w, 0xBBBB0002);
	end_pkt(w, at);
	at = begin_pkt(w, 0, RTCP_PT_XR);
	put32(w, 0xBBBB0002);
	/* an unknown block (BT 42, 1 word) to skip */
	put8(w, 42);
	put8(w, 0);
	put16(w, 1);
	put32(w, 0xdeadbeef);
	/* VoIP metrics */
	put8(w, 7);
	put8(w, 0);
	put16(w, 8);
	put32(w, 0xAAAA0001);
	put8(w, 5);	/* loss rate */
	put8(w, 2);	/* discard rate */
	put8(w, 100);	/* burst density */
	put8(w, 3);	/* gap density */
	put16(w, 120);	/* burst duration */
	put16(w, 5000); /* gap duration */
	put16(w, 48);	/* round trip */
	put16(w, 60);	/* end system */
	put8(w, 0xEC);	/* -20 dBm */
	put8(w, 0xB5);	/* -75 dBm */
	put8(w, 127);
	put8(w, 16);
	put8(w, 88); /* R */
	put8(w, 127);
	put8(w, 42); /* MOS-LQ 4.2 */
	put8(w, 41); /* MOS-CQ 4.1 */
	put8(w, 0x80);
	put8(w, 0);
	put16(w, 40);
	put16(w, 80);
	put16(w, 200);
	end_pkt(w, at);
}

START_TEST(test_rtcp_parse_xr_voip_metrics)
{
	struct rtcp_compound c;
	struct rtcp_summary s;
	struct wbuf w;

	build_xr(&w);
	ck_assert_int_eq(rtcp_parse(w.b, w.len, &c), SN_OK);
	ck_assert_uint_eq(c.packets, 2);
	ck_assert(c.has_xr_voip);
	ck_assert_uint_eq(c.xr_voip.ssrc, 0xAAAA0001);
	ck_assert_uint_eq(c.xr_voip.loss_rate, 5);
	ck_assert_uint_eq(c.xr_voip.discard_rate, 2);
	ck_assert_uint_eq(c.xr_voip.burst_duration, 120);
	ck_assert_uint_eq(c.xr_voip.gap_duration, 5000);
	ck_assert_uint_eq(c.xr_voip.round_trip_ms, 48);
	ck_assert_int_eq(c.xr_voip.signal_level, -20);
	ck_assert_int_eq(c.xr_voip.noise_level, -75);
	ck_assert_uint_eq(c.xr_voip.r_factor, 88);
	ck_assert_uint_eq(c.xr_voip.mos_lq, 42);
	ck_assert_uint_eq(c.xr_voip.mos_cq, 41);
	ck_assert_uint_eq(c.xr_voip.jb_abs_max_ms, 200);

	rtcp_summary_init(&s, 0xAAAA0001);
	rtcp_summary_update(&s, &c, T0_NS, 8000);
	ck_assert(s.has_xr);
	ck_assert(s.has_rtt);
	ck_assert_double_eq_tol(s.rtt_ms, 48.0, 1e-9);
}
END_TEST

START_TEST(test_rtcp_parse_rejects_truncated_and_garbage)
{
	struct rtcp_compound c;
	struct wbuf w;
	uint8_t junk[256];
	uint32_t seed = 12345;
	size_t i, k;

	/* Every proper prefix of a valid compound is malformed (lengths must add up), except
	 * the one that ends where the first packet ends. */
	build_sr_sdes(&w, T0_NS);
	for (i = 0; i < w.len; i++) {
		ck_assert_int_eq(rtcp_parse(w.b, i, &c), i == 52 ? SN_OK : SN_EPARSE);
	}
	build_xr(&w);
	for (i = 0; i < w.len; i++) {
		ck_assert_int_eq(rtcp_parse(w.b, i, &c), i == 8 ? SN_OK : SN_EPARSE);
	}
	/* XR VoIP block with a wrong length. */
	w.b[w.len - 36 + 3] = 7;
	ck_assert_int_eq(rtcp_parse(w.b, w.len, &c), SN_EPARSE);

	/* RC larger than the packet. */
	build_sr_sdes(&w, T0_NS);
	w.b[0] = 0x80 | 2;
	ck_assert_int_eq(rtcp_parse(w.b, w.len, &c), SN_EPARSE);
	/* Padding in the first of two packets. */
	build_sr_sdes(&w, T0_NS);
	w.b[0] |= 0x20;
	ck_assert_int_eq(rtcp_parse(w.b, w.len, &c), SN_EPARSE);
	/* Version 1 in the second packet. */
	build_sr_sdes(&w, T0_NS);
	w.b[52] = 0x41;
	ck_assert_int_eq(rtcp_parse(w.b, w.len, &c), SN_EPARSE);
	/* SDES item running past its packet. */
	build_sr_sdes(&w, T0_NS);
	w.b[52 + 9] = 200;
	ck_assert_int_eq(rtcp_parse(w.b, w.len, &c), SN_EPARSE);
	/* Not RTCP at all: an RTP packet. */
	memset(junk, 0, sizeof(junk));
	junk[0] = 0x80;
	junk[1] = 0x08;
	ck_assert(!rtcp_is_plausible(junk, 172));
	ck_assert_int_eq(rtcp_parse(junk, 172, &c), SN_EPARSE);
	ck_assert_int_eq(rtcp_parse(junk, 0, &c), SN_EPARSE);

	/* Random bytes with a plausible first header: never a crash (ASan/UBSan watch). */
	for (k = 0; k < 20000; k++) {
		size_t n = 4 + k % (sizeof(junk) - 4);

		for (i = 0; i < n; i++) {
			seed = seed * 1103515245u + 12345u;
			junk[i] = (uint8_t)(seed >> 16);
		}
		junk[0] = (uint8_t)(0x80 | (junk[0] & 0x3f));
		junk[1] = (uint8_t)(200 + k % 8);
		junk[2] = 0;
		junk[3] = (uint8_t)(k % 16);
		(void)rtcp_parse(junk, n, &c);
	}
}
END_TEST

static Suite *rtcp_suite(void)
{
	Suite *s = suite_create("rtcp");
	TCase *tc;

	tc = tcase_create("parse");
	tcase_add_test(tc, test_rtcp_parse_sr_and_sdes_compound);
	tcase_add_test(tc, test_rtcp_parse_xr_voip_metrics);
	tcase_add_test(tc, test_rtcp_parse_rejects_truncated_and_garbage);
	suite_add_tcase(s, tc);

	tc = tcase_create("round_trip");
	tcase_add_test(tc, test_rtcp_rr_round_trip_from_matched_sr);
	tcase_add_test(tc, test_rtcp_rr_round_trip_from_ntp_arithmetic);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(rtcp_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
