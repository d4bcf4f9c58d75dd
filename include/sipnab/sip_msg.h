/*
 * sip_msg.h - zero-copy SIP message parser (RFC 3261 §7, §20, §25), typed header accessors,
 * stream framing (§18.3) and content detection.
 *
 * sip_msg_parse() makes one pass over the bytes: it splits the start line, indexes every header
 * (unfolding nothing: a folded value is one slice that contains the CRLF and the whitespace, and
 * every accessor treats CR/LF as whitespace), and extracts the few fields a capture engine needs
 * on every message (Call-ID, CSeq, From/To tags and URIs, top Via, Content-Length,
 * Content-Type). It does not validate them: that is sip_msg_validate(), a second pass over the
 * header index that a proxy (before answering 400) and the torture tests run, and a capture
 * analyser can skip. Everything else is parsed on demand by the accessors below.
 *
 * Ownership: every slice borrows the caller's buffer. The header index is allocated from the
 * caller's struct sn_arena (about 40 bytes per header, grown by doubling from 32 entries, at
 * most SIP_MSG_MAX_HDRS headers); it lives until the arena is reset.
 * Thread: reentrant; no global state.
 */
#ifndef SIPNAB_SIP_MSG_H
#define SIPNAB_SIP_MSG_H

#include "sipnab/sip_uri.h"
#include "sipnab/sn_arena.h"
#include "sipnab/sn_base.h"

/* More header lines than this give SN_ELIMIT. */
#define SIP_MSG_MAX_HDRS 256

enum sip_method {
	SIP_METHOD_UNKNOWN = 0,
	SIP_METHOD_INVITE,
	SIP_METHOD_ACK,
	SIP_METHOD_BYE,
	SIP_METHOD_CANCEL,
	SIP_METHOD_REGISTER,
	SIP_METHOD_OPTIONS,
	SIP_METHOD_PRACK,
	SIP_METHOD_SUBSCRIBE,
	SIP_METHOD_NOTIFY,
	SIP_METHOD_PUBLISH,
	SIP_METHOD_INFO,
	SIP_METHOD_REFER,
	SIP_METHOD_MESSAGE,
	SIP_METHOD_UPDATE,
	SIP_METHOD__COUNT,
};

/* Known header fields. Compact forms (RFC 3261 §7.3.3 and later RFCs) map to the full name. */
enum sip_hdr_id {
	SIP_HDR_OTHER = 0,
	SIP_HDR_CALL_ID,	     /* i */
	SIP_HDR_CONTACT,	     /* m */
	SIP_HDR_FROM,		     /* f */
	SIP_HDR_TO,		     /* t */
	SIP_HDR_VIA,		     /* v */
	SIP_HDR_CONTENT_LENGTH,	     /* l */
	SIP_HDR_CONTENT_TYPE,	     /* c */
	SIP_HDR_SUPPORTED,	     /* k */
	SIP_HDR_SUBJECT,	     /* s */
	SIP_HDR_CONTENT_ENCODING,    /* e */
	SIP_HDR_EVENT,		     /* o */
	SIP_HDR_ALLOW_EVENTS,	     /* u */
	SIP_HDR_REFER_TO,	     /* r */
	SIP_HDR_REFERRED_BY,	     /* b */
	SIP_HDR_SESSION_EXPIRES,     /* x */
	SIP_HDR_ACCEPT_CONTACT,	     /* a */
	SIP_HDR_REJECT_CONTACT,	     /* j */
	SIP_HDR_REQUEST_DISPOSITION, /* d */
	SIP_HDR_IDENTITY,	     /* y */
	SIP_HDR_IDENTITY_INFO,	     /* n */
	SIP_HDR_CSEQ,
	SIP_HDR_MAX_FORWARDS,
	SIP_HDR_ROUTE,
	SIP_HDR_RECORD_ROUTE,
	SIP_HDR_EXPIRES,
	SIP_HDR_USER_AGENT,
	SIP_HDR_SERVER,
	SIP_HDR_ALLOW,
	SIP_HDR_REQUIRE,
	SIP_HDR_PROXY_REQUIRE,
	SIP_HDR_UNSUPPORTED,
	SIP_HDR_AUTHORIZATION,
	SIP_HDR_PROXY_AUTHORIZATION,
	SIP_HDR_WWW_AUTHENTICATE,
	SIP_HDR_PROXY_AUTHENTICATE,
	SIP_HDR_DATE,
	SIP_HDR_RETRY_AFTER,
	SIP_HDR_ACCEPT,
	SIP_HDR_CONTENT_DISPOSITION,
	SIP_HDR_MIME_VERSION,
	SIP_HDR_MIN_EXPIRES,
	SIP_HDR_REASON,
	SIP_HDR_P_ASSERTED_IDENTITY,
	SIP_HDR_PRIVACY,
	SIP_HDR_WARNING,
	SIP_HDR_RSEQ,
	SIP_HDR_RACK,
	SIP_HDR_REPLACES,
	SIP_HDR_PATH,
	SIP_HDR_TIMESTAMP,
	SIP_HDR__COUNT,
};

