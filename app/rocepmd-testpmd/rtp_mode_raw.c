/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * raw: the physical limit of the set-up.  Before the engine takes the
 * ports, the engine lcore of port 0 moves plain UDP frames between port 0
 * and port 1 (back to back): each message is the frames RoCE would send
 * for it, as many and as long (rp_msg_shape(): one per IB MTU of payload
 * with the BTH, extended headers and ICRC of the run's verb as UDP
 * payload), with no transport.
 *   ping-pong: a message from port 0 to port 1, then back; half the round
 *	trip is the one-way latency;
 *   streaming: messages from port 0, received on port 1, for as many
 *	messages as the run (iterations, or duration);
 *   ping-pong across two CPUs (raw_pp2): the same ping-pong with port 1
 *	answered by the main thread on a CPU of its own, as a client and a
 *	server program answer each other; the one thread above has no
 *	second CPU in its path, which no two programs can match.  Only where
 *	the main lcore's CPUs and the engine lcore's are apart.
 * Then the ports are stopped and the engine configures them afresh.
 */

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_ip.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_udp.h>

#include "rtp.h"

#define RAW_BURST	32
#define RAW_UDP_PORT	9	/* discard: nothing answers it */
#define RAW_X_MAX	100000	/* raw_pp2's round trips at most, */
#define RAW_X_SECONDS	0.5	/* and its time */
#define RAW_HDR		(sizeof(struct rte_ether_hdr) + \
			 sizeof(struct rte_ipv4_hdr) + sizeof(struct rte_udp_hdr))

enum { RAW_X_WAIT, RAW_X_RUN, RAW_X_DONE };

struct rtp_raw_result rtp_raw;
bool rtp_raw_last;

struct raw_ctx {
	uint16_t port[2];
	struct rte_mempool *pool;
	uint8_t hdr[2][RAW_HDR];	/* frame headers from port i */
	struct rp_msg_shape shape;	/* a message's frames as RoCE's */
	uint32_t size;
	uint32_t frames;		/* per message */
	uint64_t iters;
	double duration;
	uint64_t *samples;
	uint64_t nb_samples;
	uint64_t stream_msgs;
	uint64_t stream_ticks;
	uint64_t lost;
	int err;
	unsigned int lcore;		/* the stream's */
	/* raw_pp2: RAW_X_* (the pinger's release, the echo's acquire), the
	 * echo's readiness and error; its samples */
	uint32_t x_phase;
	uint32_t x_ready;
	int x_err;
	bool x_on;
	uint64_t *x_samples;
	uint64_t x_nb;
	struct rtp_cpustat cs[2];	/* the CPUs' time, the stream's ends */
	bool cs_ok;
};

/* The CPUs' time at the stream's start (0) or end (1). */
static void
raw_cpustat(struct raw_ctx *c, unsigned int end)
{
	c->cs_ok = (end == 0 || c->cs_ok) &&
		rtp_cpustat_snap(&c->cs[end]) == 0;
}

/* UDP payload of frame i of a message: RoCE's frame less our headers. */
static inline uint32_t
raw_len(const struct raw_ctx *c, uint32_t i)
{
	uint32_t len = i == 0 ? c->shape.first :
		i + 1 == c->frames ? c->shape.last : c->shape.middle;

	return len - RAW_HDR;
}

/* The longest frame of a message. */
static inline uint32_t
raw_frame_max(const struct raw_ctx *c)
{
	uint32_t m = RTE_MAX(c->shape.first, c->shape.last);

	return RTE_MAX(m, c->shape.middle);
}

/* A message's frames shaped as RoCE's for the run's verb (mode). */
static int
raw_shape(struct raw_ctx *c, enum rp_msg_kind kind, uint32_t size,
	  uint32_t mtu)
{
	int ret = rp_msg_shape(kind, size, mtu, &c->shape);

	c->size = size;
	c->frames = c->shape.frames;
	return ret;
}

static void
raw_hdr(struct raw_ctx *c, unsigned int from, const struct rp_config *cfg)
{
	struct rte_ether_hdr *eth = (void *)c->hdr[from];
	struct rte_ipv4_hdr *ip = (void *)(eth + 1);
	struct rte_udp_hdr *udp = (void *)(ip + 1);

	rte_eth_macaddr_get(c->port[from], &eth->src_addr);
	rte_eth_macaddr_get(c->port[!from], &eth->dst_addr);
	eth->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
	memset(ip, 0, sizeof(*ip));
	ip->version_ihl = RTE_IPV4_VHL_DEF;
	ip->time_to_live = 64;
	ip->next_proto_id = IPPROTO_UDP;
	ip->src_addr = cfg->port[from].ipv4;
	ip->dst_addr = cfg->port[!from].ipv4;
	udp->src_port = rte_cpu_to_be_16(RAW_UDP_PORT);
	udp->dst_port = rte_cpu_to_be_16(RAW_UDP_PORT);
}

