/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_tm_list: the tag matcher (pmd/transport/rp_tm_list.c) against the linear
 * reference (test/common/tm_linear.h), with EAL (rte_hash, rte_malloc)
 * but no device.
 *
 * Directed cases, then seeded random sequences of add (exact and wildcard
 * masks, duplicate tags, tag bits outside the mask, in and out of sync),
 * del, sync and match-and-consume, where every match must name the same
 * entry as the reference.  RP_TEST_SEED replays a run.
 */

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_hash.h>

#include "rocepmd.h"
#include "rp_tm_list.h"
#include "tm_linear.h"

#define SIZE	512u

static int failures;

#define CHECK(cond, ...) do { \
	if (!(cond)) { \
		fprintf(stderr, "test_tm_list: FAIL line %d: ", __LINE__); \
		fprintf(stderr, __VA_ARGS__); \
		fprintf(stderr, "\n"); \
		failures++; \
		return; \
	} \
} while (0)

static uint64_t rng;

static uint64_t
rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static void
test_directed(void)
{
	struct rp_tm_list l;

	CHECK(rp_tm_list_init(&l, 8, "tm_dir") == 0, "init");
	/* Earliest posted wins, exact or wildcard. */
	CHECK(rp_tm_list_add(&l, 0, 0x10, 0xf0, true) == 0, "add 0");
	CHECK(rp_tm_list_add(&l, 1, 0x12, UINT64_MAX, true) == 0, "add 1");
	CHECK(rp_tm_list_add(&l, 2, 0x12, UINT64_MAX, true) == 0, "add 2");
	CHECK(rp_tm_list_match(&l, 0x12) == 0, "wildcard posted first");
	rp_tm_list_del(&l, 0);
	CHECK(rp_tm_list_match(&l, 0x12) == 1, "exact FIFO head");
	rp_tm_list_del(&l, 1);
	CHECK(rp_tm_list_match(&l, 0x12) == 2, "exact FIFO next");
	rp_tm_list_del(&l, 2);
	CHECK(rp_tm_list_match(&l, 0x12) == RP_TM_NONE, "empty");
	/* A tag whose last exact entry went, added again. */
	CHECK(rp_tm_list_add(&l, 3, 0x12, UINT64_MAX, true) == 0, "re-add");
	CHECK(rp_tm_list_match(&l, 0x12) == 3, "re-added tag");
	/* Bits outside the mask never match. */
	CHECK(rp_tm_list_add(&l, 4, 0x1, 0x0, true) == 0, "add 4");
	CHECK(rp_tm_list_match(&l, 0x1) == RP_TM_NONE, "tag outside mask");
	/* Ineligible entries wait for sync; older ones stay eligible. */
	CHECK(rp_tm_list_add(&l, 5, 0x77, UINT64_MAX, false) == 0, "add 5");
	CHECK(rp_tm_list_add(&l, 6, 0x78, 0xff, true) == 0, "add 6");
	CHECK(rp_tm_list_match(&l, 0x77) == RP_TM_NONE, "ineligible");
	CHECK(rp_tm_list_match(&l, 0x78) == RP_TM_NONE,
	      "added after an ineligible one");
	CHECK(rp_tm_list_match(&l, 0x12) == 3, "older still eligible");
	rp_tm_list_sync(&l);
	CHECK(rp_tm_list_match(&l, 0x77) == 5, "eligible after sync");
	CHECK(rp_tm_list_match(&l, 0x78) == 6, "eligible after sync");
	/* Full list, then an entry listed twice. */
	CHECK(rp_tm_list_add(&l, 7, 0x99, UINT64_MAX, true) == 0, "add 7");
	CHECK(rp_tm_list_add(&l, 7, 0x99, UINT64_MAX, true) < 0, "listed twice");
	CHECK(rp_tm_list_add(&l, 8, 0x99, UINT64_MAX, true) < 0, "index >= size");
	CHECK(l.nr_listed == 5, "nr_listed %u", l.nr_listed);
	rp_tm_list_fini(&l);
}

