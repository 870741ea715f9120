#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# tm.sh APP RP_TM_TEST CONFIG: an attached tag-matching program killed
# (SIGKILL) mid-transfer.  A host (rocepmd-testpmd --host, in a namespace of
# its own) serves the two devices of CONFIG, back to back over memif;
# test/tm/rp_tm_test runs attached on both, its rendezvous stream (a
# TM-SRQ on rocepmd0, tagged buffers and TM operations in its arena, the
# receiver's RDMA READs of the sender's memory, FINs) made long with
# RT_TM_STREAM, and is killed once the host has counted rendezvous.  The
# host must destroy the TM-SRQ with rendezvous in flight and every other
# object of the process (both devices' objects back to the count before),
# and serve the next runs: the same stream and the eager case, checked.
app=${1:?usage: $0 APP RP_TM_TEST CONFIG}
tm_test=${2:?usage: $0 APP RP_TM_TEST CONFIG}
config=${3:?usage: $0 APP RP_TM_TEST CONFIG}
# shellcheck source=../verbs/lib.sh
. "$RP_SRC_ROOT/test/verbs/lib.sh"

rv_need_env
rv_need_root

# One namespace for the host: its memif sockets are abstract, so they are
# the namespace's own.
rv_topology svtm
RV_CFG_A=$config
# shellcheck source=host_lib.sh
. "$RP_SRC_ROOT/test/service/host_lib.sh"
host_start A

objs() {
	host_objs A "$1"
}

base0=$(objs 0)
base1=$(objs 1)
check_back() {
	wait_detached A
	[ "$(objs 0)" = "$base0" ] ||
		rv_fail "rocepmd0 holds $(objs 0) $1, not $base0 as before"
	[ "$(objs 1)" = "$base1" ] ||
		rv_fail "rocepmd1 holds $(objs 1) $1, not $base1 as before"
}

r0=$(host_stat A tm_rendezvous)
sv_bg stream A -- env RT_TM_STREAM=100000000 RP_TEST_TIMEOUT=600 \
	"$tm_test" rndv_stream
pid=$rv_last_pid
# Mid-transfer: rendezvous counted and still going.
for ((i = 0; i < 200; i++)); do
	r=$(host_stat A tm_rendezvous)
	[ "$r" -gt $((r0 + 200)) ] && break
	kill -0 "$pid" 2>/dev/null || { rv_show stream; rv_fail "rp_tm_test ended before the kill"; }
	sleep 0.1
done
[ "$r" -gt $((r0 + 200)) ] || { rv_show stream; rv_fail "no rendezvous stream under way ($r0 -> $r)"; }
victim=$(sv_prog_pid "$pid")
ps -o pid=,comm= -p "$victim" | grep -q rp_tm_test ||
	rv_fail "cannot find the attached rp_tm_test under PID $pid"
kill -KILL "$victim"
wait "$pid"
rv_forget "$pid"
rv_log "killed after $((r - r0)) rendezvous"
check_back "after the SIGKILL"
grep -q "detached: destroying its" "$rv_tmp/hostA.err" ||
	rv_fail "the host did not log the clean-up"

# The host serves on: the stream to its end, and the eager case.
for c in rndv_stream eager; do
	sv_fg "$c" A -- "$tm_test" "$c"
	[ "$rv_status" -eq 0 ] || { rv_show "$c"; rv_fail "rp_tm_test $c after the kill: status $rv_status"; }
done
check_back "after the next runs"
rv_log "PASS: a tag-matching process killed mid-stream, the host clean and serving"
