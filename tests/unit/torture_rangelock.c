// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Torture test of the byte-range lock, meant to be built with
 * -fsanitize=thread. Worker threads lock random ranges of one lock in
 * random modes, blocking, with trylock or with a short deadline, over a
 * shared array of cells, one cell per 2^40-byte slice of the lock's
 * offset space. An exclusive holder writes its own stamp over its cells,
 * yields, and checks they all still hold the stamp; a shared holder
 * copies its cells, yields, and checks they have not changed.
 *
 * It first runs briefly with the lock disabled (rl_set_disabled_for_
 * testing) and requires the checks to see interference, proving they
 * can; cells are then accessed atomically so that ThreadSanitizer stays
 * quiet. It then runs with the lock for the given time with plain
 * accesses, so ThreadSanitizer also checks that the lock orders them,
 * and requires no interference, no deadlock (a watchdog gives up 10 s
 * after the end) and an empty lock at the end.
 *
 * Usage: torture_rangelock [-t SECONDS] [-j THREADS] [-s SEED]
 * Exit 0 pass, 1 fail, 99 setup error.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "rangelock.h"

#define NCELLS 256
#define CELL_SHIFT 40 /* cell i covers [i << 40, (i + 1) << 40) */
#define MAX_THREADS 64
#define SELFCHECK_NS 1000000000ULL
#define SELFCHECK_ENOUGH 20
#define WATCHDOG_S 10

static struct rl_lock lock;
static uint64_t cells[NCELLS];
static bool use_atomics; /* the lock is disabled: avoid TSan reports */
static bool stop;
static int holders; /* threads holding a range right now */
static int max_holders;
static int finished;
static int selfcheck_seen; /* violations seen while the lock is disabled */

struct worker {
	pthread_t tid;
	unsigned int idx;
	uint64_t rnd;
	unsigned long ops, excl, shared, busy, timedout, violations;
	uint64_t max_wait_ns;
};

