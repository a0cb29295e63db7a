// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Stable client records in the state directory and the grace period
 * after a start: see the "Operation" essay in nfs4_recov.h.
 *
 * Record file (big-endian, NFS4_REC_HDR bytes then the name, then CRC):
 *
 *   0  magic "LCNCLNT1"        28 flavor of the principal
 *   8  version (1)             32 uid
 *  12  minor version           36 gid
 *  16  clientid                40 verifier (8)
 *  24  server boot stamp       48 name length, then the name
 *  end CRC-32 (IEEE) of every byte before it
 *
 * A file is named client-HASH (FNV-1a of the name, 16 hex digits), with
 * a -N suffix when two names share a hash; the name inside is what
 * counts.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "gw.h"
#include "htable.h"
#include "log.h"
#include "nfs4_recov.h"
#include "nfs4_state.h"
#include "xdr.h"

#define REC_VERSION 1
#define REC_BUCKETS 256 /* to start with: the table doubles as it fills */
#define REC_FILE_MAX 40

struct rec_ent {
	struct hnode hnode; /* nfs4_recov.ents, by name_hash() */
	uint8_t *name;
	uint32_t len;
	char file[REC_FILE_MAX];
	uint64_t clientid; /* incarnation whose record is on disk; 0: the previous run's */
	bool on_disk;
	bool old;  /* recorded at start: may reclaim in this grace */
	bool done; /* old: finished reclaiming */
	bool gone; /* removal pending for gone_id */
	uint64_t gone_id;
};

struct nfs4_recov {
	pthread_mutex_t lock; /* leaf: table, grace (see nfs4_recov.h) */
	pthread_mutex_t io;   /* record files; taken before .lock, never under the state lock */
	char *dir;
	int dfd, lockfd;
	uint32_t boot;
	atomic_bool grace; /* written under .lock; read without it for the common "no" */
	bool purge; /* grace ended: old records not reclaimed go */
	time_t grace_end;
	unsigned int lease;
	bool serving; /* the clock of grace runs from nfs4_recov_serving() on */
	unsigned int nold, nold_done, nents;
	unsigned long long reclaimed_opens, reclaimed_locks, grace_refused;
	struct htable ents; /* a rec_ent per client name recorded or to record */
};

/* ---------------------------------------------------------------- format */

uint32_t nfs4_rec_crc32(const uint8_t *p, size_t n)
{
	uint32_t crc = 0xffffffffU;
	size_t i;
	int k;

	for (i = 0; i < n; i++) {
		crc ^= p[i];
		for (k = 0; k < 8; k++)
			crc = (crc >> 1) ^ (0xedb88320U & (0U - (crc & 1)));
	}
	return ~crc;
}

static void put_u64(uint8_t *p, uint64_t v)
{
	xdr_put_u32(p, (uint32_t)(v >> 32));
	xdr_put_u32(p + 4, (uint32_t)v);
}

static uint64_t get_u64(const uint8_t *p)
{
	return (uint64_t)xdr_get_u32(p) << 32 | xdr_get_u32(p + 4);
}

size_t nfs4_rec_encode(const struct nfs4_rec *rec, uint8_t *buf)
{
	size_t n = NFS4_REC_HDR + rec->name_len;

	memcpy(buf, NFS4_REC_MAGIC, 8);
	xdr_put_u32(buf + 8, REC_VERSION);
	xdr_put_u32(buf + 12, rec->minor);
	put_u64(buf + 16, rec->clientid);
	xdr_put_u32(buf + 24, rec->boot);
	xdr_put_u32(buf + 28, rec->flavor);
	xdr_put_u32(buf + 32, rec->uid);
	xdr_put_u32(buf + 36, rec->gid);
	memcpy(buf + 40, rec->verf, NFS4_VERIFIER_SIZE);
	xdr_put_u32(buf + 48, rec->name_len);
	memcpy(buf + NFS4_REC_HDR, rec->name, rec->name_len);
	xdr_put_u32(buf + n, nfs4_rec_crc32(buf, n));
	return n + 4;
}

