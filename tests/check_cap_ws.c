/*
 * check_cap_ws.c - unit tests for WebSocket handshake detection and framing (cap_ws).
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "sipnab/cap_ws.h"

static const char req[] = "GET /sip HTTP/1.1\r\n"
			  "Host: proxy.example.com\r\n"
			  "Connection: Upgrade\r\n"
			  "upgrade: keep-alive, WebSocket\r\n"
			  "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
			  "Sec-WebSocket-Protocol: sip\r\n"
			  "Sec-WebSocket-Version: 13\r\n"
			  "\r\n"
			  "\x81\x05Hello";

static const char resp[] = "HTTP/1.1 101 Switching Protocols\r\n"
			   "UPGRADE:websocket\r\n"
			   "Connection: Upgrade\r\n"
			   "Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n"
			   "\r\n";

static enum sn_status hs(const char *s, size_t *hl)
{
	return cap_ws_handshake((const uint8_t *)s, strlen(s), hl);
}

START_TEST(test_cap_ws_detects_an_upgrade_request)
{
	size_t hl = 0;
	const char *end = strstr(req, "\r\n\r\n");

	ck_assert_int_eq(cap_ws_handshake((const uint8_t *)req, sizeof(req) - 1, &hl), SN_OK);
	ck_assert_uint_eq(hl, (size_t)(end - req) + 4);
}
END_TEST

START_TEST(test_cap_ws_detects_a_101_response)
{
	size_t hl = 0;

	ck_assert_int_eq(hs(resp, &hl), SN_OK);
	ck_assert_uint_eq(hl, strlen(resp));
}
END_TEST

START_TEST(test_cap_ws_waits_for_the_blank_line)
{
	size_t hl = 0;
	size_t n;

	/* Every prefix shorter than the header block may still be a handshake. */
	for (n = 0; n < strlen(resp); n++) {
		ck_assert_int_eq(cap_ws_handshake((const uint8_t *)resp, n, &hl), SN_ETRUNC);
	}
}
END_TEST

START_TEST(test_cap_ws_rejects_a_plain_http_get)
{
	size_t hl = 0;

	ck_assert_int_eq(
		hs("GET /index.html HTTP/1.1\r\nHost: a\r\nConnection: Upgrade\r\n\r\n", &hl),
		SN_ENOTFOUND);
	ck_assert_int_eq(hs("GET /x HTTP/1.1\r\nUpgrade: h2c\r\n\r\n", &hl), SN_ENOTFOUND);
	ck_assert_int_eq(hs("HTTP/1.1 200 OK\r\nUpgrade: websocket\r\n\r\n", &hl), SN_ENOTFOUND);
	ck_assert_int_eq(hs("HTTP/1.1 1010\r\nUpgrade: websocket\r\n\r\n", &hl), SN_ENOTFOUND);
	ck_assert_int_eq(hs("GET /a b HTTP/1.1\r\nUpgrade: websocket\r\n\r\n", &hl), SN_ENOTFOUND);
}
END_TEST

START_TEST(test_cap_ws_rejects_a_sip_request)
{
	size_t hl = 0;

	ck_assert_int_eq(
		hs("INVITE sip:bob@example.com SIP/2.0\r\nUpgrade: websocket\r\n\r\n", &hl),
		SN_ENOTFOUND);
	ck_assert_int_eq(hs("GET sip:bob@example.com SIP/2.0\r\n", &hl), SN_ENOTFOUND);
	ck_assert_int_eq(hs("SIP/2.0 101 Trying\r\n\r\n", &hl), SN_ENOTFOUND);
}
END_TEST

START_TEST(test_cap_ws_parses_the_rfc_unmasked_hello)
{
	static const uint8_t fr[] = {0x81, 0x05, 0x48, 0x65, 0x6c, 0x6c, 0x6f};
	struct cap_ws_frame f;
	uint8_t out[5];

	ck_assert_int_eq(cap_ws_frame_parse(fr, sizeof(fr), &f), SN_OK);
	ck_assert(f.fin);
	ck_assert_uint_eq(f.opcode, CAP_WS_TEXT);
	ck_assert(!f.masked);
	ck_assert_uint_eq(f.payload_len, 5);
	ck_assert_uint_eq(f.header_len, 2);
	cap_ws_unmask(&f, fr + f.header_len, 5, out);
	ck_assert_mem_eq(out, "Hello", 5);
}
END_TEST

