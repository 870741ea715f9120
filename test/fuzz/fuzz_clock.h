/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Forced into every engine source of the transport fuzzer (-include): the
 * engine's clock becomes the fuzzer's, which moves only when an input says
 * so.  Retransmit, RNR and ARP timers then fire at the same point of an
 * input on every run, whatever the machine's speed.
 */
#ifndef _FUZZ_CLOCK_H_
#define _FUZZ_CLOCK_H_

#include <stdint.h>

#include <rte_cycles.h>

uint64_t fz_clock_cycles(void);

#define rte_get_timer_cycles() fz_clock_cycles()

#endif /* _FUZZ_CLOCK_H_ */
