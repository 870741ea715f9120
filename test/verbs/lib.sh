# SPDX-License-Identifier: BSD-3-Clause
# shellcheck shell=bash
#
# Sourced by the test/verbs scripts: unmodified verbs programs run through
# rocepmd-run in two network namespaces (scripts/netns-topology).
#
# Environment (set by test/verbs/meson.build):
#   RP_SRC_ROOT    source tree (scripts/netns-topology, config/)
#   RP_RUN         rocepmd-run of the build tree
#   RP_ICRC_CHECK  test/verbs/icrc_check of the build tree
#   RV_TIMEOUT     seconds any one program may run (default 300)
#
# Every script gets its own topology: namespaces rv-<tag>-a/-b, veth ends
# rv<tag>a/rv<tag>b, so a test never touches a developer's rp-a/rp-b and
# a leftover from a killed run is replaced, not reused.  The EXIT trap stops
# the processes the script started (by PID) and removes the topology on
# every path out, failures and signals included.

set -uo pipefail

# shellcheck source=../common/hosts.sh
. "$(dirname "${BASH_SOURCE[0]}")/../common/hosts.sh"

rv_prog=${0##*/}
rv_pids=()
rv_keep=${RV_KEEP:-0}
RV_TIMEOUT=${RV_TIMEOUT:-300}

rv_log() {
	echo "$rv_prog: $*"
}

rv_fail() {
	echo "$rv_prog: FAIL: $*" >&2
	exit 1
}

# Exit 77 (meson: skipped) for a prerequisite that is genuinely missing.
rv_skip() {
	echo "$rv_prog: SKIP: $*" >&2
	exit 77
}

rv_need_root() {
	[ "$(id -u)" -eq 0 ] || rv_skip "needs root (network namespaces, veth)"
}

# rv_need_prog PROG PACKAGE
rv_need_prog() {
	command -v "$1" >/dev/null 2>&1 ||
		rv_skip "$1 not found (apt-get install $2)"
}

rv_need_env() {
	local v

	for v in RP_SRC_ROOT RP_RUN; do
		[ -n "${!v:-}" ] || rv_fail "$v is not set (run through meson test)"
	done
	[ -x "$RP_RUN" ] || rv_fail "rocepmd-run not found at $RP_RUN"
}

# Stop what we started: TERM, up to 5 s, then KILL.  By PID only.
rv_stop_pids() {
	local pid i

	for pid in "${rv_pids[@]}"; do
		kill -TERM "$pid" 2>/dev/null
	done
	for pid in "${rv_pids[@]}"; do
		for ((i = 0; i < 50; i++)); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		if kill -0 "$pid" 2>/dev/null; then
			rv_log "process $pid ignored SIGTERM: SIGKILL"
			kill -KILL "$pid" 2>/dev/null
		fi
		wait "$pid" 2>/dev/null
	done
	rv_pids=()
}

rv_cleanup() {
	local rc=$?

	trap - EXIT INT TERM HUP
	rv_stop_pids
	if [ "$hosts_topo" -eq 1 ]; then
		hosts_down || echo "$rv_prog: netns-topology down failed" >&2
		if ip netns list 2>/dev/null | awk '{ print $1 }' |
		   grep -qxE -- "$RP_NS_A|$RP_NS_B"; then
			echo "$rv_prog: namespace left behind after cleanup" >&2
			[ "$rc" -eq 0 ] && rc=1
		fi
	fi
	if [ -n "${rv_ns1:-}" ]; then
		ip netns delete "$rv_ns1" 2>/dev/null
	fi
	if [ -n "${rv_tmp:-}" ] && [ -d "$rv_tmp" ]; then
		if [ "$rv_keep" = 1 ]; then
			echo "$rv_prog: kept $rv_tmp"
		else
			rm -rf "$rv_tmp"
		fi
	fi
	exit "$rc"
}

trap rv_cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

rv_tmp=$(mktemp -d "${TMPDIR:-/tmp}/rv-${rv_prog%.sh}-XXXXXX") ||
	rv_fail "mktemp failed"

# rv_topology TAG: own namespaces and veth, and configs for them.
# RV_PORT says how the two hosts' ports are bound (default xdp):
#   xdp        config/netns-{a,b}-xdp.ini, the demo's: netdev = <veth end>,
#              rocepmd's XDP program steering RoCEv2 to the port's AF_XDP
#              socket and everything else to the kernel; veth MTU 3000
#              (af_xdp's native mode on a veth), no nftables rule, IB MTU
#              2048, addresses and MAC the kernel's
#   af_packet  config/netns-{a,b}.ini: net_af_packet on the veth end with
#              the addresses in the file, veth MTU 9000, IB MTU 4096, the
#              nftables rule keeping the kernel from answering RoCEv2; for
#              what XDP cannot do on a veth (IB MTU 4096, captures of the
#              veth, loss in its egress hook, the af_packet fallback)
# RV_IDLE and RV_INLINE_US, when set, replace the configs' idle policy and
# inline_us.
# Sets RV_CFG_A, RV_CFG_B (the config with the veth renamed), RV_IP_A,
# RV_IP_B (the devices' IPv4 addresses), RV_IP6_A, RV_IP6_B (their first
# global IPv6 addresses, GID index 2).
rv_topology() {
	local tag=$1 port=${RV_PORT:-xdp} h veth

	[ ${#tag} -le 11 ] || rv_fail "internal: topology tag '$tag' too long"
	case $port in
	xdp) export RP_NFT=0 RP_VETH_MTU=3000 ;;
	af_packet) export RP_NFT=1 RP_VETH_MTU=9000 ;;
	*) rv_fail "RV_PORT must be xdp or af_packet, not '$port'" ;;
	esac
	RV_PORT=$port
	if ! hosts_up "rv-$tag-" "rv$tag" "$rv_tmp/topology.log"; then
		cat "$rv_tmp/topology.log" >&2
		rv_fail "scripts/netns-topology up failed"
	fi
	rv_log "topology ($port): $(tr '\n' ';' <"$rv_tmp/topology.log")"
	RV_CFG_A=$rv_tmp/netns-a.ini
	RV_CFG_B=$rv_tmp/netns-b.ini
	for h in a b; do
		hosts_cfg "$h" "$port" "$rv_tmp/netns-$h.ini" && continue
		veth=$RP_VETH_A
		[ "$h" = b ] && veth=$RP_VETH_B
		[ "$port" = xdp ] &&
			rv_fail "config/netns-$h-xdp.ini has no 'netdev = rp-veth-$h' to point at $veth"
		rv_fail "config/netns-$h.ini has no iface=rp-veth-$h to point at $veth"
	done
	if [ -n "${RV_IDLE:-}" ]; then
		# The engine idle policy under test (busy, yield, sleep, adaptive).
		sed -i "s/^idle = .*/idle = $RV_IDLE/" "$RV_CFG_A" "$RV_CFG_B"
		grep -q "^idle = $RV_IDLE" "$RV_CFG_A" ||
			rv_fail "$RV_CFG_A has no idle key to set to $RV_IDLE"
	fi
	if [ -n "${RV_INLINE_US:-}" ]; then
		# inline passes (the xdp configs' inline_us = 100) on or off
		sed -i "s/^inline_us = .*/inline_us = $RV_INLINE_US/" \
			"$RV_CFG_A" "$RV_CFG_B"
		grep -q "^inline_us = $RV_INLINE_US" "$RV_CFG_A" ||
			sed -i "s/^\[engine\]$/[engine]\ninline_us = $RV_INLINE_US/" \
				"$RV_CFG_A" "$RV_CFG_B"
	fi
	# The devices' addresses are the interfaces' (netdev) or the files'.
	RV_IP_A=$(rv_cfg_ipv4 "$RV_CFG_A")
	RV_IP_B=$(rv_cfg_ipv4 "$RV_CFG_B")
	RV_IP6_A=$(rv_cfg_ipv6 "$RV_CFG_A")
	RV_IP6_B=$(rv_cfg_ipv6 "$RV_CFG_B")
	if [ "$port" = xdp ]; then
		RV_IP_A=$(rv_if_addr "$RP_NS_A" "$RP_VETH_A" -4)
		RV_IP_B=$(rv_if_addr "$RP_NS_B" "$RP_VETH_B" -4)
		RV_IP6_A=$(rv_if_addr "$RP_NS_A" "$RP_VETH_A" -6)
		RV_IP6_B=$(rv_if_addr "$RP_NS_B" "$RP_VETH_B" -6)
	fi
	if [ -z "$RV_IP_A" ] || [ -z "$RV_IP_B" ]; then
		rv_fail "no IPv4 address for the devices ($port)"
	fi
}