START_TEST(test_cap_ws_unmasks_the_rfc_masked_hello)
{
	static const uint8_t fr[] = {0x81, 0x85, 0x37, 0xfa, 0x21, 0x3d,
				     0x7f, 0x9f, 0x4d, 0x51, 0x58};
	static const uint8_t key[] = {0x37, 0xfa, 0x21, 0x3d};
	struct cap_ws_frame f;
	uint8_t out[5];

	ck_assert_int_eq(cap_ws_frame_parse(fr, sizeof(fr), &f), SN_OK);
	ck_assert(f.fin);
	ck_assert_uint_eq(f.opcode, CAP_WS_TEXT);
	ck_assert(f.masked);
	ck_assert_mem_eq(f.mask, key, 4);
	ck_assert_uint_eq(f.payload_len, 5);
	ck_assert_uint_eq(f.header_len, 6);
	cap_ws_unmask(&f, fr + f.header_len, 5, out);
	ck_assert_mem_eq(out, "Hello", 5);
}
END_TEST

START_TEST(test_cap_ws_reads_a_16_bit_length)
{
	static const uint8_t fr[] = {0x82, 0x7e, 0x01, 0x00};
	struct cap_ws_frame f;

	ck_assert_int_eq(cap_ws_frame_parse(fr, sizeof(fr), &f), SN_OK);
	ck_assert_uint_eq(f.opcode, CAP_WS_BINARY);
	ck_assert_uint_eq(f.payload_len, 256);
	ck_assert_uint_eq(f.header_len, 4);
}
END_TEST

START_TEST(test_cap_ws_reads_a_masked_64_bit_length)
{
	static const uint8_t fr[] = {0x82, 0xff, 0x00, 0x00, 0x00, 0x01, 0x00,
				     0x00, 0x00, 0x00, 0x01, 0x02, 0x03, 0x04};
	struct cap_ws_frame f;

	ck_assert_int_eq(cap_ws_frame_parse(fr, sizeof(fr), &f), SN_OK);
	ck_assert_uint_eq(f.payload_len, 0x100000000ull);
	ck_assert(f.masked);
	ck_assert_uint_eq(f.mask[3], 4);
	ck_assert_uint_eq(f.header_len, 14);
}
END_TEST

START_TEST(test_cap_ws_rejects_a_64_bit_length_with_the_top_bit_set)
{
	static const uint8_t fr[] = {0x82, 0x7f, 0x80, 0, 0, 0, 0, 0, 0, 1};
	struct cap_ws_frame f;

	ck_assert_int_eq(cap_ws_frame_parse(fr, sizeof(fr), &f), SN_EPARSE);
}
END_TEST

START_TEST(test_cap_ws_parses_text_then_continuation_frames)
{
	/* "Hel" (TEXT, not final), "lo" masked CONT not final, "!" CONT final. */
	static const uint8_t fr[] = {0x01, 0x03, 'H', 'e',     'l',	0x00, 0x82, 1,
				     2,	   3,	 4,   'l' ^ 1, 'o' ^ 2, 0x80, 0x01, '!'};
	struct cap_ws_frame f;
	uint8_t out[8];
	size_t off = 0;
	size_t n = 0;
	int frames = 0;

	while (off < sizeof(fr)) {
		ck_assert_int_eq(cap_ws_frame_parse(fr + off, sizeof(fr) - off, &f), SN_OK);
		ck_assert_uint_eq(f.opcode, frames == 0 ? CAP_WS_TEXT : CAP_WS_CONT);
		ck_assert(f.fin == (frames == 2));
		ck_assert_uint_le(off + f.header_len + f.payload_len, sizeof(fr));
		cap_ws_unmask(&f, fr + off + f.header_len, f.payload_len, out + n);
		n += f.payload_len;
		off += f.header_len + f.payload_len;
		frames++;
	}
	ck_assert_int_eq(frames, 3);
	ck_assert_uint_eq(n, 6);
	ck_assert_mem_eq(out, "Hello!", 6);
}
END_TEST

