/*
 * sn_pool.c - helper threads kept from job to job (see sn_pool.h).
 *
 * Why: the build's parallel loops and the report's arrays are steps of 0.1-5 ms, and each
 * started threads of its own and split its items between them in advance. A new thread
 * often starts on its creator's CPU and runs only when the creator blocks in the join, after
 * the creator has done its own half: on the 2,000-call sweep capture at --cores 2, 20 of the
 * 60 parallel steps of ten runs had their second thread start after the first had finished
 * (1.7 ms a run lost, of a 13 ms build). Here the helpers are started once, and the loops
 * share their items out as they go (sn_pool_for()), so a helper that starts late takes less
 * and the caller never waits for work that it could have done itself. Helpers that spun for a
 * few milliseconds after a job, to start the next one sooner, made the runs slower on the
 * 2-vCPU development machine (3 ms: 0.975 of the time before, 10 ms: 1.001, sleeping at
 * once: 0.918; medians of 31 paired runs): they sleep at once. Where each thread of a job
 * can have a CPU of its own, helpers are started and woken away from the submitter's CPU
 * (steer_mask()), and the threads of a pinned job keep one CPU each until one of them waits
 * long (see "Pinned jobs" below).
 *
 * One job at a time (the submit mutex). Under the lock the submitter publishes fn, ctx and
 * want (t in [1, want] for helpers), bumps gen and wakes the helpers; a helper that sees a
 * new gen takes the next t while the job is open. The submitter runs fn(ctx, 0), then either
 * waits until every t has been taken and has returned (sn_pool_run()) or closes the job to
 * helpers that have not started and waits only for those inside (sn_pool_share()). A helper
 * reads fn and ctx under the lock while the job is open, and the submitter returns only when
 * no helper is inside: nothing of a job is touched after its submitter returns.
 */
#include "config.h"

#include "sipnab/sn_pool.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#ifdef __linux__
#include <sched.h>
#define SN_POOL_STEER 1
#endif

#ifdef SN_POOL_STEER
/* A part of a pinned job: its thread, and whether it waits for the others (or is done). */
struct pin_part {
	_Atomic pid_t tid;   /* 0 until a thread takes the part */
	atomic_bool idle;    /* in sn_pool_wait(), or returned */
	clockid_t clock;     /* its thread's CPU-time clock (set before tid) */
	bool clock_ok;
};

/* Parts of a pinned job whose threads a long wait watches (held_off()); past them a long wait
 * unpins the job whatever they do */
#define POOL_PIN_WATCH 256u
#endif

struct sn_pool {
	pthread_mutex_t submit;   /* one job at a time */
	pthread_mutex_t lock;     /* the fields below */
	pthread_cond_t wake;      /* to helpers: a new job */
	pthread_cond_t done;      /* to the submitter: a helper returned */
	uintptr_t gen;            /* jobs submitted (wraps) */
	uint32_t helpers;         /* started */
	pthread_t *threads;       /* their handles, to join them (submit mutex) */
	bool quit;                /* sn_pool_stop(): helpers return */
	/* the current job */
	sn_pool_fn *fn;
	void *ctx;
	uint32_t want;   /* helpers' t run from 1 to want */
	uint32_t next_t; /* the next t to hand out */
	bool open;       /* helpers may still take a t */
	uint32_t inside; /* helpers running fn */
#ifdef SN_POOL_STEER
	/* steering helpers away from the submitter's CPU (steer_mask(), steer_helpers()) */
	bool steer_known; /* allowed was read */
	bool steer;       /* allowed has two CPUs or more */
	cpu_set_t allowed; /* the process's CPUs when the pool started */
	pid_t *tids;      /* helpers' thread ids, known of them (helpers write theirs) */
	uint32_t known;
	cpu_set_t away;   /* this job's CPUs to start or wake helpers on (submit mutex) */
	int home;         /* the submitter's CPU, when the job is steered (submit mutex) */
	/* a pinned job (sn_pool_run_pinned()): set with the job, under the lock */
	struct pin_part *parts; /* one per t, while a pinned job runs, else NULL (owned by the
				 * submitter): its helpers pin themselves when they take their t */
	uint32_t nparts;
	atomic_bool pinned;  /* its threads are pinned still (unpin() clears it) */
	pid_t home_tid;      /* its submitter */
	cpu_set_t home_was;  /* and the submitter's CPUs before the job */
#endif
	atomic_uint_fast64_t unpinned; /* pinned jobs unpinned by a long wait (sn_pool_unpinned()) */
};

