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
 * client's end of a channel or async registration in the reply to
 * CHAN_CREATE or ASYNC_REG.  No request carries one (since version 3):
 * every descriptor the engine's lcore signals or reads is one the host
 * made, so no client can make it block there (a blocking or full
 * eventfd, a pipe, a FUSE file).
 *
 *   client                            host
 *   HELLO + fd             ------->   checks magic, version, SO_PEERCRED,
 *                                     the fd: the client's /proc/self/mem
 *                          <-------   WELCOME + fds: nr_devs device region
 *                                     memfds (sealed: map them read-only,
 *                                     region_size bytes), nr_devs arena
 *                                     memfds (this process's own shared
 *                                     memory, read-write, arena_size
 *                                     bytes), then one wake-up eventfd per
 *                                     bit set in wake_mask, in device order:
 *                                     this client's own (the engine polls
 *                                     each client's when it sleeps), never
 *                                     shared with another process
 *   CTRL                   ------->   checks that every object the request
 *                                     names is the client's, runs it on the
 *                                     engine lcore of the device; a CTRL
 *                                     with a descriptor gets -EBADF (the
 *                                     descriptor is closed)
 *                          <-------   CTRL with hdr.result and the reply;
 *                                     CHAN_CREATE and ASYNC_REG that
 *                                     succeeded: + one fd
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
 * the device region.  The ring holds the events of the process's own
 * QPs, CQs and SRQs and every port or device event, never an event of
 * another process's object (since version 3).
 *
 * A process's GSI agent (QP_CREATE with RP_QP_F_GSI, its comm_prefix in
 * the reply) sends from QP 1 only CM MADs that speak for it (since
 * version 3; pmd/transport/rp_gsi.c rp_gsi_send_ok()): a Local Communication ID
 * (SIDR REQ: a Request ID) carrying its prefix, a REJ of a REQ with 0
 * there, a SIDR REP for a service ID it claimed (GSI_BIND).  Any other
 * MAD is not sent: its WQE completes with IBV_WC_LOC_QP_OP_ERR and the
 * agent stays in RTS.  A GSI_WILL's DREQ must carry the prefix too
 * (-EPERM).
 *
 * Limits (since version 3; the host's [host] section, rp_serve_quota.c):
 * a connection must send its HELLO within hello_timeout_ms, and only so
 * many may wait for theirs (max_pending, uid_pending per uid): the others
 * are closed at once, without a reply.  A HELLO past uid_processes (the
 * uid's processes attached) gets a WELCOME with -EDQUOT.  A request that
 * would take more than the process's or its uid's share of a device (QPs,
 * CQs, MRs, MWs, SRQs, AHs, PDs, channels, async registrations, MR pages)
 * gets hdr.result = -EDQUOT, and nothing is made; a full device table is
 * still -ENOMEM.  Every descriptor a message carries is the host's to
 * close, whatever becomes of the message; an empty message (with
 * descriptors or not) ends the connection.
 */

#ifndef _RP_ATTACH_H_
#define _RP_ATTACH_H_

#include <assert.h>
#include <stdint.h>

#include "rp_abi.h"

#define RP_ATTACH_MAGIC		0x68637461u	/* "atch" */
#define RP_ATTACH_VERSION	3u
#define RP_ATTACH_MAX_DEVS	4u		/* a host's first four devices */

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
 * Client's first message, with one descriptor as SCM_RIGHTS: the client's
 * own /proc/self/mem, opened O_RDWR.  The host reaches every MR of the
 * client through it and through nothing else: it names the address space,
 * not the PID, so after the client exits or exec()s it reaches nothing,
 * and it needs no privilege of the host.  probe_addr is the address of 8
 * bytes of the client holding probe_value: the host reads them through
 * the descriptor before it welcomes the client and refuses with EBADF (no
 * descriptor, or not a /proc/PID/mem) or EACCES (not writable, or the
 * probe differs).
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
 * the reply).  slot.state is ignored.  The fd fields of slot.u are ignored
 * in requests and -1 in replies.  The reply of a RP_CTRL_CHAN_CREATE or
 * RP_CTRL_ASYNC_REG that succeeded carries exactly one descriptor, as
 * SCM_RIGHTS: the client's end of an AF_UNIX SOCK_STREAM pair, of which
 * the host keeps the other.  The engine sends 8 bytes on it per event,
 * as the eventfd of an embedded engine counts (EFD_SEMAPHORE): read 8
 * bytes per event; poll(), epoll and O_NONBLOCK work as on an eventfd,
 * writes fail (EPIPE).  Events beyond what the socket's buffer holds
 * (some 270 unread on one socket, with Linux's default limits) lose their
 * bytes, not their ring entries: the host never waits on a full socket.
 * Closing it ends nothing: CHAN_DESTROY and ASYNC_UNREG do (or the end
 * of the connection).  RP_CTRL_ASYNC_UNREG names the registration by the
 * slot.u.async.id its ASYNC_REG reply gave.  slot.u.mr.mem and
 * slot.arena are set by the host.
 */
struct rp_attach_ctrl {
	struct rp_attach_hdr hdr;
	uint32_t dev;
	uint32_t rsvd;
	struct rp_ctrl_slot slot;
};

static_assert(sizeof(struct rp_attach_welcome) <= 256, "rp_attach_welcome");

#endif /* _RP_ATTACH_H_ */
