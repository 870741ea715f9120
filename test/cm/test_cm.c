/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rp_cm_test: the RDMA CM (librdmacm's API) over rocepmd, one process, two
 * devices wired back to back (192.0.2.1 and 192.0.2.2), one case per
 * behaviour:
 *
 *   rc           connect, accept, private data both ways, CONNECT_REQUEST
 *                and ESTABLISHED parameters, SEND and RDMA READ on the
 *                connected QPs, disconnect seen by both sides
 *   rc6          rc over IPv6 (sockaddr_in6, 2001:db8::1 and ::2): the
 *                ids' addresses and GIDs are the IPv6 ones
 *   reject       rdma_reject with private data: REJECTED, status 28
 *   ud           SIDR: the peer's QPN and Q_Key, then a UD SEND through
 *                the address the events carry
 *   ud6          ud over IPv6
 *   errors       bad calls fail as librdmacm documents (AF_IB:
 *                EAFNOSUPPORT; an IPv4 or IPv6 address no device has:
 *                EADDRNOTAVAIL); ADDR_ERROR off the devices' subnets,
 *                IPv4 and IPv6; an IPv4 listener takes no IPv6 request;
 *                O_NONBLOCK channels; rdma_destroy_id waits for the ack
 *                of a delivered event
 *   unreachable  a REQ nobody answers: retransmitted, then UNREACHABLE
 *   garbage      thousands of random and mutated CM MADs sent to the
 *                listener's QP 1 from a raw UD QP: requests that parse
 *                become CONNECT_REQUESTs (rejected), the rest is ignored;
 *                then a real connection on the same listener still works
 *   chan_race    a thread waiting in rdma_get_cm_event() while the id
 *                whose event is on its way and then the channel are
 *                destroyed (rping's end of run) never returns an error
 *   psn          the Starting PSNs as the kernel reads them: the kernel's
 *                own REQ (from the rxe capture) sent from a raw QP makes
 *                the passive QP send from the REQ's PSN, and data flows
 *                to a raw QP set up as the kernel's active side would;
 *                then RC and UC connections whose QPs (ibv_query_qp)
 *                start where rdma_init_qp_attr said, crosswise
 *   mcast        rdma_join_multicast(_ex) and rdma_leave_multicast: bad
 *                calls (EINVAL, EOPNOTSUPP, EADDRNOTAVAIL), the JOIN event's
 *                address (the group GID, QPN 0xFFFFFF, the UDP Q_Key), a
 *                datagram to the group, a send-only member not in it, a
 *                group resolved without a source address (a device's
 *                address becomes the source), a group joined twice left
 *                twice, rdma_destroy_id with groups
 *   mcast6       mcast over IPv6
 *
 * Run as: rocepmd-run --config two-ports.ini -- rp_cm_test CASE
 */

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "cm_mad.h"
#include "rp_testlib.h"

const char rt_prog[] = "rp_cm_test";

#define CM_TIMEOUT_MS	5000
#define MSG_LEN		4096
#define PORT_BASE	7470
#define RTE_DIM_(a)	(sizeof(a) / sizeof((a)[0]))

struct cm_side {
	struct rdma_event_channel *ch;
	struct rdma_cm_id *id;		/* listener or client */
	struct rdma_cm_id *conn;	/* the connected id */
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct rt_buf buf;
};

static void
sin_set(struct sockaddr_in *s, uint32_t ip, uint16_t port)
{
	memset(s, 0, sizeof(*s));
	s->sin_family = AF_INET;
	s->sin_addr.s_addr = htonl(ip);
	s->sin_port = htons(port);
}

/* The family the connection cases use: AF_INET, or AF_INET6 (rc6, ud6). */
static int cm_family = AF_INET;

/* 2001:db8::@last */
static void
sin6_set(struct sockaddr_in6 *s, uint8_t last, uint16_t port)
{
	memset(s, 0, sizeof(*s));
	s->sin6_family = AF_INET6;
	s->sin6_addr.s6_addr[0] = 0x20;
	s->sin6_addr.s6_addr[1] = 0x01;
	s->sin6_addr.s6_addr[2] = 0x0d;
	s->sin6_addr.s6_addr[3] = 0xb8;
	s->sin6_addr.s6_addr[15] = last;
	s->sin6_port = htons(port);
}

/* Device @dev's address (0: 192.0.2.1 or 2001:db8::1, 1: ...2) in @ss. */
static struct sockaddr *
dev_addr(struct sockaddr_storage *ss, unsigned int dev, uint16_t port)
{
	if (cm_family == AF_INET6)
		sin6_set((struct sockaddr_in6 *)ss, (uint8_t)(dev + 1), port);
	else
		sin_set((struct sockaddr_in *)ss, dev == 0 ? RT_IPV4_0 :
			RT_IPV4_1, port);
	return (struct sockaddr *)ss;
}

/* Whether @sa is device @dev's address in the family under test. */
static bool
is_dev_addr(const struct sockaddr *sa, unsigned int dev)
{
	struct sockaddr_storage want;

	dev_addr(&want, dev, 0);
	if (sa->sa_family != cm_family)
		return false;
	if (cm_family == AF_INET6)
		return memcmp(&((const struct sockaddr_in6 *)sa)->sin6_addr,
			      &((struct sockaddr_in6 *)&want)->sin6_addr,
			      16) == 0;
	return ((const struct sockaddr_in *)sa)->sin_addr.s_addr ==
		((struct sockaddr_in *)&want)->sin_addr.s_addr;
}

/* Device @dev's GID in the family under test: index 0 or 2. */
static void
dev_gid(union ibv_gid *gid, unsigned int dev)
{
	struct sockaddr_storage ss;

	memset(gid, 0, sizeof(*gid));
	dev_addr(&ss, dev, 0);
	if (cm_family == AF_INET6) {
		memcpy(gid->raw, &((struct sockaddr_in6 *)&ss)->sin6_addr, 16);
	} else {
		gid->raw[10] = gid->raw[11] = 0xff;
		memcpy(&gid->raw[12],
		       &((struct sockaddr_in *)&ss)->sin_addr.s_addr, 4);
	}
}

/* The next event, within @ms; it must be @type. */
static struct rdma_cm_event *
cm_expect(struct rdma_event_channel *ch, enum rdma_cm_event_type type,
	  int ms, const char *what)
{
	struct pollfd p = { .fd = ch->fd, .events = POLLIN };
	struct rdma_cm_event *ev;

	rt_step("%s: wait for %s", what, rdma_event_str(type));
	RT_CHECK(poll(&p, 1, ms) == 1, "%s: no event in %d ms (waiting for %s)",
		 what, ms, rdma_event_str(type));
	RT_CHECK(rdma_get_cm_event(ch, &ev) == 0, "%s: rdma_get_cm_event: %s",
		 what, strerror(errno));
	RT_CHECK(ev->event == type, "%s: %s (status %d), expected %s", what,
		 rdma_event_str(ev->event), ev->status, rdma_event_str(type));
	return ev;
}

static void
cm_ack(struct rdma_cm_event *ev)
{
	RT_CHECK(rdma_ack_cm_event(ev) == 0, "rdma_ack_cm_event: %s",
		 strerror(errno));
}

static void
side_init(struct cm_side *s, enum rdma_port_space ps)
{
	memset(s, 0, sizeof(*s));
	s->ch = rdma_create_event_channel();
	RT_CHECK(s->ch != NULL, "rdma_create_event_channel: %s",
		 strerror(errno));
	RT_CHECK(rdma_create_id(s->ch, &s->id, s, ps) == 0,
		 "rdma_create_id: %s", strerror(errno));
}

/* PD, CQ, buffer and QP on a connected or connecting id. */
static void
side_qp(struct cm_side *s, struct rdma_cm_id *id, enum ibv_qp_type qpt)
{
	struct ibv_qp_init_attr qa = { 0 };
	struct rt_dev d = { 0 };

	RT_CHECK(id->verbs != NULL, "no verbs context on the id");
	s->pd = ibv_alloc_pd(id->verbs);
	RT_CHECK(s->pd != NULL, "ibv_alloc_pd: %s", strerror(errno));
	s->cq = ibv_create_cq(id->verbs, RT_CQE, NULL, NULL, 0);
	RT_CHECK(s->cq != NULL, "ibv_create_cq: %s", strerror(errno));
	d.ctx = id->verbs;
	d.pd = s->pd;
	rt_buf_alloc(&s->buf, &d, MSG_LEN + RT_GRH_LEN, RT_ACCESS_ALL);
	qa.send_cq = s->cq;
	qa.recv_cq = s->cq;
	qa.qp_type = qpt;
	qa.cap.max_send_wr = 16;
	qa.cap.max_recv_wr = 16;
	qa.cap.max_send_sge = 1;
	qa.cap.max_recv_sge = 1;
	RT_CHECK(rdma_create_qp(id, s->pd, &qa) == 0, "rdma_create_qp: %s",
		 strerror(errno));
	RT_CHECK(id->qp != NULL && id->qp->qp_type == qpt,
		 "rdma_create_qp left no QP of type %d on the id", qpt);
	RT_CHECK(id->qp->state == (qpt == IBV_QPT_UD ? IBV_QPS_RTS :
				   IBV_QPS_INIT),
		 "QP in state %d after rdma_create_qp", id->qp->state);
}

static void
side_fini(struct cm_side *s)
{
	if (s->conn != NULL && s->conn != s->id) {
		rdma_destroy_qp(s->conn);
		RT_CHECK(rdma_destroy_id(s->conn) == 0, "rdma_destroy_id: %s",
			 strerror(errno));
	}
	if (s->id != NULL) {
		rdma_destroy_qp(s->id);
		RT_CHECK(rdma_destroy_id(s->id) == 0, "rdma_destroy_id: %s",
			 strerror(errno));
	}
	if (s->buf.mr != NULL)
		rt_buf_free(&s->buf);
	if (s->cq != NULL)
		ibv_destroy_cq(s->cq);
	if (s->pd != NULL)
		RT_CHECK(ibv_dealloc_pd(s->pd) == 0, "ibv_dealloc_pd: %s",
			 strerror(errno));
	rdma_destroy_event_channel(s->ch);
}

static void
listen_on(struct cm_side *srv, uint16_t port)
{
	struct sockaddr_storage a;

	RT_CHECK(rdma_bind_addr(srv->id, dev_addr(&a, 1, port)) == 0,
		 "rdma_bind_addr %s:%u: %s", cm_family == AF_INET6 ?
		 "2001:db8::2" : "192.0.2.2", port, strerror(errno));
	RT_CHECK(ntohs(rdma_get_src_port(srv->id)) == port,
		 "rdma_get_src_port %u after binding %u",
		 ntohs(rdma_get_src_port(srv->id)), port);
	RT_CHECK(is_dev_addr(rdma_get_local_addr(srv->id), 1),
		 "rdma_get_local_addr is not the address bound");
	RT_CHECK(rdma_listen(srv->id, 8) == 0, "rdma_listen: %s",
		 strerror(errno));
}

static void
resolve(struct cm_side *cli, uint16_t port)
{
	struct sockaddr_storage src, dst;
	union ibv_gid want;

	RT_CHECK(rdma_resolve_addr(cli->id, dev_addr(&src, 0, 0),
				   dev_addr(&dst, 1, port), 2000) == 0,
		 "rdma_resolve_addr: %s", strerror(errno));
	cm_ack(cm_expect(cli->ch, RDMA_CM_EVENT_ADDR_RESOLVED, CM_TIMEOUT_MS,
			 "client"));
	RT_CHECK(cli->id->verbs != NULL &&
		 strcmp(ibv_get_device_name(cli->id->verbs->device),
			RT_DEV0) == 0,
		 "resolved to %s, expected %s (the source's device)",
		 cli->id->verbs ? ibv_get_device_name(cli->id->verbs->device) :
		 "nothing", RT_DEV0);
	RT_CHECK(rdma_resolve_route(cli->id, 2000) == 0,
		 "rdma_resolve_route: %s", strerror(errno));
	cm_ack(cm_expect(cli->ch, RDMA_CM_EVENT_ROUTE_RESOLVED, CM_TIMEOUT_MS,
			 "client"));
	dev_gid(&want, 1);
	RT_CHECK(memcmp(cli->id->route.addr.addr.ibaddr.dgid.raw, want.raw,
			16) == 0 && cli->id->route.num_paths == 1 &&
		 cli->id->route.path_rec != NULL &&
		 memcmp(cli->id->route.path_rec->dgid.raw, want.raw, 16) == 0,
		 "route: destination GID or path record wrong");
	dev_gid(&want, 0);
	RT_CHECK(memcmp(cli->id->route.addr.addr.ibaddr.sgid.raw, want.raw,
			16) == 0 &&
		 memcmp(cli->id->route.path_rec->sgid.raw, want.raw, 16) == 0,
		 "route: source GID is not our address's");
	RT_CHECK(is_dev_addr(rdma_get_local_addr(cli->id), 0) &&
		 is_dev_addr(rdma_get_peer_addr(cli->id), 1),
		 "client: rdma_get_local_addr/rdma_get_peer_addr wrong");
	RT_CHECK(ntohs(rdma_get_dst_port(cli->id)) == port,
		 "rdma_get_dst_port %u, expected %u",
		 ntohs(rdma_get_dst_port(cli->id)), port);
}

/* Post one receive of the whole buffer. */
static void
post_recv(struct cm_side *s, struct rdma_cm_id *id)
{
	struct ibv_sge sg = rt_sge(&s->buf, 0, s->buf.len);
	struct ibv_recv_wr wr = { .wr_id = 1, .sg_list = &sg, .num_sge = 1 };
	struct ibv_recv_wr *bad;

	RT_CHECK(ibv_post_recv(id->qp, &wr, &bad) == 0, "ibv_post_recv");
}

/* ------------------------------------------------------------------ rc */

struct rc_priv {
	uint64_t addr;
	uint32_t rkey;
	uint8_t pattern[44];
};

static void
rt_case_rc(void)
{
	struct cm_side srv, cli;
	struct rdma_cm_event *ev;
	struct rdma_conn_param cp = { 0 };
	uint8_t req_priv[56], rep_priv[196];
	struct rc_priv rp;
	struct ibv_wc wc;
	struct ibv_sge sg;
	struct ibv_send_wr wr = { 0 }, *bad;
	uint8_t *msg = malloc(MSG_LEN);

	RT_CHECK(msg != NULL, "malloc");
	side_init(&srv, RDMA_PS_TCP);
	side_init(&cli, RDMA_PS_TCP);
	listen_on(&srv, PORT_BASE);
	resolve(&cli, PORT_BASE);
	side_qp(&cli, cli.id, IBV_QPT_RC);
	cli.conn = cli.id;
	post_recv(&cli, cli.id);

	rt_step("client: rdma_connect with 56 bytes of private data");
	rt_fill_random(req_priv, sizeof(req_priv));
	cp.private_data = req_priv;
	cp.private_data_len = sizeof(req_priv);
	cp.responder_resources = 4;
	cp.initiator_depth = 2;
	cp.retry_count = 7;
	cp.rnr_retry_count = 7;
	RT_CHECK(rdma_connect(cli.id, &cp) == 0, "rdma_connect: %s",
		 strerror(errno));
	RT_CHECK(rdma_connect(cli.id, &cp) == -1 && errno == EINVAL,
		 "a second rdma_connect was not refused with EINVAL");

	ev = cm_expect(srv.ch, RDMA_CM_EVENT_CONNECT_REQUEST, CM_TIMEOUT_MS,
		       "server");
	RT_CHECK(ev->listen_id == srv.id && ev->id != srv.id &&
		 ev->id->context == &srv,
		 "CONNECT_REQUEST: listen_id/id/context wrong");
	RT_CHECK(ev->param.conn.private_data_len >= sizeof(req_priv) &&
		 memcmp(ev->param.conn.private_data, req_priv,
			sizeof(req_priv)) == 0,
		 "CONNECT_REQUEST: private data (%u bytes) differs",
		 ev->param.conn.private_data_len);
	/* From the passive side, the peer's depth is our resources. */
	RT_CHECK(ev->param.conn.responder_resources == 2 &&
		 ev->param.conn.initiator_depth == 4,
		 "CONNECT_REQUEST: responder_resources %u initiator_depth %u, expected 2 and 4",
		 ev->param.conn.responder_resources,
		 ev->param.conn.initiator_depth);
	RT_CHECK(ev->param.conn.qp_num == cli.id->qp->qp_num,
		 "CONNECT_REQUEST: qp_num 0x%x, client QP 0x%x",
		 ev->param.conn.qp_num, cli.id->qp->qp_num);
	srv.conn = ev->id;
	RT_CHECK(is_dev_addr(rdma_get_peer_addr(srv.conn), 0) &&
		 rdma_get_dst_port(srv.conn) == rdma_get_src_port(cli.id),
		 "server: peer address or port is not the client's");
	RT_CHECK(is_dev_addr(rdma_get_local_addr(srv.conn), 1) &&
		 rdma_get_src_port(srv.conn) == htons(PORT_BASE),
		 "server: local address or port is not the listener's");
	RT_CHECK(strcmp(ibv_get_device_name(srv.conn->verbs->device),
			RT_DEV1) == 0, "server id on %s, expected %s",
		 ibv_get_device_name(srv.conn->verbs->device), RT_DEV1);
	cm_ack(ev);

	side_qp(&srv, srv.conn, IBV_QPT_RC);
	post_recv(&srv, srv.conn);
	rt_fill_random(srv.buf.p, MSG_LEN);
	memset(&rp, 0, sizeof(rp));
	rp.addr = (uintptr_t)srv.buf.p;
	rp.rkey = srv.buf.mr->rkey;
	rt_fill_random(rp.pattern, sizeof(rp.pattern));
	memset(rep_priv, 0, sizeof(rep_priv));
	memcpy(rep_priv, &rp, sizeof(rp));
	rt_fill_random(rep_priv + sizeof(rp), sizeof(rep_priv) - sizeof(rp));
	memset(&cp, 0, sizeof(cp));
	cp.private_data = rep_priv;
	cp.private_data_len = sizeof(rep_priv);
	cp.responder_resources = 2;
	cp.initiator_depth = 4;
	cp.rnr_retry_count = 7;
	rt_step("server: rdma_accept with 196 bytes of private data");
	RT_CHECK(rdma_accept(srv.conn, &cp) == 0, "rdma_accept: %s",
		 strerror(errno));

	ev = cm_expect(cli.ch, RDMA_CM_EVENT_ESTABLISHED, CM_TIMEOUT_MS,
		       "client");
	RT_CHECK(ev->id == cli.id && ev->param.conn.private_data_len >=
		 sizeof(rep_priv) && memcmp(ev->param.conn.private_data,
					    rep_priv, sizeof(rep_priv)) == 0,
		 "client ESTABLISHED: id or private data differs");
	cm_ack(ev);
	cm_ack(cm_expect(srv.ch, RDMA_CM_EVENT_ESTABLISHED, CM_TIMEOUT_MS,
			 "server"));
	RT_CHECK(cli.id->qp->state == IBV_QPS_RTS &&
		 srv.conn->qp->state == IBV_QPS_RTS,
		 "QPs not in RTS after ESTABLISHED (client %d, server %d)",
		 cli.id->qp->state, srv.conn->qp->state);

	rt_step("client -> server: SEND %u B", MSG_LEN);
	rt_fill_random(msg, MSG_LEN);
	memcpy(cli.buf.p, msg, MSG_LEN);
	sg = rt_sge(&cli.buf, 0, MSG_LEN);
	wr.wr_id = 2;
	wr.sg_list = &sg;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_SEND;
	wr.send_flags = IBV_SEND_SIGNALED;
	RT_CHECK(ibv_post_send(cli.id->qp, &wr, &bad) == 0, "post SEND");
	wc = rt_expect_wc(cli.cq, "client SEND", 2, IBV_WC_SUCCESS, IBV_WC_SEND);
	wc = rt_expect_wc(srv.cq, "server RECV", 1, IBV_WC_SUCCESS, IBV_WC_RECV);
	RT_CHECK(wc.byte_len == MSG_LEN, "server received %u B", wc.byte_len);
	rt_check_data(srv.buf.p, msg, MSG_LEN, "SEND payload");

	rt_step("client: RDMA READ of the server's buffer (address and rkey from the REP's private data)");
	rt_fill_random(srv.buf.p, MSG_LEN);
	memcpy(msg, srv.buf.p, MSG_LEN);
	memset(cli.buf.p, 0, MSG_LEN);
	wr.wr_id = 3;
	wr.opcode = IBV_WR_RDMA_READ;
	wr.wr.rdma.remote_addr = rp.addr;
	wr.wr.rdma.rkey = rp.rkey;
	RT_CHECK(ibv_post_send(cli.id->qp, &wr, &bad) == 0, "post READ");
	rt_expect_wc(cli.cq, "client READ", 3, IBV_WC_SUCCESS, IBV_WC_RDMA_READ);
	rt_check_data(cli.buf.p, msg, MSG_LEN, "READ data");

	rt_step("client: rdma_disconnect");
	RT_CHECK(rdma_disconnect(cli.id) == 0, "rdma_disconnect: %s",
		 strerror(errno));
	cm_ack(cm_expect(srv.ch, RDMA_CM_EVENT_DISCONNECTED, CM_TIMEOUT_MS,
			 "server"));
	cm_ack(cm_expect(cli.ch, RDMA_CM_EVENT_DISCONNECTED, CM_TIMEOUT_MS,
			 "client"));
	RT_CHECK(cli.id->qp->state == IBV_QPS_ERR &&
		 srv.conn->qp->state == IBV_QPS_ERR,
		 "QPs not in ERR after DISCONNECTED (client %d, server %d)",
		 cli.id->qp->state, srv.conn->qp->state);
	/* The posted receive of the client flushes. */
	rt_expect_wc(cli.cq, "client receive flushed", 1,
		     IBV_WC_WR_FLUSH_ERR,
		     IBV_WC_RECV);
	cli.conn = NULL;
	side_fini(&cli);
	side_fini(&srv);
	free(msg);
}

/* -------------------------------------------------------------- reject */

static void
rt_case_reject(void)
{
	struct cm_side srv, cli;
	struct rdma_cm_event *ev;
	uint8_t why[40];

	side_init(&srv, RDMA_PS_TCP);
	side_init(&cli, RDMA_PS_TCP);
	listen_on(&srv, PORT_BASE + 1);
	resolve(&cli, PORT_BASE + 1);
	side_qp(&cli, cli.id, IBV_QPT_RC);
	RT_CHECK(rdma_connect(cli.id, NULL) == 0, "rdma_connect: %s",
		 strerror(errno));
	ev = cm_expect(srv.ch, RDMA_CM_EVENT_CONNECT_REQUEST, CM_TIMEOUT_MS,
		       "server");
	srv.conn = ev->id;
	cm_ack(ev);
	rt_fill_random(why, sizeof(why));
	rt_step("server: rdma_reject with 40 bytes of private data");
	RT_CHECK(rdma_reject(srv.conn, why, sizeof(why)) == 0,
		 "rdma_reject: %s", strerror(errno));
	RT_CHECK(rdma_accept(srv.conn, NULL) == -1 && errno == EINVAL,
		 "rdma_accept after rdma_reject was not refused");
	ev = cm_expect(cli.ch, RDMA_CM_EVENT_REJECTED, CM_TIMEOUT_MS,
		       "client");
	/* librdmacm: the IBTA reason, 28 for a consumer's reject. */
	RT_CHECK(ev->status == 28, "REJECTED status %d, expected 28",
		 ev->status);
	RT_CHECK(ev->param.conn.private_data_len >= sizeof(why) &&
		 memcmp(ev->param.conn.private_data, why, sizeof(why)) == 0,
		 "REJECTED: private data differs");
	cm_ack(ev);
	side_fini(&cli);
	side_fini(&srv);
}

/* ------------------------------------------------------------------ ud */

static void
rt_case_ud(void)
{
	struct cm_side srv, cli;
	struct rdma_cm_event *ev;
	struct rdma_conn_param cp = { 0 };
	struct ibv_ah *ah;
	struct ibv_sge sg;
	struct ibv_send_wr wr = { 0 }, *bad;
	struct ibv_wc wc;
	uint32_t qpn, qkey;
	uint8_t msg[512];

	side_init(&srv, RDMA_PS_UDP);
	side_init(&cli, RDMA_PS_UDP);
	listen_on(&srv, PORT_BASE + 2);
	resolve(&cli, PORT_BASE + 2);
	side_qp(&cli, cli.id, IBV_QPT_UD);
	cli.conn = cli.id;
	RT_CHECK(rdma_connect(cli.id, &cp) == 0, "rdma_connect (SIDR): %s",
		 strerror(errno));
	ev = cm_expect(srv.ch, RDMA_CM_EVENT_CONNECT_REQUEST, CM_TIMEOUT_MS,
		       "server");
	{
		union ibv_gid want;

		dev_gid(&want, 0);
		RT_CHECK(ev->param.ud.ah_attr.is_global &&
			 memcmp(ev->param.ud.ah_attr.grh.dgid.raw, want.raw,
				16) == 0 &&
			 ev->param.ud.qkey == RDMA_UDP_QKEY,
			 "SIDR CONNECT_REQUEST: address of the client or Q_Key wrong");
		RT_CHECK(is_dev_addr(rdma_get_peer_addr(ev->id), 0),
			 "SIDR: the server id's peer is not the client");
	}
	srv.conn = ev->id;
	cm_ack(ev);
	side_qp(&srv, srv.conn, IBV_QPT_UD);
	post_recv(&srv, srv.conn);
	cp.qp_num = srv.conn->qp->qp_num;
	RT_CHECK(rdma_accept(srv.conn, &cp) == 0, "rdma_accept (SIDR): %s",
		 strerror(errno));
	ev = cm_expect(cli.ch, RDMA_CM_EVENT_ESTABLISHED, CM_TIMEOUT_MS,
		       "client");
	qpn = ev->param.ud.qp_num;
	qkey = ev->param.ud.qkey;
	RT_CHECK(qpn == srv.conn->qp->qp_num && qkey == RDMA_UDP_QKEY,
		 "SIDR ESTABLISHED: qp_num 0x%x qkey 0x%x, expected 0x%x 0x%x",
		 qpn, qkey, srv.conn->qp->qp_num, RDMA_UDP_QKEY);
	ah = ibv_create_ah(cli.pd, &ev->param.ud.ah_attr);
	RT_CHECK(ah != NULL, "ibv_create_ah from the event: %s",
		 strerror(errno));
	cm_ack(ev);

	rt_step("client -> server: UD SEND of %zu B through the SIDR address",
		sizeof(msg));
	rt_fill_random(msg, sizeof(msg));
	memcpy(cli.buf.p, msg, sizeof(msg));
	sg = rt_sge(&cli.buf, 0, sizeof(msg));
	wr.wr_id = 9;
	wr.sg_list = &sg;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_SEND;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.ud.ah = ah;
	wr.wr.ud.remote_qpn = qpn;
	wr.wr.ud.remote_qkey = qkey;
	RT_CHECK(ibv_post_send(cli.id->qp, &wr, &bad) == 0, "post UD SEND");
	rt_expect_wc(cli.cq, "client UD SEND", 9, IBV_WC_SUCCESS, IBV_WC_SEND);
	wc = rt_expect_wc(srv.cq, "server UD RECV", 1, IBV_WC_SUCCESS,
			  IBV_WC_RECV);
	RT_CHECK(wc.byte_len == sizeof(msg) + RT_GRH_LEN &&
		 wc.src_qp == cli.id->qp->qp_num,
		 "UD receive: %u B from QP 0x%x", wc.byte_len, wc.src_qp);
	rt_check_data(srv.buf.p + RT_GRH_LEN, msg, sizeof(msg), "UD payload");
	RT_CHECK(ibv_destroy_ah(ah) == 0, "ibv_destroy_ah");
	side_fini(&cli);
	side_fini(&srv);
}

/* -------------------------------------------------------------- errors */

struct destroy_arg {
	struct rdma_cm_id *id;
	atomic_int done;
};

static void *
destroy_thread(void *p)
{
	struct destroy_arg *a = p;

	rdma_destroy_id(a->id);
	atomic_store(&a->done, 1);
	return NULL;
}

static void
rt_case_errors(void)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct rdma_cm_id *id, *id2;
	struct rdma_cm_event *ev;
	struct sockaddr_in a;
	struct destroy_arg da;
	pthread_t t;
	int fl;

	RT_CHECK(ch != NULL, "rdma_create_event_channel");
	rt_step("rdma_create_id with RDMA_PS_IB: EPROTONOSUPPORT");
	RT_CHECK(rdma_create_id(ch, &id, NULL, RDMA_PS_IB) == -1 &&
		 errno == EPROTONOSUPPORT, "RDMA_PS_IB was not refused");
	RT_CHECK(rdma_create_id(ch, &id, NULL, RDMA_PS_TCP) == 0,
		 "rdma_create_id: %s", strerror(errno));
	RT_CHECK(rdma_create_id(ch, &id2, NULL, RDMA_PS_TCP) == 0,
		 "rdma_create_id: %s", strerror(errno));

	rt_step("rdma_bind_addr to an address no device has: EADDRNOTAVAIL");
	sin_set(&a, 0xc0000263u, 0);	/* 192.0.2.99 */
	RT_CHECK(rdma_bind_addr(id, (struct sockaddr *)&a) == -1 &&
		 errno == EADDRNOTAVAIL, "bind to 192.0.2.99 was not refused");
	rt_step("rdma_bind_addr of a port in use: EADDRINUSE");
	sin_set(&a, RT_IPV4_0, PORT_BASE + 3);
	RT_CHECK(rdma_bind_addr(id, (struct sockaddr *)&a) == 0,
		 "rdma_bind_addr: %s", strerror(errno));
	RT_CHECK(rdma_bind_addr(id2, (struct sockaddr *)&a) == -1 &&
		 errno == EADDRINUSE, "a second bind was not refused");
	rt_step("rdma_connect before the route is resolved: EINVAL");
	RT_CHECK(rdma_connect(id2, NULL) == -1 && errno == EINVAL,
		 "rdma_connect on an idle id was not refused");
	rt_step("rdma_resolve_route before the address: EINVAL");
	RT_CHECK(rdma_resolve_route(id2, 100) == -1 && errno == EINVAL,
		 "rdma_resolve_route on an idle id was not refused");
	rt_step("AF_IB destination: EAFNOSUPPORT");
	{
		struct sockaddr_storage ib = { .ss_family = AF_IB };

		RT_CHECK(rdma_resolve_addr(id2, NULL, (struct sockaddr *)&ib,
					   100) == -1 &&
			 errno == EAFNOSUPPORT, "AF_IB was not refused");
		RT_CHECK(rdma_bind_addr(id2, (struct sockaddr *)&ib) == -1 &&
			 errno == EAFNOSUPPORT, "AF_IB bind was not refused");
	}
	rt_step("rdma_bind_addr to an IPv6 address no device has: EADDRNOTAVAIL");
	{
		struct sockaddr_in6 s6;

		sin6_set(&s6, 0x99, 0);		/* 2001:db8::99 */
		RT_CHECK(rdma_bind_addr(id2, (struct sockaddr *)&s6) == -1 &&
			 errno == EADDRNOTAVAIL,
			 "bind to 2001:db8::99 was not refused");
	}
	rt_step("source and destination of two families: EINVAL");
	{
		struct sockaddr_in6 s6;
		struct sockaddr_in s4;

		sin6_set(&s6, 1, 0);
		sin_set(&s4, RT_IPV4_1, 7);
		RT_CHECK(rdma_resolve_addr(id2, (struct sockaddr *)&s6,
					   (struct sockaddr *)&s4, 100) == -1 &&
			 errno == EINVAL, "mixed families were not refused");
	}
	rt_step("an IPv6 destination on no device's subnet: ADDR_ERROR");
	{
		struct rdma_cm_id *id3;
		struct sockaddr_in6 s6;

		RT_CHECK(rdma_create_id(ch, &id3, NULL, RDMA_PS_TCP) == 0,
			 "rdma_create_id: %s", strerror(errno));
		sin6_set(&s6, 1, 7);
		s6.sin6_addr.s6_addr[4] = 0xff;	/* 2001:db8:ff00::1 */
		RT_CHECK(rdma_resolve_addr(id3, NULL, (struct sockaddr *)&s6,
					   100) == 0,
			 "rdma_resolve_addr: %s", strerror(errno));
		ev = cm_expect(ch, RDMA_CM_EVENT_ADDR_ERROR, CM_TIMEOUT_MS,
			       "errors");
		RT_CHECK(ev->status == -ENETUNREACH && ev->id == id3,
			 "ADDR_ERROR status %d, expected %d", ev->status,
			 -ENETUNREACH);
		cm_ack(ev);
		RT_CHECK(rdma_destroy_id(id3) == 0, "rdma_destroy_id");
	}

	rt_step("O_NONBLOCK channel with nothing queued: EAGAIN");
	fl = fcntl(ch->fd, F_GETFL);
	RT_CHECK(fcntl(ch->fd, F_SETFL, fl | O_NONBLOCK) == 0, "fcntl");
	RT_CHECK(rdma_get_cm_event(ch, &ev) == -1 && errno == EAGAIN,
		 "rdma_get_cm_event on an empty non-blocking channel");
	RT_CHECK(fcntl(ch->fd, F_SETFL, fl) == 0, "fcntl");

	rt_step("a destination on no device's subnet: ADDR_ERROR (no packet)");
	sin_set(&a, 0xcb007101u, 7);	/* 203.0.113.1, TEST-NET-3 */
	RT_CHECK(rdma_resolve_addr(id2, NULL, (struct sockaddr *)&a, 100) == 0,
		 "rdma_resolve_addr: %s", strerror(errno));
	ev = cm_expect(ch, RDMA_CM_EVENT_ADDR_ERROR, CM_TIMEOUT_MS, "errors");
	RT_CHECK(ev->status == -ENETUNREACH && ev->id == id2,
		 "ADDR_ERROR status %d, expected %d", ev->status,
		 -ENETUNREACH);

	rt_step("rdma_destroy_id waits for the ack of its delivered event");
	da.id = id2;
	atomic_store(&da.done, 0);
	RT_CHECK(pthread_create(&t, NULL, destroy_thread, &da) == 0,
		 "pthread_create");
	rt_sleep_ms(200);
	RT_CHECK(atomic_load(&da.done) == 0,
		 "rdma_destroy_id returned with an event not acked");
	cm_ack(ev);
	pthread_join(t, NULL);
	RT_CHECK(atomic_load(&da.done) == 1, "rdma_destroy_id did not return");

	RT_CHECK(strcmp(rdma_event_str(RDMA_CM_EVENT_ESTABLISHED),
			"RDMA_CM_EVENT_ESTABLISHED") == 0, "rdma_event_str");
	RT_CHECK(rdma_destroy_id(id) == 0, "rdma_destroy_id");
	rdma_destroy_event_channel(ch);
}

/* ---------------------------------------------------------- chan_race */

struct chan_reader {
	struct rdma_event_channel *ch;
	atomic_int tid;			/* the reader's thread id, once known */
	atomic_int returned;		/* errno + 1 once it returned -1 */
};

/* Whether thread @tid of this process is blocked in read(2). */
static bool
thread_in_read(int tid)
{
	char path[64], buf[32];
	bool in_read = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/task/%d/syscall", tid);
	f = fopen(path, "r");
	if (f == NULL)
		return false;
	if (fgets(buf, sizeof(buf), f) != NULL)
		in_read = strncmp(buf, "0 ", 2) == 0;	/* __NR_read */
	fclose(f);
	return in_read;
}

/*
 * rping's CM thread, for one event: it either gets the event (and acks
 * it) or, the event dropped with its id, must wait for ever.  One call
 * only: calling again after the ack could meet a channel the main thread
 * already destroyed, the test's own misuse.
 */
static void *
chan_reader(void *p)
{
	struct chan_reader *r = p;
	struct rdma_cm_event *ev;

	atomic_store(&r->tid, (int)gettid());
	if (rdma_get_cm_event(r->ch, &ev) == 0)
		rdma_ack_cm_event(ev);
	else
		atomic_store(&r->returned, errno + 1);
	return NULL;
}

/*
 * A thread waits in rdma_get_cm_event() while the main thread destroys the
 * id whose event is on its way, then the channel (rping's end of run).  As
 * with librdmacm, the waiting thread must never return an error nor touch
 * the freed channel: rping's CM thread exits 255 on an error.  The window
 * is narrow: many rounds, with varying delays.
 */
static void
rt_case_chan_race(void)
{
	enum { ROUNDS = 300 };
	static struct chan_reader readers[ROUNDS];
	struct sockaddr_in a;

	rt_step("%d rounds: a reader, an ADDR_ERROR on its way, destroy id and channel",
		ROUNDS);
	for (unsigned int i = 0; i < ROUNDS; i++) {
		struct chan_reader *r = &readers[i];
		struct rdma_cm_id *id;
		pthread_t t;

		r->ch = rdma_create_event_channel();
		RT_CHECK(r->ch != NULL, "rdma_create_event_channel");
		RT_CHECK(rdma_create_id(r->ch, &id, NULL, RDMA_PS_TCP) == 0,
			 "rdma_create_id: %s", strerror(errno));
		RT_CHECK(pthread_create(&t, NULL, chan_reader, r) == 0,
			 "pthread_create");
		pthread_detach(t);	/* it waits for ever, as librdmacm's */
		/*
		 * In rping the thread waits long before the end: wait until it
		 * blocks in the channel's read() (destroying the channel
		 * before it even got there would be the test's own misuse).
		 */
		for (unsigned int k = 0; ; k++) {
			int tid = atomic_load(&r->tid);

			if (tid != 0 && thread_in_read(tid))
				break;
			RT_CHECK(k < 50000, "round %u: the reader never blocked "
				 "in read()", i);
			usleep(100);
		}
		sin_set(&a, 0xcb007101u, 7);	/* 203.0.113.1: ADDR_ERROR */
		RT_CHECK(rdma_resolve_addr(id, NULL, (struct sockaddr *)&a,
					   100) == 0,
			 "rdma_resolve_addr: %s", strerror(errno));
		if (i % 3 != 0)
			usleep(i % 40);
		RT_CHECK(rdma_destroy_id(id) == 0, "rdma_destroy_id: %s",
			 strerror(errno));
		rdma_destroy_event_channel(r->ch);
	}
	rt_sleep_ms(200);
	for (unsigned int i = 0; i < ROUNDS; i++) {
		int ret = atomic_load(&readers[i].returned);

		RT_CHECK(ret == 0, "round %u: rdma_get_cm_event on the destroyed "
			 "channel returned -1 (%s)", i, strerror(ret - 1));
	}
}

/* --------------------------------------------------------- unreachable */

static void
rt_case_unreachable(void)
{
	struct cm_side cli;
	struct rdma_cm_event *ev;
	double t0;

	side_init(&cli, RDMA_PS_TCP);
	resolve(&cli, PORT_BASE + 4);	/* nobody listens there */
	side_qp(&cli, cli.id, IBV_QPT_RC);
	t0 = rt_now();
	RT_CHECK(rdma_connect(cli.id, NULL) == 0, "rdma_connect: %s",
		 strerror(errno));
	/* 15 retransmissions 500 ms apart, then UNREACHABLE. */
	ev = cm_expect(cli.ch, RDMA_CM_EVENT_UNREACHABLE, 20000, "client");
	RT_CHECK(ev->status == -ETIMEDOUT, "UNREACHABLE status %d, expected %d",
		 ev->status, -ETIMEDOUT);
	RT_CHECK(rt_now() - t0 >= 7.0,
		 "UNREACHABLE after %.1f s: the REQ was not retried",
		 rt_now() - t0);
	cm_ack(ev);
	cli.conn = cli.id;
	side_fini(&cli);
}

/* ------------------------------------------------------------ garbage */

/* A raw UD QP on the client's device that sends MADs to QP 1. */
struct raw_gsi {
	struct rt_dev d;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_ah *ah;
	struct rt_buf buf;
};

static void
raw_gsi_open(struct raw_gsi *r)
{
	struct ibv_qp_init_attr qa = { 0 };
	struct ibv_qp_attr a = { 0 };
	struct ibv_ah_attr aa;
	union ibv_gid dgid;

	rt_dev_open(&r->d, RT_DEV0);
	r->cq = ibv_create_cq(r->d.ctx, RT_CQE, NULL, NULL, 0);
	RT_CHECK(r->cq != NULL, "ibv_create_cq");
	qa.send_cq = qa.recv_cq = r->cq;
	qa.qp_type = IBV_QPT_UD;
	qa.cap.max_send_wr = 64;
	qa.cap.max_recv_wr = 1;
	qa.cap.max_send_sge = 1;
	qa.cap.max_recv_sge = 1;
	r->qp = ibv_create_qp(r->d.pd, &qa);
	RT_CHECK(r->qp != NULL, "ibv_create_qp");
	a.qp_state = IBV_QPS_INIT;
	a.port_num = RT_PORT;
	a.qkey = CM_GSI_QKEY;	/* a Q_Key with the MSB set means "the QP's" */
	RT_CHECK(ibv_modify_qp(r->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			       IBV_QP_PORT | IBV_QP_QKEY) == 0, "to INIT");
	a.qp_state = IBV_QPS_RTR;
	RT_CHECK(ibv_modify_qp(r->qp, &a, IBV_QP_STATE) == 0, "to RTR");
	a.qp_state = IBV_QPS_RTS;
	RT_CHECK(ibv_modify_qp(r->qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN) == 0,
		 "to RTS");
	memset(&dgid, 0, sizeof(dgid));
	dgid.raw[10] = dgid.raw[11] = 0xff;
	dgid.raw[12] = 192; dgid.raw[13] = 0; dgid.raw[14] = 2;
	dgid.raw[15] = 2;
	rt_ah_attr(&aa, &dgid);
	r->ah = ibv_create_ah(r->d.pd, &aa);
	RT_CHECK(r->ah != NULL, "ibv_create_ah");
	rt_buf_alloc(&r->buf, &r->d, CM_MAD_SIZE, RT_ACCESS_ALL);
}

static void
raw_gsi_send(struct raw_gsi *r, const uint8_t *mad)
{
	struct ibv_sge sg = rt_sge(&r->buf, 0, CM_MAD_SIZE);
	struct ibv_send_wr wr = { 0 }, *bad;

	memcpy(r->buf.p, mad, CM_MAD_SIZE);
	wr.sg_list = &sg;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_SEND;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.ud.ah = r->ah;
	wr.wr.ud.remote_qpn = 1;
	wr.wr.ud.remote_qkey = CM_GSI_QKEY;
	RT_CHECK(ibv_post_send(r->qp, &wr, &bad) == 0, "post MAD");
	rt_expect_wc(r->cq, "MAD sent", 0, IBV_WC_SUCCESS, IBV_WC_SEND);
}

static void
raw_gsi_close(struct raw_gsi *r)
{
	rt_buf_free(&r->buf);
	ibv_destroy_ah(r->ah);
	ibv_destroy_qp(r->qp);
	ibv_destroy_cq(r->cq);
	rt_dev_close(&r->d);
}

/* Reject whatever CONNECT_REQUESTs the garbage produced. */
static unsigned int
drain_requests(struct cm_side *srv, int ms)
{
	struct pollfd p = { .fd = srv->ch->fd, .events = POLLIN };
	struct rdma_cm_event *ev;
	unsigned int n = 0;

	while (poll(&p, 1, ms) == 1) {
		RT_CHECK(rdma_get_cm_event(srv->ch, &ev) == 0,
			 "rdma_get_cm_event: %s", strerror(errno));
		RT_CHECK(ev->event == RDMA_CM_EVENT_CONNECT_REQUEST,
			 "garbage produced %s on the listener's channel",
			 rdma_event_str(ev->event));
		struct rdma_cm_id *child = ev->id;

		cm_ack(ev);
		RT_CHECK(rdma_reject(child, NULL, 0) == 0, "rdma_reject: %s",
			 strerror(errno));
		RT_CHECK(rdma_destroy_id(child) == 0, "rdma_destroy_id");
		n++;
	}
	return n;
}

/* The one CONNECT_REQUEST a REQ just sent must bring, rejected. */
static unsigned int
expect_one_request(struct cm_side *srv)
{
	struct pollfd p = { .fd = srv->ch->fd, .events = POLLIN };

	if (poll(&p, 1, CM_TIMEOUT_MS) != 1)
		return 0;
	return drain_requests(srv, 0);
}

static void
rt_case_garbage(void)
{
	static const unsigned int attrs[] = {
		CM_ATTR_REQ, CM_ATTR_MRA, CM_ATTR_REJ, CM_ATTR_REP,
		CM_ATTR_RTU, CM_ATTR_DREQ, CM_ATTR_DREP, CM_ATTR_SIDR_REQ,
		CM_ATTR_SIDR_REP, 0x0019, 0x0001,
	};
	const uint16_t port = PORT_BASE + 5;
	struct cm_side srv, cli;
	struct raw_gsi r;
	struct cm_cma_hdr h = { .ip_version = 4, .src_port = 4242 };
	struct rdma_cm_event *ev;
	uint8_t mad[CM_MAD_SIZE];
	unsigned int parsed = 0, reqs = 0, accepted = 0;
	const unsigned int total = 3000;

	side_init(&srv, RDMA_PS_TCP);
	listen_on(&srv, port);
	raw_gsi_open(&r);
	memcpy(&h.src[12], (const uint8_t[]){ 192, 0, 2, 1 }, 4);
	memcpy(&h.dst[12], (const uint8_t[]){ 192, 0, 2, 2 }, 4);
	rt_step("%u random and mutated MADs to QP 1 of %s", total, RT_DEV1);
	for (unsigned int i = 0; i < total; i++) {
		unsigned int kind = rt_rand32() % 4;

		rt_fill_random(mad, sizeof(mad));
		if (kind != 0) {
			/* A CM header, so the agent looks further. */
			cm_set(mad, CM_F_BASE_VERSION, 1);
			cm_set(mad, CM_F_MGMT_CLASS, CM_MGMT_CLASS);
			cm_set(mad, CM_F_CLASS_VERSION, CM_CLASS_VERSION);
			cm_set(mad, CM_F_METHOD, CM_METHOD_SEND);
			cm_set(mad, CM_F_ATTR_ID,
			       attrs[rt_rand32() % RTE_DIM_(attrs)]);
		}
		if (kind == 3) {
			/* A REQ for the listener: random path, QPN, PSN,
			 * MTU, depths; RC or UC (RD and XRC are rejected);
			 * a valid RDMA CM header. */
			uint8_t *priv = mad + cm_fields[CM_F_REQ_PRIVATE_DATA].off;

			cm_set(mad, CM_F_ATTR_ID, CM_ATTR_REQ);
			cm_set(mad, CM_F_REQ_TRANSPORT, rt_rand32() % 2);
			cm_set(mad, CM_F_REQ_SERVICE_ID,
			       CM_SERVICE_ID_TCP | port);
			cm_cma_hdr_put(priv, &h);
			/* The sender's own GID, or the REQ is dropped. */
			cm_set_bytes(mad, CM_F_REQ_PRIMARY_LOCAL_GID,
				     (const uint8_t[]){ [10] = 0xff,
							[11] = 0xff, 192, 0,
							2, 1 }, 16);
			reqs++;
		}
		if (cm_mad_check(mad, sizeof(mad)) >= 0)
			parsed++;
		raw_gsi_send(&r, mad);
		/*
		 * Each REQ for the listener must come out as one
		 * CONNECT_REQUEST; waiting for it also paces the sender
		 * under the GSI's 64 receive buffers (a UD QP drops what
		 * finds none).
		 */
		if (kind == 3) {
			unsigned int got = expect_one_request(&srv);

			RT_CHECK(got == 1, "MAD %u, a REQ for the listener: %u CONNECT_REQUESTs",
				 i, got);
			accepted += got;
		}
	}
	rt_sleep_ms(300);
	RT_CHECK(drain_requests(&srv, 300) == 0,
		 "CONNECT_REQUESTs from MADs that were no REQ for the listener");
	rt_step("%u of them well-formed CM MADs, %u REQs for the listener, %u CONNECT_REQUESTs (rejected)",
		parsed, reqs, accepted);
	RT_CHECK(accepted == reqs && reqs > 0, "%u CONNECT_REQUESTs from %u REQs",
		 accepted, reqs);
	raw_gsi_close(&r);

	rt_step("a real connection on the same listener");
	side_init(&cli, RDMA_PS_TCP);
	resolve(&cli, port);
	side_qp(&cli, cli.id, IBV_QPT_RC);
	cli.conn = cli.id;
	RT_CHECK(rdma_connect(cli.id, NULL) == 0, "rdma_connect: %s",
		 strerror(errno));
	ev = cm_expect(srv.ch, RDMA_CM_EVENT_CONNECT_REQUEST, CM_TIMEOUT_MS,
		       "server");
	RT_CHECK(ev->param.conn.qp_num == cli.id->qp->qp_num,
		 "the CONNECT_REQUEST after the garbage is not the client's");
	srv.conn = ev->id;
	cm_ack(ev);
	side_qp(&srv, srv.conn, IBV_QPT_RC);
	RT_CHECK(rdma_accept(srv.conn, NULL) == 0, "rdma_accept: %s",
		 strerror(errno));
	cm_ack(cm_expect(cli.ch, RDMA_CM_EVENT_ESTABLISHED, CM_TIMEOUT_MS,
			 "client"));
	cm_ack(cm_expect(srv.ch, RDMA_CM_EVENT_ESTABLISHED, CM_TIMEOUT_MS,
			 "server"));
	RT_CHECK(rdma_disconnect(cli.id) == 0, "rdma_disconnect");
	cm_ack(cm_expect(cli.ch, RDMA_CM_EVENT_DISCONNECTED, CM_TIMEOUT_MS,
			 "client"));
	cm_ack(cm_expect(srv.ch, RDMA_CM_EVENT_DISCONNECTED, CM_TIMEOUT_MS,
			 "server"));
	side_fini(&cli);
	side_fini(&srv);
}

/* -------------------------------------------------------------- lossy */

/* A SEND (wr_id 5) and a receive (wr_id 1), in either order. */
static void
expect_send_and_recv(struct ibv_cq *cq, const char *who)
{
	bool send = false, recv = false;
	struct ibv_wc wc;

	for (int k = 0; k < 2; k++) {
		rt_wait_wc(cq, &wc, who);
		RT_CHECK(wc.status == IBV_WC_SUCCESS, "%s: completion status %s",
			 who, ibv_wc_status_str(wc.status));
		if (wc.opcode == IBV_WC_SEND && wc.wr_id == 5 && !send)
			send = true;
		else if (wc.opcode == IBV_WC_RECV && wc.wr_id == 1 && !recv)
			recv = true;
		else
			RT_FAIL("%s: unexpected completion opcode %d wr_id %llu",
				who, wc.opcode, (unsigned long long)wc.wr_id);
	}
}

/*
 * On ports that drop 5%, duplicate 2%, reorder 2% and corrupt 1% of the
 * frames (two-ports-lossy.ini): every cycle of connect, accept, a SEND
 * each way and disconnect completes, through retransmitted and duplicate
 * REQ, REP, RTU, DREQ and DREP.
 */
static void
rt_case_lossy(void)
{
	const uint16_t port = PORT_BASE + 6;
	const unsigned int cycles = 30;
	struct cm_side srv, cli;
	struct rdma_cm_event *ev;
	struct ibv_send_wr wr = { 0 }, *bad;
	struct ibv_sge sg;
	double t0 = rt_now();

	side_init(&srv, RDMA_PS_TCP);
	listen_on(&srv, port);
	for (unsigned int i = 0; i < cycles; i++) {
		rt_step("cycle %u of %u: connect", i + 1, cycles);
		side_init(&cli, RDMA_PS_TCP);
		resolve(&cli, port);
		side_qp(&cli, cli.id, IBV_QPT_RC);
		cli.conn = cli.id;
		post_recv(&cli, cli.id);
		RT_CHECK(rdma_connect(cli.id, NULL) == 0, "rdma_connect: %s",
			 strerror(errno));
		ev = cm_expect(srv.ch, RDMA_CM_EVENT_CONNECT_REQUEST,
			       CM_TIMEOUT_MS, "server");
		RT_CHECK(ev->param.conn.qp_num == cli.id->qp->qp_num,
			 "cycle %u: CONNECT_REQUEST for QP 0x%x, the client's is 0x%x (a stale REQ?)",
			 i + 1, ev->param.conn.qp_num, cli.id->qp->qp_num);
		srv.conn = ev->id;
		cm_ack(ev);
		side_qp(&srv, srv.conn, IBV_QPT_RC);
		post_recv(&srv, srv.conn);
		RT_CHECK(rdma_accept(srv.conn, NULL) == 0, "rdma_accept: %s",
			 strerror(errno));
		cm_ack(cm_expect(cli.ch, RDMA_CM_EVENT_ESTABLISHED,
				 CM_TIMEOUT_MS, "client"));
		cm_ack(cm_expect(srv.ch, RDMA_CM_EVENT_ESTABLISHED,
				 CM_TIMEOUT_MS, "server"));

		rt_step("cycle %u of %u: a SEND each way", i + 1, cycles);
		rt_fill_random(cli.buf.p, 256);
		rt_fill_random(srv.buf.p, 256);
		wr.sg_list = &sg;
		wr.num_sge = 1;
		wr.opcode = IBV_WR_SEND;
		wr.send_flags = IBV_SEND_SIGNALED;
		wr.wr_id = 5;
		sg = rt_sge(&cli.buf, 0, 256);
		RT_CHECK(ibv_post_send(cli.id->qp, &wr, &bad) == 0, "post");
		sg = rt_sge(&srv.buf, 0, 256);
		RT_CHECK(ibv_post_send(srv.conn->qp, &wr, &bad) == 0, "post");
		expect_send_and_recv(cli.cq, "client");
		expect_send_and_recv(srv.cq, "server");

		rt_step("cycle %u of %u: disconnect", i + 1, cycles);
		RT_CHECK(rdma_disconnect(i % 2 ? cli.id : srv.conn) == 0,
			 "rdma_disconnect: %s", strerror(errno));
		cm_ack(cm_expect(cli.ch, RDMA_CM_EVENT_DISCONNECTED,
				 CM_TIMEOUT_MS, "client"));
		cm_ack(cm_expect(srv.ch, RDMA_CM_EVENT_DISCONNECTED,
				 CM_TIMEOUT_MS, "server"));
		side_fini(&cli);
		rdma_destroy_qp(srv.conn);
		RT_CHECK(rdma_destroy_id(srv.conn) == 0, "rdma_destroy_id");
		srv.conn = NULL;
		rt_buf_free(&srv.buf);
		memset(&srv.buf, 0, sizeof(srv.buf));
		ibv_destroy_cq(srv.cq);
		srv.cq = NULL;
		RT_CHECK(ibv_dealloc_pd(srv.pd) == 0, "ibv_dealloc_pd");
		srv.pd = NULL;
	}
	rt_step("%u cycles in %.1f s", cycles, rt_now() - t0);
	/* Late duplicates of finished connections make no new ones. */
	RT_CHECK(drain_requests(&srv, 1000) == 0,
		 "a CONNECT_REQUEST after the last cycle");
	side_fini(&srv);
}

/* ----------------------------------------------------------------- psn */

/*
 * The REQ of the kernel's rdma_cm in test/data/rxe/rdmacm-rping-s64.pcap
 * (frame 1, from 192.0.2.1 to 192.0.2.2, the addresses of this suite's
 * two devices), byte for byte: service ID port 7174, local QPN 0x11,
 * Starting PSN 0x1860a8, responder resources and initiator depth 1,
 * retry and RNR retry 7, path MTU 1024, local ACK timeout 19.
 */
static const uint8_t kernel_req[CM_MAD_SIZE] = {
	0x01, 0x07, 0x02, 0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02,
	0x9a, 0x2f, 0x68, 0x51, 0x00, 0x10, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x51, 0x68, 0x2f, 0x9a, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x01, 0x06, 0x1c, 0x06, 0x50, 0x54, 0x00, 0xff, 0xfe, 0xc0, 0x02, 0x01,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x11, 0x01,
	0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0xa0, 0x18, 0x60, 0xa8, 0xa7,
	0xff, 0xff, 0x37, 0xf0, 0xff, 0xff, 0xff, 0xff, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xff, 0xff, 0xc0, 0x00, 0x02, 0x01,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xff, 0xff,
	0xc0, 0x00, 0x02, 0x02, 0x68, 0xec, 0x50, 0x00, 0x00, 0x40, 0x00, 0x98,
	/* private data: RDMA CM's IP header, port 0xb961, the addresses */
	[164] = 0x00, 0x40, 0xb9, 0x61,
	[180] = 0xc0, 0x00, 0x02, 0x01,
	[196] = 0xc0, 0x00, 0x02, 0x02,
};
#define KERNEL_REQ_PORT	7174
#define KERNEL_REQ_PSN	0x1860a8u

static struct ibv_qp_attr
qp_query(struct ibv_qp *qp, const char *who)
{
	struct ibv_qp_init_attr ia;
	struct ibv_qp_attr a;

	RT_CHECK(ibv_query_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN |
			      IBV_QP_RQ_PSN | IBV_QP_TIMEOUT |
			      IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			      IBV_QP_MAX_QP_RD_ATOMIC |
			      IBV_QP_MAX_DEST_RD_ATOMIC, &ia) == 0,
		 "%s: ibv_query_qp: %s", who, strerror(errno));
	return a;
}

