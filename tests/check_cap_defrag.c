/*
 * check_cap_defrag.c - unit tests of the IP fragment reassembler (cap_defrag.c), driven
 * through its private interface with hand-made IPv4 and IPv6 headers.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "sipnab/cap_decode.h"

#include "../src/capture/cap_decode_int.h"

static struct cap_defrag *f;
static struct cap_decode_stats st;
static uint8_t data[70000];
static const uint8_t *out;
static uint32_t out_len;

/* A 20-byte IPv4 header as the first fragment carries it (MF set, id 0x1234, proto UDP). */
static const uint8_t HDR4[20] = {0x45, 0, 0,   100, 0x12, 0x34, 0x20, 0, 64, 17,
				 0,    0, 192, 0,   2,	  1,	192,  0, 2,  2};

static void setup(void)
{
	uint32_t i;

	f = cap_defrag_new(1 << 20, 16, 1000);
	memset(&st, 0, sizeof(st));
	for (i = 0; i < sizeof(data); i++) {
		data[i] = (uint8_t)(i * 7 + 3);
	}
	out = NULL;
	out_len = 0;
}

static void teardown(void)
{
	cap_defrag_free(f);
}

static struct cap_defrag_key key4(uint16_t id)
{
	struct cap_defrag_key k;

	memset(&k, 0, sizeof(k));
	k.family = 4;
	k.proto = 17;
	k.id = id;
	memcpy(k.src, HDR4 + 12, 4);
	memcpy(k.dst, HDR4 + 16, 4);
	return k;
}

/* Add data[off, off+len) of datagram @p id as a fragment. */
static enum sn_status add4(uint16_t id, uint32_t off, uint32_t len, bool more, int64_t ts)
{
	struct cap_defrag_key k = key4(id);
	struct cap_defrag_frag fr = {HDR4, 20, data + off, len, off, more, ts};

	return cap_defrag_add(f, &k, &fr, &st, &out, &out_len);
}

/* The reassembled datagram is the header (length patched, MF cleared) + data[0, len). */
static void assert_datagram4(uint32_t len)
{
	ck_assert_uint_eq(out_len, 20 + len);
	ck_assert_uint_eq((out[2] << 8) | out[3], 20 + len);
	ck_assert_uint_eq(out[6], 0);
	ck_assert_uint_eq(out[7], 0);
	ck_assert_mem_eq(out + 8, HDR4 + 8, 12);
	ck_assert_mem_eq(out + 20, data, len);
	ck_assert_uint_eq(cap_defrag_pending_count(f), 0);
	ck_assert_uint_eq(cap_defrag_pending_len(f), 0);
}

START_TEST(test_cap_defrag_joins_fragments_in_order)
{
	ck_assert_int_eq(add4(1, 0, 800, true, 1), SN_ENOTFOUND);
	ck_assert_int_eq(add4(1, 800, 800, true, 2), SN_ENOTFOUND);
	ck_assert_int_eq(add4(1, 1600, 77, false, 3), SN_OK);
	assert_datagram4(1677);
	ck_assert_uint_eq(st.fragments, 3);
	ck_assert_uint_eq(st.reassembled, 1);
	ck_assert_uint_eq(st.frag_overlaps, 0);
}
END_TEST

START_TEST(test_cap_defrag_joins_fragments_in_reverse)
{
	ck_assert_int_eq(add4(1, 1600, 77, false, 1), SN_ENOTFOUND);
	ck_assert_int_eq(add4(1, 800, 800, true, 2), SN_ENOTFOUND);
	ck_assert_int_eq(cap_defrag_pending_count(f), 1);
	ck_assert_int_eq(add4(1, 0, 800, true, 3), SN_OK);
	assert_datagram4(1677);
}
END_TEST

START_TEST(test_cap_defrag_ignores_duplicates)
{
	ck_assert_int_eq(add4(1, 0, 800, true, 1), SN_ENOTFOUND);
	ck_assert_int_eq(add4(1, 0, 800, true, 2), SN_ENOTFOUND);
	ck_assert_int_eq(add4(1, 800, 40, false, 3), SN_OK);
	assert_datagram4(840);
	ck_assert_uint_eq(st.frag_overlaps, 0);
	ck_assert_uint_eq(st.fragments, 3);
}
END_TEST

