// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The table of lacunad's settings (gw_settings.h) and what follows from
 * it: setting a value as the configuration file and the command line
 * write it, the defaults, what a reload keeps, the --help lines of the
 * flags and the manual's SETTINGS TABLE.
 *
 * The rows are in the order of docs/lacunad.conf.5.md: the settings of
 * SETTINGS, then the limits of LIMITS. A new setting is a row here, a
 * field of struct gw_config and its description in the manual; the
 * manual's table is then regenerated with lacunad --list-settings
 * (tests/integ/settings_doc.sh fails until it is).
 */
#include <errno.h>
#include <netdb.h>
#include <stdlib.h>
#include <string.h>

#include "gw_config.h"
#include "gw_parse.h"
#include "gw_settings.h"

/*
 * The offset of field f of struct gw_config, which must be of type T, so
 * that a row's type and the field it sets cannot disagree.
 */
#define CFG_IS(f, T) __builtin_types_compatible_p(__typeof__(((struct gw_config *)0)->f), T)
#define CFG(f, T) (offsetof(struct gw_config, f) + 0 * sizeof(char[CFG_IS(f, T) ? 1 : -1]))

/* One row to a setting, its fields packed as they come. */
/* clang-format off */

/* A limit of LIMITS, also given as --set KEY=VALUE: a count (or seconds), or bytes. */
#define LIMIT(n, fl, lo, hi, f, d, v, h)                                                        \
	{ .name = n, .type = GW_ST_UINT, .flags = GW_SF_SET | (fl), .reload = GW_RELOAD_APPLY, \
	  .min = lo, .max = hi, .off = CFG(limits.f, unsigned int), .def = d, .value = v,       \
	  .help = h }
#define LIMIT_BYTES(n, lo, hi, f, d, h)                                                         \
	{ .name = n, .type = GW_ST_SIZE, .flags = GW_SF_SET, .reload = GW_RELOAD_APPLY,         \
	  .min = lo, .max = hi, .off = CFG(limits.f, uint32_t), .def = d, .value = "BYTES",     \
	  .help = h }

