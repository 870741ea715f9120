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
#   dedicated   each host: its engine lcore (idle = sleep) on CPU 1, the
#               program polls on any CPU -- four threads on two CPUs
#   inline      each host on one CPU (A on CPU 0, B on CPU 1), inline_us
#               set: the polling thread runs the engine's passes
#   events      dedicated placement, the program on completion events
#               (both: inline_us 0, not auto: the lcore does the work)
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
# Each row says where the programs ran (the CPU of each host's program and
# engine lcore: in the inline placement the measuring threads are pinned
# with --cpus-client and --cpus-server where rocepmd-testpmd has them, in
# the dedicated one they run on any CPU) and prints its figures or
# "FAILED:" and why: a timeout (exit 124), no result row, the run's
# status, the client's and the server's last error lines; the other rows
# run all the same.
#
# A benchmark that prints figures, not a test: it exits 0 whatever they
# are.  Environment: BENCH_ITERS (20000), BENCH_INLINE_US (100),
# BENCH_TIMEOUT (120 s per invocation), BENCH_PIN (0: the inline
# placement's measuring threads left to the scheduler too), BENCH_BUILD
# (lib.sh).

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
	local cpu=0 map="0@0,1@1"

	[ "$1" = b ] && cpu=1
	[ "$2" = one ] && map="0@$cpu,1@$cpu"
	bench_host_cfg "$1" "$kind" "$map" sleep rpi
}

# In the inline placement the measuring threads run on their host's CPU
# (--cpus-client/--cpus-server, where rocepmd-testpmd has them); in the
# dedicated one, and without those options, wherever the scheduler puts
# them, as any verbs program's.
pin=
if [ "${BENCH_PIN:-1}" != 0 ] &&
	"$app" -- --help 2>&1 | grep -q -- --cpus-client; then
	pin=1
fi

# where PLACEMENT: the CPUs of each host's program and engine lcore.
where() {
	case $1/$pin in
	dedicated/*) echo "A, B: engine CPU 1, program any CPU" ;;
	one/1) echo "A: prog+engine CPU 0; B: prog+engine CPU 1" ;;
	one/) echo "A: engine CPU 0; B: 1; programs any CPU" ;;
	*) echo "A: CPU 0; B: CPU 1" ;;
	esac
}

# run NAME PLACEMENT WAIT [TESTPMD ARGS...]: one server/client invocation;
# the client's CSV in $tmp/NAME.csv, its send_lat figures in $tmp/NAME.res,
# why it failed (if it did) in $tmp/NAME.why.
run() {
	local name=$1 place=$2 wait=$3 rc st n
	local -a pc ps

	shift 3
	cfg a "$place"
	cfg b "$place"
	echo "$place" >"$tmp/$name.place"
	pc=() ps=()
	if [ -n "$pin" ] && [ "$place" = one ]; then
		pc=(--cpus-client 0)
		ps=(--cpus-server 1)
	fi
	ip netns exec "$RP_NS_B" timeout "$TMO" "$app" -- --config "$tmp/b.ini" \
		--server "${ps[@]}" "$@" >"$tmp/$name.srv" 2>&1 &
	srv=$!
	ip netns exec "$RP_NS_A" timeout "$TMO" "$app" -- --config "$tmp/a.ini" \
		--client 192.0.2.2 --mode send_lat --size 8 \
		--iters "$iters" --wait "$wait" "${pc[@]}" "$@" --csv \
		--out "$tmp/$name.csv" >"$tmp/$name.out" 2>"$tmp/$name.err"
	rc=$?
	bench_server_gone
	stop_server
	touch "$tmp/$name.csv"
	# p50|p99|status of the send_lat row
	bench_csv "$tmp/$name.csv" send_lat lat_p50_us lat_p99_us status \
		>"$tmp/$name.res"
	n=$(wc -l <"$tmp/$name.res")
	st=$(cut -d'|' -f3- "$tmp/$name.res")
	bench_why "$rc" "$n" "$st" "$tmp/$name.err" "$tmp/$name.srv" \
		"$srv_rc" >"$tmp/$name.why"
}

# row LABEL NAME: the figures of run NAME (p50 and p99, us, one way), or
# FAILED and why.
row() {
	local label=$1 name=$2 place

	place=$(where "$(cat "$tmp/$name.place")")
	if [ -s "$tmp/$name.why" ]; then
		printf "%-34s %-42s FAILED: %s\n" "$label" "$place" \
			"$(cat "$tmp/$name.why")"
		return
	fi
	awk -F'|' -v n="$label" -v p="$place" -v r50="$raw" '
	{ v50 = $1; v99 = $2 }
	END { printf "%-34s %-42s %10.2f %10.2f %10s %8s\n", n, p, v50, v99,
		(r50 > 0 ? sprintf("%.2f", r50) : "-"),
		(r50 > 0 ? sprintf("%.2f", v50 / r50) : "-") }' "$tmp/$name.res"
}

run inline one poll --raw --inline-us "$inl"
raw=$(bench_csv "$tmp/inline.csv" raw_pp lat_p50_us)
# inline_us 0: the engine lcore does the work (auto, the default, would
# give the polling program the passes on two CPUs)
run dedicated dedicated poll --inline-us 0
run event dedicated event --inline-us 0
kind=xdp
run inline-xdp one poll --inline-us "$inl"
echo "inline.sh: two hosts on a veth (MTU 3000), 8 B RC SEND ping-pong, $iters iterations, $(nproc) CPUs"
printf "%-34s %-42s %10s %10s %10s %8s\n" "row" "placement" "p50 us" "p99 us" \
	"raw p50" "p50/raw"
row "dedicated lcore, polling" dedicated
row "inline (inline_us $inl), polling" inline
row "dedicated lcore, events" event
row "inline, polling, XDP (netdev)" inline-xdp
label="kernel UDP, spinning (sockperf)"
if command -v sockperf >/dev/null; then
	bench_udp_pp 18599 3
	if [ -n "$udp_why" ]; then
		printf "%-34s %-42s FAILED: %s\n" "$label" "$(where udp)" \
			"$udp_why"
	else
		awk -v n="$label" -v p="$(where udp)" -v r50="$raw" '
		/percentile 50.000 =/ { v50 = $NF }
		/percentile 99.000 =/ { v99 = $NF }
		END { printf "%-34s %-42s %10.2f %10.2f %10s %8s\n", n, p, v50,
			v99, (r50 > 0 ? sprintf("%.2f", r50) : "-"),
			(r50 > 0 ? sprintf("%.2f", v50 / r50) : "-") }' \
			"$tmp/udp.out"
	fi
else
	echo "(no sockperf: apt-get install sockperf for the kernel UDP row)"
fi
echo "(goal: inline polling p50 <= 1.5 x raw; half round trips)"
exit 0
