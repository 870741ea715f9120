/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Completion queues: creation, destruction and the per-context CQ table.
 *
 * The CQ ring lives in the device region (struct rp_cq_ctl followed by
 * `size` struct rp_cqe); polling is in shim_poll.c, arming and events in
 * shim_chan.c.  The table maps a CQN from the channel's event ring back to
 * the application's struct ibv_cq: indexed by the low 16 bits, and the full
 * CQN compared, since CQNs carry a generation in their high bits.
 */

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "shim.h"

/* The CQ of a CQN, or NULL. Called with ctx->cq_lock held. */
struct shim_cq *
shim_cq_lookup(struct shim_context *ctx, uint32_t cqn)
{
	struct shim_cq *cq = ctx->cq_tab[SHIM_CQN_IDX(cqn)];

	return cq != NULL && cq->cqn == cqn ? cq : NULL;
}

static int
shim_cq_insert(struct shim_context *ctx, struct shim_cq *cq)
{
	struct shim_cq **slot = &ctx->cq_tab[SHIM_CQN_IDX(cq->cqn)];
	int ret = 0;

	pthread_mutex_lock(&ctx->cq_lock);
	if (*slot != NULL)
		ret = -EEXIST;
	else
		*slot = cq;
	pthread_mutex_unlock(&ctx->cq_lock);
	return ret;
}

static void
shim_cq_remove(struct shim_context *ctx, struct shim_cq *cq)
{
	struct shim_cq **slot = &ctx->cq_tab[SHIM_CQN_IDX(cq->cqn)];

	pthread_mutex_lock(&ctx->cq_lock);
	if (*slot == cq)
		*slot = NULL;
	pthread_mutex_unlock(&ctx->cq_lock);
}

static void
shim_cq_engine_destroy(struct shim_context *ctx, uint32_t cqn)
{
	struct rp_ctrl_slot s = { .op = RP_CTRL_CQ_DESTROY };

	s.u.cq.cqn = cqn;
	if (shim_ctrl(ctx, &s) < 0)
		SHIM_CQ_LOG(WARNING, cqn, "cannot destroy after a failed create");
}

/* Map the ring the engine returned, checking every number it gave. */
static int
shim_cq_map(struct shim_context *ctx, struct shim_cq *cq,
	    const struct rp_ctrl_cq *r, uint32_t cqe)
{
	uint64_t len;

	if (!shim_is_pow2(r->size) || r->size <= cqe) {
		SHIM_CQ_LOG(ERR, r->cqn, "bad size %u for %u entries",
			    r->size, cqe);
		return -EIO;
	}
	len = RP_CQ_HDR_SIZE + (uint64_t)r->size * sizeof(struct rp_cqe);
	cq->ctl = shim_region_ptr(ctx, r->off, len);
	if (cq->ctl == NULL) {
		SHIM_CQ_LOG(ERR, r->cqn, "ring at 0x%" PRIx64 " is outside the region",
			    r->off);
		return -EIO;
	}
	cq->ring = (struct rp_cqe *)((uint8_t *)cq->ctl + RP_CQ_HDR_SIZE);
	cq->cqn = r->cqn;
	cq->size = r->size;
	cq->lap_shift = (uint32_t)__builtin_ctz(r->size);
	/* Our own index: nobody else writes it. */
	cq->cons = rp_load_relaxed(&cq->ctl->cons);
	return 0;
}

/* Create a CQ in the engine and map it: the common part of both APIs. */
static struct shim_cq *
shim_cq_new(struct ibv_context *ibctx, int cqe, void *cq_context,
	    struct ibv_comp_channel *channel, int comp_vector)
{
	struct shim_context *ctx = shim_ctx(ibctx);
	struct rp_ctrl_slot s = { .op = RP_CTRL_CQ_CREATE };
	struct shim_cq *cq;
	int ret;

