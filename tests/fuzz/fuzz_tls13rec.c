// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Fuzz harness of the TLS 1.3 record layer's receiving side
 * (tls13_rec.h): the input is what a peer sent after the handshake, a
 * stream of records, opened one by one with tls13_recv() by a record
 * layer keyed with fixed test secrets.
 *
 * Input: byte 0 picks the suite (low two bits: 0x1301, 0x1302, 0x1303),
 * the role (bit 7: we are the client, else the server) and the mode;
 * the rest is the stream of records, or with bit 6 (sealed mode) a
 * series of [content type, 16-bit length, plaintext] that the peer
 * seals first, so that what follows decryption is reached too. Records alternate between opening in
 * place and into a separate buffer. Checked: tls13_rec_len() and tls13_recv() return documented
 * values; application data is at most TLS13_PLAIN_MAX bytes; nothing is received after an error, an
 * alert or close_notify; a KeyUpdate the peer asked for is sealed and opens at a peer keyed the
 * same way. Nothing is read or written past the record.
 *
 * Built with -fsanitize=fuzzer it is a libFuzzer target; linked with
 * replay.c it replays a corpus. Built with -DFUZZ_GEN and run as
 * `gen DIR`, it writes the seed corpus of valid sealed records
 * (tests/fuzz/corpus_tls13rec was made so).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tls13_rec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const uint16_t fz_suites[3] = { 0x1301, 0x1302, 0x1303 };

static void fz_check(bool ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "fuzz_tls13rec: %s\n", what);
		abort();
	}
}

/* Both ends keyed from fixed secrets: @c as @server, @peer the other role. */
static void fz_keys(uint16_t suite, bool server, struct tls13_conn *c, struct tls13_conn *peer)
{
	uint8_t cs[TLS13_SECRET_MAX], ss[TLS13_SECRET_MAX];
	size_t hl = suite == 0x1302 ? 48 : 32;

	memset(cs, 0x11, sizeof(cs));
	memset(ss, 0x22, sizeof(ss));
	fz_check(!tls13_conn_init(c, suite, server, cs, ss, hl), "conn_init");
	fz_check(!tls13_conn_init(peer, suite, !server, cs, ss, hl), "peer conn_init");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t out[TLS13_CIPHER_MAX], ku[TLS13_OVERHEAD + 5], kuo[TLS13_CIPHER_MAX];
	struct tls13_conn c, peer;
	size_t off = 1, len, kulen;
	unsigned int nrec = 0, nku = 0, kur;
	uint8_t *rec;
	ssize_t rl;
	int rc;

	if (size < 1 || (data[0] & 3) == 3)
		return 0;
	fz_keys(fz_suites[data[0] & 3], !(data[0] & 0x80), &c, &peer);
	while (off < size) {
		if (data[0] & 0x40) {
			/* sealed mode: the peer seals [type, len16, bytes] so that what
			   follows decryption (content type, padding, handshake messages,
			   alerts) is fuzzed too */
			struct iovec v;
			size_t pl, sl;

			if (size - off < 3)
				break;
			pl = (size_t)data[off + 1] << 8 | data[off + 2];
			if (pl > TLS13_PLAIN_MAX || pl > size - off - 3)
				pl = size - off - 3 < TLS13_PLAIN_MAX ? size - off - 3
								      : TLS13_PLAIN_MAX;
			v.iov_base = (void *)(data + off + 3);
			v.iov_len = pl;
			rec = malloc(pl + TLS13_OVERHEAD);
			fz_check(rec != NULL, "malloc");
			fz_check(!tls13_seal(&peer, data[off], &v, 1, 0, pl, rec, &sl) &&
					 sl == pl + TLS13_OVERHEAD,
				 "seal");
			rl = (ssize_t)sl;
			off += 3 + pl;
		} else {
			rl = tls13_rec_len(data + off, size - off);
			fz_check(rl == 0 || rl == -EBADMSG ||
					 (rl >= TLS13_HDR + 1 + TLS13_TAG && rl <= TLS13_REC_MAX),
				 "rec_len out of range");
			if (rl <= 0 || (size_t)rl > size - off)
				break;
			/* the record alone in a buffer of its size, for ASan */
			rec = malloc((size_t)rl);
			fz_check(rec != NULL, "malloc");
			memcpy(rec, data + off, (size_t)rl);
			off += (size_t)rl;
		}
		fz_check(tls13_rec_len(rec, (size_t)rl) == rl, "rec_len of a whole record");
		kur = c.ku_recvd;
		len = SIZE_MAX;
		if (nrec++ & 1)
			rc = tls13_recv(&c, rec, (size_t)rl, rec + TLS13_HDR, &len);
		else
			rc = tls13_recv(&c, rec, (size_t)rl, out, &len);
		free(rec);
		fz_check(rc == 1 || rc == 0 || rc == -EBADMSG || rc == -ECONNRESET, "recv rc");
		if (rc == 1)
			fz_check(len <= TLS13_PLAIN_MAX, "too much plaintext");
		if (rc == 0)
			fz_check(len == 0, "len of a record handled here");
		if (rc == -ECONNRESET)
			fz_check(c.alert != 0, "fatal alert not kept");
		if (rc < 0 || c.eof) {
			/* the stream is over: nothing more is received */
			if (c.eof && rc == 0)
				fz_check(tls13_recv(&c, data, size, out, &len) == -EBADMSG,
					 "recv after close_notify");
			break;
		}
		if ((data[0] & 0x40) && c.ku_recvd != kur) {
			/* the peer's write key follows the KeyUpdate it sealed */
			peer.ku_send = true;
			fz_check(!tls13_send_pending(&peer, kuo, &kulen), "peer key move");
		}
		if (c.ku_send) {
			/* our KeyUpdate, sealed under the old write key, opens at the peer */
			fz_check(!tls13_send_pending(&c, ku, &kulen) && kulen == sizeof(ku),
				 "send_pending");
			fz_check(!c.ku_send, "KeyUpdate still due");
			rc = tls13_recv(&peer, ku, kulen, kuo, &len);
			fz_check(rc == 0 && len == 0 && peer.ku_recvd == ++nku,
				 "our KeyUpdate does not open at the peer");
		}
	}
	tls13_conn_free(&c);
	tls13_conn_free(&peer);
	return 0;
}

