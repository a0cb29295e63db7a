/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * NFSv4 state: clients (4.0 SETCLIENTID and 4.1 EXCHANGE_ID), sessions
 * with their slot tables and reply cache, open and lock owners, stateids
 * and their leases, and byte-range locks (kept here, and held in the
 * kernel as well as OFD locks on the exported files, nfs4_ofd.c, so that
 * local processes and NFS clients exclude each other).
 *
 * The interface the COMPOUND engine and the file operations use is
 * first; the operations on state themselves (EXCHANGE_ID ... LOCKU) are
 * in nfs4_ops.h like every other op. The second half of this header is
 * the state model those operations share (nfs4_state.c: clients,
 * sessions, owners, leases; nfs4_stateid.c: files and stateids;
 * nfs4_state_io.c: the I/O interface; nfs4_lockset.c: byte-range lock
 * sets; and nfs4_op_session.c, nfs4_op_clientid.c, nfs4_op_open.c,
 * nfs4_op_lock.c), and the pure pieces of logic the unit test checks.
 *
 * Operation
 * ---------
 * Identifiers. Every clientid4, sessionid4 and stateid "other" carries
 * the server's boot stamp (milliseconds of the wall clock at start), so
 * one handed out by a previous run is told apart from one that merely no
 * longer exists: STALE_CLIENTID / STALE_STATEID in 4.0, BADSESSION /
 * BAD_STATEID in 4.1. Open and lock state lives in memory; the clients
 * that hold some are recorded on disk (nfs4_recov.h) so that after a
 * restart they can reclaim it during the grace period.
 *
 *   clientid4      boot << 32 | client number
 *   stateid other  boot(4) | client number(4) | stateid number(4)
 *   sessionid4     boot(4) | client number(4) | session number(4) | random(4)
 *
 * Clients. A record per nfs_client_id4 / client_owner4 string; 4.0
 * records are made by SETCLIENTID and confirmed by SETCLIENTID_CONFIRM,
 * 4.1 ones by EXCHANGE_ID and confirmed by their first CREATE_SESSION,
 * following the case tables of RFC 7530 §16.33.5 and RFC 8881 §18.35.5
 * as Linux nfsd implements them. A client in use by a COMPOUND (busy) is
 * never expired or destroyed under it (NFS4ERR_DELAY instead).
 *
 * Leases. 4.1 leases are renewed by SEQUENCE, 4.0 ones by RENEW and by
 * any op naming the client's clientid or one of its stateids.
 * nfs4_state_reap() expires clients whose lease ran out: their opens are
 * closed, locks dropped and sessions destroyed, and the record stays
 * behind as "expired" for two more lease periods so RENEW and I/O with
 * its stateids say NFS4ERR_EXPIRED rather than a stale error. Records
 * that hold nothing and can do nothing yet (unconfirmed, 4.1 without a
 * session) go sooner, unconfirmed_timeout after their last use, and when
 * the client table is full such records and clients holding no open or
 * lock are forgotten for new ones (gw_state_limits.c).
 *
 * Owners and seqids. 4.0 open and lock owners carry a seqid (RFC 7530
 * §9.1.7): a request with the next seqid runs, one with the last seqid
 * is a retransmission and gets the cached result of the owner's last op
 * (status and encoded results; an OPEN replay also restores the current
 * filehandle it set), anything else is BAD_SEQID. The seqid is bumped
 * for every result but STALE_CLIENTID, STALE_STATEID, BAD_STATEID,
 * BAD_SEQID, BADXDR, RESOURCE, NOFILEHANDLE and MOVED. A 4.0 CLOSE keeps
 * the closed stateid (no files, no share) until the owner's next op, so
 * that a retransmitted CLOSE still finds its owner. In 4.1 sessions give
 * exactly-once semantics and owner seqids are ignored.
 *
 * Files and locks. Open and lock state is kept per file, keyed by
 * (export id, fileid), never by the gw_obj pointer: objects are evicted
 * from the cache and come back as other objects. An open stateid keeps
 * fds of the file opened with the OPENing caller's credentials, one per
 * access mode (O_RDONLY, O_WRONLY, O_RDWR) as nfsd does; READ and WRITE
 * borrow one (nfs4_state_io_fd, nfs4_state_io_done). Byte-range locks are POSIX-style
 * ranges per lock stateid (one per lock-owner and file), merged and
 * split as fcntl locks are; LOCK never blocks (READW/WRITEW are answered
 * DENIED like READ/WRITE and the client polls). Each lock stateid has an
 * open file description of its own (lfd) on which the kernel holds the
 * same ranges as OFD locks: the table decides between NFS owners and
 * names them in LOCK4denied, the kernel between NFS owners and local
 * processes. The lfd is opened by LOCK before the state lock is taken,
 * its locks are dropped with the stateid (nfs4_stid_free) and it is
 * closed after the state lock is dropped, as other fds are.
 *
 * Locking. One mutex (struct nfs4_state.lock) guards everything here:
 * the hash tables of clients (by clientid), stateids (by "other") and
 * files (by export id and fileid), and every list hanging off them.
 * Lock order: the state lock (no lock of gw.h is held around a COMPOUND:
 * the engine holds a configuration snapshot, gw_snap_get()), then
 * (inside fcntl F_OFD_SETLK and F_OFD_GETLK, which never wait) the
 * kernel's lock table of a file.
 * Never take the object cache lock
 * (gw_obj_lookup, gw_obj_from_fh, gw_obj_put...) nor make a blocking
 * filesystem call while holding the state lock: fds to close are queued
 * and closed by nfs4_state_unlock() after the mutex is dropped, and the
 * ops open/create files before they take the lock.
 */
