#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Test VM harness: boots Debian's stock kernel under qemu (TCG) with a
# busybox initramfs, uses the host's own root (read-only, over virtio-9p)
# as the guest's userland, runs one command in it as root and hands back
# its output and exit status. Tests use it for what this machine's kernel
# lacks: the Linux NFS client, soft-RoCE, nfsd.
#
#   vm.sh prepare [--kernel K]     fetch the kernel, build the initramfs
#   vm.sh run [OPTIONS] -- CMD...  boot, run CMD, exit with its status
#   vm.sh info [--kernel K]        kernel release and paths in the cache
#   vm.sh pkg [--suite S] PACKAGE  fetch a userland package (default suite
#                                  trixie) into the cache, print its root
#   vm.sh help
#
# K (--kernel, else $LACUNA_VM_KERNEL, else 6.1) names the kernel:
#   6.1    linux-image-amd64 from the system's apt sources (Debian 12: 6.1)
#   6.12   linux-image-amd64 from bookworm-backports (6.12), looked up in
#          a private apt source list under the cache (the system's apt
#          configuration is never changed)
#   linux-image-VERSION-amd64   that package, from the system's sources or
#          else from bookworm-backports
# Several kernels live side by side in one cache.
#
# Sourced, it defines vm_require, vm_prepare and vm_run for test scripts.
#
# Operation: "prepare" downloads (never installs) the linux-image-*-amd64
# package that K stands for, unpacks it with dpkg -x under
# $LACUNA_VM_CACHE, runs depmod -b on its modules and builds an initramfs
# from busybox-static, guest-init, guest-stage2 and the handful of modules
# needed to mount 9p and overlayfs (decompressed; those built in are left
# out). Everything lands in a temporary name first and is renamed into
# place; preparing is serialised by an exclusive flock on prep.lock.
# "run" holds a shared flock on the cache's lock while its VM lives (so
# parallel runs share one cache), prepares its kernel under prep.lock
# when it must, writes the command and the run's parameters into a private
# control directory that the guest mounts over 9p, starts qemu, streams
# the command's output files, and kills qemu (by PID) on timeout or exit.
# Kernels and images no name points to any more are removed by "prepare"
# only when it gets the lock exclusively at once (no VM running).
#
# Exit codes of "run": the command's own status; 77 when the VM cannot be
# had here (no qemu, no kernel package); 99 when the VM failed (boot
# error, crash, no status); 124 when the hard timeout hit.

VM_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# The export options a lacunad on the host needs for the guest's kernel
# client: qemu's user-mode network (slirp) opens a host socket of its own,
# from an ephemeral port, for each connection of the guest, so lacunad sees
# the kernel client, which connects from a reserved port, on a port of
# 1024 or more, and a secure export (the default) would refuse it
# NFS4ERR_PERM. nfs_kernel_secure.sh mounts a secure export over a tap
# interface (--tap), where the guest's ports reach the host unchanged.
VM_EXPORT_OPTS=insecure
VM_SH="$VM_DIR/vm.sh"
: "${LACUNA_VM_CACHE:=/var/cache/lacuna-vm}"
: "${LACUNA_VM_MIRROR:=http://deb.debian.org/debian}"

# Modules put into the initramfs (with their dependencies): what it takes
# to mount the host's root and build the overlay.
VM_INITRD_MODULES="virtio_pci 9pnet_virtio 9p overlay"
# Modules every run loads before the command (--modules adds more;
# virtio_net comes first unless --no-net).
VM_BOOT_MODULES=${LACUNA_VM_BOOT_MODULES-nfsv4}

# ---- library interface for test scripts ------------------------------

# vm_require: skip the calling test (exit 77) when the VM cannot be had,
# fail it (exit 99) when preparing it broke.
vm_require() {
	local out rc=0
	out=$("$VM_SH" prepare 2>&1) || rc=$?
	case $rc in
	0)
		echo "# VM kernel ${LACUNA_VM_KERNEL:-6.1}:" \
			"$("$VM_SH" info | sed -n 's/^kernel_release=//p')"
		return 0
		;;
	77)
		echo "SKIP: ${out##*SKIP: }"
		exit 77
		;;
	*)
		echo "$out"
		echo "ERROR: vm.sh prepare failed (exit $rc)"
		exit 99
		;;
	esac
}
vm_prepare() { "$VM_SH" prepare "$@"; }
vm_pkg() { "$VM_SH" pkg "$@"; }
vm_run() { "$VM_SH" run "$@"; }

# vm_report RC SECONDS WHAT: after a VM run whose stdout and stderr are in
# $LT_TMP/out and $LT_TMP/err: log its time and its output, skip on 77,
# hard error on 99, a failure on 124 (WHAT: who may have hung).
vm_report() {
	lt_log "VM run: $2 s"
	sed 's/^/# guest: /' "$LT_TMP/out"
	sed 's/^/# guest stderr: /' "$LT_TMP/err"
	[ "$1" = 77 ] && lt_skip "vm.sh run: $(tail -n 1 "$LT_TMP/err")"
	[ "$1" = 99 ] && lt_hard "the VM failed"
	[ "$1" = 124 ] && lt_fail "the VM hit its time limit ($3 hung?)"
	return 0
}

# val KEY [FILE]: the last KEY=VALUE line the guest printed ($LT_TMP/out)
val() { sed -n "s/^$1=//p" "${2:-$LT_TMP/out}" | tail -n 1; }

# ---- helpers ------------------------------------------------------------

_vm_log() { [ -n "${VM_VERBOSE:-}" ] && echo "vm: $*" >&2; return 0; }
_vm_skip() {
	echo "vm: SKIP: $*" >&2
	exit 77
}
_vm_die() {
	echo "vm: ERROR: $*" >&2
	exit 99
}

