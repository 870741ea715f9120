/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * IPv6 neighbour discovery (RFC 4861), the IPv6 front of the neighbour
 * cache (rp_neigh.c): answer neighbour solicitations for the device's
 * IPv6 addresses (GID indexes 1..), learn peers' MACs from solicitations
 * and advertisements, and solicit a peer's MAC.  Solicitations go to the
 * target's solicited-node group ff02::1:ffXX:XXXX (Ethernet
 * 33:33:ff:XX:XX:XX), which the port's address filter takes for every
 * address of ours (rp_nd_l2_for_us).  Only what RoCE needs: no router or
 * redirect messages, no duplicate address detection of our own.
 */

#include <string.h>

#include <rte_ether.h>
#include <rte_ip.h>

#include "rp_net.h"

#define RP_ICMP6		58
#define RP_ND_NS		135
#define RP_ND_NA		136
#define RP_ND_OPT_SLLA		1	/* source link-layer address */
#define RP_ND_OPT_TLLA		2	/* target link-layer address */
#define RP_ND_NA_SOLICITED	0x40
#define RP_ND_NA_OVERRIDE	0x20
#define RP_ND_HOP_LIMIT		255	/* RFC 4861 7.1.1: never forwarded */
#define RP_ND_LEN		32	/* NS/NA with one link-layer option */

/* ICMPv6 NS/NA: type, code, checksum, flags, target, one option. */
struct rp_nd_msg {
	uint8_t type;
	uint8_t code;
	rte_be16_t cksum;
	uint8_t flags;			/* NA: R S O; NS: reserved */
	uint8_t rsvd[3];
	uint8_t target[16];
	uint8_t opt_type;
	uint8_t opt_len;		/* units of 8 bytes: 1 */
	uint8_t opt_mac[6];
} __rte_packed;

static const uint8_t rp_nd_unspec[16];
static const uint8_t rp_nd_all_nodes[16] = {
	0xff, 0x02, [15] = 0x01,
};

/* ff02::1:ffXX:XXXX, the solicited-node group of `ip` (RFC 4291 2.7.1). */
static void
nd_snm(const uint8_t ip[16], uint8_t grp[16])
{
	static const uint8_t pfx[13] = {
		0xff, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x01, 0xff,
	};

	memcpy(grp, pfx, 13);
	memcpy(&grp[13], &ip[13], 3);
}

static uint16_t
nd_cksum(const struct rte_ipv6_hdr *ip, const void *l4, uint32_t len)
{
	uint32_t sum = rte_raw_cksum(l4, len) + rte_ipv6_phdr_cksum(ip, 0);

	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)sum;
}

static bool
nd_is_ours(const struct rp_net *net, const uint8_t ip[16])
{
	int i = rp_gid_find(net, ip);

	return i > 0;		/* index 0 is the IPv4 GID */
}

/*
 * Our address to send from to `dst`: the link-local one to link-local
 * and multicast peers, else the first configured one on dst's prefix (the
 * link-local one if none is, as RFC 6724 rule 2 would pick).
 */
static const uint8_t *
nd_src_for(const struct rp_net *net, const uint8_t dst[16])
{
	if (dst[0] != 0xff && !(dst[0] == 0xfe && (dst[1] & 0xc0) == 0x80))
		for (unsigned int i = 0; i < net->cfg->nr_ipv6; i++) {
			uint8_t plen = net->cfg->ipv6_plen[i];
			const uint8_t *a = net->cfg->ipv6[i];
			unsigned int n = plen / 8;

			if (memcmp(a, dst, n) == 0 && (plen % 8 == 0 ||
			    ((a[n] ^ dst[n]) & (0xff00 >> (plen % 8))) == 0))
				return a;
		}
	return net->gid[1];
}

