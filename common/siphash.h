/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * SipHash-2-4 with a 128-bit output (Aumasson and Bernstein, "SipHash: a
 * fast short-input PRF", and the 128-bit variant of their reference
 * implementation): a keyed pseudo-random function over short inputs,
 * fast enough to authenticate every file handle a server hands out and
 * checks. lacunad's file handles carry its tag (gateway/export/gw_fh.c).
 */
#ifndef LACUNA_SIPHASH_H
#define LACUNA_SIPHASH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SIPHASH_KEY_BYTES 16
#define SIPHASH128_BYTES 16

/* The 16-byte tag of @len bytes at @in under @key (byte order as the reference). */
void siphash24_128(const uint8_t key[SIPHASH_KEY_BYTES], const void *in, size_t len,
		   uint8_t out[SIPHASH128_BYTES]);

/* @n bytes at @a and @b equal, in a time that does not depend on where they differ */
bool siphash_equal(const void *a, const void *b, size_t n);

#endif
