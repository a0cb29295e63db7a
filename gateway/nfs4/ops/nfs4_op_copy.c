// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Server-side COPY (RFC 7862 §15.2) within one lacunad, and the two
 * operations that ask about asynchronous copies, OFFLOAD_STATUS and
 * OFFLOAD_CANCEL (§15.9, §15.8).
 *
 * Operation
 * ---------
 * SAVED_FH is the source, CURRENT_FH the destination. Both stateids are
 * checked as READ and WRITE check theirs (read access to the source,
 * write access to the destination), the ranges as the RFC asks: the
 * source range inside the source file (INVAL), a count of 0 meaning "to
 * the end of the source", no overlap of the two ranges within one file
 * (INVAL), the destination within 2^63 (FBIG). A COPY naming source
 * servers (an inter-server copy) is NOTSUPP.
 *
 * The copy walks the source with the same atomic sparse read READ_PLUS
 * uses (nfs4_sparse_read(): under the source's range lock, one pool chunk
 * at a time) and writes only the data segments into the destination,
 * with WRITE's atomic write (gw_write()). A hole of the source becomes a
 * hole of the destination: where the destination had bytes in that range
 * they are punched (FALLOC_FL_PUNCH_HOLE | KEEP_SIZE), and a copy that
 * ends in a hole past the destination's end extends it with ftruncate.
 * So the destination reads the same bytes as the source and, on ext4 as
 * on XFS, is as sparse: a 1 GiB file of 100 MiB data costs 100 MiB of
 * writes and no data on the wire.
 *
 * lacunad has no backchannel (no CB_OFFLOAD), so every COPY is
 * synchronous (cr_synchronous true, no wr_callback_id), and a COPY
 * holds a worker thread. To bound that, one COPY writes at most
 * copy_sync_max bytes of data (lacunad.conf, 64 MiB by default) and then
 * replies with the count it reached: a short copy, which the RFC allows
 * and clients continue (Linux's copy_file_range() returns it and cp
 * calls again). Holes cost no writes and do not count. The data is left
 * UNSTABLE4 with WRITE's verifier; the client COMMITs it. An error after
 * some bytes were copied is a short copy too (the next COPY reports it),
 * and so is a source that shrank under the copy.
 *
 * With no asynchronous copy ever running, no stateid names one:
 * OFFLOAD_STATUS and OFFLOAD_CANCEL answer BAD_STATEID.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/falloc.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lacuna/lacuna.h"
#include "nfs4_ops.h"
#include "nfs4_state.h"

#define NFS4_COPY_SRC_MAX 16 /* netloc4 entries of ca_source_server */

enum { NL4_NAME = 1, NL4_URL = 2, NL4_NETADDR = 3 };

struct copy_args {
	struct nfs4_stateid src_sid, dst_sid;
	uint64_t src_off, dst_off, count;
	bool consecutive, synchronous;
	uint32_t nsrc; /* source servers named */
};

struct offload_args {
	struct nfs4_stateid sid;
};

_Static_assert(sizeof(struct copy_args) <= NFS4_ARGS_MAX, "COPY args");

static int dec_netloc(struct xdr_in *x)
{
	const char *s;
	uint32_t type, len;

	if (xdr_dec_u32(x, &type))
		return -EBADMSG;
	switch (type) {
	case NL4_NAME:
	case NL4_URL:
		return xdr_dec_string(x, &s, &len, NFS4_OPAQUE_LIMIT);
	case NL4_NETADDR: /* na_r_netid, na_r_addr */
		if (xdr_dec_string(x, &s, &len, NFS4_OPAQUE_LIMIT) ||
		    xdr_dec_string(x, &s, &len, NFS4_OPAQUE_LIMIT))
			return -EBADMSG;
		return 0;
	}
	return -EBADMSG;
}

int nfs4_dec_copy(struct xdr_in *x, void *args)
{
	struct copy_args *a = args;
	uint32_t i;

	if (nfs4_dec_stateid(x, &a->src_sid) || nfs4_dec_stateid(x, &a->dst_sid) ||
	    xdr_dec_u64(x, &a->src_off) || xdr_dec_u64(x, &a->dst_off) ||
	    xdr_dec_u64(x, &a->count) || xdr_dec_bool(x, &a->consecutive) ||
	    xdr_dec_bool(x, &a->synchronous) || xdr_dec_u32(x, &a->nsrc) ||
	    a->nsrc > NFS4_COPY_SRC_MAX)
		return -EBADMSG;
	for (i = 0; i < a->nsrc; i++)
		if (dec_netloc(x))
			return -EBADMSG;
	return 0;
}

/* One COPY under way: the two files and how far it got. */
struct copy_run {
	struct nfs4_compound *c;
	int sfd, dfd;
	uint64_t src_off, end; /* source range */
	int64_t delta;	       /* destination offset - source offset */
	uint64_t dst_size;     /* the destination's size before the copy */
	uint64_t dst_cur;      /* and as the copy made it */
	uint64_t pos;	       /* source offset copied up to */
	uint64_t data, holes;  /* bytes written, bytes of holes */
};

