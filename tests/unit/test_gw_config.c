// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests of lacunad's configuration layer (gateway/config/gw_config.h):
 * every setting and its defaults, every export option, client
 * specifications and address matching (prefix edges, IPv4 clients seen
 * as v4-mapped IPv6, first match in line order), error messages with the
 * right FILE:LINE (also within and after continued lines), several errors
 * reported from one file, duplicates, bad numbers, quoting, long lines,
 * empty files, reloading, the one-export mode, squashing, the command
 * line, and RPC-with-TLS: the xprtsec= vocabulary and option, its
 * defaults, and the TLS settings checked against each other and the
 * exports.
 *
 * Each case writes its configuration to a file in a private temporary
 * directory and collects the messages through the error callback.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cmocka.h>

#include "gw_config.h"
#include "gw_settings.h"
#include "gw_xprtsec.h"

#define ERRS_MAX 64

struct errs {
	int n;
	char msg[ERRS_MAX][1024];
};

static char tmpdir[PATH_MAX];
static char conf[PATH_MAX + 16]; /* the file every case writes */

static void collect(void *arg, const char *msg)
{
	struct errs *e = arg;

	if (e->n < ERRS_MAX)
		snprintf(e->msg[e->n], sizeof(e->msg[0]), "%s", msg);
	e->n++;
}

