/*
 * cap_sctp.c - SCTP chunk walking (RFC 9260 §3.2) and user message reassembly for SIP over
 * SCTP (RFC 4168).
 *
 * cap_sctp_walk() visits the chunks after the common header. Every chunk has a 4-byte header
 * (type, flags, length including the header, >= 4) and is padded to a multiple of 4; the
 * padding of the last chunk may be missing. DATA (type 0, RFC 9260 §3.3.1) and I-DATA (type 64,
 * RFC 8260 §2.1) are handed on, every other chunk type is skipped. A chunk with B and E set is
 * a whole user message and goes straight to the callback (zero copy).
 *
 * Fragments go to struct cap_sctp_reasm. A partial message is keyed by the association (the
 * unordered address/port pair), the direction within it (TSN and stream spaces are per
 * direction), the stream id, the U bit and, for I-DATA, the message id (MID). Its fragments
 * are kept sorted by TSN (DATA) or FSN (I-DATA, where the B fragment has FSN 0); a message is
 * complete when a B fragment, consecutive numbers and an E fragment are present. The assembled
 * message is delivered as one chunk with flags B|E and the first fragment's TSN and PPID.
 * Memory: fragment bytes plus per-fragment overhead are bounded by max_bytes; past it the
 * oldest partial messages are dropped.
 *
 * Ownership: the reassembler owns its partial messages and fragment copies; delivered data is
 * borrowed for the duration of the callback only.
 * Threading: one owner thread; no locks, no global state. Parsing never logs.
 */
#include "config.h"

#include "sipnab/cap_sctp.h"

#include <stdlib.h>
#include <string.h>

#include <glib.h>

#include "sipnab/sn_hash.h"

#define SCTP_CHUNK_DATA	 0
#define SCTP_CHUNK_IDATA 64
#define SCTP_DATA_HDR	 16
#define SCTP_IDATA_HDR	 20
#define SCTP_FLAG_E	 0x01
#define SCTP_FLAG_B	 0x02
#define SCTP_FLAG_U	 0x04

/* One fragment copy; owned by its partial message. */
struct sctp_frag {
	struct sctp_frag *next; /* sorted by num (serial order) */
	uint32_t num;		/* TSN (DATA) or FSN (I-DATA) */
	uint32_t tsn;
	uint32_t ppid; /* meaningful on the B fragment */
	uint8_t flags;
	uint32_t len;
	uint8_t data[];
};

/* Hashed and compared as bytes: no implicit padding, built with memset. */
struct sctp_key {
	uint32_t mid; /* I-DATA message id; 0 for DATA */
	uint16_t stream;
	uint16_t pa, pb;
	uint8_t dir;  /* 0: sent by (a, pa) */
	uint8_t kind; /* bit 0: I-DATA, bit 1: unordered */
	struct sn_addr a, b;
	uint8_t pad[2];
};

_Static_assert(sizeof(struct sctp_key) == 48, "struct sctp_key must have no implicit padding");

struct sctp_partial {
	struct sctp_key key;
	struct sctp_frag *frags; /* owned */
	size_t bytes;		 /* accounted bytes of frags */
	struct sctp_partial *older;
	struct sctp_partial *newer;
};

struct cap_sctp_reasm {
	GHashTable *partials; /* &p->key -> p; release frees */
	struct sctp_partial *oldest;
	struct sctp_partial *newest;
	size_t bytes;
	size_t max_bytes;
};

/* Keyed (sn_hash.h): the packets of a capture name the associations, and a table whose buckets
 * they could choose would be walked whole on every lookup. */
static guint sctp_key_hash(gconstpointer p)
{
	return (guint)sn_hash_final(sn_hash_bytes(sn_hash_key(), p, sizeof(struct sctp_key)));
}

static gboolean sctp_key_equal(gconstpointer a, gconstpointer b)
{
	return memcmp(a, b, sizeof(struct sctp_key)) == 0;
}

static void sctp_addr_norm(struct sn_addr *out, const struct sn_addr *in)
{
	out->family = in->family;
	memcpy(out->bytes, in->bytes, in->family == 4 ? 4 : 16);
}