const struct gw_setting gw_settings[] = {
	/* SETTINGS */
	{ .name = "listen", .type = GW_ST_LISTEN, .reload = GW_RELOAD_RESTART,
	  .port = GW_PORT_DEFAULT, .off = CFG(listen, struct sockaddr_storage),
	  .off_len = CFG(listen_len, socklen_t),
	  .off_has_port = CFG(listen_has_port, bool), .def = "0.0.0.0:2049", .value = "ADDR[:PORT]",
	  .help = "the address and TCP port lacunad listens on, IPv6 as [ADDR]:PORT, "
		  "127.0.0.1:2049 with --export",
	  .restart_note = "listen (and port) change at the next restart", .flag = "listen",
	  .flag_arg = "ADDR[:PORT]" },
	{ .name = "port", .type = GW_ST_PORT, .flags = GW_SF_FOLDED, .reload = GW_RELOAD_RESTART,
	  .off = CFG(port, uint16_t), .def = "2049", .value = "N",
	  .help = "the TCP port of a listen address written without one" },
	{ .name = "rdma", .type = GW_ST_BOOL, .reload = GW_RELOAD_RESTART, .off = CFG(rdma, bool),
	  .def = "off", .value = "BOOL", .help = "also serve RPC-over-RDMA",
	  .restart_note = "rdma and rdma_port change at the next restart", .flag = "rdma" },
	{ .name = "rdma_port", .type = GW_ST_PORT, .reload = GW_RELOAD_RESTART,
	  .off = CFG(rdma_port, uint16_t), .def = "20049", .value = "N", .help = "the RDMA port",
	  .restart_note = "rdma and rdma_port change at the next restart", .flag = "rdma",
	  .flag_arg = "PORT" },
	{ .name = "threads", .type = GW_ST_UINT, .flags = GW_SF_AUTO, .reload = GW_RELOAD_RESTART,
	  .min = 1, .max = GW_THREADS_MAX, .off = CFG(threads, unsigned int), .def = "auto",
	  .value = "N | auto",
	  .help = "worker threads, auto: one per online CPU", .flag = "threads", .flag_arg = "N" },
	{ .name = "lease_time", .type = GW_ST_UINT, .reload = GW_RELOAD_APPLY, .min = GW_LEASE_MIN,
	  .max = GW_LEASE_MAX, .off = CFG(lease_time, unsigned int), .def = "90", .value = "SECONDS",
	  .help = "the NFSv4 lease time", .flag = "lease-time", .flag_arg = "SECONDS" },
	{ .name = "grace", .type = GW_ST_BOOL, .reload = GW_RELOAD_RESTART, .off = CFG(grace, bool),
	  .def = "on", .value = "BOOL",
	  .help = "a grace period after a start, for the recorded clients to reclaim their state",
	  .restart_note = "grace applies at the next start", .flag = "grace",
	  .flag_arg = "on|off" },
	{ .name = "state_dir", .type = GW_ST_PATH, .reload = GW_RELOAD_RESTART,
	  .off = CFG(state_dir, char *), .def = GW_STATE_DIR_DEFAULT, .value = "PATH",
	  .help = "where the clients holding state are recorded for their reclaims after a "
		  "restart, " GW_STATE_DIR_DEFAULT "/ADDR-PORT with --export",
	  .flag = "state-dir", .flag_arg = "DIR" },
	{ .name = "legacy_handles", .type = GW_ST_CHOICE, .reload = GW_RELOAD_APPLY,
	  .choice = { "refuse", "accept" }, .off = CFG(legacy_handles, bool), .def = "refuse",
	  .value = "accept | refuse",
	  .help = "version 1 (untagged) file handles of an older lacunad, accepted while its "
		  "clients remount",
	  .flag = "legacy-handles", .flag_arg = "accept|refuse" },
	{ .name = "max_record", .type = GW_ST_SIZE, .reload = GW_RELOAD_RESTART,
	  .min = GW_RECORD_MIN, .max = GW_RECORD_MAX, .off = CFG(max_record, uint32_t), .def = "1056768",
	  .value = "BYTES", .help = "the largest RPC record lacunad accepts or builds" },
	{ .name = "copy_sync_max", .type = GW_ST_SIZE64, .reload = GW_RELOAD_APPLY,
	  .min = GW_COPY_SYNC_MIN, .max = GW_COPY_SYNC_MAX, .off = CFG(copy_sync_max, uint64_t),
	  .def = "64M", .value = "BYTES", .help = "the most data one COPY writes before it replies" },
	{ .name = "log_level", .type = GW_ST_LOG_LEVEL, .reload = GW_RELOAD_APPLY,
	  .off = CFG(log_level, int), .def = "info", .value = "LEVEL",
	  .help = "the least important messages logged: error, warn, notice, info or debug",
	  .flag = "log-level", .flag_arg = "LEVEL" },
	{ .name = "stats_file", .type = GW_ST_PATH, .flags = GW_SF_NONE, .reload = GW_RELOAD_APPLY,
	  .off = CFG(stats_file, char *), .def = "none", .value = "PATH | none",
	  .help = "a file rewritten with the counters once a second, STATE_DIR/stats with "
		  "--export",
	  .flag = "stats-file", .flag_arg = "PATH|none" },
	{ .name = "drc_entries", .type = GW_ST_UINT, .reload = GW_RELOAD_APPLY, .min = 0,
	  .max = GW_DRC_ENTRIES_MAX, .off = CFG(drc_entries, unsigned int), .def = "1024", .value = "N",
	  .help = "replies kept by the NFSv4.0 duplicate request cache, 0: no cache" },
	{ .name = "metrics_listen", .type = GW_ST_LISTEN, .flags = GW_SF_NONE,
	  .reload = GW_RELOAD_RESTART, .port = GW_METRICS_PORT_DEFAULT,
	  .off = CFG(metrics, struct sockaddr_storage),
	  .off_len = CFG(metrics_len, socklen_t), .def = "none", .value = "ADDR[:PORT] | none",
	  .help = "serve Prometheus metrics at http://ADDR:PORT/metrics, port 9449 unless given",
	  .restart_note = "metrics_listen changes at the next restart", .flag = "metrics-listen",
	  .flag_arg = "ADDR[:PORT]" },
	{ .name = "tls_cert", .type = GW_ST_PATH, .flags = GW_SF_NONE, .reload = GW_RELOAD_APPLY,
	  .off = CFG(tls_cert, char *), .def = "none", .value = "PATH | none",
	  .help = "the server's X.509 certificate (PEM, chain after it) for RPC-with-TLS; "
		  "none: no TLS",
	  .flag = "tls-cert", .flag_arg = "FILE" },
	{ .name = "tls_key", .type = GW_ST_PATH, .flags = GW_SF_NONE, .reload = GW_RELOAD_APPLY,
	  .off = CFG(tls_key, char *), .def = "none", .value = "PATH | none",
	  .help = "the private key of tls_cert (PEM)", .flag = "tls-key", .flag_arg = "FILE" },
	{ .name = "tls_ca", .type = GW_ST_PATH, .flags = GW_SF_NONE, .reload = GW_RELOAD_APPLY,
	  .off = CFG(tls_ca, char *), .def = "none", .value = "PATH | none",
	  .help = "the CA certificates (PEM) client certificates are verified against; "
		  "none: no mutual TLS",
	  .flag = "tls-ca", .flag_arg = "FILE" },
	{ .name = "tls_cipher_preference", .type = GW_ST_CHOICE, .flags = GW_SF_SET,
	  .reload = GW_RELOAD_APPLY,
	  .choice = { "client", "aes128" }, .off = CFG(tls_prefer_aes128, bool), .def = "client",
	  .value = "client | aes128",
	  .help = "the TLS 1.3 cipher suite: the client's choice (Linux asks for AES-256-GCM), or "
		  "TLS_AES_128_GCM_SHA256 whenever the client offers it (less CPU per byte)" },

	/* LIMITS */
	LIMIT("max_connections", GW_SF_AUTO, GW_CONNS_MIN, GW_CONNS_MAX, max_conns,
	      "auto", "N | auto", "TCP connections kept open, auto: from RLIMIT_NOFILE"),
	LIMIT("max_connections_per_client", 0, 1, GW_CONNS_MAX, max_conns_client, "256",
	      "N", "TCP connections kept open per client address"),
	LIMIT("max_rdma_connections", 0, 1, GW_CONNS_MAX, max_rdma_conns, "64", "N",
	      "RPC-over-RDMA connections kept open"),
	LIMIT("max_rdma_connections_per_client", 0, 1, GW_CONNS_MAX,
	      max_rdma_conns_client, "16", "N",
	      "RPC-over-RDMA connections kept open per client address"),
	LIMIT("idle_timeout", 0, 0, GW_TIMEOUT_MAX, idle_timeout, "360", "SECONDS",
	      "a connection idle that long is closed, 0: never"),
	LIMIT("record_timeout", 0, 0, GW_TIMEOUT_MAX, record_timeout, "30", "SECONDS",
	      "a connection whose record takes longer to arrive is closed, 0: never"),
	LIMIT("send_timeout", 0, 0, GW_TIMEOUT_MAX, send_timeout, "60", "SECONDS",
	      "a connection whose replies do not move for that long is closed, 0: never"),
	LIMIT("stop_timeout", 0, 1, GW_TIMEOUT_MAX, stop_timeout, "5", "SECONDS",
	      "how long replies may take to go out at a stop"),
	LIMIT("max_requests_per_connection", 0, 1, GW_CONN_REQUESTS_MAX,
	      conn_requests, "128", "N", "requests of one connection in progress or unsent"),
	LIMIT_BYTES("max_reply_bytes_per_connection", GW_CONN_REPLY_BYTES_MIN,
		    GW_CONN_REPLY_BYTES_MAX, conn_reply_bytes, "16M",
		    "bytes of replies waiting to be sent on one connection"),
	LIMIT("max_requests_per_client", 0, 1, GW_CLIENT_REQUESTS_MAX, client_requests,
	      "128", "N", "requests of one client address in progress or unsent"),
	LIMIT("max_records_per_client", 0, 1, GW_CLIENT_RECORDS_MAX, client_records,
	      "16", "N", "large records being received at once from one client address"),
	LIMIT("max_clients", GW_SF_AUTO, 1, GW_STATE_MAX, max_clients, "auto",
	      "N | auto", "NFSv4 client records, auto: 1024 per GiB of RAM, at least 4096"),
	LIMIT("max_clients_per_address", GW_SF_AUTO, 1, GW_STATE_MAX,
	      max_clients_addr, "auto", "N | auto",
	      "client records made from one address, auto: half of max_clients"),
	LIMIT("max_unconfirmed_clients", 0, 1, GW_STATE_MAX, max_unconfirmed, "256",
	      "N", "client records not confirmed yet"),
	LIMIT("unconfirmed_timeout", 0, 1, GW_TIMEOUT_MAX, unconfirmed_timeout, "20",
	      "SECONDS", "how long a client record that can do nothing yet is kept"),
	LIMIT("max_sessions", GW_SF_AUTO, 1, GW_STATE_MAX, max_sessions, "auto",
	      "N | auto", "NFSv4.1 and 4.2 sessions, auto: max_clients"),
	LIMIT_BYTES("max_reply_cache", GW_REPLY_CACHE_MIN, GW_REPLY_CACHE_MAX, max_reply_cache,
		    "64M", "memory for the reply caches of all sessions' slots"),
	LIMIT("max_cached_files", GW_SF_AUTO, 0, GW_STATE_MAX, max_cached_files,
	      "auto", "N | auto", "file objects kept open, auto: from RLIMIT_NOFILE"),
	LIMIT("max_opens", GW_SF_AUTO, 1, GW_STATE_MAX, max_opens, "auto", "N | auto",
	      "open stateids of all clients, auto: from RLIMIT_NOFILE"),
	LIMIT("max_opens_per_client", 0, 1, GW_STATE_MAX, max_opens_client, "16384",
	      "N", "open stateids of one client"),
	LIMIT("max_lock_owners", 0, 1, GW_STATE_MAX, max_lock_owners, "65536", "N",
	      "lock-owners of all clients"),
	LIMIT("max_lock_owners_per_client", 0, 1, GW_STATE_MAX, max_lock_owners_client,
	      "4096", "N", "lock-owners of one client"),
	LIMIT("max_locks", 0, 1, GW_STATE_LOCKS_MAX, max_locks, "1000000", "N",
	      "byte-range locks of all clients"),
	LIMIT("max_locks_per_client", 0, 1, GW_STATE_LOCKS_MAX, max_locks_client,
	      "16384", "N", "byte-range locks of one client"),
	{ .name = "tls_handshake_timeout", .type = GW_ST_UINT, .flags = GW_SF_SET,
	  .reload = GW_RELOAD_APPLY, .min = 1, .max = GW_TLS_HANDSHAKE_TIMEOUT_MAX,
	  .off = CFG(tls_handshake_timeout, unsigned int), .def = "10", .value = "SECONDS",
	  .help = "a connection whose TLS handshake takes longer is closed" },
	{ .name = "tls_handshakes_max", .type = GW_ST_UINT, .flags = GW_SF_SET,
	  .reload = GW_RELOAD_APPLY, .min = 1, .max = GW_TLS_HANDSHAKES_MAX,
	  .off = CFG(tls_handshakes_max, unsigned int), .def = "64", .value = "N",
	  .help = "TLS handshakes in progress at once; a connection past it is closed" },
};
/* clang-format on */
const size_t gw_settings_n = sizeof(gw_settings) / sizeof(gw_settings[0]);

