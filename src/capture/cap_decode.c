/*
 * cap_decode.c - link, network and transport decoding of one captured record.
 *
 * The path through a record is a chain of small functions, each taking a byte window
 * (p, n) and a "cut" flag that is true when the window ends where the snap length cut the
 * record, rather than where the enclosing header said the data ends:
 *
 *   decode_link() -> decode_ethertype() (VLAN/QinQ tags, MPLS) -> decode_ipv4()/decode_ipv6()
 *   -> decode_l4() -> UDP, TCP, SCTP, other; or a tunnel (IP-in-IP, GRE) back into
 *   decode_ipv4()/decode_ipv6()/decode_ethertype() one level deeper.
 *
 * A fragment goes to cap_defrag_add(); when it completes a datagram, the datagram (whole,
 * fragment fields cleared) is decoded again from the reassembler's buffer at the same depth.
 * A window that is too short is SN_ETRUNC when it was cut by the snap length and SN_EPARSE
 * otherwise (the headers lie).
 *
 * It does not validate checksums, follow TCP streams, or parse anything above transport.
 * Ownership: the decoder owns its reassembler; pkt->payload borrows the record or the
 * reassembler's output buffer until the next cap_decoder_run().
 * Thread: one decoder per thread; no global state.
 * Speed: nothing is allocated unless a fragment is stored. The most common record (Ethernet,
 * IPv4 without options or fragmentation, UDP) is decoded by decode_eth_ipv4_udp() in one go,
 * with the result the chain would give.
 */
#include "config.h"

#include "sipnab/cap_decode.h"

#include <stdlib.h>
#include <string.h>

#include "cap_decode_int.h"

#define DECODE_MAX_VLAN_TAGS   8
#define DECODE_MAX_MPLS_LABELS 16
#define DECODE_MAX_IPV6_EXT    16

#define ETH_IPV4  0x0800
#define ETH_IPV6  0x86dd
#define ETH_VLAN  0x8100
#define ETH_QINQ  0x88a8
#define ETH_Q9100 0x9100
#define ETH_MPLS  0x8847
#define ETH_MPLSM 0x8848
#define ETH_TEB	  0x6558

struct cap_decoder {
	struct cap_decode_limits lim;
	struct cap_decode_stats st;
	struct cap_defrag *defrag; /* owned */
};

/* Per-record state threaded through the chain. */
struct decode_ctx {
	struct cap_decoder *d;
	struct cap_packet *pkt;
	int64_t ts_ns;
};

static enum sn_status decode_ipv4(struct decode_ctx *c, const uint8_t *p, uint32_t n, bool cut,
				  uint32_t depth);
static enum sn_status decode_ipv6(struct decode_ctx *c, const uint8_t *p, uint32_t n, bool cut,
				  uint32_t depth);

struct cap_decoder *cap_decoder_new(const struct cap_decode_limits *lim)
{
	struct cap_decoder *d = sn_xcalloc(1, sizeof(*d));

	if (lim) {
		d->lim = *lim;
	}
	if (!d->lim.frag_max_bytes) {
		d->lim.frag_max_bytes = 16u << 20;
	}
	if (!d->lim.frag_max_datagrams) {
		d->lim.frag_max_datagrams = 1024;
	}
	if (d->lim.frag_timeout_ns <= 0) {
		d->lim.frag_timeout_ns = 30 * (int64_t)1000000000;
	}
	if (!d->lim.max_tunnel_depth) {
		d->lim.max_tunnel_depth = 4;
	}
	d->defrag = cap_defrag_new(d->lim.frag_max_bytes, d->lim.frag_max_datagrams,
				   d->lim.frag_timeout_ns);
	return d;
}

void cap_decoder_flush(struct cap_decoder *d)
{
	cap_defrag_flush(d->defrag, &d->st);
}

void cap_decoder_free(struct cap_decoder *d)
{
	if (!d) {
		return;
	}
	cap_defrag_free(d->defrag);
	free(d);
}

const struct cap_decode_stats *cap_decoder_stats(const struct cap_decoder *d)
{
	return &d->st;
}

/* A header needs more bytes than the window has. */
static enum sn_status short_status(bool cut)
{
	return cut ? SN_ETRUNC : SN_EPARSE;
}

static enum sn_status decode_udp(struct decode_ctx *c, const uint8_t *p, uint32_t n, bool cut)
{
	struct cap_packet *pkt = c->pkt;
	uint32_t ulen;

