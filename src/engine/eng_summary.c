/*
 * eng_summary.c - keep a parsed SIP message as a struct eng_msg: the fields that transaction,
 * dialog and call reconstruction, stream association and the report need, copied out of the
 * packet ("promote at the ownership boundary", STYLE.md §4) into the worker's keep arena, plus
 * the message bytes for the ladder.
 *
 * Bounds: the keep arena has a byte budget (eng_config.keep_bytes); a message that does not fit
 * is counted in stats.msgs_dropped and not kept. SDP media beyond ENG_SDP_MAX_MEDIA lines are
 * not kept (the first ones are); every format of a kept line is, in an array of its size.
 * Thread: the worker that owns the engine.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <glib.h>

#include "sipnab/eng_result.h"
#include "sipnab/sdp.h"
#include "sipnab/sip_msg.h"
#include "sipnab/sn_hash.h"

#include "eng_int.h"

/* every format the parser takes is kept (keep_sdp()), and a kept line counts them in a byte */
_Static_assert(ENG_SDP_MAX_FMTS >= SDP_MAX_FORMATS, "ENG_SDP_MAX_FMTS below the parser's bound");
_Static_assert(ENG_SDP_MAX_FMTS <= UINT8_MAX, "eng_sdp_media.fmt_count is a uint8_t");

/* Copy a slice as a NUL-terminated string into the keep arena; "" for an empty slice. */
static enum sn_status keep_str(struct eng *e, struct sn_slice s, const char **out)
{
	struct sn_slice copy;
	enum sn_status st;

	if (s.len == 0) {
		*out = "";
		return SN_OK;
	}
	st = sn_arena_dup(&e->keep, s, &copy);
	if (st == SN_OK) {
		*out = (const char *)copy.ptr;
	}
	return st;
}

static void copy_name(char *dst, size_t cap, struct sn_slice s)
{
	size_t n = SN_MIN((size_t)s.len, cap - 1);

	if (n) {
		memcpy(dst, s.ptr, n);
	}
	dst[n] = '\0';
}

/* Extract the media endpoints of the message's SDP, if any, into the keep arena. */
static enum sn_status keep_sdp(struct eng *e, const struct sip_msg *msg, struct eng_msg *m)
{
	struct sn_slice body;
	struct sdp_session sess;
	struct sn_arena *tmp = &e->sdp;
	enum sn_status st;
	uint32_t n, nf;

	if (sip_msg_find_sdp(msg, &body) != SN_OK) {
		return SN_OK;
	}
	sn_arena_reset(tmp);
	if (sdp_parse(&sess, tmp, body.ptr, body.len) != SN_OK || sess.media_count == 0) {
		return SN_OK;
	}
	n = SN_MIN(sess.media_count, (uint32_t)ENG_SDP_MAX_MEDIA);
	st = sn_arena_alloc(&e->keep, n * sizeof(*m->media), (void **)&m->media);
	if (st != SN_OK) {
		return st;
	}
	m->media_count = (uint8_t)n;
	for (uint32_t i = 0; i < n; i++) {
		const struct sdp_media *sm = &sess.media[i];
		const struct sdp_conn *c = sdp_media_conn(&sess, sm);
		struct eng_sdp_media *em = &m->media[i];

		if (c) {
			em->addr = c->addr;
		}
		em->port = sm->port;
		em->rtp = sm->rtp;
		em->rtcp_mux = sm->rtcp_mux;
		if (sm->rtcp_mux) {
			em->rtcp_port = sm->port;
		} else if (sm->rtcp_port) {
			em->rtcp_port = sm->rtcp_port;
		} else if (sm->port) {
			em->rtcp_port = (uint16_t)(sm->port + 1);
		}
		nf = SN_MIN(sm->format_count, (uint32_t)ENG_SDP_MAX_FMTS);
		if (nf) {
			st = sn_arena_alloc(&e->keep, nf * sizeof(*em->fmts), (void **)&em->fmts);
			if (st != SN_OK) {
				return st;
			}
		}
		for (uint32_t f = 0; f < nf; f++) {
			const struct sdp_format *sf = &sm->formats[f];
			struct eng_sdp_fmt *ef = &em->fmts[em->fmt_count++];
			int rate;

			ef->pt = (int16_t)sf->pt;
			rate = sf->pt >= 0 ? sdp_media_clock_rate(sm, sf->pt) : -1;
			ef->clock_rate = rate > 0 ? (uint32_t)rate : 0;
			if (sf->pt >= 0) {
				copy_name(ef->name, sizeof(ef->name), sdp_media_codec_name(sm, sf->pt));
			} else {
				copy_name(ef->name, sizeof(ef->name), sf->token);
			}
		}
	}
	return SN_OK;
}

