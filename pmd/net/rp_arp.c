/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ARP, the IPv4 front of the neighbour cache (rp_neigh.c): answer for the
 * device's own IPv4 address, learn peers' MACs from what they say, and
 * ask for a peer's MAC.
 */

#include <errno.h>
#include <string.h>

#include <rte_arp.h>
#include <rte_ether.h>

#include "rp_net.h"

static void
arp_send(struct rp_net_q *nq, uint16_t op, const struct rte_ether_addr *dmac,
	 uint32_t tip)
{
	uint32_t len = sizeof(struct rte_ether_hdr) + sizeof(struct rte_arp_hdr);
	struct rte_ether_hdr *eth;
	struct rte_arp_hdr *arp;
	struct rte_mbuf *m;
	uint8_t *p;

	m = rp_port_alloc(nq->pq, len, &p);
	if (m == NULL)
		return;
	eth = (struct rte_ether_hdr *)p;
	arp = (struct rte_arp_hdr *)(eth + 1);
	if (dmac != NULL)
		rte_ether_addr_copy(dmac, &eth->dst_addr);
	else
		memset(&eth->dst_addr, 0xff, RTE_ETHER_ADDR_LEN);
	rte_ether_addr_copy(&nq->net->port->mac, &eth->src_addr);
	eth->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_ARP);
	arp->arp_hardware = rte_cpu_to_be_16(RTE_ARP_HRD_ETHER);
	arp->arp_protocol = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
	arp->arp_hlen = RTE_ETHER_ADDR_LEN;
	arp->arp_plen = 4;
	arp->arp_opcode = rte_cpu_to_be_16(op);
	rte_ether_addr_copy(&nq->net->port->mac, &arp->arp_data.arp_sha);
	arp->arp_data.arp_sip = nq->net->ipv4;
	if (dmac != NULL)
		rte_ether_addr_copy(dmac, &arp->arp_data.arp_tha);
	else
		memset(&arp->arp_data.arp_tha, 0, RTE_ETHER_ADDR_LEN);
	arp->arp_data.arp_tip = tip;
	rp_stats_inc(nq->pq->stats, RP_STAT_ARP_TX);
	rp_port_tx(nq->pq, m);
}

void
rp_arp_input(struct rp_net_q *nq, struct rte_mbuf *m)
{
	const struct rte_arp_hdr *arp;
	uint32_t sip, tip;

	rp_stats_inc(nq->pq->stats, RP_STAT_ARP_RX);
	if (rte_pktmbuf_data_len(m) < sizeof(struct rte_ether_hdr) +
	    sizeof(struct rte_arp_hdr))
		return;
	arp = rte_pktmbuf_mtod_offset(m, const struct rte_arp_hdr *,
				      sizeof(struct rte_ether_hdr));
	if (arp->arp_hardware != rte_cpu_to_be_16(RTE_ARP_HRD_ETHER) ||
	    arp->arp_protocol != rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4) ||
	    arp->arp_hlen != RTE_ETHER_ADDR_LEN || arp->arp_plen != 4)
		return;
	sip = arp->arp_data.arp_sip;
	tip = arp->arp_data.arp_tip;
	/* Learn from requests and replies alike, but only about others. */
	if (sip != 0 && sip != nq->net->ipv4) {
		uint8_t gid[16] = { [10] = 0xff, [11] = 0xff };

		memcpy(&gid[12], &sip, 4);
		rp_neigh_learn(nq, gid, &arp->arp_data.arp_sha,
			       tip == nq->net->ipv4);
	}
	/* A port bound to a kernel interface: the address is the kernel's,
	 * which answers for it (guides/xdp). */
	if (arp->arp_opcode == rte_cpu_to_be_16(RTE_ARP_OP_REQUEST) &&
	    tip == nq->net->ipv4 && nq->net->cfg->netdev[0] == '\0' &&
	    nq->pq->idx == 0)
		arp_send(nq, RTE_ARP_OP_REPLY, &arp->arp_data.arp_sha, sip);
}

/* Is `ip` (network order) in the port's IPv4 subnet? */
bool
rp_arp_on_link(const struct rp_net *net, uint32_t ip)
{
	uint32_t plen = net->cfg->prefix_len;
	uint32_t mask = plen == 0 ? 0 : rte_cpu_to_be_32(~0u << (32 - plen));

	return (ip & mask) == (net->ipv4 & mask);
}

/* Broadcast a request for the MAC of `ip` (network order). */
void
rp_arp_solicit(struct rp_net_q *nq, uint32_t ip)
{
	arp_send(nq, RTE_ARP_OP_REQUEST, NULL, ip);
}
