#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# READ_PLUS and SEEK on the wire, checked independently of our own
# decoders: dumpcap captures lacunad's port on the loopback while
#  - tests/py/lt_readplus.py trace sends READ_PLUS and SEEK calls one at a
#    time (a file's whole map call after call, count 0, ranges inside
#    holes, at and past EOF, SEEK of both kinds, NXIO, an unknown
#    sa_what) on sparse files of several shapes (data and holes, all
#    hole, empty, dense, 512 small data runs, 4 GiB and 2 TiB sparse) on
#    lacunafs over ext4, and prints each reply it decoded with its xid;
#  - `lacuna nfs-map --json` maps some of the files with READ_PLUS
#    (pipelined, several calls in flight) and `lacuna nfs-get` copies one.
# Then tshark, reading the capture in two passes, must decode every reply
# the trace printed, with the same opcode and status, the same eof, a
# segment count (the array's length on the wire) equal to the segments it
# decoded, and the same segment types, offsets, hole lengths and data
# lengths (tshark does not flag a miscounted segment array: the values are
# compared); for SEEK the same eof and offset. The READ_PLUS replies of
# each `lacuna nfs-map` connection, as tshark decodes them, must make the
# map it printed. And the capture as a whole: no malformed packet, no
# expert error, a reply for every call, every reply accepted.
# Skips (77) where tshark or dumpcap is missing or cannot capture on lo.

. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/lib_nfs.sh"
lt_init
[ "$LT_NFS_SERVER" = lacunad ] || lt_skip "checks lacunad's READ_PLUS (Ganesha's is broken, DESIGN.md)"
nfs_require_server
lt_require_cmd python3
lt_require_fuse
if ! command -v tshark >/dev/null || ! command -v dumpcap >/dev/null; then
	lt_skip "tshark/dumpcap not installed (package tshark)"
fi
RP="$top_srcdir/tests/py/lt_readplus.py"
export LACUNA="$top_builddir/tools/lacuna"
[ -x "$LACUNA" ] || lt_hard "lacuna not built at $LACUNA"
CAP="$LT_TMP/rp.pcapng"

nfs_make_export ext4 ext4
python3 - "$NFS_EXPORT" <<'EOF' || lt_hard "making the test files failed"
import os, sys
d = sys.argv[1]
MIB = 1 << 20
def mk(name, size, writes):
    fd = os.open(os.path.join(d, name), os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)
    os.ftruncate(fd, size)
    for off, data in writes:
        os.pwrite(fd, data, off)
    os.close(fd)
mk("mixed", 3 * MIB + 5, [(0, b"m" * 65536), (MIB + 4096, os.urandom(70000))])
mk("allhole", 2 * MIB + 3, [])
mk("empty", 0, [])
mk("dense", 0, [(0, os.urandom(MIB + 777))])
mk("striped", 4 * MIB, [(o, b"s" * 100) for o in range(0, 4 * MIB, 8192)])
mk("big", 4 << 30, [(1 << 30, b"b" * 5000), ((4 << 30) - 10, b"end")])
mk("huge", (2 << 40) + 12345, [((1 << 40) + 777, b"h" * 10000)])
EOF
files=(mixed allhole empty dense striped big huge)
mapped=(mixed allhole empty dense striped big)

nfs_start "$NFS_EXPORT" --threads 2
nfs_capture_start "$CAP" || lt_skip "$NFS_CAP_WHY"

# ---- traffic ------------------------------------------------------------
# the tools first, one connection each, in a known order
for f in "${mapped[@]}"; do
	if nfs_run "$LACUNA" nfs-map --json "nfs://127.0.0.1:$NFS_PORT/$f" \
		>"$LT_TMP/map-$f.json" 2>"$LT_TMP/err"; then
		lt_ok "client: lacuna nfs-map $f"
	else
		lt_fail "client: lacuna nfs-map $f: $(head -c 300 "$LT_TMP/err")"
	fi
done
if nfs_run "$LACUNA" nfs-get "nfs://127.0.0.1:$NFS_PORT/mixed" "$LT_TMP/mixed.copy" \
	>/dev/null 2>"$LT_TMP/err"; then
	lt_check "client: lacuna nfs-get copies mixed" cmp -s "$NFS_BACKING/mixed" "$LT_TMP/mixed.copy"
else
	lt_fail "client: lacuna nfs-get mixed: $(head -c 300 "$LT_TMP/err")"
fi
if nfs_run python3 "$RP" trace "$NFS_PORT" "${files[@]}" >"$LT_TMP/trace" 2>"$LT_TMP/err"; then
	lt_ok "client: lt_readplus.py trace ($(wc -l <"$LT_TMP/trace") replies)"
else
	lt_fail "client: lt_readplus.py trace: $(tail -c 300 "$LT_TMP/err")"
fi
lt_check "the server lives" nfs_alive
sleep 0.5
nfs_capture_stop
nfs_stop

# ---- the capture ----------------------------------------------------------
nfs_cap_check "READ_PLUS/SEEK capture" "$CAP"
nfs_ts "$CAP" -Y 'rpc.msgtyp == 1 && (nfs.opcode == 68 || nfs.opcode == 69)' -T fields \
	-E occurrence=a -E aggregator=, -E separator='|' -e rpc.xid -e tcp.stream \
	-e nfs.opcode -e nfs.nfsstat4 -e nfs.eof -e nfs.content.type -e nfs.offset4 \
	-e nfs.length4 -e nfs.read.data_length -e rpc.array.len >"$LT_TMP/fields"
lt_log "tshark: $(wc -l <"$LT_TMP/fields") frames with READ_PLUS or SEEK replies"

# run_checks LABEL ARGS...: one lt_ok/lt_fail per line the script prints
run_checks() { lt_run_checks "$1" "$LT_NFS_TIMEOUT" python3 "$RP" "${@:2}"; }
run_checks "wire" wirecheck "$LT_TMP/trace" "$LT_TMP/fields"

# the connections in order (tshark numbers TCP streams as they start):
# one per nfs-map, in the order of $mapped, then nfs-get's, the trace's
mapfor=("${mapped[@]}")
mapfile -t streams < <(nfs_ts "$CAP" -Y 'rpc.msgtyp == 0' -T fields -e tcp.stream |
	awk '!seen[$1]++')
lt_check_eq "one connection per client run" $((${#mapfor[@]} + 2)) "${#streams[@]}"
for ((i = 0; i < ${#mapfor[@]}; i++)); do
	f=${mapfor[$i]}
	[ "$f" = empty ] && continue # no READ_PLUS needed for an empty file
	run_checks "wire, lacuna nfs-map $f" wiremap "$LT_TMP/fields" "${streams[$i]:--1}" \
		"$LT_TMP/map-$f.json"
done
lt_done
