/*
 * check_sip_parse.c - SIP message parser: start lines, header index, folding, compact forms,
 * lists, typed accessors, validity flags, limits, truncation, stream framing and detection.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "sipnab/sip_msg.h"
#include "sipnab/sn_arena.h"

#define S(lit) (const uint8_t *)(lit), (sizeof(lit) - 1)

static struct sn_arena arena;
static struct sip_msg msg;

static void setup(void)
{
	sn_arena_init(&arena, 0);
}

static void teardown(void)
{
	sn_arena_cleanup(&arena);
}

static bool slice_is(struct sn_slice s, const char *str)
{
	return s.len == strlen(str) && memcmp(s.ptr, str, s.len) == 0;
}

#define ck_slice(s, str)                                                                          \
	ck_assert_msg(slice_is((s), (str)), "expected \"%s\", got \"%.*s\"", (str), (int)(s).len, \
		      (const char *)(s).ptr)

static const char invite[] =
	"INVITE sip:bob@biloxi.example.com SIP/2.0\r\n"
	"Via: SIP/2.0/UDP pc33.atlanta.example.com:5060;branch=z9hG4bK776asdhds;rport\r\n"
	"Max-Forwards: 70\r\n"
	"To: Bob <sip:bob@biloxi.example.com>\r\n"
	"From: \"Alice A.\" <sip:alice@atlanta.example.com>;tag=1928301774\r\n"
	"Call-ID: a84b4c76e66710@pc33.atlanta.example.com\r\n"
	"CSeq: 314159 INVITE\r\n"
	"Contact: <sip:alice@pc33.atlanta.example.com>\r\n"
	"User-Agent: sipnab-test/1.0\r\n"
	"Content-Type: application/sdp\r\n"
	"Content-Length: 4\r\n"
	"\r\n"
	"v=0\n";

static const char ringing[] =
	"SIP/2.0 180 Ringing\r\n"
	"Via: SIP/2.0/UDP server10.biloxi.example.com;branch=z9hG4bK4b43c2ff8.1;received=192.0.2.3,"
	" SIP/2.0/UDP pc33.atlanta.example.com;branch=z9hG4bK776asdhds;received=192.0.2.1\r\n"
	"To: Bob <sip:bob@biloxi.example.com>;tag=a6c85cf\r\n"
	"From: Alice <sip:alice@atlanta.example.com>;tag=1928301774\r\n"
	"Call-ID: a84b4c76e66710\r\n"
	"Contact: <sip:bob@192.0.2.4>\r\n"
	"CSeq: 314159 INVITE\r\n"
	"Content-Length: 0\r\n"
	"\r\n";

START_TEST(test_sip_parse_reads_request_line_and_core_headers)
{
	ck_assert_int_eq(sip_msg_parse(&msg, &arena, S(invite)), SN_OK);
	ck_assert(msg.is_request);
	ck_assert_int_eq(msg.method, SIP_METHOD_INVITE);
	ck_slice(msg.method_name, "INVITE");
	ck_slice(msg.ruri, "sip:bob@biloxi.example.com");
	ck_slice(msg.version, "SIP/2.0");
	ck_slice(msg.call_id, "a84b4c76e66710@pc33.atlanta.example.com");
	ck_slice(msg.from_tag, "1928301774");
	ck_assert_uint_eq(msg.to_tag.len, 0);
	ck_slice(msg.from_uri, "sip:alice@atlanta.example.com");
	ck_slice(msg.to_uri, "sip:bob@biloxi.example.com");
	ck_assert_uint_eq(msg.cseq, 314159);
	ck_assert_int_eq(msg.cseq_method, SIP_METHOD_INVITE);
	ck_assert_uint_eq(msg.via_count, 1);
	ck_slice(msg.via.transport, "UDP");
	ck_slice(msg.via.host, "pc33.atlanta.example.com");
	ck_assert(msg.via.has_port);
	ck_assert_uint_eq(msg.via.port, 5060);
	ck_slice(msg.via.branch, "z9hG4bK776asdhds");
	ck_assert(msg.via.has_rport);
	ck_assert_uint_eq(msg.via.rport.len, 0);
	ck_assert_int_eq(msg.max_forwards, 70);
	ck_assert(msg.has_content_length);
	ck_assert_uint_eq(msg.content_length, 4);
	ck_slice(msg.content_type, "application/sdp");
	ck_slice(msg.body, "v=0\n");
	ck_assert_uint_eq(msg.hdr_count, 10);
	ck_assert_uint_eq(msg.msg_len, sizeof(invite) - 1);
	ck_assert_int_eq(sip_msg_validate(&msg, &arena), SN_OK);
	ck_assert_uint_eq(msg.flags & SIP_MSG_F_INVALID, 0);
	ck_assert_ptr_null(sip_msg_invalid_reason(&msg));
	ck_slice(sip_msg_user_agent(&msg), "sipnab-test/1.0");
	ck_assert_str_eq(sip_method_name(msg.method), "INVITE");
}
END_TEST

START_TEST(test_sip_parse_reads_status_line)
{
	ck_assert_int_eq(sip_msg_parse(&msg, &arena, S(ringing)), SN_OK);
	ck_assert(!msg.is_request);
	ck_assert_uint_eq(msg.status_code, 180);
	ck_slice(msg.reason, "Ringing");
	ck_slice(msg.to_tag, "a6c85cf");
	ck_assert_uint_eq(msg.via_count, 2);
	ck_slice(msg.via.received, "192.0.2.3");
	ck_assert_uint_eq(msg.body.len, 0);
	ck_assert_int_eq(sip_msg_validate(&msg, &arena), SN_OK);
	ck_assert_uint_eq(msg.flags & SIP_MSG_F_INVALID, 0);
}
END_TEST

START_TEST(test_sip_parse_accepts_status_line_without_reason)
{
	ck_assert_int_eq(sip_msg_parse(&msg, &arena, S("SIP/2.0 100\r\nCall-ID: x\r\n\r\n")),
			 SN_OK);
	ck_assert_uint_eq(msg.status_code, 100);
	ck_assert_uint_eq(msg.reason.len, 0);
	ck_slice(msg.call_id, "x");
}
END_TEST

START_TEST(test_sip_parse_keeps_unknown_method_token)
{
	ck_assert_int_eq(sip_msg_parse(&msg, &arena,
				       S("FOO-BAR sip:a@b SIP/2.0\r\nCSeq: 2 FOO-BAR\r\n\r\n")),
			 SN_OK);
	ck_assert_int_eq(msg.method, SIP_METHOD_UNKNOWN);
	ck_slice(msg.method_name, "FOO-BAR");
	ck_assert_int_eq(msg.cseq_method, SIP_METHOD_UNKNOWN);
	ck_assert_int_eq(sip_msg_validate(&msg, &arena), SN_EPARSE); /* no Via, From ... */
	ck_assert_uint_eq(msg.flags & SIP_MSG_F_CSEQ_METHOD_MISMATCH, 0);
	ck_assert_str_eq(sip_method_name(SIP_METHOD_UNKNOWN), "UNKNOWN");
}
END_TEST

