/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rp_testlib: the verbs helpers shared by the one-process test programs
 * (test/engine/test_verbs.c, test/engine/test_async.c,
 * test/events/test_events.c): failure reporting and the watchdog,
 * random patterns, devices, registered buffers, endpoints, RC connection,
 * work requests, completions and completion channels.
 *
 * Every check fails through rt_fail(), which names the program (rt_prog,
 * defined by each program), the case and the step, and ends the process
 * with status 1.
 */

#ifndef RP_TESTLIB_H
#define RP_TESTLIB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <infiniband/verbs.h>

/* What the configurations in test/engine/ say. */
#define RT_DEV0			"rocepmd0"
#define RT_DEV1			"rocepmd1"
#define RT_IPV4_0		0xc0000201u	/* 192.0.2.1 */
#define RT_IPV4_1		0xc0000202u	/* 192.0.2.2 */
#define RT_CFG_MTU		IBV_MTU_1024	/* mtu = 1024 */

#define RT_PORT			1
#define RT_GID_INDEX		0		/* ::ffff:192.0.2.x */
#define RT_GID_INDEX_LL		1		/* fe80:: from the MAC */
#define RT_GID_INDEX_IPV6	2		/* the first ipv6 = address */
#define RT_GRH_LEN		40
#define RT_GUARD		64		/* guard bytes around targets */
#define RT_GUARD_BYTE		0xa5
#define RT_QKEY			0x11111111u
#define RT_INLINE		128		/* max_inline_data asked for */
#define RT_CQE			512
#define RT_WR			256
#define RT_SGE			4
#define RT_IDLE_MS		100		/* "nothing arrives" windows */

#define RT_ACCESS_ALL	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
			 IBV_ACCESS_REMOTE_READ)

/* ------------------------------------------------------------ reporting */

/* The program's name in failure messages; each program defines it. */
extern const char rt_prog[];

/* One test case of a program: run as `PROGRAM CASE`, or `PROGRAM list`. */
struct rt_case {
	const char *name;
	void (*fn)(void);
	unsigned int watchdog_s;	/* whole-case limit */
	const char *what;
};

/*
 * An rt_case table whose cases are declared in a .def file that meson
 * also reads (test/engine/meson.build: the format): define RT_CASE_FN(name)
 * to a case's function, then include the file inside the table.
 */
