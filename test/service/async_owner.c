/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rp_async_owner: an attached process's event ring holds the events of its
 * own objects and of the device, never another process's (issue 24).
 *
 *   rp_async_owner fatal        an RC QP on an SRQ, moved to ERR: waits
 *                               for its IBV_EVENT_QP_LAST_WQE_REACHED
 *   rp_async_owner watch GOFILE notes where its arena's event ring is,
 *                               prints "ready", waits for GOFILE, then
 *                               raises the same event on a QP of its own
 *                               and waits for it; every entry the ring got
 *                               in between must name its own QP or be a
 *                               port or device event
 *   rp_async_owner region       the device region every attached process
 *                               maps holds the control block alone: no
 *                               room for the host's own objects (their
 *                               WQEs: inline data, addresses, rkeys)
 *
 * The shim skips events naming objects it does not know, so
 * ibv_get_async_event() alone cannot tell: the ring itself is read, through
 * the shim's private header (verbs-shim/shim.h).  Run under
 * rocepmd-run --attach; `fatal` runs to its end before GOFILE appears, so
 * its event was pushed before the watcher's own, and the ring's order is
 * the engine's.
 */

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "shim.h"

#define AO_WATCHDOG_S	120

struct ao {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_srq *srq;
	struct ibv_qp *qp;
};

static void __attribute__((noreturn, format(printf, 1, 2)))
ao_fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("rp_async_owner: FAIL: ", stdout);
	vprintf(fmt, ap);
	putchar('\n');
	va_end(ap);
	exit(1);
}

static void
ao_open(struct ao *o)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 4, .max_sge = 1 } };
	struct ibv_qp_init_attr qa = { 0 };
	struct ibv_qp_attr a = { 0 };

	if (list == NULL || list[0] == NULL)
		ao_fail("no device");
	o->ctx = ibv_open_device(list[0]);
	ibv_free_device_list(list);
	if (o->ctx == NULL)
		ao_fail("ibv_open_device: %s", strerror(errno));
	o->pd = ibv_alloc_pd(o->ctx);
	o->cq = o->pd != NULL ? ibv_create_cq(o->ctx, 16, NULL, NULL, 0) : NULL;
	o->srq = o->cq != NULL ? ibv_create_srq(o->pd, &sa) : NULL;
	if (o->srq == NULL)
		ao_fail("PD, CQ or SRQ: %s", strerror(errno));
	qa.send_cq = o->cq;
	qa.recv_cq = o->cq;
	qa.srq = o->srq;
	qa.qp_type = IBV_QPT_RC;
	qa.cap.max_send_wr = 4;
	qa.cap.max_send_sge = 1;
	o->qp = ibv_create_qp(o->pd, &qa);
	if (o->qp == NULL)
		ao_fail("ibv_create_qp: %s", strerror(errno));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
	if (ibv_modify_qp(o->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | IBV_QP_ACCESS_FLAGS) != 0)
		ao_fail("QP to INIT: %s", strerror(errno));
}

static void
ao_close(struct ao *o)
{
	ibv_destroy_qp(o->qp);
	ibv_destroy_srq(o->srq);
	ibv_destroy_cq(o->cq);
	ibv_dealloc_pd(o->pd);
	ibv_close_device(o->ctx);
}

/* The QP to ERR: the engine flushes it and, on an SRQ, reports
 * IBV_EVENT_QP_LAST_WQE_REACHED (IBTA 11.6.3.1); wait for it. */
static void
ao_last_wqe(struct ao *o)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };
	struct ibv_async_event ev;

	if (ibv_modify_qp(o->qp, &a, IBV_QP_STATE) != 0)
		ao_fail("QP to ERR: %s", strerror(errno));
	for (;;) {
		if (ibv_get_async_event(o->ctx, &ev) != 0)
			ao_fail("ibv_get_async_event: %s", strerror(errno));
		ibv_ack_async_event(&ev);
		if (ev.event_type == IBV_EVENT_QP_LAST_WQE_REACHED &&
		    ev.element.qp == o->qp)
			return;
		printf("event %s before its own\n",
		       ibv_event_type_str(ev.event_type));
	}
}

/* Does an event of this type name a QP, CQ or SRQ (rather than a port)? */
static bool
ao_names_object(uint32_t type)
{
	switch (type) {
	case IBV_EVENT_CQ_ERR:
	case IBV_EVENT_QP_FATAL:
	case IBV_EVENT_QP_REQ_ERR:
	case IBV_EVENT_QP_ACCESS_ERR:
	case IBV_EVENT_COMM_EST:
	case IBV_EVENT_SQ_DRAINED:
	case IBV_EVENT_PATH_MIG:
	case IBV_EVENT_PATH_MIG_ERR:
	case IBV_EVENT_QP_LAST_WQE_REACHED:
	case IBV_EVENT_SRQ_ERR:
	case IBV_EVENT_SRQ_LIMIT_REACHED:
		return true;
	default:
		return false;
	}
}

int
main(int argc, char **argv)
{
	struct rp_async_ctl *ring;
	uint32_t start, end, own = 0, dev = 0;
	struct ao o;

	if (argc < 2 || (strcmp(argv[1], "watch") == 0 && argc < 3)) {
		fprintf(stderr, "usage: %s fatal | watch GOFILE | region\n",
			argv[0]);
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	alarm(AO_WATCHDOG_S);
	ao_open(&o);
	if (strcmp(argv[1], "region") == 0) {
		uint64_t size = shim_ctx(o.ctx)->ctl->region_size;
		uint64_t ctl = sizeof(struct rp_dev_ctl);
		uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);

		if (size < ctl || size > (ctl + page - 1) / page * page)
			ao_fail("device region of %" PRIu64 " bytes, the "
				"control block %" PRIu64 ": room for objects",
				size, ctl);
		printf("device region: %" PRIu64 " bytes, the control block "
		       "alone (%" PRIu64 ")\n", size, ctl);
		ao_close(&o);
		return 0;
	}
	if (strcmp(argv[1], "fatal") == 0) {
		printf("QP 0x%x to ERR\n", o.qp->qp_num);
		ao_last_wqe(&o);
		printf("QP 0x%x: LAST_WQE_REACHED received\n", o.qp->qp_num);
		ao_close(&o);
		return 0;
	}
	ring = shim_ctx(o.ctx)->async_ring;
	start = __atomic_load_n(&ring->prod, __ATOMIC_ACQUIRE);
	printf("ready: QP 0x%x, event ring at %u\n", o.qp->qp_num, start);
	while (access(argv[2], F_OK) != 0)
		usleep(20000);
	ao_last_wqe(&o);
	end = __atomic_load_n(&ring->prod, __ATOMIC_ACQUIRE);
	if (end - start > RP_ASYNC_EVENTS)
		ao_fail("%u events in the ring since the start", end - start);
	for (uint32_t i = start; i != end; i++) {
		const struct rp_async_ev *ev = &ring->ev[i % RP_ASYNC_EVENTS];

		if (!ao_names_object(ev->type)) {
			dev++;
			continue;
		}
		if (ev->num != o.qp->qp_num)
			ao_fail("this process's event ring got %s for 0x%x, "
				"not an object of its own (its QP is 0x%x)",
				ibv_event_type_str(ev->type), ev->num,
				o.qp->qp_num);
		own++;
	}
	if (own == 0)
		ao_fail("its own LAST_WQE_REACHED is not in the ring");
	printf("event ring: %u of its own, %u of the device, none of "
	       "another process\n", own, dev);
	ao_close(&o);
	return 0;
}
