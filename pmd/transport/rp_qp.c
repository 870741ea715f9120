/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * QP objects: creation with their shared queues, the verbs state machine
 * (RESET, INIT, RTR, RTS, SQD, SQE, ERR) with the attribute masks
 * ibv_modify_qp(3) requires and allows, destruction.  The pass over a QP
 * (doorbells, step, flush) is rp_pass.c, above the requester, responder
 * and completer; the error state they enter is rp_qp_err.c, below them.
 */

#include <errno.h>
#include <string.h>

#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_malloc.h>

#include <infiniband/verbs.h>

#include "rp_atomic.h"
#include "rp_log.h"
#include "rp_transport.h"
#include "rp_psn.h"
#include "rp_xmit.h"

static uint32_t
wq_stride(uint32_t hdr, uint32_t sge, uint32_t inl)
{
	uint32_t body = RTE_MAX(sge * (uint32_t)sizeof(struct rp_sge), inl);

	return rte_align32pow2(hdr + RTE_MAX(body, 16u));
}

static uint64_t
wq_bytes(uint32_t size, uint32_t stride)
{
	return RP_WQ_HDR_SIZE + (uint64_t)size * stride;
}

static void
active_del(struct rp_dev *dev, struct rp_qp *qp)
{
	struct rp_shard *sh = &dev->sh[qp->shard];

	for (uint32_t i = 0; i < sh->nr_active; i++) {
		if (sh->active[i] == qp) {
			sh->active[i] = sh->active[--sh->nr_active];
			break;
		}
	}
	qp->active = false;
}

/*
 * The QP's doorbell bit (rp_abi.h): in the arena its rings are in, which
 * a pass reads while it holds QPs.
 */
static void
qp_bell_add(struct rp_dev *dev, struct rp_qp *qp, struct rp_ctrl_qp_create *c)
{
	struct rp_arena *a = &dev->arena[dev->cur_arena];
	uint64_t base = offsetof(struct rp_arena_ctl, bell);

	qp->arena = dev->cur_arena;
	if (a->nr_qp++ == 0)
		dev->bell_arena[dev->nr_bell_arenas++] = dev->cur_arena;
	dev->qp_hi = RTE_MAX(dev->qp_hi, qp->idx + 1);
	c->bell_off = base + (qp->idx / 64) * sizeof(uint64_t);
	c->bell_bit = UINT64_C(1) << (qp->idx % 64);
}

static void
qp_bell_del(struct rp_dev *dev, struct rp_qp *qp)
{
	struct rp_arena *a = &dev->arena[qp->arena];

	if (--a->nr_qp != 0)
		return;
	for (uint32_t k = 0; k < dev->nr_bell_arenas; k++)
		if (dev->bell_arena[k] == qp->arena) {
			dev->bell_arena[k] =
				dev->bell_arena[--dev->nr_bell_arenas];
			break;
		}
}

/* The private send ring: application slots plus the internal reserve. */
static int
qp_private_sq(struct rp_qp *qp, uint32_t rsv)
{
	qp->int_rsv = rsv;
	qp->sq_size = rte_align32pow2(qp->app_sq_size + rsv);
	qp->sq_stride = qp->app_sq_stride;
	qp->sq_buf = rte_zmalloc("rp_sq", (size_t)qp->sq_size * qp->sq_stride,
				 RTE_CACHE_LINE_SIZE);
	qp->swqe = rte_zmalloc("rp_swqe", sizeof(struct rp_swqe) * qp->sq_size, 0);
	if (qp->sq_buf == NULL || qp->swqe == NULL) {
		rte_free(qp->sq_buf);
		rte_free(qp->swqe);
		return -ENOMEM;
	}
	return 0;
}

static void
qp_free(struct rp_qp *qp)
{
	rp_sr_free(qp);
	rte_free(qp->rndv);
	rte_free(qp->rd);
	rte_free(qp->sq_buf);
	rte_free(qp->swqe);
	rte_free(qp);
}

