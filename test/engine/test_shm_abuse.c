/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rp_shm_abuse_test: the engine survives whatever an application writes
 * into the shared region (doc/guides/architecture.rst, "Untrusted shared
 * memory").
 *
 * Objects are made through the verbs API; then the test writes bad values
 * straight into their rings and control blocks, the memory a multi-process
 * service will map into untrusted processes, past every check the shim
 * makes.  Each case asserts the IB-specified outcome for the object hit
 * (error completion, asynchronous event, QP state), and that the engine
 * still serves everything else: an RC pair rocepmd0 <-> rocepmd1, made
 * before the abuse, completes a ping both ways after it (another QP on the
 * same device, one on another device, same lcore).
 *
 *   sq_prod_back  SQ producer moved back between retired and ingested
 *                 WQEs: QP_FATAL, every WQE flushed (was a 2^32 loop)
 *   sq_prod_far   SQ producer beyond the ring, or behind its consumer:
 *                 QP_FATAL
 *   sq_bad_wqe    bad opcode (unknown, RDMA on UD), atomic under 8
 *                 bytes or inline, SGE count, total length over 2^31,
 *                 lkey, inline length, UD address handle: the WQE's
 *                 error completion and QP_FATAL
 *   bind_mw_bad   BIND_MW and LOCAL_INV WQEs with bad keys, ranges and
 *                 access: MW_BIND_ERR and QP_FATAL, no window bound
 *   rq_prod_far   RQ producer beyond the ring: QP_FATAL, the sender's
 *                 SEND ends with REM_OP_ERR (was an endless RNR)
 *   rq_bad_sge    receive WQE with more SGEs than the RQ allows:
 *                 LOC_QP_OP_ERR, QP_FATAL, sender REM_OP_ERR
 *   srq_bad       SRQ WQE with too many SGEs, SRQ producer beyond the
 *                 ring: SRQ_ERR, nothing received from it
 *   cq_cons_ahead CQ consumer index beyond the producer: CQ_ERR
 *   tm_bad_op     TM list op with a bad opcode or tag handle: a
 *                 GENERAL_ERR completion; op ring producer beyond the
 *                 ring: SRQ_ERR
 *
 * The test reaches the shared memory through the shim's objects (its
 * private header, verbs-shim/shim.h); nothing else here knows the engine.
 * Waits are bounded (RP_TEST_TIMEOUT, default 20 s) and each case has a
 * watchdog, so an engine stuck in a loop fails the case, never hangs it.
 *
 *   rp_shm_abuse_test CASE | list
 */

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <infiniband/verbs.h>

#include "rp_testlib.h"
#include "shim.h"

const char rt_prog[] = "rp_shm_abuse_test";

/* ------------------------------------------------------- shared memory */

static struct rp_wq_hdr *
sq_hdr(struct rt_ep *ep)
{
	return shim_qp(ep->qp)->sq.hdr;
}

static struct rp_wq_hdr *
rq_hdr(struct rt_ep *ep)
{
	return shim_qp(ep->qp)->rq.hdr;
}

/* Publish a producer index, and ring the QP's doorbell as the shim does
 * (rp_abi.h): the engine looks at a QP whose bit is set. */
static void
store_prod(struct shim_wq *wq, uint32_t v)
{
	__atomic_store_n(&wq->hdr->prod, v, __ATOMIC_RELEASE);
	if (wq->bell != NULL)
		__atomic_fetch_or(wq->bell, wq->bell_bit, __ATOMIC_RELEASE);
}

/*
 * Write one entry into the next slot of a work queue and publish it, as
 * the shim would but with no check: `len` bytes of `ent`.
 */
static void
wq_raw_post(struct shim_wq *wq, const void *ent, size_t len)
{
	RT_CHECK(len <= wq->stride, "raw WQE of %zu bytes, stride %u", len,
		 wq->stride);
	memcpy(wq->ent + (size_t)(wq->prod & (wq->size - 1)) * wq->stride,
	       ent, len);
	wq->prod++;
	store_prod(wq, wq->prod);
}

/* ---------------------------------------------------------- bystanders */

/* The RC pair that must keep working: rocepmd0 <-> rocepmd1. */
struct bystander {
	struct rt_ep a, b;
	struct rt_buf ab, bb;
	uint64_t n;
};

/* One SEND of 64 random bytes x -> y, both completions and the data. */
static void
by_send(struct rt_ep *x, struct rt_buf *xb, struct rt_ep *y,
	struct rt_buf *yb, uint64_t id, const char *what)
{
	struct ibv_sge s = rt_sge(yb, 0, 64);

