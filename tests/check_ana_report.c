/*
 * check_ana_report.c - the headless report over hand-built engine results: every JSON key of
 * REPORT.md and its additions, the exact CSV and text output of small cases, selections, and
 * the one-call detail with its ladder.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <cjson/cJSON.h>

#include "sipnab/ana_report.h"

#define T0 1767225600000000000LL /* 2026-01-01 00:00:00 UTC */
#define MS 1000000LL

/* ---- fixture: four calls, five streams ---- */

struct fixture {
	struct eng_result r;
	struct eng_msg msgs[32];
	struct eng_msg *order[32]; /* r.msgs */
	struct eng_call calls[4];
	struct eng_stream streams[5];
	struct rtcp_summary rtcp3; /* the RTCP summary of streams[3] */
	uint32_t call_msgs[4][8];
	uint32_t call_streams[4][2];
	const char *legs[4][2];
	struct eng_sdp_media media;
};

static struct fixture fx;

static struct sn_addr ip4(uint8_t a, uint8_t b, uint8_t c, uint8_t d)
{
	struct sn_addr x = {.family = 4, .bytes = {a, b, c, d}};
	return x;
}

static void add_msg(uint32_t call, int64_t t_ms, bool a_to_b, bool req, const char *method,
		    uint16_t status, const char *reason, bool sdp, bool retrans)
{
	struct eng_call *c = &fx.calls[call];
	struct eng_msg *m = &fx.msgs[fx.r.msg_count];

	m->ts_ns = c->start_ns + t_ms * MS;
	m->src = a_to_b ? ip4(10, 0, 0, 1) : ip4(10, 0, 0, 2);
	m->dst = a_to_b ? ip4(10, 0, 0, 2) : ip4(10, 0, 0, 1);
	m->sport = 5060;
	m->dport = 5060;
	m->is_request = req;
	m->method_name = method;
	m->status = status;
	m->reason = reason;
	m->call_id = c->call_id;
	m->media_count = sdp ? 1 : 0;
	m->media = sdp ? &fx.media : NULL;
	m->retransmission = retrans;
	m->call = (int32_t)call;
	fx.order[fx.r.msg_count] = m;
	fx.call_msgs[call][c->msg_count++] = fx.r.msg_count++;
	c->messages++;
	c->retransmissions += retrans;
}

static void set_stream(uint32_t i, int32_t call, bool a_to_b, int64_t first_ms, uint64_t pkts,
		       int64_t expected, double mos)
{
	struct eng_stream *s = &fx.streams[i];

	s->src = a_to_b ? ip4(10, 0, 0, 1) : ip4(10, 0, 0, 2);
	s->dst = a_to_b ? ip4(10, 0, 0, 2) : ip4(10, 0, 0, 1);
	s->sport = a_to_b ? 10000 : 20000;
	s->dport = a_to_b ? 20000 : 10000;
	s->ssrc = 0x4A94C870u + i;
	s->pt = 0;
	snprintf(s->codec, sizeof(s->codec), "PCMU");
	s->clock_rate = 8000;
	s->rtp.packets = pkts;
	s->rtp.bytes = pkts * 172;
	s->rtp.first_ns = T0 + first_ms * MS;
	s->rtp.last_ns = s->rtp.first_ns + (int64_t)(pkts - 1) * 20 * MS;
	s->rtp.start_seq = 1000;
	s->rtp.stop_seq = (uint16_t)(1000 + expected - 1);
	s->rtp.max_delta_ms = 20.5;
	s->rtp.mean_delta_ms = 20.0;
	s->rtp.max_jitter_ms = 1.25;
	s->rtp.mean_jitter_ms = 0.5;
	s->rtp.marker_packets = 1;
	s->mos = mos;
	s->call = call;
	s->announced = call >= 0;
}

static void init_call(uint32_t i, const char *id, const char *kind, int64_t start_ms)
{
	struct eng_call *c = &fx.calls[i];

	c->call_id = id;
	c->kind = kind;
	c->is_invite = strcmp(kind, "INVITE") == 0;
	c->from_uri = "sip:alice@a.example";
	c->to_uri = "sip:bob@b.example";
	c->from_tag = "f1";
	c->to_tag = "t1";
	c->hangup = "";
	c->start_ns = T0 + start_ms * MS;
	c->ring_ns = c->answer_ns = c->end_ns = c->attempt_ns = -1;
	c->dialogs = 1;
	c->hops = 1;
	c->legs = 1;
	fx.legs[i][0] = id;
	c->leg_ids = fx.legs[i];
	c->msgs = fx.call_msgs[i];
	c->streams = fx.call_streams[i];
}

