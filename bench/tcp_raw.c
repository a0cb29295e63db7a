// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * tcp_raw: what one loopback TCP connection carries when nothing but
 * moving bytes is done at either end: the ceiling for an NFS READ stream
 * over the same kind of connection (bench/nfs_readbench).
 *
 * A server thread accepts one connection on 127.0.0.1 (an ephemeral
 * port) and writes --msg-size (default 1 MiB) messages from one buffer
 * with send(2) until told to stop. The client, in the main thread,
 * reads each message into one buffer of that size with
 * recv(MSG_WAITALL), as nfs_readbench reads a READ reply. With --framed,
 * each message also carries what an NFS READ reply adds: a 4-byte record
 * mark and 128 bytes of header ahead of the data (sent with one
 * sendmsg), and the client reads the mark, then the rest, as
 * nfs_readbench does. Both sockets keep the kernel's default buffer
 * sizes (autotuned), and TCP_NODELAY is set as NFS servers set it.
 *
 * After a --warmup (default 0.5 s) the client counts the bytes it
 * receives for --seconds (default 5) and prints one key=value line per
 * --runs (default 1), each on a fresh connection:
 *
 *   tcp_raw run=N bytes=B ns=T GBps=G msg=M framed=0|1 client_cpu_ns=C
 *
 * (GB = 10^9 bytes; client_cpu_ns is the whole process: both threads).
 * Exit 0, or 1 naming the failing call.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#define TR_HDR 128 /* bytes of RPC + COMPOUND header in a READ reply, roughly */

static size_t msg_size = 1 << 20;
static bool framed;
static atomic_bool stop;

static void die(const char *call, int err)
{
	fprintf(stderr, "tcp_raw: %s: %s\n", call, strerror(err));
	exit(1);
}

static uint64_t now_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static double parse_num(const char *s, const char *what)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || v < 0) {
		fprintf(stderr, "tcp_raw: %s: bad value '%s'\n", what, s);
		exit(1);
	}
	switch (*end) {
	case 'k':
	case 'K':
		v *= 1024;
		end++;
		break;
	case 'm':
	case 'M':
		v *= 1024 * 1024;
		end++;
		break;
	}
	if (*end) {
		fprintf(stderr, "tcp_raw: %s: bad value '%s'\n", what, s);
		exit(1);
	}
	return v;
}

static void nodelay(int fd)
{
	int one = 1;

	if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)))
		die("setsockopt TCP_NODELAY", errno);
}

/* The sending side: one connection, messages until stop or the peer closes. */
static void *server(void *arg)
{
	int lfd = *(int *)arg, fd;
	uint8_t hdr[4 + TR_HDR];
	uint8_t *buf = malloc(msg_size);
	uint32_t mark = htonl(0x80000000U | (uint32_t)(TR_HDR + msg_size));

	if (!buf)
		die("malloc", errno);
	memset(buf, 0x5a, msg_size);
	memset(hdr, 0, sizeof(hdr));
	memcpy(hdr, &mark, 4);
	fd = accept(lfd, NULL, NULL);
	if (fd < 0)
		die("accept", errno);
	nodelay(fd);
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		struct iovec iov[2] = {
			{ .iov_base = hdr, .iov_len = sizeof(hdr) },
			{ .iov_base = buf, .iov_len = msg_size },
		};
		struct msghdr msg = { .msg_iov = framed ? iov : iov + 1,
				      .msg_iovlen = framed ? 2 : 1 };
		size_t left = (framed ? sizeof(hdr) : 0) + msg_size;

		while (left) {
			ssize_t n = sendmsg(fd, &msg, MSG_NOSIGNAL);

			if (n < 0 && errno == EINTR)
				continue;
			if (n < 0)
				goto out; /* the client closed: the run is over */
			left -= (size_t)n;
			while (n > 0) {
				if ((size_t)n >= msg.msg_iov->iov_len) {
					n -= (ssize_t)msg.msg_iov->iov_len;
					msg.msg_iov++;
					msg.msg_iovlen--;
				} else {
					msg.msg_iov->iov_base =
						(uint8_t *)msg.msg_iov->iov_base + n;
					msg.msg_iov->iov_len -= (size_t)n;
					n = 0;
				}
			}
		}
	}
