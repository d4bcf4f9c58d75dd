/*
 * check_eng_ways.c - the choice between reading a mapped capture through its mapping and
 * copying it (src/engine/eng_ways.c), fed with made-up costs: it copies first and tries the
 * mapping; it keeps the cheaper way, trying the other less and less often while it loses;
 * it follows the file when the cheaper way changes on the way (a file whose first part the
 * page cache holds in small folios); one slow stretch does not make it switch; costs noted
 * out of order (sharded reading) are weighed the same, and a try never noted is given up;
 * SIPNAB_MAPPED's fixed ways never change; and "alternate" takes the ways in turn.
 */
#include "config.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include <check.h>

#include "eng_ways.h"

#define BYTES 1000000u

/* Read stretches [0, n), each costing map_ns or copy_ns per byte (by way) as @p cost says
 * for that stretch, the way of each into ways[]: each picked @p lag stretches before it is
 * noted (sharded reading picks ahead), and stretch @p unnoted never noted (a chunk read
 * again is not). */
typedef void cost_fn(uint64_t s, double *map_ns, double *copy_ns);

static void run_noting(struct eng_ways *w, uint64_t n, cost_fn *cost, enum eng_way *ways,
		       uint64_t lag, uint64_t unnoted)
{
	for (uint64_t s = 0; s < n + lag; s++) {
		if (s < n) {
			ways[s] = eng_ways_pick(w, s);
		}
		if (s >= lag && s - lag != unnoted) {
			uint64_t d = s - lag;
			double m, c;

			cost(d, &m, &c);
			eng_ways_note(w, d, ways[d],
				      (uint64_t)((ways[d] == ENG_WAY_MAP ? m : c) * BYTES), BYTES);
		}
	}
}

/* run_noting() in order, every stretch noted */
static void run(struct eng_ways *w, uint64_t n, cost_fn *cost, enum eng_way *ways)
{
	run_noting(w, n, cost, ways, 0, UINT64_MAX);
}

static uint64_t count(const enum eng_way *ways, uint64_t from, uint64_t to, enum eng_way way)
{
	uint64_t k = 0;

	for (uint64_t s = from; s < to; s++) {
		k += ways[s] == way;
	}
	return k;
}

static void map_cheap(uint64_t s, double *m, double *c)
{
	(void)s;
	*m = 0.10;
	*c = 0.13;
}

static void copy_cheap(uint64_t s, double *m, double *c)
{
	(void)s;
	*m = 0.40;
	*c = 0.10;
}

/* the first 16 stretches in small folios (the mapping four times as dear), then both alike
 * but the mapping 10 % cheaper */
static void folios(uint64_t s, double *m, double *c)
{
	*c = 0.10;
	*m = s < 16 ? 0.40 : 0.09;
}

START_TEST(test_ways_copy_first_then_try_the_mapping)
{
	struct eng_ways w;
	enum eng_way ways[8];

	eng_ways_init(&w, ENG_MAP_CHOOSE);
	run(&w, 8, copy_cheap, ways);
	for (int s = 0; s < 4; s++) {
		ck_assert_int_eq(ways[s], ENG_WAY_COPY);
	}
	ck_assert_int_eq(ways[4], ENG_WAY_MAP);
	ck_assert_int_eq(ways[5], ENG_WAY_COPY);
	ck_assert_int_eq(ways[6], ENG_WAY_COPY);
	ck_assert_int_eq(w.switches, 0);
}
END_TEST

