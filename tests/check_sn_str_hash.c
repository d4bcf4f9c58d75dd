/*
 * check_sn_str_hash.c - the string hash of the Call-ID tables: equal strings hash alike
 * wherever they are stored and whatever their length (every tail length 0-7 after the 8-byte
 * words), and distinct Call-IDs spread (no more than a handful of collisions in 20,000).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "sipnab/sn_base.h"

START_TEST(test_sn_str_hash_equal_strings_hash_alike)
{
	char a[64], b[80];

	for (size_t len = 0; len < 40; len++) {
		for (size_t i = 0; i < len; i++) {
			a[i] = (char)('a' + (i * 7 + len) % 26);
		}
		a[len] = '\0';
		/* the same bytes at another alignment */
		memcpy(b + 3, a, len + 1);
		ck_assert_uint_eq(sn_str_hash(a), sn_str_hash(b + 3));
		if (len > 0) {
			/* one byte changed anywhere changes the hash */
			for (size_t i = 0; i < len; i++) {
				char c = a[i];

				a[i] = (char)(c ^ 1);
				ck_assert_uint_ne(sn_str_hash(a), sn_str_hash(b + 3));
				a[i] = c;
			}
		}
	}
	/* a string and its prefix differ */
	ck_assert_uint_ne(sn_str_hash("12345678"), sn_str_hash("1234567"));
	ck_assert_uint_ne(sn_str_hash(""), sn_str_hash("\x01"));
}
END_TEST

static int cmp_u(const void *pa, const void *pb)
{
	unsigned int a = *(const unsigned int *)pa, b = *(const unsigned int *)pb;

	return a < b ? -1 : a > b;
}

START_TEST(test_sn_str_hash_spreads_call_ids)
{
	enum { N = 20000 };
	unsigned int *h = calloc(N, sizeof(*h));
	unsigned int collisions = 0;
	char id[64];

	ck_assert_ptr_nonnull(h);
	for (unsigned int i = 0; i < N; i++) {
		snprintf(id, sizeof(id), "%u-9428@10.%u.%u.1", i, i % 250, i / 250);
		h[i] = sn_str_hash(id);
	}
	qsort(h, N, sizeof(*h), cmp_u);
	for (unsigned int i = 1; i < N; i++) {
		collisions += h[i] == h[i - 1];
	}
	/* 32-bit values: about N^2 / 2^33 = 0.05 collisions are expected by chance */
	ck_assert_uint_le(collisions, 2);
	free(h);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("sn_str_hash");
	TCase *tc = tcase_create("hash");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_sn_str_hash_equal_strings_hash_alike);
	tcase_add_test(tc, test_sn_str_hash_spreads_call_ids);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
