/*
 * eng_call.c - calls from the time-sorted SIP messages.
 *
 * A leg is every message sharing a Call-ID (all dialogs and hops of it). Legs are joined into
 * one call when a message of one carries the other's Call-ID in X-Call-ID or X-CID (B2BUA
 * correlation headers); the earliest leg names the call. Each leg runs through the shared SIP
 * engine: sip_txn_table (RFC 3261 §17 matching, retransmissions) and sip_dialog_set (dialogs,
 * forking, call state), the same code the proxy uses. Non-INVITE exchanges (REGISTER, OPTIONS,
 * MESSAGE, SUBSCRIBE/NOTIFY ...) become calls of their own kind whose state follows the final
 * response of their last transaction.
 *
 * Determinism: legs are numbered in order of first message and processed in message order; the
 * calls are sorted by (first message time, Call-ID). Ownership: arrays are heap-owned by the
 * result (freed by eng_result_free()); strings point into the workers' keep arenas.
 */
#include "config.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <glib.h>

#include "sipnab/eng_result.h"
#include "sipnab/sip_dialog.h"
#include "sipnab/sip_txn.h"
#include "sipnab/sn_hash.h"
#include "sipnab/sn_pool.h"

#include "eng_int.h"

struct leg {
	const char *call_id;
	const char *caller_tag; /* From tag of the message that created the leg */
	uint32_t *msgs;    /* indexes into r->msgs, in time order (a stretch of one array
			    * shared by all legs) */
	uint32_t n;
	uint32_t parent;   /* union-find */
	/* analysis */
	struct sip_dialog_summary sum;
	bool has_invite;
	uint32_t retrans;
	const struct eng_msg *first_req; /* first INVITE (or first request) */
	uint16_t final;                  /* non-INVITE: last final status */
	int64_t final_ns;
	uint32_t auth_retries;           /* non-INVITE */
	uint32_t dialogs;
	uint32_t hops;                   /* distinct host pairs of its messages */
	const char *to_tag;              /* To tag of its first 2xx to the first message's
					  * method, else of the last response to it with one */
};

static uint32_t find(struct leg *legs, uint32_t i)
{
	while (legs[i].parent != i) {
		legs[i].parent = legs[legs[i].parent].parent;
		i = legs[i].parent;
	}
	return i;
}

static void unite(struct leg *legs, uint32_t a, uint32_t b)
{
	a = find(legs, a);
	b = find(legs, b);
	if (a == b) {
		return;
	}
	/* the leg seen first stays the root, whatever the order of discovery */
	if (a < b) {
		legs[b].parent = a;
	} else {
		legs[a].parent = b;
	}
}

static struct sn_slice S(const char *s)
{
	return sn_slice_make(s, strlen(s));
}

/* Host pair (unordered) and direction of a message as a hop id, per leg. */
struct hop {
	struct sn_addr a, b;
	uint16_t pa, pb;
};

static uint32_t hop_id(struct hop **hops, uint32_t *n, const struct eng_msg *m)
{
	bool fwd = sn_addr_cmp(&m->src, &m->dst) < 0 ||
		   (sn_addr_cmp(&m->src, &m->dst) == 0 && m->sport <= m->dport);
	struct hop h;

	memset(&h, 0, sizeof(h));
	h.a = fwd ? m->src : m->dst;
	h.b = fwd ? m->dst : m->src;
	h.pa = fwd ? m->sport : m->dport;
	h.pb = fwd ? m->dport : m->sport;
	for (uint32_t i = 0; i < *n; i++) {
		if (memcmp(&(*hops)[i], &h, sizeof(h)) == 0) {
			return (i << 1) | (fwd ? 0u : SIP_TXN_HOP_DIR);
		}
	}
	*hops = sn_xrealloc(*hops, (*n + 1) * sizeof(**hops));
	(*hops)[*n] = h;
	(*n)++;
	return ((*n - 1) << 1) | (fwd ? 0u : SIP_TXN_HOP_DIR);
}

