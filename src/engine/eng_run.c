/*
 * eng_run.c - run the engine over a set of inputs on N cores and build the result.
 *
 * cores == 1: the calling thread reads and analyses every record itself (one file through its
 * mapping under its read lease, cap_merge_lease(), else in windows of the reader's own:
 * cap_reader_read_windowed()).
 * cores == N > 1 and one mapped input file: eng_split.c - every thread reads chunks of the
 * file and analyses one share of the host pairs (the reader is not one thread).
 * cores == N > 1 otherwise (several inputs merged by time, gzip, pipes): the calling thread
 * reads (cap_merge) and shards each record by the unordered
 * pair of its outermost IP addresses (cap_record_host_hash()) to one of N shards, so all
 * packets between two hosts - every fragment, TCP segment and RTP packet of them - reach the
 * same engine in capture order. Shard 0 is analysed by the calling thread itself between
 * reads, shards 1..N-1 by N-1 worker threads: N threads in all, one per core, none of them
 * only waiting. Records travel in batches of ENG_BATCH descriptors; the record
 * bytes are not copied (readers keep them valid until they are freed; streamed input until
 * give_back() sees every worker past them; several files, each read in windows of its own,
 * until fence() sees every worker past the window's records before the window is used
 * again, and retire() when the file ends; gzip files merged, their inflated bytes until
 * fence() sees every worker past them and their inflaters until retire_stream()). Each
 * worker owns one
 * struct eng; nothing is shared between workers, so they take no locks. When the input ends,
 * eng_result_build() merges the workers' outputs deterministically: the result is the same
 * for every N and either path.
 *
 * Environment (benchmarks and tests): SIPNAB_TIMING=1 prints the phases (sn_phase_end()); SIPNAB_NO_SPLIT=1
 * uses the single reader for a mapped file too; SIPNAB_MAPPED=1 reads a file through its
 * mapping instead of copying it into buffers, with no lease (for comparison; one input: merged
 * files are never mapped), SIPNAB_MAPPED=0 never reads the mapping (eng_env_map());
 * SIPNAB_FORCE_SPLIT=1 uses eng_split.c even
 * with one core.
 *
 * Hand-off: per worker an sn_queue (lock-free single-producer single-consumer ring) of full
 * batches and one of empty batches; a fixed number
 * of batches per worker bounds the memory in flight and makes the reader wait (offline input
 * is never dropped). Thread: eng_run() is called from one thread; the reading thread's part
 * and the workers run as one job on the pool's helpers (sn_pool_run()).
 */
#include "config.h"

#include "sipnab/eng_run.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sipnab/cap_decode.h"
#include "sipnab/sn_pool.h"
#include "sipnab/sn_queue.h"

#include "eng_split.h"

#define ENG_BATCH          512u /* records per batch */
/*
 * Records read at once by the one-core path, before any of them is analysed. Reading is a
 * chain of dependent loads (each header says where the next one is), each a miss to memory
 * unless the lines were fetched ahead; a long run of reads keeps the reader's prefetches and
 * the hardware's ahead of it, where 32 reads between analyses kept interrupting them
 * (c5k, one core: 32 -> 256 records took 0.93 of the time, 1,024 about as long as 2,048 and
 * 8,192). The reader also ends a batch after 1 MiB of input (cap_reader_next_batch()).
 */
#define ENG_READ_BATCH     1024u
#define ENG_BUCKETS        64u  /* host-pair buckets shared out between the threads */
#define ENG_BATCHES_PER_WK 8u   /* batches in flight per worker (keeps them well inside the
				 * reader's mapping window, see cap_reader.c) */

struct batch {
	uint64_t seq;                  /* per worker, from 1: the order batches were handed over */
	uint32_t count;                /* records used */
	bool last;                     /* end of input: the worker finishes */
	struct cap_record recs[ENG_BATCH];
};

