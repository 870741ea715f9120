/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * inline_us = auto: whether a polling program's threads run the engine's
 * passes (architecture.rst, "Inline passes"), decided once at start from
 * the CPUs, so that polling cannot collapse on a machine with few of them.
 *
 * A dedicated lcore and a polling thread need a CPU each for as long as
 * both spin.  The engine sees its own lcores' CPUs and the CPUs the
 * program's threads may use, not the other processes on the machine (the
 * peer host on the same two CPUs, the kernel's network work), so the
 * rule keeps a margin:
 *
 *   - fewer than two CPUs beside the engine lcores' for the program:
 *     inline passes for every polling thread (on a 2-CPU machine, always);
 *   - two or more: only a thread that polls while on an engine lcore's
 *     CPU runs passes (sched_getcpu() per empty poll); the others leave
 *     them to the lcore, which then never stands aside.
 *
 * A program on completion events is unaffected either way: an armed CQ's
 * poll runs no pass, and arming wakes a lcore standing aside.
 */

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rp_inline.h"

static cpu_set_t rp_app_cpus;
static bool rp_app_cpus_set;

void
rp_engine_app_cpus(void)
{
	if (sched_getaffinity(0, sizeof(rp_app_cpus), &rp_app_cpus) == 0)
		rp_app_cpus_set = true;
}

void
rp_inline_app_cpus(cpu_set_t *set)
{
	long n;

	if (rp_app_cpus_set) {
		*set = rp_app_cpus;
		return;
	}
	if (sched_getaffinity(0, sizeof(*set), set) == 0)
		return;
	CPU_ZERO(set);
	n = sysconf(_SC_NPROCESSORS_ONLN);
	for (long c = 0; c < n && c < CPU_SETSIZE; c++)
		CPU_SET(c, set);
}

const char *
rp_cpuset_str(const cpu_set_t *set, char *buf, size_t len)
{
	size_t o = 0;
	int c = 0;

	buf[0] = '\0';
	while (c < CPU_SETSIZE) {
		int e;

		if (!CPU_ISSET(c, set)) {
			c++;
			continue;
		}
		for (e = c; e + 1 < CPU_SETSIZE && CPU_ISSET(e + 1, set); e++)
			;
		if (o < len)
			o += (size_t)snprintf(buf + o, len - o,
					      e == c ? "%s%d" : "%s%d-%d",
					      o == 0 ? "" : ",", c, e);
		c = e + 1;
	}
	if (o == 0)
		snprintf(buf, len, "none");
	return buf;
}

const char *
rp_inline_kind_name(enum rp_inline_kind kind)
{
	switch (kind) {
	case RP_INLINE_OFF:
		return "off";
	case RP_INLINE_ON:
		return "on";
	case RP_INLINE_ON_CPU:
		return "on-cpu";
	}
	return "?";
}

void
rp_inline_decide(uint32_t inline_us, const cpu_set_t *app,
		 const cpu_set_t *engine, struct rp_inline_choice *c)
{
	char a[64], e[64];
	cpu_set_t beside;
	int n;

	if (inline_us != RP_INLINE_AUTO) {
		c->kind = inline_us != 0 ? RP_INLINE_ON : RP_INLINE_OFF;
		c->us = inline_us;
		snprintf(c->why, sizeof(c->why), "inline_us = %u (configured)",
			 inline_us);
		snprintf(c->brief, sizeof(c->brief),
			 "inline_us = %u (configured)", inline_us);
		return;
	}
	/* beside = app \ engine */
	CPU_ZERO(&beside);
	for (int i = 0; i < CPU_SETSIZE; i++)
		if (CPU_ISSET(i, app) && !CPU_ISSET(i, engine))
			CPU_SET(i, &beside);
	n = CPU_COUNT(&beside);
	rp_cpuset_str(app, a, sizeof(a));
	rp_cpuset_str(engine, e, sizeof(e));
	c->us = RP_INLINE_AUTO_US;
	snprintf(c->brief, sizeof(c->brief),
		 "auto: program CPUs %.24s, engine lcores' %.24s, %d beside", a, e,
		 n & 0xffff);
	if (n < 2) {
		c->kind = RP_INLINE_ON;
		snprintf(c->why, sizeof(c->why),
			 "auto: the program may use CPU(s) %s, the engine lcores run on %s: "
			 "%d CPU(s) beside them, fewer than two: a second polling thread, or "
			 "another engine on this machine, would share a CPU with an engine "
			 "lcore; polling threads run the passes",
			 a, e, n);
	} else {
		c->kind = RP_INLINE_ON_CPU;
		snprintf(c->why, sizeof(c->why),
			 "auto: the program may use CPU(s) %s, the engine lcores run on %s: "
			 "%d CPUs beside them; only a thread polling on an engine lcore's "
			 "CPU runs the passes", a, e, n);
	}
}

