// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Logging: one line per message, prefixed with the program name and the
 * level, to stderr or to syslog. Thread-safe: each message is formatted
 * into a local buffer and written with a single call.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "log.h"

static const char *log_ident = "lacuna";
static bool log_syslog;
static int log_max = LOG_INFO;

static const char *const log_names[] = {
	[LOG_EMERG] = "emerg",	[LOG_ALERT] = "alert",	 [LOG_CRIT] = "crit", [LOG_ERR] = "error",
	[LOG_WARNING] = "warn", [LOG_NOTICE] = "notice", [LOG_INFO] = "info", [LOG_DEBUG] = "debug",
};

void log_init(const char *ident, bool use_syslog, int max_level)
{
	log_ident = ident;
	log_max = max_level;
	log_set_syslog(use_syslog);
}

void log_set_syslog(bool use_syslog)
{
	if (use_syslog && !log_syslog)
		openlog(log_ident, LOG_PID | LOG_NDELAY, LOG_DAEMON);
	log_syslog = use_syslog;
}

void log_msg(int level, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	int n;

	if (level > log_max)
		return;
	va_start(ap, fmt);
	if (log_syslog) {
		vsyslog(level, fmt, ap);
		va_end(ap);
		return;
	}
	n = snprintf(buf, sizeof(buf), "%s: %s: ", log_ident,
		     level >= 0 && level <= LOG_DEBUG ? log_names[level] : "?");
	if (n < 0)
		n = 0;
	vsnprintf(buf + n, sizeof(buf) - (size_t)n - 1, fmt, ap);
	va_end(ap);
	n = (int)strlen(buf);
	buf[n++] = '\n';
	if (write(STDERR_FILENO, buf, (size_t)n) < 0)
		return;
}
