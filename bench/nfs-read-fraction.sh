#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# nfs-read-fraction.sh: how much of what one loopback TCP connection can
# carry lacunad's READ path delivers, in one run. Not a test: `make check`
# never runs it. Needs root; takes about two minutes with the defaults.
#
# World: a fresh ext4 loop image, lacunafs mounted over it, lacunad
# exporting the mount as the NFSv4 root (bench/nfs-common.sh), a --size
# (default 1 GiB) file of random bytes written on the backing directory
# and read once there, then once through lacunad with every byte compared
# to the file (nfs_readbench --verify): from then on the file sits in the
# backing page cache and in the lacunafs mount's own (lacunafs keeps it
# for read-only opens of an unchanged file).
#
# Figures (GB = 10^9 bytes), --rounds (default 3) rounds. In each, for
# every server and --depth, a pair run back to back:
#   tcp_raw         bench/tcp_raw --seconds S (default 3): a thread writes
#                   1 MiB messages on a loopback TCP connection, the main
#                   thread reads each into one buffer with recv(MSG_WAITALL)
#   NFS READ        bench/nfs_readbench --depth D --passes P (default 3):
#                   NFSv4.1, one session, one TCP connection, D READs of
#                   --size-per-read (default 1 MiB) in flight, each reply
#                   read like a tcp_raw message
# and once per round tcp_raw --framed (a record mark and 128 bytes of
# header per message, read as an RPC record is read), for information.
# Per pair, the fraction is the median READ rate of the passes over the
# tcp_raw rate taken just before them; the median over the rounds is
# shown, so that other load on the machine, which comes and goes, skews
# it as little as it can. Target: lacunad >= 50%. With --depth 1,4,16
# each depth is shown and the target is judged on the best. --servers
# ganesha-ext4 (and/or ganesha-lfs) adds NFS-Ganesha exporting the
# backing directory (or the lacunafs mount) for scale.
#
# Also shown per server: CPU seconds per GB of the server (its
# process-wide CPU clock), of lacunafs and of the client, and the CPU cost
# ratio: tcp_raw's CPU s/GB (both of its threads) over the sum of those
# three. Client, server and tcp_raw's two ends all share
# the machine's CPUs: tcp_raw copies each byte twice (send, recv), an NFS
# READ served from a buffer three times (pread into it, send, recv), so
# on a machine whose CPUs are the limit the READ path cannot reach what
# tcp_raw reaches.
#
# --perf DIR, after the figures: `perf record -g` of lacunad during one
# more nfs_readbench run, and `strace -c -f` of it during another (its
# system calls per READ), into DIR.
#
# Exit status: 0 done (target met or not), 1 usage or setup error,
# 130 interrupted.

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
NB_NAME=nfs-read-fraction
# shellcheck source=bench/nfs-common.sh
. "$SCRIPT_DIR/nfs-common.sh"

SIZE=1G
DEPTHS=16
IOSIZE=1M
PASSES=3
ROUNDS=3
SECONDS_RAW=3
SERVERS_OPT=lacunad
BUILD_DIR=""
LACUNAD=""
LACUNAFS=""
LACUNAD_THREADS=""
PERF_DIR=""

