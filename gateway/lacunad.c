// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * lacunad: the NFSv4.0/4.1/4.2 server that exports lacunafs mounts.
 *
 * Start-up builds the configuration (a file, or one export from the
 * command line), opens the exports, maps the chunk pools, and runs the
 * TCP transport on the main thread and, when asked for and a device is
 * there, RPC-over-RDMA on a thread of its own (set up after daemon(),
 * since verbs resources do not survive a fork). Signals are blocked in every thread
 * and taken by one signal thread with sigtimedwait(): SIGTERM and SIGINT
 * stop the server (the transport drains in-flight requests and exits),
 * SIGHUP reloads the configuration file (a file with errors is refused
 * and the old one kept; requests go on meanwhile under the configuration
 * they began with, gw.h "Configuration"), and once a second the
 * statistics file is rewritten when one is configured.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "gw_drc.h"
#include "gw_xprt.h"
#include "log.h"
#include "nfs4_recov.h"
#include "nfs4_state.h"

#define GW_CHUNK_SIZE (1024 * 1024 + 64 * 1024)
#define GW_CHUNKS 512
#define GW_SMALL_CHUNK_SIZE (16 * 1024)
#define GW_SMALL_CHUNKS 8192

static struct gw_cli cli;
static sigset_t sigs;

#define XPRTS_MAX 8

/*
 * The transports of gw_xprts[] that listen, as started. The signal thread
 * wakes them while main may still be starting more: n is published after
 * the entry it counts is filled, and entries are freed only once that
 * thread has been joined.
 */
struct xprts {
	struct gw_srv *srv;
	struct xprt {
		const struct gw_xprt *ops;
		void *x;
		pthread_t thr;
		bool thread; /* run() on thr */
	} t[XPRTS_MAX];
	atomic_uint n;
};

