/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Responder: what READs and atomics owe.  Each request takes a slot of
 * the QP's FIFO (qp->rd[], max_dest_rd_atomic of them, twice as many
 * with selective_retx for the runs asked for alone, rp_sr_read.c); the
 * QP's step sends the READ responses and ATOMIC ACKNOWLEDGEs in order,
 * then an owed ACK.  Atomics execute once: a duplicate is answered from
 * the replay cache (qp->atom).
 */

#include <string.h>

#include <rte_common.h>

#include <infiniband/verbs.h>

#include "rp_atomic.h"
#include "rp_log.h"
#include "rp_psn.h"
#include "rp_resp.h"
#include "rp_xmit.h"

/* READs and atomics queued, but for the runs asked for alone. */
static inline uint32_t
resp_rd_queued(const struct rp_qp *qp)
{
	return qp->resp.rd_head - qp->resp.rd_tail - qp->resp.rd_sel;
}

/* The oldest queued is answered, or given up. */
static inline void
resp_rd_pop(struct rp_qp *qp, struct rp_rd_resp *rd)
{
	rd->valid = false;
	qp->resp.rd_sel -= rd->sel;
	qp->resp.rd_tail++;
}

/* An entry given up where it is: voided, counted with the runs asked for
 * alone (not against max_dest_rd_atomic), popped unanswered in its turn. */
static inline void
resp_rd_void(struct rp_qp *qp, struct rp_rd_resp *e)
{
	e->valid = false;
	if (!e->sel) {
		e->sel = true;
		qp->resp.rd_sel++;
	}
}

/*
 * The requester went back to `psn` (go-back-N): the responses still owed
 * from it on will be asked for again, so they must not fill the queue
 * twice (C9-100).  That includes a READ it resumes mid-way: it has every
 * response before this PSN.  Runs asked for alone (rd->sel) sit among
 * them out of PSN order, so every entry is looked at: one at the head
 * goes, one further in is voided (counted with the runs, not against
 * max_dest_rd_atomic, and popped unanswered when its turn comes).
 */
static void
resp_rd_void_from(struct rp_qp *qp, uint32_t psn)
{
	uint32_t mask = qp->rd_size - 1;
	struct rp_rd_resp *e;

	for (uint32_t i = qp->resp.rd_head; i != qp->resp.rd_tail; i--) {
		e = &qp->rd[(i - 1) & mask];
		if (!e->valid || rp_psn_diff(e->last_psn, psn) < 0)
			continue;
		resp_rd_void(qp, e);
	}
	while (qp->resp.rd_head != qp->resp.rd_tail) {
		e = &qp->rd[(qp->resp.rd_head - 1) & mask];
		if (e->valid)
			break;
		qp->resp.rd_sel -= e->sel;
		qp->resp.rd_head--;
	}
}

/* Is the response at `psn` still to be sent by an entry queued? */
static bool
resp_rd_owes(const struct rp_qp *qp, uint32_t psn)
{
	uint32_t mask = qp->rd_size - 1;

	for (uint32_t i = qp->resp.rd_tail; i != qp->resp.rd_head; i++) {
		const struct rp_rd_resp *e = &qp->rd[i & mask];

		if (e->valid && !e->atomic && rp_psn_diff(psn, e->psn) >= 0 &&
		    rp_psn_diff(psn, e->last_psn) <= 0)
			return true;
	}
	return false;
}

/*
 * Where a run asked for alone from `psn` to `last` must stop: the first
 * PSN after `psn` that an entry queued still owes, or `last` + 1.  That
 * entry sends the rest in its turn; a run that sent it too would
 * complete the READ at the requester while the entry still counts
 * against max_dest_rd_atomic here, and the requester's next READ found
 * the queue full (qperf's rc_rdma_read_bw at max_rd_atomic 1, its probe
 * asking while the responses were on their way: "remote invalid
 * request").
 */
