/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rocepmd-testpmd: shared declarations.
 *
 * Laid out as DPDK's app/test-pmd: rtp_main.c (testpmd.c: EAL, engine,
 * launch), rtp_params.c (parameters.c), rtp_cmdline.c (cmdline.c), one file
 * per traffic mode family (rtp_mode_*.c, the fwd engines: each holds its
 * traffic pattern) listed in one const table (rtp_mode.c), rtp_pattern.c
 * (patterns several modes share, phases, pacing), rtp_run.c (the driver of
 * a run: its threads), rtp_res.c (devices, PDs, MRs, CQs, QPs, posting),
 * rtp_oob.c (the two-process exchange), rtp_wait.c (completion modes),
 * rtp_counters.c (engine counters, clocks), rtp_report.c (figures; table,
 * JSON, CSV).
 */

#ifndef _RTP_H_
#define _RTP_H_

#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <infiniband/verbs.h>

#include "rocepmd.h"

#define RTP_MAX_QPS		64
#define RTP_MAX_IDLE_QPS	4096
#define RTP_MAX_DEPTH		1024
#define RTP_MAX_SIZE		(1u << 20)
#define RTP_MAX_SAMPLES		(1u << 22)	/* latency samples kept per run */
#define RTP_NAME		"rocepmd-testpmd"
#define RTP_SIGNAL_EVERY	16	/* ping-pong: one signaled send in N */
/*
 * Receives a streaming receiver keeps posted, per send WR in flight: the
 * sender gets a completion (and posts again) as soon as the peer's engine
 * takes a receive, before the receiving program reposts it, so a receive
 * queue of just the depth runs dry whenever that program is slower than
 * the engine, and every RNR NAK stalls the sender for the RNR timer
 * (perftest's receive depth, 512, is likewise four times its send depth).
 */
#define RTP_RX_PER_DEPTH	4u
#define RTP_WC_BURST		32	/* completions taken at once */

/* How a measuring thread waits for its completions (rtp_wait.c). */
enum rtp_wait_mode {
	RTP_WAIT_POLL = 0,	/* busy-poll the CQ */
	RTP_WAIT_EVENT,		/* block in ibv_get_cq_event */
	RTP_WAIT_EPOLL,		/* epoll_wait on the non-blocking channel fd */
	RTP_WAIT_HYBRID,	/* poll hybrid_us, then arm and block */
	RTP_WAIT_MAX,
};

/* Output format of the results (rtp_report.c). */
enum rtp_format {
	RTP_FMT_TABLE = 0,
	RTP_FMT_JSON,
	RTP_FMT_CSV,
};

/* What the next `start` runs: options and `set` commands write it. */
struct rtp_settings {
	uint32_t size;		/* message bytes */
	uint32_t depth;		/* WRs in flight per QP (bw modes) */
	uint32_t qps;
	uint32_t idle_qps;	/* more QPs per side, in RTS, never used */
	uint64_t iters;		/* measured messages (0: use duration) */
	double duration;	/* seconds, when iters == 0 */
	uint64_t warmup;	/* messages before the measurement */
	double rate;		/* offered messages/s, 0: as fast as possible */
	enum rtp_wait_mode wait;
	uint32_t hybrid_us;	/* RTP_WAIT_HYBRID: polling spell */
	double timeout;		/* seconds without progress before failing */
	/* CPUs of the measuring threads (--cpus-client/--cpus-server);
	 * not set: every online CPU, as any verbs program's threads */
	bool cpus_cli_set;
	bool cpus_srv_set;
	cpu_set_t cpus_cli;
	cpu_set_t cpus_srv;
};

