#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# interop.sh rxe-server|rxe-client [TESTPMD]: rocepmd against the Linux kernel's own
# soft RoCE, rdma_rxe, running in a QEMU guest (doc/guides/interop.rst).
#
#   [namespace ri-<dir>]
#     br-ri 192.0.2.254/24 (the namespace's kernel: the "go" signals)
#       +-- ri-tap  -- QEMU guest, eth0 192.0.2.1, rxe0 (Debian's kernel)
#       +-- ri-h0   == veth ==  [namespace ri-<dir>-h: rocepmd's host]
#                               ri-h1 192.0.2.10/24, 2001:db8::10/64
#
# rocepmd's host is bound to ri-h1 as the kernel's rxe is to its netdev
# (port xdp, the default): "netdev = ri-h1", addresses and MAC the
# kernel's, rocepmd's XDP program steering RoCEv2 to the engine and the
# rest (the programs' TCP, ARP, neighbour discovery) to the kernel, the
# guest's MAC from the kernel's neighbour table.  Port af_packet binds
# net_af_packet to ri-h1 instead, with the addresses in the configuration
# (the kernel of the host namespace then holds 192.0.2.11).
#
# rxe-server: the guest runs every server, rocepmd's programs the clients;
# rxe-client: the other way round.  One guest boot runs every phase of
# RI_PHASES in turn (default "default"), each a way of setting up
# rocepmd's side with the scenarios it runs (phase_set below):
#   default   the RI_* variables below, every scenario;
#   attached  rocepmd's programs attach (rocepmd-run --attach) to a host,
#             TESTPMD --host on the same port, instead of booting an
#             engine each;
#   inline    the engine's inline_us = 100: rocepmd's polling programs
#             run the engine's passes in their own thread, its programs
#             on events are served by the lcore;
#   lcores    rocepmd's device served by two engine lcores (lcore = 1,2),
#             a queue pair each: everything from the guest arrives on the
#             second lcore's queue (XPS), which hands the first lcore's
#             QPs their frames; ucmatose's eight connections, each with
#             its own CQ, spread over both; ecn = on;
#   zc        port af_packet with tx_zero_copy_min = 512, so that
#             rocepmd's SEND and WRITE packets go to rxe from registered
#             memory (zero copy, the default's requests).
# Each phase has its own host namespace, veth (the same MAC addresses:
# the guest's neighbour tables stay right), configuration and capture;
# the guest sees one bridge throughout.  A phase costs a second or two,
# a boot ten under TCG.
#
# The scenarios: ibv_rc_pingpong polling and with -e, ibv_uc_pingpong,
# ibv_ud_pingpong, ib_send_lat, ib_write_bw, ib_read_bw (4 KiB, and 1 MiB:
# far beyond the send window, READs in segments), ib_atomic_lat
# (CMP_AND_SWAP) and ib_atomic_bw (FETCH_AND_ADD), rping and udaddy
# over the RDMA CM, both over IPv4 and over IPv6 (rping6, udaddy6: the
# guest's eth0 also holds 2001:db8::1/64, rocepmd 2001:db8::10/64, the
# RDMA CM given their sockaddr_in6), ibv_rc_pingpong over the IPv6 GIDs
# (rc6), test/interop/inv_pingpong (SEND_WITH_IMM, RDMA_WRITE_WITH_IMM, a
# type 2 memory window bound with IBV_WR_BIND_MW over an MR with no
# remote right (LOCAL_WRITE | MW_BIND), WRITE and READ through it,
# SEND_WITH_INV of its rkey, the invalidated rkey refused; over IPv4,
# inv, and over IPv6, inv6: the host's binary, copied into the guest per
# run; badrecv: its -R, a SEND into a receive with a bad lkey, NAK
# "remote operational error"), ibv_srq_pingpong, ib_send_bw with four QPs, over UD and on events,
# ib_write_lat inline, ib_read_lat, ib_write_bw both ways at once,
# rdma_server/rdma_client and rstream, mckey (UD multicast through the
# RDMA CM: the server joins 239.1.2.3 and receives, the client joins and
# sends it 10 datagrams; IPv4 only: the kernel's CM refuses an IPv6 group
# on a RoCEv2 port), the guest's qperf against
# rocepmd's qperf server (rxe-client only), and a lossy ibv_rc_pingpong
# where nftables drops one request packet and one ACK of each side.  Each
# scenario of each phase has its own TCP port, so a late program never
# meets the wrong peer.  The two sides signal
# each other through the guest's serial console (marks the host reads) and
# a one-shot TCP "go" port on the host (the guest connects when the host's
# server listens).
#
# Passes when every program on both sides exits 0, the pingpongs print the
# byte and iteration counts asked for, the lossy case's nftables rules each
# dropped exactly one frame and rocepmd's counters show the recovery
# (a NAK received and one sent, an early resend or a retry timeout, a
# duplicate request), and, phase by phase,
# the capture on br-ri has a correct ICRC on every frame
# (test/verbs/icrc_check, the engine's own parser) and the engines'
# counters show what the phase is for (below).
#
# Skips (exit 77, with a banner) only where QEMU cannot run or the guest
# image is missing (scripts/rxe-image builds it).  Environment as for
# test/verbs/lib.sh, plus RP_RXE_IMAGE (default /var/tmp/rocepmd-rxe),
# RI_PHASES (above), RI_ONLY (names of the scenarios to run in each phase;
# default all of the phase's), RI_STEP_TIMEOUT
# (seconds a program may run, default 90), and for the phase "default":
# RI_INLINE_US (the engine's
# inline_us: polling programs run its passes; default 0, off), RI_PORT
# (xdp or af_packet, above) and RI_LCORES (1 or 2: engine lcores serving
# rocepmd's device, each with its own queue pair of a veth of as many
# queues; with 2 the run must show the second lcore receiving and sending
# RoCEv2, through its own AF_XDP socket on xdp).
# RI_ECN=on: rocepmd's port sends every packet ECN-capable (ecn = on), as
# on a congested network (guides/congestion): rxe must not mind, and the
# capture must show every RoCEv2 packet of rocepmd ECT(0), no CNP.
# RI_ZC_MIN: rocepmd's tx_zero_copy_min (default the engine's, 2048, which
# no IB MTU 1024 packet reaches): with 512 and RI_PORT=af_packet, whose
# PMD copies each frame as it sends it, rocepmd's SEND and WRITE packets
# go to rxe from registered memory (tx_zero_copy = requests, the default);
# the engines' counters must show such frames, and rxe must take them
# (every ICRC of the capture is checked, as always).
# RI_SR=on (the default, as the engine's; every phase): rocepmd's port has selective
# retransmission on (selective_retx = on): its SENDs and WRITEs carry the
# reserved BTH bit that says so, which rxe must ignore; rxe's never do,
# so rocepmd's responder must never send it a selective NAK, nor keep
# anything.  RI_SR=off: IBTA's go-back-N whatever the peer.
# RI_QEMU_TRACE: a file of QEMU trace event names (virtio_queue_notify,
# virtqueue_pop, ...): QEMU logs them to qemu.trace in the test's directory,
# kept with RV_KEEP=1, to tell a guest's stalled virtio queue from a peer.

. "$(dirname "$0")/../verbs/lib.sh"

dir=${1:-}
case $dir in
rxe-server | rxe-client) ;;
*) rv_fail "usage: interop.sh rxe-server|rxe-client [TESTPMD]" ;;
esac
# TESTPMD: the host of the phase "attached".
testpmd=${2:-}
ri_phases=${RI_PHASES:-default}

