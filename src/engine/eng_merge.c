/*
 * eng_merge.c - build the struct eng_result from finished workers, deterministically.
 *
 * Steps (eng_result_build()):
 *   1. sum the workers' counters; drop the messages of calls evicted by rotation; move their
 *      kept message data (the keep arenas) and their message arrays into the result;
 *   2. order every SIP message by (time, input file, record offset, message number in record)
 *      (r->msgs: pointers into the workers' arrays);
 *   3. reconstruct calls from the sorted messages (eng_call.c);
 *   4. turn candidate RTP flows into streams: tie each to the SDP endpoints that announced it
 *      (either side's offer/answer, the latest announcement before its first packet, and every
 *      call whose announcement overlaps its life), keep unannounced ones only when they pass the
 *      sequence heuristic, replay their packets through rtp_stream with the clock rates and
 *      telephone-event type the SDP gives, estimate MOS (each worker's flows on a thread of
 *      their own), each stream written in its place in the order (first packet, source,
 *      destination, SSRC); attach RTCP reports;
 *   5. link calls to their streams.
 * Nothing here depends on how packets were spread over workers, so `--cores N` equals
 * `--cores 1` byte for byte. Steps 2-5 run their parallel parts on as many threads as there
 * were workers (sn_pool_for(): any thread may take any part).
 * Ownership: the result owns copies or moved storage; the engines keep only what they free.
 */
#include "config.h"

#include "sipnab/eng_result.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sipnab/rtp_mos.h"
#include "sipnab/sdp.h"
#include "sipnab/sn_hash.h"
#include "sipnab/sn_pool.h"

#include "eng_int.h"

#define ASSOC_GRACE_NS (2LL * 1000000000LL) /* media may start this long before its SDP */
#define HEUR_MIN_PACKETS 3u

const char *eng_call_state_name(enum eng_call_state st)
{
	static const char *const names[] = {
		"CALL_SETUP", "RINGING", "IN_CALL", "COMPLETED", "CANCELLED",
		"REJECTED", "BUSY", "DIVERTED", "FAILED",
	};
	return (unsigned)st < SN_ARRAY_SIZE(names) ? names[st] : "UNKNOWN";
}

const char *eng_endpoint_str(const struct sn_addr *a, uint16_t port, char *buf, size_t len)
{
	char tmp[64];

	sn_addr_str(a, tmp, sizeof(tmp));
	if (a->family == 6) {
		snprintf(buf, len, "[%s]:%u", tmp, port);
	} else {
		/* "%s:%u" without printf: two of these per stream in every report */
		size_t n = strlen(tmp);
		char digits[8];
		char *d = sn_u64_digits(port, digits + sizeof(digits));
		size_t nd = (size_t)(digits + sizeof(digits) - d);

		if (n + 1 + nd + 1 > len) {
			snprintf(buf, len, "%s:%u", tmp, port);
			return buf;
		}
		memcpy(buf, tmp, n);
		buf[n++] = ':';
		memcpy(buf + n, d, nd);
		buf[n + nd] = '\0';
	}
	return buf;
}

static int msg_cmp(const void *pa, const void *pb)
{
	const struct eng_msg *a = pa;
	const struct eng_msg *b = pb;

	if (a->ts_ns != b->ts_ns) {
		return a->ts_ns < b->ts_ns ? -1 : 1;
	}
	if (a->file_index != b->file_index) {
		return a->file_index < b->file_index ? -1 : 1;
	}
	if (a->offset != b->offset) {
		return a->offset < b->offset ? -1 : 1;
	}
	if (a->sub != b->sub) {
		return a->sub < b->sub ? -1 : 1;
	}
	return 0;
}

/*
 * With eng_config.merge_keys, the sorted messages' times and Call-ID hashes go into an array
 * of their own (e->msg_keys), on the worker's thread: the merge of several workers' arrays
 * (merge_part()) read the time of every message and its hash from the messages themselves
 * before, two lines of each of the 216-byte messages that the other CPU wrote, 4.5 MiB for
 * c5k's 35,000. It reads 16 bytes a message now, and both whole messages only where two
 * times are equal. The keys hold while the messages stay as sorted: eng_msgs_compact() drops
 * them when it takes messages out.
 */
static void msg_key_set(struct eng *e, uint32_t i)
{
	e->msg_keys[i].ts_ns = e->msgs[i].ts_ns;
	e->msg_keys[i].call_id_hash = e->msgs[i].call_id_hash;
}

/* Message @p i's time and Call-ID hash: from its key when its worker wrote keys. */
static int64_t msg_ts_at(const struct eng *e, uint32_t i)
{
	return e->msg_keys ? e->msg_keys[i].ts_ns : e->msgs[i].ts_ns;
}

static uint32_t msg_hash_at(const struct eng *e, uint32_t i)
{
	return e->msg_keys ? e->msg_keys[i].call_id_hash : e->msgs[i].call_id_hash;
}

void eng_msgs_sort(struct eng *e)
{
	if (!e->msgs_sorted) {
		uint32_t i = 1;
		bool keys;

		eng_msgs_compact(e);
		keys = e->cfg.merge_keys && e->msg_count > 0; /* as many as are left */
		if (keys) {
			e->msg_keys = sn_xmalloc(e->msg_count * sizeof(*e->msg_keys));
			msg_key_set(e, 0);
		}
		/* a worker's messages come in capture order, so usually in time order already:
		 * one pass checks that before paying for a sort (and writes the keys) */
		while (i < e->msg_count && msg_cmp(&e->msgs[i - 1], &e->msgs[i]) < 0) {
			if (keys) {
				msg_key_set(e, i);
			}
			i++;
		}
		if (i < e->msg_count) {
			qsort(e->msgs, e->msg_count, sizeof(*e->msgs), msg_cmp);
			for (uint32_t k = 0; keys && k < e->msg_count; k++) {
				msg_key_set(e, k);
			}
		}
		e->msgs_sorted = true;
	}
}

