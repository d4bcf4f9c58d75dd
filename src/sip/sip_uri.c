/*
 * sip_uri.c - zero-copy URI parser for sip:, sips: and tel: (RFC 3261 §19.1, RFC 3966), the
 * parameter-list walker shared with header parsing, and URI comparison (§19.1.4).
 *
 * Parsing is a single forward pass over the caller's bytes: the userinfo ends at the first
 * '@' (no character of hostport, parameters or headers may be an unescaped '@'), the host at
 * the first ';' or '?' after it. Escapes are validated but left in place; only the comparison
 * helpers decode them. Other schemes are accepted as opaque absoluteURIs so that a Request-URI
 * such as "soap.beep://..." parses (RFC 4475 §3.3.3).
 * This file also holds the character-class table used by the whole sip module.
 * Thread: pure functions; the only table is const.
 */
#include "config.h"

#include "sipnab/sip_uri.h"

#include <string.h>

#include "sip_int.h"

/* Generated: bit 0x01 token, 0x02 SP/HT, 0x04 LWS, 0x08 digit, 0x10 host, 0x20 uric, 0x40 alpha */
const uint8_t sip_ctype[256] = {
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x06, 0x04, 0x00, 0x00, 0x04, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x06, 0x21, 0x00, 0x00, 0x20, 0x21, 0x20, 0x21, 0x20, 0x20, 0x21, 0x21, 0x20,
	0x31, 0x31, 0x20, 0x39, 0x39, 0x39, 0x39, 0x39, 0x39, 0x39, 0x39, 0x39, 0x39, 0x20, 0x20,
	0x00, 0x20, 0x00, 0x20, 0x20, 0x71, 0x71, 0x71, 0x71, 0x71, 0x71, 0x71, 0x71, 0x71, 0x71,
	0x71, 0x71, 0x71, 0x71, 0x71, 0x71, 0x71, 0x71, 0x71, 0x71, 0x71, 0x71, 0x71, 0x71, 0x71,
	0x71, 0x20, 0x00, 0x20, 0x00, 0x31, 0x01, 0x71, 0x71, 0x71, 0x71, 0x71, 0x71, 0x71, 0x71,
	0x71, 0x71, 0x71, 0x71, 0x71, 0x71, 0x71, 0x71, 0x71, 0x71, 0x71, 0x71, 0x71, 0x71, 0x71,
	0x71, 0x71, 0x71, 0x00, 0x00, 0x00, 0x21, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00,
};

bool sip_is_token(struct sn_slice s)
{
	if (!s.len) {
		return false;
	}
	for (uint32_t i = 0; i < s.len; i++) {
		if (!sip_is(s.ptr[i], SIP_CT_TOKEN)) {
			return false;
		}
	}
	return true;
}

bool sip_caseeq_tail(const uint8_t *p, const char *lit, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (sip_lower(p[i]) != sip_lower((uint8_t)lit[i])) {
			return false;
		}
	}
	return true;
}

bool sip_dec_u32(struct sn_slice s, uint32_t *out)
{
	uint64_t v = 0;

	if (!s.len) {
		return false;
	}
	for (uint32_t i = 0; i < s.len; i++) {
		if (!sip_is(s.ptr[i], SIP_CT_DIGIT)) {
			return false;
		}
		v = v * 10 + (uint64_t)(s.ptr[i] - '0');
		if (v > UINT32_MAX) {
			return false;
		}
	}
	*out = (uint32_t)v;
	return true;
}

static bool is_hex(uint8_t c)
{
	return sip_is(c, SIP_CT_DIGIT) || (sip_lower(c) >= 'a' && sip_lower(c) <= 'f');
}

