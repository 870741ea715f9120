/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rp_async_test: asynchronous events (ibv_get_async_event(3)) through the
 * verbs API, one process.
 *
 * A plain libibverbs program run through rocepmd-run like rp_verbs_test
 * (same configurations: two devices back to back over memif, rocepmd0 =
 * 192.0.2.1 and rocepmd1 = 192.0.2.2).  Each case provokes one kind of
 * event and checks its type, the object it names, that it comes once,
 * and the data and completions around it:
 *
 *   cq_overflow    CQ_ERR on a CQ of 4 entries, no CQE overwritten
 *   qp_fatal       retry exceeded towards a QPN that does not exist
 *   access_err     WRITE with a bad rkey: the responder's QP_ACCESS_ERR
 *   flush_order    the same, then every WQE of both queues flushed, in
 *                  order, once, behind the error's own CQE
 *   comm_est       first SEND arriving at an RTR QP
 *   sq_drained     RTS -> SQD with en_sqd_async_notify
 *   srq_limit      SRQ_LIMIT_REACHED once below the armed limit, disarmed
 *                  after, armed again
 *   nonblock       O_NONBLOCK async_fd: EAGAIN, poll() readability
 *   destroy_waits  ibv_destroy_qp/cq block until the event is acked
 *
 * Port events (PORT_ACTIVE/PORT_ERR) need the link to change under a
 * running test, which memif in one process cannot be made to do; the
 * PORT_ACTIVE a memif link sends when it comes up after the device was
 * opened is accepted (port 1) wherever it shows up.
 *
 *   rp_async_test CASE | list
 *
 * Waits are bounded (RP_TEST_TIMEOUT seconds, default 20, per event or
 * completion) and a watchdog alarm ends a case stuck in a verbs call.
 * Exit status: 0 pass, 1 fail, 2 usage.
 */

#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "rp_testlib.h"

const char rt_prog[] = "rp_async_test";

/* n SENDs of len bytes a -> b, message i filled with pattern i. */
static void
rt_sends(struct rt_ep *a, struct rt_ep *b, struct rt_buf *sb,
	 struct rt_buf *rb, unsigned int n, size_t len, unsigned int flags)
{
	struct ibv_sge s;

	for (unsigned int i = 0; i < n; i++) {
		s = rt_sge(rb, i * len, len);
		rt_post_recv(b, 1000 + i, &s, 1);
	}
	rt_fill_random(sb->p, n * len);
	for (unsigned int i = 0; i < n; i++) {
		s = rt_sge(sb, i * len, len);
		rt_post_send(a, i, IBV_WR_SEND, &s, 1, flags, 0, 0, 0);
	}
}

/* The n receives of rt_sends(): in order, lengths and data. */
static void
rt_recvs_check(struct rt_ep *b, struct rt_buf *sb, struct rt_buf *rb,
	       unsigned int first, unsigned int n, size_t len)
{
	char what[64];

	for (unsigned int i = first; i < first + n; i++) {
		struct ibv_wc wc;

		snprintf(what, sizeof(what), "receive of SEND %u", i);
		wc = rt_expect_wc(b->rcq, what, 1000 + i, IBV_WC_SUCCESS,
				  IBV_WC_RECV);
		RT_CHECK(wc.byte_len == len, "%s: byte_len %u, expected %zu",
			 what, wc.byte_len, len);
		rt_check_data(rb->p + i * len, sb->p + i * len, len, what);
	}
}

/* Make ep's (unconnected) RC QP again, on these CQs. */
static void
rt_qp_again(struct rt_ep *ep, struct ibv_cq *scq, struct ibv_cq *rcq)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = scq, .recv_cq = rcq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 32, .max_recv_wr = 32,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	int ret = ibv_destroy_qp(ep->qp);

	RT_CHECK(ret == 0, "ibv_destroy_qp: %s", strerror(ret));
	ep->qp = ibv_create_qp(ep->dev->pd, &ia);
	RT_CHECK(ep->qp != NULL, "ibv_create_qp: %s", strerror(errno));
}

/* ---------------------------------------------------------------- cases */

static void
rt_case_cq_overflow(void)
{
	const struct rt_ep_opts eo = { .type = IBV_QPT_RC };
	const unsigned int n = 10;
	const size_t len = 64;
	struct rt_dev d0, d1;
	struct rt_ep a, b;
	struct rt_buf sb, rb;
	struct ibv_cq *big;
	struct ibv_wc wc;
	unsigned int got = 0;
	int ret;

	rt_open2(&d0, &d1);
	rt_ep_create(&a, &d0, &eo);
	rt_ep_create(&b, &d1, &eo);
	/* Swap a's send CQ for one of 4 entries before connecting: the QP
	 * was created with the big one, so make the QP again. */
	rt_step("RC QP whose send CQ has 4 entries");
	big = a.scq;
	a.scq = ibv_create_cq(d0.ctx, 4, NULL, NULL, 0);
	RT_CHECK(a.scq != NULL, "ibv_create_cq(4): %s", strerror(errno));
	RT_CHECK(a.scq->cqe >= 4 && a.scq->cqe < (int)n - 1,
		 "CQ of 4: cqe %d, the test needs 4..%u", a.scq->cqe, n - 2);
	rt_qp_again(&a, a.scq, a.rcq);
	ret = ibv_destroy_cq(big);
	RT_CHECK(ret == 0, "ibv_destroy_cq: %s", strerror(ret));
	rt_rc_connect(&a, &b, &rt_rc_default);
	rt_buf_alloc(&sb, &d0, n * len, IBV_ACCESS_LOCAL_WRITE);
	rt_buf_alloc(&rb, &d1, n * len, IBV_ACCESS_LOCAL_WRITE);

	rt_step("%u signaled SENDs, send CQ (cqe %d) not polled", n,
		a.scq->cqe);
	rt_sends(&a, &b, &sb, &rb, n, len, IBV_SEND_SIGNALED);
	rt_recvs_check(&b, &sb, &rb, 0, n, len);
	rt_step("IBV_EVENT_CQ_ERR names the send CQ");
	rt_expect_async(&d0, IBV_EVENT_CQ_ERR, a.scq, true, "overflow");
	rt_expect_no_async(&d0, RT_IDLE_MS, "one CQ_ERR per overflow");
	rt_expect_no_async(&d1, 10, "the receiver's context");

	rt_step("the CQEs that fit are intact, in order");
	while (rt_poll_wc(a.scq, &wc, RT_IDLE_MS / 1000.0)) {
		RT_CHECK(wc.wr_id == got && wc.status == IBV_WC_SUCCESS &&
			 wc.opcode == IBV_WC_SEND && wc.qp_num == a.qp->qp_num,
			 "CQE %u: wr_id %" PRIu64 " status %s opcode %s qp 0x%x, "
			 "expected wr_id %u SUCCESS SEND qp 0x%x", got, wc.wr_id,
			 ibv_wc_status_str(wc.status),
			 rt_wc_opcode_str(wc.opcode), wc.qp_num, got,
			 a.qp->qp_num);
		got++;
	}
	RT_CHECK(got >= 4 && got < n && got <= (unsigned int)a.scq->cqe + 1,
		 "%u CQEs in a CQ of cqe %d after %u completions", got,
		 a.scq->cqe, n);
	printf("    %u CQEs kept, %u lost to the overflow\n", got, n - got);
	rt_ep_destroy(&a);
	rt_ep_destroy(&b);
	rt_buf_free(&sb);
	rt_buf_free(&rb);
	rt_close2(&d0, &d1);
}

