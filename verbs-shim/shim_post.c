/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Posting work requests: the producer side of the SQ and RQ rings.
 *
 * One producer per ring: a per-queue spinlock serialises application
 * threads (the engine never takes it).  Each WQE is checked before it is
 * written into its slot, the slots are filled with plain stores, and the
 * producer index is release-stored once per call (or per ibv_wr_*() batch)
 * before the doorbell.  A full ring fails with ENOMEM; the requests before
 * the failing one stay posted, as ibv_post_send(3) says.
 *
 * The engine frees slots by release-storing its consumer index once it has
 * copied them out (for the SQ, once the WQE is retired); the shim reloads
 * that index only when the ring looks full.
 */

#include <errno.h>
#include <stdint.h>
#include <string.h>

#include <rte_common.h>

#include "shim.h"

#define SHIM_MAX_MSG	(1u << 31)	/* port max_msg_sz */

#define SHIM_QPT_BIT(t)	(1u << (t))
#define SHIM_RC		SHIM_QPT_BIT(IBV_QPT_RC)
#define SHIM_UC		SHIM_QPT_BIT(IBV_QPT_UC)
#define SHIM_UD		SHIM_QPT_BIT(IBV_QPT_UD)

/* The QP types each work request opcode is valid on. */
static const uint32_t shim_wr_qpts[] = {
	[IBV_WR_RDMA_WRITE] = SHIM_RC | SHIM_UC,
	[IBV_WR_RDMA_WRITE_WITH_IMM] = SHIM_RC | SHIM_UC,
	[IBV_WR_SEND] = SHIM_RC | SHIM_UC | SHIM_UD,
	[IBV_WR_SEND_WITH_IMM] = SHIM_RC | SHIM_UC | SHIM_UD,
	[IBV_WR_RDMA_READ] = SHIM_RC,
	[IBV_WR_ATOMIC_CMP_AND_SWP] = SHIM_RC,
	[IBV_WR_ATOMIC_FETCH_AND_ADD] = SHIM_RC,
	[IBV_WR_SEND_WITH_INV] = SHIM_RC,
	[IBV_WR_LOCAL_INV] = SHIM_RC | SHIM_UC,
	[IBV_WR_BIND_MW] = SHIM_RC | SHIM_UC,
	[IBV_WR_ATOMIC_WRITE] = SHIM_RC,
	/* TSO, DRIVER1, FLUSH: none */
};

static inline bool
shim_wr_valid(enum ibv_wr_opcode opcode, enum ibv_qp_type qpt)
{
	return (unsigned int)opcode < RTE_DIM(shim_wr_qpts) &&
	       (unsigned int)qpt < 32 &&
	       (shim_wr_qpts[opcode] & SHIM_QPT_BIT(qpt)) != 0;
}

/* The IBV_QP_EX_WITH_* bit that lets ibv_wr_*() build `opcode` (the same
 * bit number up to TSO; ATOMIC_WRITE's is 12, its opcode 15). */
static inline uint64_t
shim_wr_send_op(enum ibv_wr_opcode opcode)
{
	return opcode == IBV_WR_ATOMIC_WRITE ?
		(uint64_t)IBV_QP_EX_WITH_ATOMIC_WRITE : UINT64_C(1) << opcode;
}

static inline bool
shim_wr_is_atomic(enum ibv_wr_opcode opcode)
{
	return opcode == IBV_WR_ATOMIC_CMP_AND_SWP ||
	       opcode == IBV_WR_ATOMIC_FETCH_AND_ADD;
}

/* Inline data is for requests that carry a payload out: SEND and WRITE. */
static inline bool
shim_wr_inline_ok(enum ibv_wr_opcode opcode)
{
	return opcode != IBV_WR_RDMA_READ && !shim_wr_is_atomic(opcode) &&
	       opcode != IBV_WR_BIND_MW && opcode != IBV_WR_LOCAL_INV;
}

/*
 * The fields of a BIND_MW WQE (rp_abi.h).  The new rkey must keep the
 * window's index (only its low 8 bits are the consumer's); a type 1
 * window is bound only through ibv_bind_mw() (`type1`).
 */
