// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * nfs_readbench: a pipelined NFSv4.1 (or 4.2) client that streams one
 * file over one TCP connection and reports bytes per second, to measure
 * what a server's READ path (or, with --write, its WRITE path) can
 * deliver without a kernel client in the way.
 *
 * Operation
 * ---------
 * Setup, one call at a time on slot 0: NULL; EXCHANGE_ID; CREATE_SESSION
 * asking for max(64, depth) slots and requests and replies of the
 * transfer size plus 64 KiB; SEQUENCE + RECLAIM_COMPLETE; then SEQUENCE +
 * PUTROOTFH + LOOKUP of each directory of PATH + GETFH + OPEN of the last
 * component (CLAIM_NULL; share READ and no delegation wanted, no create;
 * with --write share WRITE and create UNCHECKED4, size 0 and mode 0644)
 * + GETFH + GETATTR(size).
 *
 * Passes: --passes times over the whole file (with --write, over --write
 * bytes) in offset order, keeping --depth calls in flight, each on its own
 * slot: SEQUENCE + PUTFH + READ(open stateid, offset, count), or WRITE
 * (UNSTABLE4 unless --stable) of --size-per-read bytes. A reply frees its
 * slot for the next offset. One thread does everything: it sends a call,
 * then blocks for the next reply (a record read with its mark, then its
 * body, straight into one receive buffer) and sends the slot's next call.
 * A pass is timed from its first send to its last reply. A short READ
 * before EOF queues the rest of its range again; a READ or WRITE answered
 * NFS4ERR_DELAY is sent again 1 ms later (counted in delays). With
 * --write, a COMMIT follows each pass and is timed on its own (commit_ns).
 *
 * Then CLOSE, with --remove a REMOVE of the file, DESTROY_SESSION and
 * DESTROY_CLIENTID.
 *
 * Output: one line per pass of key=value fields (label pass bytes ns GBps
 * MBps calls depth iosize delays client_cpu_ns, server_cpu_ns with --pid,
 * commit_ns with --write) for a script to take medians of; the setup's findings
 * (granted slots and sizes) go to stderr. --verify FILE compares every
 * byte read with FILE (a local copy or the backing file), outside the
 * clock's meaning: it slows the pass.
 *
 * --tls (or --ca, --cert, --key) runs everything over RPC-with-TLS (RFC
 * 9289, tools/nfs_tls.c): the AUTH_TLS probe and a TLS 1.3 handshake on
 * the connection before the NULL call, then the same records inside
 * TLS (a call is copied behind its mark into one buffer and written
 * at once; the receive side reads the record mark, then the body,
 * through the TLS layer). The server's certificate must name --host.
 *
 * Exit 0, or 1 with a message naming the failing call or operation.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <netdb.h>
#include <stdarg.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "nfs_tls.h"
#include "rpc.h"
#include "xdr.h"

/* protocol numbers (RFC 5661, RFC 7862) */
#define NB_PROG 100003
#define NB_VERS 4
enum {
	NB_OP_CLOSE = 4,
	NB_OP_COMMIT = 5,
	NB_OP_GETATTR = 9,
	NB_OP_GETFH = 10,
	NB_OP_LOOKUP = 15,
	NB_OP_OPEN = 18,
	NB_OP_PUTFH = 22,
	NB_OP_PUTROOTFH = 24,
	NB_OP_READ = 25,
	NB_OP_REMOVE = 28,
	NB_OP_WRITE = 38,
	NB_OP_EXCHANGE_ID = 42,
	NB_OP_CREATE_SESSION = 43,
	NB_OP_DESTROY_SESSION = 44,
	NB_OP_SEQUENCE = 53,
	NB_OP_DESTROY_CLIENTID = 57,
	NB_OP_RECLAIM_COMPLETE = 58,
};
#define NB_ERR_DELAY 10008
#define NB_ERR_COMPLETE_ALREADY 10054
#define NB_SHARE_READ 1
#define NB_SHARE_WRITE 2
#define NB_WANT_NO_DELEG 0x0400
#define NB_FATTR_SIZE 4	 /* word 0 */
#define NB_FATTR_MODE 33 /* word 1 */
#define NB_FHSIZE 128
#define NB_SESSIONID 16
#define NB_STATEID 16
#define NB_OPAQUE_MAX 1024

#define NB_SLOTS_MAX 256     /* the xid's low byte is the slot */
#define NB_COMPONENTS_MAX 32 /* directories in PATH */
#define NB_CALL_MAX 8192     /* an encoded call without bulk data */
#define NB_REPLY_SLACK 65536 /* reply headers on top of the data */
#define NB_RECORD_FRAGS_MAX 4096

struct nb_enc {
	uint8_t buf[NB_CALL_MAX];
	size_t len;
};

struct nb_range {
	uint64_t off;
	uint32_t len;
};

struct nb_slot {
	uint32_t seq; /* last sequenceid used on it */
	bool busy;
	struct nb_range r; /* what its call asked for */
	uint32_t xid;
};

struct nb {
	/* options */
	const char *host, *path, *verify_path, *label;
	int port;
	unsigned int depth, passes, minor;
	uint32_t iosize;
	uint64_t write_size; /* 0: read */
	uint32_t stable;
	bool remove;
	long server_pid;
	bool tls; /* RPC-with-TLS */
	struct nfs_tls_opts tls_o;

	int fd, verify_fd;
	struct nfs_tls tls_s;
	uint8_t *sbuf; /* TLS: a call behind its mark */
	size_t scap;
	uint32_t xid_gen;
	uint8_t *rec; /* one received record */
	size_t rec_max;
	uint8_t *wdata; /* WRITE payload */
	uint8_t *vbuf;	/* --verify comparison buffer */

	uint64_t clientid;
	uint32_t cs_seq;
	uint8_t sessionid[NB_SESSIONID];
	unsigned int nslots;
	struct nb_slot slot[NB_SLOTS_MAX];
	uint8_t dirfh[NB_FHSIZE], fh[NB_FHSIZE];
	uint32_t dirfh_len, fh_len;
	uint8_t stateid[NB_STATEID];
	uint64_t size;	  /* file size (read) or bytes per pass (write) */
	const char *name; /* last component of path */
	uint32_t name_len;
	bool target_warned;
	uint64_t delays; /* NFS4ERR_DELAY answers to READ/WRITE in this pass */
};

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

