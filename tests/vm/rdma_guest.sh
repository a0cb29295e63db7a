#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# lacunad and the Linux kernel client in one test VM, linked by soft-RoCE:
# the world the RPC-over-RDMA tests and benchmarks run in. The host has
# no RDMA, so here everything runs inside the guest (tests/vm/vm.sh):
#
#   veth pair v0 10.77.0.1/24 <-> v1 10.77.0.2/24, routed so that the
#   traffic between the two addresses crosses the pair, soft-RoCE devices
#   rxe0 on v0 (the server's) and rxe1 on v1 (the client's); ext4 (or XFS) on a loop device over a file
#   in the guest's tmpfs, lacunafs over it, lacunad exporting that
#   lacunafs mount to 10.77.0.0/24 (rw,no_root_squash) on TCP port 2049
#   and, with --proto rdma, RPC-over-RDMA port 20049.
#
# Host side:
#
#   rdma_guest.sh run [OPTIONS] [--] CMD [ARG...]
#       boot a VM, build that world, run CMD in it (as root, with bash),
#       tear it down, exit with CMD's status (77: cannot be had here,
#       99: the VM or the set-up failed)
#   rdma_guest.sh shell-cmd [OPTIONS] 'SHELL COMMAND'
#       the same for one shell command line, e.g.
#       rdma_guest.sh shell-cmd 'rg_mount 4.2 /tmp/m; ls -l /tmp/m; umount /tmp/m'
#
#   OPTIONS: --proto tcp|rdma   what rg_mount mounts with and whether
#                               lacunad serves RDMA (default $LT_RDMA_PROTO,
#                               else rdma)
#            --fs ext4|xfs      the backing filesystem (default ext4)
#            --fs-mib N         its size in MiB (default 512; sparse, in RAM)
#            --mem MIB, --cpus N, --timeout SECS   passed to vm.sh run
#                               (defaults 1536, 1, 900)
#            --dir DIR          the host directory shared with the guest
#                               (default: a new one, removed afterwards);
#                               it gets bin/ (the staged binaries),
#                               lacunad.conf, lacunad.log, lacunafs.log
#            --keep             keep the --dir it made; print its path
#            -v                 vm.sh's progress and timings
#   Environment: top_builddir (the build tree, default the source tree),
#   LACUNAD_ARGS (extra lacunad arguments, e.g. "--log-level debug"),
#   LACUNAD_ENV (NAME=VALUE words put in lacunad's environment only, e.g.
#   LACUNA_TEST_PLAIN_WRITE=1).
#
# The binaries (lacunad, lacunafs, liblacuna, and lacuna, lt_seekmap and
# rdma_hostile when built) are copied into DIR/bin, which is first in the
# guest's PATH and LD_LIBRARY_PATH: the guest sees the host's root
# read-only but not its /tmp. CMD runs with:
#
#   RG_PROTO      tcp or rdma         RG_SERVER   10.77.0.1
#   RG_PORT       2049 or 20049       RG_EXPORT   the exported path
#   RG_BACKING    the ext4/XFS mount  RG_DIR      the shared directory
#   RG_LACUNAD_PID, RG_LACUNAFS_PID   RG_MOUNT_OPTS  the NFS mount options
#   RG_RXE        ok, or why soft-RoCE is missing (tcp only)
#   rg_mount VERS MNT [EXTRA_OPTS]    mount the export with RG_MOUNT_OPTS
#   rg_drop                           sync and drop every cache
#   rg_restart_lacunad crash|stop     kill lacunad (-9) or stop it (TERM),
#                                     start it again (grace, same state)
#
# After CMD, the guest prints rg_lacunad_alive=yes|no and, once it has
# sent lacunad SIGTERM, rg_lacunad_exit=STATUS; on a failure (CMD's
# status not 0, lacunad dead or exiting non-zero) it prints both logs.
# Soft-RoCE that cannot be set up is a skip (77) with --proto rdma.

RG_SELF=$(realpath "${BASH_SOURCE[0]}")

# ---- guest side ------------------------------------------------------------

RG_SERVER=10.77.0.1
RG_CLIENT=10.77.0.2

_rg_skip() {
	echo "SKIP: $*" >&2
	echo "SKIP: $*"
	exit 77
}
_rg_die() {
	echo "ERROR: rdma_guest: $*" >&2
	exit 99
}

