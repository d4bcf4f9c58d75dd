/*
 * cap_ws.h - WebSocket (RFC 6455) as a transport for SIP (RFC 7118): detection of the HTTP
 * Upgrade handshake and frame decoding (masking, continuation frames, control frames).
 * Pure functions over byte buffers; no state beyond what the caller passes in.
 */
#ifndef SIPNAB_CAP_WS_H
#define SIPNAB_CAP_WS_H

#include "sipnab/sn_base.h"

enum cap_ws_opcode {
	CAP_WS_CONT = 0x0,
	CAP_WS_TEXT = 0x1,
	CAP_WS_BINARY = 0x2,
	CAP_WS_CLOSE = 0x8,
	CAP_WS_PING = 0x9,
	CAP_WS_PONG = 0xA,
};

/**
 * Is @p data the start of an HTTP request or response of a WebSocket handshake
 * (GET ... with "Upgrade: websocket", or "HTTP/1.1 101")?
 * @return SN_OK when a complete header block (up to CRLFCRLF) is present and is a WebSocket
 *         handshake (*hdr_len = bytes up to and including the blank line); SN_ETRUNC when it
 *         may be one but the blank line has not arrived; SN_ENOTFOUND when it is not.
 */
enum sn_status cap_ws_handshake(const uint8_t *data, size_t len, size_t *hdr_len);

struct cap_ws_frame {
	bool fin;
	uint8_t opcode;       /* enum cap_ws_opcode */
	bool masked;
	uint8_t mask[4];
	uint64_t payload_len;
	size_t header_len;    /* bytes before the payload */
};

/**
 * Parse a frame header at @p data.
 * @return SN_OK (frame header parsed; the payload may still be incomplete: check
 *         header_len + payload_len <= len); SN_ETRUNC when the header is incomplete;
 *         SN_EPARSE when reserved bits or opcode are invalid.
 */
enum sn_status cap_ws_frame_parse(const uint8_t *data, size_t len, struct cap_ws_frame *f);

/** Copy @p len payload bytes to @p out, unmasking with the frame's key if it is masked. */
void cap_ws_unmask(const struct cap_ws_frame *f, const uint8_t *payload, size_t len, uint8_t *out);

#endif