_Static_assert(sizeof(gw_settings) / sizeof(gw_settings[0]) <= GW_SETTINGS_MAX,
	       "struct gw_cli has room for every setting");

int gw_setting_find(const char *name, size_t len)
{
	size_t i;

	for (i = 0; i < gw_settings_n; i++) {
		if (strlen(gw_settings[i].name) == len && !strncmp(name, gw_settings[i].name, len))
			return (int)i;
	}
	return -1;
}

/* ---------------------------------------------------------------- values */

#define AT(cfg, off, type) ((type *)((char *)(cfg) + (off)))

static int set_path(const struct gw_setting *s, struct gw_config *cfg, const char *v, char *why)
{
	char **p = AT(cfg, s->off, char *);
	char *dup = NULL;

	if (!((s->flags & GW_SF_NONE) && !strcmp(v, "none"))) {
		if (v[0] != '/') {
			snprintf(why, GW_WHY_MAX, "'%.80s' is not an absolute path", v);
			return -EINVAL;
		}
		dup = strdup(v);
		if (!dup)
			return -ENOMEM;
	}
	free(*p);
	*p = dup;
	return 0;
}

static int set_listen(const struct gw_setting *s, struct gw_config *cfg, const char *v, char *why)
{
	struct sockaddr_storage *ss = AT(cfg, s->off, struct sockaddr_storage);
	socklen_t *len = AT(cfg, s->off_len, socklen_t);
	bool has_port;
	int rc;

	if ((s->flags & GW_SF_NONE) && !strcmp(v, "none")) {
		memset(ss, 0, sizeof(*ss));
		*len = 0;
		return 0;
	}
	rc = gw_parse_listen(v, s->port, ss, len, &has_port, why);
	if (rc == 0 && s->off_has_port)
		*AT(cfg, s->off_has_port, bool) = has_port;
	return rc;
}

