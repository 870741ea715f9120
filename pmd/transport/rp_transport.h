/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The transport layer: QPs with their requester, responder and completer,
 * CQs and the CQE builder, SRQ and TM-SRQ, MRs, MWs, AHs, GSI, multicast.
 * Every object is owned by the engine lcore (shard) that steps it.
 */

#ifndef _RP_TRANSPORT_H_
#define _RP_TRANSPORT_H_

#include <stdbool.h>
#include <stdint.h>

#include <rte_ether.h>
#include <rte_mbuf.h>
#include <rte_hash.h>
#include <rte_spinlock.h>
#include <rte_ring.h>
#include <rte_per_lcore.h>
#include <rte_memzone.h>

#include <infiniband/verbs.h>

#include "rocepmd.h"
#include "rp_abi.h"
#include "rp_pkt.h"
#include "rp_tm_list.h"
#include "rp_port.h"
#include "rp_net.h"

#define RP_MAX_QP	4096u		/* QP table; QPN = gen << 12 | index */
#define RP_QP_IDX_BITS	12
static_assert(RP_MAX_QP == 1u << RP_QP_IDX_BITS, "QP index bits");
static_assert(RP_MAX_QP <= RP_BELL_QPS, "a doorbell bit per QP");
#define RP_MAX_CQ	1024u
/*
 * Keys (MRs and windows): index << 20 | a 20-bit generation of the slot,
 * so that a stale rkey names nothing until its slot's generation wraps.
 * A window's low 8 bits are its consumer's (ibv_inc_rkey()): a window
 * takes 256 generations of its slot (rp_key_alloc()).
 */
#define RP_MAX_MR	4096u
#define RP_KEY_GEN_BITS	20
#define RP_KEY_GEN_MASK	((1u << RP_KEY_GEN_BITS) - 1)
#define RP_KEY_IDX(k)	((k) >> RP_KEY_GEN_BITS)
static_assert(RP_MAX_MR <= 1u << (32 - RP_KEY_GEN_BITS), "key index bits");
#define RP_MAX_PD	1024u
#define RP_MAX_AH	4096u
#define RP_MAX_CHAN	256u
#define RP_MAX_RD_ATOMIC 128u	/* READs in flight per QP, each way (rxe's) */
/*
 * Send window: unacknowledged PSNs per RC QP, counted packet by packet, so
 * a message larger than the window streams within it.  256 packets (1 MiB
 * at a 4096 MTU) is half the 512 frames of af_packet's default RX ring:
 * one QP's burst never overflows the peer's ring on its own, where a
 * whole 8 MiB message back to back did, again at every go-back-N (issue 9).
 */
#define RP_WINDOW	256u
#define RP_ACKREQ_EVERY	32u		/* AckReq at least this often */
/* A READ goes out as requests of at most this many response packets, so
 * its responses, which no ACK paces, stream within the window too. */
#define RP_READ_SEG	64u
/* READ response packets per step: a burst, as a requester's step sends
 * (RP_BURST).  At 16, a READ stream's responder sent 16 frames a pass, a
 * transmit kick (a system call on af_xdp) for each 16. */
#define RP_RD_BUDGET	32u
#define RP_GRH_SIZE	40u
#define RP_MAX_SRQ	256u
#define RP_TM_RNDV_PER_QP 16u		/* rendezvous in flight per QP */
#define RP_TM_OPS_BUDGET 64u		/* list operations per pass */

struct rp_dev;
struct rp_shard;
struct rp_cq;
struct rp_srq;
struct rp_qp;
struct rp_swqe;
struct rp_xsk_rxq;

/*
 * Completions of what a QP does for someone else, not for its application:
 * the tag matcher installs them on a TM-SRQ (rp_tm.c) and the QPs on it
 * take them over, so that the CQE builder and the flush reach the tag
 * matcher without knowing it (NULL: an ordinary QP).
 */
struct rp_qp_ops {
	/* An internal send WQE retired, or was flushed, with `status`. */
	void (*wqe_done)(struct rp_qp *qp, const struct rp_swqe *s,
			 uint32_t status);
	/* The message in qp->resp.rcv ended: placed in full (SUCCESS, at
	 * its last packet `pkt`) or not (an error; pkt NULL if flushed). */
	void (*recv_done)(struct rp_qp *qp, const struct rp_pkt *pkt,
			  uint32_t status);
};

/* rp_mr.kind: what a key of the MR table names */
enum rp_key_kind {
	RP_KEY_MR = 0,			/* a memory region: lkey == rkey */
	RP_KEY_MW1,			/* a type 1 memory window (rkey only) */
	RP_KEY_MW2,			/* a type 2 memory window (rkey only) */
};

/*
 * An entry of the key table: a memory region, or a memory window
 * (rp_mw.c).  A bound window holds the view it gives of its MR (addr,
 * iova, length, access), so a remote access resolves it as an MR's.
 */
struct rp_mr {
	uint32_t key;			/* lkey == rkey; a window: its rkey */
	uint32_t pdn;
	uint32_t access;		/* IBV_ACCESS_* */
	bool valid;
	uint8_t kind;			/* enum rp_key_kind */
	bool bound;			/* window: bound (a view below) */
	bool implicit;			/* implicit ODP MR, or a window over
					 * one: any address, so every access
					 * goes through the kernel (rp_mem.c) */
	uint8_t *addr;			/* application mapping of the buffer */
	int32_t mem;			/* 0: in this process; else 1 + the
					 * host's fd of the attached process's
					 * address space (rp_mem.c) */
	uint64_t iova;			/* what keys address */
	uint64_t length;
	uint32_t nr_mw;			/* MR: windows bound to it */
	uint32_t mr_idx;		/* window: index of its MR */
	uint32_t qpn;			/* type 2 window: QP it is bound to */
};

struct rp_ah {
	bool valid;
	bool dmac_ok;			/* dmac resolved (rp_xmit_ah_ready) */
	uint8_t dmac[6];
	uint32_t pdn;
	struct rp_av av;		/* hop_limit: what is sent */
};