	rt_post_recv(y, id, &s, 1);
	rt_fill_random(xb->p + 64, 64);
	s = rt_sge(xb, 64, 64);
	rt_post_send(x, id, IBV_WR_SEND, &s, 1, IBV_SEND_SIGNALED, 0, 0, 0);
	rt_expect_wc(x->scq, what, id, IBV_WC_SUCCESS, IBV_WC_SEND);
	rt_expect_wc(y->rcq, what, id, IBV_WC_SUCCESS, IBV_WC_RECV);
	rt_check_data(yb->p, xb->p + 64, 64, what);
}

static void
by_ping(struct bystander *by, const char *when)
{
	char what[96];

	by->n++;
	snprintf(what, sizeof(what), "bystander ping %s (rocepmd0 -> 1)",
		 when);
	by_send(&by->a, &by->ab, &by->b, &by->bb, by->n, what);
	snprintf(what, sizeof(what), "bystander pong %s (rocepmd1 -> 0)",
		 when);
	by_send(&by->b, &by->bb, &by->a, &by->ab, by->n, what);
}

/* Open both devices, connect the bystanders and ping once. */
static void
by_start(struct bystander *by, struct rt_dev *d0, struct rt_dev *d1)
{
	memset(by, 0, sizeof(*by));
	rt_open2(d0, d1);
	rt_rc_pair(&by->a, d0, &by->b, d1, NULL);
	rt_buf_alloc(&by->ab, d0, 4096, IBV_ACCESS_LOCAL_WRITE);
	rt_buf_alloc(&by->bb, d1, 4096, IBV_ACCESS_LOCAL_WRITE);
	by_ping(by, "before");
}

/* Ping after the abuse, no stray event anywhere, close. */
static void
by_finish(struct bystander *by, struct rt_dev *d0, struct rt_dev *d1)
{
	rt_step("the engine still serves the bystander pair");
	by_ping(by, "after");
	rt_expect_no_async(d0, RT_IDLE_MS, "rocepmd0 after the case");
	rt_expect_no_async(d1, 10, "rocepmd1 after the case");
	rt_ep_destroy(&by->a);
	rt_ep_destroy(&by->b);
	rt_buf_free(&by->ab);
	rt_buf_free(&by->bb);
	rt_close2(d0, d1);
}

/* ---------------------------------------------------------- victims */

/* Destroy a pair and its buffers (rb may be NULL). */
static void
pair_free(struct rt_ep *a, struct rt_ep *b, struct rt_buf *sb,
	  struct rt_buf *rb)
{
	rt_ep_destroy(a);
	rt_ep_destroy(b);
	rt_buf_free(sb);
	if (rb != NULL)
		rt_buf_free(rb);
}

/* An RC QP on d connected to `peer`, or to a QPN nobody has there. */
static void
victim_rc(struct rt_ep *v, struct rt_dev *d, struct rt_ep *peer,
	  bool ghost, const struct rt_rc_opts *o)
{
	rt_ep_create(v, d, &(struct rt_ep_opts){ .type = IBV_QPT_RC });
	rt_rc_init(v, o->access);
	if (ghost) {
		struct rt_ep fake = *peer;
		struct ibv_qp fake_qp = *peer->qp;

		fake_qp.qp_num = peer->qp->qp_num ^ 0x800000;
		fake.qp = &fake_qp;
		rt_rc_rtr(v, &fake, o);
	} else {
		rt_rc_rtr(v, peer, o);
	}
	rt_rc_rts(v, o);
}

/* v failed on its own: QP_FATAL on its device, state ERR. */
static void
expect_fatal(struct rt_dev *d, struct rt_ep *v, const char *what)
{
	rt_expect_async(d, IBV_EVENT_QP_FATAL, v->qp, true, what);
	rt_expect_qp_state(v, IBV_QPS_ERR, what);
	rt_expect_no_async(d, RT_IDLE_MS, "one QP_FATAL");
}

/* ---------------------------------------------------------------- cases */

/*
 * The known bug: a producer index set between the retired and the
 * ingested positions made the engine copy WQEs round the 2^32 index space.
 */
