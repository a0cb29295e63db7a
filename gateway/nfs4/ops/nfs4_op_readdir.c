// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * READDIR (RFC 7530 §16.24, RFC 8881 §18.23): the entries of a directory
 * of an export, or of a pseudo directory, with the attributes the client
 * asks for.
 *
 * Operation
 * ---------
 * Cookies. lacunad keeps no state between READDIRs. The cookie of an
 * entry is the position getdents64(2) reports after it (its d_off) plus
 * 3, so the cookies 0, 1 and 2, which RFC 8881 reserves, never name an
 * entry; a READDIR with cookie k opens the directory afresh and seeks to
 * k - 3 (d_off is what lseek(2) on a directory takes back, for ext4's
 * hash positions and XFS's offsets alike, and through FUSE). Cookies 1
 * and 2 are NFS4ERR_BAD_COOKIE, as is one the directory cannot seek to.
 * "." and ".." are never returned.
 *
 * The cookie verifier is derived from the directory's fileid: it is the
 * same for every READDIR of one directory, across restarts, which is what
 * cookies that are filesystem positions allow. A client that sends a
 * non-zero verifier other than the directory's with a cookie past 2 gets
 * NFS4ERR_NOT_SAME; a zero verifier is taken, as is any with cookie 0.
 *
 * Size. maxcount bounds READDIR4resok (cookieverf, the entries, the end
 * of the list and eof) and nfs4_reply_room() bounds what may still go
 * into the reply; an entry that would pass either is rolled back
 * (xdr_out_truncate) and ends the list with eof false. When not even one
 * entry fits the answer is NFS4ERR_TOOSMALL if maxcount was the tighter
 * bound, else the reply's limit is the problem (4.0: NFS4ERR_RESOURCE,
 * 4.1+: NFS4ERR_REP_TOO_BIG). dircount counts cookie and name bytes of
 * the entries as Linux nfsd does: 0 means no bound, and past the first
 * entry one that would exceed it is left for the next READDIR.
 *
 * Attributes. In a pseudo directory each entry's object comes from
 * gw_obj_lookup() (which crosses into an export). In an export an
 * entry's attributes come from the backing filesystem directly, through
 * a transient object over an O_PATH fd of the entry under the
 * directory's backing fd, closed once encoded and never cached: opening
 * it through the lacunafs mount, as LOOKUP does, makes lacunafs keep an
 * fd for every entry listed (until the kernel forgets the inode) and the
 * object cache one or two more, and a directory of 100,000 entries ran
 * out of fds (NFS4ERR_DELAY after some 18,700 entries). The handle is the
 * one LOOKUP gives (the backing handle, gw.h). Either way the object is
 * encoded by nfs4_enc_fattr(). An entry that vanished in between (ENOENT) is
 * skipped; another failure is encoded as rdattr_error when the client
 * asked for that attribute, and otherwise fails the whole READDIR, as
 * the RFCs and nfsd do.
 *
 * Pseudo directories list the pseudo nodes whose parent they are (a
 * node is a directory on the way to an export, or the place one is
 * mounted), in table order: node i has cookie 3 + i. Exports no rule
 * admits the client to, and entries whose lookup fails, are left out.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nfs4_attr.h"
#include "nfs4_ops.h"

#define RD_COOKIE_FIRST 3	   /* cookies 0..2 are reserved */
#define RD_BUF_SIZE (32 * 1024)	   /* getdents64 buffer */
#define RD_TRAILER 8		   /* no more entries (4) + eof (4) */
#define RD_HEAD NFS4_VERIFIER_SIZE /* cookieverf */

struct readdir_args {
	uint64_t cookie;
	uint8_t verf[NFS4_VERIFIER_SIZE];
	uint32_t dircount;
	uint32_t maxcount;
	struct nfs4_bitmap req;
};
_Static_assert(sizeof(struct readdir_args) <= NFS4_ARGS_MAX, "readdir args");

int nfs4_dec_readdir(struct xdr_in *x, void *args)
{
	struct readdir_args *a = args;

	if (xdr_dec_u64(x, &a->cookie) || xdr_dec_opaque_fixed_copy(x, a->verf, sizeof(a->verf)) ||
	    xdr_dec_u32(x, &a->dircount) || xdr_dec_u32(x, &a->maxcount) ||
	    nfs4_dec_bitmap(x, &a->req))
		return -EBADMSG;
	return 0;
}