static void die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "nfs_readbench: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static uint64_t now_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static const char *nfs4_strerror(uint32_t st)
{
	static const struct {
		uint32_t st;
		const char *name;
	} t[] = {
		{ 1, "NFS4ERR_PERM" },
		{ 2, "NFS4ERR_NOENT" },
		{ 5, "NFS4ERR_IO" },
		{ 13, "NFS4ERR_ACCESS" },
		{ 17, "NFS4ERR_EXIST" },
		{ 20, "NFS4ERR_NOTDIR" },
		{ 21, "NFS4ERR_ISDIR" },
		{ 22, "NFS4ERR_INVAL" },
		{ 28, "NFS4ERR_NOSPC" },
		{ 30, "NFS4ERR_ROFS" },
		{ 70, "NFS4ERR_STALE" },
		{ 10001, "NFS4ERR_BADHANDLE" },
		{ 10004, "NFS4ERR_NOTSUPP" },
		{ 10006, "NFS4ERR_SERVERFAULT" },
		{ 10008, "NFS4ERR_DELAY" },
		{ 10011, "NFS4ERR_EXPIRED" },
		{ 10013, "NFS4ERR_GRACE" },
		{ 10016, "NFS4ERR_WRONGSEC" },
		{ 10018, "NFS4ERR_RESOURCE" },
		{ 10020, "NFS4ERR_NOFILEHANDLE" },
		{ 10021, "NFS4ERR_MINOR_VERS_MISMATCH" },
		{ 10022, "NFS4ERR_STALE_CLIENTID" },
		{ 10025, "NFS4ERR_BAD_STATEID" },
		{ 10026, "NFS4ERR_BAD_SEQID" },
		{ 10036, "NFS4ERR_BADXDR" },
		{ 10038, "NFS4ERR_OPENMODE" },
		{ 10044, "NFS4ERR_OP_ILLEGAL" },
		{ 10052, "NFS4ERR_BADSESSION" },
		{ 10053, "NFS4ERR_BADSLOT" },
		{ 10054, "NFS4ERR_COMPLETE_ALREADY" },
		{ 10055, "NFS4ERR_CONN_NOT_BOUND_TO_SESSION" },
		{ 10063, "NFS4ERR_SEQ_MISORDERED" },
		{ 10065, "NFS4ERR_REQ_TOO_BIG" },
		{ 10066, "NFS4ERR_REP_TOO_BIG" },
		{ 10069, "NFS4ERR_RETRY_UNCACHED_REP" },
		{ 10070, "NFS4ERR_UNSAFE_COMPROMISE" },
		{ 10071, "NFS4ERR_TOO_MANY_OPS" },
		{ 10072, "NFS4ERR_OP_NOT_IN_SESSION" },
		{ 10076, "NFS4ERR_SEQUENCE_POS" },
		{ 10079, "NFS4ERR_NOT_ONLY_OP" },
	};
	static char other[32];
	size_t i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (t[i].st == st)
			return t[i].name;
	snprintf(other, sizeof(other), "nfsstat4 %u", st);
	return other;
}

/* ------------------------------------------------------------ encoding */

static void e32(struct nb_enc *e, uint32_t v)
{
	if (e->len + 4 > sizeof(e->buf))
		die("call larger than %d bytes", NB_CALL_MAX);
	xdr_put_u32(e->buf + e->len, v);
	e->len += 4;
}

static void e64(struct nb_enc *e, uint64_t v)
{
	e32(e, (uint32_t)(v >> 32));
	e32(e, (uint32_t)v);
}

static void efixed(struct nb_enc *e, const void *p, size_t n)
{
	if (e->len + XDR_ALIGN(n) > sizeof(e->buf))
		die("call larger than %d bytes", NB_CALL_MAX);
	memcpy(e->buf + e->len, p, n);
	memset(e->buf + e->len + n, 0, XDR_PAD(n));
	e->len += XDR_ALIGN(n);
}

static void eopaque(struct nb_enc *e, const void *p, uint32_t n)
{
	e32(e, n);
	efixed(e, p, n);
}

/* Record mark placeholder, RPC call header (AUTH_SYS), COMPOUND header. */
static uint32_t call_begin(struct nb *nb, struct nb_enc *e, uint32_t proc, unsigned int slot,
			   uint32_t nops)
{
	static const char machine[] = "nfs_readbench";
	uint32_t xid = (++nb->xid_gen << 8) | slot;

	e->len = 0;
	e32(e, 0); /* record mark, filled by call_send */
	e32(e, xid);
	e32(e, 0); /* CALL */
	e32(e, 2); /* RPC version */
	e32(e, NB_PROG);
	e32(e, NB_VERS);
	e32(e, proc);
	e32(e, 1); /* AUTH_SYS */
	e32(e, 4 + 4 + XDR_ALIGN(sizeof(machine) - 1) + 4 + 4 + 4);
	e32(e, 0); /* stamp */
	eopaque(e, machine, sizeof(machine) - 1);
	e32(e, (uint32_t)getuid());
	e32(e, (uint32_t)getgid());
	e32(e, 0); /* no supplementary gids */
	e32(e, 0); /* verifier AUTH_NONE */
	e32(e, 0);
	if (proc == 1) {
		e32(e, 0); /* empty tag */
		e32(e, nb->minor);
		e32(e, nops);
	}
	return xid;
}

static void op_sequence(struct nb *nb, struct nb_enc *e, unsigned int slot)
{
	e32(e, NB_OP_SEQUENCE);
	efixed(e, nb->sessionid, NB_SESSIONID);
	e32(e, ++nb->slot[slot].seq);
	e32(e, slot);
	e32(e, nb->depth - 1); /* highest slot this client uses */
	e32(e, 0);	       /* cachethis */
}

static void op_putfh(struct nb_enc *e, const uint8_t *fh, uint32_t len)
{
	e32(e, NB_OP_PUTFH);
	eopaque(e, fh, len);
}

