/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The service layer: the attach server (rp_serve.c: the socket, its
 * thread and the API; rp_serve_client.c: one client's connection and
 * messages; rp_serve_check.c: the objects each client owns, and its
 * requests checked and recorded through the engine's control-op table,
 * rp_ctrl_descs[]) and its quotas (rp_serve_quota.c).  Internal to these
 * files; everything but rp_serve_clients() runs on the server's thread.
 */

#ifndef _RP_SERVICE_H_
#define _RP_SERVICE_H_

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "rocepmd.h"
#include "rp_attach.h"
#include "rp_engine.h"

/* ------------------------------------------------- quotas (rp_serve_quota.c) */

struct rp_sq_mr;

/* One connection's share, embedded in the server's client slot. */
struct rp_sq_client {
	uint8_t state;			/* enum in rp_serve_quota.c */
	uint32_t id;
	int32_t pid;
	uint32_t uid;
	const char *comm;
	uint64_t deadline;		/* timer cycles: HELLO due */
	struct rp_sq_uid *u;		/* its uid's total, once welcomed */
	uint64_t used[RP_ATTACH_MAX_DEVS][RP_QUOTA_KINDS];
	struct rp_sq_mr *mr;		/* pages of each of its MRs */
	uint32_t nr_mr, cap_mr;
};

/* A new connection: 0, or -EAGAIN when too many wait for their HELLO. */
int rp_sq_accept(struct rp_sq_client *q, uint32_t id, const struct ucred *cr,
		 const char *comm);

/* Its HELLO came: 0, or -EDQUOT when its uid has all its processes. */
int rp_sq_hello(struct rp_sq_client *q);

/* Whether it is past its HELLO deadline (and logs it). */
bool rp_sq_expired(struct rp_sq_client *q);

/* poll()'s timeout while connections wait for their HELLO, else -1. */
int rp_sq_timeout_ms(void);

/* Before a control request: 0, or -EDQUOT when it would take too much. */
int rp_sq_check(struct rp_sq_client *q, uint32_t dev,
		const struct rp_ctrl_slot *s);

/* After a request that succeeded: what it took or gave back. */
void rp_sq_done(struct rp_sq_client *q, uint32_t dev,
		const struct rp_ctrl_slot *s);

/* The connection ended: everything it held goes back. */
void rp_sq_close(struct rp_sq_client *q);

/* ----------------------------------------------------------- the server */

#define SRV_MAX_CLIENTS	64u

/* Object kinds a client can own, in the order they are destroyed: those
 * of the quotas (and of rp_ctrl_descs[]'s kinds). */
enum srv_kind {
	SRV_QP = RP_QUOTA_QP,
	SRV_SRQ = RP_QUOTA_SRQ,
	SRV_MW = RP_QUOTA_MW,
	SRV_MR = RP_QUOTA_MR,
	SRV_AH = RP_QUOTA_AH,
	SRV_CQ = RP_QUOTA_CQ,
	SRV_CHAN = RP_QUOTA_CHAN,
	SRV_ASYNC = RP_QUOTA_ASYNC,
	SRV_PD = RP_QUOTA_PD,
	SRV_KINDS,
};

struct srv_obj {
	uint8_t kind;			/* enum srv_kind */
	uint8_t dev;
	uint32_t id;			/* QPN, lkey, CQN...; ASYNC: its id */
	int fd;				/* CHAN, ASYNC: the server's copy */
};

struct srv_client {
	int fd;				/* connection, -1: slot free */
	uint32_t id;
	struct ucred cred;
	bool welcomed;
	uint32_t async_ids;		/* the last async registration's id */
	int mem_fd;			/* its address space, -1: none yet */
	uint64_t probe_addr;		/* 8 bytes of it, for liveness */
	char comm[16];
	struct srv_obj *obj;
	uint32_t nr_obj, cap_obj;
	uint64_t requests;
	uint32_t arena[RP_ATTACH_MAX_DEVS];	/* its arena per device */
	uint32_t gsi[RP_ATTACH_MAX_DEVS];	/* its GSI agent, 0: none */
	struct rp_sq_client quota;		/* what it holds (quotas) */
};

/* The server (rp_serve.c). */
struct rp_srv {
	pthread_t thread;
	bool running;
	int listen_fd;
	int stop_fd;
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	pthread_mutex_t lock;		/* clients[] against rp_serve_clients */
	struct srv_client clients[SRV_MAX_CLIENTS];
	uint32_t next_id;
	uint64_t attached_total;
	uint64_t refused;
	uint64_t gone;			/* address space gone (srv_liveness) */
};

extern struct rp_srv rp_srv;

/* ---- rp_serve_check.c */
struct srv_obj *rp_srv_obj_find(struct srv_client *c, enum srv_kind kind,
				uint32_t dev, uint32_t id);
void rp_srv_obj_del(struct srv_client *c, struct srv_obj *o);
void rp_srv_obj_destroy(struct srv_client *c, struct srv_obj *o);
int rp_srv_check(struct srv_client *c, uint32_t d, struct rp_ctrl_slot *s);
int rp_srv_account(struct srv_client *c, uint32_t d,
		   const struct rp_ctrl_slot *s, int fd);

/* ---- rp_serve_client.c */
void rp_srv_accept_fd(int fd);
bool rp_srv_client_input(struct srv_client *c);
void rp_srv_client_close(struct srv_client *c);

#endif /* _RP_SERVICE_H_ */
