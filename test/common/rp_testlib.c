/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rp_testlib: verbs helpers shared by rp_verbs_test, rp_async_test and
 * rp_events_test (see rp_testlib.h).
 */

#include <dlfcn.h>
#include <endian.h>
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "rp_testlib.h"

/* ------------------------------------------------------------ reporting */

const char *rt_case_name = "-";
char rt_step_buf[256] = "setup";
double rt_timeout_s = 20.0;
uint64_t rt_seed;
uint64_t rt_rng;

void
rt_fail(const char *func, int line, const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fprintf(stderr, "%s: FAIL: case %s, step \"%s\" (%s():%d): ",
		rt_prog, rt_case_name, rt_step_buf, func, line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n%s: replay with RP_TEST_SEED=%" PRIu64 "\n",
		rt_prog, rt_seed);
	fflush(stderr);
	/*
	 * No exit(): the engine may be what failed, and its destructors
	 * could hang.  The status is what the test harness needs.
	 */
	_exit(1);
}

void
rt_step(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(rt_step_buf, sizeof(rt_step_buf), fmt, ap);
	va_end(ap);
	printf("  %s\n", rt_step_buf);
	fflush(stdout);
}

/* SIGALRM: a verbs call did not return. */
void
rt_watchdog(int sig)
{
	static const char pre[] = ": FAIL: watchdog expired: case ";
	static const char mid[] = ", stuck in step \"";
	static const char end[] = "\"\n";
	ssize_t r;

	(void)sig;
	r = write(STDERR_FILENO, rt_prog, strlen(rt_prog));
	r = write(STDERR_FILENO, pre, sizeof(pre) - 1);
	r = write(STDERR_FILENO, rt_case_name, strlen(rt_case_name));
	r = write(STDERR_FILENO, mid, sizeof(mid) - 1);
	r = write(STDERR_FILENO, rt_step_buf, strnlen(rt_step_buf,
					sizeof(rt_step_buf)));
	r = write(STDERR_FILENO, end, sizeof(end) - 1);
	(void)r;
	_exit(1);
}

