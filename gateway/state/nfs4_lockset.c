// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Byte-range lock sets: the POSIX-style ranges of one file, each tagged
 * with an opaque owner, merged and split as fcntl locks are, and the
 * (offset, length) to inclusive range conversion of LOCK, LOCKT and
 * LOCKU, and from there to the off_t range of an OFD lock. Pure logic with no state of its own (the
 * caller holds whatever lock guards the set), unit tested by tests/unit/test_nfs4_state.c.
 */
#include <errno.h>
#include <stdlib.h>

#include "nfs4_state.h"

int nfs4_range_make(uint64_t off, uint64_t len, uint64_t *start, uint64_t *end)
{
	if (len == 0)
		return -EINVAL;
	*start = off;
	if (len == UINT64_MAX) {
		*end = UINT64_MAX;
		return 0;
	}
	if (len - 1 > UINT64_MAX - off)
		return -EINVAL;
	*end = off + (len - 1);
	return 0;
}

uint64_t nfs4_range_len(uint64_t start, uint64_t end)
{
	if (end == UINT64_MAX)
		return UINT64_MAX;
	return end - start + 1;
}

bool nfs4_range_ofd(uint64_t start, uint64_t end, int64_t *l_start, int64_t *l_len)
{
	if (start > INT64_MAX)
		return false;
	*l_start = (int64_t)start;
	/* off_t ends at INT64_MAX: a range reaching it or past it runs to the end */
	*l_len = end >= INT64_MAX ? 0 : (int64_t)(end - start + 1);
	return true;
}

static bool overlaps(const struct nfs4_lrange *r, uint64_t start, uint64_t end)
{
	return r->start <= end && r->end >= start;
}

const struct nfs4_lrange *nfs4_lset_conflict(const struct nfs4_lset *s, uint32_t type,
					     uint64_t start, uint64_t end, nfs4_lsame_fn *same,
					     const void *arg)
{
	size_t i;

	for (i = 0; i < s->n; i++) {
		const struct nfs4_lrange *r = &s->r[i];

		if (!overlaps(r, start, end))
			continue;
		if (same ? same(r->owner, arg) : r->owner == arg)
			continue;
		if (type == WRITE_LT || r->type == WRITE_LT)
			return r;
	}
	return NULL;
}

int nfs4_lset_reserve(struct nfs4_lset *s, size_t more)
{
	struct nfs4_lrange *r;
	size_t cap;

	if (s->n + more <= s->cap)
		return 0;
	cap = s->cap ? s->cap * 2 : 4;
	while (cap < s->n + more)
		cap *= 2;
	r = realloc(s->r, cap * sizeof(*r));
	if (!r)
		return -ENOMEM;
	s->r = r;
	s->cap = cap;
	return 0;
}

static void lset_remove_at(struct nfs4_lset *s, size_t i)
{
	s->r[i] = s->r[--s->n];
}

int nfs4_lset_unlock(struct nfs4_lset *s, const void *owner, uint64_t start, uint64_t end)
{
	size_t i, n;

	if (nfs4_lset_reserve(s, 1))
		return -ENOMEM;
	n = s->n; /* a piece split off lies outside [start, end]: no need to visit it */
	for (i = 0; i < n;) {
		struct nfs4_lrange *r = &s->r[i];

		if (r->owner != owner || !overlaps(r, start, end)) {
			i++;
			continue;
		}
		if (r->start >= start && r->end <= end) {
			/* swap the last one in; visit slot i again unless it was a split piece */
			lset_remove_at(s, i);
			if (s->n < n)
				n--;
			else
				i++;
			continue;
		}
		if (r->start < start && r->end > end) {
			struct nfs4_lrange tail = *r;

			tail.start = end + 1;
			r->end = start - 1;
			s->r[s->n++] = tail;
		} else if (r->start < start) {
			r->end = start - 1;
		} else {
			r->start = end + 1;
		}
		i++;
	}
	return 0;
}

bool nfs4_lset_splits(const struct nfs4_lset *s, const void *owner, uint64_t start, uint64_t end)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		if (s->r[i].owner == owner && s->r[i].start < start && s->r[i].end > end)
			return true;
	return false;
}

int nfs4_lset_lock(struct nfs4_lset *s, const void *owner, uint32_t type, uint64_t start,
		   uint64_t end)
{
	size_t i;

	/* room for the split of the unlock and the new range: nothing fails half way */
	if (nfs4_lset_reserve(s, 2))
		return -ENOMEM;
	nfs4_lset_unlock(s, owner, start, end);
	/* absorb the owner's ranges of the same type that touch it */
	for (i = 0; i < s->n;) {
		struct nfs4_lrange *r = &s->r[i];
		bool touch = (start == 0 || r->end >= start - 1) &&
			     (end == UINT64_MAX || r->start <= end + 1);

		if (r->owner != owner || r->type != type || !touch) {
			i++;
			continue;
		}
		if (r->start < start)
			start = r->start;
		if (r->end > end)
			end = r->end;
		lset_remove_at(s, i);
		i = 0; /* the range grew: look again from the start */
	}
	s->r[s->n].start = start;
	s->r[s->n].end = end;
	s->r[s->n].owner = owner;
	s->r[s->n].type = type;
	s->n++;
	return 0;
}

bool nfs4_lset_held(const struct nfs4_lset *s, const void *owner)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		if (s->r[i].owner == owner)
			return true;
	return false;
}

size_t nfs4_lset_drop(struct nfs4_lset *s, const void *owner)
{
	size_t i, dropped = 0;

	for (i = 0; i < s->n;) {
		if (s->r[i].owner == owner) {
			lset_remove_at(s, i);
			dropped++;
		} else {
			i++;
		}
	}
	return dropped;
}

void nfs4_lset_free(struct nfs4_lset *s)
{
	free(s->r);
	s->r = NULL;
	s->n = s->cap = 0;
}