	if (cqe < 1 || (uint32_t)cqe > ctx->ctl->max_cqe ||
	    comp_vector < 0 || comp_vector >= ibctx->num_comp_vectors ||
	    (channel != NULL && channel->context != ibctx)) {
		errno = EINVAL;
		return NULL;
	}
	cq = calloc(1, sizeof(*cq));
	if (cq == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	cq->ctx = ctx;
	cq->chan = channel != NULL ? shim_chan(channel) : NULL;
	shim_lock_init(&cq->lock);
	cq->ibv.context = ibctx;
	cq->ibv.channel = channel;
	cq->ibv.cq_context = cq_context;
	pthread_mutex_init(&cq->ibv.mutex, NULL);
	pthread_cond_init(&cq->ibv.cond, NULL);
	cq->ibv.comp_events_completed = 0;
	cq->ibv.async_events_completed = 0;

	s.u.cq.cqe = (uint32_t)cqe;
	s.u.cq.chan = cq->chan != NULL ? (int32_t)cq->chan->chn : -1;
	ret = shim_ctrl(ctx, &s);
	if (ret < 0)
		goto err_free;
	ret = shim_cq_map(ctx, cq, &s.u.cq, (uint32_t)cqe);
	if (ret == 0) {
		cq->ibv.handle = cq->cqn;
		cq->ibv.cqe = (int)(cq->size - 1);
		ret = shim_cq_insert(ctx, cq);
	}
	if (ret < 0) {
		if (ret == -EEXIST)
			SHIM_CQ_LOG(ERR, s.u.cq.cqn, "CQN already in use");
		shim_cq_engine_destroy(ctx, s.u.cq.cqn);
		ret = -EIO;
		goto err_free;
	}

	if (channel != NULL) {
		pthread_mutex_lock(&ibctx->mutex);
		channel->refcnt++;
		pthread_mutex_unlock(&ibctx->mutex);
	}
	return cq;

err_free:
	pthread_cond_destroy(&cq->ibv.cond);
	pthread_mutex_destroy(&cq->ibv.mutex);
	free(cq);
	errno = -ret;
	return NULL;
}

SHIM_EXPORT struct ibv_cq *
ibv_create_cq(struct ibv_context *ibctx, int cqe, void *cq_context,
	      struct ibv_comp_channel *channel, int comp_vector)
{
	struct shim_cq *cq = shim_cq_new(ibctx, cqe, cq_context, channel,
					 comp_vector);

	return cq != NULL ? &cq->ibv : NULL;
}

/* What an extended CQ can report (ibv_create_cq_ex(3)). */
#define SHIM_WC_EX_FLAGS (IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_IMM | \
	IBV_WC_EX_WITH_QP_NUM | IBV_WC_EX_WITH_SRC_QP | \
	IBV_WC_EX_WITH_SLID | IBV_WC_EX_WITH_SL | \
	IBV_WC_EX_WITH_DLID_PATH_BITS | IBV_WC_EX_WITH_TM_INFO)

/* verbs_context op behind verbs.h's inline ibv_create_cq_ex(). */
struct ibv_cq_ex *
shim_create_cq_ex(struct ibv_context *ibctx, struct ibv_cq_init_attr_ex *attr)
{
	struct shim_cq *cq;

	/* No timestamps, VLANs or flow tags; no parent domain. */
	if ((attr->wc_flags & ~(uint64_t)SHIM_WC_EX_FLAGS) ||
	    (attr->comp_mask & ~(uint32_t)IBV_CQ_INIT_ATTR_MASK_FLAGS) ||
	    ((attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_FLAGS) &&
	     (attr->flags & ~(uint32_t)IBV_CREATE_CQ_ATTR_SINGLE_THREADED))) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (attr->cqe > INT32_MAX) {
		errno = EINVAL;
		return NULL;
	}
	cq = shim_cq_new(ibctx, (int)attr->cqe, attr->cq_context,
			 attr->channel, (int)attr->comp_vector);
	if (cq == NULL)
		return NULL;
	cq->ex = true;
	cq->wc_flags = attr->wc_flags;
	shim_cq_ex_ops_set(cq);
	return &cq->ibvx;
}