	if (n < 8) {
		return short_status(cut);
	}
	pkt->l4 = CAP_L4_UDP;
	pkt->sport = sn_be16(p);
	pkt->dport = sn_be16(p + 2);
	ulen = sn_be16(p + 4);
	pkt->payload = p + 8;
	if (ulen >= 8 && ulen <= n) {
		pkt->payload_len = ulen - 8;
		pkt->truncated = 0;
	} else {
		/* Length 0 (jumbogram) or inconsistent: take what is there. */
		pkt->payload_len = n - 8;
		pkt->truncated = cut;
	}
	return SN_OK;
}

static enum sn_status decode_tcp(struct decode_ctx *c, const uint8_t *p, uint32_t n, bool cut)
{
	struct cap_packet *pkt = c->pkt;
	uint32_t hl;

	if (n < 20) {
		return short_status(cut);
	}
	hl = (uint32_t)(p[12] >> 4) * 4;
	if (hl < 20) {
		return SN_EPARSE;
	}
	if (hl > n) {
		return short_status(cut);
	}
	pkt->l4 = CAP_L4_TCP;
	pkt->sport = sn_be16(p);
	pkt->dport = sn_be16(p + 2);
	pkt->tcp_seq = sn_be32(p + 4);
	pkt->tcp_ack = sn_be32(p + 8);
	pkt->tcp_flags = p[13];
	pkt->payload = p + hl;
	pkt->payload_len = n - hl;
	pkt->truncated = cut;
	return SN_OK;
}

static enum sn_status decode_sctp(struct decode_ctx *c, const uint8_t *p, uint32_t n, bool cut)
{
	struct cap_packet *pkt = c->pkt;

	if (n < 12) {
		return short_status(cut);
	}
	pkt->l4 = CAP_L4_SCTP;
	pkt->sport = sn_be16(p);
	pkt->dport = sn_be16(p + 2);
	pkt->payload = p + 12;
	pkt->payload_len = n - 12;
	pkt->truncated = cut;
	return SN_OK;
}

static enum sn_status decode_other(struct decode_ctx *c, const uint8_t *p, uint32_t n, bool cut)
{
	c->pkt->l4 = CAP_L4_OTHER;
	c->pkt->payload = p;
	c->pkt->payload_len = n;
	c->pkt->truncated = cut;
	return SN_OK;
}

static enum sn_status decode_ethertype(struct decode_ctx *c, uint16_t type, const uint8_t *p,
				       uint32_t n, bool cut, uint32_t depth);

/* GRE, RFC 2784 / RFC 2890: version 0 only; routing (RFC 1701) is not supported. */
static enum sn_status decode_gre(struct decode_ctx *c, const uint8_t *p, uint32_t n, bool cut,
				 uint32_t depth)
{
	uint16_t flags, proto;
	uint32_t hl = 4;

	if (n < 4) {
		return short_status(cut);
	}
	flags = sn_be16(p);
	proto = sn_be16(p + 2);
	if ((flags & 0x7) != 0) {
		return decode_other(c, p, n, cut); /* enhanced GRE (PPTP) carries PPP */
	}
	if (flags & 0x4000) {
		return SN_EPARSE;
	}
	hl += (flags & 0x8000) ? 4 : 0;
	hl += (flags & 0x2000) ? 4 : 0;
	hl += (flags & 0x1000) ? 4 : 0;
	if (hl > n) {
		return short_status(cut);
	}
	if (proto != ETH_IPV4 && proto != ETH_IPV6 && proto != ETH_TEB) {
		return decode_other(c, p, n, cut);
	}
	c->pkt->tunnels++;
	if (proto == ETH_TEB) {
		if (n - hl < 14) {
			return short_status(cut);
		}
		return decode_ethertype(c, sn_be16(p + hl + 12), p + hl + 14, n - hl - 14, cut,
					depth + 1);
	}
	return decode_ethertype(c, proto, p + hl, n - hl, cut, depth + 1);
}

