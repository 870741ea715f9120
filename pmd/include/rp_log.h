/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef _RP_LOG_H_
#define _RP_LOG_H_

#include <rte_cycles.h>
#include <rte_log.h>

extern int rp_logtype;		/* rocepmd */
extern int rp_logtype_cfg;	/* rocepmd.cfg */
extern int rp_logtype_port;	/* rocepmd.port */
extern int rp_logtype_req;	/* rocepmd.req */
extern int rp_logtype_resp;	/* rocepmd.resp */
extern int rp_logtype_comp;	/* rocepmd.comp */
extern int rp_logtype_cq;	/* rocepmd.cq */

#define RP_LOGT(type, level, fmt, ...) \
	rte_log(RTE_LOG_ ## level, (type), "rocepmd: %s(): " fmt "\n", \
		__func__, ##__VA_ARGS__)

#define RP_LOG(level, fmt, ...) RP_LOGT(rp_logtype, level, fmt, ##__VA_ARGS__)

#define RP_QP_LOG(type, level, qpn, fmt, ...) \
	RP_LOGT(type, level, "qp 0x%06x: " fmt, (unsigned int)(qpn), \
		##__VA_ARGS__)

/*
 * Rate-limited log for the packet path: at most one line per second per
 * call site, since a hostile peer can otherwise flood the log.
 */
#define RP_LOG_RL(type, level, fmt, ...) do { \
	static uint64_t rp_rl_next_; \
	uint64_t rp_rl_now_ = rte_get_timer_cycles(); \
	if (rp_rl_now_ >= rp_rl_next_) { \
		rp_rl_next_ = rp_rl_now_ + rte_get_timer_hz(); \
		RP_LOGT(type, level, fmt, ##__VA_ARGS__); \
	} \
} while (0)

#ifdef RP_HOTPATH_DEBUG
#define RP_DP_LOG(type, fmt, ...) RP_LOGT(type, DEBUG, fmt, ##__VA_ARGS__)
#else
#define RP_DP_LOG(type, fmt, ...) do { } while (0)
#endif

#endif /* _RP_LOG_H_ */
