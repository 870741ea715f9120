/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rp_tm_test: verbs tag matching (TM-SRQ) through the verbs API, one
 * process, two devices back to back over memif (test/engine/two-ports.ini.in).
 *
 * rocepmd0 is the server: a TM-SRQ whose CQ is an extended one with
 * IBV_WC_EX_WITH_TM_INFO, and an RC QP on it created with max_send_wr 0.
 * rocepmd1 is the client: a plain RC QP that sends TMH-carrying messages.
 * Every case checks each completion's wr_id, status, opcode, wc_flags, tag,
 * app_ctx and byte_len, and the data byte for byte with guard bytes around
 * the buffers (shared/spec/tag-matching.md, decisions D1 to D6).
 *
 *   rp_tm_test CASE | list
 *
 * Exit status: 0 pass, 1 fail, 2 usage.
 */

#include <endian.h>
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/tm_types.h>
#include <infiniband/verbs.h>

#include "rp_testlib.h"

const char rt_prog[] = "rp_tm_test";

#define TMH		16u
#define RVH		16u
#define SLOT		8192u		/* bytes per tagged or untagged buffer */
#define NSLOT		64u
#define MAX_TAGS	8192u
#define MAX_OPS		64u
#define IDLE_MS		150u

struct tm_wc {
	uint64_t wr_id;
	enum ibv_wc_status status;
	enum ibv_wc_opcode opcode;
	unsigned int flags;
	uint32_t byte_len;
	uint32_t imm;
	struct ibv_wc_tm_info tm;
};

struct tm_srv {
	struct rt_dev dev;
	struct ibv_cq_ex *cqx;
	struct ibv_srq *srq;
	struct rt_ep ep;		/* qp on the TM-SRQ; scq = rcq = cqx */
	struct rt_buf tbuf;		/* tagged buffers, NSLOT x SLOT */
	struct rt_buf ubuf;		/* untagged buffers, NSLOT x SLOT */
	uint32_t unexp;			/* software's unexpected count */
};

struct tm_cli {
	struct rt_dev dev;
	struct rt_ep ep;
	struct rt_buf sbuf;		/* messages and rendezvous data */
	struct rt_buf fbuf;		/* FINs come back here */
};

static struct tm_srv srv;
static struct tm_cli cli;

/* ---------------------------------------------------------- setup */

static struct ibv_cq_ex *
tm_cq_ex(struct rt_dev *d)
{
	struct ibv_cq_init_attr_ex ca = {
		.cqe = 4096,
		.wc_flags = IBV_WC_STANDARD_FLAGS | IBV_WC_EX_WITH_TM_INFO,
	};
	struct ibv_cq_ex *cqx = ibv_create_cq_ex(d->ctx, &ca);

	RT_CHECK(cqx != NULL, "ibv_create_cq_ex(%s): %s", d->name,
		 strerror(errno));
	return cqx;
}

static struct ibv_srq *
tm_srq_try(struct rt_dev *d, struct ibv_cq *cq, uint32_t tags, uint32_t ops,
	   uint32_t comp_mask)
{
	struct ibv_srq_init_attr_ex sa = {
		.attr = { .max_wr = NSLOT, .max_sge = 1 },
		.comp_mask = comp_mask,
		.srq_type = IBV_SRQT_TM,
		.pd = d->pd,
		.cq = cq,
		.tm_cap = { .max_num_tags = tags, .max_ops = ops },
	};

	return ibv_create_srq_ex(d->ctx, &sa);
}

#define TM_SRQ_MASK (IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD | \
	IBV_SRQ_INIT_ATTR_CQ | IBV_SRQ_INIT_ATTR_TM)

/* Server with a TM-SRQ of `tags` tags and `ops` ops, client, connected. */
static void
tm_setup(uint32_t tags, uint32_t ops, uint8_t min_rnr_timer)
{
	struct rt_rc_opts o = rt_rc_default;
	struct ibv_qp_init_attr ia;

	rt_dev_open(&srv.dev, RT_DEV0);
	rt_dev_open(&cli.dev, RT_DEV1);
	srv.cqx = tm_cq_ex(&srv.dev);
	srv.srq = tm_srq_try(&srv.dev, ibv_cq_ex_to_cq(srv.cqx), tags, ops,
			     TM_SRQ_MASK);
	RT_CHECK(srv.srq != NULL, "ibv_create_srq_ex(TM, %u tags, %u ops): %s",
		 tags, ops, strerror(errno));
	memset(&ia, 0, sizeof(ia));
	ia.send_cq = ibv_cq_ex_to_cq(srv.cqx);
	ia.recv_cq = ibv_cq_ex_to_cq(srv.cqx);
	ia.srq = srv.srq;
	ia.qp_type = IBV_QPT_RC;
	/* rendezvous READs and FINs need no send credits (D3) */
	ia.cap.max_send_wr = 0;
	srv.ep.dev = &srv.dev;
	srv.ep.type = IBV_QPT_RC;
	srv.ep.psn = rt_rand32() & 0xffffff;
	srv.ep.scq = srv.ep.rcq = ibv_cq_ex_to_cq(srv.cqx);
	srv.ep.qp = ibv_create_qp(srv.dev.pd, &ia);
	RT_CHECK(srv.ep.qp != NULL, "ibv_create_qp on a TM-SRQ, max_send_wr 0: %s",
		 strerror(errno));
	RT_CHECK(srv.ep.qp->srq == srv.srq, "qp->srq not set");

	rt_ep_create(&cli.ep, &cli.dev, &(struct rt_ep_opts){
		     .type = IBV_QPT_RC });
	o.min_rnr_timer = min_rnr_timer;
	rt_rc_connect(&srv.ep, &cli.ep, &o);

	rt_buf_alloc(&srv.tbuf, &srv.dev, NSLOT * SLOT, RT_ACCESS_ALL);
	rt_buf_alloc(&srv.ubuf, &srv.dev, NSLOT * SLOT, RT_ACCESS_ALL);
	rt_buf_alloc(&cli.sbuf, &cli.dev, NSLOT * SLOT, RT_ACCESS_ALL);
	rt_buf_alloc(&cli.fbuf, &cli.dev, NSLOT * 64, RT_ACCESS_ALL);
	srv.unexp = 0;
}

static void
tm_teardown(void)
{
	int ret;

	rt_buf_free(&cli.fbuf);
	rt_buf_free(&cli.sbuf);
	rt_buf_free(&srv.ubuf);
	rt_buf_free(&srv.tbuf);
	rt_ep_destroy(&cli.ep);
	ret = ibv_destroy_srq(srv.srq);
	RT_CHECK(ret == EBUSY, "ibv_destroy_srq with a QP on it: %s, not EBUSY",
		 strerror(ret));
	ret = ibv_destroy_qp(srv.ep.qp);
	RT_CHECK(ret == 0, "ibv_destroy_qp: %s", strerror(ret));
	ret = ibv_destroy_srq(srv.srq);
	RT_CHECK(ret == 0, "ibv_destroy_srq: %s", strerror(ret));
	ret = ibv_destroy_cq(ibv_cq_ex_to_cq(srv.cqx));
	RT_CHECK(ret == 0, "ibv_destroy_cq(ex): %s", strerror(ret));
	rt_dev_close(&cli.dev);
	rt_dev_close(&srv.dev);
}

/* ------------------------------------------------------- completions */

