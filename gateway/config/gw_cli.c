// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * lacunad's command line: parsing it into a struct gw_cli (every value
 * checked as the configuration file would check it, so that bad usage is
 * refused before anything starts), the --help text, and the configuration
 * it asks for: a file or the one-export mode, with the command line's
 * settings on top.
 *
 * The parser is written here rather than with getopt_long(3): it keeps no
 * global state and prints nothing, so it can be called and tested any
 * number of times and each failure comes back as one message. It takes
 * long options as --name VALUE or --name=VALUE (--rdma only with '='),
 * short ones as -c FILE, -cFILE or clustered flags (-fV), and "--" to end
 * the options. Names are never abbreviated.
 *
 * The options that set a setting are not listed here: they are the flags
 * of the settings table (config/gw_settings.c), as is --set's list of
 * keys. Each value is checked by the table when parsed, kept as given,
 * and set on top of the file by gw_config_from_cli() at every (re)load.
 */
#include <errno.h>
#include <netdb.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gw_settings.h"
#include "gw_parse.h"
#include "gw_xprtsec.h"

enum cli_id {
	O_CONFIG,
	O_EXPORT,
	O_EXPORT_OPTS,
	O_XPRTSEC,
	O_FOREGROUND,
	O_SET,
	O_LIST_SETTINGS,
	O_HELP,
	O_VERSION,
	O_SETTING, /* a flag of the settings table */
};
enum cli_arg { A_NONE, A_REQUIRED, A_OPTIONAL };

struct cli_opt {
	const char *name;
	char short_name;
	enum cli_arg arg;
	enum cli_id id;
	const char *usage; /* the option in --help */
	const char *help;
};

/* The options that set no setting; those that do are the settings table's flags. */
static const struct cli_opt cli_opts[] = {
	{ "config", 'c', A_REQUIRED, O_CONFIG, "-c, --config FILE",
	  "read exports and settings from FILE (default " GW_CONFIG_DEFAULT
	  "; see lacunad.conf(5))" },
	{ "export", 0, A_REQUIRED, O_EXPORT, "    --export DIR",
	  "export DIR alone, without a configuration file, to loopback clients only "
	  "(127.0.0.0/8 and ::1)" },
	{ "export-options", 0, A_REQUIRED, O_EXPORT_OPTS, "    --export-options OPTS",
	  "exports(5) options for --export, applied after the default 'rw' and 'secure' "
	  "(e.g. ro, no_root_squash, insecure)" },
	{ "xprtsec", 0, A_REQUIRED, O_XPRTSEC, "    --xprtsec LIST",
	  "the transports the export of --export is served over: none, tls, mtls or a list "
	  "such as none:tls (its exports(5) option xprtsec=; default none:tls:mtls with "
	  "--tls-cert, else none)" },
	{ "foreground", 'f', A_NONE, O_FOREGROUND, "-f, --foreground",
	  "stay in the foreground and log to stderr" },
	{ "set", 0, A_REQUIRED, O_SET, "    --set KEY=VALUE",
	  "a limit of lacunad.conf(5), such as max_connections_per_client=64 (repeatable; "
	  "the limits are listed below)" },
	{ "list-settings", 0, A_NONE, O_LIST_SETTINGS, "    --list-settings",
	  "print every setting as the table of lacunad.conf(5) (markdown) and exit" },
	{ "help", 'h', A_NONE, O_HELP, "-h, --help", "show this help and exit" },
	{ "version", 'V', A_NONE, O_VERSION, "-V, --version", "show the version and exit" },
};
#define CLI_NOPTS (sizeof(cli_opts) / sizeof(cli_opts[0]))

void gw_cli_usage(FILE *out)
{
	size_t i;

	fputs("usage: lacunad [-c FILE] [options]\n"
	      "       lacunad --export DIR [--export-options OPTS] [options]\n"
	      "Serve directories (normally lacunafs mounts) over NFSv4.\n"
	      "\n",
	      out);
	for (i = 0; i < CLI_NOPTS; i++)
		gw_usage_line(out, cli_opts[i].usage, cli_opts[i].help);
	fputs("\nSettings of lacunad.conf(5); given here they override the file's, also\n"
	      "when SIGHUP reloads it:\n",
	      out);
	gw_settings_usage(out);
	fputs("\nLimits of lacunad.conf(5), each given as --set KEY=VALUE:\n", out);
	gw_settings_usage_set(out);
	fputs("\n--config and --export are mutually exclusive.\n", out);
}

