/*
 * check_rtp_mos.c - unit tests for the E-model MOS estimate (src/rtp/rtp_mos.c): clean
 * codecs, random and bursty loss, delay impairment, monotonicity, codec lookup, and the
 * estimate computed on a synthetic stream.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "sipnab/rtp_mos.h"

static double mos_of(enum rtp_mos_codec c, double loss, double burst_r, double delay)
{
	struct rtp_mos_input in = {c, loss, burst_r, delay};

	return rtp_mos_from_r(rtp_mos_r_factor(&in));
}

START_TEST(test_rtp_mos_clean_g711_is_4_41)
{
	struct rtp_mos_input in = {RTP_MOS_CODEC_G711, 0, 1, 20};

	ck_assert_double_eq_tol(rtp_mos_r_factor(&in), 93.2, 1e-9);
	ck_assert_double_eq_tol(mos_of(RTP_MOS_CODEC_G711, 0, 1, 20), 4.4093, 0.0005);
}
END_TEST

START_TEST(test_rtp_mos_clean_g729_is_4_10)
{
	ck_assert_double_eq_tol(mos_of(RTP_MOS_CODEC_G729, 0, 1, 20), 4.1044, 0.0005);
	ck_assert_double_eq_tol(mos_of(RTP_MOS_CODEC_G723, 0, 1, 20), 3.954, 0.0005);
}
END_TEST

START_TEST(test_rtp_mos_random_loss_one_percent)
{
	/* Ie,eff = 95 * 1 / (1 + 25.1) = 3.640; R = 89.56 */
	struct rtp_mos_input in = {RTP_MOS_CODEC_G711, 1.0, 1, 20};

	ck_assert_double_eq_tol(rtp_mos_r_factor(&in), 93.2 - 95.0 / 26.1, 1e-9);
	ck_assert_double_eq_tol(mos_of(RTP_MOS_CODEC_G711, 1.0, 1, 20), 4.33, 0.01);
	/* Without concealment 1% loss costs far more. */
	ck_assert_double_lt(mos_of(RTP_MOS_CODEC_G711_NOPLC, 1.0, 1, 20), 4.0);
}
END_TEST

START_TEST(test_rtp_mos_bursty_loss_is_worse_than_random)
{
	double random = mos_of(RTP_MOS_CODEC_G711, 5.0, 1, 20);
	double bursty = mos_of(RTP_MOS_CODEC_G711, 5.0, 3, 20);

	ck_assert_double_lt(bursty, random);
	/* Ie,eff = 95 * 5 / (5 / BurstR + 25.1): 15.78 random, 17.74 with BurstR 3. */
	ck_assert_double_eq_tol(random, rtp_mos_from_r(93.2 - 475.0 / 30.1), 1e-9);
	ck_assert_double_eq_tol(bursty, rtp_mos_from_r(93.2 - 475.0 / (5.0 / 3 + 25.1)), 1e-9);
	ck_assert_double_gt(random - bursty, 0.05);
	/* BurstR below 1 counts as random. */
	ck_assert_double_eq_tol(mos_of(RTP_MOS_CODEC_G711, 5.0, 0.5, 20), random, 1e-12);
}
END_TEST

START_TEST(test_rtp_mos_is_monotonic_in_loss_and_delay)
{
	double prev = 5;
	double loss;
	int c;

	for (c = 0; c < RTP_MOS_CODEC_COUNT; c++) {
		prev = 5;
		for (loss = 0; loss <= 100; loss += 0.5) {
			double m = mos_of((enum rtp_mos_codec)c, loss, 1, 20);

			ck_assert_double_le(m, prev);
			ck_assert_double_ge(m, 1.0);
			ck_assert_double_le(m, 4.5);
			prev = m;
		}
	}
	ck_assert_double_eq_tol(rtp_mos_delay_impairment(100), 0, 1e-12);
	ck_assert_double_gt(rtp_mos_delay_impairment(150), 0);
	ck_assert_double_gt(rtp_mos_delay_impairment(400), rtp_mos_delay_impairment(200));
	ck_assert_double_lt(mos_of(RTP_MOS_CODEC_G711, 0, 1, 400),
			    mos_of(RTP_MOS_CODEC_G711, 0, 1, 20));
	ck_assert_double_eq(rtp_mos_from_r(-5), 1.0);
	ck_assert_double_eq(rtp_mos_from_r(120), 4.5);
}
END_TEST

