/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Receive classification: frames for someone else dropped, ARP to the
 * resolver, RoCEv2 parsed and checked once (lengths, opcode, ICRC, the
 * QP's transport and, for RC and UC, its peer's address), then handed to
 * the QP's responder (requests) or completer (responses).
 * Anything else is dropped and counted: a hostile frame costs a counter,
 * never a crash.
 */

#include <string.h>

#include <rte_ether.h>
#include <rte_mbuf.h>

#include <infiniband/verbs.h>

#include "rp_atomic.h"
#include "rp_log.h"
#include "rp_transport.h"

static bool
transport_matches(uint32_t mask, uint32_t qp_type)
{
	switch (qp_type) {
	case IBV_QPT_RC:
		return mask & RP_M_RC;
	case IBV_QPT_UC:
		return mask & RP_M_UC;
	case IBV_QPT_UD:
		return mask & RP_M_UD;
	default:
		return false;
	}
}

/*
 * RC and UC: only the QP's peer speaks to it.  The packet must come from
 * the address the QP's AV names and to the one the QP sends from (rxe's
 * check_addr: with RoCEv2 the GIDs are the IP addresses, IPv4-mapped or
 * IPv6).  Without it any host could retire our work requests with a
 * forged ACK, fail the QP with a NAK or write through a response.  The UDP
 * destination port was checked by the parser (4791); the source port is
 * the sender's entropy (IBTA A17.5.3) and is not checked, as in rxe.  UD
 * takes datagrams from anyone: the Q_Key is its check.
 */
static bool
from_peer(const struct rp_qp *qp, const struct rp_pkt *pkt)
{
	if (qp->type == IBV_QPT_UD)
		return true;
	return memcmp(pkt->sgid, qp->addr.dgid, 16) == 0 &&
		memcmp(pkt->dgid, qp->addr.sgid, 16) == 0;
}

/*
 * A CNP (RoCEv2 A17.9.3): a notification point says the packets of one of
 * our QPs went through a congested switch.  Only the QP's peer may say so
 * (a forged CNP would slow the QP: guides/congestion, threat model); for
 * a UD QP, whose peers are many, or a QP not connected, it is counted with
 * the packets for no QP.
 */
static void
recv_cnp(struct rp_dev *dev, const struct rp_pkt *pkt)
{
	struct rp_qp *qp = rp_qp_get(dev, pkt->qpn);

	if (qp == NULL || (qp->type != IBV_QPT_RC && qp->type != IBV_QPT_UC) ||
	    (qp->state != IBV_QPS_RTS && qp->state != IBV_QPS_SQD)) {
		rp_stat_inc(dev, RP_STAT_RX_NO_QP);
		return;
	}
	if (!from_peer(qp, pkt)) {
		rp_stat_inc(dev, RP_STAT_RX_NOT_PEER);
		return;
	}
	rp_cnp_rp(qp);
}

/*
 * An Ethernet NIC's address filter, which the port cannot be trusted with
 * (a configured MAC makes it promiscuous; af_packet and memif deliver
 * everything): our MAC, broadcast, the IPv6 groups neighbour discovery
 * needs (rp_nd.c), or a group a UD QP joined (rp_mcast.c).  Without it a
 * peer's misaddressed frame would be taken as ours; the kernel drops it.
 */
static bool
l2_for_us(const struct rp_dev *dev, const struct rte_ether_addr *dst)
{
	if (likely(rte_is_same_ether_addr(dst, &dev->port.mac)))
		return true;
	return rte_is_broadcast_ether_addr(dst) ||
		rp_nd_l2_for_us(&dev->net, dst) || rp_mcast_l2_for_us(dev, dst);
}

/*
 * A RoCE packet that came to a group address must be for a group: the
 * port listens on solicited-node groups for neighbour discovery only.
 */
static bool
l2_matches_l3(const struct rte_ether_hdr *eth, const struct rp_pkt *pkt)
{
	return !rte_is_multicast_ether_addr(&eth->dst_addr) ||
		rp_gid_is_mcast(pkt->dgid);
}

/*
 * Is the packet addressed to one of our GIDs, of its own IP version (an
 * IPv6 packet to ::ffff:a.b.c.d is nobody's)?
 */
static bool
gid_for_us(const struct rp_dev *dev, const struct rp_pkt *pkt)
{
	if (pkt->ipver == 4)
		return memcmp(pkt->dgid, dev->net.gid[0], 16) == 0;
	return !rp_gid_is_v4(pkt->dgid) && rp_gid_find(&dev->net, pkt->dgid) > 0;
}

/*
 * A datagram to a group: every UD QP attached gets it (DestQP 0xFFFFFF,
 * IBTA 9.8.1 / C10-8), each checking its own Q_Key.
 */
static void
recv_mcast(struct rp_dev *dev, const struct rp_pkt *pkt)
{
	const struct rp_mcast *g = rp_mcast_find(dev, pkt->dgid);

	if (g == NULL || pkt->qpn != RP_QPN_MASK || !(pkt->mask & RP_M_UD) ||
	    (pkt->ipver == 4) != rp_gid_is_v4(pkt->dgid)) {
		rp_stat_inc(dev, RP_STAT_RX_NO_QP);
		return;
	}
	rp_stat_inc(dev, RP_STAT_RX_MCAST);
	for (uint32_t i = 0; i < g->nr_qp; i++) {
		struct rp_qp *qp = rp_qp_get(dev, g->qpn[i]);

		/* Members live on shard 0, which reads groups' frames. */
		if (qp != NULL && qp->shard == rp_sh(dev)->idx)
			rp_resp_input(qp, pkt);
	}
}

