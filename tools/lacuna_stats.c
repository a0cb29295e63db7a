// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * lacuna stats [--watch SECONDS [--count N]] [--json] SOURCE
 *
 * What lacunad (or lacunafs) is doing, as nfsstat/nfsiostat show it: per
 * operation the calls, the rate, the average and 99th-percentile latency
 * and the errors; READ_PLUS bytes sent as data and answered as holes
 * (bytes not sent), the share of replies taken atomically; connections,
 * clients and sessions. SOURCE is a metrics URL (http://ADDR:PORT/metrics,
 * lacunad's metrics_listen or lacunafs's -o metrics=) or a stats file
 * (stats_file, --stats-file), which has no latencies.
 *
 * Without --watch the numbers are totals since the start (rates over the
 * uptime when the page gives it); with --watch every SECONDS the numbers
 * of the interval, the screen redrawn in place on a terminal. The
 * percentile comes from the histogram buckets, interpolated inside the
 * bucket as Prometheus's histogram_quantile() does.
 */
#include <errno.h>
#include <math.h>
#include <netdb.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "lacuna_tool.h"

#define ST_ROWS_MAX 128
#define ST_BUCKETS_MAX 64
#define ST_PAGE_MAX (64u << 20)
#define ST_NAME_MAX 40

struct st_row {
	char name[ST_NAME_MAX];
	double calls, errors;
	bool hist; /* latencies known */
	double sum, count;
	unsigned int nb;
	double le[ST_BUCKETS_MAX], cum[ST_BUCKETS_MAX]; /* cumulative, +Inf last */
};

struct st_snap {
	struct st_row rows[ST_ROWS_MAX];
	unsigned int nrows;
	double rp_data, rp_hole, rp_atomic, rp_not_atomic;
	double conns, clients, sessions, bytes_in, bytes_out;
	double xprtsec_refused; /* calls refused for their transport (xprtsec=) */
	double start_time; /* 0: unknown */
	double taken;	   /* when, CLOCK_REALTIME seconds */
};

static const struct lcmd_help stats_help = {
	.name = "lacuna stats",
	.synopsis = "[--watch SECONDS [--count N]] [--json] SOURCE",
	.options = "A server's statistics as a table: per-op calls, rate, average and p99 latency,\n"
		   "errors, READ_PLUS bytes sent and hole bytes not sent, the atomic share,\n"
		   "connections and clients, calls refused for their transport (xprtsec=).\n"
		   "SOURCE is http://ADDR:PORT/metrics (lacunad's or lacunafs's) or a lacunad\n"
		   "stats file.\n"
		   "  --watch S    show the rates over each S seconds, redrawn in place\n"
		   "  --count N    with --watch: stop after N intervals\n"
		   "  --json       JSON objects (one per interval) instead of the table\n",
};

static struct st_row *row(struct st_snap *s, const char *name)
{
	struct st_row *r;
	unsigned int i;

	for (i = 0; i < s->nrows; i++)
		if (!strcmp(s->rows[i].name, name))
			return &s->rows[i];
	if (s->nrows == ST_ROWS_MAX)
		return NULL;
	r = &s->rows[s->nrows++];
	memset(r, 0, sizeof(*r));
	snprintf(r->name, sizeof(r->name), "%s", name);
	return r;
}

/* The value of label @key in "{a="x",b="y"}" into @out; false when absent. */
static bool label(const char *labels, const char *key, char *out, size_t size)
{
	char pat[48];
	const char *p, *e;

	snprintf(pat, sizeof(pat), "%s=\"", key);
	p = strstr(labels, pat);
	if (!p)
		return false;
	p += strlen(pat);
	e = strchr(p, '"');
	if (!e || (size_t)(e - p) >= size)
		return false;
	memcpy(out, p, (size_t)(e - p));
	out[e - p] = '\0';
	return true;
}

