// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * File objects: resolving file handles to fds under the served
 * directory, LOOKUP and LOOKUPP, and the cache that keeps recently used
 * objects open. gw.h describes handles, objects and the lock order.
 *
 * The cache is a hash table keyed by handle bytes with an LRU list; it
 * holds one reference on each object and evicts the least recently used
 * objects nobody else holds once it has more than max_cached_files
 * (gw_obj_set_max(), from the fd budget of gw_limits.h). Every cached
 * file object costs one or two fds, and an fd keeps a file that was
 * removed meanwhile (and its blocks) alive: objects nobody used for
 * GW_OBJ_IDLE seconds are dropped by gw_obj_sweep(), as nfsd's file
 * cache closes idle files. When an open fails for want of fds all the
 * same (EMFILE, ENFILE), gw_obj_shed() drops every object nobody holds
 * and the open is tried once more (GW_FD_RETRY, gw_fd.c).
 *
 * Nothing is closed under the cache lock: on a lacunafs export a close is
 * a FLUSH round trip to lacunafs, and a lacunafs that hangs would hold up
 * every request behind the lock. What the cache drops is unlinked under
 * the lock onto a list of the caller's (struct obj_reap) and its
 * reference put, fds closed, once the lock is released (cache_unlock),
 * as nfsd's laundromat and the kernel's deferred fput do.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "gw.h"
#include "htable.h"
#include "lacuna/ioctl.h"
#include "list.h"
#include "log.h"

#define GW_OBJ_BUCKETS GW_CACHED_FILES_MAX /* max_cached_files never goes past it */
#define GW_OBJ_IDLE 3 /* seconds */

/* max_cached_files in force */
static atomic_uint cache_max = GW_CACHED_FILES_MAX;

_Static_assert((GW_OBJ_BUCKETS & (GW_OBJ_BUCKETS - 1)) == 0, "GW_OBJ_BUCKETS: a power of two");
static struct hnode *cache_buckets[GW_OBJ_BUCKETS];

static struct {
	pthread_mutex_t lock;
	struct htable table;  /* by handle bytes (obj_ext.hnode); fixed size, never grown */
	struct list_head lru; /* obj_ext.lru, the most recent first */
} cache = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.table = HTABLE_INIT_FIXED(cache_buckets, GW_OBJ_BUCKETS),
	.lru = LIST_HEAD_INIT(cache.lru),
};

/* The cache's links live in a side structure so gw.h stays small */
struct obj_ext {
	struct gw_obj obj;
	struct hnode hnode;   /* cache.table (cache lock) */
	struct list_head lru; /* cache.lru (cache lock), then an obj_reap's list */
};

#define obj_ext_of(o) container_of(o, struct obj_ext, obj)

/* Objects the cache dropped under its lock, on their lru links: their references put after it */
struct obj_reap {
	struct list_head head;
};

#define OBJ_REAP_INIT(r) { LIST_HEAD_INIT((r).head) }

static uint64_t now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (uint64_t)ts.tv_sec;
}

static void obj_free(struct gw_obj *o)
{
	if (o->rfd >= 0)
		close(o->rfd);
	if (o->bfd >= 0 && o->bfd != o->fd)
		close(o->bfd);
	if (o->fd >= 0)
		close(o->fd);
	pthread_mutex_destroy(&o->lock);
	free(o);
}

struct gw_obj *gw_obj_get(struct gw_obj *o)
{
	atomic_fetch_add_explicit(&o->refs, 1, memory_order_relaxed);
	return o;
}

void gw_obj_put(struct gw_obj *o)
{
	if (atomic_fetch_sub_explicit(&o->refs, 1, memory_order_acq_rel) == 1)
		obj_free(o);
}

static struct gw_obj *obj_new(void)
{
	struct obj_ext *e = calloc(1, sizeof(*e));

