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
 *
 *   lacuna nfs-map URL ...  and  lacuna nfs-get URL DEST
 *
 * do the same over NFSv4.2 (READ_PLUS): see lacuna_nfs.c.
 *
 *   lacuna stats [--watch SECONDS] [--json] URL|STATS_FILE
 *
 * shows what lacunad or lacunafs is doing: see lacuna_stats.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lacuna/lacuna.h"
#include "lacuna_tool.h"

static const struct lcmd_help map_help = {
	.name = "lacuna map",
	.synopsis = "FILE [--offset N] [--length N] [--json]",
	.options = "The data/hole map of FILE: a segment table, a picture of the layout and totals.\n"
		   "On lacunafs it is taken under the range lock (atomic); elsewhere from\n"
		   "SEEK_DATA/SEEK_HOLE.\n"
		   "  --offset N   start the map at byte N (must be inside the file)\n"
		   "  --length N   map N bytes from there (default: to the end)\n"
		   "  --json       one JSON object instead of the table\n",
};

static int build_map(int fd, uint64_t off, uint64_t len, struct lmap *m)
{
	struct lacuna_client *c = NULL;
	struct lacuna_result *res = malloc(sizeof(*res));
	uint64_t end = len > UINT64_MAX - off ? UINT64_MAX : off + len, first = off;
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
			struct lacuna_extent e = res->segs[i];
			uint64_t e_end = e.offset + e.length;

			/* holes come whole: show the range asked for, as nfs-map does */
			if (e_end > end)
				e_end = end;
			if (e.offset < first)
				e.offset = first;
			if (e_end <= e.offset)
				continue;
			e.length = e_end - e.offset;
			rc = lmap_add(m, &e);
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

static const char *map_how(const struct lmap *m)
{
	if (!m->atomic)
		return "not atomic (not on lacunafs: SEEK_DATA/SEEK_HOLE)";
	return m->unstable ? "atomic map, but the backing file changed outside the mount"
			   : "atomic map (lacunafs range lock)";
}

static int cmd_map(int argc, char **argv)
{
	struct lmap_args a;
	struct lmap m = { 0 };
	struct stat st;
	int fd, rc;

	rc = lmap_parse_args(argc, argv, &map_help, false, &a);
	if (rc >= 0)
		return rc;
	/* O_NONBLOCK: a FIFO must be refused, not waited on */
	fd = open(a.target, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0) {
		fprintf(stderr, "lacuna map: open %s: %s\n", a.target, strerror(errno));
		return 1;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		fprintf(stderr, "lacuna map: %s: %s\n", a.target,
			S_ISDIR(st.st_mode) ? "is a directory" : "not a regular file");
		close(fd);
		return 1;
	}
	rc = build_map(fd, a.off, a.len, &m);
	if (rc == 0 && fstat(fd, &st) == 0)
		m.alloc = (uint64_t)st.st_blocks * 512;
	close(fd);
	if (rc) {
		fprintf(stderr, "lacuna map: %s: %s\n", a.target, strerror(-rc));
		lmap_free(&m);
		return 1;
	}
	if (lmap_check_offset(map_help.name, &a, m.size)) {
		lmap_free(&m);
		return 1;
	}
	m.ranged = a.off || a.len != UINT64_MAX;
	lmap_totals(&m);
	if (a.json) {
		char fields[64];

		snprintf(fields, sizeof(fields), "\"atomic\":%s,\"unstable\":%s",
			 m.atomic ? "true" : "false", m.unstable ? "true" : "false");
		lmap_print_json(a.target, fields, &m);
	} else {
		lmap_print_text(a.target, map_how(&m), &m);
	}
	lmap_free(&m);
	return 0;
}

/* The commands, as `lacuna --help` lists them. */
static const struct {
	const char *name, *summary;
	int (*fn)(int argc, char **argv);
} cmds[] = {
	{ "map", "a file's data/hole map, atomic on lacunafs", cmd_map },
	{ "nfs-map", "a file's data/hole map from an NFSv4.2 server (READ_PLUS or SEEK)",
	  lacuna_cmd_nfs_map },
	{ "nfs-get", "copy a file from an NFSv4.2 server, its holes kept (READ_PLUS)",
	  lacuna_cmd_nfs_get },
	{ "stats", "a server's statistics: per-op rates and latencies, READ_PLUS savings",
	  lacuna_cmd_stats },
};

static int usage(bool error)
{
	FILE *out = error ? stderr : stdout;
	size_t i;

	fprintf(out, "usage: lacuna COMMAND [OPTIONS] ARGS...\n"
		     "       lacuna --help | --version\n"
		     "Commands:\n");
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		fprintf(out, "  %-9s %s\n", cmds[i].name, cmds[i].summary);
	fprintf(out, "'lacuna COMMAND --help' shows a command's arguments and options.\n");
	return error ? 2 : 0;
}

int main(int argc, char **argv)
{
	char name[32];
	size_t i;

	if (argc < 2)
		return usage(true);
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))
		return usage(false);
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
		printf("lacuna %s (sparse-read ABI %d)\n", PACKAGE_VERSION, LACUNA_ABI_VERSION);
		return 0;
	}
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		if (strcmp(argv[1], cmds[i].name))
			continue;
		/* getopt names argv[0] in its messages: "lacuna map: ..." */
		snprintf(name, sizeof(name), "lacuna %s", cmds[i].name);
		argv[1] = name;
		return cmds[i].fn(argc - 1, argv + 1);
	}
	fprintf(stderr, "lacuna: unknown command '%s'\n", argv[1]);
	return usage(true);
}
