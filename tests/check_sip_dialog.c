/*
 * check_sip_dialog.c - INVITE dialogs and call outcomes: completed calls and who hung up,
 * cancel, busy, rejections, diversion, failures and timeout, auth retries, forking,
 * re-INVITEs, captures that stop early or start mid-call, several hops, and retransmissions.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "sipnab/sip_dialog.h"
#include "sipnab/sip_msg.h"
#include "sipnab/sip_txn.h"
#include "sipnab/sn_arena.h"

#define MS(x) (INT64_C(1000000) * (x))
#define T0    ((int64_t)1700000000 * 1000 * 1000 * 1000)

static struct sn_arena arena;
static struct sip_txn_table *tab;
static struct sip_dialog_set *set;

static void setup(void)
{
	struct sip_txn_table_cfg cfg = {.capacity = 256};

	sn_arena_init(&arena, 0);
	tab = sip_txn_table_new(&cfg);
	set = sip_dialog_set_new(sn_slice_make("call-1@192.0.2.1", 16));
}

static void teardown(void)
{
	sip_dialog_set_free(set);
	sip_txn_table_free(tab);
	sn_arena_cleanup(&arena);
}

#include "sip_test_msg.h"

static struct sip_txn_msg build(const struct spec *sp, int64_t ts, uint32_t hop)
{
	return sip_test_build(&arena, sp, ts, hop);
}

#define REQ(...)  (&(struct spec){__VA_ARGS__})
#define RESP(...) (&(struct spec){__VA_ARGS__})

/* Requests and responses of the usual call; the callee's requests use CALLEE(). */
#define INV(br, cs) REQ(.method = "INVITE", .branch = (br), .cseq = (cs))
#define R_INV(st, br, cs, tag) \
	RESP(.status = (st), .cseq_method = "INVITE", .branch = (br), .cseq = (cs), .to_tag = (tag))
#define ACK(br, cs, tag) REQ(.method = "ACK", .branch = (br), .cseq = (cs), .to_tag = (tag))
#define BYE(br, cs, tag) REQ(.method = "BYE", .branch = (br), .cseq = (cs), .to_tag = (tag))
#define R_BYE(st, br, cs, tag) \
	RESP(.status = (st), .cseq_method = "BYE", .branch = (br), .cseq = (cs), .to_tag = (tag))
#define CALLEE(meth, br, cs, tag)                                                    \
	REQ(.method = (meth), .branch = (br), .cseq = (cs), .via = "192.0.2.2:5060", \
	    .from_tag = (tag), .to_tag = "alice1")
#define R_CALLEE(st, meth, br, cs, tag)                                           \
	RESP(.status = (st), .cseq_method = (meth), .branch = (br), .cseq = (cs), \
	     .via = "192.0.2.2:5060", .from_tag = (tag), .to_tag = "alice1")

/* Observe one message on @p hop through the table and the set; return the txn event. */
static enum sip_txn_event feed_hop(const struct spec *sp, int64_t ts, uint32_t hop)
{
	struct sip_txn_msg m = build(sp, ts, hop);
	struct sip_txn *x;
	enum sip_txn_event ev;

	ck_assert_int_eq(sip_txn_table_observe(tab, &m, &x, &ev), SN_OK);
	ck_assert_int_eq(sip_dialog_set_observe(set, &m, ev), SN_OK);
	return ev;
}

static enum sip_txn_event feed(const struct spec *sp, int64_t ts)
{
	return feed_hop(sp, ts, 0);
}

static struct sip_dialog_summary sum(int64_t now_ns)
{
	struct sip_dialog_summary s;

	sip_dialog_set_summary(set, now_ns, &s);
	return s;
}

#define ck_state(want)                                                                             \
	do {                                                                                       \
		enum sip_dialog_call_state got_ = sum(0).state;                                    \
		ck_assert_msg(got_ == (want), "call state %s, expected %s",                        \
			      sip_dialog_call_state_name(got_), sip_dialog_call_state_name(want)); \
	} while (0)

static const struct sip_dialog *dlg(const char *tag)
{
	const struct sip_dialog *d = sip_dialog_set_find(set, sn_slice_make(tag, strlen(tag)));

	ck_assert_msg(d != NULL, "no dialog with callee tag %s", tag);
	return d;
}

