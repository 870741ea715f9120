/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench/line_rtt: what a cache line's round trip between two CPUs costs
 * now.  Two threads, pinned to CPUs A and B, hand a word back and forth
 * (each spins until the other's store reaches it).  Every frame, WQE,
 * CQE and ring index a one-process run moves between the client's and
 * the server's threads crosses the same way, so a run's rate follows it.
 * In a virtual machine the host may place the two vCPUs on cores that
 * share a last-level cache or not, and move them while it runs: on the
 * project's machines 55-60 ns one hour and 330-350 ns the next, the 64 B
 * send_bw of bench/close_to_wire.sh 0.47-0.49 and 0.29-0.30 of raw with
 * it (raw, one thread, does not move).  The benchmarks print it beside
 * each figure.  A benchmark that prints figures, not a test.
 *
 *   line_rtt [CPU_A CPU_B [ROUND_TRIPS]]   (0 1 20000)
 *
 * Prints the median of five batches of ROUND_TRIPS, in ns, on one line:
 * "line round trip CPU A <-> B: N ns"; "n/a" (exit 1) if a CPU cannot be
 * had or the other thread did not answer within a second.
 */

#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "bench.h"

#define BATCHES	5

struct pong {
	int cpu;
	uint64_t n;
	int ok;
};

/* The word the two threads hand back and forth, alone on its line. */
static _Alignas(64) volatile uint64_t word;
static volatile int quit;

/* Spin until the word is v; 0, or -1 after a second (or told to quit). */
static int
await(uint64_t v)
{
	double t0 = 0;

	for (uint32_t i = 0; word != v; i++) {
		if ((i & 0xffff) != 0)
			continue;
		if (quit)
			return -1;
		if (t0 == 0)
			t0 = bench_now_ns();
		else if (bench_now_ns() - t0 > 1e9)
			return -1;
	}
	return 0;
}

static void *
pong_loop(void *arg)
{
	struct pong *p = arg;

	if (bench_pin(p->cpu) != 0)
		return NULL;
	for (uint64_t i = 1; i <= p->n; i++) {
		if (await(2 * i - 1) != 0)
			return NULL;
		word = 2 * i;
	}
	p->ok = 1;
	return NULL;
}

static int
cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int
main(int argc, char **argv)
{
	int a = argc > 2 ? atoi(argv[1]) : 0, b = argc > 2 ? atoi(argv[2]) : 1;
	uint64_t n = argc > 3 ? strtoull(argv[3], NULL, 0) : 20000;
	struct pong p = { .cpu = b, .n = n * BATCHES };
	double ns[BATCHES];
	pthread_t t;
	int ok = 1;

	if (n == 0 || n > 100000000 || argc == 2) {
		fprintf(stderr, "usage: line_rtt [CPU_A CPU_B [ROUND_TRIPS]]\n");
		return 2;
	}
	if (a == b || bench_pin(a) != 0 ||
	    pthread_create(&t, NULL, pong_loop, &p) != 0) {
		printf("line round trip CPU %d <-> %d: n/a\n", a, b);
		return 1;
	}
	for (int k = 0; k < BATCHES && ok; k++) {
		double t0 = bench_now_ns();

		for (uint64_t i = k * n + 1; i <= (k + 1) * n; i++) {
			word = 2 * i - 1;
			if (await(2 * i) != 0) {
				ok = 0;
				break;
			}
		}
		ns[k] = (bench_now_ns() - t0) / (double)n;
	}
	quit = 1;
	pthread_join(t, NULL);
	if (!ok || !p.ok) {
		printf("line round trip CPU %d <-> %d: n/a\n", a, b);
		return 1;
	}
	qsort(ns, BATCHES, sizeof(ns[0]), cmp_d);
	printf("line round trip CPU %d <-> %d: %.0f ns\n", a, b,
	       ns[BATCHES / 2]);
	return 0;
}
