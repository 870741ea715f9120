/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * EAL arguments from a loaded configuration (rp_cfg_eal_argv()): the [eal]
 * args, and what they leave out (lcores, devices, memory, file prefix, log
 * levels) from the rest of the configuration.
 */

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <rte_common.h>
#include <rte_log.h>

#include "rp_config.h"

#define RP_CFG_DEFAULT_NO_HUGE_MB	"512"

struct rp_cfg_argv {
	char **argv;
	int argc;
	int max;
	char *buf;
	size_t len;
	size_t used;
	int rc;
};

static void __rte_format_printf(2, 3)
rp_cfg_argv_add(struct rp_cfg_argv *a, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (a->rc != 0)
		return;
	if (a->argc + 1 >= a->max) {
		a->rc = -E2BIG;
		return;
	}
	va_start(ap, fmt);
	n = vsnprintf(a->buf + a->used, a->len - a->used, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= a->len - a->used) {
		a->rc = -ENOSPC;
		return;
	}
	a->argv[a->argc++] = a->buf + a->used;
	a->used += (size_t)n + 1;
}

/*
 * Whether argv[from..to) holds an option: short "-x" or "-xVALUE" when c is
 * not 0, long "--name" or "--name=VALUE" when name is not NULL.
 */
static bool
rp_cfg_argv_has(char * const *argv, int from, int to, char c,
		const char *name)
{
	int i;

	for (i = from; i < to; i++) {
		const char *w = argv[i];

		if (c != '\0' && w[0] == '-' && w[1] == c)
			return true;
		if (name != NULL && w[0] == '-' && w[1] == '-') {
			size_t n = strlen(name);

			if (strncmp(w + 2, name, n) == 0 &&
			    (w[2 + n] == '\0' || w[2 + n] == '='))
				return true;
		}
	}
	return false;
}

/*
 * Whether the word w of n characters is a --log-level option; *value_next
 * tells whether its value is the next word ("--log-level LEVEL").
 */
static bool
rp_cfg_word_log_level(const char *w, size_t n, bool *value_next)
{
	static const char opt[] = "--log-level";
	const size_t k = sizeof(opt) - 1;

	if (n < k || strncmp(w, opt, k) != 0 || (n > k && w[k] != '='))
		return false;
	*value_next = n == k;
	return true;
}

/* The words of the [eal] args: all, or only the --log-level options. */
static void
rp_cfg_argv_add_user(struct rp_cfg_argv *a, const char *args, bool log_only)
{
	bool value_next = false;
	const char *p;

	for (p = args; *p != '\0';) {
		bool take;
		size_t n;

		while (isspace((unsigned char)*p))
			p++;
		n = 0;
		while (p[n] != '\0' && !isspace((unsigned char)p[n]))
			n++;
		if (n > 0) {
			take = !log_only || value_next;
			if (rp_cfg_word_log_level(p, n, &value_next))
				take = true;
			else
				value_next = false;
			if (take)
				rp_cfg_argv_add(a, "%.*s", (int)n, p);
		}
		p += n;
	}
}

/*
 * [eal] log_level: every log type at that level, rocepmd's and DPDK's,
 * except that below info the EAL and telemetry say errors only.  A healthy
 * start of Debian's 22.11 has each warn once, both false alarms: "No free
 * 1048576 kB hugepages" while 2 MiB pages serve, and "No legacy callbacks,
 * legacy socket not created"; the rest of what they say at start is info.
 *
 * EAL applies --log-level options in order to the types that exist (the
 * EAL's own, rocepmd's: registered by constructors), but gives a type
 * registered during rte_eal_init() (telemetry, the drivers it loads) the
 * level of the first option that matches it.  So the narrower options come
 * both before and after the wider one.
 */
static void
rp_cfg_argv_add_log_levels(struct rp_cfg_argv *a, uint32_t level)
{
	static const char * const quiet[] = { "lib.eal", "lib.telemetry" };
	const char *all, *start;
	unsigned int pass, i;

	/* 0: a configuration not from rp_cfg_load(), the default */
	if (level == 0)
		level = RTE_LOG_NOTICE;
	if (level >= RTE_DIM(rp_log_level_names)) {
		a->rc = -EINVAL;
		return;
	}
	all = rp_log_level_names[level];
	start = rp_log_level_names[level > RTE_LOG_NOTICE ? level :
				   RTE_MIN(level, (uint32_t)RTE_LOG_ERR)];
	for (pass = 0; pass < 2; pass++) {
		if (pass == 1)
			rp_cfg_argv_add(a, "--log-level=*:%s", all);
		if (start == all)
			continue;
		for (i = 0; i < RTE_DIM(quiet); i++)
			rp_cfg_argv_add(a, "--log-level=%s:%s", quiet[i],
					start);
	}
}

