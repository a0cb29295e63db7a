// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Byte-range lock: conflict checks, FIFO queueing, granting on unlock and
 * on timeout, and the testing-only switch that disables it. How it
 * operates and its lock order are described in rangelock.h.
 */
#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rangelock.h"

#define RL_NSEC_PER_SEC 1000000000L

enum {
	RL_ST_IDLE = 0x4c0, /* not in any list */
	RL_ST_WAITING,	    /* in l->waiting, r->cond initialized */
	RL_ST_GRANTED,	    /* in l->granted */
	RL_ST_BYPASS,	    /* "granted" while locking was disabled */
};

static bool rl_disabled;
static pthread_once_t rl_env_once = PTHREAD_ONCE_INIT;

static void rl_read_env(void)
{
	const char *v = getenv("LACUNA_TEST_DISABLE_RANGELOCK");

	if (v && *v && strcmp(v, "0") != 0)
		__atomic_store_n(&rl_disabled, true, __ATOMIC_RELAXED);
}

void rl_set_disabled_for_testing(bool disabled)
{
	pthread_once(&rl_env_once, rl_read_env);
	__atomic_store_n(&rl_disabled, disabled, __ATOMIC_RELAXED);
}

bool rl_disabled_for_testing(void)
{
	pthread_once(&rl_env_once, rl_read_env);
	return __atomic_load_n(&rl_disabled, __ATOMIC_RELAXED);
}

int rl_init(struct rl_lock *l)
{
	int rc;

	pthread_once(&rl_env_once, rl_read_env);
	memset(l, 0, sizeof(*l));
	rc = pthread_condattr_init(&l->condattr);
	if (rc)
		return -rc;
	rc = pthread_condattr_setclock(&l->condattr, CLOCK_MONOTONIC);
	if (rc)
		goto out_condattr;
	rc = pthread_mutex_init(&l->mutex, NULL);
	if (rc)
		goto out_condattr;
	return 0;

out_condattr:
	pthread_condattr_destroy(&l->condattr);
	return -rc;
}

void rl_destroy(struct rl_lock *l)
{
	assert(!l->granted.first && !l->waiting.first);
	pthread_mutex_destroy(&l->mutex);
	pthread_condattr_destroy(&l->condattr);
}

static void rl_list_add_tail(struct rl_list *h, struct rl_range *r)
{
	r->next = NULL;
	r->prev = h->last;
	if (h->last)
		h->last->next = r;
	else
		h->first = r;
	h->last = r;
}

static void rl_list_del(struct rl_list *h, struct rl_range *r)
{
	if (r->prev)
		r->prev->next = r->next;
	else
		h->first = r->next;
	if (r->next)
		r->next->prev = r->prev;
	else
		h->last = r->prev;
}

static bool rl_conflict(const struct rl_range *a, const struct rl_range *b)
{
	return a->start < b->end && b->start < a->end &&
	       (a->mode == RL_EXCLUSIVE || b->mode == RL_EXCLUSIVE);
}

/* Does @r conflict with a range in [@from, @stop) of a list? */
static bool rl_conflict_any(const struct rl_range *r, const struct rl_range *from,
			    const struct rl_range *stop)
{
	for (; from != stop; from = from->next)
		if (rl_conflict(r, from))
			return true;
	return false;
}

static void rl_grant(struct rl_lock *l, struct rl_range *r)
{
	rl_list_add_tail(&l->granted, r);
	l->ngranted++;
	r->state = RL_ST_GRANTED;
}

/*
 * @gone has just left the granted list or the queue: grant, in queue
 * order, every waiter that no longer conflicts with anything before it.
 * Only waiters that conflicted with @gone can have been unblocked.
 */
static void rl_grant_waiters(struct rl_lock *l, const struct rl_range *gone)
{
	struct rl_range *w, *next;

	for (w = l->waiting.first; w; w = next) {
		next = w->next;
		if (!rl_conflict(w, gone) || rl_conflict_any(w, l->granted.first, NULL) ||
		    rl_conflict_any(w, l->waiting.first, w))
			continue;
		rl_list_del(&l->waiting, w);
		l->nwaiting--;
		rl_grant(l, w);
		pthread_cond_signal(&w->cond);
	}
}

