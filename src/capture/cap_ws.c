/*
 * cap_ws.c - WebSocket (RFC 6455) handshake detection and frame decoding, for SIP over
 * WebSocket (RFC 7118) found in TCP streams.
 *
 * cap_ws_handshake() recognises the HTTP/1.1 Upgrade exchange of RFC 6455 §4: a request
 * "GET <path> HTTP/1.1" or a response "HTTP/1.1 101 ...", either with an "Upgrade" header whose
 * comma-separated value list contains "websocket" (header name and value compared ignoring
 * ASCII case). It does not check Sec-WebSocket-Key/Accept or the subprotocol: a capture only
 * needs to know where the frames start.
 *
 * cap_ws_frame_parse() decodes a frame header (RFC 6455 §5.2): FIN, RSV1-3 (must be 0: no
 * extension is negotiated that sipnab understands), opcode, MASK, the 7/16/64-bit payload
 * length and the masking key. Control frames must be final and carry at most 125 bytes
 * (§5.5). cap_ws_unmask() applies the key (§5.3). Nothing here allocates or keeps state.
 * Threading: pure functions, callable from any thread.
 */
#include "config.h"

#include "sipnab/cap_ws.h"

#include <string.h>

/* Give up looking for the end of a handshake header block after this many bytes. */
#define WS_MAX_HANDSHAKE 16384u

static const char ws_get[] = "GET ";
static const char ws_101[] = "HTTP/1.1 101";

static uint8_t ws_lower(uint8_t c)
{
	return (c >= 'A' && c <= 'Z') ? (uint8_t)(c + ('a' - 'A')) : c;
}

static bool ws_caseeq(const uint8_t *p, size_t len, const char *lit)
{
	size_t n = strlen(lit);
	size_t i;

	if (len != n) {
		return false;
	}
	for (i = 0; i < n; i++) {
		if (ws_lower(p[i]) != ws_lower((uint8_t)lit[i])) {
			return false;
		}
	}
	return true;
}

/* True when the first min(len, strlen(lit)) bytes of @p equal @lit. */
static bool ws_prefix_matches(const uint8_t *p, size_t len, const char *lit)
{
	size_t n = SN_MIN(len, strlen(lit));

	return memcmp(p, lit, n) == 0;
}

/* Offset of the first CRLF at or after @from, or len when there is none. */
static size_t ws_find_crlf(const uint8_t *p, size_t len, size_t from)
{
	size_t i;

	for (i = from; i + 1 < len; i++) {
		if (p[i] == '\r' && p[i + 1] == '\n') {
			return i;
		}
	}
	return len;
}

static bool ws_is_ows(uint8_t c)
{
	return c == ' ' || c == '\t';
}

/* Is the request or status line [p, p+len) one of a WebSocket handshake? */
static bool ws_first_line_ok(const uint8_t *p, size_t len)
{
	static const char ver[] = " HTTP/1.1";
	size_t vlen = sizeof(ver) - 1;
	size_t i;

	if (ws_prefix_matches(p, len, ws_101) && len >= sizeof(ws_101) - 1) {
		/* "HTTP/1.1 101" then end of line or " reason". */
		return len == sizeof(ws_101) - 1 || p[sizeof(ws_101) - 1] == ' ';
	}
	if (len < 4 + 1 + vlen || memcmp(p, ws_get, 4) != 0) {
		return false;
	}
	if (memcmp(p + len - vlen, ver, vlen) != 0) {
		return false;
	}
	/* The request target: one or more bytes, no spaces. */
	for (i = 4; i < len - vlen; i++) {
		if (p[i] == ' ' || p[i] == '\t') {
			return false;
		}
	}
	return true;
}

/* Does the header value list [p, p+len) contain the token "websocket"? */
static bool ws_value_has_websocket(const uint8_t *p, size_t len)
{
	size_t i = 0;

	while (i < len) {
		size_t start;
		size_t end;

		while (i < len && (ws_is_ows(p[i]) || p[i] == ',')) {
			i++;
		}
		start = i;
		while (i < len && p[i] != ',') {
			i++;
		}
		end = i;
		while (end > start && ws_is_ows(p[end - 1])) {
			end--;
		}
		if (end > start && ws_caseeq(p + start, end - start, "websocket")) {
			return true;
		}
	}
	return false;
}

