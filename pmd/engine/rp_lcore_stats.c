/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Engine lcores' counters: their names, the stop log, the engine API
 * (rp_lcore_stats_get()) and telemetry's /rocepmd/lcores.
 */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>

#include <rte_cycles.h>
#include <rte_telemetry.h>

#include "rp_log.h"
#include "rp_lcore.h"

static const char * const rp_lc_stat_names[RP_LC_STAT_MAX] = {
	[RP_LC_BUSY_CYCLES] = "busy_cycles",
	[RP_LC_IDLE_CYCLES] = "idle_cycles",
	[RP_LC_POLLS] = "polls",
	[RP_LC_POLLS_BUSY] = "polls_busy",
	[RP_LC_YIELDS] = "yields",
	[RP_LC_NAPS] = "naps",
	[RP_LC_BLOCKS] = "sleeps",
	[RP_LC_BLOCKS_ABORTED] = "sleeps_aborted",
	[RP_LC_WAKE_DOORBELL] = "wakeups_doorbell",
	[RP_LC_WAKE_RX_INTR] = "wakeups_rx_intr",
	[RP_LC_WAKE_RX_SOCK] = "wakeups_rx_socket",
	[RP_LC_WAKE_TIMEOUT] = "wakeups_timeout",
	[RP_LC_DOORBELL_SIGNALS] = "doorbell_signals",
	[RP_LC_INLINE_PASSES] = "inline_passes",
	[RP_LC_INLINE_SPLIT] = "inline_split_passes",
	[RP_LC_INLINE_BUSY_CYCLES] = "inline_busy_cycles",
	[RP_LC_STAND_ASIDES] = "stand_asides",
	[RP_LC_WAKE_CLIENT] = "wakeups_client",
	[RP_LC_STARVED] = "starved_passes",
	[RP_LC_STARVED_US] = "starved_us",
	[RP_LC_INLINE_THREADS] = "inline_threads",
	[RP_LC_SIGNAL_YIELDS] = "signal_yields",
	[RP_LC_SPIN_YIELDS] = "spin_yields",
	[RP_LC_SPIN_YIELDS_LONG] = "spin_yields_long",
	[RP_LC_SPIN_GROWS] = "spin_grows",
	[RP_LC_SPIN_SHRINKS] = "spin_shrinks",
	[RP_LC_SIGNAL_PASSES] = "signal_passes",
	[RP_LC_TOKEN_YIELDS] = "token_yields",
	[RP_LC_SPIN_NAPS] = "spin_naps",
	[RP_LC_NAP_TRIALS] = "nap_trials",
	[RP_LC_NAP_ON] = "nap_on",
	[RP_LC_NAP_OFF] = "nap_off",
};

/* Counter s: the lcore's own and its inline passes' (by first lane). */
uint64_t
rp_lcore_stat(const struct rp_lcore_ctx *lc, unsigned int s)
{
	uint64_t v = rp_load_relaxed(&lc->stats[s]);

	for (unsigned int i = 0; i < RP_MAX_PORTS; i++)
		v += rp_load_relaxed(&lc->lanes[i].stats[s]);
	return v;
}

/* The counters that moved, at INFO level, when an engine lcore stops. */
void
rp_lcore_stats_log(const struct rp_lcore_ctx *lc)
{
	for (unsigned int i = 0; i < RP_LC_STAT_MAX; i++) {
		uint64_t v = rp_lcore_stat(lc, i);

		if (v != 0)
			RP_LOG(INFO, "engine lcore %u: %s %" PRIu64, lc->lcore,
			       rp_lc_stat_names[i], v);
	}
}

int
rp_lcore_stats_get(unsigned int idx, unsigned int *lcore,
		   const char **names, uint64_t *vals, unsigned int n)
{
	const struct rp_lcore_ctx *lc;

	if (idx >= rp_load_relaxed(&rp_nr_lcores))
		return -ENOENT;
	lc = &rp_lcores[idx];
	if (lcore != NULL)
		*lcore = lc->lcore;
	for (unsigned int s = 0; s < RP_LC_STAT_MAX && s < n; s++) {
		if (names != NULL)
			names[s] = rp_lc_stat_names[s];
		if (vals != NULL)
			vals[s] = rp_lcore_stat(lc, s);
	}
	return RP_LC_STAT_MAX;
}

/* /rocepmd/lcores: the counters of every engine lcore. */
static int
lcores_cmd(const char *cmd __rte_unused, const char *params __rte_unused,
	   struct rte_tel_data *d)
{
	unsigned int n = rp_load_relaxed(&rp_nr_lcores);

	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_u64(d, "tsc_hz", rte_get_timer_hz());
	if (n != 0) {
		char idle[64];

		rte_tel_data_add_dict_string(d, "inline_why", rp_inline.brief);
		rte_tel_data_add_dict_string(d, "cpu_idle",
				rp_cpu_idle_brief(&rp_cpu_idle, idle,
						  sizeof(idle)));
	}
	for (unsigned int i = 0; i < n; i++) {
		const struct rp_lcore_ctx *lc = &rp_lcores[i];
		struct rte_tel_data *c = rte_tel_data_alloc();
		char name[32];

		if (c == NULL)
			return -ENOMEM;
		rte_tel_data_start_dict(c);
		rte_tel_data_add_dict_string(c, "idle",
				rp_idle_policy_name(rp_load_relaxed(&lc->idle)));
		rte_tel_data_add_dict_string(c, "inline",
				rp_inline_kind_name(lc->inline_kind));
		rte_tel_data_add_dict_u64(c, "inline_us",
				lc->inline_mode ? rp_inline.us : 0);
		for (unsigned int s = 0; s < RP_LC_STAT_MAX; s++)
			rte_tel_data_add_dict_u64(c, rp_lc_stat_names[s],
					rp_lcore_stat(lc, s));
		snprintf(name, sizeof(name), "lcore%u", lc->lcore);
		rte_tel_data_add_dict_container(d, name, c, 0);
	}
	return 0;
}

RTE_INIT(rp_lcore_telemetry_init)
{
	rte_telemetry_register_cmd("/rocepmd/lcores", lcores_cmd,
				   "Engine lcore counters (idle policy, busy and idle cycles, wake-ups). No parameters");
}