struct worker {
	struct eng *eng;       /* owned; touched only by the worker thread until the job ends */
	struct sn_queue full;  /* reader -> worker: batches to analyse */
	struct sn_queue empty; /* worker -> reader: batches to refill */
	struct batch *cur;     /* reader side: the batch being filled */
	struct batch *pool;    /* the batches, owned */
	/* reader side: empty batches taken from the queue while waiting (fence()) */
	struct batch *stash[ENG_BATCHES_PER_WK];
	uint32_t nstash;
	/* for giving back transient input (streamed gzip) once analysed, reader side: */
	uint64_t next_seq;     /* seq of the next batch handed over */
	uint64_t firsts[ENG_BATCHES_PER_WK]; /* offset of the first record of batch seq, by
					      * seq % ENG_BATCHES_PER_WK */
	atomic_uint_fast64_t done; /* worker: seq of the last batch analysed */
};

/* A worker: analyse the batches handed over until the last one. */
static void worker_run(struct worker *w)
{
	for (;;) {
		struct batch *b = sn_queue_pop(&w->full);
		bool last = b->last;

		eng_packets(w->eng, b->recs, b->count);
		atomic_store_explicit(&w->done, b->seq, memory_order_release);
		b->count = 0;
		b->last = false;
		sn_queue_push(&w->empty, b);
		if (last) {
			break;
		}
	}
	eng_finish(w->eng);
}

/*
 * Streamed input (gzip) is given back once analysed, and with records in flight to workers
 * only the reading thread knows how far that is: up to the first record of each worker's
 * oldest batch not yet analysed (batches are analysed in the order handed over), or of the
 * batch it is filling. Returns the new released offset (a multiple of 64 KiB).
 */
static uint64_t give_back(const struct cap_reader *stream, struct worker *w, uint32_t n,
			  uint64_t reading, uint64_t released)
{
	uint64_t safe = reading;

	for (uint32_t i = 1; i < n; i++) {
		uint64_t done = atomic_load_explicit(&w[i].done, memory_order_acquire);

		if (done < w[i].next_seq) {
			safe = SN_MIN(safe, w[i].firsts[(done + 1) % ENG_BATCHES_PER_WK]);
		} else if (w[i].cur->count) {
			safe = SN_MIN(safe, w[i].cur->recs[0].offset);
		}
	}
	safe = cap_reader_release_floor(stream, safe);
	if (safe >= released + (4u << 20)) {
		cap_reader_advise(stream, released, safe - released, false);
		released = safe;
	}
	return released;
}

/*
 * Batches read between two looks whether another program waits for the file's lease
 * (cap_merge_lease_yield(): an fcntl() each): 8 of 1,024 records, about 2 MB of c5k and 1-2 ms
 * of its run, is how long such a program waits at most.
 */
#define ENG_LEASE_POLL 8u

/*
 * One reader under the file's lease reads it in stretches, each the way eng_ways.h picks
 * (through the mapping, or copied into a window of its own), and times each stretch whole,
 * its reading and its analysis, over the bytes read: the way also costs the analysis
 * something (what the copy evicts from the caches; the mapping's page walks when it reads a
 * packet's bytes). A stretch through the mapping is ENG_STRETCH bytes or more; a copied one
 * ends where its window is spent, so that it holds one refill (a pread() of 2 MiB) whatever
 * the batches. SIPNAB_READ_STRETCH=BYTES (tests) makes the stretches, and the window, that
 * small.
 */
#define ENG_STRETCH (2u << 20)

struct single_ways {
	struct eng_ways ways;
	const struct cap_reader *rd;
	enum eng_way way;
	uint64_t stretch; /* the stretch being read */
	uint64_t t0;      /* when it started */
	size_t from;      /* where it started */
	size_t bytes;     /* ENG_STRETCH, or SIPNAB_READ_STRETCH */
};

/* At a batch's end: when the stretch is over, note it and read the next one its way. */
static void single_stretch(struct single_ways *sw, struct cap_merge *m)
{
	size_t pos = cap_reader_pos(sw->rd);
	enum eng_way next;

	if (sw->way == ENG_WAY_MAP ? pos - sw->from < sw->bytes
				   : pos - sw->from < sw->bytes / 2 || !cap_reader_window_spent(sw->rd)) {
		return;
	}
	eng_ways_note(&sw->ways, sw->stretch, sw->way, eng_ways_now() - sw->t0, pos - sw->from);
	next = eng_ways_pick(&sw->ways, ++sw->stretch);
	if (next != sw->way &&
	    cap_merge_read_way(m, next == ENG_WAY_MAP, sw->bytes < ENG_STRETCH ? sw->bytes : 0)) {
		sw->way = next;
	}
	sw->t0 = eng_ways_now();
	sw->from = pos;
}

