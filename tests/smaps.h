/*
 * smaps.h - test helper shared by check_sn_xalloc.c, check_sn_arena.c and check_eng_run.c:
 * the kernel's huge page size, and whether the mapping that holds an address was advised huge
 * (MADV_HUGEPAGE: VmFlags "hg" in /proc/self/smaps), with the mapping's bounds and how much
 * of it is resident. Included by test programs
 * only (they use Check's assertions).
 */
#ifndef SIPNAB_TESTS_SMAPS_H
#define SIPNAB_TESTS_SMAPS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

/* The kernel's huge page size, or 0 when it has none (the huge-page tests then check nothing
 * but that the blocks work). */
static inline size_t huge_size(void)
{
	FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/hpage_pmd_size", "r");
	unsigned long long v = 0;

	if (f) {
		if (fscanf(f, "%llu", &v) != 1) {
			v = 0;
		}
		fclose(f);
	}
	return (size_t)v;
}

/*
 * The mapping holding address @p a: its bounds into *lo and *hi, its resident kilobytes into
 * *rss_kb (Rss in smaps; may be NULL), and whether it was advised huge (VmFlags "hg").
 */
static inline bool mapping_scan(const void *a, uintptr_t *lo, uintptr_t *hi,
				unsigned long long *rss_kb)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	char *line = NULL;
	size_t cap = 0;
	bool inside = false, hg = false, found = false;

	ck_assert_ptr_nonnull(f);
	while (getline(&line, &cap, f) > 0) {
		unsigned long long l, h, kb;
		int end = 0;

		/* a mapping's first line: "start-end perms ..."; its fields follow, VmFlags last */
		if (sscanf(line, "%llx-%llx%n", &l, &h, &end) == 2 && line[end] == ' ') {
			inside = (uintptr_t)a >= l && (uintptr_t)a < h;
			if (inside) {
				*lo = (uintptr_t)l;
				*hi = (uintptr_t)h;
			}
		} else if (inside && rss_kb && sscanf(line, "Rss: %llu kB", &kb) == 1) {
			*rss_kb = kb;
		} else if (inside && strncmp(line, "VmFlags:", 8) == 0) {
			found = true;
			hg = strstr(line, " hg") != NULL;
			break;
		}
	}
	free(line);
	fclose(f);
	ck_assert_msg(found, "no mapping holds %p", a);
	return hg;
}

/* The mapping holding address @p a: its bounds into *lo and *hi; whether it was advised huge. */
static inline bool mapping_of(const void *a, uintptr_t *lo, uintptr_t *hi)
{
	return mapping_scan(a, lo, hi, NULL);
}

/* Resident kilobytes of the mapping holding address @p a. */
static inline unsigned long long mapping_rss_kb(const void *a)
{
	uintptr_t lo, hi;
	unsigned long long kb = ~0ull;

	(void)mapping_scan(a, &lo, &hi, &kb);
	ck_assert_msg(kb != ~0ull, "no Rss for the mapping of %p", a);
	return kb;
}

static inline bool advised_huge(const void *a)
{
	uintptr_t lo, hi;

	return mapping_of(a, &lo, &hi);
}

#endif