static void sctp_key_make(const struct cap_packet *pkt, const struct cap_sctp_data *d, bool idata,
			  uint32_t mid, struct sctp_key *key)
{
	int c = sn_addr_cmp(&pkt->src, &pkt->dst);

	if (c == 0) {
		c = (int)pkt->sport - (int)pkt->dport;
	}
	memset(key, 0, sizeof(*key));
	if (c <= 0) {
		sctp_addr_norm(&key->a, &pkt->src);
		sctp_addr_norm(&key->b, &pkt->dst);
		key->pa = pkt->sport;
		key->pb = pkt->dport;
	} else {
		sctp_addr_norm(&key->a, &pkt->dst);
		sctp_addr_norm(&key->b, &pkt->src);
		key->pa = pkt->dport;
		key->pb = pkt->sport;
		key->dir = 1;
	}
	key->mid = mid;
	key->stream = d->stream;
	key->kind = (uint8_t)((idata ? 1 : 0) | ((d->flags & SCTP_FLAG_U) ? 2 : 0));
}

static void sctp_partial_unlink(struct cap_sctp_reasm *r, struct sctp_partial *p)
{
	if (p->older) {
		p->older->newer = p->newer;
	} else {
		r->oldest = p->newer;
	}
	if (p->newer) {
		p->newer->older = p->older;
	} else {
		r->newest = p->older;
	}
}

static void sctp_partial_free(struct cap_sctp_reasm *r, struct sctp_partial *p)
{
	struct sctp_frag *f = p->frags;

	g_hash_table_remove(r->partials, &p->key);
	sctp_partial_unlink(r, p);
	r->bytes -= p->bytes;
	while (f) {
		struct sctp_frag *next = f->next;

		free(f);
		f = next;
	}
	free(p);
}

static size_t sctp_frag_cost(uint32_t len)
{
	return sizeof(struct sctp_frag) + len;
}

/*
 * If @p holds a complete message, unlink its fragments and return the first; *last is set to
 * the E fragment. Fragments of one message are consecutive in the sorted list.
 */
static struct sctp_frag *sctp_partial_take(struct sctp_partial *p, struct sctp_frag **last)
{
	struct sctp_frag **pp = &p->frags;

	while (*pp) {
		struct sctp_frag *b = *pp;
		struct sctp_frag *f = b;

		if (!(b->flags & SCTP_FLAG_B)) {
			pp = &b->next;
			continue;
		}
		while (!(f->flags & SCTP_FLAG_E) && f->next && f->next->num == f->num + 1 &&
		       !(f->next->flags & SCTP_FLAG_B)) {
			f = f->next;
		}
		if (f->flags & SCTP_FLAG_E) {
			*pp = f->next;
			f->next = NULL;
			*last = f;
			return b;
		}
		pp = &b->next;
	}
	return NULL;
}

/* Store a fragment; deliver the message it completes. */
static void sctp_reasm_add(struct cap_sctp_reasm *r, const struct cap_packet *pkt,
			   const struct cap_sctp_data *d, bool idata, uint32_t mid, uint32_t num,
			   cap_sctp_data_fn *fn, void *user)
{
	struct sctp_key key;
	struct sctp_partial *p;
	struct sctp_frag **pp;
	struct sctp_frag *f;
	struct sctp_frag *first;
	struct sctp_frag *last = NULL;
	struct cap_sctp_data msg;
	size_t cost = sctp_frag_cost(d->len);
	size_t total = 0;
	uint8_t *buf;

	if (cost > r->max_bytes) {
		return;
	}
	sctp_key_make(pkt, d, idata, mid, &key);
	p = g_hash_table_lookup(r->partials, &key);
	if (!p) {
		p = sn_xcalloc(1, sizeof(*p));
		memcpy(&p->key, &key, sizeof(key));
		g_hash_table_insert(r->partials, &p->key, p);
		p->older = r->newest;
		if (r->newest) {
			r->newest->newer = p;
		} else {
			r->oldest = p;
		}
		r->newest = p;
	}
	pp = &p->frags;
	while (*pp && (int32_t)((*pp)->num - num) < 0) {
		pp = &(*pp)->next;
	}
	if (*pp && (*pp)->num == num) {
		return; /* duplicate: first copy wins */
	}
	f = sn_xmalloc(cost);
	f->num = num;
	f->tsn = d->tsn;
	f->ppid = d->ppid;
	f->flags = d->flags;
	f->len = d->len;
	memcpy(f->data, d->data, d->len);
	f->next = *pp;
	*pp = f;
	p->bytes += cost;
	r->bytes += cost;

	first = sctp_partial_take(p, &last);
	if (first) {
		for (f = first; f; f = f->next) {
			total += f->len;
		}
		buf = sn_xmalloc(total ? total : 1);
		total = 0;
		f = first;
		while (f) {
			struct sctp_frag *next = f->next;

			memcpy(buf + total, f->data, f->len);
			total += f->len;
			p->bytes -= sctp_frag_cost(f->len);
			r->bytes -= sctp_frag_cost(f->len);
			if (f != first) {
				free(f);
			}
			f = next;
		}
		msg.tsn = first->tsn;
		msg.stream = d->stream;
		msg.ppid = first->ppid;
		msg.flags = (uint8_t)(SCTP_FLAG_B | SCTP_FLAG_E | (d->flags & SCTP_FLAG_U));
		msg.data = buf;
		msg.len = (uint32_t)total;
		free(first);
		if (!p->frags) {
			sctp_partial_free(r, p);
		}
		fn(user, pkt, &msg);
		free(buf);
	}
	while (r->bytes > r->max_bytes && r->oldest) {
		sctp_partial_free(r, r->oldest);
	}
}