static struct sn_pool pool = {
	.submit = PTHREAD_MUTEX_INITIALIZER,
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.wake = PTHREAD_COND_INITIALIZER,
	.done = PTHREAD_COND_INITIALIZER,
};

/* Set on a thread while it runs a job's fn: a job submitted from inside one would wait for
 * the submit mutex its own job holds. */
static _Thread_local bool in_job;
/* The part (t) this thread runs of a pinned job, or -1. */
static _Thread_local int pin_part_of = -1;

/*
 * Pinned jobs (sn_pool_run_pinned()). Steering places a job's threads on CPUs of their own
 * when it starts; the kernel may still put two of them on one CPU later, when one wakes from
 * a wait (on its waker's CPU) or is moved while something else runs on its CPU for a moment,
 * and a thread that shares a CPU holds back the others, which wait for it. Traced at
 * --cores 2 on the 2,000-call sweep capture, both threads of the sharded reading ran on one
 * CPU for 2-4 ms at a time while the other CPU idled, in about one run in three: the
 * analysis step took 17-25 ms in those runs against 15.5 ms. Each thread of a pinned job
 * runs on one CPU (the submitter on the one it is on, helper t on the t-th of pool.away) from
 * when it takes its part until the part returns. bench/ab.sh, 31 rounds each, against
 * pinning nothing: the 2,000-call capture 0.982 and 0.906 of the time (the slowest run 29-30
 * against 36-37 ms), c5k 0.991 and 0.995.
 *
 * A CPU that another program holds would hold its pinned thread back for as long (a busy
 * loop at nice -10 on one CPU: c5k took 3.75x the time). So when a thread has waited for the
 * others longer than POOL_PIN_WAIT_NS (sn_pool_wait(), and the submitter waiting for its
 * helpers) and a thread that it waits for did not run for most of that time (held_off()),
 * the whole job is unpinned and the thread waited for moves to the waiting thread's CPU
 * (unpin()); from then on the kernel places the threads as it would have. With a busy loop
 * on one CPU, c5k took 0.918-0.999 of the time that pinning nothing takes (at nice -10 or 0),
 * the 2,000-call capture 0.971 and 1.021 (nice -10); 1.016-1.018 with one or two busy loops
 * on any CPU.
 *
 * A long wait alone unpinned the job before, and the waits of a pinned job that last are
 * mostly for a thread that is running: the first chunk's reader, which deals the host pairs
 * (1-1.5 ms on the 2,000-call sweep capture's 1,024 at slow times, with the first writes to
 * the lists' and tables' fresh pages), and at the end the last thread's last chunk. Unpinned
 * early, the two threads then often ran on one CPU, in turns, to the end: each woke the other
 * where it ran itself (perf sched: 40 ms of a 2,000-call run, the other CPU idle). At such
 * times that capture's --cores 2 runs were unpinned in 6 of 12, with 0.87-1.54 CPUs busy in
 * the analysis against 1.44-1.88 in the others, and c5k's in 7 of 8, with 1.31-1.87 CPUs;
 * with held_off(), none of 8, 1.89-1.98 CPUs. At other times the long waits are rarer: paired
 * runs (bench/ab.sh, make pgo) took 0.984-1.020 of the time, c5k and the sweep captures.
 */
#define POOL_PIN_WAIT_NS 1000000L

#ifdef SN_POOL_STEER
/* The CPU of @p set numbered @p k (from 0), or -1. */
static int nth_cpu(const cpu_set_t *set, uint32_t k)
{
	for (int c = 0; c < CPU_SETSIZE; c++) {
		if (CPU_ISSET(c, set) && k-- == 0) {
			return c;
		}
	}
	return -1;
}

/* Thread @p tid (0: the calling one) runs on @p cpu alone; 0, or -1 and errno. */
static int run_on(pid_t tid, int cpu)
{
	cpu_set_t one;

	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	return sched_setaffinity(tid, sizeof(one), &one);
}

