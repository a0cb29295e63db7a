// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * NFSv4 state: the state lock and its deferred closes, clients and their
 * leases, sessions and their reply cache, open and lock owners with their
 * 4.0 seqid replays, and the life cycle of it all (init, the lease reaper,
 * stats). Files and stateids are in nfs4_stateid.c, the fds READ and
 * WRITE go through in nfs4_state_io.c, the byte-range lock sets in
 * nfs4_lockset.c. The model and its lock order are described in
 * nfs4_state.h; the operations that change state are in
 * nfs4_op_session.c, nfs4_op_clientid.c, nfs4_op_open.c and
 * nfs4_op_lock.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "nfs4_recov.h"
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
	if ((size_t)fd < st->fd_cap && st->fd_users[fd]) {
		st->fd_pending[fd] = 1; /* the last borrower closes it */
		return;
	}
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
	list_init(&clp->sessions);
	list_init(&clp->owners);
	list_add(&clp->list, &st->clients);
	nfs4_hash_add(&st->client_ids, &clp->hnode, clp->clientid);
	return clp;
}

struct nfs4_client *nfs4_client_by_id(struct nfs4_state *st, uint64_t clientid)
{
	struct hnode *n;

	HTABLE_FOR_EACH_HASH(&st->client_ids, clientid, n) {
		struct nfs4_client *clp = container_of(n, struct nfs4_client, hnode);

		if (clp->clientid == clientid)
			return clp;
	}
	return NULL;
}

struct nfs4_client *nfs4_client_by_name(struct nfs4_state *st, const uint8_t *name, uint32_t len,
					bool confirmed, uint32_t minor)
{
	struct nfs4_client *clp;

	list_for_each_entry(clp, &st->clients, list)
		if (!clp->expired && clp->confirmed == confirmed &&
		    (clp->minor == 0) == (minor == 0) && clp->name_len == len &&
		    !memcmp(clp->name, name, len))
			return clp;
	return NULL;
}

static void client_unhash(struct nfs4_state *st, struct nfs4_client *clp)
{
	list_del(&clp->list);
	htable_del(&st->client_ids, &clp->hnode);
}

void nfs4_client_expire(struct nfs4_state *st, struct nfs4_client *clp, bool free_it)
{
	if (clp->confirmed && !clp->expired)
		nfs4_recov_forget(st->recov, clp);
	while (!list_empty(&clp->sessions))
		nfs4_session_kill(st, list_first_entry(&clp->sessions, struct nfs4_session, list));
	while (!list_empty(&clp->owners))
		nfs4_owner_release(st, list_first_entry(&clp->owners, struct nfs4_owner, list));
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

	if (!list_empty(&clp->sessions))
		return true;
	list_for_each_entry(oo, &clp->owners, list)
		if (!list_empty(&oo->stids))
			return true;
	return false;
}

void nfs4_client_set_principal(const struct nfs4_caller *who, struct nfs4_client *clp)
{
	clp->flavor = who->flavor;
	clp->uid = who->wire_cred->uid;
	clp->gid = who->wire_cred->gid;
	if (who->peer)
		clp->addr = *who->peer;
}

bool nfs4_client_same_principal(const struct nfs4_caller *who, const struct nfs4_client *clp)
{
	return clp->flavor == who->flavor && clp->uid == who->wire_cred->uid &&
	       clp->gid == who->wire_cred->gid;
}

void nfs4_client_renew(struct nfs4_client *clp)
{
	clp->renewed = nfs4_now();
}

uint32_t nfs4_client_lookup40(struct nfs4_state *st, uint64_t clientid, struct nfs4_client **out)
{
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
	nfs4_client_renew(clp);
	*out = clp;
	return NFS4_OK;
}

uint32_t nfs4_client_of(const struct nfs4_caller *who, uint64_t clientid, struct nfs4_client **out)
{
	if (who->minor >= 1) {
		*out = who->clp;
		return who->clp ? NFS4_OK : NFS4ERR_OP_NOT_IN_SESSION;
	}
	return nfs4_client_lookup40(who->srv->state, clientid, out);
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
	list_for_each_entry(ses, &clp->sessions, list)
		if (!ses->dead && !memcmp(ses->id, id, NFS4_SESSIONID_SIZE))
			return ses;
	return NULL;
}