START_TEST(test_cap_ws_parses_close_and_ping_frames)
{
	static const uint8_t close_fr[] = {0x88, 0x02, 0x03, 0xe8};
	static const uint8_t ping[] = {0x89, 0x00};
	static const uint8_t pong[] = {0x8a, 0x80, 9, 9, 9, 9};
	struct cap_ws_frame f;

	ck_assert_int_eq(cap_ws_frame_parse(close_fr, sizeof(close_fr), &f), SN_OK);
	ck_assert_uint_eq(f.opcode, CAP_WS_CLOSE);
	ck_assert_uint_eq(f.payload_len, 2);
	ck_assert_int_eq(cap_ws_frame_parse(ping, sizeof(ping), &f), SN_OK);
	ck_assert_uint_eq(f.opcode, CAP_WS_PING);
	ck_assert_uint_eq(f.payload_len, 0);
	ck_assert_int_eq(cap_ws_frame_parse(pong, sizeof(pong), &f), SN_OK);
	ck_assert_uint_eq(f.opcode, CAP_WS_PONG);
	ck_assert_uint_eq(f.header_len, 6);
}
END_TEST

START_TEST(test_cap_ws_rejects_reserved_bits_and_opcodes)
{
	static const uint8_t rsv1[] = {0xc1, 0x00};
	static const uint8_t rsv3[] = {0x91, 0x00};
	static const uint8_t op3[] = {0x83, 0x00};
	static const uint8_t opb[] = {0x8b, 0x00};
	static const uint8_t frag_ping[] = {0x09, 0x00};
	static const uint8_t long_ping[] = {0x89, 0x7e, 0x00, 0x80};
	struct cap_ws_frame f;

	ck_assert_int_eq(cap_ws_frame_parse(rsv1, 2, &f), SN_EPARSE);
	ck_assert_int_eq(cap_ws_frame_parse(rsv3, 2, &f), SN_EPARSE);
	ck_assert_int_eq(cap_ws_frame_parse(op3, 2, &f), SN_EPARSE);
	ck_assert_int_eq(cap_ws_frame_parse(opb, 2, &f), SN_EPARSE);
	ck_assert_int_eq(cap_ws_frame_parse(frag_ping, 2, &f), SN_EPARSE);
	ck_assert_int_eq(cap_ws_frame_parse(long_ping, 4, &f), SN_EPARSE);
}
END_TEST

START_TEST(test_cap_ws_reports_a_truncated_header)
{
	static const uint8_t fr[] = {0x82, 0xff, 0x00, 0x00, 0x00, 0x01, 0x00,
				     0x00, 0x00, 0x00, 0x01, 0x02, 0x03, 0x04};
	static const uint8_t fr16[] = {0x81, 0x7e, 0x01, 0x00};
	struct cap_ws_frame f;
	size_t n;

	for (n = 0; n < sizeof(fr); n++) {
		ck_assert_int_eq(cap_ws_frame_parse(fr, n, &f), SN_ETRUNC);
	}
	for (n = 0; n < sizeof(fr16); n++) {
		ck_assert_int_eq(cap_ws_frame_parse(fr16, n, &f), SN_ETRUNC);
	}
}
END_TEST

static Suite *cap_ws_suite(void)
{
	Suite *s = suite_create("cap_ws");
	TCase *tc;

	tc = tcase_create("handshake");
	tcase_add_test(tc, test_cap_ws_detects_an_upgrade_request);
	tcase_add_test(tc, test_cap_ws_detects_a_101_response);
	tcase_add_test(tc, test_cap_ws_waits_for_the_blank_line);
	tcase_add_test(tc, test_cap_ws_rejects_a_plain_http_get);
	tcase_add_test(tc, test_cap_ws_rejects_a_sip_request);
	suite_add_tcase(s, tc);
	tc = tcase_create("masking");
	tcase_add_test(tc, test_cap_ws_parses_the_rfc_unmasked_hello);
	tcase_add_test(tc, test_cap_ws_unmasks_the_rfc_masked_hello);
	suite_add_tcase(s, tc);
	tc = tcase_create("lengths");
	tcase_add_test(tc, test_cap_ws_reads_a_16_bit_length);
	tcase_add_test(tc, test_cap_ws_reads_a_masked_64_bit_length);
	tcase_add_test(tc, test_cap_ws_rejects_a_64_bit_length_with_the_top_bit_set);
	suite_add_tcase(s, tc);
	tc = tcase_create("fragments");
	tcase_add_test(tc, test_cap_ws_parses_text_then_continuation_frames);
	suite_add_tcase(s, tc);
	tc = tcase_create("control");
	tcase_add_test(tc, test_cap_ws_parses_close_and_ping_frames);
	suite_add_tcase(s, tc);
	tc = tcase_create("malformed");
	tcase_add_test(tc, test_cap_ws_rejects_reserved_bits_and_opcodes);
	tcase_add_test(tc, test_cap_ws_reports_a_truncated_header);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(cap_ws_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
