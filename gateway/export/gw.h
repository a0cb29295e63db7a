/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * lacunad's server-wide state and the file objects every operation works
 * on: exports as they run (the directory served, the backing directory
 * its file handles come from), the NFSv4 pseudo filesystem above them,
 * file handles and the objects they resolve to, and the per-thread
 * credentials operations run with.
 *
 * Operation
 * ---------
 * File handles. A handle names a file by the backing filesystem's own
 * handle (name_to_handle_at(2) on ext4 or XFS, under the lacunafs mount),
 * prefixed by the export's id, a 32-bit hash of the exported path, and
 * sealed with a tag only this server can make (gw_fh.c):
 *
 *   byte 0      GW_FH_VERSION (2)
 *   byte 1      GW_FH_FILE or GW_FH_PSEUDO
 *   bytes 2-3   0
 *   bytes 4-7   export id (GW_FH_FILE) or pseudo node index (GW_FH_PSEUDO)
 *   bytes 8-11  handle_type of the backing handle (GW_FH_PSEUDO: a hash of the node's path)
 *   bytes 12-27 tag: SipHash-2-4-128, under the key in state_dir, of bytes
 *               0-11 followed by bytes 28-
 *   bytes 28-   f_handle of the backing handle (none for GW_FH_PSEUDO)
 *
 * A handle whose tag is wrong was not made here: NFS4ERR_BADHANDLE, found
 * before anything else is done with it (no cache lookup, no
 * open_by_handle_at). Version 1 handles, the same without the tag (the
 * backing handle from byte 12), are NFS4ERR_STALE unless legacy_handles
 * = accept.
 *
 * Neither lacunad's nor lacunafs's state is part of it, so a handle stays
 * valid across a restart of either, as long as the export keeps its path,
 * the backing filesystem its files and the state directory its key (what
 * kernel nfsd promises). Resolving a handle nobody has cached opens the
 * backing file with open_by_handle_at(2), asks the kernel where it is
 * (its /proc/self/fd link), and opens the same path under the exported
 * directory (the lacunafs mount, so I/O goes through the range lock),
 * checking that the inode is the same. A file the kernel has no path for
 * (nothing looked it up since a reboot) is found through lacunafs's
 * lookup by handle, which refuses what it can tell lies outside its
 * backing directory. A file that no longer exists, or that lies outside
 * the export, is NFS4ERR_STALE.
 *
 * Objects. struct gw_obj is one file reached through a handle: an O_PATH
 * fd under the served directory (fd) and one under the backing directory
 * (bfd, the same fd for a plain export), reference counted and cached in
 * a hash table keyed by handle, so consecutive COMPOUNDs naming the same
 * handle resolve it with one lookup. Pseudo directories are objects
 * without fds.
 *
 * Credentials. Operations run on a worker thread whose fsuid, fsgid and
 * supplementary groups are set to the caller's (after squashing) with the
 * raw syscalls, which are per thread (glibc's setgroups() would change
 * every thread). The kernel then checks permissions as it would for a
 * local user of the lacunafs mount (default_permissions).
 *
 * Configuration. What a reload may change (the configuration, the
 * exports it serves, the pseudo filesystem above them) is one immutable,
 * reference-counted snapshot, struct gw_snap (gw_export.c). A COMPOUND
 * takes the snapshot in force at its start (gw_snap_get: a pointer and a
 * reference, under a lock held only for that) and drops it at its end:
 * no lock is held across a COMPOUND, and the configuration cannot change
 * under it. A reload builds the next snapshot entirely (parsing, opening
 * new exports, registering with lacunafs: everything that may block on a
 * hung lacunafs) holding nothing a COMPOUND needs, then publishes it with
 * one pointer swap; the old one is freed when its last user drops it.
 * The exports themselves (struct gw_export) outlive snapshots: one that
 * several snapshots serve is the same object in each, and it is never
 * freed while the server runs, so file objects and open state may point
 * at it whatever snapshot they were made under.
 *
 * Lock order: gw_srv.reload_lock (a reload, the export registry), then
 * gw_srv.snap_lock (only around taking or swapping the snapshot pointer,
 * nothing else taken under it); the object cache lock, then an object's
 * lock. The state lock (nfs4_state.h) is never held while taking the
 * object cache lock. No fd of a file is closed under the object cache
 * lock (a close on a FUSE mount is a FLUSH round trip to lacunafs, which
 * may hang): what the cache drops is closed after the lock is released.
 */
#ifndef LACUNA_GW_H
#define LACUNA_GW_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/statfs.h>

#include "chunk.h"
#include "siphash.h"
#include "metrics.h"
#include "trace.h"
#include "xdr.h"
#include "gw_config.h"
#include "nfs4.h"

struct nfs4_state;
struct lacuna_client;
struct gw_drc;

#define GW_FH_VERSION 2
#define GW_FH_VERSION_V1 1 /* no tag: legacy_handles */
#define GW_FH_FILE 1
#define GW_FH_PSEUDO 2
#define GW_FH_TAG_OFF 12
#define GW_FH_TAG_LEN SIPHASH128_BYTES
#define GW_FH_HDR (GW_FH_TAG_OFF + GW_FH_TAG_LEN) /* where the backing handle starts */
#define GW_FH_HDR_V1 12
#define GW_FH_HANDLE_MAX (NFS4_FHSIZE - GW_FH_HDR)
#define GW_FH_KEY_FILE "fh-key" /* in state_dir */

/* Reply and data sizes offered to clients */
#define GW_PSEUDO_MAX 64 /* nodes of the pseudo filesystem */

struct gw_fh {
	uint32_t len;
	uint8_t data[NFS4_FHSIZE];
};

/* One export as it runs. Never freed while the server runs (reloads keep it). */
struct gw_export {
	uint32_t id;	 /* hash of cfg path: bytes 4-7 of its handles */
	char *path;	 /* exported directory (normally a lacunafs mount) */
	char *back_path; /* backing directory: realpath, no trailing '/' */
	size_t back_len;
	bool lacunafs; /* path is (inside) a lacunafs mount */
	int fd;	       /* O_PATH of path */
	int bfd;       /* O_PATH of back_path (== fd for a plain export) */
	int hfd;       /* back_path opened O_RDONLY: open_by_handle_at() refuses O_PATH */
	struct lacuna_client *lc; /* sparse reads into pool through lacunafs, or NULL */
	const uint8_t *fh_key;	  /* gw_srv.fh_key: its handles' tags */
	struct chunk_pool *pool;  /* gw_srv.pool: the arena lc registers */
	/* CLONE's granularity (lacunafs's LACUNA_IOC_INFO), 0: no reflink there (__atomic) */
	uint64_t clone_blksize;
	uint64_t fsid_major, fsid_minor;
	struct gw_fh root_fh;
	uint64_t root_ino; /* fileid of the export root */
	uint32_t slot;	   /* index in gw_srv.xports: where snapshots find it (gw_snap.cfg_idx) */
	/*
	 * A lacunafs that died (ENOTCONN) and was mounted again: the export
	 * watcher (gw_exports_watch) swaps fd, bfd, hfd and lc for new ones
	 * and bumps gen; fds from an older gen (open state) are not used.
	 */
	atomic_bool dead;
	atomic_uint gen;
};

/*
 * A node of the pseudo filesystem: a directory on the way to an export,
 * or the place an export is mounted (xport >= 0: LOOKUP of it gives the
 * export's root). Node 0 is the root, unless an export is the root
 * (pseudo path "/"): then npseudo is 0 and PUTROOTFH gives that export.
 */
struct gw_pseudo {
	char name[NFS4_NAME_MAX + 1]; /* "" for the root */
	uint32_t parent;	      /* index; the root is its own parent */
	int xport;		      /* index in gw_snap.xports of the export here, or -1 */
	uint64_t fileid;
	struct gw_fh fh;
};

struct gw_obj {
	atomic_uint refs;
	/* NFSv4 state on the file (nfs4_file): its handle stays valid once unlinked */
	atomic_uint pins;
	struct gw_fh fh;
	struct gw_export *xp; /* NULL for a pseudo directory */
	int pseudo;	     /* pseudo node index, or -1 */
	int fd;		     /* O_PATH under xp->path (-1 for pseudo) */
	int bfd;	     /* O_PATH under xp->back_path (may equal fd) */
	mode_t type;	     /* S_IFMT bits */
	uint64_t fileid;
	pthread_mutex_t lock; /* guards the fields below */
	int rfd;	      /* cached O_RDONLY fd for stateless reads, or -1 */
	uint64_t lru;
};

/*
 * Operations are counted per nfsstat4 too, in slots: 0-127 for the
 * statuses below 128, 128-254 for 10000-10126, 255 for any other.
 */
#define GW_STATUS_SLOTS 256
static inline unsigned int gw_status_slot(uint32_t st)
{
	if (st < 128)
		return st;
	if (st >= 10000 && st < 10127)
		return st - 10000 + 128;
	return GW_STATUS_SLOTS - 1;
}

/* TLS failure reasons counted (enum gw_tls_fail in xprt/tls/gw_tls.h) */
#define GW_STATS_TLS_FAILS 10

/* Counters an operator sees (the stats file and /metrics). */
struct gw_stats {
	atomic_ullong ops[NFS4_OP_LAST + 1];
	atomic_ullong op_errors[NFS4_OP_LAST + 1];
	atomic_ullong op_status[NFS4_OP_LAST + 1][GW_STATUS_SLOTS];
	struct mx_hist op_lat[NFS4_OP_LAST + 1]; /* time to run each op */
	struct mx_hist rpc_lat; /* a call record in, its reply built */
	atomic_ullong tcp_bytes_in, tcp_bytes_out, rdma_bytes_in, rdma_bytes_out;
	atomic_ullong compounds;
	atomic_ullong rpc_null, rpc_rejected, rpc_garbage;
	atomic_ullong conns_accepted, conns_open, conns_dropped;
	/* limits hit: connections refused, idle ones closed to make room, closed
	 * idle, closed with a record unfinished or replies unsent too long; times a
	 * connection stopped being read for its own requests and replies, or for
	 * its address's share of requests or record chunks */
	atomic_ullong conns_refused, conns_evicted, conns_idle_closed;
	atomic_ullong conns_record_timeout, conns_send_timeout;
	atomic_ullong conn_stalls, client_stalls;
	/* EXCHANGE_ID, SETCLIENTID, CREATE_SESSION refused (gw_state_limits.c) */
	atomic_ullong state_refused;
	/* clients holding no state forgotten to make room for others */
	atomic_ullong state_clients_reclaimed;
	/* unconfirmed or session-less clients forgotten after unconfirmed_timeout */
	atomic_ullong state_clients_idle_expired;
	/* OPEN, LOCK refused by gw_state_room() */
	atomic_ullong state_opens_refused, state_locks_refused;
	/* unconfirmed clients forgotten to make room for new ones */
	atomic_ullong state_unconfirmed_evicted;
	/* sessions granted fewer slots than asked (or none) for max_reply_cache */
	atomic_ullong reply_cache_short;
	/* lacunafs exports served without atomic sparse reads now (a gauge) */
	atomic_ullong exports_not_atomic;
	atomic_ullong drc_hits; /* 4.0 retransmissions answered from the reply cache */
	atomic_ullong bytes_in, bytes_out;
	atomic_ullong read_bytes, write_bytes;
	/* READ_PLUS: bytes of data and of holes sent; replies taken atomically or not */
	atomic_ullong rp_data_bytes, rp_hole_bytes, rp_atomic, rp_fallback, rp_unstable;
	/* WRITEs applied under one hold of lacunafs's range lock, or not */
	atomic_ullong write_atomic, write_fallback;
	/* COPY: bytes of data written, of holes copied; replies short of the count asked */
	atomic_ullong copy_data_bytes, copy_hole_bytes, copy_short;
	/* CLONE: clones made, bytes they shared; refused where the export cannot reflink */
	atomic_ullong clone_ops, clone_bytes, clone_refused;
	/* RPC-over-RDMA: connections; bytes pulled with RDMA Read (read chunks),
	 * pushed into write chunks and reply chunks; replies by way of each;
	 * RDMA_ERROR replies sent */
	atomic_ullong rdma_conns, rdma_read_bytes, rdma_write_bytes, rdma_reply_bytes;
	atomic_ullong rdma_inline_replies, rdma_reply_chunk_replies, rdma_errors;
	/* RDMA connection requests rejected for max_rdma_connections(_per_client) */
	atomic_ullong rdma_conns_refused;
	/* calls refused with NFS4ERR_PERM for an unreserved port on a secure export */
	atomic_ullong insecure_port_refused;
	/* RPC-with-TLS (xprt/tls/gw_tls.h): AUTH_TLS probes answered, handshakes
	 * done, failures by reason (enum gw_tls_fail), bytes of TLS records in and
	 * out; connections in TLS without and with a client certificate (gauges) */
	atomic_ullong tls_probes, tls_handshakes, tls_failures[GW_STATS_TLS_FAILS];
	atomic_ullong tls_bytes_in, tls_bytes_out, tls_conns_tls, tls_conns_mtls;
	/* calls refused with NFS4ERR_WRONGSEC for a transport (none, tls, mtls) the
	 * export's xprtsec= does not admit */
	atomic_ullong xprtsec_refused;
};

/*
 * The configuration in force and what follows from it: never changed once
 * published (gw.h "Configuration"). Taken with gw_snap_get(), dropped
 * with gw_snap_put().
 */
struct gw_snap {
	atomic_uint refs;
	struct gw_config *cfg;
	struct gw_export **xports; /* xports[i] serves cfg->exports[i] */
	int *pseudo_node;	  /* by index in cfg->exports: its pseudo node, -1: the root */
	int *cfg_idx;		  /* by gw_export.slot (< nslots): index in cfg->exports or -1 */
	size_t nslots;
	const uint8_t *fh_key; /* gw_srv.fh_key */
	struct gw_pseudo pseudo[GW_PSEUDO_MAX];
	uint32_t npseudo;
};

struct gw_srv {
	pthread_mutex_t snap_lock;   /* guards the pointer snap (and nothing else) */
	struct gw_snap *snap;	     /* the configuration in force */
	pthread_mutex_t reload_lock; /* one reload at a time; guards xports */
	struct gw_export **xports;   /* every export ever configured, by slot */
	size_t nxports;
	struct chunk_pool *pool;  /* large chunks: records of WRITEs, READ data, replies */
	struct chunk_pool *small; /* small chunks: records of small calls */
	uint8_t write_verf[NFS4_VERIFIER_SIZE]; /* changes on every start */
	uint8_t fh_key[SIPHASH_KEY_BYTES];	/* file handle tags (gw_fh.c), set before exports */
	bool plain_write; /* LACUNA_TEST_PLAIN_WRITE: WRITE with pwrite, not atomic */
	uint64_t boot_ns;
	struct nfs4_state *state;
	struct gw_drc *drc; /* NFSv4.0 duplicate request cache (gw_drc.h), or NULL */
	struct gw_stats stats;
	struct mx_http *metrics; /* its /metrics responder (gw_metrics.c), or NULL */
	atomic_bool stopping;
};

/* Add @n (may be negative) to a counter of gw_srv.stats. */
static inline void gw_stat_add(atomic_ullong *c, long long n)
{
	atomic_fetch_add_explicit(c, (unsigned long long)n, memory_order_relaxed);
}

/* A limit of lacunad.conf(5) was hit: count it in @c and fire limit__hit (docs/tracing.md). */
static inline void gw_limit_hit(atomic_ullong *c, const char *name, uint64_t conn)
{
	gw_stat_add(c, 1);
	LTRACE(lacunad, limit__hit, name, conn);
}

/* ---------------------------------------------------------------- metrics (gw_metrics.c) */

/* Serve @s's /metrics at cfg->metrics, if set (a thread of its own): 0 or -errno, logged. */
int gw_metrics_start(struct gw_srv *s, const struct gw_config *cfg);
void gw_metrics_stop(struct gw_srv *s);

/* ---------------------------------------------------------------- exports (gw_export.c) */

/*
 * Build the snapshot of @cfg (open its new exports, build the pseudo
 * filesystem) and put it in force: 0, the snapshot then owns @cfg, or
 * -errno with nothing changed. Holds nothing COMPOUNDs need while it opens.
 */
int gw_exports_load(struct gw_srv *s, struct gw_config *cfg);
/*
 * gw_config_check_paths() of the exports of @cfg that are not open yet:
 * an export already open is used as it is, and a stat of its path could
 * wait on a lacunafs that hangs.
 */
int gw_exports_check_new(struct gw_srv *s, const struct gw_config *cfg, gw_err_fn *err_fn,
			 void *arg);
/* Drop the snapshot in force (at exit). */
void gw_exports_unload(struct gw_srv *s);
/* The snapshot in force, with a reference: never NULL once exports are loaded. */
struct gw_snap *gw_snap_get(struct gw_srv *s);
void gw_snap_put(struct gw_snap *sn);
/* The export with id @id, NULL if @sn does not serve it. */
struct gw_export *gw_export_find(const struct gw_snap *sn, uint32_t id);
/* The pseudo node @xp is mounted on in @sn (-1: it is the root): false if @sn does not serve it. */
bool gw_export_node(const struct gw_snap *sn, const struct gw_export *xp, int *node);
/*
 * Once a second: notice lacunafs mounts that died and pick up their new
 * mount at the same place. Runs on a thread of its own: a probe may wait
 * on a lacunafs that hangs.
 */
void gw_exports_watch(struct gw_srv *s);
/* Its configuration entry in @sn, NULL when @sn does not serve it. */
const struct gw_export_conf *gw_export_conf_of(const struct gw_snap *sn,
					       const struct gw_export *xp);

/*
 * Count the lacunafs exports served without atomic sparse reads, warn
 * while there are some, and retry their registration with lacunafs
 * (gw_export_atomic.c). Called once a second.
 */
void gw_exports_atomic_check(struct gw_srv *s);
/*
 * Register xp->pool (the server's large pool) as the arena of @xp's lacunafs mount: 0 and a client
 * in *lc; -EFBIG when the pool is larger than that lacunafs takes,
 * -EOPNOTSUPP without a memfd pool, else the errno of the attempt.
 */
int gw_export_register(struct gw_export *xp, struct lacuna_client **lc);

/* ---------------------------------------------------------------- objects (gw_obj.c) */

/* Drop every cached object (at exit). */
void gw_obj_fini(void);

/* ---------------------------------------------------------------- handles (gw_fh.c) */
/*
 * The handle key of state directory @dir (NULL: a random key for this run
 * only) into @key, made at the first start: 0 or -errno, logged.
 */
int gw_fh_key_load(const char *dir, uint8_t *key);
/* A tagged handle: @kind, export id or pseudo node @id, backing handle @type and @n bytes */
void gw_fh_make(const uint8_t *key, struct gw_fh *fh, uint8_t kind, uint32_t id, uint32_t type,
		const void *handle, size_t n);
/*
 * Is @fh a handle of this server: 0 (its tag checks), 1 (a version 1
 * handle, accepted with @legacy), -ESTALE (one refused without it) or
 * -EBADF (malformed, or a wrong tag). Looks at nothing but the bytes.
 */
int gw_fh_check(const uint8_t *key, bool legacy, const uint8_t *fh, size_t len);
/* Where the backing handle of a checked handle starts: GW_FH_HDR or GW_FH_HDR_V1 */
static inline size_t gw_fh_hdr(const uint8_t *fh)
{
	return fh[0] == GW_FH_VERSION_V1 ? GW_FH_HDR_V1 : GW_FH_HDR;
}

/*
 * The object a handle names under the configuration @sn, with a
 * reference: 0, -EBADF (a handle this server cannot have made:
 * NFS4ERR_BADHANDLE), -ESTALE, or another -errno.
 */
int gw_obj_from_fh(const struct gw_snap *sn, const uint8_t *fh, size_t len, struct gw_obj **out);
/* The root of @sn's pseudo filesystem (PUTROOTFH), with a reference. */
struct gw_obj *gw_obj_root(const struct gw_snap *sn);
/*
 * @name in directory @dir, with a reference; crossing from a pseudo
 * directory of @sn into an export. -ENOENT, -ENOTDIR, -EACCES... Runs
 * with the caller's credentials.
 */
int gw_obj_lookup(const struct gw_snap *sn, struct gw_obj *dir, const char *name,
		  struct gw_obj **out);
/* The parent of @dir (LOOKUPP): -ENOENT at the pseudo root. */
int gw_obj_parent(const struct gw_snap *sn, struct gw_obj *dir, struct gw_obj **out);
struct gw_obj *gw_obj_get(struct gw_obj *o);
void gw_obj_put(struct gw_obj *o);
/* Drop @name of @dir from the cache after a REMOVE or RENAME (optional). */
void gw_obj_forget(struct gw_obj *o);
/* Drop the objects nobody used for a few seconds (called once a second). */
void gw_obj_sweep(void);
/* Drop the pseudo directories from the cache (a reload put a new tree in force). */
void gw_obj_flush_pseudo(void);
/* Drop every object of @xp from the cache (its mount was replaced); NULL: the pseudo directories */
void gw_obj_flush_export(const struct gw_export *xp);
/* Keep at most @n objects cached (max_cached_files; those held by others stay). */
void gw_obj_set_max(unsigned int n);
/* Objects cached now. */
size_t gw_obj_cached(void);
/* Drop every cached file object nobody else holds (short of fds); how many. */
unsigned int gw_obj_shed(void);
/* stat of the object (pseudo directories get a synthetic one). */
int gw_obj_stat(struct gw_srv *s, struct gw_obj *o, struct stat *st);
int gw_obj_statfs(struct gw_obj *o, struct statfs *sf);
/* A new fd for I/O on @o, opened with @flags (O_RDONLY, O_RDWR...): caller closes it. */
int gw_obj_open(struct gw_obj *o, int flags);
/* The path "/proc/self/fd/N" of @o's O_PATH fd, for calls that take a path. */
void gw_obj_procpath(const struct gw_obj *o, char buf[32]);
/* Is @o a pseudo directory? */
static inline bool gw_obj_is_pseudo(const struct gw_obj *o)
{
	return o->xp == NULL;
}

/* ---------------------------------------------------------------- fd budget (gw_fd.c) */

/*
 * Run @call, an fd-making call of the NFS path (an fd, or -1 and errno),
 * and once more when the process or the system is out of fds, after
 * dropping the idle cached objects; if it fails for want of fds again,
 * count and log it. errno stays that of the call.
 */
#define GW_FD_RETRY(call)                               \
	__extension__({                                 \
		int gw_fd_ = (call);                    \
		if (gw_fd_ < 0 && gw_fd_shed(errno)) {  \
			gw_fd_ = (call);                \
			if (gw_fd_ < 0)                 \
				gw_fd_exhausted(errno); \
		}                                       \
		gw_fd_;                                 \
	})
/* @err is EMFILE or ENFILE: drop the idle cached objects and say so (errno kept). */
bool gw_fd_shed(int err);
/* After the retry: count (fd_exhausted) and log, if @err is EMFILE or ENFILE (errno kept). */
void gw_fd_exhausted(int err);
/*
 * Calls still short of fds after dropping idle cached files, answered
 * NFS4ERR_DELAY (fd_exhausted in the stats): counted for the process,
 * whose fd table every server in it shares.
 */
unsigned long long gw_fd_exhausted_count(void);
/* Size the object cache from @l and RLIMIT_NOFILE; @log: say the fd budget. */
void gw_fd_budget_apply(const struct gw_limits *l, bool log);

/* ---------------------------------------------------------------- credentials (gw_cred.c) */

/* Run this thread's filesystem calls as @cred (NULL: as root again). */
int gw_cred_enter(const struct gw_cred *cred);
void gw_cred_leave(void);
/* The identity in force on this thread, if not root's. */
bool gw_cred_current(struct gw_cred *out);
/* Are @a and @b the same identity (ids and supplementary groups)? */
bool gw_cred_same(const struct gw_cred *a, const struct gw_cred *b);

/* ---------------------------------------------------------------- errors (nfs4_errno.c) */

/* The one errno -> nfsstat4 table (positive or negative errno). */
uint32_t nfs4_errno(int err);
const char *nfs4_status_name(uint32_t status);

#endif
