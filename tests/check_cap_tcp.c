/*
 * check_cap_tcp.c - unit tests for TCP stream reassembly (cap_tcp).
 *
 * Packets are built by hand. The test application frames a toy protocol whose messages end
 * with "\n\n" and records each message, the direction it came from and whether a gap was
 * reported before it.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "sipnab/cap_tcp.h"

#define MAX_MSGS 64
#define NS	 1000000000LL

struct rec {
	char msgs[MAX_MSGS][512];
	bool gaps[MAX_MSGS];
	uint16_t sports[MAX_MSGS];
	int count;
	int calls;
	int frees;
	bool gap_seen; /* a gap was reported since the last message */
	const uint8_t *last_data;
};

/* What a direction's app_ptr points to, so app_free can count without globals. */
struct app_box {
	struct rec *r;
};

static size_t rec_cb(void *user, struct cap_tcp_dir *dir, const struct cap_packet *pkt,
		     const uint8_t *data, size_t len, bool gap)
{
	struct rec *r = user;
	size_t i;

	r->calls++;
	r->last_data = data;
	if (gap) {
		r->gap_seen = true;
	}
	if (!dir->app_ptr) {
		struct app_box *b = malloc(sizeof(*b));

		b->r = r;
		dir->app_ptr = b;
		dir->app_state = 1;
	}
	for (i = 0; i + 1 < len; i++) {
		if (data[i] == '\n' && data[i + 1] == '\n') {
			size_t n = i + 2;

			ck_assert_int_lt(r->count, MAX_MSGS);
			ck_assert_uint_lt(n, sizeof(r->msgs[0]));
			memcpy(r->msgs[r->count], data, n);
			r->msgs[r->count][n] = '\0';
			r->gaps[r->count] = r->gap_seen;
			r->sports[r->count] = pkt->sport;
			r->gap_seen = false;
			r->count++;
			return n;
		}
	}
	return 0;
}

static void rec_free(void *p)
{
	struct app_box *b = p;

	b->r->frees++;
	free(b);
}

/* Direction 0: 10.0.0.1:40000 -> 10.0.0.2:5060 (port offset selects the connection). */
static struct cap_packet mk(int dir, int conn, uint32_t seq, uint8_t flags, const char *s,
			    int64_t ts)
{
	struct cap_packet p;
	struct sn_addr a = {.family = 4, .bytes = {10, 0, 0, 1}};
	struct sn_addr b = {.family = 4, .bytes = {10, 0, 0, 2}};
	uint16_t pa = (uint16_t)(40000 + conn);
	uint16_t pb = 5060;

	memset(&p, 0, sizeof(p));
	p.ts_ns = ts;
	p.l4 = CAP_L4_TCP;
	p.ip_proto = 6;
	p.src = dir == 0 ? a : b;
	p.dst = dir == 0 ? b : a;
	p.sport = dir == 0 ? pa : pb;
	p.dport = dir == 0 ? pb : pa;
	p.tcp_seq = seq;
	p.tcp_flags = flags;
	p.payload = (const uint8_t *)s;
	p.payload_len = s ? (uint32_t)strlen(s) : 0;
	return p;
}

static void feed(struct cap_tcp *t, int dir, uint32_t seq, uint8_t flags, const char *s, int64_t ts)
{
	struct cap_packet p = mk(dir, 0, seq, flags, s, ts);

	cap_tcp_segment(t, &p);
}

static struct rec *r;
static struct cap_tcp *t;

static void setup(void)
{
	r = calloc(1, sizeof(*r));
	t = cap_tcp_new(NULL, rec_cb, rec_free, r);
}

static void teardown(void)
{
	cap_tcp_free(t);
	free(r);
}

static struct cap_tcp *new_with(const struct cap_tcp_limits *lim)
{
	cap_tcp_free(t);
	t = cap_tcp_new(lim, rec_cb, rec_free, r);
	return t;
}

