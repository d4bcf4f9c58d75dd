/*
 * check_sip_txn.c - transaction matching: the INVITE flow, request and response
 * retransmissions, ACK for non-2xx vs 2xx, CANCEL, hops, RFC 2543 fallback, stray responses,
 * the table bound and expiry, and the sip_msg converter.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "sipnab/sip_msg.h"
#include "sipnab/sip_txn.h"
#include "sipnab/sn_arena.h"

#define MS(x) (INT64_C(1000000) * (x))
#define T0    ((int64_t)1700000000 * 1000 * 1000 * 1000)

static struct sn_arena arena;
static struct sip_txn_table *tab;
static unsigned freed;

static void on_free(struct sip_txn *txn, void *ctx)
{
	(void)txn;
	(void)ctx;
	freed++;
}

static void setup(void)
{
	struct sip_txn_table_cfg cfg = {.capacity = 64, .on_free = on_free};

	sn_arena_init(&arena, 0);
	tab = sip_txn_table_new(&cfg);
	freed = 0;
}

static void teardown(void)
{
	sip_txn_table_free(tab);
	sn_arena_cleanup(&arena);
}

#include "sip_test_msg.h"

static struct sip_txn_msg build(const struct spec *sp, int64_t ts, uint32_t hop)
{
	return sip_test_build(&arena, sp, ts, hop);
}

static struct sip_txn *last_txn;

/* Observe one message and return its event. */
static enum sip_txn_event see(const struct spec *sp, int64_t ts, uint32_t hop)
{
	struct sip_txn_msg m = build(sp, ts, hop);
	enum sip_txn_event ev;

	ck_assert_int_eq(sip_txn_table_observe(tab, &m, &last_txn, &ev), SN_OK);
	return ev;
}

#define REQ(...)  (&(struct spec){__VA_ARGS__})
#define RESP(...) (&(struct spec){__VA_ARGS__})

#define ck_ev(got, want)                                                                 \
	ck_assert_msg((got) == (want), "event %s, expected %s", sip_txn_event_name(got), \
		      sip_txn_event_name(want))

/* An OPTIONS with @p branch sent by @p via starts a transaction, and the same request sent by
 * @p same_via (the same sent-by, other letter case) is its retransmission. */
static void ck_sent_by_same(const char *branch, const char *via, const char *same_via, int64_t ts)
{
	ck_ev(see(REQ(.method = "OPTIONS", .branch = branch, .via = via), ts, 0),
	      SIP_TXN_EV_NEW_REQUEST);
	ck_ev(see(REQ(.method = "OPTIONS", .branch = branch, .via = same_via), ts + MS(1), 0),
	      SIP_TXN_EV_REQUEST_RETRANSMISSION);
}

/* ---- converter ------------------------------------------------------------------------- */

START_TEST(test_sip_txn_msg_from_takes_top_via_and_cseq_method)
{
	struct sip_txn_msg m =
		build(RESP(.status = 180, .cseq_method = "INVITE", .cseq = 7, .branch = "z9hG4bKab",
			   .via = "Host.Example.com : 5070", .to_tag = "t1"),
		      T0, 5);

	ck_assert(!m.is_request);
	ck_assert_int_eq(m.method, SIP_METHOD_INVITE);
	ck_assert_int_eq(m.status, 180);
	ck_assert_int_eq(m.cseq, 7);
	ck_assert(sn_slice_eq_str(m.branch, "z9hG4bKab"));
	ck_assert(sn_slice_eq_str(m.sent_by, "Host.Example.com : 5070"));
	ck_assert(sn_slice_eq_str(
		m.top_via,
		"SIP/2.0/UDP Host.Example.com : 5070;branch=z9hG4bKab;received=192.0.2.1"));
	ck_assert(sn_slice_eq_str(m.to_tag, "t1"));
	ck_assert(sn_slice_eq_str(m.from_tag, "alice1"));
	ck_assert(sn_slice_eq_str(m.call_id, "call-1@192.0.2.1"));
	ck_assert_int_eq(m.hop, 5);
	ck_assert(m.ts_ns == T0);

	m = build(REQ(.method = "INVITE", .branch = "z9hG4bKx", .via = "[2001:db8::1]"), T0, 0);
	ck_assert(m.is_request);
	ck_assert(sn_slice_eq_str(m.sent_by, "[2001:db8::1]"));
	ck_assert(sn_slice_eq_str(m.ruri, "sip:bob@192.0.2.2"));
}
END_TEST