static struct ibv_qp_attr
init_attr(struct rdma_cm_id *id, enum ibv_qp_state st, int *mask,
	  const char *who)
{
	struct ibv_qp_attr a;

	memset(&a, 0, sizeof(a));
	a.qp_state = st;
	RT_CHECK(rdma_init_qp_attr(id, &a, mask) == 0,
		 "%s: rdma_init_qp_attr(%d): %s", who, st, strerror(errno));
	RT_CHECK(a.qp_state == st, "%s: rdma_init_qp_attr(%d) gave state %d",
		 who, st, a.qp_state);
	return a;
}

/* One SEND of @len bytes from @s's QP, received whole by @r's. */
static void
send_one(struct ibv_qp *sqp, struct rt_buf *sbuf, struct ibv_cq *scq,
	 struct ibv_qp *rqp, struct rt_buf *rbuf, struct ibv_cq *rcq,
	 size_t len, const char *what)
{
	struct ibv_sge ssg = rt_sge(sbuf, 0, len), rsg = rt_sge(rbuf, 0, len);
	struct ibv_recv_wr rwr = { .wr_id = 1, .sg_list = &rsg, .num_sge = 1 };
	struct ibv_send_wr wr = { 0 }, *bad;
	struct ibv_recv_wr *rbad;
	struct ibv_wc wc;

	rt_step("%s: SEND %zu B", what, len);
	rt_fill_random(sbuf->p, len);
	memset(rbuf->p, 0, len);
	RT_CHECK(ibv_post_recv(rqp, &rwr, &rbad) == 0, "%s: post recv", what);
	wr.wr_id = 5;
	wr.sg_list = &ssg;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_SEND;
	wr.send_flags = IBV_SEND_SIGNALED;
	RT_CHECK(ibv_post_send(sqp, &wr, &bad) == 0, "%s: post send", what);
	rt_expect_wc(scq, what, 5, IBV_WC_SUCCESS, IBV_WC_SEND);
	wc = rt_expect_wc(rcq, what, 1, IBV_WC_SUCCESS, IBV_WC_RECV);
	RT_CHECK(wc.byte_len == len, "%s: %u B received", what, wc.byte_len);
	rt_check_data(rbuf->p, sbuf->p, len, what);
}

