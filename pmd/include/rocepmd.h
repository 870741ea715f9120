/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * rocepmd engine API, used in-process by the verbs shim and rocepmd-testpmd.
 *
 * The engine owns every transport object; callers reach them only through
 * the shared device region (rp_abi.h) and control calls executed by the
 * engine lcore that owns the device.
 */

#ifndef _ROCEPMD_H_
#define _ROCEPMD_H_

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rp_abi.h"

#ifdef __cplusplus
extern "C" {
#endif

#define RP_MAX_PORTS		8
#define RP_MAX_ENGINE_LCORES	8
#define RP_EAL_MAX_ARGS		128
#define RP_CFG_STR		256
#define RP_ETHDEV_NAME_LEN	64	/**< RTE_ETH_NAME_MAX_LEN */
#define RP_MAX_IPV6		4	/**< configured IPv6 addresses per port */
static_assert(2 + RP_MAX_IPV6 <= RP_GID_TBL_LEN,
	      "GID table: IPv4, link-local and the configured IPv6 addresses");

/** Engine idle policy of an engine lcore. */
enum rp_idle_policy {
	RP_IDLE_BUSY = 0,	/**< always poll */
	RP_IDLE_YIELD,		/**< poll, yield the CPU after an idle spell */
	RP_IDLE_SLEEP,		/**< poll, sleep sleep_us after an idle spell */
	/**
	 * poll, then after an idle spell block until a doorbell, a receive
	 * interrupt, a timer or wake_us (need_wakeup handshake)
	 */
	RP_IDLE_ADAPTIVE,
	RP_IDLE_MAX,		/**< number of policies, not a policy */
};

/** Which payloads go out without a copy (port key tx_zero_copy). */
enum rp_tx_zc {
	RP_TX_ZC_OFF = 0,	/**< every payload copied into its frame */
	/**
	 * RC requests' payloads (SEND, WRITE) when first sent: their
	 * memory must not change while posted; a packet sent again is
	 * copied.  And READ responses to a requester that takes selective
	 * NAKs (a rocepmd peer with selective_retx), which asks again for
	 * one that failed its ICRC alone
	 */
	RP_TX_ZC_REQUESTS,
	/**
	 * READ responses' to every requester, whose memory its program
	 * may write meanwhile: such a response fails its ICRC and is
	 * asked again, and a response asked again is copied
	 */
	RP_TX_ZC_ON,
	RP_TX_ZC_MAX,		/**< number of settings, not a setting */
};

/** Where the port computes and checks ICRCs (port key icrc). */
enum rp_icrc_mode {
	RP_ICRC_ON = 0,		/**< on every frame, as RoCEv2 has it */
	/**
	 * Not on a memory link (memif, ring), toward a peer whose frames
	 * say it does the same (RP_BTH_NC), and never on a port that
	 * corrupts frames (fault_*_corrupt): frames there are copied
	 * between processes' memory and cannot be damaged on the way
	 */
	RP_ICRC_AUTO,
	RP_ICRC_MAX,		/**< number of settings, not a setting */
};

/**
 * Name of an idle policy, as the configuration key ``idle`` spells it.
 * @return "busy", "yield", "sleep" or "adaptive"; "invalid" for a value
 *	that is not a policy (never NULL)
 */
const char *rp_idle_policy_name(enum rp_idle_policy idle);

/** Limits of the fault keys fault_burst and fault_reorder_depth. */
#define RP_FAULT_BURST_MAX	64
#define RP_FAULT_DEPTH_MAX	16

/** Fault rates of one direction of a port (tests), in per mille of frames. */
struct rp_fault_rates {
	uint32_t drop;		/**< dropped (in bursts of rp_fault_cfg.burst) */
	uint32_t dup;		/**< passed on twice */
	uint32_t reorder;	/**< held back behind reorder_depth later frames */
	uint32_t corrupt;	/**< one byte flipped: the ICRC check drops it */
	uint32_t delay;		/**< held back delay_us microseconds */
	uint32_t ce;		/**< ECN-capable ones marked CE, as a switch
				 *   whose queue is long does */
};

/** Whether any fault of r is on. */
static inline bool
rp_fault_rates_on(const struct rp_fault_rates *r)
{
	return r->drop || r->dup || r->reorder || r->corrupt || r->delay ||
		r->ce;
}

/**
 * Fault injection (tests): on transmitted and on received frames, decided
 * per frame from (seed, direction, frame number) alone, so a plan replays
 * whatever the timing.
 */
struct rp_fault_cfg {
	struct rp_fault_rates tx;
	struct rp_fault_rates rx;
	uint32_t burst;		/**< frames per drop burst, 1: independent */
	uint32_t reorder_depth;	/**< later frames a reordered one waits for */
	uint32_t delay_us;	/**< hold time of a delayed frame */
	uint32_t seed;
};

/**
 * DCQCN's reaction point (guides/congestion): how a QP's rate follows the
 * CNPs it receives.  Fractions are Q10 (1024 = 1).
 */
struct rp_dcqcn_cfg {
	bool on;		/**< CNPs cut the rate */
	uint32_t g;		/**< alpha's memory, Q10 (dce_tcp_g) */
	uint32_t alpha_us;	/**< alpha update period (dce_tcp_rtt) */
	uint32_t initial_alpha;	/**< alpha at the first CNP, Q10 */
	uint32_t min_dec_fac;	/**< a cut keeps this % of the rate at least */
	uint32_t min_rate_mbps;	/**< no rate below */
	uint32_t reduce_us;	/**< one cut per this period at most */
	uint32_t time_reset_us;	/**< rate increase timer */
	uint32_t byte_reset;	/**< rate increase byte counter */
	uint32_t threshold;	/**< increase events before additive (F) */
	uint32_t ai_mbps;	/**< additive increase step */
	uint32_t hai_mbps;	/**< hyper increase step */
};

/** mtu = auto: the largest IB MTU the port carries (struct rp_port_cfg). */
#define RP_MTU_AUTO	0u

/** One configured port: one rocepmd device. */
struct rp_port_cfg {
	char device[RP_CFG_STR];	/**< vdev string or PCI address */
	/** kernel interface the port is bound to (key netdev), or "" */
	char netdev[16];
	bool netdev_xdp;		/**< bound with XDP steering */
	uint32_t ipv4;			/**< network byte order */
	uint32_t prefix_len;
	/** IPv6 addresses (key ipv6), GID indexes 2.. in this order */
	uint8_t ipv6[RP_MAX_IPV6][16];
	uint8_t ipv6_plen[RP_MAX_IPV6];	/**< their prefix lengths */
	uint32_t nr_ipv6;
	uint8_t mac[6];
	bool mac_set;			/**< false: use the port's MAC */
	/**
	 * IB MTU: 256, 512, 1024, 2048, 4096, or RP_MTU_AUTO: the largest
	 * the port carries, found when it starts (rxe's rule: the largest
	 * whose frames fit its netdev's MTU)
	 */
	uint32_t mtu;
	/** with RP_MTU_AUTO: the largest the port's configuration allows
	 * (net_af_packet's framesz), or 0 for no limit of its own */
	uint32_t mtu_max;
	uint32_t lcore;			/**< engine lcore serving the port */
	/**
	 * key lcore as a list: the lcores serving the port, each with its
	 * own queue pair (lcores[0] == lcore; 1 lcore unless a list)
	 */
	uint32_t lcores[RP_MAX_ENGINE_LCORES];
	uint32_t nr_lcores;
	uint32_t region_mb;		/**< shared region size in MiB */
	/**
	 * IPv4 TTL / IPv6 hop limit of unicast packets (1..255): the route's
	 * hop limit, which Linux puts in a RoCE AV in place of the
	 * application's
	 */
	uint32_t hop_limit;
	/**
	 * ARP entries are trusted this long after the peer last said its
	 * MAC; an entry in use past it is confirmed again (Linux's
	 * base_reachable_time_ms)
	 */
	uint32_t arp_reachable_ms;
	/**
	 * The least silence, in microseconds, before an RC requester
	 * resends early (a probe); a peer answering later than its round
	 * trips (its engine lcore off its CPU) draws spurious probes below it
	 */
	uint32_t probe_min_us;
	/**
	 * The same toward a peer that keeps what follows a gap
	 * (selective_retx) while the path loses packets: such a probe
	 * resends a packet or two and cuts nothing; the stall's last probe,
	 * which goes back N, waits probe_min_us
	 */
	uint32_t probe_sr_min_us;
	/**
	 * Adaptive event moderation, in microseconds (0: off): an armed CQ
	 * whose events have carried many CQEs each (a stream) holds its
	 * next event at most this long, or until it holds as many CQEs as
	 * its QP has work outstanding (half the CQ at most); a ping-pong's,
	 * a solicited or an error CQE's event is never held, and
	 * ibv_modify_cq's moderation replaces it
	 */
	uint32_t cq_adapt_us;
	/**
	 * Packets the device's RC QPs (of one shard) may have in flight
	 * together when one of them starts a message or a READ request: the
	 * peers' queues and the port's one RX ring (READ responses come at
	 * line rate) hold only so many, and each QP's window is its own
	 */
	uint32_t flight_window;
	/**
	 * RoCEv2 packets sent ECN-capable (ECT(0)), so that a congested
	 * switch marks them CE rather than dropping them
	 */
	bool ecn;
	/**
	 * The notification point: a QP that receives CE-marked packets
	 * answers with at most one CNP per this many microseconds
	 */
	uint32_t cnp_interval_us;
	/**
	 * Payloads sent from the registered memory they lie in, without a
	 * copy into the frame, on ports whose PMD copies frames as it sends
	 * them (memif, af_packet): which ones (enum rp_tx_zc)
	 */
	enum rp_tx_zc tx_zero_copy;
	/** ICRCs not computed on a memory link between rocepmd ends */
	enum rp_icrc_mode icrc;
	/**
	 * ... for a packet of at least this many bytes of payload: below,
	 * a copy costs less than the two more mbufs of such a frame
	 */
	uint32_t tx_zero_copy_min;
	/**
	 * Selective retransmission with rocepmd peers: RC requests say the
	 * requester takes selective NAKs, and the responder keeps what
	 * arrives after a gap from such a peer (pmd/transport/rp_sr.c)
	 */
	bool selective_retx;
	struct rp_dcqcn_cfg dcqcn;	/**< the reaction point */
	struct rp_fault_cfg fault;	/**< injected faults (tests) */
	bool is_pci;			/**< device is a PCI address, else a vdev */
	/**
	 * Name to look the port up with rte_eth_dev_get_port_by_name(): the
	 * vdev name (device up to the first ','), or the PCI address in full
	 * lower-case DDDD:BB:DD.F form.
	 */
	char ethdev_name[RP_ETHDEV_NAME_LEN];
};

/**
 * What an attached process holds on a device, limited by the host's
 * [host] section (rp_serve_quota.c); the order of rp_service.h's enum srv_kind.
 */
enum rp_quota_kind {
	RP_QUOTA_QP = 0,
	RP_QUOTA_SRQ,
	RP_QUOTA_MW,
	RP_QUOTA_MR,
	RP_QUOTA_AH,
	RP_QUOTA_CQ,
	RP_QUOTA_CHAN,
	RP_QUOTA_ASYNC,
	RP_QUOTA_PD,
	RP_QUOTA_MR_PAGES,	/**< 4 KiB pages its MRs span */
	RP_QUOTA_KINDS,
};

/** [host]: what attached processes may take (0: no limit). */
struct rp_host_cfg {
	uint32_t hello_ms;	/**< a connection's time to say HELLO */
	uint32_t max_pending;	/**< connections not welcomed yet */
	uint32_t uid_pending;	/**< the same, per uid */
	uint32_t uid_procs;	/**< processes attached per uid */
	uint32_t proc[RP_QUOTA_KINDS];	/**< per process and device */
	uint32_t uid[RP_QUOTA_KINDS];	/**< per uid and device */
};

/** A parsed configuration file (see doc/guides/config.rst). */
struct rp_config {
	char path[PATH_MAX];
	char eal_args[1024];		/**< [eal] args, verbatim */
	uint32_t log_level;		/**< [eal] log_level: RTE_LOG_*, 0 notice */
	uint32_t main_lcore;
	uint32_t nb_lcores;
	uint32_t lcores[RP_MAX_ENGINE_LCORES];	/**< engine lcores */
	enum rp_idle_policy idle;
	uint32_t idle_us;		/**< idle time before yielding or sleeping */
	uint32_t sleep_us;		/**< RP_IDLE_SLEEP: length of one nap */
	uint32_t wake_us;		/**< RP_IDLE_ADAPTIVE: longest block */
	/** RP_IDLE_ADAPTIVE: naps of sleep_us in place of the spin where
	 * they cost no work (judged by epochs of completions) */
	bool spin_nap;
	/**
	 * Inline mode when not 0: application threads run engine passes as
	 * they poll a CQ (rp_engine_assist), and the lcore stands aside until
	 * none has for this long.  RP_INLINE_AUTO: decided at start from the CPUs
	 * (rp_engine_inline())
	 */
	uint32_t inline_us;
	uint32_t nb_ports;
	struct rp_port_cfg port[RP_MAX_PORTS];
	struct rp_host_cfg host;	/**< [host]: the attach server's limits */
};

/* The RC messages whose frames rp_msg_shape() tells (READ: its responses). */
enum rp_msg_kind {
	RP_MSG_SEND,
	RP_MSG_SEND_IMM,
	RP_MSG_WRITE,
	RP_MSG_WRITE_IMM,
	RP_MSG_READ,
	RP_MSG_ATOMIC,		/* its request (FETCH_ADD), size ignored */
	RP_MSG_KINDS,
};

/* The frames of one message on the wire, Ethernet without FCS. */
struct rp_msg_shape {
	uint32_t frames;
	uint32_t first;		/* length of the first frame (the only one) */
	uint32_t middle;	/* of each between first and last */
	uint32_t last;		/* of the last (first, for a single frame) */
	uint64_t bytes;		/* all of them */
};

/**
 * The frames the engine sends for one RC message of `size` bytes at IB MTU
 * `mtu` over IPv4: BTH, extended headers, padding and ICRC from the wire
 * layer's opcode table.  A yardstick of raw frames sends frames of these
 * lengths, so that raw and RoCE move the same bytes.
 *
 * @return 0, or -EINVAL (unknown kind, an mtu that is no IB MTU)
 */
int rp_msg_shape(enum rp_msg_kind kind, uint32_t size, uint32_t mtu,
		 struct rp_msg_shape *shape);

/**
 * Load and validate a configuration file.
 *
 * @param path  INI file, read with rte_cfgfile
 * @param cfg   filled on success
 * @param err   on failure, "FILE: [section] key: reason"
 * @param errlen size of err
 * @return 0, or a negative errno
 */
int rp_cfg_load(const char *path, struct rp_config *cfg, char *err,
		size_t errlen);

/**
 * Build the EAL argument vector for a configuration: prog, the [eal] args,
 * then, unless the [eal] args already hold them, "-l main,lcores
 * --main-lcore main", "--vdev dev" or "-a pci" per port (and --no-pci when
 * all are vdevs), "--no-huge -m 512" when the kernel has no free huge page,
 * --in-memory (or --no-shconf with --no-huge, which 22.11 cannot combine
 * with --in-memory) and --file-prefix=rocepmd-<pid>; last, the --log-level
 * options of [eal] log_level, then the [eal] args' own --log-level options
 * again (so that they win, see rp_cfg.c).  argv[argc] is NULL.
 *
 * @param storage buffer the argument strings are written into
 * @return argc, or -E2BIG (max_args too small), -ENOSPC (storage too
 *	small), -EINVAL
 */
int rp_cfg_eal_argv(const struct rp_config *cfg, const char *prog,
		    char **argv, int max_args, char *storage, size_t storage_len);

/**
 * Claim, for this process, every port of a configuration that reaches
 * something of the host: a kernel interface (a vdev with ``iface=``, keyed
 * by network namespace and interface index) or a PCI device.  Ports inside
 * the process (net_ring, memif) are not claimed.  A claim is a lock file
 * in $ROCEPMD_LOCK_DIR, else /run/rocepmd/ports, locked for as long as the
 * process lives (see doc/guides/verbs_apps.rst).  No EAL needed: call it
 * before rte_eal_init() opens the ports.
 *
 * @param err	on failure, a message naming the port, and for -EBUSY the
 *		PID and program name of the owner
 * @return 0; -EBUSY when another process owns a port (then nothing is
 *	claimed); another negative errno when a port cannot be claimed
 */
int rp_port_lock(const struct rp_config *cfg, char *err, size_t errlen);

/** Give up the claims of rp_port_lock() (in the process that made them). */
void rp_port_unlock(void);

/**
 * Whether another process owns a port of a configuration, without
 * claiming anything (for rocepmd-run, before it runs the program).
 * @return 0 (all free, or not claimable), or -EBUSY with err as for
 *	rp_port_lock()
 */
int rp_port_lock_check(const struct rp_config *cfg, char *err,
		       size_t errlen);

/**
 * Create the devices of a configuration and launch the engine lcores.
 * rte_eal_init() must have succeeded.
 * @return 0, or a negative errno
 */
int rp_engine_start(const struct rp_config *cfg);

/** Stop the engine lcores and free the devices. */
void rp_engine_stop(void);

struct rte_mempool;

/**
 * A pool of `nb` mbufs for frames of up to `frame_max` bytes that DPDK
 * port `port_id` takes on its queues, as the engine makes its own: on
 * af_xdp, whose PMD registers the pool's memory as its umem, the objects
 * back to back in one piece of memory with XDP's headroom.  For a program
 * that drives the port itself before the engine (rocepmd-testpmd's raw
 * mode).
 * @return the pool, or NULL with rte_errno set
 */
struct rte_mempool *rp_port_pool(const char *name, uint16_t port_id,
				 uint32_t nb, uint32_t frame_max);

/**
 * The IB MTU a configured port has: its mtu, or with mtu = auto what the
 * port carries, found as the engine finds it when it starts.  After
 * rte_eal_init(), before or after the engine; for a program that drives
 * the port itself (rocepmd-testpmd's raw mode, which shapes its frames as
 * the run's RoCE packets).
 * @return the IB MTU, or 1024 if the port is not found
 */
uint32_t rp_port_mtu(const struct rp_port_cfg *pc);

/**
 * Change the idle policy of every engine lcore while it runs; it applies
 * from the lcore's next pass.  RX interrupts are armed only when the engine
 * started with "adaptive": an lcore made adaptive later wakes on doorbells
 * and timers.
 * @return 0, or -EINVAL for a value that is not a policy
 */
int rp_engine_set_idle(enum rp_idle_policy idle);

/**
 * Inline mode (configuration key inline_us): run one engine pass over the
 * devices of the lcore that serves device `dev` in the calling thread,
 * unless another thread runs one.  For a thread that polls a CQ of the
 * device and found it empty: on a machine with fewer CPUs than polling
 * threads, the pass runs where the CPU already is.  Any thread may call
 * it; it never blocks.
 * @return true if a pass ran (look at the CQ again); false if the engine
 *	is not in inline mode or another thread was running a pass
 */
bool rp_engine_assist(unsigned int dev);

/** inline_us = auto: the engine decides (rp_engine_inline()). */
#define RP_INLINE_AUTO		UINT32_MAX
/**
 * The stand-aside that auto chooses when it turns inline passes on.  The
 * lcore looks this long after a program's last poll whether it still polls
 * (then less often, up to every 600 us, while it does), and on a CPU it
 * shares with the program each look is two context switches in the
 * middle of its round trips: between two hosts of one CPU each, 100 us
 * cost an 8 B ping-pong 30 % of its rate and 14 us of its p99 against 300
 * (guides/experiments_close_to_wire, fifteenth round).
 */
#define RP_INLINE_AUTO_US	300

/** What inline passes an engine runs (inline_us, and what auto decided). */
enum rp_inline_kind {
	RP_INLINE_OFF,		/**< the lcores run every pass */
	RP_INLINE_ON,		/**< every polling thread runs passes */
	RP_INLINE_ON_CPU,	/**< a thread polling on an lcore's CPU does */
};

/**
 * Record the calling thread's CPU affinity as the CPUs the program's
 * threads may use, for inline_us = auto.  Call it before rte_eal_init(),
 * which pins its caller; without it, auto assumes every CPU online.
 */
void rp_engine_app_cpus(void);

/**
 * What inline passes an engine started with `cfg` runs, without starting
 * it (rocepmd-run --check): the engine lcores' CPUs are read from the EAL
 * arguments the configuration builds (-l, --lcores), the program's from
 * rp_engine_app_cpus() or, without it, the calling thread's affinity.
 * @param why  filled with the reason, one line
 * @return the kind
 */
enum rp_inline_kind rp_inline_explain(const struct rp_config *cfg,
				      char *why, size_t len);

/**
 * What the running engine decided for the lcore serving device `dev`.
 * @param us   the stand-aside in microseconds (0 when off)
 * @param why  the reason (may be NULL)
 * @return the kind, or -ENOENT
 */
int rp_engine_inline(unsigned int dev, uint32_t *us, char *why, size_t len);

/** "off", "on" or "on-cpu". */
const char *rp_inline_kind_name(enum rp_inline_kind kind);

/**
 * What this machine's CPUs do when idle (rp_cpu_idle.c).  In a virtual
 * machine whose idle vCPUs halt at once, every wake-up of a thread asleep
 * on one costs its waker an exit to the hypervisor.  Read, reported with
 * the placement, never changed: it is the machine's setting.
 */
struct rp_cpu_idle {
	char driver[32];	/**< cpuidle's current driver; "none" */
	int64_t poll_ns;	/**< haltpoll's guest_halt_poll_ns; -1: not
				 *   haltpoll, or unreadable */
	bool halts_at_once;	/**< haltpoll with guest_halt_poll_ns 0 */
};

/** Read from a sysfs tree ("/sys"; tests pass their own).  Never fails:
 *  what cannot be read reads as "none" or -1. */
void rp_cpu_idle_read(const char *sysfs, struct rp_cpu_idle *ci);

/** "haltpoll:0", "haltpoll:200000", "intel_idle", "none". */
const char *rp_cpu_idle_brief(const struct rp_cpu_idle *ci, char *buf,
			      size_t len);

/** One sentence for a log or rocepmd-run --check: what it costs here. */
const char *rp_cpu_idle_explain(const struct rp_cpu_idle *ci, char *buf,
				size_t len);

/**
 * The CPUs' idle behaviour as the running engine read it at launch:
 * "haltpoll:0" (a virtual machine whose idle vCPUs halt at once: each
 * wake-up of a sleeping thread costs its waker a hypervisor exit),
 * "haltpoll:200000", "intel_idle", "none" (guides/config, "Virtual
 * machines").
 * @return buf, or NULL if no engine lcore runs
 */
const char *rp_engine_cpu_idle(char *buf, size_t len);

/**
 * Inline mode: the calling thread stops polling device `dev`'s CQs (it
 * armed one to wait for an event): the lcore, standing aside, takes the
 * passes back at once instead of after inline_us.  A no-op otherwise.
 */
void rp_engine_unassist(unsigned int dev);

/**
 * Counters of a device (the /rocepmd/stats telemetry command's).
 * @param names, vals filled for the first n counters (either may be NULL)
 * @return the number of counters the engine has, or -ENOENT
 */
int rp_dev_stats_get(unsigned int dev, const char **names, uint64_t *vals,
		     unsigned int n);

/**
 * The same counters, of one of the lcores that serve a device (key lcore
 * as a list: the shard-th; /rocepmd/shards).
 * @param lcore the lcore id, if not NULL
 * @return the number of counters, or -ENOENT past the last shard
 */
int rp_dev_shard_stats_get(unsigned int dev, unsigned int shard,
			   unsigned int *lcore, const char **names,
			   uint64_t *vals, unsigned int n);

/**
 * Counters of the idx-th running engine lcore (/rocepmd/lcores): busy and
 * idle cycles, polls, yields, naps, sleeps, wake-ups, doorbell signals.
 * @param lcore its lcore id, if not NULL
 * @return the number of counters, or -ENOENT past the last lcore
 */
int rp_lcore_stats_get(unsigned int idx, unsigned int *lcore,
		       const char **names, uint64_t *vals, unsigned int n);

/**
 * Note this process's EAL runtime directory (rte_eal_get_runtime_dir()),
 * which DPDK 22.11 creates per --file-prefix and never removes.  Call after
 * rte_eal_init(), whether it succeeded or not.  Removes, beside it, the
 * rocepmd-<pid> directories of processes that are gone (killed by a
 * signal: no exit handler ran) and left nothing alive in them.
 */
void rp_eal_rundir_note(void);

/**
 * Remove the noted runtime directory if it is empty, in the process that
 * noted it only (never in a forked child).  Call when the process is done
 * with the EAL: after rte_eal_cleanup(), or from an exit handler that runs
 * after the EAL's own (the telemetry socket is removed by one), that is, an
 * atexit() handler registered before rte_eal_init().
 * @return 0 (removed, or nothing to remove), or a negative errno
 *	(-ENOTEMPTY: files of the EAL are left, the directory is kept)
 */
int rp_eal_rundir_remove(void);

/** Number of devices (configured ports). */
unsigned int rp_dev_count(void);

/** The IB MTU of device `dev` (mtu = auto: what the port carries), or 0. */
uint32_t rp_dev_mtu(unsigned int dev);

/** Control block at the base of a device's shared region, or NULL. */
struct rp_dev_ctl *rp_dev_ctl(unsigned int dev);

/** Size in bytes of a device's shared region (the engine's copy), or 0. */
uint64_t rp_dev_region_size(unsigned int dev);

/**
 * The shared memory of the engine's own process on a device (arena 0):
 * its objects' rings at the offsets control replies give, its async
 * event ring at offset 0 (struct rp_arena_ctl).  No attached process maps
 * it.  Its size in *size; NULL (and 0) for no such device.
 */
void *rp_dev_own_arena(unsigned int dev, uint64_t *size);

/** Base of a device's shared region (equal to rp_dev_ctl()). */
static inline void *
rp_dev_region(unsigned int dev)
{
	return rp_dev_ctl(dev);
}

/**
 * Run a control operation on the engine lcore that owns the device and wait
 * for its reply.  `slot->op` and `slot->u` are the request; on return
 * `slot->u` holds the reply.  Safe from any thread.
 * @return the operation's result: 0 or a negative errno
 */
int rp_ctrl_call(unsigned int dev, struct rp_ctrl_slot *slot);

/** Tell the engine that a work queue of the device has new entries. */
void rp_dev_doorbell(unsigned int dev);

/** Default directory of the attach sockets (ROCEPMD_RUN_DIR overrides). */
#define RP_SERVE_DIR	"/run/rocepmd"

/**
 * Serve the devices to other processes: they attach on the UNIX socket
 * `path` (protocol: rp_attach.h) and use the devices through it and the
 * shared regions, as `rocepmd-run --attach` does.  The socket's mode and
 * group decide who may attach.  The engine must be running.
 *
 * @param mode	permission bits of the socket file (0660: owner and group)
 * @param gid	group of the socket file, or -1 to keep the process's
 * @param err	on failure, why
 * @return 0; -EADDRINUSE when another process serves `path`; another
 *	negative errno
 */
int rp_serve_start(const char *path, unsigned int mode, int gid, char *err,
		   size_t errlen);

/**
 * The limits of attached processes (the configuration's [host] section);
 * before rp_serve_start(), else the defaults of doc/guides/config.rst.
 */
void rp_serve_quotas(const struct rp_host_cfg *cfg);

/** Stop serving: every attached process's objects are destroyed. */
void rp_serve_stop(void);

/** An attached process, as rp_serve_clients() reports it. */
struct rp_serve_client {
	uint32_t id;		/**< the server's number for it */
	int32_t pid;		/**< from the socket (SO_PEERCRED) */
	uint32_t uid;
	uint32_t objects;	/**< PDs, MRs, CQs, QPs... it holds */
	uint32_t qps;
	uint32_t mrs;
	uint64_t requests;	/**< control requests it made */
	char comm[16];		/**< its program name */
};

/**
 * The processes attached now.
 * @param out	filled with up to n of them
 * @return how many are attached (may exceed n)
 */
int rp_serve_clients(struct rp_serve_client *out, unsigned int n);

#ifdef __cplusplus
}
#endif

#endif /* _ROCEPMD_H_ */
