/*
 * check_eng_streams.c - the order of eng_result.streams, on one core and on several: by the
 * first packet's time (rtp.first_ns), then source, destination and SSRC. eng_merge.c places
 * each stream from its flow before the stream exists, so these cases are the ones where a
 * flow's own first packet is not the stream's:
 *   - a flow opened by a packet whose header does not parse (padding flag with a zero count:
 *     plausible, counted, no statistics) starts its stream at its first good packet, after
 *     a flow that its own worker opened later;
 *   - a flow whose first packet has a dynamic payload type (kept aside until the SDP is
 *     known) and one that turns dynamic after static packets;
 *   - a flow of bad-padding packets only (kept by the sequence heuristic, no statistics);
 *   - streams starting at the same instant on different host pairs (different workers);
 *   - 6,000 flows on 60 host pairs, more than a worker writes between two give-backs of its
 *     flows (2,048).
 * Every run, on 1 to 4 cores, must give the same streams in the same order; so must runs whose
 * engines have no address space for their flows (the arrays double from 256 flows), room for
 * some 1,200 (moved into at 256 flows, then outgrown) and room for every flow
 * (eng_config.flows_reserve; eng_run() gives these engines room for some 950 to 3,800 flows,
 * outgrown too at one to four cores).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>

#include "sipnab/eng_run.h"

#include "udp_pcap.h"

#define T0      1767225600u
#define FLOWS   6000u
#define PAIRS   60u

static char path[64];

/* An RTP packet: version 2, @p pt, @p seq, timestamp, @p ssrc and 20 bytes of payload; with
 * @p bad_pad the padding flag is set and the count (the last byte) is zero. */
static size_t rtp(uint8_t *p, uint8_t pt, uint16_t seq, uint32_t ssrc, bool bad_pad)
{
	memset(p, 0x55, 32);
	p[0] = bad_pad ? 0xa0 : 0x80;
	p[1] = pt;
	p[2] = (uint8_t)(seq >> 8);
	p[3] = (uint8_t)seq;
	p[4] = 0;
	p[5] = 0;
	p[6] = (uint8_t)(seq >> 8);
	p[7] = (uint8_t)seq;
	p[8] = (uint8_t)(ssrc >> 24);
	p[9] = (uint8_t)(ssrc >> 16);
	p[10] = (uint8_t)(ssrc >> 8);
	p[11] = (uint8_t)ssrc;
	if (bad_pad) {
		p[31] = 0;
	}
	return 32;
}

struct pkt {
	uint64_t us; /* since T0 */
	uint8_t host; /* source 10.1.<host>.1 -> 10.2.<host>.1 */
	uint16_t sport;
	uint32_t ssrc;
	uint8_t pt;
	uint16_t seq;
	bool bad_pad;
};

static int pkt_cmp(const void *a, const void *b)
{
	const struct pkt *x = a, *y = b;

	if (x->us != y->us) {
		return x->us < y->us ? -1 : 1;
	}
	return x->ssrc < y->ssrc ? -1 : (x->ssrc > y->ssrc);
}

static struct pkt *pkts;
static size_t npkts, pkts_cap;

static void add(uint64_t us, uint8_t host, uint16_t sport, uint32_t ssrc, uint8_t pt,
		uint16_t seq, bool bad_pad)
{
	if (npkts == pkts_cap) {
		pkts_cap = pkts_cap ? pkts_cap * 2 : 4096;
		pkts = realloc(pkts, pkts_cap * sizeof(*pkts));
		ck_assert_ptr_nonnull(pkts);
	}
	pkts[npkts++] = (struct pkt){us, host, sport, ssrc, pt, seq, bad_pad};
}

/* @p n packets of one flow, every 20 ms from @p us, sequence numbers from @p seq */
static void flow(uint64_t us, uint8_t host, uint16_t sport, uint32_t ssrc, uint8_t pt,
		 uint16_t seq, int n)
{
	for (int k = 0; k < n; k++) {
		add(us + (uint64_t)k * 20000u, host, sport, ssrc, pt, (uint16_t)(seq + k), false);
	}
}