/* One READDIR being answered. */
struct rd {
	struct nfs4_compound *c;
	struct gw_obj *dir;
	const struct readdir_args *a;
	size_t start;	     /* out->len before the cookieverf */
	size_t budget;	     /* bytes READDIR4resok may take */
	bool maxcount_bound; /* maxcount, not the reply, sets the budget */
	uint32_t dircount;   /* left of dircount; unbounded when !a->dircount */
	bool want_attrs;
	unsigned int n; /* entries encoded */
	bool stop;	/* no more entries this time (eof false) */
	uint32_t status;
};

enum rd_res {
	RD_ADDED,
	RD_SKIPPED,
	RD_FULL,  /* did not fit: end the list here */
	RD_ERROR, /* r->status */
};

static const uint8_t rd_zero_verf[NFS4_VERIFIER_SIZE];

/* The cookie verifier of @dir: a mix of its fileid, never zero. */
static void rd_verf(const struct gw_obj *dir, uint8_t v[NFS4_VERIFIER_SIZE])
{
	uint64_t x = (dir->fileid ^ 0x6c6163756e616466ULL) * 0x9e3779b97f4a7c15ULL;

	if (!x)
		x = 1;
	xdr_put_u32(v, (uint32_t)(x >> 32));
	xdr_put_u32(v + 4, (uint32_t)x);
}

/*
 * A transient object for entry @name of the real directory @dir, from the
 * backing filesystem (see the top of the file); rd_unpeek() closes it.
 */
static int rd_peek(const struct gw_obj *dir, const char *name, struct gw_obj *o)
{
	struct {
		struct file_handle fh;
		uint8_t buf[GW_FH_HANDLE_MAX];
	} h;
	struct stat st;
	int fd, mnt_id, err;

	fd = GW_FD_RETRY(openat(dir->bfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC));
	if (fd < 0)
		return -errno;
	h.fh.handle_bytes = GW_FH_HANDLE_MAX;
	if (fstat(fd, &st) < 0 || name_to_handle_at(fd, "", &h.fh, &mnt_id, AT_EMPTY_PATH) < 0) {
		err = errno == EOVERFLOW ? -ENAMETOOLONG : -errno;
		close(fd);
		return err;
	}
	memset(o, 0, sizeof(*o));
	atomic_init(&o->refs, 1);
	o->xp = dir->xp;
	o->pseudo = -1;
	o->fd = o->bfd = fd;
	o->rfd = -1;
	o->type = st.st_mode & S_IFMT;
	o->fileid = st.st_ino;
	gw_fh_make(dir->xp->fh_key, &o->fh, GW_FH_FILE, dir->xp->id, (uint32_t)h.fh.handle_type,
		   h.fh.f_handle, h.fh.handle_bytes);
	pthread_mutex_init(&o->lock, NULL);
	return 0;
}

static void rd_unpeek(struct gw_obj *o)
{
	pthread_mutex_destroy(&o->lock);
	close(o->fd);
}

/* The attributes of entry @name: an nfsstat4 of looking it up or encoding. */
static uint32_t rd_enc_attrs(struct rd *r, const char *name, int *lookup_err)
{
	struct nfs4_compound *c = r->c;
	struct gw_obj *o;
	uint32_t st;
	int rc;

	*lookup_err = 0;
	if (!r->want_attrs) {
		/* empty bitmap, empty attr_vals; c->out->err is checked by the caller */
		xdr_enc_u32(c->out, 0);
		xdr_enc_u32(c->out, 0);
		return NFS4_OK;
	}
	if (!gw_obj_is_pseudo(r->dir)) {
		struct gw_obj tmp;

		rc = rd_peek(r->dir, name, &tmp);
		if (rc) {
			*lookup_err = rc;
			return nfs4_errno(rc);
		}
		st = nfs4_enc_fattr(c, c->out, &tmp, &r->a->req);
		rd_unpeek(&tmp);
		return st;
	}
	rc = gw_obj_lookup(c->snap, r->dir, name, &o);
	if (rc) {
		*lookup_err = rc;
		return nfs4_errno(rc);
	}
	st = nfs4_enc_fattr(c, c->out, o, &r->a->req);
	gw_obj_put(o);
	return st;
}