static void
rt_case_qp_fatal(void)
{
	const struct rt_ep_opts eo = { .type = IBV_QPT_RC };
	struct rt_rc_opts o = rt_rc_default;
	struct rt_dev d0, d1;
	struct rt_ep a, ghost;
	struct rt_buf sb;
	struct ibv_sge s;
	double t0, dt;

	rt_open2(&d0, &d1);
	rt_ep_create(&a, &d0, &eo);
	rt_ep_create(&ghost, &d1, &eo);
	/* The peer: ghost's address, a QPN that does not exist there. */
	o.timeout = 1;
	o.retry_cnt = 1;
	rt_step("RC QP 0x%x to QPN 0x%x on %s (no such QP), timeout %u "
		"retry_cnt %u", a.qp->qp_num, ghost.qp->qp_num ^ 0x800000,
		d1.name, o.timeout, o.retry_cnt);
	rt_rc_init(&a, o.access);
	{
		struct rt_ep fake = ghost;
		struct ibv_qp fake_qp = *ghost.qp;

		fake_qp.qp_num = ghost.qp->qp_num ^ 0x800000;
		fake.qp = &fake_qp;
		rt_rc_rtr(&a, &fake, &o);
	}
	rt_rc_rts(&a, &o);
	rt_buf_alloc(&sb, &d0, 64, IBV_ACCESS_LOCAL_WRITE);
	s = rt_sge(&sb, 0, 64);
	t0 = rt_now();
	rt_post_send(&a, 7, IBV_WR_SEND, &s, 1, IBV_SEND_SIGNALED, 0, 0, 0);
	rt_expect_wc(a.scq, "SEND to nobody", 7, IBV_WC_RETRY_EXC_ERR, -1);
	rt_expect_async(&d0, IBV_EVENT_QP_FATAL, a.qp, true, "retry exceeded");
	dt = rt_now() - t0;
	RT_CHECK(dt < 2.0, "QP_FATAL after %.3f s, expected < 2 s", dt);
	printf("    QP_FATAL %.1f ms after the post\n", dt * 1e3);
	rt_expect_qp_state(&a, IBV_QPS_ERR, "after QP_FATAL");
	rt_expect_no_async(&d0, RT_IDLE_MS, "one QP_FATAL");
	rt_expect_no_async(&d1, 10, "the other device");
	rt_ep_destroy(&a);
	rt_ep_destroy(&ghost);
	rt_buf_free(&sb);
	rt_close2(&d0, &d1);
}

static void
rt_case_access_err(void)
{
	struct rt_dev d0, d1;
	struct rt_ep a, b;
	struct rt_buf lbuf, target;
	struct ibv_sge s;

	rt_open2(&d0, &d1);
	rt_rc_pair(&a, &d0, &b, &d1, NULL);
	rt_buf_alloc(&lbuf, &d0, 64, IBV_ACCESS_LOCAL_WRITE);
	rt_buf_alloc(&target, &d1, 4096, RT_ACCESS_ALL);
	rt_fill_random(lbuf.p, lbuf.len);
	rt_step("RDMA WRITE 64 B with a wrong rkey");
	s = rt_sge(&lbuf, 0, 64);
	rt_post_send(&a, 1, IBV_WR_RDMA_WRITE, &s, 1, IBV_SEND_SIGNALED, 0,
		     (uintptr_t)target.p, target.mr->rkey ^ 0x80);
	rt_expect_wc(a.scq, "requester", 1, IBV_WC_REM_ACCESS_ERR, -1);
	rt_step("the responder's context gets IBV_EVENT_QP_ACCESS_ERR");
	rt_expect_async(&d1, IBV_EVENT_QP_ACCESS_ERR, b.qp, true,
			"responder");
	rt_expect_qp_state(&b, IBV_QPS_ERR, "responder after the NAK");
	rt_check_guard(target.p, target.len, "target of the rejected WRITE");
	rt_expect_no_async(&d1, RT_IDLE_MS, "one QP_ACCESS_ERR");
	/* The requester learns it from its CQE; no event on its side. */
	rt_expect_no_async(&d0, 10, "requester's context");
	rt_ep_destroy(&a);
	rt_ep_destroy(&b);
	rt_buf_free(&lbuf);
	rt_buf_free(&target);
	rt_close2(&d0, &d1);
}

/*
 * Take every CQE of cq until it stays empty for RT_IDLE_MS: each must be
 * the next of one of the two queues' expected wr_id sequences (in order,
 * none twice, none missing), with its status.
 */
static void
rt_expect_flushes(struct ibv_cq *cq, uint32_t qpn, const uint64_t *sq,
		  unsigned int nsq, const uint64_t *rq, unsigned int nrq,
		  const char *what)
{
	unsigned int s = 0, r = 0;
	struct ibv_wc wc;

	while (rt_poll_wc(cq, &wc, RT_IDLE_MS / 1000.0)) {
		RT_CHECK(wc.status == IBV_WC_WR_FLUSH_ERR && wc.qp_num == qpn,
			 "%s: wr_id %" PRIu64 " status %s qp 0x%x, expected "
			 "WR_FLUSH_ERR on qp 0x%x", what, wc.wr_id,
			 ibv_wc_status_str(wc.status), wc.qp_num, qpn);
		/* A flushed WQE's opcode is undefined: tell by wr_id. */
		if (r < nrq && wc.wr_id == rq[r]) {
			r++;
			continue;
		}
		RT_CHECK(s < nsq && wc.wr_id == sq[s], "%s: CQE wr_id %" PRIu64
			 " out of order or twice: next expected send %" PRIu64
			 " (%u of %u flushed) or receive %" PRIu64
			 " (%u of %u flushed)", what, wc.wr_id,
			 s < nsq ? sq[s] : 0, s, nsq, r < nrq ? rq[r] : 0, r,
			 nrq);
		s++;
	}
	RT_CHECK(s == nsq && r == nrq, "%s: %u of %u send and %u of %u "
		 "receive WQEs flushed", what, s, nsq, r, nrq);
	printf("    %s: %u send and %u receive WQEs flushed, in order, once\n",
	       what, s, r);
}