/* Is `ip` on the link: link-local, or on the prefix of an address of ours? */
bool
rp_nd_on_link(const struct rp_net *net, const uint8_t ip[16])
{
	if (ip[0] == 0xfe && (ip[1] & 0xc0) == 0x80)
		return true;
	return nd_src_for(net, ip) != net->gid[1];
}

/*
 * The solicited-node groups of our IPv6 addresses, where solicitations
 * for them come.  Not all-nodes (ff02::1): only unsolicited
 * advertisements go there, and the cache does without them.
 */
bool
rp_nd_l2_for_us(const struct rp_net *net, const struct rte_ether_addr *dst)
{
	const uint8_t *d = dst->addr_bytes;

	if (d[0] != 0x33 || d[1] != 0x33 || d[2] != 0xff)
		return false;
	for (unsigned int i = 1; i < net->nr_gid; i++)
		if (memcmp(&net->gid[i][13], &d[3], 3) == 0)
			return true;
	return false;
}

static void
nd_send(struct rp_net_q *nq, uint8_t type, uint8_t flags,
	const struct rte_ether_addr *dmac, const uint8_t src[16],
	const uint8_t dst[16], const uint8_t target[16])
{
	uint32_t len = sizeof(struct rte_ether_hdr) +
		sizeof(struct rte_ipv6_hdr) + RP_ND_LEN;
	struct rte_ether_hdr *eth;
	struct rte_ipv6_hdr *ip;
	struct rp_nd_msg *nd;
	struct rte_mbuf *m;
	uint8_t *p;

	m = rp_port_alloc(nq->pq, len, &p);
	if (m == NULL)
		return;
	memset(p, 0, len);
	eth = (struct rte_ether_hdr *)p;
	ip = (struct rte_ipv6_hdr *)(eth + 1);
	nd = (struct rp_nd_msg *)(ip + 1);
	rte_ether_addr_copy(dmac, &eth->dst_addr);
	rte_ether_addr_copy(&nq->net->port->mac, &eth->src_addr);
	eth->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV6);
	ip->vtc_flow = rte_cpu_to_be_32(6u << 28);
	ip->payload_len = rte_cpu_to_be_16(RP_ND_LEN);
	ip->proto = RP_ICMP6;
	ip->hop_limits = RP_ND_HOP_LIMIT;
	memcpy(ip->src_addr, src, 16);
	memcpy(ip->dst_addr, dst, 16);
	nd->type = type;
	nd->flags = flags;
	memcpy(nd->target, target, 16);
	nd->opt_type = type == RP_ND_NS ? RP_ND_OPT_SLLA : RP_ND_OPT_TLLA;
	nd->opt_len = 1;
	memcpy(nd->opt_mac, nq->net->port->mac.addr_bytes, 6);
	/* One's complement sums are byte-order neutral: no swap. */
	nd->cksum = (uint16_t)~nd_cksum(ip, nd, RP_ND_LEN);
	rp_stats_inc(nq->pq->stats, RP_STAT_ND_TX);
	rp_port_tx(nq->pq, m);
}

/* Multicast a solicitation for the MAC of `ip`. */
void
rp_nd_solicit(struct rp_net_q *nq, const uint8_t ip[16])
{
	struct rte_ether_addr dmac;
	uint8_t grp[16];

	nd_snm(ip, grp);
	rp_gid_mcast_mac(grp, dmac.addr_bytes);
	nd_send(nq, RP_ND_NS, 0, &dmac, nd_src_for(nq->net, ip), grp, ip);
}

/* The link-layer option of type `want` in options [opt, end), or NULL. */
static const struct rte_ether_addr *
nd_opt_mac(const uint8_t *opt, const uint8_t *end, uint8_t want)
{
	while (end - opt >= 8) {
		uint32_t olen = (uint32_t)opt[1] * 8;

		if (olen == 0 || olen > (uint32_t)(end - opt))
			return NULL;	/* RFC 4861 4.6: length 0 is invalid */
		if (opt[0] == want && olen == 8)
			return (const struct rte_ether_addr *)(opt + 2);
		opt += olen;
	}
	return NULL;
}

