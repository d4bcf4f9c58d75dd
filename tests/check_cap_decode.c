/*
 * check_cap_decode.c - unit tests of the L2-L4 decoder (cap_decode.c) with packets built here.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "sipnab/cap_decode.h"

/* --- packet builder ------------------------------------------------------------------------ */

struct pb {
	uint8_t b[70000];
	uint32_t n;
};

static void pb_u8(struct pb *pb, uint8_t v)
{
	pb->b[pb->n++] = v;
}

static void pb_u16(struct pb *pb, uint16_t v)
{
	pb_u8(pb, (uint8_t)(v >> 8));
	pb_u8(pb, (uint8_t)v);
}

static void pb_u32(struct pb *pb, uint32_t v)
{
	pb_u16(pb, (uint16_t)(v >> 16));
	pb_u16(pb, (uint16_t)v);
}

static void pb_put(struct pb *pb, const void *p, size_t n)
{
	memcpy(pb->b + pb->n, p, n);
	pb->n += (uint32_t)n;
}

static void pb_zero(struct pb *pb, size_t n)
{
	memset(pb->b + pb->n, 0, n);
	pb->n += (uint32_t)n;
}

static void pb_set16(struct pb *pb, uint32_t off, uint16_t v)
{
	pb->b[off] = (uint8_t)(v >> 8);
	pb->b[off + 1] = (uint8_t)v;
}

static void put_eth(struct pb *pb, uint16_t type)
{
	static const uint8_t macs[12] = {0, 1, 2, 3, 4, 5, 0, 6, 7, 8, 9, 10};

	pb_put(pb, macs, sizeof(macs));
	pb_u16(pb, type);
}

/* A VLAN-style tag: TCI, then the next ethertype. */
static void put_tag(struct pb *pb, uint16_t vid, uint16_t next)
{
	pb_u16(pb, (uint16_t)(0x2000 | vid));
	pb_u16(pb, next);
}

static uint32_t ipv4_begin(struct pb *pb, uint8_t proto, uint32_t src, uint32_t dst, uint16_t id,
			   uint16_t frag, uint32_t opt_len)
{
	uint32_t off = pb->n;

	pb_u8(pb, (uint8_t)(0x40 | (5 + opt_len / 4)));
	pb_u8(pb, 0);
	pb_u16(pb, 0);
	pb_u16(pb, id);
	pb_u16(pb, frag);
	pb_u8(pb, 64);
	pb_u8(pb, proto);
	pb_u16(pb, 0);
	pb_u32(pb, src);
	pb_u32(pb, dst);
	memset(pb->b + pb->n, 1, opt_len); /* NOP options */
	pb->n += opt_len;
	return off;
}

static void ipv4_end(struct pb *pb, uint32_t off)
{
	pb_set16(pb, off + 2, (uint16_t)(pb->n - off));
}

