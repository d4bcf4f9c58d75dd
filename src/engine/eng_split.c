/*
 * eng_split.c - eng_run() over one mapped capture file on N threads that all read and all
 * analyse (sharded reading).
 *
 * The file is cut into chunks of 2 MiB less 64 KiB (smaller past six threads at once, and
 * through the mapping: SPLIT_BUF_BYTES).
 * Any thread may read ("scan") any chunk: under the file's read lease (cap_reader_lease(),
 * struct split) it prefaults the chunk's pages of the mapping and reads them there, or copies
 * them, whichever way has cost least so far (eng_ways.h); without a lease it copies the
 * chunk's bytes and SPLIT_TAIL past them into a buffer with pread() (fill();
 * a record reaching past the buffer is read into one of the cursor's own: cap_cursor_fill()).
 * It finds the chunk's first record by resynchronisation (cap_cursor_resync()),
 * reads the records that start inside the chunk and sorts them by the host pair of their
 * outermost IP addresses into one list per thread. Thread i then analyses
 * list i of every chunk, chunk after chunk, with its own engine: every host pair reaches one
 * engine in capture order, exactly as in the single-reader path, so the result is the same
 * for every N.
 *
 * A resynchronised start can be wrong (a pcap stored inside a packet), and a pcapng chunk
 * can depend on the blocks before it (an IDB, an SPB's timestamp). So chunks are verified in
 * order before anyone analyses them: chunk c is right when it starts where chunk c-1 ended
 * (cap_cursor_pos()) with the state chunk c-1 ended with; otherwise it is read again from
 * there. The records analysed are therefore always those of one sequential reader. A chunk
 * that ends in an error (truncated or corrupt record) ends the input there, as it would for a
 * sequential reader; so does a file cut while it is read (a capture rotated under sipnab):
 * the chunk that reads short ends at the cut record, and the mapping, whose lost pages would
 * kill the process (SIGBUS), is not read: the cut waits for the lease to go, and the chunks
 * claimed from then on are read with pread().
 *
 * Hand-off: a chunk's lists are written by the thread that scanned it and published by the
 * verified-chunk counter (release store); a thread analyses chunk c without a lock once it
 * reads verified > c (acquire load), and counts the chunk done with an atomic decrement.
 * The lock is taken a few times per chunk (claiming a chunk to scan, verifying,
 * recycling the slots, sleeping when there is nothing to do), never per packet. At most
 * n + 2 chunks are in flight, for n no more than the CPUs (one per buffer, or as many read
 * through the mapping; nslots with SIPNAB_MAPPED=1); a chunk's buffer is used again, and its
 * pages of the mapping are given back to the kernel (cap_reader_advise(), in whole 2 MiB
 * blocks, SPLIT_GIVE_MIN at a time: recycle()), once every thread has analysed it, so
 * resident memory stays bounded however large the file.
 */
#include "config.h"

#include "eng_split.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sipnab/cap_decode.h"
#include "sipnab/sn_pool.h"

#define SPLIT_TAIL (64u << 10) /* bytes read past a chunk's end, for its last records (fill()) */
/*
 * Bytes of the file per chunk, at most (SIPNAB_SPLIT_CHUNK: tests): with SPLIT_TAIL, one 2 MiB
 * huge page of buffer. A buffer of 2 MiB + 64 KiB faulted its last 64 KiB in 16 small pages at
 * its first fill, or a whole second huge page where two buffers' advised ranges met (14 huge
 * pages a run on the 2,000-call sweep capture at --cores 2, 11 now): 0.960 of the time there
 * (31 paired rounds), 4.2 MiB less peak RSS; c5k 1.001.
 */
#define SPLIT_CHUNK   ((2u << 20) - SPLIT_TAIL)
#define SPLIT_CHUNK_MAPPED (2u << 20) /* the same, read through the mapping (SIPNAB_MAPPED) */
#define SPLIT_CHUNK_MIN (256u << 10) /* and at least (see SPLIT_INFLIGHT) */
/* Read through the mapping (SIPNAB_MAPPED): the bytes of the file in flight (the chunks of
 * the nslots slots, mapped in until every thread has analysed them); the chunk is
 * SPLIT_INFLIGHT / nslots within the bounds above. With 2 MiB chunks whatever the thread
 * count, the file's resident pages grew with it (2n + 2 chunks: 36 MiB at 8 threads, 68 MiB
 * at 16) and so did the record lists (n per slot). */
#define SPLIT_INFLIGHT (16u << 20)
/*
 * Read into buffers (fill()): the chunk is SPLIT_CHUNK, each buffer one huge page, while the
 * buffers fit in this. There is a buffer for each thread that can run at once (the threads,
 * at most the CPUs: sn_pool_cpus()) and 2 more (bufs_max), so up to six threads running at
 * once; past that, the chunk is SPLIT_INFLIGHT / nslots as through the mapping. Threads past
 * the CPUs took a buffer each, and their chunks were shrunk to fit SPLIT_INFLIGHT, so that
 * the buffers were not huge pages but faulted in 4 KiB pages at their first fill (about 13 us
 * each on the development VM). c5k on its two CPUs, bench/ab.sh (make pgo, 15-21 paired
 * rounds) against dbd801e: --cores 4 0.114 -> 0.077 s (2,840 page faults a run -> 560, 91 %
 * of them in the buffers' first pread()), peak RSS 37.8 -> 36.0 MiB; --cores 8 0.132 ->
 * 0.100 s, 46.5 MiB both; --cores 16 0.173 -> 0.128 s (perf stat -r 7), 38-39 MiB both.
 */