/* Options of the command line (rtp_params.c). */
struct rtp_params {
	struct rtp_settings set;
	const char *mode;		/* run it and exit (batch) */
	const char *config;		/* --config FILE */
	const char *cmdline_file;
	bool interactive;
	bool raw;			/* measure the raw limit at start */
	bool raw_set;			/* --raw or --no-raw given */
	bool raw_only;			/* --raw-only: no engine after it */
	enum rp_idle_policy idle;
	bool idle_set;
	uint32_t idle_us;
	bool spin_nap;			/* --spin-nap: the engine key */
	uint32_t inline_us;		/* --inline-us: inline engine passes */
	bool inline_set;
	/* --cq-mod COUNT[,PERIOD_US]: ibv_modify_cq() on every run's CQs;
	 * 0,0: none */
	uint16_t cq_mod_count;
	uint16_t cq_mod_period;
	enum rtp_format format;
	const char *out;		/* --json/--csv FILE, "-" stdout */
	uint32_t stats_period;		/* seconds, 0: none */
	bool counters;			/* --counters: a COUNTERS line a run */
	bool server;			/* --server: serve remote clients */
	bool host;			/* --host: serve the devices */
	const char *host_socket;	/* --host=SOCKET, NULL: default */
	uint32_t host_mode;		/* --host-mode: socket permissions */
	int host_gid;			/* --host-group, -1: ours */
	const char *client;		/* --client HOST: the server's host */
	uint16_t oob_port;		/* TCP port of the exchange */
	uint32_t nb_ports;
	struct {
		char name[RP_ETHDEV_NAME_LEN];
		char ipv4[32];
		uint32_t mtu;
		uint32_t lcore;
		bool lcore_set;
		/* other KEY=VALUE: "KEY = VALUE" lines of its [port] section */
		char more[256];
	} port[RP_MAX_PORTS];
};

/* Counter snapshot: engine lcores and devices (rtp_counters.c); a
 * device had 75 counters when 64 here hid the last 11 from the reports. */
#define RTP_MAX_COUNTERS	128

/* The kernel's time accounting of each CPU (/proc/stat, in its ticks). */
#define RTP_CPUSTAT_MAX		64
struct rtp_cpustat {
	unsigned int nr;		/* CPUs read */
	uint64_t user[RTP_CPUSTAT_MAX];	/* user, nice */
	uint64_t kernel[RTP_CPUSTAT_MAX];	/* system, irq, softirq */
	uint64_t idle[RTP_CPUSTAT_MAX];	/* idle, iowait */
};

struct rtp_counters {
	uint64_t tsc;
	uint64_t eng_cpu_ns;		/* engine lcore threads' CPU time */
	bool has_eng_cpu;		/* (their threads found) */
	struct rtp_cpustat cpu;		/* every CPU's */
	bool has_cpu;
	unsigned int nb_lcores;
	uint64_t lc[RP_MAX_ENGINE_LCORES][RTP_MAX_COUNTERS];
	const char *lc_names[RTP_MAX_COUNTERS];
	unsigned int nb_lc_counters;
	unsigned int nb_devs;
	uint64_t dev[RP_MAX_PORTS][RTP_MAX_COUNTERS];
	const char *dev_names[RTP_MAX_COUNTERS];
	unsigned int nb_dev_counters;
};

/* Two processes: what the server counted, sent in its rtp_oob_done. */
struct rtp_srv_figures {
	uint64_t received;		/* messages taken, warm-up included */
	uint64_t bytes;			/* their payload bytes, warm-up included */
	uint64_t cpu_ns;		/* the server thread's CPU time */
	uint64_t busy_cycles;		/* its engine lcores, during the run */
	uint64_t idle_cycles;
	uint64_t retransmits;		/* its devices, during the run */
	uint64_t drops;
	uint64_t wc_errors;
	/* its CPUs' time (rtp_result's cpu_busy, cpu_kernel), if counted */
	double cpu_busy, cpu_kernel;
	uint64_t has_cpu;
};

/* Latency quantiles, us (rtp_lat_fill). */
struct rtp_lat {
	double min, p50, p99, p999, max;
};