#ifdef FUZZ_GEN
/* The seed corpus: valid streams sealed by the peer of the harness's side. */
static size_t gen_seal(struct tls13_conn *s, uint8_t type, const void *p, size_t n, uint8_t *at)
{
	struct iovec v = { .iov_base = (void *)p, .iov_len = n };
	size_t ol;

	fz_check(!tls13_seal(s, type, &v, 1, 0, n, at, &ol), "seal");
	return ol;
}

static void gen_write(const char *dir, const char *name, const uint8_t *b, size_t n)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "wb");
	fz_check(f && fwrite(b, 1, n, f) == n && !fclose(f), path);
}

int main(int argc, char **argv)
{
	static const uint8_t ku_req[5] = { 24, 0, 0, 1, 1 }, nst[9] = { 4, 0, 0, 5, 1, 2, 3, 4, 5 };
	static const uint8_t close_notify[2] = { 1, 0 }, bad_alert[2] = { 2, 40 };
	static const uint8_t rpc[] = { 0x80, 0, 0, 0x28, 0,    0, 0, 1, 0, 0, 0, 0, 0, 0, 0,
				       2,    0, 1, 0x86, 0xa3, 0, 0, 0, 4, 0, 0, 0, 0, 0, 0,
				       0,    0, 0, 0,	 0,    0, 0, 0, 0, 0, 0, 0, 0, 0 };
	static uint8_t b[4 * TLS13_REC_MAX];
	struct tls13_conn me, peer;
	char name[64];
	unsigned int i;
	size_t n;

	if (argc != 2) {
		fprintf(stderr, "usage: %s DIR\n", argv[0]);
		return 2;
	}
	for (i = 0; i < 3; i++) {
		/* server side: the client seals; an RPC, an empty record, close_notify */
		fz_keys(fz_suites[i], false, &peer, &me);
		b[0] = (uint8_t)i;
		n = 1 + gen_seal(&peer, TLS13_CT_APPDATA, rpc, sizeof(rpc), b + 1);
		n += gen_seal(&peer, TLS13_CT_APPDATA, "", 0, b + n);
		n += gen_seal(&peer, TLS13_CT_ALERT, close_notify, 2, b + n);
		snprintf(name, sizeof(name), "srv_rpc_%x", fz_suites[i]);
		gen_write(argv[1], name, b, n);
		tls13_conn_free(&me);
		tls13_conn_free(&peer);
	}
	/* KeyUpdate with update_requested, then data under the new key */
	fz_keys(0x1301, false, &peer, &me);
	b[0] = 0;
	n = 1 + gen_seal(&peer, TLS13_CT_APPDATA, rpc, sizeof(rpc), b + 1);
	n += gen_seal(&peer, TLS13_CT_HANDSHAKE, ku_req, sizeof(ku_req), b + n);
	peer.ku_send = true; /* move the peer's write key on as its KeyUpdate said */
	{
		uint8_t scratch[TLS13_OVERHEAD + 5];
		size_t sl;

		fz_check(!tls13_send_pending(&peer, scratch, &sl), "key move");
	}
	n += gen_seal(&peer, TLS13_CT_APPDATA, rpc, sizeof(rpc), b + n);
	gen_write(argv[1], "srv_keyupdate", b, n);
	tls13_conn_free(&me);
	tls13_conn_free(&peer);
	/* client side: the server seals a NewSessionTicket, data, a fatal alert */
	fz_keys(0x1303, true, &peer, &me);
	b[0] = 0x80 | 2;
	n = 1 + gen_seal(&peer, TLS13_CT_HANDSHAKE, nst, sizeof(nst), b + 1);
	n += gen_seal(&peer, TLS13_CT_APPDATA, rpc, sizeof(rpc), b + n);
	n += gen_seal(&peer, TLS13_CT_ALERT, bad_alert, 2, b + n);
	gen_write(argv[1], "cli_ticket_alert", b, n);
	tls13_conn_free(&me);
	tls13_conn_free(&peer);
	/* one full-size record */
	fz_keys(0x1302, false, &peer, &me);
	{
		static uint8_t big[TLS13_PLAIN_MAX];

		memset(big, 0x5a, sizeof(big));
		b[0] = 1;
		n = 1 + gen_seal(&peer, TLS13_CT_APPDATA, big, sizeof(big), b + 1);
	}
	gen_write(argv[1], "srv_full", b, n);
	tls13_conn_free(&me);
	tls13_conn_free(&peer);
	return 0;
}
#endif
