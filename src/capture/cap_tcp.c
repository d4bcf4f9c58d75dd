/*
 * cap_tcp.c - per-connection TCP stream reassembly for SIP over TCP/TLS/WebSocket captures.
 *
 * A connection is keyed by the unordered (address, port) pair; half[0] carries the bytes sent
 * by the smaller endpoint (sn_addr_cmp, then port), half[1] the other direction. Each half
 * keeps:
 *   - next_seq: the sequence number of the next in-order byte (from SYN ISN+1, or from the
 *     first segment seen when the capture starts mid-connection);
 *   - buf: in-order bytes the application has not consumed yet (heap, grown on demand);
 *   - ooo: out-of-order segments (heap copies), sorted by sequence number, waiting for the
 *     hole before the first of them to fill.
 * All sequence comparisons use serial arithmetic (RFC 1982) so the 2^32 wrap is transparent.
 *
 * Segment handling (tcp_half_data()):
 *   fully old bytes           -> counted as a retransmission, dropped
 *   partly old bytes          -> the old prefix is trimmed (first copy wins)
 *   in order, buf empty       -> the callback runs on pkt->payload directly (zero copy); only
 *                                the unconsumed tail is copied into buf
 *   in order, buf not empty   -> appended to buf, then contiguous ooo segments follow
 *   ahead of next_seq         -> copied into ooo
 * A hole is skipped (tcp_half_skip_hole()) when it stays open longer than hole_timeout_ns,
 * when ooo exceeds max_ooo_segs or the direction's bytes exceed max_dir_bytes, or at once
 * when the segment before it was cut by the snap length (those bytes can never arrive). The
 * bytes before the hole that were not consumed are discarded and the next callback has
 * gap=true. A buf that grows past max_dir_bytes without being consumed (not SIP) is
 * discarded and counted in overflow_bytes.
 *
 * Connection life:
 *   (none) --SYN or payload--> OPEN      tcp_conn_get()
 *   OPEN   --FIN both ways-->  released  cap_tcp_segment() -> tcp_conn_release()
 *   OPEN   --RST-->            released  cap_tcp_segment() -> tcp_conn_release()
 *   OPEN   --idle/LRU/flush--> released  cap_tcp_segment() / tcp_conn_get() / cap_tcp_flush()
 * Every release first delivers the out-of-order bytes still held (holes skipped).
 *
 * Ownership: the reassembler owns the connections, their buffers and segments; the app_ptr of
 * each direction belongs to the application and is passed to app_free on release.
 * Threading: one owner thread; no locks, no global state. The in-order fast path allocates
 * nothing. Timeouts use packet timestamps, never the wall clock.
 */
#include "config.h"

#include "sipnab/cap_tcp.h"

#include <stdlib.h>
#include <string.h>

#include <glib.h>

#include "sipnab/sn_hash.h"

#define TCP_DEF_MAX_CONNS 65536u
#define TCP_DEF_MAX_DIR	  (256u * 1024u)
#define TCP_DEF_MAX_OOO	  256u
#define TCP_DEF_HOLE_NS	  (5LL * 1000000000LL)
#define TCP_DEF_IDLE_NS	  (300LL * 1000000000LL)
#define TCP_BUF_KEEP_CAP  16384u /* an empty buf larger than this is freed */

/* Out-of-order segment; owned by its tcp_half. */
struct tcp_seg {
	struct tcp_seg *next;
	uint32_t seq;
	uint32_t len;
	uint8_t data[];
};

struct tcp_half {
	struct cap_tcp_dir app;
	uint8_t *buf; /* unconsumed in-order bytes; owned */
	size_t buf_len;
	size_t buf_cap;
	struct tcp_seg *ooo; /* sorted by seq; owned */
	uint32_t ooo_count;
	size_t ooo_bytes;
	int64_t hole_since_ns; /* when the current hole was first seen */
	uint32_t next_seq;
	bool seq_known;
	bool fin;
	bool gap_pending; /* the next callback gets gap=true */
	bool lost_tail;	  /* the last segment was cut by the snap length */
};

/* Canonical key: (a, pa) <= (b, pb). Built with memset so memcmp/hash see no garbage. */
struct tcp_key {
	struct sn_addr a, b;
	uint16_t pa, pb;
};

_Static_assert(sizeof(struct tcp_key) == 38, "struct tcp_key must have no implicit padding");

