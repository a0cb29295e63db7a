// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Reading lacunad.conf (docs/lacunad.conf.5.md): lines, words and
 * settings lines "key = value" (export lines are gw_conf_exports.c's; the
 * settings' values are the settings table's, config/gw_settings.c), and
 * the one-export configuration of the command line.
 *
 * Operation: the file is read whole (at most GW_FILE_MAX bytes). Each
 * physical line loses its comment (a '#' outside quotes at the start of a
 * line or after a blank) and, if it then ends in a backslash, is joined to
 * the next one with a space, making a logical line of at most
 * GW_LINE_MAX bytes. A table of segments remembers on which physical line
 * each part of a logical line began, so that every message names the line
 * where the offending word is written. Words are split on blanks; double
 * quotes group blanks into a word, and backslash escapes (\NNN octal
 * anywhere, \\ and \" inside quotes) are decoded in place. After an error
 * the rest of that line is still checked when it can be, and reading goes
 * on with the next line; any error discards the whole configuration.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gw_settings.h"
#include "gw_parse.h"
#include "gw_xprtsec.h"

static bool is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v';
}

static unsigned int line_at(const struct gw_loader *ld, const char *p)
{
	size_t off = (size_t)(p - ld->buf), i;
	unsigned int line = ld->nsegs ? ld->segs[0].line : 0;

	for (i = 0; i < ld->nsegs && ld->segs[i].off <= off; i++)
		line = ld->segs[i].line;
	return line;
}

static struct gw_config *config_new(const char *source)
{
	struct gw_config *cfg = calloc(1, sizeof(*cfg));

	if (!cfg)
		return NULL;
	cfg->source = strdup(source);
	if (!cfg->source || gw_settings_default(cfg)) {
		gw_config_free(cfg);
		return NULL;
	}
	return cfg;
}

void gw_config_free(struct gw_config *cfg)
{
	size_t i;

	if (!cfg)
		return;
	for (i = 0; i < cfg->nexports; i++)
		gw_export_conf_free(&cfg->exports[i]);
	free(cfg->exports);
	gw_settings_free(cfg);
	free(cfg->source);
	free(cfg);
}

void gw_settings_settle(struct gw_config *cfg)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	if (cfg->threads)
		return;
	cfg->threads = n < 1 ? 1 : n > GW_THREADS_MAX ? GW_THREADS_MAX : (unsigned int)n;
}

/* ---------------------------------------------------------------- words */

/* \NNN: the byte, -1 if s does not start with three octal digits, -2 if > 0377. */
static int octal3(const char *s)
{
	int i, v = 0;

	for (i = 0; i < 3; i++) {
		if (s[i] < '0' || s[i] > '7')
			return -1;
		v = v * 8 + (s[i] - '0');
	}
	return v > 0377 ? -2 : v;
}

/* Words: double quotes group blanks, \NNN anywhere, \\ and \" inside quotes. */
int gw_next_word(struct gw_loader *ld, char **pp, char **word, unsigned int *line)
{
	char *r = *pp, *w, *next;
	bool quoted = false;

	while (is_blank(*r))
		r++;
	if (!*r) {
		*pp = r;
		return 0;
	}
	*word = w = r;
	*line = line_at(ld, r);
	for (;;) {
		char c = *r;
		int v;

		if (!c || (quoted && c == '\\' && !r[1])) {
			if (quoted) {
				gw_err_at(&ld->err, *line, "unterminated quote");
				return -EINVAL;
			}
			break;
		}
		if (!quoted && is_blank(c))
			break;
		if (c == '"') {
			quoted = !quoted;
			r++;
			continue;
		}
		if (c != '\\') {
			*w++ = c;
			r++;
			continue;
		}
		v = octal3(r + 1);
		if (v == 0 || v == -2) {
			gw_err_at(&ld->err, line_at(ld, r), "'\\%.3s' is not an allowed character",
				  r + 1);
			return -EINVAL;
		}
		if (v > 0) {
			*w++ = (char)v;
			r += 4;
		} else if (quoted && (r[1] == '\\' || r[1] == '"')) {
			*w++ = r[1];
			r += 2;
		} else {
			gw_err_at(&ld->err, line_at(ld, r),
				  quoted ? "bad escape in quotes (use \\\\, \\\" or \\NNN octal)"
					 : "stray backslash (outside quotes only \\NNN octal "
					   "escapes are allowed)");
			return -EINVAL;
		}
	}
	next = *r ? r + 1 : r;
	*w = '\0';
	*pp = next;
	return 1;
}

