/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Device counters: names, and the /rocepmd/stats telemetry command; and
 * /rocepmd/port, what a device is bound to (rocepmd-status of a host).
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>
#include <rte_telemetry.h>

#include "rp_atomic.h"
#include "rp_engine.h"

const char * const rp_stat_names[RP_STAT_MAX] = {
	[RP_STAT_RX_PKTS] = "rx_packets",
	[RP_STAT_TX_PKTS] = "tx_packets",
	[RP_STAT_RX_NOT_ROCE] = "rx_not_roce",
	[RP_STAT_RX_BAD] = "rx_malformed",
	[RP_STAT_RX_BAD_ICRC] = "rx_bad_icrc",
	[RP_STAT_RX_BAD_OPCODE] = "rx_bad_opcode",
	[RP_STAT_RX_NO_QP] = "rx_no_qp",
	[RP_STAT_RX_BAD_QKEY] = "rx_bad_qkey",
	[RP_STAT_RX_NO_RWQE] = "rx_ud_no_recv_wqe",
	[RP_STAT_RX_DUP] = "duplicate_request",
	[RP_STAT_RX_OUT_OF_SEQ] = "out_of_seq_request",
	[RP_STAT_TX_NAK_SEQ] = "send_nak_seq",
	[RP_STAT_TX_RNR_NAK] = "send_rnr_nak",
	[RP_STAT_TX_ACK] = "send_ack",
	[RP_STAT_RETRANSMIT] = "retransmits",
	[RP_STAT_TIMEOUT] = "retry_timeouts",
	[RP_STAT_RX_NAK] = "rcvd_nak",
	[RP_STAT_RX_RNR_NAK] = "rcvd_rnr_nak",
	[RP_STAT_ARP_RX] = "arp_rx",
	[RP_STAT_ARP_TX] = "arp_tx",
	[RP_STAT_TX_DROP] = "tx_dropped",
	[RP_STAT_NOMBUF] = "no_mbuf",
	[RP_STAT_CQ_OVERFLOW] = "cq_overflow",
	[RP_STAT_EVENTS] = "completion_events",
	[RP_STAT_LOOPBACK] = "loopback_packets",
	[RP_STAT_FAULT] = "faults_injected",
	[RP_STAT_FAULT_DROP] = "fault_dropped",
	[RP_STAT_FAULT_DUP] = "fault_duplicated",
	[RP_STAT_FAULT_REORDER] = "fault_reordered",
	[RP_STAT_FAULT_CORRUPT] = "fault_corrupted",
	[RP_STAT_FAULT_DELAY] = "fault_delayed",
	[RP_STAT_TM_OPS] = "tm_list_ops",
	[RP_STAT_TM_MATCHED] = "tm_matched",
	[RP_STAT_TM_UNEXPECTED] = "tm_unexpected",
	[RP_STAT_TM_NO_TAG] = "tm_no_tag",
	[RP_STAT_TM_RNDV] = "tm_rendezvous",
	[RP_STAT_RX_NOT_FOR_US] = "rx_not_for_us",
	[RP_STAT_TX_ZERO_DMAC] = "tx_zero_dmac",
	[RP_STAT_ARP_REFRESH] = "arp_refresh",
	[RP_STAT_ARP_MAC_CHANGED] = "arp_mac_changed",
	[RP_STAT_RX_NOT_PEER] = "rx_not_from_peer",
	[RP_STAT_ND_RX] = "nd_rx",
	[RP_STAT_ND_TX] = "nd_tx",
	[RP_STAT_RX_MCAST] = "rx_multicast",
	[RP_STAT_PROBE] = "retransmit_probes",
	[RP_STAT_TIMER_STARVED] = "timer_starved",
	[RP_STAT_PROBE_LATE] = "probes_answered_late",
	[RP_STAT_CQ_MOD_HELD] = "cq_events_held",
	[RP_STAT_CQ_MOD_UNHELD] = "cq_events_unheld",
	[RP_STAT_CQ_ADAPT_HELD] = "cq_events_adapted",
	[RP_STAT_TX_NO_ICRC] = "tx_icrc_skipped",
	[RP_STAT_RX_NO_ICRC] = "rx_icrc_unchecked",
	[RP_STAT_TIMER_UNSENT] = "timer_nothing_unacked",
	[RP_STAT_TIMER_BACKOFF] = "timer_backoffs",
	[RP_STAT_XSK_QUEUE_WAIT] = "xsk_queue_waits",
	[RP_STAT_PROBE_ONE] = "probes_one_packet",
	[RP_STAT_TIMER_TX_FULL] = "probes_tx_full",
	[RP_STAT_SR_RD_ANSWERED] = "sr_read_answered",
	[RP_STAT_SR_RD_ORDER] = "sr_read_reasked_order",
	[RP_STAT_TX_KICK] = "tx_ring_kicks",
	[RP_STAT_MEM_FAULT] = "attached_mem_faults",
	[RP_STAT_GSI_NO_AGENT] = "gsi_no_agent",
	[RP_STAT_GSI_WILLS] = "gsi_wills_sent",
	[RP_STAT_GSI_WILLS_LOST] = "gsi_wills_lost",
	[RP_STAT_GSI_REFUSED] = "gsi_mads_refused",
	[RP_STAT_XDP_REDIRECTED] = "xdp_redirected",
	[RP_STAT_XDP_PASSED] = "xdp_passed",
	[RP_STAT_XDP_DROPPED] = "xdp_dropped",
	[RP_STAT_XDP_STALE] = "xdp_stale_removed",
	[RP_STAT_NEIGH_KERNEL] = "neigh_from_kernel",
	[RP_STAT_GID_CHANGE] = "gid_changes",
	[RP_STAT_TX_DEFERRED] = "tx_deferred",
	[RP_STAT_TX_UNDEFERRED] = "tx_undeferred",
	[RP_STAT_TX_ACKS_LAST] = "tx_acks_last",
	[RP_STAT_XSK_RX_DROPPED] = "xsk_rx_dropped",
	[RP_STAT_AFP_RX_DROPPED] = "afp_rx_dropped",
	[RP_STAT_CWND_RESTART] = "cwnd_restarts",
	[RP_STAT_FAULT_CE] = "fault_ce_marked",
	[RP_STAT_ECN_CE] = "ecn_ce_received",
	[RP_STAT_CREDIT_HELD] = "credit_held",
	[RP_STAT_CNP_SENT] = "cnp_sent",
	[RP_STAT_CNP_SUPPRESSED] = "cnp_suppressed",
	[RP_STAT_CNP_RCVD] = "cnp_received",
	[RP_STAT_FLIGHT_HELD] = "flight_window_held",
	[RP_STAT_DCQCN_CUT] = "dcqcn_rate_cuts",
	[RP_STAT_DCQCN_INCREASE] = "dcqcn_rate_increases",
	[RP_STAT_DCQCN_PACED] = "dcqcn_paced",
	[RP_STAT_DCQCN_LOSS_CUT] = "dcqcn_loss_cuts",
	[RP_STAT_RETX_BYTES] = "retransmitted_bytes",
	[RP_STAT_TX_ZC] = "tx_zero_copy",
	[RP_STAT_TX_ZC_COPIED] = "tx_zero_copy_copied",
	[RP_STAT_SR_KEPT] = "sr_kept",
	[RP_STAT_SR_USED] = "sr_executed",
	[RP_STAT_SR_NAK] = "sr_nak_sent",
	[RP_STAT_SR_NAK_ONE] = "sr_nak_one",
	[RP_STAT_SR_NAK_MAPPED] = "sr_nak_mapped",
	[RP_STAT_SR_RESENT] = "sr_resent",
	[RP_STAT_SR_NAK_EARLY] = "sr_nak_in_flight",
	[RP_STAT_SR_TAIL_PROBE] = "sr_tail_probes",
	[RP_STAT_SR_RD_KEPT] = "sr_read_kept",
	[RP_STAT_SR_RD_ASKED] = "sr_read_asked",
	[RP_STAT_SR_RD_REASKED] = "sr_read_reasked",
	[RP_STAT_SR_RD_CUT] = "sr_read_run_cut",
	[RP_STAT_SR_RD_EARLY] = "sr_read_early",
	[RP_STAT_XSK_RX_RING_FULL] = "xsk_rx_ring_full",
	[RP_STAT_XSK_FILL_EMPTY] = "xsk_fill_ring_empty",
	[RP_STAT_XSK_INVALID] = "xsk_invalid_descs",
	[RP_STAT_RX_XSK_QUEUES] = "rx_other_queues",
	[RP_STAT_SHARD_HANDOFF] = "shard_handoffs",
	[RP_STAT_SHARD_HANDOFF_DROP] = "shard_handoff_drops",
	[RP_STAT_SHARD_MOVES] = "shard_qp_moves",
};

