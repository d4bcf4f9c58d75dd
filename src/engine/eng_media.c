/*
 * eng_media.c - the worker's media path: every UDP payload that is not SIP is checked for RTCP
 * (kept raw: rare, needs the stream's clock rate later) and for RTP (appended in compact form to
 * its candidate stream, keyed by 5-tuple and SSRC). Whether a candidate is a real stream (an SDP
 * announced it, or it passes the sequence heuristic) and its statistics are decided at result
 * build time (eng_merge.c), when every worker's SDP is known.
 *
 * The flow table is open addressing over flow numbers (linear probing, load <= 1/2), so the hot
 * path is one hash, usually one probe, and a 24-byte append.
 * Bounds: eng_config.max_streams candidate streams and stream_max_packets packets per stream;
 * what does not fit is counted (streams_dropped, rtp_dropped).
 * Thread: the worker that owns the engine.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "sipnab/rtcp.h"
#include "sipnab/rtp_stream.h"
#include "sipnab/sn_hash.h"

#include "eng_int.h"

#define MAX_STREAMS_DEFAULT      1000000u
#define STREAM_PACKETS_DEFAULT   (16u * 1024u * 1024u)
#define RTCP_MAX_BYTES           1500u
#define FLOWS_POPULATE_STEP      2048u /* flows faulted in ahead at a time (848 KiB) */

/*
 * The 5-tuple and SSRC are read where they are, in the decoded packet or in a flow's key: a key
 * assembled on the stack and read back at once would be read with wider loads than the stores
 * that wrote it, which the CPU cannot forward from its store buffer (a stall on every packet).
 * Keyed (sn_hash.h): the addresses (two IPv4 ones share a word), then the ports and the SSRC,
 * go into the state a word at a time, so no field can cancel another. (Unkeyed, an IPv4
 * destination and an SSRC that summed alike collided, so a crafted capture could put every
 * flow in one probe chain: tests/hash_flood.sh.)
 */
static uint64_t flow_hash(const struct sn_addr *src, const struct sn_addr *dst, uint16_t sport,
			  uint16_t dport, uint32_t ssrc)
{
	uint64_t key = sn_hash_key();
	uint64_t s0, s1, d0, d1;
	uint64_t h;

	if (src->family == 4 && dst->family == 4) {
		/* the usual case in two steps: both addresses in one word (hashing fewer of the
		 * bytes addr_eq() compares still hashes equal keys alike) */
		uint32_t s4, d4;

		memcpy(&s4, src->bytes, 4);
		memcpy(&d4, dst->bytes, 4);
		h = sn_hash_step(key, s4 | ((uint64_t)d4 << 32));
		return sn_hash_step(h, ((uint64_t)sport << 48) | ((uint64_t)dport << 32) | ssrc);
	}
	memcpy(&s0, src->bytes, 8);
	memcpy(&s1, src->bytes + 8, 8);
	memcpy(&d0, dst->bytes, 8);
	memcpy(&d1, dst->bytes + 8, 8);
	h = sn_hash_step(key, s0);
	h = sn_hash_step(h, s1 ^ ((uint64_t)src->family << 56));
	h = sn_hash_step(h, d0);
	h = sn_hash_step(h, d1 ^ ((uint64_t)dst->family << 56));
	/* no final mix: a step's low bits already depend on every bit of both factors */
	return sn_hash_step(h, ((uint64_t)sport << 48) | ((uint64_t)dport << 32) | ssrc);
}

static uint64_t flow_key_hash(const struct eng_flow_key *k)
{
	return flow_hash(&k->src, &k->dst, k->sport, k->dport, k->ssrc);
}

/* a == b, read with 8-byte loads, as flow_hash() reads IPv6 addresses and the decoder stores
 * them */
static bool addr_eq(const struct sn_addr *a, const struct sn_addr *b)
{
	uint64_t a0, a1, b0, b1;

	memcpy(&a0, a->bytes, 8);
	memcpy(&a1, a->bytes + 8, 8);
	memcpy(&b0, b->bytes, 8);
	memcpy(&b1, b->bytes + 8, 8);
	return ((a0 ^ b0) | (a1 ^ b1) | (uint64_t)(a->family ^ b->family)) == 0;
}

/* Is @p k the key of packet @p pkt with SSRC @p ssrc? */
static bool key_is(const struct eng_flow_key *k, const struct cap_packet *pkt, uint32_t ssrc)
{
	return k->ssrc == ssrc && k->sport == pkt->sport && k->dport == pkt->dport &&
	       addr_eq(&k->src, &pkt->src) && addr_eq(&k->dst, &pkt->dst);
}

