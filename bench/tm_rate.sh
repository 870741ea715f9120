#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# bench/tm_rate.sh: tag-matched message rate and bandwidth (EAGER and
# RNDV through a TM-SRQ, rocepmd-testpmd's tag_eager and tag_rndv) against
# plain RC SEND (send_bw), measured in the same run.  A benchmark that
# prints figures, not a test.
#
# Two rocepmd devices back to back over memif in one process, one engine
# lcore serving both; 1024 other tags posted on the TM-SRQ.
#
# Environment:
#   BENCH_MSGS     messages per measurement          (20000)
#   BENCH_WINDOW   messages in flight (depth)        (16)
#   BENCH_SIZES    message sizes, comma-separated    (64,1024,4096,16384)
#   BENCH_IDLE     engine idle policy                (busy)

set -euo pipefail

src=$(cd "$(dirname "$0")/.." && pwd)
app=$src/build/app/rocepmd-testpmd/rocepmd-testpmd
[ -x "$app" ] || { echo "tm_rate.sh: build first (scripts/rocepmd-build)" >&2; exit 1; }
cmds=$(mktemp "${TMPDIR:-/tmp}/rp-tm-rate-XXXXXX")
trap 'rm -f "$cmds"' EXIT
{
	echo "set iters ${BENCH_MSGS:-20000}"
	echo "set depth ${BENCH_WINDOW:-16}"
	IFS=, read -ra sizes <<<"${BENCH_SIZES:-64,1024,4096,16384}"
	for s in "${sizes[@]}"; do
		echo "set size $s"
		echo "start send_bw"
		echo "start tag_eager"
		echo "start tag_rndv"
	done
} >"$cmds"
sock=/rp-tm-rate-$$
exec "$app" -l 0-1 --no-huge -m 1024 --no-pci --no-shconf \
	--file-prefix="rp_tm_rate$$" --log-level=rocepmd:warning \
	--log-level=pmd.net.memif:error \
	--vdev "net_memif0,role=server,id=0,socket-abstract=yes,socket=$sock,mac=02:00:00:00:00:01" \
	--vdev "net_memif1,role=client,id=0,socket-abstract=yes,socket=$sock,mac=02:00:00:00:00:02" \
	-- --port net_memif0,ip=192.0.2.1/24,mtu=1024,lcore=1 \
	--port net_memif1,ip=192.0.2.2/24,mtu=1024,lcore=1 \
	--idle "${BENCH_IDLE:-busy}" --no-raw --cmdline-file "$cmds"