	if (!e)
		return NULL;
	atomic_init(&e->obj.refs, 1);
	list_init(&e->lru);
	e->obj.fd = e->obj.bfd = e->obj.rfd = -1;
	e->obj.pseudo = -1;
	pthread_mutex_init(&e->obj.lock, NULL);
	return &e->obj;
}

/* Cached object with these handle bytes, with a reference (cache lock held). */
static struct gw_obj *cache_find_locked(const uint8_t *fh, size_t len, uint32_t hash)
{
	struct hnode *n;

	HTABLE_FOR_EACH_HASH(&cache.table, hash, n) {
		struct obj_ext *e = container_of(n, struct obj_ext, hnode);
		struct gw_obj *o = &e->obj;

		if (o->fh.len == len && !memcmp(o->fh.data, fh, len)) {
			list_move(&e->lru, &cache.lru);
			o->lru = now_s();
			return gw_obj_get(o);
		}
	}
	return NULL;
}

static struct gw_obj *cache_find(const uint8_t *fh, size_t len)
{
	uint32_t hash = hash_fnv1a32(fh, len);
	struct gw_obj *o;

	pthread_mutex_lock(&cache.lock);
	o = cache_find_locked(fh, len, hash);
	pthread_mutex_unlock(&cache.lock);
	return o;
}

/* Take @o out of the cache; its reference goes to @reap (cache lock held). */
static void cache_remove_locked(struct gw_obj *o, struct obj_reap *reap)
{
	struct obj_ext *e = obj_ext_of(o);

	/* the table, not the lru link, says whether @o is cached: that link may be on a reap list */
	if (!htable_del(&cache.table, &e->hnode))
		return;
	/* the cache's reference, put by cache_unlock() */
	list_move(&e->lru, &reap->head);
}

/* Release the cache lock, then put what was dropped under it (closing fds maybe). */
static void cache_unlock(struct obj_reap *reap)
{
	struct obj_ext *e, *next;

	pthread_mutex_unlock(&cache.lock);
	list_for_each_entry_safe(e, next, &reap->head, lru) {
		list_del(&e->lru);
		gw_obj_put(&e->obj);
	}
}

/*
 * Evict from the cold end what only the cache holds until at most @keep
 * objects are left; @files_only: leave the pseudo directories. How many.
 */
static unsigned int cache_trim_locked(size_t keep, bool files_only, struct obj_reap *reap)
{
	unsigned int n = 0;
	struct obj_ext *e, *prev;

	list_for_each_entry_safe_reverse(e, prev, &cache.lru, lru) {
		if (cache.table.count <= keep)
			break;
		if ((e->obj.xp || !files_only) &&
		    atomic_load_explicit(&e->obj.refs, memory_order_acquire) == 1) {
			cache_remove_locked(&e->obj, reap);
			n++;
		}
	}
	return n;
}

/*
 * Insert @o (one reference, the caller's) unless an object with the same
 * handle got there first: then @o is dropped and that one is returned.
 */
static struct gw_obj *cache_insert(struct gw_obj *o)
{
	struct obj_reap reap = OBJ_REAP_INIT(reap);
	uint32_t hash = hash_fnv1a32(o->fh.data, o->fh.len);
	struct obj_ext *e = obj_ext_of(o);
	struct gw_obj *old;

	pthread_mutex_lock(&cache.lock);
	old = cache_find_locked(o->fh.data, o->fh.len, hash);
	if (old) {
		pthread_mutex_unlock(&cache.lock);
		gw_obj_put(o);
		return old;
	}
	gw_obj_get(o);
	htable_add(&cache.table, &e->hnode, hash);
	list_add(&e->lru, &cache.lru);
	o->lru = now_s();
	cache_trim_locked(atomic_load_explicit(&cache_max, memory_order_relaxed), false, &reap);
	cache_unlock(&reap);
	return o;
}

void gw_obj_forget(struct gw_obj *o)
{
	struct obj_reap reap = OBJ_REAP_INIT(reap);

	pthread_mutex_lock(&cache.lock);
	cache_remove_locked(o, &reap);
	cache_unlock(&reap);
}

