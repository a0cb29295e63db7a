// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * lacunad's resource limits in force: what the limits set to auto come
 * to on this machine (its RLIMIT_NOFILE, its RAM). The limits are
 * settings like the others, declared in the settings table
 * (config/gw_settings.c); what each one does is in gw_limits.h and
 * docs/lacunad.conf.5.md.
 */
#include <sys/resource.h>
#include <unistd.h>

#include "gw_limits.h"

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
