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

static void reload(void)
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
		err = gw_exports_check_new(&gw, cfg, print_err, NULL);
	if (err) {
		log_err("reload: configuration refused, keeping the one in use");
		if (cfg)
			gw_config_free(cfg);
		return;
	}
	sn = gw_snap_get(&gw);
	/* the settings used at start (sockets, threads, pools, the state directory) stay */
	gw_config_keep_start(cfg, sn->cfg, print_warn, NULL);
	gw_snap_put(sn);
	/* requests go on meanwhile under the configuration in force */
	err = gw_exports_load(&gw, cfg);
	if (err) {
		gw_config_free(cfg);
		log_err("reload: exports could not be opened, keeping the configuration in use");
		return;
	}
	sn = gw_snap_get(&gw);
	cfg = sn->cfg;
	gw_fd_budget_apply(&cfg->limits, false);
	gw_drc_configure(cfg->drc_entries);
	log_init("lacunad", !cli.foreground, cfg->log_level);
	log_info("reloaded %s: %zu export(s), lease %u s", cfg->source, cfg->nexports,
		 cfg->lease_time);
	gw_snap_put(sn);
}

static void write_stats(const char *path)
{
	struct nfs4_recov_stats rs;
	struct nfs4_state_stats ss;
	char tmp[4096 + 8];
	FILE *f;
	unsigned int i;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "we");
	if (!f)
		return;
	nfs4_state_get_stats(&gw, &ss);
	nfs4_recov_get_stats(gw.state->recov, &rs);
	fprintf(f, "compounds %llu\nrpc_null %llu\nrpc_rejected %llu\nrpc_garbage %llu\n",
		gw.stats.compounds, gw.stats.rpc_null, gw.stats.rpc_rejected, gw.stats.rpc_garbage);
	fprintf(f, "conns_accepted %llu\nconns_open %llu\nconns_dropped %llu\n",
		gw.stats.conns_accepted, gw.stats.conns_open, gw.stats.conns_dropped);
	fprintf(f,
		"conns_refused %llu\nconns_evicted %llu\nconns_idle_closed %llu\n"
		"conns_record_timeout %llu\nconns_send_timeout %llu\nconn_stalls %llu\n"
		"client_stalls %llu\n",
		gw.stats.conns_refused, gw.stats.conns_evicted, gw.stats.conns_idle_closed,
		gw.stats.conns_record_timeout, gw.stats.conns_send_timeout, gw.stats.conn_stalls,
		gw.stats.client_stalls);
	fprintf(f, "bytes_in %llu\nbytes_out %llu\nread_bytes %llu\nwrite_bytes %llu\n",
		gw.stats.bytes_in, gw.stats.bytes_out, gw.stats.read_bytes, gw.stats.write_bytes);
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
	fprintf(f, "exports_not_atomic %llu\nstate_refused %llu\n", gw.stats.exports_not_atomic,
		gw.stats.state_refused);
	fprintf(f, "state_clients_reclaimed %llu\nstate_clients_idle_expired %llu\n",
		gw.stats.state_clients_reclaimed, gw.stats.state_clients_idle_expired);
	fprintf(f, "state_opens_refused %llu\nstate_locks_refused %llu\n"
		"state_unconfirmed_evicted %llu\nreply_cache_short %llu\nreply_cache_bytes %llu\n",
		gw.stats.state_opens_refused, gw.stats.state_locks_refused,
		gw.stats.state_unconfirmed_evicted, gw.stats.reply_cache_short,
		(unsigned long long)ss.reply_cache);
	fprintf(f, "fd_exhausted %llu\ncached_files %zu\n", gw.stats.fd_exhausted, gw_obj_cached());
	fprintf(f, "drc_hits %llu\n", gw.stats.drc_hits);
	fprintf(f, "insecure_port_refused %llu\n", gw.stats.insecure_port_refused);
	fprintf(f, "read_plus_data_bytes %llu\nread_plus_hole_bytes %llu\n", gw.stats.rp_data_bytes,
		gw.stats.rp_hole_bytes);
	fprintf(f, "read_plus_atomic %llu\nread_plus_not_atomic %llu\nread_plus_unstable %llu\n",
		gw.stats.rp_atomic, gw.stats.rp_fallback, gw.stats.rp_unstable);
	fprintf(f, "write_atomic %llu\nwrite_not_atomic %llu\n", gw.stats.write_atomic,
		gw.stats.write_fallback);
	fprintf(f, "copy_data_bytes %llu\ncopy_hole_bytes %llu\ncopy_short %llu\n",
		gw.stats.copy_data_bytes, gw.stats.copy_hole_bytes, gw.stats.copy_short);
	fprintf(f, "clone_ops %llu\nclone_bytes %llu\nclone_refused %llu\n", gw.stats.clone_ops,
		gw.stats.clone_bytes, gw.stats.clone_refused);
	fprintf(f,
		"rdma_conns %llu\nrdma_read_chunk_bytes %llu\nrdma_write_chunk_bytes %llu\n"
		"rdma_reply_chunk_bytes %llu\nrdma_inline_replies %llu\n"
		"rdma_reply_chunk_replies %llu\nrdma_errors %llu\nrdma_conns_refused %llu\n",
		gw.stats.rdma_conns, gw.stats.rdma_read_bytes, gw.stats.rdma_write_bytes,
		gw.stats.rdma_reply_bytes, gw.stats.rdma_inline_replies,
		gw.stats.rdma_reply_chunk_replies, gw.stats.rdma_errors,
		gw.stats.rdma_conns_refused);
	for (i = 0; i <= NFS4_OP_LAST; i++)
		if (gw.stats.ops[i])
			fprintf(f, "op %s %llu errors %llu\n", nfs4_ops[i].name + 3,
				gw.stats.ops[i], gw.stats.op_errors[i]);
	if (fclose(f) == 0)
		rename(tmp, path);
}