/* Transport or tunnel header behind an IP header. */
static enum sn_status decode_l4(struct decode_ctx *c, uint8_t proto, const uint8_t *p, uint32_t n,
				bool cut, uint32_t depth)
{
	bool deeper = depth < c->d->lim.max_tunnel_depth;

	c->pkt->ip_proto = proto;
	switch (proto) {
	case 17:
		return decode_udp(c, p, n, cut);
	case 6:
		return decode_tcp(c, p, n, cut);
	case 132:
		return decode_sctp(c, p, n, cut);
	case 4:
		if (deeper) {
			c->pkt->tunnels++;
			return decode_ipv4(c, p, n, cut, depth + 1);
		}
		break;
	case 41:
		if (deeper) {
			c->pkt->tunnels++;
			return decode_ipv6(c, p, n, cut, depth + 1);
		}
		break;
	case 47:
		if (deeper) {
			return decode_gre(c, p, n, cut, depth);
		}
		break;
	default:
		break;
	}
	return decode_other(c, p, n, cut);
}

/* Hand a fragment to the reassembler; on completion decode the whole datagram. */
static enum sn_status decode_fragment(struct decode_ctx *c, const struct cap_defrag_key *key,
				      const struct cap_defrag_frag *frag, uint32_t depth)
{
	const uint8_t *dgram;
	uint32_t dgram_len;
	enum sn_status rc;

	rc = cap_defrag_add(c->d->defrag, key, frag, &c->d->st, &dgram, &dgram_len);
	if (rc == SN_ELIMIT) {
		return SN_ENOTFOUND; /* counted in frag_timeouts */
	}
	if (rc != SN_OK) {
		return rc;
	}
	c->pkt->reassembled = 1;
	if (key->family == 4) {
		return decode_ipv4(c, dgram, dgram_len, false, depth);
	}
	return decode_ipv6(c, dgram, dgram_len, false, depth);
}

/*
 * An IPv4 address into struct sn_addr, the bytes written as two 8-byte words. The engine hashes
 * and compares the address with 8-byte loads right after decoding; a load that spans several
 * smaller pending stores cannot be forwarded from the store buffer and stalls.
 */
static void addr_set_ipv4(struct sn_addr *a, const uint8_t *p)
{
	uint64_t w = 0;

	memcpy(&w, p, 4);
	a->family = 4;
	memcpy(a->bytes, &w, 8);
	memset(a->bytes + 8, 0, 8);
}

/* IPv4, RFC 791. */
static enum sn_status decode_ipv4(struct decode_ctx *c, const uint8_t *p, uint32_t n, bool cut,
				  uint32_t depth)
{
	struct cap_packet *pkt = c->pkt;
	uint32_t hl, total;
	uint16_t frag;

	if (n < 20) {
		return short_status(cut);
	}
	if ((p[0] >> 4) != 4) {
		return SN_EPARSE;
	}
	hl = (uint32_t)(p[0] & 0xf) * 4;
	if (hl < 20) {
		return SN_EPARSE;
	}
	if (hl > n) {
		return short_status(cut);
	}
	total = sn_be16(p + 2);
	if (total < hl) {
		return SN_EPARSE;
	}
	if (total > n) {
		if (!cut) {
			return SN_EPARSE;
		}
		total = n;
	} else {
		cut = false; /* link padding, if any, is dropped */
	}
	addr_set_ipv4(&pkt->src, p + 12);
	addr_set_ipv4(&pkt->dst, p + 16);
	pkt->ip_proto = p[9];
	frag = sn_be16(p + 6);
	if (frag & 0x3fff) {
		struct cap_defrag_key key;
		struct cap_defrag_frag fr;

		if (cut) {
			c->d->st.fragments++;
			return SN_ETRUNC;
		}
		memset(&key, 0, sizeof(key));
		key.family = 4;
		key.proto = p[9];
		key.id = sn_be16(p + 4);
		memcpy(key.src, p + 12, 4);
		memcpy(key.dst, p + 16, 4);
		fr.hdr = p;
		fr.hdr_len = hl;
		fr.data = p + hl;
		fr.data_len = total - hl;
		fr.offset = (uint32_t)(frag & 0x1fff) * 8;
		fr.more = (frag & 0x2000) != 0;
		fr.ts_ns = c->ts_ns;
		return decode_fragment(c, &key, &fr, depth);
	}
	return decode_l4(c, p[9], p + hl, total - hl, cut, depth);
}

