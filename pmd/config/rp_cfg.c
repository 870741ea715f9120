/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Configuration loader (doc/guides/config.rst).
 *
 * The file is read twice.  A syntax pass of our own comes first, because
 * rte_cfgfile silently skips a line without '=' ("mtu 4096"), truncates long
 * names and values, and fails without saying why.  Then rte_cfgfile_load()
 * reads it and every entry of every section is checked against the const key
 * table rp_cfg_keys[]: unknown sections and keys are errors, and so is any
 * key given twice.
 *
 * rocepmd-run calls this before any EAL exists, so nothing here logs: every
 * error goes to the caller's buffer as
 * "PATH: [section] key: reason (accepted: ...)".
 *
 * This file loads, holds the key table and walks the sections; the rest is
 * in rp_cfg_lint.c (syntax pass), rp_cfg_parse.c (values, messages),
 * rp_cfg_netdev.c (netdev, af_packet) and rp_cfg_eal.c (EAL arguments).
 */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cfgfile.h>
#include <rte_common.h>
#include <rte_ethdev.h>
#include <rte_string_fns.h>

#include "rocepmd.h"
#include "rp_config.h"

static_assert(2 * RP_CFG_EAL_USER_ARGS + RP_CFG_EAL_OWN_ARGS <= RP_EAL_MAX_ARGS,
	      "RP_CFG_EAL_USER_ARGS does not fit RP_EAL_MAX_ARGS");
static_assert(RP_MAX_PORTS <= 10, "port sections are port0..port9 at most");
static_assert(RP_ETHDEV_NAME_LEN == RTE_ETH_NAME_MAX_LEN,
	      "rp_port_cfg.ethdev_name must hold any ethdev name");

static const char * const rp_cfg_sect_names[] = {
	[RP_CFG_SECT_EAL] = "eal",
	[RP_CFG_SECT_ENGINE] = "engine",
	[RP_CFG_SECT_HOST] = "host",
	[RP_CFG_SECT_PORT] = "port",
};

#define RP_CFG_CFG(field) \
	.off = offsetof(struct rp_config, field), \
	.size = sizeof(((struct rp_config *)0)->field)
#define RP_CFG_PORT(field) \
	.off = offsetof(struct rp_port_cfg, field), \
	.size = sizeof(((struct rp_port_cfg *)0)->field)