# _rg_wire: traffic between the two addresses crosses the veth pair, as
# between two hosts, instead of the loopback device. Both addresses are
# local, so by default the kernel would route either way through lo, and
# rdma_cm would bind client and server to the same soft-RoCE device, whose
# loopback path hands each packet straight to the receiver. Here the
# local table is looked up after two rules that send each address's
# locally made traffic out of the other end of the pair (static
# neighbours, no ARP), and both ends accept packets from a local source.
# The client then talks through rxe1 and v1, the server through v0 and
# rxe0. Prints why it fails.
_rg_wire() {
	local c
	for c in all default v0 v1; do
		sysctl -qw "net.ipv4.conf.$c.accept_local=1" "net.ipv4.conf.$c.rp_filter=0" ||
			{ echo "sysctl accept_local/rp_filter on $c failed"; return 1; }
	done
	if ! { ip neigh replace "$RG_CLIENT" lladdr "$(cat /sys/class/net/v1/address)" \
			dev v0 nud permanent &&
		ip neigh replace "$RG_SERVER" lladdr "$(cat /sys/class/net/v0/address)" \
			dev v1 nud permanent &&
		ip route add "$RG_CLIENT" dev v0 src "$RG_SERVER" table 100 &&
		ip route add "$RG_SERVER" dev v1 src "$RG_CLIENT" table 101 &&
		ip rule add pref 100 to "$RG_CLIENT" iif lo lookup 100 &&
		ip rule add pref 101 to "$RG_SERVER" iif lo lookup 101 &&
		ip rule add pref 1000 lookup local && ip rule del pref 0; }; then
		echo "routing over the veth pair failed"
		return 1
	fi
	ip route get "$RG_SERVER" | grep -q "dev v1" ||
		{ echo "$RG_SERVER is not routed through v1: $(ip route get "$RG_SERVER")"; return 1; }
}

# _rg_rxe: modules, veth pair, soft-RoCE on both ends. Prints why it fails.
_rg_rxe() {
	local m
	ip link add v0 type veth peer name v1 || { echo "ip link add veth failed"; return 1; }
	# jumbo frames, as RoCE networks run: rxe's path MTU becomes 4096 (not 1024)
	if ! { ip link set v0 mtu 9000 && ip link set v1 mtu 9000; }; then
		echo "veth MTU 9000 failed"
		return 1
	fi
	if ! { ip addr add "$RG_SERVER/24" dev v0 && ip addr add "$RG_CLIENT/24" dev v1 &&
		ip link set v0 up && ip link set v1 up; }; then
		echo "veth address setup failed"
		return 1
	fi
	_rg_wire || return 1
	# crc32_generic first: rdma_rxe needs a crc32 the stock kernel only
	# requests lazily
	for m in crc32_generic rdma_rxe ib_uverbs rdma_ucm rpcrdma; do
		modprobe "$m" 2>/dev/null || { echo "modprobe $m failed"; return 1; }
	done
	command -v rdma >/dev/null || { echo "rdma (iproute2) not installed"; return 1; }
	rdma link add rxe0 type rxe netdev v0 2>/dev/null ||
		{ echo "rdma link add rxe0 type rxe netdev v0 failed"; return 1; }
	rdma link add rxe1 type rxe netdev v1 2>/dev/null ||
		{ echo "rdma link add rxe1 type rxe netdev v1 failed"; return 1; }
	if command -v ibv_devinfo >/dev/null; then
		ibv_devinfo -d rxe0 2>/dev/null | grep -q PORT_ACTIVE ||
			{ echo "ibv_devinfo: rxe0 port not active"; return 1; }
	else
		echo "# ibv_devinfo not installed (ibverbs-utils): rxe0 not checked with verbs" >&2
	fi
	return 0
}

# _rg_wait_tcp PORT PID: wait up to 15 s for PID to listen on TCP PORT.
_rg_wait_tcp() {
	local i
	for ((i = 0; i < 300; i++)); do
		ss -Hltnp "sport = :$1" 2>/dev/null | grep -q "pid=$2," && return 0
		kill -0 "$2" 2>/dev/null || return 1
		sleep 0.05
	done
	return 1
}