static bool
tm_poll(struct ibv_cq_ex *cqx, struct tm_wc *w, double timeout_s)
{
	struct ibv_poll_cq_attr pa = { .comp_mask = 0 };
	double deadline = rt_now() + timeout_s;
	int ret;

	while ((ret = ibv_start_poll(cqx, &pa)) == ENOENT)
		if (rt_now() > deadline)
			return false;
	RT_CHECK(ret == 0, "ibv_start_poll: %s", strerror(ret));
	memset(w, 0, sizeof(*w));
	w->wr_id = cqx->wr_id;
	w->status = cqx->status;
	w->opcode = ibv_wc_read_opcode(cqx);
	w->flags = ibv_wc_read_wc_flags(cqx);
	w->byte_len = ibv_wc_read_byte_len(cqx);
	if (w->flags & IBV_WC_WITH_IMM)
		w->imm = be32toh(ibv_wc_read_imm_data(cqx));
	ibv_wc_read_tm_info(cqx, &w->tm);
	/* A second completion in the same batch must read as itself. */
	ibv_end_poll(cqx);
	return true;
}

/* The server's next completion, checked field by field. */
static struct tm_wc
tm_expect(const char *what, uint64_t wr_id, enum ibv_wc_status status,
	  enum ibv_wc_opcode opcode, unsigned int flags, uint64_t tag)
{
	const unsigned int tm_flags = IBV_WC_TM_SYNC_REQ | IBV_WC_TM_MATCH |
		IBV_WC_TM_DATA_VALID;
	struct tm_wc w;

	RT_CHECK(tm_poll(srv.cqx, &w, rt_timeout_s), "%s: no completion "
		 "within %.0f s", what, rt_timeout_s);
	RT_CHECK(w.wr_id == wr_id && w.status == status && w.opcode == opcode,
		 "%s: wr_id %" PRIu64 " status %s opcode %d; expected wr_id %"
		 PRIu64 " status %s opcode %d", what, w.wr_id,
		 ibv_wc_status_str(w.status), (int)w.opcode, wr_id,
		 ibv_wc_status_str(status), (int)opcode);
	if (status == IBV_WC_SUCCESS || status == IBV_WC_TM_RNDV_INCOMPLETE)
		RT_CHECK((w.flags & tm_flags) == flags, "%s: wc_flags 0x%x, "
			 "expected TM flags 0x%x", what, w.flags, flags);
	if (opcode == IBV_WC_TM_RECV)
		RT_CHECK(w.tm.tag == tag, "%s: tag 0x%" PRIx64 ", expected 0x%"
			 PRIx64, what, (uint64_t)w.tm.tag, tag);
	return w;
}

static void
tm_expect_none(unsigned int ms, const char *what)
{
	struct tm_wc w;

	if (tm_poll(srv.cqx, &w, ms / 1000.0))
		RT_FAIL("%s: unexpected completion wr_id %" PRIu64 " status %s "
			"opcode %d flags 0x%x", what, w.wr_id,
			ibv_wc_status_str(w.status), (int)w.opcode, w.flags);
}

/* ------------------------------------------------------ list operations */

static int
tm_ops(struct ibv_ops_wr *op, struct ibv_ops_wr **bad)
{
	*bad = NULL;
	return ibv_post_srq_ops(srv.srq, op, bad);
}

/* How tm_add() completes. */
enum tm_sig {
	TM_UNSIGNALED = 0,
	TM_SIGNALED,		/* and in sync: no SYNC_REQ */
	TM_SIGNALED_OOS,	/* posted out of sync: SYNC_REQ */
};

/* ADD tag/mask for tagged slot `slot` (len bytes); returns the handle. */
static uint32_t
tm_add(uint64_t wr_id, uint64_t tag, uint64_t mask, uint32_t slot,
       uint32_t len, enum tm_sig signaled)
{
	struct ibv_sge sge = rt_sge(&srv.tbuf, (size_t)slot * SLOT, len);
	struct ibv_ops_wr op = {
		.wr_id = wr_id,
		.opcode = IBV_WR_TAG_ADD,
		.flags = signaled ? IBV_OPS_SIGNALED : 0,
		.tm = {
			.unexpected_cnt = srv.unexp,
			.add = {
				.recv_wr_id = wr_id,
				.sg_list = &sge,
				.num_sge = 1,
				.tag = tag,
				.mask = mask,
			},
		},
	};
	struct ibv_ops_wr *bad;
	double deadline = rt_now() + rt_timeout_s;
	int ret;

	/* ENOMEM for max_ops outstanding passes as the engine executes. */
	while ((ret = tm_ops(&op, &bad)) == ENOMEM && rt_now() < deadline)
		;
	RT_CHECK(ret == 0, "ibv_post_srq_ops(ADD tag 0x%" PRIx64 "): %s", tag,
		 strerror(ret));
	if (signaled != TM_UNSIGNALED)
		tm_expect("TM_ADD", wr_id, IBV_WC_SUCCESS, IBV_WC_TM_ADD,
			  signaled == TM_SIGNALED_OOS ? IBV_WC_TM_SYNC_REQ : 0,
			  0);
	return op.tm.handle;
}

/* A DEL (signaled) whose completion status is `status`. */
static void
tm_del(uint32_t handle, uint64_t wr_id, enum ibv_wc_status status)
{
	struct ibv_ops_wr op = {
		.wr_id = wr_id,
		.opcode = IBV_WR_TAG_DEL,
		.flags = IBV_OPS_SIGNALED,
		.tm = { .handle = handle },
	};
	struct ibv_ops_wr *bad;
	int ret = tm_ops(&op, &bad);

	RT_CHECK(ret == 0, "ibv_post_srq_ops(DEL): %s", strerror(ret));
	tm_expect("TM_DEL", wr_id, status, IBV_WC_TM_DEL, 0, 0);
}

/* SYNC with the software count; its completion must not ask again. */
static void
tm_sync(uint64_t wr_id)
{
	struct ibv_ops_wr op = {
		.wr_id = wr_id,
		.opcode = IBV_WR_TAG_SYNC,
		.flags = IBV_OPS_SIGNALED | IBV_OPS_TM_SYNC,
		.tm = { .unexpected_cnt = srv.unexp },
	};
	struct ibv_ops_wr *bad;
	int ret = tm_ops(&op, &bad);

	RT_CHECK(ret == 0, "ibv_post_srq_ops(SYNC): %s", strerror(ret));
	tm_expect("TM_SYNC", wr_id, IBV_WC_SUCCESS, IBV_WC_TM_SYNC, 0, 0);
}

static void
tm_post_untagged(uint64_t wr_id, uint32_t slot)
{
	struct ibv_sge sge = rt_sge(&srv.ubuf, (size_t)slot * SLOT, SLOT);
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge,
				  .num_sge = 1 };
	struct ibv_recv_wr *bad = NULL;
	int ret = ibv_post_srq_recv(srv.srq, &wr, &bad);

	RT_CHECK(ret == 0, "ibv_post_srq_recv: %s", strerror(ret));
}

/* ------------------------------------------------------------ messages */

static void
tmh_put(uint8_t *p, uint8_t op, uint32_t app_ctx, uint64_t tag)
{
	struct ibv_tmh h = {
		.opcode = op,
		.app_ctx = htobe32(app_ctx),
		.tag = htobe64(tag),
	};

	memcpy(p, &h, sizeof(h));
}