static void hist_sample(struct st_snap *s, const char *rname, const char *suffix,
			const char *labels, double v)
{
	struct st_row *r = row(s, rname);
	char le[32];

	if (!r)
		return;
	r->hist = true;
	if (!strcmp(suffix, "_sum")) {
		r->sum = v;
	} else if (!strcmp(suffix, "_count")) {
		r->count = v;
	} else if (!strcmp(suffix, "_bucket") && label(labels, "le", le, sizeof(le)) &&
		   r->nb < ST_BUCKETS_MAX) {
		r->le[r->nb] = strcmp(le, "+Inf") ? strtod(le, NULL) : INFINITY;
		r->cum[r->nb++] = v;
	}
}

/* One "name{labels} value" line of a metrics page. */
static void metrics_line(struct st_snap *s, char *line)
{
	char *sp = strrchr(line, ' '), *brace, lv[ST_NAME_MAX], lv2[32], rname[ST_NAME_MAX + 8];
	const char *labels = "";
	struct st_row *r;
	double v;

	if (line[0] == '#' || !sp)
		return;
	*sp = '\0';
	v = strtod(sp + 1, NULL);
	brace = strchr(line, '{');
	if (brace) {
		*brace = '\0';
		labels = brace + 1;
	}
	if (!strcmp(line, "lacunad_ops_total") && label(labels, "op", lv, sizeof(lv)) &&
	    label(labels, "status", lv2, sizeof(lv2)) && (r = row(s, lv))) {
		r->calls += v;
		if (strcmp(lv2, "NFS4_OK"))
			r->errors += v;
	} else if (!strncmp(line, "lacunad_op_duration_seconds", 27) &&
		   label(labels, "op", lv, sizeof(lv))) {
		hist_sample(s, lv, line + 27, labels, v);
	} else if (!strncmp(line, "lacunafs_range_lock_wait_seconds", 32) &&
		   label(labels, "mode", lv, sizeof(lv))) {
		snprintf(rname, sizeof(rname), "lock_%s", lv);
		hist_sample(s, rname, line + 32, labels, v);
		if (!strcmp(line + 32, "_count") && (r = row(s, rname)))
			r->calls = v;
	} else if (!strcmp(line, "lacunafs_sparse_reads_total") &&
		   label(labels, "mode", lv, sizeof(lv))) {
		snprintf(rname, sizeof(rname), "sparse_%s", lv);
		if ((r = row(s, rname)))
			r->calls = v;
	} else if (!strcmp(line, "lacunad_read_plus_bytes_total")) {
		if (label(labels, "kind", lv, sizeof(lv)))
			*(strcmp(lv, "data") ? &s->rp_hole : &s->rp_data) = v;
	} else if (!strcmp(line, "lacunad_read_plus_replies_total")) {
		if (label(labels, "atomic", lv, sizeof(lv)))
			*(strcmp(lv, "yes") ? &s->rp_not_atomic : &s->rp_atomic) = v;
	} else if (!strcmp(line, "lacunad_transport_bytes_total")) {
		if (label(labels, "direction", lv, sizeof(lv)))
			*(strcmp(lv, "in") ? &s->bytes_out : &s->bytes_in) += v;
	} else if (!strcmp(line, "lacunad_connections")) {
		s->conns = v;
	} else if (!strcmp(line, "lacunad_clients")) {
		s->clients = v;
	} else if (!strcmp(line, "lacunad_sessions")) {
		s->sessions = v;
	} else if (!strcmp(line, "lacunad_xprtsec_refused_total")) {
		s->xprtsec_refused = v;
	} else if (!strcmp(line, "lacunad_start_time_seconds")) {
		s->start_time = v;
	}
}