usage() {
	cat <<EOF
usage: $0 [options] [BUILD_DIR]

lacunad's pipelined NFSv4.1 READ throughput on loopback as a fraction of
raw loopback TCP throughput, measured in the same run. Needs root. The
comment at the top of this script explains every figure.

  BUILD_DIR              build directory with gateway/lacunad,
                         fusefs/lacunafs, bench/nfs_readbench and
                         bench/tcp_raw (default: \$top_builddir, else the
                         directory above this script)
  --size N[K|M|G]        file size (default 1G)
  --depth LIST           READs in flight, comma-separated (default 16)
  --size-per-read N      bytes per READ (default 1M)
  --passes P             passes over the file per nfs_readbench run (default 3)
  --rounds N             rounds of tcp_raw + nfs_readbench pairs (default 3)
  --seconds S            length of each tcp_raw run (default 3)
  --servers LIST         lacunad, ganesha-ext4, ganesha-lfs (default lacunad)
  --lacunad PATH         the lacunad binary (default BUILD_DIR/gateway/lacunad)
  --lacunafs PATH        the lacunafs binary (default BUILD_DIR/fusefs/lacunafs)
  --lacunad-threads N    lacunad --threads N (default: lacunad's own)
  --port-base P          first TCP port tried for the servers (default 26049)
  --perf DIR             profile lacunad (perf, strace) after the figures
  -h, --help             this help
EOF
}

while [ $# -gt 0 ]; do
	case $1 in
	-h | --help)
		usage
		exit 0
		;;
	--size) SIZE=${2:?}; shift ;;
	--size=*) SIZE=${1#*=} ;;
	--depth) DEPTHS=${2:?}; shift ;;
	--depth=*) DEPTHS=${1#*=} ;;
	--size-per-read) IOSIZE=${2:?}; shift ;;
	--size-per-read=*) IOSIZE=${1#*=} ;;
	--passes) PASSES=${2:?}; shift ;;
	--passes=*) PASSES=${1#*=} ;;
	--rounds) ROUNDS=${2:?}; shift ;;
	--rounds=*) ROUNDS=${1#*=} ;;
	--seconds) SECONDS_RAW=${2:?}; shift ;;
	--seconds=*) SECONDS_RAW=${1#*=} ;;
	--servers) SERVERS_OPT=${2:?}; shift ;;
	--servers=*) SERVERS_OPT=${1#*=} ;;
	--lacunad) LACUNAD=${2:?}; shift ;;
	--lacunad=*) LACUNAD=${1#*=} ;;
	--lacunafs) LACUNAFS=${2:?}; shift ;;
	--lacunafs=*) LACUNAFS=${1#*=} ;;
	--lacunad-threads) LACUNAD_THREADS=${2:?}; shift ;;
	--lacunad-threads=*) LACUNAD_THREADS=${1#*=} ;;
	--port-base) NB_PORT_NEXT=${2:?}; shift ;;
	--port-base=*) NB_PORT_NEXT=${1#*=} ;;
	--perf) PERF_DIR=${2:?}; shift ;;
	--perf=*) PERF_DIR=${1#*=} ;;
	-*)
		usage >&2
		exit 1
		;;
	*)
		[ -z "$BUILD_DIR" ] || nb_die "more than one BUILD_DIR given"
		BUILD_DIR=$1
		;;
	esac
	shift
done

SIZE_B=$(nb_parse_size "$SIZE")
SIZE_MIB=$(((SIZE_B + 1048575) / 1048576))
IOSIZE_B=$(nb_parse_size "$IOSIZE")
for v in PASSES ROUNDS SECONDS_RAW; do
	[[ ${!v} =~ ^[1-9][0-9]*$ ]] || nb_die "$v must be a positive integer"
done
IFS=, read -r -a DLIST <<<"$DEPTHS"
for d in "${DLIST[@]}"; do
	[[ $d =~ ^[1-9][0-9]*$ ]] || nb_die "--depth: '$d' is not a positive integer"
done
IFS=, read -r -a SERVERS <<<"$SERVERS_OPT"
[ ${#SERVERS[@]} -gt 0 ] || nb_die "--servers is empty"
has_server() {
	local s
	for s in "${SERVERS[@]}"; do
		[ "$s" = "$1" ] && return 0
	done
	return 1
}
for s in "${SERVERS[@]}"; do
	case $s in
	lacunad | ganesha-ext4 | ganesha-lfs) ;;
	*) nb_die "unknown server '$s' in --servers" ;;
	esac
done

: "${top_builddir:=$(cd "$SCRIPT_DIR/.." && pwd)}"
[ -n "$BUILD_DIR" ] && top_builddir=$BUILD_DIR
[ -n "$LACUNAD" ] || LACUNAD=$top_builddir/gateway/lacunad
[ -n "$LACUNAFS" ] || LACUNAFS=$top_builddir/fusefs/lacunafs
NFSRB=$top_builddir/bench/nfs_readbench
TCPRAW=$top_builddir/bench/tcp_raw

# ------------------------------------------------------------ requirements

