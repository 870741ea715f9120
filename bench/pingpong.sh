#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# bench/pingpong.sh: polling versus events (issue 3).  A benchmark that
# prints figures, not a test: it exits 0 whatever the figures are.
#
# Runs bench/rp_pingpong.c (RC SEND/RECV, 64 bytes) between two network
# namespaces through build/tools/rocepmd-run, for every wait mode
# {poll, event, epoll} under every engine idle policy {busy, adaptive,
# sleep}, and bench/udp_pingpong.c (kernel UDP on the same veth, busy-polling
# recvfrom(MSG_DONTWAIT) and blocking recvfrom) as the baselines of the same
# run.  Prints one markdown table at the end.
#
# Needs root, iproute2, nftables, a C compiler and libibverbs-dev.
#
# Environment:
#   BENCH_ITERS     measured round trips per run    (20000)
#   BENCH_WARMUP    warm-up round trips per run     (1000)
#   BENCH_SIZE      message size in bytes           (64)
#   BENCH_REPS      repetitions of the whole matrix (1)
#   BENCH_IDLES     idle policies                   ("busy adaptive sleep")
#   BENCH_MODES     wait modes                      ("poll event epoll")
#   BENCH_MAX_S     measured seconds at most per verbs run: a run that
#                   is slower stops early and reports the round trips it
#                   did (15)
#   BENCH_TIMEOUT   seconds any one program may run (120)
#   BENCH_KEEP=1    keep the work directory (logs, configs)
#
# The topology is its own: namespaces rpb<pid>-a/-b, veth rpb<pid>a/b;
# the EXIT trap stops what the script started (by PID) and removes it.

set -uo pipefail