static uint32_t
resp_rd_owed_after(const struct rp_qp *qp, uint32_t psn, uint32_t last)
{
	uint32_t mask = qp->rd_size - 1, end = rp_psn_add(last, 1);

	for (uint32_t i = qp->resp.rd_tail; i != qp->resp.rd_head; i++) {
		const struct rp_rd_resp *e = &qp->rd[i & mask];

		if (e->valid && !e->atomic && rp_psn_diff(e->psn, psn) > 0 &&
		    rp_psn_diff(e->psn, end) < 0 &&
		    rp_psn_diff(e->last_psn, e->psn) >= 0)
			end = e->psn;
	}
	return end;
}

/* A run asked for alone (RP_BTH_SR_ONE, rp_sr_read.c). */
static inline bool
resp_rd_is_asked(const struct rp_qp *qp, const struct rp_pkt *pkt)
{
	return qp->sr != NULL && (pkt->sr & RP_SR_ONE);
}

/* ... of what was answered already. */
static inline bool
resp_rd_is_sel(const struct rp_qp *qp, const struct rp_pkt *pkt, bool dup)
{
	return dup && resp_rd_is_asked(qp, pkt);
}

/* The oldest replay counted against max_dest_rd_atomic, or NULL. */
static struct rp_rd_resp *
resp_rd_counted_replay(struct rp_qp *qp)
{
	uint32_t mask = qp->rd_size - 1;

	for (uint32_t i = qp->resp.rd_tail; i != qp->resp.rd_head; i++) {
		struct rp_rd_resp *e = &qp->rd[i & mask];

		if (e->valid && !e->sel && e->replay)
			return e;
	}
	return NULL;
}

/*
 * What a full queue gives up for a new request: the oldest replay, or
 * NULL.  One at the tail goes first even if it is a run asked for alone
 * (a replay too, not counted: popped, and the next is looked at).
 */
static struct rp_rd_resp *
resp_rd_oldest_replay(struct rp_qp *qp)
{
	struct rp_rd_resp *e = &qp->rd[qp->resp.rd_tail & (qp->rd_size - 1)];

	if (qp->resp.rd_tail != qp->resp.rd_head && e->replay)
		return e;
	return resp_rd_counted_replay(qp);
}

/*
 * max_dest_rd_atomic taken by requests the requester really has
 * outstanding: the queue is full and holds no replay to give up.  A new
 * READ or atomic then is the peer's error: resp_rd_slot() ends so, and an
 * atomic asks first (resp_target8()), since once executed its answer is
 * owed.
 */
static bool
resp_rd_full(struct rp_qp *qp)
{
	return resp_rd_queued(qp) >= RTE_MAX(qp->max_dest_rd_atomic, 1u) &&
	       resp_rd_counted_replay(qp) == NULL;
}

/*
 * A slot of the responder's resources (qp->rd[]) for the READ or atomic
 * request `pkt`, or NULL with *res saying why not.
 */
static struct rp_rd_resp *
resp_rd_slot(struct rp_qp *qp, const struct rp_pkt *pkt, bool dup,
	     enum rp_resp_res *res)
{
	uint32_t max = RTE_MAX(qp->max_dest_rd_atomic, 1u);
	/* A run asked for alone (RP_SR_ONE, rp_sr_read.c) drops nothing:
	 * the requester has the responses owed after it, or asks for them
	 * alone too.  Such runs have a queue of their own size (the FIFO
	 * is twice max_dest_rd_atomic with selective_retx), and none of
	 * them counts against max_dest_rd_atomic; one that finds no room
	 * waits for the requester's next probe. */
	bool sel = resp_rd_is_sel(qp, pkt, dup);
	bool ahead = resp_rd_is_asked(qp, pkt);
	struct rp_rd_resp *rd;

