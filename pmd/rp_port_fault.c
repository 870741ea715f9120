/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Transmit fault injection: drop, duplicate, reorder or corrupt frames at
 * seeded per-mille rates, so loss recovery is tested deterministically on
 * any port (nftables and netem cannot reach af_packet or memif frames).
 */

#include <rte_ether.h>
#include <rte_mbuf.h>

#include "rp_obj.h"

/* xorshift64*: cheap, and the same sequence for the same seed. */
static uint32_t
fault_rand(struct rp_dev *dev)
{
	uint64_t x = dev->fault.rng;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	dev->fault.rng = x;
	return (uint32_t)((x * 0x2545f4914f6cdd1dull) >> 32) % 1000;
}

void
rp_fault_init(struct rp_dev *dev)
{
	const struct rp_fault_cfg *f = &dev->cfg.fault;

	dev->fault.on = f->drop || f->dup || f->reorder || f->corrupt;
	dev->fault.rng = 0x9e3779b97f4a7c15ull ^ f->seed;
	dev->fault.held = NULL;
}

static bool
fault_eligible(const struct rte_mbuf *m)
{
	const struct rte_ether_hdr *eth =
		rte_pktmbuf_mtod(m, const struct rte_ether_hdr *);

	return eth->ether_type == rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4) ||
		eth->ether_type == rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV6);
}

void
rp_fault_tx(struct rp_dev *dev, struct rte_mbuf *m)
{
	const struct rp_fault_cfg *f = &dev->cfg.fault;
	struct rte_mbuf *held;

	if (!fault_eligible(m)) {
		rp_port_enqueue(dev, m);
		return;
	}
	if (fault_rand(dev) < f->drop) {
		rp_stat_inc(dev, RP_STAT_FAULT);
		rte_pktmbuf_free(m);
		return;
	}
	if (fault_rand(dev) < f->corrupt) {
		/* One byte past the headers: the ICRC must catch it. */
		uint8_t *p = rte_pktmbuf_mtod(m, uint8_t *);
		uint32_t len = rte_pktmbuf_data_len(m);

		rp_stat_inc(dev, RP_STAT_FAULT);
		p[42 + fault_rand(dev) % (len > 42 ? len - 42 : 1)] ^= 0x5a;
	}
	if (fault_rand(dev) < f->dup) {
		struct rte_mbuf *c = rte_pktmbuf_copy(m, dev->pool, 0, UINT32_MAX);

		if (c != NULL) {
			rp_stat_inc(dev, RP_STAT_FAULT);
			rp_port_enqueue(dev, c);
		}
	}
	held = dev->fault.held;
	if (held == NULL && fault_rand(dev) < f->reorder) {
		rp_stat_inc(dev, RP_STAT_FAULT);
		dev->fault.held = m;	/* goes out after the next frame */
		return;
	}
	rp_port_enqueue(dev, m);
	if (held != NULL) {
		dev->fault.held = NULL;
		rp_port_enqueue(dev, held);
	}
}

/* Before a burst goes out: a held frame waits no longer than that. */
void
rp_fault_release(struct rp_dev *dev)
{
	struct rte_mbuf *held = dev->fault.held;

	if (held != NULL) {
		dev->fault.held = NULL;
		rp_port_enqueue(dev, held);
	}
}