double
rt_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void
rt_sleep_ms(unsigned int ms)
{
	struct timespec ts = {
		.tv_sec = ms / 1000,
		.tv_nsec = (long)(ms % 1000) * 1000000L,
	};

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

/* ------------------------------------------------------------- patterns */

/* xorshift64*: reproducible from RP_TEST_SEED */
uint64_t
rt_rand64(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * 0x2545f4914f6cdd1dull;
}

uint32_t
rt_rand32(void)
{
	return (uint32_t)(rt_rand64(&rt_rng) >> 32);
}

void
rt_fill_random(void *buf, size_t len)
{
	uint8_t *p = buf;
	size_t i = 0;

	while (i < len) {
		uint64_t v = rt_rand64(&rt_rng);
		size_t n = len - i < 8 ? len - i : 8;

		memcpy(p + i, &v, n);
		i += n;
	}
}

/* Compare n bytes; on a mismatch, say where and how much. */
void
rt_check_data(const void *got, const void *exp, size_t n, const char *what)
{
	const uint8_t *g = got, *e = exp;
	size_t i, first = SIZE_MAX, bad = 0;

	if (memcmp(got, exp, n) == 0)
		return;
	for (i = 0; i < n; i++) {
		if (g[i] != e[i]) {
			if (first == SIZE_MAX)
				first = i;
			bad++;
		}
	}
	RT_FAIL("%s: %zu of %zu bytes differ, first at offset %zu: got 0x%02x, "
		"expected 0x%02x", what, bad, n, first, g[first], e[first]);
}

/* Bytes that nobody may have written. */
void
rt_check_guard(const void *p, size_t n, const char *what)
{
	const uint8_t *b = p;
	size_t i;

	for (i = 0; i < n; i++)
		RT_CHECK(b[i] == RT_GUARD_BYTE, "%s: guard byte %zu was "
			 "overwritten: 0x%02x, expected 0x%02x", what, i, b[i],
			 RT_GUARD_BYTE);
}

/* -------------------------------------------------------------- devices */

uint32_t
rt_mtu_bytes(enum ibv_mtu mtu)
{
	switch (mtu) {
	case IBV_MTU_256: return 256;
	case IBV_MTU_512: return 512;
	case IBV_MTU_1024: return 1024;
	case IBV_MTU_2048: return 2048;
	case IBV_MTU_4096: return 4096;
	}
	return 0;
}

/*
 * A port's link comes up asynchronously (memif connects its two ends after
 * the devices exist): wait, bounded, for PORT_ACTIVE, as test suites for
 * real HCAs do.
 */
void
rt_wait_active(struct ibv_context *ctx, const char *name)
{
	struct ibv_port_attr pa;
	double t0 = rt_now();
	int ret;

	for (;;) {
		ret = ibv_query_port(ctx, RT_PORT, &pa);
		RT_CHECK(ret == 0, "ibv_query_port(%s): %s", name,
			 strerror(ret));
		if (pa.state == IBV_PORT_ACTIVE)
			break;
		RT_CHECK(rt_now() - t0 < 10.0, "%s: port still %s (%d) after "
			 "10 s", name, ibv_port_state_str(pa.state),
			 (int)pa.state);
		rt_sleep_ms(10);
	}
	if (rt_now() - t0 > 0.001)
		printf("    %s: port ACTIVE after %.0f ms\n", name,
		       (rt_now() - t0) * 1e3);
}

void
rt_dev_open(struct rt_dev *d, const char *name)
{
	struct ibv_device **list;
	int i, n = 0, ret;

	memset(d, 0, sizeof(*d));
	snprintf(d->name, sizeof(d->name), "%s", name);
	list = ibv_get_device_list(&n);
	RT_CHECK(list != NULL, "ibv_get_device_list: %s", strerror(errno));
	for (i = 0; i < n; i++) {
		if (strcmp(ibv_get_device_name(list[i]), name) == 0) {
			d->ctx = ibv_open_device(list[i]);
			RT_CHECK(d->ctx != NULL, "ibv_open_device(%s): %s",
				 name, strerror(errno));
			break;
		}
	}
	ibv_free_device_list(list);
	RT_CHECK(d->ctx != NULL, "no device %s among the %d listed (is the "
		 "program running under rocepmd-run with the right config?)",
		 name, n);
	rt_wait_active(d->ctx, name);
	d->pd = ibv_alloc_pd(d->ctx);
	RT_CHECK(d->pd != NULL, "ibv_alloc_pd(%s): %s", name, strerror(errno));
	ret = ibv_query_device(d->ctx, &d->attr);
	RT_CHECK(ret == 0, "ibv_query_device(%s): %s", name, strerror(ret));
	ret = ibv_query_port(d->ctx, RT_PORT, &d->port);
	RT_CHECK(ret == 0, "ibv_query_port(%s): %s", name, strerror(ret));
	ret = ibv_query_gid(d->ctx, RT_PORT, rt_gid_index, &d->gid);
	RT_CHECK(ret == 0, "ibv_query_gid(%s): %s", name, strerror(ret));
	d->mtu = rt_mtu_bytes(d->port.active_mtu);
	RT_CHECK(d->mtu != 0, "%s: bad active_mtu %d", name,
		 (int)d->port.active_mtu);
}

void
rt_dev_close(struct rt_dev *d)
{
	int ret;

	ret = ibv_dealloc_pd(d->pd);
	RT_CHECK(ret == 0, "ibv_dealloc_pd(%s): %s", d->name, strerror(ret));
	ret = ibv_close_device(d->ctx);
	RT_CHECK(ret == 0, "ibv_close_device(%s): %d", d->name, ret);
	d->ctx = NULL;
}

/* -------------------------------------------------------------- buffers */

void
rt_buf_alloc(struct rt_buf *b, struct rt_dev *d, size_t len, int access)
{
	b->len = len;
	b->p = aligned_alloc(4096, (len + 4095) & ~(size_t)4095);
	RT_CHECK(b->p != NULL, "out of memory (%zu bytes)", len);
	memset(b->p, RT_GUARD_BYTE, len);
	b->mr = ibv_reg_mr(d->pd, b->p, len, access);
	RT_CHECK(b->mr != NULL, "ibv_reg_mr(%s, %zu bytes, access 0x%x): %s",
		 d->name, len, access, strerror(errno));
	RT_CHECK(b->mr->addr == b->p && b->mr->length == len,
		 "ibv_reg_mr: mr addr/length %p/%zu, registered %p/%zu",
		 b->mr->addr, b->mr->length, (void *)b->p, len);
}

void
rt_buf_free(struct rt_buf *b)
{
	int ret = ibv_dereg_mr(b->mr);

	RT_CHECK(ret == 0, "ibv_dereg_mr: %s", strerror(ret));
	free(b->p);
	b->p = NULL;
}

struct ibv_sge
rt_sge(const struct rt_buf *b, size_t off, size_t len)
{
	struct ibv_sge s = {
		.addr = (uintptr_t)(b->p + off),
		.length = (uint32_t)len,
		.lkey = b->mr->lkey,
	};

	RT_CHECK(off + len <= b->len, "internal: sge %zu+%zu outside a %zu "
		 "byte buffer", off, len, b->len);
	return s;
}

/* ------------------------------------------------------------ endpoints */

uint8_t rt_gid_index = RT_GID_INDEX;

const struct rt_rc_opts rt_rc_default = {
	.min_rnr_timer = 12,		/* 0.64 ms */
	.rnr_retry = 7,			/* infinite */
	.timeout = 14,			/* 67 ms */
	.retry_cnt = 7,
	.access = RT_ACCESS_ALL,
};

void
rt_ep_create(struct rt_ep *ep, struct rt_dev *d, const struct rt_ep_opts *o)
{
	struct ibv_qp_init_attr ia;

	memset(ep, 0, sizeof(*ep));
	ep->dev = d;
	ep->type = o->type;
	ep->psn = rt_rand32() & 0xffffff;
	ep->scq = ibv_create_cq(d->ctx, RT_CQE, o->scq_ctx, o->chan, 0);
	RT_CHECK(ep->scq != NULL, "ibv_create_cq(%s): %s", d->name,
		 strerror(errno));
	ep->rcq = ibv_create_cq(d->ctx, RT_CQE, o->rcq_ctx, o->chan, 0);
	RT_CHECK(ep->rcq != NULL, "ibv_create_cq(%s): %s", d->name,
		 strerror(errno));
	RT_CHECK(ep->scq->cqe >= RT_CQE, "ibv_create_cq: cqe %d < %d asked",
		 ep->scq->cqe, RT_CQE);
	memset(&ia, 0, sizeof(ia));
	ia.send_cq = ep->scq;
	ia.recv_cq = ep->rcq;
	ia.qp_type = o->type;
	ia.srq = o->srq;
	ia.cap.max_send_wr = o->max_send_wr ? o->max_send_wr : RT_WR;
	/* on an SRQ, the receive queue's are the SRQ's */
	ia.cap.max_recv_wr = o->srq != NULL ? 0 :
			     o->max_recv_wr ? o->max_recv_wr : RT_WR;
	ia.cap.max_send_sge = RT_SGE;
	ia.cap.max_recv_sge = o->srq != NULL ? 0 : RT_SGE;
	ia.cap.max_inline_data = RT_INLINE;
	ep->qp = ibv_create_qp(d->pd, &ia);
	RT_CHECK(ep->qp != NULL, "ibv_create_qp(%s, type %d, %u/%u WRs, %d "
		 "SGEs, inline %d): %s", d->name, (int)o->type,
		 ia.cap.max_send_wr, ia.cap.max_recv_wr, RT_SGE, RT_INLINE,
		 strerror(errno));
	RT_CHECK(ia.cap.max_inline_data >= RT_INLINE && ia.cap.max_send_sge >=
		 RT_SGE && (o->srq != NULL || ia.cap.max_recv_sge >= RT_SGE),
		 "ibv_create_qp granted less than asked: inline %u, send sge "
		 "%u, recv sge %u", ia.cap.max_inline_data,
		 ia.cap.max_send_sge, ia.cap.max_recv_sge);
	RT_CHECK(ep->qp->qp_num != 0 && ep->qp->qp_num < (1u << 24),
		 "bad QPN 0x%x", ep->qp->qp_num);
	RT_CHECK(ep->qp->state == IBV_QPS_RESET, "new QP: state %d, not "
		 "RESET", (int)ep->qp->state);
	ep->max_inline = ia.cap.max_inline_data;
}

void
rt_ep_destroy(struct rt_ep *ep)
{
	int ret;

	ret = ibv_destroy_qp(ep->qp);
	RT_CHECK(ret == 0, "ibv_destroy_qp: %s", strerror(ret));
	ret = ibv_destroy_cq(ep->scq);
	RT_CHECK(ret == 0, "ibv_destroy_cq: %s", strerror(ret));
	ret = ibv_destroy_cq(ep->rcq);
	RT_CHECK(ret == 0, "ibv_destroy_cq: %s", strerror(ret));
}

uint8_t
rt_rd_atom(const struct rt_dev *d)
{
	int n = d->attr.max_qp_rd_atom < d->attr.max_qp_init_rd_atom ?
		d->attr.max_qp_rd_atom : d->attr.max_qp_init_rd_atom;

	RT_CHECK(n >= 1, "%s: max_qp_rd_atom %d, max_qp_init_rd_atom %d: "
		 "no RDMA READ possible", d->name, d->attr.max_qp_rd_atom,
		 d->attr.max_qp_init_rd_atom);
	return (uint8_t)(n > 16 ? 16 : n);
}

void
rt_ah_attr(struct ibv_ah_attr *ah, const union ibv_gid *dgid)
{
	memset(ah, 0, sizeof(*ah));
	ah->is_global = 1;
	ah->grh.dgid = *dgid;
	ah->grh.sgid_index = rt_gid_index;
	ah->grh.hop_limit = 64;
	ah->port_num = RT_PORT;
}

/* A signaled UD SEND of sg to qpn through ah. */
void
rt_post_ud(struct rt_ep *ep, uint64_t wr_id, struct ibv_sge *sg, int nsge,
	   struct ibv_ah *ah, uint32_t qpn, uint32_t qkey)
{
	struct ibv_send_wr wr, *bad;
	int ret;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = wr_id;
	wr.opcode = IBV_WR_SEND;
	wr.sg_list = sg;
	wr.num_sge = nsge;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.ud.ah = ah;
	wr.wr.ud.remote_qpn = qpn;
	wr.wr.ud.remote_qkey = qkey;
	ret = ibv_post_send(ep->qp, &wr, &bad);
	RT_CHECK(ret == 0, "UD ibv_post_send: %s", strerror(ret));
}

int
rt_modify(struct rt_ep *ep, struct ibv_qp_attr *a, int mask)
{
	return ibv_modify_qp(ep->qp, a, mask);
}

/* A UD QP from RESET to RTS, with RT_QKEY. */
void
rt_ud_up(struct rt_ep *ep)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT,
		.pkey_index = 0,
		.port_num = RT_PORT,
		.qkey = RT_QKEY,
	};
	int ret;

	ret = rt_modify(ep, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			IBV_QP_PORT | IBV_QP_QKEY);
	RT_CHECK(ret == 0, "modify UD QP RESET->INIT: %s", strerror(ret));
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	ret = rt_modify(ep, &a, IBV_QP_STATE);
	RT_CHECK(ret == 0, "modify UD QP INIT->RTR: %s", strerror(ret));
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = ep->psn;
	ret = rt_modify(ep, &a, IBV_QP_STATE | IBV_QP_SQ_PSN);
	RT_CHECK(ret == 0, "modify UD QP RTR->RTS: %s", strerror(ret));
}