#ifndef LACUNA_NFS4_STATE_H
#define LACUNA_NFS4_STATE_H

#include <pthread.h>
#include <time.h>

#include "gw.h"
#include "htable.h"
#include "list.h"
#include "nfs4_caller.h"
#include "xdr.h"

/* Session limits offered in CREATE_SESSION */
#define NFS4_SLOTS_MAX 64
#define NFS4_SESSION_OPS_MAX 16
#define NFS4_REPLY_CACHE_MAX 8192 /* ca_maxresponsesize_cached */
/* A slot caches replies of up to the session's ca_maxresponsesize_cached, but at least this */
#define NFS4_REPLY_CACHE_MIN 2048
#define NFS4_REPLY_CACHE_STEP 512 /* a slot's buffer grows by this much */

int nfs4_state_init(struct gw_srv *s);
void nfs4_state_fini(struct gw_srv *s);
/*
 * Expire clients whose lease ran out, and forget records that hold no
 * state (unconfirmed, 4.1 without a session) unconfirmed_timeout after
 * their last use (called about once a second).
 */
void nfs4_state_reap(struct gw_srv *s);
/* A connection went away: unbind it from its sessions. */
void nfs4_state_conn_closed(struct gw_srv *s, uint64_t conn_id);

/*
 * The end of a COMPOUND that had @slot of who->ses (nfs4_sequence_done()):
 * keep its reply, the bytes of @out from @res_off to the end, in the
 * slot's cache (@out NULL: a replay, the cache stays as it is), release
 * the slot, the session and the client, and clear who->ses and who->clp.
 */
struct nfs4_slot;
void nfs4_slot_done(struct nfs4_caller *who, struct nfs4_slot *slot, const struct xdr_out *out,
		    size_t res_off);

/*
 * The fd to READ (@write false) or WRITE through for @sid on @o: an open
 * or lock stateid's fd, or for the special stateids (anonymous, READ
 * bypass) a new fd opened with the caller's credentials. Checks the
 * stateid (BAD_STATEID, OLD_STATEID, STALE_STATEID, EXPIRED, OPENMODE)
 * and renews the lease. *fd_owned says whether the caller must close it.
 * Returns an nfsstat4.
 */
uint32_t nfs4_state_io_fd(const struct nfs4_caller *who, const struct nfs4_stateid *sid,
			  struct gw_obj *o, bool write, int *fd, bool *fd_owned);
