/*
 * bench_int.h - the timing harness shared by the microbenchmarks in bench/: calibrate an
 * iteration count that runs for BENCH_SECONDS (default 0.5 s), time BENCH_REPS (5) runs of it
 * and print the median as ns per operation and operations per second.
 *
 * BENCH_FILTER, when set, runs only the benchmarks whose name contains it. Besides the median,
 * the fastest repetition is printed: on a loaded machine it is the steadier figure.
 *
 * A benchmark is a bench_body_fn that performs @p iters operations and returns a value
 * derived from their results; the harness folds it into a volatile sink so the work cannot be
 * optimised away. bench_keep() is a compiler barrier for pointers the body only writes to.
 * Private to bench/; header-only so that each program stays a single source file.
 * Thread: single-threaded programs.
 */
#ifndef SIPNAB_BENCH_INT_H
#define SIPNAB_BENCH_INT_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BENCH_REPS 5

typedef uint64_t bench_body_fn(void *ctx, uint64_t iters);

static volatile uint64_t bench_sink;

/* Make the compiler assume *p is read and written here. */
static inline void bench_keep(const void *p)
{
#if defined(__GNUC__)
	__asm__ volatile("" : : "r"(p) : "memory");
#else
	bench_sink += (uint64_t)(uintptr_t)p;
#endif
}

static inline double bench_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double bench_target_seconds(void)
{
	const char *s = getenv("BENCH_SECONDS");
	char *end = NULL;
	double v;

	if (!s || !*s) {
		return 0.5;
	}
	v = strtod(s, &end);
	if (end == s || v <= 0.0) {
		return 0.5;
	}
	return v;
}

static int bench_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a;
	double y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Time @p body, print one line and return the median ns per operation. */
static double bench_run(const char *name, bench_body_fn *body, void *ctx)
{
	const char *filter = getenv("BENCH_FILTER");
	double target = bench_target_seconds();
	double ns[BENCH_REPS];
	uint64_t iters = 1;
	double t;

	if (filter && *filter && !strstr(name, filter)) {
		return 0.0;
	}
	/* calibrate: double until a run takes 10 ms, then scale to the target */
	for (;;) {
		t = bench_now();
		bench_sink += body(ctx, iters);
		t = bench_now() - t;
		if (t >= 0.01 || iters >= (UINT64_C(1) << 40)) {
			break;
		}
		iters *= 2;
	}
	iters = (uint64_t)((double)iters * target / (t > 0 ? t : 1e-9));
	if (iters < 1) {
		iters = 1;
	}
	for (int r = 0; r < BENCH_REPS; r++) {
		t = bench_now();
		bench_sink += body(ctx, iters);
		t = bench_now() - t;
		ns[r] = t * 1e9 / (double)iters;
	}
	qsort(ns, BENCH_REPS, sizeof(ns[0]), bench_cmp_double);
	printf("%-34s %9.1f ns/op %13.0f ops/s  (median of %d x %llu; min %.1f ns)\n", name,
	       ns[BENCH_REPS / 2], 1e9 / ns[BENCH_REPS / 2], BENCH_REPS,
	       (unsigned long long)iters, ns[0]);
	fflush(stdout);
	return ns[BENCH_REPS / 2];
}

#endif
