/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The port layer: frames in and out of one ethdev port (generic ethdev,
 * af_packet, af_xdp with rocepmd's XDP program, memif and ring through the
 * generic one), fault injection, kick, extra AF_XDP queues.
 */

#ifndef _RP_PORT_H_
#define _RP_PORT_H_

#include <stdbool.h>
#include <stdint.h>
#include <unistd.h>

#include <rte_ether.h>
#include <rte_mbuf.h>

#include "rocepmd.h"
#include "rp_port_kind.h"
#include "rp_stat.h"
#include "rp_xdp.h"

struct rp_xsk_rxq;
struct rp_port;

#define RP_BURST	32u
#define RP_TX_MAX	64u
/* mbufs a queue takes from its pool at once (rp_port_mbuf()) */
#define RP_PORT_STASH	32u
#define RP_RX_SOCKS	8u		/* af_packet ring sockets (qpairs) */

/*
 * Frames a fault holds back (reorder, delay), per direction: a fixed ring,
 * so the hot path never allocates; a fault that finds it full lets the
 * frame pass.
 */
#define RP_FAULT_HOLD	64u

struct rp_fault_dir {
	const struct rp_fault_rates *rate;
	uint64_t n;			/* eligible frames seen */
	uint32_t nr_held;
	struct {
		struct rte_mbuf *m;	/* NULL: free slot */
		uint64_t until_n;	/* goes once n reaches it, */
		uint64_t until_tsc;	/* or once the TSC does */
	} hold[RP_FAULT_HOLD];
};

/*
 * What differs between kinds of port (rp_port_kind.h): one const table a
 * kind, chosen once at port start and kept in rp_port.kind_ops.
 * rp_port.ops is the one the frames take: the kind's, or the fault
 * injection's that wraps it (rp_port_fault.c).  A pass calls through it
 * once a burst (rx, flush), and once a frame sent (tx).  Start-up hooks
 * may be NULL.
 */
struct rte_eth_dev_info;
struct rp_port_q;
struct rp_port_ops {
	const char *name;
	/* rp_port_init, in this order */
	uint32_t (*frame_max)(const struct rp_port *p, uint32_t frame_max);
	uint32_t (*queues)(const struct rp_port *p,
			   const struct rte_eth_dev_info *info);
	int (*prepare)(struct rp_port *p, const struct rte_eth_dev_info *info);
	int (*start)(struct rp_port *p, const struct rte_eth_dev_info *info);
	/* sockets readable while frames wait, for a port without RX
	 * interrupt: into p->rx_sock */
	void (*rx_socks)(struct rp_port *p, unsigned int ifindex);
	/* the kernel's counters of the port into the device's (frames its
	 * receive ring dropped, its XDP program's verdicts): on the link
	 * poll and once the lcores stopped */
	void (*stats)(struct rp_port *p);
	void (*fini)(struct rp_port *p);
	/* Frames of one shard's queues: a burst in, a frame out, the frames
	 * out to the port */
	uint16_t (*rx)(struct rp_port_q *pq, struct rte_mbuf **pkts,
		       uint16_t n);
	void (*tx)(struct rp_port_q *pq, struct rte_mbuf *m);
	bool (*flush)(struct rp_port_q *pq);
	/* af_xdp: the mbufs are the umem (packed, one piece), the interface's
	 * receive queues are the lcores' (port_shard_queues) */
	bool umem;
	/* the PMD's reported frame limits are not its own (af_packet) */
	bool no_pmd_mtu;
	/* frames wait in it besides the shard's buffer (faults): flush on
	 * every pass */
	bool holds;
	const char *queues_hint;	/* on too few queue pairs */
};

/*
 * One lcore's share of the port (the layers above keep it in the lcore's
 * shard): its queues and the frames it has yet to send.  One writer, that
 * lcore.
 */