START_TEST(test_cap_tcp_delivers_in_order_messages)
{
	feed(t, 0, 99, CAP_TCP_SYN, NULL, 0);
	feed(t, 0, 100, CAP_TCP_ACK, "INVITE\n\n", 1);
	feed(t, 0, 108, CAP_TCP_ACK, "ACK\n\n", 2);
	ck_assert_int_eq(r->count, 2);
	ck_assert_str_eq(r->msgs[0], "INVITE\n\n");
	ck_assert_str_eq(r->msgs[1], "ACK\n\n");
	ck_assert(!r->gaps[0]);
	ck_assert_uint_eq(cap_tcp_stats(t)->segments, 2);
	ck_assert_uint_eq(cap_tcp_stats(t)->conns, 1);
}
END_TEST

START_TEST(test_cap_tcp_calls_the_app_on_the_packet_bytes_without_copying)
{
	struct cap_packet p = mk(0, 0, 1, CAP_TCP_ACK, "A\n\n", 0);

	cap_tcp_segment(t, &p);
	ck_assert_ptr_eq(r->last_data, p.payload);
	ck_assert_int_eq(r->count, 1);
}
END_TEST

START_TEST(test_cap_tcp_joins_a_message_split_over_three_segments)
{
	feed(t, 0, 0, CAP_TCP_SYN, NULL, 0);
	feed(t, 0, 1, CAP_TCP_ACK, "INVITE sip:a", 1);
	feed(t, 0, 13, CAP_TCP_ACK, "@b SIP/2.0\n", 2);
	ck_assert_int_eq(r->count, 0);
	feed(t, 0, 24, CAP_TCP_ACK, "\n", 3);
	ck_assert_int_eq(r->count, 1);
	ck_assert_str_eq(r->msgs[0], "INVITE sip:a@b SIP/2.0\n\n");
}
END_TEST

START_TEST(test_cap_tcp_splits_two_messages_in_one_segment)
{
	feed(t, 0, 0, CAP_TCP_SYN, NULL, 0);
	feed(t, 0, 1, CAP_TCP_ACK, "one\n\ntwo\n\nthr", 1);
	ck_assert_int_eq(r->count, 2);
	ck_assert_str_eq(r->msgs[0], "one\n\n");
	ck_assert_str_eq(r->msgs[1], "two\n\n");
	feed(t, 0, 14, CAP_TCP_ACK, "ee\n\n", 2);
	ck_assert_int_eq(r->count, 3);
	ck_assert_str_eq(r->msgs[2], "three\n\n");
}
END_TEST

START_TEST(test_cap_tcp_reorders_segments_arriving_3_1_2)
{
	feed(t, 0, 0, CAP_TCP_SYN, NULL, 0);
	feed(t, 0, 9, CAP_TCP_ACK, "ccc\n\n", 1);
	ck_assert_int_eq(r->count, 0);
	feed(t, 0, 1, CAP_TCP_ACK, "aaa\n\n", 2);
	ck_assert_int_eq(r->count, 1);
	ck_assert_str_eq(r->msgs[0], "aaa\n\n");
	/* "bb\n" fills the hole before "ccc\n\n" */
	feed(t, 0, 6, CAP_TCP_ACK, "bb\n", 3);
	ck_assert_int_eq(r->count, 2);
	feed(t, 0, 14, CAP_TCP_ACK, "ddd\n\n", 4);
	ck_assert_int_eq(r->count, 3);
	ck_assert_str_eq(r->msgs[1], "bb\nccc\n\n");
	ck_assert_str_eq(r->msgs[2], "ddd\n\n");
	ck_assert(!r->gaps[1]);
	ck_assert_uint_eq(cap_tcp_stats(t)->out_of_order, 1);
	ck_assert_uint_eq(cap_tcp_stats(t)->gaps, 0);
}
END_TEST

