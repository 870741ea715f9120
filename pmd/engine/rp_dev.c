/* SPDX-License-Identifier: BSD-3-Clause */
/* Devices: one per configured port, each with its shared region. */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <rte_alarm.h>
#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_malloc.h>
#include <rte_pause.h>

#include <infiniband/verbs.h>

#include "rp_atomic.h"
#include "rp_doorbell.h"
#include "rp_icrc.h"
#include "rp_log.h"
#include "rp_engine.h"

struct rp_dev *rp_devs[RP_MAX_PORTS];
unsigned int rp_nr_devs;

/*
 * rp_engine_hold(): the threads that hold the engine, and whether it is
 * closed to new ones.  A telemetry query that came as the program exited
 * read a device rp_engine_stop() had just freed (SIGSEGV in
 * rp_ctrl_call(), a DPDK telemetry client polling /rocepmd/qp).  Holder
 * and stopper each write their word, then read the other's, both
 * sequentially consistent: one of them sees the other.
 */
static uint32_t rp_holders;
static uint32_t rp_closed;
/* How long a stop waits for a holder before it frees the devices anyway:
 * a control request outlives its lcore only if the lcore is stuck. */
#define RP_HOLD_WAIT_MS	5000

bool
rp_engine_hold(void)
{
	__atomic_fetch_add(&rp_holders, 1u, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&rp_closed, __ATOMIC_SEQ_CST) == 0)
		return true;
	__atomic_fetch_sub(&rp_holders, 1u, __ATOMIC_RELEASE);
	return false;
}

void
rp_engine_release(void)
{
	__atomic_fetch_sub(&rp_holders, 1u, __ATOMIC_RELEASE);
}

/* Closes the engine to new holders and waits for the last to go. */
static void
engine_close_holders(void)
{
	uint32_t waited_ms = 0;

	__atomic_store_n(&rp_closed, 1u, __ATOMIC_SEQ_CST);
	while (__atomic_load_n(&rp_holders, __ATOMIC_SEQ_CST) != 0) {
		if (waited_ms++ == RP_HOLD_WAIT_MS) {
			RP_LOG(WARNING, "engine stop: %u control call(s) still waiting after %u ms: stopping anyway",
			       __atomic_load_n(&rp_holders, __ATOMIC_RELAXED),
			       RP_HOLD_WAIT_MS);
			return;
		}
		rte_delay_us_sleep(1000);
	}
}

/* The addresses of the control block: GIDs, IPv4, prefix lengths. */
static void
dev_fill_ctl_addrs(struct rp_dev *dev)
{
	struct rp_dev_ctl *ctl = dev->ctl;

	memcpy(ctl->gid, dev->net.gid, sizeof(ctl->gid));
	ctl->ipv4 = dev->net.ipv4;
	ctl->prefix_len = dev->cfg.prefix_len;
	memset(ctl->gid_plen, 0, sizeof(ctl->gid_plen));
	ctl->gid_plen[0] = (uint8_t)(96 + dev->cfg.prefix_len);
	ctl->gid_plen[1] = 64;		/* fe80::/64 */
	for (uint32_t i = 0; i < dev->cfg.nr_ipv6; i++)
		ctl->gid_plen[2 + i] = dev->cfg.ipv6_plen[i];
}

