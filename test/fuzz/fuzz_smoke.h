/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The smoke drivers' random numbers: xorshift64*, seeded per run from
 * RP_FUZZ_SEED or else the clock, and the seed printed first, so that any
 * failing run can be replayed exactly (RP_FUZZ_SEED=0x... again).
 */
#ifndef _FUZZ_SMOKE_H_
#define _FUZZ_SMOKE_H_

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static uint64_t smoke_rng;

static inline void
smoke_seed(const char *prog)
{
	const char *env = getenv("RP_FUZZ_SEED");
	struct timespec ts;

	if (env != NULL && env[0] != '\0') {
		smoke_rng = strtoull(env, NULL, 0);
	} else {
		clock_gettime(CLOCK_REALTIME, &ts);
		smoke_rng = (uint64_t)ts.tv_sec * 1000000007u ^
			(uint64_t)ts.tv_nsec ^ (uint64_t)getpid() << 32;
	}
	if (smoke_rng == 0)
		smoke_rng = 1;	/* xorshift's one fixed point */
	printf("%s: seed 0x%016" PRIx64 " (RP_FUZZ_SEED=0x%016" PRIx64
	       " replays this run)\n", prog, smoke_rng, smoke_rng);
	fflush(stdout);
}

static inline uint32_t
smoke_rnd(void)
{
	smoke_rng ^= smoke_rng >> 12;
	smoke_rng ^= smoke_rng << 25;
	smoke_rng ^= smoke_rng >> 27;
	return (uint32_t)((smoke_rng * 0x2545f4914f6cdd1dull) >> 32);
}

static inline uint32_t
smoke_below(uint32_t n)
{
	return n ? smoke_rnd() % n : 0;
}

#endif /* _FUZZ_SMOKE_H_ */
