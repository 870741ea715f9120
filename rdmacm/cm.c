/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * librdmacm's API on the IB CM protocol (see cm.h).
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
#include "rocepmd_verbs.h"

static TAILQ_HEAD(, cm_id) cm_ids = TAILQ_HEAD_INITIALIZER(cm_ids);
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

static bool
cm_stale_has(uint32_t remote_id, uint64_t guid)
{
	for (unsigned int i = 0; i < CM_STALE; i++)
		if (cm_stale[i].remote_id == remote_id &&
		    cm_stale[i].guid == guid && guid != 0)
			return true;
	return false;
}

static struct cm_id *
cm_id(struct rdma_cm_id *id)
{
	return (struct cm_id *)id;
}

static struct cm_chan *
cm_chan(struct rdma_event_channel *ch)
{
	return (struct cm_chan *)ch;
}

/* ::ffff:a.b.c.d: an IPv4 address as RoCEv2 GIDs hold it. */
static void
cm_gid_from_ipv4(union ibv_gid *gid, const void *ipv4)
{
	memset(gid, 0, sizeof(*gid));
	gid->raw[10] = 0xff;
	gid->raw[11] = 0xff;
	memcpy(&gid->raw[12], ipv4, 4);
}

/* The address of an AF_INET or AF_INET6 sockaddr, as a GID. */
static void
cm_sa_gid(const struct sockaddr *sa, union ibv_gid *gid)
{
	if (sa->sa_family == AF_INET6)
		memcpy(gid->raw, &((const struct sockaddr_in6 *)sa)->sin6_addr,
		       16);
	else
		cm_gid_from_ipv4(gid,
				 &((const struct sockaddr_in *)sa)->sin_addr);
}

static uint16_t
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
static void
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

static uint64_t
cm_service_id(enum rdma_port_space ps, uint16_t port)
{
	return (ps == RDMA_PS_UDP ? CM_SERVICE_ID_UDP : CM_SERVICE_ID_TCP) |
		port;
}

static struct sockaddr *
cm_src(struct cm_id *c)
{
	return &c->id.route.addr.src_addr;
}

static struct sockaddr *
cm_dst(struct cm_id *c)
{
	return &c->id.route.addr.dst_addr;
}

static void cm_build_dreq(struct cm_id *c);
static void cm_will_drop(struct cm_id *c);
static void cm_will_set(struct cm_id *c);

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
static int
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

static int
cm_event_push(struct cm_id *c, enum rdma_cm_event_type type, int status,
	      struct cm_id *listen, const void *priv, size_t priv_len)
{
	return cm_event_push_on(c->chan, c, type, status, listen, priv,
				priv_len);
}

static struct cm_event *
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

/* ------------------------------------------------------------ timers */

static void
cm_timer_arm(struct cm_id *c, const union ibv_gid *dgid)
{
	c->mad_dgid = *dgid;
	c->timer = true;
	c->retries = 0;
	c->deadline_ms = cm_now_ms() + CM_RETRY_MS;
	cm_agent_kick();
}

static void
cm_timer_stop(struct cm_id *c)
{
	c->timer = false;
}

static int
cm_send_armed(struct cm_id *c, const union ibv_gid *dgid)
{
	int ret = cm_send(c->dev, c->sgid_index, dgid, c->mad);

	if (ret == 0)
		cm_timer_arm(c, dgid);
	return ret;
}

/* ---------------------------------------------------------- QP moves */

/* The connection's transport: the QP's type, else the id's. */
static enum ibv_qp_type
cm_qp_type(const struct cm_id *c)
{
	return c->id.qp != NULL ? c->id.qp->qp_type : c->id.qp_type;
}

/*
 * The attributes for RTR and for RTS from REQ and REP (c->qpa), as ib_cm's
 * cm_init_qp_rtr_attr and cm_init_qp_rts_attr give them: UC has no ACKs,
 * so no READ depths, ACK timeout, retries or RNR timer.
 */
static void
cm_qp_attr_rtr(const struct cm_id *c, struct ibv_qp_attr *a, int *mask)
{
	a->qp_state = IBV_QPS_RTR;
	a->path_mtu = c->path_mtu;
	a->dest_qp_num = c->remote_qpn;
	a->rq_psn = c->qpa.rq_psn;
	a->ah_attr.is_global = 1;
	a->ah_attr.port_num = CM_PORT;
	a->ah_attr.grh.dgid = c->id.route.addr.addr.ibaddr.dgid;
	a->ah_attr.grh.sgid_index = c->sgid_index;
	a->ah_attr.grh.hop_limit = CM_HOP_LIMIT;
	*mask = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
		IBV_QP_RQ_PSN;
	if (cm_qp_type(c) == IBV_QPT_RC) {
		a->max_dest_rd_atomic = c->qpa.max_dest_rd_atomic;
		a->min_rnr_timer = CM_MIN_RNR_TIMER;
		*mask |= IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
	}
}

static void
cm_qp_attr_rts(const struct cm_id *c, struct ibv_qp_attr *a, int *mask)
{
	a->qp_state = IBV_QPS_RTS;
	a->sq_psn = c->qpa.sq_psn;
	*mask = IBV_QP_STATE | IBV_QP_SQ_PSN;
	if (cm_qp_type(c) == IBV_QPT_RC) {
		a->timeout = c->qpa.timeout;
		a->retry_cnt = c->qpa.retry_cnt;
		a->rnr_retry = c->qpa.rnr_retry;
		a->max_rd_atomic = c->qpa.max_rd_atomic;
		*mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC;
	}
}

