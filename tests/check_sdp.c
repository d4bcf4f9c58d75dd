/*
 * check_sdp.c - unit tests for the SDP parser (src/sdp): fixtures in corpus/sip/sdp,
 * direction/hold/connection helpers, the RFC 3551 static table, every-prefix robustness,
 * malformed input and limits.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "sipnab/sdp.h"

static struct sn_arena arena;
static struct sdp_session sess;
static uint8_t buf[16384];
static size_t buf_len;

static void arena_setup(void)
{
	sn_arena_init(&arena, 1u << 20);
	memset(&sess, 0, sizeof(sess));
	buf_len = 0;
}

static void arena_teardown(void)
{
	sn_arena_cleanup(&arena);
}

/* Read corpus/sip/sdp/<name> into buf. */
static void load(const char *name)
{
	const char *dir = getenv("SIPNAB_CORPUS");
	char path[1024];
	FILE *f;

	if (!dir) {
		dir = "corpus";
	}
	snprintf(path, sizeof(path), "%s/sip/sdp/%s", dir, name);
	f = fopen(path, "rb");
	ck_assert_msg(f != NULL, "cannot open %s", path);
	buf_len = fread(buf, 1, sizeof(buf), f);
	ck_assert_uint_lt(buf_len, sizeof(buf));
	fclose(f);
}

static enum sn_status parse_fixture(const char *name)
{
	load(name);
	return sdp_parse(&sess, &arena, buf, buf_len);
}

static enum sn_status parse_str(const char *text)
{
	return sdp_parse(&sess, &arena, (const uint8_t *)text, strlen(text));
}

#define ck_assert_slice_eq(sl, lit)                                                        \
	ck_assert_msg(sn_slice_eq_str((sl), (lit)), "slice '%.*s' != '%s'", (int)(sl).len, \
		      (const char *)(sl).ptr, (lit))

static void check_audio_offer(void)
{
	const struct sdp_media *m;
	const struct sdp_conn *c;
	char tmp[64];

	ck_assert(sess.origin.present);
	ck_assert_slice_eq(sess.origin.username, "alice");
	ck_assert_slice_eq(sess.origin.sess_id, "2890844526");
	ck_assert_slice_eq(sess.origin.sess_version, "2890844526");
	ck_assert_slice_eq(sess.origin.nettype, "IN");
	ck_assert_slice_eq(sess.origin.addrtype, "IP4");
	ck_assert_slice_eq(sess.origin.address, "192.0.2.10");
	ck_assert_slice_eq(sess.name, "-");
	ck_assert_slice_eq(sess.timing, "0 0");
	ck_assert(sess.conn.present);
	ck_assert_str_eq(sn_addr_str(&sess.conn.addr, tmp, sizeof(tmp)), "192.0.2.10");
	ck_assert_uint_eq(sess.media_count, 1);
	m = &sess.media[0];
	ck_assert_int_eq(m->type, SDP_MEDIA_AUDIO);
	ck_assert_slice_eq(m->type_text, "audio");
	ck_assert_uint_eq(m->port, 49170);
	ck_assert_uint_eq(m->port_count, 1);
	ck_assert_int_eq(m->proto, SDP_PROTO_RTP_AVP);
	ck_assert(m->rtp);
	ck_assert_uint_eq(m->format_count, 3);
	ck_assert_int_eq(m->formats[0].pt, 0);
	ck_assert_int_eq(m->formats[1].pt, 8);
	ck_assert_int_eq(m->formats[2].pt, 101);
	ck_assert_slice_eq(m->formats[2].encoding, "telephone-event");
	ck_assert_uint_eq(m->formats[2].clock_rate, 8000);
	ck_assert_slice_eq(m->formats[2].fmtp, "0-16");
	ck_assert_uint_eq(m->ptime_ms, 20);
	ck_assert_uint_eq(m->maxptime_ms, 150);
	ck_assert_int_eq(m->dir, SDP_DIR_SENDRECV);
	ck_assert_uint_eq(m->attr_count, 7);
	c = sdp_media_conn(&sess, m);
	ck_assert_ptr_eq(c, &sess.conn);
	ck_assert_int_eq(sdp_media_clock_rate(m, 0), 8000);
	ck_assert_int_eq(sdp_media_clock_rate(m, 101), 8000);
	ck_assert_slice_eq(sdp_media_codec_name(m, 8), "PCMA");
	ck_assert(!sdp_media_is_on_hold(&sess, m));
	ck_assert(!sdp_media_is_disabled(m));
}

