/*
 * check_eng_run.c - eng_run() over streamed input: a gzip capture large enough that the
 * inflated bytes behind the reader are given back while it runs, on one core (reader lag),
 * on two (the threaded reader gives back what every worker has finished) and as a mapped
 * file (sharded reader). Every SIP message kept must still hold its own bytes afterwards: a
 * summary that referred to given-back memory would read zeros here. The messages also come out
 * in capture order, each once: on several cores they are merged from the workers in parts on
 * as many threads (40,000 messages make 2, 3 and 4 parts). A mapped file's engines start their
 * message arrays with address space for it (eng_config.msgs_reserve, set by eng_run()); given
 * room for 1,024 messages only, the arrays grow past it, and given less than that they start
 * small: every message still comes out, in order, with its bytes. The sharded reader's record
 * lists start as parts of one block; a capture of small records (62 bytes, far more to a chunk
 * than a list's part holds) makes them move to blocks of their own, and at 64 threads the
 * block has parts for only some of the lists; every record must still reach its engine in
 * order. Read with pread(), the sharded reader never maps the file's pages in; read through
 * the mapping, it gives them back. Times that go back and repeat (within a worker and across
 * them) still come out in the order of time, then offset, and Call-IDs spread over several
 * workers make the same calls, at every core count and with either reader: the workers sort
 * their own messages and write the keys (times, Call-ID hashes) the merge reads
 * (eng_msgs_sort()).
 */
#include "config.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>
#include <zlib.h>

#include "sipnab/eng_run.h"

#include "smaps.h"
#include "udp_pcap.h"

#define MSGS 40000u /* ~24 MB of capture: several reader windows and gzip blocks */

static char gz_path[64];
static char plain_path[64];

/* Record @p i: an OPTIONS request with Call-ID opt-<cid> (and From tag cid), CSeq @p cseq,
 * at @p sec.@p usec, from host 10.0.<i%200>.1 to 10.0.0.2 (many host pairs for the workers). */
static size_t make_record_at(uint8_t *buf, uint32_t i, uint32_t cid, uint32_t cseq,
			     uint32_t sec, uint32_t usec)
{
	char sip[512];
	int n = snprintf(sip, sizeof(sip),
			 "OPTIONS sip:b@10.0.0.2 SIP/2.0\r\n"
			 "Via: SIP/2.0/UDP 10.0.%u.1:5060;branch=z9hG4bK%u\r\n"
			 "From: <sip:a@10.0.0.1>;tag=%u\r\nTo: <sip:b@10.0.0.2>\r\n"
			 "Call-ID: opt-%u@10.0.0.1\r\nCSeq: %u OPTIONS\r\nMax-Forwards: 70\r\n"
			 "Content-Length: 0\r\n\r\n",
			 i % 200, i, cid, cid, cseq);
	const uint8_t src[4] = {10, 0, (uint8_t)(i % 200), 1}, dst[4] = {10, 0, 0, 2};

	return udp_pcap_record(buf, sec, usec, src, 5060, dst, 5060, sip, (size_t)n);
}

/* One Ethernet/IPv4/UDP record carrying an OPTIONS request with Call-ID opt-<i>. */
static size_t make_record(uint8_t *buf, uint32_t i)
{
	return make_record_at(buf, i, i, 1, 1767225600u + i / 100, (i % 100) * 10000u);
}

