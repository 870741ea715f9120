/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The CM agent: per device, the GSI (QP 1, a UD QP on the engine like any
 * other) with its receive buffers; one thread that waits on the GSI CQs'
 * completion channels and on the next retransmission deadline, and hands
 * every received CM MAD to cm.c.  The agent starts with the first
 * rdma_cm call that needs a device.
 */

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "cm.h"
#include "rocepmd_verbs.h"

RTE_LOG_REGISTER_SUFFIX(cm_logtype, cm, NOTICE);

pthread_mutex_t cm_lock = PTHREAD_MUTEX_INITIALIZER;

static struct cm_dev cm_devs[CM_MAX_DEVS];
static unsigned int cm_nr_devs;
static bool cm_opened;
static int cm_epfd = -1;
static int cm_wake_fd = -1;
static pthread_t cm_thread;
static bool cm_thread_up;
static bool cm_stopping;		/* under cm_lock */
static pid_t cm_pid;			/* the process the thread runs in */

#define CM_BUF_SZ	(CM_GRH_LEN + CM_MAD_SIZE)

uint64_t
cm_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

uint32_t
cm_random32(void)
{
	uint32_t v;

	if (getrandom(&v, sizeof(v), 0) != sizeof(v))
		v = (uint32_t)cm_now_ms() * 2654435761u;
	return v;
}

/* A timer was armed or an id changed: let the thread recompute. */
void
cm_agent_kick(void)
{
	const uint64_t one = 1;

	if (cm_wake_fd >= 0 && write(cm_wake_fd, &one, sizeof(one)) < 0)
		CM_LOG(DEBUG, "wake-up write failed: %s", strerror(errno));
}

static int
cm_post_recv(struct cm_dev *d, unsigned int i)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)(d->buf + (size_t)i * CM_BUF_SZ),
		.length = CM_BUF_SZ,
		.lkey = d->mr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = i, .sg_list = &sge, .num_sge = 1 };
	struct ibv_recv_wr *bad;

	return ibv_post_recv(d->qp, &wr, &bad);
}

static void
cm_dev_close(struct cm_dev *d)
{
	for (unsigned int i = 0; i < d->nr_ah; i++)
		ibv_destroy_ah(d->ah_cache[i].ah);
	d->nr_ah = 0;
	if (d->qp != NULL)
		ibv_destroy_qp(d->qp);
	if (d->mr != NULL)
		ibv_dereg_mr(d->mr);
	if (d->cq != NULL)
		ibv_destroy_cq(d->cq);
	if (d->scq != NULL)
		ibv_destroy_cq(d->scq);
	if (d->chan != NULL)
		ibv_destroy_comp_channel(d->chan);
	if (d->pd != NULL)
		ibv_dealloc_pd(d->pd);
	if (d->ctx != NULL)
		ibv_close_device(d->ctx);
	free(d->buf);
	memset(d, 0, sizeof(*d));
}

