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
 */
#include <errno.h>
#include <netdb.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gw_parse.h"

enum cli_id {
	O_CONFIG,
	O_EXPORT,
	O_EXPORT_OPTS,
	O_LISTEN,
	O_THREADS,
	O_LEASE,
	O_STATE_DIR,
	O_GRACE,
	O_LEGACY_HANDLES,
	O_RDMA,
	O_FOREGROUND,
	O_LOG,
	O_SET,
	O_STATS_FILE,
	O_METRICS,
	O_HELP,
	O_VERSION
};
enum cli_arg { A_NONE, A_REQUIRED, A_OPTIONAL };

static const struct {
	const char *name;
	char short_name;
	enum cli_arg arg;
	enum cli_id id;
} cli_opts[] = {
	{ "config", 'c', A_REQUIRED, O_CONFIG },
	{ "export", 0, A_REQUIRED, O_EXPORT },
	{ "export-options", 0, A_REQUIRED, O_EXPORT_OPTS },
	{ "listen", 0, A_REQUIRED, O_LISTEN },
	{ "threads", 0, A_REQUIRED, O_THREADS },
	{ "lease-time", 0, A_REQUIRED, O_LEASE },
	{ "state-dir", 0, A_REQUIRED, O_STATE_DIR },
	{ "grace", 0, A_REQUIRED, O_GRACE },
	{ "legacy-handles", 0, A_REQUIRED, O_LEGACY_HANDLES },
	{ "rdma", 0, A_OPTIONAL, O_RDMA },
	{ "foreground", 'f', A_NONE, O_FOREGROUND },
	{ "log-level", 0, A_REQUIRED, O_LOG },
	{ "set", 0, A_REQUIRED, O_SET },
	{ "stats-file", 0, A_REQUIRED, O_STATS_FILE },
	{ "metrics-listen", 0, A_REQUIRED, O_METRICS },
	{ "help", 'h', A_NONE, O_HELP },
	{ "version", 'V', A_NONE, O_VERSION },
};
#define CLI_NOPTS (sizeof(cli_opts) / sizeof(cli_opts[0]))

