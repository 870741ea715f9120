/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Resources of one end of a run over the verbs API: its device, PD, one MR
 * over its buffer (one slot of depth x size per QP), one CQ on one
 * completion channel, qps RC QPs (and --idle-qps more), connected to the
 * peer's; posting to them and checking their completions; `show qp`'s
 * lines of one end.
 */

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>

#include "rtp.h"

/* ---- resources --------------------------------------------------------- */

/*
 * An RC QP on the side's CQ, in INIT on port 1 with `access`: the QP, or
 * NULL with errno set.
 */
static struct ibv_qp *
side_qp_init(struct rtp_side *s, uint32_t send_wr, uint32_t recv_wr,
	     unsigned int access)
{
	struct ibv_qp_init_attr qa;
	struct ibv_qp_attr a;
	struct ibv_qp *qp;
	int ret;

	memset(&qa, 0, sizeof(qa));
	qa.send_cq = s->cq;
	qa.recv_cq = s->cq;
	qa.qp_type = IBV_QPT_RC;
	qa.cap.max_send_wr = send_wr;
	qa.cap.max_recv_wr = recv_wr;
	qa.cap.max_send_sge = 1;
	qa.cap.max_recv_sge = 1;
	qp = ibv_create_qp(s->pd, &qa);
	if (qp == NULL)
		return NULL;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = access;
	ret = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			    IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
	if (ret != 0) {
		(void)ibv_destroy_qp(qp);
		errno = ret;
		return NULL;
	}
	return qp;
}

/*
 * --idle-qps: QPs that exist, connected (each to itself) and in RTS, and
 * carry nothing: what the engine's pass costs per QP it does not use.
 */
static int
side_idle_qps(struct rtp_side *s, const struct rtp_settings *set,
	      struct rtp_run *run)
{
	struct rtp_ep_info self;

	if (set->idle_qps == 0)
		return 0;
	s->idle = calloc(set->idle_qps, sizeof(*s->idle));
	if (s->idle == NULL)
		return rtp_fail(run, -ENOMEM, "idle QPs");
	self = s->local[0];
	for (uint32_t q = 0; q < set->idle_qps; q++) {
		s->idle[q] = side_qp_init(s, 1, 1, 0);
		if (s->idle[q] == NULL)
			return rtp_fail(run, -errno,
					"ibv_create_qp/idle QP to INIT");
		s->nb_idle++;
		self.qpn = s->idle[q]->qp_num;
		if (rtp_qp_connect(s->ctx, s->idle[q], &self, self.psn) < 0)
			return rtp_fail(run, -EIO, "idle QP to RTS");
	}
	return 0;
}

/*
 * One end on device dev (its index in the verbs device list), its QPs in
 * INIT (--idle-qps ones in RTS).  0, or the run failed; rtp_side_close
 * frees what was opened.
 */
