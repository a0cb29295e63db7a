/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Private to the TCP transport: the event loop's state (gw_tcp.c) and
 * the connections it serves (gw_tcp_conn.c). How they work together is
 * described at the top of gw_tcp.c. Everything here is used by the loop
 * thread only, so nothing is locked.
 */
#ifndef LACUNA_GW_TCP_H
#define LACUNA_GW_TCP_H

#include <liburing.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <time.h>

#include "gw_limits.h"
#include "gw_tls.h"
#include "tls13_rec.h"
#include "htable.h"
#include "list.h"
#include "gw_worker.h"
#include "rpc.h"

#define GW_TCP_BUF_SIZE (64 * 1024) /* provided receive buffers */
#define GW_TCP_BUF_COUNT 128	    /* a power of two */
#define GW_TCP_BGID 7
#define GW_TCP_LARGE_CAP 16		    /* large chunks per connection */
#define GW_TCP_ADDR_BUCKETS 4096	    /* client addresses hash table */
#define GW_TCP_SEND_IOV 64		    /* >= XDR_OUT_SEGS_MAX */
#define GW_TCP_SPILL_MAX (64 * 1024 * 1024) /* bytes set aside while stalled */
#define GW_TCP_POOL_LOG_SEC 60
#define GW_TCP_RECORDS_SHARE 4 /* records take at most 3/4 of the large pool */
#define GW_TCP_SPARE_SHARE 8   /* spares past the addresses' shares: 1/8 of the large pool */

/* user_data: loop operations are small numbers, connection ones a tagged pointer */
enum {
	GW_TCP_UD_ACCEPT = 1,
	GW_TCP_UD_WAKE,
	GW_TCP_UD_TICK,
	GW_TCP_UD_CANCEL, /* cancelling the accept */
	GW_TCP_UD_PTR_MIN = 4096,
};
enum { GW_TCP_OP_RECV, GW_TCP_OP_SEND, GW_TCP_OP_CANCEL, GW_TCP_OP_MASK = 3 };

/* Why a connection does not receive. */
enum gw_stall {
	GW_STALL_NONE,
	GW_STALL_INFLIGHT, /* its own requests out or replies unsent */
	GW_STALL_OWNER,	   /* its own share of the pools */
	GW_STALL_POOL,	   /* the pool */
	GW_STALL_CLIENT,   /* its address's share of requests or record chunks */
};

/* What one client address holds (gw_tcp_limits.c). */
struct gw_addr {
	struct hnode hnode; /* in gw_tcp.addrs */
	uint8_t key[16];      /* IPv4 as v4-mapped IPv6 */
	unsigned int conns;   /* connections open */
	unsigned int closing; /* of them, closing (their fds go once freed) */
	unsigned int records; /* large records being received */
	unsigned int reqs;    /* requests out: processing, or reply not sent */
	/* its connections holding nothing that wait for its share */
	unsigned int waiting_empty;
};


struct gw_tcp_req;

/* Where a connection is on its way to RPC-with-TLS (gw_tcp_tls.c). */
enum gw_conn_tls {
	GW_CONN_PLAIN,	   /* RPC records in the clear */
	GW_CONN_STARTTLS,  /* the probe's reply going out; nothing received is a record */
	GW_CONN_HANDSHAKE, /* the handshake thread has it */
	GW_CONN_TLS,	   /* RPC records inside TLS */
};

struct gw_conn {
	struct gw_conn_info info; /* constant; workers read it */
	struct gw_tcp *tcp;	  /* the loop it belongs to */
	int fd;
	unsigned int ops;     /* io_uring operations naming this connection */
	unsigned int nreq;    /* requests not finished */
	uint32_t rec_max;     /* max_record when accepted */
	unsigned int req_max; /* max_requests_per_connection when accepted */
	struct gw_addr *addr;
	bool rec_counted;  /* the record in progress counts in addr->records */
	bool used;	   /* a whole record has arrived on it */
	bool spare;	   /* it holds one of struct gw_tcp's spare (gw_tcp_limits.c) */
	bool wait_empty;   /* it counts in addr->waiting_empty */
	time_t active;	   /* last bytes received or sent (CLOCK_MONOTONIC s) */
	time_t rec_since;  /* when the record (or its mark) in progress began */
	time_t send_since; /* when the replies queued last made progress */
	bool recv_armed, cancel_pending, nobuf;
	bool rd_eof, closing, kicked, send_busy;
	enum gw_stall stall;
	enum gw_stall was_stalled; /* stall before the current feed: a retry is not counted */

