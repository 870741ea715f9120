/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Quotas of the attach server: no attached process, and no uid with all
 * its processes, takes more than its share of a device's tables, and
 * connections that never say HELLO cannot hold the server's slots.
 *
 * Each process (connection) counts, per device, the objects it holds of
 * each kind and the pages its MRs span; each uid sums its processes.  A
 * request that would pass a limit fails with -EDQUOT before it reaches
 * the engine (a full device table stays -ENOMEM, as rdma-core says it),
 * and the host logs the process, the quota and the limit.  What a request
 * creates is counted once the engine has made it, what it destroys once
 * it is gone; a connection that ends gives everything back at once.
 *
 * A connection waits for its HELLO at most hello_ms, and at most
 * max_pending of them wait together, uid_pending of one uid: the others
 * are closed at accept, so that connections that never attach cannot
 * take the slots of those that would.
 *
 * The limits come from the [host] section (rp_serve_quotas(), before the
 * server starts); 0 is no limit.  Only the server's thread uses the rest.
 */

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <infiniband/verbs.h>
#include <rte_common.h>

#include "rp_log.h"
#include "rp_service.h"

#define SQ_PAGE_SHIFT	12
#define SQ_MAX_UIDS	64u		/* at most one per client slot */

/* SQ_REFUSED: its HELLO came, and the connection ends. */
enum { SQ_FREE = 0, SQ_PENDING, SQ_WELCOMED, SQ_REFUSED };

struct rp_sq_mr {
	uint32_t dev;
	uint32_t lkey;
	uint64_t pages;
};

/* All the processes of one uid. */
struct rp_sq_uid {
	uint32_t uid;
	uint32_t procs;			/* welcomed */
	uint32_t pending;		/* waiting for their HELLO */
	uint64_t used[RP_ATTACH_MAX_DEVS][RP_QUOTA_KINDS];
};

/* The defaults of doc/guides/config.rst, [host] (rp_cfg.c's keys): a
 * process a quarter of each device table, a uid half. */
static struct rp_host_cfg sq_cfg = {
	.hello_ms = 2000,
	.max_pending = 32,
	.uid_pending = 8,
	.uid_procs = 32,
	.proc = {
		[RP_QUOTA_QP] = 1024, [RP_QUOTA_SRQ] = 64,
		[RP_QUOTA_MW] = 1024, [RP_QUOTA_MR] = 1024,
		[RP_QUOTA_AH] = 1024, [RP_QUOTA_CQ] = 256,
		[RP_QUOTA_CHAN] = 64, [RP_QUOTA_ASYNC] = 16,
		[RP_QUOTA_PD] = 256,
		[RP_QUOTA_MR_PAGES] = 4194304,	/* 16 GiB */
	},
	.uid = {
		[RP_QUOTA_QP] = 2048, [RP_QUOTA_SRQ] = 128,
		[RP_QUOTA_MW] = 2048, [RP_QUOTA_MR] = 2048,
		[RP_QUOTA_AH] = 2048, [RP_QUOTA_CQ] = 512,
		[RP_QUOTA_CHAN] = 128, [RP_QUOTA_ASYNC] = 32,
		[RP_QUOTA_PD] = 512,
		[RP_QUOTA_MR_PAGES] = 8388608,	/* 32 GiB */
	},
};

static const char * const sq_name[RP_QUOTA_KINDS] = {
	[RP_QUOTA_QP] = "qps",
	[RP_QUOTA_SRQ] = "srqs",
	[RP_QUOTA_MW] = "mws",
	[RP_QUOTA_MR] = "mrs",
	[RP_QUOTA_AH] = "ahs",
	[RP_QUOTA_CQ] = "cqs",
	[RP_QUOTA_CHAN] = "channels",
	[RP_QUOTA_ASYNC] = "async_fds",
	[RP_QUOTA_PD] = "pds",
	[RP_QUOTA_MR_PAGES] = "mr_pages",
};

static struct rp_sq_uid sq_uids[SQ_MAX_UIDS];
static uint32_t sq_pending;

void
rp_serve_quotas(const struct rp_host_cfg *cfg)
{
	sq_cfg = *cfg;
}

static uint64_t
sq_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static struct rp_sq_uid *sq_uid(uint32_t uid, bool add);

int
rp_sq_accept(struct rp_sq_client *q, uint32_t id, const struct ucred *cr,
	     const char *comm)
{
	struct rp_sq_uid *u = sq_uid(cr->uid, true);

	if (sq_pending >= sq_cfg.max_pending || u == NULL ||
	    (sq_cfg.uid_pending != 0 && u->pending >= sq_cfg.uid_pending)) {
		RP_LOG_RL(rp_logtype, WARNING,
			  "client %u (pid %d, %s, uid %u): attach refused: connections waiting for their HELLO: %u of max_pending %u, %u of uid_pending %u",
			  id, (int)cr->pid, comm, (unsigned int)cr->uid,
			  sq_pending, sq_cfg.max_pending,
			  u != NULL ? u->pending : 0, sq_cfg.uid_pending);
		return -EAGAIN;
	}
	memset(q, 0, sizeof(*q));
	q->u = u;
	u->pending++;
	q->state = SQ_PENDING;
	q->id = id;
	q->pid = cr->pid;
	q->uid = cr->uid;
	q->comm = comm;
	q->deadline = sq_now_ms() + sq_cfg.hello_ms;
	sq_pending++;
	return 0;
}

