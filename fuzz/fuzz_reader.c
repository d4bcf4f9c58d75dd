/*
 * fuzz_reader.c - libFuzzer target for the capture reader and its range reading: the input
 * is a capture file (pcap or pcapng, any bytes). It is read once sequentially and once in
 * ranges the way the multi-threaded reader does (resynchronise each range, verify it against
 * the end of the range before, read it again from there when they differ), and both must
 * give exactly the same records and the same ending; so must reading it in batches
 * (cap_reader_next_batch()) and in windows (cap_reader_read_windowed(), the one-core path),
 * and in windows that grow and alternate (several inputs merged: cap_reader_set_fence(); some
 * opened as a merge opens them, never mapped, with no descriptor kept), and
 * the ranges read from buffers (cap_cursor_fill(), the multi-threaded path): the same
 * records with the same bytes. The range, tail, window and batch sizes come from the first
 * input byte so that the fuzzer moves their boundaries around.
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sipnab/cap_reader.h"

#include "fuzz_file.h"

#define MAX_RECS 4096

struct rec_copy {
	int64_t ts_ns;
	uint32_t caplen, origlen, linktype, ifindex;
	uint64_t offset;
	uint64_t hash; /* of the bytes (FNV-1a) */
};

static struct rec_copy copy_rec(const struct cap_record *rec)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (uint32_t i = 0; i < rec->caplen; i++) {
		h = (h ^ rec->data[i]) * 0x100000001b3ull;
	}
	return (struct rec_copy){rec->ts_ns, rec->caplen, rec->origlen, rec->linktype,
				 rec->ifindex, rec->offset, h};
}

static uint32_t read_sequential(struct cap_reader *r, struct rec_copy *out,
				enum sn_status *end, uint64_t *err_off)
{
	struct cap_record rec;
	uint32_t n = 0;

	while ((*end = cap_reader_next(r, &rec)) == SN_OK && n < MAX_RECS) {
		out[n++] = copy_rec(&rec);
	}
	*err_off = cap_reader_error(r)->offset;
	return n;
}

/* In batches of @p max records, as src/engine/eng_run.c reads one input on one core. */
static uint32_t read_batches(struct cap_reader *r, uint32_t max, struct rec_copy *out,
			     enum sn_status *end, uint64_t *err_off)
{
	struct cap_record recs[64];
	uint32_t n = 0, got;

	do {
		got = cap_reader_next_batch(r, recs, max, end);
		for (uint32_t i = 0; i < got && n < MAX_RECS; i++) {
			out[n++] = copy_rec(&recs[i]);
		}
	} while (*end == SN_OK && n < MAX_RECS);
	*err_off = cap_reader_error(r)->offset;
	return n;
}

/* The verification protocol of src/engine/eng_split.c, on one thread; each range read from
 * a buffer of its bytes and @p tail more (cap_cursor_fill()) unless @p tail is SIZE_MAX. */
static uint32_t read_ranges(const struct cap_reader *r, size_t chunk, size_t tail,
			    struct rec_copy *out, enum sn_status *end, uint64_t *err_off)
{
	size_t first, len;
	struct cap_cursor *tmpl = cap_reader_split_begin(r, &first, &len);
	struct cap_cursor *state, *c;
	uint8_t *buf;
	size_t expect;
	bool dirty = false;
	uint32_t n = 0;

	if (!tmpl) {
		return UINT32_MAX;
	}
	buf = tail == SIZE_MAX ? NULL : malloc(chunk + tail + 1);
	state = cap_cursor_new(tmpl);
	c = cap_cursor_new(tmpl);
	expect = first;
	*end = SN_ENOTFOUND;
	/* chunk k starts at base + k * chunk (the first at first), as in eng_split.c */
	for (size_t k = 0, base = first - first % chunk; n < MAX_RECS; k++) {
		size_t lo = k == 0 ? first : base + k * chunk;
		size_t hi = base + (k + 1) * chunk >= len ? len : base + (k + 1) * chunk;
		size_t at;
		struct cap_record rec;
		enum sn_status st;
		bool ok;
		uint32_t n0 = n;

		/* speculative read from a resynchronised start */
		cap_cursor_copy_state(c, tmpl);
		if (buf) {
			(void)cap_cursor_fill(c, buf, lo, hi - lo + tail);
		}
		ok = lo == first || cap_cursor_resync(c, lo, hi, &at) == SN_OK;
		if (lo == first) {
			at = first;
		}
		if (ok) {
			cap_cursor_seek(c, at, hi, lo != first);
			while ((st = cap_cursor_next(c, &rec)) == SN_OK && n < MAX_RECS) {
				out[n++] = copy_rec(&rec);
			}
		}
		if (!ok || (lo != first && (at != expect || dirty || cap_cursor_needs_prev(c)))) {
			/* verification failed: read it again from where the last range ended */
			n = n0;
			cap_cursor_copy_state(c, state);
			if (buf) {
				(void)cap_cursor_fill(c, buf, lo, hi - lo + tail);
			}
			cap_cursor_seek(c, expect, hi, false);
			while ((st = cap_cursor_next(c, &rec)) == SN_OK && n < MAX_RECS) {
				out[n++] = copy_rec(&rec);
			}
		}
		if (n >= MAX_RECS) {
			break;
		}
		if (st != SN_ENOTFOUND) {
			*end = st;
			*err_off = cap_cursor_error(c)->offset;
			break;
		}
		expect = cap_cursor_pos(c);
		dirty = dirty || cap_cursor_changed(c);
		cap_cursor_copy_state(state, c);
		if (hi >= len) {
			break;
		}
	}
	cap_cursor_free(c);
	cap_cursor_free(state);
	cap_cursor_free(tmpl);
	free(buf);
	return n;
}