/* One thread reads and analyses; @p leased: the file is held still by its read lease
 * (cap_merge_lease()) until another program waits for it, and meanwhile read as @p map says
 * (through the mapping, or each stretch the way that costs least); then in windows. */
static struct eng_result *run_single(struct cap_merge *m, const struct eng_config *cfg,
				     enum eng_map map, bool leased, cap_merge_error_fn *on_error,
				     void *user)
{
	struct eng *e = eng_new(cfg);
	struct cap_record *recs = sn_xmalloc(ENG_READ_BATCH * sizeof(*recs));
	struct eng_result *r;
	uint32_t n, batches = 0;
	bool wanted = false;
	uint64_t wanted_at = 0;
	struct sn_phase ph;
	struct single_ways sw = {0};
	bool choosing = leased && (map == ENG_MAP_CHOOSE || map == ENG_MAP_ALTERNATE);

	sn_phase_start(&ph);
	/* a batch's records are used before the next batch is read: a small window is enough */
	cap_merge_set_release_lag(m, 2u << 20);
	eng_ways_init(&sw.ways, map);
	if (choosing) {
		sw.rd = cap_merge_reader(m, 0);
		sw.bytes = sn_env_u32("SIPNAB_READ_STRETCH", 64, ENG_STRETCH);
		sw.way = ENG_WAY_MAP; /* as cap_merge_lease() left it */
		if (eng_ways_pick(&sw.ways, 0) == ENG_WAY_COPY &&
		    cap_merge_read_way(m, false, sw.bytes < ENG_STRETCH ? sw.bytes : 0)) {
			sw.way = ENG_WAY_COPY;
		}
		sw.from = cap_reader_pos(sw.rd);
		sw.t0 = eng_ways_now();
	}
	while ((n = cap_merge_next_batch(m, recs, ENG_READ_BATCH, on_error, user)) > 0) {
		eng_packets(e, recs, n);
		/* the batch is analysed: the mapping may go */
		if (leased && ++batches % ENG_LEASE_POLL == 0 && cap_merge_lease_yield(m)) {
			leased = false;
			choosing = false;
			wanted = true;
			wanted_at = recs[n - 1].offset;
		}
		if (choosing) {
			single_stretch(&sw, m);
		}
	}
	if (leased) {
		cap_merge_unlease(m);
	}
	if (getenv("SIPNAB_TIMING") && (leased || wanted)) {
		fprintf(stderr, "sipnab: timing: one reader under the lease");
		if (wanted) {
			fprintf(stderr, " (the lease wanted at byte offset %llu)",
				(unsigned long long)wanted_at);
		}
		fputc('\n', stderr);
		eng_ways_print(&sw.ways, "stretches");
	}
	free(recs);
	eng_finish(e);
	sn_phase_end(&ph, "analyse");
	r = eng_result_build(&e, 1);
	sn_phase_end(&ph, "build");
	eng_free(e);
	sn_phase_end(&ph, "engfree");
	return r;
}

/* The reading thread's part and the workers' (sn_pool_run()). */
struct dispatch {
	struct cap_merge *m;
	cap_merge_error_fn *on_error;
	void *user;
	struct worker *w;
	uint32_t n;
	uint32_t main_buckets; /* buckets below this are the reading thread's own */
	const struct cap_reader *stream; /* streamed input to give back, or NULL */
	/* several inputs read in windows: per input and worker, the batch to wait for before
	 * the input's window of two refills ago is overwritten (fence()); NULL otherwise */
	uint64_t *marks;
	struct cap_window_hooks hooks;
	/* windows of inputs that ended, oldest first, each with the batch to wait for per
	 * worker (n entries from its marks) before it goes back to the merge's pool */
	struct retired *ret;
	size_t ret_head, ret_n, ret_cap;
	struct sn_phase start;           /* of the run (SIPNAB_TIMING) */
};