/*
 * Send nmsg messages' frames from port `from`, UDP source port sport, in
 * bursts that run across messages (as the engine's do): 0, or -ENOBUFS.
 */
static int
raw_tx(struct raw_ctx *c, unsigned int from, uint16_t sport, uint32_t nmsg)
{
	struct rte_mbuf *m[RAW_BURST];
	uint64_t n = (uint64_t)c->frames * nmsg;
	uint64_t i = 0;

	while (i < n) {
		uint32_t b = (uint32_t)RTE_MIN(n - i, (uint64_t)RAW_BURST);
		uint16_t sent = 0;

		if (rte_pktmbuf_alloc_bulk(c->pool, m, b) != 0)
			return -ENOBUFS;
		for (uint32_t k = 0; k < b; k++) {
			uint32_t len = raw_len(c, (uint32_t)((i + k) %
							    c->frames));
			uint8_t *d = rte_pktmbuf_mtod(m[k], uint8_t *);
			struct rte_ipv4_hdr *ip;
			struct rte_udp_hdr *udp;

			memcpy(d, c->hdr[from], RAW_HDR);
			memset(d + RAW_HDR, 0, len);
			ip = (void *)(d + sizeof(struct rte_ether_hdr));
			udp = (void *)(ip + 1);
			ip->total_length = rte_cpu_to_be_16((uint16_t)(len +
				sizeof(*ip) + sizeof(*udp)));
			ip->hdr_checksum = rte_ipv4_cksum(ip);
			udp->src_port = rte_cpu_to_be_16(sport);
			udp->dgram_len = rte_cpu_to_be_16((uint16_t)(len +
				sizeof(*udp)));
			m[k]->data_len = (uint16_t)(RAW_HDR + len);
			m[k]->pkt_len = m[k]->data_len;
		}
		for (uint64_t t = 0; sent < b; t++) {
			sent += rte_eth_tx_burst(c->port[from], 0, m + sent,
						 (uint16_t)(b - sent));
			if (t > 10000000) {
				rte_pktmbuf_free_bulk(m + sent, b - sent);
				fprintf(stderr, "raw: port %u refuses frames\n",
					c->port[from]);
				return -ENOBUFS;
			}
		}
		i += b;
	}
	return 0;
}

/* Receive up to want frames on port `on` (frees them): how many came. */
static uint32_t
raw_recv(struct raw_ctx *c, unsigned int on, uint32_t want)
{
	struct rte_mbuf *m[RAW_BURST];
	uint16_t n = rte_eth_rx_burst(c->port[on], 0, m,
				      (uint16_t)RTE_MIN(want, (uint32_t)RAW_BURST));

	rte_pktmbuf_free_bulk(m, n);
	return n;
}

/* Wait for a message's frames on `on`, 1 s at most. */
static int
raw_recv_msg(struct raw_ctx *c, unsigned int on)
{
	uint64_t limit = rte_get_tsc_cycles() + rte_get_tsc_hz();
	uint32_t got = 0;

	while (got < c->frames) {
		got += raw_recv(c, on, c->frames - got);
		if (rte_get_tsc_cycles() > limit) {
			c->lost += c->frames - got;
			return -ETIMEDOUT;
		}
	}
	return 0;
}

/*
 * raw_pp2, the echo (the main thread): every message's frames received on
 * port 1 answered from port 1 by a message of as many, until RAW_X_DONE.
 */
static void
raw_cross_echo(struct raw_ctx *c)
{
	uint32_t got = 0;

	/* release: the pinger sends once we poll port 1 */
	__atomic_store_n(&c->x_ready, 1, __ATOMIC_RELEASE);
	while (__atomic_load_n(&c->x_phase, __ATOMIC_ACQUIRE) == RAW_X_RUN) {
		got += raw_recv(c, 1, c->frames - got);
		if (got < c->frames)
			continue;
		got = 0;
		if (raw_tx(c, 1, RAW_UDP_PORT, 1) < 0) {
			c->x_err = -ENOBUFS;
			break;
		}
	}
}

/*
 * The measuring lcore's result, the calling (main) thread sleeping
 * meanwhile: rte_eal_wait_lcore() spins, and on a host whose lcores share
 * one CPU it would take half of the sender's.  It answers raw_pp2's pings
 * when that phase comes.
 */
static int
raw_wait(struct raw_ctx *c, unsigned int lcore)
{
	while (rte_eal_get_lcore_state(lcore) == RUNNING) {
		if (c->x_on && __atomic_load_n(&c->x_phase,
					       __ATOMIC_ACQUIRE) == RAW_X_RUN)
			raw_cross_echo(c);
		else
			usleep(1000);
	}
	return rte_eal_wait_lcore(lcore);
}

/*
 * raw_pp2 runs where the calling thread is the main lcore and its CPUs and
 * the measuring lcore's are apart: two threads on one CPU would measure
 * the scheduler's slices.
 */
