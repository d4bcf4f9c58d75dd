/*
 * cap_merge.c - timestamp-ordered merge of several capture readers.
 *
 * Each input contributes at most one pending record (its head) to a binary min-heap keyed by
 * (ts_ns, file index), so equal timestamps come out in command-line order and records of one
 * input keep their file order. Inputs whose timestamps go backwards are not re-sorted.
 *
 * The input whose record was returned last is advanced lazily, at the start of the next
 * cap_merge_next() call: its reader may reuse the record's memory when it advances, and the
 * record must stay valid until that call.
 *
 * With a single input the records come straight from its reader (no heap).
 *
 * Several files are read in windows of their own (cap_merge_read_windowed(); opened with
 * cap_reader_open_merged(), never mapped): each starts with one page, or the file if it is
 * smaller, which is all that most of thousands of rotated captures hold for a long time
 * (every input's first record is read before the first is returned), takes the rest of the
 * file up to 2 MiB when it is read on, and gives its windows back to the merge's pool when
 * its input ends (cap_merge_fill()), for the next file.
 *
 * A gzip file opened for a merge is not read until its first record would be returned
 * (cap_reader_first_ts()): the time of that record stands in the heap for it (waiting[i])
 * until it comes to the top, then the input is read and its real first record, with the same
 * key, takes its place. Rotated captures come one after the other in time, so one or two of
 * thousands of them are read at a time. The stand-ins come to the top in the order of their
 * keys (they never change), so when one does, the next in that order is started early
 * (cap_reader_start_early()): its inflater runs while this one is read.
 *
 * An input that ends with SN_ETRUNC/SN_EPARSE is reported once through on_error and dropped;
 * the others go on. It is never read again, so the callback cannot fire twice for it.
 *
 * Ownership: the merge owns its readers (freed by cap_merge_free()) and its arrays.
 * Threading: one thread at a time; no global state.
 */
#include "config.h"

#include "sipnab/cap_reader.h"

#include <stdlib.h>
#include <string.h>

struct cap_merge {
	struct cap_reader **readers; /* owned, count entries; NULL entries are empty inputs */
	size_t count;
	struct cap_record *heads; /* heads[i]: pending record of input i */
	bool *waiting;            /* heads[i] stands for input i's first record, not read yet */
	uint32_t *order;          /* the inputs that waited at the start, by their stand-ins' keys */
	size_t norder, next;      /* order[next] is the next of them to come to the top */
	uint32_t *heap;		  /* input indices, min-heap on (ts_ns, index) */
	size_t heap_count;
	size_t refill; /* input to advance before the next pop; SIZE_MAX if none */
	bool started;  /* every input has been read once */
	bool ended;    /* one input: it has ended (and was reported if it failed) */
	struct cap_window_pool *pool; /* several inputs read in windows; owned */
};

static bool cap_merge_less(const struct cap_merge *m, uint32_t a, uint32_t b)
{
	int64_t ta = m->heads[a].ts_ns;
	int64_t tb = m->heads[b].ts_ns;

	return ta < tb || (ta == tb && a < b);
}

static int cap_merge_key_cmp(const void *pa, const void *pb, void *user)
{
	uint32_t a = *(const uint32_t *)pa;
	uint32_t b = *(const uint32_t *)pb;

	return cap_merge_less(user, a, b) ? -1 : cap_merge_less(user, b, a) ? 1 : 0;
}

static void cap_merge_sift_down(struct cap_merge *m, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1;
		size_t best = i;
		uint32_t tmp;

		if (l < m->heap_count && cap_merge_less(m, m->heap[l], m->heap[best])) {
			best = l;
		}
		if (l + 1 < m->heap_count && cap_merge_less(m, m->heap[l + 1], m->heap[best])) {
			best = l + 1;
		}
		if (best == i) {
			return;
		}
		tmp = m->heap[i];
		m->heap[i] = m->heap[best];
		m->heap[best] = tmp;
		i = best;
	}
}

static void cap_merge_push(struct cap_merge *m, uint32_t idx)
{
	size_t i = m->heap_count++;

	m->heap[i] = idx;
	while (i > 0) {
		size_t parent = (i - 1) / 2;
		uint32_t tmp;

		if (!cap_merge_less(m, m->heap[i], m->heap[parent])) {
			break;
		}
		tmp = m->heap[i];
		m->heap[i] = m->heap[parent];
		m->heap[parent] = tmp;
		i = parent;
	}
}

/*
 * Read the next record of input @p idx into its head and queue it, or retire the input. An
 * input not read yet is queued with its first record's time instead (@p peek).
 */