#define SPLIT_BUF_BYTES (16u << 20)
#define SPLIT_BUCKETS 65536u     /* host-pair buckets, dealt out to the threads */
#define SPLIT_UNOWNED 0xffffu
/* The record lists' shared block (struct split, list_mem) at most: sets past it start their
 * lists empty. The block's size grows with the square of the thread count (the sets with n,
 * each set's lists with n): uncapped, 99 MiB at 128 threads, where the lists it replaces
 * cost only what they held (review of 4ae7c7b). */
#define SPLIT_LIST_MEM_MAX ((size_t)8 << 20)
/*
 * The mapping is given back this much at a time at least (all that is left at the end of the
 * input): every give-back of pages that two or more threads have mapped makes the kernel
 * interrupt the other CPUs to flush their TLBs, an IPI that on the development VM traps to
 * the hypervisor on both sides (perf: smp_call_function_many_cond and native_write_msr, about
 * 1 % of a --cores 2 run of c5k, none at one core). A give-back a chunk, 63 a run of c5k:
 * in two blocks of 2 MiB, bench/ab.sh 0.986 and 0.984 of the time at --cores 2 (401 rounds
 * each), peak RSS 27.3 -> 29.3 MiB; in four, 0.977-0.992 in four runs, 31.4-33.3 MiB.
 */
#define SPLIT_GIVE_MIN ((size_t)4 << 20)

enum slot_state {
	SLOT_FREE,     /* not in use */
	SLOT_SCANNING, /* a thread is reading it */
	SLOT_SCANNED,  /* read, not yet verified */
	SLOT_RESCAN,   /* verification failed: to be read again from rescan_from */
	SLOT_VERIFIED, /* analysable */
};

/*
 * A thread's records of one chunk. The thread scanning the chunk writes v, n and cap at every
 * record, so each list has a cache line of its own: the lists were 16 bytes each, beside the
 * next slot's cursor in memory, and two threads scanning two chunks at once passed that line
 * between them (c5k at --cores 2, the analysis step: 0.948 and 0.984 of the time, whole runs
 * 0.979; 31-41 paired rounds).
 */
struct rec_list {
	_Alignas(SN_CACHE_LINE) struct cap_record *v;
	uint32_t n, cap;
	bool own; /* v is a block of its own, not a part of list_mem (struct split) */
};

struct slot {
	uint64_t chunk;
	enum slot_state state;
	bool rescan;            /* this read starts at a verified boundary */
	bool found;             /* a first record was found */
	size_t start;           /* its offset */
	size_t end;             /* where the next chunk starts (cursor position at the end) */
	size_t rescan_from;
	enum sn_status st;      /* SN_ENOTFOUND (clean end of the chunk), SN_ETRUNC, SN_EPARSE */
	struct cap_cursor *cur; /* the read's cursor (its state at the end); owned */
	struct rec_list *lists; /* one per thread, while the slot is in use; owned */
	uint8_t *buf;           /* the chunk's bytes (fill()), while the slot is in use; owned */
	bool mapped;            /* read through the mapping instead (fill()) */
	/* for the choice of way: how long the read took (scan()) and, added as each thread has
	 * analysed its list, the analysis (whose reads of the packets' bytes cost what the
	 * way costs too: through the mapping, a thread that did not read the chunk walks its
	 * pages again); noted when the slot is freed, for a chunk read once (timed) */
	atomic_uint_fast64_t ns;
	bool timed;
	atomic_uint pending;    /* threads still to analyse it */
};