static uint64_t rnd_next(uint64_t *s)
{
	/* xorshift64* */
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 2685821657736338717ULL;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static uint64_t cell_get(unsigned int i)
{
	if (use_atomics)
		return __atomic_load_n(&cells[i], __ATOMIC_RELAXED);
	return cells[i];
}

static void cell_set(unsigned int i, uint64_t v)
{
	if (use_atomics)
		__atomic_store_n(&cells[i], v, __ATOMIC_RELAXED);
	else
		cells[i] = v;
}

/* Give other threads a chance to interfere while a range is held. */
static void dawdle(struct worker *w)
{
	unsigned int n = (unsigned int)(rnd_next(&w->rnd) % 8);
	volatile unsigned int spin;

	if (n < 3) {
		sched_yield();
	} else if (n < 6) {
		for (spin = 0; spin < 200 * n; spin++)
			;
	}
}

static void note_holder(int delta)
{
	int h = __atomic_add_fetch(&holders, delta, __ATOMIC_RELAXED);
	int m = __atomic_load_n(&max_holders, __ATOMIC_RELAXED);

	while (h > m && !__atomic_compare_exchange_n(&max_holders, &m, h, true, __ATOMIC_RELAXED,
						     __ATOMIC_RELAXED))
		;
}

static void check_exclusive(struct worker *w, unsigned int a, unsigned int b)
{
	uint64_t stamp = ((uint64_t)w->idx + 1) << 48 | w->ops;
	unsigned int i;

	for (i = a; i < b; i++)
		cell_set(i, stamp);
	dawdle(w);
	for (i = a; i < b; i++) {
		if (cell_get(i) != stamp) {
			w->violations++;
			break;
		}
	}
}

static void check_shared(struct worker *w, unsigned int a, unsigned int b)
{
	uint64_t copy[NCELLS];
	unsigned int i;

	for (i = a; i < b; i++)
		copy[i] = cell_get(i);
	dawdle(w);
	for (i = a; i < b; i++) {
		if (cell_get(i) != copy[i]) {
			w->violations++;
			break;
		}
	}
}

/* One random request; the cells it covers are [*a, *b). */
static int one_lock(struct worker *w, struct rl_range *r, unsigned int *a, unsigned int *b,
		    enum rl_mode *mode)
{
	uint64_t x = rnd_next(&w->rnd);
	unsigned int len = 1 + (unsigned int)(x % 16);
	uint64_t end;
	struct timespec ts;
	uint64_t t0;
	int rc;

	x >>= 8;
	if (x % 8 == 0)
		len = 1 + (unsigned int)((x >> 3) % NCELLS);
	x >>= 16;
	*a = (unsigned int)(x % NCELLS);
	x >>= 8;
	*b = *a + len > NCELLS ? NCELLS : *a + len;
	end = (uint64_t)*b << CELL_SHIFT;
	if (x % 16 == 0 || *b == NCELLS) {
		*b = NCELLS;
		end = RL_EOF;
	}
	x >>= 4;
	*mode = x % 3 == 0 ? RL_EXCLUSIVE : RL_SHARED;
	x >>= 2;

	switch (x % 8) {
	case 0:
		rc = rl_trylock(&lock, r, (uint64_t)*a << CELL_SHIFT, end, *mode);
		if (rc == -EAGAIN)
			w->busy++;
		return rc;
	case 1:
		rl_deadline_in(&ts, (x >> 3) % 200000);
		rc = rl_lock(&lock, r, (uint64_t)*a << CELL_SHIFT, end, *mode, &ts);
		if (rc == -ETIMEDOUT)
			w->timedout++;
		return rc;
	default:
		t0 = now_ns();
		rc = rl_lock(&lock, r, (uint64_t)*a << CELL_SHIFT, end, *mode, NULL);
		t0 = now_ns() - t0;
		if (t0 > w->max_wait_ns)
			w->max_wait_ns = t0;
		return rc;
	}
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct rl_range r;
	enum rl_mode mode;
	unsigned int a, b;
	unsigned long seen;
	int rc;

	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		w->ops++;
		rc = one_lock(w, &r, &a, &b, &mode);
		if (rc == -EAGAIN || rc == -ETIMEDOUT)
			continue;
		if (rc) {
			fprintf(stderr, "rl_lock: unexpected %s\n", strerror(-rc));
			w->violations++;
			break;
		}
		seen = w->violations;
		note_holder(1);
		if (mode == RL_EXCLUSIVE) {
			w->excl++;
			check_exclusive(w, a, b);
		} else {
			w->shared++;
			check_shared(w, a, b);
		}
		note_holder(-1);
		rl_unlock(&lock, &r);
		if (use_atomics && w->violations != seen &&
		    __atomic_add_fetch(&selfcheck_seen, 1, __ATOMIC_RELAXED) >= SELFCHECK_ENOUGH)
			__atomic_store_n(&stop, true, __ATOMIC_RELAXED);
	}
	__atomic_add_fetch(&finished, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* Run @n workers for @ns (or until they stop early); total violations. */
static long run_phase(const char *name, struct worker *ws, unsigned int n, uint64_t ns,
		      uint64_t seed)
{
	struct worker sum = { 0 };
	uint64_t t_end;
	unsigned int i;
	int rc;

	__atomic_store_n(&stop, false, __ATOMIC_RELAXED);
	__atomic_store_n(&finished, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&max_holders, 0, __ATOMIC_RELAXED);
	for (i = 0; i < n; i++) {
		memset(&ws[i], 0, sizeof(ws[i]));
		ws[i].idx = i;
		ws[i].rnd = seed * 0x9e3779b97f4a7c15ULL + i + 1;
		rc = pthread_create(&ws[i].tid, NULL, worker_main, &ws[i]);
		if (rc) {
			fprintf(stderr, "pthread_create: %s\n", strerror(rc));
			exit(99);
		}
	}
	t_end = now_ns() + ns;
	while (now_ns() < t_end && __atomic_load_n(&finished, __ATOMIC_ACQUIRE) < (int)n)
		usleep(10000);
	__atomic_store_n(&stop, true, __ATOMIC_RELAXED);
	t_end = now_ns() + WATCHDOG_S * 1000000000ULL;
	while (__atomic_load_n(&finished, __ATOMIC_ACQUIRE) < (int)n) {
		if (now_ns() > t_end) {
			fprintf(stderr,
				"%s: FAIL: workers stuck %d s after the end (deadlock?): "
				"%u waiting, %u granted\n",
				name, WATCHDOG_S, rl_nwaiting(&lock), rl_ngranted(&lock));
			exit(1);
		}
		usleep(10000);
	}
	for (i = 0; i < n; i++) {
		pthread_join(ws[i].tid, NULL);
		sum.ops += ws[i].ops;
		sum.excl += ws[i].excl;
		sum.shared += ws[i].shared;
		sum.busy += ws[i].busy;
		sum.timedout += ws[i].timedout;
		sum.violations += ws[i].violations;
		if (ws[i].max_wait_ns > sum.max_wait_ns)
			sum.max_wait_ns = ws[i].max_wait_ns;
	}
	printf("%s: %lu requests: %lu exclusive, %lu shared, %lu trylock busy, %lu timed out; "
	       "up to %d holders at once; longest blocking wait %.1f ms; %lu violations\n",
	       name, sum.ops, sum.excl, sum.shared, sum.busy, sum.timedout, max_holders,
	       (double)sum.max_wait_ns / 1e6, sum.violations);
	return (long)sum.violations;
}

int main(int argc, char **argv)
{
	static struct worker ws[MAX_THREADS];
	double seconds = 3.0;
	unsigned int nthreads = 8;
	uint64_t seed = (uint64_t)time(NULL);
	long v;
	int opt, rc;

	while ((opt = getopt(argc, argv, "t:j:s:")) != -1) {
		switch (opt) {
		case 't':
			seconds = atof(optarg);
			break;
		case 'j':
			nthreads = (unsigned int)atoi(optarg);
			break;
		case 's':
			seed = strtoull(optarg, NULL, 0);
			break;
		default:
			fprintf(stderr, "usage: %s [-t SECONDS] [-j THREADS] [-s SEED]\n", argv[0]);
			return 99;
		}
	}
	if (nthreads < 2 || nthreads > MAX_THREADS || seconds <= 0) {
		fprintf(stderr, "%s: need 2..%d threads and a positive time\n", argv[0],
			MAX_THREADS);
		return 99;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("seed %llu, %u threads, %.1f s\n", (unsigned long long)seed, nthreads, seconds);
	rc = rl_init(&lock);
	if (rc) {
		fprintf(stderr, "rl_init: %s\n", strerror(-rc));
		return 99;
	}

	rl_set_disabled_for_testing(true);
	use_atomics = true;
	v = run_phase("lock disabled", ws, nthreads, SELFCHECK_NS, seed);
	use_atomics = false;
	rl_set_disabled_for_testing(false);
	if (v == 0) {
		printf("FAIL: no interference seen without the lock: the checks prove nothing\n");
		return 1;
	}

	v = run_phase("lock enabled", ws, nthreads, (uint64_t)(seconds * 1e9), seed);
	if (v) {
		printf("FAIL: %ld violations with the lock\n", v);
		return 1;
	}
	if (rl_nwaiting(&lock) || rl_ngranted(&lock)) {
		printf("FAIL: lock not empty at the end: %u waiting, %u granted\n",
		       rl_nwaiting(&lock), rl_ngranted(&lock));
		return 1;
	}
	rl_destroy(&lock);
	printf("PASS\n");
	return 0;
}