static void
rt_case_flush_order(void)
{
	const struct rt_ep_opts eo = { .type = IBV_QPT_RC };
	uint64_t sq[8], rq[8], brq[4];
	struct rt_dev d0, d1;
	struct rt_ep a, b;
	struct rt_buf lbuf, rbuf, target;
	struct ibv_qp_attr qa = { .qp_state = IBV_QPS_ERR };
	struct ibv_sge s;
	int ret;

	rt_open2(&d0, &d1);
	rt_ep_create(&a, &d0, &eo);
	rt_ep_create(&b, &d1, &eo);
	rt_step("RC QP whose send and receive CQEs share one CQ");
	rt_qp_again(&a, a.scq, a.scq);
	rt_rc_connect(&a, &b, &rt_rc_default);
	rt_buf_alloc(&lbuf, &d0, 4096, IBV_ACCESS_LOCAL_WRITE);
	rt_buf_alloc(&rbuf, &d1, 4096, IBV_ACCESS_LOCAL_WRITE);
	rt_buf_alloc(&target, &d1, 4096, RT_ACCESS_ALL);
	rt_fill_random(lbuf.p, lbuf.len);

	rt_step("5 receives on each side, then a WRITE with a bad rkey and 6 "
		"WQEs behind it, half of them unsignaled");
	for (unsigned int i = 0; i < 5; i++) {
		rq[i] = 2000 + i;
		rt_post_recv(&a, rq[i], NULL, 0);
	}
	for (unsigned int i = 0; i < 4; i++) {
		brq[i] = 3000 + i;
		s = rt_sge(&rbuf, i * 64, 64);
		rt_post_recv(&b, brq[i], &s, 1);
	}
	s = rt_sge(&lbuf, 0, 64);
	rt_post_send(&a, 1, IBV_WR_RDMA_WRITE, &s, 1, IBV_SEND_SIGNALED, 0,
		     (uintptr_t)target.p, target.mr->rkey ^ 0x80);
	for (unsigned int i = 0; i < 6; i++) {
		sq[i] = 10 + i;
		s = rt_sge(&lbuf, 64 * (i + 1), 64);
		rt_post_send(&a, sq[i], i % 2 ? IBV_WR_SEND : IBV_WR_RDMA_WRITE,
			     &s, 1, i % 3 ? 0 : IBV_SEND_SIGNALED, 0,
			     (uintptr_t)target.p, target.mr->rkey);
	}
	rt_step("first the WRITE's own error, before any flush");
	rt_expect_wc(a.scq, "the bad WRITE", 1, IBV_WC_REM_ACCESS_ERR, -1);
	rt_expect_flushes(a.scq, a.qp->qp_num, sq, 6, rq, 5,
			  "requester in ERR");
	rt_expect_qp_state(&a, IBV_QPS_ERR, "requester after the NAK");

	rt_step("posted in ERR: flushed too, in order, once");
	for (unsigned int i = 0; i < 2; i++) {
		sq[i] = 100 + i;
		rq[i] = 2100 + i;
		s = rt_sge(&lbuf, 64 * i, 64);
		rt_post_send(&a, sq[i], IBV_WR_SEND, &s, 1, 0, 0, 0, 0);
		rt_post_recv(&a, rq[i], NULL, 0);
	}
	rt_expect_flushes(a.scq, a.qp->qp_num, sq, 2, rq, 2, "posted in ERR");

	rt_step("ERR -> ERR: no event, nothing completes again");
	ret = ibv_modify_qp(a.qp, &qa, IBV_QP_STATE);
	RT_CHECK(ret == 0, "modify ERR -> ERR: %s", strerror(ret));
	rt_expect_empty(a.scq, RT_IDLE_MS, "shared CQ after ERR -> ERR");
	rt_expect_empty(a.rcq, 10, "unused CQ");
	rt_expect_no_async(&d0, 10, "requester (a remote error: CQE only)");

	rt_step("the responder: QP_ACCESS_ERR once, its receives flushed");
	rt_expect_async(&d1, IBV_EVENT_QP_ACCESS_ERR, b.qp, true, "responder");
	rt_expect_flushes(b.rcq, b.qp->qp_num, NULL, 0, brq, 4,
			  "responder in ERR");
	rt_expect_empty(b.scq, 10, "responder's send CQ");
	ret = ibv_modify_qp(b.qp, &qa, IBV_QP_STATE);
	RT_CHECK(ret == 0, "modify ERR -> ERR: %s", strerror(ret));
	rt_expect_empty(b.rcq, RT_IDLE_MS, "responder after ERR -> ERR");
	rt_expect_no_async(&d1, 10, "one QP_ACCESS_ERR");
	rt_check_guard(target.p, target.len, "target of the rejected WRITE");
	rt_ep_destroy(&a);
	rt_ep_destroy(&b);
	rt_buf_free(&lbuf);
	rt_buf_free(&rbuf);
	rt_buf_free(&target);
	rt_close2(&d0, &d1);
}

/* a to RTS, b to RTR only: b's first request establishes it. */
static void
rt_rtr_pair(struct rt_ep *a, struct rt_dev *d0, struct rt_ep *b,
	    struct rt_dev *d1)
{
	const struct rt_ep_opts eo = { .type = IBV_QPT_RC };

	rt_ep_create(a, d0, &eo);
	rt_ep_create(b, d1, &eo);
	rt_rc_init(a, RT_ACCESS_ALL);
	rt_rc_init(b, RT_ACCESS_ALL);
	rt_rc_rtr(a, b, &rt_rc_default);
	rt_rc_rtr(b, a, &rt_rc_default);
	rt_rc_rts(a, &rt_rc_default);
}

static void
rt_case_comm_est(void)
{
	struct rt_dev d0, d1;
	struct rt_ep a, b;
	struct rt_buf sb, rb;

	rt_open2(&d0, &d1);
	rt_rtr_pair(&a, &d0, &b, &d1);
	rt_buf_alloc(&sb, &d0, 4 * 2000, IBV_ACCESS_LOCAL_WRITE);
	rt_buf_alloc(&rb, &d1, 4 * 2000, IBV_ACCESS_LOCAL_WRITE);
	rt_step("no event before any request");
	rt_expect_no_async(&d1, RT_IDLE_MS, "RTR QP, nothing sent");
	rt_step("first SEND (2000 B, two packets) at the RTR QP");
	rt_sends(&a, &b, &sb, &rb, 1, 2000, IBV_SEND_SIGNALED);
	rt_recvs_check(&b, &sb, &rb, 0, 1, 2000);
	rt_expect_wc(a.scq, "SEND", 0, IBV_WC_SUCCESS, IBV_WC_SEND);
	rt_expect_async(&d1, IBV_EVENT_COMM_EST, b.qp, true, "first SEND");
	rt_step("more SENDs in RTR: no second COMM_EST");
	rt_sends(&a, &b, &sb, &rb, 3, 2000, IBV_SEND_SIGNALED);
	rt_recvs_check(&b, &sb, &rb, 0, 3, 2000);
	rt_expect_no_async(&d1, RT_IDLE_MS, "COMM_EST once");
	rt_expect_no_async(&d0, 10, "requester (RTS, only ACKs arrive)");
	rt_rc_rts(&b, &rt_rc_default);
	rt_ep_destroy(&a);
	rt_ep_destroy(&b);
	rt_buf_free(&sb);
	rt_buf_free(&rb);
	rt_close2(&d0, &d1);
}