/*
 * The I/O on an fd from nfs4_state_io_fd() is done: close it if it was
 * the caller's own, else give the open's fd back (it closes now if the
 * open was closed meanwhile). fd < 0 is ignored.
 */
void nfs4_state_io_done(struct gw_srv *s, int fd, bool fd_owned);

/* Is the server in its grace period (nfs4_recov.h)? */
bool nfs4_state_in_grace(struct gw_srv *s);
/* Every transport is up: the grace period's time runs from now (nfs4_recov_serving) */
void nfs4_state_serving(struct gw_srv *s);

/* Counters for the stats output */
struct nfs4_state_stats {
	unsigned int clients, sessions, opens, locks;
	unsigned int unconfirmed; /* client records not confirmed yet */
	unsigned int expired;	  /* records of expired clients, kept to answer EXPIRED */
	uint64_t reply_cache; /* bytes reserved for sessions' reply caches */
};
void nfs4_state_get_stats(struct gw_srv *s, struct nfs4_state_stats *st);

/* ================================================================ pure logic (unit tested) */

/* seqid4 of a session slot or of the client's CREATE_SESSION slot (RFC 8881 §2.10.6.1) */
enum nfs4_seq_verdict {
	NFS4_SEQ_NEW,	     /* last + 1: run it */
	NFS4_SEQ_REPLAY,     /* == last: a retransmission */
	NFS4_SEQ_DELAY,	     /* the slot is busy with this very request */
	NFS4_SEQ_MISORDERED, /* anything else */
};
enum nfs4_seq_verdict nfs4_slot_check(uint32_t last, bool inuse, uint32_t seqid);

/* 4.0 owner seqid (RFC 7530 §9.1.7); a new owner takes any seqid */
enum nfs4_seq_verdict nfs4_owner_seqid_check(uint32_t last, bool first, uint32_t seqid);
/* Does @status bump an owner's seqid (and get cached for a replay)? */
bool nfs4_seqid_mutating(uint32_t status);

/* Stateid generation: NFS4_OK, OLD_STATEID or BAD_STATEID (4.1: seqid 0 is "current") */
uint32_t nfs4_sid_gen_check(uint32_t cur, uint32_t given, uint32_t minor);

bool nfs4_sid_is_anon(const struct nfs4_stateid *sid);	  /* all zeros */
bool nfs4_sid_is_bypass(const struct nfs4_stateid *sid);  /* all ones */
bool nfs4_sid_is_current(const struct nfs4_stateid *sid); /* 4.1: seqid 1, other 0 */
bool nfs4_sid_is_special(const struct nfs4_stateid *sid); /* other all 0 or all 1 */

/* Do share reservations (access a, deny d) and (a2, d2) conflict? */
static inline bool nfs4_share_conflict(uint32_t a, uint32_t d, uint32_t a2, uint32_t d2)
{
	return (a & d2) || (d & a2);
}

/*
 * Byte ranges are [start, end], inclusive, end UINT64_MAX meaning "to the
 * end of any file". From an (offset, length) of LOCK/LOCKT/LOCKU: length
 * 0, or a range past 2^64 - 1 (unless length is all ones), is -EINVAL.
 */
int nfs4_range_make(uint64_t off, uint64_t len, uint64_t *start, uint64_t *end);
/* The length4 a range is reported with (all ones when it runs to the end) */
uint64_t nfs4_range_len(uint64_t start, uint64_t end);

/*
 * The OFD lock (struct flock: l_start, l_len) of [start, end]: a range
 * reaching INT64_MAX, the largest off_t, or past it runs to the end
 * (l_len 0). A range starting past INT64_MAX has none: false.
 */
bool nfs4_range_ofd(uint64_t start, uint64_t end, int64_t *l_start, int64_t *l_len);

/* A set of byte-range locks of one file, each tagged with its owner. */
struct nfs4_lrange {
	uint64_t start, end;
	const void *owner;
	uint32_t type; /* READ_LT or WRITE_LT */
};

