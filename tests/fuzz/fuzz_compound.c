// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Fuzz harness of NFSv4 COMPOUND processing: the input is the argument
 * body of a COMPOUND call (tag, minor version, ops), put behind a valid
 * RPC call header (AUTH_SYS, uid 0) and run through lacunad's real RPC
 * and COMPOUND code (gw_rpc_process) against a plain-directory export in
 * a temporary directory holding a file, a directory and a symlink. Every
 * op's decoder and handler is reachable, sessions included.
 *
 * Checked: a reply always comes back and is a well-formed RPC reply to
 * the same xid (MSG_ACCEPTED, SUCCESS or GARBAGE_ARGS); a SUCCESS body
 * starts with a status and the tag sent; nothing is read out of bounds;
 * once the reply is released the pool holds no more chunks than the
 * worker's carver. Side effects stay in the temporary directory, which
 * is removed at exit.
 *
 * Built with -fsanitize=fuzzer it is a libFuzzer target; linked with
 * replay.c it replays a corpus.
 */
#include <errno.h>
#include <arpa/inet.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gw_xprt.h"
#include "nfs4_state.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond)                                                                          \
	do {                                                                                 \
		if (!(cond)) {                                                               \
			fprintf(stderr, "fuzz_compound: check failed: %s (line %d)\n", #cond, \
				__LINE__);                                                   \
			abort();                                                             \
		}                                                                            \
	} while (0)

#define INPUT_MAX (256 * 1024)

static char dir[] = "/tmp/lacuna-fuzz-XXXXXX";
static struct gw_srv gw = { .snap_lock = PTHREAD_MUTEX_INITIALIZER,
			     .reload_lock = PTHREAD_MUTEX_INITIALIZER }; /* the server fuzzed */
static struct xdr_carver carver;
static struct gw_conn_info conn;
static uint8_t *rec;

static void cleanup(void)
{
	char cmd[64];

	xdr_carver_fini(&carver);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "fuzz_compound: could not remove %s\n", dir);
}

static void setup(void)
{
	struct gw_config *cfg;
	char path[64];
	int fd;

	CHECK(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/file", dir);
	fd = open(path, O_CREAT | O_WRONLY, 0644);
	CHECK(fd >= 0);
	CHECK(pwrite(fd, "0123456789", 10, 1 << 20) == 10);
	close(fd);
	snprintf(path, sizeof(path), "%s/dir", dir);
	CHECK(mkdir(path, 0755) == 0);
	snprintf(path, sizeof(path), "%s/link", dir);
	CHECK(symlink("file", path) == 0);
	CHECK(gw_config_from_args(dir, "no_root_squash", "127.0.0.1:1", &cfg, NULL, NULL) == 0);
	free(cfg->state_dir); /* no client records: nothing of the fuzzing outlives it */
	cfg->state_dir = NULL;
	CHECK(chunk_pool_create(&gw.pool, 1 << 20, 64, 0) == 0);
	CHECK(chunk_pool_create(&gw.small, 65536, 16, 0) == 0);
	CHECK(gw_exports_load(&gw, cfg) == 0);
	CHECK(nfs4_state_init(&gw) == 0);
	xdr_carver_init(&carver, gw.pool, NULL);
	conn.id = 1;
	conn.peer.ss_family = AF_INET;
	((struct sockaddr_in *)&conn.peer)->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	conn.peer_len = sizeof(struct sockaddr_in);
	rec = malloc(INPUT_MAX + 64);
	CHECK(rec);
	umask(0);
	atexit(cleanup);
}

static size_t put32(uint8_t *p, uint32_t v)
{
	xdr_put_u32(p, v);
	return 4;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static bool ready;
	struct chunk_pool_stats st;
	struct gw_req req;
	uint8_t head[40];
	size_t n = 0;
	uint32_t xid = 0x1234abcd;

	if (!ready) {
		setup();
		ready = true;
	}
	if (size > INPUT_MAX)
		return 0;
	n += put32(rec + n, xid);
	n += put32(rec + n, 0);	      /* CALL */
	n += put32(rec + n, 2);	      /* rpcvers */
	n += put32(rec + n, 100003);  /* NFS */
	n += put32(rec + n, 4);
	n += put32(rec + n, 1);	      /* COMPOUND */
	n += put32(rec + n, 1);	      /* AUTH_SYS */
	n += put32(rec + n, 20);      /* stamp, "" machine, uid, gid, 0 gids */
	n += put32(rec + n, 0);
	n += put32(rec + n, 0);
	n += put32(rec + n, 0);
	n += put32(rec + n, 0);
	n += put32(rec + n, 0);
	n += put32(rec + n, 0);	      /* verifier AUTH_NONE */
	n += put32(rec + n, 0);
	memcpy(rec + n, data, size);

	memset(&req, 0, sizeof(req));
	req.conn = &conn;
	req.rec = rec;
	req.len = n + size;
	req.stream = false;
	req.reply_max = (1 << 20) - 64;
	req.carver = &carver;
	gw_rpc_process(&gw, &req);

	CHECK(xdr_out_len(&req.reply) >= 24);
	CHECK(xdr_out_copy(&req.reply, 0, head, sizeof(head)) >= 24);
	CHECK(xdr_get_u32(head) == xid);
	CHECK(xdr_get_u32(head + 4) == 1);  /* REPLY */
	CHECK(xdr_get_u32(head + 8) == 0);  /* MSG_ACCEPTED */
	CHECK(xdr_get_u32(head + 20) == 0 || xdr_get_u32(head + 20) == 4);
	if (xdr_get_u32(head + 20) == 0) {
		uint32_t taglen = size >= 4 ? xdr_get_u32(data) : 0;

		CHECK(xdr_out_len(&req.reply) >= 24 + 8 + XDR_ALIGN((size_t)taglen) + 4);
	}
	xdr_out_release(&req.reply);
	chunk_pool_get_stats(gw.pool, &st);
	CHECK(st.in_use <= 1);
	gw_cred_leave();
	return 0;
}