START_TEST(test_sip_parse_maps_every_method)
{
	for (int m = SIP_METHOD_INVITE; m < SIP_METHOD__COUNT; m++) {
		const char *n = sip_method_name((enum sip_method)m);
		ck_assert_int_eq(sip_method_from_slice(sn_slice_make(n, strlen(n))), m);
	}
	ck_assert_int_eq(sip_method_from_slice(sn_slice_make("invite", 6)), SIP_METHOD_UNKNOWN);
}
END_TEST

START_TEST(test_sip_parse_rejects_malformed_start_lines)
{
	static const char *const bad[] = {
		"INVITE  sip:a@b SIP/2.0\r\n\r\n",
		"INVITE sip:a@b  SIP/2.0\r\n\r\n",
		"INVITE sip:a@b SIP/2.0 \r\n\r\n",
		"INVITE sip:a@b HTTP/1.1\r\n\r\n",
		"SIP/2.0 1000 Big\r\n\r\n",
		"SIP/2.0 099 Small\r\n\r\n",
		"SIP/2.0 700 Big\r\n\r\n",
		"SIP/2.0 2x0 OK\r\n\r\n",
		"SIP/2.0\r\n\r\n",
		"INV<ITE sip:a@b SIP/2.0\r\n\r\n",
		"\x80\x08\x12\x34 rtp\r\n\r\n",
		"INVITE\r\n\r\n",
		"SIP/2.0 4294967301 big\r\n\r\n",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ck_assert_msg(sip_msg_parse(&msg, &arena, (const uint8_t *)bad[i],
					    strlen(bad[i])) == SN_EPARSE,
			      "case %zu", i);
	}
}
END_TEST

START_TEST(test_sip_parse_flags_unknown_version)
{
	ck_assert_int_eq(sip_msg_parse(&msg, &arena, S("OPTIONS sip:a@b SIP/7.0\r\n\r\n")), SN_OK);
	ck_assert_uint_eq(msg.flags & SIP_MSG_F_BAD_VERSION, 0); /* parse alone: not checked */
	ck_assert_int_eq(sip_msg_validate(&msg, &arena), SN_EPARSE);
	ck_assert(msg.flags & SIP_MSG_F_BAD_VERSION);
	ck_assert_str_eq(sip_msg_invalid_reason(&msg), "Version Not Supported");
}
END_TEST