static void
dev_fill_ctl(struct rp_dev *dev)
{
	struct rp_dev_ctl *ctl = dev->ctl;
	const uint8_t *m = dev->port.mac.addr_bytes;

	ctl->magic = RP_ABI_MAGIC;
	ctl->version = RP_ABI_VERSION;
	ctl->region_size = dev->region_size;
	snprintf(ctl->name, sizeof(ctl->name), "rocepmd%u", dev->id);
	memcpy(ctl->mac, m, 6);
	dev_fill_ctl_addrs(dev);
	ctl->mtu = dev->mtu;
	ctl->max_qp = RP_MAX_QP - 2;
	ctl->max_cq = RP_MAX_CQ;
	ctl->max_mr = RP_MAX_MR - 1;
	ctl->max_pd = RP_MAX_PD;
	ctl->max_ah = RP_MAX_AH - 1;
	ctl->max_qp_wr = RP_MAX_WR;
	ctl->max_cqe = RP_MAX_CQE - 1;
	ctl->max_sge = RP_MAX_SGE;
	ctl->max_inline = RP_MAX_INLINE;
	ctl->max_rd_atom = RP_MAX_RD_ATOMIC;
	ctl->max_chan = RP_MAX_CHAN;
	ctl->port_id = dev->port.port_id;
	ctl->max_srq = RP_MAX_SRQ;
	ctl->max_srq_wr = RP_MAX_SRQ_WR;
	ctl->max_srq_sge = RP_MAX_SGE;
	/* Tag matching on RC with rendezvous offload (tm_caps). */
	ctl->tm_max_rndv_hdr_size = RP_TM_MAX_RNDV_HDR;
	ctl->tm_max_num_tags = RP_TM_MAX_TAGS;
	ctl->tm_flags = IBV_TM_CAP_RC;
	ctl->tm_max_ops = RP_TM_MAX_OPS;
	ctl->tm_max_sge = 1;
	/* EUI-64 from the MAC, as RoCE NICs derive their node GUID. */
	ctl->sys_image_guid = (uint64_t)(m[0] ^ 2) << 56 | (uint64_t)m[1] << 48 |
		(uint64_t)m[2] << 40 | 0xfffeull << 24 | (uint64_t)m[3] << 16 |
		(uint64_t)m[4] << 8 | m[5];
}

/*
 * The link's state, and IBV_EVENT_PORT_ACTIVE/ERR on a change (the first
 * poll finds the region's 0, and nobody listens yet); the device's one
 * port is port 1.
 */
void
rp_dev_link_poll(struct rp_dev *dev)
{
	uint32_t speed = 0, was;
	int up = rp_port_link_get(&dev->port, &speed);

	if (up < 0)
		return;
	/* The control block's link fields have one writer: this lcore. */
	was = rp_load_relaxed(&dev->ctl->link_up);
	rp_store_relaxed(&dev->ctl->link_up, (uint32_t)up);
	rp_store_relaxed(&dev->ctl->link_speed, speed);
	if ((uint32_t)up != was)
		rp_async_push(dev, up ? IBV_EVENT_PORT_ACTIVE : IBV_EVENT_PORT_ERR,
			      1);
}

/*
 * Lcore: the kernel interface of a netdev-bound port has other addresses
 * (rp_netdev_watch.c): the GID table, the control block and the XDP
 * program's map follow, and applications get IBV_EVENT_GID_CHANGE.  The
 * GIDs are written before the event is published (its release), so a
 * program that queries on the event reads the new table.
 */
void
rp_dev_addrs_set(struct rp_dev *dev, uint32_t ipv4, uint32_t prefix_len,
		 const uint8_t (*ipv6)[16], const uint8_t *plen, uint32_t n6)
{
	uint8_t old[RP_GID_TBL_LEN][16];

	n6 = RTE_MIN(n6, (uint32_t)RP_MAX_IPV6);
	memcpy(old, dev->net.gid, sizeof(old));
	dev->net.ipv4 = ipv4;
	dev->cfg.ipv4 = ipv4;
	dev->cfg.prefix_len = prefix_len;
	for (uint32_t i = 0; i < n6; i++) {
		memcpy(dev->cfg.ipv6[i], ipv6[i], 16);
		dev->cfg.ipv6_plen[i] = plen[i];
	}
	dev->cfg.nr_ipv6 = n6;
	rp_gid_init(&dev->net);
	if (memcmp(old, dev->net.gid, sizeof(old)) == 0)
		return;
	rp_xdp_port_addrs_sync(&dev->port, (const uint8_t (*)[16])old,
			       (const uint8_t (*)[16])dev->net.gid, dev->net.nr_gid);
	dev_fill_ctl_addrs(dev);
	rp_stat_inc(dev, RP_STAT_GID_CHANGE);
	RP_LOG(NOTICE, "rocepmd%u: the addresses of %s changed: %u GID(s)",
	       dev->id, dev->cfg.netdev, dev->net.nr_gid);
	rp_async_push(dev, IBV_EVENT_GID_CHANGE, 1);
}