/*
 * The result's message order: r->msgs[k] points to the k-th message of the order of sorting
 * every worker's messages together (the key is unique: a record reaches one worker). The
 * messages stay where their workers wrote them; the arrays move into r->msg_store. With one
 * worker r->msgs is its array in order. With several, the order is a merge of their sorted
 * arrays, cut into as many parts as threads: part t holds the messages from pivot t to pivot
 * t+1, pivots taken at even ranks of the longest worker's array, and each worker's share of a
 * part found by binary search. Every part is a k-way merge of its own ranges into its own
 * stretch of r->msgs, so the parts are independent and the order is the same for any number
 * of parts. (The merge copied the 216-byte messages into a new array before: at two workers
 * that was 1,840 fresh pages for c5k's 35,000 messages, whose faults took most of its 3.5 ms;
 * a pointer is 8 bytes.) With several workers the merge also writes each message's
 * call_id_hash in that order, for the grouping by Call-ID in parts (eng_calls_build()):
 * order_msgs() returns that array (the caller frees it), NULL with one worker.
 */
#define MERGE_PART_MIN 4096u /* messages per part below which one thread merges */

struct merge_job {
	struct eng_result *r;
	struct eng *const *engines;
	size_t count;
	uint32_t *cut;  /* (parts + 1) x count: worker i's part t is [cut[t][i], cut[t+1][i]) */
	uint32_t *base; /* parts: where part t starts in r->msgs */
	uint32_t *hash; /* each message's call_id_hash, in the order of r->msgs */
};

/* First index of e->msgs not less than @p key. */
static uint32_t msg_lower(const struct eng *e, const struct eng_msg *key)
{
	uint32_t lo = 0, hi = e->msg_count;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (msg_cmp(&e->msgs[mid], key) < 0) {
			lo = mid + 1;
		} else {
			hi = mid;
		}
	}
	return lo;
}

static void merge_part(void *ctx, uint32_t t)
{
	struct merge_job *j = ctx;
	const uint32_t *lo = j->cut + (size_t)t * j->count;
	const uint32_t *hi = lo + j->count;
	uint32_t *pos = sn_xcalloc(j->count + 1, sizeof(*pos));
	struct eng_msg **out = j->r->msgs + j->base[t];
	uint32_t *hash = j->hash + j->base[t];
	uint32_t total = 0;

	for (size_t i = 0; i < j->count; i++) {
		pos[i] = lo[i];
		total += hi[i] - lo[i];
	}
	for (uint32_t k = 0; k < total; k++) {
		size_t best = SIZE_MAX;
		int64_t best_ts = 0;

		for (size_t i = 0; i < j->count; i++) {
			const struct eng *e = j->engines[i];
			int64_t ts;

			if (pos[i] >= hi[i]) {
				continue;
			}
			ts = msg_ts_at(e, pos[i]);
			if (best == SIZE_MAX || ts < best_ts ||
			    (ts == best_ts && msg_cmp(&e->msgs[pos[i]],
						      &j->engines[best]->msgs[pos[best]]) < 0)) {
				best = i;
				best_ts = ts;
			}
		}
		out[k] = &j->engines[best]->msgs[pos[best]];
		hash[k] = msg_hash_at(j->engines[best], pos[best]);
		pos[best]++;
	}
	free(pos);
}

static uint32_t *order_msgs(struct eng_result *r, struct eng *const *engines, size_t count,
			    uint32_t total)
{
	struct merge_job j = {r, engines, count, NULL, NULL, NULL};
	uint32_t parts = (uint32_t)SN_MAX((size_t)1, SN_MIN(count, (size_t)(total / MERGE_PART_MIN)));
	size_t big = 0;

	r->msgs = sn_xmalloc_full((total + 1u) * sizeof(*r->msgs));
	r->msg_count = total;
	if (count <= 1) {
		for (uint32_t k = 0; k < total; k++) {
			r->msgs[k] = &engines[0]->msgs[k];
		}
	} else {
		for (size_t i = 1; i < count; i++) {
			if (engines[i]->msg_count > engines[big]->msg_count) {
				big = i;
			}
		}
		j.cut = sn_xcalloc((parts + 1) * count, sizeof(*j.cut));
		j.base = sn_xcalloc(parts + 1, sizeof(*j.base));
		j.hash = sn_xmalloc_full((total + 1u) * sizeof(*j.hash));
		for (uint32_t t = 1; t <= parts; t++) {
			uint32_t *cut = j.cut + (size_t)t * count;

			for (size_t i = 0; i < count; i++) {
				if (t == parts) {
					cut[i] = engines[i]->msg_count;
				} else {
					const struct eng *e = engines[big];
					/* a pivot of the longest array; the pivots rise with t, so
					 * the cuts do too */
					uint64_t at = (uint64_t)e->msg_count * t / parts;

					cut[i] = msg_lower(engines[i], &e->msgs[at]);
				}
				j.base[t] += cut[i];
			}
		}
		sn_pool_for(parts, parts, 1, merge_part, &j);
		free(j.cut);
		free(j.base);
	}
	/* the arrays move into the result; the workers keep nothing of them */
	r->msg_store = sn_xcalloc(count + 1, sizeof(*r->msg_store));
	r->msg_store_count = count;
	for (size_t i = 0; i < count; i++) {
		r->msg_store[i] = engines[i]->msgs;
		engines[i]->msgs = NULL;
		eng_msgs_free(engines[i]);
	}
	return j.hash;
}

/* ---- SDP announcements ---- */

struct announce {
	struct sn_addr addr;
	uint16_t port;
	uint8_t media;  /* index into the message's media */
	int64_t ts_ns;
	uint32_t msg;   /* index into r->msgs */
	int32_t call;   /* the message's call (r->msgs[msg]->call), -1 if none */
	int64_t call_end; /* that call's end_ns (-1: not seen to end) */
};

/*
 * The announcements grouped by endpoint (address and port), each group in time order: group g
 * is ann[start[g]] .. ann[start[g + 1] - 1]. An open-addressing table maps an endpoint to its
 * group. (This replaced a qsort() of the announcements by endpoint and time, 1.8 ms of the
 * serial part of the build on c5k's 10,000: they are collected in message order, which is
 * time order, so grouping them keeps each group's order without comparing times.)
 */
struct ann_index {
	struct announce *ann;
	uint32_t *start;  /* groups + 1 entries */
	uint32_t *slots;  /* cap entries: group + 1, 0 when empty */
	uint32_t cap;     /* a power of two, at least twice the number of groups; 0 when none */
};

