// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A TLS 1.3 record layer after an OpenSSL handshake: keys from the
 * traffic secrets, records sealed from iovecs and opened in place,
 * KeyUpdate, alerts. tls13_rec.h tells the story.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/kdf.h>

#include "tls13_rec.h"

/* ---------------------------------------------------------------- keys */

int tls13_expand_label(size_t hlen, const uint8_t *secret, const char *label, uint8_t *out,
		       size_t outlen)
{
	uint8_t info[2 + 1 + 255 + 1];
	size_t l = strlen(label), n = 0;
	EVP_PKEY_CTX *p;
	int rc = -EINVAL;

	if (l > 255 - 6 || (hlen != 32 && hlen != 48) || outlen > 255)
		return -EINVAL;
	info[n++] = (uint8_t)(outlen >> 8);
	info[n++] = (uint8_t)outlen;
	info[n++] = (uint8_t)(6 + l);
	memcpy(info + n, "tls13 ", 6);
	memcpy(info + n + 6, label, l);
	n += 6 + l;
	info[n++] = 0; /* no context */
	p = EVP_PKEY_CTX_new_id(EVP_PKEY_HKDF, NULL);
	if (!p)
		return -ENOMEM;
	if (EVP_PKEY_derive_init(p) > 0 &&
	    EVP_PKEY_CTX_set_hkdf_mode(p, EVP_PKEY_HKDEF_MODE_EXPAND_ONLY) > 0 &&
	    EVP_PKEY_CTX_set_hkdf_md(p, hlen == 32 ? EVP_sha256() : EVP_sha384()) > 0 &&
	    EVP_PKEY_CTX_set1_hkdf_key(p, secret, (int)hlen) > 0 &&
	    EVP_PKEY_CTX_add1_hkdf_info(p, info, (int)n) > 0 &&
	    EVP_PKEY_derive(p, out, &outlen) > 0)
		rc = 0;
	EVP_PKEY_CTX_free(p);
	return rc;
}

/* Key and iv from d->secret; the cipher keyed, the sequence back to 0. */
static int tls13_dir_key(struct tls13_dir *d)
{
	uint8_t key[32];
	int rc;

	rc = tls13_expand_label(d->hlen, d->secret, "key", key, d->klen);
	if (!rc)
		rc = tls13_expand_label(d->hlen, d->secret, "iv", d->iv, sizeof(d->iv));
	if (!rc && !EVP_CipherInit_ex(d->ctx, NULL, NULL, key, NULL, d->enc))
		rc = -EINVAL;
	OPENSSL_cleanse(key, sizeof(key));
	d->seq = 0;
	return rc;
}

static int tls13_dir_init(struct tls13_dir *d, uint16_t suite, bool enc, const uint8_t *secret,
			  size_t len)
{
	const EVP_CIPHER *ciph;

	memset(d, 0, sizeof(*d));
	switch (suite) {
	case 0x1301:
		ciph = EVP_aes_128_gcm();
		d->hlen = 32;
		break;
	case 0x1302:
		ciph = EVP_aes_256_gcm();
		d->hlen = 48;
		break;
	case 0x1303:
		ciph = EVP_chacha20_poly1305();
		d->hlen = 32;
		break;
	default:
		return -EINVAL;
	}
	if (len != d->hlen)
		return -EINVAL;
	d->klen = (size_t)EVP_CIPHER_get_key_length(ciph);
	d->enc = enc;
	memcpy(d->secret, secret, len);
	d->ctx = EVP_CIPHER_CTX_new();
	if (!d->ctx)
		return -ENOMEM;
	if (!EVP_CipherInit_ex(d->ctx, ciph, NULL, NULL, NULL, enc))
		return -EINVAL;
	return tls13_dir_key(d);
}

/* The next generation of keys (KeyUpdate): secret = Expand-Label(secret, "traffic upd"). */
static int tls13_dir_update(struct tls13_dir *d)
{
	uint8_t next[TLS13_SECRET_MAX];
	int rc = tls13_expand_label(d->hlen, d->secret, "traffic upd", next, d->hlen);

	if (rc)
		return rc;
	memcpy(d->secret, next, d->hlen);
	OPENSSL_cleanse(next, sizeof(next));
	return tls13_dir_key(d);
}

