/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Fault injection on a port, for tests: drop (alone or in bursts),
 * duplicate, reorder, corrupt or delay IP frames, on transmit and on
 * receive, at per-mille rates, so loss recovery is tested on any port
 * (nftables and netem cannot reach memif frames, nor af_packet ones
 * without qdisc_bypass=0).
 *
 * A plan replays from its seed whatever the timing: the fate of frame N
 * of a direction is a hash of (seed, direction, N) (rp_fault_plan.h),
 * never the state of a generator drawn at moments that depend on the
 * schedule.
 * Held frames wait in a fixed ring per direction (struct rp_fault_dir):
 * no allocation, no syscall on the path.
 *
 * A device with faults configured sends and receives through
 * rp_port_fault_ops, which wraps its kind's operations (rp_port.h): a
 * device without pays nothing for them.
 */

#include <rte_cycles.h>
#include <rte_ether.h>
#include <rte_mbuf.h>

#include "rp_fault_plan.h"
#include "rp_pkt.h"
#include "rp_port.h"
#include "rp_time.h"

/* A reordered frame waits for its later frames at most this long. */
#define RP_FAULT_REORDER_MAX_US	200u

static const struct rp_port_ops rp_port_fault_ops;

static void
fault_dir_init(struct rp_fault_dir *d, const struct rp_fault_rates *r)
{
	memset(d, 0, sizeof(*d));
	d->rate = r;
}

void
rp_fault_init(struct rp_port *p)
{
	const struct rp_fault_cfg *f = &p->cfg->fault;

	fault_dir_init(&p->fault[0], &f->tx);
	fault_dir_init(&p->fault[1], &f->rx);
	if (rp_fault_rates_on(&f->tx) || rp_fault_rates_on(&f->rx))
		p->ops = &rp_port_fault_ops;
}

void
rp_fault_fini(struct rp_port *p)
{
	for (unsigned int dir = 0; dir < 2; dir++) {
		struct rp_fault_dir *d = &p->fault[dir];

		for (unsigned int i = 0; i < RP_FAULT_HOLD; i++) {
			rte_pktmbuf_free(d->hold[i].m);
			d->hold[i].m = NULL;
		}
		d->nr_held = 0;
	}
}

/* Offset of the first byte after the BTH, or 0 if not a RoCEv2 frame. */
static uint32_t
fault_bth_end(const struct rte_mbuf *m)
{
	const struct rte_ether_hdr *eth =
		rte_pktmbuf_mtod(m, const struct rte_ether_hdr *);
	uint32_t end;

	if (eth->ether_type == rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4))
		end = RTE_ETHER_HDR_LEN + 20 + 8 + 12;
	else if (eth->ether_type == rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV6))
		end = RTE_ETHER_HDR_LEN + 40 + 8 + 12;
	else
		return 0;
	return rte_pktmbuf_data_len(m) > end ? end : 0;
}

/* Hold m in a free slot; false if the ring is full (m then passes). */
static bool
fault_hold(struct rp_fault_dir *d, struct rte_mbuf *m, uint64_t until_n,
	   uint64_t until_tsc)
{
	if (d->nr_held == RP_FAULT_HOLD)
		return false;
	for (unsigned int i = 0; i < RP_FAULT_HOLD; i++) {
		if (d->hold[i].m == NULL) {
			d->hold[i].m = m;
			d->hold[i].until_n = until_n;
			d->hold[i].until_tsc = until_tsc;
			d->nr_held++;
			return true;
		}
	}
	return false;
}

/* Next held frame that is due, or NULL. */
static struct rte_mbuf *
fault_due(struct rp_fault_dir *d, uint64_t now)
{
	if (d->nr_held == 0)
		return NULL;
	for (unsigned int i = 0; i < RP_FAULT_HOLD; i++) {
		struct rte_mbuf *m = d->hold[i].m;

		if (m != NULL && (d->n >= d->hold[i].until_n ||
				  now >= d->hold[i].until_tsc)) {
			d->hold[i].m = NULL;
			d->nr_held--;
			return m;
		}
	}
	return NULL;
}

/*
 * The faults of frame m in direction dir: NULL if dropped or held (m is
 * then the fault layer's), else m, with *dup a copy to pass after it or
 * NULL.
 */
static struct rte_mbuf *
fault_apply(struct rp_port_q *pq, unsigned int dir, struct rte_mbuf *m,
	    struct rte_mbuf **dup)
{
	const struct rp_fault_cfg *f = &pq->port->cfg->fault;
	struct rp_fault_dir *d = &pq->port->fault[dir];
	uint32_t bth_end = fault_bth_end(m);
	uint64_t n, now;
	uint32_t act;