/* A fence with no worker behind it; retired windows go back to the pool */
static struct cap_window_pool *fuzz_pool;

static void fuzz_fence(void *ctx, size_t input)
{
	(void)ctx;
	(void)input;
}

static void fuzz_retire(void *ctx, size_t input, uint8_t *win[2], size_t cap[2])
{
	(void)ctx;
	(void)input;
	cap_window_pool_put(fuzz_pool, win[0], cap[0]);
	cap_window_pool_put(fuzz_pool, win[1], cap[1]);
}

static const struct cap_window_hooks fuzz_hooks = {.fence = fuzz_fence, .retire = fuzz_retire};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct rec_copy a[MAX_RECS], b[MAX_RECS];
	char path[] = "/tmp/fuzz_reader.XXXXXX";
	struct cap_reader *r;
	struct sn_diag diag = {0};
	enum sn_status end_a, end_b;
	uint64_t off_a = 0, off_b = 0;
	uint32_t na, nb;
	size_t chunk;
	bool merged;

	if (size < 2) {
		return 0;
	}
	chunk = 16u + (size_t)data[0] * 7u;
	if (!fuzz_write_file(path, data + 1, size - 1)) {
		return 0;
	}
	if (cap_reader_open(path, &r, &diag) == SN_OK) {
		/* ranges first: the sequential read changes the reader's state; every other input
		 * reads them from buffers, with a tail of 0 to 12 bytes past the range */
		nb = read_ranges(r, chunk, data[0] % 2 ? SIZE_MAX : (size_t)data[0] % 13u, b, &end_b,
				 &off_b);
		na = read_sequential(r, a, &end_a, &off_a);
		if (nb != UINT32_MAX && na < MAX_RECS && nb < MAX_RECS) {
			if (na != nb || end_a != end_b ||
			    (end_a != SN_ENOTFOUND && off_a != off_b) ||
			    memcmp(a, b, na * sizeof(*a)) != 0) {
				fprintf(stderr, "range reading differs: %u/%u records, end %d/%d\n",
					na, nb, end_a, end_b);
				abort();
			}
		}
		cap_reader_free(r);
	}
	/* one input in eight (half of those read in growing windows) opened as one of several
	 * merged files: never mapped, read in windows from the start, no descriptor kept */
	merged = data[0] % 4 == 2 && (data[0] & 64) != 0;
	if (merged ? cap_reader_open_merged(path, false, &r, &diag) == SN_OK
		   : cap_reader_open(path, &r, &diag) == SN_OK) {
		static struct rec_copy c[MAX_RECS];
		enum sn_status end_c;
		uint64_t off_c = 0;
		uint32_t nc;

		struct cap_window_pool *pool = NULL;

		/* every other input in windows of 1 to 64 bytes; one in four in windows that
		 * start there and grow (several inputs merged), moving to a second window at each
		 * refill (the workers' fence) */
		if (data[0] % 4 < 2) {
			(void)cap_reader_read_windowed(r, 1u + (data[0] >> 2));
		} else if (data[0] % 4 == 2) {
			pool = cap_window_pool_new();
			(void)cap_reader_read_windowed_growing(r, 1u + (data[0] >> 2),
							       64u + data[0], pool);
			cap_reader_set_fence(r, &fuzz_hooks, 0);
		}
		nc = read_batches(r, 1u + data[0] % 64u, c, &end_c, &off_c);
		fuzz_pool = pool;
		cap_reader_end_input(r);

		cap_reader_free(r);
		cap_window_pool_free(pool);
		if (cap_reader_open(path, &r, &diag) == SN_OK) {
			na = read_sequential(r, a, &end_a, &off_a);
			if (na < MAX_RECS && nc < MAX_RECS &&
			    (na != nc || end_a != end_c ||
			     (end_a != SN_ENOTFOUND && off_a != off_c) ||
			     memcmp(a, c, na * sizeof(*a)) != 0)) {
				fprintf(stderr, "batch reading differs: %u/%u records, end %d/%d\n",
					na, nc, end_a, end_c);
				abort();
			}
			cap_reader_free(r);
		}
	} else if (merged && cap_reader_open(path, &r, &diag) == SN_OK) {
		fprintf(stderr, "opened, but not for a merge: %s\n", diag.msg);
		abort();
	}
	unlink(path);
	return 0;
}