START_TEST(test_sip_txn_rejects_bad_status)
{
	struct sip_txn_msg m = build(RESP(.status = 200, .cseq_method = "INVITE"), T0, 0);
	struct sip_txn *x;
	enum sip_txn_event ev;

	m.status = 700;
	ck_assert_int_eq(sip_txn_table_observe(tab, &m, &x, &ev), SN_EPARSE);
	ck_assert_ptr_null(x);
	ck_assert_uint_eq(sip_txn_table_count(tab), 0);
}
END_TEST

/* ---- INVITE flow ----------------------------------------------------------------------- */

START_TEST(test_sip_txn_invite_flow_with_ack_for_2xx)
{
	struct sip_txn *inv;

	ck_ev(see(REQ(.method = "INVITE", .branch = "z9hG4bK1"), T0, 0), SIP_TXN_EV_NEW_REQUEST);
	inv = last_txn;
	ck_assert_int_eq(inv->method, SIP_METHOD_INVITE);
	ck_assert_int_eq(inv->state, SIP_TXN_ST_CALLING);
	ck_assert(!inv->rfc2543);
	ck_assert(sn_slice_eq_str(inv->branch, "z9hG4bK1"));

	ck_ev(see(RESP(.status = 100, .cseq_method = "INVITE", .branch = "z9hG4bK1"), T0 + MS(10),
		  0),
	      SIP_TXN_EV_PROVISIONAL);
	ck_assert_ptr_eq(last_txn, inv);
	ck_assert_int_eq(inv->state, SIP_TXN_ST_PROCEEDING);

	ck_ev(see(RESP(.status = 180, .cseq_method = "INVITE", .branch = "z9hG4bK1",
		       .to_tag = "b1"),
		  T0 + MS(100), 0),
	      SIP_TXN_EV_PROVISIONAL);
	ck_ev(see(RESP(.status = 200, .cseq_method = "INVITE", .branch = "z9hG4bK1",
		       .to_tag = "b1"),
		  T0 + MS(2000), 0),
	      SIP_TXN_EV_FINAL);
	ck_assert_ptr_eq(last_txn, inv);
	ck_assert_int_eq(inv->state, SIP_TXN_ST_TERMINATED);
	ck_assert_int_eq(inv->final_status, 200);

	/* §13.2.2.4: the ACK for a 2xx has a branch of its own. */
	ck_ev(see(REQ(.method = "ACK", .branch = "z9hG4bK2", .to_tag = "b1"), T0 + MS(2010), 0),
	      SIP_TXN_EV_ACK_2XX);
	ck_assert_ptr_null(last_txn);

	ck_assert(inv->first_request_ns == T0);
	ck_assert(inv->first_provisional_ns == T0 + MS(10));
	ck_assert(inv->final_ns == T0 + MS(2000));
	ck_assert_uint_eq(inv->request_count, 1);
	ck_assert_uint_eq(inv->response_count, 3);
	ck_assert_uint_eq(inv->response_retransmission_count, 0);
	ck_assert_uint_eq(sip_txn_table_count(tab), 1);
}
END_TEST

START_TEST(test_sip_txn_counts_invite_retransmissions_after_provisional)
{
	struct sip_txn *inv;

	ck_ev(see(REQ(.method = "INVITE", .branch = "z9hG4bK1"), T0, 0), SIP_TXN_EV_NEW_REQUEST);
	inv = last_txn;
	ck_ev(see(REQ(.method = "INVITE", .branch = "z9hG4bK1"), T0 + MS(500), 0),
	      SIP_TXN_EV_REQUEST_RETRANSMISSION);
	ck_assert_ptr_eq(last_txn, inv);
	ck_ev(see(RESP(.status = 100, .cseq_method = "INVITE", .branch = "z9hG4bK1"), T0 + MS(600),
		  0),
	      SIP_TXN_EV_PROVISIONAL);
	ck_ev(see(REQ(.method = "INVITE", .branch = "z9hG4bK1"), T0 + MS(1500), 0),
	      SIP_TXN_EV_REQUEST_RETRANSMISSION);
	/* The server answers the retransmission with its last provisional again. */
	ck_ev(see(RESP(.status = 100, .cseq_method = "INVITE", .branch = "z9hG4bK1"), T0 + MS(1510),
		  0),
	      SIP_TXN_EV_RESPONSE_RETRANSMISSION);
	ck_assert_uint_eq(inv->request_count, 3);
	ck_assert_uint_eq(inv->response_retransmission_count, 1);
	ck_assert_int_eq(inv->state, SIP_TXN_ST_PROCEEDING);
	ck_assert(inv->first_request_ns == T0);
}
END_TEST