START_TEST(test_cap_tcp_delivers_when_the_hole_fills_exactly)
{
	feed(t, 0, 0, CAP_TCP_SYN, NULL, 0);
	feed(t, 0, 9, CAP_TCP_ACK, "c\n\n", 1);
	feed(t, 0, 6, CAP_TCP_ACK, "b\n\n", 2);
	feed(t, 0, 1, CAP_TCP_ACK, "aaa\n\n", 3);
	ck_assert_int_eq(r->count, 3);
	ck_assert_str_eq(r->msgs[0], "aaa\n\n");
	ck_assert_str_eq(r->msgs[1], "b\n\n");
	ck_assert_str_eq(r->msgs[2], "c\n\n");
	ck_assert_uint_eq(cap_tcp_stats(t)->out_of_order, 2);
}
END_TEST

START_TEST(test_cap_tcp_drops_and_counts_a_retransmission)
{
	feed(t, 0, 0, CAP_TCP_SYN, NULL, 0);
	feed(t, 0, 1, CAP_TCP_ACK, "msg\n\n", 1);
	feed(t, 0, 1, CAP_TCP_ACK, "msg\n\n", 2);
	ck_assert_int_eq(r->count, 1);
	ck_assert_uint_eq(cap_tcp_stats(t)->retransmissions, 1);
	ck_assert_uint_eq(cap_tcp_stats(t)->segments, 2);
}
END_TEST

START_TEST(test_cap_tcp_trims_a_partial_overlap)
{
	feed(t, 0, 0, CAP_TCP_SYN, NULL, 0);
	feed(t, 0, 1, CAP_TCP_ACK, "hello\n\nw", 1);
	/* Bytes 5..15 of the stream: the first three were seen. */
	feed(t, 0, 6, CAP_TCP_ACK, "\n\nworld\n\n", 2);
	ck_assert_int_eq(r->count, 2);
	ck_assert_str_eq(r->msgs[0], "hello\n\n");
	ck_assert_str_eq(r->msgs[1], "world\n\n");
	ck_assert_uint_eq(cap_tcp_stats(t)->retransmissions, 0);
}
END_TEST

START_TEST(test_cap_tcp_follows_sequence_wrap_around)
{
	feed(t, 0, 0xfffffff8u, CAP_TCP_SYN, NULL, 0);
	/* Stream starts at 0xfffffff9; "0123456" ends at 0xffffffff. */
	feed(t, 0, 0xfffffff9u, CAP_TCP_ACK, "0123456", 1);
	/* Out of order across the wrap: seq 2 before seq 0. */
	feed(t, 0, 2u, CAP_TCP_ACK, "\n\nnext\n\n", 2);
	ck_assert_int_eq(r->count, 0);
	feed(t, 0, 0u, CAP_TCP_ACK, "78", 3);
	ck_assert_int_eq(r->count, 2);
	ck_assert_str_eq(r->msgs[0], "012345678\n\n");
	ck_assert_str_eq(r->msgs[1], "next\n\n");
	feed(t, 0, 0xfffffffeu, CAP_TCP_ACK, "56", 4);
	ck_assert_uint_eq(cap_tcp_stats(t)->retransmissions, 1);
	ck_assert_int_eq(r->count, 2);
}
END_TEST

START_TEST(test_cap_tcp_counts_a_segment_half_the_sequence_space_behind)
{
	feed(t, 0, 0, CAP_TCP_SYN, NULL, 0);
	feed(t, 0, 1, CAP_TCP_ACK, "msg\n\n", 1);
	/* 2^31 bytes from the next expected byte: as far behind as ahead; its distance does not
	 * fit a negated int32 (fuzz_report found the overflow) */
	feed(t, 0, 6u + 0x80000000u, CAP_TCP_ACK, "late\n\n", 2);
	ck_assert_int_eq(r->count, 1);
	ck_assert_uint_eq(cap_tcp_stats(t)->retransmissions, 1);
	feed(t, 0, 6, CAP_TCP_ACK, "next\n\n", 3);
	ck_assert_int_eq(r->count, 2);
	ck_assert_str_eq(r->msgs[1], "next\n\n");
}
END_TEST