static void cap_merge_fill(struct cap_merge *m, uint32_t idx, bool peek,
			   cap_merge_error_fn *on_error, void *user)
{
	struct cap_reader *r = m->readers[idx];
	enum sn_status st;
	int64_t ts;

	if (!r) {
		return;
	}
	if (peek && cap_reader_first_ts(r, &ts)) {
		memset(&m->heads[idx], 0, sizeof(m->heads[idx]));
		m->heads[idx].ts_ns = ts;
		m->waiting[idx] = true;
		cap_merge_push(m, idx);
		return;
	}
	st = cap_reader_next(r, &m->heads[idx]);
	if (st == SN_OK) {
		m->heads[idx].file_index = idx;
		cap_merge_push(m, idx);
		return;
	}
	/* never read again: its windows go back for the inputs still to be read */
	cap_reader_end_input(r);
	if (st != SN_ENOTFOUND && on_error) {
		on_error(user, idx, st, cap_reader_error(r));
	}
}

struct cap_merge *cap_merge_new(struct cap_reader **readers, size_t count)
{
	struct cap_merge *m = sn_xcalloc(1, sizeof(*m));
	size_t n = count ? count : 1;

	m->readers = sn_xcalloc(n, sizeof(*m->readers));
	m->heads = sn_xcalloc(n, sizeof(*m->heads));
	m->heap = sn_xcalloc(n, sizeof(*m->heap));
	m->waiting = sn_xcalloc(n, sizeof(*m->waiting));
	m->order = sn_xcalloc(n, sizeof(*m->order));
	for (size_t i = 0; i < count; i++) {
		m->readers[i] = readers[i];
	}
	m->count = count;
	m->refill = SIZE_MAX;
	return m;
}

uint32_t cap_merge_next_batch(struct cap_merge *m, struct cap_record *recs, uint32_t max,
			      cap_merge_error_fn *on_error, void *user)
{
	uint32_t n = 0;

	if (m->count == 1) {
		/* one input: straight from the reader, one call per batch */
		struct cap_reader *r = m->readers[0];
		enum sn_status st;

		m->started = true;
		if (!r || m->ended) {
			return 0;
		}
		n = cap_reader_next_batch(r, recs, max, &st);
		for (uint32_t i = 0; i < n; i++) {
			recs[i].file_index = 0;
		}
		if (st != SN_OK) {
			m->ended = true;
			if (st != SN_ENOTFOUND && on_error) {
				on_error(user, 0, st, cap_reader_error(r));
			}
		}
		return n;
	}
	/* several inputs: one record at a time. Refilling an input gives back what lies behind
	 * its reading position (cap_reader_next()), which for streamed input would wipe the
	 * earlier records of a batch */
	return max && cap_merge_next(m, &recs[0], on_error, user) == SN_OK ? 1 : 0;
}

/*
 * *@p dst = *@p src field by field: the head was written field by field just before (by the
 * reader), and a copy in wider pieces (the compiler's rep movs) waited for those stores to
 * reach the cache, about a sixth of a two-file merge's time at --cores 2.
 */
static void cap_merge_copy(struct cap_record *dst, const struct cap_record *src)
{
	dst->ts_ns = src->ts_ns;
	dst->caplen = src->caplen;
	dst->origlen = src->origlen;
	dst->linktype = src->linktype;
	dst->ifindex = src->ifindex;
	dst->file_index = src->file_index;
	dst->transient = src->transient;
	dst->data_at = src->data_at;
	dst->offset = src->offset;
	dst->data = src->data;
}

