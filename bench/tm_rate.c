/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tm_rate: message rate and bandwidth of tag-matched messages (EAGER and
 * RNDV through a TM-SRQ) against plain RC SENDs, measured in the same run
 * over the same two devices.  A benchmark that prints figures, not a test
 * (bench/tm_rate.sh runs it through rocepmd-run).
 *
 *   tm_rate [-n MSGS] [-w WINDOW] [-s SIZES] [-t TAGS]
 *
 * rocepmd0 is the receiver, rocepmd1 the sender (the configuration of
 * bench/tm_rate.sh: two devices back to back over memif in one process).
 * One thread drives both sides: it keeps WINDOW messages in flight and
 * counts a message done when the receiver's completion for it is polled:
 *
 *   send   plain RC SEND into a posted receive buffer (the baseline)
 *   eager  SEND carrying a 16-byte TMH, matched against TAGS posted tags
 *          (exact tags; the matched one is added again at once)
 *   rndv   SEND carrying TMH + RVH; the receiver's engine READs SIZE bytes
 *          from the sender and answers with a FIN; done at DATA_VALID
 *
 * Every received buffer is checked (first and last byte of the message).
 * Output: one markdown table with msgs/s, MB/s and the ratio to "send".
 */

#include <endian.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <infiniband/tm_types.h>
#include <infiniband/verbs.h>

#define TMH_SIZE	16
#define RVH_SIZE	16
#define MAX_WINDOW	64
#define PORT		1
#define TIMEOUT_S	30.0

enum kind { K_SEND, K_EAGER, K_RNDV, K_MAX };
static const char *const kind_names[K_MAX] = { "send", "eager", "rndv" };

struct side {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq_ex *cqx;
	struct ibv_cq *cq;
	struct ibv_srq *srq;		/* receiver: TM-SRQ, or NULL */
	struct ibv_qp *qp;
	union ibv_gid gid;
	uint8_t *buf;			/* MAX_WINDOW slots of `slot` bytes */
	size_t slot;
	struct ibv_mr *mr;
};

static void
die(const char *what)
{
	fprintf(stderr, "tm_rate: %s: %s\n", what, strerror(errno));
	exit(1);
}

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static struct ibv_context *
open_dev(const char *name)
{
	struct ibv_device **l = ibv_get_device_list(NULL);
	struct ibv_context *ctx = NULL;

	for (int i = 0; l != NULL && l[i] != NULL; i++)
		if (strcmp(ibv_get_device_name(l[i]), name) == 0)
			ctx = ibv_open_device(l[i]);
	if (l != NULL)
		ibv_free_device_list(l);
	if (ctx == NULL)
		die(name);
	return ctx;
}

static void
wait_active(struct ibv_context *ctx)
{
	struct ibv_port_attr pa;
	double t0 = now_s();

	do {
		if (ibv_query_port(ctx, PORT, &pa))
			die("ibv_query_port");
		if (pa.state == IBV_PORT_ACTIVE)
			return;
		if (now_s() - t0 > TIMEOUT_S) {
			errno = ETIMEDOUT;
			die("port not active");
		}
		nanosleep(&(struct timespec){ .tv_nsec = 1000000 }, NULL);
	} while (1);
}

