// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The operations that change the namespace: CREATE (every type but
 * regular files, which OPEN creates), REMOVE, RENAME and LINK, and
 * READLINK which reads what CREATE of a symlink wrote.
 *
 * Operation
 * ---------
 * Each works on the directory's O_PATH fd with the *at() calls, on the
 * worker thread that already runs with the caller's fsuid, fsgid and
 * groups, so the kernel checks permissions as for a local user of the
 * lacunafs mount. The mode a client sends is given to mkdirat(2) and
 * mknodat(2) as is: NFS applies no umask on the server, and lacunad runs
 * with a umask of 0. Whatever else the client asks to set at creation
 * (owner, group, times, and the mode again for the bits mkdir drops) is
 * applied to the new object afterwards by nfs4_apply_sattr(). Without a
 * mode attribute the object gets mode 0, as with Linux nfsd.
 *
 * change_info4 is the directory's change attribute (nfs4_change_of of a
 * stat) taken before and after the call. Another process can change the
 * directory in between, so it is never reported atomic.
 *
 * RENAME takes the source directory from the saved file handle and the
 * target from the current one, LINK the file from the saved file handle
 * and the directory from the current one; both refuse to cross exports
 * (NFS4ERR_XDEV). An existing target that is not compatible with the
 * source (a directory replaced by a non-directory or the reverse) or a
 * non-empty target directory is NFS4ERR_EXIST (RFC 8881 §18.26.4), and
 * renaming a file onto another name of itself does nothing and succeeds,
 * as rename(2) does. LINK makes the new name with linkat(2) through
 * /proc/self/fd/N with AT_SYMLINK_FOLLOW (which a caller without
 * CAP_DAC_READ_SEARCH may use, unlike AT_EMPTY_PATH).
 *
 * A removed or replaced file whose last link went away is dropped from
 * the object cache, so its O_PATH fd does not keep it alive and its
 * handle turns stale.
 *
 * Pseudo directories are read-only: NFS4ERR_ROFS.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "nfs4_attr.h"
#include "nfs4_ops.h"
#include "nfs4_state.h"

/* ---------------------------------------------------------------- helpers */

static uint32_t dir_need_dir(const struct gw_obj *o)
{
	if (o->type == S_IFDIR)
		return NFS4_OK;
	return o->type == S_IFLNK ? NFS4ERR_SYMLINK : NFS4ERR_NOTDIR;
}

/* A directory whose entries this op changes. */
static uint32_t dir_need_writable_dir(const struct gw_obj *o)
{
	if (gw_obj_is_pseudo(o))
		return NFS4ERR_ROFS;
	return dir_need_dir(o);
}

/* The change attribute of directory @o, 0 when it cannot be had. */
static uint64_t dir_change(struct nfs4_compound *c, struct gw_obj *o)
{
	struct stat st;

	if (gw_obj_stat(c->srv, o, &st))
		return 0;
	return nfs4_change_of(&st);
}

/*
 * @name of @dir before it is removed or replaced, or NULL. Looked up so
 * that the object can be dropped from the cache once its last link is
 * gone, unless NFSv4 state holds the file open (dir_forget_if_gone).
 */
static struct gw_obj *dir_victim(struct nfs4_compound *c, struct gw_obj *dir, const char *name)
{
	struct gw_obj *o;

	if (gw_obj_lookup(c->snap, dir, name, &o))
		return NULL;
	return o;
}

static void dir_forget_if_gone(struct gw_obj *o)
{
	struct stat st;

	if (!o)
		return;
	/* an open file outlives its name: its handle stays good (gw_obj.pins) */
	if (!gw_obj_is_pseudo(o) && !atomic_load(&o->pins) &&
	    (fstat(o->fd, &st) || st.st_nlink == 0))
		gw_obj_forget(o);
	gw_obj_put(o);
}

/* ---------------------------------------------------------------- CREATE */