/* IPv6, RFC 8200: fixed header, then the extension header chain. */
static enum sn_status decode_ipv6(struct decode_ctx *c, const uint8_t *p, uint32_t n, bool cut,
				  uint32_t depth)
{
	struct cap_packet *pkt = c->pkt;
	uint32_t total, off = 40;
	uint8_t nh;
	int i;

	if (n < 40) {
		return short_status(cut);
	}
	if ((p[0] >> 4) != 6) {
		return SN_EPARSE;
	}
	nh = p[6];
	total = sn_be16(p + 4);
	if (total == 0 && nh == 0) {
		total = n; /* jumbogram (RFC 2675): the payload runs to the end */
	} else if (40 + total > n) {
		if (!cut) {
			return SN_EPARSE;
		}
		total = n;
	} else {
		total += 40;
		cut = false;
	}
	pkt->src.family = 6;
	memcpy(pkt->src.bytes, p + 8, 16);
	pkt->dst.family = 6;
	memcpy(pkt->dst.bytes, p + 24, 16);
	for (i = 0; i < DECODE_MAX_IPV6_EXT; i++) {
		uint32_t el;

		switch (nh) {
		case 0:
		case 43:
		case 60:
		case 51:
			if (total - off < 2) {
				return short_status(cut);
			}
			el = nh == 51 ? ((uint32_t)p[off + 1] + 2) * 4
				      : ((uint32_t)p[off + 1] + 1) * 8;
			if (total - off < el) {
				return short_status(cut);
			}
			nh = p[off];
			off += el;
			continue;
		case 44: {
			struct cap_defrag_key key;
			struct cap_defrag_frag fr;
			uint16_t fo;

			if (total - off < 8) {
				return short_status(cut);
			}
			fo = sn_be16(p + off + 2);
			if ((fo & 0xfff9) == 0) {
				/* Atomic fragment (RFC 6946): process as a whole packet. */
				nh = p[off];
				off += 8;
				continue;
			}
			if (cut) {
				c->d->st.fragments++;
				return SN_ETRUNC;
			}
			memset(&key, 0, sizeof(key));
			key.family = 6;
			key.id = sn_be32(p + off + 4);
			memcpy(key.src, p + 8, 16);
			memcpy(key.dst, p + 24, 16);
			fr.hdr = p;
			fr.hdr_len = off + 8;
			fr.data = p + off + 8;
			fr.data_len = total - off - 8;
			fr.offset = fo & 0xfff8;
			fr.more = (fo & 1) != 0;
			fr.ts_ns = c->ts_ns;
			return decode_fragment(c, &key, &fr, depth);
		}
		case 59:
			pkt->ip_proto = 59;
			return decode_other(c, p + off, 0, false);
		default:
			return decode_l4(c, nh, p + off, total - off, cut, depth);
		}
	}
	return SN_EPARSE;
}

/* Ethertype dispatch after the type field: VLAN tags, MPLS labels, IPv4, IPv6. */
static enum sn_status decode_ethertype(struct decode_ctx *c, uint16_t type, const uint8_t *p,
				       uint32_t n, bool cut, uint32_t depth)
{
	int tags = 0;
	int labels = 0;

	while (type == ETH_VLAN || type == ETH_QINQ || type == ETH_Q9100) {
		if (++tags > DECODE_MAX_VLAN_TAGS) {
			return SN_EPARSE;
		}
		if (n < 4) {
			return short_status(cut);
		}
		if (depth == 0 && tags == 1) {
			c->pkt->vlan = sn_be16(p) & 0x0fff;
		}
		type = sn_be16(p + 2);
		p += 4;
		n -= 4;
	}
	if (type == ETH_MPLS || type == ETH_MPLSM) {
		for (;;) {
			if (++labels > DECODE_MAX_MPLS_LABELS) {
				return SN_EPARSE;
			}
			if (n < 4) {
				return short_status(cut);
			}
			p += 4;
			n -= 4;
			if (p[-2] & 0x01) {
				break; /* bottom of stack */
			}
		}
		if (n < 1) {
			return short_status(cut);
		}
		type = (p[0] >> 4) == 4 ? ETH_IPV4 : (p[0] >> 4) == 6 ? ETH_IPV6 : 0;
	}
	if (type == ETH_IPV4) {
		return decode_ipv4(c, p, n, cut, depth);
	}
	if (type == ETH_IPV6) {
		return decode_ipv6(c, p, n, cut, depth);
	}
	c->d->st.not_ip++;
	return SN_ENOTFOUND;
}

