// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Fuzz harness of the STARTTLS probe check gw_tls_is_probe() (gw_tls.h):
 * the input is the first RPC record a client sent, record mark removed.
 *
 * Checked: a record taken for a probe is a CALL of RPC version 2 to
 * procedure 0 with an AUTH_TLS credential whose body fits the input and
 * RPC_AUTH_BODY_MAX; *xid is its first word; the record cut one byte
 * before the credential's end is no probe; the answer does not change
 * with the input's tail; the reply to it carries the xid and
 * "STARTTLS". Nothing is read past the input.
 *
 * Built with -fsanitize=fuzzer it is a libFuzzer target; linked with
 * replay.c it replays a corpus.
 */
#include <arpa/inet.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gw_tls.h"
#include "rpc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fz_check(bool ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "fuzz_tlsprobe: %s\n", what);
		abort();
	}
}

static uint32_t fz_word(const uint8_t *p, unsigned int i)
{
	uint32_t w;

	memcpy(&w, p + 4 * i, 4);
	return ntohl(w);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t reply[GW_TLS_PROBE_REPLY_LEN];
	uint32_t xid = 0xdeadbeef, xid2, clen, w;
	uint8_t *copy;
	size_t need;
	bool probe;

	/* a copy of exactly the input's size, so that ASan sees any read past it */
	copy = malloc(size ? size : 1);
	fz_check(copy != NULL, "malloc");
	memcpy(copy, data, size);
	probe = gw_tls_is_probe(copy, size, &xid);
	if (!probe) {
		fz_check(xid == 0xdeadbeef, "xid set for no probe");
		free(copy);
		return 0;
	}
	fz_check(size >= 32, "probe shorter than a call header");
	fz_check(xid == fz_word(copy, 0), "xid");
	fz_check(fz_word(copy, 1) == RPC_CALL && fz_word(copy, 2) == RPC_VERS &&
			 fz_word(copy, 5) == 0 && fz_word(copy, 6) == RPC_AUTH_TLS,
		 "not a NULL call with AUTH_TLS");
	clen = fz_word(copy, 7);
	fz_check(clen <= RPC_AUTH_BODY_MAX, "credential body too long");
	need = 32 + (((size_t)clen + 3) & ~(size_t)3);
	fz_check(need <= size, "credential past the record");
	fz_check(!gw_tls_is_probe(copy, need - 1, &xid2), "cut credential taken");
	if (size > need)
		fz_check(gw_tls_is_probe(copy, need, &xid2) && xid2 == xid,
			 "answer depends on the tail");
	gw_tls_probe_reply(xid, reply);
	memcpy(&w, reply + 4, 4);
	fz_check(ntohl(w) == xid && !memcmp(reply + 24, "STARTTLS", 8), "reply");
	memcpy(&w, reply, 4);
	fz_check(ntohl(w) == (0x80000000u | (GW_TLS_PROBE_REPLY_LEN - 4)), "reply record mark");
	free(copy);
	return 0;
}
