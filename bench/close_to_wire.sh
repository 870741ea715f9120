#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# bench/close_to_wire.sh: issue 14's goals as ratios to the raw DPDK path,
# each from one rocepmd-testpmd invocation (the raw limit measured on the
# same ports before the engine takes them).  A benchmark that prints
# figures, not a test: it exits 0 whatever the figures are.
#
# Two devices back to back over memif in one process, one engine lcore
# (lcore 1) for both; completions on events unless BENCH_WAIT says
# otherwise (a polling program and the engine lcore share this machine's
# CPUs: guides/experiments_close_to_wire).
#
#   goal                          rocepmd                 raw
#   64 B RC SEND message rate     send_bw msg/s           raw_stream frames/s
#   8 B RC SEND half round trip   send_lat p50 (one way)  raw_pp2 p50 (one way:
#                                                         port 1 answered by a
#                                                         thread on another CPU,
#                                                         as the server program);
#                                                         raw_pp's (one thread,
#                                                         no second CPU) beside
#   64 KiB WRITE, READ bandwidth  write_bw, read_bw Gbit/s raw_stream Gbit/s
#                                 (IB MTU 1024, then 4096 as perftest would
#                                 take the port's largest; then 4096 with
#                                 the program's CQ moderated, --cq-mod)
#   two engine lcores             send_bw, a lcore each   the same, one lcore
#   4000 idle QPs per device      send_bw --idle-qps 4000 send_bw with none
#   polling, inline passes        send_lat --wait poll    raw_pp2 p50, raw_pp's
#                                 --inline-us 100
#                                 send_bw 64 B, write_bw  raw_stream
#                                 and read_bw 64 KiB
#                                 (IB MTU 4096) the same
#   engine CPU per message on     send_bw --rate R        the same,
#   events <= 1.5 x polling       --wait event,           --wait poll
#   at the same load              eng_cpu_us_per_msg      (issue 28)
#                                 (idle yield, adaptive)
#
# Environment: BENCH_DURATION (seconds per run, 3), BENCH_WAIT (event),
# BENCH_ICRC (the ports' icrc key, auto; on: every ICRC computed),
# BENCH_ROUNDS (best of, 2), BENCH_CPU_RATES (offered msg/s of the CPU
# rows, "20000 200000"), BENCH_HALT_POLL_NS (a virtual machine's haltpoll
# guest_halt_poll_ns for the run, put back after; bench/cpu_idle.sh).

set -uo pipefail

src=$(cd "$(dirname "$0")/.." && pwd)
app=$src/build/app/rocepmd-testpmd/rocepmd-testpmd
dur=${BENCH_DURATION:-3}
wait_mode=${BENCH_WAIT:-event}
rounds=${BENCH_ROUNDS:-2}
icrc=${BENCH_ICRC:-auto}
[ -x "$app" ] || { echo "close_to_wire.sh: build first ($app)" >&2; exit 1; }
# shellcheck source=cpu_idle.sh
. "$src/bench/cpu_idle.sh"
trap bench_halt_poll_end EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
bench_halt_poll_begin

# Where a row's figure ran, as rocepmd-testpmd decided and printed it
# (RESULT field 25: the programs' CPUs, the engine's lcores, what idle
# CPUs do) and a cache line's round trip between CPUs 0 and 1 before and
# after the run (bench/line_rtt: the host of a virtual machine moves it,
# and a run's rate follows), written by best() and cpu(), which run in
# subshells, for the next row() to print.
place=$(mktemp "${TMPDIR:-/tmp}/ctw-place-XXXXXX") || exit 1
trap 'rm -f "$place"' EXIT

# run LCORE1 LCORE2 ARGS...: one invocation over a memif pair; RESULT lines.
run() {
	local l1=$1 l2=$2 s=/rtp-ctw-$$-$RANDOM

	shift 2
	# lcore 2 shares CPU 0 with the main lcore where there are 2 CPUs
	"$app" --lcores "0@0,1@1,2@$(( $(nproc) > 2 ? 2 : 0 ))" --no-huge -m 1024 --no-pci \
		--no-shconf --file-prefix="ctw$$" \
		--vdev "net_memif0,role=server,id=0,socket-abstract=yes,socket=$s,mac=02:00:00:00:00:01" \
		--vdev "net_memif1,role=client,id=0,socket-abstract=yes,socket=$s,mac=02:00:00:00:00:02" \
		-- --port "net_memif0,ip=192.0.2.1/24,mtu=${RUN_MTU:-1024},lcore=$l1,icrc=$icrc" \
		--port "net_memif1,ip=192.0.2.2/24,mtu=${RUN_MTU:-1024},lcore=$l2,icrc=$icrc" \
		--wait "${RUN_WAIT:-$wait_mode}" "$@" 2>/dev/null | grep '^RESULT'
}

