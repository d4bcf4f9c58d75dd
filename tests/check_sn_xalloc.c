/*
 * check_sn_xalloc.c - the aborting allocators: sn_xcalloc_lines() gives zeroed memory that
 * starts on a cache line and is a whole number of lines long (every byte of it writable: the
 * sanitizer builds check that), for any count and size including zero, and aborts on a size
 * that overflows; sn_xcalloc() and sn_xrealloc() keep the contents and accept zero.
 */
#include "config.h"

#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "sipnab/sn_base.h"

START_TEST(test_lines_aligned_zeroed_whole_lines)
{
	static const size_t sizes[] = {0, 1, 16, 24, 63, 64, 65, 200, 4096};
	static const size_t counts[] = {0, 1, 2, 3, 7, 64};

	for (size_t a = 0; a < SN_ARRAY_SIZE(sizes); a++) {
		for (size_t b = 0; b < SN_ARRAY_SIZE(counts); b++) {
			size_t want = counts[b] * sizes[a];
			size_t lines = want ? (want + SN_CACHE_LINE - 1) / SN_CACHE_LINE : 1;
			unsigned char *p = sn_xcalloc_lines(counts[b], sizes[a]);

			ck_assert_ptr_nonnull(p);
			ck_assert_uint_eq((uintptr_t)p % SN_CACHE_LINE, 0);
			for (size_t i = 0; i < lines * SN_CACHE_LINE; i++) {
				ck_assert_uint_eq(p[i], 0);
			}
			memset(p, 0xa5, lines * SN_CACHE_LINE); /* the rounded length is ours */
			free(p);
		}
	}
}
END_TEST

/* a struct with a line of its own, as eng_split.c's lists: each element on its own line */
struct per_thread {
	_Alignas(SN_CACHE_LINE) uint64_t hot;
	uint32_t n;
};

START_TEST(test_lines_array_of_aligned_structs)
{
	struct per_thread *v = sn_xcalloc_lines(5, sizeof(*v));

	ck_assert_uint_eq(sizeof(*v), SN_CACHE_LINE);
	for (int i = 0; i < 5; i++) {
		ck_assert_uint_eq((uintptr_t)&v[i] % SN_CACHE_LINE, 0);
		ck_assert_uint_eq(v[i].hot, 0);
		v[i].hot = (uint64_t)i;
		v[i].n = (uint32_t)i;
	}
	ck_assert_uint_eq(v[4].hot + v[4].n, 8);
	free(v);
}
END_TEST

START_TEST(test_lines_overflow_aborts)
{
	(void)sn_xcalloc_lines(SIZE_MAX / 16, 32);
}
END_TEST

START_TEST(test_calloc_realloc_keep_contents)
{
	unsigned char *p = sn_xcalloc(0, 0);
	unsigned char *q = sn_xmalloc(0);

	ck_assert_ptr_nonnull(p);
	ck_assert_ptr_nonnull(q);
	free(q);
	p = sn_xrealloc(p, 10);
	memcpy(p, "0123456789", 10);
	p = sn_xrealloc(p, 1u << 20);
	ck_assert_int_eq(memcmp(p, "0123456789", 10), 0);
	p = sn_xrealloc(p, 4);
	ck_assert_int_eq(memcmp(p, "0123", 4), 0);
	free(p);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("sn_xalloc");
	TCase *tc = tcase_create("alloc");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_lines_aligned_zeroed_whole_lines);
	tcase_add_test(tc, test_lines_array_of_aligned_structs);
	tcase_add_test_raise_signal(tc, test_lines_overflow_aborts, SIGABRT);
	tcase_add_test(tc, test_calloc_realloc_keep_contents);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
