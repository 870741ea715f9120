/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Durations of the configuration (microseconds) as cycles of
 * rte_get_timer_cycles(), the engine's clock, and back.  us * hz first:
 * exact, and no overflow for any us below 10^9 (a thousand seconds) at
 * any clock below 18 GHz.  rte_get_timer_hz() is a call: a pass that
 * compares against a fixed duration converts it once.
 */

#ifndef _RP_TIME_H_
#define _RP_TIME_H_

#include <stdint.h>

#include <rte_cycles.h>

static inline uint64_t
rp_us_cycles(uint64_t us)
{
	return us * rte_get_timer_hz() / 1000000u;
}

static inline uint64_t
rp_cycles_us(uint64_t cycles)
{
	return cycles * 1000000u / rte_get_timer_hz();
}

#endif /* _RP_TIME_H_ */
