/*
 * cap_sctp.h - SCTP (RFC 9260) chunk walking: DATA chunks (and I-DATA, RFC 8260) of one packet
 * are handed to a callback. Fragmented user messages (B/E bits) are reassembled per
 * association and stream by cap_sctp_reasm.
 */
#ifndef SIPNAB_CAP_SCTP_H
#define SIPNAB_CAP_SCTP_H

#include "sipnab/cap_decode.h"
#include "sipnab/sn_base.h"

struct cap_sctp_data {
	uint32_t tsn;
	uint16_t stream;
	uint32_t ppid;        /* payload protocol identifier (SIP has none assigned; often 0) */
	uint8_t flags;        /* chunk flags: 0x01 E(nd), 0x02 B(egin), 0x04 U(nordered) */
	const uint8_t *data;  /* user data (borrowed) */
	uint32_t len;
};

typedef void cap_sctp_data_fn(void *user, const struct cap_packet *pkt,
			      const struct cap_sctp_data *chunk);

struct cap_sctp_reasm;

/**
 * Walk the chunks of an SCTP packet (pkt->payload starts after the 12-byte common header).
 * Calls @p fn once per complete user message: unfragmented DATA chunks directly, fragmented
 * ones once reassembled through @p reasm (may be NULL: fragments are then counted and dropped).
 * @param reasm fragment reassembly state, or NULL
 * @param pkt the decoded SCTP packet
 * @param fn called per complete user message
 * @param user passed to @p fn
 * @return SN_OK; SN_EPARSE when a chunk length is invalid; SN_ETRUNC when the packet was cut
 *         by the snap length inside a chunk. Chunks before the bad one were delivered.
 */
enum sn_status cap_sctp_walk(struct cap_sctp_reasm *reasm, const struct cap_packet *pkt,
			     cap_sctp_data_fn *fn, void *user);

/** Reassembly state, bounded by @p max_bytes of pending fragments. */
struct cap_sctp_reasm *cap_sctp_reasm_new(size_t max_bytes);
void cap_sctp_reasm_free(struct cap_sctp_reasm *r);

#endif