/* One header line of the index. */
struct sip_hdr {
	struct sn_slice name;  /* as written, e.g. "v" or "VIA" */
	struct sn_slice value; /* leading/trailing whitespace trimmed; may contain folded CRLF WS */
	enum sip_hdr_id id;
};

/*
 * Flags in struct sip_msg.flags. sip_msg_parse() sets the missing-header flags (SIP_MSG_F_NO_*),
 * SIP_MSG_F_BAD_CONTENT_LENGTH and SIP_MSG_F_BAD_HEADER (the framing needs them) and the
 * informational ones; every other SIP_MSG_F_BAD_* / _DUP_ / _MISMATCH flag is set only by
 * sip_msg_validate(). Missing mandatory headers (RFC 3261 §8.1.1):
 */
#define SIP_MSG_F_NO_CALLID  (1u << 0)
#define SIP_MSG_F_NO_FROM    (1u << 1)
#define SIP_MSG_F_NO_TO	     (1u << 2)
#define SIP_MSG_F_NO_CSEQ    (1u << 3)
#define SIP_MSG_F_NO_VIA     (1u << 4)
#define SIP_MSG_F_NO_MAX_FWD (1u << 5) /* request without Max-Forwards (informational) */
/* Invalid message: a server would answer 400 (sip_msg_invalid_reason() names the first): */
#define SIP_MSG_F_BAD_VERSION	       (1u << 6)  /* start line or Via not SIP/2.0 */
#define SIP_MSG_F_BAD_URI	       (1u << 7)  /* Request-URI malformed or carries headers */
#define SIP_MSG_F_BAD_CONTENT_LENGTH   (1u << 8)  /* negative, non-numeric or overflowing */
#define SIP_MSG_F_BAD_CSEQ	       (1u << 9)  /* CSeq number >= 2^31 or malformed */
#define SIP_MSG_F_CSEQ_METHOD_MISMATCH (1u << 10) /* request method differs from CSeq method */
#define SIP_MSG_F_DUP_SINGLE_HEADER    (1u << 11) /* two Call-ID/CSeq/From/To/C-L/Max-Fwd */
#define SIP_MSG_F_BAD_VIA	       (1u << 12)
#define SIP_MSG_F_BAD_FROM	       (1u << 13)
#define SIP_MSG_F_BAD_TO	       (1u << 14)
#define SIP_MSG_F_BAD_CONTACT	       (1u << 15)
#define SIP_MSG_F_BAD_SCALAR	       (1u << 16) /* Max-Forwards > 255, Expires overflow ... */
#define SIP_MSG_F_BAD_DATE	       (1u << 17) /* Date not in GMT (RFC 3261 §20.17) */
#define SIP_MSG_F_BAD_HEADER	       (1u << 18) /* a header line without a valid name/colon */
#define SIP_MSG_F_BAD_ROUTE	       (1u << 19) /* Route/Record-Route not a name-addr list */
#define SIP_MSG_F_BAD_CALLID	       (1u << 20) /* empty or containing whitespace */
/* Informational: */
#define SIP_MSG_F_BODY_TRUNC	 (1u << 24) /* Content-Length exceeds the bytes present */
#define SIP_MSG_F_NO_CONTENT_LEN (1u << 25) /* no Content-Length: body is the rest */
#define SIP_MSG_F_BARE_LF	 (1u << 26) /* some line ended in LF without CR */
#define SIP_MSG_F_VALIDATED	 (1u << 27) /* sip_msg_validate() has run */