/*
 * The kernel's REQ, replayed from a raw UD QP on the client's device with
 * only its local QPN changed (to a raw RC QP there): the listener's QP
 * must send from the REQ's Starting PSN, as the kernel's passive side
 * does, and the raw QP, set up as the kernel's active side (rq_psn = its
 * REQ's Starting PSN), must receive what the server sends.  The REP goes
 * to the client device's CM agent, which knows no such connection: the
 * raw QP takes its sq_psn from the server QP's rq_psn instead.
 */
static void
psn_kernel_req(void)
{
	struct cm_side srv;
	struct raw_gsi r;
	struct ibv_qp_init_attr qa = { 0 };
	struct ibv_qp_attr a, q;
	struct ibv_cq *rcq;
	struct ibv_qp *rqp;
	struct rt_buf rbuf;
	struct rdma_cm_event *ev;
	struct rdma_conn_param cp = { 0 };
	uint8_t mad[CM_MAD_SIZE];
	union ibv_gid dgid;
	int mask;

	side_init(&srv, RDMA_PS_TCP);
	listen_on(&srv, KERNEL_REQ_PORT);
	raw_gsi_open(&r);
	rcq = ibv_create_cq(r.d.ctx, RT_CQE, NULL, NULL, 0);
	RT_CHECK(rcq != NULL, "ibv_create_cq");
	qa.send_cq = qa.recv_cq = rcq;
	qa.qp_type = IBV_QPT_RC;
	qa.cap.max_send_wr = qa.cap.max_recv_wr = 4;
	qa.cap.max_send_sge = qa.cap.max_recv_sge = 1;
	rqp = ibv_create_qp(r.d.pd, &qa);
	RT_CHECK(rqp != NULL, "ibv_create_qp (raw RC)");
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = RT_PORT;
	a.qp_access_flags = RT_ACCESS_ALL;
	RT_CHECK(ibv_modify_qp(rqp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			       IBV_QP_PORT | IBV_QP_ACCESS_FLAGS) == 0,
		 "raw RC QP to INIT");
	rt_buf_alloc(&rbuf, &r.d, 4096, RT_ACCESS_ALL);

	rt_step("the kernel's REQ (Starting PSN 0x%x) from raw QP 0x%x",
		KERNEL_REQ_PSN, rqp->qp_num);
	memcpy(mad, kernel_req, sizeof(mad));
	RT_CHECK(cm_mad_check(mad, sizeof(mad)) == CM_ATTR_REQ &&
		 cm_get(mad, CM_F_REQ_STARTING_PSN) == KERNEL_REQ_PSN,
		 "the embedded kernel REQ does not decode");
	cm_set(mad, CM_F_REQ_LOCAL_QPN, rqp->qp_num);
	raw_gsi_send(&r, mad);
	ev = cm_expect(srv.ch, RDMA_CM_EVENT_CONNECT_REQUEST, CM_TIMEOUT_MS,
		       "server");
	RT_CHECK(ev->param.conn.qp_num == rqp->qp_num &&
		 ev->param.conn.responder_resources == 1 &&
		 ev->param.conn.initiator_depth == 1 &&
		 ev->param.conn.retry_count == 7 &&
		 ev->param.conn.rnr_retry_count == 7,
		 "CONNECT_REQUEST: qp_num 0x%x resources %u depth %u retry %u rnr %u",
		 ev->param.conn.qp_num, ev->param.conn.responder_resources,
		 ev->param.conn.initiator_depth, ev->param.conn.retry_count,
		 ev->param.conn.rnr_retry_count);
	srv.conn = ev->id;
	cm_ack(ev);
	side_qp(&srv, srv.conn, IBV_QPT_RC);
	a = init_attr(srv.conn, IBV_QPS_RTS, &mask, "server");
	RT_CHECK((mask & IBV_QP_SQ_PSN) && a.sq_psn == KERNEL_REQ_PSN,
		 "server: rdma_init_qp_attr(RTS) sq_psn 0x%x, the REQ's Starting PSN is 0x%x",
		 a.sq_psn, KERNEL_REQ_PSN);
	cp.responder_resources = 1;
	cp.initiator_depth = 1;
	cp.rnr_retry_count = 7;
	RT_CHECK(rdma_accept(srv.conn, &cp) == 0, "rdma_accept: %s",
		 strerror(errno));
	q = qp_query(srv.conn->qp, "server");
	rt_step("server QP: sq_psn 0x%x rq_psn 0x%x timeout %u retry %u rnr %u rd_atomic %u/%u",
		q.sq_psn, q.rq_psn, q.timeout, q.retry_cnt, q.rnr_retry,
		q.max_rd_atomic, q.max_dest_rd_atomic);
	RT_CHECK(q.qp_state == IBV_QPS_RTS, "server QP in state %d", q.qp_state);
	RT_CHECK(q.sq_psn == KERNEL_REQ_PSN,
		 "server QP sends from 0x%x, not from the REQ's Starting PSN 0x%x",
		 q.sq_psn, KERNEL_REQ_PSN);
	/* The kernel's passive side: its ACK timeout is the REQ's. */
	RT_CHECK(q.timeout == 19 && q.retry_cnt == 7 && q.rnr_retry == 7 &&
		 q.max_rd_atomic == 1 && q.max_dest_rd_atomic == 1,
		 "server QP: timeout %u retry %u rnr %u rd_atomic %u/%u, expected 19 7 7 1/1",
		 q.timeout, q.retry_cnt, q.rnr_retry, q.max_rd_atomic,
		 q.max_dest_rd_atomic);

	rt_step("raw RC QP as the kernel's active side: rq_psn 0x%x, sq_psn 0x%x",
		KERNEL_REQ_PSN, q.rq_psn);
	memset(&dgid, 0, sizeof(dgid));
	dgid.raw[10] = dgid.raw[11] = 0xff;
	dgid.raw[12] = 192; dgid.raw[13] = 0; dgid.raw[14] = 2;
	dgid.raw[15] = 2;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = srv.conn->qp->qp_num;
	a.rq_psn = KERNEL_REQ_PSN;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 12;
	rt_ah_attr(&a.ah_attr, &dgid);
	RT_CHECK(ibv_modify_qp(rqp, &a, IBV_QP_STATE | IBV_QP_AV |
			       IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			       IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
			       IBV_QP_MIN_RNR_TIMER) == 0, "raw RC QP to RTR");
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = q.rq_psn;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 1;
	RT_CHECK(ibv_modify_qp(rqp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN |
			       IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			       IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC) == 0,
		 "raw RC QP to RTS");
	send_one(srv.conn->qp, &srv.buf, srv.cq, rqp, &rbuf, rcq, 64,
		 "server -> raw (kernel-style) QP");
	send_one(rqp, &rbuf, rcq, srv.conn->qp, &srv.buf, srv.cq, 64,
		 "raw (kernel-style) QP -> server");

	/* No RTU will come: the REP went to an agent that dropped it. */
	rdma_destroy_qp(srv.conn);
	RT_CHECK(rdma_destroy_id(srv.conn) == 0, "rdma_destroy_id");
	srv.conn = NULL;
	rt_buf_free(&rbuf);
	RT_CHECK(ibv_destroy_qp(rqp) == 0, "ibv_destroy_qp (raw RC)");
	RT_CHECK(ibv_destroy_cq(rcq) == 0, "ibv_destroy_cq");
	raw_gsi_close(&r);
	side_fini(&srv);
}