	if (sel) {
		/* Asked for while still owed (the requester found its answer
		 * overdue): it comes in its turn.  Answered first, it would
		 * complete the READ and leave that entry for a READ the
		 * requester no longer counts against max_rd_atomic. */
		if (qp->resp.rd_sel >= max || resp_rd_owes(qp, pkt->psn) ||
		    qp->resp.rd_head - qp->resp.rd_tail >= qp->rd_size) {
			*res = RP_RESP_DROP;
			return NULL;
		}
	} else if (dup) {
		resp_rd_void_from(qp, pkt->psn);
	}
	while (!sel && resp_rd_queued(qp) >= max) {
		if (dup) {
			/* A duplicate can wait for the requester's next retry. */
			*res = RP_RESP_DROP;
			return NULL;
		}
		/*
		 * A READ queued again for a duplicate request may be one the
		 * requester has completed since, from the first responses
		 * (they crossed its resend): it no longer counts it against
		 * max_rd_atomic, and its next new READ finds the queue full.
		 * Give up the oldest replay, and the runs asked for alone
		 * before it (replays too, not counted: the requester asks
		 * again); only a queue full of requests the requester really
		 * has outstanding is its error.  It is the oldest entry but
		 * for READs answered past a gap of READs (rp_sr_rd_early()),
		 * first executions queued ahead of it: one further in is
		 * voided as resp_rd_void_from() voids one.
		 */
		rd = resp_rd_oldest_replay(qp);
		if (rd == NULL) {
			RP_QP_LOG(rp_logtype_resp, INFO, qp->qpn,
				  "op 0x%02x psn %u: %u READs/atomics queued "
				  "already", pkt->opcode, pkt->psn,
				  resp_rd_queued(qp));
			*res = RP_RESP_ERR_INV_REQ;
			return NULL;
		}
		RP_QP_LOG(rp_logtype_resp, DEBUG, qp->qpn,
			  "op 0x%02x psn %u: queue full, replay psn %u given up",
			  pkt->opcode, pkt->psn, rd->first_psn);
		if (rd == &qp->rd[qp->resp.rd_tail & (qp->rd_size - 1)])
			resp_rd_pop(qp, rd);
		else
			resp_rd_void(qp, rd);
	}
	/* A run asked for alone goes first: it is what the requester's
	 * completions wait for, and behind the READs queued (a window of
	 * responses) its answer came a whole window late.  Its requester
	 * places responses by PSN, so the one interrupted resumes after.
	 * It goes after the runs asked for before it, though: answered in
	 * the order asked, an answer tells the requester that an earlier
	 * run still missing was lost (rp_sr_read.c).  So does the ask of a
	 * READ whose request was lost, new here (not sel: it counts against
	 * max_dest_rd_atomic): queued behind the READs, the answers of the
	 * runs asked for after it overtook it, and the requester asked for
	 * it again, drawing again the responses it had sent. */
	if (ahead) {
		uint32_t mask = qp->rd_size - 1, i = --qp->resp.rd_tail;

		for (; i + 1 != qp->resp.rd_head; i++) {
			const struct rp_rd_resp *n = &qp->rd[(i + 1) & mask];

			if (!n->valid || !n->ahead)
				break;
			qp->rd[i & mask] = *n;
		}
		rd = &qp->rd[i & mask];
	} else {
		rd = &qp->rd[qp->resp.rd_head++ & (qp->rd_size - 1)];
	}
	rd->psn = pkt->psn;
	rd->first_psn = pkt->psn;
	rd->valid = true;
	rd->replay = dup;
	rd->sel = sel;
	rd->ahead = ahead;
	qp->resp.rd_sel += sel;
	rd->atomic = false;
	return rd;
}

/*
 * Room to answer a READ kept past a gap now (rp_sr_rd_early()), with one
 * slot left for the request the gap is missing, which the requester
 * counts as outstanding too.
 */