int nfs4_rec_decode(const uint8_t *buf, size_t len, struct nfs4_rec *rec, const char **why)
{
	uint32_t name_len;

	memset(rec, 0, sizeof(*rec));
	if (len < NFS4_REC_HDR + 4) {
		*why = "too short";
		return -EBADMSG;
	}
	if (memcmp(buf, NFS4_REC_MAGIC, 8)) {
		*why = "not a client record";
		return -EBADMSG;
	}
	if (xdr_get_u32(buf + 8) != REC_VERSION) {
		*why = "unknown version";
		return -EBADMSG;
	}
	name_len = xdr_get_u32(buf + 48);
	if (name_len == 0 || name_len > NFS4_OPAQUE_LIMIT || len != NFS4_REC_HDR + name_len + 4) {
		*why = "bad length";
		return -EBADMSG;
	}
	if (xdr_get_u32(buf + len - 4) != nfs4_rec_crc32(buf, len - 4)) {
		*why = "bad checksum";
		return -EBADMSG;
	}
	rec->minor = xdr_get_u32(buf + 12);
	rec->clientid = get_u64(buf + 16);
	rec->boot = xdr_get_u32(buf + 24);
	rec->flavor = xdr_get_u32(buf + 28);
	rec->uid = xdr_get_u32(buf + 32);
	rec->gid = xdr_get_u32(buf + 36);
	memcpy(rec->verf, buf + 40, NFS4_VERIFIER_SIZE);
	rec->name = buf + NFS4_REC_HDR;
	rec->name_len = name_len;
	return 0;
}

/* ---------------------------------------------------------------- table (r->lock held) */

/* FNV-1a 64 of the name: the table's hash, and the record file's name (a format on disk) */
static uint64_t name_hash(const uint8_t *p, uint32_t n)
{
	return hash_fnv1a64(p, n);
}

static struct rec_ent *ent_find(struct nfs4_recov *r, const uint8_t *name, uint32_t len)
{
	uint64_t h = name_hash(name, len);
	struct hnode *n;

	HTABLE_FOR_EACH_HASH(&r->ents, h, n) {
		struct rec_ent *e = container_of(n, struct rec_ent, hnode);

		if (e->len == len && !memcmp(e->name, name, len))
			return e;
	}
	return NULL;
}

static bool file_taken(struct nfs4_recov *r, const char *file)
{
	struct hnode *n, *tmp;
	size_t i;

	HTABLE_FOR_EACH_SAFE(&r->ents, i, n, tmp)
		if (!strcmp(container_of(n, struct rec_ent, hnode)->file, file))
			return true;
	return false;
}

static struct rec_ent *ent_new(struct nfs4_recov *r, const uint8_t *name, uint32_t len,
			       const char *file)
{
	struct rec_ent *e = calloc(1, sizeof(*e));
	uint64_t h = name_hash(name, len);
	unsigned int i;

	if (!e)
		return NULL;
	e->name = malloc(len);
	if (!e->name) {
		free(e);
		return NULL;
	}
	memcpy(e->name, name, len);
	e->len = len;
	if (file) {
		snprintf(e->file, sizeof(e->file), "%s", file);
	} else {
		snprintf(e->file, sizeof(e->file), "client-%016llx", (unsigned long long)h);
		for (i = 1; file_taken(r, e->file); i++)
			snprintf(e->file, sizeof(e->file), "client-%016llx-%u",
				 (unsigned long long)h, i);
	}
	nfs4_hash_add(&r->ents, &e->hnode, h);
	r->nents++;
	return e;
}

static void ent_free(struct nfs4_recov *r, struct rec_ent *e)
{
	htable_del(&r->ents, &e->hnode);
	r->nents--;
	free(e->name);
	free(e);
}

/* ---------------------------------------------------------------- grace (r->lock held) */

static void grace_end_locked(struct nfs4_recov *r, const char *why)
{
	if (!r->grace)
		return;
	r->grace = false;
	r->purge = true;
	LTRACE(lacunad, grace__end, r->nold, r->nold_done, why);
	log_info("grace period ends: %s (%u of %u recorded client(s) reclaimed; %llu open(s), "
		 "%llu lock(s))",
		 why, r->nold_done, r->nold, r->reclaimed_opens, r->reclaimed_locks);
}