START_TEST(test_sdp_parse_reads_audio_offer_with_pcmu_pcma_and_telephone_event)
{
	ck_assert_int_eq(parse_fixture("audio_offer.sdp"), SN_OK);
	check_audio_offer();
}
END_TEST

START_TEST(test_sdp_parse_accepts_lf_only_line_ends)
{
	ck_assert_int_eq(parse_fixture("lf_only.sdp"), SN_OK);
	check_audio_offer();
}
END_TEST

START_TEST(test_sdp_parse_accepts_missing_final_line_end)
{
	const struct sdp_media *m;

	ck_assert_int_eq(parse_fixture("no_final_newline.sdp"), SN_OK);
	ck_assert_uint_eq(sess.media_count, 1);
	m = &sess.media[0];
	ck_assert_uint_eq(m->ptime_ms, 20);
	ck_assert_uint_eq(m->attr_count, 4);
	ck_assert_slice_eq(m->attrs[3].name, "ptime");
	ck_assert_slice_eq(m->attrs[3].value, "20");
}
END_TEST

START_TEST(test_sdp_parse_reads_ipv6_answer)
{
	const struct sdp_conn *c;
	char tmp[64];

	ck_assert_int_eq(parse_fixture("ipv6_answer.sdp"), SN_OK);
	ck_assert_slice_eq(sess.origin.addrtype, "IP6");
	ck_assert_slice_eq(sess.name, "Talk");
	c = sdp_media_conn(&sess, &sess.media[0]);
	ck_assert_ptr_nonnull(c);
	ck_assert_uint_eq(c->addr.family, 6);
	ck_assert_str_eq(sn_addr_str(&c->addr, tmp, sizeof(tmp)), "2001:db8::20");
	ck_assert_slice_eq(c->address, "2001:db8::20");
	ck_assert_uint_eq(sess.media[0].port, 30000);
	ck_assert_slice_eq(sess.media[0].formats[1].fmtp, "0-15");
}
END_TEST

START_TEST(test_sdp_parse_reads_audio_and_video_media)
{
	const struct sdp_media *a;
	const struct sdp_media *v;

	ck_assert_int_eq(parse_fixture("audio_video.sdp"), SN_OK);
	ck_assert_uint_eq(sess.media_count, 2);
	a = &sess.media[0];
	v = &sess.media[1];
	ck_assert_int_eq(sess.dir, SDP_DIR_SENDRECV);
	ck_assert_uint_eq(sess.attr_count, 1);
	ck_assert_int_eq(a->type, SDP_MEDIA_AUDIO);
	ck_assert_int_eq(v->type, SDP_MEDIA_VIDEO);
	ck_assert_int_eq(sdp_media_clock_rate(a, 9), 8000);
	ck_assert_slice_eq(sdp_media_codec_name(a, 9), "G722");
	ck_assert_int_eq(sdp_media_clock_rate(a, 13), 8000);
	ck_assert_uint_eq(v->port, 5006);
	ck_assert_int_eq(sdp_media_clock_rate(v, 96), 90000);
	ck_assert_slice_eq(sdp_media_codec_name(v, 96), "H264");
	ck_assert_slice_eq(v->formats[0].fmtp, "profile-level-id=42e01f; packetization-mode=1");
	ck_assert_int_eq(sdp_media_clock_rate(v, 34), 90000);
	ck_assert_slice_eq(v->label, "main");
	ck_assert_slice_eq(v->mid, "v1");
	ck_assert_int_eq(sdp_media_direction(&sess, v), SDP_DIR_SENDRECV);
	/* listed nowhere: neither the media nor the static table knows it */
	ck_assert_int_eq(sdp_media_clock_rate(v, 97), -1);
	ck_assert_uint_eq(sdp_media_codec_name(v, 97).len, 0);
}
END_TEST

