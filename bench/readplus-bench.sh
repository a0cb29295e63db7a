#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# readplus-bench.sh: what READ_PLUS buys over READ when a client copies
# sparse files from lacunad, on loopback, in one run. Not a test: `make
# check` never runs it. Needs root; takes about three minutes with the
# defaults.
#
# World (bench/nfs-common.sh): a fresh ext4 loop image, lacunafs mounted
# over it, three --size (default 1 GiB) files of random bytes written on
# the backing directory:
#   holes90.dat   the file cut into 1 MiB runs, 10% of them (chosen with a
#                 fixed seed) data, the other 90% holes
#   dense.dat     no holes
#   extents.dat   --extents (default 10,000) data extents spaced evenly,
#                 each followed by a hole of the same length (the layout of
#                 bench/sparse-bench.sh: 52 KiB data, 52 KiB hole for 1 GiB)
# Servers:
#   lacunad       BUILD_DIR/gateway/lacunad exporting the lacunafs mount as
#                 the NFSv4 root (a configuration file, for its stats_file)
#   ganesha       NFS-Ganesha 4.3, FSAL VFS, exporting the backing ext4
#                 directory itself (what one would deploy without Lacuna);
#                 its VFS backend answers READ_PLUS with one empty data
#                 segment (the script shows what it answers for the first
#                 MiB of holes90.dat), so it is read with plain READ
# The files are read once through the mount and on the backing directory
# before anything is timed, and again before each timed run if someone
# dropped the page cache meanwhile (that run is then discarded): every
# figure is of cached files.
#
# Clients, each copying the whole file into a new file on a tmpfs:
#   nfs-get       `lacuna nfs-get URL DEST`: NFSv4.2 READ_PLUS, 1 MiB calls,
#                 several in flight (its default, or --depth), the holes
#                 recreated in DEST. It reports the bytes it received during
#                 the copy, RPC record marks included, the session's setup
#                 not: "wire bytes"; and its own clock for the copy.
#   nfs-get READ  `lacuna nfs-get --read URL DEST`: the same client with
#                 plain READ, every byte written to DEST
#   nfs-cp        libnfs 4.0's `nfs-cp URL DEST`: NFSv4.0 READ, one 1 MiB
#                 call at a time, every byte written to DEST
# Time is the wall time of the command (process start, session setup,
# the copy, CLOSE, teardown); throughput is the file's size over that time
# (GB = 10^9 bytes), so a copy that skips holes can exceed the link.
# Each figure is the median of --runs (default 5; nfs-cp: --cp-runs,
# default 3) runs. In each run the READ_PLUS and READ copies of a file go
# back to back (which one first alternates between runs), then the other
# cases in rotating order. Every copy is compared with its file byte for
# byte in an untimed pass first, where nfs-get's wire count is also
# checked against lacunad's own (bytes_out in its stats file, which also
# holds the replies of the session's setup and teardown) and the copy's
# allocated size is taken.
#
# Targets: holes90.dat READ_PLUS >= 5x faster than READ, with wire bytes
# within 1% of the file's data bytes; dense.dat READ_PLUS throughput >=
# 0.95x READ; extents.dat READ_PLUS >= 1x READ. Speed ratios are judged
# on the median over the runs of each back-to-back pair's ratio of wall
# times, which other load on the machine (it comes and goes) skews less
# than a ratio of medians taken at different moments; both are shown.
#
# Exit status: 0 done (targets met or not), 1 usage or setup error,
# 130 interrupted.

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
NB_NAME=readplus-bench
# shellcheck source=bench/nfs-common.sh
. "$SCRIPT_DIR/nfs-common.sh"

SIZE=1G
RUNS=5
CP_RUNS=3
EXTENTS=10000
DEPTH=""
USE_GANESHA=1
BUILD_DIR=""

