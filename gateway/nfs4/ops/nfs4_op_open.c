// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * OPEN, OPEN_CONFIRM, OPEN_DOWNGRADE and CLOSE (RFC 7530 §16.16-16.19,
 * §16.2; RFC 8881 §18.16, §18.18, §18.2).
 *
 * Operation
 * ---------
 * OPEN runs in three steps. First, under the state lock, the open-owner
 * is found or made and, in 4.0, its seqid checked: a retransmission gets
 * the owner's cached result (and the current filehandle it set) back.
 * Then, without the lock, the file is looked up or created in the
 * directory (CLAIM_NULL) or taken from the current filehandle
 * (CLAIM_FH), and opened with open(2) under the caller's credentials,
 * which the engine has already put on the thread: the kernel checks the
 * permissions. Last, under the lock again, the share reservation is
 * checked against the other opens of the file (SHARE_DENIED) and the
 * open stateid made, or upgraded when the owner already has the file
 * open; the fd is kept in it for READ and WRITE.
 *
 * Creation. UNCHECKED4 opens an existing file as it is (a size of 0 in
 * the attributes truncates it, once the share reservation is granted),
 * GUARDED4 fails with EXIST, EXCLUSIVE4 and EXCLUSIVE4_1 store the
 * verifier in the new file's atime and mtime seconds as nfsd does, so a
 * retransmitted exclusive create finds its own file (same verifier, size
 * 0) and succeeds. The attributes of a new file are applied after it is
 * made (nfs4_apply_sattr) and reported in attrset.
 *
 * No delegation is ever granted: OPEN_DELEGATE_NONE, or in 4.1 when the
 * client said what it wants, OPEN_DELEGATE_NONE_EXT with the reason nfsd
 * gives (NOT_WANTED, CANCELLED, else RESOURCE); delegation claims are
 * NOTSUPP, and a CLAIM_PREVIOUS of a delegation RECLAIM_BAD.
 *
 * Grace and records (nfs4_recov.h). Before the file is touched, OPEN
 * asks whether the client may be granted state now: a non-reclaim OPEN
 * in grace is GRACE, a CLAIM_PREVIOUS (the current filehandle is the
 * file, as with CLAIM_FH) outside grace NO_GRACE, from a client without
 * a record RECLAIM_BAD. A 4.1 client's non-reclaim OPEN before its
 * RECLAIM_COMPLETE is GRACE too, in grace or not (RFC 8881 §18.51.3).
 * Then the client's record is made stable, before any open is granted.
 *
 * 4.0 open-owners must confirm their first OPEN (OPEN4_RESULT_CONFIRM,
 * then OPEN_CONFIRM); an owner whose OPEN was never confirmed is
 * replaced by the next OPEN naming it, as RFC 7530 §16.18.5 allows.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nfs4_attr.h"
#include "nfs4_ops.h"
#include "nfs4_recov.h"
#include "nfs4_state.h"

/* 4.1 share_access "want" flags (RFC 8881 §18.16.3) */
#define WANT_DELEG_MASK 0xff00
#define WANT_NO_PREFERENCE 0x0000
#define WANT_READ_DELEG 0x0100
#define WANT_WRITE_DELEG 0x0200
#define WANT_ANY_DELEG 0x0300
#define WANT_NO_DELEG 0x0400
#define WANT_CANCEL 0x0500
#define WANT_SIGNAL_DELEG_WHEN_RESRC_AVAIL 0x10000
#define WANT_PUSH_DELEG_WHEN_UNCONTENDED 0x20000

struct open_args {
	uint32_t seqid, access, deny;
	uint64_t clientid;
	const uint8_t *owner;
	uint32_t owner_len;
	uint32_t opentype, createmode;
	uint8_t verf[NFS4_VERIFIER_SIZE];
	struct nfs4_sattr sattr;
	uint32_t sattr_status;
	uint32_t claim;
	char name[NFS4_NAME_MAX + 1];
	uint32_t name_status;
	uint32_t deleg_type;
	struct nfs4_stateid deleg_sid;
};
_Static_assert(sizeof(struct open_args) <= NFS4_ARGS_MAX, "OPEN args");