# best MODE FIELD LCORE1 LCORE2 ARGS...: the best of the rounds' RESULT
# lines for MODE by FIELD (msg/s 13, Gbit/s 14: highest; lat_p50 10:
# lowest); prints "value raw_value" (raw: raw_stream's for rates); for
# latency "value raw_pp2 raw_pp" (their p50s; raw_pp2 0 where the main
# lcore and the engine lcore share a CPU).
best() {
	local mode=$1 field=$2 l1=$3 l2=$4 out r v rv pl lb la bv='' bpl=''

	shift 4
	for ((r = 0; r < rounds; r++)); do
		lb=$(bench_line_rtt "$src/build")
		out=$(run "$l1" "$l2" --mode "$mode" "$@")
		la=$(bench_line_rtt "$src/build")
		v=$(awk -v m="$mode" -v f="$field" '$2 == m { print $f }' <<<"$out")
		if [ "$field" = 10 ]; then
			rv=$(awk '$2 == "raw_pp2" { x = $10 }
				$2 == "raw_pp" { o = $10 }
				END { print (x == "" ? 0 : x), o }' <<<"$out")
		else
			rv=$(awk -v f="$field" '$2 == "raw_stream" { print $f }' <<<"$out")
		fi
		pl=$(awk -v m="$mode" '$2 == m { print $25 }' <<<"$out")
		pl="$pl,$(bench_line_span "$lb" "$la")"
		[ -n "$v" ] || continue
		if [ -z "$bv" ] || { [ "$field" = 10 ] && awk -v a="$v" -v b="$bv" 'BEGIN { exit !(a < b) }'; } ||
		   { [ "$field" != 10 ] && awk -v a="$v" -v b="$bv" 'BEGIN { exit !(a > b) }'; }; then
			bv=$v brv=$rv bpl=$pl
		fi
	done
	echo "$bpl" >"$place"
	echo "${bv:-0} ${brv:-0}"
}

# row NAME UNIT VALUE RAW GOAL [PLACEMENT]: one line, ending with where
# the figure ran (the last best() or cpu() by default).
row() {
	local name=$1 unit=$2 v=$3 rv=$4 goal=$5 pl=${6:-$(cat "$place")}

	# no yardstick (raw_pp2 where the two lcores share a CPU, a raw
	# mode that failed): no ratio rather than a ratio of 0
	awk -v n="$name" -v u="$unit" -v a="$v" -v b="$rv" -v g="$goal" \
		-v p="${pl:-?}" 'BEGIN {
		if (b > 0 && a > 0)
			printf "%-34s %-8s %12s %12s %8.3f   %-16s %s\n", n, u, a,
				b, a / b, g, p
		else
			printf "%-34s %-8s %12s %12s %8s   %-16s %s\n", n, u,
				(a > 0 ? a : "-"), (b > 0 ? b : "-"), "n/a", g, p }'
}

