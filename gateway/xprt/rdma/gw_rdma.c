// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * lacunad's RPC-over-RDMA transport: the librdmacm listener, the devices
 * connections arrive on, connection state, and the loop thread.
 *
 * Operation
 * ---------
 * gw_rdma_start() looks for RDMA devices (none: it says so once and
 * lacunad serves TCP only) and listens with librdmacm on the address
 * TCP listens on, port rdma_port (20049); an address no device serves
 * is logged and TCP goes on alone. gw_rdma_run() is the loop
 * thread: one epoll over the CM event channel, the completion channel
 * of every device in use and an eventfd that the workers (replies ready)
 * and the signal thread (stop) write.
 *
 * A device is set up the first time a connection arrives on it: a
 * protection domain, a completion channel and one memory region over
 * the server's whole large pool (LOCAL_WRITE only: the server initiates
 * every RDMA Read and Write, clients never touch its memory). It is
 * released when removed (DEVICE_REMOVAL on a connection) and after
 * GW_RDMA_DEV_IDLE seconds without connections: a removal waits for
 * every process holding resources on the device, and a wildcard
 * listener hears of no removal.
 *
 * Connection states, driven by CM events:
 *
 *   CONNECT_REQUEST -> setup (CQ, QP, buffers, receives) -> rdma_accept
 *                      with our RFC 8797 private data -> ACCEPTED
 *   ESTABLISHED     -> CONNECTED (serving)
 *   DISCONNECTED, CONNECT_ERROR, UNREACHABLE, REJECTED, DEVICE_REMOVAL,
 *   a failed completion, a protocol error (gw_rdma_conn.c)
 *                   -> CLOSING: disconnected, QP in error, workers back
 *   quiet           -> destroyed (QP, CQ, buffers, cm_id), state of the
 *                      connection dropped (nfs4_state_conn_closed)
 *
 * A connection request that cannot be set up is rejected; one peer's
 * failure never touches another's connection. A removed device ends RDMA
 * service (logged); TCP goes on.
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "gw_rdma.h"
#include "log.h"
#include "nfs4_state.h"

#define GW_RDMA_EV_CM 1
#define GW_RDMA_EV_WAKE 2

/* gw_workers_notify_fn, and wake() */
static void gw_rdma_wake(void *x)
{
	struct gw_rdma_loop *t = x;
	uint64_t one = 1;
	int fd = atomic_load(&t->wake_fd);

	if (fd >= 0 && write(fd, &one, sizeof(one)) < 0) {
		/* the counter is already non-zero: the loop wakes anyway */
	}
}

static int gw_rdma_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0)
		return -errno;
	return 0;
}

/* ------------------------------------------------------------ devices */

static void gw_rdev_free(struct gw_rdma_loop *t, struct gw_rdev *d)
{
	if (d->pool_mr)
		ibv_dereg_mr(d->pool_mr);
	if (d->cc) {
		if (t->epfd >= 0)
			epoll_ctl(t->epfd, EPOLL_CTL_DEL, d->cc->fd, NULL);
		ibv_destroy_comp_channel(d->cc);
	}
	if (d->pd)
		ibv_dealloc_pd(d->pd);
	free(d);
}

static struct gw_rdev *gw_rdev_get(struct gw_rdma_loop *t, struct ibv_context *verbs)
{
	struct epoll_event ev = { .events = EPOLLIN };
	const char *name = ibv_get_device_name(verbs->device);
	struct chunk_pool *pool = t->srv->pool;
	struct gw_rdev *d;

