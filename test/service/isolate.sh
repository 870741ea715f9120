#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# isolate.sh APP CASE [PROGRAM]: what one attached process may not learn of
# or do to another's objects on the same host (issue 24).  The two test
# hosts of service.sh (network namespaces, test/verbs/lib.sh).
#
#   async-owner  PROGRAM is rp_async_owner: on host B, a watcher notes its
#                arena's event ring; another process's QP (on an SRQ) goes
#                to ERR and gets its IBV_EVENT_QP_LAST_WQE_REACHED; then
#                the watcher's own QP does: the watcher's ring holds its
#                own event and device events only, never the other's
#   host-region  PROGRAM is rp_async_owner: the device region an attached
#                process maps is the control block alone, with no room for
#                the host's own objects (they are in the host's arena 0,
#                whose fd goes to no one)
#   forged-mad   PROGRAM is rp_forge_mad: an rping pair (server attached to
#                host B, client to host A); a capture on B gives the
#                connection's communication IDs from the client's RTU; an
#                attached process on B sends from QP 1, through a GSI agent
#                of its own, a DREQ, a REJ and a DREP naming the server's
#                ID, and a DREQ with an ID of its own prefix: the host
#                refuses the three forged ones (IBV_WC_LOC_QP_OP_ERR,
#                counter gsi_mads_refused), the peer's CM ignores the
#                fourth (not the connection's ID), and every ping of the
#                pair passes, data checked.  af_packet ports: the capture
#                sees what an AF_XDP socket would take first.
app=${1:?usage: $0 APP CASE [PROGRAM]}
case=${2:?usage: $0 APP CASE [PROGRAM]}
prog=${3:+$(readlink -f "$3")}
# shellcheck source=../verbs/lib.sh
. "$RP_SRC_ROOT/test/verbs/lib.sh"

rv_need_env
rv_need_root
[ "$case" = forged-mad ] && rv_need_prog rping rdmacm-utils
[ "$case" = forged-mad ] && RV_PORT=af_packet

case $case in
async-owner) rv_topology isoasync ;;
host-region) rv_topology isoregion ;;
*) rv_topology isomad ;;
esac
# shellcheck source=host_lib.sh
. "$RP_SRC_ROOT/test/service/host_lib.sh"

host_start A
host_start B
host_baseline

case $case in
async-owner)
	go=$rv_tmp/async.go
	sv_bg watch B -- "$prog" watch "$go"
	w=$rv_last_pid
	rv_wait_output watch "ready:" "$w"
	sv_fg fatal B -- "$prog" fatal
	[ "$rv_status" -eq 0 ] || { rv_show fatal; rv_fail "the other process did not get its own event"; }
	touch "$go"
	wait "$w"
	wrc=$?
	rv_forget "$w"
	rv_show fatal
	rv_show watch
	[ "$wrc" -eq 0 ] || rv_fail "the watcher's event ring: exit $wrc"
	grep -q "none of another process" "$rv_tmp/watch.out" ||
		rv_fail "the watcher did not check its ring"
	check_clean
	;;
host-region)
	sv_fg region B -- "$prog" region
	rv_show region
	[ "$rv_status" -eq 0 ] || rv_fail "the device region holds more than the control block"
	check_clean
	;;
forged-mad)
	# The RTU the client sends (IBTA 12.6.9): its Local Communication
	# ID is the client's, its Remote the server's.
	ip netns exec "$RP_NS_B" timeout 120 python3 - "$RP_VETH_B" \
		>"$rv_tmp/ids.out" 2>"$rv_tmp/ids.err" <<'PY' &
import socket, struct, sys
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(3))
s.bind((sys.argv[1], 0))
print("capturing", flush=True)
while True:
    f = s.recv(65536)
    if len(f) < 14 + 20 + 8 + 12 + 8 + 32 or f[12:14] != b"\x08\x00":
        continue
    ihl = (f[14] & 15) * 4
    if f[23] != 17:
        continue
    u = 14 + ihl
    if struct.unpack_from(">H", f, u + 2)[0] != 4791:
        continue
    bth = u + 8
    if struct.unpack_from(">I", f, bth + 4)[0] & 0xffffff != 1:
        continue
    mad = bth + 12 + 8
    if f[mad + 1] != 7 or struct.unpack_from(">H", f, mad + 16)[0] != 0x14:
        continue
    local, remote = struct.unpack_from(">II", f, mad + 24)
    print("ids 0x%08x 0x%08x" % (remote, local), flush=True)
    break
PY
	cap=$!
	rv_pids+=("$cap")
	rv_wait_output ids "capturing" "$cap"
	sv_bg server B -- rping -s -a "$RV_IP_B" -p 18630 -C 4000 -S 256 -v -V
	srv=$rv_last_pid
	for ((i = 0; i < 100; i++)); do
		[ "$(tel B /rocepmd/objects,0 | python3 -c \
			'import json, sys; print(json.load(sys.stdin)["qps"])')" -ge 1 ] && break
		sleep 0.1
	done
	sleep 0.5
	sv_bg client A -- rping -c -a "$RV_IP_B" -p 18630 -C 4000 -S 256 -v -V
	cli=$rv_last_pid
	rv_wait_output ids "ids " "$cap"
	wait "$cap"
	rv_forget "$cap"
	read -r _ victim peer < <(grep "^ids " "$rv_tmp/ids.out")
	rv_log "connection: server's ID $victim, client's $peer"
	# The CMs' own MADs (REQ, REP, RTU) all went.
	refused0=$(host_stat B gsi_mads_refused)
	[ "$refused0" -eq 0 ] || rv_fail "host B refused $refused0 MADs of the rping pair's CMs"
	kill -0 "$cli" 2>/dev/null && kill -0 "$srv" 2>/dev/null ||
		rv_fail "the rping pair ended before the forged MADs went: nothing would be tested (raise -C)"
	sv_fg forge B -- "$prog" "$RV_IP_A" "$victim" "$peer"
	rv_show forge
	[ "$rv_status" -eq 0 ] || rv_fail "rp_forge_mad failed ($rv_status)"
	wait "$cli"
	crc=$?
	rv_forget "$cli"
	wait "$srv"
	src=$?
	rv_forget "$srv"
	[ "$crc" -eq 0 ] && [ "$src" -eq 0 ] ||
		{ rv_show client; rv_show server; rv_fail "the rping pair failed beside the forger: client $crc, server $src"; }
	for m in DREQ REJ DREP; do
		grep -q "^forged $m: local QP operation error" "$rv_tmp/forge.out" ||
			rv_fail "the host sent a forged $m (or completed it otherwise)"
	done
	grep -q "^own-prefix DREQ: success" "$rv_tmp/forge.out" ||
		rv_fail "a DREQ with the agent's own prefix was not sent"
	refused=$(host_stat B gsi_mads_refused)
	[ $((refused - refused0)) -ge 3 ] ||
		rv_fail "host B counted $((refused - refused0)) refused MADs, not 3"
	check_clean
	;;
*)
	rv_fail "unknown case '$case'"
	;;
esac
rv_log "PASS: $case"
