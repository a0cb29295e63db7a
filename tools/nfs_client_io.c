// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * nfsc, the file: lookup and OPEN of a path, CLOSE, I/O calls on the
 * session's slots, and the two walkers over a byte range (READ_PLUS or
 * READ with several calls in flight; SEEK one call at a time). The
 * rules they follow are in the Operation essay of nfs_client.h.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nfs_client_priv.h"

/* ------------------------------------------------------------ open */

/*
 * LOOKUP or OPEN of the name @n of @path failed. GRACE and DELAY are
 * -EAGAIN: the caller waits and tries again.
 */
static int name_fail(struct nfsc *c, const char *path, const struct nfsc_name *n, uint32_t op,
		     uint32_t st)
{
	int len = (int)(n->p + n->len - path);
	char t[96];

	c->status = st;
	if (st == NFS4ERR_NOENT)
		return nfsc_fail(c, -EREMOTEIO, "%.*s: No such file or directory", len, path);
	return nfsc_fail(c, st == NFS4ERR_GRACE || st == NFS4ERR_DELAY ? -EAGAIN : -EREMOTEIO,
			 "%s %.*s: %s", nfsc_op_name(op), len, path,
			 nfsc_stat_text(st, t, sizeof(t)));
}

static int dec_getfh(struct nfsc *c, struct nfsc_reply *r, uint8_t *fh, uint32_t *len)
{
	const uint8_t *p;
	int rc = nfsc_reply_ok(c, r, OP_GETFH);

	if (rc)
		return rc;
	if (xdr_dec_opaque(&r->x, &p, len, NFSC_FH_MAX) || !*len)
		return nfsc_truncated(c, OP_GETFH);
	memcpy(fh, p, *len);
	return 0;
}

/* nfsace4 */
static int skip_ace(struct xdr_in *x)
{
	uint32_t v;

	return xdr_dec_u32(x, &v) || xdr_dec_u32(x, &v) || xdr_dec_u32(x, &v) ||
	       nfsc_skip_opaque(x, NFSC_OPAQUE_MAX);
}

/* open_delegation4: a delegation granted anyway is kept to be returned */
static int dec_delegation(struct xdr_in *x, struct nfsc_file *f)
{
	uint32_t type, v;
	uint64_t v64;
	bool b;

	if (xdr_dec_u32(x, &type))
		return -EBADMSG;
	switch (type) {
	case OPEN_DELEGATE_NONE:
		return 0;
	case OPEN_DELEGATE_READ:
	case OPEN_DELEGATE_WRITE:
		if (xdr_dec_opaque_fixed_copy(x, f->deleg, NFSC_STATEID_SIZE) ||
		    xdr_dec_bool(x, &b))
			return -EBADMSG;
		f->has_deleg = true;
		if (type == OPEN_DELEGATE_WRITE) {
			/* nfs_space_limit4: NFS_LIMIT_SIZE (a u64) or _BLOCKS (two u32) */
			if (xdr_dec_u32(x, &v) || (v != 1 && v != 2) || xdr_dec_u64(x, &v64))
				return -EBADMSG;
		}
		return skip_ace(x) ? -EBADMSG : 0;
	case OPEN_DELEGATE_NONE_EXT:
		if (xdr_dec_u32(x, &v))
			return -EBADMSG;
		if (v == WND4_CONTENTION || v == WND4_RESOURCE)
			return xdr_dec_bool(x, &b);
		return 0;
	}
	return -EBADMSG;
}

static int dec_open(struct nfsc *c, struct nfsc_reply *r, struct nfsc_file *f)
{
	uint32_t rflags, n;
	uint64_t v64;
	bool atomic;

	if (xdr_dec_opaque_fixed_copy(&r->x, f->stateid, NFSC_STATEID_SIZE))
		return nfsc_truncated(c, OP_OPEN);
	f->open = true;
	c->file = f;
	if (xdr_dec_bool(&r->x, &atomic) || xdr_dec_u64(&r->x, &v64) || xdr_dec_u64(&r->x, &v64) ||
	    xdr_dec_u32(&r->x, &rflags) || nfsc_dec_bitmap(&r->x, NULL, &n) ||
	    dec_delegation(&r->x, f))
		return nfsc_truncated(c, OP_OPEN);
	return 0;
}

#define BIT(a) (1U << ((a) % 32))