	/* receiving: the mark starting a record, then the record */
	uint8_t mark[4];
	uint8_t mark_got;
	struct rpc_rec rec; /* rec.buf NULL: between records */
	struct chunk_pool *rec_pool;
	struct chunk_owner own_large, own_small;
	uint8_t *spill; /* bytes received while stalled */
	size_t spill_off, spill_len, spill_cap;

	/* sending: replies in order, the head being sent */
	struct gw_tcp_req *sq_head, *sq_tail;
	size_t sent;	 /* bytes of the head sent */
	size_t sq_bytes; /* bytes of the queued replies */
	struct msghdr msg;
	struct iovec *iov; /* GW_TCP_SEND_IOV, allocated on first send */

	/* RPC-with-TLS (gw_tcp_tls.c) */
	enum gw_conn_tls tls;
	SSL *ssl;	     /* GW_CONN_TLS: the handshake's result (no record goes through it) */
	uint8_t probe[GW_TLS_PROBE_REPLY_LEN];
	uint8_t probe_sent;
	uint8_t *pre; /* received after the probe, for the handshake */
	size_t pre_len;
	/* ciphertext to send: a large chunk of the pool, or GW_TCP_TX_HEAP bytes of
	 * the heap when the pool has none (or for a KeyUpdate, close_notify) */
	uint8_t *tx;
	size_t tx_cap, tx_len, tx_off;
	bool tx_chunk;
	bool notified; /* close_notify written */
	struct gw_tls_ku ku;
	/* GW_CONN_TLS: the records, by common/tls13_rec.h */
	struct tls13_conn *trec;
	uint8_t *rx; /* a record received in part: TLS13_REC_MAX bytes */
	size_t rx_len;

	struct gw_flow flow; /* its requests waiting for a worker */
	/* all: by last activity, least recent first; pwait: waiting for pool chunks */
	struct list_head all, kick, pwait;
};

/* One record, from the loop to a worker and back. */
struct gw_tcp_req {
	struct gw_work w; /* first: the pool hands back this pointer */
	struct gw_conn *conn;
	void *rec; /* the record's chunk */
	struct chunk_pool *pool;
	struct gw_tcp_req *snext;
};

/* The loop's state: one per server, made by start() (gw_xprt_tcp). */
struct gw_tcp {
	struct gw_srv *srv;
	int lfd;
	/* the eventfd that wakes the loop, and the gw_tcp_wake() calls using it right now */
	atomic_int wake_fd, wakers;
	struct io_uring ring;
	bool ring_ok;
	struct io_uring_buf_ring *br;
	uint8_t *bufs;
	unsigned int br_added; /* buffers returned since the last advance */
	struct gw_workers *workers;
	struct list_head all, kick, pwait;
	unsigned int nconns;
	uint64_t next_id;
	bool accept_armed, accept_retry, stopping, forced;
	bool freed; /* requests finished (chunks back) since the last flush */
	struct timespec deadline;
	uint64_t wake_val;
	struct __kernel_timespec tick;
	struct gw_work_batch batch; /* records for the workers */
	struct chunk_pool *large, *small;
	size_t large_size, small_size;
	unsigned int large_recs, large_recs_max; /* large chunks holding records */
	unsigned int spare, spare_max; /* requests or records past their address's share */
	time_t pool_logged;
	struct gw_limits lim;	/* the configuration's limits, as of the last tick */
	unsigned int max_conns; /* lim.max_conns resolved against RLIMIT_NOFILE */
	unsigned int nclosing;	/* connections closing, not yet freed */
	time_t limit_logged;
	struct htable addrs; /* struct gw_addr by key */

	/* RPC-with-TLS (gw_tcp_tls.c) */
	SSL_CTX *tls_ctx;	    /* NULL: TLS not served */
	struct gw_snap *tls_snap;   /* the configuration tls_ctx was made from */
	struct gw_tls_hs *hs;	    /* the handshake thread, started with the first handshake */
	unsigned int hs_active;	    /* connections in handshake */
	unsigned int hs_max, hs_timeout;
};

/* gw_tcp.c */
struct io_uring_sqe *gw_tcp_sqe(struct gw_tcp *t);
/* From any thread: wake the loop (it takes replies and handshakes back). */
void gw_tcp_notify(void *x);

