/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Peers through the kernel's neighbour table, for a port whose addresses
 * are the kernel's (an af_xdp port with rocepmd's XDP program, guides/xdp):
 * ARP replies go to the kernel there, never to the engine, so the engine
 * reads the kernel's entry (/proc/net/arp: the kernel's own resolution
 * for its traffic to that peer, as the kernel's rxe does through
 * rdma_addr_find_l2_eth_by_grh()).  Where the kernel has none, a datagram
 * to the peer's discard port from a kernel socket makes the kernel resolve
 * it; the next try reads the entry.  Only on a neighbour-cache miss, at
 * most every RP_NEIGH_RETRY_MS: never per packet.
 */

#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "rp_obj.h"

#define RP_PROC_ARP	"/proc/net/arp"
#define RP_ATF_COM	0x02		/* a complete entry */
#define RP_DISCARD_PORT	9

/* The kernel's MAC for IPv4 `ip` on the port's interface: 0 or -ENOENT. */
static int
neigh_kernel_v4(const struct rp_dev *dev, const uint8_t ip[16], uint8_t mac[6])
{
	char line[256], addr[64], hw[32], ifn[IF_NAMESIZE + 1];
	unsigned int type, flags, m[6];
	struct in_addr want, got;
	int ret = -ENOENT;
	FILE *f;

	memcpy(&want, ip + 12, 4);
	f = fopen(RP_PROC_ARP, "re");
	if (f == NULL)
		return -errno;
	if (fgets(line, sizeof(line), f) == NULL) {	/* the header */
		fclose(f);
		return -ENOENT;
	}
	while (fgets(line, sizeof(line), f) != NULL) {
		if (sscanf(line, "%63s 0x%x 0x%x %31s %*s %16s", addr, &type,
			   &flags, hw, ifn) != 5 ||
		    inet_pton(AF_INET, addr, &got) != 1 ||
		    got.s_addr != want.s_addr || !(flags & RP_ATF_COM) ||
		    strcmp(ifn, dev->if_name) != 0 ||
		    sscanf(hw, "%x:%x:%x:%x:%x:%x", &m[0], &m[1], &m[2], &m[3],
			   &m[4], &m[5]) != 6)
			continue;
		for (unsigned int i = 0; i < 6; i++)
			mac[i] = (uint8_t)m[i];
		ret = 0;
		break;
	}
	fclose(f);
	return ret;
}

/* Have the kernel resolve `ip`: a datagram to its discard port. */
static void
neigh_kernel_poke(const struct rp_dev *dev, const uint8_t ip[16])
{
	struct sockaddr_in6 a6 = { .sin6_family = AF_INET6,
				   .sin6_port = htons(RP_DISCARD_PORT) };
	struct sockaddr_in a4 = { .sin_family = AF_INET,
				  .sin_port = htons(RP_DISCARD_PORT) };
	bool v4 = rp_gid_is_v4(ip);
	int fd = socket(v4 ? AF_INET : AF_INET6,
			SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

	if (fd < 0)
		return;
	/* Out of the port's interface, whatever the routes say. */
	(void)setsockopt(fd, SOL_SOCKET, SO_BINDTODEVICE, dev->if_name,
			 (socklen_t)strlen(dev->if_name));
	if (v4) {
		memcpy(&a4.sin_addr, ip + 12, 4);
		(void)sendto(fd, "", 0, 0, (struct sockaddr *)&a4, sizeof(a4));
	} else {
		memcpy(&a6.sin6_addr, ip, 16);
		a6.sin6_scope_id = if_nametoindex(dev->if_name);
		(void)sendto(fd, "", 0, 0, (struct sockaddr *)&a6, sizeof(a6));
	}
	close(fd);
}

/*
 * The kernel's MAC for `ip`: 0, or -EAGAIN once the kernel was asked to
 * resolve it.  IPv6: the kernel is asked; its table is not read yet, the
 * engine's own neighbour solicitation answers (guides/xdp).
 */
int
rp_neigh_kernel(const struct rp_dev *dev, const uint8_t ip[16], uint8_t mac[6])
{
	if (dev->if_name[0] == '\0')
		return -ENODEV;
	if (rp_gid_is_v4(ip) && neigh_kernel_v4(dev, ip, mac) == 0)
		return 0;
	neigh_kernel_poke(dev, ip);
	return -EAGAIN;
}
