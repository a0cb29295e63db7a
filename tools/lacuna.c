// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * lacuna: the command-line tool.
 *
 *   lacuna map FILE [--offset N] [--length N] [--json]
 *
 * prints the data/hole segment table of FILE (or of a range of it), a
 * one-line picture of the layout scaled to the terminal, and totals
 * (apparent size, data, holes, allocated). On lacunafs the map is taken
 * under the range lock and the output says "atomic"; on any other file it
 * comes from SEEK_DATA/SEEK_HOLE and says it is not.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lacuna/lacuna.h"

struct map {
	struct lacuna_extent *seg;
	size_t n, cap;
	uint64_t size, data, holes, alloc;
	bool atomic, unstable;
};

static void usage(FILE *out)
{
	fprintf(out, "usage: lacuna map FILE [--offset N] [--length N] [--json]\n"
		     "       lacuna --help | --version\n"
		     "N takes K, M, G, T suffixes (powers of 1024).\n");
}

static int parse_size(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;
	int shift = 0;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || end == s || *s == '-')
		return -EINVAL;
	switch (*end) {
	case 'k':
	case 'K':
		shift = 10;
		end++;
		break;
	case 'm':
	case 'M':
		shift = 20;
		end++;
		break;
	case 'g':
	case 'G':
		shift = 30;
		end++;
		break;
	case 't':
	case 'T':
		shift = 40;
		end++;
		break;
	}
	if (*end && strcmp(end, "iB") && strcmp(end, "B"))
		return -EINVAL;
	if (shift && v > (UINT64_MAX >> shift))
		return -ERANGE;
	*out = (uint64_t)v << shift;
	return 0;
}

/* Append a segment, merging it with the previous one of the same kind. */
static int map_add(struct map *m, const struct lacuna_extent *e)
{
	struct lacuna_extent *last = m->n ? &m->seg[m->n - 1] : NULL;

	if (last && last->kind == e->kind && last->offset + last->length == e->offset) {
		last->length += e->length;
		return 0;
	}
	if (last && e->offset < last->offset + last->length) {
		/* a hole reported whole again: keep what is new */
		uint64_t end = e->offset + e->length, lend = last->offset + last->length;

		if (end <= lend)
			return 0;
		if (last->kind == e->kind) {
			last->length = end - last->offset;
			return 0;
		}
	}
	if (m->n == m->cap) {
		size_t cap = m->cap ? m->cap * 2 : 256;
		void *p = realloc(m->seg, cap * sizeof(*m->seg));

		if (!p)
			return -ENOMEM;
		m->seg = p;
		m->cap = cap;
	}
	m->seg[m->n++] = *e;
	return 0;
}

static int build_map(int fd, uint64_t off, uint64_t len, struct map *m)
{
	struct lacuna_client *c = NULL;
	struct lacuna_result *res = malloc(sizeof(*res));
	uint64_t end = len > UINT64_MAX - off ? UINT64_MAX : off + len;
	int rc;

	if (!res)
		return -ENOMEM;
	rc = lacuna_client_open(fd, 0, &c);
	if (rc && rc != -ENOTTY)
		goto out;
	m->atomic = c != NULL;
	for (;;) {
		unsigned int i;

		rc = lacuna_sparse_read(c, fd, off, end - off, LACUNA_READ_MAP, NULL, 0, res);
		if (rc)
			goto out;
		m->size = res->file_size;
		m->unstable |= res->flags & LACUNA_SR_UNSTABLE;
		m->atomic &= res->atomic;
		for (i = 0; i < res->nsegs; i++) {
			rc = map_add(m, &res->segs[i]);
			if (rc)
				goto out;
		}
		if ((res->flags & LACUNA_SR_EOF) || res->next_offset >= end ||
		    res->next_offset <= off)
			break;
		off = res->next_offset;
	}
	rc = 0;
out:
	lacuna_client_close(c);
	free(res);
	return rc;
}

static void print_picture(const struct map *m, uint64_t from, uint64_t to, int width)
{
	int col;
	size_t i = 0;

	putchar('[');
	for (col = 0; col < width; col++) {
		uint64_t lo = from + (uint64_t)((double)(to - from) * col / width);
		uint64_t hi = from + (uint64_t)((double)(to - from) * (col + 1) / width);
		char ch = ' ';

		if (hi <= lo)
			hi = lo + 1;
		while (i < m->n && m->seg[i].offset + m->seg[i].length <= lo)
			i++;
		for (size_t j = i; j < m->n && m->seg[j].offset < hi; j++) {
			if (m->seg[j].kind == LACUNA_SEG_DATA) {
				ch = '#';
				break;
			}
			ch = '.';
		}
		putchar(ch);
	}
	puts("]");
}

static void human(uint64_t v, char *buf, size_t len)
{
	const char *u[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
	double d = (double)v;
	int i = 0;

	while (d >= 1024 && i < 6) {
		d /= 1024;
		i++;
	}
	if (i == 0)
		snprintf(buf, len, "%" PRIu64 " B", v);
	else
		snprintf(buf, len, "%.1f %s", d, u[i]);
}

static void json_string(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch == '"' || ch == '\\')
			printf("\\%c", ch);
		else if (ch < 0x20)
			printf("\\u%04x", ch);
		else
			putchar(ch);
	}
	putchar('"');
}