struct nfs4_lset {
	struct nfs4_lrange *r;
	size_t n, cap;
};

/* Is @owner the same as @arg (the lock does not conflict with itself)? NULL: owner == arg */
typedef bool nfs4_lsame_fn(const void *owner, const void *arg);

/* The first lock conflicting with a @type lock on [start, end] by a different owner, or NULL */
const struct nfs4_lrange *nfs4_lset_conflict(const struct nfs4_lset *s, uint32_t type,
					     uint64_t start, uint64_t end, nfs4_lsame_fn *same,
					     const void *arg);
/*
 * Room for @more ranges beyond those held: after nfs4_lset_reserve(s, 2),
 * nfs4_lset_lock() cannot fail, nor nfs4_lset_unlock() after (s, 1).
 * 0 or -ENOMEM.
 */
int nfs4_lset_reserve(struct nfs4_lset *s, size_t more);
/* Lock [start, end] as @type for @owner, no conflict check: replace, split, merge. 0 or -ENOMEM */
int nfs4_lset_lock(struct nfs4_lset *s, const void *owner, uint32_t type, uint64_t start,
		   uint64_t end);
/* Unlock [start, end] of @owner (a range split in two may need room: 0 or -ENOMEM) */
int nfs4_lset_unlock(struct nfs4_lset *s, const void *owner, uint64_t start, uint64_t end);
/* Would unlocking [start, end] of @owner split one of its ranges in two (one more range)? */
bool nfs4_lset_splits(const struct nfs4_lset *s, const void *owner, uint64_t start, uint64_t end);
/* Does @owner hold any lock? */
bool nfs4_lset_held(const struct nfs4_lset *s, const void *owner);
/* Drop every lock of @owner; returns how many ranges went */
size_t nfs4_lset_drop(struct nfs4_lset *s, const void *owner);
void nfs4_lset_free(struct nfs4_lset *s);

/* ================================================================ the state model */

/* Buckets the hash tables start with; each doubles once it holds more entries than buckets */
#define NFS4_CLIENT_BUCKETS 256
#define NFS4_STID_BUCKETS 4096
#define NFS4_FILE_BUCKETS 4096
#define NFS4_SESSION_CONNS_MAX 16 /* connections bound to one session */
#define NFS4_REPLAY_MAX 2048	  /* results of a 4.0 owner's last op kept for a replay */
#define NFS4_TEST_STATEID_MAX 1024

struct nfs4_chan_attrs {
	uint32_t headerpad, maxreq, maxresp, maxresp_cached, maxops, maxreqs;
	uint32_t nird, ird;
};

/* A CREATE_SESSION result, kept for its replay */
struct nfs4_cs_res {
	uint8_t sessionid[NFS4_SESSIONID_SIZE];
	uint32_t seqid, flags;
	struct nfs4_chan_attrs fore, back;
};

struct nfs4_slot {
	uint32_t seqid;
	bool inuse;
	bool cached; /* buf holds the reply to seqid */
	uint32_t len;
	uint8_t *buf; /* cap bytes, at most the session's slot_bytes */
	uint32_t cap;
};

struct nfs4_session {
	struct list_head list; /* client's sessions; dead: an empty list of its own */
	struct nfs4_client *clp;
	uint8_t id[NFS4_SESSIONID_SIZE];
	unsigned int refs; /* 1 while hashed + 1 per COMPOUND using it */
	bool dead;	   /* destroyed: freed when the last COMPOUND is done */
	uint32_t flags, cb_program;
	struct nfs4_chan_attrs fore, back;
	uint64_t conns[NFS4_SESSION_CONNS_MAX];
	unsigned int nconns;
	uint32_t nslots;
	uint32_t slot_bytes; /* size of each slot's reply cache; nslots x slot_bytes reserved */
	struct nfs4_slot slots[NFS4_SLOTS_MAX];
};