struct cap_sctp_reasm *cap_sctp_reasm_new(size_t max_bytes)
{
	struct cap_sctp_reasm *r = sn_xcalloc(1, sizeof(*r));

	r->max_bytes = max_bytes;
	r->partials = g_hash_table_new(sctp_key_hash, sctp_key_equal);
	return r;
}

void cap_sctp_reasm_free(struct cap_sctp_reasm *r)
{
	if (!r) {
		return;
	}
	while (r->oldest) {
		sctp_partial_free(r, r->oldest);
	}
	g_hash_table_destroy(r->partials);
	free(r);
}

enum sn_status cap_sctp_walk(struct cap_sctp_reasm *reasm, const struct cap_packet *pkt,
			     cap_sctp_data_fn *fn, void *user)
{
	const uint8_t *p = pkt->payload;
	size_t len = p ? pkt->payload_len : 0;
	size_t off = 0;

	while (off < len) {
		size_t rem = len - off;
		const uint8_t *c = p + off;
		struct cap_sctp_data d;
		uint32_t clen;
		uint32_t mid = 0;
		uint32_t num;
		bool idata;

		if (rem < 4) {
			return pkt->truncated ? SN_ETRUNC : SN_EPARSE;
		}
		clen = sn_be16(c + 2);
		if (clen < 4) {
			return SN_EPARSE;
		}
		if (clen > rem) {
			return pkt->truncated ? SN_ETRUNC : SN_EPARSE;
		}
		/* Padding to 4 bytes; the last chunk's may be missing. */
		off += SN_MIN(((size_t)clen + 3) & ~(size_t)3, rem);
		if (c[0] != SCTP_CHUNK_DATA && c[0] != SCTP_CHUNK_IDATA) {
			continue;
		}
		idata = c[0] == SCTP_CHUNK_IDATA;
		if (clen < (idata ? SCTP_IDATA_HDR : SCTP_DATA_HDR)) {
			return SN_EPARSE;
		}
		d.flags = c[1];
		d.tsn = sn_be32(c + 4);
		d.stream = sn_be16(c + 8);
		if (idata) {
			mid = sn_be32(c + 12);
			/* PPID on the first fragment, FSN on the others (RFC 8260 §2.1). */
			d.ppid = (d.flags & SCTP_FLAG_B) ? sn_be32(c + 16) : 0;
			num = (d.flags & SCTP_FLAG_B) ? 0 : sn_be32(c + 16);
			d.data = c + SCTP_IDATA_HDR;
			d.len = clen - SCTP_IDATA_HDR;
		} else {
			d.ppid = sn_be32(c + 12);
			num = d.tsn;
			d.data = c + SCTP_DATA_HDR;
			d.len = clen - SCTP_DATA_HDR;
		}
		if ((d.flags & (SCTP_FLAG_B | SCTP_FLAG_E)) == (SCTP_FLAG_B | SCTP_FLAG_E)) {
			fn(user, pkt, &d);
		} else if (reasm) {
			sctp_reasm_add(reasm, pkt, &d, idata, mid, num, fn, user);
		}
	}
	return SN_OK;
}
