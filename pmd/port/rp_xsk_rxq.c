/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Receive queues of an af_xdp port beyond the PMD's (guides/xdp).  A NIC
 * with RSS spreads RoCEv2 over its receive queues by the peer's UDP source
 * port, and the kernel hands a frame redirected by the XDP program only to
 * an AF_XDP socket bound to the queue it arrived on.  DPDK 22.11's af_xdp
 * PMD opens one socket per queue only on interfaces that report combined
 * channels (not veth, not every NIC), and its libxdp refuses a second port
 * on an interface whose program is not a libxdp dispatcher.  So the PMD
 * serves queue 0 (receive and transmit) and the engine opens, with
 * libxdp's xsk API, a receive-only socket on each other queue, puts it in
 * the program's xsks_map, and polls it on the device's lcore.
 *
 * Each socket's umem is the port's mbuf pool itself, as the PMD's is (one
 * piece of memory, objects back to back, rp_port.c): a frame lands in an
 * mbuf of the pool, which the engine frees as it frees any received frame,
 * and which may even leave again through the PMD's queue.
 */

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <rte_mbuf.h>
#include <rte_mempool.h>

#include <bpf/bpf.h>
#include <xdp/xsk.h>

#include "rp_atomic.h"
#include "rp_log.h"
#include "rp_port.h"

#define RP_SOL_XDP	283		/* SOL_XDP, which older libcs lack */

struct rp_xsk_rxq {
	uint32_t queue;
	int fd;
	struct xsk_umem *umem;
	struct xsk_socket *xsk;
	struct xsk_ring_prod fq;
	struct xsk_ring_cons cq;	/* frames sent, back to the pool */
	struct xsk_ring_cons rx;
	struct xsk_ring_prod tx;	/* a shard's own transmit queue */
	uint32_t posted;		/* mbufs in the fill ring or beyond */
	uint32_t tx_out;		/* mbufs in the tx ring or beyond */
};

/* Where the pool's memory starts (page aligned), as the umem sees it. */
static uint8_t *
pool_base(const struct rte_mempool *mp, uint64_t *align)
{
	const struct rte_mempool_memhdr *mh = STAILQ_FIRST(&mp->mem_list);
	uintptr_t a = (uintptr_t)mh->addr;
	uintptr_t b = a & ~((uintptr_t)getpagesize() - 1);

	*align = a - b;
	return (uint8_t *)b;
}

/* An mbuf's umem address: the start of its mempool object. */
static inline uint64_t
mbuf_addr(const struct rp_port *p, const struct rte_mbuf *m)
{
	return (uint64_t)((uintptr_t)m - (uintptr_t)p->xsk_base -
			  p->pool->header_size);
}

/* Give the kernel up to want more buffers to fill. */
static void
fq_refill(const struct rp_port *p, struct rp_xsk_rxq *q, uint32_t want,
	  uint64_t *stats)
{
	struct rte_mbuf *m[RP_BURST];
	uint32_t idx;

	while (want != 0) {
		uint32_t n = RTE_MIN(want, (uint32_t)RP_BURST);

		if (rte_pktmbuf_alloc_bulk(p->pool, m, n) != 0) {
			rp_stats_inc(stats, RP_STAT_NOMBUF);
			return;
		}
		if (xsk_ring_prod__reserve(&q->fq, n, &idx) != n) {
			rte_pktmbuf_free_bulk(m, n);
			return;
		}
		for (uint32_t i = 0; i < n; i++)
			*xsk_ring_prod__fill_addr(&q->fq, idx + i) =
				mbuf_addr(p, m[i]);
		xsk_ring_prod__submit(&q->fq, n);
		q->posted += n;
		want -= n;
	}
}

/* The mbuf whose mempool object starts at umem address addr. */
static inline struct rte_mbuf *
addr_mbuf(const struct rp_port *p, uint64_t addr)
{
	return (struct rte_mbuf *)(void *)(p->xsk_base + addr +
					   p->pool->header_size);
}

/* The mbuf of a received descriptor, its data where the kernel put it. */
static inline struct rte_mbuf *
desc_mbuf(const struct rp_port *p, const struct xdp_desc *d)
{
	uint64_t off = xsk_umem__extract_offset(d->addr);
	struct rte_mbuf *m = addr_mbuf(p, xsk_umem__extract_addr(d->addr));

	m->data_off = (uint16_t)(off - sizeof(struct rte_mbuf) -
				 rte_pktmbuf_priv_size(p->pool) -
				 p->pool->header_size);
	m->data_len = (uint16_t)d->len;
	m->pkt_len = d->len;
	m->port = p->port_id;
	return m;
}

