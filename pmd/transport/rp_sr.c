/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Selective retransmission between rocepmd ends (guides/congestion).
 *
 * IBTA's RC responder drops every packet after a gap and NAKs the first
 * missing PSN; the requester goes back to it and sends everything again
 * (go-back-N), so one loss in a window of 256 costs up to 256 packets.
 * Here the responder keeps the SEND and WRITE packets and READ requests
 * that arrive after a gap (up to RP_SR_WIN PSNs past the expected one; a
 * READ request holds the PSNs of its responses), NAKs each missing PSN
 * (the expected one as a sequence NAK, which acknowledges what came before
 * it; a later one with RP_BTH_SR_ONE, which acknowledges nothing), and
 * executes what it kept, in order, once the gap is filled; the requester
 * sends each missing packet again alone and goes on
 * (rp_req_resend_one(); a READ request, rp_req_read_again()).  A packet
 * it cannot keep (past the window, an atomic, no room) is dropped as
 * IBTA's responder drops it, with a plain sequence NAK: the requester
 * goes back N.
 *
 * On the wire: a rocepmd requester whose port has selective_retx on sets
 * bit 30 of its requests' BTH (the top bit of the reserved field after
 * AckReq, RP_BTH_SR), which IBTA tells receivers to ignore and the ICRC
 * covers; a responder keeps packets only for a QP whose requests carry
 * it, and marks its selective NAKs (PSN sequence NAKs) with the same
 * bit.  A requester that never sets it (rxe, a NIC, a rocepmd with the
 * key off) gets IBTA's go-back-N responder, and a responder that ignores
 * it sends plain sequence NAKs, which the requester answers by going back
 * N.  Atomics are never kept: a gap before one is recovered as before.
 *
 * Resend generations (RP_BTH_RG, the last four reserved bits): such a
 * requester counts its single resends, 1 to 15 in turn, and marks every
 * request with the count, so that whatever it sends after a resend has
 * that resend's generation or a later one.  Its responder echoes, in each
 * selective NAK, the generation of the newest request it had.  A link
 * keeps order, so a NAK of a PSN whose echo is the PSN's last resend's
 * generation or later says that resend was lost: the requester sends it
 * again; an older echo says it is on its way: the requester waits.  And
 * the responder NAKs the expected PSN again when a request of a newer
 * generation than its last NAK saw comes without it, not every few
 * packets kept (16 then, for a lost NAK).  Zero is no generation: a peer
 * that does not mark (an older rocepmd) gets the round-trip filter and
 * the repeat every RP_SR_RENAK packets, as before.
 *
 * NAK maps (RP_BTH_NB): toward a requester whose requests say it reads
 * them, the selective NAKs of a pass go as few frames, a later PSN
 * NAKed alone in the AETH's MSN field of an earlier one's (a bit each,
 * 24 PSNs), held until the QP's step; the expected PSN's NAK maps every
 * PSN still missing up to the highest seen, so its repeats ask again for
 * those whose NAK was lost.
 *
 * A stall (a lost NAK, a lost resend, a lost last packet: nothing comes
 * back) of a requester that has had a selective NAK from its peer is
 * probed by its last packet sent, marked RP_BTH_SR_ONE, after its oldest
 * unacknowledged one (a tail probe, rp_req_tail_probe()); the responder
 * NAKs the expected PSN and every PSN still missing before the highest
 * it saw (rp_sr_report()), or ACKs the probe as a duplicate if it has
 * them all.  The stall's last probe and the retransmission timer still
 * go back N from the oldest unacknowledged PSN.
 */

#include <string.h>

#include <rte_malloc.h>
#include <rte_mbuf.h>

#include "rp_log.h"
#include "rp_psn.h"
#include "rp_resp.h"
#include "rp_transport.h"
#include "rp_xmit.h"

/* Packets kept by all QPs of all devices: the pools' share for it. */
#define RP_SR_HELD_MAX	2048u
static uint32_t sr_held;

int
rp_sr_alloc(struct rp_qp *qp)
{
	if (qp->type != IBV_QPT_RC || !qp->dev->cfg.selective_retx)
		return 0;
	qp->sr = rte_zmalloc("rp_sr", sizeof(*qp->sr), 0);
	return qp->sr != NULL ? 0 : -ENOMEM;
}

