/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rocepmd-status: what `rdma link show`, `rdma statistic show` and
 * `ibv_devinfo` print for the kernel's rxe, for rocepmd's devices, which
 * the kernel does not know (no /sys/class/infiniband, no NETLINK_RDMA).
 *
 *   rocepmd-status [--config FILE | --attach[=SOCKET]] link [show] [-d] [DEV[/1]]
 *   rocepmd-status [...] statistic [show] [-d] [link DEV[/1]]
 *   rocepmd-status [...] devinfo [IBV_DEVINFO OPTIONS]
 *
 * A rocepmd device lives in the process whose engine owns its port, so
 * there is nothing to read from outside but that process: where it is
 * depends on the source.
 *
 *   --attach (a host, rocepmd-testpmd --host): attach as a verbs program
 *   does (rp_attach_client.c) and read the device region the host maps
 *   into every client, the block the verbs shim answers ibv_query_port and
 *   ibv_query_gid from, so both say the same; the counters, and the netdev
 *   the port is bound to, from the host's DPDK telemetry socket
 *   (/rocepmd/stats, /rocepmd/port), found by the host's PID (SO_PEERCRED
 *   of the attach socket, matched against the "pid" every telemetry socket
 *   greets with).
 *
 *   --config (embedded): no process holds the devices between programs,
 *   so the tool boots the engine on the configuration's ports for as long
 *   as it takes to read them (link state after up to 3 s, the region, the
 *   counters), as any verbs program under rocepmd-run would, and stops it.
 *   When another process owns a port (rp_port_lock: an embedded program or
 *   a host), it boots nothing, prints what the configuration says and
 *   which process owns the port; its live state is that process's, which
 *   a host shows through --attach.
 *
 * devinfo runs the real ibv_devinfo through rocepmd-run (the same source),
 * so its output is ibv_devinfo's own, from the verbs shim, not a copy of
 * its format.
 *
 * Without --config or --attach: the configuration rocepmd-run would take
 * ($ROCEPMD_CONFIG, else ./rocepmd.ini), else the host socket rocepmd-run
 * would take (rp_attach_pick(): the only one of the run directory that a
 * host of this network namespace serves).  No device to show is an error
 * (exit 1) with a message saying why, never empty output.
 */

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <rte_common.h>
#include <rte_eal.h>
#include <rte_errno.h>

#include "rocepmd.h"
#include "rp_abi.h"
#include "rp_attach_client.h"

#ifndef RP_VERSION
#define RP_VERSION "unknown"
#endif

#define ST_DEFAULT_CONFIG	"rocepmd.ini"
#define ST_MAX_STATS		128
#define ST_LINK_WAIT_MS		3000
#define ST_TEL_BUF		65536

enum {
	ST_EXIT_NODEV = 1,	/* no device or host to show, no counters */
	ST_EXIT_USAGE = 2,
	ST_EXIT_EXEC = 127,
};

/* One device as the tool shows it, from either source. */
struct st_dev {
	char name[RP_DEV_NAME_LEN + 1];
	uint8_t mac[6];
	uint8_t gid[RP_GID_TBL_LEN][16];
	uint8_t gid_plen[RP_GID_TBL_LEN];
	uint32_t ipv4;
	uint32_t prefix_len;
	uint32_t mtu;
	bool link_known;	/* false: port owned by another process */
	bool link_up;
	uint32_t speed;		/* Mbps */
	char netdev[RP_CFG_STR];	/* "" when the port has none */
	unsigned int nr_stats;	/* 0: no counters (stats_err says why) */
	char stat_name[ST_MAX_STATS][48];
	uint64_t stat_val[ST_MAX_STATS];
};

struct st_view {
	char source[PATH_MAX + 64];
	unsigned int nr;
	struct st_dev dev[RP_MAX_PORTS];
	char busy[1024];	/* the owner of a port, when not us */
	char stats_err[PATH_MAX + 256];	/* why there are no counters */
};

/*
 * rxe's counters (drivers/infiniband/sw/rxe/rxe_hw_counters.c) that the
 * engine counts as well, under the engine's name.  The others (ack_deferred,
 * rcvd_seq_err, retry_exceeded_err, retry_rnr_exceeded_err,
 * completer_retry_err, link_downed, rdma_sends, rdma_recvs) have no
 * equivalent and are not printed: doc/guides/status.rst says why.
 */
