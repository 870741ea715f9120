/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tag_eager, tag_rndv: tag-matched messages through a TM-SRQ (what
 * bench/tm_rate.c measured).  Device 0 sends, device 1 receives on a
 * TM-SRQ with RTP_TAG_OTHER tags posted that nobody sends to (the list a
 * real MPI receiver keeps) and one exact tag per message in flight:
 *   tag_eager  a SEND carrying a 16-byte TMH, matched into the tagged
 *              buffer; done at the receiver's TM_RECV completion;
 *   tag_rndv   a SEND carrying TMH + RVH; the receiver's engine READs the
 *              data from the sender and answers with a FIN; done at
 *              DATA_VALID.
 * One thread drives both ends (as tm_rate did), keeping depth messages in
 * flight, polling: the receiver's side is the engine's, not a thread's.
 * Every message's data is checked (first and last byte name its slot).
 * The resources are the mode's own (an extended CQ with TM info, a
 * TM-SRQ): one process, two devices.
 * Or two processes (--client: the sender; --server: the receiver, in its
 * own thread): the receiver, having matched message w and listed tag w
 * again, gives the sender a credit for slot w (a zero-byte SEND with
 * immediate w); a message is done at its credit, and its latency is half
 * of post-to-credit (a round trip through the receiving application).
 */

#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/tm_types.h>

#include <rte_common.h>
#include <rte_cycles.h>

#include "rtp.h"

#define TMH_SIZE	16
#define RVH_SIZE	16
#define TAG_WINDOW	64		/* messages in flight at most */
#define RTP_TAG_OTHER	1024		/* tags posted, never sent to */

struct tag_side {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq_ex *cqx;
	struct ibv_srq *srq;		/* receiver: the TM-SRQ */
	struct ibv_qp *qp;
	union ibv_gid gid;
	uint8_t *buf;			/* TAG_WINDOW slots of `slot` bytes */
	size_t slot;
	struct ibv_mr *mr;
};

struct tag_run {
	struct rtp_run *run;
	bool rndv;
	uint32_t size, window;
	struct tag_side snd, rcv;
	uint64_t t_post[TAG_WINDOW];
	uint32_t snd_out;		/* sends not completed yet */
	bool remote;			/* two processes: credits */
	uint32_t nb_recvs;		/* sender: receives posted (FIN, credit) */
};

/*
 * Slot layout: the data, then at slot - 64 a rendezvous request (sent
 * inline, copied at post time) and at slot - 32 the buffer its FIN comes
 * back to, so a late FIN never lands on data.
 */
#define REQ_OFF(s)	((s)->slot - 64)
#define FIN_OFF(s)	((s)->slot - 32)

static int
tag_side_open(struct tag_side *s, unsigned int dev, size_t slot, bool tm)
{
	struct ibv_cq_init_attr_ex ca = {
		.cqe = 4096,
		.wc_flags = IBV_WC_STANDARD_FLAGS | IBV_WC_EX_WITH_TM_INFO,
	};
	struct ibv_qp_init_attr qa = {
		.qp_type = IBV_QPT_RC,
		.cap = {
			.max_send_wr = TAG_WINDOW * 2,
			.max_recv_wr = TAG_WINDOW * 2,
			.max_send_sge = 1,
			.max_recv_sge = 1,
			.max_inline_data = 64,
		},
	};
	struct ibv_device **l = ibv_get_device_list(NULL);

	for (unsigned int i = 0; l != NULL && l[i] != NULL; i++)
		if (i == dev)
			s->ctx = ibv_open_device(l[i]);
	if (l != NULL)
		ibv_free_device_list(l);
	if (s->ctx == NULL || ibv_query_gid(s->ctx, 1, 0, &s->gid) != 0)
		return -ENODEV;
	s->pd = ibv_alloc_pd(s->ctx);
	s->slot = slot;
	s->buf = aligned_alloc(4096, RTE_ALIGN_CEIL(slot * TAG_WINDOW, 4096));
	if (s->pd == NULL || s->buf == NULL)
		return -ENOMEM;
	memset(s->buf, 0, slot * TAG_WINDOW);
	s->mr = ibv_reg_mr(s->pd, s->buf, slot * TAG_WINDOW,
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ |
			   IBV_ACCESS_REMOTE_WRITE);
	s->cqx = ibv_create_cq_ex(s->ctx, &ca);
	if (s->mr == NULL || s->cqx == NULL)
		return -errno;
	if (tm) {
		struct ibv_srq_init_attr_ex sa = {
			.attr = { .max_wr = TAG_WINDOW * 2, .max_sge = 1 },
			.comp_mask = IBV_SRQ_INIT_ATTR_TYPE |
				IBV_SRQ_INIT_ATTR_PD | IBV_SRQ_INIT_ATTR_CQ |
				IBV_SRQ_INIT_ATTR_TM,
			.srq_type = IBV_SRQT_TM,
			.pd = s->pd,
			.cq = ibv_cq_ex_to_cq(s->cqx),
			.tm_cap = { .max_num_tags = RTP_TAG_OTHER + TAG_WINDOW,
				    .max_ops = 4 * TAG_WINDOW },
		};

		s->srq = ibv_create_srq_ex(s->ctx, &sa);
		if (s->srq == NULL)
			return -errno;
		qa.srq = s->srq;
	}
	qa.send_cq = ibv_cq_ex_to_cq(s->cqx);
	qa.recv_cq = qa.send_cq;
	s->qp = ibv_create_qp(s->pd, &qa);
	return s->qp == NULL ? -errno : 0;
}