static void txn_msg(const struct eng_msg *m, uint32_t hop, struct sip_txn_msg *t)
{
	memset(t, 0, sizeof(*t));
	t->is_request = m->is_request;
	t->method = (enum sip_method)m->method;
	t->method_name = S(m->method_name);
	t->status = m->status;
	t->ruri = S(m->ruri);
	t->call_id = S(m->call_id);
	t->from_tag = S(m->from_tag);
	t->to_tag = S(m->to_tag);
	t->cseq = m->cseq;
	t->branch = S(m->branch);
	t->sent_by = S(m->sent_by);
	t->top_via = S(m->top_via);
	t->ts_ns = m->ts_ns;
	t->hop = hop;
}

static void leg_analyse(struct eng_result *r, struct leg *lg, int64_t capture_end_ns)
{
	/* a leg has at most one transaction per message: size the table to it */
	struct sip_txn_table_cfg cfg = {.capacity = lg->n + 1, .linger_ns = -1, .pending_ns = -1};
	struct sip_txn_table *tt = sip_txn_table_new(&cfg);
	struct sip_dialog_set *ds = sip_dialog_set_new(S(lg->call_id));
	struct hop *hops = NULL;
	uint32_t nhops = 0;
	bool auth_pending = false;
	bool to_tag_final = false;
	uint8_t first_method = lg->n ? r->msgs[lg->msgs[0]]->method : 0;

	lg->to_tag = "";
	for (uint32_t i = 0; i < lg->n; i++) {
		struct eng_msg *m = r->msgs[lg->msgs[i]];
		struct sip_txn_msg t;
		struct sip_txn *txn = NULL;
		enum sip_txn_event ev;

		txn_msg(m, hop_id(&hops, &nhops, m), &t);
		if (!to_tag_final && !m->is_request && m->to_tag[0] && m->method == first_method) {
			lg->to_tag = m->to_tag;
			to_tag_final = m->status >= 200 && m->status < 300;
		}
		if (sip_txn_table_observe(tt, &t, &txn, &ev) != SN_OK) {
			continue;
		}
		if (ev == SIP_TXN_EV_REQUEST_RETRANSMISSION ||
		    ev == SIP_TXN_EV_RESPONSE_RETRANSMISSION) {
			m->retransmission = true;
			lg->retrans++;
		}
		if (m->method == SIP_METHOD_INVITE) {
			lg->has_invite = true;
			if (m->is_request && !lg->first_req) {
				lg->first_req = m;
			}
		}
		sip_dialog_set_observe(ds, &t, ev);
		/* non-INVITE exchanges: the final response of the last transaction decides */
		if (!m->is_request && m->status >= 200 && !m->retransmission &&
		    m->method != SIP_METHOD_ACK && m->method != SIP_METHOD_CANCEL) {
			lg->final = m->status;
			lg->final_ns = m->ts_ns;
			auth_pending = m->status == 401 || m->status == 407;
		} else if (m->is_request && !m->retransmission && auth_pending &&
			   m->method != SIP_METHOD_ACK) {
			lg->auth_retries++;
			auth_pending = false;
		}
	}
	if (!lg->first_req) {
		for (uint32_t i = 0; i < lg->n; i++) {
			if (r->msgs[lg->msgs[i]]->is_request) {
				lg->first_req = r->msgs[lg->msgs[i]];
				break;
			}
		}
	}
	lg->hops = nhops;
	sip_dialog_set_summary(ds, capture_end_ns, &lg->sum);
	lg->dialogs = sip_dialog_set_dialog_count(ds);
	sip_dialog_set_free(ds);
	sip_txn_table_free(tt);
	free(hops);
}

static enum eng_call_state state_of_status(uint16_t st)
{
	if (st == 0) {
		return ENG_CALL_SETUP;
	}
	if (st < 300) {
		return ENG_CALL_COMPLETED;
	}
	if (st < 400) {
		return ENG_CALL_DIVERTED;
	}
	if (st == 486 || st == 600) {
		return ENG_CALL_BUSY;
	}
	if (st == 408 || st >= 500) {
		return st == 603 ? ENG_CALL_REJECTED : ENG_CALL_FAILED;
	}
	return ENG_CALL_REJECTED;
}

