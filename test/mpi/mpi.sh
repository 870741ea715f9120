#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# mpi.sh TRANSPORT [attach]: Open MPI (pml ucx) with one rank on each test
# host, TRANSPORT rc_verbs or ud_verbs on rocepmd0:1, running mpi_check
# (ping-pong up to 1 MiB, allreduce, alltoall, every result checked).
#
# With "attach" (issue 12): a rocepmd-testpmd --host on each test host owns
# the port, both hosts' sockets in one directory (ROCEPMD_RUN_DIR), and two
# ranks per host (four) attach to it (rocepmd-run --attach, which takes the
# host of its network namespace): ranks 0 and 2 in A, 1 and 3 in B, so the
# ping-pong crosses the hosts and the collectives also run between two
# processes sharing one device (its loopback).
#
# mpirun runs in host A through scripts/rocepmd-mpirun, the guide's
# command: the test hosts are named by their addresses (192.0.2.1 is local
# to A, so rank 0 starts there directly), --netns maps each address to its
# namespace (and configuration), and the script, as Open MPI's launcher
# agent, runs the orted command line there with `ip netns exec`, as ssh
# would on a real host; every rank runs through rocepmd-run.  UCX_TLS
# keeps UCX on TRANSPORT (rc_v: rc_verbs, ud_verbs only to wire up) plus
# `self` for a rank's messages to itself; the ranks' log must show
# TRANSPORT/rocepmd0:1 as the lane.

# shellcheck source=../verbs/lib.sh
. "$(dirname "$0")/../verbs/lib.sh"

tl=${1:?usage: mpi.sh rc_verbs|ud_verbs [attach]}
attach=${2:-}
iters=${RM_ITERS:-100}
dev=rocepmd0:1

case $tl in
rc_verbs) tls=rc_v,self ;;
ud_verbs) tls=ud_verbs,self ;;
*) rv_fail "TRANSPORT must be rc_verbs or ud_verbs, not '$tl'" ;;
esac

rv_need_env
rv_need_root
rv_need_prog mpirun openmpi-bin
rv_need_prog ucx_info ucx-utils
rv_need_prog nft nftables
[ -n "${RM_MPI_CHECK:-}" ] ||
	rv_skip "mpi_check not built (no MPI for meson: apt-get install libopenmpi-dev)"

rv_topology "mpi${tl:0:2}${attach:+a}"
nranks=2
if [ "$attach" = attach ]; then
	nranks=4
	app=${RP_TESTPMD:?RP_TESTPMD: rocepmd-testpmd, for the hosts}
	# shellcheck source=../service/host_lib.sh
	. "$RP_SRC_ROOT/test/service/host_lib.sh"
	host_start A
	host_start B
	base_a=$(counts A)
	base_b=$(counts B)
	export ROCEPMD_RUN_DIR=$rv_tmp
	how=(--attach --netns "$RV_IP_A=$RP_NS_A" --netns "$RV_IP_B=$RP_NS_B")
else
	how=(--netns "$RV_IP_A=$RP_NS_A,$RV_CFG_A"
	     --netns "$RV_IP_B=$RP_NS_B,$RV_CFG_B")
fi

export UCX_TLS=$tls UCX_NET_DEVICES=$dev UCX_LOG_LEVEL=info
rv_log "mpirun ($RP_NS_A): $RV_IP_A $RV_IP_B, UCX_TLS=$tls"
# --bind-to none: the two "hosts" are one machine, and each would bind its
# first rank to core 0; both ranks then busy-poll one CPU and a round trip
# costs scheduler slices (1 ms; 10 ms when the ranks also run the engines'
# passes, inline_us, instead of 20 us).
# --map-by node: rank r on A when r is even.
ip netns exec "$RP_NS_A" timeout -k 10 "$RV_TIMEOUT" \
	env ROCEPMD_RUN="$RP_RUN" "$RP_SRC_ROOT/scripts/rocepmd-mpirun" \
	"${how[@]}" --allow-run-as-root --bind-to none \
	--mca oob_tcp_if_include 192.0.2.0/24 \
	--mca pml ucx --mca btl self \
	-x UCX_TLS -x UCX_NET_DEVICES -x UCX_LOG_LEVEL \
	--host "$RV_IP_A:$((nranks / 2)),$RV_IP_B:$((nranks / 2))" \
	-np "$nranks" --map-by node -- "$RM_MPI_CHECK" "$iters" \
	>"$rv_tmp/mpirun.out" 2>"$rv_tmp/mpirun.err" &
rv_last_pid=$!
rv_pids+=("$rv_last_pid")
wait "$rv_last_pid"
status=$?
rv_forget "$rv_last_pid"

grep '^mpi_check:' "$rv_tmp/mpirun.out" | sed "s/^/$rv_prog: /"
if [ "$status" -ne 0 ]; then
	rv_show mpirun
	rv_fail "mpirun exited with status $status"
fi
for ((r = 0; r < nranks; r++)); do
	grep -q "^mpi_check: rank $r of $nranks " "$rv_tmp/mpirun.out" || {
		rv_show mpirun
		rv_fail "rank $r of $nranks did not start"
	}
done
grep -qxF "mpi_check: PASS ($nranks ranks)" "$rv_tmp/mpirun.out" || {
	rv_show mpirun
	rv_fail "mpi_check did not pass"
}
# Both ranks (two process IDs in UCX's "[host:pid:thread]" prefix) chose
# TRANSPORT for their peer.
n=$(cat "$rv_tmp/mpirun.out" "$rv_tmp/mpirun.err" |
	grep "ep_cfg\[[0-9]*\]: tag($tl/$dev)" |
	sed -n 's/^\[[^]]*\] \[[^:]*:\([0-9]*\) *:.*/\1/p' | sort -u | wc -l)
[ "$n" -eq "$nranks" ] || {
	rv_show mpirun
	rv_fail "UCX lanes: $n of the $nranks ranks show tag($tl/$dev)"
}
if [ "$attach" = attach ]; then
	# Every rank's objects gone from the hosts.
	wait_detached A
	wait_detached B
	[ "$(counts A)" = "$base_a" ] && [ "$(counts B)" = "$base_b" ] ||
		rv_fail "the hosts hold $(counts A) and $(counts B) after the job"
fi
rv_log "PASS: Open MPI (pml ucx, $tl), $nranks ranks between $RP_NS_A and $RP_NS_B${attach:+, attached to hosts}"