usage() {
	cat <<EOF
usage: $0 [options] [BUILD_DIR]

READ_PLUS against READ from lacunad for a file that is 90% holes, a file
without holes and a file of many small extents, with libnfs nfs-cp from
lacunad and NFS-Ganesha for scale. Needs root. The comment at the top of
this script explains every figure.

  BUILD_DIR           build directory with gateway/lacunad, fusefs/lacunafs
                      and tools/lacuna (default: \$top_builddir, else the
                      directory above this script)
  --size N[M|G]       size of each file (default 1G; a whole number of MiB)
  --runs N            timed runs of each nfs-get case, medians (default 5)
  --cp-runs N         timed runs of each nfs-cp case (default 3)
  --extents N         data extents of extents.dat (default 10000)
  --depth D           nfs-get --depth D (default: nfs-get's own)
  --no-ganesha        leave NFS-Ganesha out
  --port-base P       first TCP port tried for the servers (default 26049)
  -h, --help          this help
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
	--runs) RUNS=${2:?}; shift ;;
	--runs=*) RUNS=${1#*=} ;;
	--cp-runs) CP_RUNS=${2:?}; shift ;;
	--cp-runs=*) CP_RUNS=${1#*=} ;;
	--extents) EXTENTS=${2:?}; shift ;;
	--extents=*) EXTENTS=${1#*=} ;;
	--depth) DEPTH=${2:?}; shift ;;
	--depth=*) DEPTH=${1#*=} ;;
	--no-ganesha) USE_GANESHA=0 ;;
	--port-base) NB_PORT_NEXT=${2:?}; shift ;;
	--port-base=*) NB_PORT_NEXT=${1#*=} ;;
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

nb_size_mib "$SIZE"
for v in RUNS CP_RUNS EXTENTS; do
	[[ ${!v} =~ ^[1-9][0-9]*$ ]] || nb_die "--${v,,} must be a positive integer"
done
[ -z "$DEPTH" ] || [[ $DEPTH =~ ^[1-9][0-9]*$ ]] || nb_die "--depth must be a positive integer"

: "${top_builddir:=$(cd "$SCRIPT_DIR/.." && pwd)}"
[ -n "$BUILD_DIR" ] && top_builddir=$BUILD_DIR
LACUNAD=$top_builddir/gateway/lacunad
LACUNAFS=$top_builddir/fusefs/lacunafs
LACUNA=$top_builddir/tools/lacuna

# ------------------------------------------------------------ requirements

nb_require mkfs.ext4 mount umount mountpoint setsid ss nfs-cp awk python3 fusermount3 cmp du
[ -c /dev/fuse ] || nb_die "no /dev/fuse"
for b in "$LACUNAD" "$LACUNAFS" "$LACUNA"; do
	[ -x "$b" ] || nb_die "$b not built (make -C $top_builddir)"
done
"$LACUNA" nfs-get --help >/dev/null 2>&1 || nb_die "$LACUNA has no nfs-get command (rebuild it)"
[ "$USE_GANESHA" = 0 ] || nb_require ganesha.nfsd

# ------------------------------------------------------------ world

nb_init
FILES=(holes90 dense extents)
# the three files (at most 3 x SIZE of data) and room for ext4's metadata
nb_make_backing $((3 * SIZE_MIB + 512))
# one copy at a time, removed after each run
nb_make_sink $((SIZE_MIB + 256))
nb_mount_lacunafs "$LACUNAFS"

nb_log "writing holes90.dat, dense.dat, extents.dat ($SIZE_MIB MiB each) on the backing ext4"
python3 - "$NB_BACKING" "$SIZE_B" "$EXTENTS" <<'EOF' || nb_die "writing the files failed"
import os, random, sys

d, size, extents = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
MIB = 1 << 20

def make(name, runs):
    """runs: (offset, length) of data, in file order; the rest are holes"""
    fd = os.open(os.path.join(d, name), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.ftruncate(fd, size)  # first, so no write extends the file
    for off, length in runs:
        while length:
            n = min(length, MIB)
            os.pwrite(fd, os.urandom(n), off)
            off += n
            length -= n
    os.close(fd)

blocks = size // MIB
picked = sorted(random.Random(90).sample(range(blocks), round(blocks / 10)))
make("holes90.dat", [(b * MIB, MIB) for b in picked])
make("dense.dat", [(0, size)])
period = size // extents // 4096 * 4096
dlen = period // 2 // 4096 * 4096
if dlen == 0:
    sys.exit("%d extents do not fit in %d bytes with 4 KiB pages" % (extents, size))
make("extents.dat", [(i * period, dlen) for i in range(extents)])
EOF
sync

# the layout of each, as lacuna map sees it through the mount
declare -A DATA_B HOLE_B SEGS
for f in "${FILES[@]}"; do
	j=$("$LACUNA" map --json "$NB_MNT/$f.dat") || nb_die "lacuna map $f.dat failed"
	DATA_B[$f]=$(sed 's/.*"data_bytes":\([0-9]*\).*/\1/' <<<"$j")
	HOLE_B[$f]=$(sed 's/.*"hole_bytes":\([0-9]*\).*/\1/' <<<"$j")
	SEGS[$f]="$(grep -o '"kind":"data"' <<<"$j" | wc -l) data + $(grep -o '"kind":"hole"' <<<"$j" | wc -l) hole segments"
done

# lacunad from a configuration file, for its stats_file (the --export
# mode has none); nb_cleanup stops it with the other servers
STATS=$NB_TMP/lacunad.stats
NB_PORT[lacunad]=$(nb_free_port)
NB_SERVERS+=(lacunad)
cat >"$NB_TMP/lacunad.conf" <<EOF
listen = 127.0.0.1:${NB_PORT[lacunad]}
stats_file = $STATS
state_dir = $NB_TMP/lacunad.state
$NB_MNT 127.0.0.1/32(rw,no_root_squash,fsid=root)
EOF
setsid "$LACUNAD" --config "$NB_TMP/lacunad.conf" -f </dev/null >"$NB_TMP/lacunad.log" 2>&1 &
NB_PID[lacunad]=$!
nb_wait_listen lacunad
SERVERS=(lacunad)
# files exist before Ganesha starts: it caches directory contents
if [ "$USE_GANESHA" = 1 ]; then
	nb_start_ganesha ganesha "$NB_BACKING"
	SERVERS+=(ganesha)
fi

url() { # server file
	echo "nfs://127.0.0.1:${NB_PORT[$1]}/$2.dat"
}
cp_url() { # server file (libnfs's form)
	echo "nfs://127.0.0.1//$2.dat?version=4&nfsport=${NB_PORT[$1]}"
}
# pids whose CPU time counts for a server: itself, and lacunafs under lacunad
server_pids() {
	case $1 in
	lacunad) echo "${NB_PID[lacunad]} $NB_LFS_PID" ;;
	*) echo "${NB_PID[$1]}" ;;
	esac
}
ticks_of() {
	local p t=0
	for p in $(server_pids "$1"); do
		t=$((t + $(nb_ticks "$p")))
	done
	echo "$t"
}
# stat_of KEY: a counter of lacunad's stats file (rewritten once a second)
stat_of() {
	awk -v k="$1" '$1 == k { print $2 }' "$STATS"
}

