/*
 * sip_hdr.c - header names and the typed header-value parsers: comma-list splitting, name-addr
 * (From, To, Contact, Route ...), Via, CSeq, numbers, and multipart bodies.
 *
 * Every parser takes one element as a slice and fills a struct of slices into the same bytes;
 * nothing is copied or unescaped. Values may contain folded line ends (CRLF followed by SP or
 * HT, RFC 3261 §7.3.1), so CR and LF count as whitespace everywhere here.
 * Splitting at commas respects quoted strings (with backslash escapes) and <...>, as required
 * for Contact and Route values whose URIs carry commas (§7.3.1).
 * Thread: pure functions; tables are const.
 */
#include "config.h"

#include <string.h>

#include "sipnab/sip_msg.h"

#include "sip_int.h"

struct hdr_def {
	const char *name;
	uint8_t len;
	uint8_t id;
};

#define HD(s, i)                               \
	{                                      \
		s, (uint8_t)(sizeof(s) - 1), i \
	}

static const struct hdr_def hdr_defs[] = {
	HD("Call-ID", SIP_HDR_CALL_ID),
	HD("Contact", SIP_HDR_CONTACT),
	HD("From", SIP_HDR_FROM),
	HD("To", SIP_HDR_TO),
	HD("Via", SIP_HDR_VIA),
	HD("Content-Length", SIP_HDR_CONTENT_LENGTH),
	HD("Content-Type", SIP_HDR_CONTENT_TYPE),
	HD("Supported", SIP_HDR_SUPPORTED),
	HD("Subject", SIP_HDR_SUBJECT),
	HD("Content-Encoding", SIP_HDR_CONTENT_ENCODING),
	HD("Event", SIP_HDR_EVENT),
	HD("Allow-Events", SIP_HDR_ALLOW_EVENTS),
	HD("Refer-To", SIP_HDR_REFER_TO),
	HD("Referred-By", SIP_HDR_REFERRED_BY),
	HD("Session-Expires", SIP_HDR_SESSION_EXPIRES),
	HD("Accept-Contact", SIP_HDR_ACCEPT_CONTACT),
	HD("Reject-Contact", SIP_HDR_REJECT_CONTACT),
	HD("Request-Disposition", SIP_HDR_REQUEST_DISPOSITION),
	HD("Identity", SIP_HDR_IDENTITY),
	HD("Identity-Info", SIP_HDR_IDENTITY_INFO),
	HD("CSeq", SIP_HDR_CSEQ),
	HD("Max-Forwards", SIP_HDR_MAX_FORWARDS),
	HD("Route", SIP_HDR_ROUTE),
	HD("Record-Route", SIP_HDR_RECORD_ROUTE),
	HD("Expires", SIP_HDR_EXPIRES),
	HD("User-Agent", SIP_HDR_USER_AGENT),
	HD("Server", SIP_HDR_SERVER),
	HD("Allow", SIP_HDR_ALLOW),
	HD("Require", SIP_HDR_REQUIRE),
	HD("Proxy-Require", SIP_HDR_PROXY_REQUIRE),
	HD("Unsupported", SIP_HDR_UNSUPPORTED),
	HD("Authorization", SIP_HDR_AUTHORIZATION),
	HD("Proxy-Authorization", SIP_HDR_PROXY_AUTHORIZATION),
	HD("WWW-Authenticate", SIP_HDR_WWW_AUTHENTICATE),
	HD("Proxy-Authenticate", SIP_HDR_PROXY_AUTHENTICATE),
	HD("Date", SIP_HDR_DATE),
	HD("Retry-After", SIP_HDR_RETRY_AFTER),
	HD("Accept", SIP_HDR_ACCEPT),
	HD("Content-Disposition", SIP_HDR_CONTENT_DISPOSITION),
	HD("MIME-Version", SIP_HDR_MIME_VERSION),
	HD("Min-Expires", SIP_HDR_MIN_EXPIRES),
	HD("Reason", SIP_HDR_REASON),
	HD("P-Asserted-Identity", SIP_HDR_P_ASSERTED_IDENTITY),
	HD("Privacy", SIP_HDR_PRIVACY),
	HD("Warning", SIP_HDR_WARNING),
	HD("RSeq", SIP_HDR_RSEQ),
	HD("RAck", SIP_HDR_RACK),
	HD("Replaces", SIP_HDR_REPLACES),
	HD("Path", SIP_HDR_PATH),
	HD("Timestamp", SIP_HDR_TIMESTAMP),
};

