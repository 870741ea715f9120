/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Everything rocepmd does not implement (yet).
 *
 * Two kinds, both failing the way rdma-core documents, never crashing and
 * never reaching the real libibverbs:
 *  - context operations, which verbs.h's inline functions call through
 *    struct verbs_context and struct ibv_context_ops: every member gets a
 *    stub here (rdma-core's dummy_ops.c), so none is ever NULL, and the
 *    implemented ones are set over them (shim_dev.c);
 *  - exported functions: "create" calls return NULL with errno EOPNOTSUPP,
 *    the others return EOPNOTSUPP (or -1 with errno) as each man page says.
 */

#include <errno.h>
#include <stddef.h>
#include <stdint.h>

#include <rte_common.h>

#include "shim.h"

/* ------------------------------------------------- verbs_context members */

static int
shim_stub_advise_mr(struct ibv_pd *pd, enum ibv_advise_mr_advice advice,
		    uint32_t flags, struct ibv_sge *sg_list, uint32_t num_sges)
{
	RTE_SET_USED(pd);
	RTE_SET_USED(advice);
	RTE_SET_USED(flags);
	RTE_SET_USED(sg_list);
	RTE_SET_USED(num_sges);
	return EOPNOTSUPP;
}

static struct ibv_mr *
shim_stub_alloc_null_mr(struct ibv_pd *pd)
{
	RTE_SET_USED(pd);
	errno = EOPNOTSUPP;
	return NULL;
}

static int
shim_stub_read_counters(struct ibv_counters *counters,
			uint64_t *counters_value, uint32_t ncounters,
			uint32_t flags)
{
	RTE_SET_USED(counters);
	RTE_SET_USED(counters_value);
	RTE_SET_USED(ncounters);
	RTE_SET_USED(flags);
	return EOPNOTSUPP;
}

static int
shim_stub_attach_counters_point_flow(struct ibv_counters *counters,
				     struct ibv_counter_attach_attr *attr,
				     struct ibv_flow *flow)
{
	RTE_SET_USED(counters);
	RTE_SET_USED(attr);
	RTE_SET_USED(flow);
	return EOPNOTSUPP;
}

static struct ibv_counters *
shim_stub_create_counters(struct ibv_context *context,
			  struct ibv_counters_init_attr *init_attr)
{
	RTE_SET_USED(context);
	RTE_SET_USED(init_attr);
	errno = EOPNOTSUPP;
	return NULL;
}

static int
shim_stub_destroy_counters(struct ibv_counters *counters)
{
	RTE_SET_USED(counters);
	return EOPNOTSUPP;
}

static struct ibv_mr *
shim_stub_reg_dm_mr(struct ibv_pd *pd, struct ibv_dm *dm, uint64_t dm_offset,
		    size_t length, unsigned int access)
{
	RTE_SET_USED(pd);
	RTE_SET_USED(dm);
	RTE_SET_USED(dm_offset);
	RTE_SET_USED(length);
	RTE_SET_USED(access);
	errno = EOPNOTSUPP;
	return NULL;
}

static struct ibv_dm *
shim_stub_alloc_dm(struct ibv_context *context, struct ibv_alloc_dm_attr *attr)
{
	RTE_SET_USED(context);
	RTE_SET_USED(attr);
	errno = EOPNOTSUPP;
	return NULL;
}

static int
shim_stub_free_dm(struct ibv_dm *dm)
{
	RTE_SET_USED(dm);
	return EOPNOTSUPP;
}

static int
shim_stub_modify_flow_action_esp(struct ibv_flow_action *action,
				 struct ibv_flow_action_esp_attr *attr)
{
	RTE_SET_USED(action);
	RTE_SET_USED(attr);
	return EOPNOTSUPP;
}

static int
shim_stub_destroy_flow_action(struct ibv_flow_action *action)
{
	RTE_SET_USED(action);
	return EOPNOTSUPP;
}

static struct ibv_flow_action *
shim_stub_create_flow_action_esp(struct ibv_context *context,
				 struct ibv_flow_action_esp_attr *attr)
{
	RTE_SET_USED(context);
	RTE_SET_USED(attr);
	errno = EOPNOTSUPP;
	return NULL;
}

static int
shim_stub_modify_qp_rate_limit(struct ibv_qp *qp,
			       struct ibv_qp_rate_limit_attr *attr)
{
	RTE_SET_USED(qp);
	RTE_SET_USED(attr);
	return EOPNOTSUPP;
}

static struct ibv_pd *
shim_stub_alloc_parent_domain(struct ibv_context *context,
			      struct ibv_parent_domain_init_attr *attr)
{
	RTE_SET_USED(context);
	RTE_SET_USED(attr);
	errno = EOPNOTSUPP;
	return NULL;
}

static int
shim_stub_dealloc_td(struct ibv_td *td)
{
	RTE_SET_USED(td);
	return EOPNOTSUPP;
}

static struct ibv_td *
shim_stub_alloc_td(struct ibv_context *context,
		   struct ibv_td_init_attr *init_attr)
{
	RTE_SET_USED(context);
	RTE_SET_USED(init_attr);
	errno = EOPNOTSUPP;
	return NULL;
}

static int
shim_stub_post_srq_ops(struct ibv_srq *srq, struct ibv_ops_wr *op,
		       struct ibv_ops_wr **bad_op)
{
	RTE_SET_USED(srq);
	*bad_op = op;
	return EOPNOTSUPP;
}

static int
shim_stub_destroy_rwq_ind_table(struct ibv_rwq_ind_table *rwq_ind_table)
{
	RTE_SET_USED(rwq_ind_table);
	return EOPNOTSUPP;
}

static struct ibv_rwq_ind_table *
shim_stub_create_rwq_ind_table(struct ibv_context *context,
			       struct ibv_rwq_ind_table_init_attr *init_attr)
{
	RTE_SET_USED(context);
	RTE_SET_USED(init_attr);
	errno = EOPNOTSUPP;
	return NULL;
}

static int
shim_stub_destroy_wq(struct ibv_wq *wq)
{
	RTE_SET_USED(wq);
	return EOPNOTSUPP;
}

static int
shim_stub_modify_wq(struct ibv_wq *wq, struct ibv_wq_attr *wq_attr)
{
	RTE_SET_USED(wq);
	RTE_SET_USED(wq_attr);
	return EOPNOTSUPP;
}

static struct ibv_wq *
shim_stub_create_wq(struct ibv_context *context,
		    struct ibv_wq_init_attr *wq_init_attr)
{
	RTE_SET_USED(context);
	RTE_SET_USED(wq_init_attr);
	errno = EOPNOTSUPP;
	return NULL;
}

static int
shim_stub_query_rt_values(struct ibv_context *context,
			  struct ibv_values_ex *values)
{
	RTE_SET_USED(context);
	RTE_SET_USED(values);
	return EOPNOTSUPP;
}

static struct ibv_cq_ex *
shim_stub_create_cq_ex(struct ibv_context *context,
		       struct ibv_cq_init_attr_ex *init_attr)
{
	RTE_SET_USED(context);
	RTE_SET_USED(init_attr);
	errno = EOPNOTSUPP;
	return NULL;
}

static int
shim_stub_query_device_ex(struct ibv_context *context,
			  const struct ibv_query_device_ex_input *input,
			  struct ibv_device_attr_ex *attr, size_t attr_size)
{
	RTE_SET_USED(context);
	RTE_SET_USED(input);
	RTE_SET_USED(attr);
	RTE_SET_USED(attr_size);
	return EOPNOTSUPP;
}

static int
shim_stub_destroy_flow(struct ibv_flow *flow)
{
	RTE_SET_USED(flow);
	return EOPNOTSUPP;
}

static void
shim_stub_abi_placeholder(void)
{
}

static struct ibv_flow *
shim_stub_create_flow(struct ibv_qp *qp, struct ibv_flow_attr *flow_attr)
{
	RTE_SET_USED(qp);
	RTE_SET_USED(flow_attr);
	errno = EOPNOTSUPP;
	return NULL;
}

static struct ibv_qp *
shim_stub_open_qp(struct ibv_context *context, struct ibv_qp_open_attr *attr)
{
	RTE_SET_USED(context);
	RTE_SET_USED(attr);
	errno = EOPNOTSUPP;
	return NULL;
}

static struct ibv_qp *
shim_stub_create_qp_ex(struct ibv_context *context,
		       struct ibv_qp_init_attr_ex *qp_init_attr_ex)
{
	RTE_SET_USED(context);
	RTE_SET_USED(qp_init_attr_ex);
	errno = EOPNOTSUPP;
	return NULL;
}

static int
shim_stub_get_srq_num(struct ibv_srq *srq, uint32_t *srq_num)
{
	RTE_SET_USED(srq);
	RTE_SET_USED(srq_num);
	return EOPNOTSUPP;
}

static struct ibv_srq *
shim_stub_create_srq_ex(struct ibv_context *context,
			struct ibv_srq_init_attr_ex *srq_init_attr_ex)
{
	RTE_SET_USED(context);
	RTE_SET_USED(srq_init_attr_ex);
	errno = EOPNOTSUPP;
	return NULL;
}

static struct ibv_xrcd *
shim_stub_open_xrcd(struct ibv_context *context,
		    struct ibv_xrcd_init_attr *xrcd_init_attr)
{
	RTE_SET_USED(context);
	RTE_SET_USED(xrcd_init_attr);
	errno = EOPNOTSUPP;
	return NULL;
}

static int
shim_stub_close_xrcd(struct ibv_xrcd *xrcd)
{
	RTE_SET_USED(xrcd);
	return EOPNOTSUPP;
}

static int
shim_stub_query_port(struct ibv_context *context, uint8_t port_num,
		     struct ibv_port_attr *port_attr, size_t port_attr_len)
{
	RTE_SET_USED(context);
	RTE_SET_USED(port_num);
	RTE_SET_USED(port_attr);
	RTE_SET_USED(port_attr_len);
	return EOPNOTSUPP;
}

/* ------------------------------------------------ ibv_context_ops members */

static int
shim_stub_compat_query_device(struct ibv_context *context,
			      struct ibv_device_attr *device_attr)
{
	RTE_SET_USED(context);
	RTE_SET_USED(device_attr);
	return EOPNOTSUPP;
}

static int
shim_stub_compat_query_port(struct ibv_context *context, uint8_t port_num,
			    struct _compat_ibv_port_attr *port_attr)
{
	RTE_SET_USED(context);
	RTE_SET_USED(port_num);
	RTE_SET_USED(port_attr);
	return EOPNOTSUPP;
}

/* The _compat_* slots nobody calls any more: void *(*)(void). */
static void *
shim_stub_compat(void)
{
	errno = EOPNOTSUPP;
	return NULL;
}

static struct ibv_mw *
shim_stub_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type)
{
	RTE_SET_USED(pd);
	RTE_SET_USED(type);
	errno = EOPNOTSUPP;
	return NULL;
}