static void
side_open(struct side *s, const char *name, size_t slot, bool tm,
	  uint32_t tags)
{
	struct ibv_cq_init_attr_ex ca = {
		.cqe = 4096,
		.wc_flags = IBV_WC_STANDARD_FLAGS | IBV_WC_EX_WITH_TM_INFO,
	};
	struct ibv_qp_init_attr qa = {
		.qp_type = IBV_QPT_RC,
		.cap = {
			.max_send_wr = MAX_WINDOW * 2,
			.max_recv_wr = MAX_WINDOW * 2,
			.max_send_sge = 1,
			.max_recv_sge = 1,
			.max_inline_data = 64,
		},
	};

	s->ctx = open_dev(name);
	wait_active(s->ctx);
	if (ibv_query_gid(s->ctx, PORT, 0, &s->gid))
		die("ibv_query_gid");
	s->pd = ibv_alloc_pd(s->ctx);
	if (s->pd == NULL)
		die("ibv_alloc_pd");
	s->slot = slot;
	s->buf = aligned_alloc(4096, (slot * MAX_WINDOW + 4095) & ~4095ul);
	if (s->buf == NULL)
		die("aligned_alloc");
	memset(s->buf, 0, slot * MAX_WINDOW);
	s->mr = ibv_reg_mr(s->pd, s->buf, slot * MAX_WINDOW,
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ |
			   IBV_ACCESS_REMOTE_WRITE);
	if (s->mr == NULL)
		die("ibv_reg_mr");
	s->cqx = ibv_create_cq_ex(s->ctx, &ca);
	if (s->cqx == NULL)
		die("ibv_create_cq_ex");
	s->cq = ibv_cq_ex_to_cq(s->cqx);
	if (tm) {
		struct ibv_srq_init_attr_ex sa = {
			.attr = { .max_wr = MAX_WINDOW * 2, .max_sge = 1 },
			.comp_mask = IBV_SRQ_INIT_ATTR_TYPE |
				IBV_SRQ_INIT_ATTR_PD | IBV_SRQ_INIT_ATTR_CQ |
				IBV_SRQ_INIT_ATTR_TM,
			.srq_type = IBV_SRQT_TM,
			.pd = s->pd,
			.cq = s->cq,
			.tm_cap = { .max_num_tags = tags + MAX_WINDOW,
				    .max_ops = 4 * MAX_WINDOW },
		};

		s->srq = ibv_create_srq_ex(s->ctx, &sa);
		if (s->srq == NULL)
			die("ibv_create_srq_ex (TM)");
		qa.srq = s->srq;
		qa.cap.max_send_wr = 0;	/* rendezvous needs no send credits */
	}
	qa.send_cq = s->cq;
	qa.recv_cq = s->cq;
	s->qp = ibv_create_qp(s->pd, &qa);
	if (s->qp == NULL)
		die("ibv_create_qp");
}

static void
side_close(struct side *s)
{
	ibv_destroy_qp(s->qp);
	if (s->srq != NULL)
		ibv_destroy_srq(s->srq);
	ibv_destroy_cq(s->cq);
	ibv_dereg_mr(s->mr);
	free(s->buf);
	ibv_dealloc_pd(s->pd);
	ibv_close_device(s->ctx);
}

static void
connect_qp(struct side *s, const struct side *peer)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT,
		.port_num = PORT,
		.qp_access_flags = IBV_ACCESS_LOCAL_WRITE |
			IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE,
	};

	if (ibv_modify_qp(s->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		die("to INIT");
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = peer->qp->qp_num;
	a.rq_psn = 1;
	a.max_dest_rd_atomic = 16;
	a.min_rnr_timer = 1;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid = peer->gid;
	a.ah_attr.grh.hop_limit = 64;
	a.ah_attr.port_num = PORT;
	if (ibv_modify_qp(s->qp, &a, IBV_QP_STATE | IBV_QP_AV |
			  IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			  IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
		die("to RTR");
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 1;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 16;
	if (ibv_modify_qp(s->qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN |
			  IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			  IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC))
		die("to RTS");
}

/* Poll one completion; false if none. */
static bool
poll_one(struct side *s, struct ibv_wc *wc, struct ibv_wc_tm_info *tm)
{
	struct ibv_poll_cq_attr pa = { 0 };
	int ret = ibv_start_poll(s->cqx, &pa);

	if (ret == ENOENT)
		return false;
	if (ret != 0) {
		errno = ret;
		die("ibv_start_poll");
	}
	wc->wr_id = s->cqx->wr_id;
	wc->status = s->cqx->status;
	wc->opcode = ibv_wc_read_opcode(s->cqx);
	wc->byte_len = ibv_wc_read_byte_len(s->cqx);
	wc->wc_flags = ibv_wc_read_wc_flags(s->cqx);
	if (tm != NULL && s->srq != NULL)
		ibv_wc_read_tm_info(s->cqx, tm);
	ibv_end_poll(s->cqx);
	if (wc->status != IBV_WC_SUCCESS) {
		fprintf(stderr, "tm_rate: completion wr_id %" PRIu64 " status %s\n",
			wc->wr_id, ibv_wc_status_str(wc->status));
		exit(1);
	}
	return true;
}

static void
post_recv(struct side *s, uint32_t w, size_t off, size_t len)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)(s->buf + w * s->slot + off),
		.length = (uint32_t)len,
		.lkey = s->mr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = w, .sg_list = &sge, .num_sge = 1 };
	struct ibv_recv_wr *bad;
	int ret = s->srq != NULL ? ibv_post_srq_recv(s->srq, &wr, &bad) :
		ibv_post_recv(s->qp, &wr, &bad);

	if (ret) {
		errno = ret;
		die("post recv");
	}
}

