/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Packet I/O on one DPDK port: the engine's rte_eth_* calls live in the
 * port layer (here, and rp_port_mtu.c for the MTU's).  Frames addressed to the device itself take the loopback ring
 * instead of the wire, so QPs of one device can talk to each other.
 */

#include <assert.h>
#include <errno.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_dev.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include <infiniband/verbs.h>

#include "rp_atomic.h"
#include "rp_log.h"
#include "rp_pkt.h"
#include "rp_port.h"
#include "rp_port_kind.h"

#define RP_NB_MBUF	8191u
#define RP_NB_RXD	1024u
#define RP_NB_TXD	1024u
#define RP_LOOP_RING	1024u
/* Ethernet + IPv6 + UDP + largest BTH/ext headers + pad + ICRC, rounded */
#define RP_HDR_ROOM	128u

static int
port_find(const struct rp_port_cfg *pc, uint16_t *port_id)
{
	char name[RTE_ETH_NAME_MAX_LEN];
	size_t n = strcspn(pc->device, ",");

	if (pc->ethdev_name[0] != '\0') {
		if (strlen(pc->ethdev_name) >= sizeof(name))
			return -ENAMETOOLONG;
		strcpy(name, pc->ethdev_name);
	} else {
		if (n >= sizeof(name))
			return -ENAMETOOLONG;
		memcpy(name, pc->device, n);
		name[n] = '\0';
	}
	if (rte_eth_dev_get_port_by_name(name, port_id) == 0)
		return 0;
	RP_LOGT(rp_logtype_port, ERR, "no DPDK port named \"%s\" (device %s)",
		name, pc->device);
	return -ENODEV;
}

/*
 * What wakes an engine of the idle policy "adaptive" that blocks: the RX
 * interrupt of queue 0, which the engine adds to the set it blocks on,
 * enables before its last look at the queue and disables on waking
 * (l3fwd-power's pattern); or, for PMDs without the feature that keep the
 * frames in a kernel socket (af_packet's ring sockets, af_xdp's AF_XDP
 * sockets), those sockets, readable while a frame waits in their receive
 * ring: level-triggered, so a frame that arrives after the last look ends
 * the block as well.  Other PMDs (memif in 22.11) leave both unset, and
 * the engine wakes on doorbells and its timeout only.
 */
/*
 * The RX interrupt fd of queue 0, or -1.  A PMD that accepts
 * intr_conf.rxq without having the interrupt (af_xdp, memif in 22.11) makes
 * ethdev log an error ("Rx Intr handle unset") for asking: the engine only
 * asks, so ethdev is kept quiet meanwhile.
 */
static int
rp_port_rx_intr_fd(uint16_t port_id)
{
	int level = rte_log_get_level(rte_eth_dev_logtype);
	int fd;

	if (level > 0)
		rte_log_set_level(rte_eth_dev_logtype, RTE_LOG_CRIT);
	fd = rte_eth_dev_rx_intr_ctl_q_get_fd(port_id, 0);
	if (level > 0)
		rte_log_set_level(rte_eth_dev_logtype, (uint32_t)level);
	return fd;
}

static void
rp_port_rx_intr_setup(struct rp_port *p, bool intr, unsigned int ifindex)
{
	int fd;

	p->rx_intr_fd = -1;
	p->nr_rx_sock = 0;
	if (!p->rx_intr_want)
		return;
	fd = intr ? rp_port_rx_intr_fd(p->port_id) : -1;
	if (fd >= 0 && rte_eth_dev_rx_intr_enable(p->port_id, 0) == 0) {
		rte_eth_dev_rx_intr_disable(p->port_id, 0);
		p->rx_intr_fd = fd;
		RP_LOGT(rp_logtype_port, INFO, "%s: RX interrupt fd %d",
			p->cfg->device, fd);
		return;
	}
	if (p->kind_ops->rx_socks != NULL && ifindex != 0)
		p->kind_ops->rx_socks(p, ifindex);
	if (p->nr_rx_sock != 0 || p->xsk_fd >= 0) {
		RP_LOGT(rp_logtype_port, INFO,
			"%s: no RX interrupt, an idle engine wakes on its receive sockets",
			p->cfg->device);
		return;
	}
	RP_LOGT(rp_logtype_port, INFO,
		"%s: no RX interrupt, an idle engine wakes on doorbells and timers",
		p->cfg->device);
}

/* The descriptors a blocking lcore waits on for the device: at most max. */
unsigned int
rp_port_wait_fds(const struct rp_port *p, struct pollfd *pfd,
		 unsigned int max)
{
	int fds[RP_PORT_WAIT_FDS];
	unsigned int n = 0;

	if (p->rx_intr_fd >= 0) {
		fds[n++] = p->rx_intr_fd;
	} else if (p->rx_intr_want) {
		for (uint32_t i = 0; i < p->nr_rx_sock; i++)
			fds[n++] = p->rx_sock[i];
		if (p->xsk_fd >= 0)
			fds[n++] = p->xsk_fd;
		n += rp_xsk_rxq_fds(p, fds + n, RP_PORT_WAIT_FDS - n);
	}
	n = RTE_MIN(n, max);
	for (unsigned int i = 0; i < n; i++) {
		pfd[i].fd = fds[i];
		pfd[i].events = POLLIN;
		pfd[i].revents = 0;
	}
	return n;
}

void
rp_port_rx_intr_enable(struct rp_port *p)
{
	if (p->rx_intr_fd >= 0)
		rte_eth_dev_rx_intr_enable(p->port_id, 0);
}

void
rp_port_rx_intr_disable(struct rp_port *p)
{
	if (p->rx_intr_fd >= 0)
		rte_eth_dev_rx_intr_disable(p->port_id, 0);
}

static const struct rp_port_ops *port_kind_ops(enum rp_port_kind kind);

/* The port, its PMD's facts, and the operations of its kind. */
static int
port_open(struct rp_port *p, struct rte_eth_dev_info *info)
{
	int ret;

	ret = port_find(p->cfg, &p->port_id);
	if (ret < 0)
		return ret;
	ret = rte_eth_dev_info_get(p->port_id, info);
	if (ret < 0)
		return ret;
	p->kind_ops = port_kind_ops(rp_port_kind_of(info->driver_name));
	p->ops = p->kind_ops;
	p->xsks_map_fd = -1;		/* af_xdp's, the others have none */
	return 0;
}

/*
 * A queue pair per lcore of the device (rp_port_add_queue): the PMD's, or on
 * af_xdp the interface's receive queues (*nq), of which the PMD serves
 * the first and the engine's own sockets the others (*neq = 1).
 */
static int
port_queues(struct rp_port *p, const struct rte_eth_dev_info *info,
	    uint32_t *nq, uint16_t *neq)
{
	const struct rp_port_ops *ops = p->kind_ops;

	*nq = ops->queues != NULL ? ops->queues(p, info) : 1;
	*neq = ops->umem ? 1 : (uint16_t)p->nr_q;
	if (ops->umem ? *nq >= p->nr_q :
	    info->max_rx_queues >= *neq && info->max_tx_queues >= *neq)
		return 0;
	RP_LOGT(rp_logtype_port, ERR,
		"%s: %u lcores serve the port, and each needs its own queue pair; the port has %u%s",
		p->cfg->device, p->nr_q,
		ops->umem ? *nq : RTE_MIN(info->max_rx_queues,
					  info->max_tx_queues),
		ops->queues_hint != NULL ? ops->queues_hint : "");
	return -EINVAL;
}

/* The port's mbuf pool, for frames of the IB MTU on nq receive queues. */
static int
port_pool(struct rp_port *p, uint32_t nq)
{
	const struct rp_port_ops *ops = p->kind_ops;
	uint32_t frame_max = RTE_MAX(p->mtu + RP_HDR_ROOM, 2048u);
	char name[RTE_MEMPOOL_NAMESIZE];
	/* The engine's own sockets on further receive queues fill from the
	 * same pool (rp_xsk_rxq.c). */
	uint32_t nb_mbuf = RP_NB_MBUF + (nq - 1) * rp_xsk_fill(nq);

	if (ops->frame_max != NULL)
		frame_max = ops->frame_max(p, frame_max);
	snprintf(name, sizeof(name), "rp_mbuf_%u", p->id);
	p->pool = rte_mempool_lookup(name);
	if (p->pool == NULL)
		p->pool = rp_port_pool_create(name, nb_mbuf,
			(uint16_t)(RTE_PKTMBUF_HEADROOM + frame_max),
			rte_eth_dev_socket_id(p->port_id), ops->umem);
	if (p->pool == NULL) {
		RP_LOGT(rp_logtype_port, ERR, "mbuf pool: %s",
			rte_strerror(rte_errno));
		return -ENOMEM;
	}
	if (ops->umem && p->pool->nb_mem_chunks != 1) {
		RP_LOGT(rp_logtype_port, ERR,
			"%s: the mbuf pool is in %u pieces of memory; af_xdp registers one (its umem)",
			p->cfg->device, p->pool->nb_mem_chunks);
		return -ENOMEM;
	}
	return 0;
}

/* neq queue pairs; *intr: whether the PMD took RX interrupts. */
static int
port_configure(struct rp_port *p, const struct rte_eth_dev_info *info,
	       uint16_t neq, bool *intr)
{
	struct rte_eth_rxconf rxconf = info->default_rxconf;
	struct rte_eth_conf conf;
	int socket = rte_eth_dev_socket_id(p->port_id);
	int ret;

	memset(&conf, 0, sizeof(conf));
	/* An engine that blocks when idle wants RX interrupts: ask, and do
	 * without them if the PMD refuses (rp_port_rx_intr_setup). */
	conf.intr_conf.rxq = p->rx_intr_want ? 1 : 0;
	ret = rte_eth_dev_configure(p->port_id, neq, neq, &conf);
	if (ret < 0 && conf.intr_conf.rxq != 0) {
		/* No interrupts: the receive sockets may still wake it. */
		conf.intr_conf.rxq = 0;
		ret = rte_eth_dev_configure(p->port_id, neq, neq, &conf);
	}
	if (ret < 0) {
		RP_LOGT(rp_logtype_port, ERR, "configure port %u: %s",
			p->port_id, rte_strerror(-ret));
		return ret;
	}
	*intr = conf.intr_conf.rxq != 0;
	/* af_xdp loads rocepmd's XDP program with the queue: not over a
	 * killed engine's. */
	if (p->kind_ops->prepare != NULL) {
		ret = p->kind_ops->prepare(p, info);
		if (ret < 0)
			return ret;
	}
	for (uint16_t q = 0; q < neq; q++) {
		ret = rte_eth_rx_queue_setup(p->port_id, q, RP_NB_RXD,
					     socket, &rxconf, p->pool);
		if (ret < 0) {
			p->rxq_failed = true;
			return ret;
		}
		ret = rte_eth_tx_queue_setup(p->port_id, q, RP_NB_TXD,
					     socket, NULL);
		if (ret < 0)
			return ret;
	}
	return 0;
}

/*
 * af_xdp: a receive queue still bound.  The kernel lets a closed AF_XDP
 * socket's queue go later, from a work queue (a bind straight after a
 * close fails with EBUSY: 1,999 times in 2,000 on a veth, for up to 32
 * ms), so an engine that starts as the last one on the port exits finds
 * it bound: a forking server (qperf's: one process, one engine, a test)
 * failed its next test's start on a loaded machine.  The PMD's failed
 * setup cannot be retried (its umem's fill ring is spent: "Failed to
 * reserve enough fq descs" at every retry), and each failure keeps a
 * fill ring's worth of the pool's mbufs (three drained it: "Failed to
 * get enough buffers for fq"): the port is closed, its pool freed (no
 * socket was bound, nothing of the kernel's is in it), and the port
 * probed and set up anew after a wait that doubles (each probe leaks the
 * PMD's program fds: a handful), until RP_XSK_WAIT_MS have passed.
 */
static int
port_reopen(struct rp_port *p, struct rte_eth_dev_info *info, uint32_t nq,
	    unsigned int *ms, unsigned int *waited)
{
	const char *args = strchr(p->cfg->device, ',');
	int ret;

	rte_eth_dev_close(p->port_id);
	ret = rte_eal_hotplug_remove("vdev", p->cfg->ethdev_name);
	if (ret < 0)
		return ret;
	rte_mempool_free(p->pool);
	p->pool = NULL;
	(void)rp_xsk_wait(ms, waited);
	ret = rte_eal_hotplug_add("vdev", p->cfg->ethdev_name,
				  args != NULL ? args + 1 : "");
	if (ret == 0)
		ret = port_open(p, info);
	return ret == 0 ? port_pool(p, nq) : ret;
}

/* port_configure(), and on af_xdp again while the queue is still bound. */
static int
port_configure_wait(struct rp_port *p, struct rte_eth_dev_info *info,
		    uint32_t nq, uint16_t neq, bool *intr)
{
	unsigned int waited = 0, reopened = 0, ms = RP_XSK_WAIT_FIRST_MS;
	int ret;

	for (;;) {
		p->rxq_failed = false;
		ret = port_configure(p, info, neq, intr);
		if (ret >= 0 || !p->rxq_failed ||
		    !p->kind_ops->umem ||
		    waited >= RP_XSK_WAIT_MS)
			break;
		if (reopened == 0)
			RP_LOGT(rp_logtype_port, NOTICE,
				"%s: receive queue not set up (%s): waiting up to %u ms for the kernel to let a closed socket's queue go",
				p->cfg->device, rte_strerror(-ret),
				RP_XSK_WAIT_MS);
		ret = port_reopen(p, info, nq, &ms, &waited);
		if (ret < 0) {
			RP_LOGT(rp_logtype_port, ERR,
				"%s: cannot reopen the port: %s",
				p->cfg->device, rte_strerror(-ret));
			return ret;
		}
		reopened++;
	}
	if (reopened != 0 && ret >= 0) {
		RP_LOGT(rp_logtype_port, NOTICE,
			"%s: receive queue set up after %u ms (port reopened %u times)",
			p->cfg->device, waited, reopened);
		rp_stats_add(p->q[0]->stats, RP_STAT_XSK_QUEUE_WAIT, reopened);
	} else if (reopened != 0) {
		RP_LOGT(rp_logtype_port, ERR,
			"%s: receive queue still not set up after %u ms",
			p->cfg->device, waited);
	}
	return ret;
}

/* The MAC, the start, and what the kind does once the port runs. */
static int
port_start(struct rp_port *p, const struct rte_eth_dev_info *info)
{
	int ret;

	if (p->cfg->mac_set) {
		memcpy(p->mac.addr_bytes, p->cfg->mac, 6);
		rte_eth_promiscuous_enable(p->port_id);
	} else {
		rte_eth_macaddr_get(p->port_id, &p->mac);
	}
	ret = rte_eth_dev_start(p->port_id);
	if (ret < 0) {
		RP_LOGT(rp_logtype_port, ERR, "start port %u: %s",
			p->port_id, rte_strerror(-ret));
		return ret;
	}
	if (p->kind_ops->start != NULL)
		return p->kind_ops->start(p, info);
	return 0;
}

/*
 * The queues of each shard: ethdev queue pair i for shard i; on af_xdp,
 * the interface's receive queues in contiguous ranges (queue 0 is the
 * PMD's, shard 0's), a shard other than 0 sending on its first socket.
 */
static void
port_shard_queues(struct rp_port *p, bool xdp)
{
	uint32_t ns = p->nr_q, nq = 1 + p->nr_xsk_rxq;

	for (uint32_t i = 0; i < ns; i++) {
		struct rp_port_q *pq = p->q[i];
		uint32_t lo = i * nq / ns, hi = (i + 1) * nq / ns;

		if (!xdp) {
			pq->rxq = pq->txq = (uint16_t)i;
			pq->pmd_rxq = true;
			pq->nr_xsk = 0;
		} else if (i == 0) {
			pq->pmd_rxq = true;
			pq->xsk_lo = 0;
			pq->nr_xsk = hi - 1;
		} else {
			pq->pmd_rxq = false;
			pq->xsk_lo = lo - 1;
			pq->nr_xsk = hi - lo;
			pq->xsk_tx = true;
		}
		if (!xdp)
			lo = i, hi = i + 1;
		if (ns > 1 && hi - lo == 1)
			RP_LOGT(rp_logtype_port, INFO,
				"%s: lcore %u serves receive queue %u",
				p->cfg->device, pq->lcore, lo);
		else if (ns > 1)
			RP_LOGT(rp_logtype_port, INFO,
				"%s: lcore %u serves receive queues %u to %u",
				p->cfg->device, pq->lcore, lo, hi - 1);
	}
}

void
rp_port_setup(struct rp_port *p, unsigned int id,
	      const struct rp_port_cfg *cfg, bool rx_intr)
{
	memset(p, 0, sizeof(*p));
	p->id = id;
	p->cfg = cfg;
	p->rx_intr_want = rx_intr;
	p->rx_intr_fd = -1;
	p->if_sock = -1;
	p->kick_fd = -1;
	p->xdp_addrs_fd = -1;
	p->xdp_stats_fd = -1;
	p->xsk_fd = -1;
	p->xsks_map_fd = -1;
}

int
rp_port_mtu_find(struct rp_port *p)
{
	struct rte_eth_dev_info info;
	int ret = port_open(p, &info);

	if (ret < 0)
		return ret;
	p->mtu = p->cfg->mtu != RP_MTU_AUTO ? p->cfg->mtu :
		rp_port_mtu_auto(p, &info);
	return 0;
}

uint32_t
rp_port_mtu(const struct rp_port_cfg *pc)
{
	struct rp_port p;

	if (pc->mtu != RP_MTU_AUTO)
		return pc->mtu;
	rp_port_setup(&p, 0, pc, false);
	return rp_port_mtu_find(&p) == 0 ? p.mtu : 1024;
}

void
rp_port_add_queue(struct rp_port *p, struct rp_port_q *pq, uint32_t lcore,
		  uint64_t *stats)
{
	RTE_VERIFY(p->nr_q < RTE_DIM(p->q));
	memset(pq, 0, sizeof(*pq));
	pq->port = p;
	pq->idx = p->nr_q;
	pq->lcore = lcore;
	pq->stats = stats;
	p->q[p->nr_q++] = pq;
}

int
rp_port_init(struct rp_port *p)
{
	struct rte_eth_dev_info info;
	char name[RTE_RING_NAMESIZE];
	uint32_t nq;
	uint16_t neq;			/* ethdev queue pairs */
	bool intr = false;
	int ret;

	ret = port_open(p, &info);
	if (ret == 0)
		ret = port_queues(p, &info, &nq, &neq);
	if (ret == 0)
		ret = port_pool(p, nq);
	if (ret == 0)
		ret = port_configure_wait(p, &info, nq, neq, &intr);
	if (ret < 0)
		return ret;
	rp_port_mtu_check(p, &info);
	p->tx_zc = rp_port_tx_zc(p, &info);
	p->tx_zc_rd = p->tx_zc && p->cfg->tx_zero_copy == RP_TX_ZC_ON;
	p->tx_zc_min = p->cfg->tx_zero_copy_min;
	p->icrc_nc = p->cfg->icrc == RP_ICRC_AUTO &&
		rp_port_kind_memory(info.driver_name) &&
		p->cfg->fault.tx.corrupt == 0 && p->cfg->fault.rx.corrupt == 0;
	if (p->icrc_nc)
		RP_LOGT(rp_logtype_port, INFO,
			"%s: a memory link: no ICRC toward rocepmd peers that skip it too (icrc = auto)",
			p->cfg->device);
	if (p->tx_zc)
		RP_LOGT(rp_logtype_port, INFO,
			"%s: payloads of %u bytes or more of requests%s sent from registered memory (tx_zero_copy)",
			p->cfg->device, p->tx_zc_min,
			p->tx_zc_rd ? " and READ responses" :
			" and READ responses to selective requesters");
	else
		RP_LOGT(rp_logtype_port, INFO,
			"%s: payloads copied into frames", p->cfg->device);
	ret = port_start(p, &info);
	if (ret < 0)
		return ret;
	port_shard_queues(p, p->kind_ops->umem);
	rp_port_rx_intr_setup(p, intr, info.if_index);
	if (info.if_index != 0 &&
	    if_indextoname(info.if_index, p->if_name) != NULL)
		p->if_sock = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	rp_fault_init(p);
	snprintf(name, sizeof(name), "rp_loop_%u", p->id);
	p->loop_ring = rte_ring_create(name, RP_LOOP_RING, SOCKET_ID_ANY,
					 RING_F_SC_DEQ);
	if (p->loop_ring == NULL)
		return -ENOMEM;
	return 0;
}

void
rp_port_fini(struct rp_port *p)
{
	struct rte_mbuf *m;

	rp_fault_fini(p);
	if (p->kind_ops != NULL && p->kind_ops->fini != NULL)
		p->kind_ops->fini(p);
	if (p->if_sock >= 0) {
		close(p->if_sock);
		p->if_sock = -1;
	}
	if (p->loop_ring != NULL) {
		while (rte_ring_sc_dequeue(p->loop_ring, (void **)&m) == 0)
			rte_pktmbuf_free(m);
		rte_ring_free(p->loop_ring);
		p->loop_ring = NULL;
	}
	/* the stashes back to the pool, which outlives us (below) */
	for (uint32_t i = 0; i < p->nr_q; i++) {
		rte_pktmbuf_free_bulk(p->q[i]->stash, p->q[i]->nr_stash);
		p->q[i]->nr_stash = 0;
	}
	if (p->pool != NULL) {
		rte_eth_dev_stop(p->port_id);
		rte_eth_dev_close(p->port_id);
		/*
		 * The pool is not freed: a PMD may still return mbufs to it
		 * from the interrupt thread after close (memif does, when its
		 * peer disconnects), and the pool is named per device, so a
		 * restarted engine finds it again.
		 */
		p->pool = NULL;
	}
}

/* The frames of the calling shard's queue, and shard 0's loopback. */
static uint16_t
port_ethdev_rx(struct rp_port_q *pq, struct rte_mbuf **pkts, uint16_t n)
{
	const struct rp_port *p = pq->port;
	uint16_t nb = 0;

	if (pq->idx == 0)
		nb = rte_ring_sc_dequeue_burst(p->loop_ring, (void **)pkts,
					       n, NULL);
	if (nb < n && pq->pmd_rxq)
		nb += rte_eth_rx_burst(p->port_id, pq->rxq, pkts + nb, n - nb);
	return nb;
}

/* af_xdp: the same, and the shard's further receive queues. */
static uint16_t
port_af_xdp_rx(struct rp_port_q *pq, struct rte_mbuf **pkts, uint16_t n)
{
	const struct rp_port *p = pq->port;
	uint16_t nb = 0;

	if (likely(pq->nr_xsk == 0))
		return port_ethdev_rx(pq, pkts, n);
	if (pq->idx == 0)
		nb = rte_ring_sc_dequeue_burst(p->loop_ring, (void **)pkts,
					       n, NULL);
	/* Further receive queues (rp_xsk_rxq.c): the PMD's first on every
	 * other pass, so that a busy queue starves none. */
	pq->xsk_first = !pq->xsk_first;
	if (pq->xsk_first && nb < n)
		nb += rp_xsk_rxq_rx(pq, pkts + nb, n - nb);
	if (nb < n && pq->pmd_rxq)
		nb += rte_eth_rx_burst(p->port_id, pq->rxq, pkts + nb,
				       n - nb);
	if (!pq->xsk_first && nb < n)
		nb += rp_xsk_rxq_rx(pq, pkts + nb, n - nb);
	return nb;
}

uint16_t
rp_port_rx(struct rp_port_q *pq, struct rte_mbuf **pkts, uint16_t n)
{
	uint16_t nb = pq->port->ops->rx(pq, pkts, n);

	/* Frames in mbufs another lcore of the pool may have used last. */
	rp_handoff_acquire_bulk(pkts, nb);
	return nb;
}

/* The stash refilled: how many it holds now (0: the pool is dry). */
uint16_t
rp_port_restash(struct rp_port_q *pq)
{
	struct rte_mempool *mp = pq->port->pool;

	if (rte_pktmbuf_alloc_bulk(mp, pq->stash, RP_PORT_STASH) == 0) {
		pq->nr_stash = RP_PORT_STASH;
	} else {
		/* fewer left than a stash: one at a time */
		pq->stash[0] = rte_pktmbuf_alloc(mp);
		pq->nr_stash = pq->stash[0] != NULL;
	}
	if (pq->nr_stash == 0)
		rp_stats_inc(pq->stats, RP_STAT_NOMBUF);
	/* from any lcore of the pool: rp_atomic.h */
	rp_handoff_acquire_bulk(pq->stash, pq->nr_stash);
	return pq->nr_stash;
}

struct rte_mbuf *
rp_port_alloc(struct rp_port_q *pq, uint32_t frame_len, uint8_t **data)
{
	struct rte_mbuf *m = rp_port_mbuf(pq);

	if (m == NULL)
		return NULL;
	*data = (uint8_t *)rte_pktmbuf_append(m, frame_len);
	if (*data == NULL) {
		rte_pktmbuf_free(m);
		return NULL;
	}
	return m;
}

/*
 * The shard's frames out to the port; whether any went, or the port has
 * more to do.  kick: af_packet's TX ring kick (rp_port_kick.c); xsk:
 * af_xdp's own sockets' (rp_xsk_rxq.c).  Each kind's flush passes
 * constants, so that the compiler drops what the kind has not.
 */
static inline bool
port_flush(struct rp_port_q *pq, bool kind_kick, bool kind_xsk)
{
	const struct rp_port *p = pq->port;
	bool kick = kind_kick && p->kick_fd >= 0 && pq->idx == 0;
	bool xsk = kind_xsk && pq->xsk_tx;
	uint16_t sent = 0;
	int tries = 0;

	if (pq->nr_tx == 0)
		return (kick && rp_port_kick(pq)) ||
			(xsk && rp_xsk_tx_pending(pq));
	/* The PMD frees them into the pool the device's lcores share. */
	rp_handoff_release_chains(pq->tx, pq->nr_tx);
	while (sent < pq->nr_tx && tries++ < 4)
		sent += xsk ?
			rp_xsk_tx(pq, pq->tx + sent, pq->nr_tx - sent) :
			rte_eth_tx_burst(p->port_id, pq->txq, pq->tx + sent,
					 pq->nr_tx - sent);
	rp_stats_add(pq->stats, RP_STAT_TX_PKTS, sent);
	if (kick && sent != 0)
		pq->kick_pending = true;
	/* Keep what the port refused for the next flush: the requester
	 * holds back while the buffer is half full (rp_port_tx_room). */
	memmove(pq->tx, pq->tx + sent, (pq->nr_tx - sent) * sizeof(pq->tx[0]));
	pq->nr_tx -= sent;
	if (pq->nr_tx != 0)
		rp_port_hold(pq);
	else
		pq->tx_ext = false;
	return sent != 0;
}

static bool
port_ethdev_flush(struct rp_port_q *pq)
{
	return port_flush(pq, false, false);
}

static bool
port_af_packet_flush(struct rp_port_q *pq)
{
	return port_flush(pq, true, false);
}

static bool
port_af_xdp_flush(struct rp_port_q *pq)
{
	return port_flush(pq, false, true);
}

bool
rp_port_flush(struct rp_port_q *pq)
{
	return pq->port->ops->flush(pq);
}

/* A frame to send: through the faults, if any, into the shard's buffer. */
void
rp_port_tx(struct rp_port_q *pq, struct rte_mbuf *m)
{
	pq->port->ops->tx(pq, m);
}

void
rp_port_enqueue(struct rp_port_q *pq, struct rte_mbuf *m)
{
	const struct rte_ether_hdr *eth =
		rte_pktmbuf_mtod(m, const struct rte_ether_hdr *);
	const struct rp_port *p = pq->port;

	if (rte_is_same_ether_addr(&eth->dst_addr, &p->mac)) {
		rp_stats_inc(pq->stats, RP_STAT_LOOPBACK);
		m = rp_port_unshare(pq, m);
		if (m == NULL)
			return;
		/* Any queue sends to ourselves; queue 0 receives. */
		rp_handoff_release(m);
		if (rte_ring_mp_enqueue(p->loop_ring, m) != 0) {
			rte_pktmbuf_free(m);
			rp_stats_inc(pq->stats, RP_STAT_TX_DROP);
		}
		return;
	}
	if (pq->nr_tx == RP_TX_MAX)
		rp_port_flush(pq);
	if (pq->nr_tx == RP_TX_MAX) {
		/* The port is stuck: the transport will retransmit. */
		rte_pktmbuf_free(m);
		rp_stats_inc(pq->stats, RP_STAT_TX_DROP);
		return;
	}
	pq->tx[pq->nr_tx++] = m;
}

static_assert(sizeof(((struct rp_port *)0)->if_name) == IF_NAMESIZE,
	      "rp_port.if_name holds an interface name");

/*
 * Whether the kernel interface behind the port is up and has carrier.
 * net_af_packet (22.11) reports its link up from start to stop whatever
 * the interface does, so the engine asks the interface itself: one ioctl
 * per link poll (10 a second), never per packet.
 */
static bool
port_kernel_link_up(const struct rp_port *p)
{
	struct ifreq ifr;

	if (p->if_sock < 0)
		return true;
	memset(&ifr, 0, sizeof(ifr));
	memcpy(ifr.ifr_name, p->if_name, sizeof(ifr.ifr_name));
	if (ioctl(p->if_sock, SIOCGIFFLAGS, &ifr) < 0)
		return true;	/* unknown: trust the PMD */
	return (ifr.ifr_flags & IFF_UP) && (ifr.ifr_flags & IFF_RUNNING);
}

void
rp_port_stats(struct rp_port *p)
{
	if (p->kind_ops != NULL && p->kind_ops->stats != NULL)
		p->kind_ops->stats(p);
}

int
rp_port_link_get(const struct rp_port *p, uint32_t *speed)
{
	struct rte_eth_link link;

	if (rte_eth_link_get_nowait(p->port_id, &link) != 0)
		return -1;
	*speed = link.link_speed;
	return link.link_status && port_kernel_link_up(p) ? 1 : 0;
}

/* ---- The kinds of port (rp_port_kind.h) */

/* af_packet copies whole ring frames: its mbufs must hold framesz. */
static uint32_t
af_packet_frame_max(const struct rp_port *p, uint32_t frame_max)
{
	const char *fsz = strstr(p->cfg->device, "framesz=");

	if (fsz != NULL)
		frame_max = RTE_MAX(frame_max, (uint32_t)atoi(fsz + 8));
	return frame_max;
}

/*
 * Frames the kernel dropped because a queue's receive ring was full (the
 * engine did not take them in time): told apart from loss on the wire, as
 * a receiver that cannot keep up costs retransmissions.  PACKET_STATISTICS
 * returns the counts since its last call, by anyone: the engine is the
 * only caller (testpmd's interactive "show port stats" would take some).
 */
static void
af_packet_stats_read(struct rp_port *p, bool count)
{
	for (uint32_t i = 0; i < p->nr_afp_sock; i++) {
		struct tpacket_stats st;
		socklen_t len = sizeof(st);

		if (getsockopt(p->afp_sock[i], SOL_PACKET, PACKET_STATISTICS,
			       &st, &len) == 0 && st.tp_drops != 0 && count)
			rp_stats_add(p->q[0]->stats, RP_STAT_AFP_RX_DROPPED,
				     st.tp_drops);
	}
}

static void
af_packet_stats(struct rp_port *p)
{
	af_packet_stats_read(p, true);
}

static int
af_packet_start(struct rp_port *p, const struct rte_eth_dev_info *info)
{
	unsigned int n = rp_port_ring_sockets(info->if_index, p->afp_sock,
					      RP_RX_SOCKS);

	p->nr_afp_sock = RTE_MIN(n, RP_RX_SOCKS);
	/* The sockets live as long as the vdev: what they dropped before
	 * the engine took the port (testpmd's raw flood) is not its. */
	af_packet_stats_read(p, false);
	rp_port_kick_init(p, info->if_index);
	return 0;
}

static void
af_packet_rx_socks(struct rp_port *p, unsigned int ifindex)
{
	unsigned int n = rp_port_ring_sockets(ifindex, p->rx_sock,
					      RP_RX_SOCKS);

	p->nr_rx_sock = RTE_MIN(n, RP_RX_SOCKS);
}

/*
 * af_xdp's mbufs are its umem chunks, and the kernel keeps
 * XDP_PACKET_HEADROOM of each in front of the frame: without it a frame
 * of a full IB MTU with a RETH is dropped by the socket.
 */
static uint32_t
af_xdp_frame_max(const struct rp_port *p, uint32_t frame_max)
{
	RTE_SET_USED(p);
	return frame_max + RP_XDP_PACKET_HEADROOM;
}

static uint32_t
af_xdp_queues(const struct rp_port *p, const struct rte_eth_dev_info *info)
{
	return rp_xdp_port_queues(p, info->if_index);
}

static int
af_xdp_prepare(struct rp_port *p, const struct rte_eth_dev_info *info)
{
	return rp_xdp_port_prepare(p, info->if_index);
}

static int
af_xdp_start(struct rp_port *p, const struct rte_eth_dev_info *info)
{
	return rp_xdp_port_start(p, info->if_index);
}

/* Any other PMD: memif, ring, null, tap, NICs. */
static const struct rp_port_ops port_ethdev_ops = {
	.name = "ethdev",
	.rx = port_ethdev_rx,
	.tx = rp_port_enqueue,
	.flush = port_ethdev_flush,
};

static const struct rp_port_ops port_af_packet_ops = {
	.name = "af_packet",
	.frame_max = af_packet_frame_max,
	.start = af_packet_start,
	.rx_socks = af_packet_rx_socks,
	.stats = af_packet_stats,
	.rx = port_ethdev_rx,
	.tx = rp_port_enqueue,
	.flush = port_af_packet_flush,
	.no_pmd_mtu = true,
	.queues_hint = " (af_packet: qpairs=N in the device string)",
};

static const struct rp_port_ops port_af_xdp_ops = {
	.name = "af_xdp",
	.frame_max = af_xdp_frame_max,
	.queues = af_xdp_queues,
	.prepare = af_xdp_prepare,
	.start = af_xdp_start,
	.stats = rp_xdp_port_stats,
	.fini = rp_xdp_port_fini,
	.rx = port_af_xdp_rx,
	.tx = rp_port_enqueue,
	.flush = port_af_xdp_flush,
	.umem = true,
	.queues_hint = " receive queues (ethtool -L, or a veth made with numrxqueues and numtxqueues)",
};

static const struct rp_port_ops *
port_kind_ops(enum rp_port_kind kind)
{
	switch (kind) {
	case RP_PORT_AF_PACKET:
		return &port_af_packet_ops;
	case RP_PORT_AF_XDP:
		return &port_af_xdp_ops;
	case RP_PORT_ETHDEV:
	default:
		return &port_ethdev_ops;
	}
}

bool
rp_port_kind_umem(enum rp_port_kind kind)
{
	return port_kind_ops(kind)->umem;
}
