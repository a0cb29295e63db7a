// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * lacunafs's metrics and tracepoints (lfs_metrics.h, docs/tracing.md).
 */
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <string.h>

#include "log.h"
#include "lfs_metrics.h"
#include "trace.h"

#define LFS_SR_MODES 3 /* LACUNA_SR_MAP, _INLINE, _ARENA */

static const char *const lfs_sr_mode_names[LFS_SR_MODES] = { "map", "inline", "arena" };

static struct {
	struct mx_hist lock_wait[2]; /* RL_SHARED, RL_EXCLUSIVE */
	atomic_ullong sr[LFS_SR_MODES], sr_errors, sr_unstable, sr_retries, sr_segs;
	atomic_ullong sr_data_bytes, sr_hole_bytes;
	atomic_ullong arenas, arenas_refused;
} lfs_mx;

static struct mx_http *lfs_http;

void lfs_mx_lock_wait(const struct lfs_inode *inode, uint64_t start, uint64_t end,
		      enum rl_mode mode, uint64_t ns)
{
	mx_hist_add(&lfs_mx.lock_wait[mode == RL_EXCLUSIVE], ns);
	LTRACE(lacunafs, lock__wait, (uint64_t)inode->ino, start, end - start,
	       mode == RL_EXCLUSIVE, ns);
}

void lfs_mx_sparse_read(const struct lfs_inode *inode, const struct lacuna_sr_hdr *h, int rc)
{
	bool unstable = h->flags & LACUNA_SR_UNSTABLE;

	LTRACE(lacunafs, sparse__read, (uint64_t)inode->ino, h->offset, h->length, h->nsegs,
	       h->mode, h->retries, unstable, rc);
	if (rc) {
		mx_add(&lfs_mx.sr_errors, 1);
		return;
	}
	if (h->mode < LFS_SR_MODES)
		mx_add(&lfs_mx.sr[h->mode], 1);
	mx_add(&lfs_mx.sr_segs, h->nsegs);
	mx_add(&lfs_mx.sr_retries, h->retries);
	mx_add(&lfs_mx.sr_data_bytes, h->data_bytes);
	mx_add(&lfs_mx.sr_hole_bytes, h->hole_bytes);
	if (unstable)
		mx_add(&lfs_mx.sr_unstable, 1);
}

int lfs_mx_arena(int pid, uint64_t len, int rc)
{
	LTRACE(lacunafs, arena__register, pid, len, rc);
	mx_add(rc ? &lfs_mx.arenas_refused : &lfs_mx.arenas, 1);
	return rc;
}

static unsigned long long ld(const atomic_ullong *c)
{
	return atomic_load_explicit(c, memory_order_relaxed);
}

static void lfs_metrics_render(FILE *f, void *arg)
{
	unsigned int i;

	(void)arg;
	mx_header(f, "lacunafs_range_lock_wait_seconds", "histogram",
		  "Time waited for an inode range lock");
	mx_hist_write(f, "lacunafs_range_lock_wait_seconds", "mode=\"shared\"",
		      &lfs_mx.lock_wait[0]);
	mx_hist_write(f, "lacunafs_range_lock_wait_seconds", "mode=\"exclusive\"",
		      &lfs_mx.lock_wait[1]);
	mx_header(f, "lacunafs_sparse_reads_total", "counter", "Sparse-read ioctls answered");
	for (i = 0; i < LFS_SR_MODES; i++)
		fprintf(f, "lacunafs_sparse_reads_total{mode=\"%s\"} %llu\n", lfs_sr_mode_names[i],
			ld(&lfs_mx.sr[i]));
	mx_one(f, "lacunafs_sparse_read_errors_total", "counter",
	       "Sparse-read ioctls answered with an error", ld(&lfs_mx.sr_errors));
	mx_one(f, "lacunafs_sparse_read_unstable_total", "counter",
	       "Sparse reads of a file that kept changing outside the mount",
	       ld(&lfs_mx.sr_unstable));
	mx_one(f, "lacunafs_sparse_read_retries_total", "counter",
	       "Passes a sparse read made again for changes outside the mount",
	       ld(&lfs_mx.sr_retries));
	mx_one(f, "lacunafs_sparse_read_segments_total", "counter", "Segments sparse reads returned",
	       ld(&lfs_mx.sr_segs));
	mx_two(f, "lacunafs_sparse_read_bytes_total", "counter",
	       "Bytes sparse reads returned as data, and of the holes in their tables", "kind",
	       "data", ld(&lfs_mx.sr_data_bytes), "hole", ld(&lfs_mx.sr_hole_bytes));
	mx_two(f, "lacunafs_arena_registrations_total", "counter",
	       "Arena registrations over the control socket, taken or refused", "result", "ok",
	       ld(&lfs_mx.arenas), "refused", ld(&lfs_mx.arenas_refused));
}

int lfs_metrics_start(const char *addr)
{
	struct addrinfo hints = { .ai_flags = AI_NUMERICHOST | AI_NUMERICSERV,
				  .ai_socktype = SOCK_STREAM };
	struct addrinfo *ai;
	char host[64];
	const char *colon = strrchr(addr, ':');
	size_t hlen;
	int rc;

	if (!colon || colon == addr) {
		log_err("-o metrics=%s: expected ADDR:PORT", addr);
		return -EINVAL;
	}
	hlen = (size_t)(colon - addr);
	if (addr[0] == '[' && colon[-1] == ']') {
		addr++;
		hlen -= 2;
	}
	if (hlen >= sizeof(host)) {
		log_err("-o metrics: address too long");
		return -EINVAL;
	}
	memcpy(host, addr, hlen);
	host[hlen] = '\0';
	rc = getaddrinfo(host, colon + 1, &hints, &ai);
	if (rc) {
		log_err("-o metrics=%s: %s", addr, gai_strerror(rc));
		return -EINVAL;
	}
	rc = mx_http_start(ai->ai_addr, ai->ai_addrlen, lfs_metrics_render, NULL, &lfs_http);
	freeaddrinfo(ai);
	return rc;
}

void lfs_metrics_stop(void)
{
	mx_http_stop(lfs_http);
	lfs_http = NULL;
}