static bool
raw_cross_possible(unsigned int lcore)
{
	rte_cpuset_t a = rte_lcore_cpuset(rte_get_main_lcore());
	rte_cpuset_t b = rte_lcore_cpuset(lcore), both;

	if (rte_lcore_id() != rte_get_main_lcore())
		return false;
	CPU_AND(&both, &a, &b);
	return CPU_COUNT(&both) == 0 && CPU_COUNT(&a) != 0;
}

/*
 * raw_pp2, the pinger (the measuring lcore): port 1 is the main thread's
 * from RAW_X_RUN to RAW_X_DONE.  n round trips, or the run's duration.
 */
static void
raw_cross_ping(struct raw_ctx *c, uint64_t n)
{
	uint64_t hz = rte_get_tsc_hz(), t_stop, limit;

	/* a frame of the stream that came late must not count as an echo */
	while (raw_recv(c, 1, RAW_BURST) != 0 || raw_recv(c, 0, RAW_BURST) != 0)
		;
	/* release: port 1's queues are the echo's from here on */
	__atomic_store_n(&c->x_phase, RAW_X_RUN, __ATOMIC_RELEASE);
	limit = rte_get_tsc_cycles() + hz;
	while (__atomic_load_n(&c->x_ready, __ATOMIC_ACQUIRE) == 0)
		if (rte_get_tsc_cycles() > limit)
			goto done;	/* no echo: no raw_pp2 row */
	/* a p50 wants thousands, not the run's length */
	t_stop = c->iters != 0 ? UINT64_MAX : rte_get_tsc_cycles() +
		(uint64_t)(RTE_MIN(c->duration, RAW_X_SECONDS) * (double)hz);
	for (uint64_t i = 0; i < n && rte_get_tsc_cycles() < t_stop; i++) {
		uint64_t t = rte_get_tsc_cycles();

		if (raw_tx(c, 0, RAW_UDP_PORT, 1) < 0 ||
		    raw_recv_msg(c, 0) < 0) {
			c->x_err = -EIO;
			break;
		}
		c->x_samples[c->x_nb++] = rte_get_tsc_cycles() - t;
	}
done:
	__atomic_store_n(&c->x_phase, RAW_X_DONE, __ATOMIC_RELEASE);
}

static int
raw_lcore(void *arg)
{
	struct raw_ctx *c = arg;
	uint64_t hz = rte_get_tsc_hz();
	uint64_t n = c->iters != 0 ? c->iters :
		(uint64_t)(c->duration * 1e6);	/* bounded by time below */
	uint64_t t_stop = c->iters != 0 ? UINT64_MAX :
		rte_get_tsc_cycles() + (uint64_t)(c->duration * (double)hz);
	uint64_t sent = 0, recvd = 0, t0, t_last = 0, got;

	/*
	 * Receive on both ports for a while first: a memif client posts its
	 * receive buffers, into which the server transmits, when it polls.
	 */
	t0 = rte_get_tsc_cycles();
	while (rte_get_tsc_cycles() - t0 < hz / 100) {
		raw_recv(c, 0, RAW_BURST);
		raw_recv(c, 1, RAW_BURST);
	}

	/* Ping-pong. */
	for (uint64_t i = 0; i < n && rte_get_tsc_cycles() < t_stop; i++) {
		uint64_t t = rte_get_tsc_cycles();

		if (raw_tx(c, 0, RAW_UDP_PORT, 1) < 0 || raw_recv_msg(c, 1) < 0 ||
		    raw_tx(c, 1, RAW_UDP_PORT, 1) < 0 || raw_recv_msg(c, 0) < 0) {
			c->err = -EIO;
			return -EIO;
		}
		if (c->nb_samples < RTP_MAX_SAMPLES)
			c->samples[c->nb_samples++] = rte_get_tsc_cycles() - t;
	}
	/* Streaming: keep at most a ring's worth of frames in flight. */
	raw_cpustat(c, 0);
	t0 = rte_get_tsc_cycles();
	t_stop = c->iters != 0 ? UINT64_MAX :
		t0 + (uint64_t)(c->duration * (double)hz);
	while ((sent < n && rte_get_tsc_cycles() < t_stop) ||
	       recvd < sent * c->frames) {
		if (sent < n && rte_get_tsc_cycles() < t_stop &&
		    sent * c->frames - recvd < 512) {
			if (raw_tx(c, 0, RAW_UDP_PORT, 1) < 0) {
				c->err = -ENOBUFS;
				return -ENOBUFS;
			}
			sent++;
		}
		got = raw_recv(c, 1, RAW_BURST);
		recvd += got;
		/* A second without a frame once all are sent: the rest is
		 * lost (a run of --iters has no end time to wait past). */
		if (got != 0 || sent < n)
			t_last = rte_get_tsc_cycles();
		else if (rte_get_tsc_cycles() - t_last > hz ||
			 (t_stop != UINT64_MAX &&
			  rte_get_tsc_cycles() > t_stop + hz))
			break;
	}
	c->stream_ticks = rte_get_tsc_cycles() - t0;
	raw_cpustat(c, 1);
	c->stream_msgs = recvd / c->frames;
	c->lost += sent * c->frames - recvd;
	if (c->x_on)
		raw_cross_ping(c, RTE_MIN(c->nb_samples, (uint64_t)RAW_X_MAX));
	return 0;
}

