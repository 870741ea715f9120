/* SPDX-License-Identifier: BSD-3-Clause */
/* 24-bit PSN arithmetic: distance and addition across the wrap. */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "rp_psn.h"

static void
test_diff(void **state)
{
	(void)state;
	assert_int_equal(rp_psn_diff(5, 5), 0);
	assert_int_equal(rp_psn_diff(6, 5), 1);
	assert_int_equal(rp_psn_diff(5, 6), -1);
	/* across the wrap */
	assert_int_equal(rp_psn_diff(0, 0xffffff), 1);
	assert_int_equal(rp_psn_diff(0xffffff, 0), -1);
	assert_int_equal(rp_psn_diff(2, 0xfffffe), 4);
	assert_int_equal(rp_psn_diff(0xfffffe, 2), -4);
	/* the half-space boundary: +2^23-1 ahead, -2^23 behind */
	assert_int_equal(rp_psn_diff(0x7fffff, 0), 0x7fffff);
	assert_int_equal(rp_psn_diff(0x800000, 0), -0x800000);
	assert_int_equal(rp_psn_diff(0, 0x800000), -0x800000);
	assert_int_equal(rp_psn_diff(0x800001, 1), -0x800000);
	assert_int_equal(rp_psn_diff(0x7fffff + 10, 10), 0x7fffff);
	/* bits above the 24 are ignored */
	assert_int_equal(rp_psn_diff(0x01000005, 5), 0);
	assert_int_equal(rp_psn_diff(0xff000001, 0x00ffffff), 2);
}

static void
test_add(void **state)
{
	(void)state;
	assert_int_equal(rp_psn_add(0, 0), 0);
	assert_int_equal(rp_psn_add(1, 1), 2);
	assert_int_equal(rp_psn_add(0xffffff, 1), 0);
	assert_int_equal(rp_psn_add(0xfffffe, 5), 3);
	assert_int_equal(rp_psn_add(0x123456, 0x1000000), 0x123456);
	assert_int_equal(rp_psn_add(0, 0xffffffff), 0xffffff);
}

static void
test_add_diff_inverse(void **state)
{
	static const uint32_t base[] = {
		0, 1, 0x7fffff, 0x800000, 0xfffff0, 0xffffff,
	};
	unsigned int i;
	int32_t d;

	(void)state;
	for (i = 0; i < sizeof(base) / sizeof(base[0]); i++)
		for (d = -0x800000; d < 0x800000; d += 0x1fff) {
			uint32_t p = rp_psn_add(base[i], (uint32_t)d);

			assert_true(p <= RP_PSN_MASK);
			assert_int_equal(rp_psn_diff(p, base[i]), d);
		}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_diff),
		cmocka_unit_test(test_add),
		cmocka_unit_test(test_add_diff_inverse),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