	for (d = t->devs; d; d = d->next)
		if (d->verbs == verbs)
			return d;
	d = calloc(1, sizeof(*d));
	if (!d) {
		log_err("rdma: calloc: %s", strerror(ENOMEM));
		return NULL;
	}
	d->verbs = verbs;
	if (ibv_query_device(verbs, &d->attr)) {
		log_err("rdma: ibv_query_device(%s): %s", name, strerror(errno));
		goto out_free;
	}
	d->pd = ibv_alloc_pd(verbs);
	if (!d->pd) {
		log_err("rdma: ibv_alloc_pd(%s): %s", name, strerror(errno));
		goto out_free;
	}
	d->cc = ibv_create_comp_channel(verbs);
	if (!d->cc || gw_rdma_nonblock(d->cc->fd)) {
		log_err("rdma: ibv_create_comp_channel(%s): %s", name, strerror(errno));
		goto out_free;
	}
	d->pool_mr = ibv_reg_mr(d->pd, chunk_pool_base(pool), chunk_pool_length(pool),
				IBV_ACCESS_LOCAL_WRITE);
	if (!d->pool_mr) {
		log_err("rdma: ibv_reg_mr(%s, pool of %zu bytes): %s", name,
			chunk_pool_length(pool), strerror(errno));
		goto out_free;
	}
	ev.data.ptr = d;
	if (epoll_ctl(t->epfd, EPOLL_CTL_ADD, d->cc->fd, &ev)) {
		log_err("rdma: epoll_ctl: %s", strerror(errno));
		goto out_free;
	}
	log_info("rdma: device %s: pool of %zu MiB registered once", name,
		 chunk_pool_length(pool) >> 20);
	d->next = t->devs;
	t->devs = d;
	return d;

out_free:
	gw_rdev_free(t, d);
	return NULL;
}

static void gw_rdev_events(struct gw_rdev *d)
{
	struct ibv_cq *cq;
	void *ctx;

	while (!ibv_get_cq_event(d->cc, &cq, &ctx)) {
		struct gw_rconn *c = ctx;

		c->cq_events++;
		if (c->cq_events >= 64) {
			ibv_ack_cq_events(cq, c->cq_events);
			c->cq_events = 0;
		}
		ibv_req_notify_cq(cq, 0);
		gw_rconn_poll(c);
	}
}

/* ------------------------------------------------------------ connections */

static void gw_rconn_unlink(struct gw_rconn *c)
{
	struct gw_rdma_loop *t = c->loop;
	list_del(&c->link);
	t->nconns--;
}

static void gw_rconn_free(struct gw_rconn *c)
{
	struct gw_rdma_loop *t = c->loop;
	gw_rconn_unlink(c);
	gw_rconn_teardown(c);
	if (c->dev && !--c->dev->nconns)
		c->dev->idle_since = time(NULL);
	if (c->id)
		rdma_destroy_id(c->id);
	if (c->info.id)
		nfs4_state_conn_closed(t->srv, c->info.id);
	gw_stat_add(&t->srv->stats.conns_open, -1);
	LTRACE(lacunad, conn__close, (uint64_t)c->info.id, 1, 0, "rdma connection freed");
	log_debug("rdma: connection %llu freed", GW_RCONN_NO(c));
	free(c);
}

/*
 * May one more connection come from @sa? max_rdma_connections in all and
 * max_rdma_connections_per_client per address: each connection pins its
 * receive and send buffers. Sets *credits, the calls it may have out:
 * GW_RDMA_CREDITS, or max_requests_per_connection when smaller.
 */
static bool gw_rdma_admit(struct gw_rdma_loop *t, const struct sockaddr_storage *sa, socklen_t len,
			  uint32_t *credits)
{
	struct gw_limits lim;
	struct gw_snap *sn;
	const char *why = NULL;
	uint8_t key[16], k2[16];
	unsigned int same = 0;
	struct gw_rconn *c;
	time_t now;
	char a[80];

	sn = gw_snap_get(t->srv);
	lim = sn->cfg->limits;
	gw_snap_put(sn);
	*credits = lim.conn_requests < GW_RDMA_CREDITS ? lim.conn_requests : GW_RDMA_CREDITS;
	net_addr_key(sa, len, key);
	list_for_each_entry(c, &t->conns, link) {
		net_addr_key(&c->info.peer, c->info.peer_len, k2);
		same += !memcmp(key, k2, sizeof(key));
	}
	if (t->nconns >= lim.max_rdma_conns)
		why = "max_rdma_connections";
	else if (same >= lim.max_rdma_conns_client)
		why = "max_rdma_connections_per_client";
	if (!why)
		return true;
	gw_stat_add(&t->srv->stats.rdma_conns_refused, 1);
	now = time(NULL);
	if (now - t->refused_logged >= 60) {
		t->refused_logged = now;
		log_warn("rdma: connection from %s refused: %s reached (logged once a minute)",
			 net_addr_str(sa, a, sizeof(a)), why);
	}
	return false;
}