static int dec_sattr(struct xdr_in *x, struct open_args *a)
{
	a->sattr_status = nfs4_dec_sattr(x, &a->sattr);
	return a->sattr_status == NFS4ERR_BADXDR ? -EBADMSG : 0;
}

int nfs4_dec_open(struct xdr_in *x, void *args)
{
	struct open_args *a = args;

	if (xdr_dec_u32(x, &a->seqid) || xdr_dec_u32(x, &a->access) || xdr_dec_u32(x, &a->deny) ||
	    xdr_dec_u64(x, &a->clientid) ||
	    xdr_dec_opaque(x, &a->owner, &a->owner_len, NFS4_OWNER_MAX) ||
	    xdr_dec_enum(x, &a->opentype, OPEN4_CREATE))
		return -EBADMSG;
	if (a->opentype == OPEN4_CREATE) {
		if (xdr_dec_enum(x, &a->createmode, EXCLUSIVE4_1))
			return -EBADMSG;
		switch (a->createmode) {
		case UNCHECKED4:
		case GUARDED4:
			if (dec_sattr(x, a))
				return -EBADMSG;
			break;
		case EXCLUSIVE4:
			if (xdr_dec_opaque_fixed_copy(x, a->verf, NFS4_VERIFIER_SIZE))
				return -EBADMSG;
			break;
		case EXCLUSIVE4_1:
			if (xdr_dec_opaque_fixed_copy(x, a->verf, NFS4_VERIFIER_SIZE) ||
			    dec_sattr(x, a))
				return -EBADMSG;
			break;
		}
	}
	if (xdr_dec_enum(x, &a->claim, CLAIM_DELEG_PREV_FH))
		return -EBADMSG;
	switch (a->claim) {
	case CLAIM_NULL:
	case CLAIM_DELEGATE_PREV:
		return nfs4_dec_component(x, a->name, &a->name_status);
	case CLAIM_PREVIOUS:
		return xdr_dec_u32(x, &a->deleg_type);
	case CLAIM_DELEGATE_CUR:
		if (nfs4_dec_stateid(x, &a->deleg_sid))
			return -EBADMSG;
		return nfs4_dec_component(x, a->name, &a->name_status);
	case CLAIM_DELEG_CUR_FH:
		return nfs4_dec_stateid(x, &a->deleg_sid);
	}
	return 0; /* CLAIM_FH, CLAIM_DELEG_PREV_FH: void */
}

static int accmode(uint32_t access)
{
	switch (access & OPEN4_SHARE_ACCESS_BOTH) {
	case OPEN4_SHARE_ACCESS_READ:
		return O_RDONLY;
	case OPEN4_SHARE_ACCESS_WRITE:
		return O_WRONLY;
	}
	return O_RDWR;
}

/* What an OPEN did besides the stateid: for its results */
struct open_res {
	struct gw_obj *obj; /* the file (reference) */
	int fd;		    /* opened for the share access, or -1 */
	bool created;
	bool truncate; /* UNCHECKED4 on an existing file with size 0 */
	uint64_t before, after;
	struct nfs4_bitmap attrset;
};

static uint32_t status_of_mode(const struct nfs4_compound *c, mode_t mode)
{
	struct gw_obj tmp = { .type = mode & S_IFMT };

	return nfs4_check_reg(c->minor, &tmp);
}

/* The exclusive create verifier, stored as nfsd does: mtime and atime seconds */
static void verf_times(const uint8_t verf[NFS4_VERIFIER_SIZE], uint32_t *mtime, uint32_t *atime)
{
	memcpy(mtime, verf, 4);
	memcpy(atime, verf + 4, 4);
}

static bool verf_matches(const struct stat *st, const uint8_t verf[NFS4_VERIFIER_SIZE])
{
	uint32_t m, a;

	verf_times(verf, &m, &a);
	return (uint64_t)st->st_mtim.tv_sec == m && (uint64_t)st->st_atim.tv_sec == a &&
	       st->st_size == 0;
}

