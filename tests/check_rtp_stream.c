/*
 * check_rtp_stream.c - unit tests for RTP header parsing and per-stream statistics
 * (src/rtp/rtp_stream.c): synthetic streams with known truth, RFC 4733 DTMF, malformed
 * headers, and agreement with `tshark -q -z rtp,streams` on real captures (read with libpcap
 * and a minimal Ethernet / Linux SLL / loopback / IPv4 / UDP decode inside this file).
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <pcap/pcap.h>

#include "sipnab/rtp_stream.h"

/* ---- synthetic packets ---- */

struct synth {
	struct rtp_stream st;
	uint8_t pkt[64];
};

/* Build a 12-byte header plus @p plen payload bytes into s->pkt and feed it. */
static void feed(struct synth *s, int64_t t_us, uint16_t seq, uint32_t ts, uint8_t pt, bool m,
		 const uint8_t *payload, uint32_t plen)
{
	struct rtp_hdr h;

	memset(s->pkt, 0, sizeof(s->pkt));
	s->pkt[0] = 0x80;
	s->pkt[1] = (uint8_t)((m ? 0x80 : 0) | pt);
	s->pkt[2] = (uint8_t)(seq >> 8);
	s->pkt[3] = (uint8_t)seq;
	s->pkt[4] = (uint8_t)(ts >> 24);
	s->pkt[5] = (uint8_t)(ts >> 16);
	s->pkt[6] = (uint8_t)(ts >> 8);
	s->pkt[7] = (uint8_t)ts;
	s->pkt[8] = 0x11;
	s->pkt[9] = 0x22;
	s->pkt[10] = 0x33;
	s->pkt[11] = 0x44;
	if (payload) {
		memcpy(s->pkt + 12, payload, plen);
	}
	ck_assert_int_eq(rtp_hdr_parse(s->pkt, 12 + plen, &h), SN_OK);
	rtp_stream_update(&s->st, 1767225600000000000LL + t_us * 1000, &h, 12 + plen);
}

/* A G.711 20 ms packet: seq i, ts 160 i, arrival 20 ms * i + extra_us. */
static void feed_voice(struct synth *s, uint32_t i, int64_t extra_us)
{
	feed(s, (int64_t)i * 20000 + extra_us, (uint16_t)(1000 + i), 160 * i, 0, i == 0, NULL, 160);
}

START_TEST(test_rtp_stream_perfect_20ms_stream_has_no_jitter)
{
	struct synth s;
	uint32_t i;

	rtp_stream_init(&s.st, 0x11223344, 8000, RTP_PT_NONE);
	for (i = 0; i < 50; i++) {
		feed_voice(&s, i, 0);
	}
	ck_assert_uint_eq(s.st.packets, 50);
	ck_assert_uint_eq(s.st.bytes, 50 * 172);
	ck_assert_int_eq(rtp_stream_expected(&s.st), 50);
	ck_assert_int_eq(rtp_stream_lost(&s.st), 0);
	ck_assert_double_eq_tol(s.st.max_delta_ms, 20.0, 1e-9);
	ck_assert_double_eq_tol(s.st.mean_delta_ms, 20.0, 1e-9);
	ck_assert_double_eq_tol(s.st.max_jitter_ms, 0.0, 1e-9);
	ck_assert_double_eq_tol(s.st.mean_jitter_ms, 0.0, 1e-9);
	ck_assert_uint_eq(s.st.seq_errors, 0);
	ck_assert_uint_eq(s.st.marker_packets, 1);
	ck_assert_uint_eq(s.st.max_burst_loss, 0);
	ck_assert_int_eq(s.st.last_ns - s.st.first_ns, 49 * 20000000LL);
	ck_assert_double_eq_tol(s.st.max_skew_ms, 0.0, 1e-9);
}
END_TEST

START_TEST(test_rtp_stream_counts_three_lost_with_burst_of_two)
{
	struct synth s;
	uint32_t i;

	rtp_stream_init(&s.st, 0x11223344, 8000, RTP_PT_NONE);
	for (i = 0; i < 20; i++) {
		if (i == 5 || i == 11 || i == 12) {
			continue;
		}
		feed_voice(&s, i, 0);
	}
	ck_assert_uint_eq(s.st.packets, 17);
	ck_assert_int_eq(rtp_stream_expected(&s.st), 20);
	ck_assert_int_eq(rtp_stream_lost(&s.st), 3);
	ck_assert_double_eq_tol(rtp_stream_loss_pct(&s.st), 15.0, 1e-9);
	ck_assert_uint_eq(s.st.seq_errors, 2);
	ck_assert_uint_eq(s.st.max_burst_loss, 2);
	ck_assert_uint_eq(s.st.loss_bursts, 2);
	ck_assert_double_eq_tol(rtp_stream_mean_burst(&s.st), 1.5, 1e-9);
	/* A gap is a 40/60 ms delta, but the timestamps say so too: no jitter. */
	ck_assert_double_eq_tol(s.st.max_delta_ms, 60.0, 1e-9);
	ck_assert_double_eq_tol(s.st.max_jitter_ms, 0.0, 1e-9);
}
END_TEST

