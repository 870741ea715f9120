#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# incast.sh: issue 29's incast goals, each a ratio in one run, printed
# against its target (guides/congestion).  It runs the suite's topology
# (test/verbs/incast.sh: four senders in one process write 64 KiB
# messages through a bridge to a fifth device, the bridge's port to it
# carrying RATE and marking CE beyond 90 % of it) at each rate of
# BENCH_RATES, BENCH_ROUNDS times, DCQCN on then off in each round, and
# prints each run and then the goals:
#
#   goodput / rate       >= 0.90  the senders' goodput against the port's
#                                 nominal RATE; nftables' byte limits let
#                                 more through ("carried": what passed,
#                                 data resent included), so also
#   goodput / capacity            against what the port carried with
#                                 DCQCN off in the same round (saturated,
#                                 dropping): the most it lets through
#   Jain's index         >= 0.95  over the four senders' goodput
#   resent / goodput     <  1 %   retransmitted bytes
#
# Needs root (a network namespace) and the build's programs:
#   meson test -C build --benchmark incast, or bench/incast.sh (build/,
#   or RP_BUILD)
# Environment: BENCH_RATES (Mbit/s, "150 400"), BENCH_ROUNDS (2),
# BENCH_SECONDS (3, each run), and the suite's (test/verbs/meson.build).

src=$(cd "$(dirname "$0")/.." && pwd)
# What meson's benchmark sets (test/verbs/meson.build), from build/ (or
# RP_BUILD) when run by hand.
build=${RP_BUILD:-$src/build}
export RP_SRC_ROOT=${RP_SRC_ROOT:-$src}
export RP_RUN=${RP_RUN:-$build/tools/rocepmd-run}
export RP_INCAST=${RP_INCAST:-$build/test/engine/rp_incast}
export RP_ICRC_CHECK=${RP_ICRC_CHECK:-$build/test/verbs/icrc_check}
rates=${BENCH_RATES:-150 400}
rounds=${BENCH_ROUNDS:-2}
secs=${BENCH_SECONDS:-3}
out=$(mktemp -d /tmp/rp-incast-bench.XXXXXX) || exit 1
trap 'rm -rf "$out"' EXIT

[ "$(id -u)" -eq 0 ] || { echo "incast.sh: needs root" >&2; exit 77; }

echo "incast.sh: 4 senders -> 1 port of RATE (CE beyond 90 %), 64 KiB" \
	"WRITEs, $secs s a run, $rounds round(s)"
echo "placement: one process, the program's thread on CPU 0, one engine" \
	"lcore (CPU 1) for all five devices"
printf '%-6s %-5s %-5s %9s %9s %9s %8s %6s %8s %6s %6s %8s %s\n' rate \
	dcqcn round goodput carried good/rate good/cap jain resent% cnps cuts \
	timeouts losscuts
# One line per run: rate dcqcn round goodput carried jain resent% cnps cuts
# tmo losscuts
runs=$out/runs
: >"$runs"
for rate in $rates; do
	for ((r = 1; r <= rounds; r++)); do
		log=$out/incast-$rate-$r.log
		RP_INCAST_MBIT=$rate RP_INCAST_SECONDS=$secs \
			bash "$src/test/verbs/incast.sh" >"$log" 2>&1
		st=$?
		# "DCQCN on: goodput G Mbit/s, the port carried C Mbit/s, Jain J,
		#  retransmitted B bytes (P %), CNPs S sent R taken, U cuts,
		#  paced X, T timeouts, L loss cuts"
		sed -n 's/.*DCQCN \(on\|off\): goodput \([0-9.]*\) Mbit\/s, the port carried \([0-9.]*\) Mbit\/s, Jain \([0-9.]*\), retransmitted [0-9]* bytes (\([0-9.]*\) %), CNPs \([0-9]*\) sent [0-9]* taken, \([0-9]*\) cuts, paced [0-9]*, \([0-9]*\) timeouts, \([0-9]*\) loss cuts.*/\1 \2 \3 \4 \5 \6 \7 \8 \9/p' \
			"$log" | while read -r dc g c j p n u t l; do
			echo "$rate $dc $r $g $c $j $p $n $u $t $l"
		done >>"$runs"
		if [ "$st" -ne 0 ]; then
			echo "rate $rate round $r: test/verbs/incast.sh exited $st:"
			grep -i "fail" "$log" | head -5
		fi
	done
done

# runs, with good/rate and good/cap (the same round's carried, DCQCN off)
# appended as fields 12 and 13
awk '{ k = $1 " " $3; if ($2 == "off") cap[k] = $5; line[NR] = $0 }
     END { for (i = 1; i <= NR; i++) {
		split(line[i], f, " "); k = f[1] " " f[3]
		print line[i], f[4] / f[1], (cap[k] > 0 ? f[4] / cap[k] : 0) } }' \
	"$runs" >"$runs.x"
awk '{ printf "%-6s %-5s %-5s %9.1f %9.1f %9.2f %8.2f %6.3f %8.1f %6s %6s %8s %s\n",
       $1, $2, $3, $4, $5, $12, $13, $6, $7, $8, $9, $10, $11 }' "$runs.x"

echo
echo "goals (worst and best round; DCQCN off for comparison)"
printf '%-22s %-6s %-5s %8s %8s  %s\n' goal rate dcqcn worst best target
# col: the value's field in runs.x (12 good/rate, 13 good/cap, 6 Jain,
# 7 resent %); hi: larger is better
goal() {
	local name=$1 col=$2 hi=$3 tgt=$4 rate dc

	for rate in $rates; do
		for dc in on off; do
			awk -v rate="$rate" -v dc="$dc" -v col="$col" -v hi="$hi" \
				-v name="$name" -v tgt="$tgt" '
			$1 == rate && $2 == dc { v = $col
				if (n++ == 0) { w = v; b = v }
				if (hi ? v < w : v > w) w = v
				if (hi ? v > b : v < b) b = v }
			END {
			  if (n > 0)
				printf "%-22s %-6s %-5s %8.3f %8.3f  %s\n", name,
				       rate, dc, w, b, dc == "on" ? tgt : "(no CC)" }' \
				"$runs.x"
		done
	done
}
goal "goodput / rate" 12 1 ">= 0.90"
goal "goodput / capacity" 13 1 ">= 0.90"
goal "Jain's index" 6 1 ">= 0.95"
goal "resent / goodput, %" 7 0 "< 1"