static bool in_grace_locked(struct nfs4_recov *r)
{
	if (r->grace && r->serving && nfs4_now() >= r->grace_end)
		grace_end_locked(r, "lease time over");
	return r->grace;
}

static void mark_done_locked(struct nfs4_recov *r, struct rec_ent *e, const char *how)
{
	char name[65];
	uint32_t i;

	if (!e || !e->old || e->done)
		return;
	for (i = 0; i < e->len && i < sizeof(name) - 1; i++)
		name[i] = e->name[i] >= 0x20 && e->name[i] < 0x7f ? (char)e->name[i] : '?';
	name[i] = '\0';
	e->done = true;
	r->nold_done++;
	log_info("grace: client \"%s\" %s", name, how);
	if (r->nold_done == r->nold)
		grace_end_locked(r, "every recorded client is done reclaiming");
}

void nfs4_recov_serving(struct nfs4_recov *r)
{
	if (!r)
		return;
	pthread_mutex_lock(&r->lock);
	r->serving = true;
	if (r->grace) {
		r->grace_end = nfs4_now() + (time_t)r->lease;
		log_info("grace period: every transport is up; recorded clients have %u s from now",
			 r->lease);
	}
	pthread_mutex_unlock(&r->lock);
}

bool nfs4_recov_in_grace(struct nfs4_recov *r)
{
	bool g;

	/* once grace is over it never comes back: no lock on the I/O path */
	if (!r || !atomic_load_explicit(&r->grace, memory_order_acquire))
		return false;
	pthread_mutex_lock(&r->lock);
	g = in_grace_locked(r);
	pthread_mutex_unlock(&r->lock);
	return g;
}

uint32_t nfs4_recov_check(struct nfs4_recov *r, const struct nfs4_client *clp, bool reclaim)
{
	struct rec_ent *e;
	uint32_t status = NFS4_OK;

	if (!r)
		return reclaim ? NFS4ERR_NO_GRACE : NFS4_OK;
	pthread_mutex_lock(&r->lock);
	e = ent_find(r, clp->name, clp->name_len);
	if (reclaim) {
		if (!in_grace_locked(r) || (e && e->old && e->done))
			status = NFS4ERR_NO_GRACE;
		else if (!e || !e->old)
			status = NFS4ERR_RECLAIM_BAD;
	} else {
		if (clp->minor == 0 && r->grace)
			mark_done_locked(r, e, "is done reclaiming (first new open or lock)");
		if (in_grace_locked(r)) {
			status = NFS4ERR_GRACE;
			r->grace_refused++;
		}
	}
	pthread_mutex_unlock(&r->lock);
	return status;
}

void nfs4_recov_reclaim_complete(struct nfs4_recov *r, const struct nfs4_client *clp)
{
	if (!r)
		return;
	pthread_mutex_lock(&r->lock);
	if (r->grace)
		mark_done_locked(r, ent_find(r, clp->name, clp->name_len), "sent RECLAIM_COMPLETE");
	pthread_mutex_unlock(&r->lock);
}

void nfs4_recov_reclaimed(struct nfs4_recov *r, bool lock)
{
	if (!r)
		return;
	pthread_mutex_lock(&r->lock);
	if (lock)
		r->reclaimed_locks++;
	else
		r->reclaimed_opens++;
	pthread_mutex_unlock(&r->lock);
}

/* ---------------------------------------------------------------- files (r->io held) */

static int sync_dir(struct nfs4_recov *r)
{
	return fsync(r->dfd) < 0 ? -errno : 0;
}

static int write_file(struct nfs4_recov *r, const char *file, const uint8_t *buf, size_t len)
{
	char tmp[REC_FILE_MAX + 8];
	size_t off = 0;
	int fd, err = 0;

	snprintf(tmp, sizeof(tmp), "tmp-%s", file);
	fd = GW_FD_RETRY(
		openat(r->dfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600));
	if (fd < 0)
		return -errno;
	while (off < len) {
		ssize_t n = write(fd, buf + off, len - off);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			err = -errno;
			break;
		}
		off += (size_t)n;
	}
	if (!err && fsync(fd) < 0)
		err = -errno;
	if (close(fd) < 0 && !err)
		err = -errno;
	if (!err && renameat(r->dfd, tmp, r->dfd, file) < 0)
		err = -errno;
	if (!err)
		err = sync_dir(r);
	if (err)
		unlinkat(r->dfd, tmp, 0);
	return err;
}

