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

/* Access flags as the kernel checks them (ib_check_mr_access()). */
static int
shim_mr_access_check(unsigned int access)
{
	if ((access & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC)) &&
	    !(access & IBV_ACCESS_LOCAL_WRITE))
		return -EINVAL;
	if (access & IBV_ACCESS_ON_DEMAND)
		return -EOPNOTSUPP;	/* no on-demand paging */
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

	/*
	 * Optional flags may be ignored (ibv_reg_mr(3)), and so may the
	 * huge page hint: rocepmd does.
	 */
	access &= ~((unsigned int)IBV_ACCESS_OPTIONAL_RANGE |
		    IBV_ACCESS_HUGETLB);
	ret = shim_mr_access_check(access);
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