uint64_t
rp_dev_stat(const struct rp_dev *dev, enum rp_stat s)
{
	uint64_t v = 0;

	for (uint32_t i = 0; i < dev->nr_shards; i++)
		v += rp_load_relaxed(&dev->sh[i].stats[s]);
	return v;
}

/* The counters' names, and values of a shard (or all summed, shard < 0). */
static int
stats_fill(const struct rp_dev *dev, int shard, const char **names,
	   uint64_t *vals, unsigned int n)
{
	for (unsigned int i = 0; i < RP_STAT_MAX && i < n; i++) {
		if (names != NULL)
			names[i] = rp_stat_names[i];
		if (vals != NULL)
			vals[i] = shard < 0 ? rp_dev_stat(dev, i) :
				rp_load_relaxed(&dev->sh[shard].stats[i]);
	}
	return RP_STAT_MAX;
}

int
rp_dev_stats_get(unsigned int id, const char **names, uint64_t *vals,
		 unsigned int n)
{
	int ret = -ENOENT;

	if (!rp_engine_hold())
		return -ENOENT;
	if (id < rp_nr_devs && rp_devs[id] != NULL)
		ret = stats_fill(rp_devs[id], -1, names, vals, n);
	rp_engine_release();
	return ret;
}

int
rp_dev_shard_stats_get(unsigned int id, unsigned int shard,
		       unsigned int *lcore, const char **names, uint64_t *vals,
		       unsigned int n)
{
	int ret = -ENOENT;

	if (!rp_engine_hold())
		return -ENOENT;
	if (id < rp_nr_devs && rp_devs[id] != NULL &&
	    shard < rp_devs[id]->nr_shards) {
		if (lcore != NULL)
			*lcore = rp_devs[id]->sh[shard].lcore;
		ret = stats_fill(rp_devs[id], (int)shard, names, vals, n);
	}
	rp_engine_release();
	return ret;
}