/* Forget what was kept (the QP goes to ERR or RESET, or away). */
void
rp_sr_flush(struct rp_qp *qp)
{
	struct rp_sr *sr = qp->sr;

	if (sr == NULL)
		return;
	qp->resp.nak_held = RP_NAK_HELD_NONE;
	memset(sr->rd_got, 0, sizeof(sr->rd_got));
	memset(sr->rd_asked, 0, sizeof(sr->rd_asked));
	sr->rd_hi = 0;
	rp_sr_rd_ans_reset(qp);
	if (sr->n == 0)
		return;
	for (uint32_t i = 0; i < RP_SR_WIN; i++) {
		if (sr->m[i] == NULL)
			continue;
		rte_pktmbuf_free(sr->m[i]);
		sr->m[i] = NULL;
		sr->early[i] = 0;
	}
	__atomic_fetch_sub(&sr_held, sr->n, __ATOMIC_RELAXED);
	sr->n = 0;
}

void
rp_sr_free(struct rp_qp *qp)
{
	rp_sr_flush(qp);
	rte_free(qp->sr);
	qp->sr = NULL;
}

/*
 * Keep `pkt`, which came `gap` PSNs past the expected one; true if kept.
 * Its mbuf stays ours past the burst (a reference more).
 */
bool
rp_sr_keep(struct rp_qp *qp, const struct rp_pkt *pkt, int32_t gap)
{
	struct rp_sr *sr = qp->sr;
	struct rte_mbuf *m = pkt->mbuf;
	uint32_t slot = pkt->psn % RP_SR_WIN;
	uint32_t span = 1;

	if (sr == NULL || !qp->resp.peer_sr || m == NULL ||
	    gap >= (int32_t)RP_SR_WIN ||
	    !(pkt->mask & (RP_M_SEND | RP_M_WRITE | RP_M_READ)))
		return false;
	if (pkt->mask & RP_M_READ) {
		/* a READ request: the PSNs of its responses are its own */
		uint32_t len = rp_pkt_reth_len(pkt);

		span = len == 0 ? 1 : (len - 1) / qp->mtu + 1;
		if (span > RP_SR_WIN - (uint32_t)gap)
			return false;
	}
	if (sr->m[slot] != NULL)
		return sr->psn[slot] == pkt->psn;	/* a duplicate of it */
	if (__atomic_load_n(&sr_held, __ATOMIC_RELAXED) >= RP_SR_HELD_MAX)
		return false;
	rte_mbuf_refcnt_update(m, 1);
	sr->m[slot] = m;
	sr->psn[slot] = pkt->psn;
	sr->span[slot] = span;
	sr->n++;
	__atomic_fetch_add(&sr_held, 1, __ATOMIC_RELAXED);
	rp_stat_inc(qp->dev, RP_STAT_SR_KEPT);
	return true;
}

static bool
sr_has(const struct rp_sr *sr, uint32_t psn)
{
	uint32_t slot = psn % RP_SR_WIN;

	return sr->m[slot] != NULL && sr->psn[slot] == psn;
}

/* The PSNs `psn` holds if it was kept (a READ request: its responses'). */
static uint32_t
sr_span(const struct rp_sr *sr, uint32_t psn)
{
	return sr_has(sr, psn) ? sr->span[psn % RP_SR_WIN] : 1;
}

/*
 * The PSNs after the expected one, up to the highest kept or NAKed, that
 * are still missing: the map of the expected PSN's NAK.  Its repeats then
 * ask again for those whose own NAK was lost (one frame carries several
 * now, and a loss takes them together), which nothing else asked for
 * before the expected PSN reached them or a probe came.
 */
static uint32_t
sr_missing_map(const struct rp_qp *qp)
{
	const struct rp_sr *sr = qp->sr;
	uint32_t epsn = qp->resp.epsn, map = 0, end;
	int32_t hi = rp_psn_diff(qp->resp.sr_hi, epsn);

	if (sr == NULL || hi <= 0 || hi >= (int32_t)RP_SR_WIN)
		return 0;
	end = RTE_MIN((uint32_t)hi, RP_NAK_MAP_BITS);
	for (uint32_t d = 1; d <= end;) {
		uint32_t p = rp_psn_add(epsn, d);

		if (sr_has(sr, p)) {
			d += sr_span(sr, p);
			continue;
		}
		map |= 1u << (d - 1);
		d++;
	}
	return map;
}