int
rtp_side_open(struct rtp_side *s, unsigned int dev,
	      const struct rtp_settings *set, struct rtp_run *run)
{
	struct ibv_device **list;
	int nb = 0;
	uint32_t cqe;

	s->dev = dev;
	s->stop = &run->stop;
	list = ibv_get_device_list(&nb);
	if (list == NULL || (int)dev >= nb) {
		if (list != NULL)
			ibv_free_device_list(list);
		return rtp_fail(run, -ENODEV, "device missing");
	}
	s->ctx = ibv_open_device(list[dev]);
	ibv_free_device_list(list);
	if (s->ctx == NULL)
		return rtp_fail(run, -errno, "ibv_open_device");
	s->pd = ibv_alloc_pd(s->ctx);
	s->ch = ibv_create_comp_channel(s->ctx);
	if (s->pd == NULL || s->ch == NULL)
		return rtp_fail(run, -errno, "ibv_alloc_pd/channel");
	cqe = set->qps * (set->depth + RTP_SIGNAL_EVERY + 1) * 2;
	s->cq = ibv_create_cq(s->ctx, (int)cqe, NULL, s->ch, 0);
	if (s->cq == NULL)
		return rtp_fail(run, -errno, "ibv_create_cq");
	if (rtp.params.cq_mod_count != 0 || rtp.params.cq_mod_period != 0) {
		struct ibv_modify_cq_attr ma = {
			.attr_mask = IBV_CQ_ATTR_MODERATE,
			.moderate = { .cq_count = rtp.params.cq_mod_count,
				      .cq_period = rtp.params.cq_mod_period },
		};
		int ret = ibv_modify_cq(s->cq, &ma);

		if (ret != 0)
			return rtp_fail(run, -ret, "ibv_modify_cq");
	}
	s->slot = (size_t)set->size * set->depth;
	if (s->slot == 0)
		s->slot = 64;
	s->buf_len = s->slot * set->qps;
	s->buf = aligned_alloc(4096, RTE_ALIGN_CEIL(s->buf_len, 4096));
	if (s->buf == NULL)
		return rtp_fail(run, -ENOMEM, "buffer");
	memset(s->buf, 0x5a, s->buf_len);
	/* Both ends fill their buffers alike: a peer's counter starts so. */
	for (uint32_t q = 0; q < RTP_MAX_QPS; q++)
		s->atomics[q] = 0x5a5a5a5a5a5a5a5aull;
	s->mr = ibv_reg_mr(s->pd, s->buf, s->buf_len, IBV_ACCESS_LOCAL_WRITE |
			   IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			   IBV_ACCESS_REMOTE_ATOMIC);
	if (s->mr == NULL)
		return rtp_fail(run, -errno, "ibv_reg_mr");
	s->nb_qps = set->qps;
	for (uint32_t q = 0; q < set->qps; q++) {
		s->qp[q] = side_qp_init(s, set->depth + RTP_SIGNAL_EVERY + 1,
					set->depth * RTP_RX_PER_DEPTH + 1,
					IBV_ACCESS_REMOTE_WRITE |
					IBV_ACCESS_REMOTE_READ |
					IBV_ACCESS_LOCAL_WRITE |
					IBV_ACCESS_REMOTE_ATOMIC);
		if (s->qp[q] == NULL)
			return rtp_fail(run, -errno,
					"ibv_create_qp/QP to INIT");
		s->local[q].qpn = s->qp[q]->qp_num;
		s->local[q].psn = (uint32_t)lrand48() & 0xffffff;
		s->local[q].rkey = s->mr->rkey;
		s->local[q].addr = (uintptr_t)(s->buf + q * s->slot);
		if (ibv_query_gid(s->ctx, 1, 0, &s->local[q].gid) != 0)
			return rtp_fail(run, -errno, "ibv_query_gid");
	}
	return side_idle_qps(s, set, run);
}

/*
 * A QP in INIT to RTS towards the remote end: path MTU of the port, up to
 * 16 RDMA READs in flight each way.  0, or a negative errno.
 */
int
rtp_qp_connect(struct ibv_context *ctx, struct ibv_qp *qp,
	       const struct rtp_ep_info *remote, uint32_t sq_psn)
{
	struct ibv_port_attr pa;
	struct ibv_device_attr da;
	struct ibv_qp_attr a;

	if (ibv_query_port(ctx, 1, &pa) != 0 ||
	    ibv_query_device(ctx, &da) != 0)
		return -EIO;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = pa.active_mtu;
	a.dest_qp_num = remote->qpn;
	a.rq_psn = remote->psn;
	a.max_dest_rd_atomic = (uint8_t)RTE_MIN(da.max_qp_rd_atom, (int)16);
	a.min_rnr_timer = 12;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid = remote->gid;
	a.ah_attr.grh.sgid_index = 0;
	a.ah_attr.grh.hop_limit = 64;
	a.ah_attr.port_num = 1;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV |
			  IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			  IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
			  IBV_QP_MIN_RNR_TIMER) != 0)
		return -EIO;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.sq_psn = sq_psn;
	a.max_rd_atomic = (uint8_t)RTE_MIN(da.max_qp_init_rd_atom, (int)16);
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT |
			  IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			  IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC) != 0)
		return -EIO;
	return 0;
}

