/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rp_verbs_ext_test: the verbs around the data path a program moved from
 * rxe may call, one process, two devices back to back
 * (test/engine/two-ports.ini.in): ibv_rereg_mr, ibv_resize_cq,
 * ibv_query_qp, the GID table queries, ibv_create_ah_from_wc, the device
 * identity and on-demand paging.
 *
 *   rp_verbs_ext_test CASE | list
 */

#include <endian.h>
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "rp_testlib.h"

const char rt_prog[] = "rp_verbs_ext_test";

/* WRITE len bytes of src to [raddr, +len) with rkey: expect `st`. */
static void
ext_write(struct rt_ep *a, struct rt_buf *src, uint64_t raddr, uint32_t rkey,
	  size_t len, enum ibv_wc_status st, const char *what)
{
	struct ibv_sge s = rt_sge(src, 0, len);

	rt_step("%s", what);
	rt_fill_random(src->p, len);
	rt_post_send(a, 1, IBV_WR_RDMA_WRITE, &s, 1, IBV_SEND_SIGNALED, 0,
		     raddr, rkey);
	rt_expect_wc(a->scq, what, 1, st,
		     st == IBV_WC_SUCCESS ? IBV_WC_RDMA_WRITE : -1);
}

/* ------------------------------------------------------------- device */

static void
rt_case_dev_ids(void)
{
	struct ibv_device_attr_ex ax;
	struct ibv_gid_entry tbl[8], one;
	struct rt_dev d0, d1;
	struct rt_ep a, b;
	struct rt_buf src, dst;
	uint32_t rc;
	ssize_t n;
	int ret;

	rt_open2(&d0, &d1);
	rt_step("vendor_id and vendor_part_id as rxe reports them");
	RT_CHECK(d0.attr.vendor_id == 0xffffff, "vendor_id 0x%x, rxe's is "
		 "0xffffff", d0.attr.vendor_id);
	RT_CHECK(d0.attr.vendor_part_id == 0, "vendor_part_id %u",
		 d0.attr.vendor_part_id);

	rt_step("ibv_query_device_ex: ODP capabilities, implicit too");
	ret = ibv_query_device_ex(d0.ctx, NULL, &ax);
	RT_CHECK(ret == 0, "ibv_query_device_ex: %s", strerror(ret));
	RT_CHECK(ax.odp_caps.general_caps & IBV_ODP_SUPPORT,
		 "general_caps 0x%" PRIx64 ": no IBV_ODP_SUPPORT",
		 ax.odp_caps.general_caps);
	RT_CHECK(ax.odp_caps.general_caps & IBV_ODP_SUPPORT_IMPLICIT,
		 "general_caps 0x%" PRIx64 ": no IBV_ODP_SUPPORT_IMPLICIT",
		 ax.odp_caps.general_caps);
	rc = IBV_ODP_SUPPORT_SEND | IBV_ODP_SUPPORT_RECV |
		IBV_ODP_SUPPORT_WRITE | IBV_ODP_SUPPORT_READ |
		IBV_ODP_SUPPORT_SRQ_RECV;
	RT_CHECK((ax.odp_caps.per_transport_caps.rc_odp_caps & rc) == rc,
		 "rc_odp_caps 0x%x", ax.odp_caps.per_transport_caps.rc_odp_caps);
	rc = IBV_ODP_SUPPORT_SEND | IBV_ODP_SUPPORT_RECV;
	RT_CHECK((ax.odp_caps.per_transport_caps.ud_odp_caps & rc) == rc,
		 "ud_odp_caps 0x%x", ax.odp_caps.per_transport_caps.ud_odp_caps);

	/* implicit ODP: case implicit_odp */
	rt_step("IBV_ACCESS_ON_DEMAND MRs: SEND, WRITE and READ between them");
	rt_rc_pair(&a, &d0, &b, &d1, NULL);
	rt_buf_alloc(&src, &d0, 8192, IBV_ACCESS_LOCAL_WRITE |
		     IBV_ACCESS_ON_DEMAND);
	rt_buf_alloc(&dst, &d1, 8192, RT_ACCESS_ALL | IBV_ACCESS_ON_DEMAND);
	{
		struct ibv_sge s = rt_sge(&dst, 0, 8192);

		rt_post_recv(&b, 7, &s, 1);
		rt_fill_random(src.p, 3000);
		s = rt_sge(&src, 0, 3000);
		rt_post_send(&a, 8, IBV_WR_SEND, &s, 1, IBV_SEND_SIGNALED, 0,
			     0, 0);
		rt_expect_wc(a.scq, "SEND", 8, IBV_WC_SUCCESS, IBV_WC_SEND);
		rt_expect_wc(b.rcq, "RECV", 7, IBV_WC_SUCCESS, IBV_WC_RECV);
		rt_check_data(dst.p, src.p, 3000, "SEND into an ODP MR");
	}
	ext_write(&a, &src, (uintptr_t)dst.p + 100, dst.mr->rkey, 5000,
		  IBV_WC_SUCCESS, "WRITE into an ODP MR");
	rt_check_data(dst.p + 100, src.p, 5000, "WRITE into an ODP MR");
	{
		struct ibv_sge s = rt_sge(&src, 0, 4000);

		rt_fill_random(dst.p, 4000);
		rt_post_send(&a, 9, IBV_WR_RDMA_READ, &s, 1,
			     IBV_SEND_SIGNALED, 0, (uintptr_t)dst.p,
			     dst.mr->rkey);
		rt_expect_wc(a.scq, "READ", 9, IBV_WC_SUCCESS,
			     IBV_WC_RDMA_READ);
		rt_check_data(src.p, dst.p, 4000, "READ from an ODP MR");
	}
	rt_step("ibv_advise_mr PREFETCH_WRITE of an ODP range: accepted");
	{
		struct ibv_sge s = rt_sge(&dst, 0, 8192);

		ret = ibv_advise_mr(d1.pd, IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE,
				    IBV_ADVISE_MR_FLAG_FLUSH, &s, 1);
		RT_CHECK(ret == 0, "ibv_advise_mr: %s", strerror(ret));
		ret = ibv_advise_mr(d1.pd, (enum ibv_advise_mr_advice)77, 0,
				    &s, 1);
		RT_CHECK(ret == EOPNOTSUPP, "ibv_advise_mr(bad advice): %s, "
			 "mlx5's EOPNOTSUPP expected", strerror(ret));
	}
	rt_ep_destroy(&a);
	rt_ep_destroy(&b);
	rt_buf_free(&src);
	rt_buf_free(&dst);

	rt_step("GID table: every entry as ibv_query_gid_ex and "
		"ibv_query_gid give it");
	n = ibv_query_gid_table(d0.ctx, tbl, sizeof(tbl) / sizeof(tbl[0]), 0);
	RT_CHECK(n >= 1, "ibv_query_gid_table: %zd", n);
	for (ssize_t i = 0; i < n; i++) {
		union ibv_gid g;

		RT_CHECK(tbl[i].port_num == RT_PORT, "entry %zd port %u", i,
			 tbl[i].port_num);
		RT_CHECK(tbl[i].gid_type == IBV_GID_TYPE_ROCE_V2,
			 "entry %zd gid_type %u", i, tbl[i].gid_type);
		ret = ibv_query_gid_ex(d0.ctx, RT_PORT, tbl[i].gid_index, &one,
				       0);
		RT_CHECK(ret == 0, "ibv_query_gid_ex(%u): %s",
			 tbl[i].gid_index, strerror(ret));
		RT_CHECK(memcmp(&one, &tbl[i], sizeof(one)) == 0,
			 "ibv_query_gid_ex(%u) differs from the table's entry",
			 tbl[i].gid_index);
		ret = ibv_query_gid(d0.ctx, RT_PORT, (int)tbl[i].gid_index, &g);
		RT_CHECK(ret == 0 && memcmp(&g, &tbl[i].gid, sizeof(g)) == 0,
			 "ibv_query_gid(%u) differs from the table's entry",
			 tbl[i].gid_index);
	}
	RT_CHECK(memcmp(&tbl[0].gid, &d0.gid, sizeof(d0.gid)) == 0,
		 "GID index 0 is not the IPv4-mapped address");
	ret = ibv_query_gid_ex(d0.ctx, RT_PORT, (uint32_t)d0.port.gid_tbl_len,
			       &one, 0);
	RT_CHECK(ret != 0, "ibv_query_gid_ex past gid_tbl_len %d succeeded",
		 d0.port.gid_tbl_len);
	rt_close2(&d0, &d1);
}