/* Create or open @a->name in @dir as the create mode says: r->fd, r->created */
static uint32_t create_file(struct nfs4_compound *c, struct open_args *a, struct gw_obj *dir,
			    struct open_res *r)
{
	int flags = accmode(a->access) | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC;
	bool excl = a->createmode == EXCLUSIVE4 || a->createmode == EXCLUSIVE4_1;
	mode_t mode = 0644;
	struct stat st;
	int fd, tries;

	if (a->createmode != EXCLUSIVE4 && nfs4_bm_isset(&a->sattr.mask, FATTR4_MODE))
		mode = a->sattr.mode & 07777;
	for (tries = 0;; tries++) {
		fd = GW_FD_RETRY(openat(dir->fd, a->name, flags | O_CREAT | O_EXCL, mode));
		if (fd >= 0) {
			r->created = true;
			break;
		}
		if (errno != EEXIST)
			return nfs4_errno(-errno);
		if (a->createmode == GUARDED4)
			return NFS4ERR_EXIST;
		/* it exists: UNCHECKED4 opens it, EXCLUSIVE4* look at the verifier */
		fd = GW_FD_RETRY(openat(dir->fd, a->name, flags));
		if (fd >= 0)
			break;
		if (errno != ENOENT || tries == 2)
			return nfs4_errno(-errno);
		/* removed in between: create again */
	}
	if (fstat(fd, &st) < 0) {
		uint32_t status = nfs4_errno(-errno);

		close(fd);
		return status;
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return status_of_mode(c, st.st_mode);
	}
	if (!r->created && excl) {
		if (!verf_matches(&st, a->verf)) {
			close(fd);
			return NFS4ERR_EXIST;
		}
		r->created = true; /* a retransmission of the create that made it */
	}
	if (!r->created && a->createmode == UNCHECKED4 &&
	    nfs4_bm_isset(&a->sattr.mask, FATTR4_SIZE) && a->sattr.size == 0)
		r->truncate = true;
	r->fd = fd;
	return NFS4_OK;
}

/* Attributes of a file just made: the client's, then the exclusive verifier */
static uint32_t set_create_attrs(struct nfs4_compound *c, struct open_args *a, struct open_res *r)
{
	struct nfs4_sattr sa = a->sattr;
	uint32_t status = NFS4_OK, m, at;

	memset(&r->attrset, 0, sizeof(r->attrset));
	if (a->createmode != EXCLUSIVE4) {
		/* the size of an empty new file is already 0 */
		if (nfs4_bm_isset(&sa.mask, FATTR4_SIZE) && sa.size == 0)
			sa.mask.w[FATTR4_SIZE / 32] &= ~(1U << (FATTR4_SIZE % 32));
		status = nfs4_apply_sattr(c, r->obj, &sa,
					  (a->access & OPEN4_SHARE_ACCESS_WRITE) ? r->fd : -1,
					  &r->attrset);
		if (status != NFS4_OK)
			return status;
		if (nfs4_bm_isset(&a->sattr.mask, FATTR4_SIZE))
			nfs4_bm_set(&r->attrset, FATTR4_SIZE);
	}
	if (a->createmode == EXCLUSIVE4 || a->createmode == EXCLUSIVE4_1) {
		struct timespec ts[2];

		verf_times(a->verf, &m, &at);
		ts[0].tv_sec = at;
		ts[0].tv_nsec = 0;
		ts[1].tv_sec = m;
		ts[1].tv_nsec = 0;
		if (futimens(r->fd, ts) < 0)
			return nfs4_errno(-errno);
		nfs4_bm_set(&r->attrset, FATTR4_TIME_ACCESS);
		nfs4_bm_set(&r->attrset, FATTR4_TIME_MODIFY);
	}
	return NFS4_OK;
}

