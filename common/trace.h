/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Static tracepoints (USDT) of lacunad and lacunafs, listed with their
 * arguments in docs/tracing.md. With <sys/sdt.h> (systemtap-sdt-dev) a
 * probe is one nop in the code and a note in the ELF file that bpftrace,
 * perf or systemtap attach to; without it, LTRACE() compiles to nothing
 * (its arguments are still type-checked, never evaluated).
 */
#ifndef LACUNA_TRACE_H
#define LACUNA_TRACE_H

#ifdef HAVE_SYS_SDT_H
#define SDT_USE_VARIADIC 1
#include <sys/sdt.h>
#define LTRACE(provider, name, ...) STAP_PROBEV(provider, name, __VA_ARGS__)
#else
static inline void ltrace_unused(int x, ...)
{
	(void)x;
}
#define LTRACE(provider, name, ...)                    \
	do {                                           \
		if (0)                                 \
			ltrace_unused(0, __VA_ARGS__); \
	} while (0)
#endif

#endif