int gw_setting_set(struct gw_config *cfg, size_t i, const char *v, char *why)
{
	const struct gw_setting *s = &gw_settings[i];
	uint64_t n = 0;
	bool b;
	int rc;

	switch (s->type) {
	case GW_ST_BOOL:
		rc = gw_parse_bool(v, &b, why);
		if (rc == 0)
			*AT(cfg, s->off, bool) = b;
		return rc;
	case GW_ST_CHOICE:
		if (strcmp(v, s->choice[0]) && strcmp(v, s->choice[1])) {
			snprintf(why, GW_WHY_MAX, "'%.80s' is neither %s nor %s", v, s->choice[1],
				 s->choice[0]);
			return -EINVAL;
		}
		*AT(cfg, s->off, bool) = !strcmp(v, s->choice[1]);
		return 0;
	case GW_ST_UINT:
		rc = (s->flags & GW_SF_AUTO) && !strcmp(v, "auto")
			     ? 0
			     : gw_parse_uint(v, s->min, s->max, &n, why);
		if (rc == 0)
			*AT(cfg, s->off, unsigned int) = (unsigned int)n;
		return rc;
	case GW_ST_PORT:
		rc = gw_parse_uint(v, 1, 65535, &n, why);
		if (rc == 0)
			*AT(cfg, s->off, uint16_t) = (uint16_t)n;
		return rc;
	case GW_ST_SIZE:
	case GW_ST_SIZE64:
		rc = gw_parse_size(v, s->min, s->max, &n, why);
		if (rc == 0 && s->type == GW_ST_SIZE)
			*AT(cfg, s->off, uint32_t) = (uint32_t)n;
		else if (rc == 0)
			*AT(cfg, s->off, uint64_t) = n;
		return rc;
	case GW_ST_PATH:
		return set_path(s, cfg, v, why);
	case GW_ST_LISTEN:
		return set_listen(s, cfg, v, why);
	case GW_ST_LOG_LEVEL:
		return gw_parse_log_level(v, AT(cfg, s->off, int), why);
	}
	return -EINVAL;
}