void gw_obj_fini(void)
{
	struct obj_reap reap = OBJ_REAP_INIT(reap);

	pthread_mutex_lock(&cache.lock);
	while (!list_empty(&cache.lru))
		cache_remove_locked(&list_first_entry(&cache.lru, struct obj_ext, lru)->obj, &reap);
	cache_unlock(&reap);
}

void gw_obj_set_max(unsigned int n)
{
	atomic_store_explicit(&cache_max, n ? n : 1, memory_order_relaxed);
}

size_t gw_obj_cached(void)
{
	size_t n;

	pthread_mutex_lock(&cache.lock);
	n = cache.table.count;
	pthread_mutex_unlock(&cache.lock);
	return n;
}

unsigned int gw_obj_shed(void)
{
	struct obj_reap reap = OBJ_REAP_INIT(reap);
	unsigned int n;

	pthread_mutex_lock(&cache.lock);
	n = cache_trim_locked(0, true, &reap);
	cache_unlock(&reap);
	return n;
}

void gw_obj_sweep(void)
{
	struct obj_reap reap = OBJ_REAP_INIT(reap);
	uint64_t now = now_s();
	struct obj_ext *e, *prev;

	pthread_mutex_lock(&cache.lock);
	/* from the cold end: stop at the first object used recently */
	list_for_each_entry_safe_reverse(e, prev, &cache.lru, lru) {
		if (e->obj.lru + GW_OBJ_IDLE > now)
			break;
		if (atomic_load_explicit(&e->obj.refs, memory_order_acquire) == 1)
			cache_remove_locked(&e->obj, &reap);
	}
	cache_unlock(&reap);
}

/* Drop every pseudo directory from the cache (the tree is rebuilt on reload). */
void gw_obj_flush_pseudo(void)
{
	gw_obj_flush_export(NULL); /* pseudo directories have no export */
}

void gw_obj_flush_export(const struct gw_export *xp)
{
	struct obj_reap reap = OBJ_REAP_INIT(reap);
	struct obj_ext *e, *next;

	pthread_mutex_lock(&cache.lock);
	list_for_each_entry_safe(e, next, &cache.lru, lru)
		if (e->obj.xp == xp)
			cache_remove_locked(&e->obj, &reap);
	cache_unlock(&reap);
}

static struct gw_obj *pseudo_obj(const struct gw_snap *s, uint32_t idx)
{
	const struct gw_pseudo *p = &s->pseudo[idx];
	struct gw_obj *o = cache_find(p->fh.data, p->fh.len);

	if (o)
		return o;
	o = obj_new();
	if (!o)
		return NULL;
	o->fh = p->fh;
	o->pseudo = (int)idx;
	o->type = S_IFDIR;
	o->fileid = p->fileid;
	return cache_insert(o);
}

static int make_fh(struct gw_export *xp, int bfd, struct gw_fh *fh)
{
	struct {
		struct file_handle fh;
		uint8_t buf[GW_FH_HANDLE_MAX];
	} h;
	int mnt_id;

	h.fh.handle_bytes = GW_FH_HANDLE_MAX;
	if (name_to_handle_at(bfd, "", &h.fh, &mnt_id, AT_EMPTY_PATH) < 0)
		return errno == EOVERFLOW ? -ENAMETOOLONG : -errno;
	gw_fh_make(xp->fh_key, fh, GW_FH_FILE, xp->id, (uint32_t)h.fh.handle_type, h.fh.f_handle,
		   h.fh.handle_bytes);
	return 0;
}

/* An object for fds already open (both consumed), cached. */
static int file_obj(struct gw_export *xp, int fd, int bfd, const struct stat *st,
		    const struct gw_fh *fh, struct gw_obj **out)
{
	struct gw_obj *o = obj_new();

	if (!o) {
		if (bfd != fd)
			close(bfd);
		close(fd);
		return -ENOMEM;
	}
	o->xp = xp;
	o->fd = fd;
	o->bfd = bfd;
	o->fh = *fh;
	o->type = st->st_mode & S_IFMT;
	o->fileid = st->st_ino;
	*out = cache_insert(o);
	return 0;
}