/* ------------------------------------------------------------ rereg */

static void
rt_case_rereg_mr(void)
{
	struct rt_dev d0, d1;
	struct rt_ep a, b;
	struct rt_buf src, t1;
	struct ibv_pd *pd2;
	struct ibv_mw *mw;
	uint8_t *t2;
	uint32_t lkey, rkey;
	int ret;

	rt_open2(&d0, &d1);
	rt_rc_pair(&a, &d0, &b, &d1, NULL);
	rt_buf_alloc(&src, &d0, 4096, IBV_ACCESS_LOCAL_WRITE);
	rt_buf_alloc(&t1, &d1, 4096, IBV_ACCESS_LOCAL_WRITE |
		     IBV_ACCESS_REMOTE_READ);
	lkey = t1.mr->lkey;
	rkey = t1.mr->rkey;
	ext_write(&a, &src, (uintptr_t)t1.p, rkey, 64, IBV_WC_REM_ACCESS_ERR,
		  "WRITE into a read-only MR: refused");
	rt_ep_destroy(&a);
	rt_ep_destroy(&b);
	rt_rc_pair(&a, &d0, &b, &d1, NULL);

	rt_step("IBV_REREG_MR_CHANGE_ACCESS: add REMOTE_WRITE");
	ret = ibv_rereg_mr(t1.mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
			   RT_ACCESS_ALL | IBV_ACCESS_MW_BIND);
	RT_CHECK(ret == 0, "ibv_rereg_mr(ACCESS): %d (%s)", ret,
		 strerror(errno));
	RT_CHECK(t1.mr->lkey == lkey && t1.mr->rkey == rkey,
		 "keys changed: 0x%x/0x%x", t1.mr->lkey, t1.mr->rkey);
	ext_write(&a, &src, (uintptr_t)t1.p + 8, rkey, 100, IBV_WC_SUCCESS,
		  "WRITE after the access change");
	rt_check_data(t1.p + 8, src.p, 100, "WRITE after CHANGE_ACCESS");

	rt_step("IBV_REREG_MR_CHANGE_TRANSLATION: another buffer");
	t2 = aligned_alloc(4096, 8192);
	RT_CHECK(t2 != NULL, "out of memory");
	memset(t2, RT_GUARD_BYTE, 8192);
	memset(t1.p, RT_GUARD_BYTE, t1.len);
	ret = ibv_rereg_mr(t1.mr, IBV_REREG_MR_CHANGE_TRANSLATION, NULL, t2,
			   8192, 0);
	RT_CHECK(ret == 0, "ibv_rereg_mr(TRANSLATION): %d (%s)", ret,
		 strerror(errno));
	RT_CHECK(t1.mr->addr == t2 && t1.mr->length == 8192,
		 "mr addr/length %p/%zu after the change", t1.mr->addr,
		 t1.mr->length);
	ext_write(&a, &src, (uintptr_t)t2 + 6000, rkey, 1000, IBV_WC_SUCCESS,
		  "WRITE into the new translation");
	rt_check_data(t2 + 6000, src.p, 1000, "WRITE after CHANGE_TRANSLATION");
	rt_check_guard(t1.p, t1.len, "the old buffer");
	{
		/* The lkey now names the new buffer too: SEND from it. */
		struct ibv_sge s = { .addr = (uintptr_t)t2 + 6000,
				     .length = 1000, .lkey = lkey };
		struct ibv_sge r = rt_sge(&src, 0, 4096);

		rt_post_recv(&a, 20, &r, 1);
		memset(src.p, 0, 4096);
		rt_post_send(&b, 21, IBV_WR_SEND, &s, 1, IBV_SEND_SIGNALED, 0,
			     0, 0);
		rt_expect_wc(b.scq, "SEND from the new translation", 21,
			     IBV_WC_SUCCESS, IBV_WC_SEND);
		rt_expect_wc(a.rcq, "its receive", 20, IBV_WC_SUCCESS,
			     IBV_WC_RECV);
		rt_check_data(src.p, t2 + 6000, 1000, "SEND via the lkey");
	}

	rt_step("ibv_rereg_mr with a window bound: refused, MR unchanged");
	mw = ibv_alloc_mw(d1.pd, IBV_MW_TYPE_1);
	RT_CHECK(mw != NULL, "ibv_alloc_mw: %s", strerror(errno));
	{
		struct ibv_mw_bind bind = {
			.wr_id = 30, .send_flags = IBV_SEND_SIGNALED,
			.bind_info = { .mr = t1.mr, .addr = (uintptr_t)t2,
				       .length = 64,
				       .mw_access_flags =
					       IBV_ACCESS_REMOTE_READ },
		};

		ret = ibv_bind_mw(b.qp, mw, &bind);
		RT_CHECK(ret == 0, "ibv_bind_mw: %s", strerror(ret));
		rt_expect_wc(b.scq, "bind", 30, IBV_WC_SUCCESS,
			     IBV_WC_BIND_MW);
	}
	ret = ibv_rereg_mr(t1.mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
			   IBV_ACCESS_LOCAL_WRITE);
	RT_CHECK(ret == IBV_REREG_MR_ERR_CMD && errno == EBUSY,
		 "ibv_rereg_mr with a bound window: %d (%s)", ret,
		 strerror(errno));
	ret = ibv_dealloc_mw(mw);
	RT_CHECK(ret == 0, "ibv_dealloc_mw: %s", strerror(ret));

	rt_step("ibv_rereg_mr with an unknown flag: IBV_REREG_MR_ERR_INPUT");
	ret = ibv_rereg_mr(t1.mr, 0x40, NULL, NULL, 0, 0);
	RT_CHECK(ret == IBV_REREG_MR_ERR_INPUT && errno == EINVAL,
		 "unknown flag: %d (%s)", ret, strerror(errno));
	ret = ibv_rereg_mr(t1.mr, IBV_REREG_MR_CHANGE_TRANSLATION, NULL, NULL,
			   0, 0);
	RT_CHECK(ret == IBV_REREG_MR_ERR_INPUT && errno == EINVAL,
		 "translation to NULL: %d (%s)", ret, strerror(errno));
	ret = ibv_rereg_mr(t1.mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
			   IBV_ACCESS_REMOTE_WRITE);
	RT_CHECK(ret == IBV_REREG_MR_ERR_INPUT && errno == EINVAL,
		 "REMOTE_WRITE without LOCAL_WRITE: %d (%s)", ret,
		 strerror(errno));
	ext_write(&a, &src, (uintptr_t)t2, rkey, 16, IBV_WC_SUCCESS,
		  "the MR is as it was after the refused changes");

	rt_step("IBV_REREG_MR_CHANGE_PD: to another PD");
	pd2 = ibv_alloc_pd(d1.ctx);
	RT_CHECK(pd2 != NULL, "ibv_alloc_pd: %s", strerror(errno));
	{
		/* posted before the MR moves: its lkey then names no MR of
		 * the QP's PD (issue 26's case) */
		struct ibv_sge r = { .addr = (uintptr_t)t2, .length = 64,
				     .lkey = t1.mr->lkey };

		rt_post_recv(&b, 40, &r, 1);
	}
	ret = ibv_rereg_mr(t1.mr, IBV_REREG_MR_CHANGE_PD, pd2, NULL, 0, 0);
	RT_CHECK(ret == 0, "ibv_rereg_mr(PD): %d (%s)", ret, strerror(errno));
	RT_CHECK(t1.mr->pd == pd2, "mr->pd not the new PD");
	ret = ibv_dealloc_pd(pd2);
	RT_CHECK(ret == EBUSY, "ibv_dealloc_pd of the MR's new PD: %s",
		 strerror(ret));
	rt_step("SEND into a receive posted under the moved MR's lkey: "
		"receiver IBV_WC_LOC_PROT_ERR, sender IBV_WC_REM_OP_ERR");
	{
		struct ibv_sge s = rt_sge(&src, 0, 64);

		rt_post_send(&a, 41, IBV_WR_SEND, &s, 1, IBV_SEND_SIGNALED, 0,
			     0, 0);
		rt_expect_wc(b.rcq, "receiver", 40, IBV_WC_LOC_PROT_ERR, -1);
		rt_expect_wc(a.scq, "sender", 41, IBV_WC_REM_OP_ERR, -1);
	}
	rt_ep_destroy(&a);
	rt_ep_destroy(&b);
	rt_rc_pair(&a, &d0, &b, &d1, NULL);
	ext_write(&a, &src, (uintptr_t)t2, rkey, 16, IBV_WC_REM_ACCESS_ERR,
		  "WRITE through a QP of the old PD: refused");
	ret = ibv_rereg_mr(t1.mr, IBV_REREG_MR_CHANGE_PD |
			   IBV_REREG_MR_CHANGE_TRANSLATION, d1.pd, t1.p,
			   t1.len, 0);
	RT_CHECK(ret == 0, "ibv_rereg_mr(PD | TRANSLATION) back: %d (%s)",
		 ret, strerror(errno));
	ret = ibv_dealloc_pd(pd2);
	RT_CHECK(ret == 0, "ibv_dealloc_pd: %s", strerror(ret));
	rt_ep_destroy(&a);
	rt_ep_destroy(&b);
	rt_buf_free(&t1);
	rt_buf_free(&src);
	free(t2);
	rt_close2(&d0, &d1);
}