struct tcp_conn {
	struct tcp_key key;
	struct tcp_half half[2];
	struct tcp_conn *lru_prev; /* more recently used */
	struct tcp_conn *lru_next; /* less recently used */
	int64_t last_ns;
};

struct cap_tcp {
	GHashTable *conns; /* &conn->key -> conn; the table owns nothing, release frees */
	struct tcp_conn *lru_head;
	struct tcp_conn *lru_tail;
	uint32_t conn_count;
	struct cap_tcp_limits lim;
	cap_tcp_data_fn *fn;
	cap_tcp_app_free_fn *app_free;
	void *user;
	struct cap_tcp_stats stats;
};

static inline int32_t tcp_seq_diff(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b);
}

/* Keyed (sn_hash.h): the packets of a capture name the associations, and a table whose buckets
 * they could choose would be walked whole on every lookup. */
static guint tcp_key_hash(gconstpointer p)
{
	return (guint)sn_hash_final(sn_hash_bytes(sn_hash_key(), p, sizeof(struct tcp_key)));
}

static gboolean tcp_key_equal(gconstpointer a, gconstpointer b)
{
	return memcmp(a, b, sizeof(struct tcp_key)) == 0;
}

static void tcp_addr_norm(struct sn_addr *out, const struct sn_addr *in)
{
	out->family = in->family;
	memcpy(out->bytes, in->bytes, in->family == 4 ? 4 : 16);
}

/* Fill @key for @pkt; returns the direction index of the packet's sender. */
static int tcp_key_make(const struct cap_packet *pkt, struct tcp_key *key)
{
	int c = sn_addr_cmp(&pkt->src, &pkt->dst);

	if (c == 0) {
		c = (int)pkt->sport - (int)pkt->dport;
	}
	memset(key, 0, sizeof(*key));
	if (c <= 0) {
		tcp_addr_norm(&key->a, &pkt->src);
		tcp_addr_norm(&key->b, &pkt->dst);
		key->pa = pkt->sport;
		key->pb = pkt->dport;
		return 0;
	}
	tcp_addr_norm(&key->a, &pkt->dst);
	tcp_addr_norm(&key->b, &pkt->src);
	key->pa = pkt->dport;
	key->pb = pkt->sport;
	return 1;
}

/* A packet describing direction @dir of @c, for callbacks not caused by a segment. */
static void tcp_synth_pkt(const struct tcp_conn *c, int dir, struct cap_packet *pkt)
{
	memset(pkt, 0, sizeof(*pkt));
	pkt->ts_ns = c->last_ns;
	pkt->l4 = CAP_L4_TCP;
	pkt->ip_proto = 6;
	pkt->src = dir == 0 ? c->key.a : c->key.b;
	pkt->dst = dir == 0 ? c->key.b : c->key.a;
	pkt->sport = dir == 0 ? c->key.pa : c->key.pb;
	pkt->dport = dir == 0 ? c->key.pb : c->key.pa;
	pkt->tcp_seq = c->half[dir].next_seq;
}

static void tcp_lru_unlink(struct cap_tcp *t, struct tcp_conn *c)
{
	if (c->lru_prev) {
		c->lru_prev->lru_next = c->lru_next;
	} else {
		t->lru_head = c->lru_next;
	}
	if (c->lru_next) {
		c->lru_next->lru_prev = c->lru_prev;
	} else {
		t->lru_tail = c->lru_prev;
	}
	c->lru_prev = NULL;
	c->lru_next = NULL;
}

static void tcp_lru_push_head(struct cap_tcp *t, struct tcp_conn *c)
{
	c->lru_prev = NULL;
	c->lru_next = t->lru_head;
	if (t->lru_head) {
		t->lru_head->lru_prev = c;
	} else {
		t->lru_tail = c;
	}
	t->lru_head = c;
}

/* Run the callback over @data until it stops consuming; returns the bytes consumed. */
static size_t tcp_deliver(struct cap_tcp *t, struct tcp_half *h, const struct cap_packet *pkt,
			  const uint8_t *data, size_t len)
{
	size_t off = 0;
	bool gap = h->gap_pending;

	if (len == 0) {
		return 0;
	}
	h->gap_pending = false;
	while (off < len) {
		size_t n = t->fn(t->user, &h->app, pkt, data + off, len - off, gap);

		gap = false;
		if (n == 0) {
			break;
		}
		off += SN_MIN(n, len - off);
	}
	return off;
}

