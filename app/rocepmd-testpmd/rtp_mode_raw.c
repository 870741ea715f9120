/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * raw: the physical limit of the set-up.  Before the engine takes the
 * ports, the engine lcore of port 0 moves plain UDP frames between port 0
 * and port 1 (back to back): each message is the frames RoCE would send
 * for it (one per IB MTU of payload), with no transport.
 *   ping-pong: a message from port 0 to port 1, then back; half the round
 *	trip is the one-way latency;
 *   streaming: messages from port 0, received on port 1, for as many
 *	messages as the run (iterations, or duration).
 * Then the ports are stopped and the engine configures them afresh.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

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
#define RAW_HDR		(sizeof(struct rte_ether_hdr) + \
			 sizeof(struct rte_ipv4_hdr) + sizeof(struct rte_udp_hdr))

struct rtp_raw_result rtp_raw;

struct raw_ctx {
	uint16_t port[2];
	struct rte_mempool *pool;
	uint8_t hdr[2][RAW_HDR];	/* frame headers from port i */
	uint32_t payload;		/* bytes per full frame */
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
};

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

/* Send one message's frames from port `from`: 0, or -ENOBUFS. */
static int
raw_send(struct raw_ctx *c, unsigned int from)
{
	struct rte_mbuf *m[RAW_BURST];
	uint32_t left = c->size;
	uint32_t i = 0;

	while (i < c->frames) {
		uint32_t n = RTE_MIN(c->frames - i, (uint32_t)RAW_BURST);
		uint16_t sent = 0;

		if (rte_pktmbuf_alloc_bulk(c->pool, m, n) != 0)
			return -ENOBUFS;
		for (uint32_t k = 0; k < n; k++) {
			uint32_t len = RTE_MIN(left, c->payload);
			uint8_t *d = rte_pktmbuf_mtod(m[k], uint8_t *);
			struct rte_ipv4_hdr *ip;
			struct rte_udp_hdr *udp;

			memcpy(d, c->hdr[from], RAW_HDR);
			memset(d + RAW_HDR, 0, len);
			ip = (void *)(d + sizeof(struct rte_ether_hdr));
			udp = (void *)(ip + 1);
			ip->total_length = rte_cpu_to_be_16((uint16_t)(len +
				sizeof(*ip) + sizeof(*udp)));
			ip->hdr_checksum = 0;
			ip->hdr_checksum = rte_ipv4_cksum(ip);
			udp->dgram_len = rte_cpu_to_be_16((uint16_t)(len +
				sizeof(*udp)));
			m[k]->data_len = (uint16_t)(RAW_HDR + len);
			m[k]->pkt_len = m[k]->data_len;
			left -= len;
		}
		for (uint64_t t = 0; sent < n; t++) {
			sent += rte_eth_tx_burst(c->port[from], 0, m + sent,
						 (uint16_t)(n - sent));
			if (t > 10000000) {
				rte_pktmbuf_free_bulk(m + sent, n - sent);
				fprintf(stderr, "raw: port %u refuses frames\n",
					c->port[from]);
				return -ENOBUFS;
			}
		}
		i += n;
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

static int
raw_lcore(void *arg)
{
	struct raw_ctx *c = arg;
	uint64_t hz = rte_get_tsc_hz();
	uint64_t n = c->iters != 0 ? c->iters :
		(uint64_t)(c->duration * 1e6);	/* bounded by time below */
	uint64_t t_stop = c->iters != 0 ? UINT64_MAX :
		rte_get_tsc_cycles() + (uint64_t)(c->duration * (double)hz);
	uint64_t sent = 0, recvd = 0, t0;

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

		if (raw_send(c, 0) < 0 || raw_recv_msg(c, 1) < 0 ||
		    raw_send(c, 1) < 0 || raw_recv_msg(c, 0) < 0) {
			c->err = -EIO;
			return -EIO;
		}
		if (c->nb_samples < RTP_MAX_SAMPLES)
			c->samples[c->nb_samples++] = rte_get_tsc_cycles() - t;
	}
	/* Streaming: keep at most a ring's worth of frames in flight. */
	t0 = rte_get_tsc_cycles();
	t_stop = c->iters != 0 ? UINT64_MAX :
		t0 + (uint64_t)(c->duration * (double)hz);
	while ((sent < n && rte_get_tsc_cycles() < t_stop) ||
	       recvd < sent * c->frames) {
		if (sent < n && rte_get_tsc_cycles() < t_stop &&
		    sent * c->frames - recvd < 512) {
			if (raw_send(c, 0) < 0) {
				c->err = -ENOBUFS;
				return -ENOBUFS;
			}
			sent++;
		}
		recvd += raw_recv(c, 1, RAW_BURST);
		if (rte_get_tsc_cycles() > t_stop + hz)
			break;
	}
	c->stream_ticks = rte_get_tsc_cycles() - t0;
	c->stream_msgs = recvd / c->frames;
	c->lost += sent * c->frames - recvd;
	return 0;
}

static int
raw_port_start(struct raw_ctx *c, unsigned int i)
{
	struct rte_eth_conf conf = { 0 };
	uint16_t p = c->port[i];
	int ret;

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
rtp_raw_measure(const struct rp_config *cfg, const struct rtp_settings *set)
{
	struct raw_ctx c;
	uint32_t ib_mtu = RTE_MIN(cfg->port[0].mtu, cfg->port[1].mtu);
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
	c.pool = rte_pktmbuf_pool_create("rtp_raw", 4095, 256, 0,
			RTE_PKTMBUF_HEADROOM + RAW_HDR + ib_mtu,
			rte_socket_id());
	if (c.pool == NULL)
		return -ENOMEM;
	c.payload = ib_mtu;
	c.size = set->size;
	c.frames = (set->size + ib_mtu - 1) / ib_mtu;
	c.iters = set->iters;
	c.duration = set->duration;
	c.samples = malloc(sizeof(uint64_t) * RTP_MAX_SAMPLES);
	if (c.samples == NULL) {
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
			ret = rte_eal_wait_lcore(lcore);
	}
	rte_eth_dev_stop(c.port[0]);
	rte_eth_dev_stop(c.port[1]);
	if (ret == 0 && c.nb_samples != 0) {
		rtp_raw.valid = true;
		rtp_raw.size = c.size;
		rtp_raw.frames_per_msg = c.frames;
		rtp_raw.pp_msgs = (double)c.nb_samples;
		rtp_raw.lat_min = rtp_tsc_us((uint64_t)rtp_quantile(c.samples,
			c.nb_samples, 0)) / 2;
		rtp_raw.lat_p50 = rtp_tsc_us((uint64_t)rtp_quantile(c.samples,
			c.nb_samples, 0.5)) / 2;
		rtp_raw.lat_p99 = rtp_tsc_us((uint64_t)rtp_quantile(c.samples,
			c.nb_samples, 0.99)) / 2;
		rtp_raw.lat_p999 = rtp_tsc_us((uint64_t)rtp_quantile(c.samples,
			c.nb_samples, 0.999)) / 2;
		rtp_raw.lat_max = rtp_tsc_us((uint64_t)rtp_quantile(c.samples,
			c.nb_samples, 1)) / 2;
		if (c.stream_ticks != 0) {
			double s = rtp_tsc_us(c.stream_ticks) / 1e6;

			rtp_raw.msg_rate = (double)c.stream_msgs / s;
			rtp_raw.gbps = (double)c.stream_msgs * c.size * 8 /
				s / 1e9;
		}
		rtp_raw.lost = c.lost;
	}
	free(c.samples);
	/* The pool stays: a PMD may still hold its mbufs in a stopped queue. */
	if (ret < 0)
		fprintf(stderr, "raw: %s\n", strerror(-ret));
	return ret;
}