static void
rt_case_sq_prod_back(void)
{
	struct rt_rc_opts o = rt_rc_default;
	struct rt_dev d0, d1;
	struct bystander by;
	struct rt_ep v;
	struct rt_buf buf;
	struct ibv_send_wr wr[4], *bad;
	struct ibv_sge s;
	uint64_t seen;
	uint32_t prod, cons;
	int ret;

	by_start(&by, &d0, &d1);
	/* Requests to a QPN that does not exist stay unretired for seconds. */
	o.timeout = 20;		/* 4.3 s */
	victim_rc(&v, &d0, &by.b, true, &o);
	rt_buf_alloc(&buf, &d0, 4096, IBV_ACCESS_LOCAL_WRITE);
	s = rt_sge(&buf, 0, 64);
	memset(wr, 0, sizeof(wr));
	for (unsigned int i = 0; i < 4; i++) {
		wr[i].wr_id = i;
		wr[i].opcode = IBV_WR_SEND;
		wr[i].sg_list = &s;
		wr[i].num_sge = 1;
		wr[i].send_flags = IBV_SEND_SIGNALED;
		wr[i].next = i < 3 ? &wr[i + 1] : NULL;
	}
	seen = rt_stat(1, "rx_no_qp");
	rt_step("4 SENDs in one post to a QPN nobody has: ingested, unretired");
	ret = ibv_post_send(v.qp, wr, &bad);
	RT_CHECK(ret == 0, "ibv_post_send: %s", strerror(ret));
	/* One post, one producer store: the first request out means the
	 * engine copied all four. */
	for (double t0 = rt_now(); rt_stat(1, "rx_no_qp") == seen;) {
		RT_CHECK(rt_now() - t0 < rt_timeout_s, "no request of the "
			 "victim reached rocepmd1 within %.0f s", rt_timeout_s);
		rt_sleep_ms(1);
	}
	prod = __atomic_load_n(&sq_hdr(&v)->prod, __ATOMIC_RELAXED);
	cons = __atomic_load_n(&sq_hdr(&v)->cons, __ATOMIC_ACQUIRE);
	RT_CHECK(cons == prod - 4, "SQ cons %u, prod %u: the 4 WQEs should "
		 "be outstanding", cons, prod);
	rt_step("SQ producer %u -> %u: behind the ingested WQEs", prod,
		prod - 2);
	store_prod(&shim_qp(v.qp)->sq, prod - 2);
	expect_fatal(&d0, &v, "SQ producer moved back");
	for (unsigned int i = 0; i < 4; i++)
		rt_expect_wc(v.scq, "outstanding SEND", i, IBV_WC_WR_FLUSH_ERR,
			     -1);
	rt_expect_empty(v.scq, RT_IDLE_MS, "victim send CQ");
	rt_ep_destroy(&v);
	rt_buf_free(&buf);
	by_finish(&by, &d0, &d1);
}

static void
rt_case_sq_prod_far(void)
{
	static const struct { const char *what; int64_t delta; } c[] = {
		{ "one past the ring", 1 },
		{ "2^31 ahead", INT32_MAX },
		{ "behind the consumer", -1 },
	};
	struct rt_dev d0, d1;
	struct bystander by;

	by_start(&by, &d0, &d1);
	for (size_t i = 0; i < RTE_DIM(c); i++) {
		struct rt_ep v;
		struct shim_wq *wq;
		uint32_t cons;

		victim_rc(&v, &d0, &by.b, false, &rt_rc_default);
		wq = &shim_qp(v.qp)->sq;
		cons = __atomic_load_n(&wq->hdr->cons, __ATOMIC_ACQUIRE);
		rt_step("SQ producer %s (cons %u, size %u)", c[i].what, cons,
			wq->size);
		store_prod(wq, cons + (c[i].delta > 0 ?
			   wq->size + (uint32_t)c[i].delta : (uint32_t)c[i].delta));
		expect_fatal(&d0, &v, c[i].what);
		rt_expect_empty(v.scq, 0, "victim send CQ");
		rt_ep_destroy(&v);
	}
	by_finish(&by, &d0, &d1);
}

/* One bad send WQE, written by hand, on a fresh QP. */
struct bad_wqe {
	const char *what;
	enum ibv_qp_type type;
	uint8_t opcode;
	uint8_t flags;
	int num_sge;		/* -1: as many as the QP allows */
	bool bad_lkey;
	bool huge;		/* SGEs summing over 2^31 */
	uint32_t length;	/* inline */
	uint32_t ah;		/* UD: 0 = the valid one */
	enum ibv_wc_status status;
};

static void
sq_bad_one(const struct bad_wqe *c, struct bystander *by, struct rt_dev *d0,
	   struct rt_buf *buf, struct ibv_mr *huge_mr, uint32_t huge_len)
{
	uint8_t ent[RP_SEND_WQE_HDR + RP_MAX_SGE * sizeof(struct rp_sge)];
	struct rp_send_wqe *w = (struct rp_send_wqe *)ent;
	struct rp_sge *sge = (struct rp_sge *)(w + 1);
	struct ibv_ah *ah = NULL;
	struct shim_qp *sq;
	struct rt_ep v;
	uint32_t nsge;
	int ret;

