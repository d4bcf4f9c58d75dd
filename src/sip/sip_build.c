/*
 * sip_build.c - builds SIP messages from parts and serializes them (RFC 3261 §7).
 *
 * The builder is an ordered list of (name, value) slices plus a start line and a body; it is
 * not on the capture hot path, so the list is a plain heap array with insert/remove by
 * memmove. Content-Length is never stored in the list: serialization always writes it last,
 * computed from the body, so an edited body can never disagree with it.
 * Ownership: slices are borrowed; generated values live in the caller's arena; the header
 * array is owned and freed by sip_build_cleanup(); struct sip_buf owns its bytes.
 * Thread: a builder belongs to one thread.
 */
#include "config.h"

#include "sipnab/sip_build.h"

#include <stdlib.h>
#include <string.h>

#include "sip_int.h"

void sip_buf_init(struct sip_buf *b)
{
	b->ptr = NULL;
	b->len = 0;
	b->cap = 0;
}

void sip_buf_cleanup(struct sip_buf *b)
{
	free(b->ptr);
	sip_buf_init(b);
}

void sip_buf_append(struct sip_buf *b, const void *p, size_t len)
{
	if (!len) {
		return;
	}
	if (b->cap - b->len < len) {
		size_t ncap = b->cap ? b->cap : 256;
		while (ncap - b->len < len) {
			ncap *= 2;
		}
		b->ptr = sn_xrealloc(b->ptr, ncap);
		b->cap = ncap;
	}
	memcpy(b->ptr + b->len, p, len);
	b->len += len;
}

static void buf_slice(struct sip_buf *b, struct sn_slice s)
{
	sip_buf_append(b, s.ptr, s.len);
}

static void buf_str(struct sip_buf *b, const char *s)
{
	sip_buf_append(b, s, strlen(s));
}

/* Decimal form of v into buf (at least 10 bytes); returns the length. */
static size_t u32_fmt(uint32_t v, uint8_t *buf)
{
	uint8_t tmp[10];
	size_t n = 0;

	do {
		tmp[n++] = (uint8_t)('0' + v % 10);
		v /= 10;
	} while (v);
	for (size_t i = 0; i < n; i++) {
		buf[i] = tmp[n - 1 - i];
	}
	return n;
}

void sip_build_init(struct sip_build *b, struct sn_arena *arena)
{
	memset(b, 0, sizeof(*b));
	b->arena = arena;
}

void sip_build_cleanup(struct sip_build *b)
{
	free(b->hdrs);
	b->hdrs = NULL;
	b->hdr_count = 0;
	b->hdr_cap = 0;
}

void sip_build_request(struct sip_build *b, struct sn_slice method, struct sn_slice ruri)
{
	b->has_start = true;
	b->is_request = true;
	b->method = method;
	b->ruri = ruri;
}

void sip_build_response(struct sip_build *b, uint16_t code, struct sn_slice reason)
{
	b->has_start = true;
	b->is_request = false;
	b->status_code = code;
	b->reason = reason;
}

static void hdr_insert(struct sip_build *b, size_t at, struct sip_build_hdr h)
{
	if (b->hdr_count == b->hdr_cap) {
		b->hdr_cap = b->hdr_cap ? b->hdr_cap * 2 : 16;
		b->hdrs = sn_xrealloc(b->hdrs, b->hdr_cap * sizeof(*b->hdrs));
	}
	memmove(&b->hdrs[at + 1], &b->hdrs[at], (b->hdr_count - at) * sizeof(*b->hdrs));
	b->hdrs[at] = h;
	b->hdr_count++;
}

static void hdr_delete(struct sip_build *b, size_t at)
{
	memmove(&b->hdrs[at], &b->hdrs[at + 1], (b->hdr_count - at - 1) * sizeof(*b->hdrs));
	b->hdr_count--;
}

static struct sip_build_hdr mkhdr(struct sn_slice name, struct sn_slice value)
{
	struct sip_build_hdr h = {name, value, sip_hdr_lookup(name)};
	return h;
}

static bool hdr_match(const struct sip_build_hdr *h, struct sn_slice name, enum sip_hdr_id id)
{
	return id != SIP_HDR_OTHER ? h->id == id : sn_slice_caseeq(h->name, name);
}

void sip_build_from_msg(struct sip_build *b, const struct sip_msg *msg)
{
	b->hdr_count = 0;
	if (msg->is_request) {
		sip_build_request(b, msg->method_name, msg->ruri);
	} else {
		sip_build_response(b, msg->status_code, msg->reason);
	}
	for (uint32_t i = 0; i < msg->hdr_count; i++) {
		const struct sip_hdr *h = &msg->hdrs[i];
		if (h->id == SIP_HDR_CONTENT_LENGTH) {
			continue;
		}
		struct sip_build_hdr bh = {h->name, h->value, h->id};
		hdr_insert(b, b->hdr_count, bh);
	}
	b->body = msg->body;
}

