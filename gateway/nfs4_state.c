// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * NFSv4 state: the tables of clients, sessions, owners, files and
 * stateids, leases and their expiry, the session reply cache, the fds
 * READ and WRITE go through, and the byte-range lock sets. The model and
 * its lock order are described in nfs4_state.h; the operations that
 * change state are in nfs4_op_session.c, nfs4_op_clientid.c,
 * nfs4_op_open.c and nfs4_op_lock.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "nfs4_state.h"

/* ================================================================ pure logic */

enum nfs4_seq_verdict nfs4_slot_check(uint32_t last, bool inuse, uint32_t seqid)
{
	if (inuse)
		return seqid == last ? NFS4_SEQ_DELAY : NFS4_SEQ_MISORDERED;
	/* unsigned arithmetic: 0xffffffff is followed by 0 */
	if (seqid == last + 1)
		return NFS4_SEQ_NEW;
	if (seqid == last)
		return NFS4_SEQ_REPLAY;
	return NFS4_SEQ_MISORDERED;
}

enum nfs4_seq_verdict nfs4_owner_seqid_check(uint32_t last, bool first, uint32_t seqid)
{
	if (first || seqid == last + 1)
		return NFS4_SEQ_NEW;
	if (seqid == last)
		return NFS4_SEQ_REPLAY;
	return NFS4_SEQ_MISORDERED;
}

bool nfs4_seqid_mutating(uint32_t status)
{
	switch (status) {
	case NFS4ERR_STALE_CLIENTID:
	case NFS4ERR_STALE_STATEID:
	case NFS4ERR_BAD_STATEID:
	case NFS4ERR_BAD_SEQID:
	case NFS4ERR_BADXDR:
	case NFS4ERR_RESOURCE:
	case NFS4ERR_NOFILEHANDLE:
	case NFS4ERR_MOVED:
		return false;
	}
	return true;
}

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

int nfs4_range_make(uint64_t off, uint64_t len, uint64_t *start, uint64_t *end)
{
	if (len == 0)
		return -EINVAL;
	*start = off;
	if (len == UINT64_MAX) {
		*end = UINT64_MAX;
		return 0;
	}
	if (len - 1 > UINT64_MAX - off)
		return -EINVAL;
	*end = off + (len - 1);
	return 0;
}

uint64_t nfs4_range_len(uint64_t start, uint64_t end)
{
	if (end == UINT64_MAX)
		return UINT64_MAX;
	return end - start + 1;
}

static bool overlaps(const struct nfs4_lrange *r, uint64_t start, uint64_t end)
{
	return r->start <= end && r->end >= start;
}

const struct nfs4_lrange *nfs4_lset_conflict(const struct nfs4_lset *s, uint32_t type,
					     uint64_t start, uint64_t end, nfs4_lsame_fn *same,
					     const void *arg)
{
	size_t i;

	for (i = 0; i < s->n; i++) {
		const struct nfs4_lrange *r = &s->r[i];

		if (!overlaps(r, start, end))
			continue;
		if (same ? same(r->owner, arg) : r->owner == arg)
			continue;
		if (type == WRITE_LT || r->type == WRITE_LT)
			return r;
	}
	return NULL;
}

static int lset_reserve(struct nfs4_lset *s, size_t more)
{
	struct nfs4_lrange *r;
	size_t cap;

	if (s->n + more <= s->cap)
		return 0;
	cap = s->cap ? s->cap * 2 : 4;
	while (cap < s->n + more)
		cap *= 2;
	r = realloc(s->r, cap * sizeof(*r));
	if (!r)
		return -ENOMEM;
	s->r = r;
	s->cap = cap;
	return 0;
}

static void lset_remove_at(struct nfs4_lset *s, size_t i)
{
	s->r[i] = s->r[--s->n];
}

int nfs4_lset_unlock(struct nfs4_lset *s, const void *owner, uint64_t start, uint64_t end)
{
	size_t i, n;

	if (lset_reserve(s, 1))
		return -ENOMEM;
	n = s->n; /* a piece split off lies outside [start, end]: no need to visit it */
	for (i = 0; i < n;) {
		struct nfs4_lrange *r = &s->r[i];

		if (r->owner != owner || !overlaps(r, start, end)) {
			i++;
			continue;
		}
		if (r->start >= start && r->end <= end) {
			/* swap the last one in; visit slot i again unless it was a split piece */
			lset_remove_at(s, i);
			if (s->n < n)
				n--;
			else
				i++;
			continue;
		}
		if (r->start < start && r->end > end) {
			struct nfs4_lrange tail = *r;

			tail.start = end + 1;
			r->end = start - 1;
			s->r[s->n++] = tail;
		} else if (r->start < start) {
			r->end = start - 1;
		} else {
			r->start = end + 1;
		}
		i++;
	}
	return 0;
}

