/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The mbuf pools of ports: the engine's own (rp_port.c) and, through
 * rp_port_pool(), a program's that drives a port before the engine
 * (rocepmd-testpmd's raw mode).  On af_xdp a pool is the PMD's umem.
 */

#include <errno.h>

#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_mbuf_pool_ops.h>
#include <rte_mempool.h>

#include "rp_port.h"

#define RP_MBUF_CACHE	256u

/*
 * For af_xdp (`packed`) the objects lie back to back: the PMD registers
 * the pool's memory as its umem and takes the umem's size as objects x
 * object size, but a pool that wants IOVA-contiguous objects keeps each
 * off page boundaries, and on 4 KiB pages (no huge pages: rocepmd-run's
 * default) an object of 2.6 KiB then takes a page of its own.  A third of
 * the mbufs lay beyond the umem, and every frame sent from one was an
 * invalid descriptor the kernel dropped without a word (XDP_STATISTICS
 * tx_invalid_descs).
 */
struct rte_mempool *
rp_port_pool_create(const char *name, uint32_t nb, uint16_t room, int socket,
		    bool packed)
{
	struct rte_pktmbuf_pool_private priv = {
		.mbuf_data_room_size = room,
		.mbuf_priv_size = 0,
	};
	struct rte_mempool *mp;
	int ret;

	if (!packed)
		return rte_pktmbuf_pool_create(name, nb, RP_MBUF_CACHE,
					       0, room, socket);
	mp = rte_mempool_create_empty(name, nb,
				      sizeof(struct rte_mbuf) + room,
				      RP_MBUF_CACHE, sizeof(priv), socket,
				      RTE_MEMPOOL_F_NO_IOVA_CONTIG);
	if (mp == NULL)
		return NULL;
	ret = rte_mempool_set_ops_byname(mp, rte_mbuf_best_mempool_ops(),
					 NULL);
	if (ret == 0) {
		rte_pktmbuf_pool_init(mp, &priv);
		ret = rte_mempool_populate_default(mp);
	}
	if (ret < 0) {
		rte_mempool_free(mp);
		rte_errno = -ret;
		return NULL;
	}
	rte_mempool_obj_iter(mp, rte_pktmbuf_init, NULL);
	return mp;
}

struct rte_mempool *
rp_port_pool(const char *name, uint16_t port_id, uint32_t nb,
	     uint32_t frame_max)
{
	struct rte_eth_dev_info info;
	bool umem;

	if (rte_eth_dev_info_get(port_id, &info) != 0) {
		rte_errno = ENODEV;
		return NULL;
	}
	umem = rp_port_kind_umem(rp_port_kind_of(info.driver_name));
	/* An umem chunk holds 2 KiB at least (the kernel refuses less). */
	if (umem)
		frame_max = RTE_MAX(frame_max, 2048u) + RP_XDP_PACKET_HEADROOM;
	if (RTE_PKTMBUF_HEADROOM + frame_max > UINT16_MAX) {
		rte_errno = EINVAL;
		return NULL;
	}
	return rp_port_pool_create(name, nb,
				   (uint16_t)(RTE_PKTMBUF_HEADROOM + frame_max),
				   rte_eth_dev_socket_id(port_id), umem);
}
