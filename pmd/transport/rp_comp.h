/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The completer's two halves (rp_transport.h has the rest of the layer):
 * rp_comp.c takes ACKs, NAKs and responses in and moves the window,
 * rp_comp_timer.c probes and times a stall out with these.
 */

#ifndef RP_COMP_H
#define RP_COMP_H

#include "rp_transport.h"

/* Sent and not all retired (a message in progress counts). */
bool rp_comp_outstanding(const struct rp_qp *qp);
/* Where a READ that lost responses resumes: its first missing one. */
uint32_t rp_comp_rd_resume(const struct rp_qp *qp, const struct rp_swqe *s);
/* A probe's cut of the window (half what is in flight). */
void rp_comp_probe_cut(struct rp_qp *qp);
/* A timeout's restart of the window (its least, slow start). */
void rp_comp_restart(struct rp_qp *qp);

#endif /* RP_COMP_H */
