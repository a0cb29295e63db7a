// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Byte-range locks (RFC 7530 §16.10-16.12, §16.37; RFC 8881 §18.10-18.12):
 * LOCK, LOCKT, LOCKU and RELEASE_LOCKOWNER.
 *
 * Operation
 * ---------
 * Locks live in lacunad, per file (nfs4_state.h): a lock-owner has one
 * lock stateid per file, made by its first LOCK from an open stateid
 * (open_to_lock_owner4) and named by the later ones (exist_lock_owner4).
 * A range one owner locks again replaces what it held there, with the
 * new type (upgrade, downgrade), splitting and merging as POSIX fcntl
 * locks do; LOCKU may cut a hole in the middle of a range. A READ lock
 * conflicts with another owner's WRITE lock, a WRITE lock with any
 * other owner's lock: NFS4ERR_DENIED with the conflicting lock
 * (LOCK4denied). Blocking types (READW_LT, WRITEW_LT) are handled as
 * their plain ones; the client polls.
 *
 * Real locks. What the table grants is held in the kernel as well, as
 * OFD locks on the lock stateid's own open file description of the file
 * (nfs4_ofd.c), so that a local process locking the file through the
 * export's directory and an NFS client exclude each other. LOCK checks
 * the table first (another NFS owner: LOCK4denied names it), then takes
 * the range with F_OFD_SETLK, never waiting: a local lock in the way is
 * DENIED with a LOCK4denied from F_OFD_GETLK, clientid 0 and owner
 * "local process PID" (or "local open file description"). The kernel
 * changes first and the table after, with room made in the table
 * beforehand so that its change cannot fail: a refusal leaves both as
 * they were, and the same range change on one description splits,
 * merges, upgrades and downgrades as the table does. LOCKU unlocks the
 * range in both; the stateid's end (CLOSE, RELEASE_LOCKOWNER,
 * FREE_STATEID, lease expiry, DESTROY_CLIENTID) unlocks all and closes
 * the description after the state lock. LOCKT asks the table, then the
 * kernel through the owner's description (or any of the file's, or one
 * of its own). A description that cannot be opened for want of fds
 * makes LOCK DELAY (4.1+) or RESOURCE (4.0): no lock is granted that is
 * not held. Ranges starting past 2^63 - 1 (no off_t reaches them) are
 * kept in the table only; one reaching past it runs to the end.
 *
 * Ranges: a length of 0 is INVAL, as is one running past 2^64 - 1
 * unless the length is all ones ("to the end of the file"), as nfsd.
 *
 * 4.0 seqids: a LOCK with a new lock-owner is sequenced by the open
 * owner's seqid (open_seqid) and starts the lock-owner at lock_seqid;
 * the other LOCKs and LOCKU by the lock-owner's seqid. Retransmissions
 * get the owner's cached result back (nfs4_seqid_replay). The lease is
 * renewed by any of them (nfs4_stid_lookup, nfs4_client_lookup40).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nfs4_ops.h"
#include "nfs4_recov.h"
#include "nfs4_state.h"

struct lock_owner4 {
	uint64_t clientid;
	const uint8_t *owner;
	uint32_t len;
};

static int dec_lock_owner(struct xdr_in *x, struct lock_owner4 *lo)
{
	if (xdr_dec_u64(x, &lo->clientid) ||
	    xdr_dec_opaque(x, &lo->owner, &lo->len, NFS4_OWNER_MAX))
		return -EBADMSG;
	return 0;
}

static int dec_locktype(struct xdr_in *x, uint32_t *type)
{
	if (xdr_dec_enum(x, type, WRITEW_LT) || *type < READ_LT)
		return -EBADMSG; /* as nfsd: an unknown lock type is not XDR we understand */
	return 0;
}

/*
 * LOCK and LOCKT need a regular file: a directory is ISDIR, a symbolic
 * link SYMLINK, anything else INVAL in 4.0 (RFC 7530 §16.10.4) and
 * WRONG_TYPE from 4.1 on (RFC 8881 §18.10.4). Not OPEN's rule, where
 * every other type is SYMLINK in 4.0.
 */
static uint32_t lock_file_type(const struct nfs4_compound *c, const struct gw_obj *o)
{
	return o->type == S_IFLNK ? NFS4ERR_SYMLINK : nfs4_regular_file(c, o);
}

static uint32_t plain_type(uint32_t type)
{
	return type == READ_LT || type == READW_LT ? READ_LT : WRITE_LT;
}