static void
tag_side_close(struct tag_side *s)
{
	if (s->qp != NULL)
		ibv_destroy_qp(s->qp);
	if (s->srq != NULL)
		ibv_destroy_srq(s->srq);
	if (s->cqx != NULL)
		ibv_destroy_cq(ibv_cq_ex_to_cq(s->cqx));
	if (s->mr != NULL)
		ibv_dereg_mr(s->mr);
	if (s->pd != NULL)
		ibv_dealloc_pd(s->pd);
	if (s->ctx != NULL)
		ibv_close_device(s->ctx);
	free(s->buf);
}

static int
tag_connect_ep(struct tag_side *s, const struct rtp_ep_info *remote)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT,
		.port_num = 1,
		.qp_access_flags = IBV_ACCESS_LOCAL_WRITE |
			IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE,
	};

	if (ibv_modify_qp(s->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		return -EIO;
	return rtp_qp_connect(s->ctx, s->qp, remote, 1);
}

static int
tag_connect(struct tag_side *s, const struct tag_side *peer)
{
	struct rtp_ep_info remote = {
		.qpn = peer->qp->qp_num,
		.psn = 1,
		.gid = peer->gid,
	};

	return tag_connect_ep(s, &remote);
}

/* What the peer process needs of this end. */
static void
tag_ep(const struct tag_side *s, struct rtp_ep_info *ep)
{
	*ep = (struct rtp_ep_info){
		.qpn = s->qp->qp_num,
		.psn = 1,
		.rkey = s->mr->rkey,
		.addr = (uintptr_t)s->buf,
		.gid = s->gid,
	};
}

/* One completion: 1, 0 if none, or -EIO for an error completion. */
static int
tag_poll(struct tag_side *s, struct ibv_wc *wc, struct ibv_wc_tm_info *tm)
{
	struct ibv_poll_cq_attr pa = { 0 };
	int ret = ibv_start_poll(s->cqx, &pa);

	if (ret == ENOENT)
		return 0;
	if (ret != 0)
		return -EIO;
	wc->wr_id = s->cqx->wr_id;
	wc->status = s->cqx->status;
	wc->opcode = ibv_wc_read_opcode(s->cqx);
	wc->wc_flags = ibv_wc_read_wc_flags(s->cqx);
	if (wc->status == IBV_WC_SUCCESS && (wc->wc_flags & IBV_WC_WITH_IMM))
		wc->imm_data = ibv_wc_read_imm_data(s->cqx);
	if (tm != NULL && s->srq != NULL)
		ibv_wc_read_tm_info(s->cqx, tm);
	ibv_end_poll(s->cqx);
	return wc->status == IBV_WC_SUCCESS ? 1 : -EIO;
}

/*
 * A receiver completion of slot w, whose buffer is p: 0 when its data
 * arrived (checked, the buffer cleared for the next message), 1 for the
 * MATCH of a rendezvous (DATA_VALID follows), or rtp_fail()'s error.
 */
static int
tag_rcv_check(struct rtp_run *run, const struct tag_run *t,
	      const struct ibv_wc *wc, const struct ibv_wc_tm_info *tm,
	      uint32_t w, uint8_t *p)
{
	if (wc->opcode != IBV_WC_TM_RECV || w >= t->window ||
	    !(wc->wc_flags & (IBV_WC_TM_MATCH | IBV_WC_TM_DATA_VALID)))
		return rtp_fail(run, -EPROTO, "unexpected receiver completion");
	/* A MATCH names the tag (DATA_VALID alone does not). */
	if ((wc->wc_flags & IBV_WC_TM_MATCH) && tm->tag != w)
		return rtp_fail(run, -EPROTO, "wrong tag");
	if (!(wc->wc_flags & IBV_WC_TM_DATA_VALID))
		return 1;
	if (p[0] != (uint8_t)(0x40 + w) || p[t->size - 1] != (uint8_t)(0x40 + w))
		return rtp_fail(run, -EIO, "data mismatch");
	memset(p, 0, t->size);
	return 0;
}

static int
tag_recv(struct tag_side *s, uint32_t w, size_t off, size_t len)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)(s->buf + w * s->slot + off),
		.length = (uint32_t)len,
		.lkey = s->mr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = w, .sg_list = &sge, .num_sge = 1 };
	struct ibv_recv_wr *bad;

	return -(s->srq != NULL ? ibv_post_srq_recv(s->srq, &wr, &bad) :
		 ibv_post_recv(s->qp, &wr, &bad));
}

