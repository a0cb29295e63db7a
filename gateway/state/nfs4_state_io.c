// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * NFSv4 state as READ and WRITE see it: the fd an I/O goes through for a
 * stateid (a dup of the open's fd, or one opened with the caller's
 * credentials for the special stateids, after checking the share
 * reservations they must respect), and the byte-range locks an I/O must
 * not cross (NFS4ERR_LOCKED). Each call takes and drops the state lock
 * itself; files are opened only after it is dropped (nfs4_state.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nfs4_recov.h"
#include "nfs4_state.h"

/* Share reservations a READ or WRITE with a special stateid must respect (nfsd: LOCKED) */
static uint32_t special_io_check(struct nfs4_state *st, const struct nfs4_stateid *sid,
				 struct gw_obj *o, bool write)
{
	const struct nfs4_file *f;
	const struct nfs4_stid *s;
	uint32_t status = NFS4_OK;

	if (nfs4_sid_is_bypass(sid) && !write)
		return NFS4_OK;
	if (write && nfs4_recov_in_grace(st->recov))
		return NFS4ERR_GRACE; /* it could overwrite a range whose lock is not reclaimed yet */
	nfs4_state_lock(st);
	f = nfs4_file_find(st, o, false);
	if (f)
		list_for_each_entry(s, &f->opens, f_list)
			if (s->deny & (write ? OPEN4_SHARE_DENY_WRITE : OPEN4_SHARE_DENY_READ)) {
				status = NFS4ERR_LOCKED;
				break;
			}
	nfs4_state_unlock(st);
	return status;
}

/* Count one more borrower of @fd (state lock held); false when out of memory. */
static bool borrow(struct nfs4_state *st, int fd)
{
	if ((size_t)fd >= st->fd_cap) {
		size_t cap = st->fd_cap ? st->fd_cap : 1024;
		uint32_t *u;
		uint8_t *p;

		while (cap <= (size_t)fd)
			cap *= 2;
		u = realloc(st->fd_users, cap * sizeof(*u));
		if (!u)
			return false;
		st->fd_users = u;
		p = realloc(st->fd_pending, cap);
		if (!p)
			return false;
		st->fd_pending = p;
		memset(u + st->fd_cap, 0, (cap - st->fd_cap) * sizeof(*u));
		memset(p + st->fd_cap, 0, cap - st->fd_cap);
		st->fd_cap = cap;
	}
	st->fd_users[fd]++;
	return true;
}

void nfs4_state_io_done(struct gw_srv *s, int fd, bool fd_owned)
{
	struct nfs4_state *st = s->state;

	if (fd < 0)
		return;
	if (fd_owned) {
		close(fd);
		return;
	}
	nfs4_state_lock(st);
	if (--st->fd_users[fd] == 0 && st->fd_pending[fd]) {
		st->fd_pending[fd] = 0;
		nfs4_state_defer_close(st, fd);
	}
	nfs4_state_unlock(st);
}


/*
 * I/O through an open someone made is checked against the caller (as
 * nfsd's nfsd_permission() with NFSD_MAY_OWNER_OVERRIDE): the file's
 * permissions for the caller's credentials, in force on this thread, or
 * the caller owns the file. Root passes (its capabilities would). The
 * last caller allowed is remembered in the open, so the check costs a
 * system call only when the caller changes.
 */

/* Is the caller known to be allowed @write through @open? State lock held. */
static bool io_allowed(const struct nfs4_caller *who, const struct nfs4_stid *open, bool write)
{
	return who->cred->uid == 0 ||
	       ((open->io_ok & (write ? 2 : 1)) && gw_cred_same(&open->io_cred, who->cred));
}

/* Remember that the caller may @write through the open of @sid. */
static void io_remember(const struct nfs4_caller *who, const struct nfs4_stateid *sid, bool write)
{
	struct nfs4_state *st = who->srv->state;
	struct nfs4_stid *s;

	nfs4_state_lock(st);
	if (nfs4_stid_lookup(who, sid, NFS4_FIND_OPEN | NFS4_FIND_LOCK | NFS4_FIND_NOGEN, &s) ==
	    NFS4_OK) {
		if (s->type == NFS4_STID_LOCK)
			s = s->open;
		if (!gw_cred_same(&s->io_cred, who->cred)) {
			s->io_cred = *who->cred;
			s->io_ok = 0;
		}
		s->io_ok |= write ? 2 : 1;
	}
	nfs4_state_unlock(st);
}

/* The check itself: system calls, no lock held. */
static uint32_t io_permission(const struct nfs4_caller *who, struct gw_obj *o, bool write)
{
	struct stat st;

	if (faccessat(o->fd, "", write ? W_OK : R_OK, AT_EACCESS | AT_EMPTY_PATH) < 0) {
		if (errno == EROFS)
			return NFS4ERR_ROFS;
		if (errno != EACCES && errno != EPERM)
			return nfs4_errno(-errno);
		if (fstat(o->fd, &st) < 0)
			return nfs4_errno(-errno);
		if (st.st_uid != who->cred->uid)
			return NFS4ERR_ACCESS;
	}
	return NFS4_OK;
}

uint32_t nfs4_state_io_fd(const struct nfs4_caller *who, const struct nfs4_stateid *sid,
			  struct gw_obj *o, bool write, int *fd, bool *fd_owned)
{
	struct nfs4_state *st = who->srv->state;
	struct nfs4_stid *s, *open;
	bool check;
	uint32_t status;
	int got = -1, err;

	*fd = -1;
	*fd_owned = false;
	if (nfs4_sid_is_anon(sid) || nfs4_sid_is_bypass(sid)) {
		status = special_io_check(st, sid, o, write);
		if (status != NFS4_OK)
			return status;
		goto open_new;
	}
	nfs4_state_lock(st);
	status = nfs4_stid_lookup(who, sid, NFS4_FIND_OPEN | NFS4_FIND_LOCK, &s);
	if (status != NFS4_OK)
		goto out_unlock;
	if (!nfs4_stid_on(s, o)) {
		status = NFS4ERR_BAD_STATEID;
		goto out_unlock;
	}
	open = s->type == NFS4_STID_LOCK ? s->open : s;
	if (!open->owner->confirmed) {
		status = NFS4ERR_BAD_STATEID;
		goto out_unlock;
	}
	/* as nfsd, READ is allowed with any open (a client reads to fill pages it writes) */
	if (write && !(open->access & OPEN4_SHARE_ACCESS_WRITE)) {
		status = NFS4ERR_OPENMODE;
		goto out_unlock;
	}
	check = !io_allowed(who, open, write);
	if (write)
		got = open->fds[O_WRONLY] >= 0 ? open->fds[O_WRONLY] : open->fds[O_RDWR];
	else
		got = open->fds[O_RDONLY] >= 0 ? open->fds[O_RDONLY] : open->fds[O_RDWR];
	if (open->gen != atomic_load(&o->xp->gen))
		got = -1; /* opened on a lacunafs mount that died since: a new fd below */
	if (got >= 0 && !borrow(st, got))
		status = NFS4ERR_DELAY;
	nfs4_state_unlock(st);
	if (status != NFS4_OK)
		return status;
	if (check) {
		status = io_permission(who, o, write);
		if (status != NFS4_OK) {
			nfs4_state_io_done(who->srv, got, false);
			return status;
		}
		io_remember(who, sid, write);
	}
	if (got >= 0) {
		*fd = got;
		*fd_owned = false;
		return NFS4_OK;
	}
open_new:
	/* no fd of that mode in the state (READ through a write-only open): the caller's own */
	err = gw_obj_open(o, write ? O_WRONLY : O_RDONLY);
	if (err < 0)
		return nfs4_errno(err);
	*fd = err;
	*fd_owned = true;
	return NFS4_OK;

out_unlock:
	nfs4_state_unlock(st);
	return status;
}
