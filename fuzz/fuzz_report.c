/*
 * fuzz_report.c - libFuzzer target for the whole headless path: a capture file (any bytes) is
 * analysed on one thread and on two to four, and each result is written as the JSON, text and
 * CSV reports and as the --call-report of its first call. The reports of the two runs must be
 * byte-identical (the invariant --cores N keeps), the JSON must parse, and the text reports
 * must hold no control byte but newlines (the cells are sanitised against hostile traffic).
 * The first input byte chooses the thread count, the selections, whether the RTP heuristic
 * runs and whether the build groups the messages in parts and blocks of a few (the sizes
 * large captures get, which a fuzzer's inputs never reach); the rest is the file.
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "sipnab/ana_filter.h"
#include "sipnab/ana_report.h"
#include "sipnab/cap_reader.h"
#include "sipnab/eng_run.h"

#include "fuzz_file.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct out {
	char *fmt[3]; /* JSON, text, CSV */
	size_t len[3];
	char *call; /* --call-report of the first call, NULL when there is none */
	size_t call_len;
};

struct errors {
	struct ana_input_error list[4];
	char msg[4][128];
	size_t count;
};

static const char *const files[] = {"fuzz.pcap"};

static void on_error(void *user, uint32_t file_index, enum sn_status st, const struct sn_diag *diag)
{
	struct errors *e = user;

	(void)file_index;
	if (e->count < 4) {
		snprintf(e->msg[e->count], sizeof(e->msg[0]), "%s", diag->msg);
		e->list[e->count] = (struct ana_input_error){files[0], e->msg[e->count],
							     diag->offset, st == SN_ETRUNC};
		e->count++;
	}
}

/* Render report @p which into memory: through open_memstream(), or (@p to_file) through a
 * temporary file read back, so that the pieces written straight to a file descriptor
 * (ana_report.c out_put()) are compared too. */
static char *render(const struct ana_report_input *in, int which, size_t *len, bool to_file)
{
	static const enum ana_report_format fmts[] = {ANA_REPORT_JSON, ANA_REPORT_TEXT,
						      ANA_REPORT_CSV};
	char *buf = NULL;
	FILE *f = to_file ? tmpfile() : open_memstream(&buf, len);

	if (!f) {
		abort();
	}
	if (which < 3) {
		(void)ana_report_write(f, fmts[which], in);
	} else if (in->result->call_count && in->result->calls[0].call_id) {
		(void)ana_report_call(f, in, in->result->calls[0].call_id);
	}
	if (to_file) {
		long n;

		fflush(f);
		n = ftell(f);
		if (n < 0 || fseek(f, 0, SEEK_SET) != 0) {
			abort();
		}
		buf = malloc((size_t)n + 1);
		if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n) {
			abort();
		}
		*len = (size_t)n;
	}
	fclose(f);
	return buf;
}

/* Analyse @p path on @p cores threads and render every report; false when it cannot be read. */
static bool run(const char *path, uint32_t cores, const struct eng_run_config *base,
		const struct ana_filter *filter, struct out *o)
{
	struct cap_reader *r;
	struct sn_diag diag = {0};
	struct eng_run_config cfg = *base;
	struct errors errs = {0};
	const char *format;
	struct cap_merge *m;
	struct eng_result *res;

	if (cap_reader_open(path, &r, &diag) != SN_OK) {
		return false;
	}
	format = cap_reader_format(r);
	cfg.cores = cores;
	m = cap_merge_new(&r, 1);
	res = eng_run(m, &cfg, on_error, &errs);
	{
		struct ana_report_input in = {
			.files = files,
			.formats = &format,
			.file_count = 1,
			.result = res,
			.errors = errs.list,
			.error_count = errs.count,
			.filter = filter,
			.threads = cores,
		};

		/* several threads write through a file, one thread through memory */
		for (int i = 0; i < 3; i++) {
			o->fmt[i] = render(&in, i, &o->len[i], cores > 1);
		}
		o->call = render(&in, 3, &o->call_len, cores > 1);
	}
	eng_result_free(res);
	cap_merge_free(m);
	return true;
}

static void out_free(struct out *o)
{
	for (int i = 0; i < 3; i++) {
		free(o->fmt[i]);
	}
	free(o->call);
}

static void expect_same(const char *what, const char *a, size_t alen, const char *b, size_t blen,
			uint32_t cores)
{
	if (alen != blen || memcmp(a, b, alen) != 0) {
		fprintf(stderr, "%s: --cores %u differs from --cores 1 (%zu / %zu bytes)\n", what,
			cores, blen, alen);
		abort();
	}
}

/* Terminal-safe: the text reports carry no control byte but the newlines between lines. */
static void expect_printable(const char *what, const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];

		if ((c < 0x20 && c != '\n') || c == 0x7f) {
			fprintf(stderr, "%s: control byte 0x%02x at %zu\n", what, c, i);
			abort();
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[] = "/tmp/fuzz_report.XXXXXX";
	struct eng_run_config cfg = {0};
	struct ana_filter filter;
	struct out one = {0}, many = {0};
	uint32_t cores;

	if (size < 2) {
		return 0;
	}
	cores = 2u + data[0] % 3u;
	ana_filter_init(&filter);
	filter.problems = data[0] & 0x08;
	filter.one_way = data[0] & 0x10;
	filter.short_calls = data[0] & 0x20;
	cfg.eng.rtp_heuristic = !(data[0] & 0x40);
	cfg.eng.invite_only = data[0] & 0x80;
	if (data[0] & 0x04) {
		setenv("SIPNAB_GROUP_MIN", "2", 1);
		setenv("SIPNAB_ANN_BLOCK", "3", 1);
	} else {
		unsetenv("SIPNAB_GROUP_MIN");
		unsetenv("SIPNAB_ANN_BLOCK");
	}
	if (!fuzz_write_file(path, data + 1, size - 1)) {
		return 0;
	}
	if (run(path, 1, &cfg, &filter, &one) && run(path, cores, &cfg, &filter, &many)) {
		cJSON *root = cJSON_ParseWithLength(one.fmt[0], one.len[0]);

		if (!root) {
			fprintf(stderr, "the JSON report does not parse\n");
			abort();
		}
		cJSON_Delete(root);
		expect_same("JSON", one.fmt[0], one.len[0], many.fmt[0], many.len[0], cores);
		expect_same("text", one.fmt[1], one.len[1], many.fmt[1], many.len[1], cores);
		expect_same("CSV", one.fmt[2], one.len[2], many.fmt[2], many.len[2], cores);
		expect_same("--call-report", one.call, one.call_len, many.call, many.call_len,
			    cores);
		expect_printable("text", one.fmt[1], one.len[1]);
		expect_printable("--call-report", one.call, one.call_len);
	}
	out_free(&one);
	out_free(&many);
	unlink(path);
	return 0;
}