/* ------------------------------------------------------------ resize */

/*
 * n signaled SENDs a -> b, wr_id base + i, received in full; the send
 * CQEs are left queued on a's CQ.  (Their ACK may still be on its way
 * for a moment: the pause lets it land, and every check holds whether
 * a CQE arrives before or after a resize.)
 */
static void
ext_sends(struct rt_ep *a, struct rt_ep *b, struct rt_buf *buf, int n,
	  uint64_t base)
{
	struct ibv_sge s = rt_sge(buf, 0, 0);

	for (int i = 0; i < n; i++)
		rt_post_recv(b, base + (uint64_t)i, NULL, 0);
	for (int i = 0; i < n; i++)
		rt_post_send(a, base + (uint64_t)i, IBV_WR_SEND, &s, 1,
			     IBV_SEND_SIGNALED, 0, 0, 0);
	for (int i = 0; i < n; i++)
		rt_expect_wc(b->rcq, "receives", base + (uint64_t)i,
			     IBV_WC_SUCCESS, IBV_WC_RECV);
	rt_sleep_ms(50);
}

static void
ext_drain(struct ibv_cq *cq, int n, uint64_t base, const char *what)
{
	for (int i = 0; i < n; i++)
		rt_expect_wc(cq, what, base + (uint64_t)i, IBV_WC_SUCCESS,
			     IBV_WC_SEND);
	rt_expect_empty(cq, 0, what);
}

