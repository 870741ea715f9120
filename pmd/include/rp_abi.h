/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The shared-memory ABI between the rocepmd engine and its applications.
 *
 * Everything here lives in one device region (struct rp_dev_ctl at offset 0)
 * that could be mapped by several processes: objects are named by number
 * (QPN, CQN, channel number) and memory by offset from the region base,
 * never by pointer.  Fields are fixed width and explicitly padded; every
 * index is a free-running uint32_t, masked on use (rte_ring convention).
 *
 * Ownership (one writer per word):
 *   work queue  prod: application (release)     cons: engine (release)
 *   CQ          CQE + owner: engine (release)   cons: application (release)
 *   CQ arm      application stores, engine claims with compare-exchange
 *   channel     prod: engine (release)          cons: application (release)
 *   ctrl slot   (the engine's private memory, rp_ctrl_call(); not in the
 *               region) FREE->CLAIMED->POSTED (caller), ->DONE (engine),
 *               ->FREE (caller)
 */

#ifndef _RP_ABI_H_
#define _RP_ABI_H_

#include <assert.h>
#include <stdint.h>

#define RP_ABI_MAGIC	0x31444d50u	/* "PMD1" */
#define RP_ABI_VERSION	11u

#define RP_ABI_LINE	64u

#define RP_DEV_NAME_LEN	32u
#define RP_MAX_SGE	16u
#define RP_MAX_INLINE	256u
#define RP_MAX_WR	16384u
#define RP_MAX_CQE	65536u
#define RP_CTRL_SLOTS	64u
#define RP_GID_TBL_LEN	8u		/* 2 + RP_MAX_IPV6, rounded up */
#define RP_MAX_MCAST	64u		/* multicast groups per device */
#define RP_MCAST_QPS	16u		/* QPs attached to one group */
#define RP_CHAN_EVENTS	4096u	/* event ring entries per channel */
#define RP_MAX_SRQ_WR	16384u
#define RP_TM_MAX_TAGS	65535u	/* tag slots of one TM-SRQ */
#define RP_TM_MAX_OPS	16384u	/* outstanding list operations */
#define RP_TM_MAX_RNDV_HDR 64u	/* TMH + RVH + optional data */
#define RP_TMH_SIZE	16u
#define RP_RVH_SIZE	16u

/* ---------------------------------------------------------------- queues */

/*
 * Header of a work queue (SQ, RQ, SRQ).  The entries follow the header at
 * offset RP_WQ_HDR_SIZE; each entry is `stride` bytes (a power of two), and
 * the queue holds `size` entries (a power of two), both returned when the
 * queue is created and kept privately by each side.
 */
struct rp_wq_hdr {
	uint32_t prod;			/* application: next slot to post */
	/*
	 * engine, a QP's RQ: nonzero while a post must set the QP's
	 * doorbell bit and ring (the QP is in ERR and flushes what is
	 * posted).  Otherwise a receive is taken when a message comes, and
	 * waking a blocked engine for it costs a wake-up and a spin for
	 * nothing.  Written rarely, beside prod, which the poster has in
	 * its cache; an SQ's posts always ring.
	 */
	uint32_t post_wake;
	uint8_t pad0[RP_ABI_LINE - 8];
	uint32_t cons;			/* engine: slots before it are free */
	uint8_t pad1[RP_ABI_LINE - 4];
};
#define RP_WQ_HDR_SIZE	((uint32_t)sizeof(struct rp_wq_hdr))
static_assert(sizeof(struct rp_wq_hdr) == 2 * RP_ABI_LINE, "rp_wq_hdr");

/*
 * Doorbell bits: one per QP of a device, in the control block of the
 * arena that holds the QP's rings (rp_dev_ctl for the engine's own
 * process, rp_arena_ctl for an attached one); rp_ctrl_qp_create says
 * which word and bit.  A poster publishes prod (release), then sets its
 * QP's bit (release); the engine takes a word that is not zero with an
 * acquire exchange and steps the QPs whose bits were set.  So a pass
 * looks at the QPs that have something to do, not at every QP.  Posts to
 * an RQ ring it only while the engine asks (rp_wq_hdr.post_wake).
 * Untrusted: a bit only makes the engine look at one of the arena's own
 * QPs.
 */
