/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Inline passes, decided: what inline_us (a number, or auto) means for the
 * CPUs a program and the engine lcores have (rp_inline.c).
 */

#ifndef RP_INLINE_H
#define RP_INLINE_H

#include <sched.h>
#include <stdint.h>

#include "rocepmd.h"

struct rp_inline_choice {
	enum rp_inline_kind kind;
	uint32_t us;			/* stand-aside; 0 when off */
	char why[400];
	char brief[120];		/* for telemetry's 128-byte strings */
};

/*
 * Decide from inline_us (RP_INLINE_AUTO or a number), the CPUs the
 * program's threads may use and the union of the engine lcores' CPUs.
 */
void rp_inline_decide(uint32_t inline_us, const cpu_set_t *app,
		      const cpu_set_t *engine, struct rp_inline_choice *c);

/* The program's CPUs: recorded by rp_engine_app_cpus(), or the calling
 * thread's affinity. */
void rp_inline_app_cpus(cpu_set_t *set);

/* "0-1,4" into buf (empty set: "none"). */
const char *rp_cpuset_str(const cpu_set_t *set, char *buf, size_t len);

#endif /* RP_INLINE_H */