static void index_grow(struct eng *e)
{
	uint32_t cap = e->flow_index_cap ? e->flow_index_cap * 2 : 1024;
	uint32_t *idx = sn_xcalloc(cap, sizeof(*idx));

	for (uint32_t i = 0; i < e->flow_count; i++) {
		uint32_t h = (uint32_t)flow_key_hash(&e->flows[i].key) & (cap - 1);
		while (idx[h]) {
			h = (h + 1) & (cap - 1);
		}
		idx[h] = i + 1;
	}
	free(e->flow_index);
	e->flow_index = idx;
	e->flow_index_cap = cap;
}

/* The flow of @p pkt and SSRC @p ssrc, created when absent; NULL when max_streams is reached. */
static struct eng_flow *flow_get(struct eng *e, const struct cap_packet *pkt, uint32_t ssrc)
{
	uint64_t hk = flow_hash(&pkt->src, &pkt->dst, pkt->sport, pkt->dport, ssrc);
	uint32_t max;
	uint32_t h;
	struct eng_flow *f;

	if (e->flow_index_cap != 0) {
		h = (uint32_t)hk & (e->flow_index_cap - 1);
		while (e->flow_index[h]) {
			f = &e->flows[e->flow_index[h] - 1];
			if (key_is(&f->key, pkt, ssrc)) {
				return f;
			}
			h = (h + 1) & (e->flow_index_cap - 1);
		}
	}
	/* a new stream: the per-packet path above needs none of what follows */
	max = e->cfg.max_streams ? e->cfg.max_streams : MAX_STREAMS_DEFAULT;
	if (e->flow_count >= max) {
		/* count each stream once: remember (a bounded number of) dropped keys */
		if (!e->dropped_flows) {
			e->dropped_flows = g_hash_table_new(g_int64_hash, g_int64_equal);
		}
		if (!g_hash_table_contains(e->dropped_flows, &hk) &&
		    g_hash_table_size(e->dropped_flows) < 65536u) {
			uint64_t *key = sn_xmalloc(sizeof(*key));
			*key = hk;
			g_hash_table_add(e->dropped_flows, key);
			e->st.streams_dropped++;
		}
		return NULL;
	}
	if (e->flow_index_cap == 0 || (e->flow_count + 1) * 2 > e->flow_index_cap) {
		index_grow(e);
	}
	h = (uint32_t)hk & (e->flow_index_cap - 1);
	while (e->flow_index[h]) {
		h = (h + 1) & (e->flow_index_cap - 1);
	}
	if (e->flow_count == e->flow_cap) {
		/* an engine that outgrows its first 256 flows moves them once into address space
		 * for all it may have (eng_config.flows_reserve, at most what max_streams can
		 * fill: eng_run.c), where they stay; without it, or past it, the array doubles */
		size_t reserve = SN_MIN(e->cfg.flows_reserve, (size_t)max * sizeof(*e->flows));
		uint32_t reserve_cap = (uint32_t)SN_MIN(reserve / sizeof(*e->flows), UINT32_MAX);
		struct eng_flow *moved;

		if (e->flow_cap != 0 && reserve_cap / 2 > e->flow_cap &&
		    (moved = sn_malloc_huge((size_t)reserve_cap * sizeof(*e->flows))) != NULL) {
			sn_mem_populate(moved, (size_t)e->flow_count * sizeof(*e->flows));
			memcpy(moved, e->flows, (size_t)e->flow_count * sizeof(*e->flows));
			free(e->flows);
			e->flows = moved;
			e->flow_cap = reserve_cap;
		} else {
			e->flow_cap = e->flow_cap ? e->flow_cap * 2 : 256;
			e->flows = sn_xgrow(e->flows, e->flow_count * sizeof(*e->flows),
					    e->flow_cap * sizeof(*e->flows));
		}
		e->flows_populated = e->flow_count; /* the array may have moved */
	}
	/* as for the messages: the next stretch of the array in one call, not a page fault every
	 * 9.7 flows (424 bytes each; the 2,000-call sweep capture's 4,000 flows took about 390
	 * faults a run) */
	sn_mem_populate_ahead(e->flows, sizeof(*e->flows), e->flow_count, e->flow_cap, 16u,
			      FLOWS_POPULATE_STEP, &e->flows_populated);
	f = &e->flows[e->flow_count];
	memset(f, 0, sizeof(*f));
	f->key.src = pkt->src;
	f->key.dst = pkt->dst;
	f->key.sport = pkt->sport;
	f->key.dport = pkt->dport;
	f->key.ssrc = ssrc;
	f->file_index = e->cur_file;
	f->offset = e->cur_offset;
	rtp_stream_init(&f->online, ssrc, 0, RTP_PT_NONE);
	e->flow_index[h] = ++e->flow_count;
	return f;
}