void gw_settings_free(struct gw_config *cfg)
{
	size_t i;

	for (i = 0; i < gw_settings_n; i++) {
		if (gw_settings[i].type == GW_ST_PATH) {
			char **p = AT(cfg, gw_settings[i].off, char *);

			free(*p);
			*p = NULL;
		}
	}
}

int gw_setting_check(size_t i, const char *value, char *why)
{
	struct gw_config tmp;
	int rc;

	memset(&tmp, 0, sizeof(tmp));
	rc = gw_setting_set(&tmp, i, value, why);
	gw_settings_free(&tmp);
	return rc;
}

int gw_settings_default(struct gw_config *cfg)
{
	char why[GW_WHY_MAX];
	size_t i;
	int rc;

	for (i = 0; i < gw_settings_n; i++) {
		rc = gw_setting_set(cfg, i, gw_settings[i].def, why);
		if (rc)
			return rc == -ENOMEM ? rc : -EINVAL; /* a default the table refuses */
		/* a default is not written */
		if (gw_settings[i].off_has_port)
			*AT(cfg, gw_settings[i].off_has_port, bool) = false;
	}
	return 0;
}

/* ---------------------------------------------------------------- reload */

static size_t value_size(enum gw_setting_type t)
{
	switch (t) {
	case GW_ST_BOOL:
	case GW_ST_CHOICE:
		return sizeof(bool);
	case GW_ST_PORT:
		return sizeof(uint16_t);
	case GW_ST_SIZE:
		return sizeof(uint32_t);
	case GW_ST_SIZE64:
		return sizeof(uint64_t);
	case GW_ST_LOG_LEVEL:
		return sizeof(int);
	case GW_ST_UINT:
	case GW_ST_PATH:
	case GW_ST_LISTEN:
		break;
	}
	return sizeof(unsigned int);
}

