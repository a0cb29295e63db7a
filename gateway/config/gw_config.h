/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * lacunad's configuration: the settings and exports read from a
 * lacunad.conf file (docs/lacunad.conf.5.md) or built from the command
 * line (--export DIR), the client rules of each export and how a client
 * address finds its rule, and the command-line parser.
 *
 * A struct gw_config owns all its memory and is never changed once built.
 * Building one touches no global state and nothing but the file it reads,
 * so a reload (SIGHUP) builds a new config beside the one in use: the
 * caller publishes the new one and frees the old one when no request
 * refers to it any more. A file with errors yields no config at all and
 * leaves the one in use untouched.
 *
 * Errors are reported through a callback, one fully formatted message per
 * error ("FILE:LINE: message"), and loading goes on to the end of the file
 * so that every error is reported at once.
 */
#ifndef LACUNA_GW_CONFIG_H
#define LACUNA_GW_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/socket.h>
#include <syslog.h>

#include "gw_limits.h"

#ifndef GW_CONFIG_DEFAULT
#define GW_CONFIG_DEFAULT "/etc/lacunad.conf"
#endif

#define GW_PORT_DEFAULT 2049
#define GW_RDMA_PORT_DEFAULT 20049
#define GW_LEASE_DEFAULT 90
#define GW_METRICS_PORT_DEFAULT 9449
#define GW_STATE_DIR_DEFAULT "/var/lib/lacunad"
#define GW_LEASE_MIN 10
#define GW_LEASE_MAX 3600
#define GW_THREADS_MAX 1024
#define GW_RECORD_DEFAULT (1024 * 1024 + 8192) /* 1 MiB of data + headers */
#define GW_RECORD_MIN (16 * 1024)
#define GW_RECORD_MAX (64 * 1024 * 1024)
/* room a READ or WRITE record keeps for its RPC and COMPOUND headers */
#define GW_RECORD_OVERHEAD 8192

/*
 * maxread and maxwrite for a max_record: what a record of that size
 * carries besides its headers, in whole pages (1 MiB by default).
 */
static inline uint32_t gw_io_max(uint32_t max_record)
{
	return (max_record - GW_RECORD_OVERHEAD) & ~4095u;
}
#define GW_LOG_DEFAULT LOG_INFO
/* data one COPY writes before it replies (short: the client goes on) */
#define GW_COPY_SYNC_DEFAULT (64ull * 1024 * 1024)
#define GW_COPY_SYNC_MIN (1024 * 1024)
#define GW_COPY_SYNC_MAX (1ull << 40)
#define GW_ANON_ID 65534      /* nobody / nogroup */
#define GW_ID_MAX 4294967294u /* (uint32_t)-1 is no id */
#define GW_SEC_MAX 2	      /* distinct flavors: sys, none */
#define GW_GROUPS_MAX 16      /* AUTH_SYS supplementary gids */

/* Bounds on what a configuration file may hold. */
#define GW_FILE_MAX (16 * 1024 * 1024)
#define GW_LINE_MAX 65536 /* a logical line, continuations joined */
#define GW_EXPORTS_MAX 1024

/* RPC authentication flavors, numbered as on the wire (RFC 5531). */
enum gw_sec {
	GW_SEC_NONE = 0,
	GW_SEC_SYS = 1,
};

/* What a client rule grants (exports(5) options). */
struct gw_opts {
	bool rw;
	bool root_squash; /* uid/gid 0 -> anonuid/anongid */
	bool all_squash;  /* every uid/gid -> anonuid/anongid */
	bool secure;	  /* AUTH_SYS only from source ports below 1024 */
	uint32_t anonuid;
	uint32_t anongid;
	enum gw_sec sec[GW_SEC_MAX]; /* in the order given, for SECINFO */
	unsigned int nsec;
	/* xprtsec=: the GW_XPRTSEC_* transports admitted (gw_xprtsec.h); 0: not
	 * given, the default of gw_client_xprtsec() */
	uint8_t xprtsec;
};

/*
 * One client rule of an export: an address prefix and its options. Every
 * address is kept as 16 bytes, IPv4 ones as v4-mapped IPv6
 * (::ffff:a.b.c.d, prefix + 96), so that one comparison serves IPv4
 * clients, IPv6 clients and IPv4 clients seen on a dual-stack socket.
 */
