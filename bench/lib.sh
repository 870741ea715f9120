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
#                           (RP_VETH_MTU, RP_NFT... pass through)
#   die MSG                 "SCRIPT: ERROR: MSG", exit 1
#   stop_server             stop the server started last ($srv), by PID
#
# The EXIT trap stops $srv and every PID in bench_pids (TERM, by PID:
# only what the script started), removes the topology and $tmp.
#
# Environment: BENCH_TIMEOUT (seconds a program may run, 120).

set -uo pipefail

bench_prog=${0##*/}
src=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
app=$src/build/app/rocepmd-testpmd/rocepmd-testpmd
run=$src/build/tools/rocepmd-run
TMO=${BENCH_TIMEOUT:-120}
bench_pids=()
bench_topo=0
srv=
tmp=

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

bench_cleanup() {
	local p

	stop_server
	for p in "${bench_pids[@]}"; do
		kill -TERM "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	[ "$bench_topo" = 0 ] ||
		"$src/scripts/netns-topology" down >/dev/null 2>&1
	[ -n "$tmp" ] && rm -rf "$tmp"
}
trap bench_cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

bench_topology() {
	local tag=$(($$ % 1000000))

	export RP_NS_A="$1$tag-a" RP_NS_B="$1$tag-b"
	export RP_VETH_A="$1${tag}a" RP_VETH_B="$1${tag}b"
	[ "$(id -u)" -eq 0 ] || die "needs root (network namespaces)"
	[ -x "$app" ] && [ -x "$run" ] || die "no build: scripts/rocepmd-build first"
	tmp=$(mktemp -d "${TMPDIR:-/tmp}/$1-XXXXXX") || die "mktemp"
	bench_topo=1
	"$src/scripts/netns-topology" up >"$tmp/topology.log" 2>&1 ||
		die "netns-topology up failed: $(cat "$tmp/topology.log")"
}