START_TEST(test_ways_keep_the_cheaper_and_try_the_other_less_often)
{
	struct eng_ways w;
	enum eng_way ways[400];

	eng_ways_init(&w, ENG_MAP_CHOOSE);
	run(&w, 400, copy_cheap, ways);
	ck_assert_int_eq(w.switches, 0);
	/* tries of one stretch, each lost try doubling the gap to the next: 16, 32, then 64 */
	for (uint64_t s = 0, t = 0, tries[] = {4, 20, 52, 116, 180, 244, 308, 372}; s < 400; s++) {
		bool in_try = t < 8 && s == tries[t];

		ck_assert_msg(ways[s] == (in_try ? ENG_WAY_MAP : ENG_WAY_COPY), "stretch %llu",
			      (unsigned long long)s);
		t += in_try;
	}
	ck_assert_uint_eq(w.stretches[ENG_WAY_MAP] + w.stretches[ENG_WAY_COPY], 400);

	/* the mapping cheaper: it wins its first try and is read from then on */
	eng_ways_init(&w, ENG_MAP_CHOOSE);
	run(&w, 400, map_cheap, ways);
	ck_assert_int_eq(w.switches, 1);
	ck_assert_int_eq(ways[5], ENG_WAY_MAP);
	/* copying tried at 12, 28, 60, 124, 188, 252, 316 and 380 */
	ck_assert_uint_eq(count(ways, 5, 400, ENG_WAY_COPY), 8);
}
END_TEST

START_TEST(test_ways_follow_the_file)
{
	struct eng_ways w;
	enum eng_way ways[200];

	eng_ways_init(&w, ENG_MAP_CHOOSE);
	run(&w, 200, folios, ways);
	/* copying while the mapping is dear, bar the tries */
	ck_assert_uint_eq(count(ways, 0, 16, ENG_WAY_MAP), 1);
	/* the mapping within a few tries once it is cheaper (the gap had grown to 16 at most) */
	ck_assert_int_eq(w.switches, 1);
	ck_assert_uint_eq(ways[21], ENG_WAY_MAP);
	/* copying tried at 28, 44, 76 and 140 */
	ck_assert_uint_eq(count(ways, 21, 200, ENG_WAY_MAP), 179 - 4);
	ck_assert_int_eq(w.cur, ENG_WAY_MAP);
}
END_TEST

static uint64_t spike_at;

/* copying a little cheaper (within the 5 % a try must win by), but stretch spike_at took
 * five times as long */
static void copy_close_spike(uint64_t s, double *m, double *c)
{
	*m = 0.102;
	*c = s == spike_at ? 0.5 : 0.1;
}

/* the mapping cheaper, but stretch spike_at took five times as long */
static void map_cheap_spike(uint64_t s, double *m, double *c)
{
	map_cheap(s, m, c);
	if (s == spike_at) {
		*m *= 5;
	}
}

START_TEST(test_ways_one_slow_stretch_is_no_reason)
{
	struct eng_ways w;
	enum eng_way ways[300];

	/* a slow stretch of the way in use, anywhere up to and past the first tries */
	for (spike_at = 2; spike_at < 60; spike_at++) {
		eng_ways_init(&w, ENG_MAP_CHOOSE);
		run(&w, 300, copy_close_spike, ways);
		ck_assert_msg(w.switches == 0, "a slow stretch %llu made it switch",
			      (unsigned long long)spike_at);
	}
	/* a slow first try of the cheaper way: it loses, and the next try wins */
	spike_at = 4;
	eng_ways_init(&w, ENG_MAP_CHOOSE);
	run(&w, 300, map_cheap_spike, ways);
	ck_assert_int_eq(w.switches, 1);
	ck_assert_int_eq(ways[5], ENG_WAY_COPY);
	ck_assert_int_eq(ways[20], ENG_WAY_MAP);
	ck_assert_int_eq(ways[21], ENG_WAY_MAP);
}
END_TEST

START_TEST(test_ways_noted_out_of_order)
{
	struct eng_ways w;
	enum eng_way ways[300];

	/* picked four stretches ahead of those noted, as sharded reading does */
	eng_ways_init(&w, ENG_MAP_CHOOSE);
	run_noting(&w, 300, map_cheap, ways, 4, UINT64_MAX);
	ck_assert_int_eq(w.cur, ENG_WAY_MAP);
	ck_assert_int_eq(w.switches, 1);
	/* copying tried at 28, 60, 124, 188 and 252 */
	ck_assert_uint_eq(count(ways, 20, 300, ENG_WAY_MAP), 280 - 5);
}
END_TEST