struct rp_chan {
	bool valid;
	int fd;				/* eventfd, EFD_SEMAPHORE; or the host's
					 * end of an attached client's socket */
	bool sock;			/* fd is a socket (rp_signal.h) */
	uint32_t nr_cq;
	uint64_t off;
	struct rp_chan_ctl *ctl;
	uint32_t prod;			/* private copy */
};

struct rp_cq {
	uint32_t cqn;
	uint32_t size;
	uint32_t log2_size;
	uint32_t prod;			/* private producer index */
	uint32_t nr_qp;			/* QPs that complete into it */
	uint32_t shard;			/* theirs (rp_shard_place()) */
	int chan;			/* channel number or -1 */
	uint64_t off;
	struct rp_cq_ctl *ctl;
	struct rp_cqe *ring;
	uint64_t overflows;
	bool overrun;			/* in an overflow episode (CQ_ERR sent) */
	uint8_t notify_pend;		/* RP_CQ_PEND_*: its pass's CQEs */
	uint32_t notify_cqes;		/* ... how many */
	uint32_t arena;			/* its process's: where its events go */
	/* ibv_modify_cq()'s moderation (rp_cq.c): an armed CQ's event
	 * waits for mod_count CQEs or mod_period after the first. */
	uint32_t mod_count;		/* 0, 1: no count */
	uint64_t mod_period;		/* TSC cycles; 0: no period */
	uint32_t mod_cqes;		/* arrived armed, not yet told */
	bool mod_sol;			/* ... a solicited or error one */
	uint64_t mod_due;		/* TSC; 0: none held (else on its
					 * shard's mod_wait[]) */
	/* Adaptive moderation (rp_cq.c): CQEs an event carried, on average
	 * (x RP_CQ_EV_SCALE), from prod at the last event. */
	uint32_t ev_prod;
	uint32_t ev_avg;
	uint32_t adapt_left;		/* least work left on a QP whose CQE
					 * it holds: fire at that many */
	bool adapt_rq;			/* ... one of them a receive's */
};

/* A CQE about to be posted leaves `left` WQEs outstanding on its queue. */
static inline void
rp_cq_left(struct rp_cq *cq, uint32_t left)
{
	if (left < cq->adapt_left)
		cq->adapt_left = left;
}

/* Engine-private state of one send WQE (same index as its private slot). */
struct rp_swqe {
	uint32_t first_psn;
	uint32_t npkts;			/* PSNs the WQE consumes */
	uint32_t length;
	uint32_t pdn;			/* PD its SGEs are checked against */
	uint32_t cookie;		/* internal: rendezvous index */
	uint8_t state;			/* enum rp_swqe_state */
	uint8_t opcode;
	uint8_t flags;
	bool internal;			/* engine-issued: no CQE of its own */
	uint32_t rd_restart;		/* READ: packet re-requested mid-way */
	bool rd_midway;			/* READ: ever re-requested mid-way */
};

static inline bool
rp_wr_is_atomic(uint8_t wr_opcode)
{
	return wr_opcode == IBV_WR_ATOMIC_CMP_AND_SWP ||
	       wr_opcode == IBV_WR_ATOMIC_FETCH_AND_ADD;
}

/* READ and atomic requests: their responses land in the WQE's SGEs. */
static inline bool
rp_wr_fills_sge(uint8_t wr_opcode)
{
	return wr_opcode == IBV_WR_RDMA_READ || rp_wr_is_atomic(wr_opcode);
}

/* Messages that take a receive WQE at the responder (end-to-end
 * credits, IBTA 9.7.7.2). */
static inline bool
rp_wr_takes_rwqe(uint8_t wr_opcode)
{
	return wr_opcode == IBV_WR_SEND || wr_opcode == IBV_WR_SEND_WITH_IMM ||
	       wr_opcode == IBV_WR_SEND_WITH_INV ||
	       wr_opcode == IBV_WR_RDMA_WRITE_WITH_IMM;
}

/* READ, atomic and ATOMIC WRITE requests: answered by responses (an
 * ATOMIC WRITE by an empty READ response), counted against max_rd_atomic
 * (the responder queues their answers with the READs'). */
static inline bool
rp_wr_is_rd_atomic(uint8_t wr_opcode)
{
	return rp_wr_fills_sge(wr_opcode) || wr_opcode == IBV_WR_ATOMIC_WRITE;
}

enum rp_swqe_state {
	RP_SWQE_NEW = 0,
	RP_SWQE_SENDING,
	RP_SWQE_SENT,			/* all packets out, awaiting ACK/response */
	RP_SWQE_DONE,
};

/*
 * A READ or an atomic the responder still owes response packets for (IBTA
 * 9.7.5.3: they share the max_dest_rd_atomic resources).  An atomic owes
 * one ATOMIC ACKNOWLEDGE carrying `orig`.
 */
struct rp_rd_resp {
	uint32_t psn;			/* PSN of the next response */
	uint32_t npkts_left;
	uint32_t first_psn;
	uint32_t last_psn;
	uint64_t va;			/* next byte to send */
	uint32_t left;			/* bytes left */
	uint32_t total;
	struct rp_mr *mr;
	uint32_t key;			/* mr->key when queued */
	bool valid;
	bool replay;			/* queued again by a duplicate */
	bool sel;			/* ... asked for alone (rp_sr_read.c) */
	bool ahead;			/* asked for so: before the READs */
	bool atomic;			/* an ATOMIC ACKNOWLEDGE, of orig */
	uint64_t orig;
};

/*
 * The result of an atomic the responder executed, kept so that a
 * duplicate of its request is answered again without executing twice
 * (IBTA 9.7.5.3).  The last rd_size atomics are kept: a requester
 * has at most max_rd_atomic <= max_dest_rd_atomic of them outstanding.
 */
struct rp_atom_res {
	uint32_t psn;
	bool valid;
	uint64_t orig;
};

/* Where the message being received lands. */
enum rp_rcv_kind {
	RP_RCV_RQ = 0,			/* the QP's receive queue */
	RP_RCV_SRQ,			/* an SRQ buffer (TM: unexpected) */
	RP_RCV_SRQ_NO_TAG,		/* TM: NO_TAG or FIN, untagged buffer */
	RP_RCV_TAG,			/* TM: a matched tagged buffer */
};