/* INVITE / 100 / 180 / 200 / ACK from T0 to T0 + 2.01 s; callee tag "b". */
static void answered_call(void)
{
	feed(INV("z9hG4bK1", 1), T0);
	ck_state(SIP_DIALOG_CALL_SETUP);
	feed(R_INV(100, "z9hG4bK1", 1, NULL), T0 + MS(10));
	ck_state(SIP_DIALOG_CALL_SETUP);
	feed(R_INV(180, "z9hG4bK1", 1, "b"), T0 + MS(100));
	ck_state(SIP_DIALOG_CALL_RINGING);
	ck_assert_int_eq(dlg("b")->state, SIP_DIALOG_ST_EARLY);
	feed(R_INV(200, "z9hG4bK1", 1, "b"), T0 + MS(2000));
	ck_state(SIP_DIALOG_CALL_IN_CALL);
	ck_assert_int_eq(feed(ACK("z9hG4bK2", 1, "b"), T0 + MS(2010)), SIP_TXN_EV_ACK_2XX);
	ck_state(SIP_DIALOG_CALL_IN_CALL);
}

/* ---- completed calls ------------------------------------------------------------------- */

START_TEST(test_sip_dialog_completed_when_caller_hangs_up)
{
	struct sip_dialog_summary s;
	const struct sip_dialog *d;

	answered_call();
	feed(BYE("z9hG4bK3", 2, "b"), T0 + MS(60000));
	feed(R_BYE(200, "z9hG4bK3", 2, "b"), T0 + MS(60010));
	s = sum(0);
	ck_assert_int_eq(s.state, SIP_DIALOG_CALL_COMPLETED);
	ck_assert(s.invite_ns == T0);
	ck_assert(s.first_provisional_ns == T0 + MS(10));
	ck_assert(s.first_18x_ns == T0 + MS(100));
	ck_assert(s.answer_ns == T0 + MS(2000));
	ck_assert(s.end_ns == T0 + MS(60000));
	ck_assert_int_eq(s.final_status, 200);
	ck_assert_int_eq(s.hangup_by, SIP_DIALOG_PARTY_CALLER);
	ck_assert(!s.cancelled && !s.partial && !s.truncated && !s.timed_out && s.has_invite);
	ck_assert_uint_eq(s.dialog_count, 1);
	ck_assert_uint_eq(s.confirmed_count, 1);
	ck_assert_uint_eq(s.attempt_count, 1);
	ck_assert_uint_eq(s.auth_retry_count, 0);

	d = sip_dialog_set_dialog(set, 0);
	ck_assert_ptr_eq(d, dlg("b"));
	ck_assert_ptr_null(sip_dialog_set_dialog(set, 1));
	ck_assert_int_eq(d->state, SIP_DIALOG_ST_TERMINATED);
	ck_assert_int_eq(d->terminated_by, SIP_DIALOG_PARTY_CALLER);
	ck_assert_int_eq(d->end, SIP_DIALOG_END_BYE);
	ck_assert(d->created_ns == T0 + MS(100));
	ck_assert(d->confirmed_ns == T0 + MS(2000));
	ck_assert(d->terminated_ns == T0 + MS(60000));
	ck_assert(sn_slice_eq_str(sip_dialog_set_caller_tag(set), "alice1"));
}
END_TEST

START_TEST(test_sip_dialog_completed_when_callee_hangs_up_without_bye_response)
{
	struct sip_dialog_summary s;

	answered_call();
	feed(CALLEE("BYE", "z9hG4bKcb", 100, "b"), T0 + MS(30000));
	s = sum(0);
	ck_assert_int_eq(s.state, SIP_DIALOG_CALL_COMPLETED);
	ck_assert_int_eq(s.hangup_by, SIP_DIALOG_PARTY_CALLEE);
	ck_assert(s.end_ns == T0 + MS(30000));
	ck_assert_int_eq(dlg("b")->terminated_by, SIP_DIALOG_PARTY_CALLEE);
	/* Its 200 arrives later: nothing changes. */
	feed(R_CALLEE(200, "BYE", "z9hG4bKcb", 100, "b"), T0 + MS(30010));
	ck_assert(sum(0).end_ns == T0 + MS(30000));
}
END_TEST

/* ---- unanswered calls ------------------------------------------------------------------ */