/* Figures of one run (rtp_report.c prints them). */
struct rtp_result {
	char mode[32];
	struct rtp_settings set;
	char idle[24];
	bool valid;
	int error;			/* 0, or the failure's negative errno */
	char error_msg[128];
	uint64_t msgs;			/* measured messages completed */
	uint64_t posted;		/* measured messages posted */
	uint64_t received;		/* messages the receiver took (send modes) */
	uint64_t bytes;
	double seconds;
	struct rtp_lat lat;		/* us */
	bool has_lat;
	double msg_rate;		/* messages/s */
	double gbps;			/* payload Gbit/s */
	double cpu_us_per_msg;		/* application threads */
	double eng_cpu_us_per_msg;	/* this process's engine lcores */
	bool has_eng_cpu;
	/* the CPUs of the run's threads and engine lcores: share of their
	 * time busy, share of that in the kernel (rtp_cpustat.c) */
	double cpu_busy, cpu_kernel;
	bool has_cpu;
	double engine_busy;		/* share of the engine lcores' cycles */
	double signals_per_msg;		/* doorbell eventfd signals */
	double wakeups_per_msg;		/* engine wake-ups from blocking */
	double cqes_per_poll;
	double events_per_msg;		/* CQ events the app took */
	uint64_t retransmits;
	uint64_t drops;			/* tx_dropped + timeouts + no_mbuf */
	uint64_t wc_errors;
	double lat_x_raw;		/* median / raw median (0: no raw) */
	double bw_of_raw;		/* msg rate / raw msg rate (0: no raw) */
	bool has_srv;			/* two processes: the server's figures */
	uint64_t srv_received;		/* measured messages it took */
	uint64_t srv_bytes;
	double srv_cpu_us_per_msg;
	double srv_engine_busy;
	uint64_t srv_retransmits;
	uint64_t srv_drops;
	uint64_t srv_wc_errors;
	double srv_cpu_busy, srv_cpu_kernel;	/* its CPUs', if counted */
	bool srv_has_cpu;
	/* where the threads ran: "cli=0,srv=1,eng=1" (their CPU sets) */
	char placement[128];
	bool cpu_over;			/* more spinners than their CPUs */
};

/* One end of a connection: what the peer needs to reach its QPs. */
struct rtp_ep_info {
	uint32_t qpn;
	uint32_t psn;
	uint32_t rkey;
	uint32_t pad;
	uint64_t addr;
	union ibv_gid gid;
};

/* Per-thread completion-wait state and counters (rtp_wait.c). */
struct rtp_waiter {
	enum rtp_wait_mode mode;
	uint32_t hybrid_us;
	struct ibv_cq *cq;
	struct ibv_comp_channel *ch;
	int epfd;
	bool armed;
	uint64_t polls;
	uint64_t cqes;
	uint64_t events;
	uint64_t unacked;
};

/*
 * One end (rtp_res.c): a device, its PD, one MR over a buffer, one CQ,
 * the QPs.
 */
struct rtp_side {
	unsigned int dev;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_comp_channel *ch;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	uint8_t *buf;
	size_t buf_len;
	size_t slot;			/* bytes per QP in buf */
	uint32_t nb_qps;
	struct ibv_qp *qp[RTP_MAX_QPS];
	struct ibv_qp **idle;		/* idle_qps of them */
	uint32_t nb_idle;
	struct rtp_ep_info local[RTP_MAX_QPS];
	struct rtp_ep_info remote[RTP_MAX_QPS];
	struct rtp_waiter w;
	uint64_t cpu_ns;		/* measuring thread's CPU time */
	uint64_t done;			/* messages this side completed */
	/* atomic_lat: the value the peer's counter of each QP holds next */
	uint64_t atomics[RTP_MAX_QPS];
	uint64_t wc_errors;
	volatile bool *stop;		/* the run is over: flushes expected */
};

struct rtp_run;