/* ---------------------------------------------------------------- settings */

static void parse_setting(struct gw_loader *ld, char *p)
{
	char *key = p, *value, *extra, why[GW_WHY_MAX], alt[48];
	unsigned int kline = line_at(ld, p), vline, xline, *first;
	size_t klen;
	int s, rc;

	while ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
	       *p == '_' || *p == '-')
		p++;
	klen = (size_t)(p - key);
	if (klen == 0) {
		gw_err_at(&ld->err, kline,
			  "expected 'key = value' or an export path starting with '/'");
		return;
	}
	while (is_blank(*p))
		p++;
	if (*p != '=') {
		gw_err_at(&ld->err, kline, "expected '=' after '%.*s'", (int)klen, key);
		return;
	}
	key[klen] = '\0';
	p++;
	s = gw_setting_find(key, klen);
	if (s < 0) {
		size_t i;

		snprintf(alt, sizeof(alt), "%s", key);
		for (i = 0; alt[i]; i++)
			alt[i] = alt[i] == '-' ? '_' : alt[i];
		if (klen < sizeof(alt) && gw_setting_find(alt, klen) >= 0)
			gw_err_at(&ld->err, kline, "unknown setting '%s' (did you mean %s?)", key,
				  alt);
		else
			gw_err_at(&ld->err, kline, "unknown setting '%.64s'", key);
		return;
	}
	rc = gw_next_word(ld, &p, &value, &vline);
	if (rc < 0)
		return;
	if (rc == 0) {
		gw_err_at(&ld->err, kline, "%s: missing value", key);
		return;
	}
	rc = gw_next_word(ld, &p, &extra, &xline);
	if (rc < 0)
		return;
	if (rc > 0) {
		gw_err_at(&ld->err, xline, "%s: unexpected '%.64s' after the value", key, extra);
		return;
	}
	first = &ld->set_line[s];
	if (*first) {
		gw_err_at(&ld->err, kline, "%s set twice (first at line %u)", key, *first);
		return;
	}
	rc = gw_setting_set(ld->cfg, (size_t)s, value, why);
	if (rc == -ENOMEM) {
		ld->fatal = rc;
		return;
	}
	if (rc) {
		gw_err_at(&ld->err, vline, "%s: %s", key, why);
		return;
	}
	*first = kline;
}

/* ---------------------------------------------------------------- lines */

static void parse_line(struct gw_loader *ld)
{
	char *p = ld->buf;

	ld->buf[ld->len] = '\0';
	while (is_blank(*p))
		p++;
	if (!*p)
		return;
	if (*p == '/' || *p == '"') {
		ld->export_lines++;
		gw_parse_export(ld, p);
	} else {
		parse_setting(ld, p);
	}
}

/*
 * Cut the comment off a physical line and tell whether it continues on
 * the next one; returns the length left.
 */
static size_t strip_line(const char *l, size_t n, bool *cont)
{
	bool quoted = false;
	size_t i;

	for (i = 0; i < n; i++) {
		if (quoted) {
			if (l[i] == '\\' && i + 1 < n)
				i++;
			else if (l[i] == '"')
				quoted = false;
		} else if (l[i] == '"') {
			quoted = true;
		} else if (l[i] == '#' && (i == 0 || is_blank(l[i - 1]))) {
			break;
		}
	}
	n = i;
	while (n && is_blank(l[n - 1]))
		n--;
	*cont = !quoted && n && l[n - 1] == '\\';
	return *cont ? n - 1 : n;
}

