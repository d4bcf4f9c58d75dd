/*
 * sip_int.h - character classes and small slice helpers shared by the files of src/sip.
 * Private to src/sip.
 */
#ifndef SIPNAB_SIP_INT_H
#define SIPNAB_SIP_INT_H

#include <string.h>

#include "sipnab/sn_base.h"

struct sip_name_addr;
struct sip_via;

#define SIP_CT_TOKEN 0x01u /* RFC 3261 token: alnum and -.!%*_+`'~ */
#define SIP_CT_WS    0x02u /* SP HT */
#define SIP_CT_LWS   0x04u /* SP HT CR LF */
#define SIP_CT_DIGIT 0x08u
#define SIP_CT_HOST  0x10u /* alnum - . _ */
#define SIP_CT_URIC  0x20u /* unreserved, reserved, %, [ ] */
#define SIP_CT_ALPHA 0x40u

extern const uint8_t sip_ctype[256];

static inline bool sip_is(uint8_t c, unsigned cls)
{
	return (sip_ctype[c] & cls) != 0;
}

static inline uint8_t sip_lower(uint8_t c)
{
	return (c >= 'A' && c <= 'Z') ? (uint8_t)(c + 32) : c;
}

/* Slice of [b, e). */
static inline struct sn_slice sip_sl(const uint8_t *b, const uint8_t *e)
{
	struct sn_slice s = {b, (uint32_t)(e - b)};
	return s;
}

/* Drop leading and trailing SP HT CR LF. */
static inline struct sn_slice sip_trim(struct sn_slice s)
{
	const uint8_t *b;
	const uint8_t *e;

	if (!s.len) {
		return s;
	}
	b = s.ptr;
	e = sn_slice_end(s);
	while (b < e && sip_is(*b, SIP_CT_LWS)) {
		b++;
	}
	while (e > b && sip_is(e[-1], SIP_CT_LWS)) {
		e--;
	}
	return sip_sl(b, e);
}

/* Skip SP HT CR LF from p up to e. */
static inline const uint8_t *sip_skip_lws(const uint8_t *p, const uint8_t *e)
{
	while (p < e && sip_is(*p, SIP_CT_LWS)) {
		p++;
	}
	return p;
}

/* True when every byte of s is a token character and s is non-empty. */
bool sip_is_token(struct sn_slice s);

/* sip_caseeq_n() after the cheap tests: the bytes differ from @p lit in some way. */
bool sip_caseeq_tail(const uint8_t *p, const char *lit, size_t n);

/* True when the slice equals lit case-insensitively; lit has length n. */
static inline bool sip_caseeq_n(struct sn_slice s, const char *lit, size_t n)
{
	if (s.len != n) {
		return false;
	}
	/* the common case: written exactly as the literal */
	if (memcmp(s.ptr, lit, n) == 0) {
		return true;
	}
	return sip_caseeq_tail(s.ptr, lit, n);
}

/* Strict decimal u32 without surrounding whitespace; leading zeros allowed. */
bool sip_dec_u32(struct sn_slice s, uint32_t *out);

/* Host [":" port] validation used by URIs and Via sent-by. */
bool sip_hostport_split(struct sn_slice hp, struct sn_slice *host, uint16_t *port, bool *has_port,
			bool *is_ipv6);

/* End of a list element: the next ',' outside quoted strings and < >, or e. */
const uint8_t *sip_elem_end(const uint8_t *p, const uint8_t *e);

/*
 * Structure of a name-addr or addr-spec without validation: display, uri_text, params, tag and
 * angle of @p out are set (uri is left zeroed). SN_EPARSE only when the element cannot be split
 * (empty, unclosed quote or < >, text after '>' that is not a parameter list).
 * sip_name_addr_parse() is this plus the checks of the display name, URI and parameters.
 */
enum sn_status sip_name_addr_split(struct sn_slice text, struct sip_name_addr *out);

/*
 * One Via element without validating the parameter list (sip_via_parse() does): protocol,
 * sent-by and the well-known parameters.
 */
enum sn_status sip_via_split(struct sn_slice text, struct sip_via *out);

#endif