struct create_args {
	uint32_t type;	       /* nfs_ftype4 */
	uint32_t spec1, spec2; /* NF4BLK, NF4CHR */
	const uint8_t *link;   /* NF4LNK: linkdata, in the record */
	uint32_t link_len;
	uint32_t link_status; /* too long */
	uint32_t name_status;
	uint32_t sa_status; /* of createattrs */
	struct nfs4_sattr sa;
	char name[NFS4_NAME_MAX + 1];
};
_Static_assert(sizeof(struct create_args) <= NFS4_ARGS_MAX, "create args");

int nfs4_dec_create(struct xdr_in *x, void *args)
{
	struct create_args *a = args;
	uint32_t st, len;

	if (xdr_dec_u32(x, &a->type))
		return -EBADMSG;
	switch (a->type) {
	case NF4LNK:
		if (xdr_dec_u32(x, &len))
			return -EBADMSG;
		if (len > NFS4_LINKTEXT_MAX) {
			if (xdr_dec_skip(x, len))
				return -EBADMSG;
			a->link_status = NFS4ERR_NAMETOOLONG;
			break;
		}
		if (xdr_dec_opaque_fixed(x, &a->link, len))
			return -EBADMSG;
		a->link_len = len;
		break;
	case NF4BLK:
	case NF4CHR:
		if (xdr_dec_u32(x, &a->spec1) || xdr_dec_u32(x, &a->spec2))
			return -EBADMSG;
		break;
	default: /* void arms; a type CREATE cannot make is refused when run */
		break;
	}
	if (nfs4_dec_component(x, a->name, &a->name_status))
		return -EBADMSG;
	st = nfs4_dec_sattr(x, &a->sa);
	if (st == NFS4ERR_BADXDR)
		return -EBADMSG;
	a->sa_status = st;
	return 0;
}

/* Make the object; 0 or -errno. */
static int create_object(struct gw_obj *dir, const struct create_args *a, mode_t mode)
{
	char target[NFS4_LINKTEXT_MAX + 1];
	int rc;

	switch (a->type) {
	case NF4DIR:
		rc = mkdirat(dir->fd, a->name, mode);
		break;
	case NF4LNK:
		memcpy(target, a->link, a->link_len);
		target[a->link_len] = '\0';
		rc = symlinkat(target, dir->fd, a->name);
		break;
	case NF4BLK:
		rc = mknodat(dir->fd, a->name, S_IFBLK | mode, makedev(a->spec1, a->spec2));
		break;
	case NF4CHR:
		rc = mknodat(dir->fd, a->name, S_IFCHR | mode, makedev(a->spec1, a->spec2));
		break;
	case NF4SOCK:
		rc = mknodat(dir->fd, a->name, S_IFSOCK | mode, 0);
		break;
	case NF4FIFO:
		rc = mknodat(dir->fd, a->name, S_IFIFO | mode, 0);
		break;
	default:
		return -EINVAL;
	}
	return rc ? -errno : 0;
}

uint32_t nfs4_run_create(struct nfs4_compound *c, void *args)
{
	struct create_args *a = args;
	struct gw_obj *dir = c->cfh, *o;
	struct nfs4_bitmap set = { { 0 } };
	uint64_t before, after;
	mode_t mode = 0;
	uint32_t st;
	int rc;

	st = dir_need_writable_dir(dir);
	if (st)
		return st;
	switch (a->type) {
	case NF4DIR:
	case NF4BLK:
	case NF4CHR:
	case NF4SOCK:
	case NF4FIFO:
		break;
	case NF4LNK:
		if (a->link_status)
			return a->link_status;
		/* an empty target, or one cut short by a NUL, is no path */
		if (a->link_len == 0 || memchr(a->link, 0, a->link_len))
			return NFS4ERR_INVAL;
		break;
	default: /* NF4REG (OPEN makes those), named attributes, nonsense */
		return NFS4ERR_BADTYPE;
	}
	st = a->name_status;
	if (st)
		return st;
	if (a->sa_status)
		return a->sa_status;
	if (nfs4_bm_isset(&a->sa.mask, FATTR4_SIZE))
		return NFS4ERR_INVAL;
	if (nfs4_bm_isset(&a->sa.mask, FATTR4_MODE))
		mode = a->sa.mode & NFS4_MODE_MASK;

	before = dir_change(c, dir);
	rc = create_object(dir, a, mode);
	if (rc)
		return nfs4_errno(rc);
	after = dir_change(c, dir);

	rc = gw_obj_lookup(c->snap, dir, a->name, &o);
	if (rc)
		return nfs4_errno(rc);

	/*
	 * The rest of createattrs: owner, group, times, and the mode again
	 * for the set-id bits mkdir(2) drops (ignored on a symlink).
	 */
	if (a->sa.mask.w[0] | a->sa.mask.w[1] | a->sa.mask.w[2]) {
		st = nfs4_apply_sattr(c, o, &a->sa, -1, &set);
		if (st) {
			gw_obj_put(o);
			return st;
		}
	}

	rc = nfs4_enc_change_info(c->out, false, before, after) ?: nfs4_enc_bitmap(c->out, &set);
	if (rc) {
		gw_obj_put(o);
		return nfs4_enc_status(c, rc);
	}
	nfs4_set_cfh(c, o);
	c->cur_sid_set = false;
	return NFS4_OK;
}

