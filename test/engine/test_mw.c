/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rp_mw_test: memory windows and invalidation through the verbs API, one
 * process, two devices back to back (test/engine/two-ports.ini.in).
 *
 *   rp_mw_test CASE | list
 *
 * The window lives on rocepmd1 (QP b); QP a on rocepmd0 reaches it with
 * RDMA WRITE and READ.  Every access a window must refuse is checked as
 * the IBTA says a responder refuses it: a NAK the requester completes with
 * IBV_WC_REM_ACCESS_ERR, both QPs in ERR, the target memory untouched.
 */

#include <endian.h>
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/verbs.h>

#include "rp_testlib.h"

const char rt_prog[] = "rp_mw_test";

#define MW_BUF		8192u
#define MW_OFF		1024u		/* window start in the MR */
#define MW_LEN		2048u
#define MW_MR_ACCESS	(RT_ACCESS_ALL | IBV_ACCESS_MW_BIND)
#define MW_RW		(IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE)

struct mw_env {
	struct rt_dev d0, d1;
	struct rt_ep a, b;		/* a on rocepmd0, b on rocepmd1 */
	struct rt_buf src;		/* a's buffer */
	struct rt_buf tgt;		/* b's MR, windows bind to it */
	bool up;
};

static void
mw_pair(struct mw_env *e)
{
	rt_rc_pair(&e->a, &e->d0, &e->b, &e->d1, NULL);
	e->up = true;
}

static void
mw_unpair(struct mw_env *e)
{
	if (!e->up)
		return;
	rt_ep_destroy(&e->a);
	rt_ep_destroy(&e->b);
	e->up = false;
}

static void
mw_open(struct mw_env *e)
{
	memset(e, 0, sizeof(*e));
	rt_open2(&e->d0, &e->d1);
	RT_CHECK(e->d1.attr.device_cap_flags & IBV_DEVICE_MEM_WINDOW,
		 "device_cap_flags 0x%x: no IBV_DEVICE_MEM_WINDOW",
		 e->d1.attr.device_cap_flags);
	RT_CHECK(e->d1.attr.device_cap_flags & IBV_DEVICE_MEM_WINDOW_TYPE_2B,
		 "device_cap_flags 0x%x: no IBV_DEVICE_MEM_WINDOW_TYPE_2B",
		 e->d1.attr.device_cap_flags);
	RT_CHECK(e->d1.attr.max_mw > 0, "max_mw %d", e->d1.attr.max_mw);
	rt_buf_alloc(&e->src, &e->d0, MW_BUF, IBV_ACCESS_LOCAL_WRITE);
	rt_buf_alloc(&e->tgt, &e->d1, MW_BUF, MW_MR_ACCESS);
	mw_pair(e);
}

static void
mw_close(struct mw_env *e)
{
	mw_unpair(e);
	rt_buf_free(&e->src);
	rt_buf_free(&e->tgt);
	rt_close2(&e->d0, &e->d1);
}

/* RDMA WRITE len bytes from a into [raddr, +len) of the window: success. */
static void
mw_write_ok(struct mw_env *e, uint32_t rkey, size_t woff, size_t len)
{
	struct ibv_sge s = rt_sge(&e->src, 0, len);
	uint8_t *dst = e->tgt.p + MW_OFF + woff;

	rt_step("RDMA WRITE %zu B at window offset %zu, rkey 0x%x", len, woff,
		rkey);
	memset(e->tgt.p, RT_GUARD_BYTE, e->tgt.len);
	rt_fill_random(e->src.p, len);
	rt_post_send(&e->a, 1, IBV_WR_RDMA_WRITE, &s, 1, IBV_SEND_SIGNALED, 0,
		     (uintptr_t)dst, rkey);
	rt_expect_wc(e->a.scq, "WRITE through the window", 1, IBV_WC_SUCCESS,
		     IBV_WC_RDMA_WRITE);
	rt_check_data(dst, e->src.p, len, "written through the window");
	rt_check_guard(e->tgt.p, (size_t)(dst - e->tgt.p), "MR before");
	rt_check_guard(dst + len, e->tgt.len - (size_t)(dst - e->tgt.p) - len,
		       "MR after");
}

/* RDMA READ len bytes of the window at woff into a's buffer: success. */
static void
mw_read_ok(struct mw_env *e, uint32_t rkey, size_t woff, size_t len)
{
	struct ibv_sge s = rt_sge(&e->src, 0, len);
	uint8_t *from = e->tgt.p + MW_OFF + woff;
	struct ibv_wc wc;

	rt_step("RDMA READ %zu B at window offset %zu, rkey 0x%x", len, woff,
		rkey);
	rt_fill_random(from, len);
	memset(e->src.p, 0, len);
	rt_post_send(&e->a, 2, IBV_WR_RDMA_READ, &s, 1, IBV_SEND_SIGNALED, 0,
		     (uintptr_t)from, rkey);
	wc = rt_expect_wc(e->a.scq, "READ through the window", 2,
			  IBV_WC_SUCCESS, IBV_WC_RDMA_READ);
	RT_CHECK(wc.byte_len == len, "READ byte_len %u, asked %zu",
		 wc.byte_len, len);
	rt_check_data(e->src.p, from, len, "read through the window");
}

