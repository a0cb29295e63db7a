// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * lacuna nfs-map and nfs-get: a file's holes as an NFSv4.2 server
 * reports them.
 *
 *   lacuna nfs-map nfs://HOST[:PORT]/PATH [--offset N] [--length N] [--seek] [--json]
 *                  [--rdma | --tls [--ca FILE] [--cert FILE [--key FILE]]]
 *
 * maps the file (or a range of it) from the server's READ_PLUS replies
 * (the data is read and dropped) or, with --seek or from a server
 * without READ_PLUS, from SEEK(DATA)/SEEK(HOLE), and prints it as
 * `lacuna map` does: the same table, picture and totals, the same
 * segment fields in JSON. The size and the allocated bytes are the
 * server's (GETATTR size and space_used when the file was opened).
 *
 *   lacuna nfs-get [--read] [--depth D] [--rdma | --tls [--ca FILE] [--cert FILE
 *                  [--key FILE]]] nfs://HOST[:PORT]/PATH DEST
 *
 * copies the file into DEST with READ_PLUS: data segments are written
 * where they belong, holes are left unwritten and DEST is truncated to
 * the file's size at the end, so DEST is as sparse as the server said
 * the file is. --read uses READ instead (holes arrive as zeros and are
 * written as data), for comparison; a server without READ_PLUS gets
 * READ too, with a note on stderr. A progress bar goes to stderr when
 * it is a terminal; the figures (data and hole bytes received, bytes
 * on the wire, time, throughput) to stdout at the end. A failed copy
 * removes DEST.
 *
 * --rdma connects with RPC-over-RDMA (RFC 8166, port 20049 when the URL
 * names none) instead of TCP: READ data then arrives by RDMA Write into
 * a write chunk, larger replies through the reply chunk. A lacuna built
 * without RDMA refuses the option.
 *
 * --tls connects with RPC-with-TLS (RFC 9289, nfs_client_tls.c): the
 * AUTH_TLS probe, then TLS 1.3 on the same TCP connection (same port).
 * The server's certificate is checked against --ca FILE (PEM), or the
 * system's trust store, and must name the URL's host. --cert FILE and
 * --key FILE (PEM; the key may be in the cert file) offer a client
 * certificate, for exports that want mutual TLS (xprtsec=mtls). --ca,
 * --cert and --key imply --tls. An export whose xprtsec policy refuses
 * the connection answers NFS4ERR_WRONGSEC, and the message says which
 * option to try.
 *
 * Exit status: 0 done, 1 failed (the message names what), 2 usage.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "nfs4.h"
#include "lacuna_tool.h"
#include "nfs_client.h"
#include "nfs_tls.h"

#define NFS_DEPTH 4 /* calls in flight by default */
#define PROGRESS_NS 100000000ULL