int
rp_qp_create(struct rp_dev *dev, struct rp_ctrl_qp_create *c)
{
	struct rp_qp_caps *cap = &c->caps;
	struct rp_srq *srq = NULL;
	struct rp_cq *scq, *rcq;
	struct rp_qp *qp;
	uint32_t idx;
	int64_t off;
	int ret = -ENOMEM;

	if (c->qp_type != IBV_QPT_RC && c->qp_type != IBV_QPT_UD &&
	    c->qp_type != IBV_QPT_UC)
		return -EOPNOTSUPP;
	if (c->pdn >= RP_MAX_PD || !dev->pd_used[c->pdn])
		return -EINVAL;
	if (c->srqn >= 0) {
		srq = rp_srq_get(dev, (uint32_t)c->srqn);
		if (srq == NULL)
			return -EINVAL;
		/* Tag matching is defined for RC only (IBV_TM_CAP_RC). */
		if (srq->tm != NULL && c->qp_type != IBV_QPT_RC)
			return -EINVAL;
	}
	scq = rp_cq_get(dev, c->send_cqn);
	/* A TM-SRQ's CQ takes every receive completion of its QPs. */
	rcq = srq != NULL && srq->tm != NULL ? srq->cq :
		rp_cq_get(dev, c->recv_cqn);
	if (scq == NULL || rcq == NULL)
		return -EINVAL;
	if (cap->max_send_wr > RP_MAX_WR || cap->max_recv_wr > RP_MAX_WR ||
	    cap->max_send_sge > RP_MAX_SGE || cap->max_recv_sge > RP_MAX_SGE ||
	    cap->max_inline_data > RP_MAX_INLINE)
		return -EINVAL;
	if (c->flags & ~RP_QP_F_GSI)
		return -EINVAL;
	/* A GSI agent is a UD QP whose packets leave from QP 1 (rp_gsi.c);
	 * index 1 stays empty, so what arrives for QP 1 is dispatched. */
	if ((c->flags & RP_QP_F_GSI) &&
	    (c->qp_type != IBV_QPT_UD || srq != NULL))
		return -EINVAL;
	for (idx = 2; idx < RP_MAX_QP; idx++)
		if (dev->qp[idx] == NULL)
			break;
	if (idx == RP_MAX_QP)
		return -ENOMEM;

	qp = rte_zmalloc("rp_qp", sizeof(*qp), RTE_CACHE_LINE_SIZE);
	if (qp == NULL)
		return -ENOMEM;
	qp->dev = dev;
	qp->idx = idx;
	qp->type = c->qp_type;
	qp->state = IBV_QPS_RESET;
	qp->pdn = c->pdn;
	qp->scq = scq;
	qp->rcq = rcq;
	qp->srq = srq;
	qp->ops = srq != NULL ? srq->ops : NULL;
	qp->sq_sig_all = c->sq_sig_all != 0;
	qp->resp.last_op = RP_OP_SEND_ONLY;	/* not inside a message */
	qp->err_status = IBV_WC_WR_FLUSH_ERR;

	/* Grant at least what was asked; report what was granted. */
	cap->max_send_sge = RTE_MAX(cap->max_send_sge, 1u);
	cap->max_recv_sge = RTE_MAX(cap->max_recv_sge, 1u);
	cap->max_inline_data = RTE_MAX(cap->max_inline_data, 64u);
	qp->app_sq_size = rte_align32pow2(RTE_MAX(cap->max_send_wr, 1u));
	qp->rq_size = rte_align32pow2(RTE_MAX(cap->max_recv_wr, 1u));
	qp->app_sq_stride = wq_stride(RP_SEND_WQE_HDR, cap->max_send_sge,
				      cap->max_inline_data);
	qp->rq_stride = wq_stride(RP_RECV_WQE_HDR, cap->max_recv_sge, 0);
	/* The stride's room is what the application may use. */
	cap->max_send_sge = RTE_MIN((qp->app_sq_stride - RP_SEND_WQE_HDR) /
				    (uint32_t)sizeof(struct rp_sge), RP_MAX_SGE);
	cap->max_inline_data = RTE_MIN(qp->app_sq_stride - RP_SEND_WQE_HDR,
				       RP_MAX_INLINE);
	cap->max_recv_sge = RTE_MIN((qp->rq_stride - RP_RECV_WQE_HDR) /
				    (uint32_t)sizeof(struct rp_sge), RP_MAX_SGE);
	cap->max_send_wr = qp->app_sq_size;
	cap->max_recv_wr = qp->rq_size;
	qp->caps = *cap;

	if (qp_private_sq(qp, srq != NULL && srq->tm != NULL ?
			  RP_TM_RNDV_PER_QP : 0) < 0 || rp_sr_alloc(qp) < 0)
		goto err_free_qp;
	if (qp->int_rsv != 0) {
		qp->rndv = rte_zmalloc("rp_rndv",
				       sizeof(*qp->rndv) * RP_TM_RNDV_PER_QP, 0);
		if (qp->rndv == NULL)
			goto err_free_qp;
	}
	off = rp_region_alloc(dev, wq_bytes(qp->app_sq_size, qp->app_sq_stride));
	if (off < 0)
		goto err_free_qp;
	qp->sq_off = off;
	off = rp_region_alloc(dev, wq_bytes(qp->rq_size, qp->rq_stride));
	if (off < 0)
		goto err_free_sq;
	qp->rq_off = off;
	qp->sq = rp_region_ptr(dev, qp->sq_off);
	qp->app_sq_buf = (uint8_t *)qp->sq + RP_WQ_HDR_SIZE;
	qp->rq = rp_region_ptr(dev, qp->rq_off);
	qp->rq_buf = (uint8_t *)qp->rq + RP_WQ_HDR_SIZE;

	if (c->flags & RP_QP_F_GSI) {
		ret = rp_gsi_agent_add(dev, qp);
		if (ret < 0)
			goto err_free_rq;
	}
	dev->qp_gen[idx] = (dev->qp_gen[idx] + 1) &
		((1u << (24 - RP_QP_IDX_BITS)) - 1);
	if (dev->qp_gen[idx] == 0)
		dev->qp_gen[idx] = 1;
	qp->qpn = (uint32_t)dev->qp_gen[idx] << RP_QP_IDX_BITS | idx;
	c->comm_prefix = qp->gsi != NULL ? rp_gsi_comm_prefix(qp) : 0;
	ret = rp_shard_place(dev, qp);
	if (ret < 0) {
		rp_gsi_agent_del(dev, qp);
		goto err_free_rq;
	}
	dev->qp[idx] = qp;
	dev->pd_refs[qp->pdn]++;
	scq->nr_qp++;
	rcq->nr_qp++;
	if (srq != NULL)
		srq->nr_qp++;

	c->qpn = qp->qpn;
	c->sq_off = qp->sq_off;
	c->sq_size = qp->app_sq_size;
	c->sq_stride = qp->app_sq_stride;
	c->rq_off = qp->rq_off;
	c->rq_size = qp->rq_size;
	c->rq_stride = qp->rq_stride;
	qp_bell_add(dev, qp, c);
	return 0;

err_free_rq:
	rp_region_free(dev, qp->rq_off, wq_bytes(qp->rq_size, qp->rq_stride));
err_free_sq:
	rp_region_free(dev, qp->sq_off,
		       wq_bytes(qp->app_sq_size, qp->app_sq_stride));
err_free_qp:
	qp_free(qp);
	return ret;
}

