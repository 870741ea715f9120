# SPDX-License-Identifier: BSD-3-Clause
# shellcheck shell=bash
#
# Sourced by the bench/ scripts that measure between the two test hosts
# (inline.sh, pingpong.sh, xdp.sh, attach.sh): the build's programs, a
# topology of their own, and one way out.
#
#   bench_topology PREFIX   needs root and a build; makes $tmp and brings
#                           up scripts/netns-topology with namespaces
#                           PREFIX<n>-a/-b and veth ends PREFIX<n>a/b
#                           (RP_VETH_MTU, RP_NFT... pass through), with
#                           hosts_up of test/common/hosts.sh, which this
#                           file sources (hosts_pair, hosts_cfg...)
#   die MSG                 "SCRIPT: ERROR: MSG", exit 1
#   stop_server             stop the server started last ($srv), by PID
#   bench_host_cfg SIDE KIND LCORES IDLE PREFIX
#                           $tmp/SIDE.ini for host SIDE (a or b): its port
#                           on its veth end (KIND af_packet; af_xdp or xdp:
#                           netdev = the end, rocepmd's XDP program), IB
#                           MTU BENCH_MTU (1024), EAL --lcores LCORES (main lcore 0,
#                           engine lcore 1), idle policy IDLE, file prefix
#                           PREFIX-SIDE-PID
#   bench_udp_pp PORT SECONDS
#                           the kernel's UDP between the two hosts: sockperf
#                           ping-pong of 14 B (its smallest) on non-blocking
#                           sockets, the server in B on CPU 1, the client in
#                           A on CPU 0, into $tmp/udp.out; why it failed in
#                           $udp_why (empty if it did not)
#   bench_csv FILE MODE FIELD...
#                           the named fields of rocepmd-testpmd's CSV rows
#                           (--csv) of mode MODE, "|" between them (a field
#                           this rocepmd-testpmd has not: empty)
#   bench_server_gone       if the server has exited already: reap it, its
#                           exit status in $srv_rc (else srv_rc empty)
#   bench_errlines FILE     the last lines of a program's log that say what
#                           went wrong, on one line
#   bench_why RC NRES STATUS CLIENT_LOG SERVER_LOG [SERVER_EXIT]
#                           why a server/client invocation failed (the
#                           client's exit RC, 124: timeout; NRES result
#                           rows, 0: none; the run's STATUS), on one line;
#                           nothing if it did not
#
# The EXIT trap stops $srv and every PID in bench_pids (TERM, by PID:
# only what the script started), removes the topology and $tmp.
#
# Environment: BENCH_TIMEOUT (seconds a program may run, 120), BENCH_BUILD
# (the build directory, build), BENCH_HALT_POLL_NS (cpu_idle.sh, which
# this file sources: bench_cpu_idle...), BENCH_PORT_EXTRA (more [port0]
# keys for bench_host_cfg, "\n" between them: 'selective_retx = off'),
# BENCH_MTU (bench_host_cfg's IB MTU, 1024; auto: the largest the veth
# carries, 2048 on af_xdp at veth MTU 3000).

set -uo pipefail

bench_prog=${0##*/}
src=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=../test/common/hosts.sh
. "$src/test/common/hosts.sh"
# shellcheck source=cpu_idle.sh
. "$src/bench/cpu_idle.sh"
build=${BENCH_BUILD:-$src/build}
bench_mtu=${BENCH_MTU:-1024}
app=$build/app/rocepmd-testpmd/rocepmd-testpmd
run=$build/tools/rocepmd-run
TMO=${BENCH_TIMEOUT:-120}
bench_pids=()
srv=
srv_rc=
udp_why=
tmp=

bench_host_cfg() {
	local s=$1 kind=$2 lcores=$3 idle=$4 pfx=$5 dev=$RP_VETH_A port ring
	local ip=192.0.2.1/24

	[ "$s" = b ] && dev=$RP_VETH_B ip=192.0.2.2/24
	# framecnt 2048, not the PMD's 512: with 512 the receiving ring
	# overflowed in 64 KiB WRITEs on events (afp_rx_dropped 275 in 3 s)
	# and each overflow cost a go-back-N resend on a lossless link.
	# the PMD's ring frames (framesz 2048) hold IB MTU 1024 at most,
	# 5120 hold 4096 (mtu + 144): for BENCH_MTU 2048, 4096 and auto
	case $bench_mtu in
	256 | 512 | 1024) ring= ;;
	*) ring=,framesz=5120,blocksz=20480 ;;
	esac
	port="device = net_af_packet0,iface=$dev,qpairs=1,framecnt=2048$ring
ipv4 = $ip"
	case $kind in
	af_xdp | xdp) port="netdev = $dev" ;;
	# the raw yardstick of af_xdp (rocepmd-testpmd --raw-only): DPDK's
	# PMD with its own XDP program, every frame of the queue its socket's
	af_xdp_raw) port="device = net_af_xdp0,iface=$dev,busy_budget=0