static void tcp_buf_append(struct tcp_half *h, const uint8_t *data, size_t len)
{
	if (h->buf_len + len > h->buf_cap) {
		size_t cap = h->buf_cap ? h->buf_cap : 1024;

		while (cap < h->buf_len + len) {
			cap *= 2;
		}
		h->buf = sn_xrealloc(h->buf, cap);
		h->buf_cap = cap;
	}
	memcpy(h->buf + h->buf_len, data, len);
	h->buf_len += len;
}

static void tcp_buf_drop(struct tcp_half *h)
{
	h->buf_len = 0;
	if (h->buf_cap > TCP_BUF_KEEP_CAP) {
		free(h->buf);
		h->buf = NULL;
		h->buf_cap = 0;
	}
}

/* Offer buf to the application and keep only what it did not consume. */
static void tcp_buf_deliver(struct cap_tcp *t, struct tcp_half *h, const struct cap_packet *pkt)
{
	size_t n;

	if (h->buf_len == 0) {
		return;
	}
	n = tcp_deliver(t, h, pkt, h->buf, h->buf_len);
	if (n == h->buf_len) {
		tcp_buf_drop(h);
	} else if (n > 0) {
		memmove(h->buf, h->buf + n, h->buf_len - n);
		h->buf_len -= n;
	}
}

/* Append the out-of-order segments that have become contiguous with next_seq to buf. */
static void tcp_ooo_drain(struct tcp_half *h)
{
	while (h->ooo && tcp_seq_diff(h->ooo->seq, h->next_seq) <= 0) {
		struct tcp_seg *s = h->ooo;
		uint32_t old = h->next_seq - s->seq; /* modulo 2^32, as the distance */

		h->ooo = s->next;
		h->ooo_count--;
		h->ooo_bytes -= s->len;
		if (old < s->len) {
			tcp_buf_append(h, s->data + old, s->len - old);
			h->next_seq += s->len - old;
		}
		free(s);
	}
}

/* Discard a buf that the application never consumes (max_dir_bytes). */
static void tcp_buf_bound(struct cap_tcp *t, struct tcp_half *h)
{
	if (h->buf_len > t->lim.max_dir_bytes) {
		t->stats.overflow_bytes += h->buf_len;
		tcp_buf_drop(h);
		h->gap_pending = true;
	}
}

/*
 * Give up on the hole before the first out-of-order segment: the unconsumed bytes before it
 * are discarded, the segments after it become in order and are delivered with gap=true.
 */
static void tcp_half_skip_hole(struct cap_tcp *t, struct tcp_half *h, const struct cap_packet *pkt)
{
	if (!h->ooo) {
		return;
	}
	t->stats.gaps++;
	t->stats.gap_bytes += (uint32_t)tcp_seq_diff(h->ooo->seq, h->next_seq);
	tcp_buf_drop(h);
	h->next_seq = h->ooo->seq;
	h->gap_pending = true;
	tcp_ooo_drain(h);
	tcp_buf_deliver(t, h, pkt);
	tcp_buf_bound(t, h);
	h->hole_since_ns = pkt->ts_ns;
}

/* Copy a segment ahead of next_seq into the sorted out-of-order list. */
static void tcp_ooo_store(struct cap_tcp *t, struct tcp_half *h, const struct cap_packet *pkt,
			  uint32_t seq, const uint8_t *data, uint32_t len)
{
	struct tcp_seg **pp = &h->ooo;
	struct tcp_seg *s;

	while (*pp && tcp_seq_diff((*pp)->seq, seq) < 0) {
		pp = &(*pp)->next;
	}
	if (*pp && (*pp)->seq == seq && (*pp)->len >= len) {
		t->stats.retransmissions++;
		return;
	}
	t->stats.out_of_order++;
	if (!h->ooo) {
		h->hole_since_ns = pkt->ts_ns;
	}
	s = sn_xmalloc(sizeof(*s) + len);
	s->seq = seq;
	s->len = len;
	memcpy(s->data, data, len);
	s->next = *pp;
	*pp = s;
	h->ooo_count++;
	h->ooo_bytes += len;
	while (h->ooo && (h->ooo_count > t->lim.max_ooo_segs ||
			  h->ooo_bytes + h->buf_len > t->lim.max_dir_bytes)) {
		tcp_half_skip_hole(t, h, pkt);
	}
}

