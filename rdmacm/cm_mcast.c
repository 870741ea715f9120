/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Multicast on an RDMA CM id: rdma_join_multicast, rdma_join_multicast_ex
 * and rdma_leave_multicast, the RoCE way as the kernel's rdma_cm does it
 * (cma_iboe_join_multicast): no SA, the group's GID is its IP address
 * (IPv4 as ::ffff:a.b.c.d, cma_iboe_set_mgid for RoCEv2, IPv6 as is), and
 * the join is answered at once by RDMA_CM_EVENT_MULTICAST_JOIN, whose
 * param.ud is what sends to the group: an AH to the group GID from the
 * id's source GID, QPN 0xFFFFFF, the port space's Q_Key.
 *
 * As librdmacm (ucma_process_join), the id's QP is attached to the group
 * when the application takes that event, and detached by the leave; a
 * send-only join attaches nothing.  A full member's join also makes the
 * kernel join the IP group on the interface that holds the device's
 * address (the kernel's cma_igmp_send; MLD for IPv6 as well), so that the
 * NIC's filter, bridges and snooping switches pass the group's frames;
 * a UDP socket per membership holds it until the leave.
 *
 * Unlike the kernel, which answers ENOTSUPP for an IPv6 group on a RoCEv2
 * port, IPv6 groups work.  All under cm_lock but the attach.
 */

#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "cm.h"
#include "cm_proto.h"

#define CM_MC_QPN	0xFFFFFFu	/* a datagram to the group's QPs */
#define CM_MC_ROUTE_PORT 4791	/* any: a route lookup sends nothing */

struct cm_mc {
	struct cm_mc *next;		/* the id's joins, newest first */
	struct cm_id *c;
	sa_family_t family;
	union ibv_gid mgid;
	void *context;			/* the event's param.ud.private_data */
	bool send_only;
	bool attached;			/* the id's QP, by this join */
	int sock;			/* the kernel's membership, or -1 */
	unsigned int events_out;	/* delivered, not acked */
};

static bool
cm_mc_addr_ok(const struct sockaddr *sa, union ibv_gid *mgid)
{
	static const uint8_t zero[16];

	cm_sa_gid(sa, mgid);
	if (sa->sa_family == AF_INET)
		return IN_MULTICAST(ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr));
	return memcmp(mgid->raw, zero, 16) != 0 && mgid->raw[0] == 0xff;
}

/* A group's GID: ::ffff:224.0.0.0/100 or ff00::/8. */
bool
cm_gid_is_mc(const union ibv_gid *gid)
{
	if (cm_gid_is_v4(gid))
		return (gid->raw[12] & 0xf0) == 0xe0;
	return gid->raw[0] == 0xff;
}

/*
 * rdma_resolve_addr of a group without a source address.  The kernel
 * routes it (ip_route_output: the interface of the route to the group,
 * its address the source) and takes the RDMA device of that interface:
 * so do we when that address is a device's; a device whose address the
 * kernel does not hold (a port of rocepmd's own), or no route to the
 * group (a namespace without a default route), takes the first device's
 * address of the group's family, link-local for a link-local group.
 */
