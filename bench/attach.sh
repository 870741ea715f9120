#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# bench/attach.sh: programs attached to a host against embedded engines on
# the same ports (issue 12).  A benchmark that prints figures, not a test:
# it exits 0 whatever they are.
#
#   start time  ibv_devinfo launched through rocepmd-run --config (it boots
#               DPDK and an engine) and through rocepmd-run --attach
#   latency     ib_send_lat -s 64 between the two hosts, t_typical
#   bandwidth   ib_write_bw -s 65536, BW average
#   rate        ib_send_bw -s 64 with 1, 2, 4 and 8 attached pairs at once
#               (the processes of a host share its one engine lcore): the
#               sum of their message rates; BENCH_RATE_EVENTS=1 makes the
#               programs wait on CQ events (-e) instead of spinning, which
#               on a machine with fewer CPUs than programs leaves the CPU
#               to the engine
#
# Embedded first (each program its own engine), then a rocepmd-testpmd
# --host on each host and the same programs attached; ratios attached /
# embedded of the same run.  Needs root, perftest and a built tree.
#
# Environment: BENCH_TIMEOUT (120 s per program), BENCH_IDLE (the hosts'
# and engines' idle policy: the configuration's, "sleep", if unset),
# BENCH_REPS (3: latency and bandwidth are the best of that many runs),
# BENCH_PLACE (cross, the default: host A's engine lcore on CPU 1 and B's
# on CPU 0, as config/netns-*.ini place them, the programs on any CPU;
# own: host A, its engine and its programs on CPU 0, B's all on CPU 1,
# embedded and attached alike).
# Its own namespaces rpa<pid>-a/-b; the EXIT trap stops what it started
# (by PID) and removes them.

. "$(dirname "$0")/lib.sh"

bench_topology rpa
command -v ib_send_lat >/dev/null || die "perftest not found (scripts/setup.sh)"
# before anything of ours spins on the CPUs
line=$(bench_line_rtt "$build")
place=${BENCH_PLACE:-cross}
case $place in
cross | own) ;;
*) die "BENCH_PLACE: cross or own, not '$place'" ;;
esac
for s in a b; do
	hosts_cfg "$s" af_packet "$tmp/$s.ini"
	[ -z "${BENCH_IDLE:-}" ] ||
		sed -i "s/^idle = .*/idle = $BENCH_IDLE/" "$tmp/$s.ini"
	if [ "$place" = own ]; then
		c=0
		[ $s = b ] && c=1
		# lcore 0 the main one, 1 the engine's, both on CPU c
		sed -i -e "s/^\[eal\]$/[eal]\nargs = --lcores 0@$c,1@$c/" \
			-e "s/^main_lcore = .*/main_lcore = 0/" \
			-e "s/^lcores = .*/lcores = 1/" \
			-e "s/^lcore = .*/lcore = 1/" "$tmp/$s.ini"
	fi
done

# pin A|B: the CPU the programs of host A or B run on ("taskset -c N"),
# or nothing (BENCH_PLACE=cross: any).
pin() {
	[ "$place" = own ] || return 0
	[ "$1" = A ] && echo "taskset -c 0" || echo "taskset -c 1"
}

# how A|B: the rocepmd-run arguments of host A or B in the current mode.
mode=embedded
how() {
	local h=${1,,}

	if [ "$mode" = embedded ]; then
		echo "--config $tmp/$h.ini"
	else
		echo "--attach=$tmp/$h.sock"
	fi
}

# ns A|B
ns() { [ "$1" = A ] && echo "$RP_NS_A" || echo "$RP_NS_B"; }

# attach_bg NAME A|B ARGV...: for hosts_pair (test/common/hosts.sh), ARGV
# on that host in the current mode; the server's output in
# $tmp/<pair_name>.srv, the client's in <pair_name>.out.
# shellcheck disable=SC2317 # called through hosts_pair
attach_bg() {
	local ns=$RP_NS_A f=$tmp/$pair_name.out

	[ "$2" = B ] && ns=$RP_NS_B f=$tmp/$pair_name.srv
	# shellcheck disable=SC2046
	ip netns exec "$ns" $(pin "$2") timeout "$TMO" "$run" $(how "$2") -- \
		"${@:3}" >"$f" 2>&1 &
	pair_pid=$!
}

# attach_ready PORT PID: the server listens on PORT, or 30 s went by (the
# client then runs anyway).
# shellcheck disable=SC2317 # called through hosts_pair
attach_ready() {
	hosts_listen "$RP_NS_B" "$1" "" 300
}

# pair NAME PORT PROG ARGS...: server in B, client in A; the client's
# output in $tmp/NAME.out; the server's exit status.
# shellcheck disable=SC2034 # the pair_* locals are hosts_pair's
pair() {
	local pair_name=$1 port=$2 prog=$3
	local pair_start=attach_bg pair_ready=attach_ready
	local pair_forget='' pair_grace=''

	shift 3
	local pair_srv=("$prog" -p "$port" "$@")
	local pair_cli=("$prog" -p "$port" "$@" 192.0.2.2)
	hosts_pair "$port"
	return "$pair_src"
}