START_TEST(test_sip_dialog_cancelled_by_cancel_and_487)
{
	struct sip_dialog_summary s;
	const struct sip_dialog *d;

	feed(INV("z9hG4bK1", 1), T0);
	feed(R_INV(100, "z9hG4bK1", 1, NULL), T0 + MS(10));
	feed(R_INV(180, "z9hG4bK1", 1, "b"), T0 + MS(100));
	ck_assert_int_eq(feed(REQ(.method = "CANCEL", .branch = "z9hG4bK1"), T0 + MS(5000)),
			 SIP_TXN_EV_CANCEL);
	ck_state(SIP_DIALOG_CALL_CANCELLED);
	feed(RESP(.status = 200, .cseq_method = "CANCEL", .branch = "z9hG4bK1", .to_tag = "b"),
	     T0 + MS(5010));
	feed(R_INV(487, "z9hG4bK1", 1, "b"), T0 + MS(5020));
	ck_assert_int_eq(feed(ACK("z9hG4bK1", 1, "b"), T0 + MS(5030)), SIP_TXN_EV_ACK_NON2XX);
	s = sum(0);
	ck_assert_int_eq(s.state, SIP_DIALOG_CALL_CANCELLED);
	ck_assert(s.cancelled);
	ck_assert_int_eq(s.final_status, 487);
	ck_assert(s.end_ns == T0 + MS(5000));
	ck_assert(s.answer_ns == 0);
	ck_assert_int_eq(s.hangup_by, SIP_DIALOG_PARTY_NONE);
	d = dlg("b");
	ck_assert_int_eq(d->state, SIP_DIALOG_ST_TERMINATED);
	ck_assert_int_eq(d->end, SIP_DIALOG_END_CANCEL);
	ck_assert_int_eq(d->terminated_by, SIP_DIALOG_PARTY_CALLER);
	ck_assert_int_eq(d->end_status, 487);
	ck_assert_uint_eq(s.confirmed_count, 0);
}
END_TEST

/* sngrep-aaa.pcap: the caller CANCELs, the server never answers the CANCEL and ends the INVITE
 * with 408; the call was still cancelled by the caller, not a failure of the network. */
START_TEST(test_sip_dialog_cancel_answered_by_408_is_cancelled)
{
	struct sip_dialog_summary s;

	feed(INV("z9hG4bK1", 1), T0);
	feed(R_INV(100, "z9hG4bK1", 1, NULL), T0 + MS(2000));
	feed(REQ(.method = "CANCEL", .branch = "z9hG4bK1"), T0 + MS(34000));
	feed(R_INV(408, "z9hG4bK1", 1, "x"), T0 + MS(36000));
	s = sum(0);
	ck_assert_int_eq(s.state, SIP_DIALOG_CALL_CANCELLED);
	ck_assert(s.cancelled);
	ck_assert_int_eq(s.final_status, 408);
}
END_TEST

START_TEST(test_sip_dialog_answer_wins_a_cancel_race)
{
	struct sip_dialog_summary s;

	feed(INV("z9hG4bK1", 1), T0);
	feed(REQ(.method = "CANCEL", .branch = "z9hG4bK1"), T0 + MS(1000));
	feed(R_INV(200, "z9hG4bK1", 1, "b"), T0 + MS(1001));
	feed(RESP(.status = 200, .cseq_method = "CANCEL", .branch = "z9hG4bK1", .to_tag = "b"),
	     T0 + MS(1002));
	s = sum(0);
	ck_assert_int_eq(s.state, SIP_DIALOG_CALL_IN_CALL);
	ck_assert(!s.cancelled);
	ck_assert(s.end_ns == 0);
}
END_TEST

struct outcome {
	uint16_t status;
	enum sip_dialog_call_state state;
};

static const struct outcome outcomes[] = {
	{486, SIP_DIALOG_CALL_BUSY},	  {600, SIP_DIALOG_CALL_BUSY},
	{404, SIP_DIALOG_CALL_REJECTED},  {603, SIP_DIALOG_CALL_REJECTED},
	{480, SIP_DIALOG_CALL_REJECTED},  {407, SIP_DIALOG_CALL_REJECTED},
	{302, SIP_DIALOG_CALL_DIVERTED},  {301, SIP_DIALOG_CALL_DIVERTED},
	{503, SIP_DIALOG_CALL_FAILED},	  {500, SIP_DIALOG_CALL_FAILED},
	{408, SIP_DIALOG_CALL_FAILED},	  {604, SIP_DIALOG_CALL_FAILED},
	{487, SIP_DIALOG_CALL_CANCELLED},
};