static void fixture_setup(void)
{
	struct eng_call *c;

	memset(&fx, 0, sizeof(fx));
	fx.r.msgs = fx.order;
	fx.r.calls = fx.calls;
	fx.r.streams = fx.streams;
	fx.r.call_count = 4;
	fx.r.stream_count = 5;
	fx.r.dialogs = 4;
	fx.media.port = 10000;
	fx.media.rtp = true;

	/* 0: a completed call, 7 messages, 2 streams */
	init_call(0, "abc@host", "INVITE", 0);
	c = &fx.calls[0];
	add_msg(0, 0, true, true, "INVITE", 0, "", true, false);
	add_msg(0, 10, false, false, "INVITE", 100, "Trying", false, false);
	add_msg(0, 40, false, false, "INVITE", 180, "Ringing", false, false);
	add_msg(0, 1000, false, false, "INVITE", 200, "OK", true, false);
	add_msg(0, 1010, true, true, "ACK", 0, "", false, false);
	add_msg(0, 11000, true, true, "BYE", 0, "", false, false);
	add_msg(0, 11010, false, false, "BYE", 200, "OK", false, false);
	c->state = ENG_CALL_COMPLETED;
	c->ring_ns = T0 + 40 * MS;
	c->answer_ns = T0 + 1000 * MS;
	c->end_ns = T0 + 11000 * MS;
	c->final_code = 200;
	c->hangup = "caller";
	c->stream_count = 2;
	c->streams[0] = 0;
	c->streams[1] = 1;
	set_stream(0, 0, true, 1020, 500, 500, 4.40);
	set_stream(1, 0, false, 1030, 500, 500, 4.38);

	/* 1: rejected */
	init_call(1, "rej@host", "INVITE", 2000);
	c = &fx.calls[1];
	add_msg(1, 0, true, true, "INVITE", 0, "", true, false);
	add_msg(1, 100, false, false, "INVITE", 403, "Forbidden", false, false);
	add_msg(1, 110, true, true, "ACK", 0, "", false, false);
	c->state = ENG_CALL_REJECTED;
	c->final_code = 403;
	c->to_tag = "";

	/* 2: answered, bad MOS and loss on one stream, one INVITE retransmission */
	init_call(2, "bad,\"mos\"@host", "INVITE", 3000);
	c = &fx.calls[2];
	add_msg(2, 0, true, true, "INVITE", 0, "", true, false);
	add_msg(2, 500, true, true, "INVITE", 0, "", true, true);
	add_msg(2, 4500, false, false, "INVITE", 200, "OK", true, false);
	add_msg(2, 4510, true, true, "ACK", 0, "", false, false);
	c->state = ENG_CALL_IN_CALL;
	c->answer_ns = c->start_ns + 4500 * MS;
	c->final_code = 200;
	c->stream_count = 2;
	c->streams[0] = 2;
	c->streams[1] = 3;
	set_stream(2, 2, true, 7520, 97, 100, 2.95);
	set_stream(3, 2, false, 7530, 100, 100, 4.10);
	fx.streams[2].rtp.max_jitter_ms = 7.5;
	snprintf(fx.streams[2].rtp.dtmf, sizeof(fx.streams[2].rtp.dtmf), "12#");
	fx.streams[3].has_rtcp = true;
	fx.streams[3].rtcp = &fx.rtcp3;
	fx.rtcp3.reports = 2;
	fx.rtcp3.loss_pct = 0.390625;
	fx.rtcp3.has_jitter = true;
	fx.rtcp3.jitter_ms = 0.875;
	snprintf(fx.rtcp3.cname, sizeof(fx.rtcp3.cname), "bob@192.0.2.7");
	fx.rtcp3.sr_count = 3;
	fx.rtcp3.has_xr = true;
	fx.rtcp3.xr.mos_lq = 41;     /* 4.1 */
	fx.rtcp3.xr.mos_cq = 127;    /* unavailable */
	fx.rtcp3.xr.r_factor = 88;

	/* 3: REGISTER with one authentication round */
	init_call(3, "reg@host", "REGISTER", 20000);
	c = &fx.calls[3];
	add_msg(3, 0, true, true, "REGISTER", 0, "", false, false);
	add_msg(3, 5, false, false, "REGISTER", 401, "Unauthorized", false, false);
	add_msg(3, 10, true, true, "REGISTER", 0, "", false, false);
	add_msg(3, 15, false, false, "REGISTER", 200, "OK", false, false);
	c->state = ENG_CALL_COMPLETED;
	c->answer_ns = c->start_ns + 15 * MS;
	c->final_code = 200;
	c->auth_retries = 1;
	c->to_tag = "r1";

	/* 4: unannounced stream */
	set_stream(4, -1, true, 30000, 10, 10, 0);
	fx.streams[4].codec[0] = '\0';
	fx.streams[4].pt = 96;
	fx.streams[4].clock_rate = 0;

	fx.r.by_state[ENG_CALL_COMPLETED] = 2;
	fx.r.by_state[ENG_CALL_REJECTED] = 1;
	fx.r.by_state[ENG_CALL_IN_CALL] = 1;

	fx.r.stats.packets = 1218;
	fx.r.stats.bytes = 200000;
	fx.r.stats.sip_messages = 18;
	fx.r.stats.rtp_packets = 1200;
	fx.r.stats.first_ts_ns = T0;
	fx.r.stats.last_ts_ns = T0 + 30180 * MS;
	fx.r.stats.requests = 11;
	fx.r.stats.responses = 7;
	fx.r.stats.method_count = 2;
	snprintf(fx.r.stats.methods[0].name, ENG_METHOD_NAME_LEN, "INVITE");
	fx.r.stats.methods[0].count = 4;
	snprintf(fx.r.stats.methods[1].name, ENG_METHOD_NAME_LEN, "ACK");
	fx.r.stats.methods[1].count = 3;
	fx.r.stats.responses_by_code[200] = 3;
	fx.r.stats.responses_by_code[403] = 1;
}