int nfs4_lset_lock(struct nfs4_lset *s, const void *owner, uint32_t type, uint64_t start,
		   uint64_t end)
{
	size_t i;

	/* room for the split of the unlock and the new range: nothing fails half way */
	if (lset_reserve(s, 2))
		return -ENOMEM;
	nfs4_lset_unlock(s, owner, start, end);
	/* absorb the owner's ranges of the same type that touch it */
	for (i = 0; i < s->n;) {
		struct nfs4_lrange *r = &s->r[i];
		bool touch = (start == 0 || r->end >= start - 1) &&
			     (end == UINT64_MAX || r->start <= end + 1);

		if (r->owner != owner || r->type != type || !touch) {
			i++;
			continue;
		}
		if (r->start < start)
			start = r->start;
		if (r->end > end)
			end = r->end;
		lset_remove_at(s, i);
		i = 0; /* the range grew: look again from the start */
	}
	s->r[s->n].start = start;
	s->r[s->n].end = end;
	s->r[s->n].owner = owner;
	s->r[s->n].type = type;
	s->n++;
	return 0;
}

bool nfs4_lset_held(const struct nfs4_lset *s, const void *owner)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		if (s->r[i].owner == owner)
			return true;
	return false;
}

size_t nfs4_lset_drop(struct nfs4_lset *s, const void *owner)
{
	size_t i, dropped = 0;

	for (i = 0; i < s->n;) {
		if (s->r[i].owner == owner) {
			lset_remove_at(s, i);
			dropped++;
		} else {
			i++;
		}
	}
	return dropped;
}

void nfs4_lset_free(struct nfs4_lset *s)
{
	free(s->r);
	s->r = NULL;
	s->n = s->cap = 0;
}

/* ================================================================ locking, time */

void nfs4_state_lock(struct nfs4_state *st)
{
	pthread_mutex_lock(&st->lock);
}

void nfs4_state_unlock(struct nfs4_state *st)
{
	int *fds = st->closing;
	size_t i, n = st->nclosing;

	st->closing = NULL;
	st->nclosing = st->capclosing = 0;
	pthread_mutex_unlock(&st->lock);
	for (i = 0; i < n; i++)
		close(fds[i]);
	free(fds);
}

void nfs4_state_defer_close(struct nfs4_state *st, int fd)
{
	if (fd < 0)
		return;
	if (st->nclosing == st->capclosing) {
		size_t cap = st->capclosing ? st->capclosing * 2 : 8;
		int *p = realloc(st->closing, cap * sizeof(*p));

		if (!p) {
			close(fd); /* out of memory: close it now, under the lock */
			return;
		}
		st->closing = p;
		st->capclosing = cap;
	}
	st->closing[st->nclosing++] = fd;
}

time_t nfs4_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return ts.tv_sec;
}

/* ================================================================ clients */

static struct nfs4_client **cbucket(struct nfs4_state *st, uint64_t clientid)
{
	return &st->cbucket[(uint32_t)clientid % NFS4_CLIENT_BUCKETS];
}

struct nfs4_client *nfs4_client_new(struct nfs4_state *st, const uint8_t *name, uint32_t len,
				    uint32_t minor)
{
	struct nfs4_client *clp = calloc(1, sizeof(*clp));

	if (!clp)
		return NULL;
	clp->name = malloc(len ? len : 1);
	if (!clp->name) {
		free(clp);
		return NULL;
	}
	memcpy(clp->name, name, len);
	clp->name_len = len;
	clp->minor = minor;
	if (++st->next_client == 0)
		st->next_client = 1;
	clp->clientid = (uint64_t)st->boot << 32 | st->next_client;
	clp->renewed = nfs4_now();
	clp->next = st->clients;
	st->clients = clp;
	clp->hnext = *cbucket(st, clp->clientid);
	*cbucket(st, clp->clientid) = clp;
	return clp;
}

struct nfs4_client *nfs4_client_by_id(struct nfs4_state *st, uint64_t clientid)
{
	struct nfs4_client *clp;

	for (clp = *cbucket(st, clientid); clp; clp = clp->hnext)
		if (clp->clientid == clientid)
			return clp;
	return NULL;
}

