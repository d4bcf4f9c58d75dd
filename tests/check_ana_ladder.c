/*
 * check_ana_ladder.c - the call-flow layout without a terminal: column order, arrow
 * directions and spans, labels, and the ASCII drawing of a three-endpoint call.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "sipnab/ana_ladder.h"

#define MS 1000000LL

static struct eng_result res;
static struct eng_call call;
static struct eng_msg msgs[8];
static struct eng_msg *order[8]; /* res.msgs */
static uint32_t idx[8];
static struct eng_sdp_media media;

static void add(uint8_t from, uint8_t to, int64_t t_ms, const char *method, uint16_t status,
		const char *reason, bool sdp)
{
	struct eng_msg *m = &msgs[res.msg_count];

	memset(m, 0, sizeof(*m));
	m->ts_ns = 1000 * MS + t_ms * MS;
	m->src.family = 4;
	m->src.bytes[0] = 192;
	m->src.bytes[3] = from;
	m->dst.family = 4;
	m->dst.bytes[0] = 192;
	m->dst.bytes[3] = to;
	m->sport = 5060;
	m->dport = 5060;
	m->is_request = status == 0;
	m->method_name = method;
	m->status = status;
	m->reason = reason;
	m->media_count = sdp;
	m->media = sdp ? &media : NULL;
	order[res.msg_count] = m;
	idx[call.msg_count++] = res.msg_count++;
}

/* A -> proxy P -> B: INVITE, INVITE, 180 back, a retransmitted 200. */
static void setup(void)
{
	memset(&res, 0, sizeof(res));
	memset(&call, 0, sizeof(call));
	res.msgs = order;
	call.msgs = idx;
	add(1, 5, 0, "INVITE", 0, "", true);
	add(5, 9, 2, "INVITE", 0, "", true);
	add(9, 5, 50, "INVITE", 180, "Ringing", false);
	add(9, 1, 1000, "INVITE", 200, "OK", true);
	add(9, 1, 1500, "INVITE", 200, "OK", true);
	add(1, 1, 1600, "OPTIONS", 0, "", false);
	msgs[4].retransmission = true;
}

START_TEST(test_ana_ladder_columns_in_order_of_appearance)
{
	struct ana_ladder l;

	ana_ladder_init(&l, &res, &call, 20);
	ck_assert_uint_eq(l.col_count, 3);
	ck_assert_str_eq(l.cols[0].name, "192.0.0.1:5060");
	ck_assert_str_eq(l.cols[1].name, "192.0.0.5:5060");
	ck_assert_str_eq(l.cols[2].name, "192.0.0.9:5060");
	ck_assert_uint_eq(l.col_width, 20);
	ck_assert_uint_eq(l.width, 60);
	ck_assert_uint_eq(l.cols[0].x, 10);
	ck_assert_uint_eq(l.cols[1].x, 30);
	ck_assert_uint_eq(l.cols[2].x, 50);
	ana_ladder_cleanup(&l);
	ck_assert_ptr_null(l.cols);
}
END_TEST

START_TEST(test_ana_ladder_arrow_directions_and_spans)
{
	struct ana_ladder l;

	ana_ladder_init(&l, &res, &call, 20);
	ck_assert_uint_eq(l.arrow_count, 6);
	/* A -> P */
	ck_assert_uint_eq(l.arrows[0].from, 0);
	ck_assert_uint_eq(l.arrows[0].to, 1);
	ck_assert(l.arrows[0].right);
	ck_assert_uint_eq(l.arrows[0].x0, 11);
	ck_assert_uint_eq(l.arrows[0].x1, 29);
	/* B -> P, leftwards */
	ck_assert_uint_eq(l.arrows[2].from, 2);
	ck_assert_uint_eq(l.arrows[2].to, 1);
	ck_assert(!l.arrows[2].right);
	ck_assert_uint_eq(l.arrows[2].x0, 31);
	ck_assert_uint_eq(l.arrows[2].x1, 49);
	/* B -> A crosses P */
	ck_assert_uint_eq(l.arrows[3].x0, 11);
	ck_assert_uint_eq(l.arrows[3].x1, 49);
	ck_assert(!l.arrows[3].right);
	ck_assert_int_eq(l.arrows[3].rel_ns, 1000 * MS);
	ck_assert(!l.arrows[3].retransmission);
	ck_assert(l.arrows[4].retransmission);
	ck_assert_uint_eq(l.arrows[4].msg, 4);
	/* to itself: a short arrow right of the lane */
	ck_assert_uint_eq(l.arrows[5].from, 0);
	ck_assert_uint_eq(l.arrows[5].to, 0);
	ck_assert(l.arrows[5].right);
	ck_assert_uint_eq(l.arrows[5].x0, 11);
	ck_assert_uint_eq(l.arrows[5].x1, 19);
	ana_ladder_cleanup(&l);
}
END_TEST