/*
 * A rocepmd connection of type @qpt: before the REP, the passive side
 * already knows both of its PSNs (rdma_init_qp_attr: RTS sq_psn is the
 * REQ's Starting PSN, RTR rq_psn its own) and the active side neither;
 * once connected, each QP (ibv_query_qp) sends from where the other
 * receives, and a SEND goes through each way.
 */
static void
psn_connection(enum ibv_qp_type qpt, uint16_t port)
{
	const char *t = qpt == IBV_QPT_RC ? "RC" : "UC";
	const int rc_only = IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER |
		IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
		IBV_QP_MAX_QP_RD_ATOMIC;
	struct cm_side srv, cli;
	struct rdma_cm_event *ev;
	struct rdma_conn_param cp = { 0 };
	struct ibv_qp_attr a, c, s;
	uint32_t srv_sq, srv_rq;
	int mask, rtr_mask, rts_mask;

	rt_step("%s connection", t);
	side_init(&srv, RDMA_PS_TCP);
	side_init(&cli, RDMA_PS_TCP);
	listen_on(&srv, port);
	resolve(&cli, port);
	side_qp(&cli, cli.id, qpt);
	cli.conn = cli.id;
	cp.responder_resources = qpt == IBV_QPT_RC ? 4 : 0;
	cp.initiator_depth = qpt == IBV_QPT_RC ? 2 : 0;
	cp.retry_count = 6;
	cp.rnr_retry_count = 5;
	RT_CHECK(rdma_connect(cli.id, &cp) == 0, "rdma_connect: %s",
		 strerror(errno));
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	RT_CHECK(rdma_init_qp_attr(cli.id, &a, &mask) == -1 && errno == EINVAL,
		 "client: rdma_init_qp_attr(RTR) before the REP did not fail with EINVAL");

	ev = cm_expect(srv.ch, RDMA_CM_EVENT_CONNECT_REQUEST, CM_TIMEOUT_MS,
		       "server");
	srv.conn = ev->id;
	RT_CHECK(srv.conn->qp_type == qpt,
		 "server id of QP type %d, the REQ was for %s",
		 srv.conn->qp_type, t);
	cm_ack(ev);
	side_qp(&srv, srv.conn, qpt);
	srv_sq = init_attr(srv.conn, IBV_QPS_RTS, &rts_mask, "server").sq_psn;
	srv_rq = init_attr(srv.conn, IBV_QPS_RTR, &rtr_mask, "server").rq_psn;
	RT_CHECK((rtr_mask & IBV_QP_RQ_PSN) && (rts_mask & IBV_QP_SQ_PSN),
		 "server: rdma_init_qp_attr masks 0x%x/0x%x without the PSNs",
		 rtr_mask, rts_mask);
	RT_CHECK(qpt == IBV_QPT_RC ? ((rtr_mask | rts_mask) & rc_only) == rc_only :
		 ((rtr_mask | rts_mask) & rc_only) == 0,
		 "server: %s QP given masks 0x%x/0x%x", t, rtr_mask, rts_mask);
	memset(&cp, 0, sizeof(cp));
	cp.responder_resources = qpt == IBV_QPT_RC ? 2 : 0;
	cp.initiator_depth = qpt == IBV_QPT_RC ? 3 : 0;
	cp.rnr_retry_count = 3;
	RT_CHECK(rdma_accept(srv.conn, &cp) == 0, "rdma_accept: %s",
		 strerror(errno));
	cm_ack(cm_expect(cli.ch, RDMA_CM_EVENT_ESTABLISHED, CM_TIMEOUT_MS,
			 "client"));
	cm_ack(cm_expect(srv.ch, RDMA_CM_EVENT_ESTABLISHED, CM_TIMEOUT_MS,
			 "server"));

	c = qp_query(cli.id->qp, "client");
	s = qp_query(srv.conn->qp, "server");
	rt_step("%s: client sq 0x%x rq 0x%x, server sq 0x%x rq 0x%x", t,
		c.sq_psn, c.rq_psn, s.sq_psn, s.rq_psn);
	RT_CHECK(s.sq_psn == srv_sq && s.rq_psn == srv_rq,
		 "server QP sq 0x%x rq 0x%x, rdma_init_qp_attr said 0x%x 0x%x",
		 s.sq_psn, s.rq_psn, srv_sq, srv_rq);
	RT_CHECK(c.sq_psn == s.rq_psn && c.rq_psn == s.sq_psn,
		 "client sq 0x%x rq 0x%x against server sq 0x%x rq 0x%x",
		 c.sq_psn, c.rq_psn, s.sq_psn, s.rq_psn);
	a = init_attr(cli.id, IBV_QPS_RTS, &mask, "client");
	RT_CHECK(a.sq_psn == c.sq_psn,
		 "client: rdma_init_qp_attr(RTS) sq_psn 0x%x, QP 0x%x",
		 a.sq_psn, c.sq_psn);
	a = init_attr(cli.id, IBV_QPS_RTR, &mask, "client");
	RT_CHECK(a.rq_psn == c.rq_psn && a.dest_qp_num == srv.conn->qp->qp_num,
		 "client: rdma_init_qp_attr(RTR) rq_psn 0x%x dest 0x%x",
		 a.rq_psn, a.dest_qp_num);
	if (qpt == IBV_QPT_RC) {
		/* Each side's RNR retry count is the one the other sent. */
		RT_CHECK(c.retry_cnt == 6 && s.retry_cnt == 6 &&
			 c.rnr_retry == 3 && s.rnr_retry == 5,
			 "retry %u/%u (want 6/6), RNR retry %u/%u (want 3/5)",
			 c.retry_cnt, s.retry_cnt, c.rnr_retry, s.rnr_retry);
		/* Client asked 4 resources, depth 2; server granted 2, 3. */
		RT_CHECK(c.max_rd_atomic == 2 && c.max_dest_rd_atomic == 3 &&
			 s.max_rd_atomic == 3 && s.max_dest_rd_atomic == 2,
			 "rd_atomic client %u/%u (want 2/3), server %u/%u (want 3/2)",
			 c.max_rd_atomic, c.max_dest_rd_atomic,
			 s.max_rd_atomic, s.max_dest_rd_atomic);
	}
	send_one(cli.id->qp, &cli.buf, cli.cq, srv.conn->qp, &srv.buf,
		 srv.cq, MSG_LEN, "client -> server");
	send_one(srv.conn->qp, &srv.buf, srv.cq, cli.id->qp, &cli.buf,
		 cli.cq, MSG_LEN, "server -> client");

	RT_CHECK(rdma_disconnect(cli.id) == 0, "rdma_disconnect");
	cm_ack(cm_expect(srv.ch, RDMA_CM_EVENT_DISCONNECTED, CM_TIMEOUT_MS,
			 "server"));
	cm_ack(cm_expect(cli.ch, RDMA_CM_EVENT_DISCONNECTED, CM_TIMEOUT_MS,
			 "client"));
	side_fini(&cli);
	side_fini(&srv);
}