# ------------------------------------------------------------ one copy

# copy CASE FILE: one copy, printing "ns=... wire=... ticks=... cpu_ns=..."
# CASE: rp (nfs-get, lacunad), rd (nfs-get --read, lacunad), cp (nfs-cp,
# lacunad), grd (nfs-get --read, ganesha), gcp (nfs-cp, ganesha)
# shellcheck disable=SC2317 # run through nb_guarded
copy() {
	local c=$1 f=$2 s=lacunad t0 t1 c0 c1 out wire TIMEFORMAT='%3U %3S'
	local -a cmd
	case $c in
	g*) s=ganesha ;;
	esac
	case $c in
	rp) cmd=("$LACUNA" nfs-get ${DEPTH:+--depth "$DEPTH"} "$(url $s "$f")") ;;
	rd | grd) cmd=("$LACUNA" nfs-get --read ${DEPTH:+--depth "$DEPTH"} "$(url $s "$f")") ;;
	cp | gcp) cmd=(nfs-cp "$(cp_url $s "$f")") ;;
	esac
	rm -f "$NB_SINK/out"
	c0=$(ticks_of $s)
	t0=$(nb_now_ns)
	{ time "${cmd[@]}" "$NB_SINK/out" >"$NB_TMP/copy.out" 2>&1; } 2>"$NB_TMP/copy.time" ||
		nb_die "$c $f: ${cmd[*]} failed: $(tail -n 3 "$NB_TMP/copy.out")"
	t1=$(nb_now_ns)
	c1=$(ticks_of $s)
	case $c in
	cp | gcp) wire=0 xfer=$(((t1 - t0) / 1000)) ;;
	*)
		wire=$(nfs_get_wire <"$NB_TMP/copy.out")
		xfer=$(nfs_get_time <"$NB_TMP/copy.out" | awk '{ printf "%.0f", $1 * 1e6 }')
		if [ -z "$wire" ] || [ -z "$xfer" ]; then
			nb_die "cannot read nfs-get's report: $(cat "$NB_TMP/copy.out")"
		fi
		;;
	esac
	echo "ns=$((t1 - t0)) xfer_us=$xfer wire=$wire ticks=$((c1 - c0))" \
		"cpu_ns=$(awk '{ printf "%.0f", ($1 + $2) * 1e9 }' "$NB_TMP/copy.time")"
}

