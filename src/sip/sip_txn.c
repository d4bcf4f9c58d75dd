/*
 * sip_txn.c - SIP transaction matching and state for observers and, later, the proxy.
 *
 * What it does: matches every message to a transaction by the rules of RFC 3261 §17.1.3
 * (responses: top-Via branch + sent-by + CSeq method) and §17.2.3 (requests: branch + sent-by
 * + method, ACK and CANCEL handled apart), with the RFC 2543 fallback when the branch lacks the
 * magic cookie; the observer's "hop" is part of every key. It then tells the caller what the
 * message was (enum sip_txn_event) and advances the transaction's state.
 * What it does not do: send anything, run timers (see below), or look at dialogs (that is
 * sip_dialog.c, which consumes the events made here).
 *
 * Structures: struct sip_txn_table is a chained hash table (power-of-two buckets, at most one
 * transaction per bucket on average) plus two LRU lists: "pending" (no final response yet)
 * and "done". Each transaction is one heap block, struct txn_node, holding the public struct
 * sip_txn, the bookkeeping below and, inline after it, copies of the key bytes.
 *
 * State machines (an observer sees client and server, so one machine per transaction kind
 * describes both; every transition is made in the function named on its right):
 *
 *   INVITE (RFC 3261 §17.1.1, §17.2.1)
 *     (none)     --INVITE-->   CALLING      txn_node_new()
 *     CALLING    --1xx-->      PROCEEDING   txn_invite_step()
 *     CALLING    --300-699-->  COMPLETED    txn_invite_step()
 *     PROCEEDING --300-699-->  COMPLETED    txn_invite_step()
 *     CALLING    --2xx-->      TERMINATED   txn_invite_step()
 *     PROCEEDING --2xx-->      TERMINATED   txn_invite_step()
 *     COMPLETED  --ACK-->      CONFIRMED    txn_invite_step()
 *
 *   non-INVITE, CANCEL included (RFC 3261 §17.1.2, §17.2.2)
 *     (none)     --request-->  TRYING       txn_node_new()
 *     TRYING     --1xx-->      PROCEEDING   txn_noninvite_step()
 *     TRYING     --200-699-->  COMPLETED    txn_noninvite_step()
 *     PROCEEDING --200-699-->  COMPLETED    txn_noninvite_step()
 *
 * A stray response creates an "orphan" transaction in CALLING/TRYING and then steps it, so
 * retransmissions of strays are still recognised. Timers: the proxy will add inputs
 * TXN_IN_TIMER_A/B/D/E/F/K (client) and G/H/I/J (server) to enum txn_input and handle them in
 * the two step functions (e.g. CALLING --Timer B--> TERMINATED, COMPLETED --Timer D-->
 * TERMINATED); nothing else has to change. An observer never terminates a transaction by
 * timer: txn expiry below only frees memory.
 *
 * Expiry: a transaction is freed when it has been idle (by message timestamps) longer than
 * linger_ns (done) or pending_ns (pending), or when the table is full (least recently used of
 * the done list first, then of the pending list). on_free is called first.
 *
 * Response retransmission: the (status, To tag) pairs seen for a transaction are remembered
 * as (status, 64-bit keyed hash of the tag, sn_hash.h), TXN_RESP_SEEN of them; past that the
 * oldest is forgotten. A hash collision between two To tags of one transaction is what it would
 * take to misreport a retransmission.
 *
 * Ownership: the table owns the nodes; slices in struct sip_txn point into the node.
 * Thread: a table belongs to one thread; no locks, no global state.
 */
#include "config.h"

#include "sipnab/sip_txn.h"

#include <stdlib.h>
#include <string.h>

#include "sipnab/sn_hash.h"

#define TXN_RESP_SEEN	    8
#define TXN_MIN_BUCKETS	    16u
#define TXN_PENDING_DEFAULT (600LL * 1000 * 1000 * 1000)

/* Inputs of the state machines. Timer inputs will be added here (see the file comment). */
enum txn_input {
	TXN_IN_1XX,
	TXN_IN_2XX,
	TXN_IN_ERR, /* 300-699 */
	TXN_IN_ACK,
};

enum txn_kind {
	TXN_K_REQUEST,
	TXN_K_ACK,
	TXN_K_RESPONSE,
};

enum txn_list_id {
	TXN_L_PENDING,
	TXN_L_DONE,
	TXN_L__COUNT,
};