static void setup(void)
{
	uint8_t hdr[UDP_PCAP_HDR];
	uint8_t rec[1024];
	gzFile gz;
	FILE *plain;
	int fd;

	strcpy(gz_path, "/tmp/check_eng_run.XXXXXX");
	fd = mkstemp(gz_path);
	ck_assert_int_ge(fd, 0);
	close(fd);
	strcpy(plain_path, "/tmp/check_eng_run_p.XXXXXX");
	fd = mkstemp(plain_path);
	ck_assert_int_ge(fd, 0);
	close(fd);
	gz = gzopen(gz_path, "wb1");
	plain = fopen(plain_path, "wb");
	ck_assert_ptr_nonnull(gz);
	ck_assert_ptr_nonnull(plain);
	udp_pcap_header(hdr);
	gzwrite(gz, hdr, sizeof(hdr));
	fwrite(hdr, 1, sizeof(hdr), plain);
	for (uint32_t i = 0; i < MSGS; i++) {
		size_t n = make_record(rec, i);

		ck_assert_int_eq(gzwrite(gz, rec, (unsigned)n), (int)n);
		ck_assert_uint_eq(fwrite(rec, 1, n, plain), n);
	}
	ck_assert_int_eq(gzclose(gz), Z_OK);
	ck_assert_int_eq(fclose(plain), 0);
}

static void teardown(void)
{
	unlink(gz_path);
	unlink(plain_path);
}

/*
 * Run the engine over @p path on @p cores and check every message's own bytes; without
 * copy_messages, streamed input keeps none (raw NULL) and a mapped file still refers to its
 * own.
 */
/* eng_run() over the file at @p path; *m is the merge to free after the result. */
static struct eng_result *run_file(const char *path, uint32_t cores, bool transient, bool copy,
				   size_t reserve, struct cap_merge **m)
{
	struct cap_reader *rd;
	struct eng_run_config cfg;
	struct sn_diag diag = {0};

	ck_assert_int_eq(cap_reader_open(path, &rd, &diag), SN_OK);
	ck_assert(cap_reader_transient(rd) == transient);
	*m = cap_merge_new(&rd, 1);
	memset(&cfg, 0, sizeof(cfg));
	cfg.cores = cores;
	cfg.eng.rtp_heuristic = true;
	cfg.eng.copy_messages = copy;
	cfg.eng.msgs_reserve = reserve; /* 0: eng_run() chooses */
	return eng_run(*m, &cfg, NULL, NULL);
}

static void run_reserved(const char *path, uint32_t cores, bool transient, bool copy,
			 size_t reserve)
{
	struct cap_merge *m;
	struct eng_result *r = run_file(path, cores, transient, copy, reserve, &m);
	uint32_t seen_last = 0;

	ck_assert_uint_eq(r->msg_count, MSGS);
	for (uint32_t i = 1; i < r->msg_count; i++) {
		const struct eng_msg *a = r->msgs[i - 1], *b = r->msgs[i];

		/* one message per record here: the offsets alone order them */
		if (!(a->ts_ns <= b->ts_ns && a->offset < b->offset)) {
			ck_abort_msg("messages %u and %u out of order (offsets %llu, %llu)", i - 1, i,
				     (unsigned long long)a->offset, (unsigned long long)b->offset);
		}
	}
	for (uint32_t i = 0; i < r->msg_count; i++) {
		const struct eng_msg *msg = r->msgs[i];
		char want[64];

		snprintf(want, sizeof(want), "Call-ID: %s\r\n", msg->call_id);
		if (transient && !copy) {
			ck_assert_ptr_null(msg->raw);
			ck_assert_uint_eq(msg->raw_len, 0);
			continue;
		}
		ck_assert_uint_gt(msg->raw_len, 40);
		ck_assert_msg(memcmp(msg->raw, "OPTIONS sip:b@10.0.0.2 SIP/2.0\r\n", 32) == 0,
			      "message %u (%s) lost its bytes", i, msg->call_id);
		ck_assert_msg(memmem(msg->raw, msg->raw_len, want, strlen(want)) != NULL,
			      "message %u bytes are not its own (%s)", i, msg->call_id);
	}
	for (uint32_t i = 0; i < r->msg_count; i++) {
		seen_last += strcmp(r->msgs[i]->call_id, "opt-39999@10.0.0.1") == 0;
	}
	ck_assert_uint_eq(seen_last, 1);
	eng_result_free(r);
	cap_merge_free(m);
}

static void run_and_check(const char *path, uint32_t cores, bool transient, bool copy)
{
	run_reserved(path, cores, transient, copy, 0);
}

START_TEST(gzip_one_core)
{
	run_and_check(gz_path, 1, true, true);
}
END_TEST