static void tls13_dir_free(struct tls13_dir *d)
{
	EVP_CIPHER_CTX_free(d->ctx);
	OPENSSL_cleanse(d, sizeof(*d));
}

int tls13_conn_init(struct tls13_conn *c, uint16_t suite, bool server, const uint8_t *client_secret,
		    const uint8_t *server_secret, size_t len)
{
	int rc;

	memset(c, 0, sizeof(*c));
	c->suite = suite;
	c->server = server;
	rc = tls13_dir_init(&c->rx, suite, false, server ? client_secret : server_secret, len);
	if (!rc)
		rc = tls13_dir_init(&c->tx, suite, true, server ? server_secret : client_secret,
				    len);
	if (rc)
		tls13_conn_free(c);
	return rc;
}

void tls13_conn_free(struct tls13_conn *c)
{
	tls13_dir_free(&c->rx);
	tls13_dir_free(&c->tx);
}

/* ---------------------------------------------------------------- secrets from the handshake */

struct tls13_keep {
	uint8_t cs[TLS13_SECRET_MAX], ss[TLS13_SECRET_MAX];
	size_t clen, slen;
};

static int tls13_idx = -1;
static pthread_once_t tls13_once = PTHREAD_ONCE_INIT;

static void tls13_keep_free(void *parent, void *ptr, CRYPTO_EX_DATA *ad, int idx, long argl,
			    void *argp)
{
	(void)parent;
	(void)ad;
	(void)idx;
	(void)argl;
	(void)argp;
	if (ptr)
		OPENSSL_clear_free(ptr, sizeof(struct tls13_keep));
}

static void tls13_idx_make(void)
{
	tls13_idx = SSL_get_ex_new_index(0, NULL, NULL, NULL, tls13_keep_free);
}

static int tls13_hex(const char *s, uint8_t *out, size_t max, size_t *len)
{
	size_t n = 0;
	int hi, lo;

	while (*s && *s != ' ') {
		hi = OPENSSL_hexchar2int((unsigned char)s[0]);
		lo = s[1] ? OPENSSL_hexchar2int((unsigned char)s[1]) : -1;
		if (hi < 0 || lo < 0 || n == max)
			return -EINVAL;
		out[n++] = (uint8_t)(hi << 4 | lo);
		s += 2;
	}
	*len = n;
	return 0;
}

static void tls13_keylog(const SSL *cssl, const char *line)
{
	static const char cl[] = "CLIENT_TRAFFIC_SECRET_0 ", sv[] = "SERVER_TRAFFIC_SECRET_0 ";
	SSL *ssl = (SSL *)cssl;
	struct tls13_keep *k;
	const char *p;
	bool client;

	client = !strncmp(line, cl, sizeof(cl) - 1);
	if (!client && strncmp(line, sv, sizeof(sv) - 1))
		return;
	p = strchr(line + sizeof(cl) - 1, ' '); /* past the client random */
	if (!p)
		return;
	k = SSL_get_ex_data(ssl, tls13_idx);
	if (!k) {
		k = OPENSSL_zalloc(sizeof(*k));
		if (!k || !SSL_set_ex_data(ssl, tls13_idx, k)) {
			OPENSSL_free(k);
			return; /* tls13_take() finds no secrets: the caller keeps OpenSSL's records
				 */
		}
	}
	if (client)
		tls13_hex(p + 1, k->cs, sizeof(k->cs), &k->clen);
	else
		tls13_hex(p + 1, k->ss, sizeof(k->ss), &k->slen);
}

int tls13_capture(SSL_CTX *ctx)
{
	pthread_once(&tls13_once, tls13_idx_make);
	if (tls13_idx < 0)
		return -ENOMEM;
	SSL_CTX_set_keylog_callback(ctx, tls13_keylog);
	return 0;
}