static struct rp_sq_uid *
sq_uid(uint32_t uid, bool add)
{
	struct rp_sq_uid *free_u = NULL;

	for (unsigned int i = 0; i < SQ_MAX_UIDS; i++) {
		bool live = sq_uids[i].procs != 0 || sq_uids[i].pending != 0;

		if (live && sq_uids[i].uid == uid)
			return &sq_uids[i];
		if (!live && free_u == NULL)
			free_u = &sq_uids[i];
	}
	if (!add || free_u == NULL)
		return NULL;
	memset(free_u, 0, sizeof(*free_u));
	free_u->uid = uid;
	return free_u;
}

int
rp_sq_hello(struct rp_sq_client *q)
{
	struct rp_sq_uid *u = q->u;

	if (q->state != SQ_PENDING)
		return q->state == SQ_WELCOMED ? 0 : -EPROTO;
	sq_pending--;
	u->pending--;
	if (sq_cfg.uid_procs != 0 && u->procs >= sq_cfg.uid_procs) {
		RP_LOG(WARNING, "client %u (pid %d, %s, uid %u): attach refused: quota uid_processes reached (%u of %u): EDQUOT",
		       q->id, (int)q->pid, q->comm, q->uid, u->procs,
		       sq_cfg.uid_procs);
		q->state = SQ_REFUSED;
		q->u = NULL;
		return -EDQUOT;
	}
	q->state = SQ_WELCOMED;
	u->procs++;
	return 0;
}

bool
rp_sq_expired(struct rp_sq_client *q)
{
	if (q->state != SQ_PENDING || sq_now_ms() < q->deadline)
		return false;
	RP_LOG(WARNING, "client %u (pid %d, %s, uid %u): no HELLO within %u ms (hello_timeout_ms): connection closed",
	       q->id, (int)q->pid, q->comm, q->uid, sq_cfg.hello_ms);
	return true;
}

int
rp_sq_timeout_ms(void)
{
	/* A tenth of the deadline: closed at most 10% late. */
	return sq_pending == 0 ? -1 :
		(int)RTE_MAX(sq_cfg.hello_ms / 10u, 10u);
}

/* Pages [addr, addr + len) spans; an impossible range counts as all. */
static uint64_t
sq_pages(uint64_t addr, uint64_t len)
{
	if (len == 0)
		return 0;
	if (addr + len < addr)
		return UINT64_MAX >> SQ_PAGE_SHIFT;
	return ((addr + len - 1) >> SQ_PAGE_SHIFT) -
		(addr >> SQ_PAGE_SHIFT) + 1;
}

static struct rp_sq_mr *
sq_mr(struct rp_sq_client *q, uint32_t dev, uint32_t lkey)
{
	for (uint32_t i = 0; i < q->nr_mr; i++)
		if (q->mr[i].dev == dev && q->mr[i].lkey == lkey)
			return &q->mr[i];
	return NULL;
}

/*
 * What a request takes (rp_ctrl_descs[]): the kind of the object it makes,
 * or -1; and the pages of the MR it makes or moves, beyond those it held.
 */
static int
sq_takes(const struct rp_sq_client *q, uint32_t dev,
	 const struct rp_ctrl_slot *s, uint64_t *pages)
{
	const struct rp_ctrl_desc *o;

	*pages = 0;
	if (s->op >= RP_CTRL_OP_MAX)
		return -1;
	o = &rp_ctrl_descs[s->op];
	if ((o->flags & RP_CTRL_F_PAGES) && o->acct == RP_CTRL_MAKES) {
		*pages = sq_pages(s->u.mr.addr, s->u.mr.length);
	} else if ((o->flags & RP_CTRL_F_PAGES) &&
		   (s->u.mr.flags & IBV_REREG_MR_CHANGE_TRANSLATION)) {
		const struct rp_sq_mr *m =
			sq_mr((struct rp_sq_client *)(uintptr_t)q, dev,
			      rp_ctrl_id(s, o->id));
		uint64_t np = sq_pages(s->u.mr.addr, s->u.mr.length);

		if (m != NULL && np > m->pages)
			*pages = np - m->pages;
	}
	return o->acct == RP_CTRL_MAKES ? o->kind : -1;
}

