/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * An id's addresses (see cm.c): sockaddrs as GIDs, local ports and their
 * claim on the host, the listener a request is for, and the exported
 * rdma_bind_addr, rdma_resolve_addr, rdma_resolve_route and rdma_listen.
 * Resolution is local, with no wait: the device on the destination's
 * subnet (or the route's, for a multicast group) and its GID table.
 */

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cm.h"
#include "cm_proto.h"

static uint16_t cm_next_port = 49152;

/* ::ffff:a.b.c.d: an IPv4 address as RoCEv2 GIDs hold it. */
void
cm_gid_from_ipv4(union ibv_gid *gid, const void *ipv4)
{
	memset(gid, 0, sizeof(*gid));
	gid->raw[10] = 0xff;
	gid->raw[11] = 0xff;
	memcpy(&gid->raw[12], ipv4, 4);
}

/* The address of an AF_INET or AF_INET6 sockaddr, as a GID. */
void
cm_sa_gid(const struct sockaddr *sa, union ibv_gid *gid)
{
	if (sa->sa_family == AF_INET6)
		memcpy(gid->raw, &((const struct sockaddr_in6 *)sa)->sin6_addr,
		       16);
	else
		cm_gid_from_ipv4(gid,
				 &((const struct sockaddr_in *)sa)->sin_addr);
}

uint16_t
cm_sa_port(const struct sockaddr *sa)
{
	return ntohs(sa->sa_family == AF_INET6 ?
		     ((const struct sockaddr_in6 *)sa)->sin6_port :
		     ((const struct sockaddr_in *)sa)->sin_port);
}

static size_t
cm_sa_len(const struct sockaddr *sa)
{
	return sa->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6) :
		sizeof(struct sockaddr_in);
}

/* INADDR_ANY or in6addr_any. */
static bool
cm_gid_any(const union ibv_gid *gid)
{
	static const uint8_t zero[16];

	return memcmp(gid->raw, zero, 16) == 0 ||
		(cm_gid_is_v4(gid) && memcmp(&gid->raw[12], zero, 4) == 0);
}

/* Set @sa to address @gid of @family (AF_INET: its last four bytes). */
void
cm_sa_set(struct sockaddr *sa, sa_family_t family, const union ibv_gid *gid,
	  uint16_t port)
{
	if (family == AF_INET6) {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)sa;

		memset(s6, 0, sizeof(*s6));
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons(port);
		memcpy(&s6->sin6_addr, gid->raw, 16);
	} else {
		struct sockaddr_in *s4 = (struct sockaddr_in *)sa;

		memset(s4, 0, sizeof(*s4));
		s4->sin_family = AF_INET;
		s4->sin_port = htons(port);
		memcpy(&s4->sin_addr, &gid->raw[12], 4);
	}
}

static const char *
cm_sa_str(const struct sockaddr *sa, char *buf, size_t len)
{
	const void *a = sa->sa_family == AF_INET6 ?
		(const void *)&((const struct sockaddr_in6 *)sa)->sin6_addr :
		(const void *)&((const struct sockaddr_in *)sa)->sin_addr;

	if (inet_ntop(sa->sa_family, a, buf, (socklen_t)len) == NULL)
		snprintf(buf, len, "?");
	return buf;
}

uint64_t
cm_service_id(enum rdma_port_space ps, uint16_t port)
{
	return (ps == RDMA_PS_UDP ? CM_SERVICE_ID_UDP : CM_SERVICE_ID_TCP) |
		port;
}

struct sockaddr *
cm_src(struct cm_id *c)
{
	return &c->id.route.addr.src_addr;
}

struct sockaddr *
cm_dst(struct cm_id *c)
{
	return &c->id.route.addr.dst_addr;
}

/*
 * The listener for a request to @dst of @family: as the kernel's
 * cma_match_private_data, an AF_INET listener takes IPv4 requests only,
 * an AF_INET6 one (in6addr_any too) IPv6 ones only.
 */
