/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rp_incast: N senders, one receiver (issue 29).  rocepmd1..N each RDMA
 * WRITE 64 KiB messages to rocepmd0 for a fixed time, each keeping
 * RP_INCAST_WINDOW of them posted, over whatever wire the configuration
 * gives (test/verbs/incast.sh: af_packet ports on veths joined by a
 * bridge whose port towards rocepmd0 is rate-limited by a qdisc that
 * marks ECN).  Every completion is checked, and the receiver's memory
 * holds exactly what each sender wrote.
 *
 *   rp_incast incast      the EAL file prefix is rp_incast
 *
 * Environment:
 *   RP_INCAST_SECONDS    how long the senders write (default 3)
 *   RP_INCAST_WINDOW     WRITEs each keeps posted (default 16)
 *
 * Prints per sender "sender I BYTES MBIT/S ... qpn QPN" and one line
 *   RESULT incast N SECONDS AGG_MBITS JAIN RETX_BYTES RETX_PCT CNP_SENT
 *          CNP_RCVD CUTS PACED TIMEOUTS
 * and exits 0 if every sender moved data and the data is whole; the
 * script decides what the counters must show for its set-up.
 */

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/verbs.h>

#include "rp_testlib.h"

const char rt_prog[] = "rp_incast";

#define IC_MAX		8		/* senders */
#define IC_MSG		65536u
#define IC_SLOTS	16u		/* distinct 64 KiB targets a sender */

struct ic_sender {
	struct rt_dev dev;
	struct rt_ep ep;		/* on dev, to rocepmd0 */
	struct rt_ep peer;		/* on rocepmd0 */
	struct rt_buf src;
	uint64_t posted, done, bytes;
};

static struct {
	struct rt_dev d0;
	struct rt_buf dst;		/* IC_SLOTS x 64 KiB per sender */
	struct ic_sender s[IC_MAX];
	unsigned int n;
} ic;

static unsigned long
ic_env(const char *name, unsigned long def, unsigned long max)
{
	const char *v = getenv(name);
	char *end;
	unsigned long x;

	if (v == NULL || *v == '\0')
		return def;
	x = strtoul(v, &end, 10);
	RT_CHECK(*end == '\0' && x >= 1 && x <= max, "%s=%s: 1..%lu", name, v,
		 max);
	return x;
}

static void
ic_post(struct ic_sender *s, unsigned int i)
{
	size_t slot = s->posted % IC_SLOTS;
	struct ibv_sge sg = rt_sge(&s->src, slot * IC_MSG, IC_MSG);

	rt_post_send(&s->ep, s->posted, IBV_WR_RDMA_WRITE, &sg, 1,
		     IBV_SEND_SIGNALED, 0,
		     (uintptr_t)ic.dst.p + ((size_t)i * IC_SLOTS + slot) *
		     IC_MSG, ic.dst.mr->rkey);
	s->posted++;
}

/* Completions of sender i: in order, successful WRITEs of 64 KiB. */
static unsigned int
ic_poll(struct ic_sender *s, unsigned int i)
{
	struct ibv_wc wc[16];
	int n = ibv_poll_cq(s->ep.scq, 16, wc);

	RT_CHECK(n >= 0, "sender %u: ibv_poll_cq %d", i, n);
	for (int k = 0; k < n; k++) {
		RT_CHECK(wc[k].status == IBV_WC_SUCCESS &&
			 wc[k].opcode == IBV_WC_RDMA_WRITE &&
			 wc[k].wr_id == s->done, "sender %u: WR %" PRIu64
			 " (expected %" PRIu64 ") %s, opcode %d", i,
			 (uint64_t)wc[k].wr_id, s->done,
			 ibv_wc_status_str(wc[k].status), wc[k].opcode);
		s->done++;
		s->bytes += IC_MSG;
	}
	return (unsigned int)n;
}

static uint64_t
ic_sum(const char *name, unsigned int from)
{
	uint64_t v = 0;

	for (unsigned int d = from; d <= ic.n; d++)
		v += rt_stat(d, name);
	return v;
}

/* A figure of sender d's QP from /rocepmd/qp (rate, alpha, srtt). */
static uint64_t
ic_qp(unsigned int d, const char *name)
{
	return rt_qp_stat(d, ic.s[d - 1].ep.qp->qp_num, name);
}