static int
cm_qp_to_rtr_rts(struct cm_id *c)
{
	struct ibv_qp *qp = c->id.qp;
	struct ibv_qp_attr a;
	int mask, ret;

	if (qp == NULL)
		return 0;	/* the application moves its own QP */
	memset(&a, 0, sizeof(a));
	cm_qp_attr_rtr(c, &a, &mask);
	ret = ibv_modify_qp(qp, &a, mask);
	if (ret != 0)
		return -ret;
	memset(&a, 0, sizeof(a));
	cm_qp_attr_rts(c, &a, &mask);
	return -ibv_modify_qp(qp, &a, mask);
}

/*
 * rdma_init_qp_attr(3): the attributes for the state the caller asks for
 * in a->qp_state.  RTR and RTS need the peer's half of REQ and REP: the
 * passive side has it from the REQ on (our REP's PSN is chosen with the
 * id, as rdma_cm's seq_num), the active side from the REP.  UD QPs only
 * need INIT; their RTS takes sq_psn 0, as librdmacm's ucma_init_ud_qp.
 */
int
cm_init_qp_attr(struct cm_id *c, struct ibv_qp_attr *a, int *mask)
{
	enum ibv_qp_state want = a->qp_state;
	bool ud = cm_qp_type(c) == IBV_QPT_UD;

	memset(a, 0, sizeof(*a));
	if (c->dev == NULL)
		return -EINVAL;
	switch (want) {
	case IBV_QPS_INIT:
		a->qp_state = IBV_QPS_INIT;
		a->port_num = CM_PORT;
		*mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT;
		if (ud) {
			a->qkey = RDMA_UDP_QKEY;
			*mask |= IBV_QP_QKEY;
		} else {
			a->qp_access_flags = IBV_ACCESS_LOCAL_WRITE |
				IBV_ACCESS_REMOTE_WRITE |
				IBV_ACCESS_REMOTE_READ |
				IBV_ACCESS_REMOTE_ATOMIC;
			*mask |= IBV_QP_ACCESS_FLAGS;
		}
		return 0;
	case IBV_QPS_RTR:
		if (ud) {
			a->qp_state = IBV_QPS_RTR;
			*mask = IBV_QP_STATE;
			return 0;
		}
		if (!c->qpa_ok)
			return -EINVAL;
		cm_qp_attr_rtr(c, a, mask);
		return 0;
	case IBV_QPS_RTS:
		if (ud) {
			a->qp_state = IBV_QPS_RTS;
			*mask = IBV_QP_STATE | IBV_QP_SQ_PSN;
			return 0;
		}
		if (!c->qpa_ok)
			return -EINVAL;
		cm_qp_attr_rts(c, a, mask);
		return 0;
	default:
		return -EINVAL;
	}
}

static void
cm_qp_to_err(struct cm_id *c)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };

	if (c->id.qp != NULL)
		ibv_modify_qp(c->id.qp, &a, IBV_QP_STATE);
}

/* ------------------------------------------------------ id lookups */

static struct cm_id *
cm_find_local(uint32_t local_id)
{
	struct cm_id *c;

	TAILQ_FOREACH(c, &cm_ids, link)
		if (c->local_id == local_id && c->state != CM_S_IDLE &&
		    c->state != CM_S_LISTEN)
			return c;
	return NULL;
}

static struct cm_id *
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
static struct cm_id *
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

static void
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

static struct cm_id *
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
 * (@src, or the bound one), else the device on dst's subnet.  The GID
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

static uint32_t
cm_local_qpn(struct cm_id *c, const struct rdma_conn_param *p)
{
	return c->id.qp != NULL ? c->id.qp->qp_num :
		p != NULL ? p->qp_num : 0;
}

/*
 * IBTA Annex A11's IP addressing CM private data: IP version 6 with both
 * addresses whole, or 4 with each in the last four bytes of its field,
 * the rest zero (not ::ffff:, as the kernel's union cma_ip_addr).
 */
static void
cm_put_cma_hdr(struct cm_id *c, uint8_t *priv)
{
	struct cm_cma_hdr h = { .ip_version = 4 };
	union ibv_gid src, dst;

	cm_sa_gid(cm_src(c), &src);
	cm_sa_gid(cm_dst(c), &dst);
	h.src_port = c->port;
	if (cm_src(c)->sa_family == AF_INET6) {
		h.ip_version = 6;
		memcpy(h.src, src.raw, 16);
		memcpy(h.dst, dst.raw, 16);
	} else {
		memcpy(&h.src[12], &src.raw[12], 4);
		memcpy(&h.dst[12], &dst.raw[12], 4);
	}
	cm_cma_hdr_put(priv, &h);
}

/* The addresses of a received header, as GIDs, and their family. */
static sa_family_t
cm_get_cma_addrs(const struct cm_cma_hdr *h, union ibv_gid *src,
		 union ibv_gid *dst)
{
	if (h->ip_version == 6) {
		memcpy(src->raw, h->src, 16);
		memcpy(dst->raw, h->dst, 16);
		return AF_INET6;
	}
	cm_gid_from_ipv4(src, &h->src[12]);
	cm_gid_from_ipv4(dst, &h->dst[12]);
	return AF_INET;
}