static int
shim_stub_bind_mw(struct ibv_qp *qp, struct ibv_mw *mw,
		  struct ibv_mw_bind *mw_bind)
{
	RTE_SET_USED(qp);
	RTE_SET_USED(mw);
	RTE_SET_USED(mw_bind);
	return EOPNOTSUPP;
}

static int
shim_stub_dealloc_mw(struct ibv_mw *mw)
{
	RTE_SET_USED(mw);
	return EOPNOTSUPP;
}

static int
shim_stub_poll_cq(struct ibv_cq *cq, int num_entries, struct ibv_wc *wc)
{
	RTE_SET_USED(cq);
	RTE_SET_USED(num_entries);
	RTE_SET_USED(wc);
	return -EOPNOTSUPP;
}

static int
shim_stub_req_notify_cq(struct ibv_cq *cq, int solicited_only)
{
	RTE_SET_USED(cq);
	RTE_SET_USED(solicited_only);
	return EOPNOTSUPP;
}

static int
shim_stub_post_srq_recv(struct ibv_srq *srq, struct ibv_recv_wr *recv_wr,
			struct ibv_recv_wr **bad_recv_wr)
{
	RTE_SET_USED(srq);
	*bad_recv_wr = recv_wr;
	return EOPNOTSUPP;
}

