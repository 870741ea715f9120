/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * How the engine signals a completion channel or an async registration
 * (rp_cq.c, rp_async.c), and drains a wake-up eventfd (rp_lcore.c),
 * without ever blocking the lcore on a descriptor another process holds.
 *
 * An embedded engine's channels are eventfds of its own process: a write
 * of 1.  An attached client's are the host's end of a socketpair the
 * attach server made (rp_serve.c): only the host holds that end's file
 * description, so O_NONBLOCK stays set; a full socket (a client that does
 * not read) fails with EAGAIN, a closed peer with EPIPE and no SIGPIPE.
 * The event itself is in the ring either way: only its count is lost.
 */

#ifndef _RP_SIGNAL_H_
#define _RP_SIGNAL_H_

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

/* Whether fd is a socket: decides how it is signalled (control path). */
static inline bool
rp_fd_is_sock(int fd)
{
	struct stat st;

	return fstat(fd, &st) == 0 && S_ISSOCK(st.st_mode);
}

/* One count to a channel's or a registration's fd; false if it failed. */
static inline bool
rp_fd_signal(int fd, bool sock)
{
	const uint64_t one = 1;

	if (sock)
		return send(fd, &one, sizeof(one), MSG_DONTWAIT |
			    MSG_NOSIGNAL) == (ssize_t)sizeof(one);
	return write(fd, &one, sizeof(one)) == (ssize_t)sizeof(one);
}

/*
 * An eventfd's count, read without ever blocking, whatever O_NONBLOCK
 * says now (eventfd honours RWF_NOWAIT for reads since Linux 5.12): a
 * client holding the same description may clear it.  0 if none.
 */
static inline uint64_t
rp_fd_drain_nowait(int fd)
{
	uint64_t v = 0;
	struct iovec iov = { .iov_base = &v, .iov_len = sizeof(v) };

	if (preadv2(fd, &iov, 1, -1, RWF_NOWAIT) != (ssize_t)sizeof(v))
		return 0;
	return v;
}

#endif /* _RP_SIGNAL_H_ */
