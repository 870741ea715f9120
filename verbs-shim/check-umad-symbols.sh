#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
#
# check-umad-symbols.sh LIB [LIBIBUMAD]
#
# librocepmd-umad.so interposes on some of libibumad.so.3 by LD_PRELOAD: a
# function it exports under another version than libibumad's would not
# bind a program's reference, and anything else it exported would leak.
# Every function LIB exports must be libibumad's under the same version,
# and exactly the CA discovery set of shim_umad.c.
# Exit 77 (skipped) without objdump or a libibumad.so.3 to compare with.

set -eu

lib=${1:?usage: $0 LIB [LIBIBUMAD]}
umad=${2:-}

. "$(dirname "$0")/../test/common/symbols.sh"

[ -n "$umad" ] || umad=$(sym_find_lib libibumad.so.3)
if [ -z "$umad" ] || [ ! -e "$umad" ]; then
	echo "SKIP: no libibumad.so.3 to compare with"
	exit 77
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

sym_funcs "$umad" > "$tmp/umad.all"
sym_funcs "$lib" > "$tmp/lib.all"
cat > "$tmp/expected" <<'LIST'
IBUMAD_1.0 umad_get_ca
IBUMAD_1.0 umad_get_ca_portguids
IBUMAD_1.0 umad_get_cas_names
IBUMAD_1.0 umad_get_issm_path
IBUMAD_1.0 umad_get_port
IBUMAD_1.0 umad_open_port
IBUMAD_1.0 umad_release_ca
IBUMAD_1.0 umad_release_port
IBUMAD_1.1 umad_free_ca_device_list
IBUMAD_1.1 umad_get_ca_device_list
LIST
sort -o "$tmp/expected" "$tmp/expected"

fail=0
if ! diff -u "$tmp/expected" "$tmp/lib.all" > "$tmp/diff"; then
	echo "FAIL: exported functions differ from shim_umad.c's set ('+' exported, not expected):"
	cat "$tmp/diff"
	fail=1
fi
missing=$(comm -23 "$tmp/lib.all" "$tmp/umad.all")
if [ -n "$missing" ]; then
	echo "FAIL: functions $umad does not export under these versions:"
	echo "$missing"
	fail=1
fi
if [ -n "$(sym_data "$lib")" ]; then
	echo "FAIL: data exported:"
	sym_data "$lib"
	fail=1
fi
[ "$fail" -eq 0 ] && echo "ok: $(wc -l < "$tmp/lib.all") functions, as $umad has them"
exit "$fail"
