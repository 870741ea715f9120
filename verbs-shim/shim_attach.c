/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The attached engine: the devices of another process, the host
 * (rocepmd-testpmd --host), reached over the UNIX socket named by
 * ROCEPMD_ATTACH (protocol: rp_attach.h, client: rp_attach_client.c).
 *
 * The host hands out each device's region (mapped here, shared) and a
 * wake-up eventfd of this process's own; work queues, CQs, channels and
 * async events are then used exactly as with an embedded engine, except
 * that the host makes a channel's and an async registration's descriptor
 * (a socket, read 8 bytes per event as an eventfd) and sends it back.
 * Only control requests cross the socket, one at a time, since the host
 * answers a client's requests in order and a reply carries no request
 * number.
 *
 * The connection lives as long as the process: at exit the kernel closes
 * it and the host destroys every object this process created.
 */

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <string.h>
#include <unistd.h>

#include "rp_attach_client.h"
#include "rp_doorbell.h"
#include "shim.h"

static struct {
	pthread_mutex_t lock;		/* conn.sock: one request at a time */
	struct rp_attach_conn conn;	/* devices: set once, read-only */
	bool broken_logged;		/* under lock */
} shim_att = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.conn = { .sock = -1 },
};

/*
 * Attach to the host serving `path`.  Once, from the bootstrap, before
 * any other function here runs.
 * @return 0, or a negative errno (logged)
 */
int
shim_attach_open(const char *path)
{
	struct rp_attach_conn *c = &shim_att.conn;
	char err[512];
	int ret;

	err[0] = '\0';
	ret = rp_attach_open(c, path, err, sizeof(err));
	if (ret < 0) {
		SHIM_LOG(ERR, "%s: no rocepmd device", err[0] != '\0' ? err :
			 strerror(-ret));
		return ret;
	}
	SHIM_LOG(INFO, "attached to %s: %u device%s, client %u", path,
		 c->nr_devs, c->nr_devs == 1 ? "" : "s", c->client_id);
	return 0;
}

/*
 * In a forked child (pthread_atfork): the connection is the parent's
 * (its socket is close-on-exec too, so an exec'd program never holds it).
 * The child's requests fail (-EIO) as after a lost connection.
 */
void
shim_attach_forked(void)
{
	if (shim_att.conn.sock >= 0)
		close(shim_att.conn.sock);
	shim_att.conn.sock = -1;
	shim_att.broken_logged = true;
	pthread_mutex_init(&shim_att.lock, NULL);
}

static unsigned int
shim_attach_dev_count(void)
{
	return shim_att.conn.nr_devs;
}

/* Mapped read-only: the shim never writes a device's control block. */
static struct rp_dev_ctl *
shim_attach_dev_ctl(unsigned int dev)
{
	return dev < shim_att.conn.nr_devs ?
		(struct rp_dev_ctl *)(uintptr_t)shim_att.conn.dev[dev].ctl :
		NULL;
}

/* This process's arena: its objects, and its async ring at offset 0. */
static uint64_t
shim_attach_objects(unsigned int dev, uint8_t **base)
{
	if (dev >= shim_att.conn.nr_devs) {
		*base = NULL;
		return 0;
	}
	*base = shim_att.conn.dev[dev].arena;
	return shim_att.conn.dev[dev].arena_size;
}

static struct rp_async_ctl *
shim_attach_async(unsigned int dev)
{
	if (dev >= shim_att.conn.nr_devs)
		return NULL;
	return &((struct rp_arena_ctl *)(void *)
		 shim_att.conn.dev[dev].arena)->async;
}

static int
shim_attach_ctrl_call(unsigned int dev, struct rp_ctrl_slot *slot)
{
	char err[256];
	int fd = -1;
	int result;
	int ret;

	pthread_mutex_lock(&shim_att.lock);
	ret = rp_attach_request(&shim_att.conn, dev, slot, &fd, &result, err,
				sizeof(err));
	if (ret < 0) {
		/* Once: every later request fails the same way. */
		if (!shim_att.broken_logged)
			SHIM_LOG(ERR, "%s: the host's devices are gone for this process",
				 err);
		shim_att.broken_logged = true;
		result = -EIO;
	}
	pthread_mutex_unlock(&shim_att.lock);
	/* The host's socket for a channel or registration made. */
	if (slot->op == RP_CTRL_CHAN_CREATE)
		slot->u.chan.fd = fd;
	else if (slot->op == RP_CTRL_ASYNC_REG)
		slot->u.async.fd = fd;
	else if (fd >= 0)
		close(fd);
	return result;
}

/* rp_dev_doorbell(), with our own wake-up eventfd the host gave. */
static void
shim_attach_doorbell(unsigned int dev)
{
	const struct rp_attach_dev *d;

	if (dev >= shim_att.conn.nr_devs)
		return;
	d = &shim_att.conn.dev[dev];
	if (!rp_doorbell_ring(d->ctl, d->wake_fd))
		SHIM_LOG(DEBUG, "device %u: wake-up write: %s", dev,
			 strerror(errno));
}

/*
 * A poll found a CQ empty.  The engine is the host's, and its lcore may
 * be waiting for this very CPU: on two CPUs, two hosts' lcores and a
 * polling program on each, a program that spins keeps the lcore that
 * would complete its work off the CPU for the rest of its slice.  One
 * in SHIM_ATTACH_YIELD_EVERY empty polls of a thread gives the CPU up,
 * then looks again (bench/attach.sh, guides/service: ib_send_lat 780 to
 * 26 us attached; where the CPU has nothing else to run, one system
 * call).
 */
#define SHIM_ATTACH_YIELD_EVERY	8u

static bool
shim_attach_assist(unsigned int dev)
{
	static __thread unsigned int empty;

	(void)dev;
	if (++empty % SHIM_ATTACH_YIELD_EVERY != 0)
		return false;
	sched_yield();
	return true;
}

const struct shim_engine_ops shim_engine_attached_ops = {
	.name = "attached",
	.dev_count = shim_attach_dev_count,
	.dev_ctl = shim_attach_dev_ctl,
	.objects = shim_attach_objects,
	.async = shim_attach_async,
	.ctrl_call = shim_attach_ctrl_call,
	.doorbell = shim_attach_doorbell,
	.assist = shim_attach_assist,
	.engine_fds = true,
};
