#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# bench/hosts_sweep.sh: polling against events between two hosts (issue
# 25).  Two network namespaces joined by a veth pair (MTU 3000, IB MTU
# 1024), rocepmd-testpmd --server in B and --client 192.0.2.2 in A, each
# its own process, over the grid
#
#   port kind   af_packet, af_xdp (netdev = the veth end: rocepmd's XDP
#               program)
#   size        8 B and 4 KiB
#   load        first each mode unpaced ("max"), then 1, 10, 50 and 100 %
#               of the highest of those rates (--rate: each message timed
#               from its intended post, so queueing counts)
#   mode        poll     the program polls, inline passes off: the engine
#                        lcore does the work (on the program's CPU)
#               inline   the program polls with --inline-us 100: its
#                        thread runs the engine's passes, the lcore stands
#                        aside
#               event    the program sleeps in ibv_get_cq_event()
#               hybrid   polls --hybrid-us (20) then sleeps on events
#
# with RC send_bw (depth 16): the latency of a message is from its
# (intended) post to its send completion, that is the peer's ACK: a round
# trip.  The reference rows at each load are the kernel's UDP between the
# same veth ends, sockperf ping-pong --mps LOAD --full-rtt (a round trip
# too, one message in flight: above its ceiling it carries less than
# offered; at least 14 B, sockperf's smallest; 4 KiB is two IP fragments
# at MTU 3000): udp-spin on non-blocking sockets (--nonblocked), udp-block
# on blocking ones.
#
# Placement, the same for every row: host A on CPU 0, host B on CPU 1
# (taskset, the EAL's --lcores: program and engine lcore of a host on its
# one CPU; with a rocepmd-testpmd that has --cpus-client/--cpus-server the
# measuring threads are pinned there too, else they may run on either CPU
# and the placement column says so).  A row with more spinning threads
# than the CPUs they may use (a polling program and an engine lcore that
# serves it: poll, hybrid) is marked CPU-oversubscribed; a paced row that
# carried less than 90 % of its offered load, short; a sockperf row
# measured at the second try (the first saw no observation), retried.
# CPU: the client's and the server's application threads, µs per message
# (cpu/msg; the engine lcores not counted; sockperf: both processes), and
# host A's engine lcore (engA/msg, from a rocepmd-testpmd that reports
# it).
#
# Output: one table on stdout, a row as it is measured, and in BENCH_OUT
# (default BUILD/hosts-sweep) hosts-sweep.csv (the table's rows),
# testpmd.csv (rocepmd-testpmd's own CSV rows), summary.txt (the table),
# and logs/ (every program's output).  A row that failed says FAILED and
# why (timeout, no result, the status, the client's and server's last
# error lines); the grid goes on.  A benchmark, not a test: exits 0.
#
# Environment: BENCH_KINDS ("af_packet af_xdp"), BENCH_SIZES ("8 4096"),
# BENCH_LOADS (percent, "1 10 50 100"), BENCH_MODES ("poll inline event
# hybrid"), BENCH_UDP ("spin block", "" for none), BENCH_DURATION (s per
# point, 1), BENCH_DEPTH (16), BENCH_INLINE_US (100), BENCH_IDLE (the
# engines' idle policy, sleep), BENCH_TIMEOUT (s per program, 30),
# BENCH_PIN (0: the measuring threads left to the scheduler), BENCH_OUT,
# BENCH_BUILD (lib.sh).

. "$(dirname "$0")/lib.sh"

TMO=${BENCH_TIMEOUT:-30}
kinds=${BENCH_KINDS:-af_packet af_xdp}
sizes=${BENCH_SIZES:-8 4096}
loads=${BENCH_LOADS:-1 10 50 100}
modes=${BENCH_MODES:-poll inline event hybrid}
udps=${BENCH_UDP-spin block}
dur=${BENCH_DURATION:-1}
depth=${BENCH_DEPTH:-16}
inl=${BENCH_INLINE_US:-100}
idle=${BENCH_IDLE:-sleep}
out=${BENCH_OUT:-$build/hosts-sweep}
cpu_a=0
cpu_b=1
export RP_VETH_MTU=3000

