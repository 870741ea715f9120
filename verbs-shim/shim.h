/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Private declarations of the rocepmd verbs shim (librocepmd-verbs.so).
 *
 * The shim is loaded with LD_PRELOAD in front of libibverbs.so.1 and
 * defines every function that library exports, so verbs programs run on
 * the in-process rocepmd engine unmodified.  Verbs objects live on the
 * application side (struct shim_* embedding the ibv_* object first, as
 * rdma-core providers do); the engine knows them only by number, and data
 * moves through the shared region described in rp_abi.h.
 *
 * Errors follow rdma-core at every exported function; inside, helpers
 * return 0 or a negative errno.  Only ibv_* and _ibv_* are exported
 * (SHIM_EXPORT plus libibverbs.map); everything else is hidden.
 */

#ifndef _SHIM_H_
#define _SHIM_H_

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rte_common.h>
#include <rte_log.h>
#include <rte_pause.h>

#include <infiniband/sa.h>
#include <infiniband/verbs.h>
#include <rdma/ib_user_sa.h>
#include <rdma/ib_user_verbs.h>

#include "rocepmd.h"
#include "rp_abi.h"
#include "rp_atomic.h"
#include "rp_log.h"

/*
 * The application threads' lock of a CQ, a work queue or an SRQ's list
 * operations: every post and poll takes one.  DPDK's x86
 * rte_spinlock_unlock() is an xchg, a second full barrier per call (38 %
 * of an empty ibv_poll_cq here); this one releases with a store, as the
 * generic rte_spinlock does.
 */
struct shim_lock {
	uint32_t held;
};

static inline void
shim_lock_init(struct shim_lock *l)
{
	rp_store_relaxed(&l->held, 0u);
}

static inline void
shim_lock(struct shim_lock *l)
{
	while (__atomic_exchange_n(&l->held, 1u, __ATOMIC_ACQUIRE) != 0)
		while (rp_load_relaxed(&l->held) != 0)
			rte_pause();
}

static inline void
shim_unlock(struct shim_lock *l)
{
	rp_store_release(&l->held, 0u);
}

/* Marks a definition that the version script exports. */
#define SHIM_EXPORT	__attribute__((visibility("default")))

extern int shim_logtype;		/* rocepmd.shim (shim_boot.c) */

/* Logging never changes errno: callers set it for the application. */
#define SHIM_LOG(level, fmt, ...) do { \
	int shim_errno_ = errno; \
	RP_LOGT(shim_logtype, level, fmt, ##__VA_ARGS__); \
	errno = shim_errno_; \
} while (0)