static void
rt_case_resize_cq(void)
{
	struct rt_dev d0, d1;
	struct rt_ep a, b;
	struct rt_buf buf;
	struct ibv_wc wc;
	int ret, before;

	rt_open2(&d0, &d1);
	rt_rc_pair(&a, &d0, &b, &d1, NULL);
	rt_buf_alloc(&buf, &d0, 4096, IBV_ACCESS_LOCAL_WRITE);

	rt_step("grow a send CQ holding 100 CQEs, one polled: the other 99 "
		"in order");
	ext_sends(&a, &b, &buf, 100, 1000);
	RT_CHECK(rt_poll_wc(a.scq, &wc, 1) && wc.wr_id == 1000,
		 "first CQE before the resize");
	before = a.scq->cqe;
	ret = ibv_resize_cq(a.scq, 4000);
	RT_CHECK(ret == 0, "ibv_resize_cq(4000): %s", strerror(ret));
	RT_CHECK(a.scq->cqe >= 4000, "cq->cqe %d after growing from %d to "
		 "4000", a.scq->cqe, before);
	ext_drain(a.scq, 99, 1001, "CQEs moved by the growth");

	rt_step("the grown CQ takes more than the old size: 600 CQEs");
	ext_sends(&a, &b, &buf, 200, 2000);
	ext_sends(&a, &b, &buf, 200, 2200);
	ext_sends(&a, &b, &buf, 200, 2400);
	ext_drain(a.scq, 600, 2000, "CQEs past the old size");

	rt_step("shrink to 50 with 30 CQEs queued: kept, in order");
	ext_sends(&a, &b, &buf, 30, 3000);
	ret = ibv_resize_cq(a.scq, 50);
	RT_CHECK(ret == 0, "ibv_resize_cq(50): %s", strerror(ret));
	RT_CHECK(a.scq->cqe >= 50 && a.scq->cqe < 4000, "cq->cqe %d after "
		 "shrinking to 50", a.scq->cqe);
	ext_drain(a.scq, 30, 3000, "CQEs moved by the shrink");

	rt_step("shrink below the CQEs queued: EINVAL, nothing lost");
	ext_sends(&a, &b, &buf, 40, 4000);
	before = a.scq->cqe;
	ret = ibv_resize_cq(a.scq, 10);
	RT_CHECK(ret == EINVAL, "ibv_resize_cq(10) with 40 queued: %s",
		 strerror(ret));
	RT_CHECK(a.scq->cqe == before, "cq->cqe %d after a refused resize, "
		 "%d before", a.scq->cqe, before);
	ext_drain(a.scq, 40, 4000, "CQEs after a refused shrink");
	ret = ibv_resize_cq(a.scq, 0);
	RT_CHECK(ret == EINVAL, "ibv_resize_cq(0): %s", strerror(ret));

	rt_ep_destroy(&a);
	rt_ep_destroy(&b);
	rt_buf_free(&buf);
	rt_close2(&d0, &d1);
}

/* ---------------------------------------------------------- query_qp */

#define EXT_ALL_ATTR (IBV_QP_STATE | IBV_QP_CUR_STATE | \
	IBV_QP_EN_SQD_ASYNC_NOTIFY | IBV_QP_ACCESS_FLAGS | \
	IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY | IBV_QP_AV | \
	IBV_QP_PATH_MTU | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | \
	IBV_QP_RNR_RETRY | IBV_QP_RQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC | \
	IBV_QP_MIN_RNR_TIMER | IBV_QP_SQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | \
	IBV_QP_PATH_MIG_STATE | IBV_QP_CAP | IBV_QP_DEST_QPN)

#define EXT_EQ(field, want) RT_CHECK((field) == (want), \
	"%s: %" PRId64 ", set %" PRId64, #field, (int64_t)(field), \
	(int64_t)(want))