/* LOCK4denied for the lock @r held by (@clientid, @owner) */
static void enc_denied_by(struct nfs4_compound *c, const struct nfs4_lrange *r, uint64_t clientid,
			  const void *owner, uint32_t len)
{
	xdr_enc_u64(c->out, r->start);
	xdr_enc_u64(c->out, nfs4_range_len(r->start, r->end));
	xdr_enc_u32(c->out, r->type);
	xdr_enc_u64(c->out, clientid);
	xdr_enc_opaque(c->out, owner, len, NFS4_OWNER_MAX);
	c->keep_body = true;
}

/* LOCK4denied for the lock @r of lacunad's table (its owner tag is a lock stateid) */
static void enc_denied(struct nfs4_compound *c, const struct nfs4_lrange *r)
{
	const struct nfs4_stid *ls = r->owner;

	enc_denied_by(c, r, ls->clp->clientid, ls->owner->data, ls->owner->len);
}

/* The status for want of an fd (@err, a -errno from opening one) or of kernel lock memory */
static uint32_t lock_fd_status(const struct nfs4_compound *c, int err)
{
	if (err == -EMFILE || err == -ENFILE || err == -ENOLCK || err == -ENOMEM)
		return c->minor ? NFS4ERR_DELAY : NFS4ERR_RESOURCE;
	if (err == -EBADF)
		return NFS4ERR_OPENMODE; /* the description is not open for this type */
	return err ? nfs4_errno(err) : NFS4_OK;
}

/*
 * Is the kernel's lock table in the way of a @type lock on [start, end]
 * through @fd, that is a local process or open file description (the
 * locks of lacunad's other descriptions are in its own table, which is
 * checked first)? NFS4ERR_DENIED with a LOCK4denied naming "a local
 * process" (clientid 0), NFS4_OK, or an error.
 */
static uint32_t local_conflict(struct nfs4_compound *c, int fd, uint32_t type, uint64_t start,
			       uint64_t end)
{
	struct nfs4_lrange r;
	char owner[48];
	int pid = -1, rc, n;

	rc = nfs4_ofd_test(fd, type, start, end, &r, &pid);
	if (rc <= 0)
		return lock_fd_status(c, rc);
	if (pid > 0)
		n = snprintf(owner, sizeof(owner), "local process %d", pid);
	else
		n = snprintf(owner, sizeof(owner), "local open file description");
	enc_denied_by(c, &r, 0, owner, (uint32_t)n);
	return NFS4ERR_DENIED;
}

/*
 * Hold @type on [start, end] of lock stateid @ls in the kernel too,
 * never waiting: NFS4_OK, DENIED (LOCK4denied encoded) when a local
 * lock is in the way, or an error. Nothing changes on failure.
 */
static uint32_t lock_ofd(struct nfs4_compound *c, struct nfs4_stid *ls, uint32_t type,
			 uint64_t start, uint64_t end)
{
	struct nfs4_lrange r = { .start = start, .end = end, .type = WRITE_LT };
	static const char gone[] = "local lock";
	uint32_t status;
	int rc;

	rc = nfs4_ofd_set(ls->lfd, type, start, end);
	if (rc != -EAGAIN)
		return lock_fd_status(c, rc);
	status = local_conflict(c, ls->lfd, type, start, end);
	if (status != NFS4_OK)
		return status;
	/* the holder went away between the two calls: still denied, the client polls */
	enc_denied_by(c, &r, 0, gone, sizeof(gone) - 1);
	return NFS4ERR_DENIED;
}

/* ---------------------------------------------------------------- LOCK */

struct lock_args {
	uint32_t type;
	bool reclaim;
	uint64_t offset, length;
	bool new_owner;
	uint32_t open_seqid, lock_seqid;
	struct nfs4_stateid open_sid, lock_sid;
	struct lock_owner4 lo;
};
_Static_assert(sizeof(struct lock_args) <= NFS4_ARGS_MAX, "LOCK args");

int nfs4_dec_lock(struct xdr_in *x, void *args)
{
	struct lock_args *a = args;

	if (dec_locktype(x, &a->type) || xdr_dec_bool(x, &a->reclaim) ||
	    xdr_dec_u64(x, &a->offset) || xdr_dec_u64(x, &a->length) ||
	    xdr_dec_bool(x, &a->new_owner))
		return -EBADMSG;
	if (a->new_owner) {
		/* open_to_lock_owner4 */
		if (xdr_dec_u32(x, &a->open_seqid) || nfs4_dec_stateid(x, &a->open_sid) ||
		    xdr_dec_u32(x, &a->lock_seqid) || dec_lock_owner(x, &a->lo))
			return -EBADMSG;
		return 0;
	}
	/* exist_lock_owner4 */
	if (nfs4_dec_stateid(x, &a->lock_sid) || xdr_dec_u32(x, &a->lock_seqid))
		return -EBADMSG;
	return 0;
}

