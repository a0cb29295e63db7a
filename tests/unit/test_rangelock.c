// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests of the byte-range lock: argument checks, overlap and
 * adjacency, RL_EOF ranges, shared holders running together, exclusive
 * and shared blocking each other, FIFO order (a writer queued behind
 * readers goes before a later reader and a reader queued behind a writer
 * before a later writer), non-conflicting requests passing the queue,
 * timeouts that leave no trace, trylock, and the testing-only switch.
 *
 * Blocking requests run in helper threads; the test waits for them to be
 * queued (rl_nwaiting()) or granted before the next step, so the order
 * of events is fixed and only negative checks ("still not granted")
 * depend on a sleep.
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "rangelock.h"

#define POLL_US 1000
#define POLL_MAX 5000 /* 5 s of POLL_US: far beyond any legitimate wait */

static int grant_seq;

/* One blocking request made by a helper thread. */
struct req {
	struct rl_lock *l;
	uint64_t start, end;
	enum rl_mode mode;
	uint64_t timeout_ns; /* 0: no deadline */
	struct rl_range r;
	pthread_t tid;
	int rc;
	int seq;      /* order of grant, from grant_seq */
	bool done;    /* rl_lock() returned */
	bool release; /* set by the test: unlock and exit */
};

static void *req_main(void *arg)
{
	struct req *q = arg;
	struct timespec ts;

	if (q->timeout_ns)
		rl_deadline_in(&ts, q->timeout_ns);
	q->rc = rl_lock(q->l, &q->r, q->start, q->end, q->mode, q->timeout_ns ? &ts : NULL);
	if (q->rc == 0)
		q->seq = __atomic_add_fetch(&grant_seq, 1, __ATOMIC_SEQ_CST);
	__atomic_store_n(&q->done, true, __ATOMIC_RELEASE);
	if (q->rc)
		return NULL;
	while (!__atomic_load_n(&q->release, __ATOMIC_ACQUIRE))
		usleep(POLL_US);
	rl_unlock(q->l, &q->r);
	return NULL;
}

static void req_start(struct req *q, struct rl_lock *l, uint64_t start, uint64_t end,
		      enum rl_mode mode, uint64_t timeout_ns)
{
	*q = (struct req){
		.l = l, .start = start, .end = end, .mode = mode, .timeout_ns = timeout_ns
	};
	assert_int_equal(pthread_create(&q->tid, NULL, req_main, q), 0);
}

static bool req_done(struct req *q)
{
	return __atomic_load_n(&q->done, __ATOMIC_ACQUIRE);
}

/* Wait until rl_lock() returned in @q's thread; its return value. */
static int req_wait_done(struct req *q)
{
	int i;

	for (i = 0; i < POLL_MAX && !req_done(q); i++)
		usleep(POLL_US);
	assert_true(req_done(q));
	return q->rc;
}

/* Let a granted request unlock (or reap a failed one) and join it. */
static void req_finish(struct req *q)
{
	__atomic_store_n(&q->release, true, __ATOMIC_RELEASE);
	assert_int_equal(pthread_join(q->tid, NULL), 0);
}

static void wait_nwaiting(struct rl_lock *l, unsigned int n)
{
	int i;

	for (i = 0; i < POLL_MAX && rl_nwaiting(l) != n; i++)
		usleep(POLL_US);
	assert_int_equal(rl_nwaiting(l), n);
}

static int lock_setup(void **state)
{
	struct rl_lock *l = malloc(sizeof(*l));

	if (!l || rl_init(l))
		return -1;
	*state = l;
	return 0;
}

static int lock_teardown(void **state)
{
	struct rl_lock *l = *state;

	assert_int_equal(rl_ngranted(l), 0);
	assert_int_equal(rl_nwaiting(l), 0);
	rl_destroy(l);
	free(l);
	return 0;
}

static int try_once(struct rl_lock *l, uint64_t start, uint64_t end, enum rl_mode mode)
{
	struct rl_range r;
	int rc = rl_trylock(l, &r, start, end, mode);

	if (rc == 0)
		rl_unlock(l, &r);
	return rc;
}

