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
 *   comm_est       first SEND arriving at an RTR QP
 *   sq_drained     RTS -> SQD with en_sqd_async_notify
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

/* What the configurations in test/engine/ say. */
#define RT_DEV0			"rocepmd0"
#define RT_DEV1			"rocepmd1"
#define RT_IPV4_0		0xc0000201u	/* 192.0.2.1 */
#define RT_IPV4_1		0xc0000202u	/* 192.0.2.2 */
#define RT_CFG_MTU		IBV_MTU_1024	/* mtu = 1024 */

#define RT_PORT			1
#define RT_GID_INDEX		0
#define RT_GRH_LEN		40
#define RT_GUARD		64		/* guard bytes around targets */
#define RT_GUARD_BYTE		0xa5
#define RT_QKEY			0x11111111u
#define RT_INLINE		128		/* max_inline_data asked for */
#define RT_CQE			512
#define RT_WR			256
#define RT_SGE			4
#define RT_IDLE_MS		100		/* "nothing arrives" windows */

#define RT_ACCESS_ALL	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
			 IBV_ACCESS_REMOTE_READ)

/* ------------------------------------------------------------ reporting */

static const char *rt_case_name = "-";
static char rt_step_buf[256] = "setup";
static double rt_timeout_s = 20.0;
static uint64_t rt_seed;
static uint64_t rt_rng;

static void rt_fail(const char *func, int line, const char *fmt, ...)
	__attribute__((noreturn, format(printf, 3, 4)));

#define RT_FAIL(...) rt_fail(__func__, __LINE__, __VA_ARGS__)
#define RT_CHECK(cond, ...) do { \
	if (!(cond)) \
		RT_FAIL(__VA_ARGS__); \
} while (0)

static void
rt_fail(const char *func, int line, const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fprintf(stderr, "rp_async_test: FAIL: case %s, step \"%s\" (%s():%d): ",
		rt_case_name, rt_step_buf, func, line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nrp_async_test: replay with RP_TEST_SEED=%" PRIu64
		"\n", rt_seed);
	fflush(stderr);
	/*
	 * No exit(): the engine may be what failed, and its destructors
	 * could hang.  The status is what the test harness needs.
	 */
	_exit(1);
}

static void rt_step(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void
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
static void
rt_watchdog(int sig)
{
	static const char pre[] = "rp_async_test: FAIL: watchdog expired: case ";
	static const char mid[] = ", stuck in step \"";
	static const char end[] = "\"\n";
	ssize_t r;

	(void)sig;
	r = write(STDERR_FILENO, pre, sizeof(pre) - 1);
	r = write(STDERR_FILENO, rt_case_name, strlen(rt_case_name));
	r = write(STDERR_FILENO, mid, sizeof(mid) - 1);
	r = write(STDERR_FILENO, rt_step_buf, strnlen(rt_step_buf,
					sizeof(rt_step_buf)));
	r = write(STDERR_FILENO, end, sizeof(end) - 1);
	(void)r;
	_exit(1);
}

static double
rt_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void
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
static uint64_t
rt_rand64(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * 0x2545f4914f6cdd1dull;
}

static uint32_t
rt_rand32(void)
{
	return (uint32_t)(rt_rand64(&rt_rng) >> 32);
}

static void
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
static void
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
static void
rt_check_guard(const void *p, size_t n, const char *what)
{
	const uint8_t *b = p;
	size_t i;

	for (i = 0; i < n; i++)
		RT_CHECK(b[i] == RT_GUARD_BYTE, "%s: guard byte %zu was "
			 "overwritten: 0x%02x, expected 0x%02x", what, i, b[i],
			 RT_GUARD_BYTE);
}

/* ------------------------------------------------------------- devices */

struct rt_dev {
	char name[IBV_SYSFS_NAME_MAX];
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_device_attr attr;
	struct ibv_port_attr port;
	union ibv_gid gid;
	uint32_t mtu;			/* active MTU in bytes */
};

static uint32_t
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
static void
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

static void
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
	ret = ibv_query_gid(d->ctx, RT_PORT, RT_GID_INDEX, &d->gid);
	RT_CHECK(ret == 0, "ibv_query_gid(%s): %s", name, strerror(ret));
	d->mtu = rt_mtu_bytes(d->port.active_mtu);
	RT_CHECK(d->mtu != 0, "%s: bad active_mtu %d", name,
		 (int)d->port.active_mtu);
}

