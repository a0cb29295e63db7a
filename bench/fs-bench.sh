#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# fs-bench.sh: compare lacunafs with the filesystem under it and with
# libfuse's passthrough_ll example, all on ONE freshly made loop image
# (ext4, or XFS with --fs xfs) in the same run. Not a test: `make check`
# never runs it. Needs root; takes about two minutes with the defaults.
#
# Targets (each works in its own subdirectory of the same filesystem):
#   native          the backing directory itself
#   passthrough_ll  libfuse's example, built from the source shipped in
#                   /usr/share/doc/libfuse3-dev/examples into a temp dir,
#                   mounted with `-o source=BACKING` and its default cache
#                   mode (cache=auto: 1 s entry/attr timeout, no
#                   keep_cache, no writeback cache) and without
#                   default_permissions unless --pt-options adds it
#   lacunafs        `lacunafs -f BACKING MNT`, default options
# Both daemons run in the foreground under setsid for the whole run and
# are stopped by PID and fusermount3 -u at exit.
#
# Figures (GB = 10^9 bytes; file size 1 GiB unless --size-mib):
#   seq write   dd if=/dev/zero bs=1M into a new file: cached writes, no
#               fsync (the daemon's write(2) to the backing page cache is
#               what is measured); dd's own byte count and time, which
#               include the final close. `sync` follows, untimed.
#   seq read, first read
#               dd bs=1M of the file after `echo 1 > drop_caches` and a
#               native pre-read of the backing file: the backing page
#               cache is warm, the FUSE mount's page cache is cold, so
#               every byte crosses /dev/fuse (FUSE_READ requests of
#               readahead size) and the daemon's pread is a page-cache
#               copy. This is the daemon's streaming read cost.
#   seq read, re-read
#               the same dd again right away, with a new open(). A FUSE
#               filesystem that sets keep_cache on that open (lacunafs
#               does for read-only opens while the backing file is
#               unchanged) serves it from the mount's own page cache
#               without the daemon; one that does not (passthrough_ll's
#               default) has the kernel drop those pages at open and pays
#               the daemon again. For native, first read and re-read are
#               the same thing: both read a warm page cache.
#   rand read   fio, 4 KiB random reads, psync, queue depth 1, one job,
#               over the whole file, each block at most once (fio's random
#               map), at most --rand-secs seconds; caches are prepared as
#               for the first read, so on FUSE every read is a miss in the
#               mount's cache (fio's fadvise RANDOM turns readahead off)
#               and costs one daemon round trip. Skipped, with a note, if
#               fio is not installed.
#   create / stat / unlink
#               bench/fsmeta.c on 10,000 files (--files) in one directory,
#               one operation at a time, each phase timed on its own.
#               Before the stat and unlink phases it syncs and drops the
#               kernel's dentry and inode caches, so each stat and each
#               unlink starts with an uncached lookup (on FUSE: a LOOKUP
#               to the daemon) regardless of entry timeouts.
# Every figure is run --runs times (default 3) and the median is shown;
# the order of the targets rotates from run to run. Nothing runs in
# parallel: the two CPUs are shared by the workload and the daemon.
#
# With --perf DIR, after the measured runs, one more first read and one
# more metadata pass are made on lacunafs under `perf record -g -p PID`
# (so perf does not disturb the table); the perf.data files and a
# `perf report` summary of the top symbols are left in DIR.
#
# Exit status: 0 done, 1 usage or setup error, 130 interrupted.

set -u
export LC_ALL=C

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
FUSE_EXAMPLES=/usr/share/doc/libfuse3-dev/examples

FS=ext4
SIZE_MIB=1024
NFILES=10000
RUNS=3
RAND_SECS=5
TARGETS="native,passthrough_ll,lacunafs"
LACUNAFS=""
BUILD_DIR=""
PERF_DIR=""
FUSE_RA_KB=""
PT_OPTS=""

TMP=""
BACKING=""
declare -A DAEMON_PID MNT RESULT DCPU
PERF_PID=""
HAVE_FIO=0