/* Make [from, to) of the source a hole in the destination. */
static int copy_hole(struct copy_run *r, uint64_t from, uint64_t to)
{
	uint64_t d = from + r->delta, e = to + r->delta;

	r->holes += to - from;
	if (e > r->dst_size)
		e = r->dst_size; /* past the old end it is a hole already */
	if (d >= e)
		return 0;
	if (fallocate(r->dfd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)d,
		      (off_t)(e - d)) < 0)
		return -errno;
	return 0;
}

static int copy_data(struct copy_run *r, const uint8_t *data, uint64_t from, uint64_t len)
{
	struct lacuna_wresult wres;
	int err;

	while (len) {
		err = gw_write(r->c, r->dfd, from + r->delta, data, len, 0, &wres);
		if (err)
			return err;
		if (wres.written == 0)
			return -ENOSPC;
		r->data += wres.written;
		from += wres.written;
		data += wres.written;
		len -= wres.written;
	}
	return 0;
}

/* [*a, *b): the part of @e in the range from r->pos (holes come whole) */
static bool clip(const struct copy_run *r, const struct lacuna_extent *e, uint64_t *a, uint64_t *b)
{
	*a = e->offset > r->pos ? e->offset : r->pos;
	*b = e->offset + e->length < r->end ? e->offset + e->length : r->end;
	return *a < *b;
}

/*
 * Before writing the data of @res, make the destination as long as the
 * last of it, so that the writes land inside the file: a write past the
 * end lets XFS preallocate past it, and the next extending write zeroes
 * that preallocation, turning a hole of the source into data.
 */
static int grow_for(struct copy_run *r, const struct lacuna_result *res)
{
	uint64_t a, b, end = 0;
	unsigned int i;

	for (i = 0; i < res->nsegs; i++)
		if (res->segs[i].kind == LACUNA_SEG_DATA && clip(r, &res->segs[i], &a, &b))
			end = b + r->delta;
	if (end <= r->dst_cur)
		return 0;
	if (ftruncate(r->dfd, (off_t)end) < 0)
		return -errno;
	r->dst_cur = end;
	return 0;
}

/* Copy one chunk's worth of the source from r->pos on; advances r->pos. */
static int copy_step(struct copy_run *r, void *chunk, size_t chunk_len, struct lacuna_result *res)
{
	uint64_t want = r->end - r->pos < chunk_len ? r->end - r->pos : chunk_len;
	unsigned int i;
	int err;

	err = nfs4_sparse_read(r->c->sfh, r->sfd, r->pos, want, LACUNA_READ_DATA, chunk, chunk_len,
			       res);
	if (err)
		return err;
	err = grow_for(r, res);
	if (err)
		return err;
	for (i = 0; i < res->nsegs; i++) {
		const struct lacuna_extent *e = &res->segs[i];
		uint64_t a, b;

		if (!clip(r, e, &a, &b))
			continue;
		if (e->kind == LACUNA_SEG_HOLE)
			err = copy_hole(r, a, b);
		else
			err = copy_data(r, e->data + (a - e->offset), a, b - a);
		if (err)
			return err;
		r->pos = b;
	}
	if (res->next_offset > r->pos && res->next_offset < r->end && !(res->flags & LACUNA_SR_EOF))
		r->pos = res->next_offset;
	if (res->flags & LACUNA_SR_EOF && r->pos < r->end)
		return -ENODATA; /* the source shrank meanwhile: stop here */
	return 0;
}

/*
 * Copy from r->pos until r->end or copy_sync_max bytes of data. 0 or the
 * error that stopped it (r->pos says how far it got either way).
 */
static int copy_range(struct copy_run *r)
{
	struct gw_srv *s = r->c->srv;
	const struct gw_config *cfg = nfs4_cfg(r->c);
	uint64_t limit = cfg ? cfg->copy_sync_max : GW_COPY_SYNC_DEFAULT;
	struct lacuna_result *res;
	void *chunk = NULL;
	int err = 0;

	res = malloc(sizeof(*res));
	if (!res)
		return -ENOMEM;
	if (chunk_get(s->pool, NULL, &chunk)) {
		free(res);
		return -EAGAIN;
	}
	while (r->pos < r->end && r->data < limit) {
		uint64_t before = r->pos;

		err = copy_step(r, chunk, chunk_pool_chunk_size(s->pool), res);
		if (err || r->pos == before)
			break;
	}
	chunk_put(s->pool, chunk);
	free(res);
	return err;
}