static struct gw_obj *export_root(struct gw_export *xp, int *err)
{
	struct gw_obj *o = cache_find(xp->root_fh.data, xp->root_fh.len);
	struct stat st;
	int fd, bfd;

	*err = 0;
	if (o)
		return o;
	fd = GW_FD_RETRY(fcntl(xp->fd, F_DUPFD_CLOEXEC, 3));
	if (fd < 0) {
		*err = -errno;
		return NULL;
	}
	bfd = xp->bfd == xp->fd ? fd : GW_FD_RETRY(fcntl(xp->bfd, F_DUPFD_CLOEXEC, 3));
	if (bfd < 0) {
		*err = -errno;
		close(fd);
		return NULL;
	}
	if (fstat(bfd, &st) < 0) {
		*err = -errno;
		if (bfd != fd)
			close(bfd);
		close(fd);
		return NULL;
	}
	*err = file_obj(xp, fd, bfd, &st, &xp->root_fh, &o);
	return *err ? NULL : o;
}

struct gw_obj *gw_obj_root(const struct gw_snap *s)
{
	size_t i;
	int err;

	if (s->npseudo)
		return pseudo_obj(s, 0);
	for (i = 0; i < s->cfg->nexports; i++)
		if (s->pseudo_node[i] < 0)
			return export_root(s->xports[i], &err);
	return NULL;
}

/*
 * Open @rel (relative to the export root, "" for the root itself) under
 * the served directory and check it is the inode @bst describes.
 */
static int open_served(struct gw_export *xp, const char *rel, const struct stat *bst, int *fd)
{
	struct stat st;

	*fd = GW_FD_RETRY(openat(xp->fd, *rel ? rel : ".", O_PATH | O_NOFOLLOW | O_CLOEXEC));
	if (*fd < 0)
		return errno == ENOENT || errno == ENOTDIR ? -ESTALE : -errno;
	if (fstat(*fd, &st) < 0 || st.st_ino != bst->st_ino ||
	    (st.st_mode & S_IFMT) != (bst->st_mode & S_IFMT)) {
		close(*fd);
		*fd = -1;
		return -ESTALE;
	}
	return 0;
}

/*
 * A backing fd's path relative to the export's backing directory: 0,
 * -ESTALE (removed, or the kernel knows no path for it: the link of a
 * disconnected dentry, a file decoded from its handle that nothing has
 * looked up by name since the caches were dropped, is "/") or -EXDEV (a
 * path outside the export).
 */
static int backing_rel(struct gw_export *xp, int bfd, char *rel, size_t size)
{
	char link[32], path[PATH_MAX + 16];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", bfd);
	n = readlink(link, path, sizeof(path) - 1);
	if (n < 0)
		return -errno;
	path[n] = '\0';
	if (n > 10 && strcmp(path + n - 10, " (deleted)") == 0)
		return -ESTALE;
	if (strncmp(path, xp->back_path, xp->back_len) != 0 ||
	    (path[xp->back_len] != '/' && path[xp->back_len] != '\0'))
		return strcmp(path, "/") == 0 ? -ESTALE : -EXDEV;
	snprintf(rel, size, "%s", path[xp->back_len] == '/' ? path + xp->back_len + 1 : "");
	return 0;
}

/*
 * Open a non-directory of a lacunafs export from its backing handle
 * through lacunafs's lookup by handle (LACUNA_FH_NAME), for a file whose
 * backing dentry is disconnected: after a reboot, nothing has looked its
 * name up yet and the kernel knows no path for it.
 */
