// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * SipHash-2-4, 128-bit output: two compression rounds per 8-byte word,
 * four finalization rounds, the second half of the tag from a second
 * finalization (the reference implementation's siphash() with outlen
 * 16). The tests check it against the reference vectors
 * (tests/unit/test_siphash.c).
 */
#include "siphash.h"

static inline uint64_t rotl(uint64_t x, unsigned int b)
{
	return (x << b) | (x >> (64 - b));
}

static inline uint64_t get_le64(const uint8_t *p)
{
	return (uint64_t)p[0] | (uint64_t)p[1] << 8 | (uint64_t)p[2] << 16 | (uint64_t)p[3] << 24 |
	       (uint64_t)p[4] << 32 | (uint64_t)p[5] << 40 | (uint64_t)p[6] << 48 |
	       (uint64_t)p[7] << 56;
}

static inline void put_le64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

#define SIPROUND                   \
	do {                       \
		v0 += v1;          \
		v1 = rotl(v1, 13); \
		v1 ^= v0;          \
		v0 = rotl(v0, 32); \
		v2 += v3;          \
		v3 = rotl(v3, 16); \
		v3 ^= v2;          \
		v0 += v3;          \
		v3 = rotl(v3, 21); \
		v3 ^= v0;          \
		v2 += v1;          \
		v1 = rotl(v1, 17); \
		v1 ^= v2;          \
		v2 = rotl(v2, 32); \
	} while (0)

void siphash24_128(const uint8_t key[SIPHASH_KEY_BYTES], const void *in, size_t len,
		   uint8_t out[SIPHASH128_BYTES])
{
	const uint8_t *p = in, *end = p + (len - len % 8);
	uint64_t k0 = get_le64(key), k1 = get_le64(key + 8);
	uint64_t v0 = 0x736f6d6570736575ULL ^ k0;
	uint64_t v1 = 0x646f72616e646f6dULL ^ k1 ^ 0xee;
	uint64_t v2 = 0x6c7967656e657261ULL ^ k0;
	uint64_t v3 = 0x7465646279746573ULL ^ k1;
	uint64_t m, b = (uint64_t)len << 56;
	int i;

	for (; p != end; p += 8) {
		m = get_le64(p);
		v3 ^= m;
		SIPROUND;
		SIPROUND;
		v0 ^= m;
	}
	for (i = (int)(len % 8) - 1; i >= 0; i--)
		b |= (uint64_t)p[i] << (8 * i);
	v3 ^= b;
	SIPROUND;
	SIPROUND;
	v0 ^= b;

	v2 ^= 0xee;
	for (i = 0; i < 4; i++)
		SIPROUND;
	put_le64(out, v0 ^ v1 ^ v2 ^ v3);

	v1 ^= 0xdd;
	for (i = 0; i < 4; i++)
		SIPROUND;
	put_le64(out + 8, v0 ^ v1 ^ v2 ^ v3);
}

bool siphash_equal(const void *a, const void *b, size_t n)
{
	const volatile uint8_t *x = a, *y = b;
	uint8_t d = 0;

	while (n--)
		d |= x[n] ^ y[n];
	return d == 0;
}
