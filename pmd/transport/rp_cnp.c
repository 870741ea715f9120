/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ECN's two ends in the engine (RoCEv2 Annex A17.9).  The notification
 * point: a request that arrives marked CE (a switch on the way had a long
 * queue) owes the QP that sent it a CNP, at most one per QP in the port's
 * cnp_interval_us, so marks cannot make the device an amplifier; for a
 * UD QP, to the datagram's sender (its source QP, MAC and address).  The
 * reaction point: a CNP from an RC or UC QP's peer cuts its rate
 * (rp_dcqcn.c).  Packets are sent ECN-capable when the port says
 * ecn = on (rp_xmit.c).
 */

#include <string.h>

#include <rte_byteorder.h>
#include <rte_cycles.h>
#include <rte_mbuf.h>

#include "rp_time.h"
#include "rp_transport.h"
#include "rp_xmit.h"

/* The CNP's BTH is followed by 16 reserved bytes (A17.9.3). */
#define RP_CNP_RESERVED	16u
#define RP_OP_CNP_PKT	(RP_OP_CNP | 0x01)	/* 0x81 */

/*
 * A UD datagram's sender, from the datagram: its MAC, its address and
 * the source QP of its DETH.  Only a unicast datagram that the QP would
 * take (its state, its Q_Key: C10-15) is answered: a group's
 * members would all answer one mark, and a datagram the QP drops is
 * nobody's business.  false: not answered.
 */
static bool
cnp_ud_addr(const struct rp_qp *qp, const struct rp_pkt *pkt,
	    struct rp_pkt_addr *a, uint32_t *dqpn)
{
	if ((qp->state != IBV_QPS_RTR && qp->state != IBV_QPS_RTS &&
	     qp->state != IBV_QPS_SQD) ||
	    rp_gid_is_mcast(pkt->dgid) || rp_pkt_deth_qkey(pkt) != qp->qkey)
		return false;
	*dqpn = rp_pkt_deth_sqp(pkt);
	*a = qp->addr;
	memcpy(a->dmac, pkt->smac, 6);
	memcpy(a->sgid, pkt->dgid, 16);
	memcpy(a->dgid, pkt->sgid, 16);
	a->ttl = (uint8_t)qp->dev->cfg.hop_limit;
	a->tclass = 0;
	a->flow_label = rp_pkt_flow_label(0, qp->qpn, *dqpn);
	a->sport = rp_pkt_udp_sport(0, qp->qpn, *dqpn);
	return true;
}

void
rp_cnp_np(struct rp_qp *qp, const struct rp_pkt *pkt)
{
	struct rp_dev *dev = qp->dev;
	struct rp_pkt_addr ud;
	const struct rp_pkt_addr *a = &qp->addr;
	uint32_t dqpn = qp->dest_qpn;
	uint64_t now, gap;
	struct rp_bth *bth;
	struct rte_mbuf *m;
	uint8_t *b;

	rp_stat_inc(dev, RP_STAT_ECN_CE);
	if (!(pkt->mask & RP_M_REQ))
		return;
	if (qp->type == IBV_QPT_UD) {
		if (!cnp_ud_addr(qp, pkt, &ud, &dqpn))
			return;
		a = &ud;
	} else if (qp->type != IBV_QPT_RC && qp->type != IBV_QPT_UC) {
		return;
	}
	/* One per QP in the interval: a UD QP's senders share it. */
	now = rte_get_timer_cycles();
	gap = rp_us_cycles(dev->cfg.cnp_interval_us);
	if (qp->resp.cnp_tsc != 0 && now - qp->resp.cnp_tsc < gap) {
		rp_stat_inc(dev, RP_STAT_CNP_SUPPRESSED);
		return;
	}
	if (qp->type != IBV_QPT_UD && !rp_xmit_ready(qp))
		return;		/* the peer's MAC is being resolved */
	m = rp_xmit_alloc(qp, a, dqpn, RP_OP_CNP_PKT, 0, 0, 0,
			  RP_CNP_RESERVED, &b);
	if (m == NULL)
		return;
	qp->resp.cnp_tsc = now;
	/* BECN set, PSN 0, A clear (A17.9.3); the BTH's FECN/BECN byte is
	 * outside the ICRC, which rp_xmit_send() computes anyway. */
	bth = (struct rp_bth *)b;
	bth->qpn |= rte_cpu_to_be_32(RP_BTH_BECN);
	memset(b + sizeof(*bth), 0, RP_CNP_RESERVED);
	/* A CNP is not ECN-capable itself: a switch drops it rather than
	 * mark it, and nobody would answer the mark. */
	rp_pkt_set_ecn(rte_pktmbuf_mtod(m, uint8_t *), RP_ECN_NOT_ECT);
	rp_xmit_send(qp, a, m);
	rp_stat_inc(dev, RP_STAT_CNP_SENT);
}

void
rp_cnp_rp(struct rp_qp *qp)
{
	rp_stat_inc(qp->dev, RP_STAT_CNP_RCVD);
	rp_dcqcn_cnp(qp);
}