/* Encode one entry4 (with its "value follows" word) or say why not. */
static enum rd_res rd_entry(struct rd *r, const char *name, uint64_t cookie)
{
	struct xdr_out *out = r->c->out;
	size_t namelen = strlen(name);
	uint32_t need = 0, st;
	struct xdr_pos pos, attrs;
	int lookup_err;

	if (namelen == 0 || namelen > NFS4_NAME_MAX)
		return RD_SKIPPED; /* no such names on Linux */
	if (r->a->dircount) {
		need = 8 + 4 + XDR_ALIGN(namelen);
		if (r->n && need > r->dircount)
			return RD_FULL;
	}
	xdr_out_getpos(out, &pos);
	if (xdr_enc_u32(out, 1) || xdr_enc_u64(out, cookie) ||
	    xdr_enc_string(out, name, (uint32_t)namelen, NFS4_NAME_MAX))
		goto out_full;
	xdr_out_getpos(out, &attrs);
	st = rd_enc_attrs(r, name, &lookup_err);
	if (st != NFS4_OK) {
		/* vanished since getdents, or hidden in a pseudo directory */
		if (st == NFS4ERR_NOENT || st == NFS4ERR_STALE ||
		    (gw_obj_is_pseudo(r->dir) && lookup_err)) {
			xdr_out_truncate(out, &pos);
			return RD_SKIPPED;
		}
		xdr_out_truncate(out, &attrs);
		if (!nfs4_enc_fattr_error(out, &r->a->req, st)) {
			xdr_out_truncate(out, &pos);
			r->status = st;
			return RD_ERROR;
		}
	}
	if (out->err || xdr_out_len(out) - r->start + RD_TRAILER > r->budget)
		goto out_full;
	r->n++;
	if (r->a->dircount) {
		r->dircount -= need < r->dircount ? need : r->dircount;
		if (r->dircount == 0)
			r->stop = true;
	}
	return RD_ADDED;

out_full:
	xdr_out_truncate(out, &pos);
	return RD_FULL;
}

/* Entries of a directory of an export from @cookie on; *eof when it was all read. */
static uint32_t rd_real(struct rd *r, bool *eof)
{
	uint64_t cookie = r->a->cookie;
	struct dirent64 *d;
	char *buf;
	ssize_t n, off;
	uint32_t st = NFS4_OK;
	int fd;

	*eof = false;
	fd = gw_obj_open(r->dir, O_RDONLY | O_DIRECTORY);
	if (fd < 0)
		return nfs4_errno(fd);
	if (cookie >= RD_COOKIE_FIRST &&
	    (cookie - RD_COOKIE_FIRST > (uint64_t)INT64_MAX ||
	     lseek(fd, (off_t)(cookie - RD_COOKIE_FIRST), SEEK_SET) < 0)) {
		st = NFS4ERR_BAD_COOKIE;
		goto out_close;
	}
	buf = malloc(RD_BUF_SIZE);
	if (!buf) {
		st = NFS4ERR_DELAY;
		goto out_close;
	}
	while (!r->stop) {
		n = getdents64(fd, buf, RD_BUF_SIZE);
		if (n < 0) {
			st = errno == EINVAL && cookie ? NFS4ERR_BAD_COOKIE : nfs4_errno(-errno);
			break;
		}
		if (n == 0) {
			*eof = true;
			break;
		}
		for (off = 0; off < n && !r->stop; off += d->d_reclen) {
			d = (struct dirent64 *)(buf + off);
			if (!strcmp(d->d_name, ".") || !strcmp(d->d_name, ".."))
				continue;
			switch (rd_entry(r, d->d_name, (uint64_t)d->d_off + RD_COOKIE_FIRST)) {
			case RD_ADDED:
			case RD_SKIPPED:
				break;
			case RD_FULL:
				r->stop = true;
				break;
			case RD_ERROR:
				st = r->status;
				r->stop = true;
				break;
			}
		}
	}
	free(buf);
out_close:
	close(fd);
	return st;
}

