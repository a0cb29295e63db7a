// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests of the client side of RPC-with-TLS (tools/nfs_tls.c): the
 * AUTH_TLS probe as it goes on the wire, and every way a server can
 * answer it other than STARTTLS (a denial, an AUTH_NONE verifier without
 * STARTTLS, another xid, an oversized reply, a closed connection), each
 * "the server does not support RPC-with-TLS"; a STARTTLS answer followed
 * by no TLS at all, a handshake failure; a CA file that cannot be loaded,
 * refused before anything is sent. The server is a thread on the other
 * end of a socketpair.
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cmocka.h>

#include "nfs_tls.h"
#include "rpc.h"
#include "xdr.h"

enum answer {
	ANS_DENIED,	  /* MSG_DENIED, AUTH_ERROR, AUTH_BADCRED */
	ANS_NO_STARTTLS,  /* accepted, AUTH_NONE verifier with an empty body */
	ANS_WRONG_XID,	  /* STARTTLS, for another xid */
	ANS_HUGE,	  /* a record mark of 64 KiB */
	ANS_CLOSE,	  /* the connection closed */
	ANS_STARTTLS_EOF, /* STARTTLS, then the connection closed */
	ANS_NOTHING,	  /* nothing read, nothing sent */
};

struct server {
	int fd;
	enum answer ans;
	uint8_t call[64];
	ssize_t call_len;
};

static void *serve(void *arg)
{
	struct server *s = arg;
	uint8_t r[64];
	uint32_t xid;
	size_t n = 0;

	if (s->ans == ANS_NOTHING)
		return NULL;
	s->call_len = recv(s->fd, s->call, 44, MSG_WAITALL);
	xid = s->call_len >= 8 ? xdr_get_u32(s->call + 4) : 0;
	if (s->ans == ANS_CLOSE) {
		shutdown(s->fd, SHUT_RDWR);
		return NULL;
	}
#define PUT(v) (xdr_put_u32(r + n, (v)), n += 4)
	PUT(0); /* the mark, below */
	PUT(s->ans == ANS_WRONG_XID ? xid + 1 : xid);
	PUT(RPC_REPLY);
	if (s->ans == ANS_DENIED) {
		PUT(RPC_MSG_DENIED);
		PUT(RPC_AUTH_ERROR);
		PUT(RPC_AUTH_BADCRED);
	} else {
		PUT(RPC_MSG_ACCEPTED);
		PUT(RPC_AUTH_NONE);
		if (s->ans == ANS_NO_STARTTLS) {
			PUT(0);
		} else {
			PUT(8);
			memcpy(r + n, "STARTTLS", 8);
			n += 8;
		}
		PUT(RPC_SUCCESS);
	}
#undef PUT
	xdr_put_u32(r, RPC_REC_LAST | (s->ans == ANS_HUGE ? 65536U : (uint32_t)(n - 4)));
	send(s->fd, r, n, MSG_NOSIGNAL);
	shutdown(s->fd, SHUT_RDWR);
	return NULL;
}

/* nfs_tls_start() against a server answering @ans; its rc, message in err */
static int run(enum answer ans, const struct nfs_tls_opts *o, char *err, size_t errlen,
	       struct server *s)
{
	struct timeval tmo = { .tv_sec = 10 };
	struct nfs_tls t;
	pthread_t th;
	int sv[2], rc;

	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	setsockopt(sv[0], SOL_SOCKET, SO_RCVTIMEO, &tmo, sizeof(tmo));
	*s = (struct server){ .fd = sv[1], .ans = ans };
	assert_int_equal(pthread_create(&th, NULL, serve, s), 0);
	err[0] = '\0';
	rc = nfs_tls_start(&t, sv[0], o, err, errlen);
	pthread_join(th, NULL);
	if (ans == ANS_NOTHING) /* what the client sent, if anything */
		s->call_len = recv(sv[1], s->call, sizeof(s->call), MSG_DONTWAIT);
	if (!rc)
		nfs_tls_end(&t, false);
	close(sv[0]);
	close(sv[1]);
	return rc;
}

static const struct nfs_tls_opts OPTS = { .host = "127.0.0.1" };

static void test_probe_on_the_wire(void **state)
{
	static const uint32_t want[] = {
		0x80000000U | 40, 0 /* xid */, RPC_CALL,      RPC_VERS, 100003, 4, 0,
		RPC_AUTH_TLS,	  0,	       RPC_AUTH_NONE, 0
	};
	struct server s;
	char err[256];
	size_t i;

	(void)state;
	assert_int_equal(run(ANS_DENIED, &OPTS, err, sizeof(err), &s), -EPROTONOSUPPORT);
	assert_int_equal(s.call_len, 44);
	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		if (i != 1)
			assert_int_equal(xdr_get_u32(s.call + 4 * i), want[i]);
	assert_non_null(strstr(err, "does not support RPC-with-TLS"));
	assert_non_null(strstr(err, "refused the AUTH_TLS probe"));
}

static void test_not_starttls(void **state)
{
	static const struct {
		enum answer ans;
		const char *why;
	} cases[] = {
		{ ANS_NO_STARTTLS, "no STARTTLS verifier" },
		{ ANS_WRONG_XID, "something else" },
		{ ANS_HUGE, "over" },
		{ ANS_CLOSE, "closed the connection" },
	};
	struct server s;
	char err[256];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(run(cases[i].ans, &OPTS, err, sizeof(err), &s), -EPROTONOSUPPORT);
		assert_non_null(strstr(err, "does not support RPC-with-TLS"));
		assert_non_null(strstr(err, cases[i].why));
	}
}

static void test_starttls_then_no_tls(void **state)
{
	struct server s;
	char err[256];

	(void)state;
	assert_int_equal(run(ANS_STARTTLS_EOF, &OPTS, err, sizeof(err), &s), -ECONNABORTED);
	assert_non_null(strstr(err, "TLS handshake failed"));
}

static void test_bad_ca_file(void **state)
{
	struct nfs_tls_opts o = { .ca = "/nonexistent/ca.pem", .host = "127.0.0.1" };
	struct server s;
	char err[256];

	(void)state;
	assert_int_equal(run(ANS_NOTHING, &o, err, sizeof(err), &s), -EINVAL);
	assert_non_null(strstr(err, "--ca /nonexistent/ca.pem"));
	assert_true(s.call_len <= 0); /* nothing was sent */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_probe_on_the_wire),
		cmocka_unit_test(test_not_starttls),
		cmocka_unit_test(test_starttls_then_no_tls),
		cmocka_unit_test(test_bad_ca_file),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
