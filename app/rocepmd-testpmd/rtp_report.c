/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Results: the figures of a run (latency quantiles, rates, CPU and engine
 * shares from the counters, where its threads ran), then one fixed table
 * row per run (grep-able: every row starts with "RESULT"), or JSON (one
 * object per line) or CSV with the same fields.
 */

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_lcore.h>

#include "rtp.h"

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/* Nearest-rank quantile q in [0, 1]; sorts v (once: sorted stays sorted). */
double
rtp_quantile(uint64_t *v, uint64_t n, double q)
{
	uint64_t i;

	if (n == 0)
		return 0;
	if (q == 0.0)
		qsort(v, n, sizeof(*v), cmp_u64);
	i = (uint64_t)(q * (double)(n - 1) + 0.5);
	return (double)v[RTE_MIN(i, n - 1)];
}

/* ---- the figures of a run ---------------------------------------------- */

/* Quantiles of n TSC samples (sorted in place), us, each over div. */
void
rtp_lat_fill(struct rtp_lat *l, uint64_t *v, uint64_t n, double div)
{
	l->min = rtp_tsc_us((uint64_t)rtp_quantile(v, n, 0.0)) / div;
	l->p50 = rtp_tsc_us((uint64_t)rtp_quantile(v, n, 0.5)) / div;
	l->p99 = rtp_tsc_us((uint64_t)rtp_quantile(v, n, 0.99)) / div;
	l->p999 = rtp_tsc_us((uint64_t)rtp_quantile(v, n, 0.999)) / div;
	l->max = rtp_tsc_us((uint64_t)rtp_quantile(v, n, 1.0)) / div;
}

/* Latency quantiles of the samples, us: the round trip over lat_div. */
static int
quantiles(struct rtp_run *run, struct rtp_result *res)
{
	double div = (double)(run->lat_div != 0 ? run->lat_div :
			      run->mode->lat_div);

	if (run->nb_samples == 0)
		return 0;
	res->has_lat = true;
	rtp_lat_fill(&res->lat, run->samples, run->nb_samples, div);
	return 0;
}

/*
 * The figures of a run from its samples and the counters at both ends of
 * its measured phase (c0, c1); two processes: with the server's.
 */