usage() {
	cat <<EOF
usage: $0 [options] [BUILD_DIR]

Benchmark lacunafs against the native filesystem and libfuse's
passthrough_ll on one loop image. Needs root. See the comment at the top
of this script for what each figure means.

  BUILD_DIR            top build directory holding fusefs/lacunafs
                       (default: the directory above this script)
  --lacunafs PATH      the lacunafs binary (overrides BUILD_DIR)
  --fs ext4|xfs        backing filesystem (default ext4)
  --size-mib N         size of the sequential/random file (default 1024)
  --files N            files for create/stat/unlink (default 10000)
  --runs N             repetitions; the median is shown (default 3)
  --rand-secs N        time cap of each random-read run (default 5)
  --fuse-readahead-kb N
                       set both FUSE mounts' read_ahead_kb to N after
                       mounting (default: leave the kernel's value)
  --pt-options OPTS    extra -o options for passthrough_ll, e.g.
                       default_permissions (which lacunafs always uses)
  --targets LIST       comma-separated subset of
                       native,passthrough_ll,lacunafs (default all three)
  --perf DIR           also profile the lacunafs daemon (perf record -g)
                       during one extra first read and metadata pass;
                       results go to DIR
  -h, --help           this help
EOF
}

die() {
	echo "fs-bench: $*" >&2
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
	--size-mib) SIZE_MIB=${2:?}; shift ;;
	--size-mib=*) SIZE_MIB=${1#*=} ;;
	--files) NFILES=${2:?}; shift ;;
	--files=*) NFILES=${1#*=} ;;
	--runs) RUNS=${2:?}; shift ;;
	--runs=*) RUNS=${1#*=} ;;
	--rand-secs) RAND_SECS=${2:?}; shift ;;
	--rand-secs=*) RAND_SECS=${1#*=} ;;
	--targets) TARGETS=${2:?}; shift ;;
	--targets=*) TARGETS=${1#*=} ;;
	--pt-options) PT_OPTS=${2:?}; shift ;;
	--pt-options=*) PT_OPTS=${1#*=} ;;
	--fuse-readahead-kb) FUSE_RA_KB=${2:?}; shift ;;
	--fuse-readahead-kb=*) FUSE_RA_KB=${1#*=} ;;
	--perf) PERF_DIR=${2:?--perf needs a directory}; shift ;;
	--perf=*) PERF_DIR=${1#*=} ;;
	-*)
		usage >&2
		exit 1
		;;
	*)
		[ -z "$BUILD_DIR" ] || die "more than one BUILD_DIR given"
		BUILD_DIR=$1
		;;
	esac
	shift
done

case $FS in
ext4 | xfs) ;;
*) die "--fs must be ext4 or xfs, not '$FS'" ;;
esac
for v in SIZE_MIB NFILES RUNS RAND_SECS; do
	[[ ${!v} =~ ^[1-9][0-9]*$ ]] || die "$v must be a positive integer"
done
[ -z "$FUSE_RA_KB" ] || [[ $FUSE_RA_KB =~ ^[1-9][0-9]*$ ]] ||
	die "--fuse-readahead-kb must be a positive integer"
IFS=, read -r -a TLIST <<<"$TARGETS"
for t in "${TLIST[@]}"; do
	case $t in
	native | passthrough_ll | lacunafs) ;;
	*) die "unknown target '$t' in --targets" ;;
	esac
done
has_target() {
	local t
	for t in "${TLIST[@]}"; do
		[ "$t" = "$1" ] && return 0
	done
	return 1
}

: "${top_builddir:=$(cd "$SCRIPT_DIR/.." && pwd)}"
[ -n "$BUILD_DIR" ] && top_builddir=$BUILD_DIR
[ -n "$LACUNAFS" ] || LACUNAFS=$top_builddir/fusefs/lacunafs

# ------------------------------------------------------------ requirements

[ "$(id -u)" = 0 ] || die "must run as root (loop devices, mounts, drop_caches)"
[ -c /dev/fuse ] || die "no /dev/fuse"
for c in dd mount umount losetup cc pkg-config mountpoint setsid; do
	command -v "$c" >/dev/null || die "$c not found"
done
command -v "mkfs.$FS" >/dev/null || die "mkfs.$FS not found"
if has_target passthrough_ll || has_target lacunafs; then
	command -v fusermount3 >/dev/null || die "fusermount3 not found (package fuse3)"
fi
if has_target passthrough_ll; then
	[ -r "$FUSE_EXAMPLES/passthrough_ll.c" ] ||
		die "$FUSE_EXAMPLES/passthrough_ll.c missing (package libfuse3-dev)"
	pkg-config --exists fuse3 || die "pkg-config does not know fuse3 (libfuse3-dev)"