START_TEST(test_sip_dialog_final_failure_decides_the_outcome)
{
	const struct outcome *o = &outcomes[_i];
	struct sip_dialog_summary s;

	feed(INV("z9hG4bK1", 1), T0);
	feed(R_INV(100, "z9hG4bK1", 1, NULL), T0 + MS(10));
	feed(R_INV(183, "z9hG4bK1", 1, "x"), T0 + MS(500));
	feed(R_INV(o->status, "z9hG4bK1", 1, "x"), T0 + MS(900));
	ck_assert_int_eq(feed(ACK("z9hG4bK1", 1, "x"), T0 + MS(910)), SIP_TXN_EV_ACK_NON2XX);
	s = sum(T0 + MS(600000));
	ck_assert_msg(s.state == o->state, "%u: call state %s, expected %s", o->status,
		      sip_dialog_call_state_name(s.state), sip_dialog_call_state_name(o->state));
	ck_assert_int_eq(s.final_status, o->status);
	ck_assert(s.end_ns == T0 + MS(900));
	ck_assert(s.answer_ns == 0);
	ck_assert(!s.timed_out);
	ck_assert_int_eq(s.cancelled, o->status == 487);
	ck_assert_int_eq(s.hangup_by, SIP_DIALOG_PARTY_NONE);
	ck_assert_int_eq(dlg("x")->state, SIP_DIALOG_ST_TERMINATED);
	ck_assert_int_eq(dlg("x")->end_status, o->status);
}
END_TEST

START_TEST(test_sip_dialog_no_response_times_out_after_64_t1)
{
	struct sip_dialog_summary s;

	feed(INV("z9hG4bK1", 1), T0);
	feed(INV("z9hG4bK1", 1), T0 + MS(500));
	ck_state(SIP_DIALOG_CALL_SETUP);
	s = sum(T0 + MS(10000));
	ck_assert_int_eq(s.state, SIP_DIALOG_CALL_SETUP);
	s = sum(T0 + MS(40000));
	ck_assert_int_eq(s.state, SIP_DIALOG_CALL_FAILED);
	ck_assert(s.timed_out);
	/* A 100 stops Timer B: no timeout then. */
	feed(R_INV(100, "z9hG4bK1", 1, NULL), T0 + MS(600));
	ck_assert_int_eq(sum(T0 + MS(40000)).state, SIP_DIALOG_CALL_SETUP);
}
END_TEST

/* ---- attempts -------------------------------------------------------------------------- */

START_TEST(test_sip_dialog_auth_retry_is_one_call)
{
	struct sip_dialog_summary s;

	feed(INV("z9hG4bK1", 1), T0);
	feed(R_INV(407, "z9hG4bK1", 1, "p"), T0 + MS(20));
	ck_state(SIP_DIALOG_CALL_REJECTED);
	feed(ACK("z9hG4bK1", 1, "p"), T0 + MS(25));
	ck_assert_int_eq(feed(INV("z9hG4bK2", 2), T0 + MS(40)), SIP_TXN_EV_NEW_REQUEST);
	ck_state(SIP_DIALOG_CALL_SETUP);
	/* The 407 retransmitted late changes nothing. */
	ck_assert_int_eq(feed(R_INV(407, "z9hG4bK1", 1, "p"), T0 + MS(45)),
			 SIP_TXN_EV_RESPONSE_RETRANSMISSION);
	ck_state(SIP_DIALOG_CALL_SETUP);
	feed(R_INV(100, "z9hG4bK2", 2, NULL), T0 + MS(50));
	feed(R_INV(180, "z9hG4bK2", 2, "b"), T0 + MS(100));
	feed(R_INV(200, "z9hG4bK2", 2, "b"), T0 + MS(3000));
	feed(ACK("z9hG4bK3", 2, "b"), T0 + MS(3010));
	feed(BYE("z9hG4bK4", 3, "b"), T0 + MS(9000));
	feed(R_BYE(200, "z9hG4bK4", 3, "b"), T0 + MS(9010));
	s = sum(0);
	ck_assert_int_eq(s.state, SIP_DIALOG_CALL_COMPLETED);
	ck_assert_uint_eq(s.auth_retry_count, 1);
	ck_assert_uint_eq(s.attempt_count, 2);
	ck_assert_int_eq(s.final_status, 200);
	ck_assert(s.invite_ns == T0);
	ck_assert(s.first_provisional_ns == T0 + MS(50));
	ck_assert(s.answer_ns == T0 + MS(3000));
	ck_assert(s.end_ns == T0 + MS(9000));
	ck_assert_uint_eq(s.dialog_count, 1);
}
END_TEST

