/*
 * sip_msg.c - SIP start line and header framing (RFC 3261 §7), stream framing (§18.3) and the
 * cheap content test used on every captured payload.
 *
 * sip_msg_parse() is a single forward pass: memchr() finds each line end, folded continuation
 * lines (§7.3.1) stay inside the header's value slice, and each header is indexed and, for the
 * few fields the engine needs on every message, split on the spot without validation (the
 * capture hot path: about 1 µs for an INVITE with SDP). Nothing is copied.
 * sip_msg_validate() is the second, optional pass over the index: semantic problems (RFC 4475
 * §3.1.2, §3.3) do not stop either pass; they set SIP_MSG_F_* flags so an analyser can still
 * show the message and a proxy can answer 400 with sip_msg_invalid_reason(). Only a malformed
 * start line gives SN_EPARSE from the parse.
 * Bare LF line ends are accepted everywhere (SIP_MSG_F_BARE_LF records them).
 *
 * Ownership: the header index is allocated from the caller's arena; slices borrow the input.
 * Thread: reentrant; no global mutable state.
 * Limits: SIP_MSG_MAX_HDRS header lines; sip_msg_frame() gives up after SIP_FRAME_MAX_HDR bytes
 * of headers.
 */
#include "config.h"

#include "sipnab/sip_msg.h"

#include <string.h>

#include "sip_int.h"

#define SIP_FRAME_MAX_HDR (64u * 1024u)
#define SIP_HDRS_INITIAL  32u

static const char *const method_names[SIP_METHOD__COUNT] = {
	[SIP_METHOD_UNKNOWN] = "UNKNOWN",
	[SIP_METHOD_INVITE] = "INVITE",
	[SIP_METHOD_ACK] = "ACK",
	[SIP_METHOD_BYE] = "BYE",
	[SIP_METHOD_CANCEL] = "CANCEL",
	[SIP_METHOD_REGISTER] = "REGISTER",
	[SIP_METHOD_OPTIONS] = "OPTIONS",
	[SIP_METHOD_PRACK] = "PRACK",
	[SIP_METHOD_SUBSCRIBE] = "SUBSCRIBE",
	[SIP_METHOD_NOTIFY] = "NOTIFY",
	[SIP_METHOD_PUBLISH] = "PUBLISH",
	[SIP_METHOD_INFO] = "INFO",
	[SIP_METHOD_REFER] = "REFER",
	[SIP_METHOD_MESSAGE] = "MESSAGE",
	[SIP_METHOD_UPDATE] = "UPDATE",
};

const char *sip_method_name(enum sip_method m)
{
	if ((unsigned)m >= SIP_METHOD__COUNT) {
		return "UNKNOWN";
	}
	return method_names[m];
}

static enum sip_method method_is(struct sn_slice tok, enum sip_method m)
{
	return memcmp(tok.ptr, method_names[m], tok.len) == 0 ? m : SIP_METHOD_UNKNOWN;
}

/* A switch on length and first letter leaves one name to compare. */
enum sip_method sip_method_from_slice(struct sn_slice tok)
{
	switch (tok.len) {
	case 3:
		return method_is(tok, tok.ptr[0] == 'A' ? SIP_METHOD_ACK : SIP_METHOD_BYE);
	case 4:
		return method_is(tok, SIP_METHOD_INFO);
	case 5:
		return method_is(tok, tok.ptr[0] == 'P' ? SIP_METHOD_PRACK : SIP_METHOD_REFER);
	case 6:
		switch (tok.ptr[0]) {
		case 'I':
			return method_is(tok, SIP_METHOD_INVITE);
		case 'C':
			return method_is(tok, SIP_METHOD_CANCEL);
		case 'N':
			return method_is(tok, SIP_METHOD_NOTIFY);
		case 'U':
			return method_is(tok, SIP_METHOD_UPDATE);
		}
		break;
	case 7:
		switch (tok.ptr[0]) {
		case 'O':
			return method_is(tok, SIP_METHOD_OPTIONS);
		case 'P':
			return method_is(tok, SIP_METHOD_PUBLISH);
		case 'M':
			return method_is(tok, SIP_METHOD_MESSAGE);
		}
		break;
	case 8:
		return method_is(tok, SIP_METHOD_REGISTER);
	case 9:
		return method_is(tok, SIP_METHOD_SUBSCRIBE);
	}
	return SIP_METHOD_UNKNOWN;
}