struct nfs4_client *nfs4_client_by_name(struct nfs4_state *st, const uint8_t *name, uint32_t len,
					bool confirmed, uint32_t minor)
{
	struct nfs4_client *clp;

	for (clp = st->clients; clp; clp = clp->next)
		if (!clp->expired && clp->confirmed == confirmed &&
		    (clp->minor == 0) == (minor == 0) && clp->name_len == len &&
		    !memcmp(clp->name, name, len))
			return clp;
	return NULL;
}

static void client_unhash(struct nfs4_state *st, struct nfs4_client *clp)
{
	struct nfs4_client **pp;

	for (pp = &st->clients; *pp; pp = &(*pp)->next)
		if (*pp == clp) {
			*pp = clp->next;
			break;
		}
	for (pp = cbucket(st, clp->clientid); *pp; pp = &(*pp)->hnext)
		if (*pp == clp) {
			*pp = clp->hnext;
			break;
		}
}

void nfs4_client_expire(struct nfs4_state *st, struct nfs4_client *clp, bool free_it)
{
	while (clp->sessions)
		nfs4_session_kill(st, clp->sessions);
	while (clp->owners)
		nfs4_owner_release(st, clp->owners);
	if (!free_it) {
		clp->expired = true;
		clp->renewed = nfs4_now();
		return;
	}
	client_unhash(st, clp);
	free(clp->name);
	free(clp);
}

bool nfs4_client_has_state(const struct nfs4_client *clp)
{
	const struct nfs4_owner *oo;

	if (clp->sessions)
		return true;
	for (oo = clp->owners; oo; oo = oo->next)
		if (oo->stids)
			return true;
	return false;
}

void nfs4_client_set_principal(struct nfs4_compound *c, struct nfs4_client *clp)
{
	clp->flavor = c->flavor;
	clp->uid = c->wire_cred.uid;
	clp->gid = c->wire_cred.gid;
	if (c->conn)
		clp->addr = c->conn->peer;
}

bool nfs4_client_same_principal(const struct nfs4_compound *c, const struct nfs4_client *clp)
{
	return clp->flavor == c->flavor && clp->uid == c->wire_cred.uid &&
	       clp->gid == c->wire_cred.gid;
}

void nfs4_client_renew(struct nfs4_compound *c, struct nfs4_client *clp)
{
	(void)c;
	clp->renewed = nfs4_now();
}

uint32_t nfs4_client_lookup40(struct nfs4_compound *c, uint64_t clientid, struct nfs4_client **out)
{
	struct nfs4_state *st = c->srv->state;
	struct nfs4_client *clp;

	*out = NULL;
	if ((uint32_t)(clientid >> 32) != st->boot)
		return NFS4ERR_STALE_CLIENTID;
	clp = nfs4_client_by_id(st, clientid);
	if (!clp || clp->minor != 0)
		return NFS4ERR_STALE_CLIENTID;
	if (clp->expired)
		return NFS4ERR_EXPIRED;
	if (!clp->confirmed)
		return NFS4ERR_STALE_CLIENTID;
	nfs4_client_renew(c, clp);
	*out = clp;
	return NFS4_OK;
}

uint32_t nfs4_client_of(struct nfs4_compound *c, uint64_t clientid, struct nfs4_client **out)
{
	if (c->minor >= 1) {
		*out = c->clp;
		return c->clp ? NFS4_OK : NFS4ERR_OP_NOT_IN_SESSION;
	}
	return nfs4_client_lookup40(c, clientid, out);
}

/* ================================================================ sessions */

struct nfs4_session *nfs4_session_find(struct nfs4_state *st, const uint8_t *id)
{
	uint64_t clientid = (uint64_t)xdr_get_u32(id) << 32 | xdr_get_u32(id + 4);
	struct nfs4_client *clp;
	struct nfs4_session *ses;

	if (xdr_get_u32(id) != st->boot)
		return NULL;
	clp = nfs4_client_by_id(st, clientid);
	if (!clp)
		return NULL;
	for (ses = clp->sessions; ses; ses = ses->next)
		if (!ses->dead && !memcmp(ses->id, id, NFS4_SESSIONID_SIZE))
			return ses;
	return NULL;
}

void nfs4_session_put(struct nfs4_state *st, struct nfs4_session *ses)
{
	uint32_t i;

	(void)st;
	if (--ses->refs)
		return;
	for (i = 0; i < NFS4_SLOTS_MAX; i++)
		free(ses->slots[i].buf);
	free(ses);
}