static int
shim_bind_put(const struct shim_qp *qp, struct rp_send_wqe *h,
	      const struct ibv_mw *mw, uint32_t rkey,
	      const struct ibv_mw_bind_info *bi, bool type1)
{
	if (mw == NULL || mw->context != qp->qpx.qp_base.context ||
	    (mw->type == IBV_MW_TYPE_1 && !type1) ||
	    (rkey >> 8) != (mw->rkey >> 8) ||
	    (bi->mr != NULL && bi->mr->context != mw->context) ||
	    (bi->mr == NULL && (bi->addr != 0 || bi->length != 0)))
		return EINVAL;
	h->rkey = rkey;
	h->imm_data = bi->mr != NULL ? bi->mr->lkey : 0;
	h->remote_addr = bi->addr;
	h->compare_add = bi->length;
	h->swap = bi->mw_access_flags;
	h->num_sge = 0;
	h->length = 0;
	return 0;
}

static inline void *
shim_wq_slot(const struct shim_wq *wq, uint32_t idx)
{
	return wq->ent + (size_t)(idx & (wq->size - 1)) * wq->stride;
}

/* Room for one more entry; reload the engine's index only when full. */
static inline bool
shim_wq_room(struct shim_wq *wq)
{
	if (wq->prod - wq->cons < wq->size)
		return true;
	/* acquire: pairs with the engine's release of cons after its copy */
	wq->cons = rp_load_acquire(&wq->hdr->cons);
	/* A bogus index only ever reads as "full". */
	return wq->prod - wq->cons < wq->size;
}

/* Publish entries [.., prod) to the engine. */
static inline void
shim_wq_publish(struct shim_wq *wq)
{
	/* release: the WQEs are written before the engine sees prod */
	rp_store_release(&wq->hdr->prod, wq->prod);
	/* release: prod is published before the engine sees the bit */
	if (wq->bell != NULL)
		__atomic_fetch_or(wq->bell, wq->bell_bit, __ATOMIC_RELEASE);
}

static inline uint8_t
shim_wqe_flags(const struct shim_qp *qp, unsigned int send_flags)
{
	uint8_t f = 0;

	if ((send_flags & IBV_SEND_SIGNALED) || qp->sq_sig_all)
		f |= RP_WQE_SIGNALED;
	if (send_flags & IBV_SEND_SOLICITED)
		f |= RP_WQE_SOLICITED;
	if (send_flags & IBV_SEND_INLINE)
		f |= RP_WQE_INLINE;
	if (send_flags & IBV_SEND_FENCE)
		f |= RP_WQE_FENCE;
	return f;
}

static inline void
shim_sge_put(struct rp_sge *dst, const struct ibv_sge *src)
{
	dst->addr = src->addr;
	dst->length = src->length;
	dst->lkey = src->lkey;
}

/* ----------------------------------------------------------- post send */

/*
 * Check a send request and write it into a free slot.
 * @return 0, or a positive errno (the slot may be half written: it is not
 *   published)
 */
static int
shim_send_wqe_put(struct shim_qp *qp, const struct ibv_send_wr *wr,
		  struct rp_send_wqe *wqe, bool type1)
{
	const enum ibv_qp_type qpt = qp->qpx.qp_base.qp_type;
	const bool inl = (wr->send_flags & IBV_SEND_INLINE) != 0;
	uint64_t length = 0;
	int i;

	if (!shim_wr_valid(wr->opcode, qpt) || wr->num_sge < 0)
		return EINVAL;
	for (i = 0; i < wr->num_sge; i++)
		length += wr->sg_list[i].length;
	if (length > SHIM_MAX_MSG)
		return EINVAL;
	if (inl) {
		if (!shim_wr_inline_ok(wr->opcode) ||
		    length > qp->cap.max_inline_data)
			return EINVAL;
	} else if ((uint32_t)wr->num_sge > qp->cap.max_send_sge) {
		return EINVAL;
	}

	/* Built in the slot: a copy of a header built on the stack loads
	 * 16 bytes over the narrow stores just made, which the CPU cannot
	 * forward (a stall per load: a third of this function's samples). */
	memset(wqe, 0, sizeof(*wqe));
	wqe->wr_id = wr->wr_id;
	wqe->opcode = (uint8_t)wr->opcode;
	wqe->flags = shim_wqe_flags(qp, wr->send_flags);
	wqe->num_sge = inl ? 0 : (uint8_t)wr->num_sge;
	wqe->imm_data = wr->imm_data;	/* or invalidate_rkey: same word */
	wqe->length = (uint32_t)length;