/* Send the call in @e followed by @data (not copied), as one record. */
static void call_send(struct nb *nb, struct nb_enc *e, const void *data, uint32_t dlen)
{
	static const uint8_t zero[4];
	struct iovec iov[3] = {
		{ .iov_base = e->buf, .iov_len = e->len },
		{ .iov_base = (void *)data, .iov_len = dlen },
		{ .iov_base = (void *)zero, .iov_len = XDR_PAD(dlen) },
	};
	struct msghdr msg = { .msg_iov = iov, .msg_iovlen = 3 };
	size_t left = e->len + dlen + XDR_PAD(dlen);

	xdr_put_u32(e->buf, RPC_REC_LAST | (uint32_t)(left - 4));
	if (nb->tls) {
		char err[256];

		if (left > nb->scap) {
			free(nb->sbuf);
			nb->sbuf = malloc(left);
			if (!nb->sbuf)
				die("malloc: %s", strerror(errno));
			nb->scap = left;
		}
		memcpy(nb->sbuf, e->buf, e->len);
		if (dlen)
			memcpy(nb->sbuf + e->len, data, dlen);
		memset(nb->sbuf + e->len + dlen, 0, XDR_PAD(dlen));
		if (nfs_tls_write(&nb->tls_s, nb->sbuf, left, err, sizeof(err)))
			die("%s", err);
		return;
	}
	while (left) {
		ssize_t n = sendmsg(nb->fd, &msg, MSG_NOSIGNAL);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			die("sendmsg: %s", strerror(errno));
		}
		left -= (size_t)n;
		while (n > 0 && msg.msg_iovlen) {
			if ((size_t)n >= msg.msg_iov->iov_len) {
				n -= (ssize_t)msg.msg_iov->iov_len;
				msg.msg_iov++;
				msg.msg_iovlen--;
			} else {
				msg.msg_iov->iov_base = (uint8_t *)msg.msg_iov->iov_base + n;
				msg.msg_iov->iov_len -= (size_t)n;
				n = 0;
			}
		}
	}
}

/* ------------------------------------------------------------ receiving */

static void recv_exact(struct nb *nb, void *buf, size_t len)
{
	uint8_t *p = buf;
	char err[256];

	while (len && nb->tls) {
		ssize_t n = nfs_tls_read(&nb->tls_s, p, len, err, sizeof(err));

		if (n < 0)
			die("%s", err);
		if (n == 0)
			die("recv: the server closed the connection");
		p += n;
		len -= (size_t)n;
	}
	while (len) {
		ssize_t n = recv(nb->fd, p, len, MSG_WAITALL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			die("recv: %s", strerror(errno));
		if (n == 0)
			die("recv: the server closed the connection");
		p += n;
		len -= (size_t)n;
	}
}

/* Read one record into nb->rec; its length. */
static size_t recv_record(struct nb *nb)
{
	size_t len = 0;
	unsigned int frags = 0;
	bool last = false;

	while (!last) {
		uint8_t m[4];
		uint32_t mark, flen;

		recv_exact(nb, m, 4);
		mark = xdr_get_u32(m);
		last = mark & RPC_REC_LAST;
		flen = mark & ~RPC_REC_LAST;
		if (flen > nb->rec_max - len)
			die("reply record over %zu bytes", nb->rec_max);
		if (++frags > NB_RECORD_FRAGS_MAX)
			die("reply record in more than %d fragments", NB_RECORD_FRAGS_MAX);
		recv_exact(nb, nb->rec + len, flen);
		len += flen;
	}
	return len;
}

struct nb_reply {
	struct xdr_in x;
	uint32_t xid;
	uint32_t status; /* COMPOUND status */
	uint32_t nres;
};

static void dec32(struct nb_reply *r, uint32_t *v, const char *what)
{
	if (xdr_dec_u32(&r->x, v))
		die("reply truncated in %s", what);
}

static void dec64(struct nb_reply *r, uint64_t *v, const char *what)
{
	if (xdr_dec_u64(&r->x, v))
		die("reply truncated in %s", what);
}

static void decskip_opaque(struct nb_reply *r, uint32_t max, const char *what)
{
	const uint8_t *p;
	uint32_t n;

	if (xdr_dec_opaque(&r->x, &p, &n, max))
		die("reply malformed in %s", what);
}

/* Receive the next reply and decode its RPC and COMPOUND headers. */
static void reply_next(struct nb *nb, struct nb_reply *r, bool compound)
{
	uint32_t v, verf;
	size_t len = recv_record(nb);

	xdr_in_init(&r->x, nb->rec, len);
	dec32(r, &r->xid, "xid");
	dec32(r, &v, "message type");
	if (v != 1)
		die("expected a REPLY, got message type %u", v);
	dec32(r, &v, "reply_stat");
	if (v != 0) {
		uint32_t why = 0;

		xdr_dec_u32(&r->x, &why);
		die("RPC call denied (reject_stat %u)", why);
	}
	dec32(r, &verf, "verifier");
	decskip_opaque(r, 400, "verifier");
	dec32(r, &v, "accept_stat");
	if (v != 0)
		die("RPC call not executed (accept_stat %u)", v);
	if (!compound)
		return;
	dec32(r, &r->status, "COMPOUND status");
	decskip_opaque(r, NB_OPAQUE_MAX, "tag");
	dec32(r, &r->nres, "result count");
}

/* The next op result: checks its opcode, returns its status. */
static uint32_t reply_op(struct nb_reply *r, uint32_t op, const char *name)
{
	uint32_t resop, st;

	if (!r->nres)
		die("%s: no result (COMPOUND status %s)", name, nfs4_strerror(r->status));
	r->nres--;
	dec32(r, &resop, name);
	if (resop != op)
		die("%s: result of op %u where op %u was expected", name, resop, op);
	dec32(r, &st, name);
	return st;
}

static void reply_op_ok(struct nb_reply *r, uint32_t op, const char *name)
{
	uint32_t st = reply_op(r, op, name);

	if (st)
		die("%s failed: %s", name, nfs4_strerror(st));
}

static void reply_sequence(struct nb *nb, struct nb_reply *r)
{
	uint32_t seq, slot, highest, target, flags;

	reply_op_ok(r, NB_OP_SEQUENCE, "SEQUENCE");
	if (xdr_dec_skip(&r->x, NB_SESSIONID))
		die("reply truncated in SEQUENCE");
	dec32(r, &seq, "SEQUENCE");
	dec32(r, &slot, "SEQUENCE");
	dec32(r, &highest, "SEQUENCE");
	dec32(r, &target, "SEQUENCE");
	dec32(r, &flags, "SEQUENCE");
	if (target + 1 < nb->nslots && !nb->target_warned) {
		fprintf(stderr,
			"nfs_readbench: note: server asks for at most %u slots "
			"(target_highest_slotid %u), %u in use\n",
			target + 1, target, nb->nslots);
		nb->target_warned = true;
	}
}

/* One call on slot 0, waiting for its reply. */
static void call_sync(struct nb *nb, struct nb_enc *e, uint32_t xid, struct nb_reply *r,
		      bool compound)
{
	call_send(nb, e, NULL, 0);
	reply_next(nb, r, compound);
	if (r->xid != xid)
		die("reply xid %#x, expected %#x", r->xid, xid);
}

/* ------------------------------------------------------------ setup */

static void nb_connect(struct nb *nb)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM };
	struct addrinfo *ai, *a;
	char port[16];
	int one = 1, rc;

	snprintf(port, sizeof(port), "%d", nb->port);
	rc = getaddrinfo(nb->host, port, &hints, &ai);
	if (rc)
		die("getaddrinfo %s: %s", nb->host, gai_strerror(rc));
	nb->fd = -1;
	for (a = ai; a && nb->fd < 0; a = a->ai_next) {
		nb->fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
		if (nb->fd < 0)
			continue;
		if (connect(nb->fd, a->ai_addr, a->ai_addrlen)) {
			rc = errno;
			close(nb->fd);
			nb->fd = -1;
			errno = rc;
		}
	}
	freeaddrinfo(ai);
	if (nb->fd < 0)
		die("connect %s port %d: %s", nb->host, nb->port, strerror(errno));
	setsockopt(nb->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (nb->tls) {
		char err[256];

		nb->tls_o.host = nb->host;
		if (nfs_tls_start(&nb->tls_s, nb->fd, &nb->tls_o, err, sizeof(err)))
			die("%s", err);
		fprintf(stderr, "nfs_readbench: %s%s\n", nb->tls_s.desc,
			nb->tls_s.mtls ? ", client certificate" : "");
	}
}