static void gw_rdma_on_request(struct gw_rdma_loop *t, struct rdma_cm_id *id, const void *pdata,
			       uint8_t plen, uint8_t initiator_depth, uint8_t responder_resources)
{
	struct rdma_conn_param cp;
	struct rpcrdma_cm_priv peer, ours;
	uint8_t priv[RPCRDMA_CM_PRIV_LEN];
	struct sockaddr *sa = rdma_get_peer_addr(id);
	struct sockaddr_storage ss = { 0 };
	socklen_t sslen = 0;
	uint32_t credits;
	struct gw_rconn *c;
	char a[80];
	bool known;

	known = rpcrdma_cm_priv_dec(pdata, plen, &peer);
	if (atomic_load(&t->srv->stopping))
		goto out_reject;
	if (sa && (sa->sa_family == AF_INET || sa->sa_family == AF_INET6)) {
		sslen = sa->sa_family == AF_INET ? sizeof(struct sockaddr_in)
						 : sizeof(struct sockaddr_in6);
		memcpy(&ss, sa, sslen);
	}
	if (!gw_rdma_admit(t, &ss, sslen, &credits))
		goto out_reject;
	c = calloc(1, sizeof(*c));
	if (!c) {
		log_err("rdma: calloc: %s", strerror(ENOMEM));
		goto out_reject;
	}
	c->loop = t;
	c->id = id;
	id->context = c;
	c->info.id = GW_RDMA_ID_BIT | ++t->next_id;
	c->info.rdma = true;
	c->info.xprtsec = GW_XPRTSEC_NONE; /* RFC 9289 covers TCP only */
	c->info.resvport =
		true; /* as nfsd's svc_rdma_recvfrom(): see port_ok() in nfs4_compound.c */
	c->info.peer = ss;
	c->info.peer_len = sslen;
	c->credits = credits;
	list_add(&c->link, &t->conns);
	t->nconns++;
	gw_stat_add(&t->srv->stats.conns_accepted, 1);
	gw_stat_add(&t->srv->stats.conns_open, 1);
	gw_stat_add(&t->srv->stats.rdma_conns, 1);
	LTRACE(lacunad, conn__accept, (uint64_t)c->info.id, 1);

	c->dev = gw_rdev_get(t, id->verbs);
	if (c->dev)
		c->dev->nconns++;
	if (!c->dev || gw_rconn_setup(c, &peer))
		goto out_drop;

	memset(&ours, 0, sizeof(ours));
	ours.send_max = c->send_size;
	ours.recv_max = c->recv_size;
	rpcrdma_cm_priv_enc(priv, &ours);
	memset(&cp, 0, sizeof(cp));
	cp.private_data = priv;
	cp.private_data_len = sizeof(priv);
	/*
	 * The CM reports the request's depths from our side already: we
	 * issue RDMA Reads, as many at once as the client can answer
	 * (initiator_depth) and the device allows.
	 */
	cp.initiator_depth = initiator_depth;
	if (cp.initiator_depth > c->dev->attr.max_qp_init_rd_atom)
		cp.initiator_depth = (uint8_t)c->dev->attr.max_qp_init_rd_atom;
	cp.responder_resources = responder_resources;
	if (cp.responder_resources > c->dev->attr.max_qp_rd_atom)
		cp.responder_resources = (uint8_t)c->dev->attr.max_qp_rd_atom;
	cp.rnr_retry_count = 7;
	c->read_depth = cp.initiator_depth;
	if (rdma_accept(id, &cp)) {
		log_info("rdma: rdma_accept (%s): %s", net_addr_str(&c->info.peer, a, sizeof(a)),
			 strerror(errno));
		goto out_drop;
	}
	c->st = RC_ACCEPTED;
	log_debug("rdma: connection %llu from %s: inline %u/%u bytes (client %s), %u credits",
		  GW_RCONN_NO(c), net_addr_str(&c->info.peer, a, sizeof(a)), c->recv_size,
		  c->send_size, known ? "sent RFC 8797 private data" : "sent no private data",
		  c->credits);
	return;

out_drop:
	rdma_reject(id, NULL, 0);
	c->id = NULL; /* the caller destroys the id */
	id->context = NULL;
	gw_stat_add(&t->srv->stats.conns_dropped, 1);
	gw_rconn_free(c);
	return;
out_reject:
	rdma_reject(id, NULL, 0);
}

