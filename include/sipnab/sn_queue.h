/*
 * sn_queue.h - a bounded blocking FIFO of pointers between threads (POSIX mutex and condition
 * variables, so ThreadSanitizer sees the hand-off). Used for batch hand-off between the reading
 * thread and the workers: a few thousand operations per second, not per packet.
 * Thread: any number of producers and consumers.
 */
#ifndef SIPNAB_SN_QUEUE_H
#define SIPNAB_SN_QUEUE_H

#include <pthread.h>

#include "sipnab/sn_base.h"

struct sn_queue {
	pthread_mutex_t lock;     /* protects everything below */
	pthread_cond_t not_empty; /* signalled on push */
	pthread_cond_t not_full;  /* signalled on pop */
	void **items;             /* ring of cap slots; owned */
	size_t cap, head, count;
};

/** Prepare a queue of @p cap slots (cap >= 1). */
void sn_queue_init(struct sn_queue *q, size_t cap);
/** Release the queue's storage (not the items). */
void sn_queue_cleanup(struct sn_queue *q);
/** Append @p item, waiting while the queue is full. */
void sn_queue_push(struct sn_queue *q, void *item);
/** Remove and return the oldest item, waiting while the queue is empty. */
void *sn_queue_pop(struct sn_queue *q);

#endif