nb_require mkfs.ext4 mount umount mountpoint setsid ss awk
for b in "$NFSRB" "$TCPRAW"; do
	[ -x "$b" ] || nb_die "$b not built (make -C $top_builddir bench/nfs_readbench bench/tcp_raw)"
done
if has_server lacunad || has_server ganesha-lfs; then
	[ -c /dev/fuse ] || nb_die "no /dev/fuse"
	nb_require fusermount3
	[ -x "$LACUNAFS" ] || nb_die "lacunafs not built at $LACUNAFS"
fi
if has_server lacunad; then
	[ -x "$LACUNAD" ] ||
		nb_die "lacunad not built at $LACUNAD (give BUILD_DIR or --lacunad, or --servers ganesha-ext4)"
fi
if has_server ganesha-ext4 || has_server ganesha-lfs; then
	nb_require ganesha.nfsd
fi
if [ -n "$PERF_DIR" ]; then
	has_server lacunad || nb_die "--perf profiles lacunad: keep it in --servers"
	nb_require perf strace
	mkdir -p "$PERF_DIR" || nb_die "cannot make $PERF_DIR"
	PERF_DIR=$(cd "$PERF_DIR" && pwd)
fi

# ------------------------------------------------------------ world

nb_init
nb_make_backing $((SIZE_MIB + 1024))
if has_server lacunad || has_server ganesha-lfs; then
	nb_mount_lacunafs "$LACUNAFS"
fi
FILE=read.dat
nb_log "writing the $SIZE_MIB MiB read file"
head -c "$SIZE_B" /dev/urandom >"$NB_BACKING/$FILE" || nb_die "writing $NB_BACKING/$FILE failed"
sync
cat "$NB_BACKING/$FILE" >/dev/null

for s in "${SERVERS[@]}"; do
	case $s in
	lacunad) nb_start_lacunad lacunad "$LACUNAD" "$NB_MNT" "$LACUNAD_THREADS" ;;
	ganesha-ext4) nb_start_ganesha ganesha-ext4 "$NB_BACKING" ;;
	ganesha-lfs) nb_start_ganesha ganesha-lfs "$NB_MNT" ;;
	esac
	nb_log "$s on port ${NB_PORT[$s]}: one read, every byte checked"
	"$NFSRB" --port "${NB_PORT[$s]}" --passes 1 --size-per-read "$IOSIZE_B" \
		--verify "$NB_BACKING/$FILE" --label warm "/$FILE" >"$NB_TMP/warm.$s" 2>"$NB_TMP/warm.$s.err" ||
		nb_die "$s: nfs_readbench --verify failed: $(tail -n 3 "$NB_TMP/warm.$s.err")"
done

# ------------------------------------------------------------ rounds

# what nb_guarded reads before each pair, to refill the page caches the
# servers read from if someone dropped them
WARM="$NB_BACKING/$FILE"
[ -n "$NB_MNT" ] && WARM+=" $NB_MNT/$FILE"

# pair SERVER DEPTH: tcp_raw, then nfs_readbench, and lacunafs's CPU ticks
# shellcheck disable=SC2317 # run through nb_guarded
pair() {
	local s=$1 d=$2 l0 l1
	"$TCPRAW" --seconds "$SECONDS_RAW" || nb_die "tcp_raw failed"
	l0=$(nb_ticks "$NB_LFS_PID")
	"$NFSRB" --port "${NB_PORT[$s]}" --depth "$d" --passes "$PASSES" \
		--size-per-read "$IOSIZE_B" --pid "${NB_PID[$s]}" --label "$s,$d" \
		"/$FILE" 2>"$NB_TMP/rb.err" ||
		nb_die "$s: nfs_readbench failed: $(tail -n 3 "$NB_TMP/rb.err")"
	l1=$(nb_ticks "$NB_LFS_PID")
	echo "lfs_ticks $((l1 - l0))"
}

RESULTS=$NB_TMP/results
: >"$RESULTS"
declare -A LFS_TICKS FRAC
LOAD0=$(cut -d' ' -f1-3 /proc/loadavg)
awk -v l="${LOAD0%% *}" 'BEGIN { exit !(l > 0.5) }' &&
	echo "$NB_NAME: warning: load average $LOAD0 at the start: figures will be noisy" >&2