/* Hashes the bytes sn_addr_cmp() compares (four for IPv4), so endpoints it finds equal
 * always share a group; keyed (sn_hash.h), as the SDP of a capture names the endpoints. */
static uint32_t ep_hash(const struct sn_addr *a, uint16_t port)
{
	uint64_t h = sn_hash_step(sn_hash_key(), ((uint64_t)a->family << 56) ^ port);

	if (a->family == 4) {
		uint32_t w4;

		memcpy(&w4, a->bytes, 4);
		h = sn_hash_step(h, w4);
	} else {
		uint64_t w, v;

		memcpy(&w, a->bytes, 8);
		memcpy(&v, a->bytes + 8, 8);
		h = sn_hash_step(sn_hash_step(h, w), v);
	}
	return (uint32_t)sn_hash_final(h);
}

static bool ep_is(const struct announce *x, const struct sn_addr *a, uint16_t port)
{
	return x->port == port && sn_addr_cmp(&x->addr, a) == 0;
}

/* Slot of endpoint (a, port) in the table: its group's, or the empty one where it would go.
 * Group g's first announcement (where its endpoint can be read) is rep[g] while the table is
 * built, ann[first[g]] once it is. */
static uint32_t ep_slot(const struct ann_index *ai, const struct announce *const *rep,
			const struct announce *ann, const uint32_t *first, const struct sn_addr *a,
			uint16_t port)
{
	const uint32_t *slots = ai->slots;
	uint32_t cap = ai->cap;
	uint32_t h = ep_hash(a, port) & (cap - 1);

	while (slots[h]) {
		uint32_t g = slots[h] - 1;

		if (ep_is(rep ? rep[g] : &ann[first[g]], a, port)) {
			break;
		}
		h = (h + 1) & (cap - 1);
	}
	return h;
}

/* The announcements of endpoint (a, port): [*lo, *hi), empty when it made none. */
static void ann_range(const struct ann_index *ai, const struct sn_addr *a, uint16_t port,
		      size_t *lo, size_t *hi)
{
	uint32_t h;

	*lo = *hi = 0;
	if (ai->cap == 0) {
		return;
	}
	h = ep_slot(ai, NULL, ai->ann, ai->start, a, port);
	if (ai->slots[h]) {
		*lo = ai->start[ai->slots[h] - 1];
		*hi = ai->start[ai->slots[h]];
	}
}

/*
 * The announcements are collected from the messages in blocks of ANN_BLOCK messages, any block
 * on any thread (sn_pool_for()), each into its own array; read one block after the other,
 * the arrays give the announcements in message order, as one thread reading the messages in
 * turn would collect them. (Each message read is a miss to memory: at two workers their
 * arrays interleave in r->msgs. This step took 0.8-1.0 ms of c5k's build at two cores on one
 * thread, 0.5 ms now.)
 */
#define ANN_BLOCK 2048u /* SIPNAB_ANN_BLOCK sets it: tests and the fuzzer put small captures
			 * through several blocks */

struct ann_block {
	struct announce *v;
	size_t n, cap;
};

struct ann_collect {
	const struct eng_result *r;
	struct ann_block *blocks;
	uint32_t block; /* messages per block */
};

static void ann_collect_block(void *ctx, uint32_t b)
{
	struct ann_collect *ac = ctx;
	const struct eng_result *r = ac->r;
	/* filled in a local: the blocks lie side by side, and each announcement writes its
	 * block's count (two threads on two neighbouring blocks would pass the line between
	 * them) */
	struct ann_block blk = {0}, *out = &blk;
	uint32_t end = (uint32_t)SN_MIN((uint64_t)(b + 1) * ac->block, (uint64_t)r->msg_count);

	for (uint32_t i = b * ac->block; i < end; i++) {
		const struct eng_msg *m = r->msgs[i];

		if (i + 16 < end) {
			/* the line of the message 16 ahead that this loop reads (media_count,
			 * media, retransmission and call share it unless it straddles two) */
			const char *far = (const char *)r->msgs[i + 16];

			__builtin_prefetch(far + offsetof(struct eng_msg, media_count));
			__builtin_prefetch(far + offsetof(struct eng_msg, call));
		}
		if (i + 8 < end && r->msgs[i + 8]->media) {
			__builtin_prefetch(r->msgs[i + 8]->media);
		}
		for (uint8_t j = 0; j < m->media_count; j++) {
			const struct eng_sdp_media *md = &m->media[j];
			struct announce *a;

			if (!md->rtp || md->port == 0 || md->addr.family == 0 ||
			    m->retransmission) {
				continue;
			}
			if (out->n == out->cap) {
				out->cap = out->cap ? out->cap * 2 : 256;
				out->v = sn_xrealloc(out->v, out->cap * sizeof(*out->v));
			}
			a = &out->v[out->n++];
			a->addr = md->addr;
			a->port = md->port;
			a->ts_ns = m->ts_ns;
			a->msg = i;
			a->media = j;
			/* what the lookups ask of the call, copied while the messages are read in
			 * order: they then touch neither the message nor the call (both far
			 * apart in memory by then) */
			a->call = m->call;
			a->call_end = m->call >= 0 ? r->calls[m->call].end_ns : -1;
		}
	}
	ac->blocks[b] = blk;
}