/* Compact forms, indexed by letter - 'a'. */
static const uint8_t hdr_compact[26] = {
	['a' - 'a'] = SIP_HDR_ACCEPT_CONTACT,
	['b' - 'a'] = SIP_HDR_REFERRED_BY,
	['c' - 'a'] = SIP_HDR_CONTENT_TYPE,
	['d' - 'a'] = SIP_HDR_REQUEST_DISPOSITION,
	['e' - 'a'] = SIP_HDR_CONTENT_ENCODING,
	['f' - 'a'] = SIP_HDR_FROM,
	['i' - 'a'] = SIP_HDR_CALL_ID,
	['j' - 'a'] = SIP_HDR_REJECT_CONTACT,
	['k' - 'a'] = SIP_HDR_SUPPORTED,
	['l' - 'a'] = SIP_HDR_CONTENT_LENGTH,
	['m' - 'a'] = SIP_HDR_CONTACT,
	['n' - 'a'] = SIP_HDR_IDENTITY_INFO,
	['o' - 'a'] = SIP_HDR_EVENT,
	['r' - 'a'] = SIP_HDR_REFER_TO,
	['s' - 'a'] = SIP_HDR_SUBJECT,
	['t' - 'a'] = SIP_HDR_TO,
	['u' - 'a'] = SIP_HDR_ALLOW_EVENTS,
	['v' - 'a'] = SIP_HDR_VIA,
	['x' - 'a'] = SIP_HDR_SESSION_EXPIRES,
	['y' - 'a'] = SIP_HDR_IDENTITY,
};

const char *sip_hdr_name(enum sip_hdr_id id)
{
	for (size_t i = 0; i < SN_ARRAY_SIZE(hdr_defs); i++) {
		if (hdr_defs[i].id == id) {
			return hdr_defs[i].name;
		}
	}
	return NULL;
}

/*
 * @p n (whose length is already known to match) equals @p lit case-insensitively. Names are
 * nearly always written in the canonical case, which a plain memcmp() settles.
 */
static inline enum sip_hdr_id hdr_is(struct sn_slice n, const char *lit, enum sip_hdr_id id)
{
	if (memcmp(n.ptr, lit, n.len) == 0) {
		return id;
	}
	for (uint32_t i = 0; i < n.len; i++) {
		if (sip_lower(n.ptr[i]) != sip_lower((uint8_t)lit[i])) {
			return SIP_HDR_OTHER;
		}
	}
	return id;
}

/*
 * A switch on length and first letter leaves at most two candidates to compare; keep it in
 * step with hdr_defs (check_sip_parse maps every name of the table through this function).
 */
enum sip_hdr_id sip_hdr_lookup(struct sn_slice n)
{
	uint8_t c0;

