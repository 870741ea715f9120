/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Several lcores for one device (guides/architecture): each lcore runs a
 * shard of the device, with its own port queue pair and the QPs placed on
 * it, so that the hot path still has one writer per object and no lock.
 *
 *  - Placement (transport/rp_place.c): which shard steps a QP.
 *  - Frames: a shard reads its queues, and hands a frame for another
 *    shard's QP to that shard through its handoff ring (the peer picks the
 *    queue: a NIC's RSS hashes its UDP source port, a veth delivers on the
 *    queue the peer's kernel sent from).  ARP and neighbour discovery
 *    reach every shard, each keeping its own neighbour cache; shard 0
 *    alone answers.
 *  - Control: requests, and shard 0's periodic link and address work, run
 *    while the other shards wait at the start of their pass
 *    (rp_shard_pause()), so that they may touch any shard's objects.
 */

#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_pause.h>
#include <rte_ring.h>

#include "rp_atomic.h"
#include "rp_log.h"
#include "rp_engine.h"

#define RP_HANDOFF_RING	1024u

RTE_DEFINE_PER_LCORE(struct rp_shard *, rp_cur_shard) RP_TLS_IE;

int
rp_shard_init(struct rp_dev *dev)
{
	const struct rp_port_cfg *pc = &dev->cfg;
	char name[RTE_RING_NAMESIZE];

	dev->nr_shards = RTE_MAX(pc->nr_lcores, 1u);
	for (uint32_t i = 0; i < dev->nr_shards; i++) {
		struct rp_shard *sh = &dev->sh[i];

		sh->dev = dev;
		sh->idx = i;
		sh->lcore = pc->nr_lcores != 0 ? pc->lcores[i] : pc->lcore;
		sh->wake_fd = -1;
		rp_port_add_queue(&dev->port, &sh->pq, sh->lcore, sh->stats);
		rp_net_add_queue(&dev->net, &sh->nq, &sh->pq);
		/* Shard 0 takes the doorbells of QPs no other shard owns. */
		if (i == 0)
			memset(sh->bell_own, 0xff, sizeof(sh->bell_own));
		if (dev->nr_shards == 1)
			continue;
		snprintf(name, sizeof(name), "rp_hand_%u_%u", dev->id, i);
		sh->handoff = rte_ring_lookup(name);
		if (sh->handoff == NULL)
			sh->handoff = rte_ring_create(name, RP_HANDOFF_RING,
						      SOCKET_ID_ANY,
						      RING_F_SC_DEQ);
		if (sh->handoff == NULL)
			return -ENOMEM;
	}
	return 0;
}

void
rp_shard_fini(struct rp_dev *dev)
{
	struct rte_mbuf *m;

	for (uint32_t i = 0; i < RP_MAX_SHARDS; i++) {
		struct rp_shard *sh = &dev->sh[i];

		if (sh->handoff == NULL)
			continue;
		while (rte_ring_sc_dequeue(sh->handoff, (void **)&m) == 0)
			rte_pktmbuf_free(m);
		rte_ring_free(sh->handoff);
		sh->handoff = NULL;
	}
}

/* ---- control stops the other shards */

/*
 * A shard's pass starts here: if shard 0 asks it to wait, it says so and
 * waits.  Acquire of the resume pairs with shard 0's release, so the pass
 * sees everything control wrote.
 */
void
rp_shard_wait(struct rp_shard *sh)
{
	uint32_t seq = rp_load_acquire(&sh->pause_seq);

	if (likely((seq & 1) == 0))
		return;
	rp_store_release(&sh->pause_ack, seq);
	while (rp_load_acquire(&sh->pause_seq) == seq)
		rte_pause();
}

/*
 * Shards of other devices on the calling lcore: it runs none of their
 * passes while it waits here, so it may say they wait (two devices whose
 * shards 0 are on each other's lcores would otherwise wait for each
 * other).  Their next pass waits for real.
 */
static void
pause_ack_mine(const struct rp_dev *dev)
{
	unsigned int lcore = rte_lcore_id();

	for (unsigned int d = 0; d < rp_nr_devs; d++) {
		struct rp_dev *o = rp_devs[d];

		if (o == NULL || o == dev)
			continue;
		for (uint32_t i = 1; i < o->nr_shards; i++) {
			struct rp_shard *sh = &o->sh[i];
			uint32_t seq = rp_load_acquire(&sh->pause_seq);

			if (sh->lcore == lcore && (seq & 1) != 0)
				rp_store_release(&sh->pause_ack, seq);
		}
	}
}

