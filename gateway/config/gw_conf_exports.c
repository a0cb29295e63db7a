// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Export lines of lacunad.conf, in the form of exports(5):
 *
 *   PATH [-DEFAULT_OPTIONS] CLIENT[(OPTIONS)] ...
 *
 * and the checks that look at all exports together: one pseudo-root at
 * most, fsids not shared, and where each export appears in the NFSv4
 * pseudo tree. Without an fsid=root export the pseudo tree is the
 * server's own directory tree, so every export appears at its path; with
 * one, that export is the root and every other one appears at its path
 * below it (and must lie below it).
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "gw_parse.h"

void gw_export_conf_free(struct gw_export_conf *exp)
{
	size_t i;

	for (i = 0; i < exp->nclients; i++)
		free(exp->clients[i].spec);
	free(exp->clients);
	free(exp->path);
	free(exp->pseudo);
}

/* Absolute, no "." or ".." component; repeated and trailing slashes dropped. */
static int normalize_path(const char *in, char out[PATH_MAX], char *why)
{
	const char *p = in;
	size_t n = 0;

	if (in[0] != '/') {
		snprintf(why, GW_WHY_MAX, "'%.80s' is not an absolute path", in);
		return -EINVAL;
	}
	for (;;) {
		size_t len;

		while (*p == '/')
			p++;
		if (!*p)
			break;
		len = strcspn(p, "/");
		if ((len == 1 && p[0] == '.') || (len == 2 && p[0] == '.' && p[1] == '.')) {
			snprintf(why, GW_WHY_MAX, "'%.80s': '.' and '..' are not allowed in a path",
				 in);
			return -EINVAL;
		}
		if (n + 1 + len >= PATH_MAX) {
			snprintf(why, GW_WHY_MAX, "'%.40s...' is longer than PATH_MAX (%d)", in,
				 PATH_MAX);
			return -ENAMETOOLONG;
		}
		out[n++] = '/';
		memcpy(out + n, p, len);
		n += len;
		p += len;
	}
	if (n == 0)
		out[n++] = '/';
	out[n] = '\0';
	return 0;
}

static int add_client(struct gw_export_conf *exp, size_t *cap, const struct gw_client *c)
{
	struct gw_client *nc;

	if (exp->nclients == *cap) {
		size_t ncap = *cap ? *cap * 2 : 4;
		void *p = realloc(exp->clients, ncap * sizeof(*exp->clients));

		if (!p)
			return -ENOMEM;
		exp->clients = p;
		*cap = ncap;
	}
	nc = &exp->clients[exp->nclients];
	*nc = *c;
	nc->spec = strdup(c->spec);
	if (!nc->spec)
		return -ENOMEM;
	exp->nclients++;
	return 0;
}

/* An fsid given on one export line must be the same for all its clients. */
static void merge_fsid(struct gw_loader *ld, struct gw_export_conf *exp, const struct gw_fsid *f,
		       const char **first, unsigned int line, const char *path)
{
	if (f->kind == GW_FSID_NONE)
		return;
	if (exp->fsid_kind == GW_FSID_NONE) {
		exp->fsid_kind = f->kind;
		exp->fsid = f->num;
		*first = f->text;
		return;
	}
	if (exp->fsid_kind != f->kind || exp->fsid != f->num)
		gw_err_at(&ld->err, line,
			  "%s: '%s' differs from '%s' given before: the fsid "
			  "belongs to the export, not to a client",
			  path, f->text, *first);
}

/*
 * One client word, SPEC or SPEC(OPTIONS). Returns true when its option
 * list was cut by a blank, so that the caller skips the rest of it.
 */
static bool parse_client(struct gw_loader *ld, struct gw_export_conf *exp, size_t *cap,
			 const struct gw_opts *defaults, const char **fsid_text, char *word,
			 unsigned int line, const char *path)
{
	char why[GW_WHY_MAX], where[PATH_MAX + 128];
	char *paren = strchr(word, '('), *list = NULL;
	struct gw_fsid f = { .kind = GW_FSID_NONE };
	struct gw_client c = { .spec = word, .line = line, .opts = *defaults };
	size_t i;
	bool bad = false;

	if (paren == word) {
		gw_err_at(&ld->err, line,
			  "%s: options '%.64s' without a client: remove the "
			  "blank before '(' or write '*%.64s' for everyone",
			  path, word, word);
		return !strchr(word, ')');
	}
	if (paren) {
		size_t len = strlen(paren);

		*paren = '\0';
		list = paren + 1;
		if (paren[len - 1] != ')' || strpbrk(list, "()") != paren + len - 1) {
			gw_err_at(&ld->err, line,
				  "%s: %s: malformed option list '(%.64s' (no "
				  "blanks inside the parentheses)",
				  path, word, list);
			return !strchr(list, ')');
		}
		paren[len - 1] = '\0';
	}
	if (gw_parse_client_spec(word, &c, why)) {
		gw_err_at(&ld->err, line, "%s: %s", path, why);
		bad = true;
	}
	snprintf(where, sizeof(where), "%s: %s", path, word);
	if (list && gw_parse_opts(list, &c.opts, &f, &ld->err, line, where))
		bad = true;
	merge_fsid(ld, exp, &f, fsid_text, line, path);
	if (bad)
		return false;
	for (i = 0; i < exp->nclients; i++) {
		const struct gw_client *o = &exp->clients[i];

		if (o->prefix == c.prefix && !memcmp(o->addr, c.addr, sizeof(c.addr))) {
			gw_err_at(&ld->err, line,
				  "%s: client %s listed twice (first as %s at line %u)", path, word,
				  o->spec, o->line);
			return false;
		}
	}
	if (add_client(exp, cap, &c))
		ld->fatal = -ENOMEM;
	return false;
}

