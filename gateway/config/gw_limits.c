// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * lacunad's resource limits as settings: one table names each limit,
 * its kind (a count, a size in bytes, a time in seconds), its range and
 * where it is kept in struct gw_limits, so that the configuration file
 * and the command line (--set KEY=VALUE) parse them the same way. What
 * each limit does is in gw_limits.h and docs/lacunad.conf.5.md.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "gw_limits.h"
#include "gw_parse.h"

enum gw_limit_kind { GW_LIM_COUNT, GW_LIM_SIZE, GW_LIM_SECONDS, GW_LIM_AUTO_COUNT };

static const struct {
	const char *key;
	enum gw_limit_kind kind;
	uint64_t min, max;
	size_t off;
} gw_limit_table[] = {
	{ "max_connections", GW_LIM_AUTO_COUNT, GW_CONNS_MIN, GW_CONNS_MAX,
	  offsetof(struct gw_limits, max_conns) },
	{ "max_connections_per_client", GW_LIM_COUNT, 1, GW_CONNS_MAX,
	  offsetof(struct gw_limits, max_conns_client) },
	{ "max_rdma_connections", GW_LIM_COUNT, 1, GW_CONNS_MAX,
	  offsetof(struct gw_limits, max_rdma_conns) },
	{ "max_rdma_connections_per_client", GW_LIM_COUNT, 1, GW_CONNS_MAX,
	  offsetof(struct gw_limits, max_rdma_conns_client) },
	{ "idle_timeout", GW_LIM_SECONDS, 0, GW_TIMEOUT_MAX,
	  offsetof(struct gw_limits, idle_timeout) },
	{ "record_timeout", GW_LIM_SECONDS, 0, GW_TIMEOUT_MAX,
	  offsetof(struct gw_limits, record_timeout) },
	{ "send_timeout", GW_LIM_SECONDS, 0, GW_TIMEOUT_MAX,
	  offsetof(struct gw_limits, send_timeout) },
	{ "stop_timeout", GW_LIM_SECONDS, 1, GW_TIMEOUT_MAX,
	  offsetof(struct gw_limits, stop_timeout) },
	{ "max_requests_per_connection", GW_LIM_COUNT, 1, GW_CONN_REQUESTS_MAX,
	  offsetof(struct gw_limits, conn_requests) },
	{ "max_reply_bytes_per_connection", GW_LIM_SIZE, GW_CONN_REPLY_BYTES_MIN,
	  GW_CONN_REPLY_BYTES_MAX, offsetof(struct gw_limits, conn_reply_bytes) },
	{ "max_records_per_client", GW_LIM_COUNT, 1, GW_CLIENT_RECORDS_MAX,
	  offsetof(struct gw_limits, client_records) },
	{ "max_requests_per_client", GW_LIM_COUNT, 1, GW_CLIENT_REQUESTS_MAX,
	  offsetof(struct gw_limits, client_requests) },
	{ "max_clients", GW_LIM_AUTO_COUNT, 1, GW_STATE_MAX,
	  offsetof(struct gw_limits, max_clients) },
	{ "max_clients_per_address", GW_LIM_AUTO_COUNT, 1, GW_STATE_MAX,
	  offsetof(struct gw_limits, max_clients_addr) },
	{ "max_unconfirmed_clients", GW_LIM_COUNT, 1, GW_STATE_MAX,
	  offsetof(struct gw_limits, max_unconfirmed) },
	{ "unconfirmed_timeout", GW_LIM_SECONDS, 1, GW_TIMEOUT_MAX,
	  offsetof(struct gw_limits, unconfirmed_timeout) },
	{ "max_sessions", GW_LIM_AUTO_COUNT, 1, GW_STATE_MAX,
	  offsetof(struct gw_limits, max_sessions) },
	{ "max_reply_cache", GW_LIM_SIZE, GW_REPLY_CACHE_MIN, GW_REPLY_CACHE_MAX,
	  offsetof(struct gw_limits, max_reply_cache) },
	{ "max_cached_files", GW_LIM_AUTO_COUNT, 0, GW_STATE_MAX,
	  offsetof(struct gw_limits, max_cached_files) },
	{ "max_opens", GW_LIM_AUTO_COUNT, 1, GW_STATE_MAX, offsetof(struct gw_limits, max_opens) },
	{ "max_opens_per_client", GW_LIM_COUNT, 1, GW_STATE_MAX,
	  offsetof(struct gw_limits, max_opens_client) },
	{ "max_lock_owners", GW_LIM_COUNT, 1, GW_STATE_MAX,
	  offsetof(struct gw_limits, max_lock_owners) },
	{ "max_lock_owners_per_client", GW_LIM_COUNT, 1, GW_STATE_MAX,
	  offsetof(struct gw_limits, max_lock_owners_client) },
	{ "max_locks", GW_LIM_COUNT, 1, GW_STATE_LOCKS_MAX, offsetof(struct gw_limits, max_locks) },
	{ "max_locks_per_client", GW_LIM_COUNT, 1, GW_STATE_LOCKS_MAX,
	  offsetof(struct gw_limits, max_locks_client) },
};
#define GW_NLIMITS (sizeof(gw_limit_table) / sizeof(gw_limit_table[0]))

