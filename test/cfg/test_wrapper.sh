#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# rocepmd-run: config errors stop it before anything runs; a good config
# exports ROCEPMD_CONFIG and LD_PRELOAD and execs the program.
# Usage: test_wrapper.sh ROCEPMD_RUN PRELOAD_LIB
# (PRELOAD_LIB: any loadable shared object standing in for the verbs shim;
# a copy of it stands in for the RDMA CM library)

# shellcheck disable=SC2016  # the single-quoted $VARs expand in the child
set -u

# meson passes paths relative to the build directory: make them absolute
run=$(realpath "$1")
shim=$(realpath "$2")
tmp=$(mktemp -d)
tmp=$(realpath "$tmp")
trap 'rm -rf "$tmp"' EXIT INT TERM
unset ROCEPMD_CONFIG ROCEPMD_SHIM ROCEPMD_RDMACM LD_PRELOAD
cm=$tmp/cm.so
cp "$shim" "$cm"
# another copy plays libibumad's CA discovery (librocepmd-umad.so)
umad=$tmp/umad.so
cp "$shim" "$umad"
export ROCEPMD_UMAD="$umad"

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

cat > "$tmp/good.ini" <<EOF
[engine]
main_lcore = 0
lcores = 1
[port0]
device = net_ring0
ipv4 = 192.0.2.1/24
EOF

cat > "$tmp/bad.ini" <<EOF
[port0]
device = net_ring0
ipv4 = 192.0.2.1/24
mtu = 1000
EOF

# 1. bad config: exit 1, message names file, section and key; nothing runs
"$run" --config "$tmp/bad.ini" --shim "$shim" --rdmacm "$cm" -- touch "$tmp/ran" \
	>"$tmp/out" 2>"$tmp/err"
rc=$?
expect 1 "bad config"
contains "$tmp/err" "$tmp/bad.ini: [port0] mtu:" "bad config"
contains "$tmp/err" "accepted: auto, 256, 512, 1024, 2048, 4096" "bad config"
[ ! -e "$tmp/ran" ] || fail "bad config: the program ran"

# 2. good config: LD_PRELOAD is the shim, the CM, umad, ROCEPMD_CONFIG the
# absolute path
(cd "$tmp" && "$run" --config good.ini --shim "$shim" --rdmacm "$cm" -- \
	/bin/sh -c 'echo $LD_PRELOAD $ROCEPMD_CONFIG') >"$tmp/out" 2>"$tmp/err"
rc=$?
expect 0 "good config"
[ "$(cat "$tmp/out")" = "$shim:$cm:$umad $tmp/good.ini" ] ||
	fail "good config: printed '$(cat "$tmp/out")', expected '$shim:$cm:$umad $tmp/good.ini'"

# 3. without '--', the program's own options are left alone
"$run" --config "$tmp/good.ini" --shim "$shim" --rdmacm "$cm" /bin/sh -c 'echo "$0" "$1"' \
	--config x >"$tmp/out" 2>"$tmp/err"
rc=$?
expect 0 "no --"
[ "$(cat "$tmp/out")" = "--config x" ] ||
	fail "no --: printed '$(cat "$tmp/out")'"

# 4. an existing LD_PRELOAD is kept, after the shim, the CM and umad
LD_PRELOAD=libc.so.6 "$run" --config "$tmp/good.ini" --shim "$shim" --rdmacm "$cm" -- \
	/bin/sh -c 'echo $LD_PRELOAD' >"$tmp/out" 2>"$tmp/err"
rc=$?
expect 0 "LD_PRELOAD prepend"
[ "$(cat "$tmp/out")" = "$shim:$cm:$umad:libc.so.6" ] ||
	fail "LD_PRELOAD prepend: '$(cat "$tmp/out")'"