out:
	close(fd);
	free(buf);
	return NULL;
}

static void recv_exact(int fd, void *buf, size_t len)
{
	uint8_t *p = buf;

	while (len) {
		ssize_t n = recv(fd, p, len, MSG_WAITALL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			die("recv", errno);
		if (n == 0)
			die("recv", ECONNRESET);
		p += n;
		len -= (size_t)n;
	}
}

static void run(unsigned int nrun, double warmup, double seconds)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t salen = sizeof(sa);
	uint8_t *buf = malloc(msg_size + TR_HDR);
	uint64_t bytes = 0, t0, t_end, c0, now;
	pthread_t th;
	int lfd, fd, rc;

	if (!buf)
		die("malloc", errno);
	memset(buf, 0, msg_size + TR_HDR);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (lfd < 0)
		die("socket", errno);
	if (bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) || listen(lfd, 1))
		die("bind/listen 127.0.0.1", errno);
	if (getsockname(lfd, (struct sockaddr *)&sa, &salen))
		die("getsockname", errno);
	atomic_store(&stop, false);
	rc = pthread_create(&th, NULL, server, &lfd);
	if (rc)
		die("pthread_create", rc);
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		die("socket", errno);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)))
		die("connect", errno);
	nodelay(fd);

	t0 = now_ns(CLOCK_MONOTONIC);
	t_end = t0 + (uint64_t)(warmup * 1e9);
	c0 = 0;
	for (;;) {
		if (framed) {
			recv_exact(fd, buf, 4);
			recv_exact(fd, buf, TR_HDR + msg_size);
		} else {
			recv_exact(fd, buf, msg_size);
		}
		now = now_ns(CLOCK_MONOTONIC);
		if (!c0) {
			if (now < t_end)
				continue;
			/* warmed up: the clock starts at the end of this message */
			c0 = now_ns(CLOCK_PROCESS_CPUTIME_ID);
			t0 = now;
			t_end = now + (uint64_t)(seconds * 1e9);
			continue;
		}
		bytes += msg_size; /* data only, as an NFS READ counts it */
		if (now >= t_end)
			break;
	}
	c0 = now_ns(CLOCK_PROCESS_CPUTIME_ID) - c0;
	atomic_store(&stop, true);
	shutdown(fd, SHUT_RDWR);
	close(fd);
	pthread_join(th, NULL);
	close(lfd);
	printf("tcp_raw run=%u bytes=%" PRIu64 " ns=%" PRIu64 " GBps=%.3f msg=%zu framed=%d "
	       "client_cpu_ns=%" PRIu64 "\n",
	       nrun, bytes, now - t0, (double)bytes / (double)(now - t0), msg_size, framed, c0);
	fflush(stdout);
	free(buf);
}

static void usage(FILE *out)
{
	fprintf(out, "usage: tcp_raw [--seconds S] [--warmup S] [--msg-size N] [--framed] "
		     "[--runs N]\n"
		     "Loopback TCP throughput: a thread sends N-byte messages (default 1M),\n"
		     "the main thread receives them; one key=value line per run.\n");
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "seconds", required_argument, NULL, 't' },
		{ "warmup", required_argument, NULL, 'w' },
		{ "msg-size", required_argument, NULL, 's' },
		{ "framed", no_argument, NULL, 'f' },
		{ "runs", required_argument, NULL, 'r' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	double seconds = 5, warmup = 0.5;
	unsigned int runs = 1, i;
	int c;

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 't':
			seconds = parse_num(optarg, "--seconds");
			break;
		case 'w':
			warmup = parse_num(optarg, "--warmup");
			break;
		case 's':
			msg_size = (size_t)parse_num(optarg, "--msg-size");
			break;
		case 'f':
			framed = true;
			break;
		case 'r':
			runs = (unsigned int)parse_num(optarg, "--runs");
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 1;
		}
	}
	if (optind != argc || seconds <= 0 || !runs || !msg_size || msg_size > (256U << 20)) {
		usage(stderr);
		return 1;
	}
	for (i = 1; i <= runs; i++)
		run(i, warmup, seconds);
	return 0;
}