static void
rt_case_psn(void)
{
	psn_kernel_req();
	psn_connection(IBV_QPT_RC, PORT_BASE + 7);
	psn_connection(IBV_QPT_UC, PORT_BASE + 8);
}

static void
rt_case_rc6(void)
{
	cm_family = AF_INET6;
	rt_case_rc();
}

static void
rt_case_ud6(void)
{
	cm_family = AF_INET6;
	rt_case_ud();
}

/*
 * A listener of one family on a port, a request of the other family to
 * it: as the kernel's rdma_cm (cma_match_private_data), the listener does
 * not take it, nobody answers, and the request ends UNREACHABLE after its
 * retries.
 */
static void
family_once(int listen_family, int req_family, uint16_t port)
{
	struct cm_side srv, cli;
	struct rdma_cm_event *ev;

	side_init(&srv, RDMA_PS_TCP);
	side_init(&cli, RDMA_PS_TCP);
	cm_family = listen_family;
	listen_on(&srv, port);
	cm_family = req_family;
	resolve(&cli, port);
	side_qp(&cli, cli.id, IBV_QPT_RC);
	RT_CHECK(rdma_connect(cli.id, NULL) == 0, "rdma_connect: %s",
		 strerror(errno));
	ev = cm_expect(cli.ch, RDMA_CM_EVENT_UNREACHABLE, 20000, "client");
	RT_CHECK(ev->status == -ETIMEDOUT, "UNREACHABLE status %d",
		 ev->status);
	cm_ack(ev);
	side_fini(&cli);
	side_fini(&srv);
}