START_TEST(test_sdp_parse_reads_rtcp_mux_and_rtcp_address)
{
	const struct sdp_media *m;
	char tmp[64];

	ck_assert_int_eq(parse_fixture("rtcp_mux.sdp"), SN_OK);
	ck_assert(!sess.conn.present);
	m = &sess.media[0];
	ck_assert_int_eq(m->proto, SDP_PROTO_RTP_AVPF);
	ck_assert(m->rtcp_mux);
	ck_assert_uint_eq(m->rtcp_port, 16385);
	ck_assert(m->rtcp_conn.present);
	ck_assert_str_eq(sn_addr_str(&m->rtcp_conn.addr, tmp, sizeof(tmp)), "203.0.113.8");
	ck_assert_ptr_eq(sdp_media_conn(&sess, m), &m->conn);
	ck_assert_int_eq(sdp_media_clock_rate(m, 111), 48000);
	ck_assert_uint_eq(m->formats[0].channels, 2);
	ck_assert_slice_eq(m->formats[0].fmtp, "minptime=10;useinbandfec=1");
	ck_assert_ptr_nonnull(sdp_attr_find(m->attrs, m->attr_count, "rtcp-fb"));
	ck_assert_slice_eq(sdp_attr_find(m->attrs, m->attr_count, "rtcp-fb")->value,
			   "111 transport-cc");
	ck_assert_ptr_null(sdp_attr_find(m->attrs, m->attr_count, "ssrc"));
}
END_TEST

START_TEST(test_sdp_parse_reads_srtp_crypto_lines)
{
	const struct sdp_media *m;

	ck_assert_int_eq(parse_fixture("srtp_crypto.sdp"), SN_OK);
	m = &sess.media[0];
	ck_assert_int_eq(m->proto, SDP_PROTO_RTP_SAVP);
	ck_assert(m->rtp);
	ck_assert_uint_eq(m->crypto_count, 2);
	ck_assert_uint_eq(m->crypto[0].tag, 1);
	ck_assert_slice_eq(m->crypto[0].suite, "AES_CM_128_HMAC_SHA1_80");
	ck_assert_slice_eq(m->crypto[0].key_params,
			   "inline:WVNfX19zZW1jdGwgKCkgewkyMjA7fQp9CnVubGVz|2^20|1:4");
	ck_assert_uint_eq(m->crypto[0].session_params.len, 0);
	ck_assert_uint_eq(m->crypto[1].tag, 2);
	ck_assert_slice_eq(m->crypto[1].suite, "AES_CM_128_HMAC_SHA1_32");
	ck_assert_slice_eq(m->crypto[1].session_params, "FEC_ORDER=FEC_SRTP");
}
END_TEST

START_TEST(test_sdp_parse_reads_t38_udptl_image_line)
{
	const struct sdp_media *m;

	ck_assert_int_eq(parse_fixture("t38_image.sdp"), SN_OK);
	m = &sess.media[0];
	ck_assert_int_eq(m->type, SDP_MEDIA_IMAGE);
	ck_assert_int_eq(m->proto, SDP_PROTO_UDPTL);
	ck_assert(!m->rtp);
	ck_assert_uint_eq(m->format_count, 1);
	ck_assert_slice_eq(m->formats[0].token, "t38");
	ck_assert_int_eq(m->formats[0].pt, -1);
	ck_assert_uint_eq(m->attr_count, 5);
	ck_assert_slice_eq(sdp_attr_find(m->attrs, m->attr_count, "T38MaxBitRate")->value, "14400");
}
END_TEST