#define RT_CASE(name, ini, timeout, suites, watchdog, what) \
	{ #name, RT_CASE_FN(name), watchdog, what },
#define RT_CASE_EXTRA(name, watchdog, what) \
	{ #name, RT_CASE_FN(name), watchdog, what },

/*
 * Run the case argv[1] names: seed (RP_TEST_SEED), timeout
 * (RP_TEST_TIMEOUT) and watchdog set up, PASS printed when it returns.
 */
int rt_main(int argc, char **argv, const struct rt_case *cases, size_t n);

extern const char *rt_case_name;
extern char rt_step_buf[256];
extern double rt_timeout_s;
extern uint64_t rt_seed;
extern uint64_t rt_rng;

void rt_fail(const char *func, int line, const char *fmt, ...)
	__attribute__((noreturn, format(printf, 3, 4)));

#define RT_FAIL(...) rt_fail(__func__, __LINE__, __VA_ARGS__)
#define RT_CHECK(cond, ...) do { \
	if (!(cond)) \
		RT_FAIL(__VA_ARGS__); \
} while (0)

void rt_step(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void rt_watchdog(int sig);
double rt_now(void);
void rt_sleep_ms(unsigned int ms);

/* ------------------------------------------------------------- patterns */

uint64_t rt_rand64(uint64_t *s);
uint32_t rt_rand32(void);
void rt_fill_random(void *buf, size_t len);
void rt_check_data(const void *got, const void *exp, size_t n,
		   const char *what);
void rt_check_guard(const void *p, size_t n, const char *what);

/* ------------------------------------------------------------- devices */

struct rt_dev {
	char name[IBV_SYSFS_NAME_MAX];
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_device_attr attr;
	struct ibv_port_attr port;
	union ibv_gid gid;
	uint32_t mtu;			/* active MTU in bytes */
};

/*
 * The GID index devices are opened with (rt_dev_open reads dev->gid
 * there) and AVs are made from (rt_ah_attr): RT_GID_INDEX, unless a case
 * runs over IPv6 (RT_GID_INDEX_IPV6, RT_GID_INDEX_LL).
 */
extern uint8_t rt_gid_index;

uint32_t rt_mtu_bytes(enum ibv_mtu mtu);
void rt_wait_active(struct ibv_context *ctx, const char *name);
void rt_dev_open(struct rt_dev *d, const char *name);
void rt_dev_close(struct rt_dev *d);

/* ------------------------------------------------------------- buffers */

struct rt_buf {
	uint8_t *p;
	size_t len;
	struct ibv_mr *mr;
};

void rt_buf_alloc(struct rt_buf *b, struct rt_dev *d, size_t len,
		  int access);
void rt_buf_free(struct rt_buf *b);
struct ibv_sge rt_sge(const struct rt_buf *b, size_t off, size_t len);

/* ------------------------------------------------------------ endpoints */

struct rt_ep {
	struct rt_dev *dev;
	struct ibv_cq *scq;
	struct ibv_cq *rcq;
	struct ibv_qp *qp;
	enum ibv_qp_type type;
	uint32_t psn;
	uint32_t max_inline;
};

struct rt_ep_opts {
	enum ibv_qp_type type;
	uint32_t max_send_wr;
	uint32_t max_recv_wr;
	struct ibv_comp_channel *chan;	/* both CQs on it, or NULL */
	void *scq_ctx;
	void *rcq_ctx;
	struct ibv_srq *srq;		/* receives from it, or NULL */
};

struct rt_rc_opts {
	uint8_t min_rnr_timer;		/* responder */
	uint8_t rnr_retry;		/* requester */
	uint8_t timeout;
	uint8_t retry_cnt;
	int access;
};

extern const struct rt_rc_opts rt_rc_default;

void rt_ep_create(struct rt_ep *ep, struct rt_dev *d,
		  const struct rt_ep_opts *o);
void rt_ep_destroy(struct rt_ep *ep);
uint8_t rt_rd_atom(const struct rt_dev *d);
void rt_ah_attr(struct ibv_ah_attr *ah, const union ibv_gid *dgid);
int rt_modify(struct rt_ep *ep, struct ibv_qp_attr *a, int mask);
void rt_post_ud(struct rt_ep *ep, uint64_t wr_id, struct ibv_sge *sg, int nsge,
		struct ibv_ah *ah, uint32_t qpn, uint32_t qkey);
void rt_ud_up(struct rt_ep *ep);
void rt_rc_init(struct rt_ep *ep, int access);
void rt_rc_rtr(struct rt_ep *ep, const struct rt_ep *peer,
	       const struct rt_rc_opts *o);
void rt_rc_rts(struct rt_ep *ep, const struct rt_rc_opts *o);
void rt_rc_connect(struct rt_ep *a, struct rt_ep *b,
		   const struct rt_rc_opts *o);
void rt_rc_pair(struct rt_ep *a, struct rt_dev *da, struct rt_ep *b,
		struct rt_dev *db, const struct rt_rc_opts *o);

/* ---------------------------------------------------------- work requests */

/* imm: immediate data, or for SEND_WITH_INV and LOCAL_INV the rkey; RDMA
 * opcodes take raddr/rkey, atomics too, with imm as compare/add. */
int rt_try_send(struct rt_ep *ep, uint64_t wr_id, enum ibv_wr_opcode op,
		struct ibv_sge *sg, int nsge, unsigned int flags, uint32_t imm,
		uint64_t raddr, uint32_t rkey);
void rt_post_send(struct rt_ep *ep, uint64_t wr_id, enum ibv_wr_opcode op,
		  struct ibv_sge *sg, int nsge, unsigned int flags,
		  uint32_t imm, uint64_t raddr, uint32_t rkey);
/*
 * One signaled atomic with one SGE: through ibv_post_send, or (ex)
 * through the extended QP API (ibv_wr_atomic_cmp_swp, _fetch_add).
 * cmp_add: the compare value of a CMP_AND_SWP, the addend of a
 * FETCH_AND_ADD.
 */
int rt_try_atomic(struct rt_ep *ep, bool ex, uint64_t wr_id,
		  enum ibv_wr_opcode op, struct ibv_sge *sg, uint64_t raddr,
		  uint32_t rkey, uint64_t cmp_add, uint64_t swap);
void rt_post_atomic(struct rt_ep *ep, bool ex, uint64_t wr_id,
		    enum ibv_wr_opcode op, struct ibv_sge *sg, uint64_t raddr,
		    uint32_t rkey, uint64_t cmp_add, uint64_t swap);
void rt_post_recv(struct rt_ep *ep, uint64_t wr_id, struct ibv_sge *sg,
		  int nsge);

/* ----------------------------------------------------------- completions */

const char *rt_wc_opcode_str(int op);
bool rt_poll_wc(struct ibv_cq *cq, struct ibv_wc *wc, double timeout_s);
void rt_wait_wc(struct ibv_cq *cq, struct ibv_wc *wc, const char *what);
struct ibv_wc rt_expect_wc(struct ibv_cq *cq, const char *what,
			   uint64_t wr_id, enum ibv_wc_status status,
			   int opcode);
void rt_expect_empty(struct ibv_cq *cq, unsigned int ms, const char *what);
void rt_expect_qp_state(struct rt_ep *ep, enum ibv_qp_state st,
			const char *what);

/* ----------------------------------------------------- completion channel */

bool rt_chan_readable(struct ibv_comp_channel *ch, int ms);
void rt_chan_expect_none(struct ibv_comp_channel *ch, int ms,
			 const char *what);
void rt_chan_expect_event(struct ibv_comp_channel *ch, struct ibv_cq *want,
			  void *want_ctx, const char *what);
void rt_arm(struct ibv_cq *cq, int solicited);
void rt_chan_send(struct rt_ep *a, struct rt_ep *b, struct rt_buf *sbuf,
		  struct rt_buf *rbuf, unsigned int flags, bool poll_recv,
		  uint64_t id);

/* ---------------------------------------------------------- async events */

bool rt_async_readable(struct rt_dev *d, int ms);
bool rt_port_event(struct rt_dev *d, struct ibv_async_event *ev);
/*
 * Wait (bounded) for the next event of d, skipping PORT_ACTIVE, and check
 * its type and the object it names; acked if `ack`.
 */
struct ibv_async_event rt_expect_async(struct rt_dev *d,
				       enum ibv_event_type type,
				       const void *obj, bool ack,
				       const char *what);
/* No event (but a PORT_ACTIVE) on d for ms milliseconds. */
void rt_expect_no_async(struct rt_dev *d, int ms, const char *what);
/* Open rocepmd0 and rocepmd1 and eat the PORT_ACTIVEs their links send. */
void rt_open2(struct rt_dev *d0, struct rt_dev *d1);
void rt_close2(struct rt_dev *d0, struct rt_dev *d1);

/* ------------------------------------------------------------ telemetry */

/*
 * The number `name` of the reply to telemetry command `cmd` (e.g.
 * "/rocepmd/qp,0,17"), over the DPDK telemetry socket at `sock`.
 */
uint64_t rt_telemetry_get(const char *sock, const char *cmd,
			  const char *name);
/*
 * A counter of device `dev` from /rocepmd/stats, over the DPDK telemetry
 * socket at `sock` (the engine's, in this process).
 */
uint64_t rt_telemetry_stat(const char *sock, unsigned int dev,
			   const char *name);
/*
 * A counter of device `dev` of the engine in this process, whose EAL file
 * prefix is rp_<rt_stat_prefix><case> (the test configurations'
 * --file-prefix=rp_@CASE@; rt_stat_prefix "" unless a program sets it).
 */
extern const char *rt_stat_prefix;
uint64_t rt_stat(unsigned int dev, const char *name);
/* The same engine's /rocepmd/qp figure `name` of QP `qpn` (rate, window). */
uint64_t rt_qp_stat(unsigned int dev, uint32_t qpn, const char *name);
/*
 * An engine lcore counter summed over the lcores of the engine in this
 * process (rp_lcore_stats_get(), looked up at run time: a plain verbs
 * program run by rocepmd-run links no engine); -1 without one.
 */
int64_t rt_lcore_counter(const char *name);

/* ------------------------------------------------------- loss counters */

/* The counters that prove loss recovery ran (engine names in rp_testlib.c). */
enum rt_loss_ctr {
	RT_L_RETX, RT_L_TIMEOUT, RT_L_PROBE, RT_L_NAK_SENT, RT_L_NAK_RCVD, RT_L_OOS,
	RT_L_DUP, RT_L_ICRC, RT_L_RNR_SENT, RT_L_RNR_RCVD,
	RT_L_F_DROP, RT_L_F_DUP, RT_L_F_CORRUPT, RT_L_F_REORDER,
	RT_L_F_DELAY, RT_L_RESTART, RT_L_NAK_ONE,
	RT_LOSS_MAX
};

#define RT_NEED(c)	(1u << (c))

struct rt_loss {
	uint64_t c[2][RT_LOSS_MAX];	/* rocepmd0, rocepmd1 */
};

/* Read (and print) the counters of rocepmd0 and rocepmd1. */
void rt_loss_read(struct rt_loss *l);
/* Check they agree across the two devices, and the `need` ones ran. */
void rt_loss_check(const struct rt_loss *l, uint32_t need);

#endif /* RP_TESTLIB_H */
