#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# sparse-bench.sh: measure the lacunafs sparse-read ioctl against plain
# reads, on ONE freshly made loop image (ext4, or XFS with --fs xfs) with
# lacunafs mounted over it, in one run. Not a test: `make check` never
# runs it. Needs root; takes about a minute with the defaults (a few with
# --perf).
#
# The measuring program is bench/sr_bench.c, compiled by this script into
# its temp dir against the build's lib/.libs/liblacuna.so (or, without
# one or with --lib-src, with lib/liblacuna.c compiled in). The range-lock
# figures come from bench/bench_rangelock of the build (`make` builds it;
# the script runs `make bench/bench_rangelock` in the build dir if it is
# missing).
#
# 1. Dense reads (GB = 10^9 bytes). A --size-mib file (default 1 GiB) is
#    written on the backing filesystem, synced and read once there, so
#    its pages sit in the backing page cache for the whole run (checked
#    with mincore before and after). Then, CHUNK (default 1 MiB) per call:
#    (a) sparse   liblacuna ARENA mode (lacuna_sparse_read, LACUNA_READ_DATA
#                 into the registered arena): one FUSE ioctl a call, the
#                 daemon preads from the backing page cache into the arena.
#    (b) warm     pread through the mount, the mount's own page cache full:
#                 the file was read once through a read-only open, and
#                 lacunafs keeps those pages across read-only opens while
#                 the backing file is unchanged (keep_cache). No daemon.
#    (c) cold     pread through the mount with the mount's page cache empty
#                 and the backing one full: before each pass the program
#                 calls posix_fadvise(POSIX_FADV_DONTNEED) on its fd of the
#                 mount file. That empties the page cache of the FUSE inode
#                 (clean pages, which all of them are: read-only data) and
#                 touches nothing else; the backing file is another inode
#                 on another filesystem. drop_caches would empty both; a
#                 writable open or a remount would also work but depend on
#                 the daemon's cache policy or restart it. The program
#                 checks with mincore that the mount file is 0% resident
#                 when the clock starts, and the script that the backing
#                 file is still 100% resident afterwards. Every byte then
#                 crosses /dev/fuse in FUSE_READ requests of the mount's
#                 readahead size and is copied again into the caller's
#                 buffer. The daemon hands libfuse the backing fd to
#                 splice; libfuse can only do so when its pipe can grow to
#                 the reply size (fs.pipe-max-size, or CAP_SYS_RESOURCE),
#                 else it preads into a new buffer and writes that. The
#                 header line about splicing says which case applies.
#    (d) backing  pread of the backing file itself (its page cache).
#    Each repetition runs the four in a rotating order; --runs (default 5)
#    repetitions, medians shown. Each pass is one whole read of the file
#    by a fresh process; buffers and the arena are touched before the
#    clock starts. Targets: (a) >= (b) and (a) >= 1.5 x (c).
#    Also shown per case: CPU used by the reading process and by the
#    lacunafs daemon (its process CPU-time clock: all threads), in ms per
#    GB, and the cost of one bare ioctl round trip (LACUNA_IOC_INFO) and of
#    a map-only sparse read of 4 KiB (the range lock, two fstat, no data),
#    and the sparse read's time per call split into the backing pread,
#    that bare round trip, and the rest.
#    --sweep 64,256,4096 repeats (a) and (b) at those call sizes (KiB):
#    the ioctl round trip is paid per call, the page-cache copy per byte,
#    so small calls favour pread of a warm mount.
#
# 2. Map scan. A file of the same size with --extents data extents
#    (default 10,000) spaced evenly, a hole after each (the size is set
#    before writing, so XFS makes no speculative preallocation into the
#    holes), synced. Timed, medians of --runs passes of:
#    map          LACUNA_READ_MAP through the ioctl over the whole file,
#                 looping on next_offset (the table holds 504 segments a
#                 call). Target: < 50 ms.
#    seek backing SEEK_DATA/SEEK_HOLE over the backing file.
#    seek mount   the same through the mount (one FUSE_LSEEK round trip per
#                 lseek), at most 3 passes.
#    The segment counts of the map and of the backing seek must agree (a
#    warning is printed if they do not).
#
# 3. Range lock. bench/bench_rangelock run --runs times; the medians of
#    its uncontended exclusive and shared lock+unlock pairs (ns/pair,
#    target < 100) and of its pthread mutex reference.
#
# --perf DIR profiles, after the measured runs, three passes each of
# sparse, cold and warm and twenty map scans: `perf record -g` of the
# daemon and of the client (perf.data files and `perf report` top symbols
# in DIR/*.txt), then the daemon's syscalls per ioctl, counted with
# `strace -c -f` during one more sparse pass and map scan (strace slows
# them; nothing profiled is part of the figures above).
#
# Disturbances: a pass is thrown away and run again when anyone wrote
# /proc/sys/vm/drop_caches meanwhile (counted in /proc/vmstat), when a
# file that had to stay cached was not fully resident before and after,
# or when the warm/cold pass found the mount's cache other than full/empty;
# the number of such passes is printed. Other load on the CPUs is not
# detected and moves every figure: run it on an otherwise idle machine.
# The load average is printed at the start and the end.
#
# Exit status: 0 done (targets missed or not), 1 usage or setup error,
# 130 interrupted. Everything made (mounts, loop device, daemon, temp
# dir) is removed on exit by a trap; only PIDs this script started are
# signalled.