START_TEST(test_rtp_stream_reorder_is_out_of_order_not_lost)
{
	struct synth s;

	rtp_stream_init(&s.st, 0x11223344, 8000, RTP_PT_NONE);
	feed_voice(&s, 0, 0);
	feed_voice(&s, 1, 0);
	feed_voice(&s, 3, 0);
	feed_voice(&s, 2, 1000); /* late by 21 ms */
	feed_voice(&s, 4, 0);
	feed_voice(&s, 5, 0);
	ck_assert_uint_eq(s.st.packets, 6);
	ck_assert_uint_eq(s.st.out_of_order, 1);
	ck_assert_uint_eq(s.st.duplicates, 0);
	ck_assert_int_eq(rtp_stream_lost(&s.st), 0);
	ck_assert_uint_eq(s.st.gap_lost, 0);
	ck_assert_uint_eq(s.st.seq_errors, 2);
	ck_assert(s.st.flags & RTP_STREAM_F_REGULAR);
}
END_TEST

START_TEST(test_rtp_stream_duplicate_makes_lost_negative)
{
	struct synth s;

	rtp_stream_init(&s.st, 0x11223344, 8000, RTP_PT_NONE);
	feed_voice(&s, 0, 0);
	feed_voice(&s, 1, 0);
	feed_voice(&s, 1, 300);
	ck_assert(s.st.flags & RTP_STREAM_F_DUPLICATE);
	feed_voice(&s, 2, 0);
	ck_assert_uint_eq(s.st.packets, 4);
	ck_assert_uint_eq(s.st.duplicates, 1);
	ck_assert_uint_eq(s.st.out_of_order, 0);
	ck_assert_int_eq(rtp_stream_expected(&s.st), 3);
	ck_assert_int_eq(rtp_stream_lost(&s.st), -1);
	ck_assert_uint_eq(s.st.seq_errors, 1);
}
END_TEST

START_TEST(test_rtp_stream_sequence_wrap_counts_a_cycle)
{
	struct synth s;
	uint32_t i;

	rtp_stream_init(&s.st, 1, 8000, RTP_PT_NONE);
	for (i = 0; i < 40; i++) {
		if (i == 30) {
			continue;
		}
		/* seq 65516 .. 65535, 0 .. 19 */
		feed(&s, (int64_t)i * 20000, (uint16_t)(65516 + i), 160 * i, 8, false, NULL, 160);
	}
	ck_assert_uint_eq(s.st.seq_cycles, 1);
	ck_assert_int_eq(rtp_stream_expected(&s.st), 40);
	ck_assert_int_eq(rtp_stream_lost(&s.st), 1);
	ck_assert_uint_eq(s.st.seq_errors, 1);
	ck_assert_uint_eq(s.st.max_burst_loss, 1);
	ck_assert_double_eq_tol(s.st.max_jitter_ms, 0.0, 1e-9);
}
END_TEST

START_TEST(test_rtp_stream_marker_packets_are_excluded_from_delta_and_jitter)
{
	struct synth s;
	uint32_t i;

	rtp_stream_init(&s.st, 1, 8000, RTP_PT_NONE);
	for (i = 0; i < 10; i++) {
		feed_voice(&s, i, 0);
	}
	/* Talk spurt after 1 s of silence: ts jumps too, marker set, arrives 5 ms late. */
	feed(&s, 1200000 + 5000, 1010, 160 * 60, 0, true, NULL, 160);
	ck_assert(!(s.st.flags & RTP_STREAM_F_REGULAR));
	for (i = 1; i < 5; i++) {
		feed(&s, 1205000 + (int64_t)i * 20000, (uint16_t)(1010 + i), 160 * (60 + i), 0,
		     false, NULL, 160);
	}
	ck_assert_uint_eq(s.st.marker_packets, 2);
	ck_assert_double_eq_tol(s.st.max_delta_ms, 20.0, 1e-9);
	/* The marker packet's J (5/16 ms) is not a max; it decays afterwards. */
	ck_assert_double_lt(s.st.max_jitter_ms, 5.0 / 16);
	ck_assert_double_gt(s.st.max_jitter_ms, 0.0);
	ck_assert_double_eq_tol(s.st.jitter_ms, 5.0 / 16 * pow(15.0 / 16, 4), 1e-9);
}
END_TEST

START_TEST(test_rtp_stream_payload_change_and_comfort_noise)
{
	struct synth s;
	uint32_t i;

	rtp_stream_init(&s.st, 1, 8000, RTP_PT_NONE);
	for (i = 0; i < 5; i++) {
		feed_voice(&s, i, 0);
	}
	/* CN at 5, silence, then voice resumes at 20 (a 300 ms delta, excluded). */
	feed(&s, 5 * 20000, 1005, 160 * 5, RTP_PT_CN, false, NULL, 1);
	ck_assert(s.st.flags & RTP_STREAM_F_CN);
	ck_assert(!(s.st.flags & RTP_STREAM_F_REGULAR));
	feed(&s, 20 * 20000, 1006, 160 * 20, 0, false, NULL, 160);
	ck_assert(s.st.flags & RTP_STREAM_F_FOLLOW_CN);
	ck_assert(!(s.st.flags & RTP_STREAM_F_REGULAR));
	ck_assert(!(s.st.flags & RTP_STREAM_F_REG_PT_CHANGE));
	feed(&s, 21 * 20000, 1007, 160 * 21, 0, false, NULL, 160);
	ck_assert(s.st.flags & RTP_STREAM_F_REGULAR);
	/* Codec change to PCMA. */
	feed(&s, 22 * 20000, 1008, 160 * 22, 8, false, NULL, 160);
	ck_assert(s.st.flags & RTP_STREAM_F_REG_PT_CHANGE);
	ck_assert_uint_eq(s.st.cn_packets, 1);
	ck_assert_uint_eq(s.st.pt_changes, 3);
	ck_assert_uint_eq(s.st.reg_pt_changes, 1);
	ck_assert_uint_eq(s.st.first_pt, 0);
	ck_assert_uint_eq(s.st.last_pt, 8);
	ck_assert_double_eq_tol(s.st.max_delta_ms, 20.0, 1e-9);
	ck_assert_int_eq(rtp_stream_lost(&s.st), 0);
}
END_TEST