static bool same_value(const struct gw_setting *s, const struct gw_config *a,
		       const struct gw_config *b)
{
	const char *pa = (const char *)a + s->off, *pb = (const char *)b + s->off;
	const char *x, *y;
	socklen_t la, lb;

	switch (s->type) {
	case GW_ST_PATH:
		x = *(char *const *)pa;
		y = *(char *const *)pb;
		return x && y ? !strcmp(x, y) : x == y;
	case GW_ST_LISTEN:
		la = *AT(a, s->off_len, const socklen_t);
		lb = *AT(b, s->off_len, const socklen_t);
		return la == lb && !memcmp(pa, pb, lb);
	default:
		return !memcmp(pa, pb, value_size(s->type));
	}
}

/* Give @cfg the value of @old; a path stays as it is when it cannot be copied. */
static void copy_value(const struct gw_setting *s, struct gw_config *cfg,
		       const struct gw_config *old)
{
	const char *from = (const char *)old + s->off;
	char *to = (char *)cfg + s->off, *dup;

	switch (s->type) {
	case GW_ST_PATH:
		from = *(char *const *)from;
		dup = from ? strdup(from) : NULL;
		if (dup || !from) {
			free(*(char **)to);
			*(char **)to = dup;
		}
		break;
	case GW_ST_LISTEN:
		memcpy(to, from, sizeof(struct sockaddr_storage));
		*AT(cfg, s->off_len, socklen_t) = *AT(old, s->off_len, const socklen_t);
		break;
	default:
		memcpy(to, from, value_size(s->type));
		break;
	}
}

static void format_value(const struct gw_setting *s, const struct gw_config *cfg, char *buf,
			 size_t len)
{
	const void *p = (const char *)cfg + s->off;
	char serv[NI_MAXSERV];

	switch (s->type) {
	case GW_ST_BOOL:
		snprintf(buf, len, "%s", *(const bool *)p ? "on" : "off");
		break;
	case GW_ST_CHOICE:
		snprintf(buf, len, "%s", s->choice[*(const bool *)p]);
		break;
	case GW_ST_PORT:
		snprintf(buf, len, "%u", *(const uint16_t *)p);
		break;
	case GW_ST_SIZE:
		snprintf(buf, len, "%u", *(const uint32_t *)p);
		break;
	case GW_ST_SIZE64:
		snprintf(buf, len, "%llu", (unsigned long long)*(const uint64_t *)p);
		break;
	case GW_ST_PATH:
		snprintf(buf, len, "%s", *(char *const *)p ? *(char *const *)p : "(none)");
		break;
	case GW_ST_LISTEN:
		if (getnameinfo(p, *AT(cfg, s->off_len, const socklen_t), buf, (socklen_t)len, serv,
				sizeof(serv), NI_NUMERICHOST | NI_NUMERICSERV))
			snprintf(buf, len, "(none)");
		break;
	case GW_ST_LOG_LEVEL:
		snprintf(buf, len, "%d", *(const int *)p);
		break;
	case GW_ST_UINT:
		snprintf(buf, len, "%u", *(const unsigned int *)p);
		break;
	}
}

