/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * lt_nfs_torture's shared state and declarations: the file's regions and
 * their history, the connections, readers and writers, the options and
 * counters of a run, and what each part offers the others. The tool and
 * its Operation essay start in lt_nfs_torture.c.
 */
#ifndef LT_NFS_TORTURE_H
#define LT_NFS_TORTURE_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lt_tset.h"

#define LT_PAGE UINT64_C(4096)
#define LT_MIB (UINT64_C(1) << 20)
#define LT_COUNT_MAX LT_MIB		  /* READ_PLUS counts asked */
#define LT_REPLY_MAX (2 * LT_MIB + 65536) /* ca_maxresponsesize asked */
#define LT_SEGS_MAX 8192
#define LT_FH_MAX 128
#define LT_WHOLE UINT32_MAX /* lt_hent.bufoff of a change applied whole */

/* NFSv4 numbers (RFC 7862) the client shares with the writers and checks */
enum {
	CONTENT_DATA = 0,
	CONTENT_HOLE = 1,
	UNSTABLE4 = 0,
	FILE_SYNC4 = 2,
};

enum lt_viol {
	LT_V_STRUCT,   /* malformed reply */
	LT_V_ERROR,    /* the READ_PLUS failed */
	LT_V_TORN,     /* a region in a state it never had */
	LT_V_STALE,    /* a region in a state outside the reply's time window */
	LT_V_SNAPSHOT, /* no single moment explains the whole reply */
	LT_V_SIZE,     /* a size never held within the time window */
	LT_V_NR,
};

extern const char *const lt_viol_names[LT_V_NR];

/* The offsets in a page that writes through the mount take their data from */
#define LT_NBUFOFFS 6u
extern const uint32_t lt_bufoffs[LT_NBUFOFFS];

struct lt_hent {
	uint32_t seq;
	uint32_t gen; /* 0: all zeros */
	uint64_t keep;
	uint32_t bufoff; /* a write(2) through the mount: its buffer's offset in a page; else
			    LT_WHOLE */
	uint32_t pad;
};

struct lt_region {
	uint64_t start, len;
	bool gap;   /* never written */
	bool probe; /* one of the sizes that matter, written more often */
	struct lt_hent *h;
	size_t n, cap;
};

struct lt_sent {
	uint32_t seq;
	uint64_t size;
};

struct lt_seg {
	uint32_t kind;
	uint64_t off, len;
	const uint8_t *data;
};

/* One TCP connection with its NFSv4.2 session (one slot) and the file's handle */
struct lt_conn {
	unsigned int id;
	int sock;
	uint32_t xid, seq;
	uint64_t clientid;
	uint8_t sessionid[16];
	uint8_t fh[LT_FH_MAX];
	uint32_t fhlen;
	uint32_t maxreq; /* ca_maxrequestsize granted */
	/* what the next call carries ahead of its ops (writers vary it) */
	uint32_t taglen, machlen, ngids;
	uint8_t *rbuf; /* one reply record */
	size_t rcap, rlen;
};

struct lt_reader {
	struct lt_conn c;
	uint64_t rng;
	uint8_t *view; /* the reply's bytes, holes as zeros */
	struct lt_seg segs[LT_SEGS_MAX];
	unsigned int nsegs;
	bool eof;
	uint32_t status;
	/* the request being checked */
	uint64_t off, count;
	uint32_t s0, s1;
	struct lt_ivl t[LT_TSET_MAX], u[LT_TSET_MAX], tmp[LT_TSET_MAX];
	unsigned int nt, nu;
};

struct lt_writer {
	unsigned int id;
	uint64_t rng;
	uint8_t *buf; /* page aligned, a region and a page */
	struct lt_conn c;
	uint8_t open_sid[16];
	bool anon; /* the anonymous stateid for this call */
};

enum lt_op {
	LT_OP_WRITE, /* pwrite through the mount */
	LT_OP_PUNCH,
	LT_OP_ZERO,
	LT_OP_TRUNC,
	LT_OP_NFS_SYNC,	    /* WRITE FILE_SYNC4 */
	LT_OP_NFS_UNSTABLE, /* WRITE UNSTABLE4 */
	LT_OP_NFS_DEALLOC,  /* DEALLOCATE */
	LT_OP_NR,
};