/* Client message in its slot: TMH then `len` random payload bytes. */
static uint8_t *
msg_eager(uint32_t slot, uint8_t op, uint32_t app_ctx, uint64_t tag,
	  uint32_t len)
{
	uint8_t *p = cli.sbuf.p + (size_t)slot * SLOT;

	tmh_put(p, op, app_ctx, tag);
	rt_fill_random(p + TMH, len);
	return p;
}

static void
cli_send(uint64_t wr_id, uint32_t slot, uint32_t len, bool imm,
	 uint32_t imm_data)
{
	struct ibv_sge sge = rt_sge(&cli.sbuf, (size_t)slot * SLOT, len);

	rt_post_send(&cli.ep, wr_id, imm ? IBV_WR_SEND_WITH_IMM : IBV_WR_SEND,
		     &sge, 1, IBV_SEND_SIGNALED, imm_data, 0, 0);
}

static void
cli_send_done(uint64_t wr_id)
{
	rt_expect_wc(cli.ep.scq, "client send", wr_id, IBV_WC_SUCCESS,
		     IBV_WC_SEND);
}

/* Tagged slot `slot` holds `n` bytes equal to src, then guard bytes. */
static void
check_tagged(uint32_t slot, const uint8_t *src, uint32_t n, const char *what)
{
	uint8_t *p = srv.tbuf.p + (size_t)slot * SLOT;

	rt_check_data(p, src, n, what);
	if (n < SLOT)
		rt_check_guard(p + n, SLOT - n < 64 ? SLOT - n : 64, what);
	memset(p, RT_GUARD_BYTE, SLOT);
}

static void
check_untagged(uint32_t slot, const uint8_t *src, uint32_t n, const char *what)
{
	uint8_t *p = srv.ubuf.p + (size_t)slot * SLOT;

	rt_check_data(p, src, n, what);
	if (n < SLOT)
		rt_check_guard(p + n, SLOT - n < 64 ? SLOT - n : 64, what);
	memset(p, RT_GUARD_BYTE, SLOT);
}

/* An unexpected message: whole, headers too, tag 0, no TM flags. */
static void
expect_unexpected(uint64_t wr_id, uint32_t uslot, const uint8_t *msg,
		  uint32_t len, const char *what)
{
	struct tm_wc w = tm_expect(what, wr_id, IBV_WC_SUCCESS,
				   IBV_WC_TM_RECV, 0, 0);

	RT_CHECK(w.byte_len == len, "%s: byte_len %u, expected %u", what,
		 w.byte_len, len);
	check_untagged(uslot, msg, len, what);
	srv.unexp++;
}

/* ---------------------------------------------------------------- cases */

static void
rt_case_caps(void)
{
	struct ibv_device_attr_ex a;
	struct ibv_cq *plain;
	struct ibv_cq_ex *cqx;
	struct ibv_srq *srq;
	int ret;

	rt_dev_open(&srv.dev, RT_DEV0);
	memset(&a, 0, sizeof(a));
	ret = ibv_query_device_ex(srv.dev.ctx, NULL, &a);
	RT_CHECK(ret == 0, "ibv_query_device_ex: %s", strerror(ret));
	RT_CHECK(a.tm_caps.flags & IBV_TM_CAP_RC, "tm_caps.flags 0x%x: no "
		 "IBV_TM_CAP_RC", a.tm_caps.flags);
	RT_CHECK(a.tm_caps.max_num_tags >= MAX_TAGS && a.tm_caps.max_ops >=
		 MAX_OPS && a.tm_caps.max_sge == 1 &&
		 a.tm_caps.max_rndv_hdr_size >= TMH + RVH,
		 "tm_caps: tags %u ops %u sge %u rndv_hdr %u",
		 a.tm_caps.max_num_tags, a.tm_caps.max_ops, a.tm_caps.max_sge,
		 a.tm_caps.max_rndv_hdr_size);
	RT_CHECK(a.orig_attr.max_srq > 0 && a.orig_attr.max_srq_wr >= (int)NSLOT,
		 "max_srq %d max_srq_wr %d", a.orig_attr.max_srq,
		 a.orig_attr.max_srq_wr);

	plain = ibv_create_cq(srv.dev.ctx, 16, NULL, NULL, 0);
	RT_CHECK(plain != NULL, "ibv_create_cq: %s", strerror(errno));
	cqx = tm_cq_ex(&srv.dev);
	/* TM-2: the CQ is mandatory and, as with mlx5, an extended one. */
	srq = tm_srq_try(&srv.dev, plain, 16, 4, TM_SRQ_MASK);
	RT_CHECK(srq == NULL && errno == EINVAL, "TM-SRQ on a plain CQ: %p %s",
		 (void *)srq, strerror(errno));
	srq = tm_srq_try(&srv.dev, NULL, 16, 4, TM_SRQ_MASK &
			 ~(uint32_t)IBV_SRQ_INIT_ATTR_CQ);
	RT_CHECK(srq == NULL && errno == EINVAL, "TM-SRQ without a CQ: %p %s",
		 (void *)srq, strerror(errno));
	srq = tm_srq_try(&srv.dev, ibv_cq_ex_to_cq(cqx),
			 a.tm_caps.max_num_tags + 1, 4, TM_SRQ_MASK);
	RT_CHECK(srq == NULL && errno == EINVAL, "max_num_tags beyond the "
		 "cap: %p %s", (void *)srq, strerror(errno));
	srq = tm_srq_try(&srv.dev, ibv_cq_ex_to_cq(cqx), 16,
			 a.tm_caps.max_ops + 1, TM_SRQ_MASK);
	RT_CHECK(srq == NULL && errno == EINVAL, "max_ops beyond the cap: %p %s",
		 (void *)srq, strerror(errno));
	srq = tm_srq_try(&srv.dev, ibv_cq_ex_to_cq(cqx), 16, 4, TM_SRQ_MASK);
	RT_CHECK(srq != NULL, "valid TM-SRQ: %s", strerror(errno));
	/* The CQ is in use while the SRQ is. */
	ret = ibv_destroy_cq(ibv_cq_ex_to_cq(cqx));
	RT_CHECK(ret == EBUSY, "destroy the TM-SRQ's CQ: %s, not EBUSY",
		 strerror(ret));
	RT_CHECK(ibv_destroy_srq(srq) == 0, "ibv_destroy_srq");
	RT_CHECK(ibv_destroy_cq(ibv_cq_ex_to_cq(cqx)) == 0, "destroy cq ex");
	RT_CHECK(ibv_destroy_cq(plain) == 0, "destroy cq");
	rt_dev_close(&srv.dev);
}

