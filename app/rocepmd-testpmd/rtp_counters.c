/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Engine counters and clocks: snapshots of the engine lcores' and
 * devices' counters (the figures of a run are their differences), the
 * engine lcore threads' CPU time, a thread's CPU time, TSC ticks in us.
 */

#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_common.h>
#include <rte_cycles.h>

#include "rtp.h"

/* TSC ticks in us. */
double
rtp_tsc_us(uint64_t ticks)
{
	return (double)ticks * 1e6 / (double)rte_get_tsc_hz();
}

/* The calling thread's CPU time, ns. */
uint64_t
rtp_thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/*
 * The thread of an engine lcore, by the name the EAL gives its workers
 * ("rte-worker-N"; "lcore-worker-N" before DPDK 22.11): its TID, 0 if none.
 */
static long
lcore_tid(unsigned int lcore)
{
	char w1[32], w2[32], path[300], comm[32];
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	long tid = 0;

	if (d == NULL)
		return 0;
	snprintf(w1, sizeof(w1), "rte-worker-%u", lcore);
	snprintf(w2, sizeof(w2), "lcore-worker-%u", lcore);
	while (tid == 0 && (e = readdir(d)) != NULL) {
		FILE *f;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/comm",
			 e->d_name);
		f = fopen(path, "r");
		if (f == NULL)
			continue;
		if (fgets(comm, sizeof(comm), f) != NULL) {
			comm[strcspn(comm, "\n")] = '\0';
			if (strcmp(comm, w1) == 0 || strcmp(comm, w2) == 0)
				tid = atol(e->d_name);
		}
		fclose(f);
	}
	closedir(d);
	return tid;
}

/*
 * CPU time of the engine lcores' threads (the first field of their
 * schedstat, ns on a CPU): what an event-driven run's engine spends,
 * which the application threads' CPU time does not hold.  false when a
 * thread or its schedstat is missing.
 */
static bool
eng_cpu_ns(uint64_t *ns)
{
	static long tid[RP_MAX_ENGINE_LCORES];
	unsigned int lcore;

	*ns = 0;
	for (unsigned int i = 0; i < RP_MAX_ENGINE_LCORES; i++) {
		char path[64];
		unsigned long long t;
		FILE *f;
		int n;

		if (rp_lcore_stats_get(i, &lcore, NULL, NULL, 0) < 0)
			return i > 0;
		/* found once (lcores live as long), by whichever thread snaps */
		t = (unsigned long long)__atomic_load_n(&tid[i],
							__ATOMIC_RELAXED);
		if (t == 0) {
			t = (unsigned long long)lcore_tid(lcore);
			__atomic_store_n(&tid[i], (long)t, __ATOMIC_RELAXED);
		}
		if (t == 0)
			return false;
		snprintf(path, sizeof(path), "/proc/self/task/%llu/schedstat",
			 t);
		f = fopen(path, "r");
		if (f == NULL)
			return false;
		n = fscanf(f, "%llu", &t);
		fclose(f);
		if (n != 1)
			return false;
		*ns += t;
	}
	return true;
}

void
rtp_counters_snap(struct rtp_counters *c)
{
	unsigned int lcore;
	int n;

	memset(c, 0, sizeof(*c));
	c->tsc = rte_get_tsc_cycles();
	c->has_eng_cpu = eng_cpu_ns(&c->eng_cpu_ns);
	c->has_cpu = rtp_cpustat_snap(&c->cpu) == 0;
	for (unsigned int i = 0; i < RP_MAX_ENGINE_LCORES; i++) {
		n = rp_lcore_stats_get(i, &lcore, c->lc_names, c->lc[i],
				       RTP_MAX_COUNTERS);
		if (n < 0)
			break;
		c->nb_lc_counters = RTE_MIN((unsigned int)n, (unsigned int)RTP_MAX_COUNTERS);
		c->nb_lcores = i + 1;
	}
	for (unsigned int d = 0; d < rp_dev_count() && d < RP_MAX_PORTS; d++) {
		n = rp_dev_stats_get(d, c->dev_names, c->dev[d],
				     RTP_MAX_COUNTERS);
		if (n < 0)
			break;
		RTE_VERIFY(n <= (int)RTP_MAX_COUNTERS);	/* raise it */
		c->nb_dev_counters = RTE_MIN((unsigned int)n, (unsigned int)RTP_MAX_COUNTERS);
		c->nb_devs = d + 1;
	}
}

/* Sum of a counter over the engine lcores (lcore) or the devices. */
uint64_t
rtp_counter(const struct rtp_counters *c, bool lcore, const char *name)
{
	uint64_t sum = 0;

	if (lcore) {
		for (unsigned int k = 0; k < c->nb_lc_counters; k++)
			if (strcmp(c->lc_names[k], name) == 0)
				for (unsigned int i = 0; i < c->nb_lcores; i++)
					sum += c->lc[i][k];
	} else {
		for (unsigned int k = 0; k < c->nb_dev_counters; k++)
			if (strcmp(c->dev_names[k], name) == 0)
				for (unsigned int i = 0; i < c->nb_devs; i++)
					sum += c->dev[i][k];
	}
	return sum;
}