static const char *const files[] = {"x.pcap"};
static const char *const formats[] = {"pcap"};

static struct ana_report_input input(const struct ana_filter *f)
{
	struct ana_report_input in = {
		.files = files,
		.formats = formats,
		.file_count = 1,
		.result = &fx.r,
		.filter = f,
	};
	return in;
}

/* Run the report into memory; caller frees. */
static char *report(enum ana_report_format fmt, const struct ana_filter *f)
{
	struct ana_report_input in = input(f);
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);

	ck_assert_ptr_nonnull(out);
	ck_assert_int_eq(ana_report_write(out, fmt, &in), SN_OK);
	fclose(out);
	return buf;
}

static cJSON *report_json(const struct ana_filter *f)
{
	char *txt = report(ANA_REPORT_JSON, f);
	cJSON *root = cJSON_Parse(txt);

	ck_assert_msg(root != NULL, "JSON does not parse:\n%s", txt);
	free(txt);
	return root;
}

static cJSON *get(const cJSON *o, const char *key)
{
	cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	ck_assert_msg(v != NULL, "key %s missing", key);
	return v;
}

static void expect_num(const cJSON *o, const char *key, double want)
{
	cJSON *v = get(o, key);

	ck_assert_msg(cJSON_IsNumber(v), "%s is not a number", key);
	ck_assert_msg(fabs(v->valuedouble - want) < 1e-9, "%s = %.9f, want %.9f", key,
		      v->valuedouble, want);
}

static void expect_str(const cJSON *o, const char *key, const char *want)
{
	cJSON *v = get(o, key);

	ck_assert_msg(cJSON_IsString(v), "%s is not a string", key);
	ck_assert_str_eq(v->valuestring, want);
}

static void expect_null(const cJSON *o, const char *key)
{
	ck_assert_msg(cJSON_IsNull(get(o, key)), "%s is not null", key);
}

/* The raw text of the report must contain @p needle (formatting checks). */
static void expect_text(const char *txt, const char *needle)
{
	ck_assert_msg(strstr(txt, needle) != NULL, "'%s' not in:\n%s", needle, txt);
}

/* ---- JSON ---- */

