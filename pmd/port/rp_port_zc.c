/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Zero copy on transmit (guides/architecture): frames whose payload is an
 * external buffer over the sender's registered memory, where it is safe,
 * and how they are made whole when the engine keeps them.
 */

#include <string.h>

#include <rte_dev.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include "rp_atomic.h"
#include "rp_port.h"
#include "rp_port_kind.h"

/*
 * Zero copy on transmit.  A frame may carry its payload as a segment over
 * the registered memory it lies in (rp_port_alloc_ext: an external
 * buffer), where the port's PMD takes chained mbufs and copies each frame
 * it accepts before rte_eth_tx_burst() returns: af_packet into its ring,
 * memif (not in its own zero-copy mode) into the shared region.  Then
 * nothing refers to that memory once the pass that built the frame is
 * over, which is when the program may take the memory back (a completion
 * it polls, a deregistration, which runs between passes).  A frame that
 * stays in the engine's hands longer (the port refused it, the pass
 * deferred it, a fault holds it, it loops back to ourselves) is made
 * whole first (rp_port_unshare).  Not for af_xdp (its PMD copies one
 * segment), ring (it hands the mbufs on) or NICs (they read later, by
 * IOVA).
 */
bool
rp_port_tx_zc(const struct rp_port *p, const struct rte_eth_dev_info *info)
{
	const struct rte_devargs *da;

	if (!p->cfg->tx_zero_copy ||
	    !(info->tx_offload_capa & RTE_ETH_TX_OFFLOAD_MULTI_SEGS))
		return false;
	if (rp_port_kind_of(info->driver_name) == RP_PORT_AF_PACKET)
		return true;
	if (info->driver_name == NULL ||
	    strcmp(info->driver_name, "net_memif") != 0)
		return false;
	da = rte_dev_devargs(info->device);
	return da == NULL || da->args == NULL ||
		strstr(da->args, "zero-copy=yes") == NULL;
}

/* The external buffer's release: the memory is the program's. */
static void
port_ext_free(void *addr, void *opaque)
{
	RTE_SET_USED(addr);
	RTE_SET_USED(opaque);
}

/*
 * An mbuf over len bytes at buf, for a port with tx_zc.  Its shared info
 * (the external buffer's reference count, 1: this mbuf only) lives in the
 * mbuf's own data room, which it does not use, so the release costs no
 * atomic.
 */
struct rte_mbuf *
rp_port_alloc_ext(struct rp_port_q *pq, const void *buf, uint32_t len)
{
	struct rte_mbuf *m = rp_port_mbuf(pq);
	struct rte_mbuf_ext_shared_info *sh;

	if (m == NULL)
		return NULL;
	sh = rte_pktmbuf_mtod(m, struct rte_mbuf_ext_shared_info *);
	sh->free_cb = port_ext_free;
	sh->fcb_opaque = NULL;
	rte_mbuf_ext_refcnt_set(sh, 1);
	rte_pktmbuf_attach_extbuf(m, (void *)(uintptr_t)buf, RTE_BAD_IOVA,
				  (uint16_t)len, sh);
	m->data_len = (uint16_t)len;
	m->pkt_len = len;
	pq->tx_ext = true;
	return m;
}

/*
 * A frame in pieces made whole (its first mbuf, from the port's pool, has
 * room for a frame of the MTU), so that it refers to no registered memory
 * any more; NULL if it could not be (freed, counted as dropped).
 */
struct rte_mbuf *
rp_port_unshare(struct rp_port_q *pq, struct rte_mbuf *m)
{
	if (likely(m->next == NULL))
		return m;
	if (rte_pktmbuf_linearize(m) != 0) {
		rte_pktmbuf_free(m);
		rp_stats_inc(pq->stats, RP_STAT_TX_DROP);
		return NULL;
	}
	rp_stats_inc(pq->stats, RP_STAT_TX_ZC_COPIED);
	return m;
}

/* The shard's frames stay past this pass: none may refer to memory. */
void
rp_port_hold(struct rp_port_q *pq)
{
	uint16_t n = 0;

	if (likely(!pq->tx_ext))
		return;
	for (uint16_t i = 0; i < pq->nr_tx; i++) {
		struct rte_mbuf *m = rp_port_unshare(pq, pq->tx[i]);

		if (m != NULL)
			pq->tx[n++] = m;
	}
	pq->nr_tx = n;
	pq->tx_ext = false;
}
