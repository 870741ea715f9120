/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Outgoing RoCEv2 frames of a QP (requester and responder alike): where
 * they go and what their IP and UDP headers say.  This file owns the
 * question "is the destination MAC known?": every sender asks it before
 * building a frame, and a frame whose destination is unknown is not built
 * at all.  The sender keeps what it owes (a WQE, an ACK, a READ response)
 * and asks again on its next step, which repeats the ARP request.
 */

#include <string.h>

#include <rte_mbuf.h>

#include "rp_atomic.h"
#include "rp_log.h"
#include "rp_transport.h"
#include "rp_xmit.h"

/*
 * Destination MAC of packets to `dgid`: a multicast group's Ethernet
 * address, our own MAC for ourselves (the loopback ring), or the
 * neighbour cache's entry for a unicast neighbour (ARP or ND).  -EAGAIN
 * while it resolves (a request is out, repeated at most every
 * RP_NEIGH_RETRY_MS as long as someone asks), -ENETUNREACH off-link.
 */
int
rp_xmit_dmac(struct rp_dev *dev, const uint8_t dgid[16], uint8_t mac[6])
{
	if (rp_gid_is_mcast(dgid)) {
		rp_gid_mcast_mac(dgid, mac);
		return 0;
	}
	return rp_neigh_resolve(rp_nq(dev), dgid, mac);
}

/*
 * Slow path of rp_xmit_ready(): resolve a connected QP's peer, or read
 * its MAC again after the cache changed.
 */
bool
rp_xmit_resolve(struct rp_qp *qp)
{
	uint32_t gen = rp_nq(qp->dev)->arp_gen;

	if (rp_xmit_dmac(qp->dev, qp->av.dgid, qp->addr.dmac) != 0) {
		qp->addr_ok = false;
		return false;
	}
	qp->addr_ok = true;
	qp->addr_gen = gen;
	return true;
}

/* The peer stopped answering: confirm its MAC before the next retry. */
void
rp_xmit_reresolve(struct rp_qp *qp)
{
	if (!rp_gid_is_mcast(qp->av.dgid))
		rp_neigh_probe(rp_nq(qp->dev), qp->av.dgid);
}

/* An AH's destination, resolved once (AHs are immutable). */
bool
rp_xmit_ah_ready(struct rp_dev *dev, struct rp_ah *ah)
{
	uint8_t mac[6];

	/* A: pairs with R: the MAC before the flag (UD QPs of several
	 * shards share an AH). */
	if (likely(rp_load_acquire(&ah->dmac_ok)))
		return true;
	if (rp_xmit_dmac(dev, ah->av.dgid, mac) != 0)
		return false;
	rp_dev_shared_lock(dev);
	if (!ah->dmac_ok) {
		memcpy(ah->dmac, mac, sizeof(mac));
		rp_store_release(&ah->dmac_ok, true);	/* R */
	}
	rp_dev_shared_unlock(dev);
	return true;
}

/*
 * IPv4 TTL / IPv6 hop limit of packets to an AV.  As Linux's
 * ib_resolve_eth_dmac() does for rxe and mlx5 alike: a unicast
 * destination gets the route's hop limit (here the port's, config key
 * hop_limit), whatever the application put in the AV; a multicast group
 * keeps the AV's.
 */
uint8_t
rp_xmit_hop_limit(const struct rp_dev *dev, const struct rp_av *av)
{
	return rp_gid_is_mcast(av->dgid) ? av->hop_limit :
		(uint8_t)dev->cfg.hop_limit;
}

static bool
rp_xmit_dmac_zero(const uint8_t mac[6])
{
	return (mac[0] | mac[1] | mac[2] | mac[3] | mac[4] | mac[5]) == 0;
}