/*
 * An ACK still owed (the transmit queue was half full at the QP's last
 * step) leaves before the QP is reset or destroyed: the requests it
 * covers were executed and their completions may be polled already, and
 * a program that then exits would leave its peer retrying them until its
 * retry count ran out (ibv_rc_pingpong's last reply, service-parallel).
 */
static void
qp_ack_owed_out(struct rp_qp *qp)
{
	if (qp->type == IBV_QPT_RC && rp_resp_ack_due(qp) &&
	    rp_xmit_addr_ok(qp))
		rp_resp_send_ack(qp, qp->resp.ack_syn, qp->resp.ack_psn);
}

int
rp_qp_destroy(struct rp_dev *dev, struct rp_ctrl_qp *m)
{
	struct rp_qp *qp = rp_qp_get(dev, m->qpn);

	if (qp == NULL)
		return -EINVAL;
	qp_ack_owed_out(qp);
	rp_qp_drain_unreliable(qp);
	/* A message being received and rendezvous in flight give their
	 * SRQ and tagged buffers back first. */
	rp_qp_flush_wqes(qp, false);
	/* An agent's wills leave before it goes. */
	rp_gsi_agent_del(dev, qp);
	rp_mw_qp_gone(dev, qp->qpn);
	active_del(dev, qp);
	if (qp->type == IBV_QPT_UD)
		rp_mcast_qp_gone(dev, qp->qpn);
	qp_bell_del(dev, qp);
	rp_shard_unplace(qp);
	dev->qp[qp->idx] = NULL;
	dev->pd_refs[qp->pdn]--;
	qp->scq->nr_qp--;
	qp->rcq->nr_qp--;
	if (qp->srq != NULL)
		qp->srq->nr_qp--;
	rp_region_free(dev, qp->sq_off,
		       wq_bytes(qp->app_sq_size, qp->app_sq_stride));
	rp_region_free(dev, qp->rq_off, wq_bytes(qp->rq_size, qp->rq_stride));
	qp_free(qp);
	return 0;
}