/* The 4.0 seqid check of @oo: NFS4_OK to go on, else the answer (*replayed: from the cache) */
static uint32_t owner_seqid(struct nfs4_compound *c, struct nfs4_owner *oo, uint32_t seqid,
			    bool *replayed)
{
	struct gw_fh fh;
	bool has_fh;

	*replayed = false;
	if (c->minor >= 1)
		return NFS4_OK;
	switch (nfs4_owner_seqid_check(oo->seqid, oo->fresh, seqid)) {
	case NFS4_SEQ_NEW:
		return NFS4_OK;
	case NFS4_SEQ_REPLAY:
		*replayed = true;
		return nfs4_seqid_replay(c, oo, &fh, &has_fh);
	default:
		return NFS4ERR_BAD_SEQID;
	}
}

static struct nfs4_stid *lock_stid_of(struct nfs4_owner *lo, const struct nfs4_file *f)
{
	struct nfs4_stid *s;

	list_for_each_entry(s, &lo->stids, o_list)
		if (s->type == NFS4_STID_LOCK && s->file == f)
			return s;
	return NULL;
}

/*
 * The lock stateid of a LOCK with open_to_lock_owner4: the open stateid
 * checked, the lock-owner found or made. *seq_owner: the owner whose
 * seqid sequences this op (the open owner).
 */
static uint32_t lock_new_owner(struct nfs4_compound *c, struct lock_args *a,
			       struct nfs4_owner **seq_owner, struct nfs4_stid **out,
			       bool *made_stid, bool *made_owner, bool *replayed, int *lfd)
{
	struct nfs4_state *st = c->srv->state;
	struct nfs4_stid *os, *ls;
	struct nfs4_owner *lo;
	uint32_t status;

	status = nfs4_stid_lookup(&c->who, &a->open_sid, NFS4_FIND_OPEN | NFS4_FIND_NOGEN, &os);
	if (status != NFS4_OK)
		return status;
	*seq_owner = os->owner;
	status = owner_seqid(c, os->owner, a->open_seqid, replayed);
	if (status != NFS4_OK || *replayed)
		return status;
	status = nfs4_sid_gen_check(os->sid.seqid, a->open_sid.seqid, c->minor);
	if (status != NFS4_OK)
		return status;
	if (!nfs4_stid_on(os, c->cfh) || !os->owner->confirmed)
		return NFS4ERR_BAD_STATEID;
	if (c->minor == 0 && a->lo.clientid != os->clp->clientid)
		return NFS4ERR_BAD_STATEID; /* the lock-owner of another client */
	lo = nfs4_owner_find(os->clp, true, a->lo.owner, a->lo.len);
	/* a lock stateid holds its locks in the kernel through a description of its own */
	if (*lfd < 0 && !(lo && lock_stid_of(lo, os->file)))
		return lock_fd_status(c, *lfd);
	if (lo) {
		/*
		 * An existing lock-owner (say after LOCKU of its last lock): the
		 * lock_seqid given is its next one, as for any of its ops (nfsd
		 * keeps the next expected seqid, this server the last used).
		 */
		if (c->minor == 0) {
			if (a->lock_seqid != lo->seqid + 1)
				return NFS4ERR_BAD_SEQID;
			lo->seqid = a->lock_seqid;
		}
	} else {
		status = gw_state_room(&c->who, os->clp, GW_STATE_LOCK_OWNER);
		if (status != NFS4_OK)
			return status;
		lo = nfs4_owner_new(st, os->clp, true, a->lo.owner, a->lo.len);
		if (!lo)
			return NFS4ERR_RESOURCE;
		lo->seqid = a->lock_seqid;
		lo->fresh = false;
		*made_owner = true;
	}
	ls = lock_stid_of(lo, os->file);
	if (!ls) {
		ls = nfs4_stid_new(st, os->clp, lo, os->file, NFS4_STID_LOCK);
		if (!ls) {
			if (*made_owner)
				nfs4_owner_release(st, lo);
			*made_owner = false;
			return NFS4ERR_RESOURCE;
		}
		ls->open = os;
		ls->lfd = *lfd;
		*lfd = -1;
		*made_stid = true;
	}
	*out = ls;
	return NFS4_OK;
}

