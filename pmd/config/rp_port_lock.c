/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * One engine per port of the host.  Two programs started with the same
 * configuration would both open the interface, both answer for the same
 * address and hand out the same QP numbers, and their streams would
 * corrupt each other.  Until programs can share a device, the first engine
 * on a port owns it and a second one refuses to start, naming the owner.
 *
 * A port that reaches something of the host is claimed with a lock file,
 * <dir>/<key>.lock (dir: $ROCEPMD_LOCK_DIR, else /run/rocepmd/ports):
 *
 *   kernel interface (a vdev with iface=: af_packet, af_xdp, tap)
 *     key net<inode>-if<index>: the network namespace's inode
 *     (/proc/self/ns/net) and the interface's index in it, so the same
 *     name in two namespaces is two ports, and a renamed interface is
 *     still the same one;
 *   PCI device
 *     key pci-<DDDD:BB:DD.F>, since a PCI device is the host's whatever
 *     the namespace.
 *
 * Ports inside the process (net_ring, memif, null) have no key and no lock.
 *
 * The claim is a POSIX record lock (fcntl F_SETLK) on the whole file, held
 * while the process lives.  The kernel drops it when the process dies,
 * however it dies, so a crash leaves no stale claim; a forked child does
 * not inherit it (it has no engine either); F_GETLK names the holder's PID
 * without taking the lock, so asking never gets in an owner's way.  The
 * file also holds "PID NAME DEVICE" for the message.  At a clean exit the
 * owner unlinks the file while still holding the lock; a claimant that
 * locked a file which is no longer at the path tries again.
 *
 * No EAL here: rocepmd-run asks before it runs the program, and the shim
 * claims before rte_eal_init() opens the ports.
 */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <net/if.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "rocepmd.h"

#define RP_LOCK_DIR_DEFAULT	"/run/rocepmd/ports"
#define RP_LOCK_TRIES		8	/* owner gone or file replaced */

struct rp_lock_port {
	bool held;
	int fd;
	char path[PATH_MAX];
};

static struct {
	pid_t pid;			/* process that holds the locks */
	struct rp_lock_port port[RP_MAX_PORTS];
} rp_locks;

/* Lock directory: $ROCEPMD_LOCK_DIR, else the default. */
static const char *
rp_lock_dir(void)
{
	const char *d = getenv("ROCEPMD_LOCK_DIR");

	return d != NULL && d[0] != '\0' ? d : RP_LOCK_DIR_DEFAULT;
}

/* Value of devarg key in a device string ("drv,k=v,..."), or false. */
static bool
rp_lock_devarg(const char *device, const char *key, char *val, size_t len)
{
	size_t klen = strlen(key);
	const char *p = strchr(device, ',');

	while (p != NULL) {
		size_t n;

		p++;
		n = strcspn(p, ",");
		if (n > klen && strncmp(p, key, klen) == 0 && p[klen] == '=') {
			n -= klen + 1;
			if (n == 0 || n >= len)
				return false;
			memcpy(val, p + klen + 1, n);
			val[n] = '\0';
			return true;
		}
		p = strchr(p, ',');
	}
	return false;
}

/*
 * Key and description of a port's host resource.
 * @return 1 (key set), 0 (nothing of the host: no lock), negative errno
 */
static int
rp_lock_key(const struct rp_port_cfg *p, char *key, size_t klen, char *what,
	    size_t wlen)
{
	char ifname[IF_NAMESIZE];
	unsigned int ifindex;
	struct stat st;

	if (p->is_pci) {
		snprintf(key, klen, "pci-%s", p->ethdev_name);
		snprintf(what, wlen, "PCI device %s", p->ethdev_name);
		return 1;
	}
	if (!rp_lock_devarg(p->device, "iface", ifname, sizeof(ifname)))
		return 0;
	/* No such interface: the PMD says so when it opens it. */
	ifindex = if_nametoindex(ifname);
	if (ifindex == 0)
		return 0;
	if (stat("/proc/self/ns/net", &st) != 0)
		return -errno;
	snprintf(key, klen, "net%" PRIu64 "-if%u", (uint64_t)st.st_ino,
		 ifindex);
	snprintf(what, wlen, "interface %s", ifname);
	return 1;
}

static int
rp_lock_path(const struct rp_port_cfg *p, char *path, size_t plen,
	     char *what, size_t wlen)
{
	char key[96];
	int ret;

	ret = rp_lock_key(p, key, sizeof(key), what, wlen);
	if (ret <= 0)
		return ret;
	if ((size_t)snprintf(path, plen, "%s/%s.lock", rp_lock_dir(), key) >=
	    plen)
		return -ENAMETOOLONG;
	return 1;
}