static void ann_index_build(const struct eng_result *r, struct ann_index *ai, uint32_t threads)
{
	uint32_t block = sn_env_u32("SIPNAB_ANN_BLOCK", 1, ANN_BLOCK);
	uint32_t nblocks = (uint32_t)(((uint64_t)r->msg_count + block - 1) / block);
	struct ann_collect ac = {r, sn_xcalloc(nblocks + 1u, sizeof(*ac.blocks)), block};
	size_t n = 0, i;
	const struct announce **rep;
	uint32_t *group, *fill, ngroups = 0;

	memset(ai, 0, sizeof(*ai));
	sn_pool_for(nblocks, nblocks > 1 ? threads : 1, 1, ann_collect_block, &ac);
	for (uint32_t b = 0; b < nblocks; b++) {
		n += ac.blocks[b].n;
	}
	if (n == 0) {
		free(ac.blocks);
		return;
	}
	ai->cap = 16;
	while (ai->cap < 2 * n) {
		ai->cap *= 2;
	}
	ai->slots = sn_xcalloc(ai->cap, sizeof(*ai->slots));
	group = sn_xmalloc_full(n * sizeof(*group));
	rep = sn_xmalloc(n * sizeof(*rep));
	ai->start = sn_xcalloc(n + 1, sizeof(*ai->start));
	/* the blocks in order are the announcements in message order (i counts them): read in
	 * place, not joined into one array first (fresh pages: 0.25 ms of faults on c5k) */
	i = 0;
	for (uint32_t b = 0; b < nblocks; b++) {
		for (size_t k = 0; k < ac.blocks[b].n; k++, i++) {
			const struct announce *x = &ac.blocks[b].v[k];
			uint32_t h = ep_slot(ai, rep, NULL, NULL, &x->addr, x->port);

			if (!ai->slots[h]) {
				rep[ngroups] = x;
				ai->slots[h] = ++ngroups;
			}
			group[i] = ai->slots[h] - 1;
			ai->start[group[i] + 1]++;
		}
	}
	free(rep);
	for (uint32_t g = 0; g < ngroups; g++) {
		ai->start[g + 1] += ai->start[g];
	}
	/* place them group by group, each group in the order met (time order) */
	fill = sn_xmalloc((ngroups + 1u) * sizeof(*fill));
	memcpy(fill, ai->start, ngroups * sizeof(*fill));
	ai->ann = sn_xmalloc_full(n * sizeof(*ai->ann));
	i = 0;
	for (uint32_t b = 0; b < nblocks; b++) {
		for (size_t k = 0; k < ac.blocks[b].n; k++, i++) {
			ai->ann[fill[group[i]]++] = ac.blocks[b].v[k];
		}
		free(ac.blocks[b].v);
	}
	free(ac.blocks);
	free(fill);
	free(group);
}

static void ann_index_free(struct ann_index *ai)
{
	free(ai->ann);
	free(ai->start);
	free(ai->slots);
}

/* ---- streams ---- */

struct flow_ref {
	const struct eng_flow *f;
	const struct eng *e;
};

/*
 * The announcement of the endpoint in force at time @p t: the latest one made at or before t,
 * unless its call had ended before t (endpoints are reused by later calls); failing that
 * (media racing ahead of its SDP), the first one made within the grace period.
 */
/* Has the call that made announcement @p a ended (plus the grace) before time @p t? */
static bool ann_stale(const struct announce *a, int64_t t)
{
	return a->call >= 0 && a->call_end >= 0 && a->call_end + ASSOC_GRACE_NS < t;
}

static const struct announce *ann_at(const struct ann_index *ai, const struct sn_addr *addr,
				     uint16_t port, int64_t t)
{
	const struct announce *best = NULL;
	size_t i, end;

	ann_range(ai, addr, port, &i, &end);
	for (; i < end; i++) {
		const struct announce *a = &ai->ann[i];

		if (a->ts_ns <= t) {
			/* an endpoint announced by a call that is over no longer announces */
			best = ann_stale(a, t) ? NULL : a;
		} else {
			if (!best && a->ts_ns <= t + ASSOC_GRACE_NS) {
				best = a;
			}
			break;
		}
	}
	return best;
}

static bool heuristic_ok(const struct eng_flow *f)
{
	uint32_t steps = 0;

	if (f->total < HEUR_MIN_PACKETS) {
		return false;
	}
	steps = f->seq_steps;
	return steps * 2 >= f->total - 1;
}

/* Codec facts for a stream from an SDP media line (or none). */
static void stream_codec(struct eng_stream *s, const struct eng_sdp_media *md, int *te_pt,
			 int32_t *dyn_clock)
{
	const char *name = NULL;

	*te_pt = RTP_PT_NONE;
	*dyn_clock = -1;
	if (md) {
		for (uint8_t i = 0; i < md->fmt_count; i++) {
			const struct eng_sdp_fmt *ft = &md->fmts[i];
			if (strcmp(ft->name, "telephone-event") == 0 ||
			    strcmp(ft->name, "TELEPHONE-EVENT") == 0) {
				*te_pt = ft->pt;
			}
			if (ft->pt == s->pt) {
				name = ft->name[0] ? ft->name : NULL;
				if (ft->clock_rate) {
					s->clock_rate = ft->clock_rate;
				}
			}
		}
	}
	if (!name && s->pt >= 0) {
		name = sdp_static_codec_name(s->pt);
	}
	if (!s->clock_rate && s->pt >= 0 && sdp_static_clock_rate(s->pt) > 0) {
		s->clock_rate = (uint32_t)sdp_static_clock_rate(s->pt);
	}
	snprintf(s->codec, sizeof(s->codec), "%s", name ? name : "");
	if (s->pt >= 96 && s->clock_rate) {
		*dyn_clock = (int32_t)s->clock_rate;
	}
	if (md && *dyn_clock < 0) {
		/* the first dynamic audio format of the offer/answer gives the clock for others */
		for (uint8_t i = 0; i < md->fmt_count; i++) {
			if (md->fmts[i].pt >= 96 && md->fmts[i].pt != *te_pt &&
			    md->fmts[i].clock_rate) {
				*dyn_clock = (int32_t)md->fmts[i].clock_rate;
				break;
			}
		}
	}
}

/* Continue the online statistics with the kept packets into @p st, now that the SDP is
 * known. */
static void stream_replay(const struct eng_stream *s, const struct eng_flow *f, int te_pt,
			  int32_t dyn_clock, struct rtp_stream *st)
{
	/* the configuration only matters for dynamic payload types, none of which the online
	 * part has seen, so setting it now equals having had it from the first packet */
	*st = f->online;
	st->clock_rate = dyn_clock > 0 ? dyn_clock : 0;
	st->te_pt = (int16_t)(te_pt >= 0 && te_pt <= 127 ? te_pt : RTP_PT_NONE);
	for (uint32_t i = 0; i < f->count; i++) {
		const struct eng_rtp_pkt *p = &f->pkts[i];
		struct rtp_hdr h;

		memset(&h, 0, sizeof(h));
		h.version = 2;
		h.marker = (p->pt & 0x80) != 0;
		h.pt = p->pt & 0x7f;
		h.seq = p->seq;
		h.ts = p->rtp_ts;
		h.ssrc = s->ssrc;
		h.hdr_len = RTP_HDR_MIN_LEN;
		h.payload = sn_slice_make(p->pl, p->pl_len);
		rtp_stream_update(st, p->ts_ns, &h, p->udp_len);
	}
}

