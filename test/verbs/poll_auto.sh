#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# poll_auto.sh: polling that cannot collapse, with the default
# configurations (config/netns-{a,b}.ini: af_packet, no inline_us, so
# inline_us = auto).  On this project's machines (two CPUs) the two hosts'
# polling programs and engine lcores are four spinners on two CPUs: without
# inline passes ibv_rc_pingpong took 17 ms an iteration.
#
#   1. rocepmd-run --check says what auto decides, and why: "on" on a
#      machine with fewer than three CPUs, otherwise "on-cpu"; under
#      taskset onto the engine lcore's own CPU, "on" whatever the machine;
#      and what the CPUs do when idle, as sysfs says it.
#   2. ibv_rc_pingpong polling, then on events, between the hosts: both
#      pass (-c: the data checked); the engines log the decision once, and
#      the polling engines' counters show that the programs' threads ran
#      the passes (inline_passes) and that the lcores stood aside; the
#      event run's engines ran no pass for a thread that had armed its CQ
#      only, so its lcores did the work (polls_busy).
#   3. The figures, usec/iter polling and on events, are printed (the
#      ratio is a benchmark's to judge: bench/inline.sh, bench/sweep.py).

. "$(dirname "$0")/lib.sh"

rv_need_env
rv_need_root
rv_need_prog ibv_rc_pingpong ibverbs-utils
rv_need_prog nft nftables
export RV_PORT=af_packet
rv_topology pollauto
grep -q '^inline_us' "$RV_CFG_A" "$RV_CFG_B" &&
	rv_fail "config/netns-[ab].ini set inline_us: this test is about the default"
# The engine's INFO lines: its decision, its counters at stop.
sed -i 's/^\[eal\]$/[eal]\nargs = --log-level=rocepmd:info/' \
	"$RV_CFG_A" "$RV_CFG_B"

# 1. --check
chk=$("$RP_RUN" --config "$RV_CFG_A" --check) ||
	rv_fail "rocepmd-run --check failed: $chk"
line=$(grep '^inline passes: ' <<<"$chk") ||
	rv_fail "--check prints no 'inline passes:' line: $chk"
rv_log "--check: $line"
want=on-cpu
[ "$(nproc)" -lt 3 ] && want=on
grep -q "^inline passes: $want (auto: " <<<"$line" ||
	rv_fail "--check on $(nproc) CPUs: expected 'inline passes: $want (auto: ...)'"
# ... and what the CPUs do when idle, as sysfs says it (rp_cpu_idle.c)
idle=$(grep '^idle CPUs: ' <<<"$chk") ||
	rv_fail "--check prints no 'idle CPUs:' line: $chk"
rv_log "--check: $idle"
drv=$(cat /sys/devices/system/cpu/cpuidle/current_driver 2>/dev/null)
ns=$(cat /sys/module/haltpoll/parameters/guest_halt_poll_ns 2>/dev/null)
case ${drv:-none}/$ns in
haltpoll/0) want="halts at once" ;;
haltpoll/[0-9]*) want="polls $ns ns before it halts" ;;
*) want="cpuidle driver ${drv:-none}" ;;
esac
grep -qF "$want" <<<"$idle" ||
	rv_fail "cpuidle ${drv:-none}, guest_halt_poll_ns '$ns': --check does not say '$want': $idle"
lc=$(sed -n 's/^lcores = \([0-9]*\)$/\1/p' "$RV_CFG_A")
line=$(taskset -c "$lc" "$RP_RUN" --config "$RV_CFG_A" --check |
	grep '^inline passes: ')
rv_log "--check under taskset -c $lc (the engine lcore's CPU): $line"
grep -q "^inline passes: on (auto: the program may use CPU(s) $lc," <<<"$line" ||
	rv_fail "a program on the engine lcore's own CPU must get inline passes: $line"

# counter NAME FILE: the sum of an engine lcore counter in an engine log.
counter() {
	awk -v n="$1" '$0 ~ ": engine lcore [0-9]+: " n " [0-9]+$" { s += $NF }
		END { print s + 0 }' "$2"
}

iters=2000
declare -A usec
for mode in poll event; do
	rv_pingpong ibv_rc_pingpong 1 "$iters" "$mode" -c
	usec[$mode]=$(sed -n 's/^.* iters in .* = \([0-9.]*\) usec\/iter$/\1/p' \
		"$rv_tmp/client.out")
	for side in client server; do
		err=$rv_tmp/$side.err
		cp "$err" "$rv_tmp/$side-$mode.err"
		n=$(grep -c "inline passes on: auto: " "$err")
		[ "$n" -eq 1 ] ||
			rv_fail "$side ($mode): the decision logged $n times, not once"
		n=$(grep -cF "idle CPUs: " "$err")
		[ "$n" -eq 1 ] ||
			rv_fail "$side ($mode): the CPUs' idle logged $n times, not once"
		ip=$(counter inline_passes "$err")
		sa=$(counter stand_asides "$err")
		ib=$(counter inline_busy_cycles "$err")
		rv_log "$side ($mode): inline_passes $ip, inline_busy_cycles $ib, stand_asides $sa, starved_passes $(counter starved_passes "$err"), ${usec[$mode]} usec/iter (client)"
		if [ "$mode" = poll ]; then
			# every round trip: at least one pass in the program
			[ "$ip" -ge "$iters" ] ||
				rv_fail "$side polling: $ip inline passes for $iters round trips"
			[ "$sa" -gt 0 ] ||
				rv_fail "$side polling: the lcore never stood aside"
			# the engine's work ran on the program's thread
			[ "$ib" -gt 0 ] ||
				rv_fail "$side polling: no inline pass found work"
		fi
	done
done
rv_log "PASS: default configurations, auto -> inline passes; ibv_rc_pingpong 1 B: polling ${usec[poll]} us/iter, events ${usec[event]} us/iter"
