/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef _RP_XMIT_H_
#define _RP_XMIT_H_

#include <rte_mbuf.h>

#include "rp_obj.h"

struct rte_mbuf *rp_xmit_alloc(struct rp_qp *qp, const struct rp_pkt_addr *a,
			       uint32_t dqpn, uint8_t opcode, int se,
			       int ackreq, uint32_t psn, uint32_t paylen,
			       uint8_t **bth);
void rp_xmit_send(struct rp_qp *qp, const struct rp_pkt_addr *a,
		  struct rte_mbuf *m);

static inline uint8_t *
rp_xmit_hdr(uint8_t *bth, uint8_t opcode, enum rp_hdr_id id)
{
	return bth + rp_opcode[opcode].offset[id];
}

#endif /* _RP_XMIT_H_ */