/* Process the payload bytes [seq, seq+len) of one direction. */
static void tcp_half_data(struct cap_tcp *t, struct tcp_half *h, const struct cap_packet *pkt,
			  uint32_t seq, const uint8_t *data, uint32_t len)
{
	int32_t off = tcp_seq_diff(seq, h->next_seq);

	if (off < 0) {
		/* modulo 2^32: -off overflows for a distance of exactly 2^31 (fuzz_report) */
		uint32_t old = h->next_seq - seq;

		if (old >= len) {
			t->stats.retransmissions++;
			return;
		}
		data += old;
		len -= old;
		seq = h->next_seq;
		off = 0;
	}
	if (off > 0) {
		if (!h->lost_tail) {
			tcp_ooo_store(t, h, pkt, seq, data, len);
			return;
		}
		/* The bytes before this segment were cut by the snap length: never coming. */
		t->stats.gaps++;
		t->stats.gap_bytes += (uint32_t)off;
		tcp_buf_drop(h);
		h->next_seq = seq;
		h->gap_pending = true;
	}
	h->lost_tail = false;
	h->next_seq += len;
	if (h->buf_len == 0 && !h->ooo) {
		/* Fast path: no copy unless the application leaves a tail. */
		size_t n = tcp_deliver(t, h, pkt, data, len);

		if (n < len) {
			tcp_buf_append(h, data + n, len - n);
			tcp_buf_bound(t, h);
		}
		return;
	}
	tcp_buf_append(h, data, len);
	tcp_ooo_drain(h);
	tcp_buf_deliver(t, h, pkt);
	tcp_buf_bound(t, h);
}

/* Skip every remaining hole so the held out-of-order bytes reach the application. */
static void tcp_half_finish(struct cap_tcp *t, struct tcp_half *h, const struct cap_packet *pkt)
{
	while (h->ooo) {
		tcp_half_skip_hole(t, h, pkt);
	}
}

static void tcp_half_cleanup(struct cap_tcp *t, struct tcp_half *h)
{
	struct tcp_seg *s = h->ooo;

	while (s) {
		struct tcp_seg *next = s->next;

		free(s);
		s = next;
	}
	free(h->buf);
	if (h->app.app_ptr && t->app_free) {
		t->app_free(h->app.app_ptr);
	}
	memset(h, 0, sizeof(*h));
}

static void tcp_conn_release(struct cap_tcp *t, struct tcp_conn *c, bool deliver)
{
	int i;

	if (deliver) {
		for (i = 0; i < 2; i++) {
			struct cap_packet pkt;

			if (c->half[i].ooo) {
				tcp_synth_pkt(c, i, &pkt);
				tcp_half_finish(t, &c->half[i], &pkt);
			}
		}
	}
	g_hash_table_remove(t->conns, &c->key);
	tcp_lru_unlink(t, c);
	t->conn_count--;
	for (i = 0; i < 2; i++) {
		tcp_half_cleanup(t, &c->half[i]);
	}
	free(c);
}

/* Skip the holes of @c open for longer than hole_timeout_ns; @pkt came from direction @dir. */
static void tcp_check_holes(struct cap_tcp *t, struct tcp_conn *c, int dir,
			    const struct cap_packet *pkt)
{
	int i;

	for (i = 0; i < 2; i++) {
		struct tcp_half *h = &c->half[i];
		struct cap_packet other;

		if (!h->ooo || pkt->ts_ns - h->hole_since_ns <= t->lim.hole_timeout_ns) {
			continue;
		}
		if (i == dir) {
			tcp_half_skip_hole(t, h, pkt);
		} else {
			tcp_synth_pkt(c, i, &other);
			tcp_half_skip_hole(t, h, &other);
		}
	}
}

static struct tcp_conn *tcp_conn_get(struct cap_tcp *t, const struct tcp_key *key, bool create)
{
	struct tcp_conn *c = g_hash_table_lookup(t->conns, key);

	if (c || !create) {
		return c;
	}
	if (t->conn_count >= t->lim.max_conns && t->lru_tail) {
		t->stats.evicted++;
		tcp_conn_release(t, t->lru_tail, true);
	}
	c = sn_xcalloc(1, sizeof(*c));
	memcpy(&c->key, key, sizeof(*key));
	g_hash_table_insert(t->conns, &c->key, c);
	tcp_lru_push_head(t, c);
	t->conn_count++;
	t->stats.conns++;
	return c;
}

