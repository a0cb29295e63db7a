// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * lt_nfs_torture's NFSv4.2 client: the calls its readers and NFS writers
 * make, over TCP, encoded by hand and decoded as far as the checks need.
 *
 * Operation
 * ---------
 * Sessions. Every reader and NFS writer has its own TCP connection and
 * session (struct lt_conn) with one slot, so one call at a time, its
 * sequence id counted up by each SEQUENCE, no reply cached. lt_nfs_setup()
 * makes them: EXCHANGE_ID, CREATE_SESSION asking for replies of
 * LT_REPLY_MAX bytes (a READ_PLUS of LT_COUNT_MAX with its segments) and
 * requests as large as the caller needs (a writer's: a WRITE of maxwrite
 * with its header), RECLAIM_COMPLETE, then PUTROOTFH, a LOOKUP per
 * component of --name and GETFH for the file's handle. Every later call
 * is one COMPOUND of SEQUENCE, PUTFH of that handle and one op.
 *
 * Records. A call goes out as one RPC record under AUTH_SYS; a WRITE's
 * data follows the encoded call straight from the writer's buffer. A
 * reply may come in several fragments, gathered in the connection's reply
 * buffer. lt_vary_header() draws the lengths of the COMPOUND tag, the
 * AUTH_SYS machine name and its gids for a writer's next call, so that
 * WRITE data lands at many offsets of the server's receive buffer.
 *
 * Errors. A READ_PLUS's status goes back to the reader for the checks to
 * judge; NFS4ERR_DELAY to a WRITE or DEALLOCATE is asked again. Any other
 * failed op, a reply that does not decode or does not match its call, or
 * a lost connection ends the run (exit status 2, the call named).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "lt_nfs_torture.h"

#define LT_TAG_MAX 256	    /* NFS4_TAG_MAX */
#define LT_MACHINE_MAX 255  /* AUTH_SYS machinename<255> */
#define LT_GIDS_MAX 16	    /* AUTH_SYS gids<16> */
#define LT_DELAY_TRIES 1000 /* NFS4ERR_DELAY answers to one call before giving up */

/* NFSv4 numbers (RFC 8881, RFC 7862) only the client uses */
enum {
	OP_CLOSE = 4,
	OP_COMMIT = 5,
	OP_GETATTR = 9,
	OP_GETFH = 10,
	OP_LOOKUP = 15,
	OP_OPEN = 18,
	OP_PUTFH = 22,
	OP_PUTROOTFH = 24,
	OP_WRITE = 38,
	OP_EXCHANGE_ID = 42,
	OP_CREATE_SESSION = 43,
	OP_SEQUENCE = 53,
	OP_RECLAIM_COMPLETE = 58,
	OP_DEALLOCATE = 62,
	OP_READ_PLUS = 68,
	NFS4ERR_DELAY = 10008,
	NFS4ERR_COMPLETE_ALREADY = 10054,
	FATTR4_MAXWRITE = 31,
	OPEN4_SHARE_ACCESS_WRITE = 2,
	OPEN4_SHARE_DENY_NONE = 0,
	OPEN4_NOCREATE = 0,
	CLAIM_FH = 4,
};

struct enc {
	uint8_t b[4096];
	size_t n;
};

static void e32(struct enc *e, uint32_t v)
{
	if (e->n + 4 > sizeof(e->b))
		lt_die("call too large");
	v = htonl(v);
	memcpy(e->b + e->n, &v, 4);
	e->n += 4;
}

static void e64(struct enc *e, uint64_t v)
{
	e32(e, (uint32_t)(v >> 32));
	e32(e, (uint32_t)v);
}

static void ebytes(struct enc *e, const void *p, size_t len)
{
	size_t pad = (4 - len % 4) % 4;

	if (e->n + len + pad > sizeof(e->b))
		lt_die("call too large");
	memcpy(e->b + e->n, p, len);
	memset(e->b + e->n + len, 0, pad);
	e->n += len + pad;
}

static void eopaque(struct enc *e, const void *p, size_t len)
{
	e32(e, (uint32_t)len);
	ebytes(e, p, len);
}

struct dec {
	const uint8_t *p, *end;
	bool bad;
};

static uint32_t d32(struct dec *d)
{
	uint32_t v;

	if (d->bad || d->end - d->p < 4) {
		d->bad = true;
		return 0;
	}
	memcpy(&v, d->p, 4);
	d->p += 4;
	return ntohl(v);
}

