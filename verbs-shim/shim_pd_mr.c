/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Protection domains and memory regions.
 *
 * Both are engine objects named by number: a PD by its pdn, an MR by its
 * lkey.  The engine reads and writes registered memory in this process
 * through the address given at registration; iova is what keys address.
 */

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "shim.h"

SHIM_EXPORT struct ibv_pd *
ibv_alloc_pd(struct ibv_context *ibctx)
{
	struct shim_context *ctx = shim_ctx(ibctx);
	struct rp_ctrl_slot s = { .op = RP_CTRL_PD_ALLOC };
	struct shim_pd *pd;
	int ret;

	pd = calloc(1, sizeof(*pd));
	if (pd == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	ret = shim_ctrl(ctx, &s);
	if (ret < 0) {
		free(pd);
		errno = -ret;
		return NULL;
	}
	pd->pdn = s.u.pd.pdn;
	pd->ibv.context = ibctx;
	pd->ibv.handle = pd->pdn;
	return &pd->ibv;
}

SHIM_EXPORT int
ibv_dealloc_pd(struct ibv_pd *ibpd)
{
	struct shim_pd *pd = shim_pd(ibpd);
	struct rp_ctrl_slot s = { .op = RP_CTRL_PD_FREE };
	int ret;

	s.u.pd.pdn = pd->pdn;
	ret = shim_ctrl(shim_ctx(ibpd->context), &s);
	if (ret < 0)
		return -ret;		/* EBUSY: objects still use it */
	free(pd);
	return 0;
}

/*
 * Access flags as the kernel checks them (ib_check_mr_access()).
 * IBV_ACCESS_ON_DEMAND is honoured by every MR: the engine reaches the
 * application's memory through its own mapping, never pinning it
 * (doc/guides/verbs_apps.rst, on-demand paging).  Optional flags may be
 * ignored (ibv_reg_mr(3)), and so may the huge page hint: rocepmd does.
 */
static int
shim_mr_access(unsigned int *access)
{
	*access &= ~((unsigned int)IBV_ACCESS_OPTIONAL_RANGE |
		     IBV_ACCESS_HUGETLB);
	if ((*access & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC)) &&
	    !(*access & IBV_ACCESS_LOCAL_WRITE))
		return -EINVAL;
	return 0;
}

