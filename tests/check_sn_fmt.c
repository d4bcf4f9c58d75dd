/*
 * check_sn_fmt.c - sn_fmt_fixed() writes exactly what snprintf("%.*f") writes (with "-0.000"
 * as "0.000"): random values over every magnitude the report prints and beyond, every
 * decimal count 0-9, negative values, values on and next to rounding ties, and the
 * non-finite values it refuses; sn_addr_str() writes IPv4 addresses as inet_ntop() does.
 */
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <arpa/inet.h>
#include <check.h>

#include "sipnab/sn_base.h"

static void reference(double v, int dec, char *buf, size_t len)
{
	snprintf(buf, len, "%.*f", dec, v);
	if (buf[0] == '-' && strspn(buf + 1, "0.") == strlen(buf + 1)) {
		memmove(buf, buf + 1, strlen(buf));
	}
}

static void same(double v, int dec)
{
	char want[400], got[400];

	/* compared without ck_assert: Check reports every assertion's position to its parent
	 * process, a system call each, and this runs millions of times */
	reference(v, dec, want, sizeof(want));
	if (!sn_fmt_fixed(v, dec, got, sizeof(got))) {
		ck_abort_msg("refused %.17g", v);
	}
	if (strcmp(want, got) != 0) {
		ck_abort_msg("%.17g with %d decimals: want %s, got %s", v, dec, want, got);
	}
}

static uint64_t rng_state = 0x243f6a8885a308d3u;

static uint64_t rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

START_TEST(test_sn_fmt_fixed_random_values)
{
	for (int i = 0; i < 1000000; i++) {
		/* mantissa and exponent at random: 1e-12 to 1e16 */
		double m = (double)(rng() >> 11) / 9007199254740992.0;
		int e = (int)(rng() % 29) - 12;
		double v = m * pow(10.0, e);

		if (rng() & 1) {
			v = -v;
		}
		same(v, (int)(rng() % 10));
	}
}
END_TEST

START_TEST(test_sn_fmt_fixed_report_like_values)
{
	/* what the report prints: ms and s with 3 decimals from integer nanoseconds, MOS,
	 * percentages */
	for (int64_t ns = 0; ns < 3000000; ns += 7) {
		same((double)ns / 1e6, 3);
		same((double)ns / 1e9, 3);
	}
	for (int i = 0; i <= 50000; i++) {
		same(1.0 + i * (3.5 / 50000), 2);
		same(i / 500.0, 3);
		same(-i / 700.0, 3);
	}
}
END_TEST

START_TEST(test_sn_fmt_fixed_ties_and_neighbours)
{
	for (int dec = 0; dec <= 9; dec++) {
		double unit = pow(10.0, -dec);

		for (int k = 0; k < 20000; k++) {
			double t = (k + 0.5) * unit;

			same(t, dec);
			same(-t, dec);
			same(nextafter(t, 0), dec);
			same(nextafter(t, 1e300), dec);
		}
	}
	same(0.125, 2);
	same(2.5, 0);
	same(3.5, 0);
	same(0.0005, 3);
	same(-0.0004, 3);
	same(-0.0, 3);
	same(0.0, 0);
	same(1e15, 3);
	same(1099511627775.9, 0);
	same(123456789.987654321, 9);
}
END_TEST

START_TEST(test_sn_fmt_fixed_refuses_non_finite)
{
	char buf[64];

	ck_assert(!sn_fmt_fixed(NAN, 3, buf, sizeof(buf)));
	ck_assert(!sn_fmt_fixed(INFINITY, 3, buf, sizeof(buf)));
	ck_assert(!sn_fmt_fixed(-INFINITY, 2, buf, sizeof(buf)));
}
END_TEST

START_TEST(test_sn_addr_str_ipv4_like_inet_ntop)
{
	struct sn_addr a = {.family = 4};
	char want[INET_ADDRSTRLEN], got[64], small[8];

	for (uint32_t i = 0; i < 300000; i++) {
		/* every byte value in every position, then random addresses */
		uint32_t v = i < 1024 ? (i % 256) << (8 * (i / 256)) : (uint32_t)rng();

		memcpy(a.bytes, &v, 4);
		inet_ntop(AF_INET, a.bytes, want, sizeof(want));
		sn_addr_str(&a, got, sizeof(got));
		if (strcmp(want, got) != 0) {
			ck_abort_msg("%s written as %s", want, got);
		}
	}
	/* a buffer too small for the address: inet_ntop's answer (empty) */
	a.bytes[0] = 192;
	a.bytes[1] = 168;
	a.bytes[2] = 100;
	a.bytes[3] = 200;
	ck_assert_str_eq(sn_addr_str(&a, small, sizeof(small)), "");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("sn_fmt");
	TCase *tc = tcase_create("fixed");
	SRunner *sr;
	int failed;

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_sn_fmt_fixed_random_values);
	tcase_add_test(tc, test_sn_fmt_fixed_report_like_values);
	tcase_add_test(tc, test_sn_fmt_fixed_ties_and_neighbours);
	tcase_add_test(tc, test_sn_fmt_fixed_refuses_non_finite);
	tcase_add_test(tc, test_sn_addr_str_ipv4_like_inet_ntop);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
