/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Command-line options (testpmd's parameters.c), and the engine
 * configuration they make: --port options become the [port] sections of a
 * configuration that the engine's own loader (rp_cfg_load) validates, so
 * their values and defaults are those of the configuration file.
 */

#include <errno.h>
#include <getopt.h>
#include <grp.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <rte_common.h>

#include "rtp.h"

static const char * const rtp_wait_names[RTP_WAIT_MAX] = {
	[RTP_WAIT_POLL] = "poll",
	[RTP_WAIT_EVENT] = "event",
	[RTP_WAIT_EPOLL] = "epoll",
	[RTP_WAIT_HYBRID] = "hybrid",
};

const char *
rtp_wait_name(enum rtp_wait_mode m)
{
	return (unsigned int)m < RTP_WAIT_MAX ? rtp_wait_names[m] : "invalid";
}

int
rtp_wait_parse(const char *s, enum rtp_wait_mode *m)
{
	for (unsigned int i = 0; i < RTP_WAIT_MAX; i++)
		if (strcmp(s, rtp_wait_names[i]) == 0) {
			*m = (enum rtp_wait_mode)i;
			return 0;
		}
	return -EINVAL;
}

int
rtp_idle_parse(const char *s, enum rp_idle_policy *idle)
{
	for (unsigned int i = 0; i < RP_IDLE_MAX; i++)
		if (strcmp(s, rp_idle_policy_name((enum rp_idle_policy)i)) == 0) {
			*idle = (enum rp_idle_policy)i;
			return 0;
		}
	return -EINVAL;
}

int
rtp_u64_parse(const char *s, uint64_t min, uint64_t max, uint64_t *v)
{
	char *end;
	unsigned long long x;

	if (s == NULL || *s == '\0' || *s == '-')
		return -EINVAL;
	errno = 0;
	x = strtoull(s, &end, 0);
	if (errno != 0 || *end != '\0' || x < min || x > max)
		return -EINVAL;
	*v = x;
	return 0;
}

int
rtp_double_parse(const char *s, double min, double max, double *v)
{
	char *end;
	double x;

	if (s == NULL || *s == '\0')
		return -EINVAL;
	errno = 0;
	x = strtod(s, &end);
	if (errno != 0 || *end != '\0' || !isfinite(x) || x < min || x > max)
		return -EINVAL;
	*v = x;
	return 0;
}

/* A CPU list, "0-1" or "0,2" (taskset -c, EAL -l): 0, or -EINVAL. */
int
rtp_cpus_parse(const char *s, cpu_set_t *set)
{
	const char *p = s;

	CPU_ZERO(set);
	for (;;) {
		char *end;
		unsigned long a, b;

		if (*p < '0' || *p > '9')
			return -EINVAL;
		a = strtoul(p, &end, 10);
		b = a;
		if (*end == '-') {
			p = end + 1;
			if (*p < '0' || *p > '9')
				return -EINVAL;
			b = strtoul(p, &end, 10);
		}
		if (a > b || b >= CPU_SETSIZE)
			return -EINVAL;
		for (unsigned long c = a; c <= b; c++)
			CPU_SET(c, set);
		if (*end == '\0')
			return 0;
		if (*end != ',')
			return -EINVAL;
		p = end + 1;
	}
}

/* The same list back, runs of CPUs as ranges ("0-3,6"); "-" if empty. */
void
rtp_cpus_fmt(const cpu_set_t *set, char *buf, size_t len)
{
	size_t off = 0;

	buf[0] = '\0';
	for (int c = 0; c < CPU_SETSIZE && off < len; c++) {
		int e = c;

		if (!CPU_ISSET(c, set))
			continue;
		while (e + 1 < CPU_SETSIZE && CPU_ISSET(e + 1, set))
			e++;
		off += (size_t)snprintf(buf + off, len - off, e > c ?
					"%s%d-%d" : "%s%d", off != 0 ? "," : "",
					c, e);
		c = e;
	}
	if (buf[0] == '\0')
		snprintf(buf, len, "-");
}

void
rtp_settings_default(struct rtp_settings *s)
{
	memset(s, 0, sizeof(*s));
	s->size = 64;
	s->depth = 64;
	s->qps = 1;
	s->iters = 10000;
	s->duration = 0;
	s->warmup = 100;
	s->rate = 0;
	s->wait = RTP_WAIT_POLL;
	s->hybrid_us = 20;
	s->timeout = 10;
}

void
rtp_usage(FILE *f)
{
	fprintf(f,
"usage: " RTP_NAME " [EAL options] -- [options]\n"
"\n"
"Devices (one of):\n"
"  --port NAME,ip=A.B.C.D/P[,mtu=N][,lcore=N][,KEY=VALUE...]\n"
"                        a rocepmd device on DPDK port NAME (a --vdev or -a\n"
"                        of the EAL options); repeat for each device; other\n"
"                        KEYs are [port] settings of the configuration\n"
"                        (tx_zero_copy=on, selective_retx=on, ...)\n"
"  --config FILE         a rocepmd configuration file (EAL options from it)\n"
"Two processes (one device each, perftest's way):\n"
"  --server              serve the runs of clients until SIGINT/SIGTERM\n"
"  --client HOST         run each mode against the server on HOST\n"
"  --oob-port N          TCP port of the exchange (18515)\n"
"Host (programs attach: rocepmd-run --attach SOCKET -- PROGRAM):\n"
"  --host[=SOCKET]       serve the devices on a UNIX socket (default\n"
"                        " RP_SERVE_DIR "/<config name>.sock); alone: until\n"
"                        SIGINT/SIGTERM, else beside the runs\n"
"  --host-mode MODE      socket permissions, octal (0660)\n"
"  --host-group GROUP    socket group (the process's)\n"
"What to run:\n"
"  --mode MODE           run MODE and exit\n"
"  -i, --interactive     prompt (DPDK cmdline: completion, help)\n"
"  --cmdline-file FILE   run the commands of FILE, then exit (or prompt, -i)\n"
"  --list-modes          print the traffic modes\n"
"Settings (also `set` commands):\n"
"  --size N (64)  --depth N (64)  --qps N (1)  --iters N (10000)\n"
"  --idle-qps N (0)      more QPs per side, connected and never used\n"
"  --duration S (0: --iters)  --warmup N (100)  --rate MSGS_PER_S (0: max)\n"
"  --wait poll|event|epoll|hybrid (poll)  --hybrid-us N (20)\n"
"  --timeout S (10)      fail when a completion takes longer\n"
"  --cq-mod COUNT[,US]   CQ moderation (ibv_modify_cq): an event waits for\n"
"                        COUNT completions or US us after the first (0,0)\n"
"  --cpus-client LIST    CPUs of the client thread, e.g. 0 or 0-1 or 0,2\n"
"  --cpus-server LIST    CPUs of the server thread (both: every CPU); the\n"
"                        engine lcores' come from the EAL (-l, --lcores)\n"
"Engine:\n"
"  --idle busy|yield|sleep|adaptive   idle policy (default: the config's,\n"
"                        or yield)\n"
"  --idle-us N           idle time before yielding, sleeping or blocking\n"
"                        (default 30)\n"
"  --spin-nap on|off     adaptive: nap in place of the spin where naps cost\n"
"                        no work (default on)\n"
"  --inline-us auto|N    inline mode: polling threads run engine passes, the\n"
"                        lcore stands aside until none has run one for N us\n"
"                        (0: off; auto, the default: decided from the CPUs,\n"
"                        see --check)\n"
"Raw limit:\n"
"  --raw / --no-raw      measure plain UDP frames on the ports before the\n"
"                        engine starts (default: on with two --port);\n"
"                        --server --raw / --client HOST --raw: between the\n"
"                        two processes (the server waits for a --raw client)\n"
"  --raw-only            the raw limit alone, then exit (no engine): the\n"
"                        yardstick of an af_xdp port, whose AF_XDP socket\n"
"                        the engine could not take over after it\n"
"Output:\n"
"  --json, --csv         results as JSON or CSV instead of the table\n"
"  --out FILE            write results to FILE (default stdout)\n"
"  --stats-period N      a counter line every N seconds during a run\n"
"  --counters            after each run (and each served run): every\n"
"                        engine counter that moved, a COUNTERS line\n"
"  -h, --help\n");
}

enum {
	OPT_PORT = 256, OPT_CONFIG, OPT_MODE, OPT_CMDFILE, OPT_LIST, OPT_SIZE,
	OPT_DEPTH, OPT_QPS, OPT_IDLE_QPS, OPT_ITERS, OPT_DURATION, OPT_WARMUP, OPT_RATE,
	OPT_WAIT, OPT_HYBRID, OPT_TIMEOUT, OPT_CPUS_CLI, OPT_CPUS_SRV,
	OPT_IDLE, OPT_IDLE_US, OPT_SPIN_NAP, OPT_INLINE_US, OPT_CQ_MOD,
	OPT_RAW,
	OPT_NO_RAW, OPT_RAW_ONLY, OPT_JSON, OPT_CSV, OPT_OUT, OPT_STATS, OPT_COUNTERS,
	OPT_SERVER,
	OPT_HOST, OPT_HOST_MODE, OPT_HOST_GROUP,
	OPT_CLIENT, OPT_OOB_PORT,
};

static const struct option rtp_opts[] = {
	{ "port", required_argument, NULL, OPT_PORT },
	{ "config", required_argument, NULL, OPT_CONFIG },
	{ "mode", required_argument, NULL, OPT_MODE },
	{ "interactive", no_argument, NULL, 'i' },
	{ "cmdline-file", required_argument, NULL, OPT_CMDFILE },
	{ "list-modes", no_argument, NULL, OPT_LIST },
	{ "size", required_argument, NULL, OPT_SIZE },
	{ "depth", required_argument, NULL, OPT_DEPTH },
	{ "qps", required_argument, NULL, OPT_QPS },
	{ "idle-qps", required_argument, NULL, OPT_IDLE_QPS },
	{ "iters", required_argument, NULL, OPT_ITERS },
	{ "duration", required_argument, NULL, OPT_DURATION },
	{ "warmup", required_argument, NULL, OPT_WARMUP },
	{ "rate", required_argument, NULL, OPT_RATE },
	{ "wait", required_argument, NULL, OPT_WAIT },
	{ "hybrid-us", required_argument, NULL, OPT_HYBRID },
	{ "timeout", required_argument, NULL, OPT_TIMEOUT },
	{ "cpus-client", required_argument, NULL, OPT_CPUS_CLI },
	{ "cpus-server", required_argument, NULL, OPT_CPUS_SRV },
	{ "idle", required_argument, NULL, OPT_IDLE },
	{ "idle-us", required_argument, NULL, OPT_IDLE_US },
	{ "spin-nap", required_argument, NULL, OPT_SPIN_NAP },
	{ "inline-us", required_argument, NULL, OPT_INLINE_US },
	{ "cq-mod", required_argument, NULL, OPT_CQ_MOD },
	{ "raw", no_argument, NULL, OPT_RAW },
	{ "no-raw", no_argument, NULL, OPT_NO_RAW },
	{ "raw-only", no_argument, NULL, OPT_RAW_ONLY },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "csv", no_argument, NULL, OPT_CSV },
	{ "out", required_argument, NULL, OPT_OUT },
	{ "stats-period", required_argument, NULL, OPT_STATS },
	{ "counters", no_argument, NULL, OPT_COUNTERS },
	{ "server", no_argument, NULL, OPT_SERVER },
	{ "host", optional_argument, NULL, OPT_HOST },
	{ "host-mode", required_argument, NULL, OPT_HOST_MODE },
	{ "host-group", required_argument, NULL, OPT_HOST_GROUP },
	{ "client", required_argument, NULL, OPT_CLIENT },
	{ "oob-port", required_argument, NULL, OPT_OOB_PORT },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/* A [port] setting KEY=VALUE for the configuration text: a key of
 * lowercase letters, digits and '_', a value without a line break (the
 * configuration's parser judges both). */
static int
port_more(char *more, size_t len, const char *tok)
{
	const char *eq = strchr(tok, '=');
	size_t used = strlen(more);
	int n;

	if (eq == NULL || eq == tok || eq[1] == '\0' ||
	    strspn(tok, "abcdefghijklmnopqrstuvwxyz0123456789_") !=
	    (size_t)(eq - tok) || strpbrk(eq, "\r\n;#") != NULL)
		return -EINVAL;
	n = snprintf(more + used, len - used, "%.*s = %s\n", (int)(eq - tok),
		     tok, eq + 1);
	if (n < 0 || (size_t)n >= len - used) {
		more[used] = '\0';
		return -E2BIG;
	}
	return 0;
}

/* NAME,ip=A/P[,mtu=N][,lcore=N][,KEY=VALUE...] */
static int
port_parse(struct rtp_params *p, const char *arg)
{
	char buf[RP_CFG_STR];
	char *save = NULL, *tok;
	uint64_t v;

	if (p->nb_ports >= RP_MAX_PORTS) {
		fprintf(stderr, "--port: at most %u ports\n", RP_MAX_PORTS);
		return -EINVAL;
	}
	if (strlen(arg) >= sizeof(buf)) {
		fprintf(stderr, "--port %s: too long\n", arg);
		return -EINVAL;
	}
	strcpy(buf, arg);
	tok = strtok_r(buf, ",", &save);
	if (tok == NULL || strchr(tok, '=') != NULL ||
	    strlen(tok) >= sizeof(p->port[0].name)) {
		fprintf(stderr, "--port %s: NAME first (the DPDK port)\n", arg);
		return -EINVAL;
	}
	strcpy(p->port[p->nb_ports].name, tok);
	while ((tok = strtok_r(NULL, ",", &save)) != NULL) {
		if (strncmp(tok, "ip=", 3) == 0 &&
		    strlen(tok + 3) < sizeof(p->port[0].ipv4)) {
			strcpy(p->port[p->nb_ports].ipv4, tok + 3);
		} else if (strncmp(tok, "mtu=", 4) == 0 &&
			   rtp_u64_parse(tok + 4, 256, 4096, &v) == 0) {
			p->port[p->nb_ports].mtu = (uint32_t)v;
		} else if (strncmp(tok, "lcore=", 6) == 0 &&
			   rtp_u64_parse(tok + 6, 0, 1023, &v) == 0) {
			p->port[p->nb_ports].lcore = (uint32_t)v;
			p->port[p->nb_ports].lcore_set = true;
		} else if (strncmp(tok, "ip=", 3) != 0 &&
			   strncmp(tok, "mtu=", 4) != 0 &&
			   strncmp(tok, "lcore=", 6) != 0 &&
			   port_more(p->port[p->nb_ports].more,
				     sizeof(p->port[0].more), tok) == 0) {
			continue;
		} else {
			fprintf(stderr, "--port %s: bad '%s' (ip=A.B.C.D/P, mtu=256..4096, lcore=N, KEY=VALUE)\n",
				arg, tok);
			return -EINVAL;
		}
	}
	if (p->port[p->nb_ports].ipv4[0] == '\0') {
		fprintf(stderr, "--port %s: ip=A.B.C.D/P is required\n", arg);
		return -EINVAL;
	}
	p->nb_ports++;
	return 0;
}

static int
bad(const char *opt, const char *val, const char *want)
{
	fprintf(stderr, "%s: bad value '%s' (%s)\n", opt, val, want);
	return -EINVAL;
}

/* Settings shared with `set` (rtp_cmdline.c): 0, or -EINVAL printed. */
static int
setting_parse(struct rtp_settings *s, int opt, const char *val)
{
	uint64_t v;
	double d;

	switch (opt) {
	case OPT_SIZE:
		if (rtp_u64_parse(val, 1, RTP_MAX_SIZE, &v) < 0)
			return bad("--size", val, "1..1048576");
		s->size = (uint32_t)v;
		return 0;
	case OPT_DEPTH:
		if (rtp_u64_parse(val, 1, RTP_MAX_DEPTH, &v) < 0)
			return bad("--depth", val, "1..1024");
		s->depth = (uint32_t)v;
		return 0;
	case OPT_QPS:
		if (rtp_u64_parse(val, 1, RTP_MAX_QPS, &v) < 0)
			return bad("--qps", val, "1..64");
		s->qps = (uint32_t)v;
		return 0;
	case OPT_IDLE_QPS:
		if (rtp_u64_parse(val, 0, RTP_MAX_IDLE_QPS, &v) < 0)
			return bad("--idle-qps", val, "0..4096");
		s->idle_qps = (uint32_t)v;
		return 0;
	case OPT_ITERS:
		if (rtp_u64_parse(val, 1, UINT64_MAX / 2, &v) < 0)
			return bad("--iters", val, "a positive count");
		s->iters = v;
		s->duration = 0;
		return 0;
	case OPT_DURATION:
		if (rtp_double_parse(val, 0.001, 86400, &d) < 0)
			return bad("--duration", val, "seconds, 0.001..86400");
		s->duration = d;
		s->iters = 0;
		return 0;
	case OPT_WARMUP:
		if (rtp_u64_parse(val, 0, UINT64_MAX / 2, &v) < 0)
			return bad("--warmup", val, "a count");
		s->warmup = v;
		return 0;
	case OPT_RATE:
		if (rtp_double_parse(val, 0, 1e9, &d) < 0)
			return bad("--rate", val, "messages/s, 0 for no limit");
		s->rate = d;
		return 0;
	case OPT_WAIT:
		if (rtp_wait_parse(val, &s->wait) < 0)
			return bad("--wait", val, "poll, event, epoll or hybrid");
		return 0;
	case OPT_HYBRID:
		if (rtp_u64_parse(val, 0, 1000000, &v) < 0)
			return bad("--hybrid-us", val, "0..1000000");
		s->hybrid_us = (uint32_t)v;
		return 0;
	case OPT_TIMEOUT:
		if (rtp_double_parse(val, 0.01, 3600, &d) < 0)
			return bad("--timeout", val, "seconds, 0.01..3600");
		s->timeout = d;
		return 0;
	case OPT_CPUS_CLI:
		if (rtp_cpus_parse(val, &s->cpus_cli) < 0)
			return bad("--cpus-client", val, "a CPU list: 0, 0-1, 0,2");
		s->cpus_cli_set = true;
		return 0;
	case OPT_CPUS_SRV:
		if (rtp_cpus_parse(val, &s->cpus_srv) < 0)
			return bad("--cpus-server", val, "a CPU list: 0, 0-1, 0,2");
		s->cpus_srv_set = true;
		return 0;
	}
	return -EINVAL;
}

int
rtp_setting_set(struct rtp_settings *s, const char *name, const char *val)
{
	for (unsigned int i = 0; rtp_opts[i].name != NULL; i++)
		if (strcmp(rtp_opts[i].name, name) == 0 &&
		    rtp_opts[i].val >= OPT_SIZE && rtp_opts[i].val <= OPT_CPUS_SRV)
			return setting_parse(s, rtp_opts[i].val, val);
	return -ENOENT;
}

int
rtp_params_parse(int argc, char **argv, struct rtp_params *p)
{
	uint64_t v;
	bool raw_set = false;
	int c;

	memset(p, 0, sizeof(*p));
	rtp_settings_default(&p->set);
	p->idle = RP_IDLE_YIELD;
	p->oob_port = RTP_OOB_PORT;
	p->idle_us = 30;	/* the engine's default */
	p->spin_nap = true;	/* the engine's default */
	p->host_mode = 0660;
	p->host_gid = -1;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":ih", rtp_opts, NULL)) != -1) {
		switch (c) {
		case OPT_PORT:
			if (port_parse(p, optarg) < 0)
				return -EINVAL;
			break;
		case OPT_CONFIG:
			p->config = optarg;
			break;
		case OPT_MODE:
			if (rtp_mode_find(optarg) == NULL) {
				fprintf(stderr, "--mode: unknown mode '%s'; modes:\n",
					optarg);
				rtp_mode_list(stderr);
				return -EINVAL;
			}
			p->mode = optarg;
			break;
		case 'i':
			p->interactive = true;
			break;
		case OPT_CMDFILE:
			p->cmdline_file = optarg;
			break;
		case OPT_LIST:
			rtp_mode_list(stdout);
			return 1;
		case OPT_IDLE:
			if (rtp_idle_parse(optarg, &p->idle) < 0)
				return bad("--idle", optarg,
					   "busy, yield, sleep or adaptive");
			p->idle_set = true;
			break;
		case OPT_IDLE_US:
			if (rtp_u64_parse(optarg, 0, 10000000, &v) < 0)
				return bad("--idle-us", optarg, "0..10000000");
			p->idle_us = (uint32_t)v;
			break;
		case OPT_SPIN_NAP:
			if (strcmp(optarg, "on") != 0 &&
			    strcmp(optarg, "off") != 0)
				return bad("--spin-nap", optarg, "on or off");
			p->spin_nap = strcmp(optarg, "on") == 0;
			break;
		case OPT_INLINE_US:
			if (strcmp(optarg, "auto") == 0)
				v = RP_INLINE_AUTO;
			else if (rtp_u64_parse(optarg, 0, 100000, &v) < 0)
				return bad("--inline-us", optarg,
					   "auto or 0..100000");
			p->inline_us = (uint32_t)v;
			p->inline_set = true;
			break;
		case OPT_CQ_MOD: {
			char *comma = strchr(optarg, ',');
			uint64_t us = 0;

			if (comma != NULL)
				*comma = '\0';
			if (rtp_u64_parse(optarg, 0, 65535, &v) < 0 ||
			    (comma != NULL &&
			     rtp_u64_parse(comma + 1, 0, 4095, &us) < 0)) {
				if (comma != NULL)
					*comma = ',';
				return bad("--cq-mod", optarg,
					   "COUNT (0..65535)[,US (0..4095)]");
			}
			p->cq_mod_count = (uint16_t)v;
			p->cq_mod_period = (uint16_t)us;
			break;
		}
		case OPT_RAW:
			p->raw = true;
			raw_set = true;
			break;
		case OPT_NO_RAW:
			p->raw = false;
			raw_set = true;
			break;
		case OPT_RAW_ONLY:
			p->raw = true;
			p->raw_only = true;
			raw_set = true;
			break;
		case OPT_JSON:
			p->format = RTP_FMT_JSON;
			break;
		case OPT_CSV:
			p->format = RTP_FMT_CSV;
			break;
		case OPT_OUT:
			p->out = optarg;
			break;
		case OPT_STATS:
			if (rtp_u64_parse(optarg, 0, 3600, &v) < 0)
				return bad("--stats-period", optarg, "0..3600 s");
			p->stats_period = (uint32_t)v;
			break;
		case OPT_COUNTERS:
			p->counters = true;
			break;
		case OPT_SERVER:
			p->server = true;
			break;
		case OPT_CLIENT:
			p->client = optarg;
			break;
		case OPT_HOST:
			p->host = true;
			p->host_socket = optarg;
			if (optarg != NULL && optarg[0] != '/')
				return bad("--host", optarg,
					   "an absolute socket path");
			break;
		case OPT_HOST_MODE: {
			char *end;
			unsigned long m = strtoul(optarg, &end, 8);

			if (*optarg == '\0' || *end != '\0' || m > 0777)
				return bad("--host-mode", optarg,
					   "octal permissions, 0 to 0777");
			p->host_mode = (uint32_t)m;
			break;
		}
		case OPT_HOST_GROUP: {
			struct group *g = getgrnam(optarg);

			if (g == NULL)
				return bad("--host-group", optarg,
					   "a group of this system");
			p->host_gid = (int)g->gr_gid;
			break;
		}
		case OPT_OOB_PORT:
			if (rtp_u64_parse(optarg, 1, 65535, &v) < 0)
				return bad("--oob-port", optarg, "1..65535");
			p->oob_port = (uint16_t)v;
			break;
		case 'h':
			rtp_usage(stdout);
			return 1;
		case ':':
			fprintf(stderr, "option %s needs a value\n",
				argv[optind - 1]);
			return -EINVAL;
		case '?':
			fprintf(stderr, "unknown option '%s' (--help lists them)\n",
				argv[optind - 1]);
			return -EINVAL;
		default:
			if (setting_parse(&p->set, c, optarg) < 0)
				return -EINVAL;
			break;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "unexpected argument '%s'\n", argv[optind]);
		return -EINVAL;
	}
	if ((p->nb_ports == 0) == (p->config == NULL)) {
		fprintf(stderr, "give the devices: --port options or --config FILE (not both)\n");
		return -EINVAL;
	}
	if (p->server && p->client != NULL) {
		fprintf(stderr, "--server or --client HOST, not both\n");
		return -EINVAL;
	}
	if (p->server && (p->mode != NULL || p->interactive ||
			  p->cmdline_file != NULL)) {
		fprintf(stderr, "--server takes its runs from the clients: no --mode, -i or --cmdline-file\n");
		return -EINVAL;
	}
	if (p->server && p->host) {
		fprintf(stderr, "--server and --host: one process, one of them\n");
		return -EINVAL;
	}
	if (p->mode == NULL && !p->interactive && p->cmdline_file == NULL &&
	    !p->server && !p->host) {
		fprintf(stderr, "nothing to do: --mode MODE, -i, --cmdline-file FILE, --server or --host\n");
		return -EINVAL;
	}
	p->raw_set = raw_set;
	if (!raw_set)
		p->raw = true;
	if (p->raw_only && (!p->raw || p->host || p->interactive ||
			    p->cmdline_file != NULL)) {
		fprintf(stderr, "--raw-only: the raw limit alone (with --mode, --server or --client), not with --no-raw, --host, -i or --cmdline-file\n");
		return -EINVAL;
	}
	return 0;
}