struct nfs_cmd {
	const char *name; /* "lacuna nfs-get" */
	const char *url;
	struct nfsc *c;
	struct nfsc_file f;
	bool rdma; /* RPC-over-RDMA, not TCP */
	bool tls;  /* RPC-with-TLS */
	struct nfs_tls_opts tls_o;
	bool bar;		     /* a progress bar is on stderr's line */
	char sec[NFSC_SEC_MAX + 32]; /* the transport's security, once connected */
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void clear_bar(struct nfs_cmd *nc)
{
	if (nc->bar) {
		fputs("\r\033[K", stderr);
		nc->bar = false;
	}
}

static void on_note(void *arg, const char *msg)
{
	struct nfs_cmd *nc = arg;

	clear_bar(nc);
	fprintf(stderr, "%s: note: %s\n", nc->name, msg);
}

static int cmd_fail(struct nfs_cmd *nc, const char *msg)
{
	const struct nfsc_xprt *t = nc->c ? nfsc_xprt(nc->c) : NULL;

	clear_bar(nc);
	fprintf(stderr, "%s: %s\n", nc->name, msg);
	/* exports(5)'s secure: AUTH_SYS only from a reserved port */
	if (t && !t->resvport && nfsc_status(nc->c) == NFS4ERR_PERM)
		fprintf(stderr,
			"%s: the server refused a call from port %u: the export is `secure` "
			"(AUTH_SYS from ports below 1024 only): run as root, which connects from a "
			"reserved port, or add `insecure` to the export's options\n",
			nc->name, t->sport);
	/*
	 * The export's xprtsec= policy does not admit this transport: nfsd's
	 * tls is TLS without a client certificate, mtls with one, none the clear.
	 */
	if (t && nfsc_status(nc->c) == NFS4ERR_WRONGSEC)
		fprintf(stderr, "%s: the export does not admit %s (its xprtsec= policy): try %s\n",
			nc->name,
			t->mtls	 ? "mutual TLS"
			: t->tls ? "TLS without a client certificate"
				 : "a connection in the clear",
			t->mtls	 ? "--tls without --cert and --key, or no TLS"
			: t->tls ? "--cert and --key (mutual TLS), or no TLS"
				 : "--tls, or --cert and --key (mutual TLS)");
	return 1;
}

/* URL, connection, session, OPEN. An exit status (0: go on). */
static int nfs_setup(struct nfs_cmd *nc)
{
	struct nfsc_url u;
	char err[NFSC_ERR_MAX];

	if (nfsc_url_parse(nc->url, &u, err, sizeof(err))) {
		fprintf(stderr, "%s: %s\n", nc->name, err);
		return 2;
	}
	if (nfsc_create(&nc->c))
		return cmd_fail(nc, "malloc: out of memory");
	nfsc_set_note(nc->c, on_note, nc);
	if (nc->tls) {
		struct nfsc_xprt *t;

		if (nfsc_tls_connect(u.host, u.port, NFSC_REC_MAX, &nc->tls_o, &t, err,
				     sizeof(err)))
			return cmd_fail(nc, err);
		nfsc_attach(nc->c, t);
		snprintf(nc->sec, sizeof(nc->sec), "%s%s", t->sec,
			 t->mtls ? ", client certificate" : "");
	} else if (nc->rdma) {
#ifdef HAVE_RDMA
		struct nfsc_xprt *t;

		if (nfsc_rdma_connect(u.host, u.has_port ? u.port : NFSC_RDMA_PORT, NFSC_REC_MAX,
				      &t, err, sizeof(err)))
			return cmd_fail(nc, err);
		nfsc_attach(nc->c, t);
#endif
	} else if (nfsc_connect(nc->c, u.host, u.port)) {
		return cmd_fail(nc, nfsc_error(nc->c));
	}
	if (nfsc_session(nc->c) || nfsc_open(nc->c, u.path, &nc->f))
		return cmd_fail(nc, nfsc_error(nc->c));
	return 0;
}

/* --rdma given: 0 when this lacuna has RDMA, else the usage exit status. */
static int rdma_check(const char *name)
{
#ifdef HAVE_RDMA
	(void)name;
	return 0;
#else
	fprintf(stderr, "%s: --rdma: built without RDMA\n", name);
	return 2;
#endif
}

/*
 * --tls, --ca, --cert, --key given into @nc: 0, or the usage exit
 * status. --ca, --cert, --key imply --tls; RDMA has no TLS.
 */
static int tls_check(struct nfs_cmd *nc, bool tls, const char *ca, const char *cert,
		     const char *key)
{
	nc->tls = tls || ca || cert || key;
	nc->tls_o = (struct nfs_tls_opts){ .ca = ca, .cert = cert, .key = key };
	if (key && !cert) {
		fprintf(stderr, "%s: --key needs --cert\n", nc->name);
		return 2;
	}
	if (nc->tls && nc->rdma) {
		fprintf(stderr,
			"%s: --tls and --rdma do not go together (RPC-with-TLS is for TCP)\n",
			nc->name);
		return 2;
	}
	return 0;
}

/* CLOSE, end of session; the exit status @rc or 1 if they fail. */
static int nfs_finish(struct nfs_cmd *nc, int rc)
{
	if (!rc && (nfsc_close(nc->c, &nc->f) || nfsc_end(nc->c)))
		rc = cmd_fail(nc, nfsc_error(nc->c));
	nfsc_destroy(nc->c);
	return rc;
}

/* ------------------------------------------------------------ nfs-map */

/* segments as they come, unmerged: replies arrive in any order */
static int map_seg(void *arg, const struct nfsc_seg *s)
{
	struct lacuna_extent e = {
		.offset = s->offset,
		.length = s->length,
		.kind = s->kind == NFSC_CONTENT_DATA ? LACUNA_SEG_DATA : LACUNA_SEG_HOLE,
	};

	return lmap_push(arg, &e);
}

static int ext_cmp(const void *a, const void *b)
{
	const struct lacuna_extent *x = a, *y = b;

	return x->offset < y->offset ? -1 : x->offset > y->offset;
}

/* the transport options of nfs-map and nfs-get */
#define XPRT_HELP                                                                          \
	"  --rdma       RPC-over-RDMA (port 20049 unless the URL names one)\n"             \
	"  --tls        RPC-with-TLS (RFC 9289): TLS 1.3 on the same port; the server's\n" \
	"               certificate must name HOST and be signed by a trusted CA\n"        \
	"  --ca FILE    the CA certificates (PEM) to trust (default: the system's)\n"      \
	"  --cert FILE  a client certificate (PEM) for mutual TLS (xprtsec=mtls)\n"        \
	"  --key FILE   its private key (PEM; default: in the --cert file)\n"              \
	"               --ca, --cert and --key imply --tls\n"

static const struct lcmd_help map_help = {
	.name = "lacuna nfs-map",
	.synopsis = "nfs://HOST[:PORT]/PATH [--offset N] [--length N] [--seek] [--json] [--rdma]\n"
		    "       [--tls] [--ca FILE] [--cert FILE] [--key FILE]",
	.options = "The data/hole map of a file from an NFSv4.2 server's READ_PLUS replies,\n"
		   "printed as 'lacuna map' prints it.\n"
		   "  --offset N   start the map at byte N (must be inside the file)\n"
		   "  --length N   map N bytes from there (default: to the end)\n"
		   "  --seek       map with SEEK(DATA)/SEEK(HOLE) instead of READ_PLUS\n"
		   "  --json       one JSON object instead of the table\n" XPRT_HELP,
};

/*
 * Map [off, end) into mc: READ_PLUS (replies in any order, so the
 * segments are sorted afterwards), else SEEK, else all data. Returns
 * the op the map comes from, or NULL on error.
 */
static const char *map_walk(struct nfs_cmd *nc, bool seek, uint64_t off, uint64_t end,
			    struct lmap *mc)
{
	struct nfsc_walk w = { .op = OP_READ_PLUS,
			       .offset = off,
			       .end = end,
			       .depth = NFS_DEPTH,
			       .seg = map_seg,
			       .arg = mc,
			       .no_fallback = true };
	int rc = -EOPNOTSUPP;

