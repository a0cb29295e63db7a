/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Stable client records and the grace period (RFC 7530 §9.6.2, RFC 8881
 * §8.4.2): what lets clients reclaim their opens and locks after lacunad
 * restarts.
 *
 * Operation
 * ---------
 * Records. Before a client is granted its first OPEN or LOCK in a run of
 * the server, a record naming it (its nfs_client_id4 / client_owner4
 * string, verifier and principal) is written to the state directory and
 * fsync'd (file and directory), through a temporary file renamed into
 * place, so a crash leaves either the old record or the new one. Each
 * record ends with a CRC-32 of its bytes: a torn or corrupt file is
 * reported, renamed to NAME.corrupt and never trusted. A client's record
 * is removed when its lease expires or it is destroyed (DESTROY_CLIENTID,
 * or a 4.0 client that comes back with a new verifier, replaced).
 * Removals run in the housekeeping tick, never under the state lock, and
 * only when the record on disk still belongs to the client incarnation
 * that went away.
 *
 * Grace. At start every valid record names a client that may reclaim.
 * When there is at least one and `grace` is on, the server is in grace
 * for one lease time, or until every one of those clients has finished
 * reclaiming (4.1: RECLAIM_COMPLETE; 4.0: its first non-reclaim OPEN or
 * LOCK), whichever comes first. In grace, reclaims (OPEN CLAIM_PREVIOUS,
 * LOCK with reclaim) from recorded clients are granted and non-reclaim
 * OPEN, LOCK, LOCKT, REMOVE, RENAME and modifying I/O without an open
 * (special stateids) answer NFS4ERR_GRACE. A reclaim outside grace or
 * after the client's RECLAIM_COMPLETE is NO_GRACE; one from a client
 * without a record is RECLAIM_BAD. When grace ends, the records of
 * clients that did not come back are removed.
 *
 * Locking. struct nfs4_recov.lock guards the table and the grace state
 * and is a leaf: it may be taken under the state lock, and nothing
 * blocks while it is held. struct nfs4_recov.io serializes the writes
 * and removals of record files; it is never taken under the state lock
 * and is taken before .lock. One lacunad owns a state directory at a
 * time (flock on its "lock" file).
 */
#ifndef LACUNA_NFS4_RECOV_H
#define LACUNA_NFS4_RECOV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nfs4.h"

struct nfs4_recov;
struct nfs4_client;

/* Grace and record counters for the log and the stats file */
struct nfs4_recov_stats {
	bool in_grace;
	unsigned int to_reclaim, reclaimed; /* clients recorded at start, done reclaiming */
	unsigned long long reclaimed_opens, reclaimed_locks, grace_refused;
	unsigned int records;
};

/*
 * Open (making it, mode 0700) and lock @dir, load its records and start
 * the grace period when @grace and there is a client to reclaim.
 * Returns 0 or a negative errno, reported.
 */
int nfs4_recov_open(const char *dir, bool grace, unsigned int lease, uint32_t boot,
		    struct nfs4_recov **out);
void nfs4_recov_close(struct nfs4_recov *r);

/*
 * lacunad serves on every transport now: the grace period's lease time
 * counts from here, not from nfs4_recov_open(), so that a slow start (an
 * RDMA pool registered for many seconds) does not eat into it. Until
 * then grace does not end by time.
 */
void nfs4_recov_serving(struct nfs4_recov *r);

/* Is the server in grace now? (ends it when its time is up) */
bool nfs4_recov_in_grace(struct nfs4_recov *r);

/*
 * May @clp be granted new state (@reclaim false) or reclaim old state
 * (@reclaim true) now? NFS4_OK, GRACE, NO_GRACE or RECLAIM_BAD. A 4.0
 * client's first non-reclaim request marks its reclaim done. No I/O:
 * may be called under the state lock.
 */
uint32_t nfs4_recov_check(struct nfs4_recov *r, const struct nfs4_client *clp, bool reclaim);

/*
 * Make sure @clp's record is on disk (written and fsync'd once per
 * client incarnation). Never call it under the state lock. 0 or -errno.
 */
int nfs4_recov_record(struct nfs4_recov *r, const struct nfs4_client *clp);

/* A 4.1 client sent RECLAIM_COMPLETE (may end grace). */
void nfs4_recov_reclaim_complete(struct nfs4_recov *r, const struct nfs4_client *clp);

/* A reclaim was granted (counted) */
void nfs4_recov_reclaimed(struct nfs4_recov *r, bool lock);

/*
 * @clp's state is gone (lease expired, destroyed, replaced): its record
 * is removed by the next tick. No I/O: called under the state lock.
 */
void nfs4_recov_forget(struct nfs4_recov *r, const struct nfs4_client *clp);

/* Housekeeping, about once a second: grace's end, removals. */
void nfs4_recov_tick(struct nfs4_recov *r);

void nfs4_recov_get_stats(struct nfs4_recov *r, struct nfs4_recov_stats *st);

/* ---------------------------------------------------------------- record format (unit tested) */

#define NFS4_REC_MAGIC "LCNCLNT1"
#define NFS4_REC_HDR 52 /* bytes before the name */
#define NFS4_REC_MAX (NFS4_REC_HDR + NFS4_OPAQUE_LIMIT + 4)

struct nfs4_rec {
	uint32_t minor;
	uint64_t clientid;
	uint32_t boot;
	uint32_t flavor, uid, gid;
	uint8_t verf[NFS4_VERIFIER_SIZE];
	const uint8_t *name;
	uint32_t name_len;
};

uint32_t nfs4_rec_crc32(const uint8_t *p, size_t n);
/* Encode @rec into @buf (NFS4_REC_MAX bytes); returns its length */
size_t nfs4_rec_encode(const struct nfs4_rec *rec, uint8_t *buf);
/*
 * Decode a record file's bytes; rec->name points into @buf. 0, or
 * -EBADMSG with a reason in *why (short, bad magic or version, bad
 * length, bad checksum).
 */
int nfs4_rec_decode(const uint8_t *buf, size_t len, struct nfs4_rec *rec, const char **why);

#endif
