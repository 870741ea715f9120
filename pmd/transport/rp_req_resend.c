/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Requester, what it sends again: go back N to a PSN (rp_req_rewind, the
 * completer's answer to a sequence NAK or a timeout), and, toward a peer
 * that keeps what follows a gap (rp_sr.c), one packet, one READ segment
 * or a tail probe alone.  Each puts the requester back where it was, or
 * repositions it for the step (rp_req.c) to send from.
 */

#include <rte_cycles.h>
#include <rte_mbuf.h>

#include <infiniband/verbs.h>

#include "rp_log.h"
#include "rp_transport.h"
#include "rp_psn.h"
#include "rp_xmit.h"

/* READ requests of `s` still owed responses from packet k0 on: one per
 * RP_READ_SEG boundary (each request ends at one) and one for a tail. */
static uint32_t
req_rd_segs(const struct rp_swqe *s, uint32_t k0)
{
	return s->npkts / RP_READ_SEG - k0 / RP_READ_SEG +
		(s->npkts % RP_READ_SEG != 0);
}

/* A single resend of `psn` goes: a new generation, remembered by PSN. */
static void
req_rg_next(struct rp_qp *qp, uint32_t psn)
{
	uint32_t slot = psn % RP_RG_SLOTS;

	qp->req.rg = rp_rg_cur(qp) >= 15 ? 1 : qp->req.rg + 1;
	qp->comp.rg_psn[slot] = psn;
	qp->comp.rg_gen[slot] = qp->req.rg;
}

/*
 * Selective retransmission (rp_sr.c): send the one packet with `psn`
 * again, of a SEND or WRITE in flight, or the READ request of the
 * segment that starts there, and go on where the requester was.  False
 * if it is not such a packet, or cannot leave now: the caller goes back
 * N instead.
 */
bool
rp_req_resend_one(struct rp_qp *qp, uint32_t psn)
{
	uint32_t head = qp->req.head, next = qp->req.psn, off = qp->req.off;
	uint32_t pkt = qp->req.pkt;
	bool inprog = qp->req.inprog, sent;

	for (uint32_t i = qp->comp.tail; i != qp->req.hi; i++) {
		struct rp_swqe *s = rp_swqe(qp, i);
		int32_t d = rp_psn_diff(psn, s->first_psn);

		if (d < 0 || d >= (int32_t)s->npkts)
			continue;
		req_rg_next(qp, psn);
		/* a READ request lost: the responder keeps the later ones */
		if (s->opcode == IBV_WR_RDMA_READ && !qp->req.tail_probe &&
		    !qp->req.probe_ack &&
		    d % RP_READ_SEG == 0 && rp_psn_diff(psn, qp->req.psn) < 0)
			return rp_req_read_again(qp, psn,
				RTE_MIN(RP_READ_SEG, s->npkts - (uint32_t)d));
		if ((s->opcode != IBV_WR_SEND &&
		     s->opcode != IBV_WR_SEND_WITH_IMM &&
		     s->opcode != IBV_WR_SEND_WITH_INV &&
		     s->opcode != IBV_WR_RDMA_WRITE &&
		     s->opcode != IBV_WR_RDMA_WRITE_WITH_IMM) ||
		    rp_psn_diff(psn, qp->req.psn) >= 0 ||
		    !rp_xmit_addr_ok(qp) || !rp_tx_room(qp->dev))
			return false;
		/* req_send_packet() from there, then back */
		qp->req.head = i;
		qp->req.inprog = true;
		qp->req.psn = psn;
		qp->req.off = (uint32_t)d * qp->mtu;
		qp->req.pkt = (uint32_t)d;
		sent = rp_req_send_packet(qp);
		if (qp->flushing)
			return true;	/* the WQE failed: the QP's error */
		qp->req.head = head;
		qp->req.inprog = inprog;
		qp->req.psn = next;
		qp->req.off = off;
		qp->req.pkt = pkt;
		if (sent) {
			rp_stat_inc(qp->dev, RP_STAT_RETRANSMIT);
			rp_stat_inc(qp->dev, qp->req.probe_ack ?
				    RP_STAT_PROBE_ONE : RP_STAT_SR_RESENT);
			qp->comp.rtt_tsc = 0;	/* Karn: no sample across it */
		}
		return sent;
	}
	return false;
}

/*
 * Ask again for the READ responses `psn` .. `psn` + `n` - 1 of one READ
 * request, alone (rp_sr_read.c): a READ request at that PSN for their
 * bytes, marked RP_BTH_SR_ONE ("these only": the responder keeps the
 * responses it still owes after them, where going back N drops them).
 * The requester's position and its count of READs outstanding stay.
 */
bool
rp_req_read_again(struct rp_qp *qp, uint32_t psn, uint32_t n)
{
	for (uint32_t i = qp->comp.tail; i != qp->req.hi; i++) {
		struct rp_swqe *s = rp_swqe(qp, i);
		int32_t d = rp_psn_diff(psn, s->first_psn);
		const struct rp_send_wqe *w;
		struct rte_mbuf *m;
		uint64_t off;
		uint32_t len;
		uint8_t *bth;

		if (d < 0 || d >= (int32_t)s->npkts)
			continue;
		if (s->opcode != IBV_WR_RDMA_READ ||
		    n > RP_READ_SEG - (uint32_t)d % RP_READ_SEG ||
		    n > s->npkts - (uint32_t)d ||
		    !rp_xmit_addr_ok(qp) || !rp_tx_room(qp->dev))
			return false;
		w = rp_sq_wqe(qp, i);
		off = (uint64_t)d * qp->mtu;
		len = (uint32_t)RTE_MIN((uint64_t)s->length - off,
					(uint64_t)n * qp->mtu);
		m = rp_xmit_alloc(qp, &qp->addr, qp->dest_qpn,
				  RP_OP_READ_REQ, 0, 1, psn, 0, &bth);
		if (m == NULL)
			return false;
		rp_req_mark_sr(qp, bth, RP_SR_ON | RP_SR_ONE);
		rp_reth_set(rp_xmit_hdr(bth, RP_OP_READ_REQ, RP_HDR_RETH),
			    w->remote_addr + off, w->rkey, len);
		rp_xmit_send(qp, &qp->addr, m);
		/* its FIRST comes mid-way, its LAST may too */
		s->rd_midway = true;
		rp_stat_inc(qp->dev, RP_STAT_RETRANSMIT);
		rp_stat_inc(qp->dev, RP_STAT_SR_RD_ASKED);
		/* Karn: no sample across what it asks for again */
		d = rp_psn_diff(qp->comp.rtt_psn, psn);
		if (!qp->comp.rtt_rd || (d > 0 && d <= (int32_t)n))
			qp->comp.rtt_tsc = 0;
		return true;
	}
	return false;
}

/*
 * A tail probe (rp_sr.c): a stall of a QP whose peer keeps what follows
 * a gap sends its oldest unacknowledged packet again, and its last packet
 * sent, marked to ask for every PSN missing before it; a peer that has
 * them all ACKs it as a duplicate.  As TCP's tail loss probe (RFC 8985):
 * one packet finds every loss of the window, whether a last packet, a
 * NAK or a resend was lost, where going back N would send the window
 * again.  False if that packet cannot go alone (a READ or an atomic):
 * the caller goes back N.
 */
bool
rp_req_tail_probe(struct rp_qp *qp)
{
	uint32_t last = rp_psn_add(qp->req.psn, RP_PSN_MASK);
	bool sent;

	if (!qp->comp.peer_sr ||
	    rp_psn_diff(qp->req.psn, qp->comp.una) <= 0)
		return false;
	/* The oldest unacknowledged packet first, plainly: what holds every
	 * completion back, missing at the peer (its NAK or resend lost) or
	 * there (its ACK lost: a duplicate, ACKed).  A round trip less. */
	if (qp->comp.una != last)
		(void)rp_req_resend_one(qp, qp->comp.una);
	qp->req.tail_probe = true;
	sent = rp_req_resend_one(qp, last);
	qp->req.tail_probe = false;
	return sent;
}

/*
 * A probe toward a peer not known to keep what follows a gap (rp_comp_timer.c):
 * the oldest unacknowledged packet alone, with AckReq.  A peer that has
 * it answers as for a duplicate, with the last PSN it has; one that lost
 * it takes it in sequence and ACKs it.  False if that packet is not a
 * SEND's or a WRITE's (a READ, an atomic: the caller goes back N) or
 * cannot leave now.
 */
bool
rp_req_probe_one(struct rp_qp *qp)
{
	bool sent;

	if (rp_psn_diff(qp->req.psn, qp->comp.una) <= 0)
		return false;
	qp->req.probe_ack = true;
	sent = rp_req_resend_one(qp, qp->comp.una);
	qp->req.probe_ack = false;
	return sent;
}

/*
 * Go back to `psn`: the next packet sent is the one with that PSN.  A READ
 * is re-requested from that PSN on, an atomic or ATOMIC WRITE sent again
 * (the responder treats them as duplicates: an atomic is answered from
 * its replay cache, an ATOMIC WRITE answered without writing again).
 * False if no WQE in flight holds `psn`.
 */
bool
rp_req_rewind(struct rp_qp *qp, uint32_t psn)
{
	uint32_t end = qp->req.hi;
	uint32_t rd = 0;

	for (uint32_t i = qp->comp.tail; i != end; i++) {
		struct rp_swqe *s = rp_swqe(qp, i);
		int32_t d = rp_psn_diff(psn, s->first_psn);

		if (d < 0 || d >= (int32_t)s->npkts) {
			if (s->opcode == IBV_WR_RDMA_READ) {
				int32_t k0 = rp_psn_diff(qp->comp.rd_psn,
							 s->first_psn);

				rd += req_rd_segs(s, i == qp->comp.tail &&
						  k0 > 0 &&
						  k0 < (int32_t)s->npkts ?
						  (uint32_t)k0 : 0);
			} else if (rp_wr_is_rd_atomic(s->opcode)) {
				rd++;	/* its (ATOMIC) ACK still owed */
			}
			continue;
		}
		for (uint32_t j = i; j != end; j++)
			rp_swqe(qp, j)->state = RP_SWQE_SENDING;
		qp->req.head = i;
		qp->req.inprog = true;
		qp->req.rd_out = rd;
		rp_sr_rd_ans_reset(qp);
		if (d == 0) {
			qp->req.psn = s->first_psn;
			qp->req.off = 0;
			qp->req.pkt = 0;
			s->rd_restart = 0;
		} else {
			s->rd_restart = (uint32_t)d;
			s->rd_midway = true;
			qp->req.psn = psn;
			qp->req.off = (uint32_t)d * qp->mtu;
			qp->req.pkt = (uint32_t)d;
		}
		rp_stat_inc(qp->dev, RP_STAT_RETRANSMIT);
		qp->comp.rtt_tsc = 0;	/* Karn: no sample across a resend */
		RP_QP_LOG(rp_logtype_req, DEBUG, qp->qpn,
			  "rewind to psn %u: wqe %u (first %u) tail %u hi %u",
			  psn, i, s->first_psn, qp->comp.tail, qp->req.hi);
		return true;
	}
	return false;
}
