/*
 * pages.c - what a page costs on this machine at its first access, the measurements behind
 * sipnab's use of huge pages (BENCHMARKS.md, "Huge pages for big blocks; page-cache folios
 * again"):
 *   - fresh anonymous memory written one byte per 4 KiB, in small pages and then with
 *     MADV_HUGEPAGE (2 MiB pages where the kernel gives them);
 *   - the same in small pages faulted in ahead with MADV_POPULATE_WRITE (as sn_mem_populate()
 *     does), then written one byte per 4 KiB twice: on the development VM the first pass
 *     still paid about half of what a fault costs (BENCHMARKS.md, "Huge-page blocks start on
 *     a huge page; every line of a packet prefetched");
 *   - FILE mapped read-only with MADV_HUGEPAGE, faulted in with MADV_POPULATE_READ, then read
 *     one byte per 4 KiB twice (the first pass pays for every page the mapping holds in small
 *     page-cache folios), and the same file read with pread() in 2 MiB blocks.
 * Usage: pages FILE [MIB]  (MIB of anonymous memory, default 32). Build:
 *     cc -O2 -o /tmp/pages bench/pages.c
 * Prints one line per measurement: NAME MS ms (US us per 4 KiB).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22
#endif
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

enum anon_way { ANON_SMALL, ANON_HUGE, ANON_POPULATED };

#define HUGE_BYTES ((size_t)2 << 20)
#define STEP       4096u

static volatile unsigned sink;

static double now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static void report(const char *name, double ms, size_t bytes)
{
	printf("%-22s %8.2f ms (%.3f us per 4 KiB)\n", name, ms,
	       bytes ? ms * 1e3 / (double)(bytes / STEP) : 0.0);
}

/* Write one byte per 4 KiB of @p len fresh bytes, 2 MiB-aligned: in small pages, in huge
 * pages, or in small pages faulted in ahead (then written twice). */
static int anon(size_t len, enum anon_way way)
{
	uint8_t *raw = mmap(NULL, len + HUGE_BYTES, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint8_t *m;
	double t;

	if (raw == MAP_FAILED) {
		perror("pages: mmap");
		return -1;
	}
	m = (uint8_t *)(((uintptr_t)raw + HUGE_BYTES - 1) & ~(uintptr_t)(HUGE_BYTES - 1));
#ifdef MADV_HUGEPAGE
	if (way == ANON_HUGE) {
		(void)madvise(m, len, MADV_HUGEPAGE);
	}
#endif
	if (way == ANON_POPULATED) {
		t = now_ms();
		if (madvise(m, len, MADV_POPULATE_WRITE) != 0) {
			perror("pages: MADV_POPULATE_WRITE");
			munmap(raw, len + HUGE_BYTES);
			return 0; /* a kernel before 5.14: nothing to measure */
		}
		report("anon, populate", now_ms() - t, len);
	}
	t = now_ms();
	for (size_t o = 0; o < len; o += STEP) {
		m[o] = 1;
	}
	report(way == ANON_HUGE ? "anon, huge pages"
	       : way == ANON_SMALL ? "anon, 4 KiB pages" : "anon, populated, 1st", now_ms() - t, len);
	if (way == ANON_POPULATED) {
		t = now_ms();
		for (size_t o = 0; o < len; o += STEP) {
			m[o] = 2;
		}
		report("anon, populated, 2nd", now_ms() - t, len);
	}
	munmap(raw, len + HUGE_BYTES);
	return 0;
}

static int file(const char *path)
{
	int fd = open(path, O_RDONLY);
	struct stat st;
	uint8_t *m, *buf;
	unsigned s = 0;
	double t;
	size_t len;

	if (fd < 0 || fstat(fd, &st) != 0 || st.st_size <= 0) {
		fprintf(stderr, "pages: %s: cannot read it, or it is empty\n", path);
		return -1;
	}
	len = (size_t)st.st_size;
	m = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
	if (m == MAP_FAILED) {
		perror("pages: mmap of the file");
		close(fd);
		return -1;
	}
#ifdef MADV_HUGEPAGE
	(void)madvise(m, len, MADV_HUGEPAGE);
#endif
	t = now_ms();
	(void)madvise(m, len, MADV_POPULATE_READ);
	report("file, populate", now_ms() - t, len);
	t = now_ms();
	for (size_t o = 0; o < len; o += STEP) {
		s += m[o];
	}
	report("file, first touch", now_ms() - t, len);
	t = now_ms();
	for (size_t o = 0; o < len; o += STEP) {
		s += m[o];
	}
	report("file, second touch", now_ms() - t, len);
	munmap(m, len);
	buf = aligned_alloc(HUGE_BYTES, HUGE_BYTES);
	if (!buf) {
		close(fd);
		return -1;
	}
	for (size_t o = 0; o < HUGE_BYTES; o += STEP) {
		buf[o] = 0; /* the buffer's own pages before the clock starts */
	}
	t = now_ms();
	for (size_t o = 0; o < len; o += HUGE_BYTES) {
		ssize_t got = pread(fd, buf, HUGE_BYTES, (off_t)o);

		for (ssize_t k = 0; k < got; k += STEP) {
			s += buf[k];
		}
	}
	report("file, pread 2 MiB", now_ms() - t, len);
	sink = s;
	free(buf);
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	long mib = argc == 3 ? strtol(argv[2], NULL, 10) : 32;

	if (argc < 2 || argc > 3 || mib <= 0 || mib > 4096) {
		fprintf(stderr, "usage: pages FILE [MIB]\n");
		return 2;
	}
	if (access(argv[1], R_OK) != 0) {
		fprintf(stderr, "pages: %s: cannot read it\n", argv[1]);
		return 1;
	}
	if (anon((size_t)mib << 20, ANON_SMALL) || anon((size_t)mib << 20, ANON_HUGE) ||
	    anon((size_t)mib << 20, ANON_POPULATED) || file(argv[1])) {
		return 1;
	}
	return 0;
}