# _rg_wait_rdma PORT PID: wait up to 15 s for an RDMA CM listener on PORT
# (rdma resource lists cm_ids; without it, a fixed pause).
_rg_wait_rdma() {
	local i
	for ((i = 0; i < 150; i++)); do
		kill -0 "$2" 2>/dev/null || return 1
		# "src-addr 0.0.0.0:PORT" (or "src-port PORT") on a LISTEN line
		rdma resource show cm_id 2>/dev/null | grep LISTEN | grep -qE "[: ]$1( |\$)" && return 0
		sleep 0.1
	done
	return 1
}

# rg_restart_lacunad crash|stop: stop lacunad (SIGKILL, or SIGTERM) and
# start it again with the same configuration and state directory, wait
# until it serves; sets RG_LACUNAD_PID. Its exit status goes to
# RG_DIR/lacunad.exit, its PID to RG_DIR/lacunad.pid (for the teardown).
rg_restart_lacunad() {
	local i
	if [ "$1" = crash ]; then kill -KILL "$RG_LACUNAD_PID"; else kill -TERM "$RG_LACUNAD_PID"; fi
	for ((i = 0; i < 300; i++)); do
		kill -0 "$RG_LACUNAD_PID" 2>/dev/null || break
		sleep 0.1
	done
	rm -f "$RG_DIR/lacunad.pid" "$RG_DIR/lacunad.exit"
	# shellcheck disable=SC2016 # expanded by that bash
	setsid bash -c 'env ${LACUNAD_ENV:-} "$0" --config "$1" -f ${LACUNAD_ARGS:-} </dev/null \
		>>"$2" 2>&1 & echo $! >"$3.pid"; wait $!; echo $? >"$3.exit"' \
		"$RG_DIR/bin/lacunad" "$RG_DIR/lacunad.conf" "$RG_DIR/lacunad.log" "$RG_DIR/lacunad" &
	for ((i = 0; i < 100; i++)); do
		[ -s "$RG_DIR/lacunad.pid" ] && break
		sleep 0.05
	done
	RG_LACUNAD_PID=$(cat "$RG_DIR/lacunad.pid")
	_rg_wait_tcp 2049 "$RG_LACUNAD_PID" || return 1
	[ "$RG_PROTO" != rdma ] || _rg_wait_rdma 20049 "$RG_LACUNAD_PID"
}

rg_drop() {
	sync
	echo 3 >/proc/sys/vm/drop_caches
}

rg_mount() { # rg_mount VERS MNT [EXTRA_OPTS]
	mkdir -p "$2"
	# (a proto=rdma mount with no listener retries until killed)
	timeout -k 10 120 mount -t nfs -o "vers=$1,$RG_MOUNT_OPTS${3:+,$3}" "$RG_SERVER:$RG_EXPORT" "$2"
}

_rg_teardown() {
	local m i st
	# NFS mounts CMD left behind
	for m in $(awk '$3 ~ /^nfs/ { print $2 }' /proc/mounts | tac); do
		umount -f "$m" 2>/dev/null || umount -l "$m" 2>/dev/null
	done
	if [ -s "$RG_DIR/lacunad.pid" ]; then
		# restarted by CMD (rg_restart_lacunad): not our child
		RG_LACUNAD_PID=$(cat "$RG_DIR/lacunad.pid")
		if kill -0 "$RG_LACUNAD_PID" 2>/dev/null; then
			echo "rg_lacunad_alive=yes"
			kill -TERM "$RG_LACUNAD_PID"
			for ((i = 0; i < 150; i++)); do
				[ -s "$RG_DIR/lacunad.exit" ] && break
				sleep 0.1
			done
			st=$(cat "$RG_DIR/lacunad.exit" 2>/dev/null)
			if [ -z "$st" ]; then
				kill -KILL "$RG_LACUNAD_PID"
				st=killed
			fi
			echo "rg_lacunad_exit=$st"
			[ "$st" = 0 ] || RG_FAILED=1
		else
			echo "rg_lacunad_alive=no (exit status $(cat "$RG_DIR/lacunad.exit" 2>/dev/null))"
			RG_FAILED=1
		fi
	elif [ -n "${RG_LACUNAD_PID:-}" ]; then
		if kill -0 "$RG_LACUNAD_PID" 2>/dev/null; then
			echo "rg_lacunad_alive=yes"
			kill -TERM "$RG_LACUNAD_PID"
			for ((i = 0; i < 150; i++)); do
				kill -0 "$RG_LACUNAD_PID" 2>/dev/null || break
				sleep 0.1
			done
			if kill -0 "$RG_LACUNAD_PID" 2>/dev/null; then
				kill -KILL "$RG_LACUNAD_PID"
				st=killed
			fi
			wait "$RG_LACUNAD_PID" 2>/dev/null
			st=${st:-$?}
			echo "rg_lacunad_exit=$st"
			[ "$st" = 0 ] || RG_FAILED=1
		else
			wait "$RG_LACUNAD_PID" 2>/dev/null
			echo "rg_lacunad_alive=no (exit status $?)"
			RG_FAILED=1
		fi
	fi
	if [ -n "${RG_LACUNAFS_PID:-}" ]; then
		fusermount3 -u "$RG_EXPORT" 2>/dev/null || umount -l "$RG_EXPORT" 2>/dev/null
		for ((i = 0; i < 100; i++)); do
			kill -0 "$RG_LACUNAFS_PID" 2>/dev/null || break
			sleep 0.05
		done
		kill -KILL "$RG_LACUNAFS_PID" 2>/dev/null
	fi
	mountpoint -q "$RG_BACKING" 2>/dev/null && umount "$RG_BACKING"
}

