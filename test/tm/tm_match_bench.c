/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tm_match_bench: the cost of one match in the TM-SRQ tag matcher
 * (pmd/transport/rp_tm_list.c) against a plain linear list walk
 * (test/common/tm_linear.h), measured in the same run, with 1, 64, 1024
 * and 16384 posted tags in three shapes: all exact; all wildcard with one
 * mask (the low 4 bits free, as an MPI "any source" receive); wildcards
 * with 32 distinct masks (more than the RP_TM_CLASSES the matcher
 * indexes, so part of them sit in its overflow list).  A benchmark that
 * prints figures (a markdown table), not a test: it fails only if the two
 * matchers ever disagree.
 *
 *   tm_match_bench [ITERS]
 *
 * Each iteration matches the tag of a random posted entry, consumes the
 * entry and posts it again (so the list keeps N entries and the matched
 * one moves to the tail, as MPI receives do).
 */

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <rte_eal.h>

#include "rp_tm_list.h"
#include "tm_linear.h"

static uint64_t rng = 88172645463325252ull;

static uint64_t
rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static double
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

enum shape { EXACT, WILD1, WILD32, SHAPES };
static const char *const shape_names[SHAPES] = {
	"exact", "wildcard, 1 mask", "wildcard, 32 masks",
};

/* Entry i's tag and mask. */
static void
entry_of(uint32_t i, enum shape sh, uint64_t *tag, uint64_t *mask)
{
	switch (sh) {
	case EXACT:
		*mask = UINT64_MAX;
		break;
	case WILD1:
		*mask = ~0xfull;
		break;
	default:
		/* 32 masks, each freeing a different high bit too. */
		*mask = ~0xfull & ~(1ull << (40 + i % 32));
		break;
	}
	*tag = ((uint64_t)i << 4) & *mask;
}

/* ns per match over `iters` match-consume-repost rounds; -1 on mismatch. */
static int
run(uint32_t n, enum shape sh, uint32_t iters, double *ns_list,
    double *ns_lin)
{
	struct rp_tm_list l;
	struct tm_lin ref;
	uint32_t *pick = malloc(sizeof(*pick) * iters);
	uint64_t tag, mask;
	char name[32];
	double t0;

	snprintf(name, sizeof(name), "tm_bench_%u_%d", n, (int)sh);
	if (pick == NULL || rp_tm_list_init(&l, n, name) != 0 ||
	    tm_lin_init(&ref, n) != 0)
		return -1;
	for (uint32_t i = 0; i < n; i++) {
		entry_of(i, sh, &tag, &mask);
		rp_tm_list_add(&l, i, tag, mask, true);
		tm_lin_add(&ref, i, tag, mask, true);
	}
	for (uint32_t k = 0; k < iters; k++)
		pick[k] = (uint32_t)(rnd() % n);

	/* Both answers checked first, outside the timed loops. */
	for (uint32_t k = 0; k < iters && k < 4096; k++) {
		uint32_t a, b;

		entry_of(pick[k], sh, &tag, &mask);
		tag |= rnd() & ~mask;	/* a wildcard's free bits vary */
		a = rp_tm_list_match(&l, tag);
		b = tm_lin_match(&ref, tag);
		if (a != b || a == RP_TM_NONE) {
			fprintf(stderr, "tm_match_bench: n %u %s: matcher %u, "
				"linear %u\n", n, shape_names[sh], a, b);
			return -1;
		}
		/* The consumed entry goes back at the tail, as it was. */
		entry_of(a, sh, &tag, &mask);
		rp_tm_list_del(&l, a);
		rp_tm_list_add(&l, a, tag, mask, true);
		tm_lin_del(&ref, b);
		tm_lin_add(&ref, b, tag, mask, true);
	}

	t0 = now_ns();
	for (uint32_t k = 0; k < iters; k++) {
		uint32_t a;

		entry_of(pick[k], sh, &tag, &mask);
		a = rp_tm_list_match(&l, tag);
		entry_of(a, sh, &tag, &mask);
		rp_tm_list_del(&l, a);
		rp_tm_list_add(&l, a, tag, mask, true);
	}
	*ns_list = (now_ns() - t0) / iters;

	/* The linear walk is O(n): fewer rounds keep the run short. */
	iters = n >= 1024 ? iters / 16 : iters;
	t0 = now_ns();
	for (uint32_t k = 0; k < iters; k++) {
		uint32_t b;

		entry_of(pick[k], sh, &tag, &mask);
		b = tm_lin_match(&ref, tag);
		entry_of(b, sh, &tag, &mask);
		tm_lin_del(&ref, b);
		tm_lin_add(&ref, b, tag, mask, true);
	}
	*ns_lin = (now_ns() - t0) / iters;
	tm_lin_fini(&ref);
	rp_tm_list_fini(&l);
	free(pick);
	return 0;
}

int
main(int argc, char **argv)
{
	static const uint32_t sizes[] = { 1, 64, 1024, 16384 };
	uint32_t iters = argc > 1 ? (uint32_t)strtoul(argv[1], NULL, 0) : 200000;
	char prefix[64];
	char *eal[] = { argv[0], "--no-huge", "-m", "256", "--no-pci",
			"--no-shconf", prefix, "--log-level=lib.*:error", NULL };

	snprintf(prefix, sizeof(prefix), "--file-prefix=tm_bench_%d",
		 (int)getpid());
	if (iters < 16 || rte_eal_init(8, eal) < 0) {
		fprintf(stderr, "usage: tm_match_bench [ITERS >= 16] (EAL needed)\n");
		return 2;
	}
	printf("| posted tags | entries | rp_tm_list ns/match | linear ns/match | linear / rp_tm_list |\n");
	printf("|---|---|---|---|---|\n");
	for (int sh = 0; sh < SHAPES; sh++) {
		for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
			double a, b;

			if (run(sizes[i], (enum shape)sh, iters, &a, &b) < 0)
				return 1;
			printf("| %u | %s | %.1f | %.1f | %.1f |\n", sizes[i],
			       shape_names[sh], a, b, b / a);
			fflush(stdout);
		}
	}
	rte_eal_cleanup();
	return 0;
}
