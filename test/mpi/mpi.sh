#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# mpi.sh TRANSPORT [attach]: Open MPI (pml ucx) with one rank on each test
# host, TRANSPORT rc_verbs or ud_verbs on rocepmd0:1, running mpi_check
# (ping-pong up to 1 MiB, allreduce, alltoall, every result checked).
#
# With "attach" (issue 12): a rocepmd-testpmd --host on each test host owns
# the port, and two ranks per host (four) attach to it
# (rocepmd-run --attach): ranks 0 and 2 in A, 1 and 3 in B, so the
# ping-pong crosses the hosts and the collectives also run between two
# processes sharing one device (its loopback).
#
# mpirun runs in host A; the test hosts are named by their addresses
# (192.0.2.1 is local to A, so rank 0 starts there directly).  Open MPI's
# rsh launcher reaches host B through a small agent (--mca plm_rsh_agent)
# that maps the address to B's namespace and runs the orted command line
# there with `ip netns exec`, as ssh would on a real host.  Each rank runs
# through rocepmd-run with its host's configuration (MPMD: one
# application context per host).  UCX_TLS keeps UCX on TRANSPORT (rc_v:
# rc_verbs, ud_verbs only to wire up) plus `self` for a rank's messages to
# itself; the ranks' log must show TRANSPORT/rocepmd0:1 as the lane.

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
	run_a=("$RP_RUN" --attach="$SOCK_A" --)
	run_b=("$RP_RUN" --attach="$SOCK_B" --)
else
	run_a=("$RP_RUN" --config "$RV_CFG_A" --)
	run_b=("$RP_RUN" --config "$RV_CFG_B" --)
fi

agent=$rv_tmp/netns-agent
cat >"$agent" <<AGENT
#!/bin/bash
# plm_rsh_agent: HOST COMMAND..., run as ssh would on HOST
host=\$1
shift
case \$host in
$RV_IP_A) ns=$RP_NS_A ;;
$RV_IP_B) ns=$RP_NS_B ;;
*) echo "netns-agent: unknown host '\$host'" >&2; exit 255 ;;
esac
exec ip netns exec "\$ns" /bin/sh -c "\$*"
AGENT
chmod +x "$agent"

# One application context per rank, alternating hosts: rank r on A when
# r is even.
ctx=()
for ((r = 0; r < nranks; r++)); do
	[ "$r" -eq 0 ] || ctx+=(:)
	if [ $((r % 2)) -eq 0 ]; then
		ctx+=(-np 1 --host "$RV_IP_A:$nranks" "${run_a[@]}")
	else
		ctx+=(-np 1 --host "$RV_IP_B:$nranks" "${run_b[@]}")
	fi
	ctx+=("$RM_MPI_CHECK" "$iters")
done

export UCX_TLS=$tls UCX_NET_DEVICES=$dev UCX_LOG_LEVEL=info
rv_log "mpirun ($RP_NS_A): $RV_IP_A $RV_IP_B, UCX_TLS=$tls"
# --bind-to none: the two "hosts" are one machine, and each would bind its
# first rank to core 0; both ranks then busy-poll one CPU and a round trip
# costs scheduler slices (1 ms; 10 ms when the ranks also run the engines'
# passes, inline_us, instead of 20 us).
ip netns exec "$RP_NS_A" timeout -k 10 "$RV_TIMEOUT" \
	mpirun --allow-run-as-root --bind-to none \
	--mca plm_rsh_agent "$agent" \
	--mca oob_tcp_if_include 192.0.2.0/24 \
	--mca pml ucx --mca btl self \
	-x UCX_TLS -x UCX_NET_DEVICES -x UCX_LOG_LEVEL \
	"${ctx[@]}" >"$rv_tmp/mpirun.out" 2>"$rv_tmp/mpirun.err" &
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