/* ADD tag `tag` for window slot w (unsignalled: only data completes). */
static void
add_tag(struct side *s, uint32_t w, uint64_t tag, size_t len)
{
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
	struct ibv_ops_wr *bad;
	double t0 = now_s();
	int ret;

	/* ENOMEM: max_ops outstanding; the engine retires them quickly. */
	while ((ret = ibv_post_srq_ops(s->srq, &op, &bad)) == ENOMEM &&
	       now_s() - t0 < TIMEOUT_S)
		;
	if (ret) {
		errno = ret;
		die("ibv_post_srq_ops(ADD)");
	}
}

static void
post_send(struct side *s, uint32_t w, size_t len)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)(s->buf + w * s->slot),
		.length = (uint32_t)len,
		.lkey = s->mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = w,
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED,
	};
	struct ibv_send_wr *bad;

	if (ibv_post_send(s->qp, &wr, &bad))
		die("ibv_post_send");
}

/*
 * Slot layout: the data, then at slot - 64 a rendezvous request (sent
 * inline, so the bytes are copied at post time) and at slot - 32 the
 * buffer its FIN comes back to, so a late FIN never lands on data.
 */
#define REQ_OFF(s)	((s)->slot - 64)
#define FIN_OFF(s)	((s)->slot - 32)

/* Build message w of the sender: headers for `k`, then a pattern. */
static size_t
build_msg(struct side *snd, enum kind k, uint32_t w, uint64_t tag,
	  size_t size)
{
	uint8_t *p = snd->buf + w * snd->slot;
	uint8_t pat = (uint8_t)(0x40 + w);
	struct ibv_tmh tmh = {
		.opcode = k == K_RNDV ? IBV_TMH_RNDV : IBV_TMH_EAGER,
		.app_ctx = htobe32(w),
		.tag = htobe64(tag),
	};
	struct ibv_rvh rvh = {
		.va = htobe64((uintptr_t)p),
		.rkey = htobe32(snd->mr->rkey),
		.len = htobe32((uint32_t)size),
	};

	/* A pattern naming the slot at both ends of the data: a mix-up or
	 * a short placement shows. */
	if (k == K_EAGER) {
		memcpy(p, &tmh, sizeof(tmh));
		p[TMH_SIZE] = p[TMH_SIZE + size - 1] = pat;
		return TMH_SIZE + size;
	}
	p[0] = p[size - 1] = pat;
	if (k == K_SEND)
		return size;
	memcpy(p + REQ_OFF(snd), &tmh, sizeof(tmh));
	memcpy(p + REQ_OFF(snd) + TMH_SIZE, &rvh, sizeof(rvh));
	return TMH_SIZE + RVH_SIZE;
}

static void
send_msg(struct side *snd, enum kind k, uint32_t w, size_t len)
{
	if (k != K_RNDV) {
		post_send(snd, w, len);
		return;
	}
	{
		struct ibv_sge sge = {
			.addr = (uintptr_t)(snd->buf + w * snd->slot +
					    REQ_OFF(snd)),
			.length = (uint32_t)len,
			.lkey = snd->mr->lkey,
		};
		struct ibv_send_wr wr = {
			.wr_id = w,
			.sg_list = &sge,
			.num_sge = 1,
			.opcode = IBV_WR_SEND,
			.send_flags = IBV_SEND_SIGNALED | IBV_SEND_INLINE,
		};
		struct ibv_send_wr *bad;

		if (ibv_post_send(snd->qp, &wr, &bad))
			die("ibv_post_send(RNDV)");
	}
}

