/*
 * check_eng_giveback.c - memory the engine gives back (sn_mem_release()) is never read again.
 *
 * The result's build turns each worker's candidate RTP flows into streams and gives the flows
 * it has finished with back to the kernel as it goes, so that the streams take their place
 * in memory (eng_merge.c, streams_fill()). A page given back reads as zeros, but on some
 * kernels even a read faults in a fresh page: freeing the flows by reading every flow's
 * packet list again put 16 MiB back for the 40,000 flows of 20,000 unique calls, the peak of
 * the whole run. Here sn_mem_release() makes the pages inaccessible instead (this file's
 * definition takes the place of src/base/sn_mem.c's), so any later read of them ends the
 * test with SIGSEGV, on any kernel; the streams must still come out complete. Under
 * AddressSanitizer the pages are poisoned instead, and a read of them is a use-after-poison:
 * AddressSanitizer's free() writes into the first bytes of the block it frees, and the flows
 * array starts on a page (a huge page: sn_malloc_huge()), which may be given back.
 *
 * The engine also faults in its arrays ahead of filling them (sn_mem_populate()). Here that
 * fills the range with a pattern instead: a range that held live entries, or that the engine
 * read before writing, would change the streams or the calls, and one past its array would be
 * a heap-buffer-overflow in the sanitizer builds. Arrays that other threads may be writing
 * while one faults them in take sn_mem_prefault(), which promises to keep the contents (the
 * build's legs and calls: CALLS calls, enough for the legs' step to run on two threads).
 */
#include "config.h"

#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <check.h>

#if defined(__SANITIZE_ADDRESS__)
#define GIVEBACK_POISON 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define GIVEBACK_POISON 1
#endif
#endif
#ifdef GIVEBACK_POISON
#include <sanitizer/asan_interface.h>
#endif

#include "sipnab/eng_run.h"

#include "udp_pcap.h"

#define FLOWS 6000u  /* several of the build's give-back steps (2,048 flows) */
#define PER_FLOW 6u  /* RTP packets per flow, consecutive: the heuristic keeps them */
#define CALLS 600u   /* SIP calls, an INVITE and its 200 each (eng_call.c: PAR_MIN is 256) */

static char path[64];
static uint64_t released_bytes; /* what the engine gave back, to be sure it did */
static uint64_t populated_bytes; /* what it faulted in ahead, likewise */

static uintptr_t page_size(void)
{
	long ps = sysconf(_SC_PAGESIZE);

	return ps > 0 ? (uintptr_t)ps : 4096;
}

/* In place of src/base/sn_mem.c's: the whole pages are made inaccessible (poisoned under
 * AddressSanitizer). */
void sn_mem_release(void *p, size_t n)
{
	uintptr_t page = page_size();
	uintptr_t a = ((uintptr_t)p + page - 1) & ~(page - 1);
	uintptr_t b = ((uintptr_t)p + n) & ~(page - 1);

	if (b > a) {
#ifdef GIVEBACK_POISON
		ASAN_POISON_MEMORY_REGION((void *)a, b - a);
#else
		ck_assert_int_eq(mprotect((void *)a, b - a, PROT_NONE), 0);
#endif
		released_bytes += b - a;
	}
}

/* In place of src/base/sn_mem.c's: the range is filled with a pattern. */
void sn_mem_populate(void *p, size_t n)
{
	memset(p, 0xa5, n);
	populated_bytes += n;
}

/* In place of src/base/sn_mem.c's: nothing (it promises to leave the contents alone, and other
 * threads may be writing the range). */
void sn_mem_prefault(void *p, size_t n)
{
	(void)p;
	(void)n;
}

/* Packet @p k of flow @p f: RTP (PCMU) over UDP, 10.1.x.y:port -> 10.2.0.1:20000. */
static size_t make_record(uint8_t *buf, uint32_t f, uint32_t k)
{
	uint8_t rtp[12 + 160];
	const uint8_t src[4] = {10, 1, (uint8_t)(f >> 8), (uint8_t)f}, dst[4] = {10, 2, 0, 1};
	uint64_t us = (uint64_t)k * 20000 + f * 7;
	uint32_t seq = 100 + k, ts = k * 160;

	rtp[0] = 0x80;
	rtp[1] = 0; /* PCMU */
	rtp[2] = (uint8_t)(seq >> 8);
	rtp[3] = (uint8_t)seq;
	rtp[4] = (uint8_t)(ts >> 24);
	rtp[5] = (uint8_t)(ts >> 16);
	rtp[6] = (uint8_t)(ts >> 8);
	rtp[7] = (uint8_t)ts;
	rtp[8] = 0x11;
	rtp[9] = (uint8_t)(f >> 16);
	rtp[10] = (uint8_t)(f >> 8);
	rtp[11] = (uint8_t)f;
	memset(rtp + 12, 0xff, sizeof(rtp) - 12);
	return udp_pcap_record(buf, 1767225600u + (uint32_t)(us / 1000000), (uint32_t)(us % 1000000),
			       src, (uint16_t)(10000 + 2 * (f % 20000)), dst, 20000, rtp,
			       sizeof(rtp));
}

