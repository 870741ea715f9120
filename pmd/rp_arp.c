/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ARP: answer for the device's own IPv4 address and resolve peers' MACs
 * into a small cache.  The engine owns the port, so it must speak ARP
 * itself; nothing else on the path would answer for a DPDK-owned NIC.
 *
 * Entries age as Linux's neighbours do: one not confirmed by the peer for
 * arp_reachable_ms is stale, and the next packet to it sends a request
 * while still using the old MAC.  A QP's retransmit timeout makes its
 * peer's entry stale at once (rp_arp_probe), since a peer that restarted
 * with another MAC is one reason for timeouts.  A changed MAC bumps
 * dev->arp_gen, which makes every connected QP read the cache again.
 */

#include <errno.h>
#include <string.h>

#include <rte_arp.h>
#include <rte_cycles.h>
#include <rte_ether.h>

#include "rp_log.h"
#include "rp_obj.h"

#define RP_ARP_RETRY_MS	50

static struct rp_arp_entry *
arp_find(struct rp_dev *dev, uint32_t ip, bool create)
{
	struct rp_arp_entry *free_e = NULL;

	for (unsigned int i = 0; i < RP_ARP_ENTRIES; i++) {
		if (dev->arp[i].ip == ip)
			return &dev->arp[i];
		if (dev->arp[i].ip == 0 && free_e == NULL)
			free_e = &dev->arp[i];
	}
	if (!create)
		return NULL;
	if (free_e == NULL)	/* full: recycle a slot, cheap and bounded */
		free_e = &dev->arp[ip % RP_ARP_ENTRIES];
	memset(free_e, 0, sizeof(*free_e));
	free_e->ip = ip;
	return free_e;
}

static bool
arp_due(const struct rp_arp_entry *e, uint64_t now)
{
	return e->last_req == 0 ||
		now - e->last_req > rte_get_timer_hz() * RP_ARP_RETRY_MS / 1000;
}

static void
arp_send(struct rp_dev *dev, uint16_t op, const struct rte_ether_addr *dmac,
	 uint32_t tip)
{
	uint32_t len = sizeof(struct rte_ether_hdr) + sizeof(struct rte_arp_hdr);
	struct rte_ether_hdr *eth;
	struct rte_arp_hdr *arp;
	struct rte_mbuf *m;
	uint8_t *p;

	m = rp_port_alloc(dev, len, &p);
	if (m == NULL)
		return;
	eth = (struct rte_ether_hdr *)p;
	arp = (struct rte_arp_hdr *)(eth + 1);
	if (dmac != NULL)
		rte_ether_addr_copy(dmac, &eth->dst_addr);
	else
		memset(&eth->dst_addr, 0xff, RTE_ETHER_ADDR_LEN);
	rte_ether_addr_copy(&dev->mac, &eth->src_addr);
	eth->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_ARP);
	arp->arp_hardware = rte_cpu_to_be_16(RTE_ARP_HRD_ETHER);
	arp->arp_protocol = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
	arp->arp_hlen = RTE_ETHER_ADDR_LEN;
	arp->arp_plen = 4;
	arp->arp_opcode = rte_cpu_to_be_16(op);
	rte_ether_addr_copy(&dev->mac, &arp->arp_data.arp_sha);
	arp->arp_data.arp_sip = dev->ipv4;
	if (dmac != NULL)
		rte_ether_addr_copy(dmac, &arp->arp_data.arp_tha);
	else
		memset(&arp->arp_data.arp_tha, 0, RTE_ETHER_ADDR_LEN);
	arp->arp_data.arp_tip = tip;
	rp_stat_inc(dev, RP_STAT_ARP_TX);
	rp_port_tx(dev, m);
}

void
rp_arp_input(struct rp_dev *dev, struct rte_mbuf *m)
{
	const struct rte_arp_hdr *arp;
	struct rp_arp_entry *e;
	uint32_t sip, tip;

	rp_stat_inc(dev, RP_STAT_ARP_RX);
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
	if (sip != 0 && sip != dev->ipv4 &&
	    !rte_is_multicast_ether_addr(&arp->arp_data.arp_sha)) {
		e = arp_find(dev, sip, tip == dev->ipv4);
		if (e != NULL) {
			if (e->valid && !rte_is_same_ether_addr(&e->mac,
					&arp->arp_data.arp_sha)) {
				rp_stat_inc(dev, RP_STAT_ARP_MAC_CHANGED);
				dev->arp_gen++;
			}
			rte_ether_addr_copy(&arp->arp_data.arp_sha, &e->mac);
			e->valid = true;
			e->confirmed = rte_get_timer_cycles();
		}
	}
	if (arp->arp_opcode == rte_cpu_to_be_16(RTE_ARP_OP_REQUEST) &&
	    tip == dev->ipv4)
		arp_send(dev, RTE_ARP_OP_REPLY, &arp->arp_data.arp_sha, sip);
}

static bool
same_subnet(const struct rp_dev *dev, uint32_t ip)
{
	uint32_t plen = dev->cfg.prefix_len;
	uint32_t mask = plen == 0 ? 0 : rte_cpu_to_be_32(~0u << (32 - plen));

	return (ip & mask) == (dev->ipv4 & mask);
}

/* 0 and the MAC, -EAGAIN while a request is out, -ENETUNREACH off-link. */
int
rp_arp_resolve(struct rp_dev *dev, uint32_t ip, uint8_t mac[6])
{
	struct rp_arp_entry *e;
	uint64_t now;

	if (ip == dev->ipv4) {
		memcpy(mac, dev->mac.addr_bytes, 6);
		return 0;
	}
	if (!same_subnet(dev, ip))
		return -ENETUNREACH;
	e = arp_find(dev, ip, true);
	now = rte_get_timer_cycles();
	if (e->valid) {
		memcpy(mac, e->mac.addr_bytes, 6);
		if (now - e->confirmed > rte_get_timer_hz() / 1000 *
		    dev->cfg.arp_reachable_ms && arp_due(e, now)) {
			e->last_req = now;
			rp_stat_inc(dev, RP_STAT_ARP_REFRESH);
			arp_send(dev, RTE_ARP_OP_REQUEST, NULL, ip);
		}
		return 0;
	}
	if (arp_due(e, now)) {
		e->last_req = now;
		arp_send(dev, RTE_ARP_OP_REQUEST, NULL, ip);
	}
	return -EAGAIN;
}

/*
 * The peer at `ip` stopped answering: make its entry stale, so that the
 * next packet to it confirms the MAC again (a request goes out now).
 */
void
rp_arp_probe(struct rp_dev *dev, uint32_t ip)
{
	struct rp_arp_entry *e = arp_find(dev, ip, false);
	uint8_t mac[6];

	if (e == NULL || !e->valid)
		return;
	e->confirmed = 0;
	rp_arp_resolve(dev, ip, mac);
}