	switch (wr->opcode) {
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
	case IBV_WR_RDMA_READ:
		wqe->remote_addr = wr->wr.rdma.remote_addr;
		wqe->rkey = wr->wr.rdma.rkey;
		break;
	case IBV_WR_ATOMIC_CMP_AND_SWP:
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		/* 8 bytes come back into the SGEs (at least 8, as rxe).  A
		 * misaligned remote_addr is the responder's to refuse (NAK,
		 * IBV_WC_REM_INV_REQ_ERR), as hardware does. */
		if (length < 8)
			return EINVAL;
		wqe->remote_addr = wr->wr.atomic.remote_addr;
		wqe->rkey = wr->wr.atomic.rkey;
		wqe->compare_add = wr->wr.atomic.compare_add;
		wqe->swap = wr->wr.atomic.swap;
		break;
	case IBV_WR_ATOMIC_WRITE:
		/* Exactly its 8 bytes, from the SGEs or inline, as
		 * ibv_wr_atomic_write() gives them; alignment is the
		 * responder's to check (NAK, IBV_WC_REM_INV_REQ_ERR). */
		if (length != 8)
			return EINVAL;
		wqe->remote_addr = wr->wr.rdma.remote_addr;
		wqe->rkey = wr->wr.rdma.rkey;
		break;
	case IBV_WR_LOCAL_INV:
		wqe->num_sge = 0;	/* imm_data: the rkey (union) */
		wqe->length = 0;
		break;
	case IBV_WR_BIND_MW:
		if (inl || shim_bind_put(qp, wqe, wr->bind_mw.mw,
					 wr->bind_mw.rkey,
					 &wr->bind_mw.bind_info, type1) != 0)
			return EINVAL;
		break;
	default:
		break;
	}
	if (qpt == IBV_QPT_UD) {
		if (wr->wr.ud.ah == NULL ||
		    wr->wr.ud.ah->context != qp->qpx.qp_base.context)
			return EINVAL;
		wqe->ah = shim_ah(wr->wr.ud.ah)->ahn;
		wqe->remote_qpn = wr->wr.ud.remote_qpn;
		wqe->remote_qkey = wr->wr.ud.remote_qkey;
	}

	if (inl) {
		uint8_t *dst = (uint8_t *)(wqe + 1);

		/* An empty SGE may have no address (UCX posts one). */
		for (i = 0; i < wr->num_sge; i++) {
			if (wr->sg_list[i].length == 0)
				continue;
			memcpy(dst, (const void *)(uintptr_t)wr->sg_list[i].addr,
			       wr->sg_list[i].length);
			dst += wr->sg_list[i].length;
		}
	} else {
		struct rp_sge *sge = (struct rp_sge *)(wqe + 1);
		/* read back: LOCAL_INV and binds carry none */
		const int nsge = wqe->num_sge;

		for (i = 0; i < nsge; i++)
			shim_sge_put(&sge[i], &wr->sg_list[i]);
	}
	return 0;
}

/* ibv_post_send(); `type1`: ibv_bind_mw() posts a type 1 window's bind. */
int
shim_post_send_wr(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
		  struct ibv_send_wr **bad_wr, bool type1)
{
	struct shim_qp *qp = shim_qp(ibqp);
	struct shim_wq *sq = &qp->sq;
	bool posted;
	uint32_t first;
	int ret = 0;

	shim_lock(&sq->lock);
	first = sq->prod;
	/* RTS or later; in ERR the engine flushes what is posted. */
	if (ibqp->state < IBV_QPS_RTS)
		ret = EINVAL;
	for (; ret == 0 && wr != NULL; wr = wr->next) {
		if (!shim_wq_room(sq)) {
			ret = ENOMEM;
			break;
		}
		ret = shim_send_wqe_put(qp, wr, shim_wq_slot(sq, sq->prod),
					type1);
		if (ret != 0)
			break;
		sq->prod++;
	}
	posted = sq->prod != first;
	if (posted)
		shim_wq_publish(sq);
	shim_unlock(&sq->lock);

	if (posted)
		shim_doorbell(qp->ctx->dev);
	if (ret != 0)
		*bad_wr = wr;
	return ret;
}

int
shim_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
	       struct ibv_send_wr **bad_wr)
{
	return shim_post_send_wr(ibqp, wr, bad_wr, false);
}

/* ----------------------------------------------------------- post recv */

