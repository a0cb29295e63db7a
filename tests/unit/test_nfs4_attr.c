// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests of lacunad's NFSv4 attributes (gateway/nfs4/nfs4_attr.c): owner
 * strings; decoding a fattr4 to set, with bits out of range or not
 * supported, read-only attributes, values cut short at every byte,
 * bytes left over, bad owners and times; encoding fattr4 of files, an
 * export root and a pseudo directory made by hand over real fds in a
 * temporary directory, checked against stat(2) value by value (bitmap,
 * opaque length, ascending order, minor-version differences, the size
 * bound); applying size, mode, owner and times; and the VERIFY
 * comparison.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cmocka.h>

#include "nfs4_attr.h"
#include "lt_wire.h"

/* ---------------------------------------------------------------- building input */

static void putstr(struct lt_wire *w, const char *s)
{
	lt_putopaque(w, s, (uint32_t)strlen(s));
}

/* a fattr4: bitmap of @nw words, then @vals as the opaque */
static void putfattr(struct lt_wire *w, const uint32_t *bm, uint32_t nw, const struct lt_wire *vals)
{
	uint32_t i;

	lt_put32(w, nw);
	for (i = 0; i < nw; i++)
		lt_put32(w, bm[i]);
	lt_putopaque(w, vals->b, (uint32_t)vals->n);
}

static uint32_t dec_sattr_buf(const struct lt_wire *w, size_t len, struct nfs4_sattr *sa, size_t *pos)
{
	struct xdr_in x;
	uint32_t st;

	xdr_in_init(&x, w->b, len);
	st = nfs4_dec_sattr(&x, sa);
	if (pos)
		*pos = x.pos;
	return st;
}

/* ---------------------------------------------------------------- owners */

static void test_owner_parse(void **state)
{
	static const struct {
		const char *s;
		int ok;
		uint32_t id;
	} t[] = {
		{ "0", 1, 0 },
		{ "1000", 1, 1000 },
		{ "007", 1, 7 },
		{ "4294967294", 1, 4294967294u },
		{ "1000@example.org", 1, 1000 },
		{ "65534@localdomain", 1, 65534 },
		{ "4294967295", 0, 0 }, /* (uint32_t)-1 is no id */
		{ "99999999999999999999999", 0, 0 },
		{ "", 0, 0 },
		{ "@example.org", 0, 0 },
		{ "1000@", 0, 0 },
		{ "1000@a@b", 0, 0 },
		{ "10a0", 0, 0 },
		{ "-1", 0, 0 },
		{ "+1", 0, 0 },
		{ " 1", 0, 0 },
		{ "1 ", 0, 0 },
		{ "root", 0, 0 },
		{ "nobody@example.org", 0, 0 },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		uint32_t id = 12345;
		int r = nfs4_owner_parse((const uint8_t *)t[i].s, strlen(t[i].s), &id);

		if (t[i].ok) {
			assert_int_equal(r, 0);
			assert_int_equal(id, t[i].id);
		} else {
			assert_int_equal(r, -EINVAL);
			assert_int_equal(id, 12345);
		}
	}
	/* a NUL inside is not a number, nor part of a domain */
	assert_int_equal(nfs4_owner_parse((const uint8_t *)"10\0000", 4, &(uint32_t){ 0 }),
			 -EINVAL);
	assert_int_equal(nfs4_owner_parse((const uint8_t *)"1@a\0b", 5, &(uint32_t){ 0 }), -EINVAL);
}

/* ---------------------------------------------------------------- decoding a set */

#define BM1(a) (1U << ((a)-32))

/* every settable attribute, valid */
static void full_set(struct lt_wire *w, size_t *vals_len)
{
	struct lt_wire v = { .n = 0 };
	uint32_t bm[2] = { 1U << FATTR4_SIZE,
			   BM1(FATTR4_MODE) | BM1(FATTR4_OWNER) | BM1(FATTR4_OWNER_GROUP) |
				   BM1(FATTR4_TIME_ACCESS_SET) | BM1(FATTR4_TIME_MODIFY_SET) };

	lt_put64(&v, 123456789012ULL); /* size */
	lt_put32(&v, 0104755);	    /* mode, with a type bit to be dropped */
	putstr(&v, "1000");
	putstr(&v, "100@example.org");
	lt_put32(&v, SET_TO_SERVER_TIME4);
	lt_put32(&v, SET_TO_CLIENT_TIME4);
	lt_put64(&v, (uint64_t)-5); /* before 1970 */
	lt_put32(&v, 999999999);
	w->n = 0;
	putfattr(w, bm, 2, &v);
	if (vals_len)
		*vals_len = v.n;
}

static void test_dec_sattr_ok(void **state)
{
	struct nfs4_sattr sa;
	struct lt_wire w;
	size_t pos;

	(void)state;
	full_set(&w, NULL);
	assert_int_equal(dec_sattr_buf(&w, w.n, &sa, &pos), NFS4_OK);
	assert_int_equal(pos, w.n);
	assert_true(nfs4_bm_isset(&sa.mask, FATTR4_SIZE));
	assert_true(nfs4_bm_isset(&sa.mask, FATTR4_TIME_MODIFY_SET));
	assert_int_equal(sa.size, 123456789012ULL);
	assert_int_equal(sa.mode, 04755);
	assert_int_equal(sa.uid, 1000);
	assert_int_equal(sa.gid, 100);
	assert_int_equal(sa.atime_how, SET_TO_SERVER_TIME4);
	assert_int_equal(sa.atime.tv_nsec, UTIME_NOW);
	assert_int_equal(sa.mtime_how, SET_TO_CLIENT_TIME4);
	assert_int_equal(sa.mtime.tv_sec, -5);
	assert_int_equal(sa.mtime.tv_nsec, 999999999);

	/* an empty set is fine; so are trailing words of zero in the bitmap */
	{
		struct lt_wire e = { .n = 0 }, v = { .n = 0 };
		uint32_t bm[8] = { 0 };

		putfattr(&e, bm, 8, &v);
		assert_int_equal(dec_sattr_buf(&e, e.n, &sa, &pos), NFS4_OK);
		assert_int_equal(pos, e.n);
		bm[1] = BM1(FATTR4_MODE);
		lt_put32(&v, 0644);
		e.n = 0;
		putfattr(&e, bm, 8, &v);
		assert_int_equal(dec_sattr_buf(&e, e.n, &sa, &pos), NFS4_OK);
		assert_int_equal(sa.mode, 0644);
	}
}