static void
test_random(uint32_t rounds)
{
	struct rp_tm_list l;
	struct tm_lin ref;
	bool listed[SIZE] = { false };
	uint64_t matches = 0;

	CHECK(rp_tm_list_init(&l, SIZE, "tm_rand") == 0, "init");
	CHECK(tm_lin_init(&ref, SIZE) == 0, "ref init");
	for (uint32_t r = 0; r < rounds; r++) {
		uint32_t op = rnd() % 100;
		uint32_t idx = rnd() % SIZE;
		/* Few distinct tags, so duplicates and overlaps are common. */
		uint64_t tag = rnd() % 64;

		if (op < 45) {
			uint64_t mask;
			bool elig = rnd() % 8 != 0;

			if (listed[idx])
				continue;
			switch (rnd() % 4) {
			case 0:
			case 1:
				mask = UINT64_MAX;
				break;
			case 2:
				mask = 0x3c;	/* wildcard */
				tag &= mask;
				break;
			default:
				mask = rnd() % 64;	/* bits may stray */
				break;
			}
			CHECK(rp_tm_list_add(&l, idx, tag, mask, elig) == 0,
			      "round %u: add %u", r, idx);
			tm_lin_add(&ref, idx, tag, mask, elig);
			listed[idx] = true;
		} else if (op < 55) {
			if (!listed[idx])
				continue;
			rp_tm_list_del(&l, idx);
			tm_lin_del(&ref, idx);
			listed[idx] = false;
		} else if (op < 60) {
			rp_tm_list_sync(&l);
			tm_lin_sync(&ref);
		} else {
			uint32_t got = rp_tm_list_match(&l, tag);
			uint32_t want = tm_lin_match(&ref, tag);

			if (got != want) {
				for (uint32_t i = 0; i < ref.n; i++)
					fprintf(stderr, "  ref[%u] idx %u tag 0x%" PRIx64
						" mask 0x%" PRIx64 " seq %" PRIu64 "\n", i,
						ref.e[i].idx, ref.e[i].tag, ref.e[i].mask,
						ref.e[i].seq);
				fprintf(stderr, "  limit %" PRIu64 " / %" PRIu64
					"; got seq %" PRIu64 "\n", l.elig_limit,
					ref.limit, got != RP_TM_NONE ?
					l.ent[got].seq : 0);
			}
			CHECK(got == want, "round %u: tag %" PRIu64
			      ": matcher %u, reference %u", r, tag, got, want);
			if (got != RP_TM_NONE) {
				rp_tm_list_del(&l, got);
				tm_lin_del(&ref, got);
				listed[got] = false;
				matches++;
			}
		}
		/* Every indexed entry sits in the bucket of its key. */
		for (uint32_t i = 0; i < SIZE; i++) {
			const struct rp_tm_entry *e = &l.ent[i];
			const struct rp_tm_key k = { e->mask, e->tag };

			if (e->listed && e->bucket != RP_TM_NONE)
				CHECK(rte_hash_lookup(l.hash, &k) ==
				      (int32_t)e->bucket, "round %u: entry %u "
				      "(tag %" PRIu64 ") in bucket %u, hash says %d",
				      r, i, e->tag, e->bucket,
				      rte_hash_lookup(l.hash, &k));
		}
		CHECK(l.nr_listed == ref.n, "round %u: %u listed, reference %u",
		      r, l.nr_listed, ref.n);
	}
	printf("test_tm_list: %u random rounds, %" PRIu64 " matches agreed\n",
	       rounds, matches);
	tm_lin_fini(&ref);
	rp_tm_list_fini(&l);
}

int
main(int argc, char **argv)
{
	char prefix[64];
	char *eal[] = { argv[0], "--no-huge", "-m", "128", "--no-pci",
			"--no-shconf", "--no-telemetry", prefix,
			"--log-level=lib.*:error", NULL };
	const char *env = getenv("RP_TEST_SEED");

	(void)argc;
	snprintf(prefix, sizeof(prefix), "--file-prefix=tm_list_%d",
		 (int)getpid());
	if (rte_eal_init((int)RTE_DIM(eal) - 1, eal) < 0) {
		fprintf(stderr, "test_tm_list: rte_eal_init failed\n");
		return 1;
	}
	rp_eal_rundir_note();	/* removed after rte_eal_cleanup() */
	rng = env != NULL ? strtoull(env, NULL, 0) :
		(uint64_t)time(NULL) ^ ((uint64_t)getpid() << 20);
	if (rng == 0)
		rng = 1;
	printf("test_tm_list: seed %" PRIu64 " (RP_TEST_SEED replays)\n", rng);
	test_directed();
	for (int i = 0; i < 20 && failures == 0; i++)
		test_random(20000);
	rte_eal_cleanup();
	rp_eal_rundir_remove();
	if (failures != 0) {
		printf("test_tm_list: FAIL (%d)\n", failures);
		return 1;
	}
	printf("test_tm_list: PASS\n");
	return 0;
}
