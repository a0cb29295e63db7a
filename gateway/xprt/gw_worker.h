/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * lacunad's worker pool, shared by its transports.
 *
 * A transport hands whole RPC records to the pool as struct gw_work
 * (embedded in its own per-request object); a worker thread runs
 * gw_rpc_process() on each with its own xdr_carver over the server's pool, puts
 * the finished work on a done list and, when that list was empty, calls
 * the transport's notify callback so the transport's event loop picks
 * the replies up with gw_workers_done(). Work is processed in any order
 * and by any worker, round-robin between connections (struct gw_flow);
 * the transport keeps what it needs to put replies back in order
 * (nothing, for RPC).
 *
 * Threads: gw_workers_push() and gw_workers_done() may be called from
 * any thread (in practice the transport's loop); the notify callback runs
 * on a worker thread and must not block. Worker threads block every
 * signal, so signals go to the threads that expect them.
 */
#ifndef LACUNA_GW_WORKER_H
#define LACUNA_GW_WORKER_H

#include "gw.h"
#include "gw_xprt.h"

struct gw_work;

/*
 * The queue of one connection's requests waiting for a worker. Workers
 * take requests from the flows with work in turn, one at a time, so a
 * connection with many requests queued cannot starve the others. The
 * transport embeds one per connection and keeps it until that
 * connection's last request came back. Its fields are the pool's.
 */
struct gw_flow {
	struct gw_work *head, *tail;
	struct gw_flow *next;
	bool queued; /* on the pool's list of flows with work */
};

/* One request travelling through the pool. */
struct gw_work {
	struct gw_req req;
	struct gw_work *next; /* on the pool's lists: the pool's while queued */
	struct gw_flow *flow; /* its connection's flow, or NULL: the pool's shared one */
};

struct gw_workers;

/* Called (on a worker thread) when the done list becomes non-empty. */
typedef void gw_workers_notify_fn(void *arg);

/*
 * Start @nthreads workers (0: one per online CPU, at least 2; capped at
 * GW_THREADS_MAX). 0 or -errno (logged).
 */
int gw_workers_start(struct gw_workers **out, struct gw_srv *s, unsigned int nthreads,
		     gw_workers_notify_fn *notify, void *arg);
/*
 * Works a transport's loop gathers in one turn and hands to the pool in
 * one push (one lock, one wake-up).
 */
struct gw_work_batch {
	struct gw_work *head, *tail;
	unsigned int n;
};

/*
 * Make @w a call to process: the record @rec of @len bytes on @conn, a
 * reply of at most @reply_max bytes (with a record mark when @stream).
 */
void gw_work_init(struct gw_work *w, const struct gw_conn_info *conn, const void *rec,
		  size_t len, bool stream, size_t reply_max);
/* Add @w to @b. */
void gw_work_batch_add(struct gw_work_batch *b, struct gw_work *w);
/* Queue what @b holds on @w's pool, and empty @b. */
void gw_workers_push(struct gw_workers *w, struct gw_work_batch *b);
/* Take every finished work, oldest first (NULL: none). */
struct gw_work *gw_workers_done(struct gw_workers *w);
/*
 * Let the workers finish what is queued, join them and free the pool.
 * Finished work not yet taken is dropped from the pool's lists, not
 * freed: take it with gw_workers_done() first.
 */
void gw_workers_stop(struct gw_workers *w);

#endif