/* rp_resp_send_ack()'s psn for a selective NAK of `psn`, alone or not. */
static inline uint32_t
sr_nak_psn(uint32_t psn, bool one)
{
	return psn | RP_ACK_SR | (one ? RP_ACK_SR_ONE : 0);
}

/*
 * The selective NAK held for the pass's end goes now (the QP's step, or
 * before anything else the responder sends), with the PSNs it folded in
 * as its map.  Not in the error state: nothing is repaired there.
 */
void
rp_sr_nak_flush(struct rp_qp *qp)
{
	uint8_t held = qp->resp.nak_held;

	if (likely(held == RP_NAK_HELD_NONE))
		return;
	qp->resp.nak_held = RP_NAK_HELD_NONE;
	if (qp->flushing)
		return;
	rp_stat_inc(qp->dev, RP_STAT_TX_NAK_SEQ);	/* one on the wire */
	rp_resp_send_nak_map(qp, sr_nak_psn(qp->resp.nak_psn,
					    held == RP_NAK_HELD_ONE),
			     qp->resp.nak_map);
}

/*
 * A selective NAK of `psn`, alone (`one`) or of the expected PSN.  Toward
 * a requester that reads NAK maps (RP_BTH_NB) it is held until the QP's
 * step in this pass, and a later PSN NAKed alone in the same pass, within
 * RP_NAK_MAP_BITS after it, goes in its map: a burst of 32 under 10 %
 * loss finds three gaps, and most NAKs came within 2 us of the QP's
 * previous one (guides/congestion).  The same NAK twice in a pass goes
 * once.  `map`: PSNs after `psn` it asks for too (the expected PSN's:
 * sr_missing_map()), toward such a requester.
 */
static void
sr_nak(struct rp_qp *qp, uint32_t psn, bool one, uint32_t map)
{
	uint8_t kind = one ? RP_NAK_HELD_ONE : RP_NAK_HELD_GAP;
	int32_t d;

	if (!qp->resp.peer_nb || !rp_xmit_ready(qp)) {
		rp_stat_inc(qp->dev, RP_STAT_TX_NAK_SEQ);
		rp_resp_send_ack(qp, RP_AETH_NAK_PSN_SEQ,
				 sr_nak_psn(psn, one));
		return;
	}
	if (qp->resp.nak_held != RP_NAK_HELD_NONE) {
		d = rp_psn_diff(psn, qp->resp.nak_psn);
		if (one && d > 0 && d <= (int32_t)RP_NAK_MAP_BITS) {
			qp->resp.nak_map |= 1u << (d - 1);
			rp_stat_inc(qp->dev, RP_STAT_SR_NAK_MAPPED);
			return;
		}
		if (d == 0 && kind == qp->resp.nak_held) {
			qp->resp.nak_map |= map;
			return;
		}
		rp_sr_nak_flush(qp);
	}
	qp->resp.nak_held = kind;
	qp->resp.nak_psn = psn;
	qp->resp.nak_map = map;
}

/* A selective NAK of the expected PSN: the rest is kept. */
void
rp_resp_nak_gap(struct rp_qp *qp)
{
	qp->resp.nak_sent = true;
	qp->resp.nak_sr = true;
	qp->resp.oos_psn = qp->resp.epsn;
	qp->resp.sr_since = 0;
	qp->resp.rg_nak = qp->resp.rg_seen;
	rp_stat_inc(qp->dev, RP_STAT_SR_NAK);
	sr_nak(qp, qp->resp.epsn, false,
	       qp->resp.peer_nb ? sr_missing_map(qp) : 0);
}

/*
 * A selective NAK of a later missing PSN, acknowledging nothing: one for
 * each PSN of a gap, so a lost READ request draws one for each of its
 * responses' PSNs (sr_nak_one), of which its requester answers the
 * first.
 */
void
rp_resp_nak_one(struct rp_qp *qp, uint32_t psn)
{
	rp_stat_inc(qp->dev, RP_STAT_SR_NAK);
	rp_stat_inc(qp->dev, RP_STAT_SR_NAK_ONE);
	sr_nak(qp, psn, true, 0);
}

