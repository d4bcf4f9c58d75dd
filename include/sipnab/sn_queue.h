/*
 * sn_queue.h - a bounded FIFO of pointers from one producer thread to one consumer thread,
 * for batch hand-off between the reading thread and a worker.
 *
 * Lock-free on the fast path: a ring indexed by two C11 atomic counters (the producer's
 * release store of tail publishes the item, the consumer's acquire load sees it; likewise
 * head in the other direction). Only a side that finds the ring full (producer) or empty
 * (consumer) takes the mutex, to sleep on the condition variable; the other side wakes it
 * after its next operation when it sees a sleeper. ThreadSanitizer follows both the atomics
 * and the mutex.
 * Thread: exactly one producer and one consumer at a time.
 */
#ifndef SIPNAB_SN_QUEUE_H
#define SIPNAB_SN_QUEUE_H

#include <pthread.h>
#include <stdatomic.h>

#include "sipnab/sn_base.h"

struct sn_queue {
	void **items;            /* ring of cap slots; owned */
	size_t cap;
	atomic_size_t head;      /* items taken (consumer writes) */
	atomic_size_t tail;      /* items put (producer writes) */
	atomic_int sleepers;     /* threads waiting on cond (or about to) */
	pthread_mutex_t lock;    /* only for sleeping */
	pthread_cond_t cond;
};

/** Prepare a queue of @p cap slots (cap >= 1). */
void sn_queue_init(struct sn_queue *q, size_t cap);
/** Release the queue's storage (not the items). */
void sn_queue_cleanup(struct sn_queue *q);
/** Append @p item, waiting while the queue is full (producer thread). */
void sn_queue_push(struct sn_queue *q, void *item);
/** Remove and return the oldest item, waiting while the queue is empty (consumer thread). */
void *sn_queue_pop(struct sn_queue *q);

#endif
