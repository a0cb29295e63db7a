// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Fuzz harness of ONC RPC: the record-marking reassembler and the call
 * classifier. Byte 0 of the input chooses:
 *
 *   bit 0     0: the rest is one record, classified as is;
 *             1: the rest is a TCP byte stream, reassembled twice (by
 *                rpc_rec_feed in pieces of pseudo-random sizes, and by
 *                rpc_rec_space/commit in pieces of other sizes), every
 *                record then classified;
 *   bits 1-2  the longest record accepted: 64, 512, 4096, 65536 bytes;
 *   bits 3-7  the seed of the piece sizes.
 *
 * Checked: both reassemblers deliver the same records and the same
 * error; a dispatched call respects the program table and every bound
 * of its credential, and its arguments end where the record ends; a
 * dispatched call re-encoded with rpc_enc_call classifies to the same
 * fields; every reply encodes to the size its kind has on the wire,
 * record mark included; nothing is read out of bounds and every chunk
 * reference is released.
 *
 * Built with -fsanitize=fuzzer it is a libFuzzer target; linked with
 * replay.c it replays a corpus.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rpc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond)                                                                      \
	do {                                                                             \
		if (!(cond)) {                                                           \
			fprintf(stderr, "fuzz_rpc: check failed: %s (line %d)\n", #cond, \
				__LINE__);                                               \
			abort();                                                         \
		}                                                                        \
	} while (0)

#define BIT(f) RPC_FLAVOR_BIT(f)
static const struct rpc_program progs[] = {
	{ 100003, 4, 4, 2, BIT(RPC_AUTH_NONE) | BIT(RPC_AUTH_SYS) },
	{ 100003, 2, 3, 22, BIT(RPC_AUTH_SYS) },
	{ 400123, 1, 1, 3, BIT(RPC_AUTH_SYS) },
};
#define NPROGS (sizeof(progs) / sizeof(progs[0]))

static const size_t rec_max[4] = { 64, 512, 4096, 65536 };

static struct chunk_pool *pool;

static void check_roundtrip(const struct rpc_call *call, struct xdr_carver *c)
{
	const struct rpc_auth_sys *sys = call->cred_flavor == RPC_AUTH_SYS ? &call->sys : NULL;
	struct rpc_call again;
	struct xdr_out out;
	uint8_t *flat;
	size_t n;

	xdr_out_init(&out, c, SIZE_MAX);
	CHECK(rpc_enc_call(&out, call->xid, call->prog, call->vers, call->proc, sys) == 0);
	CHECK(xdr_out_write(&out, call->args.base, call->args.len) == 0);
	n = xdr_out_len(&out);
	flat = malloc(n);
	CHECK(xdr_out_copy(&out, 0, flat, n) == n);
	CHECK(rpc_classify(flat, n, progs, NPROGS, &again) == RPC_V_DISPATCH);
	CHECK(again.xid == call->xid && again.prog == call->prog && again.vers == call->vers &&
	      again.proc == call->proc && again.program == call->program);
	CHECK(again.cred_flavor == call->cred_flavor);
	if (sys) {
		CHECK(again.sys.stamp == sys->stamp && again.sys.uid == sys->uid &&
		      again.sys.gid == sys->gid && again.sys.ngids == sys->ngids);
		CHECK(!memcmp(again.sys.gids, sys->gids, sys->ngids * sizeof(uint32_t)));
		CHECK(again.sys.machinename_len == sys->machinename_len);
		CHECK(!memcmp(again.sys.machinename, sys->machinename, sys->machinename_len));
	}
	CHECK(again.args.len == call->args.len);
	CHECK(!call->args.len || !memcmp(again.args.base, call->args.base, call->args.len));
	free(flat);
	xdr_out_release(&out);
}