static void
recv_one(struct rp_dev *dev, struct rte_mbuf *m)
{
	const struct rte_ether_hdr *eth;
	struct rp_pkt pkt;
	struct rp_qp *qp;
	int ret;

	if (m->nb_segs > 1 && rte_pktmbuf_linearize(m) != 0) {
		rp_stat_inc(dev, RP_STAT_RX_BAD);
		return;
	}
	if (rte_pktmbuf_data_len(m) < sizeof(*eth)) {
		rp_stat_inc(dev, RP_STAT_RX_NOT_ROCE);
		return;
	}
	eth = rte_pktmbuf_mtod(m, const struct rte_ether_hdr *);
	if (!l2_for_us(dev, &eth->dst_addr)) {
		rp_stat_inc(dev, RP_STAT_RX_NOT_FOR_US);
		return;
	}
	if (eth->ether_type == rte_cpu_to_be_16(RTE_ETHER_TYPE_ARP)) {
		rp_arp_input(rp_nq(dev), m);
		return;
	}
	if (eth->ether_type == rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV6) &&
	    rp_nd_input(rp_nq(dev), m))
		return;
	ret = rp_pkt_parse(rte_pktmbuf_mtod(m, const uint8_t *),
			   rte_pktmbuf_data_len(m), RP_PKT_ICRC_CHECK |
			   (rp_pq(dev)->port->icrc_nc ? RP_PKT_ICRC_NC : 0),
			   &pkt);
	pkt.mbuf = m;	/* a responder may keep it (rp_sr.c) */
	switch (ret) {
	case 0:
		break;
	case RP_PKT_NOT_ROCE:
		rp_stat_inc(dev, RP_STAT_RX_NOT_ROCE);
		return;
	case RP_PKT_BAD_ICRC:
		rp_stat_inc(dev, RP_STAT_RX_BAD_ICRC);
		RP_LOG_RL(rp_logtype, WARNING, "%s: bad ICRC, dropped",
			  dev->ctl->name);
		return;
	case RP_PKT_BAD_OP:
		rp_stat_inc(dev, RP_STAT_RX_BAD_OPCODE);
		return;
	default:
		rp_stat_inc(dev, RP_STAT_RX_BAD);
		RP_LOG_RL(rp_logtype, WARNING, "%s: malformed RoCEv2 packet",
			  dev->ctl->name);
		return;
	}
	if (!l2_matches_l3(eth, &pkt)) {
		rp_stat_inc(dev, RP_STAT_RX_NOT_FOR_US);
		return;
	}
	/* Only for us: the destination GID must be the device's, or a
	 * group it joined. */
	if ((pkt.pkey & 0x7fff) != 0x7fff ||
	    (!gid_for_us(dev, &pkt) && !rp_gid_is_mcast(pkt.dgid))) {
		rp_stat_inc(dev, RP_STAT_RX_NOT_ROCE);
		return;
	}
	rp_stat_inc(dev, RP_STAT_RX_PKTS);
	if (unlikely(pkt.mask & RP_M_CNP)) {
		recv_cnp(dev, &pkt);
		return;
	}
	if (rp_gid_is_mcast(pkt.dgid)) {
		recv_mcast(dev, &pkt);
		return;
	}
	/* QP 1 is every process's: the MAD says whose (rp_gsi.c). */
	qp = pkt.qpn == 1 ? rp_gsi_route(dev, &pkt) : rp_qp_get(dev, pkt.qpn);
	if (qp == NULL || !transport_matches(pkt.mask, qp->type)) {
		rp_stat_inc(dev, RP_STAT_RX_NO_QP);
		return;
	}
	if (!from_peer(qp, &pkt)) {
		rp_stat_inc(dev, RP_STAT_RX_NOT_PEER);
		RP_LOG_RL(rp_logtype, WARNING,
			  "%s: QP 0x%06x: packet from another host than its "
			  "peer, dropped", dev->ctl->name, qp->qpn);
		return;
	}
	/* Whether it takes our frames without an ICRC: its last word.  A
	 * frame taken without a check is counted (a memory link, icrc). */
	if (unlikely(pkt.nc != qp->peer_nc) && qp->type != IBV_QPT_UD)
		qp->peer_nc = pkt.nc;
	if (pkt.nc && rp_pq(dev)->port->icrc_nc)
		rp_stat_inc(dev, RP_STAT_RX_NO_ICRC);
	/* A switch on the way was congested (ECN): tell the sender. */
	if (unlikely((pkt.tclass & RP_ECN_MASK) == RP_ECN_CE))
		rp_cnp_np(qp, &pkt);
	/* Its ACK, its READ responses, its next requests: this pass. */
	rp_qp_wake(qp);
	if (pkt.mask & RP_M_REQ)
		rp_resp_input(qp, &pkt);
	else
		rp_comp_input(qp, &pkt);
}

void
rp_recv_burst(struct rp_dev *dev, struct rte_mbuf **pkts, uint16_t n)
{
	for (uint16_t i = 0; i < n; i++) {
		if (i + 1 < n)
			rte_prefetch0(rte_pktmbuf_mtod(pkts[i + 1], void *));
		recv_one(dev, pkts[i]);
	}
	/* Payloads written into attached processes leave from the mbufs
	 * (rp_mem.c): they reach the processes before the mbufs go. */
	rp_mem_flush(dev);
	rp_handoff_release_bulk(pkts, n);	/* the pool: rp_atomic.h */
	rte_pktmbuf_free_bulk(pkts, n);
}