void
rtp_figures(struct rtp_run *run, const struct rtp_counters *c0,
	    const struct rtp_counters *c1, struct rtp_result *res)
{
	uint64_t busy, idle, polls, msgs;

	res->msgs = run->cli.done;
	res->posted = run->posted;
	/* the receiver's count less the warm-up messages */
	res->received = run->received >= run->set.warmup ?
		run->received - run->set.warmup : 0;
	res->bytes = res->msgs * run->set.size;
	res->seconds = rtp_tsc_us(run->t_end - run->t_start) / 1e6;
	msgs = RTE_MAX(res->msgs, 1u);
	if (res->seconds > 0) {
		res->msg_rate = (double)res->msgs / res->seconds;
		res->gbps = (double)res->bytes * 8 / res->seconds / 1e9;
	}
	quantiles(run, res);
	res->cpu_us_per_msg = (double)(run->cli.cpu_ns + run->srv.cpu_ns) /
		1e3 / (double)msgs;
	res->has_eng_cpu = c0->has_eng_cpu && c1->has_eng_cpu;
	/* The engine's CPU: its lcores' threads, and the inline passes that
	 * found work on the program's threads (their time is also in
	 * cpu_us_per_msg: a polling program runs the engine itself). */
	if (res->has_eng_cpu)
		res->eng_cpu_us_per_msg = ((double)(c1->eng_cpu_ns -
			c0->eng_cpu_ns) / 1e3 +
			(double)(rtp_counter(c1, true, "inline_busy_cycles") -
			rtp_counter(c0, true, "inline_busy_cycles")) * 1e6 /
			(double)rte_get_timer_hz()) / (double)msgs;
	busy = rtp_counter(c1, true, "busy_cycles") -
		rtp_counter(c0, true, "busy_cycles");
	idle = rtp_counter(c1, true, "idle_cycles") -
		rtp_counter(c0, true, "idle_cycles");
	res->engine_busy = busy + idle != 0 ?
		(double)busy / (double)(busy + idle) : 0;
#define DIFF(lc, name) (rtp_counter(c1, lc, name) - rtp_counter(c0, lc, name))
	res->signals_per_msg = (double)DIFF(true, "doorbell_signals") /
		(double)msgs;
	res->wakeups_per_msg = (double)(DIFF(true, "wakeups_doorbell") +
		DIFF(true, "wakeups_rx_intr") + DIFF(true, "wakeups_timeout")) /
		(double)msgs;
	res->retransmits = DIFF(false, "retransmits");
	res->drops = DIFF(false, "tx_dropped") + DIFF(false, "no_mbuf") +
		DIFF(false, "retry_timeouts");
#undef DIFF
	polls = run->cli.w.polls;
	res->cqes_per_poll = polls != 0 ?
		(double)run->cli.w.cqes / (double)polls : 0;
	res->events_per_msg = (double)run->cli.w.events / (double)msgs;
	res->wc_errors = run->cli.wc_errors + run->srv.wc_errors;
	if (run->oob >= 0 && run->hello_ok) {
		const struct rtp_srv_figures *f = &run->srv_fig;
		uint64_t w = run->set.warmup;

		res->has_srv = true;
		res->srv_received = f->received >= w ? f->received - w : 0;
		res->srv_bytes = f->bytes >= w * run->set.size ?
			f->bytes - w * run->set.size : 0;
		res->srv_cpu_us_per_msg = (double)f->cpu_ns / 1e3 /
			(double)msgs;
		res->srv_engine_busy = f->busy_cycles + f->idle_cycles != 0 ?
			(double)f->busy_cycles /
			(double)(f->busy_cycles + f->idle_cycles) : 0;
		res->srv_retransmits = f->retransmits;
		res->srv_drops = f->drops;
		res->srv_wc_errors = f->wc_errors;
		/* shares: within [0, 1] whatever the server sent */
		res->srv_has_cpu = f->has_cpu != 0 &&
			f->cpu_busy >= 0 && f->cpu_busy <= 1 &&
			f->cpu_kernel >= 0 && f->cpu_kernel <= 1;
		res->srv_cpu_busy = res->srv_has_cpu ? f->cpu_busy : 0;
		res->srv_cpu_kernel = res->srv_has_cpu ? f->cpu_kernel : 0;
	}
	if (rtp_raw.valid && rtp_raw.size == run->set.size) {
		if (res->has_lat && run->mode->latency && rtp_raw.pp.p50 > 0)
			res->lat_x_raw = res->lat.p50 * (run->lat_div != 0 ?
				run->lat_div : run->mode->lat_div) /
				2 / rtp_raw.pp.p50;
		if (rtp_raw.msg_rate > 0)
			res->bw_of_raw = res->msg_rate / rtp_raw.msg_rate;
	}
}

/* The CPUs of this process's engine lcores. */
static void
eng_cpus(cpu_set_t *eng, unsigned int *nb)
{
	unsigned int lcore;

	CPU_ZERO(eng);
	*nb = 0;
	for (unsigned int i = 0; i < RP_MAX_ENGINE_LCORES &&
	     rp_lcore_stats_get(i, &lcore, NULL, NULL, 0) >= 0; i++) {
		rte_cpuset_t c = rte_lcore_cpuset(lcore);

		CPU_OR(eng, eng, &c);
		(*nb)++;
	}
}

/*
 * Where the time of the engine lcores' CPUs and of the client thread's
 * (cli) and the server thread's (srv) went between the run's counters.
 */
static bool
run_cpu_share(const struct rtp_run *run, bool cli, bool srv, double *busy,
	      double *kernel)
{
	cpu_set_t set;
	unsigned int nb;

	eng_cpus(&set, &nb);
	if (cli)
		CPU_OR(&set, &set, &run->cli_cpus);
	if (srv)
		CPU_OR(&set, &set, &run->srv_cpus);
	return run->c0.has_cpu && run->c1.has_cpu &&
		rtp_cpustat_share(&run->c0.cpu, &run->c1.cpu, &set, busy,
				  kernel);
}