/* The lock stateid of a LOCK with exist_lock_owner4 */
static uint32_t lock_old_owner(struct nfs4_compound *c, struct lock_args *a,
			       struct nfs4_owner **seq_owner, struct nfs4_stid **out,
			       bool *replayed)
{
	struct nfs4_stid *ls;
	uint32_t status;

	status = nfs4_stid_lookup(&c->who, &a->lock_sid, NFS4_FIND_LOCK | NFS4_FIND_NOGEN, &ls);
	if (status != NFS4_OK)
		return status;
	*seq_owner = ls->owner;
	status = owner_seqid(c, ls->owner, a->lock_seqid, replayed);
	if (status != NFS4_OK || *replayed)
		return status;
	status = nfs4_sid_gen_check(ls->sid.seqid, a->lock_sid.seqid, c->minor);
	if (status != NFS4_OK)
		return status;
	if (!nfs4_stid_on(ls, c->cfh))
		return NFS4ERR_BAD_STATEID;
	*out = ls;
	return NFS4_OK;
}

uint32_t nfs4_run_lock(struct nfs4_compound *c, void *args)
{
	struct lock_args *a = args;
	struct nfs4_state *st = c->srv->state;
	struct nfs4_owner *seq_owner = NULL;
	const struct nfs4_lrange *conflict;
	struct nfs4_stid *ls = NULL;
	bool made_stid = false, made_owner = false, replayed = false;
	uint32_t status, type = plain_type(a->type), seqid;
	struct xdr_pos pos;
	uint64_t start, end;
	size_t nlocks;
	int lfd = -1;

	status = lock_file_type(c, c->cfh);
	if (status != NFS4_OK)
		return status;
	if (nfs4_range_make(a->offset, a->length, &start, &end))
		return NFS4ERR_INVAL;
	status = nfs4_resolve_current_sid(c, a->new_owner ? &a->open_sid : &a->lock_sid);
	if (status != NFS4_OK)
		return status;
	seqid = a->new_owner ? a->open_seqid : a->lock_seqid;
	/*
	 * A lock-owner new to the file needs a description of its own: opened
	 * now, before the state lock (an open on the export is blocking I/O),
	 * and closed after it if the owner turns out to have one already.
	 */
	if (a->new_owner)
		lfd = nfs4_ofd_open(c->cfh);

	xdr_out_getpos(c->out, &pos);
	nfs4_state_lock(st);
	if (a->new_owner)
		status = lock_new_owner(c, a, &seq_owner, &ls, &made_stid, &made_owner, &replayed,
					&lfd);
	else
		status = lock_old_owner(c, a, &seq_owner, &ls, &replayed);
	if (replayed || !seq_owner)
		goto out;
	if (status != NFS4_OK)
		goto done;
	/* the client's record was made stable by its OPEN */
	status = nfs4_recov_check(st->recov, ls->clp, a->reclaim);
	if (status != NFS4_OK)
		goto done;
	if (!(ls->open->access &
	      (type == READ_LT ? OPEN4_SHARE_ACCESS_READ : OPEN4_SHARE_ACCESS_WRITE))) {
		status = NFS4ERR_OPENMODE;
		goto done;
	}
	conflict = nfs4_lset_conflict(&ls->file->locks, type, start, end, NULL, ls);
	if (conflict) {
		enc_denied(c, conflict);
		status = NFS4ERR_DENIED;
		goto done;
	}
	status = gw_state_room(&c->who, ls->clp, GW_STATE_LOCK);
	if (status != NFS4_OK)
		goto done;
	/*
	 * The kernel first, the table after, so that a refusal leaves both as
	 * they were: with room made beforehand, the table's change cannot fail
	 * once the kernel's is made. The same range change on the owner's
	 * description splits, merges, upgrades and downgrades the same way.
	 */
	if (nfs4_lset_reserve(&ls->file->locks, 2)) {
		status = c->minor ? NFS4ERR_DELAY : NFS4ERR_RESOURCE;
		goto done;
	}
	status = lock_ofd(c, ls, type, start, end);
	if (status != NFS4_OK)
		goto done;
	nlocks = ls->file->locks.n;
	nfs4_lset_lock(&ls->file->locks, ls, type, start, end);
	nfs4_stid_count_locks(st, ls, nlocks);
	nfs4_stid_bump(ls);
	nfs4_enc_stateid(c->out, &ls->sid);
	if (c->minor >= 1)
		nfs4_set_current_sid(c, &ls->sid);
	if (a->reclaim)
		nfs4_recov_reclaimed(st->recov, true);
done:
	nfs4_owner_get(seq_owner);
	if (status != NFS4_OK && made_stid) {
		struct nfs4_owner *lo = ls->owner;

		/* a failed first LOCK leaves nothing behind (as nfsd) */
		nfs4_owner_get(lo);
		nfs4_stid_free(st, ls);
		if (made_owner && list_empty(&lo->stids))
			nfs4_owner_release(st, lo);
		nfs4_owner_put(st, lo);
	}
	nfs4_seqid_done(c, seq_owner, seqid, status, &pos, NULL);
	nfs4_owner_put(st, seq_owner);
out:
	nfs4_state_defer_close(st, lfd); /* not taken: closed after the lock */
	nfs4_state_unlock(st);
	return status;
}

