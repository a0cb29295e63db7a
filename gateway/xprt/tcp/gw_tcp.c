// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * lacunad's TCP transport: one event loop thread on io_uring that
 * accepts connections, reassembles RPC records, hands them to the worker
 * pool (gw_worker.h) and sends the replies back. This file is the loop
 * (the ring, accepting, waking, the tick, stopping); gw_tcp_conn.c is
 * what happens on each connection.
 *
 * Operation
 * ---------
 * Receiving. Every connection has one multishot recv armed on it that
 * takes its buffers from a ring of provided buffers shared by all
 * connections, so an idle connection pins no receive memory: only its
 * struct gw_conn. Each completion's bytes are fed to the connection's
 * record reassembler (struct rpc_rec) and the buffer goes straight back
 * to the ring. A record's buffer is a chunk taken when the record's
 * first mark has arrived: a chunk of the small pool when the mark says
 * "last fragment" and the length fits one, else a chunk of the large
 * pool. Both are charged to the connection's own chunk_owner, capped. A
 * whole record becomes a request (struct gw_tcp_req) queued to the
 * workers; its chunk is released once the reply has been sent.
 *
 * Back-pressure. A record cannot start while the connection has
 * max_requests_per_connection requests out or
 * max_reply_bytes_per_connection bytes of replies waiting to be sent (a
 * client that does not read: send_timeout then closes it), while its
 * owner is at its cap, while its address has max_records_per_client
 * large records being received (or max_requests_per_client requests
 * out; a connection holding nothing may still start one, see
 * gw_tcp_limits.c), or while the pool is at its cap (the pool wait
 * list; logged).
 * Records may hold only 3/4 of the large pool, so that
 * WRITE-heavy clients cannot starve the replies and READ data of
 * chunks. The connection then stalls: the recv is cancelled, bytes
 * already received (those of the completion being processed, and of any
 * completion that raced with the cancel) are copied aside into a spill
 * buffer so the provided buffers go back to the ring at once, and
 * nothing is received until a request of the connection finishes (or,
 * for the pool, until chunks come back anywhere; the once-a-second tick
 * retries too). The spill is consumed first, then the recv is armed
 * again. Nothing waits by polling.
 *
 * The record mark is the only peek at a record before its buffer is
 * taken: a fragment over max_record is refused at once, and a record
 * sent in several fragments goes to the large pool whatever its size.
 *
 * Sending. Workers put finished requests on the pool's done list and
 * wake the loop through an eventfd (the same eventfd gw_tcp_notify()
 * writes). A connection has one sendmsg in flight at a time, over the
 * iovecs of as many whole queued replies as fit GW_TCP_SEND_IOV, so
 * replies never interleave; a short send is resumed where it stopped.
 * An empty reply sends nothing.
 *
 * Lifetime. A connection is freed when it is closing, no io_uring
 * operation names it and none of its requests is left: workers may
 * still be processing requests of a peer that went away. Closing shuts
 * the socket down and cancels its operations; replies that come back
 * for a closing connection are released unsent. A stream error (bad
 * fragment, record over max_record, more than RPC_REC_FRAGS_MAX
 * fragments) drops the connection and counts in conns_dropped. At the
 * end of the stream, complete records are still answered, a truncated
 * one is dropped, and the connection is closed once its replies are
 * sent. nfs4_state_conn_closed() is called when the connection is
 * freed, so the state never hears of a connection after its close.
 *
 * Deferred work. Completion handlers only change state and put the
 * connection on the kick list; after each batch of completions the loop
 * returns provided buffers to the ring, settles every kicked connection
 * (resume a stalled receive, start a send, re-arm the recv, close or
 * free), retries the pool waiters, and queues the new records to the
 * workers in one batch.
 *
 * Stopping. When the server's stopping is set the loop stops accepting, closes
 * connections with no request out, stops receiving on the others (what
 * still arrives is dropped) and closes each once its replies are sent.
 * After stop_timeout it closes what is left, waits for the workers
 * to give back their requests, joins them and returns.
 *
 * The tick. A timeout fires once a second: nfs4_state_reap() expires
 * leases, connections idle or stuck too long are closed
 * (gw_tcp_limits.c), a refused accept (out of fds) is retried, pool
 * waiters are retried, and the drain deadline is checked.
 *
 * Limits. How many connections are kept, and how long one may be idle
 * or stuck, is gw_tcp_limits.c's. Records of one connection are queued
 * to the workers in that connection's flow (gw_worker.h), and workers
 * serve the connections with work in turn.
 *
 * Threads: everything runs on the loop thread except gw_tcp_notify() (the
 * workers' notify callback too), which only writes to the eventfd; stop()
 * waits for a gw_tcp_notify() in progress before closing it.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "gw_tcp.h"
#include "log.h"
#include "nfs4_state.h"

#define GW_TCP_BACKLOG 1024
#define GW_TCP_SQ_ENTRIES 1024
#define GW_TCP_CQ_ENTRIES 16384
#define GW_TCP_CQE_BATCH 256

struct io_uring_sqe *gw_tcp_sqe(struct gw_tcp *t)
{
	struct io_uring_sqe *sqe;
	int ret;

	while (!(sqe = io_uring_get_sqe(&t->ring))) {
		ret = io_uring_submit(&t->ring);
		if (ret < 0 && ret != -EINTR && ret != -EAGAIN && ret != -EBUSY)
			log_err("tcp: io_uring_submit: %s", strerror(-ret));
	}
	return sqe;
}

static void gw_tcp_arm_accept(struct gw_tcp *t)
{
	struct io_uring_sqe *sqe = gw_tcp_sqe(t);

	io_uring_prep_multishot_accept(sqe, t->lfd, NULL, NULL, SOCK_CLOEXEC);
	io_uring_sqe_set_data64(sqe, GW_TCP_UD_ACCEPT);
	t->accept_armed = true;
}

static void gw_tcp_arm_wake(struct gw_tcp *t)
{
	struct io_uring_sqe *sqe = gw_tcp_sqe(t);

	io_uring_prep_read(sqe, atomic_load(&t->wake_fd), &t->wake_val, sizeof(t->wake_val), 0);
	io_uring_sqe_set_data64(sqe, GW_TCP_UD_WAKE);
}

static void gw_tcp_arm_tick(struct gw_tcp *t)
{
	struct io_uring_sqe *sqe = gw_tcp_sqe(t);

	t->tick.tv_sec = 1;
	t->tick.tv_nsec = 0;
	io_uring_prep_timeout(sqe, &t->tick, 0, 0);
	io_uring_sqe_set_data64(sqe, GW_TCP_UD_TICK);
}

static void gw_tcp_on_accept(struct gw_tcp *t, const struct io_uring_cqe *cqe)
{
	if (!(cqe->flags & IORING_CQE_F_MORE))
		t->accept_armed = false;
	if (cqe->res >= 0) {
		gw_conn_new(t, cqe->res);
	} else if (cqe->res != -ECANCELED && cqe->res != -ECONNABORTED) {
		/* out of fds or memory: try again on the next tick, not at once */
		log_warn("tcp: accept: %s", strerror(-cqe->res));
		t->accept_retry = true;
	}
	if (!t->accept_armed && !t->accept_retry && !t->stopping)
		gw_tcp_arm_accept(t);
}

static void gw_tcp_begin_stop(struct gw_tcp *t)
{
	struct io_uring_sqe *sqe;
	struct list_head *l;
	unsigned int nreq = 0;

	t->stopping = true;
	clock_gettime(CLOCK_MONOTONIC, &t->deadline);
	gw_tcp_limits_load(t);
	t->deadline.tv_sec += t->lim.stop_timeout;
	if (t->accept_armed) {
		sqe = gw_tcp_sqe(t);
		io_uring_prep_cancel64(sqe, GW_TCP_UD_ACCEPT, 0);
		io_uring_sqe_set_data64(sqe, GW_TCP_UD_CANCEL);
	}
	for (l = t->all.next; l != &t->all; l = l->next) {
		nreq += container_of(l, struct gw_conn, all)->nreq;
		gw_conn_kick(container_of(l, struct gw_conn, all));
	}
	log_info("tcp: stopping: %u connections, %u requests in progress", t->nconns, nreq);
}

static void gw_tcp_check_deadline(struct gw_tcp *t)
{
	struct list_head *l, *next;
	struct timespec now;

	if (!t->stopping || t->forced)
		return;
	clock_gettime(CLOCK_MONOTONIC, &now);
	if (now.tv_sec < t->deadline.tv_sec ||
	    (now.tv_sec == t->deadline.tv_sec && now.tv_nsec < t->deadline.tv_nsec))
		return;
	t->forced = true;
	log_warn("tcp: %u connections still busy after stop_timeout (%u s): closing them",
		 t->nconns, t->lim.stop_timeout);
	for (l = t->all.next; l != &t->all; l = next) {
		next = l->next;
		gw_conn_close(container_of(l, struct gw_conn, all), false, "server stopping");
	}
}

static void gw_tcp_on_tick(struct gw_tcp *t)
{
	nfs4_state_reap(t->srv);
	gw_obj_sweep();
	gw_tcp_limits_tick(t);
	gw_tcp_tls_load(t);
	gw_tcp_tls_retry(t);
	if (t->accept_retry && !t->stopping) {
		t->accept_retry = false;
		if (!t->accept_armed)
			gw_tcp_arm_accept(t);
	}
	gw_conn_resume_pool_waiters(t, true);
	gw_tcp_check_deadline(t);
	gw_tcp_arm_tick(t);
}

static void gw_tcp_cqe(struct gw_tcp *t, const struct io_uring_cqe *cqe)
{
	uint64_t ud = io_uring_cqe_get_data64(cqe);

	if (ud >= GW_TCP_UD_PTR_MIN) {
		gw_conn_cqe((struct gw_conn *)(uintptr_t)(ud & ~(uint64_t)GW_TCP_OP_MASK),
			    (unsigned int)(ud & GW_TCP_OP_MASK), cqe);
		return;
	}
	switch (ud) {
	case GW_TCP_UD_ACCEPT:
		gw_tcp_on_accept(t, cqe);
		break;
	case GW_TCP_UD_WAKE:
		gw_tcp_take_replies(t);
		gw_tcp_tls_take(t);
		gw_tcp_arm_wake(t);
		break;
	case GW_TCP_UD_TICK:
		gw_tcp_on_tick(t);
		break;
	default: /* GW_TCP_UD_CANCEL */
		break;
	}
}

/* After a batch of completions: the deferred work (see the top of the file). */
static void gw_tcp_flush(struct gw_tcp *t)
{
	gw_tcp_take_replies(t);
	gw_tcp_tls_take(t);
	if (t->br_added) {
		io_uring_buf_ring_advance(t->br, (int)t->br_added);
		t->br_added = 0;
	}
	gw_conn_settle_kicked(t);
	gw_workers_push(t->workers, &t->batch);
}

/* gw_workers_notify_fn, and wake() */
void gw_tcp_notify(void *x)
{
	struct gw_tcp *t = x;
	uint64_t one = 1;
	int fd;

	atomic_fetch_add(&t->wakers, 1);
	fd = atomic_load(&t->wake_fd);
	if (fd >= 0 && write(fd, &one, sizeof(one)) < 0) {
		/* the counter is already non-zero: the loop wakes anyway */
	}
	atomic_fetch_sub(&t->wakers, 1);
}

static int gw_tcp_start(struct gw_srv *s, void **out)
{
	struct sockaddr_storage addr;
	struct gw_tcp *t;
	struct gw_snap *sn;
	socklen_t len;
	int fd, efd, one = 1, ret;
	char a[64];

	sn = gw_snap_get(s);
	addr = sn->cfg->listen;
	len = sn->cfg->listen_len;
	gw_snap_put(sn);
	net_addr_str(&addr, a, sizeof(a));

	fd = socket(addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		ret = -errno;
		log_err("tcp: socket: %s", strerror(-ret));
		return ret;
	}
	if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one))) {
		ret = -errno;
		log_err("tcp: setsockopt(SO_REUSEADDR): %s", strerror(-ret));
		goto out_close;
	}
	if (bind(fd, (struct sockaddr *)&addr, len)) {
		ret = -errno;
		log_err("tcp: bind %s: %s", a, strerror(-ret));
		goto out_close;
	}
	if (listen(fd, GW_TCP_BACKLOG)) {
		ret = -errno;
		log_err("tcp: listen %s: %s", a, strerror(-ret));
		goto out_close;
	}
	/* blocking: io_uring would fail a read of a non-blocking one at once */
	efd = eventfd(0, EFD_CLOEXEC);
	if (efd < 0) {
		ret = -errno;
		log_err("tcp: eventfd: %s", strerror(-ret));
		goto out_close;
	}
	t = calloc(1, sizeof(*t));
	if (!t || htable_init(&t->addrs, GW_TCP_ADDR_BUCKETS)) {
		free(t);
		ret = -ENOMEM;
		log_err("tcp: out of memory");
		close(efd);
		goto out_close;
	}
	t->srv = s;
	t->lfd = fd;
	atomic_init(&t->wake_fd, efd);
	atomic_init(&t->wakers, 0);
	log_info("tcp: listening on %s", a);
	*out = t;
	return 0;