static enum eng_call_state state_of_dialog(enum sip_dialog_call_state s)
{
	switch (s) {
	case SIP_DIALOG_CALL_SETUP:
		return ENG_CALL_SETUP;
	case SIP_DIALOG_CALL_RINGING:
		return ENG_CALL_RINGING;
	case SIP_DIALOG_CALL_IN_CALL:
		return ENG_CALL_IN_CALL;
	case SIP_DIALOG_CALL_COMPLETED:
		return ENG_CALL_COMPLETED;
	case SIP_DIALOG_CALL_CANCELLED:
		return ENG_CALL_CANCELLED;
	case SIP_DIALOG_CALL_REJECTED:
		return ENG_CALL_REJECTED;
	case SIP_DIALOG_CALL_BUSY:
		return ENG_CALL_BUSY;
	case SIP_DIALOG_CALL_DIVERTED:
		return ENG_CALL_DIVERTED;
	case SIP_DIALOG_CALL_FAILED:
		return ENG_CALL_FAILED;
	}
	return ENG_CALL_FAILED;
}

static int64_t ts_or_none(int64_t ns)
{
	return ns ? ns : -1;
}

static int u32_cmp(const void *pa, const void *pb)
{
	uint32_t a = *(const uint32_t *)pa;
	uint32_t b = *(const uint32_t *)pb;

	return a < b ? -1 : (a > b);
}

static uint32_t count_hops(const struct eng_result *r, const uint32_t *msgs, uint32_t n)
{
	struct hop *hops = NULL;
	uint32_t nh = 0;

	for (uint32_t i = 0; i < n; i++) {
		hop_id(&hops, &nh, r->msgs[msgs[i]]);
	}
	free(hops);
	return nh;
}

/* Fill call @p c from the legs @p members; its lists go to @p leg_ids (nmembers entries)
 * and @p msgs (the members' messages). */
static void call_fill(struct eng_result *r, struct eng_call *c, struct leg *legs,
		      const uint32_t *members, uint32_t nmembers, const char **leg_ids,
		      uint32_t *msgs)
{
	const struct leg *main_leg = &legs[members[0]];

	for (uint32_t i = 0; i < nmembers; i++) {
		if (legs[members[i]].has_invite) {
			main_leg = &legs[members[i]];
			break;
		}
	}
	memset(c, 0, sizeof(*c));
	c->call_id = legs[members[0]].call_id;
	c->legs = nmembers;
	c->leg_ids = leg_ids;
	for (uint32_t i = 0; i < nmembers; i++) {
		const struct leg *lg = &legs[members[i]];
		c->leg_ids[i] = lg->call_id;
		c->retransmissions += lg->retrans;
		c->dialogs += lg->dialogs;
	}
	c->msgs = msgs;
	for (uint32_t i = 0; i < nmembers; i++) {
		const struct leg *lg = &legs[members[i]];
		memcpy(c->msgs + c->msg_count, lg->msgs, lg->n * sizeof(*c->msgs));
		c->msg_count += lg->n;
	}
	/* each leg's list is in message order already, so one leg (most calls) needs no sort */
	for (uint32_t i = 1; i < c->msg_count; i++) {
		if (c->msgs[i] < c->msgs[i - 1]) {
			qsort(c->msgs, c->msg_count, sizeof(*c->msgs), u32_cmp);
			break;
		}
	}
	c->messages = c->msg_count;
	/* one leg (most calls): its count, which leg_analyse() made from the same messages; a
	 * second pass over them, each a miss to memory again, took the c5k build on one core
	 * from 14.3 to 16.9 ms (paired medians of 41) */
	c->hops = nmembers == 1 ? main_leg->hops : count_hops(r, c->msgs, c->msg_count);
	c->start_ns = r->msgs[c->msgs[0]]->ts_ns;
	c->ring_ns = c->answer_ns = c->end_ns = c->attempt_ns = -1;
	c->hangup = "";
	if (main_leg->first_req) {
		c->from_uri = main_leg->first_req->from_uri;
		c->to_uri = main_leg->first_req->to_uri;
		c->from_tag = main_leg->first_req->from_tag;
		c->kind = main_leg->first_req->method_name;
	} else {
		const struct eng_msg *m = r->msgs[c->msgs[0]];
		c->from_uri = m->from_uri;
		c->to_uri = m->to_uri;
		c->from_tag = m->from_tag;
		c->kind = m->method_name;
	}
	/* found by leg_analyse() in its pass over the same messages */
	c->to_tag = main_leg->to_tag;
	if (main_leg->has_invite) {
		const struct sip_dialog_summary *s = &main_leg->sum;
		c->is_invite = true;
		c->kind = "INVITE";
		c->state = state_of_dialog(s->state);
		c->ring_ns = ts_or_none(s->first_18x_ns);
		c->attempt_ns = ts_or_none(s->attempt_ns);
		c->answer_ns = ts_or_none(s->answer_ns);
		c->end_ns = ts_or_none(s->end_ns);
		c->final_code = s->final_status;
		c->auth_retries = s->auth_retry_count;
		if (s->hangup_by == SIP_DIALOG_PARTY_CALLER) {
			c->hangup = "caller";
		} else if (s->hangup_by == SIP_DIALOG_PARTY_CALLEE) {
			c->hangup = "callee";
		}
	} else {
		c->state = state_of_status(main_leg->final);
		c->final_code = main_leg->final;
		c->end_ns = main_leg->final ? main_leg->final_ns : -1;
		c->auth_retries = main_leg->auth_retries;
	}
}

