/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The adaptive lcore's naps in place of its spin (pmd/engine/rp_idle_nap.h):
 * when a trial runs, what each kind of workload makes of it, and how the
 * trials back off (only once a verdict is confirmed).
 */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "rp_idle_nap.h"

#define EPOCH	5400000u	/* 2 ms at 2.7 GHz */
#define CPU	2000000u	/* the whole epoch on the CPU, ns */

/* What the lcore does for a workload, spinning and napping. */
struct load {
	uint64_t spin_work, spin_cpu;
	uint64_t nap_work, nap_cpu;
};

/* A paced stream: the same work either way, naps cost a third less CPU. */
static const struct load stream = { 800, CPU, 800, CPU * 2 / 3 };
/* A ping-pong: naps delay each hop, a third of the round trips go. */
static const struct load pingpong = { 300, CPU, 200, CPU * 2 / 3 };
/* A slow stream: the same work, the same CPU: naps would only delay. */
static const struct load slow = { 80, CPU / 2, 80, CPU / 2 };

/* Runs `epochs` epochs of `l`; returns the sum of the returned turns. */
static int
run(struct rp_idle_nap *n, const struct load *l, unsigned int epochs,
    unsigned int *napped)
{
	int turns = 0;

	for (unsigned int i = 0; i < epochs; i++) {
		bool nap = rp_idle_nap_now(n);

		if (napped != NULL)
			*napped += nap;
		turns += rp_idle_nap_epoch(n, nap ? l->nap_work : l->spin_work,
					   EPOCH, nap ? l->nap_cpu :
					   l->spin_cpu);
	}
	return turns;
}

/* A stream turns to naps at its first trial and keeps them. */
static void
test_stream_naps(void **state)
{
	struct rp_idle_nap n = { 0 };

	(void)state;
	assert_false(rp_idle_nap_now(&n));
	/* RP_NAP_TRIAL_EVERY epochs spinning, then the trial */
	assert_int_equal(run(&n, &stream, RP_NAP_TRIAL_EVERY, NULL), 0);
	assert_true(rp_idle_nap_now(&n));
	assert_int_equal(run(&n, &stream, RP_NAP_TRIAL_EPOCHS, NULL), 1);
	assert_true(n.nap);
	/* trials of spinning now and then, each lost */
	assert_int_equal(run(&n, &stream, 4000, NULL), 0);
	assert_true(n.nap);
}

/* A ping-pong's trials end after one epoch, and come ever more rarely. */
static void
test_pingpong_spins(void **state)
{
	struct rp_idle_nap n = { 0 };
	unsigned int napped = 0;

	(void)state;
	assert_int_equal(run(&n, &pingpong, 3000, &napped), 0);
	assert_false(n.nap);
	/* trials at 32, +32 (the first refusal confirmed), +64, +128,
	 * +256, +512, +1024: one epoch each */
	assert_int_equal(napped, 7);
	assert_int_equal(n.every, RP_NAP_TRIAL_MAX);
}

/* Naps that save no CPU are not taken: they would only delay. */
static void
test_slow_spins(void **state)
{
	struct rp_idle_nap n = { 0 };
	unsigned int napped = 0;

	(void)state;
	assert_int_equal(run(&n, &slow, 3000, &napped), 0);
	assert_false(n.nap);
	/* a full trial each time: the work held */
	assert_int_equal(napped, 7 * RP_NAP_TRIAL_EPOCHS);
}

/*
 * A trial that a slow moment spoiled spaces the next one no further: the
 * stream's first trial finds naps as dear as spinning, its second, 32
 * epochs on, finds them cheaper and keeps them.
 */
static void
test_spoiled_trial(void **state)
{
	struct rp_idle_nap n = { 0 };
	const struct load spoiled = { 800, CPU, 800, CPU };

	(void)state;
	run(&n, &stream, RP_NAP_TRIAL_EVERY, NULL);
	assert_int_equal(run(&n, &spoiled, RP_NAP_TRIAL_EPOCHS, NULL), 0);
	assert_false(n.nap);
	assert_int_equal(n.every, RP_NAP_TRIAL_EVERY);
	assert_int_equal(run(&n, &stream, RP_NAP_TRIAL_EVERY +
			     RP_NAP_TRIAL_EPOCHS, NULL), 1);
	assert_true(n.nap);
}

/* Napping, a workload that naps start to cost turns back to spinning at
 * once: the rate moved fourfold, so its first trial comes soon. */
static void
test_back_to_spinning(void **state)
{
	struct rp_idle_nap n = { 0 };
	const struct load fast_pp = { 8000, CPU, 4000, CPU / 2 };

	(void)state;
	run(&n, &stream, 1000, NULL);
	assert_true(n.nap);
	assert_int_equal(run(&n, &fast_pp, RP_NAP_TRIAL_EVERY +
			     RP_NAP_TRIAL_EPOCHS, NULL), -1);
	assert_false(n.nap);
}

/* Epochs with too little work judge nothing, and end a trial unjudged. */
static void
test_idle_epochs(void **state)
{
	struct rp_idle_nap n = { 0 };
	const struct load idle = { 1, 1000, 1, 1000 };

	(void)state;
	assert_int_equal(run(&n, &idle, 5000, NULL), 0);
	assert_false(n.nap);
	assert_int_equal(n.epochs, 0);
	run(&n, &stream, RP_NAP_TRIAL_EVERY, NULL);
	assert_true(n.trial != 0);
	assert_int_equal(rp_idle_nap_epoch(&n, 0, EPOCH, 0), 0);
	assert_int_equal(n.trial, 0u);
	assert_false(n.nap);
}

/* The comparison itself: rate within 31/32, CPU a completion within 7/8. */
static void
test_better(void **state)
{
	const struct rp_idle_nap_sum spin = { 1000, EPOCH, CPU };
	struct rp_idle_nap_sum nap = { 1000, EPOCH, CPU * 7 / 8 };

	(void)state;
	assert_true(rp_idle_nap_better(&nap, &spin));
	nap.cpu_ns = CPU * 7 / 8 + 1000;
	assert_false(rp_idle_nap_better(&nap, &spin));
	nap.cpu_ns = CPU / 2;
	nap.work = 1000 * 31 / 32;	/* 968: under 31/32 */
	assert_false(rp_idle_nap_better(&nap, &spin));
	nap.work = 969;
	assert_true(rp_idle_nap_better(&nap, &spin));
	/* rates, not counts: the same work in a longer epoch is less */
	nap.work = 1000;
	nap.cycles = EPOCH * 2;
	assert_false(rp_idle_nap_better(&nap, &spin));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stream_naps),
		cmocka_unit_test(test_pingpong_spins),
		cmocka_unit_test(test_slow_spins),
		cmocka_unit_test(test_spoiled_trial),
		cmocka_unit_test(test_back_to_spinning),
		cmocka_unit_test(test_idle_epochs),
		cmocka_unit_test(test_better),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