struct nfs4_client {
	struct list_head list; /* st->clients, newest first */
	struct hnode hnode;    /* st->client_ids, by clientid */
	uint64_t clientid;
	uint8_t *name; /* nfs_client_id4.id / co_ownerid */
	uint32_t name_len;
	uint8_t verf[NFS4_VERIFIER_SIZE];
	uint8_t confirm[NFS4_VERIFIER_SIZE];	 /* 4.0 setclientid_confirm */
	uint8_t upd_confirm[NFS4_VERIFIER_SIZE]; /* 4.0: a confirmed client's callback update */
	bool upd_pending;
	uint32_t minor; /* 0: SETCLIENTID, 1: EXCHANGE_ID */
	bool confirmed;
	bool expired;		   /* lease ran out: no state, kept to answer EXPIRED */
	uint32_t flavor, uid, gid; /* principal that made it */
	struct sockaddr_storage addr;
	time_t renewed;	   /* monotonic seconds */
	unsigned int busy; /* COMPOUNDs using it right now */
	uint32_t exchange_flags;
	/* CREATE_SESSION slot */
	uint32_t cs_seqid;
	bool cs_cached;
	struct nfs4_cs_res cs_res;
	bool reclaim_done; /* 4.1: RECLAIM_COMPLETE (rca_one_fs false) received */
	struct list_head sessions; /* its live sessions (nfs4_session.list), newest first */
	unsigned int nsessions;
	struct list_head owners; /* its open and lock owners (nfs4_owner.list) */
	/* state held, against the limits of gw_state_limits.c */
	unsigned int nopens, nlock_owners, nlocks;
};

/*
 * A 4.1 client is granted no new open before its RECLAIM_COMPLETE, grace
 * or not: such an OPEN is NFS4ERR_GRACE (RFC 8881 §18.51.3), as nfsd
 * answers. State lock held.
 */
static inline bool nfs4_client_reclaiming(const struct nfs4_client *clp)
{
	return clp->minor > 0 && !clp->reclaim_done;
}

/* The cached result of a 4.0 owner's last seqid op */
struct nfs4_replay {
	bool valid;
	bool keep_body;
	uint32_t status;
	uint32_t len;
	uint8_t *buf; /* NFS4_REPLAY_MAX */
	bool has_fh;  /* OPEN: the filehandle it made current */
	struct gw_fh fh;
};

struct nfs4_owner {
	struct list_head list; /* client's owners; unhashed: an empty list of its own */
	struct nfs4_client *clp;
	bool is_lock;
	bool confirmed;	   /* 4.0 open owners: OPEN_CONFIRM done */
	bool unhashed;	   /* released: freed once refs drop to 0 */
	unsigned int refs; /* in-flight ops holding it */
	uint32_t seqid;	   /* last seqid seen */
	bool fresh;	   /* no seqid seen yet */
	time_t used;	   /* last seqid op (4.0 idle owners are forgotten) */
	uint8_t *data;
	uint32_t len;
	struct list_head stids;	       /* its stateids (nfs4_stid.o_list), newest first */
	struct nfs4_stid *last_closed; /* 4.0: kept for a CLOSE replay */
	struct nfs4_replay replay;
};

struct nfs4_file {
	struct hnode hnode; /* st->files, by (xid, fileid) */
	uint32_t xid;
	uint64_t fileid;
	struct gw_obj *obj;	  /* referenced and pinned: PUTFH finds it even once unlinked */
	struct list_head opens;	  /* open stateids (nfs4_stid.f_list), newest first */
	struct list_head lstids;  /* lock stateids (nfs4_stid.f_list), newest first */
	struct nfs4_lset locks;	  /* owner tag: the lock stateid */
};

enum nfs4_stid_type { NFS4_STID_OPEN = 1, NFS4_STID_LOCK = 2, NFS4_STID_CLOSED = 3 };

