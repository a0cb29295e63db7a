# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash
#
# nfs-common.sh: the world shared by bench/nfs-bench.sh and
# bench/nfs-read-fraction.sh, sourced by both (not run on its own):
#
#   - one ext4 loop image in a temp dir, mounted as the backing directory;
#   - lacunafs mounted over it (for lacunad, and for Ganesha's "lfs" export);
#   - lacunad exporting the lacunafs mount as the NFSv4 root (fsid=root,
#     no_root_squash, insecure, loopback clients only: the --export mode);
#   - NFS-Ganesha 4.3 instances with FSAL VFS, each exporting one directory
#     as the NFSv4 root (Pseudo = /), no root squash, NFSv4.0-4.2 over TCP,
#     graceless, with their recovery directory in the temp dir;
#   - medians, rates, CPU ticks of a PID;
#   - nb_guarded: a measurement run again when someone dropped the page
#     cache while it ran (other tests on the machine do).
#
# Every daemon runs in the foreground under setsid; nb_cleanup (the EXIT
# trap) stops them by their PIDs, unmounts what was mounted, and removes
# the temp dir. Only PIDs started here are signalled. The caller sets
# NB_NAME (message prefix) and calls nb_init first.

set -u
export LC_ALL=C

NB_TMP=""
NB_BACKING=""
NB_MNT=""
NB_LFS_PID=""
NB_SINK=""
NB_BG_PID=""
declare -A NB_PID NB_PORT
NB_SERVERS=()
NB_PORT_NEXT=${NB_PORT_BASE:-26049}

nb_die() {
	echo "$NB_NAME: $*" >&2
	exit 1
}

nb_log() {
	printf '# %s\n' "$*" >&2
}

# nb_stop_pid PID: TERM it, wait up to 5 s, then KILL it; reap it.
nb_stop_pid() {
	local pid=$1 i
	[ -n "$pid" ] || return 0
	kill -TERM "$pid" 2>/dev/null
	for ((i = 0; i < 100; i++)); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.05
	done
	kill -KILL "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
}

# shellcheck disable=SC2317 # the EXIT trap
nb_cleanup() {
	local rc=$? s i
	trap - EXIT INT TERM
	if [ -n "$NB_BG_PID" ]; then
		kill -INT "$NB_BG_PID" 2>/dev/null
		wait "$NB_BG_PID" 2>/dev/null
	fi
	for s in "${NB_SERVERS[@]}"; do
		nb_stop_pid "${NB_PID[$s]:-}"
	done
	if [ -n "$NB_MNT" ] && mountpoint -q "$NB_MNT"; then
		fusermount3 -u "$NB_MNT" 2>/dev/null || umount -l "$NB_MNT" 2>/dev/null
	fi
	if [ -n "$NB_LFS_PID" ]; then
		for ((i = 0; i < 100; i++)); do
			kill -0 "$NB_LFS_PID" 2>/dev/null || break
			sleep 0.05
		done
		nb_stop_pid "$NB_LFS_PID"
	fi
	if [ -n "$NB_SINK" ] && mountpoint -q "$NB_SINK"; then
		umount "$NB_SINK" 2>/dev/null || umount -l "$NB_SINK" 2>/dev/null
	fi
	if [ -n "$NB_BACKING" ] && mountpoint -q "$NB_BACKING"; then
		umount "$NB_BACKING" 2>/dev/null || umount -l "$NB_BACKING" 2>/dev/null
	fi
	[ -n "$NB_TMP" ] && rm -rf "$NB_TMP"
	exit "$rc"
}

nb_init() {
	[ "$(id -u)" = 0 ] || nb_die "must run as root (loop devices, mounts)"
	NB_TMP=$(mktemp -d "${TMPDIR:-/tmp}/lacuna-nfsbench.XXXXXX") || nb_die "mktemp failed"
	chmod 755 "$NB_TMP"
	trap nb_cleanup EXIT
	trap 'echo "$NB_NAME: interrupted" >&2; exit 130' INT TERM
}

# nb_require CMD...: each must be installed.
nb_require() {
	local c
	for c in "$@"; do
		command -v "$c" >/dev/null || nb_die "$c not found${NB_PKG[$c]:+ (package ${NB_PKG[$c]})}"
	done
}
declare -A NB_PKG=([fusermount3]=fuse3 [mkfs.ext4]=e2fsprogs [nfs-cp]=libnfs-utils
	[ganesha.nfsd]="nfs-ganesha nfs-ganesha-vfs" [ss]=iproute2 [perf]=linux-perf)

