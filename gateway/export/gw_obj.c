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
#include "lacuna/ioctl.h"
#include "log.h"

#define GW_OBJ_BUCKETS 8192
#define GW_OBJ_IDLE 3 /* seconds */

/* max_cached_files in force */
static atomic_uint cache_max = GW_CACHED_FILES_MAX;

static struct {
	pthread_mutex_t lock;
	struct gw_obj *bucket[GW_OBJ_BUCKETS];
	struct gw_obj lru; /* list head: lru_next is the most recent */
	size_t count;
} cache = { .lock = PTHREAD_MUTEX_INITIALIZER };

/* LRU links live in a side structure so gw.h stays small */
struct obj_ext {
	struct gw_obj obj;
	struct obj_ext *prev, *next;
};

static struct obj_ext lru_head = { .prev = &lru_head, .next = &lru_head };

/* Objects the cache dropped under its lock, chained by hnext: their references put after it */
struct obj_reap {
	struct gw_obj *head;
};

static uint64_t now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (uint64_t)ts.tv_sec;
}

static uint32_t fh_hash(const uint8_t *p, size_t n)
{
	uint32_t h = 2166136261u;

	while (n--)
		h = (h ^ *p++) * 16777619u;
	return h;
}

static void lru_unlink(struct obj_ext *e)
{
	e->prev->next = e->next;
	e->next->prev = e->prev;
}

static void lru_front(struct obj_ext *e)
{
	e->next = lru_head.next;
	e->prev = &lru_head;
	lru_head.next->prev = e;
	lru_head.next = e;
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
	e->obj.fd = e->obj.bfd = e->obj.rfd = -1;
	e->obj.pseudo = -1;
	pthread_mutex_init(&e->obj.lock, NULL);
	return &e->obj;
}

/* Cached object with these handle bytes, with a reference (cache lock held). */
static struct gw_obj *cache_find_locked(const uint8_t *fh, size_t len, uint32_t hash)
{
	struct gw_obj *o;

	for (o = cache.bucket[hash % GW_OBJ_BUCKETS]; o; o = o->hnext)
		if (o->hash == hash && o->fh.len == len && !memcmp(o->fh.data, fh, len)) {
			struct obj_ext *e = (struct obj_ext *)o;

			lru_unlink(e);
			lru_front(e);
			o->lru = now_s();
			return gw_obj_get(o);
		}
	return NULL;
}

static struct gw_obj *cache_find(const uint8_t *fh, size_t len)
{
	uint32_t hash = fh_hash(fh, len);
	struct gw_obj *o;

	pthread_mutex_lock(&cache.lock);
	o = cache_find_locked(fh, len, hash);
	pthread_mutex_unlock(&cache.lock);
	return o;
}

/* Take @o out of the cache; its reference goes to @reap (cache lock held). */
static void cache_remove_locked(struct gw_obj *o, struct obj_reap *reap)
{
	struct gw_obj **pp = &cache.bucket[o->hash % GW_OBJ_BUCKETS];

	for (; *pp; pp = &(*pp)->hnext)
		if (*pp == o) {
			*pp = o->hnext;
			lru_unlink((struct obj_ext *)o);
			cache.count--;
			o->hnext = reap->head; /* the cache's reference, put by cache_unlock() */
			reap->head = o;
			return;
		}
}

/* Release the cache lock, then put what was dropped under it (closing fds maybe). */
static void cache_unlock(struct obj_reap *reap)
{
	struct gw_obj *o, *next;

	pthread_mutex_unlock(&cache.lock);
	for (o = reap->head; o; o = next) {
		next = o->hnext;
		gw_obj_put(o);
	}
	reap->head = NULL;
}

/*
 * Evict from the cold end what only the cache holds until at most @keep
 * objects are left; @files_only: leave the pseudo directories. How many.
 */
static unsigned int cache_trim_locked(size_t keep, bool files_only, struct obj_reap *reap)
{
	unsigned int n = 0;
	struct obj_ext *e;

	for (e = lru_head.prev; cache.count > keep && e != &lru_head;) {
		struct obj_ext *prev = e->prev;

		if ((e->obj.xp || !files_only) &&
		    atomic_load_explicit(&e->obj.refs, memory_order_acquire) == 1) {
			cache_remove_locked(&e->obj, reap);
			n++;
		}
		e = prev;
	}
	return n;
}

