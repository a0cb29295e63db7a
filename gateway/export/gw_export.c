// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Exports as lacunad runs them: for each configured export, the
 * directory served (normally a lacunafs mount, so every I/O takes the
 * range lock) and the backing directory under it whose filesystem gives
 * the file handles (gw.h explains the handles); and the NFSv4 pseudo
 * filesystem that leads from the root to every export.
 *
 * A lacunafs mount is recognized in /proc/self/mountinfo by its type
 * "fuse.lacunafs"; its source field is the backing directory (lacunafs
 * mounts with fsname=BACKING). An exported directory inside a lacunafs
 * mount maps to the same relative path under the backing directory.
 *
 * Exports are identified by a hash of their path, so handles survive
 * restarts and reloads. Every export ever configured stays in the
 * registry (gw_srv.xports, under reload_lock) with its fds open: one that
 * a reload removes is served by no snapshot any more, and its handles
 * become stale; one a later reload adds again is the same object.
 *
 * Operation
 * ---------
 * A reload (or the start) calls gw_exports_load() with a parsed
 * configuration. Under reload_lock only, which no COMPOUND takes, it
 * finds each configured export in the registry or opens it (realpath,
 * opens, the registration of the buffer pool with lacunafs: all of which
 * may wait on a lacunafs that hangs), and builds the pseudo filesystem
 * into a new struct gw_snap. Only then does it take snap_lock, swap the
 * pointer and release the lock; the snapshot it replaced is freed, its
 * configuration with it, by whoever drops the last reference: the reload
 * itself, or the last COMPOUND that began under it. A configuration that
 * cannot be put in force leaves the one in force untouched.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "gw.h"
#include "htable.h"
#include "lacuna/lacuna.h"
#include "log.h"

static int open_sparse_client(struct gw_export *xp, struct lacuna_client **lc);

/*
 * The export id, bytes 4-7 of every file handle: FNV-1a 32 of the
 * configured path, never 0 (and a pseudo directory's handle from its
 * parent and name). Handles persist, so it must not change: "/srv/nfs"
 * is 0x89bfbee9 (tests/unit/test_htable.c pins it).
 */
static uint32_t fnv1a(const char *s)
{
	uint32_t h = hash_fnv1a32(s, strlen(s));

	return h ? h : 1;
}

/* Undo mountinfo's octal escapes (\040 for a space...) in place. */
static void unescape(char *s)
{
	char *d = s;

	while (*s) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
		    s[3] >= '0' && s[3] <= '7') {
			*d++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
			s += 4;
		} else {
			*d++ = *s++;
		}
	}
	*d = '\0';
}

static bool path_under(const char *path, const char *mnt)
{
	size_t n = strlen(mnt);

	if (strcmp(mnt, "/") == 0)
		return true;
	return strncmp(path, mnt, n) == 0 && (path[n] == '/' || path[n] == '\0');
}

/*
 * The mount holding @real (a realpath): its mount point, type and source.
 * Later lines of mountinfo are mounted over earlier ones.
 */
static int find_mount(const char *real, char *mnt, char *type, char *src, size_t size)
{
	char *line = NULL;
	size_t cap = 0, best = 0;
	FILE *f = fopen("/proc/self/mountinfo", "re");
	int found = 0;

	if (!f)
		return -errno;
	while (getline(&line, &cap, f) > 0) {
		char *fields[12], *sep, *save = NULL, *tok;
		int n = 0;

		for (tok = strtok_r(line, " \n", &save); tok && n < 12;
		     tok = strtok_r(NULL, " \n", &save))
			fields[n++] = tok;
		/* id parent maj:min root mountpoint opts [optional...] - type source superopts */
		if (n < 7)
			continue;
		unescape(fields[4]);
		if (!path_under(real, fields[4]) || strlen(fields[4]) < best)
			continue;
		sep = NULL;
		for (int i = 5; i < n; i++)
			if (strcmp(fields[i], "-") == 0) {
				sep = fields[i];
				if (i + 2 < n) {
					best = strlen(fields[4]);
					snprintf(mnt, size, "%s", fields[4]);
					snprintf(type, size, "%s", fields[i + 1]);
					unescape(fields[i + 2]);
					snprintf(src, size, "%s", fields[i + 2]);
					found = 1;
				}
				break;
			}
		(void)sep;
	}
	free(line);
	fclose(f);
	return found ? 0 : -ENOENT;
}

