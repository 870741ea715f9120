/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * InfiniBand communication management MADs (IBTA vol. 1, chapter 12) as
 * RoCE carries them: 256-byte UD SENDs to QP 1 with Q_Key 0x80010000.
 *
 * One table (cm_mad.c) gives every field of every message its byte
 * offset, bit offset and width; cm_get()/cm_set() read and write them.
 * Nothing here knows about connections: cm.c does.  No EAL, no verbs, so
 * the unit tests can check the codec against kernel captures.
 */

#ifndef _CM_MAD_H_
#define _CM_MAD_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CM_MAD_SIZE		256u
#define CM_GSI_QKEY		0x80010000u
#define CM_MGMT_CLASS		0x07u
#define CM_CLASS_VERSION	2u
#define CM_METHOD_SEND		0x03u

/* Attribute IDs of the CM messages (IBTA table 12.6.x). */
enum cm_attr {
	CM_ATTR_REQ = 0x0010,
	CM_ATTR_MRA = 0x0011,
	CM_ATTR_REJ = 0x0012,
	CM_ATTR_REP = 0x0013,
	CM_ATTR_RTU = 0x0014,
	CM_ATTR_DREQ = 0x0015,
	CM_ATTR_DREP = 0x0016,
	CM_ATTR_SIDR_REQ = 0x0017,
	CM_ATTR_SIDR_REP = 0x0018,
};

/* Fields, named after the IBTA's; the table in cm_mad.c places them. */
enum cm_field {
	/* MAD common header */
	CM_F_BASE_VERSION,
	CM_F_MGMT_CLASS,
	CM_F_CLASS_VERSION,
	CM_F_METHOD,
	CM_F_STATUS,
	CM_F_TID,
	CM_F_ATTR_ID,
	CM_F_ATTR_MOD,
	/* REQ */
	CM_F_REQ_LOCAL_COMM_ID,
	CM_F_REQ_SERVICE_ID,
	CM_F_REQ_LOCAL_CA_GUID,
	CM_F_REQ_LOCAL_QKEY,
	CM_F_REQ_LOCAL_QPN,
	CM_F_REQ_RESPONDER_RESOURCES,
	CM_F_REQ_INITIATOR_DEPTH,
	CM_F_REQ_REMOTE_CM_RESP_TIMEOUT,
	CM_F_REQ_TRANSPORT,
	CM_F_REQ_STARTING_PSN,
	CM_F_REQ_LOCAL_CM_RESP_TIMEOUT,
	CM_F_REQ_RETRY_COUNT,
	CM_F_REQ_PKEY,
	CM_F_REQ_PATH_MTU,
	CM_F_REQ_RNR_RETRY_COUNT,
	CM_F_REQ_MAX_CM_RETRIES,
	CM_F_REQ_SRQ,
	CM_F_REQ_PRIMARY_LOCAL_LID,
	CM_F_REQ_PRIMARY_REMOTE_LID,
	CM_F_REQ_PRIMARY_LOCAL_GID,	/* 16 bytes */
	CM_F_REQ_PRIMARY_REMOTE_GID,	/* 16 bytes */
	CM_F_REQ_PRIMARY_FLOW_LABEL,
	CM_F_REQ_PRIMARY_PACKET_RATE,
	CM_F_REQ_PRIMARY_TRAFFIC_CLASS,
	CM_F_REQ_PRIMARY_HOP_LIMIT,
	CM_F_REQ_PRIMARY_SL,
	CM_F_REQ_PRIMARY_LOCAL_ACK_TIMEOUT,
	CM_F_REQ_PRIVATE_DATA,		/* 92 bytes */
	/* REP */
	CM_F_REP_LOCAL_COMM_ID,
	CM_F_REP_REMOTE_COMM_ID,
	CM_F_REP_LOCAL_QKEY,
	CM_F_REP_LOCAL_QPN,
	CM_F_REP_STARTING_PSN,
	CM_F_REP_RESPONDER_RESOURCES,
	CM_F_REP_INITIATOR_DEPTH,
	CM_F_REP_TARGET_ACK_DELAY,
	CM_F_REP_FAILOVER_ACCEPTED,
	CM_F_REP_END_TO_END_FC,
	CM_F_REP_RNR_RETRY_COUNT,
	CM_F_REP_SRQ,
	CM_F_REP_LOCAL_CA_GUID,
	CM_F_REP_PRIVATE_DATA,		/* 196 bytes */
	/* RTU */
	CM_F_RTU_LOCAL_COMM_ID,
	CM_F_RTU_REMOTE_COMM_ID,
	CM_F_RTU_PRIVATE_DATA,		/* 224 bytes */
	/* REJ */
	CM_F_REJ_LOCAL_COMM_ID,
	CM_F_REJ_REMOTE_COMM_ID,
	CM_F_REJ_MSG_REJECTED,
	CM_F_REJ_REASON,
	CM_F_REJ_PRIVATE_DATA,		/* 148 bytes */
	/* DREQ */
	CM_F_DREQ_LOCAL_COMM_ID,
	CM_F_DREQ_REMOTE_COMM_ID,
	CM_F_DREQ_REMOTE_QPN,
	CM_F_DREQ_PRIVATE_DATA,		/* 220 bytes */
	/* DREP */
	CM_F_DREP_LOCAL_COMM_ID,
	CM_F_DREP_REMOTE_COMM_ID,
	CM_F_DREP_PRIVATE_DATA,		/* 224 bytes */
	/* SIDR_REQ */
	CM_F_SIDR_REQ_REQUEST_ID,
	CM_F_SIDR_REQ_PKEY,
	CM_F_SIDR_REQ_SERVICE_ID,
	CM_F_SIDR_REQ_PRIVATE_DATA,	/* 216 bytes */
	/* SIDR_REP */
	CM_F_SIDR_REP_REQUEST_ID,
	CM_F_SIDR_REP_STATUS,
	CM_F_SIDR_REP_QPN,
	CM_F_SIDR_REP_SERVICE_ID,
	CM_F_SIDR_REP_QKEY,
	CM_F_SIDR_REP_PRIVATE_DATA,	/* 136 bytes */
	CM_F_MAX
};

