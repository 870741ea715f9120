/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ECN's two ends in the engine (RoCEv2 Annex A17.9).  The notification
 * point: a request that arrives marked CE (a switch on the way had a long
 * queue) owes the QP that sent it a CNP, at most one per QP in the port's
 * cnp_interval_us, so marks cannot make the device an amplifier.  The
 * reaction point: a CNP from a QP's peer is counted; the rate cut that
 * answers it (DCQCN) is guides/congestion's next step.  Packets are sent
 * ECN-capable when the port says ecn = on (rp_xmit.c).
 */

#include <string.h>

#include <rte_byteorder.h>
#include <rte_cycles.h>
#include <rte_mbuf.h>

#include "rp_transport.h"
#include "rp_xmit.h"

/* The CNP's BTH is followed by 16 reserved bytes (A17.9.3). */
#define RP_CNP_RESERVED	16u
#define RP_OP_CNP_PKT	(RP_OP_CNP | 0x01)	/* 0x81 */

void
rp_cnp_np(struct rp_qp *qp, const struct rp_pkt *pkt)
{
	struct rp_dev *dev = qp->dev;
	uint64_t now, gap;
	struct rp_bth *bth;
	struct rte_mbuf *m;
	uint8_t *b;

	rp_stat_inc(dev, RP_STAT_ECN_CE);
	/* A UD sender's address is in each datagram, not the QP: not yet. */
	if (!(pkt->mask & RP_M_REQ) ||
	    (qp->type != IBV_QPT_RC && qp->type != IBV_QPT_UC))
		return;
	now = rte_get_timer_cycles();
	gap = (uint64_t)dev->cfg.cnp_interval_us * rte_get_timer_hz() /
		1000000u;
	if (qp->resp.cnp_tsc != 0 && now - qp->resp.cnp_tsc < gap) {
		rp_stat_inc(dev, RP_STAT_CNP_SUPPRESSED);
		return;
	}
	if (!rp_xmit_ready(qp))
		return;		/* the peer's MAC is being resolved */
	m = rp_xmit_alloc(qp, &qp->addr, qp->dest_qpn, RP_OP_CNP_PKT, 0, 0, 0,
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
	rp_xmit_send(qp, &qp->addr, m);
	rp_stat_inc(dev, RP_STAT_CNP_SENT);
}

void
rp_cnp_rp(struct rp_qp *qp)
{
	rp_stat_inc(qp->dev, RP_STAT_CNP_RCVD);
	rp_dcqcn_cnp(qp);
}
