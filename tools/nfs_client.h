/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * nfsc: a small NFSv4.2 client for the lacuna tool. It reads one file
 * of one server with READ_PLUS (the data and the holes), READ or SEEK,
 * with several calls in flight on one session.
 *
 * Operation
 * ---------
 * Transport. A struct nfsc_xprt moves whole RPC messages: send() takes
 * one call as a list of pieces, recv() returns the next reply in memory
 * the transport owns until its next recv(). TCP (nfsc_tcp_connect) adds
 * and strips the record marks (RFC 5531 §11) and refuses a reply over
 * its maximum; the RPC-over-RDMA transport (nfsc_rdma_connect) takes
 * its place with the same two calls, told which calls are READs so it
 * can offer their data a write chunk, and says through max_calls how
 * many calls it can carry at once (the session's slots are capped to
 * it). RPC-with-TLS (nfsc_tls_connect, RFC 9289) is the TCP transport
 * with the AUTH_TLS probe and a TLS 1.3 handshake first (nfs_tls.h),
 * then the same records inside TLS. The transport counts the bytes it
 * sends and receives, framing included ("bytes on the wire"; for TLS
 * what crossed the socket: probe, handshake and TLS records).
 *
 * Session. nfsc_session() runs, one call at a time on slot 0:
 * EXCHANGE_ID, CREATE_SESSION (up to NFSC_SLOTS_MAX slots, replies of
 * NFSC_IO_MAX bytes of data plus headers), SEQUENCE + RECLAIM_COMPLETE.
 * It asks for minor version 2 and takes 1 from a server that refuses 2
 * (READ_PLUS and SEEK are then unavailable). nfsc_open() then looks the
 * path up from the root (SEQUENCE, PUTROOTFH or PUTFH, LOOKUP of each
 * directory, and for the last batch OPEN of the file: share READ, no
 * create, CLAIM_NULL, no delegation wanted; GETFH; GETATTR of type,
 * size and space_used). A server in its grace period (NFS4ERR_GRACE)
 * or asking to wait (NFS4ERR_DELAY) is retried once a second for up to
 * NFSC_WAIT_MAX seconds. nfsc_close() sends CLOSE (and DELEGRETURN of
 * a delegation granted anyway); nfsc_end() DESTROY_SESSION and
 * DESTROY_CLIENTID.
 *
 * I/O. nfsc_io_start() sends SEQUENCE + PUTFH + one of READ, READ_PLUS
 * or SEEK on a free slot; nfsc_io_wait() receives the next reply,
 * whichever slot it is for (the xid says), and decodes it into the
 * struct nfsc_io that asked. A READ reply becomes one data segment, so
 * callers treat READ and READ_PLUS alike. Segment data points into the
 * received reply: valid until the next nfsc_io_wait().
 *
 * nfsc_walk() covers a byte range with READ_PLUS (or READ): calls of
 * NFSC_IO_MAX bytes, `depth` in flight, each reply's segments clipped
 * to the call's range (a hole may start before it and run past it) and
 * handed to a callback in file order within a reply, replies in the
 * order they arrive. A short reply has the rest of its range asked
 * again; an eof flag ends the walk where the file ends; a hole running
 * past everything asked for so far is taken as it is, and the walk
 * resumes after it instead of asking for its bytes again. The first
 * READ_PLUS goes alone: if the server answers NFS4ERR_NOTSUPP or
 * OP_ILLEGAL the walk goes on with READ and says so through note()
 * (or stops with -EOPNOTSUPP if asked to).
 * nfsc_seek_walk() maps a range with SEEK(DATA) and SEEK(HOLE)
 * instead, one call at a time, without moving any data.
 *
 * Untrusted replies. Every reply is decoded through common/xdr.h's
 * bounded cursor: nothing is read past the received message whatever
 * its lengths and counts say, and every count has a *_MAX here. A
 * READ_PLUS reply is also checked against the call that asked for it
 * (nfsc_dec_read_plus): at most NFSC_RP_SEGS_MAX segments; known
 * content types; no empty segment and no offset + length past 2^64;
 * the first segment covers the requested offset (only a hole may start
 * before it); each segment starts where the previous one ends (no gap,
 * no overlap); data stays inside the requested range (offset + count);
 * nothing starts at or past the end of that range. A reply failing a
 * check ends the command with a message naming the check and the
 * offsets involved.
 *
 * Errors: functions return 0 or a negative errno, and leave a message
 * naming the failing call or operation in nfsc_error(). A failed NFS
 * operation is -EREMOTEIO with its nfsstat4 in nfsc_status(); a reply
 * that breaks the protocol is -EPROTO or -EBADMSG (truncated XDR).
 *
 * Threads: a struct nfsc is used by one thread.
 */