/* Every key of every section; order is the order of the docs. */
static const struct rp_cfg_key rp_cfg_keys[] = {
	{
		.name = "args", .sect = RP_CFG_SECT_EAL,
		.type = &rp_cfg_type_eal_args,
		RP_CFG_CFG(eal_args),
	},
	{
		/* rocepmd's and DPDK's log types; see rp_cfg_eal_argv() */
		.name = "log_level", .sect = RP_CFG_SECT_EAL,
		.type = &rp_cfg_type_log_level, .def = "notice",
		RP_CFG_CFG(log_level),
	},
	{
		.name = "main_lcore", .sect = RP_CFG_SECT_ENGINE,
		.type = &rp_cfg_type_u32,
		.min = 0, .max = RTE_MAX_LCORE - 1, .def = "0",
		RP_CFG_CFG(main_lcore),
	},
	{
		/* default: the lowest lcore that is not main_lcore */
		.name = "lcores", .sect = RP_CFG_SECT_ENGINE,
		.type = &rp_cfg_type_lcores,
		.min = 0, .max = RTE_MAX_LCORE - 1,
		RP_CFG_CFG(lcores),
		.aux_off = offsetof(struct rp_config, nb_lcores),
	},
	{
		.name = "idle", .sect = RP_CFG_SECT_ENGINE,
		.type = &rp_cfg_type_idle, .def = "yield",
		RP_CFG_CFG(idle),
	},
	{
		.name = "idle_us", .sect = RP_CFG_SECT_ENGINE,
		.type = &rp_cfg_type_u32,
		/* 30: the knee on two vCPUs (guides/experiments_close_to_wire,
		 * "Ninth round"): an events ping-pong's gaps are caught, a
		 * paced stream's longer ones are blocked through. */
		.min = 0, .max = 1000000, .def = "30",
		RP_CFG_CFG(idle_us),
	},
	{
		.name = "sleep_us", .sect = RP_CFG_SECT_ENGINE,
		.type = &rp_cfg_type_u32,
		.min = 1, .max = 100000, .def = "10",
		RP_CFG_CFG(sleep_us),
	},
	{
		/* adaptive: naps in place of the spin where they cost no
		 * work (rp_idle_nap.h) */
		.name = "spin_nap", .sect = RP_CFG_SECT_ENGINE,
		.type = &rp_cfg_type_bool, .def = "on",
		RP_CFG_CFG(spin_nap),
	},
	{
		.name = "wake_us", .sect = RP_CFG_SECT_ENGINE,
		.type = &rp_cfg_type_u32,
		.min = 1, .max = 1000000, .def = "1000",
		RP_CFG_CFG(wake_us),
	},
	{
		/* 0: off (rp_engine_assist() runs no pass); auto: decided
		 * from the CPUs at start (rp_inline.c) */
		.name = "inline_us", .sect = RP_CFG_SECT_ENGINE,
		.type = &rp_cfg_type_u32_auto,
		.min = 0, .max = 100000, .def = "auto",
		RP_CFG_CFG(inline_us),
	},
	{
		/* a connection that has not said HELLO by then is closed */
		.name = "hello_timeout_ms", .sect = RP_CFG_SECT_HOST,
		.type = &rp_cfg_type_u32,
		.min = 100, .max = 600000, .def = "2000",
		RP_CFG_CFG(host.hello_ms),
	},
	{
		/* connections not welcomed yet: half the server's 64 slots */
		.name = "max_pending", .sect = RP_CFG_SECT_HOST,
		.type = &rp_cfg_type_u32,
		.min = 1, .max = 64, .def = "32",
		RP_CFG_CFG(host.max_pending),
	},
	{
		/* 0 from here on: no limit */
		.name = "uid_pending", .sect = RP_CFG_SECT_HOST,
		.type = &rp_cfg_type_u32,
		.min = 0, .max = 64, .def = "8",
		RP_CFG_CFG(host.uid_pending),
	},
	{
		.name = "uid_processes", .sect = RP_CFG_SECT_HOST,
		.type = &rp_cfg_type_u32,
		.min = 0, .max = 64, .def = "32",
		RP_CFG_CFG(host.uid_procs),
	},
	{
		.name = "qps", .sect = RP_CFG_SECT_HOST,
		.type = &rp_cfg_type_u32,
		.min = 0, .max = UINT32_MAX, .def = "1024",
		RP_CFG_CFG(host.proc[RP_QUOTA_QP]),
	},
	{
		.name = "cqs", .sect = RP_CFG_SECT_HOST,
		.type = &rp_cfg_type_u32,
		.min = 0, .max = UINT32_MAX, .def = "256",
		RP_CFG_CFG(host.proc[RP_QUOTA_CQ]),
	},
	{
		.name = "mrs", .sect = RP_CFG_SECT_HOST,
		.type = &rp_cfg_type_u32,
		.min = 0, .max = UINT32_MAX, .def = "1024",
		RP_CFG_CFG(host.proc[RP_QUOTA_MR]),
	},
	{
		.name = "mws", .sect = RP_CFG_SECT_HOST,
		.type = &rp_cfg_type_u32,
		.min = 0, .max = UINT32_MAX, .def = "1024",
		RP_CFG_CFG(host.proc[RP_QUOTA_MW]),
	},
	{
		.name = "srqs", .sect = RP_CFG_SECT_HOST,
		.type = &rp_cfg_type_u32,
		.min = 0, .max = UINT32_MAX, .def = "64",
		RP_CFG_CFG(host.proc[RP_QUOTA_SRQ]),
	},
	{
		.name = "ahs", .sect = RP_CFG_SECT_HOST,
		.type = &rp_cfg_type_u32,
		.min = 0, .max = UINT32_MAX, .def = "1024",
		RP_CFG_CFG(host.proc[RP_QUOTA_AH]),
	},
	{
		.name = "pds", .sect = RP_CFG_SECT_HOST,
		.type = &rp_cfg_type_u32,
		.min = 0, .max = UINT32_MAX, .def = "256",
		RP_CFG_CFG(host.proc[RP_QUOTA_PD]),
	},
	{
		.name = "channels", .sect = RP_CFG_SECT_HOST,
		.type = &rp_cfg_type_u32,
		.min = 0, .max = UINT32_MAX, .def = "64",
		RP_CFG_CFG(host.proc[RP_QUOTA_CHAN]),
	},
	{
		.name = "async_fds", .sect = RP_CFG_SECT_HOST,
		.type = &rp_cfg_type_u32,
		.min = 0, .max = UINT32_MAX, .def = "16",
		RP_CFG_CFG(host.proc[RP_QUOTA_ASYNC]),
	},
	{
		.name = "mr_pages", .sect = RP_CFG_SECT_HOST,
		.type = &rp_cfg_type_u32,
		.min = 0, .max = UINT32_MAX, .def = "4194304",
		RP_CFG_CFG(host.proc[RP_QUOTA_MR_PAGES]),
	},
	{
		.name = "uid_qps", .sect = RP_CFG_SECT_HOST,
		.type = &rp_cfg_type_u32,
		.min = 0, .max = UINT32_MAX, .def = "2048",
		RP_CFG_CFG(host.uid[RP_QUOTA_QP]),
	},
	{
		.name = "uid_cqs", .sect = RP_CFG_SECT_HOST,
		.type = &rp_cfg_type_u32,
		.min = 0, .max = UINT32_MAX, .def = "512",
		RP_CFG_CFG(host.uid[RP_QUOTA_CQ]),
	},
	{
		.name = "uid_mrs", .sect = RP_CFG_SECT_HOST,
		.type = &rp_cfg_type_u32,
		.min = 0, .max = UINT32_MAX, .def = "2048",
		RP_CFG_CFG(host.uid[RP_QUOTA_MR]),
	},
	{
		.name = "uid_mws", .sect = RP_CFG_SECT_HOST,
		.type = &rp_cfg_type_u32,
		.min = 0, .max = UINT32_MAX, .def = "2048",
		RP_CFG_CFG(host.uid[RP_QUOTA_MW]),
	},
	{
		.name = "uid_srqs", .sect = RP_CFG_SECT_HOST,
		.type = &rp_cfg_type_u32,
		.min = 0, .max = UINT32_MAX, .def = "128",
		RP_CFG_CFG(host.uid[RP_QUOTA_SRQ]),
	},
	{
		.name = "uid_ahs", .sect = RP_CFG_SECT_HOST,
		.type = &rp_cfg_type_u32,
		.min = 0, .max = UINT32_MAX, .def = "2048",
		RP_CFG_CFG(host.uid[RP_QUOTA_AH]),
	},
	{
		.name = "uid_pds", .sect = RP_CFG_SECT_HOST,
		.type = &rp_cfg_type_u32,
		.min = 0, .max = UINT32_MAX, .def = "512",
		RP_CFG_CFG(host.uid[RP_QUOTA_PD]),
	},
	{
		.name = "uid_channels", .sect = RP_CFG_SECT_HOST,
		.type = &rp_cfg_type_u32,
		.min = 0, .max = UINT32_MAX, .def = "128",
		RP_CFG_CFG(host.uid[RP_QUOTA_CHAN]),
	},
	{
		.name = "uid_async_fds", .sect = RP_CFG_SECT_HOST,
		.type = &rp_cfg_type_u32,
		.min = 0, .max = UINT32_MAX, .def = "32",
		RP_CFG_CFG(host.uid[RP_QUOTA_ASYNC]),
	},
	{
		.name = "uid_mr_pages", .sect = RP_CFG_SECT_HOST,
		.type = &rp_cfg_type_u32,
		.min = 0, .max = UINT32_MAX, .def = "8388608",
		RP_CFG_CFG(host.uid[RP_QUOTA_MR_PAGES]),
	},
	{
		/* required unless netdev is given (rp_cfg_port_finish) */
		.name = "device", .sect = RP_CFG_SECT_PORT,
		.type = &rp_cfg_type_device,
		RP_CFG_PORT(device),
	},
	{
		/* a kernel interface instead of device (rp_cfg_netdev.c) */
		.name = "netdev", .sect = RP_CFG_SECT_PORT,
		.type = &rp_cfg_type_netdev,
		RP_CFG_PORT(netdev),
	},
	{
		/* required unless netdev is given: the kernel's then */
		.name = "ipv4", .sect = RP_CFG_SECT_PORT,
		.type = &rp_cfg_type_ipv4,
		.min = 1, .max = 32,
		RP_CFG_PORT(ipv4),
		.aux_off = offsetof(struct rp_port_cfg, prefix_len),
	},
	{
		/* default: none (the link-local address only) */
		.name = "ipv6", .sect = RP_CFG_SECT_PORT,
		.type = &rp_cfg_type_ipv6,
		RP_CFG_PORT(ipv6),
	},
	{
		/* default: the port's own MAC (mac_set stays false) */
		.name = "mac", .sect = RP_CFG_SECT_PORT,
		.type = &rp_cfg_type_mac,
		RP_CFG_PORT(mac),
		.aux_off = offsetof(struct rp_port_cfg, mac_set),
	},
	{
		/* auto: the largest the port carries (rp_port_mtu_auto()) */
		.name = "mtu", .sect = RP_CFG_SECT_PORT,
		.type = &rp_cfg_type_mtu,
		.min = 256, .max = 4096, .def = "auto",
		RP_CFG_PORT(mtu),
	},
	{
		/* default: the first engine lcore; a list: one queue pair
		 * each (rp_shard.c) */
		.name = "lcore", .sect = RP_CFG_SECT_PORT,
		.type = &rp_cfg_type_lcores,
		.min = 0, .max = RTE_MAX_LCORE - 1,
		RP_CFG_PORT(lcores),
		.aux_off = offsetof(struct rp_port_cfg, nr_lcores),
	},
	{
		.name = "region_mb", .sect = RP_CFG_SECT_PORT,
		.type = &rp_cfg_type_u32,
		.min = 4, .max = 4096, .def = "64",
		RP_CFG_PORT(region_mb),
	},
	{
		/* Linux's default route hop limit (ip_default_ttl) */
		.name = "hop_limit", .sect = RP_CFG_SECT_PORT,
		.type = &rp_cfg_type_u32,
		.min = 1, .max = 255, .def = "64",
		RP_CFG_PORT(hop_limit),
	},
	{
		/* Linux's neighbour default (base_reachable_time_ms) */
		.name = "arp_reachable_ms", .sect = RP_CFG_SECT_PORT,
		.type = &rp_cfg_type_u32,
		.min = 100, .max = 3600000, .def = "30000",
		RP_CFG_PORT(arp_reachable_ms),
	},
	{
		/* the scheduling noise of a soft device's peer */
		.name = "probe_min_us", .sect = RP_CFG_SECT_PORT,
		.type = &rp_cfg_type_u32,
		.min = 20, .max = 1000000, .def = "200",
		RP_CFG_PORT(probe_min_us),
	},
	{
		/* a probe toward a peer that keeps: a packet or two, no cut */
		.name = "probe_sr_min_us", .sect = RP_CFG_SECT_PORT,
		.type = &rp_cfg_type_u32,
		.min = 20, .max = 1000000, .def = "50",
		RP_CFG_PORT(probe_sr_min_us),
	},
	{
		/* a stream's events: fewer wake-ups, each at most this late */
		.name = "cq_adapt_us", .sect = RP_CFG_SECT_PORT,
		.type = &rp_cfg_type_u32,
		.min = 0, .max = 1000, .def = "20",
		RP_CFG_PORT(cq_adapt_us),
	},
	{
		/* one QP's send window (RP_WINDOW): a lone QP is not slowed */
		.name = "flight_window", .sect = RP_CFG_SECT_PORT,
		.type = &rp_cfg_type_u32,
		.min = 64, .max = 65536, .def = "256",
		RP_CFG_PORT(flight_window),
	},
	{
		/* its name when it held back READ requests only: kept, so
		 * that a configuration written then still loads */
		.name = "read_window", .sect = RP_CFG_SECT_PORT,
		.type = &rp_cfg_type_u32,
		.min = 64, .max = 65536,
		RP_CFG_PORT(flight_window),
	},
	{
		.name = "ecn", .sect = RP_CFG_SECT_PORT,
		.type = &rp_cfg_type_bool, .def = "off",
		RP_CFG_PORT(ecn),
	},
	{
		/* DCQCN's notification point: one CNP per flow in 50 us */
		.name = "cnp_interval_us", .sect = RP_CFG_SECT_PORT,
		.type = &rp_cfg_type_u32,
		.min = 0, .max = 1000000, .def = "50",
		RP_CFG_PORT(cnp_interval_us),
	},
	{
		/* where the PMD copies frames as it sends them (rp_port.c);
		 * requests only: a READ response's memory may change under
		 * it, a posted WRITE's may not (guides/experiments_close_to_
		 * wire, eighteenth and nineteenth rounds) */
		.name = "tx_zero_copy", .sect = RP_CFG_SECT_PORT,
		.type = &rp_cfg_type_tx_zc, .def = "requests",
		RP_CFG_PORT(tx_zero_copy),
	},
	{
		/* below, the copy costs less than two more mbufs: 3-4 %
		 * lost at 1 KiB frames, a wash at 2 KiB */
		.name = "tx_zero_copy_min", .sect = RP_CFG_SECT_PORT,
		.type = &rp_cfg_type_u32,
		.min = 64, .max = 65536, .def = "2048",
		RP_CFG_PORT(tx_zero_copy_min),
	},
	{
		/* a memory link cannot damage a frame: the ICRC is a
		 * quarter of a 64 KiB WRITE's engine time there (guides/
		 * experiments_close_to_wire, twenty-first round) */
		.name = "icrc", .sect = RP_CFG_SECT_PORT,
		.type = &rp_cfg_type_icrc, .def = "auto",
		RP_CFG_PORT(icrc),
	},
	{
		/* acts with rocepmd peers only, the BTH says (rp_sr.c);
		 * others get go-back-N as IBTA's, so on by default */
		.name = "selective_retx", .sect = RP_CFG_SECT_PORT,
		.type = &rp_cfg_type_bool, .def = "on",
		RP_CFG_PORT(selective_retx),
	},
	/* DCQCN's reaction point (rp_dcqcn.c): NVIDIA's DCQCN parameter
	 * table for ConnectX-4 and later gives the defaults of g,
	 * initial_alpha, min_dec_fac, min_rate and reduce_us; the increase
	 * ones are mlx5's cc_params (rpg_*) as ConnectX reports them. */
	{
		.name = "dcqcn", .sect = RP_CFG_SECT_PORT,
		.type = &rp_cfg_type_bool, .def = "on",
		RP_CFG_PORT(dcqcn.on),
	},
	{
		/* dce_tcp_g: alpha keeps g/1024 a period */
		.name = "dcqcn_g", .sect = RP_CFG_SECT_PORT,
		.type = &rp_cfg_type_u32,
		.min = 0, .max = 1023, .def = "1019",
		RP_CFG_PORT(dcqcn.g),
	},
	{
		/* dce_tcp_rtt; the DCQCN paper's 55 us, not ConnectX's 1:
		 * longer than cnp_interval_us, or alpha decays between two
		 * CNPs and a CNP cuts ~1 % (guides/congestion) */
		.name = "dcqcn_alpha_us", .sect = RP_CFG_SECT_PORT,
		.type = &rp_cfg_type_u32,
		.min = 1, .max = 131071, .def = "55",
		RP_CFG_PORT(dcqcn.alpha_us),
	},
	{
		/* initial_alpha_value */
		.name = "dcqcn_initial_alpha", .sect = RP_CFG_SECT_PORT,
		.type = &rp_cfg_type_u32,
		.min = 1, .max = 1023, .def = "1023",
		RP_CFG_PORT(dcqcn.initial_alpha),
	},
	{
		/* rpg_min_dec_fac: at most halved */
		.name = "dcqcn_min_dec_fac", .sect = RP_CFG_SECT_PORT,
		.type = &rp_cfg_type_u32,
		.min = 1, .max = 100, .def = "50",
		RP_CFG_PORT(dcqcn.min_dec_fac),
	},
	{
		/* rpg_min_rate */
		.name = "dcqcn_min_rate_mbps", .sect = RP_CFG_SECT_PORT,
		.type = &rp_cfg_type_u32,
		.min = 1, .max = 1000000, .def = "1",
		RP_CFG_PORT(dcqcn.min_rate_mbps),
	},
	{
		/* rate_reduce_monitor_period */
		.name = "dcqcn_reduce_us", .sect = RP_CFG_SECT_PORT,
		.type = &rp_cfg_type_u32,
		.min = 0, .max = 1000000, .def = "4",
		RP_CFG_PORT(dcqcn.reduce_us),
	},
	{
		/* rpg_time_reset */
		.name = "dcqcn_time_reset_us", .sect = RP_CFG_SECT_PORT,
		.type = &rp_cfg_type_u32,
		.min = 1, .max = 1000000, .def = "300",
		RP_CFG_PORT(dcqcn.time_reset_us),
	},
	{
		/* rpg_byte_reset */
		.name = "dcqcn_byte_reset", .sect = RP_CFG_SECT_PORT,
		.type = &rp_cfg_type_u32,
		.min = 1, .max = UINT32_MAX, .def = "32767",
		RP_CFG_PORT(dcqcn.byte_reset),
	},
	{
		/* F: the DCQCN paper's 5, not mlx5's 1: with 1 the hyper
		 * increase undid each cut at once (guides/congestion) */
		.name = "dcqcn_threshold", .sect = RP_CFG_SECT_PORT,
		.type = &rp_cfg_type_u32,
		.min = 1, .max = 64, .def = "5",
		RP_CFG_PORT(dcqcn.threshold),
	},
	{
		/* rpg_ai_rate */
		.name = "dcqcn_ai_mbps", .sect = RP_CFG_SECT_PORT,
		.type = &rp_cfg_type_u32,
		.min = 1, .max = 1000000, .def = "5",
		RP_CFG_PORT(dcqcn.ai_mbps),
	},
	{
		/* rpg_hai_rate */
		.name = "dcqcn_hai_mbps", .sect = RP_CFG_SECT_PORT,
		.type = &rp_cfg_type_u32,
		.min = 1, .max = 1000000, .def = "50",
		RP_CFG_PORT(dcqcn.hai_mbps),
	},
	/* Fault injection for tests (rp_port_fault.c): per-mille rates. */
	{
		.name = "fault_drop", .sect = RP_CFG_SECT_PORT,
		.type = &rp_cfg_type_u32,
		.min = 0, .max = 1000, .def = "0",
		RP_CFG_PORT(fault.tx.drop),
	},
	{
		.name = "fault_dup", .sect = RP_CFG_SECT_PORT,
		.type = &rp_cfg_type_u32,
		.min = 0, .max = 1000, .def = "0",
		RP_CFG_PORT(fault.tx.dup),
	},
	{
		.name = "fault_reorder", .sect = RP_CFG_SECT_PORT,
		.type = &rp_cfg_type_u32,
		.min = 0, .max = 1000, .def = "0",
		RP_CFG_PORT(fault.tx.reorder),
	},
	{
		.name = "fault_corrupt", .sect = RP_CFG_SECT_PORT,
		.type = &rp_cfg_type_u32,
		.min = 0, .max = 1000, .def = "0",
		RP_CFG_PORT(fault.tx.corrupt),
	},
	{
		.name = "fault_delay", .sect = RP_CFG_SECT_PORT,
		.type = &rp_cfg_type_u32,
		.min = 0, .max = 1000, .def = "0",
		RP_CFG_PORT(fault.tx.delay),
	},
	{
		.name = "fault_ce", .sect = RP_CFG_SECT_PORT,
		.type = &rp_cfg_type_u32,
		.min = 0, .max = 1000, .def = "0",
		RP_CFG_PORT(fault.tx.ce),
	},
	{
		.name = "fault_rx_drop", .sect = RP_CFG_SECT_PORT,
		.type = &rp_cfg_type_u32,
		.min = 0, .max = 1000, .def = "0",
		RP_CFG_PORT(fault.rx.drop),
	},
	{
		.name = "fault_rx_dup", .sect = RP_CFG_SECT_PORT,
		.type = &rp_cfg_type_u32,
		.min = 0, .max = 1000, .def = "0",
		RP_CFG_PORT(fault.rx.dup),
	},
	{
		.name = "fault_rx_reorder", .sect = RP_CFG_SECT_PORT,
		.type = &rp_cfg_type_u32,
		.min = 0, .max = 1000, .def = "0",
		RP_CFG_PORT(fault.rx.reorder),
	},
	{
		.name = "fault_rx_corrupt", .sect = RP_CFG_SECT_PORT,
		.type = &rp_cfg_type_u32,
		.min = 0, .max = 1000, .def = "0",
		RP_CFG_PORT(fault.rx.corrupt),
	},
	{
		.name = "fault_rx_delay", .sect = RP_CFG_SECT_PORT,
		.type = &rp_cfg_type_u32,
		.min = 0, .max = 1000, .def = "0",
		RP_CFG_PORT(fault.rx.delay),
	},
	{
		.name = "fault_burst", .sect = RP_CFG_SECT_PORT,
		.type = &rp_cfg_type_u32,
		.min = 1, .max = RP_FAULT_BURST_MAX, .def = "1",
		RP_CFG_PORT(fault.burst),
	},
	{
		.name = "fault_reorder_depth", .sect = RP_CFG_SECT_PORT,
		.type = &rp_cfg_type_u32,
		.min = 1, .max = RP_FAULT_DEPTH_MAX, .def = "1",
		RP_CFG_PORT(fault.reorder_depth),
	},
	{
		.name = "fault_delay_us", .sect = RP_CFG_SECT_PORT,
		.type = &rp_cfg_type_u32,
		.min = 1, .max = 100000, .def = "1000",
		RP_CFG_PORT(fault.delay_us),
	},
	{
		.name = "fault_seed", .sect = RP_CFG_SECT_PORT,
		.type = &rp_cfg_type_u32,
		.min = 0, .max = UINT32_MAX, .def = "1",
		RP_CFG_PORT(fault.seed),
	},
};