START_TEST(test_cap_tcp_starts_mid_stream_without_syn)
{
	feed(t, 1, 5000, CAP_TCP_ACK | CAP_TCP_PSH, "SIP/2.0 200 OK\n\n", 0);
	feed(t, 1, 5016, CAP_TCP_ACK, "x\n\n", 1);
	ck_assert_int_eq(r->count, 2);
	ck_assert_str_eq(r->msgs[0], "SIP/2.0 200 OK\n\n");
	ck_assert_str_eq(r->msgs[1], "x\n\n");
	ck_assert_uint_eq(r->sports[0], 5060);
	ck_assert_uint_eq(cap_tcp_stats(t)->conns, 1);
}
END_TEST

START_TEST(test_cap_tcp_ignores_a_pure_ack_of_an_unknown_connection)
{
	feed(t, 0, 77, CAP_TCP_ACK, NULL, 0);
	ck_assert_uint_eq(cap_tcp_stats(t)->conns, 0);
}
END_TEST

START_TEST(test_cap_tcp_skips_a_hole_after_the_timeout)
{
	feed(t, 0, 0, CAP_TCP_SYN, NULL, 0);
	feed(t, 0, 1, CAP_TCP_ACK, "one\n\n", 0);
	/* bytes 6..10 ("lost!") never arrive */
	feed(t, 0, 11, CAP_TCP_ACK, "two\n\n", 1 * NS);
	feed(t, 0, 16, CAP_TCP_ACK, "thr", 5 * NS);
	ck_assert_int_eq(r->count, 1);
	ck_assert_uint_eq(cap_tcp_stats(t)->gaps, 0);
	feed(t, 0, 19, CAP_TCP_ACK, "ee\n\n", 6 * NS + 1);
	ck_assert_int_eq(r->count, 3);
	ck_assert_str_eq(r->msgs[1], "two\n\n");
	ck_assert(r->gaps[1]);
	ck_assert_str_eq(r->msgs[2], "three\n\n");
	ck_assert(!r->gaps[2]);
	ck_assert_uint_eq(cap_tcp_stats(t)->gaps, 1);
	ck_assert_uint_eq(cap_tcp_stats(t)->gap_bytes, 5);
	/* The lost bytes arriving late are old now. */
	feed(t, 0, 6, CAP_TCP_ACK, "lost!", 7 * NS);
	ck_assert_int_eq(r->count, 3);
	ck_assert_uint_eq(cap_tcp_stats(t)->retransmissions, 1);
}
END_TEST

START_TEST(test_cap_tcp_skips_a_hole_when_out_of_order_segments_overflow)
{
	struct cap_tcp_limits lim = {.max_ooo_segs = 2};

	new_with(&lim);
	feed(t, 0, 0, CAP_TCP_SYN, NULL, 0);
	feed(t, 0, 10, CAP_TCP_ACK, "a\n\n", 0);
	feed(t, 0, 13, CAP_TCP_ACK, "b\n\n", 0);
	ck_assert_int_eq(r->count, 0);
	feed(t, 0, 16, CAP_TCP_ACK, "c\n\n", 0);
	ck_assert_int_eq(r->count, 3);
	ck_assert(r->gaps[0]);
	ck_assert_str_eq(r->msgs[2], "c\n\n");
	ck_assert_uint_eq(cap_tcp_stats(t)->gaps, 1);
	ck_assert_uint_eq(cap_tcp_stats(t)->gap_bytes, 9);
}
END_TEST

