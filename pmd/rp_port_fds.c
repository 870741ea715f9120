/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The sockets a PMD keeps to itself (net_af_packet's ring socket, whose
 * TX ring rp_port_kick.c kicks; net_af_xdp's AF_XDP socket, whose
 * statistics rp_xdp_port.c reads), found among the process's file
 * descriptors.  At port start only, never on the data path.
 */

#include <dirent.h>
#include <stdlib.h>

#include "rp_obj.h"

unsigned int
rp_port_fds(bool (*match)(int fd, const void *arg), const void *arg,
	    int *fds, unsigned int max)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	unsigned int n = 0;

	if (d == NULL)
		return 0;
	while ((e = readdir(d)) != NULL) {
		char *end;
		long fd = strtol(e->d_name, &end, 10);

		if (*end != '\0' || e->d_name[0] == '\0' || fd < 0 ||
		    fd == dirfd(d) || !match((int)fd, arg))
			continue;
		if (n < max)
			fds[n] = (int)fd;
		n++;
	}
	closedir(d);
	return n;
}