START_TEST(test_sip_txn_counts_200_retransmissions)
{
	struct sip_txn *inv;

	see(REQ(.method = "INVITE", .branch = "z9hG4bK1"), T0, 0);
	inv = last_txn;
	ck_ev(see(RESP(.status = 200, .cseq_method = "INVITE", .branch = "z9hG4bK1", .to_tag = "b"),
		  T0 + MS(100), 0),
	      SIP_TXN_EV_FINAL);
	ck_ev(see(RESP(.status = 200, .cseq_method = "INVITE", .branch = "z9hG4bK1", .to_tag = "b"),
		  T0 + MS(600), 0),
	      SIP_TXN_EV_RESPONSE_RETRANSMISSION);
	ck_ev(see(RESP(.status = 200, .cseq_method = "INVITE", .branch = "z9hG4bK1", .to_tag = "b"),
		  T0 + MS(1600), 0),
	      SIP_TXN_EV_RESPONSE_RETRANSMISSION);
	ck_assert_ptr_eq(last_txn, inv);
	ck_assert_uint_eq(inv->response_retransmission_count, 2);
	ck_assert(inv->final_ns == T0 + MS(100));
	/* A 2xx from another fork (other To tag) is a new final, not a retransmission. */
	ck_ev(see(RESP(.status = 200, .cseq_method = "INVITE", .branch = "z9hG4bK1", .to_tag = "c"),
		  T0 + MS(1700), 0),
	      SIP_TXN_EV_FINAL);
	ck_assert_int_eq(inv->final_status, 200);
}
END_TEST

START_TEST(test_sip_txn_absorbs_ack_for_non2xx)
{
	struct sip_txn *inv;

	see(REQ(.method = "INVITE", .branch = "z9hG4bK1"), T0, 0);
	inv = last_txn;
	ck_ev(see(RESP(.status = 486, .cseq_method = "INVITE", .branch = "z9hG4bK1", .to_tag = "b"),
		  T0 + MS(100), 0),
	      SIP_TXN_EV_FINAL);
	ck_assert_int_eq(inv->state, SIP_TXN_ST_COMPLETED);
	/* §17.1.1.3: same branch, CSeq method ACK. */
	ck_ev(see(REQ(.method = "ACK", .branch = "z9hG4bK1", .to_tag = "b"), T0 + MS(110), 0),
	      SIP_TXN_EV_ACK_NON2XX);
	ck_assert_ptr_eq(last_txn, inv);
	ck_assert_int_eq(inv->state, SIP_TXN_ST_CONFIRMED);
	ck_assert_uint_eq(inv->ack_count, 1);
	ck_ev(see(RESP(.status = 486, .cseq_method = "INVITE", .branch = "z9hG4bK1", .to_tag = "b"),
		  T0 + MS(600), 0),
	      SIP_TXN_EV_RESPONSE_RETRANSMISSION);
	ck_ev(see(REQ(.method = "ACK", .branch = "z9hG4bK1", .to_tag = "b"), T0 + MS(610), 0),
	      SIP_TXN_EV_ACK_NON2XX);
	ck_assert_uint_eq(inv->ack_count, 2);
	ck_assert_uint_eq(inv->request_count, 1);
	ck_assert_uint_eq(sip_txn_table_count(tab), 1);
}
END_TEST