static uint64_t d64(struct dec *d)
{
	uint64_t hi = d32(d);

	return hi << 32 | d32(d);
}

/* an opaque<>: its bytes in place, NULL if malformed */
static const uint8_t *dopaque(struct dec *d, uint32_t *len, uint32_t max)
{
	uint32_t n = d32(d);
	size_t padded = ((size_t)n + 3) & ~(size_t)3;
	const uint8_t *p = d->p;

	if (d->bad || n > max || (size_t)(d->end - d->p) < padded) {
		d->bad = true;
		return NULL;
	}
	d->p += padded;
	*len = n;
	return p;
}

static void dskip(struct dec *d, size_t n)
{
	if (d->bad || (size_t)(d->end - d->p) < n) {
		d->bad = true;
		return;
	}
	d->p += n;
}

/* RPC call header + COMPOUND header (minor 2) of @nops ops */
static void call_begin(struct lt_conn *c, struct enc *e, uint32_t nops)
{
	static const char tag[LT_TAG_MAX] = "lt_nfs_torture";
	char machine[LT_MACHINE_MAX];
	uint32_t i;

	memset(machine, '-', sizeof(machine));
	memcpy(machine, "lt_nfs_torture", 14);
	e->n = 4; /* record mark, filled by call() */
	e32(e, ++c->xid);
	e32(e, 0); /* CALL */
	e32(e, 2);
	e32(e, 100003);
	e32(e, 4);
	e32(e, 1); /* COMPOUND */
	e32(e, 1); /* AUTH_SYS */
	e32(e, 4 + 4 + ((c->machlen + 3) & ~3u) + 4 + 4 + 4 + 4 * c->ngids);
	e32(e, 0); /* stamp */
	eopaque(e, machine, c->machlen);
	e32(e, 0); /* uid */
	e32(e, 0); /* gid */
	e32(e, c->ngids);
	for (i = 0; i < c->ngids; i++)
		e32(e, 0);
	e32(e, 0); /* verifier AUTH_NONE */
	e32(e, 0);
	eopaque(e, tag, c->taglen);
	e32(e, 2); /* minor version */
	e32(e, nops);
}

static void op_sequence(struct lt_conn *c, struct enc *e)
{
	e32(e, OP_SEQUENCE);
	ebytes(e, c->sessionid, 16);
	e32(e, ++c->seq);
	e32(e, 0); /* slot */
	e32(e, 0); /* highest slot */
	e32(e, 0); /* do not cache */
}

static void op_putfh(struct lt_conn *c, struct enc *e)
{
	e32(e, OP_PUTFH);
	eopaque(e, c->fh, c->fhlen);
}

static void recv_all(int fd, uint8_t *p, size_t n)
{
	while (n) {
		ssize_t k = recv(fd, p, n, 0);

		if (k <= 0)
			lt_die("recv from lacunad: %s", k ? strerror(errno) : "connection closed");
		p += k;
		n -= (size_t)k;
	}
}

static void send_all(int fd, struct iovec *iov, int n)
{
	while (n) {
		struct msghdr m = { .msg_iov = iov, .msg_iovlen = (size_t)n };
		ssize_t k = sendmsg(fd, &m, MSG_NOSIGNAL);

		if (k < 0) {
			if (errno == EINTR)
				continue;
			lt_die("send to lacunad: %s", strerror(errno));
		}
		while (n && (size_t)k >= iov->iov_len) {
			k -= (ssize_t)iov->iov_len;
			iov++;
			n--;
		}
		if (n) {
			iov->iov_base = (uint8_t *)iov->iov_base + k;
			iov->iov_len -= (size_t)k;
		}
	}
}

/*
 * Send the call (its encoded part, then @dlen bytes of @data as the end of
 * the last op's opaque, padded), read the reply record into c->rbuf and
 * decode it up to the COMPOUND status and op count; returns the COMPOUND
 * status.
 */
static uint32_t call_data(struct lt_conn *c, struct enc *e, const uint8_t *data, size_t dlen,
			  struct dec *d)
{
	static const uint8_t zeros[4];
	size_t pad = (4 - dlen % 4) % 4;
	uint32_t mark = htonl(0x80000000u | (uint32_t)(e->n - 4 + dlen + pad)), xid, n, st;
	struct iovec iov[3] = {
		{ e->b, e->n },
		{ (void *)data, dlen },
		{ (void *)zeros, pad },
	};