# 5. ROCEPMD_CONFIG, ROCEPMD_SHIM and ROCEPMD_RDMACM as defaults
ROCEPMD_CONFIG="$tmp/good.ini" ROCEPMD_SHIM="$shim" ROCEPMD_RDMACM="$cm" "$run" -- \
	/bin/sh -c 'echo $LD_PRELOAD $ROCEPMD_CONFIG' >"$tmp/out" 2>"$tmp/err"
rc=$?
expect 0 "environment defaults"
[ "$(cat "$tmp/out")" = "$shim:$cm:$umad $tmp/good.ini" ] ||
	fail "environment defaults: '$(cat "$tmp/out")'"

# 5b. a missing libibumad discovery library: a clear error, nothing runs
ROCEPMD_UMAD="$tmp/noumad.so" "$run" --config "$tmp/good.ini" --shim "$shim" \
	--rdmacm "$cm" -- touch "$tmp/ran" >"$tmp/out" 2>"$tmp/err"
rc=$?
expect 1 "no umad library"
contains "$tmp/err" "libibumad discovery library $tmp/noumad.so" "no umad library"
contains "$tmp/err" "ROCEPMD_UMAD" "no umad library"
[ ! -e "$tmp/ran" ] || fail "no umad library: the program ran"

# 6. ./rocepmd.ini as the last default; none at all is an error
mkdir "$tmp/cwd" "$tmp/empty"
cp "$tmp/good.ini" "$tmp/cwd/rocepmd.ini"
(cd "$tmp/cwd" && "$run" --shim "$shim" --rdmacm "$cm" -- /bin/sh -c 'echo $ROCEPMD_CONFIG') \
	>"$tmp/out" 2>"$tmp/err"
rc=$?
expect 0 "./rocepmd.ini"
[ "$(cat "$tmp/out")" = "$tmp/cwd/rocepmd.ini" ] ||
	fail "./rocepmd.ini: '$(cat "$tmp/out")'"
# (and no host to attach to: an empty run directory)
(cd "$tmp/empty" && ROCEPMD_RUN_DIR="$tmp/empty" "$run" --shim "$shim" \
	--rdmacm "$cm" -- /bin/true) >"$tmp/out" 2>"$tmp/err"
rc=$?
expect 1 "no config"
contains "$tmp/err" "no configuration" "no config"
contains "$tmp/err" "or start a host" "no config"

# 7. missing config file, missing shim, missing program
"$run" --config "$tmp/none.ini" --shim "$shim" --rdmacm "$cm" -- /bin/true \
	>"$tmp/out" 2>"$tmp/err"
rc=$?
expect 1 "missing config"
contains "$tmp/err" "$tmp/none.ini: cannot open" "missing config"

"$run" --config "$tmp/good.ini" --shim "$tmp/none.so" --rdmacm "$cm" -- /bin/true \
	>"$tmp/out" 2>"$tmp/err"
rc=$?
expect 1 "missing shim"
contains "$tmp/err" "$tmp/none.so" "missing shim"

"$run" --config "$tmp/good.ini" --shim "$shim" --rdmacm "$tmp/nocm.so" -- \
	/bin/true >"$tmp/out" 2>"$tmp/err"
rc=$?
expect 1 "missing RDMA CM library"
contains "$tmp/err" "RDMA CM library $tmp/nocm.so" "missing RDMA CM library"

"$run" --config "$tmp/good.ini" --shim "$shim" --rdmacm "$cm" -- "$tmp/no-such-program" \
	>"$tmp/out" 2>"$tmp/err"
rc=$?
expect 127 "missing program"
contains "$tmp/err" "no-such-program" "missing program"

# 8. --check: one line per port, exit 0, nothing run; --help; usage errors
"$run" --config "$tmp/good.ini" --check >"$tmp/out" 2>"$tmp/err"
rc=$?
expect 0 "--check"
contains "$tmp/out" "port0: vdev net_ring0, ipv4 192.0.2.1/24" "--check"
contains "$tmp/out" "--vdev net_ring0" "--check"