START_TEST(gzip_two_cores)
{
	run_and_check(gz_path, 2, true, true);
}
END_TEST

START_TEST(gzip_three_cores)
{
	run_and_check(gz_path, 3, true, true);
}
END_TEST

START_TEST(mapped_sharded)
{
	run_and_check(plain_path, 2, false, false);
}
END_TEST

START_TEST(mapped_sharded_four)
{
	run_and_check(plain_path, 4, false, false);
}
END_TEST

/*
 * Without the file's read lease (SIPNAB_MAPPED=0, or the file open for writing elsewhere) the
 * sharded reader reads a file's chunks with pread() into buffers of its own, so nothing of the
 * file's mapping is ever mapped in (the summaries refer to their messages' bytes there, read
 * in only when shown), and it gives nothing back: the mapping's Rss is 0 kB after the run.
 * Read through the mapping instead (under the lease, or SIPNAB_MAPPED=1), the chunks are
 * mapped in and given back as every thread finishes them, in whole 2 MiB blocks: at most one
 * stays (4 kB did on the development machine; without the give-back, 11 MB of the 24 MB
 * file).
 */
static unsigned long long mapping_rss_after_run(uint32_t cores)
{
	struct cap_merge *m;
	struct eng_result *r = run_file(plain_path, cores, false, false, 0, &m);
	const uint8_t *map = cap_reader_map(cap_merge_single(m));
	unsigned long long kb;

	ck_assert_uint_eq(r->msg_count, MSGS);
	ck_assert_ptr_nonnull(map);
	kb = mapping_rss_kb(map);
	eng_result_free(r);
	cap_merge_free(m);
	return kb;
}

START_TEST(sharded_mapping_untouched)
{
	unsigned long long kb;

	int wfd;

	setenv("SIPNAB_SPLIT_CHUNK", "1048576", 1); /* a chunk boundary every MiB */
	setenv("SIPNAB_MAPPED", "0", 1);
	ck_assert_uint_eq(mapping_rss_after_run(2), 0);
	ck_assert_uint_eq(mapping_rss_after_run(3), 0);
	setenv("SIPNAB_MAPPED", "1", 1);
	kb = mapping_rss_after_run(2);
	ck_assert_msg(kb <= 2 * 1024, "read through the mapping, %llu kB stay mapped in", kb);
	unsetenv("SIPNAB_MAPPED");
	kb = mapping_rss_after_run(2);
	ck_assert_msg(kb <= 2 * 1024, "under the lease, %llu kB stay mapped in", kb);
	/* open for writing: no lease, so never the mapping (a cut would lose its pages) */
	wfd = open(plain_path, O_WRONLY);
	ck_assert_int_ge(wfd, 0);
	ck_assert_uint_eq(mapping_rss_after_run(2), 0);
	ck_assert_uint_eq(mapping_rss_after_run(3), 0);
	close(wfd);
	unsetenv("SIPNAB_SPLIT_CHUNK");
}
END_TEST

START_TEST(gzip_no_copies)
{
	run_and_check(gz_path, 2, true, false);
}
END_TEST

START_TEST(mapped_one_core)
{
	run_and_check(plain_path, 1, false, false);
}
END_TEST

START_TEST(mapped_past_reservation)
{
	run_reserved(plain_path, 1, false, false, 1024 * sizeof(struct eng_msg));
	run_reserved(plain_path, 2, false, false, 1024 * sizeof(struct eng_msg));
}
END_TEST

START_TEST(mapped_reservation_too_small)
{
	run_reserved(plain_path, 1, false, false, 1023 * sizeof(struct eng_msg));
	run_reserved(plain_path, 2, false, false, 1);
}
END_TEST

/*
 * Small records: OPTIONS i, then SMALL_PER_MSG UDP packets of 4 payload bytes between the same
 * two hosts, for SMALL_MSGS messages; read in 64 KiB chunks, a list's part holds 256 records
 * (2 threads) or 170 (3) where a chunk has about 800 for each thread.
 */