	memcpy(e->b, &mark, 4);
	send_all(c->sock, iov, 3);
	c->rlen = 0;
	for (;;) {
		recv_all(c->sock, (uint8_t *)&mark, 4);
		mark = ntohl(mark);
		n = mark & 0x7fffffff;
		if (c->rlen + n > c->rcap)
			lt_die("a reply record of more than %zu bytes", c->rcap);
		recv_all(c->sock, c->rbuf + c->rlen, n);
		c->rlen += n;
		if (mark & 0x80000000u)
			break;
	}
	d->p = c->rbuf;
	d->end = c->rbuf + c->rlen;
	d->bad = false;
	xid = d32(d);
	if (xid != c->xid)
		lt_die("reply xid %#x to call %#x", xid, c->xid);
	if (d32(d) != 1 || d32(d) != 0)
		lt_die("reply %#x is not MSG_ACCEPTED", xid);
	d32(d);
	dskip(d, (d32(d) + 3) & ~3u); /* verifier */
	if (d32(d) != 0)
		lt_die("reply %#x: accept_stat not SUCCESS", xid);
	st = d32(d);
	dskip(d, (d32(d) + 3) & ~3u); /* tag */
	d32(d);			      /* number of results */
	if (d->bad)
		lt_die("reply %#x truncated", xid);
	return st;
}

static uint32_t call(struct lt_conn *c, struct enc *e, struct dec *d)
{
	return call_data(c, e, NULL, 0, d);
}

/* the next result must be @op; returns its status */
static uint32_t res_op(struct dec *d, uint32_t op, const char *name)
{
	uint32_t got = d32(d), st = d32(d);

	if (d->bad)
		lt_die("reply truncated before %s", name);
	if (got != op)
		lt_die("result of op %u where %s was expected (status %u)", got, name, st);
	return st;
}

static void res_sequence(struct dec *d)
{
	uint32_t st = res_op(d, OP_SEQUENCE, "SEQUENCE");

	if (st)
		lt_die("SEQUENCE failed: status %u", st);
	dskip(d, 16 + 5 * 4);
}

/* SEQUENCE and PUTFH results, both must have succeeded */
static void res_seq_putfh(struct dec *d)
{
	uint32_t st;

	res_sequence(d);
	st = res_op(d, OP_PUTFH, "PUTFH");
	if (st)
		lt_die("PUTFH failed: status %u", st);
}

/* Begin a COMPOUND of SEQUENCE, PUTFH of the file and @op, whose arguments follow */
static void file_op(struct lt_conn *c, struct enc *e, uint32_t op)
{
	call_begin(c, e, 3);
	op_sequence(c, e);
	op_putfh(c, e);
	e32(e, op);
}

/*
 * Connect, make a session whose requests may be @maxreq bytes, complete
 * the reclaims and look up the file.
 */