void
rt_rc_init(struct rt_ep *ep, int access)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT,
		.pkey_index = 0,
		.port_num = RT_PORT,
		.qp_access_flags = access,
	};
	int ret = rt_modify(ep, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			    IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);

	RT_CHECK(ret == 0, "modify RC QP 0x%x RESET->INIT: %s",
		 ep->qp->qp_num, strerror(ret));
}

void
rt_rc_rtr(struct rt_ep *ep, const struct rt_ep *peer,
	  const struct rt_rc_opts *o)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTR,
		.path_mtu = ep->dev->port.active_mtu < peer->dev->port.active_mtu ?
			ep->dev->port.active_mtu : peer->dev->port.active_mtu,
		.dest_qp_num = peer->qp->qp_num,
		.rq_psn = peer->psn,
		.max_dest_rd_atomic = rt_rd_atom(ep->dev),
		.min_rnr_timer = o->min_rnr_timer,
	};
	int ret;

	rt_ah_attr(&a.ah_attr, &peer->dev->gid);
	ret = rt_modify(ep, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
	RT_CHECK(ret == 0, "modify RC QP 0x%x INIT->RTR: %s", ep->qp->qp_num,
		 strerror(ret));
}

void
rt_rc_rts(struct rt_ep *ep, const struct rt_rc_opts *o)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTS,
		.timeout = o->timeout,
		.retry_cnt = o->retry_cnt,
		.rnr_retry = o->rnr_retry,
		.sq_psn = ep->psn,
		.max_rd_atomic = rt_rd_atom(ep->dev),
	};
	int ret = rt_modify(ep, &a, IBV_QP_STATE | IBV_QP_TIMEOUT |
			    IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			    IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);

	RT_CHECK(ret == 0, "modify RC QP 0x%x RTR->RTS: %s", ep->qp->qp_num,
		 strerror(ret));
}

