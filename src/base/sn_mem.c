/*
 * sn_mem.c - pages of memory faulted in ahead (sn_mem_populate(); sn_mem_prefault() while
 * other threads write them) and given back (sn_mem_release()), for large arrays written once
 * in order.
 * In a file of their own so that a test can put checking versions in their place
 * (tests/check_eng_giveback.c).
 */
#include "config.h"

#include "sipnab/sn_base.h"

#include <stdint.h>
#include <sys/mman.h>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

/* The whole pages inside [p, p + n) as [*a, *b); false when there are none. */
static bool whole_pages(const void *p, size_t n, uintptr_t *a, uintptr_t *b)
{
	uintptr_t page = sn_page_size();

	*a = ((uintptr_t)p + page - 1) & ~(page - 1);
	*b = ((uintptr_t)p + n) & ~(page - 1);
	return *b > *a;
}

/*
 * Every page that the range touches, the edges too: the callers fault in an array a stretch
 * at a time, and the whole pages inside each stretch left out the page across each boundary,
 * to be faulted in by the first write (c5k's message arena, a page every 64 KiB: 73 of a
 * one-core run's 365 faults). A page at an edge lies in the same mapping as the range, and
 * populating it changes nothing in it.
 */
void sn_mem_prefault(void *p, size_t n)
{
	uintptr_t page = sn_page_size();
	uintptr_t a = (uintptr_t)p & ~(page - 1);
	uintptr_t b = ((uintptr_t)p + n + page - 1) & ~(page - 1);

	if (n) {
		(void)madvise((void *)a, b - a, MADV_POPULATE_WRITE);
	}
}

/* the same call; only its promise differs (sn_base.h), so that tests can watch its callers */
void sn_mem_populate(void *p, size_t n)
{
	sn_mem_prefault(p, n);
}

void sn_mem_release(void *p, size_t n)
{
	uintptr_t a, b;

	if (whole_pages(p, n, &a, &b)) {
		(void)madvise((void *)a, b - a, MADV_DONTNEED);
	}
}