/* A section's keys given so far: one bit per rp_cfg_keys[] entry. */
#define CFG_KEY_WORDS	2
static_assert(RTE_DIM(rp_cfg_keys) <= 64 * CFG_KEY_WORDS,
	      "key masks are CFG_KEY_WORDS words");

static inline bool
cfg_bit(const uint64_t *given, size_t i)
{
	return (given[i / 64] & (UINT64_C(1) << (i % 64))) != 0;
}

/* ---- sections --------------------------------------------------------- */

const struct rp_cfg_key *
rp_cfg_key_find(enum rp_cfg_sect sect, const char *name)
{
	unsigned int i;

	for (i = 0; i < RTE_DIM(rp_cfg_keys); i++) {
		if (rp_cfg_keys[i].sect == sect &&
		    strcmp(rp_cfg_keys[i].name, name) == 0)
			return &rp_cfg_keys[i];
	}
	return NULL;
}

static void
rp_cfg_key_list(enum rp_cfg_sect sect, char *buf, size_t len)
{
	size_t n = 0;
	unsigned int i;

	buf[0] = '\0';
	for (i = 0; i < RTE_DIM(rp_cfg_keys) && n < len; i++) {
		if (rp_cfg_keys[i].sect == sect)
			n += (size_t)snprintf(buf + n, len - n, "%s%s",
					      n == 0 ? "" : ", ",
					      rp_cfg_keys[i].name);
	}
}

