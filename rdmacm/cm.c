/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * librdmacm's API (see cm.h) on the IB CM protocol (cm_proto.c): ids,
 * their addresses, ports and events, and the exported rdma_* functions.
 *
 * Addresses are AF_INET or AF_INET6; inside they are GIDs, as RoCEv2
 * devices hold them (IPv4 as ::ffff:a.b.c.d), and an id uses the GID of
 * its own address: index 0 for IPv4, 1 link-local, 2.. the configured
 * IPv6 ones.  Active side: rdma_resolve_addr and rdma_resolve_route pick
 * the rocepmd device on the destination's subnet and fill the route from
 * its GID table; rdma_connect sends a REQ whose private data starts with
 * RDMA CM's IP header (version 4 or 6), a REP moves the QP
 * to RTR and RTS and is answered by an RTU.  Passive side: a REQ for a
 * listening port becomes a new id and a CONNECT_REQUEST event;
 * rdma_accept moves the QP and sends the REP, the RTU brings ESTABLISHED.
 * rdma_disconnect sends a DREQ, answered by a DREP; both sides get
 * DISCONNECTED.  UD ids resolve the peer's QPN and Q_Key by SIDR.
 * Requests that expect an answer are retransmitted every CM_RETRY_MS up
 * to CM_MAX_RETRIES times, then fail with an event.
 */

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "cm.h"
#include "cm_proto.h"
#include "rocepmd_verbs.h"

struct cm_id_list cm_ids = TAILQ_HEAD_INITIALIZER(cm_ids);
static uint16_t cm_next_port = 49152;

/*
 * Connections that ended here, by the peer's (communication ID, CA GUID):
 * a late duplicate of their REQ must not start a new one.  IBTA's
 * timewait state, kept as a ring of the most recent ones.
 */
#define CM_STALE	256u
static struct {
	uint32_t remote_id;
	uint64_t guid;
} cm_stale[CM_STALE];
static unsigned int cm_stale_next;

static void
cm_stale_add(uint32_t remote_id, uint64_t guid)
{
	cm_stale[cm_stale_next].remote_id = remote_id;
	cm_stale[cm_stale_next].guid = guid;
	cm_stale_next = (cm_stale_next + 1) % CM_STALE;
}

bool
cm_stale_has(uint32_t remote_id, uint64_t guid)
{
	for (unsigned int i = 0; i < CM_STALE; i++)
		if (cm_stale[i].remote_id == remote_id &&
		    cm_stale[i].guid == guid && guid != 0)
			return true;
	return false;
}

struct cm_id *
cm_id(struct rdma_cm_id *id)
{
	return (struct cm_id *)id;
}

struct cm_chan *
cm_chan(struct rdma_event_channel *ch)
{
	return (struct cm_chan *)ch;
}

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


/* rdma-core's convention at the API: -1 with errno, from a negative errno. */
static int
cm_errno(int ret)
{
	if (ret < 0) {
		errno = -ret;
		return -1;
	}
	return 0;
}

/* ----------------------------------------------------------- events */

/* An event of id c, on channel ch (c's own, or its listener's). */
int
cm_event_push_on(struct cm_chan *ch, struct cm_id *c,
		 enum rdma_cm_event_type type, int status,
		 struct cm_id *listen, const void *priv, size_t priv_len)
{
	struct cm_event *e;
	const uint64_t one = 1;

	if (ch == NULL)
		return -ENOTCONN;	/* orphaned by its channel's destruction */
	e = calloc(1, sizeof(*e));
	if (e == NULL) {
		CM_LOG(ERR, "out of memory: event %s lost",
			 rdma_event_str(type));
		return -ENOMEM;
	}
	e->ev.id = &c->id;
	e->ev.listen_id = listen != NULL ? &listen->id : NULL;
	e->ev.event = type;
	e->ev.status = status;
	e->owner = c;
	if (priv != NULL && priv_len != 0) {
		priv_len = RTE_MIN(priv_len, sizeof(e->priv));
		memcpy(e->priv, priv, priv_len);
		e->ev.param.conn.private_data = e->priv;
		e->ev.param.conn.private_data_len = (uint8_t)RTE_MIN(priv_len,
								     255u);
	}
	c->events_out++;
	TAILQ_INSERT_TAIL(&ch->queue, e, link);
	if (write(ch->ch.fd, &one, sizeof(one)) != sizeof(one))
		CM_LOG(ERR, "cannot signal the event channel: %s",
			 strerror(errno));
	return 0;
}