START_TEST(test_sip_txn_links_cancel_to_its_invite)
{
	struct sip_txn *inv;
	struct sip_txn *can;

	see(REQ(.method = "INVITE", .branch = "z9hG4bK1"), T0, 0);
	inv = last_txn;
	see(RESP(.status = 180, .cseq_method = "INVITE", .branch = "z9hG4bK1", .to_tag = "b"),
	    T0 + MS(100), 0);
	ck_ev(see(REQ(.method = "CANCEL", .branch = "z9hG4bK1"), T0 + MS(3000), 0),
	      SIP_TXN_EV_CANCEL);
	can = last_txn;
	ck_assert_ptr_ne(can, inv);
	ck_assert_int_eq(can->method, SIP_METHOD_CANCEL);
	ck_assert_int_eq(can->state, SIP_TXN_ST_TRYING);
	ck_assert_ptr_eq(can->cancel, inv);
	ck_assert_ptr_eq(inv->cancel, can);
	ck_ev(see(REQ(.method = "CANCEL", .branch = "z9hG4bK1"), T0 + MS(3500), 0),
	      SIP_TXN_EV_REQUEST_RETRANSMISSION);
	ck_assert_ptr_eq(last_txn, can);

	ck_ev(see(RESP(.status = 200, .cseq_method = "CANCEL", .branch = "z9hG4bK1", .to_tag = "b"),
		  T0 + MS(3010), 0),
	      SIP_TXN_EV_FINAL);
	ck_assert_ptr_eq(last_txn, can);
	ck_assert_int_eq(can->state, SIP_TXN_ST_COMPLETED);
	ck_ev(see(RESP(.status = 487, .cseq_method = "INVITE", .branch = "z9hG4bK1", .to_tag = "b"),
		  T0 + MS(3020), 0),
	      SIP_TXN_EV_FINAL);
	ck_assert_ptr_eq(last_txn, inv);
	ck_assert_int_eq(inv->final_status, 487);
	ck_ev(see(REQ(.method = "ACK", .branch = "z9hG4bK1", .to_tag = "b"), T0 + MS(3030), 0),
	      SIP_TXN_EV_ACK_NON2XX);
	ck_assert_ptr_eq(last_txn, inv);

	/* A CANCEL for an INVITE never seen is still a CANCEL transaction, unlinked. */
	ck_ev(see(REQ(.method = "CANCEL", .branch = "z9hG4bK9"), T0 + MS(4000), 0),
	      SIP_TXN_EV_CANCEL);
	ck_assert_ptr_null(last_txn->cancel);
}
END_TEST

START_TEST(test_sip_txn_same_branch_on_two_hops_is_not_a_retransmission)
{
	struct sip_txn *a;
	struct sip_txn *b;

	ck_ev(see(REQ(.method = "INVITE", .branch = "z9hG4bK1"), T0, 2), SIP_TXN_EV_NEW_REQUEST);
	a = last_txn;
	ck_ev(see(REQ(.method = "INVITE", .branch = "z9hG4bK1"), T0 + MS(1), 4),
	      SIP_TXN_EV_NEW_REQUEST);
	b = last_txn;
	ck_assert_ptr_ne(a, b);
	/* The response travels the other way: same path, direction bit set. */
	ck_ev(see(RESP(.status = 100, .cseq_method = "INVITE", .branch = "z9hG4bK1"), T0 + MS(2),
		  2 | SIP_TXN_HOP_DIR),
	      SIP_TXN_EV_PROVISIONAL);
	ck_assert_ptr_eq(last_txn, a);
	ck_ev(see(RESP(.status = 100, .cseq_method = "INVITE", .branch = "z9hG4bK1"), T0 + MS(3),
		  4 | SIP_TXN_HOP_DIR),
	      SIP_TXN_EV_PROVISIONAL);
	ck_assert_ptr_eq(last_txn, b);
	ck_assert_uint_eq(a->request_count, 1);
	ck_assert_uint_eq(b->request_count, 1);
	ck_assert_uint_eq(a->response_retransmission_count, 0);
	ck_assert_uint_eq(b->response_retransmission_count, 0);
}
END_TEST

START_TEST(test_sip_txn_method_and_sent_by_are_part_of_the_key)
{
	struct sip_txn *inv;

	see(REQ(.method = "INVITE", .branch = "z9hG4bK1"), T0, 0);
	inv = last_txn;
	/* Same branch from another sent-by: another transaction (§17.2.3). */
	ck_ev(see(REQ(.method = "INVITE", .branch = "z9hG4bK1", .via = "192.0.2.7"), T0 + MS(1), 0),
	      SIP_TXN_EV_NEW_REQUEST);
	ck_assert_ptr_ne(last_txn, inv);
	/* Sent-by host compares without case ... */
	ck_sent_by_same("z9hG4bK5", "Host.Example:5060", "host.example:5060", T0 + MS(2));
	/* ... whatever its length (the key is hashed eight bytes at a time) and next to the
	 * bytes around A-Z ('@', '[', '`', '{') that lowering leaves alone */
	ck_sent_by_same("z9hG4bK7", "[2001:DB8::AbCd:Ef]:5060", "[2001:db8::aBcD:eF]:5060",
			T0 + MS(2));
	ck_sent_by_same("z9hG4bK8", "a@Z[`{.EXAMPLE.ORG", "A@z[`{.example.org", T0 + MS(2));
	/* An unknown method matches by name. */
	ck_ev(see(REQ(.method = "FOO", .branch = "z9hG4bK6"), T0 + MS(4), 0),
	      SIP_TXN_EV_NEW_REQUEST);
	ck_ev(see(REQ(.method = "BAR", .branch = "z9hG4bK6"), T0 + MS(5), 0),
	      SIP_TXN_EV_NEW_REQUEST);
	ck_ev(see(RESP(.status = 200, .cseq_method = "FOO", .branch = "z9hG4bK6"), T0 + MS(6), 0),
	      SIP_TXN_EV_FINAL);
	ck_assert(sn_slice_eq_str(last_txn->method_name, "FOO"));
	ck_assert_int_eq(last_txn->state, SIP_TXN_ST_COMPLETED);
}
END_TEST