static int
cm_send_req(struct cm_id *c, const struct rdma_conn_param *p)
{
	uint8_t priv[92] = { 0 };
	uint8_t *m = c->mad;
	size_t ulen = p != NULL ? p->private_data_len : 0;

	if (ulen > sizeof(priv) - CM_CMA_HDR_LEN)
		return -EINVAL;
	if (ulen != 0 && p->private_data == NULL)
		return -EINVAL;
	c->local_id = cm_local_id(c->dev);
	c->tid = (uint64_t)cm_random32() << 32 | c->local_id;
	/* Our half: the Starting PSN is where our receive queue starts. */
	memset(&c->wire, 0, sizeof(c->wire));
	c->qpa_ok = false;
	c->wire.req_psn = cm_random32() & 0xffffff;
	c->wire.req_resp_res = p != NULL ? p->responder_resources : 0;
	c->wire.req_init_depth = p != NULL ? p->initiator_depth : 0;
	c->wire.req_retry = p != NULL ? RTE_MIN(p->retry_count, 7) : 7;
	c->wire.req_rnr_retry = p != NULL ? RTE_MIN(p->rnr_retry_count, 7) :
		7;
	c->wire.req_ack_timeout = CM_LOCAL_ACK_TIMEOUT;
	cm_mad_init(m, CM_ATTR_REQ, c->tid);
	cm_set(m, CM_F_REQ_LOCAL_COMM_ID, c->local_id);
	cm_set(m, CM_F_REQ_SERVICE_ID,
	       cm_service_id(c->id.ps, cm_sa_port(cm_dst(c))));
	cm_set(m, CM_F_REQ_LOCAL_CA_GUID, c->dev->guid);
	cm_set(m, CM_F_REQ_LOCAL_QPN, cm_local_qpn(c, p));
	cm_set(m, CM_F_REQ_RESPONDER_RESOURCES, c->wire.req_resp_res);
	cm_set(m, CM_F_REQ_INITIATOR_DEPTH, c->wire.req_init_depth);
	cm_set(m, CM_F_REQ_REMOTE_CM_RESP_TIMEOUT, CM_RESP_TIMEOUT_EXP);
	cm_set(m, CM_F_REQ_TRANSPORT, cm_qp_type(c) == IBV_QPT_UC ?
	       CM_TRANSPORT_UC : CM_TRANSPORT_RC);
	cm_set(m, CM_F_REQ_STARTING_PSN, c->wire.req_psn);
	cm_set(m, CM_F_REQ_LOCAL_CM_RESP_TIMEOUT, CM_RESP_TIMEOUT_EXP);
	cm_set(m, CM_F_REQ_RETRY_COUNT, c->wire.req_retry);
	cm_set(m, CM_F_REQ_PKEY, CM_PKEY_DEFAULT);
	cm_set(m, CM_F_REQ_PATH_MTU, c->path_mtu);
	cm_set(m, CM_F_REQ_RNR_RETRY_COUNT, c->wire.req_rnr_retry);
	cm_set(m, CM_F_REQ_MAX_CM_RETRIES, CM_MAX_RETRIES);
	cm_set(m, CM_F_REQ_SRQ, c->id.qp != NULL && c->id.qp->srq != NULL);
	cm_set(m, CM_F_REQ_PRIMARY_LOCAL_LID, 0xffff);	/* RoCE: permissive */
	cm_set(m, CM_F_REQ_PRIMARY_REMOTE_LID, 0xffff);
	cm_set_bytes(m, CM_F_REQ_PRIMARY_LOCAL_GID,
		     c->id.route.addr.addr.ibaddr.sgid.raw, 16);
	cm_set_bytes(m, CM_F_REQ_PRIMARY_REMOTE_GID,
		     c->id.route.addr.addr.ibaddr.dgid.raw, 16);
	cm_set(m, CM_F_REQ_PRIMARY_HOP_LIMIT, CM_HOP_LIMIT);
	cm_set(m, CM_F_REQ_PRIMARY_LOCAL_ACK_TIMEOUT, c->wire.req_ack_timeout);
	cm_put_cma_hdr(c, priv);
	if (ulen != 0)
		memcpy(priv + CM_CMA_HDR_LEN, p->private_data, ulen);
	cm_set_bytes(m, CM_F_REQ_PRIVATE_DATA, priv, sizeof(priv));
	return cm_send_armed(c, &c->id.route.addr.addr.ibaddr.dgid);
}

static int
cm_send_sidr_req(struct cm_id *c, const struct rdma_conn_param *p)
{
	uint8_t priv[216] = { 0 };
	size_t ulen = p != NULL ? p->private_data_len : 0;

	if (ulen > sizeof(priv) - CM_CMA_HDR_LEN ||
	    (ulen != 0 && p->private_data == NULL))
		return -EINVAL;
	c->sidr = true;
	c->local_id = cm_local_id(c->dev);
	c->tid = (uint64_t)cm_random32() << 32 | c->local_id;
	cm_mad_init(c->mad, CM_ATTR_SIDR_REQ, c->tid);
	cm_set(c->mad, CM_F_SIDR_REQ_REQUEST_ID, c->local_id);
	cm_set(c->mad, CM_F_SIDR_REQ_PKEY, CM_PKEY_DEFAULT);
	cm_set(c->mad, CM_F_SIDR_REQ_SERVICE_ID,
	       cm_service_id(c->id.ps, cm_sa_port(cm_dst(c))));
	cm_put_cma_hdr(c, priv);
	if (ulen != 0)
		memcpy(priv + CM_CMA_HDR_LEN, p->private_data, ulen);
	cm_set_bytes(c->mad, CM_F_SIDR_REQ_PRIVATE_DATA, priv, sizeof(priv));
	return cm_send_armed(c, &c->id.route.addr.addr.ibaddr.dgid);
}

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

