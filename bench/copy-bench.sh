#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# copy-bench.sh: what server-side COPY buys over a client-side copy of a
# sparse file on lacunad, on loopback, in one run. Not a test: `make
# check` never runs it. Needs root.
#
# World (bench/nfs-common.sh): a fresh ext4 loop image, lacunafs over it,
# lacunad exporting the lacunafs mount (a configuration file, for its
# stats_file), and one --size (default 1 GiB) file of random bytes cut
# into 1 MiB runs, 10% of them data and 90% holes (holes90.dat, the file of
# bench/readplus-bench.sh). Each case copies it to a new file on the same
# export:
#   copy        server-side COPY into an empty file made on the mount
#               first (PUTFH src, SAVEFH, PUTFH dst, COPY with ca_count 0,
#               then again from where a short copy stopped), then COMMIT;
#               lacunad writes only the data and keeps the holes
#   rp          the client copies, sparse-aware: READ_PLUS 960 KiB at a
#               time, WRITE of the data segments only (and of the last
#               byte, for the size), COMMIT
#   rw          the client copies, naive: READ 960 KiB at a time, WRITE of
#               every byte (holes as zeros), COMMIT
# All three by one raw NFSv4.2 client (tests/py/lt_nfs4raw.py, one session,
# one call at a time, so the client-side cases are not pipelined as the
# kernel's would be: they show the bytes moved more than the best speed).
# Time is the wall time of the whole copy; each figure is the median of
# --runs (default 3) runs, the source in the page cache (nb_guarded). For
# each case the table also gives the bytes lacunad received and sent
# (bytes_in, bytes_out of its stats file) and the bytes the copy
# allocates. GB means 10^9 bytes.
#
# Exit status: 0 done, 1 usage or setup error, 130 interrupted.

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
NB_NAME=copy-bench
# shellcheck source=bench/nfs-common.sh
. "$SCRIPT_DIR/nfs-common.sh"

SIZE=1G
RUNS=3
BUILD_DIR=""

