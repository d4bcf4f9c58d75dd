/*
 * main.c - option parsing and mode selection only.
 *
 * Headless mode (-N): read every -I input (merged in timestamp order), run the engine, print the
 * report. Exit status: 0 on success (also when an input was truncated: the report covers what
 * came before, and a warning names the file and byte offset), 1 when writing the report
 * failed, 2 for a usage error or an input that cannot be read as a capture at all.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sipnab/ana_report.h"
#include "sipnab/cap_reader.h"
#include "sipnab/eng.h"

#define EXIT_USAGE 2

enum {
	OPT_REPORT = 256,
	OPT_NO_RTP_HEURISTIC,
};

struct options {
	const char **inputs; /* owned array of borrowed argv strings */
	size_t input_count;
	bool headless;
	bool report;
	enum ana_report_format format;
	bool rtp_heuristic;
};

struct run_errors {
	struct ana_input_error *list; /* owned */
	size_t count;
	const char **files;           /* borrowed: the input names */
};

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: sipnab -N -I FILE [-I FILE ...] [--report[=text|json]]\n"
		"\n"
		"Reconstruct SIP and RTP from capture files (pcap, pcapng, optionally gzip).\n"
		"\n"
		"  -I, --input FILE        read a capture file; repeatable (merged by time); - = stdin\n"
		"  -N, --no-interface      headless: no ncurses UI, print a report\n"
		"      --report[=FORMAT]   print the report as text (default) or json\n"
		"      --no-rtp-heuristic  do not count unannounced UDP payloads as RTP/RTCP\n"
		"  -h, --help              show this help\n"
		"  -V, --version           show the version\n"
		"\n"
		"See sipnab(1) for details.\n");
}

static void on_input_error(void *user, uint32_t file_index, enum sn_status st,
			   const struct sn_diag *diag)
{
	struct run_errors *re = user;
	struct ana_input_error *e;

	re->list = sn_xrealloc(re->list, (re->count + 1) * sizeof(*re->list));
	e = &re->list[re->count++];
	e->file = re->files[file_index];
	e->message = sn_xstrndup(diag->msg, strlen(diag->msg));
	e->offset = diag->offset;
	e->truncated = st == SN_ETRUNC;
	fprintf(stderr,
		"sipnab: warning: %s: %s (byte offset %llu); the report covers the packets before "
		"it\n",
		e->file, diag->msg, (unsigned long long)diag->offset);
}

static int parse_args(int argc, char **argv, struct options *o)
{
	static const struct option longopts[] = {
		{"input", required_argument, NULL, 'I'},
		{"no-interface", no_argument, NULL, 'N'},
		{"report", optional_argument, NULL, OPT_REPORT},
		{"no-rtp-heuristic", no_argument, NULL, OPT_NO_RTP_HEURISTIC},
		{"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, 'V'},
		{NULL, 0, NULL, 0},
	};
	int c;

	o->rtp_heuristic = true;
	o->format = ANA_REPORT_TEXT;
	o->inputs = sn_xcalloc((size_t)argc + 1, sizeof(*o->inputs));
	while ((c = getopt_long(argc, argv, "I:NhV", longopts, NULL)) != -1) {
		switch (c) {
		case 'I':
			o->inputs[o->input_count++] = optarg;
			break;
		case 'N':
			o->headless = true;
			break;
		case OPT_REPORT:
			o->report = true;
			if (!optarg || strcmp(optarg, "text") == 0) {
				o->format = ANA_REPORT_TEXT;
			} else if (strcmp(optarg, "json") == 0) {
				o->format = ANA_REPORT_JSON;
			} else {
				fprintf(stderr, "sipnab: --report: unknown format '%s' (text, json)\n",
					optarg);
				return EXIT_USAGE;
			}
			break;
		case OPT_NO_RTP_HEURISTIC:
			o->rtp_heuristic = false;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		case 'V':
			printf("%s\n", PACKAGE_STRING);
			exit(0);
		default:
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "sipnab: unexpected argument '%s'\n", argv[optind]);
		return EXIT_USAGE;
	}
	if (o->input_count == 0) {
		fprintf(stderr, "sipnab: no input: give a capture file with -I FILE\n");
		usage(stderr);
		return EXIT_USAGE;
	}
	if (!o->headless) {
		fprintf(stderr, "sipnab: the interactive ncurses UI is not part of this build yet; "
				"use -N for the headless report\n");
		return EXIT_USAGE;
	}
	return 0;
}

static int run_headless(const struct options *o)
{
	struct cap_reader **readers = sn_xcalloc(o->input_count, sizeof(*readers));
	const char **formats = sn_xcalloc(o->input_count, sizeof(*formats));
	struct run_errors re = {NULL, 0, o->inputs};
	struct eng_config cfg = {.rtp_heuristic = o->rtp_heuristic};
	struct cap_merge *merge;
	struct cap_record rec;
	struct eng *eng;
	int rc = 0;

	for (size_t i = 0; i < o->input_count; i++) {
		struct sn_diag diag = {0};
		if (cap_reader_open(o->inputs[i], &readers[i], &diag) != SN_OK) {
			fprintf(stderr, "sipnab: %s: %s\n", o->inputs[i], diag.msg);
			for (size_t j = 0; j < i; j++) {
				cap_reader_free(readers[j]);
			}
			free(readers);
			free(formats);
			return EXIT_USAGE;
		}
		formats[i] = cap_reader_format(readers[i]);
	}
	merge = cap_merge_new(readers, o->input_count);
	eng = eng_new(&cfg);
	while (cap_merge_next(merge, &rec, on_input_error, &re) == SN_OK) {
		eng_packet(eng, &rec);
	}
	eng_finish(eng);

	struct ana_report_input in = {
		.files = o->inputs,
		.formats = formats,
		.file_count = o->input_count,
		.stats = eng_stats(eng),
		.errors = re.list,
		.error_count = re.count,
	};
	if (ana_report_write(stdout, o->format, &in) != SN_OK) {
		fprintf(stderr, "sipnab: writing the report failed: %s\n", strerror(errno));
		rc = 1;
	}
	eng_free(eng);
	cap_merge_free(merge);
	for (size_t i = 0; i < re.count; i++) {
		free((char *)re.list[i].message);
	}
	free(re.list);
	free(readers);
	free(formats);
	return rc;
}

int main(int argc, char **argv)
{
	struct options o = {0};
	int rc = parse_args(argc, argv, &o);

	if (rc == 0) {
		rc = run_headless(&o);
	}
	free(o.inputs);
	return rc;
}