fi
if has_target lacunafs; then
	[ -x "$LACUNAFS" ] ||
		die "lacunafs not built at $LACUNAFS (give BUILD_DIR or --lacunafs, or --targets native,passthrough_ll)"
	LACUNAFS=$(cd "$(dirname "$LACUNAFS")" && pwd)/$(basename "$LACUNAFS")
fi
if [ -n "$PERF_DIR" ]; then
	has_target lacunafs || die "--perf profiles lacunafs: keep it in --targets"
	command -v perf >/dev/null || die "--perf needs perf (apt-get install linux-perf)"
fi
if command -v fio >/dev/null; then
	HAVE_FIO=1
else
	echo "fs-bench: NOTE: fio is not installed: the 4 KiB random-read row is skipped (apt-get install fio)" >&2
fi

# ------------------------------------------------------------ cleanup

# shellcheck disable=SC2317 # reached through the EXIT trap
stop_daemon() {
	local t=$1 pid=${DAEMON_PID[$1]:-} mnt=${MNT[$1]:-} i

	if [ -n "$mnt" ] && mountpoint -q "$mnt"; then
		fusermount3 -u "$mnt" 2>/dev/null || umount -l "$mnt" 2>/dev/null
	fi
	[ -n "$pid" ] || return 0
	for ((i = 0; i < 100; i++)); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.05
	done
	if kill -0 "$pid" 2>/dev/null; then
		kill -TERM "$pid" 2>/dev/null
		sleep 0.5
		kill -KILL "$pid" 2>/dev/null
	fi
	wait "$pid" 2>/dev/null
	DAEMON_PID[$t]=""
}

# shellcheck disable=SC2317 # the EXIT trap
cleanup() {
	local rc=$? t
	trap - EXIT INT TERM
	if [ -n "$PERF_PID" ]; then
		kill -INT "$PERF_PID" 2>/dev/null
		wait "$PERF_PID" 2>/dev/null
	fi
	for t in lacunafs passthrough_ll; do
		stop_daemon "$t"
	done
	if [ -n "$BACKING" ] && mountpoint -q "$BACKING"; then
		umount "$BACKING" 2>/dev/null || umount -l "$BACKING" 2>/dev/null
	fi
	[ -n "$TMP" ] && rm -rf "$TMP"
	exit "$rc"
}

TMP=$(mktemp -d "${TMPDIR:-/tmp}/lacuna-bench.XXXXXX") || die "mktemp failed"
chmod 755 "$TMP"
trap cleanup EXIT
trap 'echo "fs-bench: interrupted" >&2; exit 130' INT TERM

# ------------------------------------------------------------ helpers

# drop_caches N: write back everything, then drop clean caches (1 page
# cache, 2 dentries and inodes, 3 both).
drop_caches() {
	sync
	echo "$1" >/proc/sys/vm/drop_caches
	# the FUSE daemons get FORGETs for what was dropped; let them settle
	sleep 0.3
}

# warm_backing FILE: read the backing file natively into its page cache.
warm_backing() {
	dd if="$1" of=/dev/null bs=1M status=none || die "pre-read of $1 failed"
}

# dd_gbps DD_ARGS...: run dd, print its rate in GB/s from its own byte
# count and elapsed time.
dd_gbps() {
	local out
	out=$(dd "$@" 2>&1) || die "dd $* failed: $out"
	sed -n 's/^\([0-9][0-9]*\) bytes .* copied, \([0-9.e+-]*\) s,.*/\1 \2/p' <<<"$out" |
		awk 'NF == 2 && $2 > 0 { printf "%.3f\n", $1 / $2 / 1e9 }'
}

# daemon_ticks TARGET: user+system CPU ticks of that target's daemon so far.
daemon_ticks() {
	local pid=${DAEMON_PID[$1]:-}
	[ -n "$pid" ] || {
		echo 0
		return
	}
	# fields after the ")" that closes comm: utime is the 12th, stime the 13th
	sed 's/.*) //' "/proc/$pid/stat" | awk '{ print $12 + $13 }'
}

CLK_TCK=$(getconf CLK_TCK)
PHASE_T0=0
phase_begin() {
	PHASE_T0=$(daemon_ticks "$1")
}
# phase_end TARGET METRIC: record the daemon's CPU seconds for the phase.
phase_end() {
	local t1
	[ "$1" = native ] && return
	t1=$(daemon_ticks "$1")
	DCPU[$1,$2]+="$(awk -v a="$PHASE_T0" -v b="$t1" -v h="$CLK_TCK" \
		'BEGIN { printf "%.2f", (b - a) / h }') "
}