void gw_cli_usage(FILE *out)
{
	fprintf(out,
		"usage: lacunad [-c FILE] [options]\n"
		"       lacunad --export DIR [--export-options OPTS] [options]\n"
		"Serve directories (normally lacunafs mounts) over NFSv4.\n"
		"\n"
		"  -c, --config FILE         read exports and settings from FILE\n"
		"                            (default " GW_CONFIG_DEFAULT "; see lacunad.conf(5))\n"
		"      --export DIR          export DIR alone, without a configuration file,\n"
		"                            to loopback clients only (127.0.0.0/8 and ::1)\n"
		"      --export-options OPTS exports(5) options for --export, applied after\n"
		"                            the default 'rw' and 'secure' (e.g. ro,\n"
		"                            no_root_squash, insecure)\n"
		"      --listen ADDR[:PORT]  listen there (default 0.0.0.0:2049, with --export\n"
		"                            127.0.0.1:2049); IPv6 as [ADDR]:PORT\n"
		"      --threads N           worker threads (default: one per CPU)\n"
		"      --lease-time SECONDS  NFSv4 lease time, %d..%d (default %d)\n"
		"      --state-dir DIR       where the clients holding state are recorded, for\n"
		"                            their reclaims after a restart (default " GW_STATE_DIR_DEFAULT ")\n"
		"      --grace on|off        grace period after a start (default on)\n"
		"      --legacy-handles accept|refuse  version 1 (untagged) file handles\n"
		"                            of an older lacunad, while its clients remount\n"
		"                            (default refuse)\n"
		"      --rdma[=PORT]         also serve RPC-over-RDMA (default port %d)\n"
		"  -f, --foreground          stay in the foreground and log to stderr\n"
		"      --log-level LEVEL     error, warn, notice, info (default) or debug\n"
		"      --set KEY=VALUE       a limit of lacunad.conf(5), such as\n"
		"                            max_connections_per_client=64 (repeatable)\n"
		"      --stats-file PATH|none  rewrite PATH with the counters once a second\n"
		"                            (with --export default STATE_DIR/stats)\n"
		"      --metrics-listen ADDR[:PORT]  serve Prometheus metrics at\n"
		"                            http://ADDR:PORT/metrics (default port %d)\n"
		"  -h, --help                show this help and exit\n"
		"  -V, --version             show the version and exit\n"
		"\n"
		"--config and --export are mutually exclusive. Options given here override\n"
		"the settings of the configuration file, also when SIGHUP reloads it.\n",
		GW_LEASE_MIN, GW_LEASE_MAX, GW_LEASE_DEFAULT, GW_RDMA_PORT_DEFAULT,
		GW_METRICS_PORT_DEFAULT);
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

/* Apply --set KEY=VALUE to @l; a message in @why on failure. */
static int cli_set_limit(struct gw_limits *l, const char *kv, char *why)
{
	const char *eq = strchr(kv, '=');
	char key[64];
	int rc;

	if (!eq || eq == kv || (size_t)(eq - kv) >= sizeof(key)) {
		snprintf(why, GW_WHY_MAX, "'%.64s' is not KEY=VALUE", kv);
		return -EINVAL;
	}
	memcpy(key, kv, (size_t)(eq - kv));
	key[eq - kv] = '\0';
	rc = gw_limits_set(l, key, eq + 1, why);
	if (rc == -ENOENT)
		snprintf(why, GW_WHY_MAX, "'%.64s' is not a limit of lacunad.conf(5)", key);
	return rc ? -EINVAL : 0;
}

static int cli_check_set(struct gw_cli *cli, const char *kv)
{
	char why[GW_WHY_MAX];
	struct gw_limits l;

	if (cli->nsets == GW_CLI_SETS_MAX)
		return cli_fail(cli, "--set given more than %d times", GW_CLI_SETS_MAX);
	gw_limits_default(&l);
	if (cli_set_limit(&l, kv, why))
		return cli_fail(cli, "--set: %s", why);
	return 0;
}

static int cli_apply(struct gw_cli *cli, enum cli_id id, const char *val)
{
	struct sockaddr_storage ss;
	char why[GW_WHY_MAX];
	socklen_t len;
	bool has_port;
	uint64_t n;

	switch (id) {
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
	case O_LISTEN:
		if (gw_parse_listen(val, GW_PORT_DEFAULT, &ss, &len, &has_port, why))
			return cli_fail(cli, "--listen: %s", why);
		cli->listen = val;
		break;
	case O_THREADS:
		if (gw_parse_uint(val, 1, GW_THREADS_MAX, &n, why))
			return cli_fail(cli, "--threads: %s", why);
		cli->threads = (unsigned int)n;
		break;
	case O_LEASE:
		if (gw_parse_uint(val, GW_LEASE_MIN, GW_LEASE_MAX, &n, why))
			return cli_fail(cli, "--lease-time: %s", why);
		cli->lease_time = (unsigned int)n;
		break;
	case O_STATE_DIR:
		if (val[0] != '/')
			return cli_fail(cli, "--state-dir: '%.80s' is not an absolute path", val);
		cli->state_dir = val;
		break;
	case O_GRACE: {
		bool b;

		if (gw_parse_bool(val, &b, why))
			return cli_fail(cli, "--grace: %s", why);
		cli->grace = b;
		break;
	}
	case O_LEGACY_HANDLES:
		if (strcmp(val, "accept") && strcmp(val, "refuse"))
			return cli_fail(
				cli, "--legacy-handles: '%.80s' is neither accept nor refuse", val);
		cli->legacy_handles = val[0] == 'a';
		break;
	case O_RDMA:
		cli->rdma = true;
		if (val && gw_parse_uint(val, 1, 65535, &n, why))
			return cli_fail(cli, "--rdma: port %s", why);
		if (val)
			cli->rdma_port = (uint16_t)n;
		break;
	case O_FOREGROUND:
		cli->foreground = true;
		break;
	case O_LOG:
		if (gw_parse_log_level(val, &cli->log_level, why))
			return cli_fail(cli, "--log-level: %s", why);
		break;
	case O_SET:
		if (cli_check_set(cli, val))
			return -EINVAL;
		cli->sets[cli->nsets++] = val;
		break;
	case O_STATS_FILE:
		if (val[0] != '/' && strcmp(val, "none"))
			return cli_fail(cli, "--stats-file: '%.80s' is not an absolute path", val);
		cli->stats_file = val;
		break;
	case O_METRICS:
		if (gw_parse_listen(val, GW_METRICS_PORT_DEFAULT, &ss, &len, &has_port, why))
			return cli_fail(cli, "--metrics-listen: %s", why);
		cli->metrics_listen = val;
		break;
	case O_HELP:
		cli->help = true;
		break;
	case O_VERSION:
		cli->version = true;
		break;
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
 * --stats-file PATH or none; in one-export mode without it, the file
 * "stats" in the state directory.
 */
static int cli_stats_file(const struct gw_cli *cli, struct gw_config *cfg)
{
	char *f;

	if (!cli->stats_file && !cli->export_dir)
		return 0; /* the file's setting stays */
	if (cli->stats_file && !strcmp(cli->stats_file, "none")) {
		f = NULL;
	} else if (cli->stats_file) {
		f = strdup(cli->stats_file);
		if (!f)
			return -ENOMEM;
	} else if (asprintf(&f, "%s/stats", cfg->state_dir) < 0) {
		return -ENOMEM;
	}
	free(cfg->stats_file);
	cfg->stats_file = f;
	return 0;
}

static int find_long(const char *name, size_t len)
{
	size_t i;

	for (i = 0; i < CLI_NOPTS; i++) {
		if (strlen(cli_opts[i].name) == len && !strncmp(name, cli_opts[i].name, len))
			return (int)i;
	}
	return -1;
}

static int find_short(char c)
{
	size_t i;

	for (i = 0; i < CLI_NOPTS; i++) {
		if (cli_opts[i].short_name && cli_opts[i].short_name == c)
			return (int)i;
	}
	return -1;
}

/* --name, --name=VALUE, --name VALUE; *i moves past a separate value. */
static int parse_long(struct gw_cli *cli, int argc, char *const argv[], int *i)
{
	const char *name = argv[*i] + 2, *eq = strchr(name, '='), *val = NULL;
	size_t len = eq ? (size_t)(eq - name) : strlen(name);
	int k = find_long(name, len);

	if (k < 0)
		return cli_fail(cli, "unknown option '--%.*s'", (int)(len > 64 ? 64 : len), name);
	if (eq) {
		if (cli_opts[k].arg == A_NONE)
			return cli_fail(cli, "option '--%s' takes no value", cli_opts[k].name);
		val = eq + 1;
	} else if (cli_opts[k].arg == A_REQUIRED) {
		if (*i + 1 >= argc)
			return cli_fail(cli, "option '--%s' needs a value", cli_opts[k].name);
		val = argv[++*i];
	}
	if (val && !*val)
		return cli_fail(cli, "option '--%s' needs a non-empty value", cli_opts[k].name);
	return cli_apply(cli, cli_opts[k].id, val);
}

/* -f, -fV, -c FILE, -cFILE. */
static int parse_short(struct gw_cli *cli, int argc, char *const argv[], int *i)
{
	const char *p = argv[*i] + 1;

	for (; *p; p++) {
		int k = find_short(*p);
		const char *val = NULL;

		if (k < 0)
			return cli_fail(cli, "unknown option '-%c'", *p);
		if (cli_opts[k].arg == A_REQUIRED) {
			if (p[1])
				val = p + 1;
			else if (*i + 1 < argc)
				val = argv[++*i];
			else
				return cli_fail(cli, "option '-%c' needs a value", *p);
			if (!*val)
				return cli_fail(cli, "option '-%c' needs a non-empty value", *p);
			return cli_apply(cli, cli_opts[k].id, val);
		}
		if (cli_apply(cli, cli_opts[k].id, NULL))
			return -EINVAL;
	}
	return 0;
}

int gw_cli_parse(int argc, char *const argv[], struct gw_cli *cli)
{
	bool config_given;
	int i;

	*cli = (struct gw_cli){ .log_level = -1, .grace = -1, .legacy_handles = -1 };
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
	if (cli->help || cli->version)
		return 0;
	config_given = cli->config != NULL;
	if (config_given && cli->export_dir)
		return cli_fail(cli, "--config and --export are mutually exclusive");
	if (cli->export_opts && !cli->export_dir)
		return cli_fail(cli, "--export-options needs --export");
	if (!cli->export_dir && !config_given)
		cli->config = GW_CONFIG_DEFAULT;
	return 0;
}

int gw_config_from_cli(const struct gw_cli *cli, struct gw_config **out, gw_err_fn *err_fn,
		       void *arg)
{
	struct gw_err e = { .fn = err_fn, .arg = arg, .file = "command line" };
	struct gw_config *cfg;
	char why[GW_WHY_MAX];
	bool has_port;
	unsigned int i;
	int rc;

	if (cli->export_dir)
		rc = gw_config_from_args(cli->export_dir, cli->export_opts, cli->listen, &cfg,
					 err_fn, arg);
	else
		rc = gw_config_load(cli->config ? cli->config : GW_CONFIG_DEFAULT, &cfg, err_fn,
				    arg);
	*out = NULL;
	if (rc)
		return rc;
	if (cli->listen && !cli->export_dir &&
	    gw_parse_listen(cli->listen, GW_PORT_DEFAULT, &cfg->listen, &cfg->listen_len, &has_port,
			    why)) {
		gw_err_at(&e, 0, "--listen: %s", why);
		gw_config_free(cfg);
		return -EINVAL;
	}
	if (cli->threads)
		cfg->threads = cli->threads;
	if (cli->lease_time)
		cfg->lease_time = cli->lease_time;
	if (cli->state_dir || cli->export_dir) {
		char *d = cli->state_dir ? strdup(cli->state_dir) : export_state_dir(cfg);

		if (!d) {
			gw_config_free(cfg);
			return -ENOMEM;
		}
		free(cfg->state_dir);
		cfg->state_dir = d;
	}
	rc = cli_stats_file(cli, cfg);
	if (rc) {
		gw_config_free(cfg);
		return rc;
	}
	if (cli->metrics_listen) {
		gw_parse_listen(cli->metrics_listen, GW_METRICS_PORT_DEFAULT, &cfg->metrics,
				&cfg->metrics_len, &has_port, why);
	}
	if (cli->grace >= 0)
		cfg->grace = cli->grace;
	if (cli->legacy_handles >= 0)
		cfg->legacy_handles = cli->legacy_handles;
	if (cli->rdma)
		cfg->rdma = true;
	if (cli->rdma_port)
		cfg->rdma_port = cli->rdma_port;
	if (cli->log_level >= 0)
		cfg->log_level = cli->log_level;
	for (i = 0; i < cli->nsets; i++) {
		if (cli_set_limit(&cfg->limits, cli->sets[i], why)) {
			gw_err_at(&e, 0, "--set: %s", why);
			gw_config_free(cfg);
			return -EINVAL;
		}
	}
	*out = cfg;
	return 0;
}