struct retired {
	uint8_t *win[2]; /* an input's windows (cap_window_hooks.retire) */
	size_t cap[2];
	struct cap_reader *stream; /* or a gzip input's reader (cap_window_hooks.retire_stream) */
	uint64_t *marks;
};

/* The batches that hold records now, per worker (marks[1..n-1]): the batch being filled
 * counts once it has records (its seq will be next_seq + 1). */
static void mark_now(const struct dispatch *d, uint64_t *marks)
{
	for (uint32_t i = 1; i < d->n; i++) {
		const struct worker *wk = &d->w[i];

		marks[i] = wk->cur->count ? wk->next_seq + 1 : wk->next_seq;
	}
}

static bool marks_done(const struct dispatch *d, const uint64_t *marks)
{
	for (uint32_t i = 1; i < d->n; i++) {
		if (atomic_load_explicit(&d->w[i].done, memory_order_acquire) < marks[i]) {
			return false;
		}
	}
	return true;
}

/* Give the retired windows that no batch in flight uses back to the pool (all: the workers
 * have finished). */
static void drain_retired(struct dispatch *d, bool all)
{
	while (d->ret_head < d->ret_n && (all || marks_done(d, d->ret[d->ret_head].marks))) {
		struct retired *e = &d->ret[d->ret_head++];

		for (int k = 0; k < 2; k++) {
			cap_window_pool_put(cap_merge_window_pool(d->m), e->win[k], e->cap[k]);
		}
		if (e->stream) {
			cap_reader_end_stream(e->stream);
		}
		free(e->marks);
	}
	if (d->ret_head == d->ret_n) {
		d->ret_head = d->ret_n = 0;
	}
}

/* Hand worker @p wk's batch over and take an empty one. */
static void hand_over(struct dispatch *d, struct worker *wk, uint64_t reading, uint64_t *released)
{
	struct batch *b = wk->cur;

	b->seq = ++wk->next_seq;
	wk->firsts[b->seq % ENG_BATCHES_PER_WK] = b->recs[0].offset;
	sn_queue_push(&wk->full, b);
	wk->cur = wk->nstash ? wk->stash[--wk->nstash] : sn_queue_pop(&wk->empty);
	if (d->stream) {
		*released = give_back(d->stream, d->w, d->n, reading, *released);
	}
	if (d->ret_n) {
		drain_retired(d, false);
	}
}

/* Hand worker @p wk's batch over, if it holds records (fence(), retire()). */
static void flush_batch(struct dispatch *d, struct worker *wk)
{
	uint64_t released = 0;

	if (wk->cur->count) {
		hand_over(d, wk, wk->cur->recs[0].offset, &released);
	}
}

/*
 * Several inputs read in windows (cap_reader_set_fence()): input @p input is about to
 * overwrite the window it read from before its last refill. Wait until every worker has
 * analysed the batches that held records at that refill (the batch being filled then is
 * handed over now if it still is), taking their empty batches back meanwhile, and note the
 * batches that hold records now, for the next refill. The wait is rare: a window is 2 MiB
 * of one input, and a worker has at most ENG_BATCHES_PER_WK batches in flight.
 */
static void fence(void *ctx, size_t input)
{
	struct dispatch *d = ctx;
	uint64_t *mark = &d->marks[input * d->n];

	for (uint32_t i = 1; i < d->n; i++) {
		struct worker *wk = &d->w[i];

		if (mark[i] > wk->next_seq) {
			flush_batch(d, wk);
		}
		while (atomic_load_explicit(&wk->done, memory_order_acquire) < mark[i]) {
			wk->stash[wk->nstash++] = sn_queue_pop(&wk->empty);
		}
	}
	mark_now(d, mark);
}

/*
 * An input ended: its windows go back to the pool once no batch in flight uses them.
 * The batches being filled are handed over first, whatever they hold, so that the window
 * waits only for batches the workers have: one filling slowly (a worker that gets a record
 * now and then, or none) held every ended file's windows out of the pool, and 200 rotated
 * files of one host pair at --cores 2 took 1.0-1.6 s and 210 MiB instead of 0.05 s and 5 MiB
 * (review of 8f12936). Handed over before the entry is made: hand_over() drains the list.
 */
