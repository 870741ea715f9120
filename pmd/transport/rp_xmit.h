/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef _RP_XMIT_H_
#define _RP_XMIT_H_

#include <stdbool.h>

#include <rte_branch_prediction.h>
#include <rte_mbuf.h>

#include "rp_transport.h"

int rp_xmit_dmac(struct rp_dev *dev, const uint8_t dgid[16], uint8_t mac[6]);
bool rp_xmit_resolve(struct rp_qp *qp);
bool rp_xmit_ah_ready(struct rp_dev *dev, struct rp_ah *ah);
uint8_t rp_xmit_hop_limit(const struct rp_dev *dev, const struct rp_av *av);

void rp_xmit_reresolve(struct rp_qp *qp);

/* qp->addr.dmac is known and no cached MAC changed since it was read. */
static inline bool
rp_xmit_addr_ok(const struct rp_qp *qp)
{
	return qp->addr_ok && qp->addr_gen == rp_nq(qp->dev)->arp_gen;
}

/*
 * A connected QP may send: its peer's MAC is known (qp->addr.dmac).  If
 * not, ask ARP (again): the caller keeps its packet for a later step.
 */
static inline bool
rp_xmit_ready(struct rp_qp *qp)
{
	return likely(rp_xmit_addr_ok(qp)) || rp_xmit_resolve(qp);
}

struct rte_mbuf *rp_xmit_alloc(struct rp_qp *qp, const struct rp_pkt_addr *a,
			       uint32_t dqpn, uint8_t opcode, int se,
			       int ackreq, uint32_t psn, uint32_t paylen,
			       uint8_t **bth);
struct rte_mbuf *rp_xmit_alloc_zc(struct rp_qp *qp,
				  const struct rp_pkt_addr *a, uint32_t dqpn,
				  uint8_t opcode, int se, int ackreq,
				  uint32_t psn, const uint8_t *pay,
				  uint32_t paylen, uint8_t **bth);
void rp_xmit_send(struct rp_qp *qp, const struct rp_pkt_addr *a,
		  struct rte_mbuf *m);

/*
 * Whether a packet of qp with paylen bytes of payload may go without a
 * copy (rp_xmit_alloc_zc()), a READ response's (rd) or a request's.  RC
 * only: its completion waits for the peer's ACK, so the program never
 * gets its memory back while a frame of the pass that completes it still
 * refers to it (UC and UD complete as they send).  A READ response's
 * with `on`, or toward a requester that takes selective NAKs (a rocepmd
 * peer): its memory may change under the frame, and such a requester
 * asks again for that response alone, within a round trip.
 */
static inline bool
rp_xmit_zc_ok(const struct rp_qp *qp, uint32_t paylen, bool rd)
{
	const struct rp_port *p = rp_pq(qp->dev)->port;

	/* from tx_zero_copy_min bytes: below, a copy costs less than the
	 * two more mbufs */
	return p->tx_zc && paylen >= p->tx_zc_min && qp->type == IBV_QPT_RC &&
		(!rd || p->tx_zc_rd || (qp->sr != NULL && qp->resp.peer_sr));
}

static inline uint8_t *
rp_xmit_hdr(uint8_t *bth, uint8_t opcode, enum rp_hdr_id id)
{
	return bth + rp_opcode[opcode].offset[id];
}

#endif /* _RP_XMIT_H_ */
