// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * NFSv4 stateids and the files they hang on: the special stateids and
 * the generation check, the table of files open and lock state is kept
 * per (keyed by export id and fileid), share reservations, and the table
 * of open, lock and closed stateids with their lookup from the wire. All
 * of it runs with the state lock held (nfs4_state.h).
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "nfs4_state.h"

/* ================================================================ pure logic */

uint32_t nfs4_sid_gen_check(uint32_t cur, uint32_t given, uint32_t minor)
{
	if (minor >= 1 && given == 0)
		return NFS4_OK;
	if (given == cur)
		return NFS4_OK;
	/* a seqid from the future is a client bug; one from the past is old */
	if ((int32_t)(given - cur) > 0)
		return NFS4ERR_BAD_STATEID;
	return NFS4ERR_OLD_STATEID;
}

static bool other_all(const struct nfs4_stateid *sid, uint8_t v)
{
	unsigned int i;

	for (i = 0; i < NFS4_OTHER_SIZE; i++)
		if (sid->other[i] != v)
			return false;
	return true;
}

bool nfs4_sid_is_anon(const struct nfs4_stateid *sid)
{
	return sid->seqid == 0 && other_all(sid, 0);
}

bool nfs4_sid_is_bypass(const struct nfs4_stateid *sid)
{
	return sid->seqid == UINT32_MAX && other_all(sid, 0xff);
}

bool nfs4_sid_is_current(const struct nfs4_stateid *sid)
{
	return sid->seqid == 1 && other_all(sid, 0);
}

bool nfs4_sid_is_special(const struct nfs4_stateid *sid)
{
	return other_all(sid, 0) || other_all(sid, 0xff);
}

/* ================================================================ files */

static uint64_t file_hash(uint32_t xid, uint64_t fileid)
{
	uint64_t h = fileid * 0x9e3779b97f4a7c15ULL ^ xid;

	return h >> 32 ^ h;
}

bool nfs4_file_is(const struct nfs4_file *f, const struct gw_obj *o)
{
	return o->xp && f->xid == o->xp->id && f->fileid == o->fileid;
}

struct nfs4_file *nfs4_file_find(struct nfs4_state *st, const struct gw_obj *o, bool create)
{
	struct nfs4_file *f;
	struct hnode *n;
	uint64_t h;

	if (!o->xp)
		return NULL;
	h = file_hash(o->xp->id, o->fileid);
	HTABLE_FOR_EACH_HASH(&st->files, h, n) {
		f = container_of(n, struct nfs4_file, hnode);
		if (nfs4_file_is(f, o))
			return f;
	}
	if (!create)
		return NULL;
	f = calloc(1, sizeof(*f));
	if (!f)
		return NULL;
	f->xid = o->xp->id;
	f->fileid = o->fileid;
	list_init(&f->opens);
	list_init(&f->lstids);
	f->obj = gw_obj_get((struct gw_obj *)o);
	atomic_fetch_add(&f->obj->pins, 1);
	nfs4_hash_add(&st->files, &f->hnode, h);
	return f;
}

void nfs4_file_maybe_free(struct nfs4_state *st, struct nfs4_file *f)
{
	if (!f || !list_empty(&f->opens) || !list_empty(&f->lstids) || f->locks.n)
		return;
	htable_del(&st->files, &f->hnode);
	nfs4_lset_free(&f->locks);
	atomic_fetch_sub(&f->obj->pins, 1);
	gw_obj_put(f->obj);
	free(f);
}

bool nfs4_file_share_ok(const struct nfs4_file *f, const struct nfs4_stid *except, uint32_t access,
			uint32_t deny)
{
	const struct nfs4_stid *s;

	if (!f)
		return true;
	list_for_each_entry(s, &f->opens, f_list) {
		/*
		 * The owner's own open (an upgrade) counts too, as in nfsd:
		 * access it does not hold yet against its deny, and the new
		 * deny against the access it holds.
		 */
		uint32_t a = s == except ? access & ~s->access : access;

		if (nfs4_share_conflict(a, deny, s->access, s->deny))
			return false;
	}
	return true;
}

/* ================================================================ stateids */

/* A stateid is hashed by its number, the last 4 bytes of "other" */
static uint64_t stid_hash(const uint8_t *other)
{
	return xdr_get_u32(other + 8);
}

struct nfs4_stid *nfs4_stid_new(struct nfs4_state *st, struct nfs4_client *clp,
				struct nfs4_owner *oo, struct nfs4_file *f, uint8_t type)
{
	struct nfs4_stid *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->type = type;
	s->clp = clp;
	s->owner = oo;
	s->file = f;
	s->fds[0] = s->fds[1] = s->fds[2] = -1;
	s->lfd = -1;
	s->sid.seqid = 1;
	if (++st->next_stid == 0)
		st->next_stid = 1;
	xdr_put_u32(s->sid.other, st->boot);
	xdr_put_u32(s->sid.other + 4, (uint32_t)clp->clientid);
	xdr_put_u32(s->sid.other + 8, st->next_stid);
	nfs4_hash_add(&st->stids, &s->hnode, stid_hash(s->sid.other));
	list_add(&s->o_list, &oo->stids);
	if (type == NFS4_STID_OPEN) {
		list_add(&s->f_list, &f->opens);
		clp->nopens++;
		st->nopens++;
	} else {
		list_add(&s->f_list, &f->lstids);
	}
	return s;
}

struct nfs4_stid *nfs4_stid_hash_find(struct nfs4_state *st, const uint8_t *other)
{
	uint64_t h = stid_hash(other);
	struct hnode *n;

