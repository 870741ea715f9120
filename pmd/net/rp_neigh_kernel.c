/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Peers through the kernel's neighbour table, for a port whose addresses
 * are the kernel's (an af_xdp port with rocepmd's XDP program, guides/xdp):
 * ARP replies and neighbour advertisements go to the kernel there, never
 * to the engine, so the engine reads the kernel's entry (an rtnetlink
 * dump of the interface's neighbours, IPv4 and IPv6: the kernel's own
 * resolution for its traffic to that peer, as the kernel's rxe does
 * through rdma_addr_find_l2_eth_by_grh()).  Where the kernel has none, a
 * datagram to the peer's discard port from a kernel socket makes the
 * kernel resolve it; the next try reads the entry.  Only on a
 * neighbour-cache miss or refresh, at most every RP_NEIGH_RETRY_MS: never
 * per packet.
 */

#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <linux/neighbour.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>

#include "rp_net.h"

#define RP_DISCARD_PORT	9
/* A neighbour with a usable link-layer address (the kernel's NUD_VALID). */
#define RP_NUD_USABLE	(NUD_PERMANENT | NUD_NOARP | NUD_REACHABLE | \
			 NUD_PROBE | NUD_STALE | NUD_DELAY)

/* Whether one RTM_NEWNEIGH is `ip` on `ifindex`, usable: its MAC then. */
static bool
neigh_msg_match(const struct nlmsghdr *h, int ifindex, const uint8_t *ip,
		size_t alen, uint8_t mac[6])
{
	const struct ndmsg *nd = NLMSG_DATA(h);
	const struct rtattr *rta;
	const uint8_t *dst = NULL, *ll = NULL;
	int len;

	if (h->nlmsg_type != RTM_NEWNEIGH ||
	    h->nlmsg_len < NLMSG_LENGTH(sizeof(*nd)) ||
	    nd->ndm_ifindex != ifindex || !(nd->ndm_state & RP_NUD_USABLE))
		return false;
	len = (int)(h->nlmsg_len - NLMSG_LENGTH(sizeof(*nd)));
	for (rta = (const struct rtattr *)((const char *)nd +
					   NLMSG_ALIGN(sizeof(*nd)));
	     RTA_OK(rta, len); rta = RTA_NEXT(rta, len)) {
		if (rta->rta_type == NDA_DST && RTA_PAYLOAD(rta) == alen)
			dst = RTA_DATA(rta);
		else if (rta->rta_type == NDA_LLADDR && RTA_PAYLOAD(rta) == 6)
			ll = RTA_DATA(rta);
	}
	if (dst == NULL || ll == NULL || memcmp(dst, ip, alen) != 0)
		return false;
	memcpy(mac, ll, 6);
	return true;
}

/*
 * The kernel's MAC for `ip` on interface `ifindex`: 0, -ENOENT, or a
 * negative errno of the netlink socket.  One dump of the family's
 * neighbours, filtered here (every kernel dumps; not every one filters).
 */
static int
neigh_kernel_read(int ifindex, const uint8_t ip[16], uint8_t mac[6])
{
	struct {
		struct nlmsghdr h;
		struct ndmsg nd;
	} req = {
		.h = { .nlmsg_len = NLMSG_LENGTH(sizeof(struct ndmsg)),
		       .nlmsg_type = RTM_GETNEIGH,
		       .nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP,
		       .nlmsg_seq = 1 },
	};
	char buf[16384] __rte_aligned(sizeof(struct nlmsghdr));
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	bool v4 = rp_gid_is_v4(ip), found = false, done = false;
	const uint8_t *want = v4 ? ip + 12 : ip;
	size_t alen = v4 ? 4 : 16;
	int fd, ret = 0;

	req.nd.ndm_family = v4 ? AF_INET : AF_INET6;
	req.nd.ndm_ifindex = ifindex;
	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	if (fd < 0)
		return -errno;
	if (sendto(fd, &req, req.h.nlmsg_len, 0, (struct sockaddr *)&sa,
		   sizeof(sa)) < 0) {
		ret = -errno;
		goto out;
	}
	/* Read the whole dump, even past a match: the socket is closed
	 * after, but a partial read would be a lie on a reused one. */
	while (!done) {
		ssize_t n = recv(fd, buf, sizeof(buf), 0);
		struct nlmsghdr *h = (struct nlmsghdr *)buf;
		size_t len;

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			ret = n < 0 ? -errno : -EIO;
			goto out;
		}
		len = (size_t)n;
		for (; NLMSG_OK(h, len); h = NLMSG_NEXT(h, len)) {
			if (h->nlmsg_type == NLMSG_DONE) {
				done = true;
				break;
			}
			if (h->nlmsg_type == NLMSG_ERROR) {
				const struct nlmsgerr *e = NLMSG_DATA(h);

				ret = e->error < 0 ? e->error : -EIO;
				goto out;
			}
			if (!found && neigh_msg_match(h, ifindex, want, alen,
						      mac))
				found = true;
		}
	}
	ret = found ? 0 : -ENOENT;
out:
	close(fd);
	return ret;
}

/* Have the kernel resolve `ip`: a datagram to its discard port. */
static void
neigh_kernel_poke(const struct rp_net *net, const uint8_t ip[16])
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
	(void)setsockopt(fd, SOL_SOCKET, SO_BINDTODEVICE, net->port->if_name,
			 (socklen_t)strlen(net->port->if_name));
	if (v4) {
		memcpy(&a4.sin_addr, ip + 12, 4);
		(void)sendto(fd, "", 0, 0, (struct sockaddr *)&a4, sizeof(a4));
	} else {
		memcpy(&a6.sin6_addr, ip, 16);
		a6.sin6_scope_id = if_nametoindex(net->port->if_name);
		(void)sendto(fd, "", 0, 0, (struct sockaddr *)&a6, sizeof(a6));
	}
	close(fd);
}

/*
 * The kernel's MAC for `ip`: 0, or -EAGAIN once the kernel was asked to
 * resolve it (IPv4 and IPv6 alike).
 */
int
rp_neigh_kernel(const struct rp_net *net, const uint8_t ip[16], uint8_t mac[6])
{
	int ifindex;

	if (net->port->if_name[0] == '\0')
		return -ENODEV;
	ifindex = (int)if_nametoindex(net->port->if_name);
	if (ifindex > 0 && neigh_kernel_read(ifindex, ip, mac) == 0)
		return 0;
	neigh_kernel_poke(net, ip);
	return -EAGAIN;
}
