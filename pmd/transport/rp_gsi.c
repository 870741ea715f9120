/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * QP 1 shared by every process of a device, as the kernel's MAD layer
 * shares it between its agents.  Each process that runs an RDMA CM owns a
 * GSI agent: a UD QP of its own whose packets leave with source QP 1.
 * What arrives at QP 1 goes to one agent:
 *
 *   - a REQ or SIDR REQ to the agent that claimed its service ID (the
 *     port it is for: rdma_bind_addr), so two processes listen on two
 *     ports of one device and a port is one process's;
 *   - every other CM MAD to the agent named by the top byte of the
 *     communication ID it is addressed to (the agent's tag, which its CM
 *     puts in every local ID it chooses);
 *   - what names no live agent (a REQ for a port no one claimed, a DREQ
 *     for a process that is gone, another management class) to the
 *     oldest agent, whose CM answers as the IB CM specifies (REJ, DREP).
 *
 * An agent also leaves DREQs behind, one per connection it has
 * established (its "will"): when its QP is destroyed, however its process
 * ended, the engine sends them, so the peers of a killed process learn
 * at once instead of when their retries run out.
 *
 * Everything here runs on the device's lcore (control requests and the
 * receive path): the tables have one writer.
 */

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_hash.h>
#include <rte_malloc.h>

#include "rp_hdr.h"
#include "rp_transport.h"
#include "rp_opcode.h"
#include "rp_xmit.h"

#define RP_GSI_SERVICES		8192u	/* service IDs claimed per device */
#define RP_GSI_BIND_MAX		1024u	/* ... and per agent */
#define RP_GSI_WILLS		1024u	/* connections with a will per agent */
#define RP_GSI_QKEY		0x80010000u	/* IBTA 13.4.6.2: QP 1's */
#define RP_MAD_SIZE		256u

/* MAD header and CM fields (IBTA 13.4.3, 12.6), offsets in the MAD. */
#define MAD_MGMT_CLASS		1
#define MAD_ATTR_ID		16
#define MAD_DATA		24
#define CM_CLASS		0x07u
#define CM_ATTR_REQ		0x0010u
#define CM_ATTR_REJ		0x0012u
#define CM_ATTR_DREQ		0x0015u
#define CM_ATTR_SIDR_REQ	0x0017u
#define CM_ATTR_SIDR_REP	0x0018u
#define CM_ATTR_LAST		0x001au	/* APR */

struct rp_gsi_will_ent {
	uint32_t comm_id;		/* 0: free */
	uint32_t len;
	struct rp_av av;
	uint8_t mad[RP_GSI_WILL_LEN];
};

struct rp_gsi_agent {
	uint8_t tag;
	uint64_t seq;			/* creation order: oldest first */
	uint32_t nbound;		/* claims it holds */
	uint32_t nwill;
	struct rp_gsi_will_ent will[RP_GSI_WILLS];
};

static uint64_t rp_gsi_seq;

int
rp_gsi_init(struct rp_dev *dev)
{
	char name[RTE_HASH_NAMESIZE];
	struct rte_hash_parameters p = {
		.name = name,
		.entries = RP_GSI_SERVICES,
		.key_len = sizeof(uint64_t),
		.socket_id = (int)rte_socket_id(),
	};

	snprintf(name, sizeof(name), "rp_gsi_%u", dev->id);
	dev->gsi_svc = rte_hash_create(&p);
	return dev->gsi_svc != NULL ? 0 : -ENOMEM;
}

void
rp_gsi_fini(struct rp_dev *dev)
{
	rte_hash_free(dev->gsi_svc);
	dev->gsi_svc = NULL;
}

static inline uint32_t
be32_at(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
		(uint32_t)p[2] << 8 | p[3];
}

/* A claim's value: the agent's tag and how many claims it made. */
static inline uintptr_t
svc_val(uint8_t tag, uint32_t count)
{
	return (uintptr_t)count << 8 | tag;
}