size_t sip_msg_skip_keepalive(const uint8_t *p, size_t len)
{
	size_t i = 0;

	while (i < len && (p[i] == '\r' || p[i] == '\n')) {
		i++;
	}
	return i;
}

static bool is_digit(uint8_t c)
{
	return c >= '0' && c <= '9';
}

/* "SIP/" DIGIT "." DIGIT at p followed by CR or LF. */
static bool req_version_at(const uint8_t *p, size_t n)
{
	return n >= 8 && memcmp(p, "SIP/", 4) == 0 && is_digit(p[4]) && p[5] == '.' &&
	       is_digit(p[6]) && (p[7] == '\r' || p[7] == '\n');
}

bool sip_msg_is_start(const uint8_t *p, size_t len)
{
	size_t i = 0;
	size_t j;
	bool colon = false;

	if (len < 12 || !sip_is(p[0], SIP_CT_TOKEN)) {
		return false;
	}
	if (memcmp(p, "SIP/2.0 ", 8) == 0) {
		return is_digit(p[8]) && is_digit(p[9]) && is_digit(p[10]) &&
		       (p[11] == ' ' || p[11] == '\r' || p[11] == '\n') && p[8] >= '1' &&
		       p[8] <= '6';
	}
	while (i < len && sip_is(p[i], SIP_CT_TOKEN)) {
		i++;
	}
	if (i >= len || p[i] != ' ') {
		return false;
	}
	j = ++i;
	if (j >= len || !sip_is(p[j], SIP_CT_ALPHA)) {
		return false;
	}
	while (j < len && p[j] > 0x20 && p[j] < 0x7f) {
		colon |= p[j] == ':';
		j++;
	}
	if (!colon || j >= len || p[j] != ' ') {
		return false;
	}
	return req_version_at(p + j + 1, len - j - 1);
}

/* Lines end at LF; a CR before it is dropped. */
static const uint8_t *line_end(const uint8_t *ls, const uint8_t *lf)
{
	return (lf > ls && lf[-1] == '\r') ? lf - 1 : lf;
}

enum sn_status sip_msg_frame(const uint8_t *p, size_t len, size_t *msg_len)
{
	const uint8_t *e = p + len;
	const uint8_t *scan_e = len > SIP_FRAME_MAX_HDR ? p + SIP_FRAME_MAX_HDR : e;
	const uint8_t *lf;
	const uint8_t *pos;
	uint32_t clen = 0;
	bool have_clen = false;

	if (!len) {
		return SN_ETRUNC;
	}
	if (!sip_is(p[0], SIP_CT_TOKEN)) {
		return SN_EPARSE;
	}
	lf = memchr(p, '\n', (size_t)(scan_e - p));
	if (!lf) {
		return scan_e < e ? SN_EPARSE : SN_ETRUNC;
	}
	if (!sip_msg_is_start(p, (size_t)(lf - p) + 1)) {
		return SN_EPARSE;
	}
	pos = lf + 1;
	for (;;) {
		if (pos >= scan_e) {
			return scan_e < e ? SN_EPARSE : SN_ETRUNC;
		}
		lf = memchr(pos, '\n', (size_t)(scan_e - pos));
		if (!lf) {
			return scan_e < e ? SN_EPARSE : SN_ETRUNC;
		}
		const uint8_t *le = line_end(pos, lf);
		if (le == pos) {
			pos = lf + 1;
			break;
		}
		if (!have_clen && !sip_is(*pos, SIP_CT_WS)) {
			const uint8_t *colon = memchr(pos, ':', (size_t)(le - pos));
			if (colon && sip_hdr_lookup(sip_trim(sip_sl(pos, colon))) ==
					     SIP_HDR_CONTENT_LENGTH) {
				if (!sip_dec_u32(sip_trim(sip_sl(colon + 1, le)), &clen)) {
					return SN_EPARSE;
				}
				have_clen = true;
			}
		}
		pos = lf + 1;
	}
	if ((size_t)(e - pos) < clen) {
		return SN_ETRUNC;
	}
	*msg_len = (size_t)(pos - p) + clen;
	return SN_OK;
}

