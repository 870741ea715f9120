#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# One of rdma-core's own pyverbs test modules over rocepmd, run through
# rocepmd-run like any program:
#
#   rdma_core_test.sh RP_RUN CONFIG MODULE NTESTS
#
# e.g. MODULE test_cq_events (RC and UD traffic with CQs on a completion
# channel) with NTESTS 2, or test_tag_matching (TM-SRQ) with NTESTS 4.
#
# python3-pyverbs installs rdma-core's test suite under
# /usr/share/doc/rdma-core/tests, some files gzipped: they are copied into
# a temporary directory and gunzipped there (nothing under /usr changes).
# All NTESTS cases must run and pass: a skip counts as a failure.
# Exit: 0 pass, 1 fail, 77 only if python3-pyverbs is not installed.

set -u

usage="usage: rdma_core_test.sh RP_RUN CONFIG MODULE NTESTS"
RP_RUN=${1:?$usage}
CONFIG=${2:?$usage}
MOD=${3:?$usage}
NTESTS=${4:?$usage}
SRC=${RP_RDMA_TESTS:-/usr/share/doc/rdma-core/tests}
TIMEOUT=${RV_TIMEOUT:-120}
# meson passes build-relative paths; the run below happens elsewhere
RP_RUN=$(realpath "$RP_RUN") && CONFIG=$(realpath "$CONFIG") || exit 1

# pyverbs lives in the distribution's python (dist-packages), which may
# not be the first python3 on PATH (pyenv, venvs).
PY=
for p in /usr/bin/python3 python3; do
	if command -v "$p" >/dev/null 2>&1 &&
	   "$p" -c 'import pyverbs.device' >/dev/null 2>&1; then
		PY=$(command -v "$p")
		break
	fi
done
if [ -z "$PY" ]; then
	echo "$MOD: SKIP: python3-pyverbs is not installed (no python3 imports pyverbs)"
	exit 77
fi
if [ ! -f "$SRC/run_tests.py" ] ||
   { [ ! -f "$SRC/$MOD.py" ] && [ ! -f "$SRC/$MOD.py.gz" ]; }; then
	echo "$MOD: FAIL: pyverbs is importable ($PY) but rdma-core's tests are not in $SRC"
	exit 1
fi

TMP=$(mktemp -d /tmp/rp-pyverbs.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
cp -r "$SRC" "$TMP/tests"
find "$TMP/tests" -name '*.gz' -exec gunzip -f {} +

echo "$MOD: $PY $TMP/tests/run_tests.py --dev rocepmd0 --port 1 $MOD (config $CONFIG)"
cd "$TMP" || exit 1
timeout -k 5 "$TIMEOUT" "$RP_RUN" --config "$CONFIG" -- \
	"$PY" tests/run_tests.py --dev rocepmd0 --port 1 --gid 0 -v "$MOD" \
	>"$TMP/out" 2>&1
rc=$?
cat "$TMP/out"
if [ $rc -ne 0 ]; then
	echo "$MOD: FAIL: exit status $rc"
	exit 1
fi
if ! grep -q "^Ran $NTESTS tests\? in " "$TMP/out" || ! grep -qx 'OK' "$TMP/out"; then
	# "OK (skipped=N)" or fewer tests: something did not really run
	echo "$MOD: FAIL: expected 'Ran $NTESTS tests' and a bare 'OK' (no skip, no failure)"
	exit 1
fi
echo "$MOD: PASS"
exit 0
