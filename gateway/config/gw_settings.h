/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * lacunad's settings, declared once: every "key = value" of
 * lacunad.conf(5), every --set KEY=VALUE and every command-line flag that
 * sets one is a row of one table (gw_settings.c) giving its name, type,
 * default, range, whether a reload applies it, a line of help and the
 * flag, with the offset of its value in struct gw_config, as
 * NFS-Ganesha's CONF_ITEM_* tables do. The configuration file, the
 * command line, --help, the reload (SIGHUP) and the SETTINGS TABLE of
 * docs/lacunad.conf.5.md (lacunad --list-settings) all follow from it.
 *
 * Private to the configuration layer (gw_config.c, gw_cli.c) and its
 * unit test; the rest of lacunad reads struct gw_config.
 */
#ifndef LACUNA_GW_SETTINGS_H
#define LACUNA_GW_SETTINGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct gw_config;

/* How a value is written and where it is kept. */
enum gw_setting_type {
	GW_ST_BOOL,	 /* bool: on/off, yes/no, true/false, 1/0 */
	GW_ST_CHOICE,	 /* bool: the word choice[0] (false) or choice[1] (true) */
	GW_ST_UINT,	 /* unsigned int, decimal, min..max */
	GW_ST_PORT,	 /* uint16_t, 1..65535 */
	GW_ST_SIZE,	 /* uint32_t bytes, K, M or G suffix, min..max */
	GW_ST_SIZE64,	 /* uint64_t bytes, as GW_ST_SIZE */
	GW_ST_PATH,	 /* char *, an absolute path (freed with the config) */
	GW_ST_LISTEN,	 /* struct sockaddr_storage + socklen_t at off_len, ADDR[:PORT] */
	GW_ST_LOG_LEVEL, /* int, a syslog level by name */
};

/* What a reload (SIGHUP) does with a changed value. */
enum gw_reload {
	GW_RELOAD_APPLY,   /* uses it */
	GW_RELOAD_RESTART, /* keeps the value in use and says it waits for a restart */
};

#define GW_SF_AUTO 0x1 /* "auto" is a value too, kept as 0 */
#define GW_SF_NONE 0x2 /* "none" is a value too: a NULL path, no address (family 0) */
#define GW_SF_SET 0x4  /* a limit: also --set KEY=VALUE (LIMITS in the manual) */
/* folded at load into the setting before it, whose change a reload reports */
#define GW_SF_FOLDED 0x8

struct gw_setting {
	const char *name; /* the key of lacunad.conf and of --set */
	enum gw_setting_type type;
	unsigned int flags; /* GW_SF_* */
	enum gw_reload reload;
	uint64_t min, max;	  /* GW_ST_UINT, GW_ST_SIZE, GW_ST_SIZE64 */
	uint16_t port;		  /* GW_ST_LISTEN: the port of an ADDR written without one */
	const char *choice[2];	  /* GW_ST_CHOICE */
	size_t off;		  /* of the value in struct gw_config */
	size_t off_len;		  /* GW_ST_LISTEN: of its socklen_t */
	size_t off_has_port;	  /* GW_ST_LISTEN: of a bool "a port was written" (0: none) */
	const char *def;	  /* the default, as it would be written */
	const char *value;	  /* the values, as the manual writes them after "key = " */
	const char *help;	  /* one line */
	const char *restart_note; /* GW_RELOAD_RESTART: what a reload says of a change
				     (NULL: "NAME stays OLD until lacunad is restarted") */
	const char *flag;	  /* the long option that sets it (NULL: none) */
	char short_flag;	  /* and its short one (0: none) */
	const char *flag_arg;	  /* the flag's value in --help (NULL: the flag takes none
				     and sets "on"; with another row of the flag that takes
				     none, the value is optional: --flag[=ARG]) */
};

extern const struct gw_setting gw_settings[];
extern const size_t gw_settings_n;

/* The row named @name (@len bytes), or -1. */
int gw_setting_find(const char *name, size_t len);

/*
 * Set row @i of @cfg from @value. Returns 0, -ENOMEM, or -EINVAL/-ERANGE
 * with a message in @why (GW_WHY_MAX bytes) naming the value but not the
 * setting.
 */
int gw_setting_set(struct gw_config *cfg, size_t i, const char *value, char *why);

/* Whether @value would be accepted by row @i; the message in @why if not. */
int gw_setting_check(size_t i, const char *value, char *why);

/* Every setting of @cfg at its default. Returns 0 or -ENOMEM. */
int gw_settings_default(struct gw_config *cfg);

/* Free what the settings of @cfg hold (its paths). */
void gw_settings_free(struct gw_config *cfg);

/*
 * The --help lines of the flags that set settings, and the list of the
 * keys --set takes.
 */
void gw_settings_usage(FILE *out);
void gw_settings_usage_set(FILE *out);

/* One --help line: the option, then its help from column 28, wrapped. */
void gw_usage_line(FILE *out, const char *opt, const char *help);

#endif