/* Find, create and open the file of an OPEN (no state lock held) */
static uint32_t open_file(struct nfs4_compound *c, struct open_args *a, struct open_res *r)
{
	bool create = a->opentype == OPEN4_CREATE;
	bool ro = c->rule && !c->rule->opts.rw;
	struct gw_obj *dir = c->cfh;
	struct stat st;
	uint32_t status;
	int err;

	switch (a->claim) {
	case CLAIM_NULL:
		break;
	case CLAIM_FH:
		if (c->minor == 0)
			return NFS4ERR_BADXDR; /* not a 4.0 claim */
		break;
	case CLAIM_PREVIOUS:
		if (a->deleg_type != OPEN_DELEGATE_NONE)
			return NFS4ERR_RECLAIM_BAD; /* no delegation was ever granted */
		if (create)
			return NFS4ERR_INVAL;
		break;
	case CLAIM_DELEG_CUR_FH:
	case CLAIM_DELEG_PREV_FH:
		if (c->minor == 0)
			return NFS4ERR_BADXDR;
		return NFS4ERR_NOTSUPP;
	default:
		return NFS4ERR_NOTSUPP; /* no delegations */
	}
	if (create && a->sattr_status != NFS4_OK)
		return a->sattr_status;
	if (create && a->createmode == EXCLUSIVE4_1 &&
	    (c->minor == 0 || nfs4_bm_isset(&a->sattr.mask, FATTR4_TIME_ACCESS_SET) ||
	     nfs4_bm_isset(&a->sattr.mask, FATTR4_TIME_MODIFY_SET)))
		return c->minor == 0 ? NFS4ERR_BADXDR : NFS4ERR_INVAL;
	if (ro && (create || (a->access & OPEN4_SHARE_ACCESS_WRITE)))
		return NFS4ERR_ROFS;

	if (a->claim == CLAIM_FH || a->claim == CLAIM_PREVIOUS) {
		if (create)
			return NFS4ERR_INVAL;
		r->obj = gw_obj_get(c->cfh);
		status = nfs4_check_reg(c->minor, r->obj);
		if (status != NFS4_OK)
			return status;
		err = gw_obj_stat(c->srv, r->obj, &st);
		if (err)
			return nfs4_errno(err);
		r->before = r->after = nfs4_change_of(&st);
		goto open_it;
	}

	if (a->name_status != NFS4_OK)
		return a->name_status;
	if (dir->type != S_IFDIR)
		return dir->type == S_IFLNK ? NFS4ERR_SYMLINK : NFS4ERR_NOTDIR;
	err = gw_obj_stat(c->srv, dir, &st);
	if (err)
		return nfs4_errno(err);
	r->before = nfs4_change_of(&st);
	if (create) {
		status = create_file(c, a, dir, r);
		if (status != NFS4_OK)
			return status;
	}
	err = gw_obj_lookup(c->snap, dir, a->name, &r->obj);
	if (err)
		return nfs4_errno(err);
	status = nfs4_check_reg(c->minor, r->obj);
	if (status != NFS4_OK)
		return status;
	if (r->created) {
		status = set_create_attrs(c, a, r);
		if (status != NFS4_OK)
			return status;
	}
	if (gw_obj_stat(c->srv, dir, &st) == 0)
		r->after = nfs4_change_of(&st);
	else
		r->after = r->before;
open_it:
	if (r->fd < 0) {
		err = gw_obj_open(r->obj, accmode(a->access));
		if (err < 0)
			return nfs4_errno(err);
		r->fd = err;
	}
	return NFS4_OK;
}

static struct nfs4_stid *owner_open_of(struct nfs4_owner *oo, const struct nfs4_file *f)
{
	struct nfs4_stid *s;

	list_for_each_entry(s, &oo->stids, o_list)
		if (s->type == NFS4_STID_OPEN && s->file == f)
			return s;
	return NULL;
}

static void enc_delegation(struct nfs4_compound *c, uint32_t access)
{
	uint32_t want = access & WANT_DELEG_MASK;

	if (c->minor == 0 || want == WANT_NO_PREFERENCE) {
		xdr_enc_u32(c->out, OPEN_DELEGATE_NONE);
		return;
	}
	xdr_enc_u32(c->out, OPEN_DELEGATE_NONE_EXT);
	switch (want) {
	case WANT_NO_DELEG:
		xdr_enc_u32(c->out, WND4_NOT_WANTED);
		break;
	case WANT_CANCEL:
		xdr_enc_u32(c->out, WND4_CANCELLED);
		break;
	default:
		/* as nfsd: no resources for one, and no promise to signal */
		xdr_enc_u32(c->out, WND4_RESOURCE);
		xdr_enc_bool(c->out, false);
		break;
	}
}