START_TEST(test_sdp_parse_detects_hold_by_sendonly)
{
	ck_assert_int_eq(parse_fixture("hold_sendonly.sdp"), SN_OK);
	ck_assert_int_eq(sdp_media_direction(&sess, &sess.media[0]), SDP_DIR_SENDONLY);
	ck_assert(sdp_media_is_on_hold(&sess, &sess.media[0]));
}
END_TEST

START_TEST(test_sdp_parse_detects_hold_by_zero_address)
{
	ck_assert_int_eq(parse_fixture("hold_zero_addr.sdp"), SN_OK);
	ck_assert_int_eq(sdp_media_direction(&sess, &sess.media[0]), SDP_DIR_SENDRECV);
	ck_assert_uint_eq(sess.conn.addr.family, 4);
	ck_assert(sdp_media_is_on_hold(&sess, &sess.media[0]));
}
END_TEST

START_TEST(test_sdp_parse_marks_port_zero_media_disabled)
{
	ck_assert_int_eq(parse_fixture("port0_rejected.sdp"), SN_OK);
	ck_assert_uint_eq(sess.media_count, 2);
	ck_assert(!sdp_media_is_disabled(&sess.media[0]));
	ck_assert(sdp_media_is_disabled(&sess.media[1]));
	ck_assert_int_eq(sess.media[1].formats[0].pt, 31);
	ck_assert_uint_eq(sess.media[1].attr_count, 0);
	ck_assert_ptr_null(sess.media[1].attrs);
}
END_TEST

START_TEST(test_sdp_parse_media_conn_overrides_session_conn)
{
	const struct sdp_media *m;
	const struct sdp_conn *c;
	char tmp[64];

	ck_assert_int_eq(parse_fixture("conn_override.sdp"), SN_OK);
	ck_assert_uint_eq(sess.media_count, 3);
	ck_assert_slice_eq(sess.timing, "2873397496 2873404696");
	ck_assert_slice_eq(sess.conn.address, "224.2.1.1");
	ck_assert_uint_eq(sess.conn.ttl, 127);
	ck_assert_uint_eq(sess.conn.count, 3);
	m = &sess.media[0];
	ck_assert_uint_eq(m->port, 49170);
	ck_assert_uint_eq(m->port_count, 2);
	c = sdp_media_conn(&sess, m);
	ck_assert_str_eq(sn_addr_str(&c->addr, tmp, sizeof(tmp)), "224.2.1.1");
	ck_assert_int_eq(sdp_media_direction(&sess, m), SDP_DIR_RECVONLY);
	ck_assert(!sdp_media_is_on_hold(&sess, m));
	m = &sess.media[1];
	c = sdp_media_conn(&sess, m);
	ck_assert_str_eq(sn_addr_str(&c->addr, tmp, sizeof(tmp)), "192.0.2.99");
	ck_assert_int_eq(sdp_media_direction(&sess, m), SDP_DIR_INACTIVE);
	ck_assert(sdp_media_is_on_hold(&sess, m));
	ck_assert_slice_eq(sdp_media_codec_name(m, 99), "h263-1998");
	m = &sess.media[2];
	ck_assert_int_eq(m->type, SDP_MEDIA_APPLICATION);
	ck_assert_int_eq(m->proto, SDP_PROTO_TCP);
	ck_assert(!m->rtp);
	ck_assert_slice_eq(m->formats[0].token, "*");
	ck_assert_ptr_eq(sdp_media_conn(&sess, m), &sess.conn);
}
END_TEST

START_TEST(test_sdp_parse_reads_dynamic_codecs)
{
	const struct sdp_media *m;
	const struct sdp_format *f;

	ck_assert_int_eq(parse_fixture("dynamic_codecs.sdp"), SN_OK);
	m = &sess.media[0];
	f = sdp_media_format(m, 96);
	ck_assert_ptr_nonnull(f);
	ck_assert_slice_eq(f->encoding, "opus");
	ck_assert_uint_eq(f->clock_rate, 48000);
	ck_assert_uint_eq(f->channels, 2);
	ck_assert_slice_eq(f->fmtp, "maxplaybackrate=16000; sprop-stereo=0");
	ck_assert_int_eq(sdp_media_clock_rate(m, 97), 16000);
	ck_assert_slice_eq(sdp_media_codec_name(m, 97), "AMR-WB");
	ck_assert_uint_eq(sdp_media_format(m, 98)->channels, 1);
	ck_assert_int_eq(sdp_media_clock_rate(m, 101), 48000);
	ck_assert_ptr_null(sdp_media_format(m, 0));
}
END_TEST