int tls13_take(SSL *ssl, bool server, struct tls13_conn *c)
{
	struct tls13_keep *k = tls13_idx >= 0 ? SSL_get_ex_data(ssl, tls13_idx) : NULL;
	const SSL_CIPHER *ciph = SSL_get_current_cipher(ssl);
	int rc;

	if (!k || !ciph || SSL_version(ssl) != TLS1_3_VERSION || !k->clen || k->clen != k->slen)
		return -EINVAL;
	rc = tls13_conn_init(c, (uint16_t)SSL_CIPHER_get_protocol_id(ciph), server, k->cs, k->ss,
			     k->clen);
	SSL_set_ex_data(ssl, tls13_idx, NULL);
	OPENSSL_clear_free(k, sizeof(*k));
	return rc;
}

/* ---------------------------------------------------------------- records */

static void tls13_nonce(const struct tls13_dir *d, uint8_t nonce[12])
{
	unsigned int i;

	memcpy(nonce, d->iv, 12);
	for (i = 0; i < 8; i++)
		nonce[11 - i] ^= (uint8_t)(d->seq >> (8 * i));
}

ssize_t tls13_rec_len(const uint8_t *buf, size_t have)
{
	size_t len;

	if (have < TLS13_HDR)
		return 0;
	len = (size_t)buf[3] << 8 | buf[4];
	/* after the handshake every record is application_data on the outside */
	if (buf[0] != TLS13_CT_APPDATA || buf[1] != 3 || buf[2] != 3 || len < 1 + TLS13_TAG ||
	    len > TLS13_CIPHER_MAX)
		return -EBADMSG;
	return (ssize_t)(TLS13_HDR + len);
}

int tls13_seal(struct tls13_conn *c, uint8_t type, const struct iovec *iov, unsigned int n,
	       size_t skip, size_t len, uint8_t *out, size_t *outlen)
{
	struct tls13_dir *d = &c->tx;
	size_t body = len + 1 + TLS13_TAG, at = TLS13_HDR, take;
	uint8_t nonce[12];
	unsigned int i;
	int ol;

	if (len > TLS13_PLAIN_MAX || d->seq == UINT64_MAX)
		return -EINVAL;
	out[0] = TLS13_CT_APPDATA;
	out[1] = 3;
	out[2] = 3;
	out[3] = (uint8_t)(body >> 8);
	out[4] = (uint8_t)body;
	tls13_nonce(d, nonce);
	if (!EVP_CipherInit_ex(d->ctx, NULL, NULL, NULL, nonce, 1) ||
	    !EVP_EncryptUpdate(d->ctx, NULL, &ol, out, TLS13_HDR))
		return -EINVAL;
	for (i = 0; i < n && len; i++) {
		if (skip >= iov[i].iov_len) {
			skip -= iov[i].iov_len;
			continue;
		}
		take = iov[i].iov_len - skip;
		if (take > len)
			take = len;
		if (!EVP_EncryptUpdate(d->ctx, out + at, &ol,
				       (const uint8_t *)iov[i].iov_base + skip, (int)take))
			return -EINVAL;
		at += (size_t)ol;
		len -= take;
		skip = 0;
	}
	if (len)
		return -EINVAL; /* the iovecs were shorter than len */
	if (!EVP_EncryptUpdate(d->ctx, out + at, &ol, &type, 1))
		return -EINVAL;
	at += (size_t)ol;
	if (!EVP_EncryptFinal_ex(d->ctx, out + at, &ol))
		return -EINVAL;
	at += (size_t)ol;
	if (!EVP_CIPHER_CTX_ctrl(d->ctx, EVP_CTRL_AEAD_GET_TAG, TLS13_TAG, out + at))
		return -EINVAL;
	at += TLS13_TAG;
	d->seq++;
	*outlen = at;
	return 0;
}