/* The calling thread runs on @p cpu alone, while its job is pinned (pool.pinned). */
static void pin_to(int cpu)
{
	(void)run_on(0, cpu);
	if (!atomic_load(&pool.pinned)) {
		/* unpinned meanwhile: unpin() may have set this thread's CPUs before it
		 * pinned itself */
		(void)sched_setaffinity(0, sizeof(pool.allowed), &pool.allowed);
	}
}

/* Part @p t of the pinned job is taken by the calling thread. */
static void part_take(uint32_t t)
{
	struct pin_part *part = &pool.parts[t];

	pin_part_of = (int)t;
	part->clock_ok = pthread_getcpuclockid(pthread_self(), &part->clock) == 0;
	atomic_store(&part->tid, gettid());
}

/* The calling thread's part waits for the others (@p idle), or works again. */
static void part_idle(bool idle)
{
	if (pin_part_of >= 0) {
		atomic_store(&pool.parts[pin_part_of].idle, idle);
	}
}

static int64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Part_ran_ns() of a part whose thread works but whose clock cannot be read */
#define RAN_UNKNOWN (-2)

/* The CPU time of part @p t's thread so far (its CPU-time clock, which counts the stretch it
 * is running, if it is, to the moment); -1 when the part has no thread yet or its thread
 * waits for the others or is done; RAN_UNKNOWN when the clock cannot be read. */
static int64_t part_ran_ns(uint32_t t)
{
	struct pin_part *part = &pool.parts[t];
	struct timespec ts;

	if (atomic_load(&part->tid) <= 0 || atomic_load(&part->idle)) {
		return -1;
	}
	if (!part->clock_ok || clock_gettime(part->clock, &ts) != 0) {
		return RAN_UNKNOWN;
	}
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/*
 * Whether a thread that the waiting one waits for is held off its CPU, after a wait of
 * POOL_PIN_WAIT_NS that began at @p since with the job's threads' CPU times @p ran0
 * (part_ran_ns(); the first @p watch parts): a thread that was working then and is still
 * working ran for less than three quarters of the wait. Another thread held its CPU, or its
 * virtual CPU did not run (the kernel counts a guest's stolen time apart), or it blocked in
 * the kernel; one that runs on its own CPU, as pinned, runs nearly all of it. A working
 * thread whose CPU time cannot be read counts as held off, and so does a job with parts past
 * the watched ones: a long wait unpins it, as any long wait once did.
 */
static bool held_off(const int64_t *ran0, uint32_t watch, int64_t since)
{
	int64_t waited = mono_ns() - since;

	if (pool.nparts > watch) {
		return true;
	}
	for (uint32_t t = 0; t < watch; t++) {
		int64_t ran;

		if (ran0[t] == -1) {
			continue; /* not working when the wait began */
		}
		ran = part_ran_ns(t);
		if (ran == RAN_UNKNOWN || (ran0[t] == RAN_UNKNOWN && ran >= 0)) {
			return true;
		}
		if (ran >= 0 && (ran - ran0[t]) * 4 < waited * 3) {
			return true;
		}
	}
	return false;
}

/*
 * A pinned job's threads get their CPUs back for the rest of the job (pool.lock held): every
 * allowed CPU for the helpers, what it had before for the submitter. pool.pinned is cleared
 * first, so a helper pinning itself after this sees it (pin_to()).
 *
 * If one part alone is neither waiting nor done, the others wait for it: its thread is
 * moved to the calling thread's CPU, which this thread is about to leave idle. Given its
 * CPUs back, a thread that another program kept from its CPU stayed there, runnable, with
 * the other CPU idle: for 16 ms of a 2,000-call run, with a busy loop at nice -10 on its CPU.
 */
static void unpin(void)
{
	pid_t busy = 0;
	uint32_t nbusy = 0;
	int cpu = sched_getcpu();

	if (!atomic_exchange(&pool.pinned, false)) {
		return;
	}
	for (uint32_t k = 0; k < pool.known; k++) {
		(void)sched_setaffinity(pool.tids[k], sizeof(pool.allowed), &pool.allowed);
	}
	(void)sched_setaffinity(pool.home_tid, sizeof(pool.home_was), &pool.home_was);
	for (uint32_t t = 0; t < pool.nparts; t++) {
		if (!atomic_load(&pool.parts[t].idle)) {
			busy = atomic_load(&pool.parts[t].tid);
			nbusy++;
		}
	}
	if (nbusy == 1 && busy > 0 && cpu >= 0 && CPU_ISSET(cpu, &pool.allowed) &&
	    run_on(busy, cpu) == 0) {
		const cpu_set_t *back = busy == pool.home_tid ? &pool.home_was : &pool.allowed;

		(void)sched_setaffinity(busy, sizeof(*back), back);
	}
	atomic_fetch_add(&pool.unpinned, 1);
}
#endif

/*
 * pthread_cond_wait(), but a wait of more than POOL_PIN_WAIT_NS while a job is pinned returns,
 * as a wake-up could have, having unpinned the job if a thread waited for is held off its CPU
 * (see sn_pool_run_pinned()).
 */
static void pool_wait(pthread_cond_t *cond, pthread_mutex_t *lock, bool pool_locked)
{
#ifdef SN_POOL_STEER
	struct timespec until;

	if (atomic_load_explicit(&pool.pinned, memory_order_relaxed) &&
	    clock_gettime(CLOCK_REALTIME, &until) == 0) {
		/* the parts are the job's while it runs (pool.nparts and pool.parts do not change
		 * until every thread of it has returned) */
		uint32_t watch = SN_MIN(pool.nparts, POOL_PIN_WATCH);
		int64_t ran0[POOL_PIN_WATCH];
		int64_t since = mono_ns();

		for (uint32_t t = 0; t < watch; t++) {
			ran0[t] = part_ran_ns(t);
		}
		until.tv_nsec += POOL_PIN_WAIT_NS;
		if (until.tv_nsec >= 1000000000L) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000L;
		}
		part_idle(true);
		if (pthread_cond_timedwait(cond, lock, &until) == ETIMEDOUT) {
			if (!pool_locked) {
				pthread_mutex_lock(&pool.lock);
			}
			if (atomic_load(&pool.pinned) && held_off(ran0, watch, since)) {
				unpin();
			}
			if (!pool_locked) {
				pthread_mutex_unlock(&pool.lock);
			}
		}
		part_idle(false);
		return;
	}
#else
	(void)pool_locked;
#endif
	pthread_cond_wait(cond, lock);
}