/* GETATTR of type, size and space_used */
static int dec_attrs(struct nfsc *c, struct nfsc_reply *r, const char *path, struct nfsc_file *f)
{
	uint32_t w[NFSC_BITMAP_MAX] = { 0 }, n, i, type = 0, alen;
	const uint8_t *vals;
	struct xdr_in a;
	int rc = nfsc_reply_ok(c, r, OP_GETATTR);

	if (rc)
		return rc;
	if (nfsc_dec_bitmap(&r->x, w, &n) || xdr_dec_opaque(&r->x, &vals, &alen, NFSC_ATTRS_MAX))
		return nfsc_truncated(c, OP_GETATTR);
	if ((w[0] & ~(BIT(FATTR4_TYPE) | BIT(FATTR4_SIZE))) || (w[1] & ~BIT(FATTR4_SPACE_USED)))
		return nfsc_fail(c, -EPROTO,
				 "GETATTR: attributes returned that were not asked for");
	for (i = 2; i < n; i++)
		if (w[i])
			return nfsc_fail(c, -EPROTO,
					 "GETATTR: attributes returned that were not asked for");
	if (!(w[0] & BIT(FATTR4_TYPE)) || !(w[0] & BIT(FATTR4_SIZE)))
		return nfsc_fail(c, -EPROTO, "GETATTR: no type or size returned");
	xdr_in_init(&a, vals, alen);
	if (xdr_dec_u32(&a, &type) || xdr_dec_u64(&a, &f->size) ||
	    ((w[1] & BIT(FATTR4_SPACE_USED)) && xdr_dec_u64(&a, &f->space_used)))
		return nfsc_truncated(c, OP_GETATTR);
	if (type != NF4REG)
		return nfsc_fail(c, -EINVAL, "%s: not a regular file (type %" PRIu32 ")", path,
				 type);
	return 0;
}

/*
 * One COMPOUND of the walk down @path: from the root (dirfh_len 0) or
 * the directory dirfh, LOOKUP of names [first, first + k), then either
 * GETFH of the directory reached or, for the last batch, OPEN of the
 * file + GETFH + GETATTR.
 */
static int open_batch(struct nfsc *c, const char *path, const struct nfsc_name *n,
		      unsigned int first, unsigned int k, bool last, uint8_t *dirfh,
		      uint32_t *dirfh_len, struct nfsc_file *f)
{
	char owner[NFSC_OWNER_MAX];
	const struct nfsc_name *file = &n[first + k];
	struct nfsc_reply r;
	struct nfsc_enc *e;
	uint32_t xid, st, i;
	int olen, rc;

	e = nfsc_begin_seq(c, &xid);
	if (*dirfh_len) {
		nfsc_put_op(e, OP_PUTFH);
		nfsc_put_opaque(e, dirfh, *dirfh_len);
	} else {
		nfsc_put_op(e, OP_PUTROOTFH);
	}
	for (i = first; i < first + k; i++) {
		nfsc_put_op(e, OP_LOOKUP);
		nfsc_put_opaque(e, n[i].p, n[i].len);
	}
	if (last) {
		olen = snprintf(owner, sizeof(owner), "lacuna.open.%ld", (long)getpid());
		nfsc_put_op(e, OP_OPEN);
		nfsc_put32(e, 0); /* seqid */
		nfsc_put32(e, OPEN4_SHARE_ACCESS_READ | NFSC_WANT_NO_DELEG);
		nfsc_put32(e, OPEN4_SHARE_DENY_NONE);
		nfsc_put64(e, c->clientid);
		nfsc_put_opaque(e, owner, (uint32_t)olen);
		nfsc_put32(e, OPEN4_NOCREATE);
		nfsc_put32(e, CLAIM_NULL);
		nfsc_put_opaque(e, file->p, file->len);
		nfsc_put_op(e, OP_GETFH);
		nfsc_put_op(e, OP_GETATTR);
		nfsc_put32(e, 2);
		nfsc_put32(e, BIT(FATTR4_TYPE) | BIT(FATTR4_SIZE));
		nfsc_put32(e, BIT(FATTR4_SPACE_USED));
	} else {
		nfsc_put_op(e, OP_GETFH);
	}
	rc = nfsc_call_sync(c, e, xid, &r);
	if (!rc)
		rc = nfsc_dec_sequence(c, &r, 0);
	if (!rc)
		rc = nfsc_reply_ok(c, &r, *dirfh_len ? OP_PUTFH : OP_PUTROOTFH);
	for (i = first; !rc && i < first + k; i++) {
		rc = nfsc_reply_op(c, &r, OP_LOOKUP, &st);
		if (!rc && st)
			return name_fail(c, path, &n[i], OP_LOOKUP, st);
	}
	if (rc)
		return rc;
	if (!last)
		return dec_getfh(c, &r, dirfh, dirfh_len);
	rc = nfsc_reply_op(c, &r, OP_OPEN, &st);
	if (!rc && st)
		return name_fail(c, path, file, OP_OPEN, st);
	if (!rc)
		rc = dec_open(c, &r, f);
	if (!rc)
		rc = dec_getfh(c, &r, f->fh, &f->fh_len);
	return rc ? rc : dec_attrs(c, &r, path, f);
}

