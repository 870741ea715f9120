/* SPDX-License-Identifier: BSD-3-Clause */
/* Building outgoing RoCEv2 frames for a QP (requester and responder). */

#include <string.h>

#include <rte_mbuf.h>

#include "rp_obj.h"
#include "rp_xmit.h"

/*
 * A frame for `opcode` with paylen payload bytes, L2-L4 and BTH written.
 * *bth points at the BTH; extended headers go at rp_opcode[] offsets from
 * it, and the payload at offset[RP_HDR_PAYLOAD].  Finish with rp_xmit_send().
 */
struct rte_mbuf *
rp_xmit_alloc(struct rp_qp *qp, const struct rp_pkt_addr *a, uint32_t dqpn,
	      uint8_t opcode, int se, int ackreq, uint32_t psn,
	      uint32_t paylen, uint8_t **bth)
{
	uint32_t flen = rp_pkt_frame_len(a, opcode, paylen);
	struct rte_mbuf *m;
	uint8_t *frame;
	uint16_t off;

	m = rp_port_alloc(qp->dev, flen, &frame);
	if (m == NULL)
		return NULL;
	off = rp_pkt_build(frame, a, opcode, se, dqpn, ackreq, psn, paylen);
	*bth = frame + off;
	return m;
}

void
rp_xmit_send(struct rp_qp *qp, const struct rp_pkt_addr *a, struct rte_mbuf *m)
{
	rp_pkt_finish(rte_pktmbuf_mtod(m, uint8_t *), a, rte_pktmbuf_data_len(m));
	rp_port_tx(qp->dev, m);
}