/* The server's own counts of the run, for the client's report. */
struct rtp_srv_figures
rtp_figures_srv(struct rtp_run *run)
{
	const struct rtp_counters *c0 = &run->c0, *c1 = &run->c1;
	struct rtp_srv_figures f;

#define DIFF(lc, name) (rtp_counter(c1, lc, name) - rtp_counter(c0, lc, name))
	f = (struct rtp_srv_figures){
		/* warm-up included: the client knows how many it sent */
		.received = run->received,
		.bytes = run->received * run->set.size,
		.cpu_ns = run->srv.cpu_ns,
		.busy_cycles = DIFF(true, "busy_cycles"),
		.idle_cycles = DIFF(true, "idle_cycles"),
		.retransmits = DIFF(false, "retransmits"),
		.drops = DIFF(false, "tx_dropped") + DIFF(false, "no_mbuf") +
			DIFF(false, "retry_timeouts"),
		.wc_errors = run->srv.wc_errors,
	};
#undef DIFF
	f.has_cpu = run_cpu_share(run, false, true, &f.cpu_busy,
				  &f.cpu_kernel);
	return f;
}

/* Whether a thread of CPU set a runs on CPUs of b only. */
static bool
cpus_within(const cpu_set_t *a, const cpu_set_t *b)
{
	cpu_set_t x;

	CPU_AND(&x, a, b);
	return CPU_COUNT(a) != 0 && CPU_EQUAL(&x, a);
}

/*
 * Where the run's threads and this process's engine lcores may run
 * (their CPU sets), and whether the spinners among them had a CPU each.
 * Spinners: the measuring threads that busy-wait (poll, hybrid; the tag
 * modes poll; a passive server sleeps) and the engine lcores, except
 * when the program polls with inline passes on: the lcore stands aside
 * (with auto's on-cpu, only for a poller pinned to the lcore's CPUs).
 */
void
rtp_placement(const struct rtp_run *run, struct rtp_result *res)
{
	const bool polls = run->mode->own_resources ||
		run->set.wait == RTP_WAIT_POLL ||
		run->set.wait == RTP_WAIT_HYBRID;
	/* the server thread is ours: one process, a mode with two ends */
	const bool srv = rtp.params.client == NULL &&
		!run->mode->own_resources;
	char cli_s[32], srv_s[32], eng_s[32], idle_s[48];
	cpu_set_t busy, eng;
	unsigned int nb_eng, spinners = 0;
	bool srv_spins = false, aside;

	eng_cpus(&eng, &nb_eng);
	CPU_ZERO(&busy);
	if (polls) {
		spinners++;
		CPU_OR(&busy, &busy, &run->cli_cpus);
	}
	/* a server thread that never started (a failed run) spins not */
	if (polls && srv && run->mode->server_active &&
	    CPU_COUNT(&run->srv_cpus) != 0) {
		spinners++;
		CPU_OR(&busy, &busy, &run->srv_cpus);
		srv_spins = true;
	}
	aside = polls && (rtp_inline_on() ||
		(rp_engine_inline(0, NULL, NULL, 0) == RP_INLINE_ON_CPU &&
		 (cpus_within(&run->cli_cpus, &eng) ||
		  (srv_spins && cpus_within(&run->srv_cpus, &eng)))));
	if (!aside) {
		spinners += nb_eng;
		CPU_OR(&busy, &busy, &eng);
	}
	res->cpu_over = spinners > (unsigned int)CPU_COUNT(&busy);
	rtp_cpus_fmt(&run->cli_cpus, cli_s, sizeof(cli_s));
	rtp_cpus_fmt(&run->srv_cpus, srv_s, sizeof(srv_s));
	rtp_cpus_fmt(&eng, eng_s, sizeof(eng_s));
	if (srv)
		snprintf(res->placement, sizeof(res->placement),
			 "cli=%s,srv=%s,eng=%s", cli_s, srv_s, eng_s);
	else
		snprintf(res->placement, sizeof(res->placement),
			 "cli=%s,eng=%s", cli_s, eng_s);
	/* What a wake-up costs depends on it (a VM's halting vCPUs). */
	if (rp_engine_cpu_idle(idle_s, sizeof(idle_s)) != NULL) {
		size_t o = strlen(res->placement);

		snprintf(res->placement + o, sizeof(res->placement) - o,
			 ",idle=%s", idle_s);
	}
	/* Where those CPUs' time went in the measured phase. */
	res->has_cpu = run->t_start != 0 && run_cpu_share(run, true, srv,
		&res->cpu_busy, &res->cpu_kernel);
}

