/*
 * main.c - option parsing and mode selection only (and the process's allocator setting,
 * tune_malloc()).
 *
 * Headless mode (-N): read every -I input (merged in timestamp order), run the engine, print the
 * report. Exit status: 0 on success (also when an input was truncated: the report covers what
 * came before, and a warning names the file and byte offset), 1 when writing the report
 * failed or --call-report names no call, 2 for a usage error or an input that cannot be read
 * as a capture at all.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "sipnab/ana_report.h"
#include "sipnab/cap_reader.h"
#include "sipnab/ana_filter.h"
#include "sipnab/eng.h"
#include "sipnab/eng_result.h"
#include "sipnab/eng_run.h"
#include "sipnab/sn_pool.h"

#define EXIT_USAGE 2

enum {
	OPT_REPORT = 256,
	OPT_NO_RTP_HEURISTIC,
	OPT_CORES,
	OPT_MAX_STREAMS,
	OPT_PROBLEMS,
	OPT_SLOW_SETUP,
	OPT_SHORT_CALLS,
	OPT_ONE_WAY,
	OPT_CALL_REPORT,
	OPT_CALL_MSGS,
};

struct options {
	const char **inputs; /* owned array of borrowed argv strings */
	size_t input_count;
	bool headless;
	bool report;
	enum ana_report_format format;
	struct eng_run_config run;
	struct ana_filter filter;
	const char *call_report; /* --call-report CALL-ID */
};

struct run_errors {
	struct ana_input_error *list; /* owned */
	size_t count;
	const char **files;           /* borrowed: the input names */
};

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: sipnab -N -I FILE [-I FILE ...] [options]\n"
		"\n"
		"Reconstruct SIP calls and RTP streams from capture files (pcap, pcapng, gzip).\n"
		"\n"
		"  -I, --input FILE        read a capture file; repeatable (merged by time); - = stdin\n"
		"  -N, --no-interface      headless: no ncurses UI, print a report\n"
		"      --report[=FORMAT]   report as text (default), json or csv (one CDR per call)\n"
		"      --cores N           worker threads (default: online CPUs; 1 = one thread)\n"
		"  -c, --calls-only        report only INVITE calls\n"
		"      --problems          only calls with problems (failed, MOS < 3.6, loss > 1 %%,\n"
		"                          one-way audio, retransmissions)\n"
		"      --slow-setup[=MS]   only calls whose setup took longer than MS (3000)\n"
		"      --short-calls[=S]   only answered calls shorter than S seconds (5)\n"
		"      --one-way           only answered calls with one-way or no audio\n"
		"      --call-report ID    one call in detail, with its message ladder\n"
		"      --no-rtp-heuristic  keep only RTP streams that an SDP announced\n"
		"      --max-streams N     candidate RTP streams tracked per worker (1000000)\n"
		"  -l, --limit N           Call-IDs kept per worker (200000); later ones are counted\n"
		"                          as dropped\n"
		"  -R, --rotate            at the limit, evict the worker's oldest Call-ID\n"
		"                          (counted as dropped) to keep the new one\n"
		"      --max-call-messages N  messages kept per Call-ID (10000)\n"
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
	/* the reader's message gives the offset itself ("... at byte offset N ...") */
	fprintf(stderr, "sipnab: warning: %s: %s; the report covers the packets before it\n",
		e->file, diag->msg);
}

/* A whole number in [min, max] for option @p name; prints the error itself. */
static int parse_count(const char *text, const char *name, unsigned long min, unsigned long max,
		       uint32_t *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(text, &end, 10);
	if (errno || end == text || *end != '\0' || text[0] == '-' || v < min || v > max) {
		fprintf(stderr, "sipnab: %s: '%s' is not a number from %lu to %lu\n", name, text,
			min, max);
		return EXIT_USAGE;
	}
	*out = (uint32_t)v;
	return 0;
}