static int call_cmp(const void *pa, const void *pb)
{
	const struct eng_call *a = pa;
	const struct eng_call *b = pb;

	if (a->start_ns != b->start_ns) {
		return a->start_ns < b->start_ns ? -1 : 1;
	}
	return strcmp(a->call_id, b->call_id);
}

/* The legs (one per call attempt) that share one Call-ID, in order of creation. */
struct cid_entry {
	uint32_t *legs;
	uint32_t *tag_hash; /* sn_str_hash() of each leg's caller tag: a Call-ID reused by many
			     * calls is searched through without reading every old leg's tag
			     * (each a miss to memory) */
	uint32_t n, cap;
};

static uint32_t leg_new(struct leg **legs, uint32_t *nlegs, uint32_t *cap, const char *call_id,
			const char *caller_tag)
{
	uint32_t li;

	if (*nlegs == *cap) {
		*cap = *cap ? *cap * 2 : 256;
		*legs = sn_xrealloc(*legs, *cap * sizeof(**legs));
	}
	li = (*nlegs)++;
	memset(&(*legs)[li], 0, sizeof((*legs)[li]));
	(*legs)[li].call_id = call_id;
	(*legs)[li].caller_tag = caller_tag;
	(*legs)[li].parent = li;
	return li;
}

/*
 * The leg of message @p m among the legs of its Call-ID. A Call-ID reused for a new call (an
 * initial INVITE, without To tag, whose From tag is new) starts a new leg; every other message
 * joins the newest leg whose caller tag is its From or To tag, else the newest leg.
 */
static uint32_t leg_of(struct leg **legs, uint32_t *nlegs, uint32_t *cap, struct cid_entry *ce,
		       const struct eng_msg *m)
{
	bool initial = m->is_request && m->method == SIP_METHOD_INVITE && !m->to_tag[0];
	bool by_to = !initial && m->to_tag[0];
	uint32_t from_h = sn_str_hash(m->from_tag);
	uint32_t to_h = by_to ? sn_str_hash(m->to_tag) : 0;

	for (uint32_t i = ce->n; i-- > 0;) {
		uint32_t h = ce->tag_hash[i];

		if ((h == from_h && strcmp((*legs)[ce->legs[i]].caller_tag, m->from_tag) == 0) ||
		    (by_to && h == to_h &&
		     strcmp((*legs)[ce->legs[i]].caller_tag, m->to_tag) == 0)) {
			return ce->legs[i];
		}
	}
	if (ce->n && !(initial && m->from_tag[0])) {
		return ce->legs[ce->n - 1];
	}
	if (ce->n == ce->cap) {
		ce->cap = ce->cap ? ce->cap * 2 : 2;
		ce->legs = sn_xrealloc(ce->legs, ce->cap * sizeof(*ce->legs));
		ce->tag_hash = sn_xrealloc(ce->tag_hash, ce->cap * sizeof(*ce->tag_hash));
	}
	ce->legs[ce->n] = leg_new(legs, nlegs, cap, m->call_id, m->from_tag);
	ce->tag_hash[ce->n] = from_h;
	return ce->legs[ce->n++];
}

