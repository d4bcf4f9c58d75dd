/*
 * ana_report.c - the headless report of REPORT.md over a finished struct eng_result.
 *
 * Four outputs share the same derived values (struct call_view):
 *   JSON  "sipnab", "capture", "summary", "calls", "streams" exactly as REPORT.md names them,
 *         plus additions (kind, hangup, ring_ts, dialogs, auth_retries, legs, problems ...);
 *   text  aligned tables (capture, summary, calls, streams, problems); column widths come from
 *         a first pass over the cells, long fields are cut with "...";
 *   CSV   one CDR line per call after a header line, RFC 4180 quoting;
 *   call  one call in detail with its message ladder (ana_ladder.c) and its streams.
 * Selections (ana_filter.c) limit the calls listed; streams are always complete, so the
 * "streams" indexes of a call keep pointing at the right entries.
 *
 * Determinism: lists keep the result's order (calls by first message then Call-ID, streams by
 * first packet then endpoints and SSRC); methods by count (descending) then name; response
 * codes by code. Non-integer numbers are printed with snprintf at a fixed precision
 * (timestamps 6 decimals, ms and percentages 3, MOS 2) and handed to cJSON as raw numbers, so
 * the same input gives byte-identical output however it was processed.
 * Ownership: reads the caller's structures; everything built here is freed before returning.
 * Thread: any; no state.
 */
#include "config.h"

#include "sipnab/ana_report.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "sipnab/ana_ladder.h"
#include "sipnab/sn_pool.h"

#define URI_COLS   32u /* text report: widest From/To/Call-ID cell */
#define CELL_MAX   256u
#define NS_PER_MS  1000000.0
#define NS_PER_S   1000000000.0
#define PROB_COUNT 7u

/* ---- formatting helpers ---- */

static const char *str_or(const char *s, const char *dflt)
{
	return s && s[0] ? s : dflt;
}

/* Seconds since the epoch with exactly six decimals ("%" PRId64 ".%06" PRId64). */
static void ts_format(int64_t ts_ns, char *buf, size_t len)
{
	int64_t sec = ts_ns / 1000000000;
	int64_t usec = (ts_ns % 1000000000) / 1000;
	char tmp[48];
	char *end = tmp + sizeof(tmp);
	char *p = end;

	if (usec < 0) {
		sec -= 1;
		usec += 1000000;
	}
	for (int i = 0; i < 6; i++) {
		*--p = (char)('0' + usec % 10);
		usec /= 10;
	}
	*--p = '.';
	p = sn_u64_digits(sec < 0 ? (uint64_t)0 - (uint64_t)sec : (uint64_t)sec, p);
	if (sec < 0) {
		*--p = '-';
	}
	if (len) {
		size_t n = SN_MIN((size_t)(end - p), len - 1);

		memcpy(buf, p, n);
		buf[n] = '\0';
	}
}

/* @p v (0-99) as two digits at @p p. */
static void two_digits(char *p, int v)
{
	p[0] = (char)('0' + v / 10);
	p[1] = (char)('0' + v % 10);
}

static void clock_format(int64_t ts_ns, bool with_date, char *buf, size_t len)
{
	time_t sec = (time_t)(ts_ns / 1000000000);
	int64_t ms = (ts_ns % 1000000000) / 1000000;
	struct tm tm;

	if (ms < 0) {
		sec -= 1;
		ms += 1000;
	}
	if (!with_date && ts_ns >= 0 && len >= 13) {
		/* the time of day needs no calendar: the text report's Start column, one per
		 * call, without gmtime_r() and snprintf() (what %02d:%02d:%02d.%03d gives) */
		int day = (int)(sec % 86400);

		two_digits(buf, day / 3600);
		buf[2] = ':';
		two_digits(buf + 3, day / 60 % 60);
		buf[5] = ':';
		two_digits(buf + 6, day % 60);
		buf[8] = '.';
		buf[9] = (char)('0' + ms / 100);
		two_digits(buf + 10, (int)(ms % 100));
		buf[12] = '\0';
		return;
	}
	if (!gmtime_r(&sec, &tm)) {
		snprintf(buf, len, "?");
		return;
	}
	if (with_date) {
		snprintf(buf, len, "%04d-%02d-%02d %02d:%02d:%02d.%03d", tm.tm_year + 1900,
			 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, (int)ms);
	} else {
		snprintf(buf, len, "%02d:%02d:%02d.%03d", tm.tm_hour, tm.tm_min, tm.tm_sec,
			 (int)ms);
	}
}

/* @p v with @p dec decimals; "-0.000" becomes "0.000". False for NaN and infinities. */
static bool fixed_format(double v, int dec, char *buf, size_t len)
{
	return sn_fmt_fixed(v, dec, buf, len);
}

/* ---- derived values of a call ---- */

struct call_view {
	int64_t setup_ns;    /* -1 when unknown */
	int64_t duration_ns; /* answer to end; -1 when not answered or not ended */
	bool has_mos;
	double worst_mos;
	double worst_loss_pct;
	double worst_jitter_ms;
	uint32_t problems; /* enum ana_problem bits */
};

static void call_view_init(struct call_view *v, const struct ana_report_input *in,
			   const struct eng_call *c)
{
	const struct eng_result *r = in->result;

	memset(v, 0, sizeof(*v));
	v->setup_ns = ana_call_setup_ns(c);
	v->duration_ns = c->answer_ns >= 0 && c->end_ns >= 0 ? c->end_ns - c->answer_ns : -1;
	for (uint32_t i = 0; i < c->stream_count; i++) {
		const struct eng_stream *s = &r->streams[c->streams[i]];
		double loss = rtp_stats_loss_pct(&s->rtp);

		if (s->mos > 0 && (!v->has_mos || s->mos < v->worst_mos)) {
			v->worst_mos = s->mos;
			v->has_mos = true;
		}
		if (i == 0 || loss > v->worst_loss_pct) {
			v->worst_loss_pct = loss;
		}
		if (i == 0 || s->rtp.max_jitter_ms > v->worst_jitter_ms) {
			v->worst_jitter_ms = s->rtp.max_jitter_ms;
		}
	}
	v->problems = ana_filter_call_problems(in->filter, r, c);
}

/* Distinct non-empty codec names of the call's streams, in stream order; returns the count. */
static uint32_t call_codecs(const struct eng_result *r, const struct eng_call *c, const char **out)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < c->stream_count; i++) {
		const char *name = r->streams[c->streams[i]].codec;
		bool seen = !name[0];

		for (uint32_t j = 0; j < n && !seen; j++) {
			seen = strcmp(out[j], name) == 0;
		}
		if (!seen) {
			out[n++] = name;
		}
	}
	return n;
}

static bool call_selected(const struct ana_report_input *in, const struct eng_call *c)
{
	return ana_filter_match(in->filter, in->result, c);
}

static int method_cmp(const void *a, const void *b)
{
	const struct eng_method_count *x = a;
	const struct eng_method_count *y = b;

	if (x->count != y->count) {
		return x->count > y->count ? -1 : 1;
	}
	return strcmp(x->name, y->name);
}

/* Methods of @p s sorted for output; caller frees. */
static struct eng_method_count *sorted_methods(const struct eng_stats *s)
{
	struct eng_method_count *m = sn_xcalloc(s->method_count + 1u, sizeof(*m));

	memcpy(m, s->methods, s->method_count * sizeof(*m));
	qsort(m, s->method_count, sizeof(*m), method_cmp);
	return m;
}

/* ---- JSON ---- */

static void add_u64(cJSON *obj, const char *key, uint64_t v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%" PRIu64, v);
	cJSON_AddRawToObject(obj, key, buf);
}

/* Timestamp in ns, null when @p present is false. */
static void add_ts(cJSON *obj, const char *key, int64_t ts_ns, bool present)
{
	char buf[48];

	if (!present) {
		cJSON_AddNullToObject(obj, key);
		return;
	}
	ts_format(ts_ns, buf, sizeof(buf));
	cJSON_AddRawToObject(obj, key, buf);
}

static void json_capture(cJSON *root, const struct ana_report_input *in)
{
	const struct eng_stats *s = &in->result->stats;
	cJSON *cap = cJSON_AddObjectToObject(root, "capture");
	cJSON *files = cJSON_AddArrayToObject(cap, "files");
	cJSON *tr, *errs;

	for (size_t i = 0; i < in->file_count; i++) {
		cJSON_AddItemToArray(files, cJSON_CreateString(in->files[i]));
	}
	add_u64(cap, "packets", s->packets);
	add_u64(cap, "bytes", s->bytes);
	add_u64(cap, "sip_messages", s->sip_messages);
	add_u64(cap, "rtp_packets", s->rtp_packets);
	add_u64(cap, "rtcp_packets", s->rtcp_packets);
	add_u64(cap, "other_packets", s->other_packets);
	add_ts(cap, "first_ts", s->first_ts_ns, s->packets > 0);
	add_ts(cap, "last_ts", s->last_ts_ns, s->packets > 0);
	add_u64(cap, "decode_errors", s->decode_errors);
	add_u64(cap, "truncated_packets", s->truncated_packets);
	/* additions beyond REPORT.md's minimum */
	add_u64(cap, "sip_errors", s->sip_errors);
	tr = cJSON_AddObjectToObject(cap, "sip_transports");
	add_u64(tr, "udp", s->sip_udp);
	add_u64(tr, "tcp", s->sip_tcp);
	add_u64(tr, "websocket", s->sip_ws);
	add_u64(tr, "sctp", s->sip_sctp);
	add_u64(cap, "ip_fragments", s->ip_fragments);
	add_u64(cap, "ip_reassembled", s->ip_reassembled);
	add_u64(cap, "ip_fragment_timeouts", s->frag_timeouts);
	add_u64(cap, "tunnelled_packets", s->tunnels);
	add_u64(cap, "tcp_retransmissions", s->tcp_retransmissions);
	add_u64(cap, "tcp_out_of_order", s->tcp_out_of_order);
	add_u64(cap, "tcp_gaps", s->tcp_gaps);
	{
		/* what a bound kept out of the analysis (-l, --max-streams, budgets); calls
		 * evicted by -R count in calls and sip_messages too, and calls_rotated says how
		 * many of the calls were evictions (REPORT.md: keys may be added) */
		cJSON *d = cJSON_AddObjectToObject(cap, "dropped");
		add_u64(d, "calls", s->calls_dropped);
		add_u64(d, "calls_rotated", s->calls_rotated);
		add_u64(d, "sip_messages", s->msgs_dropped);
		add_u64(d, "streams", s->streams_dropped);
		add_u64(d, "rtp_packets", s->rtp_dropped);
	}
	errs = cJSON_AddArrayToObject(cap, "input_errors");
	for (size_t i = 0; i < in->error_count; i++) {
		cJSON *e = cJSON_CreateObject();
		cJSON_AddStringToObject(e, "file", in->errors[i].file);
		cJSON_AddStringToObject(e, "error",
					in->errors[i].truncated ? "truncated" : "corrupt");
		add_u64(e, "offset", in->errors[i].offset);
		cJSON_AddStringToObject(e, "message", in->errors[i].message);
		cJSON_AddItemToArray(errs, e);
	}
}