/* Connect two RC endpoints to each other (RESET -> RTS); a == b: to itself. */
void
rt_rc_connect(struct rt_ep *a, struct rt_ep *b, const struct rt_rc_opts *o)
{
	rt_rc_init(a, o->access);
	if (b != a)
		rt_rc_init(b, o->access);
	rt_rc_rtr(a, b, o);
	if (b != a)
		rt_rc_rtr(b, a, o);
	rt_rc_rts(a, o);
	if (b != a)
		rt_rc_rts(b, o);
}

/* An RC pair a <-> b on devices da and db, connected. */
void
rt_rc_pair(struct rt_ep *a, struct rt_dev *da, struct rt_ep *b,
	   struct rt_dev *db, const struct rt_rc_opts *o)
{
	const struct rt_ep_opts eo = { .type = IBV_QPT_RC };

	rt_ep_create(a, da, &eo);
	rt_ep_create(b, db, &eo);
	rt_rc_connect(a, b, o != NULL ? o : &rt_rc_default);
}

/* -------------------------------------------------------- work requests */

int
rt_try_send(struct rt_ep *ep, uint64_t wr_id, enum ibv_wr_opcode op,
	    struct ibv_sge *sg, int nsge, unsigned int flags, uint32_t imm,
	    uint64_t raddr, uint32_t rkey)
{
	struct ibv_send_wr wr, *bad = NULL;
	int ret;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = wr_id;
	wr.opcode = op;
	wr.sg_list = sg;
	wr.num_sge = nsge;
	wr.send_flags = flags;
	/* The same word: immediate data, or the rkey to invalidate. */
	if (op == IBV_WR_SEND_WITH_INV || op == IBV_WR_LOCAL_INV)
		wr.invalidate_rkey = imm;
	else
		wr.imm_data = htobe32(imm);
	if (op == IBV_WR_ATOMIC_CMP_AND_SWP ||
	    op == IBV_WR_ATOMIC_FETCH_AND_ADD) {
		/* wr.atomic lays rkey out elsewhere than wr.rdma; the
		 * compare/add value is imm (swap 0). */
		wr.wr.atomic.remote_addr = raddr;
		wr.wr.atomic.rkey = rkey;
		wr.wr.atomic.compare_add = imm;
	} else {
		wr.wr.rdma.remote_addr = raddr;
		wr.wr.rdma.rkey = rkey;
	}
	ret = ibv_post_send(ep->qp, &wr, &bad);
	if (ret != 0)
		RT_CHECK(bad == &wr, "ibv_post_send failed (%s) without "
			 "pointing bad_wr at the WR", strerror(ret));
	return ret;
}

void
rt_post_send(struct rt_ep *ep, uint64_t wr_id, enum ibv_wr_opcode op,
	     struct ibv_sge *sg, int nsge, unsigned int flags, uint32_t imm,
	     uint64_t raddr, uint32_t rkey)
{
	int ret = rt_try_send(ep, wr_id, op, sg, nsge, flags, imm, raddr,
			      rkey);

	RT_CHECK(ret == 0, "ibv_post_send(qp 0x%x, wr_id %" PRIu64
		 ", opcode %d, %d sge): %s", ep->qp->qp_num, wr_id, (int)op,
		 nsge, strerror(ret));
}

int
rt_try_atomic(struct rt_ep *ep, bool ex, uint64_t wr_id,
	      enum ibv_wr_opcode op, struct ibv_sge *sg, uint64_t raddr,
	      uint32_t rkey, uint64_t cmp_add, uint64_t swap)
{
	struct ibv_send_wr wr, *bad = NULL;
	struct ibv_qp_ex *qpx;

	if (ex) {
		qpx = ibv_qp_to_qp_ex(ep->qp);
		RT_CHECK(qpx != NULL, "ibv_qp_to_qp_ex: NULL");
		ibv_wr_start(qpx);
		qpx->wr_id = wr_id;
		qpx->wr_flags = IBV_SEND_SIGNALED;
		if (op == IBV_WR_ATOMIC_CMP_AND_SWP)
			ibv_wr_atomic_cmp_swp(qpx, rkey, raddr, cmp_add, swap);
		else
			ibv_wr_atomic_fetch_add(qpx, rkey, raddr, cmp_add);
		ibv_wr_set_sge(qpx, sg->lkey, sg->addr, sg->length);
		return ibv_wr_complete(qpx);
	}
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = wr_id;
	wr.opcode = op;
	wr.sg_list = sg;
	wr.num_sge = 1;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.atomic.remote_addr = raddr;
	wr.wr.atomic.rkey = rkey;
	wr.wr.atomic.compare_add = cmp_add;
	wr.wr.atomic.swap = swap;
	return ibv_post_send(ep->qp, &wr, &bad);
}

void
rt_post_atomic(struct rt_ep *ep, bool ex, uint64_t wr_id,
	       enum ibv_wr_opcode op, struct ibv_sge *sg, uint64_t raddr,
	       uint32_t rkey, uint64_t cmp_add, uint64_t swap)
{
	int ret = rt_try_atomic(ep, ex, wr_id, op, sg, raddr, rkey, cmp_add,
				swap);

	RT_CHECK(ret == 0, "post atomic (%s API): %s", ex ? "ibv_wr_*" :
		 "ibv_post_send", strerror(ret));
}