	if (!n.len) {
		return SIP_HDR_OTHER;
	}
	c0 = sip_lower(n.ptr[0]);
	switch (n.len) {
	case 1:
		return (c0 >= 'a' && c0 <= 'z') ? (enum sip_hdr_id)hdr_compact[c0 - 'a']
						: SIP_HDR_OTHER;
	case 2:
		return c0 == 't' ? hdr_is(n, "To", SIP_HDR_TO) : SIP_HDR_OTHER;
	case 3:
		return c0 == 'v' ? hdr_is(n, "Via", SIP_HDR_VIA) : SIP_HDR_OTHER;
	case 4:
		switch (c0) {
		case 'f':
			return hdr_is(n, "From", SIP_HDR_FROM);
		case 'c':
			return hdr_is(n, "CSeq", SIP_HDR_CSEQ);
		case 'd':
			return hdr_is(n, "Date", SIP_HDR_DATE);
		case 'p':
			return hdr_is(n, "Path", SIP_HDR_PATH);
		case 'r':
			if (sip_lower(n.ptr[1]) == 's') {
				return hdr_is(n, "RSeq", SIP_HDR_RSEQ);
			}
			return hdr_is(n, "RAck", SIP_HDR_RACK);
		}
		break;
	case 5:
		switch (c0) {
		case 'e':
			return hdr_is(n, "Event", SIP_HDR_EVENT);
		case 'r':
			return hdr_is(n, "Route", SIP_HDR_ROUTE);
		case 'a':
			return hdr_is(n, "Allow", SIP_HDR_ALLOW);
		}
		break;
	case 6:
		switch (c0) {
		case 's':
			return hdr_is(n, "Server", SIP_HDR_SERVER);
		case 'a':
			return hdr_is(n, "Accept", SIP_HDR_ACCEPT);
		case 'r':
			return hdr_is(n, "Reason", SIP_HDR_REASON);
		}
		break;
	case 7:
		switch (c0) {
		case 'c':
			if (sip_lower(n.ptr[1]) == 'a') {
				return hdr_is(n, "Call-ID", SIP_HDR_CALL_ID);
			}
			return hdr_is(n, "Contact", SIP_HDR_CONTACT);
		case 's':
			return hdr_is(n, "Subject", SIP_HDR_SUBJECT);
		case 'e':
			return hdr_is(n, "Expires", SIP_HDR_EXPIRES);
		case 'r':
			return hdr_is(n, "Require", SIP_HDR_REQUIRE);
		case 'p':
			return hdr_is(n, "Privacy", SIP_HDR_PRIVACY);
		case 'w':
			return hdr_is(n, "Warning", SIP_HDR_WARNING);
		}
		break;
	case 8:
		switch (c0) {
		case 'r':
			if (sip_lower(n.ptr[2]) == 'f') {
				return hdr_is(n, "Refer-To", SIP_HDR_REFER_TO);
			}
			return hdr_is(n, "Replaces", SIP_HDR_REPLACES);
		case 'i':
			return hdr_is(n, "Identity", SIP_HDR_IDENTITY);
		}
		break;
	case 9:
		switch (c0) {
		case 's':
			return hdr_is(n, "Supported", SIP_HDR_SUPPORTED);
		case 't':
			return hdr_is(n, "Timestamp", SIP_HDR_TIMESTAMP);
		}
		break;
	case 10:
		return c0 == 'u' ? hdr_is(n, "User-Agent", SIP_HDR_USER_AGENT) : SIP_HDR_OTHER;
	case 11:
		switch (c0) {
		case 'r':
			if (sip_lower(n.ptr[2]) == 'f') {
				return hdr_is(n, "Referred-By", SIP_HDR_REFERRED_BY);
			}
			return hdr_is(n, "Retry-After", SIP_HDR_RETRY_AFTER);
		case 'u':
			return hdr_is(n, "Unsupported", SIP_HDR_UNSUPPORTED);
		case 'm':
			return hdr_is(n, "Min-Expires", SIP_HDR_MIN_EXPIRES);
		}
		break;
	case 12:
		switch (c0) {
		case 'c':
			return hdr_is(n, "Content-Type", SIP_HDR_CONTENT_TYPE);
		case 'a':
			return hdr_is(n, "Allow-Events", SIP_HDR_ALLOW_EVENTS);
		case 'r':
			return hdr_is(n, "Record-Route", SIP_HDR_RECORD_ROUTE);
		case 'm':
			if (sip_lower(n.ptr[1]) == 'a') {
				return hdr_is(n, "Max-Forwards", SIP_HDR_MAX_FORWARDS);
			}
			return hdr_is(n, "MIME-Version", SIP_HDR_MIME_VERSION);
		}
		break;
	case 13:
		switch (c0) {
		case 'i':
			return hdr_is(n, "Identity-Info", SIP_HDR_IDENTITY_INFO);
		case 'p':
			return hdr_is(n, "Proxy-Require", SIP_HDR_PROXY_REQUIRE);
		case 'a':
			return hdr_is(n, "Authorization", SIP_HDR_AUTHORIZATION);
		}
		break;
	case 14:
		switch (c0) {
		case 'c':
			return hdr_is(n, "Content-Length", SIP_HDR_CONTENT_LENGTH);
		case 'a':
			return hdr_is(n, "Accept-Contact", SIP_HDR_ACCEPT_CONTACT);
		case 'r':
			return hdr_is(n, "Reject-Contact", SIP_HDR_REJECT_CONTACT);
		}
		break;
	case 15:
		return c0 == 's' ? hdr_is(n, "Session-Expires", SIP_HDR_SESSION_EXPIRES)
				 : SIP_HDR_OTHER;
	case 16:
		switch (c0) {
		case 'c':
			return hdr_is(n, "Content-Encoding", SIP_HDR_CONTENT_ENCODING);
		case 'w':
			return hdr_is(n, "WWW-Authenticate", SIP_HDR_WWW_AUTHENTICATE);
		}
		break;
	case 18:
		return c0 == 'p' ? hdr_is(n, "Proxy-Authenticate", SIP_HDR_PROXY_AUTHENTICATE)
				 : SIP_HDR_OTHER;
	case 19:
		switch (c0) {
		case 'r':
			return hdr_is(n, "Request-Disposition", SIP_HDR_REQUEST_DISPOSITION);
		case 'p':
			if (sip_lower(n.ptr[1]) == '-') {
				return hdr_is(n, "P-Asserted-Identity",
					      SIP_HDR_P_ASSERTED_IDENTITY);
			}
			return hdr_is(n, "Proxy-Authorization", SIP_HDR_PROXY_AUTHORIZATION);
		case 'c':
			return hdr_is(n, "Content-Disposition", SIP_HDR_CONTENT_DISPOSITION);
		}
		break;
	}
	return SIP_HDR_OTHER;
}

