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

#include <rte_ether.h>
#include <rte_mbuf.h>

#include "rocepmd.h"
#include "rp_xdp.h"

struct rp_dev;
struct rp_shard;
struct rp_xsk_rxq;

#define RP_BURST	32u
#define RP_TX_MAX	64u
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
 * kind, chosen once at port start and kept in rp_dev.kind_ops.  rp_dev.ops
 * is the one the frames take: the kind's, or the fault injection's that
 * wraps it (rp_port_fault.c).  A pass calls through it once a burst (rx,
 * flush), and once a frame sent (tx).  Start-up hooks may be NULL.
 */
struct rte_eth_dev_info;
struct rp_port_ops {
	const char *name;
	/* rp_port_init, in this order */
	uint32_t (*frame_max)(const struct rp_dev *dev, uint32_t frame_max);
	uint32_t (*queues)(const struct rp_dev *dev,
			   const struct rte_eth_dev_info *info);
	int (*prepare)(struct rp_dev *dev, const struct rte_eth_dev_info *info);
	int (*start)(struct rp_dev *dev, const struct rte_eth_dev_info *info);
	/* sockets readable while frames wait, for a port without RX
	 * interrupt: into dev->rx_sock */
	void (*rx_socks)(struct rp_dev *dev, unsigned int ifindex);
	void (*fini)(struct rp_dev *dev);
	/* Frames: a burst in, a frame out, the frames out to the port */
	uint16_t (*rx)(struct rp_dev *dev, struct rte_mbuf **pkts, uint16_t n);
	void (*tx)(struct rp_dev *dev, struct rte_mbuf *m);
	bool (*flush)(struct rp_dev *dev);
	/* af_xdp: the mbufs are the umem (packed, one piece), the interface's
	 * receive queues are the lcores' (rp_shard_queues) */
	bool umem;
	/* the PMD's reported frame limits are not its own (af_packet) */
	bool no_pmd_mtu;
	/* frames wait in it besides the shard's buffer (faults): flush on
	 * every pass */
	bool holds;
	const char *queues_hint;	/* on too few queue pairs */
};

/* ---- rp_port.c */
int rp_port_init(struct rp_dev *dev);
void rp_port_fini(struct rp_dev *dev);
uint16_t rp_port_rx(struct rp_dev *dev, struct rte_mbuf **pkts, uint16_t n);
void rp_port_tx(struct rp_dev *dev, struct rte_mbuf *m);
void rp_port_enqueue(struct rp_dev *dev, struct rte_mbuf *m);
bool rp_port_flush(struct rp_dev *dev);

/* ---- rp_port_fault.c */
void rp_fault_init(struct rp_dev *dev);
void rp_fault_fini(struct rp_dev *dev);

/* ---- rp_port_fds.c */
unsigned int rp_port_ring_sockets(unsigned int ifindex, int *fds,
				  unsigned int max);
/* The process's fds that `match`: up to max into fds; how many in all. */
unsigned int rp_port_fds(bool (*match)(int fd, const void *arg),
			 const void *arg, int *fds, unsigned int max);

/* ---- rp_port_kick.c */
void rp_port_kick_init(struct rp_dev *dev, unsigned int ifindex);
bool rp_port_kick(struct rp_dev *dev);

/* The link's state into the control block: 1 it came up, 0 it went
 * down, -1 no change. */
int rp_port_link_poll(struct rp_dev *dev);
/* Most descriptors a device adds to an idle lcore's wait */
#define RP_PORT_WAIT_FDS	(1u + RP_XDP_MAX_QUEUES)
struct pollfd;
unsigned int rp_port_wait_fds(const struct rp_dev *dev, struct pollfd *pfd,
			      unsigned int max);
void rp_port_rx_intr_enable(struct rp_dev *dev);
void rp_port_rx_intr_disable(struct rp_dev *dev);
struct rte_mbuf *rp_port_alloc(struct rp_dev *dev, uint32_t frame_len,
			       uint8_t **data);

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
int rp_xsk_rxq_open(struct rp_dev *dev, const char *ifname, int xsks_map_fd,
		    uint32_t nr_queues);
uint16_t rp_xsk_rxq_rx(struct rp_dev *dev, struct rp_shard *sh,
		       struct rte_mbuf **pkts, uint16_t n);
uint16_t rp_xsk_tx(struct rp_dev *dev, struct rp_shard *sh,
		   struct rte_mbuf **m, uint16_t n);
bool rp_xsk_tx_pending(struct rp_dev *dev, struct rp_shard *sh);
void rp_xsk_rxq_stats(const struct rp_dev *dev, struct xdp_statistics *st);
unsigned int rp_xsk_rxq_fds(const struct rp_dev *dev, int *fds,
			    unsigned int max);
void rp_xsk_rxq_close(struct rp_dev *dev, int xsks_map_fd);

/* ---- rp_xdp_port.c (af_xdp ports only) */
uint32_t rp_xdp_port_queues(const struct rp_dev *dev, uint32_t ifindex);
int rp_xdp_port_prepare(struct rp_dev *dev, uint32_t ifindex);
int rp_xdp_port_start(struct rp_dev *dev, uint32_t ifindex);
void rp_xdp_port_fini(struct rp_dev *dev);
void rp_xdp_port_poll(struct rp_dev *dev);
void rp_xdp_port_addrs(struct rp_dev *dev);
void rp_xdp_port_group(struct rp_dev *dev, const uint8_t gid[16], bool add);
void rp_xdp_port_addrs_sync(struct rp_dev *dev, const uint8_t (*old)[16]);

#endif /* _RP_PORT_H_ */
