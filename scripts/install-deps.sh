#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Install what Lacuna needs to build, test and demo on Debian 12, as root.
# Only missing packages are installed; with everything present this does
# not touch the network.
set -euo pipefail

PKGS=(
	# build
	build-essential autoconf automake libtool pkg-config
	libfuse3-dev liburing-dev libcmocka-dev libssl-dev
	libibverbs-dev librdmacm-dev libnfs-dev
	# run and test
	fuse3 xfsprogs e2fsprogs util-linux attr acl libnfs-utils python3 iproute2 procps
	# certificates for RPC-with-TLS tests and benchmarks
	openssl
	# decoding the wire (tests/integ/nfs_tshark.sh)
	tshark
	# observability: promtool (tests/integ/metrics.sh), USDT probes and bpftrace (docs/tracing.md)
	prometheus systemtap-sdt-dev bpftrace
	# the Linux kernel client in a VM (tests/vm); RDMA over soft-RoCE in it
	qemu-system-x86 busybox-static cpio kmod xz-utils zstd
	# RPC-with-TLS in the VM (tests/vm/nfs_kernel_tls.sh): the libraries
	# of trixie's tlshd (ktls-utils, fetched by vm.sh pkg)
	libgnutls30 libglib2.0-0 libkeyutils1 libnl-3-200 libnl-genl-3-200
	ibverbs-providers ibverbs-utils rdmacm-utils
)

if [ "$(id -u)" != 0 ]; then
	echo "install-deps: run as root (apt-get)" >&2
	exit 1
fi

missing=()
for p in "${PKGS[@]}"; do
	[[ $p == \#* ]] && continue
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
		missing+=("$p")
	fi
done
if [ ${#missing[@]} -eq 0 ]; then
	echo "install-deps: all packages present"
	exit 0
fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
# wireshark-common asks whether non-root users may capture: they may not
echo "wireshark-common wireshark-common/install-setuid boolean false" | debconf-set-selections
apt-get update -q
apt-get install -y -q --no-install-recommends "${missing[@]}"
