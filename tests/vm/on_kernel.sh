#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Runs a VM test on another guest kernel: tests/vm/kNNN/TEST.sh is a
# symlink to this script and runs tests/vm/TEST.sh with the kernel the
# directory names (LACUNA_VM_KERNEL, see tests/vm/README.md):
#
#   k612/   6.12 from bookworm-backports (its NFS client sends READ_PLUS)
#
# The directory's kernel always wins over one set by the caller. A kernel
# that cannot be downloaded makes the test skip (77), as vm.sh does.

self=${BASH_SOURCE[0]}
dir=$(dirname "$self")
case ${dir##*/} in
k612) kernel=6.12 ;;
*)
	echo "ERROR: $self: no kernel for directory ${dir##*/}"
	exit 99
	;;
esac
export LACUNA_VM_KERNEL=$kernel
exec bash "$dir/../${self##*/}" "$@"
