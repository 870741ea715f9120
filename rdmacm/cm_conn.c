/* SPDX-License-Identifier: BSD-3-Clause */
/* REQ and REP fields to QP attributes (see cm_conn.h for the rules). */

#include "cm_conn.h"
#include "cm_mad.h"

static uint8_t
cm_min8(uint8_t a, uint8_t b)
{
	return a < b ? a : b;
}

void
cm_conn_wire_req(struct cm_conn_wire *w, const uint8_t *req)
{
	w->req_psn = (uint32_t)cm_get(req, CM_F_REQ_STARTING_PSN);
	w->req_resp_res = (uint8_t)cm_get(req, CM_F_REQ_RESPONDER_RESOURCES);
	w->req_init_depth = (uint8_t)cm_get(req, CM_F_REQ_INITIATOR_DEPTH);
	w->req_retry = (uint8_t)cm_get(req, CM_F_REQ_RETRY_COUNT);
	w->req_rnr_retry = (uint8_t)cm_get(req, CM_F_REQ_RNR_RETRY_COUNT);
	w->req_ack_timeout = (uint8_t)cm_get(req,
					     CM_F_REQ_PRIMARY_LOCAL_ACK_TIMEOUT);
}

void
cm_conn_wire_rep(struct cm_conn_wire *w, const uint8_t *rep)
{
	w->rep_psn = (uint32_t)cm_get(rep, CM_F_REP_STARTING_PSN);
	w->rep_resp_res = (uint8_t)cm_get(rep, CM_F_REP_RESPONDER_RESOURCES);
	w->rep_init_depth = (uint8_t)cm_get(rep, CM_F_REP_INITIATOR_DEPTH);
	w->rep_rnr_retry = (uint8_t)cm_get(rep, CM_F_REP_RNR_RETRY_COUNT);
	w->rep_ack_delay = (uint8_t)cm_get(rep, CM_F_REP_TARGET_ACK_DELAY);
}

uint8_t
cm_ack_timeout(uint8_t ca_ack_delay, uint8_t packet_life_time)
{
	/* log2(2^a + 2^b), rounded up: the larger, plus one when close. */
	unsigned int a = packet_life_time + 1u, b = ca_ack_delay;
	unsigned int hi = a > b ? a : b, lo = a > b ? b : a;
	unsigned int t = hi + (hi - lo <= 1 ? 1 : 0);

	return (uint8_t)(t > 31 ? 31 : t);
}

void
cm_conn_qp(enum cm_role role, const struct cm_conn_wire *w,
	   struct cm_conn_qp *q)
{
	q->retry_cnt = w->req_retry;
	if (role == CM_ROLE_ACTIVE) {
		q->sq_psn = w->rep_psn;
		q->rq_psn = w->req_psn;
		/* What we asked for, no more than the peer grants. */
		q->max_rd_atomic = cm_min8(w->req_init_depth, w->rep_resp_res);
		q->max_dest_rd_atomic = cm_min8(w->req_resp_res,
						w->rep_init_depth);
		q->rnr_retry = w->rep_rnr_retry;
		/* The REQ's timeout is 2 * packet life time, ours as sent. */
		q->timeout = cm_ack_timeout(w->rep_ack_delay,
					    w->req_ack_timeout > 0 ?
					    w->req_ack_timeout - 1 : 0);
	} else {
		q->sq_psn = w->req_psn;
		q->rq_psn = w->rep_psn;
		/* The REP is ours, already bounded by the REQ. */
		q->max_rd_atomic = w->rep_init_depth;
		q->max_dest_rd_atomic = w->rep_resp_res;
		q->rnr_retry = w->req_rnr_retry;
		/* 0 would mean no retransmission at all: 1 as the kernel. */
		q->timeout = w->req_ack_timeout > 0 ? w->req_ack_timeout : 1;
	}
}
