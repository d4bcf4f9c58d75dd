/*
 * check_cap_sctp.c - unit tests for SCTP chunk walking and message reassembly (cap_sctp).
 *
 * Packets are built by hand: pkt->payload holds the chunks that follow the common header.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "sipnab/cap_sctp.h"

#define MAX_MSGS 16

#define F_E 0x01
#define F_B 0x02
#define F_U 0x04

struct rec {
	char msgs[MAX_MSGS][512];
	uint32_t lens[MAX_MSGS];
	struct cap_sctp_data chunks[MAX_MSGS];
	int count;
};

static void rec_cb(void *user, const struct cap_packet *pkt, const struct cap_sctp_data *chunk)
{
	struct rec *r = user;

	(void)pkt;
	ck_assert_int_lt(r->count, MAX_MSGS);
	ck_assert_uint_lt(chunk->len, sizeof(r->msgs[0]));
	memcpy(r->msgs[r->count], chunk->data, chunk->len);
	r->msgs[r->count][chunk->len] = '\0';
	r->lens[r->count] = chunk->len;
	r->chunks[r->count] = *chunk;
	r->count++;
}

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void put32(uint8_t *p, uint32_t v)
{
	put16(p, (uint16_t)(v >> 16));
	put16(p + 2, (uint16_t)v);
}

/* Append a chunk; pad to 4 bytes unless @pad is false. Returns the new offset. */
static size_t put_chunk(uint8_t *b, size_t off, uint8_t type, uint8_t flags, const uint8_t *body,
			size_t body_len, bool pad)
{
	b[off] = type;
	b[off + 1] = flags;
	put16(b + off + 2, (uint16_t)(4 + body_len));
	memcpy(b + off + 4, body, body_len);
	off += 4 + body_len;
	while (pad && off % 4) {
		b[off++] = 0;
	}
	return off;
}

static size_t put_data(uint8_t *b, size_t off, uint8_t flags, uint32_t tsn, uint16_t sid,
		       uint32_t ppid, const char *s, bool pad)
{
	uint8_t body[256];
	size_t n = strlen(s);

	put32(body, tsn);
	put16(body + 4, sid);
	put16(body + 6, 0);
	put32(body + 8, ppid);
	memcpy(body + 12, s, n);
	return put_chunk(b, off, 0, flags, body, 12 + n, pad);
}

static size_t put_idata(uint8_t *b, size_t off, uint8_t flags, uint32_t tsn, uint16_t sid,
			uint32_t mid, uint32_t ppid_fsn, const char *s)
{
	uint8_t body[256];
	size_t n = strlen(s);

	put32(body, tsn);
	put16(body + 4, sid);
	put16(body + 6, 0);
	put32(body + 8, mid);
	put32(body + 12, ppid_fsn);
	memcpy(body + 16, s, n);
	return put_chunk(b, off, 64, flags, body, 16 + n, true);
}

static struct cap_packet mk(const uint8_t *b, size_t len)
{
	struct cap_packet p;
	struct sn_addr a = {.family = 4, .bytes = {192, 0, 2, 1}};
	struct sn_addr c = {.family = 4, .bytes = {192, 0, 2, 2}};

	memset(&p, 0, sizeof(p));
	p.l4 = CAP_L4_SCTP;
	p.ip_proto = 132;
	p.src = a;
	p.dst = c;
	p.sport = 5060;
	p.dport = 5060;
	p.payload = b;
	p.payload_len = (uint32_t)len;
	return p;
}

static struct rec *r;
static struct cap_sctp_reasm *ra;
static uint8_t buf[2048];

static void setup(void)
{
	r = calloc(1, sizeof(*r));
	ra = cap_sctp_reasm_new(64 * 1024);
}

static void teardown(void)
{
	cap_sctp_reasm_free(ra);
	free(r);
}

static enum sn_status walk(size_t len)
{
	struct cap_packet p = mk(buf, len);

	return cap_sctp_walk(ra, &p, rec_cb, r);
}

