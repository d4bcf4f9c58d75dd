/*
 * ana_report.c - the headless report: the "capture" and SIP count parts of REPORT.md, as aligned
 * text or as one JSON document built with cJSON.
 *
 * Determinism: methods are listed by count (descending), then name; response codes by code;
 * timestamps are printed with exactly six decimals (microseconds) through cJSON raw numbers so
 * that the same input gives byte-identical output however it was processed.
 * Ownership: reads the caller's structures; everything built here is freed before returning.
 */
#include "config.h"

#include "sipnab/ana_report.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>

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

static void ts_format(int64_t ts_ns, char *buf, size_t len)
{
	int64_t sec = ts_ns / 1000000000;
	int64_t usec = (ts_ns % 1000000000) / 1000;

	if (usec < 0) {
		sec -= 1;
		usec += 1000000;
	}
	snprintf(buf, len, "%" PRId64 ".%06" PRId64, sec, usec);
}

static void add_raw_ts(cJSON *obj, const char *key, const struct eng_stats *s, int64_t ts_ns)
{
	char buf[48];

	if (s->packets == 0) {
		cJSON_AddNullToObject(obj, key);
		return;
	}
	ts_format(ts_ns, buf, sizeof(buf));
	cJSON_AddRawToObject(obj, key, buf);
}

static void add_u64(cJSON *obj, const char *key, uint64_t v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%" PRIu64, v);
	cJSON_AddRawToObject(obj, key, buf);
}

static cJSON *json_build(const struct ana_report_input *in)
{
	const struct eng_stats *s = in->stats;
	cJSON *root = cJSON_CreateObject();
	cJSON *ver = cJSON_AddObjectToObject(root, "sipnab");
	cJSON *cap = cJSON_AddObjectToObject(root, "capture");
	cJSON *files = cJSON_AddArrayToObject(cap, "files");
	cJSON *sum, *methods, *responses, *tr, *errs;
	struct eng_method_count *m;

	cJSON_AddStringToObject(ver, "version", PACKAGE_VERSION);
	for (size_t i = 0; i < in->file_count; i++) {
		cJSON_AddItemToArray(files, cJSON_CreateString(in->files[i]));
	}
	add_u64(cap, "packets", s->packets);
	add_u64(cap, "bytes", s->bytes);
	add_u64(cap, "sip_messages", s->sip_messages);
	add_u64(cap, "rtp_packets", s->rtp_packets);
	add_u64(cap, "rtcp_packets", s->rtcp_packets);
	add_u64(cap, "other_packets", s->other_packets);
	add_raw_ts(cap, "first_ts", s, s->first_ts_ns);
	add_raw_ts(cap, "last_ts", s, s->last_ts_ns);
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
	errs = cJSON_AddArrayToObject(cap, "input_errors");
	for (size_t i = 0; i < in->error_count; i++) {
		cJSON *e = cJSON_CreateObject();
		cJSON_AddStringToObject(e, "file", in->errors[i].file);
		cJSON_AddStringToObject(e, "error", in->errors[i].truncated ? "truncated" : "corrupt");
		add_u64(e, "offset", in->errors[i].offset);
		cJSON_AddStringToObject(e, "message", in->errors[i].message);
		cJSON_AddItemToArray(errs, e);
	}

	sum = cJSON_AddObjectToObject(root, "summary");
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
			char key[8];
			snprintf(key, sizeof(key), "%d", code);
			add_u64(responses, key, s->responses_by_code[code]);
		}
	}
	return root;
}

static void text_write(FILE *out, const struct ana_report_input *in)
{
	const struct eng_stats *s = in->stats;
	struct eng_method_count *m;
	char a[48], b[48];

	fprintf(out, "sipnab %s report\n\nCapture\n", PACKAGE_VERSION);
	for (size_t i = 0; i < in->file_count; i++) {
		fprintf(out, "  %-20s %s (%s)\n", i ? "" : "files", in->files[i],
			in->formats[i] ? in->formats[i] : "?");
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
	fprintf(out, "  %-20s %" PRIu64 " (UDP %" PRIu64 ", TCP %" PRIu64 ", WebSocket %" PRIu64
		", SCTP %" PRIu64 ")\n",
		"SIP messages", s->sip_messages, s->sip_udp, s->sip_tcp, s->sip_ws, s->sip_sctp);
	fprintf(out, "  %-20s %" PRIu64 "\n", "RTP packets", s->rtp_packets);
	fprintf(out, "  %-20s %" PRIu64 "\n", "RTCP packets", s->rtcp_packets);
	fprintf(out, "  %-20s %" PRIu64 "\n", "other packets", s->other_packets);
	fprintf(out, "  %-20s %" PRIu64 "\n", "decode errors", s->decode_errors);
	fprintf(out, "  %-20s %" PRIu64 "\n", "malformed SIP", s->sip_errors);
	fprintf(out, "  %-20s %" PRIu64 "\n", "truncated packets", s->truncated_packets);
	fprintf(out, "  %-20s %" PRIu64 " fragments, %" PRIu64 " datagrams rebuilt, %" PRIu64
		" timed out\n",
		"IP reassembly", s->ip_fragments, s->ip_reassembled, s->frag_timeouts);
	fprintf(out, "  %-20s %" PRIu64 " retransmissions, %" PRIu64 " out of order, %" PRIu64
		" gaps\n",
		"TCP", s->tcp_retransmissions, s->tcp_out_of_order, s->tcp_gaps);

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

enum sn_status ana_report_write(FILE *out, enum ana_report_format fmt,
				const struct ana_report_input *in)
{
	if (fmt == ANA_REPORT_JSON) {
		cJSON *root = json_build(in);
		char *txt = cJSON_Print(root);
		fputs(txt, out);
		fputc('\n', out);
		free(txt);
		cJSON_Delete(root);
	} else {
		text_write(out, in);
	}
	if (fflush(out) != 0 || ferror(out)) {
		return SN_ESYS;
	}
	return SN_OK;
}
