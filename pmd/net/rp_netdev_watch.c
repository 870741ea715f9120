/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The addresses of a port bound to a kernel interface (netdev = IFACE)
 * stay the kernel's: an rtnetlink socket subscribed to address events
 * (RTMGRP_IPV4_IFADDR, RTMGRP_IPV6_IFADDR), read by the lcore with the
 * link poll (ten times a second, non-blocking: no system call per
 * packet), tells it when one of the interface's addresses comes or goes;
 * it then reads them again (rp_cfg_netdev.c, as at start) and the device
 * follows (the engine's rp_dev_addrs_set(): GID table, XDP map,
 * IBV_EVENT_GID_CHANGE).
 */

#include <errno.h>
#include <net/if.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <linux/netlink.h>
#include <linux/rtnetlink.h>

#include "rp_cfg_netdev.h"
#include "rp_log.h"
#include "rp_net.h"

int
rp_netdev_watch_init(struct rp_net *net)
{
	struct sockaddr_nl sa = {
		.nl_family = AF_NETLINK,
		.nl_groups = RTMGRP_IPV4_IFADDR | RTMGRP_IPV6_IFADDR,
	};
	int fd;

	net->nl_fd = -1;
	if (net->cfg->netdev[0] == '\0')
		return 0;
	net->nl_ifindex = if_nametoindex(net->cfg->netdev);
	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC,
		    NETLINK_ROUTE);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		RP_LOG(WARNING, "%s: no rtnetlink address events (%s): the device keeps the addresses it started with",
		       net->cfg->netdev, strerror(errno));
		if (fd >= 0)
			close(fd);
		return 0;
	}
	net->nl_fd = fd;
	return 0;
}

void
rp_netdev_watch_fini(struct rp_net *net)
{
	if (net->nl_fd >= 0)
		close(net->nl_fd);
	net->nl_fd = -1;
}

/* The interface's addresses again, into *pc. */
static bool
netdev_resync(struct rp_net *net, struct rp_port_cfg *pc)
{
	char why[256] = "";
	int ret;

	memset(pc, 0, sizeof(*pc));
	memcpy(pc->netdev, net->cfg->netdev, sizeof(pc->netdev));
	ret = rp_cfg_netdev_bind(pc, net->id, true, true, why, sizeof(why));
	if (ret < 0 && ret != -EADDRNOTAVAIL) {
		RP_LOG(WARNING, "%s: cannot read its addresses again: %s",
		       net->cfg->netdev, why);
		return false;
	}
	if (ret != 0) {
		/* No IPv4 any more: GID 0 goes empty. */
		pc->ipv4 = 0;
		pc->prefix_len = 0;
	}
	return true;
}

bool
rp_netdev_watch_poll(struct rp_net *net, struct rp_port_cfg *pc)
{
	char buf[8192] __rte_aligned(sizeof(struct nlmsghdr));
	bool changed = false;
	ssize_t n;

	if (net->nl_fd < 0)
		return false;
	while ((n = recv(net->nl_fd, buf, sizeof(buf), MSG_DONTWAIT)) > 0) {
		struct nlmsghdr *h = (struct nlmsghdr *)buf;
		size_t len = (size_t)n;

		for (; NLMSG_OK(h, len); h = NLMSG_NEXT(h, len)) {
			const struct ifaddrmsg *ifa = NLMSG_DATA(h);

			if ((h->nlmsg_type == RTM_NEWADDR ||
			     h->nlmsg_type == RTM_DELADDR) &&
			    h->nlmsg_len >= NLMSG_LENGTH(sizeof(*ifa)) &&
			    ifa->ifa_index == net->nl_ifindex)
				changed = true;
		}
	}
	if (n < 0 && errno == ENOBUFS)
		changed = true;		/* events lost: read them all */
	return changed && netdev_resync(net, pc);
}
