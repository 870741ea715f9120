#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# bench/tm_rate.sh: tag-matched message rate and bandwidth (EAGER and
# RNDV through a TM-SRQ) against plain RC SEND, measured in the same run.
# A benchmark that prints figures, not a test.
#
# Builds bench/tm_rate.c and runs it through build/tools/rocepmd-run on two
# rocepmd devices back to back over memif in one process (no network
# namespace, no root needed beyond what DPDK wants), one engine lcore
# serving both devices.
#
# Environment:
#   BENCH_MSGS     messages per measurement          (20000)
#   BENCH_WINDOW   messages in flight                (16)
#   BENCH_SIZES    message sizes, comma-separated    (64,1024,4096,16384)
#   BENCH_TAGS     extra tags posted (never matched) (1024)
#   BENCH_IDLE     engine idle policy                (busy)

set -euo pipefail

src=$(cd "$(dirname "$0")/.." && pwd)
run=$src/build/tools/rocepmd-run
[ -x "$run" ] || { echo "tm_rate.sh: build first (scripts/rocepmd-build)" >&2; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/rp-tm-rate-XXXXXX")
trap 'rm -rf "$tmp"' EXIT

cc -std=c11 -D_GNU_SOURCE -O2 -Wall -Wextra -o "$tmp/tm_rate" \
	"$src/bench/tm_rate.c" -libverbs

tag=tmrate$$
sed -e "s/@CASE@/$tag/g" \
	-e "s/^idle = .*/idle = ${BENCH_IDLE:-busy}/" \
	-e "s/^region_mb = .*/region_mb = 64/" \
	"$src/test/engine/two-ports.ini.in" >"$tmp/tm_rate.ini"

"$run" --config "$tmp/tm_rate.ini" -- "$tmp/tm_rate" \
	-n "${BENCH_MSGS:-20000}" -w "${BENCH_WINDOW:-16}" \
	-s "${BENCH_SIZES:-64,1024,4096,16384}" -t "${BENCH_TAGS:-1024}"
