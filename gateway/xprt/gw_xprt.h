/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The boundary between lacunad's transports (TCP over io_uring here,
 * RPC-over-RDMA later) and RPC processing.
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

#include "gw_rpc.h"
#include "netaddr.h"

/* A transport, as the server's main loop sees it. */
struct gw_xprt_ops {
	const char *name;
	/* bind and listen as the configuration says; 0 or -errno (logged) */
	int (*start)(struct gw_srv *s);
	/* run until gw.stopping, then stop accepting, drain and close; 0 or -errno */
	int (*run)(struct gw_srv *s);
};

extern const struct gw_xprt_ops gw_tcp_ops;
/* Wake the TCP loop (from any thread) to notice gw.stopping. */
void gw_tcp_wake(void);

#ifdef HAVE_RDMA
/*
 * RPC-over-RDMA (gw_rdma.c). start() returns 0 without listening when
 * the configuration does not ask for RDMA or no device is there (said
 * once in the log); run() then returns at once.
 */
extern const struct gw_xprt_ops gw_rdma_ops;
/* Listening: run() has work to do. */
bool gw_rdma_enabled(void);
/* Wake the RDMA loop (from any thread) to notice gw.stopping. */
void gw_rdma_wake(void);
#endif

#endif
