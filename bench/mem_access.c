/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench/mem_access: what reaching an attached process's memory costs
 * through its /proc/PID/mem descriptor (pread/pwritev, pmd/transport/rp_mem.c since
 * issue 24) against process_vm_readv/writev by PID (before), in one run on
 * the same child process and the same buffers.  A benchmark that prints
 * figures, not a test.
 *
 *   mem_access [ITERS]
 *
 * Rows: a read or a write of one contiguous run of N bytes (one message's
 * payload), and a burst of 32 writes of 1 KiB each to scattered addresses
 * (32 small SENDs into 32 receive buffers: one process_vm_writev before,
 * 32 pwrite now) and to contiguous ones (32 packets of one message: one
 * system call either way).  ns per operation, median of 5 rounds, and the
 * ratio mem / pid.
 */

#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

#define AREA	(8u << 20)
#define BURST	32u

static int
cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

struct ctx {
	pid_t pid;
	int fd;
	uint8_t *remote;		/* the child's area (same address) */
	uint8_t *local;
	size_t n;
	bool scattered;
};

typedef int (*op_fn)(struct ctx *c);

static int
pid_read(struct ctx *c)
{
	struct iovec l = { c->local, c->n }, r = { c->remote, c->n };

	return process_vm_readv(c->pid, &l, 1, &r, 1, 0) == (ssize_t)c->n;
}

static int
mem_read(struct ctx *c)
{
	return pread(c->fd, c->local, c->n, (off_t)(uintptr_t)c->remote) ==
		(ssize_t)c->n;
}

static int
pid_write(struct ctx *c)
{
	struct iovec l = { c->local, c->n }, r = { c->remote, c->n };

	return process_vm_writev(c->pid, &l, 1, &r, 1, 0) == (ssize_t)c->n;
}

static int
mem_write(struct ctx *c)
{
	return pwrite(c->fd, c->local, c->n, (off_t)(uintptr_t)c->remote) ==
		(ssize_t)c->n;
}

/* A burst: BURST writes of 1 KiB, 64 KiB apart or back to back. */
static size_t
burst_iov(struct ctx *c, struct iovec *l, struct iovec *r)
{
	size_t stride = c->scattered ? 65536 : 1024;

	for (unsigned int i = 0; i < BURST; i++) {
		l[i] = (struct iovec){ c->local + i * 1024, 1024 };
		r[i] = (struct iovec){ c->remote + i * stride, 1024 };
	}
	return stride;
}

static int
pid_burst(struct ctx *c)
{
	struct iovec l[BURST], r[BURST];

	burst_iov(c, l, r);
	return process_vm_writev(c->pid, l, BURST, r, BURST, 0) ==
		BURST * 1024;
}

/* As rp_mem_flush_pending(): one pwritev per run of contiguous addresses. */
static int
mem_burst(struct ctx *c)
{
	struct iovec l[BURST], r[BURST];
	unsigned int i = 0, j;

	burst_iov(c, l, r);
	while (i < BURST) {
		uint8_t *end = (uint8_t *)r[i].iov_base + r[i].iov_len;
		size_t want = l[i].iov_len;

		for (j = i + 1; j < BURST && r[j].iov_base == end; j++) {
			end += r[j].iov_len;
			want += l[j].iov_len;
		}
		if (pwritev(c->fd, &l[i], (int)(j - i),
			    (off_t)(uintptr_t)r[i].iov_base) != (ssize_t)want)
			return 0;
		i = j;
	}
	return 1;
}

static double
measure(struct ctx *c, op_fn f, unsigned int iters)
{
	double r[5];

	for (int k = 0; k < 5; k++) {
		double t0 = bench_now_ns();

		for (unsigned int i = 0; i < iters; i++)
			if (!f(c)) {
				fprintf(stderr, "mem_access: an operation failed\n");
				exit(1);
			}
		r[k] = (bench_now_ns() - t0) / iters;
	}
	qsort(r, 5, sizeof(r[0]), cmp);
	return r[2];
}

int
main(int argc, char **argv)
{
	unsigned int iters = argc > 1 ? (unsigned int)atoi(argv[1]) : 20000;
	static const size_t sizes[] = { 64, 1024, 4096, 65536 };
	struct ctx c = { 0 };
	char path[64];
	int go[2];

	c.remote = mmap(NULL, AREA, PROT_READ | PROT_WRITE,
			MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	c.local = malloc(AREA);
	if (c.remote == MAP_FAILED || c.local == NULL || pipe(go) != 0)
		return 1;
	memset(c.remote, 1, AREA);
	memset(c.local, 2, AREA);
	c.pid = fork();
	if (c.pid == 0) {
		char b;

		/* The child: its own copy of the area's mapping, waiting. */
		close(go[1]);
		if (read(go[0], &b, 1) < 0)
			_exit(1);
		_exit(0);
	}
	snprintf(path, sizeof(path), "/proc/%d/mem", (int)c.pid);
	c.fd = open(path, O_RDWR | O_CLOEXEC);
	if (c.fd < 0) {
		perror(path);
		return 1;
	}
	printf("%-26s %10s %10s %7s\n", "operation", "pid ns", "mem ns",
	       "mem/pid");
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		double p, m;

		c.n = sizes[i];
		p = measure(&c, pid_read, iters);
		m = measure(&c, mem_read, iters);
		printf("read %-21zu %10.0f %10.0f %7.2f\n", c.n, p, m, m / p);
		p = measure(&c, pid_write, iters);
		m = measure(&c, mem_write, iters);
		printf("write %-20zu %10.0f %10.0f %7.2f\n", c.n, p, m, m / p);
	}
	for (int s = 0; s < 2; s++) {
		double p, m;

		c.scattered = s == 1;
		p = measure(&c, pid_burst, iters / 8);
		m = measure(&c, mem_burst, iters / 8);
		printf("burst 32 x 1 KiB %-9s %10.0f %10.0f %7.2f\n",
		       c.scattered ? "scattered" : "together", p, m, m / p);
	}
	close(go[1]);
	waitpid(c.pid, NULL, 0);
	return 0;
}