static void
rt_dev_close(struct rt_dev *d)
{
	int ret;

	ret = ibv_dealloc_pd(d->pd);
	RT_CHECK(ret == 0, "ibv_dealloc_pd(%s): %s", d->name, strerror(ret));
	ret = ibv_close_device(d->ctx);
	RT_CHECK(ret == 0, "ibv_close_device(%s): %d", d->name, ret);
	d->ctx = NULL;
}

/* ------------------------------------------------------------- buffers */

struct rt_buf {
	uint8_t *p;
	size_t len;
	struct ibv_mr *mr;
};

static void
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

static void
rt_buf_free(struct rt_buf *b)
{
	int ret = ibv_dereg_mr(b->mr);

	RT_CHECK(ret == 0, "ibv_dereg_mr: %s", strerror(ret));
	free(b->p);
	b->p = NULL;
}

static struct ibv_sge
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

struct rt_ep {
	struct rt_dev *dev;
	struct ibv_cq *scq;
	struct ibv_cq *rcq;
	struct ibv_qp *qp;
	enum ibv_qp_type type;
	uint32_t psn;
	uint32_t max_inline;
};

struct rt_ep_opts {
	enum ibv_qp_type type;
	uint32_t max_send_wr;
	uint32_t max_recv_wr;
	struct ibv_comp_channel *chan;	/* both CQs on it, or NULL */
	void *scq_ctx;
	void *rcq_ctx;
};

static void
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
	ia.cap.max_send_wr = o->max_send_wr ? o->max_send_wr : RT_WR;
	ia.cap.max_recv_wr = o->max_recv_wr ? o->max_recv_wr : RT_WR;
	ia.cap.max_send_sge = RT_SGE;
	ia.cap.max_recv_sge = RT_SGE;
	ia.cap.max_inline_data = RT_INLINE;
	ep->qp = ibv_create_qp(d->pd, &ia);
	RT_CHECK(ep->qp != NULL, "ibv_create_qp(%s, type %d, %u/%u WRs, %d "
		 "SGEs, inline %d): %s", d->name, (int)o->type,
		 ia.cap.max_send_wr, ia.cap.max_recv_wr, RT_SGE, RT_INLINE,
		 strerror(errno));
	RT_CHECK(ia.cap.max_inline_data >= RT_INLINE && ia.cap.max_send_sge >=
		 RT_SGE && ia.cap.max_recv_sge >= RT_SGE,
		 "ibv_create_qp granted less than asked: inline %u, send sge "
		 "%u, recv sge %u", ia.cap.max_inline_data,
		 ia.cap.max_send_sge, ia.cap.max_recv_sge);
	RT_CHECK(ep->qp->qp_num != 0 && ep->qp->qp_num < (1u << 24),
		 "bad QPN 0x%x", ep->qp->qp_num);
	RT_CHECK(ep->qp->state == IBV_QPS_RESET, "new QP: state %d, not "
		 "RESET", (int)ep->qp->state);
	ep->max_inline = ia.cap.max_inline_data;
}

static void
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

struct rt_rc_opts {
	uint8_t min_rnr_timer;		/* responder */
	uint8_t rnr_retry;		/* requester */
	uint8_t timeout;
	uint8_t retry_cnt;
	int access;
};

static const struct rt_rc_opts rt_rc_default = {
	.min_rnr_timer = 12,		/* 0.64 ms */
	.rnr_retry = 7,			/* infinite */
	.timeout = 14,			/* 67 ms */
	.retry_cnt = 7,
	.access = RT_ACCESS_ALL,
};

static uint8_t
rt_rd_atom(const struct rt_dev *d)
{
	int n = d->attr.max_qp_rd_atom < d->attr.max_qp_init_rd_atom ?
		d->attr.max_qp_rd_atom : d->attr.max_qp_init_rd_atom;

	RT_CHECK(n >= 1, "%s: max_qp_rd_atom %d, max_qp_init_rd_atom %d: "
		 "no RDMA READ possible", d->name, d->attr.max_qp_rd_atom,
		 d->attr.max_qp_init_rd_atom);
	return (uint8_t)(n > 16 ? 16 : n);
}

