#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# read_bw.sh QPS RUNS SIZE...: unmodified ib_read_bw with QPS queue pairs
# between two network namespaces, RUNS times for each SIZE.  perftest asks
# for max_qp_rd_atom READs in flight on every QP (128 on rocepmd), so the
# responder's READ queue runs full and losses make the requester resend
# READs the responder still holds (issue 9: -q 4 failed with
# REM_INV_REQ_ERR, status 9).
#
#   [rv-<tag>-b] rocepmd-run --config netns-b.ini -- ib_read_bw -d rocepmd0
#                  -x 0 -F -q QPS -s SIZE -n ITERS -p PORT
#   [rv-<tag>-a] rocepmd-run --config netns-a.ini -- ib_read_bw ... 192.0.2.2
#
# Passes when every client and server exits 0 and the client printed its
# bandwidth line.  RV_READ_ITERS overrides the iteration count (default
# 1000, perftest's), RV_READ_LOG the engines' --log-level (default
# rocepmd:info: the counters print at exit).

. "$(dirname "$0")/lib.sh"

qps=${1:?QPS}
runs=${2:?RUNS}
shift 2
[ $# -gt 0 ] || rv_fail "no SIZE given"
iters=${RV_READ_ITERS:-1000}

rv_need_env
rv_need_root
rv_need_prog ib_read_bw perftest

rv_topology "rd$qps"
# The engines' counters print at exit: evidence when a run fails.
sed -i "s/^;args = .*/args = --log-level=${RV_READ_LOG:-rocepmd:info}/" \
	"$RV_CFG_A" "$RV_CFG_B"
grep -q "^args = --log-level" "$RV_CFG_A" ||
	rv_fail "config/netns-a.ini has no ';args =' line to set the log level"
port=18515
fails=0
for size in "$@"; do
	for ((r = 1; r <= runs; r++)); do
		args=(-d rocepmd0 -x 0 -F -q "$qps" -s "$size" -n "$iters"
			-p "$port")
		tag="s$size-r$r"
		rv_log "run $r size $size: ib_read_bw ${args[*]} [$RV_IP_B]"
		rv_bg "server-$tag" "$RP_NS_B" "$RV_CFG_B" -- ib_read_bw "${args[@]}"
		srv=$rv_last_pid
		rv_wait_listen "$RP_NS_B" "$port" "$srv" "server-$tag"
		rv_fg "client-$tag" "$RP_NS_A" "$RV_CFG_A" -- ib_read_bw \
			"${args[@]}" "$RV_IP_B"
		crc=$rv_status
		wait "$srv"
		src=$?
		rv_forget "$srv"
		ok=1
		[ "$crc" -eq 0 ] && [ "$src" -eq 0 ] || ok=0
		# The result line: bytes, iterations, peak and average BW.
		grep -qE "^ *$size +[0-9]+ +[0-9.]+ +[0-9.]+" \
			"$rv_tmp/client-$tag.out" || ok=0
		if [ "$ok" -eq 0 ]; then
			rv_log "run $r size $size FAILED: client $crc server $src"
			rv_show "client-$tag"
			rv_show "server-$tag"
			fails=$((fails + 1))
		else
			rv_log "run $r size $size: $(grep -E "^ *$size +[0-9]+ " \
				"$rv_tmp/client-$tag.out")"
		fi
	done
done
[ "$fails" -eq 0 ] || rv_fail "$fails of $((runs * $#)) runs failed"
rv_log "PASS: ib_read_bw -q $qps, $runs runs of sizes $*"