/*
 * Required and optional attributes per transition, from ibv_modify_qp(3)
 * (and IBTA 10.3).  Index: [cur][next]; a zero `req` means not allowed,
 * except for the transitions to RESET and ERR handled apart.
 */
struct rp_qp_trans {
	uint32_t req[3];	/* RC, UC, UD */
	uint32_t opt[3];
};

#define S IBV_QP_STATE
static const struct rp_qp_trans rp_qp_trans[IBV_QPS_ERR + 1][IBV_QPS_ERR + 1] = {
	[IBV_QPS_RESET][IBV_QPS_INIT] = {
		.req = { S | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS,
			 S | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS,
			 S | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY },
	},
	[IBV_QPS_INIT][IBV_QPS_INIT] = {
		.req = { S, S, S },
		.opt = { IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS,
			 IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS,
			 IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY },
	},
	[IBV_QPS_INIT][IBV_QPS_RTR] = {
		.req = { S | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			 IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
			 IBV_QP_MIN_RNR_TIMER,
			 S | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			 IBV_QP_RQ_PSN,
			 S },
		.opt = { IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS | IBV_QP_PKEY_INDEX,
			 IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS | IBV_QP_PKEY_INDEX,
			 IBV_QP_PKEY_INDEX | IBV_QP_QKEY },
	},
	[IBV_QPS_RTR][IBV_QPS_RTS] = {
		.req = { S | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			 IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC,
			 S | IBV_QP_SQ_PSN,
			 S | IBV_QP_SQ_PSN },
		.opt = { IBV_QP_CUR_STATE | IBV_QP_ACCESS_FLAGS |
			 IBV_QP_MIN_RNR_TIMER | IBV_QP_ALT_PATH |
			 IBV_QP_PATH_MIG_STATE,
			 IBV_QP_CUR_STATE | IBV_QP_ACCESS_FLAGS | IBV_QP_ALT_PATH |
			 IBV_QP_PATH_MIG_STATE,
			 IBV_QP_CUR_STATE | IBV_QP_QKEY },
	},
	[IBV_QPS_RTS][IBV_QPS_RTS] = {
		.req = { S, S, S },
		.opt = { IBV_QP_CUR_STATE | IBV_QP_ACCESS_FLAGS |
			 IBV_QP_MIN_RNR_TIMER | IBV_QP_ALT_PATH |
			 IBV_QP_PATH_MIG_STATE,
			 IBV_QP_CUR_STATE | IBV_QP_ACCESS_FLAGS | IBV_QP_ALT_PATH |
			 IBV_QP_PATH_MIG_STATE,
			 IBV_QP_CUR_STATE | IBV_QP_QKEY },
	},
	[IBV_QPS_RTS][IBV_QPS_SQD] = {
		.req = { S, S, S },
		.opt = { IBV_QP_EN_SQD_ASYNC_NOTIFY, IBV_QP_EN_SQD_ASYNC_NOTIFY,
			 IBV_QP_EN_SQD_ASYNC_NOTIFY },
	},
	[IBV_QPS_SQD][IBV_QPS_RTS] = {
		.req = { S, S, S },
		.opt = { IBV_QP_CUR_STATE | IBV_QP_ACCESS_FLAGS |
			 IBV_QP_MIN_RNR_TIMER | IBV_QP_ALT_PATH |
			 IBV_QP_PATH_MIG_STATE,
			 IBV_QP_CUR_STATE | IBV_QP_ACCESS_FLAGS | IBV_QP_ALT_PATH |
			 IBV_QP_PATH_MIG_STATE,
			 IBV_QP_CUR_STATE | IBV_QP_QKEY },
	},
	[IBV_QPS_SQE][IBV_QPS_RTS] = {
		.req = { S, S, S },
		.opt = { 0, IBV_QP_CUR_STATE | IBV_QP_ACCESS_FLAGS,
			 IBV_QP_CUR_STATE | IBV_QP_QKEY },
	},
};
#undef S