/* gw_tcp_limits.c */
/* Read the limits of the configuration in use (at start and every tick). */
void gw_tcp_limits_load(struct gw_tcp *t);
/* A new connection: charge it to its address; -EBUSY (refuse it) past the limits. */
int gw_tcp_limits_admit(struct gw_conn *c);
/* @c starts closing: it no longer counts against the limits. */
void gw_tcp_limits_closing(struct gw_conn *c);
/* A connection freed: its address forgets it. */
void gw_tcp_limits_release(struct gw_conn *c);
/* Record progress on @c (bytes in or out). */
void gw_tcp_touch(struct gw_conn *c);
/* Close connections idle, or stuck receiving or sending, too long. */
void gw_tcp_limits_tick(struct gw_tcp *t);
/*
 * May @c start a record (@large: in a large chunk) within its address's
 * share? false: it must wait (GW_STALL_CLIENT); true may have taken a
 * spare for it.
 */
bool gw_tcp_client_may_start(struct gw_conn *c, bool large);
/* @c no longer waits for its address's share (it is resumed or closed). */
void gw_tcp_client_unwait(struct gw_conn *c);
/* @c may hold nothing now: give back its spare if it has one. */
void gw_tcp_spare_put(struct gw_conn *c);
static inline time_t gw_tcp_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec;
}

/* gw_tcp_tls.c */
/* At start and on every tick: (re)make the TLS context when the configuration changed. */
void gw_tcp_tls_load(struct gw_tcp *t);
/* At stop: the handshake thread and the context go. */
void gw_tcp_tls_fini(struct gw_tcp *t);
/* A whole record on a plain connection: true when it was the AUTH_TLS probe, handled. */
bool gw_tcp_tls_probe(struct gw_conn *c);
/* Bytes received on a connection past GW_CONN_PLAIN. */
void gw_tcp_tls_input(struct gw_conn *c, const uint8_t *d, size_t len);
/* Send on a connection past GW_CONN_PLAIN (one sendmsg at a time); @n bytes of it went. */
void gw_tcp_tls_send(struct gw_conn *c);
void gw_tcp_tls_sent(struct gw_conn *c, size_t n);
/* Settling a GW_CONN_STARTTLS connection: hand it to the handshake thread once it can go. */
void gw_tcp_tls_settle(struct gw_conn *c);
/* At the end of the stream: send close_notify first; true while it is on its way. */
bool gw_tcp_tls_linger(struct gw_conn *c);
/* Handshakes back from the thread. */
void gw_tcp_tls_take(struct gw_tcp *t);
/* @c is freed: its SSL and buffers go. */
void gw_tcp_tls_free(struct gw_conn *c);
/* Its lines of the stats file and its families of /metrics. */
void gw_tcp_tls_stats(const struct gw_srv *s, FILE *f);
void gw_tcp_tls_metrics(const struct gw_srv *s, FILE *f);
/* Ciphertext not yet sent. */
static inline bool gw_tcp_tls_tx_pending(const struct gw_conn *c)
{
	return c->tx_off < c->tx_len;
}

/* gw_tcp_conn.c */
void gw_conn_sqe(struct gw_conn *c, struct io_uring_sqe *sqe, unsigned int op);
/* Plaintext of the stream: records, or set aside while stalled. */
void gw_conn_input_plain(struct gw_conn *c, const uint8_t *d, size_t len);
/* The head of the send queue leaves it: its reply encrypted or sent. */
void gw_conn_sq_pop(struct gw_conn *c);
void gw_conn_drop_record(struct gw_conn *c);
void gw_conn_cancel_recv(struct gw_conn *c);
/* Release the queued replies, unless a send still points into them. */
void gw_conn_flush_sendq(struct gw_conn *c);
void gw_conn_new(struct gw_tcp *t, int fd);
void gw_conn_kick(struct gw_conn *c);
void gw_conn_close(struct gw_conn *c, bool dropped, const char *why);
/* The connection's send iovecs, made on its first send; false: out of memory, closed. */
bool gw_conn_send_iov(struct gw_conn *c);
/* A completion of operation @op (GW_TCP_OP_*) on @c. */
void gw_conn_cqe(struct gw_conn *c, unsigned int op, const struct io_uring_cqe *cqe);
/* Settle every kicked connection, retry the pool waiters; see gw_tcp.c. */
void gw_conn_settle_kicked(struct gw_tcp *t);
/* Resume connections waiting for pool chunks: all, or until one stalls again. */
void gw_conn_resume_pool_waiters(struct gw_tcp *t, bool all);
/* Requests back from the workers: queue their replies. */
void gw_tcp_take_replies(struct gw_tcp *t);
void gw_tcp_buf_return(struct gw_tcp *t, unsigned int bid);

#endif