void nfs4_session_kill(struct nfs4_state *st, struct nfs4_session *ses)
{
	struct nfs4_session **pp;

	if (ses->dead)
		return;
	for (pp = &ses->clp->sessions; *pp; pp = &(*pp)->next)
		if (*pp == ses) {
			*pp = ses->next;
			break;
		}
	ses->clp->nsessions--;
	ses->dead = true;
	nfs4_session_put(st, ses);
}

void nfs4_session_bind_conn(struct nfs4_session *ses, uint64_t conn_id)
{
	unsigned int i;

	for (i = 0; i < ses->nconns; i++)
		if (ses->conns[i] == conn_id)
			return;
	if (ses->nconns < NFS4_SESSION_CONNS_MAX)
		ses->conns[ses->nconns++] = conn_id;
}

void nfs4_state_conn_closed(struct gw_srv *s, uint64_t conn_id)
{
	struct nfs4_state *st = s->state;
	struct nfs4_client *clp;
	struct nfs4_session *ses;
	unsigned int i;

	if (!st)
		return;
	nfs4_state_lock(st);
	for (clp = st->clients; clp; clp = clp->next)
		for (ses = clp->sessions; ses; ses = ses->next)
			for (i = 0; i < ses->nconns; i++)
				if (ses->conns[i] == conn_id) {
					ses->conns[i] = ses->conns[--ses->nconns];
					break;
				}
	nfs4_state_unlock(st);
}

void nfs4_sequence_done(struct nfs4_compound *c, size_t res_off, uint32_t status)
{
	struct nfs4_state *st = c->srv->state;
	struct nfs4_slot *slot = c->slot;
	struct nfs4_session *ses = c->ses;
	size_t len = xdr_out_len(c->out) > res_off ? xdr_out_len(c->out) - res_off : 0;

	(void)status;
	nfs4_state_lock(st);
	if (!c->replay) {
		slot->cached = false;
		/*
		 * Every reply small enough is kept, asked for or not: a
		 * retransmission then gets its real answer rather than
		 * RETRY_UNCACHED_REP.
		 */
		if (!c->out->err && len <= NFS4_REPLY_CACHE_MAX) {
			if (!slot->buf)
				slot->buf = malloc(NFS4_REPLY_CACHE_MAX);
			if (slot->buf && xdr_out_copy(c->out, res_off, slot->buf, len) == len) {
				slot->len = (uint32_t)len;
				slot->cached = true;
			}
		}
	}
	slot->inuse = false;
	ses->clp->busy--;
	nfs4_session_put(st, ses);
	nfs4_state_unlock(st);
	c->slot = NULL;
	c->ses = NULL;
	c->clp = NULL;
	c->replay = NULL;
	c->replay_len = 0;
}

/* ================================================================ owners */

struct nfs4_owner *nfs4_owner_find(struct nfs4_client *clp, bool is_lock, const uint8_t *data,
				   uint32_t len)
{
	struct nfs4_owner *oo;

	for (oo = clp->owners; oo; oo = oo->next)
		if (oo->is_lock == is_lock && oo->len == len && !memcmp(oo->data, data, len))
			return oo;
	return NULL;
}

struct nfs4_owner *nfs4_owner_new(struct nfs4_client *clp, bool is_lock, const uint8_t *data,
				  uint32_t len)
{
	struct nfs4_owner *oo = calloc(1, sizeof(*oo));

	if (!oo)
		return NULL;
	oo->data = malloc(len ? len : 1);
	if (!oo->data) {
		free(oo);
		return NULL;
	}
	memcpy(oo->data, data, len);
	oo->len = len;
	oo->is_lock = is_lock;
	oo->clp = clp;
	oo->fresh = true;
	oo->confirmed = clp->minor >= 1;
	oo->next = clp->owners;
	clp->owners = oo;
	return oo;
}

static void owner_free(struct nfs4_owner *oo)
{
	free(oo->replay.buf);
	free(oo->data);
	free(oo);
}

void nfs4_owner_get(struct nfs4_owner *oo)
{
	oo->refs++;
}

void nfs4_owner_put(struct nfs4_state *st, struct nfs4_owner *oo)
{
	if (--oo->refs)
		return;
	if (oo->unhashed)
		owner_free(oo);
	else if (oo->clp->minor >= 1 && !oo->stids)
		nfs4_owner_release(st, oo); /* 4.1: nothing to remember once nothing is open */
}

void nfs4_owner_drop_closed(struct nfs4_state *st, struct nfs4_owner *oo)
{
	if (oo->last_closed)
		nfs4_stid_free(st, oo->last_closed); /* clears last_closed */
}