START_TEST(test_cap_defrag_keeps_first_data_on_overlap)
{
	uint8_t keep[64];

	ck_assert_int_eq(add4(1, 0, 64, true, 1), SN_ENOTFOUND);
	ck_assert_int_eq(add4(1, 128, 64, false, 2), SN_ENOTFOUND);
	/* Same bytes over [32, 160): fills the hole, no conflict. */
	ck_assert_int_eq(add4(1, 32, 64, true, 3), SN_ENOTFOUND);
	ck_assert_uint_eq(st.frag_overlaps, 0);
	/* Different bytes over [48, 144) complete the datagram; the first bytes win. */
	memcpy(keep, data + 48, sizeof(keep));
	memset(data + 48, 0xee, 96);
	ck_assert_int_eq(add4(1, 48, 96, true, 4), SN_OK);
	ck_assert_uint_eq(st.frag_overlaps, 1);
	ck_assert_mem_eq(out + 20 + 48, keep, 48);
	ck_assert_uint_eq(out[20 + 96], 0xee); /* the hole [96, 128) came from the last one */
	ck_assert_uint_eq(out[20 + 127], 0xee);
	ck_assert_uint_eq(out_len, 20 + 192);
}
END_TEST

START_TEST(test_cap_defrag_keeps_datagrams_apart_by_key)
{
	ck_assert_int_eq(add4(1, 0, 16, true, 1), SN_ENOTFOUND);
	ck_assert_int_eq(add4(2, 16, 16, false, 1), SN_ENOTFOUND);
	ck_assert_uint_eq(cap_defrag_pending_count(f), 2);
	ck_assert_int_eq(add4(2, 0, 16, true, 1), SN_OK);
	ck_assert_uint_eq(out_len, 52);
	ck_assert_uint_eq(cap_defrag_pending_count(f), 1);
}
END_TEST

START_TEST(test_cap_defrag_rebuilds_ipv6_as_an_atomic_fragment)
{
	uint8_t hdr[48];
	struct cap_defrag_key k;
	struct cap_defrag_frag a = {hdr, 48, data, 16, 0, true, 1};
	struct cap_defrag_frag b = {hdr, 48, data + 16, 5, 16, false, 2};

	memset(hdr, 0, sizeof(hdr));
	hdr[0] = 0x60;
	hdr[5] = 24;
	hdr[6] = 44;
	hdr[40] = 17;
	hdr[43] = 1; /* offset 0, M */
	memset(&k, 0, sizeof(k));
	k.family = 6;
	k.id = 77;
	ck_assert_int_eq(cap_defrag_add(f, &k, &b, &st, &out, &out_len), SN_ENOTFOUND);
	ck_assert_int_eq(cap_defrag_add(f, &k, &a, &st, &out, &out_len), SN_OK);
	ck_assert_uint_eq(out_len, 48 + 21);
	ck_assert_uint_eq((out[4] << 8) | out[5], 8 + 21);
	ck_assert_uint_eq(out[42], 0);
	ck_assert_uint_eq(out[43], 0);
	ck_assert_uint_eq(out[40], 17);
	ck_assert_mem_eq(out + 48, data, 21);
}
END_TEST

START_TEST(test_cap_defrag_rejects_datagrams_beyond_65535_bytes)
{
	ck_assert_int_eq(add4(1, 65528, 8, true, 1), SN_EPARSE);
	/* Offset 65520 + 15 bytes fits the data limit, but not with the 20-byte header. */
	ck_assert_int_eq(add4(3, 65520, 15, false, 1), SN_ENOTFOUND);
	ck_assert_int_eq(add4(3, 0, 65520, true, 1), SN_EPARSE);
	ck_assert_uint_eq(st.reassembled, 0);
}
END_TEST

START_TEST(test_cap_defrag_rejects_a_conflicting_end)
{
	ck_assert_int_eq(add4(1, 64, 16, false, 1), SN_ENOTFOUND);
	ck_assert_int_eq(add4(1, 64, 24, false, 1), SN_EPARSE);
	ck_assert_int_eq(add4(1, 80, 16, true, 1), SN_EPARSE);
}
END_TEST