struct rp_port_q {
	struct rp_port *port;
	uint32_t idx;			/* 0: also reads the loopback ring */
	uint32_t lcore;
	uint16_t rxq;			/* its ethdev queue pair */
	uint16_t txq;
	/* af_xdp: the engine's further receive queues it reads
	 * (port->xsk_rxq[xsk_lo .. xsk_lo + nr_xsk)) */
	uint32_t xsk_lo;
	uint32_t nr_xsk;
	uint32_t xsk_turn;		/* which of them is read first */
	bool xsk_first;			/* they before the PMD's queue */
	bool pmd_rxq;			/* it reads an ethdev receive queue */
	bool xsk_tx;			/* it sends on its first AF_XDP socket */
	bool kick_pending;		/* a burst went out since the last
					 * kick that found the ring drained */
	bool tx_ext;			/* tx[] may hold frames whose payload
					 * refers to registered memory */
	uint16_t nr_tx;
	struct rte_mbuf *tx[RP_TX_MAX];
	uint64_t *stats;		/* its lcore's counters (rp_stat.h) */
	/* mbufs taken from the pool in bulk, handed out one at a time by
	 * rp_port_mbuf(): a zero-copy frame takes three */
	uint16_t nr_stash;
	struct rte_mbuf *stash[RP_PORT_STASH];
};

/*
 * One ethdev port and what the engine opened around it.  Written at start
 * and stop; the passes read it and write only their rp_port_q.
 */
struct rp_port {
	unsigned int id;		/* the device's number: names, logs */
	const struct rp_port_cfg *cfg;
	uint32_t mtu;			/* IB MTU: cfg->mtu, or auto's found */
	uint16_t port_id;
	struct rte_mempool *pool;
	struct rte_ring *loop_ring;	/* frames to ourselves: MP, queue 0 reads */
	struct rte_ether_addr mac;
	/* Frames may carry their payload in an external buffer over the
	 * sender's registered memory (rp_port_alloc_ext): requests' when
	 * first sent; READ responses' to every requester with tx_zc_rd,
	 * else to those that take selective NAKs (enum rp_tx_zc) */
	bool tx_zc;
	bool tx_zc_rd;
	uint32_t tx_zc_min;		/* cfg->tx_zero_copy_min */
	/* A memory link with icrc = auto: its frames say RP_BTH_NC, go
	 * without an ICRC toward a peer whose frames say it too, and are
	 * taken unchecked when they say it (enum rp_icrc_mode) */
	bool icrc_nc;
	/* its kind's operations, and the ones frames take (see above) */
	const struct rp_port_ops *kind_ops;
	const struct rp_port_ops *ops;
	/* Fault injection (rp_port_fault.c): [0] transmit, [1] receive */
	struct rp_fault_dir fault[2];
	/* An idle lcore's wake-up (rp_port_wait_fds) */
	bool rx_intr_want;		/* ask the PMD for RX interrupts */
	int rx_intr_fd;			/* RX queue 0 interrupt fd, or -1 */
	/* Without one: af_packet's ring sockets, readable while frames
	 * wait (af_xdp's are xsk_fd and the xsk_rxq's) */
	int rx_sock[RP_RX_SOCKS];
	uint32_t nr_rx_sock;
	/* Kernel interface behind the port (af_packet, af_xdp): its flags
	 * say the link state, which such PMDs do not report. */
	char if_name[16];		/* IF_NAMESIZE */
	int if_sock;			/* socket for its ioctls, or -1 */
	/* af_xdp with rocepmd's XDP program (rp_xdp_port.c): its maps */
	int xdp_addrs_fd;		/* or -1 */
	int xdp_stats_fd;		/* or -1 */
	int xsk_fd;			/* its AF_XDP socket (the PMD's), or -1 */
	int xsks_map_fd;		/* the program's xsks_map, or -1 */
	bool rxq_failed;		/* its receive queue's setup failed
					 * (rp_port.c: af_xdp waits) */
	/* receive queues beyond the PMD's (rp_xsk_rxq.c) */
	struct rp_xsk_rxq *xsk_rxq;
	uint32_t nr_xsk_rxq;
	uint32_t xsk_fill;		/* their fill rings' mbufs each */
	uint8_t *xsk_base;		/* their umem: the pool's memory */
	/* net_af_packet with qdisc_bypass=0 (rp_port_kick.c) */
	int kick_fd;			/* the PMD's packet socket, or -1 */
	/* net_af_packet: its queues' sockets, for PACKET_STATISTICS */
	int afp_sock[RP_RX_SOCKS];
	uint32_t nr_afp_sock;
	/* the lcores' queues (rp_port_add_queue) */
	uint32_t nr_q;
	struct rp_port_q *q[RP_MAX_ENGINE_LCORES];
};