static void json_summary(cJSON *root, const struct ana_report_input *in, uint32_t selected)
{
	const struct eng_result *r = in->result;
	const struct eng_stats *s = &r->stats;
	cJSON *sum = cJSON_AddObjectToObject(root, "summary");
	cJSON *states, *methods, *responses;
	struct eng_method_count *m;

	add_u64(sum, "calls", r->call_count);
	add_u64(sum, "dialogs", r->dialogs);
	add_u64(sum, "streams", r->stream_count);
	states = cJSON_AddObjectToObject(sum, "by_state");
	for (int st = 0; st < ENG_CALL__COUNT; st++) {
		if (r->by_state[st]) {
			add_u64(states, eng_call_state_name((enum eng_call_state)st),
				r->by_state[st]);
		}
	}
	methods = cJSON_AddObjectToObject(sum, "methods");
	m = sorted_methods(s);
	for (uint32_t i = 0; i < s->method_count; i++) {
		add_u64(methods, m[i].name, m[i].count);
	}
	if (s->methods_other) {
		add_u64(methods, "(other)", s->methods_other);
	}
	free(m);
	responses = cJSON_AddObjectToObject(sum, "responses");
	for (int code = 100; code < 700; code++) {
		if (s->responses_by_code[code]) {
			char key[12];
			snprintf(key, sizeof(key), "%d", code);
			add_u64(responses, key, s->responses_by_code[code]);
		}
	}
	if (ana_filter_is_active(in->filter)) {
		const struct ana_filter *f = in->filter;
		cJSON *sel = cJSON_AddObjectToObject(sum, "selection");

		cJSON_AddBoolToObject(sel, "problems", f->problems);
		cJSON_AddBoolToObject(sel, "one_way", f->one_way);
		cJSON_AddBoolToObject(sel, "slow_setup", f->slow_setup);
		if (f->slow_setup) {
			add_u64(sel, "slow_setup_ms", f->slow_setup_ms);
		}
		cJSON_AddBoolToObject(sel, "short_calls", f->short_calls);
		if (f->short_calls) {
			add_u64(sel, "short_call_s", f->short_call_s);
		}
		add_u64(sel, "selected_calls", selected);
	}
}

/* ---- element writer ----
 *
 * The calls and streams arrays hold most of a large report, and building a cJSON tree per
 * element cost about 8 us each (a malloc and free per key and value; measured: 0.5 s of a
 * 1.5 s run for 20,000 calls and 40,000 streams). Elements are therefore written straight
 * into a buffer, byte for byte as cJSON_Print() formats them at that depth (the golden tests
 * compare the whole document): members on their own line, indented with tabs, "key":<TAB>
 * value, arrays on one line with ", " between items, strings escaped as cJSON escapes them.
 */
struct jw {
	char *buf;        /* owned */
	size_t len, cap;
	int depth;        /* tabs before a member of the innermost open object */
	bool first;       /* no member written yet in the innermost object or array */
};

/* Room for @p n more bytes; the buffer exists afterwards even for n = 0 (the writers compute
 * w->buf + w->len). */
static void jw_reserve(struct jw *w, size_t n)
{
	if (w->cap - w->len < n || !w->buf) {
		w->cap = SN_MAX(w->cap * 2, w->len + n + 256);
		w->buf = sn_xrealloc(w->buf, w->cap);
	}
}

static void jw_put(struct jw *w, const char *p, size_t n)
{
	jw_reserve(w, n);
	memcpy(w->buf + w->len, p, n);
	w->len += n;
}

static void jw_puts(struct jw *w, const char *p)
{
	jw_put(w, p, strlen(p));
}

#define OUT_DIRECT_MIN (16u << 10) /* rendered bytes written past stdio from this size */
#define OUT_FLUSH      (64u << 10) /* rendered bytes (elements, rows) gathered before they
				     * are written */

/*
 * Write @p len rendered bytes to @p out. The large pieces (the arrays' blocks, the tables'
 * rows) go straight to the stream's file descriptor, after what stdio holds (flushed first,
 * so the order is kept): copying them into stdio's buffer first was a quarter of the calls
 * array's writing at --cores 2 (c5k: 0.6 of 2.2 ms, its 4 MB read from the other core's
 * cache). A stream without a descriptor (open_memstream()), and whatever a direct write
 * could not write, go through stdio, which then fails and reports it as before (ferror(),
 * checked when the report ends).
 */
static void out_put(FILE *out, const char *buf, size_t len)
{
	int fd = len >= OUT_DIRECT_MIN && !ferror(out) ? fileno(out) : -1;

	if (fd >= 0 && fflush(out) == 0) {
		while (len > 0) {
			ssize_t k = write(fd, buf, len);

			if (k < 0 && errno == EINTR) {
				continue;
			}
			if (k <= 0) {
				break;
			}
			buf += k;
			len -= (size_t)k;
		}
	}
	if (len > 0) {
		fwrite(buf, 1, len, out);
	}
}

static void jw_tabs(struct jw *w, int n)
{
	jw_reserve(w, (size_t)n);
	for (int i = 0; i < n; i++) {
		w->buf[w->len++] = '\t';
	}
}

/* Does any of the 8 bytes at p need an escape? (SWAR: a byte < 0x20, '"' or '\\'; never a
 * false "no") */
static bool word_escaped(const unsigned char *p)
{
	const uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;
	uint64_t x, q, b;

	memcpy(&x, p, 8);
	q = x ^ (ones * '"');
	b = x ^ (ones * '\\');
	return (((x - ones * 0x20) & ~x) | ((q - ones) & ~q) | ((b - ones) & ~b)) & highs;
}

/* Bytes cJSON escapes in a string: the quote, the backslash and the control characters. */
static bool json_escaped(unsigned char c)
{
	return c < 32 || c == '"' || c == '\\';
}

/*
 * A JSON string as cJSON prints it. Runs of bytes that need no escape are copied at once:
 * measured with callgrind, the byte-at-a-time loop was the report's largest cost (7 % of a
 * run over a capture of 500 unique calls).
 */
static void jw_string(struct jw *w, const char *s)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *p = (const unsigned char *)s;
	const unsigned char *end = p + strlen(s);

	jw_reserve(w, (size_t)(end - p) * 6 + 2);
	w->buf[w->len++] = '"';
	for (;;) {
		const unsigned char *run = p;
		char esc = 0;

		/* eight bytes at a time while none of them needs an escape */
		while (end - p >= 8 && !word_escaped(p)) {
			p += 8;
		}
		while (p < end && !json_escaped(*p)) {
			p++;
		}
		memcpy(w->buf + w->len, run, (size_t)(p - run));
		w->len += (size_t)(p - run);
		if (p == end) {
			break;
		}
		switch (*p) {
		case '"':
			esc = '"';
			break;
		case '\\':
			esc = '\\';
			break;
		case '\b':
			esc = 'b';
			break;
		case '\f':
			esc = 'f';
			break;
		case '\n':
			esc = 'n';
			break;
		case '\r':
			esc = 'r';
			break;
		case '\t':
			esc = 't';
			break;
		default:
			break;
		}
		if (esc) {
			w->buf[w->len++] = '\\';
			w->buf[w->len++] = esc;
		} else {
			memcpy(w->buf + w->len, "\\u00", 4);
			w->len += 4;
			w->buf[w->len++] = hex[*p >> 4];
			w->buf[w->len++] = hex[*p & 15];
		}
		p++;
	}
	w->buf[w->len++] = '"';
}

/*
 * ",\n", the tabs, the quoted key and ":\t" in one reservation (about twenty keys per call).
 * Keys are the report's own literals, none of which needs a JSON escape; values go through
 * jw_string().
 */
static void jw_key(struct jw *w, const char *key)
{
	size_t n = strlen(key);
	char *o;

	jw_reserve(w, n + (size_t)w->depth + 6);
	o = w->buf + w->len;
	if (!w->first) {
		*o++ = ',';
	}
	*o++ = '\n';
	memset(o, '\t', (size_t)w->depth);
	o += w->depth;
	*o++ = '"';
	memcpy(o, key, n);
	o += n;
	*o++ = '"';
	*o++ = ':';
	*o++ = '\t';
	w->len = (size_t)(o - w->buf);
	w->first = false;
}

/* Open an object: the element itself (key NULL) or a member object. */
static void jw_open(struct jw *w, const char *key)
{
	if (key) {
		jw_key(w, key);
	}
	jw_put(w, "{", 1);
	w->depth++;
	w->first = true;
}

