// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * bench_rangelock: cost of the byte-range lock. Single-threaded, the
 * nanoseconds per uncontended lock+unlock pair (exclusive, shared,
 * trylock, and with other ranges already granted), next to a bare
 * pthread mutex pair for scale. Multi-threaded, pairs per second: two
 * threads on disjoint ranges of one lock (they share only its mutex),
 * two readers of one range, and contended mixes where requests wait:
 * threads handing one exclusive range back and forth, and readers and
 * writers on random overlapping ranges holding each for a short while.
 *
 * Usage: bench_rangelock [-n PAIRS] [-t SECONDS]
 *   (default 10000000 pairs per single-threaded case, 1 s per threaded one)
 * Output: one line per case. Exit 0, or 1 naming the failing call.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "rangelock.h"

#define BENCH_MAX_THREADS 16

static struct rl_lock lock;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void die_rc(const char *call, int rc)
{
	fprintf(stderr, "bench_rangelock: %s: %s\n", call, strerror(-rc));
	exit(1);
}

static void bench_mutex(unsigned long n)
{
	pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
	uint64_t t0 = now_ns();
	unsigned long i;

	for (i = 0; i < n; i++) {
		pthread_mutex_lock(&m);
		__asm__ volatile("" ::: "memory");
		pthread_mutex_unlock(&m);
	}
	printf("%-44s %7.1f ns/pair\n", "pthread mutex (reference)",
	       (double)(now_ns() - t0) / (double)n);
}

/* @others ranges granted beforehand, disjoint from the measured one. */
static void bench_single(const char *name, enum rl_mode mode, bool use_try, unsigned int others,
			 unsigned long n)
{
	struct rl_range held[8], r;
	unsigned long i;
	unsigned int k;
	uint64_t t0;
	int rc;

	for (k = 0; k < others; k++) {
		rc = rl_lock(&lock, &held[k], 1000000 + k * 4096ULL, 1000000 + (k + 1) * 4096ULL,
			     RL_SHARED, NULL);
		if (rc)
			die_rc("rl_lock", rc);
	}
	t0 = now_ns();
	for (i = 0; i < n; i++) {
		if (use_try)
			rc = rl_trylock(&lock, &r, 0, 131072, mode);
		else
			rc = rl_lock(&lock, &r, 0, 131072, mode, NULL);
		if (rc)
			die_rc("rl_lock", rc);
		rl_unlock(&lock, &r);
	}
	printf("%-44s %7.1f ns/pair\n", name, (double)(now_ns() - t0) / (double)n);
	for (k = 0; k < others; k++)
		rl_unlock(&lock, &held[k]);
}

enum pattern {
	P_DISJOINT,    /* thread i: exclusive [i MiB, i MiB + 128 KiB) */
	P_SAME_SHARED, /* everyone: shared [0, 128 KiB) */
	P_HANDOFF,     /* everyone: exclusive [0, 128 KiB) */
	P_MIXED,       /* random 4 of 16 slots, 1 in 4 exclusive, held ~1 us */
};

struct thr {
	pthread_t tid;
	unsigned int idx;
	enum pattern pat;
	uint64_t rnd;
	unsigned long pairs;
};

static bool bench_stop;
static pthread_barrier_t bench_barrier;

static void hold_a_while(void)
{
	volatile unsigned int spin;

	for (spin = 0; spin < 300; spin++)
		;
}

static void *thr_main(void *arg)
{
	struct thr *t = arg;
	uint64_t start, end;
	enum rl_mode mode;
	struct rl_range r;
	int rc;

	pthread_barrier_wait(&bench_barrier);
	while (!__atomic_load_n(&bench_stop, __ATOMIC_RELAXED)) {
		switch (t->pat) {
		case P_DISJOINT:
			start = (uint64_t)t->idx << 20;
			end = start + 131072;
			mode = RL_EXCLUSIVE;
			break;
		case P_SAME_SHARED:
			start = 0;
			end = 131072;
			mode = RL_SHARED;
			break;
		case P_HANDOFF:
			start = 0;
			end = 131072;
			mode = RL_EXCLUSIVE;
			break;
		default:
			t->rnd ^= t->rnd << 13;
			t->rnd ^= t->rnd >> 7;
			t->rnd ^= t->rnd << 17;
			start = (t->rnd % 13) << 16;
			end = start + (4 << 16);
			mode = (t->rnd >> 8) % 4 ? RL_SHARED : RL_EXCLUSIVE;
			break;
		}
		rc = rl_lock(&lock, &r, start, end, mode, NULL);
		if (rc)
			die_rc("rl_lock", rc);
		if (t->pat == P_MIXED)
			hold_a_while();
		rl_unlock(&lock, &r);
		t->pairs++;
	}
	return NULL;
}

