#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# bench/xdp.sh: a port bound to its veth with XDP steering (netdev = IFACE:
# af_xdp and bpf/rp_xdp.o) against af_packet on the same veth, and the
# kernel's TCP on that veth with and without RoCE load (guides/xdp).  A
# benchmark that prints figures, not a test: it exits 0 whatever they are.
#
# rocepmd-testpmd between two network namespaces (--server in B, --client
# in A), veth MTU 3000 (XDP's limit on a veth), IB MTU 1024, engines
# idle = sleep, programs on events: send_lat 64 B (one-way p50) and
# send_bw 64 B (messages/s) for each kind of port, as ratios in one run;
# then qperf tcp_bw alone and while a send_bw of BENCH_LOAD_S seconds runs
# over the XDP ports.  The nftables rule that drops RoCEv2 for the kernel
# stays for both kinds (af_packet needs it; XDP keeps RoCEv2 from the
# kernel anyway).
#
# Environment: BENCH_ITERS (20000), BENCH_DURATION (3 s), BENCH_TIMEOUT
# (120 s a program).  Needs root, qperf and a built tree.

. "$(dirname "$0")/lib.sh"

iters=${BENCH_ITERS:-20000}
dur=${BENCH_DURATION:-3}
export RP_VETH_MTU=3000
bench_topology rpx
command -v qperf >/dev/null || die "qperf not found (scripts/setup.sh)"

# cfg KIND SIDE: the port as netdev (XDP) or as af_packet on the same veth.
cfg() {
	local kind=$1 s=$2 dev ip

	dev=$RP_VETH_A ip=192.0.2.1/24
	[ "$s" = b ] && dev=$RP_VETH_B ip=192.0.2.2/24
	{
		echo "[eal]"
		echo "args = --no-huge -m 512 --no-pci --file-prefix=rpx-$kind-$s-$$"
		echo "[engine]"
		# A's engine polls on CPU 1, B's on CPU 0: on two CPUs, two
		# engines on one would measure their turns at it.
		if [ "$s" = a ]; then
			echo "main_lcore = 0"
			echo "lcores = 1"
		else
			echo "main_lcore = 1"
			echo "lcores = 0"
		fi
		echo "idle = sleep"
		echo "[port0]"
		# both kinds at one IB MTU (auto would give af_xdp 2048)
		echo "mtu = 1024"
		if [ "$kind" = xdp ]; then
			echo "netdev = $dev"
		else
			echo "device = net_af_packet0,iface=$dev,qpairs=1"
			echo "ipv4 = $ip"
		fi
	} >"$tmp/$kind-$s.ini"
}

# run KIND CMD...: the server in B, the client's commands from A; RESULT lines.
run() {
	local kind=$1

	shift
	cfg "$kind" a
	cfg "$kind" b
	ip netns exec "$RP_NS_B" timeout "$TMO" "$app" -- --config "$tmp/$kind-b.ini" \
		--server >"$tmp/server.out" 2>&1 &
	srv=$!
	printf '%s\n' "$@" >"$tmp/cmds"
	ip netns exec "$RP_NS_A" timeout "$TMO" "$app" -- --config "$tmp/$kind-a.ini" \
		--client 192.0.2.2 --cmdline-file "$tmp/cmds" 2>"$tmp/client.err" |
		grep '^RESULT' || echo "xdp.sh: $kind: $(tail -1 "$tmp/client.err")" >&2
	stop_server
}

cmds=("set wait event" "set size 64" "set iters $iters" "start send_lat"
	"set duration $dur" "start send_bw")
for kind in xdp afp; do
	run "$kind" "${cmds[@]}" >"$tmp/$kind.res"
done
# Fields: $10 lat_p50 (us), $13 msg/s.
lat_x=$(awk '$2 == "send_lat" { print $10 }' "$tmp/xdp.res")
lat_p=$(awk '$2 == "send_lat" { print $10 }' "$tmp/afp.res")
bw_x=$(awk '$2 == "send_bw" { print $13 }' "$tmp/xdp.res")
bw_p=$(awk '$2 == "send_bw" { print $13 }' "$tmp/afp.res")
echo "xdp.sh: veth MTU 3000, IB MTU 1024, engines idle = sleep, programs on events"
printf "%-28s %12s %12s %8s\n" figure af_xdp+XDP af_packet ratio
awk -v a="$lat_x" -v b="$lat_p" 'BEGIN { printf "%-28s %12s %12s %8.3f\n", "send_lat 64 B p50 (us)", a, b, (b > 0 ? a / b : 0) }'
awk -v a="$bw_x" -v b="$bw_p" 'BEGIN { printf "%-28s %12s %12s %8.3f\n", "send_bw 64 B (msg/s)", a, b, (b > 0 ? a / b : 0) }'

# The kernel's TCP on the same veth, alone and beside RoCE over XDP.
ip netns exec "$RP_NS_B" timeout "$TMO" qperf >/dev/null 2>&1 &
qsrv=$!
sleep 1
tcp_alone=$(ip netns exec "$RP_NS_A" qperf 192.0.2.2 -t "$dur" tcp_bw 2>&1 |
	sed -n 's/.*bw *= *//p')
( run xdp "set wait event" "set size 4096" "set duration $((dur + 2))" \
	"start send_bw" >"$tmp/load.res" ) &
load=$!
sleep 1.5
tcp_load=$(ip netns exec "$RP_NS_A" qperf 192.0.2.2 -t "$dur" tcp_bw 2>&1 |
	sed -n 's/.*bw *= *//p')
wait "$load"
kill -TERM "$qsrv" 2>/dev/null
wait "$qsrv" 2>/dev/null
echo "kernel TCP on the same veth (qperf tcp_bw): alone $tcp_alone, beside RoCE send_bw 4 KiB over XDP $tcp_load"
echo "  (RoCE during it: $(awk '$2 == "send_bw" { print $14 " Gbit/s" }' "$tmp/load.res"))"
exit 0
