/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Address handles and address vectors.
 *
 * On RoCE every packet carries a GRH (the IP header): an address vector
 * without one cannot be sent, and is refused with EINVAL as the kernel
 * refuses it for rxe and mlx5.  That is why ibv_rc_pingpong and
 * ibv_ud_pingpong need a GID index (-g 0).  The destination MAC is the
 * engine's business (it resolves the peer with ARP).
 */

#include <endian.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/ip.h>
#include <stdlib.h>
#include <string.h>

#include "shim.h"

/*
 * Convert and check an address vector.
 * @return 0, or -EINVAL for an AV this device cannot use
 */
int
shim_av_from_ah_attr(struct rp_av *av, const struct ibv_ah_attr *ah)
{
	if (!ah->is_global) {
		SHIM_LOG(WARNING, "address without GRH: RoCE needs one (give a GID index, e.g. ibv_rc_pingpong -g 0)");
		return -EINVAL;
	}
	if (ah->grh.sgid_index >= SHIM_GID_TBL_LEN ||
	    (ah->port_num != 0 && ah->port_num != SHIM_PORT))
		return -EINVAL;

	memset(av, 0, sizeof(*av));
	memcpy(av->dgid, ah->grh.dgid.raw, sizeof(av->dgid));
	av->flow_label = ah->grh.flow_label;
	av->sgid_index = ah->grh.sgid_index;
	av->hop_limit = ah->grh.hop_limit;
	av->traffic_class = ah->grh.traffic_class;
	av->sl = ah->sl;
	av->is_global = 1;
	av->port_num = SHIM_PORT;
	return 0;
}

void
shim_av_to_ah_attr(struct ibv_ah_attr *ah, const struct rp_av *av)
{
	memset(ah, 0, sizeof(*ah));
	memcpy(ah->grh.dgid.raw, av->dgid, sizeof(ah->grh.dgid.raw));
	ah->grh.flow_label = av->flow_label;
	ah->grh.sgid_index = av->sgid_index;
	ah->grh.hop_limit = av->hop_limit;
	ah->grh.traffic_class = av->traffic_class;
	ah->sl = av->sl;
	ah->is_global = av->is_global;
	ah->port_num = av->port_num;
}