START_TEST(test_sip_dialog_two_challenges_then_busy)
{
	struct sip_dialog_summary s;

	feed(INV("z9hG4bK1", 1), T0);
	feed(R_INV(401, "z9hG4bK1", 1, "p"), T0 + MS(20));
	feed(ACK("z9hG4bK1", 1, "p"), T0 + MS(25));
	feed(INV("z9hG4bK2", 2), T0 + MS(40));
	feed(R_INV(407, "z9hG4bK2", 2, "q"), T0 + MS(60));
	feed(ACK("z9hG4bK2", 2, "q"), T0 + MS(65));
	feed(INV("z9hG4bK3", 3), T0 + MS(80));
	feed(R_INV(486, "z9hG4bK3", 3, "b"), T0 + MS(900));
	feed(ACK("z9hG4bK3", 3, "b"), T0 + MS(905));
	s = sum(0);
	ck_assert_int_eq(s.state, SIP_DIALOG_CALL_BUSY);
	ck_assert_uint_eq(s.auth_retry_count, 2);
	ck_assert_uint_eq(s.attempt_count, 3);
	ck_assert_int_eq(s.final_status, 486);
	ck_assert(s.end_ns == T0 + MS(900));
}
END_TEST

/* ---- forking and re-INVITE ------------------------------------------------------------- */

START_TEST(test_sip_dialog_forking_gives_one_dialog_per_to_tag)
{
	struct sip_dialog_summary s;

	feed(INV("z9hG4bK1", 1), T0);
	feed(R_INV(180, "z9hG4bK1", 1, "b1"), T0 + MS(100));
	feed(R_INV(180, "z9hG4bK1", 1, "b2"), T0 + MS(120));
	feed(R_INV(200, "z9hG4bK1", 1, "b2"), T0 + MS(4000));
	feed(ACK("z9hG4bK2", 1, "b2"), T0 + MS(4010));
	s = sum(0);
	ck_assert_int_eq(s.state, SIP_DIALOG_CALL_IN_CALL);
	ck_assert_uint_eq(s.dialog_count, 2);
	ck_assert_uint_eq(s.confirmed_count, 1);
	ck_assert_int_eq(dlg("b1")->state, SIP_DIALOG_ST_EARLY);
	ck_assert_int_eq(dlg("b2")->state, SIP_DIALOG_ST_CONFIRMED);
	ck_assert(s.first_18x_ns == T0 + MS(100));

	feed(CALLEE("BYE", "z9hG4bKcb", 7, "b2"), T0 + MS(8000));
	s = sum(0);
	ck_assert_int_eq(s.state, SIP_DIALOG_CALL_COMPLETED);
	ck_assert_int_eq(s.hangup_by, SIP_DIALOG_PARTY_CALLEE);
	ck_assert_int_eq(dlg("b1")->state, SIP_DIALOG_ST_TERMINATED);
	ck_assert_int_eq(dlg("b1")->end, SIP_DIALOG_END_ABANDONED);
}
END_TEST

START_TEST(test_sip_dialog_failure_ends_every_early_dialog)
{
	feed(INV("z9hG4bK1", 1), T0);
	feed(R_INV(180, "z9hG4bK1", 1, "b1"), T0 + MS(100));
	feed(R_INV(183, "z9hG4bK1", 1, "b2"), T0 + MS(120));
	feed(R_INV(480, "z9hG4bK1", 1, "b2"), T0 + MS(30000));
	ck_state(SIP_DIALOG_CALL_REJECTED);
	ck_assert_int_eq(dlg("b1")->state, SIP_DIALOG_ST_TERMINATED);
	ck_assert_int_eq(dlg("b1")->end, SIP_DIALOG_END_FAILURE);
	ck_assert_int_eq(dlg("b2")->terminated_by, SIP_DIALOG_PARTY_CALLEE);
}
END_TEST

START_TEST(test_sip_dialog_serial_fork_failure_then_answer)
{
	feed(INV("z9hG4bK1", 1), T0);
	feed(R_INV(503, "z9hG4bK1", 1, "b1"), T0 + MS(100));
	ck_state(SIP_DIALOG_CALL_FAILED);
	feed(R_INV(200, "z9hG4bK1", 1, "b2"), T0 + MS(3000));
	ck_state(SIP_DIALOG_CALL_IN_CALL);
	ck_assert_int_eq(sum(0).final_status, 200);
	ck_assert(sum(0).end_ns == 0);
}
END_TEST

