// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The xprtsec= vocabulary (gw_xprtsec.h): parsing and writing a set of
 * transport securities, "none:tls:mtls" as Linux's exports(5) spells it.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "gw_xprtsec.h"

static const struct {
	const char *name;
	uint8_t bit;
} modes[] = {
	{ "none", GW_XPRTSEC_NONE },
	{ "tls", GW_XPRTSEC_TLS },
	{ "mtls", GW_XPRTSEC_MTLS },
};
#define NMODES (sizeof(modes) / sizeof(modes[0]))

int gw_xprtsec_parse(const char *s, uint8_t *out, char *why)
{
	const char *p = s;
	uint8_t set = 0;

	if (!*s) {
		snprintf(why, GW_XPRTSEC_WHY_MAX,
			 "empty list (none, tls, mtls or a list "
			 "like none:tls:mtls)");
		return -EINVAL;
	}
	for (;;) {
		size_t len = strcspn(p, ":");
		size_t i;

		if (!len) {
			snprintf(why, GW_XPRTSEC_WHY_MAX, "'%s': empty mode (a stray colon)", s);
			return -EINVAL;
		}
		for (i = 0; i < NMODES; i++)
			if (strlen(modes[i].name) == len && !strncmp(p, modes[i].name, len))
				break;
		if (i == NMODES) {
			snprintf(why, GW_XPRTSEC_WHY_MAX,
				 "'%s': unknown mode '%.*s' (none, tls or mtls)", s, (int)len, p);
			return -EINVAL;
		}
		if (set & modes[i].bit) {
			snprintf(why, GW_XPRTSEC_WHY_MAX, "'%s': mode '%s' listed twice", s,
				 modes[i].name);
			return -EINVAL;
		}
		set |= modes[i].bit;
		p += len;
		if (!*p)
			break;
		p++; /* the colon; a trailing one is an empty mode */
	}
	*out = set;
	return 0;
}

const char *gw_xprtsec_format(uint8_t set, char *buf)
{
	size_t i, n = 0;

	buf[0] = '\0';
	for (i = 0; i < NMODES; i++) {
		if (!(set & modes[i].bit))
			continue;
		n += (size_t)snprintf(buf + n, GW_XPRTSEC_STR_MAX - n, "%s%s", n ? ":" : "",
				      modes[i].name);
	}
	return buf;
}

const char *gw_xprtsec_name(uint8_t mode)
{
	size_t i;

	for (i = 0; i < NMODES; i++)
		if (mode == modes[i].bit)
			return modes[i].name;
	return "?";
}