const uint8_t *sip_elem_end(const uint8_t *p, const uint8_t *e)
{
	bool quoted = false;
	bool angle = false;

	for (; p < e; p++) {
		uint8_t c = *p;
		if (quoted) {
			if (c == '\\' && p + 1 < e) {
				p++;
			} else if (c == '"') {
				quoted = false;
			}
		} else if (c == '"') {
			quoted = true;
		} else if (c == '<') {
			angle = true;
		} else if (c == '>') {
			angle = false;
		} else if (c == ',' && !angle) {
			return p;
		}
	}
	return e;
}

void sip_hdr_iter_init(struct sip_hdr_iter *it, const struct sip_msg *msg, enum sip_hdr_id id)
{
	it->msg = msg;
	it->id = id;
	it->idx = 0;
	it->rest = SN_SLICE_NULL;
	it->in_line = false;
}

bool sip_hdr_iter_next(struct sip_hdr_iter *it, struct sn_slice *elem)
{
	for (;;) {
		if (!it->in_line) {
			while (it->idx < it->msg->hdr_count &&
			       it->msg->hdrs[it->idx].id != it->id) {
				it->idx++;
			}
			if (it->idx >= it->msg->hdr_count) {
				return false;
			}
			it->rest = it->msg->hdrs[it->idx++].value;
			if (!it->rest.len) {
				continue;
			}
			it->in_line = true;
		}
		const uint8_t *p = it->rest.ptr;
		const uint8_t *e = p + it->rest.len;
		const uint8_t *q = sip_elem_end(p, e);
		*elem = sip_trim(sip_sl(p, q));
		if (q < e) {
			it->rest = sip_sl(q + 1, e);
		} else {
			it->in_line = false;
		}
		return true;
	}
}

/* Header params: names are tokens, a value after '=' is a token, host or quoted string. */
static bool params_valid(struct sn_slice params)
{
	struct sn_slice n;
	struct sn_slice v;

	while (sip_param_next(&params, ';', &n, &v)) {
		if (!sip_is_token(n)) {
			return false;
		}
		if (!v.ptr) {
			continue;
		}
		if (!v.len) {
			return false;
		}
		if (v.ptr[0] == '"') {
			if (v.len < 2 || v.ptr[v.len - 1] != '"') {
				return false;
			}
			continue;
		}
		for (uint32_t i = 0; i < v.len; i++) {
			uint8_t c = v.ptr[i];
			if (!sip_is(c, SIP_CT_TOKEN) && c != ':' && c != '[' && c != ']') {
				return false;
			}
		}
	}
	return true;
}

/* Display name without quotes: *(token LWS). */
static bool display_valid(struct sn_slice d)
{
	for (uint32_t i = 0; i < d.len; i++) {
		if (!sip_is(d.ptr[i], SIP_CT_TOKEN | SIP_CT_LWS)) {
			return false;
		}
	}
	return true;
}

enum sn_status sip_name_addr_split(struct sn_slice text, struct sip_name_addr *out)
{
	struct sn_slice t = sip_trim(text);
	const uint8_t *p = t.ptr;
	const uint8_t *e = sn_slice_end(t);
	const uint8_t *lt;

