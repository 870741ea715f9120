#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# link_flap.sh: the link of two rocepmd devices goes down and up (issue 9).
# One network namespace holds both ends of a veth, each the af_packet port
# of one device of one process (test/engine/rp_async_test link_flap), which
# sets rocepmd0's end down and up itself (ip link, RP_LF_IF) and checks
# IBV_EVENT_PORT_ERR / PORT_ACTIVE on both devices, ibv_query_port, and
# the completions of the work posted meanwhile.
#
#   [rv-lf-<pid>]  rv<pid>a (rocepmd0, 192.0.2.1) === rv<pid>b (rocepmd1,
#                  192.0.2.2); no addresses on the kernel side.

. "$(dirname "$0")/lib.sh"

rv_need_env
rv_need_root
[ -x "${RP_ASYNC_TEST:-}" ] || rv_fail "RP_ASYNC_TEST is not set"

ns=rv-lf-$$
ifa=rvlf$$a
ifb=rvlf$$b

lf_down() {
	ip netns delete "$ns" 2>/dev/null
}
trap 'rc=$?; lf_down; (exit $rc); rv_cleanup' EXIT

ip netns add "$ns" || rv_fail "ip netns add $ns"
ip -n "$ns" link add "$ifa" numrxqueues 1 numtxqueues 1 type veth \
	peer name "$ifb" numrxqueues 1 numtxqueues 1 ||
	rv_fail "ip link add veth"
for i in "$ifa" "$ifb"; do
	ip -n "$ns" link set "$i" up || rv_fail "ip link set $i up"
done

cfg=$rv_tmp/link_flap.ini
cat >"$cfg" <<EOC
[eal]
args = --no-huge -m 256 --no-pci --no-shconf --file-prefix=rp_async_link_flap

[engine]
main_lcore = 0
lcores = 1
idle = yield
idle_us = 50

[port0]
device = net_af_packet0,iface=$ifa,qpairs=1
ipv4 = 192.0.2.1/24
mtu = 1024
lcore = 1
region_mb = 32

[port1]
device = net_af_packet1,iface=$ifb,qpairs=1
ipv4 = 192.0.2.2/24
mtu = 1024
lcore = 1
region_mb = 32
EOC

rv_log "namespace $ns: $ifa (rocepmd0) === $ifb (rocepmd1)"
RP_LF_IF=$ifa ip netns exec "$ns" timeout -k 10 "$RV_TIMEOUT" \
	"$RP_RUN" --config "$cfg" -- "$RP_ASYNC_TEST" link_flap \
	>"$rv_tmp/link_flap.out" 2>"$rv_tmp/link_flap.err"
st=$?
if [ "$st" -ne 0 ]; then
	rv_show link_flap
	rv_fail "rp_async_test link_flap exited $st"
fi
sed 's/^/  /' "$rv_tmp/link_flap.out"
rv_log "PASS"
