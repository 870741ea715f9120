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

if ! command -v objdump >/dev/null 2>&1; then
	echo "SKIP: objdump not found (binutils)"
	exit 77
fi
if [ -z "$verbs" ]; then
	for f in /usr/lib/x86_64-linux-gnu/libibverbs.so.1 \
		 /usr/lib64/libibverbs.so.1 /usr/lib/libibverbs.so.1; do
		if [ -e "$f" ]; then
			verbs=$f
			break
		fi
	done
	if [ -z "$verbs" ] && command -v ldconfig >/dev/null 2>&1; then
		verbs=$(ldconfig -p | awk '/libibverbs\.so\.1 /{print $NF; exit}')
	fi
fi
if [ -z "$verbs" ] || [ ! -e "$verbs" ]; then
	echo "SKIP: no libibverbs.so.1 to compare with"
	exit 77
fi

libc=
for f in /lib/x86_64-linux-gnu/libc.so.6 /usr/lib/x86_64-linux-gnu/libc.so.6 \
	 /lib64/libc.so.6 /usr/lib64/libc.so.6; do
	if [ -e "$f" ]; then
		libc=$f
		break
	fi
done

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Defined functions, default versions only ("(VER)" marks a hidden,
# non-default version): "VERSION symbol", sorted.
funcs() {
	objdump -T "$1" | awk '$3 == "DF" && $4 != "*UND*" &&
		$(NF - 1) !~ /^\(/ { print $(NF - 1), $NF }' | sort -u
}

funcs "$verbs" > "$tmp/verbs.all"
funcs "$shim" > "$tmp/shim.all"

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
	missing=$(funcs "$libc" | comm -13 - "$tmp/shim.libc")
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
if objdump -T "$shim" | awk '$3 == "DO" && $4 != "*UND*" && $4 != "*ABS*"' |
		grep -q .; then
	echo "FAIL: data objects exported:"
	objdump -T "$shim" | awk '$3 == "DO" && $4 != "*UND*" && $4 != "*ABS*"'
	fail=1
fi

if [ "$fail" -eq 0 ]; then
	echo "OK: $(wc -l < "$tmp/shim.pub") IBVERBS_1.* and $(wc -l < "$tmp/shim.priv") private functions match $verbs"
	echo "OK: $(wc -l < "$tmp/shim.libc") C library functions${libc:+ match $libc}"
fi
exit "$fail"