struct split {
	const struct cap_reader *rd;
	uint32_t n;
	size_t first, end;
	size_t base;  /* chunk c starts at base + c * chunk (the first at first): base is first
		       * rounded down to a whole chunk, so chunks start where the mapping's
		       * huge pages do (see recycle()) */
	size_t given; /* the mapping before this offset was given back */
	size_t chunk; /* bytes per chunk */
	uint64_t chunks;
	uint32_t nslots;
	struct slot *slots; /* chunk c lives in slots[c % nslots] */
	/*
	 * Lists of freed slots, the last freed on top: a chunk claimed to be read takes the
	 * lists that the threads have just finished analysing, whose lines are still in the
	 * caches and whose pages are mapped. Each slot kept lists of its own, so the reading went
	 * round all nslots slots' lists (2.4 MiB at two threads) and wrote records into lines
	 * that had long left the caches, and mapped every page of them in each run.
	 */
	struct rec_list **spare;
	uint32_t nspare;
	/* The chunks' buffers (fill()) of freed slots, the last freed on top, for the same reason:
	 * a buffer used again is mapped and in the caches; a new one is a fresh huge page */
	uint8_t **spare_bufs;
	uint32_t nspare_bufs;
	/* Chunks in flight, at most one per thread that can run at once and 2 more (n + 2, with no
	 * more threads than CPUs; 2n + 2 with SIPNAB_MAPPED=1): no chunk is claimed past them
	 * (claim()), so there are never more buffers than that, each one taken from the spare ones
	 * or made when none is spare (take_buf()). Every slot with a buffer of its own kept the
	 * high-water mark of them resident: at 16 threads and under the sanitizers, peak RSS came
	 * 18-34 MiB above two threads' (tests/split_reader.sh allowed 24). A chunk claimed past
	 * the buffers was read through the mapping, 0-9 of a run's chunks at two cores (26-259
	 * chunks, the sweep captures and c5k): a file cut under the reader then killed it
	 * (SIGBUS). Waiting for a buffer instead took 0.987 of the time on the 2,000-call
	 * capture (31 rounds), 0.982 on 8,000 calls, 1.012 on c5k, 0.991 on 20,000 calls
	 * (bench/ab.sh, paired). */
	uint32_t bufs_max;
	/*
	 * Chunks claimed now may be read through the mapping (prefaulted) instead of copied into
	 * buffers: under the file's read lease (then each the way eng_ways.h picks: ways), or
	 * always with SIPNAB_MAPPED=1 (eng_env_map()). On the VM of 2026-12-02 the copy was the
	 * largest cost of reading at two cores: the kernel's _copy_to_iter took 1,027 samples
	 * of eight c5k runs at one core and 2,150 at two (perf, 10 kHz), and the buffers are
	 * fresh memory, four huge pages a run at two cores. Read through the
	 * mapping under SIPNAB_MAPPED=1, c5k at --cores 2 took 0.834, 0.949, 0.949 and 0.975 of
	 * the time (bench/ab.sh, 21-31 rounds), 0.872 on a capture just written (its page-cache
	 * state as written), the 2,000-call sweep capture 0.950.
	 *
	 * A file cut under the reader loses the mapped pages past its new end, and reading one
	 * kills the process (SIGBUS). Under the lease, whoever cuts the file (or opens it to
	 * write) waits until sipnab lets go; a claim that finds someone waiting (lease_poll())
	 * reads the chunks from then on with pread(), and the lease goes once no chunk read
	 * through the mapping is in flight (map_live; lease_release()). Where there is no lease
	 * to be had (the file is open for writing elsewhere, not the user's, on a file system
	 * without leases), every chunk is read with pread().
	 */
	bool mapped;
	/* under the lease, each chunk is read the way that has cost least (eng_ways.h), its
	 * read and its analysis timed (struct slot) */
	struct eng_ways ways;
	bool bounded;      /* no more chunks in flight than bufs_max (all but SIPNAB_MAPPED=1) */
	bool leased;       /* the lease is held */
	uint32_t map_live; /* chunks in flight read through the mapping */
	uint64_t map_chunks;  /* chunks read through the mapping (SIPNAB_TIMING prints it; when
			       * any was, recycle() gives back) */
	bool wanted;          /* someone waited for the lease, */
	uint64_t wanted_at;   /* when this many chunks were claimed */
	/*
	 * The lists' records: list_cap for each of the n lists of each of the list_sets sets, set k
	 * taken when the k-th set is first made (claim()); a list that outgrows its part moves to
	 * a block of its own (list_push()), and the lists of the sets past list_sets start empty
	 * and get blocks of their own. One block in huge pages (sn_xmalloc_huge(): 4.5 MiB at two
	 * threads, at most SPLIT_LIST_MEM_MAX) instead of one each: the lists took about 230 of the 2,000-call
	 * capture's 614 page faults at --cores 2, 320 of c5k's 680, at about 12 µs each on the
	 * development VM. At two cores c5k took 0.963-0.989 of the time and the 2,000-call
	 * capture 0.967-0.990 (bench/ab.sh, 21-31 rounds, three times), for 1.8-3.8 MiB more
	 * peak RSS.
	 */
	struct cap_record *list_mem;
	void *block;        /* owner, then list_mem: one allocation (eng_split_run()) */
	uint32_t list_sets; /* sets it has room for: min(nslots, chunks), within the cap */
	uint32_t nsets;     /* sets made */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	uint64_t next_scan;        /* next chunk to read for the first time */
	atomic_uint_fast64_t verified; /* chunks [0, verified) are verified */
	atomic_uint_fast64_t last;     /* chunks >= last are past the end of the input */
	uint64_t released;         /* chunks [0, released) analysed by all, slots free */
	size_t expect;             /* where the chunk after the last verified one starts */
	bool dirty;                /* a verified chunk changed the pcapng state */
	struct cap_cursor *tmpl;   /* state at the first record; owned */
	struct cap_cursor *state;  /* state at expect; owned */
	uint64_t rescans;          /* chunks read again (SIPNAB_TIMING prints it) */
	enum sn_status err_st;     /* SN_OK, or how the input ended early */
	struct sn_diag err;
	struct eng **engines;
	/*
	 * bucket -> thread. The buckets met in the first chunk are dealt round-robin in the
	 * order they first appear there, by the thread that reads it (scan()); any other bucket
	 * goes to bucket % n. The main host pairs of a capture are usually there, and are then
	 * shared out evenly whatever their addresses hash to: c5k's 100 host pairs split
	 * 267,500/267,500 records at 2 cores, where bucket % n alone gave 256,800/278,200. The
	 * assignment depends only on the file, n and the chunk size, so -l and -R (which bound
	 * each worker) behave the same every run. No record of a later chunk is sorted before
	 * the deal is done (dealt; wait_dealt()), and the table is read-only after it.
	 *
	 * The deal was a pass of its own over the file's first 2 MiB before the threads started,
	 * with the other CPU idle: 0.8-1.4 ms of most runs of c5k at --cores 2 (plain build), up to
	 * 5 ms, mostly the first writes to the table's huge page and the buffer's (0.17-4.4 ms
	 * each), and then the first chunk was read again. Now the other threads read their first
	 * chunks meanwhile.
	 */
	uint16_t *owner; /* SPLIT_BUCKETS entries, at the start of block */
	atomic_bool dealt; /* the deal is done (set under lock, with a broadcast) */
	/* first capacity of a record list: a thread's share of a chunk of 128-byte records, so
	 * a list that is used is sized once (the lists are reused chunk after chunk; growing
	 * them by doubling copied them and faulted them in again) and one never used costs
	 * nothing (many threads). Records of 256 bytes, the size before, were too many for
	 * c5k's 245-byte ones: every list grew once a run. */
	uint32_t list_cap;
};