START_TEST(test_sdp_parse_survives_every_prefix_of_every_fixture)
{
	static const char *const names[] = {
		"audio_offer.sdp",	"ipv6_answer.sdp",    "audio_video.sdp",
		"rtcp_mux.sdp",		"srtp_crypto.sdp",    "t38_image.sdp",
		"hold_sendonly.sdp",	"hold_zero_addr.sdp", "port0_rejected.sdp",
		"conn_override.sdp",	"dynamic_codecs.sdp", "lf_only.sdp",
		"no_final_newline.sdp",
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		load(names[i]);
		for (size_t n = 0; n <= buf_len; n++) {
			/* a heap copy of exactly n bytes, so ASan sees any overread */
			uint8_t *copy = malloc(n ? n : 1);
			enum sn_status st;

			memcpy(copy, buf, n);
			st = sdp_parse(&sess, &arena, copy, n);
			ck_assert_msg(st == SN_OK || st == SN_EPARSE, "%s prefix %zu: %s", names[i],
				      n, sn_status_str(st));
			if (st == SN_OK) {
				for (uint32_t k = 0; k < sess.media_count; k++) {
					(void)sdp_media_is_on_hold(&sess, &sess.media[k]);
				}
			}
			free(copy);
			sn_arena_reset(&arena);
		}
		ck_assert_int_eq(sdp_parse(&sess, &arena, buf, buf_len), SN_OK);
	}
}
END_TEST

START_TEST(test_sdp_parse_rejects_non_sdp_input)
{
	ck_assert_int_eq(sdp_parse(&sess, &arena, NULL, 0), SN_EPARSE);
	ck_assert_int_eq(parse_str(""), SN_EPARSE);
	ck_assert_int_eq(parse_str("\r\n\r\n"), SN_EPARSE);
	ck_assert_int_eq(parse_str("INVITE sip:bob@example.com SIP/2.0\r\n"), SN_EPARSE);
	ck_assert_int_eq(parse_str("v=1\r\ns=-\r\n"), SN_EPARSE);
	ck_assert_int_eq(parse_str("o=- 1 1 IN IP4 1.2.3.4\r\nv=0\r\n"), SN_EPARSE);
	ck_assert_int_eq(parse_str("v=0\r\nthis is not sdp\r\n"), SN_EPARSE);
	ck_assert_int_eq(parse_str("v=0\r\nX=upper\r\n"), SN_EPARSE);
	ck_assert_int_eq(parse_str("v=0\r\na\r\n"), SN_EPARSE);
	ck_assert_int_eq(parse_str("v=0\r\nm=audio\r\n"), SN_EPARSE);
	ck_assert_int_eq(parse_str("v=0\r\nm=audio 70000 RTP/AVP 0\r\n"), SN_EPARSE);
	ck_assert_int_eq(parse_str("v=0\r\nm=audio 5/0 RTP/AVP 0\r\n"), SN_EPARSE);
	ck_assert_int_eq(parse_str("v=0\r\nm=audio -1 RTP/AVP 0\r\n"), SN_EPARSE);
	ck_assert_int_eq(parse_str("v=0\r\nc=IN IP4\r\n"), SN_EPARSE);
	ck_assert_int_eq(parse_str("v=0\r\nc=IN IP4 224.0.0.1/x\r\n"), SN_EPARSE);
	ck_assert_int_eq(parse_str("v=0\r\nc=IN IP6 ff15::1/3/2\r\n"), SN_EPARSE);
	ck_assert_int_eq(parse_str("v=0\r\nm=audio 1 RTP/AVP 0\r\nc=IN\r\n"), SN_EPARSE);
}
END_TEST

