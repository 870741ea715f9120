/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Packet I/O on one DPDK port: every rte_eth_* call of the engine lives
 * here.  Frames addressed to the device itself take the loopback ring
 * instead of the wire, so QPs of one device can talk to each other.
 */

#include <assert.h>
#include <errno.h>
#include <net/if.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_mbuf_pool_ops.h>

#include <infiniband/verbs.h>

#include "rp_atomic.h"
#include "rp_log.h"
#include "rp_transport.h"
#include "rp_port_kind.h"

#define RP_NB_MBUF	8191u
#define RP_MBUF_CACHE	256u
#define RP_NB_RXD	1024u
#define RP_NB_TXD	1024u
#define RP_LOOP_RING	1024u
/* Ethernet + IPv6 + UDP + largest BTH/ext headers + pad + ICRC, rounded */
#define RP_HDR_ROOM	128u
/* linux/bpf.h's XDP_PACKET_HEADROOM */
#define RP_XDP_PACKET_HEADROOM	256u
/*
 * L3 bytes around an IB MTU of payload in the largest frame the engine
 * sends: IPv4, UDP, BTH, RETH, ImmDt, ICRC (rp_cfg.c's frame overhead
 * without Ethernet).  A port must carry IB MTU + this as its MTU.
 */
#define RP_L3_OVERHEAD	(20u + 8u + 12u + 16u + 4u + RP_ICRC_SIZE)

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
rp_port_rx_intr_setup(struct rp_dev *dev, bool intr, unsigned int ifindex)
{
	int fd;

	dev->rx_intr_fd = -1;
	dev->nr_rx_sock = 0;
	if (!dev->rx_intr_want)
		return;
	fd = intr ? rp_port_rx_intr_fd(dev->port_id) : -1;
	if (fd >= 0 && rte_eth_dev_rx_intr_enable(dev->port_id, 0) == 0) {
		rte_eth_dev_rx_intr_disable(dev->port_id, 0);
		dev->rx_intr_fd = fd;
		RP_LOGT(rp_logtype_port, INFO, "%s: RX interrupt fd %d",
			dev->cfg.device, fd);
		return;
	}
	if (dev->kind_ops->rx_socks != NULL && ifindex != 0)
		dev->kind_ops->rx_socks(dev, ifindex);
	if (dev->nr_rx_sock != 0 || dev->xsk_fd >= 0) {
		RP_LOGT(rp_logtype_port, INFO,
			"%s: no RX interrupt, an idle engine wakes on its receive sockets",
			dev->cfg.device);
		return;
	}
	RP_LOGT(rp_logtype_port, INFO,
		"%s: no RX interrupt, an idle engine wakes on doorbells and timers",
		dev->cfg.device);
}