static uint32_t dec_one(uint32_t w0, uint32_t w1, uint32_t w2, uint32_t nw, const struct lt_wire *v)
{
	uint32_t bm[3] = { w0, w1, w2 };
	struct nfs4_sattr sa;
	struct lt_wire w = { .n = 0 };
	size_t pos;
	uint32_t st;

	putfattr(&w, bm, nw, v);
	st = dec_sattr_buf(&w, w.n, &sa, &pos);
	if (st != NFS4ERR_BADXDR)
		assert_int_equal(pos, w.n); /* the whole fattr4 consumed */
	return st;
}

static void test_dec_sattr_notsupp(void **state)
{
	struct lt_wire v = { .n = 0 };
	uint32_t i;

	(void)state;
	lt_put32(&v, 0);
	/* not supported: ACL, archive, hidden, system, time_backup, time_create... */
	assert_int_equal(dec_one(1U << FATTR4_ACL, 0, 0, 1, &v), NFS4ERR_ATTRNOTSUPP);
	assert_int_equal(dec_one(1U << FATTR4_ARCHIVE, 0, 0, 1, &v), NFS4ERR_ATTRNOTSUPP);
	assert_int_equal(dec_one(1U << FATTR4_HIDDEN, 0, 0, 1, &v), NFS4ERR_ATTRNOTSUPP);
	assert_int_equal(dec_one(0, BM1(FATTR4_SYSTEM), 0, 2, &v), NFS4ERR_ATTRNOTSUPP);
	assert_int_equal(dec_one(0, BM1(FATTR4_TIME_CREATE), 0, 2, &v), NFS4ERR_ATTRNOTSUPP);
	assert_int_equal(dec_one(0, 0, 1U << (FATTR4_MODE_SET_MASKED - 64), 3, &v),
			 NFS4ERR_ATTRNOTSUPP);
	assert_int_equal(dec_one(0, 0, 1U << 31, 3, &v), NFS4ERR_ATTRNOTSUPP);
	/* a supported settable attribute with an unsupported one: the latter wins */
	assert_int_equal(dec_one(1U << FATTR4_ACL, BM1(FATTR4_MODE), 0, 2, &v),
			 NFS4ERR_ATTRNOTSUPP);
	/* bits in words this server does not know */
	for (i = 3; i < NFS4_BITMAP_WIRE_MAX; i++) {
		uint32_t bm[NFS4_BITMAP_WIRE_MAX] = { 0 };
		struct lt_wire w = { .n = 0 };
		struct nfs4_sattr sa;

		bm[i] = 1;
		putfattr(&w, bm, i + 1, &v);
		assert_int_equal(dec_sattr_buf(&w, w.n, &sa, NULL), NFS4ERR_ATTRNOTSUPP);
	}
}

static void test_dec_sattr_readonly(void **state)
{
	static const unsigned int ro[] = {
		FATTR4_SUPPORTED_ATTRS,
		FATTR4_TYPE,
		FATTR4_CHANGE,
		FATTR4_FSID,
		FATTR4_FILEID,
		FATTR4_FILEHANDLE,
		FATTR4_NUMLINKS,
		FATTR4_SPACE_USED,
		FATTR4_TIME_ACCESS,
		FATTR4_TIME_MODIFY,
		FATTR4_TIME_METADATA,
		FATTR4_MOUNTED_ON_FILEID,
		FATTR4_RDATTR_ERROR,
		FATTR4_LEASE_TIME,
		FATTR4_SUPPATTR_EXCLCREAT,
		FATTR4_FS_LAYOUT_TYPES,
	};
	struct lt_wire v = { .n = 0 };
	size_t i;

	(void)state;
	lt_put64(&v, 0);
	for (i = 0; i < sizeof(ro) / sizeof(ro[0]); i++) {
		uint32_t bm[3] = { 0 };

		bm[ro[i] / 32] = 1U << (ro[i] % 32);
		assert_int_equal(dec_one(bm[0], bm[1], bm[2], 3, &v), NFS4ERR_INVAL);
		/* with a writable one as well */
		bm[1] |= BM1(FATTR4_MODE);
		assert_int_equal(dec_one(bm[0], bm[1], bm[2], 3, &v), NFS4ERR_INVAL);
	}
}

static void test_dec_sattr_truncated(void **state)
{
	struct lt_wire w, v;
	struct nfs4_sattr sa;
	size_t len, vals_len, cut;
	uint32_t bm[2];

	(void)state;
	/* the record ends anywhere inside the fattr4 */
	full_set(&w, &vals_len);
	for (len = 0; len < w.n; len++)
		assert_int_equal(dec_sattr_buf(&w, len, &sa, NULL), NFS4ERR_BADXDR);

	/* a well-formed opaque whose values stop early: every cut is BADXDR */
	full_set(&w, &vals_len);
	bm[0] = xdr_get_u32(w.b + 4);
	bm[1] = xdr_get_u32(w.b + 8);
	for (cut = 0; cut < vals_len; cut += 4) {
		memset(&v, 0, sizeof(v));
		memcpy(v.b, w.b + 16, cut);
		v.n = cut;
		assert_int_equal(dec_one(bm[0], bm[1], 0, 2, &v), NFS4ERR_BADXDR);
	}
	/* and bytes left after the last value */
	memset(&v, 0, sizeof(v));
	memcpy(v.b, w.b + 16, vals_len);
	v.n = vals_len;
	lt_put32(&v, 0);
	assert_int_equal(dec_one(bm[0], bm[1], 0, 2, &v), NFS4ERR_BADXDR);
	/* an odd length: one stray byte */
	v.n = vals_len + 1;
	assert_int_equal(dec_one(bm[0], bm[1], 0, 2, &v), NFS4ERR_BADXDR);
	/* values but no attribute */
	memset(&v, 0, sizeof(v));
	lt_put32(&v, 0644);
	assert_int_equal(dec_one(0, 0, 0, 0, &v), NFS4ERR_BADXDR);
}