START_TEST(test_rtp_stream_unknown_clock_has_delta_but_no_jitter)
{
	struct synth s;

	rtp_stream_init(&s.st, 1, 0, RTP_PT_NONE);
	feed(&s, 0, 1, 0, 111, false, NULL, 20);
	feed(&s, 20000, 2, 960, 111, false, NULL, 20);
	feed(&s, 45000, 3, 1920, 111, false, NULL, 20);
	ck_assert_double_eq_tol(s.st.max_delta_ms, 25.0, 1e-9);
	ck_assert_double_eq_tol(s.st.max_jitter_ms, 0.0, 1e-9);
	ck_assert_double_eq_tol(s.st.min_jitter_ms, -1.0, 1e-9);
	ck_assert_uint_eq(s.st.last_clock_hz, 0);
}
END_TEST

START_TEST(test_rtp_stream_jitter_follows_rfc3550_a8)
{
	struct synth s;
	double j = 0;
	double mean = 0;
	uint32_t i;

	rtp_stream_init(&s.st, 1, 48000, RTP_PT_NONE);
	/* opus: 960 ticks per 20 ms; every 2nd packet 4 ms late. */
	for (i = 0; i < 10; i++) {
		feed(&s, (int64_t)i * 20000 + (i % 2 ? 4000 : 0), (uint16_t)i, 960 * i, 111, false,
		     NULL, 60);
		if (i > 0) {
			j = (15 * j + 4.0) / 16;
			mean = (mean * (i - 1) + j) / i;
		}
	}
	ck_assert_double_eq_tol(s.st.jitter_ms, j, 1e-9);
	ck_assert_double_eq_tol(s.st.max_jitter_ms, j, 1e-9);
	ck_assert_double_eq_tol(s.st.mean_jitter_ms, mean, 1e-9);
	ck_assert_double_eq_tol(s.st.max_delta_ms, 24.0, 1e-9);
	ck_assert_double_eq_tol(s.st.min_delta_ms, 16.0, 1e-9);
}
END_TEST

/* ---- RFC 4733 ---- */

static void feed_event(struct synth *s, int64_t t_us, uint16_t seq, uint32_t ts, uint8_t ev,
		       bool end, uint16_t dur)
{
	uint8_t p[4] = {ev, (uint8_t)((end ? 0x80 : 0) | 10), (uint8_t)(dur >> 8), (uint8_t)dur};

	feed(s, t_us, seq, ts, 101, false, p, 4);
}

START_TEST(test_rtp_stream_dtmf_single_digit)
{
	struct synth s;
	uint16_t k;

	rtp_stream_init(&s.st, 1, 0, 101);
	for (k = 0; k < 5; k++) {
		feed_event(&s, k * 20000, (uint16_t)(10 + k), 8000, 1, false, (uint16_t)(160 * k));
	}
	for (k = 0; k < 3; k++) {
		feed_event(&s, 100000 + k * 100, 15, 8000, 1, true, 800);
	}
	ck_assert_str_eq(s.st.dtmf, "1");
	ck_assert_uint_eq(s.st.dtmf_count, 1);
	ck_assert_uint_eq(s.st.event_packets, 8);
	ck_assert_int_eq(rtp_stream_lost(&s.st), -2);
	ck_assert_double_eq_tol(s.st.min_jitter_ms, -1.0, 1e-9);
}
END_TEST

START_TEST(test_rtp_stream_dtmf_three_digits_with_repeated_ends)
{
	static const uint8_t ev[3] = {1, 2, 11};
	struct synth s;
	uint16_t seq = 100;
	uint32_t d;
	uint16_t k;

	rtp_stream_init(&s.st, 1, 8000, 101);
	for (d = 0; d < 3; d++) {
		uint32_t ts = 16000 * (d + 1);

		for (k = 0; k < 4; k++) {
			feed_event(&s, d * 500000 + k * 20000, seq++, ts, ev[d], false,
				   (uint16_t)(160 * k));
		}
		for (k = 0; k < 3; k++) {
			feed_event(&s, d * 500000 + 80000 + k * 5000, seq, ts, ev[d], true, 640);
		}
		seq++;
	}
	ck_assert_str_eq(s.st.dtmf, "12#");
	ck_assert_uint_eq(s.st.dtmf_count, 3);
	/* Event 16 (flash) is not a digit. */
	feed_event(&s, 2000000, seq++, 99999, 16, true, 100);
	ck_assert_str_eq(s.st.dtmf, "12#");
	ck_assert_uint_eq(s.st.dtmf_count, 3);
}
END_TEST

START_TEST(test_rtp_stream_dtmf_is_bounded)
{
	struct synth s;
	uint32_t i;

	rtp_stream_init(&s.st, 1, 0, 101);
	for (i = 0; i < RTP_DTMF_MAX + 10; i++) {
		feed_event(&s, i * 100000, (uint16_t)i, 1000 * i, (uint8_t)(i % 16), true, 800);
	}
	ck_assert_uint_eq(strlen(s.st.dtmf), RTP_DTMF_MAX);
	ck_assert_uint_eq(s.st.dtmf_count, RTP_DTMF_MAX + 10);
	ck_assert_int_eq(s.st.dtmf[15], 'D');
}
END_TEST

/* ---- header parsing ---- */

/* What a result keeps of a finished stream: every result field as the stream has it, and the
 * same expected / lost / loss figures, on a stream that wraps its sequence numbers, loses,
 * repeats and reorders packets, jitters, has markers and carries a DTMF digit. */