/* One "key value" or "op NAME N errors E" line of a stats file. */
static void stats_file_line(struct st_snap *s, const char *line)
{
	static const struct {
		const char *key;
		size_t off;
	} keys[] = {
		{ "read_plus_data_bytes", offsetof(struct st_snap, rp_data) },
		{ "read_plus_hole_bytes", offsetof(struct st_snap, rp_hole) },
		{ "read_plus_atomic", offsetof(struct st_snap, rp_atomic) },
		{ "read_plus_not_atomic", offsetof(struct st_snap, rp_not_atomic) },
		{ "conns_open", offsetof(struct st_snap, conns) },
		{ "clients", offsetof(struct st_snap, clients) },
		{ "sessions", offsetof(struct st_snap, sessions) },
		{ "bytes_in", offsetof(struct st_snap, bytes_in) },
		{ "bytes_out", offsetof(struct st_snap, bytes_out) },
		{ "xprtsec_refused", offsetof(struct st_snap, xprtsec_refused) },
	};
	char key[64], name[ST_NAME_MAX];
	double v, e;
	size_t i;

	if (sscanf(line, "op %39s %lf errors %lf", name, &v, &e) == 3) {
		struct st_row *r = row(s, name);

		if (r) {
			r->calls = v;
			r->errors = e;
		}
		return;
	}
	if (sscanf(line, "%63s %lf", key, &v) != 2)
		return;
	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (!strcmp(key, keys[i].key))
			*(double *)((char *)s + keys[i].off) = v;
}