static void
ic_run(void)
{
	unsigned long secs = ic_env("RP_INCAST_SECONDS", 3, 600);
	unsigned long win = ic_env("RP_INCAST_WINDOW", 16, 64);
	const struct rt_ep_opts eo = { .type = IBV_QPT_RC,
				       .max_send_wr = 64 };
	struct ibv_device **list;
	double t0, t1, end, sum = 0, sq = 0, jain;
	uint64_t retx, total = 0;
	int nd;

	list = ibv_get_device_list(&nd);
	RT_CHECK(list != NULL && nd >= 2 && nd <= IC_MAX + 1, "%d devices "
		 "(2..%d)", nd, IC_MAX + 1);
	ibv_free_device_list(list);
	ic.n = (unsigned int)nd - 1;
	rt_step("rocepmd1..%u each write 64 KiB to rocepmd0, %lu posted, for "
		"%lu s", ic.n, win, secs);
	rt_dev_open(&ic.d0, RT_DEV0);
	rt_buf_alloc(&ic.dst, &ic.d0, (size_t)ic.n * IC_SLOTS * IC_MSG,
		     RT_ACCESS_ALL);
	for (unsigned int i = 0; i < ic.n; i++) {
		struct ic_sender *s = &ic.s[i];
		char name[16];

		snprintf(name, sizeof(name), "rocepmd%u", i + 1);
		rt_dev_open(&s->dev, name);
		rt_ep_create(&s->ep, &s->dev, &eo);
		rt_ep_create(&s->peer, &ic.d0, &eo);
		rt_rc_connect(&s->ep, &s->peer, &rt_rc_default);
		rt_buf_alloc(&s->src, &s->dev, IC_SLOTS * IC_MSG,
			     RT_ACCESS_ALL);
		rt_fill_random(s->src.p, s->src.len);
	}
	t0 = rt_now();
	end = t0 + (double)secs;
	while (rt_now() < end) {
		for (unsigned int i = 0; i < ic.n; i++) {
			struct ic_sender *s = &ic.s[i];

			ic_poll(s, i);
			while (s->posted - s->done < win)
				ic_post(s, i);
		}
	}
	t1 = rt_now();
	/* what is in flight completes too: nothing is lost */
	end = rt_now() + rt_timeout_s;
	for (unsigned int i = 0; i < ic.n; i++) {
		struct ic_sender *s = &ic.s[i];
		uint64_t at_end = s->bytes;

		while (s->done != s->posted) {
			RT_CHECK(rt_now() < end, "sender %u: %" PRIu64 " of %"
				 PRIu64 " WRITEs completed", i + 1, s->done,
				 s->posted);
			ic_poll(s, i);
		}
		s->bytes = at_end;	/* goodput within the time */
		rt_check_data(ic.dst.p + (size_t)i * IC_SLOTS * IC_MSG,
			      s->src.p, IC_SLOTS * IC_MSG, "sender's data");
	}
	for (unsigned int i = 0; i < ic.n; i++) {
		double x = (double)ic.s[i].bytes * 8 / (t1 - t0) / 1e6;

		printf("sender %u %" PRIu64 " %.1f rate %" PRIu64 " Mbit/s "
		       "alpha %" PRIu64 " srtt %" PRIu64 " us qpn %u\n",
		       i + 1, ic.s[i].bytes, x, ic_qp(i + 1, "rate_mbps"),
		       ic_qp(i + 1, "alpha"), ic_qp(i + 1, "srtt_us"),
		       ic.s[i].ep.qp->qp_num);
		RT_CHECK(ic.s[i].bytes > 0, "sender %u: nothing in %.1f s",
			 i + 1, t1 - t0);
		sum += x;
		sq += x * x;
		total += ic.s[i].bytes;
	}
	jain = sum * sum / (ic.n * sq);
	retx = ic_sum("retransmitted_bytes", 1);
	printf("RESULT incast %u %.2f %.1f %.3f %" PRIu64 " %.3f %" PRIu64
	       " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64
	       "\n", ic.n,
	       t1 - t0, sum, jain, retx, 100.0 * (double)retx /
	       (double)total, rt_stat(0, "cnp_sent"),
	       ic_sum("cnp_received", 1), ic_sum("dcqcn_rate_cuts", 1),
	       ic_sum("dcqcn_paced", 1), ic_sum("retry_timeouts", 1),
	       ic_sum("dcqcn_loss_cuts", 1));
	fflush(stdout);
}

static const struct rt_case ic_cases[] = {
	{ "incast", ic_run, 600, "N senders write to one receiver" },
};

int
main(int argc, char **argv)
{
	return rt_main(argc, argv, ic_cases,
		       sizeof(ic_cases) / sizeof(ic_cases[0]));
}