/*
 * Bounds per worker (eng_config.max_calls, call_max_msgs): a Call-ID first seen when
 * max_calls Call-IDs are already kept is not kept (calls_dropped, and its messages count in
 * msgs_dropped); a Call-ID that already has call_max_msgs messages keeps no more
 * (msgs_dropped). Returns false when the message is not to be kept.
 *
 * With eng_config.rotate (-R, sngrep's "rotate calls when capture limit have been reached")
 * the new Call-ID is kept instead and the worker's oldest kept Call-ID (the one it saw first)
 * is evicted: it counts in calls_dropped and calls_rotated, the messages it had kept in
 * msgs_dropped, and eng_msgs_compact() takes them out of e->msgs. A later message of an
 * evicted Call-ID starts it again as a new call, which evicts the then-oldest, as in sngrep.
 * Which calls survive depends on the order each worker saw them in, so on --cores, as with -l.
 */
#define CALL_LIMIT_DEFAULT 200000u
#define CALL_MSGS_DEFAULT  10000u
#define CALL_COUNT_DROPPED UINT32_MAX /* value of a Call-ID that is being dropped */
#define COMPACT_MIN_MSGS   1024u      /* evicted messages below this are not worth a pass */
#define MSGS_POPULATE_STEP 4096u      /* messages faulted in ahead at a time */

/*
 * Per Call-ID state of a worker (the value of eng.calls): how many messages were kept, and the
 * last kept copy of the strings that the messages of one call repeat, so a call's seven or
 * more messages share one copy of its Call-ID, URIs, tags and Via sent-by.
 */
struct call_cache {
	uint32_t count;   /* messages kept; CALL_COUNT_DROPPED when the Call-ID is dropped */
	uint32_t life;    /* number of this kept life in the worker (eng.lives) */
	struct call_cache *next; /* the next younger kept Call-ID; or the next in eng.cc_free */
	const char *key;  /* the hash key: the Call-ID, cut to 255 bytes */
	const char *call_id, *from_uri, *to_uri, *from_tag, *to_tag, *ruri, *sent_by, *reason;
	const char *hashed; /* the copy of the Call-ID that hash is of (call_id_hash()) */
	uint32_t hash;
};

/*
 * Does message life number @p life belong to an evicted Call-ID? Lives are evicted in the
 * order they started, so the live ones are [lives_evicted, lives); comparing modulo 2^32
 * keeps that true when the numbers wrap.
 */
static bool life_is_evicted(const struct eng *e, uint32_t life)
{
	return (uint32_t)(life - e->lives_evicted) >= (uint32_t)(e->lives - e->lives_evicted);
}

void eng_msgs_compact(struct eng *e)
{
	uint32_t n = 0;

	if (!e->msgs_evicted) {
		return;
	}
	for (uint32_t i = 0; i < e->msg_count; i++) {
		if (life_is_evicted(e, e->msgs[i].life)) {
			continue;
		}
		if (n != i) {
			e->msgs[n] = e->msgs[i];
		}
		n++;
	}
	e->msg_count = n;
	e->msgs_evicted = 0;
	e->msgs_populated = n;
	/* the merge's keys (eng_msgs_sort()) no longer match: it reads the messages instead */
	free(e->msg_keys);
	e->msg_keys = NULL;
	/* give memory back when the array is mostly empty (rotation bounds memory over a long
	 * capture); keep room to grow so that this does not repeat at every eviction */
	if (e->msg_cap > 1024 && n < e->msg_cap / 4) {
		e->msg_cap = SN_MAX(1024u, n * 2);
		e->msgs = sn_xrealloc(e->msgs, e->msg_cap * sizeof(*e->msgs));
	}
}

/*
 * Evict the oldest kept Call-ID (rotate). O(1): its messages are recognised later by their
 * life number; the array is compacted once they are at least half of it, so each message is
 * moved a bounded number of times on average. The entry goes to cc_free for the next new
 * Call-ID; its strings stay in the keep arena, which frees nothing one by one.
 */