static void
rt_case_family(void)
{
	rt_step("IPv4 listener, IPv6 request: not taken");
	family_once(AF_INET, AF_INET6, PORT_BASE + 20);
	rt_step("IPv6 listener, IPv4 request: not taken");
	family_once(AF_INET6, AF_INET, PORT_BASE + 21);
}

/* --------------------------------------------------------------- mcast */

/* The group of the family under test: 239.1.2.3 or ff0e::db8:1. */
static struct sockaddr *
mc_group(struct sockaddr_storage *ss, union ibv_gid *mgid)
{
	memset(ss, 0, sizeof(*ss));
	memset(mgid, 0, sizeof(*mgid));
	if (cm_family == AF_INET6) {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;

		s6->sin6_family = AF_INET6;
		inet_pton(AF_INET6, "ff0e::db8:1", &s6->sin6_addr);
		memcpy(mgid->raw, &s6->sin6_addr, 16);
	} else {
		sin_set((struct sockaddr_in *)ss, 0xef010203, 0);
		mgid->raw[10] = mgid->raw[11] = 0xff;	/* ::ffff:239.1.2.3 */
		memcpy(&mgid->raw[12], &((struct sockaddr_in *)ss)->sin_addr, 4);
	}
	return (struct sockaddr *)ss;
}