static void retire_entry(struct dispatch *d, uint8_t *win[2], size_t cap[2],
			 struct cap_reader *stream)
{
	struct retired *e;

	for (uint32_t i = 1; i < d->n; i++) {
		flush_batch(d, &d->w[i]);
	}
	if (d->ret_n == d->ret_cap) {
		d->ret_cap = d->ret_cap ? 2 * d->ret_cap : 16;
		d->ret = sn_xrealloc(d->ret, d->ret_cap * sizeof(*d->ret));
	}
	e = &d->ret[d->ret_n++];
	for (int k = 0; k < 2; k++) {
		e->win[k] = win ? win[k] : NULL;
		e->cap[k] = cap ? cap[k] : 0;
	}
	e->stream = stream;
	e->marks = sn_xcalloc(d->n, sizeof(*e->marks));
	mark_now(d, e->marks);
	drain_retired(d, false);
}

static void retire(void *ctx, size_t input, uint8_t *win[2], size_t cap[2])
{
	(void)input;
	retire_entry(ctx, win, cap, NULL);
}

/* A gzip input ended: its inflater and inflated bytes go once no batch in flight uses them,
 * as an ended file's windows do. */
static void retire_stream(void *ctx, size_t input, struct cap_reader *r)
{
	(void)input;
	retire_entry(ctx, NULL, NULL, r);
}

/* Thread 0 reads, shards and analyses its own share; thread t > 0 is worker t. */
static void dispatch_main(void *arg, uint32_t t)
{
	struct dispatch *d = arg;
	struct worker *w = d->w;
	uint32_t n = d->n;
	struct cap_record rec;
	uint64_t released = 0;

	if (t > 0) {
		worker_run(&w[t]);
		return;
	}
	while (cap_merge_next(d->m, &rec, d->on_error, d->user) == SN_OK) {
		uint32_t bucket = cap_record_host_hash(&rec) % ENG_BUCKETS;
		uint32_t shard = bucket < d->main_buckets ?
				 0 : 1 + (bucket - d->main_buckets) % (n - 1);
		struct worker *wk = &w[shard];
		struct batch *b;

		if (shard == 0) {
			eng_packet(w[0].eng, &rec);
			continue;
		}
		b = wk->cur;
		b->recs[b->count++] = rec;
		if (b->count == ENG_BATCH) {
			hand_over(d, wk, rec.offset, &released);
		}
	}
	for (uint32_t i = 1; i < n; i++) {
		w[i].cur->last = true;
		sn_queue_push(&w[i].full, w[i].cur);
	}
	eng_finish(w[0].eng);
	sn_phase_end(&d->start, "read");
}

/*
 * Address space for each engine's message array from the start (eng_config.msgs_reserve): a
 * mapped file's length shared out over the engines, at most 32 MiB (155,344 messages) each;
 * none for gzip, a pipe or several files, whose arrays grow from small as before. Grown by
 * doubling, the array moved at every doubling past glibc's mmap threshold (realloc() ->
 * mremap()), and on the development VM the first access to a page after such a move costs
 * 2.5-5.7 µs: the pass over c5k's 35,000 messages at the end of the analysis took 10.1-11.9
 * ms at one core, 0.05-2.5 ms over an array that never moved. Pages never written cost no
 * memory; the address space is bounded by the input so that small inputs take little of it
 * (AddressSanitizer writes shadow for all of it: 4 MiB per 32 MiB).
 */
#define MSGS_RESERVE_MAX ((size_t)32 << 20)

/*
 * Address space for each engine's RTP flow array (eng_config.flows_reserve): a mapped file's
 * length shared out over the engines, at most 32 MiB (79,137 flows of 424 bytes) each. An
 * engine that outgrows its first 256 flows moves them there once (eng_media.c); before, the
 * array doubled, copied at every doubling at two cores (sn_xgrow() under the heap's pad) and
 * moved by mremap() past the pad and at one core, after which its pages were slow to touch
 * again (as the messages' above). bench/ab.sh against c7726d2, make pgo, 2026-12-03: the
 * 2,000-call sweep capture (4,000 flows) 0.951 of the time at one core and 0.986 at two (41
 * rounds), 8,000 calls 0.949 and 0.979 (15 rounds), 20,000 calls 0.892 and 0.954 (11 rounds);
 * c5k (100 flows an engine at two cores, never moved) 0.996 and 0.992 (41 rounds). Moving at
 * the first flow instead gave c5k's engines a huge page each for their 100 flows: 1.033 at
 * two cores.
 */