	out->display = SN_SLICE_NULL;
	out->params = SN_SLICE_NULL;
	out->tag = SN_SLICE_NULL;
	out->angle = false;
	if (!t.len) {
		return SN_EPARSE;
	}
	if (*p == '"') {
		const uint8_t *s = p++;
		const uint8_t *q = memchr(p, '"', (size_t)(e - p));
		if (q && !memchr(p, '\\', (size_t)(q - p))) {
			p = q; /* no escape before the first quote: it closes the string */
		} else {
			while (p < e && *p != '"') {
				if (*p == '\\') {
					p++;
				}
				p++;
			}
		}
		if (p >= e) {
			return SN_EPARSE;
		}
		out->display = sip_sl(s, p + 1);
		p = sip_skip_lws(p + 1, e);
		if (p >= e || *p != '<') {
			return SN_EPARSE;
		}
		lt = p;
	} else {
		lt = memchr(p, '<', t.len);
		if (lt) {
			out->display = sip_trim(sip_sl(p, lt));
		}
	}
	if (lt) {
		const uint8_t *gt = memchr(lt + 1, '>', (size_t)(e - lt - 1));
		if (!gt) {
			return SN_EPARSE;
		}
		out->angle = true;
		out->uri_text = sip_sl(lt + 1, gt);
		p = sip_skip_lws(gt + 1, e);
		if (p < e) {
			if (*p != ';') {
				return SN_EPARSE;
			}
			out->params = sip_sl(p + 1, e);
		}
	} else {
		/* addr-spec: ';' before the '@' belongs to the user part */
		const uint8_t *s = p;
		const uint8_t *at = memchr(p, '@', t.len);
		if (at && !memchr(p, '"', (size_t)(at - p))) {
			s = at;
		}
		const uint8_t *semi = memchr(s, ';', (size_t)(e - s));
		const uint8_t *ue = semi ? semi : e;
		/* an addr-spec cannot carry URI headers or commas (RFC 3261 §20.10) */
		for (const uint8_t *c = s; c < ue; c++) {
			if (*c == '?' || *c == ',') {
				return SN_EPARSE;
			}
		}
		out->uri_text = sip_trim(sip_sl(p, ue));
		if (semi) {
			out->params = sip_sl(semi + 1, e);
		}
	}
	if (out->params.len) {
		sip_param_find(out->params, "tag", &out->tag);
	}
	return SN_OK;
}

enum sn_status sip_name_addr_parse(struct sn_slice text, struct sip_name_addr *out)
{
	memset(out, 0, sizeof(*out));
	if (sip_name_addr_split(text, out) != SN_OK) {
		return SN_EPARSE;
	}
	if (out->display.len && out->display.ptr[0] != '"' && !display_valid(out->display)) {
		return SN_EPARSE;
	}
	if (sip_uri_parse(out->uri_text, &out->uri) != SN_OK || !params_valid(out->params)) {
		return SN_EPARSE;
	}
	return SN_OK;
}

/* Token at p (after skipping LWS); returns the end, or NULL when empty. */
static const uint8_t *token_at(const uint8_t *p, const uint8_t *e, struct sn_slice *tok)
{
	const uint8_t *s = sip_skip_lws(p, e);

	p = s;
	while (p < e && sip_is(*p, SIP_CT_TOKEN)) {
		p++;
	}
	*tok = sip_sl(s, p);
	return p == s ? NULL : p;
}

/* Expect @c after optional LWS; returns the position after it or NULL. */
static const uint8_t *expect_char(const uint8_t *p, const uint8_t *e, uint8_t c)
{
	p = sip_skip_lws(p, e);
	return (p < e && *p == c) ? p + 1 : NULL;
}

enum sn_status sip_via_split(struct sn_slice text, struct sip_via *out)
{
	struct sn_slice t = sip_trim(text);
	const uint8_t *p = t.ptr;
	const uint8_t *e = sn_slice_end(t);
	const uint8_t *h;

	memset(out, 0, sizeof(*out));
	if (!t.len) {
		return SN_EPARSE;
	}
	if (t.len > 8 && memcmp(p, "SIP/2.0/", 8) == 0) {
		/* nearly every Via: skip the general sent-protocol grammar (LWS around '/') */
		out->proto_name = sip_sl(p, p + 3);
		out->proto_version = sip_sl(p + 4, p + 7);
		p += 8;
	} else {
		p = token_at(p, e, &out->proto_name);
		p = p ? expect_char(p, e, '/') : NULL;
		p = p ? token_at(p, e, &out->proto_version) : NULL;
		p = p ? expect_char(p, e, '/') : NULL;
	}
	p = p ? token_at(p, e, &out->transport) : NULL;
	if (!p || p >= e || !sip_is(*p, SIP_CT_LWS)) {
		return SN_EPARSE;
	}
	p = sip_skip_lws(p, e);
	h = p;
	if (p < e && *p == '[') {
		while (p < e && *p != ']') {
			p++;
		}
		if (p >= e) {
			return SN_EPARSE;
		}
		p++;
	} else {
		while (p < e && sip_is(*p, SIP_CT_HOST)) {
			p++;
		}
	}
	struct sn_slice host = sip_sl(h, p);
	bool v6;
	if (!sip_hostport_split(host, &out->host, &out->port, &out->has_port, &v6)) {
		return SN_EPARSE;
	}
	p = sip_skip_lws(p, e);
	if (p < e && *p == ':') {
		/* sent-by = host [ COLON port ]; COLON allows whitespace around it */
		const uint8_t *d = sip_skip_lws(p + 1, e);
		uint32_t port;
		p = d;
		while (p < e && sip_is(*p, SIP_CT_DIGIT)) {
			p++;
		}
		if (p - d > 5 || !sip_dec_u32(sip_sl(d, p), &port) || port > 65535) {
			return SN_EPARSE;
		}
		out->port = (uint16_t)port;
		out->has_port = true;
		p = sip_skip_lws(p, e);
	}
	if (p < e) {
		if (*p != ';') {
			return SN_EPARSE;
		}
		out->params = sip_sl(p + 1, e);
	}
	struct sn_slice rest = out->params;
	struct sn_slice n;
	struct sn_slice v;
	while (sip_param_next(&rest, ';', &n, &v)) {
		switch (n.len) {
		case 6:
			if (sip_caseeq_n(n, "branch", 6)) {
				out->branch = v;
			}
			break;
		case 8:
			if (sip_caseeq_n(n, "received", 8)) {
				out->received = v;
			}
			break;
		case 5:
			if (sip_caseeq_n(n, "rport", 5)) {
				out->has_rport = true;
				out->rport = v;
			} else if (sip_caseeq_n(n, "maddr", 5)) {
				out->maddr = v;
			}
			break;
		case 3:
			if (sip_caseeq_n(n, "ttl", 3)) {
				out->ttl = v;
			}
			break;
		}
	}
	return SN_OK;
}