/* ---------------------------------------------------------------- REMOVE */

struct remove_args {
	uint32_t name_status;
	char name[NFS4_NAME_MAX + 1];
};
_Static_assert(sizeof(struct remove_args) <= NFS4_ARGS_MAX, "remove args");

int nfs4_dec_remove(struct xdr_in *x, void *args)
{
	struct remove_args *a = args;

	return nfs4_dec_component(x, a->name, &a->name_status);
}

/* unlink @name, or rmdir it if it is a directory: 0 or -errno. */
static int remove_name(int dfd, const char *name)
{
	int err;

	if (!unlinkat(dfd, name, 0))
		return 0;
	err = errno;
	/* unlink(2) of a directory: EISDIR on Linux, EPERM by POSIX */
	if (err != EISDIR && err != EPERM)
		return -err;
	if (!unlinkat(dfd, name, AT_REMOVEDIR))
		return 0;
	if (err == EPERM && errno == ENOTDIR)
		return -EPERM; /* a file we may not unlink */
	err = errno;
	return err == EEXIST ? -ENOTEMPTY : -err;
}

uint32_t nfs4_run_remove(struct nfs4_compound *c, void *args)
{
	struct remove_args *a = args;
	struct gw_obj *dir = c->cfh, *victim;
	uint64_t before, after;
	uint32_t st;
	int rc;

	st = a->name_status;
	if (st)
		return st;
	if (nfs4_state_in_grace(c->srv))
		return NFS4ERR_GRACE; /* as nfsd: an open being reclaimed keeps its name */
	st = dir_need_writable_dir(dir);
	if (st)
		return st;

	before = dir_change(c, dir);
	victim = dir_victim(c, dir, a->name);
	rc = remove_name(dir->fd, a->name);
	if (rc) {
		if (victim)
			gw_obj_put(victim);
		return rc == -ENOTEMPTY ? NFS4ERR_NOTEMPTY : nfs4_errno(rc);
	}
	after = dir_change(c, dir);
	dir_forget_if_gone(victim);

	rc = nfs4_enc_change_info(c->out, false, before, after);
	return rc ? nfs4_enc_status(c, rc) : NFS4_OK;
}

/* ---------------------------------------------------------------- RENAME */

struct rename_args {
	uint32_t old_status, new_status;
	char oldname[NFS4_NAME_MAX + 1];
	char newname[NFS4_NAME_MAX + 1];
};
_Static_assert(sizeof(struct rename_args) <= NFS4_ARGS_MAX, "rename args");

int nfs4_dec_rename(struct xdr_in *x, void *args)
{
	struct rename_args *a = args;

	if (nfs4_dec_component(x, a->oldname, &a->old_status))
		return -EBADMSG;
	return nfs4_dec_component(x, a->newname, &a->new_status);
}