static void test_invalid(void **state)
{
	struct rl_lock *l = *state;
	struct rl_range r;
	struct timespec ts = { .tv_sec = 0, .tv_nsec = 1000000000L };

	assert_int_equal(rl_lock(l, &r, 10, 10, RL_SHARED, NULL), -EINVAL);
	assert_int_equal(rl_lock(l, &r, 11, 10, RL_EXCLUSIVE, NULL), -EINVAL);
	assert_int_equal(rl_lock(l, &r, RL_EOF, RL_EOF, RL_SHARED, NULL), -EINVAL);
	assert_int_equal(rl_lock(l, &r, 0, 10, (enum rl_mode)7, NULL), -EINVAL);
	assert_int_equal(rl_lock(l, &r, 0, 10, RL_SHARED, &ts), -EINVAL);
	ts.tv_nsec = -1;
	assert_int_equal(rl_lock(l, &r, 0, 10, RL_SHARED, &ts), -EINVAL);
	assert_int_equal(rl_trylock(l, &r, 5, 5, RL_SHARED), -EINVAL);
	assert_int_equal(rl_trylock(l, &r, 6, 5, RL_EXCLUSIVE), -EINVAL);
	assert_int_equal(rl_trylock(l, &r, 0, 5, (enum rl_mode)42), -EINVAL);
	assert_int_equal(rl_ngranted(l), 0);
	/* smallest valid range */
	assert_int_equal(rl_lock(l, &r, 0, 1, RL_EXCLUSIVE, NULL), 0);
	rl_unlock(l, &r);
}

static void test_overlap_adjacent(void **state)
{
	struct rl_lock *l = *state;
	struct rl_range a, b;

	assert_int_equal(rl_lock(l, &a, 10, 20, RL_EXCLUSIVE, NULL), 0);
	assert_int_equal(try_once(l, 15, 25, RL_EXCLUSIVE), -EAGAIN);
	assert_int_equal(try_once(l, 0, 11, RL_SHARED), -EAGAIN);
	assert_int_equal(try_once(l, 19, 30, RL_SHARED), -EAGAIN);
	assert_int_equal(try_once(l, 12, 13, RL_SHARED), -EAGAIN);
	assert_int_equal(try_once(l, 0, 100, RL_EXCLUSIVE), -EAGAIN);
	assert_int_equal(try_once(l, 10, 20, RL_EXCLUSIVE), -EAGAIN);
	/* adjacent on both sides */
	assert_int_equal(try_once(l, 0, 10, RL_EXCLUSIVE), 0);
	assert_int_equal(try_once(l, 20, 30, RL_EXCLUSIVE), 0);
	assert_int_equal(try_once(l, 9, 10, RL_SHARED), 0);
	assert_int_equal(try_once(l, 20, 21, RL_SHARED), 0);
	/* held together with the adjacent range */
	assert_int_equal(rl_trylock(l, &b, 20, 30, RL_EXCLUSIVE), 0);
	assert_int_equal(rl_ngranted(l), 2);
	rl_unlock(l, &a);
	rl_unlock(l, &b);

	assert_int_equal(rl_lock(l, &a, 10, 20, RL_SHARED, NULL), 0);
	assert_int_equal(try_once(l, 15, 25, RL_SHARED), 0);
	assert_int_equal(try_once(l, 10, 20, RL_SHARED), 0);
	assert_int_equal(try_once(l, 15, 16, RL_EXCLUSIVE), -EAGAIN);
	assert_int_equal(try_once(l, 0, 11, RL_EXCLUSIVE), -EAGAIN);
	assert_int_equal(try_once(l, 0, 10, RL_EXCLUSIVE), 0);
	assert_int_equal(try_once(l, 20, 21, RL_EXCLUSIVE), 0);
	rl_unlock(l, &a);
	assert_int_equal(try_once(l, 0, RL_EOF, RL_EXCLUSIVE), 0);
}

