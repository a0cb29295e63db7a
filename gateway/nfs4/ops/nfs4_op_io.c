// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * READ, WRITE and COMMIT (RFC 8881 §18.22, §18.32, §18.3).
 *
 * READ preads into a chunk of the pool and the reply references the
 * data where it landed (xdr_out_ref), so the bytes are copied once, from
 * the page cache to the chunk, and sent from there. WRITE hands lacunafs
 * the data where it sits in the received record (a pool chunk, inside the
 * arena lacunad registered for the export) with its atomic write: the
 * whole WRITE is applied under one hold of the file's range lock, so a
 * READ_PLUS or SEEK sees all of it or none of it, whatever its size or
 * where the data sits. A plain pwrite through the mount would be cut by
 * the kernel on the buffer's page boundaries (docs/sparse-read.md).
 *
 * Stability: an UNSTABLE4 WRITE is left in the page cache, DATA_SYNC4
 * and FILE_SYNC4 are fdatasync()ed/fsync()ed (by lacunafs, in the same
 * call) before the reply. The write verifier is random at every start,
 * so a client that saw unstable writes before a restart sees a new
 * verifier at COMMIT and sends them again (RFC 8881 §18.32.3).
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lacuna/lacuna.h"
#include "nfs4_ops.h"
#include "nfs4_state.h"

struct read_args {
	struct nfs4_stateid sid;
	uint64_t offset;
	uint32_t count;
};

struct write_args {
	struct nfs4_stateid sid;
	uint64_t offset;
	uint32_t stable;
	const uint8_t *data;
	uint32_t len;
};

struct commit_args {
	uint64_t offset;
	uint32_t count;
};

_Static_assert(sizeof(struct read_args) <= NFS4_ARGS_MAX, "READ args");
_Static_assert(sizeof(struct write_args) <= NFS4_ARGS_MAX, "WRITE args");

int nfs4_dec_read(struct xdr_in *x, void *args)
{
	struct read_args *a = args;

	if (nfs4_dec_stateid(x, &a->sid) || xdr_dec_u64(x, &a->offset) ||
	    xdr_dec_u32(x, &a->count))
		return -EBADMSG;
	return 0;
}

static ssize_t pread_full(int fd, uint8_t *buf, size_t count, uint64_t off)
{
	size_t done = 0;

	while (done < count) {
		ssize_t n = pread(fd, buf + done, count - done, (off_t)(off + done));

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return done ? (ssize_t)done : -errno;
		}
		if (n == 0)
			break;
		done += (size_t)n;
	}
	return (ssize_t)done;
}

uint32_t nfs4_read_begin(struct nfs4_compound *c, const struct nfs4_stateid *sid, uint64_t offset,
			 int *fd, bool *owned)
{
	uint32_t status = nfs4_regular_file(c, c->cfh);

	if (status != NFS4_OK)
		return status;
	return nfs4_io_fd(c, sid, c->cfh, false, fd, owned);
}

uint64_t nfs4_read_clamp(uint64_t offset, uint64_t count)
{
	if (offset > (uint64_t)INT64_MAX)
		return 0;
	return count > (uint64_t)INT64_MAX - offset ? (uint64_t)INT64_MAX - offset : count;
}

size_t nfs4_read_count(const struct nfs4_compound *c, uint64_t count, size_t room, size_t overhead)
{
	uint32_t io_max = gw_io_max(nfs4_cfg(c) ? nfs4_cfg(c)->max_record : GW_RECORD_DEFAULT);

	if (count > io_max)
		count = io_max;
	if (count > chunk_pool_chunk_size(c->srv->pool))
		count = chunk_pool_chunk_size(c->srv->pool);
	if (count + overhead > room)
		count = room > overhead ? (room - overhead) & ~(size_t)3 : 0;
	return (size_t)count;
}

uint32_t nfs4_run_read(struct nfs4_compound *c, void *args)
{
	struct read_args *a = args;
	size_t count;
	bool owned = false, eof;
	void *chunk = NULL;
	struct stat st;
	ssize_t n;
	uint32_t status;
	int fd = -1, err;

	status = nfs4_read_begin(c, &a->sid, a->offset, &fd, &owned);
	if (status != NFS4_OK)
		return status;
	/* eof and the opaque's length and pad take 12 bytes */
	count = nfs4_read_count(c, nfs4_read_clamp(a->offset, a->count), nfs4_reply_room(c), 12);
	if (a->offset > (uint64_t)INT64_MAX) {
		/* past any file there can be: nothing, and end of file (as nfsd) */
		xdr_enc_bool(c->out, true);
		xdr_enc_u32(c->out, 0);
		goto out;
	}
	if (count) {
		err = chunk_get(c->srv->pool, NULL, &chunk);
		if (err) {
			status = NFS4ERR_DELAY;
			goto out;
		}
	}
	n = count ? pread_full(fd, chunk, count, a->offset) : 0;
	if (n < 0) {
		status = nfs4_errno((int)n);
		goto out;
	}
	/*
	 * A short read ends at end of file. A full one may too: ask the size
	 * only then, and only for small reads (the next READ says eof anyway,
	 * and a stat on lacunafs can be a round trip).
	 */
	eof = (size_t)n < count;
	if (!eof && count < 65536) {
		if (fstat(fd, &st) < 0) {
			status = nfs4_errno(-errno);
			goto out;
		}
		eof = (uint64_t)st.st_size <= a->offset + (uint64_t)n;
	}
	xdr_enc_bool(c->out, eof);
	xdr_enc_opaque_ddp(c->out, chunk, (uint32_t)n);
	gw_stat_add(&c->srv->stats.read_bytes, n);
out:
	if (chunk)
		chunk_put(c->srv->pool, chunk);
	nfs4_state_io_done(c->srv, fd, owned);
	return status;
}