START_TEST(test_ana_report_json_capture_and_summary)
{
	cJSON *root = report_json(NULL);
	cJSON *cap = get(root, "capture");
	cJSON *sum = get(root, "summary");
	cJSON *st = get(sum, "by_state");

	expect_str(get(root, "sipnab"), "version", PACKAGE_VERSION);
	ck_assert_int_eq(cJSON_GetArraySize(get(cap, "files")), 1);
	ck_assert_str_eq(cJSON_GetArrayItem(get(cap, "files"), 0)->valuestring, "x.pcap");
	expect_num(cap, "packets", 1218);
	expect_num(cap, "bytes", 200000);
	expect_num(cap, "sip_messages", 18);
	expect_num(cap, "rtp_packets", 1200);
	expect_num(cap, "rtcp_packets", 0);
	expect_num(cap, "other_packets", 0);
	expect_num(cap, "first_ts", 1767225600.0);
	expect_num(cap, "last_ts", 1767225630.18);
	expect_num(cap, "decode_errors", 0);
	expect_num(cap, "truncated_packets", 0);
	ck_assert(cJSON_IsArray(get(cap, "input_errors")));
	expect_num(sum, "calls", 4);
	expect_num(sum, "dialogs", 4);
	expect_num(sum, "streams", 5);
	ck_assert_int_eq(cJSON_GetArraySize(st), 3);
	/* enum order, only non-zero */
	ck_assert_str_eq(cJSON_GetArrayItem(st, 0)->string, "IN_CALL");
	ck_assert_str_eq(cJSON_GetArrayItem(st, 1)->string, "COMPLETED");
	ck_assert_str_eq(cJSON_GetArrayItem(st, 2)->string, "REJECTED");
	expect_num(st, "COMPLETED", 2);
	ck_assert_str_eq(cJSON_GetArrayItem(get(sum, "methods"), 0)->string, "INVITE");
	expect_num(get(sum, "methods"), "ACK", 3);
	expect_num(get(sum, "responses"), "403", 1);
	ck_assert_ptr_null(cJSON_GetObjectItem(sum, "selection"));
	cJSON_Delete(root);
}
END_TEST

START_TEST(test_ana_report_json_call_has_every_key)
{
	cJSON *root = report_json(NULL);
	cJSON *calls = get(root, "calls");
	cJSON *c = cJSON_GetArrayItem(calls, 0);
	cJSON *a;

	ck_assert_int_eq(cJSON_GetArraySize(calls), 4);
	expect_str(c, "call_id", "abc@host");
	expect_str(c, "kind", "INVITE");
	expect_str(c, "from", "sip:alice@a.example");
	expect_str(c, "to", "sip:bob@b.example");
	expect_str(c, "from_tag", "f1");
	expect_str(c, "to_tag", "t1");
	expect_str(c, "state", "COMPLETED");
	expect_str(c, "hangup", "caller");
	expect_num(c, "start_ts", 1767225600.0);
	expect_num(c, "ring_ts", 1767225600.04);
	expect_num(c, "answer_ts", 1767225601.0);
	expect_num(c, "end_ts", 1767225611.0);
	expect_num(c, "setup_ms", 40.0);
	expect_num(c, "duration_s", 10.0);
	expect_num(c, "messages", 7);
	expect_num(c, "retransmissions", 0);
	expect_num(c, "final_code", 200);
	expect_num(c, "hops", 1);
	expect_num(c, "dialogs", 1);
	expect_num(c, "auth_retries", 0);
	a = get(c, "legs");
	ck_assert_int_eq(cJSON_GetArraySize(a), 1);
	ck_assert_str_eq(cJSON_GetArrayItem(a, 0)->valuestring, "abc@host");
	a = get(c, "codecs");
	ck_assert_int_eq(cJSON_GetArraySize(a), 1);
	ck_assert_str_eq(cJSON_GetArrayItem(a, 0)->valuestring, "PCMU");
	a = get(c, "streams");
	ck_assert_int_eq(cJSON_GetArraySize(a), 2);
	ck_assert_int_eq(cJSON_GetArrayItem(a, 1)->valueint, 1);
	expect_num(c, "worst_mos", 4.38);
	expect_num(c, "worst_loss_pct", 0.0);
	expect_num(c, "worst_jitter_ms", 1.25);
	ck_assert_int_eq(cJSON_GetArraySize(get(c, "problems")), 0);

	/* rejected: nulls where nothing happened */
	c = cJSON_GetArrayItem(calls, 1);
	expect_str(c, "state", "REJECTED");
	expect_null(c, "hangup");
	expect_null(c, "ring_ts");
	expect_null(c, "answer_ts");
	expect_null(c, "end_ts");
	expect_null(c, "setup_ms");
	expect_null(c, "duration_s");
	expect_num(c, "final_code", 403);
	expect_null(c, "worst_mos");
	expect_null(c, "worst_loss_pct");
	expect_null(c, "worst_jitter_ms");
	ck_assert_int_eq(cJSON_GetArraySize(get(c, "codecs")), 0);
	ck_assert_str_eq(cJSON_GetArrayItem(get(c, "problems"), 0)->valuestring, "FAILED");

	/* bad MOS: worst values over both streams, setup from the 200 */
	c = cJSON_GetArrayItem(calls, 2);
	expect_num(c, "setup_ms", 4500.0);
	expect_null(c, "end_ts");
	expect_null(c, "duration_s");
	expect_num(c, "retransmissions", 1);
	expect_num(c, "worst_mos", 2.95);
	expect_num(c, "worst_loss_pct", 3.0);
	expect_num(c, "worst_jitter_ms", 7.5);

	/* REGISTER */
	c = cJSON_GetArrayItem(calls, 3);
	expect_str(c, "kind", "REGISTER");
	expect_num(c, "auth_retries", 1);
	expect_num(c, "setup_ms", 15.0);
	cJSON_Delete(root);
}
END_TEST