START_TEST(test_sdp_parse_keeps_malformed_known_attributes_as_plain)
{
	const struct sdp_media *m;

	ck_assert_int_eq(parse_str("v=0\nc=IN IP4 example.com\nm=audio 1 RTP/AVP 96\n"
				   "a=rtpmap:96 opus\na=rtpmap:96\na=rtpmap:x y/1\n"
				   "a=crypto:z AES inline:k\na=rtcp:abc\na=ptime:20.5\n"
				   "a=rtpmap:96 opus/0\na=rtpmap:96 opus/8000/0\n"),
			 SN_OK);
	ck_assert_uint_eq(sess.conn.addr.family, 0);
	ck_assert_slice_eq(sess.conn.address, "example.com");
	m = &sess.media[0];
	ck_assert_uint_eq(m->attr_count, 8);
	ck_assert(!m->formats[0].has_rtpmap);
	ck_assert_uint_eq(m->crypto_count, 0);
	ck_assert_uint_eq(m->rtcp_port, 0);
	ck_assert_uint_eq(m->ptime_ms, 20);
	ck_assert_int_eq(sdp_media_clock_rate(m, 96), -1);
}
END_TEST

START_TEST(test_sdp_parse_rejects_too_many_media_lines)
{
	char text[4096];
	size_t off = 0;

	off += (size_t)snprintf(text + off, sizeof(text) - off, "v=0\r\n");
	for (int i = 0; i < SDP_MAX_MEDIA; i++) {
		off += (size_t)snprintf(text + off, sizeof(text) - off, "m=audio %d RTP/AVP 0\r\n",
					10000 + 2 * i);
	}
	ck_assert_int_eq(parse_str(text), SN_OK);
	ck_assert_uint_eq(sess.media_count, SDP_MAX_MEDIA);
	ck_assert_uint_eq(sess.media[SDP_MAX_MEDIA - 1].port, 10000 + 2 * (SDP_MAX_MEDIA - 1));
	snprintf(text + off, sizeof(text) - off, "m=audio 9 RTP/AVP 0\r\n");
	ck_assert_int_eq(parse_str(text), SN_ELIMIT);
}
END_TEST

START_TEST(test_sdp_parse_rejects_too_many_formats_attributes_and_crypto)
{
	char text[16384];
	size_t off = 0;

	off += (size_t)snprintf(text + off, sizeof(text) - off, "v=0\r\nm=audio 4 RTP/AVP");
	for (int i = 0; i < SDP_MAX_FORMATS; i++) {
		off += (size_t)snprintf(text + off, sizeof(text) - off, " %d", 96 + i);
	}
	snprintf(text + off, sizeof(text) - off, "\r\n");
	ck_assert_int_eq(parse_str(text), SN_OK);
	ck_assert_uint_eq(sess.media[0].format_count, SDP_MAX_FORMATS);
	snprintf(text + off, sizeof(text) - off, " 0\r\n");
	ck_assert_int_eq(parse_str(text), SN_ELIMIT);

	off = (size_t)snprintf(text, sizeof(text), "v=0\r\nm=audio 4 RTP/AVP 0\r\n");
	for (int i = 0; i < SDP_MAX_ATTRS; i++) {
		off += (size_t)snprintf(text + off, sizeof(text) - off, "a=x-%d\r\n", i);
	}
	ck_assert_int_eq(parse_str(text), SN_OK);
	ck_assert_uint_eq(sess.media[0].attr_count, SDP_MAX_ATTRS);
	snprintf(text + off, sizeof(text) - off, "a=one-too-many\r\n");
	ck_assert_int_eq(parse_str(text), SN_ELIMIT);

	off = (size_t)snprintf(text, sizeof(text), "v=0\r\nm=audio 4 RTP/SAVP 0\r\n");
	for (int i = 0; i < SDP_MAX_CRYPTO; i++) {
		off += (size_t)snprintf(text + off, sizeof(text) - off,
					"a=crypto:%d AES_CM_128_HMAC_SHA1_80 inline:k\r\n", i + 1);
	}
	ck_assert_int_eq(parse_str(text), SN_OK);
	ck_assert_uint_eq(sess.media[0].crypto_count, SDP_MAX_CRYPTO);
	snprintf(text + off, sizeof(text) - off,
		 "a=crypto:99 AES_CM_128_HMAC_SHA1_80 inline:k\r\n");
	ck_assert_int_eq(parse_str(text), SN_ELIMIT);
}
END_TEST