static void test_dec_sattr_bounds(void **state)
{
	struct nfs4_sattr sa;
	struct lt_wire w = { .n = 0 };

	(void)state;
	/* more bitmap words than accepted */
	lt_put32(&w, NFS4_BITMAP_WIRE_MAX + 1);
	for (int i = 0; i < NFS4_BITMAP_WIRE_MAX + 1; i++)
		lt_put32(&w, 0);
	lt_put32(&w, 0);
	assert_int_equal(dec_sattr_buf(&w, w.n, &sa, NULL), NFS4ERR_BADXDR);
	/* a huge bitmap count */
	w.n = 0;
	lt_put32(&w, 0xffffffff);
	lt_put32(&w, 0);
	assert_int_equal(dec_sattr_buf(&w, w.n, &sa, NULL), NFS4ERR_BADXDR);
	/* attr_vals past NFS4_ATTRLIST_MAX, even if the bytes are there */
	w.n = 0;
	lt_put32(&w, 2);
	lt_put32(&w, 0);
	lt_put32(&w, BM1(FATTR4_MODE));
	lt_put32(&w, NFS4_ATTRLIST_MAX + 4);
	memset(w.b + w.n, 0, NFS4_ATTRLIST_MAX + 4);
	w.n += NFS4_ATTRLIST_MAX + 4;
	assert_int_equal(dec_sattr_buf(&w, w.n, &sa, NULL), NFS4ERR_BADXDR);
	/* an opaque length past the record */
	w.n = 0;
	lt_put32(&w, 2);
	lt_put32(&w, 0);
	lt_put32(&w, BM1(FATTR4_MODE));
	lt_put32(&w, 0xfffffffc);
	lt_put32(&w, 0644);
	assert_int_equal(dec_sattr_buf(&w, w.n, &sa, NULL), NFS4ERR_BADXDR);
}

static void test_dec_sattr_values(void **state)
{
	struct lt_wire v;

	(void)state;
	/* owners */
	v.n = 0;
	putstr(&v, "alice");
	assert_int_equal(dec_one(0, BM1(FATTR4_OWNER), 0, 2, &v), NFS4ERR_BADOWNER);
	assert_int_equal(dec_one(0, BM1(FATTR4_OWNER_GROUP), 0, 2, &v), NFS4ERR_BADOWNER);
	v.n = 0;
	putstr(&v, "");
	/* no name at all is not a name that does not map: INVAL (as nfsd) */
	assert_int_equal(dec_one(0, BM1(FATTR4_OWNER), 0, 2, &v), NFS4ERR_INVAL);
	assert_int_equal(dec_one(0, BM1(FATTR4_OWNER_GROUP), 0, 2, &v), NFS4ERR_INVAL);
	v.n = 0;
	putstr(&v, "4294967295");
	assert_int_equal(dec_one(0, BM1(FATTR4_OWNER), 0, 2, &v), NFS4ERR_BADOWNER);
	/* a string whose length runs past the values */
	v.n = 0;
	lt_put32(&v, 100);
	lt_put32(&v, 0x31303030);
	assert_int_equal(dec_one(0, BM1(FATTR4_OWNER), 0, 2, &v), NFS4ERR_BADXDR);
	/* times */
	v.n = 0;
	lt_put32(&v, SET_TO_CLIENT_TIME4);
	lt_put64(&v, 1);
	lt_put32(&v, 1000000000);
	assert_int_equal(dec_one(0, BM1(FATTR4_TIME_MODIFY_SET), 0, 2, &v), NFS4ERR_INVAL);
	v.n = 0;
	lt_put32(&v, 2); /* no such time_how4 */
	assert_int_equal(dec_one(0, BM1(FATTR4_TIME_ACCESS_SET), 0, 2, &v), NFS4ERR_BADXDR);
	v.n = 0;
	lt_put32(&v, SET_TO_SERVER_TIME4);
	lt_put64(&v, 1); /* server time has no value: these are left over */
	lt_put32(&v, 0);
	assert_int_equal(dec_one(0, BM1(FATTR4_TIME_ACCESS_SET), 0, 2, &v), NFS4ERR_BADXDR);
}

/* ---------------------------------------------------------------- objects over real files */

struct fx {
	char dir[64];
	struct chunk_pool *pool;
	struct chunk_owner owner;
	struct xdr_carver carver;
	struct xdr_out out;
	struct gw_config cfg;
	struct gw_srv srv;
	struct gw_snap snap;
	struct gw_export xp, *xps[1];
	int pseudo_node[1], cfg_idx[1];
	struct nfs4_compound c;
};

static int fx_setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	struct stat st;

	if (!f)
		return -1;
	strcpy(f->dir, "/tmp/test_nfs4_attr.XXXXXX");
	if (!mkdtemp(f->dir))
		return -1;
	if (chunk_pool_create(&f->pool, 4096, 16, 0))
		return -1;
	chunk_owner_init(&f->owner, f->pool, 0);
	xdr_carver_init(&f->carver, f->pool, &f->owner);
	xdr_out_init(&f->out, &f->carver, 65536);

	f->cfg.lease_time = 45;
	f->cfg.max_record = GW_RECORD_DEFAULT;
	f->snap.cfg = &f->cfg;
	f->srv.boot_ns = 1700000000ULL * 1000000000ULL;
	f->snap.npseudo = 2;
	f->snap.pseudo[0].fileid = 1;
	f->snap.pseudo[0].xport = -1;
	f->snap.pseudo[1].fileid = 2;
	f->snap.pseudo[1].parent = 0;
	f->snap.pseudo[1].xport = 0;
	/* the export, mounted on pseudo node 1 */
	f->xps[0] = &f->xp;
	f->snap.xports = f->xps;
	f->pseudo_node[0] = 1;
	f->snap.pseudo_node = f->pseudo_node;
	f->cfg_idx[0] = 0;
	f->snap.cfg_idx = f->cfg_idx;
	f->snap.nslots = 1;

	f->xp.fd = f->xp.bfd = open(f->dir, O_PATH | O_DIRECTORY);
	if (f->xp.fd < 0 || fstat(f->xp.fd, &st))
		return -1;
	f->xp.fsid_major = 0x1234;
	f->xp.fsid_minor = 0x5678;
	f->xp.root_ino = st.st_ino;
	f->xp.root_fh.len = 20;
	memset(f->xp.root_fh.data, 0xab, 20);
	f->xp.slot = 0;

	f->c.srv = &f->srv;
	f->c.snap = &f->snap;
	f->c.out = &f->out;
	f->c.minor = 2;
	f->c.resp_max = 65536;
	*state = f;
	return 0;
}

