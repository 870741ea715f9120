#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# xdp.sh CASE: ports bound to a kernel interface (netdev = IFACE, one line a
# port) with rocepmd's XDP program (guides/xdp), on the two test hosts
# created WITHOUT the nftables rule that drops RoCEv2 (the kernel must not
# see it: the program keeps it from the kernel) and with a veth MTU XDP can
# serve (3000).  The configurations are [port0] netdev = <veth> and nothing
# else of the port: device, addresses and MAC come from the kernel.
#
#   steer     ibv_rc_pingpong between the hosts (its TCP exchange through
#             the kernel of the same veth) while a ping and a TCP stream run
#             over that veth: all three checked (data of the pingpong, no
#             ping lost, every byte of the stream); the program's counters
#             (xdp_redirected, xdp_passed), the peer from the kernel's
#             neighbour table (neigh_from_kernel) and no invalid descriptor
#             on the AF_XDP sockets (xsk_invalid_descs) asserted
#   stale     a server killed (SIGKILL) leaves its program on the veth; the
#             next engine removes it (xdp_stale_removed) and runs a pair;
#             then a server starts while an AF_XDP socket (xsk_hold)
#             holds the veth's queue 0, as the kernel holds a closed
#             socket's queue a while after its engine exited: it waits
#             (the holder is ended once it says so), reopening the port
#             (xsk_queue_waits), and runs a pair; once the engines end,
#             no XDP program is left on the veth
#   fallback  at MTU 9000 (over what XDP serves on a veth) the same line
#             binds af_packet (ring frames of 5120 bytes: IB MTU 4096),
#             with a warning; a missing interface is an
#             error that names it; an address added to the interface is in
#             the GID table of the next start (ibv_devinfo -v), and one
#             added while a program runs reaches it as IBV_EVENT_GID_CHANGE
#             with the new GID in the table (gid_watch)
#   queues    veths of two receive queues, as a NIC with RSS: host B
#             (af_packet, its engine on CPU 0) sends on transmit queue 1
#             (XPS), so everything host A receives arrives on its receive
#             queue 1, which the PMD does not serve: ibv_rc_pingpong -e runs,
#             every frame through the engine's own AF_XDP socket
#             (rx_other_queues), none dropped by the program (xdp_dropped)
#   adaptive  both engines with the idle policy adaptive and a wake_us of
#             200 ms: ibv_rc_pingpong over af_xdp, then with host B on
#             af_packet; each frame wakes the blocked engine through its
#             receive socket (wakeups_rx_socket), not the timeout
#   inline    rocepmd-testpmd send_lat, 20000 round trips polling with
#             inline passes, each host on one CPU: every message ok, every
#             frame through the program (the mbuf pool walked end to end,
#             each mbuf an af_xdp umem chunk)
#   lcores    veths of two queues, each host's device served by two engine
#             lcores (lcore = 1,2), one queue pair each: ucmatose with 8
#             connections, each its own CQ, so that they spread over both
#             lcores; every connection completes its messages, each lcore
#             of each host received and sent RoCEv2 (shardN_rx_packets,
#             shardN_tx_packets), the second through its own AF_XDP socket
#             (rx_other_queues); then host B on one lcore, so that every
#             frame reaches host A on queue 0: its first lcore hands the
#             second's frames over (shard_handoffs), the pairs run the
#             same; no program left on either veth
case=${1:?usage: $0 steer|stale|fallback|queues|adaptive|inline|lcores GID_WATCH [TESTPMD [XSK_HOLD]]}
gid_watch=${2:-}
testpmd=${3:-}
xsk_hold=${4:-}
# shellcheck source=../verbs/lib.sh
. "$RP_SRC_ROOT/test/verbs/lib.sh"

rv_need_env
rv_need_root
rv_need_prog ibv_rc_pingpong ibverbs-utils
rv_need_prog ping iputils-ping

export RP_NFT=0 RP_VETH_MTU=3000
case $case in queues | lcores) export RP_VETH_QUEUES=2 ;; esac
rv_topology "xdp$case"

