#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# bench/pingpong.sh: polling versus events between two hosts (issue 3).  A
# benchmark that prints figures, not a test: it exits 0 whatever the
# figures are.
#
# rocepmd-testpmd send_lat (RC SEND ping-pong, what bench/rp_pingpong.c
# measured) between two network namespaces, --server in B and --client in
# A, for every completion mode under every engine idle policy (both
# engines), and the kernel's UDP on the same veth (qperf udp_lat, what
# bench/udp_pingpong.c measured) as the baseline of the same run.
#
# Needs root, iproute2, nftables, qperf and a built tree.
#
# Environment:
#   BENCH_ITERS     measured round trips per run    (20000)
#   BENCH_WARMUP    warm-up round trips per run     (1000)
#   BENCH_SIZE      message size in bytes           (64)
#   BENCH_IDLES     idle policies                   ("busy adaptive sleep")
#   BENCH_MODES     completion modes                ("poll event epoll")
#   BENCH_TIMEOUT   seconds any one program may run (120)
#
# The topology is its own: namespaces rpb<pid>-a/-b, veth rpb<pid>a/b;
# the EXIT trap stops what the script started (by PID) and removes it.

set -uo pipefail

src=$(cd "$(dirname "$0")/.." && pwd)
app=$src/build/app/rocepmd-testpmd/rocepmd-testpmd
TMO=${BENCH_TIMEOUT:-120}
tag=$(($$ % 1000000))
export RP_NS_A="rpb$tag-a" RP_NS_B="rpb$tag-b"
export RP_VETH_A="rpb${tag}a" RP_VETH_B="rpb${tag}b"
srv=
tmp=

die() { echo "pingpong.sh: ERROR: $*" >&2; exit 1; }
stop_server() {
	[ -n "$srv" ] || return 0
	kill -TERM "$srv" 2>/dev/null
	wait "$srv" 2>/dev/null
	srv=
}
cleanup() {
	stop_server
	"$src/scripts/netns-topology" down >/dev/null 2>&1
	[ -n "$tmp" ] && rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

[ "$(id -u)" -eq 0 ] || die "needs root (network namespaces)"
[ -x "$app" ] || die "no $app: scripts/rocepmd-build first"
command -v qperf >/dev/null || die "qperf not found (scripts/setup.sh)"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/rp-bench-XXXXXX") || die "mktemp"
"$src/scripts/netns-topology" up >"$tmp/topology.log" 2>&1 ||
	die "netns-topology up failed: $(cat "$tmp/topology.log")"
for s in a b; do
	sed "s/iface=rp-veth-$s\([,[:space:]]\|$\)/iface=rpb$tag$s\1/" \
		"$src/config/netns-$s.ini" >"$tmp/$s.ini"
done

for idle in ${BENCH_IDLES:-busy adaptive sleep}; do
	ip netns exec "$RP_NS_B" timeout "$TMO" "$app" -- --config "$tmp/b.ini" \
		--idle "$idle" --server >"$tmp/server.out" 2>&1 &
	srv=$!
	{
		echo "set iters ${BENCH_ITERS:-20000}"
		echo "set warmup ${BENCH_WARMUP:-1000}"
		echo "set size ${BENCH_SIZE:-64}"
		for m in ${BENCH_MODES:-poll event epoll}; do
			echo "set wait $m"
			echo "start send_lat"
		done
	} >"$tmp/cmds"
	ip netns exec "$RP_NS_A" timeout "$TMO" "$app" -- --config "$tmp/a.ini" \
		--idle "$idle" --client 192.0.2.2 --cmdline-file "$tmp/cmds" \
		>>"$tmp/table" 2>"$tmp/client.err" ||
		echo "idle $idle: $(tail -1 "$tmp/client.err")" >&2
	stop_server
done
grep -m1 '^#' "$tmp/table"
grep '^RESULT' "$tmp/table"

echo "kernel UDP on the same veth (qperf udp_lat, one way):"
ip netns exec "$RP_NS_B" timeout "$TMO" qperf >/dev/null 2>&1 &
srv=$!
sleep 1
ip netns exec "$RP_NS_A" timeout "$TMO" qperf 192.0.2.2 \
	-m "${BENCH_SIZE:-64}" -t 5 udp_lat 2>&1 | sed 's/^/  /'
stop_server
exit 0