set -u
export LC_ALL=C

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SRCDIR=$(cd "$SCRIPT_DIR/.." && pwd)

FS=ext4
SIZE_MIB=1024
EXTENTS=10000
CHUNK_KIB=1024
RUNS=5
LACUNAFS=""
BUILD_DIR=""
LIB_SRC=0
PERF_DIR=""
SWEEP=""

TMP=""
BACKING=""
MNT=""
DAEMON_PID=""
BG_PID=""
RESULTS=""

usage() {
	cat <<EOF
usage: $0 [options] [BUILD_DIR]

Benchmark the lacunafs sparse-read ioctl: dense 1 MiB reads (sparse read
vs pread through the mount with its page cache warm and cold vs pread of
the backing file), a map-only scan of a file with 10,000 extents (vs
SEEK_DATA/SEEK_HOLE), and the range lock's uncontended cost. One loop
image, one lacunafs mount, one run; medians of --runs repetitions. Needs
root. The comment at the top of this script explains every figure.

  BUILD_DIR            top build directory with fusefs/lacunafs,
                       lib/.libs/liblacuna.so and bench/bench_rangelock
                       (default: \$top_builddir, else the directory above
                       this script)
  --lacunafs PATH      the lacunafs binary (default BUILD_DIR/fusefs/lacunafs)
  --fs ext4|xfs        backing filesystem (default ext4)
  --size-mib N         size of both test files in MiB (default 1024)
  --extents N          data extents of the map-scan file (default 10000)
  --chunk-kib N        bytes per read call, in KiB (default 1024)
  --runs N             repetitions; medians are shown (default 5)
  --lib-src            compile lib/liblacuna.c into sr_bench instead of
                       linking BUILD_DIR/lib/.libs/liblacuna.so
  --sweep LIST         also compare sparse read and warm pread at these
                       call sizes in KiB, e.g. 64,256,4096
  --perf DIR           afterwards, profile the daemon and the client
                       (perf record -g, strace -c); results in DIR
  -h, --help           this help

Targets (from the sparse-read issue): sparse read >= pread through the
mount with a warm cache, >= 1.5 x pread through the mount with a cold
cache; map scan of 10,000 extents < 50 ms; uncontended range-lock pair
< 100 ns. Needs /dev/fuse, fusermount3, mkfs.ext4 or mkfs.xfs, cc;
perf (linux-perf) and strace only for --perf.
EOF
}

die() {
	echo "sparse-bench: $*" >&2
	exit 1
}

log() {
	printf '# %s\n' "$*" >&2
}

# ------------------------------------------------------------ arguments

while [ $# -gt 0 ]; do
	case $1 in
	-h | --help)
		usage
		exit 0
		;;
	--lacunafs) LACUNAFS=${2:?--lacunafs needs a path}; shift ;;
	--lacunafs=*) LACUNAFS=${1#*=} ;;
	--fs) FS=${2:?--fs needs ext4 or xfs}; shift ;;
	--fs=*) FS=${1#*=} ;;
	--size-mib) SIZE_MIB=${2:?--size-mib needs a number}; shift ;;
	--size-mib=*) SIZE_MIB=${1#*=} ;;
	--extents) EXTENTS=${2:?--extents needs a number}; shift ;;
	--extents=*) EXTENTS=${1#*=} ;;
	--chunk-kib) CHUNK_KIB=${2:?--chunk-kib needs a number}; shift ;;
	--chunk-kib=*) CHUNK_KIB=${1#*=} ;;
	--runs) RUNS=${2:?--runs needs a number}; shift ;;
	--runs=*) RUNS=${1#*=} ;;
	--lib-src) LIB_SRC=1 ;;
	--sweep) SWEEP=${2:?--sweep needs a list of sizes in KiB}; shift ;;
	--sweep=*) SWEEP=${1#*=} ;;
	--perf) PERF_DIR=${2:?--perf needs a directory}; shift ;;
	--perf=*) PERF_DIR=${1#*=} ;;
	-*) usage >&2; die "unknown option $1" ;;
	*)
		[ -z "$BUILD_DIR" ] || die "more than one BUILD_DIR"
		BUILD_DIR=$1
		;;
	esac
	shift