/* A traffic mode: one entry of rtp_modes[] (rtp_mode.c). */
struct rtp_mode {
	const char *name;
	const char *help;
	const char *unsupported;	/* NULL, or why it cannot run */
	/* latency: ping-pong, one message at a time; else streaming */
	bool latency;
	/* reported latency: the round trip divided by this (1 or 2) */
	unsigned int lat_div;
	/* the server side takes completions (else it only waits) */
	bool server_active;
	/* per QP: WRs the server keeps posted, 0: none */
	bool server_recvs;
	/* the mode opens both ends itself (client only, one process) */
	bool own_resources;
	/* the message whose frames the raw yardstick sends (rp_msg_shape) */
	enum rp_msg_kind kind;
	int (*client)(struct rtp_run *run);
	int (*server)(struct rtp_run *run);
	/*
	 * own_resources modes in two processes: the server's end, opened
	 * from the client's run->srv.remote[0] (it fills run->srv.local[0])
	 * before the server answers the hello, closed after the run.
	 */
	int (*remote_open)(struct rtp_run *run);
	void (*remote_close)(struct rtp_run *run);
};

/* The run in progress (rtp_run.c). */
struct rtp_run {
	const struct rtp_mode *mode;
	struct rtp_settings set;
	struct rtp_side cli;
	struct rtp_side srv;
	volatile bool stop;		/* server: the client is done */
	volatile bool abort;		/* `stop` command, or a failure */
	uint64_t *samples;		/* latency samples, TSC ticks */
	uint64_t nb_samples;
	uint64_t posted;
	uint64_t received;
	uint64_t t_start, t_end;	/* TSC of the measured phase */
	struct rtp_counters c0, c1;	/* engine counters at both ends */
	int srv_err;
	char err[128];
	unsigned int lat_div;		/* 0: the mode's */
	int oob;			/* two processes: the exchange, or -1 */
	bool hello_ok;			/* the server took our hello */
	void *priv;			/* own_resources modes: their state */
	struct rtp_srv_figures srv_fig;	/* what the server counted */
	cpu_set_t cli_cpus;		/* the threads' affinity, as run */
	cpu_set_t srv_cpus;
};

/* Out-of-band messages of the two-process topology (rtp_oob.c). */
#define RTP_OOB_MAGIC		0x31505452u	/* "RTP1" */
#define RTP_OOB_PORT		18515		/* perftest's */
struct rtp_oob_hello {		/* client -> server: the run */
	uint32_t magic;
	char mode[32];
	uint32_t size, depth, qps, wait, hybrid_us;
	double timeout;
	struct rtp_ep_info ep[RTP_MAX_QPS];
};
struct rtp_oob_reply {		/* server -> client: its QPs, ready */
	uint32_t magic;
	int32_t status;
	char msg[128];
	struct rtp_ep_info ep[RTP_MAX_QPS];
};
struct rtp_oob_done {		/* both ways at the end */
	uint32_t magic;
	int32_t status;
	struct rtp_srv_figures fig;	/* server -> client */
};

/* rtp_mode.c */
extern const struct rtp_mode * const rtp_modes[];
const struct rtp_mode *rtp_mode_find(const char *name);
void rtp_mode_list(FILE *f);
extern const struct rtp_mode rtp_mode_send_lat, rtp_mode_send_bw,
	rtp_mode_write_lat, rtp_mode_write_bw, rtp_mode_read_lat,
	rtp_mode_read_bw, rtp_mode_atomic_lat, rtp_mode_tag_eager,
	rtp_mode_tag_rndv;

/* rtp_params.c */
void rtp_settings_default(struct rtp_settings *s);
int rtp_params_parse(int argc, char **argv, struct rtp_params *p);
int rtp_params_config(const struct rtp_params *p, struct rp_config *cfg,
		      unsigned int main_lcore, int eal_argc, char **eal_argv);
int rtp_setting_set(struct rtp_settings *s, const char *name,
		    const char *val);
void rtp_usage(FILE *f);
const char *rtp_wait_name(enum rtp_wait_mode m);
int rtp_wait_parse(const char *s, enum rtp_wait_mode *m);
int rtp_idle_parse(const char *s, enum rp_idle_policy *idle);
int rtp_u64_parse(const char *s, uint64_t min, uint64_t max, uint64_t *v);
int rtp_double_parse(const char *s, double min, double max, double *v);
int rtp_cpus_parse(const char *s, cpu_set_t *set);
void rtp_cpus_fmt(const cpu_set_t *set, char *buf, size_t len);

