/*
 * sn_pool.h - helper threads kept from job to job, for parallel steps that are
 * too short to pay for starting threads: the engine's analysis threads, the build's parallel
 * loops, the report's arrays.
 *
 * A job runs fn(ctx, 0) on the calling thread and fn(ctx, t), t in [1, threads), on helpers.
 * Helpers are started on first use (as many as the largest job asked for) and kept, asleep
 * between jobs, until sn_pool_stop().
 * Thread: any thread may submit; jobs run one at a time (a second submitter waits). fn must
 * not submit a job itself.
 */
#ifndef SIPNAB_SN_POOL_H
#define SIPNAB_SN_POOL_H

#include "sipnab/sn_base.h"

#include <pthread.h>

/** A job's function: @p t is 0 on the calling thread, 1.. on helpers. */
typedef void sn_pool_fn(void *ctx, uint32_t t);

/**
 * Start the helpers a job of @p threads needs, now rather than at its start (they wait
 * asleep): a thread just started tends to run on its creator's CPU for a while.
 */
void sn_pool_start(uint32_t threads);

/**
 * fn(ctx, t) for every t in [0, threads), each on its own thread and all at once (they may
 * wait for each other); returns when all have returned. threads <= 1 calls fn(ctx, 0) alone.
 */
void sn_pool_run(uint32_t threads, sn_pool_fn *fn, void *ctx);

/**
 * sn_pool_run(), with each thread kept on a CPU of its own while it runs its part, where each
 * can have one (no more threads than the process's CPUs): for jobs whose threads wait for
 * each other, which one thread sharing a CPU would hold back. The job's threads must wait
 * with sn_pool_wait(): a wait of more than 1 ms for a thread that hardly ran meanwhile
 * (another program holds its CPU, its virtual CPU did not run) gives every thread of the job
 * all its CPUs back for the rest of the job.
 */
void sn_pool_run_pinned(uint32_t threads, sn_pool_fn *fn, void *ctx);

/**
 * pthread_cond_wait() for the threads of a job: in a pinned job (sn_pool_run_pinned()) a
 * wait of more than 1 ms returns, as a wake-up could, having unpinned the job if a thread
 * waited for is held off its CPU. Like pthread_cond_wait(), it may return without a signal:
 * wait in a loop.
 */
void sn_pool_wait(pthread_cond_t *cond, pthread_mutex_t *lock);

/** Pinned jobs unpinned so far, by a long wait for a thread held off its CPU (SIPNAB_TIMING
 *  prints it). */
uint64_t sn_pool_unpinned(void);

/**
 * The CPUs the calling thread may run on now (its affinity mask, the process's for the main
 * thread; else those online): at least 1. CPU quotas of a cgroup are not counted.
 */
uint32_t sn_pool_cpus(void);

/**
 * Work sharing: fn(ctx, 0) on the calling thread and fn(ctx, t) on each helper, of up to
 * threads - 1, that starts before the job closes (just after fn(ctx, 0) returns); one that
 * does not never runs it. So fn must take its work from a shared supply, each call doing
 * what is left, and the caller's call must not return before the work is done: a call that
 * starts at the end finds nothing to do. Returns when every call that started has returned.
 */
void sn_pool_share(uint32_t threads, sn_pool_fn *fn, void *ctx);

/**
 * fn(ctx, i) once for every i in [0, n), in blocks of @p grain consecutive items (0: 1) that
 * the calling thread and up to threads - 1 helpers claim in turn (sn_pool_share()). Items must
 * not depend on each other or on which thread runs them.
 */
void sn_pool_for(uint32_t n, uint32_t threads, uint32_t grain, sn_pool_fn *fn, void *ctx);

/**
 * Stop the helpers and wait for them to exit (between jobs; from inside a job it does
 * nothing). A later job starts helpers again. Called before the program returns from main(),
 * so that no thread of its own is left running at exit: a helper still alive then keeps its
 * thread-local storage, which valgrind counts as possibly lost.
 */
void sn_pool_stop(void);
/**
 * Start a thread of sipnab's own (pthread_create()): it takes no asynchronous signals
 * (SIGINT, SIGTERM, SIGWINCH, ...), which go to the threads the program runs itself, and is
 * named @p name (at most 15 characters; glibc). The pool's helpers and the input's reading
 * thread are started this way.
 * @return 0, or pthread_create()'s error
 */
int sn_thread_start(pthread_t *th, const pthread_attr_t *attr, void *(*fn)(void *), void *arg,
		    const char *name);
#endif
