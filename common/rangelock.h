/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Byte-range lock: one per inode. lacunafs takes it exclusively for every
 * write, fallocate and truncate, and shared for the atomic sparse read,
 * so that no change made through the mount lands between the
 * SEEK_DATA/SEEK_HOLE walk and the pread of a sparse read.
 *
 * Operation
 * ---------
 * A lock keeps two lists of ranges under one mutex: the ranges granted
 * and, in arrival order, the requests still waiting. A range [start, end)
 * is half-open with 64-bit offsets; end = RL_EOF (UINT64_MAX) reaches to
 * the end of every possible file. Two ranges overlap when each starts
 * before the other ends, so [0, 10) and [10, 20) never overlap. Two
 * overlapping ranges conflict unless both are shared.
 *
 * A new request is granted at once when it conflicts with no granted range
 * and with no waiting request. Otherwise it joins the tail of the queue
 * and sleeps. Checking the waiting requests, not only the granted ones,
 * is what makes the lock FIFO-fair: a reader that arrives after a waiting
 * writer it overlaps queues behind that writer, so a stream of readers
 * cannot starve a writer, and a writer arriving after a waiting reader
 * queues behind the reader in the same way. A request that conflicts
 * with nothing proceeds in parallel with everything else, even when it
 * arrives after unrelated waiters.
 *
 * Granting is done by the thread that makes it possible, not by the
 * waiter: rl_unlock() removes its range and walks the queue in order,
 * granting every waiter that now conflicts with no granted range and no
 * earlier waiter, and wakes exactly those waiters: each sleeps on its own
 * condition variable, initialized only when it has to wait, so nobody
 * else is woken (with one shared condition variable and a broadcast,
 * contended throughput measured half as high). A waiter that is still
 * queued when its deadline passes removes itself and runs the same walk,
 * since requests behind it may have been waiting only for it: a timed-out
 * request leaves no trace. A waiter that is granted just as its deadline
 * passes keeps the grant and returns 0.
 *
 * Only two events can unblock a waiter: a granted range going away
 * (unlock) and an earlier waiter going away (timeout). Granting a waiter
 * moves it from the queue to the granted list, which changes nothing for
 * the requests behind it. So after every operation no waiter could be
 * granted but is not.
 *
 * Costs: uncontended lock and unlock take the mutex once each and never
 * allocate (about 20-30 ns a pair, see bench/bench_rangelock.c); the
 * caller provides the struct rl_range, usually on its stack. The lists
 * are scanned linearly, which is right for the handful of concurrent
 * requests one inode sees (one per FUSE worker thread). A range is not
 * tied to a thread: any thread may unlock it.
 *
 * Lock order
 * ----------
 * The internal mutex (rl_lock.mutex) is a leaf: nothing else is locked
 * while it is held and no callback runs under it.
 *
 * The range lock itself is a sleeping lock held across I/O. Do not wait
 * for it while holding a mutex its holders may need (the inode table's,
 * for instance). A thread must not wait for a second range on a lock on
 * which it already holds one: because of FIFO order even two shared
 * ranges can deadlock, when a writer queues between them.
 */
#ifndef LACUNA_RANGELOCK_H
#define LACUNA_RANGELOCK_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

/* end of a range that reaches to infinity */
#define RL_EOF UINT64_MAX

enum rl_mode {
	RL_SHARED,
	RL_EXCLUSIVE,
};

/*
 * One request or grant. Owned by the caller (on its stack for the
 * duration of the lock), passed to rl_lock()/rl_trylock() and then to
 * rl_unlock(). The fields are private to rangelock.c; it need not be
 * initialized before rl_lock().
 */
struct rl_range {
	struct rl_range *prev, *next;
	uint64_t start, end;
	enum rl_mode mode;
	int state;
	pthread_cond_t cond; /* initialized only while waiting */
};

struct rl_list {
	struct rl_range *first, *last;
};

struct rl_lock {
	pthread_mutex_t mutex; /* leaf: protects everything below */
	struct rl_list granted;
	struct rl_list waiting; /* arrival order */
	unsigned int ngranted, nwaiting;
	pthread_condattr_t condattr; /* CLOCK_MONOTONIC, for waiters */
};

/* 0 or -errno from pthread_mutex_init/pthread_condattr_init. */
int rl_init(struct rl_lock *l);

/* No range may be granted or waiting. */
void rl_destroy(struct rl_lock *l);

/*
 * Lock [start, end) in @mode, sleeping while it conflicts with a granted
 * range or with an earlier waiting request. @deadline is an ABSOLUTE time
 * on CLOCK_MONOTONIC (NULL waits forever); a deadline already passed
 * still grants a range that conflicts with nothing. Fill it with
 * rl_deadline_in() for a relative timeout.
 *
 * Returns 0 with @r granted; -ETIMEDOUT if still waiting at @deadline
 * (nothing is left queued); -EINVAL if start >= end, @mode is not an
 * rl_mode or @deadline's tv_nsec is out of range.
 */
int rl_lock(struct rl_lock *l, struct rl_range *r, uint64_t start, uint64_t end, enum rl_mode mode,
	    const struct timespec *deadline);

/*
 * As rl_lock() but never sleeps: -EAGAIN when rl_lock() would have waited
 * (including behind a waiting request, to stay fair).
 */
int rl_trylock(struct rl_lock *l, struct rl_range *r, uint64_t start, uint64_t end,
	       enum rl_mode mode);

/* Release a range granted by rl_lock()/rl_trylock(), waking who can go. */
void rl_unlock(struct rl_lock *l, struct rl_range *r);

/* Fill @ts with the CLOCK_MONOTONIC time @ns nanoseconds from now. */
void rl_deadline_in(struct timespec *ts, uint64_t ns);

/* Requests currently waiting / ranges currently granted (for tests). */
unsigned int rl_nwaiting(struct rl_lock *l);
unsigned int rl_ngranted(struct rl_lock *l);

/*
 * ======================== TESTING ONLY ========================
 * !!! DISABLES ALL RANGE LOCKING IN THE PROCESS WHEN ENABLED !!!
 *
 * While disabled, every rl_lock()/rl_trylock() on every lock succeeds at
 * once without excluding anything, and rl_unlock() of such a range does
 * nothing. This exists only so that torture tests can prove they detect
 * the races the lock prevents. Never enable it in a real deployment: the
 * sparse read is no longer atomic and concurrent writes interleave.
 *
 * Two switches, either one disables:
 *   - rl_set_disabled_for_testing(true), from a test program;
 *   - the environment variable LACUNA_TEST_DISABLE_RANGELOCK=1, read
 *     once per process, at the first call of rl_init() or of either
 *     function below (for tests that drive the lacunafs daemon from
 *     outside). A daemon should call rl_disabled_for_testing() at
 *     startup and log a warning when it returns true.
 * Ranges granted before the switch flips are still released correctly.
 * ===============================================================
 */
void rl_set_disabled_for_testing(bool disabled);
bool rl_disabled_for_testing(void);

#endif
