/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The adaptive lcore's learnt spin (pmd/engine/rp_idle_spin.h): what each
 * idle gap does to it, and where a stream of gaps takes it.
 */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "rp_idle_spin.h"

#define MAX	3000u	/* idle_us 30 at 100 cycles a microsecond */
#define START	(MAX / 4)

/* A gap the spin caught (no block) changes nothing, however long. */
static void
test_not_blocked(void **state)
{
	uint64_t spin = START;

	(void)state;
	assert_int_equal(rp_idle_spin_learn(&spin, MAX, 10 * MAX, 0), 0);
	assert_int_equal(spin, START);
	assert_int_equal(rp_idle_spin_learn(&spin, MAX, MAX / 2, 0), 0);
	assert_int_equal(spin, START);
}

/* Gaps past the longest spin halve it, then end it below the start. */
static void
test_shrink(void **state)
{
	uint64_t spin = MAX;

	(void)state;
	assert_int_equal(rp_idle_spin_learn(&spin, MAX, MAX + 1, 1), -1);
	assert_int_equal(spin, MAX / 2);
	assert_int_equal(rp_idle_spin_learn(&spin, MAX, 50 * MAX, 1), -1);
	assert_int_equal(spin, MAX / 4);
	assert_int_equal(rp_idle_spin_learn(&spin, MAX, 2 * MAX, 1), -1);
	assert_int_equal(spin, 0);
	/* nothing left to shrink */
	assert_int_equal(rp_idle_spin_learn(&spin, MAX, 2 * MAX, 1), 0);
	assert_int_equal(spin, 0);
}

/* A gap within the longest spin, past the current one, grows it: from
 * nothing to the start, then doubling up to the longest. */
static void
test_grow(void **state)
{
	uint64_t spin = 0;

	(void)state;
	assert_int_equal(rp_idle_spin_learn(&spin, MAX, 1, 1), 1);
	assert_int_equal(spin, START);
	assert_int_equal(rp_idle_spin_learn(&spin, MAX, MAX, 1), 1);
	assert_int_equal(spin, 2 * START);
	assert_int_equal(rp_idle_spin_learn(&spin, MAX, 2 * START + 1, 1), 1);
	assert_int_equal(spin, MAX);
	/* at the longest: a gap within it has nothing to teach */
	assert_int_equal(rp_idle_spin_learn(&spin, MAX, MAX, 1), 0);
	assert_int_equal(spin, MAX);
	/* a gap within the current spin after a block (a wake-up that
	 * raced the spin's end) keeps it */
	spin = 2 * START;
	assert_int_equal(rp_idle_spin_learn(&spin, MAX, START, 1), 0);
	assert_int_equal(spin, 2 * START);
}

/* A paced stream whose gaps all outlast idle_us ends without a spin; a
 * ping-pong whose gaps all fit keeps the whole spin. */
static void
test_streams(void **state)
{
	uint64_t spin = MAX;
	unsigned int i;

	(void)state;
	for (i = 0; i < 10; i++)
		rp_idle_spin_learn(&spin, MAX, 5 * MAX / 3, 1);
	assert_int_equal(spin, 0);
	for (i = 0; i < 10; i++)
		rp_idle_spin_learn(&spin, MAX, MAX - 1, 1);
	assert_int_equal(spin, MAX);
	/* no longest spin (idle_us 0): never a spin */
	spin = 0;
	assert_int_equal(rp_idle_spin_learn(&spin, 0, 1, 1), 0);
	assert_int_equal(spin, 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_not_blocked),
		cmocka_unit_test(test_shrink),
		cmocka_unit_test(test_grow),
		cmocka_unit_test(test_streams),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
