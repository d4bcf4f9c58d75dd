/*
 * check_sn_xalloc.c - the aborting allocators: sn_xcalloc_lines() gives zeroed memory that
 * starts on a cache line and is a whole number of lines long (every byte of it writable: the
 * sanitizer builds check that), for any count and size including zero, and aborts on a size
 * that overflows; sn_xcalloc() and sn_xrealloc() keep the contents and accept zero;
 * sn_xgrow() keeps the part in use of an array that doubles, and moves it to pages faulted in
 * with one call (sn_mem_populate(), which this file replaces to watch it) only while that part
 * is under the limit set with sn_xgrow_copy_max(); sn_xmalloc_full() and sn_xcalloc_full()
 * fault in a block of 8 KiB or more in one call, and sn_xcalloc_full()'s is zero whatever
 * that call leaves in it. Those three, sn_malloc_huge() and sn_xmalloc_huge() ask for huge
 * pages (MADV_HUGEPAGE) for a block of a huge page or more, which starts on one (but for an
 * array that realloc() grew: sn_xgrow() past its copy limit), as one mapping (it must not be
 * split: realloc() could no longer move it with mremap()), and for none in a smaller block:
 * read back from the mappings and their flags in /proc/self/smaps ("hg", tests/smaps.h).
 * sn_huge_round() rounds a size up to whole huge pages from its minimum on, where huge pages
 * are at most 4 MiB.
 * sn_mem_populate_ahead() faults an array filled entry by entry in ahead, in stretches as long
 * as what is filled (within its minimum and maximum), that never reach past the huge page the
 * entry about to be written ends in.
 */
#include "config.h"

#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include <check.h>

#include "sipnab/sn_base.h"

#include "smaps.h"

/* This file's sn_mem_populate() and sn_mem_release() take the place of src/base/sn_mem.c's. */
static void *populated_at;
static size_t populated_len;
static unsigned populate_calls;

void sn_mem_populate(void *p, size_t n)
{
	memset(p, 0xa5, n); /* it promises nothing of the contents */
	populated_at = p;
	populated_len = n;
	populate_calls++;
}

void sn_mem_release(void *p, size_t n)
{
	(void)p;
	(void)n;
}

/* Double an array of uint32_t from 256 entries to @p last_cap, filled in order as the engine's
 * arrays are, checking every entry kept at each step; the steps whose part in use was under
 * @p copy_max must each have faulted in exactly that part of the new block. */
static void grow_array(size_t copy_max, size_t last_cap)
{
	uint32_t *v = NULL;
	size_t n = 0, cap = 0;

	sn_xgrow_copy_max(copy_max);
	while (cap < last_cap) {
		size_t used = n * sizeof(*v);
		unsigned calls = populate_calls;
		size_t bad = 0;

		cap = cap ? cap * 2 : 256;
		v = sn_xgrow(v, used, cap * sizeof(*v));
		ck_assert_ptr_nonnull(v);
		if (used > 0 && used < copy_max) {
			ck_assert_uint_eq(populate_calls, calls + 1);
			ck_assert_ptr_eq(populated_at, v);
			ck_assert_uint_eq(populated_len, used);
		} else {
			ck_assert_uint_eq(populate_calls, calls);
		}
		for (size_t i = 0; i < n; i++) {
			bad += v[i] != (uint32_t)(i * 2654435761u);
		}
		ck_assert_uint_eq(bad, 0);
		for (; n < cap; n++) { /* the whole new block is writable (sanitizer builds) */
			v[n] = (uint32_t)(n * 2654435761u);
		}
	}
	free(v);
	sn_xgrow_copy_max(0);
}

START_TEST(test_grow_keeps_contents_without_limit)
{
	grow_array(0, (size_t)4 << 20); /* 16 MiB */
}
END_TEST

START_TEST(test_grow_copies_under_limit_only)
{
	grow_array((size_t)1 << 20, (size_t)1 << 20); /* steps of 1 KiB to 2 MiB used */
}
END_TEST

START_TEST(test_grow_edges)
{
	unsigned calls = populate_calls;
	unsigned char *p;

	sn_xgrow_copy_max((size_t)4 << 20);
	p = sn_xgrow(NULL, 0, 100); /* a first allocation */
	ck_assert_ptr_nonnull(p);
	memset(p, 7, 100);
	p = sn_xgrow(p, 0, 200); /* nothing in use */
	ck_assert_ptr_nonnull(p);
	memset(p, 3, 200);
	p = sn_xgrow(p, 200, 50); /* shrinking: realloc() keeps the first 50 */
	for (int i = 0; i < 50; i++) {
		ck_assert_uint_eq(p[i], 3);
	}
	ck_assert_uint_eq(populate_calls, calls);
	p = sn_xgrow(p, 50, 4096);
	ck_assert_uint_eq(populate_calls, calls + 1);
	for (int i = 0; i < 50; i++) {
		ck_assert_uint_eq(p[i], 3);
	}
	free(p);
	sn_xgrow_copy_max(0);
}
END_TEST