START_TEST(test_rtp_stream_summary_keeps_every_result)
{
	struct synth s;
	struct rtp_stats r;
	uint32_t i;
	uint16_t seq = 0;
	uint16_t k;

	rtp_stream_init(&s.st, 1, 8000, 101);
	for (i = 0; i < 60; i++) {
		seq = (uint16_t)(65506 + i); /* 65506 .. 65535, then 0 .. 29 */
		if (i == 12 || i == 13 || i == 40) {
			continue; /* lost: a burst of two, then one */
		}
		if (i == 20) {
			/* 21 arrives before 20 */
			feed(&s, 21 * 20000 + 500, (uint16_t)(seq + 1), 160 * 21, 0, false, NULL, 160);
			feed(&s, 20 * 20000 + 900, seq, 160 * 20, 0, false, NULL, 160);
			i++;
			continue;
		}
		feed(&s, (int64_t)i * 20000 + (i % 3) * 700, seq, 160 * i, 0, i == 0 || i == 50,
		     NULL, 160);
		if (i == 30) {
			feed(&s, (int64_t)i * 20000 + 300, seq, 160 * i, 0, false, NULL, 160);
		}
	}
	for (k = 0; k < 3; k++) {
		feed_event(&s, 60 * 20000 + k * 20000, (uint16_t)(seq + 1 + k), 160 * 60, 5, k == 2,
			   (uint16_t)(160 * (k + 1)));
	}
	ck_assert_uint_eq(s.st.seq_cycles, 1);
	ck_assert_uint_gt(s.st.duplicates, 0);
	ck_assert_uint_gt(s.st.out_of_order, 0);
	ck_assert(s.st.max_jitter_ms > 0.0);
	ck_assert_str_eq(s.st.dtmf, "5");

	memset(&r, 0x5a, sizeof(r));
	rtp_stream_summarise(&s.st, &r);
	ck_assert_uint_eq(r.packets, s.st.packets);
	ck_assert_uint_eq(r.bytes, s.st.bytes);
	ck_assert_int_eq(r.first_ns, s.st.first_ns);
	ck_assert_int_eq(r.last_ns, s.st.last_ns);
	ck_assert(r.max_delta_ms == s.st.max_delta_ms);
	ck_assert(r.mean_delta_ms == s.st.mean_delta_ms);
	ck_assert(r.max_jitter_ms == s.st.max_jitter_ms);
	ck_assert(r.mean_jitter_ms == s.st.mean_jitter_ms);
	ck_assert_uint_eq(r.seq_errors, s.st.seq_errors);
	ck_assert_uint_eq(r.duplicates, s.st.duplicates);
	ck_assert_uint_eq(r.out_of_order, s.st.out_of_order);
	ck_assert_uint_eq(r.max_burst_loss, s.st.max_burst_loss);
	ck_assert_uint_eq(r.marker_packets, s.st.marker_packets);
	ck_assert_str_eq(r.dtmf, "5");
	ck_assert_int_eq(rtp_stats_expected(&r), rtp_stream_expected(&s.st));
	ck_assert_int_eq(rtp_stats_lost(&r), rtp_stream_lost(&s.st));
	ck_assert(rtp_stats_loss_pct(&r) == rtp_stream_loss_pct(&s.st));
	/* 63 sequence numbers from 65506 on, 3 of them never sent, one sent twice */
	ck_assert_int_eq(rtp_stats_expected(&r), 63);
	ck_assert_int_eq(rtp_stats_lost(&r), 2);
	ck_assert_uint_eq(r.max_burst_loss, 2);
	ck_assert_uint_eq(r.marker_packets, 2);
}
END_TEST

START_TEST(test_rtp_stream_summary_of_an_empty_stream)
{
	struct rtp_stream st;
	struct rtp_stats r;

	rtp_stream_init(&st, 7, 8000, RTP_PT_NONE);
	memset(&r, 0x5a, sizeof(r));
	rtp_stream_summarise(&st, &r);
	ck_assert_uint_eq(r.packets, 0);
	ck_assert_int_eq(rtp_stats_expected(&r), 0);
	ck_assert_int_eq(rtp_stats_lost(&r), 0);
	ck_assert(rtp_stats_loss_pct(&r) == 0.0);
	ck_assert_str_eq(r.dtmf, "");
}
END_TEST

START_TEST(test_rtp_hdr_parse_csrc_extension_padding)
{
	uint8_t p[64];
	struct rtp_hdr h;
	size_t len;

	memset(p, 0, sizeof(p));
	p[0] = 0x80 | 0x20 | 0x10 | 2; /* P, X, CC=2 */
	p[1] = 0x80 | 8;
	p[2] = 0x12;
	p[3] = 0x34;
	/* extension after 2 CSRCs at 20: profile 0xBEDE, 1 word */
	p[20] = 0xBE;
	p[21] = 0xDE;
	p[23] = 1;
	/* header = 12 + 8 + 4 + 4 = 28; 10 bytes payload, 3 bytes padding */
	len = 28 + 10 + 3;
	p[len - 1] = 3;
	ck_assert_int_eq(rtp_hdr_parse(p, len, &h), SN_OK);
	ck_assert_uint_eq(h.hdr_len, 28);
	ck_assert_uint_eq(h.csrc_count, 2);
	ck_assert(h.marker);
	ck_assert_uint_eq(h.pt, 8);
	ck_assert_uint_eq(h.seq, 0x1234);
	ck_assert_uint_eq(h.ext_profile, 0xBEDE);
	ck_assert_uint_eq(h.ext_len, 4);
	ck_assert_uint_eq(h.pad_len, 3);
	ck_assert_uint_eq(h.payload.len, 10);
	ck_assert_ptr_eq(h.payload.ptr, p + 28);
	ck_assert(rtp_is_plausible(p, len));
}
END_TEST