static int
cm_send_rep(struct cm_id *c, const struct rdma_conn_param *p)
{
	struct cm_conn_wire *w = &c->wire;
	uint8_t *m = c->mad;
	size_t ulen = p != NULL ? p->private_data_len : 0;
	int ret;

	if (ulen > 196 || (ulen != 0 && p->private_data == NULL))
		return -EINVAL;
	/* The caller's values, bounded by what the peer asked for. */
	if (p != NULL) {
		w->rep_resp_res = RTE_MIN(p->responder_resources,
					  w->req_init_depth);
		w->rep_init_depth = RTE_MIN(p->initiator_depth,
					    w->req_resp_res);
		w->rep_rnr_retry = RTE_MIN(p->rnr_retry_count, 7);
	}
	cm_conn_qp(CM_ROLE_PASSIVE, w, &c->qpa);
	c->local_id = cm_local_id(c->dev);
	ret = cm_qp_to_rtr_rts(c);
	if (ret < 0)
		return ret;
	cm_mad_init(m, CM_ATTR_REP, c->tid);
	cm_set(m, CM_F_REP_LOCAL_COMM_ID, c->local_id);
	cm_set(m, CM_F_REP_REMOTE_COMM_ID, c->remote_id);
	cm_set(m, CM_F_REP_LOCAL_QPN, cm_local_qpn(c, p));
	cm_set(m, CM_F_REP_STARTING_PSN, w->rep_psn);
	cm_set(m, CM_F_REP_RESPONDER_RESOURCES, w->rep_resp_res);
	cm_set(m, CM_F_REP_INITIATOR_DEPTH, w->rep_init_depth);
	cm_set(m, CM_F_REP_TARGET_ACK_DELAY, w->rep_ack_delay);
	cm_set(m, CM_F_REP_FAILOVER_ACCEPTED, 0);	/* as the kernel sends */
	cm_set(m, CM_F_REP_RNR_RETRY_COUNT, w->rep_rnr_retry);
	cm_set(m, CM_F_REP_SRQ, c->id.qp != NULL && c->id.qp->srq != NULL);
	cm_set(m, CM_F_REP_LOCAL_CA_GUID, c->dev->guid);
	if (ulen != 0)
		cm_set_bytes(m, CM_F_REP_PRIVATE_DATA, p->private_data, ulen);
	return cm_send_armed(c, &c->id.route.addr.addr.ibaddr.dgid);
}