/* Strings are escaped exactly as cJSON prints them, wherever the byte to escape falls in the
 * eight-byte words the writer scans (and bytes that need no escape are left alone). */
START_TEST(test_ana_report_json_escapes_like_cjson_at_every_position)
{
	static const char special[] = {'"', '\\', '\n', '\r', '\t', '\b', '\f', 1, 0x1f,
				       ' ', '/', 0x7f, (char)0x80, (char)0xff};

	for (size_t k = 0; k < sizeof(special); k++) {
		for (size_t at = 0; at < 20; at++) {
			char val[40];
			cJSON *item;
			char *want, *txt;

			memset(val, 'a', sizeof(val));
			val[at] = special[k];
			val[at + 3] = special[k]; /* a second one in the same or the next word */
			val[25] = '\0';
			fixture_setup();
			fx.calls[0].from_uri = val;
			item = cJSON_CreateString(val);
			want = cJSON_PrintUnformatted(item);
			txt = report(ANA_REPORT_JSON, NULL);
			ck_assert_msg(strstr(txt, want) != NULL, "byte 0x%02x at %zu: %s not in the report",
				      (unsigned char)special[k], at, want);
			free(txt);
			free(want);
			cJSON_Delete(item);
		}
	}
}
END_TEST

START_TEST(test_ana_report_json_stream_has_every_key)
{
	cJSON *root = report_json(NULL);
	cJSON *streams = get(root, "streams");
	cJSON *s = cJSON_GetArrayItem(streams, 2);
	cJSON *rtcp;

	ck_assert_int_eq(cJSON_GetArraySize(streams), 5);
	expect_str(s, "src", "10.0.0.1:10000");
	expect_str(s, "dst", "10.0.0.2:20000");
	expect_str(s, "ssrc", "0x4A94C872");
	expect_num(s, "payload_type", 0);
	expect_str(s, "codec", "PCMU");
	expect_num(s, "clock_rate", 8000);
	expect_num(s, "first_ts", 1767225607.52);
	expect_num(s, "last_ts", 1767225607.52 + 96 * 0.02);
	expect_num(s, "packets", 97);
	expect_num(s, "bytes", 97 * 172);
	expect_num(s, "expected", 100);
	expect_num(s, "lost", 3);
	expect_num(s, "loss_pct", 3.0);
	expect_num(s, "duplicates", 0);
	expect_num(s, "out_of_order", 0);
	expect_num(s, "seq_errors", 0);
	expect_num(s, "max_delta_ms", 20.5);
	expect_num(s, "mean_delta_ms", 20.0);
	expect_num(s, "jitter_max_ms", 7.5);
	expect_num(s, "jitter_mean_ms", 0.5);
	expect_num(s, "max_burst_loss", 0);
	expect_num(s, "marker_packets", 1);
	expect_str(s, "dtmf", "12#");
	expect_num(s, "mos", 2.95);
	expect_str(s, "call_id", "bad,\"mos\"@host");
	rtcp = get(s, "rtcp");
	expect_null(rtcp, "reported_loss_pct");
	expect_null(rtcp, "reported_jitter_ms");
	expect_null(rtcp, "rtt_ms");
	expect_null(rtcp, "cname");
	expect_null(rtcp, "xr_mos_lq");

	s = cJSON_GetArrayItem(streams, 3);
	rtcp = get(s, "rtcp");
	expect_num(rtcp, "reported_loss_pct", 0.391);
	expect_num(rtcp, "reported_jitter_ms", 0.875);
	expect_null(rtcp, "rtt_ms");
	expect_str(rtcp, "cname", "bob@192.0.2.7");
	expect_num(rtcp, "sender_reports", 3);
	expect_num(rtcp, "xr_mos_lq", 4.1);
	expect_null(rtcp, "xr_mos_cq");
	expect_num(rtcp, "xr_r_factor", 88);

	s = cJSON_GetArrayItem(streams, 4);
	expect_null(s, "call_id");
	expect_null(s, "mos");
	expect_str(s, "codec", "");
	expect_num(s, "payload_type", 96);
	cJSON_Delete(root);
}
END_TEST