static void
rt_case_eager(void)
{
	uint8_t *m;
	struct tm_wc w;
	uint32_t big = 3000;	/* three packets at MTU 1024 */

	tm_setup(MAX_TAGS, MAX_OPS, 12);

	rt_step("one packet: MATCH | DATA_VALID in one CQE");
	tm_add(100, 5, UINT64_MAX, 0, SLOT, TM_SIGNALED);
	m = msg_eager(0, IBV_TMH_EAGER, 0xabcd1234u, 5, 100);
	cli_send(1, 0, TMH + 100, false, 0);
	w = tm_expect("eager 1 packet", 100, IBV_WC_SUCCESS, IBV_WC_TM_RECV,
		      IBV_WC_TM_MATCH | IBV_WC_TM_DATA_VALID, 5);
	RT_CHECK(w.byte_len == 100 && w.tm.priv == 0xabcd1234u,
		 "byte_len %u priv 0x%x", w.byte_len, w.tm.priv);
	check_tagged(0, m + TMH, 100, "eager payload (TMH not placed)");
	cli_send_done(1);

	rt_step("several packets: MATCH, then DATA_VALID (D2)");
	tm_add(101, 6, UINT64_MAX, 1, SLOT, TM_SIGNALED);
	m = msg_eager(1, IBV_TMH_EAGER, 7, 6, big);
	cli_send(2, 1, TMH + big, false, 0);
	w = tm_expect("eager MATCH", 101, IBV_WC_SUCCESS, IBV_WC_TM_RECV,
		      IBV_WC_TM_MATCH, 6);
	RT_CHECK(w.tm.priv == 7, "priv %u", w.tm.priv);
	w = tm_expect("eager DATA_VALID", 101, IBV_WC_SUCCESS, IBV_WC_TM_RECV,
		      IBV_WC_TM_DATA_VALID, 0);
	RT_CHECK(w.byte_len == big, "byte_len %u, expected %u", w.byte_len, big);
	check_tagged(1, m + TMH, big, "multi-packet eager payload");
	cli_send_done(2);

	rt_step("SEND with immediate");
	tm_add(102, 7, UINT64_MAX, 2, SLOT, TM_SIGNALED);
	m = msg_eager(2, IBV_TMH_EAGER, 0, 7, 64);
	cli_send(3, 2, TMH + 64, true, 0x5eed);
	w = tm_expect("eager imm", 102, IBV_WC_SUCCESS, IBV_WC_TM_RECV,
		      IBV_WC_TM_MATCH | IBV_WC_TM_DATA_VALID, 7);
	RT_CHECK((w.flags & IBV_WC_WITH_IMM) && w.imm == 0x5eed,
		 "flags 0x%x imm 0x%x", w.flags, w.imm);
	check_tagged(2, m + TMH, 64, "eager imm payload");
	cli_send_done(3);

	rt_step("too long for the tagged buffer: LOC_LEN_ERR");
	tm_add(103, 8, UINT64_MAX, 3, 32, TM_SIGNALED);
	msg_eager(3, IBV_TMH_EAGER, 0, 8, 64);
	cli_send(4, 3, TMH + 64, false, 0);
	/* The error completion still names the tag it consumed. */
	tm_expect("eager too long", 103, IBV_WC_LOC_LEN_ERR, IBV_WC_TM_RECV,
		  0, 8);
	tm_expect_none(IDLE_MS, "after the error");
	tm_teardown();
}

static void
rt_case_unexpected(void)
{
	uint8_t *m;

	tm_setup(MAX_TAGS, MAX_OPS, 12);
	for (uint32_t i = 0; i < 8; i++)
		tm_post_untagged(500 + i, i);

	rt_step("no tag posted: unexpected, whole message, tag 0");
	m = msg_eager(0, IBV_TMH_EAGER, 1, 0x1234, 200);
	cli_send(1, 0, TMH + 200, false, 0);
	expect_unexpected(500, 0, m, TMH + 200, "unexpected eager");
	cli_send_done(1);
	tm_sync(27);

	rt_step("an unmatched RNDV is unexpected too, with its RVH");
	m = cli.sbuf.p + SLOT;
	tmh_put(m, IBV_TMH_RNDV, 2, 0x4321);
	rt_fill_random(m + TMH, RVH);
	cli_send(2, 1, TMH + RVH, false, 0);
	expect_unexpected(501, 1, m, TMH + RVH, "unexpected rndv");
	cli_send_done(2);

	rt_step("D1: a tag added out of sync is not matched until SYNC");
	/* The last SYNC reported 1; the device has delivered 2 since. */
	tm_add(600, 0x79, UINT64_MAX, 0, SLOT, TM_SIGNALED_OOS);
	rt_step("the message for the new tag goes unexpected");
	m = msg_eager(2, IBV_TMH_EAGER, 3, 0x79, 50);
	cli_send(3, 2, TMH + 50, false, 0);
	expect_unexpected(502, 2, m, TMH + 50, "message for an ineligible tag");
	cli_send_done(3);
	tm_sync(28);
	rt_step("after SYNC the tag matches");
	m = msg_eager(3, IBV_TMH_EAGER, 4, 0x79, 50);
	cli_send(4, 3, TMH + 50, false, 0);
	tm_expect("matched after SYNC", 600, IBV_WC_SUCCESS, IBV_WC_TM_RECV,
		  IBV_WC_TM_MATCH | IBV_WC_TM_DATA_VALID, 0x79);
	check_tagged(0, m + TMH, 50, "payload after SYNC");
	cli_send_done(4);

	rt_step("tags eligible before an unexpected arrival stay eligible");
	tm_add(601, 0x80, UINT64_MAX, 1, SLOT, TM_SIGNALED);
	m = msg_eager(4, IBV_TMH_EAGER, 5, 0x81, 20);
	cli_send(5, 4, TMH + 20, false, 0);
	expect_unexpected(503, 3, m, TMH + 20, "unexpected 0x81");
	cli_send_done(5);
	/* No SYNC yet: 0x80 was listed in sync, so it still matches. */
	m = msg_eager(5, IBV_TMH_EAGER, 6, 0x80, 20);
	cli_send(6, 5, TMH + 20, false, 0);
	tm_expect("older tag still eligible", 601, IBV_WC_SUCCESS,
		  IBV_WC_TM_RECV, IBV_WC_TM_MATCH | IBV_WC_TM_DATA_VALID, 0x80);
	check_tagged(1, m + TMH, 20, "older tag payload");
	cli_send_done(6);
	tm_sync(29);
	tm_teardown();
}

/* The ADD out of sync must carry SYNC_REQ; checked apart for clarity. */
static void
rt_case_sync_req(void)
{
	struct ibv_sge sge;
	struct ibv_ops_wr op, *bad;
	struct tm_wc w;
	uint8_t *m;
	int ret;

	tm_setup(MAX_TAGS, MAX_OPS, 12);
	tm_post_untagged(500, 0);
	m = msg_eager(0, IBV_TMH_EAGER, 0, 1, 10);
	cli_send(1, 0, TMH + 10, false, 0);
	expect_unexpected(500, 0, m, TMH + 10, "unexpected");
	cli_send_done(1);
	/* Software reports count 0 while the device delivered 1. */
	sge = rt_sge(&srv.tbuf, 0, SLOT);
	memset(&op, 0, sizeof(op));
	op.wr_id = 70;
	op.opcode = IBV_WR_TAG_ADD;
	op.flags = IBV_OPS_SIGNALED | IBV_OPS_TM_SYNC;
	op.tm.unexpected_cnt = 0;
	op.tm.add.recv_wr_id = 70;
	op.tm.add.sg_list = &sge;
	op.tm.add.num_sge = 1;
	op.tm.add.tag = 2;
	op.tm.add.mask = UINT64_MAX;
	ret = tm_ops(&op, &bad);
	RT_CHECK(ret == 0, "ADD: %s", strerror(ret));
	w = tm_expect("ADD out of sync", 70, IBV_WC_SUCCESS, IBV_WC_TM_ADD,
		      IBV_WC_TM_SYNC_REQ, 0);
	(void)w;
	tm_sync(71);		/* count 1: in sync, no SYNC_REQ */
	m = msg_eager(1, IBV_TMH_EAGER, 0, 2, 10);
	cli_send(2, 1, TMH + 10, false, 0);
	tm_expect("matched after SYNC", 70, IBV_WC_SUCCESS, IBV_WC_TM_RECV,
		  IBV_WC_TM_MATCH | IBV_WC_TM_DATA_VALID, 2);
	cli_send_done(2);
	tm_teardown();
}