/* An export the client's address is not admitted to is not listed. */
static bool rd_pseudo_visible(const struct rd *r, const struct gw_pseudo *p)
{
	const struct gw_snap *s = r->c->snap;
	const struct gw_export_conf *exp;

	if (p->xport < 0)
		return true;
	exp = gw_export_conf_of(s, s->xports[p->xport]);
	return exp && gw_export_conf_match(exp, (const struct sockaddr *)&r->c->conn->peer);
}

/*
 * Entries of a pseudo directory from @cookie on: the nodes whose parent
 * it is, each either a pseudo directory or the place an export is
 * mounted (gw_obj_lookup then gives the export's root).
 */
static uint32_t rd_pseudo(struct rd *r, bool *eof)
{
	const struct gw_snap *s = r->c->snap;
	uint32_t node = (uint32_t)r->dir->pseudo;
	uint64_t cookie = r->a->cookie, idx;

	*eof = false;
	idx = cookie >= RD_COOKIE_FIRST ? cookie - RD_COOKIE_FIRST + 1 : 0;
	if (idx > GW_PSEUDO_MAX)
		return NFS4ERR_BAD_COOKIE;
	for (; idx < s->npseudo && !r->stop; idx++) {
		if (idx == node || s->pseudo[idx].parent != node)
			continue;
		if (!rd_pseudo_visible(r, &s->pseudo[idx]))
			continue;
		switch (rd_entry(r, s->pseudo[idx].name, idx + RD_COOKIE_FIRST)) {
		case RD_ADDED:
		case RD_SKIPPED:
			break;
		case RD_FULL:
			r->stop = true;
			break;
		case RD_ERROR:
			return r->status;
		}
	}
	if (!r->stop)
		*eof = true;
	return NFS4_OK;
}

uint32_t nfs4_run_readdir(struct nfs4_compound *c, void *args)
{
	const struct readdir_args *a = args;
	uint8_t verf[NFS4_VERIFIER_SIZE];
	struct gw_obj *dir = c->cfh;
	struct rd r = { .c = c, .dir = dir, .a = a, .dircount = a->dircount };
	size_t room;
	bool eof;
	uint32_t st;
	int rc;

	if (dir->type != S_IFDIR)
		return NFS4ERR_NOTDIR;
	st = nfs4_attr_check_get(&a->req); /* no write-only attributes */
	if (st)
		return st;
	if (a->cookie == 1 || a->cookie == 2)
		return NFS4ERR_BAD_COOKIE;
	rd_verf(dir, verf);
	/* a zero verifier is no verifier: clients that keep none send it */
	if (a->cookie >= RD_COOKIE_FIRST && memcmp(a->verf, rd_zero_verf, NFS4_VERIFIER_SIZE) &&
	    memcmp(a->verf, verf, NFS4_VERIFIER_SIZE))
		return NFS4ERR_NOT_SAME;

	room = nfs4_reply_room(c);
	r.maxcount_bound = a->maxcount <= room;
	r.budget = r.maxcount_bound ? a->maxcount : room;
	if (r.budget < RD_HEAD + RD_TRAILER)
		return r.maxcount_bound ? NFS4ERR_TOOSMALL : nfs4_enc_status(c, -EMSGSIZE);
	r.want_attrs = a->req.w[0] | a->req.w[1] | a->req.w[2];

	r.start = xdr_out_len(c->out);
	rc = xdr_enc_opaque_fixed(c->out, verf, sizeof(verf));
	if (rc)
		return nfs4_enc_status(c, rc);

	st = gw_obj_is_pseudo(dir) ? rd_pseudo(&r, &eof) : rd_real(&r, &eof);
	if (st)
		return st;
	if (r.n == 0 && !eof)
		return r.maxcount_bound ? NFS4ERR_TOOSMALL : nfs4_enc_status(c, -EMSGSIZE);

	rc = xdr_enc_u32(c->out, 0) ?: xdr_enc_bool(c->out, eof);
	if (rc)
		return nfs4_enc_status(c, rc);
	return NFS4_OK;
}
