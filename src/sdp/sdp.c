/*
 * sdp.c - zero-copy SDP parser (RFC 8866) and media helpers.
 *
 * sdp_parse() makes two passes over the lines. The first checks the framing (first line
 * "v=0", every other non-blank line <letter>=<value>) and counts m= lines and the a= lines of
 * every section, so the second pass can take exactly sized arrays from the arena and fill them.
 * Nothing is copied: text fields are slices into the caller's buffer. The parser does not
 * interpret bandwidth, timezone, key or repeat lines, nor ICE/DTLS attributes (those stay as
 * name/value pairs in the attrs arrays).
 *
 * Leniency (real traffic is sloppy): lines may end in LF or CRLF, the last line end may be
 * missing, blank lines are skipped, line order is not checked, unknown attributes are kept,
 * and a malformed known attribute (a=rtpmap:x) is kept as a plain attribute instead of failing
 * the parse. Strictness: every read is bounded by the given length; malformed m= and c= lines
 * and numbers that overflow fail with SN_EPARSE; bounds fail with SN_ELIMIT.
 *
 * Ownership: the session borrows the input and the arena. Threading: no shared state; the
 * static RFC 3551 table is const.
 */
#include "config.h"

#include "sipnab/sdp.h"

#include <string.h>

/* Cursor over the lines of the body. */
struct sdp_lines {
	const uint8_t *p;
	size_t len;
	size_t off;
};

/* RFC 3551 §6, Tables 4 and 5. */
struct sdp_static_pt {
	const char *name;
	int rate;
};

static const struct sdp_static_pt sdp_static_table[35] = {
	[0] = {"PCMU", 8000},	[3] = {"GSM", 8000},	[4] = {"G723", 8000},
	[5] = {"DVI4", 8000},	[6] = {"DVI4", 16000},	[7] = {"LPC", 8000},
	[8] = {"PCMA", 8000},	[9] = {"G722", 8000},	[10] = {"L16", 44100},
	[11] = {"L16", 44100},	[12] = {"QCELP", 8000}, [13] = {"CN", 8000},
	[14] = {"MPA", 90000},	[15] = {"G728", 8000},	[16] = {"DVI4", 11025},
	[17] = {"DVI4", 22050}, [18] = {"G729", 8000},	[25] = {"CelB", 90000},
	[26] = {"JPEG", 90000}, [28] = {"nv", 90000},	[31] = {"H261", 90000},
	[32] = {"MPV", 90000},	[33] = {"MP2T", 90000}, [34] = {"H263", 90000},
};

/* Next line without its line end; false at the end of input. */
static bool sdp_lines_next(struct sdp_lines *it, struct sn_slice *line)
{
	const uint8_t *nl;
	size_t n;

	if (it->off >= it->len) {
		return false;
	}
	nl = memchr(it->p + it->off, '\n', it->len - it->off);
	n = nl ? (size_t)(nl - (it->p + it->off)) : it->len - it->off;
	*line = sn_slice_make(it->p + it->off, n);
	it->off += n + (nl ? 1 : 0);
	if (line->len > 0 && line->ptr[line->len - 1] == '\r') {
		line->len--;
	}
	return true;
}

static bool sdp_is_space(uint8_t c)
{
	return c == ' ' || c == '\t';
}

/* Split the next whitespace-separated token off @p rest. */
static bool sdp_token(struct sn_slice *rest, struct sn_slice *tok)
{
	uint32_t i = 0;
	uint32_t start;

	while (i < rest->len && sdp_is_space(rest->ptr[i])) {
		i++;
	}
	if (i == rest->len) {
		*rest = sn_slice_make(rest->ptr + i, 0);
		return false;
	}
	start = i;
	while (i < rest->len && !sdp_is_space(rest->ptr[i])) {
		i++;
	}
	*tok = sn_slice_make(rest->ptr + start, i - start);
	*rest = sn_slice_make(rest->ptr + i, rest->len - i);
	return true;
}

/* What follows the leading blanks of @p s, with trailing blanks removed too. */
static struct sn_slice sdp_trim(struct sn_slice s)
{
	while (s.len > 0 && sdp_is_space(s.ptr[0])) {
		s.ptr++;
		s.len--;
	}
	while (s.len > 0 && sdp_is_space(s.ptr[s.len - 1])) {
		s.len--;
	}
	return s;
}

