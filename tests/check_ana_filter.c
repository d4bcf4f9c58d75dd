/*
 * check_ana_filter.c - problem detection and selections, one rule at a time, on hand-built
 * calls and streams.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "sipnab/ana_filter.h"

#define T0 1767225600000000000LL
#define MS 1000000LL

static struct eng_result res;
static struct eng_call call;
static struct eng_stream streams[3];
static uint32_t idx[3] = {0, 1, 2};

static void set_stream(uint32_t i, uint8_t from, uint8_t to, uint16_t sport, uint16_t dport)
{
	struct eng_stream *s = &streams[i];

	memset(s, 0, sizeof(*s));
	s->src.family = 4;
	s->src.bytes[0] = 10;
	s->src.bytes[3] = from;
	s->dst.family = 4;
	s->dst.bytes[0] = 10;
	s->dst.bytes[3] = to;
	s->sport = sport;
	s->dport = dport;
	s->rtp.packets = 100;
	s->rtp.start_seq = 1;
	s->rtp.stop_seq = 100;
	s->mos = 4.4;
}

/* An answered, ended INVITE call: setup 40 ms, 10 s of media both ways. */
static void setup(void)
{
	memset(&res, 0, sizeof(res));
	memset(&call, 0, sizeof(call));
	res.calls = &call;
	res.call_count = 1;
	res.streams = streams;
	res.stream_count = 2;
	res.stats.first_ts_ns = T0;
	res.stats.last_ts_ns = T0 + 60000 * MS;
	call.call_id = "c@h";
	call.kind = "INVITE";
	call.is_invite = true;
	call.state = ENG_CALL_COMPLETED;
	call.final_code = 200;
	call.start_ns = T0;
	call.attempt_ns = -1;
	call.ring_ns = T0 + 40 * MS;
	call.answer_ns = T0 + 1000 * MS;
	call.end_ns = T0 + 11000 * MS;
	call.streams = idx;
	call.stream_count = 2;
	set_stream(0, 1, 2, 10000, 20000);
	set_stream(1, 2, 1, 20000, 10000);
}

static uint32_t problems(const struct ana_filter *f)
{
	return ana_filter_call_problems(f, &res, &call);
}

START_TEST(test_ana_filter_good_call_has_no_problem)
{
	struct ana_filter f;

	ana_filter_init(&f);
	ck_assert_uint_eq(problems(NULL), 0);
	ck_assert_uint_eq(problems(&f), 0);
	ck_assert(!ana_filter_is_active(&f));
	ck_assert(!ana_filter_is_active(NULL));
	ck_assert(ana_filter_match(&f, &res, &call));
	ck_assert(ana_filter_match(NULL, &res, &call));
	f.problems = true;
	ck_assert(ana_filter_is_active(&f));
	ck_assert(!ana_filter_match(&f, &res, &call));
}
END_TEST

START_TEST(test_ana_filter_failed_states)
{
	static const struct {
		enum eng_call_state st;
		uint16_t code;
		bool failed;
	} cases[] = {
		{ENG_CALL_REJECTED, 403, true},	  {ENG_CALL_BUSY, 486, true},
		{ENG_CALL_FAILED, 503, true},	  {ENG_CALL_SETUP, 0, true},
		{ENG_CALL_CANCELLED, 487, false}, {ENG_CALL_DIVERTED, 302, false},
		{ENG_CALL_RINGING, 0, false},	  {ENG_CALL_COMPLETED, 200, false},
	};

	for (size_t i = 0; i < SN_ARRAY_SIZE(cases); i++) {
		call.state = cases[i].st;
		call.final_code = cases[i].code;
		call.answer_ns = -1;
		call.stream_count = 0;
		ck_assert_msg(((problems(NULL) & ANA_PROB_FAILED) != 0) == cases[i].failed,
			      "case %zu", i);
	}
}
END_TEST

START_TEST(test_ana_filter_low_mos_threshold)
{
	streams[1].mos = 3.59;
	ck_assert_uint_eq(ana_filter_stream_problems(&streams[1]), ANA_PROB_LOW_MOS);
	ck_assert_uint_eq(problems(NULL), ANA_PROB_LOW_MOS);
	streams[1].mos = 3.6;
	ck_assert_uint_eq(problems(NULL), 0);
	streams[1].mos = 0; /* not computable: not a problem */
	ck_assert_uint_eq(problems(NULL), 0);
}
END_TEST

