/*
 * sn_xalloc.c - allocation that aborts on out-of-memory (STYLE.md §3). Memory is bounded by
 * budgets, not by NULL checks.
 */
#include "config.h"

#include "sipnab/sn_base.h"

#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
		return sn_xrealloc(p, n);
	}
	q = sn_xmalloc(n);
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
	void *p = sn_xmalloc(n);

	if (n >= SN_FULL_MIN) {
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
	p = sn_xmalloc(count * size);
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
