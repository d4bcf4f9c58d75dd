/*
 * check_sip_build.c - message builder: parse(serialize(x)) == x, header edits, Content-Length
 * recomputation.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "sipnab/sip_build.h"
#include "sipnab/sip_msg.h"
#include "sipnab/sn_arena.h"

#define S(lit)	(const uint8_t *)(lit), (sizeof(lit) - 1)
#define SL(lit) sn_slice_make((lit), sizeof(lit) - 1)

static struct sn_arena arena;
static struct sip_build bld;
static struct sip_buf out;

static void setup(void)
{
	sn_arena_init(&arena, 0);
	sip_build_init(&bld, &arena);
	sip_buf_init(&out);
}

static void teardown(void)
{
	sip_buf_cleanup(&out);
	sip_build_cleanup(&bld);
	sn_arena_cleanup(&arena);
}

static bool slice_is(struct sn_slice s, const char *str)
{
	return s.len == strlen(str) && memcmp(s.ptr, str, s.len) == 0;
}

#define ck_slice(s, str)                                                                          \
	ck_assert_msg(slice_is((s), (str)), "expected \"%s\", got \"%.*s\"", (str), (int)(s).len, \
		      (const char *)(s).ptr)

static const char invite[] = "INVITE sip:bob@biloxi.example.com SIP/2.0\r\n"
			     "Via: SIP/2.0/UDP pc33.atlanta.example.com;branch=z9hG4bK776asdhds\r\n"
			     "Max-Forwards: 70\r\n"
			     "Route: <sip:p1.example.com;lr>\r\n"
			     "To: Bob <sip:bob@biloxi.example.com>\r\n"
			     "From: Alice <sip:alice@atlanta.example.com>;tag=1928301774\r\n"
			     "Call-ID: a84b4c76e66710\r\n"
			     "CSeq: 314159 INVITE\r\n"
			     "Contact: <sip:alice@pc33.atlanta.example.com>\r\n"
			     "Content-Type: application/sdp\r\n"
			     "Content-Length: 4\r\n"
			     "\r\n"
			     "v=0\n";

/* Compare every parsed field of two messages; Content-Length lines are compared by value. */
static void assert_same_msg(const struct sip_msg *a, const struct sip_msg *b, const char *what)
{
	ck_assert_msg(a->is_request == b->is_request, "%s: kind", what);
	ck_assert_msg(sn_slice_eq(a->method_name, b->method_name), "%s: method", what);
	ck_assert_msg(sn_slice_eq(a->ruri, b->ruri), "%s: ruri", what);
	ck_assert_msg(a->status_code == b->status_code, "%s: status", what);
	ck_assert_msg(sn_slice_eq(a->reason, b->reason), "%s: reason", what);
	ck_assert_msg(sn_slice_eq(a->call_id, b->call_id), "%s: call-id", what);
	ck_assert_msg(sn_slice_eq(a->from_tag, b->from_tag), "%s: from tag", what);
	ck_assert_msg(sn_slice_eq(a->to_tag, b->to_tag), "%s: to tag", what);
	ck_assert_msg(a->cseq == b->cseq, "%s: cseq", what);
	ck_assert_msg(sn_slice_eq(a->cseq_method_name, b->cseq_method_name), "%s: cseq m", what);
	ck_assert_msg(a->via_count == b->via_count, "%s: vias", what);
	ck_assert_msg(sn_slice_eq(a->via.branch, b->via.branch), "%s: branch", what);
	ck_assert_msg(a->max_forwards == b->max_forwards, "%s: max-forwards", what);
	ck_assert_msg(sn_slice_eq(a->body, b->body), "%s: body", what);
	ck_assert_msg((a->flags & SIP_MSG_F_INVALID) == (b->flags & SIP_MSG_F_INVALID),
		      "%s: flags 0x%x 0x%x", what, a->flags, b->flags);
	uint32_t j = 0;
	for (uint32_t i = 0; i < a->hdr_count; i++) {
		if (a->hdrs[i].id == SIP_HDR_CONTENT_LENGTH) {
			continue;
		}
		while (j < b->hdr_count && b->hdrs[j].id == SIP_HDR_CONTENT_LENGTH) {
			j++;
		}
		ck_assert_msg(j < b->hdr_count, "%s: header %u missing", what, i);
		ck_assert_msg(sn_slice_eq(a->hdrs[i].name, b->hdrs[j].name) &&
				      sn_slice_eq(a->hdrs[i].value, b->hdrs[j].value),
			      "%s: header %u differs", what, i);
		j++;
	}
	ck_assert_msg(b->has_content_length && b->content_length == b->body.len, "%s: clen", what);
}

