/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Protection domains and memory regions.
 *
 * Both are engine objects named by number: a PD by its pdn, an MR by its
 * lkey.  The engine reads and writes registered memory in this process
 * through the address given at registration; iova is what keys address.
 */

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "shim.h"

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ	22	/* Linux 5.14 */
#define MADV_POPULATE_WRITE	23
#endif

/* The process's MRs, for ibv_advise_mr() to check its SGEs against. */
static pthread_mutex_t shim_mr_lock = PTHREAD_MUTEX_INITIALIZER;
static struct shim_mr *shim_mr_list;

static void
shim_mr_link(struct shim_mr *mr)
{
	pthread_mutex_lock(&shim_mr_lock);
	mr->next = shim_mr_list;
	shim_mr_list = mr;
	pthread_mutex_unlock(&shim_mr_lock);
}

static void
shim_mr_unlink(struct shim_mr *mr)
{
	struct shim_mr **p;

	pthread_mutex_lock(&shim_mr_lock);
	for (p = &shim_mr_list; *p != NULL; p = &(*p)->next) {
		if (*p == mr) {
			*p = mr->next;
			break;
		}
	}
	pthread_mutex_unlock(&shim_mr_lock);
}

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

	/*
	 * Implicit ODP (NULL, SIZE_MAX, IBV_ACCESS_ON_DEMAND, iova 0): a key
	 * over the whole address space, the ibv_mr saying NULL and SIZE_MAX
	 * as mlx5's does; the engine reaches it through the kernel
	 * (rp_mem.c).  Attached processes are refused (EOPNOTSUPP).
	 */
	ret = shim_mr_access(&access);
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
	mr->access = access;
	mr->iova = iova;
	shim_mr_link(mr);
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
	shim_mr_unlink(mr);
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
		pthread_mutex_lock(&shim_mr_lock);
		ibmr->addr = addr;
		ibmr->length = length;
		mr->iova = (uintptr_t)addr;
		pthread_mutex_unlock(&shim_mr_lock);
	}
	if (flags & IBV_REREG_MR_CHANGE_ACCESS)
		mr->access = acc;
	return 0;
}

/* The MR of `pd`'s context `lkey` names, or NULL; under shim_mr_lock. */
static struct shim_mr *
shim_mr_find(const struct ibv_pd *pd, uint32_t lkey)
{
	for (struct shim_mr *mr = shim_mr_list; mr != NULL; mr = mr->next)
		if (mr->ibv.context == pd->context && mr->ibv.lkey == lkey)
			return mr;
	return NULL;
}

/* Whether the kernel knows MADV_POPULATE_READ (EINVAL is ambiguous). */
static bool
shim_populate_known(void)
{
	static int known = -1;	/* under shim_mr_lock */
	void *p;

	if (known < 0) {
		p = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			return false;
		known = madvise(p, 4096, MADV_POPULATE_READ) == 0;
		munmap(p, 4096);
	}
	return known == 1;
}

/*
 * Fault in [va, va + len) as a device's prefetch would (MADV_POPULATE_*):
 * EFAULT when part of it is not mapped, or not readable (writable, to
 * write): ENOMEM and EINVAL from a kernel that knows the advice.  An
 * older kernel leaves the hint unfollowed.
 */
static int
shim_mr_populate(uint64_t va, uint64_t len, bool write)
{
	uint64_t pg = (uint64_t)sysconf(_SC_PAGESIZE);
	uint64_t start = va & ~(pg - 1);

	if (len == 0)
		return 0;
	if (va + len < va || va + len + pg - 1 < va + len)
		return EFAULT;
	len = ((va + len + pg - 1) & ~(pg - 1)) - start;
	if (madvise((void *)(uintptr_t)start, len, write ?
		    MADV_POPULATE_WRITE : MADV_POPULATE_READ) == 0)
		return 0;
	if (errno == ENOMEM || errno == EFAULT ||
	    (errno == EINVAL && shim_populate_known()))
		return EFAULT;
	return 0;
}

/* One SGE of ibv_advise_mr(), under shim_mr_lock: mlx5's answers. */
static int
shim_advise_sge(struct ibv_pd *pd, enum ibv_advise_mr_advice advice,
		uint32_t flags, const struct ibv_sge *sge)
{
	struct shim_mr *mr = shim_mr_find(pd, sge->lkey);
	bool implicit;
	uint64_t off;

	/* Only an on-demand MR takes advice; of this PD; writable to
	 * prefetch for writing. */
	if (mr == NULL || !(mr->access & IBV_ACCESS_ON_DEMAND))
		return ENOENT;
	if (mr->ibv.pd != pd ||
	    (advice == IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE &&
	     !(mr->access & IBV_ACCESS_LOCAL_WRITE)))
		return EPERM;
	/* The range is looked at only when the caller waits (FLUSH). */
	if (!(flags & IBV_ADVISE_MR_FLAG_FLUSH))
		return 0;
	implicit = mr->ibv.addr == NULL && mr->ibv.length == SIZE_MAX;
	off = sge->addr - mr->iova;
	if (sge->addr < mr->iova || off > mr->ibv.length ||
	    sge->length > mr->ibv.length - off)
		return EFAULT;
	if (advice == IBV_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT)
		return 0;
	return shim_mr_populate(implicit ? sge->addr :
				(uintptr_t)mr->ibv.addr + off, sge->length,
				advice == IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE);
}

/*
 * vctx->advise_mr, behind ibv_advise_mr(): the engine reaches the
 * application's memory through its own mapping and no page is ever
 * missing from a device's table, so advice only checks, as the kernel's
 * mlx5 does: an unknown advice EOPNOTSUPP; a key that names no on-demand
 * MR ENOENT; an MR of another PD, or PREFETCH_WRITE of one without local
 * write, EPERM.  With IBV_ADVISE_MR_FLAG_FLUSH the call is synchronous:
 * a range outside the MR, or (but for PREFETCH_NO_FAULT) memory that is
 * not mapped, is EFAULT, and the pages are faulted in before it returns.
 */
int
shim_advise_mr(struct ibv_pd *ibpd, enum ibv_advise_mr_advice advice,
	       uint32_t flags, struct ibv_sge *sg_list, uint32_t num_sges)
{
	int ret = 0;

	if (advice != IBV_ADVISE_MR_ADVICE_PREFETCH &&
	    advice != IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE &&
	    advice != IBV_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT)
		return EOPNOTSUPP;
	if ((flags & ~(uint32_t)IBV_ADVISE_MR_FLAG_FLUSH) != 0 ||
	    sg_list == NULL || num_sges == 0)
		return EINVAL;
	pthread_mutex_lock(&shim_mr_lock);
	for (uint32_t i = 0; i < num_sges && ret == 0; i++)
		ret = shim_advise_sge(ibpd, advice, flags, &sg_list[i]);
	pthread_mutex_unlock(&shim_mr_lock);
	return ret;
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