static void evict_oldest(struct eng *e)
{
	struct call_cache *cc = e->oldest;

	e->oldest = cc->next;
	if (!e->oldest) {
		e->youngest = NULL;
	}
	g_hash_table_remove(e->calls, cc->key);
	e->lives_evicted++;
	e->st.calls_dropped++;
	e->st.calls_rotated++;
	e->st.msgs_dropped += cc->count;
	e->msgs_evicted += cc->count;
	cc->next = e->cc_free;
	e->cc_free = cc;
	if (e->msgs_evicted >= COMPACT_MIN_MSGS && e->msgs_evicted >= e->msg_count / 2) {
		eng_msgs_compact(e);
	}
}

/* A call_cache for a Call-ID that is to be kept: a recycled one, else a new one. */
static struct call_cache *cache_new(struct eng *e)
{
	struct call_cache *cc = e->cc_free;

	if (cc) {
		e->cc_free = cc->next;
		memset(cc, 0, sizeof(*cc));
		return cc;
	}
	return sn_arena_alloc(&e->keep, sizeof(*cc), (void **)&cc) == SN_OK ? cc : NULL;
}

/* The cache of @p call_id, or NULL when the message is not to be kept. */
static struct call_cache *within_bounds(struct eng *e, struct sn_slice call_id)
{
	uint32_t max_calls = e->cfg.max_calls ? e->cfg.max_calls : CALL_LIMIT_DEFAULT;
	uint32_t max_msgs = e->cfg.call_max_msgs ? e->cfg.call_max_msgs : CALL_MSGS_DEFAULT;
	char key[256];
	size_t n = SN_MIN((size_t)call_id.len, sizeof(key) - 1);
	struct call_cache *cc;

	if (!e->calls) {
		e->calls = g_hash_table_new(sn_str_hash, g_str_equal);
	}
	if (n) {
		memcpy(key, call_id.ptr, n);
	}
	key[n] = '\0';
	cc = g_hash_table_lookup(e->calls, key);
	if (!cc) {
		struct sn_slice copy;
		bool full = g_hash_table_size(e->calls) - e->calls_dropped_kept >= max_calls;
		bool keep = !full || e->cfg.rotate;

		if (!keep) {
			e->st.calls_dropped++;
		}
		/* remember dropped Call-IDs too (a bounded number) so each counts once; the key is
		 * copied first so that a full budget evicts nothing */
		if ((keep || e->calls_dropped_kept < SN_MAX(max_calls, 65536u)) &&
		    sn_arena_dup(&e->keep, sn_slice_make(key, n), &copy) == SN_OK) {
			if (keep && full && e->oldest) {
				evict_oldest(e);
			}
			cc = cache_new(e);
		}
		if (cc) {
			cc->count = keep ? 0 : CALL_COUNT_DROPPED;
			cc->key = (const char *)copy.ptr;
			g_hash_table_insert(e->calls, (gpointer)copy.ptr, cc);
			e->calls_dropped_kept += keep ? 0 : 1;
			if (call_id.len == n) {
				cc->call_id = cc->key;
			}
			if (keep) {
				cc->life = e->lives++;
				if (e->youngest) {
					e->youngest->next = cc;
				} else {
					e->oldest = cc;
				}
				e->youngest = cc;
			}
		}
		if (!keep || !cc) {
			return NULL;
		}
	}
	if (cc->count == CALL_COUNT_DROPPED || cc->count >= max_msgs) {
		return NULL;
	}
	cc->count++;
	return cc;
}

/* keep_str() through a one-entry cache: equal to the cached copy -> share it. */
static enum sn_status keep_cached(struct eng *e, struct sn_slice s, const char **slot,
				  const char **out)
{
	enum sn_status st;

	if (*slot && s.len && memcmp(*slot, s.ptr, s.len) == 0 && (*slot)[s.len] == '\0') {
		*out = *slot;
		return SN_OK;
	}
	st = keep_str(e, s, out);
	if (st == SN_OK && s.len) {
		*slot = *out;
	}
	return st;
}

/* sn_str_hash() of @p call_id, the message's copy of its Call-ID: once per copy that the call
 * shares (eng_msg.call_id_hash) */
static uint32_t call_id_hash(struct call_cache *cc, const char *call_id)
{
	if (call_id != cc->call_id) {
		return sn_str_hash(call_id);
	}
	if (cc->hashed != call_id) {
		cc->hash = sn_str_hash(call_id);
		cc->hashed = call_id;
	}
	return cc->hash;
}

