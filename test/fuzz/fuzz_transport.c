/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Transport fuzz target: arbitrary frames into a device with live QPs.
 *
 * One rocepmd device on a ring port (rte_eth_from_rings): the target puts
 * frames on its RX ring and takes what it sends from its TX ring.  There
 * is no engine lcore: the target is the lcore, calls rp_dev_poll() once
 * per record and runs control operations through the device's control
 * slots itself (rp_ctrl_poll), and the engine's clock is the target's
 * (fuzz_clock.h), so an input gives the same run every time.
 *
 * Each input builds its objects afresh (fuzz_transport.h gives the
 * format): RC requester with SENDs, WRITEs, READs and atomics
 * outstanding, RC responder with receives, RC on an SRQ, RC on a TM-SRQ
 * with tags listed, UC, UD, the GSI QP, and one RC QP in a state the input
 * picks; the frames come from the QPs' peer unless a record says
 * otherwise.  After every record:
 *  - every new CQE names a work request that was posted, on its QP, and
 *    completes it at most once (a tagged receive: at most twice, MATCH
 *    then data); a successful receive is no longer than its buffer
 *    (a WRITE with immediate says the WRITE's length: not checked);
 *  - memory outside registered MRs (guards around each buffer, poisoned
 *    under ASan), MRs no QP may write (remote read only, another PD, a
 *    deregistered key) and MRs deregistered by the input are unchanged;
 *  - every RoCE frame the engine sends parses, ICRC included;
 *  - a frame from a host that is not the QP's peer changes nothing: no
 *    CQE, no QP state (RC and UC take packets from their peer only;
 *    RP_FUZZ_STRICT_SOURCE=0 turns this check off);
 * any violation aborts; out-of-bounds accesses are the sanitizers'.
 *
 * Environment: RP_FUZZ_LOG=1 keeps the engine's log (else critical only),
 * RP_FUZZ_TX_PCAP=FILE writes every frame the engine sends to a pcap (the
 * project's own traffic for test/fuzz/mkcorpus.py).
 */

#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_eth_ring.h>
#include <rte_ethdev.h>
#include <rte_log.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

#include <infiniband/tm_types.h>
#include <infiniband/verbs.h>

#include "rp_atomic.h"
#include "rp_icrc.h"
#include "rp_engine.h"
#include "rp_pkt.h"

#include "fuzz_transport.h"

#if defined(__SANITIZE_ADDRESS__)
#define FZ_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define FZ_ASAN 1
#endif
#endif
#ifdef FZ_ASAN
#include <sanitizer/asan_interface.h>
#define FZ_POISON(p, n)		ASAN_POISON_MEMORY_REGION(p, n)
#define FZ_UNPOISON(p, n)	ASAN_UNPOISON_MEMORY_REGION(p, n)
#else
#define FZ_POISON(p, n)		do { } while (0)
#define FZ_UNPOISON(p, n)	do { } while (0)
#endif

/* rte_eth_from_rings() names the port net_ring_ and its argument */
#define FZ_PORT		"net_ring_fuzz"
#define FZ_NSLOT	8
#define FZ_NMR		4
#define FZ_MR_LEN	8192u
#define FZ_GUARD	256u
#define FZ_GUARD_BYTE	0xa5
#define FZ_MR_STRIDE	(FZ_MR_LEN + 2 * FZ_GUARD)
#define FZ_MAX_WR	512u		/* tracked work requests per input */
#define FZ_WR_MAGIC	0xf022u		/* wr_id >> 48 of ours */
#define FZ_FRAME_MAX	(9216u + 64u)
#define FZ_QKEY		0x11111111u
#define FZ_GSI_QKEY	0x80010000u
#define FZ_PEER_QPN	0x200u		/* + slot */
#define FZ_SPSN		0x10u
#define FZ_RPSN		0x20u
#define FZ_MAX_RECORDS	256u

/* Slots: which QP a record names. */
enum {
	FZ_RC_REQ = 0, FZ_RC_RESP, FZ_RC_SRQ, FZ_RC_TM, FZ_UC, FZ_UD, FZ_GSI,
	FZ_RC_ANY,
};

static const uint8_t fz_states[8] = {
	IBV_QPS_RTS, IBV_QPS_RTS, IBV_QPS_RTR, IBV_QPS_SQD, IBV_QPS_ERR,
	IBV_QPS_INIT, IBV_QPS_RESET, IBV_QPS_SQE,
};

static const uint8_t fz_mac_dev[6] = { 2, 0, 0, 0, 0, 1 };
static const uint8_t fz_mac_peer[6] = { 2, 0, 0, 0, 0, 2 };
static const uint8_t fz_mac_foreign[6] = { 2, 0, 0, 0, 0, 0x77 };
#define FZ_IP_DEV	0xc0000201u	/* 192.0.2.1 */
#define FZ_IP_PEER	0xc0000202u	/* 192.0.2.2 */
#define FZ_IP_FOREIGN	0xc000024du	/* 192.0.2.77 */

struct fz_wq {
	struct rp_wq_hdr *hdr;
	uint8_t *ent;
	uint32_t size, stride, prod;
	uint64_t *bell;			/* a QP's doorbell word, or NULL */
	uint64_t bell_bit;
};

/* A QP whose completions are counted (fz_pass_foreign). */
static struct {
	uint32_t qpn;
	uint32_t cqes;
} fz_watch;

struct fz_cq {
	bool live;
	uint32_t cqn, size, seen;
	struct rp_cq_ctl *ctl;
	struct rp_cqe *ring;
};

struct fz_qp {
	bool live;
	uint32_t qpn, type, state, mtu;
	uint32_t sq_psn, rq_psn, qkey;
	struct fz_wq sq, rq;
};

/* A work request the input posted: what may complete it. */
struct fz_wr {
	uint8_t kind;			/* enum fz_wr_kind */
	uint8_t done;			/* CQEs seen */
	uint32_t qpn;			/* sends: the QP; 0: any */
	uint32_t cap;			/* receives: buffer bytes */
};

enum fz_wr_kind { FZ_W_NONE = 0, FZ_W_SEND, FZ_W_RECV, FZ_W_TAG, FZ_W_OP };

struct fz_mr {
	uint32_t key;
	uint64_t iova;
	uint8_t *buf;			/* FZ_MR_LEN between two guards */
	uint8_t *ref;			/* what buf must hold when frozen */
	bool frozen;			/* no byte may change */
	bool valid;
};

static struct {
	bool ready;
	struct rp_dev *dev;
	uint16_t port;
	struct rte_ring *rx, *tx;
	struct rte_mempool *mp;
	uint32_t pdn, pdn2, ahn;
	uint8_t *mem;			/* FZ_NMR + 1 buffers with guards */
	struct fz_mr mr[FZ_NMR + 1];	/* [FZ_NMR]: under the stale key */
	uint32_t stale_key, old_key1;
	struct fz_cq scq, rcq, tcq;
	uint32_t srqn, tsrqn;
	struct fz_wq srq, tsrq, tops;	/* SRQ, TM-SRQ (unexpected), ops */
	uint32_t tops_max, ntags;
	uint32_t tag_handle[64];
	struct fz_qp qp[FZ_NSLOT];
	struct fz_wr wr[FZ_MAX_WR];
	uint32_t nwr;
	uint8_t hdr[FZ_HDR_LEN];
	uint64_t clock;
	bool strict_source;
	FILE *pcap;
} fz;

struct fz_stats fz_stats;

uint64_t
fz_clock_cycles(void)
{
	return fz.clock;
}

static void
fz_fail(const char *what)
{
	fprintf(stderr, "fuzz_transport: invariant violated: %s\n", what);
	abort();
}

/* ------------------------------------------------------------ control */

/* A control operation, run here as the lcore would run it. */
static int
fz_ctrl(uint32_t op, void *u, size_t len)
{
	struct rp_ctrl_slot *s = &fz.dev->ctrl_slot[0];
	int ret;

	s->op = op;
	memset(&s->u, 0, sizeof(s->u));
	memcpy(&s->u, u, len);
	rp_store_release(&s->state, RP_SLOT_POSTED);
	if (rte_ring_mp_enqueue(fz.dev->ctrl_ring, (void *)(uintptr_t)0) != 0)
		fz_fail("control ring full");
	rp_ctrl_poll(fz.dev);
	if (rp_load_acquire(&s->state) != RP_SLOT_DONE)
		fz_fail("control slot not done");
	memcpy(u, &s->u, len);
	ret = s->result;
	rp_store_release(&s->state, RP_SLOT_FREE);
	return ret;
}

/* The engine's own objects are in its arena 0, not the device region. */
static void *
fz_region(uint64_t off)
{
	return fz.dev->arena[0].base + off;
}

static void
fz_wq_map(struct fz_wq *wq, uint64_t off, uint32_t size, uint32_t stride)
{
	wq->hdr = fz_region(off);
	wq->ent = (uint8_t *)wq->hdr + RP_WQ_HDR_SIZE;
	wq->size = size;
	wq->stride = stride;
	wq->prod = 0;
}

static void *
fz_wq_slot(struct fz_wq *wq)
{
	return wq->ent + (size_t)(wq->prod & (wq->size - 1)) * wq->stride;
}

static void
fz_wq_publish(struct fz_wq *wq)
{
	wq->prod++;
	rp_store_release(&wq->hdr->prod, wq->prod);
	if (wq->bell != NULL)
		__atomic_fetch_or(wq->bell, wq->bell_bit, __ATOMIC_RELEASE);
}

static uint64_t
fz_wr_new(uint8_t kind, uint32_t qpn, uint32_t cap)
{
	uint32_t seq = fz.nwr;

	if (seq == FZ_MAX_WR)
		return 0;
	fz.nwr++;
	fz.wr[seq] = (struct fz_wr){ .kind = kind, .qpn = qpn, .cap = cap };
	return (uint64_t)FZ_WR_MAGIC << 48 | seq;
}

/* ------------------------------------------------------------ objects */

static int
fz_cq_create(struct fz_cq *cq, uint32_t cqe)
{
	struct rp_ctrl_cq c = { .cqe = cqe, .chan = -1 };
	int ret = fz_ctrl(RP_CTRL_CQ_CREATE, &c, sizeof(c));

	if (ret < 0)
		return ret;
	cq->live = true;
	cq->cqn = c.cqn;
	cq->size = c.size;
	cq->seen = 0;
	cq->ctl = fz_region(c.off);
	cq->ring = (struct rp_cqe *)((uint8_t *)cq->ctl + RP_CQ_HDR_SIZE);
	return 0;
}

static void
fz_av(struct rp_av *av)
{
	const uint32_t ip = rte_cpu_to_be_32(FZ_IP_PEER);

	memset(av, 0, sizeof(*av));
	av->dgid[10] = 0xff;
	av->dgid[11] = 0xff;
	memcpy(&av->dgid[12], &ip, 4);
	av->is_global = 1;
	av->hop_limit = 64;
	av->port_num = 1;
}

/* One verbs transition of a slot's QP; the attributes each needs. */
static int
fz_modify_one(unsigned int slot, uint32_t next)
{
	struct fz_qp *q = &fz.qp[slot];
	struct rp_ctrl_qp m = { .qpn = q->qpn };
	struct rp_qp_attr *a = &m.attr;
	const bool rc = q->type == IBV_QPT_RC, ud = q->type == IBV_QPT_UD;
	int ret;

	a->attr_mask = IBV_QP_STATE;
	a->qp_state = next;
	if (next == IBV_QPS_INIT && q->state == IBV_QPS_RESET) {
		a->attr_mask |= IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			(ud ? IBV_QP_QKEY : IBV_QP_ACCESS_FLAGS);
		a->port_num = 1;
		a->qkey = q->qkey;
		a->qp_access_flags = IBV_ACCESS_REMOTE_WRITE |
			IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
	} else if (next == IBV_QPS_RTR && !ud) {
		a->attr_mask |= IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			IBV_QP_RQ_PSN;
		fz_av(&a->av);
		a->path_mtu = q->mtu == 256 ? IBV_MTU_256 : IBV_MTU_1024;
		a->dest_qp_num = FZ_PEER_QPN + slot;
		a->rq_psn = q->rq_psn;
		if (rc) {
			a->attr_mask |= IBV_QP_MAX_DEST_RD_ATOMIC |
				IBV_QP_MIN_RNR_TIMER;
			a->max_dest_rd_atomic = RTE_MAX(fz.hdr[6] & 7, 1);
			a->min_rnr_timer = fz.hdr[7] & 31;
		}
	} else if (next == IBV_QPS_RTS && q->state == IBV_QPS_RTR) {
		a->attr_mask |= IBV_QP_SQ_PSN;
		a->sq_psn = q->sq_psn;
		if (rc) {
			a->attr_mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
				IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC;
			a->timeout = (fz.hdr[0] & FZ_S_TIMEOUT) ? 1 : 14;
			a->retry_cnt = (fz.hdr[0] & FZ_S_TIMEOUT) ? 1 : 7;
			a->rnr_retry = fz.hdr[7] >> 5;
			a->max_rd_atomic = RTE_MAX(fz.hdr[6] & 7, 1);
		}
	}
	ret = fz_ctrl(RP_CTRL_QP_MODIFY, &m, sizeof(m));
	if (ret == 0)
		q->state = next;
	return ret;
}

/* To `state`, through RESET, INIT, RTR, RTS when it is further on. */
static void
fz_modify(unsigned int slot, uint32_t state)
{
	static const uint32_t chain[] = {
		IBV_QPS_RESET, IBV_QPS_INIT, IBV_QPS_RTR, IBV_QPS_RTS,
	};
	struct fz_qp *q = &fz.qp[slot];
	struct rp_qp *eq = rp_qp_get(fz.dev, q->qpn);

	if (!q->live || eq == NULL)
		return;
	q->state = eq->state;	/* the engine may have moved it (ERR) */
	if (state <= IBV_QPS_RTS && q->state < state) {
		for (unsigned int i = 1; i < RTE_DIM(chain); i++)
			if (chain[i] > q->state && chain[i] <= state &&
			    fz_modify_one(slot, chain[i]) != 0)
				return;
		return;
	}
	fz_modify_one(slot, state);
}

static int
fz_qp_create(unsigned int slot, uint32_t type, int32_t srqn, uint32_t rcqn,
	     uint32_t flags)
{
	struct fz_qp *q = &fz.qp[slot];
	struct rp_ctrl_qp_create c = {
		.pdn = fz.pdn, .qp_type = type, .send_cqn = fz.scq.cqn,
		.recv_cqn = rcqn, .srqn = srqn, .flags = flags,
		.caps = { .max_send_wr = 16, .max_recv_wr = 16,
			  .max_send_sge = 2, .max_recv_sge = 2,
			  .max_inline_data = 64 },
	};
	int ret = fz_ctrl(RP_CTRL_QP_CREATE, &c, sizeof(c));

	memset(q, 0, sizeof(*q));
	if (ret < 0)
		return ret;
	q->live = true;
	q->qpn = c.qpn;
	q->type = type;
	q->state = IBV_QPS_RESET;
	q->mtu = slot == FZ_RC_REQ && (fz.hdr[0] & FZ_S_MTU256) ? 256 : 1024;
	q->sq_psn = slot == FZ_RC_REQ && (fz.hdr[0] & FZ_S_SPSN_WRAP) ?
		0xfffffa : FZ_SPSN + slot;
	q->rq_psn = (fz.hdr[0] & FZ_S_RPSN_WRAP) ? 0xfffffc : FZ_RPSN + slot;
	q->qkey = flags & RP_QP_F_GSI ? FZ_GSI_QKEY : FZ_QKEY;
	fz_wq_map(&q->sq, c.sq_off, c.sq_size, c.sq_stride);
	fz_wq_map(&q->rq, c.rq_off, c.rq_size, c.rq_stride);
	q->sq.bell = q->rq.bell = fz_region(c.bell_off);
	q->sq.bell_bit = q->rq.bell_bit = c.bell_bit;
	return 0;
}

static void
fz_qp_destroy(unsigned int slot)
{
	struct fz_qp *q = &fz.qp[slot];
	struct rp_ctrl_qp m = { .qpn = q->qpn };

	if (!q->live)
		return;
	if (fz_ctrl(RP_CTRL_QP_DESTROY, &m, sizeof(m)) != 0)
		fz_fail("QP destroy refused");
	q->live = false;
}

/* ---------------------------------------------------------------- posts */

/* A send WR of kind k (0..7) on a slot, whatever its type and state. */
static void
fz_post_send(unsigned int slot, unsigned int k)
{
	static const struct { uint8_t op; uint32_t len, off; } kinds[8] = {
		{ IBV_WR_SEND, 1500, 0 },
		{ IBV_WR_SEND_WITH_IMM, 8, 100 },
		{ IBV_WR_RDMA_WRITE, 2000, 0 },
		{ IBV_WR_RDMA_WRITE_WITH_IMM, 0, 0 },
		{ IBV_WR_RDMA_READ, 2500, 4096 },
		{ IBV_WR_ATOMIC_CMP_AND_SWP, 8, 8000 },
		{ IBV_WR_ATOMIC_FETCH_AND_ADD, 8, 8008 },
		{ IBV_WR_SEND_WITH_INV, 64, 200 },
	};
	struct fz_qp *q = &fz.qp[slot];
	struct rp_send_wqe *w;
	struct rp_sge *sge;

	k &= 7;
	if (!q->live || q->sq.prod - rp_load_acquire(&q->sq.hdr->cons) >=
	    q->sq.size)
		return;
	w = fz_wq_slot(&q->sq);
	memset(w, 0, sizeof(*w));
	w->wr_id = fz_wr_new(FZ_W_SEND, q->qpn, 0);
	w->opcode = kinds[k].op;
	w->flags = (fz.hdr[0] & FZ_S_UNSIG) && slot == FZ_RC_REQ && k != 4 ?
		0 : RP_WQE_SIGNALED;
	w->num_sge = kinds[k].len != 0;
	w->imm_data = rte_cpu_to_be_32(0x1000 + k);
	w->length = kinds[k].len;
	w->remote_addr = 0x7f0000001000ull + k * 0x10000;
	w->rkey = 0x1234;
	w->compare_add = 5;
	w->swap = 7;
	if (q->type == IBV_QPT_UD) {
		w->ah = fz.ahn;
		w->remote_qpn = slot == FZ_GSI ? 1 : FZ_PEER_QPN + slot;
		w->remote_qkey = q->qkey;
	}
	sge = (struct rp_sge *)(w + 1);
	sge->addr = fz.mr[0].iova + kinds[k].off;
	sge->length = kinds[k].len;
	sge->lkey = fz.mr[0].key;
	fz_wq_publish(&q->sq);
}

static void
fz_post_recv_on(struct fz_wq *wq, uint32_t qpn, unsigned int i)
{
	/* Some short, most one MTU or more, in MR 0 (local write). */
	const uint32_t len = i % 3 == 2 ? 64 : 2048;
	struct rp_recv_wqe *w;
	struct rp_sge *sge;

	if (wq->prod - rp_load_acquire(&wq->hdr->cons) >= wq->size)
		return;
	w = fz_wq_slot(wq);
	w->wr_id = fz_wr_new(FZ_W_RECV, qpn, len);
	w->num_sge = 1;
	w->rsvd = 0;
	sge = (struct rp_sge *)(w + 1);
	sge->addr = fz.mr[0].iova + (i % 4) * 2048;
	sge->length = len;
	sge->lkey = fz.mr[0].key;
	fz_wq_publish(wq);
}

static void
fz_post_recvs(unsigned int slot, unsigned int n)
{
	struct fz_qp *q = &fz.qp[slot];

	if (!q->live)
		return;
	for (unsigned int i = 0; i < n; i++) {
		if (slot == FZ_RC_SRQ)
			fz_post_recv_on(&fz.srq, 0, i);
		else if (slot == FZ_RC_TM)
			fz_post_recv_on(&fz.tsrq, 0, i);
		else
			fz_post_recv_on(&q->rq, q->qpn, i);
	}
}

static void
fz_tag_op(uint8_t opcode, uint32_t tag_idx, uint64_t tag)
{
	struct rp_tm_op *o;

	if (fz.tops.hdr == NULL ||
	    fz.tops.prod - rp_load_acquire(&fz.tops.hdr->cons) >= fz.tops_max)
		return;
	o = fz_wq_slot(&fz.tops);
	memset(o, 0, sizeof(*o));
	o->wr_id = fz_wr_new(FZ_W_OP, 0, 0);
	o->opcode = opcode;
	o->flags = IBV_OPS_SIGNALED;
	if (opcode == IBV_WR_TAG_ADD) {
		if (fz.ntags == RTE_DIM(fz.tag_handle))
			return;
		o->handle = fz.ntags | 1u << 16;
		fz.tag_handle[fz.ntags++] = o->handle;
		o->recv_wr_id = fz_wr_new(FZ_W_TAG, 0, 1024);
		o->tag = tag;
		o->mask = ~0ull;
		o->num_sge = 1;
		o->sge.addr = fz.mr[0].iova + 4096 + (tag_idx % 4) * 1024;
		o->sge.length = 1024;
		o->sge.lkey = fz.mr[0].key;
	} else {
		o->handle = fz.ntags ? fz.tag_handle[tag_idx % fz.ntags] : 0;
	}
	fz_wq_publish(&fz.tops);
}

/* ----------------------------------------------------------- memory */

static uint8_t
fz_pattern(unsigned int mr, uint32_t i)
{
	return (uint8_t)(i * 13u + mr * 61u + 1u);
}

static void
fz_mem_reset(void)
{
	for (unsigned int m = 0; m <= FZ_NMR; m++) {
		struct fz_mr *r = &fz.mr[m];

		for (uint32_t i = 0; i < FZ_MR_LEN; i++)
			r->buf[i] = fz_pattern(m, i);
		memcpy(r->ref, r->buf, FZ_MR_LEN);
		r->frozen = m >= 2;	/* read-only, other PD, stale key */
	}
}

static uint32_t
fz_mr_reg(unsigned int m, uint32_t pdn, uint32_t access)
{
	struct rp_ctrl_mr c = {
		.pdn = pdn, .access = access,
		.addr = (uintptr_t)fz.mr[m].buf, .length = FZ_MR_LEN,
		.iova = fz.mr[m].iova,
	};

	if (fz_ctrl(RP_CTRL_MR_REG, &c, sizeof(c)) != 0)
		fz_fail("MR registration refused");
	return c.lkey;
}

static void
fz_mr_dereg(uint32_t key)
{
	struct rp_ctrl_mr c = { .lkey = key };

	fz_ctrl(RP_CTRL_MR_DEREG, &c, sizeof(c));
}

/* ------------------------------------------------------------ checks */

static void
fz_check_cq(struct fz_cq *cq)
{
	if (!cq->live)
		return;
	for (;;) {
		const struct rp_cqe *e = &cq->ring[cq->seen & (cq->size - 1)];
		uint32_t lap = cq->seen / cq->size + 1;
		struct fz_wr *w;
		uint64_t seq;

		if (rp_load_acquire(&e->owner) != lap)
			break;
		cq->seen++;
		fz_stats.cqes++;
		if (fz_watch.qpn != 0 && e->qp_num == fz_watch.qpn)
			fz_watch.cqes++;
		if (e->status != IBV_WC_SUCCESS)
			fz_stats.cqe_err++;
		if (e->wr_id >> 48 != FZ_WR_MAGIC)
			fz_fail("CQE for a work request never posted");
		seq = e->wr_id & 0xffffffffffffull;
		if (seq >= fz.nwr)
			fz_fail("CQE for a work request never posted");
		w = &fz.wr[seq];
		if (++w->done > (w->kind == FZ_W_TAG ? 2 : 1))
			fz_fail("work request completed twice");
		if (w->kind == FZ_W_SEND && e->qp_num != w->qpn)
			fz_fail("send CQE on another QP");
		if (w->kind == FZ_W_RECV && w->qpn != 0 && e->qp_num != w->qpn)
			fz_fail("receive CQE on another QP");
		if (e->status == IBV_WC_SUCCESS &&
		    (w->kind == FZ_W_RECV || w->kind == FZ_W_TAG) &&
		    (e->opcode == IBV_WC_RECV || e->opcode == IBV_WC_TM_RECV) &&
		    e->byte_len > w->cap && !(e->wc_flags & IBV_WC_TM_MATCH)) {
			fprintf(stderr, "CQE opcode %u byte_len %u QP 0x%x, "
				"buffer %u\n", e->opcode, e->byte_len,
				e->qp_num, w->cap);
			fz_fail("receive longer than its buffer");
		}
	}
	if (fz.hdr[0] & FZ_S_CONSUME)
		rp_store_release(&cq->ctl->cons, cq->seen);
}

static void
fz_check_mem(void)
{
	for (unsigned int m = 0; m <= FZ_NMR; m++) {
		const struct fz_mr *r = &fz.mr[m];

#ifndef FZ_ASAN
		/* Under ASan the guards are poisoned: a write traps. */
		for (uint32_t i = 0; i < FZ_GUARD; i++)
			if (r->buf[-(int32_t)FZ_GUARD + (int32_t)i] !=
			    FZ_GUARD_BYTE || r->buf[FZ_MR_LEN + i] !=
			    FZ_GUARD_BYTE)
				fz_fail("write outside registered memory");
#endif
		if (r->frozen && memcmp(r->buf, r->ref, FZ_MR_LEN) != 0)
			fz_fail("write into memory not registered for it");
	}
}

static void
fz_pcap_write(const uint8_t *d, uint32_t len)
{
	struct { uint32_t s, us, incl, orig; } h = { 0, 0, len, len };

	fwrite(&h, sizeof(h), 1, fz.pcap);
	fwrite(d, len, 1, fz.pcap);
}

/* What the engine sent: well formed, and to the peer only. */
static void
fz_drain_tx(void)
{
	struct rte_mbuf *m;

	while (rte_ring_sc_dequeue(fz.tx, (void **)&m) == 0) {
		const uint8_t *d = rte_pktmbuf_mtod(m, const uint8_t *);
		uint32_t len = rte_pktmbuf_data_len(m);
		struct rp_pkt p;
		int ret;

		fz_stats.tx_frames++;
		if (m->nb_segs != 1)
			fz_fail("segmented frame sent");
		if (fz.pcap != NULL)
			fz_pcap_write(d, len);
		ret = rp_pkt_parse(d, len, true, &p);
		if (ret == RP_PKT_NOT_ROCE) {
			rte_pktmbuf_free(m);
			continue;	/* ARP */
		}
		if (ret != 0)
			fz_fail("the engine sent a malformed RoCE frame");
		rte_pktmbuf_free(m);
	}
}

static void
fz_pass(void)
{
	rp_dev_poll(fz.dev);
	fz_drain_tx();
	fz_check_cq(&fz.scq);
	fz_check_cq(&fz.rcq);
	fz_check_cq(&fz.tcq);
	fz_check_mem();
}

/*
 * Passes until the device has nothing left to do and no CQE comes
 * (at most 64): what
 * earlier records started (a flush, an owed ACK, a posted WQE) finishes
 * before a forged frame, so that the pass after it shows its effect
 * alone.  False if the device is still busy.
 */
static bool
fz_settle(void)
{
	for (unsigned int i = 0; i < 64; i++) {
		uint64_t seen = fz.scq.seen + fz.rcq.seen + fz.tcq.seen;
		bool busy = rp_dev_poll(fz.dev);

		fz_drain_tx();
		fz_check_cq(&fz.scq);
		fz_check_cq(&fz.rcq);
		fz_check_cq(&fz.tcq);
		fz_check_mem();
		/* A full CQ stops a flush without the device being busy:
		 * the CQEs polled here make room for the next pass. */
		if (!busy && seen == fz.scq.seen + fz.rcq.seen + fz.tcq.seen)
			return true;
	}
	return false;
}

/*
 * The RC or UC QP a frame record from a host that is not the peer goes
 * to, else 0: those take packets from their peer only (UD and the GSI QP
 * from anyone).
 */
static uint32_t fz_le(const uint8_t *p, unsigned int n);

static uint32_t
fz_to_connected(const uint8_t *r)
{
	const struct rp_qp *eq;
	uint32_t qpn;

	if (!(r[0] & FZ_R_FOREIGN))
		return 0;
	qpn = r[0] & FZ_R_RAW_QPN ? fz_le(r + 21, 3) :
		fz.qp[FZ_R_SLOT(r[0])].qpn;
	eq = rp_qp_get(fz.dev, qpn);
	return eq != NULL && (eq->type == IBV_QPT_RC ||
			      eq->type == IBV_QPT_UC) ? qpn : 0;
}

/*
 * A pass after a frame from a host that is not the peer of QP `qpn`: the
 * QP completes nothing and stays in its state (other QPs may go on with
 * what earlier records started).
 */
static void
fz_pass_foreign(uint32_t qpn)
{
	const struct rp_qp *eq = rp_qp_get(fz.dev, qpn);
	uint32_t state = eq->state;

	fz_watch.qpn = qpn;
	fz_watch.cqes = 0;
	fz_pass();
	fz_watch.qpn = 0;
	eq = rp_qp_get(fz.dev, qpn);
	if (eq == NULL || eq->state != state || fz_watch.cqes != 0)
		fz_fail("a frame from a host that is no QP's peer completed "
			"work or moved a QP");
}

/* ------------------------------------------------------------ frames */

static void
fz_inject(const uint8_t *frame, uint32_t len)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(fz.mp);
	char *p;

	if (m == NULL)
		fz_fail("no mbuf");
	p = rte_pktmbuf_append(m, (uint16_t)len);
	if (p == NULL) {
		rte_pktmbuf_free(m);
		return;
	}
	memcpy(p, frame, len);
	if (rte_ring_sp_enqueue(fz.rx, m) != 0)
		rte_pktmbuf_free(m);
	fz_stats.frames++;
}

static uint32_t
fz_le(const uint8_t *p, unsigned int n)
{
	uint32_t v = 0;

	while (n-- > 0)
		v = v << 8 | p[n];
	return v;
}

static void
fz_gid(uint8_t gid[16], uint32_t ip)
{
	const uint32_t be = rte_cpu_to_be_32(ip);

	memset(gid, 0, 16);
	gid[10] = 0xff;
	gid[11] = 0xff;
	memcpy(&gid[12], &be, 4);
}

static uint32_t
fz_transport(const struct fz_qp *q)
{
	return q->type == IBV_QPT_UC ? RP_OP_UC :
		q->type == IBV_QPT_UD ? RP_OP_UD : RP_OP_RC;
}

/* The PSN a frame's offset is counted from. */
static uint32_t
fz_psn_base(const struct fz_qp *q, uint32_t mask, bool initial)
{
	const struct rp_qp *eq = rp_qp_get(fz.dev, q->qpn);

	if (mask & RP_M_REQ)
		return initial || eq == NULL ? q->rq_psn : eq->resp.epsn;
	if (initial || eq == NULL)
		return q->sq_psn;
	return (mask & RP_M_READ) ? eq->comp.rd_psn : eq->comp.una;
}

static void
fz_key(uint8_t sel, uint32_t aux32, uint32_t *key, uint64_t *va)
{
	switch (sel & 7) {
	case 0: case 1: case 2: case 3:
		*key = fz.mr[sel & 3].key;
		*va += fz.mr[sel & 3].iova;
		break;
	case 4:
		*key = fz.stale_key;
		*va += fz.mr[FZ_NMR].iova;
		break;
	case 5:
		*key = aux32;
		break;
	case 6:
		*key = 0;
		break;
	default:
		*key = fz.old_key1;
		*va += fz.mr[1].iova;
		break;
	}
}

static void
fz_frame(const uint8_t *r, const uint8_t *lit, uint32_t nlit)
{
	static const uint8_t tr[8] = {
		0, RP_OP_RC, RP_OP_UC, RP_OP_UD, 0x40, 0x80, 0xa0, 0xe0,
	};
	static uint8_t buf[FZ_FRAME_MAX];
	const unsigned int slot = FZ_R_SLOT(r[0]);
	const struct fz_qp *q = &fz.qp[slot];
	const uint8_t t = r[1] >> 5;
	const uint8_t opcode = (t == 0 ? fz_transport(q) : tr[t]) | (r[1] & 0x1f);
	const struct rp_opcode_info *info = &rp_opcode[opcode];
	const uint8_t f = r[3];
	const bool foreign = r[0] & FZ_R_FOREIGN;
	const uint32_t aux32 = fz_le(r + 12, 4), aux2 = fz_le(r + 16, 4);
	uint32_t qpn = r[0] & FZ_R_RAW_QPN ? fz_le(r + 21, 3) : q->qpn;
	uint32_t paylen = f & FZ_F_MTU_PAY ? q->mtu : fz_le(r + 4, 2);
	int32_t off = (int8_t)r[2];
	uint64_t va = (uint64_t)(int64_t)(int32_t)fz_le(r + 8, 4);
	struct rp_pkt_addr a = { .ttl = 64 };
	uint32_t psn, key, flen, bth;
	uint8_t *h;

	if (!(info->mask & RP_M_PAYLOAD))
		paylen = 0;
	paylen = RTE_MIN(paylen, FZ_FRAME_MAX - 128u);
	if (f & FZ_F_PSN_FAR)
		off *= 4096;
	psn = (fz_psn_base(q, info->mask, f & FZ_F_PSN_INIT) + (uint32_t)off) &
		RP_PSN_MASK;
	memcpy(a.smac, foreign ? fz_mac_foreign : fz_mac_peer, 6);
	memcpy(a.dmac, fz_mac_dev, 6);
	fz_gid(a.sgid, foreign ? FZ_IP_FOREIGN : FZ_IP_PEER);
	fz_gid(a.dgid, FZ_IP_DEV);
	a.sport = rp_pkt_udp_sport(0, FZ_PEER_QPN + slot, qpn);
	fz_key(r[6], aux32, &key, &va);

	flen = rp_pkt_frame_len(&a, opcode, paylen);
	bth = rp_pkt_build(buf, &a, opcode, !!(f & FZ_F_SE), qpn,
			   !!(f & FZ_F_ACKREQ), psn, paylen);
	if (f & FZ_F_PKEY) {
		buf[bth + 2] = 0x7f;
		buf[bth + 3] = 0xfe;
	}
	h = buf + bth;
	if (info->mask & RP_M_RETH)
		rp_reth_set(h + info->offset[RP_HDR_RETH], va, key, aux32);
	if (info->mask & RP_M_AETH)
		rp_aeth_set(h + info->offset[RP_HDR_AETH], aux32 & 0xff,
			    aux32 >> 8);
	if (info->mask & RP_M_ATMETH)
		rp_atmeth_set(h + info->offset[RP_HDR_ATMETH], va, key, aux32,
			      aux2);
	if (info->mask & RP_M_ATMACK)
		rp_atmack_set(h + info->offset[RP_HDR_ATMACK], aux2);
	if (info->mask & RP_M_DETH)
		rp_deth_set(h + info->offset[RP_HDR_DETH],
			    aux32 != 0 ? aux32 : q->qkey,
			    aux2 != 0 ? aux2 & RP_QPN_MASK : FZ_PEER_QPN + slot);
	if (info->mask & RP_M_IMMDT)
		rp_immdt_set(h + info->offset[RP_HDR_IMMDT], aux2);
	if (info->mask & RP_M_IETH)
		rp_ieth_set(h + info->offset[RP_HDR_IETH], key);
	h += info->length;
	nlit = RTE_MIN(nlit, paylen);
	memcpy(h, lit, nlit);
	for (uint32_t i = nlit; i < paylen; i++)
		h[i] = (uint8_t)(i * 7u + slot);
	rp_pkt_finish(buf, &a, flen, true);
	if (r[0] & FZ_R_BAD_ICRC)
		buf[flen - 1] ^= 0x5a;
	fz_inject(buf, flen);
}

/* A raw frame: ours at layer 2, the slot's QPN if asked, ICRC redone. */
static void
fz_raw(uint8_t r0, const uint8_t *d, uint32_t len)
{
	static uint8_t buf[FZ_FRAME_MAX];
	const struct fz_qp *q = &fz.qp[FZ_R_SLOT(r0)];
	struct rp_pkt p;

	len = RTE_MIN(len, FZ_FRAME_MAX);
	memcpy(buf, d, len);
	if (len >= 6 && !(r0 & FZ_R_FOREIGN))
		memcpy(buf, fz_mac_dev, 6);
	if (rp_pkt_parse(buf, len, false, &p) == 0) {
		uint8_t *l3 = buf + p.l3_off;
		/* IP total length (IPv4), or header + payload length (IPv6) */
		uint32_t tot = p.ipver == 4 ? (uint32_t)l3[2] << 8 | l3[3] :
			40u + ((uint32_t)l3[4] << 8 | l3[5]);

		if (r0 & FZ_R_RAW_QPN) {
			buf[p.bth_off + 5] = (uint8_t)(q->qpn >> 16);
			buf[p.bth_off + 6] = (uint8_t)(q->qpn >> 8);
			buf[p.bth_off + 7] = (uint8_t)q->qpn;
		}
		if (!(r0 & FZ_R_BAD_ICRC) && tot >= 4)
			rp_icrc_put(l3, tot - 4);
	}
	fz_inject(buf, len);
}

static void
fz_app(unsigned int slot, uint8_t action, uint8_t arg)
{
	switch (action % FZ_A_MAX) {
	case FZ_A_POST_SEND:
		fz_post_send(slot, arg);
		break;
	case FZ_A_POST_RECV:
		fz_post_recvs(slot, (arg & 7u) + 1u);
		break;
	case FZ_A_MODIFY:
		fz_modify(slot, fz_states[arg % 8]);
		break;
	case FZ_A_CONSUME:
		rp_store_release(&fz.scq.ctl->cons, fz.scq.seen);
		rp_store_release(&fz.rcq.ctl->cons, fz.rcq.seen);
		rp_store_release(&fz.tcq.ctl->cons, fz.tcq.seen);
		break;
	case FZ_A_DEREG: {
		struct fz_mr *m = &fz.mr[arg & 3];

		if (!m->valid)
			break;
		fz_mr_dereg(m->key);
		m->valid = false;
		memcpy(m->ref, m->buf, FZ_MR_LEN);
		m->frozen = true;
		break;
	}
	case FZ_A_TAG_ADD:
		fz_tag_op(IBV_WR_TAG_ADD, arg, arg);
		break;
	case FZ_A_TAG_DEL:
		fz_tag_op(IBV_WR_TAG_DEL, arg, 0);
		break;
	default:
		fz_qp_destroy(slot);
		break;
	}
}

/* ------------------------------------------------------- set-up, reset */

static void
fz_setup(void)
{
	const uint32_t all = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
	const uint8_t *h = fz.hdr;
	struct rp_ctrl_srq s;
	struct rp_neigh *e = &fz.dev->sh[0].nq.neigh[0];
	int ret;

	/* The device's state that outlives an input: the peer's MAC known,
	 * the link checked, the clock where every input starts. */
	memset(fz.dev->sh[0].nq.neigh, 0, sizeof(fz.dev->sh[0].nq.neigh));
	fz_gid(e->ip, FZ_IP_PEER);
	memcpy(e->mac.addr_bytes, fz_mac_peer, 6);
	e->valid = true;
	fz.clock = 1ull << 40;
	fz.dev->link_check = 0;
	fz.nwr = 0;
	fz.ntags = 0;

	fz_mem_reset();
	/* The stale key's buffer first (deregistered), then MR 1 twice so
	 * that its old key names the slot's previous generation. */
	fz.stale_key = fz_mr_reg(FZ_NMR, fz.pdn, all);
	fz_mr_dereg(fz.stale_key);
	fz.old_key1 = fz_mr_reg(1, fz.pdn, all);
	fz_mr_dereg(fz.old_key1);
	fz.mr[0].key = fz_mr_reg(0, fz.pdn, IBV_ACCESS_LOCAL_WRITE);
	fz.mr[1].key = fz_mr_reg(1, fz.pdn, all);
	fz.mr[2].key = fz_mr_reg(2, fz.pdn, IBV_ACCESS_REMOTE_READ);
	fz.mr[3].key = fz_mr_reg(3, fz.pdn2, all);
	for (unsigned int m = 0; m < FZ_NMR; m++)
		fz.mr[m].valid = true;

	if (fz_cq_create(&fz.scq, h[0] & FZ_S_SMALL_SCQ ? 3 : 255) < 0 ||
	    fz_cq_create(&fz.rcq, 255) < 0 || fz_cq_create(&fz.tcq, 255) < 0)
		fz_fail("CQ create refused");

	memset(&s, 0, sizeof(s));
	s.pdn = fz.pdn;
	s.type = RP_SRQ_BASIC;
	s.cqn = -1;
	s.max_wr = 16;
	s.max_sge = 1;
	s.srq_limit = 2;
	if (fz_ctrl(RP_CTRL_SRQ_CREATE, &s, sizeof(s)) != 0)
		fz_fail("SRQ create refused");
	fz.srqn = s.srqn;
	fz_wq_map(&fz.srq, s.off, s.size, s.stride);

	memset(&s, 0, sizeof(s));
	s.pdn = fz.pdn;
	s.type = RP_SRQ_TM;
	s.cqn = (int32_t)fz.tcq.cqn;
	s.max_wr = 16;
	s.max_sge = 1;
	s.max_num_tags = 16;
	s.max_ops = 16;
	ret = fz_ctrl(RP_CTRL_SRQ_CREATE, &s, sizeof(s));
	if (ret != 0) {
		fprintf(stderr, "TM-SRQ create: %s\n", strerror(-ret));
		fz_fail("TM-SRQ create refused");
	}
	fz.tsrqn = s.srqn;
	fz_wq_map(&fz.tsrq, s.off, s.size, s.stride);
	fz_wq_map(&fz.tops, s.ops_off, s.ops_size, sizeof(struct rp_tm_op));
	fz.tops_max = s.max_ops;

	if (fz_qp_create(FZ_RC_REQ, IBV_QPT_RC, -1, fz.rcq.cqn, 0) < 0 ||
	    fz_qp_create(FZ_RC_RESP, IBV_QPT_RC, -1, fz.rcq.cqn, 0) < 0 ||
	    fz_qp_create(FZ_RC_SRQ, IBV_QPT_RC, (int32_t)fz.srqn,
			 fz.rcq.cqn, 0) < 0 ||
	    fz_qp_create(FZ_RC_TM, IBV_QPT_RC, (int32_t)fz.tsrqn,
			 fz.rcq.cqn, 0) < 0 ||
	    fz_qp_create(FZ_UC, IBV_QPT_UC, -1, fz.rcq.cqn, 0) < 0 ||
	    fz_qp_create(FZ_UD, IBV_QPT_UD, -1, fz.rcq.cqn, 0) < 0 ||
	    fz_qp_create(FZ_GSI, IBV_QPT_UD, -1, fz.rcq.cqn,
			 RP_QP_F_GSI) < 0 ||
	    fz_qp_create(FZ_RC_ANY, IBV_QPT_RC, -1, fz.rcq.cqn, 0) < 0)
		fz_fail("QP create refused");

	/* Receives first (RESET takes none: INIT), then RTS and sends. */
	for (unsigned int i = 0; i < FZ_NSLOT; i++) {
		fz_modify(i, IBV_QPS_INIT);
		if (i != FZ_RC_SRQ && i != FZ_RC_TM)
			fz_post_recvs(i, h[4] & 15);
	}
	for (unsigned int i = 0; i < (h[4] & 15u); i++) {
		fz_post_recv_on(&fz.srq, 0, i);
		fz_post_recv_on(&fz.tsrq, 0, i);
	}
	for (unsigned int i = 0; i < (h[4] >> 4); i++)
		fz_tag_op(IBV_WR_TAG_ADD, i, 0x100 + i);
	for (unsigned int i = 0; i < FZ_NSLOT; i++)
		if (i != FZ_RC_ANY || fz_states[h[3] % 8] >= IBV_QPS_RTS)
			fz_modify(i, IBV_QPS_RTS);
	for (unsigned int k = 0; k < 8; k++) {
		if (h[1] & 1u << k)
			fz_post_send(FZ_RC_REQ, k);
		if (h[5] & 1u << k)
			fz_post_send(k < 4 ? FZ_UC : FZ_UD, k < 4 ? k : k - 4);
	}
	fz_post_send(FZ_RC_ANY, 0);
	fz_post_send(FZ_RC_ANY, 4);
	fz_modify(FZ_RC_REQ, fz_states[h[2] % 8]);
	fz_modify(FZ_RC_ANY, fz_states[h[3] % 8]);
	/* The requests go out before the first record. */
	fz_pass();
}

static void
fz_teardown(void)
{
	struct rp_ctrl_srq s;
	struct rp_ctrl_cq c;

	for (unsigned int i = 0; i < FZ_NSLOT; i++)
		fz_qp_destroy(i);
	memset(&s, 0, sizeof(s));
	s.srqn = fz.tsrqn;
	if (fz_ctrl(RP_CTRL_SRQ_DESTROY, &s, sizeof(s)) != 0)
		fz_fail("TM-SRQ destroy refused");
	s.srqn = fz.srqn;
	if (fz_ctrl(RP_CTRL_SRQ_DESTROY, &s, sizeof(s)) != 0)
		fz_fail("SRQ destroy refused");
	fz.tops.hdr = NULL;
	/* What the engine still had queued leaves now. */
	fz_pass();
	for (struct fz_cq *cq = &fz.scq; cq <= &fz.tcq; cq++) {
		memset(&c, 0, sizeof(c));
		c.cqn = cq->cqn;
		if (fz_ctrl(RP_CTRL_CQ_DESTROY, &c, sizeof(c)) != 0)
			fz_fail("CQ destroy refused");
		cq->live = false;
	}
	for (unsigned int m = 0; m < FZ_NMR; m++)
		if (fz.mr[m].valid)
			fz_mr_dereg(fz.mr[m].key);
	if (fz.dev->sh[0].nr_active != 0)
		fz_fail("a destroyed QP is still stepped");
}

static void
fz_init(void)
{
	char *argv[] = {
		"fuzz_transport", "--no-huge", "-m", "256", "--no-pci",
		"--no-shconf", "--no-telemetry", "-l", "0",
		"--log-level=*:warning", NULL, NULL,
	};
	char prefix[64];
	struct rp_config cfg;
	struct rp_port_cfg *pc = &cfg.port[0];
	struct rp_ctrl_pd pd = { 0 };
	const char *pcap = getenv("RP_FUZZ_TX_PCAP");
	int argc = RTE_DIM(argv) - 1;

	snprintf(prefix, sizeof(prefix), "--file-prefix=rp_fuzz_%d",
		 (int)getpid());
	argv[argc - 1] = prefix;
	atexit((void (*)(void))rp_eal_rundir_remove);
	if (rte_eal_init(argc, argv) < 0)
		fz_fail("EAL init");
	rp_eal_rundir_note();
	fz.rx = rte_ring_create("fz_rx", 1024, 0, RING_F_SP_ENQ | RING_F_SC_DEQ);
	fz.tx = rte_ring_create("fz_tx", 1024, 0, RING_F_SP_ENQ | RING_F_SC_DEQ);
	fz.mp = rte_pktmbuf_pool_create("fz_pool", 1023, 0, 0,
					RTE_PKTMBUF_HEADROOM + FZ_FRAME_MAX,
					SOCKET_ID_ANY);
	if (fz.rx == NULL || fz.tx == NULL || fz.mp == NULL ||
	    rte_eth_from_rings("fuzz", &fz.rx, 1, &fz.tx, 1, 0) < 0)
		fz_fail("ring port");

	/* One device on it, no engine lcore: this thread polls. */
	memset(&cfg, 0, sizeof(cfg));
	cfg.nb_ports = 1;
	cfg.nb_lcores = 0;
	snprintf(pc->device, sizeof(pc->device), "%s", FZ_PORT);
	snprintf(pc->ethdev_name, sizeof(pc->ethdev_name), "%s", FZ_PORT);
	pc->ipv4 = rte_cpu_to_be_32(FZ_IP_DEV);
	pc->prefix_len = 24;
	memcpy(pc->mac, fz_mac_dev, 6);
	pc->mac_set = true;
	pc->mtu = 4096;
	pc->region_mb = 16;
	pc->hop_limit = 64;
	pc->probe_min_us = 200;
	if (rp_engine_start(&cfg) != 0)
		fz_fail("engine start");
	fz.dev = rp_devs[0];

	if (fz_ctrl(RP_CTRL_PD_ALLOC, &pd, sizeof(pd)) != 0)
		fz_fail("PD");
	fz.pdn = pd.pdn;
	if (fz_ctrl(RP_CTRL_PD_ALLOC, &pd, sizeof(pd)) != 0)
		fz_fail("PD");
	fz.pdn2 = pd.pdn;
	{
		struct rp_ctrl_ah ah = { .pdn = fz.pdn };

		fz_av(&ah.av);
		if (fz_ctrl(RP_CTRL_AH_CREATE, &ah, sizeof(ah)) != 0)
			fz_fail("AH");
		fz.ahn = ah.ahn;
	}

	/* MR buffers between guards nothing may write. */
	fz.mem = aligned_alloc(64, (FZ_NMR + 1) * FZ_MR_STRIDE);
	if (fz.mem == NULL)
		fz_fail("memory");
	memset(fz.mem, FZ_GUARD_BYTE, (FZ_NMR + 1) * FZ_MR_STRIDE);
	for (unsigned int m = 0; m <= FZ_NMR; m++) {
		fz.mr[m].buf = fz.mem + m * FZ_MR_STRIDE + FZ_GUARD;
		fz.mr[m].ref = malloc(FZ_MR_LEN);
		fz.mr[m].iova = 0x10000000ull * (m + 1);
		if (fz.mr[m].ref == NULL)
			fz_fail("memory");
		FZ_POISON(fz.mr[m].buf - FZ_GUARD, FZ_GUARD);
		FZ_POISON(fz.mr[m].buf + FZ_MR_LEN, FZ_GUARD);
	}

	fz.strict_source = getenv("RP_FUZZ_STRICT_SOURCE") == NULL ||
		strcmp(getenv("RP_FUZZ_STRICT_SOURCE"), "0") != 0;
	if (pcap != NULL && pcap[0] != '\0') {
		static const uint32_t gh[6] = {
			0xa1b2c3d4, 0x00040002, 0, 0, 65535, 1,
		};

		fz.pcap = fopen(pcap, "wb");
		if (fz.pcap == NULL)
			fz_fail("RP_FUZZ_TX_PCAP: cannot write");
		fwrite(gh, sizeof(gh), 1, fz.pcap);
	}
	if (getenv("RP_FUZZ_LOG") == NULL)
		rte_log_set_global_level(RTE_LOG_CRIT);
	fz.ready = true;
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	if (!fz.ready)
		fz_init();
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t pos = FZ_HDR_LEN;
	unsigned int nrec = 0;

	if (!fz.ready)
		fz_init();
	if (size < FZ_HDR_LEN)
		return 0;
	memcpy(fz.hdr, data, FZ_HDR_LEN);
	fz_stats.inputs++;
	fz_setup();
	while (pos < size && nrec++ < FZ_MAX_RECORDS) {
		const uint8_t *r = data + pos;
		size_t left = size - pos;

		fz_stats.records++;
		switch (FZ_R_KIND(r[0])) {
		case FZ_R_FRAME: {
			uint32_t nlit, foreign;

			if (left < FZ_FRAME_LEN)
				goto out;
			nlit = RTE_MIN((size_t)r[20], left - FZ_FRAME_LEN);
			foreign = fz.strict_source ? fz_to_connected(r) : 0;
			if (foreign != 0 && !fz_settle())
				foreign = 0;
			fz_frame(r, r + FZ_FRAME_LEN, nlit);
			pos += FZ_FRAME_LEN + nlit;
			if (foreign != 0) {
				fz_pass_foreign(foreign);
				continue;
			}
			break;
		}
		case FZ_R_RAW: {
			uint32_t len;

			if (left < 3)
				goto out;
			len = RTE_MIN((size_t)fz_le(r + 1, 2), left - 3);
			fz_raw(r[0], r + 3, len);
			pos += 3 + len;
			break;
		}
		case FZ_R_STEP:
			if (left < 2)
				goto out;
			fz.clock += 1ull << RTE_MIN(r[1] & 0x3fu, 36u);
			for (unsigned int i = 0; i < (r[1] >> 6); i++)
				fz_pass();
			pos += 2;
			break;
		default:
			if (left < 3)
				goto out;
			fz_app(FZ_R_SLOT(r[0]), r[1], r[2]);
			pos += 3;
			break;
		}
		fz_pass();
	}
out:
	fz_teardown();
	if (fz.pcap != NULL)
		fflush(fz.pcap);
	return 0;
}