static int open_by_lfs_handle(struct gw_export *xp, const struct file_handle *h,
			      const struct stat *bst, int *fd)
{
	char name[sizeof(LACUNA_FH_NAME) + 8 + 2 * LACUNA_FH_NAME_BYTES];
	const unsigned char *b = h->f_handle;
	struct stat st;
	size_t n;
	unsigned int i;

	if (h->handle_bytes > LACUNA_FH_NAME_BYTES)
		return -ESTALE;
	n = (size_t)snprintf(name, sizeof(name), "%s%08x", LACUNA_FH_NAME,
			     (unsigned int)h->handle_type);
	for (i = 0; i < h->handle_bytes; i++)
		n += (size_t)snprintf(name + n, sizeof(name) - n, "%02x", b[i]);
	*fd = GW_FD_RETRY(openat(xp->fd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC));
	if (*fd < 0)
		return errno == ENOENT || errno == ESTALE ? -ESTALE : -errno;
	if (fstat(*fd, &st) < 0 || st.st_ino != bst->st_ino ||
	    (st.st_mode & S_IFMT) != (bst->st_mode & S_IFMT)) {
		close(*fd);
		*fd = -1;
		return -ESTALE;
	}
	return 0;
}

static int resolve_file(const struct gw_snap *s, const uint8_t *fh, size_t len, struct gw_obj **out)
{
	struct {
		struct file_handle fh;
		uint8_t buf[GW_FH_HANDLE_MAX];
	} h;
	struct gw_export *xp = gw_export_find(s, xdr_get_u32(fh + 4));
	size_t hdr = gw_fh_hdr(fh);
	char rel[PATH_MAX + 16];
	struct gw_fh gfh;
	struct stat bst;
	int bfd, fd = -1, err, tries;

	if (!xp)
		return -ESTALE;
	h.fh.handle_bytes = (unsigned int)(len - hdr);
	h.fh.handle_type = (int)xdr_get_u32(fh + 8);
	memcpy(h.fh.f_handle, fh + hdr, len - hdr);
	bfd = GW_FD_RETRY(open_by_handle_at(xp->hfd, &h.fh, O_PATH | O_NOFOLLOW | O_CLOEXEC));
	if (bfd < 0)
		return errno == EINVAL ? -EBADF : errno == ENOENT ? -ESTALE : -errno;
	if (fstat(bfd, &bst) < 0) {
		err = -errno;
		goto out_close_bfd;
	}
	if (bst.st_dev != 0 && bst.st_nlink == 0 && !S_ISDIR(bst.st_mode)) {
		err = -ESTALE;
		goto out_close_bfd;
	}
	if (!xp->lacunafs) {
		err = backing_rel(xp, bfd, rel, sizeof(rel));
		if (err)
			goto out_close_stale;
		fd = bfd;
	} else {
		/* the file may be renamed between the two steps: try again then */
		for (tries = 0;; tries++) {
			err = backing_rel(xp, bfd, rel, sizeof(rel));
			if (!err)
				err = open_served(xp, rel, &bst, &fd);
			if (!err || err != -ESTALE || tries == 2)
				break;
		}
		/*
		 * no path (nothing cached since a reboot): lacunafs finds it by
		 * its handle, and refuses it if it can tell it lies outside its
		 * backing directory, which it cannot for such a file. Never a
		 * file with a path outside, and never for an untagged version 1
		 * handle (legacy_handles), which anyone can make: those resolve
		 * only what has a path under the export.
		 */
		if (err == -ESTALE && !S_ISDIR(bst.st_mode) && hdr == GW_FH_HDR)
			err = open_by_lfs_handle(xp, &h.fh, &bst, &fd);
		if (err)
			goto out_close_stale;
	}
	if (hdr == GW_FH_HDR_V1 && S_ISDIR(bst.st_mode) && bst.st_ino == xp->root_ino) {
		/* a version 1 handle of the export root: the root's object (LOOKUPP knows it) */
		close(fd);
		if (bfd != fd)
			close(bfd);
		*out = export_root(xp, &err);
		return err;
	}
	memcpy(gfh.data, fh, len);
	gfh.len = (uint32_t)len;
	return file_obj(xp, fd, bfd, &bst, &gfh, out);

out_close_stale:
	if (err == -EXDEV) {
		log_debug("handle of a file outside export %s refused", xp->path);
		err = -ESTALE;
	}
out_close_bfd:
	close(bfd);
	return err;
}

