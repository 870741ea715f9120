/* SPDX-License-Identifier: BSD-3-Clause */
/* The CM MAD codec: one table of fields, generic big-endian accessors. */

#include <string.h>

#include "cm_mad.h"

#define F(n, o, b, w)	[n] = { #n, (o), 0, (b), (w) }
#define A(n, o, l)	[n] = { #n, (o), (l), 0, 0 }

/* Offsets are from the start of the MAD (the CM data begins at 24). */
const struct cm_field_desc cm_fields[CM_F_MAX] = {
	F(CM_F_BASE_VERSION, 0, 0, 8),
	F(CM_F_MGMT_CLASS, 1, 0, 8),
	F(CM_F_CLASS_VERSION, 2, 0, 8),
	F(CM_F_METHOD, 3, 0, 8),
	F(CM_F_STATUS, 4, 0, 16),
	F(CM_F_TID, 8, 0, 64),
	F(CM_F_ATTR_ID, 16, 0, 16),
	F(CM_F_ATTR_MOD, 20, 0, 32),

	F(CM_F_REQ_LOCAL_COMM_ID, 24, 0, 32),
	F(CM_F_REQ_SERVICE_ID, 32, 0, 64),
	F(CM_F_REQ_LOCAL_CA_GUID, 40, 0, 64),
	F(CM_F_REQ_LOCAL_QKEY, 52, 0, 32),
	F(CM_F_REQ_LOCAL_QPN, 56, 0, 24),
	F(CM_F_REQ_RESPONDER_RESOURCES, 59, 0, 8),
	F(CM_F_REQ_INITIATOR_DEPTH, 63, 0, 8),
	F(CM_F_REQ_REMOTE_CM_RESP_TIMEOUT, 67, 0, 5),
	F(CM_F_REQ_TRANSPORT, 67, 5, 2),
	F(CM_F_REQ_STARTING_PSN, 68, 0, 24),
	F(CM_F_REQ_LOCAL_CM_RESP_TIMEOUT, 71, 0, 5),
	F(CM_F_REQ_RETRY_COUNT, 71, 5, 3),
	F(CM_F_REQ_PKEY, 72, 0, 16),
	F(CM_F_REQ_PATH_MTU, 74, 0, 4),
	F(CM_F_REQ_RNR_RETRY_COUNT, 74, 5, 3),
	F(CM_F_REQ_MAX_CM_RETRIES, 75, 0, 4),
	F(CM_F_REQ_SRQ, 75, 4, 1),
	F(CM_F_REQ_PRIMARY_LOCAL_LID, 76, 0, 16),
	F(CM_F_REQ_PRIMARY_REMOTE_LID, 78, 0, 16),
	A(CM_F_REQ_PRIMARY_LOCAL_GID, 80, 16),
	A(CM_F_REQ_PRIMARY_REMOTE_GID, 96, 16),
	F(CM_F_REQ_PRIMARY_FLOW_LABEL, 112, 0, 20),
	F(CM_F_REQ_PRIMARY_PACKET_RATE, 112, 26, 6),
	F(CM_F_REQ_PRIMARY_TRAFFIC_CLASS, 116, 0, 8),
	F(CM_F_REQ_PRIMARY_HOP_LIMIT, 117, 0, 8),
	F(CM_F_REQ_PRIMARY_SL, 118, 0, 4),
	F(CM_F_REQ_PRIMARY_LOCAL_ACK_TIMEOUT, 119, 0, 5),
	A(CM_F_REQ_PRIVATE_DATA, 164, 92),

	F(CM_F_REP_LOCAL_COMM_ID, 24, 0, 32),
	F(CM_F_REP_REMOTE_COMM_ID, 28, 0, 32),
	F(CM_F_REP_LOCAL_QKEY, 32, 0, 32),
	F(CM_F_REP_LOCAL_QPN, 36, 0, 24),
	F(CM_F_REP_STARTING_PSN, 44, 0, 24),
	F(CM_F_REP_RESPONDER_RESOURCES, 48, 0, 8),
	F(CM_F_REP_INITIATOR_DEPTH, 49, 0, 8),
	F(CM_F_REP_TARGET_ACK_DELAY, 50, 0, 5),
	F(CM_F_REP_FAILOVER_ACCEPTED, 50, 5, 2),
	F(CM_F_REP_END_TO_END_FC, 50, 7, 1),
	F(CM_F_REP_RNR_RETRY_COUNT, 51, 0, 3),
	F(CM_F_REP_SRQ, 51, 3, 1),
	F(CM_F_REP_LOCAL_CA_GUID, 52, 0, 64),
	A(CM_F_REP_PRIVATE_DATA, 60, 196),

	F(CM_F_RTU_LOCAL_COMM_ID, 24, 0, 32),
	F(CM_F_RTU_REMOTE_COMM_ID, 28, 0, 32),
	A(CM_F_RTU_PRIVATE_DATA, 32, 224),

	F(CM_F_REJ_LOCAL_COMM_ID, 24, 0, 32),
	F(CM_F_REJ_REMOTE_COMM_ID, 28, 0, 32),
	F(CM_F_REJ_MSG_REJECTED, 32, 0, 2),
	F(CM_F_REJ_REASON, 34, 0, 16),
	A(CM_F_REJ_PRIVATE_DATA, 108, 148),

	F(CM_F_DREQ_LOCAL_COMM_ID, 24, 0, 32),
	F(CM_F_DREQ_REMOTE_COMM_ID, 28, 0, 32),
	F(CM_F_DREQ_REMOTE_QPN, 32, 0, 24),
	A(CM_F_DREQ_PRIVATE_DATA, 36, 220),

	F(CM_F_DREP_LOCAL_COMM_ID, 24, 0, 32),
	F(CM_F_DREP_REMOTE_COMM_ID, 28, 0, 32),
	A(CM_F_DREP_PRIVATE_DATA, 32, 224),

	F(CM_F_SIDR_REQ_REQUEST_ID, 24, 0, 32),
	F(CM_F_SIDR_REQ_PKEY, 28, 0, 16),
	F(CM_F_SIDR_REQ_SERVICE_ID, 32, 0, 64),
	A(CM_F_SIDR_REQ_PRIVATE_DATA, 40, 216),

	F(CM_F_SIDR_REP_REQUEST_ID, 24, 0, 32),
	F(CM_F_SIDR_REP_STATUS, 28, 0, 8),
	F(CM_F_SIDR_REP_QPN, 32, 0, 24),
	F(CM_F_SIDR_REP_SERVICE_ID, 36, 0, 64),
	F(CM_F_SIDR_REP_QKEY, 44, 0, 32),
	A(CM_F_SIDR_REP_PRIVATE_DATA, 120, 136),
};