static int
qp_type_col(uint32_t type)
{
	return type == IBV_QPT_RC ? 0 : type == IBV_QPT_UC ? 1 : 2;
}

static int
qp_check_mask(const struct rp_qp *qp, uint32_t cur, uint32_t next,
	      uint32_t mask)
{
	const struct rp_qp_trans *t;
	int col = qp_type_col(qp->type);

	if (next == IBV_QPS_RESET || next == IBV_QPS_ERR)
		return (mask & ~(IBV_QP_STATE | IBV_QP_CUR_STATE)) ? -EINVAL : 0;
	if (cur > IBV_QPS_ERR || next > IBV_QPS_ERR)
		return -EINVAL;
	t = &rp_qp_trans[cur][next];
	if (t->req[col] == 0)
		return -EINVAL;
	if ((mask & t->req[col]) != t->req[col])
		return -EINVAL;
	if (mask & ~(t->req[col] | t->opt[col]))
		return -EINVAL;
	return 0;
}

static int
qp_set_av(struct rp_qp *qp, const struct rp_av *av)
{
	struct rp_dev *dev = qp->dev;
	const uint8_t *sgid;
	int ret;

	if (!av->is_global) {
		RP_QP_LOG(rp_logtype, ERR, qp->qpn,
			  "RoCE needs a GRH: set ah_attr.is_global and the GID");
		return -EINVAL;
	}
	if (av->port_num != 0 && av->port_num != 1)
		return -EINVAL;
	sgid = rp_gid_sgid(&dev->net, av->sgid_index, av->dgid);
	if (sgid == NULL) {
		RP_QP_LOG(rp_logtype, ERR, qp->qpn,
			  "GID index %u: empty, or not of the destination's "
			  "family (IPv4 or IPv6)", av->sgid_index);
		return -EINVAL;
	}
	if (rp_gid_is_mcast(av->dgid)) {
		RP_QP_LOG(rp_logtype, ERR, qp->qpn,
			  "a connected QP's peer is not a multicast group");
		return -EINVAL;
	}
	/* Resolving starts now, so that the first packet need not wait;
	 * whoever sends first and finds no MAC asks again (rp_xmit_ready). */
	ret = rp_xmit_dmac(dev, av->dgid, qp->addr.dmac);
	if (ret == -ENETUNREACH) {
		RP_QP_LOG(rp_logtype, ERR, qp->qpn, "destination is off-link");
		return ret;
	}
	qp->addr_ok = ret == 0;
	qp->addr_gen = dev->sh[qp->shard].nq.arp_gen;
	qp->av = *av;
	/* What goes on the wire, reported by query as the kernel does. */
	qp->av.hop_limit = rp_xmit_hop_limit(dev, av);
	memcpy(qp->addr.smac, dev->port.mac.addr_bytes, 6);
	memcpy(qp->addr.sgid, sgid, 16);
	memcpy(qp->addr.dgid, av->dgid, 16);
	qp->addr.ttl = qp->av.hop_limit;
	qp->addr.tclass = av->traffic_class;
	return 0;
}

