/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Time sets of the torture checkers (lt_torture, lt_nfs_torture): sorted
 * lists of closed intervals of logical time, kept to at most LT_TSET_MAX
 * intervals (past that the last one is stretched, which keeps a
 * superset: a checker may then miss a tear, never report a false one).
 */
#ifndef LACUNA_LT_TSET_H
#define LACUNA_LT_TSET_H

#include <stdint.h>

#define LT_TSET_MAX 256 /* intervals kept while intersecting */

struct lt_ivl {
	uint64_t lo, hi;
};

/*
 * Add [l, h] clipped to [lo, hi] to the set @u of *@n intervals, in
 * increasing order (each l at or after the last interval's start),
 * merging with the last interval when they touch.
 */
static inline void lt_tset_add(struct lt_ivl *u, unsigned int *n, uint64_t l, uint64_t h,
			       uint64_t lo, uint64_t hi)
{
	l = l < lo ? lo : l;
	h = h > hi ? hi : h;
	if (l > h)
		return;
	if (*n && u[*n - 1].hi >= l)
		u[*n - 1].hi = h > u[*n - 1].hi ? h : u[*n - 1].hi;
	else if (*n < LT_TSET_MAX)
		u[(*n)++] = (struct lt_ivl){ l, h };
	else
		u[*n - 1].hi = h;
}

#endif
