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

. "$(dirname "$0")/lib.sh"

bench_topology rpb
command -v qperf >/dev/null || die "qperf not found (scripts/setup.sh)"
for s in a b; do
	sed "s/iface=rp-veth-$s\([,[:space:]]\|$\)/iface=${RP_VETH_A%a}$s\1/" \
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
