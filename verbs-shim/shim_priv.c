/* SPDX-License-Identifier: BSD-3-Clause */
/* rocepmd_verbs.h: what the shim gives rocepmd's other components. */

#include <assert.h>
#include <string.h>

#include "rocepmd_verbs.h"
#include "shim.h"

SHIM_EXPORT int
rocepmd_verbs_boot(void)
{
	return shim_boot();
}

SHIM_EXPORT int
rocepmd_verbs_attach(void)
{
	return shim_boot_attach();
}

SHIM_EXPORT int
rocepmd_verbs_port_addr(struct ibv_context *ctx,
			struct rocepmd_verbs_port *port)
{
	const struct rp_dev_ctl *ctl;

	if (ctx == NULL || port == NULL)
		return -EINVAL;
	ctl = shim_ctx(ctx)->ctl;
	port->ipv4 = ctl->ipv4;
	port->prefix_len = ctl->prefix_len;
	static_assert(ROCEPMD_VERBS_GIDS == RP_GID_TBL_LEN, "GID table");
	memcpy(port->gid_plen, ctl->gid_plen, sizeof(port->gid_plen));
	return 0;
}

SHIM_EXPORT struct ibv_qp *
rocepmd_verbs_create_gsi_qp(struct ibv_context *ctx,
			    struct ibv_qp_init_attr_ex *attr)
{
	return shim_create_qp_flags(ctx, attr, RP_QP_F_GSI);
}

SHIM_EXPORT int
rocepmd_verbs_gsi_prefix(struct ibv_qp *gsi, uint32_t *prefix, uint32_t *mask)
{
	if (gsi == NULL || prefix == NULL || mask == NULL)
		return -EINVAL;
	*prefix = shim_qp(gsi)->comm_prefix;
	*mask = RP_GSI_TAG_MASK;
	return *prefix != 0 ? 0 : -EINVAL;
}

SHIM_EXPORT int
rocepmd_verbs_gsi_bind(struct ibv_qp *gsi, uint64_t service_id, int bind)
{
	struct rp_ctrl_slot s = { .op = RP_CTRL_GSI_BIND };

	if (gsi == NULL)
		return -EINVAL;
	s.u.gsi_bind.qpn = shim_qp(gsi)->qpn;
	s.u.gsi_bind.bind = bind != 0;
	s.u.gsi_bind.service_id = service_id;
	return shim_ctrl(shim_qp(gsi)->ctx, &s);
}

SHIM_EXPORT int
rocepmd_verbs_gsi_will(struct ibv_qp *gsi, uint32_t comm_id,
		       const union ibv_gid *dgid, uint8_t sgid_index,
		       const void *mad, uint32_t len)
{
	struct rp_ctrl_slot s = { .op = RP_CTRL_GSI_WILL };
	struct rp_ctrl_gsi_will *w = &s.u.gsi_will;

	if (gsi == NULL || len > sizeof(w->mad) ||
	    (len != 0 && (dgid == NULL || mad == NULL)))
		return -EINVAL;
	w->qpn = shim_qp(gsi)->qpn;
	w->comm_id = comm_id;
	w->len = len;
	if (len != 0) {
		memcpy(w->av.dgid, dgid->raw, sizeof(w->av.dgid));
		w->av.sgid_index = sgid_index;
		w->av.is_global = 1;
		w->av.port_num = 1;
		memcpy(w->mad, mad, len);
	}
	return shim_ctrl(shim_qp(gsi)->ctx, &s);
}