static bool
raw_af_xdp(uint16_t p)
{
	struct rte_eth_dev_info info;

	return rte_eth_dev_info_get(p, &info) == 0 &&
		info.driver_name != NULL &&
		strcmp(info.driver_name, "net_af_xdp") == 0;
}

static int
raw_port_start(struct raw_ctx *c, unsigned int i)
{
	struct rte_eth_conf conf = { 0 };
	uint16_t p = c->port[i];
	int ret;

	/* DPDK's af_xdp PMD keeps a queue's AF_XDP socket until the port
	 * closes: the engine could not set the queue up again after us. */
	if (!rtp_raw_last && raw_af_xdp(p)) {
		fprintf(stderr, "raw: port %u is af_xdp, whose queue the engine could not set up after the raw mode (the PMD keeps its AF_XDP socket until the port closes): measure raw with --raw-only, or on an af_packet or memif port\n",
			p);
		return -ENOTSUP;
	}
	ret = rte_eth_dev_configure(p, 1, 1, &conf);
	if (ret == 0)
		ret = rte_eth_rx_queue_setup(p, 0, 1024,
					     rte_eth_dev_socket_id(p), NULL,
					     c->pool);
	if (ret == 0)
		ret = rte_eth_tx_queue_setup(p, 0, 1024,
					     rte_eth_dev_socket_id(p), NULL);
	if (ret == 0)
		ret = rte_eth_dev_start(p);
	return ret;
}

/* Fill rtp_raw from a measurement's samples and stream. */
static void
raw_result(struct raw_ctx *c)
{
	rtp_raw.valid = true;
	rtp_raw.size = c->size;
	rtp_raw.frames_per_msg = c->frames;
	rtp_raw.pp_msgs = (double)c->nb_samples;
	rtp_lat_fill(&rtp_raw.pp, c->samples, c->nb_samples, 2);
	if (c->stream_ticks != 0) {
		double s = rtp_tsc_us(c->stream_ticks) / 1e6;

		rtp_raw.msg_rate = (double)c->stream_msgs / s;
		rtp_raw.gbps = (double)c->stream_msgs * c->size * 8 / s / 1e9;
	}
	rtp_raw.lost = c->lost;
	if (c->x_nb != 0 && c->x_err == 0) {
		rte_cpuset_t a = rte_lcore_cpuset(c->lcore);
		rte_cpuset_t b = rte_lcore_cpuset(rte_get_main_lcore());
		char sa[24], sb[24];

		rtp_cpus_fmt(&a, sa, sizeof(sa));
		rtp_cpus_fmt(&b, sb, sizeof(sb));
		rtp_raw.x_valid = true;
		rtp_raw.x_msgs = (double)c->x_nb;
		rtp_lat_fill(&rtp_raw.x, c->x_samples, c->x_nb, 2);
		snprintf(rtp_raw.x_cpus, sizeof(rtp_raw.x_cpus),
			 "ping=%s,echo=%s", sa, sb);
	} else if (c->x_on) {
		fprintf(stderr, "raw: the ping-pong across two CPUs: %s\n",
			c->x_err != 0 ? strerror(-c->x_err) :
			"the main thread did not answer");
	}
	if (c->cs_ok) {
		rte_cpuset_t cpus = rte_lcore_cpuset(c->lcore);

		rtp_raw.has_cpu = rtp_cpustat_share(&c->cs[0], &c->cs[1],
			&cpus, &rtp_raw.cpu_busy, &rtp_raw.cpu_kernel);
	}
}

/* Both ends must be started before either link comes up (memif). */
static int
raw_link_wait(uint16_t p)
{
	struct rte_eth_link link;

	for (int t = 0; t < 500; t++) {
		if (rte_eth_link_get_nowait(p, &link) == 0 &&
		    link.link_status == RTE_ETH_LINK_UP)
			return 0;
		rte_delay_ms(10);
	}
	return -ENOLINK;
}

int
rtp_raw_measure(const struct rp_config *cfg, const struct rtp_settings *set,
		enum rp_msg_kind kind)
{
	struct raw_ctx c;
	/* mtu = auto: what the ports carry, as the engine will find it */
	uint32_t ib_mtu = RTE_MIN(rp_port_mtu(&cfg->port[0]),
				  rp_port_mtu(&cfg->port[1]));
	unsigned int lcore = cfg->port[0].lcore;
	int ret;