# _vm_check_host: everything a run needs on the host, or skip.
_vm_check_host() {
	local c
	[ "$(id -u)" = 0 ] || _vm_skip "needs root (9p export of /, cache in $LACUNA_VM_CACHE)"
	[ "$(dpkg --print-architecture 2>/dev/null)" = amd64 ] ||
		_vm_skip "only on amd64 Debian hosts"
	command -v qemu-system-x86_64 >/dev/null ||
		_vm_skip "qemu-system-x86_64 not installed (package qemu-system-x86)"
	for c in cpio:cpio depmod:kmod modprobe:kmod flock:util-linux \
		gzip:gzip apt-get:apt dpkg-deb:dpkg; do
		command -v "${c%%:*}" >/dev/null ||
			_vm_skip "${c%%:*} not installed (package ${c#*:})"
	done
	VM_BUSYBOX=${LACUNA_VM_BUSYBOX:-/bin/busybox}
	[ -x "$VM_BUSYBOX" ] || _vm_skip "busybox not installed (package busybox-static)"
	if ldd "$VM_BUSYBOX" >/dev/null 2>&1; then
		_vm_skip "$VM_BUSYBOX is dynamically linked (install busybox-static)"
	fi
}

# _vm_lock -s|-xn: the cache's lock, shared while a VM runs; exclusive
# (without waiting, else status 1) to prune.
_vm_lock() {
	mkdir -p "$LACUNA_VM_CACHE" || _vm_die "mkdir $LACUNA_VM_CACHE failed"
	exec {VM_LOCKFD}>>"$LACUNA_VM_CACHE/lock" || _vm_die "open $LACUNA_VM_CACHE/lock failed"
	flock "$1" "$VM_LOCKFD" && return 0
	_vm_unlock
	[ "$1" = -xn ] && return 1
	_vm_die "flock $LACUNA_VM_CACHE/lock failed"
}
_vm_unlock() {
	[ -n "${VM_LOCKFD:-}" ] || return 0
	exec {VM_LOCKFD}>&-
	VM_LOCKFD=
}
# _vm_prep_lock / _vm_prep_unlock: exclusive, while fetching or building.
_vm_prep_lock() {
	mkdir -p "$LACUNA_VM_CACHE" || _vm_die "mkdir $LACUNA_VM_CACHE failed"
	exec {VM_PREPFD}>>"$LACUNA_VM_CACHE/prep.lock" ||
		_vm_die "open $LACUNA_VM_CACHE/prep.lock failed"
	flock -x "$VM_PREPFD" || _vm_die "flock $LACUNA_VM_CACHE/prep.lock failed"
}
_vm_prep_unlock() {
	[ -n "${VM_PREPFD:-}" ] || return 0
	exec {VM_PREPFD}>&-
	VM_PREPFD=
}

# _vm_kernel: set what the kernel name $VM_KERNEL stands for: VM_KNAME
# (its key in the cache), VM_PTR (the file naming its directory), VM_SUITE
# (the suite of its private apt list; empty: the system's sources),
# VM_META (the package to resolve) and VM_KPREFIX (what its release must
# start with).
_vm_kernel() {
	local k=${VM_KERNEL:-${LACUNA_VM_KERNEL:-6.1}}
	VM_SUITE='' VM_META=linux-image-amd64 VM_KPREFIX=''
	case $k in
	6.1 | bookworm) VM_KNAME=6.1 VM_KPREFIX=6.1. ;;
	6.12 | bookworm-backports) VM_KNAME=6.12 VM_SUITE=bookworm-backports VM_KPREFIX=6.12. ;;
	linux-image-[0-9]*-amd64) VM_KNAME=$k VM_META=$k ;;
	*) _vm_die "unknown kernel \"$k\" (6.1, 6.12 or linux-image-VERSION-amd64)" ;;
	esac
	# "current" for 6.1: the name caches made before several kernels had
	VM_PTR=$LACUNA_VM_CACHE/current
	[ "$VM_KNAME" = 6.1 ] || VM_PTR=$LACUNA_VM_CACHE/current-$VM_KNAME
}

# _vm_apt apt-get|apt-cache ARGS...: apt on the system's sources, or with
# $VM_SUITE on a private list under the cache (its own lists and caches;
# the system's apt configuration and state are left alone).
_vm_apt() {
	local d=$LACUNA_VM_CACHE/apt-$VM_SUITE cmd=$1
	shift
	if [ -z "$VM_SUITE" ]; then
		"$cmd" "$@"
		return
	fi
	if [ ! -f "$d/sources.list" ]; then
		mkdir -p "$d/lists/partial" "$d/cache/archives/partial" || return 1
		echo "deb $LACUNA_VM_MIRROR $VM_SUITE main" >"$d/sources.list" || return 1
	fi
	"$cmd" -o Dir::Etc::sourcelist="$d/sources.list" -o Dir::Etc::sourceparts=- \
		-o Dir::State::Lists="$d/lists" -o Dir::Cache="$d/cache" \
		-o APT::Get::List-Cleanup=0 "$@"
}

# _vm_resolve1: set VM_PKG and VM_PKGVER from apt's lists (no network).
_vm_resolve1() {
	if [ "$VM_META" = linux-image-amd64 ]; then
		VM_PKG=$(_vm_apt apt-cache depends linux-image-amd64 2>/dev/null |
			awk '$1 == "Depends:" && $2 ~ /^linux-image-[0-9].*-amd64$/ { print $2; exit }')
	else
		VM_PKG=$VM_META
	fi
	[ -n "$VM_PKG" ] || return 1
	VM_PKGVER=$(_vm_apt apt-cache policy "$VM_PKG" 2>/dev/null | awk '$1 == "Candidate:" { print $2 }')
	if [ -z "$VM_PKGVER" ] || [ "$VM_PKGVER" = "(none)" ]; then
		VM_PKG=
		return 1
	fi
}