_rg_guest() {
	local bin=$RG_DIR/bin w rc st

	if [ ! -x "$bin/lacunad" ] || [ ! -x "$bin/lacunafs" ]; then
		_rg_die "no staged binaries in $bin"
	fi
	export LD_LIBRARY_PATH="$bin${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
	export PATH="$bin:$PATH"
	for m in fuse loop; do
		modprobe "$m" || _rg_die "modprobe $m failed"
	done
	case $RG_FS in
	ext4) modprobe ext4 || _rg_die "modprobe ext4 failed" ;;
	# XFS wants a crc32c implementation the module request does not load
	xfs)
		modprobe crc32c_generic 2>/dev/null
		modprobe xfs || _rg_die "modprobe xfs failed"
		;;
	*) _rg_die "--fs must be ext4 or xfs" ;;
	esac

	RG_RXE=ok
	if ! w=$(_rg_rxe); then
		[ "$RG_PROTO" = rdma ] && _rg_skip "soft-RoCE cannot be set up in the guest: $w"
		RG_RXE=$w
		echo "# soft-RoCE unavailable ($w); serving TCP only" >&2
		# the veth pair may still be there: the TCP path needs only it
		ip -br addr show v0 2>/dev/null | grep -q "$RG_SERVER" ||
			_rg_die "no veth pair: $w"
	fi

	RG_BACKING=/tmp/rg/backing
	RG_EXPORT=/tmp/rg/export
	mkdir -p "$RG_BACKING" "$RG_EXPORT"
	truncate -s "${RG_FS_MIB}M" /tmp/rg/fs.img || _rg_die "truncate fs.img failed"
	case $RG_FS in
	ext4) mkfs.ext4 -q -F /tmp/rg/fs.img >/dev/null 2>&1 || _rg_die "mkfs.ext4 failed" ;;
	xfs) mkfs.xfs -q -f /tmp/rg/fs.img >/dev/null 2>&1 || _rg_die "mkfs.xfs failed" ;;
	esac
	# discard: blocks freed in the filesystem leave the guest's RAM
	mount -o loop,discard /tmp/rg/fs.img "$RG_BACKING" || _rg_die "mount -o loop fs.img failed"
	chmod 755 "$RG_BACKING"

	trap _rg_teardown EXIT
	setsid "$bin/lacunafs" -f "$RG_BACKING" "$RG_EXPORT" </dev/null >"$RG_DIR/lacunafs.log" 2>&1 &
	RG_LACUNAFS_PID=$!
	for ((w = 0; w < 200; w++)); do
		mountpoint -q "$RG_EXPORT" && break
		kill -0 "$RG_LACUNAFS_PID" 2>/dev/null || break
		sleep 0.05
	done
	if ! mountpoint -q "$RG_EXPORT"; then
		cat "$RG_DIR/lacunafs.log" >&2
		_rg_die "lacunafs did not mount $RG_EXPORT"
	fi

	{
		echo "listen = 0.0.0.0:2049"
		echo "threads = ${RG_THREADS:-2}"
		echo "lease_time = 10"
		echo "stats_file = $RG_DIR/stats"
		echo "state_dir = $RG_DIR/state"
		if [ "$RG_PROTO" = rdma ]; then
			echo "rdma = yes"
			echo "rdma_port = 20049"
		fi
		echo "$RG_EXPORT 10.77.0.0/24(rw,no_root_squash)"
	} >"$RG_DIR/lacunad.conf"
	# shellcheck disable=SC2086 # LACUNAD_ENV and LACUNAD_ARGS are lists of words
	setsid env ${LACUNAD_ENV:-} "$bin/lacunad" --config "$RG_DIR/lacunad.conf" -f ${LACUNAD_ARGS:-} \
		</dev/null >"$RG_DIR/lacunad.log" 2>&1 &
	RG_LACUNAD_PID=$!
	if ! _rg_wait_tcp 2049 "$RG_LACUNAD_PID"; then
		sed 's/^/# lacunad: /' "$RG_DIR/lacunad.log" >&2
		_rg_die "lacunad does not listen on TCP port 2049"
	fi
	if [ "$RG_PROTO" = rdma ]; then
		RG_PORT=20049
		if ! _rg_wait_rdma 20049 "$RG_LACUNAD_PID"; then
			kill -0 "$RG_LACUNAD_PID" 2>/dev/null || {
				sed 's/^/# lacunad: /' "$RG_DIR/lacunad.log" >&2
				_rg_die "lacunad exited while starting RDMA"
			}
			echo "# no RDMA CM listener on port 20049 seen (rdma resource show cm_id)" >&2
		fi
	else
		RG_PORT=2049
	fi
	# addr=: the kernel takes the server's address from it, not from the
	# source (mount.nfs, which would fill it in, is not installed)
	RG_MOUNT_OPTS="proto=$RG_PROTO,port=$RG_PORT,addr=$RG_SERVER,soft,timeo=300,retrans=2"
	export RG_PROTO RG_PORT RG_SERVER RG_EXPORT RG_BACKING RG_DIR RG_RXE \
		RG_LACUNAD_PID RG_LACUNAFS_PID RG_MOUNT_OPTS
	export -f rg_mount rg_drop rg_restart_lacunad _rg_wait_tcp _rg_wait_rdma
	echo "# rdma_guest: lacunad (PID $RG_LACUNAD_PID) serves $RG_EXPORT ($RG_FS) on" \
		"$RG_SERVER port $RG_PORT ($RG_PROTO); soft-RoCE: $RG_RXE" >&2

	"$@"
	rc=$?
	RG_FAILED=0
	[ $rc = 0 ] || RG_FAILED=1
	trap - EXIT
	_rg_teardown
	if [ "$RG_FAILED" = 1 ]; then
		echo "# ---- lacunad log (last 60 lines)" >&2
		tail -n 60 "$RG_DIR/lacunad.log" | sed 's/^/# lacunad: /' >&2
		echo "# ---- lacunafs log (last 20 lines)" >&2
		tail -n 20 "$RG_DIR/lacunafs.log" | sed 's/^/# lacunafs: /' >&2
	fi
	return $rc
}

