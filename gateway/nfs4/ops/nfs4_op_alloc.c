// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ALLOCATE and DEALLOCATE (RFC 7862 §15.1, §15.4): fallocate(2) on an fd
 * of the lacunafs mount, so both take the file's range lock like any
 * write, and a READ_PLUS never sees half a punched hole. DEALLOCATE keeps
 * the size (PUNCH_HOLE | KEEP_SIZE), as the RFC asks; ALLOCATE may grow
 * the file. Errors map through the one errno table: ENOSPC, EFBIG,
 * EINVAL (a zero length), EOPNOTSUPP (a backing filesystem without
 * fallocate) become NOSPC, FBIG, INVAL, NOTSUPP.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/falloc.h>
#include <stdint.h>
#include <unistd.h>

#include "nfs4_ops.h"
#include "nfs4_state.h"

struct alloc_args {
	struct nfs4_stateid sid;
	uint64_t offset;
	uint64_t length;
};

static int dec_alloc(struct xdr_in *x, void *args)
{
	struct alloc_args *a = args;

	if (nfs4_dec_stateid(x, &a->sid) || xdr_dec_u64(x, &a->offset) ||
	    xdr_dec_u64(x, &a->length))
		return -EBADMSG;
	return 0;
}

int nfs4_dec_allocate(struct xdr_in *x, void *args)
{
	return dec_alloc(x, args);
}

int nfs4_dec_deallocate(struct xdr_in *x, void *args)
{
	return dec_alloc(x, args);
}

static uint32_t run_fallocate(struct nfs4_compound *c, struct alloc_args *a, int mode)
{
	struct gw_obj *o = c->cfh;
	bool owned = false;
	uint32_t status;
	int fd = -1;

	status = nfs4_regular_file(c, o);
	if (status != NFS4_OK)
		return status;
	if (a->offset > (uint64_t)INT64_MAX || a->length > (uint64_t)INT64_MAX - a->offset)
		return NFS4ERR_FBIG;
	if (a->length == 0)
		return NFS4ERR_INVAL;
	status = nfs4_io_fd(c, &a->sid, o, true, &fd, &owned);
	if (status != NFS4_OK)
		return status;
	if (fallocate(fd, mode, (off_t)a->offset, (off_t)a->length) < 0)
		status = nfs4_errno(-errno);
	nfs4_state_io_done(c->srv, fd, owned);
	return status;
}

uint32_t nfs4_run_allocate(struct nfs4_compound *c, void *args)
{
	return run_fallocate(c, args, 0);
}

uint32_t nfs4_run_deallocate(struct nfs4_compound *c, void *args)
{
	return run_fallocate(c, args, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE);
}