/*
 * Insert @o (one reference, the caller's) unless an object with the same
 * handle got there first: then @o is dropped and that one is returned.
 */
static struct gw_obj *cache_insert(struct gw_obj *o)
{
	struct obj_reap reap = { NULL };
	struct gw_obj *old;

	o->hash = fh_hash(o->fh.data, o->fh.len);
	pthread_mutex_lock(&cache.lock);
	old = cache_find_locked(o->fh.data, o->fh.len, o->hash);
	if (old) {
		pthread_mutex_unlock(&cache.lock);
		gw_obj_put(o);
		return old;
	}
	gw_obj_get(o);
	o->hnext = cache.bucket[o->hash % GW_OBJ_BUCKETS];
	cache.bucket[o->hash % GW_OBJ_BUCKETS] = o;
	lru_front((struct obj_ext *)o);
	o->lru = now_s();
	cache.count++;
	cache_trim_locked(atomic_load_explicit(&cache_max, memory_order_relaxed), false, &reap);
	cache_unlock(&reap);
	return o;
}

void gw_obj_forget(struct gw_obj *o)
{
	struct obj_reap reap = { NULL };

	pthread_mutex_lock(&cache.lock);
	cache_remove_locked(o, &reap);
	cache_unlock(&reap);
}

int gw_obj_init(void)
{
	return 0;
}

void gw_obj_fini(void)
{
	struct obj_reap reap = { NULL };

	pthread_mutex_lock(&cache.lock);
	while (lru_head.next != &lru_head)
		cache_remove_locked(&lru_head.next->obj, &reap);
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
	n = cache.count;
	pthread_mutex_unlock(&cache.lock);
	return n;
}

unsigned int gw_obj_shed(void)
{
	struct obj_reap reap = { NULL };
	unsigned int n;

	pthread_mutex_lock(&cache.lock);
	n = cache_trim_locked(0, true, &reap);
	cache_unlock(&reap);
	return n;
}

void gw_obj_sweep(void)
{
	struct obj_reap reap = { NULL };
	uint64_t now = now_s();
	struct obj_ext *e;

	pthread_mutex_lock(&cache.lock);
	/* from the cold end: stop at the first object used recently */
	for (e = lru_head.prev; e != &lru_head;) {
		struct obj_ext *prev = e->prev;

		if (e->obj.lru + GW_OBJ_IDLE > now)
			break;
		if (atomic_load_explicit(&e->obj.refs, memory_order_acquire) == 1)
			cache_remove_locked(&e->obj, &reap);
		e = prev;
	}
	cache_unlock(&reap);
}

/* Drop every pseudo directory from the cache (the tree is rebuilt on reload). */
void gw_obj_flush_pseudo(void)
{
	gw_obj_flush_xport(NULL); /* pseudo directories have no export */
}

void gw_obj_flush_xport(const struct gw_xport *xp)
{
	struct obj_reap reap = { NULL };
	struct obj_ext *e, *next;

	pthread_mutex_lock(&cache.lock);
	for (e = lru_head.next; e != &lru_head; e = next) {
		next = e->next;
		if (e->obj.xp == xp)
			cache_remove_locked(&e->obj, &reap);
	}
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

static int make_fh(struct gw_xport *xp, int bfd, struct gw_fh *fh)
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
static int file_obj(struct gw_xport *xp, int fd, int bfd, const struct stat *st,
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

static struct gw_obj *export_root(struct gw_xport *xp, int *err)
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
static int open_served(struct gw_xport *xp, const char *rel, const struct stat *bst, int *fd)
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
static int backing_rel(struct gw_xport *xp, int bfd, char *rel, size_t size)
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
static int open_by_lfs_handle(struct gw_xport *xp, const struct file_handle *h,
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
	struct gw_xport *xp = gw_xport_find(s, xdr_get_u32(fh + 4));
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
	struct gw_xport *xp = dir->xp;
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
		if (!gw_xport_node(s, dir->xp, &node))
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