bool sip_hostport_split(struct sn_slice hp, struct sn_slice *host, uint16_t *port, bool *has_port,
			bool *is_ipv6)
{
	const uint8_t *p = hp.ptr;
	const uint8_t *e = sn_slice_end(hp);
	const uint8_t *h;

	*has_port = false;
	*port = 0;
	*is_ipv6 = false;
	if (!hp.len) {
		return false;
	}
	if (*p == '[') {
		h = p;
		p++;
		while (p < e && (is_hex(*p) || *p == ':' || *p == '.')) {
			p++;
		}
		if (p >= e || *p != ']' || p - h < 3) {
			return false;
		}
		p++;
		*is_ipv6 = true;
	} else {
		h = p;
		while (p < e && sip_is(*p, SIP_CT_HOST)) {
			p++;
		}
		if (p == h) {
			return false;
		}
	}
	*host = sip_sl(h, p);
	if (p == e) {
		return true;
	}
	if (*p != ':') {
		return false;
	}
	uint32_t v;
	struct sn_slice ps = sip_sl(p + 1, e);
	if (ps.len > 5 || !sip_dec_u32(ps, &v) || v > 65535) {
		return false;
	}
	*port = (uint16_t)v;
	*has_port = true;
	return true;
}

/* End of a parameter item: the next @sep outside a quoted string, or e. */
static const uint8_t *param_end(const uint8_t *p, const uint8_t *e, char sep)
{
	const uint8_t *q = memchr(p, (uint8_t)sep, (size_t)(e - p));
	bool quoted = false;

	/* no quote before the separator (or the end): nothing to skip */
	if (!memchr(p, '"', (size_t)((q ? q : e) - p))) {
		return q ? q : e;
	}
	for (; p < e; p++) {
		if (quoted) {
			if (*p == '\\' && p + 1 < e) {
				p++;
			} else if (*p == '"') {
				quoted = false;
			}
		} else if (*p == '"') {
			quoted = true;
		} else if (*p == (uint8_t)sep) {
			return p;
		}
	}
	return e;
}

bool sip_param_next(struct sn_slice *rest, char sep, struct sn_slice *name, struct sn_slice *value)
{
	const uint8_t *p = rest->ptr;
	const uint8_t *e;
	const uint8_t *q;
	const uint8_t *eq;

	if (!p) {
		return false;
	}
	e = p + rest->len;
	q = param_end(p, e, sep);
	if (q < e) {
		*rest = sip_sl(q + 1, e);
	} else {
		*rest = SN_SLICE_NULL;
	}
	eq = memchr(p, '=', (size_t)(q - p));
	if (eq) {
		*name = sip_trim(sip_sl(p, eq));
		*value = sip_trim(sip_sl(eq + 1, q));
		if (!value->len) {
			value->ptr = eq + 1;
		}
	} else {
		*name = sip_trim(sip_sl(p, q));
		*value = SN_SLICE_NULL;
	}
	return true;
}

bool sip_param_find(struct sn_slice params, const char *name, struct sn_slice *value)
{
	struct sn_slice n;
	struct sn_slice v;
	size_t nlen = strlen(name);

	while (sip_param_next(&params, ';', &n, &v)) {
		if (sip_caseeq_n(n, name, nlen)) {
			if (value) {
				*value = v;
			}
			return true;
		}
	}
	return false;
}

bool sip_uri_header_find(const struct sip_uri *uri, const char *name, struct sn_slice *value)
{
	struct sn_slice rest = uri->headers;
	struct sn_slice n;
	struct sn_slice v;
	size_t nlen = strlen(name);

	while (sip_param_next(&rest, '&', &n, &v)) {
		if (sip_caseeq_n(n, name, nlen)) {
			if (value) {
				*value = v;
			}
			return true;
		}
	}
	return false;
}

/* Every byte is a URI character and every '%' starts a valid escape. */
static bool uri_chars_ok(struct sn_slice s, bool allow_hash)
{
	const uint8_t *e = sn_slice_end(s);

	for (const uint8_t *p = s.ptr; p < e; p++) {
		uint8_t c = *p;
		if (sip_is(c, SIP_CT_URIC)) {
			/* '%' is in the class: it must start an escape */
			if (c == '%' && (e - p < 3 || !is_hex(p[1]) || !is_hex(p[2]))) {
				return false;
			}
		} else if (!(allow_hash && c == '#')) {
			return false;
		}
	}
	return true;
}