/* rtp_wait.c */
int rtp_waiter_init(struct rtp_waiter *w, struct rtp_side *s,
		    enum rtp_wait_mode mode, uint32_t hybrid_us);
void rtp_waiter_fini(struct rtp_waiter *w);
/* Up to n completions, at least one; 0 when stop/abort was raised, or a
 * negative errno (-ETIMEDOUT). */
int rtp_wait_cq(struct rtp_waiter *w, struct ibv_wc *wc, int n,
		const volatile bool *abort, double timeout);

/* rtp_oob.c */
int rtp_oob_listen(uint16_t port);
int rtp_oob_accept(int lfd);
int rtp_oob_connect(const char *host, uint16_t port, double timeout);
int rtp_oob_send(int fd, const void *buf, size_t len);
int rtp_oob_recv(int fd, void *buf, size_t len, double timeout);
int rtp_oob_hello_check(struct rtp_oob_hello *h, const struct rtp_mode **mode,
			struct rtp_settings *set, char *err, size_t len);
int rtp_remote_hello(struct rtp_run *run);
int rtp_remote_done(struct rtp_run *run, int status);
int rtp_serve_one(int fd, const volatile bool *quit);

/* rtp_run.c */
int rtp_run(const struct rtp_mode *mode, const struct rtp_settings *set,
	    struct rtp_result *res);
void rtp_run_abort(void);
int rtp_show_qps(FILE *f);
int rtp_fail(struct rtp_run *run, int err, const char *what);
int rtp_fail_fmt(struct rtp_run *run, int err, const char *fmt,
		 const char *what);
int rtp_server_start(struct rtp_run *run, pthread_t *t);

/* rtp_res.c */
int rtp_side_open(struct rtp_side *s, unsigned int dev,
		  const struct rtp_settings *set, struct rtp_run *run);
int rtp_qp_connect(struct ibv_context *ctx, struct ibv_qp *qp,
		   const struct rtp_ep_info *remote, uint32_t sq_psn);
int rtp_side_connect(struct rtp_side *s, struct rtp_run *run);
void rtp_side_flush(struct rtp_side *s);
void rtp_side_close(struct rtp_side *s);
int rtp_post(struct rtp_side *s, uint32_t q, enum ibv_wr_opcode op,
	     uint32_t size, uint64_t wr_id, bool signaled, uint32_t imm);
int rtp_post_recv(struct rtp_side *s, uint32_t q, uint32_t size,
		  uint64_t wr_id);
int rtp_recvs_post_all(struct rtp_side *s, struct rtp_run *run, uint32_t n);
uint32_t rtp_wc_qp(const struct rtp_side *s, const struct ibv_wc *wc);
int rtp_wc_check(struct rtp_side *s, const struct ibv_wc *wc,
		 struct rtp_run *run);
void rtp_side_show(FILE *f, const char *name, const struct rtp_side *s);

/* rtp_pattern.c */
/* A one-sided latency mode's look at completed WR i: 0, or the failure. */
typedef int (*rtp_check_t)(struct rtp_run *run, uint64_t i);
uint64_t rtp_measure_begin(struct rtp_run *run);
void rtp_measure_end(struct rtp_run *run);
void rtp_sample(struct rtp_run *run, uint64_t v);
int rtp_pingpong_client(struct rtp_run *run, enum ibv_wr_opcode op);
int rtp_pingpong_server(struct rtp_run *run, enum ibv_wr_opcode op);
int rtp_onesided_lat_client(struct rtp_run *run, enum ibv_wr_opcode op,
			    rtp_check_t check);
int rtp_stream_client(struct rtp_run *run, enum ibv_wr_opcode op);
int rtp_passive_server(struct rtp_run *run);