static int fx_teardown(void **state)
{
	struct fx *f = *state;
	char cmd[128];

	xdr_out_release(&f->out);
	xdr_carver_fini(&f->carver);
	chunk_pool_destroy(f->pool);
	close(f->xp.fd);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
	if (system(cmd) != 0)
		return -1;
	free(f);
	return 0;
}

/* An object for @name in the fixture's directory ("" for the directory itself). */
static void obj_make(struct fx *f, const char *name, struct gw_obj *o)
{
	struct stat st;

	memset(o, 0, sizeof(*o));
	o->fd = *name ? openat(f->xp.fd, name, O_PATH | O_NOFOLLOW) : dup(f->xp.fd);
	assert_true(o->fd >= 0);
	o->bfd = o->fd;
	o->xp = &f->xp;
	o->pseudo = -1;
	o->rfd = -1;
	assert_int_equal(fstatat(o->fd, "", &st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW), 0);
	o->type = st.st_mode & S_IFMT;
	o->fileid = st.st_ino;
	if (*name) {
		o->fh.len = NFS4_FHSIZE; /* the largest: fattr4 size bound */
		memset(o->fh.data, 0x5a, NFS4_FHSIZE);
		memcpy(o->fh.data, &st.st_ino, sizeof(st.st_ino));
	} else {
		o->fh = f->xp.root_fh;
	}
}

static void obj_drop(struct gw_obj *o)
{
	if (o->fd >= 0)
		close(o->fd);
}

static void make_file(struct fx *f, const char *name, size_t size, mode_t mode)
{
	int dfd = open(f->dir, O_DIRECTORY);
	int fd;

	assert_true(dfd >= 0);
	fd = openat(dfd, name, O_CREAT | O_WRONLY | O_TRUNC, mode);
	close(dfd);
	assert_true(fd >= 0);
	if (size)
		assert_int_equal(pwrite(fd, "x", 1, (off_t)size - 1), 1);
	assert_int_equal(fchmod(fd, mode), 0);
	close(fd);
}

/* The reply flattened, from offset @from. */
static size_t flat(struct fx *f, size_t from, uint8_t *buf, size_t size)
{
	size_t len = xdr_out_len(&f->out) - from;

	assert_int_equal(f->out.err, 0);
	assert_true(len <= size);
	assert_int_equal(xdr_out_copy(&f->out, from, buf, len), len);
	return len;
}

/* A parsed fattr4. */
struct fattr {
	struct nfs4_bitmap bm;
	uint32_t nw;
	struct xdr_in v;
};

static void parse_fattr(const uint8_t *buf, size_t len, struct fattr *fa)
{
	struct xdr_in x;
	const uint8_t *p;
	uint32_t vlen, i;

	memset(fa, 0, sizeof(*fa));
	xdr_in_init(&x, buf, len);
	assert_int_equal(xdr_dec_u32(&x, &fa->nw), 0);
	assert_true(fa->nw <= NFS4_BITMAP_MAX);
	for (i = 0; i < fa->nw; i++)
		assert_int_equal(xdr_dec_u32(&x, &fa->bm.w[i]), 0);
	if (fa->nw)
		assert_int_not_equal(fa->bm.w[fa->nw - 1], 0); /* no trailing zero words */
	assert_int_equal(xdr_dec_opaque(&x, &p, &vlen, NFS4_ATTRLIST_MAX), 0);
	assert_int_equal(xdr_in_left(&x), 0); /* nothing after the fattr4 */
	xdr_in_init(&fa->v, p, vlen);
}

static uint32_t g32(struct xdr_in *v)
{
	uint32_t x;

	assert_int_equal(xdr_dec_u32(v, &x), 0);
	return x;
}

static uint64_t g64(struct xdr_in *v)
{
	uint64_t x;

	assert_int_equal(xdr_dec_u64(v, &x), 0);
	return x;
}

static void gstr(struct xdr_in *v, char *dst, size_t size)
{
	assert_int_equal(xdr_dec_string_copy(v, dst, size, (uint32_t)size - 1), 0);
}

static void gtime(struct xdr_in *v, const struct timespec *want)
{
	int64_t s;

	assert_int_equal(xdr_dec_i64(v, &s), 0);
	assert_int_equal(s, want->tv_sec);
	assert_int_equal(g32(v), want->tv_nsec);
}

/* What a Linux client asks for every file (nfs4_fattr_bitmap). */
static void linux_bitmap(struct nfs4_bitmap *bm)
{
	static const unsigned int a[] = {
		FATTR4_TYPE,	      FATTR4_CHANGE,	  FATTR4_SIZE,
		FATTR4_FSID,	      FATTR4_FILEID,	  FATTR4_MODE,
		FATTR4_NUMLINKS,      FATTR4_OWNER,	  FATTR4_OWNER_GROUP,
		FATTR4_RAWDEV,	      FATTR4_SPACE_USED,  FATTR4_TIME_ACCESS,
		FATTR4_TIME_METADATA, FATTR4_TIME_MODIFY, FATTR4_MOUNTED_ON_FILEID,
	};
	size_t i;

	memset(bm, 0, sizeof(*bm));
	for (i = 0; i < sizeof(a) / sizeof(a[0]); i++)
		nfs4_bm_set(bm, a[i]);
}