START_TEST(test_rtp_hdr_parse_rejects_malformed)
{
	uint8_t p[64];
	struct rtp_hdr h;
	size_t i;

	memset(p, 0, sizeof(p));
	p[0] = 0x80;
	ck_assert_int_eq(rtp_hdr_parse(p, 12, &h), SN_OK);
	ck_assert_int_eq(rtp_hdr_parse(p, 11, &h), SN_EPARSE);
	p[0] = 0x40; /* version 1 */
	ck_assert_int_eq(rtp_hdr_parse(p, 20, &h), SN_EPARSE);
	ck_assert(!rtp_is_plausible(p, 20));
	p[0] = 0x80 | 15; /* 15 CSRCs do not fit in 40 bytes */
	ck_assert_int_eq(rtp_hdr_parse(p, 40, &h), SN_EPARSE);
	ck_assert(!rtp_is_plausible(p, 40));
	p[0] = 0x90; /* extension of 255 words */
	p[14] = 0;
	p[15] = 255;
	ck_assert_int_eq(rtp_hdr_parse(p, 40, &h), SN_EPARSE);
	p[0] = 0xA0; /* padding count 0 */
	p[19] = 0;
	ck_assert_int_eq(rtp_hdr_parse(p, 20, &h), SN_EPARSE);
	p[19] = 9; /* padding beyond the payload */
	ck_assert_int_eq(rtp_hdr_parse(p, 20, &h), SN_EPARSE);
	p[19] = 8; /* exactly all the payload */
	ck_assert_int_eq(rtp_hdr_parse(p, 20, &h), SN_OK);
	ck_assert_uint_eq(h.payload.len, 0);
	p[0] = 0x80;
	p[1] = 200; /* RTCP SR with M bit: PT 72 */
	ck_assert(!rtp_is_plausible(p, 20));
	p[1] = 95;
	ck_assert(!rtp_is_plausible(p, 20));
	p[1] = 96;
	ck_assert(rtp_is_plausible(p, 20));
	/* No read beyond len for any prefix of random-ish bytes. */
	for (i = 0; i < sizeof(p); i++) {
		p[i] = (uint8_t)(i * 37 + 0x91);
	}
	for (i = 0; i <= sizeof(p); i++) {
		(void)rtp_hdr_parse(p, i, &h);
		(void)rtp_is_plausible(p, i);
	}
}
END_TEST

START_TEST(test_rtp_pt_clock_rate_table)
{
	ck_assert_uint_eq(rtp_pt_clock_rate(0), 8000);
	ck_assert_uint_eq(rtp_pt_clock_rate(9), 8000);
	ck_assert_uint_eq(rtp_pt_clock_rate(16), 11025);
	ck_assert_uint_eq(rtp_pt_clock_rate(34), 90000);
	ck_assert_uint_eq(rtp_pt_clock_rate(35), 0);
	ck_assert_uint_eq(rtp_pt_clock_rate(101), 0);
}
END_TEST

/* ---- agreement with tshark on real captures ---- */

#define MAX_STREAMS 64

/*
 * For one SSRC: what the engine's SDP logic would decide instead of cap_find()'s default, and
 * which packets tshark dissects as RTP (seq numbers, no wrap within these captures).
 */
struct cap_override {
	uint32_t ssrc;
	int32_t clock_rate; /* rtp_stream_init() clock for dynamic types */
	int te_pt;	    /* telephone-event PT or RTP_PT_NONE */
	int32_t last_seq;   /* replay seq <= last_seq only; -1 = all */
	int32_t drop_lo;    /* drop drop_lo <= seq <= drop_hi; -1 = none */
	int32_t drop_hi;
};

struct cap_stream {
	uint32_t src_ip, dst_ip;
	uint16_t src_port, dst_port;
	const struct cap_override *ovr; /* or NULL */
	struct rtp_stream st;
};

struct cap_streams {
	struct cap_stream s[MAX_STREAMS];
	size_t count;
};

/* One stream of tshark's table. */
struct tshark_ref {
	const char *src;
	uint16_t sport;
	const char *dst;
	uint16_t dport;
	uint32_t ssrc;
	uint64_t packets;
	int64_t lost;
	double max_delta, mean_jitter, max_jitter;
};

static uint32_t ip4(const char *s)
{
	unsigned a, b, c, d;

	ck_assert_int_eq(sscanf(s, "%u.%u.%u.%u", &a, &b, &c, &d), 4);
	return (a << 24) | (b << 16) | (c << 8) | d;
}

/* Offset of the IPv4 header for a link type, or -1 for other network protocols. */
static long l3_offset(int dlt, const uint8_t *p, uint32_t len)
{
	uint32_t off;
	uint16_t et;

	switch (dlt) {
	case DLT_EN10MB:
		if (len < 14) {
			return -1;
		}
		off = 12;
		et = sn_be16(p + off);
		while ((et == 0x8100 || et == 0x88a8) && off + 6 <= len) {
			off += 4;
			et = sn_be16(p + off);
		}
		return et == 0x0800 ? (long)off + 2 : -1;
	case DLT_LINUX_SLL:
		return len >= 16 && sn_be16(p + 14) == 0x0800 ? 16 : -1;
	case DLT_LINUX_SLL2:
		return len >= 20 && sn_be16(p) == 0x0800 ? 20 : -1;
	case DLT_NULL:
		return len >= 4 && (sn_le32(p) == 2 || sn_be32(p) == 2) ? 4 : -1;
	case DLT_RAW:
	case 228: /* DLT_IPV4 */
		return 0;
	default:
		return -1;
	}
}