# nb_make_backing IMAGE_MIB: ext4 loop image mounted at $NB_TMP/backing.
nb_make_backing() {
	truncate -s "${1}M" "$NB_TMP/fs.img" || nb_die "truncate $NB_TMP/fs.img"
	mkfs.ext4 -q -F "$NB_TMP/fs.img" >/dev/null 2>&1 || nb_die "mkfs.ext4 failed"
	NB_BACKING=$NB_TMP/backing
	mkdir -p "$NB_BACKING"
	mount -o loop "$NB_TMP/fs.img" "$NB_BACKING" || nb_die "mount -o loop $NB_TMP/fs.img"
	chmod 755 "$NB_BACKING"
}

# nb_make_sink MIB: a tmpfs of MIB MiB at $NB_TMP/sink (nfs-cp's local files).
nb_make_sink() {
	NB_SINK=$NB_TMP/sink
	mkdir -p "$NB_SINK"
	mount -t tmpfs -o "size=${1}m,mode=755" nb-sink "$NB_SINK" || nb_die "mount tmpfs $NB_SINK"
}

# nb_mount_lacunafs LACUNAFS: lacunafs over the backing dir at $NB_TMP/mnt.
nb_mount_lacunafs() {
	local i
	NB_MNT=$NB_TMP/mnt
	mkdir -p "$NB_MNT"
	env -u LACUNA_TEST_DISABLE_RANGELOCK setsid "$1" -f "$NB_BACKING" "$NB_MNT" \
		>"$NB_TMP/lacunafs.log" 2>&1 &
	NB_LFS_PID=$!
	for ((i = 0; i < 200; i++)); do
		mountpoint -q "$NB_MNT" && return 0
		kill -0 "$NB_LFS_PID" 2>/dev/null || break
		sleep 0.05
	done
	cat "$NB_TMP/lacunafs.log" >&2
	nb_die "lacunafs did not mount $NB_MNT"
}

# nb_free_port: the next port from NB_PORT_NEXT on that nobody listens on.
nb_free_port() {
	local p
	for ((p = NB_PORT_NEXT; p < NB_PORT_NEXT + 200; p++)); do
		if ! ss -Hltn "sport = :$p" | grep -q .; then
			NB_PORT_NEXT=$((p + 1))
			echo "$p"
			return 0
		fi
	done
	nb_die "no free TCP port from $NB_PORT_NEXT"
}

# nb_wait_listen NAME: until its port listens (or it dies, or 20 s pass).
nb_wait_listen() {
	local s=$1 i
	for ((i = 0; i < 200; i++)); do
		ss -Hltn "sport = :${NB_PORT[$s]}" | grep -q . && return 0
		if ! kill -0 "${NB_PID[$s]}" 2>/dev/null; then
			tail -n 20 "$NB_TMP/$s.log" >&2
			nb_die "$s exited before listening on port ${NB_PORT[$s]}"
		fi
		sleep 0.1
	done
	tail -n 20 "$NB_TMP/$s.log" >&2
	nb_die "$s does not listen on 127.0.0.1:${NB_PORT[$s]}"
}

# nb_start_lacunad NAME LACUNAD DIR [THREADS]: lacunad exporting DIR as "/".
# insecure: nfs_readbench calls from any port, and Ganesha (Privileged_Port
# false by default) takes that too. NB_LACUNAD_ARGS (an array): more
# arguments for lacunad.
NB_LACUNAD_ARGS=()
nb_start_lacunad() {
	local s=$1 bin=$2 dir=$3 threads=${4:-}
	NB_PORT[$s]=$(nb_free_port)
	NB_SERVERS+=("$s")
	setsid "$bin" --export "$dir" --export-options no_root_squash,fsid=root,insecure \
		--listen "127.0.0.1:${NB_PORT[$s]}" ${threads:+--threads "$threads"} -f \
		${NB_LACUNAD_ARGS[@]+"${NB_LACUNAD_ARGS[@]}"} \
		--state-dir "$NB_TMP/$s.state" \
		</dev/null >"$NB_TMP/$s.log" 2>&1 &
	NB_PID[$s]=$!
	nb_wait_listen "$s"
}