/*
 * The SRQ limit (ibv_modify_srq(3), IBTA 10.2.9.3): armed, one
 * SRQ_LIMIT_REACHED naming the SRQ once fewer WQEs than the limit remain,
 * the limit then reads 0 (disarmed), no second event; armed again, one
 * more.  A limit above the SRQ's max_wr is EINVAL (rxe: above its ring's).
 */
static void
srq_sends(struct rt_ep *a, struct rt_ep *b, struct rt_buf *sb,
	  unsigned int *next, unsigned int n)
{
	struct ibv_sge s;

	for (unsigned int i = 0; i < n; i++, (*next)++) {
		struct ibv_wc wc;

		s = rt_sge(sb, 0, 64);
		rt_post_send(a, *next, IBV_WR_SEND, &s, 1, IBV_SEND_SIGNALED,
			     0, 0, 0);
		rt_expect_wc(a->scq, "SEND", *next, IBV_WC_SUCCESS,
			     IBV_WC_SEND);
		wc = rt_expect_wc(b->rcq, "its receive from the SRQ",
				  1000 + *next, IBV_WC_SUCCESS, IBV_WC_RECV);
		RT_CHECK(wc.byte_len == 64, "receive %u: byte_len %u", *next,
			 wc.byte_len);
	}
}

static void
srq_post(struct ibv_srq *srq, struct rt_buf *rb, unsigned int first,
	 unsigned int n)
{
	for (unsigned int i = first; i < first + n; i++) {
		struct ibv_sge s = rt_sge(rb, (i % 16) * 64, 64);
		struct ibv_recv_wr wr = {
			.wr_id = 1000 + i, .sg_list = &s, .num_sge = 1,
		}, *bad;
		int ret = ibv_post_srq_recv(srq, &wr, &bad);

		RT_CHECK(ret == 0, "ibv_post_srq_recv %u: %s", i,
			 strerror(ret));
	}
}

static uint32_t
srq_limit_now(struct ibv_srq *srq, uint32_t *max_wr)
{
	struct ibv_srq_attr at;
	int ret = ibv_query_srq(srq, &at);

	RT_CHECK(ret == 0, "ibv_query_srq: %s", strerror(ret));
	if (max_wr != NULL)
		*max_wr = at.max_wr;
	return at.srq_limit;
}

static void
rt_case_srq_limit(void)
{
	struct ibv_srq_init_attr sa = {
		.attr = { .max_wr = 16, .max_sge = 1 },
	};
	struct ibv_srq_attr at = { 0 };
	struct rt_dev d0, d1;
	struct rt_buf sb, rb;
	struct ibv_srq *srq;
	struct rt_ep a, b;
	unsigned int next = 0;
	uint32_t max_wr;
	int ret;

	rt_open2(&d0, &d1);
	srq = ibv_create_srq(d1.pd, &sa);
	RT_CHECK(srq != NULL, "ibv_create_srq: %s", strerror(errno));
	rt_ep_create(&a, &d0, &(struct rt_ep_opts){ .type = IBV_QPT_RC });
	rt_ep_create(&b, &d1, &(struct rt_ep_opts){ .type = IBV_QPT_RC,
						    .srq = srq });
	rt_rc_connect(&a, &b, &rt_rc_default);
	rt_buf_alloc(&sb, &d0, 64, IBV_ACCESS_LOCAL_WRITE);
	rt_buf_alloc(&rb, &d1, 16 * 64, IBV_ACCESS_LOCAL_WRITE);
	RT_CHECK(srq_limit_now(srq, &max_wr) == 0, "new SRQ: limit armed");

	rt_step("a limit above the SRQ's %u WRs: EINVAL", max_wr);
	at.srq_limit = max_wr + 1;
	ret = ibv_modify_srq(srq, &at, IBV_SRQ_LIMIT);
	RT_CHECK(ret == EINVAL, "ibv_modify_srq(limit %u): %d (%s), "
		 "expected EINVAL", at.srq_limit, ret, strerror(ret));
	RT_CHECK(srq_limit_now(srq, NULL) == 0, "refused limit armed");

	rt_step("8 WQEs, limit 4: no event while 4 remain");
	srq_post(srq, &rb, 0, 8);
	at.srq_limit = 4;
	ret = ibv_modify_srq(srq, &at, IBV_SRQ_LIMIT);
	RT_CHECK(ret == 0, "ibv_modify_srq(limit 4): %s", strerror(ret));
	RT_CHECK(srq_limit_now(srq, NULL) == 4, "limit 4 not read back");
	srq_sends(&a, &b, &sb, &next, 4);
	rt_expect_no_async(&d1, RT_IDLE_MS, "4 WQEs left, limit 4");
	RT_CHECK(srq_limit_now(srq, NULL) == 4, "limit gone, 4 WQEs left");

	rt_step("3 left: SRQ_LIMIT_REACHED once, the limit disarmed");
	srq_sends(&a, &b, &sb, &next, 1);
	rt_expect_async(&d1, IBV_EVENT_SRQ_LIMIT_REACHED, srq, true,
			"3 WQEs left, limit 4");
	RT_CHECK(srq_limit_now(srq, NULL) == 0, "limit still armed after "
		 "its event");
	srq_sends(&a, &b, &sb, &next, 2);
	rt_expect_no_async(&d1, RT_IDLE_MS, "disarmed: 1 WQE left");

	rt_step("armed again (5 WQEs, limit 3): one more event at 2 left");
	srq_post(srq, &rb, 8, 4);
	at.srq_limit = 3;
	ret = ibv_modify_srq(srq, &at, IBV_SRQ_LIMIT);
	RT_CHECK(ret == 0, "ibv_modify_srq(limit 3): %s", strerror(ret));
	srq_sends(&a, &b, &sb, &next, 2);
	rt_expect_no_async(&d1, RT_IDLE_MS, "3 WQEs left, limit 3");
	srq_sends(&a, &b, &sb, &next, 1);
	rt_expect_async(&d1, IBV_EVENT_SRQ_LIMIT_REACHED, srq, true,
			"2 WQEs left, limit 3");
	srq_sends(&a, &b, &sb, &next, 2);
	rt_expect_no_async(&d1, RT_IDLE_MS, "disarmed again: 0 left");
	rt_expect_no_async(&d0, 10, "the sender: no event");

	rt_ep_destroy(&a);
	rt_ep_destroy(&b);
	ret = ibv_destroy_srq(srq);
	RT_CHECK(ret == 0, "ibv_destroy_srq: %s", strerror(ret));
	rt_buf_free(&sb);
	rt_buf_free(&rb);
	rt_close2(&d0, &d1);
}

