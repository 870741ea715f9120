#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# rocepmd-run --attach: which socket it takes (named, --attach SOCKET, the
# only *.sock of $ROCEPMD_RUN_DIR that a host of this network namespace
# listens on), what it refuses (--config, no socket, several, only sockets
# nobody listens on), the environment it gives the program (ROCEPMD_ATTACH absolute,
# no ROCEPMD_CONFIG, the shim and the RDMA CM preloaded) and --check against a fake
# host (test_attach_client --host).
# Usage: run_attach.sh ROCEPMD_RUN PRELOAD_LIB FAKE_HOST
# (PRELOAD_LIB: any loadable shared object standing in for the verbs shim)

# shellcheck disable=SC2016  # the single-quoted $VARs expand in the child
set -u

run=$(realpath "$1")
shim=$(realpath "$2")
fake=$(realpath "$3")
tmp=$(mktemp -d)
tmp=$(realpath "$tmp")
host_pid=
two_pids=
# shellcheck disable=SC2086  # two_pids: a list
trap '[ -n "$host_pid" ] && kill "$host_pid" 2>/dev/null; [ -n "$two_pids" ] && kill -KILL $two_pids 2>/dev/null; rm -rf "$tmp"' EXIT INT TERM
unset ROCEPMD_CONFIG ROCEPMD_SHIM ROCEPMD_RDMACM ROCEPMD_ATTACH LD_PRELOAD
# a copy of the stand-in plays libibumad's CA discovery (librocepmd-umad.so)
cp "$shim" "$tmp/umad.so"
export ROCEPMD_UMAD="$tmp/umad.so"

failures=0
fail() {
	echo "FAIL: $*" >&2
	failures=$((failures + 1))
}

# expect STATUS NAME: compare $rc with STATUS
expect() {
	[ "$rc" -eq "$1" ] || fail "$2: exit status $rc, expected $1 (stderr: $(cat "$tmp/err"))"
}

# contains FILE STRING NAME
contains() {
	grep -qF -- "$2" "$1" || fail "$3: '$2' not in: $(cat "$1")"
}

env_of_program='echo "ATTACH=${ROCEPMD_ATTACH:-}"; echo "CONFIG=${ROCEPMD_CONFIG:-}"; echo "PRELOAD=${LD_PRELOAD:-}"'

mkdir "$tmp/none" "$tmp/two" "$tmp/one"

# 1. --attach with --config: a usage error, nothing runs
"$run" --attach="$tmp/one/h.sock" --config x.ini -- touch "$tmp/ran" \
	>"$tmp/out" 2>"$tmp/err"
rc=$?
expect 2 "--attach --config"
contains "$tmp/err" "--attach and --config" "--attach --config"
[ -e "$tmp/ran" ] && fail "--attach --config: the program ran"

# 2. no socket in the run directory: exit 1, the directory named
ROCEPMD_RUN_DIR=$tmp/none "$run" --attach --shim "$shim" -- touch "$tmp/ran" \
	>"$tmp/out" 2>"$tmp/err"
rc=$?
expect 1 "no socket"
contains "$tmp/err" "no host socket (*.sock) in $tmp/none" "no socket"
[ -e "$tmp/ran" ] && fail "no socket: the program ran"

# 3. no run directory at all
ROCEPMD_RUN_DIR=$tmp/missing "$run" --attach --shim "$shim" -- true \
	>"$tmp/out" 2>"$tmp/err"
rc=$?
expect 1 "no run directory"
contains "$tmp/err" "$tmp/missing: No such file or directory" "no run directory"

# 4. two hosts listening: exit 1, both listed; a file that is not a
# socket is no host
: >"$tmp/two/c.sock"
for h in a b; do
	"$fake" --host "$tmp/two/$h.sock" 1 >/dev/null 2>&1 &
	two_pids="$two_pids $!"
done
i=0
while { [ ! -S "$tmp/two/a.sock" ] || [ ! -S "$tmp/two/b.sock" ]; } &&
      [ $i -lt 100 ]; do
	sleep 0.1
	i=$((i + 1))
done
ROCEPMD_RUN_DIR=$tmp/two "$run" --attach --shim "$shim" -- true \
	>"$tmp/out" 2>"$tmp/err"
rc=$?
expect 1 "two sockets"
contains "$tmp/err" "2 host sockets of this network namespace in $tmp/two" "two sockets"
contains "$tmp/err" "a.sock" "two sockets"
contains "$tmp/err" "b.sock" "two sockets"
contains "$tmp/err" "--attach=SOCKET" "two sockets"

# 4b. the same sockets once nobody listens (hosts killed, as a host of
# another namespace looks from here): exit 1, said and listed
# shellcheck disable=SC2086
kill -KILL $two_pids
# shellcheck disable=SC2086
wait $two_pids 2>/dev/null
two_pids=
[ -S "$tmp/two/a.sock" ] || fail "a killed fake host removed its socket"
ROCEPMD_RUN_DIR=$tmp/two "$run" --attach --shim "$shim" -- touch "$tmp/ran" \
	>"$tmp/out" 2>"$tmp/err"