int nfsc_open(struct nfsc *c, const char *path, struct nfsc_file *f)
{
	struct nfsc_name n[NFSC_COMPONENTS_MAX];
	uint8_t dirfh[NFSC_FH_MAX];
	uint32_t dirfh_len = 0;
	unsigned int count, done = 0, waited = 0;
	int rc;

	memset(f, 0, sizeof(*f));
	rc = nfsc_path_split(path, n, &count);
	if (rc)
		return nfsc_fail(c, rc == -ENOENT ? -EINVAL : rc, "%s: %s", path,
				 rc == -ENOENT ? "no file name" : strerror(-rc));
	for (;;) {
		unsigned int dirs = count - 1 - done;
		bool last = dirs <= c->maxops - 5;
		unsigned int k = last ? dirs : c->maxops - 3;

		rc = open_batch(c, path, n, done, k, last, dirfh, &dirfh_len, f);
		if (rc == -EAGAIN && waited < NFSC_WAIT_MAX) {
			if (!waited++)
				nfsc_note(c, "%s: waiting", c->err);
			sleep(1);
			continue;
		}
		if (rc)
			return rc == -EAGAIN ? -EREMOTEIO : rc;
		if (last)
			return 0;
		done += k;
	}
}

int nfsc_close(struct nfsc *c, struct nfsc_file *f)
{
	struct nfsc_reply r;
	struct nfsc_enc *e;
	uint32_t xid;
	int rc;

	if (!f->open)
		return 0;
	f->open = false;
	c->file = NULL;
	e = nfsc_begin_seq(c, &xid);
	nfsc_op_putfh(e, f);
	if (f->has_deleg) {
		nfsc_put_op(e, OP_DELEGRETURN);
		nfsc_put_fixed(e, f->deleg, NFSC_STATEID_SIZE);
	}
	nfsc_put_op(e, OP_CLOSE);
	nfsc_put32(e, 0); /* seqid */
	nfsc_put_fixed(e, f->stateid, NFSC_STATEID_SIZE);
	rc = nfsc_call_sync(c, e, xid, &r);
	if (!rc)
		rc = nfsc_dec_sequence(c, &r, 0);
	if (!rc)
		rc = nfsc_reply_ok(c, &r, OP_PUTFH);
	if (!rc && f->has_deleg)
		rc = nfsc_reply_ok(c, &r, OP_DELEGRETURN);
	if (!rc)
		rc = nfsc_reply_ok(c, &r, OP_CLOSE);
	return rc;
}

/* ------------------------------------------------------------ I/O calls */

int nfsc_io_start(struct nfsc *c, const struct nfsc_file *f, struct nfsc_io *io)
{
	struct nfsc_enc *e;
	unsigned int i;
	uint32_t xid;
	int rc;

	for (i = 0; i < c->nslots && c->slot[i].busy; i++)
		;
	if (i == c->nslots)
		return nfsc_fail(c, -EBUSY, "every slot is in use");
	e = nfsc_call_begin(c, &xid);
	nfsc_op_sequence(c, e, i);
	nfsc_op_putfh(e, f);
	nfsc_put_op(e, io->op);
	nfsc_put_fixed(e, f->stateid, NFSC_STATEID_SIZE);
	nfsc_put64(e, io->offset);
	nfsc_put32(e, io->op == OP_SEEK ? io->what : io->count);
	if (io->op == OP_READ)
		e->ddp_read = io->count;
	rc = nfsc_call_send(c, e);
	if (rc)
		return rc;
	io->slot = i;
	c->slot[i].busy = true;
	c->slot[i].xid = xid;
	c->slot[i].io = io;
	c->inflight++;
	return 0;
}

