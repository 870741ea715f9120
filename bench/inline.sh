#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# bench/inline.sh: polling on a machine with fewer CPUs than polling
# threads (issue 14's last goal).  Two hosts in network namespaces joined
# by a veth pair, af_packet ports (and XDP for one row), rocepmd-testpmd
# --server in B and --client in A.  The yardstick is the raw DPDK UDP
# ping-pong between the same two ports (--raw at both ends), measured in
# the inline invocation before the engines start, with each host on one
# CPU: in the dedicated placement the two raw programs would share CPU 0
# and measure the scheduler.  8 B RC SEND ping-pong, half round trip p50
# (and p99):
#
#   dedicated   each host: the program polls on CPU 0, its engine lcore
#               (idle = sleep) on CPU 1 -- four threads on two CPUs
#   inline      each host on one CPU (A on CPU 0, B on CPU 1), inline_us
#               set: the polling thread runs the engine's passes
#   events      dedicated placement, the program on completion events
#   inline XDP  the inline placement with the ports bound to the veth ends
#               (netdev = IFACE: af_xdp and rocepmd's XDP program), against
#               the same af_packet raw figure (DPDK's af_xdp PMD cannot run
#               the raw mode and then the engine in one process)
#   kernel UDP  the kernel's UDP between the same veth ends, spinning on
#               non-blocking sockets (sockperf ping-pong --nonblocked, 14 B:
#               sockperf's smallest),
#               each host on one CPU: the path the kernel's rxe takes
#
# The veth's MTU is 3000 (af_xdp's native mode on a veth), the IB MTU 1024.
#
# A benchmark that prints figures, not a test: it exits 0 whatever they
# are.  Environment: BENCH_ITERS (20000), BENCH_INLINE_US (100),
# BENCH_TIMEOUT (120 s per invocation).

. "$(dirname "$0")/lib.sh"

iters=${BENCH_ITERS:-20000}
inl=${BENCH_INLINE_US:-100}
kind=af_packet
export RP_VETH_MTU=3000
bench_topology rpi
[ "$(nproc)" -ge 2 ] || die "needs two CPUs"

# cfg SIDE PLACEMENT: host SIDE's configuration; PLACEMENT "dedicated"
# (program CPU 0, engine CPU 1) or "one" (both on CPU 0 for A, 1 for B);
# the port as $kind (af_packet, or xdp: netdev = the veth end).
cfg() {
	local s=$1 place=$2 dev=$RP_VETH_A ip=192.0.2.1/24 cpu=0 map port

	[ "$s" = b ] && dev=$RP_VETH_B ip=192.0.2.2/24 cpu=1
	map="0@0,1@1"
	[ "$place" = one ] && map="0@$cpu,1@$cpu"
	port="device = net_af_packet0,iface=$dev,qpairs=1
ipv4 = $ip"
	[ "$kind" = xdp ] && port="netdev = $dev"
	cat >"$tmp/$s.ini" <<-EOF
	[eal]
	args = --no-huge -m 512 --no-pci --lcores $map --file-prefix=rpi-$s-$$
	[engine]
	main_lcore = 0
	lcores = 1
	idle = sleep
	[port0]
	$port
	mtu = 1024
	EOF
}

# run PLACEMENT WAIT [TESTPMD ARGS...]: one server/client invocation;
# the client's RESULT lines.
run() {
	local place=$1 wait=$2

	shift 2
	cfg a "$place"
	cfg b "$place"
	ip netns exec "$RP_NS_B" timeout "$TMO" "$app" -- --config "$tmp/b.ini" \
		--server "$@" >"$tmp/server.out" 2>&1 &
	srv=$!
	ip netns exec "$RP_NS_A" timeout "$TMO" "$app" -- --config "$tmp/a.ini" \
		--client 192.0.2.2 --mode send_lat --size 8 \
		--iters "$iters" --wait "$wait" "$@" 2>"$tmp/client.err" |
		grep '^RESULT' ||
		{ echo "inline.sh: $kind $place/$wait failed:"; grep -v TELEMETRY "$tmp/client.err" | tail -5; } >&2
	stop_server
}

# Fields: $10 lat_p50, $11 lat_p99 (us, one way).
row() {
	local name=$1 res=$2

	awk -v n="$name" -v r50="$raw" '
	$2 == "send_lat" { v50 = $10; v99 = $11 }
	END { printf "%-34s %10s %10s %10s %8.2f\n", n, v50, v99, r50,
		(r50 > 0 ? v50 / r50 : 0) }' "$res"
}

run one poll --raw --inline-us "$inl" >"$tmp/inline.res"
raw=$(awk '$2 == "raw_pp" { print $10 }' "$tmp/inline.res")
run dedicated poll >"$tmp/dedicated.res"
run dedicated event >"$tmp/event.res"
kind=xdp
run one poll --inline-us "$inl" >"$tmp/inline-xdp.res"
echo "inline.sh: two hosts on a veth (MTU 3000), 8 B RC SEND ping-pong, $iters iterations, $(nproc) CPUs"
printf "%-34s %10s %10s %10s %8s\n" "placement" "p50 us" "p99 us" "raw p50" "p50/raw"
row "dedicated lcore, polling" "$tmp/dedicated.res"
row "inline (inline_us $inl), polling" "$tmp/inline.res"
row "dedicated lcore, events" "$tmp/event.res"
row "inline, polling, XDP (netdev)" "$tmp/inline-xdp.res"
if command -v sockperf >/dev/null; then
	ip netns exec "$RP_NS_B" taskset -c 1 timeout "$TMO" sockperf sr \
		-i 192.0.2.2 -p 18599 --nonblocked >/dev/null 2>&1 &
	srv=$!
	sleep 1
	ip netns exec "$RP_NS_A" taskset -c 0 timeout "$TMO" sockperf pp \
		-i 192.0.2.2 -p 18599 -m 14 -t 3 --nonblocked >"$tmp/udp.out" 2>&1
	stop_server
	awk -v r50="$raw" '
	/percentile 50.000 =/ { v50 = $NF }
	/percentile 99.000 =/ { v99 = $NF }
	END { printf "%-34s %10s %10s %10s %8.2f\n",
		"kernel UDP, spinning (sockperf)", v50, v99, r50,
		(r50 > 0 ? v50 / r50 : 0) }' "$tmp/udp.out"
else
	echo "(no sockperf: apt-get install sockperf for the kernel UDP row)"
fi
echo "(goal: inline polling p50 <= 1.5 x raw; half round trips)"
exit 0
