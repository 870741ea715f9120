/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * UD multicast: ibv_attach_mcast / ibv_detach_mcast.  The engine keeps the
 * groups (pmd/transport/rp_mcast.c); on RoCE a group is a multicast GID and the LID
 * is meaningless (the kernel ignores it for RoCE ports too).
 */

#include <errno.h>
#include <string.h>

#include "shim.h"

static int
shim_mcast(struct ibv_qp *ibqp, const union ibv_gid *gid, uint32_t op)
{
	struct rp_ctrl_slot s = { .op = op };
	struct shim_qp *qp;
	int ret;

	if (ibqp == NULL || gid == NULL)
		return EINVAL;
	qp = shim_qp(ibqp);
	s.u.mcast.qpn = qp->qpn;
	memcpy(s.u.mcast.gid, gid->raw, sizeof(s.u.mcast.gid));
	ret = shim_ctrl(qp->ctx, &s);
	return ret < 0 ? -ret : 0;
}

SHIM_EXPORT int
ibv_attach_mcast(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid)
{
	(void)lid;
	return shim_mcast(qp, gid, RP_CTRL_MCAST_ATTACH);
}

SHIM_EXPORT int
ibv_detach_mcast(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid)
{
	(void)lid;
	return shim_mcast(qp, gid, RP_CTRL_MCAST_DETACH);
}
