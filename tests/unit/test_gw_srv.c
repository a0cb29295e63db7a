// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Two lacunad servers in one process: each struct gw_srv holds its own
 * exports, limits, NFSv4 state and 4.0 reply cache, and a COMPOUND run
 * against one sees nothing of the other. The servers export plain
 * directories of a temporary directory, each with a file the other has
 * not, and take the same call records, from the same address with the
 * same xids, through gw_rpc_process() as a transport would.
 */
#include <arpa/inet.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "gw_drc.h"
#include "gw_rpc.h"
#include "nfs4_state.h"

#define REC_MAX 4096

/* One server under test and what it takes to send it calls. */
struct srv {
	struct gw_srv *s;
	struct xdr_carver carver;
};

struct fx {
	char dir[64];
	struct srv a, b;
	struct gw_conn_info conn;
};

/* A server exporting @dir with a 4.0 reply cache of @drc_entries replies. */
static void srv_start(struct srv *v, const char *dir, unsigned int drc_entries)
{
	struct gw_config *cfg;
	struct gw_srv *s;

	s = calloc(1, sizeof(*s));
	assert_non_null(s);
	pthread_mutex_init(&s->snap_lock, NULL);
	pthread_mutex_init(&s->reload_lock, NULL);
	assert_int_equal(gw_config_from_args(dir, "no_root_squash", "127.0.0.1:1", &cfg, NULL,
					     NULL),
			 0);
	free(cfg->state_dir); /* no client records outlive the test */
	cfg->state_dir = NULL;
	cfg->drc_entries = drc_entries;
	assert_int_equal(gw_fh_key_load(NULL, s->fh_key), 0);
	assert_int_equal(chunk_pool_create(&s->pool, 1 << 20, 16, 0), 0);
	assert_int_equal(chunk_pool_create(&s->small, 65536, 16, 0), 0);
	assert_int_equal(gw_drc_create(&s->drc), 0);
	gw_drc_configure(s->drc, cfg->drc_entries);
	assert_int_equal(gw_exports_load(s, cfg), 0);
	assert_int_equal(nfs4_state_init(s), 0);
	xdr_carver_init(&v->carver, s->pool, NULL);
	v->s = s;
}

static void srv_stop(struct srv *v)
{
	struct gw_srv *s = v->s;

	xdr_carver_fini(&v->carver);
	nfs4_state_fini(s);
	gw_drc_destroy(s->drc);
	chunk_pool_destroy(s->small);
	chunk_pool_destroy(s->pool);
	gw_exports_unload(s);
	pthread_mutex_destroy(&s->reload_lock);
	pthread_mutex_destroy(&s->snap_lock);
	free(s);
}

static void make_file(const char *dir, const char *name)
{
	char path[128];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
	assert_true(fd >= 0);
	close(fd);
}

static int fx_setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	char a[96], b[96];

	if (!f)
		return -1;
	snprintf(f->dir, sizeof(f->dir), "/tmp/lacuna-test-gw-srv-XXXXXX");
	if (!mkdtemp(f->dir))
		return -1;
	snprintf(a, sizeof(a), "%s/a", f->dir);
	snprintf(b, sizeof(b), "%s/b", f->dir);
	if (mkdir(a, 0755) || mkdir(b, 0755))
		return -1;
	make_file(a, "only_a");
	make_file(b, "only_b");
	srv_start(&f->a, a, 64);
	srv_start(&f->b, b, 0); /* drc_entries = 0: no reply cache */
	f->conn.id = 1;
	f->conn.peer.ss_family = AF_INET;
	((struct sockaddr_in *)&f->conn.peer)->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	((struct sockaddr_in *)&f->conn.peer)->sin_port = htons(700); /* reserved */
	f->conn.peer_len = sizeof(struct sockaddr_in);
	f->conn.resvport = true;
	*state = f;
	return 0;
}

static int fx_teardown(void **state)
{
	struct fx *f = *state;
	char cmd[96];

	srv_stop(&f->a);
	srv_stop(&f->b);
	gw_obj_fini();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
	if (system(cmd) != 0)
		fprintf(stderr, "test_gw_srv: could not remove %s\n", f->dir);
	free(f);
	return 0;
}

/* A COMPOUND call record being built: RPC header, then the ops. */
struct call {
	uint8_t b[REC_MAX];
	size_t n;
};

static void put32(struct call *c, uint32_t v)
{
	assert_true(c->n + 4 <= sizeof(c->b));
	xdr_put_u32(c->b + c->n, v);
	c->n += 4;
}

static void put_str(struct call *c, const char *s)
{
	size_t len = strlen(s);

	put32(c, (uint32_t)len);
	assert_true(c->n + XDR_ALIGN(len) <= sizeof(c->b));
	memset(c->b + c->n, 0, XDR_ALIGN(len));
	memcpy(c->b + c->n, s, len);
	c->n += XDR_ALIGN(len);
}

