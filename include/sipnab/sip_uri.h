/*
 * sip_uri.h - zero-copy parser for sip:, sips: and tel: URIs (RFC 3261 §19.1, RFC 3966) and
 * for the ';'-separated parameter lists shared by URIs and header fields.
 *
 * Every slice points into the text given to sip_uri_parse(); escaped characters (%XX) are left
 * escaped. sip_uri_unescaped_eq() and sip_uri_eq() compare with escapes decoded.
 * Thread: all functions are pure and reentrant.
 */
#ifndef SIPNAB_SIP_URI_H
#define SIPNAB_SIP_URI_H

#include "sipnab/sn_base.h"

enum sip_uri_scheme {
	SIP_URI_SIP = 0,
	SIP_URI_SIPS,
	SIP_URI_TEL,
	SIP_URI_OTHER, /* any other absoluteURI; only scheme_name and opaque are set */
};

/* A parsed URI. Absent parts are empty slices (ptr NULL, len 0). */
struct sip_uri {
	enum sip_uri_scheme scheme;
	struct sn_slice scheme_name; /* "sip", "SIPS", "tel", ... as written */
	struct sn_slice user;	     /* sip user part, or the tel: subscriber number */
	struct sn_slice password;    /* after ':' in userinfo */
	struct sn_slice host;	     /* hostname, IPv4, or IPv6 reference including [ ] */
	uint16_t port;		     /* valid when has_port */
	bool has_port;
	bool host_is_ipv6;	 /* host is a [..] reference */
	struct sn_slice params;	 /* uri-parameters after the first ';', without it */
	struct sn_slice headers; /* after '?', without it */
	struct sn_slice opaque;	 /* everything after "scheme:" */
	/* well-known uri-parameters, filled from params */
	struct sn_slice transport;
	struct sn_slice user_param; /* user=phone|ip */
	struct sn_slice maddr;
	struct sn_slice ttl;
	struct sn_slice method;
	bool lr;
};

/**
 * Parse a URI.
 * @param text the URI, without surrounding < > or whitespace
 * @param uri  filled on SN_OK; unspecified otherwise
 * @return SN_OK, or SN_EPARSE when the text is not a valid URI (empty host, bad port,
 *         whitespace or characters outside the URI character set, empty parameter name).
 * Ownership: slices borrow @p text.
 */
enum sn_status sip_uri_parse(struct sn_slice text, struct sip_uri *uri);

/**
 * Step through a parameter list such as "a=b;c;d = e" (URI parameters, header parameters or,
 * with @p sep '&', URI headers). Whitespace (SP, HT, CR, LF) around names, '=' and values is
 * skipped.
 * @param rest  the unread part of the list; advanced past the returned parameter
 * @param sep   the separator, ';' or '&'
 * @param name  set to the parameter name
 * @param value set to the value, or an empty slice with ptr NULL when there is no '='
 * @return true when a parameter was returned, false at the end of the list
 */
bool sip_param_next(struct sn_slice *rest, char sep, struct sn_slice *name, struct sn_slice *value);

/**
 * Find a parameter by name (ASCII case-insensitive) in a ';'-separated list.
 * @param params the list (as in struct sip_uri.params or a header's params)
 * @param name   NUL-terminated parameter name
 * @param value  set to the value (empty, ptr NULL, when the parameter has no value); may be NULL
 * @return true when present
 */
bool sip_param_find(struct sn_slice params, const char *name, struct sn_slice *value);

/**
 * Find a URI header ("?a=b&c=d") by name, case-insensitively.
 * @param uri   a parsed URI
 * @param name  NUL-terminated header name
 * @param value set to the (still escaped) value; may be NULL
 * @return true when present
 */
bool sip_uri_header_find(const struct sip_uri *uri, const char *name, struct sn_slice *value);

/**
 * Compare two slices after decoding %XX escapes in both.
 * @param a           first slice
 * @param b           second slice
 * @param ignore_case compare ASCII letters case-insensitively
 * @return true when the decoded byte strings are equal
 */
bool sip_uri_unescaped_eq(struct sn_slice a, struct sn_slice b, bool ignore_case);

/**
 * URI equivalence after RFC 3261 §19.1.4, simplified: scheme, user and password (unescaped,
 * case-sensitive), host (case-insensitive), port, and the transport, user, ttl, method and
 * maddr parameters must match; other parameters must match when both URIs carry them. tel:
 * URIs compare the number and parameters; other schemes compare opaque parts byte for byte.
 * @param a first URI
 * @param b second URI
 * @return true when equivalent
 */
bool sip_uri_eq(const struct sip_uri *a, const struct sip_uri *b);

#endif