int nfs4_recov_record(struct nfs4_recov *r, const struct nfs4_client *clp)
{
	uint8_t buf[NFS4_REC_MAX];
	struct nfs4_rec rec = {
		.minor = clp->minor,
		.clientid = clp->clientid,
		.boot = r ? r->boot : 0,
		.flavor = clp->flavor,
		.uid = clp->uid,
		.gid = clp->gid,
		.name = clp->name,
		.name_len = clp->name_len,
	};
	char file[REC_FILE_MAX];
	struct rec_ent *e;
	size_t len;
	int err;

	if (!r)
		return 0;
	pthread_mutex_lock(&r->lock);
	e = ent_find(r, clp->name, clp->name_len);
	if (e && e->on_disk && e->clientid == clp->clientid) {
		pthread_mutex_unlock(&r->lock);
		return 0; /* the common case: written already */
	}
	pthread_mutex_unlock(&r->lock);

	pthread_mutex_lock(&r->io);
	pthread_mutex_lock(&r->lock);
	e = ent_find(r, clp->name, clp->name_len);
	if (e && e->on_disk && e->clientid == clp->clientid) {
		err = 0;
		goto out_unlock;
	}
	if (!e)
		e = ent_new(r, clp->name, clp->name_len, NULL);
	if (!e) {
		err = -ENOMEM;
		goto out_unlock;
	}
	snprintf(file, sizeof(file), "%s", e->file);
	pthread_mutex_unlock(&r->lock);

	memcpy(rec.verf, clp->verf, NFS4_VERIFIER_SIZE);
	len = nfs4_rec_encode(&rec, buf);
	{
		struct gw_cred saved;
		bool had = gw_cred_current(&saved);

		/* the worker runs with the caller's credentials: write as lacunad */
		gw_cred_leave();
		err = write_file(r, file, buf, len);
		if (had && gw_cred_enter(&saved))
			log_err("nfs4_recov_record: could not restore the caller's credentials");
	}

	pthread_mutex_lock(&r->lock);
	e = ent_find(r, clp->name, clp->name_len);
	if (err) {
		log_err("state_dir %s: writing %s: %s: client %016llx gets no state", r->dir, file,
			strerror(-err), (unsigned long long)clp->clientid);
	} else if (e) {
		e->on_disk = true;
		e->clientid = clp->clientid;
		e->gone = false;
	}
out_unlock:
	pthread_mutex_unlock(&r->lock);
	pthread_mutex_unlock(&r->io);
	return err;
}

void nfs4_recov_forget(struct nfs4_recov *r, const struct nfs4_client *clp)
{
	struct rec_ent *e;

	if (!r || !clp->name)
		return;
	pthread_mutex_lock(&r->lock);
	e = ent_find(r, clp->name, clp->name_len);
	if (e && e->on_disk && e->clientid == clp->clientid) {
		e->gone = true;
		e->gone_id = clp->clientid;
	}
	pthread_mutex_unlock(&r->lock);
}

/* A record whose removal is due, or NULL (r->lock held) */
static struct rec_ent *ent_due(struct nfs4_recov *r)
{
	struct hnode *n, *tmp;
	size_t i;

	HTABLE_FOR_EACH_SAFE(&r->ents, i, n, tmp) {
		struct rec_ent *e = container_of(n, struct rec_ent, hnode);
		bool stale = r->purge && e->old && e->clientid == 0;

		if ((e->gone && e->clientid == e->gone_id) || stale)
			return e;
	}
	return NULL;
}