static const struct {
	const char *rxe;
	const char *engine;
} st_rxe_map[] = {
	{ "sent_pkts", "tx_packets" },
	{ "rcvd_pkts", "rx_packets" },
	{ "duplicate_request", "duplicate_request" },
	{ "out_of_seq_request", "out_of_seq_request" },
	{ "rcvd_rnr_err", "rcvd_rnr_nak" },
	{ "send_rnr_err", "send_rnr_nak" },
	{ "send_err", "tx_dropped" },
};

static const char *st_prog = "rocepmd-status";
static struct st_view st_view;

static void
st_usage(FILE *f)
{
	fprintf(f,
		"Usage: %s [--config FILE | --attach[=SOCKET]] COMMAND\n"
		"\n"
		"What `rdma link show`, `rdma statistic show` and `ibv_devinfo`\n"
		"print for the kernel's rxe, for rocepmd's devices.\n"
		"\n"
		"Commands:\n"
		"  link [show] [-d] [DEV[/1]]    device, port, state, netdev;\n"
		"                                -d: MTU, speed, MAC, the GIDs\n"
		"  statistic [show] [-d] [link DEV[/1]]\n"
		"                                counters under rxe's names;\n"
		"                                -d: every engine counter too\n"
		"  devinfo [OPTIONS]             ibv_devinfo OPTIONS, run through\n"
		"                                rocepmd-run on the same source\n"
		"\n"
		"Source:\n"
		"  -c, --config FILE   an embedded configuration: boot the engine\n"
		"                      on its ports briefly (or, if another\n"
		"                      process owns one, say which and print the\n"
		"                      configuration); default $ROCEPMD_CONFIG,\n"
		"                      else ./" ST_DEFAULT_CONFIG "\n"
		"      --attach[=SOCKET]\n"
		"                      a running host (rocepmd-testpmd --host);\n"
		"                      default: the only *.sock of\n"
		"                      $ROCEPMD_RUN_DIR, else " RP_SERVE_DIR ",\n"
		"                      that a host of this network namespace\n"
		"                      serves\n"
		"  With neither: the configuration, else the only host socket.\n"
		"\n"
		"Exit status: 0, 1 when there is no device (or no counter) to\n"
		"show, with the reason, 2 for a bad command line.\n",
		st_prog);
}

/* ---------------------------------------------------------- telemetry */

/* The value after "key": in a telemetry reply (JSON), or NULL. */
static const char *
st_json_find(const char *json, const char *key)
{
	char pat[96];
	const char *p;

	snprintf(pat, sizeof(pat), "\"%s\":", key);
	p = strstr(json, pat);
	if (p == NULL)
		return NULL;
	p += strlen(pat);
	while (*p == ' ')
		p++;
	return p;
}

static bool
st_json_u64(const char *json, const char *key, uint64_t *v)
{
	const char *p = st_json_find(json, key);
	char *end;

	if (p == NULL)
		return false;
	*v = strtoull(p, &end, 10);
	return end != p;
}

static bool
st_json_str(const char *json, const char *key, char *out, size_t len)
{
	const char *p = st_json_find(json, key);
	size_t n = 0;

	if (p == NULL || *p++ != '"')
		return false;
	for (; *p != '\0' && *p != '"'; p++) {
		if (*p == '\\' && p[1] != '\0')
			p++;
		if (n + 1 < len)
			out[n++] = *p;
	}
	out[n] = '\0';
	return *p == '"';
}

/* Connect to a telemetry socket; its greeting into buf. */
static int
st_tel_open(const char *path, char *buf, size_t len)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct timeval tv = { .tv_sec = 2 };
	ssize_t n;
	int fd;

	if (strlen(path) >= sizeof(sa.sun_path))
		return -1;
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0)
		goto err;
	n = read(fd, buf, len - 1);
	if (n <= 0)
		goto err;
	buf[n] = '\0';
	return fd;
err:
	close(fd);
	return -1;
}