#undef F
#undef A

/* Bytes spanned by a numeric field. */
static unsigned int
field_bytes(const struct cm_field_desc *d)
{
	return (d->bit + d->width + 7u) / 8u;
}

uint64_t
cm_get(const uint8_t *mad, enum cm_field f)
{
	const struct cm_field_desc *d = &cm_fields[f];
	unsigned int n = field_bytes(d);
	uint64_t v = 0;

	for (unsigned int i = 0; i < n; i++)
		v = v << 8 | mad[d->off + i];
	v >>= n * 8u - d->bit - d->width;
	return d->width == 64 ? v : v & ((1ull << d->width) - 1);
}

void
cm_set(uint8_t *mad, enum cm_field f, uint64_t val)
{
	const struct cm_field_desc *d = &cm_fields[f];
	unsigned int n = field_bytes(d);
	unsigned int shift = n * 8u - d->bit - d->width;
	uint64_t mask = d->width == 64 ? ~0ull : (1ull << d->width) - 1;
	uint64_t v = 0;

	for (unsigned int i = 0; i < n; i++)
		v = v << 8 | mad[d->off + i];
	v &= ~(mask << shift);
	v |= (val & mask) << shift;
	for (unsigned int i = n; i-- > 0; v >>= 8)
		mad[d->off + i] = (uint8_t)v;
}