void gw_limits_default(struct gw_limits *l)
{
	*l = (struct gw_limits){
		.max_conns = 0,
		.max_conns_client = GW_CONNS_CLIENT_DEFAULT,
		.max_rdma_conns = GW_RDMA_CONNS_DEFAULT,
		.max_rdma_conns_client = GW_RDMA_CONNS_CLIENT_DEFAULT,
		.idle_timeout = GW_IDLE_TIMEOUT_DEFAULT,
		.record_timeout = GW_RECORD_TIMEOUT_DEFAULT,
		.send_timeout = GW_SEND_TIMEOUT_DEFAULT,
		.stop_timeout = GW_STOP_TIMEOUT_DEFAULT,
		.conn_requests = GW_CONN_REQUESTS_DEFAULT,
		.conn_reply_bytes = GW_CONN_REPLY_BYTES_DEFAULT,
		.client_records = GW_CLIENT_RECORDS_DEFAULT,
		.client_requests = GW_CLIENT_REQUESTS_DEFAULT,
		.max_clients = 0,
		.max_clients_addr = 0,
		.max_unconfirmed = GW_UNCONFIRMED_DEFAULT,
		.unconfirmed_timeout = GW_UNCONFIRMED_TIMEOUT_DEFAULT,
		.max_sessions = 0,
		.max_reply_cache = GW_REPLY_CACHE_DEFAULT,
		.max_cached_files = 0,
		.max_opens = 0,
		.max_opens_client = GW_OPENS_CLIENT_DEFAULT,
		.max_lock_owners = GW_LOCK_OWNERS_DEFAULT,
		.max_lock_owners_client = GW_LOCK_OWNERS_CLIENT_DEFAULT,
		.max_locks = GW_LOCKS_DEFAULT,
		.max_locks_client = GW_LOCKS_CLIENT_DEFAULT,
	};
}

static int gw_limit_find(const char *key)
{
	size_t i;

	for (i = 0; i < GW_NLIMITS; i++)
		if (!strcmp(gw_limit_table[i].key, key))
			return (int)i;
	return -1;
}

_Static_assert(GW_NLIMITS == GW_LIMITS_N, "GW_LIMITS_N counts the table");

int gw_limits_index(const char *key)
{
	return gw_limit_find(key);
}