static int
cm_send_sidr_rep(struct cm_id *c, const struct rdma_conn_param *p,
		 uint32_t status)
{
	uint8_t m[CM_MAD_SIZE];
	size_t ulen = p != NULL ? p->private_data_len : 0;

	if (ulen > 136 || (ulen != 0 && p->private_data == NULL))
		return -EINVAL;
	cm_mad_init(m, CM_ATTR_SIDR_REP, c->tid);
	cm_set(m, CM_F_SIDR_REP_REQUEST_ID, c->remote_id);
	cm_set(m, CM_F_SIDR_REP_STATUS, status);
	cm_set(m, CM_F_SIDR_REP_QPN, status == CM_SIDR_OK ?
	       cm_local_qpn(c, p) : 0);
	cm_set(m, CM_F_SIDR_REP_SERVICE_ID,
	       cm_service_id(c->id.ps, c->port));
	cm_set(m, CM_F_SIDR_REP_QKEY, RDMA_UDP_QKEY);
	if (ulen != 0)
		cm_set_bytes(m, CM_F_SIDR_REP_PRIVATE_DATA, p->private_data,
			     ulen);
	return cm_send(c->dev, c->sgid_index,
		       &c->id.route.addr.addr.ibaddr.dgid, m);
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

static void
cm_send_rej(struct cm_dev *d, uint8_t sgid_index, const union ibv_gid *dgid,
	    uint64_t tid,
	    uint32_t local_id, uint32_t remote_id, unsigned int msg,
	    unsigned int reason, const void *priv, size_t len)
{
	uint8_t m[CM_MAD_SIZE];

	CM_LOG(INFO, "sending REJ, reason %u", reason);
	cm_mad_init(m, CM_ATTR_REJ, tid);
	cm_set(m, CM_F_REJ_LOCAL_COMM_ID, local_id);
	cm_set(m, CM_F_REJ_REMOTE_COMM_ID, remote_id);
	cm_set(m, CM_F_REJ_MSG_REJECTED, msg);
	cm_set(m, CM_F_REJ_REASON, reason);
	if (len != 0)
		cm_set_bytes(m, CM_F_REJ_PRIVATE_DATA, priv, len);
	if (cm_send(d, sgid_index, dgid, m) < 0)
		CM_LOG(WARNING, "cannot send a REJ");
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

static void
cm_build_dreq_in(const struct cm_id *c, uint8_t *mad)
{
	cm_mad_init(mad, CM_ATTR_DREQ, c->tid);
	cm_set(mad, CM_F_DREQ_LOCAL_COMM_ID, c->local_id);
	cm_set(mad, CM_F_DREQ_REMOTE_COMM_ID, c->remote_id);
	cm_set(mad, CM_F_DREQ_REMOTE_QPN, c->remote_qpn);
}

static void
cm_build_dreq(struct cm_id *c)
{
	cm_build_dreq_in(c, c->mad);
}

/*
 * A connected RC id leaves the engine the DREQ its process would send at
 * rdma_destroy_id(): should the process die first, the engine sends it
 * when it destroys the process's GSI agent (pmd/rp_gsi.c), so the peer
 * learns at once.  Withdrawn when the connection ends any other way.
 */
static void
cm_will_set(struct cm_id *c)
{
	uint8_t mad[CM_MAD_SIZE];
	int ret;

	if (c->sidr || c->dev == NULL)
		return;
	cm_build_dreq_in(c, mad);
	ret = cm_agent_will(c->dev, c->local_id,
			    &c->id.route.addr.addr.ibaddr.dgid, c->sgid_index,
			    mad, CM_WILL_LEN);
	if (ret < 0)
		CM_LOG(WARNING, "connection 0x%08x: the engine keeps no DREQ for it: %s",
		       c->local_id, strerror(-ret));
	c->will = ret == 0;
}

static void
cm_will_drop(struct cm_id *c)
{
	if (!c->will)
		return;
	c->will = false;
	cm_agent_will(c->dev, c->local_id, NULL, 0, NULL, 0);
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
		}
		pthread_mutex_unlock(&cm_lock);
		if (e != NULL)
			break;
		/* The event's id was destroyed before delivery: next. */
	}
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

/* ------------------------------------------------- receiving MADs */

/*
 * The id of a request to listener l.  Its CONNECT_REQUEST goes on the
 * listener's channel (req_chan); a synchronous listener's request gets a
 * channel of its own, as librdmacm migrates it, for its own calls.
 */
static struct cm_id *
cm_req_id(struct cm_id *l, enum rdma_port_space ps, enum ibv_qp_type qpt)
{
	struct rdma_event_channel *own = NULL;
	struct cm_id *c;

	if (l->ucma.sync) {
		own = rdma_create_event_channel();
		if (own == NULL)
			return NULL;
	}
	c = cm_id_new(own != NULL ? cm_chan(own) : l->chan, l->id.context,
		      ps, qpt);
	if (c == NULL) {
		if (own != NULL)
			rdma_destroy_event_channel(own);
		return NULL;
	}
	c->ucma.sync = own != NULL;
	c->req_chan = l->chan;
	return c;
}

static void
cm_recv_req(struct cm_dev *d, uint8_t sgid, const union ibv_gid *src,
	    const uint8_t *m)
{
	uint32_t rid = (uint32_t)cm_get(m, CM_F_REQ_LOCAL_COMM_ID);
	uint64_t guid = cm_get(m, CM_F_REQ_LOCAL_CA_GUID);
	uint64_t sid = cm_get(m, CM_F_REQ_SERVICE_ID);
	union ibv_gid peer, h_src, h_dst;
	struct cm_cma_hdr h;
	struct cm_id *l, *c;
	enum ibv_qp_type qpt;
	const uint8_t *priv;
	sa_family_t family;
	size_t plen;

	/* The path's GID must be where the REQ came from (RoCE has no
	 * third-party paths); replies go to the sender either way. */
	peer = *src;
	if (memcmp(cm_bytes(m, CM_F_REQ_PRIMARY_LOCAL_GID, NULL), src->raw,
		   16) != 0) {
		CM_LOG(INFO, "REQ whose path is not its sender: ignored");
		return;
	}
	c = cm_find_remote(rid, guid);
	if (c != NULL) {
		/* A retransmitted REQ: our REP was lost, or is late. */
		if (c->state == CM_S_REP_SENT)
			cm_send(d, sgid, &peer, c->mad);
		return;
	}
	if (cm_stale_has(rid, guid))
		return;		/* a late copy of a finished connection's */
	priv = cm_bytes(m, CM_F_REQ_PRIVATE_DATA, &plen);
	if ((sid & CM_SERVICE_ID_PS_MASK) != CM_SERVICE_ID_TCP ||
	    cm_cma_hdr_get(priv, plen, &h) < 0) {
		cm_send_rej(d, sgid, &peer, cm_get(m, CM_F_TID), 0, rid,
			    CM_REJ_MSG_REQ, CM_REJ_INVALID_SERVICE_ID, NULL, 0);
		return;
	}
	family = cm_get_cma_addrs(&h, &h_src, &h_dst);
	l = cm_find_listener(d, RDMA_PS_TCP, (uint16_t)sid, family, &h_dst);
	if (l == NULL) {
		/*
		 * No REJ: the engine is per process, and another process on
		 * the same interface and address (qperf's server forks one
		 * per test) may be the listener; a REJ from us would beat its
		 * REP.  The requester times out instead (UNREACHABLE).
		 */
		CM_LOG(INFO, "REQ for port %u: nobody listens in this process",
			 (unsigned int)(uint16_t)sid);
		return;
	}
	switch (cm_get(m, CM_F_REQ_TRANSPORT)) {
	case CM_TRANSPORT_RC:
		qpt = IBV_QPT_RC;
		break;
	case CM_TRANSPORT_UC:
		qpt = IBV_QPT_UC;
		break;
	default:
		/* RD, or XRC: no such QPs here. */
		cm_send_rej(d, sgid, &peer, cm_get(m, CM_F_TID), 0, rid,
			    CM_REJ_MSG_REQ, CM_REJ_INVALID_TRANSPORT, NULL, 0);
		return;
	}
	c = cm_req_id(l, RDMA_PS_TCP, qpt);
	if (c == NULL) {
		cm_send_rej(d, sgid, &peer, cm_get(m, CM_F_TID), 0, rid,
			    CM_REJ_MSG_REQ, CM_REJ_NO_QP, NULL, 0);
		return;
	}
	cm_attach_dev(c, d, sgid);
	c->bound = false;	/* the listener owns the port */
	c->port = l->port;
	cm_sa_set(cm_src(c), family, &h_dst, l->port);
	cm_sa_set(cm_dst(c), family, &h_src, h.src_port);
	c->id.route.addr.addr.ibaddr.dgid = peer;
	c->remote_id = rid;
	c->remote_guid = guid;
	c->tid = cm_get(m, CM_F_TID);
	c->remote_qpn = (uint32_t)cm_get(m, CM_F_REQ_LOCAL_QPN);
	cm_conn_wire_req(&c->wire, m);
	/*
	 * Our half of the REP as it stands until rdma_accept: our Starting
	 * PSN chosen now (rdma_cm's seq_num comes with the id), and the
	 * depths the peer asked for, seen from here.
	 */
	c->wire.rep_psn = cm_random32() & 0xffffff;
	c->wire.rep_resp_res = c->wire.req_init_depth;
	c->wire.rep_init_depth = c->wire.req_resp_res;
	c->wire.rep_rnr_retry = 7;
	c->wire.rep_ack_delay = 0;
	cm_conn_qp(CM_ROLE_PASSIVE, &c->wire, &c->qpa);
	c->qpa_ok = true;
	c->path_mtu = (uint8_t)RTE_MIN(cm_get(m, CM_F_REQ_PATH_MTU),
				       (uint64_t)d->mtu);
	if (c->path_mtu < IBV_MTU_256)
		c->path_mtu = IBV_MTU_256;
	c->state = CM_S_REQ_RCVD;
	if (cm_event_push_on(l->chan, c, RDMA_CM_EVENT_CONNECT_REQUEST, 0, l,
			  priv + CM_CMA_HDR_LEN, plen - CM_CMA_HDR_LEN) == 0) {
		struct rdma_conn_param *cp = &cm_event_last(l->chan)->ev.param.conn;

		/* From the passive side: ours answer the peer's. */
		cp->responder_resources = c->wire.req_init_depth;
		cp->initiator_depth = c->wire.req_resp_res;
		cp->retry_count = c->wire.req_retry;
		cp->rnr_retry_count = c->wire.req_rnr_retry;
		cp->srq = (uint8_t)cm_get(m, CM_F_REQ_SRQ);
		cp->qp_num = c->remote_qpn;
	}
}

static void
cm_recv_rep(const uint8_t *m)
{
	struct cm_id *c = cm_find_local((uint32_t)cm_get(m,
							 CM_F_REP_REMOTE_COMM_ID));
	size_t plen;
	const uint8_t *priv;
	int ret;

	if (c == NULL)
		return;
	if (c->state == CM_S_ESTABLISHED &&
	    c->remote_id == cm_get(m, CM_F_REP_LOCAL_COMM_ID)) {
		/* Our RTU was lost: send it again. */
		uint8_t rtu[CM_MAD_SIZE];

		cm_mad_init(rtu, CM_ATTR_RTU, c->tid);
		cm_set(rtu, CM_F_RTU_LOCAL_COMM_ID, c->local_id);
		cm_set(rtu, CM_F_RTU_REMOTE_COMM_ID, c->remote_id);
		cm_send(c->dev, c->sgid_index,
			&c->id.route.addr.addr.ibaddr.dgid, rtu);
		return;
	}
	if (c->state != CM_S_REQ_SENT)
		return;
	cm_timer_stop(c);
	c->remote_id = (uint32_t)cm_get(m, CM_F_REP_LOCAL_COMM_ID);
	c->remote_guid = cm_get(m, CM_F_REP_LOCAL_CA_GUID);
	c->remote_qpn = (uint32_t)cm_get(m, CM_F_REP_LOCAL_QPN);
	cm_conn_wire_rep(&c->wire, m);
	cm_conn_qp(CM_ROLE_ACTIVE, &c->wire, &c->qpa);
	c->qpa_ok = true;
	ret = cm_qp_to_rtr_rts(c);
	if (ret < 0) {
		CM_LOG(ERR, "cannot move the QP to RTS on REP: %s",
			 strerror(-ret));
		cm_send_rej(c->dev, c->sgid_index,
			    &c->id.route.addr.addr.ibaddr.dgid, c->tid,
			    c->local_id, c->remote_id, CM_REJ_MSG_REP,
			    CM_REJ_NO_QP, NULL, 0);
		c->state = CM_S_IDLE;
		cm_event_push(c, RDMA_CM_EVENT_CONNECT_ERROR, ret, NULL, NULL,
			      0);
		return;
	}
	cm_mad_init(c->mad, CM_ATTR_RTU, c->tid);
	cm_set(c->mad, CM_F_RTU_LOCAL_COMM_ID, c->local_id);
	cm_set(c->mad, CM_F_RTU_REMOTE_COMM_ID, c->remote_id);
	cm_send(c->dev, c->sgid_index, &c->id.route.addr.addr.ibaddr.dgid,
		c->mad);
	c->state = CM_S_ESTABLISHED;
	cm_will_set(c);
	priv = cm_bytes(m, CM_F_REP_PRIVATE_DATA, &plen);
	if (cm_event_push(c, RDMA_CM_EVENT_ESTABLISHED, 0, NULL, priv,
			  plen) == 0) {
		struct rdma_conn_param *cp = &cm_event_last(c->chan)->ev.param.conn;

		cp->responder_resources = c->qpa.max_dest_rd_atomic;
		cp->initiator_depth = c->qpa.max_rd_atomic;
		cp->rnr_retry_count = c->wire.rep_rnr_retry;
		cp->srq = (uint8_t)cm_get(m, CM_F_REP_SRQ);
		cp->qp_num = c->remote_qpn;
	}
}

static void
cm_recv_rtu(const uint8_t *m)
{
	struct cm_id *c = cm_find_local((uint32_t)cm_get(m,
							 CM_F_RTU_REMOTE_COMM_ID));

	if (c == NULL || c->state != CM_S_REP_SENT)
		return;
	cm_timer_stop(c);
	c->state = CM_S_ESTABLISHED;
	cm_event_push(c, RDMA_CM_EVENT_ESTABLISHED, 0, NULL, NULL, 0);
}

static void
cm_recv_rej(const uint8_t *m)
{
	struct cm_id *c = cm_find_local((uint32_t)cm_get(m,
							 CM_F_REJ_REMOTE_COMM_ID));
	unsigned int reason = (unsigned int)cm_get(m, CM_F_REJ_REASON);
	const uint8_t *priv;
	size_t plen;

	if (c == NULL)
		return;
	CM_LOG(INFO, "REJ, reason %u, for port %u", reason,
		 (unsigned int)cm_sa_port(cm_dst(c)));
	priv = cm_bytes(m, CM_F_REJ_PRIVATE_DATA, &plen);
	if (c->state == CM_S_REQ_SENT) {
		cm_timer_stop(c);
		c->state = CM_S_ROUTE_RESOLVED;
		/* librdmacm: status is the IBTA reject reason. */
		cm_event_push(c, RDMA_CM_EVENT_REJECTED, (int)reason, NULL,
			      priv, plen);
	} else if (c->state == CM_S_REP_SENT) {
		cm_timer_stop(c);
		cm_will_drop(c);
		cm_qp_to_err(c);
		c->state = CM_S_IDLE;
		cm_event_push(c, RDMA_CM_EVENT_REJECTED, (int)reason, NULL,
			      priv, plen);
	}
}

static void
cm_recv_dreq(struct cm_dev *d, uint8_t sgid, const union ibv_gid *src,
	     const uint8_t *m)
{
	uint32_t local = (uint32_t)cm_get(m, CM_F_DREQ_REMOTE_COMM_ID);
	struct cm_id *c = cm_find_local(local);
	uint8_t drep[CM_MAD_SIZE];
	const uint8_t *priv;
	size_t plen;

	cm_mad_init(drep, CM_ATTR_DREP, cm_get(m, CM_F_TID));
	cm_set(drep, CM_F_DREP_LOCAL_COMM_ID, local);
	cm_set(drep, CM_F_DREP_REMOTE_COMM_ID,
	       cm_get(m, CM_F_DREQ_LOCAL_COMM_ID));
	if (c == NULL || memcmp(src->raw, c->id.route.addr.addr.ibaddr.dgid.raw,
				16) != 0)
		return;		/* nothing of ours, or not from our peer */
	cm_send(d, sgid, src, drep);
	switch (c->state) {
	case CM_S_REP_SENT:
	case CM_S_ESTABLISHED:
		cm_timer_stop(c);
		cm_will_drop(c);
		cm_qp_to_err(c);
		c->state = CM_S_DISCONNECTED;
		priv = cm_bytes(m, CM_F_DREQ_PRIVATE_DATA, &plen);
		cm_event_push(c, RDMA_CM_EVENT_DISCONNECTED, 0, NULL, priv,
			      0);
		break;
	case CM_S_DREQ_SENT:
		/* Both sides disconnected at once: this answers ours too. */
		cm_timer_stop(c);
		c->state = CM_S_DISCONNECTED;
		cm_event_push(c, RDMA_CM_EVENT_DISCONNECTED, 0, NULL, NULL, 0);
		break;
	default:
		break;
	}
}

static void
cm_recv_drep(const uint8_t *m)
{
	struct cm_id *c = cm_find_local((uint32_t)cm_get(m,
							 CM_F_DREP_REMOTE_COMM_ID));

	if (c == NULL || c->state != CM_S_DREQ_SENT)
		return;
	cm_timer_stop(c);
	c->state = CM_S_DISCONNECTED;
	cm_event_push(c, RDMA_CM_EVENT_DISCONNECTED, 0, NULL, NULL, 0);
}

static void
cm_ud_ah_attr(struct ibv_ah_attr *aa, const union ibv_gid *dgid,
	      uint8_t sgid_index)
{
	memset(aa, 0, sizeof(*aa));
	aa->is_global = 1;
	aa->port_num = CM_PORT;
	aa->grh.dgid = *dgid;
	aa->grh.sgid_index = sgid_index;
	aa->grh.hop_limit = CM_HOP_LIMIT;
}

static void
cm_recv_sidr_req(struct cm_dev *d, uint8_t sgid, const union ibv_gid *src,
		 const uint8_t *m)
{
	uint64_t sid = cm_get(m, CM_F_SIDR_REQ_SERVICE_ID);
	uint32_t rid = (uint32_t)cm_get(m, CM_F_SIDR_REQ_REQUEST_ID);
	struct cm_cma_hdr h;
	const uint8_t *priv;
	union ibv_gid peer, h_dst;
	struct cm_id *l, *c;
	sa_family_t family;
	size_t plen;

	priv = cm_bytes(m, CM_F_SIDR_REQ_PRIVATE_DATA, &plen);
	if (cm_cma_hdr_get(priv, plen, &h) < 0)
		return;		/* no address to answer to */
	family = cm_get_cma_addrs(&h, &peer, &h_dst);
	if (memcmp(peer.raw, src->raw, 16) != 0)
		return;		/* the header names another sender */
	l = (sid & CM_SERVICE_ID_PS_MASK) == CM_SERVICE_ID_UDP ?
		cm_find_listener(d, RDMA_PS_UDP, (uint16_t)sid, family,
				 &h_dst) : NULL;
	if (l == NULL)
		return;		/* as for a REQ: maybe another process's */
	c = cm_req_id(l, RDMA_PS_UDP, IBV_QPT_UD);
	if (c == NULL) {
		uint8_t rep[CM_MAD_SIZE];

		cm_mad_init(rep, CM_ATTR_SIDR_REP, cm_get(m, CM_F_TID));
		cm_set(rep, CM_F_SIDR_REP_REQUEST_ID, rid);
		cm_set(rep, CM_F_SIDR_REP_STATUS, CM_SIDR_UNSUPPORTED);
		cm_set(rep, CM_F_SIDR_REP_SERVICE_ID, sid);
		cm_send(d, sgid, &peer, rep);
		return;
	}
	cm_attach_dev(c, d, sgid);
	c->sidr = true;
	c->port = l->port;
	cm_sa_set(cm_src(c), family, &h_dst, l->port);
	cm_sa_set(cm_dst(c), family, &peer, h.src_port);
	c->id.route.addr.addr.ibaddr.dgid = peer;
	c->remote_id = rid;
	c->tid = cm_get(m, CM_F_TID);
	c->state = CM_S_SIDR_REQ_RCVD;
	if (cm_event_push_on(l->chan, c, RDMA_CM_EVENT_CONNECT_REQUEST, 0, l,
			  priv + CM_CMA_HDR_LEN, plen - CM_CMA_HDR_LEN) == 0) {
		struct rdma_ud_param *up = &cm_event_last(l->chan)->ev.param.ud;

		cm_ud_ah_attr(&up->ah_attr, &peer, sgid);
		up->qkey = RDMA_UDP_QKEY;
	}
}

static void
cm_recv_sidr_rep(const uint8_t *m)
{
	struct cm_id *c = cm_find_local((uint32_t)cm_get(m,
							 CM_F_SIDR_REP_REQUEST_ID));
	unsigned int status = (unsigned int)cm_get(m, CM_F_SIDR_REP_STATUS);
	const uint8_t *priv;
	size_t plen;

	if (c == NULL || c->state != CM_S_SIDR_REQ_SENT)
		return;
	cm_timer_stop(c);
	priv = cm_bytes(m, CM_F_SIDR_REP_PRIVATE_DATA, &plen);
	if (status != CM_SIDR_OK) {
		c->state = CM_S_ROUTE_RESOLVED;
		cm_event_push(c, RDMA_CM_EVENT_UNREACHABLE, -ECONNREFUSED,
			      NULL, NULL, 0);
		return;
	}
	c->state = CM_S_ESTABLISHED;
	if (cm_event_push(c, RDMA_CM_EVENT_ESTABLISHED, 0, NULL, priv,
			  plen) == 0) {
		struct rdma_ud_param *up = &cm_event_last(c->chan)->ev.param.ud;

		cm_ud_ah_attr(&up->ah_attr, &c->id.route.addr.addr.ibaddr.dgid,
			      c->sgid_index);
		up->qp_num = (uint32_t)cm_get(m, CM_F_SIDR_REP_QPN);
		up->qkey = (uint32_t)cm_get(m, CM_F_SIDR_REP_QKEY);
	}
}

void
cm_mad_recv(struct cm_dev *d, uint8_t sgid, const union ibv_gid *src,
	    const uint8_t *m)
{
	int attr = cm_mad_check(m, CM_MAD_SIZE);

	if (attr < 0) {
		CM_LOG(DEBUG, "ignored a MAD (class 0x%02x attr 0x%04x)",
			 (unsigned int)cm_get(m, CM_F_MGMT_CLASS),
			 (unsigned int)cm_get(m, CM_F_ATTR_ID));
		return;
	}
	CM_LOG(DEBUG, "%s received", cm_attr_name((unsigned int)attr));
	switch (attr) {
	case CM_ATTR_REQ:
		cm_recv_req(d, sgid, src, m);
		break;
	case CM_ATTR_REP:
		cm_recv_rep(m);
		break;
	case CM_ATTR_RTU:
		cm_recv_rtu(m);
		break;
	case CM_ATTR_REJ:
		cm_recv_rej(m);
		break;
	case CM_ATTR_DREQ:
		cm_recv_dreq(d, sgid, src, m);
		break;
	case CM_ATTR_DREP:
		cm_recv_drep(m);
		break;
	case CM_ATTR_SIDR_REQ:
		cm_recv_sidr_req(d, sgid, src, m);
		break;
	case CM_ATTR_SIDR_REP:
		cm_recv_sidr_rep(m);
		break;
	default:
		break;		/* MRA: our timers are long enough */
	}
}

/* Retransmit what timed out; @return the next deadline, or 0. */
uint64_t
cm_timers_run(uint64_t now)
{
	uint64_t next = 0;
	struct cm_id *c;

	TAILQ_FOREACH(c, &cm_ids, link) {
		if (!c->timer)
			continue;
		if (c->deadline_ms <= now) {
			if (++c->retries > CM_MAX_RETRIES) {
				c->timer = false;
				switch (c->state) {
				case CM_S_REQ_SENT:
				case CM_S_SIDR_REQ_SENT:
					c->state = CM_S_ROUTE_RESOLVED;
					cm_event_push(c, RDMA_CM_EVENT_UNREACHABLE,
						      -ETIMEDOUT, NULL, NULL, 0);
					break;
				case CM_S_REP_SENT:
					cm_will_drop(c);
					cm_qp_to_err(c);
					c->state = CM_S_IDLE;
					cm_event_push(c, RDMA_CM_EVENT_CONNECT_ERROR,
						      -ETIMEDOUT, NULL, NULL, 0);
					break;
				case CM_S_DREQ_SENT:
					/* No DREP: disconnected all the same. */
					c->state = CM_S_DISCONNECTED;
					cm_event_push(c, RDMA_CM_EVENT_DISCONNECTED,
						      0, NULL, NULL, 0);
					break;
				default:
					break;
				}
				continue;
			}
			CM_LOG(DEBUG, "%s retransmitted (%u)",
				 cm_attr_name((unsigned int)cm_get(c->mad,
								   CM_F_ATTR_ID)),
				 c->retries);
			cm_send(c->dev, c->sgid_index, &c->mad_dgid, c->mad);
			c->deadline_ms = now + CM_RETRY_MS;
		}
		if (next == 0 || c->deadline_ms < next)
			next = c->deadline_ms;
	}
	return next;
}