/* Section kind of a name, or -1; port sections set *port. */
static int
rp_cfg_sect_kind(const char *name, unsigned int *port)
{
	if (strcmp(name, rp_cfg_sect_names[RP_CFG_SECT_EAL]) == 0)
		return RP_CFG_SECT_EAL;
	if (strcmp(name, rp_cfg_sect_names[RP_CFG_SECT_ENGINE]) == 0)
		return RP_CFG_SECT_ENGINE;
	if (strcmp(name, rp_cfg_sect_names[RP_CFG_SECT_HOST]) == 0)
		return RP_CFG_SECT_HOST;
	if (strncmp(name, "port", 4) == 0 && name[4] >= '0' &&
	    name[4] < '0' + RP_MAX_PORTS && name[5] == '\0') {
		*port = (unsigned int)(name[4] - '0');
		return RP_CFG_SECT_PORT;
	}
	return -1;
}

/*
 * The given key (a bit of `given`) that sets the same field as `key`:
 * itself, or another name of it (read_window, flight_window's old name).
 */
static const struct rp_cfg_key *
cfg_field_given(const struct rp_cfg_key *key, const uint64_t *given)
{
	for (unsigned int i = 0; i < RTE_DIM(rp_cfg_keys); i++)
		if (cfg_bit(given, i) &&
		    rp_cfg_keys[i].sect == key->sect &&
		    rp_cfg_keys[i].off == key->off)
			return &rp_cfg_keys[i];
	return NULL;
}