#ifndef LACUNA_NFS_CLIENT_H
#define LACUNA_NFS_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "xdr.h"

#define NFSC_PORT "2049"
#define NFSC_RDMA_PORT "20049" /* NFS over RPC-over-RDMA (RFC 8267) */
#define NFSC_HOST_MAX 255      /* host name or address in a URL */
#define NFSC_PATH_MAX 4095     /* path in a URL, decoded */
#define NFSC_COMPONENTS_MAX 64 /* names in that path */
#define NFSC_NAME_MAX 255      /* one name (component4) */
#define NFSC_FH_MAX 128	       /* NFS4_FHSIZE */
#define NFSC_STATEID_SIZE 16
#define NFSC_SESSIONID_SIZE 16
#define NFSC_SLOTS_MAX 16      /* calls in flight */
#define NFSC_IO_MAX (1U << 20) /* bytes asked by one READ or READ_PLUS */
#define NFSC_REPLY_SLACK 65536 /* a reply's bytes beyond its data */
/* the longest reply accepted */
#define NFSC_REC_MAX (NFSC_IO_MAX + NFSC_REPLY_SLACK)
#define NFSC_CALL_MAX 32768    /* an encoded call */
#define NFSC_RP_SEGS_MAX 8192  /* segments in one READ_PLUS reply */
#define NFSC_OPAQUE_MAX 1024   /* NFS4_OPAQUE_LIMIT: owners, scopes, tags */
#define NFSC_VERF_MAX 400      /* RPC verifier body */
#define NFSC_BITMAP_MAX 8      /* words of a bitmap4 in a reply */
#define NFSC_ATTRS_MAX 8192    /* bytes of a fattr4's values */
#define NFSC_WAIT_MAX 120      /* seconds of NFS4ERR_GRACE/DELAY waited out */
#define NFSC_REPLY_TIMEOUT 120 /* seconds of silence before a connection is given up */
#define NFSC_ERR_MAX 256
#define NFSC_SEC_MAX 96	       /* a transport's security, described */

/* data_content4 (RFC 7862) */
#define NFSC_CONTENT_DATA 0
#define NFSC_CONTENT_HOLE 1

/* ------------------------------------------------------------ URL */

struct nfsc_url {
	char host[NFSC_HOST_MAX + 1]; /* without the brackets of [IPv6] */
	char port[6];
	bool has_port; /* the URL named one */
	char path[NFSC_PATH_MAX + 1]; /* decoded, starting with '/' */
};

/* nfs://HOST[:PORT]/PATH; -EINVAL with a message in err. */
int nfsc_url_parse(const char *s, struct nfsc_url *u, char *err, size_t errlen);

/* One name of a path: len bytes at p, not NUL-terminated. */
struct nfsc_name {
	const char *p;
	uint32_t len;
};

/*
 * The names of @path, slashes squeezed, into n[NFSC_COMPONENTS_MAX]:
 * -ENAMETOOLONG past NFSC_NAME_MAX bytes, -EINVAL for . or .., -E2BIG
 * past NFSC_COMPONENTS_MAX names, -ENOENT for none.
 */
int nfsc_path_split(const char *path, struct nfsc_name *n, unsigned int *count);

/* ------------------------------------------------------------ transport */

struct nfsc_xprt;

struct nfsc_xprt_ops {
	/*
	 * Send one whole call made of @n pieces. @ddp_read is the count of
	 * a READ whose data may be placed directly (RDMA), else 0.
	 */
	int (*send)(struct nfsc_xprt *t, const struct iovec *iov, unsigned int n,
		    uint32_t ddp_read);
	/* The next whole reply: valid until the next recv(). */
	int (*recv)(struct nfsc_xprt *t, const uint8_t **msg, size_t *len);
	void (*destroy)(struct nfsc_xprt *t);
};

struct nfsc_xprt {
	const struct nfsc_xprt_ops *ops;
	uint64_t bytes_in, bytes_out; /* framing included */
	unsigned int max_calls;	      /* calls it can carry at once; 0: no limit */
	uint16_t sport;		      /* TCP: the local (source) port */
	bool resvport;		      /* from a reserved port (below 1024), or RDMA */
	char sec[NFSC_SEC_MAX];	      /* "" in the clear, else "TLSv1.3 <cipher>" */
	bool tls, mtls;		      /* RPC-with-TLS; with a client certificate */
	char err[NFSC_ERR_MAX];	      /* what failed, after an error */
};

