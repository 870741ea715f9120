/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the EAL leaves to its user: DPDK 22.11 creates a runtime directory
 * per --file-prefix (/var/run/dpdk/<prefix> for root, else under
 * $XDG_RUNTIME_DIR or /tmp) and never removes it, not even in
 * rte_eal_cleanup().  With rocepmd's per-process prefix every program would
 * leave one empty directory behind.  The engine notes the directory once
 * the EAL has made it and removes it when the process is done with the EAL.
 *
 * A process killed by a signal runs no exit handler and leaves its
 * directory (with the telemetry socket in it).  The engine is a library,
 * often preloaded into a program that has signal handlers of its own or
 * none: installing ours would change how that program dies, and SIGKILL
 * cannot be caught anyway.  So the next start sweeps instead: when it
 * notes its own directory it removes the rocepmd-<pid> directories beside
 * it that no live process uses.  Liveness is asked of what the EAL left,
 * not of the PID alone, which another PID namespace sharing the directory
 * or a reused PID would get wrong: a socket that refuses a connection and
 * a file that nobody locks are dead; anything else keeps the directory.
 */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <rte_eal.h>

#include "rocepmd.h"
#include "rp_log.h"

static char rp_eal_rundir[PATH_MAX];
static pid_t rp_eal_rundir_pid;

/* The PID of a directory name "rocepmd-<pid>", or 0. */
static pid_t
rp_eal_prefix_pid(const char *name)
{
	static const char prefix[] = "rocepmd-";
	const char *digits = name + sizeof(prefix) - 1;
	char *end;
	long pid;

	if (strncmp(name, prefix, sizeof(prefix) - 1) != 0 ||
	    digits[0] < '1' || digits[0] > '9')
		return 0;
	errno = 0;
	pid = strtol(digits, &end, 10);
	if (errno != 0 || *end != '\0' || pid <= 0 || pid > INT_MAX)
		return 0;
	return (pid_t)pid;
}

/* Whether a Unix socket has no listener: connect() is refused. */
static bool
rp_eal_socket_dead(int dirfd, const char *name)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	char path[PATH_MAX];
	bool dead;
	int fd;

	/* Through /proc: the full path may not fit sun_path. */
	if ((size_t)snprintf(path, sizeof(path), "/proc/self/fd/%d/%s", dirfd,
			     name) >= sizeof(sun.sun_path))
		return false;
	memcpy(sun.sun_path, path, strlen(path) + 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return false;
	dead = connect(fd, (struct sockaddr *)&sun, sizeof(sun)) < 0 &&
		errno == ECONNREFUSED;
	close(fd);
	return dead;
}

/* Whether no process holds a lock on a file (the EAL's shared config). */
static bool
rp_eal_file_unlocked(int dirfd, const char *name)
{
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
	bool unlocked;
	int fd;

	fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return false;
	unlocked = fcntl(fd, F_GETLK, &fl) == 0 && fl.l_type == F_UNLCK;
	close(fd);
	return unlocked;
}

/*
 * Remove the directory name of parent if nothing in it is alive: every
 * entry a socket without a listener or a file without a lock.
 * @return 0 removed, or a negative errno (-EBUSY: something is alive)
 */
static int
rp_eal_rundir_reap(int parent, const char *name)
{
	struct dirent *de;
	int ret = 0;
	DIR *d;
	int fd;

	fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
		    O_CLOEXEC);
	if (fd < 0)
		return -errno;
	d = fdopendir(fd);
	if (d == NULL) {
		ret = -errno;
		close(fd);
		return ret;
	}
	while (ret == 0 && (de = readdir(d)) != NULL) {
		struct stat st;

		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (fstatat(fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
			ret = -errno;
		else if (S_ISSOCK(st.st_mode) ?
			 !rp_eal_socket_dead(fd, de->d_name) :
			 !S_ISREG(st.st_mode) ||
			 !rp_eal_file_unlocked(fd, de->d_name))
			ret = -EBUSY;
	}
	if (ret == 0) {
		rewinddir(d);
		while ((de = readdir(d)) != NULL) {
			if (strcmp(de->d_name, ".") != 0 &&
			    strcmp(de->d_name, "..") != 0)
				unlinkat(fd, de->d_name, 0);
		}
		if (unlinkat(parent, name, AT_REMOVEDIR) != 0)
			ret = -errno;
	}
	closedir(d);
	return ret;
}

/* The rocepmd-<pid> directories beside dir whose process is gone. */
static void
rp_eal_rundir_sweep(const char *dir)
{
	char parent[PATH_MAX];
	struct dirent *de;
	char *slash;
	DIR *d;

	snprintf(parent, sizeof(parent), "%s", dir);
	slash = strrchr(parent, '/');
	if (slash == NULL || slash == parent)
		return;
	*slash = '\0';
	d = opendir(parent);
	if (d == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		pid_t pid = rp_eal_prefix_pid(de->d_name);
		int ret;

		/* A PID that lives (or is not ours to signal): kept, without
		 * knocking on its sockets. */
		if (pid == 0 || pid == getpid() || kill(pid, 0) == 0 ||
		    errno != ESRCH)
			continue;
		ret = rp_eal_rundir_reap(dirfd(d), de->d_name);
		if (ret == 0)
			RP_LOG(INFO, "removed %s/%s, left by process %ld, which is gone",
			       parent, de->d_name, (long)pid);
		else
			RP_LOG(DEBUG, "kept %s/%s of process %ld: %s", parent,
			       de->d_name, (long)pid, strerror(-ret));
	}
	closedir(d);
}

void
rp_eal_rundir_note(void)
{
	const char *dir = rte_eal_get_runtime_dir();

	if (dir == NULL || dir[0] == '\0' ||
	    strlen(dir) >= sizeof(rp_eal_rundir))
		return;
	strcpy(rp_eal_rundir, dir);
	rp_eal_rundir_pid = getpid();
	rp_eal_rundir_sweep(dir);
}

int
rp_eal_rundir_remove(void)
{
	int ret;

	/* A forked child shares the directory with its parent: not ours. */
	if (rp_eal_rundir[0] == '\0' || getpid() != rp_eal_rundir_pid)
		return 0;
	/*
	 * rmdir() removes only an empty directory: whatever a live EAL still
	 * keeps there (a shared config, a multi-process or telemetry socket,
	 * another process's files under a shared prefix) keeps it.
	 */
	ret = rmdir(rp_eal_rundir) == 0 || errno == ENOENT ? 0 : -errno;
	if (ret < 0) {
		RP_LOG(DEBUG, "EAL runtime directory %s kept: %s",
		       rp_eal_rundir, strerror(-ret));
		return ret;
	}
	RP_LOG(DEBUG, "removed the EAL runtime directory %s", rp_eal_rundir);
	rp_eal_rundir[0] = '\0';
	return 0;
}