int nfs4_dec_write(struct xdr_in *x, void *args)
{
	struct write_args *a = args;

	if (nfs4_dec_stateid(x, &a->sid) || xdr_dec_u64(x, &a->offset) ||
	    xdr_dec_enum(x, &a->stable, FILE_SYNC4) ||
	    xdr_dec_opaque(x, &a->data, &a->len, GW_RECORD_MAX))
		return -EBADMSG;
	return 0;
}

/*
 * Apply @len bytes at @data to @off of @fd: through lacunafs's atomic
 * write when the export has it, else (a plain directory, an old lacunafs,
 * LACUNA_TEST_PLAIN_WRITE) with pwrite, counted apart. The data normally
 * lies in a large pool chunk, which is the arena lacunafs writes from;
 * data in a small chunk goes inside the ioctl; anything else (a small
 * record larger than the ioctl carries) is copied into a large chunk.
 */
int gw_write(struct nfs4_compound *c, int fd, uint64_t off, const uint8_t *data,
	     size_t len, unsigned int flags, struct lacuna_wresult *res)
{
	struct lacuna_client *lc = c->srv->plain_write ? NULL : c->cfh->xp->lc;
	void *chunk = NULL;
	int err;

	err = lacuna_write(lc, fd, off, data, len, flags, res);
	if (err == -E2BIG && len <= chunk_pool_chunk_size(c->srv->pool)) {
		err = chunk_get(c->srv->pool, NULL, &chunk);
		if (err)
			return -EAGAIN;
		memcpy(chunk, data, len);
		err = lacuna_write(lc, fd, off, chunk, len, flags, res);
		chunk_put(c->srv->pool, chunk);
	}
	if (err == -ENOTTY && lc) /* the mount is not (or no longer) lacunafs */
		err = lacuna_write(NULL, fd, off, data, len, flags, res);
	if (!err)
		gw_stat_add(res->atomic ? &c->srv->stats.write_atomic :
					  &c->srv->stats.write_fallback,
			    1);
	return err;
}

uint32_t nfs4_run_write(struct nfs4_compound *c, void *args)
{
	struct write_args *a = args;
	struct gw_obj *o = c->cfh;
	struct lacuna_wresult res;
	uint32_t status;
	bool owned = false;
	int fd = -1, err;

	status = nfs4_regular_file(c, o);
	if (status != NFS4_OK)
		return status;
	if (a->offset > (uint64_t)INT64_MAX || a->len > (uint64_t)INT64_MAX - a->offset)
		return NFS4ERR_FBIG;
	status = nfs4_io_fd(c, &a->sid, o, true, &fd, &owned);
	if (status != NFS4_OK)
		return status;
	err = gw_write(c, fd, a->offset, a->data, a->len,
		       a->stable == FILE_SYNC4	 ? LACUNA_WR_SYNC :
		       a->stable == DATA_SYNC4 ? LACUNA_WR_DSYNC :
						 0,
		       &res);
	if (err) {
		status = err == -EAGAIN ? NFS4ERR_DELAY : nfs4_errno(err);
		goto out;
	}
	xdr_enc_u32(c->out, (uint32_t)res.written);
	xdr_enc_u32(c->out, a->stable);
	xdr_enc_opaque_fixed(c->out, c->srv->write_verf, NFS4_VERIFIER_SIZE);
	gw_stat_add(&c->srv->stats.write_bytes, (long long)res.written);
	LTRACE(lacunad, write, o->fileid, a->offset, a->len, res.written, a->stable,
	       (int)res.atomic);
out:
	nfs4_state_io_done(c->srv, fd, owned);
	return status;
}

int nfs4_dec_commit(struct xdr_in *x, void *args)
{
	struct commit_args *a = args;

	if (xdr_dec_u64(x, &a->offset) || xdr_dec_u32(x, &a->count))
		return -EBADMSG;
	return 0;
}

uint32_t nfs4_run_commit(struct nfs4_compound *c, void *args)
{
	struct commit_args *a = args;
	int fd;

	if (c->cfh->type != S_IFREG)
		return c->cfh->type == S_IFDIR ? NFS4ERR_ISDIR : NFS4ERR_INVAL;
	if (a->count && a->offset > UINT64_MAX - a->count)
		return NFS4ERR_INVAL;
	fd = gw_obj_open(c->cfh, O_RDONLY);
	if (fd == -EACCES || fd == -EPERM)
		fd = gw_obj_open(c->cfh, O_WRONLY);
	if (fd < 0)
		return nfs4_errno(fd);
	if (fsync(fd) < 0) {
		uint32_t st = nfs4_errno(-errno);

		close(fd);
		return st;
	}
	close(fd);
	LTRACE(lacunad, commit, c->cfh->fileid, a->offset, a->count);
	xdr_enc_opaque_fixed(c->out, c->srv->write_verf, NFS4_VERIFIER_SIZE);
	return NFS4_OK;
}
