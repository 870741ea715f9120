/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The neighbour cache: MACs of on-link peers, IPv4 (learnt by ARP,
 * rp_arp.c) and IPv6 (learnt by neighbour discovery, rp_nd.c) alike, keyed
 * by the address as a GID.  The engine owns the port, so it must resolve
 * its peers itself; nothing else on the path would answer for a
 * DPDK-owned NIC.
 *
 * Entries age as Linux's neighbours do: one not confirmed by the peer for
 * arp_reachable_ms is stale, and the next packet to it sends a request
 * while still using the old MAC.  A QP's retransmit timeout makes its
 * peer's entry stale at once (rp_neigh_probe), since a peer that
 * restarted with another MAC is one reason for timeouts.  A changed MAC
 * bumps the shard's arp_gen, which makes every connected QP read the cache
 * again.  Each shard of a device has its own cache (rp_shard.c).
 */

#include <errno.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_ether.h>

#include "rp_net.h"

#define RP_NEIGH_RETRY_MS	50

static bool
neigh_free(const struct rp_neigh *e)
{
	static const uint8_t zero[16];

	return memcmp(e->ip, zero, 16) == 0;
}

static struct rp_neigh *
neigh_find(struct rp_net_q *nq, const uint8_t ip[16], bool create)
{
	struct rp_neigh *tbl = nq->neigh;
	struct rp_neigh *free_e = NULL;

	for (unsigned int i = 0; i < RP_NEIGH_ENTRIES; i++) {
		if (memcmp(tbl[i].ip, ip, 16) == 0)
			return &tbl[i];
		if (free_e == NULL && neigh_free(&tbl[i]))
			free_e = &tbl[i];
	}
	if (!create)
		return NULL;
	if (free_e == NULL)	/* full: recycle a slot, cheap and bounded */
		free_e = &tbl[ip[15] % RP_NEIGH_ENTRIES];
	memset(free_e, 0, sizeof(*free_e));
	memcpy(free_e->ip, ip, 16);
	return free_e;
}

/*
 * The peer at `ip` said its MAC (a request or a reply).  An entry is made
 * only when `create` (the peer asked for us, or we asked for it), as
 * Linux does; otherwise only an entry we have is refreshed.
 */
void
rp_neigh_learn(struct rp_net_q *nq, const uint8_t ip[16],
	       const struct rte_ether_addr *mac, bool create)
{
	struct rp_neigh *e;

	if (rte_is_multicast_ether_addr(mac) || rte_is_zero_ether_addr(mac) ||
	    rp_gid_find(nq->net, ip) >= 0)
		return;
	e = neigh_find(nq, ip, create);
	if (e == NULL)
		return;
	if (e->valid && !rte_is_same_ether_addr(&e->mac, mac)) {
		rp_stats_inc(nq->pq->stats, RP_STAT_ARP_MAC_CHANGED);
		nq->arp_gen++;
	}
	rte_ether_addr_copy(mac, &e->mac);
	e->valid = true;
	e->confirmed = rte_get_timer_cycles();
}

static bool
neigh_due(const struct rp_neigh *e, uint64_t now)
{
	return e->last_req == 0 ||
		now - e->last_req > rte_get_timer_hz() * RP_NEIGH_RETRY_MS / 1000;
}

/* Ask who has `ip`: ARP for IPv4, a neighbour solicitation for IPv6. */
static void
neigh_solicit(struct rp_net_q *nq, const uint8_t ip[16])
{
	uint32_t ip4;

	if (rp_gid_is_v4(ip)) {
		memcpy(&ip4, &ip[12], 4);
		rp_arp_solicit(nq, ip4);
	} else {
		rp_nd_solicit(nq, ip);
	}
}

static bool
neigh_on_link(const struct rp_net *net, const uint8_t ip[16])
{
	uint32_t ip4;

	if (!rp_gid_is_v4(ip))
		return rp_nd_on_link(net, ip);
	memcpy(&ip4, &ip[12], 4);
	return rp_arp_on_link(net, ip4);
}

/*
 * On a port whose addresses are the kernel's, ARP replies and neighbour
 * advertisements reach the kernel, not the engine: the kernel's table has
 * the peer (rp_neigh_kernel.c).  Whether it had it: `e` valid then.
 */
static bool
neigh_from_kernel(struct rp_net_q *nq, struct rp_neigh *e,
		  const uint8_t ip[16], uint64_t now)
{
	uint8_t mac[6];

	if (nq->net->port->xdp_addrs_fd < 0 || rp_neigh_kernel(nq->net, ip, mac) != 0)
		return false;
	memcpy(e->mac.addr_bytes, mac, 6);
	e->valid = true;
	e->confirmed = now;
	rp_stats_inc(nq->pq->stats, RP_STAT_NEIGH_KERNEL);
	return true;
}

/*
 * The MAC of unicast `ip`: 0 and the MAC, -EAGAIN while a request is out
 * (repeated at most every RP_NEIGH_RETRY_MS as long as someone asks),
 * -ENETUNREACH off-link.
 */
int
rp_neigh_resolve(struct rp_net_q *nq, const uint8_t ip[16], uint8_t mac[6])
{
	struct rp_neigh *e;
	uint64_t now;

	if (rp_gid_find(nq->net, ip) >= 0) {
		memcpy(mac, nq->net->port->mac.addr_bytes, 6);
		return 0;
	}
	if (!neigh_on_link(nq->net, ip))
		return -ENETUNREACH;
	e = neigh_find(nq, ip, true);
	now = rte_get_timer_cycles();
	if (e->valid) {
		if (now - e->confirmed > rte_get_timer_hz() / 1000 *
		    nq->net->cfg->arp_reachable_ms && neigh_due(e, now)) {
			e->last_req = now;
			rp_stats_inc(nq->pq->stats, RP_STAT_ARP_REFRESH);
			if (!neigh_from_kernel(nq, e, ip, now))
				neigh_solicit(nq, ip);
		}
		memcpy(mac, e->mac.addr_bytes, 6);
		return 0;
	}
	if (neigh_due(e, now)) {
		e->last_req = now;
		if (neigh_from_kernel(nq, e, ip, now)) {
			memcpy(mac, e->mac.addr_bytes, 6);
			return 0;
		}
		neigh_solicit(nq, ip);
	}
	return -EAGAIN;
}

/*
 * The peer at `ip` stopped answering: make its entry stale, so that the
 * next packet to it confirms the MAC again (a request goes out now).
 */
void
rp_neigh_probe(struct rp_net_q *nq, const uint8_t ip[16])
{
	struct rp_neigh *e = neigh_find(nq, ip, false);
	uint8_t mac[6];

	if (e == NULL || !e->valid)
		return;
	e->confirmed = 0;
	rp_neigh_resolve(nq, ip, mac);
}