# start_ms: median wall time of 5 (embedded) or 20 (attached) launches.
start_ms() {
	local n=5 i t0 t1

	[ "$mode" = attached ] && n=20
	for ((i = 0; i < n; i++)); do
		t0=$(date +%s%N)
		# shellcheck disable=SC2046
		ip netns exec "$RP_NS_A" $(pin A) timeout "$TMO" "$run" \
			$(how A) -- ibv_devinfo >/dev/null 2>&1
		t1=$(date +%s%N)
		echo $(((t1 - t0) / 1000))
	done | sort -n | awk '{ v[NR] = $1 } END { printf "%.1f", v[int((NR + 1) / 2)] / 1000 }'
}

# field FILE SIZE COLUMN: column of perftest's result line for SIZE.
field() {
	awk -v s="$2" -v c="$3" '$1 == s { print $c; exit }' "$1"
}

# Best of BENCH_REPS runs (3): a shared machine's figure follows its load.
measure() {
	local r v

	start[$mode]=$(start_ms)
	lat[$mode]=
	bw[$mode]=
	for ((r = 0; r < ${BENCH_REPS:-3}; r++)); do
		pair lat 18700 ib_send_lat -d rocepmd0 -x 0 -F -s 64 -n 10000
		v=$(field "$tmp/lat.out" 64 6)
		lat[$mode]=$(awk -v a="${lat[$mode]}" -v b="$v" \
			'BEGIN { print (a == "" || b + 0 < a + 0) ? b : a }')
		pair bw 18701 ib_write_bw -d rocepmd0 -x 0 -F -s 65536 -n 5000
		v=$(field "$tmp/bw.out" 65536 4)
		bw[$mode]=$(awk -v a="${bw[$mode]}" -v b="$v" \
			'BEGIN { print (a == "" || b + 0 > a + 0) ? b : a }')
	done
}

declare -A start lat bw
measure
mode=attached
for h in A B; do
	ip netns exec "$(ns $h)" timeout $((TMO * 10)) "$app" -- \
		--config "$tmp/${h,,}.ini" --host="$tmp/${h,,}.sock" \
		>"$tmp/host$h.out" 2>&1 &
	bench_pids+=("$!")
	for ((i = 0; i < 300; i++)); do
		[ -S "$tmp/${h,,}.sock" ] && break
		sleep 0.1
	done
	[ -S "$tmp/${h,,}.sock" ] || die "host $h did not start: $(tail -3 "$tmp/host$h.out")"
done
measure

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b + 0 > 0) printf "%.2f", a / b; else print "-" }'; }
# key FILE KEY: a key's value in a configuration
key() { awk -F' *= *' -v k="$2" '$1 == k { print $2; exit }' "$1"; }
echo "attached against embedded, same ports, same run"
if [ "$place" = own ]; then
	echo "placement (own): host A's engine, host and programs on CPU 0, B's on CPU 1, idle $(key "$tmp/a.ini" idle), polling${BENCH_RATE_EVENTS:+ (the rate rows on CQ events)}; line=$line before the run"
else
	echo "placement (cross): host A's engine lcore on CPU $(key "$tmp/a.ini" lcores), host B's on CPU $(key "$tmp/b.ini" lcores), idle $(key "$tmp/a.ini" idle); programs on any of $(nproc) CPUs, polling${BENCH_RATE_EVENTS:+ (the rate rows on CQ events)}; line=$line before the run"
fi
printf "%-28s %12s %12s %8s\n" "" embedded attached ratio
printf "%-28s %12s %12s %8s\n" "start ibv_devinfo (ms)" "${start[embedded]}" \
	"${start[attached]}" "$(ratio "${start[attached]}" "${start[embedded]}")"
printf "%-28s %12s %12s %8s\n" "ib_send_lat 64 B (us)" "${lat[embedded]}" \
	"${lat[attached]}" "$(ratio "${lat[attached]}" "${lat[embedded]}")"
printf "%-28s %12s %12s %8s\n" "ib_write_bw 64 KiB (MB/s)" "${bw[embedded]}" \
	"${bw[attached]}" "$(ratio "${bw[attached]}" "${bw[embedded]}")"

echo "ib_send_bw 64 B${BENCH_RATE_EVENTS:+ -e}, N attached pairs at once (one engine lcore a host)"
printf "%-8s %14s %14s\n" pairs "sum Mmsg/s" "per pair"
for n in 1 2 4 8; do
	jobs_=()
	for ((k = 0; k < n; k++)); do
		pair "rate$k" $((18710 + k)) ib_send_bw -d rocepmd0 -x 0 -F \
			-s 64 -n 20000 ${BENCH_RATE_EVENTS:+-e} &
		jobs_+=("$!")
	done
	for p in "${jobs_[@]}"; do
		wait "$p"
	done
	sum=0
	for ((k = 0; k < n; k++)); do
		r=$(field "$tmp/rate$k.out" 64 5)
		sum=$(awk -v a="$sum" -v b="${r:-0}" 'BEGIN { print a + b }')
	done
	printf "%-8s %14s %14s\n" "$n" "$sum" \
		"$(awk -v a="$sum" -v n="$n" 'BEGIN { printf "%.4f", a / n }')"
done
exit 0
