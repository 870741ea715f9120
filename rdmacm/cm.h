/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * RDMA CM over rocepmd: librdmacm's ABI (rdma-core <rdma/rdma_cma.h>,
 * symbol versions RDMACM_1.x) with the IB CM protocol on the wire, as
 * RoCE devices and the kernel's rdma_cm speak it: REQ/REP/RTU, REJ,
 * DREQ/DREP and SIDR for UD, carried in MADs to QP 1.
 *
 * cm_agent.c owns each device's GSI QP, sends and receives MADs and runs
 * the agent thread (receive, retransmission timers); cm_proto.c holds
 * the connection state machine, cm.c (ids and connections), cm_addr.c,
 * cm_event.c, cm_qp.c and the other cm_*.c files the exported functions.
 * Everything here is control path: one mutex (cm_lock) guards all CM
 * state.
 */

#ifndef _CM_H_
#define _CM_H_

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/queue.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include <rte_common.h>
#include <rte_log.h>

#include "cm_conn.h"
#include "cm_mad.h"
#include "rocepmd.h"
#include "rp_log.h"

extern int cm_logtype;		/* rocepmd.cm */

/* Marks a definition that the version script exports. */
#define CM_EXPORT	__attribute__((visibility("default")))

/* Logging never changes errno: callers set it for the application. */
#define CM_LOG(level, fmt, ...) do { \
	int cm_errno_ = errno; \
	RP_LOGT(cm_logtype, level, "cm: " fmt, ##__VA_ARGS__); \
	errno = cm_errno_; \
} while (0)

#define CM_MAX_DEVS		RP_MAX_PORTS
#define CM_PORT			1u	/* the one port of every device */
#define CM_PKEY_DEFAULT		0xffffu	/* P_Key index 0 */
#define CM_RECV_BUFS		64u
#define CM_SEND_DEPTH		64u
#define CM_GRH_LEN		40u
#define CM_AH_CACHE		64u
#define CM_WILL_LEN		64u	/* a DREQ's bytes the engine keeps */
/* Retransmission: every 500 ms, up to 15 times (IBTA Max CM Retries). */
#define CM_RESP_TIMEOUT_EXP	17u	/* 4.096 us * 2^17 = 537 ms */
#define CM_RETRY_MS		500u
#define CM_MAX_RETRIES		15u
/* Defaults IBTA leaves to the CM (the kernel's rdma_cm uses the same). */
#define CM_LOCAL_ACK_TIMEOUT	14u
#define CM_MIN_RNR_TIMER	12u
#define CM_HOP_LIMIT		64u

/*
 * The real librdmacm runs its rsockets (rsocket.c) on top of this library:
 * it calls rdma_* through the PLT, so they land here, but also three
 * functions of its own cma.c that read librdmacm's private id behind the
 * struct rdma_cm_id: ucma_complete() reads `sync`, ucma_max_qpsize()
 * `cma_dev->max_qpsize`, ucma_shutdown() only public fields.  So the words
 * after our rdma_cm_id are those of rdma-core's struct cma_id_private, and
 * cma_dev points to the head of a struct cma_device, both as cma.c lays
 * them out from v30 to v64 (rdma_cm.rst, rsockets).
 */
struct cm_ucma_dev {
	void *dev;
	void *entry[2];			/* struct list_node */
	void *verbs;
	void *pd;
	void *xrcd;
	void *port;
	uint64_t guid;
	int port_cnt;
	int refcnt;
	int max_qpsize;			/* read by rsockets */
	uint8_t max_initiator_depth;
	uint8_t max_responder_resources;
};

struct cm_ucma_id {
	struct cm_ucma_dev *cma_dev;
	void *connect;
	size_t connect_len;
	int events_completed;
	int connect_error;
	int sync;			/* read by ucma_complete() */
};

struct cm_dev {
	bool up;
	struct cm_ucma_dev ucma;	/* what rsockets read of a device */
	struct ibv_context *ctx;	/* also every cm_id's id->verbs */
	struct ibv_pd *pd;		/* the GSI's, and ids' default PD */
	struct ibv_comp_channel *chan;
	struct ibv_cq *cq;		/* receives, on chan */
	struct ibv_cq *scq;		/* sends */
	struct ibv_qp *qp;		/* our GSI agent: QP 1 on the wire */
	uint32_t comm_prefix;		/* what our local IDs carry ... */
	uint32_t comm_mask;		/* ... in these bits (rp_gsi.c) */
	struct ibv_mr *mr;
	uint8_t *buf;			/* receive buffers: GRH + MAD each */
	uint32_t send_out;		/* posted, not completed */
	/*
	 * The GID table (0 ::ffff:a.b.c.d, 1 link-local, 2.. the configured
	 * IPv6 addresses; zero: empty) and the prefix length of each entry's
	 * subnet, IPv4's counted from the GID's 96-bit ::ffff:0:0 prefix.
	 */
	union ibv_gid gid[RP_GID_TBL_LEN];
	uint8_t gid_plen[RP_GID_TBL_LEN];
	enum ibv_mtu mtu;
	uint64_t guid;			/* host order */
	struct {
		union ibv_gid gid;
		uint8_t sgid_index;
		struct ibv_ah *ah;
	} ah_cache[CM_AH_CACHE];
	unsigned int nr_ah;
};