/* Device removal of the listener: RDMA service ends, TCP goes on. */
static void gw_rdma_lost_device(struct gw_rdma_loop *t)
{
	struct gw_rconn *c;
	struct gw_rdev *d;

	log_err("rdma: RDMA device removed: RDMA service stops, TCP goes on");
	for (d = t->devs; d; d = d->next)
		d->removed = true;
	list_for_each_entry(c, &t->conns, link)
		gw_rconn_close(c, true, "device removed");
	if (t->listen) {
		rdma_destroy_id(t->listen);
		t->listen = NULL;
	}
}

static void gw_rdma_cm_events(struct gw_rdma_loop *t)
{
	struct rdma_cm_event *ev;
	struct rdma_cm_id *id, *reject_id;
	enum rdma_cm_event_type type;
	struct gw_rconn *c;
	uint8_t pdata[UINT8_MAX];
	uint8_t plen, ird, ord;

	while (!rdma_get_cm_event(t->ech, &ev)) {
		/* copy what is needed, then acknowledge: a destroy waits for the ack */
		type = ev->event;
		id = ev->id;
		plen = 0;
		ird = ord = 0;
		if (type == RDMA_CM_EVENT_CONNECT_REQUEST) {
			plen = ev->param.conn.private_data_len;
			if (plen && ev->param.conn.private_data)
				memcpy(pdata, ev->param.conn.private_data, plen);
			else
				plen = 0;
			ird = ev->param.conn.initiator_depth;
			ord = ev->param.conn.responder_resources;
		}
		rdma_ack_cm_event(ev);

		if (type == RDMA_CM_EVENT_CONNECT_REQUEST) {
			id->context = NULL;
			gw_rdma_on_request(t, id, pdata, plen, ird, ord);
			reject_id = id->context ? NULL : id;
			if (reject_id)
				rdma_destroy_id(reject_id);
			continue;
		}
		if (id == t->listen) {
			if (type == RDMA_CM_EVENT_DEVICE_REMOVAL)
				gw_rdma_lost_device(t);
			continue;
		}
		c = id->context;
		if (!c)
			continue;
		switch (type) {
		case RDMA_CM_EVENT_ESTABLISHED:
			if (c->st == RC_ACCEPTED)
				c->st = RC_CONNECTED;
			break;
		case RDMA_CM_EVENT_DISCONNECTED:
			gw_rconn_close(c, false, "disconnected");
			break;
		case RDMA_CM_EVENT_CONNECT_ERROR:
		case RDMA_CM_EVENT_UNREACHABLE:
		case RDMA_CM_EVENT_REJECTED:
			gw_rconn_close(c, true, rdma_event_str(type));
			break;
		case RDMA_CM_EVENT_DEVICE_REMOVAL:
			if (c->dev && !c->dev->removed) {
				c->dev->removed = true;
				log_err("rdma: device %s removed: its connections close",
					ibv_get_device_name(c->dev->verbs->device));
			}
			gw_rconn_close(c, true, "device removed");
			break;
		default:
			break;
		}
	}
}