/*
 * Parse section number idx of the file (-1: absent, defaults only) as a
 * section of kind sect into base.
 */
static int
rp_cfg_section(const struct rp_cfg_ctx *ctx, struct rte_cfgfile *file,
	       int idx, const char *name, enum rp_cfg_sect sect, void *base)
{
	struct rte_cfgfile_entry *ent = NULL;
	char sname[CFG_NAME_LEN];
	char why[256];
	uint64_t given[CFG_KEY_WORDS] = { 0 };
	unsigned int i;
	int n = 0, rc = 0;

	if (idx >= 0)
		n = rte_cfgfile_section_num_entries_by_index(file, sname, idx);
	if (n > 0) {
		ent = calloc((size_t)n, sizeof(*ent));
		if (ent == NULL)
			return rp_cfg_fail(ctx, -ENOMEM, name, NULL, NULL,
					   "out of memory");
		n = rte_cfgfile_section_entries_by_index(file, idx, sname, ent,
							 n);
	}
	for (i = 0; i < (unsigned int)RTE_MAX(n, 0); i++) {
		const struct rp_cfg_key *key =
			rp_cfg_key_find(sect, ent[i].name);
		size_t k;

		if (key == NULL) {
			/* every key of the section: [port] has 43 (538
			 * characters) */
			char keys[1024];

			rp_cfg_key_list(sect, keys, sizeof(keys));
			rc = rp_cfg_fail(ctx, -EINVAL, name, ent[i].name, keys,
					 "unknown key");
			goto out;
		}
		k = (size_t)(key - rp_cfg_keys);
		if (cfg_bit(given, k)) {
			rc = rp_cfg_fail(ctx, -EINVAL, name, key->name, NULL,
					 "given twice");
			goto out;
		}
		if (cfg_field_given(key, given) != NULL) {
			rc = rp_cfg_fail(ctx, -EINVAL, name, key->name, NULL,
					 "sets what '%s' set already",
					 cfg_field_given(key, given)->name);
			goto out;
		}
		given[k / 64] |= UINT64_C(1) << (k % 64);
		why[0] = '\0';
		rc = key->type->parse(key, ent[i].value, base, why,
				      sizeof(why));
		if (rc != 0) {
			rc = rp_cfg_value_fail(ctx, name, key, ent[i].value,
					       why);
			goto out;
		}
	}
	for (i = 0; i < RTE_DIM(rp_cfg_keys); i++) {
		const struct rp_cfg_key *key = &rp_cfg_keys[i];

		if (key->sect != sect || cfg_field_given(key, given) != NULL)
			continue;
		if (key->required) {
			char acc[64];

			rc = rp_cfg_fail(ctx, -EINVAL, name, key->name,
					 rp_cfg_accepted(key, acc, sizeof(acc)),
					 "required key missing");
			goto out;
		}
		if (key->def != NULL &&
		    key->type->parse(key, key->def, base, why,
				     sizeof(why)) != 0) {
			rc = rp_cfg_fail(ctx, -EINVAL, name, key->name, NULL,
					 "bad built-in default '%s'",
					 key->def);
			goto out;
		}
	}
out:
	free(ent);
	return rc;
}