# ---- host side -------------------------------------------------------------

# _rg_stage_prog SRC DEST: copy a program; a libtool wrapper's real binary
# is in .libs beside it.
_rg_stage_prog() {
	local src=$1 real
	real=$src
	if [ -f "$src" ] && ! head -c 4 "$src" | grep -q 'ELF'; then
		real="$(dirname "$src")/.libs/$(basename "$src")"
	fi
	[ -f "$real" ] || { echo "ERROR: $src not built (no $real)" >&2; return 1; }
	cp "$real" "$2"
}

# RG_TOOLS: the client and test programs staged beside the daemons when
# they are built (a test that needs one checks that it is built)
RG_TOOLS="tools/lacuna tests/tools/lt_seekmap tests/tools/rdma_hostile"

# rg_stage DIR: put lacunad, lacunafs, liblacuna and whichever of
# RG_TOOLS are built into DIR/bin.
rg_stage() {
	local b=${top_builddir:-$(dirname "$RG_SELF")/../..} l
	mkdir -p "$1/bin" || return 1
	_rg_stage_prog "$b/gateway/lacunad" "$1/bin/lacunad" || return 1
	_rg_stage_prog "$b/fusefs/lacunafs" "$1/bin/lacunafs" || return 1
	for l in "$b"/lib/.libs/liblacuna.so*; do
		[ -e "$l" ] && cp -P "$l" "$1/bin/"
	done
	for l in $RG_TOOLS; do
		[ -e "$b/$l" ] || continue
		_rg_stage_prog "$b/$l" "$1/bin/${l##*/}" || return 1
	done
	cp "$RG_SELF" "$1/rdma_guest.sh"
}