image=${RP_RXE_IMAGE:-/var/tmp/rocepmd-rxe}
here=$(cd "$(dirname "$0")" && pwd)
ns=ri-${dir#rxe-}
nsh=$ns-h	# rocepmd's host
guest_ip=192.0.2.1
host_kip=192.0.2.254	# the bridge namespace's kernel: the "go" signals
rp_ip=192.0.2.10	# rocepmd's device
guest_ip6=2001:db8::1
rp_ip6=2001:db8::10
# ri-h1's and ri-h0's MAC addresses, the same in every phase: the guest's
# neighbour entries for rocepmd's addresses outlive a phase's veth.
rp_mac=52:54:00:c0:02:0a
br_mac=52:54:00:c0:02:fe
step_t=${RI_STEP_TIMEOUT:-90}
qemu_pid=
tcpdump_pid=
host_pid=

# ---- phases --------------------------------------------------------------------
ri_attach_only="rc_poll rc_event ud write_bw read_bw atomic_bw rping udaddy rping6 inv srq send_bw_4qp rstream"
# phase_set NAME: the phase's settings: ph_port (xdp or af_packet),
# ph_lcores (1 or 2), ph_inline (inline_us), ph_ecn, ph_sr (selective_retx),
# ph_zc (tx_zero_copy_min, empty: the engine's), ph_attach (1: attached to
# the host TESTPMD), ph_only (its scenarios; empty: all), and ph_tcp_ip
# (the address of the host's kernel, for the programs' TCP).
phase_set() {
	ph_port=xdp ph_lcores=1 ph_inline=0 ph_ecn=off ph_sr=${RI_SR:-on}
	ph_zc='' ph_attach=0 ph_only=
	case $1 in
	default)
		ph_port=${RI_PORT:-xdp} ph_lcores=${RI_LCORES:-1}
		ph_inline=${RI_INLINE_US:-0} ph_ecn=${RI_ECN:-off}
		ph_zc=${RI_ZC_MIN:-} ;;
	attached)
		ph_attach=1 ph_only=$ri_attach_only ;;
	inline)
		ph_inline=100
		ph_only="rc_poll rc_event ud write_bw read_bw atomic_bw srq send_bw_4qp write_bw_bidir" ;;
	lcores)
		ph_lcores=2 ph_ecn=on
		ph_only="rc_poll rc_event ud write_bw read_bw_1m atomic_bw rping udaddy srq send_bw_4qp ucmatose rstream" ;;
	zc)
		ph_port=af_packet ph_zc=512
		ph_only="rc_poll write_bw read_bw send_bw_4qp write_bw_bidir rping" ;;
	*) rv_fail "RI_PHASES: no phase '$1' (default attached inline lcores zc)" ;;
	esac
	case $ph_port in
	xdp | af_packet) ;;
	*) rv_fail "RI_PORT must be xdp or af_packet, not '$ph_port'" ;;
	esac
	case $ph_lcores in
	1 | 2) ;;
	*) rv_fail "RI_LCORES must be 1 or 2, not '$ph_lcores'" ;;
	esac
	ph_tcp_ip=$rp_ip
	[ "$ph_port" = xdp ] || ph_tcp_ip=192.0.2.11
}
for p in $ri_phases; do
	phase_set "$p"
	[ "$ph_attach" = 0 ] || [ -n "$testpmd" ] ||
		rv_fail "phase $p: attached to a host, but no TESTPMD given"
done

skip_loudly() {
	{
		echo "************************************************************"
		echo "$rv_prog: SKIPPED: $*"
		echo "rocepmd was NOT tested against the kernel's rxe."
		echo "************************************************************"
	} >&2
	exit 77
}

rv_need_env
rv_need_root
command -v qemu-system-x86_64 >/dev/null ||
	skip_loudly "qemu-system-x86_64 not found (scripts/rxe-image installs it)"
[ -s "$image/vmlinuz" ] && [ -s "$image/rootfs.cpio" ] ||
	skip_loudly "no rxe guest image in $image (run scripts/rxe-image)"
rv_need_prog tcpdump tcpdump
rv_need_prog nft nftables
rv_need_prog python3 python3
[ -x "${RP_ICRC_CHECK:-}" ] || rv_fail "RP_ICRC_CHECK is not executable"
[ -x "${RP_INV_PINGPONG:-}" ] || rv_fail "RP_INV_PINGPONG is not executable"

ri_net_down() {
	ip netns del "$ns" 2>/dev/null
	ip netns del "$nsh" 2>/dev/null
	return 0
}

ri_cleanup() {
	local rc=$?

	trap - EXIT
	[ -n "$tcpdump_pid" ] && kill -INT "$tcpdump_pid" 2>/dev/null
	rv_stop_pids
	ri_net_down
	(exit "$rc")
	rv_cleanup
}
trap ri_cleanup EXIT

# ---- network -----------------------------------------------------------------
ri_net_down
ip netns add "$ns" || rv_fail "ip netns add $ns failed"
nsx=(ip netns exec "$ns")
nshx=(ip netns exec "$nsh")
# IPv6 off on the namespace's new interfaces (a quiet link: rocepmd does
# its own neighbour discovery), except on the bridge, whose address
# 2001:db8::fe lets getaddrinfo(3) with AI_ADDRCONFIG (rping's) resolve
# an IPv6 literal at all.
"${nsx[@]}" sysctl -qw net.ipv6.conf.default.disable_ipv6=1 \
	net.ipv6.conf.default.accept_ra=0 \
	net.ipv6.conf.default.router_solicitations=0 \
	net.ipv6.conf.default.accept_dad=0 >/dev/null
ip -n "$ns" link set lo up
ip -n "$ns" link add br-ri type bridge stp_state 0 forward_delay 0 \
	mcast_snooping 0 || rv_fail "cannot create a bridge"
ip -n "$ns" addr add "$host_kip/24" dev br-ri
"${nsx[@]}" sysctl -qw net.ipv6.conf.br-ri.disable_ipv6=0 >/dev/null
ip -n "$ns" -6 addr add 2001:db8::fe/64 dev br-ri nodad
ip -n "$ns" link set br-ri mtu 1500 up
ip -n "$ns" tuntap add dev ri-tap mode tap || rv_fail "cannot create a tap"
ip -n "$ns" link set ri-tap mtu 1500 master br-ri up

