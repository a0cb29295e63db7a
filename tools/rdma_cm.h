/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The connecting side's wait for a librdmacm event, shared by lacuna's
 * RDMA client and the hostile test peer. Built only with HAVE_RDMA.
 */
#ifndef LACUNA_RDMA_CM_H
#define LACUNA_RDMA_CM_H

#include <stddef.h>
#include <stdint.h>

#include <rdma/rdma_cma.h>

/*
 * Wait up to @ms milliseconds for the next event on @ec and acknowledge
 * it. Its type goes to *got and its status to *status; when it is @want
 * and @priv is given, its private data (at most *plen bytes) is copied
 * to @priv and *plen set to what was copied. Returns 0 (whatever event
 * came: compare *got with @want), -ETIMEDOUT when none came, or -errno.
 */
int rdma_cm_next(struct rdma_event_channel *ec, int ms, enum rdma_cm_event_type want,
		 uint8_t *priv, size_t *plen, enum rdma_cm_event_type *got, int *status);

#endif