static void
rt_case_no_tag(void)
{
	uint8_t *m;

	tm_setup(MAX_TAGS, MAX_OPS, 12);
	for (uint32_t i = 0; i < 4; i++)
		tm_post_untagged(500 + i, i);
	tm_add(100, 0x55, UINT64_MAX, 0, SLOT, TM_SIGNALED);

	rt_step("NO_TAG: never matched, whole message, TM_NO_TAG");
	m = msg_eager(0, IBV_TMH_NO_TAG, 0, 0x55, 40);
	cli_send(1, 0, TMH + 40, false, 0);
	tm_expect("NO_TAG", 500, IBV_WC_SUCCESS, IBV_WC_TM_NO_TAG, 0, 0);
	check_untagged(0, m, TMH + 40, "NO_TAG message");
	cli_send_done(1);

	rt_step("D5: shorter than a TMH: NO_TAG");
	m = cli.sbuf.p + SLOT;
	rt_fill_random(m, 10);
	cli_send(2, 1, 10, false, 0);
	tm_expect("short message", 501, IBV_WC_SUCCESS, IBV_WC_TM_NO_TAG, 0, 0);
	check_untagged(1, m, 10, "short message");
	cli_send_done(2);

	rt_step("D5: an unknown TMH opcode: NO_TAG");
	m = msg_eager(2, 0x77, 0, 0x55, 8);
	cli_send(3, 2, TMH + 8, false, 0);
	tm_expect("bad opcode", 502, IBV_WC_SUCCESS, IBV_WC_TM_NO_TAG, 0, 0);
	check_untagged(2, m, TMH + 8, "bad opcode message");
	cli_send_done(3);

	rt_step("none counted as unexpected: count 0 is in sync");
	tm_sync(27);
	rt_step("the tag is still there");
	m = msg_eager(3, IBV_TMH_EAGER, 0, 0x55, 8);
	cli_send(4, 3, TMH + 8, false, 0);
	tm_expect("tag after NO_TAGs", 100, IBV_WC_SUCCESS, IBV_WC_TM_RECV,
		  IBV_WC_TM_MATCH | IBV_WC_TM_DATA_VALID, 0x55);
	check_tagged(0, m + TMH, 8, "payload");
	cli_send_done(4);
	tm_teardown();
}

/* Client: post a FIN buffer, send RNDV for `len` bytes of its slot. */
static uint8_t *
rndv_send(uint64_t wr_id, uint32_t slot, uint64_t tag, uint32_t len)
{
	uint8_t *data = cli.sbuf.p + (size_t)slot * SLOT;
	uint8_t *req = cli.fbuf.p + (size_t)slot * 64;
	struct ibv_rvh rvh = {
		.va = htobe64((uintptr_t)data),
		.rkey = htobe32(cli.sbuf.mr->rkey),
		.len = htobe32(len),
	};
	struct ibv_sge fin = rt_sge(&cli.fbuf, (size_t)slot * 64 + 32, 32);
	struct ibv_sge sge = rt_sge(&cli.fbuf, (size_t)slot * 64, TMH + RVH);

	rt_fill_random(data, len);
	tmh_put(req, IBV_TMH_RNDV, (uint32_t)tag * 3, tag);
	memcpy(req + TMH, &rvh, sizeof(rvh));
	rt_post_recv(&cli.ep, wr_id + 1000, &fin, 1);
	rt_post_send(&cli.ep, wr_id, IBV_WR_SEND, &sge, 1, IBV_SEND_SIGNALED,
		     0, 0, 0);
	return data;
}

/* The FIN the client got back: the request with opcode FIN. */
static void
rndv_check_fin(uint32_t slot)
{
	uint8_t *p = cli.fbuf.p + (size_t)slot * 64;
	uint8_t want[TMH + RVH];

	memcpy(want, p, sizeof(want));
	want[0] = IBV_TMH_FIN;
	rt_check_data(p + 32, want, sizeof(want), "FIN = request TMH+RVH, opcode FIN");
}

static void
rt_case_rndv(void)
{
	struct ibv_wc wc;
	uint8_t *d[4];
	struct tm_wc w;
	uint32_t len = 6000;

	tm_setup(MAX_TAGS, MAX_OPS, 12);

	rt_step("matched RNDV: MATCH, FIN at the sender, DATA_VALID");
	tm_add(100, 9, UINT64_MAX, 0, SLOT, TM_SIGNALED);
	d[0] = rndv_send(1, 0, 9, len);
	w = tm_expect("rndv MATCH", 100, IBV_WC_SUCCESS, IBV_WC_TM_RECV,
		      IBV_WC_TM_MATCH, 9);
	RT_CHECK(w.tm.priv == 27, "priv %u", w.tm.priv);
	wc = rt_expect_wc(cli.ep.rcq, "FIN at the sender", 1001,
			  IBV_WC_SUCCESS, IBV_WC_RECV);
	RT_CHECK(wc.byte_len == TMH + RVH, "FIN byte_len %u", wc.byte_len);
	rndv_check_fin(0);
	w = tm_expect("rndv DATA_VALID", 100, IBV_WC_SUCCESS, IBV_WC_TM_RECV,
		      IBV_WC_TM_DATA_VALID, 0);
	RT_CHECK(w.byte_len == len, "byte_len %u, expected %u", w.byte_len, len);
	check_tagged(0, d[0], len, "rendezvous data");
	cli_send_done(1);

	rt_step("four rendezvous in flight");
	for (uint32_t i = 0; i < 4; i++)
		tm_add(200 + i, 20 + i, UINT64_MAX, 1 + i, SLOT, TM_SIGNALED);
	for (uint32_t i = 0; i < 4; i++)
		d[i] = rndv_send(10 + i, 1 + i, 20 + i, 1000 + 1500 * i);
	for (uint32_t seen = 0, i; seen < 8; seen++) {
		RT_CHECK(tm_poll(srv.cqx, &w, rt_timeout_s), "rndv x4: %u of 8 "
			 "completions", seen);
		RT_CHECK(w.status == IBV_WC_SUCCESS && w.opcode == IBV_WC_TM_RECV &&
			 w.wr_id >= 200 && w.wr_id < 204, "rndv x4: wr_id %" PRIu64
			 " status %s opcode %d", w.wr_id,
			 ibv_wc_status_str(w.status), (int)w.opcode);
		i = (uint32_t)w.wr_id - 200;
		if (w.flags & IBV_WC_TM_DATA_VALID) {
			RT_CHECK(w.byte_len == 1000 + 1500 * i, "byte_len %u",
				 w.byte_len);
			check_tagged(1 + i, d[i], 1000 + 1500 * i, "rndv x4 data");
		} else {
			RT_CHECK(w.flags & IBV_WC_TM_MATCH && w.tm.tag == 20 + i,
				 "rndv x4: flags 0x%x tag %" PRIu64, w.flags,
				 (uint64_t)w.tm.tag);
		}
	}
	for (uint32_t i = 0; i < 4; i++) {
		rt_wait_wc(cli.ep.scq, &wc, "rndv x4 send");
		RT_CHECK(wc.status == IBV_WC_SUCCESS, "send %s",
			 ibv_wc_status_str(wc.status));
		rt_wait_wc(cli.ep.rcq, &wc, "rndv x4 FIN");
		RT_CHECK(wc.status == IBV_WC_SUCCESS &&
			 wc.byte_len == TMH + RVH, "FIN %s %u",
			 ibv_wc_status_str(wc.status), wc.byte_len);
	}

	rt_step("larger than the tagged buffer: RNDV_INCOMPLETE");
	tm_add(300, 30, UINT64_MAX, 6, 100, TM_SIGNALED);
	rndv_send(20, 6, 30, 8000);
	w = tm_expect("rndv incomplete", 300, IBV_WC_TM_RNDV_INCOMPLETE,
		      IBV_WC_TM_RECV, IBV_WC_TM_MATCH, 30);
	RT_CHECK(w.byte_len == TMH + RVH, "byte_len %u", w.byte_len);
	rt_check_data(srv.tbuf.p + 6 * SLOT, cli.fbuf.p + 6 * 64, TMH + RVH,
		      "the request in the tagged buffer");
	cli_send_done(20);
	tm_expect_none(IDLE_MS, "no FIN, no DATA_VALID");
	rt_expect_empty(cli.ep.rcq, IDLE_MS, "no FIN for software's rendezvous");
	tm_teardown();
}

