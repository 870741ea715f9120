/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What bench/'s micro-benchmarks share: the clock they time with, and how
 * a thread pins itself to a CPU.
 */

#ifndef BENCH_H
#define BENCH_H

#include <pthread.h>
#include <sched.h>
#include <time.h>

static inline double
bench_now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

/* The calling thread on `cpu` alone: 0, or an error (no such CPU). */
static inline int
bench_pin(int cpu)
{
	cpu_set_t s;

	if (cpu < 0 || cpu >= CPU_SETSIZE)
		return -1;
	CPU_ZERO(&s);
	CPU_SET(cpu, &s);
	return pthread_setaffinity_np(pthread_self(), sizeof(s), &s);
}

#endif /* BENCH_H */