# A configuration of one line per port; host A polls on CPU 1, host B on
# CPU 0 (config/netns-[ab]-xdp.ini), so the two engines never share one.
netdev_cfg() {
	cat >"$rv_tmp/$1.ini" <<EOF
[eal]
args = --no-huge -m 512 --no-pci --file-prefix=rv-xdp-$1-$$ --log-level=rocepmd*:info
[engine]
main_lcore = $3
lcores = $4
idle = sleep
[port0]
netdev = $2
EOF
}
netdev_cfg a "$RP_VETH_A" 0 1
netdev_cfg b "$RP_VETH_B" 1 0
CA=$rv_tmp/a.ini
CB=$rv_tmp/b.ini
# queues and adaptive test the engine lcores themselves (the transmit
# queue of the lcore's CPU, the lcore's wake-ups): no inline passes, which
# the default (inline_us = auto) gives a polling program on two CPUs.
case $case in
queues | adaptive)
	sed -i "s/^\[engine\]$/[engine]\ninline_us = 0/" "$CA" "$CB" ;;
esac

# counter NAME PROGRAM: a device counter from the program's exit log.
counter() {
	sed -n "s/.*rocepmd0: $1 \([0-9]*\)$/\1/p" "$rv_tmp/$2.err" | tail -n 1
}

# no_invalid PROGRAM: its AF_XDP socket found no invalid descriptor (an
# mbuf outside the umem); the counter prints only when it is not 0.
no_invalid() {
	local v

	grep -q "AF_XDP socket not found" "$rv_tmp/$1.err" &&
		rv_fail "$1: the engine did not find its AF_XDP socket"
	v=$(counter xsk_invalid_descs "$1")
	[ "${v:-0}" -eq 0 ] ||
		rv_fail "$1: xsk_invalid_descs $v: frames the kernel refused"
}

# xdp_on NS DEV: whether an XDP program is attached to DEV.
xdp_on() {
	ip -n "$1" -d link show "$2" | grep -q 'prog/xdp'
}

# run2 PORT|cm: the server (array S) on host B, once it listens on TCP
# PORT (cm: a head start, the RDMA CM resends a REQ sent before the server
# listens), then the client (array C) on host A, with this test's
# configurations (CA, CB); both must exit 0.
# shellcheck disable=SC2034 # the pair_* locals are hosts_pair's
run2() {
	local RV_CFG_A=$CA RV_CFG_B=$CB port=$1
	local pair_start=rv_pair_bg pair_ready=rv_pair_ready
	local pair_forget=rv_forget pair_grace=0
	local pair_srv=("${S[@]}") pair_cli=("${C[@]}")

	[ "$port" = cm ] && port=-
	hosts_pair "$port"
	[ "$pair_crc" -eq 0 ] && [ "$pair_src" -eq 0 ] ||
		{ rv_show client; rv_show server; rv_fail "${S[0]}: client $pair_crc, server $pair_src"; }
}

# pair PORT [ARG...]: ibv_rc_pingpong 4 KiB x 2000 with ARGs, both ways.
pair() {
	S=(ibv_rc_pingpong -g 0 -s 4096 -n 2000 -c "${@:2}" -p "$1")
	C=("${S[@]}" "$RV_IP_B")
	run2 "$1"
	rv_check_pingpong client 4096 2000
	rv_check_pingpong server 4096 2000
}

# Host B on af_packet on the same veth (CB from now on): the kernel's
# transmit path, where XPS picks the queue (af_xdp sends on its own queue
# 0), with the nftables rule that keeps its kernel from answering RoCEv2.
b_af_packet() {
	ip netns exec "$RP_NS_B" nft -f - <<-EOF || rv_fail "host B: no nftables rule"
		table inet rvxdpb {
			chain input {
				type filter hook input priority filter; policy accept;
				udp dport 4791 drop
			}
		}
	EOF
	sed -e "s/^netdev = .*/device = net_af_packet0,iface=$RP_VETH_B\nipv4 = $RV_IP_B\/24/" \
		"$CB" >"$rv_tmp/b-packet.ini"
	CB=$rv_tmp/b-packet.ini
}

