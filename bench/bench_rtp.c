/*
 * bench_rtp.c - microbenchmark of the per-packet RTP work of a capture: rtp_hdr_parse() and
 * rtp_stream_update() over a synthetic G.711 stream (PT 0, 160-byte payload, 20 ms
 * packetisation: sequence +1, timestamp +160 and arrival +20 ms per packet, no loss, no
 * jitter). The packet is rewritten in place before each parse, as a new packet would arrive.
 * The stream restarts every STREAM_PACKETS packets (a 20-minute call): Wireshark's statistics,
 * which rtp_stream follows, stop counting sequence cycles once the RTP timestamp has advanced
 * by 2^31, so a stream of tens of millions of packets would not be representative.
 * Usage: bench/bench_rtp (BENCH_SECONDS sets the time of one repetition).
 */
#include "config.h"

#include <string.h>

#include "sipnab/rtp_stream.h"

#include "bench_int.h"

#define PKT_LEN	       (RTP_HDR_MIN_LEN + 160u)
#define STREAM_PACKETS 65536u

struct rtp_ctx {
	uint8_t pkt[PKT_LEN];
	uint16_t seq;
	uint32_t ts;
	int64_t arrival_ns;
	uint32_t in_stream; /* packets of the current stream */
	struct rtp_stream stream;
};

static void put_be16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void put_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

/* Next packet of the stream into c->pkt. */
static void next_packet(struct rtp_ctx *c)
{
	c->seq++;
	c->ts += 160;
	c->arrival_ns += 20000000;
	put_be16(c->pkt + 2, c->seq);
	put_be32(c->pkt + 4, c->ts);
}

static uint64_t body_parse(void *arg, uint64_t iters)
{
	struct rtp_ctx *c = arg;
	struct rtp_hdr h;
	uint64_t sum = 0;

	for (uint64_t i = 0; i < iters; i++) {
		next_packet(c);
		bench_keep(c->pkt);
		if (rtp_hdr_parse(c->pkt, sizeof(c->pkt), &h) == SN_OK) {
			sum += h.seq + h.payload.len;
		}
	}
	return sum;
}

static uint64_t body_parse_update(void *arg, uint64_t iters)
{
	struct rtp_ctx *c = arg;
	struct rtp_hdr h;
	uint64_t sum = 0;

	for (uint64_t i = 0; i < iters; i++) {
		next_packet(c);
		bench_keep(c->pkt);
		if (++c->in_stream > STREAM_PACKETS) {
			rtp_stream_init(&c->stream, 0x1234abcdu, 8000, 101);
			c->in_stream = 1;
		}
		if (rtp_hdr_parse(c->pkt, sizeof(c->pkt), &h) == SN_OK) {
			rtp_stream_update(&c->stream, c->arrival_ns, &h, PKT_LEN);
		}
		bench_keep(&c->stream);
	}
	return sum + (uint64_t)rtp_stream_lost(&c->stream);
}

static void ctx_init(struct rtp_ctx *c)
{
	memset(c, 0, sizeof(*c));
	c->pkt[0] = 0x80; /* V=2 */
	c->pkt[1] = 0x00; /* PT 0 PCMU */
	c->seq = 4711;
	c->ts = 123456;
	c->arrival_ns = INT64_C(1767225600000000000);
	put_be32(c->pkt + 8, 0x1234abcdu);
	memset(c->pkt + RTP_HDR_MIN_LEN, 0xff, 160);
	rtp_stream_init(&c->stream, 0x1234abcdu, 8000, 101);
}

int main(void)
{
	struct rtp_ctx c;

	ctx_init(&c);
	bench_run("rtp_hdr_parse", body_parse, &c);
	ctx_init(&c);
	bench_run("rtp_hdr_parse+rtp_stream_update", body_parse_update, &c);
	if (rtp_stream_lost(&c.stream) != 0 || c.stream.packets == 0) {
		fprintf(stderr, "bench_rtp: the synthetic stream reports %lld lost\n",
			(long long)rtp_stream_lost(&c.stream));
		return 1;
	}
	return 0;
}
