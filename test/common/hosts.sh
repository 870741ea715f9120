# SPDX-License-Identifier: BSD-3-Clause
# shellcheck shell=bash
#
# The two test hosts of scripts/netns-topology, for the tests
# (test/verbs/lib.sh, which the test scripts source) and the benchmarks
# (bench/lib.sh): up and down, their configurations, and "a server on
# host B, then its client on host A".  Sourced; nothing here prints or
# exits: the caller says what failed, its own way.
#
#   hosts_up NS_PREFIX VETH_PREFIX LOG
#                       netns-topology up with namespaces NS_PREFIXa/b and
#                       veth ends VETH_PREFIXa/b (exported as RP_NS_A/B,
#                       RP_VETH_A/B; RP_VETH_MTU, RP_NFT... pass through),
#                       its output in LOG; its exit status
#   hosts_down          netns-topology down if hosts_up ran (hosts_topo 1),
#                       quietly; its exit status
#   hosts_cfg a|b xdp|af_packet FILE
#                       config/netns-a|b-xdp.ini or netns-a|b.ini with the
#                       host's veth end for rp-veth-a|b, into FILE; 1 if
#                       the file had no line to change
#   hosts_listen NS PORT PID TENTHS
#                       until a TCP listener on PORT exists in NS: 0; 1
#                       as soon as PID (unless empty) has exited; 2 after
#                       TENTHS tenths of a second
#   hosts_pair PORT     the server, then the client (below)

hosts_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
hosts_topo=0

hosts_up() {
	export RP_NS_A="${1}a" RP_NS_B="${1}b"
	export RP_VETH_A="${2}a" RP_VETH_B="${2}b"
	hosts_topo=1
	"$hosts_root/scripts/netns-topology" up >"$3" 2>&1
}

hosts_down() {
	[ "$hosts_topo" = 1 ] || return 0
	"$hosts_root/scripts/netns-topology" down >/dev/null 2>&1
}

hosts_cfg() {
	local h=$1 veth=$RP_VETH_A

	[ "$h" = b ] && veth=$RP_VETH_B
	if [ "$2" = xdp ]; then
		sed "s/^netdev = rp-veth-$h$/netdev = $veth/" \
			"$hosts_root/config/netns-$h-xdp.ini" >"$3"
		grep -q "^netdev = $veth$" "$3"
	else
		sed "s/iface=rp-veth-$h\([,[:space:]]\|$\)/iface=$veth\1/" \
			"$hosts_root/config/netns-$h.ini" >"$3"
		grep -q "iface=$veth" "$3"
	fi
}

hosts_listen() {
	local ns=$1 port=$2 pid=$3 n=$4 i

	for ((i = 0; i < n; i++)); do
		if ip netns exec "$ns" ss -Hltn "sport = :$port" 2>/dev/null |
		   grep -q .; then
			return 0
		fi
		if [ -n "$pid" ] && ! kill -0 "$pid" 2>/dev/null; then
			return 1
		fi
		sleep 0.1
	done
	return 2
}

# hosts_pair PORT: the command in the array pair_srv as the server on host
# B, then, once it listens on TCP PORT ("-": a second's head start
# instead, e.g. for the RDMA CM, which resends a REQ sent before the
# server listens), pair_cli as the client on host A; waits for both and
# leaves their exit statuses in pair_crc and pair_src.  What differs
# between callers is in variables (a wrapper may make them local):
#   pair_start   function NAME A|B ARGV...: start ARGV in the background
#                on that host as program NAME (server, client), its PID
#                in pair_pid
#   pair_ready   function PORT PID: returns once the server (PID) listens
#                on PORT, or gives up (its status is not looked at)
#   pair_forget  function PID, called once each PID has been waited for
#                (empty: none)
#   pair_grace   seconds after a failed client before the server gets
#                SIGTERM, since it would wait for ever for a client that
#                is gone (empty: never; it ends by itself or its timeout)
# shellcheck disable=SC2034,SC2154 # the pair_* variables are the caller's
hosts_pair() {
	local hp_port=$1 hp_srv hp_cli

	"$pair_start" server B "${pair_srv[@]}"
	hp_srv=$pair_pid
	if [ "$hp_port" = - ]; then
		sleep 1
	else
		"$pair_ready" "$hp_port" "$hp_srv"
	fi
	"$pair_start" client A "${pair_cli[@]}"
	hp_cli=$pair_pid
	# wait, not the foreground: a signal runs the caller's trap at once
	wait "$hp_cli"
	pair_crc=$?
	[ -z "${pair_forget:-}" ] || "$pair_forget" "$hp_cli"
	if [ "$pair_crc" -ne 0 ] && [ -n "${pair_grace:-}" ]; then
		sleep "$pair_grace"
		kill -TERM "$hp_srv" 2>/dev/null
	fi
	wait "$hp_srv"
	pair_src=$?
	[ -z "${pair_forget:-}" ] || "$pair_forget" "$hp_srv"
}