# lcore_counter NAME PROGRAM: an engine lcore's counter from its exit log.
lcore_counter() {
	sed -n "s/.*engine lcore [0-9]*: $1 \([0-9]*\)$/\1/p" "$rv_tmp/$2.err" | tail -n 1
}

# woken PORT: both engines block when idle (a wake_us of 200 ms) and a
# frame wakes them through their receive sockets: the pingpong's 2000
# round trips would take minutes if every frame waited for wake_us.
woken() {
	local p w t

	pair "$1"
	for p in client server; do
		w=$(lcore_counter wakeups_rx_socket "$p")
		t=$(lcore_counter wakeups_timeout "$p")
		rv_log "$2 $p: wakeups_rx_socket ${w:-0}, wakeups_timeout ${t:-0}"
		[ "${w:-0}" -ge 500 ] ||
			rv_fail "$2 $p: ${w:-0} wake-ups by a receive socket for 2000 round trips"
	done
}

# ucm_pair PORT: ucmatose, 8 connections (each its own CQ and QP) of 200
# messages of 4 KiB, host B the server; both must end with status 0.
ucm_pair() {
	local p

	S=(ucmatose -b "$RV_IP_B" -p "$1" -c 8 -C 200 -S 4096)
	C=(ucmatose -s "$RV_IP_B" -p "$1" -c 8 -C 200 -S 4096)
	run2 cm
	for p in client server; do
		grep -qx 'return status 0' "$rv_tmp/$p.out" ||
			{ rv_show "$p"; rv_fail "$p: ucmatose did not end with status 0"; }
		no_invalid "$p"
	done
}

# shards_carried PROGRAM: each of its device's two lcores received and
# sent the frames of its connections (the exit log's shardN_ counters).
shards_carried() {
	local s r t h

	for s in 0 1; do
		r=$(counter "shard${s}_rx_packets" "$1")
		t=$(counter "shard${s}_tx_packets" "$1")
		h=$(counter "shard${s}_shard_handoffs" "$1")
		rv_log "$1: lcore $((s + 1)): rx_packets ${r:-0} tx_packets ${t:-0} handed over ${h:-0}"
		[ "${r:-0}" -ge 400 ] && [ "${t:-0}" -ge 400 ] ||
			rv_fail "$1: lcore $((s + 1)) carried ${r:-0} frames in, ${t:-0} out: its connections did not run on it"
	done
}

case $case in
steer)
	ip netns exec "$RP_NS_B" "$RP_RUN" --config "$CB" --check >"$rv_tmp/check.out" 2>&1 ||
		{ cat "$rv_tmp/check.out"; rv_fail "the one-line configuration was refused"; }
	grep -q "vdev net_af_xdp0,iface=$RP_VETH_B,xdp_prog=.*rp_xdp.o,busy_budget=0, ipv4 $RV_IP_B/24" "$rv_tmp/check.out" ||
		{ cat "$rv_tmp/check.out"; rv_fail "netdev = $RP_VETH_B did not bind af_xdp with the kernel's address"; }
	# The kernel's own traffic on the same veth, beside RoCE: a TCP
	# stream of 64 MiB (its byte count and checksum compared) and a ping.
	ip netns exec "$RP_NS_B" python3 -c '
import hashlib, socket, sys
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("0.0.0.0", 18710)); s.listen(1); c, _ = s.accept(); h = hashlib.sha256(); n = 0
while True:
    b = c.recv(1 << 16)
    if not b: break
    h.update(b); n += len(b)
print(n, h.hexdigest())' >"$rv_tmp/tcp_rx.out" 2>&1 &
	tcp_rx=$!
	rv_pids+=("$tcp_rx")
	rv_wait_listen "$RP_NS_B" 18710 "$tcp_rx" tcp_rx
	ip netns exec "$RP_NS_A" python3 -c '