START_TEST(test_sip_parse_unfolds_continuation_lines)
{
	static const char m[] = "OPTIONS sip:a@b SIP/2.0\r\n"
				"Subject: first\r\n  second\r\n\tthird\r\n"
				"Via: SIP/2.0/UDP h1;branch=z9hG4bK1,\r\n SIP/2.0/TCP h2:5070\r\n"
				"CSeq: 0009\r\n INVITE\r\n"
				"Call-ID: c\r\n\r\n";
	ck_assert_int_eq(sip_msg_parse(&msg, &arena, S(m)), SN_OK);
	ck_assert_uint_eq(msg.hdr_count, 4);
	ck_slice(msg.hdrs[0].value, "first\r\n  second\r\n\tthird");
	ck_assert_int_eq(msg.hdrs[0].id, SIP_HDR_SUBJECT);
	ck_assert_uint_eq(msg.via_count, 2);
	ck_assert_uint_eq(msg.cseq, 9);
	ck_slice(msg.cseq_method_name, "INVITE");
	ck_assert_int_eq(sip_msg_validate(&msg, &arena), SN_EPARSE);
	ck_assert(msg.flags & SIP_MSG_F_CSEQ_METHOD_MISMATCH);
	ck_slice(msg.call_id, "c");
}
END_TEST

START_TEST(test_sip_parse_maps_compact_forms)
{
	static const struct {
		char c;
		enum sip_hdr_id id;
	} map[] = {
		{'i', SIP_HDR_CALL_ID},
		{'m', SIP_HDR_CONTACT},
		{'f', SIP_HDR_FROM},
		{'t', SIP_HDR_TO},
		{'v', SIP_HDR_VIA},
		{'l', SIP_HDR_CONTENT_LENGTH},
		{'c', SIP_HDR_CONTENT_TYPE},
		{'k', SIP_HDR_SUPPORTED},
		{'s', SIP_HDR_SUBJECT},
		{'e', SIP_HDR_CONTENT_ENCODING},
		{'o', SIP_HDR_EVENT},
		{'u', SIP_HDR_ALLOW_EVENTS},
		{'r', SIP_HDR_REFER_TO},
		{'b', SIP_HDR_REFERRED_BY},
		{'x', SIP_HDR_SESSION_EXPIRES},
		{'a', SIP_HDR_ACCEPT_CONTACT},
		{'j', SIP_HDR_REJECT_CONTACT},
		{'d', SIP_HDR_REQUEST_DISPOSITION},
		{'y', SIP_HDR_IDENTITY},
		{'n', SIP_HDR_IDENTITY_INFO},
	};
	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++) {
		char up = (char)(map[i].c - 32);
		ck_assert_int_eq(sip_hdr_lookup(sn_slice_make(&map[i].c, 1)), map[i].id);
		ck_assert_int_eq(sip_hdr_lookup(sn_slice_make(&up, 1)), map[i].id);
	}
	ck_assert_int_eq(sip_hdr_lookup(sn_slice_make("q", 1)), SIP_HDR_OTHER);
	ck_assert_int_eq(sip_hdr_lookup(sn_slice_make("cALL-id", 7)), SIP_HDR_CALL_ID);
	ck_assert_int_eq(sip_hdr_lookup(sn_slice_make("X-Foo", 5)), SIP_HDR_OTHER);
	ck_assert_str_eq(sip_hdr_name(SIP_HDR_CALL_ID), "Call-ID");
}
END_TEST

START_TEST(test_sip_parse_looks_up_every_full_name_in_any_case)
{
	for (int id = SIP_HDR_OTHER + 1; id < SIP_HDR__COUNT; id++) {
		const char *name = sip_hdr_name((enum sip_hdr_id)id);
		char lower[32];
		char upper[32];
		char near[32];
		size_t n;

		ck_assert_ptr_nonnull(name);
		n = strlen(name);
		ck_assert_uint_lt(n, sizeof(lower));
		for (size_t i = 0; i < n; i++) {
			char c = name[i];
			lower[i] = (char)((c >= 'A' && c <= 'Z') ? c + 32 : c);
			upper[i] = (char)((c >= 'a' && c <= 'z') ? c - 32 : c);
		}
		memcpy(near, name, n);
		near[n - 1] = near[n - 1] == 'x' ? 'y' : 'x';
		ck_assert_int_eq(sip_hdr_lookup(sn_slice_make(name, n)), id);
		ck_assert_int_eq(sip_hdr_lookup(sn_slice_make(lower, n)), id);
		ck_assert_int_eq(sip_hdr_lookup(sn_slice_make(upper, n)), id);
		ck_assert_int_eq(sip_hdr_lookup(sn_slice_make(near, n)), SIP_HDR_OTHER);
		if (n > 2) { /* "T" is the compact To */
			ck_assert_int_eq(sip_hdr_lookup(sn_slice_make(name, n - 1)), SIP_HDR_OTHER);
		}
	}
	ck_assert_int_eq(sip_hdr_lookup(sn_slice_make("Call\rID", 7)), SIP_HDR_OTHER);
}
END_TEST