static void write_conf(const char *text, size_t len)
{
	FILE *f = fopen(conf, "w");

	assert_non_null(f);
	assert_int_equal(fwrite(text, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
}

/* Load text; the config comes back in *cfg (NULL on failure), messages in *e. */
static int load_buf(const char *text, size_t len, struct gw_config **cfg, struct errs *e)
{
	memset(e, 0, sizeof(*e));
	write_conf(text, len);
	return gw_config_load(conf, cfg, collect, e);
}

static int load(const char *text, struct gw_config **cfg, struct errs *e)
{
	return load_buf(text, strlen(text), cfg, e);
}

/* A config that must load without a message. */
static struct gw_config *load_ok(const char *text)
{
	struct gw_config *cfg;
	struct errs e;
	int rc = load(text, &cfg, &e);

	if (rc || e.n)
		fail_msg("unexpected failure %d: %s", rc, e.n ? e.msg[0] : "(no message)");
	assert_non_null(cfg);
	return cfg;
}

static void print_errs(const struct errs *e)
{
	int i;

	for (i = 0; i < e->n && i < ERRS_MAX; i++)
		print_message("  [%d] %s\n", i, e->msg[i]);
}

/* Message i must be "CONF:LINE: ...what..." (line 0: "CONF: ..."). */
static void check_err(const struct errs *e, int i, unsigned int line, const char *what)
{
	char prefix[PATH_MAX + 64];

	if (line)
		snprintf(prefix, sizeof(prefix), "%s:%u: ", conf, line);
	else
		snprintf(prefix, sizeof(prefix), "%s: ", conf);
	if (i >= e->n || strncmp(e->msg[i], prefix, strlen(prefix)) || !strstr(e->msg[i], what)) {
		print_errs(e);
		fail_msg("message %d: wanted line %u and '%s'", i, line, what);
	}
}

/* A config that must fail with exactly one message, on line, containing what. */
static void load_fails(const char *text, unsigned int line, const char *what)
{
	struct gw_config *cfg = (void *)1;
	struct errs e;
	int rc = load(text, &cfg, &e);

	if (rc != -EINVAL || e.n != 1) {
		print_errs(&e);
		fail_msg("'%s': rc %d, %d messages (wanted -EINVAL, 1)", text, rc, e.n);
	}
	assert_null(cfg);
	check_err(&e, 0, line, what);
}

/* The row of the settings table named name. */
static size_t setting(const char *name)
{
	int i = gw_setting_find(name, strlen(name));

	if (i < 0)
		fail_msg("no setting '%s' in the table", name);
	return (size_t)i;
}

static void to_sockaddr(const char *addr, struct sockaddr_storage *ss)
{
	memset(ss, 0, sizeof(*ss));
	if (inet_pton(AF_INET, addr, &((struct sockaddr_in *)ss)->sin_addr) == 1) {
		ss->ss_family = AF_INET;
		return;
	}
	assert_int_equal(inet_pton(AF_INET6, addr, &((struct sockaddr_in6 *)ss)->sin6_addr), 1);
	ss->ss_family = AF_INET6;
}

static const struct gw_client *match(const struct gw_export_conf *exp, const char *addr)
{
	struct sockaddr_storage ss;

	to_sockaddr(addr, &ss);
	return gw_export_conf_match(exp, (struct sockaddr *)&ss);
}

/* The spec of the rule addr matches, or "-" when denied. */
static const char *match_spec(const struct gw_export_conf *exp, const char *addr)
{
	const struct gw_client *c = match(exp, addr);

	return c ? c->spec : "-";
}

static unsigned int listen_port(const struct gw_config *cfg)
{
	if (cfg->listen.ss_family == AF_INET)
		return ntohs(((const struct sockaddr_in *)&cfg->listen)->sin_port);
	return ntohs(((const struct sockaddr_in6 *)&cfg->listen)->sin6_port);
}

static void listen_addr(const struct gw_config *cfg, char *buf, size_t len)
{
	const void *a =
		cfg->listen.ss_family == AF_INET
			? (const void *)&((const struct sockaddr_in *)&cfg->listen)->sin_addr
			: (const void *)&((const struct sockaddr_in6 *)&cfg->listen)->sin6_addr;

	assert_non_null(inet_ntop(cfg->listen.ss_family, a, buf, (socklen_t)len));
}

/* ---------------------------------------------------------------- settings */

static void test_defaults(void **state)
{
	struct gw_config *cfg = load_ok("/srv/data 10.0.0.1\n");
	const struct gw_client *c;
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	char a[64];

	assert_int_equal(cfg->listen.ss_family, AF_INET);
	assert_int_equal(cfg->listen_len, sizeof(struct sockaddr_in));
	listen_addr(cfg, a, sizeof(a));
	assert_string_equal(a, "0.0.0.0");
	assert_int_equal(listen_port(cfg), 2049);
	assert_false(cfg->rdma);
	assert_int_equal(cfg->rdma_port, 20049);
	assert_int_equal(cfg->threads, cpus < 1		       ? 1
				       : cpus > GW_THREADS_MAX ? GW_THREADS_MAX
							       : cpus);
	assert_int_equal(cfg->lease_time, 90);
	assert_true(cfg->grace);
	assert_string_equal(cfg->state_dir, "/var/lib/lacunad");
	assert_int_equal(cfg->max_record, GW_RECORD_DEFAULT);
	assert_true(cfg->copy_sync_max == 64ull * 1024 * 1024);
	assert_int_equal(cfg->log_level, LOG_INFO);
	assert_null(cfg->stats_file);
	assert_int_equal(cfg->drc_entries, GW_DRC_ENTRIES_DEFAULT);
	assert_string_equal(cfg->source, conf);

	assert_int_equal(cfg->nexports, 1);
	assert_string_equal(cfg->exports[0].path, "/srv/data");
	assert_string_equal(cfg->exports[0].pseudo, "/srv/data");
	assert_int_equal(cfg->exports[0].line, 1);
	assert_int_equal(cfg->exports[0].fsid_kind, GW_FSID_NONE);
	assert_int_equal(cfg->exports[0].nclients, 1);
	c = &cfg->exports[0].clients[0];
	assert_string_equal(c->spec, "10.0.0.1");
	assert_int_equal(c->family, AF_INET);
	assert_int_equal(c->prefix, 128);
	/* exports(5) defaults: ro, root_squash, secure, nobody, sec=sys */
	assert_false(c->opts.rw);
	assert_true(c->opts.root_squash);
	assert_true(c->opts.secure);
	assert_false(c->opts.all_squash);
	assert_int_equal(c->opts.anonuid, 65534);
	assert_int_equal(c->opts.anongid, 65534);
	assert_int_equal(c->opts.nsec, 1);
	assert_int_equal(c->opts.sec[0], GW_SEC_SYS);
	gw_config_free(cfg);
}

static void test_settings(void **state)
{
	struct gw_config *cfg;
	char a[64];

	cfg = load_ok("# every setting\n"
		      "listen = [::1]:3049\n"
		      "rdma = on\n"
		      "rdma_port = 20050\n"
		      "threads = 7\n"
		      "lease_time = 10\n"
		      "grace = off\n"
		      "state_dir = /srv/lacunad-state\n"
		      "max_record = 2M\n"
		      "copy_sync_max = 2G\n"
		      "log_level = debug\n"
		      "stats_file = \"/var/lib/lacuna/my stats\"\n"
		      "drc_entries = 0\n"
		      "/srv/data *\n");
	assert_int_equal(cfg->listen.ss_family, AF_INET6);
	assert_int_equal(cfg->listen_len, sizeof(struct sockaddr_in6));
	listen_addr(cfg, a, sizeof(a));
	assert_string_equal(a, "::1");
	assert_int_equal(listen_port(cfg), 3049);
	assert_true(cfg->rdma);
	assert_int_equal(cfg->rdma_port, 20050);
	assert_int_equal(cfg->threads, 7);
	assert_int_equal(cfg->lease_time, 10);
	assert_false(cfg->grace);
	assert_string_equal(cfg->state_dir, "/srv/lacunad-state");
	assert_int_equal(cfg->max_record, 2 * 1024 * 1024);
	assert_true(cfg->copy_sync_max == 2ull << 30);
	assert_int_equal(cfg->log_level, LOG_DEBUG);
	assert_string_equal(cfg->stats_file, "/var/lib/lacuna/my stats");
	assert_int_equal(cfg->drc_entries, 0);
	gw_config_free(cfg);

	/* other spellings, ranges' ends, port given on its own */
	cfg = load_ok("listen=127.0.0.1\n"
		      "port=2050\n"
		      "rdma = No\n"
		      "grace = TRUE\n"
		      "threads = auto\n"
		      "lease_time = 3600\n"
		      "max_record = 16KiB\n"
		      "log_level = warn\n"
		      "stats_file = none\n"
		      "/srv/data *\n");
	listen_addr(cfg, a, sizeof(a));
	assert_string_equal(a, "127.0.0.1");
	assert_int_equal(listen_port(cfg), 2050);
	assert_false(cfg->rdma);
	assert_true(cfg->grace);
	assert_true(cfg->threads >= 1);
	assert_int_equal(cfg->lease_time, 3600);
	assert_int_equal(cfg->max_record, 16384);
	assert_int_equal(cfg->log_level, LOG_WARNING);
	assert_null(cfg->stats_file);
	gw_config_free(cfg);

	/* bare IPv6 (no port), port in listen equal to port = */
	cfg = load_ok("listen = ::\nport = 2051\n/srv/data *\n");
	assert_int_equal(cfg->listen.ss_family, AF_INET6);
	assert_int_equal(listen_port(cfg), 2051);
	gw_config_free(cfg);
	cfg = load_ok("port = 2052\nlisten = 10.1.2.3:2052\nmax_record = 67108864\n"
		      "log_level = error\n/srv/data *\n");
	assert_int_equal(listen_port(cfg), 2052);
	assert_int_equal(cfg->max_record, 64 * 1024 * 1024);
	assert_int_equal(cfg->log_level, LOG_ERR);
	gw_config_free(cfg);
}

static void test_setting_errors(void **state)
{
	load_fails("lease_time = 5\n/s *\n", 1, "lease_time: 5 is out of range (10..3600)");
	load_fails("lease_time = 3601\n/s *\n", 1, "out of range (10..3600)");
	load_fails("threads = 0\n/s *\n", 1, "threads: 0 is out of range (1..1024)");
	load_fails("threads = 1025\n/s *\n", 1, "out of range (1..1024)");
	load_fails("port = 0\n/s *\n", 1, "port: 0 is out of range (1..65535)");
	load_fails("port = 65536\n/s *\n", 1, "out of range");
	load_fails("rdma_port = 70000\n/s *\n", 1, "rdma_port: 70000 is out of range");
	load_fails("rdma = maybe\n/s *\n", 1, "rdma: 'maybe' is not on or off");
	load_fails("grace = 2\n/s *\n", 1, "grace: '2' is not on or off");
	load_fails("state_dir = state\n/s *\n", 1, "'state' is not an absolute path");
	load_fails("max_record = 1K\n/s *\n", 1,
		   "max_record: 1K is out of range (16384..67108864)");
	load_fails("max_record = 1T\n/s *\n", 1, "unknown size suffix 'T'");
	load_fails("max_record = 65M\n/s *\n", 1, "out of range");
	load_fails("copy_sync_max = 512K\n/s *\n", 1,
		   "copy_sync_max: 512K is out of range (1048576..1099511627776)");
	load_fails("log_level = loud\n/s *\n", 1, "unknown log level 'loud'");
	load_fails("stats_file = stats.json\n/s *\n", 1, "'stats.json' is not an absolute path");
	load_fails("listen = localhost\n/s *\n", 1, "host names");
	load_fails("listen = localhost:2049\n/s *\n", 1, "host names");
	load_fails("listen = 1.2.3.4:99999\n/s *\n", 1, "port 99999 is out of range");
	load_fails("listen = 1.2.3.4:\n/s *\n", 1, "port '' is not a number");
	load_fails("listen = [::1\n/s *\n", 1, "missing ']'");
	load_fails("listen = [::1]2049\n/s *\n", 1, "junk after ']'");
	load_fails("listen = [1.2.3.4]:2049\n/s *\n", 1, "not an IPv4 or IPv6 address");
	load_fails("listen = 1.2.3\n/s *\n", 1, "not an IPv4 or IPv6 address");
	load_fails("listen = :2049\n/s *\n", 1, "missing address");
	load_fails("listen = fe80::1%eth0\n/s *\n", 1, "scoped IPv6");
	load_fails("thread = 4\n/s *\n", 1, "unknown setting 'thread'");
	load_fails("lease-time = 60\n/s *\n", 1,
		   "unknown setting 'lease-time' (did you mean lease_time?)");
	load_fails("threads =\n/s *\n", 1, "threads: missing value");
	load_fails("threads = 4 5\n/s *\n", 1, "threads: unexpected '5' after the value");
	load_fails("threads 4\n/s *\n", 1, "expected '=' after 'threads'");
	load_fails("= 4\n/s *\n", 1, "expected 'key = value' or an export path");
	load_fails("threads = 2\n/s *\nthreads = 3\n", 3, "threads set twice (first at line 1)");
	load_fails("listen = 127.0.0.1:2050\nport = 2049\n/s *\n", 2,
		   "port = 2049 conflicts with the port of listen (line 1)");
}

static void test_numbers(void **state)
{
	/* too big for 64 bits, negative, trailing junk, signs and blanks, hex */
	load_fails("lease_time = 99999999999999999999999\n/s *\n", 1,
		   "lease_time: 99999999999999999999999 is out of range (10..3600)");
	load_fails("lease_time = 18446744073709551616\n/s *\n", 1, "out of range");
	load_fails("lease_time = 4294967386\n/s *\n", 1, "out of range"); /* 2^32 + 90 */
	load_fails("lease_time = -5\n/s *\n", 1, "lease_time: -5 is negative");
	load_fails("threads = -0\n/s *\n", 1, "is negative");
	load_fails("lease_time = 90s\n/s *\n", 1, "'90s' is not a number (junk after the digits)");
	load_fails("lease_time = +90\n/s *\n", 1, "'+90' is not a number");
	load_fails("lease_time = 0x5a\n/s *\n", 1, "'0x5a' is not a number");
	load_fails("lease_time = \" 90\"\n/s *\n", 1, "' 90' is not a number");
	load_fails("lease_time = \"\"\n/s *\n", 1, "'' is not a number");
	load_fails("max_record = 17179869184G\n/s *\n", 1, "out of range");
	load_fails("max_record = -1M\n/s *\n", 1, "is negative");
	load_fails("max_record = M\n/s *\n", 1, "'M' is not a number");
	load_fails("/s *(anonuid=4294967295)\n", 1, "anonuid: 4294967295 is out of range");
	load_fails("/s *(anonuid=-2)\n", 1, "anonuid: -2 is negative");
	load_fails("/s *(anongid=1x)\n", 1, "anongid: '1x' is not a number");
	load_fails("/s *(fsid=4294967296)\n", 1, "fsid: 4294967296 is out of range");
	load_fails("/s 10.0.0.0/33\n", 1, "prefix length 33 is out of range (0..32)");
	load_fails("/s 10.0.0.0/-1\n", 1, "prefix length -1 is negative");
	load_fails("/s 10.0.0.0/8x\n", 1, "prefix length '8x' is not a number");

	/* leading zeros are decimal */
	struct gw_config *cfg = load_ok("lease_time = 0090\n/s *\n");

	assert_int_equal(cfg->lease_time, 90);
	gw_config_free(cfg);
}

/* ---------------------------------------------------------------- options */

static const struct gw_opts *opts_of(const struct gw_config *cfg, size_t exp, size_t client)
{
	assert_true(exp < cfg->nexports);
	assert_true(client < cfg->exports[exp].nclients);
	return &cfg->exports[exp].clients[client].opts;
}

static void test_options_each(void **state)
{
	struct gw_config *cfg;
	const struct gw_opts *o;

	cfg = load_ok(
		"/a 10.0.0.1(rw) 10.0.0.2(ro) 10.0.0.3() 10.0.0.4\n"
		"/b 10.0.0.1(no_root_squash) 10.0.0.2(root_squash) 10.0.0.3(all_squash)\n"
		"/c 10.0.0.1(anonuid=1000,anongid=100) 10.0.0.2(anonuid=0,anongid=4294967294)\n"
		"/d 10.0.0.1(sec=sys) 10.0.0.2(sec=none) 10.0.0.3(sec=none:sys)\n"
		"/e 10.0.0.1(fsid=7) 10.0.0.2(rw,fsid=7)\n"
		"/f -all_squash 10.0.0.1(no_all_squash,rw,rw)\n"
		"/g -insecure 10.0.0.1 10.0.0.2(secure)\n");
	assert_true(opts_of(cfg, 0, 0)->rw);
	assert_false(opts_of(cfg, 0, 1)->rw);
	assert_false(opts_of(cfg, 0, 2)->rw);
	assert_false(opts_of(cfg, 0, 3)->rw);

	assert_false(opts_of(cfg, 6, 0)->secure);
	assert_true(opts_of(cfg, 6, 1)->secure); /* a client's own list overrides the line's */

	assert_false(opts_of(cfg, 1, 0)->root_squash);
	assert_true(opts_of(cfg, 1, 1)->root_squash);
	assert_true(opts_of(cfg, 1, 2)->all_squash);
	assert_false(opts_of(cfg, 1, 1)->all_squash);

	o = opts_of(cfg, 2, 0);
	assert_int_equal(o->anonuid, 1000);
	assert_int_equal(o->anongid, 100);
	o = opts_of(cfg, 2, 1);
	assert_int_equal(o->anonuid, 0);
	assert_int_equal(o->anongid, 4294967294u);

	o = opts_of(cfg, 3, 0);
	assert_int_equal(o->nsec, 1);
	assert_int_equal(o->sec[0], GW_SEC_SYS);
	o = opts_of(cfg, 3, 1);
	assert_int_equal(o->nsec, 1);
	assert_int_equal(o->sec[0], GW_SEC_NONE);
	o = opts_of(cfg, 3, 2);
	assert_int_equal(o->nsec, 2);
	assert_int_equal(o->sec[0], GW_SEC_NONE);
	assert_int_equal(o->sec[1], GW_SEC_SYS);

	assert_int_equal(cfg->exports[4].fsid_kind, GW_FSID_NUM);
	assert_int_equal(cfg->exports[4].fsid, 7);
	assert_true(opts_of(cfg, 4, 1)->rw);
	/* the same effect repeated is no conflict; no_all_squash undoes all_squash */
	assert_false(opts_of(cfg, 5, 0)->all_squash);
	assert_true(opts_of(cfg, 5, 0)->rw);
	gw_config_free(cfg);

	/* fsid=root and fsid=0 both make the pseudo-root */
	cfg = load_ok("/srv *(fsid=root)\n");
	assert_int_equal(cfg->exports[0].fsid_kind, GW_FSID_ROOT);
	gw_config_free(cfg);
	cfg = load_ok("/srv *(fsid=0)\n");
	assert_int_equal(cfg->exports[0].fsid_kind, GW_FSID_ROOT);
	gw_config_free(cfg);
}

static void test_option_errors(void **state)
{
	struct gw_config *cfg;
	struct errs e;

	load_fails("/s *(rx)\n", 1, "/s: *: unknown option 'rx'");
	load_fails("/s *(sync)\n", 1, "'sync' is a Linux nfsd option that lacunad does not take");
	load_fails("/s *(no_subtree_check)\n", 1, "Linux nfsd option");
	load_fails("/s *(sec=krb5p)\n", 1, "Kerberos (krb5p) is not supported");
	load_fails("/s *(sec=sys:krb5)\n", 1, "Kerberos (krb5) is not supported");
	load_fails("/s *(sec=lkey)\n", 1, "unknown security flavor 'lkey'");
	load_fails("/s *(sec=sys:sys)\n", 1, "flavor 'sys' listed twice");
	load_fails("/s *(sec=sys:)\n", 1, "empty security flavor");
	load_fails("/s *(sec=)\n", 1, "missing security flavor");
	load_fails("/s *(sec)\n", 1, "option 'sec' needs a value");
	load_fails("/s *(anonuid)\n", 1, "option 'anonuid' needs a value");
	load_fails("/s *(anongid=)\n", 1, "anongid: '' is not a number");
	load_fails("/s *(rw=1)\n", 1, "option 'rw' takes no value");
	load_fails("/s *(rw,ro)\n", 1, "conflicting options 'rw' and 'ro'");
	load_fails("/s *(root_squash,no_root_squash)\n", 1, "conflicting options");
	load_fails("/s *(secure,insecure)\n", 1, "conflicting options 'secure' and 'insecure'");
	load_fails("/s *(anonuid=1,anonuid=2)\n", 1,
		   "conflicting options 'anonuid=1' and 'anonuid=2'");
	load_fails("/s *(sec=sys,sec=none)\n", 1, "conflicting options 'sec=sys' and 'sec=none'");
	load_fails("/s *(fsid=1,fsid=root)\n", 1, "conflicting options 'fsid=1' and 'fsid=root'");
	load_fails("/s *(rw,,no_root_squash)\n", 1, "empty option (a stray comma)");
	load_fails("/s *(rw,)\n", 1, "empty option");
	load_fails("/s *(fsid)\n", 1, "option 'fsid' needs a value");
	load_fails("/s *(fsid=-1)\n", 1, "fsid: -1 is negative");
	load_fails("/s *(fsid=3bb4d6c2-2f4e-4d1d-8a0a-6b1d2cfa3f8e)\n", 1,
		   "UUID fsids are not supported");
	load_fails("/s 10.0.0.1(fsid=1) 10.0.0.2(fsid=2)\n", 1,
		   "'fsid=2' differs from 'fsid=1' given before");

	/* every bad option of a list is named, in order */
	assert_int_equal(load("/s *(rx,rw,async,wx)\n", &cfg, &e), -EINVAL);
	assert_int_equal(e.n, 3);
	check_err(&e, 0, 1, "unknown option 'rx'");
	check_err(&e, 1, 1, "'async' is a Linux nfsd option");
	check_err(&e, 2, 1, "unknown option 'wx'");
}

static void test_default_options(void **state)
{
	struct gw_config *cfg;

	/* -OPTIONS right after the path: defaults of the line's clients */
	cfg = load_ok("/s -rw,no_root_squash,fsid=9 10.0.0.1 10.0.0.2(ro) 10.0.0.3(root_squash)\n");
	assert_true(opts_of(cfg, 0, 0)->rw);
	assert_false(opts_of(cfg, 0, 0)->root_squash);
	assert_false(opts_of(cfg, 0, 1)->rw);
	assert_false(opts_of(cfg, 0, 1)->root_squash);
	assert_true(opts_of(cfg, 0, 2)->rw);
	assert_true(opts_of(cfg, 0, 2)->root_squash);
	assert_int_equal(cfg->exports[0].fsid_kind, GW_FSID_NUM);
	assert_int_equal(cfg->exports[0].fsid, 9);
	gw_config_free(cfg);

	load_fails("/s 10.0.0.1 -rw\n", 1,
		   "default options ('-rw') must come right after the path");
	load_fails("/s -rx *\n", 1, "/s: -rx: unknown option 'rx'");
	load_fails("/s -ro\n", 1, "/s: no clients");
}

/* ---------------------------------------------------------------- clients */

static void test_client_specs(void **state)
{
	struct gw_config *cfg;
	const struct gw_export_conf *x;
	struct errs e;

	cfg = load_ok("/s * 10.1.2.3 10.0.0.0/8 192.168.0.0/255.255.0.0 ::1 fd00::/64 "
		      "::ffff:172.16.0.0/108 0.0.0.0/0\n/t ::/0\n");
	x = &cfg->exports[0];
	assert_int_equal(x->nclients, 8);
	assert_int_equal(x->clients[0].family, AF_UNSPEC);
	assert_int_equal(x->clients[0].prefix, 0);
	assert_int_equal(x->clients[1].family, AF_INET);
	assert_int_equal(x->clients[1].prefix, 128);
	assert_int_equal(x->clients[2].prefix, 96 + 8);
	assert_int_equal(x->clients[3].prefix, 96 + 16);
	assert_string_equal(x->clients[3].spec, "192.168.0.0/255.255.0.0");
	assert_int_equal(x->clients[4].family, AF_INET6);
	assert_int_equal(x->clients[4].prefix, 128);
	assert_int_equal(x->clients[5].prefix, 64);
	assert_int_equal(x->clients[6].family, AF_INET6);
	assert_int_equal(x->clients[6].prefix, 108);
	assert_int_equal(x->clients[7].prefix, 96);
	assert_int_equal(x->clients[1].line, 1);
	assert_int_equal(cfg->exports[1].clients[0].family, AF_INET6);
	assert_int_equal(cfg->exports[1].clients[0].prefix, 0);
	gw_config_free(cfg);

	load_fails("/s client.example.com(rw)\n", 1,
		   "/s: 'client.example.com' is not an IP address: host names, wildcards and "
		   "netgroups are not supported");
	load_fails("/s *.example.com\n", 1, "wildcards");
	load_fails("/s @trusted\n", 1, "netgroups");
	load_fails("/s localhost\n", 1, "host names");
	load_fails("/s 10.1.2.3/8\n", 1,
		   "'10.1.2.3/8' has host bits set; did you mean 10.0.0.0/8?");
	load_fails("/s fd00::1/64\n", 1, "did you mean fd00::/64?");
	load_fails("/s 10.0.0.1/31\n", 1, "did you mean 10.0.0.0/31?");
	load_fails("/s ::1/129\n", 1, "prefix length 129 is out of range (0..128)");
	load_fails("/s 10.0.0.0/255.0.255.0\n", 1, "netmask is not contiguous");
	load_fails("/s 10.0.0.0/255.0.0\n", 1, "bad netmask");
	load_fails("/s 10.0.0.0/\n", 1, "prefix length '' is not a number");
	load_fails("/s /8\n", 1, "missing address");
	load_fails("/s fe80::1%eth0\n", 1, "scoped IPv6");
	load_fails("/s 1.2.3.4.5\n", 1, "not an IPv4 or IPv6 address");
	load_fails("/s 10.0.0.1 (rw)\n", 1,
		   "options '(rw)' without a client: remove the blank before '(' or write '*(rw)'");
	load_fails("/s 10.0.0.1(rw\n", 1, "malformed option list '(rw'");
	load_fails("/s 10.0.0.1(rw)x\n", 1, "malformed option list");
	load_fails("/s 10.0.0.1(rw)(ro)\n", 1, "malformed option list");
	load_fails("/s 10.0.0.1 10.0.0.1(rw)\n", 1,
		   "client 10.0.0.1 listed twice (first as 10.0.0.1");
	load_fails("/s ::ffff:10.0.0.1 10.0.0.1\n", 1, "client 10.0.0.1 listed twice");
	load_fails("/s *(ro) ::/0(rw)\n", 1, "client ::/0 listed twice (first as * at line 1)");

	/* a list broken by a blank is one error, not one per piece */
	assert_int_equal(load("/s 10.0.0.1(rw, no_root_squash) 10.0.0.2(rx)\n", &cfg, &e), -EINVAL);
	assert_int_equal(e.n, 2);
	check_err(&e, 0, 1, "malformed option list '(rw,' (no blanks inside the parentheses)");
	check_err(&e, 1, 1, "unknown option 'rx'");
}

static void test_match_prefixes(void **state)
{
	struct gw_config *cfg;
	const struct gw_export_conf *x;
	struct sockaddr_un un = { .sun_family = AF_UNIX };

	/* /0 of IPv4 is every IPv4 client and no IPv6 one */
	cfg = load_ok("/a 0.0.0.0/0\n"
		      "/b 10.1.2.3/32\n"
		      "/c 2001:db8::1/128\n"
		      "/d 2001:db8:1:2::/64\n"
		      "/e 10.8.0.0/13 192.168.1.0/31\n"
		      "/f ::/0\n"
		      "/g *\n"
		      "/h ::ffff:172.16.0.0/108\n");
	x = &cfg->exports[0];
	assert_string_equal(match_spec(x, "0.0.0.0"), "0.0.0.0/0");
	assert_string_equal(match_spec(x, "255.255.255.255"), "0.0.0.0/0");
	assert_string_equal(match_spec(x, "::ffff:1.2.3.4"), "0.0.0.0/0");
	assert_string_equal(match_spec(x, "::1"), "-");
	assert_string_equal(match_spec(x, "::"), "-");

	x = &cfg->exports[1];
	assert_string_equal(match_spec(x, "10.1.2.3"), "10.1.2.3/32");
	assert_string_equal(match_spec(x, "10.1.2.2"), "-");
	assert_string_equal(match_spec(x, "10.1.2.4"), "-");
	assert_string_equal(match_spec(x, "::ffff:10.1.2.3"), "10.1.2.3/32");
	assert_string_equal(match_spec(x, "::10.1.2.3"), "-"); /* v4-compatible is not mapped */

	x = &cfg->exports[2];
	assert_string_equal(match_spec(x, "2001:db8::1"), "2001:db8::1/128");
	assert_string_equal(match_spec(x, "2001:db8::2"), "-");
	assert_string_equal(match_spec(x, "2001:db8::"), "-");

	x = &cfg->exports[3];
	assert_string_equal(match_spec(x, "2001:db8:1:2::"), "2001:db8:1:2::/64");
	assert_string_equal(match_spec(x, "2001:db8:1:2:ffff:ffff:ffff:ffff"), "2001:db8:1:2::/64");
	assert_string_equal(match_spec(x, "2001:db8:1:3::"), "-");
	assert_string_equal(match_spec(x, "2001:db8:1:1:ffff:ffff:ffff:ffff"), "-");

	x = &cfg->exports[4]; /* not on a byte boundary */
	assert_string_equal(match_spec(x, "10.8.0.0"), "10.8.0.0/13");
	assert_string_equal(match_spec(x, "10.15.255.255"), "10.8.0.0/13");
	assert_string_equal(match_spec(x, "10.16.0.0"), "-");
	assert_string_equal(match_spec(x, "10.7.255.255"), "-");
	assert_string_equal(match_spec(x, "192.168.1.0"), "192.168.1.0/31");
	assert_string_equal(match_spec(x, "192.168.1.1"), "192.168.1.0/31");
	assert_string_equal(match_spec(x, "192.168.1.2"), "-");

	x = &cfg->exports[5]; /* ::/0 holds the v4-mapped addresses too */
	assert_string_equal(match_spec(x, "::1"), "::/0");
	assert_string_equal(match_spec(x, "10.0.0.1"), "::/0");

	x = &cfg->exports[6];
	assert_string_equal(match_spec(x, "10.0.0.1"), "*");
	assert_string_equal(match_spec(x, "fe80::1"), "*");
	assert_null(gw_export_conf_match(x, (struct sockaddr *)&un)); /* neither v4 nor v6 */
	assert_null(gw_export_conf_match(x, NULL));

	x = &cfg->exports[7]; /* a v4-mapped rule admits plain IPv4 clients */
	assert_string_equal(match_spec(x, "172.16.5.5"), "::ffff:172.16.0.0/108");
	assert_string_equal(match_spec(x, "172.32.0.0"), "-");
	gw_config_free(cfg);
}

static void test_match_first(void **state)
{
	struct gw_config *cfg;
	const struct gw_client *c;
	const struct gw_export_conf *x;

	/* the first matching rule in line order wins, as in exports(5) */
	cfg = load_ok("/srv/data 127.0.0.1/32(rw,no_root_squash) 10.0.0.0/8(ro) *(ro,all_squash)\n"
		      "/srv/rev *(ro,all_squash) 10.0.0.0/8(rw)\n"
		      "/srv/none 10.0.0.0/8(rw)\n");
	x = &cfg->exports[0];
	c = match(x, "127.0.0.1");
	assert_non_null(c);
	assert_string_equal(c->spec, "127.0.0.1/32");
	assert_true(c->opts.rw);
	assert_false(c->opts.root_squash);
	c = match(x, "::ffff:127.0.0.1");
	assert_non_null(c);
	assert_string_equal(c->spec, "127.0.0.1/32");
	c = match(x, "10.9.9.9");
	assert_string_equal(c->spec, "10.0.0.0/8");
	assert_false(c->opts.rw);
	assert_false(c->opts.all_squash);
	c = match(x, "192.0.2.1");
	assert_string_equal(c->spec, "*");
	assert_true(c->opts.all_squash);
	c = match(x, "2001:db8::1");
	assert_string_equal(c->spec, "*");

	x = &cfg->exports[1];
	assert_string_equal(match_spec(x, "10.0.0.1"), "*");
	assert_false(match(x, "10.0.0.1")->opts.rw);

	x = &cfg->exports[2];
	assert_string_equal(match_spec(x, "10.0.0.1"), "10.0.0.0/8");
	assert_string_equal(match_spec(x, "11.0.0.1"), "-");
	gw_config_free(cfg);
}

static void test_squash(void **state)
{
	struct gw_client c = { .spec = "*" };
	struct gw_cred cred;

	c.opts = (struct gw_opts){ .root_squash = true, .anonuid = 99, .anongid = 98 };
	cred = (struct gw_cred){ .uid = 0, .gid = 0, .ngroups = 3, .groups = { 5, 0, 7 } };
	gw_client_squash(&c, &cred);
	assert_int_equal(cred.uid, 99);
	assert_int_equal(cred.gid, 98);
	assert_int_equal(cred.ngroups, 3);
	assert_int_equal(cred.groups[0], 5);
	assert_int_equal(cred.groups[1], 98);
	assert_int_equal(cred.groups[2], 7);

	cred = (struct gw_cred){ .uid = 1000, .gid = 1000, .ngroups = 1, .groups = { 27 } };
	gw_client_squash(&c, &cred);
	assert_int_equal(cred.uid, 1000);
	assert_int_equal(cred.gid, 1000);
	assert_int_equal(cred.groups[0], 27);

	c.opts.root_squash = false;
	cred = (struct gw_cred){ .uid = 0, .gid = 0, .ngroups = 1, .groups = { 0 } };
	gw_client_squash(&c, &cred);
	assert_int_equal(cred.uid, 0);
	assert_int_equal(cred.gid, 0);
	assert_int_equal(cred.groups[0], 0);

	c.opts.all_squash = true;
	cred = (struct gw_cred){ .uid = 1000, .gid = 1000, .ngroups = 2, .groups = { 1, 2 } };
	gw_client_squash(&c, &cred);
	assert_int_equal(cred.uid, 99);
	assert_int_equal(cred.gid, 98);
	assert_int_equal(cred.ngroups, 0);
}

/* ---------------------------------------------------------------- file syntax */

static void test_paths(void **state)
{
	struct gw_config *cfg;
	char longp[PATH_MAX + 16], text[PATH_MAX + 64];

	cfg = load_ok("\"/srv/my data\" *\n"
		      "/srv/tab\\011name\\040x *\n"
		      "\"/srv/q\\\"uote\\\\d\" *\n"
		      "//srv///slashes/// *\n"
		      "/srv/a\"b c\"d *\n"
		      "/ 10.0.0.1\n"
		      "/srv/hash#in-name *\n"
		      "\"/srv/#quoted\" *\n");
	assert_string_equal(cfg->exports[0].path, "/srv/my data");
	assert_string_equal(cfg->exports[1].path, "/srv/tab\tname x");
	assert_string_equal(cfg->exports[2].path, "/srv/q\"uote\\d");
	assert_string_equal(cfg->exports[3].path, "/srv/slashes");
	assert_string_equal(cfg->exports[4].path, "/srv/ab cd");
	assert_string_equal(cfg->exports[5].path, "/");
	assert_string_equal(cfg->exports[6].path, "/srv/hash#in-name");
	assert_string_equal(cfg->exports[7].path, "/srv/#quoted");
	gw_config_free(cfg);

	load_fails("\"srv/rel\" *\n", 1, "'srv/rel' is not an absolute path");
	load_fails("/srv/../etc *\n", 1, "'.' and '..' are not allowed");
	load_fails("/srv/./x *\n", 1, "'.' and '..' are not allowed");
	load_fails("\"/srv/open *\n", 1, "unterminated quote");
	load_fails("\"/srv/a\\q\" *\n", 1, "bad escape in quotes");
	load_fails("/srv/a\\q *\n", 1, "stray backslash");
	load_fails("/srv/a\\000 *\n", 1, "'\\000' is not an allowed character");
	load_fails("/srv/a\\777 *\n", 1, "'\\777' is not an allowed character");
	load_fails("/s 10.0.0.1\n//s/ *\n", 2, "/s: duplicate export (first at line 1)");

	memset(longp, 'a', sizeof(longp) - 1);
	longp[0] = '/';
	longp[PATH_MAX + 2] = '\0';
	snprintf(text, sizeof(text), "%s *\n", longp);
	load_fails(text, 1, "is longer than PATH_MAX");
}

static void test_comments(void **state)
{
	struct gw_config *cfg;

	cfg = load_ok("# lacunad.conf\n"
		      "\n"
		      "   \t  \n"
		      "  # indented comment\n"
		      "threads = 3 # trailing comment\n"
		      "\tlease_time\t=\t60\t\n"
		      "/srv/a 10.0.0.1(rw) # a comment\n"
		      "# /srv/commented-out *\n");
	assert_int_equal(cfg->threads, 3);
	assert_int_equal(cfg->lease_time, 60);
	assert_int_equal(cfg->nexports, 1);
	assert_int_equal(cfg->exports[0].line, 7);
	assert_true(cfg->exports[0].clients[0].opts.rw);
	gw_config_free(cfg);

	/* CRLF line ends, no newline at the end */
	cfg = load_ok("threads = 2\r\n\r\n/srv/a *(rw)\r\n/srv/b 10.0.0.1");
	assert_int_equal(cfg->threads, 2);
	assert_int_equal(cfg->nexports, 2);
	assert_int_equal(cfg->exports[1].line, 4);
	gw_config_free(cfg);

	/* '#' glued to a word is part of it */
	load_fails("/srv/a 10.0.0.1(rw)#note\n", 1, "malformed option list");
}

static void test_continuation_lines(void **state)
{
	struct gw_config *cfg;
	struct errs e;

	cfg = load_ok("/srv/data \\\n"
		      "    10.0.0.1(rw) \\\n"
		      "    10.0.0.2(ro)\n"
		      "/srv/b 10.0.0.3 \\  # a comment after the backslash\n"
		      "    10.0.0.4\n"
		      "threads = \\\n"
		      "  5\n");
	assert_int_equal(cfg->nexports, 2);
	assert_int_equal(cfg->exports[0].nclients, 2);
	assert_int_equal(cfg->exports[0].clients[0].line, 2);
	assert_int_equal(cfg->exports[0].clients[1].line, 3);
	assert_int_equal(cfg->exports[1].line, 4);
	assert_int_equal(cfg->exports[1].clients[1].line, 5);
	assert_int_equal(cfg->threads, 5);
	gw_config_free(cfg);

	/* an error on the third physical line of an export names that line */
	load_fails("/srv/data \\\n  10.0.0.1(rw) \\\n  10.0.0.2(rx)\n", 3, "unknown option 'rx'");
	/* errors after continued lines keep counting physical lines */
	load_fails("/srv/a \\\n  10.0.0.1 \\\n  10.0.0.2\nthreads = 0\n", 4, "threads: 0");
	/* a value on a continued line */
	load_fails("lease_time = \\\n  5\n/s *\n", 2, "lease_time: 5 is out of range");
	/* the break counts as a blank: a word cannot be split */
	load_fails("/srv/a 10.0.0.1(rw,\\\nno_root_squash)\n", 1, "malformed option list");
	/* a backslash in a comment continues nothing */
	cfg = load_ok("# comment \\\n/srv/a *\n");
	assert_int_equal(cfg->exports[0].line, 2);
	gw_config_free(cfg);
	/* a backslash inside quotes is not a continuation */
	cfg = (void *)1;
	assert_int_equal(load("\"/srv/a \\\n/srv/b *\n", &cfg, &e), -EINVAL);
	assert_int_equal(e.n, 1);
	check_err(&e, 0, 1, "unterminated quote");

	/* a continued last line */
	assert_int_equal(load("/srv/a * \\\n", &cfg, &e), -EINVAL);
	assert_int_equal(e.n, 1);
	check_err(&e, 0, 1, "backslash at the end of the file continues no line");
}

static void test_multiple_errors(void **state)
{
	struct gw_config *cfg = (void *)1;
	struct errs e;
	int rc;

	rc = load("threads = many\n"		 /* 1 */
		  "/srv/a 10.0.0.1(rw)\n"	 /* 2: fine */
		  "lease_time = 1\n"		 /* 3 */
		  "/srv/b host.example(rw) \\\n" /* 4 */
		  "   10.0.0.1(bogus,ro,rw)\n"	 /* 5: two errors */
		  "# comment\n"			 /* 6 */
		  "\n"				 /* 7 */
		  "/srv/a *\n"			 /* 8 */
		  "colour = blue\n",		 /* 9 */
		  &cfg, &e);
	assert_int_equal(rc, -EINVAL);
	assert_null(cfg);
	if (e.n != 7)
		print_errs(&e);
	assert_int_equal(e.n, 7);
	check_err(&e, 0, 1, "threads: 'many' is not a number");
	check_err(&e, 1, 3, "lease_time: 1 is out of range");
	check_err(&e, 2, 4, "/srv/b: 'host.example' is not an IP address");
	check_err(&e, 3, 5, "/srv/b: 10.0.0.1: unknown option 'bogus'");
	check_err(&e, 4, 5, "conflicting options 'ro' and 'rw'");
	check_err(&e, 5, 8, "/srv/a: duplicate export (first at line 2)");
	check_err(&e, 6, 9, "unknown setting 'colour'");
}

static void test_exports_together(void **state)
{
	struct gw_config *cfg;
	struct errs e;

	/* without a pseudo-root export, every export is at its path */
	cfg = load_ok("/srv/a *\n/srv/a/nested *\n/home *\n");
	assert_string_equal(cfg->exports[0].pseudo, "/srv/a");
	assert_string_equal(cfg->exports[1].pseudo, "/srv/a/nested");
	assert_string_equal(cfg->exports[2].pseudo, "/home");
	gw_config_free(cfg);

	/* fsid=root: that export is "/" and the others appear below it */
	cfg = load_ok("/srv/nfs/a *\n/srv/nfs *(fsid=root)\n/srv/nfs/b/c *(fsid=5)\n");
	assert_string_equal(cfg->exports[0].pseudo, "/a");
	assert_string_equal(cfg->exports[1].pseudo, "/");
	assert_string_equal(cfg->exports[2].pseudo, "/b/c");
	gw_config_free(cfg);

	/* "/" exported with fsid=root changes nothing */
	cfg = load_ok("/ 127.0.0.1(fsid=0)\n/srv *\n");
	assert_string_equal(cfg->exports[0].pseudo, "/");
	assert_string_equal(cfg->exports[1].pseudo, "/srv");
	gw_config_free(cfg);

	load_fails("/srv/nfs *(fsid=root)\n/srv/nfs2 *\n", 2,
		   "/srv/nfs2 is outside the pseudo-root export /srv/nfs (line 1)");
	load_fails("/a *(fsid=root)\n/b *(fsid=0)\n", 2,
		   "/b: a second pseudo-root export (fsid=root); the first is /a at line 1");
	load_fails("/a *(fsid=3)\n/b *(fsid=4)\n/c *(fsid=3)\n", 3,
		   "/c: fsid=3 is already used by /a (line 1)");

	assert_int_equal(load("/srv/a *\n/srv/b *\n/srv/a/ *(rw)\n/srv//b 10.0.0.1\n", &cfg, &e),
			 -EINVAL);
	assert_int_equal(e.n, 2);
	check_err(&e, 0, 3, "/srv/a: duplicate export (first at line 1)");
	check_err(&e, 1, 4, "/srv/b: duplicate export (first at line 2)");
}

static void test_empty(void **state)
{
	struct gw_config *cfg = (void *)1;
	struct errs e;

	assert_int_equal(load("", &cfg, &e), -EINVAL);
	assert_null(cfg);
	assert_int_equal(e.n, 1);
	check_err(&e, 0, 0, "no exports: add a line such as");

	load_fails("# only comments\n\n   \nthreads = 2\n", 0, "no exports");
	load_fails("\n\n\n", 0, "no exports");
}

static void test_long_lines(void **state)
{
	size_t cap = 3 * GW_LINE_MAX, n = 0;
	char *text = malloc(cap);
	struct gw_config *cfg;
	struct errs e;
	unsigned int i, lines;

	assert_non_null(text);
	/* 4000 clients on one physical line: about 60000 bytes */
	n += (size_t)snprintf(text + n, cap - n, "threads = 2\n/srv/wide");
	for (i = 0; i < 4000; i++)
		n += (size_t)snprintf(text + n, cap - n, " 10.%u.%u.%u(rw)", i >> 16,
				      (i >> 8) & 255, i & 255);
	n += (size_t)snprintf(text + n, cap - n, "\n");
	assert_true(n > 50000 && n < GW_LINE_MAX);
	cfg = load_ok(text);
	assert_int_equal(cfg->exports[0].nclients, 4000);
	assert_int_equal(cfg->exports[0].clients[3999].line, 2);
	assert_string_equal(match_spec(&cfg->exports[0], "10.0.15.159"), "10.0.15.159");
	gw_config_free(cfg);

	/* past GW_LINE_MAX: one error on the line, and reading goes on */
	n = (size_t)snprintf(text, cap, "# long line next\n/srv/long *");
	while (n < GW_LINE_MAX + 100)
		n += (size_t)snprintf(text + n, cap - n, " 10.0.0.1");
	n += (size_t)snprintf(text + n, cap - n, "\nthreads = 0\n/srv/ok *\n");
	assert_int_equal(load_buf(text, n, &cfg, &e), -EINVAL);
	assert_int_equal(e.n, 2);
	check_err(&e, 0, 2, "line too long (more than 65536 bytes)");
	check_err(&e, 1, 3, "threads: 0 is out of range");

	/* a logical line too long only through its continuations */
	n = (size_t)snprintf(text, cap, "/srv/long *");
	while (n < GW_LINE_MAX * 3 / 2)
		n += (size_t)snprintf(text + n, cap - n, " \\\n 10.0.0.1");
	n += (size_t)snprintf(text + n, cap - n, "\nbogus = 1\n");
	for (i = 0, lines = 0; i < n; i++)
		lines += text[i] == '\n';
	assert_int_equal(load_buf(text, n, &cfg, &e), -EINVAL);
	assert_int_equal(e.n, 2);
	check_err(&e, 0, 1, "line too long");
	check_err(&e, 1, lines, "unknown setting 'bogus'");
	free(text);
}

static void test_nul_and_files(void **state)
{
	static const char nul[] = "/srv/a *\nthreads\0 = 2\n/srv/b *\n";
	struct gw_config *cfg = (void *)1;
	struct errs e;
	char path[PATH_MAX + 32];

	assert_int_equal(load_buf(nul, sizeof(nul) - 1, &cfg, &e), -EINVAL);
	assert_int_equal(e.n, 1);
	check_err(&e, 0, 2, "NUL byte");

	memset(&e, 0, sizeof(e));
	snprintf(path, sizeof(path), "%s/missing.conf", tmpdir);
	assert_int_equal(gw_config_load(path, &cfg, collect, &e), -ENOENT);
	assert_null(cfg);
	assert_int_equal(e.n, 1);
	assert_non_null(strstr(e.msg[0], "missing.conf: open: No such file or directory"));

	memset(&e, 0, sizeof(e));
	assert_int_equal(gw_config_load(tmpdir, &cfg, collect, &e), -EISDIR);
	assert_int_equal(e.n, 1);
	assert_non_null(strstr(e.msg[0], ": read: Is a directory"));

	/* a file past GW_FILE_MAX is refused before it is parsed */
	memset(&e, 0, sizeof(e));
	write_conf("", 0);
	assert_int_equal(truncate(conf, GW_FILE_MAX + 1), 0);
	assert_int_equal(gw_config_load(conf, &cfg, collect, &e), -EFBIG);
	assert_null(cfg);
	assert_int_equal(e.n, 1);
	check_err(&e, 0, 0, "larger than 16777216 bytes");
	write_conf("", 0);
}

static void test_reload(void **state)
{
	struct gw_config *a, *b, *c = (void *)1;
	struct errs e;

	/* configs are independent: each can be freed while the other is used */
	a = load_ok("threads = 2\n/srv/a 10.0.0.0/8(rw)\n");
	b = load_ok("threads = 3\n/srv/b 10.0.0.0/8(ro)\n");
	gw_config_free(a);
	assert_int_equal(b->threads, 3);
	assert_string_equal(b->exports[0].path, "/srv/b");
	assert_false(match(&b->exports[0], "10.1.1.1")->opts.rw);

	/* a bad new file leaves nothing behind and the old one usable */
	assert_int_equal(load("threads = 0\n/srv/c *\n", &c, &e), -EINVAL);
	assert_null(c);
	assert_string_equal(b->exports[0].clients[0].spec, "10.0.0.0/8");
	gw_config_free(b);
	gw_config_free(NULL);
}

/* The example file of the source tree, and the manual's example of errors. */
static void test_examples(void **state)
{
	const char *top = getenv("top_srcdir");
	char path[PATH_MAX + 64], src[] = __FILE__, *cut;
	struct gw_config *cfg;
	struct errs e = { 0 };

	cut = strstr(src, "tests/unit/test_gw_config.c");
	if (top)
		snprintf(path, sizeof(path), "%s/gateway/lacunad.conf.example", top);
	else if (cut && src[0] == '/') {
		*cut = '\0';
		snprintf(path, sizeof(path), "%sgateway/lacunad.conf.example", src);
	} else {
		skip();
	}
	assert_int_equal(gw_config_load(path, &cfg, collect, &e), 0);
	assert_int_equal(e.n, 0);
	assert_int_equal(cfg->nexports, 2);
	assert_string_equal(cfg->exports[1].path, "/mnt/lacuna/iso images");
	assert_true(match(&cfg->exports[0], "10.20.3.4")->opts.root_squash);
	assert_true(match(&cfg->exports[0], "10.20.3.4")->opts.rw);
	assert_false(match(&cfg->exports[0], "::1")->opts.root_squash);
	assert_true(match(&cfg->exports[0], "192.0.2.1")->opts.all_squash);
	gw_config_free(cfg);

	assert_int_equal(load("threads = 0\n"
			      "/srv/data 10.0.0.0/8(rw,sync) \\\n"
			      "    build.example.com(rw)\n",
			      &cfg, &e),
			 -EINVAL);
	assert_int_equal(e.n, 3);
	check_err(&e, 0, 1, "threads: 0 is out of range (1..1024)");
	check_err(&e, 1, 2,
		  "/srv/data: 10.0.0.0/8: 'sync' is a Linux nfsd option that lacunad does not "
		  "take; remove it");
	check_err(&e, 2, 3,
		  "/srv/data: 'build.example.com' is not an IP address: host names, wildcards "
		  "and netgroups are not supported (lacunad looks up no names)");
}

/* ---------------------------------------------------------------- command line */

struct fixture_dir {
	char dir[PATH_MAX + 16];
	char file[PATH_MAX + 16];
};

static void make_dir(struct fixture_dir *d)
{
	snprintf(d->dir, sizeof(d->dir), "%s/exp", tmpdir);
	if (mkdir(d->dir, 0755) && errno != EEXIST)
		fail_msg("mkdir %s: %s", d->dir, strerror(errno));
	snprintf(d->file, sizeof(d->file), "%s/plain", tmpdir);
	write_conf("", 0);
	assert_int_equal(rename(conf, d->file), 0);
}

static void test_from_args(void **state)
{
	struct fixture_dir d;
	struct gw_config *cfg = (void *)1;
	const struct gw_export_conf *x;
	const struct gw_client *c;
	struct errs e = { 0 };
	char a[64], rel[PATH_MAX + 8], cwd[PATH_MAX];

	make_dir(&d);
	assert_int_equal(gw_config_from_args(d.dir, NULL, NULL, &cfg, collect, &e), 0);
	assert_int_equal(e.n, 0);
	assert_string_equal(cfg->source, "command line");
	listen_addr(cfg, a, sizeof(a));
	assert_string_equal(a, "127.0.0.1");
	assert_int_equal(listen_port(cfg), 2049);
	assert_int_equal(cfg->nexports, 1);
	x = &cfg->exports[0];
	assert_string_equal(x->path, d.dir);
	/* DIR is the root of the pseudo filesystem */
	assert_string_equal(x->pseudo, "/");
	assert_int_equal(x->nclients, 2);
	c = match(x, "127.0.0.1");
	assert_non_null(c);
	assert_true(c->opts.rw);
	assert_true(c->opts.root_squash);
	assert_true(c->opts.secure);
	assert_non_null(match(x, "127.255.0.9"));
	assert_non_null(match(x, "::ffff:127.0.0.1"));
	assert_non_null(match(x, "::1"));
	assert_null(match(x, "10.0.0.1"));
	assert_null(match(x, "::2"));
	assert_null(match(x, "128.0.0.1"));
	assert_true(cfg->threads >= 1);
	assert_int_equal(cfg->lease_time, 90);
	gw_config_free(cfg);

	/* options on top of rw; a relative DIR becomes absolute */
	assert_non_null(getcwd(cwd, sizeof(cwd)));
	assert_int_equal(chdir(tmpdir), 0);
	snprintf(rel, sizeof(rel), "./exp/");
	assert_int_equal(gw_config_from_args(rel, "no_root_squash,fsid=root", "[::1]:3000", &cfg,
					     collect, &e),
			 0);
	assert_int_equal(chdir(cwd), 0);
	x = &cfg->exports[0];
	assert_string_equal(x->path, d.dir);
	assert_string_equal(x->pseudo, "/");
	assert_int_equal(x->fsid_kind, GW_FSID_ROOT);
	assert_true(x->clients[1].opts.rw);
	assert_false(x->clients[1].opts.root_squash);
	assert_int_equal(cfg->listen.ss_family, AF_INET6);
	assert_int_equal(listen_port(cfg), 3000);
	gw_config_free(cfg);

	assert_int_equal(gw_config_from_args(d.dir, "ro", NULL, &cfg, collect, &e), 0);
	assert_false(cfg->exports[0].clients[0].opts.rw);
	gw_config_free(cfg);

	assert_int_equal(gw_config_from_args(d.dir, "insecure", NULL, &cfg, collect, &e), 0);
	assert_false(cfg->exports[0].clients[0].opts.secure);
	assert_false(cfg->exports[0].clients[1].opts.secure);
	assert_true(cfg->exports[0].clients[0].opts.rw);
	gw_config_free(cfg);

	assert_int_equal(gw_config_from_args(d.dir, "ro,sync", "host:1", &cfg, collect, &e),
			 -EINVAL);
	assert_null(cfg);
	assert_int_equal(e.n, 2);
	assert_non_null(strstr(e.msg[0], "command line: --listen: 'host'"));
	assert_non_null(strstr(e.msg[1], "command line: --export-options: 'sync' is a Linux"));

	memset(&e, 0, sizeof(e));
	assert_int_equal(gw_config_from_args(d.file, NULL, NULL, &cfg, collect, &e), -EINVAL);
	assert_int_equal(e.n, 1);
	assert_non_null(strstr(e.msg[0], "plain: not a directory"));

	memset(&e, 0, sizeof(e));
	assert_int_equal(gw_config_from_args("/nonexistent/dir", NULL, NULL, &cfg, collect, &e),
			 -EINVAL);
	assert_int_equal(e.n, 1);
	assert_string_equal(e.msg[0],
			    "command line: --export /nonexistent/dir: No such file or directory");
}

static void test_check_paths(void **state)
{
	struct fixture_dir d;
	struct gw_config *cfg;
	struct errs e = { 0 };
	char text[3 * PATH_MAX];

	make_dir(&d);
	snprintf(text, sizeof(text), "%s *\n%s *\n/nonexistent/x *\n", d.dir, d.file);
	cfg = load_ok(text);
	assert_int_equal(gw_config_check_paths(cfg, collect, &e), -ENOTDIR);
	assert_int_equal(e.n, 2);
	check_err(&e, 0, 2, "plain: not a directory");
	check_err(&e, 1, 3, "/nonexistent/x: stat: No such file or directory");
	gw_config_free(cfg);
}

#define ARGV(...) ((char *const[]){ "lacunad", __VA_ARGS__, NULL })
#define ARGC(...) ((int)(sizeof((const char *[]){ "lacunad", __VA_ARGS__ }) / sizeof(char *)))
#define CLI(cli, ...) gw_cli_parse(ARGC(__VA_ARGS__), ARGV(__VA_ARGS__), cli)

static void cli_fails(int rc, const struct gw_cli *cli, const char *what)
{
	if (rc != -EINVAL || !strstr(cli->err, what))
		fail_msg("rc %d, err '%s' (wanted '%s')", rc, cli->err, what);
}

static void test_cli(void **state)
{
	char *const none[] = { "lacunad", NULL };
	struct gw_cli cli;

	/* no option: the default configuration file */
	assert_int_equal(gw_cli_parse(1, none, &cli), 0);
	assert_string_equal(cli.config, GW_CONFIG_DEFAULT);
	assert_null(cli.export_dir);
	assert_null(gw_cli_value(&cli, "listen"));
	assert_null(gw_cli_value(&cli, "threads"));
	assert_null(gw_cli_value(&cli, "lease_time"));
	assert_null(gw_cli_value(&cli, "rdma"));
	assert_null(gw_cli_value(&cli, "rdma_port"));
	assert_int_equal(cli.log_level, -1);
	assert_false(cli.foreground || cli.help || cli.version);

	assert_int_equal(CLI(&cli, "--config", "/etc/x.conf"), 0);
	assert_string_equal(cli.config, "/etc/x.conf");
	assert_int_equal(CLI(&cli, "--config=/etc/y.conf"), 0);
	assert_string_equal(cli.config, "/etc/y.conf");
	assert_int_equal(CLI(&cli, "-c", "/a"), 0);
	assert_string_equal(cli.config, "/a");
	assert_int_equal(CLI(&cli, "-c/b", "-f"), 0);
	assert_string_equal(cli.config, "/b");
	assert_true(cli.foreground);

	assert_int_equal(CLI(&cli, "--export", "/srv", "--listen", "127.0.0.1:2050",
			     "--export-options", "ro,no_root_squash"),
			 0);
	assert_null(cli.config);
	assert_string_equal(cli.export_dir, "/srv");
	assert_string_equal(gw_cli_value(&cli, "listen"), "127.0.0.1:2050");
	assert_string_equal(cli.export_opts, "ro,no_root_squash");

	assert_int_equal(CLI(&cli, "--threads", "8", "--lease-time=30", "--rdma", "--foreground",
			     "--log-level", "debug"),
			 0);
	assert_string_equal(gw_cli_value(&cli, "threads"), "8");
	assert_string_equal(gw_cli_value(&cli, "lease_time"), "30");
	assert_string_equal(gw_cli_value(&cli, "rdma"), "on");
	assert_null(gw_cli_value(&cli, "rdma_port"));
	assert_true(cli.foreground);
	assert_int_equal(cli.log_level, LOG_DEBUG);
	assert_int_equal(CLI(&cli, "--rdma=20050", "--listen", "[::]:2049", "--"), 0);
	assert_string_equal(gw_cli_value(&cli, "rdma"), "on");
	assert_string_equal(gw_cli_value(&cli, "rdma_port"), "20050");
	/* the last of a repeated option wins */
	assert_int_equal(CLI(&cli, "--threads", "2", "--threads", "3"), 0);
	assert_string_equal(gw_cli_value(&cli, "threads"), "3");

	assert_int_equal(CLI(&cli, "--help"), 0);
	assert_true(cli.help);
	assert_int_equal(CLI(&cli, "-h", "--config", "/a", "--export", "/b"), 0);
	assert_true(cli.help);
	assert_int_equal(CLI(&cli, "--version"), 0);
	assert_true(cli.version);
	assert_int_equal(CLI(&cli, "-fV"), 0);
	assert_true(cli.version && cli.foreground);

	/* a flag takes the values of its setting */
	assert_int_equal(CLI(&cli, "--threads", "auto", "--metrics-listen", "none"), 0);
	assert_string_equal(gw_cli_value(&cli, "threads"), "auto");
	assert_string_equal(gw_cli_value(&cli, "metrics_listen"), "none");
	assert_int_equal(CLI(&cli, "--log-level", "debug"), 0);
	assert_int_equal(cli.log_level, LOG_DEBUG);
	assert_int_equal(CLI(&cli, "--list-settings"), 0);
	assert_true(cli.list_settings);

	cli_fails(CLI(&cli, "--config", "/a", "--export", "/b"), &cli,
		  "--config and --export are mutually exclusive");
	cli_fails(CLI(&cli, "--export", "/a", "--export", "/b"), &cli, "--export given twice");
	cli_fails(CLI(&cli, "--export-options", "rw"), &cli, "--export-options needs --export");
	cli_fails(CLI(&cli, "--export", "/a", "--export-options", "rw,bogus"), &cli,
		  "--export-options: rw,bogus: unknown option 'bogus'");
	cli_fails(CLI(&cli, "--listen", "example.org:2049"), &cli, "--listen: 'example.org'");
	cli_fails(CLI(&cli, "--listen", "1.2.3.4:0"), &cli, "--listen: port 0 is out of range");
	cli_fails(CLI(&cli, "--threads", "0"), &cli, "--threads: 0 is out of range (1..1024)");
	cli_fails(CLI(&cli, "--threads", "4x"), &cli, "--threads: '4x' is not a number");
	cli_fails(CLI(&cli, "--threads", "-4"), &cli, "--threads: -4 is negative");
	cli_fails(CLI(&cli, "--threads", "99999999999999999999"), &cli, "out of range");
	cli_fails(CLI(&cli, "--lease-time", "9"), &cli,
		  "--lease-time: 9 is out of range (10..3600)");
	cli_fails(CLI(&cli, "--rdma=0"), &cli, "--rdma: port 0 is out of range");
	cli_fails(CLI(&cli, "--rdma", "20050"), &cli,
		  "unexpected argument '20050' (write --rdma=20050)");
	cli_fails(CLI(&cli, "--log-level", "loud"), &cli, "--log-level: unknown log level 'loud'");
	cli_fails(CLI(&cli, "--foreground=yes"), &cli, "option '--foreground' takes no value");
	cli_fails(CLI(&cli, "--threads"), &cli, "option '--threads' needs a value");
	cli_fails(CLI(&cli, "--config="), &cli, "option '--config' needs a non-empty value");
	cli_fails(CLI(&cli, "-c"), &cli, "option '-c' needs a value");
	cli_fails(CLI(&cli, "--bogus"), &cli, "unknown option '--bogus'");
	cli_fails(CLI(&cli, "--conf", "/a"), &cli,
		  "unknown option '--conf'"); /* no abbreviations */
	cli_fails(CLI(&cli, "-x"), &cli, "unknown option '-x'");
	cli_fails(CLI(&cli, "-fx"), &cli, "unknown option '-x'");
	cli_fails(CLI(&cli, "/srv/data"), &cli, "unexpected argument '/srv/data'");
	cli_fails(CLI(&cli, "--", "-f"), &cli, "unexpected argument '-f'");
	cli_fails(CLI(&cli, "-"), &cli, "unexpected argument '-'");
}

static void test_cli_usage(void **state)
{
	char buf[16384] = "", line[128];
	FILE *f = fmemopen(buf, sizeof(buf) - 1, "w");
	size_t i;

	assert_non_null(f);
	gw_cli_usage(f);
	assert_int_equal(fclose(f), 0);
	assert_true(strlen(buf) < sizeof(buf) - 2);
	/* every flag of the table, and every key --set takes */
	for (i = 0; i < gw_settings_n; i++) {
		const struct gw_setting *s = &gw_settings[i];

		if (s->flag)
			snprintf(line, sizeof(line), "  --%s", s->flag);
		else if (s->flags & GW_SF_SET)
			snprintf(line, sizeof(line), " %s%s", s->name,
				 i + 1 < gw_settings_n ? "," : "\n");
		else
			continue;
		if (!strstr(buf, line))
			fail_msg("--help lacks '%s'", line);
	}
	assert_non_null(strstr(buf, "--list-settings"));
	assert_non_null(strstr(buf, "--set KEY=VALUE"));
	assert_non_null(strstr(buf, "usage: lacunad"));
	assert_non_null(strstr(buf, "--config FILE"));
	assert_non_null(strstr(buf, "--export DIR"));
	assert_non_null(strstr(buf, "--export-options OPTS"));
	assert_non_null(strstr(buf, "--listen ADDR[:PORT]"));
	assert_non_null(strstr(buf, "--threads N"));
	assert_non_null(strstr(buf, "--lease-time SECONDS"));
	assert_non_null(strstr(buf, "--rdma[=PORT]"));
	assert_non_null(strstr(buf, "--foreground"));
	assert_non_null(strstr(buf, "--log-level LEVEL"));
	assert_non_null(strstr(buf, "--help"));
	assert_non_null(strstr(buf, "--version"));
	assert_non_null(strstr(buf, "lacunad.conf(5)"));
}

static void test_from_cli(void **state)
{
	struct fixture_dir d;
	struct gw_config *cfg = (void *)1;
	struct gw_cli cli;
	struct errs e = { 0 };
	char a[64];

	make_dir(&d);
	write_conf("threads = 2\nlease_time = 60\nlisten = 10.0.0.1:2000\nrdma_port = 1\n"
		   "/srv/a *\n",
		   strlen("threads = 2\nlease_time = 60\nlisten = 10.0.0.1:2000\n"
			  "rdma_port = 1\n/srv/a *\n"));
	/* the file alone */
	assert_int_equal(CLI(&cli, "-c", conf), 0);
	assert_int_equal(gw_config_from_cli(&cli, &cfg, collect, &e), 0);
	assert_int_equal(cfg->threads, 2);
	assert_int_equal(cfg->lease_time, 60);
	assert_false(cfg->rdma);
	gw_config_free(cfg);

	/* the command line overrides the file, on every (re)load */
	assert_int_equal(CLI(&cli, "-c", conf, "--threads", "5", "--lease-time", "120", "--listen",
			     "[::]:2100", "--rdma=2200", "--log-level", "notice"),
			 0);
	assert_int_equal(gw_config_from_cli(&cli, &cfg, collect, &e), 0);
	assert_int_equal(cfg->threads, 5);
	assert_int_equal(cfg->lease_time, 120);
	assert_int_equal(cfg->listen.ss_family, AF_INET6);
	assert_int_equal(listen_port(cfg), 2100);
	assert_true(cfg->rdma);
	assert_int_equal(cfg->rdma_port, 2200);
	assert_int_equal(cfg->log_level, LOG_NOTICE);
	gw_config_free(cfg);

	/* threads = auto on the command line is one per CPU, as in the file */
	assert_int_equal(CLI(&cli, "-c", conf, "--threads", "auto", "--legacy-handles", "accept",
			     "--grace", "off", "--state-dir", "/st", "--set", "idle_timeout=7"),
			 0);
	assert_int_equal(gw_config_from_cli(&cli, &cfg, collect, &e), 0);
	assert_true(cfg->threads >= 1);
	assert_true(cfg->legacy_handles);
	assert_false(cfg->grace);
	assert_string_equal(cfg->state_dir, "/st");
	assert_int_equal(cfg->limits.idle_timeout, 7);
	assert_int_equal(cfg->lease_time, 60); /* the file's */
	gw_config_free(cfg);

	/* the one-export mode */
	assert_int_equal(CLI(&cli, "--export", d.dir, "--export-options", "ro", "--listen",
			     "127.0.0.1:2300", "--threads", "1"),
			 0);
	assert_int_equal(gw_config_from_cli(&cli, &cfg, collect, &e), 0);
	assert_int_equal(e.n, 0);
	listen_addr(cfg, a, sizeof(a));
	assert_string_equal(a, "127.0.0.1");
	assert_int_equal(listen_port(cfg), 2300);
	assert_int_equal(cfg->threads, 1);
	assert_false(cfg->exports[0].clients[0].opts.rw);
	/* one-export mode keeps its statistics in its state directory */
	assert_string_equal(cfg->stats_file, GW_STATE_DIR_DEFAULT "/127.0.0.1-2300/stats");
	assert_int_equal(cfg->metrics.ss_family, 0);
	gw_config_free(cfg);
	assert_int_equal(CLI(&cli, "--export", d.dir, "--stats-file", "/run/s", "--metrics-listen",
			     "127.0.0.1"),
			 0);
	assert_int_equal(gw_config_from_cli(&cli, &cfg, collect, &e), 0);
	assert_string_equal(cfg->stats_file, "/run/s");
	assert_int_equal(cfg->metrics.ss_family, AF_INET);
	assert_int_equal(ntohs(((struct sockaddr_in *)&cfg->metrics)->sin_port),
			 GW_METRICS_PORT_DEFAULT);
	gw_config_free(cfg);
	assert_int_equal(CLI(&cli, "--export", d.dir, "--stats-file", "none"), 0);
	assert_int_equal(gw_config_from_cli(&cli, &cfg, collect, &e), 0);
	assert_null(cfg->stats_file);
	gw_config_free(cfg);
	assert_int_equal(CLI(&cli, "--export", d.dir, "--stats-file", "rel"), -EINVAL);
	assert_int_equal(CLI(&cli, "--export", d.dir, "--metrics-listen", "nohost:1"), -EINVAL);

	/* metrics_listen in the file */
	write_conf("metrics_listen = [::1]:9000\n/srv/a *\n",
		   strlen("metrics_listen = [::1]:9000\n/srv/a *\n"));
	assert_int_equal(CLI(&cli, "-c", conf), 0);
	assert_int_equal(gw_config_from_cli(&cli, &cfg, collect, &e), 0);
	assert_int_equal(cfg->metrics.ss_family, AF_INET6);
	assert_null(cfg->stats_file);
	gw_config_free(cfg);

	/* a file with errors */
	write_conf("threads = 0\n/srv/a *\n", strlen("threads = 0\n/srv/a *\n"));
	assert_int_equal(CLI(&cli, "-c", conf), 0);
	assert_int_equal(gw_config_from_cli(&cli, &cfg, collect, &e), -EINVAL);
	assert_null(cfg);
	assert_int_equal(e.n, 1);
	check_err(&e, 0, 1, "threads: 0 is out of range");
}


/* ---------------------------------------------------------------- xprtsec */

/* gw_xprtsec_parse() of s must fail with a message holding what. */
static void xprtsec_fails(const char *s, const char *what)
{
	char why[GW_XPRTSEC_WHY_MAX] = "";
	uint8_t set = 0xee;

	if (gw_xprtsec_parse(s, &set, why) != -EINVAL || !strstr(why, what))
		fail_msg("'%s': '%s' (wanted -EINVAL and '%s')", s, why, what);
	assert_int_equal(set, 0xee); /* left alone */
}

static void test_xprtsec_parse(void **state)
{
	static const struct {
		const char *in;
		uint8_t set;
		const char *out;
	} ok[] = {
		{ "none", GW_XPRTSEC_NONE, "none" },
		{ "tls", GW_XPRTSEC_TLS, "tls" },
		{ "mtls", GW_XPRTSEC_MTLS, "mtls" },
		{ "none:tls", GW_XPRTSEC_NONE | GW_XPRTSEC_TLS, "none:tls" },
		{ "tls:mtls", GW_XPRTSEC_TLS | GW_XPRTSEC_MTLS, "tls:mtls" },
		{ "mtls:none", GW_XPRTSEC_MTLS | GW_XPRTSEC_NONE, "none:mtls" },
		{ "none:tls:mtls", GW_XPRTSEC_ALL, "none:tls:mtls" },
		{ "mtls:tls:none", GW_XPRTSEC_ALL, "none:tls:mtls" },
	};
	char why[GW_XPRTSEC_WHY_MAX], buf[GW_XPRTSEC_STR_MAX];
	uint8_t set;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		if (gw_xprtsec_parse(ok[i].in, &set, why))
			fail_msg("'%s' refused: %s", ok[i].in, why);
		assert_int_equal(set, ok[i].set);
		assert_string_equal(gw_xprtsec_format(set, buf), ok[i].out);
	}
	/* empty lists and words */
	xprtsec_fails("", "empty list");
	xprtsec_fails(":", "empty mode");
	xprtsec_fails("tls:", "empty mode");
	xprtsec_fails(":tls", "empty mode");
	xprtsec_fails("none::tls", "empty mode");
	/* duplicates */
	xprtsec_fails("tls:tls", "mode 'tls' listed twice");
	xprtsec_fails("none:tls:mtls:none", "mode 'none' listed twice");
	/* unknown words: nfsd's spelling only, lower case */
	xprtsec_fails("TLS", "unknown mode 'TLS'");
	xprtsec_fails("ssl", "unknown mode 'ssl'");
	xprtsec_fails("tls:krb5", "unknown mode 'krb5'");
	xprtsec_fails("tls,mtls", "unknown mode 'tls,mtls'");
	xprtsec_fails("tls ", "unknown mode 'tls '");
	/* names of one connection's security */
	assert_string_equal(gw_xprtsec_name(GW_XPRTSEC_NONE), "none");
	assert_string_equal(gw_xprtsec_name(GW_XPRTSEC_TLS), "tls");
	assert_string_equal(gw_xprtsec_name(GW_XPRTSEC_MTLS), "mtls");
	assert_string_equal(gw_xprtsec_name(0), "?");
	assert_string_equal(gw_xprtsec_name(GW_XPRTSEC_ALL), "?");
	assert_string_equal(gw_xprtsec_format(0, buf), "");
}

static void test_xprtsec_option(void **state)
{
	struct gw_config *cfg;

	(void)state;
	cfg = load_ok("/s 10.0.0.1(xprtsec=tls) 10.0.0.2(xprtsec=none:mtls) 10.0.0.3\n"
		      "/t -xprtsec=mtls 10.0.0.1 10.0.0.2(xprtsec=none)\n");
	assert_int_equal(opts_of(cfg, 0, 0)->xprtsec, GW_XPRTSEC_TLS);
	assert_int_equal(opts_of(cfg, 0, 1)->xprtsec, GW_XPRTSEC_NONE | GW_XPRTSEC_MTLS);
	assert_int_equal(opts_of(cfg, 0, 2)->xprtsec, 0); /* not given */
	/* -OPTIONS give it to the line's clients, a client's own list overrides */
	assert_int_equal(opts_of(cfg, 1, 0)->xprtsec, GW_XPRTSEC_MTLS);
	assert_int_equal(opts_of(cfg, 1, 1)->xprtsec, GW_XPRTSEC_NONE);
	/* the default: none without a certificate, every transport with one */
	assert_null(cfg->tls_cert);
	assert_int_equal(gw_client_xprtsec(cfg, &cfg->exports[0].clients[2]), GW_XPRTSEC_NONE);
	assert_int_equal(gw_client_xprtsec(cfg, &cfg->exports[0].clients[0]), GW_XPRTSEC_TLS);
	cfg->tls_cert = strdup("/etc/cert.pem");
	assert_non_null(cfg->tls_cert);
	assert_int_equal(gw_client_xprtsec(cfg, &cfg->exports[0].clients[2]), GW_XPRTSEC_ALL);
	assert_int_equal(gw_client_xprtsec(cfg, &cfg->exports[0].clients[0]), GW_XPRTSEC_TLS);
	gw_config_free(cfg);

	/* the same list twice in one option list is no conflict */
	cfg = load_ok("/s *(xprtsec=tls,xprtsec=tls)\n");
	gw_config_free(cfg);

	load_fails("/s *(xprtsec)\n", 1, "/s: *: option 'xprtsec' needs a value");
	load_fails("/s *(xprtsec=)\n", 1, "xprtsec: empty list");
	load_fails("/s *(xprtsec=tls:)\n", 1, "xprtsec: 'tls:': empty mode");
	load_fails("/s *(xprtsec=tls:tls)\n", 1, "xprtsec: 'tls:tls': mode 'tls' listed twice");
	load_fails("/s *(xprtsec=krb5)\n", 1, "xprtsec: 'krb5': unknown mode 'krb5'");
	load_fails("/s *(xprtsec=tls,xprtsec=none)\n", 1,
		   "conflicting options 'xprtsec=tls' and 'xprtsec=none'");
	load_fails("/s -xprtsec=bad *\n", 1, "unknown mode 'bad'");
}

/* Write a file of tmpdir named name; its path in path. */
static void tmp_file(const char *name, char *path, size_t len)
{
	FILE *f;

	snprintf(path, len, "%s/%s", tmpdir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("-----BEGIN NOTHING-----\n", f);
	assert_int_equal(fclose(f), 0);
}

/* gw_config_from_cli() of the file text with args must fail naming each of what[]. */
static void from_cli_fails(const char *text, const char *const *what, int n)
{
	struct gw_config *cfg = (void *)1;
	struct gw_cli cli;
	struct errs e = { 0 };
	int i;

	write_conf(text, strlen(text));
	assert_int_equal(CLI(&cli, "-c", conf), 0);
	assert_int_equal(gw_config_from_cli(&cli, &cfg, collect, &e), -EINVAL);
	assert_null(cfg);
	if (e.n != n) {
		print_errs(&e);
		fail_msg("'%s': %d messages, wanted %d", text, e.n, n);
	}
	for (i = 0; i < n; i++) {
		if (strncmp(e.msg[i], conf, strlen(conf)) || !strstr(e.msg[i], what[i])) {
			print_errs(&e);
			fail_msg("message %d: wanted '%s'", i, what[i]);
		}
	}
}

static void test_tls_settings(void **state)
{
	char cert[PATH_MAX + 16], key[PATH_MAX + 16], ca[PATH_MAX + 16];
	char text[5 * PATH_MAX], sub[PATH_MAX + 64];
	struct gw_config *cfg = (void *)1;
	struct fixture_dir d;
	struct gw_cli cli;
	struct errs e = { 0 };

	(void)state;
	tmp_file("cert.pem", cert, sizeof(cert));
	tmp_file("key.pem", key, sizeof(key));
	tmp_file("ca.pem", ca, sizeof(ca));

	/* defaults: no TLS, and the limits of handshakes */
	cfg = load_ok("/s *\n");
	assert_null(cfg->tls_cert);
	assert_null(cfg->tls_key);
	assert_null(cfg->tls_ca);
	assert_int_equal(cfg->tls_handshake_timeout, 10);
	assert_int_equal(cfg->tls_handshakes_max, 64);
	gw_config_free(cfg);
	load_fails("tls_handshake_timeout = 0\n/s *\n", 1, "out of range (1..600)");
	load_fails("tls_handshakes_max = 0\n/s *\n", 1, "out of range (1..65536)");
	load_fails("tls_cert = cert.pem\n/s *\n", 1, "absolute");

	/* a complete set: every export's rules default to none:tls:mtls */
	snprintf(text, sizeof(text),
		 "tls_cert = %s\ntls_key = %s\ntls_ca = %s\n"
		 "/s *\n/t *(xprtsec=mtls)\n/u *(xprtsec=tls)\n",
		 cert, key, ca);
	write_conf(text, strlen(text));
	assert_int_equal(CLI(&cli, "-c", conf), 0);
	assert_int_equal(gw_config_from_cli(&cli, &cfg, collect, &e), 0);
	assert_int_equal(e.n, 0);
	assert_string_equal(cfg->tls_cert, cert);
	assert_string_equal(cfg->tls_key, key);
	assert_string_equal(cfg->tls_ca, ca);
	assert_int_equal(gw_client_xprtsec(cfg, &cfg->exports[0].clients[0]), GW_XPRTSEC_ALL);
	gw_config_free(cfg);

	/* the pairs */
	snprintf(text, sizeof(text), "tls_cert = %s\n/s *\n", cert);
	from_cli_fails(text, (const char *const[]){ "tls_cert is set but tls_key is not" }, 1);
	snprintf(text, sizeof(text), "tls_key = %s\n/s *\n", key);
	from_cli_fails(text, (const char *const[]){ "tls_key is set but tls_cert is not" }, 1);
	snprintf(text, sizeof(text), "tls_ca = %s\n/s *\n", ca);
	from_cli_fails(text, (const char *const[]){ "tls_ca is set but tls_cert is not" }, 1);
	/* files that cannot be read */
	snprintf(text, sizeof(text), "tls_cert = %s/missing.pem\ntls_key = %s\n/s *\n", tmpdir,
		 key);
	from_cli_fails(text,
		       (const char *const[]){ "tls_cert " /* path */, "open: No such file" }, 1);
	snprintf(text, sizeof(text), "tls_cert = %s\ntls_key = %s\ntls_ca = %s\n/s *\n", cert, key,
		 tmpdir);
	from_cli_fails(text, (const char *const[]){ "not a regular file" }, 1);
	/* exports asking for TLS without a certificate, or mtls alone without a CA */
	from_cli_fails("/s 10.0.0.1(xprtsec=tls) 10.0.0.2(xprtsec=none)\n/t *(xprtsec=none:mtls)\n",
		       (const char *const[]){ ":1: /s 10.0.0.1: xprtsec=tls needs a certificate",
					      ":2: /t *: xprtsec=none:mtls needs a certificate" },
		       2);
	snprintf(text, sizeof(text),
		 "tls_cert = %s\ntls_key = %s\n/s *(xprtsec=mtls)\n/t *(xprtsec=tls:mtls)\n", cert,
		 key);
	from_cli_fails(text,
		       (const char *const[]){ ":3: /s *: xprtsec=mtls admits no client without "
					      "tls_ca" },
		       1);

	/* the command line's certificate counts: the file's exports check against it */
	write_conf("/s *(xprtsec=tls)\n", strlen("/s *(xprtsec=tls)\n"));
	assert_int_equal(CLI(&cli, "-c", conf, "--tls-cert", cert, "--tls-key", key), 0);
	assert_int_equal(gw_config_from_cli(&cli, &cfg, collect, &e), 0);
	assert_string_equal(cfg->tls_cert, cert);
	gw_config_free(cfg);
	/* --tls-cert none turns the file's certificate off */
	snprintf(text, sizeof(text), "tls_cert = %s\ntls_key = %s\n/s *\n", cert, key);
	write_conf(text, strlen(text));
	assert_int_equal(CLI(&cli, "-c", conf, "--tls-cert", "none", "--tls-key", "none"), 0);
	assert_int_equal(gw_config_from_cli(&cli, &cfg, collect, &e), 0);
	assert_null(cfg->tls_cert);
	assert_int_equal(gw_client_xprtsec(cfg, &cfg->exports[0].clients[0]), GW_XPRTSEC_NONE);
	gw_config_free(cfg);

	/* one-export mode: --xprtsec is the export's xprtsec= */
	make_dir(&d);
	assert_int_equal(CLI(&cli, "--export", d.dir, "--xprtsec", "none:tls", "--tls-cert", cert,
			     "--tls-key", key),
			 0);
	assert_string_equal(cli.xprtsec, "none:tls");
	assert_int_equal(gw_config_from_cli(&cli, &cfg, collect, &e), 0);
	assert_int_equal(opts_of(cfg, 0, 0)->xprtsec, GW_XPRTSEC_NONE | GW_XPRTSEC_TLS);
	assert_int_equal(opts_of(cfg, 0, 1)->xprtsec, GW_XPRTSEC_NONE | GW_XPRTSEC_TLS);
	assert_true(opts_of(cfg, 0, 0)->rw);
	gw_config_free(cfg);
	/* with --export-options, after them */
	assert_int_equal(CLI(&cli, "--export", d.dir, "--export-options", "ro", "--xprtsec", "none"),
			 0);
	assert_int_equal(gw_config_from_cli(&cli, &cfg, collect, &e), 0);
	assert_int_equal(opts_of(cfg, 0, 0)->xprtsec, GW_XPRTSEC_NONE);
	assert_false(opts_of(cfg, 0, 0)->rw);
	gw_config_free(cfg);
	/* tls without a certificate: an error, once for the export */
	memset(&e, 0, sizeof(e));
	assert_int_equal(CLI(&cli, "--export", d.dir, "--xprtsec", "tls"), 0);
	assert_int_equal(gw_config_from_cli(&cli, &cfg, collect, &e), -EINVAL);
	assert_int_equal(e.n, 1);
	snprintf(sub, sizeof(sub), "command line: %s 127.0.0.0/8: xprtsec=tls needs", d.dir);
	assert_non_null(strstr(e.msg[0], sub));
	/* bad usage, refused when parsed */
	cli_fails(CLI(&cli, "--export", d.dir, "--xprtsec", "tls:ssl"), &cli,
		  "--xprtsec: 'tls:ssl': unknown mode 'ssl'");
	cli_fails(CLI(&cli, "--export", d.dir, "--xprtsec", "tls:tls"), &cli, "listed twice");
	cli_fails(CLI(&cli, "--export", d.dir, "--xprtsec="), &cli, "needs a non-empty value");
	cli_fails(CLI(&cli, "--xprtsec", "tls"), &cli, "--xprtsec needs --export");
	cli_fails(CLI(&cli, "--export", d.dir, "--tls-cert", "cert.pem"), &cli, "absolute");
	unlink(cert);
	unlink(key);
	unlink(ca);
}

static int setup(void **state)
{
	const char *base = getenv("TMPDIR");

	snprintf(tmpdir, sizeof(tmpdir), "%s/test_gw_config.XXXXXX", base ? base : "/tmp");
	if (!mkdtemp(tmpdir))
		return -1;
	snprintf(conf, sizeof(conf), "%s/t.conf", tmpdir);
	return 0;
}

static int teardown(void **state)
{
	char path[PATH_MAX + 16];

	unlink(conf);
	snprintf(path, sizeof(path), "%s/plain", tmpdir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/exp", tmpdir);
	rmdir(path);
	return rmdir(tmpdir);
}

/* The limits (gw_limits.h): defaults, settings, errors, --set. */
static void test_limits(void **state)
{
	struct gw_config *cfg;
	struct gw_cli cli;
	char why[256]; /* GW_WHY_MAX */

	(void)state;
	cfg = load_ok("/s *\n");
	assert_int_equal(cfg->limits.max_conns, 0); /* auto */
	assert_int_equal(cfg->limits.max_conns_client, GW_CONNS_CLIENT_DEFAULT);
	assert_int_equal(cfg->limits.idle_timeout, GW_IDLE_TIMEOUT_DEFAULT);
	assert_int_equal(cfg->limits.conn_reply_bytes, GW_CONN_REPLY_BYTES_DEFAULT);
	/* the client table follows RAM: 1024 per GiB, at least 4096; half per address */
	assert_int_equal(cfg->limits.max_clients, 0); /* auto */
	assert_int_equal(cfg->limits.max_sessions, 0);
	assert_int_equal(cfg->limits.max_clients_addr, 0);
	assert_int_equal(cfg->limits.unconfirmed_timeout, GW_UNCONFIRMED_TIMEOUT_DEFAULT);
	assert_int_equal(gw_limits_max_clients(&cfg->limits, 24ull << 30), 24576);
	assert_int_equal(gw_limits_max_sessions(&cfg->limits, 24ull << 30), 24576);
	assert_int_equal(gw_limits_max_clients_addr(&cfg->limits, 24ull << 30), 12288);
	assert_int_equal(gw_limits_max_clients(&cfg->limits, 1ull << 30), GW_CLIENTS_AUTO_MIN);
	assert_int_equal(gw_limits_max_clients_addr(&cfg->limits, 1ull << 30),
			 GW_CLIENTS_AUTO_MIN / 2);
	assert_true(gw_limits_ram() > 0);
	assert_int_equal(cfg->limits.stop_timeout, GW_STOP_TIMEOUT_DEFAULT);
	/* auto: half of what the reserve leaves, never below the minimum */
	assert_int_equal(gw_limits_max_conns(&cfg->limits, 20000), (20000 - GW_FD_RESERVE) / 2);
	assert_int_equal(gw_limits_max_conns(&cfg->limits, 100), GW_CONNS_MIN);
	/*
	 * the fd budget: of 4608 fds, 512 reserved, (4608 - 512) / 2 = 2048
	 * connections, a quarter of the 2048 left = 512 cached files (1024
	 * fds), and the 1024 fds after them / 3 = 341 opens
	 */
	assert_int_equal(cfg->limits.max_cached_files, 0); /* auto */
	assert_int_equal(gw_limits_max_conns(&cfg->limits, 4608), 2048);
	assert_int_equal(gw_limits_max_cached_files(&cfg->limits, 4608), 512);
	assert_int_equal(gw_limits_max_opens(&cfg->limits, 4608), 341);
	assert_true(2048 + 512 * GW_CACHED_FILE_FDS + 341 * GW_OPEN_FDS <= 4608 - GW_FD_RESERVE);
	/* 1024 fds: 256 connections, 64 cached files, (256 - 128) / 3 = 42 opens */
	assert_int_equal(gw_limits_max_cached_files(&cfg->limits, 1024), 64);
	assert_int_equal(gw_limits_max_opens(&cfg->limits, 1024), 42);
	/* 700 fds: 94 connections, 94 / 4 = 23 cached files, (94 - 46) / 3 = 16 opens */
	assert_int_equal(gw_limits_max_cached_files(&cfg->limits, 700), 23);
	assert_int_equal(gw_limits_max_opens(&cfg->limits, 700), 16);
	/* the minimums where nothing is left, the cache's maximum where plenty is */
	assert_int_equal(gw_limits_max_cached_files(&cfg->limits, 100), GW_CACHED_FILES_MIN);
	assert_int_equal(gw_limits_max_opens(&cfg->limits, 100), GW_OPENS_MIN);
	assert_int_equal(gw_limits_max_cached_files(&cfg->limits, 1048576), GW_CACHED_FILES_MAX);
	assert_int_equal(gw_limits_max_opens(&cfg->limits, 1048576),
			 (1048576 - GW_FD_RESERVE - (1048576 - GW_FD_RESERVE) / 2 -
			  GW_CACHED_FILES_MAX * GW_CACHED_FILE_FDS) /
				 GW_OPEN_FDS);
	gw_config_free(cfg);

	/* set by hand: max_opens takes what max_cached_files leaves; 0 is auto */
	cfg = load_ok("max_connections = 100\nmax_cached_files = 200\n/s *\n");
	assert_int_equal(gw_limits_max_cached_files(&cfg->limits, 4608), 200);
	assert_int_equal(gw_limits_max_opens(&cfg->limits, 4608), (4608 - 512 - 100 - 400) / 3);
	gw_config_free(cfg);
	cfg = load_ok("max_cached_files = 0\nmax_opens = 50\n/s *\n");
	assert_int_equal(cfg->limits.max_cached_files, 0);
	assert_int_equal(gw_limits_max_opens(&cfg->limits, 4608), 50);
	gw_config_free(cfg);
	load_fails("max_cached_files = 0x\n/s *\n", 1, "max_cached_files");
	/* set by hand: sessions and the per-address share follow max_clients unless set */
	cfg = load_ok("max_clients = 100\n/s *\n");
	assert_int_equal(gw_limits_max_clients(&cfg->limits, 24ull << 30), 100);
	assert_int_equal(gw_limits_max_sessions(&cfg->limits, 24ull << 30), 100);
	assert_int_equal(gw_limits_max_clients_addr(&cfg->limits, 24ull << 30), 50);
	gw_config_free(cfg);
	cfg = load_ok("max_clients = auto\nmax_clients_per_address = 7\nmax_sessions = 9\n"
		      "unconfirmed_timeout = 5\n/s *\n");
	assert_int_equal(gw_limits_max_clients_addr(&cfg->limits, 1ull << 30), 7);
	assert_int_equal(gw_limits_max_sessions(&cfg->limits, 1ull << 30), 9);
	assert_int_equal(cfg->limits.unconfirmed_timeout, 5);
	gw_config_free(cfg);
	load_fails("unconfirmed_timeout = 0\n/s *\n", 1, "unconfirmed_timeout");

	cfg = load_ok("max_connections = 200\nmax_connections_per_client = 50\n"
		      "idle_timeout = 0\nrecord_timeout = 3\nsend_timeout = 4\nstop_timeout = 30\n"
		      "max_requests_per_connection = 8\nmax_reply_bytes_per_connection = 1M\n"
		      "max_requests_per_client = 32\nmax_records_per_client = 2\n/s *\n");
	assert_int_equal(cfg->limits.max_conns, 200);
	assert_int_equal(gw_limits_max_conns(&cfg->limits, 20000), 200);
	assert_int_equal(cfg->limits.max_conns_client, 50);
	assert_int_equal(cfg->limits.idle_timeout, 0);
	assert_int_equal(cfg->limits.record_timeout, 3);
	assert_int_equal(cfg->limits.send_timeout, 4);
	assert_int_equal(cfg->limits.stop_timeout, 30);
	assert_int_equal(cfg->limits.conn_requests, 8);
	assert_int_equal(cfg->limits.conn_reply_bytes, 1 << 20);
	assert_int_equal(cfg->limits.client_requests, 32);
	assert_int_equal(cfg->limits.client_records, 2);
	gw_config_free(cfg);

	load_fails("max_connections = 2\n/s *\n", 1, "max_connections: 2 is out of range");
	load_fails("max_connections = lots\n/s *\n", 1, "not a number");
	load_fails("max_reply_bytes_per_connection = 1K\n/s *\n", 1, "out of range");
	load_fails("idle_timeout = 5s\n/s *\n", 1, "junk after the digits");
	load_fails("stop_timeout = 0\n/s *\n", 1, "stop_timeout: 0 is out of range");
	load_fails("idle-timeout = 5\n/s *\n", 1, "did you mean idle_timeout?");
	load_fails("send_timeout = 1\n/s *\nsend_timeout = 2\n", 3,
		   "send_timeout set twice (first at line 1)");

	assert_int_equal(gw_setting_check(setting("max_connections"), "auto", why), 0);
	assert_int_equal(gw_setting_find("no_such_limit", strlen("no_such_limit")), -1);

	assert_int_equal(CLI(&cli, "--export", "/tmp", "--set", "max_connections=64", "--set",
			     "idle_timeout=5"),
			 0);
	assert_int_equal(cli.nsets, 2);
	cli_fails(CLI(&cli, "--export", "/tmp", "--set", "threads=4"), &cli,
		  "'threads' is not a limit");
	cli_fails(CLI(&cli, "--export", "/tmp", "--set", "idle_timeout"), &cli, "is not KEY=VALUE");
	cli_fails(CLI(&cli, "--export", "/tmp", "--set", "idle_timeout=-1"), &cli,
		  "--set: -1 is negative");
}

/* ---------------------------------------------------------------- the settings table */

/* Every row: a default it takes, and a config that starts from the defaults. */
static void test_table_defaults(void **state)
{
	struct gw_config *cfg, zero;
	char why[256];
	size_t i;

	(void)state;
	assert_true(gw_settings_n > 0 && gw_settings_n <= GW_SETTINGS_MAX);
	for (i = 0; i < gw_settings_n; i++) {
		const struct gw_setting *s = &gw_settings[i];

		if (gw_setting_check(i, s->def, why))
			fail_msg("%s: its default '%s' is refused: %s", s->name, s->def, why);
		assert_non_null(s->value);
		assert_non_null(s->help);
		/* names are unique and lower case, as the file and --set write them */
		assert_int_equal(gw_setting_find(s->name, strlen(s->name)), (int)i);
		assert_int_equal(strspn(s->name, "abcdefghijklmnopqrstuvwxyz0123456789_"),
				 strlen(s->name));
	}
	memset(&zero, 0, sizeof(zero));
	assert_int_equal(gw_settings_default(&zero), 0);
	assert_int_equal(zero.listen_len, sizeof(struct sockaddr_in));
	assert_false(zero.listen_has_port); /* a default is not written */
	assert_int_equal(zero.threads, 0);  /* auto, settled at load */
	gw_settings_free(&zero);
	assert_null(zero.state_dir);

	/* the table's defaults are those the rest of lacunad knows by name */
	cfg = load_ok("/s *\n");
	assert_int_equal(cfg->port, GW_PORT_DEFAULT);
	assert_int_equal(cfg->rdma_port, GW_RDMA_PORT_DEFAULT);
	assert_int_equal(cfg->lease_time, GW_LEASE_DEFAULT);
	assert_string_equal(cfg->state_dir, GW_STATE_DIR_DEFAULT);
	assert_int_equal(cfg->max_record, GW_RECORD_DEFAULT);
	assert_true(cfg->copy_sync_max == GW_COPY_SYNC_DEFAULT);
	assert_int_equal(cfg->log_level, GW_LOG_DEFAULT);
	assert_int_equal(cfg->drc_entries, GW_DRC_ENTRIES_DEFAULT);
	assert_false(cfg->legacy_handles);
	assert_int_equal(cfg->metrics.ss_family, 0);
	assert_int_equal(cfg->limits.max_conns_client, GW_CONNS_CLIENT_DEFAULT);
	assert_int_equal(cfg->limits.max_rdma_conns, GW_RDMA_CONNS_DEFAULT);
	assert_int_equal(cfg->limits.max_rdma_conns_client, GW_RDMA_CONNS_CLIENT_DEFAULT);
	assert_int_equal(cfg->limits.idle_timeout, GW_IDLE_TIMEOUT_DEFAULT);
	assert_int_equal(cfg->limits.record_timeout, GW_RECORD_TIMEOUT_DEFAULT);
	assert_int_equal(cfg->limits.send_timeout, GW_SEND_TIMEOUT_DEFAULT);
	assert_int_equal(cfg->limits.stop_timeout, GW_STOP_TIMEOUT_DEFAULT);
	assert_int_equal(cfg->limits.conn_requests, GW_CONN_REQUESTS_DEFAULT);
	assert_int_equal(cfg->limits.conn_reply_bytes, GW_CONN_REPLY_BYTES_DEFAULT);
	assert_int_equal(cfg->limits.client_records, GW_CLIENT_RECORDS_DEFAULT);
	assert_int_equal(cfg->limits.client_requests, GW_CLIENT_REQUESTS_DEFAULT);
	assert_int_equal(cfg->limits.max_unconfirmed, GW_UNCONFIRMED_DEFAULT);
	assert_int_equal(cfg->limits.unconfirmed_timeout, GW_UNCONFIRMED_TIMEOUT_DEFAULT);
	assert_int_equal(cfg->limits.max_reply_cache, GW_REPLY_CACHE_DEFAULT);
	assert_int_equal(cfg->limits.max_opens_client, GW_OPENS_CLIENT_DEFAULT);
	assert_int_equal(cfg->limits.max_lock_owners, GW_LOCK_OWNERS_DEFAULT);
	assert_int_equal(cfg->limits.max_lock_owners_client, GW_LOCK_OWNERS_CLIENT_DEFAULT);
	assert_int_equal(cfg->limits.max_locks, GW_LOCKS_DEFAULT);
	assert_int_equal(cfg->limits.max_locks_client, GW_LOCKS_CLIENT_DEFAULT);
	assert_int_equal(cfg->limits.max_conns, 0);
	assert_int_equal(cfg->limits.max_clients, 0);
	assert_int_equal(cfg->limits.max_clients_addr, 0);
	assert_int_equal(cfg->limits.max_sessions, 0);
	assert_int_equal(cfg->limits.max_cached_files, 0);
	assert_int_equal(cfg->limits.max_opens, 0);
	gw_config_free(cfg);
}

/*
 * Every number and size: its ends taken, one past them refused with the
 * range, in the file, on the command line (its flag or --set) and by the
 * table alike.
 */
static void test_table_ranges(void **state)
{
	char text[256], what[256], val[32], why[256], arg[300];
	struct gw_config *cfg;
	struct gw_cli cli;
	size_t i;

	(void)state;
	for (i = 0; i < gw_settings_n; i++) {
		const struct gw_setting *s = &gw_settings[i];
		uint64_t lo = s->min, hi = s->max;

		if (s->type == GW_ST_PORT) {
			lo = 1;
			hi = 65535;
		} else if (s->type != GW_ST_UINT && s->type != GW_ST_SIZE &&
			   s->type != GW_ST_SIZE64) {
			continue;
		}
		/* both ends */
		snprintf(text, sizeof(text), "%s = %llu\n%s = %llu\n/s *\n", s->name,
			 (unsigned long long)hi,
			 strcmp(s->name, "lease_time") ? "lease_time" : "port",
			 strcmp(s->name, "lease_time") ? 3600ull : 2049ull);
		cfg = load_ok(text);
		gw_config_free(cfg);
		snprintf(val, sizeof(val), "%llu", (unsigned long long)lo);
		assert_int_equal(gw_setting_check(i, val, why), 0);
		/* past them */
		snprintf(val, sizeof(val), "%llu", (unsigned long long)hi + 1);
		snprintf(text, sizeof(text), "%s = %s\n/s *\n", s->name, val);
		snprintf(what, sizeof(what), "%s: %s is out of range (%llu..%llu)", s->name, val,
			 (unsigned long long)lo, (unsigned long long)hi);
		load_fails(text, 1, what);
		assert_int_equal(gw_setting_check(i, val, why), -ERANGE);
		if (lo > 0) {
			snprintf(val, sizeof(val), "%llu", (unsigned long long)lo - 1);
			snprintf(text, sizeof(text), "%s = %s\n/s *\n", s->name, val);
			snprintf(what, sizeof(what), "%s: %s is out of range", s->name, val);
			load_fails(text, 1, what);
		}
		snprintf(val, sizeof(val), "%llu", (unsigned long long)hi + 1);
		snprintf(what, sizeof(what), "%s is out of range (%llu..%llu)", val,
			 (unsigned long long)lo, (unsigned long long)hi);
		if (s->flags & GW_SF_SET) {
			snprintf(arg, sizeof(arg), "%s=%s", s->name, val);
			cli_fails(CLI(&cli, "--set", arg), &cli, what);
			assert_non_null(strstr(cli.err, "--set: "));
		} else if (s->flag) {
			snprintf(arg, sizeof(arg), "--%s%s%s", s->flag, s->flag_arg ? "=" : "",
				 s->flag_arg ? val : "");
			cli_fails(CLI(&cli, arg), &cli, what);
			snprintf(arg, sizeof(arg), "--%s: ", s->flag);
			assert_non_null(strstr(cli.err, arg));
		}
	}
	/* a setting taken by --set or a flag only as its own */
	cli_fails(CLI(&cli, "--set", "lease_time=60"), &cli, "'lease_time' is not a limit");
	cli_fails(CLI(&cli, "--rdma=auto"), &cli, "--rdma: port 'auto' is not a number");
	cli_fails(CLI(&cli, "--legacy-handles", "maybe"), &cli,
		  "--legacy-handles: 'maybe' is neither accept nor refuse");
	cli_fails(CLI(&cli, "--stats-file", "rel"), &cli,
		  "--stats-file: 'rel' is not an absolute path");
}

/* What a reload does with each setting: the table's reload rule, as lacunad had it. */
struct warns {
	int n;
	char msg[8][256];
};

static void keep_warn(void *arg, const char *msg)
{
	struct warns *w = arg;

	if (w->n < 8)
		snprintf(w->msg[w->n], sizeof(w->msg[0]), "%s", msg);
	w->n++;
}

/* A value of row s other than its default. */
static const char *other_value(const struct gw_setting *s, char *buf, size_t len)
{
	switch (s->type) {
	case GW_ST_BOOL:
		return strcmp(s->def, "on") ? "on" : "off";
	case GW_ST_CHOICE:
		return strcmp(s->def, s->choice[0]) ? s->choice[0] : s->choice[1];
	case GW_ST_PORT:
		return "1234";
	case GW_ST_UINT:
	case GW_ST_SIZE:
	case GW_ST_SIZE64:
		snprintf(buf, len, "%llu", (unsigned long long)s->max);
		return buf;
	case GW_ST_PATH:
		return "/srv/elsewhere";
	case GW_ST_LISTEN:
		return "127.0.0.2:1234";
	case GW_ST_LOG_LEVEL:
		return "debug";
	}
	return NULL;
}

static void test_table_reload(void **state)
{
	/* the settings a reload does not apply, as lacunad has always had them */
	static const char *const restart[] = { "listen",    "port",	  "rdma",
					       "rdma_port", "threads",	  "grace",
					       "state_dir", "max_record", "metrics_listen" };
	char text[512], buf[32];
	size_t i, j;

	(void)state;
	for (i = 0; i < gw_settings_n; i++) {
		const struct gw_setting *s = &gw_settings[i];
		struct gw_config *old, *cfg, *want;
		bool kept = false;
		struct warns w = { 0 };

		for (j = 0; j < sizeof(restart) / sizeof(restart[0]); j++)
			kept |= !strcmp(restart[j], s->name);
		assert_int_equal(s->reload, kept ? GW_RELOAD_RESTART : GW_RELOAD_APPLY);

		old = load_ok("/s *\n");
		snprintf(text, sizeof(text), "%s = %s\n/s *\n", s->name,
			 other_value(s, buf, sizeof(buf)));
		cfg = load_ok(text);
		want = load_ok(kept ? "/s *\n" : text);
		gw_config_keep_start(cfg, old, keep_warn, &w);
		if (w.n != kept) {
			fail_msg("%s: %d messages (%s), wanted %d", s->name, w.n,
				 w.n ? w.msg[0] : "", kept);
		}
		if (kept)
			assert_non_null(strstr(w.msg[0], "reload: "));
		/* the value in force: the old one when kept, else the new one */
		assert_int_equal(cfg->listen_len, want->listen_len);
		assert_memory_equal(&cfg->listen, &want->listen, want->listen_len);
		assert_int_equal(cfg->threads, want->threads);
		assert_int_equal(cfg->rdma, want->rdma);
		assert_int_equal(cfg->rdma_port, want->rdma_port);
		assert_int_equal(cfg->grace, want->grace);
		assert_string_equal(cfg->state_dir, want->state_dir);
		assert_int_equal(cfg->max_record, want->max_record);
		assert_int_equal(cfg->metrics_len, want->metrics_len);
		assert_int_equal(cfg->lease_time, want->lease_time);
		assert_int_equal(cfg->log_level, want->log_level);
		assert_true(cfg->copy_sync_max == want->copy_sync_max);
		assert_int_equal(cfg->drc_entries, want->drc_entries);
		assert_int_equal(cfg->legacy_handles, want->legacy_handles);
		assert_memory_equal(&cfg->limits, &want->limits, sizeof(cfg->limits));
		gw_config_free(want);
		gw_config_free(cfg);
		gw_config_free(old);
	}

	/* the messages lacunad has always logged; one for rdma and rdma_port */
	{
		struct gw_config *old = load_ok("threads = 2\n/s *\n"), *cfg;
		struct warns w = { 0 };

		cfg = load_ok("threads = 3\ngrace = off\nrdma = on\nrdma_port = 1\n"
			      "state_dir = /x\nlisten = 127.0.0.2\n/s *\n");
		gw_config_keep_start(cfg, old, keep_warn, &w);
		assert_int_equal(w.n, 5);
		assert_string_equal(w.msg[0],
				    "reload: listen (and port) change at the next restart");
		assert_string_equal(w.msg[1],
				    "reload: rdma and rdma_port change at the next restart");
		assert_string_equal(w.msg[2], "reload: threads stays 2 until lacunad is restarted");
		assert_string_equal(w.msg[3], "reload: grace applies at the next start");
		assert_string_equal(
			w.msg[4],
			"reload: state_dir stays /var/lib/lacunad until lacunad is restarted");
		assert_int_equal(cfg->threads, 2);
		assert_true(cfg->grace);
		gw_config_free(cfg);
		gw_config_free(old);
	}
}

/* The manual's table: a row per setting, in the table's order. */
static void test_table_man(void **state)
{
	char *buf = NULL, *p, row[128];
	size_t len = 0, i;
	FILE *f = open_memstream(&buf, &len);

	(void)state;
	assert_non_null(f);
	gw_settings_write_man(f);
	assert_int_equal(fclose(f), 0);
	p = buf;
	for (i = 0; i < gw_settings_n; i++) {
		snprintf(row, sizeof(row), "\n| `%s` |", gw_settings[i].name);
		p = strstr(p, row);
		if (!p)
			fail_msg("no row for %s, or out of order", gw_settings[i].name);
	}
	assert_non_null(strstr(buf, "| `threads` | `N \\| auto` | `auto` | 1 to 1024 | restart |"));
	assert_non_null(
		strstr(buf, "| `max_record` | `BYTES` | `1056768` | 16K to 64M | restart |"));
	assert_non_null(strstr(
		buf, "| `idle_timeout` | `SECONDS` | `360` | 0 to 86400 | reload | `--set` |"));
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),	cmocka_unit_test(test_settings),
		cmocka_unit_test(test_setting_errors),	cmocka_unit_test(test_numbers),
		cmocka_unit_test(test_options_each),	cmocka_unit_test(test_option_errors),
		cmocka_unit_test(test_default_options), cmocka_unit_test(test_client_specs),
		cmocka_unit_test(test_match_prefixes),	cmocka_unit_test(test_match_first),
		cmocka_unit_test(test_squash),		cmocka_unit_test(test_paths),
		cmocka_unit_test(test_comments),	cmocka_unit_test(test_continuation_lines),
		cmocka_unit_test(test_multiple_errors), cmocka_unit_test(test_exports_together),
		cmocka_unit_test(test_empty),		cmocka_unit_test(test_long_lines),
		cmocka_unit_test(test_nul_and_files),	cmocka_unit_test(test_reload),
		cmocka_unit_test(test_examples),	cmocka_unit_test(test_from_args),
		cmocka_unit_test(test_check_paths),	cmocka_unit_test(test_cli),
		cmocka_unit_test(test_cli_usage),	cmocka_unit_test(test_from_cli),
		cmocka_unit_test(test_limits),		cmocka_unit_test(test_table_defaults),
		cmocka_unit_test(test_table_ranges),	cmocka_unit_test(test_table_reload),
		cmocka_unit_test(test_table_man),	cmocka_unit_test(test_xprtsec_parse),
		cmocka_unit_test(test_xprtsec_option),	cmocka_unit_test(test_tls_settings),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
