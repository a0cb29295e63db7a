/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * One pass of a sparse read over an open file: from h->offset, walk
 * SEEK_DATA/SEEK_HOLE and fill the segment table (holes reported whole,
 * even past the range; data clipped to the range and to the room in dst,
 * read with pread when dst->buf is set), then next_offset and the EOF,
 * SHORT and DENSE flags (include/lacuna/ioctl.h). Adjacent segments of one
 * kind are merged, so the table alternates. st is the file's fstat taken
 * just before. Sets *unstable when the file turned out shorter than its
 * map. Returns 0, -ENOBUFS (no room for any data), -EAGAIN (the map kept
 * flipping between data and hole under us) or an lseek/pread error.
 *
 * Compiled into both lacunafs and liblacuna: no other dependencies.
 */
#ifndef LACUNA_SRWALK_H
#define LACUNA_SRWALK_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>

#include "lacuna/ioctl.h"

/* where the data of one sparse read goes */
struct srw_dest {
	uint8_t *buf; /* NULL: map only */
	uint64_t len;
};

/* how often SEEK_HOLE may contradict the SEEK_DATA just before it */
#define SRW_FLIPS_MAX 3

int srw_walk(int fd, const struct stat *st, struct lacuna_sr_hdr *h, struct lacuna_seg *segs,
	     uint32_t maxsegs, const struct srw_dest *dst, bool *unstable);

#endif