/*
 * Post receive WQEs to a receive ring (a QP's RQ or an SRQ): each checked,
 * written, then one release of prod.  The engine takes them as messages
 * come: only a QP in ERR, which flushes them, asks for the doorbell
 * (rp_wq_hdr.post_wake; an SRQ never does).  The requests before a
 * failing one stay posted, as ibv_post_recv(3) says.
 */
int
shim_wq_post_recv(struct shim_wq *rq, uint32_t max_sge, unsigned int dev,
		  struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr)
{
	bool posted;
	uint32_t first;
	int ret = 0;
	int i;

	shim_lock(&rq->lock);
	first = rq->prod;
	for (; wr != NULL; wr = wr->next) {
		struct rp_recv_wqe *wqe;
		struct rp_sge *sge;

		if (wr->num_sge < 0 || (uint32_t)wr->num_sge > max_sge) {
			ret = EINVAL;
			break;
		}
		if (!shim_wq_room(rq)) {
			ret = ENOMEM;
			break;
		}
		wqe = shim_wq_slot(rq, rq->prod);
		wqe->wr_id = wr->wr_id;
		wqe->num_sge = (uint32_t)wr->num_sge;
		wqe->rsvd = 0;
		sge = (struct rp_sge *)(wqe + 1);
		for (i = 0; i < wr->num_sge; i++)
			shim_sge_put(&sge[i], &wr->sg_list[i]);
		rq->prod++;
	}
	posted = rq->prod != first;
	/* release: the WQEs are written before the engine sees prod */
	if (posted)
		rp_store_release(&rq->hdr->prod, rq->prod);
	shim_unlock(&rq->lock);

	/*
	 * W1: pairs with W0 in rp_qp_error().  Our store of prod, the fence,
	 * our load of post_wake: either the engine's flush finds these
	 * receives or we ring.
	 */
	if (posted) {
		rp_fence_seq_cst();
		if (rp_load_relaxed(&rq->hdr->post_wake) != 0) {
			if (rq->bell != NULL)
				__atomic_fetch_or(rq->bell, rq->bell_bit,
						  __ATOMIC_RELEASE);
			shim_doorbell(dev);
		}
	}
	if (ret != 0)
		*bad_wr = wr;
	return ret;
}

int
shim_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr,
	       struct ibv_recv_wr **bad_wr)
{
	struct shim_qp *qp = shim_qp(ibqp);

	/* A QP on an SRQ has no receive queue of its own. */
	if (ibqp->state == IBV_QPS_RESET || ibqp->srq != NULL) {
		*bad_wr = wr;
		return EINVAL;
	}
	return shim_wq_post_recv(&qp->rq, qp->cap.max_recv_sge, qp->ctx->dev,
				 wr, bad_wr);
}

/* ------------------------------------------- ibv_wr_*(): struct ibv_qp_ex */

/*
 * A batch runs from wr_start() to wr_complete() or wr_abort() under the SQ
 * lock.  Each builder claims a slot; the setters fill the current one.  The
 * first error is remembered, and wr_complete() then posts nothing and
 * returns it (mlx5 behaves the same way).
 */

static inline void
shim_wr_fail(struct shim_qp *qp, int err)
{
	if (qp->wr_err == 0)
		qp->wr_err = err;
	qp->wr_cur = NULL;
}

/* Checks a WQE needs once all its setters have run. */
static void
shim_wr_finish(struct shim_qp *qp)
{
	struct rp_send_wqe *wqe = qp->wr_cur;

	if (wqe == NULL)
		return;
	if (shim_wr_is_atomic((enum ibv_wr_opcode)wqe->opcode) &&
	    wqe->length < 8)
		shim_wr_fail(qp, EINVAL);
	else if (qp->qpx.qp_base.qp_type == IBV_QPT_UD && !qp->wr_ud_addr)
		shim_wr_fail(qp, EINVAL);	/* no wr_set_ud_addr() */
	qp->wr_cur = NULL;
}

static void
shim_wr_start(struct ibv_qp_ex *qpx)
{
	struct shim_qp *qp = shim_qpx(qpx);

	shim_lock(&qp->sq.lock);
	qp->wr_first = qp->sq.prod;
	qp->wr_err = 0;
	qp->wr_cur = NULL;
	if (qpx->qp_base.state < IBV_QPS_RTS)
		qp->wr_err = EINVAL;
}