#define FLOWS_RESERVE_MAX ((size_t)32 << 20)

/*
 * For a mapped file the engines' keep arenas (the message summaries' strings and SDP) start
 * with whole huge pages, ENG_KEEP_HUGE shared out over them (eng_config.keep_huge; 4 MiB each
 * at two cores, none past four): on the development VM their first writes took about 9 % of
 * c5k's time at one core, a fresh 4 KiB page costing about 12 µs and a 2 MiB one 0.13-0.6 ms.
 * The part of the last huge block an engine does not fill is resident all the same, hence the
 * bound: at most 8 MiB more memory in all, nothing more when the arenas fill their huge blocks
 * (20,000 calls: 10 MiB of summaries an engine at two cores). Streamed input (gzip, pipes)
 * keeps ordinary blocks: its memory is bounded by its own blocks in flight
 * (tests/cli_streamed.sh).
 */
#define ENG_KEEP_HUGE ((size_t)8 << 20)

static size_t keep_huge(const struct cap_merge *m, uint32_t n)
{
	const struct cap_reader *rd = cap_merge_single(m);

	return rd && cap_reader_mapped_length(rd) ? ENG_KEEP_HUGE / n : 0;
}

/* An engine's share of a mapped file's length, at most @p max; 0 for any other input. */
static size_t input_share(const struct cap_merge *m, uint32_t n, size_t max)
{
	const struct cap_reader *rd = cap_merge_single(m);
	size_t len = rd ? cap_reader_mapped_length(rd) : 0;

	return SN_MIN(max, len / n);
}