bool
rp_resp_rd_room(const struct rp_qp *qp)
{
	return resp_rd_queued(qp) + 1 < RTE_MAX(qp->max_dest_rd_atomic, 1u) &&
	       qp->resp.rd_head - qp->resp.rd_tail + 1 < qp->rd_size;
}

enum rp_resp_res
rp_resp_read(struct rp_qp *qp, const struct rp_pkt *pkt, bool dup)
{
	uint64_t va = rp_pkt_reth_va(pkt);
	uint32_t len = rp_pkt_reth_len(pkt), npkts;
	bool cut = false;
	enum rp_resp_res res;
	struct rp_rd_resp *rd;
	struct rp_mr *mr = NULL;

	if (!(qp->access & IBV_ACCESS_REMOTE_READ))
		return RP_RESP_ERR_INV_REQ;	/* not enabled on the QP */
	if (len > (1u << 31) || qp->rd == NULL)
		return RP_RESP_ERR_INV_REQ;
	if (len != 0) {
		mr = rp_rkey_lookup(qp, rp_pkt_reth_rkey(pkt), va, len,
				    IBV_ACCESS_REMOTE_READ);
		if (mr == NULL)
			return RP_RESP_ERR_ACCESS;
	}
	npkts = len == 0 ? 1 : (len + qp->mtu - 1) / qp->mtu;
	if (resp_rd_is_sel(qp, pkt, dup)) {
		/* up to what an entry still owes, which comes in its turn */
		uint32_t n = (uint32_t)rp_psn_diff(resp_rd_owed_after(qp,
				pkt->psn, rp_psn_add(pkt->psn, npkts - 1)),
				pkt->psn);

		if (n > 0 && n < npkts) {
			npkts = n;
			len = n * qp->mtu;
			cut = true;
		}
	}
	rd = resp_rd_slot(qp, pkt, dup, &res);
	if (rd == NULL)
		return res;
	if (cut)
		rp_stat_inc(qp->dev, RP_STAT_SR_RD_CUT);
	rd->npkts_left = npkts;
	rd->last_psn = rp_psn_add(pkt->psn, rd->npkts_left - 1);
	rd->va = va;
	rd->left = len;
	rd->total = len;
	rd->mr = mr;
	rd->key = mr != NULL ? mr->key : 0;
	/* one answered past a gap leaves the expected PSN: rp_sr_drain()
	 * passes it when the gap is filled */
	if (!dup && pkt->psn == qp->resp.epsn) {
		qp->resp.epsn = rp_psn_add(pkt->psn, rd->npkts_left - 1);
		qp->resp.msn++;
	}
	return RP_RESP_OK;
}

/*
 * Queue the one-packet answer of pkt with the READs': an ATOMIC
 * ACKNOWLEDGE of `orig` for an atomic, an empty READ response ONLY for an
 * ATOMIC WRITE.
 */
static enum rp_resp_res
resp_answer1(struct rp_qp *qp, const struct rp_pkt *pkt, bool dup,
	     bool atomic, uint64_t orig)
{
	enum rp_resp_res res;
	struct rp_rd_resp *rd;

	rd = resp_rd_slot(qp, pkt, dup, &res);
	if (rd == NULL)
		return res;
	rd->npkts_left = 1;
	rd->last_psn = pkt->psn;
	rd->va = 0;
	rd->left = 0;
	rd->total = 0;
	rd->mr = NULL;
	rd->key = 0;
	rd->atomic = atomic;
	rd->orig = orig;
	return RP_RESP_OK;
}

/*
 * The target of an atomic or an ATOMIC WRITE: the operation enabled on
 * the QP (else NAK invalid request, as rxe's check_op_valid), an 8-byte
 * aligned va (else invalid request, as rxe) under an rkey with the right
 * (else remote access error), and room for the answer among the READs'
 * (a peer beyond its max_rd_atomic gets invalid request).
 */
static enum rp_resp_res
resp_target8(struct rp_qp *qp, uint32_t rkey, uint64_t va, int access,
	     struct rp_mr **mrp)
{
	struct rp_mr *mr;

