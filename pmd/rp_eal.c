/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the EAL leaves to its user: DPDK 22.11 creates a runtime directory
 * per --file-prefix (/var/run/dpdk/<prefix> for root, else under
 * $XDG_RUNTIME_DIR or /tmp) and never removes it, not even in
 * rte_eal_cleanup().  With rocepmd's per-process prefix every program would
 * leave one empty directory behind.  The engine notes the directory once
 * the EAL has made it and removes it when the process is done with the EAL.
 */

#include <errno.h>
#include <limits.h>
#include <string.h>
#include <unistd.h>

#include <rte_eal.h>

#include "rocepmd.h"
#include "rp_log.h"

static char rp_eal_rundir[PATH_MAX];
static pid_t rp_eal_rundir_pid;

void
rp_eal_rundir_note(void)
{
	const char *dir = rte_eal_get_runtime_dir();

	if (dir == NULL || dir[0] == '\0' ||
	    strlen(dir) >= sizeof(rp_eal_rundir))
		return;
	strcpy(rp_eal_rundir, dir);
	rp_eal_rundir_pid = getpid();
}

int
rp_eal_rundir_remove(void)
{
	int ret;

	/* A forked child shares the directory with its parent: not ours. */
	if (rp_eal_rundir[0] == '\0' || getpid() != rp_eal_rundir_pid)
		return 0;
	/*
	 * rmdir() removes only an empty directory: whatever a live EAL still
	 * keeps there (a shared config, a multi-process or telemetry socket,
	 * another process's files under a shared prefix) keeps it.
	 */
	ret = rmdir(rp_eal_rundir) == 0 || errno == ENOENT ? 0 : -errno;
	if (ret < 0) {
		RP_LOG(DEBUG, "EAL runtime directory %s kept: %s",
		       rp_eal_rundir, strerror(-ret));
		return ret;
	}
	RP_LOG(DEBUG, "removed the EAL runtime directory %s", rp_eal_rundir);
	rp_eal_rundir[0] = '\0';
	return 0;
}