START_TEST(test_sip_parse_reads_compact_message)
{
	static const char m[] = "BYE sip:a@b SIP/2.0\r\n"
				"v: SIP/2.0/UDP h;branch=z9hG4bKx\r\n"
				"i: cid\r\n"
				"f: <sip:x@y>;tag=F\r\n"
				"t: <sip:a@b>;tag=T\r\n"
				"CSeq: 2 BYE\r\n"
				"Max-Forwards: 1\r\n"
				"m: <sip:x@10.0.0.1>\r\n"
				"l: 2\r\n\r\nhi";
	ck_assert_int_eq(sip_msg_parse(&msg, &arena, S(m)), SN_OK);
	ck_slice(msg.call_id, "cid");
	ck_slice(msg.from_tag, "F");
	ck_slice(msg.to_tag, "T");
	ck_assert_uint_eq(msg.content_length, 2);
	ck_slice(msg.body, "hi");
	ck_assert_int_eq(sip_msg_validate(&msg, &arena), SN_OK);
	ck_assert_uint_eq(msg.flags & SIP_MSG_F_INVALID, 0);
	ck_assert_ptr_nonnull(sip_msg_hdr_find_name(&msg, "Contact"));
	ck_assert_ptr_nonnull(sip_msg_hdr_find_name(&msg, "m"));
	ck_assert_ptr_null(sip_msg_hdr_find_name(&msg, "X-Missing"));
}
END_TEST

START_TEST(test_sip_parse_splits_repeated_and_comma_joined_headers)
{
	static const char m[] =
		"REGISTER sip:reg SIP/2.0\r\n"
		"Via: SIP/2.0/UDP a.example;branch=z9hG4bK1;received=10.0.0.1;rport=5062, "
		"SIP/2.0/TLS [2001:db8::1]:5061;branch=z9hG4bK2;maddr=224.2.0.1;ttl=16\r\n"
		"Via: SIP / 2.0 / TCP c.example ; branch = z9hG4bK3 ; rport\r\n"
		"Contact: \"Doe, John\" <sip:j@h1;x=a,b>;q=0.7;expires=60, <sip:j@h2>\r\n"
		"Contact: sip:j@h3;expires=0\r\n"
		"Route: <sip:p1.example;lr>, <sip:p2.example;lr>\r\n"
		"Record-Route: <sip:rr.example;lr>\r\n"
		"X-Custom: a, b\r\n"
		"Call-ID: c\r\n\r\n";
	struct sip_via *vias;
	struct sip_contact *cts;
	struct sip_name_addr *routes;
	size_t n;

	ck_assert_int_eq(sip_msg_parse(&msg, &arena, S(m)), SN_OK);
	ck_assert_uint_eq(msg.via_count, 3);
	ck_assert_int_eq(sip_msg_vias(&msg, &arena, &vias, &n), SN_OK);
	ck_assert_uint_eq(n, 3);
	ck_slice(vias[0].received, "10.0.0.1");
	ck_assert(vias[0].has_rport);
	ck_slice(vias[0].rport, "5062");
	ck_slice(vias[1].transport, "TLS");
	ck_slice(vias[1].host, "[2001:db8::1]");
	ck_assert_uint_eq(vias[1].port, 5061);
	ck_slice(vias[1].maddr, "224.2.0.1");
	ck_slice(vias[1].ttl, "16");
	ck_slice(vias[2].proto_version, "2.0");
	ck_slice(vias[2].transport, "TCP");
	ck_slice(vias[2].branch, "z9hG4bK3");
	ck_assert(vias[2].has_rport);
	ck_assert(!vias[2].has_port);

	ck_assert_int_eq(sip_msg_contacts(&msg, &arena, &cts, &n), SN_OK);
	ck_assert_uint_eq(n, 3);
	ck_slice(cts[0].addr.display, "\"Doe, John\"");
	ck_slice(cts[0].addr.uri_text, "sip:j@h1;x=a,b");
	ck_slice(cts[0].q, "0.7");
	ck_assert(cts[0].has_expires);
	ck_assert_uint_eq(cts[0].expires, 60);
	ck_slice(cts[1].addr.uri.host, "h2");
	ck_assert(!cts[1].has_expires);
	ck_assert(!cts[2].addr.angle);
	ck_assert_uint_eq(cts[2].expires, 0);
	ck_assert(cts[2].has_expires);

	ck_assert_int_eq(sip_msg_name_addrs(&msg, SIP_HDR_ROUTE, &arena, &routes, &n), SN_OK);
	ck_assert_uint_eq(n, 2);
	ck_slice(routes[1].uri.host, "p2.example");
	ck_assert(routes[1].uri.lr);
	ck_assert_int_eq(sip_msg_name_addrs(&msg, SIP_HDR_RECORD_ROUTE, &arena, &routes, &n),
			 SN_OK);
	ck_assert_uint_eq(n, 1);
	(void)sip_msg_validate(&msg, &arena);
	ck_assert_uint_eq(msg.flags & (SIP_MSG_F_BAD_VIA | SIP_MSG_F_BAD_CONTACT), 0);
}
END_TEST