static void *helper_main(void *arg)
{
	uintptr_t seen = (uintptr_t)arg; /* gen when it was started */

#ifdef SN_POOL_STEER
	pthread_mutex_lock(&pool.lock);
	pool.tids[pool.known++] = gettid();
	pthread_mutex_unlock(&pool.lock);
#endif
	for (;;) {
		sn_pool_fn *fn;
		void *ctx;
		uint32_t t;
#ifdef SN_POOL_STEER
		int pin;
#endif

		pthread_mutex_lock(&pool.lock);
		while (pool.gen == seen && !pool.quit) {
			pthread_cond_wait(&pool.wake, &pool.lock);
		}
		if (pool.quit) {
			/* set between jobs only (sn_pool_stop() holds the submit mutex) */
			pthread_mutex_unlock(&pool.lock);
			return NULL;
		}
		seen = pool.gen;
		if (!pool.open || pool.next_t > pool.want) {
			pthread_mutex_unlock(&pool.lock);
			continue;
		}
		t = pool.next_t++;
		fn = pool.fn;
		ctx = pool.ctx;
#ifdef SN_POOL_STEER
		pin = pool.parts ? nth_cpu(&pool.away, t - 1) : -1;
		if (pool.parts) {
			part_take(t);
		}
#endif
		pool.inside++;
		pthread_mutex_unlock(&pool.lock);
#ifdef SN_POOL_STEER
		if (pin >= 0) {
			pin_to(pin);
		} else if (pool.steer) {
			/* started away from the submitter: any allowed CPU again, as the kernel
			 * sees fit from here on */
			(void)sched_setaffinity(0, sizeof(pool.allowed), &pool.allowed);
		}
#endif
		in_job = true;
		fn(ctx, t);
		in_job = false;
#ifdef SN_POOL_STEER
		if (pin_part_of >= 0) {
			part_idle(true); /* done */
			pin_part_of = -1;
		}
		if (pin >= 0) {
			(void)sched_setaffinity(0, sizeof(pool.allowed), &pool.allowed);
		}
#endif
		pthread_mutex_lock(&pool.lock);
		pool.inside--;
		pthread_cond_signal(&pool.done);
		pthread_mutex_unlock(&pool.lock);
	}
	return NULL;
}