	if (!(qp->access & access) || qp->rd == NULL)
		return RP_RESP_ERR_INV_REQ;
	if ((va & (sizeof(uint64_t) - 1)) != 0)
		return RP_RESP_ERR_INV_REQ;
	mr = rp_rkey_lookup(qp, rkey, va, sizeof(uint64_t), access);
	if (mr == NULL)
		return RP_RESP_ERR_ACCESS;
	if (((uintptr_t)(mr->addr + (va - mr->iova)) &
	     (sizeof(uint64_t) - 1)) != 0)
		return RP_RESP_ERR_INV_REQ;	/* iova and address disagree */
	if (resp_rd_full(qp))
		return RP_RESP_ERR_INV_REQ;
	*mrp = mr;
	return RP_RESP_OK;
}

/*
 * An atomic: an 8-byte aligned target under an rkey with
 * REMOTE_ATOMIC, executed with the CPU's atomic instructions, so that it
 * is atomic against every other atomic on it: other QPs and devices (their
 * lcores) and the application's own __atomic operations.  The original
 * value goes back in the ATOMIC ACKNOWLEDGE and into the replay cache.
 * Every check comes first, the room for the response too (a peer beyond
 * its max_rd_atomic gets "invalid request"): once executed, the response
 * is owed.
 */
enum rp_resp_res
rp_resp_atomic(struct rp_qp *qp, const struct rp_pkt *pkt)
{
	uint64_t va = rp_pkt_atmeth_va(pkt);
	enum rp_resp_res res;
	struct rp_atom_res *ar;
	struct rp_mr *mr;
	uint64_t orig;
	int ret;

	res = resp_target8(qp, rp_pkt_atmeth_rkey(pkt), va,
			   IBV_ACCESS_REMOTE_ATOMIC, &mr);
	if (res != RP_RESP_OK)
		return res;
	if (pkt->opcode == RP_OP_CMP_SWAP)
		ret = rp_mem_atomic(qp->dev, mr, va, true,
				    rp_pkt_atmeth_comp(pkt),
				    rp_pkt_atmeth_swap_add(pkt), &orig);
	else
		ret = rp_mem_atomic(qp->dev, mr, va, false,
				    rp_pkt_atmeth_swap_add(pkt), 0, &orig);
	if (ret != 0)
		return resp_mem_res(ret);
	ar = &qp->atom[qp->resp.atom_next++ & (qp->rd_size - 1)];
	ar->psn = pkt->psn;
	ar->orig = orig;
	ar->valid = true;
	qp->resp.msn++;
	return resp_answer1(qp, pkt, false, true, orig);
}

/*
 * Store 8 bytes at va as one write: a compare-and-swap until the value it
 * replaces is the one it compared with (rp_mem_atomic() is the engine's
 * one atomic access to registered memory, here or in an attached process).
 */
static int
resp_store8(struct rp_qp *qp, struct rp_mr *mr, uint64_t va, uint64_t val)
{
	uint64_t expect = 0, orig;
	int ret;

	for (;;) {
		ret = rp_mem_atomic(qp->dev, mr, va, true, expect, val, &orig);
		if (ret != 0 || orig == expect)
			return ret;
		expect = orig;
	}
}

/*
 * ATOMIC WRITE (IBTA 1.5): 8 bytes stored whole at an 8-byte aligned
 * target under an rkey with REMOTE_WRITE, answered by an empty READ
 * response ONLY queued with the READs' (as rxe answers it), so it keeps
 * their order.  Misaligned: NAK invalid request; no rights: NAK remote
 * access error (rxe_resp.c's atomic_write_reply and check_rkey).
 */