/* mkdir -p of the lock directory. */
static int
rp_lock_mkdir(void)
{
	char d[PATH_MAX];
	char *s;

	if ((size_t)snprintf(d, sizeof(d), "%s", rp_lock_dir()) >= sizeof(d))
		return -ENAMETOOLONG;
	for (s = d + 1; *s != '\0'; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		if (mkdir(d, 0755) != 0 && errno != EEXIST)
			return -errno;
		*s = '/';
	}
	if (mkdir(d, 0755) != 0 && errno != EEXIST)
		return -errno;
	return 0;
}

/*
 * Who holds the lock on fd: the PID from the kernel, the program name from
 * the file when it names the same PID, else from /proc.
 * @return the PID (0 if held by a process we cannot see, in another PID
 *	namespace, and the file does not say), or -1 if nobody holds it
 */
static pid_t
rp_lock_holder(int fd, char *name, size_t len)
{
	struct flock fl = {
		.l_type = F_WRLCK,
		.l_whence = SEEK_SET,
	};
	char buf[512], comm[64], file_name[256];
	long file_pid = 0;
	ssize_t n;
	FILE *f;

	snprintf(name, len, "?");
	if (fcntl(fd, F_GETLK, &fl) != 0 || fl.l_type == F_UNLCK)
		return -1;
	n = pread(fd, buf, sizeof(buf) - 1, 0);
	if (n > 0) {
		buf[n] = '\0';
		if (sscanf(buf, "%ld %255s", &file_pid, file_name) != 2)
			file_pid = 0;
	}
	/* l_pid is 0 when the holder is in a PID namespace we cannot see. */
	if (fl.l_pid == 0 && file_pid > 0)
		fl.l_pid = (pid_t)file_pid;
	if (file_pid > 0 && file_pid == fl.l_pid) {
		snprintf(name, len, "%s", file_name);
		return fl.l_pid;
	}
	if (fl.l_pid == 0)
		return 0;
	snprintf(buf, sizeof(buf), "/proc/%ld/comm", (long)fl.l_pid);
	f = fopen(buf, "re");
	if (f != NULL) {
		if (fgets(comm, sizeof(comm), f) != NULL) {
			comm[strcspn(comm, "\n")] = '\0';
			snprintf(name, len, "%s", comm);
		}
		fclose(f);
	}
	return fl.l_pid;
}

static void
rp_lock_busy_msg(char *err, size_t errlen, unsigned int idx,
		 const struct rp_port_cfg *p, const char *what, pid_t pid,
		 const char *name)
{
	char who[300];

	if (pid > 0)
		snprintf(who, sizeof(who), "PID %ld (%s)", (long)pid, name);
	else
		snprintf(who, sizeof(who), "a process of another PID namespace");
	snprintf(err, errlen,
		 "port%u (%s): %s is in use by %s, another rocepmd engine; "
		 "a port serves one program at a time: stop that program or give "
		 "this one a configuration with another port",
		 idx, p->device, what, who);
}

/* Whether this process holds the lock at path. */
static bool
rp_lock_held_here(const char *path)
{
	unsigned int i;

	if (rp_locks.pid != getpid())
		return false;
	for (i = 0; i < RP_MAX_PORTS; i++)
		if (rp_locks.port[i].held &&
		    strcmp(rp_locks.port[i].path, path) == 0)
			return true;
	return false;
}

/*
 * Lock one port's file.
 * @return 0, -EBUSY (err set), or another negative errno (err set)
 */
