/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The responder's two halves (rp_transport.h has the rest of the
 * layer): rp_resp.c takes requests in, rp_resp_rd.c queues and sends
 * what READs and atomics owe.
 */

#ifndef RP_RESP_H
#define RP_RESP_H

#include <errno.h>

#include "rp_transport.h"

/* Outcome of executing one request packet. */
enum rp_resp_res {
	RP_RESP_OK = 0,
	RP_RESP_RNR,		/* no receive WQE: RNR NAK, PSN not consumed */
	RP_RESP_ERR_INV_REQ,	/* NAK invalid request, QP to ERR */
	RP_RESP_ERR_ACCESS,	/* NAK remote access error */
	RP_RESP_ERR_OP,		/* NAK remote operational error, QP to ERR */
	RP_RESP_DROP,		/* silently dropped (UD) */
	RP_RESP_GONE,		/* the attached process that owns the QP died */
};

/* A failed copy to or from the MR's memory (rp_mem.c's errors). */
static inline enum rp_resp_res
resp_mem_res(int ret)
{
	return ret == -ESRCH ? RP_RESP_GONE : RP_RESP_ERR_ACCESS;
}

bool rp_resp_rd_room(const struct rp_qp *qp);
enum rp_resp_res rp_resp_read(struct rp_qp *qp, const struct rp_pkt *pkt,
			      bool dup);
enum rp_resp_res rp_resp_atomic(struct rp_qp *qp, const struct rp_pkt *pkt);
enum rp_resp_res rp_resp_atomic_write(struct rp_qp *qp,
				      const struct rp_pkt *pkt, bool dup);
void rp_resp_atomic_dup(struct rp_qp *qp, const struct rp_pkt *pkt);

#endif /* RP_RESP_H */