/*
 * The responder's FIFO for max_dest_rd_atomic READs and atomics (at least
 * one, as before any is allowed), and as many runs of READ responses
 * asked for alone with selective_retx (rp_sr_read.c), followed in the
 * same allocation by as many atomic results (qp->atom), or NULL with
 * *size unchanged when the present one has the right size.  Set only in
 * INIT->RTR, where it is empty.
 */
static int
qp_rd_alloc(const struct rp_qp *qp, uint32_t max_dest, struct rp_rd_resp **rd,
	    uint32_t *size)
{
	uint32_t n = rte_align32pow2(RTE_MAX(max_dest, 1u) *
				     (qp->sr != NULL ? 2u : 1u));

	*rd = NULL;
	*size = qp->rd_size;
	if (n == qp->rd_size)
		return 0;
	*rd = rte_zmalloc("rp_rd", (sizeof(**rd) +
			  sizeof(struct rp_atom_res)) * n, 0);
	if (*rd == NULL)
		return -ENOMEM;
	*size = n;
	return 0;
}

/* Drop everything queued, without completions (to RESET). */
static void
qp_reset(struct rp_qp *qp)
{
	uint32_t sq_prod = rp_load_acquire(&qp->sq->prod);
	uint32_t rq_prod = rp_load_acquire(&qp->rq->prod);

	qp_ack_owed_out(qp);
	rp_qp_flush_wqes(qp, false);
	rp_sr_flush(qp);
	memset(&qp->req, 0, sizeof(qp->req));
	memset(&qp->comp, 0, sizeof(qp->comp));
	memset(&qp->resp, 0, sizeof(qp->resp));
	memset(&qp->cc, 0, sizeof(qp->cc));
	qp->resp.last_op = RP_OP_SEND_ONLY;	/* not inside a message */
	/* The next connection's PSNs must not find this one's atomics. */
	if (qp->atom != NULL)
		memset(qp->atom, 0, sizeof(*qp->atom) * qp->rd_size);
	qp->req.head = qp->req.hi = qp->comp.tail = qp->sq_prod;
	qp->int_out = 0;
	qp->app_ingest = qp->app_cons = sq_prod;
	qp->rq_cons = rq_prod;
	rp_store_release(&qp->sq->cons, sq_prod);
	rp_store_release(&qp->rq->cons, rq_prod);
	qp->flushing = false;
	/* Receives posted from now on wait for messages (rp_qp_error()). */
	rp_store_relaxed(&qp->rq->post_wake, 0u);
	qp->err_status = IBV_WC_WR_FLUSH_ERR;
	qp->addr_ok = false;
	qp->peer_nc = false;		/* the next peer's frames will say */
	qp->last_wqe_sent = false;
	active_del(qp->dev, qp);
}

