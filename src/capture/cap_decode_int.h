/*
 * cap_decode_int.h - interface between the packet decoder (cap_decode.c) and the IP fragment
 * reassembler (cap_defrag.c). Private to src/capture/.
 *
 * The decoder hands every IPv4/IPv6 fragment to cap_defrag_add(). When a datagram completes,
 * the reassembler returns it whole (header + payload, fragment fields cleared) in a buffer it
 * owns, and the decoder decodes that buffer as if it had been captured unfragmented.
 */
#ifndef SIPNAB_CAP_DECODE_INT_H
#define SIPNAB_CAP_DECODE_INT_H

#include "sipnab/cap_decode.h"

/* Reassembly key: IPv4 (src, dst, id, proto), IPv6 (src, dst, id). Zero it before filling. */
struct cap_defrag_key {
	uint8_t family; /* 4 or 6 */
	uint8_t proto;	/* IPv4 protocol; 0 for IPv6 */
	uint8_t pad[2]; /* always 0, so keys compare with memcmp */
	uint32_t id;	/* IPv4 identification or IPv6 fragment identification */
	uint8_t src[16];
	uint8_t dst[16];
};

/* One fragment as the decoder found it; every pointer is borrowed for the call only. */
struct cap_defrag_frag {
	const uint8_t *hdr;  /* IPv4 header, or IPv6 unfragmentable part + fragment header */
	uint32_t hdr_len;    /* the fragment header is the last 8 bytes of hdr for IPv6 */
	const uint8_t *data; /* fragment data */
	uint32_t data_len;
	uint32_t offset; /* byte offset of data in the datagram's fragmentable part */
	bool more;	 /* more fragments follow (MF / M flag) */
	int64_t ts_ns;	 /* capture time of the record */
};

struct cap_defrag;

/** New reassembler with its bounds (all non-zero). */
struct cap_defrag *cap_defrag_new(size_t max_bytes, uint32_t max_datagrams, int64_t timeout_ns);

/**
 * Add one fragment.
 * @param f the reassembler
 * @param key datagram key (padding zeroed)
 * @param frag the fragment; its bytes are copied before anything is written to the output
 *        buffer, so they may point into a previous output of this reassembler
 * @param st counters: fragments, reassembled, frag_timeouts, frag_overlaps are updated
 * @param out receives the complete datagram on SN_OK; valid until the next call of
 *        cap_defrag_add() or cap_defrag_free()
 * @param out_len receives its length
 * @return SN_OK when the datagram is complete; SN_ENOTFOUND when the fragment was stored;
 *         SN_ELIMIT when the memory bound forced it out (counted in frag_timeouts);
 *         SN_EPARSE when it is inconsistent (datagram beyond 65535 bytes, conflicting end).
 */
enum sn_status cap_defrag_add(struct cap_defrag *f, const struct cap_defrag_key *key,
			      const struct cap_defrag_frag *frag, struct cap_decode_stats *st,
			      const uint8_t **out, uint32_t *out_len);

/** Drop every pending datagram (end of input), counted in frag_timeouts. */
void cap_defrag_flush(struct cap_defrag *f, struct cap_decode_stats *st);

/** Datagrams pending. */
uint32_t cap_defrag_pending_count(const struct cap_defrag *f);

/** Bytes accounted to pending datagrams. */
size_t cap_defrag_pending_len(const struct cap_defrag *f);

/** Free the reassembler and everything pending. NULL is allowed. */
void cap_defrag_free(struct cap_defrag *f);

#endif