struct eng_result *eng_run(struct cap_merge *m, const struct eng_run_config *run,
			   cap_merge_error_fn *on_error, void *user)
{
	uint32_t n = run->cores ? run->cores : 1;
	struct eng_run_config with_reserve = *run;
	const struct eng_run_config *cfg = &with_reserve;
	struct worker *w;
	struct eng **engines;
	struct eng_result *r;
	struct dispatch d = {0};
	struct sn_phase ph;

	sn_phase_start(&ph);
	if (!with_reserve.eng.msgs_reserve) {
		with_reserve.eng.msgs_reserve = input_share(m, n, MSGS_RESERVE_MAX);
	}
	if (!with_reserve.eng.flows_reserve) {
		with_reserve.eng.flows_reserve = input_share(m, n, FLOWS_RESERVE_MAX);
	}
	if (!with_reserve.eng.keep_huge) {
		with_reserve.eng.keep_huge = keep_huge(m, n);
	}
	with_reserve.eng.merge_keys = n > 1;
	if (n == 1 && (!getenv("SIPNAB_FORCE_SPLIT") || !cap_merge_single(m))) {
		/* one file is read through its mapping while its read lease holds it still (until
		 * another program waits for it: run_single()), else in windows of the reader's own
		 * (cap_reader_read_windowed(); SIPNAB_MAPPED=1 reads it through its mapping with no
		 * lease, for comparison). c5k took 0.948 and 0.955 of the time through the mapping
		 * (SIPNAB_MAPPED=1, bench/ab.sh, 31 rounds each), the 2,000-call sweep capture 0.994. */
		enum eng_map map = eng_env_map();
		bool leased = map != ENG_MAP_NEVER && map != ENG_MAP_ALWAYS && cap_merge_lease(m);

		if (leased || (map != ENG_MAP_ALWAYS && cap_merge_read_windowed(m))) {
			/* messages are referred to there once the records are read in windows */
			with_reserve.eng.input_map = cap_reader_map(cap_merge_reader(m, 0));
		}
		return run_single(m, &cfg->eng, map, leased, on_error, user);
	}
	/* either path runs on the pool's helpers: started now, to be asleep and ready when the
	 * engines are set up */
	sn_pool_start(n);
	if (cap_merge_single(m) && !getenv("SIPNAB_NO_SPLIT")) {
		/* one mapped file: every thread reads chunks of it (eng_split.c), through the
		 * mapping under a read lease, else copied into buffers of its own: messages are
		 * referred to in the mapping */
		with_reserve.eng.input_map = cap_reader_map(cap_merge_single(m));
		engines = sn_xcalloc(n, sizeof(*engines));
		for (uint32_t i = 0; i < n; i++) {
			engines[i] = eng_new(&cfg->eng);
		}
		if (eng_split_run(cap_merge_single(m), engines, n, on_error, user)) {
			sn_phase_end(&ph, "analyse");
			r = eng_result_build(engines, n);
			sn_phase_end(&ph, "build");
			for (uint32_t i = 0; i < n; i++) {
				eng_free(engines[i]);
			}
			free(engines);
			sn_phase_end(&ph, "engfree");
			return r;
		}
		for (uint32_t i = 0; i < n; i++) {
			eng_free(engines[i]);
		}
		free(engines);
	}
	w = sn_xcalloc(n, sizeof(*w));
	engines = sn_xcalloc(n, sizeof(*engines));
	w[0].eng = eng_new(&cfg->eng); /* shard 0: the calling thread */
	engines[0] = w[0].eng;
	for (uint32_t i = 1; i < n; i++) {
		w[i].eng = eng_new(&cfg->eng);
		engines[i] = w[i].eng;
		atomic_init(&w[i].done, 0);
		sn_queue_init(&w[i].full, ENG_BATCHES_PER_WK);
		sn_queue_init(&w[i].empty, ENG_BATCHES_PER_WK);
		w[i].pool = sn_xcalloc(ENG_BATCHES_PER_WK, sizeof(*w[i].pool));
		for (uint32_t j = 1; j < ENG_BATCHES_PER_WK; j++) {
			sn_queue_push(&w[i].empty, &w[i].pool[j]);
		}
		w[i].cur = &w[i].pool[0];
	}
	/*
	 * Host pairs go to 64 buckets. The reading thread also reads, so it takes fewer buckets
	 * (3/4 of an equal share); the workers share the rest. Any assignment of host pairs to
	 * engines gives the same result, so this balance is free to change.
	 */
	d.m = m;
	d.on_error = on_error;
	d.user = user;
	d.w = w;
	d.n = n;
	d.start = ph;
	d.main_buckets = (ENG_BUCKETS * 3u) / (4u * n);
	d.stream = cap_merge_single(m);
	if (d.stream && !cap_reader_transient(d.stream)) {
		d.stream = NULL;
	}
	if (cap_merge_count(m) > 1) {
		/* several files: each read with pread() in windows of its own
		 * (cap_reader_open_merged()), so that one cut while it is read ends its input
		 * instead of the process (SIGBUS); a window stays until the workers are done with
		 * its records (fence()) */
		(void)cap_merge_read_windowed(m);
		/* gzip files: what the reader has left this far behind is given back once the
		 * workers are past it (fence()), as windows are */
		cap_merge_set_release_lag(m, 4u << 20);
		d.marks = sn_xcalloc(cap_merge_count(m) * n, sizeof(*d.marks));
		d.hooks = (struct cap_window_hooks){
			.fence = fence, .retire = retire, .retire_stream = retire_stream, .ctx = &d};
		cap_merge_set_fence(m, &d.hooks);
	}
	/* the reading thread and the workers run at once, on the pool's helpers */
	sn_pool_run(n, dispatch_main, &d);
	if (d.marks) {
		cap_merge_set_fence(m, NULL);
		drain_retired(&d, true);
		free(d.ret);
		free(d.marks);
	}
	sn_phase_end(&ph, "analyse");
	r = eng_result_build(engines, n);
	sn_phase_end(&ph, "build");
	eng_free(w[0].eng);
	for (uint32_t i = 1; i < n; i++) {
		eng_free(w[i].eng);
		sn_queue_cleanup(&w[i].full);
		sn_queue_cleanup(&w[i].empty);
		free(w[i].pool);
	}
	free(engines);
	free(w);
	sn_phase_end(&ph, "engfree");
	return r;
}