#define RP_BELL_QPS	4096u
#define RP_BELL_WORDS	(RP_BELL_QPS / 64u)

struct rp_sge {
	uint64_t addr;
	uint32_t length;
	uint32_t lkey;
};
static_assert(sizeof(struct rp_sge) == 16, "rp_sge");

/* rp_send_wqe.flags */
#define RP_WQE_SIGNALED		(1u << 0)
#define RP_WQE_SOLICITED	(1u << 1)
#define RP_WQE_INLINE		(1u << 2)
#define RP_WQE_FENCE		(1u << 3)

/*
 * Send WQE.  `opcode` takes enum ibv_wr_opcode values.  It is followed by
 * num_sge struct rp_sge, or by `length` bytes of inline data when
 * RP_WQE_INLINE is set.
 *
 * IBV_WR_SEND_WITH_INV and IBV_WR_LOCAL_INV: imm_data is the rkey to
 * invalidate, in host order.  IBV_WR_BIND_MW (no SGE): rkey is the
 * window's new rkey (its index bits name the window), imm_data the lkey of
 * the MR it is bound to, remote_addr and compare_add the range (address,
 * length), swap the window's IBV_ACCESS_* flags.
 */
struct rp_send_wqe {
	uint64_t wr_id;
	uint8_t opcode;
	uint8_t flags;
	uint8_t num_sge;
	uint8_t rsvd0;
	uint32_t imm_data;		/* network byte order, as in ibv_send_wr */
	uint64_t remote_addr;
	uint32_t rkey;
	uint32_t length;		/* payload bytes: sum of SGEs or inline */
	uint32_t ah;			/* UD: address handle number */
	uint32_t remote_qpn;		/* UD */
	uint32_t remote_qkey;		/* UD */
	uint32_t rsvd1;
	uint64_t compare_add;		/* atomics */
	uint64_t swap;
};
#define RP_SEND_WQE_HDR	((uint32_t)sizeof(struct rp_send_wqe))
static_assert(sizeof(struct rp_send_wqe) == 64, "rp_send_wqe");

/* Receive WQE, followed by num_sge struct rp_sge. */
struct rp_recv_wqe {
	uint64_t wr_id;
	uint32_t num_sge;
	uint32_t rsvd;
};
#define RP_RECV_WQE_HDR	((uint32_t)sizeof(struct rp_recv_wqe))
static_assert(sizeof(struct rp_recv_wqe) == 16, "rp_recv_wqe");

/* ------------------------------------------------------------ CQ ring */

/* rp_cqe.flags, beyond the IBV_WC_* flags kept in wc_flags */
#define RP_CQE_SOLICITED	(1u << 0)

/*
 * rp_cqe.sl of a UD receive: the RoCE packet type, which IBTA Annex 17
 * (A17.4.5.1) puts in a RoCEv2 UD completion and ibv_wc has no other field
 * for; encoded as mlx5 reports it in wc.sl (bit 3: UDP header, bits 2:0:
 * the L3 header).  It says where the GRH area holds the destination
 * address: UCX's ud_verbs reads it so (UCT_IB_CQE_SL_PKTYPE_MASK).
 */
#define RP_CQE_SL_ROCE_UDP	0x8u
#define RP_CQE_SL_ROCE_IPV6	0x1u
#define RP_CQE_SL_ROCE_IPV4	0x2u

/*
 * A completion.  status/opcode/wc_flags take enum ibv_wc_status,
 * enum ibv_wc_opcode and IBV_WC_* flag values.  `owner` is written last,
 * with a release store: the entry at free-running index i is valid when
 * owner == (i >> log2(size)) + 1, so a zeroed ring is empty for lap 0.
 */