struct split_thread {
	struct split *sp;
	uint32_t id;
	uint64_t next; /* next chunk this thread analyses */
	uint64_t records, scanned; /* for SIPNAB_TIMING */
};

static struct slot *slot_of(struct split *sp, uint64_t chunk)
{
	return &sp->slots[chunk % sp->nslots];
}

static void list_push(struct rec_list *l, const struct cap_record *rec, uint32_t first_cap)
{
	if (l->n == l->cap) {
		l->cap = l->cap ? l->cap * 2 : first_cap;
		if (l->own || !l->v) {
			l->v = sn_xrealloc(l->v, l->cap * sizeof(*l->v));
		} else {
			/* out of its part of list_mem, which stays where it is */
			struct cap_record *v = sn_xmalloc(l->cap * sizeof(*l->v));

			memcpy(v, l->v, l->n * sizeof(*l->v));
			l->v = v;
		}
		l->own = true;
	}
	l->v[l->n++] = *rec;
}

/* The thread that analyses bucket @p b. */
static uint32_t owner_of(const struct split *sp, uint32_t b)
{
	uint16_t o = sp->owner[b];

	return o != SPLIT_UNOWNED ? o : b % sp->n;
}

/*
 * Read the file's bytes from @p lo to @p hi and SPLIT_TAIL past it (for the chunk's last
 * records) into @p buf for cursor @p c (cap_cursor_fill()): copied with pread() instead of
 * mapped, what mapping them cost depends on how the page cache holds the file (4-64 KiB
 * folios after a capture tool wrote it or cat read it: see cap_reader_read_windowed()).
 */

static void fill(struct split *sp, struct slot *s, size_t lo, size_t hi)
{
	if (s->mapped) {
		cap_reader_advise(sp->rd, lo, hi - lo, true);
		return;
	}
	(void)cap_cursor_fill(s->cur, s->buf, lo, SN_MIN(hi + SPLIT_TAIL, sp->end) - lo);
}

/* Wait until the buckets are dealt (no lock held). */
static void wait_dealt(struct split *sp)
{
	if (atomic_load_explicit(&sp->dealt, memory_order_acquire)) {
		return;
	}
	pthread_mutex_lock(&sp->lock);
	while (!atomic_load_explicit(&sp->dealt, memory_order_relaxed)) {
		sn_pool_wait(&sp->cond, &sp->lock);
	}
	pthread_mutex_unlock(&sp->lock);
}

/* Read the first chunk's records into its lists, dealing the buckets met (see struct split),
 * and say that the deal is done. */
static enum sn_status scan_dealing(struct split *sp, struct slot *s)
{
	struct cap_record rec;
	enum sn_status st;
	uint32_t dealt = 0;

	memset(sp->owner, 0xff, SPLIT_BUCKETS * sizeof(*sp->owner));
	while ((st = cap_cursor_next(s->cur, &rec)) == SN_OK) {
		uint32_t b = cap_record_host_hash(&rec) % SPLIT_BUCKETS;

		if (sp->owner[b] == SPLIT_UNOWNED) {
			sp->owner[b] = (uint16_t)(dealt++ % sp->n);
		}
		list_push(&s->lists[sp->owner[b]], &rec, sp->list_cap);
	}
	pthread_mutex_lock(&sp->lock);
	atomic_store_explicit(&sp->dealt, true, memory_order_release);
	pthread_cond_broadcast(&sp->cond);
	pthread_mutex_unlock(&sp->lock);
	return st;
}

/*
 * A chunk's records are read SCAN_BATCH at a time before any is pushed to its list. Read one at
 * a time, each record was written field by field into a local by cap_cursor_next() and at
 * once copied into its list 16 bytes at a time: a load that spans several stores still
 * in flight cannot take its bytes from them, and waits until they have reached the cache,
 * behind the stores of the records before it into lists that miss the cache. perf put 55 % of
 * split_main()'s samples on that copy. Read in batches, a record is copied once its stores
 * are long written: c5k at --cores 2 took 0.942 of the time (bench/ab.sh, 61 rounds, make
 * pgo, 2026-12-03 16:45 UTC), the 2,000-call sweep capture 0.980 (41 rounds); the reports are
 * the same. Twenty minutes later, with the machine faster, the same pair gave 1.015 (61
 * rounds): split_main() then had a tenth as many samples on the copy (121 against 1,345 in
 * ten runs), and the wait comes and goes with how long the stores take to reach the cache.
 * At 17:30 UTC: 1.014 (61 rounds), then 0.959 (101 rounds).
 */