/*
 * Steering (submit mutex held): helpers are woken, or started, with every allowed CPU but
 * the submitter's, and each takes every allowed CPU back once it has started. Woken by a
 * condition variable, a helper was often put on the CPU of the thread that woke it and ran
 * there in its place, while the other CPU stayed idle until the kernel's balancing moved one
 * of them a few milliseconds later. c5k at --cores 2: the submitter's share of the analysis
 * started 0.1-4.7 ms after it woke the helper (ten runs), 0.01-0.03 ms with steering; the
 * threads' time waiting on a run queue fell from 9.3 to 0.7 ms a run (medians of 21).
 * Only when every thread of the job can have a CPU of its own: with more threads than CPUs
 * (--cores 4 on two) they all started on the other CPU and waited there for the kernel to
 * spread them (c5k: 1.061 of the time without steering, 15 paired runs).
 * Sets pool.away; false when there is nothing to steer (one CPU, more threads than CPUs,
 * not Linux).
 */
static bool steer_mask(uint32_t threads)
{
#ifdef SN_POOL_STEER
	int cpu;

	if (!pool.steer_known) {
		pool.steer_known = true;
		pool.steer = sched_getaffinity(0, sizeof(pool.allowed), &pool.allowed) == 0 &&
			     CPU_COUNT(&pool.allowed) >= 2;
	}
	cpu = pool.steer && threads <= (uint32_t)CPU_COUNT(&pool.allowed) ? sched_getcpu() : -1;
	if (cpu < 0 || cpu >= CPU_SETSIZE || !CPU_ISSET(cpu, &pool.allowed)) {
		return false;
	}
	pool.away = pool.allowed;
	CPU_CLR(cpu, &pool.away);
	pool.home = cpu;
	return true;
#else
	(void)threads;
	return false;
#endif
}

/* The helpers started so far: to pool.away before they are woken. */
static void steer_helpers(void)
{
#ifdef SN_POOL_STEER
	uint32_t known;

	pthread_mutex_lock(&pool.lock);
	known = pool.known; /* tids[0, known) stay; only grow() moves the array */
	pthread_mutex_unlock(&pool.lock);
	for (uint32_t k = 0; k < known; k++) {
		(void)sched_setaffinity(pool.tids[k], sizeof(pool.away), &pool.away);
	}
#endif
}

/*
 * A child of fork() has none of its parent's helpers (only the thread that called fork()
 * goes on in it): it starts with an empty pool, like a process that never used one. fork()
 * may come from any thread at any moment, even during a job, so the child's locks are made
 * anew rather than unlocked. Registered when the first helper starts.
 */
static void pool_after_fork_child(void)
{
	pthread_mutex_init(&pool.submit, NULL);
	pthread_mutex_init(&pool.lock, NULL);
	pthread_cond_init(&pool.wake, NULL);
	pthread_cond_init(&pool.done, NULL);
	pool.helpers = 0; /* the parent's handles in pool.threads are not the child's to join */
	pool.quit = false;
	pool.open = false;
	pool.inside = 0;
	pool.fn = NULL;
	pool.ctx = NULL;
#ifdef SN_POOL_STEER
	pool.known = 0;
	atomic_store(&pool.pinned, false);
	pool.parts = NULL; /* a job of the parent's threads: not the child's to free */
	pool.nparts = 0;
	pin_part_of = -1; /* the forking thread's part, if it forked inside one */
#endif
}

static pthread_once_t pool_fork_once = PTHREAD_ONCE_INIT;

static void pool_fork_register(void)
{
	(void)pthread_atfork(NULL, NULL, pool_after_fork_child);
}

/* Start helpers until there are @p want (submit mutex held), on pool.away's CPUs when
 * @p steer; 0, or pthread_create()'s error. */