for ((r = 1; r <= ROUNDS; r++)); do
	nb_log "round $r/$ROUNDS: tcp_raw --framed"
	"$TCPRAW" --seconds "$SECONDS_RAW" --framed | sed 's/^tcp_raw/tcp_framed/' >>"$RESULTS" ||
		nb_die "tcp_raw --framed failed"
	for s in "${SERVERS[@]}"; do
		for d in "${DLIST[@]}"; do
			# each NFS figure is divided by the raw figure taken right before it
			nb_log "round $r/$ROUNDS: tcp_raw, then $s at depth $d"
			nb_guarded "$NB_TMP/pair" "$WARM" pair "$s" "$d"
			raw=$(grep '^tcp_raw' "$NB_TMP/pair")
			out=$(grep -v '^tcp_raw' "$NB_TMP/pair" | grep -v '^lfs_ticks')
			echo "raw,$s,$d ${raw#tcp_raw }" >>"$RESULTS"
			echo "$out" >>"$RESULTS"
			LFS_TICKS[$s,$d]+="$(awk '$1 == "lfs_ticks" { print $2 }' "$NB_TMP/pair") "
			g=$(echo "$out" | nb_field GBps | nb_median)
			FRAC[$s,$d]+="$(nb_calc "100 * $g / $(echo "$raw" | nb_field GBps)") "
		done
	done
done

# ------------------------------------------------------------ report

med() { # label field
	awk -v l="$1" '$1 == l' "$RESULTS" | nb_field "$2" | nb_median
}
# per_gb LABEL_REGEX FIELD: median over those lines of FIELD / bytes (ns/B = s/GB)
per_gb() {
	awk -v l="$1" -v k="$2" '$1 ~ l {
		for (i = 1; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
		printf "%.4f\n", f[k] / f["bytes"] }' "$RESULTS" | nb_median
}
RAW=$(awk '$1 ~ /^raw,/' "$RESULTS" | nb_field GBps | nb_median)
RAW_CPU=$(per_gb '^raw,' client_cpu_ns)
FRAMED=$(med tcp_framed GBps)

echo "nfs-read-fraction: $SIZE_MIB MiB cached file, $IOSIZE_B-byte READs; $ROUNDS rounds, medians; GB = 10^9 bytes"
echo "  kernel $(uname -r), $(nproc) CPUs; client and server share them"
for s in "${SERVERS[@]}"; do
	case $s in
	lacunad) echo "  lacunad: $LACUNAD --export <lacunafs mount>${LACUNAD_THREADS:+ --threads $LACUNAD_THREADS}" ;;
	ganesha-ext4) echo "  ganesha-ext4: NFS-Ganesha, FSAL VFS on the backing ext4 directory" ;;
	ganesha-lfs) echo "  ganesha-lfs: NFS-Ganesha, FSAL VFS on the lacunafs mount" ;;
	esac
done
printf '  raw loopback TCP (tcp_raw, 1 MiB messages): %.3f GB/s, %.2f CPU s/GB (both ends);\n' \
	"$RAW" "$RAW_CPU"
printf '  framed like RPC records: %.3f GB/s\n' "$FRAMED"
echo
printf '  %-13s %5s %8s %8s %7s %9s %9s %9s %9s\n' "" "" READ raw READ/ server lacunafs client "CPU/GB"
printf '  %-13s %5s %8s %8s %7s %9s %9s %9s %9s\n' server depth GB/s GB/s raw "CPU s/GB" \
	"CPU s/GB" "CPU s/GB" "raw/NFS"