START_TEST(test_sip_parse_reads_contact_star)
{
	struct sip_contact c;

	ck_assert_int_eq(sip_contact_parse(sn_slice_make(" * ", 3), &c), SN_OK);
	ck_assert(c.star);
	ck_assert_int_eq(sip_contact_parse(sn_slice_make("<sip:a@b>;expires=99999999999", 29), &c),
			 SN_EPARSE);
}
END_TEST

START_TEST(test_sip_parse_reads_from_to_accessors)
{
	struct sip_name_addr na;
	uint32_t exp;

	ck_assert_int_eq(sip_msg_parse(&msg, &arena, S(invite)), SN_OK);
	ck_assert_int_eq(sip_msg_from(&msg, &na), SN_OK);
	ck_slice(na.display, "\"Alice A.\"");
	ck_slice(na.uri.user, "alice");
	ck_slice(na.tag, "1928301774");
	ck_assert_int_eq(sip_msg_to(&msg, &na), SN_OK);
	ck_slice(na.display, "Bob");
	ck_assert_int_eq(sip_msg_expires(&msg, &exp), SN_ENOTFOUND);
	ck_assert_int_eq(sip_name_addr_parse(sn_slice_make("sip:u@h;tag=x", 13), &na), SN_OK);
	ck_slice(na.uri_text, "sip:u@h");
	ck_slice(na.tag, "x");
	ck_assert_int_eq(sip_name_addr_parse(sn_slice_make("\"open <sip:u@h>", 15), &na),
			 SN_EPARSE);
	ck_assert_int_eq(sip_name_addr_parse(sn_slice_make("a,b <sip:u@h>", 13), &na), SN_EPARSE);
	ck_assert_int_eq(sip_name_addr_parse(sn_slice_make("< sip:u@h >", 11), &na), SN_EPARSE);
}
END_TEST

START_TEST(test_sip_parse_rejects_negative_content_length)
{
	uint32_t v;

	ck_assert_int_eq(
		sip_msg_parse(&msg, &arena,
			      S("INVITE sip:a@b SIP/2.0\r\nContent-Length: -5\r\n\r\nbody")),
		SN_OK);
	ck_assert(msg.flags & SIP_MSG_F_BAD_CONTENT_LENGTH);
	ck_assert(!msg.has_content_length);
	ck_slice(msg.body, "body");
	ck_assert_str_eq(sip_msg_invalid_reason(&msg), "Bad Content-Length");
	ck_assert_int_eq(sip_u32_parse(sn_slice_make("-1", 2), &v), SN_EPARSE);
	ck_assert_int_eq(sip_u32_parse(sn_slice_make("12a", 3), &v), SN_EPARSE);
	ck_assert_int_eq(sip_u32_parse(sn_slice_make("4294967296", 10), &v), SN_EPARSE);
	ck_assert_int_eq(sip_u32_parse(sn_slice_make("", 0), &v), SN_EPARSE);
	ck_assert_int_eq(sip_u32_parse(sn_slice_make(" 4294967295 ", 12), &v), SN_OK);
	ck_assert_uint_eq(v, 4294967295u);
}
END_TEST

START_TEST(test_sip_parse_flags_missing_mandatory_headers)
{
	ck_assert_int_eq(sip_msg_parse(&msg, &arena, S("OPTIONS sip:a@b SIP/2.0\r\n\r\n")), SN_OK);
	ck_assert_uint_eq(msg.flags & SIP_MSG_F_MISSING_MANDATORY, SIP_MSG_F_MISSING_MANDATORY);
	ck_assert(msg.flags & SIP_MSG_F_NO_MAX_FWD);
	ck_assert(msg.flags & SIP_MSG_F_NO_CONTENT_LEN);
	ck_assert_str_eq(sip_msg_invalid_reason(&msg), "Missing Call-ID");
}
END_TEST

