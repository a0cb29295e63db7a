// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * bench_fh: what checking a file handle's tag costs a PUTFH. Nanoseconds
 * per gw_fh_check() of a valid handle (the tag computed and compared)
 * and of a forged one, for backing handles of 8 bytes (ext4's
 * FILEID_INO32_GEN), 16 (XFS with a 64-bit inode number, or a handle
 * with its parent) and the most a handle holds; next to gw_fh_make().
 *
 * Usage: bench_fh [-n CHECKS]   (default 10000000 per case)
 * Output: one line per case. Exit 0, or 1 when a check answers wrong.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "gw.h"

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

int main(int argc, char *argv[])
{
	static const size_t sizes[] = { 8, 16, GW_FH_HANDLE_MAX };
	uint8_t key[SIPHASH_KEY_BYTES], h[GW_FH_HANDLE_MAX];
	unsigned long n = 10000000, i;
	struct gw_fh fh, bad;
	volatile int sink = 0;
	size_t s;
	int opt;

	while ((opt = getopt(argc, argv, "n:")) != -1) {
		if (opt != 'n') {
			fprintf(stderr, "usage: bench_fh [-n CHECKS]\n");
			return 1;
		}
		n = strtoul(optarg, NULL, 0);
	}
	memset(key, 0x42, sizeof(key));
	for (i = 0; i < sizeof(h); i++)
		h[i] = (uint8_t)(i * 7);
	for (s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		double t0, t1, t2, t3;

		t0 = now_ns();
		for (i = 0; i < n; i++) {
			gw_fh_make(key, &fh, GW_FH_FILE, 0x1234abcd, 1, h, sizes[s]);
			sink += fh.data[GW_FH_TAG_OFF];
		}
		t1 = now_ns();
		for (i = 0; i < n; i++)
			sink += gw_fh_check(key, false, fh.data, fh.len);
		t2 = now_ns();
		bad = fh;
		bad.data[fh.len - 1] ^= 1;
		for (i = 0; i < n; i++)
			sink += gw_fh_check(key, false, bad.data, bad.len);
		t3 = now_ns();
		if (gw_fh_check(key, false, fh.data, fh.len) != 0 ||
		    gw_fh_check(key, false, bad.data, bad.len) != -EBADF) {
			fprintf(stderr, "bench_fh: gw_fh_check answers wrong\n");
			return 1;
		}
		printf("handle of %3zu bytes (backing %3zu): make %6.1f ns, check %6.1f ns, "
		       "check forged %6.1f ns\n",
		       (size_t)fh.len, sizes[s], (t1 - t0) / (double)n, (t2 - t1) / (double)n,
		       (t3 - t2) / (double)n);
	}
	return sink == 42 ? 0 : 0;
}