/* GET the page at http://HOST:PORT/PATH: the body, malloc'd, or NULL (reported). */
static char *http_get(const char *url)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICSERV };
	struct timeval tv = { .tv_sec = 30 };
	char host[256], port[8] = "80", *buf = NULL, *body;
	const char *h = url + 7, *path, *colon, *hend;
	struct addrinfo *ai;
	size_t len = 0, cap = 0;
	int fd, rc;

	path = strchr(h, '/');
	if (!path)
		path = h + strlen(h);
	hend = path;
	if (*h == '[') {
		const char *close = memchr(h, ']', (size_t)(path - h));

		if (!close)
			goto bad_url;
		colon = close[1] == ':' ? close + 1 : NULL;
		hend = close;
		h++;
	} else {
		colon = memchr(h, ':', (size_t)(path - h));
		if (colon)
			hend = colon;
	}
	if (hend <= h || (size_t)(hend - h) >= sizeof(host) ||
	    (colon && ((size_t)(path - colon - 1) >= sizeof(port) || path == colon + 1)))
		goto bad_url;
	memcpy(host, h, (size_t)(hend - h));
	host[hend - h] = '\0';
	if (colon) {
		memcpy(port, colon + 1, (size_t)(path - colon - 1));
		port[path - colon - 1] = '\0';
	}
	rc = getaddrinfo(host, port, &hints, &ai);
	if (rc) {
		fprintf(stderr, "lacuna stats: %s: %s\n", url, gai_strerror(rc));
		return NULL;
	}
	fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, ai->ai_addr, ai->ai_addrlen) < 0) {
		fprintf(stderr, "lacuna stats: connect to %s: %s\n", url, strerror(errno));
		freeaddrinfo(ai);
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	freeaddrinfo(ai);
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	dprintf(fd, "GET %s HTTP/1.0\r\nHost: %s\r\n\r\n", *path ? path : "/", host);
	for (;;) {
		ssize_t n;

		if (cap - len < 65536) {
			char *nb;

			cap = cap ? cap * 2 : 131072;
			nb = cap <= ST_PAGE_MAX ? realloc(buf, cap + 1) : NULL;
			if (!nb) {
				fprintf(stderr, "lacuna stats: %s: page too large\n", url);
				goto fail;
			}
			buf = nb;
		}
		n = read(fd, buf + len, cap - len);
		if (n < 0) {
			fprintf(stderr, "lacuna stats: read from %s: %s\n", url,
				errno == EAGAIN ? "timed out" : strerror(errno));
			goto fail;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	buf[len] = '\0';
	if (strncmp(buf, "HTTP/1.", 7) || strncmp(buf + 8, " 200", 4)) {
		fprintf(stderr, "lacuna stats: %s: %.*s\n", url, (int)strcspn(buf, "\r\n"), buf);
		free(buf);
		return NULL;
	}
	body = strstr(buf, "\r\n\r\n");
	if (!body) {
		fprintf(stderr, "lacuna stats: %s: no end of headers\n", url);
		free(buf);
		return NULL;
	}
	memmove(buf, body + 4, strlen(body + 4) + 1);
	return buf;
fail:
	close(fd);
	free(buf);
	return NULL;
bad_url:
	fprintf(stderr, "lacuna stats: '%s' is not http://ADDR:PORT/PATH\n", url);
	return NULL;
}

static int snap_take(const char *src, struct st_snap *s)
{
	bool url = !strncmp(src, "http://", 7);
	struct timespec ts;
	char *page, *line, *save = NULL;

	memset(s, 0, sizeof(*s));
	if (url) {
		page = http_get(src);
		if (!page)
			return -EIO;
	} else {
		FILE *f = fopen(src, "re");
		size_t n;

		if (!f) {
			fprintf(stderr, "lacuna stats: %s: %s\n", src, strerror(errno));
			return -errno;
		}
		page = malloc(1 << 20);
		n = page ? fread(page, 1, (1 << 20) - 1, f) : 0;
		fclose(f);
		if (!page)
			return -ENOMEM;
		page[n] = '\0';
	}
	for (line = strtok_r(page, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (url)
			metrics_line(s, line);
		else
			stats_file_line(s, line);
	}
	free(page);
	clock_gettime(CLOCK_REALTIME, &ts);
	s->taken = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
	return 0;
}

/* @cur less @prev (NULL: @cur), row by row, for an interval's numbers. */
static void snap_delta(struct st_snap *d, const struct st_snap *cur, const struct st_snap *prev)
{
	unsigned int i, k;

	*d = *cur;
	if (!prev)
		return;
	for (i = 0; i < d->nrows; i++) {
		struct st_row *r = &d->rows[i];
		const struct st_row *p = NULL;

		for (k = 0; k < prev->nrows; k++)
			if (!strcmp(prev->rows[k].name, r->name))
				p = &prev->rows[k];
		if (!p)
			continue;
		r->calls -= p->calls;
		r->errors -= p->errors;
		r->sum -= p->sum;
		r->count -= p->count;
		for (k = 0; k < r->nb && k < p->nb; k++)
			r->cum[k] -= p->cum[k];
	}
	d->rp_data -= prev->rp_data;
	d->rp_hole -= prev->rp_hole;
	d->rp_atomic -= prev->rp_atomic;
	d->rp_not_atomic -= prev->rp_not_atomic;
	d->bytes_in -= prev->bytes_in;
	d->xprtsec_refused -= prev->xprtsec_refused;
	d->bytes_out -= prev->bytes_out;
}

/* The @q quantile of @r's latency, seconds; NAN without observations. */
static double quantile(const struct st_row *r, double q)
{
	double rank, lo = 0, prev = 0;
	unsigned int i;

	if (!r->hist || r->nb == 0 || r->cum[r->nb - 1] <= 0)
		return NAN;
	rank = q * r->cum[r->nb - 1];
	for (i = 0; i < r->nb; i++) {
		if (r->cum[i] >= rank) {
			if (isinf(r->le[i]))
				return lo; /* past the last finite bound */
			if (r->cum[i] == prev)
				return r->le[i];
			return lo + (r->le[i] - lo) * (rank - prev) / (r->cum[i] - prev);
		}
		lo = isinf(r->le[i]) ? lo : r->le[i];
		prev = r->cum[i];
	}
	return lo;
}

static void fmt_ms(char *buf, size_t size, double sec)
{
	if (isnan(sec))
		snprintf(buf, size, "-");
	else
		snprintf(buf, size, "%.3f", sec * 1e3);
}

static void json_num(FILE *out, const char *key, double v, bool comma)
{
	if (isnan(v) || isinf(v))
		fprintf(out, "\"%s\":null%s", key, comma ? "," : "");
	else
		fprintf(out, "\"%s\":%.10g%s", key, v, comma ? "," : "");
}

static double ratio(double a, double b)
{
	return b > 0 ? a / b : NAN;
}

static void print_json(const char *src, const struct st_snap *d, double secs, bool interval)
{
	unsigned int i;

	printf("{\"source\":");
	lmap_json_string(stdout, src);
	printf(",");
	json_num(stdout, "seconds", secs, true);
	printf("\"interval\":%s,\"ops\":[", interval ? "true" : "false");
	for (i = 0; i < d->nrows; i++) {
		const struct st_row *r = &d->rows[i];

		printf("%s{\"op\":", i ? "," : "");
		lmap_json_string(stdout, r->name);
		printf(",");
		json_num(stdout, "calls", r->calls, true);
		json_num(stdout, "rate", ratio(r->calls, secs), true);
		json_num(stdout, "avg_ms", r->hist ? ratio(r->sum, r->count) * 1e3 : NAN, true);
		json_num(stdout, "p99_ms", quantile(r, 0.99) * 1e3, true);
		json_num(stdout, "errors", r->errors, false);
		printf("}");
	}
	printf("],\"read_plus\":{");
	json_num(stdout, "data_bytes", d->rp_data, true);
	json_num(stdout, "hole_bytes", d->rp_hole, true);
	json_num(stdout, "saved_share", ratio(d->rp_hole, d->rp_hole + d->rp_data), true);
	json_num(stdout, "atomic", d->rp_atomic, true);
	json_num(stdout, "not_atomic", d->rp_not_atomic, true);
	json_num(stdout, "atomic_share", ratio(d->rp_atomic, d->rp_atomic + d->rp_not_atomic),
		 false);
	printf("},");
	json_num(stdout, "connections", d->conns, true);
	json_num(stdout, "clients", d->clients, true);
	json_num(stdout, "sessions", d->sessions, true);
	json_num(stdout, "bytes_in", d->bytes_in, true);
	json_num(stdout, "bytes_out", d->bytes_out, true);
	json_num(stdout, "xprtsec_refused", d->xprtsec_refused, false);
	printf("}\n");
}

static const char *human(char *buf, size_t size, double b)
{
	static const char *const unit[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	unsigned int u = 0;

	while (b >= 1024 && u < 4) {
		b /= 1024;
		u++;
	}
	snprintf(buf, size, u ? "%.1f %s" : "%.0f %s", b, unit[u]);
	return buf;
}

static void print_table(const char *src, const struct st_snap *d, double secs, bool interval)
{
	char avg[24], p99[24], rate[24], h1[24], h2[24];
	unsigned int i;

	if (interval)
		printf("%s: over the last %.1f s\n", src, secs);
	else if (!isnan(secs))
		printf("%s: since the start, %.0f s ago\n", src, secs);
	else
		printf("%s: since the start\n", src);
	printf("%-22s %12s %10s %10s %10s %10s\n", "OP", "CALLS", "CALLS/S", "AVG MS", "P99 MS",
	       "ERRORS");
	for (i = 0; i < d->nrows; i++) {
		const struct st_row *r = &d->rows[i];

		if (r->calls <= 0 && interval)
			continue;
		fmt_ms(avg, sizeof(avg), r->hist ? ratio(r->sum, r->count) : NAN);
		fmt_ms(p99, sizeof(p99), quantile(r, 0.99));
		if (isnan(ratio(r->calls, secs)))
			snprintf(rate, sizeof(rate), "-");
		else
			snprintf(rate, sizeof(rate), "%.1f", r->calls / secs);
		printf("%-22s %12.0f %10s %10s %10s %10.0f\n", r->name, r->calls, rate, avg, p99,
		       r->errors);
	}
	if (d->rp_atomic + d->rp_not_atomic > 0)
		printf("READ_PLUS: %s data sent, %s of holes not sent (%.1f%% saved); "
		       "%.1f%% atomic (%.0f of %.0f)\n",
		       human(h1, sizeof(h1), d->rp_data), human(h2, sizeof(h2), d->rp_hole),
		       100 * ratio(d->rp_hole, d->rp_hole + d->rp_data),
		       100 * ratio(d->rp_atomic, d->rp_atomic + d->rp_not_atomic), d->rp_atomic,
		       d->rp_atomic + d->rp_not_atomic);
	printf("connections %.0f, clients %.0f, sessions %.0f; in %s, out %s\n", d->conns,
	       d->clients, d->sessions, human(h1, sizeof(h1), d->bytes_in),
	       human(h2, sizeof(h2), d->bytes_out));
	if (d->xprtsec_refused > 0)
		printf("refused for their transport (xprtsec=): %.0f calls\n", d->xprtsec_refused);
	fflush(stdout);
}

static void show(const char *src, const struct st_snap *cur, const struct st_snap *prev,
		 bool json)
{
	struct st_snap *d = malloc(sizeof(*d));
	double secs = prev ? cur->taken - prev->taken :
		      cur->start_time > 0 ? cur->taken - cur->start_time : NAN;

	if (!d)
		return;
	snap_delta(d, cur, prev);
	if (json)
		print_json(src, d, secs, prev != NULL);
	else
		print_table(src, d, secs, prev != NULL);
	fflush(stdout);
	free(d);
}

int lacuna_cmd_stats(int argc, char **argv)
{
	struct st_snap *a, *b;
	const char *src = NULL;
	double watch = 0;
	long count = 0, n;
	bool json = false, tty = isatty(STDOUT_FILENO);
	int i, rc = 0;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--json")) {
			json = true;
		} else if (!strcmp(argv[i], "--watch") && i + 1 < argc) {
			watch = strtod(argv[++i], NULL);
			if (!(watch > 0 && watch <= 86400)) {
				fprintf(stderr, "lacuna stats: --watch: seconds from 0 to 86400\n");
				return 2;
			}
		} else if (!strcmp(argv[i], "--count") && i + 1 < argc) {
			count = strtol(argv[++i], NULL, 10);
			if (count <= 0) {
				fprintf(stderr, "lacuna stats: --count: a number above 0\n");
				return 2;
			}
		} else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			return lcmd_usage(&stats_help, false);
		} else if (argv[i][0] != '-' && !src) {
			src = argv[i];
		} else {
			fprintf(stderr, "lacuna stats: unexpected argument '%s'\n", argv[i]);
			return lcmd_usage(&stats_help, true);
		}
	}
	if (!src || (count && !watch)) {
		fprintf(stderr, "lacuna stats: %s\n", !src ? "missing SOURCE" : "--count needs --watch");
		return lcmd_usage(&stats_help, true);
	}
	a = malloc(sizeof(*a));
	b = malloc(sizeof(*b));
	if (!a || !b) {
		rc = 1;
		goto out;
	}
	if (snap_take(src, a)) {
		rc = 1;
		goto out;
	}
	if (!watch) {
		show(src, a, NULL, json);
		goto out;
	}
	for (n = 0; !count || n < count; n++) {
		struct timespec ts = { .tv_sec = (time_t)watch,
				       .tv_nsec = (long)((watch - (double)(time_t)watch) * 1e9) };
		struct st_snap *t;

		nanosleep(&ts, NULL);
		if (snap_take(src, b)) {
			rc = 1;
			goto out;
		}
		if (tty && !json)
			printf("\033[H\033[J");
		else if (n && !json)
			printf("\n");
		show(src, b, a, json);
		t = a;
		a = b;
		b = t;
	}
out:
	free(a);
	free(b);
	return rc;
}
