/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A TLS 1.3 record layer (RFC 8446 section 5) for a connection whose
 * handshake OpenSSL made: what kTLS does in the kernel, in user space,
 * so that records are sealed straight from a reply's iovecs into the
 * ciphertext buffer and opened in place or straight into the reader's
 * buffer, without OpenSSL's own record buffers and the copies through
 * them.
 *
 * Operation
 * ---------
 * Secrets. tls13_capture() sets a keylog callback on an SSL_CTX; during
 * each handshake it keeps the CLIENT_ and SERVER_TRAFFIC_SECRET_0 lines
 * with the SSL (ex_data). tls13_take() after a finished handshake turns
 * them, with the negotiated suite (TLS_AES_128_GCM_SHA256,
 * TLS_AES_256_GCM_SHA384, TLS_CHACHA20_POLY1305_SHA256), into a
 * struct tls13_conn: per direction the write key and iv (HKDF-Expand-
 * Label, RFC 8446 section 7.1 and 7.3) and a sequence number from 0.
 * The SSL must have read no record past the peer's Finished nor written
 * one past its own (no read-ahead; the server sends no session tickets):
 * from then on the caller moves records, not OpenSSL.
 *
 * Records. tls13_seal() makes one record of type @type from up to
 * TLS13_PLAIN_MAX bytes of an iovec array. tls13_open() takes one whole
 * record (tls13_rec_len() says how long one is), checks its header and
 * length (2^14 + 256 of ciphertext at most), decrypts it into @out (in
 * place when @out is the record's body) and strips the padding and the
 * content type. tls13_recv() does that and acts on what is not
 * application data: a KeyUpdate (section 4.6.3) moves the read key on
 * and, when the peer asks, schedules our own (tls13_send_pending() seals
 * it, then moves the write key on); a NewSessionTicket is skipped;
 * close_notify is the end of the stream; any other alert, handshake
 * message, a record that does not decrypt or breaks the limits is an
 * error (-EBADMSG) after which the connection must be closed.
 *
 * Errors: 0 or a negative errno (-EBADMSG a bad record, -ENOMEM, -EINVAL
 * a suite or secret that is not usable).
 *
 * Threads: a struct tls13_conn is used by one thread at a time.
 */
#ifndef LACUNA_TLS13_REC_H
#define LACUNA_TLS13_REC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

#include <openssl/ssl.h>

#define TLS13_HDR 5
#define TLS13_TAG 16
#define TLS13_PLAIN_MAX 16384			 /* 2^14 of plaintext per record */
#define TLS13_CIPHER_MAX (TLS13_PLAIN_MAX + 256) /* a record's body at most */
#define TLS13_REC_MAX (TLS13_HDR + TLS13_CIPHER_MAX)
/* What a record adds to its plaintext when sealed here: header, content type, tag. */
#define TLS13_OVERHEAD (TLS13_HDR + 1 + TLS13_TAG)
#define TLS13_SECRET_MAX 48

/* content types */
#define TLS13_CT_ALERT 21
#define TLS13_CT_HANDSHAKE 22
#define TLS13_CT_APPDATA 23

/* One direction's keys. */
struct tls13_dir {
	void *ctx; /* EVP_CIPHER_CTX, keyed */
	const void *md;
	uint8_t secret[TLS13_SECRET_MAX];
	size_t hlen, klen;
	uint8_t iv[12];
	uint64_t seq;
	bool enc;
};

struct tls13_conn {
	struct tls13_dir rx, tx;
	uint16_t suite; /* 0x1301, 0x1302, 0x1303 */
	bool server;
	bool ku_send;	       /* a KeyUpdate of ours is due (the peer asked) */
	bool eof;	       /* close_notify received */
	uint8_t alert;	       /* the fatal alert received (-ECONNRESET), else 0 */
	unsigned int ku_recvd; /* KeyUpdates received, for the caller's limits */
};

/* Keep the traffic secrets of every handshake made with @ctx. 0 or -ENOMEM. */
int tls13_capture(SSL_CTX *ctx);
/*
 * After @ssl's handshake: its record layer as @c (as @server or client).
 * -EINVAL: not TLS 1.3, a suite not handled here, or no secrets kept.
 */
int tls13_take(SSL *ssl, bool server, struct tls13_conn *c);
void tls13_conn_free(struct tls13_conn *c);

/* Both directions from the two traffic secrets (tests, and tls13_take). */
int tls13_conn_init(struct tls13_conn *c, uint16_t suite, bool server, const uint8_t *client_secret,
		    const uint8_t *server_secret, size_t len);

/* HKDF-Expand-Label(@secret, @label, "", @outlen) with SHA-256 or SHA-384 (@hlen 32, 48). */
int tls13_expand_label(size_t hlen, const uint8_t *secret, const char *label, uint8_t *out,
		       size_t outlen);

/* The whole record's length if @have bytes of @buf hold its header, else 0; -EBADMSG a bad header.
 */
ssize_t tls13_rec_len(const uint8_t *buf, size_t have);

/*
 * Seal @len bytes (at most TLS13_PLAIN_MAX) of @iov[@n], from byte @skip
 * of it on, as a record of @type into @out (room for @len +
 * TLS13_OVERHEAD). The record's length in *outlen.
 */
int tls13_seal(struct tls13_conn *c, uint8_t type, const struct iovec *iov, unsigned int n,
	       size_t skip, size_t len, uint8_t *out, size_t *outlen);

/*
 * One whole record @rec of @reclen bytes: its plaintext (padding and
 * type stripped) into @out (TLS13_CIPHER_MAX bytes of room, or @rec +
 * TLS13_HDR for in place), its length in *len, its type in *type.
 */
int tls13_open(struct tls13_conn *c, const uint8_t *rec, size_t reclen, uint8_t *out, size_t *len,
	       uint8_t *type);

/*
 * tls13_open() and what follows from a record that is not application
 * data. 1 with application data (*len bytes at @out, maybe 0), 0 a
 * record handled here (KeyUpdate, NewSessionTicket, user_canceled) or
 * the end of the stream (c->eof), -ECONNRESET a fatal alert (c->alert),
 * -EBADMSG.
 */
int tls13_recv(struct tls13_conn *c, const uint8_t *rec, size_t reclen, uint8_t *out, size_t *len);

/* Seal our KeyUpdate if one is due (into @out, TLS13_OVERHEAD + 5 bytes); its length, or 0. */
int tls13_send_pending(struct tls13_conn *c, uint8_t *out, size_t *outlen);

/* Seal a close_notify alert into @out (TLS13_OVERHEAD + 2 bytes). */
int tls13_close_notify(struct tls13_conn *c, uint8_t *out, size_t *outlen);

#endif
