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
 * The process's GSI agent on a device: a UD QP whose datagrams leave from
 * QP 1 and which receives the MADs sent to QP 1 that are its own (QP 1
 * is shared by every process on the device, pmd/transport/rp_gsi.c): the answers
 * to communication IDs carrying its prefix, and the REQs for the service
 * IDs it claimed.  One per process and device.  NULL with errno set on
 * failure (EBUSY: the process has one).
 */
struct ibv_qp *rocepmd_verbs_create_gsi_qp(struct ibv_context *ctx,
					   struct ibv_qp_init_attr_ex *attr);

/*
 * What the local communication IDs (and SIDR request IDs) chosen through
 * a GSI agent must carry: (id & *mask) == *prefix.  0 or -EINVAL.
 */
int rocepmd_verbs_gsi_prefix(struct ibv_qp *gsi, uint32_t *prefix,
			     uint32_t *mask);

/*
 * Claim (bind != 0) or let go of a CM service ID on the agent's device:
 * REQs and SIDR REQs for it reach this agent.  0, -EADDRINUSE (another
 * process holds it), -ENOBUFS, -EINVAL.
 */
int rocepmd_verbs_gsi_bind(struct ibv_qp *gsi, uint64_t service_id,
			   int bind);

/*
 * Leave (len != 0) or withdraw (len 0) the DREQ that the engine sends for
 * connection `comm_id` to QP 1 of `dgid` (from GID `sgid_index`) if the
 * agent is destroyed first: the process ended without disconnecting.
 * @mad: the DREQ's first `len` bytes (at most 64; the rest are zero).
 * 0 or a negative errno.
 */
int rocepmd_verbs_gsi_will(struct ibv_qp *gsi, uint32_t comm_id,
			   const union ibv_gid *dgid, uint8_t sgid_index,
			   const void *mad, uint32_t len);

#endif /* _ROCEPMD_VERBS_H_ */