void lt_nfs_setup(struct lt_conn *c, uint32_t maxreq)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)lt.port) };
	char owner[64];
	struct enc e;
	struct dec d;
	uint32_t csseq, st, len;
	const uint8_t *p;
	const char *n, *s;
	int one = 1, i;

	if (inet_pton(AF_INET, lt.host, &sa.sin_addr) != 1)
		lt_die("bad --host %s", lt.host);
	c->machlen = 14; /* "lt_nfs_torture" */
	c->sock = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (c->sock < 0)
		lt_die("socket: %s", strerror(errno));
	/* as root from a reserved port, as the kernel client: exports are secure by default */
	if (geteuid() == 0 && bindresvport(c->sock, NULL) < 0)
		fprintf(stderr, "lt_nfs_torture: bindresvport: %s: from an ordinary port\n",
			strerror(errno));
	if (connect(c->sock, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		lt_die("connect to %s:%u: %s", lt.host, lt.port, strerror(errno));
	setsockopt(c->sock, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));

	/* EXCHANGE_ID */
	snprintf(owner, sizeof(owner), "lt_nfs_torture-%d-%u-%" PRIu64, (int)getpid(), c->id,
		 lt.seed);
	call_begin(c, &e, 1);
	e32(&e, OP_EXCHANGE_ID);
	e64(&e, (uint64_t)time(NULL) << 8 | c->id);
	eopaque(&e, owner, strlen(owner));
	e32(&e, 0); /* flags */
	e32(&e, 0); /* SP4_NONE */
	e32(&e, 0); /* no implementation id */
	call(c, &e, &d);
	st = res_op(&d, OP_EXCHANGE_ID, "EXCHANGE_ID");
	if (st)
		lt_die("EXCHANGE_ID failed: status %u", st);
	c->clientid = d64(&d);
	csseq = d32(&d);

	/* CREATE_SESSION: one slot, replies up to LT_REPLY_MAX */
	call_begin(c, &e, 1);
	e32(&e, OP_CREATE_SESSION);
	e64(&e, c->clientid);
	e32(&e, csseq);
	e32(&e, 0); /* flags */
	for (i = 0; i < 2; i++) {
		e32(&e, 0);
		e32(&e, i ? 4096 : maxreq);
		e32(&e, i ? 4096 : (uint32_t)LT_REPLY_MAX);
		e32(&e, i ? 0 : 4096);
		e32(&e, i ? 2 : 8);
		e32(&e, 1);
		e32(&e, 0);
	}
	e32(&e, 0x40000000); /* callback program */
	e32(&e, 1);
	e32(&e, 0); /* AUTH_NONE */
	call(c, &e, &d);
	st = res_op(&d, OP_CREATE_SESSION, "CREATE_SESSION");
	if (st)
		lt_die("CREATE_SESSION failed: status %u", st);
	if ((size_t)(d.end - d.p) < 16)
		lt_die("CREATE_SESSION reply truncated");
	memcpy(c->sessionid, d.p, 16);
	d.p += 16;
	d32(&d);
	d32(&d);
	d32(&d); /* headerpad */
	c->maxreq = d32(&d);
	len = d32(&d);
	if (d.bad || len < LT_COUNT_MAX + 1024)
		lt_die("CREATE_SESSION granted replies of %u bytes only", len);
	c->seq = 0;

	/* RECLAIM_COMPLETE */
	call_begin(c, &e, 2);
	op_sequence(c, &e);
	e32(&e, OP_RECLAIM_COMPLETE);
	e32(&e, 0);
	call(c, &e, &d);
	res_sequence(&d);
	st = res_op(&d, OP_RECLAIM_COMPLETE, "RECLAIM_COMPLETE");
	if (st && st != NFS4ERR_COMPLETE_ALREADY)
		lt_die("RECLAIM_COMPLETE failed: status %u", st);

	/* the file handle: PUTROOTFH, LOOKUP each component, GETFH */
	{
		unsigned int ncomp = 0;

		for (n = lt.name; *n; n = *s ? s + 1 : s) {
			s = strchrnul(n, '/');
			if (s > n)
				ncomp++;
		}
		call_begin(c, &e, 3 + ncomp);
		op_sequence(c, &e);
		e32(&e, OP_PUTROOTFH);
		for (n = lt.name; *n; n = *s ? s + 1 : s) {
			s = strchrnul(n, '/');
			if (s > n) {
				e32(&e, OP_LOOKUP);
				eopaque(&e, n, (size_t)(s - n));
			}
		}
		e32(&e, OP_GETFH);
		st = call(c, &e, &d);
		if (st)
			lt_die("LOOKUP of %s failed: status %u", lt.name, st);
		res_sequence(&d);
		res_op(&d, OP_PUTROOTFH, "PUTROOTFH");
		while (ncomp--)
			res_op(&d, OP_LOOKUP, "LOOKUP");
		res_op(&d, OP_GETFH, "GETFH");
		p = dopaque(&d, &len, LT_FH_MAX);
		if (!p)
			lt_die("GETFH reply malformed");
		memcpy(c->fh, p, len);
		c->fhlen = len;
	}
}

void lt_conn_init(struct lt_conn *c, unsigned int id, size_t rcap)
{
	c->id = id;
	c->xid = (uint32_t)(id + 1) << 24;
	c->rcap = rcap;
	c->rbuf = malloc(rcap);
	if (!c->rbuf)
		lt_die("malloc: %s", strerror(ENOMEM));
}

void lt_conn_close(struct lt_conn *c)
{
	close(c->sock);
	free(c->rbuf);
}