int nfsc_io_wait(struct nfsc *c, struct nfsc_io **out)
{
	struct nfsc_reply r;
	struct nfsc_io *io;
	unsigned int i;
	int rc;

	if (!c->inflight)
		return nfsc_fail(c, -EINVAL, "no call in flight");
	rc = nfsc_reply_recv(c, &r);
	if (rc)
		return rc;
	for (i = 0; i < c->nslots; i++)
		if (c->slot[i].busy && c->slot[i].xid == r.xid)
			break;
	if (i == c->nslots) {
		c->dead = true; /* nothing said on this connection can be trusted */
		return nfsc_fail(c, -EPROTO,
				 "a reply with xid %#" PRIx32 " matches no call in flight", r.xid);
	}
	c->slot[i].busy = false;
	c->inflight--;
	io = c->slot[i].io;
	*out = io;
	io->nsegs = 0;
	io->segs = c->segs;
	io->eof = false;
	rc = nfsc_dec_sequence(c, &r, i);
	if (!rc)
		rc = nfsc_reply_ok(c, &r, OP_PUTFH);
	if (!rc)
		rc = nfsc_reply_op(c, &r, io->op, &io->status);
	if (rc || io->status)
		return rc;
	switch (io->op) {
	case OP_READ_PLUS:
		return nfsc_dec_read_plus(&r.x, io->offset, io->count, c->segs, NFSC_RP_SEGS_MAX,
					  &io->nsegs, &io->eof, c->err, sizeof(c->err));
	case OP_READ:
		return nfsc_dec_read(&r.x, io->offset, io->count, c->segs, &io->nsegs, &io->eof,
				     c->err, sizeof(c->err));
	}
	return nfsc_dec_seek(&r.x, &io->eof, &io->seek_offset, c->err, sizeof(c->err));
}

/* ------------------------------------------------------------ walks */

struct walk_call {
	struct nfsc_io io;
	uint64_t end;
	bool busy;
};

struct walk_range {
	uint64_t off, end;
};

struct walk_state {
	struct walk_call call[NFSC_SLOTS_MAX];
	struct walk_range pend[NFSC_SLOTS_MAX + 1]; /* rests of short replies, retries */
	unsigned int npend;
	uint64_t next;	/* the range not asked for yet starts here */
	uint64_t limit; /* w->end, lowered by an eof */
	uint32_t op;
	bool probing; /* the first READ_PLUS, alone: is there one? */
	unsigned int delays;
};

static int walk_push(struct nfsc *c, struct walk_state *ws, uint64_t off, uint64_t end)
{
	if (ws->npend == sizeof(ws->pend) / sizeof(ws->pend[0]))
		return nfsc_fail(c, -EOVERFLOW, "too many short replies pending");
	ws->pend[ws->npend++] = (struct walk_range){ off, end };
	return 0;
}

/* The next range to ask for, or false. */
static bool walk_next(struct nfsc *c, struct walk_state *ws, struct walk_range *r)
{
	while (ws->npend) {
		*r = ws->pend[--ws->npend];
		if (r->end > ws->limit)
			r->end = ws->limit;
		if (r->off < r->end)
			return true;
	}
	if (ws->next >= ws->limit)
		return false;
	r->off = ws->next;
	r->end = ws->limit - r->off < c->io_size ? ws->limit : r->off + c->io_size;
	ws->next = r->end;
	return true;
}

/* Hand the segments of a reply, clipped to its call's range, to w->seg(). */
static int walk_segs(struct nfsc_walk *w, struct walk_state *ws, const struct nfsc_io *io,
		     uint64_t end)
{
	uint32_t i;
	int rc;

	if (end > ws->limit)
		end = ws->limit;
	for (i = 0; i < io->nsegs; i++) {
		const struct nfsc_seg *s = &io->segs[i];
		uint64_t lo = s->offset > io->offset ? s->offset : io->offset;
		uint64_t hi = s->offset + s->length < end ? s->offset + s->length : end;
		struct nfsc_seg cl = { .offset = lo, .length = hi - lo, .kind = s->kind };

		if (lo >= hi)
			continue;
		if (s->data)
			cl.data = s->data + (lo - s->offset);
		if (s->kind == NFSC_CONTENT_DATA)
			w->data_bytes += cl.length;
		else
			w->hole_bytes += cl.length;
		rc = w->seg(w->arg, &cl);
		if (rc)
			return rc;
	}
	return 0;
}

/*
 * A last hole running past what has been asked for so far: the part not
 * asked for yet is known already, and the walk goes on after it (a
 * large hole then costs one call, not one per NFSC_IO_MAX bytes).
 */
