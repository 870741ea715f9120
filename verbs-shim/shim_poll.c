/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ibv_poll_cq(): the consumer of a CQ ring.
 *
 * The engine writes a CQE's fields, then release-stores its owner word,
 * last in the entry; the entry at free-running index i is valid when
 * owner == (i >> log2(size)) + 1.  An empty poll therefore reads one line,
 * the next CQE, and nothing else.  The consumer index is private, and
 * published once per batch so that the engine can reuse the slots.
 */

#include "shim.h"

static inline void
shim_wc_from_cqe(struct ibv_wc *wc, const struct rp_cqe *cqe)
{
	wc->wr_id = cqe->wr_id;
	wc->status = (enum ibv_wc_status)cqe->status;
	wc->opcode = (enum ibv_wc_opcode)cqe->opcode;
	wc->vendor_err = cqe->vendor_err;
	wc->byte_len = cqe->byte_len;
	wc->imm_data = cqe->imm_data;	/* or the invalidated rkey */
	wc->qp_num = cqe->qp_num;
	wc->src_qp = cqe->src_qp;
	wc->wc_flags = cqe->wc_flags;
	wc->pkey_index = cqe->pkey_index;
	wc->slid = cqe->slid;
	wc->sl = cqe->sl;
	wc->dlid_path_bits = cqe->dlid_path_bits;
}

static int
shim_cq_take(struct shim_cq *cq, int num_entries, struct ibv_wc *wc)
{
	const uint32_t mask = cq->size - 1;
	uint32_t cons;
	int n = 0;

	shim_lock(&cq->lock);
	cons = cq->cons;
	while (n < num_entries) {
		const struct rp_cqe *cqe = &cq->ring[cons & mask];

		/* acquire: pairs with the engine's release of owner */
		if (rp_load_acquire(&cqe->owner) !=
		    (cons >> cq->lap_shift) + 1)
			break;
		shim_wc_from_cqe(&wc[n], cqe);
		n++;
		cons++;
	}
	if (n > 0) {
		cq->cons = cons;
		/* release: the entries are read before the engine reuses them */
		rp_store_release(&cq->ctl->cons, cons);
	}
	shim_unlock(&cq->lock);
	return n;
}

/*
 * An empty CQ with the engine inline (config key inline_us): run a pass
 * of the engine here, then look again.  Not on an armed CQ: a program
 * polls one between ibv_req_notify_cq() and its wait for the event, and
 * the lcore is to serve it while it waits (a pass here would tell the
 * lcore to stand aside just then).
 */
static inline bool
shim_cq_assist(const struct shim_cq *cq)
{
	return shim_engine->assist != NULL &&
		(rp_load_relaxed(&cq->ctl->arm) & RP_CQ_ARM_MASK) == 0 &&
		shim_engine->assist(cq->ctx->dev);
}

int
shim_poll_cq(struct ibv_cq *ibcq, int num_entries, struct ibv_wc *wc)
{
	struct shim_cq *cq = shim_cq(ibcq);
	int n;

	if (num_entries <= 0)
		return 0;
	n = shim_cq_take(cq, num_entries, wc);
	if (n == 0 && shim_cq_assist(cq))
		n = shim_cq_take(cq, num_entries, wc);
	return n;
}

/* ------------------------------------ extended CQs: ibv_start_poll() etc. */

static inline struct shim_cq *
shim_cqx(struct ibv_cq_ex *cqx)
{
	return container_of(cqx, struct shim_cq, ibvx);
}

/* The CQE at free-running index i if the engine published it, or NULL. */
static inline const struct rp_cqe *
shim_cqe_at(const struct shim_cq *cq, uint32_t i)
{
	const struct rp_cqe *cqe = &cq->ring[i & (cq->size - 1)];

	/* acquire: pairs with the engine's release of owner */
	if (rp_load_acquire(&cqe->owner) != (i >> cq->lap_shift) + 1)
		return NULL;
	return cqe;
}

static inline void
shim_cqx_current(struct shim_cq *cq, const struct rp_cqe *cqe)
{
	cq->cur = cqe;
	cq->ibvx.status = (enum ibv_wc_status)cqe->status;
	cq->ibvx.wr_id = cqe->wr_id;
}

/*
 * The CQ lock is held from a successful start_poll to end_poll, as
 * ibv_create_cq_ex(3) allows (mlx5 does the same); a start_poll that finds
 * nothing takes nothing, and end_poll must not follow it.
 */
static int
shim_start_poll(struct ibv_cq_ex *cqx, struct ibv_poll_cq_attr *attr)
{
	struct shim_cq *cq = shim_cqx(cqx);
	const struct rp_cqe *cqe;

	if (attr->comp_mask != 0)
		return EINVAL;
	shim_lock(&cq->lock);
	cqe = shim_cqe_at(cq, cq->cons);
	if (cqe == NULL) {
		shim_unlock(&cq->lock);
		if (!shim_cq_assist(cq))
			return ENOENT;
		shim_lock(&cq->lock);
		cqe = shim_cqe_at(cq, cq->cons);
		if (cqe == NULL) {
			shim_unlock(&cq->lock);
			return ENOENT;
		}
	}
	cq->x_next = cq->cons + 1;
	shim_cqx_current(cq, cqe);
	return 0;
}

