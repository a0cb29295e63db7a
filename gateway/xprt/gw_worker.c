// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * lacunad's worker pool: threads that run RPC processing on whole
 * records for the transports (gw_worker.h).
 *
 * Operation
 * ---------
 * Two lists, each under its own mutex so the transport queueing calls
 * and the workers handing back replies do not contend: the queue (work
 * waiting for a worker, a condition variable for idle workers) and the
 * done list (replies waiting for the transport). The queue is a ring of
 * flows, one per connection with work waiting, each a FIFO of its
 * connection's work: a worker takes the first work of the first flow
 * and puts that flow at the end of the ring if it has more, so every
 * connection with work gets a worker in turn however many requests
 * another one has pipelined. Work without a flow shares one. A worker
 * takes one work at a time, processes it with gw_rpc_process() building
 * the reply with its own xdr_carver over the server's large pool, and
 * appends it to the done list; when the list was empty it calls the notify
 * callback, so the transport is woken once per batch of replies, not
 * once per reply. The transport takes the whole done list at once.
 *
 * The carvers live in the pool object, not on the workers' stacks: a
 * reply's xdr_out refers to its carver until the transport releases it,
 * which may be after the worker moved on. They are finished (their
 * current chunk dropped) only when the pool stops, after every reply has
 * been released.
 *
 * Lock order: the queue lock and the done lock are never held together.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gw_worker.h"
#include "log.h"

struct gw_workers {
	struct gw_srv *srv;
	gw_workers_notify_fn *notify;
	void *arg;

	pthread_mutex_t qlock;	     /* guards the flows, their fields, stop */
	pthread_cond_t qcond;	     /* queue non-empty, or stop */
	struct gw_flow *head, *tail; /* flows with work, in turn */
	struct gw_flow shared;	     /* work queued without a flow */
	bool stop;

	pthread_mutex_t dlock; /* guards done_head, done_tail */
	struct gw_work *done_head, *done_tail;

	unsigned int nthreads;
	pthread_t *threads;
	struct xdr_carver *carvers; /* one per thread */
};

struct gw_worker_arg {
	struct gw_workers *w;
	unsigned int idx;
};

/* Put @f at the end of the ring of flows with work (qlock held). */
static void gw_flow_ring_add(struct gw_workers *w, struct gw_flow *f)
{
	f->next = NULL;
	if (w->tail)
		w->tail->next = f;
	else
		w->head = f;
	w->tail = f;
}

static struct gw_work *gw_worker_take(struct gw_workers *w)
{
	struct gw_work *wk;

	struct gw_flow *f;

	pthread_mutex_lock(&w->qlock);
	while (!w->head && !w->stop)
		pthread_cond_wait(&w->qcond, &w->qlock);
	wk = NULL;
	f = w->head;
	if (f) {
		w->head = f->next;
		if (!w->head)
			w->tail = NULL;
		wk = f->head;
		f->head = wk->next;
		if (!f->head)
			f->tail = NULL;
		f->queued = f->head != NULL;
		if (f->queued)
			gw_flow_ring_add(w, f);
	}
	pthread_mutex_unlock(&w->qlock);
	return wk;
}

static void gw_worker_give_back(struct gw_workers *w, struct gw_work *wk)
{
	bool was_empty;

	wk->next = NULL;
	pthread_mutex_lock(&w->dlock);
	was_empty = !w->done_head;
	if (w->done_tail)
		w->done_tail->next = wk;
	else
		w->done_head = wk;
	w->done_tail = wk;
	pthread_mutex_unlock(&w->dlock);
	if (was_empty)
		w->notify(w->arg);
}

static void *gw_worker_main(void *p)
{
	struct gw_worker_arg *a = p;
	struct gw_workers *w = a->w;
	struct xdr_carver *carver = &w->carvers[a->idx];
	struct gw_work *wk;
	char name[16];

	snprintf(name, sizeof(name), "lacunad-w%u", a->idx);
	pthread_setname_np(pthread_self(), name);
	free(a);

	/* stop is only seen once the queue is empty: queued work is always done */
	while ((wk = gw_worker_take(w))) {
		wk->req.carver = carver;
		xdr_out_init(&wk->req.reply, carver, wk->req.reply_max);
		gw_rpc_process(w->srv, &wk->req);
		gw_worker_give_back(w, wk);
	}
	return NULL;
}

static unsigned int gw_workers_default(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	return n < 2 ? 2 : n > GW_THREADS_MAX ? GW_THREADS_MAX : (unsigned int)n;
}