echo "close_to_wire.sh: memif pair in one process, engine lcore 1, wait $wait_mode, ${dur} s a run, best of $rounds, idle CPUs $(bench_cpu_idle)"
echo "a wake-up costs its waker (bench/wake_cost): $(bench_wake_cost "$src/build")"
echo "a cache line's round trip between CPUs 0 and 1 (bench/line_rtt), in each row's placement as line=: $(bench_line_rtt "$src/build") now"
# A RoCE frame takes an ICRC at each end with icrc = on; on this memory
# link the default (auto) leaves it out between the two rocepmd ends.
echo "an ICRC costs (bench/icrc_cost): $(bench_icrc_cost "$src/build")"
echo "icrc = $icrc ($([ "$icrc" = on ] && echo "every frame's computed and checked" || echo "memif: none between the two rocepmd ends"))"
printf "%-34s %-8s %12s %12s %8s   %-16s %s\n" goal unit rocepmd raw ratio target placement
read -r v rv < <(best send_bw 13 1 1 --size 64 --duration "$dur")
row "64 B RC SEND message rate" "msg/s" "$v" "$rv" ">= 0.50"
one=$v
read -r v rv rv1 < <(best send_lat 10 1 1 --size 8 --duration "$dur")
row "8 B RC SEND half round trip" "us" "$v" "$rv" "<= 1.2"
row "  the same / raw in one thread" "us" "$v" "$rv1" "(no second CPU)"
read -r v rv < <(best write_bw 14 1 1 --size 65536 --duration "$dur")
row "64 KiB RDMA WRITE bandwidth" "Gbit/s" "$v" "$rv" ">= 0.80"
read -r v rv < <(best read_bw 14 1 1 --size 65536 --duration "$dur")
row "64 KiB RDMA READ bandwidth" "Gbit/s" "$v" "$rv" ">= 0.80"
read -r v rv < <(RUN_MTU=4096 best write_bw 14 1 1 --size 65536 --duration "$dur")
row "64 KiB RDMA WRITE, IB MTU 4096" "Gbit/s" "$v" "$rv" ">= 0.80"
read -r v rv < <(RUN_MTU=4096 best read_bw 14 1 1 --size 65536 --duration "$dur")
row "64 KiB RDMA READ, IB MTU 4096" "Gbit/s" "$v" "$rv" ">= 0.80"
# A program that moderates its CQ's events (ibv_modify_cq): fewer
# wake-ups for the lcore to pay (guides/verbs_apps, "CQ moderation").
read -r v rv < <(RUN_MTU=4096 best write_bw 14 1 1 --size 65536 --duration "$dur" --cq-mod 64,1000)
row "64 KiB WRITE 4096, cq-mod 64,1000" "Gbit/s" "$v" "$rv" ">= 0.80"
read -r v rv < <(RUN_MTU=4096 best read_bw 14 1 1 --size 65536 --duration "$dur" --cq-mod 64,1000)
row "64 KiB READ 4096, cq-mod 64,1000" "Gbit/s" "$v" "$rv" ">= 0.80"
# The program polls and runs the engine's passes in its own threads
# (inline passes, as eRPC's threads run its transport): no wake-ups.
read -r v rv < <(RUN_WAIT=poll best send_bw 13 1 1 --size 64 --duration "$dur" --inline-us 100)
row "64 B SEND rate, poll, inline" "msg/s" "$v" "$rv" ">= 0.50"
read -r v rv < <(RUN_MTU=4096 RUN_WAIT=poll best write_bw 14 1 1 --size 65536 --duration "$dur" --inline-us 100)
row "64 KiB WRITE 4096, poll, inline" "Gbit/s" "$v" "$rv" ">= 0.80"
read -r v rv < <(RUN_MTU=4096 RUN_WAIT=poll best read_bw 14 1 1 --size 65536 --duration "$dur" --inline-us 100)
row "64 KiB READ 4096, poll, inline" "Gbit/s" "$v" "$rv" ">= 0.80"
read -r v _ < <(best send_bw 13 1 2 --size 64 --duration "$dur")
row "64 B SEND rate, 2 lcores / 1" "msg/s" "$v" "$one" ">= 1.8 ($(nproc) CPUs here)"
read -r v _ < <(best send_bw 13 1 1 --size 64 --duration "$dur" --idle-qps 4000)
row "64 B SEND rate, 4000 idle QPs / 0" "msg/s" "$v" "$one" ">= 0.90"
read -r v rv rv1 < <(RUN_WAIT=poll best send_lat 10 1 1 --size 8 --duration "$dur" --inline-us 100)
row "8 B half round trip, poll, inline" "us" "$v" "$rv" "<= 1.5"
row "  the same / raw in one thread" "us" "$v" "$rv1" "(no second CPU)"

# cpu WAIT IDLE RATE: "engine_us program_us" per message of 64 B send_bw
# offered RATE msg/s under the engine idle policy IDLE (the lowest engine
# figure of the rounds).  The engine's is its lcore's CPU time and the
# inline passes that found work on the program's threads; the program's
# is its threads' (inline passes included).
cpu() {
	local w=$1 idle=$2 rate=$3 out r e p pl lb la be='' bp='' bpl=''

	shift 3
	for ((r = 0; r < rounds; r++)); do
		lb=$(bench_line_rtt "$src/build")
		out=$(RUN_WAIT=$w run 1 1 --mode send_bw --size 64 \
			--duration "$dur" --rate "$rate" --idle "$idle" "$@")
		la=$(bench_line_rtt "$src/build")
		read -r e p pl < <(awk '$2 == "send_bw" && $27 == "ok" {
			print $24, $15, $25 }' <<<"$out")
		[ -n "$e" ] || continue
		pl="$pl,$(bench_line_span "$lb" "$la")"
		if [ -z "$be" ] || awk -v a="$e" -v b="$be" 'BEGIN { exit !(a < b) }'; then
			be=$e bp=$p bpl=$pl
		fi
	done
	echo "$bpl" >"$place"
	echo "${be:-0} ${bp:-0}"
}

# The engine's CPU per message, events against polling at the same
# offered load: events with the default idle policy (yield: the lcore
# polls whether or not there is work) and with adaptive (it blocks on
# the doorbells when idle, and naps in place of its spin where naps
# cost no work: rp_idle_nap.h), and adaptive without those naps
# (spin_nap = off).  Below 50,000/s the program sleeps between messages
# on events; above, it spins to keep the rate (pace_until).
printf "%-34s %-8s %12s %12s %8s   %-16s %s\n" "CPU per message" unit events polling ratio target "placement (events; polling)"
for rate in ${BENCH_CPU_RATES:-20000 200000}; do
	read -r pe pp < <(cpu poll yield "$rate")
	ppl=$(cat "$place")
	for idle in yield adaptive adaptive-nonap; do
		if [ $idle = adaptive-nonap ]; then
			read -r ee ep < <(cpu event adaptive "$rate" --spin-nap off)
		else
			read -r ee ep < <(cpu event "$idle" "$rate")
		fi
		pl="$(cat "$place"); $ppl"
		row "engine us/msg, $rate/s, $idle" "us" "$ee" "$pe" "<= 1.50" "$pl"
		row "program us/msg, $rate/s, $idle" "us" "$ep" "$pp" "(its threads)" "$pl"
	done
done