static int append(struct gw_loader *ld, const char *l, size_t n, unsigned int line)
{
	if (ld->nsegs == ld->segcap) {
		size_t ncap = ld->segcap ? ld->segcap * 2 : 8;
		void *p = realloc(ld->segs, ncap * sizeof(*ld->segs));

		if (!p)
			return -ENOMEM;
		ld->segs = p;
		ld->segcap = ncap;
	}
	if (ld->len)
		ld->buf[ld->len++] = ' ';
	ld->segs[ld->nsegs++] = (struct gw_seg){ .off = ld->len, .line = line };
	memcpy(ld->buf + ld->len, l, n);
	ld->len += n;
	return 0;
}

static int parse_text(struct gw_loader *ld, const char *data, size_t size)
{
	size_t pos = 0;
	unsigned int lineno = 0;

	while (pos < size && !ld->fatal) {
		unsigned int first = lineno + 1;
		bool cont, bad = false, too_long = false, export = false;

		ld->len = 0;
		ld->nsegs = 0;
		do {
			const char *l = data + pos, *nl = memchr(l, '\n', size - pos);
			size_t n = nl ? (size_t)(nl - l) : size - pos;

			pos += n + (nl ? 1 : 0);
			lineno++;
			if (n && l[n - 1] == '\r')
				n--;
			if (lineno == first) {
				size_t b = 0;

				while (b < n && is_blank(l[b]))
					b++;
				export = b < n && (l[b] == '/' || l[b] == '"');
			}
			if (memchr(l, '\0', n)) {
				gw_err_at(&ld->err, lineno, "NUL byte in the line");
				bad = true;
			}
			n = strip_line(l, n, &cont);
			if (bad || too_long)
				continue;
			if (ld->len + 1 + n > GW_LINE_MAX)
				too_long = true;
			else if (append(ld, l, n, lineno))
				return -ENOMEM;
		} while (cont && pos < size);
		if (cont)
			gw_err_at(&ld->err, lineno,
				  "backslash at the end of the file continues no line");
		if (too_long)
			gw_err_at(&ld->err, first, "line too long (more than %d bytes)",
				  GW_LINE_MAX);
		if (too_long || bad)
			ld->export_lines += export; /* no "no exports" on top */
		else
			parse_line(ld);
	}
	return ld->fatal;
}

/* ---------------------------------------------------------------- checks */

/* The line where the setting named key was given, 0: not given. */
static unsigned int line_of(const struct gw_loader *ld, const char *key)
{
	return ld->set_line[gw_setting_find(key, strlen(key))];
}

static int finish(struct gw_loader *ld)
{
	struct gw_config *cfg = ld->cfg;
	unsigned int port_line = line_of(ld, "port");

	if (port_line) {
		struct sockaddr_in *in = (struct sockaddr_in *)&cfg->listen;
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&cfg->listen;
		uint16_t *port = cfg->listen.ss_family == AF_INET ? &in->sin_port : &in6->sin6_port;

		if (cfg->listen_has_port && ntohs(*port) != cfg->port)
			gw_err_at(&ld->err, port_line,
				  "port = %u conflicts with the port of listen (line %u)",
				  cfg->port, line_of(ld, "listen"));
		else
			*port = htons(cfg->port);
	}
	gw_settings_settle(cfg);
	if (!ld->export_lines)
		gw_err_at(&ld->err, 0, "no exports: add a line such as '/srv/data 127.0.0.1(rw)'");
	return gw_check_exports(cfg, &ld->err);
}

/* ---------------------------------------------------------------- RPC-with-TLS */

/* A file the TLS engine will read: it must be a regular file lacunad can open. */
static void check_tls_file(struct gw_err *e, const char *key, const char *path)
{
	struct stat st;
	int fd;

	if (!path)
		return;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		gw_err_at(e, 0, "%s %s: open: %s", key, path, strerror(errno));
		return;
	}
	if (fstat(fd, &st))
		gw_err_at(e, 0, "%s %s: fstat: %s", key, path, strerror(errno));
	else if (!S_ISREG(st.st_mode))
		gw_err_at(e, 0, "%s %s: not a regular file", key, path);
	close(fd);
}