/* ---- RFC 2543 -------------------------------------------------------------------------- */

START_TEST(test_sip_txn_rfc2543_fallback_matches_without_cookie)
{
	struct sip_txn *inv;

	ck_ev(see(REQ(.method = "INVITE", .cseq = 5), T0, 0), SIP_TXN_EV_NEW_REQUEST);
	inv = last_txn;
	ck_assert(inv->rfc2543);
	ck_ev(see(REQ(.method = "INVITE", .cseq = 5), T0 + MS(500), 0),
	      SIP_TXN_EV_REQUEST_RETRANSMISSION);
	/* Response: Call-ID, CSeq, From tag, top Via (with received= added by the server). */
	ck_ev(see(RESP(.status = 180, .cseq_method = "INVITE", .cseq = 5, .to_tag = "x"),
		  T0 + MS(600), 0),
	      SIP_TXN_EV_PROVISIONAL);
	ck_assert_ptr_eq(last_txn, inv);
	ck_ev(see(RESP(.status = 404, .cseq_method = "INVITE", .cseq = 5, .to_tag = "x"),
		  T0 + MS(700), 0),
	      SIP_TXN_EV_FINAL);
	ck_assert_ptr_eq(last_txn, inv);
	/* ACK: same fields, To tag of the response. */
	ck_ev(see(REQ(.method = "ACK", .cseq = 5, .to_tag = "x"), T0 + MS(710), 0),
	      SIP_TXN_EV_ACK_NON2XX);
	ck_assert_ptr_eq(last_txn, inv);
	/* An ACK with another To tag is not for this response. */
	ck_ev(see(REQ(.method = "ACK", .cseq = 5, .to_tag = "y"), T0 + MS(720), 0),
	      SIP_TXN_EV_ACK_2XX);

	/* Another CSeq, another Request-URI, another From tag: other transactions. */
	ck_ev(see(REQ(.method = "INVITE", .cseq = 6), T0 + MS(800), 0), SIP_TXN_EV_NEW_REQUEST);
	ck_assert_ptr_ne(last_txn, inv);
	ck_ev(see(REQ(.method = "INVITE", .cseq = 5, .ruri = "sip:carol@192.0.2.3"), T0 + MS(900),
		  0),
	      SIP_TXN_EV_NEW_REQUEST);
	ck_ev(see(REQ(.method = "INVITE", .cseq = 5, .from_tag = "other"), T0 + MS(950), 0),
	      SIP_TXN_EV_NEW_REQUEST);
	/* A branch without the magic cookie is RFC 2543 too. */
	ck_ev(see(REQ(.method = "BYE", .cseq = 7, .branch = "1234", .to_tag = "x"), T0 + MS(1000),
		  0),
	      SIP_TXN_EV_NEW_REQUEST);
	ck_assert(last_txn->rfc2543);
	ck_ev(see(RESP(.status = 200, .cseq_method = "BYE", .cseq = 7, .branch = "1234",
		       .to_tag = "x"),
		  T0 + MS(1100), 0),
	      SIP_TXN_EV_FINAL);
	ck_assert_int_eq(last_txn->method, SIP_METHOD_BYE);
}
END_TEST

START_TEST(test_sip_txn_rfc2543_cancel_finds_its_invite)
{
	struct sip_txn *inv;

	see(REQ(.method = "INVITE", .cseq = 5), T0, 0);
	inv = last_txn;
	ck_ev(see(REQ(.method = "CANCEL", .cseq = 5), T0 + MS(100), 0), SIP_TXN_EV_CANCEL);
	ck_assert_ptr_eq(last_txn->cancel, inv);
}
END_TEST

