/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * UD multicast (ibv_attach_mcast / ibv_detach_mcast): the groups the
 * device's UD QPs joined.  A group is an IPv4-mapped 224.0.0.0/4 or an
 * IPv6 ff00::/8 GID; its frames come to the group's Ethernet address
 * (rp_gid_mcast_mac), which the port's address filter takes while a QP is
 * attached (rp_mcast_l2_for_us), and a datagram to it (BTH DestQP
 * 0xFFFFFF) goes to every attached QP (rp_recv.c); on an XDP port the
 * group's address also goes into the program's map, so that its RoCEv2
 * reaches the engine instead of the kernel.  As in rxe, nothing is said to
 * the network: no IGMP or MLD report, so a switch that snoops them does
 * not forward the group to the port (the RDMA CM's join makes the kernel
 * send them, rdmacm/cm_mcast.c).
 */

#include <errno.h>
#include <string.h>

#include <infiniband/verbs.h>

#include "rp_transport.h"

struct rp_mcast *
rp_mcast_find(struct rp_dev *dev, const uint8_t gid[16])
{
	for (unsigned int i = 0; i < RP_MAX_MCAST; i++)
		if (dev->mcast[i].nr_qp != 0 &&
		    memcmp(dev->mcast[i].gid, gid, 16) == 0)
			return &dev->mcast[i];
	return NULL;
}

bool
rp_mcast_l2_for_us(const struct rp_dev *dev, const struct rte_ether_addr *dst)
{
	if (!rte_is_multicast_ether_addr(dst))
		return false;
	for (unsigned int i = 0; i < RP_MAX_MCAST; i++)
		if (dev->mcast[i].nr_qp != 0 &&
		    rte_is_same_ether_addr(&dev->mcast[i].mac, dst))
			return true;
	return false;
}

int
rp_mcast_attach(struct rp_dev *dev, struct rp_ctrl_mcast *c)
{
	struct rp_qp *qp = rp_qp_get(dev, c->qpn);
	struct rp_mcast *g, *free_g = NULL;

	/* ibv_attach_mcast(3): UD QPs, multicast GIDs. */
	if (qp == NULL || qp->type != IBV_QPT_UD || !rp_gid_is_mcast(c->gid))
		return -EINVAL;
	g = rp_mcast_find(dev, c->gid);
	if (g == NULL) {
		for (unsigned int i = 0; i < RP_MAX_MCAST; i++)
			if (dev->mcast[i].nr_qp == 0) {
				free_g = &dev->mcast[i];
				break;
			}
		if (free_g == NULL)
			return -ENOMEM;
		g = free_g;
		memcpy(g->gid, c->gid, 16);
		rp_gid_mcast_mac(c->gid, g->mac.addr_bytes);
	}
	for (uint32_t i = 0; i < g->nr_qp; i++)
		if (g->qpn[i] == c->qpn)
			return 0;	/* attached already: as the kernel */
	if (g->nr_qp == RP_MCAST_QPS)
		return -ENOMEM;
	/* Shard 0 receives for groups (rp_shard.c). */
	if (rp_shard_move_to(qp, 0) != 0)
		return -ENOMEM;
	g->qpn[g->nr_qp++] = c->qpn;
	if (g->nr_qp == 1)
		rp_xdp_port_group(&dev->port, g->gid, true);
	return 0;
}

static int
mcast_detach(struct rp_dev *dev, uint32_t qpn, const uint8_t gid[16])
{
	struct rp_mcast *g = rp_mcast_find(dev, gid);

	if (g == NULL)
		return -EINVAL;
	for (uint32_t i = 0; i < g->nr_qp; i++)
		if (g->qpn[i] == qpn) {
			g->qpn[i] = g->qpn[--g->nr_qp];
			if (g->nr_qp == 0)
				rp_xdp_port_group(&dev->port, g->gid, false);
			return 0;
		}
	return -EINVAL;
}

int
rp_mcast_detach(struct rp_dev *dev, struct rp_ctrl_mcast *c)
{
	struct rp_qp *qp = rp_qp_get(dev, c->qpn);

	if (qp == NULL || qp->type != IBV_QPT_UD)
		return -EINVAL;
	return mcast_detach(dev, c->qpn, c->gid);
}

/* A QP goes: it leaves its groups, as uverbs detaches them on destroy. */
void
rp_mcast_qp_gone(struct rp_dev *dev, uint32_t qpn)
{
	for (unsigned int i = 0; i < RP_MAX_MCAST; i++)
		if (dev->mcast[i].nr_qp != 0)
			mcast_detach(dev, qpn, dev->mcast[i].gid);
}