#define SCAN_BATCH 32

/* scan() but for the buffer and the timing. */
static void scan_chunk(struct split *sp, struct slot *s)
{
	size_t lo = SN_MAX(sp->first, sp->base + s->chunk * sp->chunk);
	size_t hi = s->chunk + 1 == sp->chunks ? sp->end : sp->base + (s->chunk + 1) * sp->chunk;
	struct cap_record recs[SCAN_BATCH];
	enum sn_status st;

	for (uint32_t i = 0; i < sp->n; i++) {
		s->lists[i].n = 0;
	}
	if (!s->rescan) {
		/* a rescan's cursor holds the verified state at rescan_from (set when it was
		 * marked) */
		cap_cursor_copy_state(s->cur, sp->tmpl);
	}
	fill(sp, s, lo, hi);
	if (s->rescan) {
		s->found = true;
		s->start = s->rescan_from;
		cap_cursor_seek(s->cur, s->start, hi, false);
	} else if (s->chunk == 0) {
		s->found = true;
		s->start = sp->first;
		cap_cursor_seek(s->cur, s->start, hi, false);
		s->st = scan_dealing(sp, s);
		s->end = cap_cursor_pos(s->cur);
		return;
	} else {
		s->found = cap_cursor_resync(s->cur, lo, hi, &s->start) == SN_OK;
		if (!s->found) {
			s->end = hi;
			s->st = SN_ENOTFOUND;
			return;
		}
		cap_cursor_seek(s->cur, s->start, hi, true);
	}
	wait_dealt(sp);
	do {
		uint32_t k = 0;

		while (k < SCAN_BATCH && (st = cap_cursor_next(s->cur, &recs[k])) == SN_OK) {
			k++;
		}
		for (uint32_t i = 0; i < k; i++) {
			list_push(&s->lists[owner_of(sp, cap_record_host_hash(&recs[i]) %
							     SPLIT_BUCKETS)],
				  &recs[i], sp->list_cap);
		}
	} while (st == SN_OK);
	s->end = cap_cursor_pos(s->cur);
	s->st = st;
}

/* Read chunk s->chunk into its lists (no lock held; the slot is this thread's), timed. */
static void scan(struct split *sp, struct slot *s)
{
	uint64_t t0;

	if (!s->mapped && !s->buf) {
		/* a fresh buffer, as large as a chunk's fill() can be (all of a small file, in a
		 * huge page from 256 KiB on: sn_huge_round()), faulted in before the read is
		 * timed, so that the choice of way weighs what reading costs from then on */
		size_t len = sn_huge_round(SN_MAX(SN_MIN((size_t)sp->chunk + SPLIT_TAIL,
							 sp->end - sp->first), 64u),
					   SN_HUGE_WORTH);

		s->buf = sn_xmalloc_huge(len);
		sn_mem_populate(s->buf, len);
	}
	t0 = eng_ways_now();
	scan_chunk(sp, s);
	atomic_store_explicit(&s->ns, eng_ways_now() - t0, memory_order_relaxed);
}

/* Verify the scanned chunks in order (lock held). */
static void verify(struct split *sp)
{
	for (;;) {
		uint64_t c = atomic_load_explicit(&sp->verified, memory_order_relaxed);
		struct slot *s;

		if (c >= atomic_load_explicit(&sp->last, memory_order_relaxed) || c >= sp->next_scan) {
			return;
		}
		s = slot_of(sp, c);
		if (s->state != SLOT_SCANNED) {
			return;
		}
		if (!s->rescan && c > 0 &&
		    (!s->found || s->start != sp->expect || sp->dirty ||
		     cap_cursor_needs_prev(s->cur))) {
			/* read it again from where the chunk before ended, with its state */
			s->state = SLOT_RESCAN;
			s->rescan = true;
			sp->rescans++;
			s->rescan_from = sp->expect;
			cap_cursor_copy_state(s->cur, sp->state);
			return;
		}
		if (s->st != SN_ENOTFOUND) {
			sp->err_st = s->st;
			sp->err = *cap_cursor_error(s->cur);
			atomic_store_explicit(&sp->last, c + 1, memory_order_relaxed);
		}
		sp->expect = s->end;
		if (s->found && cap_cursor_changed(s->cur)) {
			sp->dirty = true;
		}
		if (s->found) {
			cap_cursor_copy_state(sp->state, s->cur);
		}
		s->state = SLOT_VERIFIED;
		atomic_store_explicit(&sp->verified, c + 1, memory_order_release);
	}
}

/* Let the lease go once new chunks are read with pread() and no chunk read through the
 * mapping is in flight (lock held). */
static void lease_release(struct split *sp)
{
	if (sp->leased && !sp->mapped && sp->map_live == 0) {
		cap_reader_unlease(sp->rd);
		sp->leased = false;
	}
}

/* Someone waits for the lease: read the chunks claimed from now on with pread() (lock held;
 * see struct split). */