START_TEST(test_ana_filter_loss_above_one_percent)
{
	streams[0].rtp.packets = 99; /* 1 of 100 lost: exactly 1 % */
	ck_assert_uint_eq(problems(NULL), 0);
	streams[0].rtp.packets = 98;
	ck_assert_uint_eq(ana_filter_stream_problems(&streams[0]), ANA_PROB_LOSS);
	ck_assert_uint_eq(problems(NULL), ANA_PROB_LOSS);
}
END_TEST

START_TEST(test_ana_filter_one_way_audio)
{
	struct ana_filter f;

	ana_filter_init(&f);
	f.one_way = true;
	/* only A -> B */
	call.stream_count = 1;
	ck_assert_uint_eq(ana_filter_one_way_streams(&res, &call), 1);
	ck_assert_uint_eq(problems(NULL), ANA_PROB_ONE_WAY);
	ck_assert(ana_filter_match(&f, &res, &call));
	/* both ways, plus a third stream with no reverse (other SSRC on another host) */
	call.stream_count = 3;
	set_stream(2, 3, 1, 30000, 10000);
	ck_assert_uint_eq(ana_filter_one_way_streams(&res, &call), 1);
	ck_assert_uint_eq(problems(NULL), ANA_PROB_ONE_WAY);
	call.stream_count = 2;
	ck_assert_uint_eq(problems(NULL), 0);
	ck_assert(!ana_filter_match(&f, &res, &call));
	/* no media at all */
	call.stream_count = 0;
	ck_assert_uint_eq(problems(NULL), ANA_PROB_ONE_WAY);
	/* answered less than 1 s */
	call.end_ns = call.answer_ns + 999 * MS;
	ck_assert_uint_eq(problems(NULL), 0);
	/* not ended: answered until the end of the capture */
	call.end_ns = -1;
	ck_assert_uint_eq(problems(NULL), ANA_PROB_ONE_WAY);
	res.stats.last_ts_ns = call.answer_ns + 500 * MS;
	ck_assert_uint_eq(problems(NULL), 0);
	/* not answered, or not an INVITE */
	res.stats.last_ts_ns = T0 + 60000 * MS;
	call.answer_ns = -1;
	ck_assert_uint_eq(problems(NULL), 0);
	call.answer_ns = T0 + 1000 * MS;
	call.is_invite = false;
	ck_assert_uint_eq(problems(NULL), 0);
}
END_TEST

START_TEST(test_ana_filter_one_way_same_host_uses_ports)
{
	set_stream(0, 1, 1, 10000, 20000);
	set_stream(1, 1, 1, 20000, 10000);
	ck_assert_uint_eq(ana_filter_one_way_streams(&res, &call), 0);
	set_stream(1, 1, 1, 20002, 10000);
	ck_assert_uint_eq(ana_filter_one_way_streams(&res, &call), 2);
	ck_assert_uint_eq(problems(NULL), ANA_PROB_ONE_WAY);
}
END_TEST

START_TEST(test_ana_filter_retransmissions)
{
	struct ana_filter f;

	ana_filter_init(&f);
	f.problems = true;
	call.retransmissions = 2;
	ck_assert_uint_eq(problems(NULL), ANA_PROB_RETRANS);
	ck_assert(ana_filter_match(&f, &res, &call));
}
END_TEST