START_TEST(test_ana_report_json_numbers_are_fixed_and_deterministic)
{
	char *a = report(ANA_REPORT_JSON, NULL);
	char *b = report(ANA_REPORT_JSON, NULL);

	ck_assert_str_eq(a, b);
	expect_text(a, "\"first_ts\":\t1767225600.000000");
	expect_text(a, "\"setup_ms\":\t40.000");
	expect_text(a, "\"duration_s\":\t10.000");
	expect_text(a, "\"worst_mos\":\t4.38");
	expect_text(a, "\"loss_pct\":\t3.000");
	expect_text(a, "\"mos\":\t4.40,");
	expect_text(a, "\"ssrc\":\t\"0x4A94C870\"");
	free(a);
	free(b);
}
END_TEST

START_TEST(test_ana_report_json_selection_lists_selected_calls)
{
	struct ana_filter f;
	cJSON *root, *sel, *calls;

	ana_filter_init(&f);
	f.problems = true;
	root = report_json(&f);
	sel = get(get(root, "summary"), "selection");
	ck_assert(cJSON_IsTrue(get(sel, "problems")));
	ck_assert(cJSON_IsFalse(get(sel, "one_way")));
	expect_num(sel, "selected_calls", 2);
	calls = get(root, "calls");
	ck_assert_int_eq(cJSON_GetArraySize(calls), 2);
	expect_str(cJSON_GetArrayItem(calls, 0), "call_id", "rej@host");
	expect_str(cJSON_GetArrayItem(calls, 1), "call_id", "bad,\"mos\"@host");
	/* streams stay complete; summary counts all calls */
	ck_assert_int_eq(cJSON_GetArraySize(get(root, "streams")), 5);
	expect_num(get(root, "summary"), "calls", 4);
	cJSON_Delete(root);
}
END_TEST

/* ---- CSV ---- */

START_TEST(test_ana_report_csv_snapshot)
{
	char *txt = report(ANA_REPORT_CSV, NULL);

	ck_assert_str_eq(
		txt,
		"call_id,kind,from,to,state,final_code,start,answer,end,setup_ms,duration_s,"
		"messages,retransmissions,hops,codecs,streams,worst_mos,worst_loss_pct,"
		"worst_jitter_ms,hangup\n"
		"abc@host,INVITE,sip:alice@a.example,sip:bob@b.example,COMPLETED,200,"
		"1767225600.000000,1767225601.000000,1767225611.000000,40.000,10.000,7,0,1,PCMU,2,"
		"4.38,0.000,1.250,caller\n"
		"rej@host,INVITE,sip:alice@a.example,sip:bob@b.example,REJECTED,403,"
		"1767225602.000000,,,,,3,0,1,,0,,,,\n"
		"\"bad,\"\"mos\"\"@host\",INVITE,sip:alice@a.example,sip:bob@b.example,IN_CALL,200,"
		"1767225603.000000,1767225607.500000,,4500.000,,4,1,1,PCMU,2,2.95,3.000,7.500,\n"
		"reg@host,REGISTER,sip:alice@a.example,sip:bob@b.example,COMPLETED,200,"
		"1767225620.000000,1767225620.015000,,15.000,,4,0,1,,0,,,,\n");
	free(txt);
}
END_TEST

START_TEST(test_ana_report_csv_honours_selection)
{
	struct ana_filter f;
	char *txt;

	ana_filter_init(&f);
	f.slow_setup = true;
	txt = report(ANA_REPORT_CSV, &f);
	ck_assert_ptr_null(strstr(txt, "abc@host"));
	expect_text(txt, "\"bad,\"\"mos\"\"@host\",INVITE");
	ck_assert_ptr_null(strstr(txt, "reg@host"));
	free(txt);
}
END_TEST

/* ---- text ---- */