static void setup(void)
{
	uint8_t rec[256], payload[64];
	FILE *f;

	npkts = 0;
	/* host 200: flow 0xA0 opened at 1 s by a bad packet, good from 1.030 s; flow 0xB0 of
	 * the same host pair from 1.010 s: B's stream comes first */
	add(1000000, 200, 6000, 0xA0, 0, 99, true);
	flow(1030000, 200, 6000, 0xA0, 0, 100, 5);
	flow(1010000, 200, 6002, 0xB0, 0, 100, 5);
	/* host 201: dynamic from the first packet; host 202: static, then dynamic */
	flow(1005000, 201, 6000, 0xC0, 111, 100, 5);
	flow(1006000, 202, 6000, 0xD0, 0, 100, 2);
	flow(1046000, 202, 6000, 0xD0, 101, 102, 3);
	/* host 203: bad-padding packets only, in sequence */
	for (uint16_t k = 0; k < 4; k++) {
		add(1020000 + k * 20000u, 203, 6000, 0xE0, 0, (uint16_t)(7 + k), true);
	}
	/* hosts 204-207: four streams starting at the same instant */
	for (uint8_t h = 204; h < 208; h++) {
		flow(1015000, h, 6000, 0xF0u + h, 8, 100, 4);
	}
	/* many flows on PAIRS host pairs, starting in a shuffled order of times */
	for (uint32_t i = 0; i < FLOWS; i++) {
		uint64_t start = 2000000u + (uint64_t)((i * 7919u) % FLOWS) * 500u;

		flow(start, (uint8_t)(i % PAIRS), (uint16_t)(10000 + 2 * (i / PAIRS)),
		     0x1000u + i, 0, 100, 3);
	}
	qsort(pkts, npkts, sizeof(*pkts), pkt_cmp);
	strcpy(path, "/tmp/check_eng_streams.XXXXXX");
	f = udp_pcap_create(path);
	ck_assert_ptr_nonnull(f);
	for (size_t i = 0; i < npkts; i++) {
		const struct pkt *p = &pkts[i];
		const uint8_t src[4] = {10, 1, p->host, 1}, dst[4] = {10, 2, p->host, 1};
		size_t len = rtp(payload, p->pt, p->seq, p->ssrc, p->bad_pad);
		size_t n = udp_pcap_record(rec, T0 + (uint32_t)(p->us / 1000000u),
					   (uint32_t)(p->us % 1000000u), src, p->sport, dst, 20000,
					   payload, len);

		ck_assert_uint_eq(fwrite(rec, 1, n, f), n);
	}
	ck_assert_int_eq(fclose(f), 0);
	free(pkts);
	pkts = NULL;
	pkts_cap = 0;
}

static void teardown(void)
{
	unlink(path);
}

static struct eng_result *run_reserved(uint32_t cores, size_t flows_reserve,
				       struct cap_merge **m)
{
	struct cap_reader *rd;
	struct eng_run_config cfg;
	struct sn_diag diag = {0};

	ck_assert_int_eq(cap_reader_open(path, &rd, &diag), SN_OK);
	*m = cap_merge_new(&rd, 1);
	memset(&cfg, 0, sizeof(cfg));
	cfg.cores = cores;
	cfg.eng.rtp_heuristic = true;
	cfg.eng.flows_reserve = flows_reserve; /* 0: eng_run() chooses */
	return eng_run(*m, &cfg, NULL, NULL);
}

static struct eng_result *run(uint32_t cores, struct cap_merge **m)
{
	return run_reserved(cores, 0, m);
}

/* eng_run()'s bytes of flows; none (1); some 1,200 flows, moved into at 256 and outgrown;
 * every flow (64 MiB) */