static int cli_fail(struct gw_cli *cli, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int cli_fail(struct gw_cli *cli, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cli->err, sizeof(cli->err), fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* Keeps the first message of a gw_parse_opts() run. */
static void keep_first(void *arg, const char *msg)
{
	struct gw_cli *cli = arg;

	if (!cli->err[0])
		snprintf(cli->err, sizeof(cli->err), "%s", msg);
}

static int check_export_opts(struct gw_cli *cli, const char *opts)
{
	struct gw_err e = { .fn = keep_first, .arg = cli, .file = "--export-options" };
	struct gw_fsid fsid = { .kind = GW_FSID_NONE };
	struct gw_opts o;
	char *list = strdup(opts);
	int rc;

	if (!list)
		return cli_fail(cli, "out of memory");
	gw_opts_default(&o);
	cli->err[0] = '\0';
	rc = gw_parse_opts(list, &o, &fsid, &e, 0, opts);
	free(list);
	return rc ? -EINVAL : 0;
}

const char *gw_cli_value(const struct gw_cli *cli, const char *key)
{
	int i = gw_setting_find(key, strlen(key));

	return i < 0 ? NULL : cli->value[i];
}

/* --set KEY=VALUE: a limit, checked and kept. */
static int cli_set(struct gw_cli *cli, const char *kv)
{
	const char *eq = strchr(kv, '=');
	char why[GW_WHY_MAX];
	int i;

	if (cli->nsets == GW_CLI_SETS_MAX)
		return cli_fail(cli, "--set given more than %d times", GW_CLI_SETS_MAX);
	if (!eq || eq == kv || eq - kv >= 64)
		return cli_fail(cli, "--set: '%.64s' is not KEY=VALUE", kv);
	i = gw_setting_find(kv, (size_t)(eq - kv));
	if (i < 0 || !(gw_settings[i].flags & GW_SF_SET))
		return cli_fail(cli, "--set: '%.*s' is not a limit of lacunad.conf(5)",
				(int)(eq - kv), kv);
	if (gw_setting_check((size_t)i, eq + 1, why))
		return cli_fail(cli, "--set: %s", why);
	cli->value[i] = eq + 1;
	cli->nsets++;
	return 0;
}

/*
 * The flag --@name of the settings table, with @val (NULL: none): each
 * row of the flag takes @val, or "on" when it takes no value.
 */
static int cli_flag(struct gw_cli *cli, const char *name, const char *val)
{
	char why[GW_WHY_MAX];
	size_t i;

	for (i = 0; i < gw_settings_n; i++) {
		const struct gw_setting *s = &gw_settings[i];
		const char *v = s->flag_arg ? val : "on";

		if (!s->flag || strcmp(s->flag, name) || !v)
			continue;
		if (gw_setting_check(i, v, why))
			return cli_fail(cli, "--%s: %s%s", name,
					s->type == GW_ST_PORT ? "port " : "", why);
		cli->value[i] = v;
	}
	return 0;
}

static int cli_apply(struct gw_cli *cli, const struct cli_opt *o, const char *val)
{
	switch (o->id) {
	case O_CONFIG:
		cli->config = val;
		break;
	case O_EXPORT:
		if (cli->export_dir)
			return cli_fail(cli, "--export given twice: use a configuration file "
					     "(--config) for several exports");
		cli->export_dir = val;
		break;
	case O_EXPORT_OPTS:
		if (check_export_opts(cli, val))
			return -EINVAL;
		cli->export_opts = val;
		break;
	case O_XPRTSEC: {
		char why[GW_XPRTSEC_WHY_MAX];
		uint8_t set;

		if (gw_xprtsec_parse(val, &set, why))
			return cli_fail(cli, "--xprtsec: %s", why);
		cli->xprtsec = val;
		break;
	}
	case O_FOREGROUND:
		cli->foreground = true;
		break;
	case O_SET:
		return cli_set(cli, val);
	case O_LIST_SETTINGS:
		cli->list_settings = true;
		break;
	case O_HELP:
		cli->help = true;
		break;
	case O_VERSION:
		cli->version = true;
		break;
	case O_SETTING:
		return cli_flag(cli, o->name, val);
	}
	return 0;
}

/*
 * One-export mode: the records of the server at ADDR:PORT go to
 * GW_STATE_DIR_DEFAULT/ADDR-PORT, so that servers on other addresses
 * keep theirs apart.
 */
static char *export_state_dir(const struct gw_config *cfg)
{
	char host[NI_MAXHOST], serv[NI_MAXSERV], *d;

	if (getnameinfo((const struct sockaddr *)&cfg->listen, cfg->listen_len, host, sizeof(host),
			serv, sizeof(serv), NI_NUMERICHOST | NI_NUMERICSERV))
		return strdup(GW_STATE_DIR_DEFAULT);
	if (asprintf(&d, "%s/%s-%s", GW_STATE_DIR_DEFAULT, host, serv) < 0)
		return NULL;
	return d;
}

/*
 * The option named @name (@len bytes; @len 0: the short option @c) in
 * *o: one of cli_opts, or a flag of the settings table, which takes a
 * value when one of its rows does, optionally (with '=' only) when
 * another of its rows takes none.
 */
static bool find_opt(const char *name, size_t len, char c, struct cli_opt *o)
{
	bool bare = false, arg = false;
	size_t i;

	for (i = 0; i < CLI_NOPTS; i++) {
		if (len ? strlen(cli_opts[i].name) == len && !strncmp(name, cli_opts[i].name, len)
			: cli_opts[i].short_name == c) {
			*o = cli_opts[i];
			return true;
		}
	}
	*o = (struct cli_opt){ .id = O_SETTING };
	for (i = 0; i < gw_settings_n; i++) {
		const struct gw_setting *s = &gw_settings[i];

		if (!s->flag || !(len ? strlen(s->flag) == len && !strncmp(name, s->flag, len)
				      : s->short_flag && s->short_flag == c))
			continue;
		o->name = s->flag;
		o->short_name = s->short_flag;
		arg |= s->flag_arg != NULL;
		bare |= s->flag_arg == NULL;
	}
	o->arg = arg && bare ? A_OPTIONAL : arg ? A_REQUIRED : A_NONE;
	return o->name != NULL;
}

/* --name, --name=VALUE, --name VALUE; *i moves past a separate value. */
static int parse_long(struct gw_cli *cli, int argc, char *const argv[], int *i)
{
	const char *name = argv[*i] + 2, *eq = strchr(name, '='), *val = NULL;
	size_t len = eq ? (size_t)(eq - name) : strlen(name);
	struct cli_opt o;

	if (!len || !find_opt(name, len, 0, &o))
		return cli_fail(cli, "unknown option '--%.*s'", (int)(len > 64 ? 64 : len), name);
	if (eq) {
		if (o.arg == A_NONE)
			return cli_fail(cli, "option '--%s' takes no value", o.name);
		val = eq + 1;
	} else if (o.arg == A_REQUIRED) {
		if (*i + 1 >= argc)
			return cli_fail(cli, "option '--%s' needs a value", o.name);
		val = argv[++*i];
	}
	if (val && !*val)
		return cli_fail(cli, "option '--%s' needs a non-empty value", o.name);
	return cli_apply(cli, &o, val);
}

/* -f, -fV, -c FILE, -cFILE. */
static int parse_short(struct gw_cli *cli, int argc, char *const argv[], int *i)
{
	const char *p = argv[*i] + 1;

	for (; *p; p++) {
		const char *val = NULL;
		struct cli_opt o;

		if (!find_opt(NULL, 0, *p, &o))
			return cli_fail(cli, "unknown option '-%c'", *p);
		if (o.arg == A_REQUIRED) {
			if (p[1])
				val = p + 1;
			else if (*i + 1 < argc)
				val = argv[++*i];
			else
				return cli_fail(cli, "option '-%c' needs a value", *p);
			if (!*val)
				return cli_fail(cli, "option '-%c' needs a non-empty value", *p);
			return cli_apply(cli, &o, val);
		}
		if (cli_apply(cli, &o, NULL))
			return -EINVAL;
	}
	return 0;
}

int gw_cli_parse(int argc, char *const argv[], struct gw_cli *cli)
{
	bool config_given;
	int i;

	*cli = (struct gw_cli){ .log_level = -1 };
	for (i = 1; i < argc; i++) {
		const char *a = argv[i];
		int rc;

		if (!strcmp(a, "--")) {
			if (i + 1 < argc)
				return cli_fail(cli, "unexpected argument '%.64s'", argv[i + 1]);
			break;
		}
		if (a[0] == '-' && a[1] == '-')
			rc = parse_long(cli, argc, argv, &i);
		else if (a[0] == '-' && a[1])
			rc = parse_short(cli, argc, argv, &i);
		else if (i > 1 && !strcmp(argv[i - 1], "--rdma") &&
			 a[strspn(a, "0123456789")] == '\0')
			rc = cli_fail(cli, "unexpected argument '%.64s' (write --rdma=%.64s)", a,
				      a);
		else
			rc = cli_fail(cli, "unexpected argument '%.64s'", a);
		if (rc)
			return rc;
	}
	if (cli->help || cli->version || cli->list_settings)
		return 0;
	if (gw_cli_value(cli, "log_level"))
		gw_parse_log_level(gw_cli_value(cli, "log_level"), &cli->log_level, cli->err);
	config_given = cli->config != NULL;
	if (config_given && cli->export_dir)
		return cli_fail(cli, "--config and --export are mutually exclusive");
	if (cli->export_opts && !cli->export_dir)
		return cli_fail(cli, "--export-options needs --export");
	if (cli->xprtsec && !cli->export_dir)
		return cli_fail(cli, "--xprtsec needs --export (with --config, give each export's "
				     "xprtsec= option in the file)");
	if (!cli->export_dir && !config_given)
		cli->config = GW_CONFIG_DEFAULT;
	return 0;
}

int gw_config_from_cli(const struct gw_cli *cli, struct gw_config **out, gw_err_fn *err_fn,
		       void *arg)
{
	struct gw_err e = { .fn = err_fn, .arg = arg, .file = "command line" };
	struct gw_config *cfg;
	char why[GW_WHY_MAX], *f = NULL, *opts = NULL;
	size_t i;
	int rc;

	*out = NULL;
	if (cli->xprtsec) {
		/* --xprtsec LIST is the option xprtsec=LIST after --export-options */
		if (asprintf(&opts, "%s%sxprtsec=%s", cli->export_opts ? cli->export_opts : "",
			     cli->export_opts ? "," : "", cli->xprtsec) < 0)
			return -ENOMEM;
	}
	if (cli->export_dir)
		rc = gw_config_from_args(cli->export_dir, opts ? opts : cli->export_opts,
					 gw_cli_value(cli, "listen"), &cfg, err_fn, arg);
	else
		rc = gw_config_load(cli->config ? cli->config : GW_CONFIG_DEFAULT, &cfg, err_fn,
				    arg);
	free(opts);
	if (rc)
		return rc;
	for (i = 0; i < gw_settings_n; i++) {
		const struct gw_setting *s = &gw_settings[i];

		if (!cli->value[i])
			continue;
		rc = gw_setting_set(cfg, i, cli->value[i], why);
		if (rc == -ENOMEM)
			goto out_free_cfg;
		if (rc) {
			gw_err_at(&e, 0, "--%s: %s", s->flags & GW_SF_SET ? "set" : s->flag, why);
			rc = -EINVAL;
			goto out_free_cfg;
		}
	}
	gw_settings_settle(cfg);
	if (cli->config)
		e.file = cli->config;
	if (gw_config_check_tls(cfg, &e)) {
		rc = -EINVAL;
		goto out_free_cfg;
	}
	/* one-export mode: the state directory and statistics of its address */
	rc = -ENOMEM;
	if (cli->export_dir && !gw_cli_value(cli, "state_dir")) {
		f = export_state_dir(cfg);
		if (!f)
			goto out_free_cfg;
		free(cfg->state_dir);
		cfg->state_dir = f;
	}
	if (cli->export_dir && !gw_cli_value(cli, "stats_file")) {
		if (asprintf(&f, "%s/stats", cfg->state_dir) < 0)
			goto out_free_cfg;
		free(cfg->stats_file);
		cfg->stats_file = f;
	}
	*out = cfg;
	return 0;
out_free_cfg:
	gw_config_free(cfg);
	return rc;
}