/* ---- printing ---------------------------------------------------------- */

#define RTP_FIELDS \
	"mode,size,depth,qps,wait,idle,rate,msgs,bytes,seconds,lat_min_us," \
	"lat_p50_us,lat_p99_us,lat_p999_us,lat_max_us,msg_rate,gbps," \
	"cpu_us_per_msg,engine_busy,signals_per_msg,wakeups_per_msg," \
	"cqes_per_poll,events_per_msg,retransmits,drops,wc_errors," \
	"received,lat_x_raw,bw_of_raw,srv_received,srv_bytes," \
	"srv_cpu_us_per_msg,srv_engine_busy,srv_retransmits,srv_drops," \
	"srv_wc_errors,eng_cpu_us_per_msg,cpu_busy,cpu_kernel," \
	"srv_cpu_busy,srv_cpu_kernel,placement,cpu,status"

void
rtp_report_header(FILE *f, enum rtp_format fmt)
{
	if (fmt == RTP_FMT_CSV)
		fprintf(f, "%s\n", RTP_FIELDS);
	else if (fmt == RTP_FMT_TABLE)
		fprintf(f, "%-6s %-10s %7s %5s %3s %-6s %-8s %9s %8s %8s %8s %8s %10s %8s %7s %5s %6s %6s %5s %6s %4s %8s %7s %7s %-17s %-4s %s\n",
			"#", "mode", "size", "depth", "qps", "wait", "idle",
			"msgs", "lat_min", "lat_p50", "lat_p99", "lat_p999",
			"msg/s", "Gbit/s", "cpu_us", "eng%", "sig/m",
			"wake/m", "cqe/p", "retx", "drop", "lat/raw",
			"bw/raw", "eng_us", "placement", "cpu", "status");
}

void
rtp_report_footer(FILE *f, enum rtp_format fmt)
{
	(void)f;
	(void)fmt;
}

static const char *
status(const struct rtp_result *r)
{
	if (r->error == 0 && r->error_msg[0] == '\0')
		return "ok";
	return r->error_msg[0] != '\0' ? r->error_msg : strerror(-r->error);
}

/* The cpu field: "" where no thread ran (the raw rows). */
static const char *
cpu_field(const struct rtp_result *r)
{
	if (r->placement[0] == '\0')
		return "";
	return r->cpu_over ? "oversubscribed" : "ok";
}

/*
 * Two processes: the server's own figures of the run (its receive count,
 * CPU, engine), after the client's, so that both ends compare in one row;
 * empty (CSV), null (JSON) or no SERVER line (table) in one process.
 */