/* ---- stray ----------------------------------------------------------------------------- */

START_TEST(test_sip_txn_reports_stray_response_once)
{
	struct sip_txn *x;

	ck_ev(see(RESP(.status = 200, .cseq_method = "BYE", .cseq = 3, .branch = "z9hG4bKmid",
		       .to_tag = "b"),
		  T0, 0),
	      SIP_TXN_EV_STRAY_RESPONSE);
	x = last_txn;
	ck_assert_ptr_nonnull(x);
	ck_assert(x->orphan);
	ck_assert_uint_eq(x->request_count, 0);
	ck_assert_int_eq(x->state, SIP_TXN_ST_COMPLETED);
	ck_ev(see(RESP(.status = 200, .cseq_method = "BYE", .cseq = 3, .branch = "z9hG4bKmid",
		       .to_tag = "b"),
		  T0 + MS(500), 0),
	      SIP_TXN_EV_RESPONSE_RETRANSMISSION);
	ck_assert_ptr_eq(last_txn, x);
	/* Response to an INVITE whose transaction is unknown: stray, then normal events. */
	ck_ev(see(RESP(.status = 180, .cseq_method = "INVITE", .branch = "z9hG4bKmid2",
		       .to_tag = "b"),
		  T0 + MS(600), 0),
	      SIP_TXN_EV_STRAY_RESPONSE);
	ck_assert_int_eq(last_txn->state, SIP_TXN_ST_PROCEEDING);
	ck_ev(see(RESP(.status = 200, .cseq_method = "INVITE", .branch = "z9hG4bKmid2",
		       .to_tag = "b"),
		  T0 + MS(700), 0),
	      SIP_TXN_EV_FINAL);
	ck_assert_int_eq(last_txn->state, SIP_TXN_ST_TERMINATED);
}
END_TEST

/* ---- limits ---------------------------------------------------------------------------- */

START_TEST(test_sip_txn_table_bound_drops_least_recently_used)
{
	struct sip_txn_table_cfg cfg = {.capacity = 2, .on_free = on_free};
	struct sip_txn *first;

	sip_txn_table_free(tab);
	freed = 0;
	tab = sip_txn_table_new(&cfg);

	see(REQ(.method = "INVITE", .branch = "z9hG4bKa"), T0, 0);
	first = last_txn;
	see(REQ(.method = "INVITE", .branch = "z9hG4bKb"), T0 + MS(1), 0);
	/* Touch the first: the second becomes least recently used. */
	ck_ev(see(REQ(.method = "INVITE", .branch = "z9hG4bKa"), T0 + MS(2), 0),
	      SIP_TXN_EV_REQUEST_RETRANSMISSION);
	see(REQ(.method = "INVITE", .branch = "z9hG4bKc"), T0 + MS(3), 0);
	ck_assert_uint_eq(sip_txn_table_count(tab), 2);
	ck_assert_uint_eq(sip_txn_table_evicted_count(tab), 1);
	ck_assert_uint_eq(freed, 1);
	ck_ev(see(RESP(.status = 100, .cseq_method = "INVITE", .branch = "z9hG4bKa"), T0 + MS(4),
		  0),
	      SIP_TXN_EV_PROVISIONAL);
	ck_assert_ptr_eq(last_txn, first);
	/* b was dropped; its response is a stray, which itself evicts c (pending, LRU). */
	ck_ev(see(RESP(.status = 100, .cseq_method = "INVITE", .branch = "z9hG4bKb"), T0 + MS(5),
		  0),
	      SIP_TXN_EV_STRAY_RESPONSE);
	ck_assert_uint_eq(sip_txn_table_count(tab), 2);

	/* Finished transactions go before pending ones, whatever their age. */
	ck_ev(see(RESP(.status = 200, .cseq_method = "INVITE", .branch = "z9hG4bKb"), T0 + MS(6),
		  0),
	      SIP_TXN_EV_FINAL);
	ck_ev(see(REQ(.method = "INVITE", .branch = "z9hG4bKd"), T0 + MS(7), 0),
	      SIP_TXN_EV_NEW_REQUEST);
	ck_ev(see(RESP(.status = 100, .cseq_method = "INVITE", .branch = "z9hG4bKa"), T0 + MS(8),
		  0),
	      SIP_TXN_EV_RESPONSE_RETRANSMISSION);
	ck_assert_ptr_eq(last_txn, first);
	ck_assert_uint_eq(freed, 3);
}
END_TEST