/* ---------------------------------------------------------------- LOCKT */

struct lockt_args {
	uint32_t type;
	uint64_t offset, length;
	struct lock_owner4 lo;
};

int nfs4_dec_lockt(struct xdr_in *x, void *args)
{
	struct lockt_args *a = args;

	if (dec_locktype(x, &a->type) || xdr_dec_u64(x, &a->offset) || xdr_dec_u64(x, &a->length) ||
	    dec_lock_owner(x, &a->lo))
		return -EBADMSG;
	return 0;
}

static bool same_lockowner(const void *owner, const void *arg)
{
	const struct nfs4_stid *ls = owner;

	return ls->owner == arg;
}

/*
 * The fd of @f to ask the kernel through for lock-owner @lo (NULL: one
 * unknown here): @lo's own description, where its own locks do not show;
 * if it has none on @f (so holds no lock there), any description of @f,
 * the locks that one hides being in the table; -1 when @f has none.
 */
static int lockt_fd(const struct nfs4_file *f, struct nfs4_owner *lo)
{
	const struct nfs4_stid *s;
	int i;

	s = lo ? lock_stid_of(lo, f) : NULL;
	if (s)
		return s->lfd;
	list_for_each_entry(s, &f->lstids, f_list)
		if (s->lfd >= 0)
			return s->lfd;
	list_for_each_entry(s, &f->opens, f_list)
		for (i = 0; i < 3; i++)
			if (s->fds[i] >= 0)
				return s->fds[i];
	return -1;
}

uint32_t nfs4_run_lockt(struct nfs4_compound *c, void *args)
{
	struct lockt_args *a = args;
	struct nfs4_state *st = c->srv->state;
	const struct nfs4_lrange *conflict;
	struct nfs4_client *clp;
	struct nfs4_owner *lo;
	struct nfs4_file *f;
	uint64_t start, end;
	uint32_t status, type = plain_type(a->type);
	bool own_fd = false;
	int fd;

	status = lock_file_type(c, c->cfh);
	if (status != NFS4_OK)
		return status;
	if (nfs4_range_make(a->offset, a->length, &start, &end))
		return NFS4ERR_INVAL;
	if (nfs4_recov_in_grace(st->recov))
		return NFS4ERR_GRACE; /* a lock not reclaimed yet would not show */
	nfs4_state_lock(st);
	status = nfs4_client_of(&c->who, a->lo.clientid, &clp);
	if (status != NFS4_OK)
		goto out;
	f = nfs4_file_find(st, c->cfh, false);
	if (!f) {
		own_fd = true; /* no state on the file here: local locks only */
		goto out;
	}
	/* an owner unknown here holds no lock: everything in the range conflicts */
	lo = nfs4_owner_find(clp, true, a->lo.owner, a->lo.len);
	conflict = nfs4_lset_conflict(&f->locks, type, start, end, same_lockowner, lo);
	if (conflict) {
		enc_denied(c, conflict);
		status = NFS4ERR_DENIED;
		goto out;
	}
	fd = lockt_fd(f, lo);
	if (fd >= 0)
		status = local_conflict(c, fd, type, start, end);
	else
		own_fd = true;
out:
	nfs4_state_unlock(st);
	if (!own_fd)
		return status;
	/* a description of its own to ask the kernel with, opened and closed without the lock */
	fd = gw_obj_open(c->cfh, O_RDONLY);
	if (fd == -EACCES || fd == -EPERM)
		fd = gw_obj_open(c->cfh, O_WRONLY);
	if (fd < 0)
		return lock_fd_status(c, fd);
	status = local_conflict(c, fd, type, start, end);
	close(fd);
	return status;
}

