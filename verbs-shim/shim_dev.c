/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Devices and contexts: the device list, opening and closing a device, and
 * the device, port, GID and P_Key queries.
 *
 * Every rocepmd device is a RoCEv2 channel adapter with one Ethernet port
 * whose attributes come from the control block at the base of its shared
 * region (struct rp_dev_ctl).  The GID table holds index 0 only, the
 * IPv4-mapped address of the port; the P_Key table holds 0xffff.
 */

#include <endian.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <rte_common.h>

#include "shim.h"

static struct shim_device shim_devs[RP_MAX_PORTS];
/* Published with a release store: shim_dev_node() reads it from any thread. */
static unsigned int shim_ndevs;

/* --------------------------------------------------------------- control */

static const char *const shim_ctrl_op_name[RP_CTRL_OP_MAX] = {
	[RP_CTRL_NOP] = "NOP",
	[RP_CTRL_PD_ALLOC] = "PD_ALLOC",
	[RP_CTRL_PD_FREE] = "PD_FREE",
	[RP_CTRL_MR_REG] = "MR_REG",
	[RP_CTRL_MR_DEREG] = "MR_DEREG",
	[RP_CTRL_CQ_CREATE] = "CQ_CREATE",
	[RP_CTRL_CQ_DESTROY] = "CQ_DESTROY",
	[RP_CTRL_QP_CREATE] = "QP_CREATE",
	[RP_CTRL_QP_MODIFY] = "QP_MODIFY",
	[RP_CTRL_QP_QUERY] = "QP_QUERY",
	[RP_CTRL_QP_DESTROY] = "QP_DESTROY",
	[RP_CTRL_AH_CREATE] = "AH_CREATE",
	[RP_CTRL_AH_DESTROY] = "AH_DESTROY",
	[RP_CTRL_CHAN_CREATE] = "CHAN_CREATE",
	[RP_CTRL_CHAN_DESTROY] = "CHAN_DESTROY",
	[RP_CTRL_ASYNC_REG] = "ASYNC_REG",
	[RP_CTRL_ASYNC_UNREG] = "ASYNC_UNREG",
	[RP_CTRL_MR_REREG] = "MR_REREG",
	[RP_CTRL_MW_ALLOC] = "MW_ALLOC",
	[RP_CTRL_MW_DEALLOC] = "MW_DEALLOC",
	[RP_CTRL_CQ_RESIZE] = "CQ_RESIZE",
	[RP_CTRL_GSI_BIND] = "GSI_BIND",
	[RP_CTRL_GSI_WILL] = "GSI_WILL",
	[RP_CTRL_CQ_MODERATE] = "CQ_MODERATE",
};

/*
 * Run a control operation on the engine.
 * @return 0, or a negative errno
 */
int
shim_ctrl(struct shim_context *ctx, struct rp_ctrl_slot *slot)
{
	const char *name = "?";
	int ret;

	if (!shim_engine_running())
		return -ENODEV;
	ret = shim_engine->ctrl_call(ctx->dev, slot);
	if (ret > 0)
		ret = -EIO;		/* not a value the engine may return */
	if (ret < 0) {
		if (slot->op < RP_CTRL_OP_MAX &&
		    shim_ctrl_op_name[slot->op] != NULL)
			name = shim_ctrl_op_name[slot->op];
		SHIM_LOG(DEBUG, "%s: %s: %s", ctx->ctl->name, name,
			 strerror(-ret));
	}
	return ret;
}

/* ----------------------------------------------------------- attributes */

/* Node GUID: modified EUI-64 of the MAC, as rxe and mlx5 do for RoCE. */
static __be64
shim_guid_from_mac(const uint8_t mac[6])
{
	const uint8_t eui[8] = {
		mac[0] ^ 0x02, mac[1], mac[2], 0xff, 0xfe,
		mac[3], mac[4], mac[5],
	};
	__be64 guid;

	memcpy(&guid, eui, sizeof(guid));
	return guid;
}

static enum ibv_mtu
shim_mtu_enum(uint32_t bytes)
{
	if (bytes >= 4096)
		return IBV_MTU_4096;
	if (bytes >= 2048)
		return IBV_MTU_2048;
	if (bytes >= 1024)
		return IBV_MTU_1024;
	if (bytes >= 512)
		return IBV_MTU_512;
	return IBV_MTU_256;
}