/* ADD tag `tag` for slot w (unsignaled: only the data completes). */
/* One list operation; ENOMEM (max_ops outstanding) is waited out: the
 * engine retires operations quickly. */
static int
tag_post_op(struct tag_run *t, struct ibv_srq *srq, struct ibv_ops_wr *op)
{
	uint64_t end = rte_get_tsc_cycles() +
		(uint64_t)(t->run->set.timeout * (double)rte_get_tsc_hz());
	struct ibv_ops_wr *bad;
	int ret;

	while ((ret = ibv_post_srq_ops(srq, op, &bad)) == ENOMEM &&
	       rte_get_tsc_cycles() < end && !t->run->abort)
		;
	return -ret;
}

static int
tag_add(struct tag_run *t, uint32_t w, uint64_t tag, size_t len)
{
	struct tag_side *s = &t->rcv;
	struct ibv_sge sge = {
		.addr = (uintptr_t)(s->buf + w * s->slot),
		.length = (uint32_t)len,
		.lkey = s->mr->lkey,
	};
	struct ibv_ops_wr op = {
		.wr_id = w,
		.opcode = IBV_WR_TAG_ADD,
		.tm.add = {
			.recv_wr_id = w,
			.sg_list = &sge,
			.num_sge = 1,
			.tag = tag,
			.mask = UINT64_MAX,
		},
	};

	return tag_post_op(t, s->srq, &op);
}

/* Message w of the sender: headers, a pattern naming w at both ends. */
static int
tag_send(struct tag_run *t, uint32_t w)
{
	struct tag_side *s = &t->snd;
	uint8_t *p = s->buf + w * s->slot;
	uint8_t pat = (uint8_t)(0x40 + w);
	struct ibv_tmh tmh = {
		.opcode = t->rndv ? IBV_TMH_RNDV : IBV_TMH_EAGER,
		.app_ctx = htobe32(w),
		.tag = htobe64(w),
	};
	struct ibv_rvh rvh = {
		.va = htobe64((uintptr_t)p),
		.rkey = htobe32(s->mr->rkey),
		.len = htobe32(t->size),
	};
	struct ibv_sge sge = { .lkey = s->mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = w,
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED,
	};
	struct ibv_send_wr *bad;

	if (!t->rndv) {
		memcpy(p, &tmh, sizeof(tmh));
		p[TMH_SIZE] = p[TMH_SIZE + t->size - 1] = pat;
		sge.addr = (uintptr_t)p;
		sge.length = TMH_SIZE + t->size;
	} else {
		p[0] = p[t->size - 1] = pat;
		memcpy(p + REQ_OFF(s), &tmh, sizeof(tmh));
		memcpy(p + REQ_OFF(s) + TMH_SIZE, &rvh, sizeof(rvh));
		sge.addr = (uintptr_t)(p + REQ_OFF(s));
		sge.length = TMH_SIZE + RVH_SIZE;
		wr.send_flags |= IBV_SEND_INLINE;
	}
	return -ibv_post_send(s->qp, &wr, &bad);
}