/* The server's maxwrite (GETATTR of the file) */
uint64_t lt_nfs_maxwrite(struct lt_conn *c)
{
	struct enc e;
	struct dec d;
	uint32_t st, nw, len, w0 = 0, i;
	uint64_t v;

	file_op(c, &e, OP_GETATTR);
	e32(&e, 1);
	e32(&e, 1u << FATTR4_MAXWRITE);
	call(c, &e, &d);
	res_seq_putfh(&d);
	st = res_op(&d, OP_GETATTR, "GETATTR");
	if (st)
		lt_die("GETATTR(maxwrite) failed: status %u", st);
	nw = d32(&d);
	for (i = 0; i < nw && !d.bad; i++) {
		uint32_t w = d32(&d);

		if (i == 0)
			w0 = w;
	}
	len = d32(&d);
	v = d64(&d);
	if (d.bad || !(w0 & 1u << FATTR4_MAXWRITE) || len != 8)
		lt_die("GETATTR(maxwrite) reply malformed or without maxwrite");
	return v;
}

/* OPEN the file for writing (CLAIM_FH, no create, deny none): the open stateid */
void lt_nfs_open(struct lt_writer *w)
{
	struct lt_conn *c = &w->c;
	char owner[32];
	struct enc e;
	struct dec d;
	uint32_t st;

	snprintf(owner, sizeof(owner), "lt_nfs_torture-w%u", w->id);
	file_op(c, &e, OP_OPEN);
	e32(&e, 0); /* seqid: ignored in 4.1 */
	e32(&e, OPEN4_SHARE_ACCESS_WRITE);
	e32(&e, OPEN4_SHARE_DENY_NONE);
	e64(&e, c->clientid);
	eopaque(&e, owner, strlen(owner));
	e32(&e, OPEN4_NOCREATE);
	e32(&e, CLAIM_FH);
	call(c, &e, &d);
	res_seq_putfh(&d);
	st = res_op(&d, OP_OPEN, "OPEN");
	if (st)
		lt_die("OPEN of %s for writing failed: status %u", lt.name, st);
	if ((size_t)(d.end - d.p) < 16)
		lt_die("OPEN reply truncated");
	memcpy(w->open_sid, d.p, 16);
}

void lt_nfs_close(struct lt_writer *w)
{
	struct lt_conn *c = &w->c;
	struct enc e;
	struct dec d;
	uint32_t st;

	c->taglen = c->ngids = 0;
	c->machlen = 14;
	file_op(c, &e, OP_CLOSE);
	e32(&e, 0);
	ebytes(&e, w->open_sid, 16);
	call(c, &e, &d);
	res_seq_putfh(&d);
	st = res_op(&d, OP_CLOSE, "CLOSE");
	if (st)
		lt_die("CLOSE failed: status %u", st);
}

static const uint8_t *io_stateid(struct lt_writer *w)
{
	static const uint8_t anon[16];

	return w->anon ? anon : w->open_sid;
}

/* Vary what the next call carries ahead of its ops */
void lt_vary_header(struct lt_writer *w)
{
	w->c.taglen = (uint32_t)lt_rnd_in(&w->rng, 0, LT_TAG_MAX);
	w->c.machlen = (uint32_t)lt_rnd_in(&w->rng, 0, LT_MACHINE_MAX);
	w->c.ngids = (uint32_t)lt_rnd_in(&w->rng, 0, LT_GIDS_MAX);
}

/*
 * NFS4ERR_DELAY (the server out of buffers for the moment) changes
 * nothing: the writer asks again within the same call of the history,
 * which then lasts until the answer that is not DELAY.
 */
static bool delayed(uint32_t st, unsigned int *tries, const char *what)
{
	if (st != NFS4ERR_DELAY)
		return false;
	if (++*tries > LT_DELAY_TRIES)
		lt_die("%s: still NFS4ERR_DELAY after %u tries", what, LT_DELAY_TRIES);
	usleep(1000u << (*tries < 6 ? *tries : 6));
	return true;
}