int
rp_gsi_agent_add(struct rp_dev *dev, struct rp_qp *qp)
{
	struct rp_gsi_agent *a;
	unsigned int tag;

	for (tag = 1; tag < RP_GSI_AGENTS; tag++)
		if (dev->gsi_agent[tag] == NULL)
			break;
	if (tag == RP_GSI_AGENTS)
		return -EBUSY;
	a = rte_zmalloc("rp_gsi_agent", sizeof(*a), 0);
	if (a == NULL)
		return -ENOMEM;
	a->tag = (uint8_t)tag;
	a->seq = ++rp_gsi_seq;
	qp->gsi = a;
	dev->gsi_agent[tag] = qp;
	return 0;
}

uint32_t
rp_gsi_comm_prefix(const struct rp_qp *qp)
{
	return (uint32_t)qp->gsi->tag << 24;
}

/* Send the agent's standing wills: the DREQs of its connections. */
static void
gsi_wills_send(struct rp_dev *dev, struct rp_qp *qp)
{
	struct rp_gsi_agent *a = qp->gsi;
	const uint8_t op = RP_OP_UD | RP_OP_SEND_ONLY;

	for (unsigned int i = 0; i < RP_GSI_WILLS && a->nwill != 0; i++) {
		struct rp_gsi_will_ent *w = &a->will[i];
		struct rp_pkt_addr pa = { 0 };
		struct rte_mbuf *m;
		uint8_t *bth, *pay;

		if (w->comm_id == 0)
			continue;
		a->nwill--;
		w->comm_id = 0;
		memcpy(pa.smac, dev->port.mac.addr_bytes, 6);
		memcpy(pa.sgid, dev->net.gid[w->av.sgid_index], 16);
		memcpy(pa.dgid, w->av.dgid, 16);
		pa.ttl = rp_xmit_hop_limit(dev, &w->av);
		pa.tclass = w->av.traffic_class;
		pa.flow_label = rp_pkt_flow_label(w->av.flow_label, 1, 1);
		pa.sport = rp_pkt_udp_sport(w->av.flow_label, 1, 1);
		/* The peer was reached before: its MAC is cached.  If it is
		 * not, no DREQ: the peer's retries find the QP gone. */
		if (rp_xmit_dmac(dev, w->av.dgid, pa.dmac) != 0) {
			rp_stat_inc(dev, RP_STAT_GSI_WILLS_LOST);
			continue;
		}
		m = rp_xmit_alloc(qp, &pa, 1, op, 0, 0, qp->req.psn,
				  RP_MAD_SIZE, &bth);
		if (m == NULL) {
			rp_stat_inc(dev, RP_STAT_GSI_WILLS_LOST);
			continue;
		}
		rp_deth_set(rp_xmit_hdr(bth, op, RP_HDR_DETH), RP_GSI_QKEY, 1);
		pay = rp_xmit_hdr(bth, op, RP_HDR_PAYLOAD);
		memcpy(pay, w->mad, w->len);
		memset(pay + w->len, 0, RP_MAD_SIZE - w->len);
		rp_xmit_send(qp, &pa, m);
		qp->req.psn = (qp->req.psn + 1) & 0xffffff;
		rp_stat_inc(dev, RP_STAT_GSI_WILLS);
	}
}

void
rp_gsi_agent_del(struct rp_dev *dev, struct rp_qp *qp)
{
	struct rp_gsi_agent *a = qp->gsi;
	const void *key;
	void *val;
	uint32_t it = 0;

	if (a == NULL)
		return;
	gsi_wills_send(dev, qp);
	/* Let go of its claims (deleting behind the iterator is safe:
	 * rte_hash_iterate walks the key slots in order). */
	while (a->nbound != 0 &&
	       rte_hash_iterate(dev->gsi_svc, &key, &val, &it) >= 0) {
		uintptr_t v = (uintptr_t)val;

		if ((v & 0xff) != a->tag)
			continue;
		a->nbound -= (uint32_t)(v >> 8);
		rte_hash_del_key(dev->gsi_svc, key);
	}
	dev->gsi_agent[a->tag] = NULL;
	qp->gsi = NULL;
	rte_free(a);
}

static struct rp_qp *
gsi_agent_qp(struct rp_dev *dev, uint32_t qpn)
{
	struct rp_qp *qp = rp_qp_get(dev, qpn);

	return qp != NULL && qp->gsi != NULL ? qp : NULL;
}