static void nb_null(struct nb *nb)
{
	struct nb_enc e;
	struct nb_reply r;
	uint32_t xid = call_begin(nb, &e, 0, 0, 0);

	call_sync(nb, &e, xid, &r, false);
}

static void nb_exchange_id(struct nb *nb)
{
	struct nb_enc e;
	struct nb_reply r;
	char owner[128], host[64] = "";
	uint64_t verf = now_ns(CLOCK_REALTIME);
	uint32_t xid, how, flags, n, i;
	uint64_t minor_id;
	int len;

	gethostname(host, sizeof(host) - 1);
	len = snprintf(owner, sizeof(owner), "nfs_readbench.%s.%ld.%" PRIu64, host, (long)getpid(),
		       verf);
	xid = call_begin(nb, &e, 1, 0, 1);
	e32(&e, NB_OP_EXCHANGE_ID);
	e64(&e, verf);
	eopaque(&e, owner, (uint32_t)len);
	e32(&e, 0); /* flags */
	e32(&e, 0); /* SP4_NONE */
	e32(&e, 0); /* no implementation id */
	call_sync(nb, &e, xid, &r, true);
	reply_op_ok(&r, NB_OP_EXCHANGE_ID, "EXCHANGE_ID");
	dec64(&r, &nb->clientid, "EXCHANGE_ID");
	dec32(&r, &nb->cs_seq, "EXCHANGE_ID");
	dec32(&r, &flags, "EXCHANGE_ID");
	dec32(&r, &how, "EXCHANGE_ID");
	if (how == 1) { /* SP4_MACH_CRED: two bitmaps */
		for (i = 0; i < 2; i++) {
			dec32(&r, &n, "EXCHANGE_ID");
			if (xdr_dec_skip(&r.x, (size_t)n * 4))
				die("reply truncated in EXCHANGE_ID");
		}
	} else if (how != 0) {
		die("EXCHANGE_ID: server insists on state protection %u", how);
	}
	dec64(&r, &minor_id, "EXCHANGE_ID");
	decskip_opaque(&r, NB_OPAQUE_MAX, "EXCHANGE_ID server owner");
	decskip_opaque(&r, NB_OPAQUE_MAX, "EXCHANGE_ID server scope");
	dec32(&r, &n, "EXCHANGE_ID");
	if (n) {
		const uint8_t *p;
		uint32_t dlen, nlen;
		const uint8_t *dom;

		if (xdr_dec_opaque(&r.x, &dom, &dlen, NB_OPAQUE_MAX) ||
		    xdr_dec_opaque(&r.x, &p, &nlen, NB_OPAQUE_MAX))
			die("reply malformed in EXCHANGE_ID implementation id");
		fprintf(stderr, "nfs_readbench: server %.*s (%.*s)\n", (int)nlen, (const char *)p,
			(int)dlen, (const char *)dom);
	}
}

static void enc_chan_attrs(struct nb_enc *e, uint32_t reqsize, uint32_t respsize, uint32_t cached,
			   uint32_t maxops, uint32_t maxreqs)
{
	e32(e, 0); /* headerpadsize */
	e32(e, reqsize);
	e32(e, respsize);
	e32(e, cached);
	e32(e, maxops);
	e32(e, maxreqs);
	e32(e, 0); /* no rdma_ird */
}

static void nb_create_session(struct nb *nb)
{
	struct nb_enc e;
	struct nb_reply r;
	uint32_t xid, seq, flags, pad, reqsize, respsize, cached, maxops, maxreqs, nird;
	uint32_t want = nb->iosize + NB_REPLY_SLACK;
	unsigned int slots = nb->depth > 64 ? nb->depth : 64;

	xid = call_begin(nb, &e, 1, 0, 1);
	e32(&e, NB_OP_CREATE_SESSION);
	e64(&e, nb->clientid);
	e32(&e, nb->cs_seq);
	e32(&e, 0); /* no persistence, no back channel on this connection */
	enc_chan_attrs(&e, want, want, 4096, 16, slots);
	enc_chan_attrs(&e, 4096, 4096, 0, 2, 1);
	e32(&e, 0x40000000); /* callback program */
	e32(&e, 1);	     /* one callback security flavor: */
	e32(&e, 0);	     /* AUTH_NONE */
	call_sync(nb, &e, xid, &r, true);
	reply_op_ok(&r, NB_OP_CREATE_SESSION, "CREATE_SESSION");
	if (xdr_dec_opaque_fixed_copy(&r.x, nb->sessionid, NB_SESSIONID))
		die("reply truncated in CREATE_SESSION");
	dec32(&r, &seq, "CREATE_SESSION");
	dec32(&r, &flags, "CREATE_SESSION");
	dec32(&r, &pad, "CREATE_SESSION");
	dec32(&r, &reqsize, "CREATE_SESSION");
	dec32(&r, &respsize, "CREATE_SESSION");
	dec32(&r, &cached, "CREATE_SESSION");
	dec32(&r, &maxops, "CREATE_SESSION");
	dec32(&r, &maxreqs, "CREATE_SESSION");
	dec32(&r, &nird, "CREATE_SESSION");
	fprintf(stderr,
		"nfs_readbench: session: %u slots, maxrequestsize %u, maxresponsesize %u, "
		"maxoperations %u (asked %u, %u, %u, 16)\n",
		maxreqs, reqsize, respsize, maxops, slots, want, want);
	if (!maxreqs)
		die("CREATE_SESSION granted no slots");
	nb->nslots = maxreqs < NB_SLOTS_MAX ? maxreqs : NB_SLOTS_MAX;
	if (nb->depth > nb->nslots) {
		fprintf(stderr, "nfs_readbench: note: depth %u lowered to the %u slots granted\n",
			nb->depth, nb->nslots);
		nb->depth = nb->nslots;
	}
	/* a READ reply: ~200 bytes of headers; a WRITE call: path-free, ~250 */
	if (!nb->write_size && nb->iosize + 512 > respsize)
		die("maxresponsesize %u granted is too small for %u-byte READs (use "
		    "--size-per-read %u or less)",
		    respsize, nb->iosize, respsize - 512);
	if (nb->write_size && nb->iosize + 512 > reqsize)
		die("maxrequestsize %u granted is too small for %u-byte WRITEs (use "
		    "--size-per-read %u or less)",
		    reqsize, nb->iosize, reqsize - 512);
	if (maxops < 4 + 2)
		die("maxoperations %u is too few", maxops);
}