START_TEST(test_sip_validate_flags_what_the_parse_leaves_out)
{
	static const char bad[] = "INVITE sip:a@b?x=y SIP/2.0\r\n"
				  "Via: SIP/2.0/UDP h;branch=z9hG4bK\r\n"
				  "Max-Forwards: 300\r\n"
				  "From: <sip:a@b>;tag=1;;\r\n"
				  "To: sip:c@d\r\n"
				  "Call-ID: x y\r\n"
				  "CSeq: 1 BYE\r\n"
				  "Contact: <sip:a@[::1>\r\n"
				  "Content-Length: 0\r\n"
				  "\r\n";
	const uint32_t want = SIP_MSG_F_BAD_URI | SIP_MSG_F_BAD_VIA | SIP_MSG_F_BAD_SCALAR |
			      SIP_MSG_F_BAD_FROM | SIP_MSG_F_BAD_CALLID |
			      SIP_MSG_F_CSEQ_METHOD_MISMATCH | SIP_MSG_F_BAD_CONTACT;
	uint32_t flags;

	ck_assert_int_eq(sip_msg_parse(&msg, &arena, S(bad)), SN_OK);
	ck_assert_uint_eq(msg.flags & SIP_MSG_F_INVALID, 0);
	ck_assert_uint_eq(msg.flags & SIP_MSG_F_VALIDATED, 0);
	/* the engine's fields are there without validation: the From's tag and URI are taken
	 * by the name-addr's structure though its parameters are invalid (as sngrep takes them),
	 * and validation flags it */
	ck_slice(msg.from_tag, "1");
	ck_slice(msg.from_uri, "sip:a@b");
	ck_slice(msg.to_uri, "sip:c@d");
	ck_slice(msg.via.host, "h");
	ck_assert_uint_eq(msg.via_count, 1);
	ck_assert_int_eq(sip_msg_validate(&msg, &arena), SN_EPARSE);
	ck_assert_uint_eq(msg.flags & want, want);
	ck_assert(msg.flags & SIP_MSG_F_VALIDATED);
	ck_assert_str_eq(sip_msg_invalid_reason(&msg), "Bad Request-URI");
	flags = msg.flags;
	ck_assert_int_eq(sip_msg_validate(&msg, NULL), SN_EPARSE);
	ck_assert_uint_eq(msg.flags, flags);
}
END_TEST

START_TEST(test_sip_parse_flags_duplicate_single_headers)
{
	ck_assert_int_eq(sip_msg_parse(&msg, &arena,
				       S("OPTIONS sip:a@b SIP/2.0\r\nCall-ID: a\r\ni: b\r\n\r\n")),
			 SN_OK);
	ck_assert_uint_eq(msg.flags & SIP_MSG_F_DUP_SINGLE_HEADER, 0); /* parse alone */
	ck_assert_int_eq(sip_msg_validate(&msg, &arena), SN_EPARSE);
	ck_assert(msg.flags & SIP_MSG_F_DUP_SINGLE_HEADER);
	ck_slice(msg.call_id, "a");
}
END_TEST

START_TEST(test_sip_parse_returns_etrunc_when_body_is_short)
{
	ck_assert_int_eq(
		sip_msg_parse(&msg, &arena,
			      S("INVITE sip:a@b SIP/2.0\r\nCall-ID: x\r\nl: 10\r\n\r\nabc")),
		SN_ETRUNC);
	ck_assert(msg.flags & SIP_MSG_F_BODY_TRUNC);
	ck_slice(msg.call_id, "x");
	ck_slice(msg.body, "abc");
}
END_TEST

START_TEST(test_sip_parse_accepts_bare_lf)
{
	ck_assert_int_eq(
		sip_msg_parse(&msg, &arena,
			      S("BYE sip:a@b SIP/2.0\nCall-ID: lf\nContent-Length: 1\n\nZ")),
		SN_OK);
	ck_slice(msg.call_id, "lf");
	ck_slice(msg.body, "Z");
	ck_assert(msg.flags & SIP_MSG_F_BARE_LF);
}
END_TEST

START_TEST(test_sip_parse_flags_malformed_header_line)
{
	ck_assert_int_eq(
		sip_msg_parse(&msg, &arena,
			      S("BYE sip:a@b SIP/2.0\r\nno colon here\r\nCall-ID: x\r\n\r\n")),
		SN_OK);
	ck_assert(msg.flags & SIP_MSG_F_BAD_HEADER);
	ck_slice(msg.call_id, "x");
}
END_TEST

START_TEST(test_sip_parse_gives_ok_or_etrunc_for_every_prefix)
{
	static const char *const msgs[] = {invite, ringing, "SIP/2.0 100\r\nCall-ID: x\r\n\r\n"};
	for (size_t m = 0; m < 3; m++) {
		size_t len = strlen(msgs[m]);
		for (size_t n = 0; n <= len; n++) {
			uint8_t *cp = malloc(n ? n : 1);
			memcpy(cp, msgs[m], n);
			enum sn_status st = sip_msg_parse(&msg, &arena, cp, n);
			ck_assert_msg(n == len ? st == SN_OK : (st == SN_OK || st == SN_ETRUNC),
				      "msg %zu prefix %zu: %s", m, n, sn_status_str(st));
			sn_arena_reset(&arena);
			free(cp);
		}
	}
}
END_TEST

START_TEST(test_sip_parse_returns_elimit_for_tiny_arena)
{
	struct sn_arena tiny;

	sn_arena_init(&tiny, 64);
	ck_assert_int_eq(sip_msg_parse(&msg, &tiny, S(invite)), SN_ELIMIT);
	sn_arena_cleanup(&tiny);
}
END_TEST

