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

int
shim_poll_cq(struct ibv_cq *ibcq, int num_entries, struct ibv_wc *wc)
{
	struct shim_cq *cq = shim_cq(ibcq);
	const uint32_t mask = cq->size - 1;
	uint32_t cons;
	int n = 0;

	if (num_entries <= 0)
		return 0;

	rte_spinlock_lock(&cq->lock);
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
	rte_spinlock_unlock(&cq->lock);
	return n;
}