# --check: the paths of the three libraries the program would preload
"$run" --config "$tmp/good.ini" --shim "$shim" --rdmacm "$cm" --check \
	>"$tmp/out" 2>"$tmp/err"
rc=$?
expect 0 "--check libraries"
for lib in "shim: $shim" "rdmacm: $cm" "umad: $umad"; do
	grep -qx -- "$lib" "$tmp/out" || fail "--check: no line '$lib' in: $(cat "$tmp/out")"
done
ROCEPMD_UMAD=$tmp/noumad.so "$run" --config "$tmp/good.ini" --check \
	>"$tmp/out" 2>"$tmp/err"
rc=$?
expect 0 "--check, umad library missing"
contains "$tmp/out" "umad: $tmp/noumad.so (missing)" "--check, umad library missing"

# 9. --check names every idle policy with its own timing keys
for idle in busy yield sleep adaptive; do
	sed "s/^lcores = 1$/lcores = 1\\
idle = $idle\\
idle_us = 7\\
sleep_us = 8\\
wake_us = 9/" "$tmp/good.ini" >"$tmp/idle.ini"
	grep -q "^idle = $idle$" "$tmp/idle.ini" ||
		fail "--check idle $idle: the test could not set the key"
	"$run" --config "$tmp/idle.ini" --check >"$tmp/out" 2>"$tmp/err"
	rc=$?
	expect 0 "--check idle $idle"
	case $idle in
	busy) want="idle busy" ;;
	yield) want="idle yield after 7 us" ;;
	sleep) want="idle sleep after 7 us, naps of 8 us" ;;
	adaptive) want="idle adaptive after 7 us, naps of 8 us in place of the spin where they cost no work, blocks of up to 9 us" ;;
	esac
	contains "$tmp/out" "engine lcores 1, $want" "--check idle $idle"
	grep -q "engine lcores 1, $want\$" "$tmp/out" ||
		fail "--check idle $idle: more after '$want' in: $(cat "$tmp/out")"
	if grep -qF "(null)" "$tmp/out"; then
		fail "--check idle $idle: '(null)' in: $(cat "$tmp/out")"
	fi
done
# ... and adaptive without its naps (spin_nap = off)
sed "s/^lcores = 1$/lcores = 1\\
idle = adaptive\\
idle_us = 7\\
spin_nap = off\\
wake_us = 9/" "$tmp/good.ini" >"$tmp/idle.ini"
"$run" --config "$tmp/idle.ini" --check >"$tmp/out" 2>"$tmp/err"
rc=$?
expect 0 "--check spin_nap off"
grep -q "engine lcores 1, idle adaptive after 7 us, blocks of up to 9 us\$" \
	"$tmp/out" || fail "--check spin_nap off: $(cat "$tmp/out")"
sed 's/^spin_nap = off$/spin_nap = sometimes/' "$tmp/idle.ini" >"$tmp/idle2.ini"
"$run" --config "$tmp/idle2.ini" --check >"$tmp/out" 2>"$tmp/err"
rc=$?
expect 1 "--check spin_nap sometimes"
contains "$tmp/err" "spin_nap" "--check spin_nap sometimes names the key"

"$run" --config "$tmp/bad.ini" --check >"$tmp/out" 2>"$tmp/err"
rc=$?
expect 1 "--check bad"
contains "$tmp/err" "[port0] mtu:" "--check bad"

"$run" --help >"$tmp/out" 2>"$tmp/err"
rc=$?
expect 0 "--help"
contains "$tmp/out" "Usage:" "--help"

"$run" --config "$tmp/good.ini" >"$tmp/out" 2>"$tmp/err"
rc=$?
expect 2 "no program"

"$run" --bogus >"$tmp/out" 2>"$tmp/err"
rc=$?
expect 2 "unknown option"

if [ "$failures" -ne 0 ]; then
	echo "$failures failure(s)" >&2
	exit 1
fi
echo "rocepmd-run: all checks passed"
