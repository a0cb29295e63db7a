// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The segment map shared by the lacuna commands and its two printed
 * forms (see lacuna_tool.h): a table of segments, a picture of the
 * layout one character per column ('#' data, '.' hole, scaled to the
 * terminal) and totals; or one JSON object.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "lacuna_tool.h"

int lmap_parse_size(const char *s, uint64_t *out)
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

int lcmd_usage(const struct lcmd_help *h, bool error)
{
	FILE *out = error ? stderr : stdout;

	fprintf(out, "usage: %s %s\n", h->name, h->synopsis);
	if (error) {
		fprintf(out, "Try '%s --help' for more information.\n", h->name);
		return 2;
	}
	fputs(h->options, out);
	fputs("N takes K, M, G, T suffixes (powers of 1024).\n", out);
	return 0;
}

int lmap_parse_args(int argc, char **argv, const struct lcmd_help *h, bool nfs,
		    struct lmap_args *a)
{
	const char *cmd = h->name;
	struct option opts[] = {
		{ "offset", required_argument, NULL, 'o' },
		{ "length", required_argument, NULL, 'l' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		/* from here on: dropped unless @nfs */
		{ "seek", no_argument, NULL, 's' },
		{ "rdma", no_argument, NULL, 'R' },
		{ "tls", no_argument, NULL, 'T' },
		{ "ca", required_argument, NULL, 'A' },
		{ "cert", required_argument, NULL, 'E' },
		{ "key", required_argument, NULL, 'K' },
		{ NULL, 0, NULL, 0 },
	};
	int o;

	if (!nfs)
		opts[4] = opts[sizeof(opts) / sizeof(opts[0]) - 1];
	*a = (struct lmap_args){ .len = UINT64_MAX };
	while ((o = getopt_long(argc, argv, nfs ? "o:l:jhs" : "o:l:jh", opts, NULL)) != -1) {
		switch (o) {
		case 'o':
		case 'l':
			if (lmap_parse_size(optarg, o == 'o' ? &a->off : &a->len)) {
				fprintf(stderr, "%s: bad %s '%s'\n", cmd,
					o == 'o' ? "--offset" : "--length", optarg);
				return 2;
			}
			break;
		case 'j':
			a->json = true;
			break;
		case 's':
			a->seek = true;
			break;
		case 'R':
			a->rdma = true;
			break;
		case 'T':
			a->tls = true;
			break;
		case 'A':
			a->ca = optarg;
			break;
		case 'E':
			a->cert = optarg;
			break;
		case 'K':
			a->key = optarg;
			break;
		case 'h':
			return lcmd_usage(h, false);
		default:
			return lcmd_usage(h, true);
		}
	}
	if (optind != argc - 1) {
		if (optind == argc)
			fprintf(stderr, "%s: missing %s\n", cmd, nfs ? "URL" : "FILE");
		else
			fprintf(stderr, "%s: unexpected argument '%s'\n", cmd, argv[optind + 1]);
		return lcmd_usage(h, true);
	}
	if (a->off > (uint64_t)INT64_MAX) {
		fprintf(stderr, "%s: --offset too large\n", cmd);
		return 2;
	}
	a->target = argv[optind];
	return -1;
}

int lmap_check_offset(const char *cmd, const struct lmap_args *a, uint64_t size)
{
	char h[32];

	if (a->off < size || (a->off == 0 && size == 0))
		return 0;
	lmap_human(size, h, sizeof(h));
	fprintf(stderr, "%s: %s: --offset %" PRIu64 " is at or past the end of the file (size %" PRIu64
		" (%s)): nothing to map\n",
		cmd, a->target, a->off, size, h);
	return 1;
}

void lmap_human(uint64_t v, char *buf, size_t len)
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

int lmap_push(struct lmap *m, const struct lacuna_extent *e)
{
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

int lmap_add(struct lmap *m, const struct lacuna_extent *e)
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
	return lmap_push(m, e);
}

void lmap_totals(struct lmap *m)
{
	size_t i;

	m->data = m->holes = 0;
	for (i = 0; i < m->n; i++) {
		if (m->seg[i].kind == LACUNA_SEG_DATA)
			m->data += m->seg[i].length;
		else
			m->holes += m->seg[i].length;
	}
}

void lmap_free(struct lmap *m)
{
	free(m->seg);
	m->seg = NULL;
	m->n = m->cap = 0;
}

static void print_picture(const struct lmap *m, uint64_t from, uint64_t to, int width)
{
	double per_col = (double)(to - from) / width;
	size_t i = 0, narrow = 0;
	char h[32];
	int col;

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
	for (i = 0; i < m->n; i++)
		narrow += m->seg[i].kind == LACUNA_SEG_DATA && (double)m->seg[i].length < per_col;
	if (narrow) {
		lmap_human((uint64_t)per_col, h, sizeof(h));
		printf("(one column is %s: %zu data segment%s narrower than that, widened to one '#')\n",
		       h, narrow, narrow == 1 ? "" : "s");
	}
}

void lmap_json_string(FILE *out, const char *s)
{
	fputc('"', out);
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch == '"' || ch == '\\')
			fprintf(out, "\\%c", ch);
		else if (ch < 0x20)
			fprintf(out, "\\u%04x", ch);
		else
			fputc(ch, out);
	}
	fputc('"', out);
}