/* One telemetry command's reply into buf; false on failure. */
static bool
st_tel_cmd(int fd, const char *cmd, char *buf, size_t len)
{
	ssize_t n;

	if (write(fd, cmd, strlen(cmd)) != (ssize_t)strlen(cmd))
		return false;
	n = read(fd, buf, len - 1);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	/* an unknown command or a refused parameter gives null */
	return strstr(buf, ": null}") == NULL;
}

/* Whether path is the telemetry socket of process pid; the fd if so. */
static int
st_tel_of(const char *path, pid_t pid, char *buf, size_t len)
{
	uint64_t v;
	int fd = st_tel_open(path, buf, len);

	if (fd < 0)
		return -1;
	if (st_json_u64(buf, "pid", &v) && v == (uint64_t)pid)
		return fd;
	close(fd);
	return -1;
}

/*
 * The telemetry socket of the host with PID pid: where the EAL puts it
 * (the runtime directory of the host's --file-prefix, rocepmd-PID unless
 * the host chose another), else any whose greeting names that PID.
 */
static int
st_tel_find(pid_t pid, char *path, size_t plen, char *buf, size_t len)
{
	const char *xdg = getenv("XDG_RUNTIME_DIR");
	char dirs[3][PATH_MAX];
	unsigned int nd = 0;
	struct dirent *de;
	DIR *d;
	int fd;

	snprintf(dirs[nd++], PATH_MAX, "/var/run/dpdk");
	if (xdg != NULL && xdg[0] != '\0')
		snprintf(dirs[nd++], PATH_MAX, "%s/dpdk", xdg);
	snprintf(dirs[nd++], PATH_MAX, "/tmp/dpdk");
	for (unsigned int i = 0; i < nd; i++) {
		snprintf(path, plen, "%s/rocepmd-%ld/dpdk_telemetry.v2",
			 dirs[i], (long)pid);
		fd = st_tel_of(path, pid, buf, len);
		if (fd >= 0)
			return fd;
	}
	for (unsigned int i = 0; i < nd; i++) {
		d = opendir(dirs[i]);
		if (d == NULL)
			continue;
		while ((de = readdir(d)) != NULL) {
			if (de->d_name[0] == '.')
				continue;
			snprintf(path, plen, "%s/%s/dpdk_telemetry.v2",
				 dirs[i], de->d_name);
			fd = st_tel_of(path, pid, buf, len);
			if (fd >= 0) {
				closedir(d);
				return fd;
			}
		}
		closedir(d);
	}
	return -1;
}

/* The counters of a /rocepmd/stats reply: {"/rocepmd/stats": {...}}. */
static void
st_parse_stats(struct st_dev *sd, const char *json)
{
	const char *p = strchr(json, ':');

	sd->nr_stats = 0;
	if (p == NULL || (p = strchr(p, '{')) == NULL)
		return;
	p++;
	while (sd->nr_stats < ST_MAX_STATS) {
		const char *q, *e;
		char *end;
		size_t n;

		q = strchr(p, '"');
		if (q == NULL)
			break;
		e = strchr(q + 1, '"');
		if (e == NULL || e[1] != ':')
			break;
		n = (size_t)(e - q - 1);
		if (n >= sizeof(sd->stat_name[0]))
			n = sizeof(sd->stat_name[0]) - 1;
		memcpy(sd->stat_name[sd->nr_stats], q + 1, n);
		sd->stat_name[sd->nr_stats][n] = '\0';
		sd->stat_val[sd->nr_stats] = strtoull(e + 2, &end, 10);
		if (end == e + 2)
			break;
		sd->nr_stats++;
		p = end;
	}
}

/* ------------------------------------------------------------ sources */

/* The kernel interface a port reaches: key netdev, else a vdev's iface=. */
static void
st_netdev(const char *netdev, const char *device, char *out, size_t len)
{
	const char *p;

	out[0] = '\0';
	if (netdev[0] != '\0') {
		snprintf(out, len, "%s", netdev);
		return;
	}
	p = strstr(device, "iface=");
	if (p != NULL)
		snprintf(out, len, "%.*s", (int)strcspn(p + 6, ","), p + 6);
}

