/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Private to lacunad's configuration layer (gw_config.c, gw_conf_exports.c,
 * gw_parse.c, gw_cli.c): error reporting with a position, the state of
 * reading a file, and the parsers of single
 * values (numbers, sizes, booleans, log levels, addresses) and of the
 * exports(5) vocabulary (client specifications, option lists) shared by
 * the configuration file and the command line.
 *
 * Value parsers return 0 or a negative errno and, on failure, a message
 * in why[] that names the value but not where it came from: the caller
 * adds "FILE:LINE: key: " or "--option: ".
 */
#ifndef LACUNA_GW_PARSE_H
#define LACUNA_GW_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "gw_config.h"

#define GW_WHY_MAX 256

/* Where errors go and how many there were. */
struct gw_err {
	gw_err_fn *fn;
	void *arg;
	const char *file; /* prefix of every message */
	unsigned int count;
};

/* Report "FILE:LINE: message" (line 0: "FILE: message") and count it. */
void gw_err_at(struct gw_err *e, unsigned int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Where a part of the logical line starts in the file. */
struct gw_seg {
	size_t off;
	unsigned int line;
};

struct gw_loader {
	struct gw_err err;
	struct gw_config *cfg;
	int fatal; /* -ENOMEM: stop */
	char *buf; /* the logical line, GW_LINE_MAX + 1 */
	size_t len;
	struct gw_seg *segs;
	size_t nsegs, segcap;
	size_t expcap;
	size_t export_lines;		 /* seen, good or bad */
	unsigned int set_line[GW_SETTINGS_MAX]; /* where each setting was given, 0: not */
};

/* Settings whose value follows from the machine: threads = auto, one per CPU. */
void gw_settings_settle(struct gw_config *cfg);

/*
 * The next word of the logical line from *pp, decoded in place and
 * NUL-terminated, and the line it is on. Returns 1, 0 at the end of the
 * line, or -EINVAL after reporting a malformed word.
 */
int gw_next_word(struct gw_loader *ld, char **pp, char **word, unsigned int *line);

/* An export line (gw_conf_exports.c); p is at its first word. */
void gw_parse_export(struct gw_loader *ld, char *p);

/* Checks across all exports, and each one's place in the pseudo tree. */
int gw_check_exports(struct gw_config *cfg, struct gw_err *err);

void gw_export_conf_free(struct gw_export_conf *exp);

/*
 * The RPC-with-TLS settings against each other and the exports: tls_cert
 * and tls_key given together, tls_ca only with them, each file a regular
 * file lacunad can open, and no client rule whose xprtsec= asks for TLS
 * without a certificate, or for mtls alone without tls_ca. Every problem
 * is reported; returns 0 or -EINVAL. Run on the whole configuration, the
 * command line's settings applied (gw_config_from_cli).
 */
int gw_config_check_tls(const struct gw_config *cfg, struct gw_err *e);

/*
 * Decimal only, no sign, no blanks. -EINVAL: not a number (or junk after
 * it); -ERANGE: negative, beyond 64 bits, or outside min..max.
 */
int gw_parse_uint(const char *s, uint64_t min, uint64_t max, uint64_t *out, char *why);

/* A byte count with an optional K, M or G suffix (powers of 1024, "KiB" too). */
int gw_parse_size(const char *s, uint64_t min, uint64_t max, uint64_t *out, char *why);

/* on/off, yes/no, true/false, 1/0, any case. */
int gw_parse_bool(const char *s, bool *out, char *why);

/* A syslog level name: error, warn, notice, info, debug (and the rest). */
int gw_parse_log_level(const char *s, int *level, char *why);

/*
 * ADDR[:PORT], an IPv4 or IPv6 literal; an IPv6 address with a port is
 * written in brackets ([::1]:2049). *has_port tells whether a port was
 * given; without one, the port is def_port.
 */
int gw_parse_listen(const char *s, uint16_t def_port, struct sockaddr_storage *ss, socklen_t *len,
		    bool *has_port, char *why);

/* A client specification: "*", an address, ADDR/PREFIX or A.B.C.D/NETMASK. */
int gw_parse_client_spec(const char *spec, struct gw_client *c, char *why);

/* fsid given in an option list; text points into that list. */
struct gw_fsid {
	enum gw_fsid_kind kind;
	uint32_t num;
	const char *text;
};

/*
 * Apply a comma-separated option list (the text between the parentheses,
 * changed in place) on top of *o. An option repeated with another effect
 * in the same list is an error; a list applied later overrides. fsid is
 * returned in *fsid (left alone when the list has none). Every bad option
 * is reported as "FILE:LINE: where: message". Returns 0 or -EINVAL.
 */
int gw_parse_opts(char *list, struct gw_opts *o, struct gw_fsid *fsid, struct gw_err *e,
		  unsigned int line, const char *where);

/* The default options of a client rule, as exports(5) has them. */
void gw_opts_default(struct gw_opts *o);

#endif
