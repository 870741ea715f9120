/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rp_port_lock(): one engine per port of the host.  No EAL; the lock
 * directory is a private one ($ROCEPMD_LOCK_DIR), the port is "lo" (every
 * network namespace has it), and the second engine is a forked child.
 */

#include <errno.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "rocepmd.h"

static char tl_dir[64];
static char tl_err[1024];

/* Child exit statuses. */
enum {
	TL_OK = 0,
	TL_WRONG_RC = 10,
	TL_WRONG_MSG = 11,
	TL_NO_NETNS = 12,
};

static void
tl_load(const char *device, struct rp_config *cfg)
{
	char path[96], text[512], err[1024];
	FILE *f;
	int fd;

	snprintf(path, sizeof(path), "%s/cfg_XXXXXX", tl_dir);
	fd = mkstemp(path);
	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	assert_non_null(f);
	snprintf(text, sizeof(text),
		 "[port0]\ndevice = %s\nipv4 = 192.0.2.1/24\n", device);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
	if (rp_cfg_load(path, cfg, err, sizeof(err)) != 0)
		fail_msg("%s: %s", device, err);
	unlink(path);
}

/* Files in the lock directory whose name ends in .lock. */
static int
tl_lock_files(char *name, size_t len)
{
	char cmd[128];
	FILE *p;
	int n = 0;

	snprintf(cmd, sizeof(cmd), "ls %s | grep '\\.lock$'", tl_dir);
	p = popen(cmd, "r");
	assert_non_null(p);
	while (fgets(name, (int)len, p) != NULL) {
		name[strcspn(name, "\n")] = '\0';
		n++;
	}
	pclose(p);
	return n;
}

/* Run fn in a child; return its exit status. */
static int
tl_child(int (*fn)(const struct rp_config *), const struct rp_config *cfg)
{
	int status;
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0)
		_exit(fn(cfg));
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	return WEXITSTATUS(status);
}

/* The child is refused, by check and by lock, naming the parent. */
static int
tl_child_refused(const struct rp_config *cfg)
{
	char want[64];

	snprintf(want, sizeof(want), "is in use by PID %ld (test_port_lock)",
		 (long)getppid());
	if (rp_port_lock_check(cfg, tl_err, sizeof(tl_err)) != -EBUSY)
		return TL_WRONG_RC;
	if (strstr(tl_err, want) == NULL ||
	    strstr(tl_err, "port0 (net_af_packet0,iface=lo)") == NULL ||
	    strstr(tl_err, "interface lo") == NULL) {
		fprintf(stderr, "check: %s\n", tl_err);
		return TL_WRONG_MSG;
	}
	if (rp_port_lock(cfg, tl_err, sizeof(tl_err)) != -EBUSY)
		return TL_WRONG_RC;
	if (strstr(tl_err, want) == NULL) {
		fprintf(stderr, "lock: %s\n", tl_err);
		return TL_WRONG_MSG;
	}
	return TL_OK;
}

static int
tl_child_busy(const struct rp_config *cfg)
{
	if (rp_port_lock(cfg, tl_err, sizeof(tl_err)) != -EBUSY)
		return TL_WRONG_RC;
	return TL_OK;
}

static int
tl_child_takes(const struct rp_config *cfg)
{
	if (rp_port_lock_check(cfg, tl_err, sizeof(tl_err)) != 0 ||
	    rp_port_lock(cfg, tl_err, sizeof(tl_err)) != 0) {
		fprintf(stderr, "%s\n", tl_err);
		return TL_WRONG_RC;
	}
	rp_port_unlock();
	return TL_OK;
}

/* In a network namespace of its own, "lo" is another port. */
static int
tl_child_other_netns(const struct rp_config *cfg)
{
	if (unshare(CLONE_NEWNET) != 0)
		return TL_NO_NETNS;
	return tl_child_takes(cfg);
}

static void
test_second_refused(void **state)
{
	struct rp_config cfg;
	char name[256], path[512], line[512], want[64];
	FILE *f;

	(void)state;
	tl_load("net_af_packet0,iface=lo", &cfg);
	assert_int_equal(rp_port_lock(&cfg, tl_err, sizeof(tl_err)), 0);

	/* one file, keyed by namespace and index, naming us */
	assert_int_equal(tl_lock_files(name, sizeof(name)), 1);
	assert_true(strncmp(name, "net", 3) == 0);
	assert_non_null(strstr(name, "-if1.lock"));
	/*
	 * Read it through another process: closing a descriptor of the file
	 * here would drop our POSIX lock on it.
	 */
	snprintf(path, sizeof(path), "cat %s/%s", tl_dir, name);
	f = popen(path, "r");
	assert_non_null(f);
	assert_non_null(fgets(line, sizeof(line), f));
	pclose(f);
	snprintf(want, sizeof(want), "%ld test_port_lock ", (long)getpid());
	assert_true(strncmp(line, want, strlen(want)) == 0);

	/* locking again in the owner is no conflict */
	assert_int_equal(rp_port_lock(&cfg, tl_err, sizeof(tl_err)), 0);
	assert_int_equal(rp_port_lock_check(&cfg, tl_err, sizeof(tl_err)), 0);

	assert_int_equal(tl_child(tl_child_refused, &cfg), TL_OK);

	/* released: the file goes, and the next one takes the port */
	rp_port_unlock();
	assert_int_equal(tl_lock_files(name, sizeof(name)), 0);
	assert_int_equal(tl_child(tl_child_takes, &cfg), TL_OK);
}