import hashlib, socket, sys, time
c = socket.create_connection((sys.argv[1], 18710)); h = hashlib.sha256(); n = 0
blk = bytes(range(256)) * 256
for i in range(1024):
    c.sendall(blk); h.update(blk); n += len(blk)
    time.sleep(0.002)
c.close(); print(n, h.hexdigest())' "$RV_IP_B" >"$rv_tmp/tcp_tx.out" 2>&1 &
	tcp_tx=$!
	rv_pids+=("$tcp_tx")
	ip netns exec "$RP_NS_A" ping -q -c 40 -i 0.05 "$RV_IP_B" >"$rv_tmp/ping.out" 2>&1 &
	pinger=$!
	rv_pids+=("$pinger")
	pair 18711
	wait "$pinger" || { cat "$rv_tmp/ping.out"; rv_fail "ping over the veth failed beside RoCE"; }
	rv_forget "$pinger"
	grep -q " 0% packet loss" "$rv_tmp/ping.out" ||
		{ cat "$rv_tmp/ping.out"; rv_fail "ping lost packets beside RoCE"; }
	wait "$tcp_tx" || { cat "$rv_tmp/tcp_tx.out"; rv_fail "the TCP sender failed"; }
	rv_forget "$tcp_tx"
	wait "$tcp_rx"
	rv_forget "$tcp_rx"
	[ "$(cat "$rv_tmp/tcp_tx.out")" = "$(cat "$rv_tmp/tcp_rx.out")" ] ||
		rv_fail "TCP stream: sent '$(cat "$rv_tmp/tcp_tx.out")', received '$(cat "$rv_tmp/tcp_rx.out")'"
	for p in client server; do
		r=$(counter xdp_redirected "$p")
		k=$(counter xdp_passed "$p")
		n=$(counter neigh_from_kernel "$p")
		rv_log "$p: xdp_redirected ${r:-0}, xdp_passed ${k:-0}, neigh_from_kernel ${n:-0}"
		[ "${r:-0}" -ge 4000 ] || rv_fail "$p: the program redirected ${r:-0} frames, not the pingpong's"
		[ "${k:-0}" -ge 1 ] || rv_fail "$p: the program passed nothing to the kernel"
		[ "${n:-0}" -ge 1 ] || rv_fail "$p: the peer's MAC did not come from the kernel"
		no_invalid "$p"
	done
	rv_log "TCP stream $(cut -d' ' -f1 "$rv_tmp/tcp_rx.out") bytes and ping intact beside RoCE over XDP"
	;;
