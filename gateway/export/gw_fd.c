// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * File descriptors as a budget: the share of RLIMIT_NOFILE the file
 * object cache may keep open (max_cached_files, gw_limits.h), and what
 * the NFS path does when an open fails all the same for want of fds
 * (EMFILE for the process, ENFILE for the system).
 *
 * Every call of the NFS path that makes an fd runs through GW_FD_RETRY
 * (gw.h): on EMFILE or ENFILE, gw_fd_shed() closes every cached object
 * nobody holds (gw_obj_shed()) and the call is tried once more. If that
 * fails for want of fds as well, gw_fd_exhausted() counts it
 * (fd_exhausted) and logs it at most once a minute, and the op answers
 * NFS4ERR_DELAY (nfs4_errno(): EMFILE and ENFILE), so the client tries
 * again later instead of failing: what holds the fds (open state,
 * connections) is the operator's to bound with max_opens and
 * max_connections.
 */
#include <errno.h>
#include <time.h>

#include "gw.h"
#include "log.h"

#define GW_FD_LOG_SEC 60

static bool gw_fd_short(int err)
{
	return err == EMFILE || err == ENFILE;
}

static atomic_ullong fd_exhausted;

unsigned long long gw_fd_exhausted_count(void)
{
	return atomic_load_explicit(&fd_exhausted, memory_order_relaxed);
}

bool gw_fd_shed(int err)
{
	if (!gw_fd_short(err))
		return false;
	gw_obj_shed();
	errno = err;
	return true;
}

void gw_fd_exhausted(int err)
{
	static _Atomic long logged = -GW_FD_LOG_SEC;
	long now = (long)time(NULL);

	if (!gw_fd_short(err))
		return;
	gw_limit_hit(&fd_exhausted, "fd_exhausted", 0);
	if (now - atomic_load(&logged) >= GW_FD_LOG_SEC) {
		atomic_store(&logged, now);
		log_warn("nfs: out of file descriptors (%s, RLIMIT_NOFILE %llu, %zu cached files): "
			 "answering NFS4ERR_DELAY (see max_cached_files, max_opens; logged once a "
			 "minute)",
			 err == EMFILE ? "EMFILE" : "ENFILE",
			 (unsigned long long)gw_limits_nofile(), gw_obj_cached());
	}
	errno = err;
}

void gw_fd_budget_apply(const struct gw_limits *l, bool log)
{
	uint64_t nofile = gw_limits_nofile();
	unsigned int conns = gw_limits_max_conns(l, nofile);
	unsigned int files = gw_limits_max_cached_files(l, nofile);
	unsigned int opens = gw_limits_max_opens(l, nofile);
	uint64_t total = GW_FD_RESERVE + (uint64_t)conns + (uint64_t)files * GW_CACHED_FILE_FDS +
			 (uint64_t)opens * GW_OPEN_FDS;

	gw_obj_set_max(files);
	if (log)
		log_info("fd budget: RLIMIT_NOFILE %llu: reserve %u + max_connections %u x 1 + "
			 "max_cached_files %u x %u + max_opens %u x %u = %llu fds%s",
			 (unsigned long long)nofile, GW_FD_RESERVE, conns, files,
			 GW_CACHED_FILE_FDS, opens, GW_OPEN_FDS, (unsigned long long)total,
			 total > nofile ? " (more than the limit: set by hand or at a minimum)"
					: "");
}