START_TEST(test_sdp_parse_reports_small_arena_as_limit)
{
	struct sn_arena tiny;

	load("audio_video.sdp");
	sn_arena_init(&tiny, 64);
	ck_assert_int_eq(sdp_parse(&sess, &tiny, buf, buf_len), SN_ELIMIT);
	sn_arena_cleanup(&tiny);
	sn_arena_init(&tiny, 1u << 16);
	ck_assert_int_eq(sdp_parse(&sess, &tiny, buf, buf_len), SN_OK);
	sn_arena_cleanup(&tiny);
}
END_TEST

START_TEST(test_sdp_static_table_follows_rfc3551)
{
	static const struct {
		int pt;
		int rate;
		const char *name;
	} rows[] = {
		{0, 8000, "PCMU"},   {3, 8000, "GSM"},	  {4, 8000, "G723"},   {5, 8000, "DVI4"},
		{6, 16000, "DVI4"},  {7, 8000, "LPC"},	  {8, 8000, "PCMA"},   {9, 8000, "G722"},
		{10, 44100, "L16"},  {11, 44100, "L16"},  {12, 8000, "QCELP"}, {13, 8000, "CN"},
		{14, 90000, "MPA"},  {15, 8000, "G728"},  {16, 11025, "DVI4"}, {17, 22050, "DVI4"},
		{18, 8000, "G729"},  {25, 90000, "CelB"}, {26, 90000, "JPEG"}, {28, 90000, "nv"},
		{31, 90000, "H261"}, {32, 90000, "MPV"},  {33, 90000, "MP2T"}, {34, 90000, "H263"},
	};
	static const int unknown[] = {-1, 1, 2, 19, 20, 24, 27, 29, 30, 35, 96, 127, 128, 100000};

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		ck_assert_int_eq(sdp_static_clock_rate(rows[i].pt), rows[i].rate);
		ck_assert_str_eq(sdp_static_codec_name(rows[i].pt), rows[i].name);
		ck_assert_int_eq(sdp_media_clock_rate(NULL, rows[i].pt), rows[i].rate);
	}
	for (size_t i = 0; i < sizeof(unknown) / sizeof(unknown[0]); i++) {
		ck_assert_int_eq(sdp_static_clock_rate(unknown[i]), -1);
		ck_assert_ptr_null(sdp_static_codec_name(unknown[i]));
		ck_assert_uint_eq(sdp_media_codec_name(NULL, unknown[i]).len, 0);
	}
}
END_TEST

START_TEST(test_sdp_parse_media_direction_overrides_session_direction)
{
	ck_assert_int_eq(parse_str("v=0\r\na=sendonly\r\nm=audio 1 RTP/AVP 0\r\n"
				   "m=audio 3 RTP/AVP 0\r\na=recvonly\r\n"),
			 SN_OK);
	ck_assert_int_eq(sess.dir, SDP_DIR_SENDONLY);
	ck_assert_int_eq(sdp_media_direction(&sess, &sess.media[0]), SDP_DIR_SENDONLY);
	ck_assert(sdp_media_is_on_hold(&sess, &sess.media[0]));
	ck_assert_int_eq(sdp_media_direction(&sess, &sess.media[1]), SDP_DIR_RECVONLY);
	ck_assert(!sdp_media_is_on_hold(&sess, &sess.media[1]));
	ck_assert_str_eq(sdp_dir_str(SDP_DIR_RECVONLY), "recvonly");
	ck_assert_str_eq(sdp_dir_str(SDP_DIR_UNSET), "");
}
END_TEST

