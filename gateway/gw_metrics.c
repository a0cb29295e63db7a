// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * lacunad's /metrics page (metrics_listen, --metrics-listen): gw_srv.stats,
 * the NFSv4 state, the grace period and the chunk pools in the
 * Prometheus text format. Rendered on the responder's thread
 * (common/metrics.c) from relaxed loads of the counters the I/O path
 * adds to; nothing here is on that path.
 */
#include <inttypes.h>
#include <stdio.h>

#include "gw_xprt.h"
#include "log.h"
#include "nfs4_compound.h"
#include "nfs4_recov.h"
#include "nfs4_state.h"

static unsigned long long ld(const atomic_ullong *c)
{
	return atomic_load_explicit(c, memory_order_relaxed);
}

static void counter(FILE *f, const char *name, const char *help, unsigned long long v)
{
	mx_one(f, name, "counter", help, v);
}

static void gauge(FILE *f, const char *name, const char *help, unsigned long long v)
{
	mx_one(f, name, "gauge", help, v);
}

/* A counter of three samples, @label = each of @names. */
static void counter3(FILE *f, const char *name, const char *help, const char *label,
		     const char *const names[3], unsigned long long a, unsigned long long b,
		     unsigned long long c)
{
	const unsigned long long v[3] = { a, b, c };
	unsigned int i;

	mx_header(f, name, "counter", help);
	for (i = 0; i < 3; i++)
		fprintf(f, "%s{%s=\"%s\"} %llu\n", name, label, names[i], v[i]);
}

static const char *op_name(unsigned int op)
{
	return nfs4_ops[op].name + 3; /* past "OP_" */
}

static uint32_t slot_status(unsigned int slot)
{
	return slot < 128 ? slot : slot - 128 + 10000;
}

static void render_ops(FILE *f, const struct gw_stats *st)
{
	unsigned int op, k;
	char labels[64];

	mx_header(f, "lacunad_ops_total", "counter", "NFSv4 operations done, by status");
	for (op = 0; op <= NFS4_OP_LAST; op++) {
		if (!ld(&st->ops[op]))
			continue;
		for (k = 0; k < GW_STATUS_SLOTS; k++) {
			unsigned long long v = ld(&st->op_status[op][k]);

			if (!v)
				continue;
			fprintf(f, "lacunad_ops_total{op=\"%s\",status=\"%s\"} %llu\n", op_name(op),
				k == GW_STATUS_SLOTS - 1 ? "other" : nfs4_status_name(slot_status(k)),
				v);
		}
	}
	mx_header(f, "lacunad_op_duration_seconds", "histogram",
		  "Time to run one NFSv4 operation");
	for (op = 0; op <= NFS4_OP_LAST; op++) {
		if (!mx_hist_count(&st->op_lat[op]))
			continue;
		snprintf(labels, sizeof(labels), "op=\"%s\"", op_name(op));
		mx_hist_write(f, "lacunad_op_duration_seconds", labels, &st->op_lat[op]);
	}
	mx_header(f, "lacunad_rpc_duration_seconds", "histogram",
		  "Time from a call record to its reply built");
	mx_hist_write(f, "lacunad_rpc_duration_seconds", "", &st->rpc_lat);
}

