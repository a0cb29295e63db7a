// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The transports lacunad is built with, one line each: a transport is
 * its own file defining a struct gw_xprt (gw_xprt.h) and its line here.
 * The first one listed runs on the main thread, the others on threads
 * of their own.
 */
#include "gw_xprt.h"

extern const struct gw_xprt gw_xprt_tcp;
extern const struct gw_xprt gw_xprt_rdma;

const struct gw_xprt *const gw_xprts[] = {
	&gw_xprt_tcp,
#ifdef HAVE_RDMA
	&gw_xprt_rdma,
#endif
	NULL,
};
