/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * XDR input built by hand for the unit tests: a buffer and the words,
 * hypers and opaques put into it, big-endian as on the wire. Include
 * after <cmocka.h>.
 */
#ifndef LACUNA_LT_WIRE_H
#define LACUNA_LT_WIRE_H

#include <stdint.h>
#include <string.h>

#include "xdr.h"

#define LT_WIRE_MAX 16384

struct lt_wire {
	uint8_t b[LT_WIRE_MAX];
	size_t n;
};

static inline void lt_put32(struct lt_wire *w, uint32_t v)
{
	assert_true(w->n + 4 <= sizeof(w->b));
	xdr_put_u32(w->b + w->n, v);
	w->n += 4;
}

static inline void lt_put64(struct lt_wire *w, uint64_t v)
{
	lt_put32(w, (uint32_t)(v >> 32));
	lt_put32(w, (uint32_t)v);
}

/* an opaque<>: its length, its bytes, its pad */
static inline void lt_putopaque(struct lt_wire *w, const void *p, uint32_t len)
{
	lt_put32(w, len);
	assert_true(w->n + XDR_ALIGN(len) <= sizeof(w->b));
	memcpy(w->b + w->n, p, len);
	memset(w->b + w->n + len, 0, XDR_PAD(len));
	w->n += XDR_ALIGN(len);
}

#endif