/* IB_UVERBS_DEVICE_ATOMIC_WRITE of Linux 6.2's ib_user_verbs.h: the
 * device_cap_flags_ex bit of ATOMIC WRITE. */
#define SHIM_DEVICE_ATOMIC_WRITE	(UINT64_C(1) << 40)

/* IB link width and speed codes, as ibv_port_attr carries them. */
#define SHIM_WIDTH_1X	1
#define SHIM_WIDTH_4X	2
#define SHIM_SPEED_SDR	1	/* 2.5 Gb/s per lane */
#define SHIM_SPEED_DDR	2	/* 5 */
#define SHIM_SPEED_QDR	4	/* 10 */
#define SHIM_SPEED_FDR	16	/* 14 */
#define SHIM_SPEED_EDR	32	/* 25 */
#define SHIM_SPEED_HDR	64	/* 50 */
#define SHIM_SPEED_NDR	128	/* 100 */

/* The IB width x speed of each Ethernet rate, slowest first. */
static const struct {
	uint32_t mbps;
	uint8_t width;
	uint8_t speed;
} shim_link_rates[] = {
	{ 2500, SHIM_WIDTH_1X, SHIM_SPEED_SDR },
	{ 5000, SHIM_WIDTH_1X, SHIM_SPEED_DDR },
	{ 10000, SHIM_WIDTH_1X, SHIM_SPEED_QDR },
	{ 14000, SHIM_WIDTH_1X, SHIM_SPEED_FDR },
	{ 20000, SHIM_WIDTH_4X, SHIM_SPEED_DDR },
	{ 25000, SHIM_WIDTH_1X, SHIM_SPEED_EDR },
	{ 40000, SHIM_WIDTH_4X, SHIM_SPEED_QDR },
	{ 50000, SHIM_WIDTH_1X, SHIM_SPEED_HDR },
	{ 56000, SHIM_WIDTH_4X, SHIM_SPEED_FDR },
	{ 100000, SHIM_WIDTH_4X, SHIM_SPEED_EDR },
	{ 200000, SHIM_WIDTH_4X, SHIM_SPEED_HDR },
	{ 400000, SHIM_WIDTH_4X, SHIM_SPEED_NDR },
};

/* The fastest IB rate not above the link speed (2.5 Gb/s at least). */
static void
shim_link_rate(uint32_t mbps, uint8_t *width, uint8_t *speed)
{
	unsigned int i;

	*width = shim_link_rates[0].width;
	*speed = shim_link_rates[0].speed;
	for (i = 0; i < RTE_DIM(shim_link_rates); i++) {
		if (shim_link_rates[i].mbps > mbps)
			break;
		*width = shim_link_rates[i].width;
		*speed = shim_link_rates[i].speed;
	}
}

static int
shim_clamp_int(uint32_t v)
{
	return v > INT32_MAX ? INT32_MAX : (int)v;
}