void sip_build_hdr_append(struct sip_build *b, const char *name, struct sn_slice value)
{
	struct sip_build_hdr h = mkhdr(sn_slice_make(name, strlen(name)), value);

	if (h.id == SIP_HDR_CONTENT_LENGTH) {
		return;
	}
	hdr_insert(b, b->hdr_count, h);
}

void sip_build_hdr_prepend(struct sip_build *b, const char *name, struct sn_slice value)
{
	struct sip_build_hdr h = mkhdr(sn_slice_make(name, strlen(name)), value);
	size_t at = 0;

	if (h.id == SIP_HDR_CONTENT_LENGTH) {
		return;
	}
	for (size_t i = 0; i < b->hdr_count; i++) {
		if (hdr_match(&b->hdrs[i], h.name, h.id)) {
			at = i;
			break;
		}
	}
	hdr_insert(b, at, h);
}

size_t sip_build_hdr_remove(struct sip_build *b, const char *name)
{
	struct sn_slice n = sn_slice_make(name, strlen(name));
	enum sip_hdr_id id = sip_hdr_lookup(n);
	size_t removed = 0;

	for (size_t i = 0; i < b->hdr_count;) {
		if (hdr_match(&b->hdrs[i], n, id)) {
			hdr_delete(b, i);
			removed++;
		} else {
			i++;
		}
	}
	return removed;
}

bool sip_build_hdr_remove_first(struct sip_build *b, const char *name)
{
	struct sn_slice n = sn_slice_make(name, strlen(name));
	enum sip_hdr_id id = sip_hdr_lookup(n);

	for (size_t i = 0; i < b->hdr_count; i++) {
		if (hdr_match(&b->hdrs[i], n, id)) {
			hdr_delete(b, i);
			return true;
		}
	}
	return false;
}

void sip_build_hdr_replace(struct sip_build *b, const char *name, struct sn_slice value)
{
	struct sn_slice n = sn_slice_make(name, strlen(name));
	enum sip_hdr_id id = sip_hdr_lookup(n);
	bool done = false;

	if (id == SIP_HDR_CONTENT_LENGTH) {
		return;
	}
	for (size_t i = 0; i < b->hdr_count;) {
		if (!hdr_match(&b->hdrs[i], n, id)) {
			i++;
		} else if (!done) {
			b->hdrs[i].value = value;
			done = true;
			i++;
		} else {
			hdr_delete(b, i);
		}
	}
	if (!done) {
		sip_build_hdr_append(b, name, value);
	}
}

struct sn_slice sip_build_hdr_get(const struct sip_build *b, const char *name)
{
	struct sn_slice n = sn_slice_make(name, strlen(name));
	enum sip_hdr_id id = sip_hdr_lookup(n);

	for (size_t i = 0; i < b->hdr_count; i++) {
		if (hdr_match(&b->hdrs[i], n, id)) {
			return b->hdrs[i].value;
		}
	}
	return SN_SLICE_NULL;
}

enum sn_status sip_build_max_forwards_dec(struct sip_build *b)
{
	void *mem;
	uint32_t v;

	for (size_t i = 0; i < b->hdr_count; i++) {
		if (b->hdrs[i].id != SIP_HDR_MAX_FORWARDS) {
			continue;
		}
		if (sip_u32_parse(b->hdrs[i].value, &v) != SN_OK) {
			return SN_EPARSE;
		}
		if (v == 0 || sn_arena_alloc(b->arena, 10, &mem) != SN_OK) {
			return SN_ELIMIT;
		}
		b->hdrs[i].value = sn_slice_make(mem, u32_fmt(v - 1, mem));
		return SN_OK;
	}
	return SN_ENOTFOUND;
}

void sip_build_set_body(struct sip_build *b, struct sn_slice content_type, struct sn_slice body)
{
	if (content_type.len) {
		sip_build_hdr_replace(b, "Content-Type", content_type);
	}
	b->body = body;
}

enum sn_status sip_build_serialize(const struct sip_build *b, struct sip_buf *out)
{
	uint8_t num[10];

	if (!b->has_start) {
		return SN_ESTATE;
	}
	if (b->is_request) {
		buf_slice(out, b->method);
		buf_str(out, " ");
		buf_slice(out, b->ruri);
		buf_str(out, " SIP/2.0\r\n");
	} else {
		uint16_t c = b->status_code;
		uint8_t code[3] = {(uint8_t)('0' + c / 100 % 10), (uint8_t)('0' + c / 10 % 10),
				   (uint8_t)('0' + c % 10)};
		buf_str(out, "SIP/2.0 ");
		sip_buf_append(out, code, 3);
		buf_str(out, " ");
		buf_slice(out, b->reason);
		buf_str(out, "\r\n");
	}
	for (size_t i = 0; i < b->hdr_count; i++) {
		buf_slice(out, b->hdrs[i].name);
		buf_str(out, ": ");
		buf_slice(out, b->hdrs[i].value);
		buf_str(out, "\r\n");
	}
	buf_str(out, "Content-Length: ");
	sip_buf_append(out, num, u32_fmt(b->body.len, num));
	buf_str(out, "\r\n\r\n");
	buf_slice(out, b->body);
	return SN_OK;
}