START_TEST(test_full_populated_and_zeroed)
{
	static const size_t sizes[] = {1, 100, 8191, 8192, 65536, (size_t)3 << 20};

	for (size_t k = 0; k < SN_ARRAY_SIZE(sizes); k++) {
		size_t n = sizes[k];
		unsigned calls = populate_calls;
		unsigned char *m = sn_xmalloc_full(n);
		unsigned char *c;
		size_t nonzero = 0;

		ck_assert_uint_eq(populate_calls, calls + (n >= 8192));
		if (n >= 8192) {
			ck_assert_ptr_eq(populated_at, m);
			ck_assert_uint_eq(populated_len, n);
		}
		memset(m, 1, n); /* all of it is the caller's */
		free(m);
		calls = populate_calls;
		c = sn_xcalloc_full(n / 4, 4);
		ck_assert_uint_eq(populate_calls, calls + (n / 4 * 4 >= 8192));
		for (size_t i = 0; i < n / 4 * 4; i++) {
			nonzero += c[i] != 0;
		}
		ck_assert_uint_eq(nonzero, 0);
		free(c);
	}
	free(sn_xcalloc_full(0, 16)); /* nothing asked: a pointer all the same */
}
END_TEST

START_TEST(test_full_overflow_aborts)
{
	(void)sn_xcalloc_full(SIZE_MAX / 8, 16);
}
END_TEST

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

/*
 * A block [p, p + n) of at least one aligned huge page of @p huge bytes: advised, in one
 * mapping from its first byte to its last (a block split into several mappings cannot be
 * moved by mremap(), and realloc() then copies it).
 */
static void check_huge_block(const unsigned char *p, size_t n, size_t huge)
{
	uintptr_t a = ((uintptr_t)p + huge - 1) & ~(uintptr_t)(huge - 1);
	uintptr_t b = ((uintptr_t)p + n) & ~(uintptr_t)(huge - 1);
	uintptr_t lo, hi;

	ck_assert_uint_gt(b, a);
	ck_assert(mapping_of(p, &lo, &hi));
	ck_assert_msg(lo <= (uintptr_t)p && (uintptr_t)p + n <= hi,
		      "block %p + %zu split: mapping %#lx-%#lx", (const void *)p, n,
		      (unsigned long)lo, (unsigned long)hi);
}

START_TEST(test_big_blocks_advised_huge)
{
	/* huge pages of more than 32 MiB (arm64 with 64 KiB pages: 512 MiB) would make the blocks
	 * here gigabytes: then only the blocks' contents are checked */
	size_t huge = huge_size() <= ((size_t)32 << 20) ? huge_size() : 0;
	size_t n = huge ? 3 * huge + 4096 : (size_t)8 << 20;
	unsigned char *small, *m, *c, *g, *r;

#ifdef __GLIBC__
	/* every block here of 128 KiB or more a mapping of its own, as in a run whose first big
	 * blocks are still in use (glibc raises the threshold when such a block is freed, and the
	 * next block of its size would come from the heap, a mapping that is not the block's) */
	(void)mallopt(M_MMAP_THRESHOLD, 128 * 1024);
#endif
	/* smaller than a huge page: none asked for, though it is faulted in */
	small = sn_xmalloc_full(huge ? huge - 4096 : 65536);
	if (huge) {
		ck_assert(!advised_huge(small));
	}
	m = sn_xmalloc_full(n);
	c = sn_xcalloc_full(n / 8, 8);
	r = sn_malloc_huge(n);
	ck_assert_ptr_nonnull(r);
	/* sn_xgrow() both ways: realloc() past the copy limit, a copy under it */
	g = sn_xgrow(NULL, 0, 4096);
	memset(g, 9, 4096);
	g = sn_xgrow(g, 4096, n);
	for (size_t i = 0; i < 4096; i++) {
		ck_assert_uint_eq(g[i], 9);
	}
	memset(m, 1, n);
	memset(r, 2, n);
	memset(g, 3, n);
	if (huge) {
		check_huge_block(m, n, huge);
		check_huge_block(c, n / 8 * 8, huge);
		check_huge_block(r, n, huge);
		check_huge_block(g, n, huge);
		/* huge pages from their first byte on */
		ck_assert_uint_eq((uintptr_t)m % huge, 0);
		ck_assert_uint_eq((uintptr_t)c % huge, 0);
		ck_assert_uint_eq((uintptr_t)r % huge, 0);
	}
	free(g);
	sn_xgrow_copy_max((size_t)64 << 20);
	g = sn_xgrow(NULL, 0, 4096);
	memset(g, 5, 4096);
	g = sn_xgrow(g, 4096, n);
	ck_assert_uint_eq(g[4095], 5);
	if (huge) {
		check_huge_block(g, n, huge);
		ck_assert_uint_eq((uintptr_t)g % huge, 0); /* copied into a new block */
	}
	sn_xgrow_copy_max(0);
	free(g);
	free(r);
	free(c);
	free(m);
	free(small);
	/* sn_xmalloc_huge(): a block of whole huge pages starts on one and all are advised */
	g = sn_xmalloc_huge(huge ? 2 * huge : 4096);
	memset(g, 4, huge ? 2 * huge : 4096);
	if (huge) {
		ck_assert_uint_eq((uintptr_t)g % huge, 0);
		ck_assert(advised_huge(g));
		ck_assert(advised_huge(g + 2 * huge - 1));
	}
	free(g);
	g = sn_xmalloc_huge(100);
	memset(g, 4, 100);
	free(g);
}
END_TEST