/*
 * An access the responder must refuse: REM_ACCESS_ERR, both QPs in ERR,
 * the MR untouched.  The pair is spent: a new one is made.
 */
static void
mw_refused(struct mw_env *e, enum ibv_wr_opcode op, uint64_t raddr,
	   uint32_t rkey, size_t len, const char *what)
{
	struct ibv_sge s = rt_sge(&e->src, 0, len);

	rt_step("%s: refused (REM_ACCESS_ERR)", what);
	memset(e->tgt.p, RT_GUARD_BYTE, e->tgt.len);
	rt_fill_random(e->src.p, len);
	rt_post_send(&e->a, 3, op, &s, 1, IBV_SEND_SIGNALED, 0, raddr, rkey);
	rt_expect_wc(e->a.scq, what, 3, IBV_WC_REM_ACCESS_ERR, -1);
	rt_expect_qp_state(&e->a, IBV_QPS_ERR, "requester");
	rt_expect_qp_state(&e->b, IBV_QPS_ERR, "responder");
	rt_check_guard(e->tgt.p, e->tgt.len, "MR behind the window");
	mw_unpair(e);
	mw_pair(e);
}

static struct ibv_mw *
mw_alloc(struct mw_env *e, enum ibv_mw_type type)
{
	struct ibv_mw *mw = ibv_alloc_mw(e->d1.pd, type);

	RT_CHECK(mw != NULL, "ibv_alloc_mw(type %d): %s", (int)type,
		 strerror(errno));
	RT_CHECK(mw->type == type && mw->pd == e->d1.pd &&
		 mw->context == e->d1.ctx, "ibv_alloc_mw: mw fields");
	return mw;
}

/* ibv_bind_mw() of a type 1 window on b, and its completion. */
static void
mw_bind1(struct mw_env *e, struct ibv_mw *mw, struct ibv_mr *mr,
	 uint64_t off, uint64_t len, unsigned int access)
{
	struct ibv_mw_bind bind = {
		.wr_id = 40,
		.send_flags = IBV_SEND_SIGNALED,
		.bind_info = {
			.mr = mr,
			.addr = mr != NULL ? (uintptr_t)e->tgt.p + off : 0,
			.length = len,
			.mw_access_flags = access,
		},
	};
	uint32_t old = mw->rkey;
	int ret;

	rt_step("ibv_bind_mw type 1: MR offset %" PRIu64 ", %" PRIu64
		" B, access 0x%x", off, len, access);
	ret = ibv_bind_mw(e->b.qp, mw, &bind);
	RT_CHECK(ret == 0, "ibv_bind_mw: %s", strerror(ret));
	RT_CHECK(mw->rkey == ibv_inc_rkey(old), "mw->rkey 0x%x after the "
		 "bind, 0x%x before: not the next key", mw->rkey, old);
	rt_expect_wc(e->b.scq, "bind", 40, IBV_WC_SUCCESS, IBV_WC_BIND_MW);
}

/* IBV_WR_BIND_MW of a type 2 window at `addr`, posted on b: the rc. */
static int
mw_post_bind2_at(struct mw_env *e, struct ibv_mw *mw, uint32_t rkey,
		 struct ibv_mr *mr, uint64_t addr, uint64_t len,
		 unsigned int access, uint64_t wr_id)
{
	struct ibv_send_wr wr, *bad = NULL;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = wr_id;
	wr.opcode = IBV_WR_BIND_MW;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.bind_mw.mw = mw;
	wr.bind_mw.rkey = rkey;
	wr.bind_mw.bind_info.mr = mr;
	wr.bind_mw.bind_info.addr = addr;
	wr.bind_mw.bind_info.length = len;
	wr.bind_mw.bind_info.mw_access_flags = access;
	return ibv_post_send(e->b.qp, &wr, &bad);
}

/* The same at offset `off` of the target buffer. */
static int
mw_post_bind2(struct mw_env *e, struct ibv_mw *mw, uint32_t rkey,
	      struct ibv_mr *mr, uint64_t off, uint64_t len,
	      unsigned int access, uint64_t wr_id)
{
	return mw_post_bind2_at(e, mw, rkey, mr, (uintptr_t)e->tgt.p + off,
				len, access, wr_id);
}

static void
mw_bind2(struct mw_env *e, struct ibv_mw *mw, uint32_t rkey,
	 unsigned int access)
{
	int ret;

	rt_step("IBV_WR_BIND_MW type 2, rkey 0x%x, access 0x%x", rkey, access);
	ret = mw_post_bind2(e, mw, rkey, e->tgt.mr, MW_OFF, MW_LEN, access, 41);
	RT_CHECK(ret == 0, "ibv_post_send(BIND_MW): %s", strerror(ret));
	rt_expect_wc(e->b.scq, "bind", 41, IBV_WC_SUCCESS, IBV_WC_BIND_MW);
}

static void
mw_local_inv(struct rt_ep *ep, uint32_t rkey, enum ibv_wc_status st)
{
	rt_post_send(ep, 42, IBV_WR_LOCAL_INV, NULL, 0, IBV_SEND_SIGNALED, rkey,
		     0, 0);
	rt_expect_wc(ep->scq, "LOCAL_INV", 42, st,
		     st == IBV_WC_SUCCESS ? IBV_WC_LOCAL_INV : -1);
}