struct rp_cqe {
	uint64_t wr_id;
	uint32_t status;
	uint32_t opcode;
	uint32_t vendor_err;
	uint32_t byte_len;
	uint32_t imm_data;		/* network byte order, or invalidated rkey */
	uint32_t qp_num;
	uint32_t src_qp;
	uint32_t wc_flags;
	uint16_t pkey_index;
	uint16_t slid;
	uint8_t sl;
	uint8_t dlid_path_bits;
	uint8_t flags;			/* RP_CQE_* */
	uint8_t rsvd0;
	uint64_t tm_tag;		/* IBV_WC_TM_RECV with IBV_WC_TM_MATCH: */
	uint32_t tm_priv;		/* TMH tag and app_ctx (ibv_wc_tm_info) */
	uint32_t owner;
};
static_assert(sizeof(struct rp_cqe) == 64, "rp_cqe");

/* rp_cq_ctl.arm: low bits say what is armed, the rest is a sequence. */
#define RP_CQ_ARM_NEXT		(1u << 0)	/* any completion */
#define RP_CQ_ARM_SOL		(1u << 1)	/* solicited or error only */
#define RP_CQ_ARM_MASK		(RP_CQ_ARM_NEXT | RP_CQ_ARM_SOL)
#define RP_CQ_ARM_SEQ_INC	(1u << 2)

/* CQ control block; `size` CQEs follow at offset RP_CQ_HDR_SIZE. */
struct rp_cq_ctl {
	uint32_t prod;			/* engine: informational copy */
	uint32_t overflow;		/* engine: set once the CQ overran */
	uint8_t pad0[RP_ABI_LINE - 8];
	uint32_t cons;			/* application */
	uint8_t pad1[RP_ABI_LINE - 4];
	uint32_t arm;			/* application arms, engine claims */
	uint8_t pad2[RP_ABI_LINE - 4];
};
#define RP_CQ_HDR_SIZE	((uint32_t)sizeof(struct rp_cq_ctl))
static_assert(sizeof(struct rp_cq_ctl) == 3 * RP_ABI_LINE, "rp_cq_ctl");

/* ------------------------------------------------------ completion channel */

/*
 * Events the engine fired, in order: each entry is a CQN.  The engine pushes
 * the CQN (release) and then writes 1 to the channel's eventfd
 * (EFD_SEMAPHORE), so a successful read of the fd always finds an entry.
 */
struct rp_chan_ctl {
	uint32_t prod;			/* engine */
	uint32_t dropped;		/* engine: events lost to a full ring */
	uint8_t pad0[RP_ABI_LINE - 8];
	uint32_t cons;			/* application */
	uint8_t pad1[RP_ABI_LINE - 4];
	uint32_t ev[RP_CHAN_EVENTS];
};

/* ------------------------------------------------------------- control */

enum rp_ctrl_op {
	RP_CTRL_NOP = 0,
	RP_CTRL_PD_ALLOC,
	RP_CTRL_PD_FREE,
	RP_CTRL_MR_REG,
	RP_CTRL_MR_DEREG,
	RP_CTRL_CQ_CREATE,
	RP_CTRL_CQ_DESTROY,
	RP_CTRL_QP_CREATE,
	RP_CTRL_QP_MODIFY,
	RP_CTRL_QP_QUERY,
	RP_CTRL_QP_DESTROY,
	RP_CTRL_AH_CREATE,
	RP_CTRL_AH_DESTROY,
	RP_CTRL_CHAN_CREATE,
	RP_CTRL_CHAN_DESTROY,
	RP_CTRL_ASYNC_REG,
	RP_CTRL_ASYNC_UNREG,
	RP_CTRL_SRQ_CREATE,
	RP_CTRL_SRQ_MODIFY,
	RP_CTRL_SRQ_QUERY,
	RP_CTRL_SRQ_DESTROY,
	RP_CTRL_MCAST_ATTACH,
	RP_CTRL_MCAST_DETACH,
	RP_CTRL_MR_REREG,
	RP_CTRL_MW_ALLOC,
	RP_CTRL_MW_DEALLOC,
	RP_CTRL_CQ_RESIZE,
	RP_CTRL_OBJECTS,		/* count the device's objects */
	RP_CTRL_ARENA_CREATE,		/* host only (rp_serve.c) */
	RP_CTRL_ARENA_DESTROY,
	RP_CTRL_GSI_BIND,		/* claim a CM service ID (a port) */
	RP_CTRL_GSI_WILL,		/* a DREQ to send if the agent goes */
	RP_CTRL_QP_CC,			/* a QP's window and rate (telemetry) */
	RP_CTRL_CQ_MODERATE,		/* ibv_modify_cq() */
	RP_CTRL_OP_MAX,
};