/*
 * An IPv6 frame: neighbour discovery is taken (true), anything else is
 * left to the RoCE parser (false).  Validated as RFC 4861 7.1 says: hop
 * limit 255, code 0, a correct checksum, no link-layer option from the
 * unspecified address.
 */
bool
rp_nd_input(struct rp_net_q *nq, struct rte_mbuf *m)
{
	const uint32_t l3 = sizeof(struct rte_ether_hdr);
	const struct rte_ether_hdr *eth;
	const struct rte_ipv6_hdr *ip;
	const struct rte_ether_addr *ll;
	const struct rp_nd_msg *nd;
	const uint8_t *opt, *end;
	uint32_t plen;
	bool unspec;

	if (rte_pktmbuf_data_len(m) < l3 + sizeof(*ip))
		return false;
	eth = rte_pktmbuf_mtod(m, const struct rte_ether_hdr *);
	ip = rte_pktmbuf_mtod_offset(m, const struct rte_ipv6_hdr *, l3);
	if ((ip->vtc_flow & rte_cpu_to_be_32(0xf0000000u)) !=
	    rte_cpu_to_be_32(6u << 28) || ip->proto != RP_ICMP6)
		return false;
	rp_stats_inc(nq->pq->stats, RP_STAT_ND_RX);
	plen = rte_be_to_cpu_16(ip->payload_len);
	if (plen < 24 || plen > rte_pktmbuf_data_len(m) - l3 - sizeof(*ip) ||
	    ip->hop_limits != RP_ND_HOP_LIMIT)
		return true;
	nd = (const struct rp_nd_msg *)(ip + 1);
	if ((nd->type != RP_ND_NS && nd->type != RP_ND_NA) || nd->code != 0 ||
	    nd_cksum(ip, nd, plen) != 0xffff)
		return true;
	opt = (const uint8_t *)nd + 24;
	end = (const uint8_t *)nd + plen;
	unspec = memcmp(ip->src_addr, rp_nd_unspec, 16) == 0;
	if (nd->type == RP_ND_NA) {
		ll = nd_opt_mac(opt, end, RP_ND_OPT_TLLA);
		if (ll == NULL)
			ll = &eth->src_addr;
		/* An advertisement updates; it makes no entry (7.2.5). */
		rp_neigh_learn(nq, nd->target, ll, false);
		return true;
	}
	if (!nd_is_ours(nq->net, nd->target) || nd->target[0] == 0xff)
		return true;
	/* A port bound to a kernel interface: the kernel answers. */
	if (nq->net->cfg->netdev[0] != '\0') {
		ll = nd_opt_mac(opt, end, RP_ND_OPT_SLLA);
		if (ll != NULL && !unspec)
			rp_neigh_learn(nq, ip->src_addr, ll, false);
		return true;
	}
	ll = nd_opt_mac(opt, end, RP_ND_OPT_SLLA);
	if (unspec) {
		/* Someone's duplicate address detection of one of ours:
		 * tell all nodes it is taken (7.2.4). */
		struct rte_ether_addr all;

		/* Every shard sees it (rp_shard.c); shard 0 answers. */
		if (ll != NULL || nq->pq->idx != 0)
			return true;
		rp_gid_mcast_mac(rp_nd_all_nodes, all.addr_bytes);
		nd_send(nq, RP_ND_NA, RP_ND_NA_OVERRIDE, &all, nd->target,
			rp_nd_all_nodes, nd->target);
		return true;
	}
	if (ll == NULL)
		ll = &eth->src_addr;
	rp_neigh_learn(nq, ip->src_addr, ll, true);
	if (nq->pq->idx != 0)
		return true;
	nd_send(nq, RP_ND_NA, RP_ND_NA_SOLICITED | RP_ND_NA_OVERRIDE, ll,
		nd->target, ip->src_addr, nd->target);
	return true;
}