START_TEST(test_huge_round)
{
	size_t huge = sn_huge_page_size();

	if (huge_size() >= 8192 && huge_size() <= ((size_t)1 << 30) &&
	    (huge_size() & (huge_size() - 1)) == 0) {
		ck_assert_uint_eq(huge, huge_size());
	}
	if (!huge || huge > ((size_t)4 << 20)) {
		/* no huge pages, or big ones: nothing is rounded */
		ck_assert_uint_eq(sn_huge_round(12345, 0), 12345);
		return;
	}
	ck_assert_uint_eq(sn_huge_round(1, 0), huge);
	ck_assert_uint_eq(sn_huge_round(huge, 0), huge);
	ck_assert_uint_eq(sn_huge_round(huge + 1, 0), 2 * huge);
	ck_assert_uint_eq(sn_huge_round(3 * huge - 5, 256 << 10), 3 * huge);
	/* under the minimum, and where rounding would overflow: as given */
	ck_assert_uint_eq(sn_huge_round((256 << 10) - 1, 256 << 10), (256 << 10) - 1);
	ck_assert_uint_eq(sn_huge_round(SIZE_MAX - 1, 0), SIZE_MAX - 1);
}
END_TEST

/* An array of 216-byte entries (struct eng_msg's size) in a block of whole huge pages, filled
 * entry by entry as the engine fills its messages: every entry is faulted in before it is
 * written, by contiguous calls that start at it, as long as the rule says, cut at the end of
 * the huge page the entry ends in. */
START_TEST(test_populate_ahead_stops_at_huge_pages)
{
	const size_t size = 216;
	size_t huge = sn_huge_page_size();
	size_t bytes = huge && huge <= ((size_t)4 << 20) ? 3 * huge : (size_t)6 << 20;
	unsigned char *a = sn_xmalloc_huge(bytes);
	uint32_t cap = (uint32_t)(bytes / size), populated = 0;
	size_t covered = 0;
	unsigned calls = 0, cut = 0;

	for (uint32_t count = 0; count < cap; count++) {
		unsigned before = populate_calls;
		size_t at = (size_t)count * size;

		sn_mem_populate_ahead(a, size, count, cap, 64, 4096, &populated);
		if (populate_calls != before) {
			uint32_t whole = SN_MIN(cap, count + SN_MIN(SN_MAX(count, 64u), 4096u));
			size_t end = at + populated_len;

			calls++;
			ck_assert_ptr_eq(populated_at, a + at);
			ck_assert_uint_eq(at, covered); /* contiguous: nothing faulted in twice */
			ck_assert_uint_eq(end, (size_t)populated * size);
			ck_assert_uint_gt(populated, count);
			if (huge && bytes == 3 * huge) {
				size_t huge_end = (at + size + huge - 1) / huge * huge;

				ck_assert_uint_le(end, huge_end);
				if (populated != whole) {
					/* cut: the entries that end in this huge page */
					ck_assert_uint_eq(populated, huge_end / size);
					cut++;
				}
			} else {
				ck_assert_uint_eq(populated, whole);
			}
			covered = end;
		}
		ck_assert_uint_lt(count, populated);
		memset(a + at, 1, size);
	}
	ck_assert_uint_eq(covered, (size_t)cap * size);
	ck_assert_uint_gt(calls, 8);
	if (huge && bytes == 3 * huge) {
		ck_assert_uint_ge(cut, 2); /* at the ends of the first two huge pages */
	}
	free(a);
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
	tcase_add_test(tc, test_grow_keeps_contents_without_limit);
	tcase_add_test(tc, test_grow_copies_under_limit_only);
	tcase_add_test(tc, test_grow_edges);
	tcase_add_test(tc, test_full_populated_and_zeroed);
	tcase_add_test_raise_signal(tc, test_full_overflow_aborts, SIGABRT);
	tcase_add_test(tc, test_big_blocks_advised_huge);
	tcase_add_test(tc, test_huge_round);
	tcase_add_test(tc, test_populate_ahead_stops_at_huge_pages);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