static void nb_reclaim_complete(struct nb *nb)
{
	struct nb_enc e;
	struct nb_reply r;
	uint32_t xid, st;

	xid = call_begin(nb, &e, 1, 0, 2);
	op_sequence(nb, &e, 0);
	e32(&e, NB_OP_RECLAIM_COMPLETE);
	e32(&e, 0); /* rca_one_fs = false */
	call_sync(nb, &e, xid, &r, true);
	reply_sequence(nb, &r);
	st = reply_op(&r, NB_OP_RECLAIM_COMPLETE, "RECLAIM_COMPLETE");
	if (st && st != NB_ERR_COMPLETE_ALREADY)
		die("RECLAIM_COMPLETE failed: %s", nfs4_strerror(st));
}

static void dec_fh(struct nb_reply *r, uint8_t *fh, uint32_t *len)
{
	const uint8_t *p;

	reply_op_ok(r, NB_OP_GETFH, "GETFH");
	if (xdr_dec_opaque(&r->x, &p, len, NB_FHSIZE))
		die("reply malformed in GETFH");
	memcpy(fh, p, *len);
}

static void dec_nfsace(struct nb_reply *r)
{
	uint32_t v;

	dec32(r, &v, "OPEN delegation ace");
	dec32(r, &v, "OPEN delegation ace");
	dec32(r, &v, "OPEN delegation ace");
	decskip_opaque(r, NB_OPAQUE_MAX, "OPEN delegation ace");
}

/* OPEN4resok up to its delegation; returns true if one was granted. */
static bool dec_open(struct nb *nb, struct nb_reply *r)
{
	uint32_t rflags, n, type, v;
	uint64_t v64;

	reply_op_ok(r, NB_OP_OPEN, "OPEN");
	if (xdr_dec_opaque_fixed_copy(&r->x, nb->stateid, NB_STATEID))
		die("reply truncated in OPEN");
	dec32(r, &v, "OPEN change_info");
	dec64(r, &v64, "OPEN change_info");
	dec64(r, &v64, "OPEN change_info");
	dec32(r, &rflags, "OPEN");
	dec32(r, &n, "OPEN attrset");
	if (xdr_dec_skip(&r->x, (size_t)n * 4))
		die("reply truncated in OPEN attrset");
	dec32(r, &type, "OPEN delegation");
	switch (type) {
	case 0: /* OPEN_DELEGATE_NONE */
		return false;
	case 1: /* READ */
	case 2: /* WRITE */
		if (xdr_dec_skip(&r->x, NB_STATEID))
			die("reply truncated in OPEN delegation");
		dec32(r, &v, "OPEN delegation recall");
		if (type == 2) {
			dec32(r, &v, "OPEN space limit");
			if (v == 1)
				dec64(r, &v64, "OPEN space limit");
			else if (xdr_dec_skip(&r->x, 8))
				die("reply truncated in OPEN space limit");
		}
		dec_nfsace(r);
		fprintf(stderr,
			"nfs_readbench: note: server granted a %s delegation "
			"although none was wanted\n",
			type == 1 ? "read" : "write");
		return true;
	case 3: /* OPEN_DELEGATE_NONE_EXT */
		dec32(r, &v, "OPEN why no delegation");
		if (v == 1 || v == 2)
			dec32(r, &v, "OPEN why no delegation");
		return false;
	default:
		die("OPEN: unknown delegation type %u", type);
	}
}

static void nb_open(struct nb *nb)
{
	const char *comp[NB_COMPONENTS_MAX];
	uint32_t clen[NB_COMPONENTS_MAX];
	unsigned int ncomp = 0, i;
	const char *p = nb->path;
	struct nb_enc e;
	struct nb_reply r;
	char owner[64];
	uint32_t xid, n, alen;
	const uint8_t *attrs;
	uint64_t size;
	int olen;

	/* split PATH: directories, then the file's name */
	for (;;) {
		const char *s;

		while (*p == '/')
			p++;
		if (!*p)
			break;
		s = strchr(p, '/');
		if (ncomp == NB_COMPONENTS_MAX)
			die("%s: more than %d components", nb->path, NB_COMPONENTS_MAX);
		comp[ncomp] = p;
		clen[ncomp] = s ? (uint32_t)(s - p) : (uint32_t)strlen(p);
		ncomp++;
		p += clen[ncomp - 1];
	}
	if (!ncomp)
		die("%s: no file name", nb->path);
	nb->name = comp[ncomp - 1];
	nb->name_len = clen[ncomp - 1];

	olen = snprintf(owner, sizeof(owner), "nfs_readbench.%ld", (long)getpid());
	xid = call_begin(nb, &e, 1, 0, 6 + (ncomp - 1));
	op_sequence(nb, &e, 0);
	e32(&e, NB_OP_PUTROOTFH);
	for (i = 0; i + 1 < ncomp; i++) {
		e32(&e, NB_OP_LOOKUP);
		eopaque(&e, comp[i], clen[i]);
	}
	e32(&e, NB_OP_GETFH);
	e32(&e, NB_OP_OPEN);
	e32(&e, 0); /* seqid */
	e32(&e, (nb->write_size ? NB_SHARE_WRITE : NB_SHARE_READ) | NB_WANT_NO_DELEG);
	e32(&e, 0); /* deny none */
	e64(&e, nb->clientid);
	eopaque(&e, owner, (uint32_t)olen);
	if (nb->write_size) {
		e32(&e, 1); /* OPEN4_CREATE */
		e32(&e, 0); /* UNCHECKED4 */
		e32(&e, 2); /* bitmap: 2 words */
		e32(&e, 1U << NB_FATTR_SIZE);
		e32(&e, 1U << (NB_FATTR_MODE - 32));
		e32(&e, 12); /* attrlist: size (8) + mode (4) */
		e64(&e, 0);
		e32(&e, 0644);
	} else {
		e32(&e, 0); /* OPEN4_NOCREATE */
	}
	e32(&e, 0); /* CLAIM_NULL */
	eopaque(&e, nb->name, nb->name_len);
	e32(&e, NB_OP_GETFH);
	e32(&e, NB_OP_GETATTR);
	e32(&e, 1);
	e32(&e, 1U << NB_FATTR_SIZE);
	call_sync(nb, &e, xid, &r, true);

	reply_sequence(nb, &r);
	reply_op_ok(&r, NB_OP_PUTROOTFH, "PUTROOTFH");
	for (i = 0; i + 1 < ncomp; i++) {
		uint32_t st = reply_op(&r, NB_OP_LOOKUP, "LOOKUP");

		if (st)
			die("LOOKUP %.*s failed: %s", (int)clen[i], comp[i], nfs4_strerror(st));
	}
	dec_fh(&r, nb->dirfh, &nb->dirfh_len);
	if (dec_open(nb, &r))
		fprintf(stderr, "nfs_readbench: the delegation is left to the session's end\n");
	dec_fh(&r, nb->fh, &nb->fh_len);
	reply_op_ok(&r, NB_OP_GETATTR, "GETATTR");
	dec32(&r, &n, "GETATTR");
	if (n < 1 || xdr_dec_skip(&r.x, (size_t)(n - 1) * 4 + 4))
		die("GETATTR: no bitmap");
	if (xdr_dec_opaque(&r.x, &attrs, &alen, NB_OPAQUE_MAX) || alen < 8)
		die("GETATTR: size not returned");
	size = (uint64_t)xdr_get_u32(attrs) << 32 | xdr_get_u32(attrs + 4);
	if (nb->write_size) {
		nb->size = nb->write_size;
	} else {
		nb->size = size;
		if (!size)
			die("%s is empty", nb->path);
	}
}