static int walk_skip_hole(struct nfsc_walk *w, struct walk_state *ws, const struct nfsc_io *io)
{
	const struct nfsc_seg *s = io->nsegs ? &io->segs[io->nsegs - 1] : NULL;
	struct nfsc_seg h = { .kind = NFSC_CONTENT_HOLE };
	uint64_t end;

	if (!s || s->kind != NFSC_CONTENT_HOLE || s->offset + s->length <= ws->next ||
	    ws->next >= ws->limit)
		return 0;
	end = s->offset + s->length < ws->limit ? s->offset + s->length : ws->limit;
	h.offset = ws->next;
	h.length = end - ws->next;
	ws->next = end;
	w->hole_bytes += h.length;
	return w->seg(w->arg, &h);
}

static int walk_reply(struct nfsc *c, struct nfsc_walk *w, struct walk_state *ws,
		      struct walk_call *call)
{
	const struct nfsc_io *io = &call->io;
	uint64_t covered = io->offset, fend;
	uint32_t st = io->status;
	char t[96];
	int rc;

	if (st && ws->probing && (st == NFS4ERR_NOTSUPP || st == NFS4ERR_OP_ILLEGAL)) {
		c->status = st;
		if (w->no_fallback)
			return nfsc_fail(c, -EOPNOTSUPP, "READ_PLUS: %s", nfsc_stat_name(st));
		ws->op = OP_READ;
		ws->probing = false;
		w->fell_back = true;
		nfsc_note(
			c,
			"the server has no READ_PLUS (%s): reading with READ, holes come as zeros",
			nfsc_stat_name(st));
		return walk_push(c, ws, io->offset, call->end);
	}
	if (st == NFS4ERR_DELAY && ++ws->delays <= NFSC_DELAY_TRIES) {
		usleep(10000);
		return walk_push(c, ws, io->offset, call->end);
	}
	if (st) {
		c->status = st;
		return nfsc_fail(c, -EREMOTEIO, "%s at %" PRIu64 ": %s", nfsc_op_name(io->op),
				 io->offset, nfsc_stat_text(st, t, sizeof(t)));
	}
	ws->probing = false;
	ws->delays = 0;
	rc = walk_segs(w, ws, io, call->end);
	if (rc)
		return rc;
	if (io->nsegs) {
		const struct nfsc_seg *s = &io->segs[io->nsegs - 1];

		covered = s->offset + s->length < call->end ? s->offset + s->length : call->end;
	}
	if (io->eof) {
		fend = io->nsegs ? io->segs[io->nsegs - 1].offset + io->segs[io->nsegs - 1].length
				 : io->offset;
		if (fend < w->eof_at)
			w->eof_at = fend;
		if (fend < ws->limit)
			ws->limit = fend;
	}
	rc = walk_skip_hole(w, ws, io);
	if (rc)
		return rc;
	if (covered >= call->end || covered >= ws->limit)
		return 0;
	if (covered == io->offset)
		return nfsc_fail(c, -EPROTO,
				 "%s at %" PRIu64 " for %" PRIu32 " bytes: no progress (%" PRIu32
				 " segments, eof false)",
				 nfsc_op_name(io->op), io->offset, io->count, io->nsegs);
	return walk_push(c, ws, covered, call->end);
}

int nfsc_walk(struct nfsc *c, const struct nfsc_file *f, struct nfsc_walk *w)
{
	struct walk_state *ws = calloc(1, sizeof(*ws));
	unsigned int depth = w->depth, i;
	struct walk_range r;
	struct nfsc_io *io;
	int rc = 0;

	if (!ws)
		return nfsc_fail(c, -ENOMEM, "calloc: %s", strerror(ENOMEM));
	if (depth < 1)
		depth = 1;
	if (depth > c->nslots)
		depth = c->nslots;
	w->eof_at = UINT64_MAX;
	ws->next = w->offset;
	ws->limit = w->end;
	ws->op = w->op;
	if (ws->op == OP_READ_PLUS && c->minor < 2) {
		if (w->no_fallback) {
			free(ws);
			return nfsc_fail(c, -EOPNOTSUPP, "READ_PLUS: not in NFSv4.1");
		}
		ws->op = OP_READ;
		w->fell_back = true;
		nfsc_note(c, "NFSv4.1 has no READ_PLUS: reading with READ, holes come as zeros");
	}
	ws->probing = ws->op == OP_READ_PLUS;
	for (;;) {
		while (c->inflight < (ws->probing ? 1 : depth) && walk_next(c, ws, &r)) {
			for (i = 0; ws->call[i].busy; i++)
				;
			ws->call[i] = (struct walk_call){
				.io = { .op = ws->op,
					.offset = r.off,
					.count = (uint32_t)(r.end - r.off),
					.arg = &ws->call[i] },
				.end = r.end,
				.busy = true,
			};
			rc = nfsc_io_start(c, f, &ws->call[i].io);
			if (rc)
				goto out_drain;
			w->calls++;
		}
		if (!c->inflight)
			break;
		rc = nfsc_io_wait(c, &io);
		if (rc)
			goto out_drain;
		((struct walk_call *)io->arg)->busy = false;
		rc = walk_reply(c, w, ws, io->arg);
		if (rc)
			goto out_drain;
	}
	free(ws);
	return 0;
out_drain:
	nfsc_drain(c);
	free(ws);
	return rc;
}

