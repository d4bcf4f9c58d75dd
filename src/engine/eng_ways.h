/*
 * eng_ways.h - which way to read the next stretch of a mapped capture file while its read lease
 * holds it still: through the mapping, or copied with pread() into a buffer of the reader's own.
 * What each way costs depends on the machine and on how the page cache holds the file, so
 * the reader times the stretches it reads, tries the other way now and then, and reads on the
 * cheaper way (eng_ways.c). Used by eng_run.c (one reader) and eng_split.c (sharded reading).
 */
#ifndef SIPNAB_ENG_WAYS_H
#define SIPNAB_ENG_WAYS_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

/** How SIPNAB_MAPPED says to read a mapped file (benchmarks and tests; eng_env_map()):
 *  - unset: under the file's read lease where one can be had (cap_reader_lease()), each
 *    stretch the way that has cost least (ENG_MAP_CHOOSE), copied where there is no lease;
 *  - "lease": under the lease, always through the mapping (ENG_MAP_LEASED: the default before
 *    the ways were chosen, for comparison);
 *  - "alternate": under the lease, the two ways in turn, stretch after stretch (tests);
 *  - "0": never through the mapping;
 *  - anything else: always through it, with no lease (a file cut under the reader then kills
 *    the process: for comparison only). */
enum eng_map { ENG_MAP_CHOOSE, ENG_MAP_LEASED, ENG_MAP_ALTERNATE, ENG_MAP_NEVER, ENG_MAP_ALWAYS };
enum eng_map eng_env_map(void);

enum eng_way { ENG_WAY_MAP, ENG_WAY_COPY };

/**
 * The choice, stretch by stretch. Stretches are numbered from 0 in file order; a stretch is
 * picked (eng_ways_pick()) before it is read and noted (eng_ways_note()) once it has been,
 * possibly out of order and with others picked meanwhile (sharded reading). Stretches 0
 * to 3 are copied, the first two not weighed (they carry the run's start-up costs: the
 * engines' first tables, the buffers' first faults); stretch 4 is read through the mapping,
 * a try of the other way. From there on a stretch is read the way in use, and the other way
 * is tried again, for one stretch, `gap` stretches after the last try: 8 after one that won,
 * doubling up to 64 at each one that lost. A try wins when it cost less than 95 % of the
 * cheapest of the way in use's last three stretches (per byte): a stretch is now and then
 * several times slower than its neighbours (an interrupt, the hypervisor), never faster, so
 * the least of a few is what a way costs, and a slow try only loses once more. A try is
 * one stretch because the way that loses can cost several times the other (the mapping of a
 * file in small folios: 4-8 times copying it, BENCHMARKS.md).
 * Thread: not thread-safe; eng_split.c calls it under its lock.
 */
#define ENG_WAYS_RECENT 3

struct eng_ways {
	enum eng_map map;
	enum eng_way cur;                /* the way read, but for tries */
	double recent[ENG_WAYS_RECENT]; /* cur's last costs, ns per byte; 0: none */
	uint32_t nrecent;               /* costs noted since cur was set (the next slot) */
	uint64_t tried;                 /* the first stretch of the last try */
	enum eng_way try_way;
	double try_cost;                /* the least cost of its stretches noted so far */
	uint32_t try_noted;             /* its stretches noted (judged at all of a try's) */
	bool trying;                    /* a try is picked and not judged yet */
	uint64_t gap;                   /* stretches from one try's start to the next's */
	double judged[2];               /* the costs last weighed, by way (SIPNAB_TIMING) */
	uint64_t stretches[2];          /* picked, by way */
	uint32_t switches;              /* times cur changed */
};

void eng_ways_init(struct eng_ways *w, enum eng_map map);
/** The way to read stretch @p s. */
enum eng_way eng_ways_pick(struct eng_ways *w, uint64_t s);
/** Stretch @p s, read @p way, took @p ns nanoseconds for @p bytes of the file. */
void eng_ways_note(struct eng_ways *w, uint64_t s, enum eng_way way, uint64_t ns,
		   uint64_t bytes);

/** For SIPNAB_TIMING: how many @p unit (chunks, stretches) were read each way, and what
 *  each way cost as last noted; nothing unless the ways were chosen or alternated. */
void eng_ways_print(const struct eng_ways *w, const char *unit);

/** The monotonic clock in nanoseconds, for timing stretches. */
static inline uint64_t eng_ways_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

#endif
