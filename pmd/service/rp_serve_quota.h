/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Quotas of the attach server (rp_serve_quota.c): what one attached
 * process, and all the processes of one uid, may hold of each device, how
 * long a connection may wait before its HELLO and how many may wait.
 * Internal to rp_serve.c; every function runs on the server's thread.
 */

#ifndef _RP_SERVE_QUOTA_H_
#define _RP_SERVE_QUOTA_H_

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include "rocepmd.h"
#include "rp_attach.h"

struct rp_sq_mr;

/* One connection's share, embedded in the server's client slot. */
struct rp_sq_client {
	uint8_t state;			/* enum in rp_serve_quota.c */
	uint32_t id;
	int32_t pid;
	uint32_t uid;
	const char *comm;
	uint64_t deadline;		/* timer cycles: HELLO due */
	struct rp_sq_uid *u;		/* its uid's total, once welcomed */
	uint64_t used[RP_ATTACH_MAX_DEVS][RP_QUOTA_KINDS];
	struct rp_sq_mr *mr;		/* pages of each of its MRs */
	uint32_t nr_mr, cap_mr;
};

/* A new connection: 0, or -EAGAIN when too many wait for their HELLO. */
int rp_sq_accept(struct rp_sq_client *q, uint32_t id, const struct ucred *cr,
		 const char *comm);

/* Its HELLO came: 0, or -EDQUOT when its uid has all its processes. */
int rp_sq_hello(struct rp_sq_client *q);

/* Whether it is past its HELLO deadline (and logs it). */
bool rp_sq_expired(struct rp_sq_client *q);

/* poll()'s timeout while connections wait for their HELLO, else -1. */
int rp_sq_timeout_ms(void);

/* Before a control request: 0, or -EDQUOT when it would take too much. */
int rp_sq_check(struct rp_sq_client *q, uint32_t dev,
		const struct rp_ctrl_slot *s);

/* After a request that succeeded: what it took or gave back. */
void rp_sq_done(struct rp_sq_client *q, uint32_t dev,
		const struct rp_ctrl_slot *s);

/* The connection ended: everything it held goes back. */
void rp_sq_close(struct rp_sq_client *q);

#endif /* _RP_SERVE_QUOTA_H_ */
