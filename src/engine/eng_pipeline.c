/*
 * eng_pipeline.c - one single-threaded analysis pipeline: record -> decode -> transport ->
 * SIP detection by content -> counters.
 *
 * Transports:
 *   UDP        one datagram = one message; SIP when the payload starts with a request or status
 *              line (after keep-alive CRLFs), else RTP/RTCP by header heuristics.
 *   TCP        cap_tcp reassembles each direction; the per-direction state machine below frames
 *              SIP by Content-Length (RFC 3261 §18.3) or, after an HTTP Upgrade, WebSocket
 *              frames (RFC 7118: one SIP message per WebSocket message).
 *   SCTP       each complete DATA user message is one SIP message.
 *
 * TCP direction states (struct cap_tcp_dir.app_state), transitions in tcp_data():
 *   DIR_NEW    --SIP start line-->       DIR_SIP
 *   DIR_NEW    --WebSocket handshake-->  DIR_WS      (both directions of the connection)
 *   DIR_NEW    --anything else-->        DIR_OTHER   (bytes skipped, resync on a gap)
 *   DIR_SIP    --unparseable bytes-->    resync on the next line that starts a SIP message
 *   any        --gap (lost bytes)-->     DIR_NEW unless DIR_WS (frames cannot be resynced
 *                                        safely, so a WS direction with a gap goes DIR_OTHER)
 *
 * Ownership: packet bytes are borrowed for the duration of eng_packet(); the only copies are
 * the WebSocket message being assembled (struct ws_msg, owned by the TCP direction and freed
 * with it) and what cap_tcp buffers. Thread: one owner thread; no locks.
 */
#include "config.h"

#include "sipnab/eng.h"

#include <stdlib.h>
#include <string.h>

#include "sipnab/cap_decode.h"
#include "sipnab/cap_sctp.h"
#include "sipnab/cap_tcp.h"
#include "sipnab/cap_ws.h"
#include "sipnab/sdp.h"
#include "sipnab/sip_msg.h"
#include "sipnab/sn_arena.h"

#include "eng_int.h"

enum dir_state {
	DIR_NEW = 0,
	DIR_SIP,
	DIR_WS,
	DIR_OTHER,
};

#define WS_MAX_MESSAGE  (256u * 1024u) /* a reassembled WebSocket message larger than this is dropped */
#define SCTP_REASM_MAX  (4u * 1024u * 1024u)
#define MSG_ARENA_LIMIT (1024u * 1024u) /* per-message parse arena budget */
#define KEEP_DEFAULT    (4ull << 30)   /* summaries and message bytes */
#define SDP_ARENA_LIMIT (256u * 1024u) /* per-body SDP parse arena budget */

/* A WebSocket message being assembled from frames; owned by its TCP direction. */
struct ws_msg {
	uint8_t *buf;   /* assembled, unmasked payload */
	size_t len;     /* bytes in buf */
	size_t cap;     /* capacity of buf */
	bool dropping;  /* the message exceeded WS_MAX_MESSAGE: discard until FIN */
};


void eng_stats_init(struct eng_stats *s)
{
	memset(s, 0, sizeof(*s));
	s->first_ts_ns = INT64_MAX;
	s->last_ts_ns = INT64_MIN;
}

static void count_method(struct eng_stats *s, const char *name, size_t len, uint64_t n)
{
	char tmp[ENG_METHOD_NAME_LEN];

	if (len >= sizeof(tmp)) {
		name = "(long)";
		len = strlen(name);
	}
	memcpy(tmp, name, len);
	tmp[len] = '\0';
	for (uint32_t i = 0; i < s->method_count; i++) {
		if (strcmp(s->methods[i].name, tmp) == 0) {
			s->methods[i].count += n;
			return;
		}
	}
	if (s->method_count == ENG_MAX_METHOD_NAMES) {
		s->methods_other += n;
		return;
	}
	memcpy(s->methods[s->method_count].name, tmp, len + 1);
	s->methods[s->method_count].count = n;
	s->method_count++;
}