prog=${0##*/}
src=$(cd "$(dirname "$0")/.." && pwd)
ITERS=${BENCH_ITERS:-20000}
WARMUP=${BENCH_WARMUP:-1000}
SIZE=${BENCH_SIZE:-64}
REPS=${BENCH_REPS:-1}
IDLES=${BENCH_IDLES:-busy adaptive sleep}
MODES=${BENCH_MODES:-poll event epoll}
TMO=${BENCH_TIMEOUT:-120}
MAX_S=${BENCH_MAX_S:-15}
RUN=$src/build/tools/rocepmd-run
RP_BIN=$src/build/bench-rp_pingpong
UDP_BIN=$src/build/bench-udp_pingpong
PORT=18600

pids=()
topo=0
tag=$(($$ % 1000000))
export RP_NS_A="rpb$tag-a" RP_NS_B="rpb$tag-b"
export RP_VETH_A="rpb${tag}a" RP_VETH_B="rpb${tag}b"

log() { echo "$prog: $*" >&2; }
die() { log "ERROR: $*"; exit 1; }

cleanup() {
	local rc=$? pid i

	trap - EXIT INT TERM HUP
	for pid in "${pids[@]}"; do
		kill -TERM "$pid" 2>/dev/null
	done
	for pid in "${pids[@]}"; do
		for ((i = 0; i < 50; i++)); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
	done
	if [ "$topo" -eq 1 ]; then
		# RP_NS_* are this script's own: never the default rp-a/rp-b
		"$src/scripts/netns-topology" down >/dev/null 2>&1 ||
			log "netns-topology down failed"
		if ip netns list 2>/dev/null | awk '{ print $1 }' |
		   grep -qxE -- "$RP_NS_A|$RP_NS_B"; then
			log "namespace left behind: $RP_NS_A $RP_NS_B"
		fi
	fi
	if [ -n "${tmp:-}" ] && [ -d "$tmp" ]; then
		if [ "${BENCH_KEEP:-0}" = 1 ]; then
			log "kept $tmp"
		else
			rm -rf "$tmp"
		fi
	fi
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

[ "$(id -u)" -eq 0 ] || die "needs root (network namespaces)"
[ -x "$RUN" ] || die "no $RUN: ninja -C build first"
command -v nft >/dev/null || die "nft not found (apt-get install nftables)"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/rp-bench-XXXXXX") || die "mktemp"

cc -O2 -std=c11 -D_GNU_SOURCE -Wall "$src/bench/rp_pingpong.c" -libverbs \
	-o "$RP_BIN" || die "cannot build bench/rp_pingpong.c (libibverbs-dev?)"
cc -O2 -std=c11 -D_GNU_SOURCE -Wall "$src/bench/udp_pingpong.c" \
	-o "$UDP_BIN" || die "cannot build bench/udp_pingpong.c"

topo=1
"$src/scripts/netns-topology" up >"$tmp/topology.log" 2>&1 || {
	cat "$tmp/topology.log" >&2
	die "netns-topology up failed"
}
ip_b=$(sed -n 's/^[[:space:]]*ipv4[[:space:]]*=[[:space:]]*\([0-9.]*\).*/\1/p' \
	"$src/config/netns-b.ini" | head -n 1)

# Config copies: own veth, engine counters at INFO on exit, idle policy.
for idle in $IDLES; do
	for s in a b; do
		sed -e "s/iface=rp-veth-$s\([,[:space:]]\|$\)/iface=rpb$tag$s\1/" \
		    -e '/^\[eal\]/a args = --log-level=rocepmd*:info' \
		    -e '/^args[[:space:]]*=/d' \
		    -e "s/^idle = .*/idle = $idle/" \
		    "$src/config/netns-$s.ini" >"$tmp/$s-$idle.ini"
		grep -q "^idle = $idle" "$tmp/$s-$idle.ini" ||
			die "config/netns-$s.ini has no idle key"
		grep -q "iface=rpb$tag$s" "$tmp/$s-$idle.ini" ||
			die "config/netns-$s.ini has no iface=rp-veth-$s"
	done
done
# the [eal] args line was deleted then re-added: check it is there once
grep -c '^args = --log-level' "$tmp/a-${IDLES%% *}.ini" | grep -qx 1 ||
	die "could not set [eal] args in the config copies"

wait_listen() {	# NS PORT PID PROTO
	local i opt=-Hltn

	[ "$4" = udp ] && opt=-Hlun
	for ((i = 0; i < 300; i++)); do
		ip netns exec "$1" ss $opt "sport = :$2" 2>/dev/null | grep -q . &&
			return 0
		kill -0 "$3" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}

forget() {
	local p keep=()

	for p in "${pids[@]}"; do
		[ "$p" = "$1" ] || keep+=("$p")
	done
	pids=("${keep[@]}")
}

# run NAME PROTO CFG_A CFG_B -- ARGS: server in B, client in A.  0 if both
# printed a RESULT line.
run() {
	local name=$1 proto=$2 ca=$3 cb=$4 srv cli
	local -a pa pb

	shift 5
	if [ "$proto" = udp ]; then
		pb=(timeout -k 5 "$TMO" "$UDP_BIN")
		pa=(timeout -k 5 "$TMO" "$UDP_BIN")
	else
		pb=(timeout -k 5 "$TMO" "$RUN" --config "$cb" -- "$RP_BIN")
		pa=(timeout -k 5 "$TMO" "$RUN" --config "$ca" -- "$RP_BIN")
	fi
	ip netns exec "$RP_NS_B" "${pb[@]}" -p "$PORT" "$@" \
		>"$tmp/$name.s.out" 2>"$tmp/$name.s.err" &
	srv=$!
	pids+=("$srv")
	if ! wait_listen "$RP_NS_B" "$PORT" "$srv" "$proto"; then
		log "$name: server did not come up"
		tail -n 5 "$tmp/$name.s.err" >&2
		kill -TERM "$srv" 2>/dev/null
		wait "$srv" 2>/dev/null
		forget "$srv"
		return 1
	fi
	ip netns exec "$RP_NS_A" "${pa[@]}" -p "$PORT" "$@" "$ip_b" \
		>"$tmp/$name.c.out" 2>"$tmp/$name.c.err" &
	cli=$!
	pids+=("$cli")
	wait "$cli"
	forget "$cli"
	if ! grep -q '^RESULT' "$tmp/$name.c.out"; then
		sleep 1
		kill -TERM "$srv" 2>/dev/null
	fi
	wait "$srv"
	forget "$srv"
	PORT=$((PORT + 1))	# no TIME_WAIT surprises
	grep -q '^RESULT' "$tmp/$name.c.out" && grep -q '^RESULT' "$tmp/$name.s.out"
}

# field FILE KEY: value of KEY=... in the RESULT line
field() {
	sed -n "s/^RESULT.* $2=\([^ ]*\).*/\1/p" "$1" | head -n 1
}

# stoplog FILE COUNTER: the engine's counter at exit (0 if it did not move)
stoplog() {
	local v

	v=$(sed -n "s/.*: $2 \([0-9]*\)\$/\1/p" "$1" | tail -n 1)
	echo "${v:-0}"
}

rows=$tmp/rows
: >"$rows"
record() {	# NAME IDLE MODE
	local name=$1 idle=$2 mode=$3 c=$tmp/$1.c s=$tmp/$1.s
	local bca ica bcb icb eva evb dba dbb n_total msgs

	msgs=$(field "$c.out" msgs)
	# the stop-log counters cover the warm-up too
	n_total=$((msgs + WARMUP))

	bca=$(stoplog "$c.err" busy_cycles); ica=$(stoplog "$c.err" idle_cycles)
	bcb=$(stoplog "$s.err" busy_cycles); icb=$(stoplog "$s.err" idle_cycles)
	eva=$(stoplog "$c.err" completion_events); evb=$(stoplog "$s.err" completion_events)
	dba=$(stoplog "$c.err" doorbell_signals); dbb=$(stoplog "$s.err" doorbell_signals)
	# one line per run, space-separated, "-" for not applicable
	echo "$idle $mode $msgs $(field "$c.out" rtt_med_us) $(field "$c.out" rtt_p99_us)" \
	     "$(field "$c.out" rtt_mean_us)" \
	     "$(field "$c.out" app_cpu_us_per_msg) $(field "$s.out" app_cpu_us_per_msg)" \
	     "$(field "$c.out" app_cpu_share) $(field "$s.out" app_cpu_share)" \
	     "$(field "$c.out" engine_cpu_share) $(field "$s.out" engine_cpu_share)" \
	     "$(awk -v b="$bca" -v i="$ica" 'BEGIN { printf "%.3f", (b + i) ? b / (b + i) : 0 }')" \
	     "$(awk -v b="$bcb" -v i="$icb" 'BEGIN { printf "%.3f", (b + i) ? b / (b + i) : 0 }')" \
	     "$(awk -v e="$eva" -v n="$n_total" 'BEGIN { printf "%.2f", e / n }')" \
	     "$(awk -v e="$evb" -v n="$n_total" 'BEGIN { printf "%.2f", e / n }')" \
	     "$(awk -v e="$dba" -v f="$dbb" -v n="$n_total" 'BEGIN { printf "%.2f", (e + f) / n }')" \
	     >>"$rows"
}

log "topology $RP_NS_A/$RP_NS_B; $ITERS round trips of $SIZE bytes (+$WARMUP warm-up) per run, $REPS repetition(s)"
common=(-s "$SIZE" -n "$ITERS" -w "$WARMUP")
for ((rep = 1; rep <= REPS; rep++)); do
	for um in poll block; do
		name=udp-$um-$rep
		log "run $name"
		if run "$name" udp - - -- -m "$um" "${common[@]}"; then
			echo "kernel-udp udp-$um $ITERS $(field "$tmp/$name.c.out" rtt_med_us)" \
			     "$(field "$tmp/$name.c.out" rtt_p99_us) $(field "$tmp/$name.c.out" rtt_mean_us)" \
			     "$(field "$tmp/$name.c.out" app_cpu_us_per_msg) $(field "$tmp/$name.s.out" app_cpu_us_per_msg)" \
			     "$(field "$tmp/$name.c.out" app_cpu_share) $(field "$tmp/$name.s.out" app_cpu_share)" \
			     "- - - - - - -" >>"$rows"
		else
			log "$name failed"
			echo "kernel-udp udp-$um FAILED - - - - - - - - - - - - - -" >>"$rows"
		fi
	done
	for idle in $IDLES; do
		for mode in $MODES; do
			name=$idle-$mode-$rep
			log "run $name"
			if run "$name" rdma "$tmp/a-$idle.ini" "$tmp/b-$idle.ini" -- \
			       -d rocepmd0 -g 0 -m "$mode" -t "$MAX_S" "${common[@]}"; then
				record "$name" "$idle" "$mode"
			else
				log "$name failed (logs: $tmp, BENCH_KEEP=1 keeps them)"
				tail -n 5 "$tmp/$name.c.err" "$tmp/$name.s.err" >&2
				echo "$idle $mode FAILED - - - - - - - - - - - - - -" >>"$rows"
			fi
		done
	done
done

# Table: ratios against the kernel UDP baselines of the same repetition
# (each repetition runs them first): busy-polling UDP for "vs udp-poll",
# blocking UDP for "vs udp-block".
echo
echo "$ITERS round trips of $SIZE bytes per run (+$WARMUP warm-up), $(nproc) CPUs, $(uname -r)"
echo
echo "| idle | wait | msgs | RTT med us | RTT p99 us | RTT mean us | med / udp-poll | med / udp-block | app CPU us/msg (cli/srv) | app CPU share (cli/srv) | engine thread CPU share (A/B) | engine work share, log (A/B) | eventfd signals/msg (A/B) | doorbell signals/msg |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
awk '
function r(x, b) { return (b + 0 > 0 && x + 0 > 0) ? sprintf("%.2f", x / b) : "-" }
$2 == "udp-poll" { bp = ($4 == "FAILED") ? 0 : $4; bb = 0 }
$2 == "udp-block" { bb = ($4 == "FAILED") ? 0 : $4 }
{
	printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s / %s | %s / %s | %s / %s | %s / %s | %s / %s | %s |\n",
	       $1, $2, $3, $4, $5, $6, r($4, bp), r($4, bb), $7, $8, $9, $10,
	       $11, $12, $13, $14, $15, $16, $17
}' "$rows"
exit 0