enum sn_status sip_via_parse(struct sn_slice text, struct sip_via *out)
{
	if (sip_via_split(text, out) != SN_OK || !params_valid(out->params)) {
		return SN_EPARSE;
	}
	return SN_OK;
}

enum sn_status sip_contact_parse(struct sn_slice text, struct sip_contact *out)
{
	struct sn_slice t = sip_trim(text);
	struct sn_slice v;

	memset(out, 0, sizeof(*out));
	if (t.len == 1 && t.ptr[0] == '*') {
		out->star = true;
		return SN_OK;
	}
	if (sip_name_addr_parse(t, &out->addr) != SN_OK) {
		return SN_EPARSE;
	}
	if (sip_param_find(out->addr.params, "expires", &v)) {
		if (!sip_dec_u32(v, &out->expires)) {
			return SN_EPARSE;
		}
		out->has_expires = true;
	}
	sip_param_find(out->addr.params, "q", &out->q);
	return SN_OK;
}

enum sn_status sip_cseq_parse(struct sn_slice text, uint32_t *num, struct sn_slice *method_name)
{
	struct sn_slice t = sip_trim(text);
	const uint8_t *p = t.ptr;
	const uint8_t *e = sn_slice_end(t);
	const uint8_t *d = p;
	uint32_t v;

	while (p < e && sip_is(*p, SIP_CT_DIGIT)) {
		p++;
	}
	if (p == d || p >= e || !sip_is(*p, SIP_CT_LWS)) {
		return SN_EPARSE;
	}
	if (!sip_dec_u32(sip_sl(d, p), &v) || v >= 0x80000000u) {
		return SN_EPARSE;
	}
	p = sip_skip_lws(p, e);
	struct sn_slice m = sip_sl(p, e);
	if (!sip_is_token(m)) {
		return SN_EPARSE;
	}
	*num = v;
	*method_name = m;
	return SN_OK;
}

enum sn_status sip_u32_parse(struct sn_slice text, uint32_t *out)
{
	return sip_dec_u32(sip_trim(text), out) ? SN_OK : SN_EPARSE;
}

static size_t count_elems(const struct sip_msg *msg, enum sip_hdr_id id)
{
	struct sip_hdr_iter it;
	struct sn_slice el;
	size_t n = 0;

	sip_hdr_iter_init(&it, msg, id);
	while (sip_hdr_iter_next(&it, &el)) {
		n++;
	}
	return n;
}

static enum sn_status list_alloc(struct sn_arena *arena, size_t n, size_t sz, void **out)
{
	*out = NULL;
	if (!n) {
		return SN_OK;
	}
	return sn_arena_alloc(arena, n * sz, out);
}

/* Parse one list element into the array slot at @p slot. */
typedef enum sn_status sip_elem_parse_fn(struct sn_slice text, void *slot);

static enum sn_status parse_via_elem(struct sn_slice text, void *slot)
{
	return sip_via_parse(text, slot);
}

static enum sn_status parse_contact_elem(struct sn_slice text, void *slot)
{
	return sip_contact_parse(text, slot);
}

static enum sn_status parse_name_addr_elem(struct sn_slice text, void *slot)
{
	return sip_name_addr_parse(text, slot);
}