void nfs4_owner_release(struct nfs4_state *st, struct nfs4_owner *oo)
{
	struct nfs4_owner **pp;

	if (oo->unhashed)
		return;
	oo->unhashed = true; /* before the stateids go: nothing releases it twice */
	while (oo->stids)
		nfs4_stid_free(st, oo->stids);
	for (pp = &oo->clp->owners; *pp; pp = &(*pp)->next)
		if (*pp == oo) {
			*pp = oo->next;
			break;
		}
	if (oo->refs == 0)
		owner_free(oo);
}

void nfs4_owner_seqid_done(struct nfs4_compound *c, struct nfs4_owner *oo, uint32_t seqid,
			   uint32_t status, const struct xdr_pos *from, const struct gw_fh *fh)
{
	struct nfs4_replay *rp = &oo->replay;
	size_t len = 0;

	if (c->minor >= 1 || !nfs4_seqid_mutating(status))
		return;
	if (c->opnum != OP_CLOSE && oo->last_closed)
		nfs4_owner_drop_closed(c->srv->state, oo);
	oo->seqid = seqid;
	oo->fresh = false;
	oo->used = nfs4_now();
	rp->valid = true;
	rp->status = status;
	rp->keep_body = status != NFS4_OK && c->keep_body;
	if ((status == NFS4_OK || rp->keep_body) && xdr_out_len(c->out) > from->len && !c->out->err)
		len = xdr_out_len(c->out) - from->len;
	if (len > NFS4_REPLAY_MAX) {
		rp->valid = false; /* too big to keep: a retransmission is answered BAD_SEQID */
		len = 0;
	}
	if (len && !rp->buf) {
		rp->buf = malloc(NFS4_REPLAY_MAX);
		if (!rp->buf) {
			rp->valid = false;
			len = 0;
		}
	}
	if (len)
		xdr_out_copy(c->out, from->len, rp->buf, len);
	rp->len = (uint32_t)len;
	rp->has_fh = fh != NULL;
	if (fh)
		rp->fh = *fh;
}

uint32_t nfs4_owner_replay(struct nfs4_compound *c, struct nfs4_owner *oo, struct gw_fh *fh,
			   bool *has_fh)
{
	struct nfs4_replay *rp = &oo->replay;

	*has_fh = false;
	if (!rp->valid)
		return NFS4ERR_BAD_SEQID;
	if (rp->len)
		xdr_out_write(c->out, rp->buf, rp->len);
	c->keep_body = rp->keep_body;
	if (rp->has_fh) {
		*fh = rp->fh;
		*has_fh = true;
	}
	return rp->status;
}

/* ================================================================ files */

static uint32_t file_hash(uint32_t xid, uint64_t fileid)
{
	uint64_t h = fileid * 0x9e3779b97f4a7c15ULL ^ xid;

	return (uint32_t)(h >> 32 ^ h) % NFS4_FILE_BUCKETS;
}

bool nfs4_file_is(const struct nfs4_file *f, const struct gw_obj *o)
{
	return o->xp && f->xid == o->xp->id && f->fileid == o->fileid;
}

struct nfs4_file *nfs4_file_find(struct nfs4_state *st, const struct gw_obj *o, bool create)
{
	struct nfs4_file **head, *f;

	if (!o->xp)
		return NULL;
	head = &st->fbucket[file_hash(o->xp->id, o->fileid)];
	for (f = *head; f; f = f->hnext)
		if (nfs4_file_is(f, o))
			return f;
	if (!create)
		return NULL;
	f = calloc(1, sizeof(*f));
	if (!f)
		return NULL;
	f->xid = o->xp->id;
	f->fileid = o->fileid;
	f->hnext = *head;
	*head = f;
	return f;
}

void nfs4_file_maybe_free(struct nfs4_state *st, struct nfs4_file *f)
{
	struct nfs4_file **pp;

	if (!f || f->opens || f->lstids || f->locks.n)
		return;
	for (pp = &st->fbucket[file_hash(f->xid, f->fileid)]; *pp; pp = &(*pp)->hnext)
		if (*pp == f) {
			*pp = f->hnext;
			break;
		}
	nfs4_lset_free(&f->locks);
	free(f);
}

bool nfs4_file_share_ok(const struct nfs4_file *f, const struct nfs4_stid *except, uint32_t access,
			uint32_t deny)
{
	const struct nfs4_stid *s;

	if (!f)
		return true;
	for (s = f->opens; s; s = s->f_next)
		if (s != except && nfs4_share_conflict(access, deny, s->access, s->deny))
			return false;
	return true;
}