/*
 * A frame for `opcode` with paylen payload bytes, L2-L4 and BTH written.
 * *bth points at the BTH; extended headers go at rp_opcode[] offsets from
 * it, and the payload at offset[RP_HDR_PAYLOAD].  Finish with rp_xmit_send().
 * NULL without an mbuf, or when `a` has no destination MAC: senders ask
 * rp_xmit_ready() / rp_xmit_ah_ready() first, so that is a bug, counted
 * (tx_zero_dmac) and never put on the wire.
 */
static struct rte_mbuf *
xmit_alloc(struct rp_qp *qp, const struct rp_pkt_addr *a, uint32_t dqpn,
	   uint8_t opcode, int se, int ackreq, uint32_t psn, uint32_t paylen,
	   uint32_t flen, uint8_t **bth)
{
	struct rp_dev *dev = qp->dev;
	struct rte_mbuf *m;
	uint8_t *frame;
	uint16_t off;

	if (unlikely(rp_xmit_dmac_zero(a->dmac))) {
		rp_stat_inc(dev, RP_STAT_TX_ZERO_DMAC);
		RP_LOG_RL(rp_logtype, ERR,
			  "%s: qp 0x%06x: packet without a destination MAC not sent",
			  dev->ctl->name, qp->qpn);
		return NULL;
	}
	m = rp_port_alloc(rp_pq(dev), flen, &frame);
	if (m == NULL)
		return NULL;
	off = rp_pkt_build(frame, a, opcode, se, dqpn, ackreq, psn, paylen);
	/* A memory link: "send me frames without an ICRC" (rp_xmit_send()) */
	if (rp_pq(dev)->port->icrc_nc && qp->type != IBV_QPT_UD)
		rp_bth_set_nc(frame + off);
	/* ECN-capable: a congested switch marks rather than drops (the
	 * transport's field, as in hardware, whatever the AV's class). */
	if (dev->cfg.ecn)
		rp_pkt_set_ecn(frame, RP_ECN_ECT0);
	/* A per-port counter, as Linux numbers its datagrams: with DF set
	 * any value is valid (RFC 6864), but a constant one is unusual. */
	rp_pkt_set_ip_id(frame, rp_sh(dev)->ip_id++);
	*bth = frame + off;
	return m;
}

struct rte_mbuf *
rp_xmit_alloc(struct rp_qp *qp, const struct rp_pkt_addr *a, uint32_t dqpn,
	      uint8_t opcode, int se, int ackreq, uint32_t psn,
	      uint32_t paylen, uint8_t **bth)
{
	return xmit_alloc(qp, a, dqpn, opcode, se, ackreq, psn, paylen,
			  rp_pkt_frame_len(a, opcode, paylen), bth);
}

/*
 * rp_xmit_alloc() for a payload sent from the registered memory it lies
 * in (rp_xmit_zc_ok(), rp_port.c's "Zero copy on transmit"): a frame of
 * three segments, the headers, paylen bytes at pay, then the pad and the
 * ICRC, which rp_xmit_send() computes over the three.
 */
struct rte_mbuf *
rp_xmit_alloc_zc(struct rp_qp *qp, const struct rp_pkt_addr *a,
		 uint32_t dqpn, uint8_t opcode, int se, int ackreq,
		 uint32_t psn, const uint8_t *pay, uint32_t paylen,
		 uint8_t **bth)
{
	uint32_t tail = rp_pkt_pad(paylen) + RP_ICRC_SIZE;
	uint32_t hlen = rp_pkt_frame_len(a, opcode, paylen) - paylen - tail;
	struct rp_port_q *pq = rp_pq(qp->dev);
	struct rte_mbuf *m, *p, *t;
	uint8_t *trailer;

	m = xmit_alloc(qp, a, dqpn, opcode, se, ackreq, psn, paylen, hlen,
		       bth);
	if (m == NULL)
		return NULL;
	p = rp_port_alloc_ext(pq, pay, paylen);
	t = p != NULL ? rp_port_alloc(pq, tail, &trailer) : NULL;
	if (t == NULL) {
		rte_pktmbuf_free(p);
		rte_pktmbuf_free(m);
		return NULL;
	}
	/* Three segments: within any PMD's limit, no failure. */
	rte_pktmbuf_chain(m, p);
	rte_pktmbuf_chain(m, t);
	rp_stat_inc(qp->dev, RP_STAT_TX_ZC);
	return m;
}