	if (c->type == IBV_QPT_UD) {
		struct ibv_qp_attr a = {
			.qp_state = IBV_QPS_INIT, .port_num = RT_PORT,
			.qkey = RT_QKEY,
		};
		struct ibv_ah_attr aa;

		rt_ep_create(&v, d0, &(struct rt_ep_opts){ .type = IBV_QPT_UD });
		ret = rt_modify(&v, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
				IBV_QP_PORT | IBV_QP_QKEY);
		RT_CHECK(ret == 0, "UD to INIT: %s", strerror(ret));
		a.qp_state = IBV_QPS_RTR;
		ret = rt_modify(&v, &a, IBV_QP_STATE);
		RT_CHECK(ret == 0, "UD to RTR: %s", strerror(ret));
		a.qp_state = IBV_QPS_RTS;
		a.sq_psn = 0;
		ret = rt_modify(&v, &a, IBV_QP_STATE | IBV_QP_SQ_PSN);
		RT_CHECK(ret == 0, "UD to RTS: %s", strerror(ret));
		rt_ah_attr(&aa, &by->b.dev->gid);
		ah = ibv_create_ah(d0->pd, &aa);
		RT_CHECK(ah != NULL, "ibv_create_ah: %s", strerror(errno));
	} else {
		victim_rc(&v, d0, &by->b, false, &rt_rc_default);
	}
	sq = shim_qp(v.qp);
	memset(ent, 0, sizeof(ent));
	w->wr_id = 77;
	w->opcode = c->opcode;
	w->flags = RP_WQE_SIGNALED | c->flags;
	if (c->flags & RP_WQE_INLINE) {
		w->length = c->length;
		nsge = 0;
	} else {
		nsge = c->num_sge >= 0 ? (uint32_t)c->num_sge :
			sq->cap.max_send_sge;
		w->num_sge = (uint8_t)nsge;
		for (uint32_t i = 0; i < RTE_MIN(nsge, RP_MAX_SGE); i++) {
			sge[i].addr = (uintptr_t)buf->p;
			sge[i].length = 64;
			sge[i].lkey = buf->mr->lkey;
			if (c->huge) {
				sge[i].addr = (uintptr_t)huge_mr->addr;
				sge[i].length = huge_len;
				sge[i].lkey = huge_mr->lkey;
			}
			if (c->bad_lkey)
				sge[i].lkey ^= 0x80;
		}
	}
	if (c->type == IBV_QPT_UD) {
		w->ah = c->ah != 0 ? c->ah : shim_ah(ah)->ahn;
		w->remote_qpn = by->b.qp->qp_num;
		w->remote_qkey = RT_QKEY;
	}
	rt_step("%s QP 0x%x: %s", c->type == IBV_QPT_UD ? "UD" : "RC",
		v.qp->qp_num, c->what);
	wq_raw_post(&sq->sq, ent, RTE_MIN(sizeof(ent), (size_t)sq->sq.stride));
	rt_expect_wc(v.scq, c->what, 77, c->status, -1);
	expect_fatal(d0, &v, c->what);
	rt_ep_destroy(&v);
	if (ah != NULL)
		ibv_destroy_ah(ah);
}