/* The checks of §15.2.3 on the two files and ranges; on NFS4_OK r->end is set. */
static uint32_t copy_check(struct copy_run *r, const struct copy_args *a)
{
	struct stat ss, ds;

	if (fstat(r->sfd, &ss) < 0 || fstat(r->dfd, &ds) < 0)
		return nfs4_errno(-errno);
	if (a->src_off > (uint64_t)ss.st_size)
		return NFS4ERR_INVAL;
	if (a->count == 0)
		r->end = (uint64_t)ss.st_size;
	else if (a->count > (uint64_t)ss.st_size - a->src_off)
		return NFS4ERR_INVAL;
	else
		r->end = a->src_off + a->count;
	if (a->dst_off > (uint64_t)INT64_MAX ||
	    r->end - a->src_off > (uint64_t)INT64_MAX - a->dst_off)
		return NFS4ERR_FBIG;
	/* one file: the two ranges must not overlap */
	if (ss.st_dev == ds.st_dev && ss.st_ino == ds.st_ino && r->end > a->src_off &&
	    a->dst_off < r->end && a->src_off < a->dst_off + (r->end - a->src_off))
		return NFS4ERR_INVAL;
	r->src_off = r->pos = a->src_off;
	r->delta = (int64_t)(a->dst_off - a->src_off);
	r->dst_size = r->dst_cur = (uint64_t)ds.st_size;
	return NFS4_OK;
}

/* The destination ends at least where the copied range does. */
static uint32_t copy_extend(struct copy_run *r)
{
	uint64_t end = r->end + r->delta;
	struct stat ds;

	if (fstat(r->dfd, &ds) < 0)
		return nfs4_errno(-errno);
	if ((uint64_t)ds.st_size < end && ftruncate(r->dfd, (off_t)end) < 0)
		return nfs4_errno(-errno);
	return NFS4_OK;
}

static void enc_copy_res(struct nfs4_compound *c, uint64_t count)
{
	xdr_enc_u32(c->out, 0); /* wr_callback_id: none, the copy is done */
	xdr_enc_u64(c->out, count);
	xdr_enc_u32(c->out, UNSTABLE4);
	xdr_enc_opaque_fixed(c->out, c->srv->write_verf, NFS4_VERIFIER_SIZE);
	xdr_enc_bool(c->out, true); /* cr_consecutive */
	xdr_enc_bool(c->out, true); /* cr_synchronous */
}

uint32_t nfs4_run_copy(struct nfs4_compound *c, void *args)
{
	struct copy_args *a = args;
	struct copy_run r = { .c = c, .sfd = -1, .dfd = -1 };
	bool sowned = false, downed = false;
	uint64_t done;
	uint32_t status;
	int err;

	if (!c->sfh)
		return NFS4ERR_NOFILEHANDLE;
	if (a->nsrc)
		return NFS4ERR_NOTSUPP; /* inter-server copy */
	status = nfs4_regular_file(c, c->sfh);
	if (status == NFS4_OK)
		status = nfs4_regular_file(c, c->cfh);
	if (status != NFS4_OK)
		return status;
	if (a->src_off > (uint64_t)INT64_MAX)
		return NFS4ERR_INVAL;
	status = nfs4_io_fd(c, &a->src_sid, c->sfh, false, &r.sfd, &sowned);
	if (status != NFS4_OK)
		return status;
	status = nfs4_io_fd(c, &a->dst_sid, c->cfh, true, &r.dfd, &downed);
	if (status != NFS4_OK)
		goto out;
	status = copy_check(&r, a);
	if (status != NFS4_OK)
		goto out;
	err = copy_range(&r);
	done = r.pos - r.src_off;
	gw_stat_add(&c->srv->stats.copy_data_bytes, (long long)r.data);
	gw_stat_add(&c->srv->stats.copy_hole_bytes, (long long)r.holes);
	if (err == -ENODATA)
		err = 0; /* the source shrank: what was copied is the answer */
	if (err && done == 0) {
		status = err == -ENOMEM || err == -EAGAIN ? NFS4ERR_DELAY : nfs4_errno(err);
		goto out;
	}
	if (!err && r.pos == r.end && r.end + r.delta > r.dst_size) {
		/* a copy ending in a hole past the destination's end: the size says so */
		status = copy_extend(&r);
		if (status != NFS4_OK)
			goto out;
	}
	if (r.pos < r.end)
		gw_stat_add(&c->srv->stats.copy_short, 1);
	enc_copy_res(c, done);
out:
	nfs4_state_io_done(c->srv, r.dfd, downed);
	nfs4_state_io_done(c->srv, r.sfd, sowned);
	return status;
}

int nfs4_dec_offload_status(struct xdr_in *x, void *args)
{
	struct offload_args *a = args;

	return nfs4_dec_stateid(x, &a->sid) ? -EBADMSG : 0;
}

int nfs4_dec_offload_cancel(struct xdr_in *x, void *args)
{
	return nfs4_dec_offload_status(x, args);
}

/* No copy is ever asynchronous: no stateid names one (§15.8.3, §15.9.3). */
uint32_t nfs4_run_offload_status(struct nfs4_compound *c, void *args)
{
	(void)c;
	(void)args;
	return NFS4ERR_BAD_STATEID;
}

uint32_t nfs4_run_offload_cancel(struct nfs4_compound *c, void *args)
{
	return nfs4_run_offload_status(c, args);
}