static int
shim_stub_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr,
		    struct ibv_send_wr **bad_wr)
{
	RTE_SET_USED(qp);
	*bad_wr = wr;
	return EOPNOTSUPP;
}

static int
shim_stub_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr,
		    struct ibv_recv_wr **bad_wr)
{
	RTE_SET_USED(qp);
	*bad_wr = wr;
	return EOPNOTSUPP;
}

/*
 * Fill every operation of a context with its stub, as rdma-core's
 * verbs_set_ops() starts from dummy_ops.  `priv` is not an operation: the
 * real libibverbs never sees a rocepmd context.
 */
void
shim_dummy_ops_set(struct verbs_context *vctx)
{
	struct ibv_context_ops *ops = &vctx->context.ops;

	vctx->query_port = shim_stub_query_port;
	vctx->advise_mr = shim_stub_advise_mr;
	vctx->alloc_null_mr = shim_stub_alloc_null_mr;
	vctx->read_counters = shim_stub_read_counters;
	vctx->attach_counters_point_flow = shim_stub_attach_counters_point_flow;
	vctx->create_counters = shim_stub_create_counters;
	vctx->destroy_counters = shim_stub_destroy_counters;
	vctx->reg_dm_mr = shim_stub_reg_dm_mr;
	vctx->alloc_dm = shim_stub_alloc_dm;
	vctx->free_dm = shim_stub_free_dm;
	vctx->modify_flow_action_esp = shim_stub_modify_flow_action_esp;
	vctx->destroy_flow_action = shim_stub_destroy_flow_action;
	vctx->create_flow_action_esp = shim_stub_create_flow_action_esp;
	vctx->modify_qp_rate_limit = shim_stub_modify_qp_rate_limit;
	vctx->alloc_parent_domain = shim_stub_alloc_parent_domain;
	vctx->dealloc_td = shim_stub_dealloc_td;
	vctx->alloc_td = shim_stub_alloc_td;
	vctx->post_srq_ops = shim_stub_post_srq_ops;
	vctx->destroy_rwq_ind_table = shim_stub_destroy_rwq_ind_table;
	vctx->create_rwq_ind_table = shim_stub_create_rwq_ind_table;
	vctx->destroy_wq = shim_stub_destroy_wq;
	vctx->modify_wq = shim_stub_modify_wq;
	vctx->create_wq = shim_stub_create_wq;
	vctx->query_rt_values = shim_stub_query_rt_values;
	vctx->create_cq_ex = shim_stub_create_cq_ex;
	vctx->priv = NULL;
	vctx->query_device_ex = shim_stub_query_device_ex;
	vctx->ibv_destroy_flow = shim_stub_destroy_flow;
	vctx->ABI_placeholder2 = shim_stub_abi_placeholder;
	vctx->ibv_create_flow = shim_stub_create_flow;
	vctx->ABI_placeholder1 = shim_stub_abi_placeholder;
	vctx->open_qp = shim_stub_open_qp;
	vctx->create_qp_ex = shim_stub_create_qp_ex;
	vctx->get_srq_num = shim_stub_get_srq_num;
	vctx->create_srq_ex = shim_stub_create_srq_ex;
	vctx->open_xrcd = shim_stub_open_xrcd;
	vctx->close_xrcd = shim_stub_close_xrcd;
	vctx->_ABI_placeholder3 = 0;

	ops->_compat_query_device = shim_stub_compat_query_device;
	ops->_compat_query_port = shim_stub_compat_query_port;
	ops->_compat_alloc_pd = shim_stub_compat;
	ops->_compat_dealloc_pd = shim_stub_compat;
	ops->_compat_reg_mr = shim_stub_compat;
	ops->_compat_rereg_mr = shim_stub_compat;
	ops->_compat_dereg_mr = shim_stub_compat;
	ops->alloc_mw = shim_stub_alloc_mw;
	ops->bind_mw = shim_stub_bind_mw;
	ops->dealloc_mw = shim_stub_dealloc_mw;
	ops->_compat_create_cq = shim_stub_compat;
	ops->poll_cq = shim_stub_poll_cq;
	ops->req_notify_cq = shim_stub_req_notify_cq;
	ops->_compat_cq_event = shim_stub_compat;
	ops->_compat_resize_cq = shim_stub_compat;
	ops->_compat_destroy_cq = shim_stub_compat;
	ops->_compat_create_srq = shim_stub_compat;
	ops->_compat_modify_srq = shim_stub_compat;
	ops->_compat_query_srq = shim_stub_compat;
	ops->_compat_destroy_srq = shim_stub_compat;
	ops->post_srq_recv = shim_stub_post_srq_recv;
	ops->_compat_create_qp = shim_stub_compat;
	ops->_compat_query_qp = shim_stub_compat;
	ops->_compat_modify_qp = shim_stub_compat;
	ops->_compat_destroy_qp = shim_stub_compat;
	ops->post_send = shim_stub_post_send;
	ops->post_recv = shim_stub_post_recv;
	ops->_compat_create_ah = shim_stub_compat;
	ops->_compat_destroy_ah = shim_stub_compat;
	ops->_compat_attach_mcast = shim_stub_compat;
	ops->_compat_detach_mcast = shim_stub_compat;
	ops->_compat_async_event = shim_stub_compat;
}