static void
rt_case_sq_drained(void)
{
	const unsigned int n = 64;
	const size_t len = 8192;
	struct rt_dev d0, d1;
	struct rt_ep a, b;
	struct rt_buf sb, rb;
	struct ibv_qp_attr qa = {
		.qp_state = IBV_QPS_SQD,
		.en_sqd_async_notify = 1,
	};
	struct ibv_qp_init_attr ia;
	unsigned int done = 0;
	struct ibv_wc wc;
	int ret;

	rt_open2(&d0, &d1);
	rt_rc_pair(&a, &d0, &b, &d1, NULL);
	rt_buf_alloc(&sb, &d0, n * len, IBV_ACCESS_LOCAL_WRITE);
	rt_buf_alloc(&rb, &d1, n * len, IBV_ACCESS_LOCAL_WRITE);
	rt_step("%u SENDs of %zu B, then RTS -> SQD with en_sqd_async_notify",
		n, len);
	rt_sends(&a, &b, &sb, &rb, n, len, IBV_SEND_SIGNALED);
	/* Once the first has completed, the others are under way. */
	rt_expect_wc(a.scq, "first SEND", 0, IBV_WC_SUCCESS, IBV_WC_SEND);
	done = 1;
	ret = ibv_modify_qp(a.qp, &qa, IBV_QP_STATE |
			    IBV_QP_EN_SQD_ASYNC_NOTIFY);
	RT_CHECK(ret == 0, "modify RTS -> SQD: %s", strerror(ret));
	rt_expect_async(&d0, IBV_EVENT_SQ_DRAINED, a.qp, true,
			"SQD drained");
	rt_step("drained: what was started has completed, nothing else runs");
	while (ibv_poll_cq(a.scq, 1, &wc) == 1) {
		RT_CHECK(wc.wr_id == done && wc.status == IBV_WC_SUCCESS,
			 "SEND completion %u: wr_id %" PRIu64 " status %s", done,
			 wc.wr_id, ibv_wc_status_str(wc.status));
		done++;
	}
	rt_expect_empty(a.scq, RT_IDLE_MS, "send CQ in SQD after drained");
	ret = ibv_query_qp(a.qp, &qa, IBV_QP_STATE, &ia);
	RT_CHECK(ret == 0 && qa.qp_state == IBV_QPS_SQD,
		 "query: %s, state %d, expected SQD", strerror(ret),
		 (int)qa.qp_state);
	printf("    %u of %u SENDs had completed when SQ_DRAINED came; "
	       "the rest were not started in SQD\n", done, n);
	rt_expect_no_async(&d0, 10, "one SQ_DRAINED");
	rt_step("SQD -> RTS: the rest go");
	memset(&qa, 0, sizeof(qa));
	qa.qp_state = IBV_QPS_RTS;
	ret = ibv_modify_qp(a.qp, &qa, IBV_QP_STATE);
	RT_CHECK(ret == 0, "modify SQD -> RTS: %s", strerror(ret));
	for (; done < n; done++)
		rt_expect_wc(a.scq, "SEND after SQD", done, IBV_WC_SUCCESS,
			     IBV_WC_SEND);
	rt_recvs_check(&b, &sb, &rb, 0, n, len);
	rt_step("SQD again with nothing outstanding: drained at once");
	memset(&qa, 0, sizeof(qa));
	qa.qp_state = IBV_QPS_SQD;
	qa.en_sqd_async_notify = 1;
	ret = ibv_modify_qp(a.qp, &qa, IBV_QP_STATE |
			    IBV_QP_EN_SQD_ASYNC_NOTIFY);
	RT_CHECK(ret == 0, "modify RTS -> SQD: %s", strerror(ret));
	rt_expect_async(&d0, IBV_EVENT_SQ_DRAINED, a.qp, true, "idle SQD");
	rt_step("SQD without en_sqd_async_notify: no event");
	memset(&qa, 0, sizeof(qa));
	qa.qp_state = IBV_QPS_RTS;
	ret = ibv_modify_qp(a.qp, &qa, IBV_QP_STATE);
	RT_CHECK(ret == 0, "modify SQD -> RTS: %s", strerror(ret));
	qa.qp_state = IBV_QPS_SQD;
	ret = ibv_modify_qp(a.qp, &qa, IBV_QP_STATE);
	RT_CHECK(ret == 0, "modify RTS -> SQD: %s", strerror(ret));
	rt_expect_no_async(&d0, RT_IDLE_MS, "SQD without notify");
	rt_expect_no_async(&d1, 10, "the responder");
	rt_ep_destroy(&a);
	rt_ep_destroy(&b);
	rt_buf_free(&sb);
	rt_buf_free(&rb);
	rt_close2(&d0, &d1);
}

static void
rt_expect_eagain(struct rt_dev *d, const char *what)
{
	struct ibv_async_event ev;
	int ret;

	RT_CHECK(!rt_async_readable(d, 0), "%s: async_fd readable with no "
		 "event queued", what);
	errno = 0;
	ret = ibv_get_async_event(d->ctx, &ev);
	RT_CHECK(ret == -1 && errno == EAGAIN, "%s: ibv_get_async_event on a "
		 "non-blocking fd returned %d, errno %d (%s), expected "
		 "-1/EAGAIN", what, ret, errno, strerror(errno));
}

static void
rt_case_nonblock(void)
{
	struct rt_dev d0, d1;
	struct rt_ep a, b;
	struct rt_buf sb, rb;
	struct ibv_async_event ev;
	int fl, ret;

	rt_open2(&d0, &d1);
	fl = fcntl(d1.ctx->async_fd, F_GETFL);
	RT_CHECK(fl >= 0 && fcntl(d1.ctx->async_fd, F_SETFL,
				  fl | O_NONBLOCK) == 0,
		 "fcntl(async_fd, O_NONBLOCK): %s", strerror(errno));
	rt_step("nothing queued: EAGAIN, not readable");
	rt_expect_eagain(&d1, "empty");
	rt_expect_eagain(&d1, "empty, again");
	rt_rtr_pair(&a, &d0, &b, &d1);
	rt_buf_alloc(&sb, &d0, 64, IBV_ACCESS_LOCAL_WRITE);
	rt_buf_alloc(&rb, &d1, 64, IBV_ACCESS_LOCAL_WRITE);
	rt_step("COMM_EST queued: readable until it is taken");
	rt_sends(&a, &b, &sb, &rb, 1, 64, IBV_SEND_SIGNALED);
	rt_recvs_check(&b, &sb, &rb, 0, 1, 64);
	RT_CHECK(rt_async_readable(&d1, (int)(rt_timeout_s * 1e3)),
		 "no event within %.0f s", rt_timeout_s);
	RT_CHECK(rt_async_readable(&d1, 0) && rt_async_readable(&d1, 0),
		 "async_fd not readable on a second look with the event "
		 "still queued");
	ret = ibv_get_async_event(d1.ctx, &ev);
	RT_CHECK(ret == 0, "ibv_get_async_event: %s", strerror(errno));
	RT_CHECK(ev.event_type == IBV_EVENT_COMM_EST && ev.element.qp == b.qp,
		 "got %s for %p, expected COMM_EST for %p",
		 ibv_event_type_str(ev.event_type), (void *)ev.element.qp, (void *)b.qp);
	rt_expect_eagain(&d1, "after taking the one event");
	ibv_ack_async_event(&ev);
	rt_expect_eagain(&d1, "after the ack");
	rt_rc_rts(&b, &rt_rc_default);
	rt_ep_destroy(&a);
	rt_ep_destroy(&b);
	rt_buf_free(&sb);
	rt_buf_free(&rb);
	rt_close2(&d0, &d1);
}