stale)
	rv_bg victim "$RP_NS_B" "$CB" -- ibv_rc_pingpong -g 0 -s 64 -n 10 -p 18712
	vic=$rv_last_pid
	rv_wait_listen "$RP_NS_B" 18712 "$vic" victim
	xdp_on "$RP_NS_B" "$RP_VETH_B" || rv_fail "no XDP program on $RP_VETH_B while the engine runs"
	p=$(pgrep -P "$vic" | head -1)
	[ -n "$p" ] || p=$vic
	kill -KILL "$p"
	wait "$vic"
	rv_forget "$vic"
	xdp_on "$RP_NS_B" "$RP_VETH_B" ||
		rv_fail "the killed engine's program is gone already: nothing to test"
	pair 18713
	s=$(counter xdp_stale_removed server)
	[ "${s:-0}" = 1 ] || { rv_show server; rv_fail "the next engine did not count the stale program it removed (${s:-0})"; }
	grep -q "removed the XDP program .* a killed engine left on $RP_VETH_B" "$rv_tmp/server.err" ||
		rv_fail "the next engine did not say it removed the stale program"
	# Queue 0 still bound as the server's engine starts: it must wait
	# for it (the kernel lets a closed socket's queue go from a work
	# queue: an engine started as the last one exited found it bound).
	ip netns exec "$RP_NS_B" "$xsk_hold" "$RP_VETH_B" 0 >"$rv_tmp/hold.out" 2>&1 &
	hold=$!
	rv_pids+=("$hold")
	for _ in $(seq 100); do
		grep -q bound "$rv_tmp/hold.out" && break
		kill -0 "$hold" 2>/dev/null || break
		sleep 0.1
	done
	grep -q bound "$rv_tmp/hold.out" ||
		{ cat "$rv_tmp/hold.out"; rv_fail "xsk_hold did not bind queue 0 of $RP_VETH_B"; }
	# The holder ends (as an exiting engine) once the server's engine
	# says it waits, or after 30 s.
	(for _ in $(seq 300); do
		grep -q "waiting up to" "$rv_tmp/server.err" 2>/dev/null && break
		sleep 0.1
	done
	kill "$hold") &
	ender=$!
	rv_pids+=("$ender")
	pair 18714
	wait "$ender"
	rv_forget "$ender"
	wait "$hold"
	rv_forget "$hold"
	w=$(counter xsk_queue_waits server)
	rv_log "server: port reopened ${w:-0} times while queue 0 was held"
	[ "${w:-0}" -ge 1 ] ||
		{ rv_show server; rv_fail "the server's engine started on a queue still bound without waiting (xsk_queue_waits ${w:-0})"; }
	grep -q "receive queue set up after [0-9]* ms" "$rv_tmp/server.err" ||
		rv_fail "the server's engine did not say how long it waited"
	for h in "$RP_NS_A:$RP_VETH_A" "$RP_NS_B:$RP_VETH_B"; do
		! xdp_on "${h%%:*}" "${h#*:}" ||
			rv_fail "an XDP program is left on ${h#*:} after its engine ended"
	done
	rv_log "stale program removed and replaced; none left after the engines"
	;;
fallback)
	ip -n "$RP_NS_A" link set "$RP_VETH_A" mtu 9000
	ip netns exec "$RP_NS_A" "$RP_RUN" --config "$CA" --check >"$rv_tmp/fb.out" 2>&1 ||
		{ cat "$rv_tmp/fb.out"; rv_fail "MTU 9000: the configuration was refused"; }
	# ring frames that hold IB MTU 4096, which the interface carries
	grep -q "vdev net_af_packet0,iface=$RP_VETH_A,framesz=5120,blocksz=20480, ipv4 $RV_IP_A/24" "$rv_tmp/fb.out" ||
		{ cat "$rv_tmp/fb.out"; rv_fail "MTU 9000: no af_packet fallback"; }
	grep -q "netdev: $RP_VETH_A: no XDP (the interface's MTU is over" "$rv_tmp/fb.out" ||
		{ cat "$rv_tmp/fb.out"; rv_fail "MTU 9000: no warning about the fallback"; }
	ip -n "$RP_NS_A" link set "$RP_VETH_A" mtu 3000
	sed "s/^netdev = .*/netdev = rvnosuch0/" "$CA" >"$rv_tmp/bad.ini"
	if ip netns exec "$RP_NS_A" "$RP_RUN" --config "$rv_tmp/bad.ini" --check >"$rv_tmp/bad.out" 2>&1; then
		rv_fail "a missing interface was accepted"
	fi
	grep -q "netdev: no interface 'rvnosuch0' here" "$rv_tmp/bad.out" ||
		{ cat "$rv_tmp/bad.out"; rv_fail "a missing interface: no clear error"; }
	ip -n "$RP_NS_A" -6 addr add 2001:db8:77::1/64 dev "$RP_VETH_A" nodad
	rv_fg devinfo "$RP_NS_A" "$CA" -- ibv_devinfo -v
	[ "$rv_status" -eq 0 ] || { rv_show devinfo; rv_fail "ibv_devinfo failed"; }
	grep -q "GID\[ *[0-9]*\]:.*2001:db8:77::1" "$rv_tmp/devinfo.out" ||
		{ rv_show devinfo; rv_fail "the interface's address 2001:db8:77::1 is not in the GID table"; }
	# Live: an address added while a program runs.
	rv_bg watch "$RP_NS_A" "$CA" -- "$gid_watch"
	w=$rv_last_pid
	rv_wait_output watch ready "$w"
	ip -n "$RP_NS_A" -6 addr add 2001:db8:78::1/64 dev "$RP_VETH_A" nodad
	wait "$w"
	wrc=$?
	rv_forget "$w"
	[ "$wrc" -eq 0 ] || { rv_show watch; rv_fail "no GID change event after an address was added"; }
	grep -q "^after GID\[[0-9]*\] 2001:db8:78::1$" "$rv_tmp/watch.out" ||
		{ rv_show watch; rv_fail "the added address is not in the GID table after the event"; }
	grep -q "^before GID.* 2001:db8:78::1$" "$rv_tmp/watch.out" &&
		rv_fail "the address was there before it was added"
	rv_log "af_packet fallback at MTU 9000, a missing interface named, the kernel's addresses in the GID table, at start and live"
	;;
