#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Prepare a Debian 12 machine for rocepmd: install every package the build,
# the tests and the benchmarks need, then reserve huge pages.
#
#   scripts/setup.sh
#
# apt-get runs only when a package is missing, so a second run is fast.
# Huge pages are best effort: without them rocepmd-run gives EAL
# --no-huge -m 512 and everything still works, only slower.
#
# Environment:
#   RP_HUGEPAGES   2 MiB huge pages to reserve (default 1024; 0: skip)
#   RP_HUGE_DIR    hugetlbfs mount point      (default /dev/hugepages)

set -euo pipefail

# Alphabetical; what needs each is in doc/guides (build, tests, bench).
packages=(
	clang
	dpdk
	gcc
	ibverbs-utils
	infiniband-diags
	iproute2
	iputils-ping
	libbpf-dev
	libclang-rt-14-dev
	libcmocka-dev
	libdpdk-dev
	libxdp-dev
	libibverbs-dev
	libisal-dev
	libopenmpi-dev
	librdmacm-dev
	meson
	ninja-build
	nftables
	openmpi-bin
	perftest
	pkg-config
	python3-matplotlib
	python3-pyverbs
	qperf
	rdma-core
	rdmacm-utils
	sockperf
	tcpdump
	tshark
	ucx-utils
	valgrind
	zlib1g-dev
)

hugepages=${RP_HUGEPAGES:-1024}
huge_dir=${RP_HUGE_DIR:-/dev/hugepages}
prog=${0##*/}

warn() {
	echo "$prog: warning: $*" >&2
}

sudo=
if [ "$(id -u)" -ne 0 ]; then
	command -v sudo >/dev/null ||
		{ echo "$prog: run as root (or install sudo)" >&2; exit 1; }
	sudo=sudo
fi

install_packages() {
	local p missing=()

	for p in "${packages[@]}"; do
		if [ "$(dpkg-query -W -f='${db:Status-Abbrev}' "$p" 2>/dev/null)" != "ii " ]; then
			missing+=("$p")
		fi
	done
	if [ ${#missing[@]} -eq 0 ]; then
		echo "$prog: all ${#packages[@]} packages are installed"
		return
	fi
	echo "$prog: installing ${missing[*]}"
	# tshark asks whether non-root users may capture: answer no, quietly
	echo "wireshark-common wireshark-common/install-setuid boolean false" |
		$sudo debconf-set-selections
	$sudo env DEBIAN_FRONTEND=noninteractive apt-get update
	$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y \
		--no-install-recommends "${missing[@]}"
}

reserve_hugepages() {
	local nr=/proc/sys/vm/nr_hugepages have free

	if [ "$hugepages" -eq 0 ]; then
		echo "$prog: huge pages: skipped (RP_HUGEPAGES=0)"
		return
	fi
	have=$(cat "$nr" 2>/dev/null || echo 0)
	if [ "$have" -lt "$hugepages" ]; then
		echo "$hugepages" | $sudo tee "$nr" >/dev/null 2>&1 ||
			warn "cannot write $nr"
	fi
	if ! mountpoint -q "$huge_dir" 2>/dev/null; then
		{ $sudo mkdir -p "$huge_dir" &&
		  $sudo mount -t hugetlbfs nodev "$huge_dir"; } 2>/dev/null ||
			warn "cannot mount hugetlbfs on $huge_dir"
	fi
	have=$(cat "$nr" 2>/dev/null || echo 0)
	free=$(cat /sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages \
		2>/dev/null || echo 0)
	if [ "$free" -eq 0 ]; then
		warn "no free huge page: rocepmd will run with --no-huge"
	else
		echo "$prog: huge pages: $have reserved, $free free" \
			"(asked for $hugepages)"
	fi
}

install_packages
reserve_hugepages