struct rt_destroy_arg {
	struct ibv_qp *qp;
	struct ibv_cq *cq;
	int ret;
	atomic_int done;
	double t_done;
};

static void *
rt_destroy_thread(void *p)
{
	struct rt_destroy_arg *d = p;

	d->ret = d->qp != NULL ? ibv_destroy_qp(d->qp) : ibv_destroy_cq(d->cq);
	d->t_done = rt_now();
	atomic_store(&d->done, 1);
	return NULL;
}

/* Destroy in a thread; it must wait for the ack of `ev`. */
static void
rt_destroy_after_ack(struct ibv_qp *qp, struct ibv_cq *cq,
		     struct ibv_async_event *ev, const char *what)
{
	struct rt_destroy_arg d = { .qp = qp, .cq = cq };
	const unsigned int hold_ms = 300;
	pthread_t th;
	double t_ack, deadline;

	atomic_init(&d.done, 0);
	RT_CHECK(pthread_create(&th, NULL, rt_destroy_thread, &d) == 0,
		 "pthread_create");
	rt_sleep_ms(hold_ms);
	RT_CHECK(!atomic_load(&d.done), "%s: destroy returned (%d) with a "
		 "delivered event not acked", what, d.ret);
	t_ack = rt_now();
	ibv_ack_async_event(ev);
	deadline = rt_now() + rt_timeout_s;
	while (!atomic_load(&d.done)) {
		RT_CHECK(rt_now() < deadline, "%s: destroy still blocked %.0f s "
			 "after the ack", what, rt_timeout_s);
		rt_sleep_ms(1);
	}
	pthread_join(th, NULL);
	RT_CHECK(d.ret == 0, "%s: destroy: %s", what, strerror(d.ret));
	RT_CHECK(d.t_done >= t_ack, "%s: destroy returned before the ack",
		 what);
	printf("    %s: blocked %u ms, returned %.1f ms after the ack\n", what,
	       hold_ms, (d.t_done - t_ack) * 1e3);
}

static void
rt_case_destroy_waits(void)
{
	struct rt_dev d0, d1;
	struct rt_ep a, b;
	struct rt_buf sb, rb;
	struct ibv_async_event ev;
	struct ibv_cq *small;
	struct ibv_qp *qp;
	struct ibv_wc wc;
	int ret;

	rt_open2(&d0, &d1);
	rt_rtr_pair(&a, &d0, &b, &d1);
	rt_buf_alloc(&sb, &d0, 64, IBV_ACCESS_LOCAL_WRITE);
	rt_buf_alloc(&rb, &d1, 64, IBV_ACCESS_LOCAL_WRITE);
	rt_step("COMM_EST delivered, not acked: ibv_destroy_qp blocks");
	rt_sends(&a, &b, &sb, &rb, 1, 64, IBV_SEND_SIGNALED);
	rt_recvs_check(&b, &sb, &rb, 0, 1, 64);
	ev = rt_expect_async(&d1, IBV_EVENT_COMM_EST, b.qp, false, "COMM_EST");
	qp = b.qp;
	rt_destroy_after_ack(qp, NULL, &ev, "ibv_destroy_qp");
	ret = ibv_destroy_cq(b.scq);
	RT_CHECK(ret == 0, "ibv_destroy_cq: %s", strerror(ret));
	ret = ibv_destroy_cq(b.rcq);
	RT_CHECK(ret == 0, "ibv_destroy_cq: %s", strerror(ret));
	rt_ep_destroy(&a);

	rt_step("CQ_ERR delivered, not acked: ibv_destroy_cq blocks");
	small = ibv_create_cq(d0.ctx, 1, NULL, NULL, 0);
	RT_CHECK(small != NULL, "ibv_create_cq(1): %s", strerror(errno));
	{
		struct ibv_qp_init_attr ia = {
			.send_cq = small, .recv_cq = small,
			.qp_type = IBV_QPT_RC,
			.cap = { .max_send_wr = 16, .max_recv_wr = 16,
				 .max_send_sge = 1, .max_recv_sge = 1 },
		};
		struct ibv_qp_attr qa = { .qp_state = IBV_QPS_ERR };

		/* A QP in ERR flushes its receives into the small CQ. */
		qp = ibv_create_qp(d0.pd, &ia);
		RT_CHECK(qp != NULL, "ibv_create_qp: %s", strerror(errno));
		a.qp = qp;
		a.dev = &d0;
		rt_rc_init(&a, RT_ACCESS_ALL);
		for (unsigned int i = 0; i < 8; i++)
			rt_post_recv(&a, i, NULL, 0);
		ret = ibv_modify_qp(qp, &qa, IBV_QP_STATE);
		RT_CHECK(ret == 0, "modify to ERR: %s", strerror(ret));
	}
	ev = rt_expect_async(&d0, IBV_EVENT_CQ_ERR, small, false,
			     "8 flushes into a CQ of 1");
	while (ibv_poll_cq(small, 1, &wc) == 1)
		RT_CHECK(wc.status == IBV_WC_WR_FLUSH_ERR, "flush status %s",
			 ibv_wc_status_str(wc.status));
	ret = ibv_destroy_qp(qp);
	RT_CHECK(ret == 0, "ibv_destroy_qp: %s", strerror(ret));
	rt_destroy_after_ack(NULL, small, &ev, "ibv_destroy_cq");
	rt_buf_free(&sb);
	rt_buf_free(&rb);
	rt_close2(&d0, &d1);
}

/*
 * peer_gone: the peer of an RC QP vanishes, before the first answer and
 * in the middle of a message larger than the send window.  The WR being
 * sent completes with RETRY_EXC_ERR once the retries are spent, every WR
 * after it with WR_FLUSH_ERR, in order, and QP_FATAL comes; nothing
 * waits for ever.  A message larger than the window never finishes
 * sending: its first window alone must start the retransmit timer (it
 * did not, and a requester that got no answer to it waited for ever).
 */