enum rp_resp_res
rp_resp_atomic_write(struct rp_qp *qp, const struct rp_pkt *pkt, bool dup)
{
	uint64_t va = rp_pkt_reth_va(pkt);
	enum rp_resp_res res;
	struct rp_mr *mr;
	uint64_t val;
	int ret;

	if (dup)	/* done already: answered again, never written again */
		goto answer;
	if (rp_pkt_reth_len(pkt) != sizeof(val) || pkt->paylen != sizeof(val))
		return RP_RESP_ERR_INV_REQ;
	res = resp_target8(qp, rp_pkt_reth_rkey(pkt), va,
			   IBV_ACCESS_REMOTE_WRITE, &mr);
	if (res != RP_RESP_OK)
		return res;
	memcpy(&val, rp_pkt_payload(pkt), sizeof(val));
	ret = resp_store8(qp, mr, va, val);
	if (ret != 0)
		return resp_mem_res(ret);
	qp->resp.msn++;
answer:
	if (qp->rd == NULL)
		return RP_RESP_DROP;
	return resp_answer1(qp, pkt, dup, false, 0);
}

/*
 * A duplicate atomic: answered again from the replay cache, never
 * executed again (IBTA 9.7.5.3).  One no longer in the cache is dropped
 * (the requester, which completed it, no longer waits for it).
 */
void
rp_resp_atomic_dup(struct rp_qp *qp, const struct rp_pkt *pkt)
{
	if (qp->atom == NULL)
		return;
	for (uint32_t i = 0; i < qp->rd_size; i++) {
		const struct rp_atom_res *ar = &qp->atom[i];

		if (ar->valid && ar->psn == pkt->psn) {
			(void)resp_answer1(qp, pkt, true, true, ar->orig);
			return;
		}
	}
	RP_QP_LOG(rp_logtype_resp, DEBUG, qp->qpn,
		  "duplicate atomic psn %u: no longer cached, dropped",
		  pkt->psn);
}

/*
 * Send up to a budget of owed READ response packets and ATOMIC
 * ACKNOWLEDGEs, then an owed ACK or NAK.  Busy if any.  Nothing leaves
 * before the peer's MAC is known.  In the error state only an owed NAK
 * still goes (the one that tells the peer why), responses never.
 */