/* Every element of the list header @p id, parsed into an arena array of @p size-byte slots. */
static enum sn_status parse_list(const struct sip_msg *msg, enum sip_hdr_id id,
				 struct sn_arena *arena, size_t size, sip_elem_parse_fn *parse,
				 void **out, size_t *count)
{
	size_t n = count_elems(msg, id);
	struct sip_hdr_iter it;
	struct sn_slice el;
	void *mem;
	enum sn_status st;
	size_t i = 0;

	*out = NULL;
	*count = 0;
	st = list_alloc(arena, n, size, &mem);
	if (st != SN_OK) {
		return st;
	}
	sip_hdr_iter_init(&it, msg, id);
	while (i < n && sip_hdr_iter_next(&it, &el)) {
		if (parse(el, (uint8_t *)mem + i * size) != SN_OK) {
			return SN_EPARSE;
		}
		i++;
	}
	*out = mem;
	*count = n;
	return SN_OK;
}

enum sn_status sip_msg_vias(const struct sip_msg *msg, struct sn_arena *arena, struct sip_via **out,
			    size_t *count)
{
	return parse_list(msg, SIP_HDR_VIA, arena, sizeof(**out), parse_via_elem, (void **)out,
			  count);
}

enum sn_status sip_msg_contacts(const struct sip_msg *msg, struct sn_arena *arena,
				struct sip_contact **out, size_t *count)
{
	return parse_list(msg, SIP_HDR_CONTACT, arena, sizeof(**out), parse_contact_elem,
			  (void **)out, count);
}

enum sn_status sip_msg_name_addrs(const struct sip_msg *msg, enum sip_hdr_id id,
				  struct sn_arena *arena, struct sip_name_addr **out, size_t *count)
{
	return parse_list(msg, id, arena, sizeof(**out), parse_name_addr_elem, (void **)out,
			  count);
}

enum sn_status sip_msg_from(const struct sip_msg *msg, struct sip_name_addr *out)
{
	const struct sip_hdr *h = sip_msg_hdr_find(msg, SIP_HDR_FROM);

	if (!h) {
		return SN_ENOTFOUND;
	}
	return sip_name_addr_parse(h->value, out);
}

enum sn_status sip_msg_to(const struct sip_msg *msg, struct sip_name_addr *out)
{
	const struct sip_hdr *h = sip_msg_hdr_find(msg, SIP_HDR_TO);

	if (!h) {
		return SN_ENOTFOUND;
	}
	return sip_name_addr_parse(h->value, out);
}

enum sn_status sip_msg_expires(const struct sip_msg *msg, uint32_t *out)
{
	const struct sip_hdr *h = sip_msg_hdr_find(msg, SIP_HDR_EXPIRES);

	if (!h) {
		return SN_ENOTFOUND;
	}
	return sip_u32_parse(h->value, out);
}

struct sn_slice sip_msg_user_agent(const struct sip_msg *msg)
{
	const struct sip_hdr *h = sip_msg_hdr_find(msg, SIP_HDR_USER_AGENT);

	return h ? h->value : SN_SLICE_NULL;
}

/* Media type of a Content-Type value: the part before ';', trimmed. */
static struct sn_slice media_type(struct sn_slice ct)
{
	const uint8_t *semi = ct.len ? memchr(ct.ptr, ';', ct.len) : NULL;

	return sip_trim(semi ? sip_sl(ct.ptr, semi) : ct);
}

/* First occurrence of needle in [p, e) at the start of a line (or at p); NULL if none. */
static const uint8_t *find_delim(const uint8_t *p, const uint8_t *e, const uint8_t *start,
				 struct sn_slice needle)
{
	while ((size_t)(e - p) >= needle.len) {
		const uint8_t *q = memchr(p, needle.ptr[0], (size_t)(e - p) - needle.len + 1);
		if (!q) {
			return NULL;
		}
		if ((q == start || q[-1] == '\n') && memcmp(q, needle.ptr, needle.len) == 0) {
			return q;
		}
		p = q + 1;
	}
	return NULL;
}

/* The Content-Type value inside a part's header block, or text/plain (RFC 2046 §5.1). */
static struct sn_slice part_content_type(struct sn_slice hdrs)
{
	const uint8_t *p = hdrs.ptr;
	const uint8_t *e = sn_slice_end(hdrs);

	while (p < e) {
		const uint8_t *eol = memchr(p, '\n', (size_t)(e - p));
		const uint8_t *le = eol ? eol : e;
		/* include folded continuation lines */
		while (eol && eol + 1 < e && sip_is(eol[1], SIP_CT_WS)) {
			eol = memchr(eol + 1, '\n', (size_t)(e - eol - 1));
			le = eol ? eol : e;
		}
		const uint8_t *colon = memchr(p, ':', (size_t)(le - p));
		if (colon) {
			struct sn_slice n = sip_trim(sip_sl(p, colon));
			if (sip_hdr_lookup(n) == SIP_HDR_CONTENT_TYPE) {
				return sip_trim(sip_sl(colon + 1, le));
			}
		}
		p = eol ? eol + 1 : e;
	}
	return sn_slice_make("text/plain", 10);
}