static struct rp_send_wqe *
shim_wr_begin(struct shim_qp *qp, enum ibv_wr_opcode opcode)
{
	struct shim_wq *sq = &qp->sq;
	struct rp_send_wqe *wqe;

	shim_wr_finish(qp);
	if (qp->wr_err != 0)
		return NULL;
	if (!shim_wr_valid(opcode, qp->qpx.qp_base.qp_type) ||
	    !(qp->send_ops_flags & shim_wr_send_op(opcode))) {
		shim_wr_fail(qp, EINVAL);
		return NULL;
	}
	if (!shim_wq_room(sq)) {
		shim_wr_fail(qp, ENOMEM);
		return NULL;
	}
	wqe = shim_wq_slot(sq, sq->prod);
	memset(wqe, 0, sizeof(*wqe));
	wqe->wr_id = qp->qpx.wr_id;
	wqe->opcode = (uint8_t)opcode;
	/* INLINE is set by the inline setters, not by wr_flags. */
	wqe->flags = shim_wqe_flags(qp, qp->qpx.wr_flags & ~IBV_SEND_INLINE);
	sq->prod++;
	qp->wr_cur = wqe;
	qp->wr_ud_addr = false;
	return wqe;
}

static void
shim_wr_send(struct ibv_qp_ex *qpx)
{
	shim_wr_begin(shim_qpx(qpx), IBV_WR_SEND);
}

static void
shim_wr_send_imm(struct ibv_qp_ex *qpx, __be32 imm_data)
{
	struct rp_send_wqe *wqe = shim_wr_begin(shim_qpx(qpx),
						IBV_WR_SEND_WITH_IMM);

	if (wqe != NULL)
		wqe->imm_data = imm_data;
}

static void
shim_wr_send_inv(struct ibv_qp_ex *qpx, uint32_t invalidate_rkey)
{
	struct rp_send_wqe *wqe = shim_wr_begin(shim_qpx(qpx),
						IBV_WR_SEND_WITH_INV);

	if (wqe != NULL)
		wqe->imm_data = invalidate_rkey;
}

static void
shim_wr_rdma(struct ibv_qp_ex *qpx, enum ibv_wr_opcode opcode, uint32_t rkey,
	     uint64_t remote_addr, __be32 imm_data)
{
	struct rp_send_wqe *wqe = shim_wr_begin(shim_qpx(qpx), opcode);

	if (wqe == NULL)
		return;
	wqe->rkey = rkey;
	wqe->remote_addr = remote_addr;
	wqe->imm_data = imm_data;
}

static void
shim_wr_rdma_write(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t remote_addr)
{
	shim_wr_rdma(qpx, IBV_WR_RDMA_WRITE, rkey, remote_addr, 0);
}

static void
shim_wr_rdma_write_imm(struct ibv_qp_ex *qpx, uint32_t rkey,
		       uint64_t remote_addr, __be32 imm_data)
{
	shim_wr_rdma(qpx, IBV_WR_RDMA_WRITE_WITH_IMM, rkey, remote_addr,
		     imm_data);
}

static void
shim_wr_rdma_read(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t remote_addr)
{
	shim_wr_rdma(qpx, IBV_WR_RDMA_READ, rkey, remote_addr, 0);
}

static void
shim_wr_atomic(struct ibv_qp_ex *qpx, enum ibv_wr_opcode opcode,
	       uint32_t rkey, uint64_t remote_addr, uint64_t compare_add,
	       uint64_t swap)
{
	struct rp_send_wqe *wqe = shim_wr_begin(shim_qpx(qpx), opcode);

	if (wqe == NULL)
		return;
	wqe->rkey = rkey;
	wqe->remote_addr = remote_addr;
	wqe->compare_add = compare_add;
	wqe->swap = swap;
}

static void
shim_wr_atomic_cmp_swp(struct ibv_qp_ex *qpx, uint32_t rkey,
		       uint64_t remote_addr, uint64_t compare, uint64_t swap)
{
	shim_wr_atomic(qpx, IBV_WR_ATOMIC_CMP_AND_SWP, rkey, remote_addr,
		       compare, swap);
}

static void
shim_wr_atomic_fetch_add(struct ibv_qp_ex *qpx, uint32_t rkey,
			 uint64_t remote_addr, uint64_t add)
{
	shim_wr_atomic(qpx, IBV_WR_ATOMIC_FETCH_AND_ADD, rkey, remote_addr,
		       add, 0);
}