struct result {
	double msgs_s;
	double mb_s;
};

static void
check_data(const struct side *rcv, uint32_t w, size_t size)
{
	const uint8_t *p = rcv->buf + w * rcv->slot;

	if (p[0] != (uint8_t)(0x40 + w) || p[size - 1] != (uint8_t)(0x40 + w)) {
		fprintf(stderr, "tm_rate: slot %u: data mismatch (%02x %02x)\n",
			w, p[0], p[size - 1]);
		exit(1);
	}
}

static struct result
run(enum kind k, size_t size, uint32_t n, uint32_t window, uint32_t tags)
{
	size_t slot = ((size + TMH_SIZE + 63) & ~(size_t)63) + 64;
	struct side rcv = { 0 }, snd = { 0 };
	uint32_t posted = 0, done = 0, inflight = 0;
	uint32_t snd_out = 0;
	struct ibv_wc wc;
	struct ibv_wc_tm_info tm;
	double t0, t1, last;
	struct result r;

	side_open(&rcv, "rocepmd0", slot, k != K_SEND, tags);
	side_open(&snd, "rocepmd1", slot, false, 0);
	connect_qp(&rcv, &snd);
	connect_qp(&snd, &rcv);

	/* Tags nobody sends to: the list a real MPI receiver keeps. */
	if (k != K_SEND) {
		for (uint32_t i = 0; i < tags; i++)
			add_tag(&rcv, 0, (1ull << 40) + i, 0);
		/* Untagged buffers (unexpected messages), and FIN buffers. */
		for (uint32_t w = 0; w < window; w++)
			post_recv(&rcv, w, 0, slot);
	}
	for (uint32_t w = 0; w < window; w++) {
		if (k == K_SEND)
			post_recv(&rcv, w, 0, slot);
		else
			add_tag(&rcv, w, w, size);
		if (k == K_RNDV)
			post_recv(&snd, w, FIN_OFF(&snd), 32);	/* its FIN */
	}

	/*
	 * A signalled SYNC after the ADDs: list operations execute in
	 * order, so once it completes every tag is listed and no message
	 * of the run can arrive before its tag.
	 */
	if (k != K_SEND) {
		struct ibv_ops_wr op = {
			.wr_id = UINT32_MAX,
			.opcode = IBV_WR_TAG_SYNC,
			.flags = IBV_OPS_SIGNALED | IBV_OPS_TM_SYNC,
		};
		struct ibv_ops_wr *bad;
		double ts = now_s();

		if (ibv_post_srq_ops(rcv.srq, &op, &bad))
			die("ibv_post_srq_ops(SYNC)");
		while (!poll_one(&rcv, &wc, &tm))
			if (now_s() - ts > TIMEOUT_S) {
				errno = ETIMEDOUT;
				die("SYNC completion");
			}
		if (wc.opcode != IBV_WC_TM_SYNC) {
			fprintf(stderr, "tm_rate: expected TM_SYNC, got %d\n",
				wc.opcode);
			exit(1);
		}
	}
	t0 = last = now_s();
	while (done < n) {
		while (inflight < window && posted < n) {
			uint32_t w = posted % window;

			send_msg(&snd, k, w, build_msg(&snd, k, w, w, size));
			posted++;
			inflight++;
			snd_out++;
		}
		while (poll_one(&snd, &wc, NULL)) {
			if (wc.opcode == IBV_WC_RECV)	/* a FIN */
				post_recv(&snd, (uint32_t)wc.wr_id, FIN_OFF(&snd), 32);
			else
				snd_out--;
			last = now_s();
		}
		while (poll_one(&rcv, &wc, &tm)) {
			uint32_t w = (uint32_t)wc.wr_id;

			last = now_s();
			if (k == K_SEND ? wc.opcode != IBV_WC_RECV :
			    wc.opcode != IBV_WC_TM_RECV ||
			    !(wc.wc_flags & (IBV_WC_TM_MATCH |
					     IBV_WC_TM_DATA_VALID))) {
				fprintf(stderr, "tm_rate: %s: unexpected completion (opcode %d flags 0x%x)\n",
					kind_names[k], wc.opcode, wc.wc_flags);
				exit(1);
			}
			/* A MATCH names the tag (a DATA_VALID alone does not). */
			if (k != K_SEND && (wc.wc_flags & IBV_WC_TM_MATCH) &&
			    tm.tag != w) {
				fprintf(stderr, "tm_rate: tag %" PRIu64 " for slot %u\n",
					(uint64_t)tm.tag, w);
				exit(1);
			}
			/* The MATCH of a rendezvous: DATA_VALID follows. */
			if (k != K_SEND && !(wc.wc_flags & IBV_WC_TM_DATA_VALID))
				continue;
			check_data(&rcv, w, size);
			memset(rcv.buf + w * rcv.slot, 0, size);
			if (k == K_SEND)
				post_recv(&rcv, w, 0, slot);
			else
				add_tag(&rcv, w, w, size);
			done++;
			inflight--;
		}
		if (now_s() - last > TIMEOUT_S) {
			fprintf(stderr, "tm_rate: %s %zu B: stuck at %u of %u\n",
				kind_names[k], size, done, n);
			exit(1);
		}
	}
	t1 = now_s();
	/* Let the sender's completions drain before tearing down. */
	while (snd_out > 0 && now_s() - t1 < TIMEOUT_S)
		while (poll_one(&snd, &wc, NULL))
			if (wc.opcode != IBV_WC_RECV)
				snd_out--;
	side_close(&snd);
	side_close(&rcv);
	r.msgs_s = n / (t1 - t0);
	r.mb_s = r.msgs_s * (double)size / 1e6;
	return r;
}