START_TEST(test_sip_dialog_reinvite_is_not_a_new_dialog)
{
	struct sip_dialog_summary s;

	answered_call();
	ck_assert_int_eq(
		feed(REQ(.method = "INVITE", .branch = "z9hG4bK5", .cseq = 2, .to_tag = "b"),
		     T0 + MS(10000)),
		SIP_TXN_EV_NEW_REQUEST);
	/* Its failure does not end the dialog or change the call's final status. */
	feed(R_INV(488, "z9hG4bK5", 2, "b"), T0 + MS(10100));
	feed(ACK("z9hG4bK5", 2, "b"), T0 + MS(10110));
	/* The callee re-INVITEs too, with its own CSeq space (here equal to the caller's 1). */
	feed(CALLEE("INVITE", "z9hG4bKc1", 1, "b"), T0 + MS(20000));
	feed(R_CALLEE(200, "INVITE", "z9hG4bKc1", 1, "b"), T0 + MS(20100));
	s = sum(0);
	ck_assert_int_eq(s.state, SIP_DIALOG_CALL_IN_CALL);
	ck_assert_uint_eq(s.dialog_count, 1);
	ck_assert_uint_eq(s.reinvite_count, 2);
	ck_assert_uint_eq(s.attempt_count, 1);
	ck_assert_int_eq(s.final_status, 200);
	ck_assert(s.answer_ns == T0 + MS(2000));
	ck_assert_uint_eq(dlg("b")->reinvite_count, 2);
	ck_assert_int_eq(dlg("b")->state, SIP_DIALOG_ST_CONFIRMED);
	feed(BYE("z9hG4bK6", 3, "b"), T0 + MS(30000));
	ck_state(SIP_DIALOG_CALL_COMPLETED);
}
END_TEST

/* ---- partial captures ------------------------------------------------------------------ */

START_TEST(test_sip_dialog_capture_stopping_early_shows_progress)
{
	feed(INV("z9hG4bK1", 1), T0);
	feed(R_INV(100, "z9hG4bK1", 1, NULL), T0 + MS(10));
	ck_state(SIP_DIALOG_CALL_SETUP);
	feed(R_INV(183, "z9hG4bK1", 1, "b"), T0 + MS(100));
	ck_state(SIP_DIALOG_CALL_RINGING);
	ck_assert_int_eq(sum(T0 + MS(600000)).state, SIP_DIALOG_CALL_RINGING);
	feed(R_INV(200, "z9hG4bK1", 1, "b"), T0 + MS(900));
	ck_state(SIP_DIALOG_CALL_IN_CALL);
	ck_assert_int_eq(sum(T0 + MS(600000)).state, SIP_DIALOG_CALL_IN_CALL);
	ck_assert(sum(0).end_ns == 0);
}
END_TEST

START_TEST(test_sip_dialog_capture_starting_mid_call)
{
	struct sip_dialog_summary s;

	ck_assert_int_eq(feed(BYE("z9hG4bK4", 3, "b"), T0), SIP_TXN_EV_NEW_REQUEST);
	feed(R_BYE(200, "z9hG4bK4", 3, "b"), T0 + MS(10));
	s = sum(0);
	ck_assert_int_eq(s.state, SIP_DIALOG_CALL_COMPLETED);
	ck_assert(s.partial);
	ck_assert_int_eq(s.hangup_by, SIP_DIALOG_PARTY_UNKNOWN);
	ck_assert(s.invite_ns == 0 && s.answer_ns == 0);
	ck_assert(s.end_ns == T0);
	ck_assert(dlg("b")->partial);
}
END_TEST

START_TEST(test_sip_dialog_stray_bye_response_ends_the_call)
{
	struct sip_dialog_summary s;

	/* Capture began after the 200 to the INVITE was sent... */
	ck_assert_int_eq(feed(R_INV(200, "z9hG4bK1", 1, "b"), T0), SIP_TXN_EV_STRAY_RESPONSE);
	ck_state(SIP_DIALOG_CALL_IN_CALL);
	/* ...and missed the BYE too. */
	ck_assert_int_eq(feed(R_CALLEE(200, "BYE", "z9hG4bKcb", 9, "b"), T0 + MS(5000)),
			 SIP_TXN_EV_STRAY_RESPONSE);
	s = sum(0);
	ck_assert_int_eq(s.state, SIP_DIALOG_CALL_COMPLETED);
	ck_assert_int_eq(s.hangup_by, SIP_DIALOG_PARTY_CALLEE);
	ck_assert(s.partial);
}
END_TEST

/* ---- hops and retransmissions ---------------------------------------------------------- */

