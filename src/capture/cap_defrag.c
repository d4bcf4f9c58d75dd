/*
 * cap_defrag.c - IPv4 (RFC 791) and IPv6 (RFC 8200 §4.5) fragment reassembly for the decoder.
 *
 * A pending datagram is keyed by (family, src, dst, id[, IPv4 proto]) in a chained hash table
 * and also sits on a FIFO list in creation order, which serves both the timeout (by packet
 * timestamps, never the wall clock) and eviction when a bound is hit. Fragments may arrive in
 * any order and may repeat: the data buffer keeps the first bytes written at each offset
 * ("first data wins"), and a sorted array of disjoint received ranges detects holes.
 * A datagram is complete when its last fragment has been seen and the ranges are exactly
 * [0, total). It is then built (header of the offset-0 fragment with the length patched and
 * the fragment fields cleared, then the data) into one output buffer owned by the reassembler.
 *
 * It does no protocol decoding beyond that, and no logging.
 * Ownership: struct cap_defrag owns every entry, its buffers and the output buffer.
 * Thread: one reassembler belongs to one decoder, which belongs to one thread.
 * Limits: bytes of all pending entries <= max_bytes, entries <= max_datagrams; whatever is
 * pushed out by either bound or by the timeout is counted in frag_timeouts.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "sipnab/sn_hash.h"

#include "cap_decode_int.h"

#define DEFRAG_MAX_IP_LEN 65535u /* largest IPv4 total length / IPv6 payload length */

struct defrag_range {
	uint32_t start, end; /* [start, end) received */
};

struct defrag_entry {
	struct cap_defrag_key key;
	struct defrag_entry *hnext;	  /* hash chain */
	struct defrag_entry *prev, *next; /* FIFO by creation */
	int64_t first_ts_ns;
	uint8_t *hdr; /* header of the offset-0 fragment; owned; NULL until seen */
	uint32_t hdr_len;
	uint8_t *data; /* owned; data_cap bytes */
	uint32_t data_cap;
	struct defrag_range *ranges; /* owned; sorted, disjoint, not adjacent */
	uint32_t range_count, range_cap;
	uint32_t total_len; /* fragmentable part's length, known once the last fragment came */
	bool have_last;
	size_t mem_len; /* bytes accounted to this entry */
};

struct cap_defrag {
	struct defrag_entry **buckets; /* owned array; entries owned through the FIFO list */
	uint32_t bucket_mask;
	struct defrag_entry *oldest, *newest;
	uint32_t count;
	size_t mem_len;
	size_t max_bytes;
	uint32_t max_datagrams;
	int64_t timeout_ns;
	uint8_t *out; /* owned output buffer */
	size_t out_cap;
};

struct cap_defrag *cap_defrag_new(size_t max_bytes, uint32_t max_datagrams, int64_t timeout_ns)
{
	struct cap_defrag *f = sn_xcalloc(1, sizeof(*f));
	uint32_t n = 16;

	while (n < max_datagrams && n < 65536) {
		n <<= 1;
	}
	f->buckets = sn_xcalloc(n, sizeof(*f->buckets));
	f->bucket_mask = n - 1;
	f->max_bytes = max_bytes;
	f->max_datagrams = max_datagrams;
	f->timeout_ns = timeout_ns;
	return f;
}

/* Keyed (sn_hash.h): the packets of a capture name the fragments, and a table whose buckets they
 * could choose would be walked whole on every lookup. */
static uint32_t defrag_hash(const struct cap_defrag_key *k)
{
	return (uint32_t)sn_hash_final(sn_hash_bytes(sn_hash_key(), k, sizeof(*k)));
}

static struct defrag_entry *defrag_find(struct cap_defrag *f, const struct cap_defrag_key *k)
{
	struct defrag_entry *e = f->buckets[defrag_hash(k) & f->bucket_mask];

	while (e && memcmp(&e->key, k, sizeof(*k)) != 0) {
		e = e->hnext;
	}
	return e;
}

static void defrag_remove(struct cap_defrag *f, struct defrag_entry *e)
{
	struct defrag_entry **pp = &f->buckets[defrag_hash(&e->key) & f->bucket_mask];

	while (*pp != e) {
		pp = &(*pp)->hnext;
	}
	*pp = e->hnext;
	if (e->prev) {
		e->prev->next = e->next;
	} else {
		f->oldest = e->next;
	}
	if (e->next) {
		e->next->prev = e->prev;
	} else {
		f->newest = e->prev;
	}
	f->count--;
	f->mem_len -= e->mem_len;
	free(e->hdr);
	free(e->data);
	free(e->ranges);
	free(e);
}

static void defrag_drop(struct cap_defrag *f, struct defrag_entry *e, struct cap_decode_stats *st)
{
	defrag_remove(f, e);
	st->frag_timeouts++;
}