START_TEST(test_cap_tcp_treats_bytes_cut_by_the_snap_length_as_a_hole)
{
	struct cap_packet p;

	feed(t, 0, 0, CAP_TCP_SYN, NULL, 0);
	p = mk(0, 0, 1, CAP_TCP_ACK, "one\n\ntw", 0);
	p.truncated = 1; /* 100 bytes on the wire */
	cap_tcp_segment(t, &p);
	ck_assert_int_eq(r->count, 1);
	feed(t, 0, 101, CAP_TCP_ACK, "three\n\n", 1);
	ck_assert_int_eq(r->count, 2);
	ck_assert_str_eq(r->msgs[1], "three\n\n");
	ck_assert(r->gaps[1]);
	ck_assert_uint_eq(cap_tcp_stats(t)->gaps, 1);
	ck_assert_uint_eq(cap_tcp_stats(t)->gap_bytes, 93);
}
END_TEST

START_TEST(test_cap_tcp_discards_a_direction_that_is_never_consumed)
{
	struct cap_tcp_limits lim = {.max_dir_bytes = 1024};
	char blob[501];

	memset(blob, 'x', 500);
	blob[500] = '\0';
	new_with(&lim);
	feed(t, 0, 0, CAP_TCP_SYN, NULL, 0);
	feed(t, 0, 1, CAP_TCP_ACK, blob, 1);
	feed(t, 0, 501, CAP_TCP_ACK, blob, 2);
	ck_assert_uint_eq(cap_tcp_stats(t)->overflow_bytes, 0);
	feed(t, 0, 1001, CAP_TCP_ACK, blob, 3);
	ck_assert_uint_eq(cap_tcp_stats(t)->overflow_bytes, 1500);
	feed(t, 0, 1501, CAP_TCP_ACK, "ok\n\n", 4);
	ck_assert_int_eq(r->count, 1);
	ck_assert_str_eq(r->msgs[0], "ok\n\n");
	ck_assert(r->gaps[0]);
}
END_TEST

START_TEST(test_cap_tcp_keeps_both_directions_independent)
{
	feed(t, 0, 0, CAP_TCP_SYN, NULL, 0);
	feed(t, 1, 1000, CAP_TCP_SYN | CAP_TCP_ACK, NULL, 0);
	feed(t, 0, 1, CAP_TCP_ACK, "REGISTER", 1);
	feed(t, 1, 1001, CAP_TCP_ACK, "100 Trying\n\n", 2);
	feed(t, 0, 9, CAP_TCP_ACK, "\n\n", 3);
	feed(t, 1, 1013, CAP_TCP_ACK, "200", 4);
	feed(t, 1, 1016, CAP_TCP_ACK, " OK\n\n", 5);
	ck_assert_int_eq(r->count, 3);
	ck_assert_str_eq(r->msgs[0], "100 Trying\n\n");
	ck_assert_uint_eq(r->sports[0], 5060);
	ck_assert_str_eq(r->msgs[1], "REGISTER\n\n");
	ck_assert_uint_eq(r->sports[1], 40000);
	ck_assert_str_eq(r->msgs[2], "200 OK\n\n");
	ck_assert_uint_eq(cap_tcp_stats(t)->conns, 1);
}
END_TEST

START_TEST(test_cap_tcp_evicts_the_least_recently_used_connection)
{
	struct cap_tcp_limits lim = {.max_conns = 2};
	struct cap_packet p;
	int c;

	new_with(&lim);
	for (c = 0; c < 2; c++) {
		p = mk(0, c, 1, CAP_TCP_ACK, "m\n\n", c);
		cap_tcp_segment(t, &p);
	}
	/* Touch connection 0 so connection 1 is the least recently used. */
	p = mk(0, 0, 4, CAP_TCP_ACK, "n\n\n", 5);
	cap_tcp_segment(t, &p);
	p = mk(0, 2, 1, CAP_TCP_ACK, "o\n\n", 6);
	cap_tcp_segment(t, &p);
	ck_assert_uint_eq(cap_tcp_stats(t)->evicted, 1);
	ck_assert_uint_eq(cap_tcp_stats(t)->conns, 3);
	ck_assert_int_eq(r->frees, 1);
	/* Connection 0 is still tracked: its next segment continues the stream. */
	p = mk(0, 0, 7, CAP_TCP_ACK, "q\n\n", 7);
	cap_tcp_segment(t, &p);
	ck_assert_uint_eq(cap_tcp_stats(t)->conns, 3);
	ck_assert_int_eq(r->count, 5);
}
END_TEST