static int
rp_lock_one(unsigned int idx, const struct rp_port_cfg *p, const char *path,
	    const char *what, struct rp_lock_port *lp, char *err,
	    size_t errlen)
{
	struct flock fl = {
		.l_type = F_WRLCK,
		.l_whence = SEEK_SET,
	};
	const char *prog = program_invocation_short_name;
	struct stat fst, pst;
	char name[256], line[RP_CFG_STR + 300];
	int tries, fd, ret, n;
	pid_t pid;

	for (tries = 0; tries < RP_LOCK_TRIES; tries++) {
		fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW,
			  0644);
		if (fd < 0) {
			ret = -errno;
			snprintf(err, errlen, "port%u (%s): cannot open %s: %s",
				 idx, p->device, path, strerror(-ret));
			return ret;
		}
		if (fcntl(fd, F_SETLK, &fl) != 0) {
			ret = -errno;
			if (ret != -EAGAIN && ret != -EACCES) {
				close(fd);
				snprintf(err, errlen, "port%u (%s): cannot lock %s: %s",
					 idx, p->device, path, strerror(-ret));
				return ret;
			}
			pid = rp_lock_holder(fd, name, sizeof(name));
			close(fd);
			if (pid < 0)
				continue;	/* gone meanwhile: again */
			rp_lock_busy_msg(err, errlen, idx, p, what, pid, name);
			return -EBUSY;
		}
		/* The owner unlinks its file at exit: is ours still there? */
		if (fstat(fd, &fst) == 0 && stat(path, &pst) == 0 &&
		    fst.st_dev == pst.st_dev && fst.st_ino == pst.st_ino)
			break;
		close(fd);
	}
	if (tries == RP_LOCK_TRIES) {
		snprintf(err, errlen, "port%u (%s): %s keeps changing: not locked",
			 idx, p->device, path);
		return -EAGAIN;
	}
	n = snprintf(line, sizeof(line), "%ld %s %s\n", (long)getpid(),
		     prog != NULL && prog[0] != '\0' ? prog : "?", p->device);
	if (n > (int)sizeof(line) - 1)
		n = (int)sizeof(line) - 1;
	/*
	 * For the message only, so best effort: without it a claimant still
	 * has the PID from F_GETLK and the name from /proc.
	 */
	if (ftruncate(fd, 0) == 0 && pwrite(fd, line, (size_t)n, 0) != n)
		n = 0;
	lp->held = true;
	lp->fd = fd;
	snprintf(lp->path, sizeof(lp->path), "%s", path);
	return 0;
}

int
rp_port_lock(const struct rp_config *cfg, char *err, size_t errlen)
{
	char path[PATH_MAX], what[96];
	bool dir_made = false;
	unsigned int i;
	int ret;

	if (cfg == NULL || err == NULL || errlen == 0)
		return -EINVAL;
	err[0] = '\0';
	if (rp_locks.pid != getpid()) {
		/* a forked child: the parent's locks are not ours */
		memset(&rp_locks, 0, sizeof(rp_locks));
		rp_locks.pid = getpid();
	}
	for (i = 0; i < cfg->nb_ports && i < RP_MAX_PORTS; i++) {
		const struct rp_port_cfg *p = &cfg->port[i];

		if (rp_locks.port[i].held)
			continue;
		ret = rp_lock_path(p, path, sizeof(path), what, sizeof(what));
		if (ret < 0) {
			snprintf(err, errlen, "port%u (%s): no lock key: %s",
				 i, p->device, strerror(-ret));
			goto err_unlock;
		}
		if (ret == 0 || rp_lock_held_here(path))
			continue;
		if (!dir_made) {
			ret = rp_lock_mkdir();
			if (ret < 0) {
				snprintf(err, errlen, "cannot create %s: %s",
					 rp_lock_dir(), strerror(-ret));
				goto err_unlock;
			}
			dir_made = true;
		}
		ret = rp_lock_one(i, p, path, what, &rp_locks.port[i], err,
				  errlen);
		if (ret < 0)
			goto err_unlock;
	}
	return 0;

err_unlock:
	rp_port_unlock();
	return ret;
}

void
rp_port_unlock(void)
{
	unsigned int i;

	/* A forked child has the descriptors, but not the locks. */
	if (rp_locks.pid != getpid())
		return;
	for (i = 0; i < RP_MAX_PORTS; i++) {
		struct rp_lock_port *lp = &rp_locks.port[i];

		if (!lp->held)
			continue;
		/* Still locked: a claimant that opened it finds it moved. */
		unlink(lp->path);
		close(lp->fd);
		lp->held = false;
	}
}

int
rp_port_lock_check(const struct rp_config *cfg, char *err, size_t errlen)
{
	char path[PATH_MAX], what[96], name[256];
	unsigned int i;
	pid_t pid;
	int fd, ret;

	if (cfg == NULL || err == NULL || errlen == 0)
		return -EINVAL;
	err[0] = '\0';
	for (i = 0; i < cfg->nb_ports && i < RP_MAX_PORTS; i++) {
		const struct rp_port_cfg *p = &cfg->port[i];

		ret = rp_lock_path(p, path, sizeof(path), what, sizeof(what));
		/* Closing a file we hold a POSIX lock on would drop it. */
		if (ret <= 0 || rp_lock_held_here(path))
			continue;
		fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
		if (fd < 0)
			continue;
		pid = rp_lock_holder(fd, name, sizeof(name));
		close(fd);
		if (pid >= 0 && pid != getpid()) {
			rp_lock_busy_msg(err, errlen, i, p, what, pid, name);
			return -EBUSY;
		}
	}
	return 0;
}