done

case $FS in ext4 | xfs) ;; *) die "--fs must be ext4 or xfs" ;; esac
for v in SIZE_MIB EXTENTS CHUNK_KIB RUNS; do
	[[ ${!v} =~ ^[1-9][0-9]*$ ]] || die "$v must be a positive integer"
done
[[ -z $SWEEP || $SWEEP =~ ^[1-9][0-9]*(,[1-9][0-9]*)*$ ]] || die "--sweep takes sizes in KiB: 64,256,4096"
[ -n "$BUILD_DIR" ] || BUILD_DIR=${top_builddir:-$SRCDIR}
BUILD_DIR=$(cd "$BUILD_DIR" 2>/dev/null && pwd) || die "no build directory $BUILD_DIR"
[ -n "$LACUNAFS" ] || LACUNAFS=$BUILD_DIR/fusefs/lacunafs
SIZE=$((SIZE_MIB * 1024 * 1024))
CHUNK=$((CHUNK_KIB * 1024))

# ------------------------------------------------------------ checks

[ "$(id -u)" = 0 ] || die "needs root (loop device, mounts, fadvise of any file)"
[ -c /dev/fuse ] || die "no /dev/fuse"
command -v fusermount3 >/dev/null || die "fusermount3 missing (apt-get install fuse3)"
command -v "mkfs.$FS" >/dev/null || die "mkfs.$FS missing (e2fsprogs / xfsprogs)"
command -v cc >/dev/null || die "no C compiler (cc)"
[ -x "$LACUNAFS" ] || die "lacunafs not found at $LACUNAFS (build it, or give BUILD_DIR / --lacunafs)"
if [ -n "$PERF_DIR" ]; then
	command -v perf >/dev/null || die "--perf needs perf (apt-get install linux-perf)"
	command -v strace >/dev/null || die "--perf needs strace (apt-get install strace)"
	mkdir -p "$PERF_DIR" || die "cannot make $PERF_DIR"
	PERF_DIR=$(cd "$PERF_DIR" && pwd)
fi

# ------------------------------------------------------------ cleanup

cleanup() {
	local rc=$? i
	trap - EXIT INT TERM
	if [ -n "$BG_PID" ]; then
		kill -INT "$BG_PID" 2>/dev/null
		wait "$BG_PID" 2>/dev/null
	fi
	if [ -n "$MNT" ] && mountpoint -q "$MNT"; then
		fusermount3 -u "$MNT" 2>/dev/null || umount -l "$MNT" 2>/dev/null
	fi
	if [ -n "$DAEMON_PID" ]; then
		for ((i = 0; i < 100; i++)); do
			kill -0 "$DAEMON_PID" 2>/dev/null || break
			sleep 0.05
		done
		kill -0 "$DAEMON_PID" 2>/dev/null && kill -KILL "$DAEMON_PID" 2>/dev/null
		wait "$DAEMON_PID" 2>/dev/null
	fi
	if [ -n "$BACKING" ] && mountpoint -q "$BACKING"; then
		umount "$BACKING" 2>/dev/null || umount -l "$BACKING" 2>/dev/null
	fi
	[ -n "$TMP" ] && rm -rf "$TMP"
	exit "$rc"
}

TMP=$(mktemp -d "${TMPDIR:-/tmp}/sparse-bench.XXXXXX") || die "mktemp failed"
chmod 755 "$TMP"
trap cleanup EXIT
trap 'exit 130' INT TERM
RESULTS=$TMP/results.txt
: >"$RESULTS"

# ------------------------------------------------------------ helpers

# median: of the numbers on stdin, one a line
median() {
	sort -g | awk '{ v[NR] = $1 } END {
		if (NR == 0) { print "nan"; exit }
		if (NR % 2) printf "%.6g\n", v[(NR + 1) / 2]
		else printf "%.6g\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# field KEY: the value of KEY=... of each line on stdin
field() {
	awk -v k="$1" '{ for (i = 2; i <= NF; i++) { split($i, kv, "=");
		if (kv[1] == k) print kv[2] } }'
}