static void lease_poll(struct split *sp)
{
	if (sp->leased && sp->mapped && cap_reader_lease_wanted(sp->rd)) {
		sp->mapped = false;
		sp->wanted = true;
		sp->wanted_at = sp->next_scan;
	}
	lease_release(sp);
}

/* A buffer for slot @p s: a spare one, or one fill() makes (lock held). */
static void take_buf(struct split *sp, struct slot *s)
{
	s->buf = sp->nspare_bufs ? sp->spare_bufs[--sp->nspare_bufs] : NULL;
}

/*
 * Free the slots of the chunks every thread has analysed, in order, and say which part of
 * the mapping to give back: [*lo, *hi), empty when none (lock held).
 *
 * The part given back is whole 2 MiB blocks of the mapping, up to the end of the input
 * (cap_reader_release_floor(): giving back part of a block splits its huge-page entry), and
 * at least SPLIT_GIVE_MIN of them unless the input has ended (at the file's end, or at an
 * error: the chunks up to sp->last all analysed).
 * Read through the mapping (SIPNAB_MAPPED), the chunks start at whole multiples of 2 MiB,
 * where the blocks do (the chunks started 24 bytes past each 2 MiB before, the pcap header,
 * and split 23-24 entries of c5k a run).
 */
static void recycle(struct split *sp, size_t *lo, size_t *hi)
{
	uint64_t verified = atomic_load_explicit(&sp->verified, memory_order_relaxed);
	size_t done = 0;

	*lo = *hi = 0;
	while (sp->released < verified) {
		struct slot *s = slot_of(sp, sp->released);

		if (atomic_load_explicit(&s->pending, memory_order_acquire) != 0) {
			break;
		}
		done = SN_MIN(sp->base + (sp->released + 1) * sp->chunk, sp->end);
		if (s->timed) {
			eng_ways_note(&sp->ways, s->chunk, s->mapped ? ENG_WAY_MAP : ENG_WAY_COPY,
				      atomic_load_explicit(&s->ns, memory_order_relaxed),
				      s->end - s->start);
		}
		s->state = SLOT_FREE;
		sp->spare[sp->nspare++] = s->lists;
		s->lists = NULL;
		if (s->buf) {
			sp->spare_bufs[sp->nspare_bufs++] = s->buf;
		}
		s->buf = NULL;
		if (s->mapped) {
			sp->map_live--;
		}
		sp->released++;
	}
	lease_release(sp);
	if (!sp->map_chunks) {
		/* read with pread(): the threads never touched the mapping, and giving back
		 * what was never mapped in was a madvise() a chunk (56 of c5k's 163 at --cores 2) */
		return;
	}
	if (done < sp->end) {
		done = cap_reader_release_floor(sp->rd, done);
	}
	if (done > sp->given &&
	    (done - sp->given >= SPLIT_GIVE_MIN || done >= sp->end ||
	     sp->released >= atomic_load_explicit(&sp->last, memory_order_relaxed))) {
		*lo = sp->given;
		*hi = done;
		sp->given = done;
	}
}

/* Claim a chunk to read (lock held); NULL when there is none. */
static struct slot *claim(struct split *sp)
{
	uint64_t v = atomic_load_explicit(&sp->verified, memory_order_relaxed);
	uint64_t last = atomic_load_explicit(&sp->last, memory_order_relaxed);
	struct slot *s;

	lease_poll(sp);
	if (v < last && v < sp->next_scan) {
		s = slot_of(sp, v);
		if (s->state == SLOT_RESCAN) {
			if (s->mapped && !sp->mapped) {
				/* someone waits for the lease: read it again with pread() */
				s->mapped = false;
				sp->map_live--;
				take_buf(sp, s);
				lease_release(sp);
			}
			s->state = SLOT_SCANNING;
			return s;
		}
	}
	if (sp->next_scan >= last || sp->next_scan >= sp->released + sp->nslots) {
		return NULL;
	}
	if (sp->bounded && sp->next_scan - sp->released >= sp->bufs_max) {
		/* every buffer is in use, or as many chunks are in flight through the mapping as
		 * there would be buffers: wait for one to be freed (recycle()). Read through the
		 * mapping, the file's pages mapped in stay as bounded (2n + 2 of 2 MiB each peaked at
		 * 94.8 MiB at 16 threads on two CPUs, 31.5 at two: tests/split_reader.sh) */
		return NULL;
	}
	s = slot_of(sp, sp->next_scan);
	s->mapped = sp->mapped && eng_ways_pick(&sp->ways, sp->next_scan) == ENG_WAY_MAP;
	if (s->mapped) {
		s->buf = NULL; /* unused (fill()) */
		sp->map_live++;
		sp->map_chunks++;
	} else {
		take_buf(sp, s);
	}
	if (sp->nspare) {
		s->lists = sp->spare[--sp->nspare];
	} else {
		s->lists = sn_xcalloc_lines(sp->n, sizeof(*s->lists));
		/* never more sets than slots (one per slot in use, the rest spare); were there
		 * more, the lists would start empty and take blocks of their own */
		for (uint32_t i = 0; i < sp->n && sp->nsets < sp->list_sets; i++) {
			s->lists[i].v = sp->list_mem + ((size_t)sp->nsets * sp->n + i) * sp->list_cap;
			s->lists[i].cap = sp->list_cap;
		}
		sp->nsets++;
	}
	s->chunk = sp->next_scan++;
	s->state = SLOT_SCANNING;
	s->rescan = false;
	atomic_store_explicit(&s->pending, sp->n, memory_order_relaxed);
	return s;
}

