// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * lt_nfs_torture's writers: the changes they make to the file, through
 * the mount or over NFS, one call at a time, and the history of each
 * they log for the checks (lt_nfs_torture_check.c) to hold replies to.
 *
 * Operation
 * ---------
 * History. The writers hold a mutex across each call, so calls happen one
 * at a time and are numbered in order (seq); a call through the mount
 * lasts the system call, an NFS call from sending the request to
 * receiving the reply. Before each call they log, per region it changes,
 * (seq, state), a state being "pattern g on the first KEEP bytes, zeros
 * after" (g = 0: all zeros; KEEP < the region's length only after a
 * truncate cut into it) and, for a write through the mount, the offset of
 * its buffer in a page (its pieces follow from it); the file size is
 * logged the same way (a write in pieces that extends the file passes
 * through the ends of its pieces, all logged at its seq).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lt_nfs_torture.h"

/* The offsets in a page that writes through the mount take their data from */
const uint32_t lt_bufoffs[LT_NBUFOFFS] = { 0, 1, 212, 511, 2048, 4095 };

static void hist_add(struct lt_region *r, uint32_t seq, uint32_t gen, uint64_t keep,
		     uint32_t bufoff)
{
	if (r->n == r->cap) {
		r->cap = r->cap ? 2 * r->cap : 16;
		r->h = lt_xrealloc(r->h, r->cap * sizeof(*r->h));
	}
	r->h[r->n++] = (struct lt_hent){ seq, gen, gen ? keep : 0, gen ? bufoff : LT_WHOLE, 0 };
}

static void size_add(uint32_t seq, uint64_t size)
{
	if (lt.nsz == lt.capsz) {
		lt.capsz = lt.capsz ? 2 * lt.capsz : 64;
		lt.sz = lt_xrealloc(lt.sz, lt.capsz * sizeof(*lt.sz));
	}
	lt.sz[lt.nsz++] = (struct lt_sent){ seq, size };
	lt.cur_size = size;
}

/* The sizes a write of region r passes through (its pieces may land in any order) */
static void size_add_write(uint32_t seq, const struct lt_region *r, uint32_t bufoff)
{
	uint64_t pos = 0, o = bufoff, n;

	if (lt_in_pieces(r->len, bufoff))
		for (; pos < r->len; pos += n, o = (o + n) % LT_PAGE) {
			n = lt_piece_len(r->len - pos, o);
			if (r->start + pos + n > lt.cur_size)
				size_add(seq, r->start + pos + n);
		}
	else if (r->start + r->len > lt.cur_size)
		size_add(seq, r->start + r->len);
}

/*
 * One change of the file as one call, numbered and logged: through the
 * mount, or over the writer's NFS session. A write's data is @buf, taken
 * from byte @bufoff of a page.
 */
static void do_op(struct lt_writer *w, enum lt_op op, unsigned int ri, uint64_t cut,
		  const uint8_t *buf, uint32_t bufoff, uint32_t gen)
{
	struct lt_region *r = &lt.rg[ri];
	const char *what = NULL;
	uint8_t verf[8];
	unsigned int i;
	uint32_t seq;
	ssize_t n;
	bool nfs = op >= LT_OP_NFS_SYNC;

	if (nfs) {
		w->anon = lt_rnd_in(&w->rng, 0, 1);
		lt_vary_header(w);
	}
	pthread_mutex_lock(&lt.op_lock);
	seq = lt.started + 1;
	pthread_rwlock_wrlock(&lt.hist_lock);
	switch (op) {
	case LT_OP_TRUNC:
		for (i = 0; i < lt.nrg; i++) {
			struct lt_region *q = &lt.rg[i];
			const struct lt_hent *h = &q->h[q->n - 1];
			uint64_t keep;

			if (q->start + q->len <= cut)
				continue;
			keep = q->start >= cut ? 0 : cut - q->start;
			hist_add(q, seq, keep ? h->gen : 0, keep < h->keep ? keep : h->keep,
				 LT_WHOLE);
		}
		size_add(seq, cut);
		break;
	case LT_OP_WRITE:
		hist_add(r, seq, gen, r->len, bufoff);
		size_add_write(seq, r, bufoff);
		break;
	case LT_OP_NFS_SYNC:
	case LT_OP_NFS_UNSTABLE:
		hist_add(r, seq, gen, r->len, LT_WHOLE);
		size_add_write(seq, r, LT_WHOLE);
		break;
	default:
		hist_add(r, seq, 0, r->len, LT_WHOLE);
	}
	pthread_rwlock_unlock(&lt.hist_lock);
	LT_STORE(lt.started, seq);

	switch (op) {
	case LT_OP_WRITE:
		n = pwrite(lt.wfd, buf, r->len, (off_t)r->start);
		if (n != (ssize_t)r->len)
			what = n < 0 ? "pwrite" : "pwrite (short)";
		break;
	case LT_OP_PUNCH:
		if (fallocate(lt.wfd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)r->start,
			      (off_t)r->len) < 0)
			what = "fallocate(PUNCH_HOLE)";
		break;
	case LT_OP_ZERO:
		if (fallocate(lt.wfd, FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE, (off_t)r->start,
			      (off_t)r->len) < 0)
			what = "fallocate(ZERO_RANGE)";
		break;
	case LT_OP_TRUNC:
		if (ftruncate(lt.wfd, (off_t)cut) < 0)
			what = "ftruncate";
		break;
	case LT_OP_NFS_SYNC:
	case LT_OP_NFS_UNSTABLE:
		lt_nfs_write(w, r, buf, op == LT_OP_NFS_SYNC ? FILE_SYNC4 : UNSTABLE4, verf);
		break;
	case LT_OP_NFS_DEALLOC:
		lt_nfs_deallocate(w, r);
		break;
	case LT_OP_NR:
		break;
	}
	if (what)
		lt_die("%s of %s: %s", what, lt.path, strerror(errno));
	LT_STORE(lt.done, seq);
	pthread_mutex_unlock(&lt.op_lock);
	LT_ADD(lt.ops[op], 1);
	if (nfs)
		LT_ADD(*(w->anon ? &lt.anon_calls : &lt.open_calls), 1);
	if (op == LT_OP_NFS_UNSTABLE && lt_rnd_in(&w->rng, 0, 1)) {
		lt_nfs_commit(w, r, verf);
		LT_ADD(lt.commits, 1);
	}
}

