/*
 * eng_ways.c - the choice between reading a mapped file through its mapping and copying it
 * (see eng_ways.h).
 *
 * Why: on the development VM of 2026-12-02 the mapping was the cheaper way (c5k at --cores 2
 * took 0.761 of the copy's time), and on the one of 2026-12-03 copying was (0.871 of the
 * mapping's time at --cores 1, 0.900 at two, after `cat`; 1.004 and 1.007 with the whole
 * file in 2 MiB folios). There the page cache held the first 30-40 MiB of every capture read with
 * `cat` in small folios, and walking the record headers through the mapping cost 96-99 ns a
 * record in them against 12.5 ns in the rest (BENCHMARKS.md). So the way is chosen as the
 * file is read, by timing it.
 */
#include "config.h"

#include "eng_ways.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sipnab/sn_base.h"

#define WAYS_GAP_MIN 8u
#define WAYS_GAP_MAX 64u
#define WAYS_WARM 2u      /* stretches not weighed: the run's start-up costs */
#define WAYS_FIRST_TRY 4u /* after two stretches of copying are weighed */
#define WAYS_TRY 1u       /* stretches a try reads */
#define WAYS_WIN 0.95     /* a try wins below this much of the way in use's cost */

enum eng_map eng_env_map(void)
{
	const char *v = getenv("SIPNAB_MAPPED");

	if (!v) {
		return ENG_MAP_CHOOSE;
	}
	if (strcmp(v, "0") == 0) {
		return ENG_MAP_NEVER;
	}
	if (strcmp(v, "lease") == 0) {
		return ENG_MAP_LEASED;
	}
	if (strcmp(v, "alternate") == 0) {
		return ENG_MAP_ALTERNATE;
	}
	return ENG_MAP_ALWAYS;
}

void eng_ways_init(struct eng_ways *w, enum eng_map map)
{
	memset(w, 0, sizeof(*w));
	w->map = map;
	w->try_way = ENG_WAY_COPY;
	/* choosing, the first stretches are copied: copying cost at most 1.3 times what the
	 * mapping did on the development VMs, the mapping up to several times what copying did
	 * (a file in small folios) */
	w->cur = map == ENG_MAP_CHOOSE || map == ENG_MAP_NEVER ? ENG_WAY_COPY : ENG_WAY_MAP;
	w->gap = WAYS_GAP_MIN;
}

static enum eng_way other(enum eng_way way)
{
	return way == ENG_WAY_MAP ? ENG_WAY_COPY : ENG_WAY_MAP;
}

enum eng_way eng_ways_pick(struct eng_ways *w, uint64_t s)
{
	enum eng_way way = w->cur;

	if (w->map == ENG_MAP_ALTERNATE) {
		way = s % 2 ? ENG_WAY_COPY : ENG_WAY_MAP;
	} else if (w->map == ENG_MAP_CHOOSE && s >= WAYS_FIRST_TRY) {
		if (w->trying && s - w->tried >= WAYS_GAP_MAX) {
			/* its stretch was never noted (read again from elsewhere, or with no
			 * record in it: eng_split.c): given up, or there would be no more tries */
			w->trying = false;
		}
		if (!w->trying && (s == WAYS_FIRST_TRY || s - w->tried >= w->gap)) {
			w->trying = true;
			w->tried = s;
			w->try_way = other(w->cur);
			w->try_cost = 0;
			w->try_noted = 0;
		}
		if (w->trying && s - w->tried < WAYS_TRY) {
			way = w->try_way;
		}
	}
	w->stretches[way]++;
	return way;
}

/* The least of cur's recent costs; 0 when none is noted. */
static double cur_cost(const struct eng_ways *w)
{
	double c = 0;

	for (uint32_t i = 0; i < SN_MIN(w->nrecent, (uint32_t)ENG_WAYS_RECENT); i++) {
		c = c > 0 && c < w->recent[i] ? c : w->recent[i];
	}
	return c;
}

/* Judge the try once all its stretches and one of cur's are noted. */
static void judge(struct eng_ways *w)
{
	double c = cur_cost(w);

	if (!w->trying || w->try_noted < WAYS_TRY || c <= 0) {
		return;
	}
	w->trying = false;
	w->judged[w->cur] = c;
	w->judged[w->try_way] = w->try_cost;
	if (w->try_cost < WAYS_WIN * c) {
		w->cur = w->try_way;
		w->recent[0] = w->try_cost;
		w->nrecent = 1;
		w->gap = WAYS_GAP_MIN;
		w->switches++;
	} else if (w->gap < WAYS_GAP_MAX) {
		w->gap *= 2;
	}
}

void eng_ways_note(struct eng_ways *w, uint64_t s, enum eng_way way, uint64_t ns,
		   uint64_t bytes)
{
	double c;

	if (w->map != ENG_MAP_CHOOSE || s < WAYS_WARM || bytes == 0) {
		return;
	}
	c = (double)ns / (double)bytes;
	if (w->trying && way == w->try_way && s >= w->tried && s - w->tried < WAYS_TRY) {
		w->try_cost = w->try_noted && w->try_cost < c ? w->try_cost : c;
		w->try_noted++;
	} else if (way == w->cur) {
		w->recent[w->nrecent++ % ENG_WAYS_RECENT] = c;
	} /* else picked before cur changed, by sharded reading: a cost of a way judged since */
	judge(w);
}

void eng_ways_print(const struct eng_ways *w, const char *unit)
{
	if ((w->map != ENG_MAP_CHOOSE && w->map != ENG_MAP_ALTERNATE) ||
	    w->stretches[ENG_WAY_MAP] + w->stretches[ENG_WAY_COPY] == 0) {
		return;
	}
	fprintf(stderr, "sipnab: timing: ways: %llu %s through the mapping, %llu copied, "
		"%u switches; ns per KiB: mapping %.0f, copying %.0f\n",
		(unsigned long long)w->stretches[ENG_WAY_MAP], unit,
		(unsigned long long)w->stretches[ENG_WAY_COPY], w->switches,
		w->judged[ENG_WAY_MAP] * 1024, w->judged[ENG_WAY_COPY] * 1024);
}