static int
qp_modify(struct rp_dev *dev, struct rp_ctrl_qp *m)
{
	struct rp_qp *qp = rp_qp_get(dev, m->qpn);
	const struct rp_qp_attr *a = &m->attr;
	uint32_t mask = a->attr_mask;
	struct rp_rd_resp *rd = NULL;
	uint32_t cur, next, rd_size = 0;
	int ret;

	if (qp == NULL)
		return -EINVAL;
	cur = qp->state;
	if ((mask & IBV_QP_CUR_STATE) && a->cur_qp_state != cur)
		return -EINVAL;
	next = (mask & IBV_QP_STATE) ? a->qp_state : cur;
	if (next > IBV_QPS_ERR)
		return -EINVAL;
	if (!(mask & IBV_QP_STATE)) {
		/* Attribute change without a transition: X -> X rules. */
		mask |= IBV_QP_STATE;
	}
	ret = qp_check_mask(qp, cur, next, mask);
	if (ret < 0) {
		RP_QP_LOG(rp_logtype, DEBUG, qp->qpn,
			  "modify %u -> %u: attr_mask 0x%x not allowed",
			  cur, next, a->attr_mask);
		return ret;
	}

	/* Validate values before changing anything. */
	if ((mask & IBV_QP_PORT) && a->port_num != 1)
		return -EINVAL;
	if ((mask & IBV_QP_PKEY_INDEX) && a->pkey_index != 0)
		return -EINVAL;
	if (mask & IBV_QP_PATH_MTU) {
		uint32_t b = rp_mtu_bytes(a->path_mtu);

		if (b == 0 || b > dev->mtu)
			return -EINVAL;
	}
	if ((mask & IBV_QP_DEST_QPN) && a->dest_qp_num > RP_QPN_MASK)
		return -EINVAL;
	if ((mask & IBV_QP_MAX_DEST_RD_ATOMIC) &&
	    a->max_dest_rd_atomic > RP_MAX_RD_ATOMIC)
		return -EINVAL;
	if ((mask & IBV_QP_MAX_QP_RD_ATOMIC) &&
	    a->max_rd_atomic > RP_MAX_RD_ATOMIC)
		return -EINVAL;
	if ((mask & IBV_QP_RETRY_CNT) && a->retry_cnt > 7)
		return -EINVAL;
	if ((mask & IBV_QP_RNR_RETRY) && a->rnr_retry > 7)
		return -EINVAL;
	if ((mask & IBV_QP_TIMEOUT) && a->timeout > 31)
		return -EINVAL;
	if ((mask & IBV_QP_MIN_RNR_TIMER) && a->min_rnr_timer > 31)
		return -EINVAL;
	if ((mask & IBV_QP_MAX_DEST_RD_ATOMIC) && qp->type == IBV_QPT_RC) {
		ret = qp_rd_alloc(qp, a->max_dest_rd_atomic, &rd, &rd_size);
		if (ret < 0)
			return ret;
	}
	if (mask & IBV_QP_AV) {
		ret = qp_set_av(qp, &a->av);
		if (ret < 0) {
			rte_free(rd);
			return ret;
		}
	}
	if (rd != NULL) {
		rte_free(qp->rd);
		qp->rd = rd;
		qp->rd_size = rd_size;
		qp->atom = (struct rp_atom_res *)(rd + rd_size);
	}

	/* As the kernel's devices: bits that do not apply to a QP (MR-only
	 * ones such as IBV_ACCESS_ON_DEMAND) are accepted and ignored. */
	if (mask & IBV_QP_ACCESS_FLAGS)
		qp->access = a->qp_access_flags & (IBV_ACCESS_LOCAL_WRITE |
			IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			IBV_ACCESS_REMOTE_ATOMIC);
	if (mask & IBV_QP_QKEY)
		qp->qkey = a->qkey;
	if (mask & IBV_QP_PKEY_INDEX)
		qp->pkey_index = a->pkey_index;
	if (mask & IBV_QP_PORT)
		qp->port_num = a->port_num;
	if (mask & IBV_QP_PATH_MTU) {
		qp->path_mtu = a->path_mtu;
		qp->mtu = rp_mtu_bytes(a->path_mtu);
	}
	if (mask & IBV_QP_DEST_QPN)
		qp->dest_qpn = a->dest_qp_num;
	if (mask & (IBV_QP_DEST_QPN | IBV_QP_AV)) {
		qp->addr.flow_label = rp_pkt_flow_label(qp->av.flow_label,
							qp->qpn, qp->dest_qpn);
		qp->addr.sport = rp_pkt_udp_sport(qp->av.flow_label, qp->qpn,
						  qp->dest_qpn);
	}
	if (mask & IBV_QP_RQ_PSN) {
		qp->resp.epsn = a->rq_psn & RP_PSN_MASK;
		qp->resp.nak_sent = false;
	}
	if (mask & IBV_QP_SQ_PSN) {
		qp->req.psn = a->sq_psn & RP_PSN_MASK;
		qp->req.max_psn = qp->req.psn;
		qp->comp.rd_psn = qp->req.psn;
		qp->comp.una = qp->req.psn;
		qp->req.mod_end = qp->req.psn;
		qp->comp.rd_retried = false;
	}
	if (mask & IBV_QP_MAX_DEST_RD_ATOMIC)
		qp->max_dest_rd_atomic = a->max_dest_rd_atomic;
	if (mask & IBV_QP_MAX_QP_RD_ATOMIC)
		qp->max_rd_atomic = RTE_MAX(a->max_rd_atomic, 1);
	if (mask & IBV_QP_MIN_RNR_TIMER)
		qp->min_rnr_timer = a->min_rnr_timer;
	if (mask & IBV_QP_TIMEOUT)
		qp->timeout = a->timeout;
	if (mask & IBV_QP_RETRY_CNT) {
		qp->retry_cnt = a->retry_cnt;
		qp->comp.retry_left = a->retry_cnt;
	}
	if (mask & IBV_QP_RNR_RETRY) {
		qp->rnr_retry = a->rnr_retry;
		qp->comp.rnr_left = a->rnr_retry;
	}

	if (next == cur)
		return 0;
	switch (next) {
	case IBV_QPS_RESET:
		qp_reset(qp);
		break;
	case IBV_QPS_INIT:
		if (qp->type == IBV_QPT_UD)	/* the AH picks the GIDs */
			memcpy(qp->addr.smac, dev->port.mac.addr_bytes, 6);
		rp_qp_wake(qp);
		break;
	case IBV_QPS_RTR:
		if (qp->type == IBV_QPT_UD)
			qp->mtu = dev->mtu;
		break;
	case IBV_QPS_RTS:
		qp->sq_draining = 0;
		qp->sqd_notify = false;
		break;
	case IBV_QPS_SQD:
		qp->sq_draining = 1;
		qp->sqd_notify = (mask & IBV_QP_EN_SQD_ASYNC_NOTIFY) &&
			a->en_sqd_async_notify;
		qp->en_sqd_async_notify = qp->sqd_notify;	/* for query */
		qp->state = next;
		rp_qp_sqd_check(qp);	/* nothing outstanding: drained now */
		return 0;
	case IBV_QPS_ERR:
		qp->state = next;
		rp_qp_error(qp, IBV_WC_WR_FLUSH_ERR);
		return 0;
	default:
		break;
	}
	qp->state = next;
	return 0;
}