static enum sn_status parse_start_line(struct sip_msg *msg, const uint8_t *p, const uint8_t *e)
{
	const uint8_t *sp;

	if (e - p >= 4 && sip_caseeq_n(sip_sl(p, p + 4), "SIP/", 4)) {
		sp = memchr(p, ' ', (size_t)(e - p));
		if (!sp || e - sp < 4) {
			return SN_EPARSE;
		}
		msg->version = sip_sl(p, sp);
		sp++;
		if (!is_digit(sp[0]) || !is_digit(sp[1]) || !is_digit(sp[2]) ||
		    (sp + 3 < e && sp[3] != ' ')) {
			return SN_EPARSE;
		}
		uint16_t code =
			(uint16_t)((sp[0] - '0') * 100 + (sp[1] - '0') * 10 + (sp[2] - '0'));
		if (code < 100 || code > 699) {
			return SN_EPARSE;
		}
		msg->is_request = false;
		msg->status_code = code;
		msg->reason = sp + 3 < e ? sip_sl(sp + 4, e) : sip_sl(e, e);
	} else {
		const uint8_t *m = p;
		while (p < e && sip_is(*p, SIP_CT_TOKEN)) {
			p++;
		}
		if (p == m || p >= e || *p != ' ') {
			return SN_EPARSE;
		}
		msg->method_name = sip_sl(m, p);
		const uint8_t *u = ++p;
		p = p < e ? memchr(p, ' ', (size_t)(e - p)) : NULL;
		if (!p || p == u) {
			return SN_EPARSE;
		}
		msg->ruri = sip_sl(u, p);
		p++;
		for (const uint8_t *v = p; v < e; v++) {
			if (sip_is(*v, SIP_CT_LWS) || *v < 0x20) {
				return SN_EPARSE;
			}
		}
		if (e - p < 5 || !sip_caseeq_n(sip_sl(p, p + 4), "SIP/", 4)) {
			return SN_EPARSE;
		}
		msg->version = sip_sl(p, e);
		msg->is_request = true;
		msg->method = sip_method_from_slice(msg->method_name);
	}
	return SN_OK;
}

static enum sn_status hdr_add(struct sip_msg *msg, struct sn_arena *arena, uint32_t *cap,
			      struct sip_hdr h)
{
	if (msg->hdr_count == *cap) {
		uint32_t ncap = *cap ? *cap * 2 : SIP_HDRS_INITIAL;
		void *mem;
		if (msg->hdr_count >= SIP_MSG_MAX_HDRS) {
			return SN_ELIMIT;
		}
		if (ncap > SIP_MSG_MAX_HDRS) {
			ncap = SIP_MSG_MAX_HDRS;
		}
		if (sn_arena_alloc(arena, ncap * sizeof(struct sip_hdr), &mem) != SN_OK) {
			return SN_ELIMIT;
		}
		if (msg->hdr_count) {
			memcpy(mem, msg->hdrs, msg->hdr_count * sizeof(struct sip_hdr));
		}
		msg->hdrs = mem;
		*cap = ncap;
	}
	msg->hdrs[msg->hdr_count++] = h;
	return SN_OK;
}

/* Leading decimal number of a value such as Retry-After "120 (comment);duration=60". */
static bool leading_u32(struct sn_slice v, uint32_t *out)
{
	uint32_t i = 0;

	while (i < v.len && is_digit(v.ptr[i])) {
		i++;
	}
	return sip_dec_u32(sip_sl(v.ptr, v.ptr + i), out);
}

#define SEEN(id) ((uint64_t)1 << (id))

/* Headers that may appear once (RFC 3261 §7.3.1 and §20); the first one counts. */
#define SINGLE_HDRS                                                                    \
	(SEEN(SIP_HDR_CALL_ID) | SEEN(SIP_HDR_FROM) | SEEN(SIP_HDR_TO) | SEEN(SIP_HDR_CSEQ) | \
	 SEEN(SIP_HDR_CONTENT_LENGTH) | SEEN(SIP_HDR_MAX_FORWARDS))

