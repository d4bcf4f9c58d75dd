/*
 * bench_decode.c - microbenchmark of cap_decoder_run() on the two record shapes of a carrier
 * capture: Ethernet / IPv4 / UDP / RTP (214 bytes, G.711 20 ms) and Ethernet / IPv4 / UDP / SIP
 * (a 200 OK of about 500 bytes). Headers carry valid IPv4 checksums; UDP checksums are 0.
 * Usage: bench/bench_decode (BENCH_SECONDS sets the time of one repetition).
 */
#include "config.h"

#include <string.h>

#include "sipnab/cap_decode.h"

#include "bench_int.h"

#define ETH_LEN	 14u
#define IPV4_LEN 20u
#define UDP_LEN	 8u
#define HDRS_LEN (ETH_LEN + IPV4_LEN + UDP_LEN)

static const char sip_payload[] =
	"SIP/2.0 200 OK\r\n"
	"Via: SIP/2.0/UDP 10.1.0.23:5060;branch=z9hG4bK5f3a9c1e0b27\r\n"
	"From: <sip:+15551001234@10.1.0.23>;tag=8a3f01c2\r\n"
	"To: <sip:+16662004711@10.2.0.17>;tag=77c1e09b\r\n"
	"Call-ID: 3c26700d5a4b1e7f@10.1.0.23\r\n"
	"CSeq: 2 BYE\r\n"
	"Server: carrier-core/1.0\r\n"
	"Content-Length: 0\r\n"
	"\r\n";

struct dec_ctx {
	struct cap_decoder *dec;
	struct cap_record rec;
	uint8_t frame[1600];
};

static void put_be16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

/* Ethernet / IPv4 / UDP around @p payload; returns the frame length. */
static uint32_t build_frame(uint8_t *f, const uint8_t *payload, uint32_t len, uint16_t sport,
			    uint16_t dport)
{
	static const uint8_t dst_mac[6] = {0x02, 0x00, 10, 2, 0, 17};
	static const uint8_t src_mac[6] = {0x02, 0x00, 10, 1, 0, 23};
	uint8_t *ip = f + ETH_LEN;
	uint8_t *udp = ip + IPV4_LEN;
	uint32_t sum = 0;

	memcpy(f, dst_mac, 6);
	memcpy(f + 6, src_mac, 6);
	put_be16(f + 12, 0x0800);
	memset(ip, 0, IPV4_LEN);
	ip[0] = 0x45;
	put_be16(ip + 2, (uint16_t)(IPV4_LEN + UDP_LEN + len));
	put_be16(ip + 6, 0x4000); /* DF */
	ip[8] = 64;
	ip[9] = 17;
	memcpy(ip + 12, src_mac + 2, 4);
	memcpy(ip + 16, dst_mac + 2, 4);
	for (uint32_t i = 0; i < IPV4_LEN; i += 2) {
		sum += (uint32_t)(ip[i] << 8 | ip[i + 1]);
	}
	while (sum >> 16) {
		sum = (sum & 0xffff) + (sum >> 16);
	}
	put_be16(ip + 10, (uint16_t)~sum);
	put_be16(udp, sport);
	put_be16(udp + 2, dport);
	put_be16(udp + 4, (uint16_t)(UDP_LEN + len));
	put_be16(udp + 6, 0);
	memcpy(udp + UDP_LEN, payload, len);
	return HDRS_LEN + len;
}

static uint64_t body_decode(void *arg, uint64_t iters)
{
	struct dec_ctx *c = arg;
	struct cap_packet pkt;
	uint64_t sum = 0;

	for (uint64_t i = 0; i < iters; i++) {
		c->rec.ts_ns += 20000;
		bench_keep(c->frame);
		if (cap_decoder_run(c->dec, &c->rec, &pkt) == SN_OK) {
			sum += pkt.payload_len + pkt.sport;
		}
	}
	return sum;
}

static int run_one(const char *name, const uint8_t *payload, uint32_t len, uint16_t sport,
		   uint16_t dport)
{
	struct dec_ctx c;
	struct cap_packet pkt;

	memset(&c, 0, sizeof(c));
	c.dec = cap_decoder_new(NULL);
	c.rec.caplen = c.rec.origlen = build_frame(c.frame, payload, len, sport, dport);
	c.rec.linktype = CAP_LINK_ETHERNET;
	c.rec.ts_ns = INT64_C(1767225600000000000);
	c.rec.data = c.frame;
	if (cap_decoder_run(c.dec, &c.rec, &pkt) != SN_OK || pkt.l4 != CAP_L4_UDP ||
	    pkt.payload_len != len) {
		fprintf(stderr, "bench_decode: %s does not decode\n", name);
		cap_decoder_free(c.dec);
		return 1;
	}
	bench_run(name, body_decode, &c);
	cap_decoder_free(c.dec);
	return 0;
}

int main(void)
{
	uint8_t rtp[12 + 160];
	int rc = 0;

	memset(rtp, 0xff, sizeof(rtp));
	memset(rtp, 0, 12);
	rtp[0] = 0x80;
	rtp[3] = 1;
	rtp[8] = 0x12;
	rc |= run_one("cap_decoder_run eth/ipv4/udp/rtp", rtp, sizeof(rtp), 16384, 20000);
	rc |= run_one("cap_decoder_run eth/ipv4/udp/sip", (const uint8_t *)sip_payload,
		      sizeof(sip_payload) - 1, 5060, 5060);
	return rc;
}