static void test_enc_file(void **state)
{
	struct fx *f = *state;
	struct gw_obj o;
	struct nfs4_bitmap req;
	struct fattr fa;
	struct stat st;
	uint8_t buf[1024];
	char s[32];
	size_t len;

	make_file(f, "f", 100000, 0640);
	obj_make(f, "f", &o);
	assert_int_equal(fstatat(o.fd, "", &st, AT_EMPTY_PATH), 0);
	linux_bitmap(&req);
	nfs4_bm_set(&req, FATTR4_TIME_ACCESS_SET); /* write-only: never encoded */
	nfs4_bm_set(&req, FATTR4_ACL);		   /* not supported: left out */
	nfs4_bm_set(&req, 95);

	assert_int_equal(nfs4_enc_fattr(&f->c, &f->out, &o, &req), NFS4_OK);
	len = flat(f, 0, buf, sizeof(buf));
	parse_fattr(buf, len, &fa);
	linux_bitmap(&req);
	assert_int_equal(fa.nw, 2);
	assert_memory_equal(fa.bm.w, req.w, sizeof(req.w));
	assert_int_equal(g32(&fa.v), NF4REG);
	assert_int_equal(g64(&fa.v), (uint64_t)st.st_ctim.tv_sec * 1000000000ULL +
					     (uint64_t)st.st_ctim.tv_nsec);
	assert_int_equal(g64(&fa.v), 100000);
	assert_int_equal(g64(&fa.v), 0x1234);
	assert_int_equal(g64(&fa.v), 0x5678);
	assert_int_equal(g64(&fa.v), st.st_ino);
	assert_int_equal(g32(&fa.v), 0640);
	assert_int_equal(g32(&fa.v), st.st_nlink);
	gstr(&fa.v, s, sizeof(s));
	snprintf((char *)buf, sizeof(buf), "%u", (unsigned)st.st_uid);
	assert_string_equal(s, (char *)buf);
	gstr(&fa.v, s, sizeof(s));
	snprintf((char *)buf, sizeof(buf), "%u", (unsigned)st.st_gid);
	assert_string_equal(s, (char *)buf);
	assert_int_equal(g32(&fa.v), 0); /* rawdev */
	assert_int_equal(g32(&fa.v), 0);
	assert_int_equal(g64(&fa.v), (uint64_t)st.st_blocks * 512);
	gtime(&fa.v, &st.st_atim);
	gtime(&fa.v, &st.st_ctim);
	gtime(&fa.v, &st.st_mtim);
	assert_int_equal(g64(&fa.v), st.st_ino); /* mounted_on_fileid: not a mount */
	assert_int_equal(xdr_in_left(&fa.v), 0);
	obj_drop(&o);
}

/* every attribute this server supports, for each minor version */
static void test_enc_all(void **state)
{
	struct fx *f = *state;
	struct nfs4_bitmap req, supp;
	struct gw_obj o;
	struct fattr fa;
	uint8_t buf[2048];
	uint32_t minor;
	size_t len, from;

	make_file(f, "f", 5, 0644);
	obj_make(f, "f", &o);
	memset(&req, 0xff, sizeof(req));
	for (minor = 0; minor <= NFS4_MINOR_MAX; minor++) {
		struct nfs4_bitmap got;
		struct xdr_in x;

		f->c.minor = minor;
		from = xdr_out_len(&f->out);
		assert_int_equal(nfs4_enc_fattr(&f->c, &f->out, &o, &req), NFS4_OK);
		len = flat(f, from, buf, sizeof(buf));
		assert_true(len <= NFS4_FATTR_ENC_MAX);
		parse_fattr(buf, len, &fa);
		nfs4_attr_supported(minor, &supp);
		supp.w[1] &= ~(BM1(FATTR4_TIME_ACCESS_SET) | BM1(FATTR4_TIME_MODIFY_SET));
		assert_memory_equal(fa.bm.w, supp.w, sizeof(supp.w));
		/* the first value, supported_attrs, says the same without the write-only cut */
		xdr_in_init(&x, fa.v.base, fa.v.len);
		nfs4_attr_supported(minor, &supp);
		memset(&got, 0, sizeof(got));
		{
			bool beyond;

			assert_int_equal(nfs4_dec_attrmask(&x, &got, &beyond), 0);
			assert_false(beyond);
		}
		assert_memory_equal(got.w, supp.w, sizeof(supp.w));
		/* 4.0 has no 4.1 attribute */
		if (minor == 0) {
			assert_false(nfs4_bm_isset(&got, FATTR4_SUPPATTR_EXCLCREAT));
			assert_false(nfs4_bm_isset(&got, FATTR4_FS_LAYOUT_TYPES));
		} else {
			assert_true(nfs4_bm_isset(&got, FATTR4_SUPPATTR_EXCLCREAT));
		}
	}
	obj_drop(&o);
}