static void
shim_device_attr(const struct shim_context *ctx, struct ibv_device_attr *a)
{
	const struct rp_dev_ctl *ctl = ctx->ctl;
	uint64_t res_rd_atom;

	memset(a, 0, sizeof(*a));
	snprintf(a->fw_ver, sizeof(a->fw_ver), "%s", SHIM_FW_VER);
	a->node_guid = shim_guid_from_mac(ctl->mac);
	/* The engine's word is in host order; 0 means "same as the node". */
	a->sys_image_guid = ctl->sys_image_guid != 0 ?
			    htobe64(ctl->sys_image_guid) : a->node_guid;
	a->max_mr_size = UINT64_MAX;
	a->page_size_cap = 0xfffff000;	/* any power of two from 4 KiB */
	/* As rxe reports a soft device: IBTA A3.3.1's "no vendor" ID. */
	a->vendor_id = 0xffffff;
	a->vendor_part_id = 0;
	a->hw_ver = 0;
	a->max_qp = shim_clamp_int(ctl->max_qp);
	a->max_qp_wr = shim_clamp_int(ctl->max_qp_wr);
	/*
	 * Memory windows of both types; not MEM_MGT_EXTENSIONS, which also
	 * promises fast registration and the reserved lkey (neither exists).
	 */
	a->device_cap_flags = IBV_DEVICE_SYS_IMAGE_GUID |
			      IBV_DEVICE_RC_RNR_NAK_GEN |
			      IBV_DEVICE_MEM_WINDOW |
			      IBV_DEVICE_MEM_WINDOW_TYPE_2B;
	a->max_sge = shim_clamp_int(ctl->max_sge);
	a->max_sge_rd = shim_clamp_int(ctl->max_sge);
	a->max_cq = shim_clamp_int(ctl->max_cq);
	a->max_cqe = shim_clamp_int(ctl->max_cqe);
	a->max_mr = shim_clamp_int(ctl->max_mr);
	a->max_pd = shim_clamp_int(ctl->max_pd);
	a->max_mw = shim_clamp_int(ctl->max_mr);	/* one key table */
	/* As rxe: a QP can have this many READs and atomics in flight, as
	 * requester (max_rd_atomic) and as responder (max_dest_rd_atomic). */
	a->max_qp_rd_atom = shim_clamp_int(ctl->max_rd_atom);
	a->max_qp_init_rd_atom = shim_clamp_int(ctl->max_rd_atom);
	res_rd_atom = (uint64_t)ctl->max_qp * ctl->max_rd_atom;
	a->max_res_rd_atom = res_rd_atom > INT32_MAX ? INT32_MAX :
			     (int)res_rd_atom;
	/* As rxe: atomics are atomic with respect to every other atomic of
	 * the device (the responder executes them with the CPU's atomic
	 * instructions, so the application's own are safe too). */
	a->atomic_cap = IBV_ATOMIC_HCA;
	a->max_ah = shim_clamp_int(ctl->max_ah);
	a->max_mcast_grp = RP_MAX_MCAST;
	a->max_mcast_qp_attach = RP_MCAST_QPS;
	a->max_total_mcast_qp_attach = RP_MAX_MCAST * RP_MCAST_QPS;
	a->max_srq = shim_clamp_int(ctl->max_srq);
	a->max_srq_wr = shim_clamp_int(ctl->max_srq_wr);
	a->max_srq_sge = shim_clamp_int(ctl->max_srq_sge);
	a->max_pkeys = 1;
	a->local_ca_ack_delay = 15;
	a->phys_port_cnt = 1;
}

static void
shim_port_attr(const struct shim_context *ctx, struct ibv_port_attr *a)
{
	const struct rp_dev_ctl *ctl = ctx->ctl;
	/* Refreshed by the engine while it runs; a hint, relaxed. */
	bool up = rp_load_relaxed(&ctl->link_up) != 0;

	memset(a, 0, sizeof(*a));
	a->state = up ? IBV_PORT_ACTIVE : IBV_PORT_DOWN;
	a->max_mtu = IBV_MTU_4096;
	a->active_mtu = shim_mtu_enum(ctl->mtu);
	a->gid_tbl_len = SHIM_GID_TBL_LEN;
	a->port_cap_flags = IBV_PORT_CM_SUP | IBV_PORT_IP_BASED_GIDS;
	a->max_msg_sz = 1u << 31;
	a->pkey_tbl_len = 1;
	a->lid = 0;
	a->sm_lid = 0;
	a->max_vl_num = 1;
	shim_link_rate(rp_load_relaxed(&ctl->link_speed), &a->active_width,
		       &a->active_speed);
	a->phys_state = up ? 5 : 3;	/* LinkUp : Disabled */
	a->link_layer = IBV_LINK_LAYER_ETHERNET;
}

static bool
shim_gid_empty(const uint8_t gid[16])
{
	static const uint8_t zero[16];

	return memcmp(gid, zero, sizeof(zero)) == 0;
}

/* ---------------------------------------------------------- device list */