queues)
	# Host B on af_packet, its engine on CPU 0, whose transmit queue is
	# 1 (XPS).
	xps=/sys/class/net/$RP_VETH_B/queues
	ip netns exec "$RP_NS_B" sh -c "echo 2 >$xps/tx-0/xps_cpus && echo 1 >$xps/tx-1/xps_cpus" ||
		rv_fail "host B: cannot set XPS on $RP_VETH_B"
	b_af_packet
	# On completion events: two programs polling beside two lcores
	# without inline passes took a scheduler slice a message (8-14 ms).
	pair 18714 -e
	r=$(counter rx_other_queues client)
	x=$(counter xdp_redirected client)
	d=$(counter xdp_dropped client)
	rv_log "host A: rx_other_queues ${r:-0}, xdp_redirected ${x:-0}, xdp_dropped ${d:-0}"
	grep -q "$RP_VETH_A has 2 receive queues: queue 0 through the PMD" "$rv_tmp/client.err" ||
		{ rv_show client; rv_fail "host A: the engine did not open receive queue 1"; }
	[ "${r:-0}" -ge 2000 ] ||
		rv_fail "host A: ${r:-0} frames through receive queue 1, not the pingpong's"
	[ "${d:-0}" -eq 0 ] || rv_fail "host A: the program dropped ${d} frames"
	no_invalid client
	! xdp_on "$RP_NS_A" "$RP_VETH_A" ||
		rv_fail "an XDP program is left on $RP_VETH_A after its engine ended"
	rv_log "RoCEv2 on receive queue 1 served by the engine's own AF_XDP socket"
	;;
adaptive)
	for c in "$CA" "$CB"; do
		sed -i -e "s/^idle = .*/idle = adaptive\nwake_us = 200000/" "$c"
	done
	woken 18715 "af_xdp"
	b_af_packet
	woken 18716 "af_xdp / af_packet"
	rv_log "engines blocked when idle, woken by af_xdp and af_packet receive sockets"
	;;