static struct cap_stream *cap_find(struct cap_streams *cs, uint32_t sip, uint16_t sp, uint32_t dip,
				   uint16_t dp, uint32_t ssrc, uint8_t pt,
				   const struct cap_override *ovr, size_t novr)
{
	struct cap_stream *c;
	size_t i;

	for (i = 0; i < cs->count; i++) {
		c = &cs->s[i];
		if (c->src_ip == sip && c->dst_ip == dip && c->src_port == sp &&
		    c->dst_port == dp && c->st.ssrc == ssrc) {
			return c;
		}
	}
	if (cs->count == MAX_STREAMS) {
		return NULL;
	}
	c = &cs->s[cs->count++];
	c->src_ip = sip;
	c->dst_ip = dip;
	c->src_port = sp;
	c->dst_port = dp;
	c->ovr = NULL;
	for (i = 0; i < novr; i++) {
		if (ovr[i].ssrc == ssrc) {
			c->ovr = &ovr[i];
			rtp_stream_init(&c->st, ssrc, ovr[i].clock_rate, ovr[i].te_pt);
			return c;
		}
	}
	/* The test captures use PT 101 for telephone-event only. */
	rtp_stream_init(&c->st, ssrc, pt == 101 ? 0 : (int32_t)rtp_pt_clock_rate(pt),
			pt == 101 ? 101 : RTP_PT_NONE);
	return c;
}

/* Read a capture and group its RTP by (src, dst, SSRC); false when the file is absent. */
static bool cap_load(const char *path, struct cap_streams *cs, const struct cap_override *ovr,
		     size_t novr)
{
	char err[PCAP_ERRBUF_SIZE];
	struct pcap_pkthdr *ph;
	const uint8_t *p;
	pcap_t *pc;
	int dlt;
	bool nano;

	cs->count = 0;
	pc = pcap_open_offline_with_tstamp_precision(path, PCAP_TSTAMP_PRECISION_NANO, err);
	if (!pc) {
		return false;
	}
	dlt = pcap_datalink(pc);
	nano = pcap_get_tstamp_precision(pc) == PCAP_TSTAMP_PRECISION_NANO;
	while (pcap_next_ex(pc, &ph, &p) == 1) {
		long off = l3_offset(dlt, p, ph->caplen);
		uint32_t len = ph->caplen;
		uint32_t ihl, tot, ulen;
		const uint8_t *ip, *udp;
		struct cap_stream *c;
		struct rtp_hdr h;
		int64_t t;

		if (off < 0 || (uint32_t)off + 20 > len) {
			continue;
		}
		ip = p + off;
		len -= (uint32_t)off;
		ihl = 4u * (ip[0] & 0x0f);
		tot = sn_be16(ip + 2);
		if ((ip[0] >> 4) != 4 || ip[9] != 17 || ihl < 20 || tot > len || tot < ihl + 8 ||
		    (sn_be16(ip + 6) & 0x3fff) != 0) {
			continue;
		}
		udp = ip + ihl;
		ulen = sn_be16(udp + 4);
		if (ulen < 8 || ulen > tot - ihl) {
			continue;
		}
		if (!rtp_is_plausible(udp + 8, ulen - 8) ||
		    rtp_hdr_parse(udp + 8, ulen - 8, &h) != SN_OK) {
			continue;
		}
		if (sn_be16(udp) == 5060 || sn_be16(udp + 2) == 5060) {
			continue;
		}
		c = cap_find(cs, sn_be32(ip + 12), sn_be16(udp), sn_be32(ip + 16), sn_be16(udp + 2),
			     h.ssrc, h.pt, ovr, novr);
		if (!c || (c->ovr && ((c->ovr->last_seq >= 0 && h.seq > c->ovr->last_seq) ||
				      (h.seq >= c->ovr->drop_lo && h.seq <= c->ovr->drop_hi)))) {
			continue;
		}
		t = (int64_t)ph->ts.tv_sec * 1000000000LL +
		    (int64_t)ph->ts.tv_usec * (nano ? 1 : 1000);
		rtp_stream_update(&c->st, t, &h, ulen - 8);
	}
	pcap_close(pc);
	return true;
}

/* tshark prints 3 decimals: allow half a unit of the last digit plus float noise. */
#define TSHARK_TOL (0.0005 + 1e-9)