struct gw_client {
	char *spec; /* as written: "10.0.0.0/8", "*" */
	unsigned int line;
	int family; /* AF_INET, AF_INET6, AF_UNSPEC for "*" */
	uint8_t addr[16];
	unsigned int prefix; /* 0..128 bits of addr that must match */
	struct gw_opts opts;
};

enum gw_fsid_kind {
	GW_FSID_NONE, /* derived from the filesystem */
	GW_FSID_NUM,
	GW_FSID_ROOT, /* fsid=root or fsid=0 */
};

struct gw_export_conf {
	char *path;   /* absolute, normalized */
	char *pseudo; /* where NFSv4 clients see it */
	unsigned int line;
	enum gw_fsid_kind fsid_kind;
	uint32_t fsid;		   /* GW_FSID_NUM */
	struct gw_client *clients; /* in line order: first match wins */
	size_t nclients;
};

/*
 * The settings are declared, with their defaults and ranges, in the table
 * of config/gw_settings.c, which finds each one here by its offset.
 */
struct gw_config {
	char *source; /* the file, or "command line" */
	struct sockaddr_storage listen;
	socklen_t listen_len;
	bool listen_has_port; /* listen was written with a port */
	uint16_t port;	      /* the port setting, folded into listen at load */
	bool rdma;
	uint16_t rdma_port;
	unsigned int threads;	 /* 0 (auto) only while loading: one per CPU */
	unsigned int lease_time; /* seconds */
	bool grace;
	char *state_dir;     /* stable client records (nfs4_recov.h) */
	uint32_t max_record; /* bytes */
	uint64_t copy_sync_max; /* bytes of data one COPY writes at most */
	int log_level;	     /* LOG_ERR..LOG_DEBUG */
	char *stats_file;    /* NULL: none */
	unsigned int drc_entries; /* 4.0 duplicate request cache (gw_drc.h), 0: off */
#define GW_DRC_ENTRIES_DEFAULT 1024
#define GW_DRC_ENTRIES_MAX (1024 * 1024)
	bool legacy_handles; /* version 1 (untagged) file handles accepted */
	struct sockaddr_storage metrics; /* metrics_listen; ss_family 0: none */
	socklen_t metrics_len;
	/* RPC-with-TLS (gw_xprtsec.h); NULL: none. Re-read on a reload. */
	char *tls_cert; /* PEM: the server's certificate, its chain after it */
	char *tls_key;	/* PEM: the private key of tls_cert */
	char *tls_ca;	/* PEM: CAs a client certificate is verified against (mtls) */
	bool tls_prefer_aes128; /* tls_cipher_preference = aes128: the server's order */
	unsigned int tls_handshake_timeout; /* seconds */
#define GW_TLS_HANDSHAKE_TIMEOUT_MAX 600
	unsigned int tls_handshakes_max; /* in progress at once */
#define GW_TLS_HANDSHAKES_MAX 65536
	struct gw_limits limits;
	struct gw_export_conf *exports;
	size_t nexports;
};

/* Receives one error message, "FILE:LINE: message", without a newline. */
typedef void gw_err_fn(void *arg, const char *msg);

/*
 * Read a configuration file. Returns 0 and a new config in *out, or a
 * negative errno and NULL in *out: -EINVAL when the file has errors (each
 * one reported), -ENOMEM, -EFBIG past GW_FILE_MAX, or the errno of opening
 * or reading the file (reported too). err_fn NULL writes the messages to
 * stderr. The exported directories are not looked at; see
 * gw_config_check_paths(). Neither are the TLS settings checked against
 * each other and the exports, nor their files opened: the command line
 * may still change them (gw_config_from_cli() checks the result).
 */
int gw_config_load(const char *path, struct gw_config **out, gw_err_fn *err_fn, void *arg);

/*
 * The one-export mode: DIR (made absolute with realpath(3); it must be a
 * directory) exported to 127.0.0.0/8 and ::1 only, with the options
 * "rw" followed by opts (an exports(5) option list, or NULL). listen is
 * ADDR[:PORT], or NULL for 127.0.0.1:2049. Everything else has its
 * default. Errors are reported as "command line: message".
 */
int gw_config_from_args(const char *dir, const char *opts, const char *listen,
			struct gw_config **out, gw_err_fn *err_fn, void *arg);

