/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The engine layer: devices, their shards (a device's share of one engine
 * lcore), the lcores and their passes, control, async events, counters.
 * A device and its objects are touched only by the lcores of its shards;
 * what several shards write is under rp_dev_shared_lock().
 */

#ifndef _RP_ENGINE_H_
#define _RP_ENGINE_H_

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <rte_ether.h>
#include <rte_mbuf.h>
#include <rte_memzone.h>
#include <rte_hash.h>
#include <rte_per_lcore.h>
#include <rte_ring.h>
#include <rte_spinlock.h>

#include "rocepmd.h"
#include "rp_abi.h"
#include "rp_transport.h"

/* ---- rp_shard.c */
int rp_shard_init(struct rp_dev *dev);
void rp_shard_fini(struct rp_dev *dev);
void rp_shard_pause(struct rp_dev *dev);
void rp_shard_resume(struct rp_dev *dev);
void rp_shard_wait(struct rp_shard *sh);
uint16_t rp_shard_rx(struct rp_shard *sh, struct rte_mbuf **pkts, uint16_t n);

/* ---- rp_dev.c */
void rp_dev_link_poll(struct rp_dev *dev);
void rp_dev_addrs_set(struct rp_dev *dev, uint32_t ipv4, uint32_t prefix_len,
		      const uint8_t (*ipv6)[16], const uint8_t *plen,
		      uint32_t n6);
extern struct rp_dev *rp_devs[RP_MAX_PORTS];
extern unsigned int rp_nr_devs;

/*
 * A thread other than the lcores that uses a device (rp_ctrl_call(), the
 * telemetry commands, the counters' readers) holds the engine meanwhile:
 * rp_engine_stop() waits for the last holder before it stops the lcores,
 * which serve those calls, and frees the devices.  false: the engine is
 * stopping, use nothing.
 */
bool rp_engine_hold(void);
void rp_engine_release(void);

/* ---- rp_ctrl.c */
typedef int (*rp_ctrl_fn)(struct rp_dev *dev, struct rp_ctrl_slot *req);

/*
 * One control op, declared once (rp_ctrl_descs[], indexed by its op): the
 * engine's handler, and plain data the attach server (pmd/service/)
 * interprets for an attached client's request: whether it may send it at
 * all (deny by default), which objects it names must be its own, and
 * which object (and so which quota, enum rp_quota_kind) it makes or ends.
 */
#define RP_CTRL_F_ATTACH	1u	/* an attached client may send it */
#define RP_CTRL_F_MEM		2u	/* the server names the client's memory
					 * (u.mr.mem) */
#define RP_CTRL_F_PAGES		4u	/* charges the pages of u.mr's range: an
					 * MR it makes, else when it changes its
					 * translation */
#define RP_CTRL_F_GSI		8u	/* a QP it makes with RP_QP_F_GSI is the
					 * client's GSI agent, one per device;
					 * the agent goes with the QP it ends */

#define RP_CTRL_REF_OPT		1u	/* a negative id names none */
#define RP_CTRL_REF_NEW_PD	2u	/* only with IBV_REREG_MR_CHANGE_PD */
#define RP_CTRL_REF_GSI		4u	/* the client's GSI agent's QPN */

/* An object a request names: it must be the client's. */
struct rp_ctrl_ref {
	uint16_t off;			/* its id in the slot; 0: none */
	uint8_t kind;			/* enum rp_quota_kind */
	uint8_t flags;			/* RP_CTRL_REF_* */
};

enum { RP_CTRL_KEEPS = 0, RP_CTRL_MAKES, RP_CTRL_ENDS };

#define RP_CTRL_REFS	4

struct rp_ctrl_desc {
	rp_ctrl_fn run;			/* NULL: no such op */
	uint32_t flags;			/* RP_CTRL_F_* */
	uint8_t acct;			/* RP_CTRL_MAKES, _ENDS or _KEEPS */
	uint8_t kind;			/* enum rp_quota_kind made or ended */
	uint16_t id;			/* the slot's offset of its id */
	struct rp_ctrl_ref own[RP_CTRL_REFS];
};

extern const struct rp_ctrl_desc rp_ctrl_descs[RP_CTRL_OP_MAX];

/* The 32-bit id at `off` of a request (a uint32_t or int32_t field). */
static inline uint32_t
rp_ctrl_id(const struct rp_ctrl_slot *s, uint16_t off)
{
	uint32_t id;

	memcpy(&id, (const uint8_t *)s + off, sizeof(id));
	return id;
}

int rp_ctrl_init(struct rp_dev *dev);
void rp_ctrl_fini(struct rp_dev *dev);
bool rp_ctrl_poll(struct rp_dev *dev);

/* ---- rp_stats.c: counter names; a counter of the device, all shards summed */
extern const char * const rp_stat_names[RP_STAT_MAX];
uint64_t rp_dev_stat(const struct rp_dev *dev, enum rp_stat s);

/* ---- rp_lcore.c */
int rp_lcore_launch(const struct rp_config *cfg);
void rp_lcore_stop(void);
bool rp_dev_poll(struct rp_dev *dev);

/* ---- rp_lcore_inline.c: a control request was posted to device `dev`:
 * its lcore, standing aside, runs a pass for it now */
void rp_engine_kick(unsigned int dev);

/* ---- rp_thread.c: a program's thread that runs inline passes gets an
 * lcore id, and so mempool caches; true the first time it gets one */
bool rp_thread_adopt(void);

#endif /* _RP_ENGINE_H_ */