/* Remove one record whose removal is due (r->io held, r->lock not); false: none left */
static bool remove_one(struct nfs4_recov *r)
{
	char file[REC_FILE_MAX];
	struct rec_ent *e;
	int err;

	pthread_mutex_lock(&r->lock);
	e = ent_due(r);
	if (!e) {
		r->purge = false;
		pthread_mutex_unlock(&r->lock);
		return false;
	}
	snprintf(file, sizeof(file), "%s", e->file);
	if (e->old && r->grace) {
		/* a recorded client gone during grace: nothing more to wait for from it */
		if (e->done)
			r->nold_done--;
		r->nold--;
		if (r->nold_done == r->nold)
			grace_end_locked(r, "every recorded client is done reclaiming");
	}
	ent_free(r, e);
	pthread_mutex_unlock(&r->lock);

	if (unlinkat(r->dfd, file, 0) < 0 && errno != ENOENT) {
		err = errno;
		log_err("state_dir %s: unlink %s: %s", r->dir, file, strerror(err));
	} else {
		sync_dir(r);
	}
	return true;
}

void nfs4_recov_tick(struct nfs4_recov *r)
{
	if (!r)
		return;
	nfs4_recov_in_grace(r);
	pthread_mutex_lock(&r->io);
	while (remove_one(r))
		;
	pthread_mutex_unlock(&r->io);
}

void nfs4_recov_get_stats(struct nfs4_recov *r, struct nfs4_recov_stats *st)
{
	memset(st, 0, sizeof(*st));
	if (!r)
		return;
	pthread_mutex_lock(&r->lock);
	st->in_grace = in_grace_locked(r);
	st->to_reclaim = r->nold;
	st->reclaimed = r->nold_done;
	st->reclaimed_opens = r->reclaimed_opens;
	st->reclaimed_locks = r->reclaimed_locks;
	st->grace_refused = r->grace_refused;
	st->records = r->nents;
	pthread_mutex_unlock(&r->lock);
}

/* ---------------------------------------------------------------- start and stop */

static void set_aside(struct nfs4_recov *r, const char *file, const char *why)
{
	char aside[NAME_MAX + 1];

	snprintf(aside, sizeof(aside), "%.200s.corrupt", file);
	log_err("state_dir %s: %s: %s: not trusted, renamed to %s", r->dir, file, why, aside);
	if (renameat(r->dfd, file, r->dfd, aside) < 0)
		log_err("state_dir %s: rename %s: %s", r->dir, file, strerror(errno));
}

static void load_one(struct nfs4_recov *r, const char *file)
{
	uint8_t buf[NFS4_REC_MAX + 1];
	struct nfs4_rec rec;
	struct rec_ent *e;
	const char *why;
	ssize_t n;
	int fd;

	fd = openat(r->dfd, file, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0) {
		log_err("state_dir %s: open %s: %s", r->dir, file, strerror(errno));
		return;
	}
	n = read(fd, buf, sizeof(buf));
	close(fd);
	if (n < 0) {
		log_err("state_dir %s: read %s: %s", r->dir, file, strerror(errno));
		return;
	}
	if (nfs4_rec_decode(buf, (size_t)n, &rec, &why)) {
		set_aside(r, file, why);
		return;
	}
	if (ent_find(r, rec.name, rec.name_len)) {
		set_aside(r, file, "a second record of the same client");
		return;
	}
	e = ent_new(r, rec.name, rec.name_len, file);
	if (!e)
		return;
	e->on_disk = true;
	e->old = true;
	r->nold++;
}

