/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the fields of REQ and REP make of each side's connected QP, as the
 * Linux kernel's ib_cm reads them (IBTA vol. 1, chapter 12).
 *
 * Each of these fields is its sender's word to the receiver, and several
 * are read crosswise:
 *
 *   Starting PSN      the PSN the sender's receive queue expects first,
 *                     so the receiver's send queue starts there: the
 *                     REQ's becomes the active rq_psn and the passive
 *                     sq_psn, the REP's the passive rq_psn and the active
 *                     sq_psn (drivers/infiniband/core/cm.c:
 *                     ib_send_cm_req, cm_req_handler, ib_send_cm_rep,
 *                     cm_rep_handler; rdma_cm's rdma_init_qp_attr sets
 *                     rq_psn to the value it sent)
 *   Responder         the sender's own; the receiver's initiator depth
 *   Resources,        is the sender's responder resources and vice versa
 *   Initiator Depth
 *   RNR Retry Count   how often the receiver retries an RNR NAK: the
 *                     REQ's is the passive side's, the REP's the active's
 *   Retry Count       REQ only, the same for both sides
 *   Local ACK         REQ only: the passive side's; the active side's
 *   Timeout,          grows with the REP's Target ACK Delay
 *   Target ACK Delay
 *
 * A mistake made the same way at both ends works between two rocepmd
 * devices and fails against any other CM.  No EAL, no verbs: the unit test
 * checks this against the kernel's capture.
 */

#ifndef _CM_CONN_H_
#define _CM_CONN_H_

#include <stdint.h>

/* Which end of the connection: the REQ's sender, or the REP's. */
enum cm_role {
	CM_ROLE_ACTIVE,
	CM_ROLE_PASSIVE,
};

/* The fields of REQ and REP that set up the QPs, as on the wire. */
struct cm_conn_wire {
	uint32_t req_psn;
	uint8_t req_resp_res;
	uint8_t req_init_depth;
	uint8_t req_retry;
	uint8_t req_rnr_retry;
	uint8_t req_ack_timeout;	/* Primary Local ACK Timeout */
	uint32_t rep_psn;
	uint8_t rep_resp_res;
	uint8_t rep_init_depth;
	uint8_t rep_rnr_retry;
	uint8_t rep_ack_delay;		/* Target ACK Delay */
};

/* What they make of one side's QP, named as in struct ibv_qp_attr. */
struct cm_conn_qp {
	uint32_t sq_psn;
	uint32_t rq_psn;
	uint8_t max_rd_atomic;
	uint8_t max_dest_rd_atomic;
	uint8_t retry_cnt;
	uint8_t rnr_retry;
	uint8_t timeout;
};

/* The fields of a REQ or a REP MAD into @w (the other half untouched). */
void cm_conn_wire_req(struct cm_conn_wire *w, const uint8_t *req);
void cm_conn_wire_rep(struct cm_conn_wire *w, const uint8_t *rep);

/* The QP attributes of side @role from the fields of both messages. */
void cm_conn_qp(enum cm_role role, const struct cm_conn_wire *w,
		struct cm_conn_qp *q);

/*
 * An ACK timeout exponent (4.096 us * 2^t) covering a packet's round trip
 * (2 * 2^packet_life_time) and the peer's ACK delay (2^ca_ack_delay).
 */
uint8_t cm_ack_timeout(uint8_t ca_ack_delay, uint8_t packet_life_time);

#endif /* _CM_CONN_H_ */