static int grow(uint32_t want, bool steer)
{
	if (pool.helpers < want) {
		pthread_once(&pool_fork_once, pool_fork_register);
	}
	while (pool.helpers < want) {
		pthread_attr_t attr;
		pthread_t th;
		char name[16];
		uintptr_t g = pool.gen; /* it takes the next job (gen changes only under submit) */
		int rc;

#ifdef SN_POOL_STEER
		pthread_mutex_lock(&pool.lock);
		pool.tids = sn_xrealloc(pool.tids, (pool.helpers + 1) * sizeof(*pool.tids));
		pthread_mutex_unlock(&pool.lock);
#endif
		pool.threads = sn_xrealloc(pool.threads, (pool.helpers + 1) * sizeof(*pool.threads));
		pthread_attr_init(&attr);
#ifdef SN_POOL_STEER
		if (steer) {
			(void)pthread_attr_setaffinity_np(&attr, sizeof(pool.away), &pool.away);
		}
#else
		(void)steer;
#endif
		snprintf(name, sizeof(name), "sn-helper-%u", pool.helpers + 1);
		rc = sn_thread_start(&th, &attr, helper_main, (void *)g, name);
		pthread_attr_destroy(&attr);
		if (rc != 0) {
			return rc;
		}
		pool.threads[pool.helpers++] = th;
	}
	return 0;
}

int sn_thread_start(pthread_t *th, const pthread_attr_t *attr, void *(*fn)(void *), void *arg,
		    const char *name)
{
	sigset_t all, old;
	int rc;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	rc = pthread_create(th, attr, fn, arg);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
#ifdef __GLIBC__
	if (rc == 0) {
		(void)pthread_setname_np(*th, name);
	}
#else
	(void)name;
#endif
	return rc;
}

/* A job submitted from inside a job: work sharing runs it on this thread alone; threads that
 * must run at once cannot be had. */
static void nested(uint32_t threads, sn_pool_fn *fn, void *ctx, bool all)
{
	if (all) {
		fprintf(stderr, "sipnab: sn_pool_run() called from inside a pool job\n");
		abort();
	}
	(void)threads;
	fn(ctx, 0);
}

/* The helpers a job of @p threads needs, started now if they are not, steered if the job
 * can be (submit mutex held); *steer says whether it is. 0, or pthread_create()'s error. */
static int prepare(uint32_t threads, bool *steer)
{
	*steer = steer_mask(threads);
	return grow(threads - 1, *steer);
}

static void submit(uint32_t threads, sn_pool_fn *fn, void *ctx, bool all, bool pin)
{
	uint32_t want = threads - 1;
	bool steer;
	int rc;
#ifdef SN_POOL_STEER
	struct pin_part *parts = NULL;
#endif

	if (in_job) {
		nested(threads, fn, ctx, all);
		return;
	}
	pthread_mutex_lock(&pool.submit);
	rc = prepare(threads, &steer);
	if (rc != 0) {
		if (all) {
			/* the threads wait for each other: fewer would never finish */
			fprintf(stderr, "sipnab: cannot start a thread: %s\n", strerror(rc));
			abort();
		}
		want = pool.helpers; /* work sharing: the caller does the rest */
	}
	if (steer) {
		steer_helpers();
	}
#ifdef SN_POOL_STEER
	/* pinned only where each thread can have a CPU of its own (steered) */
	pin = pin && steer && want == threads - 1 &&
	      sched_getaffinity(0, sizeof(pool.home_was), &pool.home_was) == 0;
	if (pin) {
		pool.home_tid = gettid();
		pool.nparts = threads;
		parts = sn_xcalloc(threads, sizeof(*parts));
	}
#else
	pin = false;
#endif
	pthread_mutex_lock(&pool.lock);
	pool.fn = fn;
	pool.ctx = ctx;
	pool.want = want;
	pool.next_t = 1;
	pool.open = true;
#ifdef SN_POOL_STEER
	pool.parts = parts; /* helpers read it under the lock */
	atomic_store(&pool.pinned, pin);
	if (pin) {
		part_take(0);
	}
#endif
	pool.gen++;
	pthread_cond_broadcast(&pool.wake);
	pthread_mutex_unlock(&pool.lock);

#ifdef SN_POOL_STEER
	if (pin) {
		pin_to(pool.home);
	}
#endif
	in_job = true;
	fn(ctx, 0);
	in_job = false;
#ifdef SN_POOL_STEER
	if (pin) {
		/* done; its wait for the helpers below counts as waiting for the others */
		part_idle(true);
		pin_part_of = -1;
		(void)sched_setaffinity(0, sizeof(pool.home_was), &pool.home_was);
	}
#endif

	pthread_mutex_lock(&pool.lock);
	if (!all) {
		pool.open = false;
	}
	while (pool.inside || (all && pool.next_t <= pool.want)) {
		/* a helper pinned to a CPU that something else holds would keep this waiting */
		pool_wait(&pool.done, &pool.lock, true);
	}
	pool.open = false;
	pool.fn = NULL;
	pool.ctx = NULL;
#ifdef SN_POOL_STEER
	atomic_store(&pool.pinned, false);
	free(pool.parts);
	pool.parts = NULL;
	pool.nparts = 0;
#endif
	pthread_mutex_unlock(&pool.lock);
	pthread_mutex_unlock(&pool.submit);
}