/*
 * af_xdp: how long a receive queue still bound is waited for (the kernel
 * lets a closed AF_XDP socket's queue go from a work queue: rp_port.c),
 * the first wait, doubled at each try.
 */
#define RP_XSK_WAIT_MS		2000u
#define RP_XSK_WAIT_FIRST_MS	10u

/* The next wait of that series, slept: false (no sleep) once it is spent.
 * *ms starts at RP_XSK_WAIT_FIRST_MS, *waited at 0. */
static inline bool
rp_xsk_wait(unsigned int *ms, unsigned int *waited)
{
	if (*waited >= RP_XSK_WAIT_MS)
		return false;
	usleep(*ms * 1000u);
	*waited += *ms;
	*ms *= 2;
	return true;
}

/* ---- rp_port.c */
/* Nothing open yet (rp_port_fini may follow at once). */
void rp_port_setup(struct rp_port *p, unsigned int id,
		   const struct rp_port_cfg *cfg, bool rx_intr);
/* An lcore's queues, before rp_port_init: the port's nr_q-th. */
void rp_port_add_queue(struct rp_port *p, struct rp_port_q *pq,
		       uint32_t lcore, uint64_t *stats);
int rp_port_init(struct rp_port *p);
void rp_port_fini(struct rp_port *p);
uint16_t rp_port_rx(struct rp_port_q *pq, struct rte_mbuf **pkts,
		    uint16_t n);
void rp_port_tx(struct rp_port_q *pq, struct rte_mbuf *m);
void rp_port_enqueue(struct rp_port_q *pq, struct rte_mbuf *m);
bool rp_port_flush(struct rp_port_q *pq);
/* The kind's pools are its umem (af_xdp): rp_port_pool_create(packed). */
bool rp_port_kind_umem(enum rp_port_kind kind);
/* The port's IB MTU (p->mtu): the configuration's, or what mtu = auto
 * finds; before anything of the device needs it. */
int rp_port_mtu_find(struct rp_port *p);
/* ---- rp_port_mtu.c */
/* At start, for mtu = auto: the largest IB MTU the port carries. */
uint32_t rp_port_mtu_auto(const struct rp_port *p,
			  const struct rte_eth_dev_info *info);
/* At start: frames of the IB MTU pass the port, or a warning says what
 * to change (a port of the engine's own is raised). */
void rp_port_mtu_check(struct rp_port *p,
		       const struct rte_eth_dev_info *info);
/* ---- rp_port_pool.c */
/* linux/bpf.h's XDP_PACKET_HEADROOM */
#define RP_XDP_PACKET_HEADROOM	256u
struct rte_mempool *rp_port_pool_create(const char *name, uint32_t nb,
					uint16_t room, int socket,
					bool packed);
/* ---- rp_port_zc.c */
bool rp_port_tx_zc(const struct rp_port *p,
		   const struct rte_eth_dev_info *info);
struct rte_mbuf *rp_port_alloc_ext(struct rp_port_q *pq, const void *buf,
				   uint32_t len);
struct rte_mbuf *rp_port_unshare(struct rp_port_q *pq, struct rte_mbuf *m);
void rp_port_hold(struct rp_port_q *pq);

/* Room to queue a burst of new frames (requester backpressure). */
static inline bool
rp_port_tx_room(const struct rp_port_q *pq)
{
	return pq->nr_tx < RP_TX_MAX / 2;
}

/* ---- rp_port_fault.c */
void rp_fault_init(struct rp_port *p);
void rp_fault_fini(struct rp_port *p);

/* ---- rp_port_fds.c */
unsigned int rp_port_ring_sockets(unsigned int ifindex, int *fds,
				  unsigned int max);
/* The process's fds that `match`: up to max into fds; how many in all. */
unsigned int rp_port_fds(bool (*match)(int fd, const void *arg),
			 const void *arg, int *fds, unsigned int max);

