#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
#
# check-symbols.sh LIB [LIBRDMACM]
#
# librocepmd-rdmacm.so interposes on librdmacm.so.1 by LD_PRELOAD: a
# function of the real library that takes or returns a CM object and that
# LIB does not define would be reached with a rocepmd object and crash.
# Compare `objdump -T` of both, as symbol@VERSION of defined functions:
#  - every rdma_* function of librdmacm's RDMACM_* nodes is exported by
#    LIB under the same version, and LIB exports none that librdmacm
#    lacks; rsockets (r*) stay the real library's, running on top of LIB;
#  - LIB exports nothing else and no data.
# Exit 77 (skipped) without objdump or a librdmacm.so.1 to compare with.

set -eu

lib=${1:?usage: $0 LIB [LIBRDMACM]}
rdmacm=${2:-}

. "$(dirname "$0")/../test/common/symbols.sh"

[ -n "$rdmacm" ] || rdmacm=$(sym_find_lib librdmacm.so.1)
if [ -z "$rdmacm" ] || [ ! -e "$rdmacm" ]; then
	echo "SKIP: no librdmacm.so.1 to compare with"
	exit 77
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

sym_funcs "$rdmacm" | grep '^RDMACM_.* rdma_' > "$tmp/cm.pub" || true
sym_funcs "$lib" > "$tmp/lib.all"

fail=0
if [ ! -s "$tmp/cm.pub" ]; then
	echo "FAIL: no RDMACM_* rdma_* function found in $rdmacm"
	fail=1
fi
if ! diff -u "$tmp/cm.pub" "$tmp/lib.all" > "$tmp/diff"; then
	echo "FAIL: exported functions differ ('-' missing from $lib, '+' not librdmacm's):"
	cat "$tmp/diff"
	fail=1
fi
if [ -n "$(sym_data "$lib")" ]; then
	echo "FAIL: data objects exported:"
	sym_data "$lib"
	fail=1
fi
if [ "$fail" -eq 0 ]; then
	echo "OK: $(wc -l < "$tmp/lib.all") RDMACM_* functions match $rdmacm"
fi
exit "$fail"