/* Builders rocepmd does not support: the batch fails at wr_complete(). */
static void
shim_wr_unsupported(struct ibv_qp_ex *qpx)
{
	struct shim_qp *qp = shim_qpx(qpx);

	shim_wr_finish(qp);
	shim_wr_fail(qp, EOPNOTSUPP);
}

/* A type 2 window (a type 1 is bound through ibv_bind_mw()). */
static void
shim_wr_bind_mw(struct ibv_qp_ex *qpx, struct ibv_mw *mw, uint32_t rkey,
		const struct ibv_mw_bind_info *bind_info)
{
	struct shim_qp *qp = shim_qpx(qpx);
	struct rp_send_wqe *wqe = shim_wr_begin(qp, IBV_WR_BIND_MW);

	if (wqe != NULL &&
	    shim_bind_put(qp, wqe, mw, rkey, bind_info, false) != 0)
		shim_wr_fail(qp, EINVAL);
}

static void
shim_wr_local_inv(struct ibv_qp_ex *qpx, uint32_t invalidate_rkey)
{
	struct rp_send_wqe *wqe = shim_wr_begin(shim_qpx(qpx),
						IBV_WR_LOCAL_INV);

	if (wqe != NULL)
		wqe->imm_data = invalidate_rkey;
}

static void
shim_wr_send_tso(struct ibv_qp_ex *qpx, void *hdr, uint16_t hdr_sz,
		 uint16_t mss)
{
	RTE_SET_USED(hdr);
	RTE_SET_USED(hdr_sz);
	RTE_SET_USED(mss);
	shim_wr_unsupported(qpx);
}

static void
shim_wr_set_xrc_srqn(struct ibv_qp_ex *qpx, uint32_t remote_srqn)
{
	RTE_SET_USED(remote_srqn);
	shim_wr_unsupported(qpx);
}

/* The 8 bytes at atomic_wr, copied now (as rxe's provider does): they
 * travel inline, whatever setters follow. */
static void
shim_wr_atomic_write(struct ibv_qp_ex *qpx, uint32_t rkey,
		     uint64_t remote_addr, const void *atomic_wr)
{
	struct shim_qp *qp = shim_qpx(qpx);
	struct rp_send_wqe *wqe = shim_wr_begin(qp, IBV_WR_ATOMIC_WRITE);

	if (wqe == NULL)
		return;
	if (atomic_wr == NULL) {
		shim_wr_fail(qp, EINVAL);
		return;
	}
	wqe->rkey = rkey;
	wqe->remote_addr = remote_addr;
	memcpy(wqe + 1, atomic_wr, 8);
	wqe->num_sge = 0;
	wqe->length = 8;
	wqe->flags |= RP_WQE_INLINE;
}

static void
shim_wr_set_ud_addr(struct ibv_qp_ex *qpx, struct ibv_ah *ah,
		    uint32_t remote_qpn, uint32_t remote_qkey)
{
	struct shim_qp *qp = shim_qpx(qpx);
	struct rp_send_wqe *wqe = qp->wr_cur;

	if (wqe == NULL)
		return;
	if (qpx->qp_base.qp_type != IBV_QPT_UD || ah == NULL ||
	    ah->context != qpx->qp_base.context) {
		shim_wr_fail(qp, EINVAL);
		return;
	}
	wqe->ah = shim_ah(ah)->ahn;
	wqe->remote_qpn = remote_qpn;
	wqe->remote_qkey = remote_qkey;
	qp->wr_ud_addr = true;
}

static void
shim_wr_set_sge_list(struct ibv_qp_ex *qpx, size_t num_sge,
		     const struct ibv_sge *sg_list)
{
	struct shim_qp *qp = shim_qpx(qpx);
	struct rp_send_wqe *wqe = qp->wr_cur;
	struct rp_sge *sge;
	uint64_t length = 0;
	size_t i;

	if (wqe == NULL || wqe->opcode == IBV_WR_ATOMIC_WRITE)
		return;		/* its 8 bytes came with it */
	if (num_sge > qp->cap.max_send_sge) {
		shim_wr_fail(qp, EINVAL);
		return;
	}
	sge = (struct rp_sge *)(wqe + 1);
	for (i = 0; i < num_sge; i++) {
		shim_sge_put(&sge[i], &sg_list[i]);
		length += sg_list[i].length;
	}
	if (length > SHIM_MAX_MSG) {
		shim_wr_fail(qp, EINVAL);
		return;
	}
	wqe->num_sge = (uint8_t)num_sge;
	wqe->length = (uint32_t)length;
	wqe->flags &= ~RP_WQE_INLINE;
}