static int
cm_dev_open(struct cm_dev *d, struct ibv_device *ibdev)
{
	struct rocepmd_verbs_port port;
	struct ibv_port_attr pa;
	struct ibv_device_attr da;
	struct ibv_qp_init_attr_ex qa = { 0 };
	struct ibv_qp_attr a = { 0 };
	struct epoll_event ev = { .events = EPOLLIN };
	int ret;

	d->ctx = ibv_open_device(ibdev);
	if (d->ctx == NULL)
		return -errno;
	ret = rocepmd_verbs_port_addr(d->ctx, &port);
	if (ret < 0) {
		errno = -ret;
		goto err;
	}
	for (unsigned int i = 0; i < RP_GID_TBL_LEN; i++)
		if (ibv_query_gid(d->ctx, CM_PORT, (int)i, &d->gid[i]) != 0)
			goto err;
	if (ibv_query_port(d->ctx, CM_PORT, &pa) != 0)
		goto err;
	memcpy(d->gid_plen, port.gid_plen, sizeof(d->gid_plen));
	d->mtu = pa.active_mtu;
	d->guid = be64toh(ibv_get_device_guid(ibdev));

	d->pd = ibv_alloc_pd(d->ctx);
	d->chan = ibv_create_comp_channel(d->ctx);
	if (d->pd == NULL || d->chan == NULL ||
	    ibv_query_device(d->ctx, &da) != 0)
		goto err;
	/* What the real librdmacm's rsockets read of a device. */
	d->ucma.dev = ibdev;
	d->ucma.verbs = d->ctx;
	d->ucma.pd = d->pd;
	d->ucma.guid = htobe64(d->guid);
	d->ucma.port_cnt = 1;
	d->ucma.refcnt = 1;
	d->ucma.max_qpsize = da.max_qp_wr;
	d->ucma.max_initiator_depth = (uint8_t)da.max_qp_init_rd_atom;
	d->ucma.max_responder_resources = (uint8_t)da.max_qp_rd_atom;
	/* Receives wake the agent; sends are reaped by cm_send() itself. */
	d->cq = ibv_create_cq(d->ctx, CM_RECV_BUFS, d, d->chan, 0);
	d->scq = ibv_create_cq(d->ctx, CM_SEND_DEPTH, d, NULL, 0);
	d->buf = calloc(CM_RECV_BUFS, CM_BUF_SZ);
	if (d->cq == NULL || d->scq == NULL || d->buf == NULL)
		goto err;
	d->mr = ibv_reg_mr(d->pd, d->buf, (size_t)CM_RECV_BUFS * CM_BUF_SZ,
			   IBV_ACCESS_LOCAL_WRITE);
	if (d->mr == NULL)
		goto err;
	qa.qp_type = IBV_QPT_UD;
	qa.send_cq = d->scq;
	qa.recv_cq = d->cq;
	qa.cap.max_send_wr = CM_SEND_DEPTH;
	qa.cap.max_recv_wr = CM_RECV_BUFS;
	qa.cap.max_send_sge = 1;
	qa.cap.max_recv_sge = 1;
	qa.cap.max_inline_data = CM_MAD_SIZE;
	qa.sq_sig_all = 1;
	qa.pd = d->pd;
	qa.comp_mask = IBV_QP_INIT_ATTR_PD;
	d->qp = rocepmd_verbs_create_gsi_qp(d->ctx, &qa);
	if (d->qp == NULL)
		goto err;
	ret = rocepmd_verbs_gsi_prefix(d->qp, &d->comm_prefix, &d->comm_mask);
	if (ret < 0) {
		errno = -ret;
		goto err;
	}
	a.qp_state = IBV_QPS_INIT;
	a.port_num = CM_PORT;
	a.qkey = CM_GSI_QKEY;
	if (ibv_modify_qp(d->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | IBV_QP_QKEY) != 0)
		goto err;
	a.qp_state = IBV_QPS_RTR;
	if (ibv_modify_qp(d->qp, &a, IBV_QP_STATE) != 0)
		goto err;
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 0;
	if (ibv_modify_qp(d->qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN) != 0)
		goto err;
	for (unsigned int i = 0; i < CM_RECV_BUFS; i++)
		if (cm_post_recv(d, i) != 0)
			goto err;
	if (ibv_req_notify_cq(d->cq, 0) != 0)
		goto err;
	ev.data.ptr = d;
	if (epoll_ctl(cm_epfd, EPOLL_CTL_ADD, d->chan->fd, &ev) != 0)
		goto err;
	d->up = true;
	return 0;
err:
	ret = errno != 0 ? -errno : -EIO;
	CM_LOG(ERR, "%s: cannot set up the GSI (QP 1): %s",
		 ibv_get_device_name(ibdev), strerror(-ret));
	cm_dev_close(d);
	return ret;
}

static int
cm_dev_gid_index(const struct cm_dev *d, const union ibv_gid *gid)
{
	for (unsigned int i = 0; i < RP_GID_TBL_LEN; i++)
		if (memcmp(d->gid[i].raw, gid->raw, 16) == 0)
			return (int)i;
	return -1;
}

/*
 * Hand a received MAD to cm.c with the packet's source GID and the index
 * of the GID it was sent to, taken from the GRH area the engine fills:
 * the IPv6 header, or the IPv4 header in its last 20 bytes (the first 20
 * zero; so IPv6 is tested first: byte 20 is inside its source address).
 * Replies go from the GID the MAD came to, to its sender, never to an
 * address the MAD claims.
 */
static void
cm_dev_deliver(struct cm_dev *d, const uint8_t *grh)
{
	union ibv_gid src, dst;
	int idx;

	memset(&src, 0, sizeof(src));
	memset(&dst, 0, sizeof(dst));
	if ((grh[0] >> 4) == 6) {
		memcpy(src.raw, grh + 8, 16);
		memcpy(dst.raw, grh + 24, 16);
	} else if ((grh[20] >> 4) == 4) {
		src.raw[10] = 0xff;
		src.raw[11] = 0xff;
		memcpy(&src.raw[12], grh + 20 + 12, 4);
		dst.raw[10] = 0xff;
		dst.raw[11] = 0xff;
		memcpy(&dst.raw[12], grh + 20 + 16, 4);
	} else {
		return;
	}
	idx = cm_dev_gid_index(d, &dst);
	if (idx < 0) {
		CM_LOG(DEBUG, "MAD to an address not in the GID table: ignored");
		return;
	}
	cm_mad_recv(d, (uint8_t)idx, &src, grh + CM_GRH_LEN);
}