static void analyse(struct split_thread *t, uint64_t c)
{
	struct split *sp = t->sp;
	struct slot *s = slot_of(sp, c);
	struct rec_list *l = &s->lists[t->id];
	struct eng *e = sp->engines[t->id];

	eng_packets(e, l->v, l->n);
	t->records += l->n;
}

/* Thread @p id of the run: its share of the analysis, and any chunk it finds to scan. */
static void split_main(void *arg, uint32_t id)
{
	struct split_thread *t = &((struct split_thread *)arg)[id];
	struct split *sp = t->sp;
	struct timespec cpu0;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu0);

	for (;;) {
		uint64_t v = atomic_load_explicit(&sp->verified, memory_order_acquire);
		uint64_t last = atomic_load_explicit(&sp->last, memory_order_relaxed);
		struct slot *s;
		size_t lo, hi;

		if (t->next < v && t->next < last) {
			/* lock-free path: the chunk is verified and nobody writes it any more */
			uint64_t t0 = eng_ways_now();

			s = slot_of(sp, t->next);
			analyse(t, t->next);
			atomic_fetch_add_explicit(&s->ns, eng_ways_now() - t0, memory_order_relaxed);
			t->next++;
			if (atomic_fetch_sub_explicit(&s->pending, 1, memory_order_acq_rel) == 1) {
				pthread_mutex_lock(&sp->lock);
				recycle(sp, &lo, &hi);
				pthread_cond_broadcast(&sp->cond);
				pthread_mutex_unlock(&sp->lock);
				if (hi > lo) {
					cap_reader_advise(sp->rd, lo, hi - lo, false);
				}
			}
			continue;
		}
		pthread_mutex_lock(&sp->lock);
		v = atomic_load_explicit(&sp->verified, memory_order_relaxed);
		last = atomic_load_explicit(&sp->last, memory_order_relaxed);
		if (t->next >= last) {
			pthread_mutex_unlock(&sp->lock);
			break;
		}
		if (t->next < v) {
			pthread_mutex_unlock(&sp->lock);
			continue;
		}
		s = claim(sp);
		if (s) {
			pthread_mutex_unlock(&sp->lock);
			scan(sp, s);
			t->scanned++;
			pthread_mutex_lock(&sp->lock);
			s->timed = !s->rescan && s->found;
			s->state = SLOT_SCANNED;
			verify(sp);
			pthread_cond_broadcast(&sp->cond);
			pthread_mutex_unlock(&sp->lock);
			continue;
		}
		sn_pool_wait(&sp->cond, &sp->lock);
		pthread_mutex_unlock(&sp->lock);
	}
	eng_finish(sp->engines[t->id]);
	if (getenv("SIPNAB_TIMING")) {
		struct timespec cpu;

		/* the thread may be a pool helper that ran other steps before */
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu);
		fprintf(stderr, "sipnab: timing: thread %u: %.3f s cpu, %llu records, %llu scanned\n",
			t->id, (double)(cpu.tv_sec - cpu0.tv_sec) +
			(double)(cpu.tv_nsec - cpu0.tv_nsec) / 1e9,
			(unsigned long long)t->records, (unsigned long long)t->scanned);
	}
}