/* One SEEK, nothing else in flight. */
static int seek_one(struct nfsc *c, const struct nfsc_file *f, struct nfsc_walk *w, uint64_t pos,
		    uint32_t what, struct nfsc_io *io)
{
	int rc;

	*io = (struct nfsc_io){ .op = OP_SEEK, .offset = pos, .what = what };
	rc = nfsc_io_start(c, f, io);
	if (!rc)
		rc = nfsc_io_wait(c, &io);
	w->calls++;
	if (rc || !io->status || io->status == NFS4ERR_NXIO)
		return rc;
	c->status = io->status;
	if (io->status == NFS4ERR_NOTSUPP || io->status == NFS4ERR_OP_ILLEGAL)
		return nfsc_fail(c, -EOPNOTSUPP, "SEEK: %s", nfsc_stat_name(io->status));
	return nfsc_fail(c, -EREMOTEIO, "SEEK(%s) from %" PRIu64 ": %s", what ? "HOLE" : "DATA",
			 pos, nfsc_stat_name(io->status));
}

static int seek_emit(struct nfsc_walk *w, uint32_t kind, uint64_t lo, uint64_t hi)
{
	struct nfsc_seg s = { .offset = lo, .length = hi - lo, .kind = kind };

	if (hi > w->end)
		s.length = w->end - lo;
	if (kind == NFSC_CONTENT_DATA)
		w->data_bytes += s.length;
	else
		w->hole_bytes += s.length;
	return w->seg(w->arg, &s);
}

int nfsc_seek_walk(struct nfsc *c, const struct nfsc_file *f, struct nfsc_walk *w)
{
	uint64_t pos = w->offset, data, hole;
	struct nfsc_io io;
	int rc;

	w->eof_at = UINT64_MAX;
	if (c->minor < 2)
		return nfsc_fail(c, -EOPNOTSUPP, "SEEK: not in NFSv4.1");
	while (pos < w->end) {
		rc = seek_one(c, f, w, pos, NFSC_CONTENT_DATA, &io);
		if (rc)
			return rc;
		/* no data from pos on: a hole to the end */
		if (io.status == NFS4ERR_NXIO || io.eof)
			return seek_emit(w, NFSC_CONTENT_HOLE, pos, w->end);
		data = io.seek_offset;
		if (data < pos)
			return nfsc_fail(c, -EPROTO,
					 "SEEK(DATA) from %" PRIu64 " answered %" PRIu64
					 ", before it",
					 pos, data);
		if (data > pos && (rc = seek_emit(w, NFSC_CONTENT_HOLE, pos, data)))
			return rc;
		if (data >= w->end)
			return 0;
		rc = seek_one(c, f, w, data, NFSC_CONTENT_HOLE, &io);
		if (rc)
			return rc;
		if (io.status == NFS4ERR_NXIO)
			return nfsc_fail(c, -EPROTO,
					 "SEEK(HOLE) from %" PRIu64
					 ", where SEEK(DATA) found data: NFS4ERR_NXIO",
					 data);
		hole = io.eof && io.seek_offset <= data ? w->end : io.seek_offset;
		if (hole <= data)
			return nfsc_fail(c, -EPROTO,
					 "SEEK(HOLE) from %" PRIu64 " answered %" PRIu64
					 ", where SEEK(DATA) found data",
					 data, hole);
		rc = seek_emit(w, NFSC_CONTENT_DATA, data, hole);
		if (rc)
			return rc;
		pos = hole;
	}
	return 0;
}
