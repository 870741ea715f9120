/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench/icrc_cost: what the ICRC of one frame costs on this machine, with
 * the engine's own code (rp_icrc_calc(), pmd/wire/rp_icrc.c).  Every RoCE
 * frame takes one when it is built and one when it is received; raw
 * frames take none.  The CRC runs on the CPU's carry-less multiply, 128
 * bits at a time, or 256 and 512 with VPCLMULQDQ: the same build is
 * several times faster on a CPU that has it, and the bandwidth ratios of
 * bench/close_to_wire.sh move with it (guides/experiments_close_to_wire,
 * eighteenth round).  A benchmark that prints figures, not a test.
 *
 *   icrc_cost [ITERS]      (default 200000 per size)
 *
 * Rows: IPv4 RoCE frames (IP header to payload, as the engine passes
 * them) of a 64 B SEND, and of the frames of IB MTU 1024 and 4096; ns per
 * frame (the best of 5 passes, the frame in cache), GB/s, then ns per
 * 64 KiB message at that MTU, both ends.  The last line: what the CPU
 * offers (the flags the CRC can use).
 */

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench.h"
#include "rp_icrc.h"

/* The CRCs' results go here, so that the compiler computes them. */
static volatile uint32_t icrc_sink;

/* IPv4 (20), UDP (8), BTH (12): what precedes a SEND's payload */
#define HDR	40u

static double
cost_ns(const uint8_t *l3, uint32_t len, long iters, uint32_t *sink)
{
	double best = 0;

	for (int pass = 0; pass < 5; pass++) {
		double t0 = bench_now_ns(), dt;
		uint32_t c = 0;

		for (long i = 0; i < iters; i++)
			c ^= rp_icrc_calc(l3, len);
		dt = (bench_now_ns() - t0) / (double)iters;
		*sink ^= c;
		if (pass == 0 || dt < best)
			best = dt;
	}
	return best;
}

static void
cpu_flags(void)
{
	static const char *const want[] = {
		"pclmulqdq", "vpclmulqdq", "avx2", "avx512f",
	};
	char line[8192], model[256] = "?";
	FILE *f = fopen("/proc/cpuinfo", "r");
	bool has[4] = { false };

	if (f == NULL) {
		printf("cpu: unknown (no /proc/cpuinfo)\n");
		return;
	}
	while (fgets(line, sizeof(line), f) != NULL) {
		if (strncmp(line, "model name", 10) == 0 && model[0] == '?') {
			char *v = strchr(line, ':');

			if (v != NULL)
				snprintf(model, sizeof(model), "%s", v + 2);
			model[strcspn(model, "\n")] = '\0';
		}
		if (strncmp(line, "flags", 5) != 0)
			continue;
		for (size_t i = 0; i < 4; i++) {
			char tok[32];

			snprintf(tok, sizeof(tok), " %s", want[i]);
			/* whole words: " avx2" must not match " avx2x" */
			for (char *p = strstr(line, tok); p != NULL;
			     p = strstr(p + 1, tok)) {
				char e = p[strlen(tok)];

				if (e == ' ' || e == '\n' || e == '\0') {
					has[i] = true;
					break;
				}
			}
		}
		break;
	}
	fclose(f);
	printf("cpu: %s;", model);
	for (size_t i = 0; i < 4; i++)
		printf(" %s %s", want[i], has[i] ? "yes" : "no");
	printf("\n");
}

int
main(int argc, char **argv)
{
	static const struct { const char *what; uint32_t pay; uint32_t mtu; }
	rows[] = {
		{ "64 B SEND", 64, 0 },
		{ "IB MTU 1024 frame", 1024, 1024 },
		{ "IB MTU 4096 frame", 4096, 4096 },
	};
	long iters = argc > 1 ? atol(argv[1]) : 200000;
	uint32_t sink = 0;
	uint8_t *l3;

	if (iters <= 0) {
		fprintf(stderr, "usage: icrc_cost [ITERS > 0]\n");
		return 2;
	}
	l3 = aligned_alloc(64, 8192);
	if (l3 == NULL)
		return 1;
	memset(l3, 0x5a, 8192);
	l3[0] = 0x45;	/* IPv4, no options: the engine's common path */
	printf("%-20s %8s %10s %8s %s\n", "frame", "bytes", "ns/frame",
	       "GB/s", "ns per 64 KiB message, both ends");
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		uint32_t len = HDR + rows[i].pay;
		/* fewer iterations for long frames: the same time a row */
		long n = iters * 64 / (long)(64 + rows[i].pay) + 1;
		double ns = cost_ns(l3, len, n, &sink);

		printf("%-20s %8u %10.1f %8.2f", rows[i].what, len, ns,
		       len / ns);
		if (rows[i].mtu != 0)
			printf(" %.0f", 2 * ns * (65536 / rows[i].mtu));
		printf("\n");
	}
	cpu_flags();
	icrc_sink = sink;	/* keeps the CRCs from being elided */
	return 0;
}