static void print_err(void *arg, const char *msg)
{
	(void)arg;
	log_err("%s", msg);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void print_warn(void *arg, const char *msg)
{
	(void)arg;
	log_warn("%s", msg);
}

static void reload(struct gw_srv *s)
{
	struct gw_config *cfg;
	struct gw_snap *sn;
	int err;

	if (cli.export_dir) {
		log_info("SIGHUP: one-export mode has no configuration file to reload");
		return;
	}
	err = gw_config_from_cli(&cli, &cfg, print_err, NULL);
	if (!err)
		err = gw_exports_check_new(s, cfg, print_err, NULL);
	if (err) {
		log_err("reload: configuration refused, keeping the one in use");
		if (cfg)
			gw_config_free(cfg);
		return;
	}
	sn = gw_snap_get(s);
	/* the settings used at start (sockets, threads, pools, the state directory) stay */
	gw_config_keep_start(cfg, sn->cfg, print_warn, NULL);
	gw_snap_put(sn);
	/* requests go on meanwhile under the configuration in force */
	err = gw_exports_load(s, cfg);
	if (err) {
		gw_config_free(cfg);
		log_err("reload: exports could not be opened, keeping the configuration in use");
		return;
	}
	sn = gw_snap_get(s);
	cfg = sn->cfg;
	gw_fd_budget_apply(&cfg->limits, false);
	gw_drc_configure(s->drc, cfg->drc_entries);
	log_init("lacunad", !cli.foreground, cfg->log_level);
	log_info("reloaded %s: %zu export(s), lease %u s", cfg->source, cfg->nexports,
		 cfg->lease_time);
	gw_snap_put(sn);
}

static void write_stats(struct gw_srv *s, const char *path)
{
	const struct gw_xprt *const *o;
	struct nfs4_recov_stats rs;
	struct nfs4_state_stats ss;
	char tmp[4096 + 8];
	FILE *f;
	unsigned int i;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "we");
	if (!f)
		return;
	nfs4_state_get_stats(s, &ss);
	nfs4_recov_get_stats(s->state->recov, &rs);
	fprintf(f, "compounds %llu\nrpc_null %llu\nrpc_rejected %llu\nrpc_garbage %llu\n",
		s->stats.compounds, s->stats.rpc_null, s->stats.rpc_rejected, s->stats.rpc_garbage);
	fprintf(f, "conns_accepted %llu\nconns_open %llu\nconns_dropped %llu\n",
		s->stats.conns_accepted, s->stats.conns_open, s->stats.conns_dropped);
	fprintf(f, "bytes_in %llu\nbytes_out %llu\nread_bytes %llu\nwrite_bytes %llu\n",
		s->stats.bytes_in, s->stats.bytes_out, s->stats.read_bytes, s->stats.write_bytes);
	fprintf(f,
		"clients %u\nclients_unconfirmed %u\nclients_expired %u\nsessions %u\nopens %u\n"
		"locks %u\n",
		ss.clients, ss.unconfirmed, ss.expired, ss.sessions, ss.opens, ss.locks);
	fprintf(f,
		"grace %d\ngrace_clients_to_reclaim %u\ngrace_clients_reclaimed %u\n"
		"reclaimed_opens %llu\nreclaimed_locks %llu\ngrace_refused %llu\nclient_records "
		"%u\n",
		rs.in_grace, rs.to_reclaim, rs.reclaimed, rs.reclaimed_opens, rs.reclaimed_locks,
		rs.grace_refused, rs.records);
	fprintf(f, "exports_not_atomic %llu\nstate_refused %llu\n", s->stats.exports_not_atomic,
		s->stats.state_refused);
	fprintf(f, "state_clients_reclaimed %llu\nstate_clients_idle_expired %llu\n",
		s->stats.state_clients_reclaimed, s->stats.state_clients_idle_expired);
	fprintf(f, "state_opens_refused %llu\nstate_locks_refused %llu\n"
		"state_unconfirmed_evicted %llu\nreply_cache_short %llu\nreply_cache_bytes %llu\n",
		s->stats.state_opens_refused, s->stats.state_locks_refused,
		s->stats.state_unconfirmed_evicted, s->stats.reply_cache_short,
		(unsigned long long)ss.reply_cache);
	fprintf(f, "fd_exhausted %llu\ncached_files %zu\n", gw_fd_exhausted_count(), gw_obj_cached());
	fprintf(f, "drc_hits %llu\n", s->stats.drc_hits);
	fprintf(f, "insecure_port_refused %llu\n", s->stats.insecure_port_refused);
	fprintf(f, "xprtsec_refused %llu\n", s->stats.xprtsec_refused);
	fprintf(f, "read_plus_data_bytes %llu\nread_plus_hole_bytes %llu\n", s->stats.rp_data_bytes,
		s->stats.rp_hole_bytes);
	fprintf(f, "read_plus_atomic %llu\nread_plus_not_atomic %llu\nread_plus_unstable %llu\n",
		s->stats.rp_atomic, s->stats.rp_fallback, s->stats.rp_unstable);
	fprintf(f, "write_atomic %llu\nwrite_not_atomic %llu\n", s->stats.write_atomic,
		s->stats.write_fallback);
	fprintf(f, "copy_data_bytes %llu\ncopy_hole_bytes %llu\ncopy_short %llu\n",
		s->stats.copy_data_bytes, s->stats.copy_hole_bytes, s->stats.copy_short);
	fprintf(f, "clone_ops %llu\nclone_bytes %llu\nclone_refused %llu\n", s->stats.clone_ops,
		s->stats.clone_bytes, s->stats.clone_refused);
	for (o = gw_xprts; *o; o++)
		(*o)->stats(s, f);
	for (i = 0; i <= NFS4_OP_LAST; i++)
		if (s->stats.ops[i])
			fprintf(f, "op %s %llu errors %llu\n", nfs4_ops[i].name + 3,
				s->stats.ops[i], s->stats.op_errors[i]);
	if (fclose(f) == 0)
		rename(tmp, path);
}

static void xprts_wake(struct xprts *xs)
{
	unsigned int i, n = atomic_load(&xs->n);

	for (i = 0; i < n; i++)
		xs->t[i].ops->wake(xs->t[i].x);
}

/* Signals, the grace period and the stats file, until the server stops. */
static void *signal_thread(void *arg)
{
	struct timespec tick = { .tv_sec = 1 };
	struct xprts *xs = arg;
	struct gw_srv *s = xs->srv;
	struct gw_snap *sn;

	while (!atomic_load(&s->stopping)) {
		int sig = sigtimedwait(&sigs, NULL, &tick);

		if (sig == SIGTERM || sig == SIGINT) {
			log_info("%s: draining and stopping", strsignal(sig));
			atomic_store(&s->stopping, true);
			xprts_wake(xs);
			break;
		}
		if (sig == SIGHUP)
			reload(s);
		nfs4_recov_tick(s->state->recov);
		sn = gw_snap_get(s);
		if (sn && sn->cfg->stats_file)
			write_stats(s, sn->cfg->stats_file);
		gw_snap_put(sn);
	}
	return NULL;
}

/*
 * Notices lacunafs mounts that die and picks up their new mounts
 * (gw_exports_watch), and retries failed arena registrations
 * (gw_exports_atomic_check): both may wait on a lacunafs that hangs.
 */