START_TEST(test_ana_ladder_labels)
{
	char buf[64];

	ana_ladder_label(&msgs[0], buf, sizeof(buf));
	ck_assert_str_eq(buf, "INVITE (SDP)");
	ana_ladder_label(&msgs[2], buf, sizeof(buf));
	ck_assert_str_eq(buf, "180 Ringing");
	msgs[2].reason = "";
	ana_ladder_label(&msgs[2], buf, sizeof(buf));
	ck_assert_str_eq(buf, "180");
	msgs[2].reason = "Ring\x1b[2Jing";
	ana_ladder_label(&msgs[2], buf, sizeof(buf));
	ck_assert_str_eq(buf, "180 Ring?[2Jing");
}
END_TEST

START_TEST(test_ana_ladder_draws_ascii)
{
	struct ana_ladder l;
	char line[128];

	ana_ladder_init(&l, &res, &call, 20);
	ana_ladder_draw_header(&l, line, sizeof(line));
	ck_assert_str_eq(line, "   192.0.0.1:5060      192.0.0.5:5060      192.0.0.9:5060   ");
	ana_ladder_draw_arrow(&l, 0, line, sizeof(line));
	ck_assert_str_eq(line, "          |---INVITE (SDP)--->|                   |         ");
	ana_ladder_draw_arrow(&l, 2, line, sizeof(line));
	ck_assert_str_eq(line, "          |                   |<---180 Ringing----|         ");
	ana_ladder_draw_arrow(&l, 3, line, sizeof(line));
	ck_assert_str_eq(line, "          |<------------200 OK (SDP)--------------|         ");
	ana_ladder_draw_arrow(&l, 5, line, sizeof(line));
	ck_assert_str_eq(line, "          |--OPTIO->          |                   |         ");
	/* a small buffer is cut, never overrun */
	ana_ladder_draw_arrow(&l, 3, line, 16);
	ck_assert_str_eq(line, "          |<---");
	ana_ladder_cleanup(&l);
}
END_TEST

START_TEST(test_ana_ladder_width_from_labels)
{
	struct ana_ladder l;

	ana_ladder_init(&l, &res, &call, 0);
	/* "192.0.0.1:5060" + 2 = 16, "INVITE (SDP)" + 6 = 18, "200 OK (SDP)" + 6 = 18 */
	ck_assert_uint_eq(l.col_width, ANA_LADDER_COL_MIN);
	msgs[2].reason = "Ringing and ringing and ringing and ringing and more";
	ana_ladder_cleanup(&l);
	ana_ladder_init(&l, &res, &call, 0);
	ck_assert_uint_eq(l.col_width, ANA_LADDER_COL_MAX);
	ana_ladder_cleanup(&l);
}
END_TEST

START_TEST(test_ana_ladder_empty_call)
{
	struct ana_ladder l;
	char line[8];

	call.msg_count = 0;
	ana_ladder_init(&l, &res, &call, 0);
	ck_assert_uint_eq(l.col_count, 0);
	ck_assert_uint_eq(l.arrow_count, 0);
	ana_ladder_draw_header(&l, line, sizeof(line));
	ck_assert_str_eq(line, "");
	ana_ladder_cleanup(&l);
}
END_TEST

static Suite *ana_ladder_suite(void)
{
	Suite *s = suite_create("ana_ladder");
	TCase *tc = tcase_create("layout");

	tcase_add_checked_fixture(tc, setup, NULL);
	tcase_add_test(tc, test_ana_ladder_columns_in_order_of_appearance);
	tcase_add_test(tc, test_ana_ladder_arrow_directions_and_spans);
	tcase_add_test(tc, test_ana_ladder_labels);
	tcase_add_test(tc, test_ana_ladder_width_from_labels);
	tcase_add_test(tc, test_ana_ladder_empty_call);
	suite_add_tcase(s, tc);

	tc = tcase_create("drawing");
	tcase_add_checked_fixture(tc, setup, NULL);
	tcase_add_test(tc, test_ana_ladder_draws_ascii);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(ana_ladder_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