struct txn_resp {
	uint64_t tag_hash;
	uint16_t status;
};

struct txn_node {
	struct sip_txn pub;    /* first member: a struct sip_txn * is a struct txn_node * */
	struct txn_node *next; /* hash chain */
	struct txn_node *lru_prev;
	struct txn_node *lru_next;
	enum txn_list_id list;
	uint64_t hash;
	uint32_t hop_key;	  /* hop without SIP_TXN_HOP_DIR */
	struct sn_slice sent_by;  /* compared ignoring case */
	struct sn_slice from_tag; /* RFC 2543 transactions only */
	struct sn_slice to_tag;	  /* of the request; RFC 2543 transactions only */
	struct sn_slice ruri;	  /* RFC 2543 transactions only */
	struct sn_slice top_via;  /* RFC 2543 transactions only */
	uint64_t final_tag_hash;  /* To tag of the first final response */
	struct txn_resp resp[TXN_RESP_SEEN];
	uint8_t resp_count;
	uint8_t resp_next;
	uint8_t bytes[]; /* the copies the slices point to */
};

struct txn_lru {
	struct txn_node *head; /* most recently used */
	struct txn_node *tail;
};

struct sip_txn_table {
	struct txn_node **buckets;
	uint32_t mask;
	uint32_t count;
	uint32_t capacity;
	int64_t limit_ns[TXN_L__COUNT]; /* idle limit per list; < 0 = none */
	struct txn_lru lru[TXN_L__COUNT];
	uint64_t evicted;
	sip_txn_free_fn *on_free;
	void *cb_ctx;
};

/* Key of a message for one lookup. */
struct txn_key {
	uint64_t hash;
	uint32_t hop_key;
	enum sip_method mclass; /* INVITE for ACK */
	struct sn_slice mname;	/* for SIP_METHOD_UNKNOWN */
	bool rfc2543;
};

static const char *const event_names[] = {
	[SIP_TXN_EV_NEW_REQUEST] = "NEW_REQUEST",
	[SIP_TXN_EV_REQUEST_RETRANSMISSION] = "REQUEST_RETRANSMISSION",
	[SIP_TXN_EV_ACK_NON2XX] = "ACK_NON2XX",
	[SIP_TXN_EV_ACK_2XX] = "ACK_2XX",
	[SIP_TXN_EV_CANCEL] = "CANCEL",
	[SIP_TXN_EV_PROVISIONAL] = "PROVISIONAL",
	[SIP_TXN_EV_FINAL] = "FINAL",
	[SIP_TXN_EV_RESPONSE_RETRANSMISSION] = "RESPONSE_RETRANSMISSION",
	[SIP_TXN_EV_STRAY_RESPONSE] = "STRAY_RESPONSE",
};

static const char *const state_names[] = {
	[SIP_TXN_ST_CALLING] = "CALLING",	[SIP_TXN_ST_TRYING] = "TRYING",
	[SIP_TXN_ST_PROCEEDING] = "PROCEEDING", [SIP_TXN_ST_COMPLETED] = "COMPLETED",
	[SIP_TXN_ST_CONFIRMED] = "CONFIRMED",	[SIP_TXN_ST_TERMINATED] = "TERMINATED",
};

const char *sip_txn_event_name(enum sip_txn_event ev)
{
	if ((size_t)ev >= SN_ARRAY_SIZE(event_names)) {
		return "?";
	}
	return event_names[ev];
}

const char *sip_txn_state_name(enum sip_txn_state st)
{
	if ((size_t)st >= SN_ARRAY_SIZE(state_names)) {
		return "?";
	}
	return state_names[st];
}

/* ---- fact records ---------------------------------------------------------------------- */

bool sip_txn_branch_is_rfc3261(struct sn_slice branch)
{
	return branch.len >= 7 && memcmp(branch.ptr, "z9hG4bK", 7) == 0;
}