/*
 * Everything of one message that needs arena space; SN_ELIMIT when the budget is exhausted.
 * The parse already split From/To (tag and URI text) and the top Via; the other headers wanted
 * here are picked up in one pass over the header index.
 */
static enum sn_status keep_fields(struct eng *e, struct call_cache *cc,
				  const struct sip_msg *msg, struct eng_msg *m, const uint8_t *raw,
				  size_t raw_len)
{
	const struct sip_hdr *top_via = NULL;
	const struct sip_hdr *user_agent = NULL;
	const struct sip_hdr *x_call_id = NULL;
	const struct sip_hdr *x_cid = NULL;
	struct sn_slice raw_copy;
	char sent_by[300];
	enum sn_status st = SN_OK;

	for (uint32_t i = 0; i < msg->hdr_count; i++) {
		const struct sip_hdr *h = &msg->hdrs[i];

		switch (h->id) {
		case SIP_HDR_VIA:
			top_via = top_via ? top_via : h;
			break;
		case SIP_HDR_USER_AGENT:
			user_agent = user_agent ? user_agent : h;
			break;
		case SIP_HDR_OTHER:
			if (!x_call_id && h->name.len == 9 &&
			    sn_slice_caseeq_str(h->name, "X-Call-ID")) {
				x_call_id = h;
			} else if (!x_cid && h->name.len == 5 &&
				   sn_slice_caseeq_str(h->name, "X-CID")) {
				x_cid = h;
			}
			break;
		default:
			break;
		}
	}
	if (!x_call_id) {
		x_call_id = x_cid;
	}

	/* known methods are static names; the rest is shared with the call's other messages */
	if (m->method != SIP_METHOD_UNKNOWN) {
		m->method_name = sip_method_name((enum sip_method)m->method);
	} else if (msg->is_request) {
		st = keep_str(e, msg->method_name, &m->method_name);
	} else {
		st = keep_str(e, msg->cseq_method_name, &m->method_name);
	}
	st = st ? st : keep_cached(e, msg->reason, &cc->reason, &m->reason);
	st = st ? st : keep_cached(e, msg->ruri, &cc->ruri, &m->ruri);
	st = st ? st : keep_cached(e, msg->call_id, &cc->call_id, &m->call_id);
	if (!st) {
		m->call_id_hash = call_id_hash(cc, m->call_id);
	}
	st = st ? st : keep_cached(e, msg->from_tag, &cc->from_tag, &m->from_tag);
	st = st ? st : keep_cached(e, msg->to_tag, &cc->to_tag, &m->to_tag);
	st = st ? st : keep_cached(e, msg->from_uri, &cc->from_uri, &m->from_uri);
	st = st ? st : keep_cached(e, msg->to_uri, &cc->to_uri, &m->to_uri);
	m->x_call_id = m->branch = m->sent_by = m->top_via = "";
	if (!st && x_call_id) {
		st = keep_str(e, x_call_id->value, &m->x_call_id);
	}
	if (!st && msg->via_count > 0) {
		const struct sip_via *v = &msg->via;
		size_t n = SN_MIN((size_t)v->host.len, sizeof(sent_by) - 8);

		if (n) {
			memcpy(sent_by, v->host.ptr, n);
		}
		if (v->has_port) {
			/* ":port" without snprintf(): this runs for every message */
			char digits[8];
			char *d = sn_u64_digits(v->port, digits + sizeof(digits));
			size_t nd = (size_t)(digits + sizeof(digits) - d);

			sent_by[n++] = ':';
			memcpy(sent_by + n, d, nd);
			n += nd;
		}
		st = keep_str(e, v->branch, &m->branch);
		st = st ? st : keep_cached(e, sn_slice_make(sent_by, n), &cc->sent_by, &m->sent_by);
		/* the whole top Via only serves RFC 2543 matching, for branches without the
		 * RFC 3261 magic cookie */
		if (!st && top_via && !(v->branch.len >= 7 && memcmp(v->branch.ptr, "z9hG4bK", 7) == 0)) {
			st = keep_str(e, top_via->value, &m->top_via);
		}
	}
	/* the user agent of the requests that start something; responses and in-dialog
	 * requests repeat it */
	m->user_agent = "";
	if (!st && user_agent && msg->is_request && !msg->to_tag.len) {
		st = keep_str(e, user_agent->value, &m->user_agent);
	}
	st = st ? st : keep_sdp(e, msg, m);
	if (st) {
		return st;
	}
	if (raw >= e->cur_data && raw + raw_len <= e->cur_data + e->cur_len &&
	    (!e->cur_transient || (e->cfg.input_map && e->cur_file == 0))) {
		/* the message lies in the record itself (UDP, SCTP, one TCP segment): a mapped
		 * input keeps those bytes for as long as the result lives, so refer to them (in
		 * the mapping, at the record's place in the file, when the file is read in
		 * windows: its pages are read in only if a view shows the message); streamed
		 * input (gzip, pipes) gives them back, so those are copied */
		m->raw = e->cur_transient ? e->cfg.input_map + e->cur_offset + e->cur_data_at +
						    (size_t)(raw - e->cur_data)
					  : raw;
		m->raw_len = (uint32_t)raw_len;
		return SN_OK;
	}
	if (!e->cfg.copy_messages) {
		m->raw = NULL;
		m->raw_len = 0;
		return SN_OK;
	}
	st = sn_arena_dup(&e->keep, sn_slice_make(raw, raw_len), &raw_copy);
	if (!st) {
		m->raw = raw_copy.ptr;
		m->raw_len = raw_copy.len;
	}
	return st;
}

