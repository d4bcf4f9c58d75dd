/*
 * sn_xalloc.c - allocation that aborts on out-of-memory (STYLE.md §3). Memory is bounded by
 * budgets, not by NULL checks.
 */
#include "config.h"

#include "sipnab/sn_base.h"

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
