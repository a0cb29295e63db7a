/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * lacunad's RPC-over-RDMA transport (RFC 8166, RFC 8267, RFC 8797):
 * private types of gw_rdma.c and gw_rdma_conn.c.
 *
 * Lock order: none. Everything here belongs to the RDMA loop thread;
 * workers only see struct gw_rreq's embedded gw_work, and hand it back
 * through the worker pool.
 */
#ifndef LACUNA_GW_RDMA_H
#define LACUNA_GW_RDMA_H

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>
#include <stdint.h>
#include <time.h>

#include "gw.h"
#include "gw_worker.h"
#include "gw_xprt.h"
#include "list.h"
#include "rpcrdma.h"

/* credits granted to every client: calls it may have outstanding */
#define GW_RDMA_CREDITS 64
/* our inline receive size, advertised with RFC 8797 private data */
#define GW_RDMA_INLINE_RECV 4096
/* largest inline reply we send, whatever the client could receive */
#define GW_RDMA_INLINE_SEND_MAX 16384
/* receives posted beyond the credits (non-call messages, slack) */
#define GW_RDMA_RECV_SLACK 8
/* request slots: replies still sending while new calls come in */
#define GW_RDMA_SLOTS (2 * GW_RDMA_CREDITS)
/* send queue depth, work requests per request, gather entries per WR */
#define GW_RDMA_SQ_DEPTH 1024
#define GW_RDMA_WR_MAX 256
#define GW_RDMA_SGE_MAX 16
#define GW_RDMA_BACKLOG 64
/* set in the ids of RDMA connections (unique beside TCP's); logs leave it out */
#define GW_RDMA_ID_BIT (1ULL << 62)
#define GW_RCONN_NO(c) ((unsigned long long)((c)->info.id & ~GW_RDMA_ID_BIT))
/*
 * seconds a device without connections keeps its registration: a soft-RoCE
 * device cannot be removed while a process holds resources on it, and
 * lacunad hears of the removal only through the connections on it
 */
#define GW_RDMA_DEV_IDLE 30
/* seconds a stopping server waits for connections to drain */
#define GW_RDMA_STOP_WAIT 5

/* One RDMA device the listener accepted a connection on. */
struct gw_rdev {
	struct ibv_context *verbs;
	struct ibv_pd *pd;
	struct ibv_comp_channel *cc;
	struct ibv_mr *pool_mr; /* the server's large pool, registered once */
	struct ibv_device_attr attr;
	unsigned int nconns; /* connections on it */
	time_t idle_since;   /* when nconns last became 0 */
	bool removed;	     /* DEVICE_REMOVAL: freed once its connections are */
	struct gw_rdev *next;
};

enum gw_rconn_state {
	RC_ACCEPTED,  /* rdma_accept sent, not yet established */
	RC_CONNECTED, /* serving */
	RC_CLOSING,   /* QP in error, waiting for the workers */
};

enum gw_rreq_state {
	RQ_FREE,
	RQ_WAIT_READ, /* call needs RDMA Reads, no send queue room yet */
	RQ_READING,   /* RDMA Reads posted */
	RQ_WORKER,    /* at a worker */
	RQ_WAIT_SEND, /* reply built by the worker, no send queue room yet */
	RQ_WAIT_ERR,  /* RDMA_ERROR to send, no send queue room yet */
	RQ_SENDING,   /* reply (and its RDMA Writes) posted */
};

struct gw_rconn;

/* One call, from its Receive to its reply's Send completion. */
struct gw_rreq {
	struct gw_work w; /* first: gw_workers_done() gives back &w */
	struct gw_rconn *c;
	unsigned int slot;
	enum gw_rreq_state st;
	uint32_t err; /* RQ_WAIT_ERR: ERR_VERS or ERR_CHUNK */
	void *rec;    /* the call, in a pool chunk */
	struct chunk_pool *rec_pool;
	unsigned int sq_used; /* work requests retired by this request's completion */
	uint64_t pulled;      /* bytes of its read chunks */
	size_t read_dst[RPCRDMA_READ_CHUNKS_MAX]; /* where each read chunk lands in rec */
	struct gw_rreq *next;			  /* free list or wait queue */
	struct rpcrdma_hdr hdr;
};

struct gw_rdma_loop;

struct gw_rconn {
	struct gw_conn_info info; /* constant; workers read it */
	struct gw_rdma_loop *loop; /* the loop it belongs to */
	enum gw_rconn_state st;
	struct rdma_cm_id *id;
	struct gw_rdev *dev;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	unsigned int cq_events; /* not yet acknowledged */

	uint32_t credits;
	uint8_t read_depth;	       /* RDMA Reads we may have outstanding (0: none) */
	uint32_t recv_size, send_size; /* our inline receive, our inline send */
	unsigned int nrecv;
	uint8_t *rbuf, *sbuf;
	struct ibv_mr *rmr, *smr;
	unsigned int recv_posted;

	struct gw_rreq *slots;
	struct gw_rreq *free;
	unsigned int inflight; /* calls received, reply not yet posted */
	unsigned int at_worker;
	unsigned int sq_depth, sq_free;
	struct gw_rreq *wait_head, *wait_tail;
	bool warned_chunk;

	struct list_head link; /* on gw_rdma_loop.conns */
};

/* Work requests of one chain being built (gw_rdma_conn.c), one at a time. */
struct gw_rdma_chain {
	struct ibv_send_wr wr[GW_RDMA_WR_MAX + 1];
	struct ibv_sge sge[(GW_RDMA_WR_MAX + 1) * GW_RDMA_SGE_MAX];
	unsigned int nwr, nsge;
	unsigned int max_sge;
	uint64_t bytes;
};

/* The loop's state (gw_rdma.c): one per server, made by start() (gw_xprt_rdma). */
struct gw_rdma_loop {
	struct gw_srv *srv;
	_Atomic int wake_fd; /* efd while the loop may be woken, else -1 */
	struct rdma_event_channel *ech;
	struct rdma_cm_id *listen;
	int epfd, efd;
	struct gw_workers *workers;
	struct gw_rdev *devs;
	struct list_head conns; /* every connection, newest first */
	unsigned int nconns;
	uint64_t next_id;
	uint32_t rec_max;			 /* bound on a call and on a reply (max_record) */
	time_t refused_logged;			 /* a connection refused was logged */
	struct gw_work_batch batch; /* calls for the workers */
	struct gw_rdma_chain chain;
};

/* gw_rdma_conn.c: one connection's data path */
/* Make the CQ, QP and buffers of a connection request, post receives; 0 or -errno (logged). */
int gw_rconn_setup(struct gw_rconn *c, const struct rpcrdma_cm_priv *peer);
/* Undo gw_rconn_setup() (everything flushed and back from the workers). */
void gw_rconn_teardown(struct gw_rconn *c);
/*
 * Start closing: disconnect, QP to error; the loop frees it once quiet.
 * @dropped: counted as dropped by the server (not the peer's disconnect
 * or the server stopping); @why is logged.
 */
void gw_rconn_close(struct gw_rconn *c, bool dropped, const char *why);
/* Closing and nothing outstanding any more. */
bool gw_rconn_quiet(const struct gw_rconn *c);
/* Take every completion of @c's CQ. */
void gw_rconn_poll(struct gw_rconn *c);
/* A call came back from a worker with its reply. */
void gw_rconn_worker_done(struct gw_rreq *r);

#endif