inline)
	# Each host on one CPU, its engine's passes run by the polling
	# thread (rocepmd-testpmd --inline-us): the mbufs move between two
	# caches and the pool is soon walked end to end, every mbuf a umem
	# chunk of af_xdp.  With the pool's objects a page apart (the default
	# layout on 4 KiB pages) a third lay beyond the umem and the kernel
	# dropped what was sent from them: RETRY_EXC_ERR after about 700
	# messages, every time.
	[ -x "$testpmd" ] || rv_fail "TESTPMD ($testpmd) is not executable"
	iters=20000
	for h in a:0 b:1; do
		sed -i -e "s/^args = \(.*\)$/args = \1 --lcores 0@${h#*:},1@${h#*:}/" \
			-e "s/^main_lcore = .*/main_lcore = 0/" \
			-e "s/^lcores = .*/lcores = 1/" "$rv_tmp/${h%:*}.ini"
	done
	ip netns exec "$RP_NS_B" timeout -k 10 "$RV_TIMEOUT" "$testpmd" -- \
		--config "$CB" --server --oob-port 18531 --inline-us 100 \
		>"$rv_tmp/server.out" 2>"$rv_tmp/server.err" &
	rv_pids+=("$!")
	srv=$!
	rv_wait_listen "$RP_NS_B" 18531 "$srv" server
	ip netns exec "$RP_NS_A" timeout -k 10 "$RV_TIMEOUT" "$testpmd" -- \
		--config "$CA" --client "$RV_IP_B" --oob-port 18531 \
		--mode send_lat --size 8 --iters "$iters" --wait poll \
		--inline-us 100 >"$rv_tmp/client.out" 2>"$rv_tmp/client.err"
	crc=$?
	[ "$crc" -eq 0 ] ||
		{ rv_show client; rv_show server; rv_fail "client: exit status $crc"; }
	grep "^RESULT" "$rv_tmp/client.out" | sed 's/^/  /'
	awk -v n="$iters" '$1 == "RESULT" && $2 == "send_lat" {
		if ($NF != "ok" || $8 != n) exit 1; found = 1 }
		END { exit !found }' "$rv_tmp/client.out" ||
		{ rv_show client; rv_fail "send_lat: not $iters messages ok"; }
	kill -TERM "$srv" 2>/dev/null
	wait "$srv"
	rv_forget "$srv"
	for p in client server; do
		r=$(counter xdp_redirected "$p")
		[ "${r:-0}" -ge $((2 * iters)) ] ||
			rv_fail "$p: xdp_redirected ${r:-0}, not the $((2 * iters)) frames of $iters round trips"
		i=$(sed -n 's/.*inline_passes \([0-9]*\)$/\1/p' "$rv_tmp/$p.err" | tail -n 1)
		[ "${i:-0}" -gt 0 ] || rv_fail "$p: no inline pass"
		no_invalid "$p"
	done
	rv_log "$iters round trips polling with inline passes over af_xdp, each host on one CPU"
	;;
lcores)
	rv_need_prog ucmatose rdmacm-utils
	# Three lcores floating over the two CPUs: main and the device's two.
	for h in a b; do
		sed -i -e "s/^args = \(.*\)$/args = \1 --lcores=(0-2)@(0-1)/" \
			-e "s/^main_lcore = .*/main_lcore = 0/" \
			-e "s/^lcores = .*/lcores = 1,2\nidle = yield/" \
			-e "/^idle = sleep$/d" "$rv_tmp/$h.ini"
		echo "lcore = 1,2" >>"$rv_tmp/$h.ini"
	done
	ucm_pair 18717
	for p in client server; do
		grep -q "lcore 2 serves receive queue 1$" "$rv_tmp/$p.err" ||
			{ rv_show "$p"; rv_fail "$p: the second lcore has no queue of its own"; }
		shards_carried "$p"
		q=$(counter rx_other_queues "$p")
		[ "${q:-0}" -ge 400 ] ||
			rv_fail "$p: ${q:-0} frames through receive queue 1"
	done
	# Host B on one lcore: it sends every frame from queue 0, so host
	# A's second lcore gets its connections' frames from the first.
	sed -i -e "s/^lcore = 1,2$/lcore = 1/" "$CB"
	ucm_pair 18718
	shards_carried client
	h=$(counter shard0_shard_handoffs client)
	[ "${h:-0}" -ge 400 ] ||
		rv_fail "client: lcore 1 handed ${h:-0} frames to lcore 2, whose connections got them all on queue 0"
	! xdp_on "$RP_NS_A" "$RP_VETH_A" && ! xdp_on "$RP_NS_B" "$RP_VETH_B" ||
		rv_fail "an XDP program is left after the engines ended"
	rv_log "8 connections over two lcores per device, each lcore on its own queue pair; frames of the other lcore's queue handed over"
	;;
*)
	rv_fail "unknown case $case"
	;;
esac
rv_log "PASS: $case"
