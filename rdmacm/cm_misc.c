/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The rest of librdmacm's ABI: device lists, options, rdma_init_qp_attr,
 * SRQs on an id, rdma_getaddrinfo, and the calls rocepmd does not offer
 * (ECE), which fail cleanly here instead of reaching the real librdmacm
 * with a rocepmd object.
 */

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <stdlib.h>
#include <string.h>

#include <rdma/rdma_verbs.h>

#include "cm.h"
#include "rocepmd_verbs.h"

static int
cm_unsupported(const char *name)
{
	CM_LOG(NOTICE, "%s is not supported by rocepmd", name);
	errno = ENOSYS;
	return -1;
}

CM_EXPORT int
rdma_set_local_ece(struct rdma_cm_id *id __rte_unused,
		   struct ibv_ece *ece __rte_unused)
{
	return cm_unsupported(__func__);
}

CM_EXPORT int
rdma_get_remote_ece(struct rdma_cm_id *id __rte_unused,
		    struct ibv_ece *ece __rte_unused)
{
	return cm_unsupported(__func__);
}

CM_EXPORT int
rdma_reject_ece(struct rdma_cm_id *id __rte_unused,
		const void *private_data __rte_unused,
		uint8_t private_data_len __rte_unused)
{
	return cm_unsupported(__func__);
}