# _vm_resolve: _vm_resolve1, and a package named outright not in the
# system's sources is looked for in bookworm-backports.
_vm_resolve() {
	_vm_resolve1 && return 0
	[ "$VM_META" != linux-image-amd64 ] && [ -z "$VM_SUITE" ] || return 1
	VM_SUITE=bookworm-backports
	if _vm_resolve1 || { _vm_apt apt-get update -q >/dev/null 2>&1 && _vm_resolve1; }; then
		return 0
	fi
	VM_SUITE=''
	return 1
}

# _vm_load_current: set VM_KDIR, VM_KVER, VM_ROOT from $VM_PTR.
_vm_load_current() {
	local name
	[ -r "$VM_PTR" ] || return 1
	read -r name <"$VM_PTR" || return 1
	VM_KDIR="$LACUNA_VM_CACHE/$name"
	VM_ROOT="$VM_KDIR/root"
	[ -f "$VM_KDIR/ready" ] || return 1
	read -r VM_KVER <"$VM_KDIR/ready" || return 1
	[ -f "$VM_ROOT/boot/vmlinuz-$VM_KVER" ] && [ -d "$VM_ROOT/lib/modules/$VM_KVER" ]
}

# _vm_fetch: download and unpack $VM_PKG=$VM_PKGVER into the cache.
_vm_fetch() {
	local name="${VM_PKG}_${VM_PKGVER}" tmp deb debs kver log
	tmp=$(mktemp -d "$LACUNA_VM_CACHE/.fetch.XXXXXX") || _vm_die "mktemp in $LACUNA_VM_CACHE failed"
	log="$tmp/apt.log"
	_vm_log "downloading $VM_PKG $VM_PKGVER"
	if ! (cd "$tmp" && _vm_apt apt-get download -q "$VM_PKG=$VM_PKGVER") >"$log" 2>&1; then
		# Stale lists name a version the mirror dropped: refresh once.
		_vm_log "apt-get download failed, running apt-get update"
		if _vm_apt apt-get update -q >>"$log" 2>&1 && _vm_resolve &&
			name="${VM_PKG}_${VM_PKGVER}" &&
			(cd "$tmp" && _vm_apt apt-get download -q "$VM_PKG=$VM_PKGVER") >>"$log" 2>&1; then
			:
		else
			tail -n 5 "$log" >&2
			rm -rf "$tmp"
			return 77
		fi
	fi
	debs=("$tmp"/*.deb)
	deb=${debs[0]}
	[ -f "$deb" ] || { rm -rf "$tmp"; _vm_die "apt-get download left no .deb"; }
	kver=${VM_PKG#linux-image-}
	dpkg-deb -x "$deb" "$tmp/root" || { rm -rf "$tmp"; _vm_die "dpkg-deb -x $deb failed"; }
	rm -f "$deb"
	if [ ! -f "$tmp/root/boot/vmlinuz-$kver" ] || [ ! -d "$tmp/root/lib/modules/$kver" ]; then
		rm -rf "$tmp"
		_vm_die "$VM_PKG has no vmlinuz-$kver or modules"
	fi
	depmod -b "$tmp/root" "$kver" || { rm -rf "$tmp"; _vm_die "depmod -b $tmp/root $kver failed"; }
	echo "$kver" >"$tmp/ready"
	rm -f "$log"
	# a directory without "ready" is a leftover no VM can be using
	rm -rf "${LACUNA_VM_CACHE:?}/$name"
	mv "$tmp" "$LACUNA_VM_CACHE/$name" || _vm_die "mv $tmp failed"
	chmod 755 "$LACUNA_VM_CACHE/$name"
	_vm_point "$name"
}

# _vm_point DIRNAME: make $VM_PTR name that kernel directory.
_vm_point() {
	if ! echo "$1" >"$VM_PTR.tmp" || ! mv "$VM_PTR.tmp" "$VM_PTR"; then
		_vm_die "writing $VM_PTR failed"
	fi
}

# _vm_check_release: the kernel found is the one its name promises.
_vm_check_release() {
	local kver=${VM_PKG#linux-image-}
	case $kver in
	"$VM_KPREFIX"*) ;;
	*) _vm_skip "apt offers $VM_PKG ${VM_PKGVER} for kernel $VM_KNAME, not a ${VM_KPREFIX}x kernel" ;;
	esac
}

# _vm_extract_vmlinux: unpack the ELF kernel from the xz- or
# zstd-compressed bzImage (Debian's 6.1 uses xz, 6.12 zstd). qemu boots it
# straight through its PVH entry, which spares the guest decompressing
# itself under TCG (seconds per boot). Without it (other compression, no
# CONFIG_PVH) runs boot the bzImage.
_vm_extract_vmlinux() {
	local bz="$VM_ROOT/boot/vmlinuz-$VM_KVER" off magic unz pat
	: >"$VM_KDIR/vmlinux.none"
	grep -q '^CONFIG_PVH=y' "$VM_ROOT/boot/config-$VM_KVER" 2>/dev/null || return 0
	if grep -q '^CONFIG_KERNEL_ZSTD=y' "$VM_ROOT/boot/config-$VM_KVER"; then
		unz=zstd pat='\x28\xb5\x2f\xfd'
	else
		unz=xz pat='\xfd7zXZ\x00'
	fi
	command -v $unz >/dev/null || return 0
	# the magic may occur by chance before the stream: the ELF check decides
	for off in $(LC_ALL=C grep -obUaP "$pat" "$bz" 2>/dev/null | head -n 4 | cut -d: -f1); do
		# the decompressor complains about the bytes after its stream
		tail -c +$((off + 1)) "$bz" | $unz -dc >"$VM_KDIR/vmlinux.tmp" 2>/dev/null
		magic=$(head -c 4 "$VM_KDIR/vmlinux.tmp" | od -An -tx1 | tr -d ' \n')
		if [ "$magic" = 7f454c46 ]; then
			mv "$VM_KDIR/vmlinux.tmp" "$VM_KDIR/vmlinux" && rm -f "$VM_KDIR/vmlinux.none"
			return 0
		fi
	done
	rm -f "$VM_KDIR/vmlinux.tmp"
	return 0
}

# _vm_initrd_path: the initramfs for the current kernel and the current
# guest scripts (a new name whenever either changes).
_vm_initrd_path() {
	local h
	h=$( (cat "$VM_DIR/guest-init" "$VM_DIR/guest-stage2" "$VM_BUSYBOX"
		echo "$VM_INITRD_MODULES") | sha256sum) || return 1
	VM_INITRD="$VM_KDIR/initrd-${h:0:16}.img"
}

_vm_build_initrd() {
	local tmp m verb path ko list found unz
	tmp=$(mktemp -d "$LACUNA_VM_CACHE/.initrd.XXXXXX") || _vm_die "mktemp failed"
	mkdir -p "$tmp/t/bin" "$tmp/t/dev" "$tmp/t/proc" "$tmp/t/sys" "$tmp/t/modules"
	cp "$VM_BUSYBOX" "$tmp/t/bin/busybox" || _vm_die "cp $VM_BUSYBOX failed"
	for m in $("$VM_BUSYBOX" --list); do
		[ "$m" = busybox ] || ln -s busybox "$tmp/t/bin/$m"
	done
	install -m 755 "$VM_DIR/guest-init" "$tmp/t/init" || _vm_die "install guest-init failed"
	install -m 755 "$VM_DIR/guest-stage2" "$tmp/t/guest-stage2" || _vm_die "install guest-stage2 failed"
	mknod -m 600 "$tmp/t/dev/console" c 5 1 2>/dev/null
	list=()
	# busybox insmod takes plain .ko files: compressed ones are unpacked;
	# what the kernel has built in needs nothing.
	for m in $VM_INITRD_MODULES; do
		found=0
		while read -r verb path _; do
			[ "$verb" = builtin ] && [ "$path" = "$m" ] && found=1
			[ "$verb" = insmod ] || continue
			ko=$(basename "$path")
			case $ko in
			*.ko.xz) unz="xz -dc" ;;
			*.ko.zst) unz="zstd -dcq" ;;
			*.ko.gz) unz="gzip -dc" ;;
			*) unz="cat" ;;
			esac
			command -v "${unz%% *}" >/dev/null ||
				_vm_skip "${unz%% *} not installed (needed for $ko of $VM_KVER)"
			ko=${ko%.xz}
			ko=${ko%.zst}
			ko=${ko%.gz}
			case " ${list[*]} " in *" $ko "*) continue ;; esac
			$unz <"$path" >"$tmp/t/modules/$ko" || _vm_die "unpacking $path failed"
			list+=("$ko")
		done < <(modprobe -d "$VM_ROOT" -S "$VM_KVER" --show-depends "$m" 2>&1 ||
			echo "error $m")
		[ $found = 1 ] || [ -f "$tmp/t/modules/$m.ko" ] ||
			_vm_die "module $m not found for $VM_KVER"
	done
	printf '%s\n' "${list[@]}" >"$tmp/t/modules.list"
	(cd "$tmp/t" && find . | LC_ALL=C sort | cpio -o -H newc -R 0:0 --quiet | gzip -1) \
		>"$tmp/initrd.img" || _vm_die "cpio of the initramfs failed"
	mv "$tmp/initrd.img" "$VM_INITRD" || _vm_die "mv initrd failed"
	rm -rf "$tmp"
	_vm_log "built $VM_INITRD"
}

# _vm_prune: drop kernel directories no name points to, and initramfs
# images of other guest scripts. Only while no VM runs: it takes the
# cache's lock exclusively, without waiting, or leaves everything.
_vm_prune() {
	local d p keep=" "
	_vm_lock -xn || { _vm_log "VMs running, nothing pruned"; return 0; }
	for p in "$LACUNA_VM_CACHE"/current "$LACUNA_VM_CACHE"/current-*; do
		[ -f "$p" ] && [ "${p%.tmp}" = "$p" ] && read -r d <"$p" && keep+="$d "
	done
	for d in "$LACUNA_VM_CACHE"/linux-image-*; do
		[ -d "$d" ] || continue
		case $keep in
		*" ${d##*/} "*) ;;
		*) rm -rf "$d"; continue ;;
		esac
		for p in "$d"/initrd-*.img; do
			[ -f "$p" ] && [ "${p##*/}" != "${VM_INITRD##*/}" ] && rm -f "$p"
		done
	done
	rm -rf "$LACUNA_VM_CACHE"/.fetch.* "$LACUNA_VM_CACHE"/.initrd.*
	_vm_unlock
}