#define SIP_MSG_F_MISSING_MANDATORY                                                      \
	(SIP_MSG_F_NO_CALLID | SIP_MSG_F_NO_FROM | SIP_MSG_F_NO_TO | SIP_MSG_F_NO_CSEQ | \
	 SIP_MSG_F_NO_VIA)
#define SIP_MSG_F_INVALID (SIP_MSG_F_MISSING_MANDATORY | (0x1fffffu & ~0x3fu))

/* A name-addr or addr-spec with its header parameters (From, To, Contact, Route, ...). */
struct sip_name_addr {
	struct sn_slice display;  /* display name; quoted strings keep their quotes */
	struct sn_slice uri_text; /* the URI without < > */
	struct sip_uri uri;
	struct sn_slice params; /* header params after the first ';', without it */
	struct sn_slice tag;	/* tag= param, empty when absent */
	bool angle;		/* name-addr form (URI in < >) */
};

struct sip_via {
	struct sn_slice proto_name;    /* "SIP" */
	struct sn_slice proto_version; /* "2.0" */
	struct sn_slice transport;     /* "UDP", "TCP", "TLS", "SCTP", "WS", "WSS" ... */
	struct sn_slice host;	       /* sent-by host; IPv6 keeps its [ ] */
	uint16_t port;		       /* valid when has_port */
	bool has_port;
	struct sn_slice params; /* after the first ';', without it */
	struct sn_slice branch;
	struct sn_slice received;
	struct sn_slice rport; /* value, empty when has_rport without a value */
	bool has_rport;
	struct sn_slice maddr;
	struct sn_slice ttl;
};

struct sip_contact {
	bool star;		   /* "Contact: *" */
	struct sip_name_addr addr; /* unset when star */
	uint32_t expires;	   /* valid when has_expires */
	bool has_expires;
	struct sn_slice q; /* q= value as written, empty when absent */
};

struct sip_msg {
	bool is_request;
	enum sip_method method;	     /* requests */
	struct sn_slice method_name; /* requests */
	struct sn_slice ruri;	     /* requests */
	struct sn_slice version;     /* "SIP/2.0" */
	uint16_t status_code;	     /* responses */
	struct sn_slice reason;	     /* responses; may be empty */

	struct sip_hdr *hdrs; /* header index, in message order; arena storage */
	uint32_t hdr_count;
	uint32_t flags; /* SIP_MSG_F_* */

	struct sn_slice call_id;
	struct sn_slice from_value; /* raw header values, empty when absent */
	struct sn_slice to_value;
	struct sn_slice from_tag; /* empty when absent */
	struct sn_slice to_tag;
	struct sn_slice from_uri; /* URI text without < >; empty when absent or when the */
	struct sn_slice to_uri;	  /* name-addr's structure is broken (no closing >, ...);
				   * URI and parameters are not validated here: see
				   * sip_msg_validate() */
	uint32_t cseq;
	enum sip_method cseq_method;
	struct sn_slice cseq_method_name;
	struct sip_via via;	 /* top-most Via element that splits (via.proto_name not empty) */
	uint32_t via_count;	 /* Via elements, over all Via lines */
	uint32_t content_length; /* valid when has_content_length */
	bool has_content_length;
	int32_t max_forwards;	      /* -1 when absent or invalid */
	struct sn_slice content_type; /* raw value, empty when absent */