/*
 * Rendezvous back to back, eight in flight: the client's responder has
 * READ responses queued while FINs arrive, and must not ACK a FIN before
 * those responses (an ACK that overtakes them reads as an implicit NAK of
 * the READs: resent, and once this stalled the QP).
 */
static void
rt_case_rndv_stream(void)
{
	/* RT_TM_STREAM: more messages, for a run killed mid-stream
	 * (test/service/tm.sh). */
	const char *env = getenv("RT_TM_STREAM");
	const uint32_t n = env != NULL ? (uint32_t)strtoul(env, NULL, 0) : 400;
	const uint32_t win = 8, len = 2048;
	uint32_t posted = 0, done = 0, fins = 0, sent = 0;
	uint8_t *d[8];
	struct ibv_wc wc;
	struct tm_wc w;
	double deadline;

	tm_setup(MAX_TAGS, MAX_OPS, 1);
	for (uint32_t i = 0; i < win; i++)
		tm_add(i, i, UINT64_MAX, i, SLOT, TM_UNSIGNALED);
	tm_sync(99);		/* the ADDs are in: ops run in order */
	deadline = rt_now() + rt_timeout_s;
	while (done < n || fins < n || sent < n) {
		while (posted < n && posted - done < win) {
			uint32_t i = posted % win;

			d[i] = rndv_send(posted, i, i, len);
			posted++;
		}
		if (tm_poll(srv.cqx, &w, 0)) {
			uint32_t i = (uint32_t)w.wr_id;

			RT_CHECK(w.status == IBV_WC_SUCCESS && i < win,
				 "stream: wr_id %" PRIu64 " status %s", w.wr_id,
				 ibv_wc_status_str(w.status));
			if (w.flags & IBV_WC_TM_DATA_VALID) {
				RT_CHECK(w.byte_len == len, "byte_len %u",
					 w.byte_len);
				check_tagged(i, d[i], len, "stream data");
				tm_add(i, i, UINT64_MAX, i, SLOT, TM_UNSIGNALED);
				done++;
			}
		}
		while (ibv_poll_cq(cli.ep.rcq, 1, &wc) == 1) {
			RT_CHECK(wc.status == IBV_WC_SUCCESS, "FIN %s",
				 ibv_wc_status_str(wc.status));
			fins++;
		}
		while (ibv_poll_cq(cli.ep.scq, 1, &wc) == 1) {
			RT_CHECK(wc.status == IBV_WC_SUCCESS, "RNDV send %s",
				 ibv_wc_status_str(wc.status));
			sent++;
		}
		RT_CHECK(rt_now() < deadline, "stream stuck: %u posted, %u data "
			 "valid, %u FINs, %u sends done", posted, done, fins,
			 sent);
	}
	tm_teardown();
}

static void
rt_case_order(void)
{
	uint8_t *m;

	tm_setup(MAX_TAGS, MAX_OPS, 12);
	tm_post_untagged(500, 0);

	rt_step("posting order decides, across exact and wildcard entries");
	tm_add(1, 0x10, 0xff0, 0, SLOT, TM_SIGNALED);		/* 0x1? wildcard */
	tm_add(2, 0x12, UINT64_MAX, 1, SLOT, TM_SIGNALED);	/* exact */
	tm_add(3, 0x12, UINT64_MAX, 2, SLOT, TM_SIGNALED);	/* exact, again */
	tm_add(4, 0, 0, 3, SLOT, TM_SIGNALED);			/* matches anything */
	tm_add(5, 0x1, 0x0, 4, SLOT, TM_SIGNALED);		/* tag outside mask */
	for (uint64_t want = 1; want <= 4; want++) {
		uint64_t tag = want == 4 ? 0x999 : 0x12;

		m = msg_eager(0, IBV_TMH_EAGER, 0, tag, 16);
		cli_send(want, 0, TMH + 16, false, 0);
		tm_expect("ordering", want, IBV_WC_SUCCESS, IBV_WC_TM_RECV,
			  IBV_WC_TM_MATCH | IBV_WC_TM_DATA_VALID, tag);
		check_tagged((uint32_t)want - 1, m + TMH, 16, "ordered payload");
		cli_send_done(want);
	}
	rt_step("(tag & mask) == entry.tag: an entry with bits outside its mask "
		"never matches");
	m = msg_eager(0, IBV_TMH_EAGER, 0, 0x1, 16);
	cli_send(9, 0, TMH + 16, false, 0);
	expect_unexpected(500, 0, m, TMH + 16, "tag 1 vs entry (1, mask 0)");
	cli_send_done(9);
	tm_sync(27);
	tm_teardown();
}