/* Build the devices once the engine runs (from the bootstrap once). */
int
shim_dev_probe(void)
{
	unsigned int n = shim_engine->dev_count();
	unsigned int i;

	if (n > RP_MAX_PORTS)
		n = RP_MAX_PORTS;
	for (i = 0; i < n; i++) {
		const struct rp_dev_ctl *ctl = shim_engine->dev_ctl(i);
		struct shim_device *d = &shim_devs[shim_ndevs];
		char name[RP_DEV_NAME_LEN + 1];

		if (ctl == NULL)
			continue;
		if (ctl->magic != RP_ABI_MAGIC ||
		    ctl->version != RP_ABI_VERSION) {
			SHIM_LOG(ERR, "device %u: ABI 0x%08x v%u, expected 0x%08x v%u: ignored",
				 i, ctl->magic, ctl->version, RP_ABI_MAGIC,
				 RP_ABI_VERSION);
			continue;
		}
		snprintf(name, sizeof(name), "%.*s",
			 (int)strnlen(ctl->name, sizeof(ctl->name)),
			 ctl->name);
		memset(d, 0, sizeof(*d));
		d->ibv.node_type = IBV_NODE_CA;
		d->ibv.transport_type = IBV_TRANSPORT_IB;
		snprintf(d->ibv.name, sizeof(d->ibv.name), "%s", name);
		snprintf(d->ibv.dev_name, sizeof(d->ibv.dev_name), "%s", name);
		/* No sysfs node exists: reads of these paths fail cleanly. */
		snprintf(d->ibv.dev_path, sizeof(d->ibv.dev_path),
			 "/sys/class/infiniband_verbs/%s", name);
		snprintf(d->ibv.ibdev_path, sizeof(d->ibv.ibdev_path),
			 "/sys/class/infiniband/%s", name);
		d->dev = i;
		d->guid = shim_guid_from_mac(ctl->mac);
		rp_store_release(&shim_ndevs, shim_ndevs + 1);
		SHIM_LOG(INFO, "%s: port %u, mtu %u, %s", d->ibv.name,
			 ctl->port_id, ctl->mtu,
			 rp_load_relaxed(&ctl->link_up) ? "link up" : "link down");
	}
	return 0;
}

/*
 * The device whose character device node (struct ibv_device dev_name
 * under /dev/infiniband/) is `name`, or -1: none, or the devices are not
 * probed yet.  Never boots the engine.
 */
int
shim_dev_node(const char *name)
{
	unsigned int n = rp_load_acquire(&shim_ndevs);
	unsigned int i;

	for (i = 0; i < n; i++)
		if (strcmp(shim_devs[i].ibv.dev_name, name) == 0)
			return (int)i;
	return -1;
}

static struct shim_device *
shim_dev_of(struct ibv_device *device)
{
	unsigned int i;

	for (i = 0; i < shim_ndevs; i++)
		if (&shim_devs[i].ibv == device)
			return &shim_devs[i];
	return NULL;
}

