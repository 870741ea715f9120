/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What rocepmd's XDP program (rp_xdp.c) and the engine that loads it
 * (pmd/port/rp_xdp_port.c) share: map layouts and names.
 */
#ifndef _RP_XDP_H_
#define _RP_XDP_H_

#define RP_XDP_ROCE_PORT	4791
#define RP_XDP_MAX_QUEUES	64
#define RP_XDP_MAX_ADDRS	128	/* the GIDs and the joined groups (RP_MAX_MCAST) */
#define RP_XDP_PROG_NAME	"rp_xdp_steer"
#define RP_XDP_ADDRS_MAP	"rp_addrs"
#define RP_XDP_STATS_MAP	"rp_stats"
/* the name DPDK's af_xdp PMD looks for in a program of xdp_prog= */
#define RP_XDP_XSKS_MAP		"xsks_map"

/* A device address or a group a UD QP joined: IPv6, or IPv4 as
 * ::ffff:a.b.c.d (its GID). */
struct rp_xdp_addr {
	unsigned char a[16];
};

enum rp_xdp_stat {
	RP_XDP_REDIRECTED = 0,	/* RoCEv2 for us, to the engine */
	RP_XDP_PASSED,		/* everything else, to the kernel */
	RP_XDP_DROPPED,		/* RoCEv2 for us, no socket on its queue */
	RP_XDP_STAT_MAX,
};

#endif /* _RP_XDP_H_ */