uint32_t nfs4_run_rename(struct nfs4_compound *c, void *args)
{
	struct rename_args *a = args;
	struct gw_obj *from = c->sfh, *to = c->cfh, *victim;
	uint64_t from_before, from_after, to_before, to_after;
	uint32_t st;
	int rc;

	if (!from)
		return NFS4ERR_NOFILEHANDLE;
	if (nfs4_state_in_grace(c->srv))
		return NFS4ERR_GRACE;
	st = a->old_status;
	if (!st)
		st = a->new_status;
	if (st)
		return st;
	st = dir_need_writable_dir(from);
	if (!st)
		st = dir_need_writable_dir(to);
	if (st)
		return st;
	if (from->xp != to->xp)
		return NFS4ERR_XDEV;

	from_before = dir_change(c, from);
	to_before = from == to ? from_before : dir_change(c, to);
	victim = dir_victim(c, to, a->newname);
	if (renameat(from->fd, a->oldname, to->fd, a->newname)) {
		rc = errno;
		if (victim)
			gw_obj_put(victim);
		switch (rc) {
		case EISDIR:	/* a non-directory onto a directory */
		case ENOTDIR:	/* a directory onto a non-directory */
		case ENOTEMPTY: /* onto a directory that is not empty */
		case EEXIST:	/* the same, as XFS says it */
			return NFS4ERR_EXIST;
		default:
			return nfs4_errno(-rc);
		}
	}
	from_after = dir_change(c, from);
	to_after = from == to ? from_after : dir_change(c, to);
	dir_forget_if_gone(victim);

	rc = nfs4_enc_change_info(c->out, false, from_before, from_after)
		     ?: nfs4_enc_change_info(c->out, false, to_before, to_after);
	return rc ? nfs4_enc_status(c, rc) : NFS4_OK;
}

/* ---------------------------------------------------------------- LINK */

struct link_args {
	uint32_t name_status;
	char name[NFS4_NAME_MAX + 1];
};
_Static_assert(sizeof(struct link_args) <= NFS4_ARGS_MAX, "link args");

int nfs4_dec_link(struct xdr_in *x, void *args)
{
	struct link_args *a = args;

	return nfs4_dec_component(x, a->name, &a->name_status);
}

uint32_t nfs4_run_link(struct nfs4_compound *c, void *args)
{
	struct link_args *a = args;
	struct gw_obj *file = c->sfh, *dir = c->cfh;
	uint64_t before, after;
	char path[32];
	uint32_t st;
	int rc;

	if (!file)
		return NFS4ERR_NOFILEHANDLE;
	st = a->name_status;
	if (st)
		return st;
	st = dir_need_writable_dir(dir);
	if (st)
		return st;
	if (file->type == S_IFDIR)
		return NFS4ERR_ISDIR;
	if (file->xp != dir->xp)
		return NFS4ERR_XDEV;

	before = dir_change(c, dir);
	gw_obj_procpath(file, path);
	if (linkat(AT_FDCWD, path, dir->fd, a->name, AT_SYMLINK_FOLLOW))
		return nfs4_errno(-errno);
	after = dir_change(c, dir);

	rc = nfs4_enc_change_info(c->out, false, before, after);
	return rc ? nfs4_enc_status(c, rc) : NFS4_OK;
}

/* ---------------------------------------------------------------- READLINK */

uint32_t nfs4_run_readlink(struct nfs4_compound *c, void *args)
{
	char buf[NFS4_LINKTEXT_MAX + 1];
	struct gw_obj *o = c->cfh;
	ssize_t n;
	int rc;

	(void)args;
	if (o->type != S_IFLNK) /* RFC 7530 §16.25.4; RFC 8881 §18.24.4 */
		return c->minor ? NFS4ERR_WRONG_TYPE : NFS4ERR_INVAL;
	n = readlinkat(o->fd, "", buf, sizeof(buf));
	if (n < 0)
		return nfs4_errno(-errno);
	if ((size_t)n > NFS4_LINKTEXT_MAX)
		return NFS4ERR_NAMETOOLONG;
	rc = xdr_enc_opaque(c->out, buf, (uint32_t)n, NFS4_LINKTEXT_MAX);
	return rc ? nfs4_enc_status(c, rc) : NFS4_OK;
}