enum sn_status cap_ws_handshake(const uint8_t *data, size_t len, size_t *hdr_len)
{
	size_t eol;
	size_t pos;
	bool upgrade = false;

	if (len == 0) {
		return SN_ETRUNC;
	}
	if (!ws_prefix_matches(data, len, ws_get) && !ws_prefix_matches(data, len, ws_101)) {
		return SN_ENOTFOUND;
	}
	eol = ws_find_crlf(data, len, 0);
	if (eol == len) {
		return len > WS_MAX_HANDSHAKE ? SN_ENOTFOUND : SN_ETRUNC;
	}
	if (!ws_first_line_ok(data, eol)) {
		return SN_ENOTFOUND;
	}
	pos = eol + 2;
	for (;;) {
		size_t colon;

		if (pos > WS_MAX_HANDSHAKE) {
			return SN_ENOTFOUND;
		}
		eol = ws_find_crlf(data, len, pos);
		if (eol == len) {
			return SN_ETRUNC;
		}
		if (eol == pos) {
			break; /* the blank line */
		}
		for (colon = pos; colon < eol && data[colon] != ':'; colon++) {
		}
		if (colon < eol && ws_caseeq(data + pos, colon - pos, "upgrade") &&
		    ws_value_has_websocket(data + colon + 1, eol - colon - 1)) {
			upgrade = true;
		}
		pos = eol + 2;
	}
	if (!upgrade) {
		return SN_ENOTFOUND;
	}
	*hdr_len = eol + 2;
	return SN_OK;
}

enum sn_status cap_ws_frame_parse(const uint8_t *data, size_t len, struct cap_ws_frame *f)
{
	uint8_t op;
	size_t hl = 2;
	uint64_t plen;

	if (len < 1) {
		return SN_ETRUNC;
	}
	if (data[0] & 0x70) {
		return SN_EPARSE;
	}
	op = data[0] & 0x0f;
	if (op > CAP_WS_BINARY && (op < CAP_WS_CLOSE || op > CAP_WS_PONG)) {
		return SN_EPARSE;
	}
	if (op >= CAP_WS_CLOSE && !(data[0] & 0x80)) {
		return SN_EPARSE; /* control frames are never fragmented (§5.5) */
	}
	if (len < 2) {
		return SN_ETRUNC;
	}
	plen = data[1] & 0x7f;
	if (op >= CAP_WS_CLOSE && plen > 125) {
		return SN_EPARSE;
	}
	if (plen == 126) {
		if (len < 4) {
			return SN_ETRUNC;
		}
		plen = sn_be16(data + 2);
		hl = 4;
	} else if (plen == 127) {
		if (len < 10) {
			return SN_ETRUNC;
		}
		if (data[2] & 0x80) {
			return SN_EPARSE;
		}
		plen = ((uint64_t)sn_be32(data + 2) << 32) | sn_be32(data + 6);
		hl = 10;
	}
	memset(f, 0, sizeof(*f));
	f->fin = (data[0] & 0x80) != 0;
	f->opcode = op;
	f->masked = (data[1] & 0x80) != 0;
	f->payload_len = plen;
	if (f->masked) {
		if (len < hl + 4) {
			return SN_ETRUNC;
		}
		memcpy(f->mask, data + hl, 4);
		hl += 4;
	}
	f->header_len = hl;
	return SN_OK;
}

void cap_ws_unmask(const struct cap_ws_frame *f, const uint8_t *payload, size_t len, uint8_t *out)
{
	size_t i;

	if (!f->masked) {
		memmove(out, payload, len);
		return;
	}
	for (i = 0; i < len; i++) {
		out[i] = payload[i] ^ f->mask[i & 3];
	}
}