/* An arena: shared memory of one attached process (rp_serve.c). */
struct rp_ctrl_arena {
	uint32_t size_mb;		/* in (CREATE) */
	uint32_t id;			/* out; in for DESTROY */
	uint64_t size;			/* out: bytes */
};

/* RP_CTRL_OBJECTS: what the device holds now (out). */
struct rp_ctrl_objects {
	uint32_t pds;
	uint32_t mrs;			/* MRs and memory windows */
	uint32_t cqs;
	uint32_t qps;
	uint32_t srqs;
	uint32_t ahs;
	uint32_t chans;
	uint32_t async_fds;
	uint32_t region_pages;		/* pages handed out, every arena */
	uint32_t arenas;		/* of attached processes */
};

/* RP_CTRL_QP_CC: an RC or UC QP's congestion state (out), by qpn (in). */
struct rp_ctrl_qp_cc {
	uint32_t qpn;
	uint32_t window;		/* packets in flight at most */
	uint32_t in_flight;		/* packets sent, not acknowledged */
	uint32_t srtt_us;		/* smoothed round trip, 0: none */
	uint32_t limited;		/* 1: paced at rate_mbps (DCQCN) */
	uint32_t rate_mbps;		/* line rate while not limited */
	uint32_t target_mbps;
	uint32_t alpha;			/* Q10 */
	uint32_t probe_wait_us;		/* learned wait before a probe, 0:
					 * none (the peer's silences) */
};

struct rp_ctrl_pd {
	uint32_t pdn;			/* out for ALLOC, in for FREE */
};

struct rp_ctrl_mr {
	uint32_t pdn;
	uint32_t access;		/* IBV_ACCESS_* */
	uint64_t addr;			/* where the application's buffer is */
	uint64_t length;
	uint64_t iova;			/* what remote and local keys address */
	uint32_t lkey;			/* out; in for DEREG and REREG */
	uint32_t rkey;			/* out */
	uint32_t flags;			/* REREG: IBV_REREG_MR_CHANGE_* */
	/*
	 * Address space `addr` is in: 0 for the engine's own (an embedded
	 * engine), else 1 + the host's descriptor of an attached process's
	 * memory (its /proc/self/mem, handed over at HELLO), which only the
	 * host's attach server sets (rp_attach.h)
	 */
	int32_t mem;
};

/* A memory window (ibv_alloc_mw): a key of the MR table, bound later. */
struct rp_ctrl_mw {
	uint32_t pdn;
	uint32_t type;			/* IBV_MW_TYPE_1 or IBV_MW_TYPE_2 */
	uint32_t rkey;			/* out; in for DEALLOC */
	uint32_t rsvd;
};

/* CQ_RESIZE: cqn and cqe in, a new ring out (size, off). */
struct rp_ctrl_cq {
	uint32_t cqe;			/* in: requested entries */
	int32_t chan;			/* in: channel number or -1 */
	uint32_t cqn;			/* out; in for DESTROY */
	uint32_t size;			/* out: entries, power of two */
	uint64_t off;			/* out: region offset of rp_cq_ctl */
};

/*
 * RP_CTRL_CQ_MODERATE (ibv_modify_cq(), IBV_CQ_ATTR_MODERATE): an armed
 * CQ's event waits until `count` CQEs arrived while it was armed, or
 * `period_us` after the first of them; 0 and 1 / 0: an event at the first.
 */
struct rp_ctrl_cq_mod {
	uint32_t cqn;
	uint32_t count;			/* <= RP_CQ_MOD_COUNT_MAX */
	uint32_t period_us;		/* <= RP_CQ_MOD_PERIOD_MAX */
};
#define RP_CQ_MOD_COUNT_MAX	65535u	/* ibv_moderate_cq's uint16_t */
#define RP_CQ_MOD_PERIOD_MAX	4095u	/* µs, mlx5's bound */

