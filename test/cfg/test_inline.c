/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * inline_us = auto (pmd/config/rp_inline.c): what it decides for the CPUs a
 * program may use and the engine lcores' CPUs, what a number means, and
 * the engine lcores' CPUs as rocepmd-run --check reads them from the EAL
 * arguments.  No EAL.
 */

#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "rp_inline.h"

static cpu_set_t
ti_set(const char *list)
{
	cpu_set_t s;
	const char *p = list;

	CPU_ZERO(&s);
	while (*p != '\0') {
		char *end;
		long lo = strtol(p, &end, 10), hi = lo;

		if (*end == '-')
			hi = strtol(end + 1, &end, 10);
		for (long c = lo; c <= hi; c++)
			CPU_SET(c, &s);
		p = *end == ',' ? end + 1 : end;
	}
	return s;
}

static void
ti_decide(uint32_t inline_us, const char *app, const char *engine,
	  enum rp_inline_kind kind, uint32_t us)
{
	cpu_set_t a = ti_set(app), e = ti_set(engine);
	struct rp_inline_choice c;

	memset(&c, 0xa5, sizeof(c));
	rp_inline_decide(inline_us, &a, &e, &c);
	if (c.kind != kind || c.us != us)
		fail_msg("inline_us %u, app %s, engine %s: %s %u, expected %s %u (%s)",
			 inline_us, app, engine, rp_inline_kind_name(c.kind),
			 c.us, rp_inline_kind_name(kind), us, c.why);
	assert_non_null(memchr(c.why, '\0', sizeof(c.why)));
	assert_non_null(memchr(c.brief, '\0', sizeof(c.brief)));
}

/* A number is what it says, whatever the CPUs. */
static void
test_configured(void **state)
{
	(void)state;
	ti_decide(0, "0-1", "1", RP_INLINE_OFF, 0);
	ti_decide(0, "0-63", "1", RP_INLINE_OFF, 0);
	ti_decide(250, "0-63", "1", RP_INLINE_ON, 250);
	ti_decide(1, "0", "0", RP_INLINE_ON, 1);
}

/* Fewer than two CPUs beside the engine's: every poller runs passes. */
static void
test_auto_few_cpus(void **state)
{
	(void)state;
	/* the project's machines: two CPUs, the lcore on one */
	ti_decide(RP_INLINE_AUTO, "0-1", "1", RP_INLINE_ON, RP_INLINE_AUTO_US);
	ti_decide(RP_INLINE_AUTO, "0-1", "0", RP_INLINE_ON, RP_INLINE_AUTO_US);
	/* taskset onto the lcore's own CPU */
	ti_decide(RP_INLINE_AUTO, "1", "1", RP_INLINE_ON, RP_INLINE_AUTO_US);
	/* four CPUs, three of them engine lcores */
	ti_decide(RP_INLINE_AUTO, "0-3", "1-3", RP_INLINE_ON, RP_INLINE_AUTO_US);
	/* one CPU for everything */
	ti_decide(RP_INLINE_AUTO, "0", "0", RP_INLINE_ON, RP_INLINE_AUTO_US);
}

/* Room for pollers: only one on an lcore's CPU runs passes. */
static void
test_auto_spare_cpus(void **state)
{
	(void)state;
	ti_decide(RP_INLINE_AUTO, "0-3", "1", RP_INLINE_ON_CPU,
		  RP_INLINE_AUTO_US);
	ti_decide(RP_INLINE_AUTO, "0-2", "2", RP_INLINE_ON_CPU,
		  RP_INLINE_AUTO_US);
	/* the program kept off the engine's CPUs by its affinity */
	ti_decide(RP_INLINE_AUTO, "2-5", "0-1", RP_INLINE_ON_CPU,
		  RP_INLINE_AUTO_US);
}

static void
test_cpuset_str(void **state)
{
	cpu_set_t s = ti_set("0-1,4,6-9");
	char buf[64];

	(void)state;
	assert_string_equal(rp_cpuset_str(&s, buf, sizeof(buf)), "0-1,4,6-9");
	CPU_ZERO(&s);
	assert_string_equal(rp_cpuset_str(&s, buf, sizeof(buf)), "none");
}

/* A configuration on lcore ids, and one whose args map them to CPUs. */
static void
ti_explain(const char *engine, const char *expect_cpus)
{
	struct rp_config cfg;
	char why[512], want[64];

	memset(&cfg, 0, sizeof(cfg));
	snprintf(cfg.path, sizeof(cfg.path), "test");
	cfg.main_lcore = 0;
	cfg.nb_lcores = 1;
	cfg.lcores[0] = 1;
	cfg.inline_us = RP_INLINE_AUTO;
	cfg.nb_ports = 1;
	snprintf(cfg.port[0].device, sizeof(cfg.port[0].device), "net_ring0");
	cfg.port[0].lcore = 1;
	cfg.port[0].nr_lcores = 1;
	cfg.port[0].lcores[0] = 1;
	snprintf(cfg.eal_args, sizeof(cfg.eal_args), "%s", engine);
	rp_engine_app_cpus();
	(void)rp_inline_explain(&cfg, why, sizeof(why));
	snprintf(want, sizeof(want), "engine lcores run on %s:", expect_cpus);
	if (strstr(why, want) == NULL)
		fail_msg("args '%s': '%s' lacks '%s'", engine, why, want);
}

static void
test_explain_lcores_map(void **state)
{
	(void)state;
	ti_explain("", "1");
	ti_explain("--lcores 0@0,1@0", "0");
	ti_explain("--lcores=0@1,1@(2,3)", "2-3");
	ti_explain("--lcores 0,1", "1");
	ti_explain("--lcores (0-1)@5", "5");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_configured),
		cmocka_unit_test(test_auto_few_cpus),
		cmocka_unit_test(test_auto_spare_cpus),
		cmocka_unit_test(test_cpuset_str),
		cmocka_unit_test(test_explain_lcores_map),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
