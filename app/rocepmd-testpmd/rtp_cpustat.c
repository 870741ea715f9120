/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Where a run's CPUs went: the kernel's per-CPU accounting (/proc/stat)
 * at both ends of a measured phase, summed over the CPUs the run's threads
 * may use.  Between two hosts on a veth, the receiver's XDP and copies run
 * in the sender's system call, so the sender's share in the kernel says
 * how much of its CPU rocepmd could ever save (guides/
 * experiments_close_to_wire, "Fourteenth round"); the raw rows say the
 * same of the yardstick.
 */

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "rtp.h"

int
rtp_cpustat_snap(struct rtp_cpustat *s)
{
	FILE *f = fopen("/proc/stat", "r");
	char line[512];

	memset(s, 0, sizeof(*s));
	if (f == NULL)
		return -errno;
	while (fgets(line, sizeof(line), f) != NULL) {
		unsigned long long v[8] = { 0 };
		unsigned int cpu;

		/* "cpuN user nice system idle iowait irq softirq steal" */
		if (strncmp(line, "cpu", 3) != 0 || line[3] < '0' ||
		    line[3] > '9')
			continue;
		if (sscanf(line + 3, "%u %llu %llu %llu %llu %llu %llu %llu %llu",
			   &cpu, &v[0], &v[1], &v[2], &v[3], &v[4], &v[5],
			   &v[6], &v[7]) < 8 || cpu >= RTP_CPUSTAT_MAX)
			continue;
		s->user[cpu] = v[0] + v[1];
		s->kernel[cpu] = v[2] + v[5] + v[6];
		s->idle[cpu] = v[3] + v[4];	/* steal (v[7]): neither */
		if (cpu + 1 > s->nr)
			s->nr = cpu + 1;
	}
	fclose(f);
	return s->nr != 0 ? 0 : -ENOENT;
}

/*
 * Over the CPUs of `cpus` between a and b: the share of their time busy,
 * and the share of the busy time in the kernel (system calls, softirqs,
 * interrupts).  false when no tick was counted (a phase too short).
 */
bool
rtp_cpustat_share(const struct rtp_cpustat *a, const struct rtp_cpustat *b,
		  const cpu_set_t *cpus, double *busy, double *kernel)
{
	uint64_t u = 0, k = 0, i = 0;

	for (unsigned int c = 0; c < a->nr && c < b->nr; c++) {
		if (!CPU_ISSET(c, cpus))
			continue;
		/* counters only grow; a CPU taken offline reads as zeros */
		if (b->user[c] < a->user[c] || b->kernel[c] < a->kernel[c] ||
		    b->idle[c] < a->idle[c])
			continue;
		u += b->user[c] - a->user[c];
		k += b->kernel[c] - a->kernel[c];
		i += b->idle[c] - a->idle[c];
	}
	if (u + k + i == 0)
		return false;
	*busy = (double)(u + k) / (double)(u + k + i);
	*kernel = u + k != 0 ? (double)k / (double)(u + k) : 0;
	return true;
}
