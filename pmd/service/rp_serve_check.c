/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The objects each attached client owns, and its control requests checked
 * and recorded against them: every object a request names must be the
 * client's (else EPERM), what it makes becomes the client's and what it
 * ends is no longer.  What each op names, makes and ends is its row of the
 * engine's control-op table (rp_ctrl_descs[], rp_ctrl.c); an op whose row
 * does not let an attached client send it is refused.
 */

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "rp_log.h"
#include "rp_service.h"

/* Per kind: its name, and the request that destroys one (its number at
 * `id` in the slot). */
#define SRV_ID(f)	offsetof(struct rp_ctrl_slot, u.f)
static const struct {
	const char *name;
	uint32_t op;
	uint32_t id;
} srv_kind[SRV_KINDS] = {
	[SRV_QP] = { "qp", RP_CTRL_QP_DESTROY, SRV_ID(qp.qpn) },
	[SRV_SRQ] = { "srq", RP_CTRL_SRQ_DESTROY, SRV_ID(srq.srqn) },
	[SRV_MW] = { "mw", RP_CTRL_MW_DEALLOC, SRV_ID(mw.rkey) },
	[SRV_MR] = { "mr", RP_CTRL_MR_DEREG, SRV_ID(mr.lkey) },
	[SRV_AH] = { "ah", RP_CTRL_AH_DESTROY, SRV_ID(ah.ahn) },
	[SRV_CQ] = { "cq", RP_CTRL_CQ_DESTROY, SRV_ID(cq.cqn) },
	[SRV_CHAN] = { "chan", RP_CTRL_CHAN_DESTROY, SRV_ID(chan.chn) },
	/* An async registration is named by the server's fd. */
	[SRV_ASYNC] = { "async", RP_CTRL_ASYNC_UNREG, SRV_ID(async.fd) },
	[SRV_PD] = { "pd", RP_CTRL_PD_FREE, SRV_ID(pd.pdn) },
};

/* ------------------------------------------------------------ objects */

struct srv_obj *
rp_srv_obj_find(struct srv_client *c, enum srv_kind kind, uint32_t dev,
		uint32_t id)
{
	for (uint32_t i = 0; i < c->nr_obj; i++)
		if (c->obj[i].kind == kind && c->obj[i].dev == dev &&
		    c->obj[i].id == id)
			return &c->obj[i];
	return NULL;
}

static bool
owns(struct srv_client *c, enum srv_kind kind, uint32_t dev, uint32_t id)
{
	return rp_srv_obj_find(c, kind, dev, id) != NULL;
}

static int
obj_add(struct srv_client *c, enum srv_kind kind, uint32_t dev, uint32_t id,
	int fd)
{
	if (c->nr_obj == c->cap_obj) {
		uint32_t cap = c->cap_obj ? c->cap_obj * 2 : 64;
		struct srv_obj *o = realloc(c->obj, cap * sizeof(*o));

		if (o == NULL)
			return -ENOMEM;
		c->obj = o;
		c->cap_obj = cap;
	}
	c->obj[c->nr_obj++] = (struct srv_obj){
		.kind = kind, .dev = dev, .id = id, .fd = fd,
	};
	return 0;
}

void
rp_srv_obj_del(struct srv_client *c, struct srv_obj *o)
{
	if (o->fd >= 0)
		close(o->fd);
	*o = c->obj[--c->nr_obj];
}

/* ----------------------------------------------------------- requests */

/*
 * Whether every object `s` names is the client's; fixes what the server
 * decides itself (the memory's PID).  0 or a negative errno.
 */
int
rp_srv_check(struct srv_client *c, uint32_t d, struct rp_ctrl_slot *s)
{
	const struct rp_ctrl_desc *o;

	/* Deny by default: an op must be declared an attached client's. */
	if (s->op >= RP_CTRL_OP_MAX ||
	    !(rp_ctrl_descs[s->op].flags & RP_CTRL_F_ATTACH))
		return -EINVAL;
	o = &rp_ctrl_descs[s->op];
	if (o->flags & RP_CTRL_F_MEM)
		s->u.mr.mem = c->mem_fd + 1;
	/* One GSI agent (its RDMA CM) per process and device. */
	if ((o->flags & RP_CTRL_F_GSI) && o->acct == RP_CTRL_MAKES &&
	    (s->u.qp_create.flags & RP_QP_F_GSI) && c->gsi[d] != 0)
		return -EBUSY;
	for (unsigned int i = 0; i < RP_CTRL_REFS && o->own[i].off != 0; i++) {
		const struct rp_ctrl_ref *r = &o->own[i];
		uint32_t id = rp_ctrl_id(s, r->off);

		if ((r->flags & RP_CTRL_REF_OPT) && (int32_t)id < 0)
			continue;
		if ((r->flags & RP_CTRL_REF_NEW_PD) &&
		    !(s->u.mr.flags & IBV_REREG_MR_CHANGE_PD))
			continue;
		if (r->flags & RP_CTRL_REF_GSI ? id == 0 || id != c->gsi[d] :
		    !owns(c, r->kind, d, id))
			return -EPERM;
	}
	return 0;
}

/* Records what a request that succeeded made (with the server's copy of
 * its descriptor, `fd`) or ended. */
int
rp_srv_account(struct srv_client *c, uint32_t d, const struct rp_ctrl_slot *s,
	       int fd)
{
	const struct rp_ctrl_desc *o;
	struct srv_obj *b;
	uint32_t id;

	if (s->op >= RP_CTRL_OP_MAX)
		return 0;
	o = &rp_ctrl_descs[s->op];
	id = rp_ctrl_id(s, o->id);
	switch (o->acct) {
	case RP_CTRL_MAKES:
		if ((o->flags & RP_CTRL_F_GSI) &&
		    (s->u.qp_create.flags & RP_QP_F_GSI))
			c->gsi[d] = id;
		return obj_add(c, o->kind, d, id, fd);
	case RP_CTRL_ENDS:
		if ((o->flags & RP_CTRL_F_GSI) && c->gsi[d] == id)
			c->gsi[d] = 0;
		b = rp_srv_obj_find(c, o->kind, d, id);
		if (b != NULL)
			rp_srv_obj_del(c, b);
		return 0;
	default:
		return 0;
	}
}

/* Destroys one object of a client that is gone (or its last request). */
void
rp_srv_obj_destroy(struct srv_client *c, struct srv_obj *o)
{
	struct rp_ctrl_slot s;
	int ret;
	uint32_t id = o->kind == SRV_ASYNC ? (uint32_t)o->fd : o->id;

	if (o->kind >= SRV_KINDS)
		return;
	memset(&s, 0, sizeof(s));
	s.arena = c->arena[o->dev];
	s.op = srv_kind[o->kind].op;
	memcpy((uint8_t *)&s + srv_kind[o->kind].id, &id, sizeof(id));
	ret = rp_ctrl_call(o->dev, &s);
	if (ret < 0) {
		RP_LOG(WARNING, "client %u (pid %d): cannot destroy %s %u of rocepmd%u: %s",
		       c->id, (int)c->cred.pid, srv_kind[o->kind].name, o->id,
		       o->dev, strerror(-ret));
		/* The engine may still signal its socket: left open, or it
		 * would signal whatever file reuses the number. */
		o->fd = -1;
	}
}