static void *watch_thread(void *arg)
{
	struct timespec tick = { .tv_sec = 1 };
	struct gw_srv *s = arg;

	while (!atomic_load(&s->stopping)) {
		nanosleep(&tick, NULL);
		gw_exports_watch(s);
		gw_exports_atomic_check(s);
	}
	return NULL;
}

static void raise_nofile(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

static int make_pools(struct gw_srv *s, const struct gw_config *cfg)
{
	size_t big = GW_CHUNK_SIZE;
	int err;

	/* a whole record must fit one chunk */
	if (cfg->max_record + 4096 > big)
		big = (cfg->max_record + 4096 + 65535) & ~(size_t)65535;
	err = chunk_pool_create(&s->pool, big, GW_CHUNKS, CHUNK_POOL_MEMFD);
	if (err) {
		log_err("chunk_pool_create(%zu x %d): %s", big, GW_CHUNKS, strerror(-err));
		return err;
	}
	err = chunk_pool_create(&s->small, GW_SMALL_CHUNK_SIZE, GW_SMALL_CHUNKS, 0);
	if (err) {
		log_err("chunk_pool_create(%d x %d): %s", GW_SMALL_CHUNK_SIZE, GW_SMALL_CHUNKS,
			strerror(-err));
		chunk_pool_destroy(s->pool);
		return err;
	}
	return 0;
}

static void *xprt_thread(void *arg)
{
	struct xprt *t = arg;

	if (t->ops->run(t->x)) {
		/* this transport is gone; the others serve on */
	}
	return NULL;
}

/*
 * Start the transports of gw_xprts[] that start before (@after_fork false)
 * or after daemon(); those listening join @xs. 0 or -errno (logged).
 */
static int xprts_start(struct xprts *xs, bool after_fork)
{
	const struct gw_xprt *const *o;
	unsigned int n;
	void *x;
	int err;

	for (o = gw_xprts; *o; o++) {
		if ((*o)->after_fork != after_fork)
			continue;
		n = atomic_load(&xs->n);
		if (n == XPRTS_MAX) {
			log_err("%s: more than %d transports", (*o)->name, XPRTS_MAX);
			return -E2BIG;
		}
		x = NULL;
		err = (*o)->start(xs->srv, &x);
		if (err)
			return err;
		if (!x)
			continue;
		xs->t[n].ops = *o;
		xs->t[n].x = x;
		atomic_store(&xs->n, n + 1);
	}
	return 0;
}

/*
 * Run every transport listening, the first on this thread and the others
 * on threads of their own, until the first returns; then stop the others.
 */
static int xprts_run(struct xprts *xs)
{
	unsigned int i, n = atomic_load(&xs->n);
	int err;

	for (i = 1; i < n; i++) {
		if (!xs->t[i].ops->listening(xs->t[i].x))
			continue;
		err = pthread_create(&xs->t[i].thr, NULL, xprt_thread, &xs->t[i]);
		if (err) {
			log_err("pthread_create: %s", strerror(err));
			err = -err;
			goto out_stop;
		}
		xs->t[i].thread = true;
	}
	err = n ? xs->t[0].ops->run(xs->t[0].x) : -ENOTCONN;
out_stop:
	atomic_store(&xs->srv->stopping, true);
	xprts_wake(xs);
	for (i = 1; i < n; i++)
		if (xs->t[i].thread)
			pthread_join(xs->t[i].thr, NULL);
	return err;
}

/* Free the transports started (their threads and the signal thread joined). */
static void xprts_stop(struct xprts *xs)
{
	unsigned int i, n = atomic_load(&xs->n);

	atomic_store(&xs->n, 0);
	for (i = 0; i < n; i++)
		xs->t[i].ops->stop(xs->t[i].x);
}

/* Is transport @name built in? */
static bool xprt_built(const char *name)
{
	const struct gw_xprt *const *o;

	for (o = gw_xprts; *o; o++)
		if (!strcmp((*o)->name, name))
			return true;
	return false;
}

int main(int argc, char *argv[])
{
	/*
	 * The server: static storage, as the detached watch thread may still
	 * look at it while the process exits; reached only through s.
	 */
	static struct gw_srv srv;
	static struct xprts xs;
	struct gw_srv *s = &srv;
	struct gw_snap *boot = NULL; /* the configuration started with, while main reads it */
	bool loaded = false;
	struct gw_config *cfg;
	pthread_t sigthr, watchthr;
	bool foreground, sigthr_on = false;
	int err;

	if (gw_cli_parse(argc, argv, &cli)) {
		fprintf(stderr, "lacunad: %s\nTry 'lacunad --help' for more information.\n",
			cli.err);
		return 2;
	}
	if (cli.help) {
		gw_cli_usage(stdout);
		return 0;
	}
	if (cli.list_settings) {
		gw_settings_write_man(stdout);
		return 0;
	}
	if (cli.version) {
		printf("lacunad %s (NFSv4.0, 4.1, 4.2)\n", PACKAGE_VERSION);
		return 0;
	}
	foreground = cli.foreground || cli.export_dir;
	log_init("lacunad", false, cli.log_level >= 0 ? cli.log_level : GW_LOG_DEFAULT);
	err = gw_config_from_cli(&cli, &cfg, print_err, NULL);
	if (err)
		return 1;
	if (gw_config_check_paths(cfg, print_err, NULL)) {
		gw_config_free(cfg);
		return 1;
	}
	log_init("lacunad", !foreground, cfg->log_level);
	pthread_mutex_init(&s->snap_lock, NULL);
	pthread_mutex_init(&s->reload_lock, NULL);
	xs.srv = s;
	err = gw_drc_create(&s->drc);
	if (err) {
		log_err("gw_drc_create: %s", strerror(-err));
		goto out_cfg;
	}

	umask(0); /* modes come from the clients, as sent */
	raise_nofile();
	gw_fd_budget_apply(&cfg->limits, true);
	gw_state_limits_log(&cfg->limits);
	s->plain_write = getenv("LACUNA_TEST_PLAIN_WRITE") &&
			 !strcmp(getenv("LACUNA_TEST_PLAIN_WRITE"), "1");
	if (s->plain_write)
		log_warn("ATOMIC WRITE DISABLED FOR TESTING (LACUNA_TEST_PLAIN_WRITE): "
			 "WRITEs use pwrite and can tear READ_PLUS");
	s->boot_ns = now_ns();
	if (getrandom(s->write_verf, sizeof(s->write_verf), 0) != sizeof(s->write_verf))
		memcpy(s->write_verf, &s->boot_ns, sizeof(s->write_verf));

	err = gw_fh_key_load(cfg->state_dir, s->fh_key);
	if (err) {
		log_err("lacunad: no file handle key (state_dir %s): not starting",
			cfg->state_dir ? cfg->state_dir : "none");
		goto out_cfg;
	}
	err = make_pools(s, cfg);
	if (err)
		goto out_cfg;
	err = gw_exports_load(s, cfg);
	if (err)
		goto out_pools;
	gw_drc_configure(s->drc, cfg->drc_entries);
	loaded = true;
	boot = gw_snap_get(s); /* a reload may replace it: cfg stays valid for main */
	err = nfs4_state_init(s);
	if (err) {
		log_err("nfs4_state_init: %s", strerror(-err));
		goto out_pools;
	}

	sigemptyset(&sigs);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &sigs, NULL);
	signal(SIGPIPE, SIG_IGN);

	err = xprts_start(&xs, false);
	if (err)
		goto out_state;
	if (!foreground && daemon(0, 0) < 0) {
		err = -errno;
		log_err("daemon: %s", strerror(errno));
		goto out_state;
	}
	err = pthread_create(&sigthr, NULL, signal_thread, &xs);
	if (err) {
		log_err("pthread_create: %s", strerror(err));
		err = -err;
		goto out_state;
	}
	sigthr_on = true;
	err = pthread_create(&watchthr, NULL, watch_thread, s);
	if (err) {
		log_err("pthread_create: %s", strerror(err));
		err = -err;
		goto out_state;
	}
	pthread_detach(watchthr);
	err = gw_metrics_start(s, cfg);
	if (err)
		goto out_state;
	err = xprts_start(&xs, true);
	if (err)
		goto out_state;
	if (cfg->rdma && !xprt_built("rdma"))
		log_info("rdma: built without RPC-over-RDMA: serving TCP only");
	nfs4_state_serving(s);
	/* the worker pool says how many threads it started */
	log_info("lacunad %s serving NFSv4.0-4.2 (lease %us)", PACKAGE_VERSION, cfg->lease_time);
	gw_snap_put(boot);
	boot = NULL;
	err = xprts_run(&xs);
	log_info("stopped");
out_state:
	atomic_store(&s->stopping, true);
	if (sigthr_on)
		pthread_join(sigthr, NULL);
	xprts_stop(&xs);
	gw_metrics_stop(s);
	nfs4_state_fini(s);
	gw_obj_fini();
out_pools:
	chunk_pool_destroy(s->small);
	chunk_pool_destroy(s->pool);
out_cfg:
	gw_snap_put(boot);
	if (loaded)
		gw_exports_unload(s);
	else
		gw_config_free(cfg);
	gw_drc_destroy(s->drc);
	return err ? 1 : 0;
}