static void
st_from_ctl(struct st_dev *sd, const struct rp_dev_ctl *ctl)
{
	snprintf(sd->name, sizeof(sd->name), "%.*s",
		 (int)strnlen(ctl->name, sizeof(ctl->name)), ctl->name);
	memcpy(sd->mac, ctl->mac, sizeof(sd->mac));
	memcpy(sd->gid, ctl->gid, sizeof(sd->gid));
	memcpy(sd->gid_plen, ctl->gid_plen, sizeof(sd->gid_plen));
	sd->ipv4 = ctl->ipv4;
	sd->prefix_len = ctl->prefix_len;
	sd->mtu = ctl->mtu;
	sd->link_known = true;
	sd->link_up = __atomic_load_n(&ctl->link_up, __ATOMIC_RELAXED) != 0;
	sd->speed = __atomic_load_n(&ctl->link_speed, __ATOMIC_RELAXED);
}

/* A running host: its devices through the attach protocol. */
static int
st_load_host(struct st_view *v, const char *sock)
{
	static char buf[ST_TEL_BUF];
	char abs[PATH_MAX], tel[PATH_MAX], cmd[64], err[512];
	struct rp_attach_conn c;
	struct ucred cred;
	socklen_t clen = sizeof(cred);
	int ret, fd = -1;

	if (realpath(sock, abs) == NULL) {
		fprintf(stderr, "%s: --attach: %s: %s (start a host with rocepmd-testpmd --host)\n",
			st_prog, sock, strerror(errno));
		return -ENOENT;
	}
	ret = rp_attach_open(&c, abs, err, sizeof(err));
	if (ret < 0) {
		fprintf(stderr, "%s: %s\n", st_prog, err);
		return ret;
	}
	cred.pid = 0;
	getsockopt(c.sock, SOL_SOCKET, SO_PEERCRED, &cred, &clen);
	snprintf(v->source, sizeof(v->source), "host %s (PID %ld)", abs,
		 (long)cred.pid);
	if (cred.pid > 0)
		fd = st_tel_find(cred.pid, tel, sizeof(tel), buf, sizeof(buf));
	if (fd < 0)
		snprintf(v->stats_err, sizeof(v->stats_err),
			 "no DPDK telemetry socket of the host (PID %ld) under /var/run/dpdk, $XDG_RUNTIME_DIR/dpdk or /tmp/dpdk: was it started with --no-telemetry?",
			 (long)cred.pid);
	for (uint32_t i = 0; i < c.nr_devs && i < RP_MAX_PORTS; i++) {
		struct st_dev *sd = &v->dev[v->nr++];
		char device[RP_CFG_STR] = "", netdev[RP_CFG_STR] = "";

		st_from_ctl(sd, c.dev[i].ctl);
		if (fd < 0)
			continue;
		snprintf(cmd, sizeof(cmd), "/rocepmd/port,%u", i);
		if (st_tel_cmd(fd, cmd, buf, sizeof(buf))) {
			st_json_str(buf, "device", device, sizeof(device));
			st_json_str(buf, "netdev", netdev, sizeof(netdev));
			st_netdev(netdev, device, sd->netdev,
				  sizeof(sd->netdev));
		}
		snprintf(cmd, sizeof(cmd), "/rocepmd/stats,%u", i);
		if (st_tel_cmd(fd, cmd, buf, sizeof(buf)))
			st_parse_stats(sd, buf);
		if (sd->nr_stats == 0)
			snprintf(v->stats_err, sizeof(v->stats_err),
				 "%s: no answer to /rocepmd/stats,%u", tel, i);
	}
	if (fd >= 0)
		close(fd);
	rp_attach_close(&c);
	return 0;
}