/* SEQUENCE + PUTFH(@fh) + one op encoded by the caller after this. */
static uint32_t call_on_fh(struct nb *nb, struct nb_enc *e, const uint8_t *fh, uint32_t fhlen,
			   unsigned int slot)
{
	uint32_t xid = call_begin(nb, e, 1, slot, 3);

	op_sequence(nb, e, slot);
	op_putfh(e, fh, fhlen);
	return xid;
}

static void nb_commit(struct nb *nb)
{
	struct nb_enc e;
	struct nb_reply r;
	uint32_t xid = call_on_fh(nb, &e, nb->fh, nb->fh_len, 0);

	e32(&e, NB_OP_COMMIT);
	e64(&e, 0);
	e32(&e, 0);
	call_sync(nb, &e, xid, &r, true);
	reply_sequence(nb, &r);
	reply_op_ok(&r, NB_OP_PUTFH, "PUTFH");
	reply_op_ok(&r, NB_OP_COMMIT, "COMMIT");
}

static void nb_teardown(struct nb *nb)
{
	struct nb_enc e;
	struct nb_reply r;
	uint32_t xid, st;

	xid = call_on_fh(nb, &e, nb->fh, nb->fh_len, 0);
	e32(&e, NB_OP_CLOSE);
	e32(&e, 0);
	efixed(&e, nb->stateid, NB_STATEID);
	call_sync(nb, &e, xid, &r, true);
	reply_sequence(nb, &r);
	reply_op_ok(&r, NB_OP_PUTFH, "PUTFH");
	reply_op_ok(&r, NB_OP_CLOSE, "CLOSE");

	if (nb->remove) {
		xid = call_on_fh(nb, &e, nb->dirfh, nb->dirfh_len, 0);
		e32(&e, NB_OP_REMOVE);
		eopaque(&e, nb->name, nb->name_len);
		call_sync(nb, &e, xid, &r, true);
		reply_sequence(nb, &r);
		reply_op_ok(&r, NB_OP_PUTFH, "PUTFH");
		st = reply_op(&r, NB_OP_REMOVE, "REMOVE");
		if (st) /* not fatal: the figures are out already */
			fprintf(stderr, "nfs_readbench: warning: REMOVE %.*s failed: %s\n",
				(int)nb->name_len, nb->name, nfs4_strerror(st));
	}

	xid = call_begin(nb, &e, 1, 0, 1);
	e32(&e, NB_OP_DESTROY_SESSION);
	efixed(&e, nb->sessionid, NB_SESSIONID);
	call_sync(nb, &e, xid, &r, true);
	reply_op_ok(&r, NB_OP_DESTROY_SESSION, "DESTROY_SESSION");

	xid = call_begin(nb, &e, 1, 0, 1);
	e32(&e, NB_OP_DESTROY_CLIENTID);
	e64(&e, nb->clientid);
	call_sync(nb, &e, xid, &r, true);
	reply_op_ok(&r, NB_OP_DESTROY_CLIENTID, "DESTROY_CLIENTID");
}

/* ------------------------------------------------------------ passes */

static void issue(struct nb *nb, unsigned int slot, struct nb_range rg)
{
	struct nb_enc e;
	struct nb_slot *s = &nb->slot[slot];

	s->xid = call_on_fh(nb, &e, nb->fh, nb->fh_len, slot);
	s->r = rg;
	s->busy = true;
	if (nb->write_size) {
		e32(&e, NB_OP_WRITE);
		efixed(&e, nb->stateid, NB_STATEID);
		e64(&e, rg.off);
		e32(&e, nb->stable);
		e32(&e, rg.len);
		call_send(nb, &e, nb->wdata, rg.len);
	} else {
		e32(&e, NB_OP_READ);
		efixed(&e, nb->stateid, NB_STATEID);
		e64(&e, rg.off);
		e32(&e, rg.len);
		call_send(nb, &e, NULL, 0);
	}
}

static void verify(struct nb *nb, uint64_t off, const uint8_t *data, uint32_t len)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = pread(nb->verify_fd, nb->vbuf + done, len - done, (off_t)(off + done));

		if (n < 0)
			die("pread %s: %s", nb->verify_path, strerror(errno));
		if (n == 0)
			die("%s is shorter than the file read", nb->verify_path);
		done += (size_t)n;
	}
	if (memcmp(nb->vbuf, data, len)) {
		uint32_t i = 0;

		while (nb->vbuf[i] == data[i])
			i++;
		die("data differs from %s at offset %" PRIu64, nb->verify_path, off + i);
	}
}