int gw_config_check_tls(const struct gw_config *cfg, struct gw_err *e)
{
	char buf[GW_XPRTSEC_STR_MAX];
	unsigned int before = e->count;
	size_t i, j;

	if (cfg->tls_cert && !cfg->tls_key)
		gw_err_at(e, 0, "tls_cert is set but tls_key is not: give the certificate's "
				"private key too (tls_key, --tls-key)");
	if (cfg->tls_key && !cfg->tls_cert)
		gw_err_at(e, 0, "tls_key is set but tls_cert is not: give the certificate too "
				"(tls_cert, --tls-cert)");
	if (cfg->tls_ca && !cfg->tls_cert)
		gw_err_at(e, 0, "tls_ca is set but tls_cert is not: mutual TLS needs the "
				"server's certificate and key too (tls_cert, tls_key)");
	check_tls_file(e, "tls_cert", cfg->tls_cert);
	check_tls_file(e, "tls_key", cfg->tls_key);
	check_tls_file(e, "tls_ca", cfg->tls_ca);
	for (i = 0; i < cfg->nexports; i++) {
		const struct gw_export_conf *exp = &cfg->exports[i];
		unsigned int said = 0; /* sets already reported for this export, one bit each */

		for (j = 0; j < exp->nclients; j++) {
			const struct gw_client *c = &exp->clients[j];
			uint8_t set = c->opts.xprtsec;

			if (said & (1u << set))
				continue;
			said |= 1u << set;
			if ((set & (GW_XPRTSEC_TLS | GW_XPRTSEC_MTLS)) && !cfg->tls_cert)
				gw_err_at(e, c->line, "%s %s: xprtsec=%s needs a certificate: set "
						      "tls_cert and tls_key (--tls-cert, --tls-key)",
					  exp->path, c->spec, gw_xprtsec_format(set, buf));
			else if (set == GW_XPRTSEC_MTLS && !cfg->tls_ca)
				gw_err_at(e, c->line, "%s %s: xprtsec=mtls admits no client without "
						      "tls_ca, the CAs client certificates are "
						      "verified against (--tls-ca)",
					  exp->path, c->spec);
		}
	}
	return e->count > before ? -EINVAL : 0;
}

/* ---------------------------------------------------------------- entry points */