static void
shim_wr_set_sge(struct ibv_qp_ex *qpx, uint32_t lkey, uint64_t addr,
		uint32_t length)
{
	const struct ibv_sge sge = {
		.addr = addr,
		.length = length,
		.lkey = lkey,
	};

	shim_wr_set_sge_list(qpx, 1, &sge);
}

static void
shim_wr_set_inline_data_list(struct ibv_qp_ex *qpx, size_t num_buf,
			     const struct ibv_data_buf *buf_list)
{
	struct shim_qp *qp = shim_qpx(qpx);
	struct rp_send_wqe *wqe = qp->wr_cur;
	uint64_t length = 0;
	uint8_t *dst;
	size_t i;

	if (wqe == NULL || wqe->opcode == IBV_WR_ATOMIC_WRITE)
		return;		/* its 8 bytes came with it */
	for (i = 0; i < num_buf; i++)
		length += buf_list[i].length;
	if (!shim_wr_inline_ok((enum ibv_wr_opcode)wqe->opcode) ||
	    length > qp->cap.max_inline_data) {
		shim_wr_fail(qp, EINVAL);
		return;
	}
	dst = (uint8_t *)(wqe + 1);
	for (i = 0; i < num_buf; i++) {
		if (buf_list[i].length == 0)
			continue;
		memcpy(dst, buf_list[i].addr, buf_list[i].length);
		dst += buf_list[i].length;
	}
	wqe->num_sge = 0;
	wqe->length = (uint32_t)length;
	wqe->flags |= RP_WQE_INLINE;
}

static void
shim_wr_set_inline_data(struct ibv_qp_ex *qpx, void *addr, size_t length)
{
	const struct ibv_data_buf buf = {
		.addr = addr,
		.length = length,
	};

	shim_wr_set_inline_data_list(qpx, 1, &buf);
}

static int
shim_wr_complete(struct ibv_qp_ex *qpx)
{
	struct shim_qp *qp = shim_qpx(qpx);
	struct shim_wq *sq = &qp->sq;
	bool posted = false;
	int ret;

	shim_wr_finish(qp);
	ret = qp->wr_err;
	if (ret != 0) {
		sq->prod = qp->wr_first;	/* nothing was published */
	} else if (sq->prod != qp->wr_first) {
		shim_wq_publish(sq);
		posted = true;
	}
	shim_unlock(&sq->lock);
	if (posted)
		shim_doorbell(qp->ctx->dev);
	return ret;
}

static void
shim_wr_abort(struct ibv_qp_ex *qpx)
{
	struct shim_qp *qp = shim_qpx(qpx);

	qp->sq.prod = qp->wr_first;
	qp->wr_cur = NULL;
	shim_unlock(&qp->sq.lock);
}

/* Install the ibv_wr_*() builders of a QP created with send_ops_flags. */
void
shim_qpx_ops_set(struct shim_qp *qp)
{
	struct ibv_qp_ex *x = &qp->qpx;

	x->comp_mask = 0;
	x->wr_atomic_cmp_swp = shim_wr_atomic_cmp_swp;
	x->wr_atomic_fetch_add = shim_wr_atomic_fetch_add;
	x->wr_bind_mw = shim_wr_bind_mw;
	x->wr_local_inv = shim_wr_local_inv;
	x->wr_rdma_read = shim_wr_rdma_read;
	x->wr_rdma_write = shim_wr_rdma_write;
	x->wr_rdma_write_imm = shim_wr_rdma_write_imm;
	x->wr_send = shim_wr_send;
	x->wr_send_imm = shim_wr_send_imm;
	x->wr_send_inv = shim_wr_send_inv;
	x->wr_send_tso = shim_wr_send_tso;
	x->wr_set_ud_addr = shim_wr_set_ud_addr;
	x->wr_set_xrc_srqn = shim_wr_set_xrc_srqn;
	x->wr_set_inline_data = shim_wr_set_inline_data;
	x->wr_set_inline_data_list = shim_wr_set_inline_data_list;
	x->wr_set_sge = shim_wr_set_sge;
	x->wr_set_sge_list = shim_wr_set_sge_list;
	x->wr_start = shim_wr_start;
	x->wr_complete = shim_wr_complete;
	x->wr_abort = shim_wr_abort;
	x->wr_atomic_write = shim_wr_atomic_write;
}
