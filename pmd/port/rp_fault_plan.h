/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The fault plan of a port (rp_port_fault.c): which faults hit frame N of
 * a direction.  A pure function of (configuration, direction, N): the plan
 * replays from its seed whatever the timing, and frames may be asked
 * about in any order (test/unit/test_fault_plan.c does).
 */

#ifndef RP_FAULT_PLAN_H
#define RP_FAULT_PLAN_H

#include <stdint.h>

#include "rocepmd.h"

enum rp_fault_act {
	RP_FAULT_DROP = 1u << 0,
	RP_FAULT_CORRUPT = 1u << 1,
	RP_FAULT_DUP = 1u << 2,
	RP_FAULT_REORDER = 1u << 3,
	RP_FAULT_DELAY = 1u << 4,
	RP_FAULT_CE = 1u << 5,
};

/* Independent draws for one frame: one hash each. */
enum rp_fault_draw {
	RP_FAULT_DRAW_BURST, RP_FAULT_DRAW_CORRUPT, RP_FAULT_DRAW_WHERE,
	RP_FAULT_DRAW_DUP, RP_FAULT_DRAW_REORDER, RP_FAULT_DRAW_DELAY,
	RP_FAULT_DRAW_CE,
};

/* splitmix64's finalizer over (seed, direction, frame, draw). */
static inline uint64_t
rp_fault_hash(uint32_t seed, unsigned int dir, uint64_t n,
	      enum rp_fault_draw w)
{
	uint64_t x = ((uint64_t)seed << 32 | (uint64_t)dir << 8 | w) *
		0x9e3779b97f4a7c15ull ^ n;

	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

/* True with probability ppm per million for draw w of frame n. */
static inline int
rp_fault_hit(const struct rp_fault_cfg *f, unsigned int dir, uint64_t n,
	     enum rp_fault_draw w, uint32_t ppm)
{
	return ppm != 0 && rp_fault_hash(f->seed, dir, n, w) % 1000000u < ppm;
}

/*
 * The faults of frame n in direction dir (0 transmit, 1 receive), a mask
 * of enum rp_fault_act.  A drop burst of `burst` frames starts at a frame
 * with probability drop / burst per mille, and frame n is dropped when one
 * started at any of the `burst` frames up to it: about drop per mille of
 * the frames go, in runs of at least `burst`.  A dropped frame suffers
 * nothing else.
 */
static inline uint32_t
rp_fault_plan(const struct rp_fault_cfg *f, unsigned int dir, uint64_t n)
{
	const struct rp_fault_rates *r = dir == 0 ? &f->tx : &f->rx;
	uint32_t burst = f->burst > 1 ? f->burst : 1;
	uint32_t act = 0;

	if (r->drop != 0) {
		uint32_t ppm = r->drop * 1000u / burst;

		for (uint64_t m = n; m + burst > n; m--) {
			if (rp_fault_hit(f, dir, m, RP_FAULT_DRAW_BURST, ppm))
				return RP_FAULT_DROP;
			if (m == 0)
				break;
		}
	}
	if (rp_fault_hit(f, dir, n, RP_FAULT_DRAW_CORRUPT, r->corrupt * 1000u))
		act |= RP_FAULT_CORRUPT;
	if (rp_fault_hit(f, dir, n, RP_FAULT_DRAW_DUP, r->dup * 1000u))
		act |= RP_FAULT_DUP;
	if (rp_fault_hit(f, dir, n, RP_FAULT_DRAW_REORDER, r->reorder * 1000u))
		act |= RP_FAULT_REORDER;
	else if (rp_fault_hit(f, dir, n, RP_FAULT_DRAW_DELAY, r->delay * 1000u))
		act |= RP_FAULT_DELAY;
	if (rp_fault_hit(f, dir, n, RP_FAULT_DRAW_CE, r->ce * 1000u))
		act |= RP_FAULT_CE;
	return act;
}

#endif /* RP_FAULT_PLAN_H */
