/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The boundary between lacunad's transports (TCP over io_uring,
 * RPC-over-RDMA) and RPC processing.
 *
 * A transport owns connections, receives whole RPC records, and hands
 * each one to a worker thread as a struct gw_req. The worker calls
 * gw_rpc_process(), which fills req->reply (a list of segments over pool
 * chunks, see xdr.h) and returns; the transport then sends it and calls
 * xdr_out_release(). Records and replies of one connection may be
 * processed by several workers at once; replies may go out in any order
 * (RPC matches them by xid), but one reply's bytes are never interleaved
 * with another's.
 */
#ifndef LACUNA_GW_XPRT_H
#define LACUNA_GW_XPRT_H

#include <stdbool.h>
#include <stdio.h>

#include "gw_rpc.h"
#include "netaddr.h"

/*
 * A transport, as the server's main loop sees it. Each transport defines
 * one (gw_xprt_tcp in tcp/gw_tcp.c, gw_xprt_rdma in rdma/gw_rdma.c) and
 * is listed once in gw_xprts[] (gw_xprts.c); lacunad.c, the worker pool
 * and /metrics know transports only through that table. An instance's
 * state lives in an object start() makes and stop() frees, so servers
 * (struct gw_srv) never share one.
 */
struct gw_xprt {
	const char *name;
	/* start() after daemon(): what it makes does not survive a fork (verbs) */
	bool after_fork;
	/*
	 * Bind and listen as @s's configuration says: 0 and the instance in
	 * *out; 0 and NULL when the configuration does not ask for this
	 * transport or it cannot serve here (said once in the log); or
	 * -errno (logged).
	 */
	int (*start)(struct gw_srv *s, void **out);
	/* Listening: run() has work to do. */
	bool (*listening)(const void *x);
	/* Serve until the server stops, then stop accepting, drain and close: 0 or -errno */
	int (*run)(void *x);
	/* From any thread, until stop(): make run() notice the server's stopping. */
	void (*wake)(void *x);
	/* Free the instance (run() has returned, or was never called). */
	void (*stop)(void *x);
	/* Its lines of the stats file ("name value"), from @s's counters. */
	void (*stats)(const struct gw_srv *s, FILE *f);
	/* Its metric families of /metrics (NULL: none). */
	void (*metrics)(const struct gw_srv *s, FILE *f);
	/* Its samples of lacunad_limit_hits_total, the limits it enforces (NULL: none). */
	void (*limit_hits)(const struct gw_srv *s, FILE *f);
	/* Bytes it received and sent (lacunad_transport_bytes_total). */
	void (*bytes)(const struct gw_srv *s, unsigned long long *in, unsigned long long *out);
};

/* Every transport built in, in the order they start, NULL-terminated (gw_xprts.c). */
extern const struct gw_xprt *const gw_xprts[];

#endif