[ "$(nproc)" -ge 2 ] || die "needs two CPUs"
mkdir -p "$out/logs" || die "cannot make $out"
rm -f "$out"/logs/* "$out/hosts-sweep.csv" "$out/testpmd.csv" \
	"$out/summary.txt"
bench_topology rph
t_begin=$(date +%s)

# The measuring threads pinned: only a rocepmd-testpmd that can.
pin=
if [ "${BENCH_PIN:-1}" != 0 ] &&
	"$app" -- --help 2>&1 | grep -q -- --cpus-client; then
	pin=1
fi
if [ -n "$pin" ]; then
	place="A:prog+eng@$cpu_a B:prog+eng@$cpu_b"
else
	place="A:eng@$cpu_a B:eng@$cpu_b progs@0-1"
fi
apl=
engc=
retried=
udp_try=0
have_sockperf=1
command -v sockperf >/dev/null || have_sockperf=

# cfg SIDE: host SIDE's configuration, program and engine lcore on its
# CPU, the port as $kind.
cfg() {
	local cpu=$cpu_a

	[ "$1" = b ] && cpu=$cpu_b
	bench_host_cfg "$1" "$kind" "0@$cpu,1@$cpu" "$idle" rph
}

# The table: a row as it comes, on stdout and in summary.txt.
fmt="%-9s %5s %-13s %-9s %-27s %9s %9s %9s %8s %8s %5s %s\n"
emit() {
	# shellcheck disable=SC2059
	printf "$fmt" "$@" | tee -a "$out/summary.txt"
}

# CSV field: quoted if it has a comma or a quote.
csvq() {
	case $1 in
	*[,\"]*) printf '"%s"' "${1//\"/\'}" ;;
	*) printf '%s' "$1" ;;
	esac
}

# row LOAD OFFERED MODE PLACE P50 P99 RATE CPU RETX MARK REASON
row() {
	local load=$1 offered=$2 mode=$3 pl=$4 p50=$5 p99=$6 rate=$7 cpu=$8
	local retx=$9 mark=${10} why=${11} l engp=-

	[ -z "$engc" ] || engp=$(printf %.2f "$engc")

	if [ -n "$why" ]; then
		printf "%-9s %5s %-13s %-9s %-27s FAILED: %s\n" "$kind" "$size" \
			"$load" "$mode" "$pl" "$why" | tee -a "$out/summary.txt"
	else
		emit "$kind" "$size" "$load" "$mode" "$pl" "$p50" "$p99" \
			"$rate" "$cpu" "$engp" "$retx" "$mark"
	fi
	l="$kind,$size,$(csvq "${load%% *}"),$offered,$mode,$(csvq "$pl"),$(csvq "$apl"),$p50,$p99,$rate,$cpu,$engc,$retx,$(csvq "$mark"),$(csvq "$why")"
	echo "$l" >>"$out/hosts-sweep.csv"
}

# tpmd NAME MODE RATE: one server/client invocation of send_bw; the row's
# figures in p50 p99 mrate cpu retx oversub, or why it failed in why.
tpmd() {
	local name=$1 mode=$2 rate=$3 wait=$2 il=0 rc n st cpuf line scpu sretx
	local -a ps=() pc=()

	case $mode in
	poll) wait=poll ;;
	inline) wait=poll il=$inl ;;
	esac
	[ -n "$pin" ] && ps=(--cpus-server "$cpu_b") pc=(--cpus-client "$cpu_a")
	cfg a
	cfg b
	ip netns exec "$RP_NS_B" taskset -c "$cpu_b" timeout "$TMO" "$app" -- \
		--config "$tmp/b.ini" --server --inline-us "$il" "${ps[@]}" \
		>"$out/logs/$name.server" 2>&1 &
	srv=$!
	ip netns exec "$RP_NS_A" taskset -c "$cpu_a" timeout "$TMO" "$app" -- \
		--config "$tmp/a.ini" --client 192.0.2.2 --inline-us "$il" \
		"${pc[@]}" --mode send_bw --size "$size" --depth "$depth" \
		--duration "$dur" --rate "$rate" --wait "$wait" --csv \
		--out "$out/logs/$name.csv" >"$out/logs/$name.client" 2>&1
	rc=$?
	bench_server_gone
	stop_server
	line=
	[ -s "$out/logs/$name.csv" ] &&
		line=$(bench_csv "$out/logs/$name.csv" send_bw lat_p50_us \
			lat_p99_us msg_rate cpu_us_per_msg srv_cpu_us_per_msg \
			retransmits srv_retransmits status cpu placement \
			eng_cpu_us_per_msg | head -n 1)
	n=0
	[ -n "$line" ] && n=1
	IFS='|' read -r p50 p99 mrate cpu scpu retx sretx st cpuf apl engc \
		<<<"$line"
	if [ "$n" = 1 ]; then
		p50=$(printf %.2f "$p50") p99=$(printf %.2f "$p99")
		mrate=$(printf %.0f "$mrate")
		cpu=$(awk -v a="$cpu" -v b="$scpu" 'BEGIN { printf "%.2f", a + b }')
		retx=$((retx + ${sretx:-0}))
	fi
	why=$(bench_why "$rc" "$n" "${st:-}" "$out/logs/$name.client" \
		"$out/logs/$name.server" "$srv_rc")
	if [ -s "$out/logs/$name.csv" ]; then
		[ -s "$out/testpmd.csv" ] ||
			echo "kind,load,$(head -n 1 "$out/logs/$name.csv")" \
				>"$out/testpmd.csv"
		tail -n +2 "$out/logs/$name.csv" |
			sed "s/^/$kind,$(echo "$load" | cut -d' ' -f1),/" \
				>>"$out/testpmd.csv"
	fi
	# More spinners than CPUs: the app's word if it has one, else ours
	# (a polling program and its engine lcore on one CPU).
	case $cpuf in
	oversubscribed) oversub=1 ;;
	ok) oversub= ;;
	*) oversub=
	   case $mode in poll | hybrid) oversub=1 ;; esac ;;
	esac
}

# cpu_times FILE CMD...: run CMD; its and its children's user+sys CPU
# seconds in FILE; a TERM goes to CMD, which is waited for.
cpu_times() {
	local f=$1 c rc

	shift
	"$@" &
	c=$!
	trap 'kill -TERM $c 2>/dev/null' TERM
	wait "$c"
	rc=$?
	while kill -0 "$c" 2>/dev/null; do
		wait "$c"
		rc=$?
	done
	# not in a pipe: a pipe's subshell has no children
	times >"$f.times"
	awk 'NR == 2 { split($1, u, /[ms]/); split($2, s, /[ms]/)
		printf "%.3f\n", u[1] * 60 + u[2] + s[1] * 60 + s[2] }' \
		"$f.times" >"$f"
	return "$rc"
}

# udp NAME spin|block MPS: sockperf ping-pong paced at MPS (or max)
# between the hosts, each end on its host's CPU; figures as tpmd's.  Not
# under-load: sockperf 3.7's under-load client reads a reply only when it
# expects one, so its round trips grow to milliseconds (replies queue).
udp() {
	local name=$1 how=$2 mps=$3 m=$size t rc n total c1 c2
	local -a nb=()

	[ "$m" -ge 14 ] || m=14
	[ "$how" = spin ] && nb=(--nonblocked)
	# whole seconds; sockperf counts from the end of 400 ms of warm-up
	t=$(awk -v d="$dur" 'BEGIN { t = int(d); if (t < d) t++; print t + 1 }')
	udp_try=$((${udp_try:-0} + 1))
	( cpu_times "$tmp/udp-srv.cpu" ip netns exec "$RP_NS_B" \
		taskset -c "$cpu_b" timeout "$TMO" sockperf sr -i 192.0.2.2 \
		-p 18599 "${nb[@]}" ) >"$out/logs/$name.server" 2>&1 &
	srv=$!
	sleep 0.3
	( cpu_times "$tmp/udp-cli.cpu" ip netns exec "$RP_NS_A" \
		taskset -c "$cpu_a" timeout "$TMO" sockperf pp -i 192.0.2.2 \
		-p 18599 -m "$m" -t "$t" --mps "$mps" --full-rtt "${nb[@]}" ) \
		>"$out/logs/$name.client" 2>&1
	rc=$?
	bench_server_gone
	stop_server
	n=$(grep -c 'percentile 50.000 =' "$out/logs/$name.client")
	# sockperf on a busy machine: at times no observation in its window
	# (a stall); once more, and the row says so
	if [ "$n" = 0 ] && [ "$rc" = 0 ] && [ "$udp_try" = 1 ]; then
		mv "$out/logs/$name.client" "$out/logs/$name.client.1"
		udp "$@"
		return
	fi
	[ "$udp_try" = 1 ] || retried=1
	udp_try=0
	why=$(bench_why "$rc" "$n" ok "$out/logs/$name.client" \
		"$out/logs/$name.server" "$srv_rc")
	p50=$(awk '/percentile 50.000 =/ { print $NF }' "$out/logs/$name.client")
	p99=$(awk '/percentile 99.000 =/ { print $NF }' "$out/logs/$name.client")
	mrate=$(sed -n 's/.*\[Valid Duration\] RunTime=\([0-9.]*\) sec; SentMessages=\([0-9]*\).*/\2 \1/p' \
		"$out/logs/$name.client" | awk 'NR == 1 && $2 > 0 { printf "%.0f", $1 / $2 }')
	# CPU: both processes over the whole run, its messages warm-up included
	total=$(sed -n 's/.*\[Total Run\].*SentMessages=\([0-9]*\).*/\1/p' \
		"$out/logs/$name.client" | head -n 1)
	c1=$(cat "$tmp/udp-cli.cpu" 2>/dev/null)
	c2=$(cat "$tmp/udp-srv.cpu" 2>/dev/null)
	cpu=
	[ "${total:-0}" -gt 0 ] && [ -n "$c1" ] &&
		cpu=$(awk -v a="$c1" -v b="${c2:-0}" -v n="$total" \
			'BEGIN { printf "%.2f", (a + b) * 1e6 / n }')
	retx=-
	oversub=
	rm -f "$tmp"/udp-*.cpu "$tmp"/udp-*.cpu.times
}