void cap_defrag_flush(struct cap_defrag *f, struct cap_decode_stats *st)
{
	while (f->oldest) {
		defrag_drop(f, f->oldest, st);
	}
}

static struct defrag_entry *defrag_create(struct cap_defrag *f, const struct cap_defrag_key *k,
					  int64_t ts_ns, struct cap_decode_stats *st)
{
	struct defrag_entry *e;
	uint32_t b;

	while (f->count >= f->max_datagrams && f->oldest) {
		defrag_drop(f, f->oldest, st);
	}
	e = sn_xcalloc(1, sizeof(*e));
	e->key = *k;
	e->first_ts_ns = ts_ns;
	e->mem_len = sizeof(*e);
	b = defrag_hash(k) & f->bucket_mask;
	e->hnext = f->buckets[b];
	f->buckets[b] = e;
	e->prev = f->newest;
	if (f->newest) {
		f->newest->next = e;
	} else {
		f->oldest = e;
	}
	f->newest = e;
	f->count++;
	f->mem_len += e->mem_len;
	return e;
}

/* Make room for @p extra more bytes in @p e, evicting older entries; false if impossible. */
static bool defrag_reserve(struct cap_defrag *f, struct defrag_entry *e, size_t extra,
			   struct cap_decode_stats *st)
{
	while (f->mem_len + extra > f->max_bytes && f->oldest && f->oldest != e) {
		defrag_drop(f, f->oldest, st);
	}
	while (f->mem_len + extra > f->max_bytes && e->next) {
		defrag_drop(f, e->next, st);
	}
	if (f->mem_len + extra > f->max_bytes) {
		return false;
	}
	f->mem_len += extra;
	e->mem_len += extra;
	return true;
}

/* Grow the entry so it holds @p end data bytes and one more range. */
static bool defrag_grow(struct cap_defrag *f, struct defrag_entry *e, uint32_t end,
			struct cap_decode_stats *st)
{
	uint32_t cap = e->data_cap;
	uint32_t rcap = e->range_cap;
	size_t extra;

	if (end > cap) {
		cap = cap ? cap : 2048;
		while (cap < end) {
			cap *= 2;
		}
		cap = SN_MIN(cap, DEFRAG_MAX_IP_LEN);
		cap = SN_MAX(cap, end);
	}
	if (e->range_count + 1 > rcap) {
		rcap = rcap ? rcap * 2 : 4;
	}
	extra = (size_t)(cap - e->data_cap) + (size_t)(rcap - e->range_cap) * sizeof(*e->ranges);
	if (extra == 0) {
		return true;
	}
	if (!defrag_reserve(f, e, extra, st)) {
		return false;
	}
	if (cap != e->data_cap) {
		e->data = sn_xrealloc(e->data, cap);
		e->data_cap = cap;
	}
	if (rcap != e->range_cap) {
		e->ranges = sn_xrealloc(e->ranges, rcap * sizeof(*e->ranges));
		e->range_cap = rcap;
	}
	return true;
}

/* Copy [s, s+len) into the holes only; true when an overlap held different bytes. */
static bool defrag_fill(struct defrag_entry *e, uint32_t s, const uint8_t *src, uint32_t len)
{
	uint32_t end = s + len;
	uint32_t pos = s;
	uint32_t i, j, k;
	bool differs = false;

	for (i = 0; i < e->range_count && pos < end; i++) {
		const struct defrag_range *r = &e->ranges[i];
		uint32_t os, oe;

		if (r->end <= pos) {
			continue;
		}
		if (r->start >= end) {
			break;
		}
		if (r->start > pos) {
			memcpy(e->data + pos, src + (pos - s), r->start - pos);
			pos = r->start;
		}
		os = pos;
		oe = SN_MIN(r->end, end);
		if (memcmp(e->data + os, src + (os - s), oe - os) != 0) {
			differs = true;
		}
		pos = oe;
	}
	if (pos < end) {
		memcpy(e->data + pos, src + (pos - s), end - pos);
	}
	if (len == 0) {
		return differs;
	}
	/* Merge [s, end) into the sorted range list (a slot is reserved by defrag_grow). */
	for (i = 0; i < e->range_count && e->ranges[i].end < s; i++) {
	}
	for (j = i; j < e->range_count && e->ranges[j].start <= end; j++) {
	}
	if (i == j) {
		memmove(&e->ranges[i + 1], &e->ranges[i],
			(e->range_count - i) * sizeof(*e->ranges));
		e->ranges[i].start = s;
		e->ranges[i].end = end;
		e->range_count++;
		return differs;
	}
	e->ranges[i].start = SN_MIN(e->ranges[i].start, s);
	e->ranges[i].end = SN_MAX(e->ranges[j - 1].end, end);
	k = j - i - 1;
	memmove(&e->ranges[i + 1], &e->ranges[j], (e->range_count - j) * sizeof(*e->ranges));
	e->range_count -= k;
	return differs;
}

