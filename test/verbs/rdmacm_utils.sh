#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# rdmacm_utils.sh SERVER CLIENT [ARGS...]: unmodified rdmacm-utils test
# programs over rocepmd between two network namespaces: ucmatose (several
# RC connections at once), udaddy (UD through SIDR), rdma_server and
# rdma_client, rdma_xserver and rdma_xclient (the endpoint API of
# rdma_create_ep and <rdma/rdma_verbs.h>), rstream and riostream (rsockets).
#
#   [rv-<tag>-b] rocepmd-run --config netns-b.ini -- SERVER ARGS...
#   [rv-<tag>-a] rocepmd-run --config netns-a.ini -- CLIENT -s 192.0.2.2 ARGS...
#
# Passes when both exit 0 and both print the program's own success line
# (the programs check every transfer themselves; rstream and riostream
# check the data with -T v, and print their results table).
#
# rdmacm_utils.sh -6 SERVER CLIENT [ARGS...]: the same over IPv6, the
# server bound to its IPv6 address (rdma_getaddrinfo of the literal):
#
#   [rv-<tag>-b] ... SERVER -b 2001:db8::2 ARGS...   (rdma_server: -s)
#   [rv-<tag>-a] ... CLIENT -s 2001:db8::2 ARGS...
#
# (An AF_INET6 listener takes no IPv4 request, so only IPv6 connects.)

. "$(dirname "$0")/lib.sh"

fam=4
if [ "${1:-}" = -6 ]; then
	fam=6
	shift
fi
sprog=${1:?usage: rdmacm_utils.sh [-6] SERVER CLIENT [ARGS...]}
cprog=${2:?usage: rdmacm_utils.sh [-6] SERVER CLIENT [ARGS...]}
shift 2

# What a program prints when all went well.
rv_ok_line() {
	case $1 in
	ucmatose|udaddy) echo 'return status 0' ;;
	rdma_*) echo "$1: end 0" ;;
	rstream|riostream) echo '' ;;	# exit status and the table
	*) rv_fail "no success line known for $1" ;;
	esac
}

rv_need_env
rv_need_root
rv_need_prog "$sprog" rdmacm-utils
rv_need_prog "$cprog" rdmacm-utils
rv_need_prog nft nftables

rv_topology "${cprog:0:4}$fam$(($$ % 100))"
dst=$RV_IP_B
sargs=()
if [ "$fam" = 6 ]; then
	[ -n "$RV_IP6_B" ] || rv_fail "no ipv6 key in config/netns-b.ini"
	dst=$RV_IP6_B
	# The server's bind option: without one it binds to 0.0.0.0.
	case $sprog in
	ucmatose|udaddy|rstream|riostream) sargs=(-b "$dst") ;;
	rdma_server|rdma_xserver) sargs=(-s "$dst") ;;
	*) rv_fail "no bind option known for $sprog" ;;
	esac
fi
rv_log "server ($RP_NS_B): $sprog ${sargs[*]} $*"
rv_bg server "$RP_NS_B" "$RV_CFG_B" -- "$sprog" "${sargs[@]}" "$@"
srv=$rv_last_pid
# No TCP port to wait for: a REQ sent before the server listens is
# retransmitted every 500 ms for 7.5 s, longer than the engine takes to
# start.  Give it a head start all the same.
sleep 1
rv_log "client ($RP_NS_A): $cprog -s $dst $*"
rv_fg client "$RP_NS_A" "$RV_CFG_A" -- "$cprog" -s "$dst" "$@"
crc=$rv_status
if [ "$crc" -ne 0 ]; then
	sleep 1
	kill -TERM "$srv" 2>/dev/null
fi
wait "$srv"
src=$?
rv_forget "$srv"
rv_show client
rv_show server
[ "$crc" -ne 124 ] || rv_fail "client timed out after $RV_TIMEOUT s"
[ "$crc" -eq 0 ] || rv_fail "client exited with status $crc"
[ "$src" -ne 124 ] || rv_fail "server timed out after $RV_TIMEOUT s"
[ "$src" -eq 0 ] || rv_fail "server exited with status $src"
for side in client:$cprog server:$sprog; do
	ok=$(rv_ok_line "${side#*:}")
	if [ -n "$ok" ]; then
		grep -qxF "$ok" "$rv_tmp/${side%%:*}.out" ||
			rv_fail "${side%%:*} did not print '$ok'"
	else
		# rstream's results: "custom 64k 200 1 25m 0.08s 2.64 198.32"
		grep -Eq '^[a-z0-9_]+ +[0-9]+[kmg]? +[0-9]+ +[0-9]+ +[0-9.]+[kmg]? +[0-9.]+s ' \
			"$rv_tmp/${side%%:*}.out" ||
			rv_fail "${side%%:*} printed no results"
	fi
done
rv_log "PASS: $sprog/$cprog $* (IPv$fam)"