/*
 * The messages of one call share one copy of their Call-ID per worker (eng_summary.c), so a
 * small direct-mapped cache from the string's address to its entry answers nearly every
 * message without hashing the string; a miss (another copy, a collision) asks the table.
 */
#define CID_SLOTS_BITS 10
#define CID_SLOTS      (1u << CID_SLOTS_BITS)

struct cid_slot {
	const char *call_id;
	struct cid_entry *ce;
};

static void cid_entry_free(gpointer p)
{
	struct cid_entry *ce = p;

	free(ce->legs);
	free(ce->tag_hash);
	free(ce);
}

/*
 * The parallel steps (sn_pool_for()): legs (each touches only its own messages' retransmission
 * flags and its own fields), calls (each fills only its own struct) and the marking of
 * messages (each call its own). Any thread may take any item, so the outcome does not depend
 * on the thread count. Below PAR_MIN items one thread does them all.
 */
#define PAR_MIN   256u
#define PAR_GRAIN 16u /* items a thread claims at once */

static uint32_t par_threads(uint32_t n, uint32_t threads)
{
	return n < PAR_MIN ? 1 : threads;
}

struct build_ctx {
	struct eng_result *r;
	struct leg *legs;
	int64_t capture_end;
	const uint32_t *roots, *start, *members; /* root k's legs: members[start[k] ..] */
	const uint32_t *msg_at; /* calls[j]'s messages: r->call_msgs[msg_at[j]] .. */
	struct eng_call *calls; /* calls[j] from roots[j] */
	uint32_t nlegs;
};

static void leg_item(void *ctx, uint32_t i)
{
	struct build_ctx *b = ctx;
	const struct leg *lg = &b->legs[i];

	/*
	 * A leg's messages lie far apart in r->msgs (a call lasts while others start) and their
	 * strings in the workers' arenas, so each was a miss to memory, one after the other.
	 * Ask for the strings this leg compares now (its messages were asked for one leg
	 * earlier), and for the messages of the leg this thread takes next (the next one of its
	 * block of PAR_GRAIN). Legs took 17.1 ms -> 13.1 ms (median of 31, c5k, one core).
	 */
	for (uint32_t k = 0; k < lg->n; k++) {
		const struct eng_msg *m = b->r->msgs[lg->msgs[k]];

		__builtin_prefetch(m->from_tag);
		__builtin_prefetch(m->to_tag);
		__builtin_prefetch(m->branch);
		__builtin_prefetch(m->sent_by);
		__builtin_prefetch(m->ruri);
	}
	if ((i + 1) % PAR_GRAIN != 0 && i + 1 < b->nlegs) {
		const struct leg *nx = &b->legs[i + 1];

		for (uint32_t k = 0; k < nx->n; k++) {
			const char *p = (const char *)b->r->msgs[nx->msgs[k]];

			for (size_t o = 0; o < sizeof(struct eng_msg); o += 64) {
				__builtin_prefetch(p + o);
			}
		}
	}
	leg_analyse(b->r, &b->legs[i], b->capture_end);
}

static void call_item(void *ctx, uint32_t j)
{
	struct build_ctx *b = ctx;
	uint32_t root = b->roots[j];

	call_fill(b->r, &b->calls[j], b->legs, b->members + b->start[root],
		  b->start[root + 1] - b->start[root], b->r->call_leg_ids + b->start[root],
		  b->r->call_msgs + b->msg_at[j]);
}

