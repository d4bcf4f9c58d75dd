/*
 * sn_mem.c - pages of memory faulted in ahead (sn_mem_populate()) and given back
 * (sn_mem_release()), for large arrays written once in order.
 * In a file of their own so that a test can put checking versions in their place
 * (tests/check_eng_giveback.c).
 */
#include "config.h"

#include "sipnab/sn_base.h"

#include <stdatomic.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

/* The whole pages inside [p, p + n) as [*a, *b); false when there are none. */
static bool whole_pages(const void *p, size_t n, uintptr_t *a, uintptr_t *b)
{
	/* any thread may be first: the cached page size is an atomic (relaxed: every thread
	 * computes the same value) */
	static _Atomic uintptr_t cached;
	uintptr_t page = atomic_load_explicit(&cached, memory_order_relaxed);

	if (!page) {
		long ps = sysconf(_SC_PAGESIZE);

		page = ps > 0 ? (uintptr_t)ps : 4096;
		atomic_store_explicit(&cached, page, memory_order_relaxed);
	}
	*a = ((uintptr_t)p + page - 1) & ~(page - 1);
	*b = ((uintptr_t)p + n) & ~(page - 1);
	return *b > *a;
}

void sn_mem_populate(void *p, size_t n)
{
	uintptr_t a, b;

	if (whole_pages(p, n, &a, &b)) {
		(void)madvise((void *)a, b - a, MADV_POPULATE_WRITE);
	}
}

void sn_mem_release(void *p, size_t n)
{
	uintptr_t a, b;

	if (whole_pages(p, n, &a, &b)) {
		(void)madvise((void *)a, b - a, MADV_DONTNEED);
	}
}