static uint16_t
rxq_burst(const struct rp_port *p, struct rp_xsk_rxq *q, struct rte_mbuf **pkts,
	  uint16_t n, uint64_t *refill_stats)
{
	uint32_t idx, got;

	got = xsk_ring_cons__peek(&q->rx, n, &idx);
	for (uint32_t i = 0; i < got; i++)
		pkts[i] = desc_mbuf(p, xsk_ring_cons__rx_desc(&q->rx, idx + i));
	if (got != 0)
		xsk_ring_cons__release(&q->rx, got);
	q->posted -= got;
	if (refill_stats == NULL)
		return (uint16_t)got;
	if (q->posted < p->xsk_fill / 2)
		fq_refill(p, q, p->xsk_fill - q->posted, refill_stats);
	/* The kernel asks for a kick only when it ran out of buffers. */
	if (got == 0 && xsk_ring_prod__needs_wakeup(&q->fq))
		(void)recvfrom(q->fd, NULL, 0, MSG_DONTWAIT, NULL, NULL);
	return (uint16_t)got;
}

/* The queues of pq (port_shard_queues shares them out). */
uint16_t
rp_xsk_rxq_rx(struct rp_port_q *pq, struct rte_mbuf **pkts,
	      uint16_t n)
{
	uint16_t nb = 0;

	/* A different queue first on each pass: none starves another. */
	for (uint32_t k = 0; k < pq->nr_xsk && nb < n; k++) {
		uint32_t i = pq->xsk_lo + (pq->xsk_turn + k) % pq->nr_xsk;

		nb += rxq_burst(pq->port, &pq->port->xsk_rxq[i], pkts + nb,
				n - nb, pq->stats);
	}
	if (pq->nr_xsk != 0)
		pq->xsk_turn = (pq->xsk_turn + 1) % pq->nr_xsk;
	if (nb != 0)
		rp_stats_add(pq->stats, RP_STAT_RX_XSK_QUEUES, nb);
	return nb;
}

/* Frames the kernel has sent from q: their mbufs back to the pool. */
static void
tx_reap(const struct rp_port *p, struct rp_xsk_rxq *q)
{
	uint32_t idx, done;

	done = xsk_ring_cons__peek(&q->cq, q->tx_out, &idx);
	for (uint32_t i = 0; i < done; i++)
		rte_pktmbuf_free(addr_mbuf(p, xsk_umem__extract_addr(
				*xsk_ring_cons__comp_addr(&q->cq, idx + i))));
	if (done != 0)
		xsk_ring_cons__release(&q->cq, done);
	q->tx_out -= done;
}

/*
 * Copy mode sends in the system call, at most 32 frames per call
 * (the kernel's TX_BATCH_SIZE): call until the ring is taken, or the
 * kernel says it is busy (the next flush tries again).  A NIC in zero-copy
 * mode asks for the call only when it sleeps.
 */
static void
tx_kick(struct rp_xsk_rxq *q)
{
	for (int i = 0; i < 8 && xsk_ring_prod__needs_wakeup(&q->tx); i++) {
		if (sendto(q->fd, NULL, 0, MSG_DONTWAIT, NULL, 0) < 0 &&
		    errno != EAGAIN && errno != EBUSY && errno != ENOBUFS)
			break;
		if (rp_load_acquire(q->tx.consumer) == q->tx.cached_prod)
			break;
	}
}

/*
 * A shard other than 0 sends on the socket of its first queue: the PMD
 * has one transmit queue, which is shard 0's.  An mbuf of the pool is a
 * umem chunk already (no copy); the descriptor carries the offset of its
 * data in the upper bits, as unaligned mode wants, so that the address
 * the completion ring returns names the mbuf again.
 */