static void
cm_dev_poll(struct cm_dev *d)
{
	struct ibv_cq *cq;
	struct ibv_wc wc[16];
	void *cq_ctx;
	int n;

	if (ibv_get_cq_event(d->chan, &cq, &cq_ctx) == 0) {
		ibv_ack_cq_events(cq, 1);
		ibv_req_notify_cq(d->cq, 0);
	}
	/* Poll after re-arming: nothing that arrived in between is lost. */
	while ((n = ibv_poll_cq(d->cq, RTE_DIM(wc), wc)) > 0) {
		for (int i = 0; i < n; i++) {
			if (wc[i].status == IBV_WC_SUCCESS &&
			    wc[i].byte_len >= CM_BUF_SZ)
				cm_dev_deliver(d, d->buf + wc[i].wr_id *
					       CM_BUF_SZ);
			else if (wc[i].status != IBV_WC_WR_FLUSH_ERR)
				CM_LOG(DEBUG, "dropped a %u-byte GSI receive (%s)",
					 wc[i].byte_len,
					 ibv_wc_status_str(wc[i].status));
			if (wc[i].status != IBV_WC_WR_FLUSH_ERR)
				cm_post_recv(d, (unsigned int)wc[i].wr_id);
		}
	}
}

static void *
cm_agent_main(void *arg)
{
	struct epoll_event ev[8];
	uint64_t next = 0;

	(void)arg;
	for (;;) {
		uint64_t now = cm_now_ms();
		int timeout = next == 0 ? -1 :
			next <= now ? 0 : (int)RTE_MIN(next - now, 60000u);
		int n = epoll_wait(cm_epfd, ev, RTE_DIM(ev), timeout);

		pthread_mutex_lock(&cm_lock);
		if (cm_stopping) {
			pthread_mutex_unlock(&cm_lock);
			break;
		}
		for (int i = 0; i < n; i++) {
			if (ev[i].data.ptr == NULL) {
				uint64_t v;

				if (read(cm_wake_fd, &v, sizeof(v)) < 0)
					CM_LOG(DEBUG, "wake-up read: %s",
						 strerror(errno));
			} else {
				cm_dev_poll(ev[i].data.ptr);
			}
		}
		next = cm_timers_run(cm_now_ms());
		pthread_mutex_unlock(&cm_lock);
	}
	return NULL;
}

/*
 * At exit, before the engine stops (atexit handlers run in reverse: the
 * shim's own was registered first): no timer may post a MAD into a
 * device that is going away.
 */
static void
cm_agent_atexit(void)
{
	/* A forked child inherits the handler, not the thread. */
	if (getpid() != cm_pid)
		return;
	pthread_mutex_lock(&cm_lock);
	cm_stopping = true;
	cm_agent_kick();
	pthread_mutex_unlock(&cm_lock);
	if (cm_thread_up && !pthread_equal(pthread_self(), cm_thread))
		pthread_join(cm_thread, NULL);
	cm_thread_up = false;
}

/* Open every rocepmd device's GSI and start the agent, once. */
int
cm_dev_open_all(void)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = NULL };
	struct ibv_device **list;
	sigset_t all, old;
	int n, ret;

	if (cm_opened)
		return cm_nr_devs != 0 ? 0 : -ENODEV;
	cm_opened = true;
	list = ibv_get_device_list(&n);
	if (list == NULL || n == 0) {
		ibv_free_device_list(list);
		return -ENODEV;
	}
	cm_epfd = epoll_create1(EPOLL_CLOEXEC);
	cm_wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (cm_epfd < 0 || cm_wake_fd < 0 ||
	    epoll_ctl(cm_epfd, EPOLL_CTL_ADD, cm_wake_fd, &ev) != 0) {
		ret = -errno;
		goto err;
	}
	for (int i = 0; i < n && cm_nr_devs < CM_MAX_DEVS; i++)
		if (cm_dev_open(&cm_devs[cm_nr_devs], list[i]) == 0)
			cm_nr_devs++;
	ibv_free_device_list(list);
	list = NULL;
	if (cm_nr_devs == 0) {
		ret = -ENODEV;
		goto err;
	}
	/* The application's signal handlers stay with its own threads. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	ret = -pthread_create(&cm_thread, NULL, cm_agent_main, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (ret < 0)
		goto err;
	cm_thread_up = true;
	cm_pid = getpid();
	pthread_setname_np(cm_thread, "rocepmd-cm");
	if (atexit(cm_agent_atexit) != 0)
		CM_LOG(WARNING, "cannot register the exit handler");
	return 0;
err:
	CM_LOG(ERR, "cannot start the CM agent: %s", strerror(-ret));
	ibv_free_device_list(list);
	for (unsigned int i = 0; i < cm_nr_devs; i++)
		cm_dev_close(&cm_devs[i]);
	cm_nr_devs = 0;
	return ret;
}

/* ::ffff:a.b.c.d, the form of IPv4 addresses in RoCEv2 GIDs. */
bool
cm_gid_is_v4(const union ibv_gid *gid)
{
	static const uint8_t v4[12] = { [10] = 0xff, [11] = 0xff };

	return memcmp(gid->raw, v4, sizeof(v4)) == 0;
}