/* The device a telemetry command's parameter names (default 0), or NULL. */
static const struct rp_dev *
tel_dev(const char *params)
{
	unsigned int id = params != NULL ? (unsigned int)atoi(params) : 0;

	return id < rp_nr_devs ? rp_devs[id] : NULL;
}

static int
stats_cmd_held(const char *cmd __rte_unused, const char *params,
	  struct rte_tel_data *d)
{
	const struct rp_dev *dev = tel_dev(params);

	if (dev == NULL)
		return -EINVAL;
	rte_tel_data_start_dict(d);
	for (unsigned int i = 0; i < RP_STAT_MAX; i++)
		rte_tel_data_add_dict_u64(d, rp_stat_names[i],
					  rp_dev_stat(dev, i));
	return 0;
}

/* /rocepmd/shards,ID: each lcore of a device, what it owns and carried. */
static int
shards_cmd_held(const char *cmd __rte_unused, const char *params,
	   struct rte_tel_data *d)
{
	const struct rp_dev *dev = tel_dev(params);

	if (dev == NULL)
		return -EINVAL;
	rte_tel_data_start_dict(d);
	for (uint32_t s = 0; s < dev->nr_shards; s++) {
		const struct rp_shard *sh = &dev->sh[s];
		struct rte_tel_data *c = rte_tel_data_alloc();
		char name[16];

		if (c == NULL)
			return -ENOMEM;
		rte_tel_data_start_dict(c);
		rte_tel_data_add_dict_u64(c, "lcore", sh->lcore);
		/* read racily: a figure to look at, not to act on */
		rte_tel_data_add_dict_u64(c, "qps",
					  rp_load_relaxed(&sh->nr_qp));
		for (unsigned int i = 0; i < RP_STAT_MAX; i++)
			rte_tel_data_add_dict_u64(c, rp_stat_names[i],
					rp_load_relaxed(&sh->stats[i]));
		snprintf(name, sizeof(name), "shard%u", s);
		rte_tel_data_add_dict_container(d, name, c, 0);
	}
	return 0;
}