const uint8_t *
cm_bytes(const uint8_t *mad, enum cm_field f, size_t *len)
{
	const struct cm_field_desc *d = &cm_fields[f];

	if (len != NULL)
		*len = d->len;
	return mad + d->off;
}

void
cm_set_bytes(uint8_t *mad, enum cm_field f, const void *src, size_t n)
{
	const struct cm_field_desc *d = &cm_fields[f];

	if (n > d->len)
		n = d->len;
	memcpy(mad + d->off, src, n);
	memset(mad + d->off + n, 0, d->len - n);
}

void
cm_mad_init(uint8_t *mad, enum cm_attr attr, uint64_t tid)
{
	memset(mad, 0, CM_MAD_SIZE);
	cm_set(mad, CM_F_BASE_VERSION, 1);
	cm_set(mad, CM_F_MGMT_CLASS, CM_MGMT_CLASS);
	cm_set(mad, CM_F_CLASS_VERSION, CM_CLASS_VERSION);
	cm_set(mad, CM_F_METHOD, CM_METHOD_SEND);
	cm_set(mad, CM_F_TID, tid);
	cm_set(mad, CM_F_ATTR_ID, attr);
}

int
cm_mad_check(const uint8_t *mad, size_t len)
{
	unsigned int attr;

	if (len < CM_MAD_SIZE || cm_get(mad, CM_F_BASE_VERSION) != 1 ||
	    cm_get(mad, CM_F_MGMT_CLASS) != CM_MGMT_CLASS ||
	    cm_get(mad, CM_F_CLASS_VERSION) != CM_CLASS_VERSION ||
	    cm_get(mad, CM_F_METHOD) != CM_METHOD_SEND)
		return -1;
	attr = (unsigned int)cm_get(mad, CM_F_ATTR_ID);
	switch (attr) {
	case CM_ATTR_REQ:
	case CM_ATTR_MRA:
	case CM_ATTR_REJ:
	case CM_ATTR_REP:
	case CM_ATTR_RTU:
	case CM_ATTR_DREQ:
	case CM_ATTR_DREP:
	case CM_ATTR_SIDR_REQ:
	case CM_ATTR_SIDR_REP:
		return (int)attr;
	default:
		return -1;
	}
}

const char *
cm_attr_name(unsigned int attr)
{
	switch (attr) {
	case CM_ATTR_REQ: return "REQ";
	case CM_ATTR_MRA: return "MRA";
	case CM_ATTR_REJ: return "REJ";
	case CM_ATTR_REP: return "REP";
	case CM_ATTR_RTU: return "RTU";
	case CM_ATTR_DREQ: return "DREQ";
	case CM_ATTR_DREP: return "DREP";
	case CM_ATTR_SIDR_REQ: return "SIDR_REQ";
	case CM_ATTR_SIDR_REP: return "SIDR_REP";
	default: return "?";
	}
}

void
cm_cma_hdr_put(uint8_t *priv, const struct cm_cma_hdr *h)
{
	priv[0] = 0;				/* CMA version */
	priv[1] = (uint8_t)(h->ip_version << 4);
	priv[2] = (uint8_t)(h->src_port >> 8);
	priv[3] = (uint8_t)h->src_port;
	memcpy(priv + 4, h->src, 16);
	memcpy(priv + 20, h->dst, 16);
}

int
cm_cma_hdr_get(const uint8_t *priv, size_t len, struct cm_cma_hdr *h)
{
	if (len < CM_CMA_HDR_LEN || priv[0] != 0)
		return -1;
	h->ip_version = priv[1] >> 4;
	if (h->ip_version != 4 && h->ip_version != 6)
		return -1;
	h->src_port = (uint16_t)(priv[2] << 8 | priv[3]);
	memcpy(h->src, priv + 4, 16);
	memcpy(h->dst, priv + 20, 16);
	return 0;
}