out_close:
	close(fd);
	return ret;
}

static int gw_tcp_setup_ring(struct gw_tcp *t)
{
	struct io_uring_params p;
	struct io_uring_buf_reg reg;
	size_t br_len = GW_TCP_BUF_COUNT * sizeof(struct io_uring_buf);
	unsigned int i;
	int ret;

	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_CQSIZE | IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN;
	p.cq_entries = GW_TCP_CQ_ENTRIES;
	ret = io_uring_queue_init_params(GW_TCP_SQ_ENTRIES, &t->ring, &p);
	if (ret == -EINVAL) {
		memset(&p, 0, sizeof(p));
		p.flags = IORING_SETUP_CQSIZE;
		p.cq_entries = GW_TCP_CQ_ENTRIES;
		ret = io_uring_queue_init_params(GW_TCP_SQ_ENTRIES, &t->ring, &p);
	}
	if (ret) {
		log_err("tcp: io_uring_queue_init_params: %s", strerror(-ret));
		return ret;
	}
	t->ring_ok = true;
	t->br = mmap(NULL, br_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	t->bufs = mmap(NULL, (size_t)GW_TCP_BUF_COUNT * GW_TCP_BUF_SIZE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (t->br == MAP_FAILED || t->bufs == MAP_FAILED) {
		ret = -errno;
		log_err("tcp: mmap: %s", strerror(-ret));
		return ret;
	}
	memset(&reg, 0, sizeof(reg));
	reg.ring_addr = (uintptr_t)t->br;
	reg.ring_entries = GW_TCP_BUF_COUNT;
	reg.bgid = GW_TCP_BGID;
	ret = io_uring_register_buf_ring(&t->ring, &reg, 0);
	if (ret) {
		log_err("tcp: io_uring_register_buf_ring: %s (Linux 5.19 or later is needed)",
			strerror(-ret));
		return ret;
	}
	io_uring_buf_ring_init(t->br);
	for (i = 0; i < GW_TCP_BUF_COUNT; i++)
		gw_tcp_buf_return(t, i);
	io_uring_buf_ring_advance(t->br, (int)t->br_added);
	t->br_added = 0;
	return 0;
}

static void gw_tcp_teardown(struct gw_tcp *t)
{
	if (t->ring_ok)
		io_uring_queue_exit(&t->ring);
	t->ring_ok = false;
	if (t->br && t->br != MAP_FAILED)
		munmap(t->br, GW_TCP_BUF_COUNT * sizeof(struct io_uring_buf));
	if (t->bufs && t->bufs != MAP_FAILED)
		munmap(t->bufs, (size_t)GW_TCP_BUF_COUNT * GW_TCP_BUF_SIZE);
	t->br = NULL;
	t->bufs = NULL;
	if (t->lfd >= 0)
		close(t->lfd);
	t->lfd = -1;
}

static void gw_tcp_stop(void *x)
{
	struct gw_tcp *t = x;
	int efd;

	if (t->lfd >= 0)
		close(t->lfd);
	efd = atomic_exchange(&t->wake_fd, -1);
	while (atomic_load(&t->wakers))
		sched_yield(); /* a gw_tcp_notify() is writing to it: one write(2) */
	if (efd >= 0)
		close(efd);
	htable_fini(&t->addrs); /* empty: an address goes with its last connection */
	free(t);
}

static int gw_tcp_run(void *x)
{
	struct gw_tcp *t = x;
	struct gw_srv *s = t->srv;
	struct io_uring_cqe *cqes[GW_TCP_CQE_BATCH];
	struct chunk_pool_stats st;
	unsigned int i, n, threads;
	struct gw_snap *sn;
	int ret;

	if (t->lfd < 0)
		return -EINVAL;
	list_init(&t->all);
	list_init(&t->kick);
	list_init(&t->pwait);
	t->large = s->pool;
	t->small = s->small ? s->small : s->pool;
	t->large_size = chunk_pool_chunk_size(t->large);
	t->small_size = chunk_pool_chunk_size(t->small);
	chunk_pool_get_stats(t->large, &st);
	t->large_recs_max = st.cap - st.cap / GW_TCP_RECORDS_SHARE;
	if (!t->large_recs_max)
		t->large_recs_max = 1;
	t->spare_max = st.cap / GW_TCP_SPARE_SHARE;
	if (!t->spare_max)
		t->spare_max = 1;
	gw_tcp_limits_load(t);
	gw_tcp_tls_load(t);
	log_info("tcp: at most %u connections, %u per client address", t->max_conns,
		 t->lim.max_conns_client);
	ret = gw_tcp_setup_ring(t);
	if (ret)
		goto out_teardown;
	sn = gw_snap_get(s);
	threads = sn->cfg->threads;
	gw_snap_put(sn);
	ret = gw_workers_start(&t->workers, s, threads, gw_tcp_notify, t);
	if (ret)
		goto out_teardown;

	gw_tcp_arm_accept(t);
	gw_tcp_arm_wake(t);
	gw_tcp_arm_tick(t);
	for (;;) {
		if (atomic_load(&s->stopping) && !t->stopping)
			gw_tcp_begin_stop(t);
		gw_tcp_check_deadline(t);
		gw_tcp_flush(t);
		if (t->stopping && !t->nconns && !t->accept_armed)
			break;
		ret = io_uring_submit_and_wait(&t->ring, 1);
		if (ret < 0 && ret != -EINTR && ret != -EAGAIN && ret != -EBUSY && ret != -ETIME) {
			log_err("tcp: io_uring_submit_and_wait: %s", strerror(-ret));
			usleep(10000);
		}
		while ((n = io_uring_peek_batch_cqe(&t->ring, cqes, GW_TCP_CQE_BATCH))) {
			for (i = 0; i < n; i++)
				gw_tcp_cqe(t, cqes[i]);
			io_uring_cq_advance(&t->ring, n);
		}
	}
	ret = 0;
	if (t->large_recs)
		log_err("tcp: %u record chunks not accounted for", t->large_recs);
	log_info("tcp: stopped");
	gw_workers_stop(t->workers);
	t->workers = NULL;
out_teardown:
	gw_tcp_tls_fini(t);
	gw_tcp_teardown(t);
	return ret;
}

static bool gw_tcp_listening(const void *x)
{
	const struct gw_tcp *t = x;

	return t->lfd >= 0;
}

/* The limits TCP enforces: their counters in the stats file and lacunad_limit_hits_total */
static const struct {
	const char *name;
	size_t off; /* in struct gw_stats */
} gw_tcp_limit_stats[] = {
	{ "conns_refused", offsetof(struct gw_stats, conns_refused) },
	{ "conns_evicted", offsetof(struct gw_stats, conns_evicted) },
	{ "conns_idle_closed", offsetof(struct gw_stats, conns_idle_closed) },
	{ "conns_record_timeout", offsetof(struct gw_stats, conns_record_timeout) },
	{ "conns_send_timeout", offsetof(struct gw_stats, conns_send_timeout) },
	{ "conn_stalls", offsetof(struct gw_stats, conn_stalls) },
	{ "client_stalls", offsetof(struct gw_stats, client_stalls) },
};

/* Each limit's counter, as a line "@pre<name>@post <count>" */
static void gw_tcp_write_limits(const struct gw_srv *s, FILE *f, const char *pre, const char *post)
{
	size_t i;

	for (i = 0; i < sizeof(gw_tcp_limit_stats) / sizeof(gw_tcp_limit_stats[0]); i++) {
		const atomic_ullong *c = (const atomic_ullong *)((const char *)&s->stats +
								 gw_tcp_limit_stats[i].off);

		fprintf(f, "%s%s%s %llu\n", pre, gw_tcp_limit_stats[i].name, post,
			atomic_load_explicit(c, memory_order_relaxed));
	}
}

static void gw_tcp_stats(const struct gw_srv *s, FILE *f)
{
	gw_tcp_write_limits(s, f, "", "");
	gw_tcp_tls_stats(s, f);
}

static void gw_tcp_limit_hits(const struct gw_srv *s, FILE *f)
{
	gw_tcp_write_limits(s, f, "lacunad_limit_hits_total{limit=\"", "\"}");
}

static void gw_tcp_bytes(const struct gw_srv *s, unsigned long long *in, unsigned long long *out)
{
	*in = s->stats.tcp_bytes_in;
	*out = s->stats.tcp_bytes_out;
}

const struct gw_xprt gw_xprt_tcp = {
	.name = "tcp",
	.start = gw_tcp_start,
	.listening = gw_tcp_listening,
	.run = gw_tcp_run,
	.wake = gw_tcp_notify,
	.stop = gw_tcp_stop,
	.stats = gw_tcp_stats,
	.metrics = gw_tcp_tls_metrics,
	.limit_hits = gw_tcp_limit_hits,
	.bytes = gw_tcp_bytes,
};