START_TEST(test_rtp_mos_codec_lookup)
{
	ck_assert_int_eq(rtp_mos_codec_from_name(sn_slice_make("pcma", 4)), RTP_MOS_CODEC_G711);
	ck_assert_int_eq(rtp_mos_codec_from_name(sn_slice_make("G729", 4)), RTP_MOS_CODEC_G729);
	ck_assert_int_eq(rtp_mos_codec_from_name(sn_slice_make("OPUS", 4)), RTP_MOS_CODEC_OPUS);
	ck_assert_int_eq(rtp_mos_codec_from_name(sn_slice_make("AMR-WB", 6)), RTP_MOS_CODEC_AMR_WB);
	ck_assert_int_eq(rtp_mos_codec_from_name(sn_slice_make("speex", 5)), RTP_MOS_CODEC_UNKNOWN);
	ck_assert_int_eq(rtp_mos_codec_from_pt(0), RTP_MOS_CODEC_G711);
	ck_assert_int_eq(rtp_mos_codec_from_pt(18), RTP_MOS_CODEC_G729);
	ck_assert_int_eq(rtp_mos_codec_from_pt(96), RTP_MOS_CODEC_UNKNOWN);
}
END_TEST

/* Feed a 100-packet G.711 stream with the given seqs missing. */
static void make_stream(struct rtp_stream *s, const int *skip, size_t nskip)
{
	uint8_t pkt[12 + 160];
	struct rtp_hdr h;
	uint32_t i;
	size_t k;

	rtp_stream_init(s, 1, 8000, RTP_PT_NONE);
	memset(pkt, 0, sizeof(pkt));
	pkt[0] = 0x80;
	for (i = 0; i < 100; i++) {
		bool drop = false;

		for (k = 0; k < nskip; k++) {
			drop = drop || skip[k] == (int)i;
		}
		if (drop) {
			continue;
		}
		pkt[2] = (uint8_t)(i >> 8);
		pkt[3] = (uint8_t)i;
		pkt[6] = (uint8_t)((160 * i) >> 8);
		pkt[7] = (uint8_t)(160 * i);
		ck_assert_int_eq(rtp_hdr_parse(pkt, sizeof(pkt), &h), SN_OK);
		rtp_stream_update(s, (int64_t)i * 20000000, &h, sizeof(pkt));
	}
}

START_TEST(test_rtp_mos_from_stream)
{
	static const int random[5] = {10, 30, 50, 70, 90};
	static const int burst[5] = {40, 41, 42, 43, 44};
	struct rtp_stream s;
	struct rtp_mos_input in;
	double clean, mr, mb;

	make_stream(&s, NULL, 0);
	clean = rtp_mos_stream(&s, RTP_MOS_CODEC_G711, 20);
	ck_assert_double_eq_tol(clean, 4.41, 0.005);

	make_stream(&s, random, 5);
	rtp_mos_input_from_stream(&s, RTP_MOS_CODEC_G711, 20, 0, &in);
	ck_assert_double_eq_tol(in.loss_pct, 5.0, 1e-9);
	ck_assert_double_eq_tol(in.burst_r, 1.0, 1e-9);
	mr = rtp_mos_stream(&s, RTP_MOS_CODEC_G711, 20);

	make_stream(&s, burst, 5);
	rtp_mos_input_from_stream(&s, RTP_MOS_CODEC_G711, 20, 0, &in);
	ck_assert_double_eq_tol(in.burst_r, 5 * 0.95, 1e-9);
	mb = rtp_mos_stream(&s, RTP_MOS_CODEC_G711, 20);
	ck_assert_double_lt(mb, mr);
	ck_assert_double_lt(mr, clean);
}
END_TEST

static Suite *rtp_mos_suite(void)
{
	Suite *s = suite_create("rtp_mos");
	TCase *tc = tcase_create("emodel");

	tcase_add_test(tc, test_rtp_mos_clean_g711_is_4_41);
	tcase_add_test(tc, test_rtp_mos_clean_g729_is_4_10);
	tcase_add_test(tc, test_rtp_mos_random_loss_one_percent);
	tcase_add_test(tc, test_rtp_mos_bursty_loss_is_worse_than_random);
	tcase_add_test(tc, test_rtp_mos_is_monotonic_in_loss_and_delay);
	tcase_add_test(tc, test_rtp_mos_codec_lookup);
	tcase_add_test(tc, test_rtp_mos_from_stream);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(rtp_mos_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