#define SHIM_CQ_LOG(level, cqn, fmt, ...) \
	SHIM_LOG(level, "cq 0x%x: " fmt, (unsigned int)(cqn), ##__VA_ARGS__)

#define SHIM_QP_LOG(level, qpn, fmt, ...) \
	SHIM_LOG(level, "qp 0x%06x: " fmt, (unsigned int)(qpn), ##__VA_ARGS__)

#define SHIM_PORT		1u	/* the one port of every device */
#define SHIM_GID_TBL_LEN	((int)RP_GID_TBL_LEN)	/* rp_abi.h: IPv4, LL, IPv6 */
#define SHIM_PKEY_DEFAULT	0xffffu	/* P_Key index 0 */
#define SHIM_NUM_COMP_VECTORS	1
#define SHIM_FW_VER		"rocepmd 0.1"

/* CQ table of a context, indexed by the low 16 bits of a CQN. */
#define SHIM_CQ_TAB		65536u
#define SHIM_CQN_IDX(cqn)	((cqn) & (SHIM_CQ_TAB - 1))

/* QP table of a context, indexed by the low 16 bits of a QPN. */
#define SHIM_QP_TAB		65536u
#define SHIM_QPN_IDX(qpn)	((qpn) & (SHIM_QP_TAB - 1))

/* SRQ table of a context, indexed by the low 16 bits of an SRQN. */
#define SHIM_SRQ_TAB		65536u
#define SHIM_SRQN_IDX(srqn)	((srqn) & (SHIM_SRQ_TAB - 1))

/* Queued asynchronous events per context (shim_async_push()). */
#define SHIM_ASYNC_EVENTS	256u

/*
 * Bytes the exported ibv_query_port() fills: the struct before
 * port_cap_flags2 was added (rdma-core's struct _compat_ibv_port_attr).
 */
#define SHIM_COMPAT_PORT_ATTR_SZ	offsetof(struct ibv_port_attr, port_cap_flags2)

/* ------------------------------------------------------------- objects */

struct shim_device {
	struct ibv_device ibv;
	/*
	 * Where rdma-core's struct verbs_device keeps its ops pointer and
	 * the words after it.  Zero, so provider code that asks whether a
	 * device is its own (mlx5dv_is_supported(), efadv_*) says no
	 * instead of reading past the object.
	 */
	const void *verbs_shadow[8];
	unsigned int dev;		/* engine device index */
	__be64 guid;			/* node GUID: EUI-64 of the MAC */
};

struct shim_context;

/*
 * Asynchronous events of a context: its consumer index into the device's
 * event ring (rp_abi.h struct rp_async_ctl), and a queue of events the
 * shim itself raises (shim_async_push()).  One read of `fd` per event.
 */
struct shim_async {
	int fd;				/* eventfd, EFD_SEMAPHORE (attached:
					 * a socket, 8 bytes per event) */
	uint32_t id;			/* attached: the host's name for it */
	pthread_mutex_t lock;		/* application threads */
	uint32_t cons;			/* ring index, atomic (read by others
					 * under the device's list lock) */
	struct shim_context *next;	/* contexts of the device */
	uint32_t head;			/* next to deliver */
	uint32_t tail;			/* next free */
	struct ibv_async_event ev[SHIM_ASYNC_EVENTS];
};

struct shim_context {
	struct verbs_context vctx;	/* ibv_context last: rdma-core ABI */
	unsigned int dev;		/* engine device index */
	/* device attributes, GIDs, need_wakeup: read only here */
	struct rp_dev_ctl *ctl;
	/* where this process's objects are: offsets the engine returns
	 * are relative to obj_base and bounded by obj_size */
	uint8_t *obj_base;
	uint64_t obj_size;
	struct rp_async_ctl *async_ring;	/* the device's events */
	pthread_mutex_t cq_lock;	/* cq_tab */
	struct shim_cq **cq_tab;	/* SHIM_CQ_TAB slots */
	pthread_mutex_t qp_lock;	/* qp_tab */
	struct shim_qp **qp_tab;	/* SHIM_QP_TAB slots (async events) */
	pthread_mutex_t srq_lock;	/* srq_tab */
	struct shim_srq **srq_tab;	/* SHIM_SRQ_TAB slots (async events) */
	struct shim_async async;
};

struct shim_pd {
	struct ibv_pd ibv;
	uint32_t pdn;
};

struct shim_mr {
	struct ibv_mr ibv;		/* lkey is the engine's MR number */
	uint32_t pdn;
	unsigned int access;		/* as registered (ibv_advise_mr()) */
	uint64_t iova;
	struct shim_mr *next;		/* the process's MRs (shim_pd_mr.c) */
};

struct shim_ah {
	struct ibv_ah ibv;
	uint32_t ahn;
};

struct shim_chan {
	struct ibv_comp_channel ibv;
	struct shim_context *ctx;
	uint32_t chn;
	struct rp_chan_ctl *ctl;
	pthread_mutex_t lock;		/* cons: application threads */
	uint32_t cons;			/* private consumer index */
};

struct shim_cq {
	/*
	 * struct ibv_cq_ex begins with the fields of struct ibv_cq
	 * (ibv_cq_ex_to_cq() is a cast), so one object serves ibv_poll_cq()
	 * and, when created by ibv_create_cq_ex(), ibv_start_poll().
	 */
	union {
		struct ibv_cq ibv;
		struct ibv_cq_ex ibvx;
	};
	struct shim_context *ctx;
	struct shim_chan *chan;		/* or NULL */
	uint32_t cqn;
	uint32_t size;			/* entries, a power of two */
	uint32_t lap_shift;		/* log2(size) */
	struct rp_cq_ctl *ctl;
	struct rp_cqe *ring;
	struct shim_lock lock;		/* poll: application threads */
	uint32_t cons;			/* private consumer index, under lock */
	uint32_t nr_qp;			/* QPs and TM-SRQs using the CQ, atomic */
	bool ex;			/* created by ibv_create_cq_ex() */
	uint64_t wc_flags;		/* ex: IBV_WC_EX_WITH_* asked for */
	/* ibv_start_poll() .. ibv_end_poll(), under lock */
	const struct rp_cqe *cur;	/* the CQE the read_*() calls see */
	uint32_t x_next;		/* first CQE not consumed by the batch */
	/* Under ibv.mutex, against comp/async_events_completed (CC-8). */
	uint32_t comp_delivered;
	uint32_t async_delivered;
};

/* Application side of one work queue (SQ or RQ). */
struct shim_wq {
	struct shim_lock lock;		/* application threads only */
	struct rp_wq_hdr *hdr;
	uint8_t *ent;			/* entry 0 */
	uint32_t size;			/* entries, a power of two */
	uint32_t stride;		/* bytes per entry */
	uint32_t prod;			/* private producer index, under lock */
	uint32_t cons;			/* engine's index, last seen */
	/* a QP's: its doorbell word and bit (rp_abi.h); NULL for an SRQ */
	uint64_t *bell;
	uint64_t bell_bit;
};

/* A shared receive queue; for IBV_SRQT_TM also its tag-matching rings. */
struct shim_srq {
	struct ibv_srq ibv;
	struct shim_context *ctx;
	uint32_t srqn;
	bool tm;
	struct shim_cq *cq;		/* TM: the CQ of all its completions */
	struct shim_wq wq;		/* receive ring */
	uint32_t max_sge;
	uint32_t nr_qp;			/* QPs attached, atomic */
	uint32_t async_delivered;	/* under ibv.mutex */
	/* TM: list operations (wq.lock-like: ops.lock covers the rest) */
	struct shim_wq ops;		/* struct rp_tm_op entries */
	uint32_t max_ops;
	uint32_t max_tags;
	struct rp_tm_free *free;	/* slots the engine gave back */
	uint32_t free_size;
	uint32_t free_cons;		/* private consumer index */
	uint32_t *stack;		/* free slots the shim holds */
	uint32_t nr_stack;
	uint16_t *gen;			/* per slot: generation of its handle */
};

struct shim_qp {
	struct ibv_qp_ex qpx;		/* qpx.qp_base is the ibv_qp */
	struct shim_context *ctx;
	struct shim_cq *scq;
	struct shim_cq *rcq;		/* TM-SRQ: the SRQ's CQ */
	struct shim_srq *srq;		/* or NULL */
	uint32_t qpn;
	uint32_t comm_prefix;		/* GSI agent: rp_ctrl_qp_create's */
	bool sq_sig_all;
	bool ex_send;			/* created with send_ops_flags */
	uint64_t send_ops_flags;	/* IBV_QP_EX_WITH_* allowed */
	struct ibv_qp_cap cap;		/* granted */
	struct shim_wq sq;
	struct shim_wq rq;
	uint32_t async_delivered;	/* under qpx.qp_base.mutex */
	/* ibv_wr_*() batch, under sq.lock from wr_start to complete/abort */
	uint32_t wr_first;		/* sq.prod at wr_start */
	int wr_err;			/* first error of the batch */
	struct rp_send_wqe *wr_cur;	/* WQE being built, or NULL */
	bool wr_ud_addr;		/* wr_set_ud_addr() done for wr_cur */
};

/* ---------------------------------------------------------- conversions */

static inline struct shim_context *
shim_ctx(struct ibv_context *ibctx)
{
	return container_of(ibctx, struct shim_context, vctx.context);
}

static inline struct shim_pd *
shim_pd(struct ibv_pd *pd)
{
	return container_of(pd, struct shim_pd, ibv);
}

static inline struct shim_cq *
shim_cq(struct ibv_cq *cq)
{
	return container_of(cq, struct shim_cq, ibv);
}

static inline struct shim_qp *
shim_qp(struct ibv_qp *qp)
{
	return container_of(qp, struct shim_qp, qpx.qp_base);
}

static inline struct shim_qp *
shim_qpx(struct ibv_qp_ex *qpx)
{
	return container_of(qpx, struct shim_qp, qpx);
}

static inline struct shim_srq *
shim_srq(struct ibv_srq *srq)
{
	return container_of(srq, struct shim_srq, ibv);
}

static inline struct shim_ah *
shim_ah(struct ibv_ah *ah)
{
	return container_of(ah, struct shim_ah, ibv);
}

static inline struct shim_chan *
shim_chan(struct ibv_comp_channel *ch)
{
	return container_of(ch, struct shim_chan, ibv);
}

/*
 * An object of the shared region, from an offset the engine returned:
 * NULL unless [off, off + len) lies inside the region (never trust the
 * peer's numbers).
 */
static inline void *
shim_region_ptr(const struct shim_context *ctx, uint64_t off, uint64_t len)
{
	if (off > ctx->obj_size || len > ctx->obj_size - off)
		return NULL;
	return ctx->obj_base + off;
}

static inline bool
shim_is_pow2(uint32_t v)
{
	return v != 0 && (v & (v - 1)) == 0;
}

/* --------------------------------------------------------------- engine */

/*
 * How the shim reaches the engine: all it asks of it.
 * Embedded (shim_boot.c): the engine runs in this process, booted from
 * ROCEPMD_CONFIG or by the program itself (rocepmd_verbs_attach()).
 * Attached (shim_attach.c): another process, the host, runs it and serves
 * the devices on the UNIX socket named by ROCEPMD_ATTACH (rp_attach.h).
 * Either way the regions are mapped here and the data path is the same.
 */
struct shim_engine_ops {
	const char *name;
	/* Number of devices. */
	unsigned int (*dev_count)(void);
	/* Control block at the base of a device's region, or NULL. */
	struct rp_dev_ctl *(*dev_ctl)(unsigned int dev);
	/*
	 * Where this process's objects are: every offset the engine
	 * returns is relative to *base and bounded by the size returned
	 * (shim_region_ptr()); 0 for a device that is not there.
	 */
	uint64_t (*objects)(unsigned int dev, uint8_t **base);
	/* The async event ring this process reads (rp_async.c). */
	struct rp_async_ctl *(*async)(unsigned int dev);
	/* Run a control request: 0 or a negative errno (rp_ctrl_call()). */
	int (*ctrl_call)(unsigned int dev, struct rp_ctrl_slot *slot);
	/* A work queue of the device has new entries (rp_dev_doorbell()). */
	void (*doorbell)(unsigned int dev);
	/*
	 * A poll found a CQ empty: run an engine pass here if the engine
	 * runs inline (rp_engine_assist()); attached, give the CPU to the
	 * host's lcore now and then (shim_attach.c).  True if either ran:
	 * the CQ is looked at again.
	 */
	bool (*assist)(unsigned int dev);
	/* The program stops polling (it armed a CQ): rp_engine_unassist(). */
	void (*unassist)(unsigned int dev);
	/*
	 * The engine makes the fd of a channel and of an async
	 * registration (attached: the host's socket pair, rp_attach.h):
	 * the request carries none, and ctrl_call returns ours in the
	 * reply's fd field.  Else the shim makes an eventfd and sends it.
	 */
	bool engine_fds;
};

extern const struct shim_engine_ops shim_engine_embedded_ops;
extern const struct shim_engine_ops shim_engine_attached_ops;
/* Chosen once, before shim_engine_running() first says true. */
extern const struct shim_engine_ops *shim_engine;

static inline void
shim_doorbell(unsigned int dev)
{
	shim_engine->doorbell(dev);
}

/* ------------------------------------------------------------ functions */

/* shim_boot.c */
int shim_boot(void);
bool shim_engine_running(void);

/* shim_attach.c */
int shim_attach_open(const char *path);
void shim_attach_forked(void);

/* shim_dev.c */
int shim_dev_probe(void);
int shim_dev_node(const char *name);
int shim_boot_attach(void);
int shim_ctrl(struct shim_context *ctx, struct rp_ctrl_slot *slot);
int shim_query_port(struct ibv_context *ibctx, uint8_t port_num,
		    struct ibv_port_attr *attr, size_t attr_len);
int shim_query_device_ex(struct ibv_context *ibctx,
			 const struct ibv_query_device_ex_input *input,
			 struct ibv_device_attr_ex *attr, size_t attr_size);

/* shim_async.c */
int shim_async_init(struct shim_context *ctx);
void shim_async_fini(struct shim_context *ctx);
void shim_async_push(struct shim_context *ctx,
		     const struct ibv_async_event *ev);

/* shim_cq.c */
struct shim_cq *shim_cq_lookup(struct shim_context *ctx, uint32_t cqn);
struct ibv_cq_ex *shim_create_cq_ex(struct ibv_context *ibctx,
				    struct ibv_cq_init_attr_ex *attr);

/* shim_srq.c */
struct shim_srq *shim_srq_lookup(struct shim_context *ctx, uint32_t srqn);
struct ibv_srq *shim_create_srq_ex(struct ibv_context *ibctx,
				   struct ibv_srq_init_attr_ex *attr);
int shim_post_srq_recv(struct ibv_srq *ibsrq, struct ibv_recv_wr *wr,
		       struct ibv_recv_wr **bad_wr);
int shim_post_srq_ops(struct ibv_srq *ibsrq, struct ibv_ops_wr *op,
		      struct ibv_ops_wr **bad_op);
int shim_get_srq_num(struct ibv_srq *ibsrq, uint32_t *srq_num);

/* shim_qp.c */
struct shim_qp *shim_qp_lookup(struct shim_context *ctx, uint32_t qpn);

/* shim_chan.c */
int shim_req_notify_cq(struct ibv_cq *ibcq, int solicited_only);
int shim_modify_cq(struct ibv_cq *ibcq, struct ibv_modify_cq_attr *attr);
void shim_cq_events_wait(struct shim_cq *cq);

/* shim_poll.c */
int shim_poll_cq(struct ibv_cq *ibcq, int num_entries, struct ibv_wc *wc);
void shim_cq_ex_ops_set(struct shim_cq *cq);

/* shim_post.c */
int shim_post_send_wr(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
		      struct ibv_send_wr **bad_wr, bool type1);
int shim_advise_mr(struct ibv_pd *ibpd, enum ibv_advise_mr_advice advice,
		   uint32_t flags, struct ibv_sge *sg_list, uint32_t num_sges);
struct ibv_mw *shim_alloc_mw(struct ibv_pd *ibpd, enum ibv_mw_type type);
int shim_dealloc_mw(struct ibv_mw *mw);
int shim_bind_mw(struct ibv_qp *qp, struct ibv_mw *mw,
		 struct ibv_mw_bind *bind);
int shim_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
		   struct ibv_send_wr **bad_wr);
int shim_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr,
		   struct ibv_recv_wr **bad_wr);