START_TEST(test_sip_parse_returns_elimit_beyond_header_limit)
{
	size_t cap = 64 + 300 * 8;
	char *buf = malloc(cap);
	size_t n = 0;

	n += (size_t)snprintf(buf + n, cap - n, "OPTIONS sip:a@b SIP/2.0\r\n");
	for (int i = 0; i < 300; i++) {
		n += (size_t)snprintf(buf + n, cap - n, "X: %d\r\n", i % 10);
	}
	n += (size_t)snprintf(buf + n, cap - n, "\r\n");
	ck_assert_int_eq(sip_msg_parse(&msg, &arena, (const uint8_t *)buf, n), SN_ELIMIT);
	free(buf);
}
END_TEST

START_TEST(test_sip_frame_finds_concatenated_messages)
{
	char buf[2048];
	size_t len;
	size_t ml;
	size_t off;

	len = (size_t)snprintf(buf, sizeof(buf), "\r\n\r\n%s%s", invite, ringing);
	off = sip_msg_skip_keepalive((const uint8_t *)buf, len);
	ck_assert_uint_eq(off, 4);
	ck_assert_int_eq(sip_msg_frame((const uint8_t *)buf + off, len - off, &ml), SN_OK);
	ck_assert_uint_eq(ml, sizeof(invite) - 1);
	off += ml;
	ck_assert_uint_eq(sip_msg_skip_keepalive((const uint8_t *)buf + off, len - off), 0);
	ck_assert_int_eq(sip_msg_frame((const uint8_t *)buf + off, len - off, &ml), SN_OK);
	ck_assert_uint_eq(ml, sizeof(ringing) - 1);
	ck_assert_uint_eq(off + ml, len);
}
END_TEST

START_TEST(test_sip_frame_asks_for_more_bytes_on_split_messages)
{
	size_t ml;
	size_t len = sizeof(invite) - 1;

	for (size_t n = 0; n < len; n++) {
		ck_assert_msg(sip_msg_frame((const uint8_t *)invite, n, &ml) == SN_ETRUNC,
			      "prefix %zu", n);
	}
	ck_assert_int_eq(sip_msg_frame((const uint8_t *)invite, len, &ml), SN_OK);
	ck_assert_uint_eq(ml, len);
}
END_TEST

START_TEST(test_sip_frame_rejects_non_sip_and_bad_content_length)
{
	size_t ml;

	ck_assert_int_eq(sip_msg_frame(S("GET / HTTP/1.1\r\nHost: x\r\n\r\n"), &ml), SN_EPARSE);
	ck_assert_int_eq(sip_msg_frame(S("\x80\x00\x01\x02\x03"), &ml), SN_EPARSE);
	ck_assert_int_eq(sip_msg_frame(S("BYE sip:a@b SIP/2.0\r\nl: x1\r\n\r\n"), &ml), SN_EPARSE);
	ck_assert_int_eq(sip_msg_frame(S("BYE sip:a@b SIP/2.0\r\nCall-ID: x\r\n\r\nextra"), &ml),
			 SN_OK);
	ck_assert_uint_eq(ml, 35);
	ck_assert_int_eq(sip_msg_frame(S("BYE sip:a@b SIP/2.0\nl: 2\n\nabc"), &ml), SN_OK);
	ck_assert_uint_eq(ml, 28);
}
END_TEST

START_TEST(test_sip_is_start_accepts_sip_and_rejects_rtp_and_http)
{
	static const uint8_t rtp[] = {0x80, 0x00, 0x12, 0x34, 0x00, 0x00, 0x00, 0xa0,
				      0xde, 0xad, 0xbe, 0xef, 0xff, 0xff, 0xff, 0xff};
	ck_assert(sip_msg_is_start(S(invite)));
	ck_assert(sip_msg_is_start(S(ringing)));
	ck_assert(sip_msg_is_start(S("OPTIONS sip:a@b SIP/2.0\n")));
	ck_assert(!sip_msg_is_start(rtp, sizeof(rtp)));
	ck_assert(!sip_msg_is_start(S("GET /index.html HTTP/1.1\r\n")));
	ck_assert(!sip_msg_is_start(S("HTTP/1.1 200 OK\r\n")));
	ck_assert(!sip_msg_is_start(S("SIP/2.0 2000 OK\r\n")));
	ck_assert(!sip_msg_is_start(S("INVITE sip:a@b")));
	ck_assert(!sip_msg_is_start(S("INVITE nocolon SIP/2.0\r\n")));
	ck_assert(!sip_msg_is_start(S("SIP/2.0")));
}
END_TEST