/* Parse the ';' parameter list of a sip/sips/tel URI and pick out the well-known ones. */
static bool uri_params(struct sip_uri *uri)
{
	struct sn_slice rest = uri->params;
	struct sn_slice n;
	struct sn_slice v;

	while (sip_param_next(&rest, ';', &n, &v)) {
		if (!n.len || (v.ptr && !v.len)) {
			return false;
		}
		if (sip_caseeq_n(n, "transport", 9)) {
			uri->transport = v;
		} else if (sip_caseeq_n(n, "user", 4)) {
			uri->user_param = v;
		} else if (sip_caseeq_n(n, "maddr", 5)) {
			uri->maddr = v;
		} else if (sip_caseeq_n(n, "ttl", 3)) {
			uri->ttl = v;
		} else if (sip_caseeq_n(n, "method", 6)) {
			uri->method = v;
		} else if (sip_caseeq_n(n, "lr", 2)) {
			uri->lr = true;
		}
	}
	return true;
}

/* Split "...;params?headers" starting at p into the URI's params and headers. */
static void uri_tail(struct sip_uri *uri, const uint8_t *p, const uint8_t *e)
{
	const uint8_t *q = memchr(p, '?', (size_t)(e - p));

	if (q) {
		uri->headers = sip_sl(q + 1, e);
		e = q;
	}
	if (p < e && *p == ';') {
		uri->params = sip_sl(p + 1, e);
	}
}

enum sn_status sip_uri_parse(struct sn_slice text, struct sip_uri *uri)
{
	const uint8_t *p = text.ptr;
	const uint8_t *e = sn_slice_end(text);
	const uint8_t *colon;

	memset(uri, 0, sizeof(*uri));
	if (!text.len || !sip_is(*p, SIP_CT_ALPHA)) {
		return SN_EPARSE;
	}
	colon = memchr(p, ':', text.len);
	if (!colon || colon + 1 == e) {
		return SN_EPARSE;
	}
	for (const uint8_t *s = p; s < colon; s++) {
		if (!sip_is(*s, SIP_CT_ALPHA | SIP_CT_DIGIT) && *s != '+' && *s != '-' &&
		    *s != '.') {
			return SN_EPARSE;
		}
	}
	uri->scheme_name = sip_sl(p, colon);
	uri->opaque = sip_sl(colon + 1, e);
	if (sip_caseeq_n(uri->scheme_name, "sip", 3)) {
		uri->scheme = SIP_URI_SIP;
	} else if (sip_caseeq_n(uri->scheme_name, "sips", 4)) {
		uri->scheme = SIP_URI_SIPS;
	} else if (sip_caseeq_n(uri->scheme_name, "tel", 3)) {
		uri->scheme = SIP_URI_TEL;
	} else {
		uri->scheme = SIP_URI_OTHER;
		return uri_chars_ok(uri->opaque, true) ? SN_OK : SN_EPARSE;
	}
	if (!uri_chars_ok(uri->opaque, false)) {
		return SN_EPARSE;
	}
	p = colon + 1;
	if (uri->scheme == SIP_URI_TEL) {
		const uint8_t *s = p;
		while (s < e && *s != ';' && *s != '?' && *s != '@') {
			s++;
		}
		if (s == p || (s < e && *s == '@')) {
			return SN_EPARSE;
		}
		uri->user = sip_sl(p, s);
		uri_tail(uri, s, e);
		return uri_params(uri) ? SN_OK : SN_EPARSE;
	}
	const uint8_t *at = memchr(p, '@', (size_t)(e - p));
	if (at) {
		const uint8_t *pw = memchr(p, ':', (size_t)(at - p));
		if (pw) {
			uri->user = sip_sl(p, pw);
			uri->password = sip_sl(pw + 1, at);
		} else {
			uri->user = sip_sl(p, at);
		}
		if (!uri->user.len) {
			return SN_EPARSE;
		}
		p = at + 1;
	}
	const uint8_t *h = p;
	while (p < e && *p != ';' && *p != '?') {
		p++;
	}
	if (!sip_hostport_split(sip_sl(h, p), &uri->host, &uri->port, &uri->has_port,
				&uri->host_is_ipv6)) {
		return SN_EPARSE;
	}
	uri_tail(uri, p, e);
	return uri_params(uri) ? SN_OK : SN_EPARSE;
}