/* A join's event and what it says about the group. */
static struct ibv_ah *
mc_joined(struct cm_side *s, const union ibv_gid *mgid, void *context,
	  const char *who)
{
	struct rdma_cm_event *ev;
	struct ibv_ah *ah;

	ev = cm_expect(s->ch, RDMA_CM_EVENT_MULTICAST_JOIN, CM_TIMEOUT_MS, who);
	RT_CHECK(ev->id == s->id && ev->status == 0 &&
		 ev->param.ud.private_data == context,
		 "%s: MULTICAST_JOIN: id, status %d or context wrong", who,
		 ev->status);
	RT_CHECK(ev->param.ud.qp_num == 0xffffff &&
		 ev->param.ud.qkey == RDMA_UDP_QKEY,
		 "%s: MULTICAST_JOIN: qp_num 0x%x qkey 0x%x", who,
		 ev->param.ud.qp_num, ev->param.ud.qkey);
	RT_CHECK(ev->param.ud.ah_attr.is_global &&
		 ev->param.ud.ah_attr.dlid == 0 &&
		 memcmp(ev->param.ud.ah_attr.grh.dgid.raw, mgid->raw, 16) == 0 &&
		 ev->param.ud.ah_attr.grh.sgid_index ==
		 (cm_family == AF_INET6 ? 2 : 0) &&
		 ev->param.ud.ah_attr.grh.hop_limit != 0,
		 "%s: MULTICAST_JOIN: the address is not the group's from our GID",
		 who);
	ah = ibv_create_ah(s->pd, &ev->param.ud.ah_attr);
	RT_CHECK(ah != NULL, "%s: ibv_create_ah from the event: %s", who,
		 strerror(errno));
	cm_ack(ev);
	return ah;
}

static void
mc_send(struct cm_side *s, struct ibv_ah *ah, uint64_t wr_id)
{
	struct ibv_sge sg = rt_sge(&s->buf, 0, 256);
	struct ibv_send_wr wr = { 0 }, *bad;

	wr.wr_id = wr_id;
	wr.sg_list = &sg;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_SEND;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.ud.ah = ah;
	wr.wr.ud.remote_qpn = 0xffffff;
	wr.wr.ud.remote_qkey = RDMA_UDP_QKEY;
	RT_CHECK(ibv_post_send(s->id->qp, &wr, &bad) == 0, "post UD SEND");
	rt_expect_wc(s->cq, "UD SEND to the group", wr_id, IBV_WC_SUCCESS,
		     IBV_WC_SEND);
}