struct rp_qp_caps {
	uint32_t max_send_wr;
	uint32_t max_recv_wr;
	uint32_t max_send_sge;
	uint32_t max_recv_sge;
	uint32_t max_inline_data;
};

/*
 * rp_ctrl_qp_create.flags.  RP_QP_F_GSI: the UD QP is a general services
 * agent: what it sends leaves from QP 1, and the MADs that arrive at QP 1
 * reach it when they are its own (rp_gsi.c).  One per process and device;
 * every process that runs an RDMA CM has one.
 */
#define RP_QP_F_GSI	1u

struct rp_ctrl_qp_create {
	uint32_t pdn;
	uint32_t qp_type;		/* enum ibv_qp_type */
	uint32_t send_cqn;
	uint32_t recv_cqn;		/* ignored with a TM-SRQ: its CQ is used */
	int32_t srqn;			/* -1: none */
	uint32_t sq_sig_all;
	struct rp_qp_caps caps;		/* in: requested, out: granted */
	uint32_t qpn;			/* out */
	uint32_t sq_size;		/* out: entries */
	uint32_t sq_stride;		/* out: bytes */
	uint32_t rq_size;
	uint32_t rq_stride;
	uint32_t flags;			/* in: RP_QP_F_* */
	/*
	 * out, GSI agents: the local communication IDs (and SIDR request
	 * IDs) its CM chooses carry this in their bits RP_GSI_TAG_MASK, so
	 * that the answers to them come back to it
	 */
	uint32_t comm_prefix;
	uint64_t sq_off;		/* out: region offset of rp_wq_hdr */
	uint64_t rq_off;
	/* out: region offset of the QP's doorbell word, and its bit */
	uint64_t bell_off;
	uint64_t bell_bit;
};

/* ------------------------------------------------------ SRQ and TM-SRQ */

/* rp_ctrl_srq.type */
#define RP_SRQ_BASIC	0u
#define RP_SRQ_TM	1u		/* tag matching (IBV_SRQT_TM) */

/* rp_ctrl_srq.attr_mask (MODIFY): IBV_SRQ_MAX_WR, IBV_SRQ_LIMIT. */

/*
 * An SRQ.  Its receive ring is a work queue like an RQ (struct rp_wq_hdr,
 * then `size` entries of `stride` bytes: struct rp_recv_wqe and its SGEs).
 * The engine copies a WQE when a message takes it and frees the slot at
 * once, since QPs sharing the SRQ complete out of order.
 *
 * A TM-SRQ also has a list-operation ring (struct rp_wq_hdr, then
 * `ops_size` struct rp_tm_op; application produces, engine consumes) and a
 * ring of tag slots the engine gave back (struct rp_tm_free), see below.
 */
struct rp_ctrl_srq {
	uint32_t pdn;
	uint32_t type;			/* RP_SRQ_* */
	int32_t cqn;			/* TM: CQ of all its completions, else -1 */
	uint32_t max_wr;		/* in: requested; out: granted */
	uint32_t max_sge;		/* in: requested; out: granted */
	uint32_t srq_limit;		/* CREATE/MODIFY in, QUERY out; 0: unarmed */
	uint32_t max_num_tags;		/* TM: in/out */
	uint32_t max_ops;		/* TM: in/out */
	uint32_t attr_mask;		/* MODIFY */
	uint32_t srqn;			/* out; in for MODIFY/QUERY/DESTROY */
	uint32_t size;			/* out: receive ring entries */
	uint32_t stride;		/* out: bytes per receive entry */
	uint64_t off;			/* out: region offset of the ring */
	uint32_t ops_size;		/* out: op ring entries, power of two */
	uint32_t free_size;		/* out: free ring entries, power of two */
	uint64_t ops_off;		/* out: region offset of the op ring */
	uint64_t free_off;		/* out: region offset of struct rp_tm_free */
};

/*
 * A list operation of ibv_post_srq_ops(3).  `handle` names a tag slot:
 * its low 16 bits are the slot index (< max_num_tags), the high 16 bits a
 * generation the application bumps every time it reuses the slot, so that
 * a DEL of a tag the engine already consumed never hits a newer one.  The
 * application picks the handle of an ADD (it is returned at post time);
 * the engine gives a slot back through struct rp_tm_free once no CQE will
 * name it any more (consumed and completed, or deleted).
 */
