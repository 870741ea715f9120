/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The engine's counters: one block a shard, written only by the shard's
 * lcore, summed by the readers (telemetry, the stop log; names in
 * engine/rp_stats.c).  Defined at the lowest layer that counts (the port)
 * so that every layer above adds to the block it is given.
 */

#ifndef _RP_STAT_H_
#define _RP_STAT_H_

#include <stdint.h>

enum rp_stat {
	RP_STAT_RX_PKTS = 0,
	RP_STAT_TX_PKTS,
	RP_STAT_RX_NOT_ROCE,
	RP_STAT_RX_BAD,
	RP_STAT_RX_BAD_ICRC,
	RP_STAT_RX_BAD_OPCODE,
	RP_STAT_RX_NO_QP,
	RP_STAT_RX_BAD_QKEY,
	RP_STAT_RX_NO_RWQE,
	RP_STAT_RX_DUP,
	RP_STAT_RX_OUT_OF_SEQ,
	RP_STAT_TX_NAK_SEQ,
	RP_STAT_TX_RNR_NAK,
	RP_STAT_TX_ACK,
	RP_STAT_RETRANSMIT,
	RP_STAT_TIMEOUT,
	RP_STAT_RX_NAK,
	RP_STAT_RX_RNR_NAK,
	RP_STAT_ARP_RX,
	RP_STAT_ARP_TX,
	RP_STAT_TX_DROP,
	RP_STAT_NOMBUF,
	RP_STAT_CQ_OVERFLOW,
	RP_STAT_EVENTS,
	RP_STAT_LOOPBACK,
	RP_STAT_FAULT,
	RP_STAT_FAULT_DROP,
	RP_STAT_FAULT_DUP,
	RP_STAT_FAULT_REORDER,
	RP_STAT_FAULT_CORRUPT,
	RP_STAT_FAULT_DELAY,
	RP_STAT_TM_OPS,
	RP_STAT_TM_MATCHED,
	RP_STAT_TM_UNEXPECTED,
	RP_STAT_TM_NO_TAG,
	RP_STAT_TM_RNDV,
	RP_STAT_RX_NOT_FOR_US,
	RP_STAT_TX_ZERO_DMAC,
	RP_STAT_ARP_REFRESH,
	RP_STAT_ARP_MAC_CHANGED,
	RP_STAT_RX_NOT_PEER,
	RP_STAT_ND_RX,
	RP_STAT_ND_TX,
	RP_STAT_RX_MCAST,
	RP_STAT_PROBE,
	RP_STAT_TIMER_STARVED,	/* retransmit timers deferred: engine starved */
	RP_STAT_TX_KICK,
	RP_STAT_MEM_FAULT,
	RP_STAT_GSI_NO_AGENT,
	RP_STAT_GSI_WILLS,
	RP_STAT_GSI_WILLS_LOST,
	RP_STAT_GSI_REFUSED,		/* MADs an agent may not send */
	RP_STAT_XDP_REDIRECTED,
	RP_STAT_XDP_PASSED,
	RP_STAT_XDP_DROPPED,
	RP_STAT_XDP_STALE,
	RP_STAT_NEIGH_KERNEL,
	RP_STAT_GID_CHANGE,
	RP_STAT_TX_DEFERRED,
	RP_STAT_TX_UNDEFERRED,		/* ... sent at once: a stream's pass */
	RP_STAT_TX_ACKS_LAST,		/* ACKs sent after a small burst's
					 * requests (rp_xmit_acks_last()) */
	RP_STAT_XSK_RX_DROPPED,
	RP_STAT_XSK_RX_RING_FULL,
	RP_STAT_XSK_FILL_EMPTY,
	RP_STAT_XSK_INVALID,
	RP_STAT_RX_XSK_QUEUES,
	RP_STAT_SHARD_HANDOFF,
	RP_STAT_SHARD_HANDOFF_DROP,
	RP_STAT_SHARD_MOVES,
	RP_STAT_AFP_RX_DROPPED,		/* af_packet: its receive ring was full */
	RP_STAT_CWND_RESTART,		/* a timeout: the window to its least */
	RP_STAT_FAULT_CE,
	RP_STAT_ECN_CE,			/* CE-marked packets for our QPs */
	RP_STAT_CNP_SENT,
	RP_STAT_CNP_SUPPRESSED,		/* owed within cnp_interval_us */
	RP_STAT_CNP_RCVD,
	RP_STAT_FLIGHT_HELD,		/* a QP held back by flight_window */
	RP_STAT_CREDIT_HELD,		/* a SEND held back by the peer's
					 * end-to-end credits */
	RP_STAT_DCQCN_CUT,		/* rate cuts (CNPs) */
	RP_STAT_DCQCN_INCREASE,		/* rate increase events */
	RP_STAT_DCQCN_PACED,		/* QPs held back by their rate */
	RP_STAT_DCQCN_LOSS_CUT,		/* rate cuts (a loss while paced) */
	RP_STAT_RETX_BYTES,		/* SEND/WRITE payload sent again */
	RP_STAT_TX_ZC,			/* frames whose payload was not copied */
	RP_STAT_TX_ZC_COPIED,		/* ... copied after all: held over */
	RP_STAT_SR_KEPT,		/* requests kept past a gap */
	RP_STAT_SR_USED,		/* ... executed once it was filled */
	RP_STAT_SR_NAK,			/* selective NAKs sent */
	RP_STAT_SR_NAK_ONE,		/* ... of a PSN past the expected one */
	RP_STAT_SR_NAK_MAPPED,		/* ... sent in another's map
					 * (RP_BTH_NB) */
	RP_STAT_SR_RESENT,		/* packets sent again alone */
	RP_STAT_SR_NAK_EARLY,		/* ... not again within a round trip */
	RP_STAT_SR_TAIL_PROBE,		/* stalls probed by the last packet */
	RP_STAT_SR_RD_KEPT,		/* READ responses placed past a gap */
	RP_STAT_SR_RD_ASKED,		/* ... missing ones asked for alone */
	RP_STAT_SR_RD_REASKED,		/* ... again, the answer overdue */
	RP_STAT_SR_RD_CUT,		/* responder: runs asked for cut where
					 * a READ queued still owes the rest */
	RP_STAT_SR_RD_EARLY,		/* responder: READs answered past a
					 * gap of READs (RP_BTH_RO) */
	RP_STAT_PROBE_LATE,		/* probes answered late: the peer was
					 * silent, not lossy (rp_comp.c) */
	RP_STAT_CQ_MOD_HELD,		/* CQ events moderation held back */
	RP_STAT_CQ_MOD_UNHELD,		/* ... not: the shard's list full */
	RP_STAT_CQ_ADAPT_HELD,		/* ... held by adaptive moderation */
	RP_STAT_TX_NO_ICRC,		/* frames sent without an ICRC, and */
	RP_STAT_RX_NO_ICRC,		/* ... taken unchecked (icrc = auto) */
	RP_STAT_TIMER_UNSENT,		/* retransmit timers run out with all
					 * sent acknowledged: stopped */
	RP_STAT_TIMER_BACKOFF,		/* retry timeouts after which the next
					 * waits twice as long: the peer
					 * answered between (rp_comp_timer.c) */
	RP_STAT_XSK_QUEUE_WAIT,		/* af_xdp: the port reopened, its
					 * queue still bound (rp_port.c) */
	RP_STAT_PROBE_ONE,		/* probes that resent one packet: a
					 * peer not known to keep (rp_comp_timer.c) */
	RP_STAT_TIMER_TX_FULL,		/* probes put off: the port's transmit
					 * queue full, our packets not all
					 * gone (rp_comp_timer.c) */
	RP_STAT_SR_RD_ANSWERED,		/* READ requests answered whole past
					 * a gap: out of max_rd_atomic's count
					 * before the completer takes them */
	RP_STAT_SR_RD_ORDER,		/* runs asked again: the answer to a
					 * later ask came first (rp_sr_read.c) */
	RP_STAT_MAX,
};

/* One writer: relaxed load, add, relaxed store; readers load relaxed. */
static inline void
rp_stats_add(uint64_t *st, enum rp_stat s, uint64_t n)
{
	__atomic_store_n(&st[s], __atomic_load_n(&st[s], __ATOMIC_RELAXED) + n,
			 __ATOMIC_RELAXED);
}

static inline void
rp_stats_inc(uint64_t *st, enum rp_stat s)
{
	rp_stats_add(st, s, 1);
}

#endif /* _RP_STAT_H_ */