	struct sn_slice body; /* Content-Length bytes (or the rest when absent) */
	uint32_t hdr_len;     /* start line + headers + empty line */
	uint32_t msg_len;     /* hdr_len + body.len */
};

/**
 * Name of a method ("INVITE"); "UNKNOWN" for SIP_METHOD_UNKNOWN.
 * @param m the method
 * @return a static string
 */
const char *sip_method_name(enum sip_method m);

/**
 * Method enum from a token (case-sensitive, RFC 3261 §7.1).
 * @param tok the method token
 * @return the method, or SIP_METHOD_UNKNOWN
 */
enum sip_method sip_method_from_slice(struct sn_slice tok);

/**
 * Canonical name of a header id ("Call-ID"); NULL for SIP_HDR_OTHER.
 * @param id the header id
 * @return a static string or NULL
 */
const char *sip_hdr_name(enum sip_hdr_id id);

/**
 * Header id from a header name, full or compact, case-insensitive.
 * @param name the name as written
 * @return the id, SIP_HDR_OTHER when unknown
 */
enum sip_hdr_id sip_hdr_lookup(struct sn_slice name);

/**
 * Parse one SIP message.
 * @param msg   filled in; fields not present are zero/empty
 * @param arena storage for the header index
 * @param p     the bytes (a UDP payload, or one message framed by sip_msg_frame())
 * @param len   byte count
 * @return SN_OK; SN_ETRUNC when the empty line ending the headers is missing, or when
 *         Content-Length promises more body than present (then every header field is valid,
 *         body holds what is present and SIP_MSG_F_BODY_TRUNC is set); SN_EPARSE when the
 *         start line is malformed; SN_ELIMIT when the arena budget or SIP_MSG_MAX_HDRS is hit.
 *         Semantically invalid messages return SN_OK; only the flags listed above the
 *         SIP_MSG_F_* definitions are set here, call sip_msg_validate() for the others.
 * Ownership: slices borrow @p p; the header index lives in @p arena.
 */
enum sn_status sip_msg_parse(struct sip_msg *msg, struct sn_arena *arena, const uint8_t *p,
			     size_t len);

/**
 * Full RFC 3261 / RFC 4475 validation of a parsed message: every Via, Contact, Route and
 * Record-Route element, From and To (name-addr and URI), the Request-URI, CSeq (and its method
 * against the request's), Call-ID, duplicated single headers, the SIP version of the start line
 * and of every Via, Max-Forwards, Expires, Min-Expires, Retry-After and Date. Sets the
 * corresponding SIP_MSG_F_* flags and SIP_MSG_F_VALIDATED; calling it again changes nothing.
 * Costs about as much as the parse itself again (it parses every URI), which is why the parse
 * leaves it out.
 * @param msg   a message filled by sip_msg_parse() (SN_OK or SN_ETRUNC)
 * @param arena scratch storage for future checks; unused today, may be NULL
 * @return SN_OK when no SIP_MSG_F_INVALID flag is set (parse or validation), else SN_EPARSE:
 *         sip_msg_invalid_reason() then names the first problem.
 */
enum sn_status sip_msg_validate(struct sip_msg *msg, struct sn_arena *arena);

/**
 * Short reason for the first invalid flag, usable as a "400" reason phrase.
 * @param msg a parsed message (and validated, for anything beyond missing headers)
 * @return a static string, or NULL when no SIP_MSG_F_INVALID flag is set
 */
const char *sip_msg_invalid_reason(const struct sip_msg *msg);

/**
 * True when the bytes start with a plausible SIP request line (token SP URI SP SIP/x.y EOL) or
 * status line ("SIP/2.0" SP 3DIGIT SP or EOL). Cheap: rejects RTP, HTTP and binary data at the
 * first bytes.
 * @param p   the bytes
 * @param len byte count
 * @return true for a SIP start line
 */
bool sip_msg_is_start(const uint8_t *p, size_t len);

