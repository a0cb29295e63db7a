// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The values of lacunad's configuration, shared by the configuration
 * file and the command line: numbers, sizes, booleans, log levels, listen
 * addresses; the exports(5) vocabulary of client specifications and
 * option lists; and what a client rule means once chosen (address
 * matching and identity squashing).
 *
 * Client addresses and rules are compared as 16-byte IPv6 addresses, IPv4
 * ones v4-mapped, so an IPv4 client reaching a dual-stack socket as
 * ::ffff:a.b.c.d meets exactly the rules a plain IPv4 connection meets.
 * No name is ever looked up: host names, wildcards and netgroups are
 * refused with a message saying so.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "gw_parse.h"
#include "gw_xprtsec.h"

void gw_err_at(struct gw_err *e, unsigned int line, const char *fmt, ...)
{
	char msg[8192];
	va_list ap;
	int n;

	if (line)
		n = snprintf(msg, sizeof(msg), "%s:%u: ", e->file, line);
	else
		n = snprintf(msg, sizeof(msg), "%s: ", e->file);
	if (n < 0 || (size_t)n >= sizeof(msg))
		n = 0;
	va_start(ap, fmt);
	vsnprintf(msg + n, sizeof(msg) - (size_t)n, fmt, ap);
	va_end(ap);
	e->count++;
	if (e->fn)
		e->fn(e->arg, msg);
	else
		fprintf(stderr, "%s\n", msg);
}

/* ---------------------------------------------------------------- values */

/* Leading decimal digits of s; *end is the first other character. */
static void parse_digits(const char *s, uint64_t *out, const char **end, bool *overflow)
{
	uint64_t v = 0;
	const char *p = s;

	*overflow = false;
	for (; *p >= '0' && *p <= '9'; p++) {
		unsigned int d = (unsigned int)(*p - '0');

		if (v > (UINT64_MAX - d) / 10)
			*overflow = true;
		else
			v = v * 10 + d;
	}
	*end = p;
	*out = v;
}

static int num_checks(const char *s, const char *end, bool overflow, uint64_t v, uint64_t min,
		      uint64_t max, char *why)
{
	if (*s == '-' && s[1] >= '0' && s[1] <= '9') {
		snprintf(why, GW_WHY_MAX, "%.64s is negative (expected %llu..%llu)", s,
			 (unsigned long long)min, (unsigned long long)max);
		return -ERANGE;
	}
	if (end == s) {
		snprintf(why, GW_WHY_MAX, "'%.64s' is not a number", s);
		return -EINVAL;
	}
	if (*end) {
		snprintf(why, GW_WHY_MAX, "'%.64s' is not a number (junk after the digits)", s);
		return -EINVAL;
	}
	if (overflow || v < min || v > max) {
		snprintf(why, GW_WHY_MAX, "%.64s is out of range (%llu..%llu)", s,
			 (unsigned long long)min, (unsigned long long)max);
		return -ERANGE;
	}
	return 0;
}

int gw_parse_uint(const char *s, uint64_t min, uint64_t max, uint64_t *out, char *why)
{
	const char *end;
	bool overflow;
	uint64_t v;
	int rc;

	parse_digits(s, &v, &end, &overflow);
	rc = num_checks(s, end, overflow, v, min, max, why);
	if (rc == 0)
		*out = v;
	return rc;
}

int gw_parse_size(const char *s, uint64_t min, uint64_t max, uint64_t *out, char *why)
{
	const char *end, *suffix;
	unsigned int shift = 0;
	bool overflow;
	uint64_t v;
	int rc;

	parse_digits(s, &v, &end, &overflow);
	suffix = end;
	switch (*end) {
	case 'k':
	case 'K':
		shift = 10;
		break;
	case 'm':
	case 'M':
		shift = 20;
		break;
	case 'g':
	case 'G':
		shift = 30;
		break;
	}
	if (shift && end != s) {
		end++;
		if (!strcmp(end, "iB") || !strcmp(end, "B"))
			end += strlen(end);
	}
	if (*end && end > s) {
		snprintf(why, GW_WHY_MAX, "'%.64s': unknown size suffix '%.16s' (K, M or G)", s,
			 suffix);
		return -EINVAL;
	}
	if (shift && v > (UINT64_MAX >> shift))
		overflow = true;
	v <<= shift;
	rc = num_checks(s, end, overflow, v, min, max, why);
	if (rc == 0)
		*out = v;
	return rc;
}