	memset(&rtp_raw, 0, sizeof(rtp_raw));
	if (cfg->nb_ports < 2)
		return -ENODEV;
	memset(&c, 0, sizeof(c));
	for (unsigned int i = 0; i < 2; i++)
		if (rte_eth_dev_get_port_by_name(cfg->port[i].ethdev_name,
						 &c.port[i]) != 0) {
			fprintf(stderr, "raw: no DPDK port %s\n",
				cfg->port[i].ethdev_name);
			return -ENODEV;
		}
	if (raw_shape(&c, kind, set->size, ib_mtu) < 0)
		return -EINVAL;
	c.pool = rp_port_pool("rtp_raw", c.port[0], 4095, raw_frame_max(&c));
	if (c.pool == NULL)
		return -ENOMEM;
	c.iters = set->iters;
	c.duration = set->duration;
	c.lcore = lcore;
	c.samples = malloc(sizeof(uint64_t) * RTP_MAX_SAMPLES);
	if (raw_cross_possible(lcore))
		c.x_samples = malloc(sizeof(uint64_t) * RAW_X_MAX);
	c.x_on = c.x_samples != NULL;
	if (c.samples == NULL) {
		free(c.x_samples);
		rte_mempool_free(c.pool);
		return -ENOMEM;
	}
	ret = raw_port_start(&c, 0);
	if (ret == 0)
		ret = raw_port_start(&c, 1);
	if (ret == 0)
		ret = raw_link_wait(c.port[0]);
	if (ret == 0)
		ret = raw_link_wait(c.port[1]);
	if (ret == 0) {
		raw_hdr(&c, 0, cfg);
		raw_hdr(&c, 1, cfg);
		ret = rte_eal_remote_launch(raw_lcore, &c, lcore);
		if (ret == 0)
			ret = raw_wait(&c, lcore);
	}
	rte_eth_dev_stop(c.port[0]);
	rte_eth_dev_stop(c.port[1]);
	if (ret == 0 && c.nb_samples != 0)
		raw_result(&c);
	free(c.samples);
	free(c.x_samples);
	/* The pool stays: a PMD may still hold its mbufs in a stopped queue. */
	if (ret < 0)
		fprintf(stderr, "raw: %s\n", strerror(-ret));
	return ret;
}

/* ---- two processes: one port each, the ends meeting over TCP ----------- */

/*
 * --server --raw / --client HOST --raw, before either engine starts: the
 * client sends a raw hello (its MAC, address, the run's size and count),
 * the server answers with its own; then the client's engine lcore sends,
 * the server's reflects or counts:
 *   ping-pong frames (UDP source port RAW_PP): every message's frames are
 *	answered by a message of as many frames;
 *   stream frames (RAW_STREAM): a flood, as fast as the client's port
 *	takes them, nothing answered; the server counts them and their
 *	bytes, and times the first and the last.
 * The client then says done over TCP and the server answers with what it
 * counted: the stream's figures are the receiver's (messages whole at the
 * server over the time between its first and last frame), the frames the
 * client sent and the server missed are the loss.  Frames that are not
 * ours (the kernel's, ICMP) are ignored.
 */
#define RAW_PP		9
#define RAW_STREAM	10
#define RAW_MAGIC	0x52505446u	/* "RTPF": the flood's protocol */

struct raw_hello {
	uint32_t magic;
	int32_t status;
	uint32_t size;
	uint32_t mtu;
	uint64_t iters;
	double duration;
	uint8_t mac[6];
	uint8_t pad[2];
	uint32_t ipv4;
	uint32_t kind;			/* enum rp_msg_kind: the frames' shape */
	uint64_t frames;		/* done: stream frames counted, */
	uint64_t bytes;			/* their bytes, */
	uint64_t rx_ns;			/* from the first to the last */
	char msg[64];
};

/* The frame header from us to the peer (index 0 of c->hdr). */
static void
raw_hdr2(struct raw_ctx *c, const uint8_t *peer_mac, uint32_t src,
	 uint32_t dst)
{
	struct rte_ether_hdr *eth = (void *)c->hdr[0];
	struct rte_ipv4_hdr *ip = (void *)(eth + 1);
	struct rte_udp_hdr *udp = (void *)(ip + 1);

	rte_eth_macaddr_get(c->port[0], &eth->src_addr);
	memcpy(&eth->dst_addr, peer_mac, RTE_ETHER_ADDR_LEN);
	eth->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
	memset(ip, 0, sizeof(*ip));
	ip->version_ihl = RTE_IPV4_VHL_DEF;
	ip->time_to_live = 64;
	ip->next_proto_id = IPPROTO_UDP;
	ip->src_addr = src;
	ip->dst_addr = dst;
	udp->dst_port = rte_cpu_to_be_16(RAW_UDP_PORT);
}


