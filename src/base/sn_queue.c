/*
 * sn_queue.c - bounded blocking FIFO of pointers (see sn_queue.h). A ring of slots under one
 * mutex; push waits on not_full, pop on not_empty. The mutex gives the hand-off its
 * happens-before edge: what the producer wrote before push is visible after pop.
 */
#include "config.h"

#include "sipnab/sn_queue.h"

#include <stdlib.h>

void sn_queue_init(struct sn_queue *q, size_t cap)
{
	pthread_mutex_init(&q->lock, NULL);
	pthread_cond_init(&q->not_empty, NULL);
	pthread_cond_init(&q->not_full, NULL);
	q->cap = cap ? cap : 1;
	q->items = sn_xcalloc(q->cap, sizeof(*q->items));
	q->head = 0;
	q->count = 0;
}

void sn_queue_cleanup(struct sn_queue *q)
{
	free(q->items);
	q->items = NULL;
	pthread_cond_destroy(&q->not_full);
	pthread_cond_destroy(&q->not_empty);
	pthread_mutex_destroy(&q->lock);
}

void sn_queue_push(struct sn_queue *q, void *item)
{
	pthread_mutex_lock(&q->lock);
	while (q->count == q->cap) {
		pthread_cond_wait(&q->not_full, &q->lock);
	}
	q->items[(q->head + q->count) % q->cap] = item;
	q->count++;
	pthread_cond_signal(&q->not_empty);
	pthread_mutex_unlock(&q->lock);
}

void *sn_queue_pop(struct sn_queue *q)
{
	void *item;

	pthread_mutex_lock(&q->lock);
	while (q->count == 0) {
		pthread_cond_wait(&q->not_empty, &q->lock);
	}
	item = q->items[q->head];
	q->head = (q->head + 1) % q->cap;
	q->count--;
	pthread_cond_signal(&q->not_full);
	pthread_mutex_unlock(&q->lock);
	return item;
}