/* ================================================================ stateids */

static struct nfs4_stid **sbucket(struct nfs4_state *st, const uint8_t *other)
{
	return &st->sbucket[xdr_get_u32(other + 8) % NFS4_STID_BUCKETS];
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
	s->sid.seqid = 1;
	if (++st->next_stid == 0)
		st->next_stid = 1;
	xdr_put_u32(s->sid.other, st->boot);
	xdr_put_u32(s->sid.other + 4, (uint32_t)clp->clientid);
	xdr_put_u32(s->sid.other + 8, st->next_stid);
	s->hnext = *sbucket(st, s->sid.other);
	*sbucket(st, s->sid.other) = s;
	s->o_next = oo->stids;
	oo->stids = s;
	if (type == NFS4_STID_OPEN) {
		s->f_next = f->opens;
		f->opens = s;
	} else {
		s->f_next = f->lstids;
		f->lstids = s;
	}
	return s;
}

struct nfs4_stid *nfs4_stid_hash_find(struct nfs4_state *st, const uint8_t *other)
{
	struct nfs4_stid *s;

	for (s = *sbucket(st, other); s; s = s->hnext)
		if (!memcmp(s->sid.other, other, NFS4_OTHER_SIZE))
			return s;
	return NULL;
}

static void unlink_stid(struct nfs4_stid **head, struct nfs4_stid *s, bool by_file)
{
	struct nfs4_stid **pp;

	for (pp = head; *pp; pp = by_file ? &(*pp)->f_next : &(*pp)->o_next)
		if (*pp == s) {
			*pp = by_file ? s->f_next : s->o_next;
			return;
		}
}

/* Drop what an open stateid holds on its file: lock stateids made from it, fds, the share */
static void open_detach(struct nfs4_state *st, struct nfs4_stid *s)
{
	struct nfs4_file *f = s->file;
	struct nfs4_stid *l, *next;
	int i;

	for (l = f->lstids; l; l = next) {
		next = l->f_next;
		if (l->open == s)
			nfs4_stid_free(st, l);
	}
	for (i = 0; i < 3; i++) {
		nfs4_state_defer_close(st, s->fds[i]);
		s->fds[i] = -1;
	}
	unlink_stid(&f->opens, s, true);
	s->file = NULL;
	nfs4_file_maybe_free(st, f);
}

