// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Extended attributes (RFC 8276): GETXATTR, SETXATTR, LISTXATTRS and
 * REMOVEXATTR, minor version 2.
 *
 * Operation
 * ---------
 * RFC 8276 xattrs are user attributes: the name "foo" on the wire is
 * "user.foo" on the file, as Linux's client and server map them. They
 * are read and written through the object's /proc/self/fd path on the
 * lacunafs mount (lacunafs passes them to the backing file), with the
 * caller's credentials like every other call, so the kernel checks the
 * permissions (and refuses user attributes on symlinks and devices).
 *
 * Names are at most XATTR_NAME_MAX (255) bytes with the "user." prefix,
 * values at most XATTR_SIZE_MAX (64 KiB): a longer name or value is
 * XATTR2BIG. SETXATTR4_CREATE of an existing name is EXIST,
 * SETXATTR4_REPLACE or REMOVEXATTR of a missing one NOXATTR (errno ENODATA
 * through the one errno table).
 *
 * LISTXATTRS lists the user attributes in the order listxattr(2) gives;
 * the cookie is the number of names already sent, so a client pages
 * through with the cookie of the last reply. A cookie past the end is
 * BAD_COOKIE; a maxcount too small for the first name left, TOOSMALL.
 * Names added or removed between calls may shift the list, as with a
 * directory read by offset.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <linux/limits.h>

#include "nfs4_ops.h"

#define XATTR_USER "user."
#define XATTR_USER_LEN 5
#define NFS4_XATTR_NAME_MAX (XATTR_NAME_MAX - XATTR_USER_LEN)

enum { SETXATTR4_EITHER = 0, SETXATTR4_CREATE = 1, SETXATTR4_REPLACE = 2 };

struct xattr_args {
	uint32_t option;	       /* SETXATTR */
	char name[XATTR_NAME_MAX + 1]; /* with the "user." prefix */
	uint32_t status;	       /* of the name: NFS4_OK, or why it is refused */
	const uint8_t *value;	       /* SETXATTR */
	uint32_t len;
};

struct listxattrs_args {
	uint64_t cookie;
	uint32_t maxcount;
};

_Static_assert(sizeof(struct xattr_args) <= NFS4_ARGS_MAX, "xattr args");

static int dec_name(struct xdr_in *x, struct xattr_args *a)
{
	const char *s;
	uint32_t len;

	if (xdr_dec_string(x, &s, &len, NFS4_OPAQUE_LIMIT))
		return -EBADMSG;
	if (len == 0 || memchr(s, '\0', len))
		a->status = NFS4ERR_INVAL;
	else if (len > NFS4_XATTR_NAME_MAX)
		a->status = NFS4ERR_XATTR2BIG;
	else
		snprintf(a->name, sizeof(a->name), XATTR_USER "%.*s", (int)len, s);
	return 0;
}

int nfs4_dec_getxattr(struct xdr_in *x, void *args)
{
	return dec_name(x, args);
}

int nfs4_dec_removexattr(struct xdr_in *x, void *args)
{
	return dec_name(x, args);
}

int nfs4_dec_setxattr(struct xdr_in *x, void *args)
{
	struct xattr_args *a = args;

	if (xdr_dec_enum(x, &a->option, SETXATTR4_REPLACE) || dec_name(x, a) ||
	    xdr_dec_opaque(x, &a->value, &a->len, GW_RECORD_MAX))
		return -EBADMSG;
	return 0;
}

int nfs4_dec_listxattrs(struct xdr_in *x, void *args)
{
	struct listxattrs_args *a = args;

	if (xdr_dec_u64(x, &a->cookie) || xdr_dec_u32(x, &a->maxcount))
		return -EBADMSG;
	return 0;
}

uint32_t nfs4_run_getxattr(struct nfs4_compound *c, void *args)
{
	struct xattr_args *a = args;
	char path[32];
	uint32_t status;
	void *buf;
	ssize_t n;

	if (a->status != NFS4_OK)
		return a->status;
	buf = malloc(XATTR_SIZE_MAX);
	if (!buf)
		return NFS4ERR_DELAY;
	gw_obj_procpath(c->cfh, path);
	n = getxattr(path, a->name, buf, XATTR_SIZE_MAX);
	if (n < 0)
		status = nfs4_errno(-errno);
	else if ((size_t)n + 8 > nfs4_reply_room(c))
		status = nfs4_enc_status(c, -EMSGSIZE);
	else
		status = xdr_enc_opaque(c->out, buf, (uint32_t)n, XATTR_SIZE_MAX)
				 ? nfs4_enc_status(c, -EMSGSIZE)
				 : NFS4_OK;
	free(buf);
	return status;
}