/* The version nibble picks IPv4 or IPv6 (raw links). */
static enum sn_status decode_raw(struct decode_ctx *c, const uint8_t *p, uint32_t n, bool cut)
{
	if (n < 1) {
		return short_status(cut);
	}
	if ((p[0] >> 4) == 4) {
		return decode_ipv4(c, p, n, cut, 0);
	}
	if ((p[0] >> 4) == 6) {
		return decode_ipv6(c, p, n, cut, 0);
	}
	return SN_EPARSE;
}

/* BSD loopback address family: IPv4 is 2 everywhere, IPv6 is 24, 28 or 30 by OS. */
static enum sn_status decode_family(struct decode_ctx *c, uint32_t fam, const uint8_t *p,
				    uint32_t n, bool cut)
{
	if (fam == 2) {
		return decode_ipv4(c, p, n, cut, 0);
	}
	if (fam == 24 || fam == 28 || fam == 30) {
		return decode_ipv6(c, p, n, cut, 0);
	}
	c->d->st.not_ip++;
	return SN_ENOTFOUND;
}

static enum sn_status decode_link(struct decode_ctx *c, const struct cap_record *rec)
{
	const uint8_t *p = rec->data;
	uint32_t n = rec->caplen;
	bool cut = rec->caplen < rec->origlen;
	uint32_t fam;

	switch (rec->linktype) {
	case CAP_LINK_ETHERNET:
		if (n < 14) {
			return short_status(cut);
		}
		return decode_ethertype(c, sn_be16(p + 12), p + 14, n - 14, cut, 0);
	case CAP_LINK_LINUX_SLL:
		if (n < 16) {
			return short_status(cut);
		}
		return decode_ethertype(c, sn_be16(p + 14), p + 16, n - 16, cut, 0);
	case CAP_LINK_LINUX_SLL2:
		if (n < 20) {
			return short_status(cut);
		}
		return decode_ethertype(c, sn_be16(p), p + 20, n - 20, cut, 0);
	case CAP_LINK_RAW:
		return decode_raw(c, p, n, cut);
	case CAP_LINK_IPV4:
		return decode_ipv4(c, p, n, cut, 0);
	case CAP_LINK_IPV6:
		return decode_ipv6(c, p, n, cut, 0);
	case CAP_LINK_NULL:
		if (n < 4) {
			return short_status(cut);
		}
		fam = sn_le32(p);
		if (fam > 0xffff) {
			fam = sn_be32(p);
		}
		return decode_family(c, fam, p + 4, n - 4, cut);
	case CAP_LINK_LOOP:
		if (n < 4) {
			return short_status(cut);
		}
		return decode_family(c, sn_be32(p), p + 4, n - 4, cut);
	default:
		c->d->st.unknown_link++;
		return SN_ENOTFOUND;
	}
}

/*
 * The most common record, Ethernet + IPv4 without options, not a fragment + UDP, decoded without
 * the calls of the general chain, with the same result as decode_link() ... decode_udp() give
 * it (so no counter moves: nothing is cut, nothing is tunnelled). Anything else, including
 * every record that chain would reject, returns false with *pkt untouched and takes the chain.
 */
static bool decode_eth_ipv4_udp(const struct cap_record *rec, struct cap_packet *pkt)
{
	const uint8_t *p = rec->data;
	uint32_t n = rec->caplen;
	uint32_t total, ulen;

	if (rec->linktype != CAP_LINK_ETHERNET || n < 14 + 20 + 8 || sn_be16(p + 12) != ETH_IPV4) {
		return false;
	}
	p += 14;
	n -= 14;
	if (p[0] != 0x45 || p[9] != 17 || (sn_be16(p + 6) & 0x3fff) != 0) {
		return false;
	}
	total = sn_be16(p + 2);
	if (total < 20 + 8 || total > n) {
		return false;
	}
	addr_set_ipv4(&pkt->src, p + 12);
	addr_set_ipv4(&pkt->dst, p + 16);
	pkt->ip_proto = 17;
	pkt->l4 = CAP_L4_UDP;
	p += 20;
	n = total - 20;
	pkt->sport = sn_be16(p);
	pkt->dport = sn_be16(p + 2);
	ulen = sn_be16(p + 4);
	pkt->payload = p + 8;
	pkt->payload_len = ulen >= 8 && ulen <= n ? ulen - 8 : n - 8;
	return true;
}

enum sn_status cap_decoder_run(struct cap_decoder *d, const struct cap_record *rec,
			       struct cap_packet *pkt)
{
	struct decode_ctx c = {d, pkt, rec->ts_ns};
	enum sn_status rc;