struct nfs4_stid {
	struct hnode hnode;	  /* st->stids, by the stateid number in other */
	struct list_head o_list;  /* owner's stids */
	struct list_head f_list;  /* file's opens or lstids; off it: an empty list of its own */
	uint8_t type;
	struct nfs4_stateid sid; /* seqid: the current one */
	struct nfs4_client *clp;
	struct nfs4_owner *owner;
	struct nfs4_file *file;
	/* open */
	uint32_t access, deny;
	uint8_t access_bmap, deny_bmap; /* bit (1 << v) per mode value ever opened with */
	int fds[3];			/* by O_ACCMODE: O_RDONLY, O_WRONLY, O_RDWR; -1 */
	uint32_t gen;			/* the export's gen the fds were opened in */
	/* lock */
	struct nfs4_stid *open; /* the open stateid it came from */
	int lfd;		/* its own open file description, holding its OFD locks */
	/* open: the last caller whose I/O through it was allowed (nfs4_state_io.c) */
	struct gw_cred io_cred;
	uint8_t io_ok; /* bit 0 read, bit 1 write: allowed to io_cred */
};

struct nfs4_state {
	pthread_mutex_t lock;
	uint32_t boot;
	uint32_t next_client, next_stid, next_session;
	unsigned int lease; /* seconds, as last seen in the configuration */
	unsigned int idle_timeout; /* unconfirmed_timeout as last seen, at most the lease */
	struct list_head clients;    /* every client record (nfs4_client.list), newest first */
	struct htable client_ids;    /* the same, by clientid (nfs4_client.hnode) */
	struct htable stids;	     /* open, lock and closed stateids (nfs4_stid.hnode) */
	struct htable files;	     /* files holding state (nfs4_file.hnode) */
	int *closing; /* fds to close once the lock is dropped */
	size_t nclosing, capclosing;
	/*
	 * I/O borrows an open's fd instead of duplicating it (every close of a
	 * lacunafs fd is a FUSE_FLUSH round trip): fd_users[fd] counts the
	 * borrowers, and closing an fd still borrowed waits for the last one
	 * (fd_pending[fd]).
	 */
	uint32_t *fd_users;
	uint8_t *fd_pending;
	size_t fd_cap;
	struct nfs4_recov *recov; /* stable client records and grace; NULL: none */
	/* open stateids, lock-owners, byte-range locks of all clients */
	unsigned int nopens, nlock_owners, nlocks;
	/* bytes of reply cache the live sessions may use (nslots x slot_bytes each) */
	uint64_t reply_cache;
};

/*
 * Put @n in @t under @hash, doubling the buckets once @t holds more
 * entries than buckets (out of memory, the chains only grow longer).
 */
static inline void nfs4_hash_add(struct htable *t, struct hnode *n, uint64_t hash)
{
	if (t->count > t->mask)
		htable_grow(t);
	htable_add(t, n, hash);
}

/* Take / drop the state lock; dropping it closes the fds queued meanwhile. */
void nfs4_state_lock(struct nfs4_state *st);
void nfs4_state_unlock(struct nfs4_state *st);
/* Close @fd after the lock is dropped (state lock held) */
void nfs4_state_defer_close(struct nfs4_state *st, int fd);

time_t nfs4_now(void);

/* ---- clients (state lock held) */
struct nfs4_client *nfs4_client_new(struct nfs4_state *st, const uint8_t *name, uint32_t len,
				    uint32_t minor);
struct nfs4_client *nfs4_client_by_id(struct nfs4_state *st, uint64_t clientid);
/* The live (not expired) record for @name, confirmed or not */
struct nfs4_client *nfs4_client_by_name(struct nfs4_state *st, const uint8_t *name, uint32_t len,
					bool confirmed, uint32_t minor);
/* Drop all the state of @clp (opens, locks, owners, sessions); @free: the record too */
void nfs4_client_expire(struct nfs4_state *st, struct nfs4_client *clp, bool free_it);
/* Has it any open, lock or session? */
bool nfs4_client_has_state(const struct nfs4_client *clp);
/* Record the principal (and address) of the caller that made/updated @clp; compare with it */
void nfs4_client_set_principal(const struct nfs4_caller *who, struct nfs4_client *clp);
bool nfs4_client_same_principal(const struct nfs4_caller *who, const struct nfs4_client *clp);
/*
 * 4.0: the confirmed client @clientid names, renewing its lease.
 * NFS4_OK, STALE_CLIENTID (other boot, unknown, unconfirmed), EXPIRED.
 */