	if (!seek) {
		rc = nfsc_walk(nc->c, &nc->f, &w);
		if (!rc) {
			if (mc->n)
				qsort(mc->seg, mc->n, sizeof(*mc->seg), ext_cmp);
			return "READ_PLUS";
		}
		if (rc != -EOPNOTSUPP)
			return NULL;
		on_note(nc, "the server has no READ_PLUS: mapping with SEEK");
	}
	mc->n = 0;
	rc = nfsc_seek_walk(nc->c, &nc->f, &w);
	if (!rc)
		return "SEEK";
	if (rc != -EOPNOTSUPP)
		return NULL;
	on_note(nc, "the server has no SEEK either: the whole range is shown as data");
	mc->n = 0;
	if (off < end)
		map_seg(mc, &(struct nfsc_seg){ .offset = off,
						.length = end - off,
						.kind = NFSC_CONTENT_DATA });
	return "GETATTR";
}

int lacuna_cmd_nfs_map(int argc, char **argv)
{
	struct nfs_cmd nc = { .name = "lacuna nfs-map" };
	struct lmap mc = { 0 }, m = { 0 };
	struct lmap_args a;
	const char *how;
	char text[128 + NFSC_SEC_MAX + 32];
	uint64_t end;
	uint32_t minor;
	size_t i;
	int rc;

	rc = lmap_parse_args(argc, argv, &map_help, true, &a);
	if (rc >= 0)
		return rc;
	nc.rdma = a.rdma;
	if (nc.rdma && (rc = rdma_check(nc.name)))
		return rc;
	if ((rc = tls_check(&nc, a.tls, a.ca, a.cert, a.key)))
		return rc;
	nc.url = a.target;
	rc = nfs_setup(&nc);
	if (rc) {
		nfsc_destroy(nc.c);
		return rc;
	}
	if (lmap_check_offset(nc.name, &a, nc.f.size))
		return nfs_finish(&nc, 1);
	end = a.len > nc.f.size || a.off > nc.f.size - a.len ? nc.f.size : a.off + a.len;
	how = map_walk(&nc, a.seek, a.off, a.off < end ? end : a.off, &mc);
	if (!how) {
		lmap_free(&mc);
		return nfs_finish(&nc, cmd_fail(&nc, nfsc_error(nc.c)));
	}
	minor = nfsc_minor(nc.c);
	rc = nfs_finish(&nc, 0);
	for (i = 0; i < mc.n && !rc; i++)
		if (lmap_add(&m, &mc.seg[i]))
			rc = cmd_fail(&nc, "malloc: out of memory");
	lmap_free(&mc);
	if (rc) {
		lmap_free(&m);
		return rc;
	}
	m.size = nc.f.size;
	m.alloc = nc.f.space_used;
	m.ranged = a.off || a.len != UINT64_MAX;
	lmap_totals(&m);
	if (a.json) {
		snprintf(text, sizeof(text), "\"op\":\"%s\"%s", how,
			 !nc.tls	 ? ""
			 : nc.tls_o.cert ? ",\"xprtsec\":\"mtls\""
					 : ",\"xprtsec\":\"tls\"");
		lmap_print_json(nc.url, text, &m);
	} else {
		if (strcmp(how, "GETATTR"))
			snprintf(text, sizeof(text),
				 "map from the server's %s replies (NFSv4.%" PRIu32 "%s%s)", how,
				 minor, nc.tls ? ", " : "", nc.sec);
		else
			snprintf(text, sizeof(text),
				 "no map from the server (no READ_PLUS, no SEEK): "
				 "all data");
		lmap_print_text(nc.url, text, &m);
	}
	lmap_free(&m);
	return 0;
}

/* ------------------------------------------------------------ nfs-get */

struct get_ctx {
	struct nfs_cmd *nc;
	const char *dest;
	int fd;
	uint64_t size, done, t0, shown;
	int err; /* errno of a failed pwrite */
};

static void progress(struct get_ctx *g)
{
	struct winsize ws;
	uint64_t t = now_ns();
	char a[32], b[32], r[32];
	int width = 80, bar, fill, i;
	double s = (double)(t - g->t0) / 1e9;

	if (g->shown && t - g->shown < PROGRESS_NS && g->done < g->size)
		return;
	g->shown = t;
	if (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 40)
		width = ws.ws_col;
	lmap_human(g->done, a, sizeof(a));
	lmap_human(g->size, b, sizeof(b));
	lmap_human(s > 0 ? (uint64_t)((double)g->done / s) : 0, r, sizeof(r));
	bar = width - 50;
	fill = g->size ? (int)((double)bar * (double)g->done / (double)g->size) : bar;
	fputs("\r[", stderr);
	for (i = 0; i < bar; i++)
		fputc(i < fill ? '#' : '.', stderr);
	fprintf(stderr, "] %3d%% %s of %s, %s/s\033[K",
		g->size ? (int)(100.0 * (double)g->done / (double)g->size) : 100, a, b, r);
	g->nc->bar = true;
}

static int get_seg(void *arg, const struct nfsc_seg *s)
{
	struct get_ctx *g = arg;
	uint64_t done = 0;

	while (s->kind == NFSC_CONTENT_DATA && done < s->length) {
		ssize_t n =
			pwrite(g->fd, s->data + done, s->length - done, (off_t)(s->offset + done));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			g->err = n < 0 ? errno : EIO;
			return -g->err;
		}
		done += (uint64_t)n;
	}
	g->done += s->length;
	if (isatty(STDERR_FILENO))
		progress(g);
	return 0;
}