int
cm_event_push(struct cm_id *c, enum rdma_cm_event_type type, int status,
	      struct cm_id *listen, const void *priv, size_t priv_len)
{
	return cm_event_push_on(c->chan, c, type, status, listen, priv,
				priv_len);
}

struct cm_event *
cm_event_last(struct cm_chan *ch)
{
	return TAILQ_LAST(&ch->queue, cm_event_list);
}

static bool
cm_has_event(const struct cm_chan *ch, const struct cm_id *c)
{
	const struct cm_event *e;

	TAILQ_FOREACH(e, &ch->queue, link)
		if (e->owner == c)
			return true;
	return false;
}

/* Free an event nobody will ack, and let its id be destroyed. */
static void
cm_event_drop(struct cm_event *e)
{
	if (--e->owner->events_out == 0)
		pthread_cond_broadcast(&e->owner->acked);
	free(e);
}

/* ------------------------------------------------------ id lookups */

struct cm_id *
cm_find_local(uint32_t local_id)
{
	struct cm_id *c;

	TAILQ_FOREACH(c, &cm_ids, link)
		if (c->local_id == local_id && c->state != CM_S_IDLE &&
		    c->state != CM_S_LISTEN)
			return c;
	return NULL;
}

struct cm_id *
cm_find_remote(uint32_t remote_id, uint64_t guid)
{
	struct cm_id *c;

	TAILQ_FOREACH(c, &cm_ids, link)
		if (c->remote_id == remote_id && c->remote_guid == guid &&
		    c->state >= CM_S_REQ_RCVD)
			return c;
	return NULL;
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

/* ---------------------------------------------------- exported: ids */

CM_EXPORT struct rdma_event_channel *
rdma_create_event_channel(void)
{
	struct cm_chan *ch = calloc(1, sizeof(*ch));

	if (ch == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	ch->ch.fd = eventfd(0, EFD_CLOEXEC | EFD_SEMAPHORE);
	if (ch->ch.fd < 0) {
		free(ch);
		return NULL;
	}
	TAILQ_INIT(&ch->queue);
	return &ch->ch;
}

CM_EXPORT void
rdma_destroy_event_channel(struct rdma_event_channel *channel)
{
	struct cm_chan *ch = cm_chan(channel);
	struct cm_event *e;
	struct cm_id *c;

	if (ch == NULL)
		return;
	pthread_mutex_lock(&cm_lock);
	if (ch->nr_ids != 0) {
		/*
		 * librdmacm lets the channel go with ids still on it (qperf
		 * never destroys its listener).  Those ids are orphaned: their
		 * events are dropped, a listener answers no more requests.
		 */
		CM_LOG(DEBUG, "event channel destroyed with %u id(s) on it",
			 ch->nr_ids);
		TAILQ_FOREACH(c, &cm_ids, link) {
			if (c->chan != ch)
				continue;
			if (c->state == CM_S_LISTEN)
				c->state = CM_S_IDLE;
			c->chan = NULL;
		}
	}
	while ((e = TAILQ_FIRST(&ch->queue)) != NULL) {
		TAILQ_REMOVE(&ch->queue, e, link);
		cm_event_drop(e);
	}
	TAILQ_FOREACH(c, &cm_ids, link)
		if (c->req_chan == ch)
			c->req_chan = NULL;
	ch->closing = true;
	if (ch->readers != 0) {
		/* A thread still waits in rdma_get_cm_event(): it frees. */
		pthread_mutex_unlock(&cm_lock);
		return;
	}
	pthread_mutex_unlock(&cm_lock);
	close(ch->ch.fd);
	free(ch);
}

/*
 * The channel was destroyed under a thread that waits on it (rping's CM
 * thread, at the end of every run).  With librdmacm that thread's read()
 * of the closed rdma_cm file never returns, and the program ends around
 * it; returning an error instead makes such a thread report a failure
 * (rping exits 255).  So the last waiter frees the channel and waits for
 * ever.  Called with cm_lock held; never returns.
 */
static _Noreturn void
cm_chan_orphan_reader(struct cm_chan *ch)
{
	if (--ch->readers == 0) {
		close(ch->ch.fd);
		free(ch);
	}
	pthread_mutex_unlock(&cm_lock);
	for (;;)
		pause();
}

struct cm_id *
cm_id_new(struct cm_chan *ch, void *context, enum rdma_port_space ps,
	  enum ibv_qp_type qp_type)
{
	struct cm_id *c = calloc(1, sizeof(*c));

	if (c == NULL)
		return NULL;
	c->id.channel = &ch->ch;
	c->id.context = context;
	c->id.ps = ps;
	c->id.qp_type = qp_type;
	c->chan = ch;
	c->state = CM_S_IDLE;
	c->path.mtu = IBV_MTU_1024;
	pthread_cond_init(&c->acked, NULL);
	ch->nr_ids++;
	TAILQ_INSERT_TAIL(&cm_ids, c, link);
	return c;
}

/*
 * An id on channel, or, without one, a synchronous id on a channel of its
 * own (librdmacm's rdma_create_id2): its calls wait for their own event.
 */
int
cm_create_id(struct rdma_event_channel *channel, struct rdma_cm_id **id,
	     void *context, enum rdma_port_space ps, enum ibv_qp_type qpt)
{
	struct rdma_event_channel *own = NULL;
	struct cm_id *c;
	int ret;

	if (id == NULL) {
		errno = EINVAL;
		return -1;
	}
	if ((ps != RDMA_PS_TCP && ps != RDMA_PS_UDP) ||
	    (qpt != IBV_QPT_RC && qpt != IBV_QPT_UC && qpt != IBV_QPT_UD)) {
		/* RDMA_PS_IPOIB and RDMA_PS_IB need an IB fabric; no XRC. */
		errno = EPROTONOSUPPORT;
		return -1;
	}
	ret = rocepmd_verbs_boot();
	if (ret < 0) {
		errno = -ret;
		return -1;
	}
	if (channel == NULL) {
		own = rdma_create_event_channel();
		if (own == NULL)
			return -1;
		channel = own;
	}
	pthread_mutex_lock(&cm_lock);
	ret = cm_dev_open_all();
	c = ret == 0 ? cm_id_new(cm_chan(channel), context, ps, qpt) : NULL;
	if (c != NULL)
		c->ucma.sync = own != NULL;
	pthread_mutex_unlock(&cm_lock);
	if (c == NULL) {
		if (own != NULL)
			rdma_destroy_event_channel(own);
		errno = ret < 0 ? -ret : ENOMEM;
		return -1;
	}
	*id = &c->id;
	return 0;
}

CM_EXPORT int
rdma_create_id(struct rdma_event_channel *channel, struct rdma_cm_id **id,
	       void *context, enum rdma_port_space ps)
{
	return cm_create_id(channel, id, context, ps,
			    ps == RDMA_PS_UDP ? IBV_QPT_UD : IBV_QPT_RC);
}

/*
 * A synchronous id's call waits for its event (librdmacm's ucma_complete):
 * the previous one acked, the new one left in id->event, its failure as
 * errno.  An O_NONBLOCK channel gives EAGAIN, and the caller (rsockets)
 * completes later.
 */
int
cm_complete(struct cm_id *c)
{
	struct rdma_cm_event *ev;

	if (!c->ucma.sync)
		return 0;
	if (c->id.event != NULL) {
		rdma_ack_cm_event(c->id.event);
		c->id.event = NULL;
	}
	if (rdma_get_cm_event(c->id.channel, &c->id.event) != 0)
		return -1;
	ev = c->id.event;
	if (ev->status == 0)
		return 0;
	errno = ev->event == RDMA_CM_EVENT_REJECTED ? ECONNREFUSED :
		ev->status < 0 ? -ev->status : ev->status;
	return -1;
}

/* cm_errno(), then a synchronous id's wait for its event. */
static int
cm_errno_complete(struct cm_id *c, int ret)
{
	return ret < 0 ? cm_errno(ret) : cm_complete(c);
}

static void
cm_drop_queued_on(struct cm_chan *ch, struct cm_id *c)
{
	struct cm_event *e, *next;

	if (ch == NULL)
		return;
	for (e = TAILQ_FIRST(&ch->queue); e != NULL; e = next) {
		next = TAILQ_NEXT(e, link);
		if (e->owner == c || e->ev.id == &c->id) {
			TAILQ_REMOVE(&ch->queue, e, link);
			/* Its eventfd count stays: get_cm_event skips it. */
			cm_event_drop(e);
		}
	}
}

CM_EXPORT int
rdma_destroy_id(struct rdma_cm_id *id)
{
	struct cm_id *c = cm_id(id);
	struct cm_chan *own = NULL;

	if (c == NULL) {
		errno = EINVAL;
		return -1;
	}
	/* librdmacm acks the event a synchronous call left on the id. */
	if (id->event != NULL) {
		rdma_ack_cm_event(id->event);
		id->event = NULL;
	}
	pthread_mutex_lock(&cm_lock);
	/* librdmacm: wait for the events already handed out to be acked. */
	cm_drop_queued_on(c->chan, c);
	cm_drop_queued_on(c->req_chan, c);
	while (c->events_out != 0)
		pthread_cond_wait(&c->acked, &cm_lock);
	if ((c->state == CM_S_ESTABLISHED || c->state == CM_S_REP_SENT) &&
	    !c->sidr) {
		/* Tell the peer, once, as the kernel's rdma_destroy_id does. */
		cm_build_dreq(c);
		cm_send(c->dev, c->sgid_index, &id->route.addr.addr.ibaddr.dgid,
			c->mad);
	}
	cm_will_drop(c);
	cm_mc_leave_all(c);	/* as the kernel's rdma_destroy_id */
	if (c->remote_guid != 0 && !c->sidr)
		cm_stale_add(c->remote_id, c->remote_guid);
	if (c->bound)
		cm_agent_claim(cm_service_id(c->id.ps, c->port), false);
	TAILQ_REMOVE(&cm_ids, c, link);
	if (c->chan != NULL) {
		c->chan->nr_ids--;
		if (c->ucma.sync)
			own = c->chan;
	}
	pthread_mutex_unlock(&cm_lock);
	if (own != NULL)
		rdma_destroy_event_channel(&own->ch);
	pthread_cond_destroy(&c->acked);
	free(c->ep_qp_attr);
	free(id->route.path_rec);
	free(c);
	return 0;
}

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

/* ----------------------------------------------------- exported: QPs */

/*
 * The CQs librdmacm creates for an id when the caller gives none: each on
 * a completion channel of its own with the id as context, as
 * rdma_get_send_comp() and rdma_get_recv_comp() of <rdma/rdma_verbs.h>
 * expect.  rdma_destroy_qp() destroys the id's CQs and channels, whoever
 * made them (rsockets leave theirs to it).
 */
static void
cm_destroy_cqs(struct rdma_cm_id *id)
{
	if (id->recv_cq != NULL) {
		ibv_destroy_cq(id->recv_cq);
		if (id->send_cq != NULL && id->send_cq != id->recv_cq) {
			ibv_destroy_cq(id->send_cq);
			id->send_cq = NULL;
		}
		id->recv_cq = NULL;
	}
	if (id->recv_cq_channel != NULL) {
		ibv_destroy_comp_channel(id->recv_cq_channel);
		if (id->send_cq_channel != NULL &&
		    id->send_cq_channel != id->recv_cq_channel) {
			ibv_destroy_comp_channel(id->send_cq_channel);
			id->send_cq_channel = NULL;
		}
		id->recv_cq_channel = NULL;
	}
}

static int
cm_create_cq(struct rdma_cm_id *id, uint32_t size, struct ibv_cq **cq,
	     struct ibv_comp_channel **chan)
{
	if (size == 0)
		return 0;
	*chan = ibv_create_comp_channel(id->verbs);
	if (*chan == NULL)
		return -1;
	*cq = ibv_create_cq(id->verbs, (int)size, id, *chan, 0);
	return *cq != NULL ? 0 : -1;
}

CM_EXPORT int
rdma_create_qp_ex(struct rdma_cm_id *id, struct ibv_qp_init_attr_ex *attr)
{
	struct cm_id *c = cm_id(id);
	struct ibv_qp_attr a = { 0 };
	struct ibv_qp *qp;
	int mask, ret;

	if (c == NULL || attr == NULL || id->verbs == NULL || id->qp != NULL) {
		errno = EINVAL;
		return -1;
	}
	if (!(attr->comp_mask & IBV_QP_INIT_ATTR_PD) || attr->pd == NULL) {
		attr->pd = id->pd != NULL ? id->pd : c->dev->pd;
		attr->comp_mask |= IBV_QP_INIT_ATTR_PD;
	}
	if (attr->pd->context != id->verbs ||
	    (id->recv_cq != NULL && attr->recv_cq != NULL &&
	     id->recv_cq != attr->recv_cq) ||
	    (id->send_cq != NULL && attr->send_cq != NULL &&
	     id->send_cq != attr->send_cq)) {
		errno = EINVAL;
		return -1;
	}
	if ((attr->recv_cq == NULL && id->recv_cq == NULL &&
	     cm_create_cq(id, attr->cap.max_recv_wr, &id->recv_cq,
			  &id->recv_cq_channel) != 0) ||
	    (attr->send_cq == NULL && id->send_cq == NULL &&
	     cm_create_cq(id, attr->cap.max_send_wr, &id->send_cq,
			  &id->send_cq_channel) != 0))
		goto err_cq;
	if (attr->send_cq == NULL)
		attr->send_cq = id->send_cq;
	if (attr->recv_cq == NULL)
		attr->recv_cq = id->recv_cq;
	if (attr->srq == NULL)
		attr->srq = id->srq;
	qp = ibv_create_qp_ex(id->verbs, attr);
	if (qp == NULL)
		goto err_cq;
	a.qp_state = IBV_QPS_INIT;
	a.port_num = CM_PORT;
	mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT;
	if (qp->qp_type == IBV_QPT_UD) {
		a.qkey = RDMA_UDP_QKEY;
		mask |= IBV_QP_QKEY;
	} else {
		a.qp_access_flags = IBV_ACCESS_LOCAL_WRITE |
			IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			IBV_ACCESS_REMOTE_ATOMIC;
		mask |= IBV_QP_ACCESS_FLAGS;
	}
	ret = ibv_modify_qp(qp, &a, mask);
	if (ret == 0 && qp->qp_type == IBV_QPT_UD) {
		/* librdmacm makes UD QPs ready to send at once. */
		a.qp_state = IBV_QPS_RTR;
		ret = ibv_modify_qp(qp, &a, IBV_QP_STATE);
		if (ret == 0) {
			/* UD PSNs are only ever checked by nobody. */
			a.qp_state = IBV_QPS_RTS;
			a.sq_psn = 0;
			ret = ibv_modify_qp(qp, &a, IBV_QP_STATE |
					    IBV_QP_SQ_PSN);
		}
	}
	if (ret != 0) {
		ibv_destroy_qp(qp);
		errno = ret;
		goto err_cq;
	}
	id->pd = qp->pd;
	id->qp = qp;
	return 0;
err_cq:
	ret = errno;
	cm_destroy_cqs(id);
	errno = ret;
	return -1;
}

CM_EXPORT int
rdma_create_qp(struct rdma_cm_id *id, struct ibv_pd *pd,
	       struct ibv_qp_init_attr *qp_init_attr)
{
	struct ibv_qp_init_attr_ex ax;
	int ret;

	if (id == NULL || qp_init_attr == NULL) {
		errno = EINVAL;
		return -1;
	}
	memset(&ax, 0, sizeof(ax));
	memcpy(&ax, qp_init_attr, sizeof(*qp_init_attr));
	ax.comp_mask = pd != NULL ? IBV_QP_INIT_ATTR_PD : 0;
	ax.pd = pd;
	ret = rdma_create_qp_ex(id, &ax);
	if (ret == 0) {
		qp_init_attr->cap = ax.cap;
		qp_init_attr->send_cq = ax.send_cq;
		qp_init_attr->recv_cq = ax.recv_cq;
	}
	return ret;
}

CM_EXPORT void
rdma_destroy_qp(struct rdma_cm_id *id)
{
	struct cm_id *c = cm_id(id);

	if (c == NULL || id->qp == NULL)
		return;
	ibv_destroy_qp(id->qp);
	id->qp = NULL;
	cm_destroy_cqs(id);
}

/* ------------------------------------------- exported: connections */

CM_EXPORT int
rdma_connect(struct rdma_cm_id *id, struct rdma_conn_param *conn_param)
{
	struct cm_id *c = cm_id(id);
	int ret;

	if (c == NULL) {
		errno = EINVAL;
		return -1;
	}
	pthread_mutex_lock(&cm_lock);
	if (c->state != CM_S_ROUTE_RESOLVED) {
		ret = -EINVAL;
	} else if (id->ps == RDMA_PS_UDP) {
		ret = cm_send_sidr_req(c, conn_param);
		if (ret == 0)
			c->state = CM_S_SIDR_REQ_SENT;
	} else {
		ret = cm_send_req(c, conn_param);
		if (ret == 0)
			c->state = CM_S_REQ_SENT;
	}
	pthread_mutex_unlock(&cm_lock);
	return cm_errno_complete(c, ret);
}

CM_EXPORT int
rdma_accept(struct rdma_cm_id *id, struct rdma_conn_param *conn_param)
{
	struct cm_id *c = cm_id(id);
	bool wait = false;
	int ret;

	if (c == NULL) {
		errno = EINVAL;
		return -1;
	}
	pthread_mutex_lock(&cm_lock);
	if (c->state == CM_S_SIDR_REQ_RCVD) {
		ret = cm_send_sidr_rep(c, conn_param, CM_SIDR_OK);
		if (ret == 0)
			c->state = CM_S_ESTABLISHED;
	} else if (c->state == CM_S_REQ_RCVD) {
		ret = cm_send_rep(c, conn_param);
		if (ret == 0) {
			c->state = CM_S_REP_SENT;
			cm_will_set(c);
		}
		wait = true;	/* for ESTABLISHED; UD has nothing to wait */
	} else {
		ret = -EINVAL;
	}
	pthread_mutex_unlock(&cm_lock);
	return wait ? cm_errno_complete(c, ret) : cm_errno(ret);
}

CM_EXPORT int
rdma_reject(struct rdma_cm_id *id, const void *private_data,
	    uint8_t private_data_len)
{
	struct cm_id *c = cm_id(id);
	int ret = 0;

	if (c == NULL || private_data_len > 148 ||
	    (private_data_len != 0 && private_data == NULL)) {
		errno = EINVAL;
		return -1;
	}
	pthread_mutex_lock(&cm_lock);
	if (c->state == CM_S_REQ_RCVD) {
		cm_send_rej(c->dev, c->sgid_index,
			    &id->route.addr.addr.ibaddr.dgid, c->tid,
			    0, c->remote_id, CM_REJ_MSG_REQ,
			    CM_REJ_CONSUMER_DEFINED, private_data,
			    private_data_len);
		cm_stale_add(c->remote_id, c->remote_guid);
		c->state = CM_S_IDLE;
	} else if (c->state == CM_S_SIDR_REQ_RCVD) {
		ret = cm_send_sidr_rep(c, NULL, CM_SIDR_REJECT);
		c->state = CM_S_IDLE;
	} else {
		ret = -EINVAL;
	}
	pthread_mutex_unlock(&cm_lock);
	return cm_errno(ret);
}

CM_EXPORT int
rdma_disconnect(struct rdma_cm_id *id)
{
	struct cm_id *c = cm_id(id);
	bool wait = false;
	int ret = 0;

	if (c == NULL) {
		errno = EINVAL;
		return -1;
	}
	pthread_mutex_lock(&cm_lock);
	switch (c->state) {
	case CM_S_ESTABLISHED:
	case CM_S_REP_SENT:
		if (c->sidr) {
			c->state = CM_S_DISCONNECTED;
			break;
		}
		/* The kernel's rdma_disconnect: QP to error, then DREQ. */
		cm_will_drop(c);
		cm_qp_to_err(c);
		cm_build_dreq(c);
		ret = cm_send_armed(c, &id->route.addr.addr.ibaddr.dgid);
		if (ret == 0)
			c->state = CM_S_DREQ_SENT;
		wait = true;
		break;
	case CM_S_DREQ_SENT:
	case CM_S_DISCONNECTED:
		/* Already on its way; a synchronous id takes its event. */
		wait = c->chan != NULL && cm_has_event(c->chan, c);
		break;
	default:
		ret = -EINVAL;
	}
	pthread_mutex_unlock(&cm_lock);
	return wait ? cm_errno_complete(c, ret) : cm_errno(ret);
}

CM_EXPORT int
rdma_establish(struct rdma_cm_id *id)
{
	struct cm_id *c = cm_id(id);
	int ret = 0;

	if (c == NULL) {
		errno = EINVAL;
		return -1;
	}
	pthread_mutex_lock(&cm_lock);
	if (c->state != CM_S_ESTABLISHED)
		ret = -EINVAL;
	pthread_mutex_unlock(&cm_lock);
	return cm_errno(ret);
}

CM_EXPORT int
rdma_notify(struct rdma_cm_id *id, enum ibv_event_type event)
{
	struct cm_id *c = cm_id(id);

	(void)event;
	if (c == NULL) {
		errno = EINVAL;
		return -1;
	}
	/* RTUs are retransmitted until answered: nothing to shortcut. */
	return 0;
}

/* --------------------------------------------------- exported: events */

CM_EXPORT int
rdma_get_cm_event(struct rdma_event_channel *channel,
		  struct rdma_cm_event **event)
{
	struct cm_chan *ch = cm_chan(channel);
	struct cm_event *e;
	uint64_t v;

	if (ch == NULL || event == NULL) {
		errno = EINVAL;
		return -1;
	}
	pthread_mutex_lock(&cm_lock);
	ch->readers++;
	pthread_mutex_unlock(&cm_lock);
	for (;;) {
		ssize_t n;
		int err;

		/* Blocking unless the application made the fd O_NONBLOCK. */
		n = read(ch->ch.fd, &v, sizeof(v));
		err = errno;
		pthread_mutex_lock(&cm_lock);
		if (ch->closing)
			cm_chan_orphan_reader(ch);
		if (n != sizeof(v)) {
			ch->readers--;
			pthread_mutex_unlock(&cm_lock);
			errno = err;	/* EAGAIN, EINTR */
			return -1;
		}
		e = TAILQ_FIRST(&ch->queue);
		if (e != NULL) {
			TAILQ_REMOVE(&ch->queue, e, link);
			ch->readers--;
			if (e->mc != NULL)
				cm_mc_taken(e);
		}
		pthread_mutex_unlock(&cm_lock);
		if (e != NULL)
			break;
		/* The event's id was destroyed before delivery: next. */
	}
	if (e->mc != NULL)
		cm_mc_deliver(e);	/* the QP joins the group */
	*event = &e->ev;
	return 0;
}

CM_EXPORT int
rdma_ack_cm_event(struct rdma_cm_event *event)
{
	struct cm_event *e = (struct cm_event *)event;

	if (e == NULL) {
		errno = EINVAL;
		return -1;
	}
	pthread_mutex_lock(&cm_lock);
	if (e->mc != NULL)
		cm_mc_acked(e);
	if (--e->owner->events_out == 0)
		pthread_cond_broadcast(&e->owner->acked);
	pthread_mutex_unlock(&cm_lock);
	free(e);
	return 0;
}

/*
 * To another channel, or, without one, to a channel of its own: the id
 * becomes synchronous (rsockets' accepted ids are).  A synchronous id's
 * own channel goes with the move.
 */
CM_EXPORT int
rdma_migrate_id(struct rdma_cm_id *id, struct rdma_event_channel *channel)
{
	struct cm_id *c = cm_id(id);
	struct rdma_event_channel *own = NULL;
	struct cm_chan *old = NULL;

	if (c == NULL || (channel == NULL && c->ucma.sync)) {
		errno = EINVAL;
		return -1;
	}
	if (channel == NULL) {
		own = rdma_create_event_channel();
		if (own == NULL)
			return -1;
		channel = own;
	}
	if (c->ucma.sync && id->event != NULL) {
		rdma_ack_cm_event(id->event);
		id->event = NULL;
	}
	pthread_mutex_lock(&cm_lock);
	while (c->events_out != 0)
		pthread_cond_wait(&c->acked, &cm_lock);
	if (c->chan != NULL) {
		c->chan->nr_ids--;
		if (c->ucma.sync)
			old = c->chan;
	}
	c->chan = cm_chan(channel);
	c->chan->nr_ids++;
	c->ucma.sync = own != NULL;
	id->channel = channel;
	pthread_mutex_unlock(&cm_lock);
	if (old != NULL)
		rdma_destroy_event_channel(&old->ch);
	return 0;
}

CM_EXPORT const char *
rdma_event_str(enum rdma_cm_event_type event)
{
	static const char *const names[] = {
		[RDMA_CM_EVENT_ADDR_RESOLVED] = "RDMA_CM_EVENT_ADDR_RESOLVED",
		[RDMA_CM_EVENT_ADDR_ERROR] = "RDMA_CM_EVENT_ADDR_ERROR",
		[RDMA_CM_EVENT_ROUTE_RESOLVED] = "RDMA_CM_EVENT_ROUTE_RESOLVED",
		[RDMA_CM_EVENT_ROUTE_ERROR] = "RDMA_CM_EVENT_ROUTE_ERROR",
		[RDMA_CM_EVENT_CONNECT_REQUEST] = "RDMA_CM_EVENT_CONNECT_REQUEST",
		[RDMA_CM_EVENT_CONNECT_RESPONSE] = "RDMA_CM_EVENT_CONNECT_RESPONSE",
		[RDMA_CM_EVENT_CONNECT_ERROR] = "RDMA_CM_EVENT_CONNECT_ERROR",
		[RDMA_CM_EVENT_UNREACHABLE] = "RDMA_CM_EVENT_UNREACHABLE",
		[RDMA_CM_EVENT_REJECTED] = "RDMA_CM_EVENT_REJECTED",
		[RDMA_CM_EVENT_ESTABLISHED] = "RDMA_CM_EVENT_ESTABLISHED",
		[RDMA_CM_EVENT_DISCONNECTED] = "RDMA_CM_EVENT_DISCONNECTED",
		[RDMA_CM_EVENT_DEVICE_REMOVAL] = "RDMA_CM_EVENT_DEVICE_REMOVAL",
		[RDMA_CM_EVENT_MULTICAST_JOIN] = "RDMA_CM_EVENT_MULTICAST_JOIN",
		[RDMA_CM_EVENT_MULTICAST_ERROR] = "RDMA_CM_EVENT_MULTICAST_ERROR",
		[RDMA_CM_EVENT_ADDR_CHANGE] = "RDMA_CM_EVENT_ADDR_CHANGE",
		[RDMA_CM_EVENT_TIMEWAIT_EXIT] = "RDMA_CM_EVENT_TIMEWAIT_EXIT",
	};

	if ((unsigned int)event < RTE_DIM(names) && names[event] != NULL)
		return names[event];
	return "UNKNOWN EVENT";
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