/* Receive WQE being filled by a multi-packet SEND. */
struct rp_rcv_state {
	bool active;
	uint8_t kind;			/* enum rp_rcv_kind */
	uint32_t idx;			/* RQ slot; RP_RCV_TAG: tag slot */
	uint32_t offset;		/* bytes written */
	uint32_t skip;			/* TM: bytes of the next packet not placed */
	uint32_t pdn;			/* PD of the buffer */
	bool held;			/* SRQ WQE kept for the next message (UC) */
	bool tm_rndv;			/* matched RNDV: a READ brings the data */
	bool tm_incomplete;		/* RNDV larger than the tagged buffer */
	bool tm_match_sent;		/* MATCH CQE already posted */
	struct rp_recv_wqe wqe;
	struct rp_sge sge[RP_MAX_SGE];
};

/* rp_tm_slot.state */
enum rp_tag_state {
	RP_TAG_FREE = 0,		/* the application's to allocate */
	RP_TAG_LISTED,			/* posted, matchable */
	RP_TAG_BUSY,			/* matched: a CQE still has to name it */
};

/* Engine state of one tag slot of a TM-SRQ (index = handle's low bits). */
struct rp_tm_slot {
	uint32_t handle;
	uint8_t state;			/* enum rp_tag_state */
	uint8_t num_sge;
	uint64_t recv_wr_id;
	struct rp_sge sge;
	uint64_t tag;			/* of the message that matched */
	uint32_t priv;
};

/* Tag matching state of a TM-SRQ (rp_tm.c). */
struct rp_tm {
	struct rp_wq_hdr *ops;		/* list-operation ring (shared) */
	struct rp_tm_op *op;
	uint64_t ops_off;
	uint32_t ops_size;
	uint32_t ops_cons;		/* private consumer index */
	uint32_t max_ops;
	struct rp_tm_free *free;	/* slots given back (shared) */
	uint64_t free_off;
	uint32_t free_size;
	uint32_t free_prod;		/* private producer index */
	uint32_t max_tags;
	struct rp_tm_slot *slot;	/* max_tags */
	struct rp_tm_list list;
	uint32_t unexp;			/* U: unexpected messages delivered */
	uint32_t sw_cnt;		/* S: software's count, last reported */
};

struct rp_srq {
	uint32_t srqn;
	uint32_t idx;
	uint32_t pdn;
	struct rp_dev *dev;
	struct rp_cq *cq;		/* TM: every completion goes here */
	uint64_t off;
	struct rp_wq_hdr *wq;		/* receive ring (shared) */
	uint8_t *buf;
	uint32_t size;
	uint32_t stride;
	uint32_t cons;			/* private consumer index */
	uint32_t max_wr;
	uint32_t max_sge;
	uint32_t limit;			/* armed SRQ limit, 0: none */
	uint32_t nr_qp;
	uint32_t shard;			/* its QPs' (rp_shard_place()) */
	bool err;			/* SRQ_ERR reported */
	struct rp_tm *tm;		/* TM-SRQ, or NULL */
	const struct rp_qp_ops *ops;	/* TM-SRQ: the tag matcher's hooks */
	uint32_t arena;			/* its process's: where its events go */
};

/* A rendezvous a QP is serving: READ the sender's data, then FIN. */
struct rp_rndv {
	bool busy;
	bool fin;			/* the FIN is queued (READ done) */
	uint32_t tag;			/* tag slot index */
	uint32_t len;			/* RVH.len */
	uint8_t hdr[RP_TMH_SIZE + RP_RVH_SIZE];	/* the request's TMH, RVH */
};

/* Single resends a requester remembers the generation of (rp_sr.c). */
#define RP_RG_SLOTS	32u

struct rp_qp {
	uint32_t qpn;
	uint32_t idx;
	uint32_t type;			/* enum ibv_qp_type */
	uint32_t state;			/* enum ibv_qp_state */
	uint32_t pdn;
	struct rp_dev *dev;
	struct rp_cq *scq;
	struct rp_cq *rcq;		/* TM-SRQ: the SRQ's CQ */
	struct rp_srq *srq;		/* or NULL */
	const struct rp_qp_ops *ops;	/* the SRQ's hooks, or NULL */
	struct rp_rndv *rndv;		/* TM-SRQ: RP_TM_RNDV_PER_QP, or NULL */
	uint32_t nr_rndv;		/* busy entries of rndv */
	bool sq_sig_all;
	struct rp_qp_caps caps;
	struct rp_gsi_agent *gsi;	/* a GSI agent's (rp_gsi.c), or NULL */
	struct rp_sr *sr;		/* RC, selective_retx: rp_sr.c */

	/* attributes */
	uint32_t mtu;			/* path MTU, bytes */
	uint32_t path_mtu;		/* enum ibv_mtu */
	uint32_t qkey;
	uint32_t dest_qpn;
	uint32_t access;
	uint16_t pkey_index;
	uint8_t port_num;
	uint8_t timeout;
	uint8_t retry_cnt;
	uint8_t rnr_retry;
	uint8_t min_rnr_timer;
	uint8_t max_rd_atomic;
	uint8_t max_dest_rd_atomic;
	uint8_t sq_draining;
	uint8_t en_sqd_async_notify;	/* as the last move to SQD set it */
	struct rp_av av;		/* hop_limit: what is sent */
	struct rp_pkt_addr addr;	/* L2-L4 of outgoing packets (RC, UC) */
	bool addr_ok;			/* addr.dmac resolved (rp_xmit_ready) */
	bool peer_nc;			/* RC/UC: the peer's last frame said
					 * RP_BTH_NC (rp_xmit_send()) */
	uint32_t addr_gen;		/* its shard's arp_gen addr.dmac was read at */

	/*
	 * READs the responder owes responses for, a FIFO of rd_size (a power
	 * of two >= max_dest_rd_atomic) indexed by resp.rd_head/rd_tail;
	 * sized when max_dest_rd_atomic is set, NULL until then.
	 */
	struct rp_rd_resp *rd;
	uint32_t rd_size;
	struct rp_atom_res *atom;	/* rd_size, in rd's allocation */