void eng_stats_merge(struct eng_stats *dst, const struct eng_stats *src)
{
	dst->packets += src->packets;
	dst->bytes += src->bytes;
	dst->sip_messages += src->sip_messages;
	dst->sip_packets += src->sip_packets;
	dst->rtp_packets += src->rtp_packets;
	dst->rtcp_packets += src->rtcp_packets;
	dst->other_packets += src->other_packets;
	dst->decode_errors += src->decode_errors;
	dst->sip_errors += src->sip_errors;
	dst->truncated_packets += src->truncated_packets;
	dst->first_ts_ns = SN_MIN(dst->first_ts_ns, src->first_ts_ns);
	dst->last_ts_ns = SN_MAX(dst->last_ts_ns, src->last_ts_ns);
	dst->sip_udp += src->sip_udp;
	dst->sip_tcp += src->sip_tcp;
	dst->sip_ws += src->sip_ws;
	dst->sip_sctp += src->sip_sctp;
	dst->ip_fragments += src->ip_fragments;
	dst->ip_reassembled += src->ip_reassembled;
	dst->frag_timeouts += src->frag_timeouts;
	dst->tunnels += src->tunnels;
	dst->tcp_retransmissions += src->tcp_retransmissions;
	dst->tcp_out_of_order += src->tcp_out_of_order;
	dst->tcp_gaps += src->tcp_gaps;
	dst->requests += src->requests;
	dst->responses += src->responses;
	dst->rtp_candidates += src->rtp_candidates;
	dst->streams_dropped += src->streams_dropped;
	dst->rtp_dropped += src->rtp_dropped;
	dst->msgs_dropped += src->msgs_dropped;
	dst->calls_dropped += src->calls_dropped;
	dst->calls_rotated += src->calls_rotated;
	for (size_t i = 0; i < SN_ARRAY_SIZE(dst->responses_by_code); i++) {
		dst->responses_by_code[i] += src->responses_by_code[i];
	}
	for (uint32_t i = 0; i < src->method_count; i++) {
		count_method(dst, src->methods[i].name, strlen(src->methods[i].name),
			     src->methods[i].count);
	}
	dst->methods_other += src->methods_other;
}

/* ---- SIP ---- */

/* Parse one complete SIP message candidate and count it. */
static void sip_message(struct eng *e, enum eng_transport tr, const struct cap_packet *pkt,
			const uint8_t *p, size_t len)
{
	struct sip_msg msg;
	enum sn_status st;

	sn_arena_reset(&e->parse);
	st = sip_msg_parse(&msg, &e->parse, p, len);
	if (st != SN_OK || msg.call_id.len == 0) {
		/* without a Call-ID (RFC 3261 §8.1.1.4: mandatory) a message belongs to no call:
		 * malformed, as sngrep drops it too (it made a call of its own, Call-ID "-") */
		e->st.sip_errors++;
		return;
	}
	e->st.sip_messages++;
	e->record_had_sip = true;
	switch (tr) {
	case ENG_TR_UDP:
		e->st.sip_udp++;
		break;
	case ENG_TR_TCP:
		e->st.sip_tcp++;
		break;
	case ENG_TR_WS:
		e->st.sip_ws++;
		break;
	case ENG_TR_SCTP:
		e->st.sip_sctp++;
		break;
	}
	if (msg.is_request) {
		e->st.requests++;
		count_method(&e->st, (const char *)msg.method_name.ptr, msg.method_name.len, 1);
	} else {
		e->st.responses++;
		if (msg.status_code >= 100 && msg.status_code < 700) {
			e->st.responses_by_code[msg.status_code]++;
		}
	}
	eng_msg_record(e, tr, pkt, &msg, p);
}

/* Does the datagram hold a SIP message (after keep-alive CRLFs)? */
static bool datagram_sip(struct eng *e, enum eng_transport tr, const struct cap_packet *pkt,
			 const uint8_t *p, size_t len)
{
	size_t skip;

	if (len && p[0] >= 0x80) {
		/* not CR, LF or a token character: no SIP message starts here. Every RTP packet
		 * (version 2: first byte 0x80-0xbf) takes this way out, before two calls */
		return false;
	}
	skip = sip_msg_skip_keepalive(p, len);
	if (skip == len || !sip_msg_is_start(p + skip, len - skip)) {
		return false;
	}
	sip_message(e, tr, pkt, p + skip, len - skip);
	return true;
}

