/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rocepmd-run: run an unmodified verbs program over rocepmd.
 *
 *   rocepmd-run [--config FILE] [--shim PATH] [--rdmacm PATH] [--] PROGRAM ...
 *   rocepmd-run [--config FILE] --check
 *   rocepmd-run --attach[=SOCKET] [--shim PATH] [--rdmacm PATH] [--] PROGRAM ...
 *   rocepmd-run --attach[=SOCKET] --check
 *
 * Validates the configuration (so a bad file fails here, before anything
 * runs) and that no other process owns one of its ports, then exports
 * ROCEPMD_CONFIG (absolute path) and prepends the verbs shim and the RDMA
 * CM (librocepmd-verbs.so, librocepmd-rdmacm.so) to LD_PRELOAD, and execs
 * the program; librocepmd-umad.so (libibumad's CA discovery for
 * rocepmd's devices, so ibstat shows them) comes after them.  The shim
 * claims the ports itself (rp_port_lock()); asking here only spares the
 * program a start that would fail.
 *
 * --attach: the program attaches to the host serving SOCKET (rocepmd-testpmd
 * --host) instead of booting an engine: no configuration, the verbs shim
 * and the RDMA CM preloaded (the CM shares the device's QP 1 with the
 * host's other processes, pmd/transport/rp_gsi.c), and ROCEPMD_ATTACH=SOCKET.
 * Without SOCKET, the one *.sock of $ROCEPMD_RUN_DIR, else /run/rocepmd,
 * that a host of the caller's network namespace serves (two namespaces of
 * one machine share the directory, each with its own host).
 * With no configuration at all (no --config, ROCEPMD_CONFIG or
 * ./rocepmd.ini) and one such socket, rocepmd-run attaches to it.
 */

#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rocepmd.h"
#include "rp_attach_client.h"

#ifndef RP_SHIM_BUILD_PATH
#define RP_SHIM_BUILD_PATH ""
#endif
#ifndef RP_SHIM_INSTALL_PATH
#define RP_SHIM_INSTALL_PATH "/usr/local/lib/librocepmd-verbs.so"
#endif
#ifndef RP_RDMACM_BUILD_PATH
#define RP_RDMACM_BUILD_PATH ""
#endif
#ifndef RP_RDMACM_INSTALL_PATH
#define RP_RDMACM_INSTALL_PATH "/usr/local/lib/librocepmd-rdmacm.so"
#endif
#ifndef RP_UMAD_BUILD_PATH
#define RP_UMAD_BUILD_PATH ""
#endif
#ifndef RP_UMAD_INSTALL_PATH
#define RP_UMAD_INSTALL_PATH "/usr/local/lib/librocepmd-umad.so"
#endif
#ifndef RP_BUILD_ROOT
#define RP_BUILD_ROOT ""
#endif
#ifndef RP_VERSION
#define RP_VERSION "unknown"
#endif

#define RP_RUN_DEFAULT_CONFIG	"rocepmd.ini"

/* Exit statuses. */
enum {
	RP_RUN_EXIT_CONFIG = 1,		/* bad configuration or library, port in use */
	RP_RUN_EXIT_USAGE = 2,		/* bad command line */
	RP_RUN_EXIT_EXEC = 127,		/* program could not be run */
};

static const char *rp_run_prog = "rocepmd-run";

static void
rp_run_usage(FILE *f)
{
	fprintf(f,
		"Usage: %s [--config FILE] [--shim PATH] [--rdmacm PATH] [--] PROGRAM [ARGS...]\n"
		"       %s [--config FILE] --check\n"
		"       %s --attach[=SOCKET] [--shim PATH] [--rdmacm PATH] [--] PROGRAM [ARGS...]\n"
		"       %s --attach[=SOCKET] --check\n"
		"\n"
		"Run an unmodified verbs program over rocepmd: validate the\n"
		"configuration, export ROCEPMD_CONFIG and prepend the rocepmd\n"
		"verbs shim and RDMA CM libraries to LD_PRELOAD, then exec\n"
		"PROGRAM.  With --attach, the program uses the devices of a host\n"
		"(rocepmd-testpmd --host) instead: no configuration, no DPDK in\n"
		"the program, ROCEPMD_ATTACH=SOCKET and the same two libraries.\n"
		"With no configuration at all and one host socket in the run\n"
		"directory, %s attaches to that host.\n"
		"\n"
		"  -c, --config FILE  configuration (default: $ROCEPMD_CONFIG,\n"
		"                     else ./" RP_RUN_DEFAULT_CONFIG ")\n"
		"      --attach[=SOCKET]\n"
		"                     attach to the host serving SOCKET (also\n"
		"                     --attach SOCKET when SOCKET is a socket);\n"
		"                     default: the only *.sock of $ROCEPMD_RUN_DIR,\n"
		"                     else of " RP_SERVE_DIR ", that a host of\n"
		"                     this network namespace serves\n"
		"  -s, --shim PATH    verbs shim library (default: $ROCEPMD_SHIM,\n"
		"                     else the build tree's when run from it,\n"
		"                     else " RP_SHIM_INSTALL_PATH ")\n"
		"  -r, --rdmacm PATH  RDMA CM library (default: $ROCEPMD_RDMACM,\n"
		"                     else the build tree's when run from it,\n"
		"                     else " RP_RDMACM_INSTALL_PATH ")\n"
		"  $ROCEPMD_UMAD      libibumad's CA discovery (ibstat), preloaded\n"
		"                     after them (default: the build tree's when\n"
		"                     run from it, else " RP_UMAD_INSTALL_PATH ")\n"
		"      --check        validate the configuration, print one line\n"
		"                     per port, the EAL arguments, the three\n"
		"                     libraries' paths and which process owns a\n"
		"                     port, if one does, and exit; with --attach:\n"
		"                     attach, print one line per device the host\n"
		"                     serves and the libraries' paths, and exit\n"
		"  -h, --help         this text\n"
		"  -V, --version      print the version\n"
		"\n"
		"Exit status: PROGRAM's, or 1 for a bad configuration, a missing\n"
		"shim, a port that another process owns or no host to attach to,\n"
		"2 for a bad command line, 127 if PROGRAM cannot be run.\n",
		rp_run_prog, rp_run_prog, rp_run_prog, rp_run_prog, rp_run_prog);
}

static bool
rp_run_exists(const char *path)
{
	return path[0] != '\0' && access(path, R_OK) == 0;
}

/* Whether this executable lives under the meson build tree. */
static bool
rp_run_in_build_tree(void)
{
	char exe[PATH_MAX], root[PATH_MAX];
	size_t n;

	if (RP_BUILD_ROOT[0] == '\0' ||
	    realpath("/proc/self/exe", exe) == NULL ||
	    realpath(RP_BUILD_ROOT, root) == NULL)
		return false;
	n = strlen(root);
	return strncmp(exe, root, n) == 0 && exe[n] == '/';
}

/*
 * A preloaded library (the shim, the RDMA CM): its option, else its
 * environment variable, else the build tree's when this binary runs from
 * the build tree and the library is there, else the installed one.
 */
static const char *
rp_run_lib_path(const char *opt, const char *var, const char *build,
		const char *install)
{
	const char *env = getenv(var);

	if (opt != NULL)
		return opt;
	if (env != NULL && env[0] != '\0')
		return env;
	if (rp_run_in_build_tree() && rp_run_exists(build))
		return build;
	return install;
}

/*
 * libibumad's CA discovery for rocepmd's devices (ibstat,
 * verbs-shim/shim_umad.c), preloaded last: $ROCEPMD_UMAD, else as the shim.
 */
static const char *
rp_run_umad(void)
{
	return rp_run_lib_path(NULL, "ROCEPMD_UMAD", RP_UMAD_BUILD_PATH,
			       RP_UMAD_INSTALL_PATH);
}

/* Configuration file: --config, else $ROCEPMD_CONFIG, else ./rocepmd.ini. */
static const char *
rp_run_config_path(const char *opt)
{
	const char *env = getenv("ROCEPMD_CONFIG");

	if (opt != NULL)
		return opt;
	if (env != NULL && env[0] != '\0')
		return env;
	if (access(RP_RUN_DEFAULT_CONFIG, F_OK) == 0)
		return RP_RUN_DEFAULT_CONFIG;
	return NULL;
}

/* Whether a colon- or space-separated LD_PRELOAD list holds path. */
static bool
rp_run_preload_has(const char *list, const char *path)
{
	size_t n = strlen(path);
	const char *p = list;

	while (*p != '\0') {
		size_t w = strcspn(p, ": ");

		if (w == n && strncmp(p, path, n) == 0)
			return true;
		p += w;
		if (*p != '\0')
			p++;
	}
	return false;
}

static int
rp_run_set_preload(const char *shim)
{
	const char *old = getenv("LD_PRELOAD");
	char *val;
	int rc;

	if (old == NULL || old[0] == '\0')
		return setenv("LD_PRELOAD", shim, 1);
	if (rp_run_preload_has(old, shim))
		return 0;
	if (asprintf(&val, "%s:%s", shim, old) < 0)
		return -1;
	rc = setenv("LD_PRELOAD", val, 1);
	free(val);
	return rc;
}

/*
 * The absolute path of a library to preload into abs (PATH_MAX), or an
 * error message and false.
 */
static bool
rp_run_lib_check(const char *what, const char *path, const char *hint,
		 char *abs)
{
	if (!rp_run_exists(path) || realpath(path, abs) == NULL) {
		fprintf(stderr, "%s: %s %s: %s (%s)\n", rp_run_prog, what,
			path, strerror(errno), hint);
		return false;
	}
	/* ld.so splits LD_PRELOAD on ':' and ' ' */
	if (strpbrk(abs, ": ") != NULL) {
		fprintf(stderr, "%s: %s path '%s' contains ':' or a "
			"space, which LD_PRELOAD cannot carry\n", rp_run_prog,
			what, abs);
		return false;
	}
	return true;
}

/* --check: the libraries the program would preload, in that order. */
static void
rp_run_print_libs(const char *shim, const char *rdmacm)
{
	const char *umad = rp_run_umad();

	printf("shim: %s%s\n", shim, rp_run_exists(shim) ? "" : " (missing)");
	printf("rdmacm: %s%s\n", rdmacm,
	       rp_run_exists(rdmacm) ? "" : " (missing)");
	printf("umad: %s%s\n", umad, rp_run_exists(umad) ? "" : " (missing)");
}

static void
rp_run_print_check(const struct rp_config *cfg, const char *path,
		   const char *shim, const char *rdmacm)
{
	char *argv[RP_EAL_MAX_ARGS];
	char storage[4096];
	char addr[INET_ADDRSTRLEN];
	char err[1024];
	char why[512];
	struct rp_cpu_idle idle;
	enum rp_inline_kind kind;
	uint32_t i;
	int argc, a;

	printf("%s: ok: %" PRIu32 " port%s, main lcore %" PRIu32
	       ", engine lcores ", path, cfg->nb_ports,
	       cfg->nb_ports == 1 ? "" : "s", cfg->main_lcore);
	for (i = 0; i < cfg->nb_lcores; i++)
		printf("%s%" PRIu32, i == 0 ? "" : ",", cfg->lcores[i]);
	printf(", idle %s", rp_idle_policy_name(cfg->idle));
	if (cfg->idle != RP_IDLE_BUSY)
		printf(" after %" PRIu32 " us", cfg->idle_us);
	if (cfg->idle == RP_IDLE_SLEEP)
		printf(", naps of %" PRIu32 " us", cfg->sleep_us);
	else if (cfg->idle == RP_IDLE_ADAPTIVE && cfg->spin_nap)
		printf(", naps of %" PRIu32 " us in place of the spin where "
		       "they cost no work, blocks of up to %" PRIu32 " us",
		       cfg->sleep_us, cfg->wake_us);
	else if (cfg->idle == RP_IDLE_ADAPTIVE)
		printf(", blocks of up to %" PRIu32 " us", cfg->wake_us);
	printf("\n");
	/* What the engine will decide, for this process's CPUs, which the
	 * program inherits. */
	kind = rp_inline_explain(cfg, why, sizeof(why));
	printf("inline passes: %s (%s)\n", rp_inline_kind_name(kind), why);
	rp_cpu_idle_read("/sys", &idle);
	printf("idle CPUs: %s\n", rp_cpu_idle_explain(&idle, why, sizeof(why)));

	for (i = 0; i < cfg->nb_ports; i++) {
		const struct rp_port_cfg *p = &cfg->port[i];

		inet_ntop(AF_INET, &p->ipv4, addr, sizeof(addr));
		printf("port%" PRIu32 ": %s %s, ipv4 %s/%" PRIu32 ", mac ", i,
		       p->is_pci ? "pci" : "vdev", p->device, addr,
		       p->prefix_len);
		if (p->mac_set)
			printf("%02x:%02x:%02x:%02x:%02x:%02x", p->mac[0],
			       p->mac[1], p->mac[2], p->mac[3], p->mac[4],
			       p->mac[5]);
		else
			printf("(port's own)");
		if (p->mtu == RP_MTU_AUTO)
			printf(", mtu auto");
		else
			printf(", mtu %" PRIu32, p->mtu);
		printf(", lcore %" PRIu32 ", region %" PRIu32 " MiB\n",
		       p->lcore, p->region_mb);
	}

	argc = rp_cfg_eal_argv(cfg, "rocepmd", argv, RP_EAL_MAX_ARGS, storage,
			       sizeof(storage));
	if (argc < 0) {
		printf("eal: cannot build the arguments: %s\n",
		       strerror(-argc));
	} else {
		printf("eal:");
		for (a = 1; a < argc; a++)
			printf(" %s", argv[a]);
		printf("\n");
	}
	rp_run_print_libs(shim, rdmacm);
	if (rp_port_lock_check(cfg, err, sizeof(err)) == -EBUSY)
		printf("in use: %s\n", err);
}

static bool
rp_run_is_socket(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISSOCK(st.st_mode);
}

/*
 * The host socket when --attach names none (rp_attach_pick()): into path
 * (PATH_MAX), or an error message unless quiet, and false.
 */
static bool
rp_run_attach_default(char *path, bool quiet)
{
	char err[PATH_MAX + 1280];

	if (rp_attach_pick(path, PATH_MAX, err, sizeof(err)) == 0)
		return true;
	if (!quiet)
		fprintf(stderr, "%s: --attach: %s\n", rp_run_prog, err);
	return false;
}

/* --attach --check: attach, print the devices, detach. */
static int
rp_run_attach_check(const char *sock, const char *shim, const char *rdmacm)
{
	struct rp_attach_conn c;
	char addr[INET_ADDRSTRLEN];
	char err[512];
	int ret;

	ret = rp_attach_open(&c, sock, err, sizeof(err));
	if (ret < 0) {
		fprintf(stderr, "%s: %s\n", rp_run_prog, err);
		return RP_RUN_EXIT_CONFIG;
	}
	printf("%s: ok: client %" PRIu32 ", %" PRIu32 " device%s\n", sock,
	       c.client_id, c.nr_devs, c.nr_devs == 1 ? "" : "s");
	for (uint32_t i = 0; i < c.nr_devs; i++) {
		const struct rp_dev_ctl *ctl = c.dev[i].ctl;
		const uint8_t *m = ctl->mac;

		inet_ntop(AF_INET, &ctl->ipv4, addr, sizeof(addr));
		printf("%.*s: ipv4 %s/%" PRIu32
		       ", mac %02x:%02x:%02x:%02x:%02x:%02x, mtu %" PRIu32
		       ", link %s, region %" PRIu64 " KiB, arena %" PRIu64
		       " MiB, wake-up fd %s\n",
		       (int)strnlen(ctl->name, sizeof(ctl->name)), ctl->name,
		       addr, ctl->prefix_len, m[0], m[1], m[2], m[3], m[4],
		       m[5], ctl->mtu,
		       __atomic_load_n(&ctl->link_up, __ATOMIC_RELAXED) ?
		       "up" : "down", c.dev[i].region_size >> 10,
		       c.dev[i].arena_size >> 20,
		       c.dev[i].wake_fd >= 0 ? "yes" : "no");
	}
	rp_run_print_libs(shim, rdmacm);
	rp_attach_close(&c);
	return 0;
}

/* --attach: run the program on the host serving sock. */
static int
rp_run_attach(char **argv, const char *sock, const char *shim,
	      const char *rdmacm, bool check)
{
	char abs_sock[PATH_MAX], abs_shim[PATH_MAX], abs_rdmacm[PATH_MAX];
	char abs_umad[PATH_MAX];

	if (!rp_run_is_socket(sock) || realpath(sock, abs_sock) == NULL) {
		fprintf(stderr, "%s: --attach: %s: %s (start a host with rocepmd-testpmd --host)\n",
			rp_run_prog, sock,
			access(sock, F_OK) == 0 ? "not a socket" :
			strerror(errno));
		return RP_RUN_EXIT_CONFIG;
	}
	if (check)
		return rp_run_attach_check(abs_sock, shim, rdmacm);
	if (!rp_run_lib_check("verbs shim", shim,
			      "use --shim PATH or set ROCEPMD_SHIM", abs_shim) ||
	    !rp_run_lib_check("RDMA CM library", rdmacm,
			      "use --rdmacm PATH or set ROCEPMD_RDMACM",
			      abs_rdmacm) ||
	    !rp_run_lib_check("libibumad discovery library", rp_run_umad(),
			      "set ROCEPMD_UMAD", abs_umad))
		return RP_RUN_EXIT_CONFIG;
	/* The shim attaches when ROCEPMD_ATTACH is set; no configuration.
	 * LD_PRELOAD=shim:rdmacm:umad:(the caller's), as embedded. */
	if (unsetenv("ROCEPMD_CONFIG") != 0 ||
	    setenv("ROCEPMD_ATTACH", abs_sock, 1) != 0 ||
	    rp_run_set_preload(abs_umad) != 0 ||
	    rp_run_set_preload(abs_rdmacm) != 0 ||
	    rp_run_set_preload(abs_shim) != 0) {
		fprintf(stderr, "%s: cannot set the environment: %s\n",
			rp_run_prog, strerror(errno));
		return RP_RUN_EXIT_CONFIG;
	}
	fflush(NULL);
	execvp(argv[0], argv);
	fprintf(stderr, "%s: cannot run %s: %s\n", rp_run_prog, argv[0],
		strerror(errno));
	return RP_RUN_EXIT_EXEC;
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "attach", optional_argument, NULL, 'A' },
		{ "check", no_argument, NULL, 'C' },
		{ "config", required_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		{ "rdmacm", required_argument, NULL, 'r' },
		{ "shim", required_argument, NULL, 's' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	static struct rp_config cfg;
	const char *config_opt = NULL, *shim_opt = NULL, *rdmacm_opt = NULL;
	const char *config, *shim, *rdmacm;
	char abs_config[PATH_MAX], abs_shim[PATH_MAX], abs_rdmacm[PATH_MAX];
	char abs_umad[PATH_MAX];
	char err[1024];
	char attach_sock[PATH_MAX];
	const char *attach_opt = NULL;
	bool check = false, attach = false, implicit = false;
	int opt, rc;

	if (argc > 0 && argv[0] != NULL && argv[0][0] != '\0') {
		const char *slash = strrchr(argv[0], '/');

		rp_run_prog = slash != NULL ? slash + 1 : argv[0];
	}
	/* '+': stop at PROGRAM, whose options are its own */
	while ((opt = getopt_long(argc, argv, "+c:hr:s:V", opts, NULL)) != -1) {
		switch (opt) {
		case 'A':
			attach = true;
			attach_opt = optarg;
			/* --attach SOCKET: only a socket, never the program */
			if (attach_opt == NULL && optind < argc &&
			    rp_run_is_socket(argv[optind]))
				attach_opt = argv[optind++];
			break;
		case 'C':
			check = true;
			break;
		case 'c':
			config_opt = optarg;
			break;
		case 'h':
			rp_run_usage(stdout);
			return 0;
		case 'r':
			rdmacm_opt = optarg;
			break;
		case 's':
			shim_opt = optarg;
			break;
		case 'V':
			printf("%s %s\n", rp_run_prog, RP_VERSION);
			return 0;
		default:
			rp_run_usage(stderr);
			return RP_RUN_EXIT_USAGE;
		}
	}
	if (check && optind < argc) {
		fprintf(stderr, "%s: --check takes no program\n", rp_run_prog);
		return RP_RUN_EXIT_USAGE;
	}
	if (!check && optind >= argc) {
		fprintf(stderr, "%s: no program to run\n", rp_run_prog);
		rp_run_usage(stderr);
		return RP_RUN_EXIT_USAGE;
	}

	/* No configuration anywhere, and a host running: attach to it. */
	if (!attach && rp_run_config_path(config_opt) == NULL &&
	    rp_run_attach_default(attach_sock, true)) {
		fprintf(stderr, "%s: no configuration: attaching to the host on %s\n",
			rp_run_prog, attach_sock);
		attach = true;
		attach_opt = "";
		implicit = true;
	}
	if (attach) {
		if (config_opt != NULL) {
			fprintf(stderr, "%s: --attach and --config: an attached program uses the host's configuration\n",
				rp_run_prog);
			return RP_RUN_EXIT_USAGE;
		}
		if (implicit)
			;	/* attach_sock found above */
		else if (attach_opt != NULL && attach_opt[0] != '\0')
			snprintf(attach_sock, sizeof(attach_sock), "%s",
				 attach_opt);
		else if (!rp_run_attach_default(attach_sock, false))
			return RP_RUN_EXIT_CONFIG;
		shim = rp_run_lib_path(shim_opt, "ROCEPMD_SHIM",
				       RP_SHIM_BUILD_PATH,
				       RP_SHIM_INSTALL_PATH);
		rdmacm = rp_run_lib_path(rdmacm_opt, "ROCEPMD_RDMACM",
					 RP_RDMACM_BUILD_PATH,
					 RP_RDMACM_INSTALL_PATH);
		return rp_run_attach(&argv[optind], attach_sock, shim, rdmacm,
				     check);
	}

	config = rp_run_config_path(config_opt);
	if (config == NULL) {
		fprintf(stderr, "%s: no configuration: use --config FILE or "
			"set ROCEPMD_CONFIG (there is no ./%s), or start a host "
			"(rocepmd-testpmd --host) to attach to\n", rp_run_prog,
			RP_RUN_DEFAULT_CONFIG);
		return RP_RUN_EXIT_CONFIG;
	}
	rc = rp_cfg_load(config, &cfg, err, sizeof(err));
	if (rc != 0) {
		fprintf(stderr, "%s: %s\n", rp_run_prog, err);
		return RP_RUN_EXIT_CONFIG;
	}
	if (realpath(config, abs_config) == NULL) {
		fprintf(stderr, "%s: %s: %s\n", rp_run_prog, config,
			strerror(errno));
		return RP_RUN_EXIT_CONFIG;
	}

	shim = rp_run_lib_path(shim_opt, "ROCEPMD_SHIM", RP_SHIM_BUILD_PATH,
			       RP_SHIM_INSTALL_PATH);
	rdmacm = rp_run_lib_path(rdmacm_opt, "ROCEPMD_RDMACM",
				 RP_RDMACM_BUILD_PATH, RP_RDMACM_INSTALL_PATH);
	if (check) {
		rp_run_print_check(&cfg, abs_config, shim, rdmacm);
		return 0;
	}
	if (!rp_run_lib_check("verbs shim", shim,
			      "use --shim PATH or set ROCEPMD_SHIM", abs_shim) ||
	    !rp_run_lib_check("RDMA CM library", rdmacm,
			      "use --rdmacm PATH or set ROCEPMD_RDMACM",
			      abs_rdmacm) ||
	    !rp_run_lib_check("libibumad discovery library", rp_run_umad(),
			      "set ROCEPMD_UMAD", abs_umad))
		return RP_RUN_EXIT_CONFIG;

	/* The shim would refuse to start: say so before the program runs. */
	rc = rp_port_lock_check(&cfg, err, sizeof(err));
	if (rc == -EBUSY) {
		fprintf(stderr, "%s: %s\n", rp_run_prog, err);
		return RP_RUN_EXIT_CONFIG;
	}

	/* The shim first: LD_PRELOAD=shim:rdmacm:umad:(the caller's) */
	if (setenv("ROCEPMD_CONFIG", abs_config, 1) != 0 ||
	    rp_run_set_preload(abs_umad) != 0 ||
	    rp_run_set_preload(abs_rdmacm) != 0 ||
	    rp_run_set_preload(abs_shim) != 0) {
		fprintf(stderr, "%s: cannot set the environment: %s\n",
			rp_run_prog, strerror(errno));
		return RP_RUN_EXIT_CONFIG;
	}
	fflush(NULL);
	execvp(argv[optind], &argv[optind]);
	fprintf(stderr, "%s: cannot run %s: %s\n", rp_run_prog, argv[optind],
		strerror(errno));
	return RP_RUN_EXIT_EXEC;
}