static void print_json(const char *path, const struct map *m)
{
	size_t i;

	printf("{\"file\":");
	json_string(path);
	printf(",\"size\":%" PRIu64 ",\"atomic\":%s,\"unstable\":%s,\"data_bytes\":%" PRIu64
	       ",\"hole_bytes\":%" PRIu64 ",\"allocated_bytes\":%" PRIu64 ",\"segments\":[",
	       m->size, m->atomic ? "true" : "false", m->unstable ? "true" : "false", m->data,
	       m->holes, m->alloc);
	for (i = 0; i < m->n; i++)
		printf("%s{\"kind\":\"%s\",\"offset\":%" PRIu64 ",\"length\":%" PRIu64 "}",
		       i ? "," : "", m->seg[i].kind == LACUNA_SEG_DATA ? "data" : "hole",
		       m->seg[i].offset, m->seg[i].length);
	printf("]}\n");
}

static void print_text(const char *path, const struct map *m, uint64_t from, uint64_t to)
{
	struct winsize ws;
	int width = 80;
	char a[32], b[32], c[32], d[32];
	size_t i;

	if (isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 10)
		width = ws.ws_col;
	printf("%s: %s\n", path,
	       m->atomic
		       ? (m->unstable ? "atomic map, but the backing file changed outside the mount"
				      : "atomic map (lacunafs range lock)")
		       : "not atomic (not on lacunafs: SEEK_DATA/SEEK_HOLE)");
	printf("%-4s %20s %20s\n", "kind", "offset", "length");
	for (i = 0; i < m->n; i++)
		printf("%-4s %20" PRIu64 " %20" PRIu64 "\n",
		       m->seg[i].kind == LACUNA_SEG_DATA ? "data" : "hole", m->seg[i].offset,
		       m->seg[i].length);
	if (to > from)
		print_picture(m, from, to, width - 2);
	human(m->size, a, sizeof(a));
	human(m->data, b, sizeof(b));
	human(m->holes, c, sizeof(c));
	human(m->alloc, d, sizeof(d));
	printf("size %" PRIu64 " (%s), data %" PRIu64 " (%s), holes %" PRIu64 " (%s), "
	       "allocated %" PRIu64 " (%s)\n",
	       m->size, a, m->data, b, m->holes, c, m->alloc, d);
}

static int cmd_map(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "offset", required_argument, NULL, 'o' },
		{ "length", required_argument, NULL, 'l' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	uint64_t off = 0, len = UINT64_MAX, from, to;
	struct map m = { 0 };
	bool json = false;
	struct stat st;
	size_t i;
	int o, fd, rc;

	while ((o = getopt_long(argc, argv, "o:l:jh", opts, NULL)) != -1) {
		switch (o) {
		case 'o':
		case 'l':
			if (parse_size(optarg, o == 'o' ? &off : &len)) {
				fprintf(stderr, "lacuna map: bad %s '%s'\n",
					o == 'o' ? "--offset" : "--length", optarg);
				return 2;
			}
			break;
		case 'j':
			json = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc - 1) {
		usage(stderr);
		return 2;
	}
	if (off > (uint64_t)INT64_MAX) {
		fprintf(stderr, "lacuna map: --offset too large\n");
		return 2;
	}
	/* O_NONBLOCK: a FIFO must be refused, not waited on */
	fd = open(argv[optind], O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0) {
		fprintf(stderr, "lacuna map: open %s: %s\n", argv[optind], strerror(errno));
		return 1;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		fprintf(stderr, "lacuna map: %s: %s\n", argv[optind],
			S_ISDIR(st.st_mode) ? "is a directory" : "not a regular file");
		close(fd);
		return 1;
	}
	rc = build_map(fd, off, len, &m);
	if (rc == 0 && fstat(fd, &st) == 0)
		m.alloc = (uint64_t)st.st_blocks * 512;
	close(fd);
	if (rc) {
		fprintf(stderr, "lacuna map: %s: %s\n", argv[optind], strerror(-rc));
		free(m.seg);
		return 1;
	}
	for (i = 0; i < m.n; i++) {
		if (m.seg[i].kind == LACUNA_SEG_DATA)
			m.data += m.seg[i].length;
		else
			m.holes += m.seg[i].length;
	}
	from = m.n ? m.seg[0].offset : off;
	to = m.n ? m.seg[m.n - 1].offset + m.seg[m.n - 1].length : off;
	if (json)
		print_json(argv[optind], &m);
	else
		print_text(argv[optind], &m, from, to);
	free(m.seg);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
		printf("lacuna %s (sparse-read ABI %d)\n", PACKAGE_VERSION, LACUNA_ABI_VERSION);
		return 0;
	}
	if (!strcmp(argv[1], "map"))
		return cmd_map(argc - 1, argv + 1);
	fprintf(stderr, "lacuna: unknown command '%s'\n", argv[1]);
	usage(stderr);
	return 2;
}