static void
rt_case_del(void)
{
	struct ibv_ops_wr op, *bad;
	uint32_t h;
	uint8_t *m;

	tm_setup(MAX_TAGS, MAX_OPS, 12);
	tm_post_untagged(500, 0);

	rt_step("DEL of a listed tag: success, never matched");
	h = tm_add(1, 20, UINT64_MAX, 0, SLOT, TM_SIGNALED);
	tm_del(h, 2, IBV_WC_SUCCESS);
	m = msg_eager(0, IBV_TMH_EAGER, 0, 20, 16);
	cli_send(1, 0, TMH + 16, false, 0);
	expect_unexpected(500, 0, m, TMH + 16, "after DEL");
	cli_send_done(1);
	tm_sync(27);

	rt_step("DEL of a consumed tag: IBV_WC_TM_ERR");
	h = tm_add(3, 21, UINT64_MAX, 1, SLOT, TM_SIGNALED);
	m = msg_eager(1, IBV_TMH_EAGER, 0, 21, 16);
	cli_send(2, 1, TMH + 16, false, 0);
	tm_expect("consumed", 3, IBV_WC_SUCCESS, IBV_WC_TM_RECV,
		  IBV_WC_TM_MATCH | IBV_WC_TM_DATA_VALID, 21);
	cli_send_done(2);
	tm_del(h, 4, IBV_WC_TM_ERR);

	rt_step("a stale handle never removes the slot's newer tag");
	tm_add(5, 22, UINT64_MAX, 2, SLOT, TM_SIGNALED);	/* may reuse the slot */
	tm_del(h, 6, IBV_WC_TM_ERR);
	m = msg_eager(2, IBV_TMH_EAGER, 0, 22, 16);
	cli_send(3, 2, TMH + 16, false, 0);
	tm_expect("newer tag intact", 5, IBV_WC_SUCCESS, IBV_WC_TM_RECV,
		  IBV_WC_TM_MATCH | IBV_WC_TM_DATA_VALID, 22);
	cli_send_done(3);

	rt_step("unsignalled ADD and DEL complete silently");
	h = tm_add(7, 23, UINT64_MAX, 3, SLOT, TM_UNSIGNALED);
	memset(&op, 0, sizeof(op));
	op.wr_id = 8;
	op.opcode = IBV_WR_TAG_DEL;
	op.tm.handle = h;
	RT_CHECK(tm_ops(&op, &bad) == 0, "unsignalled DEL");
	tm_expect_none(IDLE_MS, "unsignalled ops");
	tm_teardown();
}

static void
rt_case_limits(void)
{
	struct ibv_ops_wr ops[9], op, *bad;
	uint32_t h[8];
	uint8_t *m;
	int ret;

	tm_setup(8, 8, 12);

	rt_step("max_num_tags listed, the next ADD: ENOMEM");
	for (uint32_t i = 0; i < 8; i++)
		h[i] = tm_add(i, 100 + i, UINT64_MAX, i, 64, TM_SIGNALED);
	for (uint32_t i = 0; i < 8; i++)
		for (uint32_t j = 0; j < i; j++)
			RT_CHECK((h[i] & 0xffff) != (h[j] & 0xffff),
				 "handles 0x%x and 0x%x share a slot", h[i], h[j]);
	memset(&op, 0, sizeof(op));
	op.wr_id = 50;
	op.opcode = IBV_WR_TAG_ADD;
	op.flags = IBV_OPS_SIGNALED;
	op.tm.add.tag = 200;
	op.tm.add.mask = UINT64_MAX;
	ret = tm_ops(&op, &bad);
	RT_CHECK(ret == ENOMEM && bad == &op, "ADD past max_num_tags: %s, "
		 "bad_op %p", strerror(ret), (void *)bad);
	tm_expect_none(IDLE_MS, "refused ADD");

	rt_step("a match gives its slot back");
	m = msg_eager(0, IBV_TMH_EAGER, 0, 103, 16);
	cli_send(1, 0, TMH + 16, false, 0);
	tm_expect("match", 3, IBV_WC_SUCCESS, IBV_WC_TM_RECV,
		  IBV_WC_TM_MATCH | IBV_WC_TM_DATA_VALID, 103);
	check_tagged(3, m + TMH, 16, "payload");
	cli_send_done(1);
	ret = tm_ops(&op, &bad);
	RT_CHECK(ret == 0, "ADD after a slot came back: %s", strerror(ret));
	tm_expect("TM_ADD", 50, IBV_WC_SUCCESS, IBV_WC_TM_ADD, 0, 0);

	rt_step("more than max_ops in one call: ENOMEM at the first past it");
	/*
	 * The engine sees none of a call's ops before the call publishes
	 * them, so ops 1..8 fit and op 9 fails, whatever the engine does.
	 */
	memset(ops, 0, sizeof(ops));
	for (uint32_t i = 0; i < 9; i++) {
		ops[i].wr_id = 60 + i;
		ops[i].opcode = IBV_WR_TAG_SYNC;
		ops[i].flags = IBV_OPS_TM_SYNC;	/* unsignalled: no CQE */
		ops[i].tm.unexpected_cnt = 0;
		ops[i].next = i < 8 ? &ops[i + 1] : NULL;
	}
	ret = tm_ops(ops, &bad);
	RT_CHECK(ret == ENOMEM && bad == &ops[8], "9 ops, max_ops 8: %s, "
		 "bad_op %td", strerror(ret), bad != NULL ? bad - ops : -1);
	tm_expect_none(IDLE_MS, "unsignalled SYNCs");

	rt_step("an unknown opcode or flag: EINVAL");
	memset(&op, 0, sizeof(op));
	op.opcode = (enum ibv_ops_wr_opcode)77;
	RT_CHECK(tm_ops(&op, &bad) == EINVAL && bad == &op, "bad opcode");
	op.opcode = IBV_WR_TAG_SYNC;
	op.flags = 0x80;
	RT_CHECK(tm_ops(&op, &bad) == EINVAL && bad == &op, "bad flags");
	op.flags = 0;
	op.opcode = IBV_WR_TAG_ADD;
	op.tm.add.num_sge = 2;
	RT_CHECK(tm_ops(&op, &bad) == EINVAL && bad == &op, "2 SGEs");
	tm_teardown();
}

static void
rt_case_rnr(void)
{
	uint8_t *m;

	tm_setup(MAX_TAGS, MAX_OPS, 1);
	rt_step("unexpected with no untagged buffer: RNR, nothing lost");
	m = msg_eager(0, IBV_TMH_EAGER, 0, 0x42, 100);
	cli_send(1, 0, TMH + 100, false, 0);
	tm_expect_none(300, "no buffer yet");
	rt_expect_empty(cli.ep.scq, 10, "send still retrying");
	tm_post_untagged(500, 0);
	expect_unexpected(500, 0, m, TMH + 100, "delivered once posted");
	cli_send_done(1);
	tm_sync(27);
	tm_teardown();
}