struct rp_tm_op {
	uint64_t wr_id;
	uint64_t recv_wr_id;		/* ADD */
	uint64_t tag;			/* ADD */
	uint64_t mask;			/* ADD */
	uint8_t opcode;			/* enum ibv_ops_wr_opcode */
	uint8_t flags;			/* IBV_OPS_SIGNALED | IBV_OPS_TM_SYNC */
	uint16_t num_sge;		/* ADD: 0 or 1 */
	uint32_t unexp_cnt;		/* with IBV_OPS_TM_SYNC */
	uint32_t handle;		/* ADD, DEL */
	uint32_t rsvd;
	struct rp_sge sge;		/* ADD: the tagged buffer */
};
static_assert(sizeof(struct rp_tm_op) == 64, "rp_tm_op");

#define RP_TM_HANDLE_IDX(h)	((h) & 0xffffu)
#define RP_TM_HANDLE_GEN(h)	((h) >> 16)

/* Tag slots given back by the engine: engine produces, application consumes. */
struct rp_tm_free {
	uint32_t prod;			/* engine */
	uint8_t pad0[RP_ABI_LINE - 4];
	uint32_t cons;			/* application */
	uint8_t pad1[RP_ABI_LINE - 4];
	uint32_t idx[];			/* free_size slot indexes */
};
#define RP_TM_FREE_HDR_SIZE	((uint32_t)sizeof(struct rp_tm_free))

/* An address vector, as ibv_ah_attr says it for RoCE (always global). */
struct rp_av {
	uint8_t dgid[16];
	uint32_t flow_label;
	uint8_t sgid_index;
	uint8_t hop_limit;
	uint8_t traffic_class;
	uint8_t sl;
	uint8_t is_global;
	uint8_t port_num;
	uint16_t rsvd;
};

/* QP attributes; attr_mask takes IBV_QP_* bits. */
struct rp_qp_attr {
	uint32_t attr_mask;
	uint32_t qp_state;		/* enum ibv_qp_state */
	uint32_t cur_qp_state;
	uint32_t path_mtu;		/* enum ibv_mtu */
	uint32_t qkey;
	uint32_t rq_psn;
	uint32_t sq_psn;
	uint32_t dest_qp_num;
	uint32_t qp_access_flags;
	uint16_t pkey_index;
	uint8_t port_num;
	uint8_t timeout;
	uint8_t retry_cnt;
	uint8_t rnr_retry;
	uint8_t min_rnr_timer;
	uint8_t max_rd_atomic;
	uint8_t max_dest_rd_atomic;
	uint8_t sq_draining;
	uint8_t en_sqd_async_notify;
	uint8_t rsvd;
	struct rp_av av;
	struct rp_qp_caps cap;		/* QUERY only */
};

struct rp_ctrl_qp {
	uint32_t qpn;
	uint32_t rsvd;
	struct rp_qp_attr attr;		/* in for MODIFY, out for QUERY */
};

struct rp_ctrl_ah {
	uint32_t pdn;
	uint32_t ahn;			/* out; in for DESTROY */
	struct rp_av av;
};

struct rp_ctrl_chan {
	int32_t fd;			/* in: eventfd the engine signals (an
					 * attached process's: the host's
					 * socket end, rp_attach.h) */
	uint32_t chn;			/* out; in for DESTROY */
	uint64_t off;			/* out: region offset of rp_chan_ctl */
};

/* ibv_attach_mcast / ibv_detach_mcast: a UD QP joins or leaves a group. */
struct rp_ctrl_mcast {
	uint32_t qpn;
	uint32_t rsvd;
	uint8_t gid[16];		/* IPv4-mapped 224/4 or IPv6 ff00::/8 */
};

/*
 * Register (or unregister) an eventfd for the device's asynchronous events
 * (struct rp_async_ctl).  In-process: the engine writes 1 to every
 * registered fd once per event it pushes, after publishing it.  An
 * attached process sends no fd: the host makes a socket pair, signals its
 * end and hands the process the other (rp_attach.h), and names the
 * registration by `id`.
 */
