# SPDX-License-Identifier: BSD-3-Clause
#
# Sourced after test/verbs/lib.sh and rv_topology: a rocepmd-testpmd --host
# in each test host's namespace, programs attached to it, and the hosts'
# counts through DPDK telemetry.  APP is rocepmd-testpmd.
#
#   host_start A|B            start the host (HOST_A, TEL_A: its PID and
#                             telemetry socket; SOCK_A its attach socket)
#   tel A|B COMMAND           JSON value of a telemetry command
#   counts A|B                /rocepmd/objects,0 on one line
#   attached A|B              processes attached now
#   wait_detached A|B         until none is (10 s at most)
#   sv_bg NAME A|B -- PROG... an attached program in the background
#   sv_fg NAME A|B -- PROG... the same, waited for (rv_status)
#   host_stat A|B NAME [DEV]  a device counter (/rocepmd/stats,DEV; 0)
#   host_objs A|B DEV         its objects (/rocepmd/objects,DEV)
#   host_baseline             both hosts' objects now (base_a, base_b)
#   check_clean               no process attached and both hosts' objects
#                             back to the baseline
#   sv_prog_pid PID           the program an sv_bg PID runs (under timeout)
#   sv_pair PORT PROG ARGS... server attached in B, client in A; both
#                             must exit 0
#   host_proto_env            RP_ABI, RP_AVER (exported): the versions a
#                             raw client speaks (attach_client.py)

SOCK_A=$rv_tmp/a.sock
SOCK_B=$rv_tmp/b.sock

# host_start A|B: rocepmd-testpmd --host in that namespace; TEL_A/TEL_B
# get its telemetry socket.
host_start() {
	local h=$1 ns cfg sock i tel

	if [ "$h" = A ]; then
		ns=$RP_NS_A cfg=$RV_CFG_A sock=$SOCK_A
	else
		ns=$RP_NS_B cfg=$RV_CFG_B sock=$SOCK_B
	fi
	ip netns exec "$ns" timeout -k 10 "$RV_TIMEOUT" "$app" -- \
		--config "$cfg" --host="$sock" \
		>"$rv_tmp/host$h.out" 2>"$rv_tmp/host$h.err" &
	rv_pids+=("$!")
	eval "HOST_$h=$!"
	rv_wait_output "host$h" "device(s) on $sock (telemetry" "$!"
	tel=$(sed -n 's/.*(telemetry \(.*\))$/\1/p' "$rv_tmp/host$h.out")
	[ -S "$tel" ] || rv_fail "host $h: no telemetry socket at '$tel'"
	eval "TEL_$h=\$tel"
}

# tel A|B COMMAND: the JSON value of a telemetry command of a host.
tel() {
	local t

	eval "t=\$TEL_$1"
	python3 - "$t" "$2" <<'PY'
import json, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
s.connect(sys.argv[1])
s.recv(4096)
s.send(sys.argv[2].encode())
print(json.dumps(list(json.loads(s.recv(65536)).values())[0],
                 sort_keys=True))
PY
}

# counts A|B: the device's objects, one line (compared before/after).
counts() {
	tel "$1" /rocepmd/objects,0
}

# attached A|B: how many processes are attached now.
attached() {
	tel "$1" /rocepmd/clients | python3 -c \
		'import json, sys; print(json.load(sys.stdin)["attached"])'
}

# wait_detached A|B: until no process is attached (at most 10 s).
wait_detached() {
	local i n

	for ((i = 0; i < 100; i++)); do
		n=$(attached "$1")
		[ "$n" = 0 ] && return 0
		sleep 0.1
	done
	rv_fail "host $1: $n processes still attached 10 s after they ended"
}

# sv_bg NAME A|B -- PROGRAM ARGS...: an attached program in that host's
# namespace, in the background (rv_last_pid).
sv_bg() {
	local name=$1 h=$2 ns sock

	shift 3
	if [ "$h" = A ]; then ns=$RP_NS_A sock=$SOCK_A; else ns=$RP_NS_B sock=$SOCK_B; fi
	ip netns exec "$ns" timeout -k 10 "$RV_TIMEOUT" \
		"$RP_RUN" --attach="$sock" -- "$@" \
		>"$rv_tmp/$name.out" 2>"$rv_tmp/$name.err" &
	rv_last_pid=$!
	rv_pids+=("$rv_last_pid")
}

sv_fg() {
	sv_bg "$@"
	wait "$rv_last_pid"
	rv_status=$?
	rv_forget "$rv_last_pid"
}


# host_stat A|B NAME [DEV]: one counter of the host's device DEV (0).
host_stat() {
	tel "$1" "/rocepmd/stats,${3:-0}" | python3 -c \
		"import json, sys; print(json.load(sys.stdin)['$2'])"
}

# host_objs A|B DEV: the objects the host's device DEV holds.
host_objs() {
	tel "$1" "/rocepmd/objects,$2"
}

# host_baseline: both hosts' objects, for check_clean.
host_baseline() {
	base_a=$(counts A)
	base_b=$(counts B)
}

# check_clean: objects and pages of both hosts as at host_baseline, once
# every process left.
check_clean() {
	wait_detached A
	wait_detached B
	[ "$(counts A)" = "$base_a" ] ||
		rv_fail "host A holds $(counts A), not $base_a as before"
	[ "$(counts B)" = "$base_b" ] ||
		rv_fail "host B holds $(counts B), not $base_b as before"
}

# sv_prog_pid PID: the attached program itself (SIGKILL it, not the
# timeout around it) of an sv_bg PID.
sv_prog_pid() {
	local p

	p=$(pgrep -P "$(pgrep -P "$1" | head -1)" | head -1)
	[ -n "$p" ] || p=$(pgrep -P "$1" | head -1)
	echo "$p"
}

# sv_pair_bg NAME A|B ARGV...: sv_bg for hosts_pair (test/common/hosts.sh).
# shellcheck disable=SC2034 # pair_pid is hosts_pair's
sv_pair_bg() {
	sv_bg "$1" "$2" -- "${@:3}"
	pair_pid=$rv_last_pid
}

# sv_pair PORT PROGRAM ARGS...: server attached in B, client in A.
# shellcheck disable=SC2034,SC2154 # the pair_* variables are hosts_pair's
sv_pair() {
	local port=$1 prog=$2
	local pair_start=sv_pair_bg pair_ready=rv_pair_ready
	local pair_forget=rv_forget pair_grace=0

	shift 2
	local pair_srv=("$prog" -p "$port" "$@")
	local pair_cli=("$prog" -p "$port" "$@" "$RV_IP_B")
	hosts_pair "$port"
	if [ "$pair_crc" -ne 0 ] || [ "$pair_src" -ne 0 ]; then
		rv_show client
		rv_show server
		rv_fail "$prog: client exited $pair_crc, server $pair_src"
	fi
}

# host_proto_env: the ABI and attach protocol versions of the headers, for
# the Python clients of the protocol (attach_client.py).
host_proto_env() {
	export RP_ABI RP_AVER
	RP_ABI=$(sed -n 's/^#define RP_ABI_VERSION[[:space:]]*\([0-9]*\)u.*/\1/p' \
		"$RP_SRC_ROOT/pmd/include/rp_abi.h")
	RP_AVER=$(sed -n 's/^#define RP_ATTACH_VERSION[[:space:]]*\([0-9]*\)u.*/\1/p' \
		"$RP_SRC_ROOT/pmd/include/rp_attach.h")
	[ -n "$RP_ABI" ] && [ -n "$RP_AVER" ] ||
		rv_fail "no ABI or attach version in the headers"
}