/* ---- TCP: SIP framing and WebSocket ---- */

/* Offset of the next line start in p[from..len) that begins a SIP message, or len. */
static size_t sip_resync(const uint8_t *p, size_t from, size_t len)
{
	for (size_t i = from; i < len; i++) {
		if (p[i] == '\n' && i + 1 < len && sip_msg_is_start(p + i + 1, len - i - 1)) {
			return i + 1;
		}
	}
	return len;
}

static void ws_msg_free(void *ptr)
{
	struct ws_msg *m = ptr;
	if (m) {
		free(m->buf);
		free(m);
	}
}

static uint8_t *scratch(struct eng *e, size_t n)
{
	if (e->scratch_cap < n) {
		e->scratch = sn_xrealloc(e->scratch, n);
		e->scratch_cap = n;
	}
	return e->scratch;
}

static void ws_append(struct ws_msg *m, const uint8_t *p, size_t n)
{
	if (m->dropping) {
		return;
	}
	if (m->len + n > WS_MAX_MESSAGE) {
		m->dropping = true;
		return;
	}
	if (m->cap < m->len + n) {
		size_t cap = SN_MAX(m->cap * 2, m->len + n);
		m->buf = sn_xrealloc(m->buf, cap);
		m->cap = cap;
	}
	memcpy(m->buf + m->len, p, n);
	m->len += n;
}

/* Consume WebSocket frames; returns bytes consumed. */
static size_t ws_frames(struct eng *e, struct cap_tcp_dir *dir, const struct cap_packet *pkt,
			const uint8_t *data, size_t len)
{
	size_t used = 0;
	struct ws_msg *m = dir->app_ptr;

	if (!m) {
		m = sn_xcalloc(1, sizeof(*m));
		dir->app_ptr = m;
	}
	while (used < len) {
		struct cap_ws_frame f;
		enum sn_status st = cap_ws_frame_parse(data + used, len - used, &f);
		if (st == SN_ETRUNC) {
			break;
		}
		if (st != SN_OK) {
			e->st.decode_errors++;
			dir->app_state = DIR_OTHER;
			return len;
		}
		if (f.payload_len > len - used - f.header_len) {
			/* wait for the whole frame, unless it can never fit in the TCP buffer */
			if (f.payload_len > WS_MAX_MESSAGE) {
				e->st.decode_errors++;
				dir->app_state = DIR_OTHER;
				return len;
			}
			break;
		}
		const uint8_t *payload = data + used + f.header_len;
		size_t plen = (size_t)f.payload_len;
		used += f.header_len + plen;
		if (f.opcode >= CAP_WS_CLOSE) {
			continue; /* control frames may come between fragments */
		}
		if (f.opcode != CAP_WS_CONT) {
			m->len = 0;
			m->dropping = false;
		}
		if (f.masked) {
			uint8_t *out = scratch(e, plen ? plen : 1);
			cap_ws_unmask(&f, payload, plen, out);
			ws_append(m, out, plen);
		} else {
			ws_append(m, payload, plen);
		}
		if (f.fin) {
			if (m->dropping) {
				e->st.sip_errors++;
			} else if (!datagram_sip(e, ENG_TR_WS, pkt, m->buf, m->len) && m->len) {
				e->st.sip_errors++;
			}
			m->len = 0;
			m->dropping = false;
		}
	}
	return used;
}

/* Consume SIP messages framed by Content-Length; returns bytes consumed. */
static size_t sip_frames(struct eng *e, struct cap_tcp_dir *dir, const struct cap_packet *pkt,
			 const uint8_t *data, size_t len)
{
	size_t used = 0;

	while (used < len) {
		size_t n;
		used += sip_msg_skip_keepalive(data + used, len - used);
		if (used == len) {
			break;
		}
		enum sn_status st = sip_msg_frame(data + used, len - used, &n);
		if (st == SN_ETRUNC) {
			break;
		}
		if (st != SN_OK || n == 0) {
			size_t next = sip_resync(data, used + 1, len);
			e->st.sip_errors++;
			if (next == len) {
				/* keep a possible partial start line for the next segment */
				dir->app_state = DIR_NEW;
				return len;
			}
			used = next;
			continue;
		}
		sip_message(e, ENG_TR_TCP, pkt, data + used, n);
		used += n;
	}
	return used;
}

