/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The fault plan (pmd/port/rp_fault_plan.h): the fate of frame N is a function
 * of (seed, direction, N) only, so a plan replays whatever the order in
 * which frames are met; rates and drop bursts come out as configured.
 */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "rp_fault_plan.h"

#define N	200000u

static struct rp_fault_cfg
cfg(uint32_t seed)
{
	struct rp_fault_cfg f;

	memset(&f, 0, sizeof(f));
	f.tx.drop = 100;
	f.tx.dup = 20;
	f.tx.reorder = 20;
	f.tx.corrupt = 10;
	f.tx.delay = 30;
	f.rx = f.tx;
	f.burst = 1;
	f.reorder_depth = 3;
	f.delay_us = 1000;
	f.seed = seed;
	return f;
}

/* Frames met backwards, or in a scrambled order, get the same fate. */
static void
test_replay(void **state)
{
	static uint32_t fwd[N];
	struct rp_fault_cfg f = cfg(7);

	(void)state;
	f.burst = 5;
	for (uint64_t n = 0; n < N; n++)
		fwd[n] = rp_fault_plan(&f, 0, n);
	for (uint64_t n = N; n-- > 0;)
		assert_int_equal(rp_fault_plan(&f, 0, n), fwd[n]);
	for (uint64_t i = 0; i < N; i++) {
		uint64_t n = (i * 48271u) % N;	/* a permutation of 0..N-1 */

		assert_int_equal(rp_fault_plan(&f, 0, n), fwd[n]);
	}
}

/* Another seed or the other direction: another plan. */
static void
test_independent(void **state)
{
	struct rp_fault_cfg f = cfg(7), g = cfg(8);
	unsigned int same_seed = 0, same_dir = 0;

	(void)state;
	for (uint64_t n = 0; n < N; n++) {
		uint32_t a = rp_fault_plan(&f, 0, n);

		same_seed += (a & RP_FAULT_DROP) &&
			(rp_fault_plan(&g, 0, n) & RP_FAULT_DROP);
		same_dir += (a & RP_FAULT_DROP) &&
			(rp_fault_plan(&f, 1, n) & RP_FAULT_DROP);
	}
	/* independent 10% plans share about 1% of their drops' frames */
	assert_in_range(same_seed, N / 200, N / 50);
	assert_in_range(same_dir, N / 200, N / 50);
}

/* Each rate within 10% of what is asked for, 200000 frames. */
static void
test_rates(void **state)
{
	struct rp_fault_cfg f = cfg(3);
	unsigned int c[5] = { 0 };

	(void)state;
	for (uint64_t n = 0; n < N; n++) {
		uint32_t a = rp_fault_plan(&f, 1, n);

		for (unsigned int b = 0; b < 5; b++)
			c[b] += (a >> b) & 1;
		if (a & RP_FAULT_DROP)
			assert_int_equal(a, RP_FAULT_DROP);
		assert_false((a & RP_FAULT_REORDER) && (a & RP_FAULT_DELAY));
	}
	assert_in_range(c[0], N / 10 * 9 / 10, N / 10 * 11 / 10);
	/* the others on the frames not dropped */
	assert_in_range(c[1], N * 9 / 1000 * 9 / 10, N / 100);
	assert_in_range(c[2], N * 18 / 1000 * 9 / 10, N / 50);
	assert_in_range(c[3], N * 18 / 1000 * 9 / 10, N / 50);
	assert_in_range(c[4], N * 26 / 1000 * 9 / 10, N * 3 / 100);
}

/* Bursts: drops come in runs of at least `burst`, about the same share. */
static void
test_burst(void **state)
{
	struct rp_fault_cfg f = cfg(5);
	unsigned int dropped = 0, runs = 0, run = 0;

	(void)state;
	f.burst = 8;
	for (uint64_t n = 0; n < N; n++) {
		if (rp_fault_plan(&f, 0, n) & RP_FAULT_DROP) {
			dropped++;
			run++;
			continue;
		}
		if (run != 0) {
			assert_true(run >= 8 || n == run);
			runs++;
			run = 0;
		}
	}
	assert_in_range(dropped, N / 10 * 8 / 10, N / 10 * 11 / 10);
	assert_in_range(runs, dropped / 16, dropped / 8);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_replay),
		cmocka_unit_test(test_independent),
		cmocka_unit_test(test_rates),
		cmocka_unit_test(test_burst),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