	/*
	 * Send queue.  The application's ring (shared) is copied in order
	 * into a private one, where the requester and completer work; the
	 * engine's own requests (rendezvous READs and FINs of a TM-SRQ) are
	 * queued there too, in slots reserved for them, so they share the
	 * QP's PSN stream without drawing on the application's credits.
	 * Shared cons counts the application's WQEs retired.
	 */
	uint64_t sq_off;
	struct rp_wq_hdr *sq;
	uint8_t *app_sq_buf;
	uint32_t app_sq_size;
	uint32_t app_sq_stride;
	uint32_t app_ingest;		/* next application WQE to copy */
	uint32_t app_cons;		/* application WQEs retired */
	uint8_t *sq_buf;		/* private ring */
	uint32_t sq_size;
	uint32_t sq_stride;
	uint32_t sq_prod;		/* private producer index */
	uint32_t int_rsv;		/* private slots for internal WQEs */
	uint32_t int_out;		/* internal WQEs not yet retired */
	struct rp_swqe *swqe;		/* sq_size entries */

	/* receive queue */
	uint64_t rq_off;
	struct rp_wq_hdr *rq;
	uint8_t *rq_buf;
	uint32_t rq_size;
	uint32_t rq_stride;
	uint32_t rq_cons;		/* private consumer index */

	/* requester */
	struct {
		uint32_t psn;		/* next PSN to send */
		uint32_t head;		/* SQ index being sent or next */
		uint32_t hi;		/* one past the last WQE ever started */
		uint32_t max_psn;	/* PSN after the last one ever sent */
		bool inprog;		/* head is partly sent */
		uint32_t off;		/* bytes of head already sent */
		uint32_t pkt;		/* packets of head already sent */
		uint32_t rd_out;	/* outstanding READs and atomics */
		uint64_t rnr_until;	/* TSC: no sending before */
		bool rnr_wait;
		bool flight_held;	/* waiting for flight_window */
		bool tail_probe;	/* the packet being sent asks for
					 * every gap (rp_sr.c) */
		bool probe_ack;		/* ... asks for an answer (a probe
					 * of one packet, rp_comp_timer.c) */
		/* IBTA 9.7.7.2: the peer's end-to-end credits.  csn counts
		 * the messages ever started that take a receive WQE; one
		 * whose count passes csn_limit waits (req_credit_ok()).
		 * credits: the last ACK gave a count. */
		uint32_t csn;
		uint32_t csn_limit;
		bool credits;
		uint8_t rg;		/* resend generation, 1-15 (rp_sr.c) */
		uint32_t mod_end;	/* PSN after the last request sent
					 * that is not a READ (RP_BTH_RO) */
	} req;

	/* completer */
	struct {
		uint32_t tail;		/* oldest unretired SQ index */
		uint32_t rd_psn;	/* next expected READ response PSN */
		uint32_t una;		/* oldest PSN not acknowledged */
		bool rd_retried;	/* READ re-requested from rd_psn */
		uint64_t deadline;	/* retransmit timer, TSC; 0 = idle */
		uint8_t probes;		/* early resends of this stall */
		uint8_t backoff;	/* the timer's doublings (rp_req.c) */
		bool heard;		/* a response since the timer
					 * started, progress or a timeout */
		uint64_t quiet_tsc;	/* last progress, or the first send
					 * after none was outstanding */
		uint64_t probe_tsc;	/* this stall's last probe */
		uint64_t probe_floor;	/* learned: the peer's silences,
					 * TSC (rp_comp.c); 0: none */
		uint32_t undo_cwnd;	/* the window before a probe's cut */
		uint32_t undo_ssthresh;
		uint32_t rtt_psn;	/* an ACK up to it ends the RTT sample */
		uint64_t rtt_tsc;	/* its send time; 0 = no sample */
		bool rtt_rd;		/* ... a READ's, to its first response */
		uint64_t srtt;		/* smoothed RTT in TSC cycles, 0: none */
		uint64_t rttvar;	/* its mean deviation (RFC 6298) */
		uint32_t cwnd;		/* packets in flight at most; 0: RP_WINDOW */
		uint32_t cwnd_acc;	/* packets acked toward the next +1 */
		uint32_t ssthresh;	/* below it the window doubles a trip */
		uint32_t recover_psn;	/* no new cut until una passes it */
		bool probe_cut;		/* ... and the cut was a probe's */
		uint64_t loss_tsc;	/* the last loss seen: a sequence
					 * NAK, a READ response past a gap,
					 * a probe answered in time */
		bool one_out;		/* a probe of one packet is out */
		uint32_t one_una;	/* ... sent when una stood here */
		uint32_t one_psn;	/* ... and all before this was sent */
		bool one_last;		/* the stall's last probe was one */
		uint8_t one_acks;	/* progress since, up to 2 */
		bool tx_full;		/* the timer found the port's
					 * transmit queue full last */
		uint32_t retry_left;
		uint32_t rnr_left;
		uint32_t last_nak_psn;
		uint32_t csn_acked;	/* of req.csn's, retired */
		uint32_t sr_psn;	/* the last selective resend (rp_sr.c) */
		uint64_t sr_tsc;	/* ... and when */
		/* single resends by PSN slot: the PSN and its generation */
		uint32_t rg_psn[RP_RG_SLOTS];
		uint8_t rg_gen[RP_RG_SLOTS];
		uint64_t sr_loss_tsc;	/* the last loss the peer's
					 * selective NAK or a READ response
					 * past a gap showed */
		bool peer_sr;		/* a selective NAK came: the peer
					 * keeps what follows a gap */
	} comp;