# rg_lacunad_rdma: 0 when the build's lacunad has the RDMA transport;
# else 1 with the reason on stdout.
rg_lacunad_rdma() {
	local b=${top_builddir:-$(dirname "$RG_SELF")/../..}
	if ! grep -q '^#define HAVE_RDMA 1' "$b/config.h" 2>/dev/null; then
		echo "lacunad built without RDMA (no HAVE_RDMA in $b/config.h: libibverbs-dev, librdmacm-dev)"
		return 1
	fi
	return 0
}

_rg_usage() {
	sed -n '/^# Host side:/,/^# After CMD/p' "$RG_SELF" | sed 's/^# \{0,1\}//' | head -n -1
}

_rg_host() {
	local proto=${LT_RDMA_PROTO:-rdma} fs=ext4 fs_mib=512 mem=1536 cpus=1 timeout=900
	local dir="" keep=0 made=0 verbose=() rc vm
	vm="$(dirname "$RG_SELF")/vm.sh"
	while [ $# -gt 0 ]; do
		case $1 in
		--proto) proto=$2; shift ;;
		--fs) fs=$2; shift ;;
		--fs-mib) fs_mib=$2; shift ;;
		--mem) mem=$2; shift ;;
		--cpus) cpus=$2; shift ;;
		--timeout) timeout=$2; shift ;;
		--dir) dir=$2; shift ;;
		--keep) keep=1 ;;
		-v) verbose=(-v) ;;
		--) shift; break ;;
		-*) _rg_usage >&2; exit 2 ;;
		*) break ;;
		esac
		shift
	done
	[ $# -gt 0 ] || { _rg_usage >&2; exit 2; }
	case $proto in tcp | rdma) ;; *) echo "--proto: tcp or rdma" >&2; exit 2 ;; esac
	if [ -z "$dir" ]; then
		dir=$(mktemp -d "${TMPDIR:-/tmp}/rdma-guest.XXXXXX") || exit 99
		made=1
	fi
	mkdir -p "$dir" && chmod 755 "$dir" || exit 99
	rg_stage "$dir" || exit 99
	"$vm" run "${verbose[@]}" --share "$dir" --mem "$mem" --cpus "$cpus" --timeout "$timeout" \
		--times "$dir/times" --cwd / \
		--env "RG_DIR=$dir" --env "RG_PROTO=$proto" --env "RG_FS=$fs" \
		--env "RG_FS_MIB=$fs_mib" --env "LACUNAD_ARGS=${LACUNAD_ARGS:-}" \
		--env "LACUNAD_ENV=${LACUNAD_ENV:-}" \
		--env "RG_THREADS=${RG_THREADS:-2}" \
		-- bash "$dir/rdma_guest.sh" guest "$@"
	rc=$?
	if ((made)); then
		if ((keep)); then
			echo "# rdma_guest: kept $dir" >&2
		else
			rm -rf "$dir"
		fi
	fi
	return $rc
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
	case ${1:-} in
	run) shift; _rg_host "$@"; exit $? ;;
	shell-cmd)
		shift
		args=()
		while [ $# -gt 1 ]; do args+=("$1"); shift; done
		[ $# = 1 ] || { _rg_usage >&2; exit 2; }
		_rg_host "${args[@]}" -- bash -c "$1"
		exit $?
		;;
	guest)
		shift
		: "${RG_DIR:?}" "${RG_PROTO:=tcp}" "${RG_FS:=ext4}" "${RG_FS_MIB:=512}"
		_rg_guest "$@"
		exit $?
		;;
	*) _rg_usage >&2; exit 2 ;;
	esac
fi