# nfs_get_wire, nfs_get_time: from nfs-get's report on stdin, the bytes
# it received during the copy ("on the wire N", RPC record marks
# included) and the time of the copy without the session's setup
nfs_get_wire() {
	sed -n 's/^received:.* on the wire \([0-9][0-9]*\) (.*/\1/p'
}
nfs_get_time() {
	sed -n 's/^time \([0-9.][0-9.]*\) s:.*/\1/p'
}

# ------------------------------------------------------------ checked pass

CASES=(rp rd cp)
[ "$USE_GANESHA" = 1 ] && CASES+=(grd gcp)
case_name() {
	case $1 in
	rp) echo "lacunad  nfs-get (READ_PLUS)" ;;
	rd) echo "lacunad  nfs-get --read (READ)" ;;
	cp) echo "lacunad  nfs-cp (v4.0 READ)" ;;
	grd) echo "ganesha  nfs-get --read (READ)" ;;
	gcp) echo "ganesha  nfs-cp (v4.0 READ)" ;;
	esac
}

declare -A DU XCHECK
for f in "${FILES[@]}"; do
	nb_warm "$NB_BACKING/$f.dat" "$NB_MNT/$f.dat"
done
for f in "${FILES[@]}"; do
	for c in "${CASES[@]}"; do
		nb_log "checked copy: $f.dat, $(case_name "$c")"
		if [ "$c" = rp ] || [ "$c" = rd ]; then
			sleep 1.2 # a fresh stats file before and after
			b0=$(stat_of bytes_out)
		fi
		o=$(copy "$c" "$f") || exit 1
		[ "$c" = rp ] && [ -z "${INFLIGHT:-}" ] &&
			INFLIGHT=$(sed -n 's/.*calls, \([0-9][0-9]*\) in flight$/\1/p' "$NB_TMP/copy.out")
		cmp -s "$NB_SINK/out" "$NB_BACKING/$f.dat" ||
			nb_die "$(case_name "$c"): the copy of $f.dat differs from the file"
		DU[$c,$f]=$(du -B1 "$NB_SINK/out" | cut -f1)
		rm -f "$NB_SINK/out"
		if [ "$c" = rp ] || [ "$c" = rd ]; then
			sleep 1.2
			XCHECK[$c,$f]="$(nb_field wire <<<"$o") $(($(stat_of bytes_out) - b0))"
		fi
	done
done

# Ganesha's READ_PLUS, for the record: the first MiB of holes90.dat
GANESHA_RP=""
if [ "$USE_GANESHA" = 1 ]; then
	GANESHA_RP=$("$LACUNA" nfs-map --length 1M "$(url ganesha holes90)" 2>&1 | tail -n 2)
fi

# ------------------------------------------------------------ timed runs

declare -A NS XFER WIRE TICKS CCPU PAIR PAIRX
# timed CASE FILE: one guarded run, its figures appended to the lists
timed() {
	local c=$1 f=$2
	nb_log "run $((r + 1))/$RUNS: $f.dat, $(case_name "$c")"
	nb_guarded "$NB_TMP/m.out" "$NB_BACKING/$f.dat $NB_MNT/$f.dat" copy "$c" "$f" ||
		nb_die "copy $c $f failed"
	rm -f "$NB_SINK/out"
	nb_log "  $(awk '{ for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
		printf "wall %.3f s, nfs-get clock %.3f s, wire %d bytes", v["ns"] / 1e9,
			v["xfer_us"] / 1e6, v["wire"] }' "$NB_TMP/m.out")"
	NS[$c,$f]+="$(nb_field ns <"$NB_TMP/m.out") "
	XFER[$c,$f]+="$(nb_field xfer_us <"$NB_TMP/m.out") "
	WIRE[$c,$f]+="$(nb_field wire <"$NB_TMP/m.out") "
	TICKS[$c,$f]+="$(nb_field ticks <"$NB_TMP/m.out") "
	CCPU[$c,$f]+="$(nb_field cpu_ns <"$NB_TMP/m.out") "
}
# the last figure of a list
last() { echo "${1% }" | awk '{ print $NF }'; }