void nfs4_session_put(struct nfs4_state *st, struct nfs4_session *ses)
{
	uint32_t i;

	if (--ses->refs)
		return;
	st->reply_cache -= (uint64_t)ses->nslots * ses->slot_bytes;
	for (i = 0; i < NFS4_SLOTS_MAX; i++)
		free(ses->slots[i].buf);
	free(ses);
}

void nfs4_session_kill(struct nfs4_state *st, struct nfs4_session *ses)
{
	if (ses->dead)
		return;
	list_del(&ses->list);
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
	list_for_each_entry(clp, &st->clients, list)
		list_for_each_entry(ses, &clp->sessions, list)
			for (i = 0; i < ses->nconns; i++)
				if (ses->conns[i] == conn_id) {
					ses->conns[i] = ses->conns[--ses->nconns];
					break;
				}
	nfs4_state_unlock(st);
}

/*
 * A slot's buffer holds its last reply, grown in steps of
 * NFS4_REPLY_CACHE_STEP up to the session's slot_bytes: most replies are
 * a few hundred bytes.
 */
static bool slot_room(struct nfs4_slot *slot, size_t len)
{
	size_t cap = (len + NFS4_REPLY_CACHE_STEP - 1) / NFS4_REPLY_CACHE_STEP * NFS4_REPLY_CACHE_STEP;
	uint8_t *buf;

	if (slot->buf && slot->cap >= len)
		return true;
	buf = realloc(slot->buf, cap ? cap : NFS4_REPLY_CACHE_STEP);
	if (!buf)
		return false;
	slot->buf = buf;
	slot->cap = (uint32_t)(cap ? cap : NFS4_REPLY_CACHE_STEP);
	return true;
}

void nfs4_slot_done(struct nfs4_caller *who, struct nfs4_slot *slot, const struct xdr_out *out,
		    size_t res_off)
{
	struct nfs4_state *st = who->srv->state;
	struct nfs4_session *ses = who->ses;
	size_t len = out && xdr_out_len(out) > res_off ? xdr_out_len(out) - res_off : 0;

	nfs4_state_lock(st);
	if (out) {
		slot->cached = false;
		/*
		 * Every reply small enough is kept, asked for or not: a
		 * retransmission then gets its real answer rather than
		 * RETRY_UNCACHED_REP.
		 */
		if (!out->err && len <= ses->slot_bytes && slot_room(slot, len) &&
		    xdr_out_copy(out, res_off, slot->buf, len) == len) {
			slot->len = (uint32_t)len;
			slot->cached = true;
		}
	}
	slot->inuse = false;
	ses->clp->busy--;
	nfs4_session_put(st, ses);
	nfs4_state_unlock(st);
	who->ses = NULL;
	who->clp = NULL;
}

/* ================================================================ owners */

struct nfs4_owner *nfs4_owner_find(struct nfs4_client *clp, bool is_lock, const uint8_t *data,
				   uint32_t len)
{
	struct nfs4_owner *oo;

	list_for_each_entry(oo, &clp->owners, list)
		if (oo->is_lock == is_lock && oo->len == len && !memcmp(oo->data, data, len))
			return oo;
	return NULL;
}

struct nfs4_owner *nfs4_owner_new(struct nfs4_state *st, struct nfs4_client *clp, bool is_lock,
				  const uint8_t *data, uint32_t len)
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
	list_init(&oo->stids);
	list_add(&oo->list, &clp->owners);
	if (is_lock) {
		clp->nlock_owners++;
		st->nlock_owners++;
	}
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
	else if (oo->clp->minor >= 1 && list_empty(&oo->stids))
		nfs4_owner_release(st, oo); /* 4.1: nothing to remember once nothing is open */
}

void nfs4_owner_drop_closed(struct nfs4_state *st, struct nfs4_owner *oo)
{
	if (oo->last_closed)
		nfs4_stid_free(st, oo->last_closed); /* clears last_closed */
}