rc=$?
expect 1 "sockets without a host"
contains "$tmp/err" "no host of this network namespace serves a socket in $tmp/two" "sockets without a host"
contains "$tmp/err" "a.sock" "sockets without a host"
contains "$tmp/err" "b.sock" "sockets without a host"
[ -e "$tmp/ran" ] && fail "sockets without a host: the program ran"

# 5. a named path that is not a socket
"$run" --attach="$tmp/two/c.sock" --shim "$shim" -- true \
	>"$tmp/out" 2>"$tmp/err"
rc=$?
expect 1 "not a socket"
contains "$tmp/err" "$tmp/two/c.sock: not a socket" "not a socket"

# The fake host: one client (--check below).
sock=$tmp/one/h.sock
"$fake" --host "$sock" 1 >"$tmp/host.out" 2>"$tmp/host.err" &
host_pid=$!
i=0
while [ ! -S "$sock" ] && [ $i -lt 100 ]; do
	sleep 0.1
	i=$((i + 1))
done
[ -S "$sock" ] || fail "the fake host did not create $sock"

# 6. --attach=SOCKET: ROCEPMD_ATTACH, no ROCEPMD_CONFIG, the shim and the
# RDMA CM preloaded (a copy of the stand-in library plays the CM)
cp "$shim" "$tmp/cm.so"
ROCEPMD_CONFIG=/nonexistent.ini "$run" --attach="$sock" --shim "$shim" \
	--rdmacm "$tmp/cm.so" -- sh -c "$env_of_program" >"$tmp/out" 2>"$tmp/err"
rc=$?
expect 0 "--attach=SOCKET"
contains "$tmp/out" "ATTACH=$sock" "--attach=SOCKET"
contains "$tmp/out" "CONFIG=" "--attach=SOCKET"
grep -q '^CONFIG=.' "$tmp/out" && fail "--attach=SOCKET: ROCEPMD_CONFIG still set"
grep -qx "PRELOAD=$shim:$tmp/cm.so:$tmp/umad.so" "$tmp/out" || fail "--attach=SOCKET: LD_PRELOAD is not the shim, the RDMA CM and umad: $(cat "$tmp/out")"

# 6b. --attach with a missing RDMA CM library: a clear error, nothing runs
"$run" --attach="$sock" --shim "$shim" --rdmacm "$tmp/nocm.so" -- \
	touch "$tmp/ran" >"$tmp/out" 2>"$tmp/err"
rc=$?
expect 1 "--attach, no RDMA CM library"
contains "$tmp/err" "RDMA CM library $tmp/nocm.so" "--attach, no RDMA CM library"
[ -e "$tmp/ran" ] && fail "--attach, no RDMA CM library: the program ran"

# 7. --attach SOCKET (separate), and a relative SOCKET made absolute
(cd "$tmp/one" && "$run" --attach h.sock --shim "$shim" -- sh -c "$env_of_program") \
	>"$tmp/out" 2>"$tmp/err"
rc=$?
expect 0 "--attach SOCKET"
contains "$tmp/out" "ATTACH=$sock" "--attach SOCKET"

# 8. --attach PROGRAM: not a socket, so the program; the directory's socket
ROCEPMD_RUN_DIR=$tmp/one "$run" --attach --shim "$shim" sh -c "$env_of_program" \
	>"$tmp/out" 2>"$tmp/err"
rc=$?
expect 0 "--attach (the only socket)"
contains "$tmp/out" "ATTACH=$sock" "--attach (the only socket)"

# 8b. no configuration anywhere and one host socket: attaches to it
(cd "$tmp/none" && ROCEPMD_RUN_DIR=$tmp/one "$run" --shim "$shim" \
	--rdmacm "$tmp/cm.so" -- sh -c "$env_of_program") >"$tmp/out" 2>"$tmp/err"
rc=$?
expect 0 "no configuration, one host"
contains "$tmp/out" "ATTACH=$sock" "no configuration, one host"
contains "$tmp/err" "no configuration: attaching to the host on $sock" "no configuration, one host"

# 9. --attach --check: attaches, prints the device from its control block
ROCEPMD_RUN_DIR=$tmp/one "$run" --attach --check --shim "$shim" \
	>"$tmp/out" 2>"$tmp/err"
rc=$?
expect 0 "--attach --check"
contains "$tmp/out" "$sock: ok: client 42, 1 device" "--attach --check"
contains "$tmp/out" "rocepmd0: ipv4 0.0.0.0/0" "--attach --check"
contains "$tmp/out" "mtu 1024, link down, region 1024 KiB, arena 1 MiB, wake-up fd yes" "--attach --check"
wait "$host_pid"
rc=$?
host_pid=
expect 0 "fake host"

# 10. --check once the host is gone (it removed its socket)
"$run" --attach="$sock" --check >"$tmp/out" 2>"$tmp/err"
rc=$?
expect 1 "--check, host gone"
contains "$tmp/err" "$sock: No such file or directory" "--check, host gone"

if [ "$failures" -ne 0 ]; then
	echo "$failures failure(s)" >&2
	exit 1
fi
echo "rocepmd-run --attach: all checks passed"