/*
 * ibv_resize_cq(3): the engine moves the CQEs not yet polled into a new
 * ring, in order; polling waits on the CQ's lock meanwhile.  Asking for
 * fewer entries than are waiting fails with EINVAL, the CQ unchanged.
 */
SHIM_EXPORT int
ibv_resize_cq(struct ibv_cq *ibcq, int cqe)
{
	struct shim_cq *cq = shim_cq(ibcq);
	struct rp_ctrl_slot s = { .op = RP_CTRL_CQ_RESIZE };
	int ret;

	if (cqe < 1 || (uint32_t)cqe > cq->ctx->ctl->max_cqe)
		return EINVAL;
	shim_lock(&cq->lock);
	/* The engine moves what we have not consumed: say how far we are. */
	rp_store_release(&cq->ctl->cons, cq->cons);
	s.u.cq.cqn = cq->cqn;
	s.u.cq.cqe = (uint32_t)cqe;
	ret = shim_ctrl(cq->ctx, &s);
	if (ret == 0)
		ret = shim_cq_map(cq->ctx, cq, &s.u.cq, (uint32_t)cqe);
	if (ret == 0)
		ibcq->cqe = (int)(cq->size - 1);
	shim_unlock(&cq->lock);
	return -ret;
}

/*
 * ibv_modify_cq(3), the verbs_context op behind verbs.h's inline: CQ
 * moderation (IBV_CQ_ATTR_MODERATE), the only attribute there is.  An
 * armed CQ's event then waits for cq_count completions or cq_period µs
 * after the first (guides/verbs_apps, "CQ moderation"); the bounds are
 * ibv_query_device_ex()'s cq_mod_caps.
 */
int
shim_modify_cq(struct ibv_cq *ibcq, struct ibv_modify_cq_attr *attr)
{
	struct shim_cq *cq = shim_cq(ibcq);
	struct rp_ctrl_slot s = { .op = RP_CTRL_CQ_MODERATE };

	if (attr == NULL || (attr->attr_mask & ~IBV_CQ_ATTR_MODERATE) != 0)
		return EINVAL;
	if (attr->attr_mask == 0)
		return 0;
	/* cq_count is a uint16_t: RP_CQ_MOD_COUNT_MAX bounds it already */
	if (attr->moderate.cq_period > RP_CQ_MOD_PERIOD_MAX)
		return EINVAL;
	s.u.cq_mod.cqn = cq->cqn;
	s.u.cq_mod.count = attr->moderate.cq_count;
	s.u.cq_mod.period_us = attr->moderate.cq_period;
	return -shim_ctrl(cq->ctx, &s);
}

SHIM_EXPORT int
ibv_destroy_cq(struct ibv_cq *ibcq)
{
	struct shim_cq *cq = shim_cq(ibcq);
	struct shim_context *ctx = cq->ctx;
	struct ibv_comp_channel *channel = ibcq->channel;
	struct rp_ctrl_slot s = { .op = RP_CTRL_CQ_DESTROY };
	int ret;

	if (rp_load_acquire(&cq->nr_qp) != 0)
		return EBUSY;

	/* No more events are handed out for it: pending ones are dropped. */
	shim_cq_remove(ctx, cq);
	/* CC-8: every event delivered must have been acknowledged. */
	shim_cq_events_wait(cq);

	s.u.cq.cqn = cq->cqn;
	ret = shim_ctrl(ctx, &s);
	if (ret < 0) {
		if (shim_cq_insert(ctx, cq) < 0)
			SHIM_CQ_LOG(ERR, cq->cqn, "cannot restore after a failed destroy");
		return -ret;
	}

	if (channel != NULL) {
		pthread_mutex_lock(&channel->context->mutex);
		channel->refcnt--;
		pthread_mutex_unlock(&channel->context->mutex);
	}
	pthread_cond_destroy(&ibcq->cond);
	pthread_mutex_destroy(&ibcq->mutex);
	free(cq);
	return 0;
}
