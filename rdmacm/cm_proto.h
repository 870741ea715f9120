/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the librdmacm API (cm.c, cm_addr.c, cm_event.c, cm_qp.c) and the
 * IB CM protocol (cm_proto.c) share inside the RDMA CM component: the ids,
 * their addresses and events, and the protocol's messages and timers.
 * Not installed; cm.h holds what the agent (cm_agent.c) and the other
 * files also need.
 */
#ifndef _CM_PROTO_H_
#define _CM_PROTO_H_

#include "cm.h"

TAILQ_HEAD(cm_id_list, cm_id);
extern struct cm_id_list cm_ids;	/* every id, under cm_lock */

/* rdma-core's convention at the API: -1 with errno, from a negative errno. */
static inline int
cm_errno(int ret)
{
	if (ret < 0) {
		errno = -ret;
		return -1;
	}
	return 0;
}

/* cm_errno(), then a synchronous id's wait for its event. */
static inline int
cm_errno_complete(struct cm_id *c, int ret)
{
	return ret < 0 ? cm_errno(ret) : cm_complete(c);
}

/* cm.c: ids */
bool cm_stale_has(uint32_t remote_id, uint64_t guid);
struct cm_id *cm_id(struct rdma_cm_id *id);
struct cm_chan *cm_chan(struct rdma_event_channel *ch);
struct cm_id *cm_find_local(uint32_t local_id);
struct cm_id *cm_find_remote(uint32_t remote_id, uint64_t guid);
struct cm_id *cm_id_new(struct cm_chan *ch, void *context,
		enum rdma_port_space ps, enum ibv_qp_type qp_type);

/* cm_addr.c: addresses, ports */
void cm_gid_from_ipv4(union ibv_gid *gid, const void *ipv4);
void cm_sa_gid(const struct sockaddr *sa, union ibv_gid *gid);
uint16_t cm_sa_port(const struct sockaddr *sa);
void cm_sa_set(struct sockaddr *sa, sa_family_t family,
		const union ibv_gid *gid, uint16_t port);
uint64_t cm_service_id(enum rdma_port_space ps, uint16_t port);
struct sockaddr *cm_src(struct cm_id *c);
struct sockaddr *cm_dst(struct cm_id *c);
struct cm_id *cm_find_listener(struct cm_dev *d, enum rdma_port_space ps,
		uint16_t port, sa_family_t family, const union ibv_gid *dst);
void cm_attach_dev(struct cm_id *c, struct cm_dev *d, uint8_t sgid_index);

/* cm_event.c: events */
int cm_event_push_on(struct cm_chan *ch, struct cm_id *c,
		enum rdma_cm_event_type type, int status, struct cm_id *listen,
		const void *priv, size_t priv_len);
int cm_event_push(struct cm_id *c, enum rdma_cm_event_type type, int status,
		struct cm_id *listen, const void *priv, size_t priv_len);
struct cm_event *cm_event_last(struct cm_chan *ch);
bool cm_has_event(const struct cm_chan *ch, const struct cm_id *c);
void cm_drop_queued_on(struct cm_chan *ch, struct cm_id *c);

/* cm_proto.c: the protocol's messages, timers and QP moves */
int cm_send_armed(struct cm_id *c, const union ibv_gid *dgid);
void cm_qp_to_err(struct cm_id *c);
int cm_send_req(struct cm_id *c, const struct rdma_conn_param *p);
int cm_send_sidr_req(struct cm_id *c, const struct rdma_conn_param *p);
int cm_send_rep(struct cm_id *c, const struct rdma_conn_param *p);
int cm_send_sidr_rep(struct cm_id *c, const struct rdma_conn_param *p,
		uint32_t status);
void cm_send_rej(struct cm_dev *d, uint8_t sgid_index,
		const union ibv_gid *dgid, uint64_t tid, uint32_t local_id,
		uint32_t remote_id, unsigned int msg, unsigned int reason,
		const void *priv, size_t len);
void cm_build_dreq(struct cm_id *c);
void cm_will_set(struct cm_id *c);
void cm_will_drop(struct cm_id *c);

/* cm_mcast.c: multicast joins and their events */
void cm_mc_taken(struct cm_event *e);
void cm_mc_deliver(struct cm_event *e);
void cm_mc_acked(struct cm_event *e);
void cm_mc_leave_all(struct cm_id *c);
bool cm_gid_is_mc(const union ibv_gid *gid);
struct cm_dev *cm_mc_route_dev(const union ibv_gid *group, uint8_t *idx);

#endif /* _CM_PROTO_H_ */
