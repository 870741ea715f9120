/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The attach protocol: how a verbs program reaches devices that another
 * process (the host: rocepmd-testpmd --serve) owns.
 *
 * One AF_UNIX SOCK_SEQPACKET connection per attached process, to the
 * host's socket.  Messages keep their boundaries; each is one of the
 * structs below, whose first member is struct rp_attach_hdr.  File
 * descriptors cross only as SCM_RIGHTS ancillary data of a message, never
 * as integers: the device regions and wake-up eventfds in WELCOME, the
 * eventfd of a CHAN_CREATE or ASYNC_REG request.
 *
 *   client                            host
 *   HELLO                  ------->   checks magic, version, SO_PEERCRED
 *                          <-------   WELCOME + fds: nr_devs device region
 *                                     memfds (sealed: map them read-only,
 *                                     region_size bytes), nr_devs arena
 *                                     memfds (this process's own shared
 *                                     memory, read-write, arena_size
 *                                     bytes), then one wake-up eventfd per
 *                                     bit set in wake_mask, in device order
 *   CTRL (+ fd)            ------->   checks that every object the request
 *                                     names is the client's, runs it on the
 *                                     engine lcore of the device
 *                          <-------   CTRL with hdr.result and the reply
 *
 * The host runs one request of a client at a time and answers in order.
 * A request the host refuses (an object of another process, a malformed
 * message) gets hdr.result = a negative errno; a message it cannot parse
 * ends the connection.  When the connection ends (exit, crash, SIGKILL),
 * the host destroys every object the client created.
 *
 * Everything else is shared memory, as for an embedded engine (rp_abi.h),
 * and the protocol carries only the control path: the device attributes
 * and GIDs in the device region's control block; the process's work
 * queues, CQs and channels in its arena, at the offsets the replies give
 * (relative to the arena), and its async event ring at offset 0 of the
 * arena (struct rp_arena_ctl).  No process can write another's arena or
 * the device region.
 */

#ifndef _RP_ATTACH_H_
#define _RP_ATTACH_H_

#include <assert.h>
#include <stdint.h>

#include "rp_abi.h"

#define RP_ATTACH_MAGIC		0x68637461u	/* "atch" */
#define RP_ATTACH_VERSION	3u
#define RP_ATTACH_MAX_DEVS	4u		/* RP_MAX_PORTS */

enum rp_attach_type {
	RP_ATTACH_HELLO = 1,
	RP_ATTACH_WELCOME,
	RP_ATTACH_CTRL,
};

struct rp_attach_hdr {
	uint32_t magic;			/* RP_ATTACH_MAGIC */
	uint16_t version;		/* RP_ATTACH_VERSION */
	uint16_t type;			/* enum rp_attach_type */
	int32_t result;			/* replies: 0 or a negative errno */
	uint32_t rsvd;
};

/*
 * Client's first message.  probe_addr is the address of 8 bytes of the
 * client holding probe_value: the host reads them with process_vm_readv()
 * before it welcomes the client, so a host that could not reach the
 * memory the client will register (another user, no CAP_SYS_PTRACE, Yama)
 * refuses at once with a clear message, not at the first packet.
 */
struct rp_attach_hello {
	struct rp_attach_hdr hdr;
	uint32_t abi_version;		/* RP_ABI_VERSION it was built with */
	uint32_t rsvd;
	uint64_t probe_addr;
	uint64_t probe_value;
};

/* Host's answer: the devices, with their regions as SCM_RIGHTS. */
struct rp_attach_welcome {
	struct rp_attach_hdr hdr;
	uint32_t abi_version;		/* RP_ABI_VERSION of the host */
	uint32_t nr_devs;
	uint32_t client_id;		/* the host's name for this client */
	uint32_t wake_mask;		/* devices whose wake-up fd follows */
	uint64_t region_size[RP_ATTACH_MAX_DEVS];
	uint64_t arena_size[RP_ATTACH_MAX_DEVS];
};

/*
 * A control request, and its reply (same struct, hdr.result set, slot.u
 * the reply).  slot.state is ignored.  For RP_CTRL_CHAN_CREATE and
 * RP_CTRL_ASYNC_REG the eventfd travels as SCM_RIGHTS and the fd fields of
 * slot.u are ignored; RP_CTRL_ASYNC_UNREG names the registration by the
 * client's own fd number (slot.u.async.fd), as it was when registered.
 * slot.u.mr.pid and slot.arena are set by the host.
 */
struct rp_attach_ctrl {
	struct rp_attach_hdr hdr;
	uint32_t dev;
	uint32_t rsvd;
	struct rp_ctrl_slot slot;
};

static_assert(sizeof(struct rp_attach_welcome) <= 256, "rp_attach_welcome");

#endif /* _RP_ATTACH_H_ */