record() {
	RESULT[$1,$2]+="$3 "
}

median() {
	tr ' ' '\n' | sed '/^$/d' | sort -g |
		awk '{ v[NR] = $1 } END {
			if (NR == 0) print "";
			else if (NR % 2) print v[(NR + 1) / 2];
			else printf "%.3f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# start_daemon TARGET MOUNTPOINT COMMAND...: run a FUSE daemon under setsid
# in the foreground and wait for its mount.
start_daemon() {
	local t=$1 mnt=$2 log="$TMP/$1.log" i
	shift 2
	mkdir -p "$mnt"
	setsid "$@" >"$log" 2>&1 &
	DAEMON_PID[$t]=$!
	MNT[$t]=$mnt
	for ((i = 0; i < 200; i++)); do
		mountpoint -q "$mnt" && return 0
		if ! kill -0 "${DAEMON_PID[$t]}" 2>/dev/null; then
			cat "$log" >&2
			die "$t exited before mounting $mnt"
		fi
		sleep 0.05
	done
	cat "$log" >&2
	die "$t did not mount $mnt"
}

# ------------------------------------------------------------ setup

mkdir -p "$TMP/bin"
cc -O2 -Wall -o "$TMP/bin/fsmeta" "$SCRIPT_DIR/fsmeta.c" || die "cannot build fsmeta.c"
if has_target passthrough_ll; then
	# shellcheck disable=SC2046
	cc -O2 -DHAVE_FALLOCATE -DHAVE_COPY_FILE_RANGE -I"$FUSE_EXAMPLES" \
		$(pkg-config --cflags fuse3) "$FUSE_EXAMPLES/passthrough_ll.c" \
		$(pkg-config --libs fuse3) -o "$TMP/bin/passthrough_ll" ||
		die "cannot build passthrough_ll"
fi

IMG_MIB=$((SIZE_MIB + 1024))
truncate -s "${IMG_MIB}M" "$TMP/fs.img" || die "truncate $TMP/fs.img"
case $FS in
ext4) mkfs.ext4 -q -F "$TMP/fs.img" >/dev/null 2>&1 || die "mkfs.ext4 failed" ;;
xfs) mkfs.xfs -q -f "$TMP/fs.img" >/dev/null 2>&1 || die "mkfs.xfs failed" ;;
esac
BACKING=$TMP/backing
mkdir -p "$BACKING"
mount -o loop "$TMP/fs.img" "$BACKING" || die "cannot loop-mount $TMP/fs.img"
chmod 755 "$BACKING"

# Each target's working directory, and where its files are in the backing fs.
declare -A WDIR BDIR
for t in "${TLIST[@]}"; do
	mkdir -p "$BACKING/$t"
	BDIR[$t]=$BACKING/$t
done
WDIR[native]=$BACKING/native
if has_target passthrough_ll; then
	start_daemon passthrough_ll "$TMP/mnt-pt" \
		"$TMP/bin/passthrough_ll" -o "source=$BACKING${PT_OPTS:+,$PT_OPTS}" -f "$TMP/mnt-pt"
	WDIR[passthrough_ll]=$TMP/mnt-pt/passthrough_ll
fi
if has_target lacunafs; then
	start_daemon lacunafs "$TMP/mnt-lfs" "$LACUNAFS" -f "$BACKING" "$TMP/mnt-lfs"
	WDIR[lacunafs]=$TMP/mnt-lfs/lacunafs
fi
if [ -n "$FUSE_RA_KB" ]; then
	for t in passthrough_ll lacunafs; do
		[ -n "${MNT[$t]:-}" ] || continue
		echo "$FUSE_RA_KB" >"/sys/class/bdi/$(mountpoint -d "${MNT[$t]}")/read_ahead_kb" ||
			die "cannot set read_ahead_kb of the $t mount"
	done
fi

# ------------------------------------------------------------ one run

