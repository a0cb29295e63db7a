// SPDX-License-Identifier: GPL-2.0-or-later
/* The connecting side's wait for a librdmacm event (rdma_cm.h). */
#include <errno.h>
#include <poll.h>
#include <string.h>

#include "rdma_cm.h"

int rdma_cm_next(struct rdma_event_channel *ec, int ms, enum rdma_cm_event_type want,
		 uint8_t *priv, size_t *plen, enum rdma_cm_event_type *got, int *status)
{
	struct pollfd p = { .fd = ec->fd, .events = POLLIN };
	struct rdma_cm_event *ev;
	int rc;

	do
		rc = poll(&p, 1, ms);
	while (rc < 0 && errno == EINTR);
	if (rc < 0)
		return -errno;
	if (rc == 0)
		return -ETIMEDOUT;
	if (rdma_get_cm_event(ec, &ev))
		return -errno;
	*got = ev->event;
	*status = ev->status;
	if (*got == want && priv) {
		size_t n = ev->param.conn.private_data ? ev->param.conn.private_data_len : 0;

		if (n > *plen)
			n = *plen;
		if (n)
			memcpy(priv, ev->param.conn.private_data, n);
		*plen = n;
	}
	rdma_ack_cm_event(ev);
	return 0;
}