uint16_t
rp_xsk_tx(struct rp_port_q *pq, struct rte_mbuf **m,
	  uint16_t n)
{
	const struct rp_port *p = pq->port;
	struct rp_xsk_rxq *q = &p->xsk_rxq[pq->xsk_lo];
	uint32_t idx, k;

	tx_reap(p, q);
	n = (uint16_t)RTE_MIN((uint32_t)n, p->xsk_fill - q->tx_out);
	if (n == 0 || xsk_ring_prod__reserve(&q->tx, n, &idx) != n)
		return 0;
	for (k = 0; k < n; k++) {
		struct xdp_desc *d = xsk_ring_prod__tx_desc(&q->tx, idx + k);
		uint64_t obj = mbuf_addr(p, m[k]);
		uint64_t off = (uint64_t)(rte_pktmbuf_mtod(m[k], uint8_t *) -
					  p->xsk_base) - obj;

		/* Built by the engine in one segment (rp_port_alloc). */
		d->addr = obj | off << XSK_UNALIGNED_BUF_OFFSET_SHIFT;
		d->len = rte_pktmbuf_data_len(m[k]);
	}
	xsk_ring_prod__submit(&q->tx, n);
	q->tx_out += n;
	tx_kick(q);
	return n;
}

/*
 * Frames still in a shard's transmit ring, which the kernel has not taken:
 * kick it again (the flush calls this when it has nothing new).  Whether
 * any were left.
 */
bool
rp_xsk_tx_pending(struct rp_port_q *pq)
{
	const struct rp_port *p = pq->port;
	struct rp_xsk_rxq *q = &p->xsk_rxq[pq->xsk_lo];

	if (q->tx_out == 0)
		return false;
	tx_reap(p, q);
	if (rp_load_acquire(q->tx.consumer) == q->tx.cached_prod)
		return false;
	tx_kick(q);
	return true;
}

static int
rxq_open(struct rp_port *p, struct rp_xsk_rxq *q, const char *ifname,
	 int xsks_map_fd)
{
	struct rte_mempool *mp = p->pool;
	struct xsk_umem_config uc = {
		.fill_size = p->xsk_fill,
		.comp_size = p->xsk_fill,
		.frame_size = rte_mempool_calc_obj_size(mp->elt_size, mp->flags,
							NULL),
		.frame_headroom = mp->header_size + sizeof(struct rte_mbuf) +
			rte_pktmbuf_priv_size(mp) + RTE_PKTMBUF_HEADROOM,
		.flags = XDP_UMEM_UNALIGNED_CHUNK_FLAG,
	};
	struct xsk_socket_config sc = {
		.rx_size = p->xsk_fill,
		.tx_size = p->xsk_fill,
		/* The program is rocepmd's, attached by the PMD. */
		.libxdp_flags = XSK_LIBXDP_FLAGS__INHIBIT_PROG_LOAD,
		.bind_flags = XDP_USE_NEED_WAKEUP,
	};
	uint64_t align;
	uint8_t *base = pool_base(mp, &align);
	uint64_t size = (uint64_t)mp->populated_size * uc.frame_size + align;
	int ret;

	p->xsk_base = base;
	ret = xsk_umem__create(&q->umem, base, size, &q->fq, &q->cq, &uc);
	if (ret != 0)
		return ret;
	ret = xsk_socket__create(&q->xsk, ifname, q->queue, q->umem, &q->rx,
				 &q->tx, &sc);
	if (ret != 0) {
		/* a new umem for the next try (rp_xsk_rxq_open()) */
		xsk_umem__delete(q->umem);
		q->umem = NULL;
		q->xsk = NULL;
		return ret;
	}
	q->fd = xsk_socket__fd(q->xsk);
	fq_refill(p, q, p->xsk_fill, p->q[0]->stats);
	if (q->posted == 0)
		return -ENOMEM;
	if (bpf_map_update_elem(xsks_map_fd, &q->queue, &q->fd, BPF_ANY) != 0)
		return -errno;
	return 0;
}