/* The counters that moved, at INFO level, when a device goes away. */
static void
dev_stats_log(const struct rp_dev *dev)
{
	for (unsigned int i = 0; i < RP_STAT_MAX; i++)
		if (rp_dev_stat(dev, i) != 0)
			RP_LOG(INFO, "rocepmd%u: %s %" PRIu64, dev->id,
			       rp_stat_names[i], rp_dev_stat(dev, i));
	/* Several lcores: what each carried (shardN_name, as above). */
	for (uint32_t s = 0; dev->nr_shards > 1 && s < dev->nr_shards; s++) {
		static const enum rp_stat per[] = {
			RP_STAT_RX_PKTS, RP_STAT_TX_PKTS,
			RP_STAT_SHARD_HANDOFF,
		};
		const struct rp_shard *sh = &dev->sh[s];

		RP_LOG(INFO, "rocepmd%u: shard%u_lcore %u", dev->id, s,
		       sh->lcore);
		for (unsigned int k = 0; k < RTE_DIM(per); k++)
			RP_LOG(INFO, "rocepmd%u: shard%u_%s %" PRIu64, dev->id,
			       s, rp_stat_names[per[k]],
			       rp_load_relaxed(&sh->stats[per[k]]));
	}
}

static void
dev_free(struct rp_dev *dev)
{
	/* The lcores have stopped: the XDP program's last counts, read
	 * here, are not ten link polls old. */
	rp_port_stats(&dev->port);
	if (dev->ctl != NULL)
		dev_stats_log(dev);
	rp_netdev_watch_fini(&dev->net);
	rp_port_fini(&dev->port);
	rp_shard_fini(dev);
	rp_ctrl_fini(dev);
	rp_gsi_fini(dev);
	rp_mem_fini(dev);
	rp_region_fini(dev);
	rte_free(dev);
}

static int
dev_create(unsigned int id, const struct rp_port_cfg *pc, bool rx_intr)
{
	struct rp_dev *dev;
	int ret;

	dev = rte_zmalloc("rp_dev", sizeof(*dev), RTE_CACHE_LINE_SIZE);
	if (dev == NULL)
		return -ENOMEM;
	dev->id = id;
	dev->cfg = *pc;
	dev->wake_fd = -1;
	rp_port_setup(&dev->port, id, &dev->cfg, rx_intr);
	rp_net_setup(&dev->net, id, &dev->cfg, &dev->port);
	dev->region_fd = -1;
	rte_spinlock_init(&dev->shared_lock);
	/* mtu = auto: found before anything of the device needs it */
	ret = rp_port_mtu_find(&dev->port);
	if (ret < 0)
		goto err_free;
	dev->mtu = dev->port.mtu;
	dev->cfg.mtu = dev->port.mtu;
	ret = rp_shard_init(dev);
	if (ret < 0)
		goto err_free;
	ret = rp_region_init(dev, pc->region_mb);
	if (ret < 0)
		goto err_free;
	ret = rp_ctrl_init(dev);
	if (ret < 0)
		goto err_free;
	ret = rp_mem_init(dev);
	if (ret < 0)
		goto err_free;
	ret = rp_gsi_init(dev);
	if (ret < 0)
		goto err_free;
	ret = rp_port_init(&dev->port);
	if (ret < 0)
		goto err_free;
	rp_gid_init(&dev->net);
	rp_xdp_port_addrs(&dev->port, (const uint8_t (*)[16])dev->net.gid,
			  dev->net.nr_gid);
	rp_netdev_watch_init(&dev->net);
	dev_fill_ctl(dev);
	rp_dev_link_poll(dev);
	rp_devs[id] = dev;
	RP_LOG(INFO, "%s: port %u (%s) mtu %u", dev->ctl->name, dev->port.port_id,
	       pc->device, dev->mtu);
	return 0;

err_free:
	dev_free(dev);
	return ret;
}

int
rp_engine_start(const struct rp_config *cfg)
{
	int ret;

	if (rp_nr_devs != 0)
		return -EALREADY;
	/* a stopped engine started again: open to holders (no device yet) */
	__atomic_store_n(&rp_closed, 0u, __ATOMIC_SEQ_CST);
	for (unsigned int i = 0; i < cfg->nb_ports; i++) {
		ret = dev_create(i, &cfg->port[i],
				 cfg->idle == RP_IDLE_ADAPTIVE);
		if (ret < 0)
			goto err;
		rp_nr_devs = i + 1;
	}
	ret = rp_lcore_launch(cfg);
	if (ret < 0)
		goto err;
	return 0;
err:
	RP_LOG(ERR, "engine start failed: %s", strerror(-ret));
	rp_engine_stop();
	return ret;
}