struct cap_tcp *cap_tcp_new(const struct cap_tcp_limits *lim, cap_tcp_data_fn *fn,
			    cap_tcp_app_free_fn *app_free, void *user)
{
	struct cap_tcp *t = sn_xcalloc(1, sizeof(*t));

	if (lim) {
		t->lim = *lim;
	}
	if (t->lim.max_conns == 0) {
		t->lim.max_conns = TCP_DEF_MAX_CONNS;
	}
	if (t->lim.max_dir_bytes == 0) {
		t->lim.max_dir_bytes = TCP_DEF_MAX_DIR;
	}
	if (t->lim.max_ooo_segs == 0) {
		t->lim.max_ooo_segs = TCP_DEF_MAX_OOO;
	}
	if (t->lim.hole_timeout_ns <= 0) {
		t->lim.hole_timeout_ns = TCP_DEF_HOLE_NS;
	}
	if (t->lim.idle_timeout_ns <= 0) {
		t->lim.idle_timeout_ns = TCP_DEF_IDLE_NS;
	}
	t->fn = fn;
	t->app_free = app_free;
	t->user = user;
	t->conns = g_hash_table_new(tcp_key_hash, tcp_key_equal);
	return t;
}

void cap_tcp_segment(struct cap_tcp *t, const struct cap_packet *pkt)
{
	struct tcp_key key;
	struct tcp_conn *c;
	struct tcp_half *h;
	uint32_t seq = pkt->tcp_seq;
	uint32_t len = pkt->payload ? pkt->payload_len : 0;
	bool syn = (pkt->tcp_flags & CAP_TCP_SYN) != 0;
	int dir;

	if (pkt->l4 != CAP_L4_TCP) {
		return;
	}
	dir = tcp_key_make(pkt, &key);
	c = tcp_conn_get(t, &key, false);
	/*
	 * Idle expiry runs on the connection's own segments, not on other traffic: what a
	 * connection delivers, and when, must not depend on which other connections share this
	 * reassembler (a worker sees only its host pairs). Connections that never send again are
	 * released by the max_conns bound or by cap_tcp_flush().
	 */
	if (c && pkt->ts_ns - c->last_ns > t->lim.idle_timeout_ns) {
		tcp_conn_release(t, c, true);
		c = NULL;
	}
	if (c && syn && !(pkt->tcp_flags & CAP_TCP_ACK) && c->half[dir].seq_known &&
	    seq + 1 != c->half[dir].next_seq) {
		/* A new SYN with another ISN: the ports were reused for a new connection. */
		tcp_conn_release(t, c, true);
		c = NULL;
	}
	if (!c) {
		if ((!syn && len == 0) || (pkt->tcp_flags & CAP_TCP_RST)) {
			return;
		}
		c = tcp_conn_get(t, &key, true);
	} else if (c != t->lru_head) {
		tcp_lru_unlink(t, c);
		tcp_lru_push_head(t, c);
	}
	c->last_ns = pkt->ts_ns;
	h = &c->half[dir];
	if (pkt->tcp_flags & CAP_TCP_RST) {
		tcp_conn_release(t, c, true);
		return;
	}
	if (syn) {
		seq++;
		if (!h->seq_known) {
			h->next_seq = seq;
			h->seq_known = true;
		}
	}
	if (len > 0) {
		t->stats.segments++;
		if (!h->seq_known) {
			h->next_seq = seq;
			h->seq_known = true;
		}
		tcp_half_data(t, h, pkt, seq, pkt->payload, len);
	}
	if (pkt->truncated && h->seq_known) {
		h->lost_tail = true;
	}
	tcp_check_holes(t, c, dir, pkt);
	if (pkt->tcp_flags & CAP_TCP_FIN) {
		h->fin = true;
		if (c->half[!dir].fin) {
			tcp_conn_release(t, c, true);
		}
	}
}

void cap_tcp_flush(struct cap_tcp *t)
{
	while (t->lru_tail) {
		tcp_conn_release(t, t->lru_tail, true);
	}
}

const struct cap_tcp_stats *cap_tcp_stats(const struct cap_tcp *t)
{
	return &t->stats;
}

void cap_tcp_free(struct cap_tcp *t)
{
	if (!t) {
		return;
	}
	while (t->lru_tail) {
		tcp_conn_release(t, t->lru_tail, false);
	}
	g_hash_table_destroy(t->conns);
	free(t);
}