/* Share check, truncation and the open stateid, for a file open_file() opened */
static uint32_t open_state(struct nfs4_compound *c, struct open_args *a, struct nfs4_client *clp,
			   struct nfs4_owner *oo, struct open_res *r)
{
	struct nfs4_state *st = c->srv->state;
	uint32_t access = a->access & OPEN4_SHARE_ACCESS_BOTH, rflags;
	struct nfs4_stateid sid;
	struct nfs4_file *f;
	struct nfs4_stid *s;
	int m = accmode(access), m2;

	if (r->truncate) {
		if (!(access & OPEN4_SHARE_ACCESS_WRITE))
			return NFS4ERR_INVAL; /* as nfsd: truncating needs write access */
		nfs4_state_lock(st);
		f = nfs4_file_find(st, r->obj, false);
		s = f ? owner_open_of(oo, f) : NULL;
		if (!nfs4_file_share_ok(f, s, access, a->deny)) {
			nfs4_state_unlock(st);
			return NFS4ERR_SHARE_DENIED;
		}
		nfs4_state_unlock(st);
		if (ftruncate(r->fd, 0) < 0)
			return nfs4_errno(-errno);
		nfs4_bm_set(&r->attrset, FATTR4_SIZE);
	}

	nfs4_state_lock(st);
	if (oo->unhashed) {
		/* released meanwhile by a concurrent OPEN of the same 4.0 owner */
		nfs4_state_unlock(st);
		return NFS4ERR_DELAY;
	}
	f = nfs4_file_find(st, r->obj, true);
	if (!f) {
		nfs4_state_unlock(st);
		return NFS4ERR_RESOURCE;
	}
	s = owner_open_of(oo, f);
	if (!nfs4_file_share_ok(f, s, access, a->deny)) {
		nfs4_file_maybe_free(st, f);
		nfs4_state_unlock(st);
		return NFS4ERR_SHARE_DENIED;
	}
	if (s) {
		/* the owner has it open already: an upgrade of the same stateid */
		nfs4_stid_bump(s);
	} else {
		uint32_t room = gw_state_room(&c->who, clp, GW_STATE_OPEN);

		s = room == NFS4_OK ? nfs4_stid_new(st, clp, oo, f, NFS4_STID_OPEN) : NULL;
		if (!s) {
			nfs4_file_maybe_free(st, f);
			nfs4_state_unlock(st);
			return room == NFS4_OK ? NFS4ERR_RESOURCE : room;
		}
	}
	if (s->gen != atomic_load(&r->obj->xp->gen)) {
		/* fds of a lacunafs mount that died since: never used again */
		for (m2 = 0; m2 < 3; m2++)
			if (s->fds[m2] >= 0) {
				nfs4_state_defer_close(st, s->fds[m2]);
				s->fds[m2] = -1;
			}
		s->gen = atomic_load(&r->obj->xp->gen);
	}
	s->access |= access;
	s->deny |= a->deny;
	s->access_bmap |= (uint8_t)(1U << access);
	s->deny_bmap |= (uint8_t)(1U << a->deny);
	if (s->fds[m] < 0) {
		s->fds[m] = r->fd;
		r->fd = -1;
	}
	sid = s->sid;
	/* a reclaim is never confirmed (RFC 7530 §16.16.5, as nfsd) */
	if (a->claim == CLAIM_PREVIOUS)
		oo->confirmed = true;
	rflags = OPEN4_RESULT_LOCKTYPE_POSIX;
	if (c->minor == 0 && !oo->confirmed)
		rflags |= OPEN4_RESULT_CONFIRM;
	nfs4_state_unlock(st);

	nfs4_enc_stateid(c->out, &sid);
	nfs4_enc_change_info(c->out, false, r->before, r->after);
	xdr_enc_u32(c->out, rflags);
	nfs4_enc_bitmap(c->out, &r->attrset);
	enc_delegation(c, a->access);
	if (c->minor >= 1)
		nfs4_set_current_sid(c, &sid);
	return NFS4_OK;
}

