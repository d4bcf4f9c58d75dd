/*
 * sip_build.h - SIP message builder and serializer, for the proxy and the B2BUA.
 *
 * A struct sip_build holds a start line, an ordered header list and a body as slices. It can
 * start empty or from a parsed message, then headers are added, removed or replaced (prepend a
 * Via, decrement Max-Forwards ...), and sip_build_serialize() writes the wire form with
 * Content-Length recomputed from the body.
 * Ownership: the builder borrows every slice and header name it is given (they must outlive
 * it); values it generates itself (Max-Forwards) come from the arena given to
 * sip_build_init(). The header list is heap memory owned by the builder, released by
 * sip_build_cleanup(). struct sip_buf owns its heap bytes.
 * Thread: a builder belongs to one thread.
 */
#ifndef SIPNAB_SIP_BUILD_H
#define SIPNAB_SIP_BUILD_H

#include "sipnab/sip_msg.h"
#include "sipnab/sn_arena.h"
#include "sipnab/sn_base.h"

/* A growable byte buffer; ptr is heap memory owned by the buffer. */
struct sip_buf {
	uint8_t *ptr;
	size_t len;
	size_t cap;
};

struct sip_build_hdr {
	struct sn_slice name;
	struct sn_slice value;
	enum sip_hdr_id id;
};

struct sip_build {
	struct sn_arena *arena; /* generated values; borrowed */
	bool has_start;		/* a start line was set */
	bool is_request;
	struct sn_slice method;	    /* requests */
	struct sn_slice ruri;	    /* requests */
	uint16_t status_code;	    /* responses */
	struct sn_slice reason;	    /* responses */
	struct sip_build_hdr *hdrs; /* heap array, owned; never holds Content-Length */
	size_t hdr_count;
	size_t hdr_cap;
	struct sn_slice body;
};

/** Prepare an empty buffer. @param b the buffer */
void sip_buf_init(struct sip_buf *b);
/** Free the buffer's bytes. @param b the buffer */
void sip_buf_cleanup(struct sip_buf *b);
/**
 * Append bytes, growing the buffer.
 * @param b   the buffer
 * @param p   bytes to append
 * @param len byte count
 */
void sip_buf_append(struct sip_buf *b, const void *p, size_t len);

/**
 * Prepare an empty builder.
 * @param b     the builder
 * @param arena storage for generated header values; borrowed
 */
void sip_build_init(struct sip_build *b, struct sn_arena *arena);

/** Free the header list. @param b the builder */
void sip_build_cleanup(struct sip_build *b);

/**
 * Set a request line.
 * @param b      the builder
 * @param method method token
 * @param ruri   Request-URI
 */
void sip_build_request(struct sip_build *b, struct sn_slice method, struct sn_slice ruri);

/**
 * Set a status line.
 * @param b      the builder
 * @param code   status code, 100-699
 * @param reason reason phrase
 */
void sip_build_response(struct sip_build *b, uint16_t code, struct sn_slice reason);

/**
 * Replace the builder's content with a parsed message: start line, every header in order
 * except Content-Length, and the body.
 * @param b   the builder
 * @param msg a parsed message; its buffer must outlive the builder
 */
void sip_build_from_msg(struct sip_build *b, const struct sip_msg *msg);

/**
 * Append a header after all others.
 * @param b     the builder
 * @param name  header name (NUL-terminated; must outlive the builder)
 * @param value header value
 */
void sip_build_hdr_append(struct sip_build *b, const char *name, struct sn_slice value);

/**
 * Insert a header before the first header of the same kind (compact forms match), or at the
 * top when there is none; the way a proxy adds its Via (RFC 3261 §16.6 step 8).
 * @param b     the builder
 * @param name  header name (NUL-terminated; must outlive the builder)
 * @param value header value
 */
void sip_build_hdr_prepend(struct sip_build *b, const char *name, struct sn_slice value);

/**
 * Remove every header of that kind.
 * @param b    the builder
 * @param name header name (compact forms match)
 * @return the number of header lines removed
 */
size_t sip_build_hdr_remove(struct sip_build *b, const char *name);

/**
 * Remove the first header line of that kind (e.g. the top Via on a response).
 * @param b    the builder
 * @param name header name (compact forms match)
 * @return true when a line was removed
 */
bool sip_build_hdr_remove_first(struct sip_build *b, const char *name);

/**
 * Set the value of the first header of that kind and remove the others; append when absent.
 * @param b     the builder
 * @param name  header name (NUL-terminated; must outlive the builder)
 * @param value new value
 */
void sip_build_hdr_replace(struct sip_build *b, const char *name, struct sn_slice value);

/**
 * Value of the first header of that kind.
 * @param b    the builder
 * @param name header name (compact forms match)
 * @return the value, or an empty slice with ptr NULL when absent
 */
struct sn_slice sip_build_hdr_get(const struct sip_build *b, const char *name);

/**
 * Decrement Max-Forwards (RFC 3261 §16.6 step 3).
 * @param b the builder
 * @return SN_OK; SN_ENOTFOUND when absent (the caller adds "70"); SN_ELIMIT when it is
 *         already 0 or the arena is full; SN_EPARSE when the value is not a number
 */
enum sn_status sip_build_max_forwards_dec(struct sip_build *b);

/**
 * Set the body; Content-Length is computed at serialization.
 * @param b            the builder
 * @param content_type Content-Type value, or an empty slice to leave the header list as is
 *                     (a body without Content-Type removes nothing)
 * @param body         the body bytes (may be empty)
 */
void sip_build_set_body(struct sip_build *b, struct sn_slice content_type, struct sn_slice body);

/**
 * Append the wire form to @p out: start line, headers, "Content-Length: N", empty line, body.
 * @param b   the builder
 * @param out the buffer
 * @return SN_OK, or SN_ESTATE when no start line was set
 */
enum sn_status sip_build_serialize(const struct sip_build *b, struct sip_buf *out);

#endif