START_TEST(test_ana_filter_slow_setup)
{
	struct ana_filter f;

	ana_filter_init(&f);
	ck_assert_uint_eq(f.slow_setup_ms, 3000);
	call.ring_ns = T0 + 3500 * MS;
	ck_assert_int_eq(ana_call_setup_ns(&call), 3500 * MS);
	ck_assert_uint_eq(problems(&f), 0);	      /* not selected: not flagged */
	ck_assert(ana_filter_match(&f, &res, &call)); /* no selection: every call */
	f.slow_setup = true;
	ck_assert_uint_eq(problems(&f), ANA_PROB_SLOW_SETUP);
	ck_assert(ana_filter_match(&f, &res, &call));
	f.slow_setup_ms = 4000;
	ck_assert(!ana_filter_match(&f, &res, &call));
	/* no 18x: setup runs to the 2xx */
	call.ring_ns = -1;
	call.answer_ns = T0 + 4001 * MS;
	ck_assert(ana_filter_match(&f, &res, &call));
	call.answer_ns = -1;
	ck_assert_int_eq(ana_call_setup_ns(&call), -1);
	ck_assert(!ana_filter_match(&f, &res, &call));
	/* after a 407 challenge the post-dial delay counts from the retried INVITE */
	call.attempt_ns = T0 + 17000 * MS;
	call.ring_ns = T0 + 17400 * MS;
	ck_assert_int_eq(ana_call_setup_ns(&call), 400 * MS);
	ck_assert(!ana_filter_match(&f, &res, &call));
}
END_TEST

START_TEST(test_ana_filter_short_calls)
{
	struct ana_filter f;

	ana_filter_init(&f);
	f.short_calls = true;
	ck_assert_uint_eq(f.short_call_s, 5);
	ck_assert(!ana_filter_match(&f, &res, &call)); /* 10 s */
	call.end_ns = call.answer_ns + 4999 * MS;
	ck_assert_uint_eq(problems(&f), ANA_PROB_SHORT_CALL);
	ck_assert(ana_filter_match(&f, &res, &call));
	f.short_call_s = 4;
	ck_assert(!ana_filter_match(&f, &res, &call));
	f.short_call_s = 5;
	call.answer_ns = -1; /* never answered: not a short call */
	ck_assert(!ana_filter_match(&f, &res, &call));
}
END_TEST

START_TEST(test_ana_filter_selections_combine_with_or)
{
	struct ana_filter f;

	ana_filter_init(&f);
	f.one_way = true;
	f.short_calls = true;
	call.state = ENG_CALL_REJECTED; /* a problem, but --problems is not given */
	call.final_code = 486;
	ck_assert(!ana_filter_match(&f, &res, &call));
	call.end_ns = call.answer_ns + 2000 * MS; /* short */
	ck_assert(ana_filter_match(&f, &res, &call));
	call.end_ns = call.answer_ns + 20000 * MS;
	call.stream_count = 1; /* one-way */
	ck_assert(ana_filter_match(&f, &res, &call));
}
END_TEST

START_TEST(test_ana_filter_problem_names)
{
	ck_assert_str_eq(ana_problem_name(ANA_PROB_FAILED), "FAILED");
	ck_assert_str_eq(ana_problem_name(ANA_PROB_ONE_WAY), "ONE_WAY");
	ck_assert_str_eq(ana_problem_name(ANA_PROB_SHORT_CALL), "SHORT_CALL");
	ck_assert_str_eq(ana_problem_name((enum ana_problem)0), "UNKNOWN");
}
END_TEST

static Suite *ana_filter_suite(void)
{
	Suite *s = suite_create("ana_filter");
	TCase *tc = tcase_create("problems");

	tcase_add_checked_fixture(tc, setup, NULL);
	tcase_add_test(tc, test_ana_filter_good_call_has_no_problem);
	tcase_add_test(tc, test_ana_filter_failed_states);
	tcase_add_test(tc, test_ana_filter_low_mos_threshold);
	tcase_add_test(tc, test_ana_filter_loss_above_one_percent);
	tcase_add_test(tc, test_ana_filter_one_way_audio);
	tcase_add_test(tc, test_ana_filter_one_way_same_host_uses_ports);
	tcase_add_test(tc, test_ana_filter_retransmissions);
	tcase_add_test(tc, test_ana_filter_problem_names);
	suite_add_tcase(s, tc);

	tc = tcase_create("selections");
	tcase_add_checked_fixture(tc, setup, NULL);
	tcase_add_test(tc, test_ana_filter_slow_setup);
	tcase_add_test(tc, test_ana_filter_short_calls);
	tcase_add_test(tc, test_ana_filter_selections_combine_with_or);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(ana_filter_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