/*
 * Free every closing connection that has gone quiet, then every device
 * that was removed or has had no connection for GW_RDMA_DEV_IDLE
 * seconds (its removal waits for that; the next connection on it
 * registers the pool again).
 */
static void gw_rdma_reap(struct gw_rdma_loop *t)
{
	struct gw_rconn *c, *next;
	struct gw_rdev **pd, *d;
	time_t now = time(NULL);

	list_for_each_entry_safe(c, next, &t->conns, link) {
		if (c->st == RC_CLOSING)
			gw_rconn_poll(c);
		if (gw_rconn_quiet(c))
			gw_rconn_free(c);
	}
	for (pd = &t->devs; (d = *pd);) {
		if (!d->nconns && (d->removed || now - d->idle_since >= GW_RDMA_DEV_IDLE)) {
			*pd = d->next;
			log_info("rdma: device %s released (%s)",
				 ibv_get_device_name(d->verbs->device),
				 d->removed ? "removed" : "no connections");
			gw_rdev_free(t, d);
		} else {
			pd = &d->next;
		}
	}
}

/* ------------------------------------------------------------ start, run */

/* Listen as @s's configuration says, if it asks for RDMA and a device is there. */
static int gw_rdma_listen(struct gw_rdma_loop *t, struct gw_srv *s)
{
	struct sockaddr_storage addr;
	struct gw_snap *sn;
	struct ibv_device **list;
	struct epoll_event ev = { .events = EPOLLIN };
	char a[80];
	uint16_t port;
	bool on;
	int n = 0, ret;

	sn = gw_snap_get(s);
	on = sn->cfg->rdma;
	port = sn->cfg->rdma_port;
	addr = sn->cfg->listen;
	t->rec_max = sn->cfg->max_record;
	gw_snap_put(sn);
	if (!on)
		return 0;
	t->srv = s;
	/* the address TCP listens on, RDMA's port */
	if (addr.ss_family == AF_INET6)
		((struct sockaddr_in6 *)&addr)->sin6_port = htons(port);
	else
		((struct sockaddr_in *)&addr)->sin_port = htons(port);
	net_addr_str(&addr, a, sizeof(a));
	list = ibv_get_device_list(&n);
	if (list)
		ibv_free_device_list(list);
	if (n <= 0) {
		log_info("rdma: no RDMA device: serving TCP only");
		return 0;
	}
	t->ech = rdma_create_event_channel();
	if (!t->ech) {
		log_info("rdma: rdma_create_event_channel: %s: serving TCP only", strerror(errno));
		return 0;
	}
	ret = gw_rdma_nonblock(t->ech->fd);
	if (ret) {
		log_err("rdma: fcntl: %s", strerror(-ret));
		goto out_channel;
	}
	if (rdma_create_id(t->ech, &t->listen, NULL, RDMA_PS_TCP)) {
		ret = -errno;
		log_err("rdma: rdma_create_id: %s", strerror(-ret));
		goto out_channel;
	}
	/* an address no RDMA device serves (loopback, say) is not fatal: TCP goes on */
	if (rdma_bind_addr(t->listen, (struct sockaddr *)&addr)) {
		log_err("rdma: rdma_bind_addr %s: %s: serving TCP only", a, strerror(errno));
		ret = 0;
		goto out_id;
	}
	if (rdma_listen(t->listen, GW_RDMA_BACKLOG)) {
		log_err("rdma: rdma_listen %s: %s: serving TCP only", a, strerror(errno));
		ret = 0;
		goto out_id;
	}
	t->epfd = epoll_create1(EPOLL_CLOEXEC);
	t->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (t->epfd < 0 || t->efd < 0) {
		ret = -errno;
		log_err("rdma: epoll_create1/eventfd: %s", strerror(-ret));
		goto out_fds;
	}
	ev.data.u64 = GW_RDMA_EV_CM;
	if (epoll_ctl(t->epfd, EPOLL_CTL_ADD, t->ech->fd, &ev)) {
		ret = -errno;
		log_err("rdma: epoll_ctl: %s", strerror(-ret));
		goto out_fds;
	}
	ev.data.u64 = GW_RDMA_EV_WAKE;
	if (epoll_ctl(t->epfd, EPOLL_CTL_ADD, t->efd, &ev)) {
		ret = -errno;
		log_err("rdma: epoll_ctl: %s", strerror(-ret));
		goto out_fds;
	}
	atomic_store(&t->wake_fd, t->efd);
	log_info("rdma: listening on %s (RPC-over-RDMA version 1, %d device%s)", a, n,
		 n == 1 ? "" : "s");
	return 0;

out_fds:
	if (t->epfd >= 0)
		close(t->epfd);
	if (t->efd >= 0)
		close(t->efd);
	t->epfd = t->efd = -1;
out_id:
	rdma_destroy_id(t->listen);
	t->listen = NULL;
out_channel:
	rdma_destroy_event_channel(t->ech);
	t->ech = NULL;
	return ret;
}