/* Whether n more of kind k pass both limits; logs the one that does not. */
static bool
sq_fits(const struct rp_sq_client *q, uint32_t dev, unsigned int k,
	uint64_t n)
{
	const uint64_t *uu = q->state == SQ_WELCOMED ? q->u->used[dev] : NULL;

	if (sq_cfg.proc[k] != 0 && q->used[dev][k] + n > sq_cfg.proc[k]) {
		RP_LOG_RL(rp_logtype, WARNING,
			  "client %u (pid %d, %s, uid %u): rocepmd%u: quota %s reached (%" PRIu64 " of %u held, %" PRIu64 " more asked): EDQUOT",
			  q->id, (int)q->pid, q->comm, q->uid, dev, sq_name[k],
			  q->used[dev][k], sq_cfg.proc[k], n);
		return false;
	}
	if (uu != NULL && sq_cfg.uid[k] != 0 && uu[k] + n > sq_cfg.uid[k]) {
		RP_LOG_RL(rp_logtype, WARNING,
			  "client %u (pid %d, %s, uid %u): rocepmd%u: quota uid_%s reached (%" PRIu64 " of %u held by uid %u, %" PRIu64 " more asked): EDQUOT",
			  q->id, (int)q->pid, q->comm, q->uid, dev, sq_name[k],
			  uu[k], sq_cfg.uid[k], q->uid, n);
		return false;
	}
	return true;
}

int
rp_sq_check(struct rp_sq_client *q, uint32_t dev,
	    const struct rp_ctrl_slot *s)
{
	uint64_t pages;
	int k;

	if (dev >= RP_ATTACH_MAX_DEVS)
		return 0;
	k = sq_takes(q, dev, s, &pages);
	if (k >= 0 && !sq_fits(q, dev, (unsigned int)k, 1))
		return -EDQUOT;
	if (pages != 0 && !sq_fits(q, dev, RP_QUOTA_MR_PAGES, pages))
		return -EDQUOT;
	return 0;
}

static void
sq_add(struct rp_sq_client *q, uint32_t dev, unsigned int k, int64_t n)
{
	q->used[dev][k] += (uint64_t)n;
	if (q->state == SQ_WELCOMED)
		q->u->used[dev][k] += (uint64_t)n;
}

/* The pages of an MR, kept to give them back at DEREG. */
static void
sq_mr_add(struct rp_sq_client *q, uint32_t dev, uint32_t lkey,
	  uint64_t pages)
{
	if (q->nr_mr == q->cap_mr) {
		uint32_t cap = q->cap_mr ? q->cap_mr * 2 : 16;
		struct rp_sq_mr *m = realloc(q->mr, cap * sizeof(*m));

		/* Uncounted from here on: the MR itself stays counted. */
		if (m == NULL)
			return;
		q->mr = m;
		q->cap_mr = cap;
	}
	q->mr[q->nr_mr++] = (struct rp_sq_mr){ dev, lkey, pages };
	sq_add(q, dev, RP_QUOTA_MR_PAGES, (int64_t)pages);
}

static void
sq_mr_del(struct rp_sq_client *q, uint32_t dev, uint32_t lkey)
{
	struct rp_sq_mr *m = sq_mr(q, dev, lkey);

	if (m == NULL)
		return;
	sq_add(q, dev, RP_QUOTA_MR_PAGES, -(int64_t)m->pages);
	*m = q->mr[--q->nr_mr];
}

void
rp_sq_done(struct rp_sq_client *q, uint32_t dev,
	   const struct rp_ctrl_slot *s)
{
	const struct rp_ctrl_desc *o;
	uint64_t pages;
	uint32_t id;
	int k;

	if (dev >= RP_ATTACH_MAX_DEVS || s->op >= RP_CTRL_OP_MAX)
		return;
	o = &rp_ctrl_descs[s->op];
	id = rp_ctrl_id(s, o->id);
	k = sq_takes(q, dev, s, &pages);
	if (k >= 0)
		sq_add(q, dev, (unsigned int)k, 1);
	if (o->flags & RP_CTRL_F_PAGES) {
		if (o->acct == RP_CTRL_MAKES) {
			sq_mr_add(q, dev, id, pages);
		} else if (s->u.mr.flags & IBV_REREG_MR_CHANGE_TRANSLATION) {
			sq_mr_del(q, dev, id);
			sq_mr_add(q, dev, id,
				  sq_pages(s->u.mr.addr, s->u.mr.length));
		}
		return;
	}
	if (o->acct != RP_CTRL_ENDS)
		return;
	/* An MR's pages go with it. */
	if (o->kind == RP_QUOTA_MR)
		sq_mr_del(q, dev, id);
	if (q->used[dev][o->kind] != 0)
		sq_add(q, dev, o->kind, -1);
}

void
rp_sq_close(struct rp_sq_client *q)
{
	if (q->state == SQ_PENDING) {
		sq_pending--;
		q->u->pending--;
	} else if (q->state == SQ_WELCOMED) {
		for (unsigned int d = 0; d < RP_ATTACH_MAX_DEVS; d++)
			for (unsigned int k = 0; k < RP_QUOTA_KINDS; k++)
				q->u->used[d][k] -= q->used[d][k];
		q->u->procs--;
	}
	free(q->mr);
	memset(q, 0, sizeof(*q));
}
