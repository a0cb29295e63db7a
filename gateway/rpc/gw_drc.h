/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The NFSv4.0 duplicate request cache (gw_drc.c): replies of COMPOUNDs
 * that change something, sent again when the same call comes again.
 */
#ifndef LACUNA_GW_DRC_H
#define LACUNA_GW_DRC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "gw_config.h"
#include "xdr.h"

#define GW_DRC_REPLY_MAX 4096	    /* larger replies are not kept */
#define GW_DRC_BYTES_PER_ENTRY 1024 /* bytes of replies per entry allowed, on average */

struct gw_drc_key {
	uint32_t xid, prog, vers, proc;
	struct sockaddr_storage peer;
	socklen_t peer_len;
};

/* One server's cache (struct gw_srv's drc). */
struct gw_drc;

/* An empty cache of size 0 (no cache until configured): 0 or -ENOMEM. */
int gw_drc_create(struct gw_drc **out);
/* The cache's size in replies, from the configuration (at start and on a reload) */
void gw_drc_configure(struct gw_drc *d, unsigned int entries);
/* The size in force (0: no cache); no lock */
unsigned int gw_drc_entries(const struct gw_drc *d);

/*
 * The reply kept for @k, if the call is the same (@call_len bytes at
 * @call): appended to @out, 1; 0 when there is none; -ENOMEM.
 */
int gw_drc_lookup(struct gw_drc *d, const struct gw_drc_key *k, const void *call, size_t call_len,
		  struct xdr_out *out);

/* Keep the reply to @k: the bytes of @out from @off on (none when @max_entries is 0). */
void gw_drc_insert(struct gw_drc *d, const struct gw_drc_key *k, const void *call, size_t call_len,
		   const struct xdr_out *out, size_t off, unsigned int max_entries);

/* Drop every entry and free @d (NULL: nothing). */
void gw_drc_destroy(struct gw_drc *d);

#endif
