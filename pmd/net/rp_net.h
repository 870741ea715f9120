/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The network layer: the GID table, the neighbour cache with ARP and ND in
 * front of it, the kernel's neighbour table, the netdev watch.  It sends
 * through the port layer (rp_port.h) and counts in its queue's counters.
 */

#ifndef _RP_NET_H_
#define _RP_NET_H_

#include <stdbool.h>
#include <stdint.h>

#include <rte_ether.h>
#include <rte_mbuf.h>

#include "rp_abi.h"
#include "rp_pkt.h"
#include "rp_port.h"

#define RP_NEIGH_ENTRIES 64u		/* ARP and ND share the cache */

/* A neighbour, IPv4 (ARP) or IPv6 (ND), keyed by its address as a GID. */
struct rp_neigh {
	uint8_t ip[16];			/* ::ffff:a.b.c.d or IPv6; 0 = free */
	struct rte_ether_addr mac;
	bool valid;
	uint64_t last_req;		/* TSC of the last request sent */
	uint64_t confirmed;		/* TSC the peer last said its MAC; 0: stale */
};

/*
 * A device's addresses on its port: the GID table (mirrored in the control
 * block by the engine) and what watches the interface.  Written at start
 * and by the lcore of queue 0 while the others wait (rp_dev_addrs_set);
 * the passes read it.
 */
struct rp_net {
	unsigned int id;		/* the device's number: logs */
	const struct rp_port_cfg *cfg;	/* addresses, prefixes, netdev */
	struct rp_port *port;		/* its MAC, interface, XDP maps */
	uint32_t ipv4;			/* network order */
	uint8_t gid[RP_GID_TBL_LEN][16];	/* zero: empty */
	uint32_t nr_gid;		/* entries in use, from 0 */
	/* netdev-bound (rp_netdev_watch.c): rtnetlink address events */
	int nl_fd;			/* or -1 */
	uint32_t nl_ifindex;
};

/*
 * One lcore's share: each resolves its peers itself (ARP and neighbour
 * discovery reach every lcore of the device) and sends on its own port
 * queue.  One writer, that lcore.
 */
struct rp_net_q {
	struct rp_net *net;
	struct rp_port_q *pq;
	struct rp_neigh neigh[RP_NEIGH_ENTRIES];
	uint32_t arp_gen;		/* bumped when a cached MAC changes */
};

/* Nothing open yet (rp_netdev_watch_fini may follow at once). */
static inline void
rp_net_setup(struct rp_net *net, unsigned int id,
	     const struct rp_port_cfg *cfg, struct rp_port *port)
{
	net->id = id;
	net->cfg = cfg;
	net->port = port;
	net->ipv4 = cfg->ipv4;
	net->nl_fd = -1;
}

static inline void
rp_net_add_queue(struct rp_net *net, struct rp_net_q *nq,
		 struct rp_port_q *pq)
{
	nq->net = net;
	nq->pq = pq;
}

/* ---- rp_gid.c: the GID table */
void rp_gid_init(struct rp_net *net);
int rp_gid_find(const struct rp_net *net, const uint8_t gid[16]);
/* The source GID of packets from index `idx` to `dgid`, or NULL when the
 * entry is empty or of the other family (IPv4 vs IPv6). */
const uint8_t *rp_gid_sgid(const struct rp_net *net, uint32_t idx,
			   const uint8_t dgid[16]);

/* ---- rp_neigh.c (the neighbour cache; fronts rp_arp.c and rp_nd.c) */
void rp_neigh_learn(struct rp_net_q *nq, const uint8_t ip[16],
		    const struct rte_ether_addr *mac, bool create);
int rp_neigh_resolve(struct rp_net_q *nq, const uint8_t ip[16],
		     uint8_t mac[6]);
void rp_neigh_probe(struct rp_net_q *nq, const uint8_t ip[16]);

/* ---- rp_arp.c */
void rp_arp_input(struct rp_net_q *nq, struct rte_mbuf *m);
void rp_arp_solicit(struct rp_net_q *nq, uint32_t ip);
bool rp_arp_on_link(const struct rp_net *net, uint32_t ip);

/* ---- rp_nd.c */
bool rp_nd_input(struct rp_net_q *nq, struct rte_mbuf *m);
void rp_nd_solicit(struct rp_net_q *nq, const uint8_t ip[16]);
bool rp_nd_on_link(const struct rp_net *net, const uint8_t ip[16]);
bool rp_nd_l2_for_us(const struct rp_net *net,
		     const struct rte_ether_addr *dst);

/* ---- rp_netdev_watch.c */
int rp_netdev_watch_init(struct rp_net *net);
void rp_netdev_watch_fini(struct rp_net *net);
/* true: the interface's addresses changed, and are in *pc */
bool rp_netdev_watch_poll(struct rp_net *net, struct rp_port_cfg *pc);

/* ---- rp_neigh_kernel.c */
int rp_neigh_kernel(const struct rp_net *net, const uint8_t ip[16],
		    uint8_t mac[6]);

#endif /* _RP_NET_H_ */