static int read_file(const char *path, char **data, size_t *size, struct gw_err *e)
{
	size_t cap = 0, n = 0;
	char *buf = NULL;
	int fd, rc = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		rc = -errno;
		gw_err_at(e, 0, "open: %s", strerror(-rc));
		return rc;
	}
	for (;;) {
		ssize_t r;

		if (n == cap) {
			size_t ncap = cap ? cap * 2 : 16384;
			void *p;

			if (cap > GW_FILE_MAX) {
				gw_err_at(e, 0, "larger than %d bytes", GW_FILE_MAX);
				rc = -EFBIG;
				goto out_free;
			}
			p = realloc(buf, ncap);
			if (!p) {
				rc = -ENOMEM;
				goto out_free;
			}
			buf = p;
			cap = ncap;
		}
		r = read(fd, buf + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			rc = -errno;
			gw_err_at(e, 0, "read: %s", strerror(-rc));
			goto out_free;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	if (n > GW_FILE_MAX) {
		gw_err_at(e, 0, "larger than %d bytes", GW_FILE_MAX);
		rc = -EFBIG;
		goto out_free;
	}
	close(fd);
	*data = buf;
	*size = n;
	return 0;
out_free:
	free(buf);
	close(fd);
	return rc;
}

int gw_config_load(const char *path, struct gw_config **out, gw_err_fn *err_fn, void *arg)
{
	struct gw_loader ld = { .err = { .fn = err_fn, .arg = arg, .file = path } };
	char *data = NULL;
	size_t size = 0;
	int rc;

	*out = NULL;
	rc = read_file(path, &data, &size, &ld.err);
	if (rc)
		return rc;
	rc = -ENOMEM;
	ld.cfg = config_new(path);
	if (!ld.cfg)
		goto out_free_data;
	ld.buf = malloc(GW_LINE_MAX + 1);
	if (!ld.buf)
		goto out_free_cfg;
	rc = parse_text(&ld, data, size);
	if (rc == 0)
		rc = finish(&ld);
	if (rc == 0 && ld.err.count)
		rc = -EINVAL;
	if (rc)
		goto out_free_cfg;
	*out = ld.cfg;
	ld.cfg = NULL;
out_free_cfg:
	gw_config_free(ld.cfg);
	free(ld.buf);
	free(ld.segs);
out_free_data:
	free(data);
	return rc;
}

int gw_config_from_args(const char *dir, const char *opts, const char *listen,
			struct gw_config **out, gw_err_fn *err_fn, void *arg)
{
	static const char *const loopback[] = { "127.0.0.0/8", "::1" };
	struct gw_err e = { .fn = err_fn, .arg = arg, .file = "command line" };
	struct gw_fsid fsid = { .kind = GW_FSID_NONE };
	struct gw_config *cfg;
	struct gw_export_conf *exp;
	struct gw_opts o;
	char why[GW_WHY_MAX], rw[] = "rw", *list = NULL;
	bool has_port;
	struct stat st;
	size_t i;
	int rc = -ENOMEM;

	*out = NULL;
	cfg = config_new("command line");
	if (!cfg)
		return -ENOMEM;
	gw_settings_settle(cfg);
	if (gw_parse_listen(listen ? listen : "127.0.0.1", GW_PORT_DEFAULT, &cfg->listen,
			    &cfg->listen_len, &has_port, why))
		gw_err_at(&e, 0, "--listen: %s", why);
	gw_opts_default(&o);
	gw_parse_opts(rw, &o, &fsid, &e, 0, "--export-options");
	if (opts) {
		list = strdup(opts);
		if (!list)
			goto out_free_cfg;
		gw_parse_opts(list, &o, &fsid, &e, 0, "--export-options");
		free(list);
	}
	cfg->exports = calloc(1, sizeof(*cfg->exports));
	if (!cfg->exports)
		goto out_free_cfg;
	exp = &cfg->exports[0];
	cfg->nexports = 1;
	exp->fsid_kind = fsid.kind;
	exp->fsid = fsid.num;
	exp->path = realpath(dir, NULL);
	if (!exp->path) {
		rc = -errno;
		if (rc == -ENOMEM)
			goto out_free_cfg;
		gw_err_at(&e, 0, "--export %s: %s", dir, strerror(-rc));
	} else if (stat(exp->path, &st) || !S_ISDIR(st.st_mode)) {
		gw_err_at(&e, 0, "--export %s: not a directory", dir);
	} else {
		exp->pseudo = strdup("/"); /* DIR is the root of the pseudo filesystem */
		if (!exp->pseudo)
			goto out_free_cfg;
	}
	exp->clients = calloc(2, sizeof(*exp->clients));
	if (!exp->clients)
		goto out_free_cfg;
	for (i = 0; i < 2; i++) {
		struct gw_client *c = &exp->clients[i];

		gw_parse_client_spec(loopback[i], c, why);
		c->opts = o;
		c->spec = strdup(loopback[i]);
		if (!c->spec)
			goto out_free_cfg;
		exp->nclients++;
	}
	rc = e.count ? -EINVAL : 0;
	if (rc)
		goto out_free_cfg;
	*out = cfg;
	return 0;
out_free_cfg:
	gw_config_free(cfg);
	return rc;
}

int gw_config_check_paths(const struct gw_config *cfg, gw_err_fn *err_fn, void *arg)
{
	struct gw_err e = { .fn = err_fn, .arg = arg, .file = cfg->source };
	struct stat st;
	size_t i;
	int rc = 0;

	for (i = 0; i < cfg->nexports; i++) {
		const struct gw_export_conf *exp = &cfg->exports[i];

		if (stat(exp->path, &st) < 0) {
			if (!rc)
				rc = -errno;
			gw_err_at(&e, exp->line, "%s: stat: %s", exp->path, strerror(errno));
		} else if (!S_ISDIR(st.st_mode)) {
			if (!rc)
				rc = -ENOTDIR;
			gw_err_at(&e, exp->line, "%s: not a directory", exp->path);
		}
	}
	return rc;
}