START_TEST(test_cap_tcp_releases_idle_connections)
{
	struct cap_packet p;

	p = mk(0, 0, 1, CAP_TCP_ACK, "m\n\n", 0);
	cap_tcp_segment(t, &p);
	/* other traffic does not age connection 0 (another worker would not have seen it) */
	p = mk(0, 1, 1, CAP_TCP_ACK, "m\n\n", 301 * NS);
	cap_tcp_segment(t, &p);
	ck_assert_int_eq(r->frees, 0);
	/* its own next segment, 302 s later, finds it idle: released and started afresh */
	p = mk(0, 0, 4, CAP_TCP_ACK, "n\n\n", 302 * NS);
	cap_tcp_segment(t, &p);
	ck_assert_int_eq(r->frees, 1);
	ck_assert_uint_eq(cap_tcp_stats(t)->conns, 3);
	ck_assert_uint_eq(cap_tcp_stats(t)->evicted, 0);
}
END_TEST

START_TEST(test_cap_tcp_flush_delivers_past_holes)
{
	feed(t, 0, 0, CAP_TCP_SYN, NULL, 0);
	feed(t, 0, 1, CAP_TCP_ACK, "one\n\n", 1);
	feed(t, 0, 20, CAP_TCP_ACK, "four\n\n", 2);
	ck_assert_int_eq(r->count, 1);
	cap_tcp_flush(t);
	ck_assert_int_eq(r->count, 2);
	ck_assert_str_eq(r->msgs[1], "four\n\n");
	ck_assert(r->gaps[1]);
	ck_assert_uint_eq(cap_tcp_stats(t)->gaps, 1);
	ck_assert_uint_eq(cap_tcp_stats(t)->gap_bytes, 14);
	ck_assert_int_eq(r->frees, 1);
	/* Nothing left: the connection is gone. */
	feed(t, 0, 26, CAP_TCP_ACK, "x\n\n", 3);
	ck_assert_uint_eq(cap_tcp_stats(t)->conns, 2);
}
END_TEST

START_TEST(test_cap_tcp_releases_after_fin_in_both_directions)
{
	feed(t, 0, 0, CAP_TCP_SYN, NULL, 0);
	feed(t, 1, 500, CAP_TCP_SYN | CAP_TCP_ACK, NULL, 0);
	feed(t, 0, 1, CAP_TCP_ACK, "BYE\n\n", 1);
	feed(t, 1, 501, CAP_TCP_ACK, "200\n\n", 2);
	feed(t, 0, 6, CAP_TCP_ACK | CAP_TCP_FIN, NULL, 3);
	ck_assert_int_eq(r->frees, 0);
	feed(t, 1, 506, CAP_TCP_ACK | CAP_TCP_FIN, NULL, 4);
	ck_assert_int_eq(r->frees, 2);
	ck_assert_int_eq(r->count, 2);
	/* The last ACK does not create a connection. */
	feed(t, 0, 7, CAP_TCP_ACK, NULL, 5);
	ck_assert_uint_eq(cap_tcp_stats(t)->conns, 1);
}
END_TEST

START_TEST(test_cap_tcp_delivers_held_bytes_on_rst)
{
	feed(t, 0, 0, CAP_TCP_SYN, NULL, 0);
	feed(t, 0, 1, CAP_TCP_ACK, "a\n\n", 1);
	feed(t, 0, 10, CAP_TCP_ACK, "b\n\n", 2);
	feed(t, 1, 900, CAP_TCP_RST, NULL, 3);
	ck_assert_int_eq(r->count, 2);
	ck_assert_str_eq(r->msgs[1], "b\n\n");
	ck_assert(r->gaps[1]);
	ck_assert_int_eq(r->frees, 1);
}
END_TEST