static void
rt_gone_expect(struct rt_dev *d, struct rt_ep *a, uint64_t first,
	       const char *what)
{
	char step[96];

	snprintf(step, sizeof(step), "%s: the WR in progress", what);
	rt_expect_wc(a->scq, step, first, IBV_WC_RETRY_EXC_ERR, -1);
	snprintf(step, sizeof(step), "%s: the SEND after it", what);
	rt_expect_wc(a->scq, step, first + 1, IBV_WC_WR_FLUSH_ERR, -1);
	snprintf(step, sizeof(step), "%s: the READ after it", what);
	rt_expect_wc(a->scq, step, first + 2, IBV_WC_WR_FLUSH_ERR, -1);
	rt_expect_empty(a->scq, RT_IDLE_MS, what);
	rt_expect_async(d, IBV_EVENT_QP_FATAL, a->qp, true, what);
	rt_expect_qp_state(a, IBV_QPS_ERR, what);
}

/* A 16 MiB WRITE, a SEND and a READ, all signaled, wr_ids first.. */
static void
rt_gone_post(struct rt_ep *a, struct rt_buf *src, struct rt_buf *dst,
	     uint64_t first)
{
	struct ibv_sge s = rt_sge(src, 0, src->len);
	struct ibv_sge s1 = rt_sge(src, 0, 64);

	rt_post_send(a, first, IBV_WR_RDMA_WRITE, &s, 1, IBV_SEND_SIGNALED, 0,
		     (uintptr_t)dst->p, dst->mr->rkey);
	rt_post_send(a, first + 1, IBV_WR_SEND, &s1, 1, IBV_SEND_SIGNALED, 0,
		     0, 0);
	rt_post_send(a, first + 2, IBV_WR_RDMA_READ, &s1, 1,
		     IBV_SEND_SIGNALED, 0, (uintptr_t)dst->p, dst->mr->rkey);
}

static void
rt_case_peer_gone(void)
{
	const struct rt_ep_opts eo = { .type = IBV_QPT_RC };
	struct rt_rc_opts o = rt_rc_default;
	const size_t len = 16u << 20;
	struct rt_dev d0, d1;
	struct rt_ep a, b;
	struct rt_buf src, dst;
	struct rt_loss l;
	double t0;
	uint64_t rx0;

	o.timeout = 8;		/* 1 ms (the engine's floor) */
	o.retry_cnt = 2;
	rt_open2(&d0, &d1);
	rt_buf_alloc(&src, &d0, len, IBV_ACCESS_LOCAL_WRITE);
	rt_buf_alloc(&dst, &d1, len, RT_ACCESS_ALL);
	rt_fill_random(src.p, len);

	rt_step("peer gone before the first answer: its QP destroyed after "
		"the connection, then 16 MiB WRITE, SEND, READ");
	rt_ep_create(&a, &d0, &eo);
	rt_ep_create(&b, &d1, &eo);
	rt_rc_connect(&a, &b, &o);
	rt_ep_destroy(&b);
	t0 = rt_now();
	rt_gone_post(&a, &src, &dst, 10);
	rt_gone_expect(&d0, &a, 10, "peer gone before the first answer");
	printf("    RETRY_EXC_ERR and flushes %.1f ms after the posts\n",
	       (rt_now() - t0) * 1e3);
	rt_ep_destroy(&a);

	rt_step("peer gone mid-message: its QP destroyed once the 16 MiB "
		"WRITE's first bytes landed");
	rt_ep_create(&a, &d0, &eo);
	rt_ep_create(&b, &d1, &eo);
	rt_rc_connect(&a, &b, &o);
	memset(dst.p, RT_GUARD_BYTE, len);
	rx0 = rt_stat(1, "rx_packets");
	rt_gone_post(&a, &src, &dst, 20);
	t0 = rt_now();
	/* The peer's counter, not the buffer, which its lcore is writing:
	 * reading it meanwhile is a data race (TSan says so). */
	while (rt_stat(1, "rx_packets") < rx0 + 4) {
		RT_CHECK(rt_now() - t0 < rt_timeout_s, "the WRITE's first "
			 "packets never arrived");
		rt_sleep_ms(1);
	}
	rt_ep_destroy(&b);
	RT_CHECK(memcmp(dst.p, src.p, 1024) == 0,
		 "the WRITE's first packet did not land");
	RT_CHECK(memcmp(dst.p + len - 4096, src.p + len - 4096, 4096) != 0,
		 "the whole WRITE landed before the peer went: not mid-message");
	rt_gone_expect(&d0, &a, 20, "peer gone mid-message");
	rt_loss_read(&l);
	RT_CHECK(l.c[0][RT_L_TIMEOUT] >= 2 * (o.retry_cnt + 1u),
		 "%" PRIu64 " retry timeouts for two retry budgets of %u",
		 l.c[0][RT_L_TIMEOUT], o.retry_cnt);
	/* Each timeout but the last of a budget resends the smallest
	 * window (a peer that dropped all of it gets less, not the same). */
	RT_CHECK(l.c[0][RT_L_RESTART] + 2 >= l.c[0][RT_L_TIMEOUT] &&
		 l.c[0][RT_L_RESTART] >= 2u * o.retry_cnt,
		 "%" PRIu64 " window restarts for %" PRIu64 " timeouts",
		 l.c[0][RT_L_RESTART], l.c[0][RT_L_TIMEOUT]);
	rt_ep_destroy(&a);
	rt_buf_free(&src);
	rt_buf_free(&dst);
	rt_close2(&d0, &d1);
}

/*
 * link_flap (test/verbs/link_flap.sh: two af_packet ports on the two ends
 * of a veth, RP_LF_IF the one of rocepmd0): the link goes down and up.
 * Each device reports IBV_EVENT_PORT_ERR, then PORT_ACTIVE, and
 * ibv_query_port follows; work posted while the link is down completes
 * once it is up again, data intact, if the retries last that long, and
 * with RETRY_EXC_ERR for the WR in progress and WR_FLUSH_ERR for the rest
 * if they do not.  Nothing waits for ever.
 */
static void
rt_link_set(const char *state)
{
	const char *ifn = getenv("RP_LF_IF");
	char cmd[128];

	RT_CHECK(ifn != NULL, "RP_LF_IF is not set (run by link_flap.sh)");
	snprintf(cmd, sizeof(cmd), "ip link set dev %s %s", ifn, state);
	RT_CHECK(system(cmd) == 0, "%s failed", cmd);
}