/* Every QP of the end to RTS towards s->remote. */
int
rtp_side_connect(struct rtp_side *s, struct rtp_run *run)
{
	for (uint32_t q = 0; q < s->nb_qps; q++) {
		int ret = rtp_qp_connect(s->ctx, s->qp[q], &s->remote[q],
					 s->local[q].psn);

		if (ret < 0)
			return rtp_fail(run, ret, "QP to RTR/RTS");
	}
	return 0;
}

/* Error state: posted WRs flush, which wakes a blocked waiter. */
void
rtp_side_flush(struct rtp_side *s)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };

	for (uint32_t q = 0; q < s->nb_qps; q++)
		if (s->qp[q] != NULL)
			ibv_modify_qp(s->qp[q], &a, IBV_QP_STATE);
}

void
rtp_side_close(struct rtp_side *s)
{
	/* a waiter never set up is all zeroes: its epfd 0 is not ours */
	if (s->w.cq != NULL)
		rtp_waiter_fini(&s->w);
	for (uint32_t q = 0; q < RTP_MAX_QPS; q++)
		if (s->qp[q] != NULL)
			ibv_destroy_qp(s->qp[q]);
	for (uint32_t q = 0; q < s->nb_idle; q++)
		ibv_destroy_qp(s->idle[q]);
	free(s->idle);
	if (s->mr != NULL)
		ibv_dereg_mr(s->mr);
	if (s->cq != NULL)
		ibv_destroy_cq(s->cq);
	if (s->ch != NULL)
		ibv_destroy_comp_channel(s->ch);
	if (s->pd != NULL)
		ibv_dealloc_pd(s->pd);
	if (s->ctx != NULL)
		ibv_close_device(s->ctx);
	free(s->buf);
	memset(s, 0, sizeof(*s));
}

/* ---- posting and completions ------------------------------------------- */

int
rtp_post(struct rtp_side *s, uint32_t q, enum ibv_wr_opcode op, uint32_t size,
	 uint64_t wr_id, bool signaled, uint32_t imm)
{
	uint32_t slot = (uint32_t)(wr_id % (s->slot / RTE_MAX(size, 1u)));
	struct ibv_sge sge = {
		.addr = (uintptr_t)(s->buf + q * s->slot + (size_t)slot * size),
		.length = size,
		.lkey = s->mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = wr_id,
		.sg_list = &sge,
		.num_sge = size != 0 ? 1 : 0,
		.opcode = op,
		.send_flags = signaled ? IBV_SEND_SIGNALED : 0,
	};
	struct ibv_send_wr *bad;

	if (op == IBV_WR_ATOMIC_FETCH_AND_ADD) {
		/* Add 1 to the first 8 bytes of the peer's slot: the original
		 * value comes back into this WR's SGE. */
		wr.wr.atomic.remote_addr = s->remote[q].addr;
		wr.wr.atomic.rkey = s->remote[q].rkey;
		wr.wr.atomic.compare_add = 1;
	} else if (op == IBV_WR_RDMA_WRITE || op == IBV_WR_RDMA_WRITE_WITH_IMM ||
	    op == IBV_WR_RDMA_READ) {
		wr.wr.rdma.remote_addr = s->remote[q].addr +
			(uint64_t)slot * size;
		wr.wr.rdma.rkey = s->remote[q].rkey;
	}
	if (op == IBV_WR_RDMA_WRITE_WITH_IMM || op == IBV_WR_SEND_WITH_IMM)
		wr.imm_data = htonl(imm);
	return -ibv_post_send(s->qp[q], &wr, &bad);
}