struct cm_dev *
cm_mc_route_dev(const union ibv_gid *group, uint8_t *idx)
{
	bool v4 = cm_gid_is_v4(group);
	/* scope 1 or 2 (ff02::1...): no route without an interface */
	bool ll = !v4 && (group->raw[1] & 0x0f) <= 2;
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	struct cm_dev *d = NULL;
	int s = -1;

	memset(&ss, 0, sizeof(ss));
	if (v4) {
		struct sockaddr_in *sin = (struct sockaddr_in *)&ss;

		sin->sin_family = AF_INET;
		sin->sin_port = htons(CM_MC_ROUTE_PORT);
		memcpy(&sin->sin_addr, &group->raw[12], 4);
	} else {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&ss;

		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons(CM_MC_ROUTE_PORT);
		memcpy(&sin6->sin6_addr, group->raw, 16);
	}
	if (!ll)
		s = socket(ss.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	/* A UDP connect sends nothing: it routes and picks the source. */
	if (s >= 0 && connect(s, (struct sockaddr *)&ss,
			      v4 ? sizeof(struct sockaddr_in) :
			      sizeof(struct sockaddr_in6)) == 0 &&
	    getsockname(s, (struct sockaddr *)&ss, &len) == 0) {
		union ibv_gid src;

		cm_sa_gid((struct sockaddr *)&ss, &src);
		d = cm_dev_for_gid(&src, true, idx);
	}
	if (s >= 0)
		close(s);
	if (d == NULL)
		d = cm_dev_for_family(v4, ll, idx);
	return d;
}

/* The kernel interface holding @ip (a GID of the device), or 0. */
static unsigned int
cm_mc_ifindex(const union ibv_gid *ip)
{
	struct ifaddrs *ifa, *i;
	unsigned int idx = 0;
	bool v4 = cm_gid_is_v4(ip);

	if (getifaddrs(&ifa) != 0)
		return 0;
	for (i = ifa; i != NULL && idx == 0; i = i->ifa_next) {
		const struct sockaddr *a = i->ifa_addr;

		if (a == NULL || a->sa_family != (v4 ? AF_INET : AF_INET6))
			continue;
		if (v4 ? memcmp(&((const struct sockaddr_in *)a)->sin_addr,
				&ip->raw[12], 4) == 0 :
		    memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr,
			   ip->raw, 16) == 0)
			idx = if_nametoindex(i->ifa_name);
	}
	freeifaddrs(ifa);
	return idx;
}

/*
 * The kernel joins the IP group on the interface of the id's address: a
 * socket that holds the membership, or -1 when there is no such interface
 * (a port whose addresses are rocepmd's own: nothing filters its frames).
 */
