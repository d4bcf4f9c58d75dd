/*
 * check_sn_hash.c - the keyed hashes of sn_hash.h. The string hash of the Call-ID tables: equal
 * strings hash alike wherever they are stored and whatever their length (every tail length 0-7
 * after the 8-byte words), and distinct Call-IDs spread (no more than a handful of collisions
 * in 20,000). The key: a collision made for one key does not hold for others, so a capture
 * cannot make one without knowing the key; the byte hash takes in every byte and the length;
 * SIPNAB_HASH_SEED sets the key (the test runs itself again with it set).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <check.h>

#include "sipnab/sn_hash.h"

START_TEST(test_sn_str_hash_equal_strings_hash_alike)
{
	char a[64], b[80];

	for (size_t len = 0; len < 40; len++) {
		for (size_t i = 0; i < len; i++) {
			a[i] = (char)('a' + (i * 7 + len) % 26);
		}
		a[len] = '\0';
		/* the same bytes at another alignment */
		memcpy(b + 3, a, len + 1);
		ck_assert_uint_eq(sn_str_hash(a), sn_str_hash(b + 3));
		if (len > 0) {
			/* one byte changed anywhere changes the hash */
			for (size_t i = 0; i < len; i++) {
				char c = a[i];

				a[i] = (char)(c ^ 1);
				ck_assert_uint_ne(sn_str_hash(a), sn_str_hash(b + 3));
				a[i] = c;
			}
		}
	}
	/* a string and its prefix differ */
	ck_assert_uint_ne(sn_str_hash("12345678"), sn_str_hash("1234567"));
	ck_assert_uint_ne(sn_str_hash(""), sn_str_hash("\x01"));
}
END_TEST

static int cmp_u(const void *pa, const void *pb)
{
	unsigned int a = *(const unsigned int *)pa, b = *(const unsigned int *)pb;

	return a < b ? -1 : a > b;
}

START_TEST(test_sn_str_hash_spreads_call_ids)
{
	enum { N = 20000 };
	unsigned int *h = calloc(N, sizeof(*h));
	unsigned int collisions = 0;
	char id[64];

	ck_assert_ptr_nonnull(h);
	for (unsigned int i = 0; i < N; i++) {
		snprintf(id, sizeof(id), "%u-9428@10.%u.%u.1", i, i % 250, i / 250);
		h[i] = sn_str_hash(id);
	}
	qsort(h, N, sizeof(*h), cmp_u);
	for (unsigned int i = 1; i < N; i++) {
		collisions += h[i] == h[i - 1];
	}
	/* 32-bit values: about N^2 / 2^33 = 0.05 collisions are expected by chance */
	ck_assert_uint_le(collisions, 2);
	free(h);
}
END_TEST

/*
 * Two 16-byte keys that collide under key @p k by construction: each second word equals the
 * state its first word left, so both states become 0 (what anyone can do who knows the key).
 */
static void make_collision(uint64_t k, uint64_t a[2], uint64_t b[2])
{
	a[0] = UINT64_C(0x0102030405060708);
	b[0] = UINT64_C(0x2122232425262728);
	a[1] = sn_hash_step(k, a[0]);
	b[1] = sn_hash_step(k, b[0]);
}

START_TEST(test_sn_hash_collision_needs_the_key)
{
	unsigned int held = 0;

	for (uint64_t k = 1; k <= 200; k++) {
		uint64_t made = k * UINT64_C(0x9e3779b97f4a7c15);
		uint64_t a[2], b[2];

		make_collision(made, a, b);
		/* the construction works: under its own key the two collide */
		ck_assert_uint_eq(sn_hash_bytes(made, a, sizeof(a)), sn_hash_bytes(made, b, sizeof(b)));
		/* under keys one bit away they do not */
		for (uint64_t j = 0; j < 64; j++) {
			uint64_t other = made ^ (UINT64_C(1) << j);

			held += sn_hash_bytes(other, a, sizeof(a)) == sn_hash_bytes(other, b, sizeof(b));
		}
	}
	ck_assert_uint_eq(held, 0);
}
END_TEST

