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
 * calls are sorted by (first message time, Call-ID). The grouping into legs runs in parts by
 * Call-ID hash, one per build thread (group_part(), group_merge()); the numbering and unions
 * are those of one pass over the messages, whatever the number of parts. Ownership: arrays are
 * heap-owned by the result (freed by eng_result_free()); strings point into the workers' keep
 * arenas.
 */
#include "config.h"

#include <stdatomic.h>
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
	uint32_t *msgs;    /* indexes into r->msgs, in time order (a stretch of one array
			    * shared by all legs) */
	uint32_t n;
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

/* Union-find over the legs (@p parent: each leg's parent, a root its own). */
static uint32_t find(uint32_t *parent, uint32_t i)
{
	while (parent[i] != i) {
		parent[i] = parent[parent[i]];
		i = parent[i];
	}
	return i;
}

static void unite(uint32_t *parent, uint32_t a, uint32_t b)
{
	a = find(parent, a);
	b = find(parent, b);
	if (a == b) {
		return;
	}
	/* the leg seen first stays the root, whatever the order of discovery */
	if (a < b) {
		parent[b] = a;
	} else {
		parent[a] = b;
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

/* A leg while messages are grouped (group_part()): what leg_of() compares, and the message
 * that created it (legs are numbered in that order once every part is done). */
struct proto_leg {
	const char *call_id;
	const char *caller_tag;
	uint32_t first; /* index into r->msgs */
};

/*
 * The messages of one call share one copy of their Call-ID per worker (eng_summary.c), so a
 * small direct-mapped cache from the string's address to its entry answers nearly every
 * message without hashing the string; a miss (another copy, a collision) looks it up.
 */
#define CID_SLOTS_BITS 10
#define CID_SLOTS      (1u << CID_SLOTS_BITS)

struct cid_slot {
	const char *call_id;
	struct cid_entry *ce;
};

/* A reference from message i (of leg `leg` of its part) to another Call-ID by X-Call-ID or
 * X-CID, resolved once every part is done. */
struct xref {
	uint32_t i, leg;
	const char *x_call_id;
};

/*
 * One part of the grouping: the messages whose Call-ID hashes to it, with their own table of
 * Call-IDs and their own legs. What a message's leg is depends only on the earlier messages
 * of its Call-ID, all in the same part, so the parts can run at once.
 */
struct group_part {
	GHashTable *by_id; /* Call-ID -> struct cid_entry (of local leg numbers) */
	struct proto_leg *legs;
	uint32_t nlegs, cap;
	uint32_t *own_leg; /* with several parts, the local legs of the part's messages in
			    * order (in the caller's scratch) */
	uint32_t nown;
	struct xref *xrefs;
	uint32_t nx, xcap;
	uint32_t *global; /* local leg -> leg number (group_merge()) */
};

/* Below GROUP_PAR_MIN messages one part (SIPNAB_GROUP_MIN sets it: tests and the fuzzer put
 * small captures through several parts); at most GROUP_PARTS_MAX parts (each part reads every
 * message's Call-ID hash to find its own: more parts than that would read them more often
 * than they save). */
#define GROUP_PAR_MIN   4096u
#define GROUP_PARTS_MAX 8u

struct group_job {
	const struct eng_result *r;
	struct group_part *parts;
	uint32_t nparts;
	uint32_t *msg_leg; /* with one part, each message's leg goes here at once */
	const uint32_t *hash; /* with several, each message's eng_msg.call_id_hash */
	uint32_t *scratch;    /* and room for every message's local leg (group_part()) */
};

/* The part of a Call-ID whose sn_str_hash() is @p h (a multiply, not a division: it is asked
 * for every message by every part) */
static uint32_t part_of_hash(uint32_t h, uint32_t nparts)
{
	return (uint32_t)(((uint64_t)h * nparts) >> 32);
}

static uint32_t part_of(const char *call_id, uint32_t nparts)
{
	return nparts > 1 ? part_of_hash(sn_str_hash(call_id), nparts) : 0;
}

static uint32_t leg_new(struct group_part *gp, const char *call_id, const char *caller_tag,
			uint32_t first)
{
	struct proto_leg *pl;

	if (gp->nlegs == gp->cap) {
		gp->cap = gp->cap ? gp->cap * 2 : 256;
		gp->legs = sn_xrealloc(gp->legs, gp->cap * sizeof(*gp->legs));
	}
	pl = &gp->legs[gp->nlegs];
	pl->call_id = call_id;
	pl->caller_tag = caller_tag;
	pl->first = first;
	return gp->nlegs++;
}

/*
 * The leg of message @p m (r->msgs[i]) among the legs of its Call-ID. A Call-ID reused for a
 * new call (an initial INVITE, without To tag, whose From tag is new) starts a new leg; every
 * other message joins the newest leg whose caller tag is its From or To tag, else the newest
 * leg.
 */
static uint32_t leg_of(struct group_part *gp, struct cid_entry *ce, const struct eng_msg *m,
		       uint32_t i)
{
	bool initial, by_to;
	uint32_t from_h, to_h;

	if (ce->n) {
		/* the newest leg, when its caller tag is the very copy of the message's From or
		 * To tag (a worker's messages of one call share their copies, eng_summary.c):
		 * what the search below finds first, without reading or hashing the tags */
		const char *tag = gp->legs[ce->legs[ce->n - 1]].caller_tag;

		if (tag == m->from_tag || (tag == m->to_tag && tag[0])) {
			return ce->legs[ce->n - 1];
		}
	}
	initial = m->is_request && m->method == SIP_METHOD_INVITE && !m->to_tag[0];
	by_to = !initial && m->to_tag[0];
	from_h = sn_str_hash(m->from_tag);
	to_h = by_to ? sn_str_hash(m->to_tag) : 0;
	for (uint32_t k = ce->n; k-- > 0;) {
		uint32_t h = ce->tag_hash[k];

		if ((h == from_h && strcmp(gp->legs[ce->legs[k]].caller_tag, m->from_tag) == 0) ||
		    (by_to && h == to_h &&
		     strcmp(gp->legs[ce->legs[k]].caller_tag, m->to_tag) == 0)) {
			return ce->legs[k];
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
	ce->legs[ce->n] = leg_new(gp, m->call_id, m->from_tag, i);
	ce->tag_hash[ce->n] = from_h;
	return ce->legs[ce->n++];
}

static void cid_entry_free(gpointer p)
{
	struct cid_entry *ce = p;

	free(ce->legs);
	free(ce->tag_hash);
	free(ce);
}

/*
 * Part @p p of the grouping: the messages of part p are grouped (sn_pool_for(): any thread
 * may take any part). With several parts, each message's part comes from its Call-ID's hash
 * (j->hash, in message order, written by the merge of the workers' arrays), so a part reads
 * only its own messages; their local legs go to its stretch of j->scratch, the parts' stretches
 * one after the other. (Each part read every message for its Call-ID before, and each took as
 * long as one part reading all: 1.3-1.5 ms of c5k's build.)
 */
static void group_part(void *ctx, uint32_t p)
{
	struct group_job *j = ctx;
	const struct eng_result *r = j->r;
	/* filled in a local: the parts lie side by side, and every message of the part writes
	 * its counts (two threads on two neighbouring parts would pass the line between them) */
	struct group_part part = j->parts[p], *gp = &part;
	struct cid_slot *seen = sn_xcalloc(CID_SLOTS, sizeof(*seen));
	bool several = j->nparts > 1;
	/* how far ahead to ask for messages and their tags, in messages of every part (about
	 * 16 and 8 of this part's: at two parts, 16 and 8 took 0.94-1.02 ms a part on c5k, 32
	 * and 16 0.80-0.86, medians of 10; at one part 16 and 8 stays the fastest) */
	uint32_t ahead = 16u * j->nparts, tags_ahead = 8u * j->nparts;

	gp->by_id = g_hash_table_new_full(sn_str_hash, g_str_equal, NULL, cid_entry_free);
	if (several) {
		uint32_t before = 0; /* messages of the parts before p */

		for (uint32_t i = 0; i < r->msg_count; i++) {
			before += part_of_hash(j->hash[i], j->nparts) < p;
		}
		gp->own_leg = j->scratch + before;
	}
	for (uint32_t i = 0; i < r->msg_count; i++) {
		const struct eng_msg *m;
		struct cid_slot *slot;
		struct cid_entry *ce;
		uint32_t li;

		if (i + ahead < r->msg_count &&
		    (!several || part_of_hash(j->hash[i + ahead], j->nparts) == p)) {
			/* the lines of a message ahead that hold the fields read here (is_request
			 * to to_tag): the messages lie in several workers' arrays, and even in one
			 * the hardware did not fetch them early enough (perf: the loads of a
			 * message's Call-ID and tags were a third of this loop's samples) */
			const char *far = (const char *)r->msgs[i + ahead];

			__builtin_prefetch(far + offsetof(struct eng_msg, is_request));
			__builtin_prefetch(far + offsetof(struct eng_msg, is_request) + 64);
			__builtin_prefetch(far + offsetof(struct eng_msg, to_tag) +
					   sizeof(char *) - 1);
		}
		if (several && part_of_hash(j->hash[i], j->nparts) != p) {
			continue;
		}
		if (i + tags_ahead < r->msg_count &&
		    (!several || part_of_hash(j->hash[i + tags_ahead], j->nparts) == p)) {
			/* leg_of() reads the tags: ask for those of a message nearer (one of the
			 * part's, whose lines were asked for above) */
			__builtin_prefetch(r->msgs[i + tags_ahead]->from_tag);
			__builtin_prefetch(r->msgs[i + tags_ahead]->to_tag);
		}
		m = r->msgs[i];
		slot = &seen[((uintptr_t)m->call_id * UINT64_C(0x9e3779b97f4a7c15)) >>
			     (64 - CID_SLOTS_BITS)];
		if (slot->call_id != m->call_id) {
			slot->call_id = m->call_id;
			slot->ce = NULL;
		}
		ce = slot->ce;
		if (!ce) {
			ce = g_hash_table_lookup(gp->by_id, m->call_id);
			if (!ce) {
				ce = sn_xcalloc(1, sizeof(*ce));
				g_hash_table_insert(gp->by_id, (gpointer)m->call_id, ce);
			}
			slot->ce = ce;
		}
		li = leg_of(gp, ce, m, i);
		if (several) {
			/* not into msg_leg: the parts' messages interleave, and two threads
			 * writing the same lines of it would pass them to and fro */
			gp->own_leg[gp->nown++] = li;
		} else {
			j->msg_leg[i] = li; /* the part's legs are the legs, numbered alike */
		}
		if (m->x_call_id[0] && strcmp(m->x_call_id, m->call_id) != 0) {
			if (gp->nx == gp->xcap) {
				gp->xcap = gp->xcap ? gp->xcap * 2 : 16;
				gp->xrefs = sn_xrealloc(gp->xrefs, gp->xcap * sizeof(*gp->xrefs));
			}
			gp->xrefs[gp->nx++] = (struct xref){i, li, m->x_call_id};
		}
	}
	free(seen);
	j->parts[p] = part;
}

/*
 * The parts' legs numbered in order of their first message (as one pass over the messages
 * would have created them): their Call-IDs in *call_ids and union-find parents in *parent,
 * each message's leg in @p msg_leg (with several parts, message i is the next of its part's,
 * by @p hash), and the legs that X-Call-ID / X-CID correlate united:
 * message i joins its leg to the newest leg of the named Call-ID at that point, the last one
 * created by a message before i. Unions do not depend on their order (the smaller leg number
 * stays the root). Returns the number of legs.
 */
static uint32_t group_merge(struct group_part *parts, uint32_t nparts, const uint32_t *hash,
			    uint32_t nmsgs, uint32_t *msg_leg, const char ***call_ids,
			    uint32_t **parent)
{
	uint32_t nlegs = 0, *head = sn_xcalloc(nparts + 1u, sizeof(*head));
	const char **ids;
	uint32_t *up;

	for (uint32_t p = 0; p < nparts; p++) {
		nlegs += parts[p].nlegs;
		parts[p].global = sn_xmalloc((parts[p].nlegs + 1u) * sizeof(*parts[p].global));
	}
	ids = sn_xmalloc((nlegs + 1u) * sizeof(*ids));
	up = sn_xmalloc((nlegs + 1u) * sizeof(*up));
	for (uint32_t g = 0; g < nlegs; g++) {
		uint32_t best = 0;

		for (uint32_t p = 1; p < nparts; p++) {
			if (head[p] < parts[p].nlegs &&
			    (head[best] == parts[best].nlegs ||
			     parts[p].legs[head[p]].first < parts[best].legs[head[best]].first)) {
				best = p;
			}
		}
		parts[best].global[head[best]] = g;
		ids[g] = parts[best].legs[head[best]++].call_id;
		up[g] = g;
	}
	if (nparts > 1) {
		/* head[p]: part p's messages placed so far */
		memset(head, 0, (nparts + 1u) * sizeof(*head));
		for (uint32_t i = 0; i < nmsgs; i++) {
			uint32_t p = part_of_hash(hash[i], nparts);

			msg_leg[i] = parts[p].global[parts[p].own_leg[head[p]++]];
		}
	}
	free(head);
	for (uint32_t p = 0; p < nparts; p++) {
		for (uint32_t k = 0; k < parts[p].nx; k++) {
			const struct xref *x = &parts[p].xrefs[k];
			const struct group_part *q = &parts[part_of(x->x_call_id, nparts)];
			const struct cid_entry *other = g_hash_table_lookup(q->by_id, x->x_call_id);
			uint32_t lo = 0, hi = other ? other->n : 0;

			/* other's legs [0, lo) were created by messages before x->i */
			while (lo < hi) {
				uint32_t mid = lo + (hi - lo) / 2;

				if (q->legs[other->legs[mid]].first < x->i) {
					lo = mid + 1;
				} else {
					hi = mid;
				}
			}
			if (lo > 0) {
				unite(up, parts[p].global[x->leg], q->global[other->legs[lo - 1]]);
			}
		}
	}
	*call_ids = ids;
	*parent = up;
	return nlegs;
}

/* Part @p p's memory (sn_pool_for(): the parts are freed at once, each by one thread; one
 * after the other, the 20,000 Call-IDs of the 20,000-call sweep capture took 4.5 ms of the
 * serial part of the build at two cores). */
static void group_part_free(void *ctx, uint32_t p)
{
	struct group_part *gp = &((struct group_part *)ctx)[p];

	g_hash_table_destroy(gp->by_id);
	free(gp->legs);
	free(gp->xrefs);
	free(gp->global);
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
	const char **leg_call_ids;
	uint32_t *leg_msgs, *leg_start; /* leg i's messages: leg_msgs[leg_start[i] ..] */
	int64_t capture_end;
	const uint32_t *roots, *start, *members; /* root k's legs: members[start[k] ..] */
	const uint32_t *msg_at; /* calls[j]'s messages: r->call_msgs[msg_at[j]] .. */
	struct eng_call *calls; /* calls[j] from roots[j] */
	const uint32_t *call_of; /* the call of a leg that is a call alone, else NO_CALL */
	uint32_t nlegs, nroots;
	atomic_bool ready_taken; /* a thread of the legs' step took ready_arrays() */
};

/*
 * Fault in the pages of the legs' array and of the calls' arrays (r->calls, r->call_msgs,
 * r->call_leg_ids), fresh memory, about 2 MiB for c5k's 5,000 calls, 1.4-1.6 us a 4 KiB page on
 * the development VM. Page faults do not overlap each other (two threads faulting in one 1 MiB
 * block in halves took as long as one thread alone), but they do overlap the other thread's
 * work: so the first thread into the legs' step (leg_item()) does this first, while the other
 * analyses legs and may already write the same arrays (sn_mem_prefault() leaves what they
 * wrote alone), instead of the build's one thread doing it before and between the parallel
 * steps (sn_xcalloc_full()).
 */
#define READY_MIN ((size_t)8 << 10) /* smaller: a page or two, not worth a call */

static void ready_block(void *p, size_t n)
{
	if (n >= READY_MIN) {
		sn_mem_prefault(p, n); /* the other threads may be writing it already */
	}
}

static void ready_arrays(struct build_ctx *b)
{
	struct eng_result *r = b->r;

	ready_block(b->legs, (b->nlegs + 1u) * sizeof(*b->legs));
	ready_block(r->calls, (b->nroots + 1u) * sizeof(*r->calls));
	ready_block(r->call_msgs, (r->msg_count + 1u) * sizeof(*r->call_msgs));
	ready_block(r->call_leg_ids, (b->nlegs + 1u) * sizeof(*r->call_leg_ids));
}

#define NO_CALL UINT32_MAX

static void call_item(void *ctx, uint32_t j);

/* Every message of call @p c learns its call: @p call (-1: none). A message is in one call, so
 * no two threads write the same one. */
static void mark_call(struct eng_result *r, const struct eng_call *c, int32_t call)
{
	for (uint32_t k = 0; k < c->msg_count; k++) {
		r->msgs[c->msgs[k]]->call = call;
	}
}

static void leg_item(void *ctx, uint32_t i)
{
	struct build_ctx *b = ctx;
	struct leg *lg = &b->legs[i];

	if (!atomic_load_explicit(&b->ready_taken, memory_order_relaxed) &&
	    !atomic_exchange_explicit(&b->ready_taken, true, memory_order_relaxed)) {
		ready_arrays(b);
	}
	/* the legs' array is first written here, on the build's threads */
	memset(lg, 0, sizeof(*lg));
	lg->call_id = b->leg_call_ids[i];
	lg->msgs = b->leg_msgs + b->leg_start[i];
	lg->n = b->leg_start[i + 1] - b->leg_start[i];
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
		for (uint32_t k = b->leg_start[i + 1]; k < b->leg_start[i + 2]; k++) {
			const char *p = (const char *)b->r->msgs[b->leg_msgs[k]];

			for (size_t o = 0; o < sizeof(struct eng_msg); o += 64) {
				__builtin_prefetch(p + o);
			}
		}
	}
	leg_analyse(b->r, &b->legs[i], b->capture_end);
	if (b->call_of[i] != NO_CALL) {
		/* a call of this leg alone (most): filled now, by the thread that has the leg in
		 * its cache. In a step of their own, any thread filled any call, and half of the
		 * legs' lines came from the other CPU: c5k's 5,000 calls took 0.45 ms at --cores 2
		 * (0.65 ms of CPU), 0.27 ms on one thread */
		call_item(b, b->call_of[i]);
	}
}

static void call_item(void *ctx, uint32_t j)
{
	struct build_ctx *b = ctx;
	uint32_t root = b->roots[j];
	const struct eng_call *c = &b->calls[j];

	call_fill(b->r, &b->calls[j], b->legs, b->members + b->start[root],
		  b->start[root + 1] - b->start[root], b->r->call_leg_ids + b->start[root],
		  b->r->call_msgs + b->msg_at[j]);
	/* j: its place in r->calls unless -c drops calls or two start at the same instant
	 * (eng_calls_build() marks them again then). The legs' step has just written each
	 * message's retransmission flag, on the same line */
	mark_call(b->r, c, (int32_t)j);
}

struct multi_job {
	struct build_ctx *b;
	const uint32_t *multi; /* the calls of several legs */
};

static void multi_item(void *ctx, uint32_t k)
{
	struct multi_job *mj = ctx;

	call_item(mj->b, mj->multi[k]);
}

/* Call @p i's messages marked once more, when the calls moved after call_item() (a write per
 * message, each a miss to memory, 6 ms on one thread for the 140,000 messages of 20,000
 * calls). */
static void call_mark(void *ctx, uint32_t i)
{
	struct eng_result *r = ctx;

	mark_call(r, &r->calls[i], (int32_t)i);
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

void eng_calls_build(struct eng_result *r, bool invite_only, uint32_t threads,
		     const uint32_t *call_id_hash)
{
	struct leg *legs;
	uint32_t nlegs = 0, ncalls = 0, nroots = 0;
	uint32_t *start, *members, *roots, *root_of, *msg_at;
	struct build_ctx b;
	int64_t capture_end = r->stats.last_ts_ns;
	uint32_t *msg_leg = sn_xmalloc_full((r->msg_count + 1u) * sizeof(*msg_leg)); /* leg of msg i */
	/* the legs' lists of messages; first the parts' scratch (group_part()) */
	uint32_t *leg_msgs = sn_xmalloc_full((r->msg_count + 1u) * sizeof(*leg_msgs));
	struct group_job gj = {r, NULL, 1, msg_leg, NULL, leg_msgs};
	uint32_t *leg_start, *parent, *call_of, *multi, nmulti = 0;
	const char **leg_call_ids;
	struct multi_job mj;
	bool moved;

	/* messages by Call-ID into legs, in parts on the build's threads (given the Call-IDs'
	 * hashes: the merge of several workers' arrays writes them) */
	if (threads > 1 && call_id_hash &&
	    r->msg_count >= sn_env_u32("SIPNAB_GROUP_MIN", 1, GROUP_PAR_MIN)) {
		gj.nparts = SN_MIN(threads, GROUP_PARTS_MAX);
		gj.hash = call_id_hash;
	}
	gj.parts = sn_xcalloc(gj.nparts, sizeof(*gj.parts));
	sn_pool_for(gj.nparts, gj.nparts, 1, group_part, &gj);
	nlegs = group_merge(gj.parts, gj.nparts, gj.hash, r->msg_count, msg_leg, &leg_call_ids,
			    &parent);
	sn_pool_for(gj.nparts, gj.nparts, 1, group_part_free, gj.parts);
	free(gj.parts);
	/* each leg's messages in order, all legs' lists in one array (one allocation where each
	 * leg grew a list of its own) */
	leg_start = sn_xmalloc_full((nlegs + 2u) * sizeof(*leg_start));
	group_by_key(msg_leg, r->msg_count, nlegs, leg_start, leg_msgs);
	leg_start[nlegs + 1] = leg_start[nlegs];
	free(msg_leg);
	/* group legs by root, each call's legs in first-seen order */
	root_of = sn_xmalloc_full((nlegs + 1u) * sizeof(*root_of));
	roots = sn_xcalloc(nlegs + 1u, sizeof(*roots));
	for (uint32_t i = 0; i < nlegs; i++) {
		root_of[i] = find(parent, i);
		if (root_of[i] == i) {
			roots[nroots++] = i;
		}
	}
	start = sn_xmalloc_full((nlegs + 1u) * sizeof(*start));
	members = sn_xcalloc_full(nlegs + 1u, sizeof(*members));
	group_by_key(root_of, nlegs, nlegs, start, members);
	/* where each call's messages go in r->call_msgs: its legs' messages, calls in root
	 * order (its legs' names go to r->call_leg_ids at start[root], the members' order) */
	msg_at = sn_xcalloc_full(nlegs + 1u, sizeof(*msg_at)); /* first per root, then per call */
	for (uint32_t i = 0; i < nlegs; i++) {
		msg_at[root_of[i]] += leg_start[i + 1] - leg_start[i];
	}
	for (uint32_t j = 0, at = 0; j < nroots; j++) {
		uint32_t n = msg_at[roots[j]];

		msg_at[j] = at; /* j <= roots[j]: the entries still to be read lie ahead */
		at += n;
	}
	/* the calls of one leg each are filled by the legs' step, the others after it */
	call_of = sn_xmalloc_full((nlegs + 1u) * sizeof(*call_of));
	multi = sn_xmalloc((nroots + 1u) * sizeof(*multi));
	for (uint32_t i = 0; i < nlegs; i++) {
		call_of[i] = NO_CALL;
	}
	for (uint32_t j = 0; j < nroots; j++) {
		if (start[roots[j] + 1] - start[roots[j]] == 1) {
			call_of[roots[j]] = j;
		} else {
			multi[nmulti++] = j;
		}
	}
	free(root_of);
	free(parent);
	/* the legs (each zeroed by leg_item()) and the calls (one per root, each zeroed by
	 * call_fill()), their pages faulted in by the legs' step (ready_arrays()), in huge pages
	 * from 2 MiB on (20,000 calls: 4 MiB of legs) */
	legs = sn_xmalloc_huge((nlegs + 1u) * sizeof(*legs));
	r->call_msgs = sn_xmalloc_huge((r->msg_count + 1u) * sizeof(*r->call_msgs));
	r->call_leg_ids = sn_xmalloc_huge((nlegs + 1u) * sizeof(*r->call_leg_ids));
	r->calls = sn_xmalloc_huge((nroots + 1u) * sizeof(*r->calls));
	b = (struct build_ctx){
		.r = r, .legs = legs, .leg_call_ids = leg_call_ids, .leg_msgs = leg_msgs,
		.leg_start = leg_start, .capture_end = capture_end, .roots = roots, .start = start,
		.members = members, .msg_at = msg_at, .calls = r->calls, .call_of = call_of,
		.nlegs = nlegs, .nroots = nroots,
	};
	atomic_init(&b.ready_taken, false);
	sn_pool_for(nlegs, par_threads(nlegs, threads), PAR_GRAIN, leg_item, &b);
	if (!atomic_load_explicit(&b.ready_taken, memory_order_relaxed)) {
		ready_arrays(&b); /* no legs */
	}
	memset(&legs[nlegs], 0, sizeof(*legs));
	memset(&r->calls[nroots], 0, sizeof(*r->calls));
	free(leg_start);
	free(leg_call_ids);
	free(call_of);
	/* the calls of several legs (X-Call-ID), in parallel; then the ones -c leaves out are
	 * dropped */
	mj.b = &b;
	mj.multi = multi;
	sn_pool_for(nmulti, par_threads(nmulti, threads), PAR_GRAIN, multi_item, &mj);
	free(multi);
	free(msg_at);
	for (uint32_t j = 0; j < nroots; j++) {
		struct eng_call *c = &r->calls[j];

		if (invite_only && !c->is_invite) {
			mark_call(r, c, -1); /* its messages belong to no call */
			continue;
		}
		if (ncalls != j) {
			r->calls[ncalls] = *c;
		}
		ncalls++;
	}
	r->call_count = ncalls;
	/* the calls come in order of their root leg, which is that of their first message: in
	 * order already, unless two start at the same time (a glibc qsort() of c5k's 5,000 took
	 * 0.15-0.2 ms; it is a merge sort, stable like this) */
	moved = ncalls != nroots;
	for (uint32_t i = 1; i < ncalls; i++) {
		if (call_cmp(&r->calls[i - 1], &r->calls[i]) > 0) {
			qsort(r->calls, ncalls, sizeof(*r->calls), call_cmp);
			moved = true;
			break;
		}
	}
	if (moved) {
		sn_pool_for(ncalls, par_threads(ncalls, threads), PAR_GRAIN, call_mark, r);
	}
	for (uint32_t i = 0; i < ncalls; i++) {
		r->dialogs += r->calls[i].dialogs;
		r->by_state[r->calls[i].state]++;
	}
	free(leg_msgs);
	free(legs);
	free(start);
	free(members);
	free(roots);
}