/* The EAL option that made port NAME (--vdev NAME,... or -a NAME). */
static const char *
eal_device(int argc, char **argv, const char *name)
{
	size_t n = strlen(name);

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];

		if ((strcmp(a, "--vdev") == 0 || strcmp(a, "-a") == 0 ||
		     strcmp(a, "--allow") == 0) && i + 1 < argc)
			a = argv[++i];
		else if (strncmp(a, "--vdev=", 7) == 0)
			a += 7;
		else
			continue;
		if (strncmp(a, name, n) == 0 && (a[n] == ',' || a[n] == '\0'))
			return a;
	}
	return name;
}

/*
 * The configuration of --port options: an INI text in a memfd, loaded by
 * rp_cfg_load() as a file would be.  Called after rte_eal_init().
 */
int
rtp_params_config(const struct rtp_params *p, struct rp_config *cfg,
		  unsigned int main_lcore, int eal_argc, char **eal_argv)
{
	char err[1024] = "";
	char path[64];
	uint64_t lcores = 0;
	FILE *f;
	int fd, ret;

	if (p->config != NULL) {
		ret = rp_cfg_load(p->config, cfg, err, sizeof(err));
		if (ret < 0)
			fprintf(stderr, "%s\n", err[0] != '\0' ? err :
				strerror(-ret));
		if (ret == 0 && p->idle_set)
			cfg->idle = p->idle;
		if (ret == 0 && p->inline_set)
			cfg->inline_us = p->inline_us;
		return ret;
	}
	fd = memfd_create("rocepmd-testpmd.ini", MFD_CLOEXEC);
	if (fd < 0 || (f = fdopen(dup(fd), "w")) == NULL) {
		fprintf(stderr, "memfd: %s\n", strerror(errno));
		if (fd >= 0)
			close(fd);
		return -errno;
	}
	for (unsigned int i = 0; i < p->nb_ports; i++)
		if (p->port[i].lcore_set && p->port[i].lcore < 64)
			lcores |= 1ull << p->port[i].lcore;
	fprintf(f, "[engine]\nmain_lcore = %u\nidle = %s\nidle_us = %u\n"
		"spin_nap = %s\n", main_lcore, rp_idle_policy_name(p->idle),
		p->idle_us, p->spin_nap ? "on" : "off");
	/* Not given: the engine's default, auto. */
	if (p->inline_set && p->inline_us != RP_INLINE_AUTO)
		fprintf(f, "inline_us = %u\n", p->inline_us);
	if (lcores != 0) {
		const char *sep = "";

		fprintf(f, "lcores = ");
		for (unsigned int l = 0; l < 64; l++)
			if (lcores & (1ull << l)) {
				fprintf(f, "%s%u", sep, l);
				sep = ",";
			}
		fprintf(f, "\n");
	}
	for (unsigned int i = 0; i < p->nb_ports; i++) {
		fprintf(f, "[port%u]\ndevice = %s\nipv4 = %s\n", i,
			eal_device(eal_argc, eal_argv, p->port[i].name),
			p->port[i].ipv4);
		if (p->port[i].mtu != 0)
			fprintf(f, "mtu = %u\n", p->port[i].mtu);
		if (p->port[i].lcore_set)
			fprintf(f, "lcore = %u\n", p->port[i].lcore);
		fprintf(f, "region_mb = 32\n%s", p->port[i].more);
	}
	fclose(f);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	ret = rp_cfg_load(path, cfg, err, sizeof(err));
	close(fd);
	if (ret < 0) {
		/* The text is ours: the error names the --port value. */
		const char *e = strchr(err, '[');

		fprintf(stderr, "--port: %s\n", e != NULL ? e : strerror(-ret));
	}
	return ret;
}