static void
report_srv(FILE *f, enum rtp_format fmt, const struct rtp_result *r)
{
	switch (fmt) {
	case RTP_FMT_TABLE:
		if (r->has_srv)
			fprintf(f, "%-6s %-10s received %" PRIu64 " bytes %"
				PRIu64 " cpu_us %.2f eng%% %.1f retx %" PRIu64
				" drop %" PRIu64 " wc_errors %" PRIu64 "\n",
				"SERVER", r->mode, r->srv_received,
				r->srv_bytes, r->srv_cpu_us_per_msg,
				r->srv_engine_busy * 100, r->srv_retransmits,
				r->srv_drops, r->srv_wc_errors);
		break;
	case RTP_FMT_JSON:
		if (!r->has_srv) {
			fprintf(f, "\"server\":null,");
			break;
		}
		fprintf(f, "\"server\":{\"received\":%" PRIu64 ",\"bytes\":%"
			PRIu64 ",\"cpu_us_per_msg\":%.4f,\"engine_busy\":%.4f,"
			"\"retransmits\":%" PRIu64 ",\"drops\":%" PRIu64
			",\"wc_errors\":%" PRIu64 "},",
			r->srv_received, r->srv_bytes, r->srv_cpu_us_per_msg,
			r->srv_engine_busy, r->srv_retransmits, r->srv_drops,
			r->srv_wc_errors);
		break;
	case RTP_FMT_CSV:
		if (!r->has_srv) {
			fprintf(f, ",,,,,,,");
			break;
		}
		fprintf(f, "%" PRIu64 ",%" PRIu64 ",%.4f,%.4f,%" PRIu64 ",%"
			PRIu64 ",%" PRIu64 ",", r->srv_received, r->srv_bytes,
			r->srv_cpu_us_per_msg, r->srv_engine_busy,
			r->srv_retransmits, r->srv_drops, r->srv_wc_errors);
		break;
	}
}