void lmap_print_json(const char *name, const char *fields, const struct lmap *m)
{
	size_t i;

	printf("{\"file\":");
	lmap_json_string(stdout, name);
	printf(",\"size\":%" PRIu64 "%s%s,\"data_bytes\":%" PRIu64 ",\"hole_bytes\":%" PRIu64
	       ",\"allocated_bytes\":%" PRIu64 "%s,\"segments\":[",
	       m->size, *fields ? "," : "", fields, m->data, m->holes, m->alloc,
	       m->ranged ? ",\"allocated_of_whole_file\":true" : "");
	for (i = 0; i < m->n; i++)
		printf("%s{\"kind\":\"%s\",\"offset\":%" PRIu64 ",\"length\":%" PRIu64 "}",
		       i ? "," : "", m->seg[i].kind == LACUNA_SEG_DATA ? "data" : "hole",
		       m->seg[i].offset, m->seg[i].length);
	printf("]}\n");
}

void lmap_print_text(const char *name, const char *how, const struct lmap *m)
{
	struct winsize ws;
	int width = 80;
	char a[32], b[32], c[32], d[32];
	size_t i;

	if (isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 10)
		width = ws.ws_col;
	printf("%s: %s\n", name, how);
	printf("%-4s %20s %20s\n", "kind", "offset", "length");
	for (i = 0; i < m->n; i++)
		printf("%-4s %20" PRIu64 " %20" PRIu64 "\n",
		       m->seg[i].kind == LACUNA_SEG_DATA ? "data" : "hole", m->seg[i].offset,
		       m->seg[i].length);
	if (m->n) {
		uint64_t from = m->seg[0].offset;
		uint64_t to = m->seg[m->n - 1].offset + m->seg[m->n - 1].length;

		if (to > from)
			print_picture(m, from, to, width - 2);
	}
	lmap_human(m->size, a, sizeof(a));
	lmap_human(m->data, b, sizeof(b));
	lmap_human(m->holes, c, sizeof(c));
	lmap_human(m->alloc, d, sizeof(d));
	/* data and holes are the range's; what is allocated is known for the file only */
	printf("size %" PRIu64 " (%s), data %" PRIu64 " (%s), holes %" PRIu64 " (%s), "
	       "allocated %" PRIu64 " (%s)%s\n",
	       m->size, a, m->data, b, m->holes, c, m->alloc, d,
	       m->ranged ? " in the whole file" : "");
}
