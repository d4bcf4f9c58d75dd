/*
 * sn_queue.c - single-producer single-consumer bounded FIFO (see sn_queue.h).
 *
 * tail - head is the number of items; the producer alone advances tail, the consumer alone
 * advances head. Sleeping without lost wake-ups: a side that has to wait increments sleepers
 * and then looks at the ring again, under the mutex; the other side changes the ring, then
 * (after a full fence) reads sleepers and, if anyone sleeps, broadcasts under the mutex.
 * Sequential consistency of the fence and of the sleepers operations guarantees that either
 * the waiter sees the change or the changer sees the waiter; the waiter holds the mutex from
 * its second look until pthread_cond_wait() releases it, so the broadcast cannot slip in
 * between.
 */
#include "config.h"

#include "sipnab/sn_queue.h"

#include <stdlib.h>

#define SN_QUEUE_SPINS 64 /* fast retries before sleeping */

void sn_queue_init(struct sn_queue *q, size_t cap)
{
	q->cap = cap ? cap : 1;
	q->items = sn_xcalloc(q->cap, sizeof(*q->items));
	atomic_init(&q->head, 0);
	atomic_init(&q->tail, 0);
	atomic_init(&q->sleepers, 0);
	pthread_mutex_init(&q->lock, NULL);
	pthread_cond_init(&q->cond, NULL);
}

void sn_queue_cleanup(struct sn_queue *q)
{
	free(q->items);
	q->items = NULL;
	pthread_cond_destroy(&q->cond);
	pthread_mutex_destroy(&q->lock);
}

static void wake(struct sn_queue *q)
{
	atomic_thread_fence(memory_order_seq_cst);
	if (atomic_load_explicit(&q->sleepers, memory_order_seq_cst) > 0) {
		pthread_mutex_lock(&q->lock);
		pthread_cond_broadcast(&q->cond);
		pthread_mutex_unlock(&q->lock);
	}
}

static bool can_push(struct sn_queue *q, size_t tail)
{
	return tail - atomic_load_explicit(&q->head, memory_order_acquire) < q->cap;
}

static bool can_pop(struct sn_queue *q, size_t head)
{
	return atomic_load_explicit(&q->tail, memory_order_acquire) != head;
}

void sn_queue_push(struct sn_queue *q, void *item)
{
	size_t tail = atomic_load_explicit(&q->tail, memory_order_relaxed);

	for (int spin = 0; !can_push(q, tail); spin++) {
		if (spin < SN_QUEUE_SPINS) {
			continue;
		}
		pthread_mutex_lock(&q->lock);
		atomic_fetch_add_explicit(&q->sleepers, 1, memory_order_seq_cst);
		atomic_thread_fence(memory_order_seq_cst);
		if (!can_push(q, tail)) {
			pthread_cond_wait(&q->cond, &q->lock);
		}
		atomic_fetch_sub_explicit(&q->sleepers, 1, memory_order_seq_cst);
		pthread_mutex_unlock(&q->lock);
	}
	q->items[tail % q->cap] = item;
	atomic_store_explicit(&q->tail, tail + 1, memory_order_release);
	wake(q);
}

void *sn_queue_pop(struct sn_queue *q)
{
	size_t head = atomic_load_explicit(&q->head, memory_order_relaxed);
	void *item;

	for (int spin = 0; !can_pop(q, head); spin++) {
		if (spin < SN_QUEUE_SPINS) {
			continue;
		}
		pthread_mutex_lock(&q->lock);
		atomic_fetch_add_explicit(&q->sleepers, 1, memory_order_seq_cst);
		atomic_thread_fence(memory_order_seq_cst);
		if (!can_pop(q, head)) {
			pthread_cond_wait(&q->cond, &q->lock);
		}
		atomic_fetch_sub_explicit(&q->sleepers, 1, memory_order_seq_cst);
		pthread_mutex_unlock(&q->lock);
	}
	item = q->items[head % q->cap];
	atomic_store_explicit(&q->head, head + 1, memory_order_release);
	wake(q);
	return item;
}