START_TEST(test_sip_dialog_call_seen_on_two_hops_is_one_call)
{
	struct sip_dialog_summary s;

	/* UA 192.0.2.1 -> proxy 192.0.2.5 (hop 2) -> UA 192.0.2.2 (hop 4). */
	feed_hop(INV("z9hG4bK1", 1), T0, 2);
	feed_hop(R_INV(100, "z9hG4bK1", 1, NULL), T0 + MS(1), 3);
	feed_hop(REQ(.method = "INVITE", .branch = "z9hG4bKp1", .via = "192.0.2.5"), T0 + MS(2), 4);
	feed_hop(RESP(.status = 180, .cseq_method = "INVITE", .branch = "z9hG4bKp1",
		      .via = "192.0.2.5", .to_tag = "b"),
		 T0 + MS(100), 5);
	feed_hop(R_INV(180, "z9hG4bK1", 1, "b"), T0 + MS(101), 3);
	feed_hop(RESP(.status = 200, .cseq_method = "INVITE", .branch = "z9hG4bKp1",
		      .via = "192.0.2.5", .to_tag = "b"),
		 T0 + MS(2000), 5);
	feed_hop(R_INV(200, "z9hG4bK1", 1, "b"), T0 + MS(2001), 3);
	feed_hop(ACK("z9hG4bK2", 1, "b"), T0 + MS(2010), 2);
	feed_hop(REQ(.method = "ACK", .branch = "z9hG4bKp2", .via = "192.0.2.5", .to_tag = "b"),
		 T0 + MS(2011), 4);
	feed_hop(BYE("z9hG4bK3", 2, "b"), T0 + MS(7000), 2);
	feed_hop(REQ(.method = "BYE", .branch = "z9hG4bKp3", .via = "192.0.2.5", .cseq = 2,
		     .to_tag = "b"),
		 T0 + MS(7001), 4);
	s = sum(0);
	ck_assert_int_eq(s.state, SIP_DIALOG_CALL_COMPLETED);
	ck_assert_uint_eq(s.dialog_count, 1);
	ck_assert_uint_eq(s.attempt_count, 1);
	ck_assert(s.answer_ns == T0 + MS(2000));
	ck_assert(s.first_18x_ns == T0 + MS(100));
	ck_assert(s.end_ns == T0 + MS(7000));
	ck_assert_int_eq(s.hangup_by, SIP_DIALOG_PARTY_CALLER);
}
END_TEST

START_TEST(test_sip_dialog_retransmissions_do_not_change_the_outcome)
{
	struct sip_dialog_summary s;

	feed(INV("z9hG4bK1", 1), T0);
	feed(INV("z9hG4bK1", 1), T0 + MS(500));
	feed(R_INV(180, "z9hG4bK1", 1, "b"), T0 + MS(600));
	feed(INV("z9hG4bK1", 1), T0 + MS(1500));
	feed(R_INV(180, "z9hG4bK1", 1, "b"), T0 + MS(1510));
	feed(R_INV(200, "z9hG4bK1", 1, "b"), T0 + MS(2000));
	ck_assert_int_eq(feed(R_INV(200, "z9hG4bK1", 1, "b"), T0 + MS(2500)),
			 SIP_TXN_EV_RESPONSE_RETRANSMISSION);
	feed(ACK("z9hG4bK2", 1, "b"), T0 + MS(2510));
	feed(ACK("z9hG4bK2", 1, "b"), T0 + MS(2520));
	feed(BYE("z9hG4bK3", 2, "b"), T0 + MS(9000));
	ck_assert_int_eq(feed(BYE("z9hG4bK3", 2, "b"), T0 + MS(9500)),
			 SIP_TXN_EV_REQUEST_RETRANSMISSION);
	/* A 200 retransmitted after the BYE does not revive the dialog. */
	feed(R_INV(200, "z9hG4bK1", 1, "b"), T0 + MS(9600));
	feed(R_BYE(200, "z9hG4bK3", 2, "b"), T0 + MS(9700));
	feed(R_BYE(200, "z9hG4bK3", 2, "b"), T0 + MS(9800));
	s = sum(0);
	ck_assert_int_eq(s.state, SIP_DIALOG_CALL_COMPLETED);
	ck_assert(s.invite_ns == T0);
	ck_assert(s.first_18x_ns == T0 + MS(600));
	ck_assert(s.answer_ns == T0 + MS(2000));
	ck_assert(s.end_ns == T0 + MS(9000));
	ck_assert_uint_eq(s.attempt_count, 1);
	ck_assert_uint_eq(s.dialog_count, 1);
	ck_assert_int_eq(dlg("b")->state, SIP_DIALOG_ST_TERMINATED);
}
END_TEST