/* Credit for slot w, from the receiver to the sender (two processes). */
static int
tag_credit(struct tag_side *s, uint32_t w)
{
	struct ibv_send_wr wr = {
		.wr_id = UINT32_MAX,
		.opcode = IBV_WR_SEND_WITH_IMM,
		.send_flags = IBV_SEND_SIGNALED,
		.imm_data = htobe32(w),
	};
	struct ibv_send_wr *bad;

	return -ibv_post_send(s->qp, &wr, &bad);
}

/* Tags, untagged (and FIN) buffers, then a SYNC: every tag is listed. */
static int
tag_setup(struct tag_run *t)
{
	struct ibv_ops_wr op = {
		.wr_id = UINT32_MAX,
		.opcode = IBV_WR_TAG_SYNC,
		.flags = IBV_OPS_SIGNALED | IBV_OPS_TM_SYNC,
	};
	struct ibv_wc wc;
	uint64_t end;
	int ret = 0;

	for (uint32_t i = 0; i < RTP_TAG_OTHER && ret == 0; i++)
		ret = tag_add(t, 0, (1ull << 40) + i, 0);
	for (uint32_t w = 0; w < t->window && ret == 0; w++) {
		ret = tag_recv(&t->rcv, w, 0, t->rcv.slot);	/* unexpected */
		if (ret == 0)
			ret = tag_add(t, w, w, t->size);
		if (ret == 0 && t->rndv && !t->remote)
			ret = tag_recv(&t->snd, w, FIN_OFF(&t->snd), 32);
	}
	if (ret == 0)
		ret = tag_post_op(t, t->rcv.srq, &op);
	if (ret < 0)
		return ret;
	end = rte_get_tsc_cycles() +
		(uint64_t)(t->run->set.timeout * (double)rte_get_tsc_hz());
	while ((ret = tag_poll(&t->rcv, &wc, NULL)) == 0)
		if (rte_get_tsc_cycles() > end)
			return -ETIMEDOUT;
	return ret < 0 ? ret : wc.opcode == IBV_WC_TM_SYNC ? 0 : -EPROTO;
}

/* n messages (0: until the measured phase's duration), depth in flight. */
static int
tag_phase(struct tag_run *t, bool measure)
{
	struct rtp_run *run = t->run;
	uint64_t n = measure ? run->set.iters : run->set.warmup;
	uint64_t t_stop = 0, posted = 0, done = 0, last;
	uint64_t tmo = (uint64_t)(run->set.timeout * (double)rte_get_tsc_hz());
	uint32_t inflight = 0;
	struct ibv_wc_tm_info tm;
	struct ibv_wc wc;
	int ret;

	if (measure)
		t_stop = rtp_measure_begin(run);
	last = rte_get_tsc_cycles();
	while (!run->abort) {
		bool more = n != 0 ? posted < n :
			measure && rte_get_tsc_cycles() < t_stop;

		if (!more && inflight == 0)
			break;
		while (more && inflight < t->window) {
			uint32_t w = (uint32_t)(posted % t->window);

			t->t_post[w] = rte_get_tsc_cycles();
			ret = tag_send(t, w);
			if (ret < 0)
				return rtp_fail(run, ret, "ibv_post_send");
			posted++;
			inflight++;
			t->snd_out++;
			if (measure)
				run->posted++;
			more = n != 0 ? posted < n :
				rte_get_tsc_cycles() < t_stop;
		}
		while ((ret = tag_poll(&t->snd, &wc, NULL)) > 0) {
			uint32_t w = be32toh(wc.imm_data);

			if (wc.opcode != IBV_WC_RECV) {
				t->snd_out--;
				continue;
			}
			/* a FIN, or (two processes) a credit */
			ret = tag_recv(&t->snd, (uint32_t)wc.wr_id,
				       FIN_OFF(&t->snd), 32);
			if (ret < 0)
				return rtp_fail(run, ret, "sender");
			if (!t->remote || !(wc.wc_flags & IBV_WC_WITH_IMM))
				continue;
			if (w >= t->window || inflight == 0)
				return rtp_fail(run, -EPROTO, "bad credit");
			last = rte_get_tsc_cycles();
			done++;
			inflight--;
			run->cli.done++;
			if (measure)
				rtp_sample(run, rte_get_tsc_cycles() -
					   t->t_post[w]);
		}
		if (ret < 0)
			return rtp_fail(run, ret, "sender completion");
		if (t->remote) {
			if (rte_get_tsc_cycles() - last > tmo)
				return rtp_fail(run, -ETIMEDOUT,
						"no credit from the receiver");
			continue;
		}
		while ((ret = tag_poll(&t->rcv, &wc, &tm)) > 0) {
			uint32_t w = (uint32_t)wc.wr_id;
			uint8_t *p = t->rcv.buf + (size_t)w * t->rcv.slot;

			last = rte_get_tsc_cycles();
			ret = tag_rcv_check(run, t, &wc, &tm, w, p);
			if (ret < 0)
				return ret;
			if (ret > 0)
				continue;
			ret = tag_add(t, w, w, t->size);
			if (ret < 0)
				return rtp_fail(run, ret, "tag ADD");
			done++;
			inflight--;
			run->cli.done++;
			run->received++;	/* warm-up ones too, as a server's */
			if (measure)
				rtp_sample(run, rte_get_tsc_cycles() -
					   t->t_post[w]);
		}
		if (ret < 0)
			return rtp_fail(run, ret, "receiver completion");
		if (rte_get_tsc_cycles() - last > tmo)
			return rtp_fail(run, -ETIMEDOUT, "no completion");
	}
	if (measure)
		rtp_measure_end(run);
	return 0;
}