/**
 * Length of the first complete message of a stream (RFC 3261 §18.3): headers, empty line and
 * Content-Length bytes of body (0 when Content-Length is absent). Call
 * sip_msg_skip_keepalive() first: leading CR/LF are not part of a message.
 * @param p       stream bytes
 * @param len     byte count
 * @param msg_len set on SN_OK
 * @return SN_OK, SN_ETRUNC when more bytes are needed, SN_EPARSE when the bytes do not start
 *         with a SIP start line, the headers exceed 64 KiB or Content-Length is invalid.
 */
enum sn_status sip_msg_frame(const uint8_t *p, size_t len, size_t *msg_len);

/**
 * Number of leading CR and LF bytes (keep-alives, RFC 5626 §3.5.1) to skip.
 * @param p   stream bytes
 * @param len byte count
 * @return the count
 */
size_t sip_msg_skip_keepalive(const uint8_t *p, size_t len);

/**
 * First header line with the given id.
 * @param msg a parsed message
 * @param id  the header id (not SIP_HDR_OTHER)
 * @return the header, or NULL when absent
 */
const struct sip_hdr *sip_msg_hdr_find(const struct sip_msg *msg, enum sip_hdr_id id);

/**
 * First header line with the given name (case-insensitive; compact forms of known headers
 * match their full names).
 * @param msg  a parsed message
 * @param name NUL-terminated header name
 * @return the header, or NULL when absent
 */
const struct sip_hdr *sip_msg_hdr_find_name(const struct sip_msg *msg, const char *name);

/* Iterator over the comma-separated elements of every header line with one id. */
struct sip_hdr_iter {
	const struct sip_msg *msg;
	enum sip_hdr_id id;
	uint32_t idx;	      /* next header line to open */
	struct sn_slice rest; /* unread part of the current line */
	bool in_line;
};

/**
 * Start iterating the elements of header @p id.
 * @param it  the iterator
 * @param msg a parsed message
 * @param id  the header id
 */
void sip_hdr_iter_init(struct sip_hdr_iter *it, const struct sip_msg *msg, enum sip_hdr_id id);

/**
 * Next element, split at commas outside quoted strings and < >; whitespace trimmed. An empty
 * header line yields no element; an empty element between commas yields an empty slice.
 * @param it   the iterator
 * @param elem set to the element
 * @return false at the end
 */
bool sip_hdr_iter_next(struct sip_hdr_iter *it, struct sn_slice *elem);

/**
 * Parse a name-addr or addr-spec with header params (From, To, Contact, Route ...).
 * @param text one element
 * @param out  filled on SN_OK
 * @return SN_OK or SN_EPARSE (unbalanced quotes, bad display name, bad URI, empty param)
 */
enum sn_status sip_name_addr_parse(struct sn_slice text, struct sip_name_addr *out);

/**
 * Parse one Via element (RFC 3261 §20.42).
 * @param text one element
 * @param out  filled on SN_OK
 * @return SN_OK or SN_EPARSE
 */
enum sn_status sip_via_parse(struct sn_slice text, struct sip_via *out);

/**
 * Parse one Contact element: "*" or a name-addr with expires and q params.
 * @param text one element
 * @param out  filled on SN_OK
 * @return SN_OK or SN_EPARSE (also for an expires value over 2^32-1)
 */
enum sn_status sip_contact_parse(struct sn_slice text, struct sip_contact *out);

/**
 * Parse a CSeq value: 1*DIGIT LWS method (RFC 3261 §20.16).
 * @param text        the value
 * @param num         set to the number
 * @param method_name set to the method token
 * @return SN_OK or SN_EPARSE (also for a number >= 2^31)
 */
enum sn_status sip_cseq_parse(struct sn_slice text, uint32_t *num, struct sn_slice *method_name);

/**
 * Parse a Content-Length (or other decimal 32-bit) value; surrounding whitespace allowed.
 * @param text the value
 * @param out  set on SN_OK
 * @return SN_OK, or SN_EPARSE for empty, negative, non-numeric or > 2^32-1 values
 */
