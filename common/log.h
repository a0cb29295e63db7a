/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Logging shared by lacunafs and lacunad: to stderr when in the
 * foreground, to syslog once daemonized. Levels are syslog's.
 */
#ifndef LACUNA_LOG_H
#define LACUNA_LOG_H

#include <stdbool.h>
#include <syslog.h>

void log_init(const char *ident, bool use_syslog, int max_level);
void log_set_syslog(bool use_syslog);
void log_msg(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define log_err(...) log_msg(LOG_ERR, __VA_ARGS__)
#define log_warn(...) log_msg(LOG_WARNING, __VA_ARGS__)
#define log_info(...) log_msg(LOG_INFO, __VA_ARGS__)
#define log_debug(...) log_msg(LOG_DEBUG, __VA_ARGS__)

#endif