void
rt_post_recv(struct rt_ep *ep, uint64_t wr_id, struct ibv_sge *sg, int nsge)
{
	struct ibv_recv_wr wr, *bad = NULL;
	int ret;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = wr_id;
	wr.sg_list = sg;
	wr.num_sge = nsge;
	ret = ibv_post_recv(ep->qp, &wr, &bad);
	RT_CHECK(ret == 0, "ibv_post_recv(qp 0x%x, wr_id %" PRIu64 "): %s",
		 ep->qp->qp_num, wr_id, strerror(ret));
}

/* ---------------------------------------------------------- completions */

const char *
rt_wc_opcode_str(int op)
{
	switch (op) {
	case IBV_WC_SEND: return "SEND";
	case IBV_WC_RDMA_WRITE: return "RDMA_WRITE";
	case IBV_WC_RDMA_READ: return "RDMA_READ";
	case IBV_WC_COMP_SWAP: return "COMP_SWAP";
	case IBV_WC_FETCH_ADD: return "FETCH_ADD";
	case IBV_WC_BIND_MW: return "BIND_MW";
	case IBV_WC_LOCAL_INV: return "LOCAL_INV";
	case IBV_WC_RECV: return "RECV";
	case IBV_WC_RECV_RDMA_WITH_IMM: return "RECV_RDMA_WITH_IMM";
	default: return "?";
	}
}

/* Poll one completion, or give up after rt_timeout_s. */
bool
rt_poll_wc(struct ibv_cq *cq, struct ibv_wc *wc, double timeout_s)
{
	double deadline = rt_now() + timeout_s;
	unsigned int spins = 0;
	int n;

	for (;;) {
		n = ibv_poll_cq(cq, 1, wc);
		RT_CHECK(n >= 0, "ibv_poll_cq returned %d", n);
		if (n == 1)
			return true;
		if (++spins > 64) {
			if (rt_now() > deadline)
				return false;
			sched_yield();
		}
	}
}

void
rt_wait_wc(struct ibv_cq *cq, struct ibv_wc *wc, const char *what)
{
	RT_CHECK(rt_poll_wc(cq, wc, rt_timeout_s), "%s: no completion within "
		 "%.0f s", what, rt_timeout_s);
}

/* Wait for one completion and check wr_id, status and (on success) opcode. */
struct ibv_wc
rt_expect_wc(struct ibv_cq *cq, const char *what, uint64_t wr_id,
	     enum ibv_wc_status status, int opcode)
{
	struct ibv_wc wc;

	rt_wait_wc(cq, &wc, what);
	RT_CHECK(wc.wr_id == wr_id && wc.status == status,
		 "%s: completion wr_id %" PRIu64 " status %s (%d, vendor_err "
		 "0x%x), expected wr_id %" PRIu64 " status %s (%d)", what,
		 wc.wr_id, ibv_wc_status_str(wc.status), (int)wc.status,
		 wc.vendor_err, wr_id, ibv_wc_status_str(status),
		 (int)status);
	if (status == IBV_WC_SUCCESS && opcode >= 0)
		RT_CHECK((int)wc.opcode == opcode, "%s: wr_id %" PRIu64
			 " completion opcode %s (%d), expected %s (%d)", what,
			 wr_id, rt_wc_opcode_str(wc.opcode), (int)wc.opcode,
			 rt_wc_opcode_str(opcode), opcode);
	return wc;
}

/* Nothing may complete on cq for ms milliseconds. */
void
rt_expect_empty(struct ibv_cq *cq, unsigned int ms, const char *what)
{
	struct ibv_wc wc;

	if (rt_poll_wc(cq, &wc, ms / 1000.0))
		RT_FAIL("%s: unexpected completion wr_id %" PRIu64 " status "
			"%s opcode %s byte_len %u", what, wc.wr_id,
			ibv_wc_status_str(wc.status),
			rt_wc_opcode_str(wc.opcode), wc.byte_len);
}

void
rt_expect_qp_state(struct rt_ep *ep, enum ibv_qp_state st, const char *what)
{
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr ia;
	int ret = ibv_query_qp(ep->qp, &a, IBV_QP_STATE, &ia);

	RT_CHECK(ret == 0, "%s: ibv_query_qp: %s", what, strerror(ret));
	RT_CHECK(a.qp_state == st, "%s: QP 0x%x is in state %d, expected %d",
		 what, ep->qp->qp_num, (int)a.qp_state, (int)st);
}

/* ----------------------------------------------------- completion channel */

/* Whether the channel fd becomes readable within ms. */
bool
rt_chan_readable(struct ibv_comp_channel *ch, int ms)
{
	struct pollfd p = { .fd = ch->fd, .events = POLLIN };
	int n;

	do {
		n = poll(&p, 1, ms);
	} while (n < 0 && errno == EINTR);
	RT_CHECK(n >= 0, "poll on the channel fd: %s", strerror(errno));
	RT_CHECK(!(p.revents & (POLLERR | POLLNVAL)), "poll on the channel "
		 "fd: revents 0x%x", p.revents);
	return n == 1 && (p.revents & POLLIN);
}

/* The channel holds no event: EAGAIN, and poll() says not readable. */
void
rt_chan_expect_none(struct ibv_comp_channel *ch, int ms, const char *what)
{
	struct ibv_cq *cq = NULL;
	void *ctx = NULL;
	int ret;

	RT_CHECK(!rt_chan_readable(ch, ms), "%s: the channel fd is readable "
		 "(an event is queued)", what);
	errno = 0;
	ret = ibv_get_cq_event(ch, &cq, &ctx);
	RT_CHECK(ret == -1 && errno == EAGAIN, "%s: ibv_get_cq_event on a "
		 "non-blocking channel returned %d, errno %d (%s), expected "
		 "-1/EAGAIN", what, ret, errno, strerror(errno));
}

