/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The IB CM protocol of the RDMA CM (IBTA chapter 12, as the kernel's
 * cm.c and cma.c speak it over RoCE): the messages an id sends (REQ, REP,
 * RTU, REJ, DREQ, SIDR REQ and REP) and what the MADs it receives do to
 * it, the retransmission timers, and the QP moves the protocol drives.
 * The librdmacm API over it is cm.c (and cm_addr.c, cm_event.c, cm_qp.c);
 * the MADs' layout is cm_mad.c.
 * Everything here runs under cm_lock.
 */

#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cm.h"
#include "cm_proto.h"
#include "rocepmd_verbs.h"

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

int
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

void
cm_qp_to_err(struct cm_id *c)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };

	if (c->id.qp != NULL)
		ibv_modify_qp(c->id.qp, &a, IBV_QP_STATE);
}

/* ------------------------------------------------ sending messages */

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

int
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

int
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

int
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

int
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

void
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

static void
cm_build_dreq_in(const struct cm_id *c, uint8_t *mad)
{
	cm_mad_init(mad, CM_ATTR_DREQ, c->tid);
	cm_set(mad, CM_F_DREQ_LOCAL_COMM_ID, c->local_id);
	cm_set(mad, CM_F_DREQ_REMOTE_COMM_ID, c->remote_id);
	cm_set(mad, CM_F_DREQ_REMOTE_QPN, c->remote_qpn);
}

void
cm_build_dreq(struct cm_id *c)
{
	cm_build_dreq_in(c, c->mad);
}

/*
 * A connected RC id leaves the engine the DREQ its process would send at
 * rdma_destroy_id(): should the process die first, the engine sends it
 * when it destroys the process's GSI agent (pmd/transport/rp_gsi.c), so the peer
 * learns at once.  Withdrawn when the connection ends any other way.
 */
void
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

void
cm_will_drop(struct cm_id *c)
{
	if (!c->will)
		return;
	c->will = false;
	cm_agent_will(c->dev, c->local_id, NULL, 0, NULL, 0);
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

/*
 * Is a MAD for connection `c` from its peer: does the ID it gives as its
 * sender's (its Local Communication ID) name the peer's end?  The IB CM
 * checks both IDs (Linux's cm_acquire_id()); QP 1 of a rocepmd host is
 * every attached process's, and the host lets each speak only for IDs of
 * its own (pmd/transport/rp_gsi.c), so another process cannot say the peer's.
 */
static bool
cm_from_peer(const struct cm_id *c, uint32_t their_id)
{
	return c->remote_id == their_id;
}

static void
cm_recv_rtu(const uint8_t *m)
{
	struct cm_id *c = cm_find_local((uint32_t)cm_get(m,
							 CM_F_RTU_REMOTE_COMM_ID));

	if (c == NULL || c->state != CM_S_REP_SENT ||
	    !cm_from_peer(c, (uint32_t)cm_get(m, CM_F_RTU_LOCAL_COMM_ID)))
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
	} else if (c->state == CM_S_REP_SENT &&
		   cm_from_peer(c, (uint32_t)cm_get(m, CM_F_REJ_LOCAL_COMM_ID))) {
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
				16) != 0 ||
	    !cm_from_peer(c, (uint32_t)cm_get(m, CM_F_DREQ_LOCAL_COMM_ID)))
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

	if (c == NULL || c->state != CM_S_DREQ_SENT ||
	    !cm_from_peer(c, (uint32_t)cm_get(m, CM_F_DREP_LOCAL_COMM_ID)))
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
