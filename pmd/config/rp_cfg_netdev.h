/* SPDX-License-Identifier: BSD-3-Clause */
/* A port bound to a kernel interface (key netdev): rp_cfg_netdev.c. */
#ifndef _RP_CFG_NETDEV_H_
#define _RP_CFG_NETDEV_H_

#include <stdbool.h>
#include <stddef.h>

#include <rte_common.h>

#include "rocepmd.h"

/*
 * Fill port->device from port->netdev (af_xdp with rocepmd's XDP program,
 * or af_packet), and its IPv4 address (want_v4) and global IPv6 addresses
 * (want_v6) from the kernel.  0, with why[] empty or a warning (af_packet
 * fallback); a negative errno with why[] saying what is wrong.
 */
int rp_cfg_netdev_bind(struct rp_port_cfg *port, unsigned int idx,
		       bool want_v4, bool want_v6, char *why, size_t len);

/* The interface's receive queues (sysfs, as the namespace sees it). */
unsigned int rp_netdev_rx_queues(const char *ifname);

#endif /* _RP_CFG_NETDEV_H_ */