static void render_io(FILE *f, const struct gw_srv *s, const struct gw_stats *st)
{
	const struct gw_xprt *const *o;
	unsigned long long in, out;

	mx_header(f, "lacunad_transport_bytes_total", "counter",
		  "Bytes received and sent, by transport");
	for (o = gw_xprts; *o; o++) {
		(*o)->bytes(s, &in, &out);
		fprintf(f,
			"lacunad_transport_bytes_total{transport=\"%s\",direction=\"in\"} %llu\n"
			"lacunad_transport_bytes_total{transport=\"%s\",direction=\"out\"} %llu\n",
			(*o)->name, in, (*o)->name, out);
	}
	counter(f, "lacunad_read_bytes_total", "File bytes returned by READ", ld(&st->read_bytes));
	counter(f, "lacunad_write_bytes_total", "File bytes written by WRITE",
		ld(&st->write_bytes));
	mx_two(f, "lacunad_read_plus_bytes_total", "counter",
	       "READ_PLUS bytes answered as data segments and as holes", "kind", "data",
	       ld(&st->rp_data_bytes), "hole", ld(&st->rp_hole_bytes));
	mx_two(f, "lacunad_read_plus_replies_total", "counter",
	       "READ_PLUS replies taken under lacunafs's range lock (atomic) or not", "atomic", "yes",
	       ld(&st->rp_atomic), "no", ld(&st->rp_fallback));
	counter(f, "lacunad_read_plus_unstable_total",
		"READ_PLUS replies whose file kept changing under the read", ld(&st->rp_unstable));
	mx_two(f, "lacunad_writes_total", "counter",
	       "WRITEs applied under one hold of lacunafs's range lock (atomic) or not", "atomic",
	       "yes", ld(&st->write_atomic), "no", ld(&st->write_fallback));
	counter(f, "lacunad_clone_ops_total", "CLONEs made (reflinks through lacunafs)",
		ld(&st->clone_ops));
	counter(f, "lacunad_clone_bytes_total", "File bytes shared by CLONE", ld(&st->clone_bytes));
	counter(f, "lacunad_clone_refused_total",
		"CLONEs refused (NOTSUPP) where the backing filesystem cannot reflink",
		ld(&st->clone_refused));
}

static void render_conns(FILE *f, struct gw_srv *s, const struct gw_stats *st)
{
	const struct gw_xprt *const *o;
	struct nfs4_state_stats ss;
	struct nfs4_recov_stats rs;

	counter(f, "lacunad_compounds_total", "COMPOUND calls", ld(&st->compounds));
	counter3(f, "lacunad_rpc_calls_total",
		 "RPC calls other than COMPOUND: NULL, rejected, GARBAGE_ARGS", "kind",
		 (const char *const[3]){ "null", "rejected", "garbage" }, ld(&st->rpc_null),
		 ld(&st->rpc_rejected), ld(&st->rpc_garbage));
	counter(f, "lacunad_connections_accepted_total", "Connections accepted",
		ld(&st->conns_accepted));
	gauge(f, "lacunad_connections", "Connections open", ld(&st->conns_open));
	counter(f, "lacunad_connections_dropped_total",
		"Connections closed for an error of their own", ld(&st->conns_dropped));
	mx_header(f, "lacunad_limit_hits_total", "counter",
		  "Times a limit of lacunad.conf(5) was hit");
	for (o = gw_xprts; *o; o++)
		if ((*o)->limit_hits)
			(*o)->limit_hits(s, f);
	fprintf(f,
		"lacunad_limit_hits_total{limit=\"state_refused\"} %llu\n"
		"lacunad_limit_hits_total{limit=\"state_clients_reclaimed\"} %llu\n"
		"lacunad_limit_hits_total{limit=\"fd_exhausted\"} %llu\n",
		ld(&st->state_refused), ld(&st->state_clients_reclaimed), gw_fd_exhausted_count());
	counter(f, "lacunad_insecure_port_refused_total",
		"Calls refused (NFS4ERR_PERM) for an unreserved source port on a secure export",
		ld(&st->insecure_port_refused));
	counter(f, "lacunad_xprtsec_refused_total",
		"Calls refused (NFS4ERR_WRONGSEC) for a transport security the export's xprtsec= "
		"does not admit",
		ld(&st->xprtsec_refused));
	gauge(f, "lacunad_cached_files", "File objects kept open by the cache",
	      (unsigned long long)gw_obj_cached());
	nfs4_state_get_stats(s, &ss);
	gauge(f, "lacunad_clients", "NFSv4 clients known", ss.clients);
	gauge(f, "lacunad_clients_unconfirmed", "NFSv4 client records not confirmed yet",
	      ss.unconfirmed);
	gauge(f, "lacunad_clients_expired", "NFSv4 clients expired, kept to answer EXPIRED",
	      ss.expired);
	counter(f, "lacunad_clients_idle_expired_total",
		"NFSv4 clients unconfirmed or without a session forgotten after "
		"unconfirmed_timeout",
		ld(&st->state_clients_idle_expired));
	gauge(f, "lacunad_sessions", "NFSv4.1 sessions", ss.sessions);
	gauge(f, "lacunad_opens", "Open states", ss.opens);
	gauge(f, "lacunad_locks", "Lock states", ss.locks);
	nfs4_recov_get_stats(s->state->recov, &rs);
	gauge(f, "lacunad_grace", "1 while the grace period runs", rs.in_grace);
	counter(f, "lacunad_grace_refused_total", "Calls refused with NFS4ERR_GRACE",
		rs.grace_refused);
	gauge(f, "lacunad_exports_not_atomic", "lacunafs exports served without atomic sparse reads",
		ld(&st->exports_not_atomic));
}