# phase_up P: rocepmd's side for phase P (phase_set P first): its host
# namespace and veth, its configuration (cfg), a capture of the bridge
# (P.pcap) and, attached, its host.
phase_up() {
	local p=$1 q=$ph_lcores port_cfg eal_lcores='' lcores=1 i

	ip netns add "$nsh" || rv_fail "ip netns add $nsh failed"
	ip -n "$ns" link add ri-h0 address "$br_mac" numtxqueues "$q" \
		numrxqueues "$q" type veth peer name ri-h1 address "$rp_mac" \
		netns "$nsh" numtxqueues "$q" numrxqueues "$q" ||
		rv_fail "phase $p: cannot create the veth"
	ip -n "$ns" link set ri-h0 mtu 1500 master br-ri up
	# Two queues: the bridge sends everything from the guest on ri-h0's
	# transmit queue 1 (XPS, every CPU), so that it arrives on ri-h1's
	# receive queue 1, the second lcore's, as a NIC's RSS may put every
	# flow of a peer on one queue: the first lcore's QPs get their frames
	# from the second.
	if [ "$q" = 2 ]; then
		"${nsx[@]}" sh -c 'echo 0 >/sys/class/net/ri-h0/queues/tx-0/xps_cpus &&
			echo 3 >/sys/class/net/ri-h0/queues/tx-1/xps_cpus' ||
			rv_fail "cannot set XPS on ri-h0"
	fi
	# rocepmd's host: a kernel of its own on ri-h1, which owns the
	# device's addresses when the port is bound to it (xdp), and carries
	# the programs' TCP either way.
	"${nshx[@]}" sysctl -qw net.ipv6.conf.default.accept_ra=0 \
		net.ipv6.conf.default.router_solicitations=0 \
		net.ipv6.conf.default.accept_dad=0 >/dev/null
	ip -n "$nsh" link set lo up
	ip -n "$nsh" link set ri-h1 mtu 1500
	if [ "$ph_port" = xdp ]; then
		ip -n "$nsh" addr add "$rp_ip/24" dev ri-h1
		ip -n "$nsh" -6 addr add "$rp_ip6/64" dev ri-h1 nodad
		port_cfg="netdev = ri-h1"
	else
		# the kernel holds addresses of its own for the programs' TCP
		# (and for getaddrinfo's AI_ADDRCONFIG), not the device's:
		# rocepmd's RoCEv2 is not for it, it drops that without a word
		ip -n "$nsh" addr add "$ph_tcp_ip/24" dev ri-h1
		ip -n "$nsh" -6 addr add 2001:db8::11/64 dev ri-h1 nodad
		port_cfg="device = net_af_packet0,iface=ri-h1,qpairs=$q
ipv4 = $rp_ip/24
ipv6 = $rp_ip6/64"
	fi
	ip -n "$nsh" link set ri-h1 up

	# Two lcores for the device: three threads floating over the CPUs.
	if [ "$q" = 2 ]; then
		eal_lcores=' --lcores=(0-2)@(0-1)'
		lcores=1,2
	fi
	cfg=$rv_tmp/$p.ini
	cat >"$cfg" <<EOC
; rocepmd at $rp_ip on the free end of a veth into the guest's bridge ($ph_port), phase $p
[eal]
args = --log-level=rocepmd:info$eal_lcores
[engine]
main_lcore = 0
lcores = $lcores
idle = sleep
idle_us = 50
inline_us = $ph_inline
[port0]
$port_cfg
lcore = $lcores
region_mb = 64
ecn = $ph_ecn
selective_retx = $ph_sr
tx_zero_copy_min = ${ph_zc:-2048}
EOC

	# --immediate-mode: each frame written as it comes; libpcap's
	# TPACKET_V3 otherwise hands frames over a block at a time, up to a
	# second late, and a capture stopped soon after its phase's last
	# frame lost them (100 received by the filter, none written).  A
	# buffer of 64 MiB for the bursts of the bandwidth scenarios.
	: >"$rv_tmp/$p-tcpdump.err"
	"${nsx[@]}" tcpdump -i br-ri -n -U --immediate-mode -B 65536 -s 0 \
		-c 50000 -w "$rv_tmp/$p.pcap" 'udp port 4791' \
		2>"$rv_tmp/$p-tcpdump.err" &
	tcpdump_pid=$!
	rv_pids+=("$tcpdump_pid")
	for ((i = 0; i < 100; i++)); do
		grep -q 'listening on' "$rv_tmp/$p-tcpdump.err" && break
		sleep 0.1
	done

	# The host of the attached mode, on the port of $cfg.
	ri_sock=$rv_tmp/$p.sock
	if [ "$ph_attach" = 1 ]; then
		"${nshx[@]}" timeout -k 10 "$RV_TIMEOUT" "$testpmd" -- \
			--config "$cfg" --host="$ri_sock" \
			>"$rv_tmp/$p-host.out" 2>"$rv_tmp/$p-host.err" &
		host_pid=$!
		rv_pids+=("$host_pid")
		rv_wait_output "$p-host" "device(s) on $ri_sock (telemetry" "$host_pid"
		rv_log "phase $p: rocepmd's programs attach to a host: $(head -n 1 "$rv_tmp/$p-host.out")"
	fi
}

# phase_down P: the host stopped (its counters print as it stops), the
# capture ended, the host namespace and the veth gone.
phase_down() {
	if [ -n "$host_pid" ]; then
		kill -TERM "$host_pid" 2>/dev/null
		wait "$host_pid"
		rv_forget "$host_pid"
		host_pid=
	fi
	sleep 0.3	# the last frames into the capture
	kill -INT "$tcpdump_pid" 2>/dev/null
	wait "$tcpdump_pid"
	rv_forget "$tcpdump_pid"
	tcpdump_pid=
	ip -n "$ns" link del ri-h0 2>/dev/null
	ip netns del "$nsh" || rv_fail "ip netns del $nsh failed"
}

# ri_bg NAME -- PROGRAM ARGS...: a program of rocepmd's side in the
# background (rv_last_pid), embedded or attached; ri_fg waits (rv_status).
ri_bg() {
	local name=$1

	shift 2
	if [ "$ph_attach" = 0 ]; then
		rv_bg "$name" "$nsh" "$cfg" -- "$@"
		return
	fi
	"${nshx[@]}" timeout -k 10 "$RV_TIMEOUT" \
		"$RP_RUN" --attach="$ri_sock" -- "$@" \
		>"$rv_tmp/$name.out" 2>"$rv_tmp/$name.err" &
	rv_last_pid=$!
	rv_pids+=("$rv_last_pid")
}

# ri_wait_engine PID: until the program under PID (timeout's child, which
# rocepmd-run became) has booted its engine, its EAL telemetry socket
# there (at most 10 s), then half a second for it to listen on the RDMA
# CM; an attached program boots none: a second.  A REQ that comes before
# the listener draws a REJ, and the guest's client tries again.
ri_wait_engine() {
	local c i rundir

	rundir=$(rv_eal_rundir)
	if [ "$ph_attach" = 1 ]; then
		sleep 1
		return
	fi
	for ((i = 0; i < 100; i++)); do
		c=$(pgrep -P "$1" | head -n 1)
		[ -n "$c" ] && [ -S "$rundir/rocepmd-$c/dpdk_telemetry.v2" ] &&
			break
		kill -0 "$1" 2>/dev/null || return 0
		sleep 0.1
	done
	sleep 0.5
}

ri_fg() {
	ri_bg "$@"
	wait "$rv_last_pid"
	rv_status=$?
	rv_forget "$rv_last_pid"
}

