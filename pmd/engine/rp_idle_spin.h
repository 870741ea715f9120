/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The spin of an "adaptive" lcore before it blocks, learnt from the idle
 * gaps it sees, as the kernel's haltpoll governor learns its poll
 * (drivers/cpuidle/governors/haltpoll.c): a gap the longest spin
 * (idle_us) would have caught after a shorter spin blocked grows the
 * spin; a gap no spin up to idle_us catches shrinks it.  A fixed spin of
 * idle_us cost a paced stream, a message every 50 us, the whole idle_us
 * a message in vain (guides/experiments_close_to_wire, eleventh round).
 * Pure arithmetic on cycles, so the unit tests drive it alone.
 */

#ifndef _RP_IDLE_SPIN_H_
#define _RP_IDLE_SPIN_H_

#include <stdint.h>

/* The first spin of a grown one: a quarter of the longest, as haltpoll's
 * grow_start (50 us) is of its default poll (200 us). */
static inline uint64_t
rp_idle_spin_start(uint64_t max)
{
	return max / 4;
}

/*
 * The spin after an idle gap of `gap` cycles that ended in work.  `blocked`:
 * the gap outlasted the spin and the lcore blocked (a gap the spin caught
 * says nothing new).  Returns +1 when it grew, -1 when it shrank, else 0.
 */
static inline int
rp_idle_spin_learn(uint64_t *spin, uint64_t max, uint64_t gap, int blocked)
{
	uint64_t s = *spin;

	if (!blocked)
		return 0;
	if (gap > max) {
		/* no spin up to max would have caught it: spin less */
		if (s == 0)
			return 0;
		s /= 2;
		*spin = s < rp_idle_spin_start(max) ? 0 : s;
		return -1;
	}
	if (gap <= s || s >= max)
		return 0;
	/* a longer spin would have caught it, without a block */
	s = s < rp_idle_spin_start(max) ? rp_idle_spin_start(max) : s * 2;
	*spin = s > max ? max : s;
	return 1;
}

#endif /* _RP_IDLE_SPIN_H_ */