static void jw_close(struct jw *w)
{
	w->depth--;
	jw_put(w, "\n", 1);
	jw_tabs(w, w->depth);
	jw_put(w, "}", 1);
	w->first = false;
}

static void jw_raw(struct jw *w, const char *key, const char *raw)
{
	jw_key(w, key);
	jw_puts(w, raw);
}

static void jw_str(struct jw *w, const char *key, const char *s)
{
	jw_key(w, key);
	jw_string(w, s);
}

static void jw_null(struct jw *w, const char *key)
{
	jw_raw(w, key, "null");
}

/* "%" PRIu64 / "%" PRId64 without printf (the report prints hundreds of thousands). */
static void jw_u64(struct jw *w, const char *key, uint64_t v)
{
	char buf[24];
	char *p = sn_u64_digits(v, buf + sizeof(buf));

	jw_key(w, key);
	jw_put(w, p, (size_t)(buf + sizeof(buf) - p));
}

static void jw_i64(struct jw *w, const char *key, int64_t v)
{
	char buf[24];
	char *p = sn_u64_digits(v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v, buf + sizeof(buf));

	if (v < 0) {
		*--p = '-';
	}
	jw_key(w, key);
	jw_put(w, p, (size_t)(buf + sizeof(buf) - p));
}

static void jw_ts(struct jw *w, const char *key, int64_t ts_ns, bool present)
{
	char buf[48];

	if (!present) {
		jw_null(w, key);
		return;
	}
	ts_format(ts_ns, buf, sizeof(buf));
	jw_raw(w, key, buf);
}

static void jw_fixed(struct jw *w, const char *key, double v, int dec, bool present)
{
	char buf[64];

	if (!present || !fixed_format(v, dec, buf, sizeof(buf))) {
		jw_null(w, key);
		return;
	}
	jw_raw(w, key, buf);
}

static void jw_str_or_null(struct jw *w, const char *key, const char *s)
{
	if (s && s[0]) {
		jw_str(w, key, s);
	} else {
		jw_null(w, key);
	}
}

/* Arrays on one line: "[a, b]". */
static void jw_array_open(struct jw *w, const char *key)
{
	jw_key(w, key);
	jw_put(w, "[", 1);
	w->first = true;
}

static void jw_array_item(struct jw *w, const char *raw, bool string)
{
	if (!w->first) {
		jw_put(w, ", ", 2);
	}
	w->first = false;
	if (string) {
		jw_string(w, raw);
	} else {
		jw_puts(w, raw);
	}
}

static void jw_array_close(struct jw *w)
{
	jw_put(w, "]", 1);
	w->first = false;
}

static void jw_problems(struct jw *w, uint32_t bits)
{
	jw_array_open(w, "problems");
	for (uint32_t b = 0; b < PROB_COUNT; b++) {
		if (bits & (1u << b)) {
			jw_array_item(w, ana_problem_name(1u << b), true);
		}
	}
	jw_array_close(w);
}

static void json_call(struct jw *o, const struct ana_report_input *in, const struct eng_call *c)
{
	const struct eng_result *r = in->result;
	const char **codecs = sn_xcalloc(c->stream_count + 1u, sizeof(*codecs));
	uint32_t ncodecs = call_codecs(r, c, codecs);
	struct call_view v;

	call_view_init(&v, in, c);
	jw_open(o, NULL);
	jw_str(o, "call_id", str_or(c->call_id, ""));
	jw_str(o, "kind", str_or(c->kind, ""));
	jw_str(o, "from", str_or(c->from_uri, ""));
	jw_str(o, "to", str_or(c->to_uri, ""));
	jw_str(o, "from_tag", str_or(c->from_tag, ""));
	jw_str(o, "to_tag", str_or(c->to_tag, ""));
	jw_str(o, "state", eng_call_state_name(c->state));
	jw_str_or_null(o, "hangup", c->hangup);
	jw_ts(o, "start_ts", c->start_ns, c->start_ns >= 0);
	jw_ts(o, "ring_ts", c->ring_ns, c->ring_ns >= 0);
	jw_ts(o, "answer_ts", c->answer_ns, c->answer_ns >= 0);
	jw_ts(o, "end_ts", c->end_ns, c->end_ns >= 0);
	jw_fixed(o, "setup_ms", (double)v.setup_ns / NS_PER_MS, 3, v.setup_ns >= 0);
	jw_fixed(o, "duration_s", (double)v.duration_ns / NS_PER_S, 3, v.duration_ns >= 0);
	jw_u64(o, "messages", c->messages);
	jw_u64(o, "retransmissions", c->retransmissions);
	if (c->final_code) {
		jw_u64(o, "final_code", c->final_code);
	} else {
		jw_null(o, "final_code");
	}
	jw_u64(o, "hops", c->hops);
	jw_u64(o, "dialogs", c->dialogs);
	jw_u64(o, "auth_retries", c->auth_retries);
	jw_array_open(o, "legs");
	for (uint32_t i = 0; i < c->legs; i++) {
		jw_array_item(o, str_or(c->leg_ids[i], ""), true);
	}
	jw_array_close(o);
	jw_array_open(o, "codecs");
	for (uint32_t i = 0; i < ncodecs; i++) {
		jw_array_item(o, codecs[i], true);
	}
	jw_array_close(o);
	jw_array_open(o, "streams");
	for (uint32_t i = 0; i < c->stream_count; i++) {
		char buf[24];

		buf[sizeof(buf) - 1] = '\0';
		jw_array_item(o, sn_u64_digits(c->streams[i], buf + sizeof(buf) - 1), false);
	}
	jw_array_close(o);
	jw_fixed(o, "worst_mos", v.worst_mos, 2, v.has_mos);
	jw_fixed(o, "worst_loss_pct", v.worst_loss_pct, 3, c->stream_count > 0);
	jw_fixed(o, "worst_jitter_ms", v.worst_jitter_ms, 3, c->stream_count > 0);
	jw_problems(o, v.problems);
	jw_close(o);
	free(codecs);
}

/* "0x%08X" of @p v into @p buf (at least 11 bytes), without printf. */
static void ssrc_hex(uint32_t v, char *buf)
{
	static const char hex[] = "0123456789ABCDEF";

	buf[0] = '0';
	buf[1] = 'x';
	for (int i = 0; i < 8; i++) {
		buf[2 + i] = hex[(v >> (28 - 4 * i)) & 15];
	}
	buf[10] = '\0';
}

static void json_stream(struct jw *o, const struct eng_result *r, const struct eng_stream *s)
{
	const struct rtp_stats *rtp = &s->rtp;
	char buf[64];

	jw_open(o, NULL);
	jw_str(o, "src", eng_endpoint_str(&s->src, s->sport, buf, sizeof(buf)));
	jw_str(o, "dst", eng_endpoint_str(&s->dst, s->dport, buf, sizeof(buf)));
	ssrc_hex(s->ssrc, buf);
	jw_str(o, "ssrc", buf);
	jw_i64(o, "payload_type", s->pt);
	jw_str(o, "codec", s->codec);
	jw_u64(o, "clock_rate", s->clock_rate);
	jw_ts(o, "first_ts", rtp->first_ns, rtp->packets > 0);
	jw_ts(o, "last_ts", rtp->last_ns, rtp->packets > 0);
	jw_u64(o, "packets", rtp->packets);
	jw_u64(o, "bytes", rtp->bytes);
	jw_i64(o, "expected", rtp_stats_expected(rtp));
	jw_i64(o, "lost", rtp_stats_lost(rtp));
	jw_fixed(o, "loss_pct", rtp_stats_loss_pct(rtp), 3, true);
	jw_u64(o, "duplicates", rtp->duplicates);
	jw_u64(o, "out_of_order", rtp->out_of_order);
	jw_u64(o, "seq_errors", rtp->seq_errors);
	jw_fixed(o, "max_delta_ms", rtp->max_delta_ms, 3, true);
	jw_fixed(o, "mean_delta_ms", rtp->mean_delta_ms, 3, true);
	jw_fixed(o, "jitter_max_ms", rtp->max_jitter_ms, 3, true);
	jw_fixed(o, "jitter_mean_ms", rtp->mean_jitter_ms, 3, true);
	jw_u64(o, "max_burst_loss", rtp->max_burst_loss);
	jw_u64(o, "marker_packets", rtp->marker_packets);
	jw_str(o, "dtmf", rtp->dtmf);
	jw_fixed(o, "mos", s->mos, 2, s->mos > 0);
	if (s->call >= 0 && (uint32_t)s->call < r->call_count) {
		jw_str(o, "call_id", str_or(r->calls[s->call].call_id, ""));
	} else {
		jw_null(o, "call_id");
	}
	jw_open(o, "rtcp");
	if (s->has_rtcp && s->rtcp) {
		const struct rtcp_summary *rs = s->rtcp;
		jw_fixed(o, "reported_loss_pct", rs->loss_pct, 3, rs->reports > 0);
		jw_fixed(o, "reported_jitter_ms", rs->jitter_ms, 3, rs->has_jitter);
		jw_fixed(o, "rtt_ms", rs->rtt_ms, 3, rs->has_rtt);
		/* additions: the sender's SDES CNAME and SR count, XR VoIP metrics (RFC 3611) */
		jw_str_or_null(o, "cname", rs->cname);
		jw_u64(o, "sender_reports", rs->sr_count);
		jw_fixed(o, "xr_mos_lq", rs->xr.mos_lq / 10.0, 1, rs->has_xr && rs->xr.mos_lq != 127);
		jw_fixed(o, "xr_mos_cq", rs->xr.mos_cq / 10.0, 1, rs->has_xr && rs->xr.mos_cq != 127);
		jw_fixed(o, "xr_r_factor", rs->xr.r_factor, 0, rs->has_xr && rs->xr.r_factor != 127);
	} else {
		jw_null(o, "reported_loss_pct");
		jw_null(o, "reported_jitter_ms");
		jw_null(o, "rtt_ms");
		jw_null(o, "cname");
		jw_u64(o, "sender_reports", 0);
		jw_null(o, "xr_mos_lq");
		jw_null(o, "xr_mos_cq");
		jw_null(o, "xr_r_factor");
	}
	jw_close(o);
	/* additions */
	jw_raw(o, "announced", s->announced ? "true" : "false");
	jw_problems(o, ana_filter_stream_problems(s));
	jw_close(o);
}