# med WHAT KEY: median of KEY over the result lines of WHAT
med() {
	awk -v w="$1" '$1 == w' "$RESULTS" | field "$2" | median
}

# calc EXPR: floating-point arithmetic
calc() {
	awk "BEGIN { printf \"%.3f\n\", $* }"
}

# run ARGS...: run sr_bench unguarded, keep its result lines
run() {
	local out
	out=$("$SRB" "$@") || die "sr_bench $* failed"
	printf '%s\n' "$out" >>"$RESULTS"
}

resident() {
	"$SRB" resident "$1" | field pct
}

# drop_caches writes so far (page cache and slab: the latter evicts
# inodes, and a FUSE inode takes its page cache with it)
drops() {
	awk '$1 == "drop_pagecache" || $1 == "drop_slab" { n += $2 } END { print n + 0 }' /proc/vmstat
}

# warm FILE: make FILE fully resident in its page cache (read it once)
warm() {
	local pct
	pct=$(resident "$1")
	[ "$pct" = 100.0 ] && return 0
	"$SRB" pread -r 1 "$1" >/dev/null || die "sr_bench pread $1 failed"
	REWARMS=$((REWARMS + 1))
}

# guarded LABEL WARMFILES SUBCOMMAND ARGS...: one measured run of
# `sr_bench SUBCOMMAND -l LABEL ARGS...`, whose result is
# kept only if nobody wrote drop_caches meanwhile, WARMFILES (space
# separated) were fully resident before and after, and a resident_pct the
# run reports is what its label promises (warm 100, cold 0). Otherwise
# it is discarded and run again, at most MAX_TRIES times.
MAX_TRIES=20
DISCARDED=0
REWARMS=0
guarded() {
	local label=$1 files=$2 cmd=$3 try f d0 d1 out ok pct
	shift 3
	for ((try = 0; try < MAX_TRIES; try++)); do
		for f in $files; do warm "$f"; done
		d0=$(drops)
		out=$("$SRB" "$cmd" -l "$label" "$@") || die "sr_bench $cmd $* failed"
		d1=$(drops)
		ok=1
		[ "$d0" = "$d1" ] || ok=0
		for f in $files; do
			[ "$(resident "$f")" = 100.0 ] || ok=0
		done
		pct=$(printf '%s\n' "$out" | field resident_pct | head -1)
		case $label in
		warm*) [ "$pct" = 100.0 ] || ok=0 ;;
		cold*) [ "$pct" = 0.0 ] || ok=0 ;;
		esac
		[ "$(drops)" = "$d0" ] || ok=0
		if [ "$ok" = 1 ]; then
			printf '%s\n' "$out" >>"$RESULTS"
			return 0
		fi
		DISCARDED=$((DISCARDED + 1))
		log "discarded a disturbed $label pass (drop_caches or eviction meanwhile)"
	done
	die "$MAX_TRIES $label passes in a row were disturbed (something keeps dropping caches)"
}

# ------------------------------------------------------------ build sr_bench

SRB=$TMP/sr_bench
if [ "$LIB_SRC" = 0 ] && [ -f "$BUILD_DIR/lib/.libs/liblacuna.so" ]; then
	LIBDESC="$BUILD_DIR/lib/.libs/liblacuna.so"
	cc -O2 -Wall -D_GNU_SOURCE -I"$SRCDIR/include" -o "$SRB" "$SCRIPT_DIR/sr_bench.c" \
		-L"$BUILD_DIR/lib/.libs" -llacuna -Wl,-rpath,"$BUILD_DIR/lib/.libs" ||
		die "cc sr_bench.c (against $LIBDESC) failed"
else
	LIBDESC="$SRCDIR/lib/liblacuna.c compiled in"
	cc -O2 -Wall -D_GNU_SOURCE -I"$SRCDIR/include" -o "$SRB" "$SCRIPT_DIR/sr_bench.c" \
		"$SRCDIR/lib/liblacuna.c" || die "cc sr_bench.c lib/liblacuna.c failed"
fi

RL_BENCH=$BUILD_DIR/bench/bench_rangelock
if [ ! -x "$RL_BENCH" ] && [ -f "$BUILD_DIR/Makefile" ]; then
	log "building bench/bench_rangelock in $BUILD_DIR"
	make -C "$BUILD_DIR" -s bench/bench_rangelock >/dev/null 2>&1
fi

# ------------------------------------------------------------ world