void gw_config_keep_start(struct gw_config *cfg, const struct gw_config *old, gw_err_fn *warn,
			  void *arg)
{
	const char *said = NULL;
	char msg[GW_WHY_MAX + 128], v[GW_WHY_MAX];
	size_t i;

	for (i = 0; i < gw_settings_n; i++) {
		const struct gw_setting *s = &gw_settings[i];

		if (s->reload != GW_RELOAD_RESTART || (s->flags & GW_SF_FOLDED))
			continue;
		if (!same_value(s, cfg, old)) {
			if (!s->restart_note) {
				format_value(s, old, v, sizeof(v));
				snprintf(msg, sizeof(msg),
					 "reload: %s stays %s until lacunad is restarted", s->name,
					 v);
				warn(arg, msg);
			} else if (!said || strcmp(said, s->restart_note)) {
				snprintf(msg, sizeof(msg), "reload: %s", s->restart_note);
				warn(arg, msg);
				said = s->restart_note;
			}
			copy_value(s, cfg, old);
		}
	}
}

/* A byte count as the manual writes it: 64K, 16M, 1024G. */
static void format_size(uint64_t v, char *buf, size_t len)
{
	static const char suffix[] = "GMK";
	unsigned int shift;

	for (shift = 30; shift >= 10; shift -= 10) {
		if (v >= (1ull << shift) && !(v & ((1ull << shift) - 1))) {
			snprintf(buf, len, "%llu%c", (unsigned long long)(v >> shift),
				 suffix[(30 - shift) / 10]);
			return;
		}
	}
	snprintf(buf, len, "%llu", (unsigned long long)v);
}

/* The range of a number or size, "10 to 3600" ("" for other values). */
static void format_range(const struct gw_setting *s, char *buf, size_t len)
{
	char lo[24], hi[24];

	buf[0] = '\0';
	if (s->type == GW_ST_PORT) {
		snprintf(buf, len, "1 to 65535");
	} else if (s->type == GW_ST_UINT) {
		snprintf(buf, len, "%llu to %llu", (unsigned long long)s->min,
			 (unsigned long long)s->max);
	} else if (s->type == GW_ST_SIZE || s->type == GW_ST_SIZE64) {
		format_size(s->min, lo, sizeof(lo));
		format_size(s->max, hi, sizeof(hi));
		snprintf(buf, len, "%s to %s", lo, hi);
	}
}

/* ---------------------------------------------------------------- --help */

#define USAGE_COL 28
#define USAGE_WIDTH 79

void gw_usage_line(FILE *out, const char *opt, const char *help)
{
	int col = fprintf(out, "  %s", opt);
	const char *w = help;

	if (col > USAGE_COL - 2) {
		fputs("  ", out);
		col += 2;
	} else {
		col += fprintf(out, "%*s", USAGE_COL - col, "");
	}
	while (*w) {
		size_t n = strcspn(w, " ");

		if (col + (int)n > USAGE_WIDTH && col > USAGE_COL) {
			col = fprintf(out, "\n%*s", USAGE_COL, "") - 1;
		} else if (w != help) {
			fputc(' ', out);
			col++;
		}
		col += fprintf(out, "%.*s", (int)n, w);
		w += n;
		w += strspn(w, " ");
	}
	fputc('\n', out);
}