/*
 * Two processes, the sender: our QP to the server in the hello, its QP
 * back, then a receive per FIN and per credit that can be on the way.
 */
static int
tag_remote_client(struct tag_run *t, size_t slot)
{
	struct rtp_run *run = t->run;
	int ret;

	t->remote = true;
	run->lat_div = 2;
	ret = tag_side_open(&t->snd, 0, slot, false);
	if (ret < 0)
		return rtp_fail(run, ret, "tag set-up");
	tag_ep(&t->snd, &run->cli.local[0]);
	ret = rtp_remote_hello(run);
	if (ret < 0)
		return ret;
	ret = tag_connect_ep(&t->snd, &run->cli.remote[0]);
	for (uint32_t i = 0; i < 2 * t->window && ret == 0; i++)
		ret = tag_recv(&t->snd, i % t->window, FIN_OFF(&t->snd), 32);
	if (ret < 0)
		return rtp_fail(run, ret, "tag set-up");
	ret = tag_phase(t, false);
	if (ret == 0)
		ret = tag_phase(t, true);
	return ret;
}

static int
tag_client(struct rtp_run *run, bool rndv)
{
	struct tag_run *t = calloc(1, sizeof(*t));
	size_t slot;
	int ret;

	if (t == NULL)
		return rtp_fail(run, -ENOMEM, "tag run");
	if (run->set.wait != RTP_WAIT_POLL) {
		free(t);
		return rtp_fail(run, -ENOTSUP, "tag modes poll (set wait poll)");
	}
	t->run = run;
	t->rndv = rndv;
	t->size = run->set.size;
	t->window = RTE_MIN(run->set.depth, (uint32_t)TAG_WINDOW);
	slot = RTE_ALIGN_CEIL((size_t)t->size + TMH_SIZE, 64) + 64;
	if (run->oob >= 0) {
		ret = tag_remote_client(t, slot);
		goto out;
	}
	ret = tag_side_open(&t->rcv, 1, slot, true);
	if (ret == 0)
		ret = tag_side_open(&t->snd, 0, slot, false);
	if (ret == 0)
		ret = tag_connect(&t->rcv, &t->snd);
	if (ret == 0)
		ret = tag_connect(&t->snd, &t->rcv);
	if (ret < 0)
		ret = rtp_fail(run, ret, "tag set-up");
	if (ret == 0 && (ret = tag_setup(t)) < 0)
		ret = rtp_fail(run, ret, "tags and SYNC");
	if (ret == 0)
		ret = tag_phase(t, false);
	if (ret == 0)
		ret = tag_phase(t, true);
out:
	/* the sender's last completions, before tearing down */
	for (uint64_t end = rte_get_tsc_cycles() + rte_get_tsc_hz();
	     t->snd_out > 0 && rte_get_tsc_cycles() < end;) {
		struct ibv_wc wc;

		if (tag_poll(&t->snd, &wc, NULL) != 0 &&
		    wc.opcode != IBV_WC_RECV)
			t->snd_out--;
	}
	tag_side_close(&t->snd);
	tag_side_close(&t->rcv);
	free(t);
	return ret;
}