void nfs4_owner_release(struct nfs4_state *st, struct nfs4_owner *oo)
{
	if (oo->unhashed)
		return;
	oo->unhashed = true; /* before the stateids go: nothing releases it twice */
	while (!list_empty(&oo->stids))
		nfs4_stid_free(st, list_first_entry(&oo->stids, struct nfs4_stid, o_list));
	list_del(&oo->list);
	if (oo->is_lock) {
		oo->clp->nlock_owners--;
		st->nlock_owners--;
	}
	if (oo->refs == 0)
		owner_free(oo);
}

void nfs4_owner_seqid_done(const struct nfs4_caller *who, struct nfs4_owner *oo,
			   const struct nfs4_seqid_op *op)
{
	struct nfs4_replay *rp = &oo->replay;
	size_t len = 0;

	if (who->minor >= 1 || !nfs4_seqid_mutating(op->status))
		return;
	if (op->opnum != OP_CLOSE && oo->last_closed)
		nfs4_owner_drop_closed(who->srv->state, oo);
	oo->seqid = op->seqid;
	oo->fresh = false;
	oo->used = nfs4_now();
	rp->valid = true;
	rp->status = op->status;
	rp->keep_body = op->status != NFS4_OK && op->keep_body;
	if ((op->status == NFS4_OK || rp->keep_body) && xdr_out_len(op->out) > op->from &&
	    !op->out->err)
		len = xdr_out_len(op->out) - op->from;
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
		xdr_out_copy(op->out, op->from, rp->buf, len);
	rp->len = (uint32_t)len;
	rp->has_fh = op->fh != NULL;
	if (op->fh)
		rp->fh = *op->fh;
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
	struct gw_snap *sn;
	int err;

	if (!st) {
		log_err("nfs4_state_init: calloc: %s", strerror(ENOMEM));
		return -ENOMEM;
	}
	list_init(&st->clients);
	/* calloc'd: htable_fini() of a table not made yet frees nothing */
	if (htable_init(&st->client_ids, NFS4_CLIENT_BUCKETS) ||
	    htable_init(&st->stids, NFS4_STID_BUCKETS) ||
	    htable_init(&st->files, NFS4_FILE_BUCKETS)) {
		log_err("nfs4_state_init: htable_init: %s", strerror(ENOMEM));
		err = -ENOMEM;
		goto out_fini_tables;
	}
	pthread_mutex_init(&st->lock, NULL);
	st->boot = boot_stamp();
	sn = gw_snap_get(s);
	st->lease = sn ? sn->cfg->lease_time : GW_LEASE_DEFAULT;
	st->idle_timeout = st->lease;
	if (sn && sn->cfg->state_dir) {
		err = nfs4_recov_open(sn->cfg->state_dir, sn->cfg->grace, st->lease, st->boot,
				      &st->recov);
		if (err) {
			gw_snap_put(sn);
			goto out_destroy_lock;
		}
	}
	gw_snap_put(sn);
	s->state = st;
	return 0;

out_destroy_lock:
	pthread_mutex_destroy(&st->lock);
out_fini_tables:
	htable_fini(&st->files);
	htable_fini(&st->stids);
	htable_fini(&st->client_ids);
	free(st);
	return err;
}

void nfs4_state_fini(struct gw_srv *s)
{
	struct nfs4_state *st = s->state;

	if (!st)
		return;
	nfs4_state_lock(st);
	while (!list_empty(&st->clients)) {
		struct nfs4_client *clp = list_first_entry(&st->clients, struct nfs4_client, list);

		clp->busy = 0;
		nfs4_client_expire(st, clp, true);
	}
	nfs4_state_unlock(st);
	/* the records stay on disk: the clients reclaim from them after a restart */
	nfs4_recov_close(st->recov);
	pthread_mutex_destroy(&st->lock);
	htable_fini(&st->files);
	htable_fini(&st->stids);
	htable_fini(&st->client_ids);
	free(st->fd_users);
	free(st->fd_pending);
	free(st);
	s->state = NULL;
}