	/* responder */
	struct {
		uint32_t epsn;		/* expected PSN */
		uint32_t msn;
		uint8_t last_op;	/* opcode of the previous request */
		bool nak_sent;		/* sequence NAK sent for epsn */
		bool peer_sr;		/* the requester takes selective
					 * NAKs (rp_sr.c) */
		bool peer_nb;		/* ... and reads NAK maps */
		uint8_t nak_held;	/* a selective NAK held for the
					 * pass's end: RP_NAK_HELD_* */
		uint32_t nak_psn;	/* ... its PSN */
		uint32_t nak_map;	/* ... and its map (RP_BTH_NB) */
		uint32_t sr_hi;		/* highest PSN kept or NAKed past a
					 * gap (rp_sr.c) */
		uint32_t sr_since;	/* packets kept since epsn's NAK */
		uint8_t rg_seen;	/* the newest request's generation */
		uint8_t rg_nak;		/* ... when epsn was last NAKed */
		bool nak_sr;		/* that NAK was selective */
		uint32_t oos_psn;	/* highest PSN dropped since that NAK */
		uint32_t cred_lim;	/* the RQ index the last ACK's credit
					 * count let the requester reach */
		struct rp_rcv_state rcv;
		/* RDMA WRITE in progress: its rkey, looked up again for
		 * every packet (the MR may go, or its slot be reused) */
		uint32_t wr_rkey;
		uint64_t wr_va;
		uint32_t wr_left;
		uint32_t wr_total;
		/* READs and atomics owed: qp->rd[] */
		uint32_t rd_head;
		uint32_t rd_tail;
		uint32_t rd_sel;	/* of them, runs asked for alone */
		uint32_t atom_next;	/* next slot of qp->atom[] */
		/* An ACK waits for the READ responses queued before it
		 * (IBTA 9.7.5.1: responses go in PSN order), and an ACK or
		 * NAK for the peer's MAC (ARP); the latest says it all. */
		bool ack_owed;
		uint8_t ack_syn;
		uint32_t ack_psn;
		bool comm_est;		/* COMM_EST reported (first in RTR) */
		uint64_t cnp_tsc;	/* TSC of the last CNP sent, 0: none */
	} resp;

	/* DCQCN's reaction point (rp_dcqcn.c): the rate CNPs set */
	struct rp_dcqcn {
		bool limited;		/* paced at rate_kbps; else line */
		bool cnp_seen;		/* a CNP in this alpha period */
		bool waiting;		/* held back by the rate */
		uint32_t rate_kbps;	/* current rate */
		uint32_t target_kbps;	/* the rate before the last cut */
		uint32_t loss_kbps;	/* the rate of the last loss, or 0 */
		uint32_t alpha;		/* Q10 */
		uint32_t t_events;	/* timer events since the cut */
		uint32_t bc_events;	/* byte counter events since */
		uint32_t bytes;		/* toward the next byte event */
		uint64_t alpha_next;	/* TSC of the next alpha update */
		uint64_t inc_next;	/* of the next timer event */
		uint64_t cut_next;	/* no cut before */
		uint64_t next_tx;	/* no packet before */
	} cc;

	bool flushing;			/* in ERR: the lcore flushes (rp_qp_flush) */
	uint32_t err_status;		/* status of the WQE at comp.tail when
					 * the QP entered ERR (else FLUSH_ERR) */
	/*
	 * In the device's active list: the QPs a pass steps, those with
	 * something to do (rp_qp_wake()); a pass drops the ones it leaves
	 * with nothing (rp_qp_quiet()).
	 */
	bool active;
	uint32_t shard;			/* the one that steps it */
	uint32_t arena;			/* where its rings and doorbell are */
	bool sqd_notify;		/* SQD: report SQ_DRAINED when drained */
	bool last_wqe_sent;		/* SRQ: LAST_WQE_REACHED reported */
};

/* A multicast group UD QPs of the device joined (ibv_attach_mcast). */
struct rp_mcast {
	uint8_t gid[16];
	struct rte_ether_addr mac;	/* its Ethernet group address */
	uint32_t nr_qp;			/* 0: free */
	uint32_t qpn[RP_MCAST_QPS];
};

/* GSI agents per device (tags 1..RP_GSI_AGENTS-1; tag 0 is none) */
#define RP_GSI_AGENTS	128u

/* ---- rp_mr.c */
int rp_pd_alloc(struct rp_dev *dev, struct rp_ctrl_pd *pd);
int rp_pd_free(struct rp_dev *dev, struct rp_ctrl_pd *pd);
int rp_mr_reg(struct rp_dev *dev, struct rp_ctrl_mr *mr);
int rp_mr_dereg(struct rp_dev *dev, struct rp_ctrl_mr *mr);
int rp_ah_create(struct rp_dev *dev, struct rp_ctrl_ah *ah);
int rp_ah_destroy(struct rp_dev *dev, struct rp_ctrl_ah *ah);
struct rp_mr *rp_mr_lookup(struct rp_dev *dev, uint32_t key, uint32_t pdn,
			   uint64_t va, uint64_t len, uint32_t access);
const uint8_t *rp_sge_direct(struct rp_dev *dev, uint32_t pdn,
			     const struct rp_sge *sge, uint32_t nsge,
			     uint32_t off, uint32_t len);
int rp_sge_copy_out(struct rp_dev *dev, uint32_t pdn, const struct rp_sge *sge,
		    uint32_t nsge, uint32_t off, uint8_t *dst, uint32_t len,
		    uint64_t tag);
int rp_sge_copy_in(struct rp_dev *dev, uint32_t pdn, const struct rp_sge *sge,
		   uint32_t nsge, uint32_t off, const uint8_t *src,
		   uint32_t len);
/* The same from a received packet's payload (rp_mem_write()'s pkt). */
int rp_sge_copy_in_pkt(struct rp_dev *dev, uint32_t pdn,
		       const struct rp_sge *sge, uint32_t nsge, uint32_t off,
		       const uint8_t *src, uint32_t len);
int rp_sge_check(struct rp_dev *dev, uint32_t pdn, const struct rp_sge *sge,
		 uint32_t nsge, uint32_t access, uint64_t *total);
int rp_mr_rereg(struct rp_dev *dev, struct rp_ctrl_mr *mr);
struct rp_mr *rp_key_entry(struct rp_dev *dev, uint32_t key);

struct rp_mr *rp_key_alloc(struct rp_dev *dev, uint8_t kind, uint32_t pdn);

/* ---- rp_mw.c */
int rp_mw_alloc(struct rp_dev *dev, struct rp_ctrl_mw *mw);
int rp_mw_dealloc(struct rp_dev *dev, struct rp_ctrl_mw *mw);
struct rp_mr *rp_rkey_lookup(struct rp_qp *qp, uint32_t rkey, uint64_t va,
			     uint64_t len, uint32_t access);
