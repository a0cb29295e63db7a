/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the commands of the lacuna tool share: a segment map (data and
 * hole extents, merged as they arrive, in file order), printed as a
 * table with a one-line picture and totals or as JSON; byte counts in
 * human units; size arguments with K/M/G/T suffixes. `lacuna map` fills
 * the map from lacunafs or SEEK_DATA/SEEK_HOLE, `lacuna nfs-map` from
 * an NFSv4.2 server's READ_PLUS or SEEK replies, and both print it the
 * same way.
 */
#ifndef LACUNA_TOOL_H
#define LACUNA_TOOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "lacuna/lacuna.h"

struct lmap {
	struct lacuna_extent *seg;
	size_t n, cap;
	uint64_t size, data, holes, alloc;
	bool atomic, unstable;
	bool ranged; /* of a range given with --offset/--length: alloc is the whole file's */
};

/* A size argument: N with an optional K, M, G or T (powers of 1024). */
int lmap_parse_size(const char *s, uint64_t *out);
struct lmap_args {
	uint64_t off, len;
	bool json, seek, rdma, tls;
	const char *ca, *cert, *key; /* --ca, --cert, --key (RPC-with-TLS) */
	const char *target;	     /* FILE or URL */
};

/* A command's help: `lacuna CMD --help` prints all of it to stdout. */
struct lcmd_help {
	const char *name;     /* "lacuna map" */
	const char *synopsis; /* "FILE [--offset N] ..." */
	const char *options;  /* one line per option */
};

/*
 * The usage of @h after a usage error (its synopsis and a pointer to
 * --help, on stderr; returns 2) or for --help (all of it, on stdout;
 * returns 0).
 */
int lcmd_usage(const struct lcmd_help *h, bool error);

/*
 * CMD TARGET [--offset N] [--length N] [--json]
 *            [--seek --rdma --tls --ca F --cert F --key F (if @nfs)]:
 * -1 to go on, else the exit status (0 after --help, 2 after a usage
 * error). @h->name names the command in messages ("lacuna map").
 */
int lmap_parse_args(int argc, char **argv, const struct lcmd_help *h, bool nfs,
		    struct lmap_args *a);

/*
 * 0 when the range of @a starts inside the file of @size bytes (or is
 * the whole of an empty file), else says so on stderr and returns 1.
 */
int lmap_check_offset(const char *cmd, const struct lmap_args *a, uint64_t size);
/* @v bytes as "123 B" or "1.5 MiB". */
void lmap_human(uint64_t v, char *buf, size_t len);

/*
 * Append a segment (in file order), merging it with the previous one
 * of the same kind; a hole reported again whole keeps only what is new.
 */
int lmap_add(struct lmap *m, const struct lacuna_extent *e);
/* Append a segment as it is. */
int lmap_push(struct lmap *m, const struct lacuna_extent *e);
/* Sum the data and hole bytes of the segments into m->data, m->holes. */
void lmap_totals(struct lmap *m);
void lmap_free(struct lmap *m);

/*
 * The table, picture and totals, under a first line "NAME: HOW" saying
 * where the map comes from.
 */
void lmap_print_text(const char *name, const char *how, const struct lmap *m);
/*
 * {"file":NAME,"size":N,FIELDS,"data_bytes":...,"segments":[...]}:
 * FIELDS are extra members already in JSON ("atomic":true,...).
 */
void lmap_print_json(const char *name, const char *fields, const struct lmap *m);
void lmap_json_string(FILE *out, const char *s);

/* Commands in other files: argv[0] is the command's name. */
int lacuna_cmd_nfs_map(int argc, char **argv);
int lacuna_cmd_nfs_get(int argc, char **argv);
int lacuna_cmd_stats(int argc, char **argv);

#endif