static void
mw_dealloc(struct ibv_mw *mw)
{
	int ret = ibv_dealloc_mw(mw);

	RT_CHECK(ret == 0, "ibv_dealloc_mw: %s", strerror(ret));
}

/* ------------------------------------------------------------- cases */

static void
rt_case_mw_type1(void)
{
	struct mw_env e;
	struct ibv_mw *mw;
	uintptr_t win;
	int ret;

	mw_open(&e);
	win = (uintptr_t)e.tgt.p + MW_OFF;
	mw = mw_alloc(&e, IBV_MW_TYPE_1);
	mw_bind1(&e, mw, e.tgt.mr, MW_OFF, MW_LEN, MW_RW);
	mw_write_ok(&e, mw->rkey, 0, MW_LEN);
	mw_write_ok(&e, mw->rkey, 100, 1);
	mw_read_ok(&e, mw->rkey, 7, 1500);

	rt_step("ibv_dereg_mr of the MR a window is bound to: EBUSY");
	ret = ibv_dereg_mr(e.tgt.mr);
	RT_CHECK(ret == EBUSY, "ibv_dereg_mr with a bound window: %s, "
		 "expected EBUSY", strerror(ret));
	rt_step("ibv_bind_mw of a type 1 window through ibv_post_send: "
		"EINVAL");
	ret = mw_post_bind2(&e, mw, ibv_inc_rkey(mw->rkey), e.tgt.mr,
			    MW_OFF, MW_LEN, MW_RW, 43);
	RT_CHECK(ret == EINVAL, "post_send(BIND_MW) of a type 1 window: %s",
		 strerror(ret));

	mw_refused(&e, IBV_WR_RDMA_WRITE, win + MW_LEN - 10, mw->rkey, 100,
		   "WRITE running past the window's end");
	mw_refused(&e, IBV_WR_RDMA_READ, win - 8, mw->rkey, 16,
		   "READ starting before the window");
	mw_refused(&e, IBV_WR_RDMA_WRITE, win, e.tgt.mr->rkey ^ 0x80, 16,
		   "WRITE with a wrong rkey");

	/* A type 1 window binds again where it is: read-only now. */
	mw_bind1(&e, mw, e.tgt.mr, MW_OFF, MW_LEN, IBV_ACCESS_REMOTE_READ);
	mw_read_ok(&e, mw->rkey, 0, 64);
	mw_refused(&e, IBV_WR_RDMA_WRITE, win, mw->rkey, 64,
		   "WRITE through a read-only window");

	/* Zero length unbinds: nothing through the window any more. */
	mw_bind1(&e, mw, NULL, 0, 0, 0);
	mw_refused(&e, IBV_WR_RDMA_READ, win, mw->rkey, 64,
		   "READ through an unbound window");
	rt_step("the MR's own rkey still works");
	e.tgt.p[0] = 0;
	{
		struct ibv_sge s = rt_sge(&e.src, 0, 64);

		rt_fill_random(e.src.p, 64);
		rt_post_send(&e.a, 5, IBV_WR_RDMA_WRITE, &s, 1,
			     IBV_SEND_SIGNALED, 0, win, e.tgt.mr->rkey);
		rt_expect_wc(e.a.scq, "WRITE with the MR's rkey", 5,
			     IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
		rt_check_data((void *)win, e.src.p, 64, "WRITE with the MR's "
			      "rkey");
	}
	mw_dealloc(mw);
	mw_close(&e);
}

static void
rt_case_mw_type2(void)
{
	struct mw_env e;
	struct ibv_mw *mw;
	uintptr_t win;
	uint32_t k1, k2;
	int ret;

	mw_open(&e);
	win = (uintptr_t)e.tgt.p + MW_OFF;
	mw = mw_alloc(&e, IBV_MW_TYPE_2);
	rt_step("ibv_bind_mw of a type 2 window: EINVAL (verbs.h)");
	{
		struct ibv_mw_bind bind = { .bind_info = { .mr = e.tgt.mr } };

		ret = ibv_bind_mw(e.b.qp, mw, &bind);
		RT_CHECK(ret == EINVAL, "ibv_bind_mw(type 2): %s",
			 strerror(ret));
	}
	rt_step("IBV_WR_BIND_MW whose rkey names another window: EINVAL");
	ret = mw_post_bind2(&e, mw, mw->rkey + 0x100, e.tgt.mr, MW_OFF,
			    MW_LEN, MW_RW, 44);
	RT_CHECK(ret == EINVAL, "post_send(BIND_MW, foreign rkey): %s",
		 strerror(ret));

	k1 = ibv_inc_rkey(mw->rkey);
	mw_bind2(&e, mw, k1, MW_RW);
	mw_write_ok(&e, k1, 0, MW_LEN);
	mw_read_ok(&e, k1, 1000, 1048);
	mw_local_inv(&e.b, k1, IBV_WC_SUCCESS);
	mw_refused(&e, IBV_WR_RDMA_WRITE, win, k1, 64,
		   "WRITE after LOCAL_INV");

	/* Free again: it binds with a new key, and the old one is dead. */
	k2 = ibv_inc_rkey(k1);
	mw_bind2(&e, mw, k2, MW_RW);
	mw_write_ok(&e, k2, 64, 64);
	mw_refused(&e, IBV_WR_RDMA_READ, win, k1, 64,
		   "READ with the window's previous rkey");

	/* Only the QP that bound it reaches it: a second pair is refused. */
	k2 = ibv_inc_rkey(k2);
	mw_bind2(&e, mw, k2, MW_RW);
	{
		struct mw_env o = e;

		rt_rc_pair(&o.a, &e.d0, &o.b, &e.d1, NULL);
		mw_refused(&o, IBV_WR_RDMA_WRITE, win, k2, 64,
			   "WRITE to a type 2 window bound through another QP");
		mw_unpair(&o);
	}
	mw_write_ok(&e, k2, 0, 64);

	/* Destroying that QP frees the window: it binds again. */
	mw_unpair(&e);
	mw_pair(&e);
	mw_bind2(&e, mw, ibv_inc_rkey(k2), MW_RW);
	mw_refused(&e, IBV_WR_RDMA_WRITE, win, k2, 64,
		   "WRITE with the key of before the QP was destroyed");
	mw_dealloc(mw);
	mw_close(&e);
}

/* Binds and invalidations the requester must fail: the QP goes to ERR. */
static void
rt_case_mw_bind_err(void)
{
	struct mw_env e;
	struct ibv_mw *mw;
	struct rt_buf nobind;
	uint32_t k;
	int ret;

	mw_open(&e);
	mw = mw_alloc(&e, IBV_MW_TYPE_2);
	rt_buf_alloc(&nobind, &e.d1, 4096, RT_ACCESS_ALL);

	rt_step("BIND_MW to an MR without IBV_ACCESS_MW_BIND: MW_BIND_ERR");
	k = ibv_inc_rkey(mw->rkey);
	ret = mw_post_bind2(&e, mw, k, nobind.mr, 0, 0, MW_RW, 45);
	RT_CHECK(ret == 0, "post_send(BIND_MW): %s", strerror(ret));
	rt_expect_wc(e.b.scq, "bind to an MR without MW_BIND", 45,
		     IBV_WC_MW_BIND_ERR, -1);
	rt_expect_qp_state(&e.b, IBV_QPS_ERR, "after MW_BIND_ERR");
	mw_unpair(&e);
	mw_pair(&e);

	rt_step("BIND_MW past the MR's end: MW_BIND_ERR");
	ret = mw_post_bind2(&e, mw, k, e.tgt.mr, MW_BUF - 16, 32, MW_RW, 46);
	RT_CHECK(ret == 0, "post_send(BIND_MW): %s", strerror(ret));
	rt_expect_wc(e.b.scq, "bind past the MR", 46, IBV_WC_MW_BIND_ERR, -1);
	mw_unpair(&e);
	mw_pair(&e);

	rt_step("BIND_MW of a type 2 window already bound: MW_BIND_ERR");
	mw_bind2(&e, mw, k, MW_RW);
	ret = mw_post_bind2(&e, mw, ibv_inc_rkey(k), e.tgt.mr, MW_OFF, 64,
			    MW_RW, 47);
	RT_CHECK(ret == 0, "post_send(BIND_MW): %s", strerror(ret));
	rt_expect_wc(e.b.scq, "second bind", 47, IBV_WC_MW_BIND_ERR, -1);
	mw_unpair(&e);
	mw_pair(&e);

	rt_step("LOCAL_INV of an MR's rkey (no fast-registered MR): error");
	mw_local_inv(&e.b, e.tgt.mr->rkey, IBV_WC_MW_BIND_ERR);
	rt_expect_qp_state(&e.b, IBV_QPS_ERR, "after a failed LOCAL_INV");

	rt_buf_free(&nobind);
	mw_dealloc(mw);
	mw_close(&e);
}

/*
 * The target buffer registered again with IBV_ACCESS_LOCAL_WRITE |
 * IBV_ACCESS_MW_BIND only: windows give the remote rights, the MR none.
 */
#define MW_MR_LOCAL	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND)

static void
mw_tgt_local(struct mw_env *e)
{
	int ret = ibv_dereg_mr(e->tgt.mr);

	RT_CHECK(ret == 0, "ibv_dereg_mr: %s", strerror(ret));
	e->tgt.mr = ibv_reg_mr(e->d1.pd, e->tgt.p, e->tgt.len, MW_MR_LOCAL);
	RT_CHECK(e->tgt.mr != NULL, "ibv_reg_mr(LOCAL_WRITE | MW_BIND): %s",
		 strerror(errno));
}

/* A bind posted (rc 0) that completes with MW_BIND_ERR; a new pair. */
static void
mw_bind_err(struct mw_env *e, int ret, uint64_t wr_id, const char *what)
{
	RT_CHECK(ret == 0, "%s: post: %s", what, strerror(ret));
	rt_expect_wc(e->b.scq, what, wr_id, IBV_WC_MW_BIND_ERR, -1);
	rt_expect_qp_state(&e->b, IBV_QPS_ERR, "after MW_BIND_ERR");
	mw_unpair(e);
	mw_pair(e);
}

/* ibv_bind_mw() of a type 1 window that must complete MW_BIND_ERR. */
static void
mw_bind1_err(struct mw_env *e, struct ibv_mw *mw, struct ibv_mr *mr,
	     uint64_t addr, uint64_t len, unsigned int access,
	     const char *what)
{
	struct ibv_mw_bind bind = {
		.wr_id = 48,
		.send_flags = IBV_SEND_SIGNALED,
		.bind_info = { .mr = mr, .addr = addr, .length = len,
			       .mw_access_flags = access },
	};

	rt_step("%s: MW_BIND_ERR", what);
	mw_bind_err(e, ibv_bind_mw(e->b.qp, mw, &bind), 48, what);
}

/* IBV_WR_BIND_MW of a type 2 window that must complete MW_BIND_ERR. */
static void
mw_bind2_err(struct mw_env *e, struct ibv_mw *mw, struct ibv_mr *mr,
	     uint64_t addr, uint64_t len, unsigned int access,
	     const char *what)
{
	rt_step("%s: MW_BIND_ERR", what);
	mw_bind_err(e, mw_post_bind2_at(e, mw, ibv_inc_rkey(mw->rkey), mr,
					addr, len, access, 49), 49, what);
}

/*
 * The bind rules (IBTA 10.6.7, C10-72..75, o10-36.2.2, o10-37.2.40; the
 * kernel's rxe_check_bind_mw()): the MR must allow binding and, for a
 * window with remote write or atomic rights, local write; it needs no
 * remote right of its own.
 */
static void
rt_case_mw_bind_rules(void)
{
	struct mw_env e;
	struct ibv_mw *mw1, *mw2;
	struct ibv_mr *mr;
	struct ibv_pd *pd2;
	uintptr_t win;
	uint32_t k;
	int ret;

	mw_open(&e);
	mw_tgt_local(&e);
	win = (uintptr_t)e.tgt.p + MW_OFF;
	mw1 = mw_alloc(&e, IBV_MW_TYPE_1);
	mw2 = mw_alloc(&e, IBV_MW_TYPE_2);
	mw_refused(&e, IBV_WR_RDMA_WRITE, win, e.tgt.mr->rkey, 64,
		   "WRITE with the rkey of an MR without remote rights");

	/* The case, type 1: LOCAL_WRITE | MW_BIND, REMOTE_WRITE. */
	mw_bind1(&e, mw1, e.tgt.mr, MW_OFF, MW_LEN, IBV_ACCESS_REMOTE_WRITE);
	mw_write_ok(&e, mw1->rkey, 0, MW_LEN);
	mw_refused(&e, IBV_WR_RDMA_READ, win, mw1->rkey, 64,
		   "READ through a write-only window");
	mw_bind1(&e, mw1, e.tgt.mr, MW_OFF, MW_LEN, MW_RW);
	mw_write_ok(&e, mw1->rkey, 10, 100);
	mw_read_ok(&e, mw1->rkey, 0, MW_LEN);
	mw_bind1_err(&e, mw1, e.tgt.mr, win, MW_LEN,
		     MW_RW | IBV_ACCESS_ZERO_BASED,
		     "type 1 window zero based (o10-36.2.2)");
	mw_bind1(&e, mw1, NULL, 0, 0, 0);
	mw_refused(&e, IBV_WR_RDMA_WRITE, win, mw1->rkey, 64,
		   "WRITE through a type 1 window unbound by a zero-length "
		   "bind");

	/* The same, type 2 through IBV_WR_BIND_MW. */
	k = ibv_inc_rkey(mw2->rkey);
	mw_bind2(&e, mw2, k, IBV_ACCESS_REMOTE_WRITE);
	mw2->rkey = k;
	mw_write_ok(&e, k, 0, MW_LEN);
	mw_local_inv(&e.b, k, IBV_WC_SUCCESS);

	mw_bind2_err(&e, mw2, e.tgt.mr, win, 0, MW_RW,
		     "type 2 bind of zero length (o10-37.2.40)");
	mw_bind2_err(&e, mw2, NULL, 0, 0, MW_RW,
		     "type 2 bind without an MR (o10-37.2.40)");
	mw_bind2_err(&e, mw2, e.tgt.mr, win, MW_LEN,
		     MW_RW | IBV_ACCESS_LOCAL_WRITE,
		     "window access with a local right");
	mw_bind2_err(&e, mw2, e.tgt.mr, (uintptr_t)e.tgt.p - 1, 64, MW_RW,
		     "window starting before the MR (C10-75)");
	mw_bind2_err(&e, mw2, e.tgt.mr, win, UINT64_MAX - win + 2, MW_RW,
		     "window whose end wraps around (C10-75)");

	/* A zero-based type 2 window: its rkey addresses from 0. */
	rt_step("type 2 window zero based: WRITE at va 16 lands at MR "
		"offset %u", MW_OFF + 16);
	k = ibv_inc_rkey(mw2->rkey);
	ret = mw_post_bind2(&e, mw2, k, e.tgt.mr, MW_OFF, MW_LEN,
			    MW_RW | IBV_ACCESS_ZERO_BASED, 41);
	RT_CHECK(ret == 0, "post_send(BIND_MW): %s", strerror(ret));
	rt_expect_wc(e.b.scq, "zero-based bind", 41, IBV_WC_SUCCESS,
		     IBV_WC_BIND_MW);
	mw2->rkey = k;
	{
		struct ibv_sge s = rt_sge(&e.src, 0, 64);

		memset(e.tgt.p, RT_GUARD_BYTE, e.tgt.len);
		rt_fill_random(e.src.p, 64);
		rt_post_send(&e.a, 7, IBV_WR_RDMA_WRITE, &s, 1,
			     IBV_SEND_SIGNALED, 0, 16, k);
		rt_expect_wc(e.a.scq, "WRITE at va 16", 7, IBV_WC_SUCCESS,
			     IBV_WC_RDMA_WRITE);
		rt_check_data(e.tgt.p + MW_OFF + 16, e.src.p, 64,
			      "WRITE through a zero-based window");
		rt_check_guard(e.tgt.p, MW_OFF + 16, "MR before");
	}
	mw_refused(&e, IBV_WR_RDMA_WRITE, MW_LEN - 8, k, 16,
		   "WRITE past a zero-based window's end");
	/* (the new pair's QP: the window was freed with the old one) */

	/* C10-74: remote write or atomic needs local write on the MR. */
	mr = ibv_reg_mr(e.d1.pd, e.tgt.p, e.tgt.len, IBV_ACCESS_MW_BIND);
	RT_CHECK(mr != NULL, "ibv_reg_mr(MW_BIND): %s", strerror(errno));
	mw_bind2_err(&e, mw2, mr, win, MW_LEN, IBV_ACCESS_REMOTE_WRITE,
		     "REMOTE_WRITE window over an MR without LOCAL_WRITE "
		     "(C10-74)");
	mw_bind2_err(&e, mw2, mr, win, MW_LEN, IBV_ACCESS_REMOTE_ATOMIC,
		     "REMOTE_ATOMIC window over an MR without LOCAL_WRITE "
		     "(C10-74)");
	mw_bind1_err(&e, mw1, mr, win, MW_LEN, IBV_ACCESS_REMOTE_WRITE,
		     "type 1 REMOTE_WRITE window over an MR without "
		     "LOCAL_WRITE (C10-74)");
	rt_step("REMOTE_READ window over an MR with MW_BIND only: bound");
	k = ibv_inc_rkey(mw2->rkey);
	ret = mw_post_bind2_at(&e, mw2, k, mr, win, MW_LEN,
			       IBV_ACCESS_REMOTE_READ, 41);
	RT_CHECK(ret == 0, "post_send(BIND_MW): %s", strerror(ret));
	rt_expect_wc(e.b.scq, "read-only bind", 41, IBV_WC_SUCCESS,
		     IBV_WC_BIND_MW);
	mw2->rkey = k;
	mw_read_ok(&e, k, 0, 256);
	mw_local_inv(&e.b, k, IBV_WC_SUCCESS);
	ret = ibv_dereg_mr(mr);
	RT_CHECK(ret == 0, "ibv_dereg_mr: %s", strerror(ret));

	/* An MR with IBV_ACCESS_ZERO_BASED takes no window (rxe). */
	mr = ibv_reg_mr(e.d1.pd, e.tgt.p, e.tgt.len,
			MW_MR_LOCAL | IBV_ACCESS_ZERO_BASED);
	if (mr != NULL) {
		mw_bind2_err(&e, mw2, mr, win, MW_LEN, MW_RW,
			     "window over a zero-based MR");
		ret = ibv_dereg_mr(mr);
		RT_CHECK(ret == 0, "ibv_dereg_mr: %s", strerror(ret));
	}

	/* C10-72: the MR, the window and the QP share one PD. */
	pd2 = ibv_alloc_pd(e.d1.ctx);
	RT_CHECK(pd2 != NULL, "ibv_alloc_pd: %s", strerror(errno));
	mr = ibv_reg_mr(pd2, e.tgt.p, e.tgt.len, MW_MR_LOCAL);
	RT_CHECK(mr != NULL, "ibv_reg_mr(pd2): %s", strerror(errno));
	mw_bind2_err(&e, mw2, mr, win, MW_LEN, MW_RW,
		     "window over an MR of another PD (C10-72)");
	rt_step("type 1 window over an MR of another PD: EPERM (verbs.h)");
	{
		struct ibv_mw_bind bind = {
			.wr_id = 48,
			.bind_info = { .mr = mr, .addr = win,
				       .length = MW_LEN,
				       .mw_access_flags = MW_RW },
		};

		ret = ibv_bind_mw(e.b.qp, mw1, &bind);
		RT_CHECK(ret == EPERM, "ibv_bind_mw(MR of another PD): %s",
			 strerror(ret));
	}
	ret = ibv_dereg_mr(mr);
	RT_CHECK(ret == 0, "ibv_dereg_mr: %s", strerror(ret));
	ret = ibv_dealloc_pd(pd2);
	RT_CHECK(ret == 0, "ibv_dealloc_pd: %s", strerror(ret));

	mw_dealloc(mw1);
	mw_dealloc(mw2);
	mw_close(&e);
}

/* The ibv_wr_*() API: ibv_wr_bind_mw() and ibv_wr_local_inv(). */
static void
rt_case_mw_wr_api(void)
{
	struct ibv_qp_init_attr_ex ia;
	struct ibv_qp_ex *qpx;
	struct mw_env e;
	struct ibv_mw *mw;
	struct ibv_mw_bind_info bi;
	struct ibv_qp *plain;
	uint32_t k;
	int ret;

	mw_open(&e);
	/* b's QP again, created with the extended API. */
	mw_unpair(&e);
	rt_ep_create(&e.a, &e.d0, &(struct rt_ep_opts){ .type = IBV_QPT_RC });
	rt_ep_create(&e.b, &e.d1, &(struct rt_ep_opts){ .type = IBV_QPT_RC });
	plain = e.b.qp;
	memset(&ia, 0, sizeof(ia));
	ia.send_cq = e.b.scq;
	ia.recv_cq = e.b.rcq;
	ia.qp_type = IBV_QPT_RC;
	ia.cap.max_send_wr = RT_WR;
	ia.cap.max_recv_wr = RT_WR;
	ia.cap.max_send_sge = 1;
	ia.cap.max_recv_sge = 1;
	ia.pd = e.d1.pd;
	ia.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
	ia.send_ops_flags = IBV_QP_EX_WITH_BIND_MW | IBV_QP_EX_WITH_LOCAL_INV |
		IBV_QP_EX_WITH_SEND;
	e.b.qp = ibv_create_qp_ex(e.d1.ctx, &ia);
	RT_CHECK(e.b.qp != NULL, "ibv_create_qp_ex(BIND_MW | LOCAL_INV): %s",
		 strerror(errno));
	ret = ibv_destroy_qp(plain);
	RT_CHECK(ret == 0, "ibv_destroy_qp: %s", strerror(ret));
	rt_rc_connect(&e.a, &e.b, &rt_rc_default);
	e.up = true;
	qpx = ibv_qp_to_qp_ex(e.b.qp);
	/* The window gives the remote rights, the MR has none (issue 26). */
	mw_tgt_local(&e);

	mw = mw_alloc(&e, IBV_MW_TYPE_2);
	k = ibv_inc_rkey(mw->rkey);
	rt_step("ibv_wr_bind_mw type 2, rkey 0x%x, over an MR with "
		"LOCAL_WRITE | MW_BIND only", k);
	bi = (struct ibv_mw_bind_info){
		.mr = e.tgt.mr,
		.addr = (uintptr_t)e.tgt.p + MW_OFF,
		.length = MW_LEN,
		.mw_access_flags = MW_RW,
	};
	ibv_wr_start(qpx);
	qpx->wr_id = 50;
	qpx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_bind_mw(qpx, mw, k, &bi);
	ret = ibv_wr_complete(qpx);
	RT_CHECK(ret == 0, "ibv_wr_complete(bind_mw): %s", strerror(ret));
	rt_expect_wc(e.b.scq, "wr_bind_mw", 50, IBV_WC_SUCCESS,
		     IBV_WC_BIND_MW);
	mw_write_ok(&e, k, 0, 512);
	mw_read_ok(&e, k, 512, 512);

	rt_step("ibv_wr_local_inv 0x%x", k);
	ibv_wr_start(qpx);
	qpx->wr_id = 51;
	qpx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_local_inv(qpx, k);
	ret = ibv_wr_complete(qpx);
	RT_CHECK(ret == 0, "ibv_wr_complete(local_inv): %s", strerror(ret));
	rt_expect_wc(e.b.scq, "wr_local_inv", 51, IBV_WC_SUCCESS,
		     IBV_WC_LOCAL_INV);
	/* refused: the window is free; mw_refused's new pair is plain. */
	mw_refused(&e, IBV_WR_RDMA_WRITE, (uintptr_t)e.tgt.p + MW_OFF, k, 64,
		   "WRITE after ibv_wr_local_inv");
	mw_dealloc(mw);
	mw_close(&e);
}

/* SEND with Invalidate: the responder's key goes, its CQE says which. */
static void
rt_case_send_inv(void)
{
	struct mw_env e;
	struct ibv_mw *mw;
	struct ibv_sge s;
	struct ibv_wc wc;
	struct rt_buf rbuf;
	uint32_t k;

	mw_open(&e);
	rt_buf_alloc(&rbuf, &e.d1, 4096, IBV_ACCESS_LOCAL_WRITE);
	mw = mw_alloc(&e, IBV_MW_TYPE_2);
	k = ibv_inc_rkey(mw->rkey);
	mw_bind2(&e, mw, k, MW_RW);
	mw_write_ok(&e, k, 0, 256);

	rt_step("SEND_WITH_INV 100 B naming the window's rkey 0x%x", k);
	s = rt_sge(&rbuf, 0, 4096);
	rt_post_recv(&e.b, 60, &s, 1);
	rt_fill_random(e.src.p, 100);
	s = rt_sge(&e.src, 0, 100);
	rt_post_send(&e.a, 61, IBV_WR_SEND_WITH_INV, &s, 1, IBV_SEND_SIGNALED,
		     k, 0, 0);
	rt_expect_wc(e.a.scq, "SEND_WITH_INV", 61, IBV_WC_SUCCESS,
		     IBV_WC_SEND);
	wc = rt_expect_wc(e.b.rcq, "receive of SEND_WITH_INV", 60,
			  IBV_WC_SUCCESS, IBV_WC_RECV);
	RT_CHECK(wc.wc_flags & IBV_WC_WITH_INV, "wc_flags 0x%x: no "
		 "IBV_WC_WITH_INV", wc.wc_flags);
	RT_CHECK(!(wc.wc_flags & IBV_WC_WITH_IMM), "wc_flags 0x%x: "
		 "WITH_IMM on a SEND_WITH_INV", wc.wc_flags);
	RT_CHECK(wc.invalidated_rkey == k, "invalidated_rkey 0x%x, sent 0x%x",
		 wc.invalidated_rkey, k);
	RT_CHECK(wc.byte_len == 100, "byte_len %u", wc.byte_len);
	rt_check_data(rbuf.p, e.src.p, 100, "SEND_WITH_INV payload");
	mw_refused(&e, IBV_WR_RDMA_WRITE, (uintptr_t)e.tgt.p + MW_OFF, k, 64,
		   "WRITE after the peer's SEND_WITH_INV");

	rt_step("SEND_WITH_INV naming an MR's rkey: REM_INV_REQ_ERR both "
		"sides");
	s = rt_sge(&rbuf, 0, 4096);
	rt_post_recv(&e.b, 62, &s, 1);
	s = rt_sge(&e.src, 0, 8);
	rt_post_send(&e.a, 63, IBV_WR_SEND_WITH_INV, &s, 1, IBV_SEND_SIGNALED,
		     e.tgt.mr->rkey, 0, 0);
	rt_expect_wc(e.a.scq, "SEND_WITH_INV of an MR", 63,
		     IBV_WC_REM_INV_REQ_ERR, -1);
	rt_expect_wc(e.b.rcq, "its receive", 62, IBV_WC_REM_INV_REQ_ERR, -1);
	rt_expect_qp_state(&e.b, IBV_QPS_ERR, "responder");

	rt_buf_free(&rbuf);
	mw_dealloc(mw);
	mw_close(&e);
}

/*
 * A stale rkey stays dead (issue 24): an MR's slot is taken again by the
 * next registration, and 256 registrations brought an 8-bit generation
 * back to the first key.  The last MR covers the same buffer with every
 * right: a WRITE or READ through the first rkey must still be refused.
 */
#define RKEY_REUSE_CYCLES	256u

static void
rt_case_rkey_reuse(void)
{
	struct mw_env e;
	struct ibv_mr *mr;
	uint32_t first, again = 0;
	int ret;

	mw_open(&e);
	rt_step("register an MR on rocepmd1, note its rkey, deregister it");
	mr = ibv_reg_mr(e.d1.pd, e.tgt.p, e.tgt.len, RT_ACCESS_ALL);
	RT_CHECK(mr != NULL, "ibv_reg_mr: %s", strerror(errno));
	first = mr->rkey;
	ret = ibv_dereg_mr(mr);
	RT_CHECK(ret == 0, "ibv_dereg_mr: %s", strerror(ret));

	rt_step("%u registrations of the same buffer in the freed slot, the "
		"last one kept", RKEY_REUSE_CYCLES);
	for (uint32_t i = 1; i <= RKEY_REUSE_CYCLES; i++) {
		mr = ibv_reg_mr(e.d1.pd, e.tgt.p, e.tgt.len, RT_ACCESS_ALL);
		RT_CHECK(mr != NULL, "ibv_reg_mr %u: %s", i, strerror(errno));
		if (mr->rkey == first && again == 0) {
			again = i;
			rt_step("registration %u got rkey 0x%x, the first "
				"MR's again", i, mr->rkey);
		}
		if (i == RKEY_REUSE_CYCLES)
			break;
		ret = ibv_dereg_mr(mr);
		RT_CHECK(ret == 0, "ibv_dereg_mr %u: %s", i, strerror(ret));
	}

	mw_refused(&e, IBV_WR_RDMA_WRITE, (uintptr_t)e.tgt.p, first, 512,
		   "WRITE through the first MR's rkey");
	mw_refused(&e, IBV_WR_RDMA_READ, (uintptr_t)e.tgt.p, first, 512,
		   "READ through the first MR's rkey");
	/* mw_refused() filled the target with guard bytes: a READ that
	 * went through would have brought them into a's buffer. */
	RT_CHECK(memcmp(e.src.p, e.tgt.p, 512) != 0,
		 "the refused READ wrote a's buffer");
	RT_CHECK(again == 0, "registration %u got the first MR's rkey 0x%x "
		 "again", again, first);

	rt_step("the live MR's own rkey 0x%x works", mr->rkey);
	mw_write_ok(&e, mr->rkey, 0, 512);
	ret = ibv_dereg_mr(mr);
	RT_CHECK(ret == 0, "ibv_dereg_mr: %s", strerror(ret));
	mw_close(&e);
}

/* The cases: test_mw.def, which meson.build reads too. */
#define RT_CASE_FN(name) rt_case_##name
static const struct rt_case rt_cases[] = {
#include "test_mw.def"
};

int
main(int argc, char **argv)
{
	return rt_main(argc, argv, rt_cases,
		       sizeof(rt_cases) / sizeof(rt_cases[0]));
}