/* What a configuration says, for a port another process owns. */
static void
st_from_cfg(struct st_view *v, const struct rp_config *cfg)
{
	for (uint32_t i = 0; i < cfg->nb_ports && i < RP_MAX_PORTS; i++) {
		const struct rp_port_cfg *p = &cfg->port[i];
		struct st_dev *sd = &v->dev[v->nr++];

		snprintf(sd->name, sizeof(sd->name), "rocepmd%u", i);
		st_netdev(p->netdev, p->device, sd->netdev,
			  sizeof(sd->netdev));
		sd->mtu = p->mtu;
		sd->ipv4 = p->ipv4;
		sd->prefix_len = p->prefix_len;
		memcpy(sd->mac, p->mac, sizeof(sd->mac));
		if (p->ipv4 != 0) {
			sd->gid[0][10] = 0xff;
			sd->gid[0][11] = 0xff;
			memcpy(&sd->gid[0][12], &p->ipv4, 4);
			sd->gid_plen[0] = (uint8_t)(96 + p->prefix_len);
		}
		for (uint32_t j = 0; j < p->nr_ipv6 && 2 + j < RP_GID_TBL_LEN;
		     j++) {
			memcpy(sd->gid[2 + j], p->ipv6[j], 16);
			sd->gid_plen[2 + j] = p->ipv6_plen[j];
		}
	}
}

static uint64_t
st_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void
st_rundir_atexit(void)
{
	rp_eal_rundir_remove();
}

/*
 * An embedded configuration: boot the engine on its ports, read, stop.
 * The EAL without telemetry (nobody could ask it in time) and as loud as
 * the configuration's [eal] log_level says, as any program under
 * rocepmd-run: at the default, a healthy boot prints nothing.
 */
static int
st_load_config(struct st_view *v, const char *path)
{
	static struct rp_config cfg;
	static char storage[8192];
	static char *argv[RP_EAL_MAX_ARGS + 4];
	const char *names[ST_MAX_STATS];
	char err[1024], abs[PATH_MAX];
	uint64_t deadline;
	int argc, ret;
	unsigned int n;

	if (rp_cfg_load(path, &cfg, err, sizeof(err)) != 0) {
		fprintf(stderr, "%s: %s\n", st_prog, err);
		return -EINVAL;
	}
	snprintf(v->source, sizeof(v->source), "configuration %s",
		 realpath(path, abs) != NULL ? abs : path);
	ret = rp_port_lock(&cfg, err, sizeof(err));
	if (ret == -EBUSY) {
		snprintf(v->busy, sizeof(v->busy), "%s", err);
		snprintf(v->stats_err, sizeof(v->stats_err),
			 "the counters are the owner's: if it is a host, rocepmd-status --attach shows them");
		st_from_cfg(v, &cfg);
		return 0;
	}
	argc = rp_cfg_eal_argv(&cfg, st_prog, argv, RP_EAL_MAX_ARGS, storage,
			       sizeof(storage));
	if (argc < 0) {
		fprintf(stderr, "%s: %s: cannot build the EAL arguments: %s\n",
			st_prog, path, strerror(-argc));
		return argc;
	}
	/* No log option of its own: appended after the configuration's, it
	 * would lose to them for the types registered during
	 * rte_eal_init() and win for the others (rp_cfg_eal_argv()). */
	argv[argc++] = (char *)(uintptr_t)"--no-telemetry";
	argv[argc] = NULL;
	atexit(st_rundir_atexit);
	rp_engine_app_cpus();
	ret = rte_eal_init(argc, argv);
	rp_eal_rundir_note();
	if (ret < 0) {
		fprintf(stderr, "%s: %s: rte_eal_init: %s\n", st_prog, path,
			rte_strerror(rte_errno));
		rp_port_unlock();
		return -EIO;
	}
	ret = rp_engine_start(&cfg);
	if (ret < 0) {
		fprintf(stderr, "%s: %s: cannot start the engine: %s\n",
			st_prog, path, strerror(-ret));
		rp_port_unlock();
		return ret;
	}
	/* A port comes up a moment after it starts. */
	deadline = st_now_ms() + ST_LINK_WAIT_MS;
	for (n = 0; n < rp_dev_count() && st_now_ms() < deadline;) {
		const struct rp_dev_ctl *ctl = rp_dev_ctl(n);

		if (ctl == NULL ||
		    __atomic_load_n(&ctl->link_up, __ATOMIC_RELAXED))
			n++;
		else
			usleep(10000);
	}
	for (n = 0; n < rp_dev_count() && n < RP_MAX_PORTS; n++) {
		const struct rp_dev_ctl *ctl = rp_dev_ctl(n);
		struct st_dev *sd;
		int k;

		if (ctl == NULL)
			continue;
		sd = &v->dev[v->nr++];
		st_from_ctl(sd, ctl);
		st_netdev(cfg.port[n].netdev, cfg.port[n].device, sd->netdev,
			  sizeof(sd->netdev));
		k = rp_dev_stats_get(n, names, sd->stat_val, ST_MAX_STATS);
		for (int s = 0; s < k && s < ST_MAX_STATS; s++)
			snprintf(sd->stat_name[s], sizeof(sd->stat_name[s]),
				 "%s", names[s]);
		sd->nr_stats = k > 0 ? (unsigned int)k : 0;
	}
	rp_engine_stop();
	rp_port_unlock();
	/* No rte_eal_cleanup(), as the shim: DPDK 22.11 may crash in it. */
	return 0;
}