static const uint8_t V6A[16] = {0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
static const uint8_t V6B[16] = {0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2};

static uint32_t ipv6_begin(struct pb *pb, uint8_t nh, const uint8_t *src, const uint8_t *dst)
{
	uint32_t off = pb->n;

	pb_u32(pb, 0x60000000);
	pb_u16(pb, 0);
	pb_u8(pb, nh);
	pb_u8(pb, 64);
	pb_put(pb, src, 16);
	pb_put(pb, dst, 16);
	return off;
}

static void ipv6_end(struct pb *pb, uint32_t off)
{
	pb_set16(pb, off + 4, (uint16_t)(pb->n - off - 40));
}

/* An 8-byte extension header (hop-by-hop, routing, destination options) with PadN. */
static void put_ext8(struct pb *pb, uint8_t nh)
{
	pb_u8(pb, nh);
	pb_u8(pb, 0);
	pb_u8(pb, 1);
	pb_u8(pb, 4);
	pb_u32(pb, 0);
}

static uint32_t udp_begin(struct pb *pb, uint16_t sport, uint16_t dport)
{
	uint32_t off = pb->n;

	pb_u16(pb, sport);
	pb_u16(pb, dport);
	pb_u16(pb, 0);
	pb_u16(pb, 0);
	return off;
}

static void udp_end(struct pb *pb, uint32_t off)
{
	pb_set16(pb, off + 4, (uint16_t)(pb->n - off));
}

static const char PAYLOAD[] = "INVITE sip:bob@example.com SIP/2.0\r\n";
#define PAYLOAD_LEN ((uint32_t)sizeof(PAYLOAD) - 1)

/* IPv4/UDP 192.0.2.1:5060 -> 192.0.2.2:5070 carrying PAYLOAD. */
static void put_udp4(struct pb *pb)
{
	uint32_t ip = ipv4_begin(pb, 17, 0xc0000201, 0xc0000202, 7, 0, 0);
	uint32_t u = udp_begin(pb, 5060, 5070);

	pb_put(pb, PAYLOAD, PAYLOAD_LEN);
	udp_end(pb, u);
	ipv4_end(pb, ip);
}

static void put_udp6(struct pb *pb)
{
	uint32_t ip = ipv6_begin(pb, 17, V6A, V6B);
	uint32_t u = udp_begin(pb, 5060, 5070);

	pb_put(pb, PAYLOAD, PAYLOAD_LEN);
	udp_end(pb, u);
	ipv6_end(pb, ip);
}

/* --- expectations -------------------------------------------------------------------------- */

static struct cap_record make_rec(const struct pb *pb, uint32_t link, int64_t ts)
{
	struct cap_record r;

	memset(&r, 0, sizeof(r));
	r.ts_ns = ts;
	r.caplen = pb->n;
	r.origlen = pb->n;
	r.linktype = link;
	r.data = pb->b;
	return r;
}

/* --- shard key ----------------------------------------------------------------------------- */

static uint32_t host_hash4(uint32_t src, uint32_t dst)
{
	struct pb pb = {0};
	struct cap_record rec;
	uint32_t ip;

	put_eth(&pb, 0x0800);
	ip = ipv4_begin(&pb, 17, src, dst, 1, 0, 0);
	ipv4_end(&pb, ip);
	rec = make_rec(&pb, CAP_LINK_ETHERNET, 0);
	return cap_record_host_hash(&rec);
}

static uint32_t host_hash6(const uint8_t *src, const uint8_t *dst)
{
	struct pb pb = {0};
	struct cap_record rec;
	uint32_t ip;

	put_eth(&pb, 0x86dd);
	ip = ipv6_begin(&pb, 17, src, dst);
	pb_zero(&pb, 8);
	ipv6_end(&pb, ip);
	rec = make_rec(&pb, CAP_LINK_ETHERNET, 0);
	return cap_record_host_hash(&rec);
}

START_TEST(test_cap_decode_host_hash_is_symmetric_and_spreads_over_workers)
{
	uint32_t buckets2[2] = {0}, buckets4[4] = {0};
	struct pb pb = {0};
	struct cap_record rec;

	for (uint32_t i = 0; i < 1000; i++) {
		uint32_t a = 0x0a000000u + i * 7u, b = 0xc0a80000u + (i % 13u);
		uint32_t h = host_hash4(a, b);

		ck_assert_uint_ne(h, 0);
		ck_assert_uint_eq(h, host_hash4(b, a)); /* both directions: one worker */
		buckets2[h % 2]++;
		buckets4[h % 4]++;
	}
	/* every worker gets a fair share (a fixed low bit once sent everything to one) */
	for (int i = 0; i < 2; i++) {
		ck_assert_uint_gt(buckets2[i], 400);
	}
	for (int i = 0; i < 4; i++) {
		ck_assert_uint_gt(buckets4[i], 180);
	}
	/* IPv6: every byte of both addresses counts, and the direction does not */
	memset(buckets2, 0, sizeof(buckets2));
	uint32_t seen[1000];
	uint32_t distinct = 0;
	for (uint32_t i = 0; i < 1000; i++) {
		uint8_t a[16] = {0x20, 0x01, 0x0d, 0xb8}, b[16] = {0x20, 0x01, 0x0d, 0xb8, 0, 1};
		uint32_t h;

		a[4 + i % 12] = (uint8_t)(1 + i / 12); /* one byte differs, anywhere past the prefix */
		b[15] = (uint8_t)(i % 5);
		h = host_hash6(a, b);
		ck_assert_uint_ne(h, 0);
		ck_assert_uint_eq(h, host_hash6(b, a));
		buckets2[h % 2]++;
		seen[i] = h;
	}
	for (int i = 0; i < 2; i++) {
		ck_assert_uint_gt(buckets2[i], 400);
	}
	for (uint32_t i = 0; i < 1000; i++) {
		bool dup = false;

		for (uint32_t j = 0; j < i && !dup; j++) {
			dup = seen[j] == seen[i];
		}
		distinct += !dup;
	}
	ck_assert_uint_ge(distinct, 990); /* 1,000 different pairs */
	/* not IP: key 0 */
	put_eth(&pb, 0x0806);
	pb_zero(&pb, 28);
	rec = make_rec(&pb, CAP_LINK_ETHERNET, 0);
	ck_assert_uint_eq(cap_record_host_hash(&rec), 0);
}
END_TEST

static struct sn_addr addr4(uint32_t a)
{
	struct sn_addr x;

	memset(&x, 0, sizeof(x));
	x.family = 4;
	x.bytes[0] = (uint8_t)(a >> 24);
	x.bytes[1] = (uint8_t)(a >> 16);
	x.bytes[2] = (uint8_t)(a >> 8);
	x.bytes[3] = (uint8_t)a;
	return x;
}

static struct sn_addr addr6(const uint8_t *a)
{
	struct sn_addr x;

	x.family = 6;
	memcpy(x.bytes, a, 16);
	return x;
}

/* The packet every "plain" case must produce, with the given addresses. */
static struct cap_packet want_udp(struct sn_addr src, struct sn_addr dst, uint32_t wire_len)
{
	struct cap_packet w;

	memset(&w, 0, sizeof(w));
	w.ts_ns = 1000;
	w.src = src;
	w.dst = dst;
	w.sport = 5060;
	w.dport = 5070;
	w.l4 = CAP_L4_UDP;
	w.ip_proto = 17;
	w.payload = (const uint8_t *)PAYLOAD;
	w.payload_len = PAYLOAD_LEN;
	w.wire_len = wire_len;
	return w;
}

static void assert_pkt(const struct cap_packet *g, const struct cap_packet *w)
{
	ck_assert_int_eq(g->ts_ns, w->ts_ns);
	ck_assert_uint_eq(g->src.family, w->src.family);
	ck_assert_mem_eq(g->src.bytes, w->src.bytes, 16);
	ck_assert_uint_eq(g->dst.family, w->dst.family);
	ck_assert_mem_eq(g->dst.bytes, w->dst.bytes, 16);
	ck_assert_uint_eq(g->sport, w->sport);
	ck_assert_uint_eq(g->dport, w->dport);
	ck_assert_uint_eq(g->l4, w->l4);
	ck_assert_uint_eq(g->ip_proto, w->ip_proto);
	ck_assert_uint_eq(g->tcp_flags, w->tcp_flags);
	ck_assert_uint_eq(g->reassembled, w->reassembled);
	ck_assert_uint_eq(g->tunnels, w->tunnels);
	ck_assert_uint_eq(g->truncated, w->truncated);
	ck_assert_uint_eq(g->vlan, w->vlan);
	ck_assert_uint_eq(g->tcp_seq, w->tcp_seq);
	ck_assert_uint_eq(g->tcp_ack, w->tcp_ack);
	ck_assert_uint_eq(g->payload_len, w->payload_len);
	ck_assert_uint_eq(g->wire_len, w->wire_len);
	if (w->payload_len) {
		ck_assert_ptr_nonnull(g->payload);
		ck_assert_mem_eq(g->payload, w->payload, w->payload_len);
	}
}

/* Decode @p pb as @p link and expect SN_OK and @p w. */
static void expect_ok(const struct pb *pb, uint32_t link, const struct cap_packet *w)
{
	struct cap_decoder *d = cap_decoder_new(NULL);
	struct cap_record r = make_rec(pb, link, 1000);
	struct cap_packet pkt;

	ck_assert_int_eq(cap_decoder_run(d, &r, &pkt), SN_OK);
	assert_pkt(&pkt, w);
	cap_decoder_free(d);
}

/* --- link layers --------------------------------------------------------------------------- */

START_TEST(test_cap_decode_reads_udp_over_ipv4_ethernet)
{
	struct pb pb = {.n = 0};
	struct cap_packet w;

	put_eth(&pb, 0x0800);
	put_udp4(&pb);
	pb_zero(&pb, 6); /* Ethernet padding is not payload */
	w = want_udp(addr4(0xc0000201), addr4(0xc0000202), pb.n);
	expect_ok(&pb, CAP_LINK_ETHERNET, &w);
}
END_TEST

START_TEST(test_cap_decode_reads_udp_over_ipv6_ethernet)
{
	struct pb pb = {.n = 0};
	struct cap_packet w;

	put_eth(&pb, 0x86dd);
	put_udp6(&pb);
	w = want_udp(addr6(V6A), addr6(V6B), pb.n);
	expect_ok(&pb, CAP_LINK_ETHERNET, &w);
}
END_TEST

START_TEST(test_cap_decode_reports_one_vlan_tag)
{
	struct pb pb = {.n = 0};
	struct cap_packet w;

	put_eth(&pb, 0x8100);
	put_tag(&pb, 100, 0x0800);
	put_udp4(&pb);
	w = want_udp(addr4(0xc0000201), addr4(0xc0000202), pb.n);
	w.vlan = 100;
	expect_ok(&pb, CAP_LINK_ETHERNET, &w);
}
END_TEST

START_TEST(test_cap_decode_reports_outermost_of_three_tags)
{
	struct pb pb = {.n = 0};
	struct cap_packet w;

	put_eth(&pb, 0x88a8);
	put_tag(&pb, 10, 0x8100);
	put_tag(&pb, 20, 0x9100);
	put_tag(&pb, 30, 0x86dd);
	put_udp6(&pb);
	w = want_udp(addr6(V6A), addr6(V6B), pb.n);
	w.vlan = 10;
	expect_ok(&pb, CAP_LINK_ETHERNET, &w);
}
END_TEST

START_TEST(test_cap_decode_rejects_nine_vlan_tags)
{
	struct pb pb = {.n = 0};
	struct cap_decoder *d = cap_decoder_new(NULL);
	struct cap_record r;
	struct cap_packet pkt;
	int i;

	put_eth(&pb, 0x8100);
	for (i = 0; i < 9; i++) {
		put_tag(&pb, 5, i == 8 ? 0x0800 : 0x8100);
	}
	put_udp4(&pb);
	r = make_rec(&pb, CAP_LINK_ETHERNET, 1000);
	ck_assert_int_eq(cap_decoder_run(d, &r, &pkt), SN_EPARSE);
	ck_assert_uint_eq(cap_decoder_stats(d)->malformed, 1);
	cap_decoder_free(d);
}
END_TEST

START_TEST(test_cap_decode_skips_mpls_label_stack)
{
	struct pb pb = {.n = 0};
	struct cap_packet w;

	put_eth(&pb, 0x8847);
	pb_u32(&pb, (16u << 12) | 64);	       /* label 16, not bottom */
	pb_u32(&pb, (17u << 12) | 0x100 | 64); /* label 17, bottom of stack */
	put_udp4(&pb);
	w = want_udp(addr4(0xc0000201), addr4(0xc0000202), pb.n);
	expect_ok(&pb, CAP_LINK_ETHERNET, &w);
}
END_TEST

START_TEST(test_cap_decode_reads_linux_sll)
{
	struct pb pb = {.n = 0};
	struct cap_packet w;

	pb_u16(&pb, 0); /* packet type */
	pb_u16(&pb, 1); /* ARPHRD_ETHER */
	pb_u16(&pb, 6);
	pb_zero(&pb, 8);
	pb_u16(&pb, 0x0800);
	put_udp4(&pb);
	w = want_udp(addr4(0xc0000201), addr4(0xc0000202), pb.n);
	expect_ok(&pb, CAP_LINK_LINUX_SLL, &w);
}
END_TEST

START_TEST(test_cap_decode_reads_linux_sll2)
{
	struct pb pb = {.n = 0};
	struct cap_packet w;

	pb_u16(&pb, 0x86dd);
	pb_u16(&pb, 0);
	pb_u32(&pb, 3); /* ifindex */
	pb_u16(&pb, 1);
	pb_u8(&pb, 0);
	pb_u8(&pb, 6);
	pb_zero(&pb, 8);
	put_udp6(&pb);
	w = want_udp(addr6(V6A), addr6(V6B), pb.n);
	expect_ok(&pb, CAP_LINK_LINUX_SLL2, &w);
}
END_TEST

START_TEST(test_cap_decode_reads_bsd_null_in_both_byte_orders)
{
	struct pb le = {.n = 0};
	struct pb be = {.n = 0};
	struct pb loop = {.n = 0};
	struct cap_packet w;

	pb_put(&le, "\x1e\0\0\0", 4); /* AF_INET6 30, little-endian host */
	put_udp6(&le);
	w = want_udp(addr6(V6A), addr6(V6B), le.n);
	expect_ok(&le, CAP_LINK_NULL, &w);

	pb_u32(&be, 2); /* AF_INET, big-endian host */
	put_udp4(&be);
	w = want_udp(addr4(0xc0000201), addr4(0xc0000202), be.n);
	expect_ok(&be, CAP_LINK_NULL, &w);

	pb_u32(&loop, 24);
	put_udp6(&loop);
	w = want_udp(addr6(V6A), addr6(V6B), loop.n);
	expect_ok(&loop, CAP_LINK_LOOP, &w);
}
END_TEST

START_TEST(test_cap_decode_reads_raw_ipv4_and_ipv6)
{
	struct pb v4 = {.n = 0};
	struct pb v6 = {.n = 0};
	struct cap_packet w4, w6;

	put_udp4(&v4);
	put_udp6(&v6);
	w4 = want_udp(addr4(0xc0000201), addr4(0xc0000202), v4.n);
	w6 = want_udp(addr6(V6A), addr6(V6B), v6.n);
	expect_ok(&v4, CAP_LINK_RAW, &w4);
	expect_ok(&v6, CAP_LINK_RAW, &w6);
	expect_ok(&v4, CAP_LINK_IPV4, &w4);
	expect_ok(&v6, CAP_LINK_IPV6, &w6);
}
END_TEST

START_TEST(test_cap_decode_reports_arp_and_unknown_links_as_not_found)
{
	struct pb pb = {.n = 0};
	struct cap_decoder *d = cap_decoder_new(NULL);
	struct cap_record r;
	struct cap_packet pkt;

	put_eth(&pb, 0x0806);
	pb_zero(&pb, 28);
	r = make_rec(&pb, CAP_LINK_ETHERNET, 1000);
	ck_assert_int_eq(cap_decoder_run(d, &r, &pkt), SN_ENOTFOUND);
	ck_assert_uint_eq(cap_decoder_stats(d)->not_ip, 1);
	r.linktype = 147;
	ck_assert_int_eq(cap_decoder_run(d, &r, &pkt), SN_ENOTFOUND);
	ck_assert_uint_eq(cap_decoder_stats(d)->unknown_link, 1);
	ck_assert_uint_eq(cap_decoder_stats(d)->malformed, 0);
	cap_decoder_free(d);
}
END_TEST

/* --- network layer ------------------------------------------------------------------------- */

START_TEST(test_cap_decode_skips_ipv4_options)
{
	struct pb pb = {.n = 0};
	struct cap_packet w;
	uint32_t ip, u;

	ip = ipv4_begin(&pb, 17, 0x0a000001, 0x0a000002, 1, 0x4000, 12);
	u = udp_begin(&pb, 5060, 5070);
	pb_put(&pb, PAYLOAD, PAYLOAD_LEN);
	udp_end(&pb, u);
	ipv4_end(&pb, ip);
	w = want_udp(addr4(0x0a000001), addr4(0x0a000002), pb.n);
	expect_ok(&pb, CAP_LINK_RAW, &w);
}
END_TEST

START_TEST(test_cap_decode_walks_ipv6_hop_by_hop_and_destination_options)
{
	struct pb pb = {.n = 0};
	struct cap_packet w;
	uint32_t ip, u;

	put_eth(&pb, 0x86dd);
	ip = ipv6_begin(&pb, 0, V6A, V6B);
	put_ext8(&pb, 43);
	put_ext8(&pb, 60); /* a routing header, same layout */
	put_ext8(&pb, 17);
	u = udp_begin(&pb, 5060, 5070);
	pb_put(&pb, PAYLOAD, PAYLOAD_LEN);
	udp_end(&pb, u);
	ipv6_end(&pb, ip);
	w = want_udp(addr6(V6A), addr6(V6B), pb.n);
	expect_ok(&pb, CAP_LINK_ETHERNET, &w);
}
END_TEST

START_TEST(test_cap_decode_rejects_bad_ipv4_lengths)
{
	struct pb pb = {.n = 0};
	struct cap_decoder *d = cap_decoder_new(NULL);
	struct cap_record r;
	struct cap_packet pkt;

	put_udp4(&pb);
	r = make_rec(&pb, CAP_LINK_RAW, 1000);
	pb.b[0] = 0x44; /* IHL 4 */
	ck_assert_int_eq(cap_decoder_run(d, &r, &pkt), SN_EPARSE);
	pb.b[0] = 0x45;
	pb_set16(&pb, 2, 19); /* total < header */
	ck_assert_int_eq(cap_decoder_run(d, &r, &pkt), SN_EPARSE);
	pb_set16(&pb, 2, (uint16_t)(pb.n + 1)); /* more than present, record not cut */
	ck_assert_int_eq(cap_decoder_run(d, &r, &pkt), SN_EPARSE);
	pb.b[0] = 0x55; /* version 5 */
	ck_assert_int_eq(cap_decoder_run(d, &r, &pkt), SN_EPARSE);
	ck_assert_uint_eq(cap_decoder_stats(d)->malformed, 4);
	cap_decoder_free(d);
}
END_TEST

/* --- tunnels ------------------------------------------------------------------------------- */

START_TEST(test_cap_decode_follows_ipv4_in_ipv4)
{
	struct pb pb = {.n = 0};
	struct cap_packet w;
	uint32_t outer;

	put_eth(&pb, 0x0800);
	outer = ipv4_begin(&pb, 4, 0x0a000001, 0x0a000002, 1, 0, 0);
	put_udp4(&pb);
	ipv4_end(&pb, outer);
	w = want_udp(addr4(0xc0000201), addr4(0xc0000202), pb.n);
	w.tunnels = 1;
	expect_ok(&pb, CAP_LINK_ETHERNET, &w);
}
END_TEST

START_TEST(test_cap_decode_follows_ipv6_in_ipv4)
{
	struct pb pb = {.n = 0};
	struct cap_packet w;
	uint32_t outer;

	outer = ipv4_begin(&pb, 41, 0x0a000001, 0x0a000002, 1, 0, 0);
	put_udp6(&pb);
	ipv4_end(&pb, outer);
	w = want_udp(addr6(V6A), addr6(V6B), pb.n);
	w.tunnels = 1;
	expect_ok(&pb, CAP_LINK_RAW, &w);
}
END_TEST

START_TEST(test_cap_decode_follows_gre_with_key)
{
	struct pb pb = {.n = 0};
	struct cap_packet w;
	uint32_t outer;

	put_eth(&pb, 0x0800);
	outer = ipv4_begin(&pb, 47, 0x0a000001, 0x0a000002, 1, 0, 0);
	pb_u16(&pb, 0xa000); /* C and K */
	pb_u16(&pb, 0x0800);
	pb_u32(&pb, 0);	     /* checksum + reserved */
	pb_u32(&pb, 0xbeef); /* key */
	put_udp4(&pb);
	ipv4_end(&pb, outer);
	w = want_udp(addr4(0xc0000201), addr4(0xc0000202), pb.n);
	w.tunnels = 1;
	expect_ok(&pb, CAP_LINK_ETHERNET, &w);
}
END_TEST

START_TEST(test_cap_decode_follows_gre_transparent_ethernet)
{
	struct pb pb = {.n = 0};
	struct cap_decoder *d = cap_decoder_new(NULL);
	struct cap_record r;
	struct cap_packet pkt, w;
	uint32_t outer;

	put_eth(&pb, 0x0800);
	outer = ipv4_begin(&pb, 47, 0x0a000001, 0x0a000002, 1, 0, 0);
	pb_u16(&pb, 0x1000); /* S */
	pb_u16(&pb, 0x6558);
	pb_u32(&pb, 99);
	put_eth(&pb, 0x8100);
	put_tag(&pb, 7, 0x86dd); /* inner tags do not set the outer VLAN */
	put_udp6(&pb);
	ipv4_end(&pb, outer);
	w = want_udp(addr6(V6A), addr6(V6B), pb.n);
	w.tunnels = 1;
	r = make_rec(&pb, CAP_LINK_ETHERNET, 1000);
	ck_assert_int_eq(cap_decoder_run(d, &r, &pkt), SN_OK);
	assert_pkt(&pkt, &w);
	ck_assert_uint_eq(cap_decoder_stats(d)->tunnels, 1);
	cap_decoder_free(d);
}
END_TEST

START_TEST(test_cap_decode_rejects_gre_routing)
{
	struct pb pb = {.n = 0};
	struct cap_decoder *d = cap_decoder_new(NULL);
	struct cap_record r;
	struct cap_packet pkt;
	uint32_t outer;

	outer = ipv4_begin(&pb, 47, 0x0a000001, 0x0a000002, 1, 0, 0);
	pb_u16(&pb, 0x4000);
	pb_u16(&pb, 0x0800);
	put_udp4(&pb);
	ipv4_end(&pb, outer);
	r = make_rec(&pb, CAP_LINK_RAW, 1000);
	ck_assert_int_eq(cap_decoder_run(d, &r, &pkt), SN_EPARSE);
	cap_decoder_free(d);
}
END_TEST

START_TEST(test_cap_decode_stops_at_the_tunnel_depth_limit)
{
	struct pb pb = {.n = 0};
	struct cap_decode_limits lim = {.max_tunnel_depth = 2};
	struct cap_decoder *d = cap_decoder_new(&lim);
	struct cap_record r;
	struct cap_packet pkt;
	uint32_t o[3];
	int i;

	for (i = 0; i < 3; i++) {
		o[i] = ipv4_begin(&pb, 4, 0x0a000001 + (uint32_t)i, 0x0a000064, 1, 0, 0);
	}
	put_udp4(&pb);
	for (i = 2; i >= 0; i--) {
		ipv4_end(&pb, o[i]);
	}
	r = make_rec(&pb, CAP_LINK_RAW, 1000);
	ck_assert_int_eq(cap_decoder_run(d, &r, &pkt), SN_OK);
	ck_assert_uint_eq(pkt.tunnels, 2);
	ck_assert_uint_eq(pkt.l4, CAP_L4_OTHER);
	ck_assert_uint_eq(pkt.ip_proto, 4);
	ck_assert_uint_eq(pkt.src.bytes[3], 3);
	ck_assert_uint_eq(pkt.payload_len, 20 + 8 + PAYLOAD_LEN);
	cap_decoder_free(d);
}
END_TEST

/* --- transport ----------------------------------------------------------------------------- */

START_TEST(test_cap_decode_reads_tcp_with_options_and_flags)
{
	struct pb pb = {.n = 0};
	struct cap_packet w;
	uint32_t ip;

	put_eth(&pb, 0x0800);
	ip = ipv4_begin(&pb, 6, 0xc0000201, 0xc0000202, 1, 0, 0);
	pb_u16(&pb, 5060);
	pb_u16(&pb, 5070);
	pb_u32(&pb, 0x01020304);
	pb_u32(&pb, 0xa0b0c0d0);
	pb_u8(&pb, 8 << 4); /* data offset 8: 12 bytes of options */
	pb_u8(&pb, CAP_TCP_PSH | CAP_TCP_ACK);
	pb_u16(&pb, 65535);
	pb_u32(&pb, 0);
	pb_put(&pb, "\x01\x01\x08\x0a\0\0\0\1\0\0\0\2", 12);
	pb_put(&pb, PAYLOAD, PAYLOAD_LEN);
	ipv4_end(&pb, ip);
	w = want_udp(addr4(0xc0000201), addr4(0xc0000202), pb.n);
	w.l4 = CAP_L4_TCP;
	w.ip_proto = 6;
	w.tcp_flags = CAP_TCP_PSH | CAP_TCP_ACK;
	w.tcp_seq = 0x01020304;
	w.tcp_ack = 0xa0b0c0d0;
	expect_ok(&pb, CAP_LINK_ETHERNET, &w);
}
END_TEST

START_TEST(test_cap_decode_reads_sctp_chunks_as_payload)
{
	struct pb pb = {.n = 0};
	struct cap_packet w;
	uint32_t ip;

	ip = ipv6_begin(&pb, 132, V6A, V6B);
	pb_u16(&pb, 5060);
	pb_u16(&pb, 5070);
	pb_u32(&pb, 0x11111111); /* verification tag */
	pb_u32(&pb, 0);		 /* checksum */
	pb_put(&pb, PAYLOAD, PAYLOAD_LEN);
	ipv6_end(&pb, ip);
	w = want_udp(addr6(V6A), addr6(V6B), pb.n);
	w.l4 = CAP_L4_SCTP;
	w.ip_proto = 132;
	expect_ok(&pb, CAP_LINK_RAW, &w);
}
END_TEST

START_TEST(test_cap_decode_reports_other_protocols_with_ip_payload)
{
	struct pb pb = {.n = 0};
	struct cap_packet w;
	uint32_t ip;

	ip = ipv4_begin(&pb, 1, 0xc0000201, 0xc0000202, 1, 0, 0);
	pb_put(&pb, PAYLOAD, PAYLOAD_LEN);
	ipv4_end(&pb, ip);
	w = want_udp(addr4(0xc0000201), addr4(0xc0000202), pb.n);
	w.l4 = CAP_L4_OTHER;
	w.ip_proto = 1;
	w.sport = 0;
	w.dport = 0;
	expect_ok(&pb, CAP_LINK_RAW, &w);
}
END_TEST

/* --- truncation ---------------------------------------------------------------------------- */

START_TEST(test_cap_decode_returns_etrunc_when_the_udp_header_is_cut)
{
	struct pb pb = {.n = 0};
	struct cap_decoder *d = cap_decoder_new(NULL);
	struct cap_record r;
	struct cap_packet pkt;

	put_eth(&pb, 0x0800);
	put_udp4(&pb);
	r = make_rec(&pb, CAP_LINK_ETHERNET, 1000);
	r.caplen = 14 + 20 + 4;
	ck_assert_int_eq(cap_decoder_run(d, &r, &pkt), SN_ETRUNC);
	r.caplen = 10;
	ck_assert_int_eq(cap_decoder_run(d, &r, &pkt), SN_ETRUNC);
	ck_assert_uint_eq(cap_decoder_stats(d)->truncated, 2);
	ck_assert_uint_eq(cap_decoder_stats(d)->malformed, 0);
	cap_decoder_free(d);
}
END_TEST

START_TEST(test_cap_decode_flags_a_payload_cut_by_the_snap_length)
{
	struct pb pb = {.n = 0};
	struct cap_decoder *d = cap_decoder_new(NULL);
	struct cap_record r;
	struct cap_packet pkt, w;

	put_eth(&pb, 0x0800);
	put_udp4(&pb);
	r = make_rec(&pb, CAP_LINK_ETHERNET, 1000);
	r.caplen = 14 + 20 + 8 + 10;
	w = want_udp(addr4(0xc0000201), addr4(0xc0000202), pb.n);
	w.truncated = 1;
	w.payload_len = 10;
	ck_assert_int_eq(cap_decoder_run(d, &r, &pkt), SN_OK);
	assert_pkt(&pkt, &w);
	ck_assert_uint_eq(cap_decoder_stats(d)->truncated, 1);
	cap_decoder_free(d);
}
END_TEST

/* Bytes before the IP header for each link type (no VLAN tags). */
static uint32_t link_header_len(uint32_t link)
{
	switch (link) {
	case CAP_LINK_ETHERNET:
		return 14;
	case CAP_LINK_LINUX_SLL:
		return 16;
	case CAP_LINK_LINUX_SLL2:
		return 20;
	case CAP_LINK_NULL:
	case CAP_LINK_LOOP:
		return 4;
	default:
		return 0;
	}
}

START_TEST(test_cap_decode_never_reads_past_random_records)
{
	static const uint32_t links[] = {0, 1, 101, 108, 113, 228, 229, 276};
	struct cap_decode_limits lim = {.frag_max_bytes = 1 << 16, .frag_max_datagrams = 8};
	struct cap_decoder *d = cap_decoder_new(&lim);
	struct cap_packet pkt;
	uint32_t seed = 12345;
	size_t li;
	int i;

	for (li = 0; li < SN_ARRAY_SIZE(links); li++) {
		for (i = 0; i < 20000; i++) {
			struct cap_record r;
			uint32_t n, k;
			uint8_t *buf;

			seed = seed * 1103515245u + 12345u;
			n = (seed >> 16) % 200;
			buf = malloc(n ? n : 1); /* exact size, so ASan sees any overread */
			for (k = 0; k < n; k++) {
				seed = seed * 1103515245u + 12345u;
				buf[k] = (uint8_t)(seed >> 16);
			}
			/* Make IP versions and common ethertypes likely. */
			if (n > 20 && (i & 1)) {
				uint32_t at = link_header_len(links[li]);

				if (at < n) {
					buf[at] = (uint8_t)((i & 2) ? 0x45 : 0x60);
				}
				if (links[li] == 1) {
					buf[12] = (i & 2) ? 0x08 : 0x86;
					buf[13] = (i & 2) ? 0x00 : 0xdd;
				}
			}
			memset(&r, 0, sizeof(r));
			r.ts_ns = (int64_t)i * 1000000;
			r.caplen = n;
			r.origlen = n + ((i & 4) ? 100 : 0);
			r.linktype = links[li];
			r.data = buf;
			(void)cap_decoder_run(d, &r, &pkt);
			if (pkt.payload_len) {
				volatile uint8_t last = pkt.payload[pkt.payload_len - 1];

				(void)last;
				if (!pkt.reassembled) {
					ck_assert(pkt.payload >= buf);
					ck_assert(pkt.payload + pkt.payload_len <= buf + n);
				}
			}
			free(buf);
		}
	}
	cap_decoder_free(d);
}
END_TEST

/* --- fragments through the decoder --------------------------------------------------------- */

/* Fragment the UDP datagram (header + PAYLOAD) in 8-byte-aligned pieces of @p step bytes. */
static uint32_t frag4(struct pb *out, uint32_t max_out, uint32_t step)
{
	struct pb udp = {.n = 0};
	uint32_t u, off, count = 0;

	u = udp_begin(&udp, 5060, 5070);
	pb_put(&udp, PAYLOAD, PAYLOAD_LEN);
	udp_end(&udp, u);
	for (off = 0; off < udp.n && count < max_out; off += step) {
		struct pb *pb = &out[count++];
		uint32_t len = SN_MIN(step, udp.n - off);
		uint16_t fl = (uint16_t)(off / 8) | (off + len < udp.n ? 0x2000 : 0);
		uint32_t ip;

		pb->n = 0;
		put_eth(pb, 0x0800);
		ip = ipv4_begin(pb, 17, 0xc0000201, 0xc0000202, 0x1234, fl, 0);
		pb_put(pb, udp.b + off, len);
		ipv4_end(pb, ip);
	}
	return count;
}

START_TEST(test_cap_decode_reassembles_ipv4_fragments_in_reverse)
{
	static struct pb frags[8];
	struct cap_decoder *d = cap_decoder_new(NULL);
	struct cap_record r;
	struct cap_packet pkt, w;
	uint32_t n = frag4(frags, 8, 16);
	uint32_t i;

	ck_assert_uint_eq(n, 3);
	for (i = n; i-- > 1;) {
		r = make_rec(&frags[i], CAP_LINK_ETHERNET, 900 + i);
		ck_assert_int_eq(cap_decoder_run(d, &r, &pkt), SN_ENOTFOUND);
	}
	r = make_rec(&frags[0], CAP_LINK_ETHERNET, 1000);
	ck_assert_int_eq(cap_decoder_run(d, &r, &pkt), SN_OK);
	w = want_udp(addr4(0xc0000201), addr4(0xc0000202), frags[0].n);
	w.reassembled = 1;
	assert_pkt(&pkt, &w);
	ck_assert_uint_eq(cap_decoder_stats(d)->fragments, 3);
	ck_assert_uint_eq(cap_decoder_stats(d)->reassembled, 1);
	cap_decoder_free(d);
}
END_TEST

START_TEST(test_cap_decode_reassembles_ipv6_fragments)
{
	struct pb udp = {.n = 0};
	struct pb f1 = {.n = 0};
	struct pb f2 = {.n = 0};
	struct cap_decoder *d = cap_decoder_new(NULL);
	struct cap_record r;
	struct cap_packet pkt, w;
	uint32_t u, ip;

	u = udp_begin(&udp, 5060, 5070);
	pb_put(&udp, PAYLOAD, PAYLOAD_LEN);
	udp_end(&udp, u);

	ip = ipv6_begin(&f1, 0, V6A, V6B);
	put_ext8(&f1, 44); /* hop-by-hop stays in the unfragmentable part */
	pb_u8(&f1, 17);
	pb_u8(&f1, 0);
	pb_u16(&f1, 0 | 1);
	pb_u32(&f1, 0xcafe);
	pb_put(&f1, udp.b, 24);
	ipv6_end(&f1, ip);

	ip = ipv6_begin(&f2, 44, V6A, V6B);
	pb_u8(&f2, 17);
	pb_u8(&f2, 0);
	pb_u16(&f2, 24);
	pb_u32(&f2, 0xcafe);
	pb_put(&f2, udp.b + 24, udp.n - 24);
	ipv6_end(&f2, ip);

	r = make_rec(&f2, CAP_LINK_RAW, 500);
	ck_assert_int_eq(cap_decoder_run(d, &r, &pkt), SN_ENOTFOUND);
	r = make_rec(&f1, CAP_LINK_RAW, 1000);
	ck_assert_int_eq(cap_decoder_run(d, &r, &pkt), SN_OK);
	w = want_udp(addr6(V6A), addr6(V6B), f1.n);
	w.reassembled = 1;
	assert_pkt(&pkt, &w);
	cap_decoder_free(d);
}
END_TEST

START_TEST(test_cap_decode_times_out_fragments_on_their_own_time)
{
	static struct pb frags[8];
	struct cap_decode_limits lim = {.frag_timeout_ns = 1000000000};
	struct cap_decoder *d = cap_decoder_new(&lim);
	struct cap_record r;
	struct cap_packet pkt;
	struct pb other = {.n = 0};

	ck_assert_uint_eq(frag4(frags, 8, 16), 3);
	r = make_rec(&frags[0], CAP_LINK_ETHERNET, 0);
	ck_assert_int_eq(cap_decoder_run(d, &r, &pkt), SN_ENOTFOUND);
	r = make_rec(&frags[1], CAP_LINK_ETHERNET, 500000000);
	ck_assert_int_eq(cap_decoder_run(d, &r, &pkt), SN_ENOTFOUND);
	put_eth(&other, 0x0800);
	put_udp4(&other);
	r = make_rec(&other, CAP_LINK_ETHERNET, 1000000001);
	ck_assert_int_eq(cap_decoder_run(d, &r, &pkt), SN_OK);
	/* other traffic does not age the datagram (another worker would not have seen it) */
	ck_assert_uint_eq(cap_decoder_stats(d)->frag_timeouts, 0);
	/* its own last fragment, 1 s after its first, times it out and starts over */
	r = make_rec(&frags[2], CAP_LINK_ETHERNET, 1000000002);
	ck_assert_int_eq(cap_decoder_run(d, &r, &pkt), SN_ENOTFOUND);
	ck_assert_uint_eq(cap_decoder_stats(d)->frag_timeouts, 1);
	ck_assert_uint_eq(cap_decoder_stats(d)->reassembled, 0);
	/* end of input: the restarted datagram is dropped and counted */
	cap_decoder_flush(d);
	ck_assert_uint_eq(cap_decoder_stats(d)->frag_timeouts, 2);
	cap_decoder_free(d);
}
END_TEST

/* --- captures from the shared corpus ------------------------------------------------------- */

struct pcap_count {
	uint32_t records, udp, reassembled, tunnelled, tcp;
	uint64_t stat_fragments;
};

/* Minimal little-endian pcap reader; false when the file is absent. */
static bool count_pcap(const char *name, struct pcap_count *cnt)
{
	const char *base = getenv("SIPNAB_SHARED");
	char path[1024];
	FILE *fp;
	uint8_t gh[24], rh[16];
	struct cap_decoder *d;
	uint8_t *buf = malloc(262144);
	uint32_t link;

	memset(cnt, 0, sizeof(*cnt));
	snprintf(path, sizeof(path), "%s/pcaps/public/%s", base ? base : "/work/shared", name);
	fp = fopen(path, "rb");
	if (!fp) {
		free(buf);
		return false;
	}
	ck_assert_uint_eq(fread(gh, 1, 24, fp), 24);
	ck_assert_uint_eq(gh[0], 0xd4); /* microsecond, little-endian */
	link = (uint32_t)gh[20] | ((uint32_t)gh[21] << 8);
	d = cap_decoder_new(NULL);
	while (fread(rh, 1, 16, fp) == 16) {
		struct cap_record r;
		struct cap_packet pkt;
		uint32_t incl =
			rh[8] | (rh[9] << 8) | ((uint32_t)rh[10] << 16) | ((uint32_t)rh[11] << 24);
		uint32_t orig = rh[12] | (rh[13] << 8) | ((uint32_t)rh[14] << 16) |
				((uint32_t)rh[15] << 24);
		uint32_t sec =
			rh[0] | (rh[1] << 8) | ((uint32_t)rh[2] << 16) | ((uint32_t)rh[3] << 24);

		ck_assert_uint_le(incl, 262144);
		ck_assert_uint_eq(fread(buf, 1, incl, fp), incl);
		memset(&r, 0, sizeof(r));
		r.ts_ns = (int64_t)sec * 1000000000;
		r.caplen = incl;
		r.origlen = orig;
		r.linktype = link;
		r.data = buf;
		cnt->records++;
		if (cap_decoder_run(d, &r, &pkt) != SN_OK) {
			continue;
		}
		cnt->udp += pkt.l4 == CAP_L4_UDP;
		cnt->tcp += pkt.l4 == CAP_L4_TCP;
		cnt->reassembled += pkt.reassembled;
		cnt->tunnelled += pkt.tunnels > 0;
	}
	cnt->stat_fragments = cap_decoder_stats(d)->fragments;
	cap_decoder_free(d);
	fclose(fp);
	free(buf);
	return true;
}

START_TEST(test_cap_decode_matches_tshark_on_shared_captures)
{
	struct pcap_count c;

	/* Reference numbers from tshark: -Y udp, and frames 2 and 5 reassembled. */
	if (count_pcap("sngrep-ipv6frag.pcap", &c)) {
		ck_assert_uint_eq(c.records, 34);
		ck_assert_uint_eq(c.udp, 32);
		ck_assert_uint_eq(c.reassembled, 2);
		ck_assert_uint_eq(c.stat_fragments, 4);
	}
	if (count_pcap("heplify-ipip0.pcap", &c)) {
		ck_assert_uint_eq(c.records, 8);
		ck_assert_uint_eq(c.udp, 8);
		ck_assert_uint_eq(c.reassembled, 0);
	}
	/* Four SIP over TCP frames, two of them inside IP-in-IP. */
	if (count_pcap("sngrep-ipip.pcap", &c)) {
		ck_assert_uint_eq(c.records, 4);
		ck_assert_uint_eq(c.tcp, 4);
		ck_assert_uint_eq(c.tunnelled, 2);
	}
}
END_TEST

static Suite *cap_decode_suite(void)
{
	Suite *s = suite_create("cap_decode");
	TCase *tc;

	tc = tcase_create("shard_key");
	tcase_add_test(tc, test_cap_decode_host_hash_is_symmetric_and_spreads_over_workers);
	suite_add_tcase(s, tc);

	tc = tcase_create("link");
	tcase_add_test(tc, test_cap_decode_reads_udp_over_ipv4_ethernet);
	tcase_add_test(tc, test_cap_decode_reads_udp_over_ipv6_ethernet);
	tcase_add_test(tc, test_cap_decode_reads_linux_sll);
	tcase_add_test(tc, test_cap_decode_reads_linux_sll2);
	tcase_add_test(tc, test_cap_decode_reads_bsd_null_in_both_byte_orders);
	tcase_add_test(tc, test_cap_decode_reads_raw_ipv4_and_ipv6);
	tcase_add_test(tc, test_cap_decode_reports_arp_and_unknown_links_as_not_found);
	suite_add_tcase(s, tc);

	tc = tcase_create("vlan_mpls");
	tcase_add_test(tc, test_cap_decode_reports_one_vlan_tag);
	tcase_add_test(tc, test_cap_decode_reports_outermost_of_three_tags);
	tcase_add_test(tc, test_cap_decode_rejects_nine_vlan_tags);
	tcase_add_test(tc, test_cap_decode_skips_mpls_label_stack);
	suite_add_tcase(s, tc);

	tc = tcase_create("network");
	tcase_add_test(tc, test_cap_decode_skips_ipv4_options);
	tcase_add_test(tc, test_cap_decode_walks_ipv6_hop_by_hop_and_destination_options);
	tcase_add_test(tc, test_cap_decode_rejects_bad_ipv4_lengths);
	suite_add_tcase(s, tc);

	tc = tcase_create("tunnels");
	tcase_add_test(tc, test_cap_decode_follows_ipv4_in_ipv4);
	tcase_add_test(tc, test_cap_decode_follows_ipv6_in_ipv4);
	tcase_add_test(tc, test_cap_decode_follows_gre_with_key);
	tcase_add_test(tc, test_cap_decode_follows_gre_transparent_ethernet);
	tcase_add_test(tc, test_cap_decode_rejects_gre_routing);
	tcase_add_test(tc, test_cap_decode_stops_at_the_tunnel_depth_limit);
	suite_add_tcase(s, tc);

	tc = tcase_create("transport");
	tcase_add_test(tc, test_cap_decode_reads_tcp_with_options_and_flags);
	tcase_add_test(tc, test_cap_decode_reads_sctp_chunks_as_payload);
	tcase_add_test(tc, test_cap_decode_reports_other_protocols_with_ip_payload);
	suite_add_tcase(s, tc);

	tc = tcase_create("truncation");
	tcase_add_test(tc, test_cap_decode_returns_etrunc_when_the_udp_header_is_cut);
	tcase_add_test(tc, test_cap_decode_flags_a_payload_cut_by_the_snap_length);
	suite_add_tcase(s, tc);

	tc = tcase_create("hostile");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_cap_decode_never_reads_past_random_records);
	suite_add_tcase(s, tc);

	tc = tcase_create("fragments");
	tcase_add_test(tc, test_cap_decode_reassembles_ipv4_fragments_in_reverse);
	tcase_add_test(tc, test_cap_decode_reassembles_ipv6_fragments);
	tcase_add_test(tc, test_cap_decode_times_out_fragments_on_their_own_time);
	suite_add_tcase(s, tc);

	tc = tcase_create("captures");
	tcase_add_test(tc, test_cap_decode_matches_tshark_on_shared_captures);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(cap_decode_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