static void
rt_ah_attr(struct ibv_ah_attr *ah, const union ibv_gid *dgid)
{
	memset(ah, 0, sizeof(*ah));
	ah->is_global = 1;
	ah->grh.dgid = *dgid;
	ah->grh.sgid_index = RT_GID_INDEX;
	ah->grh.hop_limit = 64;
	ah->port_num = RT_PORT;
}

static int
rt_modify(struct rt_ep *ep, struct ibv_qp_attr *a, int mask)
{
	return ibv_modify_qp(ep->qp, a, mask);
}

static void
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

static void
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

static void
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
static void
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
static void
rt_rc_pair(struct rt_ep *a, struct rt_dev *da, struct rt_ep *b,
	   struct rt_dev *db, const struct rt_rc_opts *o)
{
	const struct rt_ep_opts eo = { .type = IBV_QPT_RC };

	rt_ep_create(a, da, &eo);
	rt_ep_create(b, db, &eo);
	rt_rc_connect(a, b, o != NULL ? o : &rt_rc_default);
}

/* ---------------------------------------------------------- work requests */

static int
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
	wr.imm_data = htobe32(imm);
	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	ret = ibv_post_send(ep->qp, &wr, &bad);
	if (ret != 0)
		RT_CHECK(bad == &wr, "ibv_post_send failed (%s) without "
			 "pointing bad_wr at the WR", strerror(ret));
	return ret;
}

static void
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

static void
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

/* ----------------------------------------------------------- completions */

static const char *
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
static bool
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

static void
rt_wait_wc(struct ibv_cq *cq, struct ibv_wc *wc, const char *what)
{
	RT_CHECK(rt_poll_wc(cq, wc, rt_timeout_s), "%s: no completion within "
		 "%.0f s", what, rt_timeout_s);
}

/* Wait for one completion and check wr_id, status and (on success) opcode. */
static struct ibv_wc
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
static void
rt_expect_empty(struct ibv_cq *cq, unsigned int ms, const char *what)
{
	struct ibv_wc wc;

	if (rt_poll_wc(cq, &wc, ms / 1000.0))
		RT_FAIL("%s: unexpected completion wr_id %" PRIu64 " status "
			"%s opcode %s byte_len %u", what, wc.wr_id,
			ibv_wc_status_str(wc.status),
			rt_wc_opcode_str(wc.opcode), wc.byte_len);
}

static void
rt_expect_qp_state(struct rt_ep *ep, enum ibv_qp_state st, const char *what)
{
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr ia;
	int ret = ibv_query_qp(ep->qp, &a, IBV_QP_STATE, &ia);

	RT_CHECK(ret == 0, "%s: ibv_query_qp: %s", what, strerror(ret));
	RT_CHECK(a.qp_state == st, "%s: QP 0x%x is in state %d, expected %d",
		 what, ep->qp->qp_num, (int)a.qp_state, (int)st);
}

/* --------------------------------------------------------- async events */

static const char *
rt_ev_str(enum ibv_event_type t)
{
	return ibv_event_type_str(t);
}

/* Whether the context's async_fd becomes readable within ms. */
static bool
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
static bool
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
static struct ibv_async_event
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
			 rt_ev_str(type));
		ret = ibv_get_async_event(d->ctx, &ev);
		RT_CHECK(ret == 0, "%s: ibv_get_async_event(%s) after poll() "
			 "said readable: %d, errno %s", what, d->name, ret,
			 strerror(errno));
		if (type != IBV_EVENT_PORT_ACTIVE && rt_port_event(d, &ev))
			continue;
		break;
	}
	RT_CHECK(ev.event_type == type, "%s: %s got event %s (%d), expected "
		 "%s (%d)", what, d->name, rt_ev_str(ev.event_type),
		 (int)ev.event_type, rt_ev_str(type), (int)type);
	switch (type) {
	case IBV_EVENT_CQ_ERR:
		got = ev.element.cq;
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
		 rt_ev_str(type), got, obj);
	if (ack)
		ibv_ack_async_event(&ev);
	return ev;
}