/* Split @p s at the first @p sep: head before it, tail after it (tail.ptr NULL if absent). */
static void sdp_split(struct sn_slice s, uint8_t sep, struct sn_slice *head, struct sn_slice *tail)
{
	const uint8_t *q = s.len ? memchr(s.ptr, sep, s.len) : NULL;

	if (!q) {
		*head = s;
		*tail = SN_SLICE_NULL;
		return;
	}
	*head = sn_slice_make(s.ptr, (size_t)(q - s.ptr));
	*tail = sn_slice_make(q + 1, s.len - head->len - 1);
}

/* Decimal digits only, at least one, value <= @p max. */
static bool sdp_u32(struct sn_slice s, uint32_t max, uint32_t *out)
{
	uint64_t v = 0;

	if (s.len == 0 || s.len > 10) {
		return false;
	}
	for (uint32_t i = 0; i < s.len; i++) {
		if (s.ptr[i] < '0' || s.ptr[i] > '9') {
			return false;
		}
		v = v * 10 + (uint64_t)(s.ptr[i] - '0');
	}
	if (v > max) {
		return false;
	}
	*out = (uint32_t)v;
	return true;
}

/* Leading decimal digits of @p s ("20", "20.5" -> 20); 0 when none or too large. */
static uint32_t sdp_u32_prefix(struct sn_slice s)
{
	uint32_t n = 0;
	uint32_t v = 0;

	while (n < s.len && s.ptr[n] >= '0' && s.ptr[n] <= '9') {
		n++;
	}
	if (!sdp_u32(sn_slice_make(s.ptr, n), 0x7fffffffu, &v)) {
		return 0;
	}
	return v;
}

static enum sdp_dir sdp_dir_from(struct sn_slice name)
{
	if (sn_slice_caseeq_str(name, "sendrecv")) {
		return SDP_DIR_SENDRECV;
	}
	if (sn_slice_caseeq_str(name, "sendonly")) {
		return SDP_DIR_SENDONLY;
	}
	if (sn_slice_caseeq_str(name, "recvonly")) {
		return SDP_DIR_RECVONLY;
	}
	if (sn_slice_caseeq_str(name, "inactive")) {
		return SDP_DIR_INACTIVE;
	}
	return SDP_DIR_UNSET;
}

static enum sdp_media_type sdp_media_type_from(struct sn_slice t)
{
	static const char *const names[] = {"audio",	   "video", "image",
					    "application", "text",  "message"};

	for (size_t i = 0; i < SN_ARRAY_SIZE(names); i++) {
		if (sn_slice_caseeq_str(t, names[i])) {
			return (enum sdp_media_type)(SDP_MEDIA_AUDIO + i);
		}
	}
	return SDP_MEDIA_OTHER;
}

/* True when @p needle occurs in @p hay, ignoring ASCII case. */
static bool sdp_slice_contains(struct sn_slice hay, const char *needle)
{
	size_t n = strlen(needle);

	for (size_t i = 0; n <= hay.len && i + n <= hay.len; i++) {
		if (sn_slice_caseeq_str(sn_slice_make(hay.ptr + i, n), needle)) {
			return true;
		}
	}
	return false;
}

static enum sdp_proto sdp_proto_from(struct sn_slice t, bool *rtp)
{
	static const struct {
		const char *name;
		enum sdp_proto proto;
	} protos[] = {
		{"RTP/AVP", SDP_PROTO_RTP_AVP},
		{"RTP/SAVP", SDP_PROTO_RTP_SAVP},
		{"RTP/AVPF", SDP_PROTO_RTP_AVPF},
		{"RTP/SAVPF", SDP_PROTO_RTP_SAVPF},
		{"UDP/TLS/RTP/SAVP", SDP_PROTO_UDP_TLS_RTP_SAVP},
		{"UDP/TLS/RTP/SAVPF", SDP_PROTO_UDP_TLS_RTP_SAVPF},
		{"udptl", SDP_PROTO_UDPTL},
	};

	*rtp = sdp_slice_contains(t, "RTP/AVP") || sdp_slice_contains(t, "RTP/SAVP");
	for (size_t i = 0; i < SN_ARRAY_SIZE(protos); i++) {
		if (sn_slice_caseeq_str(t, protos[i].name)) {
			return protos[i].proto;
		}
	}
	if (!*rtp && t.len >= 3 && sn_slice_caseeq_str(sn_slice_make(t.ptr, 3), "TCP")) {
		return SDP_PROTO_TCP;
	}
	return SDP_PROTO_OTHER;
}

