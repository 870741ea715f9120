#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# ucx_info.sh: UCX finds the rocepmd device as it finds a kernel one, with
# nothing created by hand: `ucx_info -d` through rocepmd-run in a test
# host lists memory domain rocepmd0 with transports rc_verbs and ud_verbs
# on device rocepmd0:1.  UCX skips a verbs device without a character
# device /dev/infiniband/<dev_name> (uct_ib_device_is_accessible()): the
# shim answers stat() and access() for that path (shim_devnode.c).

# shellcheck source=../verbs/lib.sh
. "$(dirname "$0")/../verbs/lib.sh"

rv_need_env
rv_need_root
rv_need_prog ucx_info ucx-utils
rv_need_prog nft nftables

rv_topology ucxinfo
rv_fg info "$RP_NS_A" "$RV_CFG_A" -- ucx_info -d
[ "$rv_status" -eq 0 ] || { rv_show info; rv_fail "ucx_info -d exited with status $rv_status"; }

# "# Memory domain: X", "#      Transport: T", "#         Device: D"
found=$(awk '$2 == "Memory" && $3 == "domain:" { md = $4 }
	     $2 == "Transport:" { tl = $3 }
	     $2 == "Device:" { print md "/" tl "/" $3 }' "$rv_tmp/info.out")
rv_log "ucx_info -d: $(echo "$found" | tr '\n' ' ')"
for want in rocepmd0/rc_verbs/rocepmd0:1 rocepmd0/ud_verbs/rocepmd0:1; do
	echo "$found" | grep -qxF "$want" || {
		rv_show info
		rv_fail "ucx_info -d does not list $want (memory domain/transport/device)"
	}
done
[ ! -e /dev/infiniband/rocepmd0 ] ||
	rv_fail "/dev/infiniband/rocepmd0 exists: the test must not depend on one"
rv_log "PASS: UCX lists rocepmd0 (rc_verbs, ud_verbs)"