START_TEST(test_cap_defrag_times_out_on_its_own_fragments_and_flushes)
{
	ck_assert_int_eq(add4(1, 0, 64, true, 100), SN_ENOTFOUND);
	ck_assert_int_eq(add4(2, 0, 64, true, 600), SN_ENOTFOUND);
	ck_assert_uint_gt(cap_defrag_pending_len(f), 128);
	/* datagram 1's last fragment comes 1001 after its first: it starts over */
	ck_assert_int_eq(add4(1, 64, 8, false, 1101), SN_ENOTFOUND);
	ck_assert_uint_eq(st.frag_timeouts, 1);
	/* datagram 2's comes 500 after its first: complete, whatever time it is elsewhere */
	ck_assert_int_eq(add4(2, 64, 8, false, 1100), SN_OK);
	ck_assert_uint_eq(cap_defrag_pending_count(f), 1);
	/* end of input: what is left counts as timed out and its memory is freed */
	cap_defrag_flush(f, &st);
	ck_assert_uint_eq(cap_defrag_pending_count(f), 0);
	ck_assert_uint_eq(cap_defrag_pending_len(f), 0);
	ck_assert_uint_eq(st.frag_timeouts, 2);
}
END_TEST

START_TEST(test_cap_defrag_evicts_the_oldest_at_the_memory_bound)
{
	enum sn_status rc;
	uint32_t off;
	uint16_t id;

	cap_defrag_free(f);
	f = cap_defrag_new(16384, 1024, 1000000);
	for (id = 0; id < 40; id++) {
		ck_assert_int_eq(add4(id, 0, 1000, true, id), SN_ENOTFOUND);
		ck_assert_uint_le(cap_defrag_pending_len(f), 16384);
	}
	ck_assert_uint_lt(cap_defrag_pending_count(f), 40);
	ck_assert_uint_eq(st.frag_timeouts, 40 - cap_defrag_pending_count(f));
	/* The newest survives and completes; the oldest is gone. */
	ck_assert_int_eq(add4(39, 1000, 8, false, 50), SN_OK);
	ck_assert_int_eq(add4(0, 1000, 8, false, 50), SN_ENOTFOUND);
	/* A datagram larger than the whole budget is dropped, and takes the others with it. */
	rc = SN_ENOTFOUND;
	for (off = 0; off < 20000 && rc == SN_ENOTFOUND; off += 4000) {
		rc = add4(999, off, 4000, true, 60);
	}
	ck_assert_int_eq(rc, SN_ELIMIT);
	ck_assert_uint_eq(cap_defrag_pending_count(f), 0);
	ck_assert_uint_eq(cap_defrag_pending_len(f), 0);
}
END_TEST

START_TEST(test_cap_defrag_evicts_the_oldest_at_the_datagram_bound)
{
	uint16_t id;

	for (id = 0; id < 20; id++) {
		ck_assert_int_eq(add4(id, 0, 8, true, id), SN_ENOTFOUND);
	}
	ck_assert_uint_eq(cap_defrag_pending_count(f), 16);
	ck_assert_uint_eq(st.frag_timeouts, 4);
	ck_assert_int_eq(add4(3, 8, 8, false, 30), SN_ENOTFOUND); /* starts over, evicts 4 */
	ck_assert_uint_eq(st.frag_timeouts, 5);
	ck_assert_int_eq(add4(5, 8, 8, false, 30), SN_OK);
	ck_assert_uint_eq(cap_defrag_pending_count(f), 15);
}
END_TEST

static Suite *cap_defrag_suite(void)
{
	Suite *s = suite_create("cap_defrag");
	TCase *tc;

	tc = tcase_create("reassembly");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_cap_defrag_joins_fragments_in_order);
	tcase_add_test(tc, test_cap_defrag_joins_fragments_in_reverse);
	tcase_add_test(tc, test_cap_defrag_ignores_duplicates);
	tcase_add_test(tc, test_cap_defrag_keeps_datagrams_apart_by_key);
	tcase_add_test(tc, test_cap_defrag_rebuilds_ipv6_as_an_atomic_fragment);
	suite_add_tcase(s, tc);

	tc = tcase_create("overlap");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_cap_defrag_keeps_first_data_on_overlap);
	suite_add_tcase(s, tc);

	tc = tcase_create("malformed");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_cap_defrag_rejects_datagrams_beyond_65535_bytes);
	tcase_add_test(tc, test_cap_defrag_rejects_a_conflicting_end);
	suite_add_tcase(s, tc);

	tc = tcase_create("bounds");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_cap_defrag_times_out_on_its_own_fragments_and_flushes);
	tcase_add_test(tc, test_cap_defrag_evicts_the_oldest_at_the_memory_bound);
	tcase_add_test(tc, test_cap_defrag_evicts_the_oldest_at_the_datagram_bound);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(cap_defrag_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
