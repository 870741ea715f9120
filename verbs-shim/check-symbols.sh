#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
#
# check-symbols.sh SHIM [LIBIBVERBS]
#
# The shim interposes on libibverbs.so.1 by LD_PRELOAD: a function the real
# library exports and the shim does not would be reached with a rocepmd
# object and crash.  Compare `objdump -T` of both, as symbol@VERSION of
# defined functions:
#  - every default-version function of libibverbs' IBVERBS_1.* nodes must
#    be exported by the shim under the same version, and the shim must
#    export no IBVERBS_1.* function libibverbs lacks;
#  - whatever the shim exports from IBVERBS_PRIVATE_* must exist in
#    libibverbs under that version;
#  - the C library calls the shim answers for its device nodes
#    (shim_devnode.c: access, stat, stat64) are exported under the versions
#    libc.so.6 has them, so a program's references bind to them;
#  - the shim exports nothing else (no rte_*, rp_*, shim_* leak) but its
#    own ROCEPMD_VERBS_PRIVATE_* for rocepmd's other components
#    (rocepmd_verbs.h) and ROCEPMD_ENGINE_* (the engine API, rocepmd.h,
#    for rocepmd-testpmd).
# Exit 77 (skipped) without objdump or a libibverbs.so.1 to compare with.

set -eu

shim=${1:?usage: $0 SHIM [LIBIBVERBS]}
verbs=${2:-}

. "$(dirname "$0")/../test/common/symbols.sh"

[ -n "$verbs" ] || verbs=$(sym_find_lib libibverbs.so.1)
if [ -z "$verbs" ] || [ ! -e "$verbs" ]; then
	echo "SKIP: no libibverbs.so.1 to compare with"
	exit 77
fi
libc=$(sym_find_lib libc.so.6)

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

sym_funcs "$verbs" > "$tmp/verbs.all"
sym_funcs "$shim" > "$tmp/shim.all"

grep '^IBVERBS_1\.' "$tmp/verbs.all" > "$tmp/verbs.pub" || true
grep '^IBVERBS_1\.' "$tmp/shim.all" > "$tmp/shim.pub" || true
grep '^IBVERBS_PRIVATE_' "$tmp/shim.all" > "$tmp/shim.priv" || true
grep -v '^IBVERBS_\|^ROCEPMD_VERBS_PRIVATE_\|^ROCEPMD_ENGINE_\|^GLIBC_' "$tmp/shim.all" > "$tmp/shim.other" || true
grep '^GLIBC_' "$tmp/shim.all" > "$tmp/shim.libc" || true

fail=0
if [ ! -s "$tmp/verbs.pub" ]; then
	echo "FAIL: no IBVERBS_1.* function found in $verbs"
	fail=1
fi
if ! diff -u "$tmp/verbs.pub" "$tmp/shim.pub" > "$tmp/diff"; then
	echo "FAIL: IBVERBS_1.* functions differ ('-' missing from the shim, '+' unknown to libibverbs):"
	cat "$tmp/diff"
	fail=1
fi
if [ -s "$tmp/shim.priv" ]; then
	missing=$(comm -23 "$tmp/shim.priv" "$tmp/verbs.all")
	if [ -n "$missing" ]; then
		echo "FAIL: private functions libibverbs does not export:"
		echo "$missing"
		fail=1
	fi
fi
# The device node calls, and no other C library function.
if [ "$(awk '{ print $2 }' "$tmp/shim.libc" | tr '\n' ' ')" != "access stat stat64 " ]; then
	echo "FAIL: C library functions exported, expected access stat stat64:"
	cat "$tmp/shim.libc"
	fail=1
fi
if [ -n "$libc" ]; then
	missing=$(sym_funcs "$libc" | comm -13 - "$tmp/shim.libc")
	if [ -n "$missing" ]; then
		echo "FAIL: C library functions $libc lacks under these versions:"
		echo "$missing"
		fail=1
	fi
fi
if [ -s "$tmp/shim.other" ]; then
	echo "FAIL: functions exported outside libibverbs' versions:"
	cat "$tmp/shim.other"
	fail=1
fi
# A data symbol would leak too.
if [ -n "$(sym_data "$shim")" ]; then
	echo "FAIL: data objects exported:"
	sym_data "$shim"
	fail=1
fi

if [ "$fail" -eq 0 ]; then
	echo "OK: $(wc -l < "$tmp/shim.pub") IBVERBS_1.* and $(wc -l < "$tmp/shim.priv") private functions match $verbs"
	echo "OK: $(wc -l < "$tmp/shim.libc") C library functions${libc:+ match $libc}"
fi
exit "$fail"