uint32_t nfs4_client_lookup40(struct nfs4_state *st, uint64_t clientid, struct nfs4_client **out);
/* The client an op of @who acts for: 4.1 the session's, 4.0 @clientid's */
uint32_t nfs4_client_of(const struct nfs4_caller *who, uint64_t clientid, struct nfs4_client **out);
void nfs4_client_renew(struct nfs4_client *clp);

/* ---- bounds on the state clients make (gw_state_limits.c) */

/*
 * May @who (EXCHANGE_ID, SETCLIENTID, CREATE_SESSION) create state from
 * its address? NFS4_OK, or the status to answer.
 */
uint32_t gw_state_admit(const struct nfs4_caller *who);
/*
 * A client record is about to be made, unconfirmed: make room for it
 * under max_clients_per_address, max_unconfirmed_clients and
 * max_clients by reclaiming clients that hold no state. NFS4_OK, or the
 * status to answer when none is left. State lock held.
 */
uint32_t gw_state_client_room(const struct nfs4_caller *who);
/* Log the sizes of the client table in force (max_clients and the others, auto or set). */
void gw_state_limits_log(const struct gw_limits *l);
/*
 * @clp is about to make a session whose slots take @slot_bytes each:
 * make room under max_clients_per_address, max_sessions and
 * max_reply_cache by reclaiming other clients that hold sessions but no
 * state. NFS4_OK, or NFS4ERR_DELAY. State lock held.
 */
uint32_t gw_state_session_room(const struct nfs4_caller *who, const struct nfs4_client *clp,
			       uint32_t slot_bytes);
/*
 * May @clp make one more open stateid, lock-owner or byte-range lock?
 * NFS4_OK, or the status to answer. State lock held.
 */
enum gw_state_kind { GW_STATE_OPEN, GW_STATE_LOCK_OWNER, GW_STATE_LOCK };
uint32_t gw_state_room(const struct nfs4_caller *who, const struct nfs4_client *clp,
		       enum gw_state_kind kind);

/* ---- sessions (state lock held) */
struct nfs4_session *nfs4_session_find(struct nfs4_state *st, const uint8_t *id);
void nfs4_session_put(struct nfs4_state *st, struct nfs4_session *ses);
/* Mark dead and unlink; freed at the last put */
void nfs4_session_kill(struct nfs4_state *st, struct nfs4_session *ses);
void nfs4_session_bind_conn(struct nfs4_session *ses, uint64_t conn_id);

/* ---- owners (state lock held) */
struct nfs4_owner *nfs4_owner_find(struct nfs4_client *clp, bool is_lock, const uint8_t *data,
				   uint32_t len);
struct nfs4_owner *nfs4_owner_new(struct nfs4_state *st, struct nfs4_client *clp, bool is_lock,
				  const uint8_t *data, uint32_t len);
void nfs4_owner_get(struct nfs4_owner *oo);
void nfs4_owner_put(struct nfs4_state *st, struct nfs4_owner *oo);
/* Release an owner and all its stateids */
void nfs4_owner_release(struct nfs4_state *st, struct nfs4_owner *oo);
/* Forget a 4.0 owner's kept closed stateid */
void nfs4_owner_drop_closed(struct nfs4_state *st, struct nfs4_owner *oo);
/* What a 4.0 seqid op answered (nfs4_owner_seqid_done) */
struct nfs4_seqid_op {
	uint32_t seqid;
	uint32_t opnum; /* a CLOSE keeps the owner's closed stateid */
	uint32_t status;
	bool keep_body; /* its results stay with an error status (LOCK4denied) */
	/* its results: the bytes of @out from @from on */
	const struct xdr_out *out;
	size_t from;
	const struct gw_fh *fh; /* OPEN: the current FH to restore on a replay, or NULL */
};
/*
 * After a 4.0 seqid op of @oo ran: bump the seqid and keep the result
 * (status, results, FH) for a replay when the status is seqid-mutating.
 * Nothing in 4.1. The replay itself (the owner's oo->replay, read with
 * the state lock held) is the engine's to send: nfs4_seqid_replay().
 */
