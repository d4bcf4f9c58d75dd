/*
 * sn_xalloc.c - allocation that aborts on out-of-memory (STYLE.md §3). Memory is bounded by
 * budgets, not by NULL checks.
 */
#include "config.h"

#include "sipnab/sn_base.h"

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