static cJSON *json_build(const struct ana_report_input *in)
{
	const struct eng_result *r = in->result;
	cJSON *root = cJSON_CreateObject();
	cJSON *ver = cJSON_AddObjectToObject(root, "sipnab");
	cJSON *calls, *streams;
	uint32_t selected = 0;

	cJSON_AddStringToObject(ver, "version", PACKAGE_VERSION);
	json_capture(root, in);
	for (uint32_t i = 0; i < r->call_count; i++) {
		selected += call_selected(in, &r->calls[i]);
	}
	json_summary(root, in, selected);
	/* filled by json_write(), one element at a time */
	calls = cJSON_AddArrayToObject(root, "calls");
	streams = cJSON_AddArrayToObject(root, "streams");
	(void)calls;
	(void)streams;
	return root;
}

/*
 * The calls and streams arrays (and the CSV's rows) on several threads: elements are rendered
 * in blocks of JSON_BLOCK, any thread rendering any block into one of a ring of slots
 * (JSON_SLOTS per thread), and the calling thread writes the blocks out in order (rendering
 * too while the next block is not ready). The bytes are those of the serial loop; memory stays
 * at the ring's few blocks however many elements there are.
 *
 * Each slot's buffer is fresh memory the first time it fills, about 1.3 KiB a stream. At four
 * slots a thread, 650 KiB of it before the ring came round once, and the parallel report of
 * the 300-call sweep capture at --cores 2 took 1.2-1.3 ms against 0.9 on one thread (medians
 * of 9-11, SIPNAB_TIMING, 2026-12-04). Two slots a thread: 0.9 ms; 1,000 calls 1.6 against
 * 1.9 (one thread 1.9-2.0), 2,000 calls 2.4 against 2.5 (one thread 3.8), 8,000 calls 10.8
 * both, 20,000 calls 22.2 against 21.7. Blocks of 32 were faster still up to 2,000 calls (0.7
 * ms at 300) but slower past them (23.5 ms at 20,000), and blocks of 16 took 14 ms at 8,000
 * calls: a block past OUT_DIRECT_MIN is a write() of its own, some microseconds each on the
 * development VM.
 */
#define JSON_BLOCK 64u
#define JSON_SLOTS 2u
/* Arrays shorter than this are rendered on one thread: the 100-call capture's report (200
 * streams, 100 calls) took 0.7-0.8 ms with its streams on two threads against 0.4-0.5 on one
 * (medians of 11-15; in blocks of 32, two slots a thread, 0.6-0.7), the 300-call capture's
 * (600 streams, 300 calls) 0.9 both ways. */
#define JSON_PAR_MIN 256u

/* Render element @p i into @p w; false when it is not selected (nothing written). */
typedef bool elem_fn(struct jw *w, const struct ana_report_input *in, uint32_t i);

/* Append element @p i to @p w, after @p sep when @p need_sep; false when it is not selected
 * (@p w as before). */
static bool put_elem(struct jw *w, bool need_sep, elem_fn *elem, const struct ana_report_input *in,
		     uint32_t i, const char *sep)
{
	size_t mark = w->len;

	if (need_sep) {
		jw_puts(w, sep);
	}
	if (!elem(w, in, i)) {
		w->len = mark;
		return false;
	}
	return true;
}

static bool json_call_elem(struct jw *w, const struct ana_report_input *in, uint32_t i)
{
	const struct eng_call *c = &in->result->calls[i];

	if (!call_selected(in, c)) {
		return false;
	}
	json_call(w, in, c);
	return true;
}

static bool json_stream_elem(struct jw *w, const struct ana_report_input *in, uint32_t i)
{
	json_stream(w, in->result, &in->result->streams[i]);
	return true;
}

struct jslot {
	struct jw w;      /* sep, then the block's elements, sep-separated (only sep: none) */
	uint32_t block;   /* which block it holds */
	bool ready;
};

struct jpar {
	const struct ana_report_input *in;
	FILE *out;
	elem_fn *elem;
	const char *sep;  /* between two elements: ", " (JSON), "" (CSV) */
	size_t seplen;
	uint32_t count;   /* elements */
	uint32_t blocks;  /* JSON_BLOCK elements each */
	uint32_t nslots;
	struct jslot *slots;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	uint32_t next;    /* next block to render */
	uint32_t written; /* blocks written out */
};

static void jpar_render(struct jpar *p, uint32_t k)
{
	struct jslot *sl = &p->slots[k % p->nslots];
	uint32_t end = SN_MIN((k + 1) * JSON_BLOCK, p->count);
	/* the slot's buffer, but its length and capacity in a local while it fills: the slots
	 * share cache lines, and the rendering writes the length at every piece (in the slot
	 * itself, the report took 2.9 ms at --cores 2 against 2.5) */
	struct jw w = {.buf = sl->w.buf, .cap = sl->w.cap, .depth = 2};

	/* rendered in place (into a block of its own, each element was copied once more): the
	 * separator from the block before leads, written only when a block before had elements */
	jw_puts(&w, p->sep);
	for (uint32_t i = k * JSON_BLOCK; i < end; i++) {
		put_elem(&w, w.len > p->seplen, p->elem, p->in, i, p->sep);
	}
	sl->w = w;
}

/* Render claimed block @p k (called and returning with the lock held). */
static void jpar_render_locked(struct jpar *p, uint32_t k)
{
	pthread_mutex_unlock(&p->lock);
	jpar_render(p, k);
	pthread_mutex_lock(&p->lock);
	p->slots[k % p->nslots].block = k;
	p->slots[k % p->nslots].ready = true;
	pthread_cond_broadcast(&p->cond);
}

/* Claim a block whose slot is free (lock held); UINT32_MAX when there is none. */
static uint32_t jpar_claim(struct jpar *p)
{
	if (p->next < p->blocks && p->next < p->written + p->nslots) {
		return p->next++;
	}
	return UINT32_MAX;
}

/* A helper: render blocks until none is left to claim. */
static void jpar_help(struct jpar *p)
{
	pthread_mutex_lock(&p->lock);
	for (;;) {
		uint32_t k = jpar_claim(p);

		if (k == UINT32_MAX) {
			if (p->next >= p->blocks) {
				break;
			}
			pthread_cond_wait(&p->cond, &p->lock);
			continue;
		}
		jpar_render_locked(p, k);
	}
	pthread_mutex_unlock(&p->lock);
}

/* The calling thread: write the blocks out in order, rendering too while the next one is not
 * ready; returns when all are written. */
static void jpar_write(struct jpar *p)
{
	bool first = true;

	pthread_mutex_lock(&p->lock);
	while (p->written < p->blocks) {
		struct jslot *sl = &p->slots[p->written % p->nslots];
		uint32_t k;

		if (sl->ready && sl->block == p->written) {
			pthread_mutex_unlock(&p->lock);
			if (sl->w.len > p->seplen) {
				size_t skip = first ? p->seplen : 0;

				out_put(p->out, sl->w.buf + skip, sl->w.len - skip);
				first = false;
			}
			pthread_mutex_lock(&p->lock);
			sl->ready = false;
			p->written++;
			pthread_cond_broadcast(&p->cond);
			continue;
		}
		k = jpar_claim(p);
		if (k != UINT32_MAX) {
			jpar_render_locked(p, k);
			continue;
		}
		pthread_cond_wait(&p->cond, &p->lock);
	}
	pthread_mutex_unlock(&p->lock);
}

static void jpar_main(void *arg, uint32_t t)
{
	if (t == 0) {
		jpar_write(arg);
	} else {
		jpar_help(arg);
	}
}

/* Write the elements of one array (its brackets excluded), on @p threads threads: the
 * calling one and pool helpers (a helper that starts after the last block was claimed is
 * not needed and does not run). */
static void put_elements_parallel(FILE *out, const struct ana_report_input *in, elem_fn *elem,
				  uint32_t count, uint32_t threads, const char *sep)
{
	struct jpar p = {.in = in, .elem = elem, .count = count, .out = out, .sep = sep,
			 .seplen = strlen(sep)};

	p.blocks = (count + JSON_BLOCK - 1) / JSON_BLOCK;
	p.nslots = JSON_SLOTS * threads;
	p.slots = sn_xcalloc(p.nslots, sizeof(*p.slots));
	pthread_mutex_init(&p.lock, NULL);
	pthread_cond_init(&p.cond, NULL);
	sn_pool_share(threads, jpar_main, &p);
	pthread_cond_destroy(&p.cond);
	pthread_mutex_destroy(&p.lock);
	for (uint32_t i = 0; i < p.nslots; i++) {
		free(p.slots[i].w.buf);
	}
	free(p.slots);
}

/* Elements 0 .. count - 1 (those @p elem renders), @p sep between two: a JSON array's
 * (its brackets excluded), the CSV's rows. On the report's threads when there are enough
 * elements. */
static void put_elements(FILE *out, const struct ana_report_input *in, elem_fn *elem,
			 uint32_t count, const char *sep)
{
	struct jw w = {.depth = 2};
	bool first = true;

	if (in->threads > 1 && count >= JSON_PAR_MIN) {
		/* rendering reads the result and the filter only: any thread may do it */
		put_elements_parallel(out, in, elem, count, in->threads, sep);
		return;
	}
	/* the elements gather in w, and are written out some 64 KiB at a time */
	for (uint32_t i = 0; i < count; i++) {
		if (put_elem(&w, !first, elem, in, i, sep)) {
			first = false;
		}
		if (w.len >= OUT_FLUSH) {
			out_put(out, w.buf, w.len);
			w.len = 0;
		}
	}
	out_put(out, w.buf, w.len);
	free(w.buf);
}