/* ------------------------------------------------------ exported stubs */

SHIM_EXPORT struct ibv_mr *
ibv_reg_dmabuf_mr(struct ibv_pd *pd, uint64_t offset, size_t length,
		  uint64_t iova, int fd, int access)
{
	RTE_SET_USED(pd);
	RTE_SET_USED(offset);
	RTE_SET_USED(length);
	RTE_SET_USED(iova);
	RTE_SET_USED(fd);
	RTE_SET_USED(access);
	errno = EOPNOTSUPP;
	return NULL;
}

SHIM_EXPORT struct ibv_context *
ibv_import_device(int cmd_fd)
{
	RTE_SET_USED(cmd_fd);
	errno = EOPNOTSUPP;
	return NULL;
}

SHIM_EXPORT struct ibv_pd *
ibv_import_pd(struct ibv_context *context, uint32_t pd_handle)
{
	RTE_SET_USED(context);
	RTE_SET_USED(pd_handle);
	errno = EOPNOTSUPP;
	return NULL;
}

SHIM_EXPORT void
ibv_unimport_pd(struct ibv_pd *pd)
{
	RTE_SET_USED(pd);
}

SHIM_EXPORT struct ibv_mr *
ibv_import_mr(struct ibv_pd *pd, uint32_t mr_handle)
{
	RTE_SET_USED(pd);
	RTE_SET_USED(mr_handle);
	errno = EOPNOTSUPP;
	return NULL;
}