/* The descriptors a blocking lcore waits on for the device: at most max. */
unsigned int
rp_port_wait_fds(const struct rp_dev *dev, struct pollfd *pfd,
		 unsigned int max)
{
	int fds[RP_PORT_WAIT_FDS];
	unsigned int n = 0;

	if (dev->rx_intr_fd >= 0) {
		fds[n++] = dev->rx_intr_fd;
	} else if (dev->rx_intr_want) {
		for (uint32_t i = 0; i < dev->nr_rx_sock; i++)
			fds[n++] = dev->rx_sock[i];
		if (dev->xsk_fd >= 0)
			fds[n++] = dev->xsk_fd;
		n += rp_xsk_rxq_fds(dev, fds + n, RP_PORT_WAIT_FDS - n);
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
rp_port_rx_intr_enable(struct rp_dev *dev)
{
	if (dev->rx_intr_fd >= 0)
		rte_eth_dev_rx_intr_enable(dev->port_id, 0);
}

void
rp_port_rx_intr_disable(struct rp_dev *dev)
{
	if (dev->rx_intr_fd >= 0)
		rte_eth_dev_rx_intr_disable(dev->port_id, 0);
}

/* The largest IB MTU whose frames fit an L3 MTU, or 0 if none does. */
static uint32_t
port_ib_mtu_fit(uint32_t l3_mtu)
{
	uint32_t m;

	for (m = 4096; m >= 256; m /= 2)
		if (m + RP_L3_OVERHEAD <= l3_mtu)
			return m;
	return 0;
}

/*
 * The largest L3 packet the PMD itself carries, from what it reports, or
 * UINT32_MAX for no limit of its own.  net_af_packet reports the Ethernet
 * default (max_rx_pktlen 1518) whatever its ring and the interface carry:
 * its real limit is the ring frame, which the configuration checks
 * (framesz, rp_cfg.c), and then the interface's MTU.
 */
static uint32_t
port_pmd_max_l3(const struct rp_dev *dev, const struct rte_eth_dev_info *info)
{
	uint32_t max = info->max_mtu;
	const uint32_t l2 = RTE_ETHER_HDR_LEN + RTE_ETHER_CRC_LEN;

	if (dev->kind_ops->no_pmd_mtu)
		return UINT32_MAX;
	if (info->max_rx_pktlen > l2 && info->max_rx_pktlen - l2 < max)
		max = info->max_rx_pktlen - l2;
	return max >= UINT16_MAX ? UINT32_MAX : max;
}

/*
 * MTU of the kernel interface behind a port (af_packet, af_xdp, tap and
 * bifurcated NICs report its index), read in the calling thread's network
 * namespace, which is the one the PMD opened the interface in.
 */
static int
port_kernel_mtu(unsigned int if_index, char *name, uint32_t *mtu)
{
	struct ifreq ifr;
	int s, ret = 0;

	memset(&ifr, 0, sizeof(ifr));
	if (if_indextoname(if_index, ifr.ifr_name) == NULL)
		return -errno;
	s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		return -errno;
	if (ioctl(s, SIOCGIFMTU, &ifr) < 0)
		ret = -errno;
	close(s);
	if (ret < 0)
		return ret;
	strcpy(name, ifr.ifr_name);
	*mtu = (uint32_t)ifr.ifr_mtu;
	return 0;
}

/* ", or mtu = N in [portI]" with the largest IB MTU that fits, or "". */
static const char *
port_mtu_advice(char *buf, size_t len, const struct rp_dev *dev,
		uint32_t l3_mtu)
{
	uint32_t fit = port_ib_mtu_fit(l3_mtu);

	if (fit == 0)
		return "";
	snprintf(buf, len, ", or mtu = %u in [port%u]", fit, dev->id);
	return buf;
}

/*
 * Frames of the IB MTU must pass the port: say so only when they cannot,
 * and what to change.  A port on a kernel interface carries what the
 * interface's MTU allows, whatever the ethdev's own MTU field says (1500
 * for af_packet, which never looks at it); the interface belongs to the
 * host, so the engine reads its MTU and never changes it.  Any other port
 * is the engine's own: raise its MTU if needed.
 */
static void
rp_port_mtu_check(struct rp_dev *dev, const struct rte_eth_dev_info *info)
{
	const uint32_t need = dev->mtu + RP_L3_OVERHEAD;
	const uint32_t pmd_max = port_pmd_max_l3(dev, info);
	char ifname[IF_NAMESIZE];
	char advice[48];
	uint32_t kmtu = 0;
	uint16_t port_mtu;
	int ret;

	if (info->if_index != 0) {
		ret = port_kernel_mtu(info->if_index, ifname, &kmtu);
		if (ret < 0) {
			RP_LOGT(rp_logtype_port, INFO,
				"%s: cannot read the MTU of interface %u (%s): not checked",
				dev->cfg.device, info->if_index, strerror(-ret));
		} else if (kmtu < need) {
			RP_LOGT(rp_logtype_port, WARNING,
				"%s: interface %s has MTU %u, IB MTU %u needs %u: packets over %u bytes are dropped; set the interface MTU to %u or more (ip link set dev %s mtu %u)%s",
				dev->cfg.device, ifname, kmtu, dev->mtu, need,
				kmtu, need, ifname, need,
				port_mtu_advice(advice, sizeof(advice), dev,
						RTE_MIN(kmtu, pmd_max)));
			return;
		} else {
			RP_LOGT(rp_logtype_port, DEBUG,
				"%s: interface %s MTU %u carries IB MTU %u (needs %u)",
				dev->cfg.device, ifname, kmtu, dev->mtu, need);
		}
		if (pmd_max < need)
			RP_LOGT(rp_logtype_port, WARNING,
				"%s: the PMD carries packets of up to %u bytes, IB MTU %u needs %u: longer ones are dropped%s",
				dev->cfg.device, pmd_max, dev->mtu, need,
				port_mtu_advice(advice, sizeof(advice), dev,
						pmd_max));
		return;
	}

	if (rte_eth_dev_get_mtu(dev->port_id, &port_mtu) != 0 ||
	    port_mtu >= need)
		return;
	ret = rte_eth_dev_set_mtu(dev->port_id, need);
	if (ret == 0) {
		RP_LOGT(rp_logtype_port, INFO,
			"%s: port MTU %u raised to %u for IB MTU %u",
			dev->cfg.device, port_mtu, need, dev->mtu);
		return;
	}
	/* No MTU to set, and no limit either (net_ring): nothing is lost. */
	if (pmd_max >= need)
		return;
	RP_LOGT(rp_logtype_port, WARNING,
		"%s: port MTU %u, IB MTU %u needs %u and the port cannot be set to it (%s): packets over %u bytes are dropped%s",
		dev->cfg.device, port_mtu, dev->mtu, need, rte_strerror(-ret),
		port_mtu,
		port_mtu_advice(advice, sizeof(advice), dev, port_mtu));
}

/*
 * The port's mbuf pool.  For af_xdp (`packed`) the objects lie back to
 * back: the PMD registers the pool's memory as its umem and takes the
 * umem's size as objects x object size, but a pool that wants
 * IOVA-contiguous objects keeps each off page boundaries, and on 4 KiB
 * pages (no huge pages: rocepmd-run's default) an object of 2.6 KiB then
 * takes a page of its own.  A third of the mbufs lay beyond the umem,
 * and every frame sent from one was an invalid descriptor the kernel
 * dropped without a word (XDP_STATISTICS tx_invalid_descs).
 */
static struct rte_mempool *
port_pool_create(const char *name, uint32_t nb, uint16_t room, int socket,
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

static const struct rp_port_ops *port_kind_ops(enum rp_port_kind kind);

/* The port, its PMD's facts, and the operations of its kind. */
static int
port_open(struct rp_dev *dev, struct rte_eth_dev_info *info)
{
	int ret;

	ret = port_find(&dev->cfg, &dev->port_id);
	if (ret < 0)
		return ret;
	ret = rte_eth_dev_info_get(dev->port_id, info);
	if (ret < 0)
		return ret;
	dev->kind_ops = port_kind_ops(rp_port_kind_of(info->driver_name));
	dev->ops = dev->kind_ops;
	dev->xsks_map_fd = -1;		/* af_xdp's, the others have none */
	return 0;
}

/*
 * A queue pair per lcore of the device (rp_shard.c): the PMD's, or on
 * af_xdp the interface's receive queues (*nq), of which the PMD serves
 * the first and the engine's own sockets the others (*neq = 1).
 */
static int
port_queues(struct rp_dev *dev, const struct rte_eth_dev_info *info,
	    uint32_t *nq, uint16_t *neq)
{
	const struct rp_port_ops *ops = dev->kind_ops;

	*nq = ops->queues != NULL ? ops->queues(dev, info) : 1;
	*neq = ops->umem ? 1 : (uint16_t)dev->nr_shards;
	if (ops->umem ? *nq >= dev->nr_shards :
	    info->max_rx_queues >= *neq && info->max_tx_queues >= *neq)
		return 0;
	RP_LOGT(rp_logtype_port, ERR,
		"%s: %u lcores serve the port, and each needs its own queue pair; the port has %u%s",
		dev->cfg.device, dev->nr_shards,
		ops->umem ? *nq : RTE_MIN(info->max_rx_queues,
					  info->max_tx_queues),
		ops->queues_hint != NULL ? ops->queues_hint : "");
	return -EINVAL;
}

/* The port's mbuf pool, for frames of the IB MTU on nq receive queues. */
static int
port_pool(struct rp_dev *dev, uint32_t nq)
{
	const struct rp_port_ops *ops = dev->kind_ops;
	uint32_t frame_max = RTE_MAX(dev->mtu + RP_HDR_ROOM, 2048u);
	char name[RTE_MEMPOOL_NAMESIZE];
	/* The engine's own sockets on further receive queues fill from the
	 * same pool (rp_xsk_rxq.c). */
	uint32_t nb_mbuf = RP_NB_MBUF + (nq - 1) * rp_xsk_fill(nq);

	if (ops->frame_max != NULL)
		frame_max = ops->frame_max(dev, frame_max);
	snprintf(name, sizeof(name), "rp_mbuf_%u", dev->id);
	dev->pool = rte_mempool_lookup(name);
	if (dev->pool == NULL)
		dev->pool = port_pool_create(name, nb_mbuf,
			(uint16_t)(RTE_PKTMBUF_HEADROOM + frame_max),
			rte_eth_dev_socket_id(dev->port_id), ops->umem);
	if (dev->pool == NULL) {
		RP_LOGT(rp_logtype_port, ERR, "mbuf pool: %s",
			rte_strerror(rte_errno));
		return -ENOMEM;
	}
	if (ops->umem && dev->pool->nb_mem_chunks != 1) {
		RP_LOGT(rp_logtype_port, ERR,
			"%s: the mbuf pool is in %u pieces of memory; af_xdp registers one (its umem)",
			dev->cfg.device, dev->pool->nb_mem_chunks);
		return -ENOMEM;
	}
	return 0;
}

/* neq queue pairs; *intr: whether the PMD took RX interrupts. */
static int
port_configure(struct rp_dev *dev, const struct rte_eth_dev_info *info,
	       uint16_t neq, bool *intr)
{
	struct rte_eth_rxconf rxconf = info->default_rxconf;
	struct rte_eth_conf conf;
	int socket = rte_eth_dev_socket_id(dev->port_id);
	int ret;

	memset(&conf, 0, sizeof(conf));
	/* An engine that blocks when idle wants RX interrupts: ask, and do
	 * without them if the PMD refuses (rp_port_rx_intr_setup). */
	conf.intr_conf.rxq = dev->rx_intr_want ? 1 : 0;
	ret = rte_eth_dev_configure(dev->port_id, neq, neq, &conf);
	if (ret < 0 && conf.intr_conf.rxq != 0) {
		/* No interrupts: the receive sockets may still wake it. */
		conf.intr_conf.rxq = 0;
		ret = rte_eth_dev_configure(dev->port_id, neq, neq, &conf);
	}
	if (ret < 0) {
		RP_LOGT(rp_logtype_port, ERR, "configure port %u: %s",
			dev->port_id, rte_strerror(-ret));
		return ret;
	}
	*intr = conf.intr_conf.rxq != 0;
	/* af_xdp loads rocepmd's XDP program with the queue: not over a
	 * killed engine's. */
	if (dev->kind_ops->prepare != NULL) {
		ret = dev->kind_ops->prepare(dev, info);
		if (ret < 0)
			return ret;
	}
	for (uint16_t q = 0; q < neq; q++) {
		ret = rte_eth_rx_queue_setup(dev->port_id, q, RP_NB_RXD,
					     socket, &rxconf, dev->pool);
		if (ret < 0)
			return ret;
		ret = rte_eth_tx_queue_setup(dev->port_id, q, RP_NB_TXD,
					     socket, NULL);
		if (ret < 0)
			return ret;
	}
	return 0;
}

/* The MAC, the start, and what the kind does once the port runs. */
static int
port_start(struct rp_dev *dev, const struct rte_eth_dev_info *info)
{
	int ret;

	if (dev->cfg.mac_set) {
		memcpy(dev->mac.addr_bytes, dev->cfg.mac, 6);
		rte_eth_promiscuous_enable(dev->port_id);
	} else {
		rte_eth_macaddr_get(dev->port_id, &dev->mac);
	}
	ret = rte_eth_dev_start(dev->port_id);
	if (ret < 0) {
		RP_LOGT(rp_logtype_port, ERR, "start port %u: %s",
			dev->port_id, rte_strerror(-ret));
		return ret;
	}
	if (dev->kind_ops->start != NULL)
		return dev->kind_ops->start(dev, info);
	return 0;
}

/*
 * The queues of each shard: ethdev queue pair i for shard i; on af_xdp,
 * the interface's receive queues in contiguous ranges (queue 0 is the
 * PMD's, shard 0's), a shard other than 0 sending on its first socket.
 */
static void
port_shard_queues(struct rp_dev *dev, bool xdp)
{
	uint32_t ns = dev->nr_shards, nq = 1 + dev->nr_xsk_rxq;

	for (uint32_t i = 0; i < ns; i++) {
		struct rp_shard *sh = &dev->sh[i];
		uint32_t lo = i * nq / ns, hi = (i + 1) * nq / ns;

		if (!xdp) {
			sh->rxq = sh->txq = (uint16_t)i;
			sh->pmd_rxq = true;
			sh->nr_xsk = 0;
		} else if (i == 0) {
			sh->pmd_rxq = true;
			sh->xsk_lo = 0;
			sh->nr_xsk = hi - 1;
		} else {
			sh->pmd_rxq = false;
			sh->xsk_lo = lo - 1;
			sh->nr_xsk = hi - lo;
			sh->xsk_tx = true;
		}
		if (!xdp)
			lo = i, hi = i + 1;
		if (ns > 1 && hi - lo == 1)
			RP_LOGT(rp_logtype_port, INFO,
				"%s: lcore %u serves receive queue %u",
				dev->cfg.device, sh->lcore, lo);
		else if (ns > 1)
			RP_LOGT(rp_logtype_port, INFO,
				"%s: lcore %u serves receive queues %u to %u",
				dev->cfg.device, sh->lcore, lo, hi - 1);
	}
}

int
rp_port_init(struct rp_dev *dev)
{
	struct rte_eth_dev_info info;
	char name[RTE_RING_NAMESIZE];
	uint32_t nq;
	uint16_t neq;			/* ethdev queue pairs */
	bool intr;
	int ret;

	ret = port_open(dev, &info);
	if (ret == 0)
		ret = port_queues(dev, &info, &nq, &neq);
	if (ret == 0)
		ret = port_pool(dev, nq);
	if (ret == 0)
		ret = port_configure(dev, &info, neq, &intr);
	if (ret < 0)
		return ret;
	rp_port_mtu_check(dev, &info);
	ret = port_start(dev, &info);
	if (ret < 0)
		return ret;
	port_shard_queues(dev, dev->kind_ops->umem);
	rp_port_rx_intr_setup(dev, intr, info.if_index);
	if (info.if_index != 0 &&
	    if_indextoname(info.if_index, dev->if_name) != NULL)
		dev->if_sock = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	rp_fault_init(dev);
	snprintf(name, sizeof(name), "rp_loop_%u", dev->id);
	dev->loop_ring = rte_ring_create(name, RP_LOOP_RING, SOCKET_ID_ANY,
					 RING_F_SC_DEQ);
	if (dev->loop_ring == NULL)
		return -ENOMEM;
	return 0;
}

void
rp_port_fini(struct rp_dev *dev)
{
	struct rte_mbuf *m;

	rp_fault_fini(dev);
	if (dev->kind_ops != NULL && dev->kind_ops->fini != NULL)
		dev->kind_ops->fini(dev);
	if (dev->if_sock >= 0) {
		close(dev->if_sock);
		dev->if_sock = -1;
	}
	if (dev->loop_ring != NULL) {
		while (rte_ring_sc_dequeue(dev->loop_ring, (void **)&m) == 0)
			rte_pktmbuf_free(m);
		rte_ring_free(dev->loop_ring);
		dev->loop_ring = NULL;
	}
	if (dev->pool != NULL) {
		rte_eth_dev_stop(dev->port_id);
		rte_eth_dev_close(dev->port_id);
		/*
		 * The pool is not freed: a PMD may still return mbufs to it
		 * from the interrupt thread after close (memif does, when its
		 * peer disconnects), and the pool is named per device, so a
		 * restarted engine finds it again.
		 */
		dev->pool = NULL;
	}
}

/* The frames of the calling shard's queue, and shard 0's loopback. */
static uint16_t
port_ethdev_rx(struct rp_dev *dev, struct rte_mbuf **pkts, uint16_t n)
{
	struct rp_shard *sh = rp_sh(dev);
	uint16_t nb = 0;

	if (sh->idx == 0)
		nb = rte_ring_sc_dequeue_burst(dev->loop_ring, (void **)pkts,
					       n, NULL);
	if (nb < n && sh->pmd_rxq)
		nb += rte_eth_rx_burst(dev->port_id, sh->rxq, pkts + nb, n - nb);
	return nb;
}

/* af_xdp: the same, and the shard's further receive queues. */
static uint16_t
port_af_xdp_rx(struct rp_dev *dev, struct rte_mbuf **pkts, uint16_t n)
{
	struct rp_shard *sh = rp_sh(dev);
	uint16_t nb = 0;

	if (likely(sh->nr_xsk == 0))
		return port_ethdev_rx(dev, pkts, n);
	if (sh->idx == 0)
		nb = rte_ring_sc_dequeue_burst(dev->loop_ring, (void **)pkts,
					       n, NULL);
	/* Further receive queues (rp_xsk_rxq.c): the PMD's first on every
	 * other pass, so that a busy queue starves none. */
	sh->xsk_first = !sh->xsk_first;
	if (sh->xsk_first && nb < n)
		nb += rp_xsk_rxq_rx(dev, sh, pkts + nb, n - nb);
	if (nb < n && sh->pmd_rxq)
		nb += rte_eth_rx_burst(dev->port_id, sh->rxq, pkts + nb,
				       n - nb);
	if (!sh->xsk_first && nb < n)
		nb += rp_xsk_rxq_rx(dev, sh, pkts + nb, n - nb);
	return nb;
}

uint16_t
rp_port_rx(struct rp_dev *dev, struct rte_mbuf **pkts, uint16_t n)
{
	uint16_t nb = dev->ops->rx(dev, pkts, n);

	/* Frames in mbufs another lcore of the pool may have used last. */
	rp_handoff_acquire_bulk(pkts, nb);
	return nb;
}

struct rte_mbuf *
rp_port_alloc(struct rp_dev *dev, uint32_t frame_len, uint8_t **data)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(dev->pool);

	if (m == NULL) {
		rp_stat_inc(dev, RP_STAT_NOMBUF);
		return NULL;
	}
	rp_handoff_acquire(m);	/* from any lcore of the pool: rp_atomic.h */
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
port_flush(struct rp_dev *dev, bool kind_kick, bool kind_xsk)
{
	struct rp_shard *sh = rp_sh(dev);
	bool kick = kind_kick && dev->kick_fd >= 0 && sh->idx == 0;
	bool xsk = kind_xsk && sh->xsk_tx;
	uint16_t sent = 0;
	int tries = 0;

	if (sh->nr_tx == 0)
		return (kick && rp_port_kick(dev)) ||
			(xsk && rp_xsk_tx_pending(dev, sh));
	/* The PMD frees them into the pool the device's lcores share. */
	rp_handoff_release_bulk(sh->tx, sh->nr_tx);
	while (sent < sh->nr_tx && tries++ < 4)
		sent += xsk ?
			rp_xsk_tx(dev, sh, sh->tx + sent, sh->nr_tx - sent) :
			rte_eth_tx_burst(dev->port_id, sh->txq, sh->tx + sent,
					 sh->nr_tx - sent);
	rp_stat_add(dev, RP_STAT_TX_PKTS, sent);
	if (kick && sent != 0)
		sh->kick_pending = true;
	/* Keep what the port refused for the next flush: the requester
	 * holds back while the buffer is half full (rp_port_tx_room). */
	memmove(sh->tx, sh->tx + sent, (sh->nr_tx - sent) * sizeof(sh->tx[0]));
	sh->nr_tx -= sent;
	return sent != 0;
}

static bool
port_ethdev_flush(struct rp_dev *dev)
{
	return port_flush(dev, false, false);
}

static bool
port_af_packet_flush(struct rp_dev *dev)
{
	return port_flush(dev, true, false);
}

static bool
port_af_xdp_flush(struct rp_dev *dev)
{
	return port_flush(dev, false, true);
}

bool
rp_port_flush(struct rp_dev *dev)
{
	return dev->ops->flush(dev);
}

/* A frame to send: through the faults, if any, into the shard's buffer. */
void
rp_port_tx(struct rp_dev *dev, struct rte_mbuf *m)
{
	dev->ops->tx(dev, m);
}

void
rp_port_enqueue(struct rp_dev *dev, struct rte_mbuf *m)
{
	const struct rte_ether_hdr *eth =
		rte_pktmbuf_mtod(m, const struct rte_ether_hdr *);
	struct rp_shard *sh = rp_sh(dev);

	if (rte_is_same_ether_addr(&eth->dst_addr, &dev->mac)) {
		rp_stat_inc(dev, RP_STAT_LOOPBACK);
		/* Any shard sends to ourselves; shard 0 receives. */
		rp_handoff_release(m);
		if (rte_ring_mp_enqueue(dev->loop_ring, m) != 0) {
			rte_pktmbuf_free(m);
			rp_stat_inc(dev, RP_STAT_TX_DROP);
		}
		return;
	}
	if (sh->nr_tx == RP_TX_MAX)
		rp_port_flush(dev);
	if (sh->nr_tx == RP_TX_MAX) {
		/* The port is stuck: the transport will retransmit. */
		rte_pktmbuf_free(m);
		rp_stat_inc(dev, RP_STAT_TX_DROP);
		return;
	}
	sh->tx[sh->nr_tx++] = m;
}

static_assert(sizeof(((struct rp_dev *)0)->if_name) == IF_NAMESIZE,
	      "rp_dev.if_name holds an interface name");

/*
 * Whether the kernel interface behind the port is up and has carrier.
 * net_af_packet (22.11) reports its link up from start to stop whatever
 * the interface does, so the engine asks the interface itself: one ioctl
 * per link poll (10 a second), never per packet.
 */
static bool
port_kernel_link_up(const struct rp_dev *dev)
{
	struct ifreq ifr;

	if (dev->if_sock < 0)
		return true;
	memset(&ifr, 0, sizeof(ifr));
	memcpy(ifr.ifr_name, dev->if_name, sizeof(ifr.ifr_name));
	if (ioctl(dev->if_sock, SIOCGIFFLAGS, &ifr) < 0)
		return true;	/* unknown: trust the PMD */
	return (ifr.ifr_flags & IFF_UP) && (ifr.ifr_flags & IFF_RUNNING);
}

int
rp_port_link_poll(struct rp_dev *dev)
{
	struct rte_eth_link link;

	uint32_t up, was;

	if (rte_eth_link_get_nowait(dev->port_id, &link) != 0)
		return -1;
	up = link.link_status && port_kernel_link_up(dev) ? 1u : 0u;
	was = rp_load_relaxed(&dev->ctl->link_up);	/* ours: one writer */
	rp_store_relaxed(&dev->ctl->link_up, up);
	rp_store_relaxed(&dev->ctl->link_speed, link.link_speed);
	return up != was ? (int)up : -1;
}

/* ---- The kinds of port (rp_port_kind.h) */

/* af_packet copies whole ring frames: its mbufs must hold framesz. */
static uint32_t
af_packet_frame_max(const struct rp_dev *dev, uint32_t frame_max)
{
	const char *fsz = strstr(dev->cfg.device, "framesz=");

	if (fsz != NULL)
		frame_max = RTE_MAX(frame_max, (uint32_t)atoi(fsz + 8));
	return frame_max;
}

static int
af_packet_start(struct rp_dev *dev, const struct rte_eth_dev_info *info)
{
	rp_port_kick_init(dev, info->if_index);
	return 0;
}

static void
af_packet_rx_socks(struct rp_dev *dev, unsigned int ifindex)
{
	unsigned int n = rp_port_ring_sockets(ifindex, dev->rx_sock,
					      RP_RX_SOCKS);

	dev->nr_rx_sock = RTE_MIN(n, RP_RX_SOCKS);
}

/*
 * af_xdp's mbufs are its umem chunks, and the kernel keeps
 * XDP_PACKET_HEADROOM of each in front of the frame: without it a frame
 * of a full IB MTU with a RETH is dropped by the socket.
 */
static uint32_t
af_xdp_frame_max(const struct rp_dev *dev, uint32_t frame_max)
{
	RTE_SET_USED(dev);
	return frame_max + RP_XDP_PACKET_HEADROOM;
}

static uint32_t
af_xdp_queues(const struct rp_dev *dev, const struct rte_eth_dev_info *info)
{
	return rp_xdp_port_queues(dev, info->if_index);
}

static int
af_xdp_prepare(struct rp_dev *dev, const struct rte_eth_dev_info *info)
{
	return rp_xdp_port_prepare(dev, info->if_index);
}

static int
af_xdp_start(struct rp_dev *dev, const struct rte_eth_dev_info *info)
{
	return rp_xdp_port_start(dev, info->if_index);
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
