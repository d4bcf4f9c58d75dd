/*
 * sn_xalloc.c - allocation that aborts on out-of-memory (STYLE.md §3). Memory is bounded by
 * budgets, not by NULL checks.
 */
#include "config.h"

#include "sipnab/sn_base.h"

#include <fcntl.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static void oom(size_t n)
{
	fprintf(stderr, "sipnab: out of memory allocating %zu bytes\n", n);
	abort();
}

void *sn_xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p) {
		oom(n);
	}
	return p;
}

void *sn_xcalloc(size_t count, size_t size)
{
	void *p = calloc(count ? count : 1, size ? size : 1);
	if (!p) {
		oom(count * size);
	}
	return p;
}

void *sn_xcalloc_lines(size_t count, size_t size)
{
	size_t n;
	void *p;

	if (size && count > (SIZE_MAX - SN_CACHE_LINE) / size) {
		oom(SIZE_MAX);
	}
	n = (count * size + SN_CACHE_LINE - 1) / SN_CACHE_LINE * SN_CACHE_LINE;
	n = n ? n : SN_CACHE_LINE; /* one line for nothing, as calloc() gives a pointer */
	if (posix_memalign(&p, SN_CACHE_LINE, n) != 0) {
		oom(n);
	}
	return memset(p, 0, n);
}

void *sn_xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);
	if (!q) {
		oom(n);
	}
	return q;
}

/*
 * Big arrays in huge pages (transparent huge pages, MADV_HUGEPAGE). On the development VM the
 * first write to a fresh 4 KiB page costs about 12 µs (6 µs when faulted in ahead with
 * MADV_POPULATE_WRITE), and a whole 2 MiB page 0.13-0.6 ms: 25-90 times less per byte. The
 * arrays that the engine and the result build fill whole (the message reservation, arrays
 * grown by sn_xgrow(), sn_xmalloc_full() and sn_xcalloc_full()) are asked to be in huge pages
 * (huge_advise()). c5k took 0.853-0.884 of the time at --cores 1 and 0.905-0.929
 * at 2 (plain builds, bench/ab.sh, 21 rounds, twice), with peak RSS 21.2 -> 21.6 MiB at one
 * core and 21.4-22.6 -> 25.8-26.1 MiB at two (most of c5k's first writes are to the message
 * arrays); at 20,000 calls 86.8 -> 87.9 and 86.9 -> 91.8 MiB. Smaller arrays keep small
 * pages; a big one starts on a huge page (huge_block()), and its end past its last whole huge
 * page has small ones.
 * The advice is a no-op where the kernel has no huge pages (THP "never", or none at all).
 */
#if !defined(MADV_HUGEPAGE) && defined(__linux__)
#define MADV_HUGEPAGE 14 /* Linux's value, for C libraries that lack it */
#endif

size_t sn_page_size(void)
{
	/* any thread may be first: the cached page size is an atomic (relaxed: every thread
	 * computes the same value) */
	static _Atomic size_t cached;
	size_t page = atomic_load_explicit(&cached, memory_order_relaxed);

	if (!page) {
		long ps = sysconf(_SC_PAGESIZE);

		page = ps > 0 ? (size_t)ps : 4096;
		atomic_store_explicit(&cached, page, memory_order_relaxed);
	}
	return page;
}

/* The huge page size (PMD), from sysfs once; 0 when the kernel says none. */
size_t sn_huge_page_size(void)
{
	/* SIZE_MAX: not read yet; any thread may be first and all read the same value */
	static _Atomic size_t cached = SIZE_MAX;
	size_t size = atomic_load_explicit(&cached, memory_order_relaxed);

	if (size == SIZE_MAX) {
		char buf[32];
		int fd = open("/sys/kernel/mm/transparent_hugepage/hpage_pmd_size", O_RDONLY | O_CLOEXEC);
		ssize_t got = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
		unsigned long long v;

		if (fd >= 0) {
			close(fd);
		}
		size = 0;
		if (got > 0) {
			buf[got] = '\0';
			v = strtoull(buf, NULL, 10);
			/* a power of two above the page size, else none */
			if (v >= 8192 && v <= ((size_t)1 << 30) && (v & (v - 1)) == 0) {
				size = (size_t)v;
			}
		}
		atomic_store_explicit(&cached, size, memory_order_relaxed);
	}
	return size;
}

/*
 * Ask for huge pages for the block at @p p, of which @p n bytes were asked for: every page from
 * p's to the end of the block as the allocator made it (malloc_usable_size()). A block of its
 * own (mmap()) is thus advised as one mapping, not split into three: realloc() moves such a
 * block with mremap(), which fails across mappings, and glibc then copies it instead (advising
 * only the whole huge pages inside made the flows array of the 20,000-call capture take 5,900
 * page faults at --cores 1). The kernel puts huge pages only where whole aligned ones fit; in a
 * heap the pages at the edges may hold neighbours, for which the advice changes nothing but
 * where huge pages may go.
 */
static void huge_advise(void *p, size_t n)
{
	size_t huge = sn_huge_page_size();
	uintptr_t page = sn_page_size();
	uintptr_t a, b;

	if (!huge || n < huge) {
		return;
	}
#ifdef __GLIBC__
	n = SN_MAX(n, malloc_usable_size(p));
#endif
	a = (uintptr_t)p & ~(page - 1);
	b = ((uintptr_t)p + n + page - 1) & ~(page - 1);
#ifdef MADV_HUGEPAGE
	(void)madvise((void *)a, b - a, MADV_HUGEPAGE);
#else
	(void)a;
	(void)b;
#endif
}