run_target() {
	local t=$1 w=${WDIR[$1]} b=${BDIR[$1]} v out line

	rm -f "$w/seq.dat"
	drop_caches 3

	phase_begin "$t"
	v=$(dd_gbps if=/dev/zero of="$w/seq.dat" bs=1M count="$SIZE_MIB") || exit 1
	phase_end "$t" write
	record "$t" write "$v"
	line="write $v GB/s"
	sync

	drop_caches 1
	warm_backing "$b/seq.dat"
	phase_begin "$t"
	v=$(dd_gbps if="$w/seq.dat" of=/dev/null bs=1M) || exit 1
	phase_end "$t" read1
	record "$t" read1 "$v"
	line+=", first read $v GB/s"

	phase_begin "$t"
	v=$(dd_gbps if="$w/seq.dat" of=/dev/null bs=1M) || exit 1
	phase_end "$t" read2
	record "$t" read2 "$v"
	line+=", re-read $v GB/s"

	if [ "$HAVE_FIO" = 1 ]; then
		drop_caches 1
		warm_backing "$b/seq.dat"
		phase_begin "$t"
		out=$(fio --name=randread --filename="$w/seq.dat" --rw=randread \
			--bs=4k --ioengine=psync --iodepth=1 --numjobs=1 \
			--size="${SIZE_MIB}m" --runtime="$RAND_SECS" \
			--invalidate=0 --allow_file_create=0 --minimal 2>&1) ||
			die "fio on $t failed: $out"
		phase_end "$t" rand
		# terse format v3: field 8 read IOPS, field 16 mean completion latency (us)
		v=$(awk -F';' 'NF > 16 { print $8; exit }' <<<"$out")
		[ -n "$v" ] || die "cannot parse fio output: $out"
		record "$t" rand "$v"
		record "$t" randlat "$(awk -F';' 'NF > 16 { printf "%.1f", $16; exit }' <<<"$out")"
		line+=", rand read $v IOPS"
	fi
	rm -f "$w/seq.dat"

	drop_caches 3
	phase_begin "$t"
	out=$("$TMP/bin/fsmeta" -d "$w/meta" "$NFILES") || die "fsmeta on $t failed: $out"
	phase_end "$t" meta
	for v in create stat unlink; do
		record "$t" "$v" "$(awk -v p="$v" '$1 == p { print $3 }' <<<"$out")"
		line+=", $v $(awk -v p="$v" '$1 == p { printf "%.0f", $3 }' <<<"$out")/s"
	done
	log "$t: $line"
}

read -r LOAD1 _ </proc/loadavg
if awk -v l="$LOAD1" 'BEGIN { exit !(l > 0.5) }'; then
	echo "fs-bench: WARNING: load average $LOAD1 before the start: other work on this machine will disturb the figures" >&2
fi
log "$FS on a ${IMG_MIB} MiB loop image; file ${SIZE_MIB} MiB; ${NFILES} files; ${RUNS} run(s)"
[ -n "${DAEMON_PID[lacunafs]:-}" ] && log "lacunafs: $LACUNAFS (pid ${DAEMON_PID[lacunafs]})"
[ -n "${DAEMON_PID[passthrough_ll]:-}" ] && log "passthrough_ll: pid ${DAEMON_PID[passthrough_ll]}"
N=${#TLIST[@]}
for ((r = 0; r < RUNS; r++)); do
	log "run $((r + 1))/$RUNS"
	for ((k = 0; k < N; k++)); do
		run_target "${TLIST[$(((k + r) % N))]}"
	done
done

# ------------------------------------------------------------ table

fmt() {
	# fmt VALUE: numbers >= 100 as integers, else 3 significant decimals
	[ -n "$1" ] || {
		echo "-"
		return
	}
	awk -v x="$1" 'BEGIN { if (x >= 100) printf "%.0f", x; else printf "%.3g", x }'
}

ratio() {
	if [ -z "$1" ] || [ -z "$2" ]; then
		echo "-"
		return
	fi
	awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }'
}

ROWS=(write read1 read2)
[ "$HAVE_FIO" = 1 ] && ROWS+=(rand randlat)
ROWS+=(create stat unlink)
declare -A LABEL=(
	[write]="seq write 1 MiB (GB/s)"
	[read1]="seq read 1 MiB, first (GB/s)"
	[read2]="seq read 1 MiB, re-read (GB/s)"
	[rand]="rand read 4 KiB QD1 (IOPS)"
	[randlat]="  mean latency (us, lower=better)"
	[create]="create (ops/s)"
	[stat]="stat, uncached (ops/s)"
	[unlink]="unlink, uncached (ops/s)"
)