/* Whether the flag of row @i comes first, at row @i. */
static bool first_of_flag(size_t i)
{
	size_t j;

	for (j = 0; j < i; j++)
		if (gw_settings[j].flag && !strcmp(gw_settings[j].flag, gw_settings[i].flag))
			return false;
	return true;
}

void gw_settings_usage(FILE *out)
{
	char opt[128], help[1024], pre[8], range[64];
	size_t i, j;

	for (i = 0; i < gw_settings_n; i++) {
		const struct gw_setting *s = &gw_settings[i];
		const char *arg = NULL;
		bool bare = false;
		size_t h = 0;

		if (!s->flag || !first_of_flag(i))
			continue;
		help[0] = '\0';
		for (j = i; j < gw_settings_n; j++) {
			const struct gw_setting *t = &gw_settings[j];

			if (!t->flag || strcmp(t->flag, s->flag))
				continue;
			if (t->flag_arg)
				arg = t->flag_arg;
			else
				bare = true;
			format_range(t, range, sizeof(range));
			h += (size_t)snprintf(help + h, sizeof(help) - h,
					      "%s%s%s%s (%s%sdefault %s)", h ? "; " : "",
					      t->flag_arg && j != i ? t->flag_arg : "",
					      t->flag_arg && j != i ? ": " : "", t->help, range,
					      range[0] ? ", " : "", t->def);
			if (h >= sizeof(help))
				h = sizeof(help) - 1;
		}
		if (s->short_flag)
			snprintf(pre, sizeof(pre), "-%c, ", s->short_flag);
		snprintf(opt, sizeof(opt), "%s--%s%s%s%s", s->short_flag ? pre : "    ", s->flag,
			 arg ? (bare ? "[=" : " ") : "", arg ? arg : "", arg && bare ? "]" : "");
		gw_usage_line(out, opt, help);
	}
}

void gw_settings_usage_set(FILE *out)
{
	int col = 0;
	size_t i;

	for (i = 0; i < gw_settings_n; i++) {
		const char *n = gw_settings[i].name;

		if (!(gw_settings[i].flags & GW_SF_SET))
			continue;
		if (col && col + 2 + (int)strlen(n) > USAGE_WIDTH) {
			fputs(",\n", out);
			col = 0;
		} else if (col) {
			col += fprintf(out, ", ");
		}
		if (!col)
			col = fprintf(out, "  ");
		col += fprintf(out, "%s", n);
	}
	if (col)
		fputc('\n', out);
}

/* ---------------------------------------------------------------- the manual */

/* Markdown table text: '|' escaped. */
static void cell(FILE *out, const char *pre, const char *text, const char *post)
{
	fputs(pre, out);
	for (; *text; text++) {
		if (*text == '|')
			fputc('\\', out);
		fputc(*text, out);
	}
	fputs(post, out);
}

void gw_settings_write_man(FILE *out)
{
	char range[64], flag[128];
	size_t i;

	fputs("| Setting | Values | Default | Range | Reload | Command line | Description |\n"
	      "|---|---|---|---|---|---|---|\n",
	      out);
	for (i = 0; i < gw_settings_n; i++) {
		const struct gw_setting *s = &gw_settings[i];

		cell(out, "| `", s->name, "` ");
		cell(out, "| `", s->value, "` ");
		cell(out, "| `", s->def, "` ");
		format_range(s, range, sizeof(range));
		fprintf(out, "| %s ", range);
		fprintf(out, "| %s ", s->reload == GW_RELOAD_APPLY ? "reload" : "restart");
		if (s->flags & GW_SF_SET)
			snprintf(flag, sizeof(flag), "`--set`");
		else if (s->flag && s->flag_arg && !first_of_flag(i))
			snprintf(flag, sizeof(flag), "`--%s=%s`", s->flag, s->flag_arg);
		else if (s->flag)
			snprintf(flag, sizeof(flag), "`--%s%s%s`", s->flag, s->flag_arg ? " " : "",
				 s->flag_arg ? s->flag_arg : "");
		else
			flag[0] = '\0';
		cell(out, "| ", flag, " ");
		cell(out, "| ", s->help, " |\n");
	}
}