/*
 * The reply for a slot's call: bytes it moved. A short READ before EOF
 * puts the rest of its range on the retry list.
 */
static uint32_t complete(struct nb *nb, struct nb_reply *r, struct nb_slot *s,
			 struct nb_range *retry, unsigned int *nretry)
{
	const uint8_t *data;
	uint32_t got, st;
	bool eof;

	reply_sequence(nb, r);
	reply_op_ok(r, NB_OP_PUTFH, "PUTFH");
	st = reply_op(r, nb->write_size ? NB_OP_WRITE : NB_OP_READ,
		      nb->write_size ? "WRITE" : "READ");
	if (st == NB_ERR_DELAY) {
		/* the server is short of something: the range again, a little later */
		nb->delays++;
		usleep(1000);
		if (*nretry == NB_SLOTS_MAX)
			die("too many calls to retry");
		retry[(*nretry)++] = s->r;
		s->busy = false;
		return 0;
	}
	if (st)
		die("%s at %" PRIu64 " failed: %s", nb->write_size ? "WRITE" : "READ", s->r.off,
		    nfs4_strerror(st));
	if (nb->write_size) {
		uint32_t committed;

		dec32(r, &got, "WRITE");
		dec32(r, &committed, "WRITE");
		if (got > s->r.len)
			die("WRITE at %" PRIu64 ": server wrote %u of %u bytes", s->r.off, got,
			    s->r.len);
		eof = false;
	} else {
		if (xdr_dec_bool(&r->x, &eof) || xdr_dec_opaque(&r->x, &data, &got, s->r.len))
			die("READ at %" PRIu64 ": reply malformed or over %u bytes", s->r.off,
			    s->r.len);
		if (nb->verify_path)
			verify(nb, s->r.off, data, got);
	}
	if (got < s->r.len && !(eof && s->r.off + got >= nb->size)) {
		if (!got)
			die("%s at %" PRIu64 ": no progress (0 bytes, eof %d)",
			    nb->write_size ? "WRITE" : "READ", s->r.off, eof);
		if (*nretry == NB_SLOTS_MAX)
			die("too many short replies outstanding");
		retry[(*nretry)++] = (struct nb_range){ s->r.off + got, s->r.len - got };
	}
	s->busy = false;
	return got;
}

struct nb_pass {
	uint64_t bytes, ns, calls, client_cpu_ns, server_cpu_ns;
};

static void run_pass(struct nb *nb, struct nb_pass *p)
{
	struct nb_range retry[NB_SLOTS_MAX];
	unsigned int nretry = 0, inflight = 0, i;
	uint64_t next = 0;

	memset(p, 0, sizeof(*p));
	nb->delays = 0;
	p->ns = now_ns(CLOCK_MONOTONIC);
	for (;;) {
		struct nb_reply r;
		struct nb_slot *s;

		/* fill every free slot below depth */
		for (i = 0; i < nb->depth; i++) {
			struct nb_range rg;

			if (nb->slot[i].busy)
				continue;
			if (nretry) {
				rg = retry[--nretry];
			} else if (next < nb->size) {
				rg.off = next;
				rg.len = nb->size - next < nb->iosize ? (uint32_t)(nb->size - next)
								      : nb->iosize;
				next += rg.len;
			} else {
				break;
			}
			issue(nb, i, rg);
			inflight++;
			p->calls++;
		}
		if (!inflight)
			break;
		reply_next(nb, &r, true);
		s = &nb->slot[r.xid & 0xff];
		if ((r.xid & 0xff) >= nb->depth || !s->busy || s->xid != r.xid)
			die("reply with unexpected xid %#x", r.xid);
		p->bytes += complete(nb, &r, s, retry, &nretry);
		inflight--;
	}
	p->ns = now_ns(CLOCK_MONOTONIC) - p->ns;
}

/* ------------------------------------------------------------ main */

static uint64_t parse_size(const char *s, const char *what)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || end == s)
		die("%s: bad number '%s'", what, s);
	switch (*end) {
	case 'k':
	case 'K':
		v <<= 10;
		end++;
		break;
	case 'm':
	case 'M':
		v <<= 20;
		end++;
		break;
	case 'g':
	case 'G':
		v <<= 30;
		end++;
		break;
	}
	if (*end == 'i' && end[1] == 'B')
		end += 2;
	if (*end)
		die("%s: bad number '%s'", what, s);
	return v;
}