static void round_trip(const uint8_t *p, size_t len, const char *what)
{
	struct sip_msg a;
	struct sip_msg b;

	ck_assert_msg(sip_msg_parse(&a, &arena, p, len) == SN_OK, "%s: parse", what);
	sip_build_from_msg(&bld, &a);
	out.len = 0;
	ck_assert_int_eq(sip_build_serialize(&bld, &out), SN_OK);
	ck_assert_msg(sip_msg_parse(&b, &arena, out.ptr, out.len) == SN_OK, "%s: reparse", what);
	(void)sip_msg_validate(&a, &arena);
	(void)sip_msg_validate(&b, &arena);
	assert_same_msg(&a, &b, what);
}

START_TEST(test_sip_build_round_trips_simple_messages)
{
	static const char ok[] =
		"SIP/2.0 200 OK\r\n"
		"v: SIP/2.0/UDP h;branch=z9hG4bKa, SIP/2.0/TCP g;branch=z9hG4bKb\r\n"
		"t: <sip:a@b>;tag=x\r\nf: <sip:c@d>;tag=y\r\ni: id\r\n"
		"CSeq: 1 INVITE\r\nSubject: folded\r\n value\r\n\r\n";
	round_trip(S(invite), "invite");
	round_trip(S(ok), "200");
}
END_TEST

START_TEST(test_sip_build_round_trips_rfc4475_valid_messages)
{
	static const char *const names[] = {
		"wsinv",    "intmeth",	"esc01",      "escnull", "esc02",    "lwsdisp",	 "longreq",
		"dblreq",   "semiuri",	"transports", "mpart01", "unreason", "noreason", "unkscm",
		"novelsc",  "unksm2",	"bext01",     "invut",	 "regaut01", "bcast",	 "zeromf",
		"cparam01", "cparam02", "regescrt",   "sdp01",	 "inv2543"};
	const char *dir = getenv("SIPNAB_CORPUS");
	static uint8_t buf[16384];

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		char path[512];
		FILE *f;
		size_t n;

		snprintf(path, sizeof(path), "%s/sip/rfc4475/%s.sip", dir && *dir ? dir : "corpus",
			 names[i]);
		f = fopen(path, "rb");
		ck_assert_msg(f != NULL, "%s", path);
		n = fread(buf, 1, sizeof(buf), f);
		fclose(f);
		round_trip(buf, n, names[i]);
	}
}
END_TEST