enum cm_state {
	CM_S_IDLE,
	CM_S_ADDR_RESOLVED,
	CM_S_ROUTE_RESOLVED,
	CM_S_LISTEN,
	CM_S_REQ_SENT,
	CM_S_REQ_RCVD,		/* passive: CONNECT_REQUEST delivered */
	CM_S_REP_SENT,
	CM_S_ESTABLISHED,
	CM_S_DREQ_SENT,
	CM_S_DISCONNECTED,
	CM_S_SIDR_REQ_SENT,
	CM_S_SIDR_REQ_RCVD,
};

struct cm_chan;
struct cm_mc;

struct cm_id {
	struct rdma_cm_id id;		/* first: what the application sees */
	struct cm_ucma_id ucma;		/* second: see struct cm_ucma_dev */
	TAILQ_ENTRY(cm_id) link;
	struct cm_chan *chan;
	/*
	 * Synchronous ids (ucma.sync: created without a channel, as by
	 * rdma_create_ep) own their channel; a request for a synchronous
	 * listener waits on the listener's (req_chan) until
	 * rdma_get_request() takes it.
	 */
	struct cm_chan *req_chan;
	struct ibv_qp_init_attr *ep_qp_attr;	/* passive endpoint's QPs */
	enum cm_state state;
	struct cm_dev *dev;		/* NULL while unbound or bound to any */
	uint8_t sgid_index;		/* of our address in dev's GID table */
	bool bound;
	bool sidr;
	bool will;			/* the engine holds a DREQ for it */
	uint16_t port;			/* local port, host order */
	uint32_t local_id;		/* local communication or request ID */
	uint32_t remote_id;
	uint64_t remote_guid;
	uint32_t remote_qpn;
	uint8_t path_mtu;		/* enum ibv_mtu */
	/*
	 * REQ and REP as sent or received (our own half from the start:
	 * its Starting PSN is our rq_psn), and what they make of our QP
	 * once the peer's half is known (qpa_ok).
	 */
	struct cm_conn_wire wire;
	struct cm_conn_qp qpa;
	bool qpa_ok;
	uint64_t tid;
	/* The last MAD sent that expects an answer, for retransmission. */
	uint8_t mad[CM_MAD_SIZE];
	union ibv_gid mad_dgid;		/* sent from sgid_index */
	bool timer;
	uint64_t deadline_ms;
	unsigned int retries;
	unsigned int events_out;	/* delivered, not acked */
	pthread_cond_t acked;
	struct ibv_sa_path_rec path;
	struct cm_mc *mcs;		/* multicast joins (cm_mcast.c) */
};

struct cm_event {
	struct rdma_cm_event ev;	/* first */
	TAILQ_ENTRY(cm_event) link;
	struct cm_id *owner;		/* the id whose events_out it counts */
	struct cm_mc *mc;		/* a multicast join's event, or NULL */
	uint8_t priv[CM_MAD_SIZE];
};

TAILQ_HEAD(cm_event_list, cm_event);

struct cm_chan {
	struct rdma_event_channel ch;	/* first: ch.fd, EFD_SEMAPHORE */
	struct cm_event_list queue;
	unsigned int nr_ids;
	unsigned int readers;		/* threads in rdma_get_cm_event() */
	bool closing;			/* rdma_destroy_event_channel() ran */
};

extern pthread_mutex_t cm_lock;

/* cm_agent.c, all under cm_lock */
struct cm_dev *cm_dev_for_gid(const union ibv_gid *ip, bool exact,
			      uint8_t *sgid_index);
struct cm_dev *cm_dev_for_family(bool v4, bool link_local,
				 uint8_t *sgid_index);
bool cm_gid_is_v4(const union ibv_gid *gid);
int cm_dev_open_all(void);
int cm_send(struct cm_dev *dev, uint8_t sgid_index,
	    const union ibv_gid *dgid, uint8_t *mad);
uint64_t cm_now_ms(void);
void cm_agent_kick(void);
uint32_t cm_random32(void);
unsigned int cm_dev_contexts(struct ibv_context **out, unsigned int max);
uint32_t cm_local_id(const struct cm_dev *d);
int cm_agent_claim(uint64_t service_id, bool claim);
int cm_agent_will(struct cm_dev *d, uint32_t comm_id,
		  const union ibv_gid *dgid, uint8_t sgid_index,
		  const uint8_t *mad, uint32_t len);

/* cm_proto.c, from the agent thread, under cm_lock */
void cm_mad_recv(struct cm_dev *dev, uint8_t sgid_index,
		 const union ibv_gid *src, const uint8_t *mad);
uint64_t cm_timers_run(uint64_t now);
/* cm_proto.c, under cm_lock */
int cm_init_qp_attr(struct cm_id *c, struct ibv_qp_attr *a, int *mask);
/* cm.c and cm_event.c, without cm_lock */
int cm_create_id(struct rdma_event_channel *channel, struct rdma_cm_id **id,
		 void *context, enum rdma_port_space ps,
		 enum ibv_qp_type qpt);
int cm_complete(struct cm_id *c);

#endif /* _CM_H_ */
