/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench/wake_cost: what one wake-up costs the waker on this machine.  A
 * thread blocks in read() on an eventfd, pinned to a CPU; the main thread,
 * pinned to CPU 1 (0 on a 1-CPU machine), sleeps GAP µs and then writes
 * the eventfd, timing the write(): the price the engine lcore pays for a
 * completion event to a program asleep in ibv_get_cq_event(), or a
 * program for a doorbell to an `adaptive` lcore that blocked.  In a
 * virtual machine whose idle vCPUs halt at once (cpuidle haltpoll,
 * guest_halt_poll_ns 0) the write to a thread on the other, idle CPU
 * waits for the hypervisor (guides/config, "Virtual machines").  A
 * benchmark that prints figures, not a test.
 *
 *   wake_cost [WAKES]      (default 2000 per row)
 *
 * Rows: the waiter on the other CPU, then on the waker's own, at gaps of
 * 5, 50 and 200 µs; µs per write: median, mean, 90th percentile.  The
 * last line: the CPUs' idle behaviour, as rocepmd reports it.
 */

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

struct waiter {
	int efd;
	int cpu;
	volatile int stop;
};

static void *
wait_loop(void *arg)
{
	struct waiter *w = arg;
	uint64_t v;

	if (bench_pin(w->cpu) != 0)
		return NULL;
	while (!w->stop)
		if (read(w->efd, &v, sizeof(v)) < 0 && errno != EINTR)
			break;
	return NULL;
}

static int
cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* One row: n wake-ups of a waiter on wcpu, gap µs apart; 0 or -1. */
static int
row(int wcpu, int mycpu, unsigned int gap, unsigned int n, double *d)
{
	struct waiter w = { .cpu = wcpu };
	struct timespec nap = { 0, (long)gap * 1000 };
	const uint64_t one = 1;
	pthread_t t;
	double sum = 0;

	w.efd = eventfd(0, 0);
	if (w.efd < 0 || pthread_create(&t, NULL, wait_loop, &w) != 0) {
		perror("wake_cost: eventfd/thread");
		return -1;
	}
	for (unsigned int i = 0; i < n + 10; i++) {
		double t0;

		nanosleep(&nap, NULL);
		t0 = bench_now_ns() / 1e3;
		if (write(w.efd, &one, sizeof(one)) != sizeof(one)) {
			perror("wake_cost: write");
			return -1;
		}
		if (i >= 10)	/* the first ones: the thread starting */
			d[i - 10] = bench_now_ns() / 1e3 - t0;
	}
	w.stop = 1;
	if (write(w.efd, &one, sizeof(one)) != sizeof(one))
		return -1;
	pthread_join(t, NULL);
	close(w.efd);
	for (unsigned int i = 0; i < n; i++)
		sum += d[i];
	qsort(d, n, sizeof(*d), cmp_d);
	printf("%-6s %-6d %-6d %8u %10.2f %10.2f %10.2f\n",
	       wcpu == mycpu ? "same" : "other", wcpu, mycpu, gap,
	       d[n / 2], sum / n, d[n * 9 / 10]);
	return 0;
}

int
main(int argc, char **argv)
{
	static const unsigned int gaps[] = { 5, 50, 200 };
	unsigned int n = argc > 1 ? (unsigned int)strtoul(argv[1], NULL, 0) :
		2000;
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	int me = ncpu > 1 ? 1 : 0;
	char drv[64] = "none", ns[32] = "";
	double *d;
	FILE *f;

	if (n == 0 || n > 1000000) {
		fprintf(stderr, "usage: wake_cost [WAKES (1..1000000)]\n");
		return 2;
	}
	d = calloc(n + 10, sizeof(*d));
	if (d == NULL || bench_pin(me) != 0) {
		fprintf(stderr, "wake_cost: cannot run on CPU %d\n", me);
		return 1;
	}
	printf("waiter cpu    waker   gap_us  median_us    mean_us     p90_us\n");
	for (int other = 1; other >= 0; other--) {
		if (other && ncpu < 2)
			continue;
		for (size_t g = 0; g < sizeof(gaps) / sizeof(gaps[0]); g++)
			if (row(other ? 0 : me, me, gaps[g], n, d) != 0)
				return 1;
	}
	f = fopen("/sys/devices/system/cpu/cpuidle/current_driver", "r");
	if (f != NULL) {
		if (fgets(drv, sizeof(drv), f) != NULL)
			drv[strcspn(drv, "\n")] = '\0';
		fclose(f);
	}
	f = fopen("/sys/module/haltpoll/parameters/guest_halt_poll_ns", "r");
	if (f != NULL && strcmp(drv, "haltpoll") == 0) {
		if (fgets(ns, sizeof(ns), f) != NULL)
			ns[strcspn(ns, "\n")] = '\0';
	}
	if (f != NULL)
		fclose(f);
	printf("idle CPUs: %s%s%s\n", drv, ns[0] != '\0' ? ":" : "", ns);
	free(d);
	return 0;
}