/* Wait (poll(), bounded) for one event and check which CQ it names. */
void
rt_chan_expect_event(struct ibv_comp_channel *ch, struct ibv_cq *want,
		     void *want_ctx, const char *what)
{
	struct ibv_cq *cq = NULL;
	void *ctx = NULL;
	int ret;

	RT_CHECK(rt_chan_readable(ch, (int)(rt_timeout_s * 1000)), "%s: no "
		 "event on the channel within %.0f s", what, rt_timeout_s);
	ret = ibv_get_cq_event(ch, &cq, &ctx);
	RT_CHECK(ret == 0, "%s: ibv_get_cq_event: %d (%s)", what, ret,
		 strerror(errno));
	RT_CHECK(cq == want && ctx == want_ctx, "%s: event names cq %p ctx "
		 "%p, expected cq %p ctx %p", what, (void *)cq, ctx,
		 (void *)want, want_ctx);
}

void
rt_arm(struct ibv_cq *cq, int solicited)
{
	int ret = ibv_req_notify_cq(cq, solicited);

	RT_CHECK(ret == 0, "ibv_req_notify_cq(%d): %s", solicited,
		 strerror(ret));
}

/*
 * a SENDs 32 bytes from sbuf (a's device) to b, which gets a receive
 * posted in rbuf (b's device); the send completes, and the receive too
 * when poll_recv.
 */
void
rt_chan_send(struct rt_ep *a, struct rt_ep *b, struct rt_buf *sbuf,
	     struct rt_buf *rbuf, unsigned int flags, bool poll_recv,
	     uint64_t id)
{
	struct ibv_sge s = rt_sge(sbuf, 0, 32), r = rt_sge(rbuf, 64, 64);
	struct ibv_wc wc;

	rt_post_recv(b, id, &r, 1);
	rt_post_send(a, id + 1, IBV_WR_SEND, &s, 1, IBV_SEND_SIGNALED | flags,
		     0, 0, 0);
	rt_expect_wc(a->scq, "sender", id + 1, IBV_WC_SUCCESS, IBV_WC_SEND);
	if (poll_recv) {
		wc = rt_expect_wc(b->rcq, "receiver", id, IBV_WC_SUCCESS,
				  IBV_WC_RECV);
		RT_CHECK(wc.byte_len == 32, "byte_len %u", wc.byte_len);
		rt_check_data(rbuf->p + 64, sbuf->p, 32, "SEND payload");
	}
}

int
rt_main(int argc, char **argv, const struct rt_case *cases, size_t n)
{
	const struct rt_case *c = NULL;
	const char *env;
	size_t i;
	double t0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc != 2) {
		fprintf(stderr, "usage: %s CASE | list\n", argv[0]);
		return 2;
	}
	for (i = 0; i < n; i++) {
		if (strcmp(argv[1], "list") == 0)
			printf("%-18s %s\n", cases[i].name, cases[i].what);
		else if (strcmp(argv[1], cases[i].name) == 0)
			c = &cases[i];
	}
	if (strcmp(argv[1], "list") == 0)
		return 0;
	if (c == NULL) {
		fprintf(stderr, "%s: unknown case '%s' (try 'list')\n",
			argv[0], argv[1]);
		return 2;
	}
	rt_case_name = c->name;

	env = getenv("RP_TEST_TIMEOUT");
	if (env != NULL && atof(env) > 0)
		rt_timeout_s = atof(env);
	env = getenv("RP_TEST_SEED");
	rt_seed = env != NULL ? strtoull(env, NULL, 0) :
		(uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
	rt_rng = rt_seed != 0 ? rt_seed : 1;
	signal(SIGALRM, rt_watchdog);
	alarm(c->watchdog_s);
	printf("%s: case %s: %s (seed %" PRIu64 ", ROCEPMD_CONFIG=%s)\n",
	       rt_prog, c->name, c->what, rt_seed,
	       getenv("ROCEPMD_CONFIG") ? getenv("ROCEPMD_CONFIG") : "unset");
	t0 = rt_now();
	c->fn();
	alarm(0);
	printf("%s: case %s: PASS (%.2f s)\n", rt_prog, c->name,
	       rt_now() - t0);
	return 0;
}

/* ---------------------------------------------------------- async events */

/* Whether the context's async_fd becomes readable within ms. */
bool
rt_async_readable(struct rt_dev *d, int ms)
{
	struct pollfd p = { .fd = d->ctx->async_fd, .events = POLLIN };
	int n;

	do {
		n = poll(&p, 1, ms);
	} while (n < 0 && errno == EINTR);
	RT_CHECK(n >= 0, "poll on %s async_fd: %s", d->name, strerror(errno));
	RT_CHECK(!(p.revents & (POLLERR | POLLNVAL)), "poll on %s async_fd: "
		 "revents 0x%x", d->name, p.revents);
	return n == 1 && (p.revents & POLLIN);
}

/* A PORT_ACTIVE from a link that came up after the open: check, ack. */
bool
rt_port_event(struct rt_dev *d, struct ibv_async_event *ev)
{
	if (ev->event_type != IBV_EVENT_PORT_ACTIVE)
		return false;
	RT_CHECK(ev->element.port_num == RT_PORT, "%s: PORT_ACTIVE for port "
		 "%d, expected %d", d->name, ev->element.port_num, RT_PORT);
	printf("    %s: PORT_ACTIVE (port %d), link came up after the open\n",
	       d->name, ev->element.port_num);
	ibv_ack_async_event(ev);
	return true;
}

/*
 * Wait (poll(), bounded) for the next event of d, skipping PORT_ACTIVE,
 * and check its type and object.  Not acked unless `ack`.
 */