/* One frame of ours: its source port (0: not ours). */
static uint16_t
raw_frame(const struct rte_mbuf *m)
{
	const uint8_t *d = rte_pktmbuf_mtod(m, const uint8_t *);
	const struct rte_ether_hdr *eth = (const void *)d;
	const struct rte_ipv4_hdr *ip = (const void *)(eth + 1);
	const struct rte_udp_hdr *udp = (const void *)(ip + 1);

	if (m->data_len < RAW_HDR + 1 ||
	    eth->ether_type != rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4) ||
	    ip->next_proto_id != IPPROTO_UDP ||
	    udp->dst_port != rte_cpu_to_be_16(RAW_UDP_PORT))
		return 0;
	return rte_be_to_cpu_16(udp->src_port);
}

struct raw_two {
	struct raw_ctx c;
	volatile bool stop;		/* server: the client is done */
	uint64_t pp_frames, stream_frames, stream_bytes;
	uint64_t first_tsc, last_tsc;	/* server: of the stream's frames */
	uint64_t sent_frames;
	bool opened;			/* the port was found (stop it) */
};

/* The server's reflector, on its engine lcore until stop. */
static int
raw_reflect_lcore(void *arg)
{
	struct raw_two *r = arg;
	struct raw_ctx *c = &r->c;
	struct rte_mbuf *m[RAW_BURST];

	while (!r->stop && c->err == 0) {
		uint16_t n = rte_eth_rx_burst(c->port[0], 0, m, RAW_BURST);

		uint64_t now = n != 0 ? rte_get_tsc_cycles() : 0;

		for (uint16_t i = 0; i < n; i++) {
			uint16_t sp = raw_frame(m[i]);

			if (sp == RAW_PP && ++r->pp_frames % c->frames == 0) {
				c->err = raw_tx(c, 0, RAW_PP, 1);
			} else if (sp == RAW_STREAM) {
				if (r->stream_frames++ == 0)
					r->first_tsc = now;
				r->last_tsc = now;
				r->stream_bytes += m[i]->pkt_len;
			}
		}
		rte_pktmbuf_free_bulk(m, n);
	}
	return c->err;
}

/* Frames of source port sport: how many came. */
static uint32_t
raw_take(struct raw_two *r, uint16_t sport)
{
	struct rte_mbuf *m[RAW_BURST];
	uint16_t n = rte_eth_rx_burst(r->c.port[0], 0, m, RAW_BURST);
	uint32_t got = 0;

	for (uint16_t i = 0; i < n; i++)
		got += raw_frame(m[i]) == sport;
	rte_pktmbuf_free_bulk(m, n);
	return got;
}

/* The client's measurement, on its engine lcore. */
static int
raw_client_lcore(void *arg)
{
	struct raw_two *r = arg;
	struct raw_ctx *c = &r->c;
	uint64_t hz = rte_get_tsc_hz();
	uint64_t n = c->iters != 0 ? c->iters : (uint64_t)(c->duration * 1e6);
	uint64_t t_stop = c->iters != 0 ? UINT64_MAX :
		rte_get_tsc_cycles() + (uint64_t)(c->duration * (double)hz);
	uint64_t sent = 0, t0;

	for (uint64_t i = 0; i < n && rte_get_tsc_cycles() < t_stop; i++) {
		uint64_t t = rte_get_tsc_cycles(), limit = t + hz;
		uint32_t got = 0;

		if (raw_tx(c, 0, RAW_PP, 1) < 0)
			return c->err = -ENOBUFS;
		while (got < c->frames) {
			got += raw_take(r, RAW_PP);
			if (rte_get_tsc_cycles() > limit) {
				c->lost += c->frames - got;
				return c->err = -ETIMEDOUT;
			}
		}
		if (c->nb_samples < RTP_MAX_SAMPLES)
			c->samples[c->nb_samples++] = rte_get_tsc_cycles() - t;
	}
	/* The flood: as fast as the port takes frames, nothing awaited. */
	raw_cpustat(c, 0);
	t0 = rte_get_tsc_cycles();
	t_stop = c->iters != 0 ? UINT64_MAX :
		t0 + (uint64_t)(c->duration * (double)hz);
	while (sent < n && rte_get_tsc_cycles() < t_stop) {
		/* a burst's worth of messages (one, if it has more frames) */
		uint32_t per = c->frames < RAW_BURST ? RAW_BURST / c->frames : 1;
		uint32_t b = (uint32_t)RTE_MIN(n - sent, (uint64_t)per);

		if (raw_tx(c, 0, RAW_STREAM, b) < 0)
			return c->err = -ENOBUFS;
		sent += b;
		r->sent_frames += (uint64_t)b * c->frames;
		raw_take(r, 0);		/* the kernel's frames, if any */
	}
	c->stream_ticks = rte_get_tsc_cycles() - t0;
	raw_cpustat(c, 1);
	c->stream_msgs = sent;
	/* what is still in a ring reaches the server before the done */
	rte_delay_ms(100);
	return 0;
}