void
rp_xmit_send(struct rp_qp *qp, const struct rp_pkt_addr *a, struct rte_mbuf *m)
{
	/* Without an ICRC on a memory link toward a peer that takes such
	 * frames (its frames say RP_BTH_NC, as ours do): it will not check.
	 * UD never learns peer_nc (rp_recv.c). */
	bool icrc = !(qp->peer_nc && rp_pq(qp->dev)->port->icrc_nc);

	if (!icrc)
		rp_stat_inc(qp->dev, RP_STAT_TX_NO_ICRC);
	if (likely(m->next == NULL))
		rp_pkt_finish(rte_pktmbuf_mtod(m, uint8_t *), a,
			      rte_pktmbuf_data_len(m), icrc);
	else
		rp_pkt_finish_split(rte_pktmbuf_mtod(m, uint8_t *),
				    rte_pktmbuf_data_len(m),
				    rte_pktmbuf_mtod(m->next, const uint8_t *),
				    rte_pktmbuf_data_len(m->next),
				    rte_pktmbuf_mtod(m->next->next, uint8_t *),
				    icrc);
	/* A QP whose rate CNPs cut: all it sends counts against the rate. */
	if (unlikely(qp->cc.limited))
		rp_dcqcn_charge(qp, rte_pktmbuf_pkt_len(m));
	rp_port_tx(rp_pq(qp->dev), m);
}

/*
 * A burst of at most RP_ACKS_LAST_MAX frames sends its positive ACKs after
 * the rest.  A polling program's inline pass holds the ACK of the message
 * it delivered until the program's next pass (rp_engine_assist(), "tx
 * defer"), where the program's answer joins it: the answer then waited
 * behind the ACK in the port, a frame's time in the kernel on af_packet.
 * Between the hosts on af_packet, polling 8 B send_lat p50 5.26-6.08 us
 * against 6.29-6.97 (guides/experiments_close_to_wire, thirtieth round).
 * The two are independent: an ACK acknowledges the peer's requests, a
 * request carries PSNs of our own.  Not past a response (a READ response, an
 * atomic ACK, a NAK), which shares the ACK's PSN space and must not
 * overtake it, and not in a larger burst, a stream's, where an ACK ahead
 * of the requests opens the peer's window sooner (rp_qp_step()).
 */
#define RP_ACKS_LAST_MAX	4u

void
rp_xmit_acks_last(struct rp_port_q *pq)
{
	struct rte_mbuf *acks[RP_ACKS_LAST_MAX];
	enum rp_pkt_out c[RP_ACKS_LAST_MAX];
	uint16_t n = pq->nr_tx, na = 0, nd = 0, i;
	bool passes = false;

	if (n < 2 || n > RP_ACKS_LAST_MAX)
		return;
	for (i = 0; i < n; i++) {
		const struct rte_mbuf *m = pq->tx[i];

		c[i] = rp_pkt_out_class(rte_pktmbuf_mtod(m, const uint8_t *),
					rte_pktmbuf_data_len(m));
		if (c[i] == RP_PKT_OUT_RESPONSE)
			return;
		if (c[i] == RP_PKT_OUT_ACK)
			na++;
		else if (na != 0)
			passes = true;	/* a frame behind an ACK */
	}
	if (!passes)
		return;
	na = 0;
	for (i = 0; i < n; i++) {
		if (c[i] == RP_PKT_OUT_ACK)
			acks[na++] = pq->tx[i];
		else
			pq->tx[nd++] = pq->tx[i];
	}
	memcpy(&pq->tx[nd], acks, na * sizeof(acks[0]));
	rp_stats_add(pq->stats, RP_STAT_TX_ACKS_LAST, na);
}