/* ------------------------------------------------------------ output */

static bool
st_match(const struct st_dev *sd, const char *filter)
{
	size_t n;

	if (filter == NULL)
		return true;
	n = strcspn(filter, "/");
	if (strlen(sd->name) != n || strncmp(sd->name, filter, n) != 0)
		return false;
	return filter[n] == '\0' || strcmp(filter + n, "/1") == 0;
}

static void
st_print_link(const struct st_view *v, const struct st_dev *sd,
	      bool details)
{
	char a[INET6_ADDRSTRLEN];

	printf("link %s/1 state %s physical_state %s", sd->name,
	       !sd->link_known ? "UNKNOWN" : sd->link_up ? "ACTIVE" : "DOWN",
	       !sd->link_known ? "UNKNOWN" :
	       sd->link_up ? "LINK_UP" : "DISABLED");
	if (sd->netdev[0] != '\0')
		printf(" netdev %s", sd->netdev);
	printf("\n");
	if (!details)
		return;
	if (sd->mtu == RP_MTU_AUTO)	/* a configuration's: the owner's */
		printf("    link_layer Ethernet active_mtu auto max_mtu 4096");
	else
		printf("    link_layer Ethernet active_mtu %" PRIu32
		       " max_mtu 4096", sd->mtu);
	if (sd->link_known)
		printf(" speed %" PRIu32 " Mb/s", sd->speed);
	if (sd->mac[0] | sd->mac[1] | sd->mac[2] | sd->mac[3] | sd->mac[4] |
	    sd->mac[5])
		printf(" mac %02x:%02x:%02x:%02x:%02x:%02x", sd->mac[0],
		       sd->mac[1], sd->mac[2], sd->mac[3], sd->mac[4],
		       sd->mac[5]);
	printf("\n");
	for (unsigned int g = 0; g < RP_GID_TBL_LEN; g++) {
		static const uint8_t zero[16];

		if (memcmp(sd->gid[g], zero, 16) == 0)
			continue;
		inet_ntop(AF_INET6, sd->gid[g], a, sizeof(a));
		printf("    gid %u %s type RoCE v2", g, a);
		if (sd->gid_plen[g] != 0)
			printf(" prefix %u", sd->gid_plen[g]);
		printf("\n");
	}
	printf("    source %s\n", v->source);
}

static int
st_cmd_link(const struct st_view *v, bool details, const char *filter)
{
	unsigned int shown = 0;

	for (unsigned int i = 0; i < v->nr; i++) {
		if (!st_match(&v->dev[i], filter))
			continue;
		st_print_link(v, &v->dev[i], details);
		shown++;
	}
	if (v->busy[0] != '\0')
		printf("in use: %s (its state is that process's; a host shows it with %s --attach)\n",
		       v->busy, st_prog);
	if (shown == 0) {
		fprintf(stderr, "%s: no device %s in %s\n", st_prog,
			filter != NULL ? filter : "", v->source);
		return ST_EXIT_NODEV;
	}
	return 0;
}

static const uint64_t *
st_stat(const struct st_dev *sd, const char *name)
{
	for (unsigned int i = 0; i < sd->nr_stats; i++)
		if (strcmp(sd->stat_name[i], name) == 0)
			return &sd->stat_val[i];
	return NULL;
}

