/*
 * eng_split.h - sharded reading of one mapped capture file (eng_split.c), used by eng_run().
 */
#ifndef SIPNAB_ENG_SPLIT_H
#define SIPNAB_ENG_SPLIT_H

#include "sipnab/cap_reader.h"
#include "sipnab/eng.h"

#include "eng_ways.h"

/**
 * Read @p rd on @p n threads (the calling thread and n-1 started here), each reading chunks
 * of the file and analysing one share of the host pairs with engines[i], then eng_finish()
 * on every engine.
 * @return false, having done nothing, when @p rd cannot be read in ranges (see
 *         cap_reader_split_begin()); true when every record was analysed. An input that
 *         ends early is reported through @p on_error, as cap_merge_next() would.
 */
bool eng_split_run(const struct cap_reader *rd, struct eng **engines, uint32_t n,
		   cap_merge_error_fn *on_error, void *user);

#endif
