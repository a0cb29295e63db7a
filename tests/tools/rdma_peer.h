/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rdma_peer: an RPC-over-RDMA client connection for the test tools
 * (rdma_hostile): connect, send, wait for the server's next message or
 * the end of the connection, make an RPC NULL call. Functions that can
 * fail return 0 or -1 (some a negative errno, as said) with a message
 * in their @m (RP_MSG_MAX bytes).
 */
#ifndef LACUNA_RDMA_PEER_H
#define LACUNA_RDMA_PEER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "rpcrdma.h"

#define RP_NSEND 160	/* send buffers, one per message in flight */
#define RP_SEND_SZ 8192 /* each: big enough for big_send */
#define RP_NRECV 160	/* receive buffers posted */
#define RP_RECV_SZ 4096
#define RP_TARGET_SZ 65536 /* what the server may read or write */
#define RP_WAIT_MS 10000   /* for a reaction */
#define RP_MSG_MAX 512

#define RP_NFS_PROGRAM 100003
#define RP_NFS_V4 4

struct rp_peer {
	struct rdma_event_channel *ec;
	struct rdma_cm_id *id;
	struct ibv_pd *pd;
	struct ibv_comp_channel *ch;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	uint8_t *mem; /* sends, receives, target */
	size_t mem_len;
	bool connected;
	struct rpcrdma_cm_priv srv; /* the server's private data */
	unsigned int next_send;
	uint32_t credits;     /* from the last reply */
	char why[RP_MSG_MAX]; /* what ended the connection */
};

enum rp_rx_kind { RP_MSG, RP_GONE, RP_TIMEOUT };

struct rp_rx {
	uint8_t data[RP_RECV_SZ];
	uint32_t len;
};

extern const char *rp_host, *rp_port; /* the server */
extern uint32_t rp_next_xid;
extern struct rpcrdma_hdr rp_hdr; /* of the last message decoded */

/* Write a message into @m; returns -1. */
int rp_msgf(char *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Append to the message @m. */
void rp_appendf(char *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The part of @p's buffer the server may read or write (RP_TARGET_SZ bytes). */
uint8_t *rp_target(struct rp_peer *p);

/*
 * Connect with @priv (@plen bytes) as private data. 0, -ECONNREFUSED
 * when the server rejected us, -ENODEV when there is no RDMA here, -1
 * otherwise. rp_close() undoes it, also after a failure.
 */
int rp_open(struct rp_peer *p, const void *priv, size_t plen, char *m);
/* A connection with well-formed private data (our inline sizes: @recv_max). */
int rp_open_good(struct rp_peer *p, uint32_t recv_max, char *m);
void rp_close(struct rp_peer *p);
/* Post a Send of @len bytes; 0 or a negative errno. */
int rp_send(struct rp_peer *p, const void *buf, size_t len);
/* The next message from the server, the end of the connection (why in p->why), or silence. */
enum rp_rx_kind rp_wait(struct rp_peer *p, int ms, struct rp_rx *rx);

/* An RPC NULL call to NFSv4 with AUTH_NONE: 40 bytes at @b. */
size_t rp_enc_null(uint8_t *b, uint32_t xid);
/* Is @rx an RDMA_MSG with an accepted, successful RPC reply to @xid? */
int rp_check_reply(const struct rp_rx *rx, uint32_t xid, char *m);
/* A NULL call on @p and its answer. */
int rp_null_call(struct rp_peer *p, char *m);

#endif