static uint32_t check_share_args(const struct nfs4_compound *c, uint32_t access, uint32_t deny)
{
	uint32_t want = access & WANT_DELEG_MASK;

	if (deny & ~(uint32_t)OPEN4_SHARE_DENY_BOTH)
		return NFS4ERR_INVAL;
	if (!(access & OPEN4_SHARE_ACCESS_BOTH))
		return NFS4ERR_INVAL;
	if (c->minor == 0)
		return (access & ~(uint32_t)OPEN4_SHARE_ACCESS_BOTH) ? NFS4ERR_INVAL : NFS4_OK;
	if (access &
	    ~(uint32_t)(OPEN4_SHARE_ACCESS_BOTH | WANT_DELEG_MASK |
			WANT_SIGNAL_DELEG_WHEN_RESRC_AVAIL | WANT_PUSH_DELEG_WHEN_UNCONTENDED))
		return NFS4ERR_INVAL;
	if (want > WANT_CANCEL)
		return NFS4ERR_INVAL;
	return NFS4_OK;
}

uint32_t nfs4_run_open(struct nfs4_compound *c, void *args)
{
	struct open_args *a = args;
	struct nfs4_state *st = c->srv->state;
	struct open_res r = { .fd = -1 };
	struct nfs4_client *clp;
	struct nfs4_owner *oo;
	struct xdr_pos pos;
	struct gw_fh fh;
	bool has_fh;
	uint32_t status;
	int err;

	status = check_share_args(c, a->access, a->deny);
	if (status != NFS4_OK)
		return status;

	nfs4_state_lock(st);
	status = nfs4_client_of(&c->who, a->clientid, &clp);
	if (status != NFS4_OK)
		goto out_unlock;
	if (a->claim != CLAIM_PREVIOUS && nfs4_client_reclaiming(clp)) {
		status = NFS4ERR_GRACE;
		goto out_unlock;
	}
	oo = nfs4_owner_find(clp, false, a->owner, a->owner_len);
	if (oo && !oo->confirmed) {
		/* 4.0: its first OPEN was never confirmed: start the owner afresh */
		nfs4_owner_release(st, oo);
		oo = NULL;
	}
	if (!oo) {
		oo = nfs4_owner_new(st, clp, false, a->owner, a->owner_len);
		if (!oo) {
			status = NFS4ERR_RESOURCE;
			goto out_unlock;
		}
	}
	if (c->minor == 0) {
		switch (nfs4_owner_seqid_check(oo->seqid, oo->fresh, a->seqid)) {
		case NFS4_SEQ_NEW:
			break;
		case NFS4_SEQ_REPLAY:
			status = nfs4_seqid_replay(c, oo, &fh, &has_fh);
			nfs4_state_unlock(st);
			if (has_fh && gw_obj_from_fh(c->snap, fh.data, fh.len, &r.obj) == 0)
				nfs4_set_cfh(c, r.obj);
			return status;
		default:
			status = NFS4ERR_BAD_SEQID;
			goto out_unlock;
		}
	}
	/* the owner and its client stay while the lock is dropped */
	nfs4_owner_get(oo);
	clp->busy++;
	nfs4_state_unlock(st);

	xdr_out_getpos(c->out, &pos);
	status = nfs4_recov_check(st->recov, clp, a->claim == CLAIM_PREVIOUS);
	if (status == NFS4_OK && (err = nfs4_recov_record(st->recov, clp)))
		/* short of fds (DELAY): again later, like any other open */
		status = nfs4_errno(err) == NFS4ERR_DELAY ? NFS4ERR_DELAY
			 : c->minor			  ? NFS4ERR_SERVERFAULT
							  : NFS4ERR_RESOURCE;
	if (status == NFS4_OK)
		status = open_file(c, a, &r);
	if (status == NFS4_OK)
		status = open_state(c, a, clp, oo, &r);
	if (status == NFS4_OK && a->claim == CLAIM_PREVIOUS)
		nfs4_recov_reclaimed(st->recov, false);

	nfs4_state_lock(st);
	nfs4_seqid_done(c, oo, a->seqid, status, &pos,
			status == NFS4_OK && a->claim == CLAIM_NULL ? &r.obj->fh : NULL);
	nfs4_owner_put(st, oo);
	clp->busy--;
	nfs4_state_unlock(st);

	if (r.fd >= 0)
		close(r.fd);
	if (r.obj) {
		if (status == NFS4_OK && a->claim == CLAIM_NULL)
			nfs4_set_cfh(c, r.obj);
		else
			gw_obj_put(r.obj);
	}
	return status;

out_unlock:
	nfs4_state_unlock(st);
	return status;
}

