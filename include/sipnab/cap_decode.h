/*
 * cap_decode.h - link, network and transport decoding of one captured record.
 *
 * Link types: Ethernet with any depth of 802.1Q/802.1ad tags, Linux SLL and SLL2, raw IPv4/IPv6,
 * BSD null/loopback. Network: IPv4 (options) and IPv6 (hop-by-hop, routing, destination
 * options, fragment, AH headers), fragment reassembly for both with bounded memory and a
 * timeout, tunnels IP-in-IP (4in4, 6in4, 4in6, 6in6) and GRE (with key/seq/checksum; carrying
 * IPv4, IPv6 or transparent Ethernet). Transport: UDP, TCP, SCTP (payload after the common
 * header), anything else reported as CAP_L4_OTHER.
 *
 * Ownership: pkt->payload points into the record, or into the decoder's reassembly buffer, and
 * is valid until the next cap_decoder_run() on the same decoder.
 * Thread: a decoder belongs to one thread.
 */
#ifndef SIPNAB_CAP_DECODE_H
#define SIPNAB_CAP_DECODE_H

#include "sipnab/cap_reader.h"
#include "sipnab/sn_base.h"

enum cap_l4 {
	CAP_L4_NONE = 0,
	CAP_L4_UDP,
	CAP_L4_TCP,
	CAP_L4_SCTP,
	CAP_L4_OTHER,
};

/* TCP flag bits as on the wire. */
#define CAP_TCP_FIN 0x01
#define CAP_TCP_SYN 0x02
#define CAP_TCP_RST 0x04
#define CAP_TCP_PSH 0x08
#define CAP_TCP_ACK 0x10

struct cap_packet {
	int64_t ts_ns;           /* capture time of the record (the last fragment's, if reassembled) */
	struct sn_addr src, dst; /* innermost IP header's addresses */
	uint16_t sport, dport;   /* transport ports (0 for other protocols) */
	uint8_t l4;              /* enum cap_l4 */
	uint8_t ip_proto;        /* innermost IP protocol number */
	uint8_t tcp_flags;       /* CAP_TCP_* */
	uint8_t reassembled;     /* 1 when built from IP fragments */
	uint8_t tunnels;         /* number of tunnel headers (IP-in-IP, GRE) crossed */
	uint8_t truncated;       /* 1 when the payload was cut by the snap length */
	uint16_t vlan;           /* outermost VLAN id, 0 if none */
	uint32_t tcp_seq, tcp_ack;
	const uint8_t *payload;  /* transport payload (UDP data, TCP data, SCTP chunks) */
	uint32_t payload_len;    /* bytes at payload that are present */
	uint32_t wire_len;       /* record's original length */
};

struct cap_decode_limits {
	size_t frag_max_bytes;     /* memory for pending fragments (default 16 MiB) */
	uint32_t frag_max_datagrams; /* pending datagrams (default 1024) */
	int64_t frag_timeout_ns;   /* a fragment arriving this long after its datagram's first
				    * starts it over, the old part counted as timed out (30 s) */
	uint32_t max_tunnel_depth; /* nested tunnels followed (default 4) */
};

/* Counters a decoder keeps; the engine adds them to the report. */
struct cap_decode_stats {
	uint64_t not_ip;           /* ARP, LLDP, ... */
	uint64_t unknown_link;     /* records with a link type we do not decode */
	uint64_t malformed;        /* bad header lengths, bad versions */
	uint64_t truncated;        /* records cut by the snap length before their payload ended */
	uint64_t fragments;        /* IP fragments seen */
	uint64_t reassembled;      /* datagrams rebuilt from fragments */
	uint64_t frag_timeouts;    /* datagrams dropped incomplete (timeout or memory bound) */
	uint64_t frag_overlaps;    /* fragments overlapping with different data */
	uint64_t tunnels;          /* packets that crossed a tunnel header */
};

struct cap_decoder;

/** New decoder; @p lim may be NULL for the defaults. */
struct cap_decoder *cap_decoder_new(const struct cap_decode_limits *lim);

/**
 * Decode one record.
 * @return SN_OK with *pkt filled (pkt->l4 may be CAP_L4_OTHER);
 *         SN_ENOTFOUND when the record carries nothing to deliver: not IP, or an IP fragment
 *         that was stored for reassembly;
 *         SN_ETRUNC when the record was cut by the snap length before the transport header;
 *         SN_EPARSE when a header is malformed.
 *         Every outcome except SN_OK is also counted in the decoder's stats.
 */
enum sn_status cap_decoder_run(struct cap_decoder *d, const struct cap_record *rec,
			       struct cap_packet *pkt);

/** The decoder's counters. */
const struct cap_decode_stats *cap_decoder_stats(const struct cap_decoder *d);

/**
 * End of input: drop the datagrams whose fragments never all arrived, counting them in
 * frag_timeouts. (During the input a datagram times out when one of its own fragments arrives
 * more than frag_timeout_ns after its first; the memory and count bounds evict the oldest.)
 * @param d the decoder
 */
void cap_decoder_flush(struct cap_decoder *d);

void cap_decoder_free(struct cap_decoder *d);

/**
 * Shard key of a record: a hash of the unordered pair of its outermost IP addresses, so that
 * every packet between two hosts (and every fragment of a datagram) gets the same key.
 * Stateless and cheap: reads only the link header, tags and the IP addresses.
 * @param rec the record
 * @return the hash; 0 for records that are not IP or are too short to tell
 * Thread: any.
 */
uint32_t cap_record_host_hash(const struct cap_record *rec);

#endif