START_TEST(test_sdp_parse_tolerates_blank_lines_and_unknown_line_types)
{
	ck_assert_int_eq(parse_str("\r\nv=0\r\n\r\nz=whatever\r\nb=AS:64\r\n"
				   "m=audio 7 RTP/AVP 0\r\ni=info\r\nb=TIAS:64000\r\n\r\n"),
			 SN_OK);
	ck_assert_uint_eq(sess.media_count, 1);
	ck_assert_uint_eq(sess.media[0].port, 7);
	ck_assert(!sess.origin.present);
	ck_assert_ptr_null(sdp_media_conn(&sess, &sess.media[0]));
}
END_TEST

static Suite *sdp_suite(void)
{
	Suite *s = suite_create("sdp");
	TCase *tc;

	tc = tcase_create("offer_answer");
	tcase_add_checked_fixture(tc, arena_setup, arena_teardown);
	tcase_add_test(tc, test_sdp_parse_reads_audio_offer_with_pcmu_pcma_and_telephone_event);
	tcase_add_test(tc, test_sdp_parse_reads_ipv6_answer);
	tcase_add_test(tc, test_sdp_parse_reads_audio_and_video_media);
	tcase_add_test(tc, test_sdp_parse_reads_dynamic_codecs);
	suite_add_tcase(s, tc);

	tc = tcase_create("line_ends");
	tcase_add_checked_fixture(tc, arena_setup, arena_teardown);
	tcase_add_test(tc, test_sdp_parse_accepts_lf_only_line_ends);
	tcase_add_test(tc, test_sdp_parse_accepts_missing_final_line_end);
	tcase_add_test(tc, test_sdp_parse_tolerates_blank_lines_and_unknown_line_types);
	suite_add_tcase(s, tc);

	tc = tcase_create("attributes");
	tcase_add_checked_fixture(tc, arena_setup, arena_teardown);
	tcase_add_test(tc, test_sdp_parse_reads_rtcp_mux_and_rtcp_address);
	tcase_add_test(tc, test_sdp_parse_reads_srtp_crypto_lines);
	tcase_add_test(tc, test_sdp_parse_reads_t38_udptl_image_line);
	tcase_add_test(tc, test_sdp_parse_keeps_malformed_known_attributes_as_plain);
	suite_add_tcase(s, tc);

	tc = tcase_create("hold_and_direction");
	tcase_add_checked_fixture(tc, arena_setup, arena_teardown);
	tcase_add_test(tc, test_sdp_parse_detects_hold_by_sendonly);
	tcase_add_test(tc, test_sdp_parse_detects_hold_by_zero_address);
	tcase_add_test(tc, test_sdp_parse_media_direction_overrides_session_direction);
	tcase_add_test(tc, test_sdp_parse_marks_port_zero_media_disabled);
	tcase_add_test(tc, test_sdp_parse_media_conn_overrides_session_conn);
	suite_add_tcase(s, tc);

	tc = tcase_create("static_table");
	tcase_add_test(tc, test_sdp_static_table_follows_rfc3551);
	suite_add_tcase(s, tc);

	tc = tcase_create("robustness");
	tcase_add_checked_fixture(tc, arena_setup, arena_teardown);
	tcase_add_test(tc, test_sdp_parse_survives_every_prefix_of_every_fixture);
	tcase_add_test(tc, test_sdp_parse_rejects_non_sdp_input);
	suite_add_tcase(s, tc);

	tc = tcase_create("limits");
	tcase_add_checked_fixture(tc, arena_setup, arena_teardown);
	tcase_add_test(tc, test_sdp_parse_rejects_too_many_media_lines);
	tcase_add_test(tc, test_sdp_parse_rejects_too_many_formats_attributes_and_crypto);
	tcase_add_test(tc, test_sdp_parse_reports_small_arena_as_limit);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(sdp_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