/*
 * Count the elements of one Via line into via_count and, until one is found, take the first
 * element that splits as the top Via. The rest of the line is only scanned for commas.
 */
static void via_line(struct sip_msg *msg, struct sn_slice v)
{
	const uint8_t *p = v.ptr;
	const uint8_t *e = sn_slice_end(v);

	if (!v.len) {
		return;
	}
	for (;;) {
		/* no comma left: the rest is one element, whatever its quotes */
		const uint8_t *q = memchr(p, ',', (size_t)(e - p)) ? sip_elem_end(p, e) : e;
		msg->via_count++;
		if (!msg->via.proto_name.len && sip_via_split(sip_sl(p, q), &msg->via) != SN_OK) {
			memset(&msg->via, 0, sizeof(msg->via));
		}
		if (q >= e) {
			return;
		}
		p = q + 1;
	}
}

/*
 * Take what the capture engine needs from a known header. From/To give their URI text and tag
 * by the name-addr's structure (sip_name_addr_split(): a broken structure gives neither); the
 * URI and parameter syntax, like every other check, is left to sip_msg_validate().
 */
static void hdr_apply(struct sip_msg *msg, uint64_t *seen, const struct sip_hdr *h)
{
	struct sn_slice v = h->value;
	struct sip_name_addr na;
	uint32_t n;

	if (*seen & SINGLE_HDRS & SEEN(h->id)) {
		return;
	}
	*seen |= SEEN(h->id);
	switch (h->id) {
	case SIP_HDR_CALL_ID:
		msg->call_id = v;
		break;
	case SIP_HDR_FROM:
		/* the index takes the URI text and tag from the name-addr's structure only;
		 * validating the URI and the parameters is sip_msg_validate()'s job (the proxy
		 * runs it; a capture keeps what was sent) */
		msg->from_value = v;
		if (sip_name_addr_split(v, &na) == SN_OK) {
			msg->from_tag = na.tag;
			msg->from_uri = na.uri_text;
		}
		break;
	case SIP_HDR_TO:
		msg->to_value = v;
		if (sip_name_addr_split(v, &na) == SN_OK) {
			msg->to_tag = na.tag;
			msg->to_uri = na.uri_text;
		}
		break;
	case SIP_HDR_CSEQ:
		if (sip_cseq_parse(v, &msg->cseq, &msg->cseq_method_name) == SN_OK) {
			msg->cseq_method = sip_method_from_slice(msg->cseq_method_name);
		}
		break;
	case SIP_HDR_CONTENT_LENGTH:
		if (sip_u32_parse(v, &msg->content_length) != SN_OK) {
			msg->flags |= SIP_MSG_F_BAD_CONTENT_LENGTH;
		} else {
			msg->has_content_length = true;
		}
		break;
	case SIP_HDR_CONTENT_TYPE:
		if (!msg->content_type.ptr) {
			msg->content_type = v;
		}
		break;
	case SIP_HDR_MAX_FORWARDS:
		if (sip_u32_parse(v, &n) == SN_OK && n <= 255) {
			msg->max_forwards = (int32_t)n;
		}
		break;
	case SIP_HDR_VIA:
		via_line(msg, v);
		break;
	default:
		break;
	}
}

/* Missing headers: known once the whole header block is indexed. */
static void msg_finish(struct sip_msg *msg, uint64_t seen)
{
	if (!(seen & SEEN(SIP_HDR_CALL_ID))) {
		msg->flags |= SIP_MSG_F_NO_CALLID;
	}
	if (!(seen & SEEN(SIP_HDR_FROM))) {
		msg->flags |= SIP_MSG_F_NO_FROM;
	}
	if (!(seen & SEEN(SIP_HDR_TO))) {
		msg->flags |= SIP_MSG_F_NO_TO;
	}
	if (!(seen & SEEN(SIP_HDR_CSEQ))) {
		msg->flags |= SIP_MSG_F_NO_CSEQ;
	}
	if (!(seen & SEEN(SIP_HDR_VIA))) {
		msg->flags |= SIP_MSG_F_NO_VIA;
	}
	if (!(seen & SEEN(SIP_HDR_CONTENT_LENGTH))) {
		msg->flags |= SIP_MSG_F_NO_CONTENT_LEN;
	}
	if (msg->is_request && !(seen & SEEN(SIP_HDR_MAX_FORWARDS))) {
		msg->flags |= SIP_MSG_F_NO_MAX_FWD;
	}
}