void
rtp_report(FILE *f, enum rtp_format fmt, const struct rtp_result *r)
{
	const struct rtp_settings *s = &r->set;

	switch (fmt) {
	case RTP_FMT_TABLE:
		fprintf(f, "%-6s %-10s %7u %5u %3u %-6s %-8s %9" PRIu64
			" %8.2f %8.2f %8.2f %8.2f %10.0f %8.3f %7.2f %5.1f %6.3f %6.3f %5.2f %6" PRIu64
			" %4" PRIu64 " %8.2f %7.3f %7.2f %-17s %-4s %s\n",
			"RESULT", r->mode, s->size, s->depth, s->qps,
			rtp_wait_name(s->wait), r->idle, r->msgs, r->lat.min,
			r->lat.p50, r->lat.p99, r->lat.p999, r->msg_rate,
			r->gbps, r->cpu_us_per_msg, r->engine_busy * 100,
			r->signals_per_msg, r->wakeups_per_msg,
			r->cqes_per_poll, r->retransmits, r->drops,
			r->lat_x_raw, r->bw_of_raw, r->eng_cpu_us_per_msg,
			r->placement[0] != '\0' ? r->placement : "-",
			r->placement[0] != '\0' ? cpu_field(r) : "-", status(r));
		report_srv(f, fmt, r);
		break;
	case RTP_FMT_JSON:
		fprintf(f, "{\"mode\":\"%s\",\"size\":%u,\"depth\":%u,\"qps\":%u,"
			"\"wait\":\"%s\",\"idle\":\"%s\",\"rate\":%.0f,"
			"\"msgs\":%" PRIu64 ",\"bytes\":%" PRIu64 ",\"seconds\":%.6f,"
			"\"lat_min_us\":%.3f,\"lat_p50_us\":%.3f,\"lat_p99_us\":%.3f,"
			"\"lat_p999_us\":%.3f,\"lat_max_us\":%.3f,\"msg_rate\":%.1f,"
			"\"gbps\":%.4f,\"cpu_us_per_msg\":%.4f,\"engine_busy\":%.4f,"
			"\"signals_per_msg\":%.4f,\"wakeups_per_msg\":%.4f,"
			"\"cqes_per_poll\":%.4f,\"events_per_msg\":%.4f,"
			"\"retransmits\":%" PRIu64 ",\"drops\":%" PRIu64
			",\"wc_errors\":%" PRIu64 ",\"received\":%" PRIu64
			",\"lat_x_raw\":%.3f,\"bw_of_raw\":%.4f,",
			r->mode, s->size, s->depth, s->qps, rtp_wait_name(s->wait),
			r->idle, s->rate, r->msgs, r->bytes, r->seconds,
			r->lat.min, r->lat.p50, r->lat.p99, r->lat.p999,
			r->lat.max, r->msg_rate, r->gbps, r->cpu_us_per_msg,
			r->engine_busy, r->signals_per_msg, r->wakeups_per_msg,
			r->cqes_per_poll, r->events_per_msg, r->retransmits,
			r->drops, r->wc_errors, r->received, r->lat_x_raw,
			r->bw_of_raw);
		report_srv(f, fmt, r);
		if (r->has_eng_cpu)
			fprintf(f, "\"eng_cpu_us_per_msg\":%.4f,",
				r->eng_cpu_us_per_msg);
		else
			fprintf(f, "\"eng_cpu_us_per_msg\":null,");
		if (r->has_cpu)
			fprintf(f, "\"cpu_busy\":%.4f,\"cpu_kernel\":%.4f,",
				r->cpu_busy, r->cpu_kernel);
		else
			fprintf(f, "\"cpu_busy\":null,\"cpu_kernel\":null,");
		if (r->srv_has_cpu)
			fprintf(f, "\"srv_cpu_busy\":%.4f,"
				"\"srv_cpu_kernel\":%.4f,", r->srv_cpu_busy,
				r->srv_cpu_kernel);
		else
			fprintf(f, "\"srv_cpu_busy\":null,"
				"\"srv_cpu_kernel\":null,");
		fprintf(f, "\"placement\":\"%s\",\"cpu\":\"%s\","
			"\"status\":\"%s\"}\n", r->placement, cpu_field(r),
			status(r));
		break;
	case RTP_FMT_CSV:
		fprintf(f, "%s,%u,%u,%u,%s,%s,%.0f,%" PRIu64 ",%" PRIu64
			",%.6f,%.3f,%.3f,%.3f,%.3f,%.3f,%.1f,%.4f,%.4f,%.4f,%.4f,"
			"%.4f,%.4f,%.4f,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%"
			PRIu64 ",%.3f,%.4f,",
			r->mode, s->size, s->depth, s->qps, rtp_wait_name(s->wait),
			r->idle, s->rate, r->msgs, r->bytes, r->seconds,
			r->lat.min, r->lat.p50, r->lat.p99, r->lat.p999,
			r->lat.max, r->msg_rate, r->gbps, r->cpu_us_per_msg,
			r->engine_busy, r->signals_per_msg, r->wakeups_per_msg,
			r->cqes_per_poll, r->events_per_msg, r->retransmits,
			r->drops, r->wc_errors, r->received, r->lat_x_raw,
			r->bw_of_raw);
		report_srv(f, fmt, r);
		if (r->has_eng_cpu)
			fprintf(f, "%.4f,", r->eng_cpu_us_per_msg);
		else
			fprintf(f, ",");
		if (r->has_cpu)
			fprintf(f, "%.4f,%.4f,", r->cpu_busy, r->cpu_kernel);
		else
			fprintf(f, ",,");
		if (r->srv_has_cpu)
			fprintf(f, "%.4f,%.4f,", r->srv_cpu_busy,
				r->srv_cpu_kernel);
		else
			fprintf(f, ",,");
		/* quoted: a placement lists CPUs with commas */
		fprintf(f, "\"%s\",%s,\"%s\"\n", r->placement, cpu_field(r),
			status(r));
		break;
	}
	fflush(f);
}

