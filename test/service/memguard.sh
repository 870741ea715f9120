#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# memguard.sh APP MEMGUARD CASE: an attached program's memory is reached
# through its address space, never through its PID (issue 24, pmd/transport/rp_mem.c).
# rp_memguard's peer (host A) proves a WRITE and a READ through the
# target's rkey work, then the target (host B) stops being the program that
# registered the memory while its connection to the host lives on, a victim
# maps the same address with its own bytes, and the peer's WRITE and READ
# through the old rkey must both fail and touch nothing:
#
#   exec       the target clears close-on-exec on every descriptor, the
#              attach socket included, and exec()s the victim (no
#              environment, as a setuid program runs)
#   pid-reuse  host B and the target run in a PID namespace of their own;
#              the target forks a child that keeps the attach socket and
#              exits; the victim is started with the target's PID
#              (ns_last_pid) and maps the MR's address
#
# Host B must notice (its address_space_gone count, and no process left
# attached) and destroy the target's objects; the trigger waits 5 s for
# that at most, so a host that never notices is attacked all the same.
app=${1:?usage: $0 APP MEMGUARD CASE}
mg=${2:?usage: $0 APP MEMGUARD CASE}
case=${3:?usage: $0 APP MEMGUARD CASE}
# shellcheck source=../verbs/lib.sh
. "$RP_SRC_ROOT/test/verbs/lib.sh"

rv_need_env
rv_need_root
rv_need_prog unshare util-linux

rv_topology "mg${case//-/}"
# shellcheck source=host_lib.sh
. "$RP_SRC_ROOT/test/service/host_lib.sh"
trigger=$rv_tmp/attack

# wait_gone: until host B has no process attached (5 s at most).
wait_gone() {
	local i

	for ((i = 0; i < 50; i++)); do
		[ "$(attached B)" = 0 ] && return 0
		sleep 0.1
	done
	rv_log "host B still serves the target after 5 s: attacking all the same"
}

# peer_check: the peer's verdict, the counter that proves host B noticed.
peer_check() {
	wait "$peer"
	prc=$?
	rv_forget "$peer"
	rv_show peer
	[ "$prc" -eq 0 ] || { rv_show target; rv_show hostB; rv_fail "the old rkey reached the new program (peer exit $prc)"; }
	gone=$(tel B /rocepmd/clients | python3 -c \
		'import json, sys; print(json.load(sys.stdin)["address_space_gone"])')
	[ "$gone" -ge 1 ] || rv_fail "host B never noticed the address space was gone"
	grep -q "its address space is gone" "$rv_tmp/hostB.err" ||
		rv_fail "host B did not log the client whose address space went"
	rv_log "host B: address_space_gone $gone"
}

host_start A
case $case in
exec)
	host_start B
	host_baseline
	sv_bg peer A -- "$mg" peer 18620 exec "$trigger"
	peer=$rv_last_pid
	rv_wait_listen "$RP_NS_A" 18620 "$peer" peer
	sv_bg target B -- "$mg" target "$RV_IP_A" 18620 exec
	tgt=$rv_last_pid
	rv_wait_output peer "victim: READY" "$peer"
	wait_gone
	touch "$trigger"
	peer_check
	wait "$tgt" || { rv_show target; rv_fail "the exec'd victim failed"; }
	rv_forget "$tgt"
	check_clean
	;;
pid-reuse)
	# Host B, the target and the victim in a PID namespace: ns_last_pid
	# there decides the next PID, which host B sees as the peer's.
	base_a=$(counts A)
	TEL_B=
	export RV_CFG_B SOCK_B app mg RV_IP_A rv_tmp RV_TIMEOUT
	ip netns exec "$RP_NS_B" unshare --pid --fork --kill-child --mount-proc \
		bash -c '
		"$app" -- --config "$RV_CFG_B" --host="$SOCK_B" \
			>"$rv_tmp/hostB.out" 2>"$rv_tmp/hostB.err" &
		host=$!
		for ((i = 0; i < 300; i++)); do
			grep -q "(telemetry" "$rv_tmp/hostB.out" && break
			sleep 0.1
		done
		"$RP_RUN" --attach="$SOCK_B" -- "$mg" target "$RV_IP_A" 18620 fork \
			>"$rv_tmp/target.out" 2>"$rv_tmp/target.err" || exit 3
		pid=$(sed -n "s/^target pid \([0-9]*\) buf \([0-9a-f]*\)$/\1/p" "$rv_tmp/target.out")
		buf=$(sed -n "s/^target pid \([0-9]*\) buf \([0-9a-f]*\)$/\2/p" "$rv_tmp/target.out")
		[ -n "$pid" ] || exit 4
		while [ -d "/proc/$pid" ]; do sleep 0.05; done
		for ((try = 0; try < 20; try++)); do
			echo $((pid - 1)) >/proc/sys/kernel/ns_last_pid
			"$mg" victim-tcp "$RV_IP_A" 18620 "$buf" 65536 "$pid" \
				>"$rv_tmp/victim.out" 2>"$rv_tmp/victim.err"
			rc=$?
			[ "$rc" -ne 77 ] && break
		done
		echo "victim pid $pid exit $rc after $try retries" >>"$rv_tmp/victim.out"
		touch "$rv_tmp/victim.done"
		# Until the script has read the host counters (bounded: a
		# script that failed before never says so).
		for ((i = 0; i < 1200; i++)); do
			[ -e "$rv_tmp/ns.end" ] && break
			sleep 0.1
		done
		kill -TERM "$host"
		wait "$host"
		exit "$rc"
		' &
	ns=$!
	rv_pids+=("$ns")
	sv_bg peer A -- "$mg" peer 18620 fork "$trigger"
	peer=$rv_last_pid
	rv_wait_output hostB "(telemetry" "$ns"
	TEL_B=$(sed -n 's/.*(telemetry \(.*\))$/\1/p' "$rv_tmp/hostB.out")
	rv_wait_output peer "victim: READY" "$peer"
	grep -q "victim: READY pid $(sed -n 's/^target pid \([0-9]*\) .*/\1/p' "$rv_tmp/target.out")$" \
		"$rv_tmp/peer.out" || { rv_show peer; rv_show target; rv_fail "the victim does not have the target's PID"; }
	rv_log "the victim runs with the target's PID: $(grep 'victim:' "$rv_tmp/peer.out")"
	wait_gone
	touch "$trigger"
	peer_check
	touch "$rv_tmp/ns.end"
	wait "$ns"
	nrc=$?
	rv_forget "$ns"
	cat "$rv_tmp/victim.out"
	[ "$nrc" -eq 0 ] || { rv_show victim; rv_show hostB; rv_fail "the namespace's victim or host failed ($nrc)"; }
	;;
*)
	rv_fail "unknown case '$case'"
	;;
esac
rv_log "PASS: $case"
