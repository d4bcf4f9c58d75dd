/*
 * eng_run.h - the analysis run: read the inputs, analyse them on N cores, build the result.
 */
#ifndef SIPNAB_ENG_RUN_H
#define SIPNAB_ENG_RUN_H

#include "sipnab/cap_reader.h"
#include "sipnab/eng.h"
#include "sipnab/eng_result.h"

struct eng_run_config {
	uint32_t cores;        /* worker threads; 0 or 1 = everything on the calling thread */
	struct eng_config eng; /* per-worker engine configuration */
};

/**
 * Analyse every record of @p m and return the merged result; the same for any core count.
 * @param m the inputs (records are read from the calling thread)
 * @param cfg cores and engine configuration
 * @param on_error called for an input that ends early or is corrupt (may be NULL)
 * @param user passed to @p on_error
 * @return the result; free it with eng_result_free()
 * Thread: the calling thread reads; worker threads are started and joined inside.
 */
struct eng_result *eng_run(struct cap_merge *m, const struct eng_run_config *cfg,
			   cap_merge_error_fn *on_error, void *user);

#endif
