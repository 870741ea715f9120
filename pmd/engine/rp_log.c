/* SPDX-License-Identifier: BSD-3-Clause */
/* Log types: --log-level='rocepmd.*:debug' selects them all. */

#include <rte_log.h>

#include "rp_log.h"

RTE_LOG_REGISTER_DEFAULT(rp_logtype, NOTICE);
RTE_LOG_REGISTER_SUFFIX(rp_logtype_cfg, cfg, NOTICE);
RTE_LOG_REGISTER_SUFFIX(rp_logtype_port, port, NOTICE);
RTE_LOG_REGISTER_SUFFIX(rp_logtype_req, req, NOTICE);
RTE_LOG_REGISTER_SUFFIX(rp_logtype_resp, resp, NOTICE);
RTE_LOG_REGISTER_SUFFIX(rp_logtype_comp, comp, NOTICE);
RTE_LOG_REGISTER_SUFFIX(rp_logtype_cq, cq, NOTICE);