/*
 * The JSON document, streamed: the calls and streams arrays are written element by element
 * so that a capture with 100,000 calls never holds its whole report as a cJSON tree. The bytes
 * are exactly those cJSON_Print() gives for the whole tree.
 */
static void json_write(FILE *out, const struct ana_report_input *in)
{
	static const char calls_mark[] = "\n\t\"calls\":\t[]";
	static const char streams_mark[] = "\n\t\"streams\":\t[]";
	const struct eng_result *r = in->result;
	cJSON *root = json_build(in);
	char *txt = cJSON_Print(root);
	char *c = strstr(txt, calls_mark);
	char *s = c ? strstr(c, streams_mark) : NULL;

	if (!c || !s) {
		/* cannot happen with cJSON's printer; keep the document valid anyway */
		fputs(txt, out);
		fputc('\n', out);
		goto out_free;
	}
	fwrite(txt, 1, (size_t)(c - txt) + sizeof(calls_mark) - 2, out);
	put_elements(out, in, json_call_elem, r->call_count, ", ");
	fputc(']', out);
	c += sizeof(calls_mark) - 1;
	fwrite(c, 1, (size_t)(s - c) + sizeof(streams_mark) - 2, out);
	put_elements(out, in, json_stream_elem, r->stream_count, ", ");
	fputc(']', out);
	fputs(s + sizeof(streams_mark) - 1, out);
	fputc('\n', out);
out_free:
	free(txt);
	cJSON_Delete(root);
}

/* ---- CSV ---- */

/* One RFC 4180 field: quoted when it holds a comma, quote, CR or LF; quotes doubled. */
static void csv_field(struct jw *w, const char *s)
{
	size_t n = strcspn(s, ",\"\r\n");

	if (!s[n]) {
		jw_put(w, s, n);
		return;
	}
	jw_put(w, "\"", 1);
	for (; *s; s++) {
		if (*s == '"') {
			jw_put(w, "\"", 1);
		}
		jw_put(w, s, 1);
	}
	jw_put(w, "\"", 1);
}

static void csv_ts(struct jw *w, int64_t ns)
{
	char buf[48];

	if (ns >= 0) {
		ts_format(ns, buf, sizeof(buf));
		jw_puts(w, buf);
	}
	jw_put(w, ",", 1);
}

static void csv_fixed(struct jw *w, double v, int dec, bool present)
{
	char buf[64];

	if (present && fixed_format(v, dec, buf, sizeof(buf))) {
		jw_puts(w, buf);
	}
	jw_put(w, ",", 1);
}

/* @p v then a comma. */
static void csv_u64(struct jw *w, uint64_t v)
{
	char buf[24];
	char *p = sn_u64_digits(v, buf + sizeof(buf));

	jw_put(w, p, (size_t)(buf + sizeof(buf) - p));
	jw_put(w, ",", 1);
}

static void csv_call(struct jw *w, const struct ana_report_input *in, const struct eng_call *c)
{
	const struct eng_result *r = in->result;
	const char **codecs = sn_xcalloc(c->stream_count + 1u, sizeof(*codecs));
	uint32_t ncodecs = call_codecs(r, c, codecs);
	size_t jlen = 1;
	char *joined;
	struct call_view v;

	call_view_init(&v, in, c);
	for (uint32_t i = 0; i < ncodecs; i++) {
		jlen += strlen(codecs[i]) + 1;
	}
	joined = sn_xcalloc(jlen, 1);
	for (uint32_t i = 0, n = 0; i < ncodecs; i++) {
		n += (uint32_t)snprintf(joined + n, jlen - n, "%s%s", i ? "|" : "", codecs[i]);
	}
	csv_field(w, str_or(c->call_id, ""));
	jw_put(w, ",", 1);
	csv_field(w, str_or(c->kind, ""));
	jw_put(w, ",", 1);
	csv_field(w, str_or(c->from_uri, ""));
	jw_put(w, ",", 1);
	csv_field(w, str_or(c->to_uri, ""));
	jw_put(w, ",", 1);
	jw_puts(w, eng_call_state_name(c->state));
	jw_put(w, ",", 1);
	if (c->final_code) {
		csv_u64(w, c->final_code);
	} else {
		jw_put(w, ",", 1);
	}
	csv_ts(w, c->start_ns);
	csv_ts(w, c->answer_ns);
	csv_ts(w, c->end_ns);
	csv_fixed(w, (double)v.setup_ns / NS_PER_MS, 3, v.setup_ns >= 0);
	csv_fixed(w, (double)v.duration_ns / NS_PER_S, 3, v.duration_ns >= 0);
	csv_u64(w, c->messages);
	csv_u64(w, c->retransmissions);
	csv_u64(w, c->hops);
	csv_field(w, joined);
	jw_put(w, ",", 1);
	csv_u64(w, c->stream_count);
	csv_fixed(w, v.worst_mos, 2, v.has_mos);
	csv_fixed(w, v.worst_loss_pct, 3, c->stream_count > 0);
	csv_fixed(w, v.worst_jitter_ms, 3, c->stream_count > 0);
	csv_field(w, str_or(c->hangup, ""));
	jw_put(w, "\n", 1);
	free(joined);
	free(codecs);
}

static bool csv_call_elem(struct jw *w, const struct ana_report_input *in, uint32_t i)
{
	const struct eng_call *c = &in->result->calls[i];

	if (!call_selected(in, c)) {
		return false;
	}
	csv_call(w, in, c);
	return true;
}

/* One line per call (a CDR), rendered as the JSON arrays are (put_elements()). */
static void csv_write(FILE *out, const struct ana_report_input *in)
{
	fputs("call_id,kind,from,to,state,final_code,start,answer,end,setup_ms,duration_s,"
	      "messages,retransmissions,hops,codecs,streams,worst_mos,worst_loss_pct,"
	      "worst_jitter_ms,hangup\n",
	      out);
	put_elements(out, in, csv_call_elem, in->result->call_count, "");
}

/* ---- text tables ---- */

enum { AL_LEFT, AL_RIGHT };

/*
 * A table is a list of runs of rows; a run holds its cells' bytes one after the other in one
 * buffer, and each cell's place, length and display width beside them. The columns' widths
 * are known once every row is in, so the rows are rendered into a buffer at the end and
 * written out in large pieces. Runs let several threads make rows at once (table_rows()).
 * (Each cell was a vsnprintf() and a malloc() of its own, and each row was written with
 * fputs() and a fputc() per padding space, every one taking stdout's lock once a second
 * thread existed: c5k's 5,000 calls took 14 ms on one core and 16 ms on two, where the JSON
 * report of the same result, four times the bytes, took 5 ms; now 5 ms on either.)
 */
struct cell {
	uint32_t off;	     /* in the run's text */
	uint16_t len, width; /* bytes (< CELL_MAX), columns */
};

struct run {
	struct jw text;	    /* the cells' bytes; owned */
	struct cell *cells; /* row-major; owned */
	size_t count, cap;
};

struct table {
	uint32_t ncols;
	const char *const *heads;
	const uint8_t *align; /* AL_LEFT / AL_RIGHT per column */
	struct run *runs;     /* in row order; owned */
	uint32_t nruns, cap;
};

static void table_init(struct table *t, uint32_t ncols, const char *const *heads,
		       const uint8_t *align)
{
	memset(t, 0, sizeof(*t));
	t->ncols = ncols;
	t->heads = heads;
	t->align = align;
}

static void table_cleanup(struct table *t)
{
	for (uint32_t k = 0; k < t->nruns; k++) {
		free(t->runs[k].text.buf);
		free(t->runs[k].cells);
	}
	free(t->runs);
	memset(t, 0, sizeof(*t));
}

/* @p n new empty runs at the end of the table; returns the first. */
static struct run *table_add_runs(struct table *t, uint32_t n)
{
	if (t->cap - t->nruns < n) {
		t->cap = SN_MAX(2 * t->cap, t->nruns + n);
		t->runs = sn_xrealloc(t->runs, t->cap * sizeof(*t->runs));
	}
	memset(&t->runs[t->nruns], 0, n * sizeof(*t->runs));
	t->nruns += n;
	return &t->runs[t->nruns - n];
}

/* The run that rows made on this thread go to: the last one. */
static struct run *table_tail(struct table *t)
{
	return t->nruns ? &t->runs[t->nruns - 1] : table_add_runs(t, 1);
}

static size_t table_cells(const struct table *t)
{
	size_t n = 0;

	for (uint32_t k = 0; k < t->nruns; k++) {
		n += t->runs[k].count;
	}
	return n;
}

/*
 * Copy the @p n bytes at @p s to @p d (which may be @p s; with room for a terminator after the
 * n bytes) as terminal-safe text: control bytes become '?' (hostile traffic must not drive
 * the terminal), and text
 * wider than @p max columns (UTF-8 continuation bytes take none) is cut to max - 3 columns and
 * "..." (max 0, or below 4: never cut). Terminates it; returns its length, and its width in
 * *width. One pass, as every cell of the text report goes through it.
 */
static size_t text_fit(char *d, const char *s, size_t n, size_t max, size_t *width)
{
	size_t w = 0;

	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		d[i] = c < 0x20 || c == 0x7f ? '?' : (char)c;
		w += (c & 0xc0) != 0x80;
	}
	if (max >= 4 && w > max) {
		size_t cols = 0, i = 0;

		for (; i < n; i++) {
			if (((unsigned char)d[i] & 0xc0) != 0x80) {
				if (cols == max - 3) {
					break;
				}
				cols++;
			}
		}
		/* at least three more columns, so three more bytes, follow d[i] */
		memcpy(d + i, "...", 3);
		n = i + 3;
		w = max;
	}
	d[n] = '\0';
	*width = w;
	return n;
}

