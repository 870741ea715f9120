/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The network layer: the GID table, the neighbour cache with ARP and ND in
 * front of it, the kernel's neighbour table, the netdev watch.
 */

#ifndef _RP_NET_H_
#define _RP_NET_H_

#include <stdbool.h>
#include <stdint.h>

#include <rte_ether.h>
#include <rte_mbuf.h>

struct rp_dev;

#define RP_NEIGH_ENTRIES 64u		/* ARP and ND share the cache */

/* A neighbour, IPv4 (ARP) or IPv6 (ND), keyed by its address as a GID. */
struct rp_neigh {
	uint8_t ip[16];			/* ::ffff:a.b.c.d or IPv6; 0 = free */
	struct rte_ether_addr mac;
	bool valid;
	uint64_t last_req;		/* TSC of the last request sent */
	uint64_t confirmed;		/* TSC the peer last said its MAC; 0: stale */
};

/* ---- rp_gid.c: the GID table */
void rp_gid_init(struct rp_dev *dev);
int rp_dev_gid_find(const struct rp_dev *dev, const uint8_t gid[16]);
/* The source GID of packets from index `idx` to `dgid`, or NULL when the
 * entry is empty or of the other family (IPv4 vs IPv6). */
const uint8_t *rp_dev_sgid(const struct rp_dev *dev, uint32_t idx,
			   const uint8_t dgid[16]);

/* ---- rp_neigh.c (the neighbour cache; fronts rp_arp.c and rp_nd.c) */
void rp_neigh_learn(struct rp_dev *dev, const uint8_t ip[16],
		    const struct rte_ether_addr *mac, bool create);
int rp_neigh_resolve(struct rp_dev *dev, const uint8_t ip[16],
		     uint8_t mac[6]);
void rp_neigh_probe(struct rp_dev *dev, const uint8_t ip[16]);

/* ---- rp_arp.c */
void rp_arp_input(struct rp_dev *dev, struct rte_mbuf *m);
void rp_arp_solicit(struct rp_dev *dev, uint32_t ip);
bool rp_arp_on_link(const struct rp_dev *dev, uint32_t ip);

/* ---- rp_nd.c */
bool rp_nd_input(struct rp_dev *dev, struct rte_mbuf *m);
void rp_nd_solicit(struct rp_dev *dev, const uint8_t ip[16]);
bool rp_nd_on_link(const struct rp_dev *dev, const uint8_t ip[16]);
bool rp_nd_l2_for_us(const struct rp_dev *dev,
		     const struct rte_ether_addr *dst);

/* ---- rp_netdev_watch.c */
int rp_netdev_watch_init(struct rp_dev *dev);
void rp_netdev_watch_fini(struct rp_dev *dev);
/* true: the interface's addresses changed, and are in *pc */
struct rp_port_cfg;
bool rp_netdev_watch_poll(struct rp_dev *dev, struct rp_port_cfg *pc);

/* ---- rp_neigh_kernel.c */
int rp_neigh_kernel(const struct rp_dev *dev, const uint8_t ip[16],
		    uint8_t mac[6]);

#endif /* _RP_NET_H_ */