static bool
cm_gid_empty(const union ibv_gid *gid)
{
	static const uint8_t zero[16];

	return memcmp(gid->raw, zero, 16) == 0;
}

static bool
cm_same_prefix(const union ibv_gid *a, const union ibv_gid *b,
	       unsigned int plen)
{
	unsigned int n = RTE_MIN(plen, 128u) / 8;

	if (memcmp(a->raw, b->raw, n) != 0)
		return false;
	return plen % 8 == 0 || n == 16 ||
		((a->raw[n] ^ b->raw[n]) & (0xff00u >> (plen % 8)) & 0xff) == 0;
}

/*
 * The device, and the index of its GID, that owns address @ip (as a GID:
 * IPv4 mapped) or, unless @exact, whose subnet holds it: IPv4 on the ipv4
 * key's subnet, fe80::/64 on the link-local address (the first device's:
 * no scope to tell devices apart), other IPv6 on the prefix of an
 * address of the ipv6 key.  NULL if none.  The caller has run
 * cm_dev_open_all().
 */
struct cm_dev *
cm_dev_for_gid(const union ibv_gid *ip, bool exact, uint8_t *sgid_index)
{
	bool v4 = cm_gid_is_v4(ip);

	for (unsigned int i = 0; i < cm_nr_devs; i++)
		for (unsigned int g = 0; g < RP_GID_TBL_LEN; g++)
			if (!cm_gid_empty(&cm_devs[i].gid[g]) &&
			    memcmp(cm_devs[i].gid[g].raw, ip->raw, 16) == 0) {
				*sgid_index = (uint8_t)g;
				return &cm_devs[i];
			}
	if (exact)
		return NULL;
	for (unsigned int i = 0; i < cm_nr_devs; i++)
		for (unsigned int g = 0; g < RP_GID_TBL_LEN; g++) {
			const union ibv_gid *own = &cm_devs[i].gid[g];

			if (cm_gid_empty(own) || cm_gid_is_v4(own) != v4 ||
			    cm_devs[i].gid_plen[g] == 0 ||
			    !cm_same_prefix(own, ip, cm_devs[i].gid_plen[g]))
				continue;
			*sgid_index = (uint8_t)g;
			return &cm_devs[i];
		}
	return NULL;
}

/*
 * The first device's address of a family, for a destination no subnet
 * holds (a multicast group): IPv4's GID, or for IPv6 a configured
 * address, the link-local one if @link_local or if there is none.
 */
struct cm_dev *
cm_dev_for_family(bool v4, bool link_local, uint8_t *sgid_index)
{
	for (unsigned int i = 0; i < cm_nr_devs; i++) {
		int found = -1;

		for (unsigned int g = 0; g < RP_GID_TBL_LEN; g++) {
			const union ibv_gid *own = &cm_devs[i].gid[g];
			bool ll = own->raw[0] == 0xfe &&
				(own->raw[1] & 0xc0) == 0x80;

			if (cm_gid_empty(own) || cm_gid_is_v4(own) != v4)
				continue;
			if (v4 || ll == link_local) {
				found = (int)g;
				break;
			}
			if (found < 0)
				found = (int)g;
		}
		if (found >= 0) {
			*sgid_index = (uint8_t)found;
			return &cm_devs[i];
		}
	}
	return NULL;
}