int shim_wq_post_recv(struct shim_wq *wq, uint32_t max_sge, unsigned int dev,
		      struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr);
void shim_qpx_ops_set(struct shim_qp *qp);

/* shim_qp.c */
struct ibv_qp *shim_create_qp_flags(struct ibv_context *ibctx,
				    struct ibv_qp_init_attr_ex *attr,
				    uint32_t flags);
struct ibv_qp *shim_create_qp_ex(struct ibv_context *ibctx,
				 struct ibv_qp_init_attr_ex *attr);
int shim_wq_map(struct shim_context *ctx, struct shim_wq *wq, uint64_t off,
		uint32_t size, uint32_t stride, uint32_t min_stride);

/* shim_ah.c */
int shim_av_from_ah_attr(struct rp_av *av, const struct ibv_ah_attr *ah);
void shim_av_to_ah_attr(struct ibv_ah_attr *ah, const struct rp_av *av);

/* shim_stubs.c */
void shim_dummy_ops_set(struct verbs_context *vctx);

/*
 * Exported functions that no installed header declares (rdma-core keeps
 * them in driver.h and marshall.h).
 */
int ibv_query_gid_type(struct ibv_context *context, uint8_t port_num,
		       unsigned int index, int *type);
void ibv_copy_ah_attr_from_kern(struct ibv_ah_attr *dst,
				struct ib_uverbs_ah_attr *src);
void ibv_copy_qp_attr_from_kern(struct ibv_qp_attr *dst,
				struct ib_uverbs_qp_attr *src);
void ibv_copy_path_rec_from_kern(struct ibv_sa_path_rec *dst,
				 struct ib_user_path_rec *src);
void ibv_copy_path_rec_to_kern(struct ib_user_path_rec *dst,
			       struct ibv_sa_path_rec *src);
const char *ibv_get_sysfs_path(void);
int ibv_dontfork_range(void *base, size_t size);
int ibv_dofork_range(void *base, size_t size);
int ibv_read_sysfs_file(const char *dir, const char *file, char *buf,
			size_t size);

#endif /* _SHIM_H_ */