uint32_t rp_mw_bind(struct rp_qp *qp, const struct rp_send_wqe *w);
int rp_key_invalidate(struct rp_qp *qp, uint32_t rkey);
void rp_mw_qp_gone(struct rp_dev *dev, uint32_t qpn);

/* ---- rp_cq.c */
int rp_cq_create(struct rp_dev *dev, struct rp_ctrl_cq *cq);
int rp_cq_destroy(struct rp_dev *dev, struct rp_ctrl_cq *cq);
int rp_cq_resize(struct rp_dev *dev, struct rp_ctrl_cq *cq);
struct rp_cq *rp_cq_get(struct rp_dev *dev, uint32_t cqn);
int rp_cq_post(struct rp_dev *dev, struct rp_cq *cq, const struct rp_cqe *cqe);
void rp_cq_notify_flush(struct rp_shard *sh);
int rp_cq_moderate(struct rp_dev *dev, struct rp_ctrl_cq_mod *c);
void rp_cq_mod_poll(struct rp_shard *sh, uint64_t now);
uint64_t rp_cq_mod_next(const struct rp_shard *sh);
void rp_cq_mod_release(struct rp_dev *dev, struct rp_cq *cq, bool fire);
int rp_chan_create(struct rp_dev *dev, struct rp_ctrl_chan *ch);
int rp_chan_destroy(struct rp_dev *dev, struct rp_ctrl_chan *ch);

/* ---- rp_cqe.c (every CQE is built here; rp_cq_post publishes it) */
void rp_cqe_send(struct rp_qp *qp, uint32_t idx, uint32_t status);
void rp_cqe_recv(struct rp_qp *qp, const struct rp_pkt *pkt, uint32_t status,
		 uint32_t opcode, uint32_t byte_len);
void rp_cqe_rq_flush(struct rp_qp *qp);
void rp_cqe_from_pkt(struct rp_cqe *cqe, const struct rp_qp *qp,
		     const struct rp_pkt *pkt);
void rp_cqe_tm_tag(struct rp_cqe *cqe, const struct rp_qp *qp,
		   const struct rp_tm_slot *slot);
void rp_cqe_tm_data(struct rp_cqe *cqe, const struct rp_qp *qp,
		    const struct rp_tm_slot *slot);
void rp_cqe_tm_recv(struct rp_cqe *cqe, const struct rp_qp *qp,
		    uint32_t status);
void rp_cqe_tm_op(struct rp_srq *srq, uint64_t wr_id, uint32_t opcode,
		  uint32_t status, uint32_t wc_flags);

/* ---- rp_srq.c */
int rp_srq_create(struct rp_dev *dev, struct rp_ctrl_srq *c);
int rp_srq_modify(struct rp_dev *dev, struct rp_ctrl_srq *c);
int rp_srq_query(struct rp_dev *dev, struct rp_ctrl_srq *c);
int rp_srq_destroy(struct rp_dev *dev, struct rp_ctrl_srq *c);
struct rp_srq *rp_srq_get(struct rp_dev *dev, uint32_t srqn);
bool rp_srq_take(struct rp_srq *srq, struct rp_rcv_state *r);
void rp_srq_corrupt(struct rp_srq *srq, const char *what, uint32_t val);

/* ---- rp_tm.c (TM-SRQ: list operations, matching, rendezvous) */
int rp_tm_srq_create(struct rp_dev *dev, struct rp_ctrl_srq *c);
int rp_tm_srq_destroy(struct rp_dev *dev, struct rp_ctrl_srq *c);
bool rp_tm_ops_poll(struct rp_srq *srq);
int rp_tm_recv_first(struct rp_qp *qp, const struct rp_pkt *pkt);

/* ---- rp_qp.c: QP objects and the verbs state machine (control path) */
int rp_qp_create(struct rp_dev *dev, struct rp_ctrl_qp_create *c);
int rp_qp_modify(struct rp_dev *dev, struct rp_ctrl_qp *m);
int rp_qp_query(struct rp_dev *dev, struct rp_ctrl_qp *m);
int rp_qp_destroy(struct rp_dev *dev, struct rp_ctrl_qp *m);

/* ---- rp_pass.c: the pass over a QP, above requester/responder/completer */
void rp_qp_bells(struct rp_dev *dev);
bool rp_qp_step(struct rp_qp *qp, uint64_t now, bool *quiet);
bool rp_qp_flush(struct rp_qp *qp);
bool rp_qp_flush_wqes(struct rp_qp *qp, bool app);
void rp_qp_drain_unreliable(struct rp_qp *qp);
void rp_qp_drain_pd(struct rp_dev *dev, uint32_t pdn);

/* ---- rp_qp_err.c: below requester/responder/completer */
struct rp_qp *rp_qp_get(struct rp_dev *dev, uint32_t qpn);
uint32_t rp_mtu_bytes(uint32_t ibv_mtu);
void rp_qp_error(struct rp_qp *qp, uint32_t status);
void rp_qp_error_event(struct rp_qp *qp, uint32_t status, uint32_t event);
void rp_qp_sqd_check(struct rp_qp *qp);

static inline struct rp_send_wqe *
rp_sq_wqe(const struct rp_qp *qp, uint32_t idx)
{
	return (struct rp_send_wqe *)(qp->sq_buf +
			(size_t)(idx & (qp->sq_size - 1)) * qp->sq_stride);
}

static inline struct rp_recv_wqe *
rp_rq_wqe(const struct rp_qp *qp, uint32_t idx)
{
	return (struct rp_recv_wqe *)(qp->rq_buf +
			(size_t)(idx & (qp->rq_size - 1)) * qp->rq_stride);
}

static inline struct rp_swqe *
rp_swqe(const struct rp_qp *qp, uint32_t idx)
{
	return &qp->swqe[idx & (qp->sq_size - 1)];
}