/*
 * The order of r->streams: by first packet, then source, destination and SSRC. It is known
 * from the flows before their streams are made (streams_choose()), so each stream is written
 * straight to its place (streams_fill()). The streams were sorted once written before, their
 * 424 bytes then moved cycle by cycle: 3-19 ms of the serial part of the build for the
 * 40,000 streams of the 20,000-call sweep capture, the most of it at two cores, where half
 * the streams were in the other core's cache.
 */
struct stream_key {
	int64_t first_ns; /* the stream's rtp.first_ns (flow_first_ns()) */
	uint32_t flow;    /* its flow, in its worker's flows */
};

/* The rtp.first_ns that stream_replay() gives the stream of @p f: the online statistics'
 * first packet, else the first packet kept (rtp_stream_update() takes the first packet it is
 * given as the first one). */
static int64_t flow_first_ns(const struct eng_flow *f)
{
	return f->online.packets || !f->count ? f->online.first_ns : f->pkts[0].ts_ns;
}

static int stream_order(const struct stream_key *ka, const struct eng_flow *fa,
			const struct stream_key *kb, const struct eng_flow *fb)
{
	const struct eng_flow_key *a = &fa->key, *b = &fb->key;
	int c;

	if (ka->first_ns != kb->first_ns) {
		return ka->first_ns < kb->first_ns ? -1 : 1;
	}
	c = sn_addr_cmp(&a->src, &b->src);
	if (c) {
		return c;
	}
	if (a->sport != b->sport) {
		return a->sport < b->sport ? -1 : 1;
	}
	c = sn_addr_cmp(&a->dst, &b->dst);
	if (c) {
		return c;
	}
	if (a->dport != b->dport) {
		return a->dport < b->dport ? -1 : 1;
	}
	return a->ssrc < b->ssrc ? -1 : (a->ssrc > b->ssrc);
}

/* qsort_r() of one worker's keys (@p user: its flows) */
static int stream_key_cmp(const void *pa, const void *pb, void *user)
{
	const struct stream_key *a = pa, *b = pb;
	const struct eng_flow *flows = user;

	return stream_order(a, &flows[a->flow], b, &flows[b->flow]);
}

/* Calls whose SDP announced an endpoint of @p s while it was active: the call link list. */
struct link {
	uint32_t call;
	uint32_t stream;
};

static void add_link(struct link **links, size_t *n, size_t *cap, uint32_t call, uint32_t stream)
{
	if (*n == *cap) {
		*cap = *cap ? *cap * 2 : 256;
		*links = sn_xrealloc(*links, *cap * sizeof(**links));
	}
	(*links)[*n].call = call;
	(*links)[*n].stream = stream;
	(*n)++;
}

static void links_for(const struct ann_index *ai, const struct sn_addr *addr, uint16_t port,
		      const struct eng_stream *s, uint32_t si, struct link **links, size_t *ln,
		      size_t *lcap)
{
	size_t i, end;

	ann_range(ai, addr, port, &i, &end);
	for (; i < end; i++) {
		const struct announce *a = &ai->ann[i];
		int64_t call_end;

		if (a->call < 0 || a->ts_ns > s->rtp.last_ns) {
			continue;
		}
		/* a call not seen to end lasts to the end of the capture */
		call_end = a->call_end >= 0 ? a->call_end : INT64_MAX;
		if (call_end < s->rtp.first_ns) {
			continue;
		}
		add_link(links, ln, lcap, (uint32_t)a->call, si);
	}
}

/*
 * The links are made a block of LINK_BLOCK streams at a time, any block on any thread
 * (sn_pool_for()), each block into a list of its own; read one block after the other, the
 * lists give the links stream after stream, as one pass over the streams makes them. (One
 * pass on one thread took 5-13 ms of the serial part of the build for the 40,000 streams of
 * the 20,000-call sweep capture: every stream looks its endpoints up in the announcements.)
 */
#define LINK_BLOCK 1024u

struct link_list {
	struct link *v;
	size_t n, cap;
};

struct link_job {
	const struct eng_result *r;
	const struct ann_index *ai;
	struct link_list *lists; /* one per block */
};

static void links_block(void *ctx, uint32_t b)
{
	struct link_job *j = ctx;
	const struct eng_result *r = j->r;
	struct link_list *l = &j->lists[b];
	uint32_t end = (uint32_t)SN_MIN((uint64_t)r->stream_count, ((uint64_t)b + 1) * LINK_BLOCK);

	for (uint32_t i = b * LINK_BLOCK; i < end; i++) {
		const struct eng_stream *s = &r->streams[i];

		if (!s->announced) {
			continue;
		}
		if (s->call >= 0) {
			add_link(&l->v, &l->n, &l->cap, (uint32_t)s->call, i);
		}
		links_for(j->ai, &s->dst, s->dport, s, i, &l->v, &l->n, &l->cap);
		links_for(j->ai, &s->src, s->sport, s, i, &l->v, &l->n, &l->cap);
	}
}

/*
 * The links of the @p nlists lists in (call, stream) order (@p n of them in all). The lists
 * hold them stream after stream, so a counting sort by call (stable) leaves each call's
 * streams in order: the order a sort by (call, stream) gives, in two passes instead of a
 * qsort() (1.5 ms of c5k's serial build for its 20,000 links).
 */
static struct link *links_by_call(const struct link_list *lists, uint32_t nlists, size_t n,
				  uint32_t calls)
{
	size_t *at = sn_xcalloc((size_t)calls + 1, sizeof(*at));
	struct link *out = sn_xmalloc_full((n + 1) * sizeof(*out));

	for (uint32_t b = 0; b < nlists; b++) {
		for (size_t i = 0; i < lists[b].n; i++) {
			at[lists[b].v[i].call + 1]++;
		}
	}
	for (uint32_t c = 0; c < calls; c++) {
		at[c + 1] += at[c];
	}
	for (uint32_t b = 0; b < nlists; b++) {
		for (size_t i = 0; i < lists[b].n; i++) {
			out[at[lists[b].v[i].call]++] = lists[b].v[i];
		}
	}
	free(at);
	return out;
}