# rv_if_addr NS IFACE -4|-6: the first global address of IFACE in NS,
# without the prefix length.
rv_if_addr() {
	ip -n "$1" "$3" -o addr show dev "$2" scope global |
		awk '{ sub("/.*", "", $4); print $4; exit }'
}

# First address of "ipv6 = ADDR/N[, ...]" of a config, without the prefix
# length; empty without one.
rv_cfg_ipv6() {
	sed -n 's/^[[:space:]]*ipv6[[:space:]]*=[[:space:]]*\([0-9a-fA-F:]*\).*/\1/p' "$1" |
		head -n 1
}

# First "ipv4 = a.b.c.d/len" of a config, without the prefix length.
rv_cfg_ipv4() {
	sed -n 's/^[[:space:]]*ipv4[[:space:]]*=[[:space:]]*\([0-9.]*\).*/\1/p' "$1" |
		head -n 1
}

# Where EAL 22.11 puts runtime directories (eal_create_runtime_dir());
# an embedded engine's is rocepmd-PID in it, the program's PID.
rv_eal_rundir() {
	if [ "$(id -u)" -eq 0 ]; then
		echo /var/run/dpdk
	else
		echo "${XDG_RUNTIME_DIR:-/tmp}/dpdk"
	fi
}

# IB MTU of [port0] of a config that sets it (without an mtu line, or
# with mtu = auto, the port decides at start: ibv_devinfo tells).
rv_cfg_mtu() {
	local m

	m=$(sed -n 's/^[[:space:]]*mtu[[:space:]]*=[[:space:]]*\([0-9]*\).*/\1/p' "$1" |
		head -n 1)
	[ -n "$m" ] || rv_fail "$1: no numeric mtu line"
	echo "$m"
}

