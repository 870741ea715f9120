#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# bench/hosts_wire.sh: issue 28's goals between the two hosts, each a
# ratio to a raw yardstick measured the fair way in the same invocation.
# Two hosts in network namespaces joined by a veth pair (MTU 3000, IB MTU
# 1024 or BENCH_MTU), rocepmd-testpmd --server in B and --client in A, host A on CPU 0
# and host B on CPU 1 (program and engine lcore of a host on its CPU).
#
#   goal                            rocepmd                yardstick
#   64 B RC SEND rate >= 0.8        send_bw msg/s          raw flood of
#   64 KiB WRITE, READ >= 0.8       write_bw, read_bw      frames shaped as
#                                   Gbit/s, events         the run's RoCE
#                                                          frames, counted by
#                                                          the receiver
#   no retransmission (lossless)    retransmissions        0
#   polling half round trip         send_lat 8 B p50,      raw_pp p50 (x 1.5)
#   <= 1.5 x raw and below the      --wait poll            and the kernel's
#   kernel's UDP spinning           inline passes (auto:   UDP (sockperf)
#                                   300 us on each host)
#
# for each port kind: af_packet, and af_xdp (netdev = the veth end,
# rocepmd's XDP program).  The raw yardstick is rocepmd-testpmd --raw at
# both ends (guides/testpmd, "Raw between two processes"): its frames are
# as many and as long as the run's RoCE frames (rp_msg_shape()), its
# stream a flood the receiver counts.  DPDK's af_xdp PMD keeps its socket
# until the port closes, so on af_xdp the raw mode runs alone first
# (--raw-only, the PMD's own XDP program on the veth end), in its own
# pair of processes; should it fail, the af_xdp row falls back to the
# af_packet raw figure at the same size and verb, and says so.
#
# A rate row that retransmitted is followed by what both ends' counters
# (rocepmd-testpmd --counters) say of it: probes and how many were
# answered late (the receiver was only slow), NAKs, timeouts, packets
# resent; the receiver's ring drops and its engine's time off its CPU.
# Each row prints its figures or FAILED and why.  A benchmark, not a test:
# exits 0.  Environment: BENCH_DURATION (s per run, 3), BENCH_ITERS
# (send_lat iterations, 20000), BENCH_KINDS ("af_packet af_xdp"),
# BENCH_TIMEOUT (s per program, 120), BENCH_WAIT (how the rate rows'
# programs wait: event, the default, or poll, with inline passes),
# BENCH_BUILD, BENCH_HALT_POLL_NS (lib.sh).

. "$(dirname "$0")/lib.sh"

dur=${BENCH_DURATION:-3}
iters=${BENCH_ITERS:-20000}
kinds=${BENCH_KINDS:-af_packet af_xdp}
bw_wait=${BENCH_WAIT:-event}
export RP_VETH_MTU=3000
bench_topology rpw
[ "$(nproc)" -ge 2 ] || die "needs two CPUs"
bench_halt_poll_begin

# cfg SIDE KIND: host SIDE's configuration, all of it on its CPU.
cfg() {
	local cpu=0

	[ "$1" = b ] && cpu=1
	bench_host_cfg "$1" "$2" "0@$cpu,1@$cpu" sleep rpw
}

pin=()
"$app" -- --help 2>&1 | grep -q -- --cpus-client && pin=(1)