static bool gw_rdma_listening(const void *x)
{
	const struct gw_rdma_loop *t = x;

	return t->ech != NULL;
}

/* Undo gw_rdma_listen() but for the wake-up eventfd (stop() closes it); again: nothing. */
static void gw_rdma_teardown(struct gw_rdma_loop *t)
{
	struct gw_rdev *d;

	if (t->listen)
		rdma_destroy_id(t->listen);
	t->listen = NULL;
	while ((d = t->devs)) {
		t->devs = d->next;
		gw_rdev_free(t, d);
	}
	if (t->ech)
		rdma_destroy_event_channel(t->ech);
	t->ech = NULL;
	if (t->epfd >= 0)
		close(t->epfd);
	t->epfd = -1;
}

static int gw_rdma_start(struct gw_srv *s, void **out)
{
	struct gw_rdma_loop *t = calloc(1, sizeof(*t));
	int ret;

	if (!t) {
		log_err("rdma: out of memory");
		return -ENOMEM;
	}
	t->epfd = t->efd = -1;
	list_init(&t->conns);
	atomic_init(&t->wake_fd, -1);
	ret = gw_rdma_listen(t, s);
	if (ret || !t->ech) {
		free(t);
		return ret;
	}
	*out = t;
	return 0;
}

static void gw_rdma_stop(void *x)
{
	struct gw_rdma_loop *t = x;

	gw_rdma_teardown(t);
	atomic_store(&t->wake_fd, -1);
	if (t->efd >= 0)
		close(t->efd);
	free(t);
}

