/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ONC RPC (RFC 5531) for lacunad: record marking over a byte stream,
 * call header decoding and classification, reply header encoding.
 *
 * Operation
 * ---------
 * Record marking. Over TCP a message is a record sent as fragments,
 * each behind a 4-byte mark: the top bit set on the last fragment, the
 * low 31 bits its length. struct rpc_rec reassembles one record at a
 * time into a buffer the caller provides (a chunk, say), whatever the
 * pieces the stream arrives in: rpc_rec_feed() copies bytes in and stops
 * at the end of a record, and rpc_rec_space()/rpc_rec_commit() let the
 * caller receive straight into the record instead (no copy), one
 * fragment body or one mark at a time. A record longer than the buffer,
 * or made of more than RPC_REC_FRAGS_MAX fragments, is an error after
 * which the stream cannot be resynchronised: the caller drops the
 * connection. An empty record is delivered like any other (the
 * classifier drops it). A whole record stays in the buffer until
 * rpc_rec_next(); since arguments are decoded zero-copy (they point into
 * the record), a caller still working on a record passes a fresh buffer
 * to rpc_rec_next() and frees the old one when the call is done.
 *
 * Classification. rpc_classify() takes one whole record (from the
 * reassembler, or an RPC-over-RDMA message) and the table of programs
 * served, and says what to do with it:
 *
 *   RPC_V_DISPATCH  a call to serve: prog, vers, proc, the credential
 *                   and a cursor on the arguments are in struct rpc_call;
 *   RPC_V_REJECT    answer with rpc_enc_reject(): the error is decided;
 *   RPC_V_REPLY     a reply (a backchannel answer on this connection);
 *                   the cursor is on the reply body after the xid and
 *                   message type;
 *   RPC_V_DROP      nothing can be answered (no xid, unknown message
 *                   type): ignore it.
 *
 * The checks run in wire order, like Linux's svc_process_common(), and
 * the first that fails decides:
 *
 *   - shorter than xid + message type, or a type other than CALL or
 *     REPLY: drop;
 *   - rpcvers != 2: MSG_DENIED RPC_MISMATCH (2, 2), decided before
 *     anything else is read since a later version may lay it out
 *     differently;
 *   - any part of the header (rpcvers, prog, vers, proc, the credential,
 *     the verifier) running past the record: MSG_ACCEPTED GARBAGE_ARGS
 *     (Linux's SVC_GARBAGE);
 *   - credential: a body over RPC_AUTH_BODY_MAX bytes (checked as soon
 *     as its length is read), an AUTH_NONE credential with a body, an
 *     AUTH_SYS body that is not exactly one authsys_parms (machinename
 *     over RPC_AUTH_MACHINENAME_MAX or holding a NUL, more than
 *     RPC_AUTH_SYS_GIDS_MAX gids, bytes left over), or a flavor not
 *     understood (RPCSEC_GSS, AUTH_DH, AUTH_TLS...): AUTH_ERROR
 *     AUTH_BADCRED, which is also what RFC 9289 asks of a server that
 *     does not know AUTH_TLS; AUTH_SHORT: AUTH_REJECTEDCRED, since this
 *     server never issues shorthand credentials the client must start
 *     over with a full one;
 *   - verifier: a body over RPC_AUTH_BODY_MAX bytes, or anything but
 *     AUTH_NONE with an empty body: AUTH_ERROR AUTH_BADVERF;
 *   - program not served: PROG_UNAVAIL; version outside the program's
 *     range: PROG_MISMATCH (lowest, highest served); procedure not in
 *     the program: PROC_UNAVAIL;
 *   - a well-formed flavor the program does not accept (its flavors
 *     mask), except AUTH_NONE on procedure 0 which every program takes:
 *     AUTH_ERROR AUTH_TOOWEAK.
 *
 * Decoding the arguments is the caller's: a failure there is answered
 * with rpc_enc_accepted(GARBAGE_ARGS). rpc_classify() allocates nothing
 * and never fails; what it returns points into the record.
 *
 * Replies. The rpc_enc_* functions append a reply header (xid, REPLY,
 * then the accepted or denied body, with an AUTH_NONE verifier) to a
 * struct xdr_out; for SUCCESS the procedure's results follow. On a
 * stream the caller wraps the reply in one fragment: rpc_rm_begin()
 * reserves the mark before the header, rpc_rm_end() fills it in once the
 * reply is complete. RPC-over-RDMA needs no mark and skips both.
 */
#ifndef LACUNA_RPC_H
#define LACUNA_RPC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "xdr.h"

#define RPC_VERS 2

enum rpc_msg_type { RPC_CALL = 0, RPC_REPLY = 1 };
enum rpc_reply_stat { RPC_MSG_ACCEPTED = 0, RPC_MSG_DENIED = 1 };
enum rpc_accept_stat {
	RPC_SUCCESS = 0,
	RPC_PROG_UNAVAIL = 1,
	RPC_PROG_MISMATCH = 2,
	RPC_PROC_UNAVAIL = 3,
	RPC_GARBAGE_ARGS = 4,
	RPC_SYSTEM_ERR = 5,
};
enum rpc_reject_stat { RPC_MISMATCH = 0, RPC_AUTH_ERROR = 1 };
enum rpc_auth_stat {
	RPC_AUTH_OK = 0,
	RPC_AUTH_BADCRED = 1,
	RPC_AUTH_REJECTEDCRED = 2,
	RPC_AUTH_BADVERF = 3,
	RPC_AUTH_REJECTEDVERF = 4,
	RPC_AUTH_TOOWEAK = 5,
	RPC_AUTH_INVALIDRESP = 6,
	RPC_AUTH_FAILED = 7,
};
enum rpc_auth_flavor {
	RPC_AUTH_NONE = 0,
	RPC_AUTH_SYS = 1,
	RPC_AUTH_SHORT = 2,
	RPC_AUTH_DH = 3,
	RPC_AUTH_GSS = 6,
	RPC_AUTH_TLS = 7,
};
#define RPC_FLAVOR_BIT(f) (1U << (f))

/* credential and verifier bodies: opaque<MAX_AUTH_BYTES> */
#define RPC_AUTH_BODY_MAX 400
/* authsys_parms: string machinename<255>, unsigned int gids<16> */
#define RPC_AUTH_MACHINENAME_MAX 255
#define RPC_AUTH_SYS_GIDS_MAX 16

/* record marking */
#define RPC_REC_LAST 0x80000000U
#define RPC_REC_FRAG_LEN_MAX 0x7fffffffU
/* fragments in one record (libtirpc sends ~9000-byte fragments) */
#define RPC_REC_FRAGS_MAX 1024

struct rpc_rec {
	uint8_t *buf;	    /* record being assembled */
	size_t max;	    /* size of buf: longest record accepted */
	size_t len;	    /* bytes of it assembled */
	uint32_t frag_left; /* bytes left in the current fragment's body */
	uint32_t nfrags;    /* fragments begun in this record */
	uint8_t mark[4];    /* fragment mark being received */
	uint8_t mark_got;   /* bytes of it received */
	bool last;	    /* the current fragment is the last one */
	bool ready;	    /* a whole record is in buf */
	int err;	    /* sticky: the stream is lost */
};

/* Reassemble records of at most @max bytes into @buf. */
void rpc_rec_init(struct rpc_rec *r, void *buf, size_t max);
/*
 * Consume up to @len bytes of the stream. Returns the bytes consumed
 * (less than @len when a record completed: the rest belongs to the
 * next), -EMSGSIZE when the record would exceed max, -EPROTO past
 * RPC_REC_FRAGS_MAX fragments. After an error the stream is lost.
 */
ssize_t rpc_rec_feed(struct rpc_rec *r, const void *data, size_t len);
/*
 * Where the next bytes of the stream may be received directly: *p and
 * the count that may go there (a fragment mark or part of a body; 0 when
 * a record is ready). Then rpc_rec_commit() the bytes received.
 */
size_t rpc_rec_space(struct rpc_rec *r, void **p);
int rpc_rec_commit(struct rpc_rec *r, size_t n);
static inline bool rpc_rec_ready(const struct rpc_rec *r)
{
	return r->ready;
}

/* Start the next record, in @buf (NULL: the same buffer) of @max bytes. */
void rpc_rec_next(struct rpc_rec *r, void *buf, size_t max);

/* One served program: versions vers_low..vers_high, procedures 0..nprocs-1. */
struct rpc_program {
	uint32_t prog;
	uint32_t vers_low, vers_high;
	uint32_t nprocs;
	uint32_t flavors; /* RPC_FLAVOR_BIT()s accepted */
};

struct rpc_auth_sys {
	uint32_t stamp;
	const char *machinename; /* into the record, not NUL-terminated */
	uint32_t machinename_len;
	uint32_t uid, gid;
	uint32_t ngids;
	uint32_t gids[RPC_AUTH_SYS_GIDS_MAX];
};

/* The error to answer a RPC_V_REJECT with. */
struct rpc_error {
	uint32_t reply_stat; /* RPC_MSG_ACCEPTED or RPC_MSG_DENIED */
	uint32_t stat;	     /* accept_stat or reject_stat */
	uint32_t auth_stat;  /* for RPC_AUTH_ERROR */
	uint32_t low, high;  /* for PROG_MISMATCH and RPC_MISMATCH */
};

struct rpc_call {
	uint32_t xid;
	uint32_t rpcvers, prog, vers, proc;
	uint32_t cred_flavor;
	struct rpc_auth_sys sys; /* when cred_flavor is RPC_AUTH_SYS */
	uint32_t verf_flavor;
	const uint8_t *verf;
	uint32_t verf_len;
	const struct rpc_program *program; /* the entry matched, or NULL */
	struct xdr_in args;		   /* the arguments (or the reply body) */
	struct rpc_error err;		   /* for RPC_V_REJECT */
};

enum rpc_verdict {
	RPC_V_DISPATCH = 1,
	RPC_V_REJECT,
	RPC_V_REPLY,
	RPC_V_DROP,
};

enum rpc_verdict rpc_classify(const void *rec, size_t len, const struct rpc_program *progs,
			      size_t nprogs, struct rpc_call *call);

/* Reply headers (AUTH_NONE verifier). 0 or the xdr_out error. */
int rpc_enc_accepted(struct xdr_out *out, uint32_t xid, uint32_t accept_stat);
int rpc_enc_prog_mismatch(struct xdr_out *out, uint32_t xid, uint32_t low, uint32_t high);
int rpc_enc_rpc_mismatch(struct xdr_out *out, uint32_t xid, uint32_t low, uint32_t high);
int rpc_enc_auth_error(struct xdr_out *out, uint32_t xid, uint32_t auth_stat);
/* The reply a RPC_V_REJECT verdict decided. */
int rpc_enc_reject(struct xdr_out *out, const struct rpc_call *call);

/*
 * A call header with an AUTH_NONE verifier and an AUTH_NONE (@sys NULL)
 * or AUTH_SYS credential; the arguments follow. For the backchannel.
 */
int rpc_enc_call(struct xdr_out *out, uint32_t xid, uint32_t prog, uint32_t vers, uint32_t proc,
		 const struct rpc_auth_sys *sys);

/* Record mark of a one-fragment message: reserve before, fill after. */
int rpc_rm_begin(struct xdr_out *out, struct xdr_mark *m);
int rpc_rm_end(struct xdr_out *out, const struct xdr_mark *m);

#endif