#define SMALL_MSGS    2000u
#define SMALL_PER_MSG 40u

static void run_small(const char *path, uint32_t cores, struct eng_stats *st)
{
	struct cap_merge *m;
	struct eng_result *r = run_file(path, cores, false, false, 0, &m);

	ck_assert_uint_eq(r->msg_count, SMALL_MSGS);
	for (uint32_t i = 0; i < r->msg_count; i++) {
		const struct eng_msg *msg = r->msgs[i];
		char want[64];

		snprintf(want, sizeof(want), "Call-ID: opt-%u@10.0.0.1\r\n", i);
		ck_assert_msg(i == 0 || r->msgs[i - 1]->offset < msg->offset,
			      "message %u out of order", i);
		ck_assert_msg(msg->raw && memmem(msg->raw, msg->raw_len, want, strlen(want)),
			      "message %u is not OPTIONS %u", i, i);
	}
	*st = r->stats;
	eng_result_free(r);
	cap_merge_free(m);
}

START_TEST(mapped_small_records)
{
	char path[64] = "/tmp/check_eng_run_s.XXXXXX";
	uint8_t rec[1024];
	struct eng_stats one, many;
	FILE *f = udp_pcap_create(path);

	ck_assert_ptr_nonnull(f);
	for (uint32_t i = 0; i < SMALL_MSGS; i++) {
		const uint8_t src[4] = {10, 0, (uint8_t)(i % 200), 1}, dst[4] = {10, 0, 0, 2};
		size_t n = make_record(rec, i);

		ck_assert_uint_eq(fwrite(rec, 1, n, f), n);
		for (uint32_t k = 0; k < SMALL_PER_MSG; k++) {
			n = udp_pcap_record(rec, 1767225600u + i / 100, (i % 100) * 10000u + k + 1,
					    src, 4000, dst, 4002, "abcd", 4);
			ck_assert_uint_eq(n, UDP_PCAP_OVERHEAD + 4);
			ck_assert_uint_eq(fwrite(rec, 1, n, f), n);
		}
	}
	ck_assert_int_eq(fclose(f), 0);
	run_small(path, 1, &one);
	ck_assert_uint_eq(one.packets, SMALL_MSGS * (1 + SMALL_PER_MSG));
	ck_assert_uint_eq(one.other_packets, SMALL_MSGS * SMALL_PER_MSG);
	setenv("SIPNAB_SPLIT_CHUNK", "65536", 1);
	/* 64 threads: more sets of lists than the shared block holds (eng_split.c,
	 * SPLIT_LIST_MEM_MAX), the later ones start empty */
	for (uint32_t cores = 2; cores <= 64; cores = cores == 3 ? 64 : cores + 1) {
		run_small(path, cores, &many);
		ck_assert_uint_eq(many.packets, one.packets);
		ck_assert_uint_eq(many.bytes, one.bytes);
		ck_assert_uint_eq(many.other_packets, one.other_packets);
		ck_assert_uint_eq(many.sip_messages, SMALL_MSGS);
		ck_assert_uint_eq(many.decode_errors, 0);
	}
	unsetenv("SIPNAB_SPLIT_CHUNK");
	unlink(path);
}
END_TEST

/*
 * Messages whose times jump back and repeat: record i at second (i * 7) % 50, microsecond
 * (i % 3) * 1000 (150 distinct times, each about 87 times), over 200 host pairs (workers) and
 * within each; Call-ID opt-<i % 997>, so that a Call-ID's messages come from several workers
 * (the merge's keys carry the Call-IDs' hashes to the grouping). Enough messages for the merge
 * to run in three parts at three and four cores, cut among equal times. The order is time,
 * then offset, on every core count, with the sharded reader and with the single reader
 * (SIPNAB_NO_SPLIT), and the calls are the same: one per Call-ID, with the same messages.
 */
#define UNORDERED_MSGS 13000u
#define UNORDERED_CIDS 997u