static int parse_args(int argc, char **argv, struct options *o)
{
	static const struct option longopts[] = {
		{"input", required_argument, NULL, 'I'},
		{"no-interface", no_argument, NULL, 'N'},
		{"report", optional_argument, NULL, OPT_REPORT},
		{"no-rtp-heuristic", no_argument, NULL, OPT_NO_RTP_HEURISTIC},
		{"calls-only", no_argument, NULL, 'c'},
		{"cores", required_argument, NULL, OPT_CORES},
		{"max-streams", required_argument, NULL, OPT_MAX_STREAMS},
		{"problems", no_argument, NULL, OPT_PROBLEMS},
		{"slow-setup", optional_argument, NULL, OPT_SLOW_SETUP},
		{"short-calls", optional_argument, NULL, OPT_SHORT_CALLS},
		{"one-way", no_argument, NULL, OPT_ONE_WAY},
		{"call-report", required_argument, NULL, OPT_CALL_REPORT},
		{"limit", required_argument, NULL, 'l'},
		{"rotate", no_argument, NULL, 'R'},
		{"max-call-messages", required_argument, NULL, OPT_CALL_MSGS},
		{"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, 'V'},
		{NULL, 0, NULL, 0},
	};
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	int c;

	o->run.eng.rtp_heuristic = true;
	o->run.cores = cpus > 0 ? (uint32_t)cpus : 1;
	o->format = ANA_REPORT_TEXT;
	ana_filter_init(&o->filter);
	o->inputs = sn_xcalloc((size_t)argc + 1, sizeof(*o->inputs));
	while ((c = getopt_long(argc, argv, "I:Nchl:RV", longopts, NULL)) != -1) {
		switch (c) {
		case 'I':
			o->inputs[o->input_count++] = optarg;
			break;
		case 'N':
			o->headless = true;
			break;
		case OPT_REPORT:
			o->report = true;
			if (optarg && ana_report_format_parse(optarg, &o->format) != SN_OK) {
				fprintf(stderr,
					"sipnab: --report: unknown format '%s' (text, json, csv)\n",
					optarg);
				return EXIT_USAGE;
			}
			break;
		case OPT_NO_RTP_HEURISTIC:
			o->run.eng.rtp_heuristic = false;
			break;
		case 'c':
			o->run.eng.invite_only = true;
			break;
		case OPT_CORES:
			if (parse_count(optarg, "--cores", 1, 1024, &o->run.cores) != 0) {
				return EXIT_USAGE;
			}
			break;
		case OPT_MAX_STREAMS:
			if (parse_count(optarg, "--max-streams", 1, UINT32_MAX,
					&o->run.eng.max_streams) != 0) {
				return EXIT_USAGE;
			}
			break;
		case 'l':
			if (parse_count(optarg, "--limit", 1, UINT32_MAX - 1,
					&o->run.eng.max_calls) != 0) {
				return EXIT_USAGE;
			}
			break;
		case 'R':
			o->run.eng.rotate = true;
			break;
		case OPT_CALL_MSGS:
			if (parse_count(optarg, "--max-call-messages", 1, UINT32_MAX - 1,
					&o->run.eng.call_max_msgs) != 0) {
				return EXIT_USAGE;
			}
			break;
		case OPT_PROBLEMS:
			o->filter.problems = true;
			break;
		case OPT_ONE_WAY:
			o->filter.one_way = true;
			break;
		case OPT_SLOW_SETUP:
			o->filter.slow_setup = true;
			if (optarg && parse_count(optarg, "--slow-setup", 0, UINT32_MAX,
						  &o->filter.slow_setup_ms) != 0) {
				return EXIT_USAGE;
			}
			break;
		case OPT_SHORT_CALLS:
			o->filter.short_calls = true;
			if (optarg && parse_count(optarg, "--short-calls", 0, UINT32_MAX,
						  &o->filter.short_call_s) != 0) {
				return EXIT_USAGE;
			}
			break;
		case OPT_CALL_REPORT:
			o->call_report = optarg;
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

/*
 * glibc grows a thread's heap by its top pad (128 KiB by default), one mprotect() or brk() a
 * step. Each of those calls, like every mmap(), mremap() and munmap(), takes the process's
 * address-space lock for writing: on two cores the other thread's page faults and
 * MADV_POPULATE_READ of the file then wait behind it, and a thread that slept often wakes on
 * the other's CPU (traced with perf: threads blocked in rwsem_down_write_slowpath and
 * lock_mm_and_find_vma). A 4 MiB pad (setting it also keeps the mmap threshold at 128 KiB)
 * took c5k at --cores 2 from 27 to 17 voluntary context switches a run. Its wall time, as
 * paired medians of nine sets of 21-61 rounds, was 0.943-1.008 of the default's (median of
 * the sets 0.979: about 2 %, near the noise; 0.963 for the 20,000-call sweep capture and
 * 0.977 for 2,000 calls, one set each), with no change in peak RSS. 8 MiB gave the same time
 * and 6 MiB more RSS. Doing without nearly all such calls (a 64 MiB threshold and pad, no trimming) was
 * 6.7 % faster than the default in another set of rounds, but cost 50-65 MiB more RSS at
 * 20,000 calls. On one thread there is nobody to wait, and the pad measured 0.99-1.09 of the
 * default's time (paired medians of 21-31 rounds, inside the noise but never ahead), so a
 * single-threaded run keeps glibc's defaults. Every arena keeps up to a pad of freed memory
 * at its top, so the pad shrinks as threads are added (8 MiB in all, 128 KiB at least):
 * 4 MiB for every thread took c5k's peak RSS at --cores 4/8/16 from 34/40/43 to 39/48/55 MiB.
 * It is set for one mapped capture file only (the sharded reader, where all of the above was
 * measured): with gzip input, whose threads are the inflater and the workers, it raised the
 * peak RSS of tests/cli_streamed.sh's 65 MB capture at --cores 2 from 24.7-26.7 MiB to
 * 26.9-32.2 MiB, and several files or a pipe were not measured.
 * An array that grows inside the pad is copied by realloc() into untouched pages: the
 * engine's arrays grow with sn_xgrow() instead, whose limit is the pad (sn_xalloc.c).
 */
static void tune_malloc(uint32_t threads)
{
#ifdef __GLIBC__
	if (threads > 1) {
		size_t pad = SN_MIN((size_t)4 << 20, ((size_t)8 << 20) / threads);

		pad = SN_MAX(pad, (size_t)128 << 10);
		(void)mallopt(M_TOP_PAD, (int)pad);
		sn_xgrow_copy_max(pad);
	}
#else
	(void)threads;
#endif
}

/*
 * Descriptors that several merged inputs may keep open: each file keeps its own, to be read
 * with pread() in windows (cap_reader_open_merged()), as many as the process may open (its
 * soft limit raised to the hard one) less FD_SPARE for everything else; the files past them
 * are opened again for each window read, so that any number of rotated captures can be
 * merged.
 */
#define FD_SPARE 64u

static size_t fd_budget(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) != 0) {
		return 0;
	}
	if (rl.rlim_cur < rl.rlim_max) {
		struct rlimit up = {rl.rlim_max, rl.rlim_max};

		if (setrlimit(RLIMIT_NOFILE, &up) == 0) {
			rl.rlim_cur = rl.rlim_max;
		}
	}
	if (rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur > (rlim_t)SIZE_MAX) {
		return SIZE_MAX;
	}
	return rl.rlim_cur > FD_SPARE ? (size_t)rl.rlim_cur - FD_SPARE : 0;
}

/*
 * Descriptors kept back, at most, for gzip files that wait for their turn without one
 * (cap_reader_first_ts()): each takes one when the merge reaches it, until it ends.
 */
#define FD_GZ_RESERVE 64u

/*
 * Open every input into @p readers (their formats into @p formats): one alone as it comes,
 * several for a merge, as many keeping their descriptor as the budget allows, less one for
 * each gzip file that waits without one (up to FD_GZ_RESERVE: that many can be read at
 * once). Pipes and a gzip file read on at once keep theirs whatever it says (their input
 * threads read them): a file kept open gives its own up for them, the last opened first.
 * EXIT_USAGE, with the reason printed and nothing left open, when one cannot be opened.
 */
static int open_inputs(const struct options *o, struct cap_reader **readers,
		       const char **formats)
{
	bool merged = o->input_count > 1;
	size_t fds = merged ? fd_budget() : 0;
	size_t kept = 0;    /* descriptors the inputs opened so far hold */
	size_t reserve = 0; /* kept back for gzip files waiting without one */
	size_t *givers = sn_xcalloc(o->input_count, sizeof(*givers));
	size_t ngivers = 0;

	for (size_t i = 0; i < o->input_count; i++) {
		struct sn_diag diag = {0};
		int64_t first_ts;
		bool waits;
		enum sn_status st =
			merged ? cap_reader_open_merged(o->inputs[i], kept + reserve < fds,
							&readers[i], &diag)
			       : cap_reader_open(o->inputs[i], &readers[i], &diag);

		if (st != SN_OK) {
			fprintf(stderr, "sipnab: %s: %s\n", o->inputs[i], diag.msg);
			for (size_t j = 0; j < i; j++) {
				cap_reader_free(readers[j]);
			}
			free(givers);
			return EXIT_USAGE;
		}
		formats[i] = cap_reader_format(readers[i]);
		if (!merged) {
			continue;
		}
		waits = cap_reader_first_ts(readers[i], &first_ts);
		if (cap_reader_holds_fd(readers[i])) {
			kept++;
			if (cap_reader_reopenable(readers[i]) && !waits) {
				givers[ngivers++] = i;
			}
		} else if (waits && reserve < FD_GZ_RESERVE) {
			reserve++;
		}
		while (kept + reserve > fds && ngivers > 0) {
			kept -= cap_reader_release_fd(readers[givers[--ngivers]]);
		}
	}
	free(givers);
	return 0;
}

static int run_headless(const struct options *o)
{
	struct cap_reader **readers = sn_xcalloc(o->input_count, sizeof(*readers));
	const char **formats = sn_xcalloc(o->input_count, sizeof(*formats));
	struct run_errors re = {NULL, 0, o->inputs};
	struct cap_merge *merge;
	struct eng_result *res;
	struct sn_phase ph;
	enum sn_status st;
	int rc;

	sn_phase_start(&ph);
	rc = open_inputs(o, readers, formats);
	if (rc != 0) {
		free(readers);
		free(formats);
		return rc;
	}
	if (o->input_count == 1 && cap_reader_mapped(readers[0])) {
		tune_malloc(o->run.cores);
	}
	merge = cap_merge_new(readers, o->input_count);
	sn_phase_end(&ph, "open");
	res = eng_run(merge, &o->run, on_input_error, &re);

	struct ana_report_input in = {
		.files = o->inputs,
		.formats = formats,
		.file_count = o->input_count,
		.result = res,
		.errors = re.list,
		.error_count = re.count,
		.filter = &o->filter,
		.threads = o->run.cores,
	};
	/* the report is written in many small pieces: buffer them (the large ones go past the
	 * buffer: ana_report.c out_put()). glibc ignores the size
	 * when given no buffer (it keeps st_blksize, 4 KiB for a pipe: a 4 MB report took
	 * 990 write() calls), so the buffer is given; it lives as long as stdout does */
	static char out_buf[1u << 20];
	setvbuf(stdout, out_buf, _IOFBF, sizeof(out_buf));
	sn_phase_start(&ph);
	if (o->call_report) {
		st = ana_report_call(stdout, &in, o->call_report);
		if (st == SN_ENOTFOUND) {
			fprintf(stderr, "sipnab: no call with Call-ID %s\n", o->call_report);
			rc = 1;
		}
	} else {
		st = ana_report_write(stdout, o->format, &in);
	}
	if (st == SN_ESYS) {
		fprintf(stderr, "sipnab: writing the report failed: %s\n", strerror(errno));
		rc = 1;
	}
	sn_phase_end(&ph, "report");
	eng_result_free(res);
	cap_merge_free(merge);
	sn_phase_end(&ph, "free");
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
	/* no thread of ours outlives main() (valgrind: tests/valgrind_clean.sh) */
	sn_pool_stop();
	free(o.inputs);
	return rc;
}