static const struct lcmd_help get_help = {
	.name = "lacuna nfs-get",
	.synopsis = "[--read] [--depth D] [--rdma] [--tls] [--ca FILE] [--cert FILE] [--key FILE]\n"
		    "       nfs://HOST[:PORT]/PATH DEST",
	.options =
		"Copy a file from an NFSv4.2 server into DEST with READ_PLUS: holes stay holes.\n"
		"  --read       plain READ instead (holes arrive as zeros), to compare\n"
		"  --depth D    D calls in flight (default 4)\n" XPRT_HELP,
};

/*
 * @wire: bytes received during the copy, RPC record marks included
 * (RPC-over-RDMA: transport headers and RDMA Writes included)
 */
static void get_report(const struct nfs_cmd *nc, const struct nfsc_walk *w, const char *dest,
		       uint64_t size, uint64_t wire, uint64_t ns, unsigned int depth)
{
	double s = (double)ns / 1e9;
	char a[32], b[32], c[32], d[32], r1[32], r2[32];

	lmap_human(size, a, sizeof(a));
	lmap_human(w->data_bytes, b, sizeof(b));
	lmap_human(w->hole_bytes, c, sizeof(c));
	lmap_human(wire, d, sizeof(d));
	lmap_human(s > 0 ? (uint64_t)((double)size / s) : 0, r1, sizeof(r1));
	lmap_human(s > 0 ? (uint64_t)((double)wire / s) : 0, r2, sizeof(r2));
	printf("%s: %" PRIu64 " bytes (%s) from %s with %s%s%s%s, %" PRIu64
	       " calls, %u in flight\n",
	       dest, size, a, nc->url, w->fell_back || w->op == OP_READ ? "READ" : "READ_PLUS",
	       nc->rdma ? " over RDMA" : "", nc->tls ? " over " : "", nc->tls ? nc->sec : "",
	       w->calls, depth);
	printf("received: data %" PRIu64 " (%s), holes %" PRIu64 " (%s), on the wire %" PRIu64
	       " (%s)\n",
	       w->data_bytes, b, w->hole_bytes, c, wire, d);
	printf("time %.3f s: %s/s of file, %s/s on the wire\n", s, r1, r2);
}