# ---- scenarios -----------------------------------------------------------------
# name kind server client [direction]; @DEV@ @GID@ (the IPv4 GID's index) @GID6@ (the IPv6
# address's: 2 on rocepmd, whatever the guest found on rxe) @INV@
# (inv_pingpong) @INVK@ (its -K) @PORT@ are filled per side.  kind: tcp (the
# programs meet over TCP @PORT@) or cm (the RDMA CM; rping listens on
# @PORT@, udaddy on its fixed port), cm6 (the same over IPv6), mc (a
# multicast group: the server joins it and is ready once its id exists).
# A client gets its server's address (the TCP address for tcp, the RDMA
# address for cm, the IPv6 one for cm6, none for mc) where it says @ADDR@,
# else appended.  @MCBIND@: "-b" and the client's own address on rxe (the
# kernel routes a group to pick a source, and the guest has no route to
# it), nothing on rocepmd (its RDMA CM takes the device's address).  A
# direction (rxe-server or rxe-client) runs the scenario in that one only.
scen_all=()
declare -A scen_kind scen_srv scen_cli scen_port
scen() {
	[ -z "${5:-}" ] || [ "$5" = "$dir" ] || return 0
	scen_all+=("$1")
	scen_kind[$1]=$2
	scen_srv[$1]=$3
	scen_cli[$1]=$4
}
pp='-d @DEV@ -g @GID@ -p @PORT@'
pt='-d @DEV@ -x @GID@ -p @PORT@ -F'
scen rc_poll tcp "ibv_rc_pingpong $pp -s 4096 -n 10" "ibv_rc_pingpong $pp -s 4096 -n 10"
scen rc_event tcp "ibv_rc_pingpong $pp -s 64 -n 10 -e" "ibv_rc_pingpong $pp -s 64 -n 10 -e"
scen uc tcp "ibv_uc_pingpong $pp -s 2048 -n 10" "ibv_uc_pingpong $pp -s 2048 -n 10"
scen ud tcp "ibv_ud_pingpong $pp -s 512 -n 10" "ibv_ud_pingpong $pp -s 512 -n 10"
scen send_lat tcp "ib_send_lat $pt -s 64 -n 20" "ib_send_lat $pt -s 64 -n 20"
scen write_bw tcp "ib_write_bw $pt -s 4096 -n 20" "ib_write_bw $pt -s 4096 -n 20"
scen read_bw tcp "ib_read_bw $pt -s 4096 -n 20" "ib_read_bw $pt -s 4096 -n 20"
# Messages far beyond the send window: rocepmd's READs go in segments of
# RP_READ_SEG packets, each its own READ request, which rxe must answer.
scen write_bw_1m tcp "ib_write_bw $pt -s 1048576 -n 10" "ib_write_bw $pt -s 1048576 -n 10"
scen read_bw_1m tcp "ib_read_bw $pt -s 1048576 -n 10" "ib_read_bw $pt -s 1048576 -n 10"
# Atomics (the client runs them on the server's memory, so the two
# directions test each side's requester and responder): CMP_AND_SWAP
# through ibv_post_send, FETCH_AND_ADD through ibv_wr_atomic_fetch_add.
scen atomic_lat tcp "ib_atomic_lat $pt -A CMP_AND_SWAP --use_old_post_send -n 200" "ib_atomic_lat $pt -A CMP_AND_SWAP --use_old_post_send -n 200"
scen atomic_bw tcp "ib_atomic_bw $pt -A FETCH_AND_ADD -n 2000" "ib_atomic_bw $pt -A FETCH_AND_ADD -n 2000"
scen rping cm "rping -s -a @SADDR@ -p @PORT@ -C 5 -S 64 -v -V" "rping -c -p @PORT@ -C 5 -S 64 -v -V -a"
scen udaddy cm "udaddy -b @SADDR@" "udaddy -s"
scen rping6 cm6 "rping -s -a @SADDR@ -p @PORT@ -C 5 -S 64 -v -V" "rping -c -p @PORT@ -C 5 -S 64 -v -V -a"
scen udaddy6 cm6 "udaddy -b @SADDR@" "udaddy -s"
# ibv_rc_pingpong over RoCEv2 on IPv6, the GID index of each side's
# 2001:db8:: address (the TCP side channel stays IPv4).
pp6='-d @DEV@ -g @GID6@ -p @PORT@'
scen rc6 tcp "ibv_rc_pingpong $pp6 -s 4096 -n 10" "ibv_rc_pingpong $pp6 -s 4096 -n 10"
# The opcodes no rdma-core program sends (inv_pingpong.c): rxe as the
# server binds the window and receives the SEND_WITH_INV, as the client
# WRITEs and READs through rocepmd's window and invalidates it.
# @INVK@: -K for rxe, whose completion of a SEND_WITH_INV carries the
# kernel's IB_WC_WITH_INVALIDATE bit (1 << 2) where libibverbs has
# IBV_WC_WITH_INV (1 << 3) (doc/guides/interop.rst); rocepmd gets no -K.
scen inv tcp "@INV@ $pp @INVK@" "@INV@ $pp @INVK@"
scen inv6 tcp "@INV@ $pp6 @INVK@" "@INV@ $pp6 @INVK@"
# inv_pingpong -R: a SEND into a receive whose lkey is a deregistered
# MR's: NAK "remote operational error" from the server's responder
# (IBV_WC_REM_OP_ERR at the client), its receive completing in error.
scen badrecv tcp "@INV@ $pp @INVK@ -R" "@INV@ $pp @INVK@ -R"
# Shapes the pingpongs above do not take: a shared receive queue, several
# QPs at once, UD streams, inline WRITEs, both directions at once,
# completions on events, librdmacm's synchronous verbs (rdma_server and
# rdma_client) and rsockets (rstream).
scen srq tcp "ibv_srq_pingpong $pp -s 1024 -n 20 -q 4" "ibv_srq_pingpong $pp -s 1024 -n 20 -q 4"
scen send_bw_4qp tcp "ib_send_bw $pt -s 65536 -n 50 -q 4" "ib_send_bw $pt -s 65536 -n 50 -q 4"
scen send_bw_ud tcp "ib_send_bw $pt -c UD -s 1024 -n 200" "ib_send_bw $pt -c UD -s 1024 -n 200"
scen write_lat_inline tcp "ib_write_lat $pt -s 64 -I 64 -n 200" "ib_write_lat $pt -s 64 -I 64 -n 200"
scen read_lat tcp "ib_read_lat $pt -s 256 -n 200" "ib_read_lat $pt -s 256 -n 200"
scen write_bw_bidir tcp "ib_write_bw $pt -s 16384 -n 100 -b" "ib_write_bw $pt -s 16384 -n 100 -b"
scen send_bw_event tcp "ib_send_bw $pt -s 4096 -n 200 -e" "ib_send_bw $pt -s 4096 -n 200 -e"
scen rdma_client cm "rdma_server -s @SADDR@ -p @PORT@" "rdma_client -p @PORT@ -s"
scen rstream cm "rstream -b @SADDR@ -p @PORT@ -S 16384 -C 200" "rstream -p @PORT@ -S 16384 -C 200 -s"
# eight RC connections, each with a CQ of its own: the QPs a device of two
# lcores spreads over both (RI_LCORES=2)
scen ucmatose cm "ucmatose -b @SADDR@ -p @PORT@ -c 8 -C 50 -S 1024" "ucmatose -p @PORT@ -c 8 -C 50 -S 1024 -s"
# UD multicast: the receiver joins 239.1.2.3 (the kernel's IGMP join, rxe's
# attach; rocepmd's steering of the group), the sender joins and sends
# 10 datagrams to QPN 0xFFFFFF after mckey's 3 s pause.  The bridge has
# mcast_snooping off: it floods the group to every port.
scen mckey mc "mckey -m 239.1.2.3 -b @SADDR@" "mckey -m 239.1.2.3 -s @MCBIND@"
# qperf (its own TCP exchange, then the RDMA CM: -cm1), one second a test;
# "quit" ends the server.  Why only this direction, why not its UC tests
# and not ib_send_bw -R: doc/guides/interop.rst.
scen qperf tcp "qperf -lp @PORT@" "qperf @ADDR@ -lp @PORT@ -cm1 -t 1 -vvu rc_lat rc_bw rc_rdma_write_lat rc_rdma_read_bw quit" rxe-client
scen lossy tcp "ibv_rc_pingpong $pp -s 4096 -n 10" "ibv_rc_pingpong $pp -s 4096 -n 10"