static void
rt_case_query_qp(void)
{
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr s, q;
	struct rt_dev d0, d1;
	struct rt_ep a, b;
	int ret;

	rt_open2(&d0, &d1);
	rt_ep_create(&a, &d0, &(struct rt_ep_opts){ .type = IBV_QPT_RC });
	rt_ep_create(&b, &d1, &(struct rt_ep_opts){ .type = IBV_QPT_RC });

	memset(&s, 0, sizeof(s));
	s.qp_state = IBV_QPS_INIT;
	s.pkey_index = 0;
	s.port_num = RT_PORT;
	s.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
	ret = ibv_modify_qp(a.qp, &s, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			    IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
	RT_CHECK(ret == 0, "RESET->INIT: %s", strerror(ret));
	rt_rc_init(&b, RT_ACCESS_ALL);

	s.qp_state = IBV_QPS_RTR;
	s.path_mtu = IBV_MTU_512;
	s.dest_qp_num = b.qp->qp_num;
	s.rq_psn = 0x123456;
	s.max_dest_rd_atomic = 3;
	s.min_rnr_timer = 17;
	rt_ah_attr(&s.ah_attr, &d1.gid);
	s.ah_attr.grh.hop_limit = 33;
	s.ah_attr.grh.traffic_class = 0x48;
	s.ah_attr.grh.flow_label = 0x5a5a5;
	s.ah_attr.sl = 3;
	ret = ibv_modify_qp(a.qp, &s, IBV_QP_STATE | IBV_QP_AV |
			    IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			    IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
	RT_CHECK(ret == 0, "INIT->RTR: %s", strerror(ret));
	s.qp_state = IBV_QPS_RTS;
	s.sq_psn = 0xabcdef;
	s.timeout = 19;
	s.retry_cnt = 5;
	s.rnr_retry = 6;
	s.max_rd_atomic = 2;
	ret = ibv_modify_qp(a.qp, &s, IBV_QP_STATE | IBV_QP_SQ_PSN |
			    IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			    IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC);
	RT_CHECK(ret == 0, "RTR->RTS: %s", strerror(ret));

	rt_step("ibv_query_qp of every attribute, as set");
	memset(&q, 0xee, sizeof(q));
	ret = ibv_query_qp(a.qp, &q, EXT_ALL_ATTR, &init);
	RT_CHECK(ret == 0, "ibv_query_qp: %s", strerror(ret));
	EXT_EQ(q.qp_state, IBV_QPS_RTS);
	EXT_EQ(q.cur_qp_state, IBV_QPS_RTS);
	EXT_EQ(q.path_mtu, IBV_MTU_512);
	EXT_EQ(q.path_mig_state, IBV_MIG_MIGRATED);
	EXT_EQ(q.rq_psn, 0x123456);
	EXT_EQ(q.sq_psn, 0xabcdef);
	EXT_EQ(q.dest_qp_num, b.qp->qp_num);
	EXT_EQ(q.qp_access_flags, s.qp_access_flags);
	EXT_EQ(q.pkey_index, 0);
	EXT_EQ(q.port_num, RT_PORT);
	EXT_EQ(q.timeout, 19);
	EXT_EQ(q.retry_cnt, 5);
	EXT_EQ(q.rnr_retry, 6);
	EXT_EQ(q.min_rnr_timer, 17);
	EXT_EQ(q.max_rd_atomic, 2);
	EXT_EQ(q.max_dest_rd_atomic, 3);
	EXT_EQ(q.sq_draining, 0);
	EXT_EQ(q.en_sqd_async_notify, 0);
	EXT_EQ(q.ah_attr.is_global, 1);
	EXT_EQ(q.ah_attr.port_num, RT_PORT);
	EXT_EQ(q.ah_attr.sl, 3);
	EXT_EQ(q.ah_attr.dlid, 0);
	EXT_EQ(q.ah_attr.static_rate, 0);
	EXT_EQ(q.ah_attr.src_path_bits, 0);
	EXT_EQ(q.ah_attr.grh.sgid_index, RT_GID_INDEX);
	/* Unicast: the route's hop limit (the port's, 64 by default), not
	 * the AV's, as the kernel reports it for rxe and mlx5. */
	EXT_EQ(q.ah_attr.grh.hop_limit, 64);
	EXT_EQ(q.ah_attr.grh.traffic_class, 0x48);
	EXT_EQ(q.ah_attr.grh.flow_label, 0x5a5a5);
	RT_CHECK(memcmp(&q.ah_attr.grh.dgid, &d1.gid, sizeof(d1.gid)) == 0,
		 "ah_attr.grh.dgid differs");
	EXT_EQ(q.cap.max_send_wr, init.cap.max_send_wr);
	RT_CHECK(q.cap.max_send_wr >= RT_WR && q.cap.max_recv_wr >= RT_WR &&
		 q.cap.max_send_sge >= RT_SGE && q.cap.max_recv_sge >= RT_SGE &&
		 q.cap.max_inline_data >= RT_INLINE, "cap %u/%u/%u/%u/%u",
		 q.cap.max_send_wr, q.cap.max_recv_wr, q.cap.max_send_sge,
		 q.cap.max_recv_sge, q.cap.max_inline_data);
	EXT_EQ(init.qp_type, IBV_QPT_RC);
	RT_CHECK(init.send_cq == a.scq && init.recv_cq == a.rcq &&
		 init.srq == NULL, "init_attr CQs/SRQ");

	rt_step("RTS->SQD with en_sqd_async_notify: queried back");
	memset(&s, 0, sizeof(s));
	s.qp_state = IBV_QPS_SQD;
	s.en_sqd_async_notify = 1;
	ret = ibv_modify_qp(a.qp, &s, IBV_QP_STATE |
			    IBV_QP_EN_SQD_ASYNC_NOTIFY);
	RT_CHECK(ret == 0, "RTS->SQD: %s", strerror(ret));
	ret = ibv_query_qp(a.qp, &q, EXT_ALL_ATTR, &init);
	RT_CHECK(ret == 0, "ibv_query_qp: %s", strerror(ret));
	EXT_EQ(q.qp_state, IBV_QPS_SQD);
	EXT_EQ(q.en_sqd_async_notify, 1);
	EXT_EQ(q.timeout, 19);

	rt_step("UD QP: qkey queried back");
	{
		struct rt_ep u;

		rt_ep_create(&u, &d0, &(struct rt_ep_opts){ .type =
							    IBV_QPT_UD });
		rt_ud_up(&u);
		ret = ibv_query_qp(u.qp, &q, IBV_QP_STATE | IBV_QP_QKEY |
				   IBV_QP_SQ_PSN, &init);
		RT_CHECK(ret == 0, "ibv_query_qp(UD): %s", strerror(ret));
		EXT_EQ(q.qkey, RT_QKEY);
		EXT_EQ(q.qp_state, IBV_QPS_RTS);
		EXT_EQ(q.sq_psn, u.psn);
		EXT_EQ(init.qp_type, IBV_QPT_UD);
		rt_ep_destroy(&u);
	}
	rt_ep_destroy(&a);
	rt_ep_destroy(&b);
	rt_close2(&d0, &d1);
}

/* ------------------------------------------------------- ah_from_wc */

static void
rt_case_ah_from_wc(void)
{
	struct rt_dev d0, d1;
	struct rt_ep a, b;
	struct rt_buf ab, bb;
	struct ibv_ah_attr aa;
	struct ibv_ah *ah, *back;
	struct ibv_send_wr wr, *bad;
	struct ibv_sge s;
	struct ibv_wc wc;
	int ret;

	rt_open2(&d0, &d1);
	rt_ep_create(&a, &d0, &(struct rt_ep_opts){ .type = IBV_QPT_UD });
	rt_ep_create(&b, &d1, &(struct rt_ep_opts){ .type = IBV_QPT_UD });
	rt_ud_up(&a);
	rt_ud_up(&b);
	rt_buf_alloc(&ab, &d0, 4096, IBV_ACCESS_LOCAL_WRITE);
	rt_buf_alloc(&bb, &d1, 4096, IBV_ACCESS_LOCAL_WRITE);
	rt_ah_attr(&aa, &d1.gid);
	ah = ibv_create_ah(d0.pd, &aa);
	RT_CHECK(ah != NULL, "ibv_create_ah: %s", strerror(errno));

	rt_step("UD a -> b, then b answers with an AH from the receive WC");
	s = rt_sge(&bb, 0, RT_GRH_LEN + 256);
	rt_post_recv(&b, 70, &s, 1);
	s = rt_sge(&ab, 0, RT_GRH_LEN + 256);
	rt_post_recv(&a, 71, &s, 1);
	memset(&wr, 0, sizeof(wr));
	s = rt_sge(&ab, 2048, 100);
	rt_fill_random(ab.p + 2048, 100);
	wr.wr_id = 72;
	wr.opcode = IBV_WR_SEND;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.sg_list = &s;
	wr.num_sge = 1;
	wr.wr.ud.ah = ah;
	wr.wr.ud.remote_qpn = b.qp->qp_num;
	wr.wr.ud.remote_qkey = RT_QKEY;
	ret = ibv_post_send(a.qp, &wr, &bad);
	RT_CHECK(ret == 0, "ibv_post_send(UD): %s", strerror(ret));
	rt_expect_wc(a.scq, "UD SEND", 72, IBV_WC_SUCCESS, IBV_WC_SEND);
	wc = rt_expect_wc(b.rcq, "UD RECV", 70, IBV_WC_SUCCESS, IBV_WC_RECV);
	RT_CHECK(wc.src_qp == a.qp->qp_num, "src_qp 0x%x", wc.src_qp);

	ret = ibv_init_ah_from_wc(d1.ctx, RT_PORT, &wc,
				  (struct ibv_grh *)bb.p, &aa);
	RT_CHECK(ret == 0, "ibv_init_ah_from_wc: %s", strerror(errno));
	RT_CHECK(aa.is_global && memcmp(&aa.grh.dgid, &d0.gid,
					sizeof(d0.gid)) == 0,
		 "ibv_init_ah_from_wc: dgid is not the sender's GID");
	EXT_EQ(aa.grh.sgid_index, RT_GID_INDEX);
	EXT_EQ(aa.port_num, RT_PORT);
	back = ibv_create_ah_from_wc(d1.pd, &wc, (struct ibv_grh *)bb.p,
				     RT_PORT);
	RT_CHECK(back != NULL, "ibv_create_ah_from_wc: %s", strerror(errno));

	s = rt_sge(&bb, 3000, 50);
	rt_fill_random(bb.p + 3000, 50);
	wr.wr_id = 73;
	wr.sg_list = &s;
	wr.wr.ud.ah = back;
	wr.wr.ud.remote_qpn = wc.src_qp;
	ret = ibv_post_send(b.qp, &wr, &bad);
	RT_CHECK(ret == 0, "ibv_post_send(UD reply): %s", strerror(ret));
	rt_expect_wc(b.scq, "UD reply", 73, IBV_WC_SUCCESS, IBV_WC_SEND);
	wc = rt_expect_wc(a.rcq, "UD reply received", 71, IBV_WC_SUCCESS,
			  IBV_WC_RECV);
	RT_CHECK(wc.byte_len == RT_GRH_LEN + 50, "byte_len %u", wc.byte_len);
	rt_check_data(ab.p + RT_GRH_LEN, bb.p + 3000, 50, "reply payload");

	ret = ibv_destroy_ah(back);
	RT_CHECK(ret == 0, "ibv_destroy_ah: %s", strerror(ret));
	ret = ibv_destroy_ah(ah);
	RT_CHECK(ret == 0, "ibv_destroy_ah: %s", strerror(ret));
	rt_ep_destroy(&a);
	rt_ep_destroy(&b);
	rt_buf_free(&ab);
	rt_buf_free(&bb);
	rt_close2(&d0, &d1);
}

/* ------------------------------------------------------- implicit ODP */

#define IMP_ACCESS	(IBV_ACCESS_ON_DEMAND | IBV_ACCESS_LOCAL_WRITE | \
			 IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | \
			 IBV_ACCESS_REMOTE_ATOMIC)

struct imp_env {
	struct rt_dev d0, d1;
	struct rt_ep a, b;		/* a on rocepmd0 requests */
	struct rt_rc_opts o;
};

static void
imp_pair(struct imp_env *e)
{
	rt_rc_pair(&e->a, &e->d0, &e->b, &e->d1, &e->o);
}

/* A request the responder must refuse: REM_ACCESS_ERR; a new pair. */
static void
imp_refused(struct imp_env *e, enum ibv_wr_opcode op, struct ibv_sge *s,
	    uint64_t raddr, uint32_t rkey, const char *what)
{
	rt_step("%s: REM_ACCESS_ERR, the process alive", what);
	if (op == IBV_WR_ATOMIC_FETCH_AND_ADD)
		rt_post_atomic(&e->a, false, 3, op, s, raddr, rkey, 1, 0);
	else
		rt_post_send(&e->a, 3, op, s, 1, IBV_SEND_SIGNALED, 0, raddr,
			     rkey);
	rt_expect_wc(e->a.scq, what, 3, IBV_WC_REM_ACCESS_ERR, -1);
	rt_ep_destroy(&e->a);
	rt_ep_destroy(&e->b);
	imp_pair(e);
}

/* ibv_advise_mr() of one SGE: expect `want`. */
static void
imp_advise(struct ibv_pd *pd, enum ibv_advise_mr_advice adv, uint32_t flags,
	   uint32_t lkey, uint64_t addr, uint32_t len, int want,
	   const char *what)
{
	struct ibv_sge s = { .addr = addr, .length = len, .lkey = lkey };
	int ret;

	rt_step("ibv_advise_mr %s: %s", what, want ? strerror(want) : "0");
	ret = ibv_advise_mr(pd, adv, flags, &s, 1);
	RT_CHECK(ret == want, "ibv_advise_mr %s: %s, expected %s", what,
		 ret ? strerror(ret) : "0", want ? strerror(want) : "0");
}

/*
 * Implicit on-demand MRs (ibv_reg_mr(pd, NULL, SIZE_MAX, ON_DEMAND)): a
 * key over the whole address space, iova == address, used locally and by
 * the peer at heap addresses never registered; an unmapped or read-only
 * address the peer names is a NAK, never a fault of the process.
 */
static void
rt_case_implicit_odp(void)
{
	struct imp_env e;
	struct ibv_mr *i0, *i1, *mr;
	uint8_t *src, *dst, *hole, *ro;
	uint64_t *word, orig;
	long pg = sysconf(_SC_PAGESIZE);
	struct ibv_sge s;
	struct ibv_pd *pd2;
	uint32_t dead;
	int ret;

	memset(&e, 0, sizeof(e));
	rt_open2(&e.d0, &e.d1);
	e.o = rt_rc_default;
	e.o.access |= IBV_ACCESS_REMOTE_ATOMIC;

	rt_step("ibv_reg_mr_iova(NULL, SIZE_MAX, iova 4096, ON_DEMAND): "
		"EINVAL");
	mr = ibv_reg_mr_iova(e.d1.pd, NULL, SIZE_MAX, 4096, IMP_ACCESS);
	RT_CHECK(mr == NULL && errno == EINVAL, "implicit MR at iova 4096: "
		 "%s", mr == NULL ? strerror(errno) : "registered");
	rt_step("ibv_reg_mr(NULL, SIZE_MAX, ON_DEMAND) on both devices");
	i0 = ibv_reg_mr(e.d0.pd, NULL, SIZE_MAX, IBV_ACCESS_ON_DEMAND |
			IBV_ACCESS_LOCAL_WRITE);
	RT_CHECK(i0 != NULL, "implicit ODP MR: %s", strerror(errno));
	i1 = ibv_reg_mr(e.d1.pd, NULL, SIZE_MAX, IMP_ACCESS);
	RT_CHECK(i1 != NULL, "implicit ODP MR: %s", strerror(errno));
	RT_CHECK(i1->addr == NULL && i1->length == SIZE_MAX,
		 "implicit MR addr %p length %zu, expected NULL and SIZE_MAX",
		 i1->addr, i1->length);
	imp_pair(&e);

	/* plain heap, never registered */
	src = malloc(16384);
	dst = malloc(16384);
	word = aligned_alloc(8, 64);
	RT_CHECK(src != NULL && dst != NULL && word != NULL, "malloc");

	rt_step("SEND 5000 B from the heap to the heap, implicit lkeys");
	s = (struct ibv_sge){ (uintptr_t)dst, 8192, i1->lkey };
	rt_post_recv(&e.b, 7, &s, 1);
	rt_fill_random(src, 5000);
	s = (struct ibv_sge){ (uintptr_t)src, 5000, i0->lkey };
	rt_post_send(&e.a, 8, IBV_WR_SEND, &s, 1, IBV_SEND_SIGNALED, 0, 0, 0);
	rt_expect_wc(e.a.scq, "SEND", 8, IBV_WC_SUCCESS, IBV_WC_SEND);
	rt_expect_wc(e.b.rcq, "RECV", 7, IBV_WC_SUCCESS, IBV_WC_RECV);
	rt_check_data(dst, src, 5000, "SEND through implicit MRs");

	rt_step("RDMA WRITE 9000 B to a heap address through the implicit "
		"rkey");
	memset(dst, 0, 16384);
	rt_fill_random(src, 9000);
	s = (struct ibv_sge){ (uintptr_t)src, 9000, i0->lkey };
	rt_post_send(&e.a, 1, IBV_WR_RDMA_WRITE, &s, 1, IBV_SEND_SIGNALED, 0,
		     (uintptr_t)dst + 333, i1->rkey);
	rt_expect_wc(e.a.scq, "WRITE", 1, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
	rt_check_data(dst + 333, src, 9000, "WRITE through the implicit rkey");

	rt_step("RDMA READ 7000 B of a heap address through the implicit "
		"rkey");
	rt_fill_random(dst, 7000);
	memset(src, 0, 7000);
	s = (struct ibv_sge){ (uintptr_t)src, 7000, i0->lkey };
	rt_post_send(&e.a, 2, IBV_WR_RDMA_READ, &s, 1, IBV_SEND_SIGNALED, 0,
		     (uintptr_t)dst, i1->rkey);
	rt_expect_wc(e.a.scq, "READ", 2, IBV_WC_SUCCESS, IBV_WC_RDMA_READ);
	rt_check_data(src, dst, 7000, "READ through the implicit rkey");

	rt_step("FETCH_AND_ADD and CMP_AND_SWP on a heap word");
	*word = 40;
	s = (struct ibv_sge){ (uintptr_t)&orig, 8, i0->lkey };
	rt_post_atomic(&e.a, false, 4, IBV_WR_ATOMIC_FETCH_AND_ADD, &s,
		       (uintptr_t)word, i1->rkey, 2, 0);
	rt_expect_wc(e.a.scq, "FETCH_AND_ADD", 4, IBV_WC_SUCCESS,
		     IBV_WC_FETCH_ADD);
	RT_CHECK(orig == 40 && *word == 42, "FETCH_AND_ADD: orig %" PRIu64
		 ", word %" PRIu64, orig, *word);
	rt_post_atomic(&e.a, false, 5, IBV_WR_ATOMIC_CMP_AND_SWP, &s,
		       (uintptr_t)word, i1->rkey, 42, 7);
	rt_expect_wc(e.a.scq, "CMP_AND_SWP", 5, IBV_WC_SUCCESS,
		     IBV_WC_COMP_SWAP);
	RT_CHECK(orig == 42 && *word == 7, "CMP_AND_SWP: orig %" PRIu64
		 ", word %" PRIu64, orig, *word);

	/*
	 * A page mapped then unmapped (a later mmap may take its place: one
	 * WRITE at once); then an inaccessible page after a writable one
	 * (PROT_NONE stays so); a read-only page.
	 */
	hole = mmap(NULL, (size_t)pg, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	RT_CHECK(hole != MAP_FAILED, "mmap: %s", strerror(errno));
	RT_CHECK(munmap(hole, (size_t)pg) == 0, "munmap: %s", strerror(errno));
	s = (struct ibv_sge){ (uintptr_t)src, 256, i0->lkey };
	imp_refused(&e, IBV_WR_RDMA_WRITE, &s, (uintptr_t)hole, i1->rkey,
		    "WRITE to a page just unmapped");
	hole = mmap(NULL, 2 * (size_t)pg, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	RT_CHECK(hole != MAP_FAILED, "mmap: %s", strerror(errno));
	hole += pg;
	RT_CHECK(mprotect(hole, (size_t)pg, PROT_NONE) == 0, "mprotect: %s",
		 strerror(errno));
	ro = mmap(NULL, (size_t)pg, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS,
		  -1, 0);
	RT_CHECK(ro != MAP_FAILED, "mmap: %s", strerror(errno));

	imp_refused(&e, IBV_WR_RDMA_WRITE, &s, (uintptr_t)hole, i1->rkey,
		    "WRITE to an inaccessible page");
	imp_refused(&e, IBV_WR_RDMA_WRITE, &s, (uintptr_t)hole - 100,
		    i1->rkey, "WRITE running into an inaccessible page");
	imp_refused(&e, IBV_WR_RDMA_READ, &s, (uintptr_t)hole, i1->rkey,
		    "READ of an inaccessible page");
	imp_refused(&e, IBV_WR_RDMA_WRITE, &s, (uintptr_t)ro, i1->rkey,
		    "WRITE to a read-only page");
	for (long i = 0; i < pg; i++)
		RT_CHECK(ro[i] == 0, "read-only page written at %ld", i);
	s = (struct ibv_sge){ (uintptr_t)&orig, 8, i0->lkey };
	imp_refused(&e, IBV_WR_ATOMIC_FETCH_AND_ADD, &s, (uintptr_t)hole,
		    i1->rkey, "FETCH_AND_ADD on an inaccessible page");

	rt_step("SEND from an inaccessible page through the implicit lkey: "
		"LOC_PROT_ERR");
	s = (struct ibv_sge){ (uintptr_t)hole, 64, i0->lkey };
	rt_post_send(&e.a, 9, IBV_WR_SEND, &s, 1, IBV_SEND_SIGNALED, 0, 0, 0);
	rt_expect_wc(e.a.scq, "SEND from an inaccessible page", 9,
		     IBV_WC_LOC_PROT_ERR, -1);
	rt_ep_destroy(&e.a);
	rt_ep_destroy(&e.b);
	imp_pair(&e);

	/* ibv_advise_mr(): mlx5's answers (shim_advise_mr()). */
	imp_advise(e.d1.pd, IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE,
		   IBV_ADVISE_MR_FLAG_FLUSH, i1->lkey, (uintptr_t)dst, 16384,
		   0, "PREFETCH_WRITE | FLUSH of heap through an implicit MR");
	imp_advise(e.d1.pd, IBV_ADVISE_MR_ADVICE_PREFETCH,
		   IBV_ADVISE_MR_FLAG_FLUSH, i1->lkey, (uintptr_t)hole, 64,
		   EFAULT, "PREFETCH | FLUSH of an inaccessible page");
	imp_advise(e.d1.pd, IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE,
		   IBV_ADVISE_MR_FLAG_FLUSH, i1->lkey, (uintptr_t)ro, 64,
		   EFAULT, "PREFETCH_WRITE | FLUSH of a read-only page");
	imp_advise(e.d1.pd, IBV_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT,
		   IBV_ADVISE_MR_FLAG_FLUSH, i1->lkey, (uintptr_t)hole, 64, 0,
		   "PREFETCH_NO_FAULT | FLUSH of an inaccessible page");
	imp_advise(e.d1.pd, IBV_ADVISE_MR_ADVICE_PREFETCH, 0, i1->lkey,
		   (uintptr_t)hole, 64, 0,
		   "PREFETCH of an inaccessible page, no FLUSH (not waited "
		   "for)");
	imp_advise(e.d1.pd, IBV_ADVISE_MR_ADVICE_PREFETCH, 0, i1->lkey ^ 0x80,
		   (uintptr_t)dst, 64, ENOENT, "with a bad lkey");
	imp_advise(e.d1.pd, IBV_ADVISE_MR_ADVICE_PREFETCH, 0, i1->lkey,
		   (uintptr_t)dst, 64, 0, "PREFETCH, no FLUSH");
	imp_advise(e.d1.pd, IBV_ADVISE_MR_ADVICE_PREFETCH, 4, i1->lkey,
		   (uintptr_t)dst, 64, EINVAL, "with an unknown flag");
	imp_advise(e.d1.pd, IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE + 7, 0,
		   i1->lkey, (uintptr_t)dst, 64, EOPNOTSUPP,
		   "with an unknown advice");
	pd2 = ibv_alloc_pd(e.d1.ctx);
	RT_CHECK(pd2 != NULL, "ibv_alloc_pd: %s", strerror(errno));
	imp_advise(pd2, IBV_ADVISE_MR_ADVICE_PREFETCH, 0, i1->lkey,
		   (uintptr_t)dst, 64, EPERM, "naming an MR of another PD");
	mr = ibv_reg_mr(e.d1.pd, dst, 4096, IBV_ACCESS_ON_DEMAND);
	RT_CHECK(mr != NULL, "ibv_reg_mr(ON_DEMAND): %s", strerror(errno));
	imp_advise(e.d1.pd, IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE, 0, mr->lkey,
		   (uintptr_t)dst, 64, EPERM,
		   "PREFETCH_WRITE of an MR without local write");
	imp_advise(e.d1.pd, IBV_ADVISE_MR_ADVICE_PREFETCH,
		   IBV_ADVISE_MR_FLAG_FLUSH, mr->lkey, (uintptr_t)dst + 4000,
		   200, EFAULT, "| FLUSH past the MR's end");
	imp_advise(e.d1.pd, IBV_ADVISE_MR_ADVICE_PREFETCH,
		   IBV_ADVISE_MR_FLAG_FLUSH, mr->lkey, (uintptr_t)dst, 4096, 0,
		   "| FLUSH of the whole MR");
	RT_CHECK(ibv_dereg_mr(mr) == 0, "ibv_dereg_mr");
	mr = ibv_reg_mr(e.d1.pd, dst, 4096, IBV_ACCESS_LOCAL_WRITE);
	RT_CHECK(mr != NULL, "ibv_reg_mr: %s", strerror(errno));
	imp_advise(e.d1.pd, IBV_ADVISE_MR_ADVICE_PREFETCH, 0, mr->lkey,
		   (uintptr_t)dst, 64, ENOENT, "naming an MR not on demand");
	RT_CHECK(ibv_dereg_mr(mr) == 0, "ibv_dereg_mr");
	RT_CHECK(ibv_dealloc_pd(pd2) == 0, "ibv_dealloc_pd");

	rt_step("ibv_dereg_mr of the implicit MRs; the old rkey is dead");
	dead = i1->rkey;
	ret = ibv_dereg_mr(i1);
	RT_CHECK(ret == 0, "ibv_dereg_mr(implicit): %s", strerror(ret));
	s = (struct ibv_sge){ (uintptr_t)src, 64, i0->lkey };
	imp_refused(&e, IBV_WR_RDMA_WRITE, &s, (uintptr_t)dst, dead,
		    "WRITE through the deregistered implicit rkey");
	rt_ep_destroy(&e.a);
	rt_ep_destroy(&e.b);
	ret = ibv_dereg_mr(i0);
	RT_CHECK(ret == 0, "ibv_dereg_mr(implicit): %s", strerror(ret));
	munmap(ro, (size_t)pg);
	munmap(hole - pg, 2 * (size_t)pg);
	free(src);
	free(dst);
	free(word);
	rt_close2(&e.d0, &e.d1);
}

/* The cases: test_verbs_ext.def, which meson.build reads too. */
#define RT_CASE_FN(name) rt_case_##name
static const struct rt_case rt_cases[] = {
#include "test_verbs_ext.def"
};

int
main(int argc, char **argv)
{
	return rt_main(argc, argv, rt_cases,
		       sizeof(rt_cases) / sizeof(rt_cases[0]));
}