void eng_msg_record(struct eng *e, enum eng_transport tr, const struct cap_packet *pkt,
		    const struct sip_msg *msg, const uint8_t *raw)
{
	struct eng_msg *m;
	struct call_cache *cc = within_bounds(e, msg->call_id);

	if (!cc) {
		e->st.msgs_dropped++;
		return;
	}
	if (e->msg_count == e->msg_cap) {
		/* the array starts with cfg.msgs_reserve of address space (see eng_run.c); if
		 * that cannot be had, it starts small */
		if (!e->msgs && e->cfg.msgs_reserve >= 1024 * sizeof(*e->msgs) &&
		    (e->msgs = sn_malloc_huge(e->cfg.msgs_reserve)) != NULL) {
			e->msg_cap = (uint32_t)(e->cfg.msgs_reserve / sizeof(*e->msgs));
		} else {
			e->msg_cap = e->msg_cap ? e->msg_cap * 2 : 1024;
			e->msgs = sn_xgrow(e->msgs, e->msg_count * sizeof(*e->msgs),
					   e->msg_cap * sizeof(*e->msgs));
		}
		e->msgs_populated = e->msg_count; /* the array may have moved */
	}
	/* the array is filled message by message: its next stretch (up to ~860 KiB) is faulted
	 * in with one call instead of a page fault every 19 messages */
	sn_mem_populate_ahead(e->msgs, sizeof(*e->msgs), e->msg_count, e->msg_cap, 64u,
			      MSGS_POPULATE_STEP, &e->msgs_populated);
	m = &e->msgs[e->msg_count];
	memset(m, 0, sizeof(*m));
	m->ts_ns = pkt->ts_ns;
	m->file_index = e->cur_file;
	m->offset = e->cur_offset;
	m->sub = e->cur_sub++;
	m->src = pkt->src;
	m->dst = pkt->dst;
	m->sport = pkt->sport;
	m->dport = pkt->dport;
	m->transport = (uint8_t)tr;
	m->is_request = msg->is_request;
	m->method = (uint8_t)(msg->is_request ? msg->method : msg->cseq_method);
	m->status = msg->status_code;
	m->cseq = msg->cseq;
	m->call = -1;
	m->life = cc->life;
	if (keep_fields(e, cc, msg, m, raw, msg->msg_len) != SN_OK) {
		/* count holds kept messages only: eviction moves exactly those to msgs_dropped */
		cc->count--;
		e->st.msgs_dropped++;
		return;
	}
	e->msg_count++;
}

void eng_msgs_free(struct eng *e)
{
	if (e->calls) {
		g_hash_table_destroy(e->calls);
		e->calls = NULL;
	}
	/* the entries live in the keep arena, which the result may have taken */
	e->oldest = e->youngest = e->cc_free = NULL;
	free(e->msgs);
	e->msgs = NULL;
	free(e->msg_keys);
	e->msg_keys = NULL;
	e->msg_count = e->msg_cap = e->msgs_populated = 0;
}