static bool defrag_is_complete(const struct defrag_entry *e)
{
	if (!e->have_last || !e->hdr) {
		return false;
	}
	if (e->total_len == 0) {
		return true;
	}
	return e->range_count == 1 && e->ranges[0].start == 0 && e->ranges[0].end == e->total_len;
}

/* Build the whole datagram into f->out. */
static enum sn_status defrag_build(struct cap_defrag *f, struct defrag_entry *e, uint32_t *out_len)
{
	size_t len = (size_t)e->hdr_len + e->total_len;
	uint8_t *p;

	if (e->key.family == 4 ? len > DEFRAG_MAX_IP_LEN : len - 40 > DEFRAG_MAX_IP_LEN) {
		return SN_EPARSE;
	}
	if (len > f->out_cap) {
		f->out = sn_xrealloc(f->out, len);
		f->out_cap = len;
	}
	p = f->out;
	memcpy(p, e->hdr, e->hdr_len);
	if (e->total_len) {
		memcpy(p + e->hdr_len, e->data, e->total_len);
	}
	if (e->key.family == 4) {
		p[2] = (uint8_t)(len >> 8);
		p[3] = (uint8_t)len;
		p[6] &= 0x40; /* keep DF, clear MF and the offset */
		p[7] = 0;
	} else {
		p[4] = (uint8_t)((len - 40) >> 8);
		p[5] = (uint8_t)(len - 40);
		p[e->hdr_len - 6] = 0; /* fragment header: offset 0, M 0 (an atomic fragment) */
		p[e->hdr_len - 5] = 0;
	}
	*out_len = (uint32_t)len;
	return SN_OK;
}

enum sn_status cap_defrag_add(struct cap_defrag *f, const struct cap_defrag_key *key,
			      const struct cap_defrag_frag *frag, struct cap_decode_stats *st,
			      const uint8_t **out, uint32_t *out_len)
{
	struct defrag_entry *e;
	uint32_t end;
	enum sn_status rc;

	st->fragments++;
	if (frag->offset > DEFRAG_MAX_IP_LEN || frag->data_len > DEFRAG_MAX_IP_LEN - frag->offset) {
		return SN_EPARSE;
	}
	end = frag->offset + frag->data_len;
	e = defrag_find(f, key);
	/*
	 * The timeout runs on the datagram's own fragments, not on other traffic: whether a
	 * datagram completes must not depend on which other host pairs share this decoder (a
	 * worker sees only its own), so --cores N reassembles exactly what --cores 1 does.
	 */
	if (e && frag->ts_ns - e->first_ts_ns > f->timeout_ns) {
		defrag_drop(f, e, st);
		e = NULL;
	}
	if (!e) {
		e = defrag_create(f, key, frag->ts_ns, st);
	}
	if ((e->have_last && end > e->total_len) ||
	    (!frag->more && (end < (e->range_count ? e->ranges[e->range_count - 1].end : 0) ||
			     (e->have_last && end != e->total_len)))) {
		return SN_EPARSE;
	}
	if (frag->offset == 0 && !e->hdr) {
		if (!defrag_reserve(f, e, frag->hdr_len, st)) {
			goto out_evicted;
		}
		e->hdr = sn_xmalloc(SN_MAX(frag->hdr_len, 1u));
		memcpy(e->hdr, frag->hdr, frag->hdr_len);
		e->hdr_len = frag->hdr_len;
	}
	if (!defrag_grow(f, e, end, st)) {
		goto out_evicted;
	}
	if (defrag_fill(e, frag->offset, frag->data, frag->data_len)) {
		st->frag_overlaps++;
	}
	if (!frag->more) {
		e->have_last = true;
		e->total_len = end;
	}
	if (!defrag_is_complete(e)) {
		return SN_ENOTFOUND;
	}
	rc = defrag_build(f, e, out_len);
	defrag_remove(f, e);
	if (rc != SN_OK) {
		return rc;
	}
	st->reassembled++;
	*out = f->out;
	return SN_OK;

out_evicted:
	defrag_drop(f, e, st);
	return SN_ELIMIT;
}

uint32_t cap_defrag_pending_count(const struct cap_defrag *f)
{
	return f->count;
}

size_t cap_defrag_pending_len(const struct cap_defrag *f)
{
	return f->mem_len;
}

void cap_defrag_free(struct cap_defrag *f)
{
	if (!f) {
		return;
	}
	while (f->oldest) {
		struct defrag_entry *e = f->oldest;

		f->oldest = e->next;
		free(e->hdr);
		free(e->data);
		free(e->ranges);
		free(e);
	}
	free(f->buckets);
	free(f->out);
	free(f);
}