static void render_pools(FILE *f, const struct gw_srv *s)
{
	struct chunk_pool_stats ps[2];
	static const char *const names[2] = { "large", "small" };
	unsigned int i;

	chunk_pool_get_stats(s->pool, &ps[0]);
	chunk_pool_get_stats(s->small, &ps[1]);
	mx_header(f, "lacunad_pool_chunks", "gauge", "Chunks of a buffer pool");
	for (i = 0; i < 2; i++)
		fprintf(f, "lacunad_pool_chunks{pool=\"%s\"} %u\n", names[i], ps[i].nchunks);
	mx_header(f, "lacunad_pool_chunks_in_use", "gauge", "Chunks of a buffer pool out now");
	for (i = 0; i < 2; i++)
		fprintf(f, "lacunad_pool_chunks_in_use{pool=\"%s\"} %u\n", names[i], ps[i].in_use);
	mx_header(f, "lacunad_pool_chunks_peak", "gauge", "Most chunks of a buffer pool out at once");
	for (i = 0; i < 2; i++)
		fprintf(f, "lacunad_pool_chunks_peak{pool=\"%s\"} %u\n", names[i], ps[i].peak);
	mx_header(f, "lacunad_pool_get_failures_total", "counter",
		  "Chunk requests refused by a pool's or an owner's cap");
	for (i = 0; i < 2; i++)
		fprintf(f, "lacunad_pool_get_failures_total{pool=\"%s\"} %" PRIu64 "\n", names[i],
			ps[i].fail_pool + ps[i].fail_owner);
}

static void gw_metrics_render(FILE *f, void *arg)
{
	struct gw_srv *s = arg;
	const struct gw_stats *st = &s->stats;
	const struct gw_xprt *const *o;

	gauge(f, "lacunad_start_time_seconds", "When lacunad started (Unix time)",
	      s->boot_ns / 1000000000ULL);
	render_conns(f, s, st);
	render_ops(f, st);
	render_io(f, s, st);
	render_pools(f, s);
	for (o = gw_xprts; *o; o++)
		if ((*o)->metrics)
			(*o)->metrics(s, f);
}

int gw_metrics_start(struct gw_srv *s, const struct gw_config *cfg)
{
	char a[80];
	int err;

	if (!cfg->metrics.ss_family)
		return 0;
	err = mx_http_start((const struct sockaddr *)&cfg->metrics, cfg->metrics_len,
			    gw_metrics_render, s, &s->metrics);
	if (!err)
		log_info("metrics: http://%s/metrics", net_addr_str(&cfg->metrics, a, sizeof(a)));
	return err;
}

void gw_metrics_stop(struct gw_srv *s)
{
	mx_http_stop(s->metrics);
	s->metrics = NULL;
}
