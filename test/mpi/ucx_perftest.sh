#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# ucx_perftest.sh TRANSPORT: UCX's own ucx_perftest between the two test
# hosts, TRANSPORT rc_verbs or ud_verbs on rocepmd0:1.  The server runs in
# B (no host: it waits on TCP PORT for the client's out-of-band exchange),
# the client in A; the server serves one test and exits, so it is started
# again for each.
#
#   rc_verbs: UCX_TLS=rc_v (UCX's alias: rc_verbs, with ud_verbs only for
#             the wire-up; rc_verbs alone has no transport to connect
#             through).  tag_lat and tag_bw (UCP, 64 KiB: rendezvous), and
#             put_lat and put_bw straight on the UCT transport (-x rc_verbs:
#             RDMA WRITE, 8 B inline and 64 KiB zero-copy).
#   ud_verbs: UCX_TLS=ud_verbs.  tag_lat, tag_bw, and ucp_put_lat /
#             ucp_put_bw: UD has no RDMA, so UCP carries the puts in
#             datagrams (UCT put_* over ud_verbs is "Unsupported
#             operation", in UCX as on any hardware).
#
# Passes when every run exits 0 on both sides and the client's "Final:"
# line counts every iteration; for the UCP tests the client's log must
# name TRANSPORT on rocepmd0:1 as the lane UCX chose.  The figures are
# printed, not judged.

# shellcheck source=../verbs/lib.sh
. "$(dirname "$0")/../verbs/lib.sh"

tl=${1:?usage: ucx_perftest.sh rc_verbs|ud_verbs}
iters=${RM_ITERS:-1000}
port=13337
dev=rocepmd0:1

case $tl in
rc_verbs)
	tls=rc_v
	runs=("tag_lat -s 8" "tag_bw -s 65536"
	      "put_lat -x rc_verbs -d $dev -s 8"
	      "put_bw -x rc_verbs -d $dev -s 65536 -D zcopy")
	;;
ud_verbs)
	tls=ud_verbs
	runs=("tag_lat -s 8" "tag_bw -s 65536" "ucp_put_lat -s 8"
	      "ucp_put_bw -s 65536")
	;;
*)
	rv_fail "TRANSPORT must be rc_verbs or ud_verbs, not '$tl'"
	;;
esac

rv_need_env
rv_need_root
rv_need_prog ucx_perftest ucx-utils
rv_need_prog nft nftables

rv_topology "perf${tl:0:2}"
export UCX_TLS=$tls UCX_NET_DEVICES=$dev

for r in "${runs[@]}"; do
	read -r -a args <<<"$r"
	test=${args[0]}
	rv_log "$tl: ucx_perftest -t $r -n $iters"
	rv_bg server "$RP_NS_B" "$RV_CFG_B" -- ucx_perftest -p "$port"
	srv=$rv_last_pid
	rv_wait_listen "$RP_NS_B" "$port" "$srv" server
	UCX_LOG_LEVEL=info rv_fg client "$RP_NS_A" "$RV_CFG_A" -- \
		ucx_perftest -p "$port" -t "${args[@]}" -n "$iters" "$RV_IP_B"
	crc=$rv_status
	[ "$crc" -eq 0 ] || kill -TERM "$srv" 2>/dev/null
	wait "$srv"
	src=$?
	rv_forget "$srv"
	if [ "$crc" -ne 0 ] || [ "$src" -ne 0 ]; then
		rv_show client
		rv_show server
		rv_fail "$tl $test: client exited with $crc, server with $src"
	fi
	final=$(grep '^Final:' "$rv_tmp/client.out")
	[ -n "$final" ] || { rv_show client; rv_fail "$tl $test: no 'Final:' line"; }
	read -r _ n p50 avg _ _ bw _ rate <<<"$final"
	[ "$n" -eq "$iters" ] ||
		rv_fail "$tl $test: $n iterations, expected $iters"
	case $test in
	put_*) ;;
	*)
		grep -q "ep_cfg\[[0-9]*\]: .*$tl/$dev" "$rv_tmp/client.err" "$rv_tmp/client.out" || {
			rv_show client
			rv_fail "$tl $test: UCX did not choose $tl/$dev"
		}
		;;
	esac
	rv_log "$tl $test ${args[*]:1}: median $p50 us, average $avg us, overall $bw MB/s, $rate msg/s"
done
rv_log "PASS: ucx_perftest over $tl: ${#runs[@]} tests"