enum sn_status sip_multipart_split(struct sn_slice content_type, struct sn_slice body,
				   struct sip_mime_part *parts, size_t max_parts, size_t *count)
{
	struct sn_slice mt = media_type(content_type);
	struct sn_slice bnd;
	const uint8_t *semi;
	const uint8_t *p = body.ptr;
	const uint8_t *e = sn_slice_end(body);
	uint8_t dbuf[74];

	*count = 0;
	if (mt.len < 10 || !sip_caseeq_n(sip_sl(mt.ptr, mt.ptr + 10), "multipart/", 10)) {
		return SN_EPARSE;
	}
	semi = memchr(content_type.ptr, ';', content_type.len);
	if (!semi || !sip_param_find(sip_sl(semi + 1, sn_slice_end(content_type)),
				     "boundary", &bnd)) {
		return SN_EPARSE;
	}
	if (bnd.len >= 2 && bnd.ptr[0] == '"' && bnd.ptr[bnd.len - 1] == '"') {
		bnd.ptr++;
		bnd.len -= 2;
	}
	/* RFC 2046: boundaries are 1 to 70 characters */
	if (!bnd.len || bnd.len > 70 || !body.len) {
		return SN_EPARSE;
	}
	dbuf[0] = '-';
	dbuf[1] = '-';
	memcpy(dbuf + 2, bnd.ptr, bnd.len);
	struct sn_slice delim = {dbuf, bnd.len + 2};

	const uint8_t *d = find_delim(p, e, body.ptr, delim);
	if (!d) {
		return SN_EPARSE;
	}
	for (;;) {
		p = d + delim.len;
		if (e - p >= 2 && p[0] == '-' && p[1] == '-') {
			return SN_OK;
		}
		const uint8_t *eol = memchr(p, '\n', (size_t)(e - p));
		if (!eol) {
			return SN_EPARSE;
		}
		const uint8_t *ps = eol + 1;
		const uint8_t *next = find_delim(ps, e, body.ptr, delim);
		if (!next) {
			return SN_EPARSE;
		}
		/* the CRLF before the delimiter belongs to the delimiter */
		const uint8_t *pe = next;
		if (pe > ps && pe[-1] == '\n') {
			pe--;
			if (pe > ps && pe[-1] == '\r') {
				pe--;
			}
		}
		if (*count >= max_parts) {
			return SN_ELIMIT;
		}
		struct sip_mime_part *part = &parts[(*count)++];
		const uint8_t *bs = ps;
		const uint8_t *he = ps;
		bool found = false;
		for (const uint8_t *q = ps; q < pe; q++) {
			if (*q != '\n') {
				continue;
			}
			const uint8_t *n = q + 1;
			if (q == ps || (q == ps + 1 && ps[0] == '\r')) {
				he = ps;
				bs = n;
				found = true;
				break;
			}
			if (n < pe && *n == '\n') {
				he = q + 1;
				bs = n + 1;
				found = true;
				break;
			}
			if (n + 1 < pe && n[0] == '\r' && n[1] == '\n') {
				he = q + 1;
				bs = n + 2;
				found = true;
				break;
			}
		}
		if (!found) {
			he = ps;
			bs = ps;
		}
		part->headers = sip_sl(ps, he);
		part->content_type = part_content_type(part->headers);
		part->body = sip_sl(bs, pe < bs ? bs : pe);
		d = next;
	}
}

enum sn_status sip_msg_find_sdp(const struct sip_msg *msg, struct sn_slice *sdp)
{
	struct sn_slice mt = media_type(msg->content_type);
	struct sip_mime_part parts[16];
	size_t n = 0;
	enum sn_status st;

	if (sip_caseeq_n(mt, "application/sdp", 15)) {
		*sdp = msg->body;
		return SN_OK;
	}
	st = sip_multipart_split(msg->content_type, msg->body, parts, SN_ARRAY_SIZE(parts), &n);
	if (st != SN_OK && st != SN_ELIMIT) {
		return SN_ENOTFOUND;
	}
	for (size_t i = 0; i < n; i++) {
		if (sip_caseeq_n(media_type(parts[i].content_type), "application/sdp", 15)) {
			*sdp = parts[i].body;
			return SN_OK;
		}
	}
	return SN_ENOTFOUND;
}
