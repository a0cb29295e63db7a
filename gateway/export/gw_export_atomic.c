// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Getting atomic sparse reads back for a lacunafs export that lost them.
 *
 * An export on a lacunafs mount reads and writes through lacunafs's
 * atomic sparse read and write once lacunad has registered its buffer
 * pool as an arena on the mount's control socket (gw_export.c, at start
 * and on reloads). When that registration fails (the control socket
 * refused the connection, lacunafs was busy), the export is served with
 * the fallback, which is not atomic. gw_exports_atomic_check(), called
 * once a second, counts those exports into the statistics
 * (exports_not_atomic), says so loudly in the log once a minute while it
 * lasts, and every GW_ATOMIC_RETRY_SEC seconds tries the registration
 * again; once it succeeds the export is atomic again without a restart.
 *
 * The client is published with a release store: workers read xp->lc
 * without a lock and see either NULL (the fallback) or a client ready
 * to use. Only this function, the export watcher (both on the watch
 * thread) and the opening of a new export, before any snapshot serves it
 * (gw_export.c), set it. This function holds only a reference to the
 * configuration snapshot: a registration that waits on a hung lacunafs
 * holds up no request and no reload.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "gw.h"
#include "lacuna/lacuna.h"
#include "log.h"

#define GW_ATOMIC_RETRY_SEC 5
#define GW_ATOMIC_WARN_SEC 60

void gw_exports_atomic_check(struct gw_srv *s)
{
	static time_t last_try, last_warn;
	struct timespec ts;
	unsigned long long n = 0;
	bool retry, warn;
	struct gw_snap *sn;
	size_t i;
	int err;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	retry = ts.tv_sec - last_try >= GW_ATOMIC_RETRY_SEC;
	warn = ts.tv_sec - last_warn >= GW_ATOMIC_WARN_SEC;
	sn = gw_snap_get(s);
	for (i = 0; sn && i < sn->cfg->nexports; i++) {
		struct gw_export *xp = sn->xports[i];
		struct lacuna_client *lc;

		if (!xp->lacunafs || __atomic_load_n(&xp->lc, __ATOMIC_ACQUIRE))
			continue;
		if (retry) {
			err = gw_export_register(xp, &lc);
			if (!err) {
				__atomic_store_n(&xp->lc, lc, __ATOMIC_RELEASE);
				log_msg(LOG_NOTICE,
					"%s: registered with lacunafs again: sparse reads and "
					"writes are atomic again",
					xp->path);
				continue;
			}
			if (warn)
				log_warn(
					"%s: SERVED WITHOUT ATOMIC SPARSE READS AND WRITES: "
					"READ_PLUS, SEEK and WRITE may see or make torn data; "
					"registering with lacunafs failed (%s), retried every %d s",
					xp->path, strerror(-err), GW_ATOMIC_RETRY_SEC);
		}
		n++;
	}
	gw_snap_put(sn);
	if (retry)
		last_try = ts.tv_sec;
	if (warn && n)
		last_warn = ts.tv_sec;
	atomic_store_explicit(&s->stats.exports_not_atomic, n, memory_order_relaxed);
}