/*
 * Packets kept since the expected one's NAK before it is NAKed again: its
 * resend was lost too, and nothing else would say so before a probe
 * (200 us or more).  A window cut by loss holds 8 to 16 packets, so a
 * larger count never came (32: more probes than going back N); an early
 * one costs one duplicate.  4 against 2 and 32, engine-fm-loss10-sr:
 * guides/congestion.
 */
#define RP_SR_RENAK	4u
/* ... toward a requester that marks its generations (RP_BTH_RG): the
 * expected PSN is NAKed again as soon as a request of a later generation
 * than its last NAK saw comes without it (a resend went since, and under
 * the link's order the requester tells whether it was that PSN's, which
 * was then lost); the count only covers a lost NAK. */
#define RP_SR_RENAK_RG	16u

/* NAK alone each PSN missing from `from` up to `to` (not included). */
static void
sr_nak_missing(struct rp_qp *qp, uint32_t from, uint32_t to)
{
	const struct rp_sr *sr = qp->sr;

	for (uint32_t p = from; rp_psn_diff(p, to) < 0;) {
		if (sr_has(sr, p)) {
			p = rp_psn_add(p, sr_span(sr, p));
		} else {
			rp_resp_nak_one(qp, p);
			p = rp_psn_add(p, 1);
		}
	}
}

/*
 * After keeping `psn`: NAK each PSN newly found missing before it, the
 * expected one (which acknowledges what came before it) and the others
 * alone (RP_SR_ONE), so that a window's losses are all resent within one
 * round trip; and the expected one again while packets keep coming
 * without it: toward a requester that marks its generations, once one
 * of a later generation than the last NAK's comes (RP_SR_RENAK_RG),
 * else every RP_SR_RENAK packets.
 */
void
rp_sr_gaps(struct rp_qp *qp, uint32_t psn)
{
	uint32_t epsn = qp->resp.epsn;
	uint32_t last = rp_psn_add(psn, sr_span(qp->sr, psn) - 1);
	bool again;

	if (qp->resp.rg_seen != 0)
		again = qp->resp.rg_seen != qp->resp.rg_nak ||
			++qp->resp.sr_since >= RP_SR_RENAK_RG;
	else
		again = ++qp->resp.sr_since >= RP_SR_RENAK;
	if (!qp->resp.nak_sent || again)
		rp_resp_nak_gap(qp);
	if (rp_psn_diff(qp->resp.sr_hi, epsn) < 0 ||
	    rp_psn_diff(qp->resp.sr_hi, epsn) >= (int32_t)RP_SR_WIN)
		qp->resp.sr_hi = epsn;
	sr_nak_missing(qp, rp_psn_add(qp->resp.sr_hi, 1), psn);
	if (rp_psn_diff(last, qp->resp.sr_hi) > 0)
		qp->resp.sr_hi = last;
}

/*
 * A tail probe came (`psn`, marked RP_SR_ONE: rp_req_tail_probe()) while
 * packets are kept: the requester heard nothing for a while, so a NAK or
 * a resend was lost.  NAK the expected PSN and every one still missing
 * before the highest seen, again.
 */
void
rp_sr_report(struct rp_qp *qp, uint32_t psn)
{
	int32_t hi = rp_psn_diff(qp->resp.sr_hi, qp->resp.epsn);

	rp_resp_nak_gap(qp);
	/* sr_hi is stale once the gaps it saw were filled */
	if (hi <= 0 || hi >= (int32_t)RP_SR_WIN)
		qp->resp.sr_hi = qp->resp.epsn;
	if (rp_psn_diff(psn, qp->resp.sr_hi) > 0)
		qp->resp.sr_hi = psn;
	sr_nak_missing(qp, rp_psn_add(qp->resp.epsn, 1), qp->resp.sr_hi);
}

/*
 * A READ request `pkt` was kept past a gap (or found kept already).  If
 * every request its requester may still owe before it is a READ
 * (RP_BTH_RO: rp_req.c), nothing in the gap can change what it reads, so
 * it is answered now, not a round trip later when the gap is filled:
 * a lost READ request no longer stops every READ after it, and the
 * requester places the responses past its gap (rp_sr_read.c).  It counts
 * against max_dest_rd_atomic as any READ queued, with a slot left for
 * the missing one.  A run asked for alone (RP_SR_ONE) of a READ answered
 * so is answered again at once; a copy of that READ past the gap is one
 * on the wire (going back N resends the gap first): not answered again,
 * and no NAK, as for the READ itself.  True if nothing is left to do
 * for pkt (no NAK for the gap).
 */