static int obj_from_fh(const struct gw_snap *s, const uint8_t *fh, size_t len, struct gw_obj **out);

int gw_obj_from_fh(const struct gw_snap *s, const uint8_t *fh, size_t len, struct gw_obj **out)
{
	int err = obj_from_fh(s, fh, len, out);

	if (err == -EBADF) {
		char hex[2 * 32 + 1];
		size_t i;

		for (i = 0; i < len && i < 32; i++)
			snprintf(hex + 2 * i, 3, "%02x", fh[i]);
		hex[2 * i] = '\0';
		log_debug("bad handle (%zu bytes): %s", len, hex);
	}
	return err;
}

static int obj_from_fh(const struct gw_snap *s, const uint8_t *fh, size_t len, struct gw_obj **out)
{
	struct gw_obj *o;
	size_t hdr;
	int rc;

	*out = NULL;
	/* the tag first: nothing of a handle not made here is looked at */
	rc = gw_fh_check(s->fh_key, s->cfg->legacy_handles, fh, len);
	if (rc < 0)
		return rc;
	hdr = gw_fh_hdr(fh);
	if (fh[1] == GW_FH_PSEUDO) {
		uint32_t idx = xdr_get_u32(fh + 4);

		if (len != hdr)
			return -EBADF;
		/* a version 1 handle has the same bytes 0-11 but the version */
		if (idx >= s->npseudo ||
		    memcmp(s->pseudo[idx].fh.data + 1, fh + 1, GW_FH_HDR_V1 - 1) ||
		    (!rc && memcmp(s->pseudo[idx].fh.data, fh, len)))
			return -ESTALE;
		*out = pseudo_obj(s, idx);
		return *out ? 0 : -ENOMEM;
	}
	if (fh[1] != GW_FH_FILE || len == hdr)
		return -EBADF;
	o = cache_find(fh, len);
	if (o) {
		struct stat st;

		/*
		 * A cached object whose file was removed since: its handle is
		 * stale now, unless the file is open (NFSv4 state pins it): as
		 * on a local filesystem, what is open lives on without a name.
		 */
		if (!atomic_load(&o->pins) && fstat(o->fd, &st) == 0 && st.st_nlink == 0) {
			gw_obj_forget(o);
			gw_obj_put(o);
			return -ESTALE;
		}
		*out = o;
		return 0;
	}
	{
		struct gw_cred saved;
		bool had = gw_cred_current(&saved);
		int err;

		/* open_by_handle_at() needs CAP_DAC_READ_SEARCH: as root, then back */
		gw_cred_leave();
		err = resolve_file(s, fh, len, out);
		if (had && gw_cred_enter(&saved))
			log_err("gw_obj_from_fh: could not restore the caller's credentials");
		return err;
	}
}

/* @name under a real directory; ".." allowed (LOOKUPP). */
static int lookup_file(struct gw_obj *dir, const char *name, struct gw_obj **out)
{
	struct gw_export *xp = dir->xp;
	struct stat st, bst;
	struct gw_fh fh;
	int fd, bfd, err, tries;

	for (tries = 0;; tries++) {
		fd = GW_FD_RETRY(openat(dir->fd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC));
		if (fd < 0)
			return -errno;
		if (fstat(fd, &st) < 0) {
			err = -errno;
			close(fd);
			return err;
		}
		if (!xp->lacunafs) {
			bfd = fd;
			bst = st;
			break;
		}
		bfd = GW_FD_RETRY(openat(dir->bfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC));
		if (bfd < 0) {
			err = -errno;
			close(fd);
			if (err == -ENOENT && tries < 2)
				continue; /* renamed between the two opens */
			return err;
		}
		if (fstat(bfd, &bst) == 0 && bst.st_ino == st.st_ino)
			break;
		close(bfd);
		close(fd);
		if (tries == 2)
			return -ESTALE;
	}
	err = make_fh(xp, bfd, &fh);
	if (err) {
		if (bfd != fd)
			close(bfd);
		close(fd);
		return err;
	}
	return file_obj(xp, fd, bfd, &bst, &fh, out);
}

