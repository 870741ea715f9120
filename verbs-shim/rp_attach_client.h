/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Client side of the attach protocol (rp_attach.h): connect to a host,
 * check its WELCOME, map the device regions, run control requests.
 *
 * No EAL and no logging: the verbs shim (shim_attach.c) logs the messages
 * these functions write into `err`, rocepmd-run and rocepmd-status print
 * them.
 * Nothing here is thread-safe: one caller at a time per connection.
 */

#ifndef _RP_ATTACH_CLIENT_H_
#define _RP_ATTACH_CLIENT_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rp_abi.h"
#include "rp_attach.h"

/* How long a host may take to answer the HELLO, in seconds. */
#define RP_ATTACH_WELCOME_TIMEOUT	10

/* One device the host serves, as this process sees it. */
struct rp_attach_dev {
	const struct rp_dev_ctl *ctl;	/* device region, mapped read-only */
	uint64_t region_size;		/* bytes mapped */
	uint8_t *arena;			/* this process's arena, read-write:
					 * its objects, its async ring at 0 */
	uint64_t arena_size;		/* bytes mapped */
	int wake_fd;			/* our own wake-up eventfd (the engine
					 * polls it when it sleeps), or -1 */
};

/* A connection to a host; sock < 0: not connected. */
struct rp_attach_conn {
	int sock;
	uint32_t client_id;		/* the host's name for us */
	uint32_t nr_devs;
	struct rp_attach_dev dev[RP_ATTACH_MAX_DEVS];
};

/*
 * Connect to the host serving `path` (absolute), say HELLO, check the
 * WELCOME and everything it carries, and map the regions.  On failure
 * nothing is left open or mapped.
 *
 * @param err	on failure, why (names the path)
 * @return 0, or a negative errno: -EINVAL (bad path), -ECONNREFUSED or
 *	-ENOENT (nobody serves it), -EPROTO (the host's answer is not a
 *	valid WELCOME), -ETIMEDOUT (no answer)
 */
int rp_attach_open(struct rp_attach_conn *c, const char *path, char *err,
		   size_t errlen);

/*
 * Run one control request on the host: `slot->op` and `slot->u` are the
 * request (no descriptor goes with it).  On a completed exchange slot->u
 * holds the reply, *result the request's result (0 or a negative errno)
 * and *fd the descriptor the reply carried: the socket a successful
 * RP_CTRL_CHAN_CREATE or RP_CTRL_ASYNC_REG gets (rp_attach.h), else -1.
 *
 * @param err	on failure, why
 * @return 0 when the host answered; a negative errno when the exchange
 *	failed (-ENOTCONN: closed already, -EPIPE: the host is gone,
 *	-EPROTO: malformed reply), after which the socket is closed; the
 *	regions stay mapped, since other threads may still use them
 */
int rp_attach_request(struct rp_attach_conn *c, uint32_t dev,
		      struct rp_ctrl_slot *slot, int *fd, int *result,
		      char *err, size_t errlen);

/* Unmap the regions and close every descriptor (the host cleans up). */
void rp_attach_close(struct rp_attach_conn *c);

/*
 * The host socket a client takes when it is named none (rocepmd-run and
 * rocepmd-status --attach): the only *.sock of $ROCEPMD_RUN_DIR, else
 * RP_SERVE_DIR, that a host of the caller's network namespace listens on
 * (namespaces of one machine share the directory, each with its own host).
 *
 * @param path	on success, the socket's path (dir/name)
 * @param err	on failure, why, and what to do (start a host, or name a
 *		socket with --attach=SOCKET)
 * @return 0, or a negative errno: the directory's opendir() error, -ENOENT
 *	(no socket in it), -ECONNREFUSED (sockets, but no host of this
 *	namespace listens on one), -ENOTUNIQ (several do), -ENAMETOOLONG,
 *	-ENOMEM
 */
int rp_attach_pick(char *path, size_t len, char *err, size_t errlen);

#endif /* _RP_ATTACH_CLIENT_H_ */