struct unordered {
	uint64_t order; /* a hash of the messages' offsets, in order */
	uint64_t calls; /* a hash of the calls' Call-IDs and message offsets */
	uint32_t call_count;
};

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		h = (h ^ ((const uint8_t *)p)[i]) * 1099511628211u;
	}
	return h;
}

static void run_unordered(const char *path, uint32_t cores, struct unordered *u)
{
	struct cap_merge *m;
	struct eng_result *r = run_file(path, cores, false, false, 0, &m);

	ck_assert_uint_eq(r->msg_count, UNORDERED_MSGS);
	u->order = u->calls = 1469598103934665603u;
	for (uint32_t i = 0; i < r->msg_count; i++) {
		const struct eng_msg *a = i ? r->msgs[i - 1] : NULL, *b = r->msgs[i];

		ck_assert_msg(!a || a->ts_ns < b->ts_ns || (a->ts_ns == b->ts_ns && a->offset < b->offset),
			      "--cores %u: messages %u and %u out of order", cores, i - 1, i);
		u->order = fnv(u->order, &b->offset, sizeof(b->offset));
	}
	for (uint32_t k = 0; k < r->call_count; k++) {
		const struct eng_call *c = &r->calls[k];

		u->calls = fnv(u->calls, c->call_id, strlen(c->call_id) + 1);
		for (uint32_t j = 0; j < c->msg_count; j++) {
			u->calls = fnv(u->calls, &r->msgs[c->msgs[j]]->offset, sizeof(uint64_t));
		}
	}
	u->call_count = r->call_count;
	eng_result_free(r);
	cap_merge_free(m);
}

START_TEST(mapped_unordered_times)
{
	char path[64] = "/tmp/check_eng_run_u.XXXXXX";
	uint8_t rec[1024];
	struct unordered one, many;
	FILE *f = udp_pcap_create(path);

	ck_assert_ptr_nonnull(f);
	for (uint32_t i = 0; i < UNORDERED_MSGS; i++) {
		size_t len = make_record_at(rec, i, i % UNORDERED_CIDS, 1 + i / UNORDERED_CIDS,
					    1767225600u + (i * 7u) % 50u, (i % 3u) * 1000u);

		ck_assert_uint_eq(fwrite(rec, 1, len, f), len);
	}
	ck_assert_int_eq(fclose(f), 0);
	run_unordered(path, 1, &one);
	ck_assert_uint_eq(one.call_count, UNORDERED_CIDS);
	setenv("SIPNAB_SPLIT_CHUNK", "65536", 1);
	for (uint32_t cores = 2; cores <= 5; cores++) {
		/* 5: the single reader and its workers (SIPNAB_NO_SPLIT) at two cores */
		if (cores == 5) {
			setenv("SIPNAB_NO_SPLIT", "1", 1);
		}
		run_unordered(path, cores == 5 ? 2 : cores, &many);
		ck_assert_msg(many.order == one.order, "--cores %u orders the messages differently",
			      cores);
		ck_assert_uint_eq(many.call_count, one.call_count);
		ck_assert_msg(many.calls == one.calls, "--cores %u makes other calls", cores);
	}
	unsetenv("SIPNAB_NO_SPLIT");
	unsetenv("SIPNAB_SPLIT_CHUNK");
	unlink(path);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("eng_run");
	TCase *tc = tcase_create("streamed");
	SRunner *sr;
	int failed;

	tcase_add_unchecked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, gzip_one_core);
	tcase_add_test(tc, gzip_two_cores);
	tcase_add_test(tc, gzip_three_cores);
	tcase_add_test(tc, mapped_sharded);
	tcase_add_test(tc, mapped_sharded_four);
	tcase_add_test(tc, gzip_no_copies);
	tcase_add_test(tc, mapped_one_core);
	tcase_add_test(tc, mapped_past_reservation);
	tcase_add_test(tc, mapped_reservation_too_small);
	tcase_add_test(tc, mapped_small_records);
	tcase_add_test(tc, mapped_unordered_times);
	tcase_add_test(tc, sharded_mapping_untouched);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