START_TEST(test_sip_dialog_ignores_other_call_ids)
{
	struct sip_txn_msg m = build(INV("z9hG4bK1", 1), T0, 0);

	m.call_id = sn_slice_make("other", 5);
	ck_assert_int_eq(sip_dialog_set_observe(set, &m, SIP_TXN_EV_NEW_REQUEST), SN_ENOTFOUND);
	ck_assert(!sum(0).has_invite);
	ck_assert_str_eq(sip_dialog_call_state_name(SIP_DIALOG_CALL_IN_CALL), "IN_CALL");
	ck_assert_str_eq(sip_dialog_state_name(SIP_DIALOG_ST_EARLY), "EARLY");
}
END_TEST

START_TEST(test_sip_dialog_too_many_forks_truncates)
{
	char tag[16];

	feed(INV("z9hG4bK1", 1), T0);
	for (unsigned i = 0; i < SIP_DIALOG_SET_MAX_DIALOGS + 2; i++) {
		struct sip_txn_msg m;
		struct sip_txn *x;
		enum sip_txn_event ev;
		enum sn_status want = i < SIP_DIALOG_SET_MAX_DIALOGS ? SN_OK : SN_ELIMIT;

		snprintf(tag, sizeof(tag), "f%u", i);
		m = build(R_INV(180, "z9hG4bK1", 1, tag), T0 + MS(100 + i), 0);
		ck_assert_int_eq(sip_txn_table_observe(tab, &m, &x, &ev), SN_OK);
		ck_assert_int_eq(sip_dialog_set_observe(set, &m, ev), want);
	}
	ck_assert(sum(0).truncated);
	ck_assert_uint_eq(sum(0).dialog_count, SIP_DIALOG_SET_MAX_DIALOGS);
	ck_state(SIP_DIALOG_CALL_RINGING);
}
END_TEST

static Suite *sip_dialog_suite(void)
{
	Suite *s = suite_create("sip_dialog");
	TCase *tc;

	tc = tcase_create("completed");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_sip_dialog_completed_when_caller_hangs_up);
	tcase_add_test(tc, test_sip_dialog_completed_when_callee_hangs_up_without_bye_response);
	suite_add_tcase(s, tc);

	tc = tcase_create("unanswered");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_sip_dialog_cancelled_by_cancel_and_487);
	tcase_add_test(tc, test_sip_dialog_cancel_answered_by_408_is_cancelled);
	tcase_add_test(tc, test_sip_dialog_answer_wins_a_cancel_race);
	tcase_add_loop_test(tc, test_sip_dialog_final_failure_decides_the_outcome, 0,
			    (int)SN_ARRAY_SIZE(outcomes));
	tcase_add_test(tc, test_sip_dialog_no_response_times_out_after_64_t1);
	suite_add_tcase(s, tc);

	tc = tcase_create("attempts");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_sip_dialog_auth_retry_is_one_call);
	tcase_add_test(tc, test_sip_dialog_two_challenges_then_busy);
	suite_add_tcase(s, tc);

	tc = tcase_create("forking");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_sip_dialog_forking_gives_one_dialog_per_to_tag);
	tcase_add_test(tc, test_sip_dialog_failure_ends_every_early_dialog);
	tcase_add_test(tc, test_sip_dialog_serial_fork_failure_then_answer);
	tcase_add_test(tc, test_sip_dialog_too_many_forks_truncates);
	suite_add_tcase(s, tc);

	tc = tcase_create("reinvite");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_sip_dialog_reinvite_is_not_a_new_dialog);
	suite_add_tcase(s, tc);

	tc = tcase_create("partial_capture");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_sip_dialog_capture_stopping_early_shows_progress);
	tcase_add_test(tc, test_sip_dialog_capture_starting_mid_call);
	tcase_add_test(tc, test_sip_dialog_stray_bye_response_ends_the_call);
	suite_add_tcase(s, tc);

	tc = tcase_create("observation");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_sip_dialog_call_seen_on_two_hops_is_one_call);
	tcase_add_test(tc, test_sip_dialog_retransmissions_do_not_change_the_outcome);
	tcase_add_test(tc, test_sip_dialog_ignores_other_call_ids);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(sip_dialog_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