IMG=$TMP/backing.img
BACKING=$TMP/backing
MNT=$TMP/mnt
mkdir -p "$BACKING" "$MNT"
# two files of SIZE plus room for the filesystem's own metadata
truncate -s $((2 * SIZE + 512 * 1024 * 1024)) "$IMG" || die "truncate $IMG"
case $FS in
ext4) mkfs.ext4 -q -F "$IMG" >/dev/null 2>&1 || die "mkfs.ext4 $IMG" ;;
xfs) mkfs.xfs -q -f "$IMG" >/dev/null 2>&1 || die "mkfs.xfs $IMG" ;;
esac
mount -o loop "$IMG" "$BACKING" || die "mount -o loop $IMG (no loop devices?)"
chmod 755 "$BACKING"

env -u LACUNA_TEST_DISABLE_RANGELOCK setsid "$LACUNAFS" -f "$BACKING" "$MNT" \
	>"$TMP/lacunafs.log" 2>&1 &
DAEMON_PID=$!
for ((i = 0; i < 200; i++)); do
	mountpoint -q "$MNT" && break
	kill -0 "$DAEMON_PID" 2>/dev/null || { cat "$TMP/lacunafs.log" >&2; die "lacunafs exited"; }
	sleep 0.05
done
mountpoint -q "$MNT" || die "lacunafs did not mount $MNT"
# -p PID below reads the daemon's CPU time: make sure $! is the daemon
[ "$(cat "/proc/$DAEMON_PID/comm" 2>/dev/null)" = lacunafs ] ||
	die "PID $DAEMON_PID is not the lacunafs daemon"

DENSE=dense.bin
HOLEY=extents.bin
log "writing $SIZE_MIB MiB dense file and $EXTENTS-extent file on $FS"
"$SRB" mkfile "$BACKING/$DENSE" "$SIZE" >/dev/null || die "sr_bench mkfile $DENSE"
EXTINFO=$("$SRB" mkfile "$BACKING/$HOLEY" "$SIZE" "$EXTENTS") || die "sr_bench mkfile $HOLEY"
sync
# fill the backing page cache; the mount's stays empty until (b)/(c)
warm "$BACKING/$DENSE"
warm "$BACKING/$HOLEY"
REWARMS=0

MNT_DEV=$(mountpoint -d "$MNT")
RA_KB=$(cat "/sys/class/bdi/$MNT_DEV/read_ahead_kb" 2>/dev/null || echo "?")
LOAD0=$(cut -d' ' -f1-3 /proc/loadavg)

echo "sparse-bench: $FS on a loop image, lacunafs $LACUNAFS"
echo "  kernel $(uname -r), $(nproc) CPUs, liblacuna: $LIBDESC"
echo "  file $SIZE_MIB MiB, $CHUNK_KIB KiB per call, $RUNS runs (medians), mount read_ahead_kb=$RA_KB"
echo "  extents file: $EXTINFO"
# libfuse splices a FUSE_READ reply only through a pipe that holds the
# reply plus 3 pages, and pipe sizes are powers of two pages; growing a
# pipe past fs.pipe-max-size needs CAP_SYS_RESOURCE. Without that, every
# reply is read into a freshly allocated buffer and copied (see (c)).
PIPE_MAX=$(cat /proc/sys/fs/pipe-max-size)
PIPE_NEED=0
if [[ $RA_KB =~ ^[0-9]+$ ]]; then
	n=$(((RA_KB * 1024 + 3 * 4096 + 16 + 4095) / 4096))
	for ((PIPE_NEED = 1; PIPE_NEED < n; PIPE_NEED *= 2)); do :; done
	PIPE_NEED=$((PIPE_NEED * 4096))
fi
CAPEFF=$(awk '/^CapEff/ { print $2 }' "/proc/$DAEMON_PID/status")
if (((0x${CAPEFF:-0} >> 24) & 1)); then
	SPLICE="daemon has CAP_SYS_RESOURCE: FUSE_READ replies can be spliced"
elif [ "$PIPE_NEED" -gt 0 ] && [ "$PIPE_MAX" -ge "$PIPE_NEED" ]; then
	SPLICE="fs.pipe-max-size $PIPE_MAX fits a readahead-sized FUSE_READ reply: spliced"
else
	SPLICE="no CAP_SYS_RESOURCE and fs.pipe-max-size $PIPE_MAX < $PIPE_NEED: libfuse copies each readahead-sized FUSE_READ reply through a new buffer instead of splicing it (slows (c))"
fi
echo "  $SPLICE"
echo "  load average at start: $LOAD0, drop_caches writes so far: $(drops)"
echo

# ------------------------------------------------------------ 1. dense reads