# rv_bg NAME NS CONFIG -- PROGRAM ARGS...: rocepmd-run PROGRAM in namespace NS
# with CONFIG, bounded by RV_TIMEOUT, in the background; output in
# $rv_tmp/NAME.out and NAME.err; the PID is appended to rv_pids and left
# in rv_last_pid.
rv_bg() {
	local name=$1 ns=$2 cfg=$3

	shift 4
	# A simple command, not a function: $! is then the PID of ip, which
	# execs timeout, which passes a signal on to the program.
	ip netns exec "$ns" timeout -k 10 "$RV_TIMEOUT" \
		"$RP_RUN" --config "$cfg" -- "$@" \
		>"$rv_tmp/$name.out" 2>"$rv_tmp/$name.err" &
	rv_last_pid=$!
	rv_pids+=("$rv_last_pid")
}

# rv_fg NAME NS CONFIG -- PROGRAM ARGS...: rv_bg, then wait for it; the exit
# status is left in rv_status.  Waiting with "wait" rather than running in
# the foreground lets a signal run the EXIT trap at once.
rv_fg() {
	rv_bg "$@"
	wait "$rv_last_pid"
	rv_status=$?
	rv_forget "$rv_last_pid"
}

# Forget a PID that has been waited for.
rv_forget() {
	local pid keep=()

	for pid in "${rv_pids[@]}"; do
		[ "$pid" = "$1" ] || keep+=("$pid")
	done
	rv_pids=("${keep[@]}")
}

# rv_capture_start NAME NS DEV FILTER [OPTION...]: tcpdump on DEV in NS
# into $rv_tmp/NAME.pcap (whole frames, FILTER, tcpdump's OPTIONs), its
# messages in $rv_tmp/tcpdump-NAME.err; returns once it listens.
declare -A rv_cap_pid
rv_capture_start() {
	local name=$1 ns=$2 dev=$3 filter=$4 i

	shift 4
	ip netns exec "$ns" timeout -k 5 "$RV_TIMEOUT" tcpdump -i "$dev" -n \
		-U -s 0 "$@" -w "$rv_tmp/$name.pcap" "$filter" \
		2>"$rv_tmp/tcpdump-$name.err" &
	rv_cap_pid[$name]=$!
	rv_pids+=("$!")
	for ((i = 0; i < 100; i++)); do
		grep -q 'listening on' "$rv_tmp/tcpdump-$name.err" && return 0
		kill -0 "$!" 2>/dev/null || break
		sleep 0.1
	done
	cat "$rv_tmp/tcpdump-$name.err" >&2
	rv_fail "tcpdump on $dev in $ns did not start"
}