# _vm_ensure FULL: make the cache usable for the kernel $VM_KNAME
# (prep.lock held). With FULL, also look for a newer package than the
# cached one.
_vm_ensure() {
	local full=$1 rc have=0
	_vm_load_current && have=1
	if [ "$full" = 1 ] || [ $have = 0 ]; then
		if ! _vm_resolve; then
			if [ $have = 0 ]; then
				_vm_log "no $VM_META in apt's lists, running apt-get update"
				_vm_apt apt-get update -q >/dev/null 2>&1
				_vm_resolve || _vm_skip "apt knows no $VM_META package${VM_SUITE:+ in $VM_SUITE at $LACUNA_VM_MIRROR (no network?)}"
			fi
		fi
		[ -n "${VM_PKG:-}" ] && _vm_check_release
		if [ -n "${VM_PKG:-}" ] &&
			{ [ $have = 0 ] || [ "$VM_KDIR" != "$LACUNA_VM_CACHE/${VM_PKG}_${VM_PKGVER}" ]; }; then
			rc=0
			if [ -f "$LACUNA_VM_CACHE/${VM_PKG}_${VM_PKGVER}/ready" ]; then
				# cached under another name already
				_vm_point "${VM_PKG}_${VM_PKGVER}"
			else
				_vm_fetch || rc=$?
			fi
			if [ $rc = 77 ]; then
				[ $have = 1 ] || _vm_skip "cannot download $VM_PKG $VM_PKGVER${VM_SUITE:+ from $VM_SUITE} (no network or apt)"
				echo "vm: cannot download $VM_PKG $VM_PKGVER, keeping the cached kernel" >&2
			fi
			_vm_load_current || _vm_die "cache $LACUNA_VM_CACHE unusable after fetch"
		fi
	fi
	[ "$full" = 1 ] && rm -f "$VM_KDIR/vmlinux.none"
	[ -f "$VM_KDIR/vmlinux" ] || [ -f "$VM_KDIR/vmlinux.none" ] || _vm_extract_vmlinux
	_vm_initrd_path || _vm_die "hashing the initramfs inputs failed"
	[ -f "$VM_INITRD" ] || _vm_build_initrd
	return 0
}