/*
 * Two processes, the receiver (--server): the TM-SRQ and its tags listed
 * before the server answers the hello, so the first message finds them.
 */
static int
tag_remote_open(struct rtp_run *run, bool rndv)
{
	struct tag_run *t = calloc(1, sizeof(*t));
	int ret;

	if (t == NULL)
		return rtp_fail(run, -ENOMEM, "tag run");
	run->priv = t;
	t->run = run;
	t->rndv = rndv;
	t->remote = true;
	t->size = run->set.size;
	t->window = RTE_MIN(run->set.depth, (uint32_t)TAG_WINDOW);
	if (run->set.wait != RTP_WAIT_POLL)
		return rtp_fail(run, -ENOTSUP, "tag modes poll (set wait poll)");
	ret = tag_side_open(&t->rcv, 0,
			    RTE_ALIGN_CEIL((size_t)t->size + TMH_SIZE, 64) + 64,
			    true);
	if (ret == 0)
		ret = tag_connect_ep(&t->rcv, &run->srv.remote[0]);
	if (ret < 0)
		return rtp_fail(run, ret, "tag set-up");
	ret = tag_setup(t);
	if (ret < 0)
		return rtp_fail(run, ret, "tags and SYNC");
	tag_ep(&t->rcv, &run->srv.local[0]);
	return 0;
}

static int
tag_eager_remote_open(struct rtp_run *run)
{
	return tag_remote_open(run, false);
}

static int
tag_rndv_remote_open(struct rtp_run *run)
{
	return tag_remote_open(run, true);
}

static void
tag_remote_close(struct rtp_run *run)
{
	struct tag_run *t = run->priv;

	if (t == NULL)
		return;
	tag_side_close(&t->rcv);
	free(t);
	run->priv = NULL;
}

/*
 * The receiver's thread: each message matched (data checked), its tag
 * listed again, then its credit to the sender; until the client is done.
 */
static int
tag_server(struct rtp_run *run)
{
	struct tag_run *t = run->priv;
	struct ibv_wc_tm_info tm;
	struct ibv_wc wc;
	int ret = 0;

	while (!run->stop) {
		uint32_t w;
		uint8_t *p;

		ret = tag_poll(&t->rcv, &wc, &tm);
		if (ret == 0)
			continue;
		if (ret < 0)
			break;
		if (wc.opcode == IBV_WC_SEND)	/* a credit went out */
			continue;
		w = (uint32_t)wc.wr_id;
		p = t->rcv.buf + (size_t)w * t->rcv.slot;
		ret = tag_rcv_check(run, t, &wc, &tm, w, p);
		if (ret < 0)
			return ret;
		if (ret > 0)
			continue;
		ret = tag_add(t, w, w, t->size);
		if (ret == 0)
			ret = tag_credit(&t->rcv, w);
		if (ret < 0)
			return rtp_fail(run, ret, "tag ADD and credit");
		run->received++;
	}
	/* an error completion once the client is done is the teardown */
	return ret < 0 && !run->stop ?
		rtp_fail(run, ret, "receiver completion") : 0;
}

static int
tag_eager_client(struct rtp_run *run)
{
	return tag_client(run, false);
}

static int
tag_rndv_client(struct rtp_run *run)
{
	return tag_client(run, true);
}

const struct rtp_mode rtp_mode_tag_eager = {
	.name = "tag_eager",
	.kind = RP_MSG_SEND,
	.help = "tag-matched eager messages on a TM-SRQ, depth in flight",
	.lat_div = 1,
	.own_resources = true,
	.client = tag_eager_client,
	.server = tag_server,
	.remote_open = tag_eager_remote_open,
	.remote_close = tag_remote_close,
};

const struct rtp_mode rtp_mode_tag_rndv = {
	.name = "tag_rndv",
	.kind = RP_MSG_SEND,
	.help = "tag-matched rendezvous (READ + FIN) on a TM-SRQ, depth in flight",
	.lat_div = 1,
	.own_resources = true,
	.client = tag_rndv_client,
	.server = tag_server,
	.remote_open = tag_rndv_remote_open,
	.remote_close = tag_remote_close,
};