/* The one stateid of @oo is the closed one kept for a CLOSE replay */
static bool only_closed(const struct nfs4_owner *oo)
{
	return oo->last_closed && oo->stids.next == &oo->last_closed->o_list &&
	       oo->stids.prev == oo->stids.next;
}

/* 4.0 open owners idle for a lease with nothing open are forgotten (nfsd's close_lru) */
static void reap_owners(struct nfs4_state *st, struct nfs4_client *clp, time_t now,
			unsigned int lease)
{
	struct nfs4_owner *oo, *next;

	list_for_each_entry_safe(oo, next, &clp->owners, list) {
		if (!oo->is_lock && !oo->refs &&
		    (list_empty(&oo->stids) || only_closed(oo)) &&
		    now - oo->used > (time_t)lease)
			nfs4_owner_release(st, oo);
	}
}

/*
 * A record that holds no state and is no use without more: unconfirmed,
 * or a 4.1 client with no session (it cannot even renew its lease).
 */
static bool client_idle(const struct nfs4_client *clp)
{
	return !clp->confirmed ||
	       (clp->minor >= 1 && !clp->nsessions && !clp->nopens && !clp->nlocks &&
		list_empty(&clp->owners));
}

void nfs4_state_reap(struct gw_srv *s)
{
	struct nfs4_state *st = s->state;
	struct nfs4_client *clp, *next;
	unsigned int lease, idle;
	time_t now = nfs4_now();
	struct gw_snap *sn;

	if (!st)
		return;
	lease = st->lease;
	idle = st->idle_timeout;
	sn = gw_snap_get(s);
	if (sn) {
		lease = sn->cfg->lease_time;
		idle = sn->cfg->limits.unconfirmed_timeout;
		gw_snap_put(sn);
	}
	if (!idle || idle > lease)
		idle = lease;
	nfs4_state_lock(st);
	st->lease = lease;
	st->idle_timeout = idle;
	list_for_each_entry_safe(clp, next, &st->clients, list) {
		if (clp->busy)
			continue;
		if (clp->expired) {
			if (now - clp->renewed > 2 * (time_t)lease)
				nfs4_client_expire(st, clp, true);
			continue;
		}
		if (client_idle(clp) && now - clp->renewed > (time_t)idle) {
			gw_stat_add(&s->stats.state_clients_idle_expired, 1);
			nfs4_client_expire(st, clp, true);
			continue;
		}
		if (now - clp->renewed <= (time_t)lease) {
			if (clp->minor == 0)
				reap_owners(st, clp, now, lease);
			continue;
		}
		log_info("nfs4: client %016llx: lease expired, its state is dropped",
			 (unsigned long long)clp->clientid);
		nfs4_client_expire(st, clp, false);
	}
	nfs4_state_unlock(st);
}

void nfs4_state_serving(struct gw_srv *s)
{
	if (s->state)
		nfs4_recov_serving(s->state->recov);
}

bool nfs4_state_in_grace(struct gw_srv *s)
{
	return s->state && nfs4_recov_in_grace(s->state->recov);
}

void nfs4_state_get_stats(struct gw_srv *s, struct nfs4_state_stats *out)
{
	struct nfs4_state *st = s->state;
	struct nfs4_client *clp;
	struct nfs4_file *f;
	struct nfs4_stid *o;
	struct hnode *n, *tmp;
	size_t i;

	memset(out, 0, sizeof(*out));
	if (!st)
		return;
	nfs4_state_lock(st);
	list_for_each_entry(clp, &st->clients, list) {
		if (clp->expired) {
			out->expired++;
			continue;
		}
		if (!clp->confirmed) {
			out->unconfirmed++;
			continue;
		}
		out->clients++;
		out->sessions += clp->nsessions;
	}
	HTABLE_FOR_EACH_SAFE(&st->files, i, n, tmp) {
		f = container_of(n, struct nfs4_file, hnode);
		list_for_each_entry(o, &f->opens, f_list)
			out->opens++;
		out->locks += (unsigned int)f->locks.n;
	}
	out->reply_cache = st->reply_cache;
	nfs4_state_unlock(st);
}