static int
raw_two_open(struct raw_two *r, const struct rp_config *cfg,
	     const struct rtp_settings *set, enum rp_msg_kind kind)
{
	struct raw_ctx *c = &r->c;
	int ret;

	if (raw_shape(c, kind, set->size, rp_port_mtu(&cfg->port[0])) < 0)
		return -EINVAL;
	if (rte_eth_dev_get_port_by_name(cfg->port[0].ethdev_name,
					 &c->port[0]) != 0)
		return -ENODEV;
	r->opened = true;
	c->pool = rte_mempool_lookup("rtp_raw");
	/* room for a jumbo frame: af_packet wants its whole frame size; an
	 * af_xdp pool is its umem, a chunk a page (--raw-only) */
	if (c->pool == NULL)
		c->pool = rp_port_pool("rtp_raw", c->port[0], 4095,
			raw_af_xdp(c->port[0]) ? raw_frame_max(c) :
			RTE_MAX(raw_frame_max(c), 10240u));
	if (c->pool == NULL)
		return -ENOMEM;
	c->iters = set->iters;
	c->duration = set->duration;
	ret = raw_port_start(c, 0);
	if (ret == 0)
		ret = raw_link_wait(c->port[0]);
	return ret;
}

static void
raw_hello_fill(struct raw_hello *h, struct raw_ctx *c,
	       const struct rp_config *cfg)
{
	struct rte_ether_addr mac;

	rte_eth_macaddr_get(c->port[0], &mac);
	memcpy(h->mac, mac.addr_bytes, sizeof(h->mac));
	h->ipv4 = cfg->port[0].ipv4;
}

/*
 * --server --raw: wait for the first client, which must be a --raw one,
 * and reflect its frames; 0, or a negative errno (quit raised, or the
 * port would not start).
 */
int
rtp_raw_serve(const struct rp_config *cfg, int lfd, const volatile bool *quit)
{
	struct raw_two *r = NULL;
	struct rtp_settings set;
	struct raw_hello h, a;
	int fd = 0, ret = -EINTR;

	while (!*quit) {
		struct rtp_oob_reply no = { .magic = RTP_OOB_MAGIC,
					    .status = -EAGAIN };

		if (fd > 0)
			close(fd);
		fd = rtp_oob_accept(lfd);
		if (fd <= 0)
			continue;
		if (rtp_oob_recv(fd, &h, sizeof(h), 10) < 0)
			continue;
		if (h.magic == RTP_OOB_MAGIC) {
			/* a run's hello: a clear no, then the next client */
			snprintf(no.msg, sizeof(no.msg),
				 "the server measures raw first: its first client needs --raw");
			rtp_oob_send(fd, &no, sizeof(no));
			printf("RAW refused a %s client: no --raw\n", RTP_NAME);
			fflush(stdout);
			continue;
		}
		memset(&a, 0, sizeof(a));
		a.magic = RAW_MAGIC;
		if (h.magic != RAW_MAGIC || h.size < 1 ||
		    h.size > RTP_MAX_SIZE || h.mtu != rp_port_mtu(&cfg->port[0]) ||
		    h.kind >= RP_MSG_KINDS) {
			a.status = -EINVAL;
			snprintf(a.msg, sizeof(a.msg), h.magic != RAW_MAGIC ?
				 "not a raw hello (another version?)" :
				 h.size < 1 || h.size > RTP_MAX_SIZE ?
				 "size out of range" : h.kind >= RP_MSG_KINDS ?
				 "unknown message kind" :
				 "the two ports' MTUs differ");
			rtp_oob_send(fd, &a, sizeof(a));
			printf("RAW refused: %s\n", a.msg);
			fflush(stdout);
			continue;
		}
		break;
	}
	if (*quit) {
		if (fd > 0)
			close(fd);
		return -EINTR;
	}
	r = calloc(1, sizeof(*r));
	if (r == NULL) {
		close(fd);
		return -ENOMEM;
	}
	rtp_settings_default(&set);
	set.size = h.size;
	set.iters = h.iters;
	ret = raw_two_open(r, cfg, &set, (enum rp_msg_kind)h.kind);
	a.status = ret;
	if (ret == 0) {
		raw_hello_fill(&a, &r->c, cfg);
		raw_hdr2(&r->c, h.mac, cfg->port[0].ipv4, h.ipv4);
		ret = rte_eal_remote_launch(raw_reflect_lcore, r,
					    cfg->port[0].lcore);
	}
	rtp_oob_send(fd, &a, sizeof(a));
	if (ret == 0) {
		/* the client's done (its port may still send: we count on);
		 * SIGTERM meanwhile ends the wait */
		do
			ret = rtp_oob_recv(fd, &h, sizeof(h), 1);
		while (ret == -ETIMEDOUT && !*quit);
		r->stop = true;
		raw_wait(&r->c, cfg->port[0].lcore);
		a.frames = r->stream_frames;
		a.bytes = r->stream_bytes;
		a.rx_ns = (uint64_t)(rtp_tsc_us(r->last_tsc - r->first_tsc) *
				     1e3);
		a.status = r->c.err;
		rtp_oob_send(fd, &a, sizeof(a));
		printf("RAW served size %u pp_frames %" PRIu64
		       " stream_frames %" PRIu64 " stream_bytes %" PRIu64
		       " %s\n", h.size, r->pp_frames, r->stream_frames,
		       r->stream_bytes,
		       r->c.err == 0 && ret == 0 ? "ok" : "error");
		fflush(stdout);
	}
	if (r->opened)
		rte_eth_dev_stop(r->c.port[0]);
	close(fd);
	free(r);
	return ret < 0 ? ret : 0;
}