	memset(pkt, 0, sizeof(*pkt));
	pkt->ts_ns = rec->ts_ns;
	pkt->wire_len = rec->origlen;
	if (decode_eth_ipv4_udp(rec, pkt)) {
		return SN_OK;
	}
	rc = decode_link(&c, rec);
	switch (rc) {
	case SN_OK:
		if (pkt->truncated) {
			d->st.truncated++;
		}
		if (pkt->tunnels) {
			d->st.tunnels++;
		}
		break;
	case SN_ETRUNC:
		d->st.truncated++;
		break;
	case SN_EPARSE:
		d->st.malformed++;
		break;
	default:
		break;
	}
	return rc;
}

/* ---- shard key ---- */

/*
 * Unordered pair of the addresses of the IP header at p (0 when not IP or too short). Every
 * record of a split or sharded read is hashed, so the pair is hashed with one 64x64->128-bit
 * multiply of its smaller and larger address (an IPv6 address folded to 64 bits first) and the
 * two halves of the product folded together: symmetric, as both directions must give the same
 * key, and every bit of the result (so any modulus the caller takes) depends on both
 * addresses. Not keyed: it picks a thread, not a bucket to walk.
 */
static inline uint32_t ip_pair_hash(const uint8_t *p, uint32_t n)
{
	uint64_t a, b;

	if (n >= 20 && (p[0] >> 4) == 4) {
		uint32_t x, y;

		memcpy(&x, p + 12, 4);
		memcpy(&y, p + 16, 4);
		a = x;
		b = y;
	} else if (n >= 40 && (p[0] >> 4) == 6) {
		uint64_t x[4];

		memcpy(x, p + 8, sizeof(x));
		a = x[0] ^ ((x[1] << 29) | (x[1] >> 35));
		b = x[2] ^ ((x[3] << 29) | (x[3] >> 35));
	} else {
		return 0;
	}
	unsigned __int128 m = (unsigned __int128)((a < b ? a : b) ^ 0x9e3779b97f4a7c15ull) *
			      ((a < b ? b : a) ^ 0xff51afd7ed558ccdull);
	uint64_t h = (uint64_t)m ^ (uint64_t)(m >> 64);
	uint32_t r = (uint32_t)(h ^ (h >> 32));

	return r ? r : 1u;
}

uint32_t cap_record_host_hash(const struct cap_record *rec)
{
	const uint8_t *p = rec->data;
	uint32_t n = rec->caplen;
	uint16_t type;
	int guard = 0;

	switch (rec->linktype) {
	case CAP_LINK_ETHERNET:
		if (n < 14) {
			return 0;
		}
		type = sn_be16(p + 12);
		p += 14;
		n -= 14;
		break;
	case CAP_LINK_LINUX_SLL:
		if (n < 16) {
			return 0;
		}
		type = sn_be16(p + 14);
		p += 16;
		n -= 16;
		break;
	case CAP_LINK_LINUX_SLL2:
		if (n < 20) {
			return 0;
		}
		type = sn_be16(p);
		p += 20;
		n -= 20;
		break;
	case CAP_LINK_NULL:
	case CAP_LINK_LOOP:
		if (n < 4) {
			return 0;
		}
		return ip_pair_hash(p + 4, n - 4);
	case CAP_LINK_RAW:
	case CAP_LINK_IPV4:
	case CAP_LINK_IPV6:
		return ip_pair_hash(p, n);
	default:
		return 0;
	}
	if (type == ETH_IPV4 || type == ETH_IPV6) {
		return ip_pair_hash(p, n); /* untagged: most records */
	}
	while ((type == ETH_VLAN || type == ETH_QINQ || type == ETH_Q9100) && n >= 4 &&
	       ++guard <= DECODE_MAX_VLAN_TAGS) {
		type = sn_be16(p + 2);
		p += 4;
		n -= 4;
	}
	if (type == ETH_MPLS || type == ETH_MPLSM) {
		while (n >= 4 && ++guard <= DECODE_MAX_VLAN_TAGS + DECODE_MAX_MPLS_LABELS) {
			bool bottom = p[2] & 0x01;
			p += 4;
			n -= 4;
			if (bottom) {
				return ip_pair_hash(p, n);
			}
		}
		return 0;
	}
	if (type == ETH_IPV4 || type == ETH_IPV6) {
		return ip_pair_hash(p, n);
	}
	return 0;
}