/*
 * Append one cell of the @p n bytes at @p s (at most CELL_MAX - 1 of them are kept, as a
 * cell was a CELL_MAX-byte snprintf() buffer), made terminal-safe and cut to @p max columns
 * (text_fit()). It is made in place at the end of the run's text; its terminator is
 * overwritten by the next cell.
 */
static void run_put(struct run *r, size_t max, const char *s, size_t n)
{
	struct jw *w = &r->text;
	size_t width;
	char *d;

	n = SN_MIN(n, (size_t)CELL_MAX - 1);
	jw_reserve(w, n + 1);
	d = w->buf + w->len;
	n = text_fit(d, s, n, max, &width);
	if (r->count == r->cap) {
		r->cap = r->cap ? 2 * r->cap : 256;
		r->cells = sn_xrealloc(r->cells, r->cap * sizeof(*r->cells));
	}
	r->cells[r->count++] = (struct cell){(uint32_t)w->len, (uint16_t)n, (uint16_t)width};
	w->len += n;
}

static void run_str(struct run *r, size_t max, const char *s)
{
	run_put(r, max, s, strlen(s));
}

static void run_u64(struct run *r, uint64_t v)
{
	char buf[24];
	char *p = sn_u64_digits(v, buf + sizeof(buf));

	run_put(r, 0, p, (size_t)(buf + sizeof(buf) - p));
}