static void
rt_case_many(void)
{
	const uint32_t n = 4096, nw = 16;
	uint32_t *order = malloc(sizeof(*order) * n);
	uint64_t payload;
	struct tm_wc w;

	RT_CHECK(order != NULL, "malloc");
	tm_setup(MAX_TAGS, MAX_OPS, 12);
	rt_buf_free(&srv.tbuf);
	rt_buf_alloc(&srv.tbuf, &srv.dev, (size_t)(n + nw) * SLOT / 512,
		     RT_ACCESS_ALL);

	rt_step("%u exact tags, then %u wildcards they must not lose to", n, nw);
	for (uint32_t i = 0; i < n; i++) {
		struct ibv_sge sge = rt_sge(&srv.tbuf, (size_t)i * 16, 16);
		struct ibv_ops_wr op = {
			.wr_id = i,
			.opcode = IBV_WR_TAG_ADD,
			.tm.add = { .recv_wr_id = i, .sg_list = &sge,
				    .num_sge = 1, .tag = 0x100000 + i,
				    .mask = UINT64_MAX },
		}, *bad;
		double deadline = rt_now() + rt_timeout_s;
		int ret;

		while ((ret = tm_ops(&op, &bad)) == ENOMEM &&
		       rt_now() < deadline)
			;
		RT_CHECK(ret == 0, "ADD %u: %s", i, strerror(ret));
	}
	/* Wildcards matching every exact tag, but posted later. */
	for (uint32_t i = 0; i < nw; i++) {
		struct ibv_sge sge = rt_sge(&srv.tbuf, (size_t)(n + i) * 16, 16);
		struct ibv_ops_wr op = {
			.wr_id = n + i,
			.opcode = IBV_WR_TAG_ADD,
			.tm.add = { .recv_wr_id = n + i, .sg_list = &sge,
				    .num_sge = 1, .tag = 0x100000,
				    .mask = 0xfff00000 },
		}, *bad;
		double deadline = rt_now() + rt_timeout_s;
		int ret;

		while ((ret = tm_ops(&op, &bad)) == ENOMEM &&
		       rt_now() < deadline)
			;
		RT_CHECK(ret == 0, "wildcard ADD %u: %s", i, strerror(ret));
	}
	tm_expect_none(50, "unsignalled ADDs");
	for (uint32_t i = 0; i < n; i++)
		order[i] = i;
	for (uint32_t i = n - 1; i > 0; i--) {
		uint32_t j = rt_rand32() % (i + 1), t = order[i];

		order[i] = order[j];
		order[j] = t;
	}
	rt_step("%u messages in random order, each to its own tag", n);
	for (uint32_t k = 0; k < n; k++) {
		uint32_t i = order[k];
		uint8_t *p = msg_eager(k % NSLOT, IBV_TMH_EAGER, i,
				       0x100000 + i, 8);

		payload = 0xfeed000000000000ull | i;
		memcpy(p + TMH, &payload, 8);
		cli_send(k, k % NSLOT, TMH + 8, false, 0);
		w = tm_expect("many", i, IBV_WC_SUCCESS, IBV_WC_TM_RECV,
			      IBV_WC_TM_MATCH | IBV_WC_TM_DATA_VALID,
			      0x100000 + i);
		RT_CHECK(w.tm.priv == i && w.byte_len == 8, "priv %u len %u",
			 w.tm.priv, w.byte_len);
		rt_check_data(srv.tbuf.p + (size_t)i * 16, &payload, 8, "payload");
		cli_send_done(k);
	}
	rt_step("then the wildcards, in posting order");
	for (uint32_t i = 0; i < nw; i++) {
		msg_eager(0, IBV_TMH_EAGER, 0, 0x100000 + i, 8);
		cli_send(n + i, 0, TMH + 8, false, 0);
		tm_expect("wildcard", n + i, IBV_WC_SUCCESS, IBV_WC_TM_RECV,
			  IBV_WC_TM_MATCH | IBV_WC_TM_DATA_VALID, 0x100000 + i);
		cli_send_done(n + i);
	}
	free(order);
	tm_teardown();
}

/*
 * CQ and SRQ numbers stay nameable however often their slots are reused:
 * a TM-SRQ names its CQ, a QP its SRQ, by a number whose negative values
 * mean "none" (found by the transport fuzzer: after 32768 cycles the
 * generation reached bit 31 and the CQ or SRQ could no longer be named).
 */
static void
rt_case_churn(void)
{
	const uint32_t cycles = 32770;
	struct ibv_qp_init_attr ia;
	struct ibv_srq_init_attr sa;
	struct ibv_srq *srq;
	struct ibv_qp *qp;
	struct ibv_cq *cq;

	rt_dev_open(&srv.dev, RT_DEV0);
	rt_step("a CQ slot reused %u times, then a TM-SRQ on it", cycles);
	for (uint32_t i = 0; i < cycles; i++) {
		cq = ibv_create_cq(srv.dev.ctx, 4, NULL, NULL, 0);
		RT_CHECK(cq != NULL, "ibv_create_cq #%u: %s", i,
			 strerror(errno));
		RT_CHECK(ibv_destroy_cq(cq) == 0, "ibv_destroy_cq #%u", i);
	}
	cq = ibv_cq_ex_to_cq(tm_cq_ex(&srv.dev));	/* TM-2: extended */
	srq = tm_srq_try(&srv.dev, cq, 8, 8, TM_SRQ_MASK);
	RT_CHECK(srq != NULL, "TM-SRQ on a CQ created after %u others: %s",
		 cycles, strerror(errno));
	RT_CHECK(ibv_destroy_srq(srq) == 0, "ibv_destroy_srq(TM)");

	rt_step("an SRQ slot reused %u times, then a QP on it", cycles);
	memset(&sa, 0, sizeof(sa));
	sa.attr.max_wr = 4;
	sa.attr.max_sge = 1;
	for (uint32_t i = 0; i < cycles; i++) {
		srq = ibv_create_srq(srv.dev.pd, &sa);
		RT_CHECK(srq != NULL, "ibv_create_srq #%u: %s", i,
			 strerror(errno));
		RT_CHECK(ibv_destroy_srq(srq) == 0, "ibv_destroy_srq #%u", i);
	}
	srq = ibv_create_srq(srv.dev.pd, &sa);
	RT_CHECK(srq != NULL, "ibv_create_srq: %s", strerror(errno));
	memset(&ia, 0, sizeof(ia));
	ia.send_cq = cq;
	ia.recv_cq = cq;
	ia.srq = srq;
	ia.qp_type = IBV_QPT_RC;
	ia.cap.max_send_wr = 1;
	ia.cap.max_send_sge = 1;
	qp = ibv_create_qp(srv.dev.pd, &ia);
	RT_CHECK(qp != NULL, "QP on an SRQ created after %u others: %s",
		 cycles, strerror(errno));
	RT_CHECK(ibv_destroy_qp(qp) == 0, "ibv_destroy_qp");
	RT_CHECK(ibv_destroy_srq(srq) == 0, "ibv_destroy_srq");
	RT_CHECK(ibv_destroy_cq(cq) == 0, "ibv_destroy_cq");
	rt_dev_close(&srv.dev);
}

/* ----------------------------------------------------------------- main */

static const struct rt_case rt_cases[] = {
	{ "churn", rt_case_churn, 150,
	  "CQ and SRQ numbers after 32770 reuses of their slots" },
	{ "caps", rt_case_caps, 60,
	  "tm_caps; TM-SRQ creation errors" },
	{ "eager", rt_case_eager, 60,
	  "matched EAGER: 1 packet, several, with immediate, too long" },
	{ "unexpected", rt_case_unexpected, 60,
	  "unexpected EAGER and RNDV, SYNC, eligibility (D1)" },
	{ "sync_req", rt_case_sync_req, 60,
	  "an ADD out of sync completes with SYNC_REQ" },
	{ "no_tag", rt_case_no_tag, 60,
	  "NO_TAG, short and malformed TMHs (D5)" },
	{ "rndv", rt_case_rndv, 60,
	  "rendezvous READ + FIN, four in flight, RNDV_INCOMPLETE" },
	{ "rndv_stream", rt_case_rndv_stream, 90,
	  "400 rendezvous, 8 in flight: ACKs never overtake READ responses" },
	{ "order", rt_case_order, 60,
	  "earliest posted entry wins; masks" },
	{ "del", rt_case_del, 60,
	  "DEL listed, DEL consumed (TM_ERR), stale handles, unsignalled" },
	{ "limits", rt_case_limits, 60,
	  "max_num_tags, max_ops, bad opcodes" },
	{ "rnr", rt_case_rnr, 60,
	  "no untagged buffer: RNR NAK, delivered later (D4)" },
	{ "many", rt_case_many, 120,
	  "4096 exact tags and 16 wildcards, random order" },
};

int
main(int argc, char **argv)
{
	return rt_main(argc, argv, rt_cases,
		       sizeof(rt_cases) / sizeof(rt_cases[0]));
}