static int make_root_fh(struct gw_export *xp, struct stat *st)
{
	struct {
		struct file_handle fh;
		uint8_t buf[GW_FH_HANDLE_MAX];
	} h;
	int mnt_id;

	h.fh.handle_bytes = GW_FH_HANDLE_MAX;
	if (name_to_handle_at(xp->bfd, "", &h.fh, &mnt_id, AT_EMPTY_PATH) < 0) {
		int err = -errno;

		log_err("%s: name_to_handle_at: %s (the backing filesystem must support file "
			"handles)",
			xp->back_path, strerror(errno));
		return err;
	}
	gw_fh_make(xp->fh_key, &xp->root_fh, GW_FH_FILE, xp->id, (uint32_t)h.fh.handle_type,
		   h.fh.f_handle, h.fh.handle_bytes);
	xp->root_ino = st->st_ino;
	return 0;
}

/*
 * CLONE's granularity on @xp: the block size of its backing filesystem
 * when lacunafs can reflink there (LACUNA_IOC_INFO), else 0 (ext4, a
 * plain directory, a lacunafs without the clone ioctl).
 */
static void export_clone_probe(struct gw_export *xp)
{
	struct lacuna_info info;
	uint64_t blk = 0;
	int fd;

	fd = open(xp->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) {
		if (lacuna_is_lacunafs(fd, &info))
			blk = info.clone_blksize;
		close(fd);
	}
	if (blk > UINT32_MAX)
		blk = 0; /* clone_blksize is a uint32_t on the wire */
	__atomic_store_n(&xp->clone_blksize, blk, __ATOMIC_RELEASE);
}