int gw_parse_bool(const char *s, bool *out, char *why)
{
	static const char *const yes[] = { "on", "yes", "true", "1" };
	static const char *const no[] = { "off", "no", "false", "0" };
	size_t i;

	for (i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
		if (!strcasecmp(s, yes[i]) || !strcasecmp(s, no[i])) {
			*out = !strcasecmp(s, yes[i]);
			return 0;
		}
	}
	snprintf(why, GW_WHY_MAX, "'%.64s' is not on or off", s);
	return -EINVAL;
}

static const struct {
	const char *name;
	int level;
} log_levels[] = {
	{ "emerg", LOG_EMERG },	    { "alert", LOG_ALERT },   { "crit", LOG_CRIT },
	{ "error", LOG_ERR },	    { "err", LOG_ERR },	      { "warn", LOG_WARNING },
	{ "warning", LOG_WARNING }, { "notice", LOG_NOTICE }, { "info", LOG_INFO },
	{ "debug", LOG_DEBUG },
};

int gw_parse_log_level(const char *s, int *level, char *why)
{
	size_t i;

	for (i = 0; i < sizeof(log_levels) / sizeof(log_levels[0]); i++) {
		if (!strcasecmp(s, log_levels[i].name)) {
			*level = log_levels[i].level;
			return 0;
		}
	}
	snprintf(why, GW_WHY_MAX, "unknown log level '%.64s' (error, warn, notice, info or debug)",
		 s);
	return -EINVAL;
}