static void
rt_port_state(struct rt_dev *d, enum ibv_port_state want, const char *what)
{
	struct ibv_port_attr pa;
	int ret = ibv_query_port(d->ctx, RT_PORT, &pa);

	RT_CHECK(ret == 0, "ibv_query_port(%s): %s", d->name, strerror(ret));
	RT_CHECK(pa.state == want, "%s: %s port state %s, expected %s", what,
		 d->name, ibv_port_state_str(pa.state),
		 ibv_port_state_str(want));
}

static void
rt_link_down(struct rt_dev *d0, struct rt_dev *d1)
{
	rt_link_set("down");
	rt_expect_async(d0, IBV_EVENT_PORT_ERR, NULL, true, "link down");
	rt_expect_async(d1, IBV_EVENT_PORT_ERR, NULL, true,
			"link down (the peer's carrier)");
	rt_port_state(d0, IBV_PORT_DOWN, "link down");
	rt_port_state(d1, IBV_PORT_DOWN, "link down");
}

static void
rt_link_up(struct rt_dev *d0, struct rt_dev *d1)
{
	rt_link_set("up");
	rt_expect_async(d0, IBV_EVENT_PORT_ACTIVE, NULL, true, "link up");
	rt_expect_async(d1, IBV_EVENT_PORT_ACTIVE, NULL, true, "link up");
	rt_port_state(d0, IBV_PORT_ACTIVE, "link up");
	rt_port_state(d1, IBV_PORT_ACTIVE, "link up");
}

static void
rt_case_link_flap(void)
{
	const struct rt_ep_opts eo = { .type = IBV_QPT_RC };
	struct rt_rc_opts o = rt_rc_default;
	const size_t len = 1u << 20;
	struct rt_dev d0, d1;
	struct rt_ep a, b;
	struct rt_buf src, dst, rd;
	struct ibv_sge s, r, sr;
	struct ibv_wc wc;

	rt_open2(&d0, &d1);
	rt_port_state(&d0, IBV_PORT_ACTIVE, "after the open");
	rt_buf_alloc(&src, &d0, len, IBV_ACCESS_LOCAL_WRITE);
	rt_buf_alloc(&rd, &d0, len, IBV_ACCESS_LOCAL_WRITE);
	rt_buf_alloc(&dst, &d1, 2 * len, RT_ACCESS_ALL);
	rt_fill_random(src.p, len);
	rt_fill_random(dst.p + len, len);

	rt_step("link down and up within the retries (timeout 14, "
		"retry_cnt 7): WRITE, SEND, READ posted while down complete");
	o.timeout = 14;
	o.retry_cnt = 7;
	rt_ep_create(&a, &d0, &eo);
	rt_ep_create(&b, &d1, &eo);
	rt_rc_connect(&a, &b, &o);
	rt_link_down(&d0, &d1);
	s = rt_sge(&src, 0, len);
	rt_post_send(&a, 1, IBV_WR_RDMA_WRITE, &s, 1, IBV_SEND_SIGNALED, 0,
		     (uintptr_t)dst.p, dst.mr->rkey);
	r = rt_sge(&dst, len - 4096, 4096);
	rt_post_recv(&b, 2, &r, 1);
	sr = rt_sge(&src, 0, 4096);
	rt_post_send(&a, 2, IBV_WR_SEND, &sr, 1, IBV_SEND_SIGNALED, 0, 0, 0);
	sr = rt_sge(&rd, 0, len);
	rt_post_send(&a, 3, IBV_WR_RDMA_READ, &sr, 1, IBV_SEND_SIGNALED, 0,
		     (uintptr_t)(dst.p + len), dst.mr->rkey);
	rt_sleep_ms(200);
	rt_expect_empty(a.scq, 0, "nothing completes while the link is down");
	rt_link_up(&d0, &d1);
	rt_expect_wc(a.scq, "WRITE after the link came back", 1,
		     IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
	rt_expect_wc(a.scq, "SEND after the link came back", 2,
		     IBV_WC_SUCCESS, IBV_WC_SEND);
	wc = rt_expect_wc(a.scq, "READ after the link came back", 3,
			  IBV_WC_SUCCESS, IBV_WC_RDMA_READ);
	RT_CHECK(wc.byte_len == len, "READ byte_len %u", wc.byte_len);
	wc = rt_expect_wc(b.rcq, "receive", 2, IBV_WC_SUCCESS, IBV_WC_RECV);
	RT_CHECK(wc.byte_len == 4096, "receive byte_len %u", wc.byte_len);
	rt_check_data(dst.p + len - 4096, src.p, 4096, "SEND payload");
	rt_check_data(dst.p, src.p, len - 4096, "written data");
	rt_check_data(rd.p, dst.p + len, len, "read data");
	rt_ep_destroy(&a);
	rt_ep_destroy(&b);

	rt_step("link down longer than the retries (timeout 8, retry_cnt 1): "
		"RETRY_EXC_ERR, then WR_FLUSH_ERR, QP_FATAL");
	o.timeout = 8;
	o.retry_cnt = 1;
	rt_ep_create(&a, &d0, &eo);
	rt_ep_create(&b, &d1, &eo);
	rt_rc_connect(&a, &b, &o);
	rt_link_down(&d0, &d1);
	rt_gone_post(&a, &src, &dst, 10);
	rt_gone_expect(&d0, &a, 10, "link down");
	rt_link_up(&d0, &d1);
	rt_ep_destroy(&a);
	rt_ep_destroy(&b);

	rt_step("a new connection works once the link is back");
	o = rt_rc_default;	/* not the one retry above */
	rt_ep_create(&a, &d0, &eo);
	rt_ep_create(&b, &d1, &eo);
	rt_rc_connect(&a, &b, &o);
	r = rt_sge(&dst, 0, 4096);
	rt_post_recv(&b, 5, &r, 1);
	sr = rt_sge(&src, 4096, 4096);
	rt_post_send(&a, 5, IBV_WR_SEND, &sr, 1, IBV_SEND_SIGNALED, 0, 0, 0);
	rt_expect_wc(a.scq, "SEND on a new QP", 5, IBV_WC_SUCCESS, IBV_WC_SEND);
	rt_expect_wc(b.rcq, "receive on a new QP", 5, IBV_WC_SUCCESS,
		     IBV_WC_RECV);
	rt_check_data(dst.p, src.p + 4096, 4096, "SEND payload");
	rt_ep_destroy(&a);
	rt_ep_destroy(&b);
	rt_buf_free(&src);
	rt_buf_free(&rd);
	rt_buf_free(&dst);
	rt_close2(&d0, &d1);
}

/* ----------------------------------------------------------------- main */

/* The cases: test_async.def, which meson.build reads too. */
#define RT_CASE_FN(name) rt_case_##name
static const struct rt_case rt_cases[] = {
#include "test_async.def"
};

int
main(int argc, char **argv)
{
	rt_stat_prefix = "async_";	/* meson.build: CASE async_<case> */
	return rt_main(argc, argv, rt_cases,
		       sizeof(rt_cases) / sizeof(rt_cases[0]));
}