static const size_t reserves[] = {0, 1, (size_t)512 << 10, (size_t)64 << 20};

/* The order the streams must be in, written out for the test. */
static int expect_cmp(const struct eng_stream *a, const struct eng_stream *b)
{
	int c;

	if (a->rtp.first_ns != b->rtp.first_ns) {
		return a->rtp.first_ns < b->rtp.first_ns ? -1 : 1;
	}
	if ((c = sn_addr_cmp(&a->src, &b->src)) != 0) {
		return c;
	}
	if (a->sport != b->sport) {
		return a->sport < b->sport ? -1 : 1;
	}
	if ((c = sn_addr_cmp(&a->dst, &b->dst)) != 0) {
		return c;
	}
	if (a->dport != b->dport) {
		return a->dport < b->dport ? -1 : 1;
	}
	return a->ssrc < b->ssrc ? -1 : (a->ssrc > b->ssrc);
}

static int64_t ns(uint64_t us)
{
	return (int64_t)T0 * 1000000000 + (int64_t)us * 1000;
}

static uint32_t index_of(const struct eng_result *r, uint32_t ssrc)
{
	for (uint32_t i = 0; i < r->stream_count; i++) {
		if (r->streams[i].ssrc == ssrc) {
			return i;
		}
	}
	ck_abort_msg("no stream with SSRC 0x%x", ssrc);
	return 0;
}

START_TEST(order_and_identity)
{
	struct cap_merge *m1;
	struct eng_result *one = run(1, &m1);

	/* every flow above is a stream: 2 + 1 + 1 + 1 + 4 + FLOWS */
	ck_assert_uint_eq(one->stream_count, 9 + FLOWS);
	for (uint32_t i = 1; i < one->stream_count; i++) {
		ck_assert_msg(expect_cmp(&one->streams[i - 1], &one->streams[i]) < 0,
			      "streams %u and %u out of order", i - 1, i);
	}
	/* the cases, on one core */
	ck_assert_int_eq(one->streams[index_of(one, 0xA0)].rtp.first_ns, ns(1030000));
	ck_assert_uint_lt(index_of(one, 0xB0), index_of(one, 0xA0));
	ck_assert_int_eq(one->streams[index_of(one, 0xC0)].rtp.first_ns, ns(1005000));
	ck_assert_int_eq(one->streams[index_of(one, 0xD0)].rtp.first_ns, ns(1006000));
	ck_assert_uint_eq(one->streams[index_of(one, 0xE0)].rtp.packets, 0);
	for (uint32_t h = 204; h < 207; h++) {
		ck_assert_uint_eq(index_of(one, 0xF0u + h) + 1, index_of(one, 0xF0u + h + 1));
	}

	for (size_t k = 0; k < sizeof(reserves) / sizeof(reserves[0]); k++) {
		for (uint32_t cores = 1; cores <= 4; cores++) {
			struct cap_merge *m;
			struct eng_result *r;

			if (k == 0 && cores == 1) {
				continue; /* that is the run above */
			}
			r = run_reserved(cores, reserves[k], &m);
			ck_assert_uint_eq(r->stream_count, one->stream_count);
			for (uint32_t i = 0; i < r->stream_count; i++) {
				const struct eng_stream *a = &one->streams[i], *b = &r->streams[i];

				ck_assert_msg(expect_cmp(a, b) == 0 &&
					      a->rtp.packets == b->rtp.packets &&
					      a->rtp.last_ns == b->rtp.last_ns && a->pt == b->pt,
					      "cores %u, flows reserved %zu: stream %u differs (SSRC "
					      "0x%x against 0x%x)",
					      cores, reserves[k], i, b->ssrc, a->ssrc);
			}
			eng_result_free(r);
			cap_merge_free(m);
		}
	}
	eng_result_free(one);
	cap_merge_free(m1);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("eng_streams");
	TCase *tc = tcase_create("order");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, order_and_identity);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