bool eng_split_run(const struct cap_reader *rd, struct eng **engines, uint32_t n,
		   cap_merge_error_fn *on_error, void *user)
{
	struct split sp = {0};
	enum eng_map map = eng_env_map();
	struct split_thread *t;
	uint64_t set_bytes;
	size_t owner_bytes, block_bytes;
	uint64_t unpinned;

	sp.tmpl = cap_reader_split_begin(rd, &sp.first, &sp.end);
	if (!sp.tmpl) {
		return false;
	}
	sp.rd = rd;
	sp.n = n;
	sp.leased = map != ENG_MAP_NEVER && map != ENG_MAP_ALWAYS && cap_reader_lease(rd);
	sp.mapped = sp.leased || map == ENG_MAP_ALWAYS;
	eng_ways_init(&sp.ways, map);
	sp.bounded = map != ENG_MAP_ALWAYS;
	sp.engines = engines;
	sp.nslots = 2 * n + 2;
	sp.bufs_max = SN_MIN(n, sn_pool_cpus()) + 2;
	/* the chunks are as large under the lease as without: the deal, and so what each thread
	 * analyses (-l, -R), depends on the chunk size, never on whether there was a lease */
	if (map != ENG_MAP_ALWAYS &&
	    (size_t)sp.bufs_max * (SPLIT_CHUNK + SPLIT_TAIL) <= SPLIT_BUF_BYTES) {
		sp.chunk = SPLIT_CHUNK;
	} else {
		sp.chunk = SN_MIN((size_t)(map == ENG_MAP_ALWAYS ? SPLIT_CHUNK_MAPPED : SPLIT_CHUNK),
				  SN_MAX((size_t)SPLIT_CHUNK_MIN, (size_t)SPLIT_INFLIGHT / sp.nslots));
	}
	sp.chunk &= ~(size_t)0xffff; /* whole 64 KiB */
	/* small chunks put many chunk boundaries into a small test capture */
	sp.chunk = sn_env_u32("SIPNAB_SPLIT_CHUNK", 64, (uint32_t)sp.chunk);
	sp.base = sp.first - sp.first % sp.chunk;
	sp.chunks = sp.end > sp.first ? (sp.end - sp.base + sp.chunk - 1) / sp.chunk : 1;
	/* a file shorter than a chunk needs lists for what it holds, and as many sets as chunks */
	sp.list_cap = (uint32_t)SN_MAX((size_t)64, SN_MIN(sp.chunk, sp.end - sp.first) / 128 / n);
	/* counted in 64 bits (SIPNAB_SPLIT_CHUNK may make list_cap up to 2^25); the block itself
	 * is at most SPLIT_LIST_MEM_MAX */
	set_bytes = (uint64_t)n * sp.list_cap * sizeof(*sp.list_mem);
	sp.list_sets = (uint32_t)SN_MIN(SN_MIN((uint64_t)sp.nslots, sp.chunks),
					SPLIT_LIST_MEM_MAX / set_bytes);
	/*
	 * The bucket table (128 KiB) and the lists in one block, of whole huge pages where huge
	 * pages are small (sn_huge_round()): the table had a block of its own, and filling
	 * it (the deal, then before any thread started) faulted in 32 fresh 4 KiB pages, 0.4-0.5
	 * ms of every run at two cores on the development VM, where a whole 2 MiB page costs
	 * 0.13-0.6 ms and the lists use the rest of it. The deal took 0.20-0.47 ms instead of
	 * 0.46-1.2 on the 2,000-call sweep capture, 0.24-0.44 instead of 0.57-0.82 on 10 calls.
	 */
	owner_bytes = SPLIT_BUCKETS * sizeof(*sp.owner);
	block_bytes = sn_huge_round(owner_bytes + (size_t)(sp.list_sets * set_bytes), 0);
	sp.block = sn_xmalloc_huge(block_bytes);
	sp.owner = sp.block;
	sp.list_mem = (struct cap_record *)((char *)sp.block + owner_bytes);
	sp.spare_bufs = sn_xcalloc(sp.nslots + 1, sizeof(*sp.spare_bufs));
	atomic_init(&sp.dealt, false);
	sp.slots = sn_xcalloc(sp.nslots, sizeof(*sp.slots));
	for (uint32_t i = 0; i < sp.nslots; i++) {
		sp.slots[i].cur = cap_cursor_new(sp.tmpl);
	}
	sp.spare = sn_xcalloc(sp.nslots, sizeof(*sp.spare));
	sp.state = cap_cursor_new(sp.tmpl);
	sp.expect = sp.first;
	atomic_init(&sp.verified, 0);
	atomic_init(&sp.last, sp.chunks);
	pthread_mutex_init(&sp.lock, NULL);
	pthread_cond_init(&sp.cond, NULL);

	t = sn_xcalloc(n, sizeof(*t));
	for (uint32_t i = 0; i < n; i++) {
		t[i].sp = &sp;
		t[i].id = i;
	}
	/* the threads wait for each other (a chunk's slot is free once all have analysed it):
	 * each needs a thread, and a CPU, of its own */
	unpinned = sn_pool_unpinned();
	sn_pool_run_pinned(n, split_main, t);
	if (sp.leased) {
		cap_reader_unlease(rd);
	}
	if (getenv("SIPNAB_TIMING")) {
		fprintf(stderr, "sipnab: timing: %llu chunks of %zu bytes, %llu read again, "
			"%llu through the mapping", (unsigned long long)sp.chunks, sp.chunk,
			(unsigned long long)sp.rescans, (unsigned long long)sp.map_chunks);
		if (sp.wanted) {
			fprintf(stderr, " (the lease wanted at chunk %llu)",
				(unsigned long long)sp.wanted_at);
		}
		fprintf(stderr, ", threads unpinned %s\n",
			sn_pool_unpinned() > unpinned ? "yes" : "no");
		eng_ways_print(&sp.ways, "chunks");
	}
	if (sp.err_st != SN_OK && on_error) {
		on_error(user, 0, sp.err_st, &sp.err);
	}

	free(t);
	pthread_cond_destroy(&sp.cond);
	pthread_mutex_destroy(&sp.lock);
	for (uint32_t i = 0; i < sp.nslots; i++) {
		if (sp.slots[i].lists) {
			sp.spare[sp.nspare++] = sp.slots[i].lists;
		}
		free(sp.slots[i].buf);
		cap_cursor_free(sp.slots[i].cur);
	}
	for (uint32_t i = 0; i < sp.nspare_bufs; i++) {
		free(sp.spare_bufs[i]);
	}
	free(sp.spare_bufs);
	for (uint32_t i = 0; i < sp.nspare; i++) {
		for (uint32_t j = 0; j < n; j++) {
			if (sp.spare[i][j].own) {
				free(sp.spare[i][j].v);
			}
		}
		free(sp.spare[i]);
	}
	free(sp.spare);
	free(sp.block);
	free(sp.slots);
	cap_cursor_free(sp.state);
	cap_cursor_free(sp.tmpl);
	return true;
}