/* The change attribute of the current file, for change_info4. */
static int change_of(struct nfs4_compound *c, uint64_t *change)
{
	struct stat st;
	int err = gw_obj_stat(c->srv, c->cfh, &st);

	if (err)
		return err;
	*change = nfs4_change_of(&st);
	return 0;
}

/* Run @fn on the current file between two looks at its change attribute. */
static uint32_t with_change_info(struct nfs4_compound *c, struct xattr_args *a,
				 int (*fn)(const char *path, const struct xattr_args *a))
{
	uint64_t before, after;
	char path[32];
	int err;

	if (a->status != NFS4_OK)
		return a->status;
	err = change_of(c, &before);
	if (err)
		return nfs4_errno(err);
	gw_obj_procpath(c->cfh, path);
	err = fn(path, a);
	if (err)
		return nfs4_errno(err);
	err = change_of(c, &after);
	if (err)
		return nfs4_errno(err);
	nfs4_enc_change_info(c->out, false, before, after);
	return NFS4_OK;
}

static int do_setxattr(const char *path, const struct xattr_args *a)
{
	int flags = a->option == SETXATTR4_CREATE    ? XATTR_CREATE
		    : a->option == SETXATTR4_REPLACE ? XATTR_REPLACE
						     : 0;

	if (a->len > XATTR_SIZE_MAX)
		return -E2BIG;
	return setxattr(path, a->name, a->value, a->len, flags) < 0 ? -errno : 0;
}

static int do_removexattr(const char *path, const struct xattr_args *a)
{
	return removexattr(path, a->name) < 0 ? -errno : 0;
}

uint32_t nfs4_run_setxattr(struct nfs4_compound *c, void *args)
{
	return with_change_info(c, args, do_setxattr);
}

uint32_t nfs4_run_removexattr(struct nfs4_compound *c, void *args)
{
	return with_change_info(c, args, do_removexattr);
}

/* The names listxattr(2) gives for @path into *list (malloc'd); its length or -errno. */
static ssize_t list_names(const char *path, char **list)
{
	ssize_t n;

	*list = malloc(XATTR_LIST_MAX);
	if (!*list)
		return -ENOMEM;
	n = listxattr(path, *list, XATTR_LIST_MAX);
	if (n < 0) {
		n = -errno;
		free(*list);
		*list = NULL;
	}
	return n;
}

uint32_t nfs4_run_listxattrs(struct nfs4_compound *c, void *args)
{
	struct listxattrs_args *a = args;
	size_t room = nfs4_reply_room(c), used;
	struct xdr_mark m_hi, m_lo, m_count;
	uint64_t idx = 0, sent = 0;
	char path[32], *list, *p;
	bool eof = true;
	ssize_t n;

	gw_obj_procpath(c->cfh, path);
	n = list_names(path, &list);
	if (n < 0)
		return n == -ENOMEM ? NFS4ERR_DELAY : nfs4_errno((int)n);
	if (a->maxcount < room)
		room = a->maxcount;
	/* cookie, the array's count, eof */
	used = 8 + 4 + 4;
	if (room < used) {
		free(list);
		return NFS4ERR_TOOSMALL;
	}
	/* the cookie and the count, filled once the names are in */
	xdr_out_reserve(c->out, &m_hi);
	xdr_out_reserve(c->out, &m_lo);
	xdr_out_reserve(c->out, &m_count);
	for (p = list; p < list + n; p += strlen(p) + 1) {
		size_t len = strlen(p) - XATTR_USER_LEN;

		if (strncmp(p, XATTR_USER, XATTR_USER_LEN) || len == 0)
			continue;
		if (idx++ < a->cookie)
			continue;
		if (used + 4 + XDR_ALIGN(len) > room) {
			eof = false;
			break;
		}
		xdr_enc_string(c->out, p + XATTR_USER_LEN, (uint32_t)len, NFS4_XATTR_NAME_MAX);
		used += 4 + XDR_ALIGN(len);
		sent++;
	}
	free(list);
	if (a->cookie > idx)
		return NFS4ERR_BAD_COOKIE;
	if (!eof && sent == 0)
		return NFS4ERR_TOOSMALL;
	xdr_out_fill(&m_hi, (uint32_t)((a->cookie + sent) >> 32));
	xdr_out_fill(&m_lo, (uint32_t)(a->cookie + sent));
	xdr_out_fill(&m_count, (uint32_t)sent);
	xdr_enc_bool(c->out, eof);
	return NFS4_OK;
}