/* Connect to HOST:PORT over TCP; replies of at most @rec_max bytes. */
int nfsc_tcp_connect(const char *host, const char *port, size_t rec_max, struct nfsc_xprt **out,
		     char *err, size_t errlen);

/*
 * A TCP socket connected to HOST:PORT, from a reserved port as root
 * (see nfs_client_tcp.c), TCP_NODELAY, NFSC_REPLY_TIMEOUT on receives.
 */
int nfsc_tcp_socket(const char *host, const char *port, int *fd, char *err, size_t errlen);
/* The local port of @fd, 0 if unknown. */
uint16_t nfsc_local_port(int fd);

struct rpc_rec;

/*
 * The next reply of a byte-stream transport, reassembled in @rec from
 * what @rd(@arg) reads: > 0 bytes, 0 the server closed the connection,
 * -ETIMEDOUT silence for the receive timeout, another -errno with its
 * message already in t->err. Any failure sets *dead.
 */
int nfsc_rec_recv(struct nfsc_xprt *t, struct rpc_rec *rec, bool *dead,
		  ssize_t (*rd)(void *arg, void *buf, size_t len), void *arg, const uint8_t **msg,
		  size_t *len);

struct nfs_tls_opts;

/*
 * Connect to HOST:PORT over TCP with RPC-with-TLS (RFC 9289,
 * nfs_client_tls.c): the AUTH_TLS probe, a TLS 1.3 handshake as @o
 * says (nfs_tls.h), then records inside TLS; replies of at most
 * @rec_max bytes.
 */
int nfsc_tls_connect(const char *host, const char *port, size_t rec_max,
		     const struct nfs_tls_opts *o, struct nfsc_xprt **out, char *err,
		     size_t errlen);

/*
 * Connect to HOST:PORT with RPC-over-RDMA (nfs_client_rdma.c, only
 * when built with HAVE_RDMA); replies of at most @rec_max bytes.
 */
int nfsc_rdma_connect(const char *host, const char *port, size_t rec_max, struct nfsc_xprt **out,
		      char *err, size_t errlen);

/* ------------------------------------------------------------ client */

struct nfsc;

struct nfsc_seg {
	uint64_t offset, length;
	uint32_t kind;	     /* NFSC_CONTENT_DATA or NFSC_CONTENT_HOLE */
	const uint8_t *data; /* DATA: length bytes, into the reply */
};

struct nfsc_file {
	uint8_t fh[NFSC_FH_MAX];
	uint32_t fh_len;
	uint8_t stateid[NFSC_STATEID_SIZE];
	uint8_t deleg[NFSC_STATEID_SIZE];
	bool has_deleg;
	bool open;
	uint64_t size, space_used;
};

/* One call in flight and, once it is back, its result. */
struct nfsc_io {
	uint32_t op; /* OP_READ, OP_READ_PLUS or OP_SEEK */
	uint64_t offset;
	uint32_t count; /* READ, READ_PLUS */
	uint32_t what;	/* SEEK: NFSC_CONTENT_DATA or _HOLE */
	void *arg;	/* the caller's */
	/* result */
	uint32_t status; /* the op's nfsstat4; NFS4ERR_OP_ILLEGAL if unknown to the server */
	bool eof;
	uint64_t seek_offset;
	uint32_t nsegs;
	const struct nfsc_seg *segs; /* valid until the next nfsc_io_wait() */
	/* private */
	unsigned int slot;
};

int nfsc_create(struct nfsc **out);
/* Closes the file and ends the session if still open (best effort). */
void nfsc_destroy(struct nfsc *c);
/* Use transport @t (the client owns it from then on). */
void nfsc_attach(struct nfsc *c, struct nfsc_xprt *t);
int nfsc_connect(struct nfsc *c, const char *host, const char *port);
/* note(arg, msg) hears about waits and fallbacks (may be NULL). */
void nfsc_set_note(struct nfsc *c, void (*note)(void *arg, const char *msg), void *arg);

int nfsc_session(struct nfsc *c);
int nfsc_open(struct nfsc *c, const char *path, struct nfsc_file *f);
int nfsc_close(struct nfsc *c, struct nfsc_file *f);
int nfsc_end(struct nfsc *c);

