/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * RPC-with-TLS (RFC 9289) for lacunad's stream transports: the TLS
 * context made from the configuration, the AUTH_TLS probe, the handshake
 * thread, and the reasons a handshake or a TLS connection fails. The
 * transport (xprt/tcp/gw_tcp_tls.c) decides when a connection goes to
 * TLS and carries its records; nothing here knows about io_uring.
 * docs/tls.md tells the whole story.
 *
 * Threads: gw_tls_ctx_new() and the probe helpers may run anywhere;
 * the handshake pool (gw_tls_hs_*) runs its own thread and hands
 * finished jobs back through a callback that must not block.
 */
#ifndef LACUNA_GW_TLS_H
#define LACUNA_GW_TLS_H

#include <openssl/ssl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "gw.h"

/* The probe's reply: mark, xid, REPLY, ACCEPTED, verifier AUTH_NONE "STARTTLS", SUCCESS. */
#define GW_TLS_PROBE_REPLY_LEN 36
/* Bytes that may arrive after the probe before the handshake starts (a ClientHello's worth). */
#define GW_TLS_PRE_MAX (64 * 1024)
/* Plaintext of one TLS record, and what a record adds to it at most. */
#define GW_TLS_REC_PLAIN 16384
#define GW_TLS_REC_OVERHEAD 256
/* The TLS 1.3 suites offered: exactly those common/tls13_rec.h does, in
 * OpenSSL's default order, or AES-128 first (tls_cipher_preference = aes128). */
#define GW_TLS_SUITES "TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256:TLS_AES_128_GCM_SHA256"
#define GW_TLS_SUITES_AES128 \
	"TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256"
/* KeyUpdate messages a peer may send per connection per minute before it is closed. */
#define GW_TLS_KEYUPDATE_MAX 32

/* Why a handshake or a TLS connection failed: lacunad_tls_failures_total{reason}. */
enum gw_tls_fail {
	GW_TLS_FAIL_TIMEOUT,   /* tls_handshake_timeout passed */
	GW_TLS_FAIL_NOT_TLS,   /* not a TLS ClientHello (plain RPC, garbage) */
	GW_TLS_FAIL_VERSION,   /* a protocol version below TLS 1.3 */
	GW_TLS_FAIL_HANDSHAKE, /* an alert, a handshake failure, the peer gone */
	GW_TLS_FAIL_VERIFY,    /* the client certificate did not verify */
	GW_TLS_FAIL_BUSY,      /* over tls_handshakes_max */
	GW_TLS_FAIL_ALPN,      /* ALPN offered without "sunrpc" */
	GW_TLS_FAIL_PROBE,     /* STARTTLS with calls in flight */
	GW_TLS_FAIL_KEYUPDATE, /* a KeyUpdate storm */
	GW_TLS_FAIL_RECORD,    /* a bad record or a fatal alert after the handshake */
	GW_TLS_FAIL_N,
};
_Static_assert(GW_TLS_FAIL_N == GW_STATS_TLS_FAILS, "struct gw_stats counts every reason");
extern const char *const gw_tls_fail_names[GW_TLS_FAIL_N];

/*
 * The server's TLS context for @cfg: *out NULL when no certificate is
 * configured; 0, or -errno with the cause logged (a bad certificate or
 * key, an unreadable CA file).
 */
int gw_tls_ctx_new(const struct gw_config *cfg, SSL_CTX **out);

/* Is the record @rec of @len bytes a NULL call with an AUTH_TLS credential? Its xid in *xid. */
bool gw_tls_is_probe(const uint8_t *rec, size_t len, uint32_t *xid);
/* The reply to a probe, record mark first. */
void gw_tls_probe_reply(uint32_t xid, uint8_t out[GW_TLS_PROBE_REPLY_LEN]);

/* Does the kernel offer the tls ULP (kTLS)? Logs which record path is in use. */
bool gw_tls_ktls_probe(void);

/* KeyUpdates received on one connection (the transport counts those its
 * records bring). */
struct gw_tls_ku {
	unsigned int n;
	time_t since;
	bool storm;
};

/* Count one KeyUpdate received on @k (sets k->storm past GW_TLS_KEYUPDATE_MAX a minute). */
void gw_tls_ku_note(struct gw_tls_ku *k);

/* A handshake, from the transport to the handshake thread and back. */
struct gw_tls_hs_job {
	struct gw_tls_hs_job *next;
	void *owner;  /* the transport's connection */
	int fd;	      /* read and written with MSG_DONTWAIT until the job is back */
	SSL_CTX *ctx; /* a reference the thread drops */
	uint8_t *pre; /* bytes already received (malloc'd; the thread frees them) */
	size_t pre_len;
	unsigned int timeout; /* seconds */
	/* results: ssl (its rbio a memory BIO holding what arrived past the handshake) or fail */
	SSL *ssl;
	int fail; /* -1: done, else enum gw_tls_fail */
	bool mtls;
	char peer[128]; /* the client certificate's subject or first SAN */
	/* the thread's */
	struct timespec deadline;
	bool done, want_write;
	uint8_t checked; /* bytes of the stream's first two looked at */
};

struct gw_tls_hs;
typedef void gw_tls_hs_notify_fn(void *arg);

/* Start the handshake thread; @notify(@arg) when the done list becomes non-empty. */
int gw_tls_hs_start(struct gw_tls_hs **out, gw_tls_hs_notify_fn *notify, void *arg);
/* Hand @j to the thread. */
void gw_tls_hs_submit(struct gw_tls_hs *h, struct gw_tls_hs_job *j);
/* Take the finished jobs (NULL: none). */
struct gw_tls_hs_job *gw_tls_hs_done(struct gw_tls_hs *h);
/* Stop and join the thread: no job may be out. */
void gw_tls_hs_stop(struct gw_tls_hs *h);

#endif