# cli_line SIDE NAME PORT ADDRESS: the client's command, filled, with its
# server's address where it says @ADDR@ (qperf takes it first), else last.
cli_line() {
	local c=${scen_cli[$2]}

	if [[ $c == *@ADDR@* ]]; then
		c=${c//@ADDR@/$4}
	elif [ "${scen_kind[$2]}" != mc ]; then
		c="$c $4"
	fi
	fill "$1" "$c" "$3" ""
}

# fill SIDE ARGS PORT SERVER-RDMA-ADDRESS
fill() {
	local a=$2

	if [ "$1" = rxe ]; then
		a=${a//@DEV@/rxe0}
		a=${a//@GID@/\$RXE_GID}
		a=${a//@GID6@/\$RXE_GID6}
		a=${a//@INV@//job/inv_pingpong}
		a=${a//@INVK@/-K}
		a=${a//@MCBIND@/-b $guest_ip}
	else
		a=${a//@DEV@/rocepmd0}
		a=${a//@GID@/0}
		a=${a//@GID6@/2}
		a=${a//@INV@/$RP_INV_PINGPONG}
		a=${a//@INVK@/}
		a=${a//@MCBIND@/}
	fi
	a=${a//@PORT@/$3}
	a=${a//@SADDR@/$4}
	echo "$a"
}

# ph_scens: the scenarios of the phase set last, in the table's order;
# RI_ONLY="rc_poll lossy" narrows every phase (for a developer).
ph_scens() {
	local n

	for n in "${scen_all[@]}"; do
		[ -z "$ph_only" ] || [[ " $ph_only " == *" $n "* ]] || continue
		[ -z "${RI_ONLY:-}" ] || [[ " $RI_ONLY " == *" $n "* ]] || continue
		echo "$n"
	done
}

if [ "$dir" = rxe-server ]; then
	srv_side=rxe cli_side=rocepmd srv_rdma=$guest_ip srv_rdma6=$guest_ip6
else
	srv_side=rocepmd cli_side=rxe srv_rdma=$rp_ip srv_rdma6=$rp_ip6
fi

# The nftables rules of the lossy case: in the bridge, before forwarding,
# drop the first SEND_MIDDLE (BTH opcode 0x01 after 20 bytes of IPv4 and 8
# of UDP) and the first ACK (opcode 0x11 with an AETH syndrome of ACK,
# 0b000xxxxx; a NAK passes) that each side sends.  The first ones, because
# rxe sometimes retransmits with no loss: a later drop may hit a duplicate
# and test nothing.
loss_rules() {
	local who ip

	echo "table bridge riloss {"
	echo "  chain pre {"
	echo "    type filter hook prerouting priority 0; policy accept;"
	for who in rocepmd:$rp_ip rxe:$guest_ip; do
		ip=${who#*:}
		echo "    ip saddr $ip udp dport 4791 @nh,224,8 0x01 numgen inc mod 1000000 == 0 counter drop comment \"${who%%:*} request\""
		echo "    ip saddr $ip udp dport 4791 @nh,224,8 0x11 @nh,320,8 & 0xe0 == 0 numgen inc mod 1000000 == 0 counter drop comment \"${who%%:*} ack\""
	done
	echo "  }"
	echo "}"
}

# ---- the guest's job ----------------------------------------------------------
job=$rv_tmp/guest/job
mkdir -p "$job"
install -m 0755 "$here/guest-init.sh" "$rv_tmp/guest/init"
# inv_pingpong as built here (Debian 12's libibverbs.so.1, as the guest's):
# the guest gets it with this run's job, the cached image stays as it is.
install -m 0755 "$RP_INV_PINGPONG" "$job/inv_pingpong"
{
	cat <<EOF
step_t=$step_t
EOF
	cat <<'EOF'
# serve NAME KIND PORT CMD...: start a server, say "ready NAME" once it
# listens, then "step NAME rc=N" when it ends.
serve() {
	local name=$1 kind=$2 port=$3 pid rc i
	shift 3
	mark "start $name: $*"
	timeout -k 5 "$step_t" "$@" >"/tmp/$name.out" 2>&1 &
	pid=$!
	for ((i = 0; i < 300; i++)); do
		kill -0 $pid 2>/dev/null || break
		if [[ $kind == tcp ]]; then
			[[ -n "$(ss -Hltn "sport = :$port" 2>/dev/null)" ]] && break
		elif [[ $kind == mc ]]; then
			# its id on rxe0: joined a moment later
			rdma resource show cm_id 2>/dev/null |
				grep -qE 'comm mckey|ps UDP' && { sleep 1; break; }
		else
			rdma resource show cm_id 2>/dev/null | grep -q LISTEN && break
		fi
		sleep 0.2
	done
	mark "ready $name"
	wait $pid
	rc=$?
	sed "s/^/  [$name] /" "/tmp/$name.out"
	mark "step $name rc=$rc"
}
# client NAME KIND GOPORT CMD...: wait until the host's server is up (it
# opens GOPORT on the bridge address and writes "go NAME" to whoever
# connects), then run the client; a client of the RDMA CM is tried up to
# three times (the listener may lag the port).  A connection that brings
# anything else is not the go: once, one came 0.01 s after the wait
# began, before the host listened, and the client ran early while the
# host's go waited out its 90 s for it (guides/interop).
client() {
	local name=$1 kind=$2 go=$3 rc i tries=1 line stray=0
	shift 3
	[[ $kind == cm* ]] && tries=3
	mark "wait $name"
	for ((i = 0; i < 600; i++)); do
		# connected: the status of printf, whatever read found
		if line=$({ read -r -t 5 l <&3; printf '%s' "$l"; } \
			3<>"/dev/tcp/192.0.2.254/$go" 2>/dev/null); then
			[[ $line == "go $name" ]] && break
			((stray++ < 3)) && mark "not the go of $name: '$line'"
		fi
		sleep 0.2
	done
	mark "start $name: $*"
	for ((i = 1; i <= tries; i++)); do
		timeout -k 5 "$step_t" "$@" >"/tmp/$name.out" 2>&1
		rc=$?
		[[ $rc -eq 0 ]] && break
		sleep 1
	done
	sed "s/^/  [$name] /" "/tmp/$name.out"
	mark "step $name rc=$rc"
}
EOF
	port=18600
	port=18600
	for p in $ri_phases; do
		phase_set "$p"
		srv_tcp=$guest_ip
		[ "$dir" = rxe-server ] || srv_tcp=$ph_tcp_ip
		for n in $(ph_scens); do
			port=$((port + 1))
			key=$p.$n
			scen_port[$key]=$port
			if [ "$dir" = rxe-server ]; then
				a=$guest_ip
				[ "${scen_kind[$n]}" = cm6 ] && a=$guest_ip6
				echo "serve $key ${scen_kind[$n]} $port $(fill rxe "${scen_srv[$n]}" $port "$a")"
			else
				case ${scen_kind[$n]} in
				cm) a=$srv_rdma ;;
				cm6) a=$srv_rdma6 ;;
				*) a=$srv_tcp ;;
				esac
				echo "client $key ${scen_kind[$n]} $((port + 1000)) $(cli_line rxe "$n" $port "$a")"
			fi
		done
	done
} >"$job/cmd.sh"
nscen=${#scen_port[@]}
[ "$nscen" -gt 0 ] || rv_fail "no scenario to run (RI_PHASES '$ri_phases', RI_ONLY '${RI_ONLY:-}')"

(cd "$rv_tmp/guest" && find init job | cpio -o -H newc --quiet) >"$rv_tmp/job.cpio"
cat "$image/rootfs.cpio" "$rv_tmp/job.cpio" >"$rv_tmp/initrd"
# KVM when it works: under nested virtualisation KVM may refuse an MSR
# that "-cpu max" sets (QEMU aborts at start: "failed to set MSR 0x10a"),
# or take a guest that then never runs.  A probe boots the guest's kernel
# with each CPU model for up to 10 s and keeps the first one whose kernel
# writes to the serial console; else TCG, which is slower but works.
# Under TCG, "-smp 1,maxcpus=2": QEMU 7.2 translates the guest's memory
# barriers (mfence, lock-prefixed instructions) into host barriers only
# when the machine may have several vCPUs (CF_PARALLEL), yet its device
# emulation runs in its own thread beside the vCPU's; without them the
# virtio handshake (the guest publishes its avail index then reads the
# avail_event QEMU publishes, QEMU the reverse) can lose a kick to the
# host CPU's store buffer: the guest's transmit queue then stops for good
# ("NETDEV WATCHDOG ... transmit queue 0 timed out"; qmp_virtio.py showed
# the guest's avail index 238 ahead of QEMU, idle at the avail_event it
# had asked for), about one run in twenty of the lcores variant.  Later
# QEMUs emit the fences in every system-mode machine ("tcg: Do not elide
# memory barriers for !CF_PARALLEL in system mode").  One vCPU still runs.
# It struck once more with maxcpus=2, on the receive queue: QEMU idle at
# an avail_event the guest had long passed.  So the NIC goes without
# event indexes (event_idx=off): QEMU asks for kicks by a flag, which stays
# asked, so a guest that misses it once kicks at its next buffer instead
# of never (guides/interop).
accel=tcg cpu=max smp=1,maxcpus=2
if [ -w /dev/kvm ]; then
	for c in max max,-arch-capabilities host; do
		: >"$rv_tmp/probe.log"
		timeout 10 qemu-system-x86_64 -machine pc,accel=kvm -cpu "$c" \
			-m 128 -nodefaults -no-user-config -display none \
			-monitor none -no-reboot -serial "file:$rv_tmp/probe.log" \
			-kernel "$image/vmlinuz" -append "console=ttyS0 panic=-1" \
			>/dev/null 2>&1 &
		probe=$!
		for ((i = 0; i < 50; i++)); do
			[ -s "$rv_tmp/probe.log" ] && break
			kill -0 "$probe" 2>/dev/null || break
			sleep 0.2
		done
		kill "$probe" 2>/dev/null
		wait "$probe" 2>/dev/null
		if [ -s "$rv_tmp/probe.log" ]; then
			accel=kvm cpu=$c smp=1
			break
		fi
	done
fi
# The guest's job may take 20 s a scenario (3 s is usual under TCG), QEMU a
# minute more; each program has its own timeout (RI_STEP_TIMEOUT).
rxe_t=$((240 + 20 * nscen))
: >"$rv_tmp/guest.log"
"${nsx[@]}" timeout -k 10 $((rxe_t + 60)) qemu-system-x86_64 -name rocepmd-rxe \
	-machine "pc,accel=$accel" -cpu "$cpu" -smp "$smp" -m 768 \
	-nodefaults -no-user-config -display none -monitor none -no-reboot \
	-serial "file:$rv_tmp/guest.log" \
	-qmp "unix:$rv_tmp/qmp.sock,server=on,wait=off" \
	-kernel "$image/vmlinuz" -initrd "$rv_tmp/initrd" \
	-append "console=ttyS0 quiet panic=-1 mitigations=off tsc=unstable no_timer_check rdinit=/init rxe.ip=$guest_ip/24 rxe.ip6=$guest_ip6/64 rxe.mtu=1500 rxe.timeout=$rxe_t" \
	-netdev tap,id=n0,ifname=ri-tap,script=no,downscript=no \
	-device virtio-net-pci,netdev=n0,mac=52:54:00:c0:02:01,event_idx=off \
	${RI_QEMU_TRACE:+-trace "events=$RI_QEMU_TRACE,file=$rv_tmp/qemu.trace"} \
	>"$rv_tmp/qemu.err" 2>&1 &
qemu_pid=$!
rv_pids+=("$qemu_pid")
rv_log "guest booting ($accel, -cpu $cpu, $(cat "$image/kver" 2>/dev/null)), $dir, phases: $ri_phases ($nscen scenarios)"

# mark_line TEXT: the first line "RXE-MARK t=... TEXT" (TEXT a regex)
mark_line() {
	tr -d '\r' <"$rv_tmp/guest.log" | grep -a -m 1 "^RXE-MARK t=[0-9.]* $1"
}

# wait_mark TEXT SECONDS: until the guest printed the mark; 1 on timeout or
# if the guest is gone.
wait_mark() {
	local i

	for ((i = 0; i < $2 * 5; i++)); do
		mark_line "$1" >/dev/null && return 0
		kill -0 "$qemu_pid" 2>/dev/null || { mark_line "$1" >/dev/null; return; }
		sleep 0.2
	done
	return 1
}

wait_mark "rxe ready" 180 || {
	tail -n 30 "$rv_tmp/guest.log" >&2
	rv_fail "the guest did not bring up rxe0 in 180 s"
}
rv_log "guest: $(mark_line 'rxe ready')"

# No mtu line above: mtu = auto takes the IB MTU rxe took on the same link
# (1500: 1024), which the guest printed (ibv_devinfo, guest-init.sh).
rxe_mtu=$(tr -d '\r' <"$rv_tmp/guest.log" |
	sed -n 's/^[[:space:]]*active_mtu:[[:space:]]*\([0-9]*\) .*/\1/p' | head -n 1)
[ -n "$rxe_mtu" ] || rv_fail "the guest printed no active_mtu of rxe0"

# go PORT KEY: the one-shot "go" signal: accept one connection on the
# bridge address, at most RI_STEP_TIMEOUT seconds, and write "go KEY" to
# it (the guest's client() waits for exactly that).
go() {
	"${nsx[@]}" timeout "$step_t" python3 -c '
import socket, sys
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("192.0.2.254", int(sys.argv[1])))
s.listen(1)
c = s.accept()[0]
c.sendall(("go " + sys.argv[2] + "\n").encode())
c.close()' "$1" "$2"
}

# Whether a rocepmd program's output shows the result asked for.
check_output() {
	local n=$1 name=$2

	case $n in
	rc_poll | lossy) rv_check_pingpong "$name" 4096 10 ;;
	rc6)	rv_check_pingpong "$name" 4096 10
		# "remote address: LID ..., GID 2001:db8::1": both IPv6
		grep -q "local address: .* GID $rp_ip6\$" "$rv_tmp/$name.out" &&
		grep -q "remote address: .* GID $guest_ip6\$" "$rv_tmp/$name.out" ||
			rv_fail "$name did not run over $rp_ip6 <-> $guest_ip6" ;;
	inv | inv6 | badrecv)
		grep -q '^inv_pingpong: PASS' "$rv_tmp/$name.out" ||
			rv_fail "$name printed no PASS line"
		local g=::ffff:$guest_ip
		[ "$n" != inv6 ] || g=$guest_ip6
		grep -q "^remote QPN .* GID $g\$" "$rv_tmp/$name.out" ||
			rv_fail "$name's peer was not GID $g" ;;
	rc_event) rv_check_pingpong "$name" 64 10 ;;
	uc) rv_check_pingpong "$name" 2048 10 ;;
	ud) rv_check_pingpong "$name" 512 10 ;;
	udaddy | udaddy6) grep -qx 'return status 0' "$rv_tmp/$name.out" ||
		rv_fail "$name did not print 'return status 0'" ;;
	mckey)	grep -qx 'data transfers complete' "$rv_tmp/$name.out" ||
			rv_fail "$name did not print 'data transfers complete'"
		grep -q '^mckey: joined dgid: ::ffff:239.1.2.3 mlid 0x0 sl 0$' \
			"$rv_tmp/$name.out" ||
			rv_fail "$name's join did not give ::ffff:239.1.2.3, LID 0" ;;
	atomic_lat | atomic_bw)
		# rocepmd the client: its result line, 8 bytes, the iterations
		local it=2000
		[ "$n" = atomic_lat ] && it=200
		[ "$dir" = rxe-client ] ||
			grep -qE "^ *8 +$it +[0-9.]+" "$rv_tmp/$name.out" ||
			rv_fail "$name printed no result line for 8 B x $it" ;;
	esac
}

# counter NAME PROGRAM: a device counter from the program's exit log.
counter() {
	sed -n "s/.*rocepmd0: $1 \([0-9]*\)$/\1/p" "$rv_tmp/$2.err" | tail -n 1
}


# counter_sum P NAME: a counter summed over every engine's stop log of
# phase P (its programs' and its host's).
counter_sum() {
	cat "$rv_tmp/$1-"*.err 2>/dev/null |
		sed -n "s/.* $2 \([0-9]*\)$/\1/p" |
		awk '{ s += $1 } END { print s + 0 }'
}

results=()
failed=0
# ph_fail P TEXT: phase P failed a check (the run goes on to the next)
ph_fail() {
	results+=("FAIL $1: $2")
	rv_log "${results[-1]}"
	failed=1
}

# ph_need P WHAT COUNTER...: each counter summed over phase P's engines
# is above 0, or the phase proved nothing of WHAT.
ph_need() {
	local p=$1 what=$2 c v

	shift 2
	for c in "$@"; do
		v=$(counter_sum "$p" "$c")
		rv_log "phase $p: $what: $c $v (all programs)"
		[ "$v" -gt 0 ] ||
			ph_fail "$p" "$what: no $c in the engines' counters"
	done
}

# phase_run P: phase P's scenarios, rocepmd's side set up for it (phase_set P).
phase_run() {
	local p=$1 n key port prog a args hrc grc res ok srv drops c v t i

	ri_bg "$p-devinfo" -- ibv_devinfo -d rocepmd0
	wait "$rv_last_pid"
	rv_forget "$rv_last_pid"
	rp_mtu=$(sed -n 's/^[[:space:]]*active_mtu:[[:space:]]*\([0-9]*\) .*/\1/p' \
		"$rv_tmp/$p-devinfo.out" | head -n 1)
	if [ "$rp_mtu" = "$rxe_mtu" ]; then
		rv_log "phase $p: active_mtu $rp_mtu on both ends (rocepmd's mtu = auto, rxe's from its netdev)"
	else
		rv_show "$p-devinfo"
		ph_fail "$p" "mtu = auto: rocepmd0's active_mtu ${rp_mtu:-none}, rxe0's $rxe_mtu on the same link"
	fi

	for n in $(ph_scens); do
		key=$p.$n
		port=${scen_port[$key]}
		prog=$p-$n
		if [ "$n" = lossy ]; then
			loss_rules >"$rv_tmp/loss.nft"
			"${nsx[@]}" nft -f "$rv_tmp/loss.nft" || rv_fail "nft -f loss.nft failed"
		fi
		if [ "$dir" = rxe-server ]; then
			if ! wait_mark "ready $key\$" 180; then
				results+=("FAIL $key: the guest's server never got ready")
				failed=1
				continue
			fi
			a=$guest_ip
			[ "${scen_kind[$n]}" = cm6 ] && a=$guest_ip6
			read -r -a args <<<"$(cli_line rocepmd "$n" "$port" "$a")"
			rv_log "$key: rocepmd client: ${args[*]}"
			ri_fg "$prog" -- "${args[@]}"
			hrc=$rv_status
		else
			a=$rp_ip
			[ "${scen_kind[$n]}" = cm6 ] && a=$rp_ip6
			read -r -a args <<<"$(fill rocepmd "${scen_srv[$n]}" "$port" "$a")"
			rv_log "$key: rocepmd server: ${args[*]}"
			ri_bg "$prog" -- "${args[@]}"
			srv=$rv_last_pid
			if [ "${scen_kind[$n]}" = tcp ]; then
				for ((i = 0; i < 300; i++)); do
					"${nshx[@]}" ss -Hltn "sport = :$port" | grep -q . && break
					kill -0 "$srv" 2>/dev/null || break
					sleep 0.1
				done
			elif [ "${scen_kind[$n]}" = mc ]; then
				sleep 3	# the engine boots, then the group is joined
			else
				ri_wait_engine "$srv"
			fi
			go $((port + 1000)) "$key" || rv_log "$key: the guest never came for its go"
			# the server ends with its client; a client that failed
			# early leaves it waiting, so stop it once the guest says so
			while kill -0 "$srv" 2>/dev/null; do
				if mark_line "step $key rc=" >/dev/null &&
				   ! mark_line "step $key rc=0" >/dev/null; then
					sleep 3
					kill -TERM "$srv" 2>/dev/null
					break
				fi
				sleep 0.2
			done
			wait "$srv"
			hrc=$?
			rv_forget "$srv"
		fi
		wait_mark "step $key rc=" $((step_t + 30))
		grc=$(mark_line "step $key rc=" | sed 's/.* rc=\([0-9]*\).*/\1/')
		rv_show "$prog" | grep -v ' EAL: \|^  [^ ]* stderr: *$' | tail -n 25
		res="rocepmd rc=$hrc, rxe rc=${grc:-none}"
		ok=1
		[ "$hrc" = 0 ] && [ "${grc:-x}" = 0 ] || ok=0
		if [ $ok = 1 ] && ! (check_output "$n" "$prog") 2>"$rv_tmp/check.err"; then
			ok=0
			res+=", $(tail -n 1 "$rv_tmp/check.err")"
		fi
		if [ "$n" = lossy ]; then
			"${nsx[@]}" nft list table bridge riloss >"$rv_tmp/loss.out" 2>&1
			"${nsx[@]}" nft delete table bridge riloss
			drops=$(grep -c 'counter packets 1 ' "$rv_tmp/loss.out")
			res+=", nft dropped $drops of 4 chosen frames"
			[ "$drops" = 4 ] || { ok=0; cat "$rv_tmp/loss.out"; }
			for c in rcvd_nak send_nak_seq duplicate_request retransmits; do
				v=$(counter "$c" "$prog")
				res+=", $c ${v:-0}"
				[ "${v:-0}" -ge 1 ] || ok=0
			done
			# The lost ACK: an early resend (a probe after a few
			# round trips of silence) or, failing that, the
			# retransmit timer.
			v=$(counter retransmit_probes "$prog")
			t=$(counter retry_timeouts "$prog")
			res+=", retransmit_probes ${v:-0}, retry_timeouts ${t:-0}"
			[ $((${v:-0} + ${t:-0})) -ge 1 ] || ok=0
		fi
		if [ $ok = 1 ]; then
			results+=("PASS $key ($res)")
		else
			results+=("FAIL $key ($res)")
			# the guest's network device as QEMU sees it, and the
			# bridge's ports: who stopped moving frames
			if [ $failed = 0 ]; then
				python3 "$here/qmp_virtio.py" "$rv_tmp/qmp.sock" |
					sed 's/^/  /'
				"${nsx[@]}" ip -s link show ri-tap | sed 's/^/  /'
				"${nsx[@]}" ip -s link show ri-h0 | sed 's/^/  /'
			fi
			failed=1
		fi
		rv_log "${results[-1]}"
	done
}

# phase_check P: after phase_down P, its capture and its engines' counters.
phase_check() {
	local p=$1 n minf=0 names ect notect cnp v c=()
	local sr_req=0 sr_set=0 sr_ack=0 sr_peer=0 rd_req=0 rd_ro=0 src pay op b8

	names=" $(ph_scens | tr '\n' ' ')"
	# at least 20 frames a scenario, but inv_pingpong's 12 (six requests
	# and their replies: the capture of an RI_ONLY="inv inv6" run)
	for n in $names; do
		case $n in
		inv | inv6) minf=$((minf + 10)) ;;
		badrecv) minf=$((minf + 2)) ;;	# a SEND and its NAK
		mckey) minf=$((minf + 10)) ;;	# 10 datagrams, unanswered
		*) minf=$((minf + 20)) ;;
		esac
	done
	# What the capture holds: under TCG's bursts the kernel may drop
	# some of what the filter took before tcpdump reads it, so the ICRC
	# check below covers what was written, at least minf frames.
	rv_log "phase $p: the capture: $(sed -n 's/^\([0-9]*\) packets \(captured\|received by filter\|dropped by kernel\)$/\1 \2/p' \
		"$rv_tmp/$p-tcpdump.err" | paste -sd, -)"
	rv_log "phase $p: the capture's ICRCs"
	"$RP_ICRC_CHECK" --min "$minf" "$rv_tmp/$p.pcap" ||
		ph_fail "$p" "the capture has bad RoCEv2 frames (see above)"
	# ECN on: rocepmd's packets all ECT(0) (ECN field 2), rxe's not ECT,
	# and nobody marked anything, so no CNP (opcode 0x81) either way.
	if [ "$ph_ecn" = on ]; then
		ect=$(ecn_count "$p" "ip.src == $rp_ip && udp.dstport == 4791 && ip.dsfield.ecn == 2")
		notect=$(ecn_count "$p" "ip.src == $rp_ip && udp.dstport == 4791 && ip.dsfield.ecn != 2")
		cnp=$(ecn_count "$p" "udp.dstport == 4791 && udp.payload[0] == 0x81")
		rv_log "phase $p: ecn = on: rocepmd sent $ect RoCEv2 packets ECT(0), $notect not; CNPs $cnp"
		[ "$ect" -gt 0 ] && [ "$notect" = 0 ] && [ "$cnp" = 0 ] ||
			ph_fail "$p" "ecn = on: $ect ECT(0), $notect not ECT(0), $cnp CNPs"
	fi
	# Selective retransmission on (pmd/transport/rp_sr.c): every SEND
	# and WRITE packet of rocepmd (opcodes 0x00-0x0b) has BTH byte 8's
	# 0x40; no packet of rxe has 0x40 or 0x20 there, and so no ACK or
	# NAK of rocepmd (0x11) has them either: rxe gets IBTA's go-back-N.
	# rocepmd's READ requests (0x0c) after READs only say so in byte 4
	# (RP_BTH_RO, 0x20), which rxe must ignore: counted, and needed
	# where rocepmd sent READ requests.
	if [ "$ph_sr" = on ]; then
		while read -r src pay; do
			[ ${#pay} -ge 24 ] || continue
			op=$((16#${pay:0:2})) b8=$((16#${pay:16:2}))
			if [ "$src" = "$rp_ip" ]; then
				if [ "$op" = 12 ]; then
					rd_req=$((rd_req + 1))
					[ $((16#${pay:8:2} & 0x20)) = 0 ] ||
						rd_ro=$((rd_ro + 1))
				fi
				if [ "$op" -le 11 ]; then
					sr_req=$((sr_req + 1))
					[ $((b8 & 0x40)) = 0 ] || sr_set=$((sr_set + 1))
				fi
				[ "$op" != 17 ] || [ $((b8 & 0x60)) = 0 ] ||
					sr_ack=$((sr_ack + 1))
			elif [ $((b8 & 0x60)) != 0 ]; then
				sr_peer=$((sr_peer + 1))
			fi
		done < <(tshark -r "$rv_tmp/$p.pcap" -Y 'udp.dstport == 4791' \
			-T fields -e ip.src -e udp.payload 2>/dev/null |
			cut -c1-48)
		rv_log "phase $p: selective_retx = on: rocepmd sent $sr_req SEND/WRITE packets, $sr_set with the bit; its ACKs/NAKs with it: $sr_ack; rxe's packets with it: $sr_peer; rocepmd's READ requests $rd_req, $rd_ro marked READs-only"
		[ "$sr_req" -gt 0 ] && [ "$sr_set" = "$sr_req" ] && [ "$sr_ack" = 0 ] &&
			[ "$sr_peer" = 0 ] && { [ "$rd_req" = 0 ] || [ "$rd_ro" -gt 0 ]; } ||
			ph_fail "$p" "selective_retx = on: $sr_set of $sr_req requests with the bit, $sr_ack ACKs/NAKs and $sr_peer of rxe's packets with it, $rd_ro of $rd_req READ requests marked READs-only"
	fi
	# Inline passes: the engines' stop logs (lcore counters) must show
	# passes run by the programs' own threads, or this phase proved
	# nothing of them.
	if [ "$ph_inline" != 0 ]; then
		v=$(counter_sum "$p" inline_passes)
		rv_log "phase $p: inline passes run by the programs' threads: $v"
		[ "$v" -gt 0 ] ||
			ph_fail "$p" "inline_us $ph_inline: no pass run by a program's thread"
	fi
	# Zero copy toward rxe: frames sent from registered memory, or this
	# phase proved nothing of them.
	if [ -n "$ph_zc" ]; then
		v=$(counter_sum "$p" tx_zero_copy)
		rv_log "phase $p: zero copy: $v frames sent from registered memory (all programs)"
		[ "$v" -gt 0 ] ||
			ph_fail "$p" "tx_zero_copy_min $ph_zc: no frame sent from registered memory"
	fi
	# Bound to ri-h1 (xdp): the programs' counters must show RoCEv2
	# handed to the engine, and the kernel's neighbour table must have
	# given the guest.  Not for mckey alone (RI_ONLY): a group's MAC
	# comes from its address, and rocepmd's sender (rxe-server) receives
	# nothing.
	if [ "$ph_port" = xdp ]; then
		c=(xdp_redirected neigh_from_kernel)
		[ "$names" = " mckey " ] && c=(xdp_redirected)
		[ "$names" = " mckey " ] && [ "$dir" = rxe-server ] && c=()
		ph_need "$p" "netdev = ri-h1" "${c[@]}"
	fi
	# Two lcores: the second must have carried RoCEv2 both ways, and on
	# xdp read its own receive queue.
	if [ "$ph_lcores" = 2 ]; then
		c=(shard1_rx_packets shard1_tx_packets shard0_rx_packets
		   shard0_tx_packets shard1_shard_handoffs)
		[ "$ph_port" = xdp ] && c+=(rx_other_queues)
		ph_need "$p" "lcores 1,2" "${c[@]}"
	fi
}

# ecn_count P FILTER: the frames of phase P's capture that FILTER takes
ecn_count() {
	tshark -r "$rv_tmp/$1.pcap" -Y "$2" -T fields -e frame.number \
		2>/dev/null | wc -l
}

for p in $ri_phases; do
	phase_set "$p"
	rv_log "---- phase $p: port $ph_port, lcores $ph_lcores, inline_us $ph_inline, ecn $ph_ecn, selective_retx $ph_sr, tx_zero_copy_min ${ph_zc:-2048}, $([ "$ph_attach" = 1 ] && echo attached || echo embedded)"
	phase_up "$p"
	phase_run "$p"
	phase_down "$p"
	phase_check "$p"
done

wait_mark "job end" 60 || rv_log "the guest did not end its job"
for ((i = 0; i < 150; i++)); do
	kill -0 "$qemu_pid" 2>/dev/null || break
	sleep 0.2
done
# The guest's console: the marks, or on a failure the job's whole part.
if [ "$failed" = 0 ]; then
	rv_log "guest console (its marks):"
	tr -d '\r' <"$rv_tmp/guest.log" | sed -n '/job begin/,$p' |
		grep -a '^RXE-MARK' | sed 's/^/  guest: /'
else
	rv_log "guest console (job part):"
	tr -d '\r' <"$rv_tmp/guest.log" | sed -n '/job begin/,$p' |
		sed 's/^/  guest: /' | tail -n 2000
fi
# QEMU reports a virtio device it gave up on (virtio_error) here only:
# a guest whose network stopped (NETDEV WATCHDOG above) says why.
if [ -s "$rv_tmp/qemu.err" ]; then
	rv_log "QEMU's stderr:"
	sed 's/^/  qemu: /' "$rv_tmp/qemu.err" | tail -n 40
fi

echo "== rocepmd against the kernel's rxe ($dir: $srv_side serves, $cli_side connects; phases: $ri_phases)"
for r in "${results[@]}"; do
	echo "  $r"
done
[ "$failed" = 0 ] || rv_fail "some scenarios or checks failed against rxe (see above)"
rv_log "PASS: every scenario of every phase against rxe, every ICRC of the captures right"