/*
 * --client HOST --raw: the raw limit against the server's reflector (see
 * above), before our engine starts.  The stream's figures are those of
 * the messages the server counted.
 */
int
rtp_raw_client(const struct rp_config *cfg, const struct rtp_settings *set,
	       enum rp_msg_kind kind, const char *host, uint16_t port)
{
	struct raw_two *r = calloc(1, sizeof(*r));
	struct raw_hello h = { .magic = RAW_MAGIC }, a;
	unsigned int lcore = cfg->port[0].lcore;
	int fd = -1, ret;

	memset(&rtp_raw, 0, sizeof(rtp_raw));
	if (r == NULL)
		return -ENOMEM;
	r->c.samples = malloc(sizeof(uint64_t) * RTP_MAX_SAMPLES);
	ret = r->c.samples == NULL ? -ENOMEM :
		raw_two_open(r, cfg, set, kind);
	if (ret == 0) {
		fd = rtp_oob_connect(host, port, set->timeout);
		ret = fd < 0 ? fd : 0;
		if (ret < 0)
			fprintf(stderr, "raw: cannot reach the server: %s\n",
				strerror(-ret));
	}
	if (ret == 0) {
		h.size = set->size;
		h.kind = kind;
		h.mtu = rp_port_mtu(&cfg->port[0]);
		h.iters = set->iters;
		h.duration = set->duration;
		raw_hello_fill(&h, &r->c, cfg);
		ret = rtp_oob_send(fd, &h, sizeof(h));
		if (ret == 0)
			ret = rtp_oob_recv(fd, &a, sizeof(a), set->timeout);
		if (ret == 0 && a.magic != RAW_MAGIC)
			ret = -EPROTO;
		if (ret == 0 && a.status < 0) {
			a.msg[sizeof(a.msg) - 1] = '\0';
			fprintf(stderr, "raw: server: %s\n", a.msg[0] != '\0' ?
				a.msg : strerror(-a.status));
			ret = a.status;
		} else if (ret < 0) {
			fprintf(stderr, "raw: exchange with the server: %s\n",
				strerror(-ret));
		}
	}
	if (ret == 0) {
		raw_hdr2(&r->c, a.mac, cfg->port[0].ipv4, a.ipv4);
		r->c.lcore = lcore;
		ret = rte_eal_remote_launch(raw_client_lcore, r, lcore);
		if (ret == 0)
			ret = raw_wait(&r->c, lcore);
		/* done: the server says what it counted */
		h.frames = r->sent_frames;
		if (rtp_oob_send(fd, &h, sizeof(h)) == 0 &&
		    rtp_oob_recv(fd, &a, sizeof(a), set->timeout) == 0 &&
		    a.magic == RAW_MAGIC) {
			rtp_raw.peer_frames = a.frames;
			if (a.status < 0 && ret == 0)
				ret = a.status;
		} else if (ret == 0) {
			ret = -EPROTO;
		}
	}
	if (ret == 0 && r->c.nb_samples != 0) {
		r->c.lost = r->sent_frames - RTE_MIN(a.frames, r->sent_frames);
		/* the receiver's count and clock make the stream's figures */
		r->c.stream_msgs = a.frames / r->c.frames;
		if (a.rx_ns != 0)
			r->c.stream_ticks = (uint64_t)((double)a.rx_ns *
				(double)rte_get_tsc_hz() / 1e9);
		raw_result(&r->c);
		rtp_raw.stream_sent = r->sent_frames / r->c.frames;
		rtp_raw.stream_recv = r->c.stream_msgs;
		rtp_raw.two_proc = true;
	}
	if (fd >= 0)
		close(fd);
	if (r->opened)
		rte_eth_dev_stop(r->c.port[0]);
	free(r->c.samples);
	free(r);
	if (ret < 0)
		fprintf(stderr, "raw: %s\n", strerror(-ret));
	return ret;
}