START_TEST(test_ana_report_text_tables)
{
	char *txt = report(ANA_REPORT_TEXT, NULL);

	expect_text(txt, "Capture\n  files                x.pcap (pcap)\n");
	expect_text(txt, "\nSummary\n  calls                4\n  dialogs              4\n"
			 "  RTP streams          5\n  IN_CALL              1\n"
			 "  COMPLETED            2\n  REJECTED             1\n");
	expect_text(
		txt,
		"\nCalls\n"
		"  Start (UTC)   Kind      From                 To                 "
		"State      Code  Setup ms   Dur s  Msgs  Retr  Streams   MOS  Call-ID\n"
		"  00:00:00.000  INVITE    sip:alice@a.example  sip:bob@b.example  "
		"COMPLETED   200    40.000  10.000     7     0        2  4.38  abc@host\n"
		"  00:00:02.000  INVITE    sip:alice@a.example  sip:bob@b.example  "
		"REJECTED    403         -       -     3     0        0     -  rej@host\n"
		"  00:00:03.000  INVITE    sip:alice@a.example  sip:bob@b.example  "
		"IN_CALL     200  4500.000       -     4     1        2  2.95  bad,\"mos\"@host\n"
		"  00:00:20.000  REGISTER  sip:alice@a.example  sip:bob@b.example  "
		"COMPLETED   200    15.000       -     4     0        0     -  reg@host\n");
	expect_text(txt, "\nStreams\n"
			 "  Src             Dst             SSRC        Codec  Pkts        Lost  "
			 "Max delta  Max jitter  Mean jitter   MOS  DTMF  Call-ID\n"
			 "  10.0.0.1:10000  10.0.0.2:20000  0x4A94C870  PCMU    500  0 (0.000%)  "
			 "   20.500       1.250        0.500  4.40  -     abc@host\n");
	expect_text(txt, "  10.0.0.1:10000  10.0.0.2:20000  0x4A94C872  PCMU     97  3 (3.000%)  "
			 "   20.500       7.500        0.500  2.95  12#   bad,\"mos\"@host\n");
	expect_text(txt, "  10.0.0.1:10000  10.0.0.2:20000  0x4A94C874  PT96     10  0 (0.000%)  "
			 "   20.500       1.250        0.500     -  -     -\n");
	expect_text(
		txt,
		"\nProblems\n"
		"  Subject                                             Problem            Value\n"
		"  call rej@host                                       failed (REJECTED)  "
		"final code 403\n"
		"  call bad,\"mos\"@host                                 retransmissions    1\n"
		"  stream 10.0.0.1:10000 -> 10.0.0.2:20000 0x4A94C872  low MOS            2.95\n"
		"  stream 10.0.0.1:10000 -> 10.0.0.2:20000 0x4A94C872  packet loss        "
		"3.000 % (3 lost)\n");
	free(txt);
}
END_TEST

START_TEST(test_ana_report_text_cuts_long_uris)
{
	char *txt;

	fx.calls[0].from_uri = "sip:a-very-long-user-name-for-testing@example.com";
	txt = report(ANA_REPORT_TEXT, NULL);
	/* 32 columns: 29 characters and "..." */
	expect_text(txt, "  sip:a-very-long-user-name-for...  sip:bob@b.example  ");
	ck_assert_ptr_null(strstr(txt, "example.com"));
	free(txt);
}
END_TEST

START_TEST(test_ana_report_text_utf8_and_control_bytes)
{
	char *txt;

	/* 44 characters in 48 bytes: cut by columns, not bytes, to 29 characters and "..." */
	fx.calls[0].from_uri = "sip:j\u00fcrgen.m\u00fcller-l\u00fcdenscheid@stra\u00dfe.example";
	/* a control byte reaches the terminal as '?' */
	fx.calls[0].kind = "INV\033TE";
	/* 12 characters in 13 bytes: padded by columns to the column's 17 */
	fx.calls[1].to_uri = "sip:zo\u00eb@b.ex";
	txt = report(ANA_REPORT_TEXT, NULL);
	expect_text(txt,
		    "  00:00:00.000  INV?TE    sip:j\u00fcrgen.m\u00fcller-l\u00fcdenscheid...  "
		    "sip:bob@b.example  COMPLETED");
	expect_text(txt, "  sip:alice@a.example               sip:zo\u00eb@b.ex       REJECTED ");
	ck_assert_ptr_null(strchr(txt, '\033'));
	free(txt);
}
END_TEST

START_TEST(test_ana_report_text_no_calls)
{
	char *txt;

	fx.r.call_count = 0;
	fx.r.stream_count = 0;
	txt = report(ANA_REPORT_TEXT, NULL);
	expect_text(txt, "\nCalls\n  none\n\nStreams\n  none\n\nProblems\n  none\n");
	free(txt);
}
END_TEST

/* ---- one call ---- */

static char *call_report(const char *id, enum sn_status want)
{
	struct ana_report_input in = input(NULL);
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);

	ck_assert_int_eq(ana_report_call(out, &in, id), want);
	fclose(out);
	return buf;
}