int
rp_gsi_bind(struct rp_dev *dev, struct rp_ctrl_gsi_bind *m)
{
	struct rp_qp *qp = gsi_agent_qp(dev, m->qpn);
	uint64_t key = m->service_id;
	struct rp_gsi_agent *a;
	void *val;
	uintptr_t v = 0;
	int ret;

	if (qp == NULL)
		return -EINVAL;
	a = qp->gsi;
	if (rte_hash_lookup_data(dev->gsi_svc, &key, &val) >= 0) {
		v = (uintptr_t)val;
		if ((v & 0xff) != a->tag)
			return m->bind ? -EADDRINUSE : -ENOENT;
	} else if (!m->bind) {
		return -ENOENT;
	}
	if (!m->bind) {
		a->nbound--;
		if ((v >> 8) == 1)
			return rte_hash_del_key(dev->gsi_svc, &key) < 0 ?
				-ENOENT : 0;
		return rte_hash_add_key_data(dev->gsi_svc, &key,
				(void *)svc_val(a->tag, (uint32_t)(v >> 8) - 1));
	}
	if (a->nbound >= RP_GSI_BIND_MAX)
		return -ENOBUFS;
	ret = rte_hash_add_key_data(dev->gsi_svc, &key,
			(void *)svc_val(a->tag, v == 0 ? 1 : (uint32_t)(v >> 8) + 1));
	if (ret < 0)
		return ret == -ENOSPC ? -ENOBUFS : ret;
	a->nbound++;
	return 0;
}

int
rp_gsi_will(struct rp_dev *dev, struct rp_ctrl_gsi_will *m)
{
	struct rp_qp *qp = gsi_agent_qp(dev, m->qpn);
	struct rp_gsi_will_ent *free_ent = NULL;
	struct rp_gsi_agent *a;

	if (qp == NULL || m->comm_id == 0)
		return -EINVAL;
	a = qp->gsi;
	for (unsigned int i = 0; i < RP_GSI_WILLS; i++) {
		struct rp_gsi_will_ent *w = &a->will[i];

		if (w->comm_id == m->comm_id) {
			/* Replaced or withdrawn. */
			w->comm_id = 0;
			a->nwill--;
			free_ent = w;
			break;
		}
		if (w->comm_id == 0 && free_ent == NULL)
			free_ent = w;
	}
	if (m->len == 0)
		return 0;
	/* Untrusted: only a CM DREQ, from a GID of ours, to a unicast one,
	 * for a connection of the agent's own (rp_gsi_send_ok()). */
	if (m->len < MAD_DATA + 12 || m->len > RP_GSI_WILL_LEN ||
	    m->mad[MAD_MGMT_CLASS] != CM_CLASS ||
	    (m->mad[MAD_ATTR_ID] << 8 | m->mad[MAD_ATTR_ID + 1]) !=
	    CM_ATTR_DREQ || m->av.sgid_index >= dev->net.nr_gid ||
	    rp_gid_is_mcast(m->av.dgid))
		return -EINVAL;
	if ((be32_at(m->mad + MAD_DATA) & RP_GSI_TAG_MASK) !=
	    rp_gsi_comm_prefix(qp)) {
		rp_stat_inc(dev, RP_STAT_GSI_REFUSED);
		return -EPERM;
	}
	if (free_ent == NULL)
		return -ENOBUFS;
	free_ent->comm_id = m->comm_id;
	free_ent->len = m->len;
	free_ent->av = m->av;
	memcpy(free_ent->mad, m->mad, m->len);
	a->nwill++;
	return 0;
}

