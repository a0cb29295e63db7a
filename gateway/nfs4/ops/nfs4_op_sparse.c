// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * READ_PLUS and SEEK (RFC 7862 §15.10, §15.11): the holes of a file, told
 * as they are.
 *
 * Operation
 * ---------
 * READ_PLUS takes a chunk of the pool and asks lacunafs for the range
 * with its atomic sparse read (include/lacuna/lacuna.h): under the
 * file's range lock lacunafs walks SEEK_DATA/SEEK_HOLE and preads the
 * data segments straight into the chunk (the pool is the arena lacunad
 * registered with lacunafs), so no write, punch or truncate through the
 * mount can tear the answer. The reply references the data where it
 * landed (xdr_out_ref): one copy, page cache to chunk. A file whose
 * allocation covers its size takes lacunafs's dense path, one SEEK_HOLE
 * and a pread, so READ_PLUS of a dense file costs what READ does.
 *
 * An export that is not lacunafs (or whose lacunafs client could not be
 * set up) reads with the same walk without the lock: still correct
 * segments for a file nobody changes meanwhile, but not atomic; the
 * statistics count those replies apart and the export's start-up log
 * says so.
 *
 * Segments are sent in file order and contiguous, holes whole as
 * lacunafs reports them (a hole may start before the requested offset
 * and end after the range, as §15.10.3 allows). The reply stays within
 * what the session allows: segments are encoded while they fit, a data
 * segment that does not fit whole is cut, and what is left is a short
 * reply (eof false) the client continues from. At or past end of file the
 * reply is NFS4_OK, eof true, no segments.
 *
 * SEEK reads the map with the same sparse read (map only, no data), so it
 * sees the file as READ_PLUS does: the first segment of the kind asked
 * for at or after the offset, a virtual hole at end of file, NXIO for an
 * offset at or past end of file, eof true when no data follows.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lacuna/lacuna.h"
#include "log.h"
#include "nfs4_ops.h"
#include "nfs4_state.h"

enum { NFS4_CONTENT_DATA = 0, NFS4_CONTENT_HOLE = 1 };

/* encoded sizes: eof + count, a hole (type, offset, length), a data head (type, offset, length) */
#define RP_HEAD 8
#define RP_HOLE 20
#define RP_DATA 16

struct read_plus_args {
	struct nfs4_stateid sid;
	uint64_t offset;
	uint32_t count;
};

struct seek_args {
	struct nfs4_stateid sid;
	uint64_t offset;
	uint32_t what;
};

_Static_assert(sizeof(struct read_plus_args) <= NFS4_ARGS_MAX, "READ_PLUS args");

int nfs4_dec_read_plus(struct xdr_in *x, void *args)
{
	struct read_plus_args *a = args;

	if (nfs4_dec_stateid(x, &a->sid) || xdr_dec_u64(x, &a->offset) ||
	    xdr_dec_u32(x, &a->count))
		return -EBADMSG;
	return 0;
}

int nfs4_dec_seek(struct xdr_in *x, void *args)
{
	struct seek_args *a = args;

	if (nfs4_dec_stateid(x, &a->sid) || xdr_dec_u64(x, &a->offset) ||
	    xdr_dec_u32(x, &a->what))
		return -EBADMSG;
	return 0;
}

static void count_result(struct gw_srv *s, const struct lacuna_result *res)
{
	if (res->atomic)
		gw_stat_add(&s->stats.rp_atomic, 1);
	else
		gw_stat_add(&s->stats.rp_fallback, 1);
	if (res->flags & LACUNA_SR_UNSTABLE)
		gw_stat_add(&s->stats.rp_unstable, 1);
}

/* The sparse read of [off, off+len) of @fd, through lacunafs when the export has it. */
int nfs4_sparse_read(struct gw_obj *o, int fd, uint64_t off, uint64_t len, unsigned int how,
		     void *buf, size_t buflen, struct lacuna_result *res)
{
	int err = lacuna_sparse_read(o->xp->lc, fd, off, len, how, buf, buflen, res);

	if (err == -ENOTTY && o->xp->lc) {
		/* the mount is not (or no longer) lacunafs */
		err = lacuna_sparse_read(NULL, fd, off, len, how, buf, buflen, res);
	}
	return err;
}

/* Encode the segments of @res that fit in @room bytes; *eof as sent. */
static void encode_segments(struct nfs4_compound *c, const struct lacuna_result *res,
			    uint64_t from, uint64_t to, size_t room, bool *eof)
{
	struct xdr_mark m_count;
	uint64_t data = 0, holes = 0;
	uint32_t n = 0;
	unsigned int i;

	xdr_out_reserve(c->out, &m_count);
	room -= RP_HEAD;
	for (i = 0; i < res->nsegs; i++) {
		const struct lacuna_extent *e = &res->segs[i];

		if (e->kind == LACUNA_SEG_HOLE) {
			if (room < RP_HOLE)
				break;
			xdr_enc_u32(c->out, NFS4_CONTENT_HOLE);
			xdr_enc_u64(c->out, e->offset);
			xdr_enc_u64(c->out, e->length);
			room -= RP_HOLE;
			/* counted for the part asked for: holes go out whole, again and again */
			holes += (e->offset + e->length < to ? e->offset + e->length : to) -
				 (e->offset > from ? e->offset : from);
		} else {
			size_t len = e->length;

			if (room < RP_DATA + 4)
				break;
			if (RP_DATA + XDR_ALIGN(len) > room)
				len = (room - RP_DATA) & ~(size_t)3; /* cut: the rest comes next call */
			xdr_enc_u32(c->out, NFS4_CONTENT_DATA);
			xdr_enc_u64(c->out, e->offset);
			xdr_enc_opaque_ref(c->out, e->data, (uint32_t)len);
			room -= RP_DATA + XDR_ALIGN(len);
			data += len;
			if (len < e->length) {
				n++;
				break;
			}
		}
		n++;
	}
	xdr_out_fill(&m_count, n);
	/* eof only when everything up to the end of the file went out */
	*eof = *eof && i == res->nsegs;
	gw_stat_add(&c->srv->stats.rp_data_bytes, (long long)data);
	gw_stat_add(&c->srv->stats.rp_hole_bytes, (long long)holes);
	LTRACE(lacunad, read__plus, c->cfh->fileid, from, to - from, data, holes, n,
	       (int)res->atomic);
}