# point LOAD OFFERED MODE: one row of the grid.
point() {
	local load=$1 offered=$2 mode=$3 name mark pl=$place

	name=$kind-$size-${load%% *}-$mode
	p50='' p99='' mrate='' cpu='' retx='' why='' oversub='' apl='' engc='' retried=''
	case $mode in
	udp-*)
		pl="A:sockperf@$cpu_a B:sockperf@$cpu_b"
		if [ "$offered" = 0 ]; then
			udp "$name" "${mode#udp-}" max
		else
			udp "$name" "${mode#udp-}" "$offered"
		fi ;;
	*)
		tpmd "$name" "$mode" "$offered" ;;
	esac
	mark=
	[ -n "$oversub" ] && mark=CPU-oversubscribed
	[ -n "$retried" ] && mark="${mark:+$mark,}retried"
	if [ -z "$why" ] && [ "$offered" != 0 ] && [ -n "$mrate" ] &&
		awk -v r="$mrate" -v o="$offered" 'BEGIN { exit !(r < 0.9 * o) }'; then
		mark="${mark:+$mark,}short"
	fi
	row "$load" "$offered" "$mode" "$pl" "$p50" "$p99" "$mrate" "$cpu" \
		"$retx" "$mark" "$why"
}

echo "kind,size,load,offered,mode,placement,app_placement,p50_us,p99_us,msg_rate,cpu_us_per_msg,eng_a_cpu_us_per_msg,retransmits,mark,failed" \
	>"$out/hosts-sweep.csv"
{
	echo "hosts_sweep.sh: two hosts on a veth (MTU 3000, IB MTU 1024), $(nproc) CPUs, RC send_bw depth $depth, ${dur} s a point, engines idle = $idle"
	echo "latency: round trip, post to completion (sockperf: --full-rtt), us; cpu/msg: us, client + server application threads (sockperf: both processes); engA/msg: us, host A's engine lcore"
	[ -n "$pin" ] || echo "placement: this rocepmd-testpmd has no --cpus-client: its measuring threads may run on CPU 0-1 (progs 0-1); the engine lcores are pinned"
} | tee "$out/summary.txt"
emit kind size load mode placement "p50 us" "p99 us" "msg/s" "cpu/msg" "engA/msg" retx mark
for kind in $kinds; do
	for size in $sizes; do
		# the ceiling: each mode unpaced; loads are of the highest
		best=0
		bmode=
		for mode in $modes; do
			point max 0 "$mode"
			if [ -z "$why" ] && [ -n "$mrate" ] && [ "$mrate" -gt "$best" ]; then
				best=$mrate
				bmode=$mode
			fi
		done
		if [ -n "$have_sockperf" ]; then
			for u in $udps; do
				point max 0 "udp-$u"
			done
		fi
		if [ "$best" -eq 0 ]; then
			for pct in $loads; do
				for mode in $modes; do
					row "$pct%" "" "$mode" "$place" "" "" "" \
						"" "" "" "no max rate: every unpaced run failed"
				done
			done
			continue
		fi
		echo "($kind $size B: load 100 % = $best msg/s, $bmode unpaced)" |
			tee -a "$out/summary.txt"
		for pct in $loads; do
			offered=$(((best * pct + 50) / 100))
			[ "$offered" -ge 1 ] || offered=1
			load="$pct% $offered"
			for mode in $modes; do
				point "$load" "$offered" "$mode"
			done
			[ -n "$have_sockperf" ] || continue
			for u in $udps; do
				point "$load" "$offered" "udp-$u"
			done
		done
	done
done
[ -n "$have_sockperf" ] ||
	echo "(no sockperf: apt-get install sockperf for the kernel UDP rows)" |
	tee -a "$out/summary.txt"
echo "hosts_sweep.sh: $(($(date +%s) - t_begin)) s; CSV and logs in $out" |
	tee -a "$out/summary.txt"
exit 0