static void
devs_close_all(void)
{
	for (unsigned int i = 0; i < rp_nr_devs; i++) {
		if (rp_devs[i] != NULL)
			dev_free(rp_devs[i]);
		rp_devs[i] = NULL;
	}
	rp_nr_devs = 0;
}

/*
 * Handshake between rp_engine_stop() and the alarm.  The EAL orders the
 * two through a timerfd, out of ThreadSanitizer's sight; these release and
 * acquire pairs make the order visible to it and cost nothing else.
 */
struct devs_close_req {
	uint32_t go;
	uint32_t done;
};

static void
devs_close_alarm(void *arg)
{
	struct devs_close_req *req = arg;

	/* A0: pairs with R0 in rp_engine_stop(); already set. */
	while (rp_load_acquire(&req->go) == 0)
		rte_pause();
	devs_close_all();
	/* R1: pairs with A1 in rp_engine_stop(). */
	rp_store_release(&req->done, 1u);
}

void
rp_engine_stop(void)
{
	struct devs_close_req req = { 0, 0 };
	uint64_t waited_ms = 0;

	/* Calls in flight finish first: the lcores serve them. */
	engine_close_holders();
	rp_lcore_stop();
	if (rp_nr_devs == 0)
		return;
	/*
	 * Ports are stopped and closed on the EAL interrupt thread, from an
	 * alarm: PMD control callbacks run there too (memif's control
	 * channel, whose peer in the same process reacts to our disconnect;
	 * link-state events), and a close racing one of them frees what it
	 * is using.  On that thread the two are serialised.
	 */
	/* R0 */
	rp_store_release(&req.go, 1u);
	if (rte_eal_alarm_set(1, devs_close_alarm, &req) != 0) {
		RP_LOG(WARNING, "cannot schedule the port close on the interrupt thread: closing here");
		devs_close_all();
		return;
	}
	/* A1 */
	while (rp_load_acquire(&req.done) == 0) {
		rte_delay_us_sleep(1000);
		if (++waited_ms == 5000) {
			/* Nothing to race with if the thread never runs it. */
			if (rte_eal_alarm_cancel(devs_close_alarm, &req) > 0) {
				RP_LOG(WARNING, "interrupt thread unresponsive: closing the ports here");
				devs_close_all();
				return;
			}
		}
	}
}

unsigned int
rp_dev_count(void)
{
	return rp_nr_devs;
}

uint32_t
rp_dev_mtu(unsigned int id)
{
	return id < rp_nr_devs && rp_devs[id] != NULL ? rp_devs[id]->mtu : 0;
}

uint64_t
rp_dev_region_size(unsigned int id)
{
	return id < rp_nr_devs && rp_devs[id] != NULL ?
		rp_devs[id]->region_size : 0;
}

void *
rp_dev_own_arena(unsigned int id, uint64_t *size)
{
	const struct rp_arena *a;

	*size = 0;
	if (id >= rp_nr_devs || rp_devs[id] == NULL)
		return NULL;
	a = &rp_devs[id]->arena[0];
	if (!a->used)
		return NULL;
	*size = a->size;
	return a->base;
}

struct rp_dev_ctl *
rp_dev_ctl(unsigned int id)
{
	return id < rp_nr_devs && rp_devs[id] != NULL ? rp_devs[id]->ctl : NULL;
}

/*
 * Called after the caller's release store of a producer index (SQ, RQ,
 * control ring).  With the idle policy "adaptive" the engine may be about
 * to block: wake it.  A system call here only when the engine said it
 * sleeps, never per post otherwise.
 */
void
rp_dev_doorbell(unsigned int id)
{
	struct rp_dev *dev = id < rp_nr_devs ? rp_devs[id] : NULL;

	if (dev != NULL && !rp_doorbell_ring(dev->ctl, dev->wake_fd))
		RP_LOG(DEBUG, "rocepmd%u: wake-up write: %s", dev->id,
		       strerror(errno));
}