/*
 * May agent `qp` send this MAD from QP 1 (issue 24)?  Every agent speaks
 * with the host's address, so a peer cannot tell one process's MADs from
 * another's: an agent speaks only for its own CM IDs, those whose
 * communication ID carries its prefix (as rp_gsi_route() delivers to it
 * only what names them).  So:
 *
 *   - only the CM class: a process's CM sends nothing else, and the
 *     engine answers nothing for it;
 *   - REQ, MRA, REP, RTU, DREQ, DREP, LAP, APR and REJ: the Local
 *     Communication ID is the agent's; a REJ of a REQ (Message
 *     Rejected 0) may say 0 there, as it refuses before choosing one;
 *   - SIDR REQ: the Request ID is the agent's; SIDR REP: for a service
 *     ID the agent claimed (the REQ it answers was routed to it).
 *
 * A peer that checks both communication IDs of what it receives, as the
 * IB CM specifies, then takes no MAD of one process for another's
 * connection.  The alternative, one CM per device in the host serving
 * every process over the socket, would move librdmacm's whole state
 * machine into the host; the per-process agents stay, checked.
 */
bool
rp_gsi_send_ok(const struct rp_qp *qp, const uint8_t *mad, uint32_t len)
{
	const uint32_t prefix = rp_gsi_comm_prefix(qp);
	uint32_t attr, id;
	uint64_t key;
	void *val;

	if (len < MAD_DATA + 20 || mad[MAD_MGMT_CLASS] != CM_CLASS)
		return false;
	attr = (uint32_t)mad[MAD_ATTR_ID] << 8 | mad[MAD_ATTR_ID + 1];
	if (attr < CM_ATTR_REQ || attr > CM_ATTR_LAST)
		return false;
	id = be32_at(mad + MAD_DATA);
	if (attr == CM_ATTR_SIDR_REP) {
		key = (uint64_t)be32_at(mad + MAD_DATA + 12) << 32 |
			be32_at(mad + MAD_DATA + 16);
		return rte_hash_lookup_data(qp->dev->gsi_svc, &key, &val) >= 0 &&
			((uintptr_t)val & 0xff) == qp->gsi->tag;
	}
	/* REJ: Message Rejected is the top 2 bits after the two IDs. */
	if (attr == CM_ATTR_REJ && id == 0 && (mad[MAD_DATA + 8] >> 6) == 0)
		return true;
	return (id & RP_GSI_TAG_MASK) == prefix;
}

/* The oldest agent: it answers what belongs to no one. */
static struct rp_qp *
gsi_default(struct rp_dev *dev)
{
	struct rp_qp *best = NULL;

	for (unsigned int t = 1; t < RP_GSI_AGENTS; t++) {
		struct rp_qp *qp = dev->gsi_agent[t];

		if (qp != NULL && (best == NULL || qp->gsi->seq < best->gsi->seq))
			best = qp;
	}
	return best;
}

/* The agent a packet to QP 1 is for, or NULL (no agent at all). */
struct rp_qp *
rp_gsi_route(struct rp_dev *dev, const struct rp_pkt *pkt)
{
	const uint8_t *mad = rp_pkt_payload(pkt);
	struct rp_qp *qp = NULL;
	uint32_t attr;

	if (pkt->paylen >= MAD_DATA + 16 && mad[MAD_MGMT_CLASS] == CM_CLASS) {
		attr = (uint32_t)mad[MAD_ATTR_ID] << 8 | mad[MAD_ATTR_ID + 1];
		if (attr == CM_ATTR_REQ || attr == CM_ATTR_SIDR_REQ) {
			uint64_t key = (uint64_t)be32_at(mad + MAD_DATA + 8) << 32 |
				be32_at(mad + MAD_DATA + 12);
			void *val;

			if (rte_hash_lookup_data(dev->gsi_svc, &key, &val) >= 0)
				qp = dev->gsi_agent[(uintptr_t)val & 0xff];
		} else if (attr > CM_ATTR_REQ && attr <= CM_ATTR_LAST) {
			/* SIDR REP: the request ID; the others: the remote
			 * (our) communication ID. */
			uint32_t id = be32_at(mad + MAD_DATA +
					      (attr == CM_ATTR_SIDR_REP ? 0 : 4));
			uint32_t tag = (id & RP_GSI_TAG_MASK) >> 24;

			if (tag < RP_GSI_AGENTS)
				qp = dev->gsi_agent[tag];
		}
	}
	if (qp == NULL) {
		qp = gsi_default(dev);
		if (qp != NULL)
			rp_stat_inc(dev, RP_STAT_GSI_NO_AGENT);
	}
	return qp;
}