void nfs4_stid_free(struct nfs4_state *st, struct nfs4_stid *s)
{
	struct nfs4_owner *oo = s->owner;
	struct nfs4_stid **pp;

	if (s->type == NFS4_STID_OPEN) {
		open_detach(st, s);
	} else if (s->type == NFS4_STID_LOCK && s->file) {
		nfs4_lset_drop(&s->file->locks, s);
		unlink_stid(&s->file->lstids, s, true);
		nfs4_file_maybe_free(st, s->file);
	}
	for (pp = sbucket(st, s->sid.other); *pp; pp = &(*pp)->hnext)
		if (*pp == s) {
			*pp = s->hnext;
			break;
		}
	unlink_stid(&oo->stids, s, false);
	if (oo->last_closed == s)
		oo->last_closed = NULL;
	free(s);
	/* 4.1 owners have no seqid to remember: they go with their last stateid */
	if (oo->clp->minor >= 1 && !oo->stids && !oo->unhashed && !oo->refs)
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

void nfs4_stid_bump(struct nfs4_stid *s)
{
	if (++s->sid.seqid == 0)
		s->sid.seqid = 1;
}

bool nfs4_stid_on(const struct nfs4_stid *s, const struct gw_obj *o)
{
	return s->file && nfs4_file_is(s->file, o);
}

uint32_t nfs4_stid_lookup(struct nfs4_compound *c, const struct nfs4_stateid *sid,
			  unsigned int flags, struct nfs4_stid **out)
{
	struct nfs4_state *st = c->srv->state;
	struct nfs4_client *clp;
	struct nfs4_stid *s;
	uint32_t status;

	*out = NULL;
	if (nfs4_sid_is_special(sid))
		return NFS4ERR_BAD_STATEID;
	if (xdr_get_u32(sid->other) != st->boot)
		return c->minor ? NFS4ERR_BAD_STATEID : NFS4ERR_STALE_STATEID;
	clp = nfs4_client_by_id(st, (uint64_t)st->boot << 32 | xdr_get_u32(sid->other + 4));
	if (c->minor >= 1) {
		if (!clp || clp != c->clp)
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
		status = nfs4_sid_gen_check(s->sid.seqid, sid->seqid, c->minor);
		if (status != NFS4_OK)
			return status;
	}
	if (c->minor == 0)
		nfs4_client_renew(c, clp);
	*out = s;
	return NFS4_OK;
}

uint32_t nfs4_check_reg(const struct nfs4_compound *c, const struct gw_obj *o)
{
	if (o->type == S_IFREG)
		return NFS4_OK;
	if (o->type == S_IFDIR)
		return NFS4ERR_ISDIR;
	if (o->type == S_IFLNK || c->minor == 0)
		return NFS4ERR_SYMLINK; /* RFC 7530 §16.16.5: anything else is SYMLINK in 4.0 */
	return NFS4ERR_WRONG_TYPE;
}

/* ================================================================ I/O */

/* Share reservations a READ or WRITE with a special stateid must respect (nfsd: LOCKED) */
static uint32_t special_io_check(struct nfs4_state *st, const struct nfs4_stateid *sid,
				 struct gw_obj *o, bool write)
{
	const struct nfs4_file *f;
	const struct nfs4_stid *s;
	uint32_t status = NFS4_OK;

	if (nfs4_sid_is_bypass(sid) && !write)
		return NFS4_OK;
	nfs4_state_lock(st);
	f = nfs4_file_find(st, o, false);
	for (s = f ? f->opens : NULL; s; s = s->f_next)
		if (s->deny & (write ? OPEN4_SHARE_DENY_WRITE : OPEN4_SHARE_DENY_READ)) {
			status = NFS4ERR_LOCKED;
			break;
		}
	nfs4_state_unlock(st);
	return status;
}

uint32_t nfs4_state_io_fd(struct nfs4_compound *c, const struct nfs4_stateid *sid_in,
			  struct gw_obj *o, bool write, int *fd, bool *fd_owned)
{
	struct nfs4_state *st = c->srv->state;
	struct nfs4_stateid sid = *sid_in;
	struct nfs4_stid *s, *open;
	uint32_t status;
	int got = -1, err;

	*fd = -1;
	*fd_owned = false;
	status = nfs4_resolve_current_sid(c, &sid);
	if (status != NFS4_OK)
		return status;
	if (nfs4_sid_is_anon(&sid) || nfs4_sid_is_bypass(&sid)) {
		status = special_io_check(st, &sid, o, write);
		if (status != NFS4_OK)
			return status;
		goto open_new;
	}
	nfs4_state_lock(st);
	status = nfs4_stid_lookup(c, &sid, NFS4_FIND_OPEN | NFS4_FIND_LOCK, &s);
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
	if (write)
		got = open->fds[O_WRONLY] >= 0 ? open->fds[O_WRONLY] : open->fds[O_RDWR];
	else
		got = open->fds[O_RDONLY] >= 0 ? open->fds[O_RDONLY] : open->fds[O_RDWR];
	if (got >= 0) {
		got = fcntl(got, F_DUPFD_CLOEXEC, 3);
		if (got < 0)
			status = nfs4_errno(-errno);
	}
	nfs4_state_unlock(st);
	if (status != NFS4_OK)
		return status;
	if (got >= 0) {
		*fd = got;
		*fd_owned = true;
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

static bool same_open(const void *owner, const void *arg)
{
	const struct nfs4_stid *l = owner;

	return l->open == arg;
}

uint32_t nfs4_state_check_lock(struct nfs4_compound *c, const struct nfs4_stateid *sid_in,
			       struct gw_obj *o, uint64_t off, uint64_t len, bool write)
{
	struct nfs4_state *st = c->srv->state;
	struct nfs4_stateid sid = *sid_in;
	const struct nfs4_file *f;
	struct nfs4_stid *s = NULL;
	nfs4_lsame_fn *same = NULL;
	const void *arg = NULL;
	uint64_t end;
	uint32_t status = NFS4_OK;

	if (len == 0)
		return NFS4_OK;
	end = len - 1 > UINT64_MAX - off ? UINT64_MAX : off + (len - 1);
	if (nfs4_resolve_current_sid(c, &sid) != NFS4_OK)
		return NFS4_OK; /* the stateid check of the op itself reports it */
	nfs4_state_lock(st);
	f = nfs4_file_find(st, o, false);
	if (!f || !f->locks.n)
		goto out;
	/* the I/O's own locks: a lock stateid's, or those taken through an open stateid */
	if (!nfs4_sid_is_special(&sid) &&
	    nfs4_stid_lookup(c, &sid, NFS4_FIND_OPEN | NFS4_FIND_LOCK | NFS4_FIND_NOGEN, &s) ==
		    NFS4_OK) {
		if (s->type == NFS4_STID_LOCK) {
			arg = s;
		} else {
			same = same_open;
			arg = s;
		}
	}
	if (nfs4_lset_conflict(&f->locks, write ? WRITE_LT : READ_LT, off, end, same, arg))
		status = NFS4ERR_LOCKED;
out:
	nfs4_state_unlock(st);
	return status;
}

/* ================================================================ life cycle */

static uint32_t boot_stamp(void)
{
	struct timespec ts;
	uint32_t b;

	clock_gettime(CLOCK_REALTIME, &ts);
	b = (uint32_t)((uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000);
	/* never 0 or all ones: "other" of a real stateid is never a special one */
	if (b == 0 || b == UINT32_MAX)
		b = 1;
	return b;
}

int nfs4_state_init(struct gw_srv *s)
{
	struct nfs4_state *st = calloc(1, sizeof(*st));

	if (!st) {
		log_err("nfs4_state_init: calloc: %s", strerror(ENOMEM));
		return -ENOMEM;
	}
	pthread_mutex_init(&st->lock, NULL);
	st->boot = boot_stamp();
	st->lease = s->cfg ? s->cfg->lease_time : GW_LEASE_DEFAULT;
	s->state = st;
	return 0;
}

void nfs4_state_fini(struct gw_srv *s)
{
	struct nfs4_state *st = s->state;

	if (!st)
		return;
	nfs4_state_lock(st);
	while (st->clients) {
		st->clients->busy = 0;
		nfs4_client_expire(st, st->clients, true);
	}
	nfs4_state_unlock(st);
	pthread_mutex_destroy(&st->lock);
	free(st);
	s->state = NULL;
}

/* 4.0 open owners idle for a lease with nothing open are forgotten (nfsd's close_lru) */
static void reap_owners(struct nfs4_state *st, struct nfs4_client *clp, time_t now,
			unsigned int lease)
{
	struct nfs4_owner *oo, *next;

	for (oo = clp->owners; oo; oo = next) {
		next = oo->next;
		if (!oo->is_lock && !oo->refs &&
		    (!oo->stids || (oo->stids == oo->last_closed && !oo->stids->o_next)) &&
		    now - oo->used > (time_t)lease)
			nfs4_owner_release(st, oo);
	}
}

void nfs4_state_reap(struct gw_srv *s)
{
	struct nfs4_state *st = s->state;
	struct nfs4_client *clp, *next;
	unsigned int lease;
	time_t now = nfs4_now();

	if (!st)
		return;
	lease = st->lease;
	if (pthread_rwlock_tryrdlock(&s->cfg_lock) == 0) {
		if (s->cfg)
			lease = s->cfg->lease_time;
		pthread_rwlock_unlock(&s->cfg_lock);
	}
	nfs4_state_lock(st);
	st->lease = lease;
	for (clp = st->clients; clp; clp = next) {
		next = clp->next;
		if (clp->busy)
			continue;
		if (clp->expired) {
			if (now - clp->renewed > 2 * (time_t)lease)
				nfs4_client_expire(st, clp, true);
			continue;
		}
		if (now - clp->renewed <= (time_t)lease) {
			if (clp->minor == 0)
				reap_owners(st, clp, now, lease);
			continue;
		}
		if (!clp->confirmed) {
			nfs4_client_expire(st, clp, true);
			continue;
		}
		log_info("nfs4: client %016llx: lease expired, its state is dropped",
			 (unsigned long long)clp->clientid);
		nfs4_client_expire(st, clp, false);
	}
	nfs4_state_unlock(st);
}

void nfs4_state_get_stats(struct gw_srv *s, struct nfs4_state_stats *out)
{
	struct nfs4_state *st = s->state;
	struct nfs4_client *clp;
	struct nfs4_file *f;
	struct nfs4_stid *o;
	size_t i;

	memset(out, 0, sizeof(*out));
	if (!st)
		return;
	nfs4_state_lock(st);
	for (clp = st->clients; clp; clp = clp->next) {
		if (clp->expired || !clp->confirmed)
			continue;
		out->clients++;
		out->sessions += clp->nsessions;
	}
	for (i = 0; i < NFS4_FILE_BUCKETS; i++)
		for (f = st->fbucket[i]; f; f = f->hnext) {
			for (o = f->opens; o; o = o->f_next)
				out->opens++;
			out->locks += (unsigned int)f->locks.n;
		}
	nfs4_state_unlock(st);
}