START_TEST(test_sip_txn_table_expires_idle_transactions)
{
	struct sip_txn_table_cfg cfg = {
		.capacity = 16, .linger_ns = MS(1000), .pending_ns = MS(5000), .on_free = on_free};

	sip_txn_table_free(tab);
	freed = 0;
	tab = sip_txn_table_new(&cfg);

	see(REQ(.method = "INVITE", .branch = "z9hG4bKa"), T0, 0);
	see(RESP(.status = 486, .cseq_method = "INVITE", .branch = "z9hG4bKa", .to_tag = "x"),
	    T0 + MS(10), 0);
	see(REQ(.method = "INVITE", .branch = "z9hG4bKb"), T0 + MS(20), 0);
	ck_assert_uint_eq(sip_txn_table_count(tab), 2);
	/* 2 s later: the finished one is gone, the pending one stays. */
	see(REQ(.method = "OPTIONS", .branch = "z9hG4bKc"), T0 + MS(2020), 0);
	ck_assert_uint_eq(sip_txn_table_count(tab), 2);
	ck_assert_uint_eq(freed, 1);
	ck_ev(see(REQ(.method = "ACK", .branch = "z9hG4bKa", .to_tag = "x"), T0 + MS(2030), 0),
	      SIP_TXN_EV_ACK_2XX);
	ck_assert_uint_eq(sip_txn_table_expire(tab, T0 + MS(10000)), 2);
	ck_assert_uint_eq(sip_txn_table_count(tab), 0);
	ck_assert_uint_eq(sip_txn_table_evicted_count(tab), 0);
}
END_TEST

START_TEST(test_sip_txn_drop_clears_cancel_link)
{
	struct sip_txn_table_cfg cfg = {.capacity = 2};
	struct sip_txn *can;

	sip_txn_table_free(tab);
	tab = sip_txn_table_new(&cfg);
	see(REQ(.method = "INVITE", .branch = "z9hG4bKa"), T0, 0);
	see(REQ(.method = "CANCEL", .branch = "z9hG4bKa"), T0 + MS(1), 0);
	can = last_txn;
	ck_assert_ptr_nonnull(can->cancel);
	see(REQ(.method = "OPTIONS", .branch = "z9hG4bKo"), T0 + MS(2), 0);
	/* INVITE was the LRU one and went; the CANCEL no longer points at it. */
	ck_assert_ptr_null(can->cancel);
}
END_TEST

static Suite *sip_txn_suite(void)
{
	Suite *s = suite_create("sip_txn");
	TCase *tc;

	tc = tcase_create("converter");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_sip_txn_msg_from_takes_top_via_and_cseq_method);
	tcase_add_test(tc, test_sip_txn_rejects_bad_status);
	suite_add_tcase(s, tc);

	tc = tcase_create("invite_flow");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_sip_txn_invite_flow_with_ack_for_2xx);
	tcase_add_test(tc, test_sip_txn_counts_invite_retransmissions_after_provisional);
	tcase_add_test(tc, test_sip_txn_counts_200_retransmissions);
	tcase_add_test(tc, test_sip_txn_absorbs_ack_for_non2xx);
	tcase_add_test(tc, test_sip_txn_links_cancel_to_its_invite);
	suite_add_tcase(s, tc);

	tc = tcase_create("keys");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_sip_txn_same_branch_on_two_hops_is_not_a_retransmission);
	tcase_add_test(tc, test_sip_txn_method_and_sent_by_are_part_of_the_key);
	suite_add_tcase(s, tc);

	tc = tcase_create("rfc2543");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_sip_txn_rfc2543_fallback_matches_without_cookie);
	tcase_add_test(tc, test_sip_txn_rfc2543_cancel_finds_its_invite);
	suite_add_tcase(s, tc);

	tc = tcase_create("stray");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_sip_txn_reports_stray_response_once);
	suite_add_tcase(s, tc);

	tc = tcase_create("limits");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_sip_txn_table_bound_drops_least_recently_used);
	tcase_add_test(tc, test_sip_txn_table_expires_idle_transactions);
	tcase_add_test(tc, test_sip_txn_drop_clears_cancel_link);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(sip_txn_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
