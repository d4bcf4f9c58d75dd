/*
 * check_sn_arena.c - the bump allocator: zeroed allocations aligned to 8 that never overlap,
 * a byte budget (SN_ELIMIT, the output untouched), NUL-terminated copies, a reset that keeps
 * one block for reuse, oversized requests; and huge_max: an arena's first blocks, as long as
 * they fit in huge_max together, are whole huge pages that start on a huge-page boundary and
 * are advised MADV_HUGEPAGE (read back from /proc/self/smaps, tests/smaps.h), the blocks after
 * them ordinary ones.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include <check.h>

#include "sipnab/sn_arena.h"

#include "smaps.h"

START_TEST(test_zeroed_aligned_apart)
{
	struct sn_arena a;
	unsigned char *prev = NULL;
	size_t prev_n = 0;

	sn_arena_init(&a, 0);
	a.block_size = 4096;
	for (size_t n = 1; n < 3000; n += 37) {
		unsigned char *p;

		ck_assert_int_eq(sn_arena_alloc(&a, n, (void **)&p), SN_OK);
		ck_assert_uint_eq((uintptr_t)p % 8, 0);
		for (size_t i = 0; i < n; i++) {
			ck_assert_uint_eq(p[i], 0);
		}
		if (prev) {
			ck_assert(p >= prev + prev_n || p + n <= prev);
			ck_assert_uint_eq(prev[0], 0xab);
		}
		memset(p, 0xab, n);
		prev = p;
		prev_n = n;
	}
	/* bigger than a block: a block of its own, and the current one stays in use */
	ck_assert_int_eq(sn_arena_alloc(&a, 10000, (void **)&prev), SN_OK);
	ck_assert_uint_eq(prev[9999], 0);
	sn_arena_cleanup(&a);
	ck_assert_uint_eq(a.used, 0);
}
END_TEST

START_TEST(test_budget_and_dup)
{
	struct sn_arena a;
	void *p = NULL, *q = &a;
	struct sn_slice out;

	sn_arena_init(&a, 100);
	ck_assert_int_eq(sn_arena_alloc(&a, 64, &p), SN_OK);
	ck_assert_int_eq(sn_arena_alloc(&a, 64, &q), SN_ELIMIT);
	ck_assert_ptr_eq(q, &a);
	ck_assert_int_eq(sn_arena_dup(&a, sn_slice_make("abcdef", 3), &out), SN_OK);
	ck_assert_uint_eq(out.len, 3);
	ck_assert_str_eq((const char *)out.ptr, "abc");
	ck_assert_int_eq(sn_arena_dup(&a, sn_slice_make("0123456789012345678901234567890123", 34),
				      &out), SN_ELIMIT);
	sn_arena_reset(&a);
	ck_assert_uint_eq(a.used, 0);
	ck_assert_int_eq(sn_arena_alloc(&a, 96, &p), SN_OK);
	sn_arena_cleanup(&a);
}
END_TEST

/* The blocks an arena made for @p pieces allocations of @p piece bytes, told apart by the
 * jumps between consecutive pieces: the first piece of each into first[], at most max. */
static uint32_t blocks_of(struct sn_arena *a, size_t piece, uint32_t pieces, unsigned char **first,
			  uint32_t max)
{
	unsigned char *prev = NULL;
	uint32_t n = 0;

	for (uint32_t i = 0; i < pieces; i++) {
		unsigned char *p;

		ck_assert_int_eq(sn_arena_alloc(a, piece, (void **)&p), SN_OK);
		p[piece - 1] = 1;
		if (!prev || p != prev + piece) {
			ck_assert_uint_lt(n, max);
			first[n++] = p;
		}
		prev = p;
	}
	return n;
}

START_TEST(test_huge_blocks)
{
	size_t huge = huge_size() <= ((size_t)4 << 20) ? huge_size() : 0;
	struct sn_arena a;
	unsigned char *first[64];
	size_t piece = 64 << 10;
	uint32_t n;

#ifdef __GLIBC__
	/* the ordinary blocks mappings of their own too, so that their flags can be read */
	(void)mallopt(M_MMAP_THRESHOLD, 128 * 1024);
#endif
	sn_arena_init(&a, 0);
	a.block_size = 256 << 10;
	a.huge_max = huge ? 2 * huge : (size_t)4 << 20;
	/* enough for the two huge blocks and two ordinary ones after them */
	n = blocks_of(&a, piece, (uint32_t)((a.huge_max + (512u << 10)) / piece) + 2, first, 64);
	if (!huge) {
		/* no huge pages: ordinary blocks only */
		ck_assert_uint_eq(a.huge_given, 0);
		sn_arena_cleanup(&a);
		return;
	}
	ck_assert_uint_ge(n, 3);
	ck_assert_uint_eq(a.huge_given, 2 * huge);
	for (uint32_t i = 0; i < 2; i++) {
		/* a block starts with its header, on a huge-page boundary */
		ck_assert_uint_lt((uintptr_t)first[i] % huge, 64);
		ck_assert(advised_huge(first[i]));
	}
	ck_assert(!advised_huge(first[2]));
	sn_arena_cleanup(&a);

	/* room for one huge block only: the second is an ordinary one */
	sn_arena_init(&a, 0);
	a.block_size = 256 << 10;
	a.huge_max = huge + huge / 2;
	n = blocks_of(&a, piece, (uint32_t)(2 * huge / piece) + 2, first, 64);
	ck_assert_uint_ge(n, 2);
	ck_assert_uint_eq(a.huge_given, huge);
	ck_assert(advised_huge(first[0]));
	ck_assert(!advised_huge(first[1]));
	sn_arena_cleanup(&a);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("sn_arena");
	TCase *tc = tcase_create("arena");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_zeroed_aligned_apart);
	tcase_add_test(tc, test_budget_and_dup);
	tcase_add_test(tc, test_huge_blocks);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