static void rtcp_feed(struct eng_result *r, struct eng_stream *st, const struct rtcp_compound *c,
		      int64_t ts_ns)
{
	if (!st->has_rtcp) {
		if (sn_arena_alloc(&r->arena, sizeof(*st->rtcp), (void **)&st->rtcp) != SN_OK) {
			return;
		}
		rtcp_summary_init(st->rtcp, st->ssrc);
		st->has_rtcp = true;
	}
	rtcp_summary_update(st->rtcp, c, ts_ns, (int32_t)st->clock_rate);
}

/* The streams by SSRC: (SSRC, stream) pairs sorted by both, so that the sort reads only this
 * array, not the streams (qsort_r() over stream indexes compared through the streams, 424
 * bytes each then, took 10 ms for 40,000 of them, a miss to memory per comparison). */
struct ssrc_ref {
	uint32_t ssrc;
	uint32_t stream;
};

static int ssrc_ref_cmp(const void *pa, const void *pb)
{
	const struct ssrc_ref *a = pa, *b = pb;

	if (a->ssrc != b->ssrc) {
		return a->ssrc < b->ssrc ? -1 : 1;
	}
	return a->stream < b->stream ? -1 : (a->stream > b->stream);
}

/* First position in @p refs whose SSRC is >= @p ssrc. */
static uint32_t ssrc_lower(const struct ssrc_ref *refs, uint32_t n, uint32_t ssrc)
{
	uint32_t lo = 0, hi = n;

	while (lo < hi) {
		uint32_t mid = (lo + hi) / 2;
		if (refs[mid].ssrc < ssrc) {
			lo = mid + 1;
		} else {
			hi = mid;
		}
	}
	return lo;
}

/* Feed @p c to every stream with @p ssrc flowing from @p from to @p to. */
static void rtcp_to_streams(struct eng_result *r, const struct ssrc_ref *refs, uint32_t ssrc,
			    const struct sn_addr *from, const struct sn_addr *to,
			    const struct rtcp_compound *c, int64_t ts_ns)
{
	for (uint32_t k = ssrc_lower(refs, r->stream_count, ssrc);
	     k < r->stream_count && refs[k].ssrc == ssrc; k++) {
		struct eng_stream *st = &r->streams[refs[k].stream];
		if (sn_addr_cmp(&st->src, from) == 0 && sn_addr_cmp(&st->dst, to) == 0) {
			rtcp_feed(r, st, c, ts_ns);
			return;
		}
	}
}

/*
 * RTCP (RFC 3550 §6.4): a report block describes the stream with its SSRC that flows towards
 * the reporter (the receiver sent it); the sender's own SR and SDES describe the stream it sends,
 * which flows the same way as its RTCP. Both kinds of a host pair are in one worker, in capture
 * order, so the outcome does not depend on the number of workers. Streams are found by SSRC
 * through a sorted index, built only when there is RTCP.
 */
static void attach_rtcp(struct eng_result *r, struct eng *const *engines, size_t count)
{
	struct ssrc_ref *refs;
	uint64_t packets = 0;

	for (size_t w = 0; w < count; w++) {
		packets += engines[w]->rtcp_count;
	}
	if (packets == 0) {
		return;
	}
	refs = sn_xcalloc(r->stream_count + 1u, sizeof(*refs));
	for (uint32_t i = 0; i < r->stream_count; i++) {
		refs[i].ssrc = r->streams[i].ssrc;
		refs[i].stream = i;
	}
	qsort(refs, r->stream_count, sizeof(*refs), ssrc_ref_cmp);
	for (size_t w = 0; w < count; w++) {
		const struct eng *e = engines[w];
		for (uint32_t i = 0; i < e->rtcp_count; i++) {
			const struct eng_rtcp_pkt *rp = &e->rtcp[i];
			struct rtcp_compound c;
			uint32_t done[RTCP_MAX_REPORTS];
			uint32_t ndone = 0;

			if (rtcp_parse(rp->data, rp->len, &c) != SN_OK) {
				continue;
			}
			if (c.has_sr || c.cname_count || c.has_xr_voip) {
				rtcp_to_streams(r, refs, c.sender_ssrc, &rp->src, &rp->dst, &c, rp->ts_ns);
			}
			for (uint32_t b = 0; b < c.report_count; b++) {
				uint32_t ssrc = c.reports[b].ssrc;
				bool seen = false;
				/* a summary takes every block about its SSRC from one compound */
				for (uint32_t d = 0; d < ndone; d++) {
					seen = seen || done[d] == ssrc;
				}
				if (seen || ssrc == c.sender_ssrc) {
					continue;
				}
				done[ndone++] = ssrc;
				rtcp_to_streams(r, refs, ssrc, &rp->dst, &rp->src, &c, rp->ts_ns);
			}
		}
	}
	free(refs);
}

#define FLOWS_GIVE_BACK 2048u /* flows between two give-backs (about 850 KiB) */
#define STREAMS_HUGE ((size_t)256 << 10) /* r->streams in huge pages from this size on */
/*
 * The workers' flows are chosen and written on one thread each (streams_choose(),
 * streams_fill()) from this many flows in all; fewer, on the calling thread alone. The
 * build at --cores 2 (SIPNAB_TIMING, medians of 13-15, 2026-12-04): 200 flows 0.6 -> 0.5 ms
 * on one thread, 600 flows 1.5 -> 1.3, 2,000 flows 3.8 both, 4,000 flows 6.2 -> 6.8, 16,000
 * flows 26.2 -> 31.9.
 */
#define STREAMS_PAR_MIN 2048u

/*
 * Candidate flows become streams on one thread per worker (each turns its own worker's flows
 * into streams): first every thread decides which of its flows are kept (an SDP endpoint
 * announced them, or the sequence heuristic passes) and puts their keys in stream order
 * (stream_order()); then the workers' keys are merged, which gives every kept flow its place
 * in r->streams (streams_place()), and every thread writes its streams there. (On one thread
 * this was 39 ms of the build for the 40,000 streams of 20,000 unique calls, the largest
 * serial part of it.)
 */
struct stream_job {
	struct eng_result *r;
	struct eng *const *engines;
	const struct ann_index *ai;
	bool heuristic;
	const struct announce ***ann; /* per worker, per flow: its announcement, NULL (kept by the
				       * heuristic) or &ann_dropped */
	uint32_t *kept;               /* per worker: flows kept */
	struct stream_key **keys;     /* per worker: its kept flows' keys, in stream order */
	uint32_t **pos;               /* per worker, per flow (kept ones): its stream's index */
	uint64_t *rtp_packets;        /* per worker */
};