/* Both a no-op for a device of one shard. */
void
rp_shard_pause(struct rp_dev *dev)
{
	const uint64_t one = 1;

	for (uint32_t i = 1; i < dev->nr_shards; i++) {
		struct rp_shard *sh = &dev->sh[i];

		rp_store_release(&sh->pause_seq, sh->pause_seq + 1);
		/* An lcore asleep (idle "sleep", an inline stand-aside)
		 * answers sooner. */
		if (sh->wake_fd >= 0 &&
		    write(sh->wake_fd, &one, sizeof(one)) < 0)
			RP_LOG(DEBUG, "shard wake-up: %s", strerror(errno));
	}
	for (uint32_t i = 1; i < dev->nr_shards; i++) {
		struct rp_shard *sh = &dev->sh[i];

		while (rp_load_acquire(&sh->pause_ack) != sh->pause_seq &&
		       rp_load_acquire(&sh->gone) == 0) {
			pause_ack_mine(dev);
			rte_pause();
		}
	}
}

void
rp_shard_resume(struct rp_dev *dev)
{
	for (uint32_t i = 1; i < dev->nr_shards; i++)
		rp_store_release(&dev->sh[i].pause_seq,
				 dev->sh[i].pause_seq + 1);
}

/* ---- frames */

enum { FRAME_ALL = -1 };

/*
 * The shard a frame is for, read from its headers without checking them
 * (the owner checks everything): the owner of a unicast RoCEv2 frame's
 * destination QP; every shard for ARP and ICMPv6 (neighbour discovery);
 * shard 0 for anything else (QP 1, groups, what is dropped).
 */
static int
frame_shard(const struct rp_dev *dev, const struct rte_mbuf *m)
{
	const uint8_t *p = rte_pktmbuf_mtod(m, const uint8_t *);
	uint32_t len = rte_pktmbuf_data_len(m), l4, qpn;
	uint16_t et;
	const struct rp_qp *qp;

	if (len < RTE_ETHER_HDR_LEN)
		return 0;
	et = (uint16_t)(p[12] << 8 | p[13]);
	if (et == RTE_ETHER_TYPE_ARP)
		return FRAME_ALL;
	if (et == RTE_ETHER_TYPE_IPV4) {
		if (len < RTE_ETHER_HDR_LEN + 20u || p[23] != IPPROTO_UDP)
			return 0;
		l4 = RTE_ETHER_HDR_LEN + (p[14] & 0xfu) * 4u;
	} else if (et == RTE_ETHER_TYPE_IPV6) {
		if (len < RTE_ETHER_HDR_LEN + 40u)
			return 0;
		if (p[20] == IPPROTO_ICMPV6)
			return FRAME_ALL;
		if (p[20] != IPPROTO_UDP)
			return 0;
		l4 = RTE_ETHER_HDR_LEN + 40u;
	} else {
		return 0;
	}
	/* UDP (8) then the BTH, whose bytes 5 to 7 are the DestQP */
	if (len < l4 + 8u + 12u || p[l4 + 2] != (RP_ROCE_UDP_PORT >> 8) ||
	    p[l4 + 3] != (RP_ROCE_UDP_PORT & 0xff))
		return 0;
	qpn = rp_bth_qpn(p + l4 + 8);
	if (qpn <= 1 || qpn == RP_QPN_MASK)
		return 0;
	qp = dev->qp[qpn & (RP_MAX_QP - 1)];
	return qp != NULL ? (int)qp->shard : 0;
}

static void
handoff(struct rp_shard *sh, struct rp_shard *to, struct rte_mbuf *m)
{
	rp_handoff_release(m);
	if (rte_ring_mp_enqueue(to->handoff, m) != 0) {
		rte_pktmbuf_free(m);
		rp_stat_inc(sh->dev, RP_STAT_SHARD_HANDOFF_DROP);
		return;
	}
	rp_stat_inc(sh->dev, RP_STAT_SHARD_HANDOFF);
}

/*
 * A pass's frames: those other shards handed over, then the shard's own
 * queues, less what it hands to other shards.  ARP and ICMPv6 read here
 * go to every shard; handed over, they stay.
 */
uint16_t
rp_shard_rx(struct rp_shard *sh, struct rte_mbuf **pkts, uint16_t n)
{
	struct rp_dev *dev = sh->dev;
	uint16_t nh = 0, nb, keep;

	if (dev->nr_shards == 1)
		return rp_port_rx(&sh->pq, pkts, n);
	nh = (uint16_t)rte_ring_sc_dequeue_burst(sh->handoff, (void **)pkts,
						 n / 2, NULL);
	rp_handoff_acquire_bulk(pkts, nh);
	nb = nh + rp_port_rx(&sh->pq, pkts + nh, n - nh);
	keep = 0;
	for (uint16_t i = 0; i < nb; i++) {
		struct rte_mbuf *m = pkts[i];
		int to = frame_shard(dev, m);

		if (to == FRAME_ALL) {
			if (i >= nh)
				for (uint32_t k = 0; k < dev->nr_shards; k++) {
					if (k == sh->idx)
						continue;
					rte_mbuf_refcnt_update(m, 1);
					handoff(sh, &dev->sh[k], m);
				}
			to = (int)sh->idx;
		}
		if ((uint32_t)to == sh->idx)
			pkts[keep++] = m;
		else
			handoff(sh, &dev->sh[to], m);
	}
	return keep;
}