START_TEST(test_cap_sctp_delivers_one_data_chunk)
{
	size_t n = put_data(buf, 0, F_B | F_E, 1234, 3, 0, "INVITE\r\n\r\n", true);
	struct cap_packet p = mk(buf, n);

	ck_assert_int_eq(cap_sctp_walk(ra, &p, rec_cb, r), SN_OK);
	ck_assert_int_eq(r->count, 1);
	ck_assert_str_eq(r->msgs[0], "INVITE\r\n\r\n");
	ck_assert_uint_eq(r->chunks[0].tsn, 1234);
	ck_assert_uint_eq(r->chunks[0].stream, 3);
	ck_assert_uint_eq(r->chunks[0].ppid, 0);
	ck_assert_uint_eq(r->chunks[0].flags, F_B | F_E);
	/* Unfragmented data is borrowed from the packet. */
	ck_assert_ptr_eq(r->chunks[0].data, buf + 16);
}
END_TEST

START_TEST(test_cap_sctp_delivers_two_data_chunks_of_one_packet)
{
	size_t n = put_data(buf, 0, F_B | F_E, 1, 0, 0, "one", true);

	n = put_data(buf, n, F_B | F_E | F_U, 2, 1, 46, "two", true);
	ck_assert_int_eq(walk(n), SN_OK);
	ck_assert_int_eq(r->count, 2);
	ck_assert_str_eq(r->msgs[0], "one");
	ck_assert_str_eq(r->msgs[1], "two");
	ck_assert_uint_eq(r->chunks[1].ppid, 46);
	ck_assert_uint_eq(r->chunks[1].flags, F_B | F_E | F_U);
}
END_TEST

START_TEST(test_cap_sctp_skips_a_sack_between_data_chunks)
{
	uint8_t sack[12] = {0, 0, 0, 9, 0, 1, 0, 0, 0, 0, 0, 0};
	size_t n = put_data(buf, 0, F_B | F_E, 10, 0, 0, "first", true);

	n = put_chunk(buf, n, 3, 0, sack, sizeof(sack), true);
	n = put_data(buf, n, F_B | F_E, 11, 0, 0, "second", true);
	ck_assert_int_eq(walk(n), SN_OK);
	ck_assert_int_eq(r->count, 2);
	ck_assert_str_eq(r->msgs[0], "first");
	ck_assert_str_eq(r->msgs[1], "second");
	ck_assert_uint_eq(r->chunks[1].tsn, 11);
}
END_TEST

START_TEST(test_cap_sctp_reassembles_three_fragments_from_two_packets)
{
	size_t n = put_data(buf, 0, F_B, 100, 2, 7, "Hello", true);

	n = put_data(buf, n, F_B | F_E, 50, 5, 0, "other", true);
	n = put_data(buf, n, 0, 101, 2, 0, ", wor", true);
	ck_assert_int_eq(walk(n), SN_OK);
	ck_assert_int_eq(r->count, 1);
	ck_assert_str_eq(r->msgs[0], "other");
	n = put_data(buf, 0, F_E, 102, 2, 0, "ld!", false);
	ck_assert_int_eq(walk(n), SN_OK);
	ck_assert_int_eq(r->count, 2);
	ck_assert_str_eq(r->msgs[1], "Hello, world!");
	ck_assert_uint_eq(r->lens[1], 13);
	ck_assert_uint_eq(r->chunks[1].tsn, 100);
	ck_assert_uint_eq(r->chunks[1].stream, 2);
	ck_assert_uint_eq(r->chunks[1].ppid, 7);
	ck_assert_uint_eq(r->chunks[1].flags, F_B | F_E);
}
END_TEST