static void check_against_tshark_ovr(const char *path, const struct tshark_ref *ref, size_t n,
				     const struct cap_override *ovr, size_t novr)
{
	static struct cap_streams cs;
	size_t i;

	if (!cap_load(path, &cs, ovr, novr)) {
		fprintf(stderr, "check_rtp_stream: %s absent, skipped\n", path);
		return;
	}
	for (i = 0; i < n; i++) {
		const struct tshark_ref *r = &ref[i];
		struct cap_stream *c = NULL;
		size_t k;

		for (k = 0; k < cs.count; k++) {
			if (cs.s[k].src_ip == ip4(r->src) && cs.s[k].src_port == r->sport &&
			    cs.s[k].dst_ip == ip4(r->dst) && cs.s[k].dst_port == r->dport &&
			    cs.s[k].st.ssrc == r->ssrc) {
				c = &cs.s[k];
			}
		}
		ck_assert_msg(c != NULL, "%s: stream %s:%u -> %s:%u 0x%08X not found", path, r->src,
			      r->sport, r->dst, r->dport, r->ssrc);
		fprintf(stderr,
			"%s %s:%u->%s:%u 0x%08X pkts %llu/%llu lost %lld/%lld maxd %.4f/%.3f "
			"meanj %.4f/%.3f maxj %.4f/%.3f\n",
			strrchr(path, '/') + 1, r->src, r->sport, r->dst, r->dport, r->ssrc,
			(unsigned long long)c->st.packets, (unsigned long long)r->packets,
			(long long)rtp_stream_lost(&c->st), (long long)r->lost, c->st.max_delta_ms,
			r->max_delta, c->st.mean_jitter_ms, r->mean_jitter, c->st.max_jitter_ms,
			r->max_jitter);
		ck_assert_uint_eq(c->st.packets, r->packets);
		ck_assert_int_eq(rtp_stream_lost(&c->st), r->lost);
		ck_assert_double_eq_tol(c->st.max_delta_ms, r->max_delta, TSHARK_TOL);
		ck_assert_double_eq_tol(c->st.mean_jitter_ms, r->mean_jitter, TSHARK_TOL);
		ck_assert_double_eq_tol(c->st.max_jitter_ms, r->max_jitter, TSHARK_TOL);
	}
}

static void check_against_tshark(const char *path, const struct tshark_ref *ref, size_t n)
{
	check_against_tshark_ovr(path, ref, n, NULL, 0);
}

static const char *env_or(const char *name, const char *def)
{
	const char *v = getenv(name);

	return v && *v ? v : def;
}

static void shared_path(char *buf, size_t n, const char *file)
{
	snprintf(buf, n, "%s/pcaps/public/%s", env_or("SIPNAB_SHARED", "/work/shared"), file);
}

/*
 * Reference values in the tests below come from tshark 4.0.17:
 *   tshark -q -z rtp,streams -o rtp.heuristic_rtp:TRUE -r FILE
 * (columns Pkts, Lost, Max Delta(ms), Mean Jitter(ms), Max Jitter(ms)).
 */
START_TEST(test_rtp_stream_agrees_with_tshark_g711a)
{
	static const struct tshark_ref ref[] = {
		{"10.1.3.143", 5000, "10.1.6.18", 2006, 0xDEE0EE8F, 236, 0, 34.829, 0.350, 0.829},
	};

	check_against_tshark("/usr/share/sip-tester/g711a.pcap", ref, SN_ARRAY_SIZE(ref));
}
END_TEST

START_TEST(test_rtp_stream_agrees_with_tshark_dtmf_2833)
{
	static const struct tshark_ref ref[] = {
		{"192.168.0.3", 49176, "192.168.0.1", 10000, 0x0E05384E, 10, -2, 20.072, 0, 0},
	};

	check_against_tshark("/usr/share/sip-tester/dtmf_2833_1.pcap", ref, SN_ARRAY_SIZE(ref));
}
END_TEST

START_TEST(test_rtp_stream_agrees_with_tshark_sipp_g711_dtmf)
{
	static const struct tshark_ref ref[] = {
		{"127.0.0.1", 6000, "127.0.0.1", 6008, 0x0E05384E, 10, -2, 20.125, 0, 0},
		{"127.0.0.1", 6008, "127.0.0.1", 6000, 0x0E05384E, 10, -2, 20.120, 0, 0},
		{"127.0.0.1", 6000, "127.0.0.1", 6008, 0xDEE0EE8F, 236, 0, 34.784, 0.368, 0.832},
		{"127.0.0.1", 6008, "127.0.0.1", 6000, 0xDEE0EE8F, 236, 0, 34.856, 0.356, 0.834},
		{"127.0.0.1", 6000, "127.0.0.1", 6004, 0x0E05384E, 10, -2, 20.167, 0, 0},
		{"127.0.0.1", 6004, "127.0.0.1", 6000, 0x0E05384E, 10, -2, 20.158, 0, 0},
		{"127.0.0.1", 6000, "127.0.0.1", 6004, 0xDEE0EE8F, 236, 0, 34.900, 0.389, 0.848},
		{"127.0.0.1", 6004, "127.0.0.1", 6000, 0xDEE0EE8F, 236, 0, 34.852, 0.381, 0.839},
	};
	char path[1024];

	snprintf(path, sizeof(path), "%s/pcap/sipp-g711-dtmf.pcap",
		 env_or("SIPNAB_CORPUS", "/work/main/corpus"));
	check_against_tshark(path, ref, SN_ARRAY_SIZE(ref));
}
END_TEST

START_TEST(test_rtp_stream_agrees_with_tshark_sngrep_aaa)
{
	static const struct tshark_ref ref[] = {
		{"192.168.1.2", 30000, "212.242.33.36", 40392, 0x3796CB71, 9, 0, 69.947, 5.646,
		 7.799},
	};
	char path[1024];

	shared_path(path, sizeof(path), "sngrep-aaa.pcap");
	check_against_tshark(path, ref, SN_ARRAY_SIZE(ref));
}
END_TEST

START_TEST(test_rtp_stream_agrees_with_tshark_heplify_tcp)
{
	static const struct tshark_ref ref[] = {
		{"10.33.6.100", 6000, "10.33.6.101", 6050, 0x5A3361B3, 24, 0, 20.158, 0.039, 0.069},
		{"10.33.6.101", 6050, "10.33.6.100", 6000, 0x42F433D4, 42, 0, 23.982, 2.304, 3.063},
	};
	char path[1024];

	shared_path(path, sizeof(path), "heplify-sip_ipv4_tcp.pcap");
	check_against_tshark(path, ref, SN_ARRAY_SIZE(ref));
}
END_TEST