static void bench_threads(const char *name, enum pattern pat, unsigned int n, double seconds)
{
	struct thr t[BENCH_MAX_THREADS];
	unsigned long total = 0, lo = ~0UL, hi = 0;
	unsigned int i;
	uint64_t t0, dt;
	int rc;

	__atomic_store_n(&bench_stop, false, __ATOMIC_RELAXED);
	rc = pthread_barrier_init(&bench_barrier, NULL, n + 1);
	if (rc)
		die_rc("pthread_barrier_init", -rc);
	for (i = 0; i < n; i++) {
		t[i] = (struct thr){ .idx = i, .pat = pat, .rnd = 0x9e3779b97f4a7c15ULL * (i + 1) };
		rc = pthread_create(&t[i].tid, NULL, thr_main, &t[i]);
		if (rc)
			die_rc("pthread_create", -rc);
	}
	pthread_barrier_wait(&bench_barrier);
	t0 = now_ns();
	usleep((useconds_t)(seconds * 1e6));
	__atomic_store_n(&bench_stop, true, __ATOMIC_RELAXED);
	for (i = 0; i < n; i++) {
		pthread_join(t[i].tid, NULL);
		total += t[i].pairs;
		if (t[i].pairs < lo)
			lo = t[i].pairs;
		if (t[i].pairs > hi)
			hi = t[i].pairs;
	}
	dt = now_ns() - t0;
	pthread_barrier_destroy(&bench_barrier);
	printf("%-44s %7.3f Mpairs/s, %.0f ns/pair; per thread %lu..%lu\n", name,
	       (double)total * 1e3 / (double)dt, (double)dt / (double)total, lo, hi);
}

int main(int argc, char **argv)
{
	unsigned long n = 10000000;
	double seconds = 1.0;
	int opt, rc;

	while ((opt = getopt(argc, argv, "n:t:")) != -1) {
		switch (opt) {
		case 'n':
			n = strtoul(optarg, NULL, 0);
			break;
		case 't':
			seconds = atof(optarg);
			break;
		default:
			fprintf(stderr, "usage: %s [-n PAIRS] [-t SECONDS]\n", argv[0]);
			return 1;
		}
	}
	if (n == 0 || seconds <= 0) {
		fprintf(stderr, "bench_rangelock: need -n > 0 and -t > 0\n");
		return 1;
	}
	rc = rl_init(&lock);
	if (rc)
		die_rc("rl_init", rc);

	bench_mutex(n);
	bench_single("uncontended exclusive lock+unlock", RL_EXCLUSIVE, false, 0, n);
	bench_single("uncontended shared lock+unlock", RL_SHARED, false, 0, n);
	bench_single("uncontended exclusive trylock+unlock", RL_EXCLUSIVE, true, 0, n);
	bench_single("exclusive, 8 other ranges granted", RL_EXCLUSIVE, false, 8, n);
	bench_threads("2 threads, disjoint exclusive ranges", P_DISJOINT, 2, seconds);
	bench_threads("2 threads, same shared range", P_SAME_SHARED, 2, seconds);
	bench_threads("2 threads, same exclusive range", P_HANDOFF, 2, seconds);
	bench_threads("4 threads, same exclusive range", P_HANDOFF, 4, seconds);
	bench_threads("8 threads, mixed overlapping, held ~1 us", P_MIXED, 8, seconds);
	rl_destroy(&lock);
	return 0;
}