static void
rp_cfg_lcore_list(const struct rp_config *cfg, char *buf, size_t len)
{
	size_t n = 0;
	uint32_t i;

	buf[0] = '\0';
	for (i = 0; i < cfg->nb_lcores && n < len; i++)
		n += (size_t)snprintf(buf + n, len - n, "%s%" PRIu32,
				      i == 0 ? "" : ",", cfg->lcores[i]);
}

static int
rp_cfg_engine_finish(const struct rp_cfg_ctx *ctx, struct rp_config *cfg)
{
	uint32_t i;

	if (cfg->nb_lcores == 0) {
		cfg->lcores[0] = cfg->main_lcore == 0 ? 1 : 0;
		cfg->nb_lcores = 1;
	}
	for (i = 0; i < cfg->nb_lcores; i++) {
		if (cfg->lcores[i] == cfg->main_lcore)
			return rp_cfg_fail(ctx, -EINVAL, "engine", "lcores",
					   rp_cfg_type_lcores.accepted,
					   "lcore %" PRIu32 " is main_lcore",
					   cfg->lcores[i]);
	}
	return 0;
}

static int
rp_cfg_port_finish(const struct rp_cfg_ctx *ctx, struct rp_config *cfg,
		   unsigned int idx)
{
	struct rp_port_cfg *port = &cfg->port[idx];
	char sect[8];
	char list[96];
	unsigned int i;
	int kind, rc;

	snprintf(sect, sizeof(sect), "port%u", idx);
	if (port->nr_lcores == 0) {
		port->lcores[0] = cfg->lcores[0];
		port->nr_lcores = 1;
	}
	port->lcore = port->lcores[0];
	for (uint32_t k = 0; k < port->nr_lcores; k++) {
		for (i = 0; i < cfg->nb_lcores; i++) {
			if (cfg->lcores[i] == port->lcores[k])
				break;
		}
		if (i == cfg->nb_lcores) {
			rp_cfg_lcore_list(cfg, list, sizeof(list));
			return rp_cfg_fail(ctx, -EINVAL, sect, "lcore", list,
					   "lcore %" PRIu32 " is not in [engine] lcores",
					   port->lcores[k]);
		}
	}
	/* Faults hold frames per device, which one lcore owns. */
	if (port->nr_lcores > 1 &&
	    (rp_fault_rates_on(&port->fault.tx) ||
	     rp_fault_rates_on(&port->fault.rx)))
		return rp_cfg_fail(ctx, -EINVAL, sect, "lcore",
				   "one lcore with fault injection",
				   "faults are injected on ports served by one lcore");
	rc = rp_cfg_port_netdev(ctx, sect, port, idx);
	if (rc != 0)
		return rc;
	kind = rp_cfg_device_name(port->device, port->ethdev_name,
				  sizeof(port->ethdev_name));
	port->is_pci = kind == 1;
	for (i = 0; i < idx; i++) {
		if (strcmp(cfg->port[i].ethdev_name, port->ethdev_name) == 0)
			return rp_cfg_fail(ctx, -EINVAL, sect, "device", NULL,
					   "%s is already the device of "
					   "[port%u]", port->ethdev_name, i);
	}
	return rp_cfg_af_packet_check(ctx, sect, port);
}