SHIM_EXPORT struct ibv_device **
ibv_get_device_list(int *num_devices)
{
	struct ibv_device **list;
	unsigned int n = 0;
	unsigned int i;
	int ret;

	ret = shim_boot();
	/* Another process owns a port: no list, as rdma-core fails. */
	if (ret == -EBUSY) {
		errno = EBUSY;
		return NULL;
	}
	if (ret == 0 && shim_engine_running())
		n = shim_ndevs;

	list = calloc(n + 1, sizeof(*list));
	if (list == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	for (i = 0; i < n; i++)
		list[i] = &shim_devs[i].ibv;
	if (num_devices != NULL)
		*num_devices = (int)n;
	if (n == 0)
		errno = ENODEV;
	return list;
}

SHIM_EXPORT void
ibv_free_device_list(struct ibv_device **list)
{
	free(list);
}

SHIM_EXPORT const char *
ibv_get_device_name(struct ibv_device *device)
{
	return device->name;
}

SHIM_EXPORT __be64
ibv_get_device_guid(struct ibv_device *device)
{
	struct shim_device *d = shim_dev_of(device);

	return d != NULL ? d->guid : 0;
}

SHIM_EXPORT int
ibv_get_device_index(struct ibv_device *device)
{
	struct shim_device *d = shim_dev_of(device);

	return d != NULL ? (int)d->dev : -1;
}

/* -------------------------------------------------------------- context */

static int
shim_compat_query_device(struct ibv_context *ibctx,
			 struct ibv_device_attr *attr)
{
	return ibv_query_device(ibctx, attr);
}

#undef ibv_query_port
static int
shim_compat_query_port(struct ibv_context *ibctx, uint8_t port_num,
		       struct _compat_ibv_port_attr *attr)
{
	return ibv_query_port(ibctx, port_num, attr);
}

/* The operations rocepmd implements, over rdma-core's dummy defaults. */
static void
shim_ops_set(struct verbs_context *vctx)
{
	struct ibv_context_ops *ops = &vctx->context.ops;

	shim_dummy_ops_set(vctx);

	ops->_compat_query_device = shim_compat_query_device;
	ops->_compat_query_port = shim_compat_query_port;
	ops->poll_cq = shim_poll_cq;
	ops->req_notify_cq = shim_req_notify_cq;
	ops->post_send = shim_post_send;
	ops->post_recv = shim_post_recv;
	ops->post_srq_recv = shim_post_srq_recv;
	ops->alloc_mw = shim_alloc_mw;
	ops->dealloc_mw = shim_dealloc_mw;
	ops->bind_mw = shim_bind_mw;

	vctx->query_port = shim_query_port;
	vctx->advise_mr = shim_advise_mr;
	vctx->query_device_ex = shim_query_device_ex;
	vctx->modify_cq = shim_modify_cq;
	vctx->create_qp_ex = shim_create_qp_ex;
	vctx->create_cq_ex = shim_create_cq_ex;
	vctx->create_srq_ex = shim_create_srq_ex;
	vctx->get_srq_num = shim_get_srq_num;
	vctx->post_srq_ops = shim_post_srq_ops;
}

SHIM_EXPORT struct ibv_context *
ibv_open_device(struct ibv_device *device)
{
	struct shim_device *d = shim_dev_of(device);
	struct shim_context *ctx;
	struct ibv_context *ibctx;
	int ret;

	if (d == NULL || !shim_engine_running()) {
		ret = -ENODEV;
		goto err;
	}
	ctx = calloc(1, sizeof(*ctx));
	if (ctx == NULL) {
		ret = -ENOMEM;
		goto err;
	}
	ctx->cq_tab = calloc(SHIM_CQ_TAB, sizeof(*ctx->cq_tab));
	ctx->qp_tab = calloc(SHIM_QP_TAB, sizeof(*ctx->qp_tab));
	ctx->srq_tab = calloc(SHIM_SRQ_TAB, sizeof(*ctx->srq_tab));
	if (ctx->cq_tab == NULL || ctx->qp_tab == NULL ||
	    ctx->srq_tab == NULL) {
		ret = -ENOMEM;
		goto err_free_tab;
	}
	ctx->dev = d->dev;
	ctx->ctl = shim_engine->dev_ctl(d->dev);
	if (ctx->ctl == NULL) {
		ret = -ENODEV;
		goto err_free_tab;
	}
	ctx->obj_size = shim_engine->objects(d->dev, &ctx->obj_base);
	ctx->async_ring = shim_engine->async(d->dev);
	if (ctx->obj_base == NULL || ctx->async_ring == NULL) {
		ret = -ENODEV;
		goto err_free_tab;
	}
	ret = shim_async_init(ctx);
	if (ret < 0)
		goto err_free_tab;
	pthread_mutex_init(&ctx->cq_lock, NULL);
	pthread_mutex_init(&ctx->qp_lock, NULL);
	pthread_mutex_init(&ctx->srq_lock, NULL);

	shim_ops_set(&ctx->vctx);
	ctx->vctx.sz = sizeof(ctx->vctx);
	ibctx = &ctx->vctx.context;
	ibctx->device = device;
	ibctx->cmd_fd = -1;		/* no kernel command channel */
	ibctx->async_fd = ctx->async.fd;
	ibctx->num_comp_vectors = SHIM_NUM_COMP_VECTORS;
	pthread_mutex_init(&ibctx->mutex, NULL);
	ibctx->abi_compat = __VERBS_ABI_IS_EXTENDED;
	return ibctx;

err_free_tab:
	free(ctx->srq_tab);
	free(ctx->qp_tab);
	free(ctx->cq_tab);
	free(ctx);
err:
	errno = -ret;
	return NULL;
}

SHIM_EXPORT int
ibv_close_device(struct ibv_context *ibctx)
{
	struct shim_context *ctx = shim_ctx(ibctx);

	shim_async_fini(ctx);
	pthread_mutex_destroy(&ibctx->mutex);
	pthread_mutex_destroy(&ctx->cq_lock);
	pthread_mutex_destroy(&ctx->qp_lock);
	pthread_mutex_destroy(&ctx->srq_lock);
	free(ctx->srq_tab);
	free(ctx->qp_tab);
	free(ctx->cq_tab);
	free(ctx);
	return 0;
}

/* -------------------------------------------------------------- queries */

SHIM_EXPORT int
ibv_query_device(struct ibv_context *ibctx, struct ibv_device_attr *attr)
{
	shim_device_attr(shim_ctx(ibctx), attr);
	return 0;
}

int
shim_query_device_ex(struct ibv_context *ibctx,
		     const struct ibv_query_device_ex_input *input,
		     struct ibv_device_attr_ex *attr, size_t attr_size)
{
	const struct shim_context *ctx = shim_ctx(ibctx);
	struct ibv_device_attr_ex full;

	if ((input != NULL && input->comp_mask != 0) ||
	    attr_size < sizeof(attr->orig_attr)) {
		errno = EINVAL;
		return EINVAL;
	}
	memset(&full, 0, sizeof(full));
	shim_device_attr(ctx, &full.orig_attr);
	full.phys_port_cnt_ex = full.orig_attr.phys_port_cnt;
	full.tm_caps.max_rndv_hdr_size = ctx->ctl->tm_max_rndv_hdr_size;
	full.tm_caps.max_num_tags = ctx->ctl->tm_max_num_tags;
	full.tm_caps.flags = ctx->ctl->tm_flags;
	full.tm_caps.max_ops = ctx->ctl->tm_max_ops;
	full.tm_caps.max_sge = ctx->ctl->tm_max_sge;
	full.cq_mod_caps.max_cq_count = RP_CQ_MOD_COUNT_MAX;
	full.cq_mod_caps.max_cq_period = RP_CQ_MOD_PERIOD_MAX;
	/* ATOMIC WRITE (IBV_WR_ATOMIC_WRITE, ibv_wr_atomic_write()), in
	 * the kernel's bit (rdma-core 44's headers predate it). */
	full.device_cap_flags_ex = full.orig_attr.device_cap_flags |
		SHIM_DEVICE_ATOMIC_WRITE;
	/*
	 * On-demand paging: the engine reaches registered memory through
	 * the application's own mapping and pins nothing, so every MR is
	 * "on demand".  Implicit ODP too, for an embedded engine: it reaches
	 * such a key's memory through the kernel, so an unmapped address a
	 * peer names is a NAK, not a fault (rp_mem.c).  An attached
	 * process's whole memory is not offered (rp_mr_reg()).
	 */
	full.odp_caps.general_caps = IBV_ODP_SUPPORT |
		(shim_engine != &shim_engine_attached_ops ?
		 IBV_ODP_SUPPORT_IMPLICIT : 0);
	full.odp_caps.per_transport_caps.rc_odp_caps = IBV_ODP_SUPPORT_SEND |
		IBV_ODP_SUPPORT_RECV | IBV_ODP_SUPPORT_WRITE |
		IBV_ODP_SUPPORT_READ | IBV_ODP_SUPPORT_SRQ_RECV |
		(full.orig_attr.atomic_cap != IBV_ATOMIC_NONE ?
		 IBV_ODP_SUPPORT_ATOMIC : 0);
	full.odp_caps.per_transport_caps.uc_odp_caps = IBV_ODP_SUPPORT_SEND |
		IBV_ODP_SUPPORT_RECV | IBV_ODP_SUPPORT_WRITE;
	full.odp_caps.per_transport_caps.ud_odp_caps = IBV_ODP_SUPPORT_SEND |
		IBV_ODP_SUPPORT_RECV;

	memcpy(attr, &full, RTE_MIN(attr_size, sizeof(full)));
	if (attr_size > sizeof(full))
		memset((uint8_t *)attr + sizeof(full), 0,
		       attr_size - sizeof(full));
	return 0;
}

/* verbs_context op behind verbs.h's inline ibv_query_port(). */
int
shim_query_port(struct ibv_context *ibctx, uint8_t port_num,
		struct ibv_port_attr *attr, size_t attr_len)
{
	struct ibv_port_attr full;

	if (port_num != SHIM_PORT) {
		errno = EINVAL;
		return EINVAL;
	}
	shim_port_attr(shim_ctx(ibctx), &full);
	memcpy(attr, &full, RTE_MIN(attr_len, sizeof(full)));
	if (attr_len > sizeof(full))
		memset((uint8_t *)attr + sizeof(full), 0,
		       attr_len - sizeof(full));
	return 0;
}

/*
 * The exported symbol, for programs built before the inline wrapper: the
 * old, shorter struct.
 */
SHIM_EXPORT int
ibv_query_port(struct ibv_context *ibctx, uint8_t port_num,
	       struct _compat_ibv_port_attr *attr)
{
	return shim_query_port(ibctx, port_num, (struct ibv_port_attr *)attr,
			       SHIM_COMPAT_PORT_ATTR_SZ);
}

/* An empty entry reads as the zero GID, as the kernel's sysfs shows it. */
SHIM_EXPORT int
ibv_query_gid(struct ibv_context *ibctx, uint8_t port_num, int index,
	      union ibv_gid *gid)
{
	struct shim_context *ctx = shim_ctx(ibctx);

	if (port_num != SHIM_PORT || index < 0 || index >= SHIM_GID_TBL_LEN) {
		errno = EINVAL;
		return -1;
	}
	memcpy(gid->raw, ctx->ctl->gid[index], sizeof(gid->raw));
	return 0;
}

static void
shim_gid_entry(const struct shim_context *ctx, uint32_t index,
	       struct ibv_gid_entry *e)
{
	memcpy(e->gid.raw, ctx->ctl->gid[index], sizeof(e->gid.raw));
	e->gid_index = index;
	e->port_num = SHIM_PORT;
	e->gid_type = IBV_GID_TYPE_ROCE_V2;
	e->ndev_ifindex = 0;		/* DPDK port: no kernel netdev */
}

SHIM_EXPORT int
_ibv_query_gid_ex(struct ibv_context *ibctx, uint32_t port_num,
		  uint32_t gid_index, struct ibv_gid_entry *entry,
		  uint32_t flags, size_t entry_size)
{
	struct shim_context *ctx = shim_ctx(ibctx);

	if (flags != 0 || entry_size < sizeof(*entry) ||
	    port_num != SHIM_PORT || gid_index >= (uint32_t)SHIM_GID_TBL_LEN)
		return EINVAL;
	if (shim_gid_empty(ctx->ctl->gid[gid_index]))
		return ENODATA;
	memset(entry, 0, entry_size);
	shim_gid_entry(ctx, gid_index, entry);
	return 0;
}

/* The entries in use, in index order; entry_size may exceed ours. */
SHIM_EXPORT ssize_t
_ibv_query_gid_table(struct ibv_context *ibctx, struct ibv_gid_entry *entries,
		     size_t max_entries, uint32_t flags, size_t entry_size)
{
	struct shim_context *ctx = shim_ctx(ibctx);
	size_t n = 0;

	if (flags != 0 || entry_size < sizeof(*entries))
		return -EINVAL;
	for (uint32_t i = 0; i < (uint32_t)SHIM_GID_TBL_LEN; i++) {
		struct ibv_gid_entry *e;

		if (shim_gid_empty(ctx->ctl->gid[i]))
			continue;
		if (n == max_entries)
			return -EINVAL;
		e = (struct ibv_gid_entry *)((uint8_t *)entries +
					     n * entry_size);
		memset(e, 0, entry_size);
		shim_gid_entry(ctx, i, e);
		n++;
	}
	return (ssize_t)n;
}

/* Provider ABI (driver.h): 1 is IBV_GID_TYPE_SYSFS_ROCE_V2. */
SHIM_EXPORT int
ibv_query_gid_type(struct ibv_context *ibctx, uint8_t port_num,
		   unsigned int index, int *type)
{
	RTE_SET_USED(ibctx);
	if (port_num != SHIM_PORT || index >= SHIM_GID_TBL_LEN) {
		errno = EINVAL;
		return -1;
	}
	*type = 1;
	return 0;
}

SHIM_EXPORT int
ibv_query_pkey(struct ibv_context *ibctx, uint8_t port_num, int index,
	       __be16 *pkey)
{
	RTE_SET_USED(ibctx);
	if (port_num != SHIM_PORT || index != 0) {
		errno = EINVAL;
		return -1;
	}
	*pkey = htobe16(SHIM_PKEY_DEFAULT);
	return 0;
}

SHIM_EXPORT int
ibv_get_pkey_index(struct ibv_context *ibctx, uint8_t port_num, __be16 pkey)
{
	RTE_SET_USED(ibctx);
	if (port_num != SHIM_PORT || pkey != htobe16(SHIM_PKEY_DEFAULT)) {
		errno = EINVAL;
		return -1;
	}
	return 0;
}
