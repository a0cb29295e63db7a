// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The data/hole walk of a sparse read, shared by lacunafs (which runs it
 * under the inode's range lock) and liblacuna's fallback for files that
 * are not on lacunafs (which runs it without). See srwalk.h.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "srwalk.h"

static int srw_pread_all(int fd, uint8_t *buf, uint64_t len, uint64_t off, bool *unstable)
{
	while (len) {
		ssize_t n = pread(fd, buf, len, (off_t)off);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0) {
			/* shorter than its map said: changed behind our back */
			memset(buf, 0, len);
			*unstable = true;
			return 0;
		}
		buf += n;
		off += (uint64_t)n;
		len -= (uint64_t)n;
	}
	return 0;
}

static void srw_add(struct lacuna_sr_hdr *h, struct lacuna_seg *segs, uint32_t kind,
		       uint64_t off, uint64_t len, uint64_t data_off)
{
	struct lacuna_seg *s = h->nsegs ? &segs[h->nsegs - 1] : NULL;

	/*
	 * Two segments of one kind in a row happen when the map changes
	 * between our lseeks without any change to the data (pages of an
	 * unwritten extent cached by our own pread turn it into "data").
	 * Keep the table alternating: extend the previous one.
	 */
	if (s && s->kind == kind && s->offset + s->length == off &&
	    (kind == LACUNA_SEG_HOLE || s->data_off + s->length == data_off)) {
		s->length += len;
		if (kind == LACUNA_SEG_DATA)
			h->data_bytes += len;
		else
			h->hole_bytes += len;
		return;
	}
	s = &segs[h->nsegs++];

	s->offset = off;
	s->length = len;
	s->kind = kind;
	s->pad = 0;
	s->data_off = kind == LACUNA_SEG_DATA ? data_off : 0;
	if (kind == LACUNA_SEG_DATA)
		h->data_bytes += len;
	else
		h->hole_bytes += len;
}

int srw_walk(int fd, const struct stat *st, struct lacuna_sr_hdr *h, struct lacuna_seg *segs,
	     uint32_t maxsegs, const struct srw_dest *dst, bool *unstable)
{
	uint64_t size = (uint64_t)st->st_size;
	uint64_t pos = h->offset;
	uint64_t end = h->length > size - (pos < size ? pos : size) ? size : pos + h->length;
	uint64_t room = dst->buf ? dst->len : UINT64_MAX, used = 0;
	bool dense = false;
	bool at_data = false; /* pos is where SEEK_DATA just landed */
	unsigned int flips = 0;
	int rc;

	h->nsegs = 0;
	h->data_bytes = h->hole_bytes = 0;
	h->flags = 0;
	h->file_size = size;
	if (pos >= size || h->length == 0) {
		h->next_offset = pos;
		goto out;
	}
	/*
	 * Allocation covering the size suggests a file without holes, but
	 * blocks preallocated past EOF and metadata blocks count too: one
	 * SEEK_HOLE confirms that nothing but data lies ahead.
	 */
	if ((uint64_t)st->st_blocks * 512 >= size) {
		off_t r = lseek(fd, (off_t)pos, SEEK_HOLE);

		dense = r >= 0 && (uint64_t)r >= size;
		if (dense)
			h->flags |= LACUNA_SR_DENSE;
	}
	while (pos < end && h->nsegs < maxsegs) {
		uint64_t dstart, dend;
		off_t r;

		if (dense) {
			dstart = pos;
			dend = size;
		} else {
			if (!at_data) {
				r = lseek(fd, (off_t)pos, SEEK_DATA);
				if (r < 0 && errno != ENXIO)
					return -errno;
				dstart = r < 0 ? size : (uint64_t)r;
				if (dstart > pos) {
					/* a hole, reported whole even past end */
					srw_add(h, segs, LACUNA_SEG_HOLE, pos, dstart - pos, 0);
					pos = dstart;
					at_data = pos < size;
					continue;
				}
			}
			at_data = false;
			r = lseek(fd, (off_t)pos, SEEK_HOLE);
			if (r < 0)
				return -errno;
			if ((uint64_t)r == pos && pos < size) {
				/*
				 * Data a moment ago, a hole now: the cached pages of
				 * an unwritten extent were dropped. Look again.
				 */
				if (++flips > SRW_FLIPS_MAX)
					return -EAGAIN;
				continue;
			}
			dend = (uint64_t)r;
		}
		if (dend > end)
			dend = end;
		if (dend - pos > room - used)
			dend = pos + (room - used);
		if (dend == pos)
			break; /* no room left for data */
		if (dst->buf) {
			rc = srw_pread_all(fd, dst->buf + used, dend - pos, pos, unstable);
			if (rc)
				return rc;
		}
		srw_add(h, segs, LACUNA_SEG_DATA, pos, dend - pos, used);
		used += dend - pos;
		pos = dend;
	}
	h->next_offset = pos;
out:
	if (h->next_offset >= size)
		h->flags |= LACUNA_SR_EOF;
	else if (h->next_offset < end)
		h->flags |= LACUNA_SR_SHORT;
	if (h->nsegs == 0 && pos < end)
		return -ENOBUFS;
	return 0;
}