struct rp_ctrl_async {
	int32_t fd;			/* in: eventfd, EFD_SEMAPHORE */
	uint32_t prod;			/* out (REG): ring index of the first
					 * event this fd is signalled for */
	uint32_t id;			/* attached: out (REG), in (UNREG) */
	uint32_t rsvd;
};

/* ------------------------------------------- GSI agents (RDMA CM) */

/* Bits of a local communication ID that name its GSI agent. */
#define RP_GSI_TAG_MASK	0xff000000u

/*
 * A GSI agent claims (bind = 1) or lets go of (bind = 0) a CM service ID,
 * (port space << 16 | port): REQs and SIDR REQs for it reach that agent.
 * Claims count: an agent may claim the same ID more than once.  -EADDRINUSE
 * when another agent of the device holds it.
 */
struct rp_ctrl_gsi_bind {
	uint32_t qpn;			/* the agent's QP */
	uint32_t bind;
	uint64_t service_id;
};

/*
 * The agent's last will for one connection: a DREQ MAD (the first `len`
 * bytes; the rest of the 256 are zero) that the engine sends to QP 1 at
 * `av` when the agent's QP is destroyed with the will still standing, so
 * that the peer of a process that died learns at once.  len 0 withdraws
 * the will of `comm_id`.  Only a CM DREQ is accepted.
 */
#define RP_GSI_WILL_LEN	64u
struct rp_ctrl_gsi_will {
	uint32_t qpn;			/* the agent's QP */
	uint32_t comm_id;		/* the connection's local comm ID */
	uint32_t len;
	uint32_t rsvd;
	struct rp_av av;
	uint8_t mad[RP_GSI_WILL_LEN];
};

/* rp_ctrl_slot.state */
#define RP_SLOT_FREE	0u
#define RP_SLOT_CLAIMED	1u	/* an application thread is filling it */
#define RP_SLOT_POSTED	2u	/* queued to the engine */
#define RP_SLOT_DONE	3u	/* engine wrote `result` and the reply */

struct rp_ctrl_slot {
	uint32_t state;
	uint32_t op;			/* enum rp_ctrl_op */
	int32_t result;			/* 0 or negative errno */
	/*
	 * Arena whose objects the request makes or names: 0, the device
	 * region; an attached process's, set by the host's attach server
	 */
	uint32_t arena;
	union {
		struct rp_ctrl_pd pd;
		struct rp_ctrl_mr mr;
		struct rp_ctrl_cq cq;
		struct rp_ctrl_qp_create qp_create;
		struct rp_ctrl_qp qp;
		struct rp_ctrl_ah ah;
		struct rp_ctrl_chan chan;
		struct rp_ctrl_async async;
		struct rp_ctrl_srq srq;
		struct rp_ctrl_mcast mcast;
		struct rp_ctrl_mw mw;
		struct rp_ctrl_objects objects;
		struct rp_ctrl_arena arena;
		struct rp_ctrl_gsi_bind gsi_bind;
		struct rp_ctrl_gsi_will gsi_will;
		struct rp_ctrl_qp_cc qp_cc;
		struct rp_ctrl_cq_mod cq_mod;
		uint8_t raw[176];
	} u;
};
static_assert(sizeof(struct rp_ctrl_slot) <= 192, "rp_ctrl_slot");

/* ------------------------------------------------------- async events */

#define RP_ASYNC_EVENTS	256u

/*
 * An asynchronous event: `type` takes enum ibv_event_type values, `num`
 * names the object (QPN, CQN, SRQN, or the port number for port events).
 */
struct rp_async_ev {
	uint32_t type;
	uint32_t num;
};