static size_t tcp_data(void *user, struct cap_tcp_dir *dir, const struct cap_packet *pkt,
		       const uint8_t *data, size_t len, bool gap)
{
	struct eng *e = user;
	size_t hdr_len;

	if (gap) {
		dir->app_state = dir->app_state == DIR_WS ? DIR_OTHER : DIR_NEW;
	}
	switch (dir->app_state) {
	case DIR_NEW: {
		size_t skip = sip_msg_skip_keepalive(data, len);
		if (skip == len) {
			return len;
		}
		if (sip_msg_is_start(data + skip, len - skip)) {
			dir->app_state = DIR_SIP;
			return skip + sip_frames(e, dir, pkt, data + skip, len - skip);
		}
		enum sn_status st = cap_ws_handshake(data + skip, len - skip, &hdr_len);
		if (st == SN_OK) {
			dir->app_state = DIR_WS;
			return skip + hdr_len + ws_frames(e, dir, pkt, data + skip + hdr_len,
							  len - skip - hdr_len);
		}
		if (st == SN_ETRUNC && len < 8192) {
			return skip;
		}
		/* not SIP or WebSocket: look for a SIP start further on (mid-stream capture) */
		size_t next = sip_resync(data, skip, len);
		if (next < len) {
			dir->app_state = DIR_SIP;
			return next + sip_frames(e, dir, pkt, data + next, len - next);
		}
		return len > 2048 ? len - 2048 : 0;
	}
	case DIR_SIP:
		return sip_frames(e, dir, pkt, data, len);
	case DIR_WS:
		return ws_frames(e, dir, pkt, data, len);
	default:
		return len;
	}
}

/* ---- SCTP ---- */

static void sctp_data(void *user, const struct cap_packet *pkt, const struct cap_sctp_data *chunk)
{
	struct eng *e = user;

	if (!datagram_sip(e, ENG_TR_SCTP, pkt, chunk->data, chunk->len)) {
		/* not SIP: nothing else runs over SCTP in this tool */
	}
}

/* ---- records ---- */

struct eng *eng_new(const struct eng_config *cfg)
{
	struct eng *e = sn_xcalloc(1, sizeof(*e));

	if (cfg) {
		e->cfg = *cfg;
	} else {
		e->cfg.rtp_heuristic = true;
	}
	eng_stats_init(&e->st);
	e->dec = cap_decoder_new(NULL);
	e->tcp = cap_tcp_new(NULL, tcp_data, ws_msg_free, e);
	e->sctp = cap_sctp_reasm_new(SCTP_REASM_MAX);
	sn_arena_init(&e->parse, MSG_ARENA_LIMIT);
	sn_arena_init(&e->sdp, SDP_ARENA_LIMIT);
	sn_arena_init(&e->keep, e->cfg.keep_bytes ? e->cfg.keep_bytes : KEEP_DEFAULT);
	e->keep.block_size = 256 * 1024;
	e->keep.huge_max = e->cfg.keep_huge;
	return e;
}