enum sn_status sip_msg_parse(struct sip_msg *msg, struct sn_arena *arena, const uint8_t *p,
			     size_t len)
{
	const uint8_t *e = p + len;
	const uint8_t *lf;
	const uint8_t *pos;
	const uint8_t *hdr_end;
	uint32_t cap = 0;
	uint64_t seen = 0;
	enum sn_status st;

	memset(msg, 0, sizeof(*msg));
	msg->max_forwards = -1;
	if (!len) {
		return SN_ETRUNC;
	}
	if (!sip_is(p[0], SIP_CT_TOKEN)) {
		return SN_EPARSE;
	}
	if (len > UINT32_MAX) {
		return SN_ELIMIT;
	}
	lf = memchr(p, '\n', len);
	if (!lf) {
		return SN_ETRUNC;
	}
	if (lf == p || lf[-1] != '\r') {
		msg->flags |= SIP_MSG_F_BARE_LF;
	}
	st = parse_start_line(msg, p, line_end(p, lf));
	if (st != SN_OK) {
		return st;
	}
	pos = lf + 1;
	for (;;) {
		if (pos >= e) {
			return SN_ETRUNC;
		}
		if (*pos == '\n') {
			msg->flags |= SIP_MSG_F_BARE_LF;
			hdr_end = pos + 1;
			break;
		}
		if (*pos == '\r' && e - pos >= 2 && pos[1] == '\n') {
			hdr_end = pos + 2;
			break;
		}
		const uint8_t *ls = pos;
		lf = memchr(pos, '\n', (size_t)(e - pos));
		while (lf && lf + 1 < e && sip_is(lf[1], SIP_CT_WS)) {
			lf = memchr(lf + 1, '\n', (size_t)(e - lf - 1));
		}
		if (!lf || lf + 1 >= e) {
			return SN_ETRUNC;
		}
		if (lf[-1] != '\r') {
			msg->flags |= SIP_MSG_F_BARE_LF;
		}
		const uint8_t *le = line_end(ls, lf);
		const uint8_t *q = ls;
		while (q < le && sip_is(*q, SIP_CT_TOKEN)) {
			q++;
		}
		struct sip_hdr h;
		h.name = sip_sl(ls, q);
		while (q < le && sip_is(*q, SIP_CT_WS)) {
			q++;
		}
		pos = lf + 1;
		if (!h.name.len || q >= le || *q != ':') {
			msg->flags |= SIP_MSG_F_BAD_HEADER;
			continue;
		}
		h.value = sip_trim(sip_sl(q + 1, le));
		if (!h.value.len) {
			h.value.ptr = q + 1;
		}
		h.id = sip_hdr_lookup(h.name);
		st = hdr_add(msg, arena, &cap, h);
		if (st != SN_OK) {
			return st;
		}
		if (h.id != SIP_HDR_OTHER) {
			hdr_apply(msg, &seen, &h);
		}
	}
	msg_finish(msg, seen);
	msg->hdr_len = (uint32_t)(hdr_end - p);
	size_t avail = (size_t)(e - hdr_end);
	if (msg->has_content_length && !(msg->flags & SIP_MSG_F_BAD_CONTENT_LENGTH)) {
		if (msg->content_length > avail) {
			msg->flags |= SIP_MSG_F_BODY_TRUNC;
			msg->body = sip_sl(hdr_end, e);
			msg->msg_len = (uint32_t)len;
			return SN_ETRUNC;
		}
		avail = msg->content_length;
	}
	msg->body = sip_sl(hdr_end, hdr_end + avail);
	msg->msg_len = msg->hdr_len + (uint32_t)avail;
	return SN_OK;
}

/* ---- validation (sip_msg_validate) ---------------------------------------------------- */