/* Queue @r and sleep until granted or @deadline. Called with the mutex. */
static int rl_wait(struct rl_lock *l, struct rl_range *r, const struct timespec *deadline)
{
	int rc;

	rc = pthread_cond_init(&r->cond, &l->condattr);
	if (rc) {
		r->state = RL_ST_IDLE;
		return -rc;
	}
	rl_list_add_tail(&l->waiting, r);
	l->nwaiting++;
	r->state = RL_ST_WAITING;
	do {
		if (deadline)
			rc = pthread_cond_timedwait(&r->cond, &l->mutex, deadline);
		else
			rc = pthread_cond_wait(&r->cond, &l->mutex);
	} while (r->state == RL_ST_WAITING && rc == 0);
	pthread_cond_destroy(&r->cond);
	if (r->state == RL_ST_GRANTED)
		return 0;

	rl_list_del(&l->waiting, r);
	l->nwaiting--;
	r->state = RL_ST_IDLE;
	rl_grant_waiters(l, r);
	return -rc;
}

static int rl_prepare(struct rl_range *r, uint64_t start, uint64_t end, enum rl_mode mode)
{
	if (start >= end || (mode != RL_SHARED && mode != RL_EXCLUSIVE))
		return -EINVAL;
	r->start = start;
	r->end = end;
	r->mode = mode;
	if (__atomic_load_n(&rl_disabled, __ATOMIC_RELAXED)) {
		r->state = RL_ST_BYPASS;
		return 1;
	}
	return 0;
}

int rl_lock(struct rl_lock *l, struct rl_range *r, uint64_t start, uint64_t end, enum rl_mode mode,
	    const struct timespec *deadline)
{
	int rc;

	if (deadline && (deadline->tv_nsec < 0 || deadline->tv_nsec >= RL_NSEC_PER_SEC))
		return -EINVAL;
	rc = rl_prepare(r, start, end, mode);
	if (rc)
		return rc < 0 ? rc : 0;

	pthread_mutex_lock(&l->mutex);
	if (!rl_conflict_any(r, l->granted.first, NULL) &&
	    !rl_conflict_any(r, l->waiting.first, NULL))
		rl_grant(l, r);
	else
		rc = rl_wait(l, r, deadline);
	pthread_mutex_unlock(&l->mutex);
	return rc;
}

int rl_trylock(struct rl_lock *l, struct rl_range *r, uint64_t start, uint64_t end,
	       enum rl_mode mode)
{
	int rc;

	rc = rl_prepare(r, start, end, mode);
	if (rc)
		return rc < 0 ? rc : 0;

	pthread_mutex_lock(&l->mutex);
	if (!rl_conflict_any(r, l->granted.first, NULL) &&
	    !rl_conflict_any(r, l->waiting.first, NULL)) {
		rl_grant(l, r);
	} else {
		r->state = RL_ST_IDLE;
		rc = -EAGAIN;
	}
	pthread_mutex_unlock(&l->mutex);
	return rc;
}

void rl_unlock(struct rl_lock *l, struct rl_range *r)
{
	if (r->state == RL_ST_BYPASS) {
		r->state = RL_ST_IDLE;
		return;
	}
	assert(r->state == RL_ST_GRANTED);

	pthread_mutex_lock(&l->mutex);
	rl_list_del(&l->granted, r);
	l->ngranted--;
	r->state = RL_ST_IDLE;
	if (l->waiting.first)
		rl_grant_waiters(l, r);
	pthread_mutex_unlock(&l->mutex);
}

void rl_deadline_in(struct timespec *ts, uint64_t ns)
{
	uint64_t sec = ns / RL_NSEC_PER_SEC;

	clock_gettime(CLOCK_MONOTONIC, ts);
	ts->tv_nsec += (long)(ns % RL_NSEC_PER_SEC);
	if (ts->tv_nsec >= RL_NSEC_PER_SEC) {
		ts->tv_nsec -= RL_NSEC_PER_SEC;
		sec++;
	}
	ts->tv_sec += (time_t)sec;
}

unsigned int rl_nwaiting(struct rl_lock *l)
{
	unsigned int n;

	pthread_mutex_lock(&l->mutex);
	n = l->nwaiting;
	pthread_mutex_unlock(&l->mutex);
	return n;
}

unsigned int rl_ngranted(struct rl_lock *l)
{
	unsigned int n;

	pthread_mutex_lock(&l->mutex);
	n = l->ngranted;
	pthread_mutex_unlock(&l->mutex);
	return n;
}
