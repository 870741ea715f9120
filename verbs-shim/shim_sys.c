/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Process environment: fork support and the sysfs helpers.
 *
 * rocepmd never pins memory for a DMA engine: the engine runs in this
 * process and reads registered memory through ordinary pointers, so a
 * fork() cannot make it copy-on-write behind a device's back.  Fork
 * protection is therefore "unneeded", and the range calls succeed without
 * doing anything.
 */

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_common.h>

#include "shim.h"

SHIM_EXPORT int
ibv_fork_init(void)
{
	return 0;
}

SHIM_EXPORT enum ibv_fork_status
ibv_is_fork_initialized(void)
{
	return IBV_FORK_UNNEEDED;
}

SHIM_EXPORT int
ibv_dontfork_range(void *base, size_t size)
{
	RTE_SET_USED(base);
	RTE_SET_USED(size);
	return 0;
}

SHIM_EXPORT int
ibv_dofork_range(void *base, size_t size)
{
	RTE_SET_USED(base);
	RTE_SET_USED(size);
	return 0;
}

static char shim_sysfs_path[IBV_SYSFS_PATH_MAX];
static pthread_once_t shim_sysfs_once = PTHREAD_ONCE_INIT;

static void
shim_sysfs_path_init(void)
{
	const char *env = NULL;
	size_t len;

	/* The caller's environment only when not running set-user-ID. */
	if (getuid() == geteuid())
		env = getenv("SYSFS_PATH");
	if (env == NULL) {
		snprintf(shim_sysfs_path, sizeof(shim_sysfs_path), "/sys");
		return;
	}
	snprintf(shim_sysfs_path, sizeof(shim_sysfs_path), "%s", env);
	len = strlen(shim_sysfs_path);
	while (len > 0 && shim_sysfs_path[len - 1] == '/')
		shim_sysfs_path[--len] = '\0';
}

/* Where sysfs is mounted: $SYSFS_PATH, else /sys, as libibverbs says. */
SHIM_EXPORT const char *
ibv_get_sysfs_path(void)
{
	pthread_once(&shim_sysfs_once, shim_sysfs_path_init);
	return shim_sysfs_path;
}

/*
 * Read dir/file into buf, dropping a trailing newline.
 * @return the length read, or -1 with errno set (a file too long to
 *   terminate within size is an error, as in libibverbs)
 */
SHIM_EXPORT int
ibv_read_sysfs_file(const char *dir, const char *file, char *buf,
		    size_t size)
{
	char path[IBV_SYSFS_PATH_MAX * 2];
	ssize_t len;
	int fd;

	if (snprintf(path, sizeof(path), "%s/%s", dir, file) >=
	    (int)sizeof(path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	len = read(fd, buf, size);
	close(fd);
	if (len > 0) {
		if (buf[len - 1] == '\n') {
			buf[--len] = '\0';
		} else if ((size_t)len < size) {
			buf[len] = '\0';
		} else {
			errno = EOVERFLOW;
			return -1;
		}
	}
	return (int)len;
}