struct ibv_async_event
rt_expect_async(struct rt_dev *d, enum ibv_event_type type, const void *obj,
		bool ack, const char *what)
{
	struct ibv_async_event ev;
	double deadline = rt_now() + rt_timeout_s;
	const void *got;
	int ret;

	for (;;) {
		double left = deadline - rt_now();

		RT_CHECK(left > 0 && rt_async_readable(d, (int)(left * 1e3) + 1),
			 "%s: no asynchronous event on %s within %.0f s "
			 "(expected %s)", what, d->name, rt_timeout_s,
			 ibv_event_type_str(type));
		ret = ibv_get_async_event(d->ctx, &ev);
		RT_CHECK(ret == 0, "%s: ibv_get_async_event(%s) after poll() "
			 "said readable: %d, errno %s", what, d->name, ret,
			 strerror(errno));
		if (type != IBV_EVENT_PORT_ACTIVE && rt_port_event(d, &ev))
			continue;
		break;
	}
	RT_CHECK(ev.event_type == type, "%s: %s got event %s (%d), expected "
		 "%s (%d)", what, d->name, ibv_event_type_str(ev.event_type),
		 (int)ev.event_type, ibv_event_type_str(type), (int)type);
	switch (type) {
	case IBV_EVENT_CQ_ERR:
		got = ev.element.cq;
		break;
	case IBV_EVENT_SRQ_ERR:
	case IBV_EVENT_SRQ_LIMIT_REACHED:
		got = ev.element.srq;
		break;
	case IBV_EVENT_PORT_ACTIVE:
	case IBV_EVENT_PORT_ERR:
		got = NULL;
		break;
	default:
		got = ev.element.qp;
		break;
	}
	RT_CHECK(got == obj, "%s: %s names object %p, expected %p", what,
		 ibv_event_type_str(type), got, obj);
	if (ack)
		ibv_ack_async_event(&ev);
	return ev;
}

/* No event (but a PORT_ACTIVE) on d for ms milliseconds. */
void
rt_expect_no_async(struct rt_dev *d, int ms, const char *what)
{
	struct ibv_async_event ev;
	double deadline = rt_now() + ms / 1e3;
	int ret;

	for (;;) {
		double left = deadline - rt_now();

		if (left <= 0 || !rt_async_readable(d, (int)(left * 1e3) + 1))
			return;
		ret = ibv_get_async_event(d->ctx, &ev);
		RT_CHECK(ret == 0, "%s: ibv_get_async_event(%s): %s", what,
			 d->name, strerror(errno));
		if (rt_port_event(d, &ev))
			continue;
		RT_FAIL("%s: unexpected event %s on %s (qp/cq %p)", what,
			ibv_event_type_str(ev.event_type), d->name, (void *)ev.element.qp);
	}
}

/* Open both devices and eat the PORT_ACTIVEs their links may send. */
void
rt_open2(struct rt_dev *d0, struct rt_dev *d1)
{
	rt_dev_open(d0, RT_DEV0);
	rt_dev_open(d1, RT_DEV1);
	rt_expect_no_async(d0, 20, "after the open");
	rt_expect_no_async(d1, 20, "after the open");
}

void
rt_close2(struct rt_dev *d0, struct rt_dev *d1)
{
	rt_dev_close(d0);
	rt_dev_close(d1);
}

/* ------------------------------------------------------------ telemetry */

uint64_t
rt_telemetry_get(const char *sock, const char *cmd, const char *name)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	char buf[16384], key[80];
	const char *p;
	ssize_t n;
	int fd;

	RT_CHECK(strlen(sock) < sizeof(sun.sun_path), "socket path %s too long",
		 sock);
	strcpy(sun.sun_path, sock);
	fd = socket(AF_UNIX, SOCK_SEQPACKET, 0);
	RT_CHECK(fd >= 0, "socket: %s", strerror(errno));
	RT_CHECK(connect(fd, (struct sockaddr *)&sun, sizeof(sun)) == 0,
		 "telemetry socket %s: %s", sun.sun_path, strerror(errno));
	n = read(fd, buf, sizeof(buf) - 1);	/* the greeting */
	RT_CHECK(n > 0, "telemetry greeting: %s", strerror(errno));
	RT_CHECK(write(fd, cmd, strlen(cmd)) == (ssize_t)strlen(cmd),
		 "telemetry write: %s", strerror(errno));
	n = read(fd, buf, sizeof(buf) - 1);
	RT_CHECK(n > 0, "telemetry reply: %s", strerror(errno));
	buf[n] = '\0';
	close(fd);
	snprintf(key, sizeof(key), "\"%s\":", name);
	p = strstr(buf, key);
	RT_CHECK(p != NULL, "%s: no %s in %s", cmd, name, buf);
	return strtoull(p + strlen(key), NULL, 10);
}

int64_t
rt_lcore_counter(const char *name)
{
	typedef int (*stats_get_t)(unsigned int, unsigned int *,
				   const char **, uint64_t *, unsigned int);
	stats_get_t get = (stats_get_t)(uintptr_t)
		dlsym(RTLD_DEFAULT, "rp_lcore_stats_get");
	const char *names[64];
	uint64_t vals[64];
	int64_t sum = -1;
	int n;

	if (get == NULL)
		return -1;
	for (unsigned int i = 0; (n = get(i, NULL, names, vals, 64)) > 0;
	     i++)
		for (int s = 0; s < n && s < 64; s++)
			if (strcmp(names[s], name) == 0)
				sum = (sum < 0 ? 0 : sum) + (int64_t)vals[s];
	return sum;
}

uint64_t
rt_telemetry_stat(const char *sock, unsigned int dev, const char *name)
{
	char cmd[64];

	snprintf(cmd, sizeof(cmd), "/rocepmd/stats,%u", dev);
	return rt_telemetry_get(sock, cmd, name);
}

const char *rt_stat_prefix = "";

/*
 * A counter of device `dev` from /rocepmd/stats, over the telemetry
 * socket of the engine in this process.  These programs do not link DPDK:
 * the socket is where EAL puts it for --file-prefix=rp_<case> (root:
 * /var/run, else $XDG_RUNTIME_DIR or /tmp).
 */
