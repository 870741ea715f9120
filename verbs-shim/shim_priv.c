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