static bool is_lws(uint8_t c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/* host [ SWS ":" SWS port ] as written, starting at the host slice of the parsed Via. */
static struct sn_slice via_sent_by(const struct sip_via *v)
{
	struct sn_slice s = v->host;

	if (!v->has_port || !s.ptr) {
		return s;
	}
	/* The port follows the host in the same header value; stop at the first non-digit. */
	const uint8_t *p = sn_slice_end(s);
	const uint8_t *lim = p + 16;
	while (p < lim && is_lws(*p)) {
		p++;
	}
	if (p >= lim || *p != ':') {
		return s;
	}
	p++;
	while (p < lim && is_lws(*p)) {
		p++;
	}
	while (p < lim && *p >= '0' && *p <= '9') {
		p++;
	}
	return sn_slice_make(s.ptr, (size_t)(p - s.ptr));
}

void sip_txn_msg_from(const struct sip_msg *m, struct sip_txn_msg *out, int64_t ts_ns, uint32_t hop)
{
	memset(out, 0, sizeof(*out));
	out->is_request = m->is_request;
	if (m->is_request) {
		out->method = m->method;
		out->method_name = m->method_name;
		out->ruri = m->ruri;
	} else {
		out->method = m->cseq_method;
		out->method_name = m->cseq_method_name;
		out->status = m->status_code;
	}
	out->call_id = m->call_id;
	out->from_tag = m->from_tag;
	out->to_tag = m->to_tag;
	out->cseq = m->cseq;
	if (m->via_count > 0) {
		struct sip_hdr_iter it;

		out->branch = m->via.branch;
		out->sent_by = via_sent_by(&m->via);
		sip_hdr_iter_init(&it, m, SIP_HDR_VIA);
		if (!sip_hdr_iter_next(&it, &out->top_via)) {
			out->top_via = SN_SLICE_NULL;
		}
	}
	out->ts_ns = ts_ns;
	out->hop = hop;
}

/* ---- hashing --------------------------------------------------------------------------- */

/*
 * Keys are hashed eight bytes at a time with the process's secret (sn_hash.h: a capture must
 * not be able to choose keys that share a bucket), the length as the field separator; sent-by
 * is lowered eight ASCII letters at a time, as it compares without case. Byte-at-a-time FNV
 * was 1.4 % of a run over a 535,000-packet capture. The hash only picks a bucket and rejects
 * unequal keys early (and stands for a To tag, as before): equal fields always hash alike.
 */

/* The eight bytes of @p w with A-Z made a-z (bytes >= 0x80 unchanged). */
static uint64_t ascii_lower8(uint64_t w)
{
	uint64_t heptets = w & 0x7f7f7f7f7f7f7f7fULL;
	uint64_t ge_a = heptets + 0x3f3f3f3f3f3f3f3fULL; /* high bit: byte >= 'A' */
	uint64_t gt_z = heptets + 0x2525252525252525ULL; /* high bit: byte > 'Z' */
	uint64_t upper = (ge_a ^ gt_z) & ~w & 0x8080808080808080ULL;

	return w | (upper >> 2);
}

/* sn_hash_bytes() of @p s with A-Z taken as a-z. */
static uint64_t hash_lower(uint64_t h, struct sn_slice s)
{
	const uint8_t *p = s.ptr;
	uint32_t n = s.len;
	uint64_t w;

	for (; n >= 8; p += 8, n -= 8) {
		memcpy(&w, p, 8);
		h = sn_hash_step(h, ascii_lower8(w));
	}
	if (n) {
		w = 0;
		memcpy(&w, p, n);
		h = sn_hash_step(h, ascii_lower8(w));
	}
	return sn_hash_step(h, (uint64_t)s.len | (1ULL << 63)); /* as sn_hash_bytes() ends */
}

static uint64_t hash_bytes(uint64_t h, struct sn_slice s)
{
	return sn_hash_bytes(h, s.ptr, s.len);
}

static uint64_t hash_u32(uint64_t h, uint32_t v)
{
	return sn_hash_step(h, v);
}

static uint64_t tag_hash(struct sn_slice tag)
{
	return sn_hash_final(hash_bytes(sn_hash_key(), tag));
}

static void key_make(const struct sip_txn_msg *m, enum sip_method mclass, struct txn_key *k)
{
	uint64_t h = sn_hash_key();

	k->hop_key = m->hop & ~SIP_TXN_HOP_DIR;
	k->mclass = mclass;
	k->mname = mclass == SIP_METHOD_UNKNOWN ? m->method_name : SN_SLICE_NULL;
	k->rfc2543 = !sip_txn_branch_is_rfc3261(m->branch);
	h = hash_u32(h, k->hop_key);
	h = hash_u32(h, (uint32_t)mclass);
	h = hash_bytes(h, k->mname);
	h = hash_lower(h, m->sent_by);
	if (k->rfc2543) {
		h = hash_bytes(h, m->call_id);
		h = hash_bytes(h, m->from_tag);
		h = hash_u32(h, m->cseq);
	} else {
		h = hash_bytes(h, m->branch);
	}
	/* final mix: the low bits that pick the bucket depend on every byte */
	k->hash = sn_hash_final(h);
}

/* ---- lists and buckets ----------------------------------------------------------------- */

static enum txn_list_id state_list(enum sip_txn_state st)
{
	switch (st) {
	case SIP_TXN_ST_CALLING:
	case SIP_TXN_ST_TRYING:
	case SIP_TXN_ST_PROCEEDING:
		return TXN_L_PENDING;
	case SIP_TXN_ST_COMPLETED:
	case SIP_TXN_ST_CONFIRMED:
	case SIP_TXN_ST_TERMINATED:
		break;
	}
	return TXN_L_DONE;
}

static void lru_unlink(struct sip_txn_table *t, struct txn_node *n)
{
	struct txn_lru *l = &t->lru[n->list];

	if (n->lru_prev) {
		n->lru_prev->lru_next = n->lru_next;
	} else {
		l->head = n->lru_next;
	}
	if (n->lru_next) {
		n->lru_next->lru_prev = n->lru_prev;
	} else {
		l->tail = n->lru_prev;
	}
	n->lru_prev = NULL;
	n->lru_next = NULL;
}

static void lru_push(struct sip_txn_table *t, struct txn_node *n)
{
	struct txn_lru *l;

	n->list = state_list(n->pub.state);
	l = &t->lru[n->list];
	n->lru_prev = NULL;
	n->lru_next = l->head;
	if (l->head) {
		l->head->lru_prev = n;
	} else {
		l->tail = n;
	}
	l->head = n;
}

/* Mark @p n used at @p ts_ns: most recent of the list its state belongs to. */
static void txn_touch(struct sip_txn_table *t, struct txn_node *n, int64_t ts_ns)
{
	lru_unlink(t, n);
	lru_push(t, n);
	if (ts_ns > n->pub.last_ns) {
		n->pub.last_ns = ts_ns;
	}
}

static void txn_drop(struct sip_txn_table *t, struct txn_node *n)
{
	struct txn_node **pp = &t->buckets[n->hash & t->mask];

	while (*pp != n) {
		pp = &(*pp)->next;
	}
	*pp = n->next;
	lru_unlink(t, n);
	if (n->pub.cancel) {
		n->pub.cancel->cancel = NULL;
		n->pub.cancel = NULL;
	}
	if (t->on_free) {
		t->on_free(&n->pub, t->cb_ctx);
	}
	t->count--;
	free(n);
}

uint32_t sip_txn_table_expire(struct sip_txn_table *t, int64_t now_ns)
{
	uint32_t dropped = 0;

	for (int l = 0; l < TXN_L__COUNT; l++) {
		if (t->limit_ns[l] < 0) {
			continue;
		}
		while (t->lru[l].tail && now_ns - t->lru[l].tail->pub.last_ns > t->limit_ns[l]) {
			txn_drop(t, t->lru[l].tail);
			dropped++;
		}
	}
	return dropped;
}

/* Make room for one more transaction: the LRU finished one, else the LRU pending one. */
static void txn_make_room(struct sip_txn_table *t)
{
	while (t->count >= t->capacity) {
		struct txn_node *victim = t->lru[TXN_L_DONE].tail;
		if (!victim) {
			victim = t->lru[TXN_L_PENDING].tail;
		}
		txn_drop(t, victim);
		t->evicted++;
	}
}

struct sip_txn_table *sip_txn_table_new(const struct sip_txn_table_cfg *cfg)
{
	struct sip_txn_table *t = sn_xcalloc(1, sizeof(*t));
	uint32_t nb = TXN_MIN_BUCKETS;

	t->capacity = cfg->capacity ? cfg->capacity : 1;
	while (nb < t->capacity && nb < (1u << 31)) {
		nb <<= 1;
	}
	t->buckets = sn_xcalloc(nb, sizeof(*t->buckets));
	t->mask = nb - 1;
	t->limit_ns[TXN_L_DONE] = cfg->linger_ns ? cfg->linger_ns : SIP_TXN_64T1_NS;
	t->limit_ns[TXN_L_PENDING] = cfg->pending_ns ? cfg->pending_ns : TXN_PENDING_DEFAULT;
	t->on_free = cfg->on_free;
	t->cb_ctx = cfg->cb_ctx;
	return t;
}

void sip_txn_table_free(struct sip_txn_table *t)
{
	if (!t) {
		return;
	}
	for (int l = 0; l < TXN_L__COUNT; l++) {
		while (t->lru[l].tail) {
			txn_drop(t, t->lru[l].tail);
		}
	}
	free(t->buckets);
	free(t);
}

uint32_t sip_txn_table_count(const struct sip_txn_table *t)
{
	return t->count;
}

uint64_t sip_txn_table_evicted_count(const struct sip_txn_table *t)
{
	return t->evicted;
}

/* ---- matching -------------------------------------------------------------------------- */

static bool txn_matches(const struct txn_node *n, const struct txn_key *k,
			const struct sip_txn_msg *m, enum txn_kind kind)
{
	if (n->hash != k->hash || n->hop_key != k->hop_key || n->pub.rfc2543 != k->rfc2543 ||
	    n->pub.method != k->mclass) {
		return false;
	}
	if (k->mclass == SIP_METHOD_UNKNOWN && !sn_slice_eq(n->pub.method_name, k->mname)) {
		return false;
	}
	if (!sn_slice_caseeq(n->sent_by, m->sent_by)) {
		return false;
	}
	if (!k->rfc2543) {
		return sn_slice_eq(n->pub.branch, m->branch);
	}
	/* RFC 3261 §17.2.3, last paragraphs; §17.1.3 does not apply to RFC 2543 peers, so
	 * responses use Call-ID, CSeq, From tag and top Via (its sent-by: the server adds
	 * received/rport to the Via it returns, §18.2.1). */
	if (n->pub.cseq != m->cseq || !sn_slice_eq(n->pub.call_id, m->call_id) ||
	    !sn_slice_eq(n->from_tag, m->from_tag)) {
		return false;
	}
	if (kind == TXN_K_RESPONSE || n->pub.orphan) {
		return true;
	}
	if (!sn_slice_eq(n->ruri, m->ruri) || !sn_slice_eq(n->top_via, m->top_via)) {
		return false;
	}
	if (kind == TXN_K_ACK) {
		/* The ACK's To tag is the one of the response it acknowledges. */
		return !n->pub.final_status || n->final_tag_hash == tag_hash(m->to_tag);
	}
	return sn_slice_eq(n->to_tag, m->to_tag);
}

static struct txn_node *txn_find(struct sip_txn_table *t, const struct txn_key *k,
				 const struct sip_txn_msg *m, enum txn_kind kind)
{
	for (struct txn_node *n = t->buckets[k->hash & t->mask]; n; n = n->next) {
		if (txn_matches(n, k, m, kind)) {
			return n;
		}
	}
	return NULL;
}

/* Copy @p s into the node's byte area at *@p p. */
static struct sn_slice node_copy(uint8_t **p, struct sn_slice s)
{
	struct sn_slice out = {*p, s.len};

	if (s.len) {
		memcpy(*p, s.ptr, s.len);
	}
	*p += s.len;
	return out;
}

/* A new transaction for @p m (orphan when @p m is a response), in CALLING or TRYING. */
static struct txn_node *txn_node_new(struct sip_txn_table *t, const struct txn_key *k,
				     const struct sip_txn_msg *m)
{
	size_t len = (size_t)m->method_name.len + m->call_id.len + m->sent_by.len;
	struct txn_node *n;
	uint8_t *p;

	if (k->rfc2543) {
		len += (size_t)m->from_tag.len + m->to_tag.len + m->ruri.len + m->top_via.len;
	} else {
		len += m->branch.len;
	}
	txn_make_room(t);
	n = sn_xcalloc(1, sizeof(*n) + len);
	p = n->bytes;
	n->pub.method = k->mclass;
	n->pub.method_name = node_copy(&p, m->method_name);
	n->pub.state = k->mclass == SIP_METHOD_INVITE ? SIP_TXN_ST_CALLING : SIP_TXN_ST_TRYING;
	n->pub.hop = m->hop;
	n->pub.cseq = m->cseq;
	n->pub.call_id = node_copy(&p, m->call_id);
	n->pub.rfc2543 = k->rfc2543;
	n->pub.orphan = !m->is_request;
	n->pub.last_ns = m->ts_ns;
	n->sent_by = node_copy(&p, m->sent_by);
	if (k->rfc2543) {
		n->from_tag = node_copy(&p, m->from_tag);
		if (m->is_request) {
			n->to_tag = node_copy(&p, m->to_tag);
			n->ruri = node_copy(&p, m->ruri);
			n->top_via = node_copy(&p, m->top_via);
		}
	} else {
		n->pub.branch = node_copy(&p, m->branch);
	}
	if (m->is_request) {
		n->pub.first_request_ns = m->ts_ns;
		n->pub.request_count = 1;
	}
	n->hash = k->hash;
	n->hop_key = k->hop_key;
	n->next = t->buckets[k->hash & t->mask];
	t->buckets[k->hash & t->mask] = n;
	lru_push(t, n);
	t->count++;
	return n;
}

/* ---- state machines -------------------------------------------------------------------- */

/* INVITE transaction (RFC 3261 §17.1.1.2, §17.2.1), observer's view. */
static void txn_invite_step(struct sip_txn *x, enum txn_input in)
{
	switch (x->state) {
	case SIP_TXN_ST_CALLING:
	case SIP_TXN_ST_PROCEEDING:
		if (in == TXN_IN_1XX) {
			x->state = SIP_TXN_ST_PROCEEDING;
		} else if (in == TXN_IN_2XX) {
			x->state = SIP_TXN_ST_TERMINATED;
		} else if (in == TXN_IN_ERR) {
			x->state = SIP_TXN_ST_COMPLETED;
		}
		break;
	case SIP_TXN_ST_COMPLETED:
		if (in == TXN_IN_ACK) {
			x->state = SIP_TXN_ST_CONFIRMED;
		}
		break;
	case SIP_TXN_ST_TRYING:
	case SIP_TXN_ST_CONFIRMED:
	case SIP_TXN_ST_TERMINATED:
		break;
	}
}

/* Non-INVITE transaction (RFC 3261 §17.1.2.2, §17.2.2), observer's view. */
static void txn_noninvite_step(struct sip_txn *x, enum txn_input in)
{
	switch (x->state) {
	case SIP_TXN_ST_TRYING:
	case SIP_TXN_ST_PROCEEDING:
		if (in == TXN_IN_1XX) {
			x->state = SIP_TXN_ST_PROCEEDING;
		} else if (in == TXN_IN_2XX || in == TXN_IN_ERR) {
			x->state = SIP_TXN_ST_COMPLETED;
		}
		break;
	case SIP_TXN_ST_CALLING:
	case SIP_TXN_ST_COMPLETED:
	case SIP_TXN_ST_CONFIRMED:
	case SIP_TXN_ST_TERMINATED:
		break;
	}
}

static void txn_step(struct sip_txn *x, enum txn_input in)
{
	if (x->method == SIP_METHOD_INVITE) {
		txn_invite_step(x, in);
	} else {
		txn_noninvite_step(x, in);
	}
}

/* ---- observe --------------------------------------------------------------------------- */

static enum sn_status observe_request(struct sip_txn_table *t, const struct sip_txn_msg *m,
				      struct sip_txn **txn, enum sip_txn_event *ev)
{
	struct txn_key k;
	struct txn_node *n;

	if (m->method == SIP_METHOD_ACK) {
		key_make(m, SIP_METHOD_INVITE, &k);
		n = txn_find(t, &k, m, TXN_K_ACK);
		if (!n || (n->pub.final_status >= 200 && n->pub.final_status < 300)) {
			/* §17.1.1.3: the ACK for a 2xx is a transaction of its own, which the
			 * observer does not track; an ACK whose INVITE is unknown is one too. */
			*txn = NULL;
			*ev = SIP_TXN_EV_ACK_2XX;
			return SN_OK;
		}
		n->pub.ack_count++;
		txn_step(&n->pub, TXN_IN_ACK);
		txn_touch(t, n, m->ts_ns);
		*txn = &n->pub;
		*ev = SIP_TXN_EV_ACK_NON2XX;
		return SN_OK;
	}

	key_make(m, m->method, &k);
	n = txn_find(t, &k, m, TXN_K_REQUEST);
	if (n && n->pub.request_count) {
		n->pub.request_count++;
		txn_touch(t, n, m->ts_ns);
		*txn = &n->pub;
		*ev = SIP_TXN_EV_REQUEST_RETRANSMISSION;
		return SN_OK;
	}
	if (n) {
		/* Request of an orphan, seen after its response (capture reordering). */
		n->pub.request_count = 1;
		n->pub.first_request_ns = m->ts_ns;
		txn_touch(t, n, m->ts_ns);
	} else {
		n = txn_node_new(t, &k, m);
	}
	*txn = &n->pub;
	*ev = SIP_TXN_EV_NEW_REQUEST;
	if (m->method == SIP_METHOD_CANCEL) {
		/* §9.2: the cancelled INVITE matches like the CANCEL, except for the method. */
		struct txn_key ik;
		struct txn_node *inv;

		*ev = SIP_TXN_EV_CANCEL;
		key_make(m, SIP_METHOD_INVITE, &ik);
		inv = txn_find(t, &ik, m, TXN_K_REQUEST);
		if (inv && !inv->pub.cancel && !n->pub.cancel) {
			inv->pub.cancel = &n->pub;
			n->pub.cancel = &inv->pub;
		}
	}
	return SN_OK;
}

/* True when (status, To tag) was seen before; otherwise remember it. */
static bool resp_seen(struct txn_node *n, uint16_t status, uint64_t th)
{
	for (uint8_t i = 0; i < n->resp_count; i++) {
		if (n->resp[i].status == status && n->resp[i].tag_hash == th) {
			return true;
		}
	}
	n->resp[n->resp_next].status = status;
	n->resp[n->resp_next].tag_hash = th;
	n->resp_next = (uint8_t)((n->resp_next + 1) % TXN_RESP_SEEN);
	if (n->resp_count < TXN_RESP_SEEN) {
		n->resp_count++;
	}
	return false;
}

static enum sn_status observe_response(struct sip_txn_table *t, const struct sip_txn_msg *m,
				       struct sip_txn **txn, enum sip_txn_event *ev)
{
	struct txn_key k;
	struct txn_node *n;
	uint64_t th = tag_hash(m->to_tag);
	bool stray = false;

	key_make(m, m->method, &k);
	n = txn_find(t, &k, m, TXN_K_RESPONSE);
	if (!n) {
		n = txn_node_new(t, &k, m);
		stray = true;
	}
	*txn = &n->pub;
	n->pub.response_count++;
	if (resp_seen(n, m->status, th)) {
		n->pub.response_retransmission_count++;
		txn_touch(t, n, m->ts_ns);
		*ev = SIP_TXN_EV_RESPONSE_RETRANSMISSION;
		return SN_OK;
	}
	if (m->status < 200) {
		if (!n->pub.first_provisional_ns) {
			n->pub.first_provisional_ns = m->ts_ns;
		}
		txn_step(&n->pub, TXN_IN_1XX);
		*ev = SIP_TXN_EV_PROVISIONAL;
	} else {
		if (!n->pub.final_status) {
			n->pub.final_status = m->status;
			n->pub.final_ns = m->ts_ns;
			n->final_tag_hash = th;
		}
		txn_step(&n->pub, m->status < 300 ? TXN_IN_2XX : TXN_IN_ERR);
		*ev = SIP_TXN_EV_FINAL;
	}
	if (stray) {
		*ev = SIP_TXN_EV_STRAY_RESPONSE;
	}
	txn_touch(t, n, m->ts_ns);
	return SN_OK;
}

enum sn_status sip_txn_table_observe(struct sip_txn_table *t, const struct sip_txn_msg *m,
				     struct sip_txn **txn, enum sip_txn_event *ev)
{
	*txn = NULL;
	if (!m->is_request && (m->status < 100 || m->status > 699)) {
		return SN_EPARSE;
	}
	if (m->method == SIP_METHOD_UNKNOWN && !m->method_name.len) {
		return SN_EPARSE;
	}
	if (!m->is_request && m->method == SIP_METHOD_ACK) {
		return SN_EPARSE; /* ACK is never answered (§17.1.1.3) */
	}
	sip_txn_table_expire(t, m->ts_ns);
	if (m->is_request) {
		return observe_request(t, m, txn, ev);
	}
	return observe_response(t, m, txn, ev);
}