static void *signal_thread(void *arg)
{
	struct timespec tick = { .tv_sec = 1 };
	struct gw_snap *sn;

	(void)arg;
	for (;;) {
		int sig = sigtimedwait(&sigs, NULL, &tick);

		if (sig == SIGTERM || sig == SIGINT) {
			log_info("%s: draining and stopping", strsignal(sig));
			atomic_store(&gw.stopping, true);
			gw_tcp_wake();
#ifdef HAVE_RDMA
			gw_rdma_wake();
#endif
			return NULL;
		}
		if (sig == SIGHUP)
			reload();
		nfs4_recov_tick(gw.state->recov);
		sn = gw_snap_get(&gw);
		if (sn && sn->cfg->stats_file)
			write_stats(sn->cfg->stats_file);
		gw_snap_put(sn);
	}
}

/*
 * Notices lacunafs mounts that die and picks up their new mounts
 * (gw_exports_watch), and retries failed arena registrations
 * (gw_xports_atomic_check): both may wait on a lacunafs that hangs.
 */
static void *watch_thread(void *arg)
{
	struct timespec tick = { .tv_sec = 1 };

	(void)arg;
	while (!atomic_load(&gw.stopping)) {
		nanosleep(&tick, NULL);
		gw_exports_watch(&gw);
		gw_xports_atomic_check(&gw);
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

static int make_pools(const struct gw_config *cfg)
{
	size_t big = GW_CHUNK_SIZE;
	int err;

	/* a whole record must fit one chunk */
	if (cfg->max_record + 4096 > big)
		big = (cfg->max_record + 4096 + 65535) & ~(size_t)65535;
	err = chunk_pool_create(&gw.pool, big, GW_CHUNKS, CHUNK_POOL_MEMFD);
	if (err) {
		log_err("chunk_pool_create(%zu x %d): %s", big, GW_CHUNKS, strerror(-err));
		return err;
	}
	err = chunk_pool_create(&gw.small, GW_SMALL_CHUNK_SIZE, GW_SMALL_CHUNKS, 0);
	if (err) {
		log_err("chunk_pool_create(%d x %d): %s", GW_SMALL_CHUNK_SIZE, GW_SMALL_CHUNKS,
			strerror(-err));
		chunk_pool_destroy(gw.pool);
		return err;
	}
	return 0;
}

#ifdef HAVE_RDMA
static void *rdma_thread(void *arg)
{
	(void)arg;
	if (gw_rdma_ops.run(&gw)) {
		/* RDMA is gone; TCP serves on */
	}
	return NULL;
}
#endif

int main(int argc, char *argv[])
{
	struct gw_snap *boot = NULL; /* the configuration started with, while main reads it */
	bool loaded = false;
	struct gw_config *cfg;
	pthread_t sigthr, watchthr;
#ifdef HAVE_RDMA
	pthread_t rdmathr;
	bool rdma = false;
#endif
	bool foreground;
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

	umask(0); /* modes come from the clients, as sent */
	raise_nofile();
	gw_fd_budget_apply(&cfg->limits, true);
	gw_state_limits_log(&cfg->limits);
	gw.plain_write = getenv("LACUNA_TEST_PLAIN_WRITE") &&
			 !strcmp(getenv("LACUNA_TEST_PLAIN_WRITE"), "1");
	if (gw.plain_write)
		log_warn("ATOMIC WRITE DISABLED FOR TESTING (LACUNA_TEST_PLAIN_WRITE): "
			 "WRITEs use pwrite and can tear READ_PLUS");
	gw.boot_ns = now_ns();
	if (getrandom(gw.write_verf, sizeof(gw.write_verf), 0) != sizeof(gw.write_verf))
		memcpy(gw.write_verf, &gw.boot_ns, sizeof(gw.write_verf));

	err = gw_fh_key_load(cfg->state_dir, gw.fh_key);
	if (err) {
		log_err("lacunad: no file handle key (state_dir %s): not starting",
			cfg->state_dir ? cfg->state_dir : "none");
		goto out_cfg;
	}
	err = make_pools(cfg);
	if (err)
		goto out_cfg;
	err = gw_exports_load(&gw, cfg);
	if (err)
		goto out_pools;
	gw_drc_configure(cfg->drc_entries);
	loaded = true;
	boot = gw_snap_get(&gw); /* a reload may replace it: cfg stays valid for main */
	err = nfs4_state_init(&gw);
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

	err = gw_tcp_ops.start(&gw);
	if (err)
		goto out_state;
	if (!foreground && daemon(0, 0) < 0) {
		err = -errno;
		log_err("daemon: %s", strerror(errno));
		goto out_state;
	}
	err = pthread_create(&sigthr, NULL, signal_thread, NULL);
	if (err) {
		log_err("pthread_create: %s", strerror(err));
		err = -err;
		goto out_state;
	}
	pthread_detach(sigthr);
	err = pthread_create(&watchthr, NULL, watch_thread, NULL);
	if (err) {
		log_err("pthread_create: %s", strerror(err));
		err = -err;
		goto out_state;
	}
	pthread_detach(watchthr);
	err = gw_metrics_start(cfg);
	if (err)
		goto out_state;
#ifdef HAVE_RDMA
	err = gw_rdma_ops.start(&gw);
	if (err)
		goto out_state;
	if (gw_rdma_enabled()) {
		err = pthread_create(&rdmathr, NULL, rdma_thread, NULL);
		if (err) {
			log_err("pthread_create: %s", strerror(err));
			err = -err;
			goto out_state;
		}
		rdma = true;
	}
#else
	if (cfg->rdma)
		log_info("rdma: built without RPC-over-RDMA: serving TCP only");
#endif
	nfs4_state_serving(&gw);
	/* the worker pool says how many threads it started */
	log_info("lacunad %s serving NFSv4.0-4.2 (lease %us)", PACKAGE_VERSION, cfg->lease_time);
	gw_snap_put(boot);
	boot = NULL;
	err = gw_tcp_ops.run(&gw);
#ifdef HAVE_RDMA
	if (rdma) {
		atomic_store(&gw.stopping, true);
		gw_rdma_wake();
		pthread_join(rdmathr, NULL);
	}
#endif
	log_info("stopped");
out_state:
	gw_metrics_stop();
	nfs4_state_fini(&gw);
	gw_obj_fini();
	gw_drc_fini();
out_pools:
	chunk_pool_destroy(gw.small);
	chunk_pool_destroy(gw.pool);
out_cfg:
	gw_snap_put(boot);
	if (loaded)
		gw_exports_unload(&gw);
	else
		gw_config_free(cfg);
	return err ? 1 : 0;
}