static void keep_rtcp(struct eng *e, const struct cap_packet *pkt)
{
	struct eng_rtcp_pkt *r;
	struct sn_slice copy;
	uint32_t len = SN_MIN(pkt->payload_len, RTCP_MAX_BYTES);

	if (sn_arena_dup(&e->keep, sn_slice_make(pkt->payload, len), &copy) != SN_OK) {
		return;
	}
	if (e->rtcp_count == e->rtcp_cap) {
		e->rtcp_cap = e->rtcp_cap ? e->rtcp_cap * 2 : 64;
		e->rtcp = sn_xrealloc(e->rtcp, e->rtcp_cap * sizeof(*e->rtcp));
	}
	r = &e->rtcp[e->rtcp_count++];
	r->ts_ns = pkt->ts_ns;
	r->src = pkt->src;
	r->dst = pkt->dst;
	r->sport = pkt->sport;
	r->dport = pkt->dport;
	r->data = copy.ptr;
	r->len = copy.len;
}

void eng_media_udp(struct eng *e, const struct cap_packet *pkt)
{
	const uint8_t *p = pkt->payload;
	uint32_t len = pkt->payload_len;
	struct eng_flow *f;
	struct eng_rtp_pkt *rp;
	struct rtp_hdr h;
	bool parsed;
	uint32_t max_pkts;
	uint32_t hdr_len;
	uint16_t seq;

	if (len < 8 || (p[0] >> 6) != 2) {
		return;
	}
	if (p[1] >= 200 && p[1] <= 207) {
		if (rtcp_is_plausible(p, len)) {
			e->st.rtcp_packets++;
			keep_rtcp(e, pkt);
		}
		return;
	}
	/* One parse serves the plausibility test and the statistics: a header that parses is
	 * plausible unless its type is in the RTCP range; one that does not may still be (its
	 * padding count is wrong), and then counts as a packet of its flow without statistics. */
	parsed = rtp_hdr_parse(p, len, &h) == SN_OK;
	if (parsed ? h.pt >= 72 && h.pt <= 95 : !rtp_is_plausible(p, len)) {
		return;
	}
	e->st.rtp_candidates++;
	f = flow_get(e, pkt, sn_be32(p + 8));
	if (!f) {
		e->st.rtp_dropped++;
		return;
	}
	max_pkts = e->cfg.stream_max_packets ? e->cfg.stream_max_packets : STREAM_PACKETS_DEFAULT;
	if (f->total >= max_pkts) {
		f->dropped++;
		e->st.rtp_dropped++;
		return;
	}
	seq = sn_be16(p + 2);
	if (f->total == 0) {
		f->first_ns = pkt->ts_ns;
		f->first_pt = p[1] & 0x7f;
	} else if ((uint16_t)(f->last_seq + 1) == seq) {
		f->seq_steps++;
	}
	f->last_seq = seq;
	f->total++;
	if ((p[1] & 0x7f) >= 96) {
		f->deferred = true;
	}
	if (!f->deferred) {
		if (parsed) {
			rtp_stream_update(&f->online, pkt->ts_ns, &h, len);
		}
		return;
	}
	if (f->count == f->cap) {
		f->cap = f->cap ? f->cap * 2 : 64;
		f->pkts = sn_xrealloc(f->pkts, (size_t)f->cap * sizeof(*f->pkts));
	}
	rp = &f->pkts[f->count++];
	rp->ts_ns = pkt->ts_ns;
	rp->seq = seq;
	rp->rtp_ts = sn_be32(p + 4);
	rp->pt = p[1];
	rp->udp_len = (uint16_t)SN_MIN(len, 65535u);
	/* payload start: after the CSRCs and the extension (checked by rtp_is_plausible) */
	hdr_len = 12u + 4u * (p[0] & 0x0f);
	if ((p[0] & 0x10) && hdr_len + 4 <= len) {
		hdr_len += 4u + 4u * sn_be16(p + hdr_len + 2);
	}
	rp->pl_len = 0;
	if (hdr_len < len) {
		rp->pl_len = (uint8_t)SN_MIN(len - hdr_len, 4u);
		memcpy(rp->pl, p + hdr_len, rp->pl_len);
	}
}

void eng_flows_free(struct eng *e)
{
	eng_flows_free_from(e, 0);
}

void eng_flows_free_from(struct eng *e, uint32_t first)
{
	for (uint32_t i = first; i < e->flow_count; i++) {
		free(e->flows[i].pkts);
	}
	free(e->flows);
	free(e->flow_index);
	e->flows = NULL;
	e->flow_index = NULL;
	e->flow_count = e->flow_cap = e->flow_index_cap = e->flows_populated = 0;
}

void eng_media_free(struct eng *e)
{
	eng_flows_free(e);
	if (e->dropped_flows) {
		GHashTableIter it;
		gpointer key;
		g_hash_table_iter_init(&it, e->dropped_flows);
		while (g_hash_table_iter_next(&it, &key, NULL)) {
			free(key);
		}
		g_hash_table_destroy(e->dropped_flows);
		e->dropped_flows = NULL;
	}
	free(e->rtcp);
	e->rtcp = NULL;
	e->rtcp_count = e->rtcp_cap = 0;
}