/* Append one formatted cell (as run_put()). */
static void run_cell(struct run *r, size_t max, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void run_cell(struct run *r, size_t max, const char *fmt, ...)
{
	char buf[CELL_MAX];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	run_put(r, max, buf, n < 0 ? 0 : SN_MIN((size_t)n, sizeof(buf) - 1));
}

static void pad(struct jw *o, size_t n)
{
	jw_reserve(o, n);
	memset(o->buf + o->len, ' ', n);
	o->len += n;
}

/* One row: two spaces, then the cells, each padded to its column's width on the side its
 * alignment leaves free (a left-aligned last cell is not padded) and two spaces apart. */
static void table_row(struct jw *o, const struct table *t, const size_t *w, const char *text,
		      const struct cell *cells)
{
	jw_put(o, "  ", 2);
	for (uint32_t c = 0; c < t->ncols; c++) {
		size_t cw = cells[c].width;
		bool last = c + 1 == t->ncols;

		if (t->align[c] == AL_RIGHT) {
			pad(o, w[c] - cw);
		}
		jw_put(o, text + cells[c].off, cells[c].len);
		if (!last) {
			if (t->align[c] == AL_LEFT) {
				pad(o, w[c] - cw);
			}
			jw_put(o, "  ", 2);
		}
	}
	jw_put(o, "\n", 1);
}


/* Print the header and every row, each column as wide as its widest cell; empties the table. */
static void table_flush(FILE *out, struct table *t)
{
	size_t *w = sn_xcalloc(t->ncols, sizeof(*w));
	struct run head = {0};
	struct jw o = {0};

	for (uint32_t c = 0; c < t->ncols; c++) {
		run_str(&head, 0, t->heads[c]);
		w[c] = head.cells[c].width;
	}
	for (uint32_t k = 0; k < t->nruns; k++) {
		const struct run *r = &t->runs[k];

		for (size_t i = 0; i < r->count; i++) {
			w[i % t->ncols] = SN_MAX(w[i % t->ncols], (size_t)r->cells[i].width);
		}
	}
	table_row(&o, t, w, head.text.buf, head.cells);
	for (uint32_t k = 0; k < t->nruns; k++) {
		const struct run *r = &t->runs[k];

		for (size_t i = 0; i + t->ncols <= r->count; i += t->ncols) {
			table_row(&o, t, w, r->text.buf, &r->cells[i]);
			if (o.len >= OUT_FLUSH) {
				out_put(out, o.buf, o.len);
				o.len = 0;
			}
		}
	}
	out_put(out, o.buf, o.len);
	free(o.buf);
	free(head.text.buf);
	free(head.cells);
	free(w);
	table_cleanup(t);
}

/* ---- text report ---- */

static void fixed_or_dash(char *buf, size_t len, double v, int dec, bool present)
{
	if (!present || !fixed_format(v, dec, buf, len)) {
		snprintf(buf, len, "-");
	}
}

static void text_capture(FILE *out, const struct ana_report_input *in)
{
	const struct eng_stats *s = &in->result->stats;
	char a[48], b[48];

	fprintf(out, "Capture\n");
	for (size_t i = 0; i < in->file_count; i++) {
		fprintf(out, "  %-20s %s (%s)\n", i ? "" : "files", in->files[i],
			in->formats && in->formats[i] ? in->formats[i] : "?");
	}
	for (size_t i = 0; i < in->error_count; i++) {
		fprintf(out, "  %-20s %s: %s at byte offset %" PRIu64 "\n", i ? "" : "input errors",
			in->errors[i].file, in->errors[i].truncated ? "truncated" : "corrupt",
			in->errors[i].offset);
	}
	fprintf(out, "  %-20s %" PRIu64 "\n", "packets", s->packets);
	fprintf(out, "  %-20s %" PRIu64 "\n", "bytes", s->bytes);
	if (s->packets) {
		ts_format(s->first_ts_ns, a, sizeof(a));
		ts_format(s->last_ts_ns, b, sizeof(b));
		fprintf(out, "  %-20s %s .. %s (%.3f s)\n", "time span", a, b,
			(double)(s->last_ts_ns - s->first_ts_ns) / 1e9);
	}
	fprintf(out,
		"  %-20s %" PRIu64 " (UDP %" PRIu64 ", TCP %" PRIu64 ", WebSocket %" PRIu64
		", SCTP %" PRIu64 ")\n",
		"SIP messages", s->sip_messages, s->sip_udp, s->sip_tcp, s->sip_ws, s->sip_sctp);
	fprintf(out, "  %-20s %" PRIu64 "\n", "RTP packets", s->rtp_packets);
	fprintf(out, "  %-20s %" PRIu64 "\n", "RTCP packets", s->rtcp_packets);
	fprintf(out, "  %-20s %" PRIu64 "\n", "other packets", s->other_packets);
	fprintf(out, "  %-20s %" PRIu64 "\n", "decode errors", s->decode_errors);
	fprintf(out, "  %-20s %" PRIu64 "\n", "malformed SIP", s->sip_errors);
	fprintf(out, "  %-20s %" PRIu64 "\n", "truncated packets", s->truncated_packets);
	fprintf(out,
		"  %-20s %" PRIu64 " fragments, %" PRIu64 " datagrams rebuilt, %" PRIu64
		" timed out\n",
		"IP reassembly", s->ip_fragments, s->ip_reassembled, s->frag_timeouts);
	fprintf(out,
		"  %-20s %" PRIu64 " retransmissions, %" PRIu64 " out of order, %" PRIu64 " gaps\n",
		"TCP", s->tcp_retransmissions, s->tcp_out_of_order, s->tcp_gaps);
	if (s->calls_dropped || s->msgs_dropped || s->streams_dropped || s->rtp_dropped) {
		fprintf(out,
			"  %-20s %" PRIu64 " calls, %" PRIu64 " SIP messages, %" PRIu64
			" RTP streams, %" PRIu64 " RTP packets (limits reached)\n",
			"dropped", s->calls_dropped, s->msgs_dropped, s->streams_dropped,
			s->rtp_dropped);
	}
	if (s->calls_rotated) {
		fprintf(out,
			"  %-20s %" PRIu64 " of the dropped calls were the oldest, evicted for "
			"newer ones (-R)\n",
			"rotated", s->calls_rotated);
	}
}

static void text_summary(FILE *out, const struct ana_report_input *in, uint32_t selected)
{
	const struct eng_result *r = in->result;
	const struct eng_stats *s = &r->stats;
	const struct ana_filter *f = in->filter;
	struct eng_method_count *m;

	fprintf(out, "\nSummary\n");
	fprintf(out, "  %-20s %" PRIu32 "\n", "calls", r->call_count);
	fprintf(out, "  %-20s %" PRIu32 "\n", "dialogs", r->dialogs);
	fprintf(out, "  %-20s %" PRIu32 "\n", "RTP streams", r->stream_count);
	for (int st = 0; st < ENG_CALL__COUNT; st++) {
		if (r->by_state[st]) {
			fprintf(out, "  %-20s %" PRIu32 "\n",
				eng_call_state_name((enum eng_call_state)st), r->by_state[st]);
		}
	}
	if (ana_filter_is_active(f)) {
		fprintf(out, "  %-20s", "selection");
		if (f->problems) {
			fprintf(out, " problems");
		}
		if (f->one_way) {
			fprintf(out, " one-way");
		}
		if (f->slow_setup) {
			fprintf(out, " slow-setup>%" PRIu32 "ms", f->slow_setup_ms);
		}
		if (f->short_calls) {
			fprintf(out, " short-calls<%" PRIu32 "s", f->short_call_s);
		}
		fprintf(out, ": %" PRIu32 " of %" PRIu32 " calls\n", selected, r->call_count);
	}

	fprintf(out, "\nSIP requests\n");
	m = sorted_methods(s);
	for (uint32_t i = 0; i < s->method_count; i++) {
		fprintf(out, "  %-20s %" PRIu64 "\n", m[i].name, m[i].count);
	}
	if (s->methods_other) {
		fprintf(out, "  %-20s %" PRIu64 "\n", "(other)", s->methods_other);
	}
	free(m);
	fprintf(out, "\nSIP responses\n");
	for (int code = 100; code < 700; code++) {
		if (s->responses_by_code[code]) {
			fprintf(out, "  %-20d %" PRIu64 "\n", code, s->responses_by_code[code]);
		}
	}
}

static const char *const call_heads[] = {
	"Start (UTC)", "Kind", "From", "To",	  "State", "Code",    "Setup ms",
	"Dur s",       "Msgs", "Retr", "Streams", "MOS",   "Call-ID",
};
static const uint8_t call_align[] = {
	AL_LEFT,  AL_LEFT,  AL_LEFT,  AL_LEFT,	AL_LEFT,  AL_RIGHT, AL_RIGHT,
	AL_RIGHT, AL_RIGHT, AL_RIGHT, AL_RIGHT, AL_RIGHT, AL_LEFT,
};

static void call_row(struct run *rows, const struct ana_report_input *in, const struct eng_call *c)
{
	struct call_view v;
	char buf[64];

	call_view_init(&v, in, c);
	if (c->start_ns >= 0) {
		clock_format(c->start_ns, false, buf, sizeof(buf));
	} else {
		snprintf(buf, sizeof(buf), "-");
	}
	run_str(rows, 0, buf);
	run_str(rows, 12, str_or(c->kind, "-"));
	run_str(rows, URI_COLS, str_or(c->from_uri, "-"));
	run_str(rows, URI_COLS, str_or(c->to_uri, "-"));
	run_str(rows, 0, eng_call_state_name(c->state));
	if (c->final_code) {
		run_u64(rows, c->final_code);
	} else {
		run_str(rows, 0, "-");
	}
	fixed_or_dash(buf, sizeof(buf), (double)v.setup_ns / NS_PER_MS, 3, v.setup_ns >= 0);
	run_str(rows, 0, buf);
	fixed_or_dash(buf, sizeof(buf), (double)v.duration_ns / NS_PER_S, 3, v.duration_ns >= 0);
	run_str(rows, 0, buf);
	run_u64(rows, c->messages);
	run_u64(rows, c->retransmissions);
	run_u64(rows, c->stream_count);
	fixed_or_dash(buf, sizeof(buf), v.worst_mos, 2, v.has_mos);
	run_str(rows, 0, buf);
	run_str(rows, URI_COLS, str_or(c->call_id, "-"));
}

static const char *const stream_heads[] = {
	"Src",	     "Dst",	   "SSRC",	  "Codec", "Pkts", "Lost",
	"Max delta", "Max jitter", "Mean jitter", "MOS",   "DTMF", "Call-ID",
};
static const uint8_t stream_align[] = {
	AL_LEFT,  AL_LEFT,  AL_LEFT,  AL_LEFT,	AL_RIGHT, AL_RIGHT,
	AL_RIGHT, AL_RIGHT, AL_RIGHT, AL_RIGHT, AL_LEFT,  AL_LEFT,
};

static void stream_row(struct run *rows, const struct eng_result *r, const struct eng_stream *s)
{
	char buf[64], pct[32];

	run_str(rows, 0, eng_endpoint_str(&s->src, s->sport, buf, sizeof(buf)));
	run_str(rows, 0, eng_endpoint_str(&s->dst, s->dport, buf, sizeof(buf)));
	run_cell(rows, 0, "0x%08" PRIX32, s->ssrc);
	if (s->codec[0]) {
		run_str(rows, 16, s->codec);
	} else {
		run_cell(rows, 0, "PT%d", s->pt);
	}
	run_u64(rows, s->rtp.packets);
	fixed_or_dash(pct, sizeof(pct), rtp_stats_loss_pct(&s->rtp), 3, true);
	run_cell(rows, 0, "%" PRId64 " (%s%%)", rtp_stats_lost(&s->rtp), pct);
	fixed_or_dash(buf, sizeof(buf), s->rtp.max_delta_ms, 3, true);
	run_str(rows, 0, buf);
	fixed_or_dash(buf, sizeof(buf), s->rtp.max_jitter_ms, 3, true);
	run_str(rows, 0, buf);
	fixed_or_dash(buf, sizeof(buf), s->rtp.mean_jitter_ms, 3, true);
	run_str(rows, 0, buf);
	fixed_or_dash(buf, sizeof(buf), s->mos, 2, s->mos > 0);
	run_str(rows, 0, buf);
	run_str(rows, 16, str_or(s->rtp.dtmf, "-"));
	if (s->call >= 0 && (uint32_t)s->call < r->call_count) {
		run_str(rows, URI_COLS, str_or(r->calls[s->call].call_id, "-"));
	} else {
		run_str(rows, 0, "-");
	}
}

static const char *const prob_heads[] = {"Subject", "Problem", "Value"};
static const uint8_t prob_align[] = {AL_LEFT, AL_LEFT, AL_LEFT};

/* Problem rows of a call (call-level bits only; stream bits are listed per stream). */
static void call_problem_rows(struct run *rows, const struct ana_report_input *in,
			      const struct eng_call *c)
{
	const struct eng_result *r = in->result;
	struct call_view v;
	char subj[CELL_MAX], num[64];
	size_t width;

	call_view_init(&v, in, c);
	snprintf(subj, sizeof(subj), "call %s", str_or(c->call_id, "-"));
	(void)text_fit(subj, subj, strlen(subj), URI_COLS + 5, &width);
	if (v.problems & ANA_PROB_FAILED) {
		run_cell(rows, 0, "%s", subj);
		run_cell(rows, 0, "failed (%s)", eng_call_state_name(c->state));
		if (c->final_code) {
			run_cell(rows, 0, "final code %u", c->final_code);
		} else {
			run_cell(rows, 0, "no final response");
		}
	}
	if (v.problems & ANA_PROB_ONE_WAY) {
		run_cell(rows, 0, "%s", subj);
		run_cell(rows, 0, "one-way audio");
		if (c->stream_count == 0) {
			run_cell(rows, 0, "no media");
		} else {
			run_cell(rows, 0, "%" PRIu32 " of %" PRIu32 " streams without reverse",
				 ana_filter_one_way_streams(r, c), c->stream_count);
		}
	}
	if (v.problems & ANA_PROB_RETRANS) {
		run_cell(rows, 0, "%s", subj);
		run_cell(rows, 0, "retransmissions");
		run_cell(rows, 0, "%" PRIu32, c->retransmissions);
	}
	if (v.problems & ANA_PROB_SLOW_SETUP) {
		fixed_or_dash(num, sizeof(num), (double)v.setup_ns / NS_PER_MS, 3, true);
		run_cell(rows, 0, "%s", subj);
		run_cell(rows, 0, "slow setup");
		run_cell(rows, 0, "%s ms", num);
	}
	if (v.problems & ANA_PROB_SHORT_CALL) {
		fixed_or_dash(num, sizeof(num), (double)v.duration_ns / NS_PER_S, 3, true);
		run_cell(rows, 0, "%s", subj);
		run_cell(rows, 0, "short call");
		run_cell(rows, 0, "%s s", num);
	}
}

static void stream_problem_rows(struct run *rows, const struct eng_stream *s)
{
	uint32_t p = ana_filter_stream_problems(s);
	char a[64], b[64], subj[CELL_MAX], num[64];

	if (!p) {
		return;
	}
	snprintf(subj, sizeof(subj), "stream %s -> %s 0x%08" PRIX32,
		 eng_endpoint_str(&s->src, s->sport, a, sizeof(a)),
		 eng_endpoint_str(&s->dst, s->dport, b, sizeof(b)), s->ssrc);
	if (p & ANA_PROB_LOW_MOS) {
		fixed_or_dash(num, sizeof(num), s->mos, 2, true);
		run_cell(rows, 0, "%s", subj);
		run_cell(rows, 0, "low MOS");
		run_cell(rows, 0, "%s", num);
	}
	if (p & ANA_PROB_LOSS) {
		fixed_or_dash(num, sizeof(num), rtp_stats_loss_pct(&s->rtp), 3, true);
		run_cell(rows, 0, "%s", subj);
		run_cell(rows, 0, "packet loss");
		run_cell(rows, 0, "%s %% (%" PRId64 " lost)", num, rtp_stats_lost(&s->rtp));
	}
}

/* Add the rows of item @p i (a call, a stream) to @p rows; thread-safe (reads the result). */
typedef void table_rows_fn(struct run *rows, const struct ana_report_input *in, uint32_t i);

/*
 * Add the rows of items 0 .. count - 1 to @p t, in order. On several threads (the report's,
 * as for the JSON arrays: put_elements()) the items are taken in blocks of TABLE_BLOCK, and any
 * thread makes a block's rows into a run of its own: the table has the same rows as one
 * thread makes. (c5k's 5,000 call rows take about 3.5 ms of one thread.)
 */
#define TABLE_BLOCK 128u

struct rows_job {
	const struct ana_report_input *in;
	table_rows_fn *fn;
	struct run *runs; /* one per block */
	uint32_t count;
};

static void rows_block(void *ctx, uint32_t b)
{
	struct rows_job *j = ctx;
	uint32_t end = SN_MIN((b + 1) * TABLE_BLOCK, j->count);
	/* filled in a local: the runs lie side by side, and each cell writes its run's lengths
	 * (two threads filling two neighbouring runs would pass the line between them) */
	struct run run = j->runs[b];

	for (uint32_t i = b * TABLE_BLOCK; i < end; i++) {
		j->fn(&run, j->in, i);
	}
	j->runs[b] = run;
}

static void table_rows(struct table *t, const struct ana_report_input *in, table_rows_fn *fn,
		       uint32_t count)
{
	uint32_t blocks = (count + TABLE_BLOCK - 1) / TABLE_BLOCK;
	struct rows_job j = {in, fn, NULL, count};

	if (in->threads <= 1 || blocks < 2) {
		struct run *r = table_tail(t);

		for (uint32_t i = 0; i < count; i++) {
			fn(r, in, i);
		}
		return;
	}
	j.runs = table_add_runs(t, blocks);
	sn_pool_for(blocks, in->threads, 1, rows_block, &j);
}

static void call_rows(struct run *rows, const struct ana_report_input *in, uint32_t i)
{
	const struct eng_call *c = &in->result->calls[i];

	if (call_selected(in, c)) {
		call_row(rows, in, c);
	}
}

static void stream_rows(struct run *rows, const struct ana_report_input *in, uint32_t i)
{
	stream_row(rows, in->result, &in->result->streams[i]);
}

static void call_problem_rows_of(struct run *rows, const struct ana_report_input *in, uint32_t i)
{
	call_problem_rows(rows, in, &in->result->calls[i]);
}

static void stream_problem_rows_of(struct run *rows, const struct ana_report_input *in, uint32_t i)
{
	stream_problem_rows(rows, &in->result->streams[i]);
}

static void table_or_none(FILE *out, struct table *t)
{
	if (table_cells(t) == 0) {
		fprintf(out, "  none\n");
		table_cleanup(t);
		return;
	}
	table_flush(out, t);
}

static void text_write(FILE *out, const struct ana_report_input *in)
{
	const struct eng_result *r = in->result;
	uint32_t selected = 0;
	struct table t;

	for (uint32_t i = 0; i < r->call_count; i++) {
		selected += call_selected(in, &r->calls[i]);
	}
	fprintf(out, "sipnab %s report\n\n", PACKAGE_VERSION);
	text_capture(out, in);
	text_summary(out, in, selected);

	fprintf(out, "\nCalls\n");
	table_init(&t, SN_ARRAY_SIZE(call_heads), call_heads, call_align);
	table_rows(&t, in, call_rows, r->call_count);
	table_or_none(out, &t);

	fprintf(out, "\nStreams\n");
	table_init(&t, SN_ARRAY_SIZE(stream_heads), stream_heads, stream_align);
	table_rows(&t, in, stream_rows, r->stream_count);
	table_or_none(out, &t);

	fprintf(out, "\nProblems\n");
	table_init(&t, SN_ARRAY_SIZE(prob_heads), prob_heads, prob_align);
	table_rows(&t, in, call_problem_rows_of, r->call_count);
	table_rows(&t, in, stream_problem_rows_of, r->stream_count);
	table_or_none(out, &t);
}

/* ---- one call ---- */

int32_t ana_report_find_call(const struct eng_result *r, const char *call_id)
{
	for (uint32_t i = 0; i < r->call_count; i++) {
		const struct eng_call *c = &r->calls[i];

		if (c->call_id && strcmp(c->call_id, call_id) == 0) {
			return (int32_t)i;
		}
		for (uint32_t j = 0; j < c->legs; j++) {
			if (c->leg_ids[j] && strcmp(c->leg_ids[j], call_id) == 0) {
				return (int32_t)i;
			}
		}
	}
	return -1;
}

static void field(FILE *out, const char *name, const char *value)
{
	char buf[CELL_MAX];
	size_t width;

	snprintf(buf, sizeof(buf), "%s", value);
	(void)text_fit(buf, buf, strlen(buf), 0, &width);
	fprintf(out, "  %-20s %s\n", name, buf);
}

static void field_time(FILE *out, const char *name, int64_t ns)
{
	char a[48], b[48], line[112];

	if (ns < 0) {
		field(out, name, "-");
		return;
	}
	clock_format(ns, true, a, sizeof(a));
	ts_format(ns, b, sizeof(b));
	snprintf(line, sizeof(line), "%s UTC (%s)", a, b);
	field(out, name, line);
}

static void call_header(FILE *out, const struct ana_report_input *in, const struct eng_call *c)
{
	struct call_view v;
	char buf[CELL_MAX];
	size_t n = 0;

	call_view_init(&v, in, c);
	fprintf(out, "Call\n");
	field(out, "Call-ID", str_or(c->call_id, "-"));
	buf[0] = '\0';
	for (uint32_t i = 0; i < c->legs && n < sizeof(buf); i++) {
		n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s%s", i ? " " : "",
				      str_or(c->leg_ids[i], "-"));
	}
	field(out, "legs", buf);
	field(out, "kind", str_or(c->kind, "-"));
	field(out, "from", str_or(c->from_uri, "-"));
	field(out, "to", str_or(c->to_uri, "-"));
	field(out, "from tag", str_or(c->from_tag, "-"));
	field(out, "to tag", str_or(c->to_tag, "-"));
	field(out, "state", eng_call_state_name(c->state));
	snprintf(buf, sizeof(buf), "%u", c->final_code);
	field(out, "final code", c->final_code ? buf : "-");
	field(out, "hangup", str_or(c->hangup, "-"));
	field_time(out, "start", c->start_ns);
	field_time(out, "ringing", c->ring_ns);
	field_time(out, "answer", c->answer_ns);
	field_time(out, "end", c->end_ns);
	fixed_or_dash(buf, sizeof(buf), (double)v.setup_ns / NS_PER_MS, 3, v.setup_ns >= 0);
	field(out, "setup ms", buf);
	fixed_or_dash(buf, sizeof(buf), (double)v.duration_ns / NS_PER_S, 3, v.duration_ns >= 0);
	field(out, "duration s", buf);
	snprintf(buf, sizeof(buf), "%" PRIu32 " (%" PRIu32 " retransmissions)", c->messages,
		 c->retransmissions);
	field(out, "messages", buf);
	snprintf(buf, sizeof(buf),
		 "%" PRIu32 " dialogs, %" PRIu32 " hops, %" PRIu32 " auth retries", c->dialogs,
		 c->hops, c->auth_retries);
	field(out, "dialogs", buf);
	buf[0] = '\0';
	n = 0;
	for (uint32_t b = 0; b < PROB_COUNT; b++) {
		if (v.problems & (1u << b)) {
			n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s%s", n ? " " : "",
					      ana_problem_name(1u << b));
		}
	}
	field(out, "problems", n ? buf : "none");
}