static int export_open(struct gw_export *xp, const struct gw_export_conf *e)
{
	char real[PATH_MAX], mnt[PATH_MAX], type[PATH_MAX], src[PATH_MAX];
	struct stat st, bst;
	int err;

	xp->fd = xp->bfd = xp->hfd = -1;
	if (!realpath(e->path, real)) {
		err = -errno;
		log_err("%s: realpath: %s", e->path, strerror(errno));
		return err;
	}
	xp->path = strdup(real);
	xp->fd = open(real, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (!xp->path || xp->fd < 0) {
		err = xp->path ? -errno : -ENOMEM;
		log_err("%s: open: %s", real, strerror(-err));
		return err;
	}
	if (find_mount(real, mnt, type, src, sizeof(mnt)) == 0 &&
	    strcmp(type, "fuse.lacunafs") == 0 && src[0] == '/') {
		char back[PATH_MAX * 2];

		snprintf(back, sizeof(back), "%s%s", src,
			 strcmp(mnt, "/") ? real + strlen(mnt) : real);
		xp->lacunafs = true;
		xp->back_path = realpath(back, NULL);
		if (!xp->back_path) {
			err = -errno;
			log_err("%s: lacunafs over %s: realpath(%s): %s", real, src, back,
				strerror(errno));
			return err;
		}
		xp->bfd = open(xp->back_path, O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (xp->bfd < 0) {
			err = -errno;
			log_err("%s: open: %s", xp->back_path, strerror(errno));
			return err;
		}
	} else {
		xp->back_path = strdup(real);
		if (!xp->back_path)
			return -ENOMEM;
		xp->bfd = xp->fd;
	}
	xp->hfd = open(xp->back_path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (xp->hfd < 0) {
		err = -errno;
		log_err("%s: open: %s", xp->back_path, strerror(errno));
		return err;
	}
	xp->back_len = strlen(xp->back_path);
	if (xp->back_len == 1)
		xp->back_len = 0; /* "/": every absolute path is under it */
	if (fstat(xp->fd, &st) < 0 || fstat(xp->bfd, &bst) < 0) {
		err = -errno;
		log_err("%s: fstat: %s", real, strerror(errno));
		return err;
	}
	if (st.st_ino != bst.st_ino) {
		log_err("%s: not the same directory as its backing %s", real, xp->back_path);
		return -EXDEV;
	}
	switch (e->fsid_kind) {
	case GW_FSID_NUM:
		xp->fsid_major = e->fsid;
		xp->fsid_minor = 0;
		break;
	case GW_FSID_ROOT:
		xp->fsid_major = xp->fsid_minor = 0;
		break;
	default:
		xp->fsid_major = major(bst.st_dev);
		xp->fsid_minor = minor(bst.st_dev);
		break;
	}
	err = make_root_fh(xp, &bst);
	if (err)
		return err;
	if (xp->lacunafs) {
		err = open_sparse_client(xp, &xp->lc);
		if (err)
			return err;
		export_clone_probe(xp);
	}
	log_info("export %s%s%s (id %08x)", real, xp->lacunafs ? ": lacunafs over " : "",
		 xp->lacunafs ? xp->back_path : ": plain directory, sparse reads not atomic",
		 xp->id);
	return 0;
}

/*
 * READ_PLUS and SEEK read, and WRITE writes, through lacunafs's atomic
 * sparse read and write, with the chunk pool registered as the arena the
 * data lands in and is written from. Without it (an old lacunafs, a pool
 * that is not a memfd) they use the fallback, which is correct but not
 * atomic. A pool larger than the mount takes as an arena (a max_record
 * too large for it) is refused: that would silently give up atomicity.
 */
int gw_export_register(struct gw_export *xp, struct lacuna_client **lc)
{
	struct lacuna_info info;
	int fd, err;

	*lc = NULL;
	if (!xp->pool || chunk_pool_fd(xp->pool) < 0)
		return -EOPNOTSUPP;
	fd = open(xp->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (lacuna_is_lacunafs(fd, &info) && chunk_pool_length(xp->pool) > info.arena_max) {
		close(fd);
		return -EFBIG;
	}
	err = lacuna_client_open_arena(fd, chunk_pool_fd(xp->pool), chunk_pool_base(xp->pool),
				       chunk_pool_length(xp->pool), lc);
	close(fd);
	if (err)
		*lc = NULL;
	return err;
}

static int open_sparse_client(struct gw_export *xp, struct lacuna_client **lc)
{
	int err = gw_export_register(xp, lc);

	if (err == -EFBIG) {
		log_err("%s: the buffer pool max_record makes (%zu MiB) is more than this "
			"lacunafs takes as an arena: lower max_record or upgrade lacunafs",
			xp->path, chunk_pool_length(xp->pool) >> 20);
		return err;
	}
	if (err)
		log_warn("%s: lacunafs sparse-read client: %s: sparse reads will not be atomic",
			 xp->path, strerror(-err));
	return 0;
}

static void export_free(struct gw_export *xp)
{
	if (xp->lc)
		lacuna_client_close(xp->lc);
	if (xp->hfd >= 0)
		close(xp->hfd);
	if (xp->bfd >= 0 && xp->bfd != xp->fd)
		close(xp->bfd);
	if (xp->fd >= 0)
		close(xp->fd);
	free(xp->path);
	free(xp->back_path);
	free(xp);
}

struct gw_export *gw_export_find(const struct gw_snap *sn, uint32_t id)
{
	size_t i;

	for (i = 0; i < sn->cfg->nexports; i++)
		if (sn->xports[i]->id == id)
			return sn->xports[i];
	return NULL;
}

/* Index of @xp in @sn's configuration, or -1. */
static int snap_index(const struct gw_snap *sn, const struct gw_export *xp)
{
	return xp->slot < sn->nslots ? sn->cfg_idx[xp->slot] : -1;
}

const struct gw_export_conf *gw_export_conf_of(const struct gw_snap *sn, const struct gw_export *xp)
{
	int i = snap_index(sn, xp);

	return i < 0 ? NULL : &sn->cfg->exports[i];
}

bool gw_export_node(const struct gw_snap *sn, const struct gw_export *xp, int *node)
{
	int i = snap_index(sn, xp);

	if (i < 0)
		return false;
	*node = sn->pseudo_node[i];
	return true;
}

static int pseudo_add(struct gw_snap *s, uint32_t parent, const char *name, size_t len)
{
	struct gw_pseudo *p;
	uint32_t i;
	char path_hash_src[PATH_MAX];

	for (i = 1; i < s->npseudo; i++)
		if (s->pseudo[i].parent == parent && strlen(s->pseudo[i].name) == len &&
		    !memcmp(s->pseudo[i].name, name, len))
			return (int)i;
	if (s->npseudo == GW_PSEUDO_MAX || len > NFS4_NAME_MAX)
		return -ENOSPC;
	p = &s->pseudo[s->npseudo];
	memset(p, 0, sizeof(*p));
	memcpy(p->name, name, len);
	p->parent = parent;
	p->xport = -1;
	p->fileid = s->npseudo + 1;
	snprintf(path_hash_src, sizeof(path_hash_src), "%u/%s", parent, p->name);
	gw_fh_make(s->fh_key, &p->fh, GW_FH_PSEUDO, s->npseudo,
		   fnv1a(path_hash_src) ^ (uint32_t)s->pseudo[parent].fileid, NULL, 0);
	return (int)s->npseudo++;
}

/* Build the pseudo tree: every component of every export's pseudo path is a node. */
static int pseudo_build(struct gw_snap *s)
{
	size_t i;

	s->npseudo = 0;
	for (i = 0; i < s->cfg->nexports; i++)
		if (strcmp(s->cfg->exports[i].pseudo, "/") == 0) {
			s->pseudo_node[i] = -1; /* this export is the root */
			return 0;
		}
	s->npseudo = 1;
	memset(&s->pseudo[0], 0, sizeof(s->pseudo[0]));
	s->pseudo[0].xport = -1;
	s->pseudo[0].fileid = 1;
	gw_fh_make(s->fh_key, &s->pseudo[0].fh, GW_FH_PSEUDO, 0, 0, NULL, 0);
	for (i = 0; i < s->cfg->nexports; i++) {
		struct gw_export *xp = s->xports[i];
		const char *p = s->cfg->exports[i].pseudo;
		int node = 0;

		while (*p) {
			size_t len;

			while (*p == '/')
				p++;
			len = strcspn(p, "/");
			if (!len)
				break;
			node = pseudo_add(s, (uint32_t)node, p, len);
			if (node < 0) {
				log_err("%s: the pseudo filesystem is full (%d nodes)", xp->path,
					GW_PSEUDO_MAX);
				return node;
			}
			p += len;
		}
		s->pseudo[node].xport = (int)i;
		s->pseudo_node[i] = node;
	}
	return 0;
}

/* ---------------------------------------------------------------- a lacunafs that dies */

/*
 * What a replaced mount leaves behind: workers may still be using the old
 * fds and client (they read xp->fd without a lock), so they are kept until
 * lacunad exits. One set per remount.
 */
static struct {
	int *fds;
	struct lacuna_client **lcs;
	size_t nfds, nlcs;
} retired;

static void retire_fd(int fd)
{
	int *n = realloc(retired.fds, (retired.nfds + 1) * sizeof(*n));

	if (!n)
		return; /* leaked, not closed under a user */
	retired.fds = n;
	retired.fds[retired.nfds++] = fd;
}

static void retire_lc(struct lacuna_client *lc)
{
	struct lacuna_client **n;

	if (!lc)
		return;
	n = realloc(retired.lcs, (retired.nlcs + 1) * sizeof(*n));
	if (!n)
		return;
	retired.lcs = n;
	retired.lcs[retired.nlcs++] = lc;
}

static bool dead_errno(int err)
{
	return err == ENOTCONN || err == ECONNABORTED;
}

/* A new lacunafs mounted at xp->path over the same backing directory: take it. */
static int export_revive(struct gw_export *xp)
{
	char mnt[PATH_MAX], type[PATH_MAX], src[PATH_MAX], back[PATH_MAX * 2];
	struct lacuna_client *lc = NULL;
	int fd, bfd, hfd, err;
	struct stat st, bst;

	if (find_mount(xp->path, mnt, type, src, sizeof(mnt)) || strcmp(type, "fuse.lacunafs"))
		return -ENOENT; /* not mounted (again) yet */
	snprintf(back, sizeof(back), "%s%s", src,
		 strcmp(mnt, "/") ? xp->path + strlen(mnt) : xp->path);
	fd = open(xp->path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	bfd = open(xp->back_path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	hfd = open(xp->back_path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	err = bfd < 0 || hfd < 0 ? -errno : 0;
	if (!err && (fstat(fd, &st) < 0 || fstat(bfd, &bst) < 0))
		err = -errno;
	if (!err && (st.st_ino != bst.st_ino || st.st_ino != xp->root_ino)) {
		log_err("export %s: the lacunafs mounted there now is not over %s (%s)", xp->path,
			xp->back_path, back);
		err = -EXDEV;
	}
	if (err) {
		if (hfd >= 0)
			close(hfd);
		if (bfd >= 0)
			close(bfd);
		close(fd);
		return err;
	}
	open_sparse_client(xp, &lc);
	export_clone_probe(xp);
	retire_fd(xp->fd);
	retire_fd(xp->hfd);
	retire_fd(xp->bfd);
	retire_lc(xp->lc);
	__atomic_store_n(&xp->lc, lc, __ATOMIC_RELEASE);
	__atomic_store_n(&xp->hfd, hfd, __ATOMIC_RELEASE);
	__atomic_store_n(&xp->bfd, bfd, __ATOMIC_RELEASE);
	__atomic_store_n(&xp->fd, fd, __ATOMIC_RELEASE);
	atomic_fetch_add(&xp->gen, 1);
	gw_obj_flush_export(xp);
	atomic_store(&xp->dead, false);
	log_info("export %s: lacunafs is mounted again over %s: serving it%s", xp->path,
		 xp->back_path, lc ? "" : " (sparse reads not atomic)");
	return 0;
}

static void export_watch(struct gw_export *xp)
{
	struct stat st;
	int err;

	if (!atomic_load(&xp->dead)) {
		err = fstat(xp->fd, &st) < 0 ? errno : 0;
		if (!dead_errno(err))
			return;
		atomic_store(&xp->dead, true);
		gw_obj_flush_export(xp);
		log_err("export %s: lacunafs is gone (%s): answering NFS4ERR_DELAY until it is "
			"mounted again there",
			xp->path, strerror(err));
	}
	export_revive(xp);
}

void gw_exports_watch(struct gw_srv *s)
{
	struct gw_snap *sn = gw_snap_get(s);
	size_t i;

	/* a snapshot reference holds up no reload, however long a probe waits */
	for (i = 0; sn && i < sn->cfg->nexports; i++)
		if (sn->xports[i]->lacunafs)
			export_watch(sn->xports[i]);
	gw_snap_put(sn);
}

/* ---------------------------------------------------------------- snapshots */

struct gw_snap *gw_snap_get(struct gw_srv *s)
{
	struct gw_snap *sn;

	pthread_mutex_lock(&s->snap_lock);
	sn = s->snap;
	if (sn)
		atomic_fetch_add_explicit(&sn->refs, 1, memory_order_relaxed);
	pthread_mutex_unlock(&s->snap_lock);
	return sn;
}

/* @sn and its configuration; the exports stay (the registry holds them). */
static void snap_free(struct gw_snap *sn)
{
	gw_config_free(sn->cfg);
	free(sn->cfg_idx);
	free(sn->pseudo_node);
	free(sn->xports);
	free(sn);
}

void gw_snap_put(struct gw_snap *sn)
{
	if (sn && atomic_fetch_sub_explicit(&sn->refs, 1, memory_order_acq_rel) == 1)
		snap_free(sn);
}

/* The export for @e: the one a reload keeps, or a new one opened into the registry. */
static int export_get(struct gw_srv *s, const struct gw_export_conf *e, struct gw_export **out)
{
	uint32_t id = fnv1a(e->path);
	struct gw_export *xp, **nx;
	size_t j;
	int err;

	for (j = 0; j < s->nxports; j++)
		if (s->xports[j]->id == id) {
			*out = s->xports[j];
			return 0;
		}
	xp = calloc(1, sizeof(*xp));
	if (!xp)
		return -ENOMEM;
	xp->id = id;
	xp->fh_key = s->fh_key;
	xp->pool = s->pool;
	xp->slot = (uint32_t)s->nxports;
	err = export_open(xp, e);
	if (err)
		goto out_free;
	nx = realloc(s->xports, (s->nxports + 1) * sizeof(*nx));
	if (!nx) {
		err = -ENOMEM;
		goto out_free;
	}
	s->xports = nx;
	s->xports[s->nxports++] = xp;
	*out = xp;
	return 0;

out_free:
	export_free(xp);
	return err;
}

/* The snapshot of @cfg, not yet in force (reload_lock held): 0 or -errno, @cfg not taken. */
static int snap_build(struct gw_srv *s, struct gw_config *cfg, struct gw_snap **out)
{
	size_t i, n = cfg->nexports ? cfg->nexports : 1;
	struct gw_snap *sn = calloc(1, sizeof(*sn));
	int err = -ENOMEM;

	if (!sn)
		return -ENOMEM;
	sn->xports = calloc(n, sizeof(*sn->xports));
	sn->pseudo_node = calloc(n, sizeof(*sn->pseudo_node));
	if (!sn->xports || !sn->pseudo_node)
		goto out_free;
	for (i = 0; i < cfg->nexports; i++) {
		err = export_get(s, &cfg->exports[i], &sn->xports[i]);
		if (err)
			goto out_free;
	}
	sn->nslots = s->nxports;
	sn->cfg_idx = malloc((sn->nslots ? sn->nslots : 1) * sizeof(*sn->cfg_idx));
	err = -ENOMEM;
	if (!sn->cfg_idx)
		goto out_free;
	for (i = 0; i < sn->nslots; i++)
		sn->cfg_idx[i] = -1;
	for (i = 0; i < cfg->nexports; i++)
		sn->cfg_idx[sn->xports[i]->slot] = (int)i;
	sn->cfg = cfg;
	sn->fh_key = s->fh_key;
	err = pseudo_build(sn);
	if (err)
		goto out_free;
	atomic_init(&sn->refs, 1);
	*out = sn;
	return 0;

out_free:
	sn->cfg = NULL; /* still the caller's */
	snap_free(sn);
	return err;
}

int gw_exports_check_new(struct gw_srv *s, const struct gw_config *cfg, gw_err_fn *err_fn,
			 void *arg)
{
	struct gw_config view = *cfg; /* the exports not served yet, borrowed from @cfg */
	size_t i, j;
	int err;

	view.exports = calloc(cfg->nexports ? cfg->nexports : 1, sizeof(*view.exports));
	if (!view.exports)
		return -ENOMEM;
	view.nexports = 0;
	pthread_mutex_lock(&s->reload_lock);
	for (i = 0; i < cfg->nexports; i++) {
		uint32_t id = fnv1a(cfg->exports[i].path);

		for (j = 0; j < s->nxports && s->xports[j]->id != id; j++)
			;
		if (j == s->nxports)
			view.exports[view.nexports++] = cfg->exports[i];
	}
	pthread_mutex_unlock(&s->reload_lock);
	err = gw_config_check_paths(&view, err_fn, arg);
	free(view.exports);
	return err;
}

/* Put @sn in force (NULL: none): the one it replaces, for the caller to drop. */
static struct gw_snap *snap_swap(struct gw_srv *s, struct gw_snap *sn)
{
	struct gw_snap *old;

	pthread_mutex_lock(&s->snap_lock);
	old = s->snap;
	s->snap = sn;
	pthread_mutex_unlock(&s->snap_lock);
	return old;
}

int gw_exports_load(struct gw_srv *s, struct gw_config *cfg)
{
	struct gw_snap *sn, *old = NULL;
	int err;

	pthread_mutex_lock(&s->reload_lock);
	err = snap_build(s, cfg, &sn);
	if (!err)
		old = snap_swap(s, sn);
	pthread_mutex_unlock(&s->reload_lock);
	if (err)
		return err;
	gw_obj_flush_pseudo(); /* the old tree's directories, once their users are done */
	gw_snap_put(old);
	return 0;
}

void gw_exports_unload(struct gw_srv *s)
{
	gw_snap_put(snap_swap(s, NULL));
}