/* the constant and fsinfo/pathconf attributes a Linux client reads at mount */
static void test_enc_fsinfo(void **state)
{
	struct fx *f = *state;
	struct nfs4_bitmap req;
	struct gw_obj o;
	struct fattr fa;
	struct statfs sf;
	uint8_t buf[1024];
	size_t len;
	uint64_t unit;
	static const unsigned int a[] = {
		FATTR4_FH_EXPIRE_TYPE,
		FATTR4_LINK_SUPPORT,
		FATTR4_SYMLINK_SUPPORT,
		FATTR4_NAMED_ATTR,
		FATTR4_UNIQUE_HANDLES,
		FATTR4_LEASE_TIME,
		FATTR4_RDATTR_ERROR,
		FATTR4_ACLSUPPORT,
		FATTR4_CANSETTIME,
		FATTR4_CASE_INSENSITIVE,
		FATTR4_CASE_PRESERVING,
		FATTR4_CHOWN_RESTRICTED,
		FATTR4_FILEHANDLE,
		FATTR4_FILES_TOTAL,
		FATTR4_HOMOGENEOUS,
		FATTR4_MAXFILESIZE,
		FATTR4_MAXLINK,
		FATTR4_MAXNAME,
		FATTR4_MAXREAD,
		FATTR4_MAXWRITE,
		FATTR4_NO_TRUNC,
		FATTR4_SPACE_TOTAL,
		FATTR4_TIME_DELTA,
		FATTR4_FS_LAYOUT_TYPES,
		FATTR4_SUPPATTR_EXCLCREAT,
	};
	struct nfs4_bitmap ex;
	uint8_t fh[NFS4_FHSIZE];
	const uint8_t *p;
	uint32_t n;
	bool beyond;
	size_t i;

	obj_make(f, "", &o);
	memset(&req, 0, sizeof(req));
	for (i = 0; i < sizeof(a) / sizeof(a[0]); i++)
		nfs4_bm_set(&req, a[i]);
	assert_int_equal(nfs4_enc_fattr(&f->c, &f->out, &o, &req), NFS4_OK);
	len = flat(f, 0, buf, sizeof(buf));
	parse_fattr(buf, len, &fa);
	assert_memory_equal(fa.bm.w, req.w, sizeof(req.w));
	assert_int_equal(g32(&fa.v), FH4_PERSISTENT);
	assert_int_equal(g32(&fa.v), 1); /* link_support */
	assert_int_equal(g32(&fa.v), 1); /* symlink_support */
	assert_int_equal(g32(&fa.v), 0); /* named_attr */
	assert_int_equal(g32(&fa.v), 1); /* unique_handles */
	assert_int_equal(g32(&fa.v), 45);
	assert_int_equal(g32(&fa.v), NFS4_OK);
	assert_int_equal(g32(&fa.v), 0); /* aclsupport */
	assert_int_equal(g32(&fa.v), 1); /* cansettime */
	assert_int_equal(g32(&fa.v), 0); /* case_insensitive */
	assert_int_equal(g32(&fa.v), 1); /* case_preserving */
	assert_int_equal(g32(&fa.v), 1); /* chown_restricted */
	assert_int_equal(xdr_dec_opaque(&fa.v, &p, &n, NFS4_FHSIZE), 0);
	assert_int_equal(n, f->xp.root_fh.len);
	memcpy(fh, p, n);
	assert_memory_equal(fh, f->xp.root_fh.data, n);
	assert_int_equal(fstatfs(o.fd, &sf), 0);
	assert_int_equal(g64(&fa.v), sf.f_files);
	assert_int_equal(g32(&fa.v), 1);	 /* homogeneous */
	assert_true(g64(&fa.v) >= (1ULL << 40)); /* maxfilesize */
	assert_true(g32(&fa.v) >= 255);		 /* maxlink */
	assert_int_equal(g32(&fa.v), 255);	 /* maxname */
	assert_int_equal(g64(&fa.v), 1024 * 1024); /* maxread: the default max_record's */
	assert_int_equal(g64(&fa.v), 1024 * 1024); /* maxwrite */
	assert_int_equal(g32(&fa.v), 1); /* no_trunc */
	unit = sf.f_frsize ? (uint64_t)sf.f_frsize : (uint64_t)sf.f_bsize;
	assert_int_equal(g64(&fa.v), (uint64_t)sf.f_blocks * unit);
	assert_int_equal(g64(&fa.v), 0); /* time_delta: 0 s */
	assert_int_equal(g32(&fa.v), 1); /* 1 ns */
	assert_int_equal(g32(&fa.v), 0); /* no layout type */
	assert_int_equal(nfs4_dec_attrmask(&fa.v, &ex, &beyond), 0);
	assert_true(nfs4_bm_isset(&ex, FATTR4_MODE));
	assert_true(nfs4_bm_isset(&ex, FATTR4_SIZE));
	assert_false(nfs4_bm_isset(&ex, FATTR4_TIME_MODIFY_SET));
	assert_int_equal(xdr_in_left(&fa.v), 0);
	obj_drop(&o);
}

/* an export's root shows the pseudo directory's fileid as mounted_on_fileid */
static void test_enc_export_root_and_pseudo(void **state)
{
	struct fx *f = *state;
	struct nfs4_bitmap req;
	struct gw_obj o, p;
	struct fattr fa;
	uint8_t buf[1024];
	size_t len, from;

	memset(&req, 0, sizeof(req));
	nfs4_bm_set(&req, FATTR4_TYPE);
	nfs4_bm_set(&req, FATTR4_FSID);
	nfs4_bm_set(&req, FATTR4_FILEID);
	nfs4_bm_set(&req, FATTR4_MODE);
	nfs4_bm_set(&req, FATTR4_MOUNTED_ON_FILEID);

	obj_make(f, "", &o);
	assert_int_equal(nfs4_enc_fattr(&f->c, &f->out, &o, &req), NFS4_OK);
	len = flat(f, 0, buf, sizeof(buf));
	parse_fattr(buf, len, &fa);
	assert_int_equal(g32(&fa.v), NF4DIR);
	assert_int_equal(g64(&fa.v), 0x1234);
	assert_int_equal(g64(&fa.v), 0x5678);
	assert_int_equal(g64(&fa.v), f->xp.root_ino);
	g32(&fa.v);
	assert_int_equal(g64(&fa.v), f->snap.pseudo[1].fileid);

	memset(&p, 0, sizeof(p));
	p.fd = p.bfd = p.rfd = -1;
	p.pseudo = 0;
	p.type = S_IFDIR;
	p.fileid = 1;
	p.fh = f->snap.pseudo[0].fh;
	from = xdr_out_len(&f->out);
	nfs4_bm_set(&req, FATTR4_SPACE_TOTAL);
	nfs4_bm_set(&req, FATTR4_OWNER);
	assert_int_equal(nfs4_enc_fattr(&f->c, &f->out, &p, &req), NFS4_OK);
	len = flat(f, from, buf, sizeof(buf));
	parse_fattr(buf, len, &fa);
	assert_int_equal(g32(&fa.v), NF4DIR);
	assert_int_equal(g64(&fa.v), 0); /* fsid of the pseudo filesystem */
	assert_int_equal(g64(&fa.v), 0);
	assert_int_equal(g64(&fa.v), 1);
	assert_int_equal(g32(&fa.v), 0555);
	{
		char s[16];

		gstr(&fa.v, s, sizeof(s));
		assert_string_equal(s, "0");
	}
	assert_int_equal(g64(&fa.v), 0); /* space_total */
	assert_int_equal(g64(&fa.v), 1);
	assert_int_equal(xdr_in_left(&fa.v), 0);
	obj_drop(&o);
}

static void test_enc_errors(void **state)
{
	struct fx *f = *state;
	struct nfs4_bitmap req;
	struct gw_obj o;
	uint8_t buf[64];
	size_t len;

	/* write-only attributes cannot be read */
	memset(&req, 0, sizeof(req));
	nfs4_bm_set(&req, FATTR4_SIZE);
	assert_int_equal(nfs4_attr_check_get(&req), NFS4_OK);
	nfs4_bm_set(&req, FATTR4_TIME_MODIFY_SET);
	assert_int_equal(nfs4_attr_check_get(&req), NFS4ERR_INVAL);

	/* a file gone behind the object: stat fails, nothing is encoded */
	make_file(f, "gone", 1, 0644);
	obj_make(f, "gone", &o);
	close(o.fd);
	o.fd = -1;
	assert_int_not_equal(nfs4_enc_fattr(&f->c, &f->out, &o, &req), NFS4_OK);
	assert_int_equal(xdr_out_len(&f->out), 0);

	/* rdattr_error for READDIR */
	memset(&req, 0, sizeof(req));
	nfs4_bm_set(&req, FATTR4_SIZE);
	assert_false(nfs4_enc_fattr_error(&f->out, &req, NFS4ERR_ACCESS));
	nfs4_bm_set(&req, FATTR4_RDATTR_ERROR);
	assert_true(nfs4_enc_fattr_error(&f->out, &req, NFS4ERR_ACCESS));
	len = flat(f, 0, buf, sizeof(buf));
	{
		static const uint8_t want[] = { 0, 0, 0, 1, 0, 0, 8, 0, 0, 0, 0, 4, 0, 0, 0, 13 };

		assert_int_equal(len, sizeof(want));
		assert_memory_equal(buf, want, sizeof(want));
	}
}

