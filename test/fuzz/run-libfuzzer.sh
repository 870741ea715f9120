#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Run one libFuzzer target for a bounded time (suite 'libfuzzer'):
#
#   run-libfuzzer.sh TARGET WORK_DIR SEED_CORPUS [LIBFUZZER ARGS...]
#
# New inputs and crash artifacts go to WORK_DIR (in the build tree), the
# committed SEED_CORPUS is only read.  Ends with one line giving the
# executions, the time and exec/s (from -print_final_stats), which
# scripts/rocepmd-test repeats in its summary; a crash names the input
# that reproduces it: TARGET ARTIFACT.
set -u
target=$1 work=$2 seeds=$3
shift 3
name=${target##*/}
mkdir -p "$work/new" "$work/artifacts"
log=$work/libfuzzer.log
"$target" -print_final_stats=1 -artifact_prefix="$work/artifacts/" \
	"$@" "$work/new" "$seeds" >"$log" 2>&1
status=$?
# libFuzzer's periodic status lines and the final stats, not the noise
grep -E '^#[0-9]+|^stat::|^INFO: Seed|^==[0-9]+==|ERROR|SUMMARY|artifact|^Done' \
	"$log" | tail -n 60
runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log")
secs=$(sed -n 's/^Done [0-9]* runs in \([0-9]*\) second.*/\1/p' "$log")
echo "libfuzzer: $name: ${runs:-?} executions in ${secs:-?} s, ${rate:-?} exec/s"
# libFuzzer's error exit code is 77 by default, which meson takes for
# "skipped": a crash must fail the test.
[ $status -eq 77 ] && status=1
if [ $status -ne 0 ]; then
	echo "libfuzzer: $name failed ($status); reproduce with: $target $work/artifacts/<crash-file> (full log: $log)"
fi
exit $status