ipv4 = $ip" ;;
	esac
	cat >"$tmp/$s.ini" <<-EOF
	[eal]
	args = --no-huge -m 512 --no-pci --lcores $lcores --file-prefix=$pfx-$s-$$
	[engine]
	main_lcore = 0
	lcores = 1
	idle = $idle
	[port0]
	$port
	mtu = $bench_mtu
	$(printf '%b' "${BENCH_PORT_EXTRA:-}")
	EOF
}

bench_udp_pp() {
	local port=$1 secs=$2 rc n

	ip netns exec "$RP_NS_B" taskset -c 1 timeout "$TMO" sockperf sr \
		-i 192.0.2.2 -p "$port" --nonblocked >"$tmp/udp.srv" 2>&1 &
	srv=$!
	sleep 1
	ip netns exec "$RP_NS_A" taskset -c 0 timeout "$TMO" sockperf pp \
		-i 192.0.2.2 -p "$port" -m 14 -t "$secs" --nonblocked \
		>"$tmp/udp.out" 2>&1
	rc=$?
	bench_server_gone
	stop_server
	n=$(grep -c 'percentile 50.000 =' "$tmp/udp.out")
	udp_why=$(bench_why "$rc" "$n" ok "$tmp/udp.out" "$tmp/udp.srv" \
		"$srv_rc")
}

die() {
	echo "$bench_prog: ERROR: $*" >&2
	exit 1
}

stop_server() {
	[ -n "$srv" ] || return 0
	kill -TERM "$srv" 2>/dev/null
	wait "$srv" 2>/dev/null
	srv=
}

bench_csv() {
	local f=$1 m=$2

	shift 2
	awk -v m="$m" -v want="$*" '
	function split_csv(line, f,   n, i, c, q, cur) {
		n = 0; cur = ""; q = 0
		for (i = 1; i <= length(line); i++) {
			c = substr(line, i, 1)
			if (c == "\"") { q = !q; continue }
			if (c == "," && !q) { f[++n] = cur; cur = ""; continue }
			cur = cur c
		}
		f[++n] = cur
		return n
	}
	/^mode,/ { n = split_csv($0, h); delete col
		for (i = 1; i <= n; i++) col[h[i]] = i; next }
	{ split_csv($0, f) }
	("mode" in col) && f[col["mode"]] == m {
		k = split(want, w, " "); s = ""
		for (i = 1; i <= k; i++)
			s = s (i > 1 ? "|" : "") ((w[i] in col) ? f[col[w[i]]] : "")
		print s
	}' "$f"
}

bench_server_gone() {
	srv_rc=
	[ -n "$srv" ] || return 0
	kill -0 "$srv" 2>/dev/null && return 0
	wait "$srv"
	srv_rc=$?
	srv=
}

bench_errlines() {
	local f=$1 l

	[ -s "$f" ] || return 0
	l=$(grep -av TELEMETRY "$f" | grep -av '^COUNTERS' |
		grep -aiE 'error|fail|cannot|abort|refused|invalid|timed out|timeout|exceed|denied|unable|no such|not ' |
		tail -n 2)
	[ -n "$l" ] ||
		l=$(grep -av TELEMETRY "$f" | grep -av '^COUNTERS' |
			grep -av '^[[:space:]]*$' | tail -n 1)
	printf '%s' "$l" | tr -s '\n\t' '| ' | sed 's/|/ \/ /g' | cut -c 1-200
}

bench_why() {
	local rc=$1 nres=$2 st=$3 clog=$4 slog=$5 srv_rc=${6:-} why l

	if [ "$rc" = 124 ]; then
		why="timeout: killed after ${TMO} s (exit 124)"
	elif [ "$nres" = 0 ]; then
		why="no result (client exit $rc)"
	elif [ "$st" != ok ]; then
		why="status: $st"
	elif [ "$rc" != 0 ]; then
		why="client exit $rc"
	else
		return 0
	fi
	l=$(bench_errlines "$clog")
	[ -z "$l" ] || why="$why; client: $l"
	[ -z "$srv_rc" ] || why="$why; server exited first (exit $srv_rc)"
	l=$(bench_errlines "$slog")
	[ -z "$l" ] || why="$why; server: $l"
	echo "$why"
}

bench_cleanup() {
	local p

	stop_server
	for p in "${bench_pids[@]}"; do
		kill -TERM "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	hosts_down
	[ -n "$tmp" ] && rm -rf "$tmp"
	bench_halt_poll_end
}
trap bench_cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

bench_topology() {
	local tag=$(($$ % 1000000))

	[ "$(id -u)" -eq 0 ] || die "needs root (network namespaces)"
	[ -x "$app" ] && [ -x "$run" ] || die "no build: scripts/rocepmd-build first"
	tmp=$(mktemp -d "${TMPDIR:-/tmp}/$1-XXXXXX") || die "mktemp"
	hosts_up "$1$tag-" "$1$tag" "$tmp/topology.log" ||
		die "netns-topology up failed: $(cat "$tmp/topology.log")"
}