/*
 * The collision a multiply-xorshift step has under every key: words differing in bit 63 change
 * (h ^ w) * odd in bit 63 only, so h ^ (h >> 29) in bits 63 and 34 whatever h is, and a second
 * word differing in those bits cancels it. Keyed steps must not let it through.
 */
START_TEST(test_sn_hash_top_bit_difference_does_not_cancel)
{
	unsigned int held = 0;

	for (uint64_t k = 1; k <= 2000; k++) {
		uint64_t key = k * UINT64_C(0xd6e8feb86659fd93);
		uint64_t a[2] = {k, ~k};
		uint64_t b[2] = {k ^ (UINT64_C(1) << 63), ~k ^ (UINT64_C(1) << 63) ^ (UINT64_C(1) << 34)};

		held += sn_hash_bytes(key, a, sizeof(a)) == sn_hash_bytes(key, b, sizeof(b));
	}
	ck_assert_uint_eq(held, 0);
}
END_TEST

START_TEST(test_sn_hash_bytes_takes_every_byte_and_the_length)
{
	uint8_t buf[40];
	uint64_t k = sn_hash_key();

	memset(buf, 0x5a, sizeof(buf));
	for (size_t n = 0; n < sizeof(buf); n++) {
		uint64_t h = sn_hash_bytes(k, buf, n);

		/* a zero byte more is another key */
		buf[n] = 0;
		ck_assert_uint_ne(h, sn_hash_bytes(k, buf, n + 1));
		buf[n] = 0x5a;
		for (size_t i = 0; i < n; i++) {
			buf[i] ^= 0x80;
			ck_assert_uint_ne(h, sn_hash_bytes(k, buf, n));
			buf[i] ^= 0x80;
		}
	}
}
END_TEST

START_TEST(test_sn_str_hash_uses_the_process_key)
{
	const char *id = "a84b4c76e66710@pc33.atlanta.example.com";
	unsigned int differ = 0;

	ck_assert_uint_eq(sn_str_hash(id), sn_str_hash_keyed(sn_hash_key(), id));
	for (uint64_t k = 1; k <= 64; k++) {
		differ += sn_str_hash_keyed(sn_hash_key() ^ k, id) != sn_str_hash(id);
	}
	/* 32-bit values: equal by chance about once in 2^32 */
	ck_assert_uint_ge(differ, 63);
}
END_TEST

/* Runs in the copy of this program started with SIPNAB_HASH_SEED set (see main()). */
START_TEST(test_sn_hash_seed_sets_the_key)
{
	ck_assert_str_eq(getenv("SIPNAB_HASH_SEED"), "0x1234abcd5678ef90");
	ck_assert_uint_eq(sn_hash_key(), UINT64_C(0x1234abcd5678ef90));
}
END_TEST

int main(int argc, char **argv)
{
	Suite *s = suite_create("sn_hash");
	TCase *tc = tcase_create("hash");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_sn_str_hash_equal_strings_hash_alike);
	tcase_add_test(tc, test_sn_str_hash_spreads_call_ids);
	tcase_add_test(tc, test_sn_hash_collision_needs_the_key);
	tcase_add_test(tc, test_sn_hash_top_bit_difference_does_not_cancel);
	tcase_add_test(tc, test_sn_hash_bytes_takes_every_byte_and_the_length);
	tcase_add_test(tc, test_sn_str_hash_uses_the_process_key);
	if (getenv("SIPNAB_HASH_SEED")) {
		tcase_add_test(tc, test_sn_hash_seed_sets_the_key);
	}
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	if (!getenv("SIPNAB_HASH_SEED")) {
		/* the key is read before main() runs: check SIPNAB_HASH_SEED in a fresh copy of
		 * this program that has it set (its result is ours) */
		pid_t pid;
		int status = 0;

		fflush(NULL);
		pid = fork();
		if (pid == 0) {
			setenv("SIPNAB_HASH_SEED", "0x1234abcd5678ef90", 1);
			execv("/proc/self/exe", argv);
			_exit(127);
		}
		if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
		    WEXITSTATUS(status) != 0) {
			fprintf(stderr, "check_sn_hash: the run with SIPNAB_HASH_SEED set failed\n");
			failed++;
		}
	}
	(void)argc;
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