/* Every message of call @p i learns its call (a message is in one call: no two threads write
 * the same one; a write per message, each a miss to memory, 6 ms on one thread for the 140,000
 * messages of 20,000 calls). */
static void call_mark(void *ctx, uint32_t i)
{
	struct eng_result *r = ctx;
	const struct eng_call *c = &r->calls[i];

	for (uint32_t j = 0; j < c->msg_count; j++) {
		r->msgs[c->msgs[j]]->call = (int32_t)i;
	}
}

/*
 * Group items 0 .. n - 1 by their key (key[i] < nkeys), keeping each group in item order (a
 * stable counting sort): group k is items[start[k]] .. items[start[k + 1] - 1]. @p start
 * has nkeys + 1 entries, @p items n; both the caller's.
 */
static void group_by_key(const uint32_t *key, uint32_t n, uint32_t nkeys, uint32_t *start,
			 uint32_t *items)
{
	uint32_t *fill = sn_xmalloc((nkeys + 1u) * sizeof(*fill));

	memset(start, 0, (nkeys + 1u) * sizeof(*start));
	for (uint32_t i = 0; i < n; i++) {
		start[key[i] + 1]++;
	}
	for (uint32_t k = 0; k < nkeys; k++) {
		start[k + 1] += start[k];
	}
	memcpy(fill, start, nkeys * sizeof(*fill));
	for (uint32_t i = 0; i < n; i++) {
		items[fill[key[i]]++] = i;
	}
	free(fill);
}