/* <nettype> <addrtype> <address>[/ttl][/count] from a c= line or the tail of a=rtcp. */
static enum sn_status sdp_conn_parse(struct sn_slice v, struct sdp_conn *c)
{
	struct sn_slice addr;
	struct sn_slice suffix;
	struct sn_slice first;
	struct sn_slice second;
	uint32_t n1 = 0;
	uint32_t n2 = 0;

	memset(c, 0, sizeof(*c));
	if (!sdp_token(&v, &c->nettype) || !sdp_token(&v, &c->addrtype) || !sdp_token(&v, &addr)) {
		return SN_EPARSE;
	}
	sdp_split(addr, '/', &c->address, &suffix);
	c->count = 1;
	if (suffix.ptr) {
		sdp_split(suffix, '/', &first, &second);
		if (!sdp_u32(first, 0xffffu, &n1)) {
			return SN_EPARSE;
		}
		if (second.ptr && !sdp_u32(second, 0xffffu, &n2)) {
			return SN_EPARSE;
		}
		if (sn_slice_caseeq_str(c->addrtype, "IP6")) {
			/* IP6 has no TTL: the only suffix is the count (RFC 8866 §5.7) */
			if (second.ptr) {
				return SN_EPARSE;
			}
			c->count = n1;
		} else {
			c->ttl = n1;
			if (second.ptr) {
				c->count = n2;
			}
		}
	}
	if (sn_addr_parse(c->address, &c->addr) != SN_OK) {
		/* an FQDN is legal here; keep the text, leave addr unset */
		memset(&c->addr, 0, sizeof(c->addr));
	}
	c->present = true;
	return SN_OK;
}

static void sdp_origin_parse(struct sn_slice v, struct sdp_origin *o)
{
	struct sn_slice f[6];

	for (size_t i = 0; i < SN_ARRAY_SIZE(f); i++) {
		if (!sdp_token(&v, &f[i])) {
			return;
		}
	}
	o->username = f[0];
	o->sess_id = f[1];
	o->sess_version = f[2];
	o->nettype = f[3];
	o->addrtype = f[4];
	o->address = f[5];
	o->present = true;
}

/* m=<media> <port>[/<count>] <proto> <fmt> ...; formats come from @p arena. */
static enum sn_status sdp_media_parse(struct sn_slice v, struct sn_arena *arena,
				      struct sdp_media *m)
{
	struct sn_slice type;
	struct sn_slice ports;
	struct sn_slice port;
	struct sn_slice count;
	struct sn_slice rest;
	struct sn_slice tok;
	uint32_t n = 0;
	uint32_t pc = 1;
	uint32_t nfmt = 0;
	void *mem;
	enum sn_status st;

	if (!sdp_token(&v, &type) || !sdp_token(&v, &ports) || !sdp_token(&v, &m->proto_text)) {
		return SN_EPARSE;
	}
	m->type_text = type;
	m->type = sdp_media_type_from(type);
	sdp_split(ports, '/', &port, &count);
	if (!sdp_u32(port, 0xffffu, &n)) {
		return SN_EPARSE;
	}
	if (count.ptr && (!sdp_u32(count, 0xffffu, &pc) || pc == 0)) {
		return SN_EPARSE;
	}
	m->port = (uint16_t)n;
	m->port_count = (uint16_t)pc;
	m->proto = sdp_proto_from(m->proto_text, &m->rtp);

	rest = v;
	while (sdp_token(&rest, &tok)) {
		nfmt++;
		if (nfmt > SDP_MAX_FORMATS) {
			return SN_ELIMIT;
		}
	}
	if (nfmt == 0) {
		return SN_OK;
	}
	st = sn_arena_alloc(arena, nfmt * sizeof(*m->formats), &mem);
	if (st != SN_OK) {
		return st;
	}
	m->formats = mem;
	rest = v;
	while (sdp_token(&rest, &tok)) {
		struct sdp_format *f = &m->formats[m->format_count++];

		f->token = tok;
		f->pt = -1;
		f->channels = 1;
		if (m->rtp && sdp_u32(tok, 127, &n)) {
			f->pt = (int)n;
		}
	}
	return SN_OK;
}

static struct sdp_format *sdp_format_by_token(struct sdp_media *m, struct sn_slice tok)
{
	for (uint32_t i = 0; i < m->format_count; i++) {
		if (sn_slice_eq(m->formats[i].token, tok)) {
			return &m->formats[i];
		}
	}
	return NULL;
}