static struct ibv_mr *
shim_reg_mr(struct ibv_pd *ibpd, void *addr, size_t length, uint64_t iova,
	    unsigned int access)
{
	struct shim_pd *pd = shim_pd(ibpd);
	struct rp_ctrl_slot s = { .op = RP_CTRL_MR_REG };
	struct shim_mr *mr;
	int ret;

	ret = shim_mr_access(&access);
	/* Implicit ODP (the whole address space) is not offered. */
	if (ret == 0 && (access & IBV_ACCESS_ON_DEMAND) && addr == NULL &&
	    length == SIZE_MAX)
		ret = -EOPNOTSUPP;
	if (ret < 0) {
		errno = -ret;
		return NULL;
	}
	mr = calloc(1, sizeof(*mr));
	if (mr == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	s.u.mr.pdn = pd->pdn;
	s.u.mr.access = access;
	s.u.mr.addr = (uintptr_t)addr;
	s.u.mr.length = length;
	s.u.mr.iova = iova;
	ret = shim_ctrl(shim_ctx(ibpd->context), &s);
	if (ret < 0) {
		free(mr);
		errno = -ret;
		return NULL;
	}
	mr->pdn = pd->pdn;
	mr->ibv.context = ibpd->context;
	mr->ibv.pd = ibpd;
	mr->ibv.addr = addr;
	mr->ibv.length = length;
	mr->ibv.handle = s.u.mr.lkey;
	mr->ibv.lkey = s.u.mr.lkey;
	mr->ibv.rkey = s.u.mr.rkey;
	return &mr->ibv;
}

#undef ibv_reg_mr
SHIM_EXPORT struct ibv_mr *
ibv_reg_mr(struct ibv_pd *pd, void *addr, size_t length, int access)
{
	return shim_reg_mr(pd, addr, length, (uintptr_t)addr,
			   (unsigned int)access);
}

#undef ibv_reg_mr_iova
SHIM_EXPORT struct ibv_mr *
ibv_reg_mr_iova(struct ibv_pd *pd, void *addr, size_t length, uint64_t iova,
		int access)
{
	return shim_reg_mr(pd, addr, length, iova, (unsigned int)access);
}

SHIM_EXPORT struct ibv_mr *
ibv_reg_mr_iova2(struct ibv_pd *pd, void *addr, size_t length, uint64_t iova,
		 unsigned int access)
{
	return shim_reg_mr(pd, addr, length, iova, access);
}

SHIM_EXPORT int
ibv_dereg_mr(struct ibv_mr *ibmr)
{
	struct shim_mr *mr = container_of(ibmr, struct shim_mr, ibv);
	struct rp_ctrl_slot s = { .op = RP_CTRL_MR_DEREG };
	int ret;

	s.u.mr.pdn = mr->pdn;
	s.u.mr.lkey = ibmr->lkey;
	s.u.mr.rkey = ibmr->rkey;
	ret = shim_ctrl(shim_ctx(ibmr->context), &s);
	if (ret < 0)
		return -ret;
	free(mr);
	return 0;
}

/*
 * ibv_rereg_mr(3): the engine changes the MR in place and keeps its keys;
 * a refused request leaves it as it was (IBV_REREG_MR_ERR_CMD, errno).
 */
SHIM_EXPORT int
ibv_rereg_mr(struct ibv_mr *ibmr, int flags, struct ibv_pd *ibpd, void *addr,
	     size_t length, int access)
{
	struct shim_mr *mr = container_of(ibmr, struct shim_mr, ibv);
	struct rp_ctrl_slot s = { .op = RP_CTRL_MR_REREG };
	unsigned int acc = (unsigned int)access;
	int ret;

	if (flags < 0 || ((unsigned int)flags & ~IBV_REREG_MR_FLAGS_SUPPORTED) ||
	    ((flags & IBV_REREG_MR_CHANGE_PD) &&
	     (ibpd == NULL || ibpd->context != ibmr->context)) ||
	    ((flags & IBV_REREG_MR_CHANGE_TRANSLATION) &&
	     (addr == NULL || length == 0)) ||
	    ((flags & IBV_REREG_MR_CHANGE_ACCESS) && shim_mr_access(&acc) < 0)) {
		errno = EINVAL;
		return IBV_REREG_MR_ERR_INPUT;
	}
	s.u.mr.lkey = ibmr->lkey;
	s.u.mr.flags = (uint32_t)flags;
	s.u.mr.pdn = (flags & IBV_REREG_MR_CHANGE_PD) ? shim_pd(ibpd)->pdn :
		mr->pdn;
	s.u.mr.access = acc;
	s.u.mr.addr = (uintptr_t)addr;
	s.u.mr.length = length;
	s.u.mr.iova = (uintptr_t)addr;
	ret = shim_ctrl(shim_ctx(ibmr->context), &s);
	if (ret < 0) {
		errno = -ret;
		return IBV_REREG_MR_ERR_CMD;
	}
	if (flags & IBV_REREG_MR_CHANGE_PD) {
		mr->pdn = s.u.mr.pdn;
		ibmr->pd = ibpd;
	}
	if (flags & IBV_REREG_MR_CHANGE_TRANSLATION) {
		ibmr->addr = addr;
		ibmr->length = length;
	}
	return 0;
}

/*
 * vctx->advise_mr, behind ibv_advise_mr(): prefetching an ODP range has
 * nothing to do, since the engine reads the application's memory through
 * its own mapping and no page is ever missing from a device's table.  The
 * advice is checked and accepted (ibv_advise_mr(3): a hint).
 */
int
shim_advise_mr(struct ibv_pd *ibpd, enum ibv_advise_mr_advice advice,
	       uint32_t flags, struct ibv_sge *sg_list, uint32_t num_sges)
{
	RTE_SET_USED(ibpd);
	if ((advice != IBV_ADVISE_MR_ADVICE_PREFETCH &&
	     advice != IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE &&
	     advice != IBV_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT) ||
	    (flags & ~(uint32_t)IBV_ADVISE_MR_FLAG_FLUSH) != 0 ||
	    sg_list == NULL || num_sges == 0)
		return EINVAL;
	return 0;
}

/* ------------------------------------------------------ memory windows */

/* context->ops.alloc_mw, behind ibv_alloc_mw(). */
struct ibv_mw *
shim_alloc_mw(struct ibv_pd *ibpd, enum ibv_mw_type type)
{
	struct rp_ctrl_slot s = { .op = RP_CTRL_MW_ALLOC };
	struct ibv_mw *mw;
	int ret;

	mw = calloc(1, sizeof(*mw));
	if (mw == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	s.u.mw.pdn = shim_pd(ibpd)->pdn;
	s.u.mw.type = type;
	ret = shim_ctrl(shim_ctx(ibpd->context), &s);
	if (ret < 0) {
		free(mw);
		errno = -ret;
		return NULL;
	}
	mw->context = ibpd->context;
	mw->pd = ibpd;
	mw->rkey = s.u.mw.rkey;
	mw->handle = s.u.mw.rkey;
	mw->type = type;
	return mw;
}

int
shim_dealloc_mw(struct ibv_mw *mw)
{
	struct rp_ctrl_slot s = { .op = RP_CTRL_MW_DEALLOC };
	int ret;

	s.u.mw.rkey = mw->rkey;
	ret = shim_ctrl(shim_ctx(mw->context), &s);
	if (ret < 0)
		return -ret;
	free(mw);
	return 0;
}

/*
 * context->ops.bind_mw, behind ibv_bind_mw() (type 1): a BIND_MW work
 * request with the next rkey, which mw->rkey takes once it is posted, as
 * rdma-core's providers do; the bind itself happens in SQ order.
 */
int
shim_bind_mw(struct ibv_qp *qp, struct ibv_mw *mw, struct ibv_mw_bind *bind)
{
	struct ibv_send_wr wr = {
		.wr_id = bind->wr_id,
		.opcode = IBV_WR_BIND_MW,
		.send_flags = bind->send_flags,
		.bind_mw = {
			.mw = mw,
			.rkey = ibv_inc_rkey(mw->rkey),
			.bind_info = bind->bind_info,
		},
	};
	struct ibv_send_wr *bad;
	int ret;

	ret = shim_post_send_wr(qp, &wr, &bad, true);
	if (ret == 0)
		mw->rkey = wr.bind_mw.rkey;
	return ret;
}