int gw_obj_lookup(const struct gw_snap *s, struct gw_obj *dir, const char *name,
		  struct gw_obj **out)
{
	uint32_t i;
	int err;

	*out = NULL;
	if (!gw_obj_is_pseudo(dir)) {
		if (dir->type != S_IFDIR)
			return dir->type == S_IFLNK ? -ELOOP : -ENOTDIR;
		return lookup_file(dir, name, out);
	}
	for (i = 1; i < s->npseudo; i++) {
		const struct gw_pseudo *p = &s->pseudo[i];

		if (p->parent != (uint32_t)dir->pseudo || strcmp(p->name, name))
			continue;
		if (p->xport >= 0) {
			*out = export_root(s->xports[p->xport], &err);
			return *out ? 0 : err;
		}
		*out = pseudo_obj(s, i);
		return *out ? 0 : -ENOMEM;
	}
	return -ENOENT;
}

int gw_obj_parent(const struct gw_snap *s, struct gw_obj *dir, struct gw_obj **out)
{
	int node;

	*out = NULL;
	if (gw_obj_is_pseudo(dir)) {
		if (dir->pseudo == 0)
			return -ENOENT;
		*out = pseudo_obj(s, s->pseudo[dir->pseudo].parent);
		return *out ? 0 : -ENOMEM;
	}
	if (dir->type != S_IFDIR)
		return -ENOTDIR;
	if (dir->fh.len == dir->xp->root_fh.len &&
	    !memcmp(dir->fh.data, dir->xp->root_fh.data, dir->fh.len)) {
		/* the export root: up into the pseudo filesystem */
		if (!gw_export_node(s, dir->xp, &node))
			return -ESTALE; /* no longer exported */
		if (node < 0)
			return -ENOENT;
		*out = pseudo_obj(s, s->pseudo[node].parent);
		return *out ? 0 : -ENOMEM;
	}
	return lookup_file(dir, "..", out);
}

int gw_obj_stat(struct gw_srv *s, struct gw_obj *o, struct stat *st)
{
	if (gw_obj_is_pseudo(o)) {
		memset(st, 0, sizeof(*st));
		st->st_mode = S_IFDIR | 0555;
		st->st_nlink = 2;
		st->st_ino = o->fileid;
		st->st_blksize = 4096;
		st->st_atim.tv_sec = st->st_mtim.tv_sec = st->st_ctim.tv_sec =
			(time_t)(s->boot_ns / 1000000000ULL);
		return 0;
	}
	if (fstatat(o->fd, "", st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? -ESTALE : -errno;
	return 0;
}

int gw_obj_statfs(struct gw_obj *o, struct statfs *sf)
{
	if (gw_obj_is_pseudo(o)) {
		memset(sf, 0, sizeof(*sf));
		sf->f_bsize = 4096;
		sf->f_namelen = NFS4_NAME_MAX;
		return 0;
	}
	if (fstatfs(o->fd, sf) < 0)
		return -errno;
	return 0;
}

void gw_obj_procpath(const struct gw_obj *o, char buf[32])
{
	snprintf(buf, 32, "/proc/self/fd/%d", o->fd);
}

int gw_obj_open(struct gw_obj *o, int flags)
{
	char path[32];
	int fd;

	if (gw_obj_is_pseudo(o))
		return -EISDIR;
	gw_obj_procpath(o, path);
	fd = GW_FD_RETRY(open(path, flags | O_CLOEXEC));
	if (fd < 0)
		return errno == ENOENT ? -ESTALE : -errno;
	return fd;
}