CM_EXPORT struct ibv_context **
rdma_get_devices(int *num_devices)
{
	struct ibv_context **ctxs;
	int ret;
	unsigned int n = 0;

	ctxs = calloc(CM_MAX_DEVS + 1, sizeof(*ctxs));
	if (ctxs == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	ret = rocepmd_verbs_boot();
	if (ret == 0) {
		pthread_mutex_lock(&cm_lock);
		if (cm_dev_open_all() == 0)
			/* The agent's contexts: the ones ids use (id->verbs). */
			n = cm_dev_contexts(ctxs, CM_MAX_DEVS);
		pthread_mutex_unlock(&cm_lock);
	}
	if (num_devices != NULL)
		*num_devices = (int)n;
	return ctxs;
}

CM_EXPORT void
rdma_free_devices(struct ibv_context **list)
{
	/* The contexts stay open: they belong to the CM agent. */
	free(list);
}

CM_EXPORT int
rdma_set_option(struct rdma_cm_id *id, int level, int optname, void *optval,
		size_t optlen)
{
	if (id == NULL || (optval == NULL && optlen != 0)) {
		errno = EINVAL;
		return -1;
	}
	if (level == RDMA_OPTION_ID &&
	    (optname == RDMA_OPTION_ID_TOS ||
	     optname == RDMA_OPTION_ID_REUSEADDR ||
	     optname == RDMA_OPTION_ID_AFONLY ||
	     optname == RDMA_OPTION_ID_ACK_TIMEOUT))
		return 0;	/* accepted; the defaults apply */
	errno = ENOSYS;
	return -1;
}

CM_EXPORT int
rdma_init_qp_attr(struct rdma_cm_id *id, struct ibv_qp_attr *qp_attr,
		  int *qp_attr_mask)
{
	int ret;

	if (id == NULL || qp_attr == NULL || qp_attr_mask == NULL) {
		errno = EINVAL;
		return -1;
	}
	pthread_mutex_lock(&cm_lock);
	ret = cm_init_qp_attr((struct cm_id *)id, qp_attr, qp_attr_mask);
	pthread_mutex_unlock(&cm_lock);
	if (ret < 0) {
		errno = -ret;
		return -1;
	}
	return 0;
}

CM_EXPORT int
rdma_create_srq_ex(struct rdma_cm_id *id, struct ibv_srq_init_attr_ex *attr)
{
	struct cm_id *c = (struct cm_id *)id;
	struct ibv_srq *srq;

	if (c == NULL || attr == NULL || id->verbs == NULL || id->srq != NULL) {
		errno = EINVAL;
		return -1;
	}
	if (!(attr->comp_mask & IBV_SRQ_INIT_ATTR_PD) || attr->pd == NULL) {
		attr->pd = id->pd != NULL ? id->pd : c->dev->pd;
		attr->comp_mask |= IBV_SRQ_INIT_ATTR_PD;
	}
	srq = ibv_create_srq_ex(id->verbs, attr);
	if (srq == NULL)
		return -1;
	id->srq = srq;
	return 0;
}

CM_EXPORT int
rdma_create_srq(struct rdma_cm_id *id, struct ibv_pd *pd,
		struct ibv_srq_init_attr *attr)
{
	struct ibv_srq_init_attr_ex ax;
	int ret;

	if (attr == NULL) {
		errno = EINVAL;
		return -1;
	}
	memset(&ax, 0, sizeof(ax));
	ax.srq_context = attr->srq_context;
	ax.attr = attr->attr;
	ax.srq_type = IBV_SRQT_BASIC;
	ax.pd = pd;
	ax.comp_mask = pd != NULL ? IBV_SRQ_INIT_ATTR_PD |
		IBV_SRQ_INIT_ATTR_TYPE : IBV_SRQ_INIT_ATTR_TYPE;
	ret = rdma_create_srq_ex(id, &ax);
	if (ret == 0)
		attr->attr = ax.attr;
	return ret;
}

CM_EXPORT void
rdma_destroy_srq(struct rdma_cm_id *id)
{
	if (id == NULL || id->srq == NULL)
		return;
	ibv_destroy_srq(id->srq);
	id->srq = NULL;
}

/*
 * Name resolution only, through getaddrinfo(3): IPv4 and IPv6 (literals
 * and names).  RAI_PASSIVE gives a source address to bind; otherwise the
 * node is the destination.  With AF_UNSPEC, IPv4 first, then IPv6: a
 * server given no node binds to 0.0.0.0 as with AF_INET only before (an
 * AF_INET6 listener takes no IPv4 requests, as the kernel's).
 */
CM_EXPORT int
rdma_getaddrinfo(const char *node, const char *service,
		 const struct rdma_addrinfo *hints, struct rdma_addrinfo **res)
{
	struct addrinfo h = { .ai_family = AF_INET, .ai_socktype = SOCK_STREAM };
	struct addrinfo *ai;
	struct rdma_addrinfo *r;
	bool passive = hints != NULL && (hints->ai_flags & RAI_PASSIVE);
	int family = hints != NULL ? hints->ai_family : AF_UNSPEC;
	int ret;

	if (res == NULL || (node == NULL && service == NULL)) {
		errno = EINVAL;
		return -1;
	}
	if (family != AF_UNSPEC && family != AF_INET && family != AF_INET6) {
		if (family == AF_IB)
			CM_LOG(NOTICE, "rdma_getaddrinfo: AF_IB needs an InfiniBand fabric: rocepmd devices are RoCE");
		errno = EAFNOSUPPORT;
		return -1;
	}
	if (passive)
		h.ai_flags |= AI_PASSIVE;
	if (hints != NULL && (hints->ai_flags & RAI_NUMERICHOST))
		h.ai_flags |= AI_NUMERICHOST;
	h.ai_family = family == AF_INET6 ? AF_INET6 : AF_INET;
	ret = getaddrinfo(node, service, &h, &ai);
	if (ret != 0 && family == AF_UNSPEC && node != NULL) {
		h.ai_family = AF_INET6;
		ret = getaddrinfo(node, service, &h, &ai);
	}
	if (ret != 0) {
		errno = ret == EAI_SYSTEM ? errno : ENOENT;
		return ret;
	}
	r = calloc(1, sizeof(*r));
	if (r == NULL) {
		freeaddrinfo(ai);
		errno = ENOMEM;
		return -1;
	}
	r->ai_flags = hints != NULL ? hints->ai_flags : 0;
	r->ai_family = ai->ai_family;
	r->ai_qp_type = hints != NULL && hints->ai_qp_type != 0 ?
		hints->ai_qp_type : IBV_QPT_RC;
	r->ai_port_space = hints != NULL && hints->ai_port_space != 0 ?
		hints->ai_port_space : (r->ai_qp_type == IBV_QPT_UD ?
					RDMA_PS_UDP : RDMA_PS_TCP);
	if (passive) {
		r->ai_src_addr = malloc(ai->ai_addrlen);
		if (r->ai_src_addr != NULL) {
			memcpy(r->ai_src_addr, ai->ai_addr, ai->ai_addrlen);
			r->ai_src_len = ai->ai_addrlen;
		}
	} else {
		r->ai_dst_addr = malloc(ai->ai_addrlen);
		if (r->ai_dst_addr != NULL) {
			memcpy(r->ai_dst_addr, ai->ai_addr, ai->ai_addrlen);
			r->ai_dst_len = ai->ai_addrlen;
		}
	}
	freeaddrinfo(ai);
	if (r->ai_src_addr == NULL && r->ai_dst_addr == NULL) {
		free(r);
		errno = ENOMEM;
		return -1;
	}
	*res = r;
	return 0;
}

CM_EXPORT void
rdma_freeaddrinfo(struct rdma_addrinfo *res)
{
	struct rdma_addrinfo *next;

	for (; res != NULL; res = next) {
		next = res->ai_next;
		free(res->ai_src_addr);
		free(res->ai_dst_addr);
		free(res->ai_src_canonname);
		free(res->ai_dst_canonname);
		free(res->ai_route);
		free(res->ai_connect);
		free(res);
	}
}
