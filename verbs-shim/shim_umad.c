/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * librocepmd-umad.so: libibumad's CA discovery for rocepmd's devices, so
 * that `ibstat` (infiniband-diags) shows them under rocepmd-run.
 *
 * libibumad finds CAs in /sys/class/infiniband, where a rocepmd device
 * never is.  Preloaded by rocepmd-run next to the verbs shim, this library
 * answers the calls that describe CAs and ports from what the shim answers
 * a verbs program (ibv_get_device_list, ibv_query_device, ibv_query_port,
 * ibv_query_gid, ibv_query_pkey), with the values the kernel's sysfs
 * shows for rxe, from which libibumad would fill the same structures:
 *   node type 1 (CA), fw_ver as ibv_devinfo's, hw_ver "0", no CA type
 *   (rxe has no hca_type), node and system image GUIDs; per port: state,
 *   physical state, rate (Gb/s, truncated as sysfs' "2.5 Gb/sec" reads),
 *   LID, LMC and SM LID 0, the capability mask, the link-local GID's
 *   prefix and interface ID (the port GUID: the MAC's modified EUI-64,
 *   which is the node GUID, as rxe has it), the P_Keys, link layer
 *   "Ethernet".
 *
 * Interposed (libibumad.so.3's own symbol versions, libibumad.map), each
 * for a rocepmd device only, everything else passed to the real libibumad
 * (dlvsym RTLD_NEXT) unchanged:
 *   umad_get_cas_names, umad_get_ca_device_list, umad_free_ca_device_list
 *     rocepmd's devices first, then the kernel's;
 *   umad_get_ca, umad_release_ca, umad_get_port, umad_release_port,
 *   umad_get_ca_portguids
 *     a rocepmd device's, from the verbs queries above;
 *   umad_open_port, umad_get_issm_path
 *     -EOPNOTSUPP for a rocepmd device (libibumad's answer when the kernel
 *     has no MAD interface), said once on stderr: there is no
 *     /dev/infiniband/umadN, MADs to and from a rocepmd device are the
 *     engine's QP 1 (the RDMA CM), and no SMP has a meaning on Ethernet.
 *     A tool that sends MADs (smpquery, perfquery, ibping) fails there
 *     with its own message.
 * Every other function either takes a port descriptor, which only the
 * real umad_open_port returns, or names no device (umad_init,
 * umad_sort_ca_device_list, the MAD buffer and string helpers), so it is
 * left to the real library.  A NULL CA name (the default CA) is the
 * first rocepmd device with an active port, else the first rocepmd
 * device, when there is one.
 *
 * With no rocepmd device the library is transparent, except under
 * rocepmd-run (ROCEPMD_CONFIG or ROCEPMD_ATTACH set): there, no CA at all
 * is ENODEV from umad_get_ca_device_list, so `ibstat` says "can't list IB
 * device names" and fails rather than print nothing and exit 0.
 *
 * The structures are libibumad.so.3's ABI (rdma-core's umad.h, v44 as
 * today: UMAD_CA_NAME_LEN 20, UMAD_CA_MAX_PORTS 10), declared here so the
 * build needs no libibumad-dev.
 */

#include <dlfcn.h>
#include <endian.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#define UMAD_EXPORT	__attribute__((visibility("default")))

#define RP_UMAD_NAME_LEN	20	/* UMAD_CA_NAME_LEN */
#define RP_UMAD_MAX_PORTS	10	/* UMAD_CA_MAX_PORTS */
#define RP_UMAD_MAX_DEVS	32	/* UMAD_MAX_DEVICES */
#define RP_UMAD_VER		"IBUMAD_1.0"
#define RP_UMAD_VER_LIST	"IBUMAD_1.1"

/* umad_port_t */
struct rp_umad_port {
	char ca_name[RP_UMAD_NAME_LEN];
	int portnum;
	unsigned int base_lid;
	unsigned int lmc;
	unsigned int sm_lid;
	unsigned int sm_sl;
	unsigned int state;
	unsigned int phys_state;
	unsigned int rate;
	__be32 capmask;
	__be64 gid_prefix;
	__be64 port_guid;
	unsigned int pkeys_size;
	uint16_t *pkeys;
	char link_layer[RP_UMAD_NAME_LEN];
};

/* umad_ca_t */
struct rp_umad_ca {
	char ca_name[RP_UMAD_NAME_LEN];
	unsigned int node_type;
	int numports;
	char fw_ver[20];
	char ca_type[40];
	char hw_ver[20];
	__be64 node_guid;
	__be64 system_guid;
	struct rp_umad_port *ports[RP_UMAD_MAX_PORTS];
};

/* struct umad_device_node: one allocation, the name after the node, as
 * libibumad allocates it. */
struct rp_umad_node {
	struct rp_umad_node *next;
	const char *ca_name;
};

/* Everything exported is declared here, under libibumad's names. */
UMAD_EXPORT int umad_get_cas_names(char cas[][RP_UMAD_NAME_LEN], int max);
UMAD_EXPORT int umad_get_ca_portguids(const char *ca_name, __be64 *portguids,
				      int max);
UMAD_EXPORT int umad_get_ca(const char *ca_name, struct rp_umad_ca *ca);
UMAD_EXPORT int umad_release_ca(struct rp_umad_ca *ca);
UMAD_EXPORT int umad_get_port(const char *ca_name, int portnum,
			      struct rp_umad_port *port);
UMAD_EXPORT int umad_release_port(struct rp_umad_port *port);
UMAD_EXPORT int umad_open_port(const char *ca_name, int portnum);
UMAD_EXPORT int umad_get_issm_path(const char *ca_name, int portnum,
				   char path[], int max);
UMAD_EXPORT struct rp_umad_node *umad_get_ca_device_list(void);
UMAD_EXPORT void umad_free_ca_device_list(struct rp_umad_node *head);

/* ------------------------------------------------------------ the real */

/* The real libibumad's function, or NULL when it is not loaded. */
static void *
rp_umad_real(const char *name, const char *version)
{
	return dlvsym(RTLD_NEXT, name, version);
}

#define RP_UMAD_REAL(fn, ver) \
	((__typeof__(&fn))rp_umad_real(#fn, ver))

/* The kernel's CAs, as the real umad_get_ca_device_list() lists them. */
static struct rp_umad_node *
rp_umad_kernel_list(int *err)
{
	struct rp_umad_node *(*real)(void) =
		RP_UMAD_REAL(umad_get_ca_device_list, RP_UMAD_VER_LIST);
	struct rp_umad_node *l;

	*err = 0;
	if (real == NULL)
		return NULL;
	errno = 0;
	l = real();
	if (l == NULL)
		*err = errno;
	return l;
}

static void
rp_umad_kernel_free(struct rp_umad_node *l)
{
	void (*real)(struct rp_umad_node *) =
		RP_UMAD_REAL(umad_free_ca_device_list, RP_UMAD_VER_LIST);

	if (real != NULL && l != NULL)
		real(l);
}

/* ------------------------------------------------------ rocepmd devices */

/* rocepmd's devices, as the shim lists them. */
struct rp_umad_devs {
	struct ibv_device **all;	/* for ibv_free_device_list() */
	struct ibv_device *dev[RP_UMAD_MAX_DEVS];
	int n;
};

/*
 * The shim's devices, less any the kernel has (a device under
 * /sys/class/infiniband is libibumad's to describe, should the real
 * libibverbs be the one answering).  -errno when the shim cannot list
 * (-EBUSY: another process owns a port).
 */
static int
rp_umad_devs_get(struct rp_umad_devs *d)
{
	int n, i;

	d->n = 0;
	d->all = ibv_get_device_list(&n);
	if (d->all == NULL)
		return errno != 0 ? -errno : -ENODEV;
	for (i = 0; i < n && d->n < RP_UMAD_MAX_DEVS; i++)
		if (access(d->all[i]->ibdev_path, F_OK) != 0 &&
		    strlen(ibv_get_device_name(d->all[i])) < RP_UMAD_NAME_LEN)
			d->dev[d->n++] = d->all[i];
	return 0;
}

static void
rp_umad_devs_put(struct rp_umad_devs *d)
{
	if (d->all != NULL)
		ibv_free_device_list(d->all);
	d->all = NULL;
	d->n = 0;
}

/* The rocepmd device called name, or NULL. */
static struct ibv_device *
rp_umad_devs_find(const struct rp_umad_devs *d, const char *name)
{
	int i;

	for (i = 0; name != NULL && i < d->n; i++)
		if (strcmp(ibv_get_device_name(d->dev[i]), name) == 0)
			return d->dev[i];
	return NULL;
}

/* Whether name is a rocepmd device. */
static bool
rp_umad_is_ours(const char *name)
{
	struct rp_umad_devs d;
	bool found;

	if (name == NULL || rp_umad_devs_get(&d) != 0)
		return false;
	found = rp_umad_devs_find(&d, name) != NULL;
	rp_umad_devs_put(&d);
	return found;
}

/*
 * The rocepmd device for ca_name into name (RP_UMAD_NAME_LEN): ca_name
 * itself if it is one; for NULL, the first with an active port, else the
 * first.  False when it is not rocepmd's (or there is none for NULL).
 */
static bool
rp_umad_resolve(const char *ca_name, char *name)
{
	struct rp_umad_devs d;
	int i, pick = -1;

	if (ca_name != NULL) {
		if (!rp_umad_is_ours(ca_name))
			return false;
		snprintf(name, RP_UMAD_NAME_LEN, "%s", ca_name);
		return true;
	}
	if (rp_umad_devs_get(&d) != 0)
		return false;
	for (i = 0; i < d.n && pick < 0; i++) {
		struct ibv_context *ctx = ibv_open_device(d.dev[i]);
		struct ibv_port_attr pa;

		if (ctx == NULL)
			continue;
		if (ibv_query_port(ctx, 1, &pa) == 0 &&
		    pa.state == IBV_PORT_ACTIVE)
			pick = i;
		ibv_close_device(ctx);
	}
	if (pick < 0 && d.n > 0)
		pick = 0;
	if (pick >= 0)
		snprintf(name, RP_UMAD_NAME_LEN, "%s",
			 ibv_get_device_name(d.dev[pick]));
	rp_umad_devs_put(&d);
	return pick >= 0;
}

/* Gb/s of an IB width and speed, as the kernel's sysfs "rate" reads with
 * strtoul (2.5 Gb/s is 2, as libibumad reads it and ibstat prints it). */
static unsigned int
rp_umad_rate(uint8_t width, uint8_t speed)
{
	/* ibv_port_attr's codes: width 1X, 4X, 8X, 12X, 2X; speed SDR, DDR,
	 * QDR, FDR10, FDR, EDR, HDR, NDR (Gb/s x 10 per lane). */
	static const struct {
		uint8_t code;
		unsigned int val;
	} lanes[] = {
		{ 1, 1 }, { 2, 4 }, { 4, 8 }, { 8, 12 }, { 16, 2 },
	}, tenths[] = {
		{ 1, 25 }, { 2, 50 }, { 4, 100 }, { 8, 100 }, { 16, 140 },
		{ 32, 250 }, { 64, 500 }, { 128, 1000 },
	};
	unsigned int l = 1, t = 25, i;

	for (i = 0; i < sizeof(lanes) / sizeof(lanes[0]); i++)
		if (lanes[i].code == width)
			l = lanes[i].val;
	for (i = 0; i < sizeof(tenths) / sizeof(tenths[0]); i++)
		if (tenths[i].code == speed)
			t = tenths[i].val;
	return l * t / 10;
}

/*
 * The port GUID and GID prefix: those of the link-local GID (fe80::/64),
 * sysfs' gids/0 on rxe; else fe80:: and the node GUID.
 */
static void
rp_umad_port_gid(struct ibv_context *ctx, int portnum, int tbl_len,
		 __be64 node_guid, struct rp_umad_port *p)
{
	union ibv_gid gid;
	int i;

	p->gid_prefix = htobe64(0xfe80000000000000ULL);
	p->port_guid = node_guid;
	for (i = 0; i < tbl_len; i++) {
		if (ibv_query_gid(ctx, (uint8_t)portnum, i, &gid) != 0)
			break;
		if (gid.raw[0] == 0xfe && (gid.raw[1] & 0xc0) == 0x80) {
			p->gid_prefix = gid.global.subnet_prefix;
			p->port_guid = gid.global.interface_id;
			return;
		}
	}
}

static int
rp_umad_fill_port(struct ibv_context *ctx, const char *name, int portnum,
		  __be64 node_guid, struct rp_umad_port *p)
{
	struct ibv_port_attr pa;
	__be16 pkey;
	int i;

	memset(p, 0, sizeof(*p));
	if (ibv_query_port(ctx, (uint8_t)portnum, &pa) != 0)
		return -EIO;
	snprintf(p->ca_name, sizeof(p->ca_name), "%s", name);
	p->portnum = portnum;
	p->base_lid = pa.lid;
	p->lmc = pa.lmc;
	p->sm_lid = pa.sm_lid;
	p->sm_sl = pa.sm_sl;
	p->state = pa.state;
	p->phys_state = pa.phys_state;
	p->rate = rp_umad_rate(pa.active_width, pa.active_speed);
	p->capmask = htobe32(pa.port_cap_flags);
	snprintf(p->link_layer, sizeof(p->link_layer), "%s",
		 pa.link_layer == IBV_LINK_LAYER_ETHERNET ? "Ethernet" :
		 "InfiniBand");
	rp_umad_port_gid(ctx, portnum, pa.gid_tbl_len, node_guid, p);
	if (pa.pkey_tbl_len > 0) {
		p->pkeys = calloc(pa.pkey_tbl_len, sizeof(p->pkeys[0]));
		if (p->pkeys == NULL)
			return -ENOMEM;
		for (i = 0; i < (int)pa.pkey_tbl_len; i++) {
			if (ibv_query_pkey(ctx, (uint8_t)portnum, i, &pkey) != 0)
				break;
			p->pkeys[i] = be16toh(pkey);
		}
		p->pkeys_size = (unsigned int)i;
	}
	return 0;
}

static void
rp_umad_free_ports(struct rp_umad_ca *ca)
{
	int i;

	for (i = 0; i < RP_UMAD_MAX_PORTS; i++) {
		if (ca->ports[i] == NULL)
			continue;
		free(ca->ports[i]->pkeys);
		free(ca->ports[i]);
		ca->ports[i] = NULL;
	}
}

/* Open the rocepmd device name. */
static struct ibv_context *
rp_umad_open(const char *name)
{
	struct ibv_context *ctx = NULL;
	struct ibv_device *dev;
	struct rp_umad_devs d;

	if (rp_umad_devs_get(&d) != 0)
		return NULL;
	dev = rp_umad_devs_find(&d, name);
	if (dev != NULL)
		ctx = ibv_open_device(dev);
	rp_umad_devs_put(&d);
	return ctx;
}

/* The CA (and its ports) of the rocepmd device name. */
static int
rp_umad_fill_ca(const char *name, struct rp_umad_ca *ca)
{
	struct ibv_device_attr da;
	struct ibv_context *ctx;
	int i, ret = 0;

	ctx = rp_umad_open(name);
	if (ctx == NULL)
		return -ENODEV;
	memset(ca, 0, sizeof(*ca));
	if (ibv_query_device(ctx, &da) != 0) {
		ret = -EIO;
		goto out;
	}
	snprintf(ca->ca_name, sizeof(ca->ca_name), "%s", name);
	ca->node_type = ctx->device->node_type == IBV_NODE_UNKNOWN ? 0 :
			(unsigned int)ctx->device->node_type;
	/* truncated to libibumad's 20 bytes, as it reads sysfs' fw_ver */
	snprintf(ca->fw_ver, sizeof(ca->fw_ver), "%.*s",
		 (int)sizeof(ca->fw_ver) - 1, da.fw_ver);
	snprintf(ca->hw_ver, sizeof(ca->hw_ver), "%x", da.hw_ver);
	ca->node_guid = da.node_guid;
	ca->system_guid = da.sys_image_guid;
	/* A CA has ports 1..N; port 0 is a switch's. */
	for (i = 1; i <= da.phys_port_cnt && i < RP_UMAD_MAX_PORTS; i++) {
		ca->ports[i] = calloc(1, sizeof(*ca->ports[i]));
		if (ca->ports[i] == NULL) {
			ret = -ENOMEM;
			break;
		}
		ret = rp_umad_fill_port(ctx, name, i, da.node_guid,
					ca->ports[i]);
		if (ret != 0)
			break;
		ca->numports = i;
	}
	if (ret != 0)
		rp_umad_free_ports(ca);
out:
	ibv_close_device(ctx);
	return ret;
}

/* Whether a program runs under rocepmd-run. */
static bool
rp_umad_under_run(void)
{
	const char *c = getenv("ROCEPMD_CONFIG");
	const char *a = getenv("ROCEPMD_ATTACH");

	return (c != NULL && c[0] != '\0') || (a != NULL && a[0] != '\0');
}

static struct rp_umad_node *
rp_umad_node_new(const char *name)
{
	size_t len = strlen(name) + 1;
	struct rp_umad_node *node = calloc(1, sizeof(*node) + len);

	if (node != NULL) {
		memcpy(node + 1, name, len);
		node->ca_name = (const char *)(node + 1);
	}
	return node;
}

/* ------------------------------------------------------------- exported */

UMAD_EXPORT struct rp_umad_node *
umad_get_ca_device_list(void)
{
	struct rp_umad_node *head = NULL, **tail = &head, *kl, *k;
	struct rp_umad_devs d;
	int i, ret, kerr, err = 0;

	ret = rp_umad_devs_get(&d);
	/* Another process owns a port: an error, not an empty list. */
	if (ret == -EBUSY) {
		errno = EBUSY;
		return NULL;
	}
	kl = rp_umad_kernel_list(&kerr);
	for (i = 0; i < d.n && err == 0; i++) {
		*tail = rp_umad_node_new(ibv_get_device_name(d.dev[i]));
		if (*tail == NULL)
			err = ENOMEM;
		else
			tail = &(*tail)->next;
	}
	for (k = kl; k != NULL && err == 0; k = k->next) {
		*tail = rp_umad_node_new(k->ca_name);
		if (*tail == NULL)
			err = ENOMEM;
		else
			tail = &(*tail)->next;
	}
	rp_umad_devs_put(&d);
	rp_umad_kernel_free(kl);
	if (err == 0 && head == NULL)
		err = kerr != 0 ? kerr : rp_umad_under_run() ? ENODEV : 0;
	if (err != 0) {
		umad_free_ca_device_list(head);
		head = NULL;
	}
	errno = err;
	return head;
}

UMAD_EXPORT void
umad_free_ca_device_list(struct rp_umad_node *head)
{
	struct rp_umad_node *next;

	for (; head != NULL; head = next) {
		next = head->next;
		free(head);
	}
}

UMAD_EXPORT int
umad_get_cas_names(char cas[][RP_UMAD_NAME_LEN], int max)
{
	int (*real)(char cas[][RP_UMAD_NAME_LEN], int) =
		RP_UMAD_REAL(umad_get_cas_names, RP_UMAD_VER);
	struct rp_umad_node *kl, *k;
	struct rp_umad_devs d;
	int i, j = 0, kerr;

	/* No rocepmd device: the real answer, whatever it is. */
	if (rp_umad_devs_get(&d) != 0 || d.n == 0) {
		rp_umad_devs_put(&d);
		return real != NULL ? real(cas, max) : 0;
	}
	for (i = 0; i < d.n && j < max; i++)
		snprintf(cas[j++], RP_UMAD_NAME_LEN, "%s",
			 ibv_get_device_name(d.dev[i]));
	rp_umad_devs_put(&d);
	kl = rp_umad_kernel_list(&kerr);
	for (k = kl; k != NULL && j < max; k = k->next)
		if (strlen(k->ca_name) < RP_UMAD_NAME_LEN)
			snprintf(cas[j++], RP_UMAD_NAME_LEN, "%s", k->ca_name);
	rp_umad_kernel_free(kl);
	return j;
}

UMAD_EXPORT int
umad_get_ca(const char *ca_name, struct rp_umad_ca *ca)
{
	int (*real)(const char *, struct rp_umad_ca *) =
		RP_UMAD_REAL(umad_get_ca, RP_UMAD_VER);
	char name[RP_UMAD_NAME_LEN];

	if (ca == NULL)
		return -EINVAL;
	if (rp_umad_resolve(ca_name, name))
		return rp_umad_fill_ca(name, ca);
	return real != NULL ? real(ca_name, ca) : -ENODEV;
}

UMAD_EXPORT int
umad_release_ca(struct rp_umad_ca *ca)
{
	int (*real)(struct rp_umad_ca *) =
		RP_UMAD_REAL(umad_release_ca, RP_UMAD_VER);

	if (ca == NULL)
		return -ENODEV;
	/* Ours by its ports: the real library's are never this library's
	 * device names, and a rocepmd device's are never the kernel's. */
	if (rp_umad_is_ours(ca->ca_name)) {
		rp_umad_free_ports(ca);
		return 0;
	}
	return real != NULL ? real(ca) : -ENODEV;
}

UMAD_EXPORT int
umad_get_port(const char *ca_name, int portnum, struct rp_umad_port *port)
{
	int (*real)(const char *, int, struct rp_umad_port *) =
		RP_UMAD_REAL(umad_get_port, RP_UMAD_VER);
	char name[RP_UMAD_NAME_LEN];
	struct ibv_device_attr da;
	struct ibv_context *ctx;
	int ret;

	if (port == NULL)
		return -EINVAL;
	if (!rp_umad_resolve(ca_name, name))
		return real != NULL ? real(ca_name, portnum, port) : -ENODEV;
	ctx = rp_umad_open(name);
	if (ctx == NULL)
		return -ENODEV;
	ret = ibv_query_device(ctx, &da) != 0 ? -EIO : 0;
	/* 0: the best port; a rocepmd device has one */
	if (ret == 0 && portnum == 0)
		portnum = 1;
	if (ret == 0 && (portnum < 1 || portnum > da.phys_port_cnt))
		ret = -ENODEV;
	if (ret == 0) {
		ret = rp_umad_fill_port(ctx, name, portnum, da.node_guid,
					port);
		if (ret != 0) {
			free(port->pkeys);
			port->pkeys = NULL;
		}
	}
	ibv_close_device(ctx);
	return ret;
}

UMAD_EXPORT int
umad_release_port(struct rp_umad_port *port)
{
	int (*real)(struct rp_umad_port *) =
		RP_UMAD_REAL(umad_release_port, RP_UMAD_VER);

	if (port == NULL)
		return -ENODEV;
	if (rp_umad_is_ours(port->ca_name)) {
		free(port->pkeys);
		port->pkeys = NULL;
		port->pkeys_size = 0;
		return 0;
	}
	return real != NULL ? real(port) : -ENODEV;
}

UMAD_EXPORT int
umad_get_ca_portguids(const char *ca_name, __be64 *portguids, int max)
{
	int (*real)(const char *, __be64 *, int) =
		RP_UMAD_REAL(umad_get_ca_portguids, RP_UMAD_VER);
	char name[RP_UMAD_NAME_LEN];
	struct rp_umad_ca ca;
	int i, ret;

	if (!rp_umad_resolve(ca_name, name))
		return real != NULL ? real(ca_name, portguids, max) : -ENODEV;
	ret = rp_umad_fill_ca(name, &ca);
	if (ret != 0)
		return ret;
	/* As libibumad: ports 0..N, 0 for a port that does not exist. */
	if (portguids == NULL)
		ret = 0;
	else if (ca.numports + 1 > max)
		ret = -ENOMEM;
	else
		for (i = 0, ret = ca.numports + 1; i < ret; i++)
			portguids[i] = ca.ports[i] != NULL ?
				       ca.ports[i]->port_guid : 0;
	rp_umad_free_ports(&ca);
	return ret;
}

/* No MAD interface: once per process, say why on stderr. */
static int
rp_umad_no_mad(const char *fn, const char *name)
{
	static bool said;

	if (!said) {
		said = true;
		fprintf(stderr, "ibwarn: [%d] %s: %s is a rocepmd device: no "
			"MAD interface (umad); for its state run "
			"`rocepmd-status link -d`\n", (int)getpid(), fn, name);
	}
	return -EOPNOTSUPP;
}

UMAD_EXPORT int
umad_open_port(const char *ca_name, int portnum)
{
	int (*real)(const char *, int) =
		RP_UMAD_REAL(umad_open_port, RP_UMAD_VER);
	char name[RP_UMAD_NAME_LEN];

	if (rp_umad_resolve(ca_name, name))
		return rp_umad_no_mad(__func__, name);
	return real != NULL ? real(ca_name, portnum) : -ENODEV;
}

UMAD_EXPORT int
umad_get_issm_path(const char *ca_name, int portnum, char path[], int max)
{
	int (*real)(const char *, int, char[], int) =
		RP_UMAD_REAL(umad_get_issm_path, RP_UMAD_VER);
	char name[RP_UMAD_NAME_LEN];

	if (rp_umad_resolve(ca_name, name))
		return rp_umad_no_mad(__func__, name);
	return real != NULL ? real(ca_name, portnum, path, max) : -ENODEV;
}