uint8_t *lt_alloc_aligned(size_t len)
{
	void *p;

	if (posix_memalign(&p, LT_PAGE, len ? len : 1))
		lt_die("posix_memalign: %s", strerror(ENOMEM));
	return p;
}

/* A new pattern over region ri, through the mount from a buffer at a random page offset */
static void write_region(struct lt_writer *w, unsigned int ri)
{
	const struct lt_region *r = &lt.rg[ri];
	uint32_t gen = LT_ADD(lt.next_gen, 1);
	unsigned int k = (unsigned int)lt_rnd_in(&w->rng, 0, LT_NBUFOFFS - 1);
	uint8_t *p = w->buf + lt_bufoffs[k];

	lt_pat_fill(gen, r->start, p, r->len);
	do_op(w, LT_OP_WRITE, ri, 0, p, lt_bufoffs[k], gen);
	LT_ADD(lt.by_bufoff[k], 1);
	if (r->len > lt.unit)
		LT_ADD(lt.over_unit, 1);
	if (lt_in_pieces(r->len, lt_bufoffs[k]))
		LT_ADD(lt.in_pieces, 1);
}

/* A new pattern over region ri in one NFS WRITE */
static void nfs_write_region(struct lt_writer *w, unsigned int ri, enum lt_op op)
{
	const struct lt_region *r = &lt.rg[ri];
	uint32_t gen = LT_ADD(lt.next_gen, 1);

	lt_pat_fill(gen, r->start, w->buf, r->len);
	do_op(w, op, ri, 0, w->buf, LT_WHOLE, gen);
	if (r->len > lt.unit)
		LT_ADD(lt.nfs_over_unit, 1);
}

/* a region to change: a probe one time in two */
static unsigned int pick_region(uint64_t *s)
{
	if (lt.nprobes && lt_rnd_in(s, 0, 1) == 0)
		return lt.probes[lt_rnd_in(s, 0, lt.nprobes - 1)];
	return lt.writable[lt_rnd_in(s, 0, lt.nwritable - 1)];
}

/* Cut the file into its last regions, then restore its size: at once or by rewriting. */
static void truncate_cycle(struct lt_writer *w)
{
	uint64_t cut = lt_rnd_in(&w->rng, lt.cut_from, lt.fsize - 1);
	unsigned int ri;

	do_op(w, LT_OP_TRUNC, 0, cut, NULL, LT_WHOLE, 0);
	if (lt_rnd_in(&w->rng, 0, 1)) {
		for (ri = lt.nrg >= 3 ? lt.nrg - 3 : 0; ri < lt.nrg; ri++)
			if (!lt.rg[ri].gap && lt.rg[ri].start + lt.rg[ri].len > cut)
				write_region(w, ri);
	} else {
		usleep((useconds_t)lt_rnd_in(&w->rng, 0, 1000));
	}
	do_op(w, LT_OP_TRUNC, 0, lt.fsize, NULL, LT_WHOLE, 0);
}

void *lt_writer_thread(void *arg)
{
	struct lt_writer *w = arg;

	while (!LT_LOAD(lt.stop)) {
		unsigned int c = (unsigned int)lt_rnd_in(&w->rng, 0, 9);

		if (lt.nfs_writes) {
			unsigned int ri = pick_region(&w->rng);

			if (c < 3)
				nfs_write_region(w, ri, LT_OP_NFS_SYNC);
			else if (c < 7)
				nfs_write_region(w, ri, LT_OP_NFS_UNSTABLE);
			else
				do_op(w, LT_OP_NFS_DEALLOC, ri, 0, NULL, LT_WHOLE, 0);
		} else if (w->id == 0 && c == 0) {
			truncate_cycle(w);
		} else if (c < 6) {
			write_region(w, pick_region(&w->rng));
		} else {
			do_op(w, c < 8 ? LT_OP_PUNCH : LT_OP_ZERO, pick_region(&w->rng), 0, NULL,
			      LT_WHOLE, 0);
		}
	}
	return NULL;
}

/* Fresh file of full size, then a first state for some regions. */
void lt_setup_file(void)
{
	uint64_t s = lt.seed * 31 + 7;
	struct lt_writer w = { .rng = lt.seed * 37 + 11 };
	unsigned int i;

	w.buf = lt_alloc_aligned(lt.maxlen + LT_PAGE);
	if (ftruncate(lt.wfd, (off_t)lt.fsize) < 0)
		lt_die("ftruncate %s: %s", lt.path, strerror(errno));
	for (i = 0; i < lt.nrg; i++)
		hist_add(&lt.rg[i], 0, 0, 0, LT_WHOLE);
	size_add(0, lt.fsize);
	for (i = 0; i < lt.nrg; i++)
		if (!lt.rg[i].gap && lt_rnd_in(&s, 0, 2))
			write_region(&w, i);
	memset(lt.by_bufoff, 0, sizeof(lt.by_bufoff));
	memset(lt.ops, 0, sizeof(lt.ops));
	lt.in_pieces = lt.over_unit = 0;
	free(w.buf);
}