const char *nfsc_error(const struct nfsc *c);
uint32_t nfsc_status(const struct nfsc *c);
uint32_t nfsc_minor(const struct nfsc *c);
unsigned int nfsc_slots(const struct nfsc *c);
const struct nfsc_xprt *nfsc_xprt(const struct nfsc *c);

/* -EBUSY when every slot is in use. */
int nfsc_io_start(struct nfsc *c, const struct nfsc_file *f, struct nfsc_io *io);
int nfsc_io_wait(struct nfsc *c, struct nfsc_io **io);

struct nfsc_walk {
	uint32_t op;	      /* OP_READ_PLUS or OP_READ */
	uint64_t offset, end; /* the range [offset, end) */
	unsigned int depth;   /* calls in flight (1 to NFSC_SLOTS_MAX) */
	/* each segment, clipped to the range; non-zero stops the walk */
	int (*seg)(void *arg, const struct nfsc_seg *s);
	void *arg;
	bool no_fallback; /* no READ_PLUS: -EOPNOTSUPP rather than READ */
	/* results */
	uint64_t data_bytes, hole_bytes; /* as handed to seg() */
	uint64_t eof_at;		 /* where the server said the file ends, or UINT64_MAX */
	uint64_t calls;
	bool fell_back; /* the server has no READ_PLUS: READ was used */
};

int nfsc_walk(struct nfsc *c, const struct nfsc_file *f, struct nfsc_walk *w);
/* The same map with SEEK, one call at a time, no data (seg() gets none). */
int nfsc_seek_walk(struct nfsc *c, const struct nfsc_file *f, struct nfsc_walk *w);

/* ------------------------------------------------------------ decoding */

/* "NFS4ERR_NOENT" (or "nfsstat4 12345") */
const char *nfsc_stat_name(uint32_t st);
/* The errno an nfsstat4 stands for, or 0 when none fits. */
int nfsc_stat_errno(uint32_t st);

/*
 * An RPC reply header, accepted and SUCCESS; x is left on the results.
 * -EBADMSG (truncated) or -EPROTO (denied, not executed) with a message.
 */
int nfsc_dec_rpc_reply(struct xdr_in *x, uint32_t *xid, char *err, size_t errlen);
/*
 * READ_PLUS4resok (after the status) for a call at @offset of @count
 * bytes: eof and up to @cap segments into @segs, checked as the
 * Operation essay says. -EBADMSG truncated or malformed XDR, -E2BIG
 * more than @cap segments, -EPROTO a segment breaking the rules.
 */
int nfsc_dec_read_plus(struct xdr_in *x, uint64_t offset, uint32_t count, struct nfsc_seg *segs,
		       uint32_t cap, uint32_t *nsegs, bool *eof, char *err, size_t errlen);
/* READ4resok: one data segment (none when empty); more than @count is -EPROTO. */
int nfsc_dec_read(struct xdr_in *x, uint64_t offset, uint32_t count, struct nfsc_seg *seg,
		  uint32_t *nsegs, bool *eof, char *err, size_t errlen);
/* SEEK4resok */
int nfsc_dec_seek(struct xdr_in *x, bool *eof, uint64_t *offset, char *err, size_t errlen);

struct rpcrdma_hdr;

/*
 * RPC-over-RDMA: where the whole reply to one call is, given its
 * transport header @h, decoded from the received message @msg of @len
 * bytes, the reply chunk the call offered (@rbuf, @rlen bytes; NULL:
 * none) and its write chunk (@wbuf, @wlen bytes; NULL: none). RDMA_MSG:
 * the reply follows the header inline; RDMA_NOMSG: it is in the reply
 * chunk, as long as the echoed segments say. READ data the server
 * placed in the write chunk was reduced out of the reply (RFC 8166
 * §3.4.5, §3.5): the opaque's length word is the last word of what
 * came inline, the data and its pad are missing. The reply is then
 * rebuilt in place around the data: what came inline is copied into
 * the @headroom bytes before @wbuf and the pad zeroed after the data
 * (@wbuf has 3 bytes of room past @wlen). 0 and *out, *outlen, or
 * -EPROTO with a message: RDMA_ERROR, a read list, chunks not offered
 * or longer than offered, a length word that does not match the data.
 */
int nfsc_rdma_reply(const struct rpcrdma_hdr *h, const uint8_t *msg, size_t len,
		    const uint8_t *rbuf, size_t rlen, uint8_t *wbuf, size_t wlen, size_t headroom,
		    const uint8_t **out, size_t *outlen, char *err, size_t errlen);

#endif