SHIM_EXPORT void
ibv_unimport_mr(struct ibv_mr *mr)
{
	RTE_SET_USED(mr);
}

SHIM_EXPORT struct ibv_dm *
ibv_import_dm(struct ibv_context *context, uint32_t dm_handle)
{
	RTE_SET_USED(context);
	RTE_SET_USED(dm_handle);
	errno = EOPNOTSUPP;
	return NULL;
}

SHIM_EXPORT void
ibv_unimport_dm(struct ibv_dm *dm)
{
	RTE_SET_USED(dm);
}

SHIM_EXPORT int
ibv_set_ece(struct ibv_qp *qp, struct ibv_ece *ece)
{
	RTE_SET_USED(qp);
	RTE_SET_USED(ece);
	errno = EOPNOTSUPP;
	return EOPNOTSUPP;
}

SHIM_EXPORT int
ibv_query_ece(struct ibv_qp *qp, struct ibv_ece *ece)
{
	RTE_SET_USED(qp);
	RTE_SET_USED(ece);
	errno = EOPNOTSUPP;
	return EOPNOTSUPP;
}

/* The engine resolves neighbours itself (ARP); no netlink lookup here. */
SHIM_EXPORT int
ibv_resolve_eth_l2_from_gid(struct ibv_context *context,
			    struct ibv_ah_attr *attr,
			    uint8_t eth_mac[ETHERNET_LL_SIZE], uint16_t *vid)
{
	RTE_SET_USED(context);
	RTE_SET_USED(attr);
	RTE_SET_USED(eth_mac);
	RTE_SET_USED(vid);
	errno = EOPNOTSUPP;
	return -EOPNOTSUPP;
}

/* No ordering guarantee is advertised: 0 is always a correct answer. */
SHIM_EXPORT int
ibv_query_qp_data_in_order(struct ibv_qp *qp, enum ibv_wr_opcode op,
			   uint32_t flags)
{
	RTE_SET_USED(qp);
	RTE_SET_USED(op);
	RTE_SET_USED(flags);
	return 0;
}