struct cm_id *
cm_find_listener(struct cm_dev *d, enum rdma_port_space ps, uint16_t port,
		 sa_family_t family, const union ibv_gid *dst)
{
	union ibv_gid own;
	struct cm_id *c;

	TAILQ_FOREACH(c, &cm_ids, link) {
		if (c->state != CM_S_LISTEN || c->id.ps != ps ||
		    c->port != port || cm_src(c)->sa_family != family)
			continue;
		cm_sa_gid(cm_src(c), &own);
		if (cm_gid_any(&own) ||
		    (memcmp(own.raw, dst->raw, 16) == 0 && c->dev == d))
			return c;
	}
	return NULL;
}

/*
 * A port is taken by an id bound to the same address or to either
 * family's any address (the kernel's, with the bindv6only default of 0).
 */
static bool
cm_port_in_use(enum rdma_port_space ps, uint16_t port,
	       const union ibv_gid *ip)
{
	union ibv_gid cip;
	struct cm_id *c;

	TAILQ_FOREACH(c, &cm_ids, link) {
		if (!c->bound || c->id.ps != ps || c->port != port)
			continue;
		cm_sa_gid(cm_src(c), &cip);
		if (cm_gid_any(&cip) || cm_gid_any(ip) ||
		    memcmp(cip.raw, ip->raw, 16) == 0)
			return true;
	}
	return false;
}

static int
cm_bind_port(struct cm_id *c, uint16_t port, sa_family_t family,
	     const union ibv_gid *ip)
{
	int ret;

	if (port == 0) {
		/* Free here, and claimed by no other process (the engine
		 * sends a port's REQs to the process that claimed it). */
		for (unsigned int i = 0; i < 16384; i++) {
			uint16_t p = cm_next_port;

			cm_next_port = cm_next_port == 65535 ? 49152 :
				cm_next_port + 1;
			if (cm_port_in_use(c->id.ps, p, ip))
				continue;
			ret = cm_agent_claim(cm_service_id(c->id.ps, p), true);
			if (ret == 0) {
				port = p;
				break;
			}
			if (ret != -EADDRINUSE)
				return ret;
		}
		if (port == 0)
			return -EADDRINUSE;
	} else if (cm_port_in_use(c->id.ps, port, ip)) {
		return -EADDRINUSE;
	} else {
		ret = cm_agent_claim(cm_service_id(c->id.ps, port), true);
		if (ret < 0) {
			if (ret == -EADDRINUSE)
				CM_LOG(NOTICE, "port %u: claimed by another process on this host",
				       port);
			return ret;
		}
	}
	c->port = port;
	c->bound = true;
	cm_sa_set(cm_src(c), family, ip, port);
	return 0;
}

void
cm_attach_dev(struct cm_id *c, struct cm_dev *d, uint8_t sgid_index)
{
	c->dev = d;
	c->sgid_index = sgid_index;
	c->ucma.cma_dev = &d->ucma;
	c->id.verbs = d->ctx;
	if (c->id.pd == NULL)
		c->id.pd = d->pd;	/* librdmacm: the device's own PD */
	c->id.port_num = CM_PORT;
	c->id.route.addr.addr.ibaddr.sgid = d->gid[sgid_index];
	c->id.route.addr.addr.ibaddr.pkey = htons(CM_PKEY_DEFAULT);
}

static int
cm_check_sa(const struct sockaddr *sa)
{
	if (sa == NULL)
		return -EINVAL;
	if (sa->sa_family == AF_IB) {
		CM_LOG(NOTICE, "AF_IB addresses need an InfiniBand fabric: rocepmd devices are RoCE, use AF_INET or AF_INET6");
		return -EAFNOSUPPORT;
	}
	if (sa->sa_family != AF_INET && sa->sa_family != AF_INET6)
		return -EINVAL;
	return 0;
}

/* ------------------------------------------------ exported: addresses */

