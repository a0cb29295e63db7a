/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * RPC processing of one call record, as a transport hands it over: a
 * transport fills a struct gw_req and calls gw_rpc_process() on a worker
 * thread; the reply comes back in req->reply, ready to send.
 */
#ifndef LACUNA_GW_RPC_H
#define LACUNA_GW_RPC_H

#include <stdbool.h>
#include <stddef.h>

#include "nfs4_compound.h"
#include "xdr.h"

struct gw_req {
	const struct gw_conn_info *conn;
	const void *rec; /* the whole RPC record (no record marks) */
	size_t len;
	bool stream;		   /* add a record mark before the reply (TCP) */
	size_t reply_max;	   /* bound on the reply */
	struct xdr_carver *carver; /* reply space (the worker's) */
	struct xdr_out reply;	   /* filled by gw_rpc_process(); empty: send nothing */
};

/* Process one call record; always leaves req->reply ready to send (or empty). */
void gw_rpc_process(struct gw_srv *s, struct gw_req *req);

#endif