/* ---------------------------------------------------------------- seqid ops on an open stateid */

/*
 * The open stateid of OPEN_CONFIRM, OPEN_DOWNGRADE and CLOSE, with the
 * 4.0 seqid check first (a retransmission is answered from the owner's
 * cache: *replayed set), then the generation and the file. State lock
 * held.
 */
static uint32_t seqid_op_begin(struct nfs4_compound *c, const struct nfs4_stateid *sid,
			       uint32_t seqid, struct nfs4_stid **out, bool *replayed)
{
	struct nfs4_stid *s;
	struct gw_fh fh;
	bool has_fh;
	uint32_t status;

	*replayed = false;
	status = nfs4_stid_lookup(&c->who, sid, NFS4_FIND_OPEN | NFS4_FIND_CLOSED | NFS4_FIND_NOGEN,
				  &s);
	if (status != NFS4_OK)
		return status;
	*out = s;
	if (c->minor == 0) {
		switch (nfs4_owner_seqid_check(s->owner->seqid, s->owner->fresh, seqid)) {
		case NFS4_SEQ_NEW:
			break;
		case NFS4_SEQ_REPLAY:
			*replayed = true;
			return nfs4_seqid_replay(c, s->owner, &fh, &has_fh);
		default:
			return NFS4ERR_BAD_SEQID;
		}
	}
	if (s->type != NFS4_STID_OPEN)
		return NFS4ERR_BAD_STATEID;
	status = nfs4_sid_gen_check(s->sid.seqid, sid->seqid, c->minor);
	if (status != NFS4_OK)
		return status;
	if (!nfs4_stid_on(s, c->cfh))
		return NFS4ERR_BAD_STATEID;
	return NFS4_OK;
}

struct open_confirm_args {
	struct nfs4_stateid sid;
	uint32_t seqid;
};

int nfs4_dec_open_confirm(struct xdr_in *x, void *args)
{
	struct open_confirm_args *a = args;

	if (nfs4_dec_stateid(x, &a->sid) || xdr_dec_u32(x, &a->seqid))
		return -EBADMSG;
	return 0;
}

uint32_t nfs4_run_open_confirm(struct nfs4_compound *c, void *args)
{
	struct open_confirm_args *a = args;
	struct nfs4_state *st = c->srv->state;
	struct nfs4_stid *s = NULL;
	struct nfs4_owner *oo;
	struct xdr_pos pos;
	bool replayed;
	uint32_t status;

	xdr_out_getpos(c->out, &pos);
	nfs4_state_lock(st);
	status = seqid_op_begin(c, &a->sid, a->seqid, &s, &replayed);
	if (replayed || !s)
		goto out;
	oo = s->owner;
	if (status == NFS4_OK && oo->confirmed)
		status = NFS4ERR_BAD_STATEID; /* confirmed already */
	if (status == NFS4_OK) {
		oo->confirmed = true;
		nfs4_stid_bump(s);
		nfs4_enc_stateid(c->out, &s->sid);
	}
	nfs4_seqid_done(c, oo, a->seqid, status, &pos, NULL);
out:
	nfs4_state_unlock(st);
	return status;
}

struct open_downgrade_args {
	struct nfs4_stateid sid;
	uint32_t seqid, access, deny;
};

int nfs4_dec_open_downgrade(struct xdr_in *x, void *args)
{
	struct open_downgrade_args *a = args;

	if (nfs4_dec_stateid(x, &a->sid) || xdr_dec_u32(x, &a->seqid) ||
	    xdr_dec_u32(x, &a->access) || xdr_dec_u32(x, &a->deny))
		return -EBADMSG;
	return 0;
}