case_cmd() {
	local b=$BACKING/$DENSE m=$MNT/$DENSE
	case $1 in
	sparse) guarded sparse "$b" sparse -c "$CHUNK" -p "$DAEMON_PID" "$m" ;;
	warm) guarded warm "$b $m" pread -c "$CHUNK" -p "$DAEMON_PID" "$m" ;;
	cold) guarded cold "$b" pread --cold -c "$CHUNK" -p "$DAEMON_PID" "$m" ;;
	backing) guarded backing "$b" pread -c "$CHUNK" "$b" ;;
	esac
}

CASES=(sparse warm cold backing)
log "dense reads: $RUNS runs of ${CASES[*]}, order rotating"
for ((r = 0; r < RUNS; r++)); do
	for ((k = 0; k < ${#CASES[@]}; k++)); do
		case_cmd "${CASES[$(((k + r) % ${#CASES[@]}))]}"
	done
done
run rtt -n 20000 -p "$DAEMON_PID" "$MNT/$DENSE" >/dev/null

declare -A GBPS
printf '1. Dense %s KiB reads of a %s MiB file (backing page cache warm)\n' "$CHUNK_KIB" "$SIZE_MIB"
printf '   %-34s %8s %10s %12s %12s %9s\n' case GB/s us/call "client ms/GB" "daemon ms/GB" resident%
for c in "${CASES[@]}"; do
	GBPS[$c]=$(med "$c" GBps)
	bytes=$(med "$c" bytes)
	cpu=$(calc "$(med "$c" client_cpu_ns) / 1e6 / ($bytes / 1e9)")
	dcpu=$(calc "$(med "$c" daemon_cpu_ns) / 1e6 / ($bytes / 1e9)")
	res=$(med "$c" resident_pct)
	case $c in
	sparse) name="(a) sparse read, ARENA" ;;
	warm) name="(b) pread via mount, cache warm" ;;
	cold) name="(c) pread via mount, cache cold" ;;
	backing) name="(d) pread of the backing file" ;;
	esac
	[ "$c" = backing ] && dcpu="-"
	[ "$res" = nan ] && res="-"
	printf '   %-34s %8.3f %10.1f %12s %12s %9s\n' "$name" "${GBPS[$c]}" \
		"$(med "$c" us_per_call)" "$cpu" "$dcpu" "$res"
done
printf '   every kept pass had the backing file 100%% resident before and after it;\n'
printf '   passes discarded (someone dropped caches meanwhile): %s, re-warm reads: %s\n' \
	"$DISCARDED" "$REWARMS"
printf '   ioctl round trip: LACUNA_IOC_INFO %.1f us, map-only sparse read of 4 KiB %.1f us\n' \
	"$(med rtt_info us_per_call)" "$(med rtt_map4k us_per_call)"

US_SR=$(med sparse us_per_call)
US_BK=$(med backing us_per_call)
US_RT=$(med rtt_info us_per_call)
printf '   sparse read per call %.1f us = backing pread %.1f us + bare ioctl round trip %.1f us\n' \
	"$US_SR" "$US_BK" "$US_RT"
printf '     + %.1f us rest (request handling: 16 KiB struct each way, range lock, fstat;\n       a difference of separate medians, so noisy)\n' \
	"$(calc "$US_SR - $US_BK - $US_RT")"

R_AB=$(calc "${GBPS[sparse]} / ${GBPS[warm]}")
R_AC=$(calc "${GBPS[sparse]} / ${GBPS[cold]}")
R_AD=$(calc "${GBPS[sparse]} / ${GBPS[backing]}")
R_BD=$(calc "${GBPS[warm]} / ${GBPS[backing]}")
verdict() { awk "BEGIN { exit !($1) }" && echo met || echo MISSED; }
V_AB=$(verdict "$R_AB >= 1.0")
V_AC=$(verdict "$R_AC >= 1.5")
printf '   sparse / warm    = %s  (target >= 1.0: %s)\n' "$R_AB" "$V_AB"
printf '   sparse / cold    = %s  (target >= 1.5: %s)\n' "$R_AC" "$V_AC"
printf '   sparse / backing = %s,  warm / backing = %s\n' "$R_AD" "$R_BD"
echo