enum sn_status sip_u32_parse(struct sn_slice text, uint32_t *out);

/**
 * All Via elements of a message, top first.
 * @param msg   a parsed message
 * @param arena storage for the array
 * @param out   set to the array (NULL when count is 0)
 * @param count set to the element count
 * @return SN_OK, SN_EPARSE when an element is malformed, SN_ELIMIT from the arena
 */
enum sn_status sip_msg_vias(const struct sip_msg *msg, struct sn_arena *arena, struct sip_via **out,
			    size_t *count);

/**
 * All Contact elements of a message.
 * @param msg   a parsed message
 * @param arena storage for the array
 * @param out   set to the array (NULL when count is 0)
 * @param count set to the element count
 * @return SN_OK, SN_EPARSE when an element is malformed, SN_ELIMIT from the arena
 */
enum sn_status sip_msg_contacts(const struct sip_msg *msg, struct sn_arena *arena,
				struct sip_contact **out, size_t *count);

/**
 * All name-addr elements of a list header (Route, Record-Route, Path ...), in order.
 * @param msg   a parsed message
 * @param id    the header id
 * @param arena storage for the array
 * @param out   set to the array (NULL when count is 0)
 * @param count set to the element count
 * @return SN_OK, SN_EPARSE when an element is malformed, SN_ELIMIT from the arena
 */
enum sn_status sip_msg_name_addrs(const struct sip_msg *msg, enum sip_hdr_id id,
				  struct sn_arena *arena, struct sip_name_addr **out,
				  size_t *count);

/**
 * Parse the From header.
 * @param msg a parsed message
 * @param out filled on SN_OK
 * @return SN_OK, SN_ENOTFOUND when absent, SN_EPARSE when malformed
 */
enum sn_status sip_msg_from(const struct sip_msg *msg, struct sip_name_addr *out);

/**
 * Parse the To header.
 * @param msg a parsed message
 * @param out filled on SN_OK
 * @return SN_OK, SN_ENOTFOUND when absent, SN_EPARSE when malformed
 */
enum sn_status sip_msg_to(const struct sip_msg *msg, struct sip_name_addr *out);

/**
 * Expires header value.
 * @param msg a parsed message
 * @param out set on SN_OK
 * @return SN_OK, SN_ENOTFOUND when absent, SN_EPARSE when malformed or overflowing
 */
enum sn_status sip_msg_expires(const struct sip_msg *msg, uint32_t *out);

/**
 * User-Agent header value (raw, trimmed).
 * @param msg a parsed message
 * @return the value, or an empty slice when absent
 */
struct sn_slice sip_msg_user_agent(const struct sip_msg *msg);

/* One part of a multipart body (RFC 2046 §5.1). */
struct sip_mime_part {
	struct sn_slice headers;      /* the part's header block, without the empty line */
	struct sn_slice content_type; /* the part's Content-Type value (default text/plain) */
	struct sn_slice body;
};

/**
 * Split a multipart body by the boundary parameter of its Content-Type.
 * @param content_type the message's Content-Type value (must be multipart/...)
 * @param body         the message body
 * @param parts        caller array receiving the parts
 * @param max_parts    size of @p parts
 * @param count        set to the number of parts found
 * @return SN_OK, SN_EPARSE when not multipart or no boundary/closing delimiter is found,
 *         SN_ELIMIT when there are more than @p max_parts parts (the first ones are filled)
 */
enum sn_status sip_multipart_split(struct sn_slice content_type, struct sn_slice body,
				   struct sip_mime_part *parts, size_t max_parts, size_t *count);

/**
 * The SDP of a message: the body when Content-Type is application/sdp, or the first
 * application/sdp part of a multipart body.
 * @param msg a parsed message
 * @param sdp set on SN_OK
 * @return SN_OK or SN_ENOTFOUND
 */
enum sn_status sip_msg_find_sdp(const struct sip_msg *msg, struct sn_slice *sdp);

#endif