LOAD0=$(cut -d' ' -f1-3 /proc/loadavg)
awk -v l="${LOAD0%% *}" 'BEGIN { exit !(l > 0.5) }' &&
	echo "$NB_NAME: warning: load average $LOAD0 at the start: figures will be noisy" >&2
for ((r = 0; r < RUNS; r++)); do
	# READ_PLUS and READ of one file back to back (which first alternates),
	# so that each pair sees the same load: the targets use the median of
	# the pairs' ratios
	for f in "${FILES[@]}"; do
		if ((r % 2)); then
			timed rd "$f"
			timed rp "$f"
		else
			timed rp "$f"
			timed rd "$f"
		fi
		PAIR[$f]+="$(nb_calc "$(last "${NS[rd,$f]}") / $(last "${NS[rp,$f]}")") "
		PAIRX[$f]+="$(nb_calc "$(last "${XFER[rd,$f]}") / $(last "${XFER[rp,$f]}")") "
	done
	OTHERS=("${CASES[@]:2}")
	for ((k = 0; k < ${#OTHERS[@]}; k++)); do
		c=${OTHERS[$(((k + r) % ${#OTHERS[@]}))]}
		case $c in cp | gcp) [ $r -lt "$CP_RUNS" ] || continue ;; esac
		for f in "${FILES[@]}"; do
			timed "$c" "$f"
		done
	done
done

# ------------------------------------------------------------ report

GVER=$(dpkg-query -W -f '${Version}' nfs-ganesha 2>/dev/null || echo "?")
echo "readplus-bench: three $SIZE_MIB MiB files on an ext4 loop image, cached; medians of $RUNS runs"
echo "  (nfs-cp: $CP_RUNS); GB = 10^9 bytes, MiB = 2^20 bytes"
echo "  kernel $(uname -r), $(nproc) CPUs shared by client, server and lacunafs"
echo "  lacunad: $LACUNAD exporting lacunafs over ext4, port ${NB_PORT[lacunad]}"
[ "$USE_GANESHA" = 1 ] &&
	echo "  ganesha: NFS-Ganesha $GVER, FSAL VFS exporting the backing ext4 directory, port ${NB_PORT[ganesha]}"
echo "  nfs-get: $LACUNA nfs-get${DEPTH:+ --depth $DEPTH} (${INFLIGHT:-?} calls in flight); nfs-cp: libnfs-utils $(dpkg-query -W -f '${Version}' libnfs-utils 2>/dev/null)"
echo "  wall s: the whole command; copy s: nfs-get's own clock (after the session's setup);"
echo "  GB/s: file size / wall s; wire bytes: what nfs-get received during the copy"
echo

med() { echo "${1:-}" | nb_median; }
declare -A MNS MXFER MWIRE
for f in "${FILES[@]}"; do
	case $f in
	holes90) what="90% holes in 1 MiB runs" ;;
	dense) what="no holes" ;;
	extents) what="$EXTENTS data extents" ;;
	esac
	printf '%s.dat: %s; data %.1f MiB, holes %.1f MiB (%s)\n' "$f" "$what" \
		"$(nb_calc "${DATA_B[$f]} / 1048576")" "$(nb_calc "${HOLE_B[$f]} / 1048576")" "${SEGS[$f]}"
	printf '  %-31s %7s %13s %7s %7s %13s %9s %9s %8s %8s\n' "" wall "wall s" "" copy "" "" \
		"copy MiB" server client
	printf '  %-31s %7s %13s %7s %7s %13s %9s %9s %8s %8s\n' "server   client" s "min-max" GB/s s \
		"wire bytes" wire/data allocated "CPU ms" "CPU ms"
	for c in "${CASES[@]}"; do
		MNS[$c,$f]=$(med "${NS[$c,$f]}")
		MXFER[$c,$f]=$(med "${XFER[$c,$f]}")
		MWIRE[$c,$f]=$(med "${WIRE[$c,$f]}" | awk '{ printf "%.0f", $1 }')
		wire=${MWIRE[$c,$f]}
		wd=$(nb_calc "$wire / ${DATA_B[$f]}")
		xf=$(nb_calc "${MXFER[$c,$f]} / 1e6")
		case $c in cp | gcp) wire="-" wd="-" xf="-" ;; esac
		printf '  %-31s %7.3f %13s %7.3f %7s %13s %9s %9.1f %8.0f %8.0f\n' "$(case_name "$c")" \
			"$(nb_calc "${MNS[$c,$f]} / 1e9")" \
			"$(tr ' ' '\n' <<<"${NS[$c,$f]}" | sed '/^$/d' | sort -g |
				awk 'NR == 1 { lo = $1 } { hi = $1 } END { printf "%.3f-%.3f", lo / 1e9, hi / 1e9 }')" \
			"$(nb_calc "$SIZE_B / ${MNS[$c,$f]}")" "$xf" \
			"$wire" "$wd" "$(nb_calc "${DU[$c,$f]} / 1048576")" \
			"$(nb_calc "$(med "${TICKS[$c,$f]}") * 1000 / $NB_CLK_TCK")" \
			"$(nb_calc "$(med "${CCPU[$c,$f]}") / 1e6")"
	done
	echo
done

echo "Wire bytes cross-check (checked pass): what nfs-get counted as received during the"
echo "copy against lacunad's bytes_out over the whole session (its stats file; the setup,"
echo "OPEN, CLOSE and teardown replies included):"
for f in "${FILES[@]}"; do
	for c in rp rd; do
		read -r a b <<<"${XCHECK[$c,$f]}"
		printf '  %-12s %-22s nfs-get %13s  lacunad %13s  (+%s)\n' "$f.dat" \
			"$(case_name "$c" | cut -c10-)" "$a" "$b" "$((b - a))"
	done
done
sleep 1.2 # the stats file, rewritten once a second, after the last run
printf '  lacunad READ_PLUS replies in all: %s atomic, %s not atomic, %s unstable\n' \
	"$(stat_of read_plus_atomic)" "$(stat_of read_plus_not_atomic)" "$(stat_of read_plus_unstable)"
if [ -n "$GANESHA_RP" ]; then
	echo "  Ganesha's READ_PLUS, first MiB of holes90.dat (lacuna nfs-map --length 1M):"
	sed 's/^/    /' <<<"$GANESHA_RP"
fi
echo

verdict() { awk "BEGIN { exit !($1) }" && echo met || echo "NOT MET"; }
# READ time / READ_PLUS time: median over the back-to-back pairs (judged),
# the same on nfs-get's clock, and the ratio of the medians of the table
x() { echo "${PAIR[$1]}" | nb_median; }
xc() { echo "${PAIRX[$1]}" | nb_median; }
xm() { nb_calc "${MNS[rd,$1]} / ${MNS[rp,$1]}"; }
S_H=$(x holes90)
W_H=$(nb_calc "100 * (${MWIRE[rp,holes90]} - ${DATA_B[holes90]}) / ${DATA_B[holes90]}")
S_D=$(x dense)
S_E=$(x extents)
printf '%-53s %8s %8s %8s\n' "Target (nfs-get from lacunad, READ_PLUS against READ)" "pairs" "clock" "medians"
printf '%-53s %7.3fx %7.3fx %7.3fx  %s\n' "holes90.dat: READ_PLUS >= 5x faster" "$S_H" "$(xc holes90)" \
	"$(xm holes90)" "$(verdict "$S_H >= 5")"
printf '%-53s %7.3f%% %16s %s\n' "holes90.dat: READ_PLUS wire bytes within 1% of data" "$W_H" "" \
	"$(verdict "$W_H <= 1 && $W_H >= -1")"
printf '%-53s %7.3fx %7.3fx %7.3fx  %s\n' "dense.dat: READ_PLUS throughput >= 0.95x READ" "$S_D" \
	"$(xc dense)" "$(xm dense)" "$(verdict "$S_D >= 0.95")"
printf '%-53s %7.3fx %7.3fx %7.3fx  %s\n' "extents.dat: READ_PLUS throughput >= 1x READ" "$S_E" \
	"$(xc extents)" "$(xm extents)" "$(verdict "$S_E >= 1")"
echo "  pairs: median over the runs of READ wall time / READ_PLUS wall time, the two run"
echo "  back to back (judged); clock: the same on nfs-get's own clock; medians: the ratio"
echo "  of the medians in the tables above. Per pair (wall):"
for f in "${FILES[@]}"; do
	printf '    %-12s %s\n' "$f.dat" "$(echo "${PAIR[$f]}" | awk '{ for (i = 1; i <= NF; i++) printf "%.2fx ", $i }')"
done
echo "  runs discarded because someone dropped the page cache meanwhile: $NB_DISCARDED"
echo "  load average at start: $LOAD0, at end: $(cut -d' ' -f1-3 /proc/loadavg)"
exit 0