# rv_capture_stop NAME: the capture ends, its file complete.
rv_capture_stop() {
	local pid=${rv_cap_pid[$1]}

	kill -INT "$pid" 2>/dev/null
	wait "$pid"
	rv_forget "$pid"
}

# rv_wait_listen NS PORT PID NAME: until a TCP listener on PORT exists in NS
# (the pingpong server is up), at most 60 s, failing early if PID died.
rv_wait_listen() {
	local ns=$1 port=$2 pid=$3 name=$4 st

	hosts_listen "$ns" "$port" "$pid" 600
	st=$?
	[ "$st" -eq 0 ] && return 0
	rv_show "$name"
	[ "$st" -eq 1 ] && rv_fail "$name exited before listening on TCP port $port"
	rv_fail "$name: no TCP listener on port $port after 60 s"
}

# rv_wait_output NAME TEXT PID: until NAME's stdout has TEXT, at most 60 s,
# failing early if PID died.
rv_wait_output() {
	local name=$1 text=$2 pid=$3 i

	for ((i = 0; i < 600; i++)); do
		grep -qF -- "$text" "$rv_tmp/$name.out" 2>/dev/null && return 0
		if ! kill -0 "$pid" 2>/dev/null; then
			rv_show "$name"
			rv_fail "$name exited before printing '$text'"
		fi
		sleep 0.1
	done
	rv_show "$name"
	rv_fail "$name: no '$text' after 60 s"
}

# Print a program's captured output, prefixed.
rv_show() {
	local name=$1

	if [ -s "$rv_tmp/$name.out" ]; then
		sed "s/^/  $name stdout: /" "$rv_tmp/$name.out"
	fi
	if [ -s "$rv_tmp/$name.err" ]; then
		tail -n 40 "$rv_tmp/$name.err" | sed "s/^/  $name stderr: /"
	fi
}

# rv_has NAME REGEX WHAT: NAME's stdout has a line matching REGEX (grep
# -E), logged without its indentation; else the test fails naming WHAT.
rv_has() {
	grep -Eq "$2" "$rv_tmp/$1.out" || rv_fail "$1: no line for $3 (/$2/)"
	rv_log "$1: $3: $(grep -Em1 "$2" "$rv_tmp/$1.out" | sed 's/^[[:space:]]*//')"
}

# rv_check_pingpong NAME SIZE ITERS: the result lines of an ibv_*_pingpong,
# shown in the log and checked against what was asked for:
#   8192000 bytes in 0.51 seconds = 128.50 Mbit/sec
#   1000 iters in 0.51 seconds = 510.00 usec/iter
rv_check_pingpong() {
	local name=$1 size=$2 iters=$3 f bl il b i

	f=$rv_tmp/$name.out
	bl=$(grep -E '^[0-9]+ bytes in [0-9.]+ seconds = [0-9.]+ Mbit/sec$' "$f")
	il=$(grep -E '^[0-9]+ iters in [0-9.]+ seconds = [0-9.]+ usec/iter$' "$f")
	[ -n "$bl" ] || rv_fail "$name printed no 'bytes in ... seconds' line"
	[ -n "$il" ] || rv_fail "$name printed no 'iters in ... usec/iter' line"
	rv_log "$name: $bl"
	rv_log "$name: $il"
	b=${bl%% *}
	i=${il%% *}
	[ "$b" -eq $((size * iters * 2)) ] ||
		rv_fail "$name: $b bytes, expected $((size * iters * 2)) (2 x $size x $iters)"
	[ "$i" -eq "$iters" ] || rv_fail "$name: $i iters, expected $iters"
}

# The tests' side of hosts_pair (test/common/hosts.sh).
# rv_pair_bg NAME A|B ARGV...: rv_bg ARGV in that host's namespace with its
# configuration (RV_CFG_A, RV_CFG_B); rv_pair_bg_log logs it first.
rv_pair_bg() {
	local ns=$RP_NS_A cfg=$RV_CFG_A

	[ "$2" = B ] && ns=$RP_NS_B cfg=$RV_CFG_B
	rv_bg "$1" "$ns" "$cfg" -- "${@:3}"
	pair_pid=$rv_last_pid
}

rv_pair_bg_log() {
	local ns=$RP_NS_A

	[ "$2" = B ] && ns=$RP_NS_B
	rv_log "$1 ($ns): ${*:3}"
	rv_pair_bg "$@"
}