START_TEST(test_cap_sctp_reassembles_fragments_arriving_out_of_order)
{
	size_t n = put_data(buf, 0, F_E, 0x00000001u, 1, 0, "c", true);

	n = put_data(buf, n, F_B, 0xffffffffu, 1, 0, "a", true);
	ck_assert_int_eq(walk(n), SN_OK);
	ck_assert_int_eq(r->count, 0);
	n = put_data(buf, 0, 0, 0x00000000u, 1, 0, "b", true);
	ck_assert_int_eq(walk(n), SN_OK);
	ck_assert_int_eq(r->count, 1);
	ck_assert_str_eq(r->msgs[0], "abc");
	ck_assert_uint_eq(r->chunks[0].tsn, 0xffffffffu);
}
END_TEST

START_TEST(test_cap_sctp_drops_fragments_without_a_reassembler)
{
	size_t n = put_data(buf, 0, F_B, 1, 0, 0, "a", true);
	struct cap_packet p;

	n = put_data(buf, n, F_E, 2, 0, 0, "b", true);
	n = put_data(buf, n, F_B | F_E, 3, 0, 0, "whole", true);
	p = mk(buf, n);
	ck_assert_int_eq(cap_sctp_walk(NULL, &p, rec_cb, r), SN_OK);
	ck_assert_int_eq(r->count, 1);
	ck_assert_str_eq(r->msgs[0], "whole");
}
END_TEST

START_TEST(test_cap_sctp_drops_the_oldest_partial_message_past_the_bound)
{
	char big[101];
	size_t n;

	memset(big, 'x', 100);
	big[100] = '\0';
	cap_sctp_reasm_free(ra);
	ra = cap_sctp_reasm_new(250);
	n = put_data(buf, 0, F_B, 1, 1, 0, big, true);
	n = put_data(buf, n, F_B, 2, 2, 0, big, true);
	ck_assert_int_eq(walk(n), SN_OK);
	n = put_data(buf, 0, F_E, 3, 2, 0, "yy", true);
	n = put_data(buf, n, F_E, 4, 1, 0, "zz", true);
	ck_assert_int_eq(walk(n), SN_OK);
	ck_assert_int_eq(r->count, 1);
	ck_assert_uint_eq(r->chunks[0].stream, 2);
	ck_assert_uint_eq(r->lens[0], 102);
}
END_TEST

START_TEST(test_cap_sctp_delivers_i_data)
{
	size_t n = put_idata(buf, 0, F_B | F_E, 9, 4, 0, 99, "whole");

	n = put_idata(buf, n, F_B, 10, 4, 1, 42, "frag");
	n = put_idata(buf, n, F_E, 12, 4, 1, 2, "!");
	ck_assert_int_eq(walk(n), SN_OK);
	ck_assert_int_eq(r->count, 1);
	ck_assert_str_eq(r->msgs[0], "whole");
	ck_assert_uint_eq(r->chunks[0].ppid, 99);
	ck_assert_uint_eq(r->chunks[0].stream, 4);
	n = put_idata(buf, 0, 0, 11, 4, 1, 1, "ment");
	ck_assert_int_eq(walk(n), SN_OK);
	ck_assert_int_eq(r->count, 2);
	ck_assert_str_eq(r->msgs[1], "fragment!");
	ck_assert_uint_eq(r->chunks[1].ppid, 42);
	ck_assert_uint_eq(r->chunks[1].tsn, 10);
	ck_assert_uint_eq(r->chunks[1].flags, F_B | F_E);
}
END_TEST

START_TEST(test_cap_sctp_rejects_a_chunk_longer_than_the_packet)
{
	size_t n = put_data(buf, 0, F_B | F_E, 1, 0, 0, "ok", true);

	n = put_data(buf, n, F_B | F_E, 2, 0, 0, "cut", true);
	ck_assert_int_eq(walk(n - 4), SN_EPARSE);
	ck_assert_int_eq(r->count, 1);
	ck_assert_str_eq(r->msgs[0], "ok");
}
END_TEST

START_TEST(test_cap_sctp_rejects_a_data_chunk_shorter_than_its_header)
{
	uint8_t body[8] = {0};
	size_t n = put_data(buf, 0, F_B | F_E, 1, 0, 0, "ok", true);

	n = put_chunk(buf, n, 0, F_B | F_E, body, sizeof(body), true);
	ck_assert_int_eq(walk(n), SN_EPARSE);
	ck_assert_int_eq(r->count, 1);
}
END_TEST