void gw_parse_export(struct gw_loader *ld, char *p)
{
	struct gw_config *cfg = ld->cfg;
	struct gw_export_conf exp = { .fsid_kind = GW_FSID_NONE };
	struct gw_opts defaults;
	const char *fsid_text = NULL, *shown;
	char npath[PATH_MAX], why[GW_WHY_MAX], *word;
	unsigned int line, wline;
	size_t cap = 0, nwords = 0, i;
	bool first = true, skip = false;
	int rc;

	rc = gw_next_word(ld, &p, &word, &line);
	if (rc <= 0)
		return;
	exp.line = line;
	gw_opts_default(&defaults);
	if (normalize_path(word, npath, why)) {
		gw_err_at(&ld->err, line, "%s", why);
		shown = word;
	} else {
		shown = npath;
		exp.path = strdup(npath);
		if (!exp.path)
			goto out_nomem;
	}
	while ((rc = gw_next_word(ld, &p, &word, &wline)) > 0) {
		if (skip) {
			skip = !strchr(word, ')');
			continue;
		}
		if (word[0] == '-') {
			struct gw_fsid f = { .kind = GW_FSID_NONE };
			char where[PATH_MAX + 32];

			snprintf(where, sizeof(where), "%s: -%s", shown, word + 1);
			if (!first)
				gw_err_at(&ld->err, wline,
					  "%s: default options ('%.64s') must come "
					  "right after the path",
					  shown, word);
			else if (!gw_parse_opts(word + 1, &defaults, &f, &ld->err, wline, where))
				merge_fsid(ld, &exp, &f, &fsid_text, wline, shown);
			first = false;
			continue;
		}
		first = false;
		nwords++;
		skip = parse_client(ld, &exp, &cap, &defaults, &fsid_text, word, wline, shown);
		if (ld->fatal)
			goto out_free;
	}
	if (rc == 0 && nwords == 0)
		gw_err_at(&ld->err, line, "%s: no clients: list at least one ('*' for everyone)",
			  shown);
	if (!exp.path)
		goto out_free;
	for (i = 0; i < cfg->nexports; i++) {
		if (!strcmp(cfg->exports[i].path, exp.path)) {
			gw_err_at(&ld->err, line, "%s: duplicate export (first at line %u)",
				  exp.path, cfg->exports[i].line);
			goto out_free;
		}
	}
	if (cfg->nexports == GW_EXPORTS_MAX) {
		gw_err_at(&ld->err, line, "too many exports (at most %d)", GW_EXPORTS_MAX);
		goto out_free;
	}
	if (cfg->nexports == ld->expcap) {
		size_t ncap = ld->expcap ? ld->expcap * 2 : 8;
		void *np = realloc(cfg->exports, ncap * sizeof(*cfg->exports));

		if (!np)
			goto out_nomem;
		cfg->exports = np;
		ld->expcap = ncap;
	}
	cfg->exports[cfg->nexports++] = exp;
	return;
out_nomem:
	ld->fatal = -ENOMEM;
out_free:
	gw_export_conf_free(&exp);
}

/* ---------------------------------------------------------------- all exports */

/* Where path appears in a pseudo tree rooted at root, or NULL if outside. */
static const char *under(const char *root, const char *path)
{
	size_t n = strlen(root);

	if (!strcmp(root, "/"))
		return path;
	if (strncmp(root, path, n))
		return NULL;
	if (path[n] == '\0')
		return "/";
	return path[n] == '/' ? path + n : NULL;
}

int gw_check_exports(struct gw_config *cfg, struct gw_err *err)
{
	const struct gw_export_conf *root = NULL;
	size_t i, j;

	for (i = 0; i < cfg->nexports; i++) {
		const struct gw_export_conf *e = &cfg->exports[i];

		if (e->fsid_kind == GW_FSID_ROOT) {
			if (root)
				gw_err_at(err, e->line,
					  "%s: a second pseudo-root export "
					  "(fsid=root); the first is %s at line %u",
					  e->path, root->path, root->line);
			else
				root = e;
		}
		for (j = 0; j < i && e->fsid_kind == GW_FSID_NUM; j++) {
			if (cfg->exports[j].fsid_kind == GW_FSID_NUM &&
			    cfg->exports[j].fsid == e->fsid)
				gw_err_at(err, e->line,
					  "%s: fsid=%u is already used by %s "
					  "(line %u)",
					  e->path, e->fsid, cfg->exports[j].path,
					  cfg->exports[j].line);
		}
	}
	for (i = 0; i < cfg->nexports; i++) {
		struct gw_export_conf *e = &cfg->exports[i];
		const char *ps = root ? under(root->path, e->path) : e->path;

		if (!ps && e->fsid_kind == GW_FSID_ROOT)
			continue; /* a second root, reported */
		if (!ps) {
			gw_err_at(err, e->line,
				  "%s is outside the pseudo-root export %s "
				  "(line %u): NFSv4 clients could not reach it",
				  e->path, root->path, root->line);
			continue;
		}
		free(e->pseudo);
		e->pseudo = strdup(ps);
		if (!e->pseudo)
			return -ENOMEM;
	}
	return 0;
}