int
main(int argc, char **argv)
{
	uint32_t n = 20000, window = 16, tags = 1024;
	char sizes_buf[256] = "64,1024,4096,16384";
	char *sizes = sizes_buf, *tok;
	int c;

	while ((c = getopt(argc, argv, "n:w:s:t:")) != -1) {
		switch (c) {
		case 'n':
			n = (uint32_t)strtoul(optarg, NULL, 0);
			break;
		case 'w':
			window = (uint32_t)strtoul(optarg, NULL, 0);
			break;
		case 's':
			snprintf(sizes_buf, sizeof(sizes_buf), "%s", optarg);
			break;
		case 't':
			tags = (uint32_t)strtoul(optarg, NULL, 0);
			break;
		default:
			fprintf(stderr, "usage: tm_rate [-n MSGS] [-w WINDOW] [-s SIZES] [-t TAGS]\n");
			return 2;
		}
	}
	if (window == 0 || window > MAX_WINDOW || n == 0) {
		fprintf(stderr, "tm_rate: window 1..%d, n > 0\n", MAX_WINDOW);
		return 2;
	}
	printf("| size B | kind | msgs/s | MB/s | vs send |\n");
	printf("|---|---|---|---|---|\n");
	for (tok = strtok(sizes, ","); tok != NULL; tok = strtok(NULL, ",")) {
		size_t size = strtoul(tok, NULL, 0);
		struct result base;

		if (size < 2 || size > (1u << 20)) {
			fprintf(stderr, "tm_rate: size %zu out of 2..1 MiB\n", size);
			return 2;
		}
		base = run(K_SEND, size, n, window, tags);
		for (int k = 0; k < K_MAX; k++) {
			struct result r = k == K_SEND ? base :
				run((enum kind)k, size, n, window, tags);

			printf("| %zu | %s | %.0f | %.1f | %.2f |\n", size,
			       kind_names[k], r.msgs_s, r.mb_s,
			       r.msgs_s / base.msgs_s);
			fflush(stdout);
		}
	}
	return 0;
}