/* Is @v the union of some of the mode values in @bmap (RFC 7530 §16.19.4)? */
static bool union_of(uint8_t bmap, uint32_t v)
{
	uint32_t u = 0, i;

	for (i = 0; i < 4; i++)
		if ((bmap & (1U << i)) && !(i & ~v))
			u |= i;
	return u == v;
}

uint32_t nfs4_run_open_downgrade(struct nfs4_compound *c, void *args)
{
	struct open_downgrade_args *a = args;
	struct nfs4_state *st = c->srv->state;
	struct nfs4_stid *s = NULL;
	struct xdr_pos pos;
	uint32_t status, access = a->access & OPEN4_SHARE_ACCESS_BOTH, i;
	bool replayed;

	status = nfs4_resolve_current_sid(c, &a->sid);
	if (status != NFS4_OK)
		return status;
	xdr_out_getpos(c->out, &pos);
	nfs4_state_lock(st);
	status = seqid_op_begin(c, &a->sid, a->seqid, &s, &replayed);
	if (replayed || !s)
		goto out;
	if (status == NFS4_OK && c->minor == 0 && !s->owner->confirmed)
		status = NFS4ERR_BAD_STATEID;
	if (status == NFS4_OK &&
	    (!access || (a->access & ~(uint32_t)(OPEN4_SHARE_ACCESS_BOTH | WANT_DELEG_MASK)) ||
	     (c->minor == 0 && a->access != access) || a->deny > OPEN4_SHARE_DENY_BOTH ||
	     !union_of(s->access_bmap, access) || (a->deny && !union_of(s->deny_bmap, a->deny))))
		status = NFS4ERR_INVAL;
	if (status == NFS4_OK) {
		s->access = access;
		s->deny = a->deny;
		for (i = 0; i < 4; i++) {
			if (i & ~access)
				s->access_bmap &= (uint8_t) ~(1U << i);
			if (i & ~a->deny)
				s->deny_bmap &= (uint8_t) ~(1U << i);
		}
		nfs4_stid_bump(s);
		nfs4_enc_stateid(c->out, &s->sid);
		if (c->minor >= 1)
			nfs4_set_current_sid(c, &s->sid);
	}
	nfs4_seqid_done(c, s->owner, a->seqid, status, &pos, NULL);
out:
	nfs4_state_unlock(st);
	return status;
}

struct close_args {
	uint32_t seqid;
	struct nfs4_stateid sid;
};

int nfs4_dec_close(struct xdr_in *x, void *args)
{
	struct close_args *a = args;

	if (xdr_dec_u32(x, &a->seqid) || nfs4_dec_stateid(x, &a->sid))
		return -EBADMSG;
	return 0;
}

uint32_t nfs4_run_close(struct nfs4_compound *c, void *args)
{
	/* 4.1: what nfsd answers, since the client must not use it (RFC 8881 §18.2.4) */
	static const struct nfs4_stateid invalid = { .seqid = UINT32_MAX };
	struct close_args *a = args;
	struct nfs4_state *st = c->srv->state;
	struct nfs4_stid *s = NULL;
	struct nfs4_owner *oo;
	struct xdr_pos pos;
	bool replayed;
	uint32_t status;

	status = nfs4_resolve_current_sid(c, &a->sid);
	if (status != NFS4_OK)
		return status;
	xdr_out_getpos(c->out, &pos);
	nfs4_state_lock(st);
	status = seqid_op_begin(c, &a->sid, a->seqid, &s, &replayed);
	if (replayed || !s)
		goto out;
	oo = s->owner;
	nfs4_owner_get(oo);
	if (status == NFS4_OK && c->minor >= 1) {
		/* locks taken through this open go with it (as nfsd) */
		nfs4_stid_free(st, s);
		nfs4_enc_stateid(c->out, &invalid);
		nfs4_set_current_sid(c, &invalid);
	} else if (status == NFS4_OK) {
		/* 4.0: kept, closed, until the owner's next op, for a retransmitted CLOSE */
		nfs4_stid_close(st, s);
		nfs4_enc_stateid(c->out, &s->sid);
	}
	nfs4_seqid_done(c, oo, a->seqid, status, &pos, NULL);
	nfs4_owner_put(st, oo);
out:
	nfs4_state_unlock(st);
	return status;
}