# rv_pair_ready PORT PID: the server listens on PORT, or the test fails.
rv_pair_ready() {
	rv_wait_listen "$RP_NS_B" "$1" "$2" server
}

# rv_pair PORT PROG ARGS...: PROG ARGS as server in B, then as client in A
# with B's address appended, once the server listens on TCP PORT ("-":
# after a second).  Both must exit 0; their output is shown.
# shellcheck disable=SC2034 # the pair_* locals are hosts_pair's
rv_pair() {
	local port=$1 prog=$2
	local pair_start=rv_pair_bg_log pair_ready=rv_pair_ready
	local pair_forget=rv_forget pair_grace=1

	shift 2
	local pair_srv=("$prog" "$@") pair_cli=("$prog" "$@" "$RV_IP_B")
	hosts_pair "$port"
	rv_show client
	rv_show server
	[ "$pair_crc" -ne 124 ] || rv_fail "client timed out after $RV_TIMEOUT s"
	[ "$pair_crc" -eq 0 ] || rv_fail "client exited with status $pair_crc"
	[ "$pair_src" -ne 124 ] || rv_fail "server timed out after $RV_TIMEOUT s"
	[ "$pair_src" -eq 0 ] || rv_fail "server exited with status $pair_src"
}

# rv_pp_iters MODE: the round trips of a pingpong in MODE (poll or event):
# RV_ITERS, or 10000 with events and 3000 polling (both programs and both
# engines spin on two CPUs, so every round trip waits for a scheduler
# slice; 3000 rounds prove as much as 10000 at a third of the time).
rv_pp_iters() {
	case $1 in
	poll) echo "${RV_ITERS:-3000}" ;;
	event) echo "${RV_ITERS:-10000}" ;;
	*) rv_fail "MODE must be poll or event, not '$1'" ;;
	esac
}

# rv_pingpong PROG SIZE ITERS MODE [EXTRA ARGS...]: server in B, client in A,
# over GID index RV_GID (default 0, IPv4).
# Both must exit 0; the client's and the server's result lines are checked.
rv_pingpong() {
	local prog=$1 size=$2 iters=$3 mode=$4 port=18515
	local args

	shift 4
	args=(-d rocepmd0 -g "${RV_GID:-0}" -s "$size" -n "$iters" -p "$port" "$@")
	[ "$mode" = event ] && args+=(-e)
	rv_pair "$port" "$prog" "${args[@]}"
	rv_check_pingpong client "$size" "$iters"
	rv_check_pingpong server "$size" "$iters"
}

# rv_veth1 TAG [bridge]: one namespace rv-<tag> holding both ends
# rv<tag>a/b of a veth pair (MTU 9000, no addresses), for one process with
# two af_packet devices; removed on exit.  With "bridge", rv<tag>a and
# rv<tag>b are two veth pairs instead, whose other ends (rv<tag>am/bm)
# a bridge rv<tag>br joins: frames cross the kernel's forwarding path,
# where rv_nft_loss_bridge drops them for real.  Sets RV_NS1, RV_IF_A,
# RV_IF_B.
rv_veth1() {
	local i br=rv${1}br

	RV_NS1=rv-$1
	RV_IF_A=rv${1}a
	RV_IF_B=rv${1}b
	ip netns delete "$RV_NS1" 2>/dev/null
	ip netns add "$RV_NS1" || rv_fail "ip netns add $RV_NS1"
	rv_ns1=$RV_NS1
	if [ "${2:-}" != bridge ]; then
		ip -n "$RV_NS1" link add "$RV_IF_A" numrxqueues 1 \
			numtxqueues 1 type veth peer name "$RV_IF_B" \
			numrxqueues 1 numtxqueues 1 ||
			rv_fail "ip link add veth $RV_IF_A/$RV_IF_B"
		set -- "$RV_IF_A" "$RV_IF_B"
	else
		ip -n "$RV_NS1" link add "$br" type bridge ||
			rv_fail "ip link add bridge $br"
		ip -n "$RV_NS1" link set "$br" mtu 9000 up
		for i in "$RV_IF_A" "$RV_IF_B"; do
			ip -n "$RV_NS1" link add "$i" numrxqueues 1 \
				numtxqueues 1 type veth peer name "${i}m" ||
				rv_fail "ip link add veth $i/${i}m"
			ip -n "$RV_NS1" link set "${i}m" master "$br" ||
				rv_fail "ip link set ${i}m master $br"
		done
		set -- "$RV_IF_A" "$RV_IF_B" "${RV_IF_A}m" "${RV_IF_B}m"
	fi
	for i in "$@"; do
		ip -n "$RV_NS1" link set "$i" mtu 9000 up ||
			rv_fail "ip link set $i up"
	done
}

