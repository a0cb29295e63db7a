/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * nfsc's insides, shared by nfs_client.c (calls, replies, session) and
 * nfs_client_io.c (open, I/O, walks): the client's state, the bounded
 * call encoder and the reply helpers. Not for other users.
 */
#ifndef LACUNA_NFS_CLIENT_PRIV_H
#define LACUNA_NFS_CLIENT_PRIV_H

#include "nfs4.h"
#include "nfs_client.h"
#include "rpc.h"

#define NFSC_CB_PROGRAM 0x40000000
#define NFSC_WANT_NO_DELEG 0x0400 /* OPEN4_SHARE_ACCESS_WANT_NO_DELEG */
#define NFSC_MAXOPS 64		  /* ops per COMPOUND asked for */
#define NFSC_CACHED_MAX 4096	  /* ca_maxresponsesize_cached asked for */
#define NFSC_DELAY_TRIES 200	  /* NFS4ERR_DELAY in a row on I/O calls */
#define NFSC_MACHINE_MAX 64	  /* AUTH_SYS machinename sent */
#define NFSC_OWNER_MAX 128	  /* client and open owners sent */

struct nfsc_enc {
	uint8_t buf[NFSC_CALL_MAX];
	size_t len;
	size_t nops_at; /* where the op count goes */
	uint32_t nops;
	uint32_t ddp_read; /* a READ of this count: its data may be placed directly */
	bool over; /* ran out of room: the call is not sent */
};

struct nfsc_reply {
	struct xdr_in x;
	uint32_t xid, status, nres;
};

struct nfsc_slot {
	uint32_t seq, xid;
	bool busy;
	struct nfsc_io *io;
};

struct nfsc {
	struct nfsc_xprt *t;
	bool dead; /* the transport failed: nothing more is sent */
	uint32_t xid, minor;
	uint64_t clientid;
	uint32_t cs_seq;
	bool have_client, have_session;
	uint8_t sessionid[NFSC_SESSIONID_SIZE];
	unsigned int nslots, inflight;
	struct nfsc_slot slot[NFSC_SLOTS_MAX];
	uint32_t maxresp, maxops, io_size;
	struct nfsc_file *file; /* open: nfsc_destroy() closes it */
	struct nfsc_seg *segs;	/* NFSC_RP_SEGS_MAX, results of the last reply */
	uint32_t status;
	char err[NFSC_ERR_MAX];
	void (*note)(void *arg, const char *msg);
	void *note_arg;
	char machine[NFSC_MACHINE_MAX + 1];
	uint32_t uid, gid, ngids, gids[RPC_AUTH_SYS_GIDS_MAX];
	struct nfsc_enc enc;
};

const char *nfsc_op_name(uint32_t op);
/* Set the error message; returns rc. */
int nfsc_fail(struct nfsc *c, int rc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* "WHAT: NFS4ERR_..." with c->status = st; returns -EREMOTEIO. */
int nfsc_fail_stat(struct nfsc *c, uint32_t st, const char *what);
/* "NFS4ERR_ACCESS (Permission denied)", or the bare name */
const char *nfsc_stat_text(uint32_t st, char *buf, size_t len);
void nfsc_note(struct nfsc *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Encoding: errors are sticky in e->over, checked by nfsc_call_send(). */
void nfsc_put32(struct nfsc_enc *e, uint32_t v);
void nfsc_put64(struct nfsc_enc *e, uint64_t v);
void nfsc_put_fixed(struct nfsc_enc *e, const void *p, size_t n);
void nfsc_put_opaque(struct nfsc_enc *e, const void *p, uint32_t n);
void nfsc_put_op(struct nfsc_enc *e, uint32_t op);
/* RPC and COMPOUND headers of a new call (c->enc) */
struct nfsc_enc *nfsc_call_begin(struct nfsc *c, uint32_t *xid);
/* the same followed by SEQUENCE on slot 0 */
struct nfsc_enc *nfsc_begin_seq(struct nfsc *c, uint32_t *xid);
void nfsc_op_sequence(struct nfsc *c, struct nfsc_enc *e, unsigned int slot);
void nfsc_op_putfh(struct nfsc_enc *e, const struct nfsc_file *f);
int nfsc_call_send(struct nfsc *c, struct nfsc_enc *e);

/* Replies */
int nfsc_reply_recv(struct nfsc *c, struct nfsc_reply *r);
/* send, then receive its reply: nothing else may be in flight */
int nfsc_call_sync(struct nfsc *c, struct nfsc_enc *e, uint32_t xid, struct nfsc_reply *r);
int nfsc_reply_op(struct nfsc *c, struct nfsc_reply *r, uint32_t op, uint32_t *st);
int nfsc_reply_ok(struct nfsc *c, struct nfsc_reply *r, uint32_t op);
int nfsc_truncated(struct nfsc *c, uint32_t op);
int nfsc_dec_sequence(struct nfsc *c, struct nfsc_reply *r, unsigned int slot);
/* bitmap4 of at most NFSC_BITMAP_MAX words into w (NULL: skipped) */
int nfsc_dec_bitmap(struct xdr_in *x, uint32_t *w, uint32_t *n);
int nfsc_skip_opaque(struct xdr_in *x, uint32_t max);
/* Wait out the calls in flight after an error, keeping its message. */
void nfsc_drain(struct nfsc *c);

#endif