/* One CPU or lcore set of --lcores: N, N-M, or (N[-M],...). */
static int
lcores_set(const char **pp, cpu_set_t *set)
{
	const char *p = *pp;
	bool group = *p == '(';

	CPU_ZERO(set);
	if (group)
		p++;
	for (;;) {
		char *end;
		long lo = strtol(p, &end, 10), hi = lo;

		if (end == p || lo < 0 || lo >= CPU_SETSIZE)
			return -EINVAL;
		p = end;
		if (*p == '-') {
			hi = strtol(p + 1, &end, 10);
			if (end == p + 1 || hi < lo || hi >= CPU_SETSIZE)
				return -EINVAL;
			p = end;
		}
		for (long i = lo; i <= hi; i++)
			CPU_SET(i, set);
		if (!group || *p != ',')
			break;
		p++;
	}
	if (group) {
		if (*p != ')')
			return -EINVAL;
		p++;
	}
	*pp = p;
	return 0;
}

/*
 * The CPUs of the engine lcores under an EAL --lcores map: each element
 * LCORES[@CPUS]; without @, the lcores run on the CPUs of their ids.
 */
static int
lcores_map(const char *map, const struct rp_config *cfg, cpu_set_t *engine)
{
	const char *p = map;

	while (*p != '\0') {
		cpu_set_t lc, cpus;

		if (lcores_set(&p, &lc) != 0)
			return -EINVAL;
		cpus = lc;
		if (*p == '@') {
			p++;
			if (lcores_set(&p, &cpus) != 0)
				return -EINVAL;
		}
		for (uint32_t i = 0; i < cfg->nb_lcores; i++)
			if (cfg->lcores[i] < CPU_SETSIZE &&
			    CPU_ISSET(cfg->lcores[i], &lc))
				CPU_OR(engine, engine, &cpus);
		if (*p == ',')
			p++;
		else if (*p != '\0')
			return -EINVAL;
	}
	return 0;
}

enum rp_inline_kind
rp_inline_explain(const struct rp_config *cfg, char *why, size_t len)
{
	char *argv[RP_EAL_MAX_ARGS];
	char storage[4096];
	const char *map = NULL;
	struct rp_inline_choice c;
	cpu_set_t app, engine;
	int argc;

	CPU_ZERO(&engine);
	argc = rp_cfg_eal_argv(cfg, "rocepmd", argv, RP_EAL_MAX_ARGS, storage,
			       sizeof(storage));
	for (int a = 1; a < argc; a++) {
		if (strcmp(argv[a], "--lcores") == 0 && a + 1 < argc)
			map = argv[a + 1];
		else if (strncmp(argv[a], "--lcores=", 9) == 0)
			map = argv[a] + 9;
	}
	if (map == NULL || lcores_map(map, cfg, &engine) != 0) {
		/* -l: lcore ids are CPU ids */
		CPU_ZERO(&engine);
		for (uint32_t i = 0; i < cfg->nb_lcores; i++)
			if (cfg->lcores[i] < CPU_SETSIZE)
				CPU_SET(cfg->lcores[i], &engine);
	}
	rp_inline_app_cpus(&app);
	rp_inline_decide(cfg->inline_us, &app, &engine, &c);
	snprintf(why, len, "%s", c.why);
	return c.kind;
}