usage() {
	cat <<EOF
usage: $0 [options] [BUILD_DIR]

Server-side COPY against client-side copies of a file that is 90% holes,
on lacunad. Needs root. The comment at the top of this script explains
every figure.

  BUILD_DIR           build directory with gateway/lacunad, fusefs/lacunafs
                      and tools/lacuna (default: \$top_builddir, else the
                      directory above this script)
  --size N[M|G]       size of the file (default 1G; a whole number of MiB)
  --runs N            timed runs of each case, medians (default 3)
  --port-base P       first TCP port tried for lacunad (default 26049)
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
[[ $RUNS =~ ^[1-9][0-9]*$ ]] || nb_die "--runs must be a positive integer"

: "${top_builddir:=$(cd "$SCRIPT_DIR/.." && pwd)}"
[ -n "$BUILD_DIR" ] && top_builddir=$BUILD_DIR
LACUNAD=$top_builddir/gateway/lacunad
LACUNAFS=$top_builddir/fusefs/lacunafs
LACUNA=$top_builddir/tools/lacuna
RAW=$SCRIPT_DIR/../tests/py/lt_nfs4raw.py

nb_require mkfs.ext4 mount umount mountpoint setsid ss awk python3 fusermount3 cmp
[ -c /dev/fuse ] || nb_die "no /dev/fuse"
for b in "$LACUNAD" "$LACUNAFS" "$LACUNA"; do
	[ -x "$b" ] || nb_die "$b not built (make -C $top_builddir)"
done
[ -r "$RAW" ] || nb_die "no $RAW"

nb_init
# the source, one dense copy at most, and room for ext4's metadata
nb_make_backing $((2 * SIZE_MIB + 512))
nb_mount_lacunafs "$LACUNAFS"

nb_log "writing holes90.dat ($SIZE_MIB MiB, 10% data) on the backing ext4"
python3 - "$NB_BACKING" "$SIZE_B" <<'PY' || nb_die "writing the file failed"
import os, random, sys

d, size = sys.argv[1], int(sys.argv[2])
MIB = 1 << 20
fd = os.open(os.path.join(d, "holes90.dat"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
os.ftruncate(fd, size)
blocks = size // MIB
for b in sorted(random.Random(90).sample(range(blocks), round(blocks / 10))):
    os.pwrite(fd, os.urandom(MIB), b * MIB)
os.close(fd)
PY
sync
DATA_B=$("$LACUNA" map --json "$NB_MNT/holes90.dat" | sed 's/.*"data_bytes":\([0-9]*\).*/\1/')

STATS=$NB_TMP/lacunad.stats
NB_PORT[lacunad]=$(nb_free_port)
NB_SERVERS+=(lacunad)
cat >"$NB_TMP/lacunad.conf" <<CONF
listen = 127.0.0.1:${NB_PORT[lacunad]}
stats_file = $STATS
state_dir = $NB_TMP/lacunad.state
grace = off
$NB_MNT 127.0.0.1/32(rw,no_root_squash,fsid=root)
CONF
setsid "$LACUNAD" --config "$NB_TMP/lacunad.conf" -f </dev/null >"$NB_TMP/lacunad.log" 2>&1 &
NB_PID[lacunad]=$!
nb_wait_listen lacunad
PORT=${NB_PORT[lacunad]}

stat_of() { awk -v k="$1" '$1 == k { print $2 }' "$STATS"; }
# fresh_stats: wait for a stats file written after now (once a second)
fresh_stats() {
	local i
	touch "$NB_TMP/mark"
	for ((i = 0; i < 100; i++)); do
		[ "$STATS" -nt "$NB_TMP/mark" ] && return 0
		sleep 0.05
	done
	nb_die "lacunad does not write $STATS"
}

# The copies, by one raw NFSv4.2 client (one session, one call at a time):
#   copy: COPY from where the last one stopped until it copies nothing
#   rp: READ_PLUS 960 KiB at a time, WRITE of the data segments only
#   rw: READ 960 KiB at a time, WRITE of every byte
# then COMMIT (opcode 5)
COPY_PY='
import os, struct, sys
sys.path.insert(0, os.path.dirname(sys.argv[1]))
from lt_nfs4raw import (NFS4_CONTENT_DATA, Conn, copy, errname, lookup, noargs, putfh,
                        read, read_plus, u32, u64, write)
CH = (1 << 20) - (64 << 10)  # a WRITE of it fits in a 1 MiB request
how, conn = sys.argv[5], Conn(int(sys.argv[2]), minor=2)
def call(ops, what):
    st, r = conn.call(ops)
    if st:
        sys.exit("%s: %s" % (what, errname(st)))
    return r[-1][2]
def fh(name):
    return call([noargs("PUTROOTFH"), lookup(name), noargs("GETFH")], "LOOKUP " + name)
src, dst = fh(sys.argv[3]), fh(sys.argv[4])
done = 0
while how == "copy":
    n = call([putfh(src), noargs("SAVEFH"), putfh(dst), copy(done, done, 0)], "COPY")["count"]
    if n == 0:
        break
    done += n
while how == "rp":
    res = call([putfh(src), read_plus(done, CH)], "READ_PLUS")
    hole_end = False
    for kind, off, data in res["segs"]:
        if kind == NFS4_CONTENT_DATA and data:
            call([putfh(dst), write(off, data, 0)], "WRITE")
        hole_end = kind != NFS4_CONTENT_DATA
        done = max(done, off + (data if hole_end else len(data)))
    if res["eof"]:
        if hole_end:
            # the size of a file ending in a hole: its last byte, a zero
            call([putfh(dst), write(done - 1, bytes(1), 0)], "WRITE")
        break
while how == "rw":
    res = call([putfh(src), read(done, CH)], "READ")
    if res["data"]:
        call([putfh(dst), write(done, res["data"], 0)], "WRITE")
    done += len(res["data"])
    if res["eof"]:
        break
call([putfh(dst), (5, u64(0) + u32(0))], "COMMIT")
'

# run CASE DEST: one copy of holes90.dat into DEST (a name on the export),
# printing "ns=... in=... out=... blocks=..."
# shellcheck disable=SC2317 # run through nb_guarded
run() {
	local c=$1 dst=$2 t0 t1 in0 out0
	rm -f "$NB_MNT/$dst"
	: >"$NB_MNT/$dst"
	fresh_stats
	in0=$(stat_of bytes_in)
	out0=$(stat_of bytes_out)
	t0=$(nb_now_ns)
	case $c in
	copy | rp | rw)
		python3 -c "$COPY_PY" "$RAW" "$PORT" holes90.dat "$dst" "$c" || return 1
		;;
	esac
	t1=$(nb_now_ns)
	fresh_stats
	echo "ns=$((t1 - t0)) in=$(($(stat_of bytes_in) - in0)) out=$(($(stat_of bytes_out) - out0))" \
		"blocks=$(stat -c %b "$NB_BACKING/$dst")"
}

CASES=(copy rp rw)
nb_log "holes90.dat: $SIZE_B bytes, $DATA_B of data; $RUNS runs of each case"
declare -A NS IN OUT BLK
for c in "${CASES[@]}"; do
	# the first copy is checked byte for byte, untimed
	run "$c" check.dat >/dev/null || nb_die "$c failed"
	cmp "$NB_MNT/holes90.dat" "$NB_MNT/check.dat" || nb_die "$c: the copy differs"
	rm -f "$NB_MNT/check.dat"
	for ((i = 0; i < RUNS; i++)); do
		nb_guarded "$NB_TMP/out" "$NB_MNT/holes90.dat" run "$c" copy.dat || nb_die "$c failed"
		NS[$c]+=" $(nb_field ns <"$NB_TMP/out")"
		IN[$c]=$(nb_field in <"$NB_TMP/out")
		OUT[$c]=$(nb_field out <"$NB_TMP/out")
		BLK[$c]=$(nb_field blocks <"$NB_TMP/out")
	done
done

printf '\n%-8s %10s %10s %14s %14s %14s\n' case "time (s)" "GB/s" "bytes in" "bytes out" \
	"allocated"
for c in "${CASES[@]}"; do
	ns=$(echo "${NS[$c]}" | nb_median)
	printf '%-8s %10s %10s %14s %14s %14s\n' "$c" "$(nb_calc "$ns / 1e9")" \
		"$(nb_calc "$SIZE_B / $ns")" "${IN[$c]}" "${OUT[$c]}" $((BLK[$c] * 512))
done
copy_ns=$(echo "${NS[copy]}" | nb_median)
for c in rp rw; do
	echo "COPY is $(nb_calc "$(echo "${NS[$c]}" | nb_median) / $copy_ns")x faster than $c"
done
[ "$NB_DISCARDED" = 0 ] || echo "($NB_DISCARDED runs discarded: the page cache was dropped)"