static int gw_rdma_run(void *x)
{
	struct gw_rdma_loop *t = x;
	struct gw_srv *s = t->srv;
	struct epoll_event evs[16];
	struct gw_work *wk, *next;
	struct gw_rconn *c;
	struct gw_snap *sn;
	unsigned int threads;
	time_t deadline = 0;
	uint64_t v;
	int i, n, ret;

	if (!t->ech)
		return 0;
	sn = gw_snap_get(s);
	threads = sn->cfg->threads;
	gw_snap_put(sn);
	ret = gw_workers_start(&t->workers, s, threads, gw_rdma_wake, t);
	if (ret)
		goto out;
	for (;;) {
		if (atomic_load(&s->stopping) && !deadline) {
			deadline = time(NULL) + GW_RDMA_STOP_WAIT;
			if (t->listen) {
				rdma_destroy_id(t->listen);
				t->listen = NULL;
			}
			list_for_each_entry(c, &t->conns, link)
				gw_rconn_close(c, false, "server stopping");
		}
		gw_workers_push(t->workers, &t->batch);
		gw_rdma_reap(t);
		if (deadline && (list_empty(&t->conns) || time(NULL) >= deadline))
			break;
		n = epoll_wait(t->epfd, evs, 16, deadline ? 100 : 1000);
		for (i = 0; i < n; i++) {
			if (evs[i].data.u64 == GW_RDMA_EV_CM) {
				gw_rdma_cm_events(t);
			} else if (evs[i].data.u64 == GW_RDMA_EV_WAKE) {
				if (read(t->efd, &v, sizeof(v)) < 0) {
					/* EAGAIN: already drained */
				}
				for (wk = gw_workers_done(t->workers); wk; wk = next) {
					next = wk->next;
					gw_rconn_worker_done((struct gw_rreq *)wk);
				}
			} else {
				gw_rdev_events(evs[i].data.ptr);
			}
		}
	}
	if (!list_empty(&t->conns))
		log_err("rdma: %u connections did not drain in %d s", t->nconns, GW_RDMA_STOP_WAIT);
	gw_workers_stop(t->workers);
	t->workers = NULL;
	while (!list_empty(&t->conns)) {
		c = list_first_entry(&t->conns, struct gw_rconn, link);
		c->at_worker = 0;
		gw_rconn_free(c);
	}
	log_info("rdma: stopped");
out:
	gw_rdma_teardown(t);
	return ret;
}

static void gw_rdma_stats(const struct gw_srv *s, FILE *f)
{
	const struct gw_stats *st = &s->stats;

	fprintf(f,
		"rdma_conns %llu\nrdma_read_chunk_bytes %llu\nrdma_write_chunk_bytes %llu\n"
		"rdma_reply_chunk_bytes %llu\nrdma_inline_replies %llu\n"
		"rdma_reply_chunk_replies %llu\nrdma_errors %llu\nrdma_conns_refused %llu\n",
		st->rdma_conns, st->rdma_read_bytes, st->rdma_write_bytes, st->rdma_reply_bytes,
		st->rdma_inline_replies, st->rdma_reply_chunk_replies, st->rdma_errors,
		st->rdma_conns_refused);
}

static void gw_rdma_metrics(const struct gw_srv *s, FILE *f)
{
	const struct gw_stats *st = &s->stats;
	const unsigned long long chunks[3] = { st->rdma_read_bytes, st->rdma_write_bytes,
					       st->rdma_reply_bytes };
	static const char *const kinds[3] = { "read", "write", "reply" };
	unsigned int i;

	mx_one(f, "lacunad_rdma_connections_total", "counter", "RPC-over-RDMA connections accepted",
	       st->rdma_conns);
	mx_header(f, "lacunad_rdma_chunk_bytes_total", "counter",
		  "Bytes moved through RDMA read, write and reply chunks");
	for (i = 0; i < 3; i++)
		fprintf(f, "lacunad_rdma_chunk_bytes_total{chunk=\"%s\"} %llu\n", kinds[i],
			chunks[i]);
	mx_two(f, "lacunad_rdma_replies_total", "counter",
	       "RPC-over-RDMA replies sent inline or through a reply chunk", "via", "inline",
	       st->rdma_inline_replies, "reply_chunk", st->rdma_reply_chunk_replies);
	mx_one(f, "lacunad_rdma_errors_total", "counter", "RDMA_ERROR replies sent",
	       st->rdma_errors);
}

static void gw_rdma_bytes(const struct gw_srv *s, unsigned long long *in, unsigned long long *out)
{
	*in = s->stats.rdma_bytes_in;
	*out = s->stats.rdma_bytes_out;
}

const struct gw_xprt gw_xprt_rdma = {
	.name = "rdma",
	.after_fork = true, /* verbs resources do not survive a fork */
	.start = gw_rdma_start,
	.listening = gw_rdma_listening,
	.run = gw_rdma_run,
	.wake = gw_rdma_wake,
	.stop = gw_rdma_stop,
	.stats = gw_rdma_stats,
	.metrics = gw_rdma_metrics,
	.bytes = gw_rdma_bytes,
};