enum sn_status cap_merge_next(struct cap_merge *m, struct cap_record *rec,
			      cap_merge_error_fn *on_error, void *user)
{
	uint32_t top;

	if (m->count == 1) {
		/* one input: its records in file order, no heap (the common case) */
		struct cap_reader *r = m->readers[0];
		enum sn_status st;

		m->started = true;
		if (!r || m->ended) {
			return SN_ENOTFOUND;
		}
		st = cap_reader_next(r, rec);
		if (st == SN_OK) {
			rec->file_index = 0;
			return SN_OK;
		}
		m->ended = true;
		if (st != SN_ENOTFOUND && on_error) {
			on_error(user, 0, st, cap_reader_error(r));
		}
		return SN_ENOTFOUND;
	}
	if (!m->started) {
		m->started = true;
		for (size_t i = 0; i < m->count; i++) {
			cap_merge_fill(m, (uint32_t)i, true, on_error, user);
			if (m->waiting[i]) {
				m->order[m->norder++] = (uint32_t)i;
			}
		}
		qsort_r(m->order, m->norder, sizeof(*m->order), cap_merge_key_cmp, m);
	} else if (m->refill != SIZE_MAX) {
		uint32_t idx = (uint32_t)m->refill;

		m->refill = SIZE_MAX;
		cap_merge_fill(m, idx, false, on_error, user);
	}
	/* an input whose turn it is but that is not read yet: read it, its first record in
	 * place of the stand-in (the same key: it stays on top unless the input failed) */
	while (m->heap_count > 0 && m->waiting[m->heap[0]]) {
		top = m->heap[0];
		m->waiting[top] = false;
		m->heap[0] = m->heap[--m->heap_count];
		cap_merge_sift_down(m, 0);
		while (m->next < m->norder && m->order[m->next] != top) {
			m->next++;
		}
		if (m->next + 1 < m->norder) {
			cap_reader_start_early(m->readers[m->order[m->next + 1]]);
		}
		cap_merge_fill(m, top, false, on_error, user);
	}
	if (m->heap_count == 0) {
		return SN_ENOTFOUND;
	}
	top = m->heap[0];
	cap_merge_copy(rec, &m->heads[top]);
	m->heap[0] = m->heap[--m->heap_count];
	cap_merge_sift_down(m, 0);
	m->refill = top;
	return SN_OK;
}

const struct cap_reader *cap_merge_reader(const struct cap_merge *m, size_t i)
{
	return i < m->count ? m->readers[i] : NULL;
}

const struct cap_reader *cap_merge_single(const struct cap_merge *m)
{
	return m->count == 1 && !m->started ? m->readers[0] : NULL;
}

bool cap_merge_lease(struct cap_merge *m)
{
	return m->count == 1 && !m->started && m->readers[0] && cap_reader_lease(m->readers[0]);
}

bool cap_merge_lease_yield(struct cap_merge *m)
{
	if (!cap_reader_lease_wanted(m->readers[0])) {
		return false;
	}
	(void)cap_reader_read_windowed(m->readers[0], 0);
	cap_reader_unlease(m->readers[0]);
	return true;
}

bool cap_merge_read_way(struct cap_merge *m, bool mapped, size_t window)
{
	if (m->count != 1 || !m->readers[0]) {
		return false;
	}
	return mapped ? cap_reader_read_mapped(m->readers[0])
		      : cap_reader_read_windowed(m->readers[0], window);
}

void cap_merge_unlease(struct cap_merge *m)
{
	cap_reader_unlease(m->readers[0]);
}

void cap_merge_set_release_lag(struct cap_merge *m, size_t bytes)
{
	for (size_t i = 0; i < m->count; i++) {
		if (m->readers[i]) {
			cap_reader_set_release_lag(m->readers[i], bytes);
		}
	}
}

/*
 * First window of each of several inputs: a page, a head record or a few, which is all that
 * most of thousands of rotated captures hold at a time (the merge reads every input's first
 * record before it returns one); a window doubles at each refill, up to 2 MiB.
 */
#define CAP_MERGE_WINDOW_FIRST (4u << 10)

bool cap_merge_read_windowed(struct cap_merge *m)
{
	size_t fixed;

	if (m->started) {
		return false;
	}
	if (m->count == 1) {
		return m->readers[0] && cap_reader_read_windowed(m->readers[0], 0);
	}
	/* SIPNAB_MERGE_WINDOW: windows of that many bytes, never larger (tests: many refills) */
	fixed = sn_env_u32("SIPNAB_MERGE_WINDOW", 4096, 0);
	if (!m->pool) {
		m->pool = cap_window_pool_new();
	}
	for (size_t i = 0; i < m->count; i++) {
		if (m->readers[i]) {
			(void)cap_reader_read_windowed_growing(
				m->readers[i], fixed ? fixed : CAP_MERGE_WINDOW_FIRST, fixed, m->pool);
		}
	}
	return false;
}

size_t cap_merge_count(const struct cap_merge *m)
{
	return m->count;
}

void cap_merge_set_fence(struct cap_merge *m, const struct cap_window_hooks *hooks)
{
	for (size_t i = 0; i < m->count; i++) {
		if (m->readers[i]) {
			cap_reader_set_fence(m->readers[i], hooks, i);
		}
	}
}

struct cap_window_pool *cap_merge_window_pool(const struct cap_merge *m)
{
	return m->pool;
}

void cap_merge_free(struct cap_merge *m)
{
	if (!m) {
		return;
	}
	for (size_t i = 0; i < m->count; i++) {
		cap_reader_free(m->readers[i]);
	}
	cap_window_pool_free(m->pool);
	free(m->readers);
	free(m->heads);
	free(m->heap);
	free(m->waiting);
	free(m->order);
	free(m);
}