void nfs4_owner_seqid_done(const struct nfs4_caller *who, struct nfs4_owner *oo,
			   const struct nfs4_seqid_op *op);

/* ---- files and stateids (state lock held) */
struct nfs4_file *nfs4_file_find(struct nfs4_state *st, const struct gw_obj *o, bool create);
/* Free @f if it holds no state any more */
void nfs4_file_maybe_free(struct nfs4_state *st, struct nfs4_file *f);
bool nfs4_file_is(const struct nfs4_file *f, const struct gw_obj *o);

struct nfs4_stid *nfs4_stid_new(struct nfs4_state *st, struct nfs4_client *clp,
				struct nfs4_owner *oo, struct nfs4_file *f, uint8_t type);
struct nfs4_stid *nfs4_stid_hash_find(struct nfs4_state *st, const uint8_t *other);
/*
 * Unhash and free (open: its fds are queued for closing, its lock
 * stateids go too; lock: its OFD locks are released now, its fd queued)
 */
void nfs4_stid_free(struct nfs4_state *st, struct nfs4_stid *s);
/* Turn an open stateid into a 4.0 closed one kept for replays */
void nfs4_stid_close(struct nfs4_state *st, struct nfs4_stid *s);
/* The byte-range locks of lock stateid @s changed from @before ranges of its file to now */
void nfs4_stid_count_locks(struct nfs4_state *st, struct nfs4_stid *s, size_t before);

#define NFS4_FIND_OPEN 0x1
#define NFS4_FIND_LOCK 0x2
#define NFS4_FIND_CLOSED 0x4
#define NFS4_FIND_NOGEN 0x8 /* leave the generation to the caller */
/*
 * The stateid @sid names, of one of the kinds in @flags: checks special
 * stateids, boot, the client (4.1: the session's), expiry, existence and
 * the generation, and renews a 4.0 lease. Returns an nfsstat4.
 */
uint32_t nfs4_stid_lookup(const struct nfs4_caller *who, const struct nfs4_stateid *sid,
			  unsigned int flags, struct nfs4_stid **out);
/* Does @s belong to the file of @o? */
bool nfs4_stid_on(const struct nfs4_stid *s, const struct gw_obj *o);
/* Give @s its next seqid (skipping 0) */
void nfs4_stid_bump(struct nfs4_stid *s);

/*
 * Is (access, deny) compatible with every open of @f? @except, the
 * opener's own open of @f, only conflicts by access it does not hold yet
 * or by denying access it holds.
 */
bool nfs4_file_share_ok(const struct nfs4_file *f, const struct nfs4_stid *except, uint32_t access,
			uint32_t deny);

/* ---- OFD locks mirroring the byte-range locks (nfs4_ofd.c) */

/* A new open file description of @o for a lock stateid's OFD locks: an fd or -errno (no lock) */
int nfs4_ofd_open(struct gw_obj *o);
/*
 * Set @type (READ_LT, WRITE_LT, or 0 to unlock) on [start, end] of @fd,
 * never waiting: 0, -EAGAIN when a lock of another description or process
 * is in the way, -EBADF when @fd is not open for that type, other -errno.
 * A range starting past INT64_MAX is not held in the kernel: 0.
 */
int nfs4_ofd_set(int fd, uint32_t type, uint64_t start, uint64_t end);
/*
 * The first lock of another description or process that conflicts with
 * a @type lock on [start, end] through @fd: 1 with *r (owner NULL) and
 * *pid (the holder's process for a POSIX lock, -1 for an OFD lock),
 * 0 when none, or -errno.
 */
int nfs4_ofd_test(int fd, uint32_t type, uint64_t start, uint64_t end, struct nfs4_lrange *r,
		  int *pid);

/* The status OPEN, LOCK and LOCKT give for an object that is not a regular file */
uint32_t nfs4_check_reg(uint32_t minor, const struct gw_obj *o);

#endif
