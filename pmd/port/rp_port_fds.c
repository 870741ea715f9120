/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The sockets a PMD keeps to itself (net_af_packet's ring sockets, whose
 * TX ring rp_port_kick.c kicks and whose RX ring wakes an idle engine;
 * net_af_xdp's AF_XDP socket, whose statistics rp_xdp_port.c reads),
 * found among the process's file descriptors.  At port start only, never
 * on the data path.
 */

#include <dirent.h>
#include <linux/if_packet.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include "rp_port.h"

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

/* fd is a TPACKET_V2 packet socket bound to interface *arg. */
static bool
is_ring_socket(int fd, const void *arg)
{
	unsigned int ifindex = *(const unsigned int *)arg;
	struct sockaddr_ll sll;
	socklen_t len = sizeof(sll);
	int domain = 0, version = 0;
	socklen_t olen = sizeof(domain);
	struct stat st;

	if (fstat(fd, &st) != 0 || !S_ISSOCK(st.st_mode))
		return false;
	if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &olen) != 0 ||
	    domain != AF_PACKET)
		return false;
	memset(&sll, 0, sizeof(sll));
	if (getsockname(fd, (struct sockaddr *)&sll, &len) != 0 ||
	    (unsigned int)sll.sll_ifindex != ifindex)
		return false;
	olen = sizeof(version);
	return getsockopt(fd, SOL_PACKET, PACKET_VERSION, &version,
			  &olen) == 0 && version == TPACKET_V2;
}

unsigned int
rp_port_ring_sockets(unsigned int ifindex, int *fds, unsigned int max)
{
	return rp_port_fds(is_ring_socket, &ifindex, fds, max);
}
