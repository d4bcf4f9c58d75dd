/*
 * ana_report.h - the headless report (../shared/docs/REPORT.md): text for people, JSON (cJSON)
 * for scripts. Reads finished engine results; does no analysis of its own.
 */
#ifndef SIPNAB_ANA_REPORT_H
#define SIPNAB_ANA_REPORT_H

#include <stdio.h>

#include "sipnab/eng.h"

enum ana_report_format {
	ANA_REPORT_TEXT,
	ANA_REPORT_JSON,
};

/* An input file that ended early or was corrupt part-way; what came before it was analysed. */
struct ana_input_error {
	const char *file;    /* borrowed */
	const char *message; /* borrowed */
	uint64_t offset;     /* byte offset where reading stopped */
	bool truncated;      /* true: ended early; false: corrupt */
};

struct ana_report_input {
	const char *const *files;               /* input paths, in command-line order */
	const char *const *formats;             /* "pcap", "pcapng+gzip", ... per file */
	size_t file_count;
	const struct eng_stats *stats;
	const struct ana_input_error *errors;
	size_t error_count;
};

/**
 * Write the report.
 * @param out destination stream
 * @param fmt text or JSON
 * @param in what to report
 * @return SN_OK, or SN_ESYS when writing failed
 */
enum sn_status ana_report_write(FILE *out, enum ana_report_format fmt,
				const struct ana_report_input *in);

#endif