# run NAME KIND MODE SIZE WAIT [ARGS...]: one server/client invocation; the
# client's CSV in $tmp/NAME.csv, why it failed in $tmp/NAME.why.
run() {
	local name=$1 kind=$2 mode=$3 size=$4 wait=$5 rc n st
	local -a pc ps raw

	shift 5
	cfg a "$kind"
	cfg b "$kind"
	pc=() ps=() raw=()
	if [ ${#pin[@]} -ne 0 ]; then
		pc=(--cpus-client 0)
		ps=(--cpus-server 1)
	fi
	[ "$kind" = af_packet ] && raw=(--raw)
	[ "$kind" = af_xdp_raw ] && raw=(--raw-only)
	bench_line_rtt "$build" >"$tmp/$name.lb"
	ip netns exec "$RP_NS_B" timeout "$TMO" "$app" -- --config "$tmp/b.ini" \
		--server "${ps[@]}" "${raw[@]}" --counters >"$tmp/$name.srv" 2>&1 &
	srv=$!
	ip netns exec "$RP_NS_A" timeout "$TMO" "$app" -- --config "$tmp/a.ini" \
		--client "${host:-192.0.2.2}" --mode "$mode" --size "$size" \
		--wait "$wait" \
		"${pc[@]}" "${raw[@]}" "$@" --counters --csv --out "$tmp/$name.csv" \
		>"$tmp/$name.out" 2>"$tmp/$name.err"
	rc=$?
	bench_server_gone
	stop_server
	# after the server: its spinning threads would share CPU 1
	bench_line_rtt "$build" >"$tmp/$name.la"
	touch "$tmp/$name.csv"
	[ "$kind" = af_xdp_raw ] && mode=raw_stream	# its rows: raw_*
	n=$(bench_csv "$tmp/$name.csv" "$mode" status | wc -l)
	st=$(bench_csv "$tmp/$name.csv" "$mode" status | head -n 1)
	bench_why "$rc" "$n" "$st" "$tmp/$name.err" "$tmp/$name.srv" \
		"$srv_rc" >"$tmp/$name.why"
}

# field NAME MODE FIELD: one figure of run NAME's row of MODE.
field() {
	bench_csv "$tmp/$1.csv" "$2" "$3" | head -n 1
}

# retx_why NAME: what run NAME's counters (--counters, both ends) say of
# its retransmissions: probes (answered late: the peer was only slow),
# NAKs, timeouts, bytes resent; each end's receive drops (a READ's data
# arrive at the client) and its engine lcore's time off its CPU.
retx_why() {
	awk '
	$1 == "COUNTERS" {
		for (i = 3; i <= NF; i++) {
			split($i, kv, "=")
			c[$2 "." kv[1]] = kv[2]
		}
	}
	function v(k) { return c[k] + 0 }
	function side(e,  d) {
		d = v(e ".xsk_rx_ring_full") + v(e ".xsk_fill_ring_empty")
		d += v(e ".afp_rx_dropped")
		return sprintf("%s: ring drops %d, lcore off its CPU %.1f ms",
			e, d, v(e ".lcore.starved_us") / 1000)
	}
	END {
		printf "probes %d (answered late %d, of one packet %d; put off, transmit queue full: %d), NAKs %d, timeouts %d, %d B resent, duplicates %d; %s; %s\n",
			v("client.retransmit_probes"), v("client.probes_answered_late"),
			v("client.probes_one_packet"), v("client.probes_tx_full"),
			v("client.rcvd_nak"),
			v("client.retry_timeouts"), v("client.retransmitted_bytes"),
			v("server.duplicate_request"), side("client"), side("server")
	}' "$tmp/$1.err" "$tmp/$1.srv" 2>/dev/null
}

# ratio A B: A / B with three decimals, "-" without B.
ratio() {
	awk -v a="$1" -v b="$2" 'BEGIN {
		if (b + 0 > 0) printf "%.3f", a / b; else printf "-" }'
}

printf "%-9s %-30s %-7s %12s %12s %7s %6s  %s\n" kind goal unit rocepmd \
	yardstick ratio retx target
# bw NAME KIND MODE SIZE UNIT FIELD GOAL: a rate row against raw_stream.
bw() {
	local name=$1 kind=$2 mode=$3 size=$4 unit=$5 f=$6 goal=$7 v rv rsrc

	run "$name" "$kind" "$mode" "$size" "$bw_wait" --duration "$dur"
	rsrc=$name
	[ "$kind" = af_xdp ] && rsrc=$(xdp_raw "$name" "$mode" "$size" \
		--duration "$dur")
	if [ -s "$tmp/$name.why" ]; then
		printf "%-9s %-30s FAILED: %s\n" "$kind" "$mode $size B" \
			"$(cat "$tmp/$name.why")"
		return
	fi
	v=$(field "$name" "$mode" "$f")
	rv=$(field "$rsrc" raw_stream "$f")
	: "${v:=0}"
	retx=$(( $(field "$name" "$mode" retransmits) + \
		$(field "$name" "$mode" srv_retransmits) ))
	printf "%-9s %-30s %-7s %12s %12s %7s %6s  %s%s\n" "$kind" \
		"$mode $size B" "$unit" "$v" "${rv:--}" "$(ratio "$v" "$rv")" \
		"$retx" "$goal" "$(raw_note "$kind" "$rsrc")"
	[ "$retx" = 0 ] || printf "%-9s   retransmissions: %s\n" "" \
		"$(retx_why "$name")"
	printf "%-9s   %s\n" "" "$(cpu_why "$name" "$mode" "$rsrc" "$f")"
	printf "%-9s   placement: host A (client) %s; host B (server) CPU 1; %s\n" \
		"" "$(field "$name" "$mode" placement)" "$(line_of "$name")"
}

# line_of NAME: a cache line's round trip between CPUs 0 and 1 before
# and after run NAME (bench/line_rtt; the host of a virtual machine moves
# it, and the rates follow).
line_of() {
	bench_line_span "$(cat "$tmp/$1.lb")" "$(cat "$tmp/$1.la")"
}

# cpu_why NAME MODE RSRC FIELD: where the data's sender's CPU went in run
# NAME (host A's for SEND and WRITE, B's for READ: testpmd's cpu_busy and
# cpu_kernel, srv_ for the server's, the kernel's accounting) and the raw
# sender's in the stream of run RSRC.  On a veth the receiver's XDP and
# copies run in the sender's system call: the sender's kernel time a
# message against raw's says what the kernel's path costs rocepmd beyond
# the yardstick's.
cpu_why() {
	local b k rb rk v rv h=A p=

	[ "$2" = read_bw ] && h=B p=srv_
	b=$(field "$1" "$2" ${p}cpu_busy) k=$(field "$1" "$2" ${p}cpu_kernel)
	rb=$(field "$3" raw_stream cpu_busy) rk=$(field "$3" raw_stream cpu_kernel)
	v=$(field "$1" "$2" "$4") rv=$(field "$3" raw_stream "$4")
	awk -v h="$h" -v b="$b" -v k="$k" -v rb="$rb" -v rk="$rk" -v v="$v" \
		-v rv="$rv" 'function pc(x) { return x == "" ? "-" : sprintf("%.0f %%", x * 100) }
	BEGIN {
		printf "host %s'"'"'s CPU (the data'"'"'s sender): busy %s, in the kernel %s of that; raw'"'"'s sender: busy %s, in the kernel %s",
			h, pc(b), pc(k), pc(rb), pc(rk)
		if (b != "" && rb != "" && rk > 0 && v > 0 && rv > 0)
			printf "; kernel time a message %.2f x raw'"'"'s", (b * k / v) / (rb * rk / rv)
		printf "\n"
	}'
}

# The PMD's own XDP program takes every frame the veth receives: the
# processes' TCP exchange goes over a second veth pair, by IPv6.
ctl_up() {
	ip -n "$RP_NS_A" link show "${RP_VETH_A}c" >/dev/null 2>&1 && return 0
	ip link add "${RP_VETH_A}c" netns "$RP_NS_A" type veth peer name \
		"${RP_VETH_B}c" netns "$RP_NS_B" || return 1
	ip -n "$RP_NS_A" -6 addr add 2001:db8:1::1/64 dev "${RP_VETH_A}c" nodad
	ip -n "$RP_NS_B" -6 addr add 2001:db8:1::2/64 dev "${RP_VETH_B}c" nodad
	ip -n "$RP_NS_A" link set "${RP_VETH_A}c" up
	ip -n "$RP_NS_B" link set "${RP_VETH_B}c" up
}

# xdp_raw NAME MODE SIZE ARGS...: af_xdp's raw yardstick for run NAME, a
# --raw-only pair; prints the run whose raw rows to read (af_packet's
# at the same size and verb if it failed).
xdp_raw() {
	local name=$1 mode=$2 size=$3

	shift 3
	if ! ctl_up >"$tmp/ctl.log" 2>&1; then
		echo "the control veth: $(cat "$tmp/ctl.log")" >"$tmp/raw-$name.why"
		echo "${name/xdp/pkt}"
		return
	fi
	host=2001:db8:1::2 run "raw-$name" af_xdp_raw "$mode" "$size" poll "$@"
	if [ -s "$tmp/raw-$name.why" ]; then
		echo "${name/xdp/pkt}"
	else
		echo "raw-$name"
	fi
}

# raw_note KIND RSRC: which raw an af_xdp row is against.
raw_note() {
	[ "$1" = af_xdp ] || return 0
	case $2 in
	raw-*) echo " (raw: af_xdp, the PMD's XDP program)" ;;
	*) echo " (raw: af_packet; af_xdp's failed: $(cat "$tmp/raw-${2/pkt/xdp}.why"))" ;;
	esac
}