/* Every element of one Via, Contact, Route or Record-Route line. */
static void check_list(struct sip_msg *msg, struct sn_slice value, enum sip_hdr_id id)
{
	struct sip_hdr one = {SN_SLICE_NULL, value, id};
	struct sip_msg tmp;
	struct sip_hdr_iter it;
	struct sn_slice el;

	tmp.hdrs = &one;
	tmp.hdr_count = 1;
	sip_hdr_iter_init(&it, &tmp, id);
	while (sip_hdr_iter_next(&it, &el)) {
		if (id == SIP_HDR_VIA) {
			struct sip_via via;
			if (sip_via_parse(el, &via) != SN_OK) {
				msg->flags |= SIP_MSG_F_BAD_VIA;
				continue;
			}
			/* RFC 3261 §8.1.1.7: the cookie alone identifies no transaction */
			if (sn_slice_eq_str(via.branch, "z9hG4bK")) {
				msg->flags |= SIP_MSG_F_BAD_VIA;
			}
			if (!sip_caseeq_n(via.proto_name, "SIP", 3) ||
			    !sn_slice_eq_str(via.proto_version, "2.0")) {
				msg->flags |= SIP_MSG_F_BAD_VERSION;
			}
		} else if (id == SIP_HDR_CONTACT) {
			struct sip_contact c;
			if (sip_contact_parse(el, &c) != SN_OK) {
				msg->flags |= SIP_MSG_F_BAD_CONTACT;
			}
		} else {
			struct sip_name_addr na;
			if (sip_name_addr_parse(el, &na) != SN_OK) {
				msg->flags |= SIP_MSG_F_BAD_ROUTE;
			}
		}
	}
	if (id == SIP_HDR_VIA && !value.len) {
		msg->flags |= SIP_MSG_F_BAD_VIA;
	}
}

/* The full checks of one known header line. */
static void check_hdr(struct sip_msg *msg, uint64_t *seen, const struct sip_hdr *h)
{
	struct sn_slice v = h->value;
	struct sip_name_addr na;
	struct sn_slice m;
	uint32_t n;

	if (*seen & SINGLE_HDRS & SEEN(h->id)) {
		msg->flags |= SIP_MSG_F_DUP_SINGLE_HEADER;
		return;
	}
	*seen |= SEEN(h->id);
	switch (h->id) {
	case SIP_HDR_CALL_ID:
		if (!v.len) {
			msg->flags |= SIP_MSG_F_BAD_CALLID;
		}
		for (uint32_t i = 0; i < v.len; i++) {
			if (sip_is(v.ptr[i], SIP_CT_LWS)) {
				msg->flags |= SIP_MSG_F_BAD_CALLID;
				break;
			}
		}
		break;
	case SIP_HDR_FROM:
		if (sip_name_addr_parse(v, &na) != SN_OK) {
			msg->flags |= SIP_MSG_F_BAD_FROM;
		}
		break;
	case SIP_HDR_TO:
		if (sip_name_addr_parse(v, &na) != SN_OK) {
			msg->flags |= SIP_MSG_F_BAD_TO;
		}
		break;
	case SIP_HDR_CSEQ:
		if (sip_cseq_parse(v, &n, &m) != SN_OK) {
			msg->flags |= SIP_MSG_F_BAD_CSEQ;
		}
		break;
	case SIP_HDR_MAX_FORWARDS:
		if (sip_u32_parse(v, &n) != SN_OK || n > 255) {
			msg->flags |= SIP_MSG_F_BAD_SCALAR;
		}
		break;
	case SIP_HDR_EXPIRES:
	case SIP_HDR_MIN_EXPIRES:
		if (sip_u32_parse(v, &n) != SN_OK) {
			msg->flags |= SIP_MSG_F_BAD_SCALAR;
		}
		break;
	case SIP_HDR_RETRY_AFTER:
		if (!leading_u32(v, &n)) {
			msg->flags |= SIP_MSG_F_BAD_SCALAR;
		}
		break;
	case SIP_HDR_DATE:
		if (v.len < 3 || memcmp(sn_slice_end(v) - 3, "GMT", 3) != 0) {
			msg->flags |= SIP_MSG_F_BAD_DATE;
		}
		break;
	case SIP_HDR_VIA:
	case SIP_HDR_CONTACT:
	case SIP_HDR_ROUTE:
	case SIP_HDR_RECORD_ROUTE:
		check_list(msg, v, h->id);
		break;
	default:
		break;
	}
}