echo
echo "lacunafs benchmark: $FS on a loop image, kernel $(uname -r), $(nproc) CPUs"
echo "file ${SIZE_MIB} MiB, ${NFILES} files, median of ${RUNS} run(s); GB = 10^9 bytes"
has_target lacunafs && echo "lacunafs: $LACUNAFS"
[ -n "$PT_OPTS" ] && has_target passthrough_ll && echo "passthrough_ll options: $PT_OPTS"
for t in passthrough_ll lacunafs; do
	[ -n "${MNT[$t]:-}" ] || continue
	ra=$(cat "/sys/class/bdi/$(mountpoint -d "${MNT[$t]}")/read_ahead_kb" 2>/dev/null)
	echo "$t mount: readahead ${ra:-?} KiB"
done
[ "$HAVE_FIO" = 1 ] || echo "random reads skipped: fio is not installed (apt-get install fio)"
echo
printf '%-34s %10s %14s %10s %11s %10s\n' figure native passthrough_ll lacunafs lfs/native lfs/pt_ll
for m in "${ROWS[@]}"; do
	nat=$(median <<<"${RESULT[native,$m]:-}")
	pt=$(median <<<"${RESULT[passthrough_ll,$m]:-}")
	lfs=$(median <<<"${RESULT[lacunafs,$m]:-}")
	printf '%-34s %10s %14s %10s %11s %10s\n' "${LABEL[$m]}" \
		"$(fmt "$nat")" "$(fmt "$pt")" "$(fmt "$lfs")" \
		"$(ratio "$lfs" "$nat")" "$(ratio "$lfs" "$pt")"
done

if has_target passthrough_ll || has_target lacunafs; then
	echo
	echo "FUSE daemon CPU time per phase (s, median; metadata = all three phases)"
	printf '%-34s %14s %10s\n' phase passthrough_ll lacunafs
	for m in write read1 read2 rand meta; do
		[ "$m" = rand ] && [ "$HAVE_FIO" = 0 ] && continue
		case $m in
		write) l="seq write" ;;
		read1) l="seq read, first" ;;
		read2) l="seq read, re-read" ;;
		rand) l="rand read 4 KiB" ;;
		meta) l="create+stat+unlink" ;;
		esac
		printf '%-34s %14s %10s\n' "$l" \
			"$(fmt "$(median <<<"${DCPU[passthrough_ll,$m]:-}")")" \
			"$(fmt "$(median <<<"${DCPU[lacunafs,$m]:-}")")"
	done
fi

# ------------------------------------------------------------ profile

# perf_phase NAME COMMAND...: run COMMAND with perf recording the lacunafs
# daemon, then summarise the top symbols.
perf_phase() {
	local name=$1 data="$PERF_DIR/perf-$1.data"
	shift
	perf record -g -p "${DAEMON_PID[lacunafs]}" -o "$data" >"$PERF_DIR/perf-$name.log" 2>&1 &
	PERF_PID=$!
	sleep 1 # let perf attach to every thread
	"$@" >/dev/null || die "profiled $name workload failed"
	kill -INT "$PERF_PID" 2>/dev/null
	wait "$PERF_PID" 2>/dev/null
	PERF_PID=""
	perf report -i "$data" --stdio --no-children -F overhead,dso,sym \
		--percent-limit 1 -g none 2>/dev/null |
		sed '/^#/d; /^$/d' >"$PERF_DIR/perf-$name.top.txt"
	perf report -i "$data" --stdio --no-children -F overhead,dso,sym \
		--percent-limit 2 -g caller,0.5,callee 2>/dev/null \
		>"$PERF_DIR/perf-$name.callers.txt"
	echo
	echo "perf: lacunafs daemon during $name: self time, top symbols"
	echo "(call chains in $PERF_DIR/perf-$name.callers.txt)"
	head -20 "$PERF_DIR/perf-$name.top.txt"
}

if [ -n "$PERF_DIR" ]; then
	mkdir -p "$PERF_DIR" || die "mkdir $PERF_DIR"
	PERF_DIR=$(cd "$PERF_DIR" && pwd)
	w=${WDIR[lacunafs]}
	b=${BDIR[lacunafs]}
	dd if=/dev/zero of="$w/seq.dat" bs=1M count="$SIZE_MIB" status=none || die "dd write failed"
	drop_caches 1
	warm_backing "$b/seq.dat"
	perf_phase seqread dd if="$w/seq.dat" of=/dev/null bs=1M status=none
	rm -f "$w/seq.dat"
	drop_caches 3
	perf_phase meta "$TMP/bin/fsmeta" -d "$w/meta" "$NFILES"
fi
exit 0