for kind in $kinds; do
	k=${kind/af_packet/pkt}
	k=${k/af_/}
	bw "send64-$k" "$kind" send_bw 64 msg/s msg_rate ">= 0.8, retx 0"
	bw "write64k-$k" "$kind" write_bw 65536 Gbit/s gbps ">= 0.8, retx 0"
	bw "read64k-$k" "$kind" read_bw 65536 Gbit/s gbps ">= 0.8, retx 0"
	name=lat-$k
	run "$name" "$kind" send_lat 8 poll --iters "$iters" --inline-us auto
	rsrc=lat-pkt
	[ "$kind" = af_xdp ] && rsrc=$(xdp_raw "$name" send_lat 8 \
		--iters "$iters")
	if [ -s "$tmp/$name.why" ]; then
		printf "%-9s %-30s FAILED: %s\n" "$kind" "send_lat 8 B poll" \
			"$(cat "$tmp/$name.why")"
		continue
	fi
	v=$(field "$name" send_lat lat_p50_us)
	rv=$(field "$rsrc" raw_pp lat_p50_us)
	printf "%-9s %-30s %-7s %12s %12s %7s %6s  %s%s\n" "$kind" \
		"send_lat 8 B p50, poll inline" us "$v" "${rv:--}" \
		"$(ratio "$v" "$rv")" - "<= 1.5" "$(raw_note "$kind" "$rsrc")"
	printf "%-9s   placement: host A (client) %s; host B (server) CPU 1; %s\n" \
		"" "$(field "$name" send_lat placement)" "$(line_of "$name")"