/* SEQUENCE + PUTFH + WRITE of region r's bytes; the write verifier in @verf */
void lt_nfs_write(struct lt_writer *w, const struct lt_region *r, const uint8_t *data,
		  uint32_t stable, uint8_t *verf)
{
	struct lt_conn *c = &w->c;
	uint32_t st, count, committed, at;
	unsigned int tries = 0;
	struct enc e;
	struct dec d;

	do {
		file_op(c, &e, OP_WRITE);
		ebytes(&e, io_stateid(w), 16);
		e64(&e, r->start);
		e32(&e, stable);
		e32(&e, (uint32_t)r->len);
		if (e.n - 4 + r->len + 3 > c->maxreq)
			lt_die("a WRITE of %" PRIu64
			       " bytes does not fit the session's requests of %u",
			       r->len, c->maxreq);
		/* where the data sits in the record (op_lock held) */
		at = (uint32_t)(e.n - 4);
		if (at < lt.data_off_min)
			lt.data_off_min = at;
		if (at > lt.data_off_max)
			lt.data_off_max = at;
		call_data(c, &e, data, r->len, &d);
		res_seq_putfh(&d);
		st = res_op(&d, OP_WRITE, "WRITE");
	} while (delayed(st, &tries, "WRITE"));
	if (st)
		lt_die("WRITE of [%" PRIu64 ", +%" PRIu64 ") failed: status %u", r->start, r->len,
		       st);
	count = d32(&d);
	committed = d32(&d);
	if (d.bad || (size_t)(d.end - d.p) < 8)
		lt_die("WRITE reply truncated");
	memcpy(verf, d.p, 8);
	if (count != r->len)
		lt_die("WRITE of %" PRIu64 " bytes wrote %u", r->len, count);
	if (committed < stable)
		lt_die("WRITE asked stable %u, got %u", stable, committed);
}

void lt_nfs_commit(struct lt_writer *w, const struct lt_region *r, const uint8_t *verf)
{
	struct lt_conn *c = &w->c;
	struct enc e;
	struct dec d;
	uint32_t st;

	lt_vary_header(w);
	file_op(c, &e, OP_COMMIT);
	e64(&e, r->start);
	e32(&e, (uint32_t)r->len);
	call(c, &e, &d);
	res_seq_putfh(&d);
	st = res_op(&d, OP_COMMIT, "COMMIT");
	if (st)
		lt_die("COMMIT failed: status %u", st);
	if ((size_t)(d.end - d.p) < 8)
		lt_die("COMMIT reply truncated");
	if (memcmp(d.p, verf, 8))
		lt_die("COMMIT's write verifier differs from the WRITE's (a server restart?)");
}

void lt_nfs_deallocate(struct lt_writer *w, const struct lt_region *r)
{
	struct lt_conn *c = &w->c;
	unsigned int tries = 0;
	struct enc e;
	struct dec d;
	uint32_t st;

	do {
		file_op(c, &e, OP_DEALLOCATE);
		ebytes(&e, io_stateid(w), 16);
		e64(&e, r->start);
		e64(&e, r->len);
		call(c, &e, &d);
		res_seq_putfh(&d);
		st = res_op(&d, OP_DEALLOCATE, "DEALLOCATE");
	} while (delayed(st, &tries, "DEALLOCATE"));
	if (st)
		lt_die("DEALLOCATE of [%" PRIu64 ", +%" PRIu64 ") failed: status %u", r->start,
		       r->len, st);
}

/* SEQUENCE + PUTFH + READ_PLUS(anonymous stateid, off, count), decoded into rd */
void lt_read_plus(struct lt_reader *rd)
{
	struct lt_conn *c = &rd->c;
	struct enc e;
	struct dec d;
	uint32_t n, i, len = 0;
	static const uint8_t anon[16];

	file_op(c, &e, OP_READ_PLUS);
	ebytes(&e, anon, 16);
	e64(&e, rd->off);
	e32(&e, (uint32_t)rd->count);
	call(c, &e, &d);
	res_seq_putfh(&d);
	rd->nsegs = 0;
	rd->status = res_op(&d, OP_READ_PLUS, "READ_PLUS");
	if (rd->status)
		return;
	rd->eof = d32(&d) != 0;
	n = d32(&d);
	if (d.bad || n > LT_SEGS_MAX)
		lt_die("READ_PLUS reply malformed (%u segments)", n);
	for (i = 0; i < n; i++) {
		struct lt_seg *g = &rd->segs[i];

		g->kind = d32(&d);
		g->off = d64(&d);
		if (g->kind == CONTENT_DATA) {
			g->data = dopaque(&d, &len, LT_REPLY_MAX);
			g->len = len;
		} else {
			g->data = NULL;
			g->len = d64(&d);
		}
		if (d.bad)
			lt_die("READ_PLUS reply truncated in segment %u of %u", i, n);
	}
	rd->nsegs = n;
}