CM_EXPORT int
rdma_bind_addr(struct rdma_cm_id *id, struct sockaddr *addr)
{
	struct cm_id *c = cm_id(id);
	struct cm_dev *d = NULL;
	union ibv_gid ip;
	uint8_t idx = 0;
	int ret;

	ret = cm_check_sa(addr);
	if (ret == 0 && (c == NULL || c->bound))
		ret = -EINVAL;
	if (ret < 0) {
		errno = -ret;
		return -1;
	}
	cm_sa_gid(addr, &ip);
	pthread_mutex_lock(&cm_lock);
	if (!cm_gid_any(&ip)) {
		d = cm_dev_for_gid(&ip, true, &idx);
		if (d == NULL) {
			char a[INET6_ADDRSTRLEN];

			CM_LOG(NOTICE, "cannot bind to %s: no rocepmd device has that address",
			       cm_sa_str(addr, a, sizeof(a)));
			ret = -EADDRNOTAVAIL;
		}
	}
	if (ret == 0)
		ret = cm_bind_port(c, cm_sa_port(addr), addr->sa_family, &ip);
	if (ret == 0 && d != NULL) {
		cm_attach_dev(c, d, idx);
		if (addr->sa_family == AF_INET6)	/* keep its scope */
			c->id.route.addr.src_sin6.sin6_scope_id =
				((const struct sockaddr_in6 *)addr)->sin6_scope_id;
	}
	pthread_mutex_unlock(&cm_lock);
	return cm_errno(ret);
}

/*
 * The device and our GID to reach @dst from: the source address's given
 * (@src, or the bound one), else the device on dst's subnet, or for a
 * multicast group the device the route to it takes.  The GID
 * must be of dst's family (the engine sends IPv4 from ::ffff: GIDs only).
 */
static struct cm_dev *
cm_route_dev(struct cm_id *c, const union ibv_gid *src,
	     const union ibv_gid *dst, uint8_t *idx)
{
	struct cm_dev *d;

	if (src != NULL && !cm_gid_any(src))
		d = cm_dev_for_gid(src, true, idx);
	else if (c->dev != NULL) {
		d = c->dev;
		*idx = c->sgid_index;
	} else if (cm_gid_is_mc(dst)) {
		d = cm_mc_route_dev(dst, idx);	/* no subnet holds a group */
	} else {
		d = cm_dev_for_gid(dst, false, idx);
	}
	if (d != NULL && cm_gid_is_v4(&d->gid[*idx]) != cm_gid_is_v4(dst))
		return NULL;
	return d;
}

CM_EXPORT int
rdma_resolve_addr(struct rdma_cm_id *id, struct sockaddr *src_addr,
		  struct sockaddr *dst_addr, int timeout_ms)
{
	struct cm_id *c = cm_id(id);
	union ibv_gid src_ip, dst_ip;
	struct cm_dev *d;
	uint8_t idx = 0;
	int ret;

	(void)timeout_ms;	/* resolution is local: no wait */
	ret = cm_check_sa(dst_addr);
	if (ret == 0 && src_addr != NULL) {
		ret = cm_check_sa(src_addr);
		/* librdmacm and the kernel: both of one family */
		if (ret == 0 && src_addr->sa_family != dst_addr->sa_family)
			ret = -EINVAL;
	}
	if (ret == 0 && (c == NULL || c->state != CM_S_IDLE))
		ret = -EINVAL;
	if (ret == 0 && c->bound && src_addr == NULL &&
	    cm_src(c)->sa_family != dst_addr->sa_family)
		ret = -EINVAL;
	if (ret < 0) {
		errno = -ret;
		return -1;
	}
	memset(&src_ip, 0, sizeof(src_ip));	/* none given: any */
	if (src_addr != NULL)
		cm_sa_gid(src_addr, &src_ip);
	cm_sa_gid(dst_addr, &dst_ip);
	pthread_mutex_lock(&cm_lock);
	d = cm_route_dev(c, src_addr != NULL ? &src_ip : NULL, &dst_ip, &idx);
	if (!c->bound)
		ret = cm_bind_port(c, src_addr != NULL ? cm_sa_port(src_addr) : 0,
				   dst_addr->sa_family,
				   d != NULL ? &d->gid[idx] : &src_ip);
	if (ret == 0) {
		memcpy(cm_dst(c), dst_addr, cm_sa_len(dst_addr));
		if (d == NULL) {
			char a[INET6_ADDRSTRLEN];

			CM_LOG(NOTICE, "no rocepmd device on the subnet of %s%s",
			       cm_sa_str(dst_addr, a, sizeof(a)),
			       src_addr != NULL ? " with that source address" : "");
			ret = cm_event_push(c, RDMA_CM_EVENT_ADDR_ERROR,
					    -ENETUNREACH, NULL, NULL, 0);
		} else {
			uint32_t scope = dst_addr->sa_family == AF_INET6 ?
				((const struct sockaddr_in6 *)dst_addr)->sin6_scope_id : 0;

			cm_attach_dev(c, d, idx);
			cm_sa_set(cm_src(c), dst_addr->sa_family, &d->gid[idx],
				  c->port);
			if (scope != 0)		/* link-local: the same link */
				c->id.route.addr.src_sin6.sin6_scope_id = scope;
			id->route.addr.addr.ibaddr.dgid = dst_ip;
			c->state = CM_S_ADDR_RESOLVED;
			ret = cm_event_push(c, RDMA_CM_EVENT_ADDR_RESOLVED, 0,
					    NULL, NULL, 0);
		}
	}
	pthread_mutex_unlock(&cm_lock);
	return cm_errno_complete(c, ret);
}