/* a=rtpmap:<pt> <encoding>/<clock>[/<channels>] (RFC 8866 §6.6) */
static void sdp_rtpmap_parse(struct sdp_media *m, struct sn_slice v)
{
	struct sn_slice key;
	struct sn_slice desc;
	struct sn_slice enc;
	struct sn_slice rest;
	struct sn_slice clock;
	struct sn_slice chans;
	struct sdp_format *f;
	uint32_t rate = 0;
	uint32_t ch = 1;

	if (!sdp_token(&v, &key) || !sdp_token(&v, &desc)) {
		return;
	}
	f = sdp_format_by_token(m, key);
	if (!f || f->has_rtpmap) {
		return;
	}
	sdp_split(desc, '/', &enc, &rest);
	if (enc.len == 0 || !rest.ptr) {
		return;
	}
	sdp_split(rest, '/', &clock, &chans);
	if (!sdp_u32(clock, 0x7fffffffu, &rate) || rate == 0) {
		return;
	}
	if (chans.ptr && (!sdp_u32(chans, 0xffffu, &ch) || ch == 0)) {
		return;
	}
	f->has_rtpmap = true;
	f->encoding = enc;
	f->clock_rate = rate;
	f->channels = ch;
}

/* a=fmtp:<fmt> <params> (RFC 8866 §6.15) */
static void sdp_fmtp_parse(struct sdp_media *m, struct sn_slice v)
{
	struct sn_slice key;
	struct sdp_format *f;

	if (!sdp_token(&v, &key)) {
		return;
	}
	f = sdp_format_by_token(m, key);
	if (f && !f->fmtp.ptr) {
		f->fmtp = sdp_trim(v);
	}
}

/* a=rtcp:<port> [<nettype> <addrtype> <address>] (RFC 3605 §2.1) */
static void sdp_rtcp_parse(struct sdp_media *m, struct sn_slice v)
{
	struct sn_slice port;
	uint32_t n = 0;

	if (!sdp_token(&v, &port) || !sdp_u32(port, 0xffffu, &n)) {
		return;
	}
	m->rtcp_port = (uint16_t)n;
	if (sdp_trim(v).len > 0 && sdp_conn_parse(v, &m->rtcp_conn) != SN_OK) {
		memset(&m->rtcp_conn, 0, sizeof(m->rtcp_conn));
	}
}

/* a=crypto:<tag> <suite> <key-params> [<session-params>] (RFC 4568 §9.1) */
static enum sn_status sdp_crypto_parse(struct sdp_media *m, struct sn_slice v)
{
	struct sdp_crypto c;
	struct sn_slice tag;

	memset(&c, 0, sizeof(c));
	if (!sdp_token(&v, &tag) || !sdp_u32(tag, 999999999u, &c.tag) || !sdp_token(&v, &c.suite) ||
	    !sdp_token(&v, &c.key_params)) {
		return SN_OK; /* malformed: kept only as a plain attribute */
	}
	c.session_params = sdp_trim(v);
	if (m->crypto_count >= SDP_MAX_CRYPTO) {
		return SN_ELIMIT;
	}
	m->crypto[m->crypto_count++] = c;
	return SN_OK;
}

/* Interpret one a= line at media level. */
static enum sn_status sdp_media_attr(struct sdp_media *m, const struct sdp_attr *a)
{
	enum sdp_dir d = sdp_dir_from(a->name);

	if (d != SDP_DIR_UNSET && !a->value.ptr) {
		m->dir = d;
	} else if (!a->value.ptr) {
		if (sn_slice_caseeq_str(a->name, "rtcp-mux")) {
			m->rtcp_mux = true;
		}
	} else if (sn_slice_caseeq_str(a->name, "rtpmap")) {
		sdp_rtpmap_parse(m, a->value);
	} else if (sn_slice_caseeq_str(a->name, "fmtp")) {
		sdp_fmtp_parse(m, a->value);
	} else if (sn_slice_caseeq_str(a->name, "ptime")) {
		m->ptime_ms = sdp_u32_prefix(sdp_trim(a->value));
	} else if (sn_slice_caseeq_str(a->name, "maxptime")) {
		m->maxptime_ms = sdp_u32_prefix(sdp_trim(a->value));
	} else if (sn_slice_caseeq_str(a->name, "rtcp")) {
		sdp_rtcp_parse(m, a->value);
	} else if (sn_slice_caseeq_str(a->name, "crypto")) {
		return sdp_crypto_parse(m, a->value);
	} else if (sn_slice_caseeq_str(a->name, "label")) {
		m->label = sdp_trim(a->value);
	} else if (sn_slice_caseeq_str(a->name, "mid")) {
		m->mid = sdp_trim(a->value);
	}
	return SN_OK;
}