/*
 * Check that every exported path is a directory, reporting each one that
 * is not as "SOURCE:LINE: PATH: ...". Returns 0 or the negative errno of
 * the first failure (-ENOTDIR for a non-directory).
 */
int gw_config_check_paths(const struct gw_config *cfg, gw_err_fn *err_fn, void *arg);

void gw_config_free(struct gw_config *cfg);

/*
 * A reload: give cfg, the configuration just built, the values of old
 * for the settings a reload does not apply (those taken at start), and
 * report each one that changed through warn ("reload: ... restart").
 */
void gw_config_keep_start(struct gw_config *cfg, const struct gw_config *old, gw_err_fn *warn,
			  void *arg);

/* Write the settings as the SETTINGS TABLE of lacunad.conf(5), in markdown. */
void gw_settings_write_man(FILE *out);

/*
 * The rule of exp that admits a client address (AF_INET or AF_INET6;
 * anything else is refused): the first matching rule in line order, as
 * exports(5) does, or NULL when access is denied.
 */
const struct gw_client *gw_export_conf_match(const struct gw_export_conf *exp,
					     const struct sockaddr *sa);

/* AUTH_SYS credentials as a client sent them. */
struct gw_cred {
	uint32_t uid;
	uint32_t gid;
	unsigned int ngroups;
	uint32_t groups[GW_GROUPS_MAX];
};

/*
 * Apply a rule's squashing to credentials: all_squash maps every
 * identity to anonuid/anongid and drops the supplementary groups;
 * root_squash maps uid 0 to anonuid and gid 0 (also among the groups) to
 * anongid.
 */
void gw_client_squash(const struct gw_client *c, struct gw_cred *cred);

/*
 * The transports (GW_XPRTSEC_* bits) rule @c admits: its xprtsec= option,
 * else every one (none:tls:mtls) when @cfg has a tls_cert, else none.
 */
uint8_t gw_client_xprtsec(const struct gw_config *cfg, const struct gw_client *c);

/* ---------------------------------------------------------------- command line */

#define GW_CLI_SETS_MAX 16 /* --set options on one command line */
#define GW_SETTINGS_MAX 64 /* rows of the settings table (config/gw_settings.c) */

struct gw_cli {
	const char *config;	 /* --config, else GW_CONFIG_DEFAULT unless --export */
	const char *export_dir;	 /* --export */
	const char *export_opts; /* --export-options */
	const char *xprtsec;	 /* --xprtsec: the export's xprtsec= */
	/*
	 * The settings given by their flags or --set, validated, by row of
	 * the settings table; NULL: not given. See gw_cli_value().
	 */
	const char *value[GW_SETTINGS_MAX];
	unsigned int nsets; /* --set options given */
	int log_level; /* of --log-level, for the messages before a configuration; -1: not given */
	bool foreground;
	bool list_settings;
	bool help;
	bool version;
	char err[256]; /* why gw_cli_parse() failed */
};

/*
 * Parse lacunad's command line (argv[0] is the program). Returns 0, or
 * -EINVAL with a message in cli->err: the caller prints it and the usage
 * and exits with status 2. When cli->help or cli->version is set the
 * caller prints that and exits 0. argv is neither changed nor copied:
 * the strings in *cli point into it.
 */
int gw_cli_parse(int argc, char *const argv[], struct gw_cli *cli);

/* Write the --help text. */
void gw_cli_usage(FILE *out);

/* The value the command line gives the setting named key, or NULL. */
const char *gw_cli_value(const struct gw_cli *cli, const char *key);

/*
 * Build the configuration the command line asks for: the file of
 * --config, or the one export of --export, then the settings of the
 * command line (their flags and --set) on top. Then the RPC-with-TLS
 * settings are checked against each other and the exports' xprtsec=, and
 * their files must be readable regular files (every problem reported:
 * -EINVAL).
 * Calling it again on SIGHUP re-reads the file and keeps the overrides.
 * With --export there is no file, so a reload has nothing to re-read;
 * a relative DIR is resolved against the working directory, so build the
 * configuration before daemon(3) changes it.
 */
int gw_config_from_cli(const struct gw_cli *cli, struct gw_config **out, gw_err_fn *err_fn,
		       void *arg);

#endif
