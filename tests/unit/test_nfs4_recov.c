// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests of the client record format of nfs4_recov.c: a record
 * decodes to what was encoded, and every torn or damaged variant is
 * refused with its reason (never trusted).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "nfs4_recov.h"

static const uint8_t NAME[] = "Linux NFSv4.1 client.example.org";

static size_t make(uint8_t *buf)
{
	struct nfs4_rec rec = {
		.minor = 1,
		.clientid = 0x1234567800000042ULL,
		.boot = 77,
		.flavor = 1,
		.uid = 1000,
		.gid = 100,
		.verf = { 1, 2, 3, 4, 5, 6, 7, 8 },
		.name = NAME,
		.name_len = sizeof(NAME) - 1,
	};

	return nfs4_rec_encode(&rec, buf);
}

static void test_round_trip(void **state)
{
	uint8_t buf[NFS4_REC_MAX];
	struct nfs4_rec rec;
	const char *why = NULL;
	size_t n = make(buf);

	(void)state;
	assert_int_equal(n, NFS4_REC_HDR + sizeof(NAME) - 1 + 4);
	assert_int_equal(nfs4_rec_decode(buf, n, &rec, &why), 0);
	assert_int_equal(rec.minor, 1);
	assert_true(rec.clientid == 0x1234567800000042ULL);
	assert_int_equal(rec.boot, 77);
	assert_int_equal(rec.uid, 1000);
	assert_int_equal(rec.gid, 100);
	assert_int_equal(rec.verf[7], 8);
	assert_int_equal(rec.name_len, sizeof(NAME) - 1);
	assert_memory_equal(rec.name, NAME, rec.name_len);
}

static void test_every_flipped_byte_is_caught(void **state)
{
	uint8_t buf[NFS4_REC_MAX];
	struct nfs4_rec rec;
	const char *why;
	size_t n = make(buf), i;

	(void)state;
	for (i = 0; i < n; i++) {
		buf[i] ^= 0x40;
		why = NULL;
		assert_int_equal(nfs4_rec_decode(buf, n, &rec, &why), -EBADMSG);
		assert_non_null(why);
		buf[i] ^= 0x40;
	}
}

static void test_torn(void **state)
{
	uint8_t buf[NFS4_REC_MAX + 8];
	struct nfs4_rec rec;
	const char *why;
	size_t n = make(buf), len;

	(void)state;
	for (len = 0; len < n; len++)
		assert_int_equal(nfs4_rec_decode(buf, len, &rec, &why), -EBADMSG);
	assert_int_equal(nfs4_rec_decode(buf, 10, &rec, &why), -EBADMSG);
	assert_string_equal(why, "too short");
	assert_int_equal(nfs4_rec_decode(buf, n - 1, &rec, &why), -EBADMSG);
	assert_string_equal(why, "bad length");
	memset(buf + n, 0, 8);
	assert_int_equal(nfs4_rec_decode(buf, n + 8, &rec, &why), -EBADMSG);
	assert_string_equal(why, "bad length");
}

static void test_not_a_record(void **state)
{
	uint8_t buf[NFS4_REC_MAX];
	struct nfs4_rec rec;
	const char *why;
	size_t n = make(buf);

	(void)state;
	memcpy(buf, "LCNCLNT9", 8);
	assert_int_equal(nfs4_rec_decode(buf, n, &rec, &why), -EBADMSG);
	assert_string_equal(why, "not a client record");
	/* a known check value of CRC-32 (IEEE) */
	assert_true(nfs4_rec_crc32((const uint8_t *)"123456789", 9) == 0xcbf43926U);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_every_flipped_byte_is_caught),
		cmocka_unit_test(test_torn),
		cmocka_unit_test(test_not_a_record),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