START_TEST(test_cap_tcp_frees_app_state_on_free)
{
	feed(t, 0, 1, CAP_TCP_ACK, "a\n\n", 1);
	feed(t, 1, 1, CAP_TCP_ACK, "b", 1);
	ck_assert_int_eq(r->frees, 0);
	cap_tcp_free(t);
	t = NULL;
	ck_assert_int_eq(r->frees, 2);
}
END_TEST

static TCase *tc_new(Suite *s, const char *name)
{
	TCase *tc = tcase_create(name);

	tcase_add_checked_fixture(tc, setup, teardown);
	suite_add_tcase(s, tc);
	return tc;
}

static Suite *cap_tcp_suite(void)
{
	Suite *s = suite_create("cap_tcp");
	TCase *tc;

	tc = tc_new(s, "in_order");
	tcase_add_test(tc, test_cap_tcp_delivers_in_order_messages);
	tcase_add_test(tc, test_cap_tcp_calls_the_app_on_the_packet_bytes_without_copying);
	tc = tc_new(s, "framing");
	tcase_add_test(tc, test_cap_tcp_joins_a_message_split_over_three_segments);
	tcase_add_test(tc, test_cap_tcp_splits_two_messages_in_one_segment);
	tc = tc_new(s, "out_of_order");
	tcase_add_test(tc, test_cap_tcp_reorders_segments_arriving_3_1_2);
	tcase_add_test(tc, test_cap_tcp_delivers_when_the_hole_fills_exactly);
	tc = tc_new(s, "retransmission");
	tcase_add_test(tc, test_cap_tcp_drops_and_counts_a_retransmission);
	tcase_add_test(tc, test_cap_tcp_trims_a_partial_overlap);
	tc = tc_new(s, "wrap_around");
	tcase_add_test(tc, test_cap_tcp_follows_sequence_wrap_around);
	tcase_add_test(tc, test_cap_tcp_counts_a_segment_half_the_sequence_space_behind);
	tc = tc_new(s, "mid_stream");
	tcase_add_test(tc, test_cap_tcp_starts_mid_stream_without_syn);
	tcase_add_test(tc, test_cap_tcp_ignores_a_pure_ack_of_an_unknown_connection);
	tc = tc_new(s, "holes");
	tcase_add_test(tc, test_cap_tcp_skips_a_hole_after_the_timeout);
	tcase_add_test(tc, test_cap_tcp_skips_a_hole_when_out_of_order_segments_overflow);
	tcase_add_test(tc, test_cap_tcp_treats_bytes_cut_by_the_snap_length_as_a_hole);
	tc = tc_new(s, "buffer_bound");
	tcase_add_test(tc, test_cap_tcp_discards_a_direction_that_is_never_consumed);
	tc = tc_new(s, "directions");
	tcase_add_test(tc, test_cap_tcp_keeps_both_directions_independent);
	tc = tc_new(s, "eviction");
	tcase_add_test(tc, test_cap_tcp_evicts_the_least_recently_used_connection);
	tcase_add_test(tc, test_cap_tcp_releases_idle_connections);
	tc = tc_new(s, "flush");
	tcase_add_test(tc, test_cap_tcp_flush_delivers_past_holes);
	tc = tc_new(s, "close");
	tcase_add_test(tc, test_cap_tcp_releases_after_fin_in_both_directions);
	tcase_add_test(tc, test_cap_tcp_delivers_held_bytes_on_rst);
	tc = tc_new(s, "app_free");
	tcase_add_test(tc, test_cap_tcp_frees_app_state_on_free);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(cap_tcp_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