/*
 * A T.38 fax call (SIP + MEGACO) whose audio SSRC 0x17D90134 mixes PCMA (PT 8), comfort noise
 * (PT 13) and three packets of PT 100, a dynamic type no SDP maps; after the re-INVITE at
 * 64.7 s the sender keeps the SSRC and sequence but restarts the RTP timestamp at 0, below the
 * first packet's (71320). Wireshark 4.0 then flags every packet as a wrong timestamp (not
 * regular) until the timestamp passes 71320 again at frame 4049, whose delta is the 9.2 s since
 * the last in-sequence packet and whose jitter is about (9.2 s + 43.1 s of timestamp) / 16.
 * PT 100 has no clock in Wireshark (no rtpmap, so no payload name): delta only.
 * The engine gives this stream what its SDP says: the SSRC goes to 10.35.60.100:15580, last
 * announced before its first packet by the INVITE in frame 176 ("m=audio 15580 RTP/AVP 8"),
 * with no dynamic format and no telephone-event, so stream_codec() yields no dynamic clock and
 * no telephone-event type; cap_find()'s default (clock of the first packet's PT, 8000) would
 * time PT 100 and give a mean jitter of 14.177.
 * The reverse SSRC 0x0EAF0EAF (to 10.23.1.52:16756) is checked on the packets tshark takes for
 * RTP: it dissects seq 1832-1837 (frames 3106-3123, after the T.38 re-INVITE of frames
 * 3100-3107, before the audio one of frame 3127) and everything after seq 1843 (from the T.38
 * answer in frame 3147 on) as T.38, hence its "6 lost" and its 140.440 ms delta over the hole.
 * Its announcement (the INVITEs of frames 23-26: "8 103 102", 103 G726-32/8000, 102
 * telephone-event) makes the engine pass clock 8000 and te_pt 102; tshark calls PT 102
 * "RTPType-102" (its conversation has no rtpmap for it), and it is untimed either way.
 */
START_TEST(test_rtp_stream_agrees_with_tshark_heplify_fax_t38)
{
	static const struct tshark_ref ref[] = {
		{"10.23.1.52", 16756, "10.35.60.100", 15580, 0x17D90134, 3147, 0, 9199.842, 14.144,
		 2730.468},
		{"10.35.60.100", 15580, "10.23.1.52", 16756, 0x0EAF0EAF, 1838, 6, 140.440, 0.629,
		 7.007},
	};
	static const struct cap_override ovr[] = {
		{0x17D90134, 0, RTP_PT_NONE, -1, -1, -1},
		{0x0EAF0EAF, 8000, 102, 1843, 1832, 1837},
	};
	char path[1024];

	shared_path(path, sizeof(path), "heplify-FAX-Call-t38-CA-TDM-SIP-FB-1.pcap");
	check_against_tshark_ovr(path, ref, SN_ARRAY_SIZE(ref), ovr, SN_ARRAY_SIZE(ovr));
}
END_TEST

static Suite *rtp_stream_suite(void)
{
	Suite *s = suite_create("rtp_stream");
	TCase *tc;

	tc = tcase_create("statistics");
	tcase_add_test(tc, test_rtp_stream_perfect_20ms_stream_has_no_jitter);
	tcase_add_test(tc, test_rtp_stream_counts_three_lost_with_burst_of_two);
	tcase_add_test(tc, test_rtp_stream_reorder_is_out_of_order_not_lost);
	tcase_add_test(tc, test_rtp_stream_duplicate_makes_lost_negative);
	tcase_add_test(tc, test_rtp_stream_sequence_wrap_counts_a_cycle);
	tcase_add_test(tc, test_rtp_stream_marker_packets_are_excluded_from_delta_and_jitter);
	tcase_add_test(tc, test_rtp_stream_payload_change_and_comfort_noise);
	tcase_add_test(tc, test_rtp_stream_unknown_clock_has_delta_but_no_jitter);
	tcase_add_test(tc, test_rtp_stream_jitter_follows_rfc3550_a8);
	suite_add_tcase(s, tc);

	tc = tcase_create("dtmf");
	tcase_add_test(tc, test_rtp_stream_dtmf_single_digit);
	tcase_add_test(tc, test_rtp_stream_dtmf_three_digits_with_repeated_ends);
	tcase_add_test(tc, test_rtp_stream_dtmf_is_bounded);
	suite_add_tcase(s, tc);

	tc = tcase_create("summary");
	tcase_add_test(tc, test_rtp_stream_summary_keeps_every_result);
	tcase_add_test(tc, test_rtp_stream_summary_of_an_empty_stream);
	suite_add_tcase(s, tc);

	tc = tcase_create("header");
	tcase_add_test(tc, test_rtp_hdr_parse_csrc_extension_padding);
	tcase_add_test(tc, test_rtp_hdr_parse_rejects_malformed);
	tcase_add_test(tc, test_rtp_pt_clock_rate_table);
	suite_add_tcase(s, tc);

	tc = tcase_create("tshark");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_rtp_stream_agrees_with_tshark_g711a);
	tcase_add_test(tc, test_rtp_stream_agrees_with_tshark_dtmf_2833);
	tcase_add_test(tc, test_rtp_stream_agrees_with_tshark_sipp_g711_dtmf);
	tcase_add_test(tc, test_rtp_stream_agrees_with_tshark_sngrep_aaa);
	tcase_add_test(tc, test_rtp_stream_agrees_with_tshark_heplify_tcp);
	tcase_add_test(tc, test_rtp_stream_agrees_with_tshark_heplify_fax_t38);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(rtp_stream_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