START_TEST(test_sip_build_applies_proxy_edits)
{
	struct sip_msg a;
	struct sip_msg b;
	struct sip_via *vias;
	size_t n;

	ck_assert_int_eq(sip_msg_parse(&a, &arena, S(invite)), SN_OK);
	sip_build_from_msg(&bld, &a);
	sip_build_hdr_prepend(&bld, "Via", SL("SIP/2.0/UDP proxy.example.com;branch=z9hG4bKp1"));
	ck_assert_int_eq(sip_build_max_forwards_dec(&bld), SN_OK);
	ck_assert_uint_eq(sip_build_hdr_remove(&bld, "Route"), 1);
	sip_build_hdr_replace(&bld, "m", SL("<sip:alice@192.0.2.9>"));
	sip_build_hdr_append(&bld, "X-Proxied", SL("yes"));
	sip_build_set_body(&bld, SL("text/plain"), SL("hello world"));
	ck_assert_int_eq(sip_build_serialize(&bld, &out), SN_OK);

	ck_assert_int_eq(sip_msg_parse(&b, &arena, out.ptr, out.len), SN_OK);
	ck_assert_uint_eq(b.via_count, 2);
	ck_slice(b.via.host, "proxy.example.com");
	ck_assert_int_eq(sip_msg_vias(&b, &arena, &vias, &n), SN_OK);
	ck_slice(vias[1].branch, "z9hG4bK776asdhds");
	ck_assert_int_eq(b.max_forwards, 69);
	ck_assert_ptr_null(sip_msg_hdr_find(&b, SIP_HDR_ROUTE));
	ck_slice(sip_msg_hdr_find(&b, SIP_HDR_CONTACT)->value, "<sip:alice@192.0.2.9>");
	ck_slice(sip_msg_hdr_find_name(&b, "X-Proxied")->value, "yes");
	ck_slice(b.content_type, "text/plain");
	ck_assert_uint_eq(b.content_length, 11);
	ck_slice(b.body, "hello world");
	ck_slice(b.hdrs[0].value, "SIP/2.0/UDP proxy.example.com;branch=z9hG4bKp1");
	ck_assert_int_eq(sip_msg_validate(&b, &arena), SN_OK);
	ck_assert_uint_eq(b.flags & SIP_MSG_F_INVALID, 0);
}
END_TEST

START_TEST(test_sip_build_refuses_to_decrement_zero_max_forwards)
{
	sip_build_request(&bld, SL("OPTIONS"), SL("sip:a@b"));
	ck_assert_int_eq(sip_build_max_forwards_dec(&bld), SN_ENOTFOUND);
	sip_build_hdr_append(&bld, "Max-Forwards", SL("0"));
	ck_assert_int_eq(sip_build_max_forwards_dec(&bld), SN_ELIMIT);
	sip_build_hdr_replace(&bld, "Max-Forwards", SL("x"));
	ck_assert_int_eq(sip_build_max_forwards_dec(&bld), SN_EPARSE);
	sip_build_hdr_replace(&bld, "Max-Forwards", SL("10"));
	ck_assert_int_eq(sip_build_max_forwards_dec(&bld), SN_OK);
	ck_slice(sip_build_hdr_get(&bld, "Max-Forwards"), "9");
}
END_TEST

START_TEST(test_sip_build_serializes_response_from_parts)
{
	static const char want[] = "SIP/2.0 486 Busy Here\r\n"
				   "Via: SIP/2.0/UDP h;branch=z9hG4bKx\r\n"
				   "Content-Length: 0\r\n\r\n";

	ck_assert_int_eq(sip_build_serialize(&bld, &out), SN_ESTATE);
	sip_build_response(&bld, 486, SL("Busy Here"));
	sip_build_hdr_append(&bld, "Via", SL("SIP/2.0/UDP h;branch=z9hG4bKx"));
	sip_build_hdr_append(&bld, "Content-Length", SL("99"));
	ck_assert_int_eq(sip_build_serialize(&bld, &out), SN_OK);
	ck_assert_uint_eq(out.len, sizeof(want) - 1);
	ck_assert(memcmp(out.ptr, want, out.len) == 0);
	ck_assert(sip_build_hdr_remove_first(&bld, "v"));
	ck_assert(!sip_build_hdr_remove_first(&bld, "Via"));
}
END_TEST

static Suite *sip_build_suite(void)
{
	Suite *s = suite_create("sip_build");
	TCase *tc;

	tc = tcase_create("round_trip");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_sip_build_round_trips_simple_messages);
	tcase_add_test(tc, test_sip_build_round_trips_rfc4475_valid_messages);
	suite_add_tcase(s, tc);
	tc = tcase_create("edits");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_sip_build_applies_proxy_edits);
	tcase_add_test(tc, test_sip_build_refuses_to_decrement_zero_max_forwards);
	suite_add_tcase(s, tc);
	tc = tcase_create("serialize");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_sip_build_serializes_response_from_parts);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(sip_build_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