/* rtp_cpustat.c */
int rtp_cpustat_snap(struct rtp_cpustat *s);
bool rtp_cpustat_share(const struct rtp_cpustat *a, const struct rtp_cpustat *b,
		       const cpu_set_t *cpus, double *busy, double *kernel);

/* rtp_counters.c */
double rtp_tsc_us(uint64_t ticks);
uint64_t rtp_thread_cpu_ns(void);
void rtp_counters_snap(struct rtp_counters *c);
uint64_t rtp_counter(const struct rtp_counters *c, bool lcore,
		     const char *name);

/* rtp_mode_raw.c: plain UDP frames on the ports, before the engine */
struct rtp_raw_result {
	bool valid;
	uint32_t size;
	struct rtp_lat pp;		/* one way, us */
	double pp_msgs;			/* ping-pong iterations */
	/* raw_pp2: the ping-pong across two CPUs (rtp_mode_raw.c), one way,
	 * us; the two threads' CPUs */
	bool x_valid;
	struct rtp_lat x;
	double x_msgs;
	char x_cpus[64];
	double msg_rate;		/* streaming */
	double gbps;
	uint64_t frames_per_msg;
	uint64_t lost;
	/* two processes: the stream's messages sent, and counted by the
	 * server's port; frames the server said it counted */
	bool two_proc;
	uint64_t stream_sent, stream_recv, peer_frames;
	/* the stream's lcore CPUs, as rtp_result's cpu_busy, cpu_kernel */
	double cpu_busy, cpu_kernel;
	bool has_cpu;
};
extern struct rtp_raw_result rtp_raw;
/* No engine after the raw mode (--raw-only): an af_xdp port may serve it. */
extern bool rtp_raw_last;
int rtp_raw_measure(const struct rp_config *cfg, const struct rtp_settings *set,
		    enum rp_msg_kind kind);
int rtp_raw_serve(const struct rp_config *cfg, int lfd,
		  const volatile bool *quit);
int rtp_raw_client(const struct rp_config *cfg, const struct rtp_settings *set,
		   enum rp_msg_kind kind, const char *host, uint16_t port);

/* rtp_report.c */
double rtp_quantile(uint64_t *v, uint64_t n, double q);
void rtp_lat_fill(struct rtp_lat *l, uint64_t *v, uint64_t n, double div);
void rtp_figures(struct rtp_run *run, const struct rtp_counters *c0,
		 const struct rtp_counters *c1, struct rtp_result *res);
struct rtp_srv_figures rtp_figures_srv(struct rtp_run *run);
void rtp_placement(const struct rtp_run *run, struct rtp_result *res);
void rtp_report(FILE *f, enum rtp_format fmt, const struct rtp_result *r);
void rtp_report_raw(FILE *f, enum rtp_format fmt);
void rtp_report_header(FILE *f, enum rtp_format fmt);
void rtp_report_footer(FILE *f, enum rtp_format fmt);
void rtp_stats_line(FILE *f, const struct rtp_counters *prev,
		    const struct rtp_counters *cur);
void rtp_counters_line(FILE *f, const char *who,
		       const struct rtp_counters *c0,
		       const struct rtp_counters *c1);

/* rtp_main.c: state shared with the commands */
struct rtp_state {
	struct rtp_params params;
	struct rp_config cfg;
	enum rp_idle_policy idle;
	struct rtp_result last;
	unsigned int nb_results;
	struct rtp_result results[64];
	FILE *out;
	int status;			/* exit status so far */
	bool quit;
};
extern struct rtp_state rtp;
int rtp_start(const char *mode);
int rtp_start_mode(const char *name, bool async);
int rtp_stop(void);
bool rtp_running(void);
int rtp_set_idle(enum rp_idle_policy idle);
void rtp_unpin_thread(void);
void rtp_cpus_all(cpu_set_t *set);
bool rtp_inline_on(void);

/* rtp_cmdline.c */
int rtp_cmdline_interactive(void);
int rtp_cmdline_file(const char *path);
void rtp_show(FILE *f, const char *what, bool stats);

#endif /* _RTP_H_ */