/* The run: one for the whole process, defined in lt_nfs_torture.c */
struct lt_state {
	/* options */
	uint64_t seed;
	unsigned int seconds, timeout, nwriters, nreaders, nbig, nsmall;
	uint64_t min_replies, max_replies, stop_after;
	bool expect_race, nfs_writes;
	int expect_kind; /* -1: any race */
	const char *path, *name, *host;
	unsigned int port;

	/* the mount's write units, the server's maxwrite */
	uint64_t unit, unit_al, maxwrite;

	/* layout */
	struct lt_region *rg;
	unsigned int nrg;
	uint64_t fsize, cut_from, maxlen;
	unsigned int *writable, *probes;
	unsigned int nwritable, nprobes;
	uint64_t probe_bytes;

	int wfd;
	/*
	 * Lock order: op_lock, then hist_lock. op_lock is held across each
	 * changing call and orders them; hist_lock guards the logs: written
	 * by a writer logging a call, read by the readers while they check a
	 * reply, side by side (it prefers writers, so that checks do not hold
	 * the changes back more than one check at a time).
	 */
	pthread_mutex_t op_lock;
	pthread_rwlock_t hist_lock;
	struct lt_sent *sz;
	size_t nsz, capsz;
	uint64_t cur_size;
	uint32_t started, done, next_gen; /* atomics */
	bool stop;			  /* atomic */

	/* atomics */
	uint64_t replies, eofs, holes, data_bytes, past_eof, split_views;
	uint64_t ops[LT_OP_NR];
	uint64_t by_bufoff[LT_NBUFOFFS], in_pieces, over_unit;
	uint64_t commits, anon_calls, open_calls, nfs_over_unit;
	uint32_t data_off_min, data_off_max; /* under op_lock */
	uint64_t viol[LT_V_NR];
	uint64_t reported;
	pthread_mutex_t out_lock;
};

extern struct lt_state lt;

#define LT_LOAD(x) __atomic_load_n(&(x), __ATOMIC_SEQ_CST)
#define LT_STORE(x, v) __atomic_store_n(&(x), (v), __ATOMIC_SEQ_CST)
#define LT_ADD(x, v) __atomic_add_fetch(&(x), (v), __ATOMIC_SEQ_CST)

/* xorshift64*: each thread draws from its own state */
static inline uint64_t lt_rnd(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545F4914F6CDD1DULL;
}

/* in [lo, hi] */
static inline uint64_t lt_rnd_in(uint64_t *s, uint64_t lo, uint64_t hi)
{
	return lo + lt_rnd(s) % (hi - lo + 1);
}

/* lt_nfs_torture.c */
void lt_die(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
void *lt_xrealloc(void *p, size_t n);
unsigned int lt_region_at(uint64_t x);

/* lt_nfs_torture_nfs.c: connections and sessions */
void lt_conn_init(struct lt_conn *c, unsigned int id, size_t rcap);
void lt_nfs_setup(struct lt_conn *c, uint32_t maxreq);
void lt_conn_close(struct lt_conn *c);
uint64_t lt_nfs_maxwrite(struct lt_conn *c);

/* lt_nfs_torture_nfs.c: a writer's calls */
void lt_nfs_open(struct lt_writer *w);
void lt_nfs_close(struct lt_writer *w);
void lt_vary_header(struct lt_writer *w);
void lt_nfs_write(struct lt_writer *w, const struct lt_region *r, const uint8_t *data,
		  uint32_t stable, uint8_t *verf);
void lt_nfs_commit(struct lt_writer *w, const struct lt_region *r, const uint8_t *verf);
void lt_nfs_deallocate(struct lt_writer *w, const struct lt_region *r);

/* lt_nfs_torture_nfs.c: a reader's call */
void lt_read_plus(struct lt_reader *rd);

/* lt_nfs_torture_check.c */
void lt_pat_fill(uint32_t gen, uint64_t x, uint8_t *p, uint64_t n);
uint64_t lt_piece_len(uint64_t left, uint64_t o);
bool lt_in_pieces(uint64_t len, uint32_t o);
void lt_check_reply(struct lt_reader *rd);

/* lt_nfs_torture_write.c */
uint8_t *lt_alloc_aligned(size_t len);
void lt_setup_file(void);
void *lt_writer_thread(void *arg);

#endif