uint32_t nfs4_run_read_plus(struct nfs4_compound *c, void *args)
{
	struct read_plus_args *a = args;
	struct gw_obj *o = c->cfh;
	size_t room = nfs4_reply_room(c), count;
	struct lacuna_result *res = NULL;
	struct xdr_mark m_eof;
	bool owned = false, eof;
	void *chunk = NULL;
	uint32_t status;
	int fd = -1, err;

	status = nfs4_read_begin(c, &a->sid, a->offset, &fd, &owned);
	if (status != NFS4_OK)
		return status;
	if (room < RP_HEAD + RP_HOLE) {
		status = nfs4_enc_status(c, -EMSGSIZE);
		goto out;
	}
	count = nfs4_read_count(c, nfs4_read_clamp(a->offset, a->count), room, RP_HEAD + RP_DATA);
	res = malloc(sizeof(*res));
	if (!res) {
		status = NFS4ERR_DELAY;
		goto out;
	}
	if (count == 0) {
		struct stat st;

		/* nothing asked, or past any file: eof as READ would say it */
		if (a->offset <= (uint64_t)INT64_MAX && fstat(fd, &st) < 0) {
			status = nfs4_errno(-errno);
			goto out;
		}
		xdr_enc_bool(c->out, a->offset > (uint64_t)INT64_MAX ||
					     a->offset >= (uint64_t)st.st_size);
		xdr_enc_u32(c->out, 0);
		goto out;
	}
	err = chunk_get(c->srv->pool, NULL, &chunk);
	if (err) {
		status = NFS4ERR_DELAY;
		goto out;
	}
	err = nfs4_sparse_read(o, fd, a->offset, count, LACUNA_READ_DATA, chunk, count, res);
	if (err) {
		status = nfs4_errno(err);
		goto out;
	}
	count_result(c->srv, res);
	eof = res->flags & LACUNA_SR_EOF;
	xdr_out_reserve(c->out, &m_eof);
	encode_segments(c, res, a->offset, a->offset + count, room, &eof);
	xdr_out_fill(&m_eof, eof);
out:
	if (chunk)
		chunk_put(c->srv->pool, chunk);
	free(res);
	nfs4_state_io_done(c->srv, fd, owned);
	return status;
}

uint32_t nfs4_run_seek(struct nfs4_compound *c, void *args)
{
	struct seek_args *a = args;
	struct gw_obj *o = c->cfh;
	struct lacuna_result *res = NULL;
	uint64_t off = a->offset, found = 0, window;
	bool owned = false, have = false, eof = false;
	uint32_t status;
	int fd = -1, err;

	status = nfs4_regular_file(c, o);
	if (status != NFS4_OK)
		return status;
	if (a->what != NFS4_CONTENT_DATA && a->what != NFS4_CONTENT_HOLE)
		return NFS4ERR_UNION_NOTSUPP;
	status = nfs4_io_fd(c, &a->sid, o, false, &fd, &owned);
	if (status != NFS4_OK)
		return status;
	res = malloc(sizeof(*res));
	if (!res) {
		status = NFS4ERR_DELAY;
		goto out;
	}
	for (window = 1024 * 1024;; window = window < (UINT64_MAX >> 1) ? window * 2 : window) {
		unsigned int i;

		/*
		 * A window that doubles: the first segment of the kind asked for
		 * is all SEEK needs, and a map to end of file costs two lseeks
		 * per segment under the lock.
		 */
		err = nfs4_sparse_read(o, fd, off, window < UINT64_MAX - off ? window : UINT64_MAX - off,
				  LACUNA_READ_MAP, NULL, 0, res);
		if (err) {
			status = nfs4_errno(err);
			goto out;
		}
		if (off >= res->file_size) {
			status = NFS4ERR_NXIO;
			goto out;
		}
		for (i = 0; i < res->nsegs && !have; i++) {
			const struct lacuna_extent *e = &res->segs[i];

			if (e->kind != a->what || e->offset + e->length <= off)
				continue;
			found = e->offset > off ? e->offset : off;
			have = true;
		}
		if (have || (res->flags & LACUNA_SR_EOF) || res->next_offset <= off ||
		    res->next_offset >= res->file_size)
			break;
		off = res->next_offset;
	}
	if (!have) {
		/* no data after the offset: eof; every file has a hole at its end */
		if (a->what == NFS4_CONTENT_HOLE) {
			found = res->file_size;
			have = true;
		} else {
			found = res->file_size;
			eof = true;
		}
	}
	if (have && found >= res->file_size)
		eof = true;
	xdr_enc_bool(c->out, eof);
	xdr_enc_u64(c->out, found);
out:
	free(res);
	nfs4_state_io_done(c->srv, fd, owned);
	return status;
}