static int
shim_next_poll(struct ibv_cq_ex *cqx)
{
	struct shim_cq *cq = shim_cqx(cqx);
	const struct rp_cqe *cqe = shim_cqe_at(cq, cq->x_next);

	if (cqe == NULL)
		return ENOENT;
	cq->x_next++;
	shim_cqx_current(cq, cqe);
	return 0;
}

static void
shim_end_poll(struct ibv_cq_ex *cqx)
{
	struct shim_cq *cq = shim_cqx(cqx);

	cq->cons = cq->x_next;
	cq->cur = NULL;
	/* release: the entries are read before the engine reuses them */
	rp_store_release(&cq->ctl->cons, cq->cons);
	shim_unlock(&cq->lock);
}

static enum ibv_wc_opcode
shim_read_opcode(struct ibv_cq_ex *cqx)
{
	return (enum ibv_wc_opcode)shim_cqx(cqx)->cur->opcode;
}

static uint32_t
shim_read_vendor_err(struct ibv_cq_ex *cqx)
{
	return shim_cqx(cqx)->cur->vendor_err;
}

static uint32_t
shim_read_byte_len(struct ibv_cq_ex *cqx)
{
	return shim_cqx(cqx)->cur->byte_len;
}

static __be32
shim_read_imm_data(struct ibv_cq_ex *cqx)
{
	return shim_cqx(cqx)->cur->imm_data;
}

static uint32_t
shim_read_qp_num(struct ibv_cq_ex *cqx)
{
	return shim_cqx(cqx)->cur->qp_num;
}

static uint32_t
shim_read_src_qp(struct ibv_cq_ex *cqx)
{
	return shim_cqx(cqx)->cur->src_qp;
}

static unsigned int
shim_read_wc_flags(struct ibv_cq_ex *cqx)
{
	return shim_cqx(cqx)->cur->wc_flags;
}

static uint32_t
shim_read_slid(struct ibv_cq_ex *cqx)
{
	return shim_cqx(cqx)->cur->slid;
}

static uint8_t
shim_read_sl(struct ibv_cq_ex *cqx)
{
	return shim_cqx(cqx)->cur->sl;
}

static uint8_t
shim_read_dlid_path_bits(struct ibv_cq_ex *cqx)
{
	return shim_cqx(cqx)->cur->dlid_path_bits;
}

static void
shim_read_tm_info(struct ibv_cq_ex *cqx, struct ibv_wc_tm_info *tm_info)
{
	const struct rp_cqe *cqe = shim_cqx(cqx)->cur;

	tm_info->tag = cqe->tm_tag;
	tm_info->priv = cqe->tm_priv;
}

/* Install the poll and read functions an extended CQ offers. */
void
shim_cq_ex_ops_set(struct shim_cq *cq)
{
	struct ibv_cq_ex *x = &cq->ibvx;

	x->comp_mask = 0;
	x->start_poll = shim_start_poll;
	x->next_poll = shim_next_poll;
	x->end_poll = shim_end_poll;
	x->read_opcode = shim_read_opcode;
	x->read_vendor_err = shim_read_vendor_err;
	x->read_wc_flags = shim_read_wc_flags;
	/* Only what was asked for, as mlx5: a NULL read_* is a caller bug
	 * that shows at once. */
	if (cq->wc_flags & IBV_WC_EX_WITH_BYTE_LEN)
		x->read_byte_len = shim_read_byte_len;
	/* ibv_wc_read_invalidated_rkey() reads through read_imm_data. */
	if (cq->wc_flags & IBV_WC_EX_WITH_IMM)
		x->read_imm_data = shim_read_imm_data;
	if (cq->wc_flags & IBV_WC_EX_WITH_QP_NUM)
		x->read_qp_num = shim_read_qp_num;
	if (cq->wc_flags & IBV_WC_EX_WITH_SRC_QP)
		x->read_src_qp = shim_read_src_qp;
	if (cq->wc_flags & IBV_WC_EX_WITH_SLID)
		x->read_slid = shim_read_slid;
	if (cq->wc_flags & IBV_WC_EX_WITH_SL)
		x->read_sl = shim_read_sl;
	if (cq->wc_flags & IBV_WC_EX_WITH_DLID_PATH_BITS)
		x->read_dlid_path_bits = shim_read_dlid_path_bits;
	if (cq->wc_flags & IBV_WC_EX_WITH_TM_INFO)
		x->read_tm_info = shim_read_tm_info;
}
