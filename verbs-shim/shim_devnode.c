/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The character device node of each rocepmd device, as stat() and access()
 * see it.
 *
 * A kernel verbs device has a node /dev/infiniband/<dev_name> (uverbsN),
 * and some libraries look for it before they open the device: UCX
 * (uct_ib_device_is_accessible(), src/uct/ib/base/ib_md.c) skips every
 * device whose "/dev/infiniband/" + dev_name is not a character device
 * the process may read and write.  A rocepmd device is opened through this
 * shim, never through a node, so nothing is created in /dev: for exactly
 * the path "/dev/infiniband/<dev_name>" of a probed device, stat() reports
 * a character device with mode 0666 and access() grants read and write.
 * Every other path goes to the kernel unchanged (fstatat, faccessat: the
 * calls glibc's own stat and access make).
 *
 * Only these calls are answered: access(), and stat() under both of the
 * names a program may import it by (stat, and stat64 where it was built
 * with _FILE_OFFSET_BITS=64); UCX 1.13 imports access and stat.  open()
 * of the path still fails with ENOENT, as nothing should open it.
 */

/* Both stat and stat64 are defined here, each under its own name. */
#undef _FILE_OFFSET_BITS
#define _LARGEFILE64_SOURCE 1

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "shim.h"

#define SHIM_DEVNODE_DIR	"/dev/infiniband/"

/* The rocepmd device whose node is `path`, or -1. */
static int
shim_devnode_of(const char *path)
{
	size_t n = sizeof(SHIM_DEVNODE_DIR) - 1;

	if (path == NULL || strncmp(path, SHIM_DEVNODE_DIR, n) != 0)
		return -1;
	return shim_dev_node(path + n);
}

/*
 * stat() under the name `fn` with `type` (stat, stat64): the node of a
 * rocepmd device is a character device, mode 0666, device number
 * 0:<index>, which names no kernel device; every other path goes to
 * `real` (fstatat, fstatat64).
 */
#define SHIM_DEVNODE_STAT(fn, type, real) \
SHIM_EXPORT int \
fn(const char *restrict path, struct type *restrict st) \
{ \
	int dev = shim_devnode_of(path); \
 \
	if (dev < 0) \
		return real(AT_FDCWD, path, st, 0); \
	memset(st, 0, sizeof(*st)); \
	st->st_mode = S_IFCHR | 0666; \
	st->st_nlink = 1; \
	st->st_rdev = makedev(0, (unsigned int)dev); \
	st->st_blksize = 4096; \
	return 0; \
}

SHIM_DEVNODE_STAT(stat, stat, fstatat)
SHIM_DEVNODE_STAT(stat64, stat64, fstatat64)

SHIM_EXPORT int
access(const char *path, int mode)
{
	if (shim_devnode_of(path) < 0)
		return faccessat(AT_FDCWD, path, mode, 0);
	if (mode & ~(R_OK | W_OK | X_OK)) {
		errno = EINVAL;
		return -1;
	}
	if (mode & X_OK) {
		errno = EACCES;
		return -1;
	}
	return 0;
}