/* No event (but a PORT_ACTIVE) on d for ms milliseconds. */
static void
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
			rt_ev_str(ev.event_type), d->name, (void *)ev.element.qp);
	}
}

/* Open both devices and eat the PORT_ACTIVEs their links may send. */
static void
rt_open2(struct rt_dev *d0, struct rt_dev *d1)
{
	rt_dev_open(d0, RT_DEV0);
	rt_dev_open(d1, RT_DEV1);
	rt_expect_no_async(d0, 20, "after the open");
	rt_expect_no_async(d1, 20, "after the open");
}

static void
rt_close2(struct rt_dev *d0, struct rt_dev *d1)
{
	rt_dev_close(d0);
	rt_dev_close(d1);
}

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
	ret = ibv_destroy_qp(a.qp);
	RT_CHECK(ret == 0, "ibv_destroy_qp: %s", strerror(ret));
	big = a.scq;
	a.scq = ibv_create_cq(d0.ctx, 4, NULL, NULL, 0);
	RT_CHECK(a.scq != NULL, "ibv_create_cq(4): %s", strerror(errno));
	RT_CHECK(a.scq->cqe >= 4 && a.scq->cqe < (int)n - 1,
		 "CQ of 4: cqe %d, the test needs 4..%u", a.scq->cqe, n - 2);
	{
		struct ibv_qp_init_attr ia = {
			.send_cq = a.scq, .recv_cq = a.rcq, .qp_type = IBV_QPT_RC,
			.cap = { .max_send_wr = 32, .max_recv_wr = 32,
				 .max_send_sge = 1, .max_recv_sge = 1 },
		};

		a.qp = ibv_create_qp(d0.pd, &ia);
		RT_CHECK(a.qp != NULL, "ibv_create_qp: %s", strerror(errno));
	}
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
		 rt_ev_str(ev.event_type), (void *)ev.element.qp, (void *)b.qp);
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

/* ----------------------------------------------------------------- main */

struct rt_case {
	const char *name;
	void (*fn)(void);
	unsigned int watchdog_s;	/* whole-case limit */
	const char *what;
};

static const struct rt_case rt_cases[] = {
	{ "cq_overflow", rt_case_cq_overflow, 60,
	  "CQ_ERR once per overflow, no CQE overwritten" },
	{ "qp_fatal", rt_case_qp_fatal, 60,
	  "retry exceeded -> QP_FATAL within 2 s" },
	{ "access_err", rt_case_access_err, 60,
	  "bad rkey -> responder's QP_ACCESS_ERR" },
	{ "comm_est", rt_case_comm_est, 60,
	  "first request at an RTR QP -> COMM_EST, once" },
	{ "sq_drained", rt_case_sq_drained, 60,
	  "RTS -> SQD with notify -> SQ_DRAINED after outstanding sends" },
	{ "nonblock", rt_case_nonblock, 60,
	  "O_NONBLOCK async_fd: EAGAIN, poll() readable while queued" },
	{ "destroy_waits", rt_case_destroy_waits, 60,
	  "destroy_qp/destroy_cq wait for the ack of delivered events" },
};

int
main(int argc, char **argv)
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
	for (i = 0; i < sizeof(rt_cases) / sizeof(rt_cases[0]); i++) {
		if (strcmp(argv[1], "list") == 0)
			printf("%-18s %s\n", rt_cases[i].name,
			       rt_cases[i].what);
		else if (strcmp(argv[1], rt_cases[i].name) == 0)
			c = &rt_cases[i];
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
	printf("rp_async_test: case %s: %s (seed %" PRIu64 ", ROCEPMD_CONFIG=%s)"
	       "\n", c->name, c->what, rt_seed,
	       getenv("ROCEPMD_CONFIG") ? getenv("ROCEPMD_CONFIG") : "unset");
	t0 = rt_now();
	c->fn();
	alarm(0);
	printf("rp_async_test: case %s: PASS (%.2f s)\n", c->name,
	       rt_now() - t0);
	return 0;
}