/* An NFSv4.0 COMPOUND of @nops ops by root (AUTH_SYS), xid @xid. */
static void begin(struct call *c, uint32_t xid, uint32_t nops)
{
	static const uint32_t head[] = {
		0,	 /* CALL */
		2,	 /* rpcvers */
		100003,	 /* NFS */
		4, 1,	 /* version 4, COMPOUND */
		1, 20,	 /* AUTH_SYS: stamp, "" machine, uid 0, gid 0, no gids */
		0, 0, 0, 0, 0,
		0, 0,	 /* verifier AUTH_NONE */
		0,	 /* tag "" */
		0,	 /* minorversion */
	};
	unsigned int i;

	c->n = 0;
	put32(c, xid);
	for (i = 0; i < sizeof(head) / sizeof(head[0]); i++)
		put32(c, head[i]);
	put32(c, nops);
}

/* Run @c on @v as a stream transport would; the COMPOUND's status. */
static uint32_t run(struct fx *f, struct srv *v, const struct call *c)
{
	uint8_t head[32];
	struct gw_req req;
	uint32_t status;

	memset(&req, 0, sizeof(req));
	req.conn = &f->conn;
	req.rec = c->b;
	req.len = c->n;
	req.stream = true;
	req.reply_max = (1 << 20) - 64;
	req.carver = &v->carver;
	gw_rpc_process(v->s, &req);
	/* record mark, xid, REPLY, MSG_ACCEPTED, verifier, SUCCESS, status */
	assert_int_equal(xdr_out_copy(&req.reply, 0, head, sizeof(head)), sizeof(head));
	assert_int_equal(xdr_get_u32(head + 4), xdr_get_u32(c->b));
	assert_int_equal(xdr_get_u32(head + 12), 0);
	assert_int_equal(xdr_get_u32(head + 24), 0);
	status = xdr_get_u32(head + 28);
	xdr_out_release(&req.reply);
	gw_cred_leave();
	return status;
}

/* PUTROOTFH; LOOKUP @name */
static uint32_t lookup(struct fx *f, struct srv *v, uint32_t xid, const char *name)
{
	struct call c;

	begin(&c, xid, 2);
	put32(&c, OP_PUTROOTFH);
	put32(&c, OP_LOOKUP);
	put_str(&c, name);
	return run(f, v, &c);
}

/* Each server serves its own export: a file is found in one only. */
static void test_exports_apart(void **state)
{
	struct fx *f = *state;

	assert_int_equal(lookup(f, &f->a, 1, "only_a"), NFS4_OK);
	assert_int_equal(lookup(f, &f->b, 2, "only_a"), NFS4ERR_NOENT);
	assert_int_equal(lookup(f, &f->b, 3, "only_b"), NFS4_OK);
	assert_int_equal(lookup(f, &f->a, 4, "only_b"), NFS4ERR_NOENT);
}

/*
 * drc_entries differs: the same REMOVE (same xid, same address) sent
 * twice to each is answered from its reply cache by the server that has
 * one, and run again by the one that has none; and one server's cached
 * reply is never the other's answer.
 */
static void test_reply_cache_apart(void **state)
{
	struct fx *f = *state;
	struct call c;

	begin(&c, 0x5eed, 2);
	put32(&c, OP_PUTROOTFH);
	put32(&c, OP_REMOVE);
	put_str(&c, "only_a");

	assert_int_equal(run(f, &f->a, &c), NFS4_OK);
	assert_int_equal(run(f, &f->a, &c), NFS4_OK); /* the first reply again */
	assert_int_equal(atomic_load(&f->a.s->stats.drc_hits), 1);
	assert_int_equal(lookup(f, &f->a, 10, "only_a"), NFS4ERR_NOENT);

	assert_int_equal(run(f, &f->b, &c), NFS4ERR_NOENT);
	assert_int_equal(run(f, &f->b, &c), NFS4ERR_NOENT);
	assert_int_equal(atomic_load(&f->b.s->stats.drc_hits), 0);
	assert_int_equal(gw_drc_entries(f->a.s->drc), 64);
	assert_int_equal(gw_drc_entries(f->b.s->drc), 0);
}

/* A client made on one server is not known to the other. */
static void test_state_apart(void **state)
{
	static const uint8_t verf[NFS4_VERIFIER_SIZE] = "verifier";
	struct nfs4_state_stats sa, sb;
	struct fx *f = *state;
	struct call c;

	begin(&c, 20, 1);
	put32(&c, OP_SETCLIENTID);
	memcpy(c.b + c.n, verf, sizeof(verf));
	c.n += sizeof(verf);
	put_str(&c, "test_gw_srv client");
	put32(&c, 0x40000000); /* cb_program */
	put_str(&c, "tcp");
	put_str(&c, "127.0.0.1.3.1");
	put32(&c, 1); /* cb_ident */
	assert_int_equal(run(f, &f->a, &c), NFS4_OK);

	nfs4_state_get_stats(f->a.s, &sa);
	nfs4_state_get_stats(f->b.s, &sb);
	assert_int_equal(sa.clients + sa.unconfirmed, 1);
	assert_int_equal(sb.clients + sb.unconfirmed, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_exports_apart, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_reply_cache_apart, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_state_apart, fx_setup, fx_teardown),
	};

	umask(0);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