/* ---- rp_gsi.c */
int rp_gsi_init(struct rp_dev *dev);
void rp_gsi_fini(struct rp_dev *dev);
int rp_gsi_agent_add(struct rp_dev *dev, struct rp_qp *qp);
void rp_gsi_agent_del(struct rp_dev *dev, struct rp_qp *qp);
uint32_t rp_gsi_comm_prefix(const struct rp_qp *qp);
bool rp_gsi_send_ok(const struct rp_qp *qp, const uint8_t *mad,
		     uint32_t len);
struct rp_qp *rp_gsi_route(struct rp_dev *dev, const struct rp_pkt *pkt);
int rp_gsi_bind(struct rp_dev *dev, struct rp_ctrl_gsi_bind *m);
int rp_gsi_will(struct rp_dev *dev, struct rp_ctrl_gsi_will *m);
/* The QP number a QP's packets carry as their source: 1 for an agent. */
static inline uint32_t
rp_qp_wire_qpn(const struct rp_qp *qp)
{
	return qp->gsi != NULL ? 1u : qp->qpn;
}

/* ---- rp_mcast.c */
int rp_mcast_attach(struct rp_dev *dev, struct rp_ctrl_mcast *c);
int rp_mcast_detach(struct rp_dev *dev, struct rp_ctrl_mcast *c);
void rp_mcast_qp_gone(struct rp_dev *dev, uint32_t qpn);
struct rp_mcast *rp_mcast_find(struct rp_dev *dev, const uint8_t gid[16]);
bool rp_mcast_l2_for_us(const struct rp_dev *dev,
			const struct rte_ether_addr *dst);

/* ---- rp_recv.c */
void rp_recv_burst(struct rp_dev *dev, struct rte_mbuf **pkts, uint16_t n);

/* rp_xmit.c: a small burst's positive ACKs leave after its requests, as
 * the shard's pass flushes it */
void rp_xmit_acks_last(struct rp_port_q *pq);

/* ---- rp_req.c (requester) */
bool rp_req_step(struct rp_qp *qp);
uint32_t rp_req_ingest(struct rp_qp *qp);
int rp_req_post_internal(struct rp_qp *qp, const struct rp_send_wqe *w,
			 const void *body, uint32_t body_len, uint32_t pdn,
			 uint32_t cookie);
void rp_req_arm_timer(struct rp_qp *qp);
/* The QP's retry timeout now (IBTA's, at least 1 ms, backed off), TSC. */
uint64_t rp_req_timeout_cycles(const struct rp_qp *qp);
bool rp_req_send_packet(struct rp_qp *qp);

/* ---- rp_req_resend.c (the requester's resends) */
bool rp_req_rewind(struct rp_qp *qp, uint32_t psn);

/* ---- rp_cnp.c (ECN: notification and reaction points) */
void rp_cnp_np(struct rp_qp *qp, const struct rp_pkt *pkt);
void rp_cnp_rp(struct rp_qp *qp);

/* ---- rp_dcqcn.c: the reaction point ---- */

/* A CNP for qp: the first limits its rate, each cuts it (one per
 * dcqcn_reduce_us). */
void rp_dcqcn_cnp(struct rp_qp *qp);
/* A loss (once a window) or a timeout while CNPs pace qp: rate and
 * target halve. */
void rp_dcqcn_loss(struct rp_qp *qp);
/* A limited QP's next packet: true if its rate lets it go now. */
bool rp_dcqcn_pace(struct rp_qp *qp);
/* A limited QP sent `bytes`: its next send time moves on. */
void rp_dcqcn_charge(struct rp_qp *qp, uint32_t bytes);
/* How long its rate holds back the packet after one of `bytes` (TSC). */
uint64_t rp_dcqcn_hold(const struct rp_qp *qp, uint32_t bytes);
/* RP_CTRL_QP_CC: a QP's window and rate, for telemetry. */
int rp_dcqcn_query(struct rp_dev *dev, struct rp_ctrl_qp_cc *o);

/* ---- rp_comp.c, rp_comp_timer.c (completer) */
void rp_comp_input(struct rp_qp *qp, const struct rp_pkt *pkt);
bool rp_comp_timer(struct rp_qp *qp, uint64_t now);

/* Early resends of a stall before the timeout (rp_req.c, rp_comp_timer.c). */
#define RP_PROBE_MAX	3u
/* Toward a peer that keeps (rp_sr.c), a probe sends one or a few small
 * packets, and fails as often as one of them is lost (19% under 10%
 * loss each way): two more come before the one that goes back N, whose
 * failure leaves the QP's timeout (67 ms at perftest's 14). */
#define RP_PROBE_MAX_SR	5u
/* The retransmit timer (rp_req.c, rp_comp_timer.c): at most this many times
 * the QP's timeout, after four round trips of a slow peer or doublings
 * while it answers, up to RP_RTO_BACKOFF_MAX of them. */
#define RP_RTO_STRETCH		16u
#define RP_RTO_BACKOFF_MAX	4u

/* The requester's window: at most this many packets unacknowledged. */
static inline uint32_t
rp_qp_window(const struct rp_qp *qp)
{
	return qp->comp.cwnd != 0 ? qp->comp.cwnd : RP_WINDOW;
}

/* ---- rp_resp.c (responder) */
void rp_resp_input(struct rp_qp *qp, const struct rp_pkt *pkt);
bool rp_resp_step(struct rp_qp *qp);
void rp_resp_send_ack(struct rp_qp *qp, uint8_t syn, uint32_t psn);

/* An ACK is owed and may go: not past READ responses still queued (the
 * requester would take it for an implicit NAK of them), unless flushing. */
static inline bool
rp_resp_ack_due(const struct rp_qp *qp)
{
	return qp->resp.ack_owed &&
	       (qp->flushing || qp->resp.rd_tail == qp->resp.rd_head);
}
/* rp_resp_send_ack()'s psn with these: a selective NAK, of this PSN
 * only (rp_sr.c) */
#define RP_ACK_SR	0x80000000u
#define RP_ACK_SR_ONE	0x40000000u
#define RP_NAK_NO_MAP	UINT32_MAX
enum { RP_NAK_HELD_NONE, RP_NAK_HELD_GAP, RP_NAK_HELD_ONE };
void rp_resp_send_nak_map(struct rp_qp *qp, uint32_t psn, uint32_t map);
bool rp_resp_execute(struct rp_qp *qp, const struct rp_pkt *pkt);
void rp_resp_read_passed(struct rp_qp *qp, const struct rp_pkt *pkt,
			 uint32_t npkts);