/* Where a field lives: bytes [off, off + len) or a bit range in them. */
struct cm_field_desc {
	const char *name;
	uint16_t off;		/* byte offset in the MAD */
	uint16_t len;		/* bytes, for a byte-array field; else 0 */
	uint8_t bit;		/* first bit, 0 = MSB of byte off */
	uint8_t width;		/* bits, 1..64, for a number */
};

extern const struct cm_field_desc cm_fields[CM_F_MAX];

/* MRA's and MRA-less messages share IBTA's REJ reasons. */
#define CM_REJ_NO_QP			1
#define CM_REJ_TIMEOUT			4
#define CM_REJ_INVALID_SERVICE_ID	8
#define CM_REJ_INVALID_TRANSPORT	9
#define CM_REJ_STALE_CONN		10
#define CM_REJ_CONSUMER_DEFINED		28
/* REJ "message rejected" */
#define CM_REJ_MSG_REQ			0
#define CM_REJ_MSG_REP			1

/* REQ transport service type */
#define CM_TRANSPORT_RC			0
#define CM_TRANSPORT_UC			1

/* SIDR_REP status */
#define CM_SIDR_OK			0
#define CM_SIDR_UNSUPPORTED		1
#define CM_SIDR_REJECT			2

uint64_t cm_get(const uint8_t *mad, enum cm_field f);
void cm_set(uint8_t *mad, enum cm_field f, uint64_t v);
/* Byte-array fields: copy out or in at most the field's length. */
const uint8_t *cm_bytes(const uint8_t *mad, enum cm_field f, size_t *len);
void cm_set_bytes(uint8_t *mad, enum cm_field f, const void *src, size_t n);

/* A fresh MAD of message @attr with transaction ID @tid, all else 0. */
void cm_mad_init(uint8_t *mad, enum cm_attr attr, uint64_t tid);

/*
 * Check a received MAD: the CM class and version, the SEND method and a
 * message this agent handles.  @return the attribute, or -1.
 */
int cm_mad_check(const uint8_t *mad, size_t len);

const char *cm_attr_name(unsigned int attr);

/*
 * RDMA CM's IP header at the start of REQ and SIDR_REQ private data
 * (rdma-core librdmacm/cma.h, the kernel's struct cma_hdr): version 0,
 * IP version in the high nibble, the source port, then source and
 * destination as 16-byte fields (IPv4 in the last four).
 */
#define CM_CMA_HDR_LEN		36u
#define CM_SERVICE_ID_TCP	0x0000000001060000ull	/* RDMA_PS_TCP */
#define CM_SERVICE_ID_UDP	0x0000000001110000ull	/* RDMA_PS_UDP */
#define CM_SERVICE_ID_PS_MASK	0xffffffffffff0000ull

struct cm_cma_hdr {
	uint8_t ip_version;		/* 4 or 6 */
	uint16_t src_port;		/* host order */
	uint8_t src[16];		/* network order; IPv4 in [12..15] */
	uint8_t dst[16];
};

void cm_cma_hdr_put(uint8_t *priv, const struct cm_cma_hdr *h);
/* @return 0, or -1 if it is no version-0 header of IPv4 or IPv6 */
int cm_cma_hdr_get(const uint8_t *priv, size_t len, struct cm_cma_hdr *h);

#endif /* _CM_MAD_H_ */