/* Whether the kernel has any free huge page, of any size. */
static bool
rp_cfg_hugepages_free(void)
{
	static const char dir[] = "/sys/kernel/mm/hugepages";
	bool found = false;
	struct dirent *de;
	DIR *d;

	d = opendir(dir);
	if (d == NULL)
		return false;
	while (!found && (de = readdir(d)) != NULL) {
		char path[PATH_MAX];
		unsigned long n = 0;
		FILE *f;

		if (strncmp(de->d_name, "hugepages-", 10) != 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s/free_hugepages", dir,
			 de->d_name);
		f = fopen(path, "r");
		if (f == NULL)
			continue;
		if (fscanf(f, "%lu", &n) == 1 && n > 0)
			found = true;
		fclose(f);
	}
	closedir(d);
	return found;
}

int
rp_cfg_eal_argv(const struct rp_config *cfg, const char *prog,
		char **argv, int max_args, char *storage, size_t storage_len)
{
	struct rp_cfg_argv a = {
		.argv = argv,
		.max = max_args,
		.buf = storage,
		.len = storage_len,
	};
	char lcores[16 * (RP_MAX_ENGINE_LCORES + 1)];
	bool all_vdev = true, no_huge;
	int user, end;
	uint32_t i;

	if (cfg == NULL || argv == NULL || storage == NULL || max_args < 1 ||
	    storage_len == 0)
		return -EINVAL;

	rp_cfg_argv_add(&a, "%s", prog != NULL ? prog : "rocepmd");
	user = a.argc;
	rp_cfg_argv_add_user(&a, cfg->eal_args, false);
	if (a.rc != 0)
		return a.rc;
	end = a.argc;

	if (!rp_cfg_argv_has(argv, user, end, 'l', "lcores") &&
	    !rp_cfg_argv_has(argv, user, end, 'c', NULL)) {
		snprintf(lcores, sizeof(lcores), "%" PRIu32, cfg->main_lcore);
		for (i = 0; i < cfg->nb_lcores; i++)
			snprintf(lcores + strlen(lcores),
				 sizeof(lcores) - strlen(lcores), ",%" PRIu32,
				 cfg->lcores[i]);
		rp_cfg_argv_add(&a, "-l");
		rp_cfg_argv_add(&a, "%s", lcores);
		if (!rp_cfg_argv_has(argv, user, end, '\0', "main-lcore")) {
			rp_cfg_argv_add(&a, "--main-lcore");
			rp_cfg_argv_add(&a, "%" PRIu32, cfg->main_lcore);
		}
	}
	for (i = 0; i < cfg->nb_ports && i < RP_MAX_PORTS; i++) {
		const struct rp_port_cfg *port = &cfg->port[i];

		all_vdev &= !port->is_pci;
		rp_cfg_argv_add(&a, port->is_pci ? "-a" : "--vdev");
		rp_cfg_argv_add(&a, "%s", port->device);
	}
	if (all_vdev && !rp_cfg_argv_has(argv, user, end, 'a', "allow") &&
	    !rp_cfg_argv_has(argv, user, end, 'b', "block") &&
	    !rp_cfg_argv_has(argv, user, end, '\0', "no-pci"))
		rp_cfg_argv_add(&a, "--no-pci");
	/*
	 * Memory.  In 22.11 --no-huge implies --legacy-mem, which EAL refuses
	 * with --in-memory: without huge pages, --no-shconf stands in for it
	 * (no shared config file, no multi-process socket).
	 */
	no_huge = rp_cfg_argv_has(argv, user, end, '\0', "no-huge");
	if (!no_huge && !rp_cfg_argv_has(argv, user, end, 'm', "socket-mem") &&
	    !rp_cfg_argv_has(argv, user, end, '\0', "in-memory") &&
	    !rp_cfg_hugepages_free()) {
		rp_cfg_argv_add(&a, "--no-huge");
		rp_cfg_argv_add(&a, "-m");
		rp_cfg_argv_add(&a, RP_CFG_DEFAULT_NO_HUGE_MB);
		no_huge = true;
	}
	if (no_huge) {
		if (!rp_cfg_argv_has(argv, user, end, '\0', "no-shconf") &&
		    !rp_cfg_argv_has(argv, user, end, '\0', "in-memory"))
			rp_cfg_argv_add(&a, "--no-shconf");
	} else if (!rp_cfg_argv_has(argv, user, end, '\0', "in-memory")) {
		rp_cfg_argv_add(&a, "--in-memory");
	}
	if (!rp_cfg_argv_has(argv, user, end, '\0', "file-prefix"))
		rp_cfg_argv_add(&a, "--file-prefix=rocepmd-%ld",
				(long)getpid());
	/* Last: the [eal] args' own --log-level options, given before
	 * log_level's and again after them, win over them (see above). */
	rp_cfg_argv_add_log_levels(&a, cfg->log_level);
	rp_cfg_argv_add_user(&a, cfg->eal_args, true);
	if (a.rc != 0)
		return a.rc;
	argv[a.argc] = NULL;
	return a.argc;
}