int
rp_qp_modify(struct rp_dev *dev, struct rp_ctrl_qp *m)
{
	int ret = qp_modify(dev, m);
	struct rp_qp *qp = rp_qp_get(dev, m->qpn);

	/* A new state, a new timer or path: the next pass looks (what was
	 * posted in INIT or RTR starts in RTS). */
	if (ret == 0 && qp->state != IBV_QPS_RESET)
		rp_qp_wake(qp);
	return ret;
}

int
rp_qp_query(struct rp_dev *dev, struct rp_ctrl_qp *m)
{
	struct rp_qp *qp = rp_qp_get(dev, m->qpn);
	struct rp_qp_attr *a = &m->attr;

	if (qp == NULL)
		return -EINVAL;
	memset(a, 0, sizeof(*a));
	a->qp_state = qp->state;
	a->cur_qp_state = qp->state;
	a->path_mtu = qp->path_mtu;
	a->qkey = qp->qkey;
	a->rq_psn = qp->resp.epsn;
	a->sq_psn = qp->req.psn;
	a->dest_qp_num = qp->dest_qpn;
	a->qp_access_flags = qp->access;
	a->pkey_index = qp->pkey_index;
	a->port_num = qp->port_num;
	a->timeout = qp->timeout;
	a->retry_cnt = qp->retry_cnt;
	a->rnr_retry = qp->rnr_retry;
	a->min_rnr_timer = qp->min_rnr_timer;
	a->max_rd_atomic = qp->max_rd_atomic;
	a->max_dest_rd_atomic = qp->max_dest_rd_atomic;
	a->sq_draining = qp->sq_draining;
	a->en_sqd_async_notify = qp->en_sqd_async_notify;
	a->av = qp->av;
	a->cap = qp->caps;
	return 0;
}

