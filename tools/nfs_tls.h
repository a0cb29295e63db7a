/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The client side of RPC-with-TLS (RFC 9289) on a connected TCP socket,
 * with OpenSSL 3.0: the AUTH_TLS probe, the TLS 1.3 handshake, then a
 * byte stream in which RPC records flow as they would on the bare
 * socket. Used by the lacuna tool's TLS transport (nfs_client_tls.c)
 * and by bench/nfs_readbench.
 *
 * Operation
 * ---------
 * Probe. In the clear, one RPC record: a NULL call (procedure 0 of the
 * NFS program, version 4) with the credential flavor AUTH_TLS (7) and an
 * empty body, verifier AUTH_NONE. A server that does RPC-with-TLS answers
 * MSG_ACCEPTED, SUCCESS, with an AUTH_NONE verifier whose body is the 8
 * bytes "STARTTLS". Anything else (a denial, another verifier, the
 * connection closed, silence for the socket's receive timeout) means
 * the server does not do RPC-with-TLS, and says so.
 *
 * Handshake. TLS 1.3 only; ALPN "sunrpc" offered (a server may ignore
 * it); the server's certificate verified against the CA file given, or
 * the system's trust store, and its name checked against the host the
 * user named (an address as an iPAddress SAN, a name as a DNS SAN; the
 * name also goes out as SNI). A client certificate and its key, when
 * given, are offered for mutual TLS. Failures name OpenSSL's reason:
 * the verification error for a certificate the client rejects, the
 * alert or library reason for anything else.
 *
 * Stream. After the handshake OpenSSL hands its traffic secrets over and
 * common/tls13_rec.h carries the records: nfs_tls_write() seals
 * everything it is given (one TLS record per 16 KiB) into a buffer of a
 * few records and sends it; nfs_tls_read() receives ciphertext as it
 * comes (up to NFS_TLS_RBUF at once) and opens one record at a time
 * straight into the caller's buffer when it has room for a whole record,
 * else in place. A KeyUpdate of the server is followed (and answered
 * when asked for), a NewSessionTicket skipped, close_notify is the end.
 * This is the one record path: only the suites tls13_rec does are
 * offered (NFS_TLS_SUITES), and when the secrets cannot be had all the
 * same (out of memory) nfs_tls_start() fails. Reads and writes block on
 * the socket; a receive timeout set on it (SO_RCVTIMEO) ends a
 * read with -ETIMEDOUT. SIGPIPE is ignored from nfs_tls_start() on when
 * it was at its default (OpenSSL writes to the socket with write(2)):
 * a write to a closed connection is then an error, not the end of the
 * program.
 *
 * Counting: the bytes that crossed the socket, probe and TLS framing
 * included (nfs_tls_wire()).
 *
 * Errors: 0 or a negative errno with a message in err:
 * -EPROTONOSUPPORT the server does not do RPC-with-TLS; -EKEYREJECTED
 * its certificate failed verification; -ECONNABORTED the handshake or a
 * later TLS record failed; -EINVAL a certificate, key or CA file could
 * not be loaded.
 *
 * Threads: a struct nfs_tls is used by one thread.
 */
#ifndef LACUNA_NFS_TLS_H
#define LACUNA_NFS_TLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define NFS_TLS_ALPN "sunrpc"
#define NFS_TLS_STARTTLS "STARTTLS"  /* the probe reply's verifier body */
#define NFS_TLS_PROBE_REPLY_MAX 1024 /* bytes of the probe's reply read */
#define NFS_TLS_DESC_MAX 96

struct nfs_tls_opts {
	const char *ca;	  /* PEM trust anchors; NULL: the system's store */
	const char *cert; /* client certificate chain, PEM (mutual TLS); NULL: none */
	const char *key;  /* its private key, PEM; NULL: in the cert file */
	const char *host; /* the name or address the server's certificate must match */
};

struct ssl_ctx_st;
struct ssl_st;
struct tls13_conn;

/* ciphertext received at once, and sent at once (four records) */
#define NFS_TLS_RBUF (256 * 1024)
/* The TLS 1.3 suites offered: exactly those common/tls13_rec.h does. */
#define NFS_TLS_SUITES "TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256:TLS_AES_128_GCM_SHA256"
#define NFS_TLS_WBUF (4 * (16384 + 22))

struct nfs_tls {
	struct ssl_ctx_st *ctx;
	struct ssl_st *ssl;
	/* after the handshake, records by common/tls13_rec.h (NULL: by OpenSSL) */
	struct tls13_conn *rec;
	int fd;
	uint8_t *rbuf, *wbuf;
	size_t roff, rlen; /* ciphertext in rbuf not yet opened */
	uint8_t *plain;	   /* plaintext opened in rbuf not yet read */
	size_t plen;
	uint64_t rec_in, rec_out;     /* bytes received and sent after the handshake */
	uint64_t probe_in, probe_out; /* bytes of the clear-text probe */
	bool mtls;		      /* a client certificate was offered */
	char desc[NFS_TLS_DESC_MAX];  /* "TLSv1.3 TLS_AES_256_GCM_SHA384" after the handshake */
};

/* Probe, then handshake on @fd (blocking): see the Operation essay. */
int nfs_tls_start(struct nfs_tls *t, int fd, const struct nfs_tls_opts *o, char *err,
		  size_t errlen);
/* Write all @len bytes. */
int nfs_tls_write(struct nfs_tls *t, const void *buf, size_t len, char *err, size_t errlen);
/* Up to @len bytes: > 0 read, 0 the server closed the connection, < 0 an error. */
ssize_t nfs_tls_read(struct nfs_tls *t, void *buf, size_t len, char *err, size_t errlen);
/* Bytes received and sent on the socket so far, probe and TLS framing included. */
void nfs_tls_wire(const struct nfs_tls *t, uint64_t *in, uint64_t *out);
/*
 * Send close_notify if @notify (best effort; not after a failure) and
 * free; the socket stays open.
 */
void nfs_tls_end(struct nfs_tls *t, bool notify);

#endif