START_TEST(test_sip_multipart_split_finds_sdp_part)
{
	static const char m[] = "INVITE sip:a@b SIP/2.0\r\n"
				"Content-Type: multipart/mixed; boundary=\"unique-boundary-1\"\r\n"
				"Content-Length: 173\r\n\r\n"
				"--unique-boundary-1\r\n"
				"Content-Type: application/sdp\r\n\r\n"
				"v=0\r\no=- 1 1 IN IP4 192.0.2.1\r\n"
				"--unique-boundary-1\r\n"
				"Content-Type: application/isup\r\n\r\n"
				"ISUPDATA\r\n"
				"--unique-boundary-1--\r\n";
	struct sip_mime_part parts[4];
	struct sn_slice sdp;
	size_t n;

	ck_assert_int_eq(sip_msg_parse(&msg, &arena, S(m)), SN_OK);
	ck_assert_int_eq(sip_multipart_split(msg.content_type, msg.body, parts, 4, &n), SN_OK);
	ck_assert_uint_eq(n, 2);
	ck_slice(parts[0].content_type, "application/sdp");
	ck_slice(parts[0].body, "v=0\r\no=- 1 1 IN IP4 192.0.2.1");
	ck_slice(parts[1].content_type, "application/isup");
	ck_slice(parts[1].body, "ISUPDATA");
	ck_assert_int_eq(sip_msg_find_sdp(&msg, &sdp), SN_OK);
	ck_slice(sdp, "v=0\r\no=- 1 1 IN IP4 192.0.2.1");
	ck_assert_int_eq(sip_multipart_split(msg.content_type, msg.body, parts, 1, &n), SN_ELIMIT);
	ck_assert_int_eq(
		sip_multipart_split(sn_slice_make("application/sdp", 15), msg.body, parts, 4, &n),
		SN_EPARSE);
}
END_TEST

START_TEST(test_sip_multipart_split_reads_rfc4475_mpart01)
{
	char path[512];
	const char *dir = getenv("SIPNAB_CORPUS");
	uint8_t buf[4096];
	struct sip_mime_part parts[4];
	struct sn_slice sdp;
	size_t n;
	FILE *f;

	snprintf(path, sizeof(path), "%s/sip/rfc4475/mpart01.sip", dir && *dir ? dir : "corpus");
	f = fopen(path, "rb");
	ck_assert_ptr_nonnull(f);
	n = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	ck_assert_int_eq(sip_msg_parse(&msg, &arena, buf, n), SN_OK);
	ck_assert_int_eq(sip_multipart_split(msg.content_type, msg.body, parts, 4, &n), SN_OK);
	ck_assert_uint_eq(n, 2);
	ck_slice(parts[0].content_type, "text/plain");
	ck_slice(parts[1].content_type, "application/octet-stream");
	ck_assert_int_eq(sip_msg_find_sdp(&msg, &sdp), SN_ENOTFOUND);
}
END_TEST

static Suite *sip_parse_suite(void)
{
	Suite *s = suite_create("sip_parse");
	struct {
		const char *name;
		const TTest *tests[8];
	} groups[] = {
		{"request_line",
		 {test_sip_parse_reads_request_line_and_core_headers,
		  test_sip_parse_keeps_unknown_method_token, test_sip_parse_maps_every_method}},
		{"status_line",
		 {test_sip_parse_reads_status_line,
		  test_sip_parse_accepts_status_line_without_reason}},
		{"malformed",
		 {test_sip_parse_rejects_malformed_start_lines,
		  test_sip_parse_flags_unknown_version,
		  test_sip_parse_flags_malformed_header_line}},
		{"folding",
		 {test_sip_parse_unfolds_continuation_lines, test_sip_parse_accepts_bare_lf}},
		{"compact_form",
		 {test_sip_parse_maps_compact_forms, test_sip_parse_reads_compact_message,
		  test_sip_parse_looks_up_every_full_name_in_any_case}},
		{"lists",
		 {test_sip_parse_splits_repeated_and_comma_joined_headers,
		  test_sip_parse_reads_contact_star, test_sip_parse_reads_from_to_accessors}},
		{"validity",
		 {test_sip_parse_rejects_negative_content_length,
		  test_sip_parse_flags_missing_mandatory_headers,
		  test_sip_parse_flags_duplicate_single_headers,
		  test_sip_validate_flags_what_the_parse_leaves_out}},
		{"truncation",
		 {test_sip_parse_returns_etrunc_when_body_is_short,
		  test_sip_parse_gives_ok_or_etrunc_for_every_prefix}},
		{"limits",
		 {test_sip_parse_returns_elimit_for_tiny_arena,
		  test_sip_parse_returns_elimit_beyond_header_limit}},
		{"framing",
		 {test_sip_frame_finds_concatenated_messages,
		  test_sip_frame_asks_for_more_bytes_on_split_messages,
		  test_sip_frame_rejects_non_sip_and_bad_content_length}},
		{"detection", {test_sip_is_start_accepts_sip_and_rejects_rtp_and_http}},
		{"multipart",
		 {test_sip_multipart_split_finds_sdp_part,
		  test_sip_multipart_split_reads_rfc4475_mpart01}},
	};
	for (size_t g = 0; g < sizeof(groups) / sizeof(groups[0]); g++) {
		TCase *tc = tcase_create(groups[g].name);
		tcase_add_checked_fixture(tc, setup, teardown);
		for (size_t i = 0; i < 8 && groups[g].tests[i]; i++) {
			tcase_add_test(tc, groups[g].tests[i]);
		}
		suite_add_tcase(s, tc);
	}
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(sip_parse_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