/* ---------------------------------------------------------------- applying */

static void test_apply(void **state)
{
	struct fx *f = *state;
	struct nfs4_sattr sa;
	struct nfs4_bitmap set;
	struct gw_obj o, d, l;
	struct stat st;
	int dfd = open(f->dir, O_DIRECTORY);

	assert_true(dfd >= 0);
	make_file(f, "a", 10, 0600);
	obj_make(f, "a", &o);

	/* size through the /proc path, mode, client times */
	memset(&sa, 0, sizeof(sa));
	nfs4_bm_set(&sa.mask, FATTR4_SIZE);
	nfs4_bm_set(&sa.mask, FATTR4_MODE);
	nfs4_bm_set(&sa.mask, FATTR4_TIME_ACCESS_SET);
	nfs4_bm_set(&sa.mask, FATTR4_TIME_MODIFY_SET);
	sa.size = 4096;
	sa.mode = 02751;
	sa.atime_how = sa.mtime_how = SET_TO_CLIENT_TIME4;
	sa.atime.tv_sec = 1000;
	sa.atime.tv_nsec = 5;
	sa.mtime.tv_sec = 2000;
	sa.mtime.tv_nsec = 7;
	assert_int_equal(nfs4_apply_sattr(&f->c, &o, &sa, -1, &set), NFS4_OK);
	assert_memory_equal(set.w, sa.mask.w, sizeof(set.w));
	assert_int_equal(fstatat(dfd, "a", &st, 0), 0);
	assert_int_equal(st.st_size, 4096);
	assert_int_equal(st.st_mode & 07777, 02751);
	assert_int_equal(st.st_atim.tv_sec, 1000);
	assert_int_equal(st.st_atim.tv_nsec, 5);
	assert_int_equal(st.st_mtim.tv_sec, 2000);
	assert_int_equal(st.st_mtim.tv_nsec, 7);

	/* size through a given fd; server time for mtime only */
	{
		int wfd = openat(dfd, "a", O_WRONLY);

		assert_true(wfd >= 0);
		memset(&sa, 0, sizeof(sa));
		nfs4_bm_set(&sa.mask, FATTR4_SIZE);
		nfs4_bm_set(&sa.mask, FATTR4_TIME_MODIFY_SET);
		sa.size = 3;
		sa.mtime_how = SET_TO_SERVER_TIME4;
		assert_int_equal(nfs4_apply_sattr(&f->c, &o, &sa, wfd, &set), NFS4_OK);
		close(wfd);
		assert_int_equal(fstatat(dfd, "a", &st, 0), 0);
		assert_int_equal(st.st_size, 3);
		assert_int_equal(st.st_atim.tv_sec, 1000); /* untouched */
		assert_true(st.st_mtim.tv_sec > 2000);
	}

	/* owner and group (as root) */
	if (geteuid() == 0) {
		memset(&sa, 0, sizeof(sa));
		nfs4_bm_set(&sa.mask, FATTR4_OWNER_GROUP);
		sa.gid = 4321;
		assert_int_equal(nfs4_apply_sattr(&f->c, &o, &sa, -1, &set), NFS4_OK);
		assert_true(nfs4_bm_isset(&set, FATTR4_OWNER_GROUP));
		assert_false(nfs4_bm_isset(&set, FATTR4_OWNER));
		assert_int_equal(fstatat(dfd, "a", &st, 0), 0);
		assert_int_equal(st.st_gid, 4321);
		assert_int_equal(st.st_uid, 0);
		nfs4_bm_set(&sa.mask, FATTR4_OWNER);
		nfs4_bm_set(&sa.mask, FATTR4_MODE);
		sa.uid = 1234;
		sa.mode = 04755;
		assert_int_equal(nfs4_apply_sattr(&f->c, &o, &sa, -1, &set), NFS4_OK);
		assert_int_equal(fstatat(dfd, "a", &st, 0), 0);
		assert_int_equal(st.st_uid, 1234);
		assert_int_equal(st.st_mode & 07777, 04755); /* set after chown */
	}

	/* size of a directory and of a symlink; a pseudo directory */
	obj_make(f, "", &d);
	memset(&sa, 0, sizeof(sa));
	nfs4_bm_set(&sa.mask, FATTR4_SIZE);
	assert_int_equal(nfs4_apply_sattr(&f->c, &d, &sa, -1, &set), NFS4ERR_ISDIR);
	assert_int_equal(set.w[0] | set.w[1] | set.w[2], 0);
	assert_int_equal(symlinkat("a", dfd, "l"), 0);
	obj_make(f, "l", &l);
	assert_int_equal(nfs4_apply_sattr(&f->c, &l, &sa, -1, &set), NFS4ERR_INVAL);
	{
		struct gw_obj p;

		memset(&p, 0, sizeof(p));
		p.fd = p.bfd = -1;
		p.type = S_IFDIR;
		assert_int_equal(nfs4_apply_sattr(&f->c, &p, &sa, -1, &set), NFS4ERR_ROFS);
	}

	/* a symlink's mode is ignored, its times are its own */
	memset(&sa, 0, sizeof(sa));
	nfs4_bm_set(&sa.mask, FATTR4_MODE);
	nfs4_bm_set(&sa.mask, FATTR4_TIME_MODIFY_SET);
	sa.mode = 0600;
	sa.mtime_how = SET_TO_CLIENT_TIME4;
	sa.mtime.tv_sec = 3000;
	assert_int_equal(nfs4_apply_sattr(&f->c, &l, &sa, -1, &set), NFS4_OK);
	assert_int_equal(fstatat(dfd, "l", &st, AT_SYMLINK_NOFOLLOW), 0);
	assert_int_equal(st.st_mtim.tv_sec, 3000);
	assert_int_equal(fstatat(dfd, "a", &st, 0), 0);
	assert_int_not_equal(st.st_mtim.tv_sec, 3000);

	/* an error half-way: attrsset has what was done */
	memset(&sa, 0, sizeof(sa));
	nfs4_bm_set(&sa.mask, FATTR4_SIZE);
	nfs4_bm_set(&sa.mask, FATTR4_TIME_ACCESS_SET);
	sa.size = 1;
	sa.atime_how = SET_TO_CLIENT_TIME4;
	sa.atime.tv_nsec = 2000000000; /* refused by utimensat */
	assert_int_equal(nfs4_apply_sattr(&f->c, &o, &sa, -1, &set), NFS4ERR_INVAL);
	assert_true(nfs4_bm_isset(&set, FATTR4_SIZE));
	assert_false(nfs4_bm_isset(&set, FATTR4_TIME_ACCESS_SET));

	close(dfd);
	obj_drop(&o);
	obj_drop(&d);
	obj_drop(&l);
}