START_TEST(test_ana_report_call_ladder)
{
	char *txt = call_report("abc@host", SN_OK);

	expect_text(txt, "Call\n  Call-ID              abc@host\n");
	expect_text(txt, "  setup ms             40.000\n");
	expect_text(txt,
		    "  start                2026-01-01 00:00:00.000 UTC (1767225600.000000)\n");
	expect_text(txt, "\nMessages (time in ms since the first message)\n"
			 "                10.0.0.1:5060     10.0.0.2:5060\n"
			 "      0.000           |--INVITE (SDP)-->|\n"
			 "     10.000           |<--100 Trying----|\n"
			 "     40.000           |<--180 Ringing---|\n"
			 "   1000.000           |<-200 OK (SDP)---|\n"
			 "   1010.000           |-------ACK------>|\n"
			 "  11000.000           |-------BYE------>|\n"
			 "  11010.000           |<----200 OK------|\n\nStreams\n");
	expect_text(txt, "  0x4A94C871");
	expect_text(txt, "\nProblems\n  none\n");
	free(txt);
}
END_TEST

START_TEST(test_ana_report_call_marks_retransmissions_and_finds_legs)
{
	char *txt;

	fx.legs[2][1] = "other-leg@b2bua";
	fx.calls[2].legs = 2;
	ck_assert_int_eq(ana_report_find_call(&fx.r, "other-leg@b2bua"), 2);
	txt = call_report("other-leg@b2bua", SN_OK);
	expect_text(txt, "  legs                 bad,\"mos\"@host other-leg@b2bua\n");
	expect_text(txt, "     0.000           |--INVITE (SDP)-->|\n"
			 "   500.000           |--INVITE (SDP)-->|  retransmission\n");
	expect_text(txt, "  problems             LOW_MOS LOSS RETRANSMISSIONS\n");
	free(txt);
}
END_TEST

START_TEST(test_ana_report_call_unknown_is_not_found)
{
	char *txt = call_report("nope@nowhere", SN_ENOTFOUND);

	ck_assert_str_eq(txt, "");
	ck_assert_int_eq(ana_report_find_call(&fx.r, "nope@nowhere"), -1);
	free(txt);
}
END_TEST

START_TEST(test_ana_report_format_names)
{
	enum ana_report_format f;

	ck_assert_int_eq(ana_report_format_parse(NULL, &f), SN_OK);
	ck_assert_int_eq(f, ANA_REPORT_TEXT);
	ck_assert_int_eq(ana_report_format_parse("json", &f), SN_OK);
	ck_assert_int_eq(f, ANA_REPORT_JSON);
	ck_assert_int_eq(ana_report_format_parse("csv", &f), SN_OK);
	ck_assert_int_eq(f, ANA_REPORT_CSV);
	ck_assert_int_eq(ana_report_format_parse("xml", &f), SN_ENOTFOUND);
}
END_TEST

static Suite *ana_report_suite(void)
{
	Suite *s = suite_create("ana_report");
	TCase *tc;

	tc = tcase_create("json");
	tcase_add_checked_fixture(tc, fixture_setup, NULL);
	tcase_add_test(tc, test_ana_report_json_capture_and_summary);
	tcase_add_test(tc, test_ana_report_json_call_has_every_key);
	tcase_add_test(tc, test_ana_report_json_escapes_like_cjson_at_every_position);
	tcase_add_test(tc, test_ana_report_json_stream_has_every_key);
	tcase_add_test(tc, test_ana_report_json_numbers_are_fixed_and_deterministic);
	tcase_add_test(tc, test_ana_report_json_selection_lists_selected_calls);
	suite_add_tcase(s, tc);

	tc = tcase_create("csv");
	tcase_add_checked_fixture(tc, fixture_setup, NULL);
	tcase_add_test(tc, test_ana_report_csv_snapshot);
	tcase_add_test(tc, test_ana_report_csv_honours_selection);
	suite_add_tcase(s, tc);

	tc = tcase_create("text");
	tcase_add_checked_fixture(tc, fixture_setup, NULL);
	tcase_add_test(tc, test_ana_report_text_tables);
	tcase_add_test(tc, test_ana_report_text_cuts_long_uris);
	tcase_add_test(tc, test_ana_report_text_utf8_and_control_bytes);
	tcase_add_test(tc, test_ana_report_text_no_calls);
	tcase_add_test(tc, test_ana_report_format_names);
	suite_add_tcase(s, tc);

	tc = tcase_create("call");
	tcase_add_checked_fixture(tc, fixture_setup, NULL);
	tcase_add_test(tc, test_ana_report_call_ladder);
	tcase_add_test(tc, test_ana_report_call_marks_retransmissions_and_finds_legs);
	tcase_add_test(tc, test_ana_report_call_unknown_is_not_found);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(ana_report_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