int gw_limits_set(struct gw_limits *l, const char *key, const char *value, char *why)
{
	int i = gw_limit_find(key);
	uint64_t n = 0;
	int rc;

	if (i < 0)
		return -ENOENT;
	switch (gw_limit_table[i].kind) {
	case GW_LIM_AUTO_COUNT:
		if (!strcmp(value, "auto")) {
			rc = 0;
			break;
		}
		/* fall through */
	case GW_LIM_COUNT:
	case GW_LIM_SECONDS:
		rc = gw_parse_uint(value, gw_limit_table[i].min, gw_limit_table[i].max, &n, why);
		break;
	case GW_LIM_SIZE:
	default:
		rc = gw_parse_size(value, gw_limit_table[i].min, gw_limit_table[i].max, &n, why);
		break;
	}
	if (rc)
		return rc;
	if (gw_limit_table[i].kind == GW_LIM_SIZE)
		*(uint32_t *)((char *)l + gw_limit_table[i].off) = (uint32_t)n;
	else
		*(unsigned int *)((char *)l + gw_limit_table[i].off) = (unsigned int)n;
	return 0;
}

static unsigned int gw_clamp(uint64_t n, unsigned int min, unsigned int max)
{
	return n < min ? min : n > max ? max : (unsigned int)n;
}

unsigned int gw_limits_max_conns(const struct gw_limits *l, uint64_t nofile)
{
	uint64_t n;

	if (l->max_conns)
		return l->max_conns;
	n = nofile > GW_FD_RESERVE ? (nofile - GW_FD_RESERVE) / GW_CONNS_AUTO_DIV : 0;
	return gw_clamp(n, GW_CONNS_MIN, GW_CONNS_MAX);
}

/* The fds left after the reserve and the connections (gw_limits.h) */
static uint64_t gw_fds_after_conns(const struct gw_limits *l, uint64_t nofile)
{
	uint64_t used = GW_FD_RESERVE + (uint64_t)gw_limits_max_conns(l, nofile);

	return nofile > used ? nofile - used : 0;
}

unsigned int gw_limits_max_cached_files(const struct gw_limits *l, uint64_t nofile)
{
	if (l->max_cached_files)
		return l->max_cached_files;
	return gw_clamp(gw_fds_after_conns(l, nofile) / GW_CACHED_FILES_AUTO_DIV,
			GW_CACHED_FILES_MIN, GW_CACHED_FILES_MAX);
}

unsigned int gw_limits_max_opens(const struct gw_limits *l, uint64_t nofile)
{
	uint64_t left = gw_fds_after_conns(l, nofile);
	uint64_t cache = (uint64_t)gw_limits_max_cached_files(l, nofile) * GW_CACHED_FILE_FDS;

	if (l->max_opens)
		return l->max_opens;
	return gw_clamp(left > cache ? (left - cache) / GW_OPEN_FDS : 0, GW_OPENS_MIN,
			GW_STATE_MAX);
}

unsigned int gw_limits_max_clients(const struct gw_limits *l, uint64_t ram)
{
	if (l->max_clients)
		return l->max_clients;
	return gw_clamp(ram / (1024 * 1024 * 1024) * GW_CLIENTS_PER_GIB, GW_CLIENTS_AUTO_MIN,
			GW_STATE_MAX);
}

unsigned int gw_limits_max_clients_addr(const struct gw_limits *l, uint64_t ram)
{
	if (l->max_clients_addr)
		return l->max_clients_addr;
	return gw_clamp(gw_limits_max_clients(l, ram) / GW_CLIENTS_ADDR_AUTO_DIV, 1, GW_STATE_MAX);
}

unsigned int gw_limits_max_sessions(const struct gw_limits *l, uint64_t ram)
{
	if (l->max_sessions)
		return l->max_sessions;
	return gw_limits_max_clients(l, ram);
}

uint64_t gw_limits_ram(void)
{
	long pages = sysconf(_SC_PHYS_PAGES);
	long size = sysconf(_SC_PAGESIZE);

	if (pages <= 0 || size <= 0)
		return 1024 * 1024 * 1024;
	return (uint64_t)pages * (uint64_t)size;
}

uint64_t gw_limits_nofile(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl))
		return 1024;
	return rl.rlim_cur == RLIM_INFINITY ? GW_CONNS_MAX : rl.rlim_cur;
}