static struct ibv_ah *
cm_ah(struct cm_dev *d, uint8_t sgid_index, const union ibv_gid *dgid)
{
	struct ibv_ah_attr aa = {
		.is_global = 1,
		.port_num = CM_PORT,
		.grh = { .dgid = *dgid, .sgid_index = sgid_index,
			 .hop_limit = CM_HOP_LIMIT },
	};
	struct ibv_ah *ah;

	for (unsigned int i = 0; i < d->nr_ah; i++)
		if (memcmp(d->ah_cache[i].gid.raw, dgid->raw, 16) == 0 &&
		    d->ah_cache[i].sgid_index == sgid_index)
			return d->ah_cache[i].ah;
	if (d->nr_ah == CM_AH_CACHE) {
		/* Full (many peers, or garbage): start over once no send
		 * may still use one. */
		if (d->send_out != 0) {
			errno = EAGAIN;
			return NULL;
		}
		for (unsigned int i = 0; i < d->nr_ah; i++)
			ibv_destroy_ah(d->ah_cache[i].ah);
		d->nr_ah = 0;
	}
	ah = ibv_create_ah(d->pd, &aa);
	if (ah == NULL)
		return NULL;
	d->ah_cache[d->nr_ah].gid = *dgid;
	d->ah_cache[d->nr_ah].sgid_index = sgid_index;
	d->ah_cache[d->nr_ah].ah = ah;
	d->nr_ah++;
	return ah;
}

/*
 * Send one MAD from our GID @sgid_index to the GSI at @dgid (inline: no
 * buffer outlives the call).
 */
int
cm_send(struct cm_dev *d, uint8_t sgid_index, const union ibv_gid *dgid,
	uint8_t *mad)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)mad, .length = CM_MAD_SIZE, .lkey = 0,
	};
	struct ibv_send_wr wr = {
		.sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_INLINE | IBV_SEND_SIGNALED,
	};
	struct ibv_send_wr *bad;
	struct ibv_ah *ah;
	int ret;

	struct ibv_wc wc[16];
	int n;

	while ((n = ibv_poll_cq(d->scq, RTE_DIM(wc), wc)) > 0) {
		for (int i = 0; i < n; i++)
			if (wc[i].status != IBV_WC_SUCCESS)
				CM_LOG(WARNING, "MAD send failed: %s",
					 ibv_wc_status_str(wc[i].status));
		d->send_out -= (uint32_t)n;
	}
	if (d->send_out >= CM_SEND_DEPTH)
		return -EAGAIN;
	ah = cm_ah(d, sgid_index, dgid);
	if (ah == NULL)
		return -errno;
	wr.wr.ud.ah = ah;
	wr.wr.ud.remote_qpn = 1;
	wr.wr.ud.remote_qkey = CM_GSI_QKEY;
	ret = ibv_post_send(d->qp, &wr, &bad);
	if (ret != 0)
		return -ret;
	d->send_out++;
	return 0;
}

/*
 * A new local communication (or SIDR request) ID for a connection through
 * device @d: random, with our agent's prefix, so that the engine hands
 * the answers to this process (QP 1 is every process's).
 */
uint32_t
cm_local_id(const struct cm_dev *d)
{
	uint32_t id;

	do
		id = (cm_random32() & ~d->comm_mask) | d->comm_prefix;
	while ((id & ~d->comm_mask) == 0);
	return id;
}

/*
 * Claim (or let go of) a service ID (a port) on every device, as the
 * kernel's port space is one per host: another process's claim makes it
 * -EADDRINUSE.  A failed claim leaves none behind.
 */
int
cm_agent_claim(uint64_t service_id, bool claim)
{
	int ret;

	for (unsigned int i = 0; i < cm_nr_devs; i++) {
		ret = rocepmd_verbs_gsi_bind(cm_devs[i].qp, service_id, claim);
		if (ret == 0 || !claim) {
			if (ret < 0)
				CM_LOG(WARNING, "service 0x%016" PRIx64 ": cannot let go: %s",
				       service_id, strerror(-ret));
			continue;
		}
		while (i-- > 0)
			rocepmd_verbs_gsi_bind(cm_devs[i].qp, service_id, false);
		return ret;
	}
	return 0;
}

/* Leave (mad != NULL) or withdraw the engine's DREQ for a connection. */
int
cm_agent_will(struct cm_dev *d, uint32_t comm_id, const union ibv_gid *dgid,
	      uint8_t sgid_index, const uint8_t *mad, uint32_t len)
{
	return rocepmd_verbs_gsi_will(d->qp, comm_id, dgid, sgid_index, mad,
				      mad != NULL ? len : 0);
}

unsigned int
cm_dev_contexts(struct ibv_context **out, unsigned int max)
{
	unsigned int n = RTE_MIN(cm_nr_devs, max);

	for (unsigned int i = 0; i < n; i++)
		out[i] = cm_devs[i].ctx;
	return n;
}