if [ -n "$SWEEP" ]; then
	log "sweep: call sizes $SWEEP KiB, $RUNS runs each"
	printf '1b. Sparse read vs warm pread by call size (GB/s, medians)\n'
	printf '   %10s %9s %9s %9s %12s %12s\n' KiB sparse warm ratio "sparse us" "warm us"
	for kib in ${SWEEP//,/ }; do
		for ((r = 0; r < RUNS; r++)); do
			if ((r % 2)); then
				guarded "warm_$kib" "$BACKING/$DENSE $MNT/$DENSE" pread -c $((kib * 1024)) "$MNT/$DENSE"
				guarded "sparse_$kib" "$BACKING/$DENSE" sparse -c $((kib * 1024)) "$MNT/$DENSE"
			else
				guarded "sparse_$kib" "$BACKING/$DENSE" sparse -c $((kib * 1024)) "$MNT/$DENSE"
				guarded "warm_$kib" "$BACKING/$DENSE $MNT/$DENSE" pread -c $((kib * 1024)) "$MNT/$DENSE"
			fi
		done
		printf '   %10s %9.3f %9.3f %9.3f %12.1f %12.1f\n' "$kib" "$(med "sparse_$kib" GBps)" \
			"$(med "warm_$kib" GBps)" \
			"$(calc "$(med "sparse_$kib" GBps) / $(med "warm_$kib" GBps)")" \
			"$(med "sparse_$kib" us_per_call)" "$(med "warm_$kib" us_per_call)"
	done
	echo
fi

# ------------------------------------------------------------ 2. map scan

log "map scan: $RUNS passes each"
SEEK_RUNS=$((RUNS < 3 ? RUNS : 3))
for ((r = 0; r < RUNS; r++)); do
	guarded map "" map -p "$DAEMON_PID" "$MNT/$HOLEY"
	guarded seek_backing "" seek "$BACKING/$HOLEY"
	[ "$r" -lt "$SEEK_RUNS" ] && guarded seek_mount "" seek -p "$DAEMON_PID" "$MNT/$HOLEY"
done

MAP_MS=$(calc "$(med map ns) / 1e6")
V_MAP=$(verdict "$MAP_MS < 50")
segs() { echo "$(med "$1" data_segs) data + $(med "$1" hole_segs) hole segments"; }
printf '2. Map scan of a %s MiB file with %s data extents\n' "$SIZE_MIB" "$EXTENTS"
printf '   %-34s %9s %8s %13s  %s\n' how ms calls "daemon ms" found
printf '   %-34s %9.2f %8s %13.2f  %s\n' "LACUNA_READ_MAP via the ioctl" "$MAP_MS" \
	"$(med map calls)" "$(calc "$(med map daemon_cpu_ns) / 1e6")" "$(segs map)"
printf '   %-34s %9.2f %8s %13s  %s\n' "SEEK_DATA/SEEK_HOLE, backing file" \
	"$(calc "$(med seek_backing ns) / 1e6")" "$(med seek_backing calls)" "-" "$(segs seek_backing)"
printf '   %-34s %9.2f %8s %13.2f  %s\n' "SEEK_DATA/SEEK_HOLE via the mount" \
	"$(calc "$(med seek_mount ns) / 1e6")" "$(med seek_mount calls)" \
	"$(calc "$(med seek_mount daemon_cpu_ns) / 1e6")" "$(segs seek_mount)"
printf '   map scan %s ms (target < 50 ms: %s); map / backing seek = %s\n' "$MAP_MS" "$V_MAP" \
	"$(calc "$(med map ns) / $(med seek_backing ns)")"
if [ "$(segs map)" != "$(segs seek_backing)" ]; then
	echo "   WARNING: the map and the backing seek scan found different segments"
fi
echo

# ------------------------------------------------------------ 3. range lock

printf '3. Range lock (bench/bench_rangelock, %s runs)\n' "$RUNS"
V_RL="not run"
if [ -x "$RL_BENCH" ]; then
	for ((r = 0; r < RUNS; r++)); do
		"$RL_BENCH" -n 5000000 -t 0.2 >"$TMP/rl.$r" 2>&1 || die "bench_rangelock failed: $(cat "$TMP/rl.$r")"
	done
	rl_med() {
		cat "$TMP"/rl.* | awk -v n="$1" 'index($0, n) == 1 { print $(NF - 1) }' | median
	}
	RL_X=$(rl_med "uncontended exclusive lock+unlock")
	RL_S=$(rl_med "uncontended shared lock+unlock")
	RL_M=$(rl_med "pthread mutex (reference)")
	V_RL=$(verdict "$RL_X < 100 && $RL_S < 100")
	printf '   uncontended exclusive lock+unlock %7.1f ns/pair\n' "$RL_X"
	printf '   uncontended shared lock+unlock    %7.1f ns/pair\n' "$RL_S"
	printf '   pthread mutex pair (reference)    %7.1f ns/pair\n' "$RL_M"
	printf '   target < 100 ns/pair: %s\n' "$V_RL"
else
	echo "   skipped: $RL_BENCH not built (make -C $BUILD_DIR bench/bench_rangelock)"
fi
echo

printf '   (passes discarded in all: %s)\n\n' "$DISCARDED"
printf 'Summary: sparse/warm %s (%s), sparse/cold %s (%s), map scan %s ms (%s), range lock %s\n' \
	"$R_AB" "$V_AB" "$R_AC" "$V_AC" "$MAP_MS" "$V_MAP" "$V_RL"
echo "  load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"

# ------------------------------------------------------------ 4. profile

# perf_daemon NAME CMD...: run CMD while perf records the daemon; the
# client is recorded too when CMD is sr_bench (perf record -- CMD).
perf_daemon() {
	local name=$1
	shift
	perf record -q -g -p "$DAEMON_PID" -o "$PERF_DIR/$name.daemon.data" >/dev/null 2>&1 &
	BG_PID=$!
	sleep 0.5
	perf record -q -g -o "$PERF_DIR/$name.client.data" -- "$@" >"$PERF_DIR/$name.out" 2>&1
	kill -INT "$BG_PID" 2>/dev/null
	wait "$BG_PID" 2>/dev/null
	BG_PID=""
	for side in daemon client; do
		perf report -q -i "$PERF_DIR/$name.$side.data" --no-children --stdio \
			--sort sym --percent-limit 1 -g none 2>/dev/null |
			grep -v '^$' | head -25 >"$PERF_DIR/$name.$side.txt"
	done
}

# strace_daemon NAME CMD...: syscalls of the daemon's threads during CMD
strace_daemon() {
	local name=$1
	shift
	strace -c -f -q -p "$DAEMON_PID" -o "$PERF_DIR/$name.strace.txt" &
	BG_PID=$!
	sleep 1
	"$@" >"$PERF_DIR/$name.strace.out" 2>&1
	kill -INT "$BG_PID" 2>/dev/null
	wait "$BG_PID" 2>/dev/null
	BG_PID=""
}

if [ -n "$PERF_DIR" ]; then
	log "profiling into $PERF_DIR"
	perf_daemon sparse "$SRB" sparse -r 3 -c "$CHUNK" "$MNT/$DENSE"
	perf_daemon cold "$SRB" pread --cold -r 3 -c "$CHUNK" "$MNT/$DENSE"
	perf_daemon warm "$SRB" pread -r 3 -c "$CHUNK" "$MNT/$DENSE"
	perf_daemon map "$SRB" map -r 20 "$MNT/$HOLEY"
	strace_daemon sparse "$SRB" sparse -r 1 -c "$CHUNK" "$MNT/$DENSE"
	strace_daemon map "$SRB" map -r 1 "$MNT/$HOLEY"
	echo
	echo "4. Profiles in $PERF_DIR (perf record -g; top symbols, >= 1%)"
	for name in sparse cold warm map; do
		for side in daemon client; do
			echo "   -- $name, $side:"
			[ -s "$PERF_DIR/$name.$side.txt" ] || echo "     (no samples)"
			head -12 "$PERF_DIR/$name.$side.txt" | sed 's/^/     /'
		done
	done
	for name in sparse map; do
		calls=$(awk '$1 == "ioctls"' "$PERF_DIR/$name.strace.out" | field total)
		echo "   -- daemon syscalls during one $name run ($calls ioctls, untimed ones included; strace -c -f):"
		awk 'NR > 2 && $NF != "total" && $1 !~ /^-/ { print }' "$PERF_DIR/$name.strace.txt" |
			awk '{ print $4, $NF }' |
			sort -k1 -n -r | head -8 |
			awk -v n="$calls" '{ printf "     %-18s %8d calls  %6.2f per ioctl\n", $2, $1, $1 / n }'
	done
	# the map run made one untimed and one timed pass over the same segments
	nseg=$(awk '$1 == "map"' "$PERF_DIR/map.strace.out" | field data_segs)
	nseg=$((nseg + $(awk '$1 == "map"' "$PERF_DIR/map.strace.out" | field hole_segs)))
	nlseek=$(awk '$NF == "lseek" { print $4 }' "$PERF_DIR/map.strace.txt")
	[ "$nseg" -gt 0 ] && [ -n "$nlseek" ] &&
		printf '   map: %s lseek per segment reported (a bare SEEK_DATA/SEEK_HOLE scan: 1.00)\n' \
			"$(calc "$nlseek / (2 * $nseg)")"
fi
exit 0