/* The raw limit as a result row of its own (modes raw_pp and raw_stream). */
void
rtp_report_raw(FILE *f, enum rtp_format fmt)
{
	struct rtp_result r;

	if (!rtp_raw.valid)
		return;
	memset(&r, 0, sizeof(r));
	rtp_settings_default(&r.set);
	r.set.size = rtp_raw.size;
	r.set.depth = 1;
	snprintf(r.idle, sizeof(r.idle), "-");
	snprintf(r.mode, sizeof(r.mode), "raw_pp");
	r.msgs = (uint64_t)rtp_raw.pp_msgs;
	r.bytes = r.msgs * r.set.size;
	r.lat = rtp_raw.pp;
	r.lat_x_raw = 1;
	rtp_report(f, fmt, &r);
	if (rtp_raw.x_valid) {
		snprintf(r.mode, sizeof(r.mode), "raw_pp2");
		r.msgs = (uint64_t)rtp_raw.x_msgs;
		r.bytes = r.msgs * r.set.size;
		r.lat = rtp_raw.x;
		r.lat_x_raw = rtp_raw.pp.p50 > 0 ?
			r.lat.p50 / rtp_raw.pp.p50 : 0;
		snprintf(r.placement, sizeof(r.placement), "%s",
			 rtp_raw.x_cpus);
		rtp_report(f, fmt, &r);
		r.placement[0] = '\0';
		r.msgs = (uint64_t)rtp_raw.pp_msgs;
		r.bytes = r.msgs * r.set.size;
	}
	memset(&r.lat, 0, sizeof(r.lat));
	snprintf(r.mode, sizeof(r.mode), "raw_stream");
	r.msg_rate = rtp_raw.msg_rate;
	r.gbps = rtp_raw.gbps;
	r.drops = rtp_raw.lost;
	if (rtp_raw.two_proc) {
		/* sent by us, counted by the server's port */
		r.msgs = rtp_raw.stream_sent;
		r.received = rtp_raw.stream_recv;
		r.bytes = r.msgs * r.set.size;
	}
	r.lat_x_raw = 0;
	r.bw_of_raw = 1;
	r.has_cpu = rtp_raw.has_cpu;
	r.cpu_busy = rtp_raw.cpu_busy;
	r.cpu_kernel = rtp_raw.cpu_kernel;
	rtp_report(f, fmt, &r);
}

/* The counters of one kind (lcores' or devices') that moved, " name=d". */
static void
counters_moved(FILE *f, const struct rtp_counters *c0,
	       const struct rtp_counters *c1, bool lcore)
{
	const char *const *names = lcore ? c1->lc_names : c1->dev_names;
	unsigned int n = lcore ? c1->nb_lc_counters : c1->nb_dev_counters;

	for (unsigned int k = 0; k < n; k++) {
		uint64_t d = rtp_counter(c1, lcore, names[k]) -
			     rtp_counter(c0, lcore, names[k]);

		if (d != 0)
			fprintf(f, " %s%s=%" PRIu64, lcore ? "lcore." : "",
				names[k], d);
	}
}

/*
 * --counters: every counter that moved between c0 and c1, the devices' and
 * the engine lcores' each summed, "name=delta" on one line.  What a rate
 * figure alone hides: why a lossless run retransmitted (the receiver's
 * ring full, a probe, a NAK), which a benchmark prints beside it.
 */
void
rtp_counters_line(FILE *f, const char *who, const struct rtp_counters *c0,
		  const struct rtp_counters *c1)
{
	fprintf(f, "COUNTERS %s", who);
	counters_moved(f, c0, c1, false);
	counters_moved(f, c0, c1, true);
	fputc('\n', f);
	fflush(f);
}

/* --stats-period: engine counters moved since the last line. */
void
rtp_stats_line(FILE *f, const struct rtp_counters *prev,
	       const struct rtp_counters *cur)
{
#define D(lc, n) (rtp_counter(cur, lc, n) - rtp_counter(prev, lc, n))
	uint64_t busy = D(true, "busy_cycles"), idle = D(true, "idle_cycles");

	fprintf(f, "STATS tx_packets %" PRIu64 " rx_packets %" PRIu64
		" retransmits %" PRIu64 " engine_busy %.1f%% wakeups %" PRIu64
		" doorbell_signals %" PRIu64 "\n",
		D(false, "tx_packets"), D(false, "rx_packets"),
		D(false, "retransmits"),
		busy + idle != 0 ? 100.0 * (double)busy / (double)(busy + idle) : 0,
		D(true, "wakeups_doorbell") + D(true, "wakeups_rx_intr") +
		D(true, "wakeups_timeout"), D(true, "doorbell_signals"));
#undef D
	fflush(f);
}