# _vm_ready: the kernel $VM_KNAME and its initramfs are in the cache.
_vm_ready() {
	_vm_load_current && _vm_initrd_path && [ -f "$VM_INITRD" ] &&
		{ [ -f "$VM_KDIR/vmlinux" ] || [ -f "$VM_KDIR/vmlinux.none" ]; }
}

# ---- commands ---------------------------------------------------------

# _vm_pkgver PACKAGE: set VM_PKGVER to its candidate in $VM_SUITE's list.
_vm_pkgver() {
	VM_PKGVER=$(_vm_apt apt-cache policy "$1" 2>/dev/null | awk '$1 == "Candidate:" { print $2 }')
	[ -n "$VM_PKGVER" ] && [ "$VM_PKGVER" != "(none)" ]
}

# _vm_cmd_pkg [--suite SUITE] PACKAGE: a userland package the guest needs
# and Debian 12 lacks (ktls-utils' tlshd from trixie), downloaded once
# with apt-get download through the private apt list of SUITE (default
# trixie) and unpacked with dpkg-deb -x under the cache, never installed.
# Prints the directory it is unpacked in (its usr/sbin/... below), which
# the guest sees too (the host's root). Cached: no apt at all; else the
# candidate of SUITE's list (refreshed once when it has none or the
# download fails). Exit 77 with the reason when it cannot be had.
_vm_cmd_pkg() {
	local pkg="" name tmp debs log have=""
	VM_SUITE=trixie
	while [ $# -gt 0 ]; do
		case $1 in
		-v | --verbose) VM_VERBOSE=1 ;;
		--suite) VM_SUITE=$2; shift ;;
		-*) _vm_usage >&2; exit 2 ;;
		*) pkg=$1 ;;
		esac
		shift
	done
	[[ $pkg =~ ^[a-z0-9][a-z0-9.+-]+$ && $VM_SUITE =~ ^[a-z][a-z0-9-]*$ ]] ||
		{ _vm_usage >&2; exit 2; }
	[ "$(id -u)" = 0 ] || _vm_skip "needs root (cache in $LACUNA_VM_CACHE)"
	for name in apt-get:apt apt-cache:apt dpkg-deb:dpkg flock:util-linux; do
		command -v "${name%%:*}" >/dev/null ||
			_vm_skip "${name%%:*} not installed (package ${name#*:})"
	done
	VM_PTR="$LACUNA_VM_CACHE/pkg-$VM_SUITE-$pkg"
	_vm_prep_lock
	if [ -r "$VM_PTR" ] && read -r name <"$VM_PTR" && [ -f "$LACUNA_VM_CACHE/$name/ready" ]; then
		have="$LACUNA_VM_CACHE/$name/root"
	fi
	if [ -z "$have" ]; then
		if ! _vm_pkgver "$pkg"; then
			_vm_log "no $pkg in the list of $VM_SUITE, running apt-get update"
			_vm_apt apt-get update -q >/dev/null 2>&1
			_vm_pkgver "$pkg" || _vm_skip "apt knows no $pkg in $VM_SUITE at $LACUNA_VM_MIRROR (no network?)"
		fi
		name="pkg-${pkg}_${VM_PKGVER}-$VM_SUITE"
		tmp=$(mktemp -d "$LACUNA_VM_CACHE/.fetch.XXXXXX") || _vm_die "mktemp in $LACUNA_VM_CACHE failed"
		chmod 755 "$tmp"
		log="$tmp/apt.log"
		_vm_log "downloading $pkg $VM_PKGVER from $VM_SUITE"
		if ! (cd "$tmp" && _vm_apt apt-get download -q "$pkg=$VM_PKGVER") >"$log" 2>&1; then
			if ! _vm_apt apt-get update -q >>"$log" 2>&1 || ! _vm_pkgver "$pkg" ||
				! (cd "$tmp" && _vm_apt apt-get download -q "$pkg=$VM_PKGVER") >>"$log" 2>&1; then
				tail -n 5 "$log" >&2
				rm -rf "$tmp"
				_vm_skip "cannot download $pkg from $VM_SUITE at $LACUNA_VM_MIRROR (no network or apt)"
			fi
			name="pkg-${pkg}_${VM_PKGVER}-$VM_SUITE"
		fi
		debs=("$tmp"/*.deb)
		[ -f "${debs[0]}" ] || { rm -rf "$tmp"; _vm_die "apt-get download left no .deb"; }
		dpkg-deb -x "${debs[0]}" "$tmp/root" || { rm -rf "$tmp"; _vm_die "dpkg-deb -x ${debs[0]} failed"; }
		rm -f "${debs[0]}" "$log"
		echo "$pkg $VM_PKGVER $VM_SUITE" >"$tmp/ready"
		rm -rf "${LACUNA_VM_CACHE:?}/$name"
		mv "$tmp" "$LACUNA_VM_CACHE/$name" || _vm_die "mv $tmp failed"
		_vm_point "$name"
		have="$LACUNA_VM_CACHE/$name/root"
	fi
	_vm_prep_unlock
	echo "$have"
}


_vm_usage() {
	cat <<'EOF'
usage: vm.sh prepare [--kernel K] [-v]
       vm.sh run [OPTIONS] -- CMD [ARG...]
       vm.sh info [--kernel K]
       vm.sh pkg [--suite SUITE] PACKAGE
       vm.sh help

K: 6.1 (default: linux-image-amd64 of the system's apt sources),
   6.12 (linux-image-amd64 of bookworm-backports, through a private apt
   list in the cache) or linux-image-VERSION-amd64 (that package)

pkg: download PACKAGE (never install it) from SUITE (default trixie, through
   a private apt list in the cache), unpack it there once, print the
   directory it is unpacked in (the guest sees it too). Exit 77 when it
   cannot be had.

run options:
  --kernel K         boot kernel K (default $LACUNA_VM_KERNEL, else 6.1)
  --share DIR        mount host DIR writable at the same path in the guest
                     (repeatable; the rest of the host root is read-only)
  --modules M[,M...] load these modules before CMD (after virtio_net, nfsv4)
  --env NAME=VALUE   set in CMD's environment (repeatable)
  --cwd DIR          CMD's working directory (default: the current one)
  --hostfwd SPEC     forward a host loopback port into the guest, e.g.
                     tcp:127.0.0.1:5555-:2049 (repeatable)
  --tap IFNAME       connect the guest to the host's tap interface IFNAME
                     (made and addressed by the caller: 10.0.2.2 peer
                     10.0.2.15) instead of qemu's user-mode network, so
                     that the host sees the guest's own source ports
  --timeout SECS     hard limit for the whole VM (default 900)
  --mem MIB          guest memory (default 1024)
  --cpus N           guest vCPUs (default 1: boots faster under TCG)
  --no-net           no network interface
  --times FILE       write boot_s (qemu start to CMD start, host clock),
                     guest_boot_s (guest uptime then), cmd_s, total_s
                     (whole run) in seconds to FILE
  --keep             keep the run directory (console log, outputs)
  -v, --verbose      progress and timings on stderr

environment: LACUNA_VM_CACHE (default /var/cache/lacuna-vm),
  LACUNA_VM_KERNEL (default 6.1), LACUNA_VM_MIRROR (the Debian archive
  for private apt lists, default http://deb.debian.org/debian),
  LACUNA_VM_TIMEOUT, LACUNA_VM_MEM, LACUNA_VM_CPUS, LACUNA_VM_APPEND
  (extra kernel command line), LACUNA_VM_QEMU_ARGS (extra qemu
  arguments, split on blanks), LACUNA_VM_BOOT_MODULES (default nfsv4),
  LACUNA_VM_BUSYBOX, LACUNA_VM_ROOT_CACHE
  (9p cache mode of the host root: loose or none), LACUNA_VM_BIOS
  (firmware; default qboot.rom when present, "default" for SeaBIOS)

In the guest the host reaches as 10.0.2.2 (qemu user networking: that is
the host's 127.0.0.1; with --tap, the host's address on the tap interface). Exit: CMD's status; 77 no VM here; 99 VM failure;
124 timeout.
EOF
}

# info: what a prepared cache holds (key=value lines), without touching it.
_vm_cmd_info() {
	[ "${1:-}" = --kernel ] && VM_KERNEL=${2:-}
	_vm_kernel
	_vm_load_current || { echo "vm: kernel $VM_KNAME not prepared (run: vm.sh prepare)" >&2; exit 1; }
	echo "kernel=$VM_KNAME"
	echo "kernel_release=$VM_KVER"
	echo "kernel_dir=$VM_KDIR"
	echo "modules_dir=$VM_ROOT/lib/modules/$VM_KVER"
}

_vm_cmd_prepare() {
	while [ $# -gt 0 ]; do
		case $1 in
		-v | --verbose) VM_VERBOSE=1 ;;
		--kernel) VM_KERNEL=$2; shift ;;
		*) _vm_usage >&2; exit 2 ;;
		esac
		shift
	done
	_vm_check_host
	_vm_kernel
	_vm_prep_lock
	_vm_ensure 1
	_vm_prune
	_vm_prep_unlock
	_vm_log "ready: kernel $VM_KVER, initramfs $VM_INITRD"
	return 0
}

# _vm_sub A B: B - A in seconds, two decimals.
_vm_sub() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }

# _vm_q: quote a value for a qemu option list (double the commas).
_vm_q() { printf '%s' "${1//,/,,}"; }

_vm_run_cleanup() {
	local rc=$? i
	trap - EXIT INT TERM
	if [ -n "${VM_QEMU_PID:-}" ] && kill -0 "$VM_QEMU_PID" 2>/dev/null; then
		kill "$VM_QEMU_PID" 2>/dev/null
		for ((i = 0; i < 50; i++)); do
			kill -0 "$VM_QEMU_PID" 2>/dev/null || break
			sleep 0.1
		done
		kill -KILL "$VM_QEMU_PID" 2>/dev/null
		wait "$VM_QEMU_PID" 2>/dev/null
	fi
	for i in ${VM_TAIL_PIDS:-}; do
		kill "$i" 2>/dev/null
		wait "$i" 2>/dev/null
	done
	if [ -n "${VM_RUNDIR:-}" ]; then
		if [ -n "${VM_KEEP:-}" ]; then
			echo "vm: run directory kept: $VM_RUNDIR" >&2
		else
			rm -rf "$VM_RUNDIR"
		fi
	fi
	exit "$rc"
}

_vm_cmd_run() {
	local shares=() envs=() fwds=() mods="" cwd=$PWD net=1 timesfile="" tap=""
	local timeout=${LACUNA_VM_TIMEOUT:-900} mem=${LACUNA_VM_MEM:-1024}
	local cpus=${LACUNA_VM_CPUS:-1} d i e ctl args netdev t0 t1 deadline
	local status="" timed_out=0 guest_boot_s="" guest_end_s="" t_launch t_cmd=""
	local kernel bios

	while [ $# -gt 0 ]; do
		case $1 in
		--share)
			[ -d "${2:-}" ] || _vm_die "--share: ${2:-} is not a directory"
			d=$(realpath "$2") || _vm_die "realpath $2 failed"
			[ "$d" != / ] || _vm_die "--share: / cannot be shared writable"
			shares+=("$d")
			shift
			;;
		--modules) mods="$mods ${2//,/ }"; shift ;;
		--env)
			[[ ${2:-} =~ ^[A-Za-z_][A-Za-z0-9_]*= ]] || _vm_die "--env: expected NAME=VALUE"
			envs+=("$2")
			shift
			;;
		--cwd) cwd=$2; shift ;;
		--hostfwd)
			[[ ${2:-} =~ ^(tcp|udp):127\.0\.0\.1:[0-9]+-:[0-9]+$ ]] ||
				_vm_die "--hostfwd: expected tcp:127.0.0.1:HOSTPORT-:GUESTPORT"
			fwds+=("$2")
			shift
			;;
		--timeout) timeout=$2; shift ;;
		--mem) mem=$2; shift ;;
		--cpus) cpus=$2; shift ;;
		--no-net) net=0 ;;
		--tap)
			[[ ${2:-} =~ ^[A-Za-z0-9_.-]{1,15}$ ]] || _vm_die "--tap: expected an interface name"
			tap=$2
			shift
			;;
		--times) timesfile=$2; shift ;;
		--keep) VM_KEEP=1 ;;
		--kernel) VM_KERNEL=$2; shift ;;
		-v | --verbose) VM_VERBOSE=1 ;;
		--) shift; break ;;
		*) _vm_usage >&2; exit 2 ;;
		esac
		shift
	done
	[ $# -gt 0 ] || { _vm_usage >&2; exit 2; }
	[[ $timeout =~ ^[0-9]+$ && $mem =~ ^[0-9]+$ && $cpus =~ ^[0-9]+$ ]] ||
		_vm_die "--timeout, --mem and --cpus take numbers"

	_vm_check_host
	_vm_kernel
	t0=$EPOCHREALTIME
	# Shared while the VM runs: a concurrent "prepare" cannot prune it,
	# other runs go on.
	_vm_lock -s
	if ! _vm_ready; then
		_vm_prep_lock
		_vm_ensure 0
		_vm_prep_unlock
	fi

	VM_RUNDIR=$(mktemp -d "${TMPDIR:-/tmp}/lacuna-vm.XXXXXX") || _vm_die "mktemp failed"
	trap _vm_run_cleanup EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM
	ctl="$VM_RUNDIR/ctl"
	mkdir -p "$ctl"
	: >"$ctl/stdout"
	: >"$ctl/stderr"

	{
		printf 'VM_KVER=%q\n' "$VM_KVER"
		printf 'VM_MODULES_SRC=%q\n' "$(realpath "$VM_ROOT/lib/modules/$VM_KVER")"
		d=$VM_BOOT_MODULES
		((net)) && d="virtio_net $d"
		printf 'VM_MODULES=%q\n' "$d $mods"
		printf 'VM_NET=%q\n' "$net"
		printf 'VM_ROOT_CACHE=%q\n' "${LACUNA_VM_ROOT_CACHE:-loose}"
		printf 'VM_NSHARES=%q\n' "${#shares[@]}"
		for i in "${!shares[@]}"; do
			printf 'VM_SHARE_%d=%q\n' "$i" "${shares[$i]}"
		done
	} >"$ctl/config"
	{
		echo "# CMD for the guest, written by vm.sh"
		for e in "${envs[@]}"; do
			printf 'export %s=%q\n' "${e%%=*}" "${e#*=}"
		done
		printf 'cd -- %q 2>/dev/null || cd /\n' "$cwd"
		printf 'exec'
		printf ' %q' "$@"
		printf '\n'
	} >"$ctl/cmd"

	kernel="$VM_ROOT/boot/vmlinuz-$VM_KVER"
	[ -f "$VM_KDIR/vmlinux" ] && kernel="$VM_KDIR/vmlinux"
	bios=${LACUNA_VM_BIOS:-/usr/share/qemu/qboot.rom}
	# shellcheck disable=SC2054 # the commas belong to qemu's option lists
	args=(-accel tcg,tb-size=256 -cpu max -m "$mem" -smp "$cpus"
		-nographic -nodefaults -no-user-config -no-reboot
		-kernel "$kernel" -initrd "$VM_INITRD"
		-append "console=ttyS0 quiet panic=-1 mitigations=off ${LACUNA_VM_APPEND:-}"
		-serial "file:$VM_RUNDIR/console.log" -monitor none
		-fsdev local,id=fsroot,path=/,security_model=none,readonly=on,multidevs=remap
		-device virtio-9p-pci,fsdev=fsroot,mount_tag=hostroot
		-fsdev "local,id=fsctl,path=$(_vm_q "$ctl"),security_model=none"
		-device virtio-9p-pci,fsdev=fsctl,mount_tag=ctl)
	for i in "${!shares[@]}"; do
		args+=(-fsdev "local,id=fs$i,path=$(_vm_q "${shares[$i]}"),security_model=none,multidevs=remap"
			-device "virtio-9p-pci,fsdev=fs$i,mount_tag=share$i")
	done
	# qboot starts faster than SeaBIOS; "default" keeps qemu's own.
	[ "$bios" != default ] && [ -f "$bios" ] && args+=(-bios "$bios")
	# shellcheck disable=SC2206 # extra arguments are meant to split
	args+=(${LACUNA_VM_QEMU_ARGS:-})
	if ((net)) && [ -n "$tap" ]; then
		# the guest's packets as they are: no NAT between its sockets and the host's
		args+=(-netdev "tap,id=net0,ifname=$tap,script=no,downscript=no"
			-device virtio-net-pci,netdev=net0,romfile=)
	elif ((net)); then
		netdev="user,id=net0,ipv6=off"
		for e in "${fwds[@]}"; do
			netdev+=",hostfwd=$e"
		done
		# shellcheck disable=SC2054
		args+=(-netdev "$netdev" -device virtio-net-pci,netdev=net0,romfile=)
	fi

	_vm_log "booting $VM_KVER (timeout ${timeout}s): $*"
	t_launch=$EPOCHREALTIME
	# timeout(1) is a second fence in case this script dies without its
	# EXIT trap (SIGKILL): qemu never outlives the hard limit by much.
	timeout -k 10 $((timeout + 30)) qemu-system-x86_64 "${args[@]}" \
		</dev/null >"$VM_RUNDIR/qemu.log" 2>&1 &
	VM_QEMU_PID=$!
	tail -c +1 -s 0.2 -f --pid="$VM_QEMU_PID" "$ctl/stdout" &
	VM_TAIL_PIDS=$!
	tail -c +1 -s 0.2 -f --pid="$VM_QEMU_PID" "$ctl/stderr" >&2 &
	VM_TAIL_PIDS+=" $!"

	deadline=$((SECONDS + timeout))
	while kill -0 "$VM_QEMU_PID" 2>/dev/null; do
		if ((SECONDS >= deadline)); then
			timed_out=1
			kill "$VM_QEMU_PID" 2>/dev/null
			break
		fi
		# ctl/times appears when CMD starts: boot time as the host sees it.
		[ -z "$t_cmd" ] && [ -e "$ctl/times" ] && t_cmd=$EPOCHREALTIME
		sleep 0.1
	done
	wait "$VM_QEMU_PID" 2>/dev/null
	VM_QEMU_PID=
	for i in $VM_TAIL_PIDS; do
		wait "$i" 2>/dev/null
	done
	VM_TAIL_PIDS=
	t1=$EPOCHREALTIME

	[ -r "$ctl/status" ] && read -r status <"$ctl/status"
	[ -s "$ctl/uname" ] && echo "vm: guest kernel release: $(cat "$ctl/uname")" >&2
	if [ -z "$status" ]; then
		status=$(sed -n 's/^LACUNA-VM-STATUS: \([0-9]*\).*/\1/p' \
			"$VM_RUNDIR/console.log" 2>/dev/null | tail -n 1)
	fi
	if [ -r "$ctl/times" ]; then
		guest_boot_s=$(sed -n 's/^boot_s=//p' "$ctl/times")
		guest_end_s=$(sed -n 's/^end_s=//p' "$ctl/times")
	fi
	local total_s cmd_s="" boot_s=""
	total_s=$(_vm_sub "$t0" "$t1")
	[ -n "$t_cmd" ] && boot_s=$(_vm_sub "$t_launch" "$t_cmd")
	[ -n "$guest_boot_s" ] && [ -n "$guest_end_s" ] &&
		cmd_s=$(_vm_sub "$guest_boot_s" "$guest_end_s")
	if [ -n "$timesfile" ]; then
		printf 'boot_s=%s\nguest_boot_s=%s\ncmd_s=%s\ntotal_s=%s\n' \
			"$boot_s" "$guest_boot_s" "$cmd_s" "$total_s" >"$timesfile"
	fi
	_vm_log "qemu start to CMD ${boot_s:-?} s (guest uptime ${guest_boot_s:-?} s)," \
		"CMD ${cmd_s:-?} s, total $total_s s"

	if ((timed_out)); then
		echo "vm: ERROR: timeout after ${timeout}s, qemu killed; console tail:" >&2
		tail -n 30 "$VM_RUNDIR/console.log" >&2
		exit 124
	fi
	if [[ ! $status =~ ^[0-9]+$ ]]; then
		echo "vm: ERROR: the VM ended without a command status" >&2
		grep -h "LACUNA-VM-FATAL" "$VM_RUNDIR/console.log" >&2
		echo "vm: qemu output:" >&2
		tail -n 10 "$VM_RUNDIR/qemu.log" >&2
		echo "vm: console tail:" >&2
		tail -n 40 "$VM_RUNDIR/console.log" >&2
		exit 99
	fi
	exit "$status"
}

# ---- CLI ------------------------------------------------------------------

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
	case ${1:-} in
	prepare) shift; _vm_cmd_prepare "$@" ;;
	run) shift; _vm_cmd_run "$@" ;;
	info) shift; _vm_cmd_info "$@" ;;
	pkg) shift; _vm_cmd_pkg "$@" ;;
	help | -h | --help) _vm_usage ;;
	*) _vm_usage >&2; exit 2 ;;
	esac
fi