	HTABLE_FOR_EACH_HASH(&st->stids, h, n) {
		struct nfs4_stid *s = container_of(n, struct nfs4_stid, hnode);

		if (!memcmp(s->sid.other, other, NFS4_OTHER_SIZE))
			return s;
	}
	return NULL;
}

/* Drop what an open stateid holds on its file: lock stateids made from it, fds, the share */
static void open_detach(struct nfs4_state *st, struct nfs4_stid *s)
{
	struct nfs4_file *f = s->file;
	struct nfs4_stid *l, *next;
	int i;

	list_for_each_entry_safe(l, next, &f->lstids, f_list)
		if (l->open == s)
			nfs4_stid_free(st, l);
	for (i = 0; i < 3; i++) {
		nfs4_state_defer_close(st, s->fds[i]);
		s->fds[i] = -1;
	}
	list_del(&s->f_list);
	s->clp->nopens--;
	st->nopens--;
	s->file = NULL;
	nfs4_file_maybe_free(st, f);
}

void nfs4_stid_free(struct nfs4_state *st, struct nfs4_stid *s)
{
	struct nfs4_owner *oo = s->owner;

	if (s->type == NFS4_STID_OPEN) {
		open_detach(st, s);
	} else if (s->type == NFS4_STID_LOCK && s->file) {
		size_t n = nfs4_lset_drop(&s->file->locks, s);

		s->clp->nlocks -= (unsigned int)n;
		st->nlocks -= (unsigned int)n;
		list_del(&s->f_list);
		nfs4_file_maybe_free(st, s->file);
	}
	if (s->lfd >= 0) {
		/* the kernel's view goes with the table's, not at the deferred close */
		nfs4_ofd_set(s->lfd, 0, 0, UINT64_MAX);
		nfs4_state_defer_close(st, s->lfd);
		s->lfd = -1;
	}
	htable_del(&st->stids, &s->hnode);
	list_del(&s->o_list);
	if (oo->last_closed == s)
		oo->last_closed = NULL;
	free(s);
	/* 4.1 owners have no seqid to remember: they go with their last stateid */
	if (oo->clp->minor >= 1 && list_empty(&oo->stids) && !oo->unhashed && !oo->refs)
		nfs4_owner_release(st, oo);
}

void nfs4_stid_close(struct nfs4_state *st, struct nfs4_stid *s)
{
	struct nfs4_owner *oo = s->owner;

	open_detach(st, s);
	s->type = NFS4_STID_CLOSED;
	nfs4_stid_bump(s);
	if (oo->last_closed && oo->last_closed != s)
		nfs4_stid_free(st, oo->last_closed);
	oo->last_closed = s;
}

void nfs4_stid_count_locks(struct nfs4_state *st, struct nfs4_stid *s, size_t before)
{
	unsigned int d = (unsigned int)(s->file->locks.n - before); /* modulo 2^32 both ways */

	s->clp->nlocks += d;
	st->nlocks += d;
}

void nfs4_stid_bump(struct nfs4_stid *s)
{
	if (++s->sid.seqid == 0)
		s->sid.seqid = 1;
}

bool nfs4_stid_on(const struct nfs4_stid *s, const struct gw_obj *o)
{
	return s->file && nfs4_file_is(s->file, o);
}

uint32_t nfs4_stid_lookup(const struct nfs4_caller *who, const struct nfs4_stateid *sid,
			  unsigned int flags, struct nfs4_stid **out)
{
	struct nfs4_state *st = who->srv->state;
	struct nfs4_client *clp;
	struct nfs4_stid *s;
	uint32_t status;

	*out = NULL;
	if (nfs4_sid_is_special(sid))
		return NFS4ERR_BAD_STATEID;
	if (xdr_get_u32(sid->other) != st->boot)
		return who->minor ? NFS4ERR_BAD_STATEID : NFS4ERR_STALE_STATEID;
	clp = nfs4_client_by_id(st, (uint64_t)st->boot << 32 | xdr_get_u32(sid->other + 4));
	if (who->minor >= 1) {
		if (!clp || clp != who->clp)
			return NFS4ERR_BAD_STATEID;
	} else {
		/* a client that is gone lost its state: as nfsd says, EXPIRED */
		if (!clp || clp->expired)
			return NFS4ERR_EXPIRED;
	}
	s = nfs4_stid_hash_find(st, sid->other);
	if (!s)
		return NFS4ERR_BAD_STATEID;
	if (!((s->type == NFS4_STID_OPEN && (flags & NFS4_FIND_OPEN)) ||
	      (s->type == NFS4_STID_LOCK && (flags & NFS4_FIND_LOCK)) ||
	      (s->type == NFS4_STID_CLOSED && (flags & NFS4_FIND_CLOSED))))
		return NFS4ERR_BAD_STATEID;
	if (!(flags & NFS4_FIND_NOGEN)) {
		status = nfs4_sid_gen_check(s->sid.seqid, sid->seqid, who->minor);
		if (status != NFS4_OK)
			return status;
	}
	if (who->minor == 0)
		nfs4_client_renew(clp);
	*out = s;
	return NFS4_OK;
}

uint32_t nfs4_check_reg(uint32_t minor, const struct gw_obj *o)
{
	if (o->type == S_IFREG)
		return NFS4_OK;
	if (o->type == S_IFDIR)
		return NFS4ERR_ISDIR;
	if (o->type == S_IFLNK || minor == 0)
		return NFS4ERR_SYMLINK; /* RFC 7530 §16.16.5: anything else is SYMLINK in 4.0 */
	return NFS4ERR_WRONG_TYPE;
}
