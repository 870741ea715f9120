#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# /init (PID 1) of the kernel-rxe guest that test/interop/interop.sh boots
# under QEMU: bring up eth0, load rdma_rxe, "rdma link add rxe0 type rxe
# netdev eth0", find the IPv4 RoCEv2 GID, source /job/cmd.sh, power off.
#
# Kernel command line (set by interop.sh):
#   rxe.ip=A.B.C.D/P  eth0's address     rxe.mtu=N    eth0's MTU
#   rxe.ip6=ADDR/P    eth0's IPv6 address (without it IPv6 is off)
#   rxe.timeout=S     limit for the job
# The job sees RXE_IP RXE_MTU RXE_DEV(=rxe0) RXE_GID (the IPv4 GID's index),
# RXE_GID6 (the IPv6 address's, with rxe.ip6) and the helpers below.
# Everything goes to the serial console, which the host reads as a file:
# lines "RXE-MARK t=UPTIME TEXT" are the job's messages to the host.
#
# Bash builtins where possible: under TCG every fork+exec costs ~70 ms.
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root TERM=dumb LC_ALL=C

mark() { local -; set +x; local t; read -r t _ </proc/uptime; echo "RXE-MARK t=$t $*"; }
export -f mark

mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null
mkdir -p /dev/pts /dev/shm /run /tmp
mount -t devpts devpts /dev/pts
mount -t tmpfs tmpfs /dev/shm
mount -t tmpfs tmpfs /run
mount -t tmpfs tmpfs /tmp
exec </dev/console >/dev/console 2>&1
mark "init start"

RXE_CIDR=192.0.2.1/24 RXE_CIDR6= RXE_MTU=1500 RXE_TIMEOUT=600
for kv in $(</proc/cmdline); do
	case "$kv" in
	rxe.ip=*) RXE_CIDR=${kv#*=} ;;
	rxe.ip6=*) RXE_CIDR6=${kv#*=} ;;
	rxe.mtu=*) RXE_MTU=${kv#*=} ;;
	rxe.timeout=*) RXE_TIMEOUT=${kv#*=} ;;
	esac
done
RXE_IP=${RXE_CIDR%/*}
export RXE_IP RXE_CIDR RXE_MTU RXE_DEV=rxe0

# IPv4 only on the wire unless asked for IPv6: a quiet link and a short
# capture.  With IPv6: no router solicitations, no DAD (the address is
# there at once, and rxe's GID with it).
if [[ -z "$RXE_CIDR6" ]]; then
	echo 1 >/proc/sys/net/ipv6/conf/default/disable_ipv6
	echo 1 >/proc/sys/net/ipv6/conf/all/disable_ipv6
else
	echo 0 >/proc/sys/net/ipv6/conf/default/router_solicitations
	echo 0 >/proc/sys/net/ipv6/conf/default/accept_ra
	echo 0 >/proc/sys/net/ipv6/conf/default/accept_dad
fi

modprobe virtio_pci
modprobe virtio_net
for ((i = 0; i < 50; i++)); do [[ -e /sys/class/net/eth0 ]] && break; sleep 0.1; done
ip link set lo up
ip link set eth0 mtu "$RXE_MTU" up
ip addr add "$RXE_CIDR" dev eth0
[[ -n "$RXE_CIDR6" ]] && ip -6 addr add "$RXE_CIDR6" dev eth0 nodad
mark "eth0 up $RXE_CIDR $RXE_CIDR6 mtu $RXE_MTU"

modprobe crc32_generic 2>/dev/null
modprobe rdma_rxe
modprobe ib_uverbs
modprobe rdma_ucm
rdma link add rxe0 type rxe netdev eth0 || mark "rdma link add FAILED"
# The IPv4-mapped RoCEv2 GID shows up shortly after the link is added.
RXE_GID=
for ((i = 0; i < 100; i++)); do
	for ((idx = 0; idx < 16; idx++)); do
		v=
		read -r v </sys/class/infiniband/rxe0/ports/1/gids/$idx 2>/dev/null
		if [[ "$v" == 0000:0000:0000:0000:0000:ffff:* ]]; then
			RXE_GID=$idx
			break
		fi
	done
	[[ -n "$RXE_GID" ]] && break
	sleep 0.1
done
export RXE_GID
# The IPv6 address's GID (neither empty, IPv4-mapped nor link-local),
# which rdma_cm needs to bind to the address.
# RXE_GID6 is its index, for the verbs programs' -g.
RXE_GID6=
if [[ -n "$RXE_CIDR6" ]]; then
	for ((i = 0; i < 100; i++)); do
		for ((idx = 0; idx < 16; idx++)); do
			v=
			read -r v </sys/class/infiniband/rxe0/ports/1/gids/$idx 2>/dev/null
			if [[ -n "$v" && "$v" != 0000:* && "$v" != fe80:* ]]; then
				RXE_GID6=$idx
				break
			fi
		done
		[[ -n "$RXE_GID6" ]] && break
		sleep 0.1
	done
	mark "rxe ipv6 gid index=$RXE_GID6 $(cat /sys/class/infiniband/rxe0/ports/1/gids/$RXE_GID6 2>/dev/null)"
fi
export RXE_GID6
uname -r
ibv_devinfo -d rxe0 | grep -E 'hca_id|fw_ver|state|active_mtu'
mark "rxe ready gid_index=$RXE_GID"

if [[ -f /job/cmd.sh ]]; then
	mark "job begin"
	# what rxe offers (memory windows, remote invalidation), in the
	# part of the console the host shows (doc/guides/interop.rst)
	ibv_devinfo -v -d rxe0 | grep -E 'max_mw|device_cap_flags|MEM_WINDOW|MEM_MGT'
	timeout -k 5 "$RXE_TIMEOUT" bash -c 'source /job/cmd.sh'
	mark "job end rc=$?"
else
	mark "no /job/cmd.sh"
fi
sleep 1
mark "poweroff"
sync
echo o >/proc/sysrq-trigger
sleep 5
echo b >/proc/sysrq-trigger