CM_EXPORT int
rdma_resolve_route(struct rdma_cm_id *id, int timeout_ms)
{
	struct cm_id *c = cm_id(id);
	struct ibv_sa_path_rec *p;
	int ret = 0;

	(void)timeout_ms;
	if (c == NULL) {
		errno = EINVAL;
		return -1;
	}
	p = calloc(1, sizeof(*p));
	if (p == NULL) {
		errno = ENOMEM;
		return -1;
	}
	pthread_mutex_lock(&cm_lock);
	if (c->state != CM_S_ADDR_RESOLVED) {
		ret = -EINVAL;
		free(p);
	} else {
		/* RoCE: the path is the GID pair; the MTU is the device's. */
		p->sgid = id->route.addr.addr.ibaddr.sgid;
		p->dgid = id->route.addr.addr.ibaddr.dgid;
		p->pkey = htons(CM_PKEY_DEFAULT);
		p->hop_limit = CM_HOP_LIMIT;
		p->mtu = (uint8_t)c->dev->mtu;
		p->mtu_selector = 2;	/* exactly */
		p->reversible = 1;
		p->numb_path = 1;
		free(id->route.path_rec);
		id->route.path_rec = p;
		id->route.num_paths = 1;
		c->path_mtu = (uint8_t)c->dev->mtu;
		c->state = CM_S_ROUTE_RESOLVED;
		ret = cm_event_push(c, RDMA_CM_EVENT_ROUTE_RESOLVED, 0, NULL,
				    NULL, 0);
	}
	pthread_mutex_unlock(&cm_lock);
	return cm_errno_complete(c, ret);
}

CM_EXPORT int
rdma_listen(struct rdma_cm_id *id, int backlog)
{
	struct cm_id *c = cm_id(id);
	int ret = 0;

	(void)backlog;
	if (c == NULL) {
		errno = EINVAL;
		return -1;
	}
	pthread_mutex_lock(&cm_lock);
	if (c->state != CM_S_IDLE)
		ret = -EINVAL;
	else if (!c->bound) {
		union ibv_gid any;

		/* The kernel's rdma_listen binds an unbound id to 0.0.0.0. */
		memset(&any, 0, sizeof(any));
		ret = cm_bind_port(c, 0, AF_INET, &any);
	}
	if (ret == 0)
		c->state = CM_S_LISTEN;
	pthread_mutex_unlock(&cm_lock);
	return cm_errno(ret);
}

CM_EXPORT __be16
rdma_get_src_port(struct rdma_cm_id *id)
{
	/* sin_port and sin6_port are at the same place */
	return id != NULL ? id->route.addr.src_sin.sin_port : 0;
}

CM_EXPORT __be16
rdma_get_dst_port(struct rdma_cm_id *id)
{
	return id != NULL ? id->route.addr.dst_sin.sin_port : 0;
}