/* Framing check: a non-blank line is <letter>=<value>, with the letter in a..z. */
static bool sdp_line_ok(struct sn_slice line)
{
	return line.len >= 2 && line.ptr[0] >= 'a' && line.ptr[0] <= 'z' && line.ptr[1] == '=';
}

/* First pass: framing, and the counts that size the arena arrays. */
static enum sn_status sdp_count(const uint8_t *p, size_t len, uint32_t *media_count,
				uint32_t attr_counts[SDP_MAX_MEDIA + 1])
{
	struct sdp_lines it = {p, len, 0};
	struct sn_slice line;
	bool first = true;
	uint32_t sect = 0;

	*media_count = 0;
	while (sdp_lines_next(&it, &line)) {
		if (line.len == 0) {
			continue;
		}
		if (first) {
			if (!sn_slice_eq_str(line, "v=0")) {
				return SN_EPARSE;
			}
			first = false;
			continue;
		}
		if (!sdp_line_ok(line)) {
			return SN_EPARSE;
		}
		if (line.ptr[0] == 'm') {
			if (*media_count >= SDP_MAX_MEDIA) {
				return SN_ELIMIT;
			}
			sect = ++*media_count;
		} else if (line.ptr[0] == 'a') {
			if (attr_counts[sect] >= SDP_MAX_ATTRS) {
				return SN_ELIMIT;
			}
			attr_counts[sect]++;
		}
	}
	return first ? SN_EPARSE : SN_OK;
}

static enum sn_status sdp_alloc_attrs(struct sn_arena *arena, uint32_t n, struct sdp_attr **out)
{
	void *mem;
	enum sn_status st;

	if (n == 0) {
		*out = NULL;
		return SN_OK;
	}
	st = sn_arena_alloc(arena, n * sizeof(**out), &mem);
	if (st == SN_OK) {
		*out = mem;
	}
	return st;
}

/* One line of the session section. */
static enum sn_status sdp_session_line(struct sdp_session *s, uint8_t type, struct sn_slice v)
{
	switch (type) {
	case 'o':
		if (!s->origin.present) {
			sdp_origin_parse(v, &s->origin);
		}
		break;
	case 's':
		if (!s->name.ptr) {
			s->name = v;
		}
		break;
	case 'c':
		if (s->conn.present) {
			break;
		}
		return sdp_conn_parse(v, &s->conn);
	case 't':
		if (!s->timing.ptr) {
			s->timing = sdp_trim(v);
		}
		break;
	default:
		break;
	}
	return SN_OK;
}

enum sn_status sdp_parse(struct sdp_session *s, struct sn_arena *arena, const uint8_t *p,
			 size_t len)
{
	uint32_t attr_counts[SDP_MAX_MEDIA + 1] = {0};
	uint32_t media_count = 0;
	struct sdp_lines it = {p, len, 0};
	struct sn_slice line;
	struct sdp_media *m = NULL;
	bool first = true;
	enum sn_status st;
	void *mem;

	memset(s, 0, sizeof(*s));
	if (!p || len == 0 || len > UINT32_MAX) {
		return SN_EPARSE;
	}
	st = sdp_count(p, len, &media_count, attr_counts);
	if (st != SN_OK) {
		return st;
	}
	st = sdp_alloc_attrs(arena, attr_counts[0], &s->attrs);
	if (st != SN_OK) {
		return st;
	}
	if (media_count > 0) {
		st = sn_arena_alloc(arena, media_count * sizeof(*s->media), &mem);
		if (st != SN_OK) {
			return st;
		}
		s->media = mem;
	}

	while (sdp_lines_next(&it, &line)) {
		struct sn_slice v;
		struct sdp_attr a;

		if (line.len == 0) {
			continue;
		}
		if (first) {
			first = false; /* "v=0", checked by sdp_count() */
			continue;
		}
		v = sn_slice_make(line.ptr + 2, line.len - 2);
		switch (line.ptr[0]) {
		case 'm':
			m = &s->media[s->media_count++];
			st = sdp_media_parse(v, arena, m);
			if (st == SN_OK) {
				st = sdp_alloc_attrs(arena, attr_counts[s->media_count], &m->attrs);
			}
			break;
		case 'a':
			sdp_split(v, ':', &a.name, &a.value);
			if (m) {
				m->attrs[m->attr_count++] = a;
				st = sdp_media_attr(m, &a);
			} else {
				s->attrs[s->attr_count++] = a;
				if (!a.value.ptr && sdp_dir_from(a.name) != SDP_DIR_UNSET) {
					s->dir = sdp_dir_from(a.name);
				}
			}
			break;
		case 'c':
			if (m) {
				st = m->conn.present ? SN_OK : sdp_conn_parse(v, &m->conn);
				break;
			}
			st = sdp_session_line(s, 'c', v);
			break;
		default:
			/* i=, b=, k= and unknown lines in a media section are ignored */
			st = m ? SN_OK : sdp_session_line(s, line.ptr[0], v);
			break;
		}
		if (st != SN_OK) {
			return st;
		}
	}
	return SN_OK;
}