int
rp_xsk_rxq_open(struct rp_port *p, const char *ifname, int xsks_map_fd,
		uint32_t nr_queues)
{
	if (nr_queues <= 1)
		return 0;
	p->xsk_fill = rp_xsk_fill(nr_queues);
	p->xsk_rxq = calloc(nr_queues - 1, sizeof(*p->xsk_rxq));
	if (p->xsk_rxq == NULL)
		return -ENOMEM;
	for (uint32_t i = 0; i < nr_queues - 1; i++) {
		struct rp_xsk_rxq *q = &p->xsk_rxq[i];
		int ret;

		unsigned int ms = RP_XSK_WAIT_FIRST_MS, waited = 0;

		q->queue = i + 1;
		q->fd = -1;
		p->nr_xsk_rxq = i + 1;	/* closed by rp_xsk_rxq_close() */
		/* A queue a closed socket still holds (rp_port.c): again,
		 * after a wait that doubles. */
		while ((ret = rxq_open(p, q, ifname, xsks_map_fd)) == -EBUSY &&
		       q->umem == NULL && rp_xsk_wait(&ms, &waited))
			rp_stats_inc(p->q[0]->stats, RP_STAT_XSK_QUEUE_WAIT);
		if (waited != 0 && ret == 0)
			RP_LOGT(rp_logtype_port, NOTICE,
				"%s: receive queue %u of %s bound after %u ms (a closed socket held it)",
				p->cfg->device, q->queue, ifname, waited);
		if (ret < 0) {
			RP_LOGT(rp_logtype_port, ERR,
				"%s: AF_XDP socket on receive queue %u of %s: %s",
				p->cfg->device, q->queue, ifname,
				strerror(-ret));
			return ret;
		}
	}
	RP_LOGT(rp_logtype_port, INFO,
		"%s: %s has %u receive queues: queue 0 through the PMD, queues 1 to %u through the engine's own AF_XDP sockets",
		p->cfg->device, ifname, nr_queues, nr_queues - 1);
	return 0;
}

/* The sockets, for an idle lcore's wait: at most max of them. */
unsigned int
rp_xsk_rxq_fds(const struct rp_port *p, int *fds, unsigned int max)
{
	unsigned int n = 0;

	for (uint32_t i = 0; i < p->nr_xsk_rxq && n < max; i++)
		if (p->xsk_rxq[i].fd >= 0)
			fds[n++] = p->xsk_rxq[i].fd;
	return n;
}

/* Sum of the sockets' XDP_STATISTICS into st. */
void
rp_xsk_rxq_stats(const struct rp_port *p, struct xdp_statistics *st)
{
	for (uint32_t i = 0; i < p->nr_xsk_rxq; i++) {
		struct xdp_statistics s;
		socklen_t len = sizeof(s);

		memset(&s, 0, sizeof(s));
		if (p->xsk_rxq[i].fd < 0 ||
		    getsockopt(p->xsk_rxq[i].fd, RP_SOL_XDP, XDP_STATISTICS,
			       &s, &len) != 0)
			continue;
		st->rx_dropped += s.rx_dropped;
		st->rx_ring_full += s.rx_ring_full;
		st->rx_fill_ring_empty_descs += s.rx_fill_ring_empty_descs;
		st->rx_invalid_descs += s.rx_invalid_descs;
		st->tx_invalid_descs += s.tx_invalid_descs;
	}
}

/*
 * Out of the program's map first, so that no new frame lands; then the
 * frames received and the buffers the kernel did not take go back to the
 * pool before the socket and its rings go.
 */
void
rp_xsk_rxq_close(struct rp_port *p, int xsks_map_fd)
{
	for (uint32_t i = 0; i < p->nr_xsk_rxq; i++) {
		struct rp_xsk_rxq *q = &p->xsk_rxq[i];
		struct rte_mbuf *m[RP_BURST];
		uint32_t n;

		if (xsks_map_fd >= 0)
			(void)bpf_map_delete_elem(xsks_map_fd, &q->queue);
		if (q->xsk != NULL) {
			/* A redirect already under way (softirq, some µs)
			 * still lands: let it. */
			usleep(1000);
			while ((n = rxq_burst(p, q, m, RP_BURST, NULL)) != 0)
				rte_pktmbuf_free_bulk(m, n);
			tx_reap(p, q);
			/* Filled but not yet taken: from the kernel's
			 * consumer index to our producer index. */
			for (uint32_t c = rp_load_acquire(q->fq.consumer);
			     c != q->fq.cached_prod; c++)
				rte_pktmbuf_free(addr_mbuf(p,
					*xsk_ring_prod__fill_addr(&q->fq, c)));
			xsk_socket__delete(q->xsk);
		}
		if (q->umem != NULL)
			(void)xsk_umem__delete(q->umem);
	}
	free(p->xsk_rxq);
	p->xsk_rxq = NULL;
	p->nr_xsk_rxq = 0;
}