static int
st_cmd_stat(const struct st_view *v, bool details, const char *filter)
{
	unsigned int shown = 0;

	for (unsigned int i = 0; i < v->nr; i++) {
		const struct st_dev *sd = &v->dev[i];

		if (!st_match(sd, filter) || sd->nr_stats == 0)
			continue;
		printf("link %s/1", sd->name);
		for (size_t m = 0; m < RTE_DIM(st_rxe_map); m++) {
			const uint64_t *val = st_stat(sd, st_rxe_map[m].engine);

			if (val != NULL)
				printf(" %s %" PRIu64, st_rxe_map[m].rxe, *val);
		}
		printf("\n");
		if (details) {
			printf("   ");
			for (unsigned int s = 0; s < sd->nr_stats; s++)
				printf(" %s %" PRIu64, sd->stat_name[s],
				       sd->stat_val[s]);
			printf("\n");
		}
		shown++;
	}
	if (shown == 0) {
		if (v->busy[0] != '\0')
			fprintf(stderr, "%s: %s; %s\n", st_prog, v->busy,
				v->stats_err);
		else if (v->stats_err[0] != '\0')
			fprintf(stderr, "%s: no counters: %s\n", st_prog,
				v->stats_err);
		else
			fprintf(stderr, "%s: no device %s in %s\n", st_prog,
				filter != NULL ? filter : "", v->source);
		return ST_EXIT_NODEV;
	}
	return 0;
}

/* ibv_devinfo through rocepmd-run, which lives beside this program. */
static int
st_cmd_devinfo(const char *config, const char *sock, int argc, char **argv)
{
	char run[PATH_MAX], opt[PATH_MAX + 16];
	char *args[64];
	int n = 0;
	ssize_t len = readlink("/proc/self/exe", run, sizeof(run) - 1);
	char *slash;

	if (len > 0) {
		run[len] = '\0';
		slash = strrchr(run, '/');
		if (slash != NULL &&
		    (size_t)(slash - run) + sizeof("/rocepmd-run") < sizeof(run))
			strcpy(slash, "/rocepmd-run");
	}
	if (len <= 0 || access(run, X_OK) != 0)
		snprintf(run, sizeof(run), "rocepmd-run");
	args[n++] = run;
	if (sock != NULL) {
		snprintf(opt, sizeof(opt), "--attach=%s", sock);
		args[n++] = opt;
	} else {
		args[n++] = (char *)(uintptr_t)"--config";
		args[n++] = (char *)(uintptr_t)config;
	}
	args[n++] = (char *)(uintptr_t)"--";
	args[n++] = (char *)(uintptr_t)"ibv_devinfo";
	for (int i = 0; i < argc && n < 63; i++)
		args[n++] = argv[i];
	args[n] = NULL;
	fflush(NULL);
	execvp(run, args);
	fprintf(stderr, "%s: cannot run %s: %s\n", st_prog, run,
		strerror(errno));
	return ST_EXIT_EXEC;
}