int tls13_open(struct tls13_conn *c, const uint8_t *rec, size_t reclen, uint8_t *out, size_t *len,
	       uint8_t *type)
{
	struct tls13_dir *d = &c->rx;
	ssize_t rl = tls13_rec_len(rec, reclen);
	uint8_t nonce[12], tag[TLS13_TAG];
	size_t clen, n;
	int ol, fl;

	if (rl < 0 || (size_t)rl != reclen || d->seq == UINT64_MAX)
		return -EBADMSG;
	clen = reclen - TLS13_HDR - TLS13_TAG;
	memcpy(tag, rec + reclen - TLS13_TAG, TLS13_TAG);
	tls13_nonce(d, nonce);
	if (!EVP_CipherInit_ex(d->ctx, NULL, NULL, NULL, nonce, 0) ||
	    !EVP_DecryptUpdate(d->ctx, NULL, &ol, rec, TLS13_HDR) ||
	    !EVP_CIPHER_CTX_ctrl(d->ctx, EVP_CTRL_AEAD_SET_TAG, TLS13_TAG, tag) ||
	    !EVP_DecryptUpdate(d->ctx, out, &ol, rec + TLS13_HDR, (int)clen) ||
	    !EVP_DecryptFinal_ex(d->ctx, out + ol, &fl))
		return -EBADMSG;
	d->seq++;
	for (n = (size_t)ol + (size_t)fl; n && !out[n - 1]; n--)
		; /* padding */
	if (!n || n - 1 > TLS13_PLAIN_MAX)
		return -EBADMSG; /* no content type, or too much plaintext */
	*type = out[n - 1];
	*len = n - 1;
	return 0;
}

/* The handshake messages of one record: KeyUpdate, and NewSessionTicket for a client. */
static int tls13_handshake(struct tls13_conn *c, const uint8_t *p, size_t len)
{
	size_t off = 0, ml;

	while (off < len) {
		if (len - off < 4)
			return -EBADMSG; /* a message split over records: not expected after the
					    handshake */
		ml = (size_t)p[off + 1] << 16 | (size_t)p[off + 2] << 8 | p[off + 3];
		if (ml > len - off - 4)
			return -EBADMSG;
		switch (p[off]) {
		case SSL3_MT_KEY_UPDATE:
			/* one byte, 0 or 1; the last message of its record (section 5.1) */
			if (ml != 1 || p[off + 4] > 1 || off + 5 != len)
				return -EBADMSG;
			if (tls13_dir_update(&c->rx))
				return -EBADMSG;
			c->ku_recvd++;
			if (p[off + 4])
				c->ku_send = true;
			break;
		case SSL3_MT_NEWSESSION_TICKET:
			if (c->server)
				return -EBADMSG;
			break; /* no resumption here */
		default:
			return -EBADMSG;
		}
		off += 4 + ml;
	}
	return 0;
}

int tls13_recv(struct tls13_conn *c, const uint8_t *rec, size_t reclen, uint8_t *out, size_t *len)
{
	uint8_t type;

	if (c->eof || tls13_open(c, rec, reclen, out, len, &type))
		return -EBADMSG;
	switch (type) {
	case TLS13_CT_APPDATA:
		return 1;
	case TLS13_CT_HANDSHAKE:
		if (!*len || tls13_handshake(c, out, *len))
			return -EBADMSG;
		*len = 0;
		return 0;
	case TLS13_CT_ALERT:
		if (*len != 2)
			return -EBADMSG;
		if (out[1] == SSL3_AD_CLOSE_NOTIFY) {
			c->eof = true;
		} else if (out[1] != SSL_AD_USER_CANCELLED) {
			c->alert = out[1] ? out[1] : 255;
			return -ECONNRESET;
		}
		*len = 0;
		return 0;
	default:
		return -EBADMSG;
	}
}

int tls13_send_pending(struct tls13_conn *c, uint8_t *out, size_t *outlen)
{
	static const uint8_t ku[5] = { SSL3_MT_KEY_UPDATE, 0, 0, 1, 0 }; /* update_not_requested */
	struct iovec v = { .iov_base = (void *)ku, .iov_len = sizeof(ku) };
	int rc;

	*outlen = 0;
	if (!c->ku_send)
		return 0;
	rc = tls13_seal(c, TLS13_CT_HANDSHAKE, &v, 1, 0, sizeof(ku), out, outlen);
	if (!rc)
		rc = tls13_dir_update(&c->tx);
	if (!rc)
		c->ku_send = false;
	return rc;
}

int tls13_close_notify(struct tls13_conn *c, uint8_t *out, size_t *outlen)
{
	static const uint8_t a[2] = { SSL3_AL_WARNING, SSL3_AD_CLOSE_NOTIFY };
	struct iovec v = { .iov_base = (void *)a, .iov_len = sizeof(a) };

	return tls13_seal(c, TLS13_CT_ALERT, &v, 1, 0, sizeof(a), out, outlen);
}