void eng_packet(struct eng *e, const struct cap_record *rec)
{
	struct cap_packet pkt;
	enum sn_status st;

	e->st.packets++;
	e->st.bytes += rec->origlen;
	e->st.first_ts_ns = SN_MIN(e->st.first_ts_ns, rec->ts_ns);
	e->st.last_ts_ns = SN_MAX(e->st.last_ts_ns, rec->ts_ns);
	e->record_had_sip = false;
	e->cur_file = rec->file_index;
	e->cur_offset = rec->offset;
	e->cur_sub = 0;
	e->cur_ts = rec->ts_ns;
	e->cur_data = rec->data;
	e->cur_len = rec->caplen;
	e->cur_transient = rec->transient;
	e->cur_data_at = rec->data_at;

	st = cap_decoder_run(e->dec, rec, &pkt);
	if (st != SN_OK) {
		if (st == SN_EPARSE) {
			e->st.decode_errors++;
		} else if (st == SN_ETRUNC) {
			e->st.truncated_packets++;
		}
		return;
	}
	if (pkt.truncated) {
		e->st.truncated_packets++;
	}
	switch (pkt.l4) {
	case CAP_L4_UDP:
		if (!datagram_sip(e, ENG_TR_UDP, &pkt, pkt.payload, pkt.payload_len)) {
			eng_media_udp(e, &pkt);
			return;
		}
		break;
	case CAP_L4_TCP:
		cap_tcp_segment(e->tcp, &pkt);
		break;
	case CAP_L4_SCTP:
		if (cap_sctp_walk(e->sctp, &pkt, sctp_data, e) == SN_EPARSE) {
			e->st.decode_errors++;
		}
		break;
	default:
		break;
	}
	if (e->record_had_sip) {
		e->st.sip_packets++;
	}
}

void eng_finish(struct eng *e)
{
	const struct cap_decode_stats *ds;
	const struct cap_tcp_stats *ts;

	cap_tcp_flush(e->tcp);
	cap_decoder_flush(e->dec);
	ds = cap_decoder_stats(e->dec);
	ts = cap_tcp_stats(e->tcp);
	e->st.ip_fragments = ds->fragments;
	e->st.ip_reassembled = ds->reassembled;
	e->st.frag_timeouts = ds->frag_timeouts;
	e->st.tunnels = ds->tunnels;
	e->st.tcp_retransmissions = ts->retransmissions;
	e->st.tcp_out_of_order = ts->out_of_order;
	e->st.tcp_gaps = ts->gaps;
	/* on the worker's own thread: the result build only merges */
	eng_msgs_sort(e);
}

/*
 * Measured with perf stat task-clock on c5k, --cores 2, alternating runs: 276 ms of CPU
 * without the prefetch, 232 ms with a distance of 4 (8 and 16: 243 ms); the single reader's
 * workers (SIPNAB_NO_SPLIT=1): 199 -> 179 ms. Sequential reading on one thread gains
 * nothing: the hardware prefetcher already follows it.
 *
 * Every line of the packet is asked for, up to ENG_PREFETCH_BYTES: the first two only, a SIP
 * message's text (500-900 bytes in the sweep captures) was read from memory by its parser as
 * it went (memchr(), after the other thread's scan had read only the record's headers): at
 * --cores 2 the 2,000-call capture spent 1,827 perf samples in memchr() against 993 at one
 * core. bench/ab.sh (make pgo, paired): c5k 0.941 and 0.969 of the time at --cores 2 (21 and
 * 31 rounds), 0.982 at one core; the 2,000-call capture 0.981 and 1.016; 20,000 calls at two
 * cores 1.004 (11 rounds).
 */
#define ENG_PREFETCH 4u
#define ENG_PREFETCH_BYTES 1024u

void eng_packets(struct eng *e, const struct cap_record *recs, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		if (i + ENG_PREFETCH < n) {
			const uint8_t *d = recs[i + ENG_PREFETCH].data;
			uint32_t len = SN_MIN(recs[i + ENG_PREFETCH].caplen, ENG_PREFETCH_BYTES);

			for (uint32_t o = 0; o < len; o += 64) {
				__builtin_prefetch(d + o);
			}
		}
		eng_packet(e, &recs[i]);
	}
}

const struct eng_stats *eng_stats(const struct eng *e)
{
	return &e->st;
}

void eng_free(struct eng *e)
{
	if (!e) {
		return;
	}
	cap_tcp_free(e->tcp);
	cap_sctp_reasm_free(e->sctp);
	cap_decoder_free(e->dec);
	eng_msgs_free(e);
	eng_media_free(e);
	sn_arena_cleanup(&e->parse);
	sn_arena_cleanup(&e->sdp);
	sn_arena_cleanup(&e->keep);
	free(e->scratch);
	free(e);
}