BEST=""
BEST_D=""
for s in "${SERVERS[@]}"; do
	for d in "${DLIST[@]}"; do
		l="$s,$d"
		g=$(med "$l" GBps)
		rawl=$(med "raw,$l" GBps)
		frac=$(echo "${FRAC[$l]}" | nb_median)
		scpu=$(per_gb "^$l\$" server_cpu_ns)
		ccpu=$(per_gb "^$l\$" client_cpu_ns)
		bytes=$(med "$l" bytes)
		lt=$(echo "${LFS_TICKS[$l]}" | nb_median)
		lcpu=$(nb_calc "($lt / $NB_CLK_TCK) / ($PASSES * $bytes / 1e9)")
		est=$(nb_calc "100 * $RAW_CPU / ($scpu + $lcpu + $ccpu)")
		printf '  %-13s %5s %8.3f %8.3f %6.1f%% %9.2f %9.2f %9.2f %8.1f%%\n' "$s" "$d" "$g" \
			"$rawl" "$frac" "$scpu" "$lcpu" "$ccpu" "$est"
		if [ "$s" = lacunad ] && { [ -z "$BEST" ] || awk "BEGIN { exit !($frac > $BEST) }"; }; then
			BEST=$frac
			BEST_D=$d
		fi
	done
done
echo
echo "  READ/raw: median over the rounds of (READ GB/s / the tcp_raw GB/s measured"
echo "  just before it). CPU/GB raw/NFS: tcp_raw's CPU seconds per GB (both ends)"
echo "  over the NFS path's (server + lacunafs + client): what a byte costs in CPU"
echo "  through NFS compared with a bare socket; it moves much less than the rates"
echo "  when other work shares the machine."
echo
if [ -n "$BEST" ]; then
	V=$(awk "BEGIN { exit !($BEST >= 50) }" && echo met || echo MISSED)
	printf 'Target: lacunad READ >= 50%% of raw loopback TCP: %s%% at depth %s: %s\n' "$BEST" "$BEST_D" "$V"
fi
echo "  pairs discarded because someone dropped the page cache meanwhile: $NB_DISCARDED"
echo "  load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"

# ------------------------------------------------------------ profile

if [ -n "$PERF_DIR" ]; then
	d=${DLIST[${#DLIST[@]} - 1]}
	nb_log "profiling lacunad (depth $d) into $PERF_DIR"
	perf record -q -g -p "${NB_PID[lacunad]}" -o "$PERF_DIR/read.data" >/dev/null 2>&1 &
	NB_BG_PID=$!
	sleep 0.5
	"$NFSRB" --port "${NB_PORT[lacunad]}" --depth "$d" --passes "$PASSES" \
		--size-per-read "$IOSIZE_B" "/$FILE" >"$PERF_DIR/read.out" 2>&1
	kill -INT "$NB_BG_PID" 2>/dev/null
	wait "$NB_BG_PID" 2>/dev/null
	NB_BG_PID=""
	perf report -q -i "$PERF_DIR/read.data" --no-children --stdio --sort dso,sym \
		--percent-limit 1 -g none 2>/dev/null | grep -v '^$' | head -30 >"$PERF_DIR/read.top.txt"
	perf report -q -i "$PERF_DIR/read.data" --no-children --stdio --sort sym \
		--percent-limit 3 -g caller,0.5,callee,function,percent 2>/dev/null |
		head -300 >"$PERF_DIR/read.callers.txt"

	strace -c -f -q -p "${NB_PID[lacunad]}" -o "$PERF_DIR/read.strace.txt" &
	NB_BG_PID=$!
	sleep 1
	"$NFSRB" --port "${NB_PORT[lacunad]}" --depth "$d" --passes 1 \
		--size-per-read "$IOSIZE_B" "/$FILE" >"$PERF_DIR/read.strace.out" 2>&1
	kill -INT "$NB_BG_PID" 2>/dev/null
	wait "$NB_BG_PID" 2>/dev/null
	NB_BG_PID=""
	calls=$(nb_field calls <"$PERF_DIR/read.strace.out")
	echo
	echo "Profile of lacunad at depth $d (perf record -g; top symbols >= 1%), in $PERF_DIR:"
	sed 's/^/    /' "$PERF_DIR/read.top.txt" | head -20
	echo "lacunad system calls per READ compound ($calls READs and the setup; strace -c -f):"
	awk 'NR > 2 && $NF != "total" && $1 !~ /^-/ { print $4, $NF }' "$PERF_DIR/read.strace.txt" |
		sort -k1 -n -r | head -10 |
		awk -v n="${calls:-1}" '{ printf "    %-18s %8d calls  %6.2f per READ\n", $2, $1, $1 / n }'
fi
exit 0