enum sn_status sip_msg_validate(struct sip_msg *msg, struct sn_arena *arena)
{
	uint64_t seen = 0;

	(void)arena;
	for (uint32_t i = 0; i < msg->hdr_count; i++) {
		if (msg->hdrs[i].id != SIP_HDR_OTHER) {
			check_hdr(msg, &seen, &msg->hdrs[i]);
		}
	}
	if (!sn_slice_eq_str(msg->version, "SIP/2.0")) {
		msg->flags |= SIP_MSG_F_BAD_VERSION;
	}
	if (msg->is_request) {
		struct sip_uri uri;
		if (msg->cseq_method_name.ptr &&
		    !sn_slice_eq(msg->cseq_method_name, msg->method_name)) {
			msg->flags |= SIP_MSG_F_CSEQ_METHOD_MISMATCH;
		}
		if (sip_uri_parse(msg->ruri, &uri) != SN_OK ||
		    (uri.scheme != SIP_URI_OTHER && uri.headers.ptr)) {
			msg->flags |= SIP_MSG_F_BAD_URI;
		}
	}
	msg->flags |= SIP_MSG_F_VALIDATED;
	return (msg->flags & SIP_MSG_F_INVALID) ? SN_EPARSE : SN_OK;
}

static const struct {
	uint32_t flag;
	const char *text;
} invalid_reasons[] = {
	{SIP_MSG_F_BAD_VERSION, "Version Not Supported"},
	{SIP_MSG_F_BAD_URI, "Bad Request-URI"},
	{SIP_MSG_F_DUP_SINGLE_HEADER, "Duplicate Header"},
	{SIP_MSG_F_BAD_CONTENT_LENGTH, "Bad Content-Length"},
	{SIP_MSG_F_NO_CALLID, "Missing Call-ID"},
	{SIP_MSG_F_NO_FROM, "Missing From"},
	{SIP_MSG_F_NO_TO, "Missing To"},
	{SIP_MSG_F_NO_CSEQ, "Missing CSeq"},
	{SIP_MSG_F_NO_VIA, "Missing Via"},
	{SIP_MSG_F_BAD_CSEQ, "Bad CSeq"},
	{SIP_MSG_F_CSEQ_METHOD_MISMATCH, "CSeq Method Mismatch"},
	{SIP_MSG_F_BAD_VIA, "Bad Via"},
	{SIP_MSG_F_BAD_FROM, "Bad From"},
	{SIP_MSG_F_BAD_TO, "Bad To"},
	{SIP_MSG_F_BAD_CONTACT, "Bad Contact"},
	{SIP_MSG_F_BAD_ROUTE, "Bad Route"},
	{SIP_MSG_F_BAD_CALLID, "Bad Call-ID"},
	{SIP_MSG_F_BAD_SCALAR, "Bad Header Value"},
	{SIP_MSG_F_BAD_DATE, "Bad Date"},
	{SIP_MSG_F_BAD_HEADER, "Malformed Header"},
};

const char *sip_msg_invalid_reason(const struct sip_msg *msg)
{
	for (size_t i = 0; i < SN_ARRAY_SIZE(invalid_reasons); i++) {
		if (msg->flags & invalid_reasons[i].flag) {
			return invalid_reasons[i].text;
		}
	}
	return NULL;
}

const struct sip_hdr *sip_msg_hdr_find(const struct sip_msg *msg, enum sip_hdr_id id)
{
	for (uint32_t i = 0; i < msg->hdr_count; i++) {
		if (msg->hdrs[i].id == id) {
			return &msg->hdrs[i];
		}
	}
	return NULL;
}

const struct sip_hdr *sip_msg_hdr_find_name(const struct sip_msg *msg, const char *name)
{
	struct sn_slice n = sn_slice_make(name, strlen(name));
	enum sip_hdr_id id = sip_hdr_lookup(n);

	if (id != SIP_HDR_OTHER) {
		return sip_msg_hdr_find(msg, id);
	}
	for (uint32_t i = 0; i < msg->hdr_count; i++) {
		if (msg->hdrs[i].id == SIP_HDR_OTHER && sn_slice_caseeq(msg->hdrs[i].name, n)) {
			return &msg->hdrs[i];
		}
	}
	return NULL;
}