void eng_calls_build(struct eng_result *r, bool invite_only, uint32_t threads)
{
	GHashTable *by_id = g_hash_table_new_full(sn_str_hash, g_str_equal, NULL, cid_entry_free);
	struct leg *legs = NULL;
	uint32_t nlegs = 0, cap = 0, ncalls = 0, nroots = 0;
	uint32_t *start, *members, *roots, *root_of, *msg_at;
	struct build_ctx b = {0};
	int64_t capture_end = r->stats.last_ts_ns;

	struct cid_slot *seen = sn_xcalloc(CID_SLOTS, sizeof(*seen));
	uint32_t *msg_leg = sn_xmalloc((r->msg_count + 1u) * sizeof(*msg_leg)); /* leg of msg i */
	uint32_t *leg_msgs, *leg_start;

	for (uint32_t i = 0; i < r->msg_count; i++) {
		const struct eng_msg *m = r->msgs[i];
		struct cid_slot *slot = &seen[((uintptr_t)m->call_id * UINT64_C(0x9e3779b97f4a7c15)) >>
					      (64 - CID_SLOTS_BITS)];
		struct cid_entry *ce = slot->call_id == m->call_id ? slot->ce : NULL;
		uint32_t li;

		if (i + 16 < r->msg_count) {
			/* the lines of the message 16 ahead that hold the fields read here
			 * (is_request to to_tag): the messages lie in several workers' arrays, and
			 * even in one the hardware did not fetch them early enough (perf: the loads
			 * of a message's Call-ID and tags were a third of this loop's samples) */
			const char *far = (const char *)r->msgs[i + 16];

			__builtin_prefetch(far + offsetof(struct eng_msg, is_request));
			__builtin_prefetch(far + offsetof(struct eng_msg, is_request) + 64);
			__builtin_prefetch(far + offsetof(struct eng_msg, to_tag) + sizeof(char *) - 1);
		}
		if (i + 8 < r->msg_count) {
			/* leg_of() reads the tags: ask for those of the message 8 ahead */
			__builtin_prefetch(r->msgs[i + 8]->from_tag);
			__builtin_prefetch(r->msgs[i + 8]->to_tag);
		}

		if (!ce) {
			ce = g_hash_table_lookup(by_id, m->call_id);
			if (!ce) {
				ce = sn_xcalloc(1, sizeof(*ce));
				g_hash_table_insert(by_id, (gpointer)m->call_id, ce);
			}
			slot->call_id = m->call_id;
			slot->ce = ce;
		}
		li = leg_of(&legs, &nlegs, &cap, ce, m);
		msg_leg[i] = li;
		/* X-Call-ID / X-CID correlation: join the newest leg of the named Call-ID */
		if (m->x_call_id[0] && strcmp(m->x_call_id, m->call_id) != 0) {
			struct cid_entry *other = g_hash_table_lookup(by_id, m->x_call_id);
			if (other && other->n) {
				unite(legs, li, other->legs[other->n - 1]);
			}
		}
	}
	free(seen);
	/* each leg's messages in order, all legs' lists in one array (one allocation where each
	 * leg grew a list of its own) */
	leg_msgs = sn_xmalloc((r->msg_count + 1u) * sizeof(*leg_msgs));
	leg_start = sn_xmalloc((nlegs + 1u) * sizeof(*leg_start));
	group_by_key(msg_leg, r->msg_count, nlegs, leg_start, leg_msgs);
	for (uint32_t li = 0; li < nlegs; li++) {
		legs[li].msgs = leg_msgs + leg_start[li];
		legs[li].n = leg_start[li + 1] - leg_start[li];
	}
	free(leg_start);
	free(msg_leg);
	b.r = r;
	b.legs = legs;
	b.capture_end = capture_end;
	b.nlegs = nlegs;
	sn_pool_for(nlegs, par_threads(nlegs, threads), PAR_GRAIN, leg_item, &b);
	/* group legs by root, each call's legs in first-seen order */
	root_of = sn_xmalloc((nlegs + 1u) * sizeof(*root_of));
	roots = sn_xcalloc(nlegs + 1u, sizeof(*roots));
	for (uint32_t i = 0; i < nlegs; i++) {
		root_of[i] = find(legs, i);
		if (root_of[i] == i) {
			roots[nroots++] = i;
		}
	}
	start = sn_xmalloc((nlegs + 1u) * sizeof(*start));
	members = sn_xcalloc(nlegs + 1u, sizeof(*members));
	group_by_key(root_of, nlegs, nlegs, start, members);
	/* where each call's messages go in r->call_msgs: its legs' messages, calls in root
	 * order (its legs' names go to r->call_leg_ids at start[root], the members' order) */
	msg_at = sn_xcalloc(nlegs + 1u, sizeof(*msg_at)); /* first per root, then per call */
	for (uint32_t i = 0; i < nlegs; i++) {
		msg_at[root_of[i]] += legs[i].n;
	}
	for (uint32_t j = 0, at = 0; j < nroots; j++) {
		uint32_t n = msg_at[roots[j]];

		msg_at[j] = at; /* j <= roots[j]: the entries still to be read lie ahead */
		at += n;
	}
	free(root_of);
	r->call_msgs = sn_xmalloc((r->msg_count + 1u) * sizeof(*r->call_msgs));
	r->call_leg_ids = sn_xmalloc((nlegs + 1u) * sizeof(*r->call_leg_ids));
	/* one call per root, filled in parallel, then the ones -c leaves out are dropped */
	r->calls = sn_xcalloc(nroots + 1u, sizeof(*r->calls));
	b.roots = roots;
	b.start = start;
	b.members = members;
	b.msg_at = msg_at;
	b.calls = r->calls;
	sn_pool_for(nroots, par_threads(nroots, threads), PAR_GRAIN, call_item, &b);
	free(msg_at);
	for (uint32_t j = 0; j < nroots; j++) {
		struct eng_call *c = &r->calls[j];

		if (invite_only && !c->is_invite) {
			continue;
		}
		if (ncalls != j) {
			r->calls[ncalls] = *c;
		}
		ncalls++;
	}
	r->call_count = ncalls;
	qsort(r->calls, ncalls, sizeof(*r->calls), call_cmp);
	sn_pool_for(ncalls, par_threads(ncalls, threads), PAR_GRAIN, call_mark, r);
	for (uint32_t i = 0; i < ncalls; i++) {
		r->dialogs += r->calls[i].dialogs;
		r->by_state[r->calls[i].state]++;
	}
	free(leg_msgs);
	free(legs);
	free(start);
	free(members);
	free(roots);
	g_hash_table_destroy(by_id);
}