const struct sdp_conn *sdp_media_conn(const struct sdp_session *s, const struct sdp_media *m)
{
	if (m && m->conn.present) {
		return &m->conn;
	}
	if (s && s->conn.present) {
		return &s->conn;
	}
	return NULL;
}

enum sdp_dir sdp_media_direction(const struct sdp_session *s, const struct sdp_media *m)
{
	if (m && m->dir != SDP_DIR_UNSET) {
		return m->dir;
	}
	if (s && s->dir != SDP_DIR_UNSET) {
		return s->dir;
	}
	return SDP_DIR_SENDRECV;
}

bool sdp_media_is_disabled(const struct sdp_media *m)
{
	return m->port == 0;
}

bool sdp_media_is_on_hold(const struct sdp_session *s, const struct sdp_media *m)
{
	static const uint8_t zero[16];
	enum sdp_dir d = sdp_media_direction(s, m);
	const struct sdp_conn *c = sdp_media_conn(s, m);

	if (d == SDP_DIR_SENDONLY || d == SDP_DIR_INACTIVE) {
		return true;
	}
	return c && c->addr.family == 4 && memcmp(c->addr.bytes, zero, 4) == 0;
}

const struct sdp_format *sdp_media_format(const struct sdp_media *m, int pt)
{
	if (!m || pt < 0) {
		return NULL;
	}
	for (uint32_t i = 0; i < m->format_count; i++) {
		if (m->formats[i].pt == pt) {
			return &m->formats[i];
		}
	}
	return NULL;
}

int sdp_static_clock_rate(int pt)
{
	if (pt < 0 || (size_t)pt >= SN_ARRAY_SIZE(sdp_static_table) || !sdp_static_table[pt].name) {
		return -1;
	}
	return sdp_static_table[pt].rate;
}

const char *sdp_static_codec_name(int pt)
{
	if (pt < 0 || (size_t)pt >= SN_ARRAY_SIZE(sdp_static_table)) {
		return NULL;
	}
	return sdp_static_table[pt].name;
}

int sdp_media_clock_rate(const struct sdp_media *m, int pt)
{
	const struct sdp_format *f = sdp_media_format(m, pt);

	if (f && f->has_rtpmap) {
		return (int)f->clock_rate;
	}
	return sdp_static_clock_rate(pt);
}

struct sn_slice sdp_media_codec_name(const struct sdp_media *m, int pt)
{
	const struct sdp_format *f = sdp_media_format(m, pt);
	const char *name;

	if (f && f->has_rtpmap) {
		return f->encoding;
	}
	name = sdp_static_codec_name(pt);
	return name ? sn_slice_make(name, strlen(name)) : SN_SLICE_NULL;
}

const struct sdp_attr *sdp_attr_find(const struct sdp_attr *attrs, uint32_t count, const char *name)
{
	for (uint32_t i = 0; i < count; i++) {
		if (sn_slice_caseeq_str(attrs[i].name, name)) {
			return &attrs[i];
		}
	}
	return NULL;
}

const char *sdp_dir_str(enum sdp_dir d)
{
	switch (d) {
	case SDP_DIR_SENDRECV:
		return "sendrecv";
	case SDP_DIR_SENDONLY:
		return "sendonly";
	case SDP_DIR_RECVONLY:
		return "recvonly";
	case SDP_DIR_INACTIVE:
		return "inactive";
	case SDP_DIR_UNSET:
		break;
	}
	return "";
}