# rv_cfg_head FILE PREFIX MB: a configuration's [eal] (no hugepages, MB of
# memory, EAL file prefix PREFIX) and [engine] (the program's thread on
# lcore 0, the engine's one lcore 1, yielding when idle), for one process
# whose [portN] sections follow.
rv_cfg_head() {
	cat >"$1" <<-EOC
	[eal]
	args = --no-huge -m $3 --no-pci --no-shconf --file-prefix=$2

	[engine]
	main_lcore = 0
	lcores = 1
	idle = yield
	idle_us = 50
	EOC
}

# rv_veth1_cfg FILE PREFIX MTU [DEVARGS]: a configuration of two devices
# of one process on the ends of rv_veth1's veth: rocepmd0 = 192.0.2.1 on
# RV_IF_A, rocepmd1 = 192.0.2.2 on RV_IF_B, EAL file prefix PREFIX, IB MTU
# MTU; DEVARGS are added to both af_packet ports.
rv_veth1_cfg() {
	local f=$1 prefix=$2 mtu=$3 extra=${4:-} p

	rv_cfg_head "$f" "$prefix" 512
	for p in 0 1; do
		local ifn=$RV_IF_A
		[ "$p" = 1 ] && ifn=$RV_IF_B
		cat >>"$f" <<-EOC

		[port$p]
		device = net_af_packet$p,iface=$ifn,qpairs=1,framesz=5120,blocksz=20480$extra
		ipv4 = 192.0.2.$((p + 1))/24
		mtu = $mtu
		lcore = 1
		region_mb = 64
		EOC
	done
}

# rv_nft_loss NS PERMILLE IFACE...: drop PERMILLE per mille of the RoCEv2
# frames each IFACE sends, at random, in the netdev family's egress hook
# (table netdev rvloss in NS).  An af_packet port's frames pass that hook
# only with qdisc_bypass=0 in its devargs (a packet socket's frames
# otherwise skip it), and on receive af_packet sees a frame before the
# ingress hook could drop it.  Beware: a frame of a packet socket's TX
# ring (net_af_packet) that the hook drops is not lost, the kernel puts it
# back in the ring and sends it again on the socket's next sendto() (the
# engine's TX ring kicks, pmd/port/rp_port_kick.c); for real loss between two
# af_packet ports use rv_nft_loss_bridge.
rv_nft_loss() {
	local ns=$1 pm=$2 i

	shift 2
	{
		echo "table netdev rvloss {"
		for i in "$@"; do
			echo "  chain eg_$i {"
			echo "    type filter hook egress device \"$i\" priority 0;"
			echo "    udp dport 4791 numgen random mod 1000 < $pm counter drop"
			echo "  }"
		done
		echo "}"
	} >"$rv_tmp/loss-$ns.nft"
	ip netns exec "$ns" nft -f "$rv_tmp/loss-$ns.nft" ||
		rv_fail "nft -f loss-$ns.nft failed (a kernel without netdev egress?)"
}

# rv_nft_loss_bridge NS PERMILLE: drop PERMILLE per mille of the RoCEv2
# frames the bridge of rv_veth1 ... bridge forwards, each way, at random
# (table bridge rvloss in NS): real loss, whatever the senders.
rv_nft_loss_bridge() {
	cat >"$rv_tmp/loss-$1.nft" <<-EOF
	table bridge rvloss {
	  chain loss {
	    type filter hook forward priority 0;
	    udp dport 4791 numgen random mod 1000 < $2 counter drop
	  }
	}
	EOF
	ip netns exec "$1" nft -f "$rv_tmp/loss-$1.nft" ||
		rv_fail "nft -f loss-$1.nft failed"
}

# rv_nft_loss_off NS: remove rv_nft_loss's table, printing its counters.
rv_nft_loss_off() {
	local fam

	for fam in netdev bridge; do
		ip netns exec "$1" nft list table $fam rvloss 2>/dev/null |
			grep -o 'counter packets [0-9]*' |
			sed "s/^/  $1 nft dropped: /"
		ip netns exec "$1" nft delete table $fam rvloss 2>/dev/null
	done
}