# nb_start_ganesha NAME DIR: ganesha.nfsd exporting DIR as "/".
nb_start_ganesha() {
	local s=$1 dir=$2 conf=$NB_TMP/$1.conf
	NB_PORT[$s]=$(nb_free_port)
	NB_SERVERS+=("$s")
	mkdir -p "$NB_TMP/$s.recovery"
	cat >"$conf" <<EOF
NFS_CORE_PARAM { Protocols = 4; NFS_Port = ${NB_PORT[$s]}; Bind_addr = 127.0.0.1;
	Enable_NLM = false; Enable_RQUOTA = false; }
NFSv4 { Graceless = true; Minor_Versions = 0, 1, 2; RecoveryBackend = fs;
	RecoveryRoot = "$NB_TMP/$s.recovery"; }
NFS_KRB5 { Active_krb5 = false; }
EXPORT { Export_Id = 1; Path = "$dir"; Pseudo = /; Access_Type = RW;
	Squash = No_Root_Squash; SecType = sys; Protocols = 4; Transports = TCP;
	FSAL { Name = VFS; } }
EOF
	setsid ganesha.nfsd -F -f "$conf" -L "$NB_TMP/$s.log" -p "$NB_TMP/$s.pid" \
		</dev/null >/dev/null 2>&1 &
	NB_PID[$s]=$!
	nb_wait_listen "$s"
}

# nb_ticks PID: user+system CPU ticks of PID (all threads) so far.
nb_ticks() {
	[ -r "/proc/$1/stat" ] || {
		echo 0
		return
	}
	sed 's/.*) //' "/proc/$1/stat" | awk '{ print $12 + $13 }'
}
# shellcheck disable=SC2034 # used by the scripts that source this
NB_CLK_TCK=$(getconf CLK_TCK)

# nb_median: median of the numbers on stdin (one per line or space separated).
nb_median() {
	tr ' ' '\n' | sed '/^$/d' | sort -g |
		awk '{ v[NR] = $1 } END {
			if (NR == 0) print "";
			else if (NR % 2) print v[(NR + 1) / 2];
			else printf "%.3f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# nb_field KEY: value of KEY=... on each line of stdin.
nb_field() {
	awk -v k="$1" '{ for (i = 1; i <= NF; i++) if (index($i, k "=") == 1) print substr($i, length(k) + 2) }'
}

nb_calc() {
	awk "BEGIN { printf \"%.3f\", $1 }"
}

nb_now_ns() {
	date +%s%N
}

# nb_parse_size 1G|512M|N: bytes
nb_parse_size() {
	local v=$1 n
	case $v in
	*[gG]) n=$((${v%?} * 1024 * 1024 * 1024)) ;;
	*[mM]) n=$((${v%?} * 1024 * 1024)) ;;
	*[kK]) n=$((${v%?} * 1024)) ;;
	*) n=$v ;;
	esac
	[[ $n =~ ^[1-9][0-9]*$ ]] || nb_die "bad size '$v'"
	echo "$n"
}

# nb_size_mib SIZE: SIZE_B and SIZE_MIB of a --size that must be a whole
# number of MiB, at least 16
nb_size_mib() {
	SIZE_B=$(nb_parse_size "$1")
	SIZE_MIB=$((SIZE_B / 1048576))
	if [ "$((SIZE_MIB * 1048576))" != "$SIZE_B" ] || [ "$SIZE_MIB" -lt 16 ]; then
		nb_die "--size must be a whole number of MiB, at least 16"
	fi
}

# nb_drops: how many times anyone has written drop_caches (page cache) so far.
nb_drops() {
	awk '$1 == "drop_pagecache" { print $2 }' /proc/vmstat
}

# nb_warm FILE...: read each file, so that its pages are cached again if
# someone dropped them (cheap when they are cached).
nb_warm() {
	local f
	for f in "$@"; do
		cat "$f" >/dev/null || nb_die "reading $f failed"
	done
}

# nb_guarded OUTFILE WARMFILES CMD...: run CMD (stdout to OUTFILE) after
# warming WARMFILES (space separated); if anyone dropped the page cache
# meanwhile, count it in NB_DISCARDED and run it again (at most 20 times).
# CMD may use $NB_TRY (0, 1, ...) to name what it creates.
NB_DISCARDED=0
nb_guarded() {
	local out=$1 files=$2 d0
	shift 2
	for ((NB_TRY = 0; NB_TRY < 20; NB_TRY++)); do
		# shellcheck disable=SC2086 # a list of paths without blanks
		nb_warm $files
		d0=$(nb_drops)
		"$@" >"$out" || return 1
		[ "$(nb_drops)" = "$d0" ] && return 0
		NB_DISCARDED=$((NB_DISCARDED + 1))
		nb_log "discarded a run that overlapped a drop_caches: $*"
	done
	nb_die "20 runs in a row overlapped a drop_caches (something keeps dropping caches)"
}