static void
rt_telemetry_sock(char *sock, size_t len)
{
	const char *run = getuid() == 0 ? "/var/run" : getenv("XDG_RUNTIME_DIR");

	snprintf(sock, len, "%s/dpdk/rp_%s%s/dpdk_telemetry.v2",
		 run != NULL ? run : "/tmp", rt_stat_prefix, rt_case_name);
}

uint64_t
rt_stat(unsigned int dev, const char *name)
{
	char sock[108];	/* sun_path */

	rt_telemetry_sock(sock, sizeof(sock));
	return rt_telemetry_stat(sock, dev, name);
}

uint64_t
rt_qp_stat(unsigned int dev, uint32_t qpn, const char *name)
{
	char sock[108], cmd[64];

	rt_telemetry_sock(sock, sizeof(sock));
	snprintf(cmd, sizeof(cmd), "/rocepmd/qp,%u,%u", dev, qpn);
	return rt_telemetry_get(sock, cmd, name);
}

/* ------------------------------------------------------- loss counters */

static const char *const rt_loss_names[RT_LOSS_MAX] = {
	[RT_L_RETX] = "retransmits",
	[RT_L_TIMEOUT] = "retry_timeouts",
	[RT_L_PROBE] = "retransmit_probes",
	[RT_L_NAK_SENT] = "send_nak_seq",
	[RT_L_NAK_RCVD] = "rcvd_nak",
	[RT_L_OOS] = "out_of_seq_request",
	[RT_L_DUP] = "duplicate_request",
	[RT_L_ICRC] = "rx_bad_icrc",
	[RT_L_RNR_SENT] = "send_rnr_nak",
	[RT_L_RNR_RCVD] = "rcvd_rnr_nak",
	[RT_L_F_DROP] = "fault_dropped",
	[RT_L_F_DUP] = "fault_duplicated",
	[RT_L_F_CORRUPT] = "fault_corrupted",
	[RT_L_F_REORDER] = "fault_reordered",
	[RT_L_F_DELAY] = "fault_delayed",
	[RT_L_RESTART] = "cwnd_restarts",
	[RT_L_NAK_ONE] = "sr_nak_one",
};

void
rt_loss_read(struct rt_loss *l)
{
	for (unsigned int d = 0; d < 2; d++) {
		fprintf(stderr, "    rocepmd%u:", d);
		for (unsigned int i = 0; i < RT_LOSS_MAX; i++) {
			l->c[d][i] = rt_stat(d, rt_loss_names[i]);
			fprintf(stderr, " %s %" PRIu64, rt_loss_names[i],
				l->c[d][i]);
		}
		fprintf(stderr, "\n");
	}
}

/*
 * The counters of two devices that only talk to each other, where the
 * only NAKs are sequence and RNR NAKs: what one side received the other
 * sent (or a fault doubled on the way), a sequence NAK answers an
 * out-of-sequence request (but for a selective NAK of each later PSN
 * missing, sr_nak_one: a lost READ request of 16 responses draws 16 for
 * one request out of sequence; send_nak_seq counts frames, and one frame
 * may carry several of those in its map), and a bad ICRC is a frame a fault corrupted
 * (or the copy of one a receive fault doubled), and a window restarts
 * only on a timeout.  `need` (bits of 1 <<
 * enum rt_loss_ctr) lists the counters that must be nonzero, summed over
 * both devices: the mechanism they count ran.
 */
void
rt_loss_check(const struct rt_loss *l, uint32_t need)
{
	for (unsigned int d = 0; d < 2; d++) {
		const uint64_t *c = l->c[d], *o = l->c[1 - d];
		uint64_t dups = c[RT_L_F_DUP] + o[RT_L_F_DUP];

		RT_CHECK(c[RT_L_NAK_RCVD] <= o[RT_L_NAK_SENT] + dups,
			 "rocepmd%u received %" PRIu64 " NAKs, rocepmd%u sent "
			 "%" PRIu64 " (and %" PRIu64 " frames doubled)", d,
			 c[RT_L_NAK_RCVD], 1 - d, o[RT_L_NAK_SENT], dups);
		RT_CHECK(c[RT_L_RNR_RCVD] <= o[RT_L_RNR_SENT] + dups,
			 "rocepmd%u received %" PRIu64 " RNR NAKs, rocepmd%u "
			 "sent %" PRIu64 " (and %" PRIu64 " frames doubled)", d,
			 c[RT_L_RNR_RCVD], 1 - d, o[RT_L_RNR_SENT], dups);
		RT_CHECK(c[RT_L_NAK_SENT] <= c[RT_L_OOS] + c[RT_L_NAK_ONE],
			 "rocepmd%u sent %" PRIu64 " sequence NAKs (%" PRIu64
			 " of a later PSN missing) for %" PRIu64
			 " out-of-sequence requests", d, c[RT_L_NAK_SENT],
			 c[RT_L_NAK_ONE], c[RT_L_OOS]);
		RT_CHECK(c[RT_L_ICRC] <= o[RT_L_F_CORRUPT] +
			 c[RT_L_F_CORRUPT] + c[RT_L_F_DUP], "rocepmd%u dropped "
			 "%" PRIu64 " bad ICRCs, %" PRIu64 " frames corrupted "
			 "on their way to it", d, c[RT_L_ICRC],
			 o[RT_L_F_CORRUPT] + c[RT_L_F_CORRUPT]);
		RT_CHECK(c[RT_L_RESTART] <= c[RT_L_TIMEOUT], "rocepmd%u: %"
			 PRIu64 " window restarts for %" PRIu64 " timeouts", d,
			 c[RT_L_RESTART], c[RT_L_TIMEOUT]);
	}
	for (unsigned int i = 0; i < RT_LOSS_MAX; i++)
		RT_CHECK(!(need & (1u << i)) || l->c[0][i] + l->c[1][i] != 0,
			 "counter %s is 0 on both devices: the mechanism it "
			 "counts never ran", rt_loss_names[i]);
}