/* ---------------------------------------------------------------- VERIFY */

static uint32_t compare(struct fx *f, struct gw_obj *o, const struct lt_wire *w, bool *same)
{
	struct xdr_in x;
	size_t before = xdr_out_len(&f->out);
	uint32_t st;

	xdr_in_init(&x, w->b, w->n);
	st = nfs4_attr_compare(&f->c, o, &x, same);
	assert_int_equal(xdr_out_len(&f->out), before); /* rolled back */
	assert_int_equal(f->out.err, 0);
	return st;
}

static void test_compare(void **state)
{
	struct fx *f = *state;
	struct gw_obj o;
	struct stat st;
	struct lt_wire w, v;
	uint32_t bm[3];
	bool same;
	size_t n;

	make_file(f, "v", 777, 0644);
	obj_make(f, "v", &o);
	assert_int_equal(fstatat(o.fd, "", &st, AT_EMPTY_PATH), 0);
	xdr_enc_u32(&f->out, 0xdeadbeef); /* something already in the reply */

	/* size and mode */
	bm[0] = 1U << FATTR4_SIZE;
	bm[1] = BM1(FATTR4_MODE);
	v.n = 0;
	lt_put64(&v, 777);
	lt_put32(&v, 0644);
	w.n = 0;
	putfattr(&w, bm, 2, &v);
	assert_int_equal(compare(f, &o, &w, &same), NFS4_OK);
	assert_true(same);
	/* a different size */
	v.n = 0;
	lt_put64(&v, 778);
	lt_put32(&v, 0644);
	w.n = 0;
	putfattr(&w, bm, 2, &v);
	assert_int_equal(compare(f, &o, &w, &same), NFS4_OK);
	assert_false(same);
	/* a value missing, or one too many */
	v.n = 0;
	lt_put64(&v, 777);
	w.n = 0;
	putfattr(&w, bm, 2, &v);
	assert_int_equal(compare(f, &o, &w, &same), NFS4_OK);
	assert_false(same);
	v.n = 0;
	lt_put64(&v, 777);
	lt_put32(&v, 0644);
	lt_put32(&v, 0);
	w.n = 0;
	putfattr(&w, bm, 2, &v);
	assert_int_equal(compare(f, &o, &w, &same), NFS4_OK);
	assert_false(same);
	/* owner as a string, and the fileid */
	bm[0] = 1U << FATTR4_FILEID;
	bm[1] = BM1(FATTR4_OWNER);
	v.n = 0;
	lt_put64(&v, st.st_ino);
	{
		char s[16];

		snprintf(s, sizeof(s), "%u", (unsigned)st.st_uid);
		putstr(&v, s);
	}
	w.n = 0;
	putfattr(&w, bm, 2, &v);
	assert_int_equal(compare(f, &o, &w, &same), NFS4_OK);
	assert_true(same);

	/* errors */
	bm[0] = 1U << FATTR4_RDATTR_ERROR;
	bm[1] = 0;
	v.n = 0;
	lt_put32(&v, 0);
	w.n = 0;
	putfattr(&w, bm, 1, &v);
	assert_int_equal(compare(f, &o, &w, &same), NFS4ERR_INVAL);
	bm[0] = 0;
	bm[1] = BM1(FATTR4_TIME_MODIFY_SET);
	w.n = 0;
	putfattr(&w, bm, 2, &v);
	assert_int_equal(compare(f, &o, &w, &same), NFS4ERR_INVAL);
	bm[0] = 1U << FATTR4_ACL;
	w.n = 0;
	putfattr(&w, bm, 1, &v);
	assert_int_equal(compare(f, &o, &w, &same), NFS4ERR_ATTRNOTSUPP);
	bm[0] = 0;
	bm[1] = 0;
	bm[2] = 1U << (FATTR4_SUPPATTR_EXCLCREAT - 64);
	f->c.minor = 0; /* a 4.1 attribute in 4.0 */
	w.n = 0;
	putfattr(&w, bm, 3, &v);
	assert_int_equal(compare(f, &o, &w, &same), NFS4ERR_ATTRNOTSUPP);
	f->c.minor = 2;
	bm[0] = 1U << FATTR4_SIZE;
	v.n = 0;
	lt_put64(&v, 777);
	w.n = 0;
	putfattr(&w, bm, 1, &v);
	for (n = 0; n < w.n; n++) {
		struct lt_wire t = w;

		t.n = n;
		assert_int_equal(compare(f, &o, &t, &same), NFS4ERR_BADXDR);
	}
	obj_drop(&o);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_owner_parse),
		cmocka_unit_test(test_dec_sattr_ok),
		cmocka_unit_test(test_dec_sattr_notsupp),
		cmocka_unit_test(test_dec_sattr_readonly),
		cmocka_unit_test(test_dec_sattr_truncated),
		cmocka_unit_test(test_dec_sattr_bounds),
		cmocka_unit_test(test_dec_sattr_values),
		cmocka_unit_test_setup_teardown(test_enc_file, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_enc_all, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_enc_fsinfo, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_enc_export_root_and_pseudo, fx_setup,
						fx_teardown),
		cmocka_unit_test_setup_teardown(test_enc_errors, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_apply, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_compare, fx_setup, fx_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
