/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The CPUs' idle behaviour (pmd/config/rp_cpu_idle.c), read from sysfs
 * trees this test writes: no driver, another driver, haltpoll that halts
 * at once, haltpoll that polls, and what cannot be read.  No EAL.
 */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "rocepmd.h"

static char root[64];

static void
tci_write(const char *rel, const char *text)
{
	char path[256], dir[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	/* mkdir -p of the file's directory */
	snprintf(dir, sizeof(dir), "%s", path);
	for (char *p = dir + strlen(root) + 1; *p != '\0'; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		mkdir(dir, 0700);
		*p = '/';
	}
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static int
tci_setup(void **state)
{
	(void)state;
	snprintf(root, sizeof(root), "/tmp/rp-cpu-idle-XXXXXX");
	return mkdtemp(root) != NULL ? 0 : -1;
}

static int
tci_teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	return system(cmd) == 0 ? 0 : -1;
}

static void
tci_expect(const char *brief, int64_t ns, bool halts, const char *in_why)
{
	struct rp_cpu_idle ci;
	char b[64], why[512];

	memset(&ci, 0xa5, sizeof(ci));
	rp_cpu_idle_read(root, &ci);
	assert_string_equal(rp_cpu_idle_brief(&ci, b, sizeof(b)), brief);
	assert_int_equal(ci.poll_ns, ns);
	assert_int_equal(ci.halts_at_once, halts);
	rp_cpu_idle_explain(&ci, why, sizeof(why));
	if (strstr(why, in_why) == NULL)
		fail_msg("\"%s\" not in \"%s\"", in_why, why);
}

static void
test_no_cpuidle(void **state)
{
	(void)state;
	tci_expect("none", -1, false, "cpuidle driver none");
}

static void
test_other_driver(void **state)
{
	(void)state;
	tci_write("devices/system/cpu/cpuidle/current_driver", "intel_idle\n");
	/* haltpoll's parameters count only when it is the driver */
	tci_write("module/haltpoll/parameters/guest_halt_poll_ns", "0\n");
	tci_expect("intel_idle", -1, false, "cpuidle driver intel_idle");
}

static void
test_haltpoll_halts(void **state)
{
	(void)state;
	tci_write("devices/system/cpu/cpuidle/current_driver", "haltpoll\n");
	tci_write("module/haltpoll/parameters/guest_halt_poll_ns", "0\n");
	tci_expect("haltpoll:0", 0, true, "halts at once");
}

static void
test_haltpoll_polls(void **state)
{
	(void)state;
	tci_write("devices/system/cpu/cpuidle/current_driver", "haltpoll\n");
	tci_write("module/haltpoll/parameters/guest_halt_poll_ns", "200000\n");
	tci_expect("haltpoll:200000", 200000, false, "polls 200000 ns");
}

static void
test_haltpoll_unreadable(void **state)
{
	static const char *const bad[] = { "", "-5\n", "abc\n", "12x\n",
		"99999999999999999999999\n" };

	(void)state;
	tci_write("devices/system/cpu/cpuidle/current_driver", "haltpoll\n");
	tci_expect("haltpoll", -1, false, "cpuidle driver haltpoll");
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		tci_write("module/haltpoll/parameters/guest_halt_poll_ns",
			  bad[i]);
		tci_expect("haltpoll", -1, false, "cpuidle driver haltpoll");
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_no_cpuidle, tci_setup,
						tci_teardown),
		cmocka_unit_test_setup_teardown(test_other_driver, tci_setup,
						tci_teardown),
		cmocka_unit_test_setup_teardown(test_haltpoll_halts, tci_setup,
						tci_teardown),
		cmocka_unit_test_setup_teardown(test_haltpoll_polls, tci_setup,
						tci_teardown),
		cmocka_unit_test_setup_teardown(test_haltpoll_unreadable,
						tci_setup, tci_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