static void
mc_expect_none(struct cm_side *s, const char *what)
{
	struct ibv_wc wc;

	RT_CHECK(!rt_poll_wc(s->cq, &wc, 0.3), "%s: received a datagram",
		 what);
}

static void
rt_case_mcast(void)
{
	struct cm_side rcv, snd, tcp, late, any, *peer;
	struct rdma_cm_join_mc_attr_ex ax = { 0 };
	struct sockaddr_storage grp_ss, a;
	struct sockaddr *grp;
	union ibv_gid mgid;
	struct ibv_ah *ah, *rah, *aah;
	struct ibv_wc wc;
	bool on1;

	grp = mc_group(&grp_ss, &mgid);
	side_init(&rcv, RDMA_PS_UDP);
	side_init(&snd, RDMA_PS_UDP);

	rt_step("bad joins and leaves");
	RT_CHECK(rdma_join_multicast(rcv.id, grp, NULL) == -1 &&
		 errno == EINVAL, "join on an unbound id: %s, expected EINVAL",
		 strerror(errno));
	RT_CHECK(rdma_bind_addr(rcv.id, dev_addr(&a, 1, 0)) == 0,
		 "rdma_bind_addr: %s", strerror(errno));
	RT_CHECK(rdma_bind_addr(snd.id, dev_addr(&a, 0, 0)) == 0,
		 "rdma_bind_addr: %s", strerror(errno));
	side_qp(&rcv, rcv.id, IBV_QPT_UD);
	side_qp(&snd, snd.id, IBV_QPT_UD);
	RT_CHECK(rdma_leave_multicast(rcv.id, grp) == -1 &&
		 errno == EADDRNOTAVAIL,
		 "leave of a group not joined: %s, expected EADDRNOTAVAIL",
		 strerror(errno));
	RT_CHECK(rdma_join_multicast(rcv.id, dev_addr(&a, 0, 0), NULL) == -1 &&
		 errno == EINVAL, "join of a unicast address: %s, expected EINVAL",
		 strerror(errno));
	ax.comp_mask = RDMA_CM_JOIN_MC_ATTR_ADDRESS;
	ax.addr = grp;
	RT_CHECK(rdma_join_multicast_ex(rcv.id, &ax, NULL) == -1 &&
		 errno == EINVAL, "join_ex without join flags: %s, expected EINVAL",
		 strerror(errno));
	ax.comp_mask = RDMA_CM_JOIN_MC_ATTR_RESERVED;
	RT_CHECK(rdma_join_multicast_ex(rcv.id, &ax, NULL) == -1 &&
		 errno == EOPNOTSUPP,
		 "join_ex with a reserved comp_mask bit: %s, expected EOPNOTSUPP",
		 strerror(errno));
	ax.comp_mask = RDMA_CM_JOIN_MC_ATTR_ADDRESS |
		RDMA_CM_JOIN_MC_ATTR_JOIN_FLAGS;
	ax.join_flags = RDMA_MC_JOIN_FLAG_RESERVED;
	RT_CHECK(rdma_join_multicast_ex(rcv.id, &ax, NULL) == -1 &&
		 errno == EINVAL, "join_ex with reserved flags: %s, expected EINVAL",
		 strerror(errno));
	side_init(&tcp, RDMA_PS_TCP);
	RT_CHECK(rdma_bind_addr(tcp.id, dev_addr(&a, 1, 0)) == 0,
		 "rdma_bind_addr: %s", strerror(errno));
	RT_CHECK(rdma_join_multicast(tcp.id, grp, NULL) == -1 &&
		 errno == EINVAL, "join on an RC id: %s, expected EINVAL",
		 strerror(errno));
	side_fini(&tcp);

	rt_step("receiver joins twice, sender send-only");
	RT_CHECK(rdma_join_multicast(rcv.id, grp, &rcv) == 0,
		 "rdma_join_multicast: %s", strerror(errno));
	rah = mc_joined(&rcv, &mgid, &rcv, "receiver");
	RT_CHECK(rdma_join_multicast(rcv.id, grp, &snd) == 0,
		 "second rdma_join_multicast: %s", strerror(errno));
	ibv_destroy_ah(mc_joined(&rcv, &mgid, &snd, "receiver, again"));
	ax.join_flags = RDMA_MC_JOIN_FLAG_SENDONLY_FULLMEMBER;
	RT_CHECK(rdma_join_multicast_ex(snd.id, &ax, NULL) == 0,
		 "rdma_join_multicast_ex send-only: %s", strerror(errno));
	ah = mc_joined(&snd, &mgid, NULL, "sender");

	rt_step("a datagram to the group reaches the receiver's QP");
	post_recv(&rcv, rcv.id);
	post_recv(&snd, snd.id);
	mc_send(&snd, ah, 1);
	wc = rt_expect_wc(rcv.cq, "receiver", 1, IBV_WC_SUCCESS, IBV_WC_RECV);
	RT_CHECK(wc.src_qp == snd.id->qp->qp_num && wc.byte_len == 256 + RT_GRH_LEN,
		 "group datagram: %u B from QP 0x%x", wc.byte_len, wc.src_qp);
	rt_step("a send-only member's QP is not in the group");
	mc_send(&rcv, rah, 2);
	mc_expect_none(&snd, "send-only member");

	/* mckey without -b: the route to the group gives the source. */
	rt_step("rdma_resolve_addr of the group without a source address");
	side_init(&any, RDMA_PS_UDP);
	RT_CHECK(rdma_resolve_addr(any.id, NULL, grp, 2000) == 0,
		 "rdma_resolve_addr of the group: %s", strerror(errno));
	cm_ack(cm_expect(any.ch, RDMA_CM_EVENT_ADDR_RESOLVED, CM_TIMEOUT_MS,
			 "group, no source"));
	/*
	 * Device 0's, or 1's if the host's kernel holds that address and
	 * routes the group there: then the receiver is device 0's QP (the
	 * engine does not loop a group's datagram back to its own device).
	 */
	on1 = is_dev_addr(rdma_get_local_addr(any.id), 1);
	RT_CHECK(on1 || is_dev_addr(rdma_get_local_addr(any.id), 0),
		 "group, no source: the source is not a device's address");
	side_qp(&any, any.id, IBV_QPT_UD);
	RT_CHECK(rdma_join_multicast_ex(any.id, &ax, NULL) == 0,
		 "rdma_join_multicast_ex send-only: %s", strerror(errno));
	aah = mc_joined(&any, &mgid, NULL, "resolved without a source");
	peer = on1 ? &snd : &rcv;
	RT_CHECK(!on1 || ibv_attach_mcast(snd.id->qp, &mgid, 0) == 0,
		 "ibv_attach_mcast on device 0: %s", strerror(errno));
	post_recv(peer, peer->id);
	mc_send(&any, aah, 6);
	wc = rt_expect_wc(peer->cq, "receiver", 1, IBV_WC_SUCCESS, IBV_WC_RECV);
	RT_CHECK(wc.src_qp == any.id->qp->qp_num,
		 "group datagram from QP 0x%x, expected 0x%x", wc.src_qp,
		 any.id->qp->qp_num);
	RT_CHECK(!on1 || ibv_detach_mcast(snd.id->qp, &mgid, 0) == 0,
		 "ibv_detach_mcast on device 0: %s", strerror(errno));
	RT_CHECK(ibv_destroy_ah(aah) == 0, "ibv_destroy_ah");
	side_fini(&any);

	rt_step("leave one of two joins: still in the group");
	RT_CHECK(rdma_leave_multicast(rcv.id, grp) == 0,
		 "rdma_leave_multicast: %s", strerror(errno));
	post_recv(&rcv, rcv.id);
	mc_send(&snd, ah, 3);
	rt_expect_wc(rcv.cq, "receiver after one leave", 1, IBV_WC_SUCCESS,
		     IBV_WC_RECV);
	rt_step("leave the other: out of the group");
	RT_CHECK(rdma_leave_multicast(rcv.id, grp) == 0,
		 "second rdma_leave_multicast: %s", strerror(errno));
	RT_CHECK(rdma_leave_multicast(rcv.id, grp) == -1 &&
		 errno == EADDRNOTAVAIL,
		 "third leave: %s, expected EADDRNOTAVAIL", strerror(errno));
	post_recv(&rcv, rcv.id);
	mc_send(&snd, ah, 4);
	mc_expect_none(&rcv, "receiver after both leaves");

	rt_step("rdma_destroy_id with groups joined, events taken or not");
	side_init(&late, RDMA_PS_UDP);
	RT_CHECK(rdma_bind_addr(late.id, dev_addr(&a, 1, 0)) == 0,
		 "rdma_bind_addr: %s", strerror(errno));
	side_qp(&late, late.id, IBV_QPT_UD);
	RT_CHECK(rdma_join_multicast(late.id, grp, NULL) == 0,
		 "rdma_join_multicast: %s", strerror(errno));
	ibv_destroy_ah(mc_joined(&late, &mgid, NULL, "late"));
	RT_CHECK(rdma_join_multicast(rcv.id, grp, NULL) == 0,
		 "rdma_join_multicast: %s", strerror(errno));
	post_recv(&late, late.id);
	mc_send(&snd, ah, 5);
	rt_expect_wc(late.cq, "late", 1, IBV_WC_SUCCESS, IBV_WC_RECV);
	RT_CHECK(ibv_destroy_ah(ah) == 0 && ibv_destroy_ah(rah) == 0,
		 "ibv_destroy_ah");
	side_fini(&late);
	side_fini(&snd);
	side_fini(&rcv);	/* its join's event never taken */
}

static void
rt_case_mcast6(void)
{
	cm_family = AF_INET6;
	rt_case_mcast();
}

static const struct rt_case rt_cases[] = {
	{ "rc", rt_case_rc, 60,
	  "connect/accept/private data, SEND and READ, disconnect" },
	{ "reject", rt_case_reject, 60,
	  "rdma_reject: REJECTED, status 28, private data" },
	{ "ud", rt_case_ud, 60, "SIDR: QPN and Q_Key, then a UD SEND" },
	{ "rc6", rt_case_rc6, 60, "rc over IPv6 (2001:db8::1 and ::2)" },
	{ "ud6", rt_case_ud6, 60, "ud over IPv6 (2001:db8::1 and ::2)" },
	{ "family", rt_case_family, 60,
	  "an IPv4 listener takes no IPv6 request, an IPv6 one no IPv4" },
	{ "errors", rt_case_errors, 60,
	  "bad calls, ADDR_ERROR, O_NONBLOCK, destroy waits for acks" },
	{ "unreachable", rt_case_unreachable, 60,
	  "an unanswered REQ: retransmitted, then UNREACHABLE" },
	{ "lossy", rt_case_lossy, 240,
	  "30 connect/send/disconnect cycles on lossy, duplicating ports" },
	{ "garbage", rt_case_garbage, 120,
	  "random and mutated MADs to QP 1, then a real connection" },
	{ "chan_race", rt_case_chan_race, 60,
	  "a reader waiting while its id and channel are destroyed" },
	{ "mcast", rt_case_mcast, 60,
	  "rdma_join_multicast(_ex)/rdma_leave_multicast: errors, events, data" },
	{ "mcast6", rt_case_mcast6, 60, "mcast over IPv6 (ff0e::db8:1)" },
	{ "psn", rt_case_psn, 60,
	  "Starting PSNs as the kernel reads them; RC and UC QP attributes" },
};

int
main(int argc, char **argv)
{
	return rt_main(argc, argv, rt_cases,
		       sizeof(rt_cases) / sizeof(rt_cases[0]));
}
