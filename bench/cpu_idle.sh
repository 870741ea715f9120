# SPDX-License-Identifier: BSD-3-Clause
# shellcheck shell=bash
#
# Sourced by bench/close_to_wire.sh and bench/lib.sh: what the CPUs do
# when idle and what an ICRC costs, printed with the figures (a wake-up
# of a thread asleep on a halted vCPU costs its waker a hypervisor exit:
# guides/config, "Virtual machines"), and a way to measure with
# haltpoll's polling on.
#
#   bench_cpu_idle          "haltpoll:0", "haltpoll:200000", "intel_idle",
#                           "none": as the engine reports it (rp_cpu_idle.c,
#                           rocepmd-testpmd's placement column)
#   bench_wake_cost BUILD   "other X us, same Y us": what a wake-up of a
#                           thread blocked on the other CPU, then on the
#                           waker's, costs the waker (build/bench/wake_cost,
#                           median at 50 us gaps); "not measured" without it
#   bench_line_rtt BUILD    "NNns": a cache line's round trip between CPUs
#                           0 and 1 now (build/bench/line_rtt), which the
#                           host of a virtual machine moves while it runs;
#                           "?" without it
#   bench_line_span B A     "line=B", or "line=B..A" if the host moved it
#                           by half or more between readings B and A
#   bench_icrc_cost BUILD   "64 B SEND frame X ns, 4 KiB frame Y ns, Z us a
#                           64 KiB message ..., CPU and its carry-less
#                           multiply": what the ICRC every RoCE frame takes
#                           at each end costs here (build/bench/icrc_cost)
#   bench_halt_poll_begin   with BENCH_HALT_POLL_NS set: writes it to
#                           haltpoll's guest_halt_poll_ns (root) for the
#                           run, and says so; dies if it cannot
#   bench_halt_poll_end     puts the value from before back (the scripts'
#                           EXIT traps call it)

bench_hp_param=/sys/module/haltpoll/parameters/guest_halt_poll_ns
bench_hp_saved=

bench_cpu_idle() {
	local d ns

	d=$(cat /sys/devices/system/cpu/cpuidle/current_driver 2>/dev/null)
	d=${d:-none}
	if [ "$d" = haltpoll ]; then
		ns=$(cat "$bench_hp_param" 2>/dev/null)
		[[ "$ns" =~ ^[0-9]+$ ]] && d="$d:$ns"
	fi
	echo "$d"
}

bench_wake_cost() {
	local w=$1/bench/wake_cost

	[ -x "$w" ] || { echo "not measured (no $w)"; return 0; }
	"$w" 500 2>/dev/null | awk '$4 == 50 { v[$1] = $5 }
		END { if ("same" in v) printf "other CPU %s us, same CPU %s us\n",
			("other" in v ? v["other"] : "-"), v["same"];
		      else print "not measured" }'
}

bench_line_rtt() {
	local w=$1/bench/line_rtt

	if [ ! -x "$w" ] || [ "$(nproc)" -lt 2 ]; then
		echo "?"
		return 0
	fi
	"$w" 0 1 2>/dev/null | awk '$NF == "ns" { print $(NF - 1) "ns"; ok = 1 }
		END { if (!ok) print "?" }'
}

bench_line_span() {
	awk -v b="$1" -v a="$2" 'BEGIN {
		x = b + 0; y = a + 0
		if (x > 0 && y > 0 && (x > 1.5 * y || y > 1.5 * x))
			print "line=" b ".." a
		else
			print "line=" b }'
}

bench_icrc_cost() {
	local w=$1/bench/icrc_cost

	[ -x "$w" ] || { echo "not measured (no $w)"; return 0; }
	"$w" 2>/dev/null | awk '
		/^64 B SEND/ { s = $(NF - 1) }
		/^IB MTU 4096/ { f = $(NF - 2); m = $NF }
		/^cpu:/ { sub(/^cpu: /, ""); c = $0 }
		END { if (s == "") { print "not measured"; exit }
		      printf "64 B SEND frame %s ns, 4 KiB frame %s ns, %.1f us a 64 KiB message at IB MTU 4096, both ends; %s\n", s, f, m / 1000, c }'
}

bench_halt_poll_begin() {
	local want=${BENCH_HALT_POLL_NS:-}

	[ -n "$want" ] || return 0
	if ! [[ "$want" =~ ^[0-9]+$ ]]; then
		echo "${0##*/}: BENCH_HALT_POLL_NS=$want: not a number of ns" >&2
		exit 1
	fi
	if [ "$(cat /sys/devices/system/cpu/cpuidle/current_driver 2>/dev/null)" != haltpoll ] ||
	   ! bench_hp_saved=$(cat "$bench_hp_param" 2>/dev/null) ||
	   ! echo "$want" 2>/dev/null >"$bench_hp_param"; then
		bench_hp_saved=
		echo "${0##*/}: BENCH_HALT_POLL_NS: cannot set $bench_hp_param (cpuidle driver $(bench_cpu_idle), needs root)" >&2
		exit 1
	fi
	echo "idle CPUs: guest_halt_poll_ns $want for this run (was $bench_hp_saved)"
}

bench_halt_poll_end() {
	[ -n "$bench_hp_saved" ] || return 0
	echo "$bench_hp_saved" >"$bench_hp_param" 2>/dev/null
	bench_hp_saved=
}
