/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The CPUs' idle behaviour, as sysfs tells it.  A thread that blocks (a
 * program in ibv_get_cq_event(), an engine lcore idle under `adaptive` or
 * `block`) leaves its CPU idle; the eventfd write that wakes it must wake
 * the CPU first.  In a virtual machine whose cpuidle driver is haltpoll
 * with guest_halt_poll_ns 0 an idle vCPU halts at once, and the waker's
 * write waits for the hypervisor to run it again: 13-15 µs a wake-up on
 * the project's machines, 1.0 µs with 200000 (guides/
 * experiments_close_to_wire, "Tenth round").  rocepmd reports the setting
 * with every placement; it does not change it.
 */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rocepmd.h"

/* The first line of root/rel into buf, without its newline; false if none. */
static bool
idle_line(const char *root, const char *rel, char *buf, size_t len)
{
	char path[512];
	FILE *f;
	bool ok;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	f = fopen(path, "r");
	if (f == NULL)
		return false;
	ok = fgets(buf, (int)len, f) != NULL;
	fclose(f);
	if (!ok)
		return false;
	buf[strcspn(buf, "\n")] = '\0';
	return buf[0] != '\0';
}

void
rp_cpu_idle_read(const char *sysfs, struct rp_cpu_idle *ci)
{
	char v[64];
	char *end;
	long long ns;

	memset(ci, 0, sizeof(*ci));
	ci->poll_ns = -1;
	if (!idle_line(sysfs, "devices/system/cpu/cpuidle/current_driver",
		       ci->driver, sizeof(ci->driver)))
		snprintf(ci->driver, sizeof(ci->driver), "none");
	if (strcmp(ci->driver, "haltpoll") != 0 ||
	    !idle_line(sysfs, "module/haltpoll/parameters/guest_halt_poll_ns",
		       v, sizeof(v)))
		return;
	errno = 0;
	ns = strtoll(v, &end, 10);
	if (errno != 0 || end == v || *end != '\0' || ns < 0)
		return;
	ci->poll_ns = ns;
	ci->halts_at_once = ns == 0;
}

const char *
rp_cpu_idle_brief(const struct rp_cpu_idle *ci, char *buf, size_t len)
{
	if (ci->poll_ns >= 0)
		snprintf(buf, len, "%s:%" PRId64, ci->driver, ci->poll_ns);
	else
		snprintf(buf, len, "%s", ci->driver);
	return buf;
}

const char *
rp_cpu_idle_explain(const struct rp_cpu_idle *ci, char *buf, size_t len)
{
	if (ci->halts_at_once)
		snprintf(buf, len,
			 "cpuidle haltpoll with guest_halt_poll_ns 0: an idle vCPU halts at once, so each wake-up of a thread asleep on one (a program on completion events, a blocked engine lcore) costs its waker a hypervisor exit, 13-15 us on the project's machines; a larger guest_halt_poll_ns (/sys/module/haltpoll/parameters) trades host CPU for it (guides/config, \"Virtual machines\")");
	else if (ci->poll_ns > 0)
		snprintf(buf, len,
			 "cpuidle haltpoll, an idle vCPU polls %" PRId64
			 " ns before it halts: a thread woken within that costs its waker no hypervisor exit",
			 ci->poll_ns);
	else
		snprintf(buf, len, "cpuidle driver %s", ci->driver);
	return buf;
}