/* Why addr (no port, no prefix) is not an address literal. */
static void not_an_address(const char *addr, char *why)
{
	if (strchr(addr, '%'))
		snprintf(why, GW_WHY_MAX,
			 "'%.80s': scoped IPv6 addresses (%%zone) are not supported", addr);
	else if (strpbrk(addr, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ*?@"))
		snprintf(why, GW_WHY_MAX,
			 "'%.80s' is not an IP address: host names, wildcards and netgroups "
			 "are not supported (lacunad looks up no names)",
			 addr);
	else
		snprintf(why, GW_WHY_MAX, "'%.80s' is not an IPv4 or IPv6 address", addr);
}

int gw_parse_listen(const char *s, uint16_t def_port, struct sockaddr_storage *ss, socklen_t *len,
		    bool *has_port, char *why)
{
	char addr[INET6_ADDRSTRLEN + 1];
	const char *a = s, *port = NULL, *colon;
	size_t alen;
	uint64_t p = def_port;
	bool v6;

	if (*s == '[') {
		const char *close = strchr(s, ']');

		if (!close) {
			snprintf(why, GW_WHY_MAX, "'%.80s': missing ']'", s);
			return -EINVAL;
		}
		a = s + 1;
		alen = (size_t)(close - a);
		if (close[1] == ':')
			port = close + 2;
		else if (close[1]) {
			snprintf(why, GW_WHY_MAX, "'%.80s': junk after ']'", s);
			return -EINVAL;
		}
		v6 = true;
	} else {
		colon = strchr(s, ':');
		v6 = colon && strchr(colon + 1, ':');
		if (colon && !v6)
			port = colon + 1;
		alen = port ? (size_t)(colon - s) : strlen(s);
	}
	if (alen == 0) {
		snprintf(why, GW_WHY_MAX, "'%.80s': missing address (0.0.0.0 or [::] for any)", s);
		return -EINVAL;
	}
	if (alen >= sizeof(addr)) {
		snprintf(why, GW_WHY_MAX, "'%.80s' is not an IPv4 or IPv6 address", s);
		return -EINVAL;
	}
	memcpy(addr, a, alen);
	addr[alen] = '\0';
	if (port) {
		char pwhy[GW_WHY_MAX];

		if (gw_parse_uint(port, 1, 65535, &p, pwhy)) {
			snprintf(why, GW_WHY_MAX, "port %.200s", pwhy);
			return -EINVAL;
		}
	}
	memset(ss, 0, sizeof(*ss));
	if (!v6) {
		struct sockaddr_in *in = (struct sockaddr_in *)ss;

		if (inet_pton(AF_INET, addr, &in->sin_addr) == 1) {
			in->sin_family = AF_INET;
			in->sin_port = htons((uint16_t)p);
			*len = sizeof(*in);
			*has_port = port != NULL;
			return 0;
		}
	} else {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;

		if (inet_pton(AF_INET6, addr, &in6->sin6_addr) == 1) {
			in6->sin6_family = AF_INET6;
			in6->sin6_port = htons((uint16_t)p);
			*len = sizeof(*in6);
			*has_port = port != NULL;
			return 0;
		}
	}
	not_an_address(addr, why);
	return -EINVAL;
}

/* ---------------------------------------------------------------- client rules */

static void v4_mapped(uint8_t out[16], const void *in_addr)
{
	memset(out, 0, 10);
	out[10] = 0xff;
	out[11] = 0xff;
	memcpy(out + 12, in_addr, 4);
}

int gw_parse_client_spec(const char *spec, struct gw_client *c, char *why)
{
	char addr[INET6_ADDRSTRLEN + 1], net[INET6_ADDRSTRLEN];
	const char *slash = strchr(spec, '/');
	size_t alen = slash ? (size_t)(slash - spec) : strlen(spec);
	unsigned int base, width, i;
	struct in_addr mask4;
	uint64_t bits;

	memset(c->addr, 0, sizeof(c->addr));
	if (!strcmp(spec, "*")) {
		c->family = AF_UNSPEC;
		c->prefix = 0;
		return 0;
	}
	if (alen == 0) {
		snprintf(why, GW_WHY_MAX, "'%.80s': missing address", spec);
		return -EINVAL;
	}
	if (alen >= sizeof(addr)) {
		memcpy(addr, spec, sizeof(addr) - 1);
		addr[sizeof(addr) - 1] = '\0';
		not_an_address(addr, why);
		return -EINVAL;
	}
	memcpy(addr, spec, alen);
	addr[alen] = '\0';
	if (inet_pton(AF_INET, addr, c->addr + 12) == 1) {
		v4_mapped(c->addr, c->addr + 12);
		c->family = AF_INET;
		base = 96;
		width = 32;
	} else if (inet_pton(AF_INET6, addr, c->addr) == 1) {
		c->family = AF_INET6;
		base = 0;
		width = 128;
	} else {
		not_an_address(addr, why);
		return -EINVAL;
	}
	bits = width;
	if (slash && c->family == AF_INET && strchr(slash + 1, '.')) {
		uint32_t m, inv;

		if (inet_pton(AF_INET, slash + 1, &mask4) != 1) {
			snprintf(why, GW_WHY_MAX, "'%.80s': bad netmask", spec);
			return -EINVAL;
		}
		m = ntohl(mask4.s_addr);
		inv = ~m;
		if (inv & (inv + 1)) {
			snprintf(why, GW_WHY_MAX, "'%.80s': netmask is not contiguous", spec);
			return -EINVAL;
		}
		bits = (uint64_t)__builtin_popcount(m);
	} else if (slash) {
		char nwhy[GW_WHY_MAX];

		if (gw_parse_uint(slash + 1, 0, width, &bits, nwhy)) {
			snprintf(why, GW_WHY_MAX, "'%.48s': prefix length %.160s", spec, nwhy);
			return -EINVAL;
		}
	}
	c->prefix = base + (unsigned int)bits;
	for (i = c->prefix; i < 128; i++) {
		if (c->addr[i / 8] & (0x80 >> (i % 8)))
			break;
	}
	if (i < 128) {
		uint8_t masked[16];

		memcpy(masked, c->addr, sizeof(masked));
		for (i = c->prefix; i < 128; i++)
			masked[i / 8] &= (uint8_t) ~(0x80 >> (i % 8));
		inet_ntop(c->family, c->family == AF_INET ? masked + 12 : masked, net, sizeof(net));
		snprintf(why, GW_WHY_MAX, "'%.80s' has host bits set; did you mean %s/%u?", spec,
			 net, (unsigned int)bits);
		return -EINVAL;
	}
	return 0;
}

/* Prefix match of two 16-byte addresses. */
static bool prefix_match(const uint8_t *a, const uint8_t *b, unsigned int bits)
{
	unsigned int n = bits / 8, r = bits % 8;
	uint8_t m;

	if (memcmp(a, b, n))
		return false;
	if (r == 0)
		return true;
	m = (uint8_t)(0xff << (8 - r));
	return ((a[n] ^ b[n]) & m) == 0;
}

const struct gw_client *gw_export_conf_match(const struct gw_export_conf *exp,
					     const struct sockaddr *sa)
{
	uint8_t a[16];
	size_t i;

	if (!exp || !sa)
		return NULL;
	if (sa->sa_family == AF_INET)
		v4_mapped(a, &((const struct sockaddr_in *)(const void *)sa)->sin_addr);
	else if (sa->sa_family == AF_INET6)
		memcpy(a, &((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr, 16);
	else
		return NULL;
	for (i = 0; i < exp->nclients; i++) {
		if (prefix_match(a, exp->clients[i].addr, exp->clients[i].prefix))
			return &exp->clients[i];
	}
	return NULL;
}

void gw_client_squash(const struct gw_client *c, struct gw_cred *cred)
{
	unsigned int i;

	if (cred->ngroups > GW_GROUPS_MAX)
		cred->ngroups = GW_GROUPS_MAX;
	if (c->opts.all_squash) {
		cred->uid = c->opts.anonuid;
		cred->gid = c->opts.anongid;
		cred->ngroups = 0;
		return;
	}
	if (!c->opts.root_squash)
		return;
	if (cred->uid == 0)
		cred->uid = c->opts.anonuid;
	if (cred->gid == 0)
		cred->gid = c->opts.anongid;
	for (i = 0; i < cred->ngroups; i++) {
		if (cred->groups[i] == 0)
			cred->groups[i] = c->opts.anongid;
	}
}

uint8_t gw_client_xprtsec(const struct gw_config *cfg, const struct gw_client *c)
{
	if (c->opts.xprtsec)
		return c->opts.xprtsec;
	return cfg->tls_cert ? GW_XPRTSEC_ALL : GW_XPRTSEC_NONE;
}

/* ---------------------------------------------------------------- option lists */

void gw_opts_default(struct gw_opts *o)
{
	*o = (struct gw_opts){
		.rw = false,
		.root_squash = true,
		.all_squash = false,
		.secure = true,
		.anonuid = GW_ANON_ID,
		.anongid = GW_ANON_ID,
		.sec = { GW_SEC_SYS },
		.nsec = 1,
	};
}

/* Options of Linux's exports(5) that lacunad does not take. */
static const char *const linux_only[] = {
	"sync",		  "async",
	"subtree_check",  "no_subtree_check",
	"wdelay",	  "no_wdelay",
	"hide",		  "nohide",
	"crossmnt",	  "mp",
	"mountpoint",	  "acl",
	"no_acl",	  "secure_locks",
	"insecure_locks", "auth_nlm",
	"no_auth_nlm",	  "pnfs",
	"no_pnfs",	  "security_label",
	"refer",	  "replicas",
	"uuid",
};

enum opt_group {
	OG_ACCESS,
	OG_ROOT,
	OG_ALL,
	OG_SECURE,
	OG_ANONUID,
	OG_ANONGID,
	OG_SEC,
	OG_FSID,
	OG_XPRTSEC,
	OG_N
};

/* Which option of each group a list gave, to catch contradictions. */
struct opt_seen {
	const char *text[OG_N];
	uint64_t val[OG_N];
};

static bool seen_conflict(struct opt_seen *s, enum opt_group g, const char *text, uint64_t val,
			  struct gw_err *e, unsigned int line, const char *where)
{
	if (s->text[g] && s->val[g] != val) {
		gw_err_at(e, line, "%s: conflicting options '%s' and '%s'", where, s->text[g],
			  text);
		return true;
	}
	s->text[g] = text;
	s->val[g] = val;
	return false;
}

/* sec=FLAVOR[:FLAVOR]; returns the flavors packed as val for conflict checks. */
static int parse_sec(const char *text, const char *v, struct gw_opts *o, uint64_t *packed,
		     struct gw_err *e, unsigned int line, const char *where)
{
	enum gw_sec sec[GW_SEC_MAX];
	unsigned int n = 0, i;
	const char *p = v;

	if (!*v) {
		gw_err_at(e, line, "%s: '%s': missing security flavor (sec=sys)", where, text);
		return -EINVAL;
	}
	while (*p) {
		size_t len = strcspn(p, ":");
		enum gw_sec f;

		if (len == 0) {
			gw_err_at(e, line, "%s: '%s': empty security flavor", where, text);
			return -EINVAL;
		} else if (len == 3 && !strncmp(p, "sys", 3)) {
			f = GW_SEC_SYS;
		} else if (len == 4 && !strncmp(p, "none", 4)) {
			f = GW_SEC_NONE;
		} else if (len >= 4 && !strncmp(p, "krb5", 4)) {
			gw_err_at(e, line,
				  "%s: '%s': Kerberos (%.*s) is not supported; use sec=sys", where,
				  text, (int)len, p);
			return -EINVAL;
		} else {
			gw_err_at(e, line, "%s: '%s': unknown security flavor '%.*s' (sys or none)",
				  where, text, (int)len, p);
			return -EINVAL;
		}
		for (i = 0; i < n; i++) {
			if (sec[i] == f) {
				gw_err_at(e, line, "%s: '%s': flavor '%.*s' listed twice", where,
					  text, (int)len, p);
				return -EINVAL;
			}
		}
		sec[n++] = f;
		p += len;
		if (*p == ':' && !*++p) {
			gw_err_at(e, line, "%s: '%s': empty security flavor", where, text);
			return -EINVAL;
		}
	}
	*packed = 0;
	for (i = 0; i < n; i++) {
		o->sec[i] = sec[i];
		*packed = *packed * 4 + (uint64_t)sec[i] + 1;
	}
	o->nsec = n;
	return 0;
}

static int parse_one_opt(char *text, struct gw_opts *o, struct gw_fsid *fsid, struct opt_seen *seen,
			 struct gw_err *e, unsigned int line, const char *where)
{
	static const struct {
		const char *name;
		enum opt_group group;
		bool value;
	} flags[] = {
		{ "rw", OG_ACCESS, true },	  { "ro", OG_ACCESS, false },
		{ "root_squash", OG_ROOT, true }, { "no_root_squash", OG_ROOT, false },
		{ "all_squash", OG_ALL, true },	  { "no_all_squash", OG_ALL, false },
		{ "secure", OG_SECURE, true },	  { "insecure", OG_SECURE, false },
	};
	const char *eq = strchr(text, '=');
	size_t nlen = eq ? (size_t)(eq - text) : strlen(text);
	const char *v = eq ? eq + 1 : NULL;
	char why[GW_WHY_MAX];
	uint64_t n;
	size_t i;

	for (i = 0; i < sizeof(flags) / sizeof(flags[0]); i++) {
		if (strlen(flags[i].name) != nlen || strncmp(text, flags[i].name, nlen))
			continue;
		if (v) {
			gw_err_at(e, line, "%s: option '%s' takes no value", where, flags[i].name);
			return -EINVAL;
		}
		if (seen_conflict(seen, flags[i].group, text, flags[i].value, e, line, where))
			return -EINVAL;
		if (flags[i].group == OG_ACCESS)
			o->rw = flags[i].value;
		else if (flags[i].group == OG_ROOT)
			o->root_squash = flags[i].value;
		else if (flags[i].group == OG_SECURE)
			o->secure = flags[i].value;
		else
			o->all_squash = flags[i].value;
		return 0;
	}
	if ((nlen == 7 && !strncmp(text, "anonuid", 7)) ||
	    (nlen == 7 && !strncmp(text, "anongid", 7))) {
		bool uid = text[4] == 'u';

		if (!v) {
			gw_err_at(e, line, "%s: option '%s' needs a value (%s=N)", where, text,
				  text);
			return -EINVAL;
		}
		if (gw_parse_uint(v, 0, GW_ID_MAX, &n, why)) {
			gw_err_at(e, line, "%s: %.7s: %s", where, text, why);
			return -EINVAL;
		}
		if (seen_conflict(seen, uid ? OG_ANONUID : OG_ANONGID, text, n, e, line, where))
			return -EINVAL;
		if (uid)
			o->anonuid = (uint32_t)n;
		else
			o->anongid = (uint32_t)n;
		return 0;
	}
	if (nlen == 3 && !strncmp(text, "sec", 3)) {
		struct gw_opts tmp = *o;

		if (!v) {
			gw_err_at(e, line, "%s: option 'sec' needs a value (sec=sys)", where);
			return -EINVAL;
		}
		if (parse_sec(text, v, &tmp, &n, e, line, where))
			return -EINVAL;
		if (seen_conflict(seen, OG_SEC, text, n, e, line, where))
			return -EINVAL;
		*o = tmp;
		return 0;
	}
	if (nlen == 7 && !strncmp(text, "xprtsec", 7)) {
		char xwhy[GW_XPRTSEC_WHY_MAX];
		uint8_t set;

		if (!v) {
			gw_err_at(e, line,
				  "%s: option 'xprtsec' needs a value (xprtsec=none, tls, mtls or a "
				  "list such as none:tls)",
				  where);
			return -EINVAL;
		}
		if (gw_xprtsec_parse(v, &set, xwhy)) {
			gw_err_at(e, line, "%s: xprtsec: %s", where, xwhy);
			return -EINVAL;
		}
		if (seen_conflict(seen, OG_XPRTSEC, text, set, e, line, where))
			return -EINVAL;
		o->xprtsec = set;
		return 0;
	}
	if (nlen == 4 && !strncmp(text, "fsid", 4)) {
		struct gw_fsid f = { .kind = GW_FSID_ROOT, .num = 0, .text = text };

		if (!v) {
			gw_err_at(e, line, "%s: option 'fsid' needs a value (fsid=N or fsid=root)",
				  where);
			return -EINVAL;
		}
		if (strcmp(v, "root") != 0) {
			size_t vlen = strlen(v);

			if (vlen >= 16 && strspn(v, "0123456789abcdefABCDEF-") == vlen &&
			    strspn(v, "0123456789") != vlen) {
				gw_err_at(e, line,
					  "%s: '%s': UUID fsids are not supported; give a number "
					  "or 'root'",
					  where, text);
				return -EINVAL;
			}
			if (gw_parse_uint(v, 0, UINT32_MAX, &n, why)) {
				gw_err_at(e, line, "%s: fsid: %s", where, why);
				return -EINVAL;
			}
			if (n) {
				f.kind = GW_FSID_NUM;
				f.num = (uint32_t)n;
			}
		}
		if (seen_conflict(seen, OG_FSID, text, f.kind == GW_FSID_ROOT ? 0 : 1 + n, e, line,
				  where))
			return -EINVAL;
		*fsid = f;
		return 0;
	}
	for (i = 0; i < sizeof(linux_only) / sizeof(linux_only[0]); i++) {
		if (strlen(linux_only[i]) == nlen && !strncmp(text, linux_only[i], nlen)) {
			gw_err_at(e, line,
				  "%s: '%s' is a Linux nfsd option that lacunad does not take; "
				  "remove it",
				  where, text);
			return -EINVAL;
		}
	}
	gw_err_at(e, line, "%s: unknown option '%s'", where, text);
	return -EINVAL;
}

int gw_parse_opts(char *list, struct gw_opts *o, struct gw_fsid *fsid, struct gw_err *e,
		  unsigned int line, const char *where)
{
	struct opt_seen seen;
	char *p = list;
	int rc = 0;

	memset(&seen, 0, sizeof(seen));
	if (!*list)
		return 0;
	for (;;) {
		char *comma = strchr(p, ',');

		if (comma)
			*comma = '\0';
		if (!*p) {
			gw_err_at(e, line, "%s: empty option (a stray comma)", where);
			rc = -EINVAL;
		} else if (parse_one_opt(p, o, fsid, &seen, e, line, where)) {
			rc = -EINVAL;
		}
		if (!comma)
			break;
		p = comma + 1;
	}
	return rc;
}
