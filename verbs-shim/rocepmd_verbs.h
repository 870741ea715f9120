/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What librocepmd-verbs.so offers rocepmd's other components beyond
 * libibverbs' ABI (version node ROCEPMD_VERBS_PRIVATE_1 of
 * libibverbs.map).  The RDMA CM (librocepmd-rdmacm.so, rdmacm/) needs
 * three things no verb gives: starting the engine, a port's subnets,
 * and the GSI (QP 1).  Applications never call these.
 */

#ifndef _ROCEPMD_VERBS_H_
#define _ROCEPMD_VERBS_H_

#include <stdint.h>

#include <infiniband/verbs.h>

/* Starts the engine (idempotent): 0 or a negative errno. */
int rocepmd_verbs_boot(void);

/*
 * For a program that starts the engine itself through the engine API
 * (rocepmd.h, exported as ROCEPMD_ENGINE_1: rte_eal_init(), then
 * rp_engine_start()), as rocepmd-testpmd does: the verbs calls then use
 * that engine's devices and nothing reads ROCEPMD_CONFIG.  Call it before
 * any verbs call.  0, -ENODEV (no device), -EALREADY (a verbs call booted
 * the engine already).
 */
int rocepmd_verbs_attach(void);

#define ROCEPMD_VERBS_GIDS	8	/* GID table entries (RP_GID_TBL_LEN) */

/*
 * A device's subnets, as configured: IPv4, and the prefix length of each
 * GID table entry's address (the GIDs carry the addresses; index 0, the
 * IPv4-mapped one, counts the 96 bits of ::ffff:0:0/96; 0: empty entry).
 */
struct rocepmd_verbs_port {
	uint32_t ipv4;		/* network order */
	uint32_t prefix_len;
	uint8_t gid_plen[ROCEPMD_VERBS_GIDS];
};

/* 0 or a negative errno. */
int rocepmd_verbs_port_addr(struct ibv_context *ctx,
			    struct rocepmd_verbs_port *port);

/*
 * The device's GSI: a UD QP whose number is 1, which receives the MADs
 * sent to QP 1 (IBTA 13.4.6).  NULL with errno set on failure.
 */
struct ibv_qp *rocepmd_verbs_create_gsi_qp(struct ibv_context *ctx,
					   struct ibv_qp_init_attr_ex *attr);

#endif /* _ROCEPMD_VERBS_H_ */