void rp_resp_ack_now(struct rp_qp *qp);
void rp_resp_nak_gap(struct rp_qp *qp);
void rp_resp_nak_one(struct rp_qp *qp, uint32_t psn);
void rp_sr_nak_flush(struct rp_qp *qp);

/* ---- rp_sr.c: selective retransmission */
/* PSNs past the expected one that a responder keeps: a requester's
 * window */
#define RP_SR_WIN	RP_WINDOW
struct rp_sr {
	uint32_t n;				/* packets kept */
	uint32_t psn[RP_SR_WIN];
	uint32_t span[RP_SR_WIN];		/* PSNs each holds */
	struct rte_mbuf *m[RP_SR_WIN];		/* by PSN % RP_SR_WIN */
	uint8_t early[RP_SR_WIN];		/* a READ answered when kept */
	/* Requester: READ responses placed past a lost one, and the
	 * missing ones asked for again (rp_sr_read.c), by PSN % RP_SR_WIN:
	 * the PSN | RP_SR_RD_SET. */
	uint32_t rd_got[RP_SR_WIN];
	uint32_t rd_asked[RP_SR_WIN];
	uint64_t rd_ask_tsc[RP_SR_WIN];		/* when asked */
	uint32_t rd_hi;				/* one past the highest placed */
	/* READ requests answered whole past a gap, by their last PSN %
	 * RP_SR_WIN (| RP_SR_RD_SET), and how many: not outstanding at
	 * the responder any more (rp_sr_rd_answered()). */
	uint32_t rd_ans[RP_SR_WIN];
	uint32_t rd_ans_n;
};
#define RP_SR_RD_SET	0x80000000u
int rp_sr_alloc(struct rp_qp *qp);
void rp_sr_flush(struct rp_qp *qp);
void rp_sr_free(struct rp_qp *qp);
bool rp_sr_keep(struct rp_qp *qp, const struct rp_pkt *pkt, int32_t gap);
void rp_sr_drain(struct rp_qp *qp);
bool rp_sr_rd_early(struct rp_qp *qp, const struct rp_pkt *pkt);
void rp_sr_gaps(struct rp_qp *qp, uint32_t psn);
void rp_sr_report(struct rp_qp *qp, uint32_t psn);
bool rp_req_resend_one(struct rp_qp *qp, uint32_t psn);

/* Resend generations (RP_BTH_RG, rp_sr.c): 1 to 15 in turn. */
static inline uint8_t
rp_rg_cur(struct rp_qp *qp)
{
	if (qp->req.rg == 0)
		qp->req.rg = 1;
	return qp->req.rg;
}

/* A request of a requester with selective retransmission: its bits
 * (RP_SR_ON, RP_SR_ONE), its generation, and "I read NAK maps". */
static inline void
rp_req_mark_sr(struct rp_qp *qp, void *bth, uint8_t sr)
{
	rp_bth_set_sr(bth, sr);
	rp_bth_set_rg(bth, rp_rg_cur(qp));
	rp_bth_set_nb(bth);
}

/* Whether generation `a` is `b` or one of the 6 after it. */
static inline bool
rp_rg_since(uint8_t a, uint8_t b)
{
	return (uint8_t)((a + 15u - b) % 15u) < 7u;
}
bool rp_req_tail_probe(struct rp_qp *qp);
bool rp_req_probe_one(struct rp_qp *qp);
bool rp_req_read_again(struct rp_qp *qp, uint32_t psn, uint32_t n);
bool rp_sr_rd_keep(struct rp_qp *qp, const struct rp_pkt *pkt);
bool rp_comp_rd_fits(const struct rp_qp *qp, const struct rp_swqe *s,
		     uint32_t k, const struct rp_pkt *pkt);
bool rp_sr_rd_take(struct rp_qp *qp, uint32_t psn);
bool rp_sr_rd_ahead(const struct rp_qp *qp);
void rp_sr_rd_forget(struct rp_qp *qp);
void rp_sr_rd_ans_reset(struct rp_qp *qp);
void rp_sr_rd_seg_taken(struct rp_qp *qp, uint32_t last);
uint32_t rp_sr_rd_ask(struct rp_qp *qp, uint32_t upto, uint64_t after,
		      uint64_t before);

/* num/den of a round trip, or never while none was measured. */
static inline uint64_t
rp_sr_rd_after(const struct rp_qp *qp, uint64_t num, uint64_t den)
{
	return qp->comp.srtt != 0 ? qp->comp.srtt * num / den : UINT64_MAX;
}

/*
 * READ requests the responder has answered whole though the completer
 * has not taken them (rp_sr_read.c): they do not count against
 * max_rd_atomic.  Never more than are counted.
 */
static inline uint32_t
rp_sr_rd_answered(const struct rp_qp *qp)
{
	uint32_t n = qp->sr != NULL ? qp->sr->rd_ans_n : 0;

	return n < qp->req.rd_out ? n : qp->req.rd_out;
}

/* The requester takes READ responses out of order (rp_sr_read.c). */
static inline bool
rp_sr_rd_on(const struct rp_qp *qp)
{
	return qp->sr != NULL && qp->comp.peer_sr;
}

/* A READ at the tail whose responses such a peer owes. */
static inline bool
rp_sr_rd_tail(const struct rp_qp *qp)
{
	return rp_sr_rd_on(qp) && qp->comp.tail != qp->req.hi &&
	       rp_swqe(qp, qp->comp.tail)->opcode == IBV_WR_RDMA_READ;
}

/* Probes of a stall before the timer's turn. */
static inline uint32_t
rp_probe_max(const struct rp_qp *qp)
{
	return qp->comp.peer_sr ? RP_PROBE_MAX_SR : RP_PROBE_MAX;
}

/* The device that holds these objects, and its shards. */
#include "rp_dev.h"

#endif /* _RP_TRANSPORT_H_ */