START_TEST(test_ways_a_try_never_noted_is_given_up)
{
	struct eng_ways w;
	enum eng_way ways[300];

	/* the mapping cheaper, but its first try (stretch 4) is never noted, as a chunk read
	 * again is not: the next try comes 64 stretches later, and wins */
	eng_ways_init(&w, ENG_MAP_CHOOSE);
	run_noting(&w, 300, map_cheap, ways, 0, 4);
	ck_assert_int_eq(ways[4], ENG_WAY_MAP);
	ck_assert_uint_eq(count(ways, 5, 68, ENG_WAY_MAP), 0);
	ck_assert_int_eq(ways[68], ENG_WAY_MAP);
	ck_assert_int_eq(w.switches, 1);
	ck_assert_uint_ge(count(ways, 69, 300, ENG_WAY_MAP), 231 - 8);
}
END_TEST

START_TEST(test_ways_fixed_and_alternate)
{
	struct eng_ways w;
	enum eng_way ways[100];

	eng_ways_init(&w, ENG_MAP_LEASED);
	run(&w, 100, copy_cheap, ways);
	ck_assert_uint_eq(count(ways, 0, 100, ENG_WAY_MAP), 100);
	eng_ways_init(&w, ENG_MAP_ALWAYS);
	run(&w, 100, copy_cheap, ways);
	ck_assert_uint_eq(count(ways, 0, 100, ENG_WAY_MAP), 100);
	eng_ways_init(&w, ENG_MAP_NEVER);
	run(&w, 100, map_cheap, ways);
	ck_assert_uint_eq(count(ways, 0, 100, ENG_WAY_COPY), 100);
	eng_ways_init(&w, ENG_MAP_ALTERNATE);
	run(&w, 100, map_cheap, ways);
	for (int s = 0; s < 100; s++) {
		ck_assert_int_eq(ways[s], s % 2 ? ENG_WAY_COPY : ENG_WAY_MAP);
	}
	ck_assert_int_eq(w.switches, 0);
}
END_TEST

START_TEST(test_ways_from_the_environment)
{
	unsetenv("SIPNAB_MAPPED");
	ck_assert_int_eq(eng_env_map(), ENG_MAP_CHOOSE);
	setenv("SIPNAB_MAPPED", "0", 1);
	ck_assert_int_eq(eng_env_map(), ENG_MAP_NEVER);
	setenv("SIPNAB_MAPPED", "1", 1);
	ck_assert_int_eq(eng_env_map(), ENG_MAP_ALWAYS);
	setenv("SIPNAB_MAPPED", "lease", 1);
	ck_assert_int_eq(eng_env_map(), ENG_MAP_LEASED);
	setenv("SIPNAB_MAPPED", "alternate", 1);
	ck_assert_int_eq(eng_env_map(), ENG_MAP_ALTERNATE);
	unsetenv("SIPNAB_MAPPED");
}
END_TEST

static Suite *eng_ways_suite(void)
{
	Suite *s = suite_create("eng_ways");
	TCase *tc = tcase_create("choice");

	tcase_add_test(tc, test_ways_copy_first_then_try_the_mapping);
	tcase_add_test(tc, test_ways_keep_the_cheaper_and_try_the_other_less_often);
	tcase_add_test(tc, test_ways_follow_the_file);
	tcase_add_test(tc, test_ways_one_slow_stretch_is_no_reason);
	tcase_add_test(tc, test_ways_noted_out_of_order);
	tcase_add_test(tc, test_ways_a_try_never_noted_is_given_up);
	tcase_add_test(tc, test_ways_fixed_and_alternate);
	tcase_add_test(tc, test_ways_from_the_environment);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(eng_ways_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