/* ---- rp_port_kick.c */
void rp_port_kick_init(struct rp_port *p, unsigned int ifindex);
bool rp_port_kick(struct rp_port_q *pq);

/* The link's state: 1 up, 0 down, -1 unknown; its speed into *speed. */
int rp_port_link_get(const struct rp_port *p, uint32_t *speed);
/* The port kind's kernel counters into the device's (rp_port_ops.stats). */
void rp_port_stats(struct rp_port *p);
/* Most descriptors a device adds to an idle lcore's wait */
#define RP_PORT_WAIT_FDS	(1u + RP_XDP_MAX_QUEUES)
struct pollfd;
unsigned int rp_port_wait_fds(const struct rp_port *p, struct pollfd *pfd,
			      unsigned int max);
void rp_port_rx_intr_enable(struct rp_port *p);
void rp_port_rx_intr_disable(struct rp_port *p);
struct rte_mbuf *rp_port_alloc(struct rp_port_q *pq, uint32_t frame_len,
			       uint8_t **data);
uint16_t rp_port_restash(struct rp_port_q *pq);

/*
 * A reset mbuf of the queue's pool, or NULL (counted as nombuf).  From
 * the queue's stash, refilled RP_PORT_STASH at a time: one lookup of the
 * thread's mempool cache (and of the lcore id, a TLS call from this
 * library) for many frames, not one per mbuf.
 */
static inline struct rte_mbuf *
rp_port_mbuf(struct rp_port_q *pq)
{
	if (unlikely(pq->nr_stash == 0) && rp_port_restash(pq) == 0)
		return NULL;
	return pq->stash[--pq->nr_stash];
}

/* ---- rp_xsk_rxq.c */
/*
 * mbufs each socket of a further receive queue keeps in its fill ring:
 * 1024, fewer on an interface of many queues, so that all of them take at
 * most RP_XSK_FILL_ALL more mbufs of the pool (a power of two, >= 64).
 */
#define RP_XSK_FILL_ALL	16384u
static inline uint32_t
rp_xsk_fill(uint32_t nr_queues)
{
	uint32_t f = 1024u;

	while (f > 64u && (uint64_t)f * (nr_queues - 1) > RP_XSK_FILL_ALL)
		f /= 2;
	return f;
}
struct xdp_statistics;
int rp_xsk_rxq_open(struct rp_port *p, const char *ifname, int xsks_map_fd,
		    uint32_t nr_queues);
uint16_t rp_xsk_rxq_rx(struct rp_port_q *pq, struct rte_mbuf **pkts,
		       uint16_t n);
uint16_t rp_xsk_tx(struct rp_port_q *pq, struct rte_mbuf **m, uint16_t n);
bool rp_xsk_tx_pending(struct rp_port_q *pq);
void rp_xsk_rxq_stats(const struct rp_port *p, struct xdp_statistics *st);
unsigned int rp_xsk_rxq_fds(const struct rp_port *p, int *fds,
			    unsigned int max);
void rp_xsk_rxq_close(struct rp_port *p, int xsks_map_fd);

/* ---- rp_xdp_port.c (af_xdp ports only) */
uint32_t rp_xdp_port_queues(const struct rp_port *p, uint32_t ifindex);
int rp_xdp_port_prepare(struct rp_port *p, uint32_t ifindex);
int rp_xdp_port_start(struct rp_port *p, uint32_t ifindex);
void rp_xdp_port_fini(struct rp_port *p);
/* The XDP program's and the sockets' counts into queue 0's counters. */
void rp_xdp_port_stats(struct rp_port *p);
/* The program steers RoCEv2 to these addresses (GIDs, groups) to us. */
void rp_xdp_port_addrs(struct rp_port *p, const uint8_t (*gid)[16],
		       uint32_t n);
void rp_xdp_port_group(struct rp_port *p, const uint8_t gid[16], bool add);
/* After a change of the GID table: old's entries that gid (n of them)
 * has not out of the map, gid's in. */
void rp_xdp_port_addrs_sync(struct rp_port *p, const uint8_t (*old)[16],
			    const uint8_t (*gid)[16], uint32_t n);

#endif /* _RP_PORT_H_ */