/*
 * A block for huge pages: of a huge page or more, it starts on one (posix_memalign()), so that
 * huge pages cover it from its first byte. A block from malloc() starts wherever the allocator
 * puts it, and the kernel gives huge pages only to the whole aligned ones inside it: the part
 * before the first of them, up to 2 MiB less a byte, had small pages, each costing about 12 µs
 * at its first write on the development VM, or 6 µs when faulted in ahead (the whole 2 MiB page
 * 0.13-0.6 ms). A 2,000-call run at --cores 2 wrote its two engines' message arrays from 1 MiB
 * before such a boundary: 533 of its 14,000 messages met a fresh page, 4-9 M cycles a run.
 * NULL when there is no memory.
 */
static void *huge_block(size_t n)
{
	size_t huge = sn_huge_page_size();
	void *p;

	if (!huge || n < huge) {
		return malloc(n ? n : 1);
	}
	return posix_memalign(&p, huge, n) == 0 ? p : NULL;
}

static void *xhuge_block(size_t n)
{
	void *p = huge_block(n);

	if (!p) {
		oom(n);
	}
	return p;
}

void *sn_malloc_huge(size_t n)
{
	void *p = huge_block(n);

	if (p) {
		huge_advise(p, n);
	}
	return p;
}

/*
 * On the development VM a fresh 4 KiB page costs about 12 µs at its first write, a whole 2 MiB
 * page 0.13-0.6 ms: from 256 KiB of small pages on, one huge page is cheaper, for at most
 * the rest of a huge page of resident memory.
 */
#define HUGE_ROUND_MAX ((size_t)4 << 20)

size_t sn_huge_round(size_t n, size_t min)
{
	size_t huge = sn_huge_page_size();

	if (!huge || huge > HUGE_ROUND_MAX || n < min || n > SIZE_MAX - huge) {
		return n;
	}
	return (n + huge - 1) & ~(huge - 1);
}

void *sn_xmalloc_huge(size_t n)
{
	/* aligned (huge_block()), so that a block of k huge pages covers k whole ones */
	void *p = xhuge_block(n);

	huge_advise(p, n);
	return p;
}

/*
 * A thread's heap is grown by its top pad (4 MiB at two threads: tune_malloc() in main.c), and
 * glibc carves an allocation out of that top before it would mmap() it: an array under the
 * pad's size grows by realloc() copying it into pages never touched, one fault per page
 * copied (several µs each in the development VM). The 2,000-call sweep capture at --cores 2
 * took 1,930-2,080 page faults a run, about 740 of them inside realloc()'s copy of the message
 * and RTP-flow arrays; moved by sn_xgrow(), 1,000-1,060, with 8-11 ms less system time in all
 * (perf stat, 15 runs). An array past the pad is a mapping of its own, which realloc() moves
 * with mremap() without copying a byte; so is every array past glibc's mmap threshold
 * (128 KiB) without the pad, a run on one thread: copying there would only add work (4 % of
 * the 2,000-call capture's time at --cores 1, measured). Hence the limit is the pad.
 */
static _Atomic size_t grow_copy_max;

void sn_xgrow_copy_max(size_t bytes)
{
	atomic_store_explicit(&grow_copy_max, bytes, memory_order_relaxed);
}

void *sn_xgrow(void *p, size_t used, size_t n)
{
	void *q;

	if (!p || used == 0 || n <= used ||
	    used >= atomic_load_explicit(&grow_copy_max, memory_order_relaxed)) {
		q = sn_xrealloc(p, n);
		huge_advise(q, n);
		return q;
	}
	q = xhuge_block(n);
	huge_advise(q, n);
	sn_mem_populate(q, used);
	memcpy(q, p, used);
	free(p);
	return q;
}

/*
 * On the development VM a page fault on fresh memory costs about 12 µs, and a page faulted in
 * by MADV_POPULATE_WRITE about half of that in all, its first write included (4 MiB, written
 * twice: 12.1-12.5 ms against 0.6 ms + 5.6-5.7 ms). The result build allocates its arrays
 * fresh and fills them at once: c5k's build took about 1,000 of a one-core run's 1,214 page
 * faults.
 */
#define SN_FULL_MIN ((size_t)8 << 10) /* smaller: at most a page or two, not worth a call */

void *sn_xmalloc_full(size_t n)
{
	void *p = xhuge_block(n);

	if (n >= SN_FULL_MIN) {
		huge_advise(p, n);
		sn_mem_populate(p, n);
	}
	return p;
}

void *sn_xcalloc_full(size_t count, size_t size)
{
	void *p;

	if (size && count > SIZE_MAX / size) {
		oom(SIZE_MAX);
	}
	if (count * size < SN_FULL_MIN) {
		return sn_xcalloc(count, size);
	}
	/* populated first, then zeroed: sn_mem_populate() promises nothing of the contents */
	p = xhuge_block(count * size);
	huge_advise(p, count * size);
	sn_mem_populate(p, count * size);
	return memset(p, 0, count * size);
}

char *sn_xstrndup(const char *s, size_t n)
{
	char *p = sn_xmalloc(n + 1);
	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

char *sn_slice_dup(struct sn_slice s)
{
	char *p = sn_xmalloc((size_t)s.len + 1);
	if (s.len) {
		memcpy(p, s.ptr, s.len);
	}
	p[s.len] = '\0';
	return p;
}