static void test_eof(void **state)
{
	struct rl_lock *l = *state;
	struct rl_range a, b;

	assert_int_equal(rl_lock(l, &a, 100, RL_EOF, RL_EXCLUSIVE, NULL), 0);
	assert_int_equal(try_once(l, RL_EOF - 1, RL_EOF, RL_SHARED), -EAGAIN);
	assert_int_equal(try_once(l, 1ULL << 62, (1ULL << 62) + 1, RL_SHARED), -EAGAIN);
	assert_int_equal(try_once(l, 0, 101, RL_SHARED), -EAGAIN);
	assert_int_equal(try_once(l, 0, RL_EOF, RL_SHARED), -EAGAIN);
	assert_int_equal(try_once(l, 0, 100, RL_EXCLUSIVE), 0);
	assert_int_equal(try_once(l, 99, 100, RL_EXCLUSIVE), 0);
	rl_unlock(l, &a);

	/* two shared [x, EOF) ranges coexist; an exclusive one does not */
	assert_int_equal(rl_lock(l, &a, 0, RL_EOF, RL_SHARED, NULL), 0);
	assert_int_equal(rl_lock(l, &b, 1ULL << 40, RL_EOF, RL_SHARED, NULL), 0);
	assert_int_equal(try_once(l, RL_EOF - 1, RL_EOF, RL_EXCLUSIVE), -EAGAIN);
	rl_unlock(l, &a);
	assert_int_equal(try_once(l, 0, 1ULL << 40, RL_EXCLUSIVE), 0);
	assert_int_equal(try_once(l, 0, (1ULL << 40) + 1, RL_EXCLUSIVE), -EAGAIN);
	rl_unlock(l, &b);
}

struct sharer {
	struct rl_lock *l;
	int idx;
	int *inside;
	int nthreads;
	bool all_met;
};

/* Hold a shared range until every other sharer is inside too. */
static void *sharer_main(void *arg)
{
	struct sharer *s = arg;
	struct rl_range r;
	int i;

	if (rl_lock(s->l, &r, (uint64_t)s->idx * 7, 100 + (uint64_t)s->idx, RL_SHARED, NULL))
		return NULL;
	__atomic_add_fetch(s->inside, 1, __ATOMIC_SEQ_CST);
	for (i = 0; i < POLL_MAX; i++) {
		if (__atomic_load_n(s->inside, __ATOMIC_SEQ_CST) == s->nthreads)
			break;
		usleep(POLL_US);
	}
	s->all_met = i < POLL_MAX;
	rl_unlock(s->l, &r);
	return NULL;
}

static void test_shared_concurrent(void **state)
{
	enum { N = 4 };
	struct rl_lock *l = *state;
	struct sharer s[N];
	pthread_t tid[N];
	int inside = 0;
	int i;

	for (i = 0; i < N; i++) {
		s[i] = (struct sharer){ .l = l, .idx = i, .inside = &inside, .nthreads = N };
		assert_int_equal(pthread_create(&tid[i], NULL, sharer_main, &s[i]), 0);
	}
	for (i = 0; i < N; i++) {
		assert_int_equal(pthread_join(tid[i], NULL), 0);
		assert_true(s[i].all_met);
	}
}

static void test_exclusive_blocks_shared(void **state)
{
	struct rl_lock *l = *state;
	struct rl_range a;
	struct req q;

	assert_int_equal(rl_lock(l, &a, 0, 100, RL_EXCLUSIVE, NULL), 0);
	req_start(&q, l, 50, 150, RL_SHARED, 0);
	wait_nwaiting(l, 1);
	usleep(20000);
	assert_false(req_done(&q));
	rl_unlock(l, &a);
	assert_int_equal(req_wait_done(&q), 0);
	assert_int_equal(try_once(l, 0, 50, RL_EXCLUSIVE), 0);
	assert_int_equal(try_once(l, 149, 150, RL_EXCLUSIVE), -EAGAIN);
	assert_int_equal(try_once(l, 100, 200, RL_SHARED), 0);
	req_finish(&q);
}

static void test_shared_blocks_exclusive(void **state)
{
	struct rl_lock *l = *state;
	struct rl_range a;
	struct req q;

	assert_int_equal(rl_lock(l, &a, 0, 100, RL_SHARED, NULL), 0);
	req_start(&q, l, 99, RL_EOF, RL_EXCLUSIVE, 0);
	wait_nwaiting(l, 1);
	usleep(20000);
	assert_false(req_done(&q));
	rl_unlock(l, &a);
	assert_int_equal(req_wait_done(&q), 0);
	assert_int_equal(try_once(l, 0, 99, RL_EXCLUSIVE), 0);
	req_finish(&q);
}