/* Message @p k (0: the INVITE, 1: its 200) of call @p c, one second after the RTP. */
static size_t make_sip(uint8_t *buf, uint32_t c, uint32_t k)
{
	char msg[512];
	const uint8_t a[4] = {10, 3, (uint8_t)(c >> 8), (uint8_t)c}, b[4] = {10, 4, 0, 1};
	uint64_t us = 1000000u + (uint64_t)c * 1000 + k * 100;
	int n = snprintf(msg, sizeof(msg),
			 "%s\r\nVia: SIP/2.0/UDP 10.3.%u.%u:5060;branch=z9hG4bKc%u\r\n"
			 "From: <sip:a%u@example.com>;tag=f%u\r\nTo: <sip:b@example.com>%s%u\r\n"
			 "Call-ID: giveback-%u@example.com\r\nCSeq: 1 INVITE\r\n"
			 "Content-Length: 0\r\n\r\n",
			 k ? "SIP/2.0 200 OK" : "INVITE sip:b@example.com SIP/2.0", c >> 8, c & 255u,
			 c, c, c, k ? ";tag=t" : "", k ? c : 0u, c);

	ck_assert(n > 0 && (size_t)n < sizeof(msg));
	return udp_pcap_record(buf, 1767225600u + (uint32_t)(us / 1000000), (uint32_t)(us % 1000000),
			       k ? b : a, 5060, k ? a : b, 5060, (const uint8_t *)msg, (size_t)n);
}

static void setup(void)
{
	uint8_t rec[512];
	FILE *out;

	strcpy(path, "/tmp/check_eng_giveback.XXXXXX");
	out = udp_pcap_create(path);
	ck_assert_ptr_nonnull(out);
	/* every flow's k-th packet, then the (k+1)-th: flows interleave as calls do */
	for (uint32_t k = 0; k < PER_FLOW; k++) {
		for (uint32_t f = 0; f < FLOWS; f++) {
			size_t n = make_record(rec, f, k);

			ck_assert_uint_eq(fwrite(rec, 1, n, out), n);
		}
	}
	for (uint32_t c = 0; c < CALLS; c++) {
		for (uint32_t k = 0; k < 2; k++) {
			size_t n = make_sip(rec, c, k);

			ck_assert_uint_eq(fwrite(rec, 1, n, out), n);
		}
	}
	ck_assert_int_eq(fclose(out), 0);
}

static void teardown(void)
{
	unlink(path);
}

static void run(uint32_t cores)
{
	struct cap_reader *rd;
	struct cap_merge *m;
	struct eng_run_config cfg;
	struct eng_result *r;
	struct sn_diag diag = {0};
	uint64_t packets = 0;

	/* arrays of 64 KiB and more get mappings of their own, and free() unmaps them: the
	 * inaccessible pages of the flows' array go with it, never back to the heap (glibc;
	 * AddressSanitizer's allocator, which ignores this, maps large blocks on their own and
	 * holds freed ones in quarantine, unused) */
	(void)mallopt(M_MMAP_THRESHOLD, 64 * 1024);
	released_bytes = populated_bytes = 0;
	ck_assert_int_eq(cap_reader_open(path, &rd, &diag), SN_OK);
	m = cap_merge_new(&rd, 1);
	memset(&cfg, 0, sizeof(cfg));
	cfg.cores = cores;
	cfg.eng.rtp_heuristic = true;
	r = eng_run(m, &cfg, NULL, NULL);
	/* every flow became a stream with all its packets */
	ck_assert_uint_eq(r->stream_count, FLOWS);
	for (uint32_t i = 0; i < r->stream_count; i++) {
		packets += r->streams[i].rtp.packets;
	}
	ck_assert_uint_eq(packets, (uint64_t)FLOWS * PER_FLOW);
	/* and every call has its INVITE and its 200, in order, each message marked with it */
	ck_assert_uint_eq(r->call_count, CALLS);
	for (uint32_t i = 0; i < r->call_count; i++) {
		const struct eng_call *c = &r->calls[i];
		char want[64];

		snprintf(want, sizeof(want), "giveback-%u@example.com", i);
		ck_assert_str_eq(c->call_id, want);
		ck_assert_uint_eq(c->msg_count, 2);
		ck_assert_uint_eq(c->final_code, 200);
		for (uint32_t j = 0; j < c->msg_count; j++) {
			ck_assert_int_eq(r->msgs[c->msgs[j]]->call, (int32_t)i);
		}
	}
	/* and flows were given back on the way (at least a give-back step's worth) */
	ck_assert_msg(released_bytes >= 2048u * 64u, "only %llu bytes given back",
		      (unsigned long long)released_bytes);
	/* each flow's entry was faulted in ahead before it was written (a flow is far larger
	 * than 64 bytes) */
	ck_assert_msg(populated_bytes >= (uint64_t)FLOWS * 64u, "only %llu bytes faulted in ahead",
		      (unsigned long long)populated_bytes);
	eng_result_free(r);
	cap_merge_free(m);
}

START_TEST(one_core)
{
	run(1);
}
END_TEST

START_TEST(two_cores)
{
	run(2);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("eng_giveback");
	TCase *tc = tcase_create("flows");
	SRunner *sr;
	int failed;

	tcase_add_unchecked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, one_core);
	tcase_add_test(tc, two_cores);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