int gw_workers_start(struct gw_workers **out, struct gw_srv *s, unsigned int nthreads,
		     gw_workers_notify_fn *notify, void *arg)
{
	struct gw_worker_arg *a;
	struct gw_workers *w;
	sigset_t all, old;
	unsigned int i;
	int ret;

	*out = NULL;
	if (!nthreads)
		nthreads = gw_workers_default();
	if (nthreads > GW_THREADS_MAX)
		nthreads = GW_THREADS_MAX;
	w = calloc(1, sizeof(*w));
	if (!w)
		goto out_nomem;
	w->threads = calloc(nthreads, sizeof(*w->threads));
	w->carvers = calloc(nthreads, sizeof(*w->carvers));
	if (!w->threads || !w->carvers)
		goto out_free;
	w->srv = s;
	w->notify = notify;
	w->arg = arg;
	pthread_mutex_init(&w->qlock, NULL);
	pthread_cond_init(&w->qcond, NULL);
	pthread_mutex_init(&w->dlock, NULL);
	for (i = 0; i < nthreads; i++)
		xdr_carver_init(&w->carvers[i], s->pool, NULL);

	/* workers inherit a mask blocking every signal */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	for (i = 0; i < nthreads; i++) {
		a = malloc(sizeof(*a));
		if (!a) {
			ret = ENOMEM;
			log_err("worker pool: malloc: %s", strerror(ret));
			break;
		}
		a->w = w;
		a->idx = i;
		ret = pthread_create(&w->threads[i], NULL, gw_worker_main, a);
		if (ret) {
			log_err("worker pool: pthread_create: %s", strerror(ret));
			free(a);
			break;
		}
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	w->nthreads = i;
	if (i < nthreads) {
		gw_workers_stop(w);
		return -ret;
	}
	log_info("%u worker threads", nthreads);
	*out = w;
	return 0;

out_free:
	free(w->threads);
	free(w->carvers);
	free(w);
out_nomem:
	log_err("worker pool: calloc: %s", strerror(ENOMEM));
	return -ENOMEM;
}

void gw_work_init(struct gw_work *w, const struct gw_conn_info *conn, const void *rec,
		  size_t len, bool stream, size_t reply_max)
{
	w->next = NULL;
	w->flow = NULL;
	w->req.conn = conn;
	w->req.rec = rec;
	w->req.len = len;
	w->req.stream = stream;
	w->req.reply_max = reply_max;
	w->req.carver = NULL;
	xdr_out_init(&w->req.reply, NULL, reply_max);
}

void gw_work_batch_add(struct gw_work_batch *b, struct gw_work *w)
{
	w->next = NULL;
	if (b->tail)
		b->tail->next = w;
	else
		b->head = w;
	b->tail = w;
	b->n++;
}

void gw_workers_push(struct gw_workers *w, struct gw_work_batch *b)
{
	if (!b->n)
		return;
	struct gw_work *wk, *next;
	struct gw_flow *f;

	pthread_mutex_lock(&w->qlock);
	for (wk = b->head; wk; wk = next) {
		next = wk->next;
		wk->next = NULL;
		f = wk->flow ? wk->flow : &w->shared;
		if (f->tail)
			f->tail->next = wk;
		else
			f->head = wk;
		f->tail = wk;
		if (!f->queued) {
			f->queued = true;
			gw_flow_ring_add(w, f);
		}
	}
	if (b->n == 1)
		pthread_cond_signal(&w->qcond);
	else
		pthread_cond_broadcast(&w->qcond);
	pthread_mutex_unlock(&w->qlock);
	b->head = b->tail = NULL;
	b->n = 0;
}

struct gw_work *gw_workers_done(struct gw_workers *w)
{
	struct gw_work *list;

	pthread_mutex_lock(&w->dlock);
	list = w->done_head;
	w->done_head = w->done_tail = NULL;
	pthread_mutex_unlock(&w->dlock);
	return list;
}

void gw_workers_stop(struct gw_workers *w)
{
	unsigned int i;

	if (!w)
		return;
	pthread_mutex_lock(&w->qlock);
	w->stop = true;
	pthread_cond_broadcast(&w->qcond);
	pthread_mutex_unlock(&w->qlock);
	for (i = 0; i < w->nthreads; i++)
		pthread_join(w->threads[i], NULL);
	for (i = 0; i < w->nthreads; i++)
		xdr_carver_fini(&w->carvers[i]);
	pthread_cond_destroy(&w->qcond);
	pthread_mutex_destroy(&w->qlock);
	pthread_mutex_destroy(&w->dlock);
	free(w->threads);
	free(w->carvers);
	free(w);
}