/* Drop trailing blanks (lanes past the last arrow). */
static void rtrim(char *s)
{
	size_t n = strlen(s);

	while (n > 0 && s[n - 1] == ' ') {
		s[--n] = '\0';
	}
}

static void call_ladder(FILE *out, const struct eng_result *r, const struct eng_call *c)
{
	struct ana_ladder l;
	char tbuf[48];
	char *line;
	int tw = 8;

	ana_ladder_init(&l, r, c, 0);
	line = sn_xmalloc(l.width + 1u);
	for (uint32_t i = 0; i < l.arrow_count; i++) {
		int n = snprintf(tbuf, sizeof(tbuf), "%.3f",
				 (double)l.arrows[i].rel_ns / NS_PER_MS);
		tw = SN_MAX(tw, n);
	}
	fprintf(out, "\nMessages (time in ms since the first message)\n");
	ana_ladder_draw_header(&l, line, l.width + 1u);
	rtrim(line);
	fprintf(out, "  %*s  %s\n", tw, "", line);
	for (uint32_t i = 0; i < l.arrow_count; i++) {
		const struct ana_ladder_arrow *a = &l.arrows[i];

		snprintf(tbuf, sizeof(tbuf), "%.3f", (double)a->rel_ns / NS_PER_MS);
		ana_ladder_draw_arrow(&l, i, line, l.width + 1u);
		rtrim(line);
		fprintf(out, "  %*s  %s%s\n", tw, tbuf, line,
			a->retransmission ? "  retransmission" : "");
	}
	free(line);
	ana_ladder_cleanup(&l);
}

enum sn_status ana_report_call(FILE *out, const struct ana_report_input *in, const char *call_id)
{
	const struct eng_result *r = in->result;
	int32_t idx = ana_report_find_call(r, call_id);
	const struct eng_call *c;
	struct table t;
	struct run *rows;

	if (idx < 0) {
		return SN_ENOTFOUND;
	}
	c = &r->calls[idx];
	call_header(out, in, c);
	call_ladder(out, r, c);
	fprintf(out, "\nStreams\n");
	table_init(&t, SN_ARRAY_SIZE(stream_heads), stream_heads, stream_align);
	rows = table_tail(&t);
	for (uint32_t i = 0; i < c->stream_count; i++) {
		stream_row(rows, r, &r->streams[c->streams[i]]);
	}
	table_or_none(out, &t);
	fprintf(out, "\nProblems\n");
	table_init(&t, SN_ARRAY_SIZE(prob_heads), prob_heads, prob_align);
	rows = table_tail(&t);
	call_problem_rows(rows, in, c);
	for (uint32_t i = 0; i < c->stream_count; i++) {
		stream_problem_rows(rows, &r->streams[c->streams[i]]);
	}
	table_or_none(out, &t);
	if (fflush(out) != 0 || ferror(out)) {
		return SN_ESYS;
	}
	return SN_OK;
}

/* ---- entry points ---- */

enum sn_status ana_report_format_parse(const char *name, enum ana_report_format *out)
{
	if (!name || strcmp(name, "text") == 0) {
		*out = ANA_REPORT_TEXT;
	} else if (strcmp(name, "json") == 0) {
		*out = ANA_REPORT_JSON;
	} else if (strcmp(name, "csv") == 0) {
		*out = ANA_REPORT_CSV;
	} else {
		return SN_ENOTFOUND;
	}
	return SN_OK;
}

enum sn_status ana_report_write(FILE *out, enum ana_report_format fmt,
				const struct ana_report_input *in)
{
	if (fmt == ANA_REPORT_JSON) {
		json_write(out, in);
	} else if (fmt == ANA_REPORT_CSV) {
		csv_write(out, in);
	} else {
		text_write(out, in);
	}
	if (fflush(out) != 0 || ferror(out)) {
		return SN_ESYS;
	}
	return SN_OK;
}