int
rtp_post_recv(struct rtp_side *s, uint32_t q, uint32_t size, uint64_t wr_id)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)(s->buf + q * s->slot),
		.length = size,
		.lkey = s->mr->lkey,
	};
	struct ibv_recv_wr wr = {
		.wr_id = wr_id,
		.sg_list = &sge,
		.num_sge = size != 0 ? 1 : 0,
	};
	struct ibv_recv_wr *bad;

	return -ibv_post_recv(s->qp[q], &wr, &bad);
}

/* Index of the QP a completion belongs to. */
uint32_t
rtp_wc_qp(const struct rtp_side *s, const struct ibv_wc *wc)
{
	for (uint32_t q = 0; q < s->nb_qps; q++)
		if (s->qp[q]->qp_num == wc->qp_num)
			return q;
	return 0;
}

/* n receives of size bytes on each QP of the end. */
int
rtp_recvs_post_all(struct rtp_side *s, struct rtp_run *run, uint32_t n)
{
	for (uint32_t q = 0; q < s->nb_qps; q++)
		for (uint32_t k = 0; k < n; k++) {
			int ret = rtp_post_recv(s, q, run->set.size, k);

			if (ret < 0)
				return rtp_fail(run, ret, "ibv_post_recv");
		}
	return 0;
}

/*
 * 0 for a successful completion; 1 for a flush after the end of the run;
 * else a negative errno, with the run failed.
 */
int
rtp_wc_check(struct rtp_side *s, const struct ibv_wc *wc, struct rtp_run *run)
{
	char what[96];

	if (wc->status == IBV_WC_SUCCESS)
		return 0;
	if (wc->status == IBV_WC_WR_FLUSH_ERR && (run->stop || run->abort))
		return 1;
	s->wc_errors++;
	snprintf(what, sizeof(what), "device %u QP %u: completion %s",
		 s->dev, wc->qp_num, ibv_wc_status_str(wc->status));
	return rtp_fail_fmt(run, -EIO, "%s (%s)", what);
}

/* ---- `show qp` --------------------------------------------------------- */

static const char *
qp_state_name(enum ibv_qp_state st)
{
	static const char *const names[] = {
		[IBV_QPS_RESET] = "RESET", [IBV_QPS_INIT] = "INIT",
		[IBV_QPS_RTR] = "RTR", [IBV_QPS_RTS] = "RTS",
		[IBV_QPS_SQD] = "SQD", [IBV_QPS_SQE] = "SQE",
		[IBV_QPS_ERR] = "ERR",
	};

	return (unsigned int)st < RTE_DIM(names) && names[st] != NULL ?
		names[st] : "?";
}

/* `show qp`: the QPs of one end, their state, and its counters so far. */
void
rtp_side_show(FILE *f, const char *name, const struct rtp_side *s)
{
	for (uint32_t q = 0; q < s->nb_qps; q++) {
		struct ibv_qp_attr a;
		struct ibv_qp_init_attr ia;
		int ret = ibv_query_qp(s->qp[q], &a, IBV_QP_STATE |
				       IBV_QP_SQ_PSN | IBV_QP_RQ_PSN |
				       IBV_QP_DEST_QPN, &ia);

		if (ret != 0) {
			fprintf(f, "qp %s/%u: 0x%06x: ibv_query_qp: %s\n", name,
				q, s->qp[q]->qp_num, strerror(ret));
			continue;
		}
		fprintf(f, "qp %s/%u: 0x%06x -> 0x%06x %s sq_psn %u rq_psn %u\n",
			name, q, s->qp[q]->qp_num, a.dest_qp_num,
			qp_state_name(a.qp_state), a.sq_psn, a.rq_psn);
	}
	if (s->nb_qps != 0)
		fprintf(f, "qp %s: done %" PRIu64 " wc_errors %" PRIu64
			" polls %" PRIu64 " cqes %" PRIu64 " events %" PRIu64
			"\n", name, s->done, s->wc_errors, s->w.polls,
			s->w.cqes, s->w.events);
}