static int load(struct nfs4_recov *r)
{
	struct dirent *d;
	DIR *dir;
	int fd;

	fd = openat(r->dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	dir = fdopendir(fd);
	if (!dir) {
		close(fd);
		return -errno;
	}
	while ((d = readdir(dir))) {
		if (!strncmp(d->d_name, "tmp-", 4)) {
			unlinkat(r->dfd, d->d_name, 0); /* a write cut short by a crash */
			continue;
		}
		if (strncmp(d->d_name, "client-", 7) || strlen(d->d_name) >= REC_FILE_MAX ||
		    strchr(d->d_name, '.'))
			continue;
		load_one(r, d->d_name);
	}
	closedir(dir);
	return 0;
}

static int open_dir(struct nfs4_recov *r)
{
	struct stat st;

	if (mkdir(r->dir, 0700) < 0 && errno == ENOENT) {
		/* its parent first (one-export mode: /var/lib/lacunad/ADDR-PORT) */
		char *slash = strrchr(r->dir, '/');

		if (slash && slash != r->dir) {
			*slash = '\0';
			mkdir(r->dir, 0700);
			*slash = '/';
		}
	}
	if (mkdir(r->dir, 0700) < 0 && errno != EEXIST) {
		log_err("state_dir %s: mkdir: %s", r->dir, strerror(errno));
		return -errno;
	}
	r->dfd = open(r->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	if (r->dfd < 0) {
		log_err("state_dir %s: open: %s", r->dir, strerror(errno));
		return -errno;
	}
	if (fstat(r->dfd, &st) < 0)
		return -errno;
	if (st.st_uid != geteuid() || (st.st_mode & 0022)) {
		log_err("state_dir %s: must be owned by uid %u and writable by it alone "
			"(it is uid %u, mode %04o)",
			r->dir, (unsigned int)geteuid(), (unsigned int)st.st_uid,
			(unsigned int)(st.st_mode & 07777));
		return -EPERM;
	}
	r->lockfd = openat(r->dfd, "lock", O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (r->lockfd < 0) {
		log_err("state_dir %s: open lock: %s", r->dir, strerror(errno));
		return -errno;
	}
	if (flock(r->lockfd, LOCK_EX | LOCK_NB) < 0) {
		int err = errno;

		if (err == EWOULDBLOCK)
			log_err("state_dir %s is in use by another lacunad: give each its own "
				"(state_dir, --state-dir)",
				r->dir);
		else
			log_err("state_dir %s: flock: %s", r->dir, strerror(err));
		return -(err == EWOULDBLOCK ? EBUSY : err);
	}
	return 0;
}

int nfs4_recov_open(const char *dir, bool grace, unsigned int lease, uint32_t boot,
		    struct nfs4_recov **out)
{
	struct nfs4_recov *r = calloc(1, sizeof(*r));
	int err;

	*out = NULL;
	if (!r)
		return -ENOMEM;
	if (htable_init(&r->ents, REC_BUCKETS)) {
		free(r);
		return -ENOMEM;
	}
	pthread_mutex_init(&r->lock, NULL);
	pthread_mutex_init(&r->io, NULL);
	r->dfd = r->lockfd = -1;
	r->boot = boot;
	r->dir = strdup(dir);
	if (!r->dir) {
		nfs4_recov_close(r);
		return -ENOMEM;
	}
	err = open_dir(r);
	if (!err)
		err = load(r);
	if (err) {
		nfs4_recov_close(r);
		return err;
	}
	if (!r->nold) {
		log_info("grace period: no recorded client, none needed (state_dir %s)", r->dir);
	} else if (!grace) {
		log_warn("grace = off: the %u client(s) recorded in %s cannot reclaim their opens "
			 "and locks, which other clients may now take",
			 r->nold, r->dir);
		r->purge = true;
	} else {
		r->grace = true;
		r->lease = lease;
		r->grace_end = nfs4_now() + (time_t)lease;
		LTRACE(lacunad, grace__start, r->nold, lease);
		log_info("grace period starts: %u recorded client(s) may reclaim their opens "
			 "and locks for up to %u s; new opens and locks wait (NFS4ERR_GRACE)",
			 r->nold, lease);
	}
	*out = r;
	return 0;
}

void nfs4_recov_close(struct nfs4_recov *r)
{
	struct hnode *n, *tmp;
	size_t i;

	if (!r)
		return;
	HTABLE_FOR_EACH_SAFE(&r->ents, i, n, tmp)
		ent_free(r, container_of(n, struct rec_ent, hnode));
	htable_fini(&r->ents);
	if (r->lockfd >= 0)
		close(r->lockfd);
	if (r->dfd >= 0)
		close(r->dfd);
	pthread_mutex_destroy(&r->lock);
	pthread_mutex_destroy(&r->io);
	free(r->dir);
	free(r);
}