/* A writer queued behind a reader is granted before a later reader. */
static void test_fifo_writer_first(void **state)
{
	struct rl_lock *l = *state;
	struct rl_range a;
	struct req w, r2;

	assert_int_equal(rl_lock(l, &a, 0, 100, RL_SHARED, NULL), 0);
	req_start(&w, l, 0, 100, RL_EXCLUSIVE, 0);
	wait_nwaiting(l, 1);
	/* a later reader is compatible with the holder but not the writer */
	assert_int_equal(try_once(l, 50, 60, RL_SHARED), -EAGAIN);
	req_start(&r2, l, 50, 60, RL_SHARED, 0);
	wait_nwaiting(l, 2);
	/* a reader that misses the writer's range is not held up */
	assert_int_equal(try_once(l, 100, 200, RL_SHARED), 0);

	rl_unlock(l, &a);
	assert_int_equal(req_wait_done(&w), 0);
	usleep(20000);
	assert_false(req_done(&r2));
	assert_int_equal(rl_nwaiting(l), 1);
	req_finish(&w);
	assert_int_equal(req_wait_done(&r2), 0);
	assert_true(w.seq < r2.seq);
	req_finish(&r2);
}

/* A reader queued behind a writer is granted before a later writer. */
static void test_fifo_reader_first(void **state)
{
	struct rl_lock *l = *state;
	struct rl_range a;
	struct req r, w2;

	assert_int_equal(rl_lock(l, &a, 0, 100, RL_EXCLUSIVE, NULL), 0);
	req_start(&r, l, 0, 100, RL_SHARED, 0);
	wait_nwaiting(l, 1);
	req_start(&w2, l, 40, 50, RL_EXCLUSIVE, 0);
	wait_nwaiting(l, 2);

	rl_unlock(l, &a);
	assert_int_equal(req_wait_done(&r), 0);
	usleep(20000);
	assert_false(req_done(&w2));
	/* while the writer waits, a new overlapping reader queues too */
	assert_int_equal(try_once(l, 45, 46, RL_SHARED), -EAGAIN);
	assert_int_equal(try_once(l, 0, 40, RL_SHARED), 0);
	req_finish(&r);
	assert_int_equal(req_wait_done(&w2), 0);
	assert_true(r.seq < w2.seq);
	req_finish(&w2);
}

/* An unlock does not let a waiter overtake an earlier overlapping one. */
static void test_fifo_unlock_keeps_order(void **state)
{
	struct rl_lock *l = *state;
	struct rl_range a, b;
	struct req w, r;

	assert_int_equal(rl_lock(l, &a, 0, 10, RL_EXCLUSIVE, NULL), 0);
	assert_int_equal(rl_lock(l, &b, 50, 60, RL_EXCLUSIVE, NULL), 0);
	req_start(&w, l, 0, 100, RL_EXCLUSIVE, 0);
	wait_nwaiting(l, 1);
	req_start(&r, l, 50, 60, RL_SHARED, 0);
	wait_nwaiting(l, 2);
	/* r's only granted obstacle goes, but w is still ahead of it */
	rl_unlock(l, &b);
	usleep(20000);
	assert_false(req_done(&r));
	assert_false(req_done(&w));
	rl_unlock(l, &a);
	assert_int_equal(req_wait_done(&w), 0);
	usleep(20000);
	assert_false(req_done(&r));
	req_finish(&w);
	assert_int_equal(req_wait_done(&r), 0);
	req_finish(&r);
}