/* ann[i] of a flow that is not kept */
static const struct announce ann_dropped;

static void streams_choose(void *ctx, uint32_t w)
{
	struct stream_job *j = ctx;
	const struct eng *e = j->engines[w];
	const struct announce **ann = sn_xcalloc(e->flow_count + 1u, sizeof(*ann));
	struct stream_key *keys = sn_xmalloc((e->flow_count + 1u) * sizeof(*keys));
	uint32_t kept = 0;
	bool sorted = true;

	for (uint32_t i = 0; i < e->flow_count; i++) {
		const struct eng_flow *f = &e->flows[i];
		const struct announce *a;

		if (f->total == 0) {
			continue;
		}
		a = ann_at(j->ai, &f->key.dst, f->key.dport, f->first_ns);
		if (!a) {
			a = ann_at(j->ai, &f->key.src, f->key.sport, f->first_ns);
		}
		if (a || (j->heuristic && heuristic_ok(f))) {
			ann[i] = a; /* kept, announced or not */
			keys[kept].first_ns = flow_first_ns(f);
			keys[kept].flow = i;
			/* the flows are in the order of their first packets: nearly always sorted */
			if (kept && sorted &&
			    stream_order(&keys[kept - 1], &e->flows[keys[kept - 1].flow], &keys[kept],
					 f) > 0) {
				sorted = false;
			}
			kept++;
		} else {
			ann[i] = &ann_dropped;
		}
	}
	if (!sorted) {
		qsort_r(keys, kept, sizeof(*keys), stream_key_cmp, e->flows);
	}
	j->ann[w] = ann;
	j->kept[w] = kept;
	j->keys[w] = keys;
}

/*
 * Each kept flow's place in r->streams (j->pos): the workers' keys merged in stream order, the
 * next key taken from the worker whose head comes first (as merge_part() merges messages).
 * Two workers never hold the same flow (a host pair is one worker's), so the order is that of
 * one sort of all the streams.
 */
static void streams_place(struct stream_job *j, uint32_t count, uint32_t n)
{
	uint32_t *next = sn_xcalloc(count + 1u, sizeof(*next)); /* per worker: its next key */

	for (uint32_t at = 0; at < n; at++) {
		uint32_t best = UINT32_MAX;
		const struct stream_key *kb = NULL;

		for (uint32_t w = 0; w < count; w++) {
			const struct stream_key *kw = &j->keys[w][next[w]];

			if (next[w] < j->kept[w] &&
			    (!kb || stream_order(kw, &j->engines[w]->flows[kw->flow], kb,
						 &j->engines[best]->flows[kb->flow]) < 0)) {
				best = w;
				kb = kw;
			}
		}
		j->pos[best][kb->flow] = at;
		next[best]++;
	}
	free(next);
}

static void streams_fill(void *ctx, uint32_t w)
{
	struct stream_job *j = ctx;
	struct eng_result *r = j->r;
	struct eng *e = j->engines[w];
	const struct announce **ann = j->ann[w];
	const uint32_t *pos = j->pos[w];
	uint32_t kept = 0; /* flows [0, kept) are given back */
	uint64_t rtp_packets = 0;

	for (uint32_t i = 0; i < e->flow_count; i++) {
		const struct eng_flow *f = &e->flows[i];
		struct eng_stream *s;
		const struct announce *a = ann[i];
		const struct eng_sdp_media *md = NULL;
		int te_pt;
		int32_t dyn_clock;
		struct rtp_stream st;

		if (i - kept >= FLOWS_GIVE_BACK) {
			/* the flows before i are done with: the streams being written take their
			 * place in memory instead of adding to it (their packet lists are freed
			 * first) */
			for (uint32_t k = kept; k < i; k++) {
				free(e->flows[k].pkts);
				e->flows[k].pkts = NULL;
			}
			sn_mem_release(&e->flows[kept], (size_t)(i - kept) * sizeof(*e->flows));
			kept = i;
		}
		if (f->total == 0 || a == &ann_dropped) {
			continue;
		}
		s = &r->streams[pos[i]];
		memset(s, 0, sizeof(*s));
		s->src = f->key.src;
		s->dst = f->key.dst;
		s->sport = f->key.sport;
		s->dport = f->key.dport;
		s->ssrc = f->key.ssrc;
		s->pt = (int16_t)f->first_pt;
		s->call = -1;
		if (a) {
			s->announced = true;
			md = &r->msgs[a->msg]->media[a->media];
			s->call = r->msgs[a->msg]->call;
		}
		stream_codec(s, md, &te_pt, &dyn_clock);
		/* the analysis state ends here: the result keeps the results only */
		stream_replay(s, f, te_pt, dyn_clock, &st);
		if (s->clock_rate && s->pt != te_pt) {
			s->mos = rtp_mos_stream(&st,
						rtp_mos_codec_from_name(sn_slice_make(
							s->codec, strlen(s->codec))),
						20);
		}
		rtp_stream_summarise(&st, &s->rtp);
		rtp_packets += s->rtp.packets;
	}
	/* this worker's flows are done with: give their memory back now, without reading
	 * those given back already. Reading them (for their packet lists) faulted a fresh
	 * page in for each on this VM: 16 MiB for the 40,000 flows of 20,000 unique calls,
	 * the run's peak RSS (99.4 MiB where the give-back meant 85) */
	eng_flows_free_from(e, kept);
	free(ann);
	free(j->keys[w]);
	free(j->pos[w]);
	j->rtp_packets[w] = rtp_packets;
}