START_TEST(test_cap_sctp_rejects_a_zero_length_chunk)
{
	size_t n = put_data(buf, 0, F_B | F_E, 1, 0, 0, "ok", true);

	memset(buf + n, 0, 8); /* type 0, length 0 */
	ck_assert_int_eq(walk(n + 8), SN_EPARSE);
	ck_assert_int_eq(r->count, 1);
	buf[n] = 3; /* a SACK of length 0 is no better */
	ck_assert_int_eq(walk(n + 8), SN_EPARSE);
}
END_TEST

START_TEST(test_cap_sctp_rejects_trailing_bytes_shorter_than_a_chunk_header)
{
	size_t n = put_data(buf, 0, F_B | F_E, 1, 0, 0, "abcd", true);

	buf[n] = 0;
	buf[n + 1] = 0;
	ck_assert_int_eq(walk(n + 2), SN_EPARSE);
	ck_assert_int_eq(r->count, 1);
}
END_TEST

START_TEST(test_cap_sctp_accepts_a_last_chunk_without_padding)
{
	size_t n = put_data(buf, 0, F_B | F_E, 1, 0, 0, "abcde", true);

	ck_assert_uint_eq(n, 24);
	n = put_data(buf, n, F_B | F_E, 2, 0, 0, "fghij", false);
	ck_assert_uint_eq(n, 45);
	ck_assert_int_eq(walk(n), SN_OK);
	ck_assert_int_eq(r->count, 2);
	ck_assert_str_eq(r->msgs[0], "abcde");
	ck_assert_str_eq(r->msgs[1], "fghij");
}
END_TEST

START_TEST(test_cap_sctp_accepts_an_empty_packet)
{
	ck_assert_int_eq(walk(0), SN_OK);
	ck_assert_int_eq(r->count, 0);
}
END_TEST

static TCase *tc_new(Suite *s, const char *name)
{
	TCase *tc = tcase_create(name);

	tcase_add_checked_fixture(tc, setup, teardown);
	suite_add_tcase(s, tc);
	return tc;
}

static Suite *cap_sctp_suite(void)
{
	Suite *s = suite_create("cap_sctp");
	TCase *tc;

	tc = tc_new(s, "data_chunks");
	tcase_add_test(tc, test_cap_sctp_delivers_one_data_chunk);
	tcase_add_test(tc, test_cap_sctp_delivers_two_data_chunks_of_one_packet);
	tcase_add_test(tc, test_cap_sctp_skips_a_sack_between_data_chunks);
	tcase_add_test(tc, test_cap_sctp_accepts_an_empty_packet);
	tc = tc_new(s, "reassembly");
	tcase_add_test(tc, test_cap_sctp_reassembles_three_fragments_from_two_packets);
	tcase_add_test(tc, test_cap_sctp_reassembles_fragments_arriving_out_of_order);
	tcase_add_test(tc, test_cap_sctp_drops_fragments_without_a_reassembler);
	tcase_add_test(tc, test_cap_sctp_drops_the_oldest_partial_message_past_the_bound);
	tc = tc_new(s, "i_data");
	tcase_add_test(tc, test_cap_sctp_delivers_i_data);
	tc = tc_new(s, "malformed");
	tcase_add_test(tc, test_cap_sctp_rejects_a_chunk_longer_than_the_packet);
	tcase_add_test(tc, test_cap_sctp_rejects_a_data_chunk_shorter_than_its_header);
	tcase_add_test(tc, test_cap_sctp_rejects_a_zero_length_chunk);
	tcase_add_test(tc, test_cap_sctp_rejects_trailing_bytes_shorter_than_a_chunk_header);
	tc = tc_new(s, "padding");
	tcase_add_test(tc, test_cap_sctp_accepts_a_last_chunk_without_padding);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(cap_sctp_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
