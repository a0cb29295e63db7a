/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The COMPOUND engine (RFC 7530 §15.2, RFC 8881 §18.46, RFC 7862) and the
 * interface every operation implements.
 *
 * Operation
 * ---------
 * nfs4_compound_run() decodes the COMPOUND header (tag, minor version,
 * op count), then for each operation in turn: reads the opcode (out of
 * range: OP_ILLEGAL, which ends the COMPOUND), checks the op's flags
 * against the state of the COMPOUND (current file handle present, the
 * export writable, 4.1 session rules: SEQUENCE first, sessionless ops
 * alone), zeroes an argument buffer of NFS4_ARGS_MAX bytes, decodes the
 * op's arguments into it (a failure is NFS4ERR_BADXDR and ends the
 * COMPOUND), runs the op, and writes opcode and status before the
 * results the op encoded. Processing stops at the first status other
 * than NFS4_OK, as the RFCs require.
 *
 * An op's handler encodes its results (resok4) into c->out after the
 * status word and returns the status. When it returns an error its
 * results are rolled back, unless it set c->keep_body (LOCK4denied,
 * SETCLIENTID's clientaddr on CLID_INUSE...).
 *
 * Arguments are decoded zero-copy: names, opaques and WRITE data point
 * into the received record, which lives until the reply is sent.
 *
 * The reply is bounded by c->resp_max (the session's ca_maxresponsesize,
 * its ca_maxresponsesize_cached when SEQUENCE asks for the reply to be
 * cached, or the transport's maximum for 4.0): before running an op the
 * engine checks that its reply_max still fits (else NFS4ERR_REP_TOO_BIG,
 * or REP_TOO_BIG_TO_CACHE under sa_cachethis, 4.0: NFS4ERR_RESOURCE);
 * READ, READDIR and other variable ops bound
 * themselves with nfs4_reply_room().
 *
 * Sessions (4.1+): SEQUENCE sets c->who.ses/c->slot; on a retransmission it
 * sets c->replay and the engine answers with the slot's cached reply
 * bytes instead. Whatever happens, the engine calls
 * nfs4_sequence_done() once at the end when c->slot is set, which caches
 * the reply and frees the slot.
 *
 * Configuration: the engine takes the snapshot in force (gw.h
 * "Configuration") into c->snap before the first op and drops it after
 * the last; every op reads the configuration, the exports and the pseudo
 * filesystem through it (nfs4_cfg()). No lock is held across the
 * COMPOUND: a reload goes ahead however long an op (a COMMIT's fsync, a
 * COPY, a WRITE to a lacunafs that hangs) takes, and the ops already
 * running finish under the configuration they began with.
 *
 * State: the state layer (nfs4_state.h) knows nothing of the COMPOUND.
 * The engine fills c->who (struct nfs4_caller: the server, the
 * configuration, the caller's address, principal and credentials, the
 * minor version) once, after the COMPOUND header, and the ops pass it
 * down; the replies the state layer keeps (a slot's, a 4.0 owner's last
 * op's) are read from c->out and sent back by the functions below.
 */
#ifndef LACUNA_NFS4_COMPOUND_H
#define LACUNA_NFS4_COMPOUND_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include "gw.h"
#include "gw_xprtsec.h"
#include "nfs4_caller.h"
#include "rpc.h"
#include "xdr.h"

#define NFS4_ARGS_MAX 2048 /* bytes of one op's decoded arguments */

struct nfs4_owner;
struct nfs4_slot;

struct nfs4_bitmap {
	uint32_t w[NFS4_BITMAP_MAX];
};

static inline bool nfs4_bm_isset(const struct nfs4_bitmap *bm, unsigned int a)
{
	return a < 32 * NFS4_BITMAP_MAX && (bm->w[a / 32] >> (a % 32) & 1);
}

static inline void nfs4_bm_set(struct nfs4_bitmap *bm, unsigned int a)
{
	if (a < 32 * NFS4_BITMAP_MAX)
		bm->w[a / 32] |= 1U << (a % 32);
}

/* What the transport tells the engine about the connection a call came on. */
struct gw_conn_info {
	uint64_t id; /* unique for the life of the server */
	struct sockaddr_storage peer;
	socklen_t peer_len;
	bool rdma;
	/* from a reserved source port (below 1024), or over RDMA: what exports(5)'s
	 * secure asks of AUTH_SYS and AUTH_NONE callers (nfs4_check_port) */
	bool resvport;
	/* GW_XPRTSEC_NONE, _TLS or _MTLS (gw_xprtsec.h), what an export's xprtsec=
	 * admits (nfs4_check_xprtsec); 0 counts as NONE */
	uint8_t xprtsec;
	/* GW_XPRTSEC_MTLS: the client certificate's identity (subject or SAN), for
	 * logging; "" otherwise */
	char tls_peer[128];
};

/* One COMPOUND being processed. */
struct nfs4_compound {
	struct gw_srv *srv;
	/* the configuration this COMPOUND runs under: taken at its start, dropped at its end */
	struct gw_snap *snap;
	const struct gw_conn_info *conn;
	const struct rpc_call *call;
	uint32_t minor;
	struct xdr_out *out;
	size_t resp_max; /* bound on the whole reply's length (out->len) */
	size_t req_len;  /* bytes of the call record (ca_maxrequestsize) */

	/* credentials as sent (AUTH_SYS or nobody), and after the export's squashing */
	struct gw_cred wire_cred;
	struct gw_cred cred;
	uint32_t flavor;
	const struct gw_client *rule; /* export rule admitting this client to cfh, or NULL */

	struct gw_obj *cfh, *sfh; /* current and saved file handles (references held) */
	struct nfs4_stateid cur_sid, saved_sid; /* 4.1 current stateid */
	bool cur_sid_set, saved_sid_set;

	/* the caller, for the state layer (nfs4_set_caller); its clp and ses: SEQUENCE's */
	struct nfs4_caller who;
	/* 4.1 session: set by SEQUENCE */
	struct nfs4_slot *slot;
	bool cachethis;
	bool drc; /* 4.0: an op that changes something ran (gw_drc.h) */
	const uint8_t *replay; /* cached reply to send instead (set by SEQUENCE) */
	size_t replay_len;

	uint32_t opidx, nops;
	uint32_t status; /* of the COMPOUND, once run (not for a replay) */
	uint32_t opnum; /* op being run */
	bool keep_body; /* keep the results an op encoded with an error status */
};

/* The configuration @c runs under (NULL only for a COMPOUND made without the engine) */
static inline const struct gw_config *nfs4_cfg(const struct nfs4_compound *c)
{
	return c->snap ? c->snap->cfg : NULL;
}

/* Op flags */
#define OPF_CFH 0x01	    /* needs a current file handle */
#define OPF_MODIFIES 0x02   /* changes the filesystem: NFS4ERR_ROFS on a ro export */
#define OPF_NOSESSION 0x04  /* 4.1: may come without SEQUENCE (must be the only op, except CREATE_SESSION...) */
#define OPF_SOLO 0x08	    /* 4.1: when first without SEQUENCE, must be the only op */
#define OPF_SETS_CFH 0x10   /* replaces the current file handle */
#define OPF_PSEUDO_OK 0x20  /* allowed on a pseudo directory (else by the op itself) */

typedef int nfs4_dec_fn(struct xdr_in *x, void *args);
typedef uint32_t nfs4_run_fn(struct nfs4_compound *c, void *args);

struct nfs4_op_desc {
	const char *name;
	nfs4_dec_fn *dec; /* NULL: no arguments */
	nfs4_run_fn *run;
	uint32_t flags;
	uint32_t reply_max; /* bytes of results beyond opcode and status */
	uint8_t minor_min;  /* first minor version that has the op */
	uint8_t minor_max;  /* last one (4.0-only ops: 0) */
};

extern const struct nfs4_op_desc nfs4_ops[NFS4_OP_LAST + 1];

/*
 * Process the COMPOUND whose arguments are at @args, encoding the reply
 * body (after the RPC reply header) into c->out. Returns 0, or -EBADMSG
 * when the COMPOUND header itself cannot be decoded (the caller answers
 * GARBAGE_ARGS), or the xdr_out error.
 */
int nfs4_compound_run(struct nfs4_compound *c, struct xdr_in *args);

/*
 * The status for a reply that could not be encoded (@err from xdr_out):
 * too big for the session (4.1+: REP_TOO_BIG) or the transport (4.0:
 * RESOURCE), or the pool is exhausted for now (DELAY).
 */
uint32_t nfs4_enc_status(const struct nfs4_compound *c, int err);

/* Bytes an op may still add to the reply. */
size_t nfs4_reply_room(const struct nfs4_compound *c);

/*
 * Fill c->who from the call (srv, conn, minor, flavor and credentials set):
 * once per COMPOUND, by the engine after the header.
 */
void nfs4_set_caller(struct nfs4_compound *c);

/*
 * Called once by the engine at the end of a COMPOUND that had a slot:
 * caches the reply (bytes from @res_off to the end of c->out) when it
 * was not a replay, and releases the slot (nfs4_slot_done()).
 */
void nfs4_sequence_done(struct nfs4_compound *c, size_t res_off, uint32_t status);

/*
 * After a 4.0 seqid op of @oo ran with @status (its results encoded in
 * c->out from @from on): the owner's seqid becomes @seqid and the result
 * is kept for a replay (nfs4_owner_seqid_done()). @fh: the current FH to
 * restore on a replay (OPEN), or NULL.
 */
void nfs4_seqid_done(struct nfs4_compound *c, struct nfs4_owner *oo, uint32_t seqid,
		     uint32_t status, const struct xdr_pos *from, const struct gw_fh *fh);
/*
 * A replay of @oo's last op: encode its cached results and return its
 * status (copies what it needs: call with the state lock held; *fh set
 * when the current FH must be restored).
 */
uint32_t nfs4_seqid_replay(struct nfs4_compound *c, const struct nfs4_owner *oo, struct gw_fh *fh,
			   bool *has_fh);

/*
 * nfs4_state_io_fd() for the caller of @c, @sid the 4.1 current stateid
 * when it says so (nfs4_resolve_current_sid()).
 */
uint32_t nfs4_io_fd(struct nfs4_compound *c, const struct nfs4_stateid *sid, struct gw_obj *o,
		    bool write, int *fd, bool *fd_owned);

/* Replace the current file handle (takes over the reference of @o). */
void nfs4_set_cfh(struct nfs4_compound *c, struct gw_obj *o);

/* Apply the export rule of c->cfh to the caller: credentials, squash. */
uint32_t nfs4_check_export(struct nfs4_compound *c, struct gw_obj *o);

/*
 * NFS4ERR_PERM when the rule admitting the client to @o is secure and the
 * call came from an unreserved port with AUTH_SYS or AUTH_NONE (counted
 * and logged); else NFS4_OK, also when no rule admits the client (that is
 * nfs4_check_export's to say). Run by the ops that put a file handle.
 */
uint32_t nfs4_check_port(struct nfs4_compound *c, const struct gw_obj *o);

/* ---------------------------------------------------------------- shared XDR pieces */

int nfs4_dec_stateid(struct xdr_in *x, struct nfs4_stateid *sid);
int nfs4_enc_stateid(struct xdr_out *out, const struct nfs4_stateid *sid);
/* bitmap4: words past NFS4_BITMAP_MAX must be zero (up to NFS4_BITMAP_WIRE_MAX) */
int nfs4_dec_bitmap(struct xdr_in *x, struct nfs4_bitmap *bm);
int nfs4_enc_bitmap(struct xdr_out *out, const struct nfs4_bitmap *bm);
/* component4: a name, NUL-terminated into @name; returns an nfsstat4 (INVAL, NAMETOOLONG, BADNAME...) or NFS4_OK, or -EBADMSG */
int nfs4_dec_component(struct xdr_in *x, char name[NFS4_NAME_MAX + 1], uint32_t *status);
/* change_info4 */
int nfs4_enc_change_info(struct xdr_out *out, bool atomic, uint64_t before, uint64_t after);
/* The change attribute of a file (ctime in ns; i_version is not visible here). */
uint64_t nfs4_change_of(const struct stat *st);

/*
 * NFS4_OK for a regular file, else what READ, WRITE and the 4.2 I/O ops
 * answer: ISDIR; SYMLINK or WRONG_TYPE from 4.1 on; INVAL in 4.0.
 */
uint32_t nfs4_regular_file(const struct nfs4_compound *c, const struct gw_obj *o);
/*
 * READ and READ_PLUS (nfs4_op_io.c): the current file is a regular file,
 * @sid lets its holder read. NFS4_OK and an fd to
 * read from, given back with nfs4_state_io_done(c->srv, *fd, *owned);
 * else the status, and nothing to give back.
 */
uint32_t nfs4_read_begin(struct nfs4_compound *c, const struct nfs4_stateid *sid, uint64_t offset,
			 int *fd, bool *owned);
/*
 * The bytes of the @count asked for that one reply can carry: at most
 * maxread (gw_io_max) and a pool chunk, and what @room leaves after @overhead bytes
 * of XDR around the data (whole XDR units; 0 when nothing fits).
 */
/*
 * The bytes of @count that can be read at @offset: none past the largest
 * off_t (a READ there is empty, and end of file), else up to it.
 */
uint64_t nfs4_read_clamp(uint64_t offset, uint64_t count);
size_t nfs4_read_count(const struct nfs4_compound *c, uint64_t count, size_t room, size_t overhead);
/*
 * WRITE's write (nfs4_op_io.c): @len bytes at @data to @off of @fd, an fd
 * of the current file, through lacunafs's atomic write when the export
 * has it. 0, -EAGAIN (no pool chunk free) or a negative errno.
 */
struct lacuna_wresult;
int gw_write(struct nfs4_compound *c, int fd, uint64_t off, const uint8_t *data, size_t len,
	     unsigned int flags, struct lacuna_wresult *res);
/*
 * The sparse read of [off, off+len) of @fd, an fd of @o (nfs4_op_sparse.c):
 * through lacunafs when the export has it, else the plain walk.
 */
struct lacuna_result;
int nfs4_sparse_read(struct gw_obj *o, int fd, uint64_t off, uint64_t len, unsigned int how,
		     void *buf, size_t buflen, struct lacuna_result *res);

/* If the 4.1 special "current stateid" (seqid 1, other 0) is given, substitute c->cur_sid. */
uint32_t nfs4_resolve_current_sid(struct nfs4_compound *c, struct nfs4_stateid *sid);
void nfs4_set_current_sid(struct nfs4_compound *c, const struct nfs4_stateid *sid);

#endif