/* Grant order among several waiters released at once follows arrival. */
static void test_fifo_chain(void **state)
{
	enum { N = 4 };
	struct rl_lock *l = *state;
	struct rl_range a;
	struct req q[N];
	int i;

	assert_int_equal(rl_lock(l, &a, 0, 10, RL_EXCLUSIVE, NULL), 0);
	for (i = 0; i < N; i++) {
		req_start(&q[i], l, (uint64_t)i, 10 + (uint64_t)i, RL_EXCLUSIVE, 0);
		wait_nwaiting(l, (unsigned int)i + 1);
	}
	rl_unlock(l, &a);
	for (i = 0; i < N; i++) {
		assert_int_equal(req_wait_done(&q[i]), 0);
		if (i + 1 < N) {
			usleep(10000);
			assert_false(req_done(&q[i + 1]));
		}
		req_finish(&q[i]);
	}
	for (i = 1; i < N; i++)
		assert_true(q[i - 1].seq < q[i].seq);
}

/* Requests that conflict with nothing granted or queued go ahead. */
static void test_nonconflicting_pass(void **state)
{
	struct rl_lock *l = *state;
	struct rl_range a, b;
	struct req w, r1, many[3];
	int i;

	assert_int_equal(rl_lock(l, &a, 0, 10, RL_EXCLUSIVE, NULL), 0);
	req_start(&w, l, 0, 10, RL_EXCLUSIVE, 0);
	wait_nwaiting(l, 1);
	assert_int_equal(try_once(l, 10, 20, RL_EXCLUSIVE), 0);
	req_start(&r1, l, 5, 20, RL_SHARED, 0);
	wait_nwaiting(l, 2);
	/* shared with the waiting reader, clear of everything else */
	assert_int_equal(try_once(l, 15, 25, RL_SHARED), 0);
	/* but an exclusive one must queue behind the waiting reader */
	assert_int_equal(try_once(l, 15, 25, RL_EXCLUSIVE), -EAGAIN);
	assert_int_equal(try_once(l, 20, 25, RL_EXCLUSIVE), 0);

	/* one unlock wakes every waiter it unblocks */
	assert_int_equal(rl_lock(l, &b, 100, 130, RL_EXCLUSIVE, NULL), 0);
	for (i = 0; i < 3; i++) {
		req_start(&many[i], l, 100 + 10 * (uint64_t)i, 110 + 10 * (uint64_t)i, RL_SHARED,
			  0);
		wait_nwaiting(l, 3 + (unsigned int)i);
	}
	rl_unlock(l, &b);
	for (i = 0; i < 3; i++)
		assert_int_equal(req_wait_done(&many[i]), 0);
	assert_int_equal(rl_nwaiting(l), 2);

	rl_unlock(l, &a);
	assert_int_equal(req_wait_done(&w), 0);
	req_finish(&w);
	assert_int_equal(req_wait_done(&r1), 0);
	req_finish(&r1);
	for (i = 0; i < 3; i++)
		req_finish(&many[i]);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void test_timeout(void **state)
{
	struct rl_lock *l = *state;
	struct rl_range a, b;
	struct timespec ts;
	uint64_t t0, dt;

	assert_int_equal(rl_lock(l, &a, 0, 10, RL_EXCLUSIVE, NULL), 0);
	t0 = now_ns();
	rl_deadline_in(&ts, 50000000);
	assert_int_equal(rl_lock(l, &b, 5, 6, RL_SHARED, &ts), -ETIMEDOUT);
	dt = now_ns() - t0;
	assert_true(dt >= 50000000);
	assert_true(dt < 5000000000ULL);
	assert_int_equal(rl_nwaiting(l), 0);
	assert_int_equal(rl_ngranted(l), 1);

	/* a deadline already passed: fails when blocked, else succeeds */
	rl_deadline_in(&ts, 0);
	assert_int_equal(rl_lock(l, &b, 9, 20, RL_EXCLUSIVE, &ts), -ETIMEDOUT);
	assert_int_equal(rl_lock(l, &b, 10, 20, RL_EXCLUSIVE, &ts), 0);
	rl_unlock(l, &b);
	ts.tv_sec = 0;
	ts.tv_nsec = 0;
	assert_int_equal(rl_lock(l, &b, 0, 1, RL_SHARED, &ts), -ETIMEDOUT);
	rl_unlock(l, &a);
	assert_int_equal(rl_lock(l, &b, 0, 1, RL_SHARED, &ts), 0);
	rl_unlock(l, &b);
}

/* A timed-out waiter stops holding up the requests queued behind it. */
static void test_timeout_leaves_no_trace(void **state)
{
	struct rl_lock *l = *state;
	struct rl_range a;
	struct req t, later, blocked;

	assert_int_equal(rl_lock(l, &a, 0, 10, RL_EXCLUSIVE, NULL), 0);
	/* 500 ms: time for two more requests to queue, even under load */
	req_start(&t, l, 0, 100, RL_EXCLUSIVE, 500000000);
	wait_nwaiting(l, 1);
	/* clear of the holder, queued only because of the timed waiter */
	req_start(&later, l, 50, 60, RL_SHARED, 0);
	wait_nwaiting(l, 2);
	/* blocked by the holder itself too */
	req_start(&blocked, l, 5, 55, RL_SHARED, 0);
	wait_nwaiting(l, 3);
	assert_false(req_done(&t));
	assert_false(req_done(&later));

	assert_int_equal(req_wait_done(&t), -ETIMEDOUT);
	req_finish(&t);
	assert_int_equal(req_wait_done(&later), 0);
	usleep(20000);
	assert_false(req_done(&blocked));
	assert_int_equal(rl_nwaiting(l), 1);
	assert_int_equal(try_once(l, 60, 70, RL_EXCLUSIVE), 0);

	rl_unlock(l, &a);
	assert_int_equal(req_wait_done(&blocked), 0);
	req_finish(&later);
	req_finish(&blocked);
}

static void test_trylock(void **state)
{
	struct rl_lock *l = *state;
	struct rl_range a, b, c;

	assert_int_equal(rl_trylock(l, &a, 0, 10, RL_SHARED), 0);
	assert_int_equal(rl_trylock(l, &b, 0, 10, RL_SHARED), 0);
	assert_int_equal(rl_trylock(l, &c, 5, 15, RL_EXCLUSIVE), -EAGAIN);
	assert_int_equal(rl_ngranted(l), 2);
	assert_int_equal(rl_nwaiting(l), 0);
	rl_unlock(l, &a);
	assert_int_equal(rl_trylock(l, &c, 5, 15, RL_EXCLUSIVE), -EAGAIN);
	rl_unlock(l, &b);
	assert_int_equal(rl_trylock(l, &c, 5, 15, RL_EXCLUSIVE), 0);
	assert_int_equal(rl_trylock(l, &a, 0, 5, RL_EXCLUSIVE), 0);
	rl_unlock(l, &c);
	rl_unlock(l, &a);
}

static void test_disabled_switch(void **state)
{
	struct rl_lock *l = *state;
	struct rl_range a, b, c;

	assert_false(rl_disabled_for_testing());
	assert_int_equal(rl_lock(l, &c, 0, 10, RL_EXCLUSIVE, NULL), 0);
	rl_set_disabled_for_testing(true);
	assert_true(rl_disabled_for_testing());
	assert_int_equal(rl_lock(l, &a, 0, 10, RL_EXCLUSIVE, NULL), 0);
	assert_int_equal(rl_trylock(l, &b, 0, 10, RL_EXCLUSIVE), 0);
	assert_int_equal(rl_ngranted(l), 1);
	/* argument checks still apply */
	assert_int_equal(rl_trylock(l, &b, 10, 0, RL_EXCLUSIVE), -EINVAL);
	rl_unlock(l, &a);
	rl_set_disabled_for_testing(false);
	rl_unlock(l, &b);
	/* the range granted before the switch is released for real */
	rl_unlock(l, &c);
	assert_int_equal(rl_ngranted(l), 0);
	assert_int_equal(try_once(l, 0, 10, RL_EXCLUSIVE), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_setup_teardown(f, lock_setup, lock_teardown)
		T(test_invalid),
		T(test_overlap_adjacent),
		T(test_eof),
		T(test_shared_concurrent),
		T(test_exclusive_blocks_shared),
		T(test_shared_blocks_exclusive),
		T(test_fifo_writer_first),
		T(test_fifo_reader_first),
		T(test_fifo_unlock_keeps_order),
		T(test_fifo_chain),
		T(test_nonconflicting_pass),
		T(test_timeout),
		T(test_timeout_leaves_no_trace),
		T(test_trylock),
		T(test_disabled_switch),
#undef T
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