SHIM_EXPORT struct ibv_ah *
ibv_create_ah(struct ibv_pd *ibpd, struct ibv_ah_attr *attr)
{
	struct rp_ctrl_slot s = { .op = RP_CTRL_AH_CREATE };
	struct shim_ah *ah;
	int ret;

	ret = shim_av_from_ah_attr(&s.u.ah.av, attr);
	if (ret < 0) {
		errno = -ret;
		return NULL;
	}
	ah = calloc(1, sizeof(*ah));
	if (ah == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	s.u.ah.pdn = shim_pd(ibpd)->pdn;
	ret = shim_ctrl(shim_ctx(ibpd->context), &s);
	if (ret < 0) {
		free(ah);
		errno = -ret;
		return NULL;
	}
	ah->ahn = s.u.ah.ahn;
	ah->ibv.context = ibpd->context;
	ah->ibv.pd = ibpd;
	ah->ibv.handle = ah->ahn;
	return &ah->ibv;
}

SHIM_EXPORT int
ibv_destroy_ah(struct ibv_ah *ibah)
{
	struct shim_ah *ah = shim_ah(ibah);
	struct rp_ctrl_slot s = { .op = RP_CTRL_AH_DESTROY };
	int ret;

	s.u.ah.pdn = shim_pd(ibah->pd)->pdn;
	s.u.ah.ahn = ah->ahn;
	ret = shim_ctrl(shim_ctx(ibah->context), &s);
	if (ret < 0)
		return -ret;
	free(ah);
	return 0;
}

/* ------------------------------------------------- addresses from a GRH */

static uint16_t
shim_ip4_csum(const void *hdr)
{
	const uint8_t *p = hdr;
	uint32_t sum = 0;
	unsigned int i;

	for (i = 0; i < 20; i += 2)
		sum += (uint32_t)(p[i] << 8 | p[i + 1]);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

/*
 * Which header the 40 bytes before a UD payload hold: a GRH (RoCEv1) or
 * an IPv6 header (6), or 20 zero bytes and an IPv4 header (4).
 * @return 4 or 6, or -1 with errno set
 */
static int
shim_grh_version(const struct ibv_grh *grh)
{
	const struct iphdr *ip4 = (const struct iphdr *)((const uint8_t *)grh + 20);
	struct iphdr check;

	if (((be32toh(grh->version_tclass_flow) >> 28) & 0xf) != 6) {
		if (ip4->version == 4)
			return 4;
		errno = EPROTONOSUPPORT;
		return -1;
	}
	if (ip4->ihl != 5)
		return 6;
	/* Both could parse: believe IPv4 if its checksum holds. */
	memcpy(&check, ip4, sizeof(check));
	check.check = 0;
	return shim_ip4_csum(&check) == be16toh(ip4->check) ? 4 : 6;
}

/* The index of a local RoCEv2 GID, or -1 with errno set. */
static int
shim_gid_index(struct ibv_context *ibctx, uint8_t port_num,
	       const union ibv_gid *gid)
{
	union ibv_gid sgid;
	int i;

	for (i = 0; i < SHIM_GID_TBL_LEN; i++) {
		if (ibv_query_gid(ibctx, port_num, i, &sgid) != 0)
			return -1;
		if (memcmp(&sgid, gid, sizeof(sgid)) == 0)
			return i;
	}
	errno = ENOENT;
	return -1;
}

static void
shim_ip4_to_gid(uint32_t addr_be, union ibv_gid *gid)
{
	memset(gid, 0, sizeof(*gid));
	gid->raw[10] = 0xff;
	gid->raw[11] = 0xff;
	memcpy(&gid->raw[12], &addr_be, 4);
}

SHIM_EXPORT int
ibv_init_ah_from_wc(struct ibv_context *ibctx, uint8_t port_num,
		    struct ibv_wc *wc, struct ibv_grh *grh,
		    struct ibv_ah_attr *ah_attr)
{
	union ibv_gid local;
	int version;
	int idx;

	memset(ah_attr, 0, sizeof(*ah_attr));
	ah_attr->grh.flow_label = be32toh(grh->version_tclass_flow) & 0xfffff;
	ah_attr->dlid = wc->slid;
	ah_attr->sl = wc->sl;
	ah_attr->src_path_bits = wc->dlid_path_bits;
	ah_attr->port_num = port_num;
	if (!(wc->wc_flags & IBV_WC_GRH))
		return 0;

	ah_attr->is_global = 1;
	version = shim_grh_version(grh);
	if (version == 4) {
		const struct iphdr *ip4 = (const struct iphdr *)
			((const uint8_t *)grh + 20);

		if (IN_MULTICAST(be32toh(ip4->daddr))) {
			errno = EINVAL;
			return -1;
		}
		shim_ip4_to_gid(ip4->daddr, &local);
		idx = shim_gid_index(ibctx, port_num, &local);
		if (idx < 0)
			return -1;
		shim_ip4_to_gid(ip4->saddr, &ah_attr->grh.dgid);
		ah_attr->grh.sgid_index = (uint8_t)idx;
		ah_attr->grh.hop_limit = ip4->ttl;
		ah_attr->grh.traffic_class = ip4->tos;
		return 0;
	}
	if (version == 6) {
		if (grh->dgid.raw[0] == 0xff) {
			errno = EINVAL;
			return -1;
		}
		if (grh->next_hdr != IPPROTO_UDP) {
			/* RoCEv1 (next header 0x1b): no such GID here. */
			errno = EPROTONOSUPPORT;
			return -1;
		}
		idx = shim_gid_index(ibctx, port_num, &grh->dgid);
		if (idx < 0)
			return -1;
		ah_attr->grh.dgid = grh->sgid;
		ah_attr->grh.sgid_index = (uint8_t)idx;
		ah_attr->grh.hop_limit = grh->hop_limit;
		ah_attr->grh.traffic_class =
			(be32toh(grh->version_tclass_flow) >> 20) & 0xff;
		return 0;
	}
	return -1;
}

SHIM_EXPORT struct ibv_ah *
ibv_create_ah_from_wc(struct ibv_pd *pd, struct ibv_wc *wc,
		      struct ibv_grh *grh, uint8_t port_num)
{
	struct ibv_ah_attr attr;

	if (ibv_init_ah_from_wc(pd->context, port_num, wc, grh, &attr) != 0)
		return NULL;
	return ibv_create_ah(pd, &attr);
}