	*dup = NULL;
	if (bth_end == 0)
		return m;	/* ARP and the like: never touched */
	n = d->n++;
	act = rp_fault_plan(f, dir, n);
	if (likely(act == 0))
		return m;
	rp_stats_inc(pq->stats, RP_STAT_FAULT);
	if (act & RP_FAULT_DROP) {
		rp_stats_inc(pq->stats, RP_STAT_FAULT_DROP);
		rte_pktmbuf_free(m);
		return NULL;
	}
	/* The copy first: a corrupted frame is never doubled. */
	if (act & RP_FAULT_DUP) {
		*dup = rte_pktmbuf_copy(m, pq->port->pool, 0, UINT32_MAX);
		if (*dup != NULL)
			rp_stats_inc(pq->stats, RP_STAT_FAULT_DUP);
	}
	if (act & RP_FAULT_CORRUPT) {
		/* A byte past the BTH: the length and opcode checks pass,
		 * the ICRC check must drop the frame. */
		uint8_t *b = rte_pktmbuf_mtod(m, uint8_t *);
		uint32_t span = rte_pktmbuf_data_len(m) - bth_end;

		rp_stats_inc(pq->stats, RP_STAT_FAULT_CORRUPT);
		b[bth_end + rp_fault_hash(f->seed, dir, n, RP_FAULT_DRAW_WHERE) %
		  span] ^= 0x5a;
	}
	/* As a switch whose queue is long marks an ECN-capable frame. */
	if ((act & RP_FAULT_CE) &&
	    rp_pkt_mark_ce(rte_pktmbuf_mtod(m, uint8_t *),
			   rte_pktmbuf_data_len(m)))
		rp_stats_inc(pq->stats, RP_STAT_FAULT_CE);
	now = rte_get_timer_cycles();
	if ((act & RP_FAULT_REORDER) &&
	    fault_hold(d, m, n + 1 + f->reorder_depth,
		       now + rp_us_cycles(RP_FAULT_REORDER_MAX_US))) {
		rp_stats_inc(pq->stats, RP_STAT_FAULT_REORDER);
		return NULL;
	}
	if ((act & RP_FAULT_DELAY) &&
	    fault_hold(d, m, UINT64_MAX, now + rp_us_cycles(f->delay_us))) {
		rp_stats_inc(pq->stats, RP_STAT_FAULT_DELAY);
		return NULL;
	}
	return m;
}

/* Before a burst goes out, and after each frame: held frames now due. */
static void
fault_release(struct rp_port_q *pq)
{
	struct rp_fault_dir *d = &pq->port->fault[0];
	uint64_t now;
	struct rte_mbuf *m;

	if (d->nr_held == 0)
		return;
	now = rte_get_timer_cycles();
	while ((m = fault_due(d, now)) != NULL)
		pq->port->kind_ops->tx(pq, m);
}

static void
fault_tx(struct rp_port_q *pq, struct rte_mbuf *m)
{
	struct rte_mbuf *dup;

	/* Held, copied, corrupted: a frame of its own (rp_port.c). */
	m = rp_port_unshare(pq, m);
	if (m == NULL)
		return;
	m = fault_apply(pq, 0, m, &dup);
	if (m != NULL)
		pq->port->kind_ops->tx(pq, m);
	if (dup != NULL)
		pq->port->kind_ops->tx(pq, dup);
	if (pq->port->fault[0].nr_held != 0)
		fault_release(pq);
}

static bool
fault_flush(struct rp_port_q *pq)
{
	fault_release(pq);
	return pq->port->kind_ops->flush(pq);
}

/*
 * Received frames in[0..nb) through the receive faults into out[0..cap),
 * with the held frames that are due; returns how many are in out.  The
 * caller receives at most cap / 2 frames: each may become two (itself
 * and a duplicate), and held frames take only the room left over.
 */
static uint16_t
fault_rx_apply(struct rp_port_q *pq, struct rte_mbuf **in, uint16_t nb,
	       struct rte_mbuf **out, uint16_t cap)
{
	struct rp_fault_dir *d = &pq->port->fault[1];
	uint64_t now = d->nr_held != 0 ? rte_get_timer_cycles() : 0;
	struct rte_mbuf *m, *dup;
	uint16_t o = 0;

	for (uint16_t i = 0; i < nb; i++) {
		m = fault_apply(pq, 1, in[i], &dup);
		if (m != NULL)
			out[o++] = m;
		if (dup != NULL)
			out[o++] = dup;
		/* Frames whose reorder depth this one completed, leaving
		 * room for the rest of the burst. */
		while (o + 2 * (nb - 1 - i) < cap &&
		       (m = fault_due(d, now)) != NULL)
			out[o++] = m;
	}
	if (d->nr_held != 0) {
		now = rte_get_timer_cycles();
		while (o < cap && (m = fault_due(d, now)) != NULL)
			out[o++] = m;
	}
	return o;
}

/* (Faults come with one lcore per device only: rp_cfg.c.) */
static uint16_t
fault_rx(struct rp_port_q *pq, struct rte_mbuf **pkts, uint16_t n)
{
	struct rte_mbuf *in[RP_BURST / 2];
	/* Half a burst: room for what the faults add. */
	uint16_t nb = pq->port->kind_ops->rx(pq, in,
					RTE_MIN(n / 2u, RP_BURST / 2));

	return fault_rx_apply(pq, in, nb, pkts, n);
}

/* Around the kind's frame operations; the rest stays the kind's. */
static const struct rp_port_ops rp_port_fault_ops = {
	.name = "faults",
	.rx = fault_rx,
	.tx = fault_tx,
	.flush = fault_flush,
	.holds = true,
};