/* A holder that dies without a word leaves no claim behind. */
static void
test_no_stale_lock(void **state)
{
	struct rp_config cfg;
	char name[256];
	int up[2], hold[2], status;
	pid_t pid;
	char c;

	(void)state;
	tl_load("net_af_packet0,iface=lo", &cfg);
	assert_int_equal(pipe(up), 0);
	assert_int_equal(pipe(hold), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(up[0]);
		close(hold[1]);
		if (rp_port_lock(&cfg, tl_err, sizeof(tl_err)) != 0)
			_exit(TL_WRONG_RC);
		c = 1;
		if (write(up[1], &c, 1) != 1)
			_exit(TL_WRONG_RC);
		/* until killed, or the parent is gone (end of file) */
		while (read(hold[0], &c, 1) > 0)
			;
		_exit(TL_OK);
	}
	close(up[1]);
	close(hold[0]);
	assert_int_equal(read(up[0], &c, 1), 1);
	close(up[0]);
	assert_int_equal(rp_port_lock_check(&cfg, tl_err, sizeof(tl_err)),
			 -EBUSY);
	assert_int_equal(rp_port_lock(&cfg, tl_err, sizeof(tl_err)), -EBUSY);

	assert_int_equal(kill(pid, SIGKILL), 0);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	close(hold[1]);
	/* its file is still there, but nobody holds it */
	assert_int_equal(tl_lock_files(name, sizeof(name)), 1);
	assert_int_equal(rp_port_lock_check(&cfg, tl_err, sizeof(tl_err)), 0);
	assert_int_equal(rp_port_lock(&cfg, tl_err, sizeof(tl_err)), 0);
	rp_port_unlock();
	assert_int_equal(tl_lock_files(name, sizeof(name)), 0);
}

/* Ports inside the process are not claimed; PCI devices are, by address. */
static void
test_what_is_claimed(void **state)
{
	struct rp_config cfg, cfg2;
	char name[256];

	(void)state;
	tl_load("net_ring0", &cfg);
	assert_int_equal(rp_port_lock(&cfg, tl_err, sizeof(tl_err)), 0);
	assert_int_equal(tl_lock_files(name, sizeof(name)), 0);
	rp_port_unlock();

	/* an interface that does not exist: the PMD will say so */
	tl_load("net_af_packet0,iface=rp-no-such", &cfg);
	assert_int_equal(rp_port_lock(&cfg, tl_err, sizeof(tl_err)), 0);
	assert_int_equal(tl_lock_files(name, sizeof(name)), 0);
	rp_port_unlock();

	tl_load("0000:00:1f.6", &cfg);
	assert_int_equal(rp_port_lock(&cfg, tl_err, sizeof(tl_err)), 0);
	assert_int_equal(tl_lock_files(name, sizeof(name)), 1);
	assert_string_equal(name, "pci-0000:00:1f.6.lock");
	/* the same device in the short form is the same port */
	tl_load("00:1f.6", &cfg2);
	assert_int_equal(tl_child(tl_child_busy, &cfg2), TL_OK);
	rp_port_unlock();
}

/* The same interface name in another network namespace is another port. */
static void
test_other_netns(void **state)
{
	struct rp_config cfg;
	int rc;

	(void)state;
	tl_load("net_af_packet0,iface=lo", &cfg);
	assert_int_equal(rp_port_lock(&cfg, tl_err, sizeof(tl_err)), 0);
	rc = tl_child(tl_child_other_netns, &cfg);
	rp_port_unlock();
	if (rc == TL_NO_NETNS)
		skip();
	assert_int_equal(rc, TL_OK);
}

/* After each test, even a failed one: nothing held for the next. */
static int
tl_unlock(void **state)
{
	(void)state;
	rp_port_unlock();
	return 0;
}

static int
tl_setup(void **state)
{
	(void)state;
	snprintf(tl_dir, sizeof(tl_dir), "/tmp/rp_test_lock_XXXXXX");
	if (mkdtemp(tl_dir) == NULL)
		return -1;
	return setenv("ROCEPMD_LOCK_DIR", tl_dir, 1);
}

static int
tl_teardown(void **state)
{
	char cmd[96];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tl_dir);
	return system(cmd) == 0 ? 0 : -1;
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_second_refused, tl_unlock),
		cmocka_unit_test_teardown(test_no_stale_lock, tl_unlock),
		cmocka_unit_test_teardown(test_what_is_claimed, tl_unlock),
		cmocka_unit_test_teardown(test_other_netns, tl_unlock),
	};

	return cmocka_run_group_tests(tests, tl_setup, tl_teardown);
}