/* ---------------------------------------------------------------- LOCKU */

struct locku_args {
	uint32_t type, seqid;
	struct nfs4_stateid sid;
	uint64_t offset, length;
};

int nfs4_dec_locku(struct xdr_in *x, void *args)
{
	struct locku_args *a = args;

	if (dec_locktype(x, &a->type) || xdr_dec_u32(x, &a->seqid) ||
	    nfs4_dec_stateid(x, &a->sid) || xdr_dec_u64(x, &a->offset) ||
	    xdr_dec_u64(x, &a->length))
		return -EBADMSG;
	return 0;
}

uint32_t nfs4_run_locku(struct nfs4_compound *c, void *args)
{
	struct locku_args *a = args;
	struct nfs4_state *st = c->srv->state;
	struct nfs4_owner *lo;
	struct nfs4_stid *ls;
	struct xdr_pos pos;
	uint64_t start, end;
	bool replayed;
	uint32_t status;
	size_t nlocks;

	if (nfs4_range_make(a->offset, a->length, &start, &end))
		return NFS4ERR_INVAL;
	status = nfs4_resolve_current_sid(c, &a->sid);
	if (status != NFS4_OK)
		return status;
	xdr_out_getpos(c->out, &pos);
	nfs4_state_lock(st);
	status = nfs4_stid_lookup(&c->who, &a->sid, NFS4_FIND_LOCK | NFS4_FIND_NOGEN, &ls);
	if (status != NFS4_OK)
		goto out;
	lo = ls->owner;
	status = owner_seqid(c, lo, a->seqid, &replayed);
	if (replayed)
		goto out;
	if (status == NFS4_OK)
		status = nfs4_sid_gen_check(ls->sid.seqid, a->sid.seqid, c->minor);
	if (status == NFS4_OK && !nfs4_stid_on(ls, c->cfh))
		status = NFS4ERR_BAD_STATEID;
	/* a range split in two is one more lock */
	if (status == NFS4_OK && nfs4_lset_splits(&ls->file->locks, ls, start, end))
		status = gw_state_room(&c->who, ls->clp, GW_STATE_LOCK);
	/* the kernel first, then the table, which cannot fail once it has room */
	if (status == NFS4_OK && nfs4_lset_reserve(&ls->file->locks, 1))
		status = c->minor ? NFS4ERR_DELAY : NFS4ERR_RESOURCE;
	if (status == NFS4_OK)
		status = lock_fd_status(c, nfs4_ofd_set(ls->lfd, 0, start, end));
	if (status == NFS4_OK) {
		nlocks = ls->file->locks.n;
		nfs4_lset_unlock(&ls->file->locks, ls, start, end);
		nfs4_stid_count_locks(st, ls, nlocks);
	}
	if (status == NFS4_OK) {
		nfs4_stid_bump(ls);
		nfs4_enc_stateid(c->out, &ls->sid);
		if (c->minor >= 1)
			nfs4_set_current_sid(c, &ls->sid);
	}
	nfs4_seqid_done(c, lo, a->seqid, status, &pos, NULL);
out:
	nfs4_state_unlock(st);
	return status;
}

/* ---------------------------------------------------------------- RELEASE_LOCKOWNER */

struct release_lockowner_args {
	struct lock_owner4 lo;
};

int nfs4_dec_release_lockowner(struct xdr_in *x, void *args)
{
	struct release_lockowner_args *a = args;

	return dec_lock_owner(x, &a->lo);
}

uint32_t nfs4_run_release_lockowner(struct nfs4_compound *c, void *args)
{
	struct release_lockowner_args *a = args;
	struct nfs4_state *st = c->srv->state;
	struct nfs4_client *clp;
	struct nfs4_owner *lo;
	struct nfs4_stid *s;
	uint32_t status;

	nfs4_state_lock(st);
	status = nfs4_client_lookup40(c->srv->state, a->lo.clientid, &clp);
	if (status != NFS4_OK)
		goto out;
	lo = nfs4_owner_find(clp, true, a->lo.owner, a->lo.len);
	if (!lo)
		goto out; /* nothing to release */
	list_for_each_entry(s, &lo->stids, o_list)
		if (s->file && nfs4_lset_held(&s->file->locks, s)) {
			status = NFS4ERR_LOCKS_HELD;
			goto out;
		}
	if (lo->refs)
		status = NFS4ERR_DELAY; /* a LOCK of this owner is running */
	else
		nfs4_owner_release(st, lo);
out:
	nfs4_state_unlock(st);
	return status;
}
