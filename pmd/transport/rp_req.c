/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Requester: turns send WQEs into request packets.  A WQE is segmented at
 * the path MTU; READ is one request that reserves a PSN per response
 * packet.  The completer retires WQEs and rewinds the requester
 * (go-back-N) on a sequence NAK, an RNR NAK or a timeout.
 *
 * The application's ring is first copied, in order, into the QP's private
 * ring (rp_req_ingest): every later look at a WQE reads the engine's own
 * copy, never memory the application can still change, and the engine can
 * queue requests of its own there (rp_req_post_internal), which the TM-SRQ
 * rendezvous needs.
 *
 * Per QP, in the private ring: req.head is the next WQE to send (with
 * req.inprog, how far into it), comp.tail the oldest one not yet
 * completed; comp.tail <= req.head <= sq_prod.  What it sends again
 * (go back N, one packet, a READ's segment, a tail probe) is
 * rp_req_resend.c's.
 */

#include <string.h>

#include <rte_cycles.h>
#include <rte_mbuf.h>

#include <infiniband/verbs.h>

#include "rp_atomic.h"
#include "rp_log.h"
#include "rp_time.h"
#include "rp_transport.h"
#include "rp_psn.h"
#include "rp_xmit.h"

/* Why a WQE cannot start: these complete it with an error status. */
static int
req_validate(struct rp_qp *qp, const struct rp_send_wqe *w,
	     const struct rp_sge *sge, uint32_t pdn, uint32_t *length)
{
	uint64_t total;

	if (rp_next_opcode(w->opcode, qp->type, 1, 1) < 0)
		return IBV_WC_LOC_QP_OP_ERR;
	if (w->flags & RP_WQE_INLINE) {
		if (w->length > qp->caps.max_inline_data ||
		    rp_wr_fills_sge(w->opcode))
			return IBV_WC_LOC_LEN_ERR;
		total = w->length;
	} else {
		if (w->num_sge > qp->caps.max_send_sge)
			return IBV_WC_LOC_LEN_ERR;
		/* READ and atomic responses are written into the SGEs. */
		if (rp_sge_check(qp->dev, pdn, sge, w->num_sge,
				 rp_wr_fills_sge(w->opcode) ?
				 IBV_ACCESS_LOCAL_WRITE : 0, &total) < 0)
			return IBV_WC_LOC_PROT_ERR;
	}
	if (total > (1u << 31))
		return IBV_WC_LOC_LEN_ERR;
	/* An atomic returns 8 bytes, into the start of its SGEs (the
	 * target's alignment is the responder's to check: it NAKs a
	 * misaligned one). */
	if (rp_wr_is_atomic(w->opcode)) {
		if (total < sizeof(uint64_t))
			return IBV_WC_LOC_LEN_ERR;
		total = sizeof(uint64_t);
	}
	/* An ATOMIC WRITE carries exactly 8 bytes (the shim refuses other
	 * lengths at the post). */
	if (w->opcode == IBV_WR_ATOMIC_WRITE && total != sizeof(uint64_t))
		return IBV_WC_LOC_LEN_ERR;
	if (qp->type == IBV_QPT_UD) {
		const struct rp_ah *ah;

		if (total > qp->mtu)
			return IBV_WC_LOC_LEN_ERR;
		if (w->ah == 0 || w->ah >= RP_MAX_AH)
			return IBV_WC_LOC_QP_OP_ERR;
		ah = &qp->dev->ah[w->ah];
		if (!ah->valid || ah->pdn != qp->pdn)
			return IBV_WC_LOC_QP_OP_ERR;
	}
	*length = (uint32_t)total;
	return IBV_WC_SUCCESS;
}

/*
 * Fill the L2-L4 addressing of a UD packet from its address handle; -1
 * while its destination MAC is unknown (ARP asked).
 */
static int
req_ud_addr(struct rp_qp *qp, uint32_t ahn, uint32_t dqpn,
	    struct rp_pkt_addr *a)
{
	struct rp_ah *ah = &qp->dev->ah[ahn];

	if (!rp_xmit_ah_ready(qp->dev, ah))
		return -1;
	*a = qp->addr;
	memcpy(a->dmac, ah->dmac, 6);
	memcpy(a->sgid, qp->dev->net.gid[ah->av.sgid_index], 16);
	memcpy(a->dgid, ah->av.dgid, 16);
	a->ttl = ah->av.hop_limit;
	a->tclass = ah->av.traffic_class;
	a->flow_label = rp_pkt_flow_label(ah->av.flow_label, qp->qpn, dqpn);
	a->sport = rp_pkt_udp_sport(ah->av.flow_label, qp->qpn, dqpn);
	return 0;
}

/*
 * A requester waiting for ARP has sent nothing: its timer rounds are at
 * least Linux's address resolution timeout (rdma_addr_find_l2_eth_by_grh()
 * gives ARP 1 s), so a short QP timeout does not spend its retries on a
 * peer that answers ARP slowly (a guest under emulation takes ms).
 */
#define RP_ARP_WAIT_MS	1000u

/*
 * The QP's timeout is the least the requester waits for an answer.  A
 * peer whose answers take longer than a quarter of it (its round trip,
 * srtt, measured on packets sent once: Karn) gets RP_RTO_RTTS round
 * trips, as TCP's retransmission timeout follows the round trip (RFC
 * 6298), up to RP_RTO_STRETCH times the timeout.  The kernel's rxe in an
 * emulated guest answers four QPs' 64 KiB SENDs at some 2,000 packets a
 * second: 256 packets in flight take it 130 ms, twice perftest's 67 ms,
 * so every window was sent again, each duplicate answered before the
 * QP's next packets, until a QP ran out of retries without a packet
 * lost (send_bw_4qp).  On a link whose round trip is far below the
 * timeout nothing changes, nor does the number of retries.  Before its
 * own first sample a QP takes its device's (rtt_seed), as Linux's TCP
 * seeds a connection from its destination's last (tcp_metrics): a QP
 * whose first packets wait behind the others' in a slow peer's queue
 * timed out before any sample, and Karn keeps none across a resend, so
 * it spent its retries at the QP's timeout while the others had learnt.
 */
#define RP_RTO_RTTS	4u

uint64_t
rp_req_timeout_cycles(const struct rp_qp *qp)
{
	/* 4.096 us * 2^timeout; at least 1 ms, since a soft device shares
	 * its CPUs and must not retransmit on a scheduling hiccup. */
	uint64_t us = (4096ull << RTE_MIN(qp->timeout, 31)) / 1000;
	uint64_t t, srtt;

	if (us < 1000)
		us = 1000;
	if (!qp->addr_ok && us < RP_ARP_WAIT_MS * 1000ull)
		us = RP_ARP_WAIT_MS * 1000ull;
	t = rp_us_cycles(us);
	srtt = qp->comp.srtt != 0 ? qp->comp.srtt :
		rp_load_relaxed(&qp->dev->rtt_seed);
	if (qp->addr_ok) {
		uint64_t rto = RTE_MAX(t, RP_RTO_RTTS * srtt);

		/* backed off while the peer answers (rp_comp_timer()) */
		t = RTE_MIN(rto << qp->comp.backoff, RP_RTO_STRETCH * t);
	}
	return t;
}

/*
 * The early resends (probes) of a stall: a requester that hears nothing
 * for a few round trips resends from the oldest unacknowledged PSN,
 * without spending a retry, before the QP's timeout runs; again after
 * twice as long if that resend was lost too, up to RP_PROBE_MAX times
 * (RP_PROBE_MAX_SR toward a peer that keeps).
 * A lost NAK, a lost last packet, a lost READ re-request or its
 * response would otherwise each cost a whole timeout (67 ms at perftest's
 * 14): under 10% loss the link collapsed to a few percent of its rate.  IBTA leaves the
 * requester free to resend early; the responder takes duplicates.  A
 * peer whose engine loses its CPU for a slice, ms, answers probes late:
 * the wait then learns its silences (probe_floor, rp_comp.c).
 */
#define RP_PROBE_RTTS	4u	/* round trips of silence, first probe */
#define RP_PROBE_SR_LOSS_RTTS	8u	/* probe_sr_min_us this many round
					 * trips after a loss the peer
					 * repairs alone */
#define RP_PROBE_RTTS_RD	2u	/* a READ's runs asked for alone, from a
					 * peer that answers them first */
#define RP_PROBE_RTTS_TLP	2u	/* a SEND or WRITE stall on a lossy
					 * path toward a keeping peer, at least
					 * (RFC 8985) */

/*
 * The floor of a probe's wait: the scheduling noise of a soft device
 * (probe_min_us).  A probe toward a peer that keeps, all but the stall's
 * last, resends a packet or two or asks for the READ responses missing,
 * and cuts nothing: while the path loses packets (one within the last
 * RP_PROBE_SR_LOSS_RTTS round trips), a stall is likely a loss and waits
 * at least probe_sr_min_us.  Not otherwise: a peer's lcore off its CPU
 * for a slice is silent too, and a READ's run asked for early brings the
 * whole run again.
 */
static bool
req_probe_cheap(const struct rp_qp *qp)
{
	return qp->comp.peer_sr && qp->comp.probes + 1u < rp_probe_max(qp) &&
	       qp->comp.sr_loss_tsc != 0 &&
	       rte_get_timer_cycles() - qp->comp.sr_loss_tsc <
	       RP_PROBE_SR_LOSS_RTTS * qp->comp.srtt;
}

static uint64_t
req_probe_cycles(const struct rp_qp *qp)
{
	bool cheap = req_probe_cheap(qp);
	uint64_t min = rp_us_cycles(cheap ? qp->dev->cfg.probe_sr_min_us :
				    qp->dev->cfg.probe_min_us);
	uint64_t srtt = qp->comp.srtt, wait;

	if (rp_sr_rd_tail(qp)) {
		/* A READ at the tail whose responses a keeping peer owes:
		 * what is missing is known and asked for alone, and
		 * answered before the READs it queued (rp_resp_rd.c), so a
		 * live peer answers within a round trip. */
		wait = RP_PROBE_RTTS_RD * srtt;
	} else if (cheap) {
		/* A SEND or WRITE stall on a lossy path: a lost NAK, resend
		 * or ACK, or a queue's delay, which shows as round trips
		 * that vary.  So RFC 6298's srtt + 4 rttvar, at least 2
		 * round trips (RFC 8985's tail loss probe), at most
		 * RP_PROBE_RTTS: under 10 % loss each way, 64 B to 4 KiB
		 * SENDs 0.53-0.64 of lossless against 0.41-0.58 with 4
		 * round trips (guides/congestion). */
		wait = RTE_MAX(srtt + 4 * qp->comp.rttvar,
			       RP_PROBE_RTTS_TLP * srtt);
		wait = RTE_MIN(wait, RP_PROBE_RTTS * srtt);
	} else {
		wait = RP_PROBE_RTTS * srtt;
	}
	min = RTE_MAX(min, qp->comp.probe_floor);
	return RTE_MAX(wait, min) << qp->comp.probes;
}

/*
 * (Re)start the retransmit timer: when a request goes out (here), and on
 * progress or a retry (the completer, which runs the timer).  An early
 * resend (probe) comes first while probes are left and the round trip is
 * known.
 */
void
rp_req_arm_timer(struct rp_qp *qp)
{
	uint64_t t;

	/* Timeout 0 is "infinite" (IBTA 9.7.6.1.3). */
	if (qp->timeout == 0 && qp->addr_ok) {
		qp->comp.deadline = 0;
		return;
	}
	t = rp_req_timeout_cycles(qp);
	/* Not while an RNR NAK makes it wait: that silence is asked for. */
	if (qp->comp.probes < rp_probe_max(qp) && qp->comp.srtt != 0 &&
	    qp->addr_ok && !qp->req.rnr_wait)
		t = RTE_MIN(t, req_probe_cycles(qp));
	qp->comp.deadline = rte_get_timer_cycles() + t;
}

/*
 * A new PSN went out: the timer must run (a message larger than the
 * window is not all sent, and its first window may get no answer at
 * all), and the round trip is timed if no sample runs (one at a time).
 */
static void
req_sent(struct rp_qp *qp, uint32_t end, bool rd)
{
	if (qp->comp.deadline == 0) {
		rp_req_arm_timer(qp);
		qp->comp.quiet_tsc = rte_get_timer_cycles();
		qp->comp.heard = false;	/* answers to what went before */
	}
	if (qp->comp.rtt_tsc == 0) {
		qp->comp.rtt_tsc = rte_get_timer_cycles();
		qp->comp.rtt_psn = end;
		qp->comp.rtt_rd = rd;
	}
}

static void
req_fail(struct rp_qp *qp, uint32_t status)
{
	/* The failing WQE is the next to send; complete in order first. */
	RP_QP_LOG(rp_logtype_req, DEBUG, qp->qpn, "WQE %u fails: status %u",
		  qp->req.head, status);
	if (qp->comp.tail == qp->req.head) {
		rp_qp_error_event(qp, status, IBV_EVENT_QP_FATAL);
	} else {
		/* Earlier WQEs are still in flight: they are flushed. */
		rp_qp_error_event(qp, IBV_WC_WR_FLUSH_ERR, IBV_EVENT_QP_FATAL);
	}
}

/*
 * RC: may packets up to `n` PSNs on from req.psn go out?  The window
 * counts from the oldest unacknowledged PSN, packet by packet, so a large
 * message stops at its edge and resumes as ACKs come back.
 */
static inline bool
req_window_open(const struct rp_qp *qp, uint32_t n)
{
	/* A READ request of n packets fits a narrower window alone. */
	return rp_psn_diff(rp_psn_add(qp->req.psn, n - 1), qp->comp.una) <
		(int32_t)RTE_MAX(rp_qp_window(qp), n);
}

/*
 * May `n` more packets of an RC message (its first, or a READ request's
 * responses) go out?  The shard's RC QPs together keep at most
 * flight_window packets in flight, each counted from its oldest
 * unacknowledged PSN to the highest it sent (a rewind makes no room: the
 * peer's queue may still hold the originals): every QP's window is its
 * own, and four of them to one slow peer (rxe in an emulated guest, its
 * tap queue 1000 frames) overflowed its queue with up to 4 x 256
 * packets, and a QP whose timeout had restarted its window kept losing
 * its 8 resends behind the others' until it ran out of retries.  READ
 * responses are paced by no ACK and land in the port's one RX ring.  A
 * QP with nothing in flight may always send, so none starves.  O(active
 * QPs) once per message or READ request (up to RP_READ_SEG packets), not
 * per packet.
 */
static bool
req_flight_room(struct rp_qp *qp, uint32_t n)
{
	struct rp_dev *dev = qp->dev;
	const struct rp_shard *sh = &dev->sh[qp->shard];
	uint32_t cap = dev->cfg.flight_window;
	uint32_t sum = n;

	/* Nothing in flight, or windows that cannot add up past the cap
	 * (the QP's own window was checked first): no need to count. */
	if (qp->req.max_psn == qp->comp.una ||
	    (uint64_t)sh->nr_active * RP_WINDOW <= cap)
		goto room;
	for (uint32_t i = 0; i < sh->nr_active && sum <= cap; i++) {
		const struct rp_qp *o = sh->active[i];
		int32_t d;

		if (o->type != IBV_QPT_RC || o->flushing)
			continue;
		/* up to the highest PSN sent: a rewind makes no room, the
		 * peer's queue may still hold what it will resend */
		d = rp_psn_diff(o->req.max_psn, o->comp.una);
		if (d > 0)
			sum += (uint32_t)d;
	}
	if (sum > cap) {
		/* counted once per wait, not per pass that finds it full */
		if (!qp->req.flight_held)
			rp_stat_inc(dev, RP_STAT_FLIGHT_HELD);
		qp->req.flight_held = true;
		return false;
	}
room:
	qp->req.flight_held = false;
	return true;
}

/*
 * A local operation (BIND_MW, LOCAL_INV) sends nothing: it runs once every
 * WQE before it has completed, so it takes effect after them and before
 * any after it, and completes in order at once.  False while it waits.
 */
static bool
req_local(struct rp_qp *qp, const struct rp_send_wqe *w)
{
	uint32_t status;

	if (qp->comp.tail != qp->req.head)
		return false;
	if (w->opcode == IBV_WR_BIND_MW)
		status = rp_mw_bind(qp, w);
	else
		status = rp_key_invalidate(qp, w->imm_data) == 0 ?
			IBV_WC_SUCCESS : IBV_WC_MW_BIND_ERR;
	if (status != IBV_WC_SUCCESS) {
		req_fail(qp, status);
		return false;
	}
	rp_swqe(qp, qp->req.head)->opcode = w->opcode;
	qp->req.head++;
	if ((int32_t)(qp->req.head - qp->req.hi) > 0)
		qp->req.hi = qp->req.head;
	rp_cqe_send(qp, qp->comp.tail++, IBV_WC_SUCCESS);
	return true;
}

static inline bool
req_is_local(uint8_t opcode)
{
	return opcode == IBV_WR_BIND_MW || opcode == IBV_WR_LOCAL_INV;
}

/*
 * End-to-end credits (IBTA 9.7.7.2): a new message that takes a receive
 * WQE goes while the peer's last ACK said one is posted for it, or when
 * none of ours is unacknowledged: no ACK would come to say more, so one
 * goes, the limited WQE that asks for a fresh count (an RNR NAK if there
 * is still none).  A resend was counted.  A peer that gives no count
 * (rxe, an SRQ) limits nothing.
 */
static bool
req_credit_ok(struct rp_qp *qp, uint8_t wr_opcode)
{
	if (qp->type != IBV_QPT_RC || !qp->req.credits ||
	    !rp_wr_takes_rwqe(wr_opcode) ||
	    (int32_t)(qp->req.head - qp->req.hi) < 0 ||
	    (int32_t)(qp->req.csn - qp->req.csn_limit) < 0 ||
	    qp->req.csn == qp->comp.csn_acked)
		return true;
	rp_stat_inc(qp->dev, RP_STAT_CREDIT_HELD);
	return false;
}

/* Start the WQE at req.head; false if it cannot start now. */
static bool
req_start(struct rp_qp *qp, uint32_t prod)
{
	const struct rp_send_wqe *w;
	const struct rp_sge *sge;
	struct rp_swqe *s;
	uint32_t len = 0;
	int status;

	for (;;) {
		/* SQD: resend what go-back-N rewound, start nothing new. */
		if (qp->req.head == prod ||
		    (qp->sq_draining &&
		     (int32_t)(qp->req.head - qp->req.hi) >= 0))
			return false;
		w = rp_sq_wqe(qp, qp->req.head);
		if (!req_is_local(w->opcode) || qp->type == IBV_QPT_UD)
			break;
		if (!req_local(qp, w))
			return false;
	}
	sge = (const struct rp_sge *)(w + 1);
	s = rp_swqe(qp, qp->req.head);
	/* The engine's private copy: nobody else writes it. */
	status = req_validate(qp, w, sge, s->pdn, &len);
	if (status != IBV_WC_SUCCESS) {
		req_fail(qp, status);
		return false;
	}
	if (qp->type != IBV_QPT_UD) {
		/* the cap is for new messages: a resend was counted */
		if (qp->type == IBV_QPT_RC &&
		    (!req_window_open(qp, 1) ||
		     ((int32_t)(qp->req.head - qp->req.hi) >= 0 &&
		      !req_flight_room(qp, 1))))
			return false;
		if ((w->flags & RP_WQE_FENCE) && qp->req.rd_out != 0)
			return false;
		if (rp_wr_is_rd_atomic(w->opcode) &&
		    qp->req.rd_out - rp_sr_rd_answered(qp) >=
		    qp->max_rd_atomic)
			return false;
		if (!req_credit_ok(qp, w->opcode))
			return false;
	}
	if ((int32_t)(qp->req.head - qp->req.hi) >= 0) {
		qp->req.hi = qp->req.head + 1;
		if (qp->type == IBV_QPT_RC && rp_wr_takes_rwqe(w->opcode))
			qp->req.csn++;
	}
	s->first_psn = qp->req.psn;
	s->length = len;
	s->npkts = len == 0 ? 1 : (len + qp->mtu - 1) / qp->mtu;
	s->opcode = w->opcode;
	s->flags = w->flags;
	s->state = RP_SWQE_SENDING;
	s->rd_restart = 0;
	s->rd_midway = false;
	qp->req.inprog = true;
	qp->req.off = 0;
	qp->req.pkt = 0;
	return true;
}

/* The WQE at req.head has all its packets out. */
static void
req_done(struct rp_qp *qp)
{
	struct rp_swqe *s = rp_swqe(qp, qp->req.head);

	s->state = RP_SWQE_SENT;
	qp->req.inprog = false;
	qp->req.head++;
	if (qp->type != IBV_QPT_RC) {
		/* Unreliable: complete as soon as it is on the wire. */
		rp_cqe_send(qp, qp->comp.tail++, IBV_WC_SUCCESS);
		return;
	}
	if (qp->comp.deadline == 0)
		rp_req_arm_timer(qp);
}

/*
 * Is every request before req.psn that the responder may lack a READ
 * (RP_BTH_RO)?  It has all before the oldest unacknowledged PSN, so yes
 * if the last request that is not a READ is acknowledged; mod_end then
 * follows una, so that it never falls half the PSN space behind.
 */
static bool
req_reads_only(struct rp_qp *qp)
{
	if (rp_psn_diff(qp->req.mod_end, qp->comp.una) > 0)
		return false;
	qp->req.mod_end = qp->comp.una;
	return true;
}

/*
 * Send the next READ request of the WQE at req.head: from packet req.pkt
 * to the next RP_READ_SEG boundary (or the end), within the window and
 * the READs the responder takes at once.  A rewind into a READ resumes at
 * the first missing response (rd_restart), not at its start.
 */
static bool
req_send_read(struct rp_qp *qp, const struct rp_send_wqe *w,
	      struct rp_swqe *s)
{
	uint32_t k = qp->req.pkt;
	uint32_t n = RTE_MIN(s->npkts - k, RP_READ_SEG - k % RP_READ_SEG);
	uint64_t off = (uint64_t)k * qp->mtu;
	uint32_t len = (uint32_t)RTE_MIN((uint64_t)s->length - off,
					 (uint64_t)n * qp->mtu);
	struct rte_mbuf *m;
	uint8_t *bth;

	if (!req_window_open(qp, n) ||
	    (k != 0 && qp->req.rd_out - rp_sr_rd_answered(qp) >=
	     qp->max_rd_atomic) ||
	    (rp_psn_diff(qp->req.psn, qp->req.max_psn) >= 0 &&
	     !req_flight_room(qp, n)))
		return false;
	m = rp_xmit_alloc(qp, &qp->addr, qp->dest_qpn, RP_OP_READ_REQ, 0, 1,
			  qp->req.psn, 0, &bth);
	if (m == NULL)
		return false;
	/* "I take READ responses out of order" (rp_sr_read.c) */
	if (qp->dev->cfg.selective_retx) {
		rp_req_mark_sr(qp, bth, RP_SR_ON);
		if (req_reads_only(qp))
			rp_bth_set_ro(bth);
	}
	rp_reth_set(rp_xmit_hdr(bth, RP_OP_READ_REQ, RP_HDR_RETH),
		    w->remote_addr + off, w->rkey, len);
	rp_xmit_send(qp, &qp->addr, m);
	/* A READ is timed to its first response, which comes a round trip
	 * later whatever else of it or before it is lost (rp_sr_read.c):
	 * timed to its last, under loss no sample ever ended. */
	if (rp_psn_diff(rp_psn_add(qp->req.psn, n), qp->req.max_psn) > 0) {
		qp->req.max_psn = rp_psn_add(qp->req.psn, n);
		req_sent(qp, rp_psn_add(qp->req.psn, 1), true);
	}
	qp->req.psn = rp_psn_add(qp->req.psn, n);
	qp->req.rd_out++;
	qp->req.pkt += n;
	qp->req.off = (uint32_t)(off + len);
	if (qp->req.pkt == s->npkts)
		req_done(qp);
	return true;
}

/*
 * Send the atomic request of the WQE at req.head (one packet, AckReq set
 * as rxe sets it): its ATOMIC ACKNOWLEDGE completes it.
 */
static bool
req_send_atomic(struct rp_qp *qp, const struct rp_send_wqe *w)
{
	int op = rp_next_opcode(w->opcode, qp->type, 1, 1);
	struct rte_mbuf *m;
	uint8_t *bth;

	if (!req_window_open(qp, 1))
		return false;
	m = rp_xmit_alloc(qp, &qp->addr, qp->dest_qpn, (uint8_t)op, 0, 1,
			  qp->req.psn, 0, &bth);
	if (m == NULL)
		return false;
	/* AtomicETH: CmpSwap carries swap and compare, FetchAdd its add
	 * in the swap/add field and a zero compare (as rxe sends it). */
	if (w->opcode == IBV_WR_ATOMIC_CMP_AND_SWP)
		rp_atmeth_set(rp_xmit_hdr(bth, (uint8_t)op, RP_HDR_ATMETH),
			      w->remote_addr, w->rkey, w->swap, w->compare_add);
	else
		rp_atmeth_set(rp_xmit_hdr(bth, (uint8_t)op, RP_HDR_ATMETH),
			      w->remote_addr, w->rkey, w->compare_add, 0);
	rp_xmit_send(qp, &qp->addr, m);
	qp->req.psn = rp_psn_add(qp->req.psn, 1);
	if (rp_psn_diff(qp->req.psn, qp->req.max_psn) > 0)
		qp->req.max_psn = qp->req.psn;
	qp->req.rd_out++;
	qp->req.pkt = 1;
	req_done(qp);
	return true;
}

/*
 * A MAD a GSI agent may not send from QP 1 (rp_gsi_send_ok()): not sent,
 * counted, and completed with IBV_WC_LOC_QP_OP_ERR; the agent's QP stays
 * in RTS, so its process's CM goes on with its own connections.
 */
static void
req_gsi_refused(struct rp_qp *qp)
{
	struct rp_swqe *s = rp_swqe(qp, qp->req.head);

	rp_stat_inc(qp->dev, RP_STAT_GSI_REFUSED);
	RP_LOG_RL(rp_logtype_req, WARNING,
		  "%s: GSI agent qp 0x%06x: a MAD not for its own CM IDs refused",
		  qp->dev->ctl->name, qp->qpn);
	s->state = RP_SWQE_SENT;
	qp->req.inprog = false;
	qp->req.head++;
	rp_cqe_send(qp, qp->comp.tail++, IBV_WC_LOC_QP_OP_ERR);
}

/*
 * Names one message for the read ahead of attached memory (rp_mem.c):
 * its QP and first PSN, with bit 63 set (never 0); the SGE index is
 * added per SGE.
 */
static inline uint64_t
req_mem_tag(const struct rp_qp *qp, const struct rp_swqe *s)
{
	return 1ull << 63 | (uint64_t)qp->qpn << 32 | (uint64_t)s->first_psn << 8;
}

/* Send the next packet of the WQE at req.head. */
bool
rp_req_send_packet(struct rp_qp *qp)
{
	struct rp_send_wqe *w = rp_sq_wqe(qp, qp->req.head);
	struct rp_swqe *s = rp_swqe(qp, qp->req.head);
	const struct rp_pkt_addr *a = &qp->addr;
	struct rp_pkt_addr ud_addr;
	uint32_t chunk, dqpn = qp->dest_qpn;
	int first, last, ackreq, op;
	const uint8_t *direct = NULL;
	struct rte_mbuf *m;
	uint8_t *bth, *pay;

	if (s->opcode == IBV_WR_RDMA_READ)
		return req_send_read(qp, w, s);
	if (rp_psn_diff(qp->req.psn, qp->req.mod_end) >= 0)
		qp->req.mod_end = rp_psn_add(qp->req.psn, 1);
	if (rp_wr_is_atomic(s->opcode))
		return req_send_atomic(qp, w);
	if (qp->type == IBV_QPT_RC && !req_window_open(qp, 1))
		return false;	/* at the window edge: ACKs reopen it */

	chunk = RTE_MIN(qp->mtu, s->length - qp->req.off);
	first = qp->req.off == 0;
	last = qp->req.off + chunk == s->length;
	op = rp_next_opcode(s->opcode, qp->type, first, last);
	if (op < 0) {
		req_fail(qp, IBV_WC_LOC_QP_OP_ERR);
		return false;
	}
	if (qp->type == IBV_QPT_UD) {
		dqpn = w->remote_qpn & RP_QPN_MASK;
		if (req_ud_addr(qp, w->ah, dqpn, &ud_addr) != 0)
			return false;	/* ARP pending: try again later */
		a = &ud_addr;
	}
	/* AckReq also on the last packet the window lets out: its ACK is
	 * what opens the window again.  And on one after which the rate
	 * holds the next for half the probe's wait or more (headers counted
	 * as 64 bytes): the ACK of a later packet of the message would come
	 * past the timer, which would probe what arrived (at 8 Mbit/s, 1 KiB
	 * packets 1 ms apart: seven probes in two 16 KiB WRITEs,
	 * engine-wire-dcqcn).  Not at every hold: an ACK per paced packet
	 * at 100 Mbit/s shares cost the incast its fairness (Jain 0.98 ->
	 * 0.84-0.91, guides/congestion). */
	ackreq = qp->type == IBV_QPT_RC &&
		(last || qp->req.pkt % RP_ACKREQ_EVERY == RP_ACKREQ_EVERY - 1 ||
		 !req_window_open(qp, 2) ||
		 (unlikely(qp->cc.limited) &&
		  rp_dcqcn_hold(qp, chunk + 64) >= req_probe_cycles(qp) / 2) ||
		 qp->req.probe_ack);
	/* In place when first sent.  A packet sent again is copied: if its
	 * memory changed between the first's ICRC and the PMD's copy (a
	 * WRITE the engine placed there meanwhile, or a program's write to
	 * a posted buffer), the receiver dropped the first, and a copy
	 * makes the second whole whatever the memory does (guides/
	 * architecture, "Zero copy on transmit"). */
	if (!(s->flags & RP_WQE_INLINE) && rp_xmit_zc_ok(qp, chunk, false) &&
	    rp_psn_diff(qp->req.psn, qp->req.max_psn) >= 0)
		direct = rp_sge_direct(qp->dev, s->pdn,
				       (const struct rp_sge *)(w + 1),
				       w->num_sge, qp->req.off, chunk);
	m = direct != NULL ?
		rp_xmit_alloc_zc(qp, a, dqpn, op,
				 last && (s->flags & RP_WQE_SOLICITED), ackreq,
				 qp->req.psn, direct, chunk, &bth) :
		rp_xmit_alloc(qp, a, dqpn, op,
			      last && (s->flags & RP_WQE_SOLICITED), ackreq,
			      qp->req.psn, chunk, &bth);
	if (m == NULL)
		return false;

	/* "I take selective NAKs" (rp_sr.c); a tail probe asks for
	 * every gap, and for an answer. */
	if (qp->type == IBV_QPT_RC && qp->dev->cfg.selective_retx) {
		rp_req_mark_sr(qp, bth, RP_SR_ON |
			       (qp->req.tail_probe ? RP_SR_ONE : 0));
		if (qp->req.tail_probe)
			rp_bth_set_ackreq(bth);
	}
	if (rp_opcode[op].mask & RP_M_RETH)
		rp_reth_set(rp_xmit_hdr(bth, op, RP_HDR_RETH), w->remote_addr,
			    w->rkey, s->length);
	if (rp_opcode[op].mask & RP_M_IMMDT)
		rp_immdt_set(rp_xmit_hdr(bth, op, RP_HDR_IMMDT), w->imm_data);
	if (rp_opcode[op].mask & RP_M_IETH)
		rp_ieth_set(rp_xmit_hdr(bth, op, RP_HDR_IETH), w->imm_data);
	if (rp_opcode[op].mask & RP_M_DETH) {
		/* C10-15: a Q_Key with the high bit set means "use the QP's". */
		uint32_t qkey = (w->remote_qkey & 0x80000000u) ? qp->qkey :
			w->remote_qkey;

		rp_deth_set(rp_xmit_hdr(bth, op, RP_HDR_DETH), qkey,
			    rp_qp_wire_qpn(qp));
	}
	pay = rp_xmit_hdr(bth, op, RP_HDR_PAYLOAD);
	if (direct != NULL) {
		/* in place: the payload is the frame's second segment */
	} else if (s->flags & RP_WQE_INLINE) {
		memcpy(pay, (const uint8_t *)(w + 1) + qp->req.off, chunk);
	} else if (chunk != 0 &&
		   rp_sge_copy_out(qp->dev, s->pdn, (const struct rp_sge *)(w + 1),
				   w->num_sge, qp->req.off, pay, chunk,
				   req_mem_tag(qp, s)) != 0) {
		/* The MR went away while the WQE was being sent. */
		rte_pktmbuf_free(m);
		req_fail(qp, IBV_WC_LOC_PROT_ERR);
		return false;
	}
	/* QP 1 speaks for every process: an agent only for its own. */
	if (unlikely(qp->gsi != NULL) && !rp_gsi_send_ok(qp, pay, chunk)) {
		rte_pktmbuf_free(m);
		req_gsi_refused(qp);
		return true;
	}
	rp_xmit_send(qp, a, m);
	qp->req.psn = rp_psn_add(qp->req.psn, 1);
	if (rp_psn_diff(qp->req.psn, qp->req.max_psn) > 0) {
		qp->req.max_psn = qp->req.psn;
		if (qp->type == IBV_QPT_RC)
			req_sent(qp, qp->req.max_psn, false);
	} else {
		/* go-back-N's price, against goodput (guides/congestion) */
		rp_stat_add(qp->dev, RP_STAT_RETX_BYTES, chunk);
	}
	qp->req.off += chunk;
	qp->req.pkt++;
	/* An ATOMIC WRITE's answer is queued with the READs' (as rxe's
	 * responder queues it): it counts against max_rd_atomic. */
	if (s->opcode == IBV_WR_ATOMIC_WRITE)
		qp->req.rd_out++;
	if (last)
		req_done(qp);
	return true;
}

/*
 * Copy the application's new WQEs into the private ring, in order.  Room
 * is certain: application WQEs in the private ring are fewer than the
 * shared ring holds (its slots are freed only when they retire), and
 * internal ones have slots of their own.  Returns how many it copied; a
 * producer index no ring could hold puts the QP in error.
 */
uint32_t
rp_req_ingest(struct rp_qp *qp)
{
	/* A0: pairs with the shim's release of prod after writing WQEs. */
	uint32_t prod = rp_load_acquire(&qp->sq->prod);
	uint32_t n = 0;

	/*
	 * Untrusted: prod must lie in [app_ingest, app_cons + size].  One
	 * moved back behind app_ingest would send the copy loop round the
	 * whole 2^32 index space.  No WQE is at fault: all are flushed.
	 */
	if (prod - qp->app_cons > qp->app_sq_size ||
	    prod - qp->app_cons < qp->app_ingest - qp->app_cons) {
		if (!qp->flushing) {
			RP_QP_LOG(rp_logtype_req, ERR, qp->qpn,
				  "corrupt SQ producer index %u (retired %u, "
				  "ingested %u, size %u)", prod, qp->app_cons,
				  qp->app_ingest, qp->app_sq_size);
			rp_qp_error_event(qp, IBV_WC_WR_FLUSH_ERR,
					  IBV_EVENT_QP_FATAL);
		}
		return 0;
	}
	while (qp->app_ingest != prod) {
		const struct rp_send_wqe *src = (const struct rp_send_wqe *)
			(qp->app_sq_buf + (size_t)(qp->app_ingest &
			 (qp->app_sq_size - 1)) * qp->app_sq_stride);
		struct rp_send_wqe *dst = rp_sq_wqe(qp, qp->sq_prod);
		struct rp_swqe *s = rp_swqe(qp, qp->sq_prod);
		uint32_t body;

		/* Header first; its own fields then bound the body. */
		memcpy(dst, src, sizeof(*dst));
		if (dst->flags & RP_WQE_INLINE) {
			body = RTE_MIN(dst->length,
				       qp->app_sq_stride - RP_SEND_WQE_HDR);
		} else {
			/* A bad num_sge stays bad: req_validate() fails it. */
			body = RTE_MIN(dst->num_sge, qp->caps.max_send_sge) *
				(uint32_t)sizeof(struct rp_sge);
		}
		memcpy(dst + 1, src + 1, body);
		s->state = RP_SWQE_NEW;
		s->internal = false;
		s->pdn = qp->pdn;
		qp->app_ingest++;
		qp->sq_prod++;
		n++;
	}
	return n;
}

/*
 * Queue a request of the engine's own after what is already queued:
 * `w` and `body_len` bytes of SGEs or inline data.  -ENOSPC when the
 * reserve is in use.  It completes through the QP's wqe_done hook (struct
 * rp_qp_ops, installed by its owner), never into the application's CQ.
 */
int
rp_req_post_internal(struct rp_qp *qp, const struct rp_send_wqe *w,
		     const void *body, uint32_t body_len, uint32_t pdn,
		     uint32_t cookie)
{
	struct rp_send_wqe *dst;
	struct rp_swqe *s;

	if (qp->int_out >= qp->int_rsv ||
	    body_len > qp->sq_stride - RP_SEND_WQE_HDR)
		return -ENOSPC;
	/* Whatever the application queued before goes first. */
	rp_req_ingest(qp);
	dst = rp_sq_wqe(qp, qp->sq_prod);
	s = rp_swqe(qp, qp->sq_prod);
	memcpy(dst, w, sizeof(*dst));
	memcpy(dst + 1, body, body_len);
	s->state = RP_SWQE_NEW;
	s->internal = true;
	s->pdn = pdn;
	s->cookie = cookie;
	qp->int_out++;
	qp->sq_prod++;
	rp_qp_wake(qp);
	return 0;
}

bool
rp_req_step(struct rp_qp *qp)
{
	uint32_t prod, budget = RP_BURST;
	bool busy = false;

	if (qp->state != IBV_QPS_RTS && qp->state != IBV_QPS_SQD)
		return false;
	if (qp->req.rnr_wait) {
		if (rte_get_timer_cycles() < qp->req.rnr_until)
			return false;
		qp->req.rnr_wait = false;
	}
	rp_req_ingest(qp);
	if (qp->flushing)
		return true;
	prod = qp->sq_prod;
	if (unlikely(qp->sqd_notify))
		rp_qp_sqd_check(qp);
	if (qp->type != IBV_QPT_UD && !rp_xmit_addr_ok(qp)) {
		if (qp->req.head == prod && !qp->req.inprog)
			return false;
		if (!rp_xmit_resolve(qp)) {
			/* RC: the retransmit timer bounds the wait (each
			 * round at least RP_ARP_WAIT_MS).  UC has no timer
			 * and no retries: it waits, as UD does. */
			if (qp->type == IBV_QPT_RC && qp->comp.deadline == 0)
				rp_req_arm_timer(qp);
			return false;
		}
	}
	while (budget-- > 0 && !qp->flushing && rp_tx_room(qp->dev)) {
		if (!qp->req.inprog && !req_start(qp, prod))
			break;
		/* paced by DCQCN's rate: the lcore's nap ends at next_tx */
		if (unlikely(qp->cc.limited) && !rp_dcqcn_pace(qp))
			break;
		if (!rp_req_send_packet(qp))
			break;
		busy = true;
	}
	return busy;
}