static void usage(FILE *out)
{
	fprintf(out,
		"usage: nfs_readbench [options] PATH\n"
		"Stream the file PATH (as the server's NFSv4 namespace names it, e.g. /big.dat)\n"
		"over NFSv4.1 with --depth READs in flight and print one key=value line per pass.\n"
		"  --host ADDR          server (default 127.0.0.1)\n"
		"  --port N             server port (default 2049)\n"
		"  --depth D            calls in flight, each on its own slot (default 16)\n"
		"  --size-per-read N    bytes per READ or WRITE, K/M suffixes (default 1M)\n"
		"  --passes P           passes over the file (default 3)\n"
		"  --minor 1|2          NFSv4 minor version (default 1)\n"
		"  --write SIZE         write SIZE bytes to PATH instead (created, truncated)\n"
		"  --stable unstable|datasync|filesync   WRITE stability (default unstable)\n"
		"  --remove             REMOVE PATH at the end (after --write)\n"
		"  --pid PID            also report the CPU time of process PID (the server)\n"
		"  --verify FILE        compare every byte read with FILE (slows the passes)\n"
		"  --label L            first word of each result line (default read/write)\n"
		"  --tls                RPC-with-TLS (RFC 9289); the certificate must name --host\n"
		"  --ca FILE            CA certificates (PEM) to trust (default: the system's)\n"
		"  --cert FILE          client certificate (PEM) for mutual TLS; implies --tls\n"
		"  --key FILE           its private key (default: in the --cert file)\n");
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "host", required_argument, NULL, 'H' },
		{ "port", required_argument, NULL, 'p' },
		{ "depth", required_argument, NULL, 'd' },
		{ "size-per-read", required_argument, NULL, 's' },
		{ "passes", required_argument, NULL, 'n' },
		{ "minor", required_argument, NULL, 'm' },
		{ "write", required_argument, NULL, 'w' },
		{ "stable", required_argument, NULL, 'S' },
		{ "remove", no_argument, NULL, 'R' },
		{ "pid", required_argument, NULL, 'P' },
		{ "verify", required_argument, NULL, 'V' },
		{ "label", required_argument, NULL, 'l' },
		{ "tls", no_argument, NULL, 'T' },
		{ "ca", required_argument, NULL, 'A' },
		{ "cert", required_argument, NULL, 'E' },
		{ "key", required_argument, NULL, 'K' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct nb *nb = calloc(1, sizeof(*nb));
	clockid_t server_clk = 0;
	unsigned int pass;
	uint64_t v;
	int c;

	if (!nb)
		die("calloc: %s", strerror(errno));
	nb->host = "127.0.0.1";
	nb->port = 2049;
	nb->depth = 16;
	nb->iosize = 1 << 20;
	nb->passes = 3;
	nb->minor = 1;
	nb->verify_fd = -1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'H':
			nb->host = optarg;
			break;
		case 'p':
			nb->port = (int)parse_size(optarg, "--port");
			break;
		case 'd':
			nb->depth = (unsigned int)parse_size(optarg, "--depth");
			break;
		case 's':
			v = parse_size(optarg, "--size-per-read");
			if (!v || v > (64U << 20))
				die("--size-per-read must be 1 byte to 64 MiB");
			nb->iosize = (uint32_t)v;
			break;
		case 'n':
			nb->passes = (unsigned int)parse_size(optarg, "--passes");
			break;
		case 'm':
			nb->minor = (unsigned int)parse_size(optarg, "--minor");
			break;
		case 'w':
			nb->write_size = parse_size(optarg, "--write");
			break;
		case 'S':
			if (!strcmp(optarg, "unstable"))
				nb->stable = 0;
			else if (!strcmp(optarg, "datasync"))
				nb->stable = 1;
			else if (!strcmp(optarg, "filesync"))
				nb->stable = 2;
			else
				die("--stable: unstable, datasync or filesync");
			break;
		case 'R':
			nb->remove = true;
			break;
		case 'P':
			nb->server_pid = (long)parse_size(optarg, "--pid");
			break;
		case 'V':
			nb->verify_path = optarg;
			break;
		case 'l':
			nb->label = optarg;
			break;
		case 'T':
			nb->tls = true;
			break;
		case 'A':
			nb->tls_o.ca = optarg;
			nb->tls = true;
			break;
		case 'E':
			nb->tls_o.cert = optarg;
			nb->tls = true;
			break;
		case 'K':
			nb->tls_o.key = optarg;
			nb->tls = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 1;
		}
	}
	if (optind + 1 != argc) {
		usage(stderr);
		return 1;
	}
	nb->path = argv[optind];
	if (!nb->depth || nb->depth > NB_SLOTS_MAX)
		die("--depth must be 1 to %d", NB_SLOTS_MAX);
	if (nb->minor < 1 || nb->minor > 2)
		die("--minor must be 1 or 2 (this client needs sessions)");
	if (nb->write_size && nb->verify_path)
		die("--verify checks reads; it does not go with --write");
	if (!nb->label)
		nb->label = nb->write_size ? "write" : "read";
	if (nb->server_pid) {
		c = clock_getcpuclockid((pid_t)nb->server_pid, &server_clk);
		if (c)
			die("clock_getcpuclockid %ld: %s", nb->server_pid, strerror(c));
	}
	if (nb->verify_path) {
		nb->verify_fd = open(nb->verify_path, O_RDONLY | O_CLOEXEC);
		if (nb->verify_fd < 0)
			die("open %s: %s", nb->verify_path, strerror(errno));
		nb->vbuf = malloc(nb->iosize);
		if (!nb->vbuf)
			die("malloc: %s", strerror(errno));
	}
	nb->rec_max = (size_t)nb->iosize + NB_REPLY_SLACK;
	nb->rec = malloc(nb->rec_max);
	if (!nb->rec)
		die("malloc %zu: %s", nb->rec_max, strerror(errno));
	memset(nb->rec, 0, nb->rec_max); /* touched before any clock starts */
	if (nb->write_size) {
		uint64_t i;

		nb->wdata = malloc(nb->iosize);
		if (!nb->wdata)
			die("malloc: %s", strerror(errno));
		for (i = 0; i < nb->iosize; i++)
			nb->wdata[i] = (uint8_t)(i * 131 + 7);
	}

	nb_connect(nb);
	nb_null(nb);
	nb_exchange_id(nb);
	nb_create_session(nb);
	nb_reclaim_complete(nb);
	nb_open(nb);
	fprintf(stderr, "nfs_readbench: %s %s: %" PRIu64 " bytes, %u x %u bytes in flight\n",
		nb->write_size ? "writing" : "reading", nb->path, nb->size, nb->depth, nb->iosize);

	for (pass = 1; pass <= nb->passes; pass++) {
		struct nb_pass p;
		uint64_t c0 = now_ns(CLOCK_PROCESS_CPUTIME_ID);
		uint64_t s0 = nb->server_pid ? now_ns(server_clk) : 0;
		uint64_t commit_ns = 0;
		char extra[96] = "";

		run_pass(nb, &p);
		p.client_cpu_ns = now_ns(CLOCK_PROCESS_CPUTIME_ID) - c0;
		p.server_cpu_ns = nb->server_pid ? now_ns(server_clk) - s0 : 0;
		if (p.bytes != nb->size)
			die("pass %u moved %" PRIu64 " of %" PRIu64 " bytes", pass, p.bytes,
			    nb->size);
		if (nb->write_size) {
			commit_ns = now_ns(CLOCK_MONOTONIC);
			nb_commit(nb);
			commit_ns = now_ns(CLOCK_MONOTONIC) - commit_ns;
			snprintf(extra, sizeof(extra), " commit_ns=%" PRIu64, commit_ns);
		}
		if (nb->server_pid)
			snprintf(extra + strlen(extra), sizeof(extra) - strlen(extra),
				 " server_cpu_ns=%" PRIu64, p.server_cpu_ns);
		printf("%s pass=%u bytes=%" PRIu64 " ns=%" PRIu64
		       " GBps=%.3f MBps=%.1f calls=%" PRIu64 " depth=%u iosize=%u delays=%" PRIu64
		       " client_cpu_ns=%" PRIu64 "%s\n",
		       nb->label, pass, p.bytes, p.ns, (double)p.bytes / (double)p.ns,
		       (double)p.bytes / (double)p.ns * 1e3, p.calls, nb->depth, nb->iosize,
		       nb->delays, p.client_cpu_ns, extra);
		fflush(stdout);
	}
	nb_teardown(nb);
	if (nb->tls)
		nfs_tls_end(&nb->tls_s, true);
	free(nb->sbuf);
	close(nb->fd);
	if (nb->verify_fd >= 0)
		close(nb->verify_fd);
	free(nb->vbuf);
	free(nb->wdata);
	free(nb->rec);
	free(nb);
	return 0;
}