/*
 * /rocepmd/port,ID: what the device is bound to, which the device region
 * an attached process maps does not say: rocepmd-status --attach prints
 * the netdev from it, as `rdma link show` does for rxe.
 */
static int
port_cmd_held(const char *cmd __rte_unused, const char *params,
	 struct rte_tel_data *d)
{
	const struct rp_dev *dev = tel_dev(params);

	if (dev == NULL)
		return -EINVAL;
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_string(d, "name", dev->ctl->name);
	rte_tel_data_add_dict_string(d, "device", dev->cfg.device);
	rte_tel_data_add_dict_string(d, "netdev", dev->cfg.netdev);
	rte_tel_data_add_dict_u64(d, "xdp", dev->cfg.netdev_xdp);
	rte_tel_data_add_dict_u64(d, "port_id", dev->port.port_id);
	rte_tel_data_add_dict_u64(d, "link_up",
				  rp_load_relaxed(&dev->ctl->link_up));
	return 0;
}

/*
 * /rocepmd/qp,ID,QPN: an RC or UC QP's window and DCQCN rate, read on
 * the lcore (a control request): the QP cannot go while it is read.
 */
static int
qp_cmd(const char *cmd __rte_unused, const char *params,
       struct rte_tel_data *d)
{
	struct rp_ctrl_slot s;
	const struct rp_ctrl_qp_cc *o = &s.u.qp_cc;
	unsigned int id, qpn;
	char tail;

	if (params == NULL ||
	    sscanf(params, "%u,%u%c", &id, &qpn, &tail) != 2 ||
	    id >= rp_nr_devs)
		return -EINVAL;
	memset(&s, 0, sizeof(s));
	s.op = RP_CTRL_QP_CC;
	s.u.qp_cc.qpn = qpn;
	if (rp_ctrl_call(id, &s) != 0)
		return -EINVAL;
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_u64(d, "qpn", o->qpn);
	rte_tel_data_add_dict_u64(d, "window", o->window);
	rte_tel_data_add_dict_u64(d, "in_flight", o->in_flight);
	rte_tel_data_add_dict_u64(d, "srtt_us", o->srtt_us);
	rte_tel_data_add_dict_u64(d, "probe_wait_us", o->probe_wait_us);
	rte_tel_data_add_dict_u64(d, "dcqcn_limited", o->limited);
	rte_tel_data_add_dict_u64(d, "rate_mbps", o->rate_mbps);
	rte_tel_data_add_dict_u64(d, "target_mbps", o->target_mbps);
	rte_tel_data_add_dict_u64(d, "alpha", o->alpha);
	return 0;
}

/*
 * The commands run on the telemetry thread, which a client may drive at
 * any time, the program's exit included: each holds the engine while it
 * reads a device (rp_engine_hold()).
 */
#define TEL_HELD(name) \
static int \
name(const char *cmd, const char *params, struct rte_tel_data *d) \
{ \
	int ret; \
\
	if (!rp_engine_hold()) \
		return -ENODEV; \
	ret = name ## _held(cmd, params, d); \
	rp_engine_release(); \
	return ret; \
}
TEL_HELD(stats_cmd)
TEL_HELD(shards_cmd)
TEL_HELD(port_cmd)

RTE_INIT(rp_stats_init)
{
	rte_telemetry_register_cmd("/rocepmd/stats", stats_cmd,
				   "Device counters. Parameters: device index");
	rte_telemetry_register_cmd("/rocepmd/shards", shards_cmd,
				   "Per-lcore share of a device (queues, QPs, counters). Parameters: device index");
	rte_telemetry_register_cmd("/rocepmd/port", port_cmd,
				   "What a device is bound to (device, netdev). Parameters: device index");
	rte_telemetry_register_cmd("/rocepmd/qp", qp_cmd,
				   "An RC/UC QP's window and DCQCN rate. Parameters: device index,QP number");
}