done

label="kernel UDP 14 B p50, spinning"
if command -v sockperf >/dev/null; then
	bench_udp_pp 18598 "$dur"
	if [ -n "$udp_why" ]; then
		printf "%-9s %-30s FAILED: %s\n" kernel "$label" "$udp_why"
	else
		v=$(awk '/percentile 50.000 =/ { print $NF }' "$tmp/udp.out")
		printf "%-9s %-30s %-7s %12s %12s %7s %6s  %s\n" kernel \
			"$label" us "$v" - - - "rocepmd's poll p50 below it"
	fi
else
	echo "(no sockperf: apt-get install sockperf for the kernel UDP row)"
fi
echo "hosts_wire.sh: veth MTU 3000, IB MTU $bench_mtu, host A on CPU 0, B on CPU 1 (program and engine lcore each), ${dur} s a rate run on $bw_wait, $iters ping-pongs, $(nproc) CPUs, idle CPUs $(bench_cpu_idle)"
echo "a wake-up costs its waker (bench/wake_cost): $(bench_wake_cost "$build")"
echo "a cache line's round trip between CPUs 0 and 1 (bench/line_rtt), in each row's placement as line=: $(bench_line_rtt "$build") now"
echo "an ICRC costs (bench/icrc_cost): $(bench_icrc_cost "$build")"
[ -n "${BENCH_KEEP:-}" ] && cp -r "$tmp" "$BENCH_KEEP"
exit 0