bool
rp_sr_rd_early(struct rp_qp *qp, const struct rp_pkt *pkt)
{
	struct rp_sr *sr = qp->sr;

	/* The READ answered so whose responses pkt's PSN is among: itself
	 * (k = 0), or, for an ask mid-way (kept apart), one kept before it:
	 * a request's own PSNs are no other request's. */
	const uint32_t back = (pkt->sr & RP_SR_ONE) ? RP_READ_SEG : 1;

	for (uint32_t k = 0; k < back; k++) {
		uint32_t p = (pkt->psn - k) & RP_PSN_MASK;
		uint32_t slot = p % RP_SR_WIN;

		if (k != 0 && rp_psn_diff(p, qp->resp.epsn) < 0)
			break;
		if (!sr_has(sr, p) || (k == 0 && !sr->early[slot]))
			continue;
		if (sr->early[slot] && sr->span[slot] > k) {
			if (!(pkt->sr & RP_SR_ONE))
				return true;
			(void)rp_resp_read(qp, pkt, true);
			return false;
		}
		break;
	}
	if ((pkt->sr & (RP_SR_RO | RP_SR_ONE)) != RP_SR_RO ||
	    !sr_has(sr, pkt->psn) || !rp_resp_rd_room(qp) ||
	    rp_resp_read(qp, pkt, false) != RP_RESP_OK)
		return false;
	sr->early[pkt->psn % RP_SR_WIN] = 1;
	rp_stat_inc(qp->dev, RP_STAT_SR_RD_EARLY);
	return true;
}

/*
 * After a packet at the expected PSN: execute the kept ones that follow
 * it, in order; NAK the next gap if one is left.  The mbufs go after the
 * writes they hold reached an attached process (rp_mem_flush()).
 */
void
rp_sr_drain(struct rp_qp *qp)
{
	struct rp_sr *sr = qp->sr;
	struct rte_mbuf *done[RP_SR_WIN];
	uint32_t nd = 0;

	if (sr == NULL || sr->n == 0)
		return;
	while (sr->n != 0 && !qp->flushing) {
		uint32_t slot = qp->resp.epsn % RP_SR_WIN;
		struct rte_mbuf *m = sr->m[slot];
		struct rp_pkt pkt;

		if (!sr_has(sr, qp->resp.epsn))
			break;
		sr->m[slot] = NULL;
		sr->n--;
		done[nd++] = m;
		/* checked when it came (ICRC, addresses, peer) */
		if (rp_pkt_parse(rte_pktmbuf_mtod(m, const uint8_t *),
				 rte_pktmbuf_data_len(m), false, &pkt) != 0)
			break;
		pkt.mbuf = m;
		rp_stat_inc(qp->dev, RP_STAT_SR_USED);
		if (sr->early[slot]) {
			sr->early[slot] = 0;
			rp_resp_read_passed(qp, &pkt, sr->span[slot]);
			continue;
		}
		if (!rp_resp_execute(qp, &pkt))
			break;
	}
	/* Kept packets the requester sent again behind: nothing to do. */
	for (uint32_t i = 0; i < RP_SR_WIN && sr->n != 0; i++) {
		if (sr->m[i] != NULL &&
		    rp_psn_diff(sr->psn[i], qp->resp.epsn) < 0) {
			done[nd++] = sr->m[i];
			sr->m[i] = NULL;
			sr->early[i] = 0;
			sr->n--;
		}
	}
	if (nd == 0)
		return;
	__atomic_fetch_sub(&sr_held, nd, __ATOMIC_RELAXED);
	if (qp->flushing) {
		rp_sr_flush(qp);
	} else {
		/* What the gap held up is acknowledged at once; the next gap
		 * was NAKed alone when a packet past it came (rp_sr_gaps). */
		rp_resp_ack_now(qp);
		if (sr->n != 0) {
			qp->resp.nak_sent = true;
			qp->resp.nak_sr = true;
			qp->resp.oos_psn = qp->resp.epsn;
			qp->resp.sr_since = 0;
			qp->resp.rg_nak = qp->resp.rg_seen;
		}
	}
	rp_mem_flush(qp->dev);
	rte_pktmbuf_free_bulk(done, nd);
}
