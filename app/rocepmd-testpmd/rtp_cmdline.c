/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Commands (testpmd's cmdline.c), on DPDK's cmdline library: completion
 * and help in the interactive prompt, the same commands from a file.
 *
 *   show device|port|qp|lcore [stats]   show results   show settings
 *   set idle busy|yield|sleep|adaptive  set wait poll|event|epoll|hybrid
 *   set size|depth|qps|idle-qps|rate|duration|iters|warmup|hybrid-us|timeout VALUE
 *   set cpus-client|cpus-server LIST
 *   start MODE   stop   help   quit
 */

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>

#include <cmdline.h>
#include <cmdline_parse.h>
#include <cmdline_parse_string.h>
#include <cmdline_rdline.h>
#include <cmdline_socket.h>
#include <rte_ethdev.h>

#include "rtp.h"

#define RTP_PROMPT	"rocepmd> "

/* ---- show -------------------------------------------------------------- */

static void
show_device(FILE *f, bool stats)
{
	const char *names[RTP_MAX_COUNTERS];
	uint64_t vals[RTP_MAX_COUNTERS];

	for (unsigned int d = 0; d < rtp.cfg.nb_ports; d++) {
		const struct rp_port_cfg *pc = &rtp.cfg.port[d];
		uint32_t a = ntohl(pc->ipv4);

		fprintf(f, "device rocepmd%u: port %s ipv4 %u.%u.%u.%u/%u mtu %u lcore %u\n",
			d, pc->ethdev_name, a >> 24, (a >> 16) & 255,
			(a >> 8) & 255, a & 255, pc->prefix_len,
			rp_dev_mtu(d) != 0 ? rp_dev_mtu(d) : pc->mtu,
			pc->lcore);
		if (!stats)
			continue;
		int n = rp_dev_stats_get(d, names, vals, RTP_MAX_COUNTERS);

		for (int i = 0; i < n && i < RTP_MAX_COUNTERS; i++)
			if (vals[i] != 0)
				fprintf(f, "  %-22s %" PRIu64 "\n", names[i],
					vals[i]);
	}
}

static void
show_port(FILE *f, bool stats)
{
	for (unsigned int d = 0; d < rtp.cfg.nb_ports; d++) {
		struct rte_eth_stats st;
		struct rte_ether_addr mac;
		uint16_t id;

		if (rte_eth_dev_get_port_by_name(rtp.cfg.port[d].ethdev_name,
						 &id) != 0)
			continue;
		rte_eth_macaddr_get(id, &mac);
		fprintf(f, "port %u %s: mac " RTE_ETHER_ADDR_PRT_FMT "\n", id,
			rtp.cfg.port[d].ethdev_name,
			RTE_ETHER_ADDR_BYTES(&mac));
		if (stats && rte_eth_stats_get(id, &st) == 0)
			fprintf(f, "  rx %" PRIu64 " tx %" PRIu64 " rx_missed %"
				PRIu64 " rx_errors %" PRIu64 " tx_errors %"
				PRIu64 "\n", st.ipackets, st.opackets,
				st.imissed, st.ierrors, st.oerrors);
	}
}

static void
show_lcore(FILE *f, bool stats)
{
	const char *names[RTP_MAX_COUNTERS];
	uint64_t vals[RTP_MAX_COUNTERS];
	unsigned int lcore;

	for (unsigned int i = 0;; i++) {
		int n = rp_lcore_stats_get(i, &lcore, names, vals,
					   RTP_MAX_COUNTERS);

		if (n < 0)
			break;
		fprintf(f, "engine lcore %u: idle %s\n", lcore,
			rp_idle_policy_name(rtp.idle));
		for (int k = 0; stats && k < n && k < RTP_MAX_COUNTERS; k++)
			fprintf(f, "  %-18s %" PRIu64 "\n", names[k], vals[k]);
	}
}

static void
show_settings(FILE *f)
{
	const struct rtp_settings *s = &rtp.params.set;
	char cli[64] = "all", srv[64] = "all";

	if (s->cpus_cli_set)
		rtp_cpus_fmt(&s->cpus_cli, cli, sizeof(cli));
	if (s->cpus_srv_set)
		rtp_cpus_fmt(&s->cpus_srv, srv, sizeof(srv));
	fprintf(f, "size %u depth %u qps %u idle-qps %u iters %" PRIu64
		" duration %g warmup %" PRIu64
		" rate %g wait %s hybrid-us %u timeout %g idle %s"
		" cpus-client %s cpus-server %s\n",
		s->size, s->depth, s->qps, s->idle_qps, s->iters, s->duration,
		s->warmup,
		s->rate, rtp_wait_name(s->wait), s->hybrid_us, s->timeout,
		rp_idle_policy_name(rtp.idle), cli, srv);
}

/* Processes attached to the devices (--host). */
static void
show_clients(FILE *f)
{
	struct rp_serve_client c[64];
	int n = rp_serve_clients(c, RTE_DIM(c));

	fprintf(f, "%d attached process(es)%s\n", n,
		rtp.params.host ? "" : " (not hosting: --host)");
	for (int i = 0; i < n && i < (int)RTE_DIM(c); i++)
		fprintf(f, "client %u: pid %d (%s) uid %u objects %u qps %u mrs %u requests %" PRIu64 "\n",
			c[i].id, (int)c[i].pid, c[i].comm, c[i].uid,
			c[i].objects, c[i].qps, c[i].mrs, c[i].requests);
}

static void
show_qp(FILE *f)
{
	int ret = rtp_show_qps(f);

	if (ret == -ENOENT)
		fprintf(f, "no QP: QPs live for the length of a run (start MODE, then show qp)\n");
	else if (ret == -ENOTSUP)
		fprintf(f, "the run's QPs are its mode's own (tag modes): not listed\n");
}

void
rtp_show(FILE *f, const char *what, bool stats)
{
	if (strcmp(what, "device") == 0)
		show_device(f, stats);
	else if (strcmp(what, "port") == 0)
		show_port(f, stats);
	else if (strcmp(what, "lcore") == 0)
		show_lcore(f, stats);
	else if (strcmp(what, "qp") == 0)
		show_qp(f);
	else if (strcmp(what, "settings") == 0)
		show_settings(f);
	else if (strcmp(what, "clients") == 0)
		show_clients(f);
	else if (strcmp(what, "results") == 0) {
		rtp_report_header(f, rtp.params.format);
		rtp_report_raw(f, rtp.params.format);
		for (unsigned int i = 0; i < rtp.nb_results; i++)
			rtp_report(f, rtp.params.format, &rtp.results[i]);
	}
}

/* ---- command definitions ----------------------------------------------- */

struct cmd_show {
	cmdline_fixed_string_t show;
	cmdline_fixed_string_t what;
	cmdline_fixed_string_t stats;
};

static void
cmd_show_cb(void *parsed, struct cmdline *cl, void *data)
{
	struct cmd_show *r = parsed;

	(void)cl;
	rtp_show(stdout, r->what, data != NULL);
	fflush(stdout);
}

static cmdline_parse_token_string_t cmd_show_show =
	TOKEN_STRING_INITIALIZER(struct cmd_show, show, "show");
static cmdline_parse_token_string_t cmd_show_what =
	TOKEN_STRING_INITIALIZER(struct cmd_show, what,
				 "device#port#qp#lcore#results#settings#clients");
static cmdline_parse_token_string_t cmd_show_what_stats =
	TOKEN_STRING_INITIALIZER(struct cmd_show, what, "device#port#lcore");
static cmdline_parse_token_string_t cmd_show_stats =
	TOKEN_STRING_INITIALIZER(struct cmd_show, stats, "stats");

static cmdline_parse_inst_t cmd_show_inst = {
	.f = cmd_show_cb,
	.data = NULL,
	.help_str = "show device|port|qp|lcore|results|settings|clients",
	.tokens = {
		(void *)&cmd_show_show,
		(void *)&cmd_show_what,
		NULL,
	},
};

static cmdline_parse_inst_t cmd_show_stats_inst = {
	.f = cmd_show_cb,
	.data = (void *)1,
	.help_str = "show device|port|lcore stats: with counters",
	.tokens = {
		(void *)&cmd_show_show,
		(void *)&cmd_show_what_stats,
		(void *)&cmd_show_stats,
		NULL,
	},
};

struct cmd_set {
	cmdline_fixed_string_t set;
	cmdline_fixed_string_t what;
	cmdline_fixed_string_t value;
};

static int rtp_cmd_status;	/* last command's result, for files */

static void
cmd_set_cb(void *parsed, struct cmdline *cl, void *data)
{
	struct cmd_set *r = parsed;
	enum rp_idle_policy idle;
	int ret = 0;

	(void)cl;
	(void)data;
	/*
	 * The engine lcores read their idle policy once per pass
	 * (rp_engine_set_idle): it may change under a run, whose row then
	 * says both ("busy>sleep").  The run's settings may not.
	 */
	if (rtp_running() && strcmp(r->what, "idle") != 0) {
		fprintf(stderr, "set %s: a run is in progress: stop it first (only 'set idle' applies during a run)\n",
			r->what);
		rtp_cmd_status = -EBUSY;
		return;
	}
	if (strcmp(r->what, "idle") == 0) {
		ret = rtp_idle_parse(r->value, &idle);
		if (ret == 0)
			ret = rtp_set_idle(idle);
		if (ret < 0)
			fprintf(stderr, "set idle: bad value '%s' (busy, yield, sleep or adaptive)\n",
				r->value);
	} else {
		ret = rtp_setting_set(&rtp.params.set, r->what, r->value);
	}
	rtp_cmd_status = ret;
}

static cmdline_parse_token_string_t cmd_set_set =
	TOKEN_STRING_INITIALIZER(struct cmd_set, set, "set");
static cmdline_parse_token_string_t cmd_set_idle =
	TOKEN_STRING_INITIALIZER(struct cmd_set, what, "idle");
static cmdline_parse_token_string_t cmd_set_idle_val =
	TOKEN_STRING_INITIALIZER(struct cmd_set, value,
				 "busy#yield#sleep#adaptive");
static cmdline_parse_token_string_t cmd_set_wait =
	TOKEN_STRING_INITIALIZER(struct cmd_set, what, "wait");
static cmdline_parse_token_string_t cmd_set_wait_val =
	TOKEN_STRING_INITIALIZER(struct cmd_set, value,
				 "poll#event#epoll#hybrid");
static cmdline_parse_token_string_t cmd_set_num =
	TOKEN_STRING_INITIALIZER(struct cmd_set, what,
		"size#depth#qps#idle-qps#rate#duration#iters#warmup#hybrid-us#timeout");
static cmdline_parse_token_string_t cmd_set_num_val =
	TOKEN_STRING_INITIALIZER(struct cmd_set, value, NULL);
static cmdline_parse_token_string_t cmd_set_cpus =
	TOKEN_STRING_INITIALIZER(struct cmd_set, what,
				 "cpus-client#cpus-server");

static cmdline_parse_inst_t cmd_set_idle_inst = {
	.f = cmd_set_cb,
	.help_str = "set idle busy|yield|sleep|adaptive: engine idle policy",
	.tokens = {
		(void *)&cmd_set_set, (void *)&cmd_set_idle,
		(void *)&cmd_set_idle_val, NULL,
	},
};

static cmdline_parse_inst_t cmd_set_wait_inst = {
	.f = cmd_set_cb,
	.help_str = "set wait poll|event|epoll|hybrid: completion mode",
	.tokens = {
		(void *)&cmd_set_set, (void *)&cmd_set_wait,
		(void *)&cmd_set_wait_val, NULL,
	},
};

static cmdline_parse_inst_t cmd_set_num_inst = {
	.f = cmd_set_cb,
	.help_str = "set size|depth|qps|idle-qps|rate|duration|iters|warmup|hybrid-us|timeout VALUE",
	.tokens = {
		(void *)&cmd_set_set, (void *)&cmd_set_num,
		(void *)&cmd_set_num_val, NULL,
	},
};

static cmdline_parse_inst_t cmd_set_cpus_inst = {
	.f = cmd_set_cb,
	.help_str = "set cpus-client|cpus-server LIST: the thread's CPUs (0, 0-1, 0,2)",
	.tokens = {
		(void *)&cmd_set_set, (void *)&cmd_set_cpus,
		(void *)&cmd_set_num_val, NULL,
	},
};

struct cmd_start {
	cmdline_fixed_string_t start;
	cmdline_fixed_string_t mode;
};

static bool rtp_async;		/* interactive: start returns at once */

static void
cmd_start_cb(void *parsed, struct cmdline *cl, void *data)
{
	struct cmd_start *r = parsed;

	(void)cl;
	(void)data;
	rtp_cmd_status = rtp_start_mode(r->mode, rtp_async);
	if (rtp_async && rtp_cmd_status == 0)
		printf("%s running: `stop` ends it, `show results` when done\n",
		       r->mode);
}

static cmdline_parse_token_string_t cmd_start_start =
	TOKEN_STRING_INITIALIZER(struct cmd_start, start, "start");
static cmdline_parse_token_string_t cmd_start_mode =
	TOKEN_STRING_INITIALIZER(struct cmd_start, mode,
		"send_lat#send_bw#write_lat#write_bw#read_lat#read_bw#"
		"atomic_lat#tag_eager#tag_rndv");

static cmdline_parse_inst_t cmd_start_inst = {
	.f = cmd_start_cb,
	.help_str = "start MODE: run a traffic mode with the settings",
	.tokens = {
		(void *)&cmd_start_start, (void *)&cmd_start_mode, NULL,
	},
};

struct cmd_word {
	cmdline_fixed_string_t word;
};

static void
cmd_word_cb(void *parsed, struct cmdline *cl, void *data)
{
	struct cmd_word *r = parsed;

	(void)data;
	if (strcmp(r->word, "stop") == 0) {
		rtp_cmd_status = rtp_stop();
		if (rtp_cmd_status == -ENOENT) {
			fprintf(stderr, "stop: no run in progress\n");
		}
	} else if (strcmp(r->word, "quit") == 0) {
		rtp.quit = true;
		cmdline_quit(cl);
	} else {
		printf("commands:\n"
		       "  show device|port|qp|lcore [stats]\n"
		       "  show results | show settings | show clients\n"
		       "  set idle busy|yield|sleep|adaptive\n"
		       "  set wait poll|event|epoll|hybrid\n"
		       "  set size|depth|qps|idle-qps|rate|duration|iters|warmup|hybrid-us|timeout VALUE\n"
		       "  set cpus-client|cpus-server LIST\n"
		       "  start MODE | stop | quit\n"
		       "modes:\n");
		rtp_mode_list(stdout);
	}
}

static cmdline_parse_token_string_t cmd_word_word =
	TOKEN_STRING_INITIALIZER(struct cmd_word, word, "stop#quit#help");

static cmdline_parse_inst_t cmd_word_inst = {
	.f = cmd_word_cb,
	.help_str = "stop: end the run | quit | help",
	.tokens = { (void *)&cmd_word_word, NULL },
};

static cmdline_parse_ctx_t rtp_ctx[] = {
	&cmd_show_inst,
	&cmd_show_stats_inst,
	&cmd_set_idle_inst,
	&cmd_set_wait_inst,
	&cmd_set_num_inst,
	&cmd_set_cpus_inst,
	&cmd_start_inst,
	&cmd_word_inst,
	NULL,
};

int
rtp_cmdline_interactive(void)
{
	struct cmdline *cl = cmdline_stdin_new(rtp_ctx, RTP_PROMPT);

	if (cl == NULL)
		return -ENOMEM;
	rtp_async = true;
	cmdline_interact(cl);
	cmdline_stdin_exit(cl);
	rtp_async = false;
	return 0;
}

/*
 * A command file: each line through the same parser; a line that is no
 * command, or a command that fails, is an error (the rest still runs).
 */
int
rtp_cmdline_file(const char *path)
{
	struct cmdline *cl;
	char line[512];
	unsigned int lineno = 0;
	int status = 0;
	FILE *f = fopen(path, "r");

	if (f == NULL) {
		fprintf(stderr, "%s: %s\n", path, strerror(errno));
		return -errno;
	}
	cl = cmdline_new(rtp_ctx, "", -1, STDOUT_FILENO);
	if (cl == NULL) {
		fclose(f);
		return -ENOMEM;
	}
	while (!rtp.quit && fgets(line, sizeof(line), f) != NULL) {
		char *p = line + strspn(line, " \t");
		int ret;

		lineno++;
		if (*p == '#' || *p == '\n' || *p == '\0')
			continue;
		rtp_cmd_status = 0;
		/* the line's length on success, else CMDLINE_PARSE_* < 0 */
		ret = cmdline_parse(cl, p);
		if (ret < 0) {
			p[strcspn(p, "\n")] = '\0';
			fprintf(stderr, "%s:%u: %s: '%s'\n", path, lineno,
				ret == CMDLINE_PARSE_AMBIGUOUS ? "ambiguous command" :
				ret == CMDLINE_PARSE_NOMATCH ? "no such command" :
				"bad arguments", p);
			status = -EINVAL;
		} else if (rtp_cmd_status < 0) {
			p[strcspn(p, "\n")] = '\0';
			fprintf(stderr, "%s:%u: '%s' failed\n", path, lineno, p);
			status = rtp_cmd_status;
		}
	}
	fclose(f);
	cmdline_free(cl);
	return status;
}