static void check_record(const uint8_t *rec, size_t len, struct xdr_carver *c)
{
	enum rpc_verdict v;
	struct rpc_call call;
	struct xdr_out out;
	struct xdr_mark m;
	uint8_t head[8];
	size_t want = 0;

	v = rpc_classify(rec, len, progs, NPROGS, &call);
	xdr_out_init(&out, c, SIZE_MAX);
	CHECK(rpc_rm_begin(&out, &m) == 0);
	switch (v) {
	case RPC_V_DISPATCH:
		CHECK(call.program && call.program->prog == call.prog);
		CHECK(call.vers >= call.program->vers_low && call.vers <= call.program->vers_high);
		CHECK(call.proc < call.program->nprocs);
		CHECK(call.cred_flavor == RPC_AUTH_NONE || call.cred_flavor == RPC_AUTH_SYS);
		CHECK(call.verf_flavor == RPC_AUTH_NONE && call.verf_len == 0);
		if (call.cred_flavor == RPC_AUTH_SYS) {
			CHECK(call.sys.machinename_len <= RPC_AUTH_MACHINENAME_MAX);
			CHECK(call.sys.ngids <= RPC_AUTH_SYS_GIDS_MAX);
			CHECK((const uint8_t *)call.sys.machinename >= rec &&
			      (const uint8_t *)call.sys.machinename + call.sys.machinename_len <=
				      rec + len);
		}
		CHECK(call.args.pos == 0 && call.args.base + call.args.len == rec + len);
		/* the reply echoes the arguments by reference */
		CHECK(rpc_enc_accepted(&out, call.xid, RPC_SUCCESS) == 0);
		CHECK(xdr_enc_opaque_ref(&out, call.args.base, (uint32_t)call.args.len) == 0);
		want = 24 + 4 + XDR_ALIGN(call.args.len);
		check_roundtrip(&call, c);
		break;
	case RPC_V_REJECT:
		CHECK(rpc_enc_reject(&out, &call) == 0);
		if (call.err.reply_stat == RPC_MSG_ACCEPTED) {
			CHECK(call.err.stat != RPC_SUCCESS && call.err.stat <= RPC_SYSTEM_ERR);
			want = call.err.stat == RPC_PROG_MISMATCH ? 32 : 24;
		} else {
			CHECK(call.err.reply_stat == RPC_MSG_DENIED);
			want = call.err.stat == RPC_MISMATCH ? 24 : 20;
			CHECK(call.err.stat == RPC_MISMATCH ||
			      (call.err.stat == RPC_AUTH_ERROR && call.err.auth_stat >= 1 &&
			       call.err.auth_stat <= 5));
		}
		break;
	case RPC_V_REPLY:
		CHECK(len >= 8 && xdr_get_u32(rec + 4) == RPC_REPLY);
		CHECK(call.args.base == rec + 8 && call.args.len == len - 8);
		break;
	case RPC_V_DROP:
		CHECK(len < 8 || xdr_get_u32(rec + 4) > RPC_REPLY);
		break;
	default:
		CHECK(!"verdict");
	}
	CHECK(rpc_rm_end(&out, &m) == 0);
	CHECK(xdr_out_len(&out) == 4 + want);
	if (want) {
		CHECK(xdr_out_copy(&out, 0, head, 8) == 8);
		CHECK(xdr_get_u32(head) == (RPC_REC_LAST | want));
		CHECK(xdr_get_u32(head + 4) == call.xid);
	}
	xdr_out_release(&out);
}

static uint32_t rnd(uint32_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 17;
	*s ^= *s << 5;
	return *s;
}

/* Append each record to @log as (length, bytes); returns the error or 0. */
static int reassemble(const uint8_t *d, size_t size, size_t max, uint32_t seed, bool direct,
		      uint8_t *log, size_t *loglen, struct xdr_carver *c)
{
	uint8_t *buf = malloc(max ? max : 1);
	struct rpc_rec r;
	size_t at = 0, piece, room;
	ssize_t got;
	void *p;
	int rc = 0;

	rpc_rec_init(&r, buf, max);
	while (at < size) {
		piece = 1 + rnd(&seed) % (seed & 0x100 ? 7 : 300);
		if (piece > size - at)
			piece = size - at;
		if (direct) {
			room = rpc_rec_space(&r, &p);
			CHECK(room > 0 && p);
			if (piece > room)
				piece = room;
			memcpy(p, d + at, piece);
			rc = rpc_rec_commit(&r, piece);
			got = (ssize_t)piece;
		} else {
			got = rpc_rec_feed(&r, d + at, piece);
			rc = got < 0 ? (int)got : 0;
		}
		if (rc)
			break;
		CHECK(got > 0 || rpc_rec_ready(&r));
		at += (size_t)got;
		CHECK(r.len <= max);
		if (rpc_rec_ready(&r)) {
			xdr_put_u32(log + *loglen, (uint32_t)r.len);
			memcpy(log + *loglen + 4, r.buf, r.len);
			*loglen += 4 + r.len;
			if (!direct)
				check_record(r.buf, r.len, c);
			rpc_rec_next(&r, NULL, 0);
		}
	}
	CHECK(rc == 0 || rc == -EMSGSIZE || rc == -EPROTO);
	free(buf);
	return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct chunk_pool_stats st;
	struct xdr_carver carver;
	uint8_t *log1, *log2;
	size_t n1 = 0, n2 = 0, max;
	uint32_t seed;
	int rc1, rc2;

	if (size < 1)
		return 0;
	if (!pool && chunk_pool_create(&pool, 4096, 64, 0))
		abort();
	xdr_carver_init(&carver, pool, NULL);
	max = rec_max[(data[0] >> 1) & 3];
	if (!(data[0] & 1)) {
		check_record(data + 1, size - 1, &carver);
	} else {
		seed = ((uint32_t)data[0] >> 3) * 2654435761U + 1;
		log1 = malloc(2 * size + 16);
		log2 = malloc(2 * size + 16);
		rc1 = reassemble(data + 1, size - 1, max, seed, false, log1, &n1, &carver);
		rc2 = reassemble(data + 1, size - 1, max, seed ^ 0x5bd1e995, true, log2, &n2,
				 &carver);
		CHECK(rc1 == rc2);
		CHECK(n1 == n2 && !memcmp(log1, log2, n1));
		free(log1);
		free(log2);
	}
	xdr_carver_fini(&carver);
	chunk_pool_get_stats(pool, &st);
	CHECK(st.in_use == 0);
	return 0;
}