static void
rt_case_sq_bad_wqe(void)
{
	static const struct bad_wqe c[] = {
		{ "unknown opcode 0x7f", IBV_QPT_RC, 0x7f, 0, 1, false, false,
		  0, 0, IBV_WC_LOC_QP_OP_ERR },
		{ "atomic with no SGE (8 bytes come back)", IBV_QPT_RC,
		  IBV_WR_ATOMIC_FETCH_AND_ADD, 0, 0, false, false, 0, 0,
		  IBV_WC_LOC_LEN_ERR },
		{ "atomic with inline data", IBV_QPT_RC,
		  IBV_WR_ATOMIC_CMP_AND_SWP, RP_WQE_INLINE, 0, false, false, 8,
		  0, IBV_WC_LOC_LEN_ERR },
		{ "RDMA WRITE on UD", IBV_QPT_UD, IBV_WR_RDMA_WRITE, 0, 1, false,
		  false, 0, 0, IBV_WC_LOC_QP_OP_ERR },
		{ "200 SGEs", IBV_QPT_RC, IBV_WR_SEND, 0, 200, false, false, 0,
		  0, IBV_WC_LOC_LEN_ERR },
		{ "SGEs summing over 2^31 bytes", IBV_QPT_RC, IBV_WR_SEND, 0, -1,
		  false, true, 0, 0, IBV_WC_LOC_LEN_ERR },
		{ "bad lkey", IBV_QPT_RC, IBV_WR_SEND, 0, 1, true, false, 0, 0,
		  IBV_WC_LOC_PROT_ERR },
		{ "inline length 65535, beyond the slot", IBV_QPT_RC,
		  IBV_WR_SEND, RP_WQE_INLINE, 0, false, false, 65535, 0,
		  IBV_WC_LOC_LEN_ERR },
		{ "address handle 4000 (none)", IBV_QPT_UD, IBV_WR_SEND, 0, 1,
		  false, false, 0, 4000, IBV_WC_LOC_QP_OP_ERR },
		{ "address handle 0xffffffff", IBV_QPT_UD, IBV_WR_SEND, 0, 1,
		  false, false, 0, 0xffffffffu, IBV_WC_LOC_QP_OP_ERR },
	};
	struct rt_dev d0, d1;
	struct bystander by;
	struct rt_buf buf;
	struct ibv_mr *huge_mr;
	uint32_t huge_len;
	void *huge;

	by_start(&by, &d0, &d1);
	rt_buf_alloc(&buf, &d0, 4096, IBV_ACCESS_LOCAL_WRITE);
	/* Every SGE covers this whole region, never touched: their sum is
	 * just over 2^31 with as many SGEs as RT_SGE at least grants. */
	huge_len = (uint32_t)((1ull << 31) / RT_SGE + 1);
	huge = mmap(NULL, huge_len, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	RT_CHECK(huge != MAP_FAILED, "mmap %u: %s", huge_len, strerror(errno));
	huge_mr = ibv_reg_mr(d0.pd, huge, huge_len, IBV_ACCESS_LOCAL_WRITE);
	RT_CHECK(huge_mr != NULL, "ibv_reg_mr(%u): %s", huge_len,
		 strerror(errno));
	for (size_t i = 0; i < RTE_DIM(c); i++)
		sq_bad_one(&c[i], &by, &d0, &buf, huge_mr, huge_len);
	ibv_dereg_mr(huge_mr);
	munmap(huge, huge_len);
	rt_buf_free(&buf);
	by_finish(&by, &d0, &d1);
}

/*
 * BIND_MW and LOCAL_INV WQEs with fields the shim never writes: a window
 * index out of the table or naming an MR, an MR lkey that is not one, a
 * range that wraps or runs past the MR, access bits that are no window's.
 * Each completes with MW_BIND_ERR (QP_FATAL), and no window is bound.
 */
static void
rt_case_bind_mw_bad(void)
{
	struct rt_dev d0, d1;
	struct bystander by;
	struct rt_buf buf;
	struct ibv_mw *mw;
	uint32_t mwk, mrk;
	struct {
		const char *what;
		uint8_t opcode;
		uint32_t rkey;		/* 0: the window's next key */
		uint32_t lkey;		/* 0: the MR's */
		uint64_t off, len;
		uint64_t access;
	} c[] = {
		{ "window index 0", IBV_WR_BIND_MW, 0x17, 0, 0, 64, 2 },
		{ "window index past the table", IBV_WR_BIND_MW, 0xffffff00u,
		  0, 0, 64, 2 },
		{ "an MR's key as the window", IBV_WR_BIND_MW, 1, 0, 0, 64, 2 },
		{ "lkey naming nothing", IBV_WR_BIND_MW, 0, 0xfffffe01u, 0, 64,
		  2 },
		{ "the window's own key as the MR", IBV_WR_BIND_MW, 0, 2, 0, 64,
		  2 },
		{ "range wrapping past 2^64", IBV_WR_BIND_MW, 0, 0, 100,
		  UINT64_MAX - 50, 2 },
		{ "range past the MR", IBV_WR_BIND_MW, 0, 0, 4000, 200, 2 },
		{ "access bits no window has", IBV_WR_BIND_MW, 0, 0, 0, 64,
		  0xffffffffffffull },
		{ "LOCAL_INV of key 0xffffffff", IBV_WR_LOCAL_INV, 0xffffffffu,
		  0, 0, 0, 0 },
	};

	by_start(&by, &d0, &d1);
	rt_buf_alloc(&buf, &d0, 4096, RT_ACCESS_ALL | IBV_ACCESS_MW_BIND);
	mw = ibv_alloc_mw(d0.pd, IBV_MW_TYPE_2);
	RT_CHECK(mw != NULL, "ibv_alloc_mw: %s", strerror(errno));
	mwk = ibv_inc_rkey(mw->rkey);
	mrk = buf.mr->lkey;
	for (size_t i = 0; i < RTE_DIM(c); i++) {
		struct rp_send_wqe w;
		struct rt_ep v;

		victim_rc(&v, &d0, &by.b, false, &rt_rc_default);
		memset(&w, 0, sizeof(w));
		w.wr_id = 78;
		w.opcode = c[i].opcode;
		w.flags = RP_WQE_SIGNALED;
		w.rkey = c[i].rkey == 0 ? mwk : c[i].rkey == 1 ? mrk :
			c[i].rkey;
		w.imm_data = c[i].lkey == 0 ? mrk : c[i].lkey == 2 ? mwk :
			c[i].lkey;
		if (c[i].opcode == IBV_WR_LOCAL_INV)
			w.imm_data = c[i].rkey;
		w.remote_addr = (uintptr_t)buf.p + c[i].off;
		w.compare_add = c[i].len;
		w.swap = c[i].access;
		rt_step("RC QP 0x%x: %s", v.qp->qp_num, c[i].what);
		wq_raw_post(&shim_qp(v.qp)->sq, &w, sizeof(w));
		rt_expect_wc(v.scq, c[i].what, 78, IBV_WC_MW_BIND_ERR, -1);
		expect_fatal(&d0, &v, c[i].what);
		rt_ep_destroy(&v);
	}
	rt_step("the window was never bound: ibv_dereg_mr of its MR succeeds");
	rt_buf_free(&buf);
	RT_CHECK(ibv_dealloc_mw(mw) == 0, "ibv_dealloc_mw");
	by_finish(&by, &d0, &d1);
}

/*
 * A SEND from a (rocepmd0) to the victim b (rocepmd1) whose receive side
 * was corrupted: b fails, a's SEND ends with REM_OP_ERR.
 */
static void
rq_expect_broken(struct rt_dev *d1, struct rt_ep *a, struct rt_ep *b,
		 struct rt_buf *sb, const char *what)
{
	struct ibv_sge s = rt_sge(sb, 0, 64);

	rt_post_send(a, 5, IBV_WR_SEND, &s, 1, IBV_SEND_SIGNALED, 0, 0, 0);
	rt_expect_wc(a->scq, what, 5, IBV_WC_REM_OP_ERR, -1);
	expect_fatal(d1, b, what);
}

static void
rt_case_rq_prod_far(void)
{
	struct rt_dev d0, d1;
	struct bystander by;
	struct rt_ep a, b;
	struct rt_buf sb;
	uint32_t cons;

	by_start(&by, &d0, &d1);
	rt_rc_pair(&a, &d0, &b, &d1, NULL);
	rt_buf_alloc(&sb, &d0, 4096, IBV_ACCESS_LOCAL_WRITE);
	cons = __atomic_load_n(&rq_hdr(&b)->cons, __ATOMIC_ACQUIRE);
	rt_step("victim's RQ producer %u past its ring (cons %u, size %u)",
		cons + shim_qp(b.qp)->rq.size + 7, cons,
		shim_qp(b.qp)->rq.size);
	store_prod(&shim_qp(b.qp)->rq, cons + shim_qp(b.qp)->rq.size + 7);
	rq_expect_broken(&d1, &a, &b, &sb, "SEND into a corrupt RQ");
	rt_expect_no_async(&d0, RT_IDLE_MS, "the sender learns by its CQE");
	pair_free(&a, &b, &sb, NULL);
	by_finish(&by, &d0, &d1);
}

static void
rt_case_rq_bad_sge(void)
{
	struct {
		struct rp_recv_wqe w;
		struct rp_sge sge[RP_MAX_SGE];
	} ent;
	struct rt_dev d0, d1;
	struct bystander by;
	struct rt_ep a, b;
	struct rt_buf sb, rb;

	by_start(&by, &d0, &d1);
	rt_rc_pair(&a, &d0, &b, &d1, NULL);
	rt_buf_alloc(&sb, &d0, 4096, IBV_ACCESS_LOCAL_WRITE);
	rt_buf_alloc(&rb, &d1, 4096, IBV_ACCESS_LOCAL_WRITE);
	memset(&ent, 0, sizeof(ent));
	ent.w.wr_id = 9;
	ent.w.num_sge = 1000;
	/* What a reader of the first SGEs would find: valid buffers. */
	for (unsigned int i = 0; i < RP_MAX_SGE; i++)
		ent.sge[i] = (struct rp_sge){ (uintptr_t)rb.p, 64, rb.mr->lkey };
	rt_step("receive WQE with 1000 SGEs (max_recv_sge %u)",
		shim_qp(b.qp)->cap.max_recv_sge);
	wq_raw_post(&shim_qp(b.qp)->rq, &ent,
		    RTE_MIN(sizeof(ent), (size_t)shim_qp(b.qp)->rq.stride));
	rq_expect_broken(&d1, &a, &b, &sb, "SEND into a malformed WQE");
	rt_expect_wc(b.rcq, "the malformed receive WQE", 9,
		     IBV_WC_LOC_QP_OP_ERR, -1);
	rt_expect_empty(b.rcq, RT_IDLE_MS, "victim receive CQ");
	pair_free(&a, &b, &sb, &rb);
	by_finish(&by, &d0, &d1);
}

static void
rt_case_srq_bad(void)
{
	struct {
		struct rp_recv_wqe w;
		struct rp_sge sge[RP_MAX_SGE];
	} ent;
	struct ibv_srq_init_attr sa = {
		.attr = { .max_wr = 16, .max_sge = 1 },
	};
	struct rt_rc_opts o = rt_rc_default;
	struct rt_dev d0, d1;
	struct bystander by;
	struct rt_buf sb, rb;

	by_start(&by, &d0, &d1);
	rt_buf_alloc(&sb, &d0, 4096, IBV_ACCESS_LOCAL_WRITE);
	rt_buf_alloc(&rb, &d1, 4096, IBV_ACCESS_LOCAL_WRITE);
	o.rnr_retry = 1;	/* the sender gives up, RNR_RETRY_EXC_ERR */
	o.min_rnr_timer = 1;
	for (unsigned int k = 0; k < 2; k++) {
		struct ibv_srq *srq = ibv_create_srq(d1.pd, &sa);
		struct shim_srq *ss;
		struct rt_ep a, b;
		struct ibv_sge s;
		int ret;

		RT_CHECK(srq != NULL, "ibv_create_srq: %s", strerror(errno));
		ss = shim_srq(srq);
		rt_ep_create(&a, &d0, &(struct rt_ep_opts){
				.type = IBV_QPT_RC });
		rt_ep_create(&b, &d1, &(struct rt_ep_opts){
				.type = IBV_QPT_RC, .srq = srq });
		rt_rc_connect(&a, &b, &o);
		if (k == 0) {
			memset(&ent, 0, sizeof(ent));
			ent.w.wr_id = 9;
			ent.w.num_sge = 1000;
			for (unsigned int i = 0; i < RP_MAX_SGE; i++)
				ent.sge[i] = (struct rp_sge){
					(uintptr_t)rb.p, 64, rb.mr->lkey };
			rt_step("SRQ WQE with 1000 SGEs (max_sge %u)",
				ss->max_sge);
			wq_raw_post(&ss->wq, &ent,
				    RTE_MIN(sizeof(ent), (size_t)ss->wq.stride));
		} else {
			uint32_t cons = __atomic_load_n(&ss->wq.hdr->cons,
							__ATOMIC_ACQUIRE);

			rt_step("SRQ producer past its ring (cons %u, size %u)",
				cons, ss->wq.size);
			store_prod(&ss->wq, cons + ss->wq.size + 1);
		}
		s = rt_sge(&sb, 0, 64);
		rt_post_send(&a, 5, IBV_WR_SEND, &s, 1, IBV_SEND_SIGNALED, 0,
			     0, 0);
		rt_expect_async(&d1, IBV_EVENT_SRQ_ERR, srq, true,
				"corrupt SRQ");
		rt_expect_wc(a.scq, "SEND to a QP on the broken SRQ", 5,
			     IBV_WC_RNR_RETRY_EXC_ERR, -1);
		rt_expect_async(&d0, IBV_EVENT_QP_FATAL, a.qp, true,
				"the sender's RNR retries exhausted");
		rt_expect_empty(b.rcq, 0, "receiver on the broken SRQ");
		rt_expect_no_async(&d1, RT_IDLE_MS, "one SRQ_ERR");
		rt_ep_destroy(&a);
		rt_ep_destroy(&b);
		ret = ibv_destroy_srq(srq);
		RT_CHECK(ret == 0, "ibv_destroy_srq: %s", strerror(ret));
	}
	rt_buf_free(&sb);
	rt_buf_free(&rb);
	by_finish(&by, &d0, &d1);
}

static void
rt_case_cq_cons_ahead(void)
{
	struct rt_dev d0, d1;
	struct bystander by;
	struct rt_ep a, b;
	struct rt_buf sb, rb;
	struct rp_cq_ctl *ctl;
	struct ibv_sge s;
	uint32_t prod;

	by_start(&by, &d0, &d1);
	rt_rc_pair(&a, &d0, &b, &d1, NULL);
	rt_buf_alloc(&sb, &d0, 4096, IBV_ACCESS_LOCAL_WRITE);
	rt_buf_alloc(&rb, &d1, 4096, IBV_ACCESS_LOCAL_WRITE);
	ctl = shim_cq(a.scq)->ctl;
	prod = __atomic_load_n(&ctl->prod, __ATOMIC_RELAXED);
	rt_step("send CQ consumer index %u, producer %u", prod + 1000, prod);
	__atomic_store_n(&ctl->cons, prod + 1000, __ATOMIC_RELEASE);
	s = rt_sge(&rb, 0, 64);
	rt_post_recv(&b, 1, &s, 1);
	s = rt_sge(&sb, 0, 64);
	rt_post_send(&a, 1, IBV_WR_SEND, &s, 1, IBV_SEND_SIGNALED, 0, 0, 0);
	rt_expect_wc(b.rcq, "the SEND itself", 1, IBV_WC_SUCCESS, IBV_WC_RECV);
	rt_expect_async(&d0, IBV_EVENT_CQ_ERR, a.scq, true, "corrupt CQ index");
	rt_expect_no_async(&d0, RT_IDLE_MS, "one CQ_ERR");
	pair_free(&a, &b, &sb, &rb);
	by_finish(&by, &d0, &d1);
}

static void
rt_case_tm_bad_op(void)
{
	struct rt_dev d0, d1;
	struct bystander by;
	struct ibv_cq_ex *cqx;
	struct ibv_cq *cq;
	struct ibv_srq *srq;
	struct shim_srq *ss;
	struct ibv_srq_init_attr_ex sa;
	struct rp_tm_op op;
	uint32_t cons;
	int ret;

	by_start(&by, &d0, &d1);
	/* TM-2: an extended CQ, as mlx5 wants. */
	cqx = ibv_create_cq_ex(d1.ctx, &(struct ibv_cq_init_attr_ex){
		.cqe = RT_CQE,
		.wc_flags = IBV_WC_STANDARD_FLAGS | IBV_WC_EX_WITH_TM_INFO });
	RT_CHECK(cqx != NULL, "ibv_create_cq_ex: %s", strerror(errno));
	cq = ibv_cq_ex_to_cq(cqx);
	memset(&sa, 0, sizeof(sa));
	sa.attr.max_wr = 16;
	sa.attr.max_sge = 1;
	sa.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD |
		IBV_SRQ_INIT_ATTR_CQ | IBV_SRQ_INIT_ATTR_TM;
	sa.srq_type = IBV_SRQT_TM;
	sa.pd = d1.pd;
	sa.cq = cq;
	sa.tm_cap.max_num_tags = 8;
	sa.tm_cap.max_ops = 8;
	srq = ibv_create_srq_ex(d1.ctx, &sa);
	RT_CHECK(srq != NULL, "ibv_create_srq_ex(TM): %s", strerror(errno));
	ss = shim_srq(srq);

	memset(&op, 0, sizeof(op));
	op.wr_id = 1;
	op.opcode = 0x55;
	op.flags = IBV_OPS_SIGNALED;
	rt_step("list operation with opcode 0x55");
	wq_raw_post(&ss->ops, &op, sizeof(op));
	rt_expect_wc(cq, "bad opcode", 1, IBV_WC_GENERAL_ERR, -1);

	op.wr_id = 2;
	op.opcode = IBV_WR_TAG_ADD;
	op.handle = 0xffff;
	op.num_sge = 1;
	rt_step("ADD with tag handle 0x%x (%u tags)", op.handle,
		sa.tm_cap.max_num_tags);
	wq_raw_post(&ss->ops, &op, sizeof(op));
	rt_expect_wc(cq, "bad handle", 2, IBV_WC_GENERAL_ERR, -1);

	op.wr_id = 3;
	op.handle = 0;
	op.num_sge = 7;
	rt_step("ADD with 7 SGEs");
	wq_raw_post(&ss->ops, &op, sizeof(op));
	rt_expect_wc(cq, "bad SGE count", 3, IBV_WC_GENERAL_ERR, -1);

	cons = __atomic_load_n(&ss->ops.hdr->cons, __ATOMIC_ACQUIRE);
	rt_step("op ring producer behind its consumer %u", cons);
	store_prod(&ss->ops, cons - 1);
	rt_expect_async(&d1, IBV_EVENT_SRQ_ERR, srq, true, "corrupt op ring");
	rt_expect_empty(cq, RT_IDLE_MS, "TM CQ");
	ret = ibv_destroy_srq(srq);
	RT_CHECK(ret == 0, "ibv_destroy_srq: %s", strerror(ret));
	ret = ibv_destroy_cq(cq);
	RT_CHECK(ret == 0, "ibv_destroy_cq: %s", strerror(ret));
	by_finish(&by, &d0, &d1);
}

/* The cases: test_shm_abuse.def, which meson.build reads too. */
#define RT_CASE_FN(name) rt_case_##name
static const struct rt_case cases[] = {
#include "test_shm_abuse.def"
};

int
main(int argc, char **argv)
{
	return rt_main(argc, argv, cases, RTE_DIM(cases));
}