/* -d, and one optional name, after a subcommand (and "show"). */
static int
st_sub_args(int argc, char **argv, bool *details, const char **filter,
	    bool stat)
{
	int i = 0;

	if (i < argc && strcmp(argv[i], "show") == 0)
		i++;
	for (; i < argc; i++) {
		if (strcmp(argv[i], "-d") == 0 ||
		    strcmp(argv[i], "--details") == 0) {
			*details = true;
		} else if (stat && strcmp(argv[i], "link") == 0 &&
			   i + 1 < argc && *filter == NULL) {
			*filter = argv[++i];
		} else if (!stat && argv[i][0] != '-' && *filter == NULL) {
			*filter = argv[i];
		} else {
			fprintf(stderr, "%s: unexpected argument '%s'\n",
				st_prog, argv[i]);
			return -1;
		}
	}
	return 0;
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "attach", optional_argument, NULL, 'A' },
		{ "config", required_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	const char *config = NULL, *attach_opt = NULL, *cmd, *filter = NULL;
	char sock[PATH_MAX], err[PATH_MAX + 1280];
	bool attach = false, details = false;
	int opt, ret;

	if (argc > 0 && argv[0] != NULL && argv[0][0] != '\0') {
		const char *slash = strrchr(argv[0], '/');

		st_prog = slash != NULL ? slash + 1 : argv[0];
	}
	while ((opt = getopt_long(argc, argv, "+c:hV", opts, NULL)) != -1) {
		switch (opt) {
		case 'A':
			attach = true;
			attach_opt = optarg;
			break;
		case 'c':
			config = optarg;
			break;
		case 'h':
			st_usage(stdout);
			return 0;
		case 'V':
			printf("%s %s\n", st_prog, RP_VERSION);
			return 0;
		default:
			st_usage(stderr);
			return ST_EXIT_USAGE;
		}
	}
	if (attach && config != NULL) {
		fprintf(stderr, "%s: --attach and --config: choose one\n",
			st_prog);
		return ST_EXIT_USAGE;
	}
	if (optind >= argc) {
		fprintf(stderr, "%s: no command (link, statistic, devinfo)\n",
			st_prog);
		st_usage(stderr);
		return ST_EXIT_USAGE;
	}
	cmd = argv[optind++];
	if (strcmp(cmd, "link") != 0 && strcmp(cmd, "statistic") != 0 &&
	    strcmp(cmd, "stats") != 0 && strcmp(cmd, "devinfo") != 0) {
		fprintf(stderr, "%s: unknown command '%s' (link, statistic, devinfo)\n",
			st_prog, cmd);
		return ST_EXIT_USAGE;
	}
	if (strcmp(cmd, "devinfo") != 0 &&
	    st_sub_args(argc - optind, argv + optind, &details, &filter,
			cmd[0] == 's') < 0)
		return ST_EXIT_USAGE;

	/* The source, as rocepmd-run chooses it (rp_attach_pick()). */
	if (!attach && config == NULL) {
		const char *env = getenv("ROCEPMD_CONFIG");

		if (env != NULL && env[0] != '\0')
			config = env;
		else if (access(ST_DEFAULT_CONFIG, F_OK) == 0)
			config = ST_DEFAULT_CONFIG;
		else if (rp_attach_pick(sock, sizeof(sock), err,
					sizeof(err)) == 0)
			attach = true;
		else {
			fprintf(stderr, "%s: no rocepmd device to show: no configuration (--config FILE, $ROCEPMD_CONFIG or ./%s) and no host to attach to: %s\n",
				st_prog, ST_DEFAULT_CONFIG, err);
			return ST_EXIT_NODEV;
		}
	} else if (attach) {
		if (attach_opt != NULL && attach_opt[0] != '\0') {
			snprintf(sock, sizeof(sock), "%s", attach_opt);
		} else if (rp_attach_pick(sock, sizeof(sock), err,
					  sizeof(err)) != 0) {
			fprintf(stderr, "%s: --attach: %s\n", st_prog, err);
			return ST_EXIT_NODEV;
		}
	}

	if (strcmp(cmd, "devinfo") == 0) {
		/* A port another process owns: rocepmd-run would refuse. */
		if (!attach) {
			static struct rp_config cfg;
			char why[1024];

			if (rp_cfg_load(config, &cfg, why, sizeof(why)) != 0) {
				fprintf(stderr, "%s: %s\n", st_prog, why);
				return ST_EXIT_NODEV;
			}
			if (rp_port_lock_check(&cfg, why, sizeof(why)) ==
			    -EBUSY) {
				snprintf(st_view.source,
					 sizeof(st_view.source),
					 "configuration %s", config);
				snprintf(st_view.busy, sizeof(st_view.busy),
					 "%s", why);
				st_from_cfg(&st_view, &cfg);
				return st_cmd_link(&st_view, true, NULL);
			}
		}
		return st_cmd_devinfo(config, attach ? sock : NULL,
				      argc - optind, argv + optind);
	}

	ret = attach ? st_load_host(&st_view, sock) :
		st_load_config(&st_view, config);
	if (ret < 0)
		return ST_EXIT_NODEV;
	if (st_view.nr == 0) {
		fprintf(stderr, "%s: %s has no device\n", st_prog,
			st_view.source);
		return ST_EXIT_NODEV;
	}
	if (cmd[0] == 'l')
		return st_cmd_link(&st_view, details, filter);
	return st_cmd_stat(&st_view, details, filter);
}