bool
rp_resp_step(struct rp_qp *qp)
{
	uint32_t budget = RP_RD_BUDGET;
	bool reads, busy = false;
	int ret;

	if (qp->type != IBV_QPT_RC)
		return false;
	/* the NAK held in this pass (rp_sr.c) goes before all else */
	if (unlikely(qp->resp.nak_held != RP_NAK_HELD_NONE)) {
		rp_sr_nak_flush(qp);
		busy = true;
	}
	reads = !qp->flushing && qp->resp.rd_tail != qp->resp.rd_head;
	if ((!reads && !qp->resp.ack_owed) || !rp_xmit_ready(qp))
		return busy;
	/* An ACK that waited for the MAC, not for the READs queued after
	 * it, goes before their responses: PSN order. */
	if (reads && qp->resp.ack_owed && rp_tx_room(qp->dev) &&
	    rp_psn_diff(qp->resp.ack_psn,
			qp->rd[qp->resp.rd_tail & (qp->rd_size - 1)].psn) < 0) {
		rp_resp_send_ack(qp, qp->resp.ack_syn, qp->resp.ack_psn);
		busy = true;
	}
	while (reads && budget > 0 && qp->resp.rd_tail != qp->resp.rd_head &&
	       rp_tx_room(qp->dev)) {
		struct rp_rd_resp *rd =
			&qp->rd[qp->resp.rd_tail & (qp->rd_size - 1)];
		bool first = rd->psn == rd->first_psn;
		bool last = rd->npkts_left == 1;
		uint32_t chunk = RTE_MIN(qp->mtu, rd->left);
		const uint8_t *direct = NULL;
		struct rte_mbuf *m;
		uint8_t *bth;
		uint8_t op;

		if (!rd->valid) {	/* voided: asked for again from before */
			resp_rd_pop(qp, rd);
			continue;
		}
		op = rd->atomic ? RP_OP_ATOMIC_ACK :
			first && last ? RP_OP_READ_RESP_ONLY :
			first ? RP_OP_READ_RESP_FIRST :
			last ? RP_OP_READ_RESP_LAST : RP_OP_READ_RESP_MIDDLE;
		/* The MR as it is now, for every packet (as a WRITE's). */
		if (chunk != 0)
			rd->mr = rp_rkey_lookup(qp, rd->key, rd->va, chunk,
						IBV_ACCESS_REMOTE_READ);
		if (chunk != 0 && rd->mr == NULL) {
			/* Deregistered under the READ: stop answering it. */
			rp_resp_send_ack(qp, RP_AETH_NAK_REM_ACCESS, rd->psn);
			resp_rd_pop(qp, rd);
			continue;
		}
		/* From the MR in place (rp_xmit_alloc_zc()): the frame reads
		 * it when it leaves, later in this pass.  Not when asked
		 * again: the memory may have changed under the first (RDMA
		 * lets its program write it), which then failed its ICRC,
		 * and a copy arrives whole. */
		if (chunk != 0 && rp_xmit_zc_ok(qp, chunk, true) &&
		    !rd->replay && !rd->sel &&
		    rd->mr->mem == 0 && !rd->mr->implicit)
			direct = rd->mr->addr + (rd->va - rd->mr->iova);
		m = direct != NULL ?
			rp_xmit_alloc_zc(qp, &qp->addr, qp->dest_qpn, op, 0, 0,
					 rd->psn, direct, chunk, &bth) :
			rp_xmit_alloc(qp, &qp->addr, qp->dest_qpn, op, 0, 0,
				      rd->psn, chunk, &bth);
		if (m == NULL)
			break;
		if (rp_opcode[op].mask & RP_M_AETH)
			rp_aeth_set(rp_xmit_hdr(bth, op, RP_HDR_AETH),
				    RP_AETH_CREDIT_INVALID, qp->resp.msn);
		/* "I keep what I owe when asked for a run alone"
		 * (rp_sr_read.c), to a requester that takes selective NAKs */
		if (qp->sr != NULL && qp->resp.peer_sr && !rd->atomic)
			rp_bth_set_sr(bth, RP_SR_ON);
		if (rd->atomic)
			rp_atmack_set(rp_xmit_hdr(bth, op, RP_HDR_ATMACK),
				      rd->orig);
		ret = chunk == 0 || direct != NULL ? 0 :
			rp_mem_read(qp->dev, rd->mr, rd->va,
				    rp_xmit_hdr(bth, op, RP_HDR_PAYLOAD), chunk,
				    1ull << 62 | (uint64_t)qp->qpn << 32 |
				    (uint64_t)rd->first_psn << 8, rd->left);
		if (ret == -ESRCH) {
			/* The process died: silence (RP_RESP_GONE). */
			rte_pktmbuf_free(m);
			rp_qp_error(qp, IBV_WC_WR_FLUSH_ERR);
			return true;
		}
		if (ret != 0) {
			/* Memory an attached process no longer has mapped. */
			rte_pktmbuf_free(m);
			rp_resp_send_ack(qp, RP_AETH_NAK_REM_ACCESS, rd->psn);
			resp_rd_pop(qp, rd);
			continue;
		}
		rp_xmit_send(qp, &qp->addr, m);
		rd->va += chunk;
		rd->left -= chunk;
		rd->psn = rp_psn_add(rd->psn, 1);
		rd->npkts_left--;
		if (rd->npkts_left == 0)
			resp_rd_pop(qp, rd);
		budget--;
		busy = true;
	}
	if (rp_resp_ack_due(qp) && rp_tx_room(qp->dev)) {
		rp_resp_send_ack(qp, qp->resp.ack_syn, qp->resp.ack_psn);
		busy = true;
	}
	return busy;
}

