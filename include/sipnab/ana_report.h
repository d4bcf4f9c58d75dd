/*
 * ana_report.h - the headless report (../shared/docs/REPORT.md) over a finished struct
 * eng_result: text for people, JSON (cJSON) for scripts, CSV (one CDR line per call), and the
 * detail of one call with its message ladder. Does no analysis beyond the selections of
 * ana_filter.h.
 */
#ifndef SIPNAB_ANA_REPORT_H
#define SIPNAB_ANA_REPORT_H

#include <stdio.h>

#include "sipnab/ana_filter.h"
#include "sipnab/eng_result.h"

enum ana_report_format {
	ANA_REPORT_TEXT,
	ANA_REPORT_JSON,
	ANA_REPORT_CSV,
};

/* An input file that ended early or was corrupt part-way; what came before it was analysed. */
struct ana_input_error {
	const char *file;    /* borrowed */
	const char *message; /* borrowed */
	uint64_t offset;     /* byte offset where reading stopped */
	bool truncated;	     /* true: ended early; false: corrupt */
};

/* What to report. Everything is borrowed for the duration of the call. */
struct ana_report_input {
	const char *const *files;   /* input paths, in command-line order */
	const char *const *formats; /* "pcap", "pcapng+gzip", ... per file; entries may be NULL */
	size_t file_count;
	const struct eng_result *result; /* the engine's result (its stats feed "capture") */
	const struct ana_input_error *errors;
	size_t error_count;
	const struct ana_filter *filter; /* selections; NULL or inactive = every call */
	uint32_t threads;                /* threads that may render the report (JSON elements,
					  * CSV lines, text rows; 0, 1 = the calling thread only);
					  * the output does not depend on it */
};

/**
 * Parse a --report format name.
 * @param name "text", "json" or "csv"; NULL means text
 * @param out the format
 * @return SN_OK, or SN_ENOTFOUND for an unknown name
 */
enum sn_status ana_report_format_parse(const char *name, enum ana_report_format *out);

/**
 * Write the report.
 * @param out destination stream
 * @param fmt text, JSON or CSV
 * @param in what to report
 * @return SN_OK, or SN_ESYS when writing failed (errno set by the stream)
 * Thread: any; reads @p in only.
 */
enum sn_status ana_report_write(FILE *out, enum ana_report_format fmt,
				const struct ana_report_input *in);

/**
 * Find the call that has @p call_id as one of its legs.
 * @param r the result
 * @param call_id the Call-ID to look for (exact, case-sensitive)
 * @return the call index, or -1 when no call has it
 */
int32_t ana_report_find_call(const struct eng_result *r, const char *call_id);

/**
 * Write one call in detail as text: its fields, problems, message ladder and streams.
 * @param out destination stream
 * @param in what to report (the filter's thresholds are used for the problem list)
 * @param call_id Call-ID of any leg of the call
 * @return SN_OK; SN_ENOTFOUND when no call has that Call-ID (nothing written); SN_ESYS when
 *         writing failed
 */
enum sn_status ana_report_call(FILE *out, const struct ana_report_input *in, const char *call_id);

#endif