int lacuna_cmd_nfs_get(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "read", no_argument, NULL, 'r' },
		{ "depth", required_argument, NULL, 'd' },
		{ "rdma", no_argument, NULL, 'R' },
		{ "tls", no_argument, NULL, 'T' },
		{ "ca", required_argument, NULL, 'A' },
		{ "cert", required_argument, NULL, 'E' },
		{ "key", required_argument, NULL, 'K' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct nfs_cmd nc = { .name = "lacuna nfs-get" };
	struct nfsc_walk w = { .op = OP_READ_PLUS, .depth = NFS_DEPTH };
	struct get_ctx g = { .nc = &nc, .fd = -1 };
	uint64_t depth = NFS_DEPTH, size, wire;
	const char *ca = NULL, *cert = NULL, *key = NULL;
	bool tls = false;
	char msg[NFSC_ERR_MAX + 64];
	struct stat dst;
	int o, rc;

	while ((o = getopt_long(argc, argv, "rd:h", opts, NULL)) != -1) {
		switch (o) {
		case 'r':
			w.op = OP_READ;
			break;
		case 'd':
			if (lmap_parse_size(optarg, &depth) || depth < 1 ||
			    depth > NFSC_SLOTS_MAX) {
				fprintf(stderr, "lacuna nfs-get: --depth must be 1 to %d\n",
					NFSC_SLOTS_MAX);
				return 2;
			}
			break;
		case 'R':
			nc.rdma = true;
			break;
		case 'T':
			tls = true;
			break;
		case 'A':
			ca = optarg;
			break;
		case 'E':
			cert = optarg;
			break;
		case 'K':
			key = optarg;
			break;
		case 'h':
			return lcmd_usage(&get_help, false);
		default:
			return lcmd_usage(&get_help, true);
		}
	}
	if (optind != argc - 2) {
		fprintf(stderr, "%s: expected a URL and a DEST\n", nc.name);
		return lcmd_usage(&get_help, true);
	}
	if (nc.rdma && (rc = rdma_check(nc.name)))
		return rc;
	if ((rc = tls_check(&nc, tls, ca, cert, key)))
		return rc;
	nc.url = argv[optind];
	g.dest = argv[optind + 1];
	rc = nfs_setup(&nc);
	if (rc) {
		nfsc_destroy(nc.c);
		return rc;
	}
	g.fd = open(g.dest, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (g.fd < 0) {
		snprintf(msg, sizeof(msg), "open %s: %s", g.dest, strerror(errno));
		return nfs_finish(&nc, cmd_fail(&nc, msg));
	}
	/*
	 * The size first: a file grown write by write gets blocks preallocated
	 * past its end (XFS) that would stay inside the holes written around.
	 */
	if (fstat(g.fd, &dst) < 0)
		dst.st_mode = 0;
	if (S_ISREG(dst.st_mode) && ftruncate(g.fd, (off_t)nc.f.size)) {
		snprintf(msg, sizeof(msg), "ftruncate %s: %s", g.dest, strerror(errno));
		return nfs_finish(&nc, cmd_fail(&nc, msg));
	}
	w.depth = (unsigned int)depth;
	if (w.depth > nfsc_slots(nc.c))
		w.depth = nfsc_slots(nc.c);
	w.end = g.size = nc.f.size;
	w.seg = get_seg;
	w.arg = &g;
	g.t0 = now_ns();
	wire = nfsc_xprt(nc.c)->bytes_in;
	rc = nfsc_walk(nc.c, &nc.f, &w);
	wire = nfsc_xprt(nc.c)->bytes_in - wire;
	size = w.eof_at < nc.f.size ? w.eof_at : nc.f.size;
	if (rc && g.err)
		snprintf(msg, sizeof(msg), "pwrite %s: %s", g.dest, strerror(g.err));
	else if (rc)
		snprintf(msg, sizeof(msg), "%s", nfsc_error(nc.c));
	else if (S_ISREG(dst.st_mode) && ftruncate(g.fd, (off_t)size))
		snprintf(msg, sizeof(msg), "ftruncate %s: %s", g.dest, strerror(errno));
	else
		msg[0] = '\0';
	if (close(g.fd) && !msg[0])
		snprintf(msg, sizeof(msg), "close %s: %s", g.dest, strerror(errno));
	if (msg[0]) {
		unlink(g.dest);
		return nfs_finish(&nc, cmd_fail(&nc, msg));
	}
	clear_bar(&nc);
	get_report(&nc, &w, g.dest, size, wire, now_ns() - g.t0, w.depth);
	return nfs_finish(&nc, 0);
}