static int hexval(uint8_t c)
{
	if (c >= '0' && c <= '9') {
		return c - '0';
	}
	c = sip_lower(c);
	return c - 'a' + 10;
}

/* Next decoded byte of s at *i; advances *i. */
static uint8_t unesc_next(struct sn_slice s, uint32_t *i)
{
	uint8_t c = s.ptr[*i];

	if (c == '%' && *i + 2 < s.len && is_hex(s.ptr[*i + 1]) && is_hex(s.ptr[*i + 2])) {
		c = (uint8_t)(hexval(s.ptr[*i + 1]) * 16 + hexval(s.ptr[*i + 2]));
		*i += 3;
		return c;
	}
	(*i)++;
	return c;
}

bool sip_uri_unescaped_eq(struct sn_slice a, struct sn_slice b, bool ignore_case)
{
	uint32_t i = 0;
	uint32_t j = 0;

	while (i < a.len && j < b.len) {
		uint8_t x = unesc_next(a, &i);
		uint8_t y = unesc_next(b, &j);
		if (ignore_case) {
			x = sip_lower(x);
			y = sip_lower(y);
		}
		if (x != y) {
			return false;
		}
	}
	return i == a.len && j == b.len;
}

/* Parameters that must match when either URI has them (RFC 3261 §19.1.4). */
static const char *const uri_strict_params[] = {"transport", "user", "ttl", "method", "maddr"};

/* First parameter of the list whose name equals @name after unescaping. */
static bool param_first(struct sn_slice params, struct sn_slice name, struct sn_slice *value)
{
	struct sn_slice n;

	while (sip_param_next(&params, ';', &n, value)) {
		if (sip_uri_unescaped_eq(n, name, true)) {
			return true;
		}
	}
	return false;
}

static bool params_compatible(struct sn_slice pa, struct sn_slice pb)
{
	struct sn_slice rest = pa;
	struct sn_slice n;
	struct sn_slice v;
	struct sn_slice w;

	for (size_t i = 0; i < SN_ARRAY_SIZE(uri_strict_params); i++) {
		bool ha = sip_param_find(pa, uri_strict_params[i], &v);
		bool hb = sip_param_find(pb, uri_strict_params[i], &w);
		if (ha != hb || (ha && !sip_uri_unescaped_eq(v, w, true))) {
			return false;
		}
	}
	/* other parameters: the first occurrence of each name, compared when both carry it */
	while (sip_param_next(&rest, ';', &n, &v)) {
		if (param_first(pa, n, &v) && param_first(pb, n, &w) &&
		    !sip_uri_unescaped_eq(v, w, true)) {
			return false;
		}
	}
	return true;
}

bool sip_uri_eq(const struct sip_uri *a, const struct sip_uri *b)
{
	if (a->scheme != b->scheme) {
		return false;
	}
	if (a->scheme == SIP_URI_OTHER) {
		return sn_slice_caseeq(a->scheme_name, b->scheme_name) &&
		       sn_slice_eq(a->opaque, b->opaque);
	}
	if (!sip_uri_unescaped_eq(a->user, b->user, false) ||
	    !sip_uri_unescaped_eq(a->password, b->password, false) ||
	    !sn_slice_caseeq(a->host, b->host) || a->has_port != b->has_port ||
	    a->port != b->port) {
		return false;
	}
	return params_compatible(a->params, b->params) &&
	       sip_uri_unescaped_eq(a->headers, b->headers, true);
}