static void build_streams(struct eng_result *r, struct eng *const *engines, size_t count,
			  bool heuristic)
{
	size_t ln = 0;
	struct ann_index ai;
	struct link *links = NULL;
	struct link_job lj;
	uint32_t n = 0, nblocks, sthreads;
	uint64_t nflows = 0;
	size_t bytes;
	struct stream_job sj = {r, engines, &ai, heuristic, NULL, NULL, NULL, NULL, NULL};

	ann_index_build(r, &ai, (uint32_t)count);
	for (size_t w = 0; w < count; w++) {
		nflows += engines[w]->flow_count;
	}
	sthreads = nflows < STREAMS_PAR_MIN ? 1 : (uint32_t)count;
	sj.ann = sn_xcalloc(count + 1, sizeof(*sj.ann));
	sj.kept = sn_xcalloc(count + 1, sizeof(*sj.kept));
	sj.keys = sn_xcalloc(count + 1, sizeof(*sj.keys));
	sj.pos = sn_xcalloc(count + 1, sizeof(*sj.pos));
	sj.rtp_packets = sn_xcalloc(count + 1, sizeof(*sj.rtp_packets));
	if (count) {
		sn_pool_for((uint32_t)count, sthreads, 1, streams_choose, &sj);
	}
	for (size_t w = 0; w < count; w++) {
		n += sj.kept[w];
		sj.pos[w] = sn_xmalloc(((size_t)engines[w]->flow_count + 1u) * sizeof(*sj.pos[w]));
	}
	streams_place(&sj, (uint32_t)count, n);
	/*
	 * The workers' streams alternate in the array, so no thread can fault in a stretch of
	 * it ahead of its writes (sn_mem_populate(): a page there may hold another thread's
	 * streams already). From STREAMS_HUGE on the array is in huge pages where the system
	 * has them (sn_huge_round()), faulted in 2 MiB at a time as the threads write it: on
	 * the development VM the 40,000 streams of the 20,000-call sweep capture took 27-35 ms
	 * to write at one core, 14-26 at two, against 47-48 and 36-42 when each thread faulted
	 * in the 4 KiB pages of its own stretch ahead. A smaller array is faulted in whole
	 * before the threads start.
	 */
	bytes = ((size_t)n + 1u) * sizeof(*r->streams);
	r->streams = sn_xmalloc_huge(sn_huge_round(bytes, STREAMS_HUGE));
	if (bytes < STREAMS_HUGE) {
		sn_mem_populate(r->streams, bytes);
	}
	memset(&r->streams[n], 0, sizeof(*r->streams));
	r->stream_count = n;
	if (count) {
		sn_pool_for((uint32_t)count, sthreads, 1, streams_fill, &sj);
	}
	for (size_t w = 0; w < count; w++) {
		r->stats.rtp_packets += sj.rtp_packets[w];
	}
	free(sj.ann);
	free(sj.kept);
	free(sj.keys);
	free(sj.pos);
	free(sj.rtp_packets);
	attach_rtcp(r, engines, count);
	nblocks = (uint32_t)(((uint64_t)n + LINK_BLOCK - 1) / LINK_BLOCK);

	/* link calls and streams */
	lj.r = r;
	lj.ai = &ai;
	lj.lists = sn_xcalloc((size_t)nblocks + 1, sizeof(*lj.lists));
	if (nblocks) {
		sn_pool_for(nblocks, (uint32_t)SN_MAX(count, (size_t)1), 1, links_block, &lj);
	}
	for (uint32_t b = 0; b < nblocks; b++) {
		ln += lj.lists[b].n;
	}
	if (ln) {
		links = links_by_call(lj.lists, nblocks, ln, r->call_count);
	}
	for (uint32_t b = 0; b < nblocks; b++) {
		free(lj.lists[b].v);
	}
	free(lj.lists);
	r->call_streams = sn_xmalloc((ln + 1u) * sizeof(*r->call_streams));
	for (size_t i = 0; i < ln;) {
		size_t j = i;
		uint32_t k = 0;
		struct eng_call *c = &r->calls[links[i].call];
		while (j < ln && links[j].call == links[i].call) {
			j++;
		}
		c->streams = r->call_streams + i; /* at most j - i of them */
		for (size_t x = i; x < j; x++) {
			if (k == 0 || c->streams[k - 1] != links[x].stream) {
				c->streams[k++] = links[x].stream;
			}
		}
		c->stream_count = k;
		i = j;
	}
	free(links);
	ann_index_free(&ai);
}

struct eng_result *eng_result_build(struct eng *const *engines, size_t count)
{
	struct eng_result *r = sn_xcalloc(1, sizeof(*r));
	uint32_t total = 0, *hash;
	bool heuristic = count ? engines[0]->cfg.rtp_heuristic : true;
	bool invite_only = count ? engines[0]->cfg.invite_only : false;

	eng_stats_init(&r->stats);
	sn_arena_init(&r->arena, 0);
	r->arena.block_size = 64 * 1024;
	for (size_t i = 0; i < count; i++) {
		/* evicted calls (rotate) leave nothing in the result */
		eng_msgs_compact(engines[i]);
		eng_stats_merge(&r->stats, eng_stats(engines[i]));
		total += engines[i]->msg_count;
	}
	/* the workers' message arrays move into the result (order_msgs()); they sorted their
	 * own (eng_finish()) */
	for (size_t i = 0; i < count; i++) {
		eng_msgs_sort(engines[i]);
	}
	hash = order_msgs(r, engines, count, total);
	eng_calls_build(r, invite_only, (uint32_t)count, hash);
	free(hash);
	build_streams(r, engines, count, heuristic);
	r->stats.other_packets = r->stats.packets - r->stats.sip_packets - r->stats.rtp_packets -
				 r->stats.rtcp_packets;
	if ((int64_t)r->stats.other_packets < 0) {
		r->stats.other_packets = 0;
	}
	/* keep the message bytes alive: take the workers' keep arenas */
	r->keep = sn_xcalloc(count + 1, sizeof(*r->keep));
	for (size_t i = 0; i < count; i++) {
		r->keep[i] = engines[i]->keep;
		sn_arena_init(&engines[i]->keep, 1);
	}
	r->keep_count = count;
	return r;
}

void eng_result_free(struct eng_result *r)
{
	if (!r) {
		return;
	}
	free(r->call_leg_ids);
	free(r->call_msgs);
	free(r->call_streams);
	for (size_t i = 0; i < r->keep_count; i++) {
		sn_arena_cleanup(&r->keep[i]);
	}
	free(r->keep);
	free(r->calls);
	free(r->streams);
	for (size_t i = 0; i < r->msg_store_count; i++) {
		free(r->msg_store[i]);
	}
	free(r->msg_store);
	free(r->msgs);
	sn_arena_cleanup(&r->arena);
	free(r);
}