/* Walk the sections rte_cfgfile found, in an order that resolves defaults. */
static int
rp_cfg_walk(const struct rp_cfg_ctx *ctx, struct rte_cfgfile *file,
	    struct rp_config *cfg)
{
	int sect_idx[RP_CFG_SECT_PORT] = { -1, -1, -1 };
	int port_idx[RP_MAX_PORTS];
	char name[CFG_NAME_LEN];
	unsigned int p, nb_ports = 0;
	int i, n, kind, rc;

	for (p = 0; p < RP_MAX_PORTS; p++)
		port_idx[p] = -1;
	n = rte_cfgfile_num_sections(file, NULL, 0);
	for (i = 0; i < n; i++) {
		int *slot;

		rte_cfgfile_section_num_entries_by_index(file, name, i);
		kind = rp_cfg_sect_kind(name, &p);
		if (kind < 0) {
			char acc[64];

			snprintf(acc, sizeof(acc), "eal, engine, host, port0..port%d",
				 RP_MAX_PORTS - 1);
			return rp_cfg_fail(ctx, -EINVAL, name, NULL, acc,
					   "unknown section");
		}
		slot = kind == RP_CFG_SECT_PORT ? &port_idx[p] :
			&sect_idx[kind];
		if (*slot >= 0)
			return rp_cfg_fail(ctx, -EINVAL, name, NULL, NULL,
					   "section given twice");
		*slot = i;
	}

