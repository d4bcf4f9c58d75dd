/*
 * check_sn_queue.c - the single-producer single-consumer queue used for batch hand-off
 * between threads: FIFO order, blocking at capacity and when empty (both sleeping paths,
 * forced by pauses on the other side), and no item lost or duplicated across real threads.
 */
#include "config.h"

#include <pthread.h>
#include <stdint.h>
#include <time.h>

#include <check.h>

#include "sipnab/sn_queue.h"

START_TEST(test_sn_queue_keeps_fifo_order)
{
	struct sn_queue q;
	int items[3] = {1, 2, 3};

	sn_queue_init(&q, 3);
	for (int i = 0; i < 3; i++) {
		sn_queue_push(&q, &items[i]);
	}
	for (int i = 0; i < 3; i++) {
		ck_assert_ptr_eq(sn_queue_pop(&q), &items[i]);
	}
	/* wraps around the ring */
	sn_queue_push(&q, &items[2]);
	sn_queue_push(&q, &items[0]);
	ck_assert_ptr_eq(sn_queue_pop(&q), &items[2]);
	ck_assert_ptr_eq(sn_queue_pop(&q), &items[0]);
	sn_queue_cleanup(&q);
}
END_TEST

#define N_ITEMS 100000u

struct prod {
	struct sn_queue *q;
	uintptr_t first;
};

static void *producer(void *arg)
{
	struct prod *p = arg;

	for (uintptr_t i = 0; i < N_ITEMS; i++) {
		sn_queue_push(p->q, (void *)(p->first + i));
	}
	return NULL;
}

START_TEST(test_sn_queue_hands_every_item_across_threads_in_order)
{
	struct sn_queue q;
	struct prod p;
	pthread_t t;

	/* capacity 4: the producer blocks again and again on a full queue */
	sn_queue_init(&q, 4);
	p.q = &q;
	p.first = 1;
	ck_assert_int_eq(pthread_create(&t, NULL, producer, &p), 0);
	for (uintptr_t i = 0; i < N_ITEMS; i++) {
		ck_assert_uint_eq((uintptr_t)sn_queue_pop(&q), i + 1);
	}
	pthread_join(t, NULL);
	ck_assert_uint_eq(atomic_load(&q.tail) - atomic_load(&q.head), 0);
	sn_queue_cleanup(&q);
}
END_TEST

static void pause_ms(long ms)
{
	struct timespec ts = {0, ms * 1000000L};

	nanosleep(&ts, NULL);
}

#define N_SLOW 2000u

/* the producer pauses now and then: the consumer finds the queue empty and sleeps */
static void *slow_producer(void *arg)
{
	struct prod *p = arg;

	for (uintptr_t i = 0; i < N_SLOW; i++) {
		if (i % 200 == 0) {
			pause_ms(2);
		}
		sn_queue_push(p->q, (void *)(p->first + i));
	}
	return NULL;
}

START_TEST(test_sn_queue_wakes_a_sleeping_consumer_and_producer)
{
	struct sn_queue q;
	struct prod p;
	pthread_t t;

	sn_queue_init(&q, 2);
	p.q = &q;
	p.first = 7;
	ck_assert_int_eq(pthread_create(&t, NULL, slow_producer, &p), 0);
	for (uintptr_t i = 0; i < N_SLOW; i++) {
		/* ... and the consumer pauses too: the producer finds it full and sleeps */
		if (i % 300 == 150) {
			pause_ms(2);
		}
		ck_assert_uint_eq((uintptr_t)sn_queue_pop(&q), i + 7);
	}
	pthread_join(t, NULL);
	ck_assert_uint_eq(atomic_load(&q.tail) - atomic_load(&q.head), 0);
	ck_assert_int_eq(atomic_load(&q.sleepers), 0);
	sn_queue_cleanup(&q);
}
END_TEST

static Suite *sn_queue_suite(void)
{
	Suite *s = suite_create("sn_queue");
	TCase *tc = tcase_create("fifo");

	tcase_add_test(tc, test_sn_queue_keeps_fifo_order);
	suite_add_tcase(s, tc);
	tc = tcase_create("threads");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_sn_queue_hands_every_item_across_threads_in_order);
	tcase_add_test(tc, test_sn_queue_wakes_a_sleeping_consumer_and_producer);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(sn_queue_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