void sn_pool_start(uint32_t threads)
{
	bool steer;

	if (threads <= 1 || in_job) {
		return;
	}
	pthread_mutex_lock(&pool.submit);
	(void)prepare(threads, &steer); /* one that cannot start fails its job later */
	pthread_mutex_unlock(&pool.submit);
}

void sn_pool_stop(void)
{
	if (in_job) {
		return;
	}
	pthread_mutex_lock(&pool.submit);
	pthread_mutex_lock(&pool.lock);
	pool.quit = true;
	pthread_cond_broadcast(&pool.wake);
	pthread_mutex_unlock(&pool.lock);
	for (uint32_t i = 0; i < pool.helpers; i++) {
		pthread_join(pool.threads[i], NULL);
	}
	free(pool.threads);
	pool.threads = NULL;
	pool.helpers = 0;
	pool.quit = false;
#ifdef SN_POOL_STEER
	free(pool.tids);
	pool.tids = NULL;
	pool.known = 0;
#endif
	pthread_mutex_unlock(&pool.submit);
}

void sn_pool_run(uint32_t threads, sn_pool_fn *fn, void *ctx)
{
	if (threads <= 1) {
		fn(ctx, 0);
		return;
	}
	submit(threads, fn, ctx, true, false);
}

void sn_pool_run_pinned(uint32_t threads, sn_pool_fn *fn, void *ctx)
{
	if (threads <= 1) {
		fn(ctx, 0);
		return;
	}
	submit(threads, fn, ctx, true, true);
}

void sn_pool_wait(pthread_cond_t *cond, pthread_mutex_t *lock)
{
	pool_wait(cond, lock, false);
}

uint64_t sn_pool_unpinned(void)
{
	return atomic_load(&pool.unpinned);
}

uint32_t sn_pool_cpus(void)
{
	long cpus;
#ifdef SN_POOL_STEER
	cpu_set_t set;

	if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0) {
		return (uint32_t)CPU_COUNT(&set);
	}
#endif
	cpus = sysconf(_SC_NPROCESSORS_ONLN);
	return cpus > 0 ? (uint32_t)cpus : 1;
}

void sn_pool_share(uint32_t threads, sn_pool_fn *fn, void *ctx)
{
	if (threads <= 1) {
		fn(ctx, 0);
		return;
	}
	submit(threads, fn, ctx, false, false);
}

struct for_job {
	sn_pool_fn *fn;
	void *ctx;
	uint32_t n, grain;
	atomic_uint_fast64_t next; /* first item of the next block to claim */
};

static void for_part(void *arg, uint32_t t)
{
	struct for_job *j = arg;

	(void)t;
	for (;;) {
		uint64_t i = atomic_fetch_add_explicit(&j->next, j->grain, memory_order_relaxed);
		uint64_t end = SN_MIN(i + j->grain, (uint64_t)j->n);

		if (i >= j->n) {
			return;
		}
		for (; i < end; i++) {
			j->fn(j->ctx, (uint32_t)i);
		}
	}
}

void sn_pool_for(uint32_t n, uint32_t threads, uint32_t grain, sn_pool_fn *fn, void *ctx)
{
	struct for_job j = {.fn = fn, .ctx = ctx, .n = n, .grain = grain ? grain : 1};
	uint32_t blocks = (uint32_t)(((uint64_t)n + j.grain - 1) / j.grain);

	if (threads <= 1 || blocks <= 1) {
		for (uint32_t i = 0; i < n; i++) {
			fn(ctx, i);
		}
		return;
	}
	atomic_init(&j.next, 0);
	sn_pool_share(SN_MIN(threads, blocks), for_part, &j);
}