	rc = rp_cfg_section(ctx, file, sect_idx[RP_CFG_SECT_EAL], "eal",
			    RP_CFG_SECT_EAL, cfg);
	if (rc == 0)
		rc = rp_cfg_section(ctx, file, sect_idx[RP_CFG_SECT_ENGINE],
				    "engine", RP_CFG_SECT_ENGINE, cfg);
	if (rc == 0)
		rc = rp_cfg_engine_finish(ctx, cfg);
	if (rc == 0)
		rc = rp_cfg_section(ctx, file, sect_idx[RP_CFG_SECT_HOST],
				    "host", RP_CFG_SECT_HOST, cfg);
	if (rc != 0)
		return rc;

	for (p = 0; p < RP_MAX_PORTS; p++) {
		if (port_idx[p] >= 0)
			nb_ports = p + 1;
	}
	if (nb_ports == 0)
		return rp_cfg_fail(ctx, -EINVAL, "port0", NULL, NULL,
				   "missing section: at least one port is "
				   "required");
	for (p = 0; p < nb_ports; p++) {
		snprintf(name, sizeof(name), "port%u", p);
		if (port_idx[p] < 0)
			return rp_cfg_fail(ctx, -EINVAL, name, NULL, NULL,
					   "missing section: ports are "
					   "numbered from port0 without gaps, "
					   "and [port%u] exists", nb_ports - 1);
		rc = rp_cfg_section(ctx, file, port_idx[p], name,
				    RP_CFG_SECT_PORT, &cfg->port[p]);
		if (rc == 0)
			rc = rp_cfg_port_finish(ctx, cfg, p);
		if (rc != 0)
			return rc;
	}
	cfg->nb_ports = nb_ports;
	return 0;
}

int
rp_cfg_load(const char *path, struct rp_config *cfg, char *err,
	    size_t errlen)
{
	struct rp_cfg_ctx ctx = {
		.path = path != NULL ? path : "(null)",
		.err = err,
		.errlen = errlen,
	};
	struct rte_cfgfile *file;
	int rc;

	if (err != NULL && errlen > 0)
		err[0] = '\0';
	if (path == NULL || cfg == NULL)
		return rp_cfg_fail(&ctx, -EINVAL, NULL, NULL, NULL,
				   "no file or no configuration to fill");
	memset(cfg, 0, sizeof(*cfg));
	if (strlcpy(cfg->path, path, sizeof(cfg->path)) >= sizeof(cfg->path))
		return rp_cfg_fail(&ctx, -ENAMETOOLONG, NULL, NULL, NULL,
				   "path too long");

	rc = rp_cfg_lint(&ctx);
	if (rc != 0)
		return rc;
	file = rte_cfgfile_load(path, 0);
	if (file == NULL)
		return rp_cfg_fail(&ctx, errno == ENOMEM ? -ENOMEM : -EINVAL,
				   NULL, NULL, NULL,
				   "rte_cfgfile cannot read the file");
	rc = rp_cfg_walk(&ctx, file, cfg);
	rte_cfgfile_close(file);
	return rc;
}