static int
cm_mc_kernel_join(struct cm_id *c, const struct cm_mc *mc)
{
	const union ibv_gid *src = &c->dev->gid[c->sgid_index];
	unsigned int ifindex = cm_mc_ifindex(src);
	char g[INET6_ADDRSTRLEN];
	int s, ret;

	inet_ntop(AF_INET6, mc->mgid.raw, g, sizeof(g));
	if (ifindex == 0) {
		CM_LOG(DEBUG, "group %s: no interface has the device's address: the kernel joins nothing",
		       g);
		return -1;
	}
	s = socket(mc->family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (s < 0) {
		CM_LOG(NOTICE, "group %s: socket: %s: the kernel does not join it",
		       g, strerror(errno));
		return -1;
	}
	if (mc->family == AF_INET) {
		struct ip_mreqn m = { .imr_ifindex = (int)ifindex };

		memcpy(&m.imr_multiaddr, &mc->mgid.raw[12], 4);
		ret = setsockopt(s, IPPROTO_IP, IP_ADD_MEMBERSHIP, &m,
				 sizeof(m));
	} else {
		struct ipv6_mreq m = { .ipv6mr_interface = ifindex };

		memcpy(&m.ipv6mr_multiaddr, mc->mgid.raw, 16);
		ret = setsockopt(s, IPPROTO_IPV6, IPV6_JOIN_GROUP, &m,
				 sizeof(m));
	}
	if (ret != 0) {
		/* The engine takes the group all the same. */
		CM_LOG(NOTICE, "group %s: the kernel cannot join it on interface %u: %s; a filtering NIC or switch may drop its frames",
		       g, ifindex, strerror(errno));
		close(s);
		return -1;
	}
	CM_LOG(DEBUG, "group %s: joined by the kernel on interface %u", g,
	       ifindex);
	return s;
}

static int
cm_mc_join(struct rdma_cm_id *id, const struct sockaddr *addr,
	   uint16_t join_flags, void *context)
{
	struct cm_id *c = cm_id(id);
	struct ibv_ah_attr *ah;
	struct cm_event *e;
	struct cm_mc *mc;
	union ibv_gid mgid;
	int ret;

	if (c == NULL || addr == NULL)
		return -EINVAL;
	if (addr->sa_family == AF_IB) {
		CM_LOG(NOTICE, "AF_IB groups need an InfiniBand fabric: rocepmd devices are RoCE");
		return -EAFNOSUPPORT;
	}
	if (addr->sa_family != AF_INET && addr->sa_family != AF_INET6)
		return -EINVAL;
	/* The kernel's rdma_join_multicast: a UD id bound to a device. */
	if (c->dev == NULL || c->id.qp_type != IBV_QPT_UD ||
	    !(c->state == CM_S_ADDR_RESOLVED ||
	      (c->state == CM_S_IDLE && c->bound)))
		return -EINVAL;
	if (!cm_mc_addr_ok(addr, &mgid)) {
		char a[INET6_ADDRSTRLEN];

		inet_ntop(AF_INET6, mgid.raw, a, sizeof(a));
		CM_LOG(NOTICE, "join: %s is not a multicast group", a);
		return -EINVAL;
	}
	/* The engine sends IPv4 from ::ffff: GIDs only, IPv6 from others. */
	if (cm_gid_is_v4(&c->dev->gid[c->sgid_index]) !=
	    (addr->sa_family == AF_INET)) {
		CM_LOG(NOTICE, "join: the group and the id's address are of different families");
		return -EINVAL;
	}
	mc = calloc(1, sizeof(*mc));
	if (mc == NULL)
		return -ENOMEM;
	mc->c = c;
	mc->family = addr->sa_family;
	mc->mgid = mgid;
	mc->context = context;
	mc->send_only = join_flags == RDMA_MC_JOIN_FLAG_SENDONLY_FULLMEMBER;
	/* The kernel: only a full member joins the IP group. */
	mc->sock = mc->send_only ? -1 : cm_mc_kernel_join(c, mc);
	ret = cm_event_push(c, RDMA_CM_EVENT_MULTICAST_JOIN, 0, NULL, NULL, 0);
	if (ret < 0) {
		if (mc->sock >= 0)
			close(mc->sock);
		free(mc);
		return ret;
	}
	e = cm_event_last(c->chan);
	e->mc = mc;
	e->ev.param.ud.private_data = context;
	e->ev.param.ud.qp_num = CM_MC_QPN;
	e->ev.param.ud.qkey = RDMA_UDP_QKEY;
	ah = &e->ev.param.ud.ah_attr;
	/* ib_init_ah_from_mcmember for RoCE: no LID, SL 0, the GRH. */
	ah->is_global = 1;
	ah->port_num = CM_PORT;
	ah->grh.dgid = mgid;
	ah->grh.sgid_index = c->sgid_index;
	ah->grh.hop_limit = CM_HOP_LIMIT;	/* IPV6_DEFAULT_HOPLIMIT */
	mc->next = c->mcs;
	c->mcs = mc;
	return 0;
}

/* rdma_get_cm_event, under cm_lock: a join's event leaves the queue. */
void
cm_mc_taken(struct cm_event *e)
{
	e->mc->events_out++;
}

/*
 * rdma_get_cm_event, without cm_lock: the id's QP joins the group as the
 * application takes the event (librdmacm's ucma_process_join), else the
 * event becomes MULTICAST_ERROR.  The join cannot go before the event is
 * acked (rdma_leave_multicast and rdma_destroy_id wait for it).
 */
void
cm_mc_deliver(struct cm_event *e)
{
	struct cm_mc *mc = e->mc;
	struct ibv_qp *qp = mc->c->id.qp;
	int ret;

	if (e->ev.event != RDMA_CM_EVENT_MULTICAST_JOIN || qp == NULL ||
	    mc->send_only)
		return;
	ret = ibv_attach_mcast(qp, &mc->mgid, 0);
	pthread_mutex_lock(&cm_lock);
	if (ret == 0) {
		mc->attached = true;
	} else {
		char g[INET6_ADDRSTRLEN];

		inet_ntop(AF_INET6, mc->mgid.raw, g, sizeof(g));
		CM_LOG(NOTICE, "QP %u cannot join group %s: %s", qp->qp_num,
		       g, strerror(ret));
		e->ev.event = RDMA_CM_EVENT_MULTICAST_ERROR;
		e->ev.status = -ret;
	}
	pthread_mutex_unlock(&cm_lock);
}

/* rdma_ack_cm_event, under cm_lock. */
void
cm_mc_acked(struct cm_event *e)
{
	if (--e->mc->events_out == 0)
		pthread_cond_broadcast(&e->owner->acked);
}

/* Drop one join of c's (unlinked): its QP leaves unless still joined. */
static void
cm_mc_free(struct cm_id *c, struct cm_mc *mc)
{
	bool still = false;

	for (struct cm_mc *o = c->mcs; o != NULL; o = o->next)
		if (o->attached &&
		    memcmp(o->mgid.raw, mc->mgid.raw, 16) == 0)
			still = true;
	if (mc->attached && !still && c->id.qp != NULL)
		ibv_detach_mcast(c->id.qp, &mc->mgid, 0);
	if (mc->sock >= 0)
		close(mc->sock);	/* the kernel leaves the IP group */
	free(mc);
}

/* Remove c's queued events of one join. */
static void
cm_mc_drop_queued(struct cm_id *c, const struct cm_mc *mc)
{
	struct cm_event *e, *next;

	if (c->chan == NULL)
		return;
	for (e = TAILQ_FIRST(&c->chan->queue); e != NULL; e = next) {
		next = TAILQ_NEXT(e, link);
		if (e->mc != mc)
			continue;
		TAILQ_REMOVE(&c->chan->queue, e, link);
		/* Its eventfd count stays: get_cm_event skips it. */
		if (--c->events_out == 0)
			pthread_cond_broadcast(&c->acked);
		free(e);
	}
}

/* rdma_destroy_id, under cm_lock, the id's events acked: leave all. */
void
cm_mc_leave_all(struct cm_id *c)
{
	struct cm_mc *mc;

	while ((mc = c->mcs) != NULL) {
		c->mcs = mc->next;
		cm_mc_free(c, mc);
	}
}

/* A join under the CM's lock, as the librdmacm calls answer it. */
static int
cm_mc_join_call(struct rdma_cm_id *id, struct sockaddr *addr, uint16_t flags,
		void *context)
{
	int ret;

	pthread_mutex_lock(&cm_lock);
	ret = cm_mc_join(id, addr, flags, context);
	pthread_mutex_unlock(&cm_lock);
	if (ret < 0) {
		errno = -ret;
		return -1;
	}
	return cm_complete(cm_id(id));
}

CM_EXPORT int
rdma_join_multicast(struct rdma_cm_id *id, struct sockaddr *addr,
		    void *context)
{
	return cm_mc_join_call(id, addr, RDMA_MC_JOIN_FLAG_FULLMEMBER, context);
}

CM_EXPORT int
rdma_join_multicast_ex(struct rdma_cm_id *id,
		       struct rdma_cm_join_mc_attr_ex *attr, void *context)
{
	/* librdmacm's checks, in its order. */
	if (attr == NULL) {
		errno = EINVAL;
		return -1;
	}
	if (attr->comp_mask >= RDMA_CM_JOIN_MC_ATTR_RESERVED) {
		errno = EOPNOTSUPP;
		return -1;
	}
	if (!(attr->comp_mask & RDMA_CM_JOIN_MC_ATTR_ADDRESS) ||
	    !(attr->comp_mask & RDMA_CM_JOIN_MC_ATTR_JOIN_FLAGS) ||
	    attr->join_flags >= RDMA_MC_JOIN_FLAG_RESERVED) {
		errno = EINVAL;
		return -1;
	}
	return cm_mc_join_call(id, attr->addr, (uint16_t)attr->join_flags,
			       context);
}

CM_EXPORT int
rdma_leave_multicast(struct rdma_cm_id *id, struct sockaddr *addr)
{
	struct cm_id *c = cm_id(id);
	struct cm_mc **pos, *mc = NULL;
	union ibv_gid mgid;

	if (c == NULL || addr == NULL ||
	    (addr->sa_family != AF_INET && addr->sa_family != AF_INET6)) {
		errno = EINVAL;
		return -1;
	}
	/* A synchronous id's join event, left on it by the join. */
	if (c->ucma.sync && id->event != NULL) {
		rdma_ack_cm_event(id->event);
		id->event = NULL;
	}
	cm_sa_gid(addr, &mgid);
	pthread_mutex_lock(&cm_lock);
	for (pos = &c->mcs; *pos != NULL; pos = &(*pos)->next)
		if ((*pos)->family == addr->sa_family &&
		    memcmp((*pos)->mgid.raw, mgid.raw, 16) == 0) {
			mc = *pos;
			*pos = mc->next;
			break;
		}
	if (mc == NULL) {
		pthread_mutex_unlock(&cm_lock);
		errno = EADDRNOTAVAIL;	/* librdmacm: not joined */
		return -1;
	}
	/* librdmacm: the join's delivered events acked first. */
	cm_mc_drop_queued(c, mc);
	while (mc->events_out != 0)
		pthread_cond_wait(&c->acked, &cm_lock);
	cm_mc_free(c, mc);
	pthread_mutex_unlock(&cm_lock);
	return 0;
}