/*
 * Async event ring of the device, shared by every context opened on it.
 *
 * The engine pushes (entry, then release of prod) and then writes 1 to each
 * eventfd registered with RP_CTRL_ASYNC_REG, so every open context is told
 * of every event of the device; with no fd registered it pushes nothing.
 * Each context reads the ring with a private consumer index that starts at
 * the `prod` its registration returned, and reads its eventfd once per
 * entry it takes, so the fd is readable exactly while the ring holds
 * entries that context has not taken.  Contexts filter: an event naming a
 * QP or CQ of another context is skipped, port events go to all.
 *
 * `cons` is the oldest entry some context still needs: the minimum of the
 * contexts' private indexes, stored (release) by the application side
 * under its own lock (one writer).  The engine never overwrites an entry
 * at or after `cons`: on a full ring it counts `dropped` and signals no
 * fd, so a context that stops reading costs events to all of them, never
 * a wrong one.
 */
struct rp_async_ctl {
	uint32_t prod;			/* engine */
	uint32_t dropped;		/* engine: events lost to a full ring */
	uint8_t pad0[RP_ABI_LINE - 8];
	uint32_t cons;			/* application */
	uint8_t pad1[RP_ABI_LINE - 4];
	struct rp_async_ev ev[RP_ASYNC_EVENTS];
};

/*
 * Offset 0 of an attached process's arena: its async event ring, read by
 * that process alone.  The engine puts there the events of the process's
 * own QPs, CQs and SRQs, and every port and device event (rp_async.c).
 */
struct rp_arena_ctl {
	struct rp_async_ctl async;
	uint64_t bell[RP_BELL_WORDS];	/* its QPs' doorbell bits */
};

/* ------------------------------------------------------------- device */

/*
 * Device control block, the whole of the device region.  Attributes are
 * written by the engine at start-up; link_up is refreshed while it runs.
 */
struct rp_dev_ctl {
	uint32_t magic;
	uint32_t version;
	uint64_t region_size;
	char name[RP_DEV_NAME_LEN];
	uint8_t mac[6];
	uint8_t rsvd0[2];
	/* RoCEv2 GIDs: 0 ::ffff:a.b.c.d, 1 the link-local fe80:: from the
	 * MAC, 2.. the configured IPv6 addresses; all zero: empty */
	uint8_t gid[RP_GID_TBL_LEN][16];
	uint32_t ipv4;			/* network byte order */
	uint32_t prefix_len;
	/* prefix length of each GID's address (the RDMA CM's routing):
	 * 0 ipv4's, 1 64, 2.. the configured ones; 0 for an empty entry */
	uint8_t gid_plen[RP_GID_TBL_LEN];
	uint32_t mtu;			/* IB path MTU in bytes: 256..4096 */
	uint32_t link_up;		/* engine, relaxed */
	uint32_t link_speed;		/* Mbps */
	uint32_t max_qp;
	uint32_t max_cq;
	uint32_t max_mr;
	uint32_t max_pd;
	uint32_t max_ah;
	uint32_t max_qp_wr;
	uint32_t max_cqe;
	uint32_t max_sge;
	uint32_t max_inline;
	uint32_t max_chan;
	uint32_t port_id;		/* DPDK port */
	uint64_t sys_image_guid;
	uint32_t max_srq;
	uint32_t max_srq_wr;
	uint32_t max_srq_sge;
	/* tag matching (ibv_tm_caps); all zero: no TM */
	uint32_t tm_max_rndv_hdr_size;
	uint32_t tm_max_num_tags;
	uint32_t tm_flags;		/* IBV_TM_CAP_RC */
	uint32_t tm_max_ops;
	uint32_t tm_max_sge;
	uint32_t max_rd_atom;		/* READs in flight per QP, each way */
	uint8_t pad[RP_ABI_LINE];
	/*
	 * Wake-up handshake (as io_uring's SQ_NEED_WAKEUP): an engine about
	 * to sleep stores 1 here, fences, and re-checks its queues; a poster
	 * stores its producer index, fences, and signals the engine when it
	 * reads 1.  Written by the engine, read by applications.
	 */
	uint32_t need_wakeup;
	uint8_t pad1[RP_ABI_LINE - 4];
	/* Nothing of any process's objects: the region is every attached
	 * process's to read.  The engine's own process has its async ring
	 * and doorbells in arena 0 (struct rp_arena_ctl, rp_region.c). */
};

#endif /* _RP_ABI_H_ */
