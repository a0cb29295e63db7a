#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Sparse files through the Linux kernel's NFSv4.2 client, in the test VM
# (tests/vm): lseek(SEEK_DATA/SEEK_HOLE) becomes SEEK, fallocate(2)
# ALLOCATE, fallocate(PUNCH_HOLE) DEALLOCATE, and what the client sees
# must be what the backing filesystem holds.
#
# lacunad serves two lacunafs mounts, one over ext4 and one over XFS, from
# one configuration file (which also names its statistics file); the
# guest mounts both with vers=4.2 in one boot. On each:
#
# - SEEK: files made on the host through lacunafs (several data runs and
#   holes, starting with data or with a hole, ending with a hole or with
#   data, all hole) are walked with SEEK_DATA/SEEK_HOLE in the guest and
#   probed at every segment boundary, its neighbours, mid-segment, end of
#   file and past it; the host walks and probes the backing file the same
#   way and the answers must be identical (the client's generic answers,
#   one data segment then the hole at EOF, would differ). The contents
#   read back as the layout made them (holes as zeros).
# - ALLOCATE: `fallocate -l` creates a 4 MiB file, `fallocate -o -l`
#   allocates inside a sparse file and past its end: the backing file's
#   size and allocated blocks (stat %b) grow accordingly, data already
#   there is kept, the rest reads as zeros.
# - DEALLOCATE: `fallocate --punch-hole` of an aligned range, of an
#   unaligned one and of the file's tail: the backing file keeps its size,
#   loses the blocks, has holes there (SEEK_HOLE/SEEK_DATA on the backing
#   file) reading as zeros, and the guest's SEEK map after the punches is
#   the backing file's.
# - `cp --sparse=always` of two sparse files from the mount to the guest's
#   tmpfs: same bytes (cmp), same size, blocks about the data size only;
#   and back onto the mount: the backing copy is sparse too.
#
# Then the statistics file must count the SEEK, ALLOCATE and DEALLOCATE
# operations the guest made (at least the explicit ones), ALLOCATE and
# DEALLOCATE without errors: proof that they reached lacunad rather than
# being emulated by the client. About 20-40 s here (TCG), boot included.
#
# Skips (77) where the VM cannot run. LT_NFS_SERVER=ganesha runs the same
# checks against NFS-Ganesha over ext4 alone (no statistics file).

: "${top_srcdir:=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}"
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/vm/vm.sh"
. "$top_srcdir/tests/lib_nfs.sh"
lt_init
nfs_require_server
lt_require_cmd fallocate cmp
SM="$TOOLS/lt_seekmap"
[ -x "$SM" ] || lt_hard "lt_seekmap not built at $SM"
vm_require

# Layouts (lt_seekmap make): S1 starts with data and ends with a hole,
# S2 starts with a hole and ends with data, S3 is all hole.
L_S1="size=8M,data@0+64k,data@1M+128k,data@3M+4k,data@5M+1M"
L_S2="size=4M,data@512k+64k*4/256k,data@3M+1M"
L_S3="size=3M"
S1_DATA=$((64 + 128 + 4 + 1024))k
S2_DATA=$((4 * 64 + 1024))k
# fallocate in the guest: FA1 is new, FA2 starts as L_FA2
L_FA2="size=8M,data@0+64k"
L_FA2_AFTER="$L_FA2,unwritten@2M+1M,unwritten@8M+2M"
# punches in the guest of a file made dense on the host: aligned, not
# aligned (3M+100, 10000 bytes), the tail
L_PU="size=4M,data@0+4M"
L_PU_AFTER="$L_PU,punch@1M+1M,punch@3145828+10000,punch@3584k+512k"

share="$LT_TMP/share"
mkdir -p "$share"
# the guest sees the host's root but not its /tmp, where a build tree may be: a copy
cp "$SM" "$share/lt_seekmap" || lt_hard "cp $SM $share"
GSM=$share/lt_seekmap

# kib N[k]: bytes of N KiB
kib() { echo $((${1%k} * 1024)); }

if [ "$LT_NFS_SERVER" = lacunad ]; then
	fslist="ext4 xfs"
else
	fslist="ext4"
fi
declare -A EXPORT BACKING MNTPATH
for t in $fslist; do
	nfs_make_export "$t" "$t"
	EXPORT[$t]=$NFS_EXPORT
	BACKING[$t]=$NFS_BACKING
	e=$NFS_EXPORT
	for f in s1:$L_S1 s2:$L_S2 s3:$L_S3 fa2:$L_FA2 pu:$L_PU; do
		"$SM" make "$e/${f%%:*}" "${f#*:}" || lt_hard "lt_seekmap make $e/${f%%:*}"
	done
	sync
done

if [ "$LT_NFS_SERVER" = lacunad ]; then
	stats="$LT_TMP/lacunad.stats"
	conf="$LT_TMP/lacunad.conf"
	{
		echo "threads = 2"
		echo "lease_time = 10"
		echo "grace = off"
		echo "stats_file = $stats"
		for t in $fslist; do
			echo "${EXPORT[$t]} 127.0.0.0/8(rw,no_root_squash,$VM_EXPORT_OPTS)"
			MNTPATH[$t]=${EXPORT[$t]}
		done
	} >"$conf"
	nfs_start --config "$conf"
else
	stats=""
	NFS_EXPORT_OPTS=$VM_EXPORT_OPTS nfs_start "${EXPORT[ext4]}"
	MNTPATH[ext4]=/
fi

cat >"$share/guest.sh" <<'GUEST'
# In the VM: everything on /tmp/nfs-* goes through the kernel's NFS client.
r() { echo "$1=$2"; }
step() { echo "# $(cut -d' ' -f1 /proc/uptime) s: $*" >&2; }
drop() { sync; echo 3 >/proc/sys/vm/drop_caches; }
# probes FILE: offsets worth asking about, from FILE's map (as walked here):
# 0, every segment boundary and its neighbours, each segment's middle,
# the size, and past it
probes() {
	awk '$1 == "data" || $1 == "hole" {
		o = $2; e = $2 + $3
		p[o - 1]; p[o]; p[o + 1]; p[int((o + e) / 2)]; p[e - 1]; p[e]; p[e + 1]
	}
	$1 == "size" { p[0]; p[$2 - 1]; p[$2]; p[$2 + 1]; p[$2 + 1048576] }
	END { for (o in p) if (o >= 0) print o }' "$1" | sort -n | tr '\n' ' '
}
blocks() { stat -c '%s %b' "$1"; }

fs_pass() { # fs_pass TYPE PATH: one export, mounted at /tmp/nfs-TYPE
	local t=$1 m=/tmp/nfs-$1 f
	mkdir -p "$m"
	step "$t: mount"
	timeout 120 mount -t nfs4 -o "vers=4.2,port=$PORT,addr=10.0.2.2,proto=tcp,soft,timeo=300,retrans=2" \
		"10.0.2.2:$2" "$m" || return
	r "${t}_mount" ok
	r "${t}_mount_opts" "$(awk -v m="$m" '$2 == m { print $4 }' /proc/mounts)"

	step "$t: SEEK_DATA/SEEK_HOLE"
	for f in s1 s2 s3; do
		"$SM" map "$m/$f" >"$SHARE/$t-$f.map" 2>&1 && r "${t}_${f}_map" ok
		"$SM" probe "$m/$f" $(probes "$SHARE/$t-$f.map") >"$SHARE/$t-$f.probe" 2>&1 &&
			r "${t}_${f}_probe" "$(wc -l <"$SHARE/$t-$f.probe")"
	done
	drop
	"$SM" check "$m/s1" "$L_S1" >&2 && r "${t}_s1_check" ok
	"$SM" check "$m/s2" "$L_S2" >&2 && r "${t}_s2_check" ok
	"$SM" check "$m/s3" "$L_S3" >&2 && r "${t}_s3_check" ok

	step "$t: fallocate"
	fallocate -l 4M "$m/fa1" && r "${t}_fa1" ok
	r "${t}_fa1_stat" "$(blocks "$m/fa1")"
	r "${t}_fa2_stat0" "$(blocks "$m/fa2")"
	fallocate -o 2M -l 1M "$m/fa2" && r "${t}_fa2_in" ok
	fallocate -o 8M -l 2M "$m/fa2" && r "${t}_fa2_past" ok
	r "${t}_fa2_stat" "$(blocks "$m/fa2")"
	drop
	"$SM" check "$m/fa1" "size=4M" >&2 && r "${t}_fa1_check" ok
	"$SM" check "$m/fa2" "$L_FA2_AFTER" >&2 && r "${t}_fa2_check" ok

	step "$t: fallocate --punch-hole"
	r "${t}_pu_stat0" "$(blocks "$m/pu")"
	fallocate --punch-hole -o 1M -l 1M "$m/pu" && r "${t}_pu_aligned" ok
	fallocate --punch-hole -o 3145828 -l 10000 "$m/pu" && r "${t}_pu_unaligned" ok
	fallocate --punch-hole -o 3584k -l 512k "$m/pu" && r "${t}_pu_tail" ok
	r "${t}_pu_stat" "$(blocks "$m/pu")"
	"$SM" map "$m/pu" >"$SHARE/$t-pu.map" 2>&1 && r "${t}_pu_map" ok
	"$SM" probe "$m/pu" $(probes "$SHARE/$t-pu.map") >"$SHARE/$t-pu.probe" 2>&1 &&
		r "${t}_pu_probe" "$(wc -l <"$SHARE/$t-pu.probe")"
	drop
	"$SM" check "$m/pu" "$L_PU_AFTER" >&2 && r "${t}_pu_check" ok

	step "$t: cp --sparse=always"
	for f in s1 s2; do
		cp --sparse=always "$m/$f" "/tmp/$t-$f.copy" && r "${t}_${f}_cp" ok
		cmp "$m/$f" "/tmp/$t-$f.copy" >&2 && r "${t}_${f}_cp_cmp" ok
		r "${t}_${f}_cp_stat" "$(blocks "/tmp/$t-$f.copy")"
		"$SM" map "/tmp/$t-$f.copy" >"$SHARE/$t-$f.copy.map" 2>&1
		cp --sparse=always "/tmp/$t-$f.copy" "$m/$f.back" && r "${t}_${f}_back" ok
		r "${t}_${f}_back_sha" "$(sha256sum <"$m/$f.back" | cut -d' ' -f1)"
		r "${t}_${f}_sha" "$(sha256sum <"/tmp/$t-$f.copy" | cut -d' ' -f1)"
	done

	step "$t: umount"
	umount "$m" && r "${t}_umount" ok
}

for t in $FSLIST; do
	p=MNT_$t
	fs_pass "$t" "${!p}"
done
step done
GUEST

envs=(--env "PORT=$NFS_PORT" --env "SHARE=$share" --env "SM=$GSM" --env "FSLIST=$fslist"
	--env "L_S1=$L_S1" --env "L_S2=$L_S2" --env "L_S3=$L_S3"
	--env "L_FA2_AFTER=$L_FA2_AFTER" --env "L_PU_AFTER=$L_PU_AFTER")
for t in $fslist; do
	envs+=(--env "MNT_$t=${MNTPATH[$t]}")
done

t0=$SECONDS
(cd "$share" && exec "$VM_SH" run --share "$share" --timeout 300 --times "$LT_TMP/times" \
	"${envs[@]}" -- bash "$share/guest.sh") >"$LT_TMP/out" 2>"$LT_TMP/err"
rc=$?
vm_report "$rc" $((SECONDS - t0)) "the server"
lt_check "$LT_NFS_SERVER is alive after the kernel client" nfs_alive

# field N of a "size blocks" value
fld() { echo "$1" | cut -d' ' -f"$2"; }
bstat() { stat -c '%s %b' "$1" 2>/dev/null; }
# map_data_bytes MAPFILE: bytes in data segments of an lt_seekmap map
map_data_bytes() { awk '$1 == "data" { n += $3 } END { print n + 0 }' "$1"; }
# cmp_out DESCRIPTION EXPECTED_FILE ACTUAL_FILE: equal, else show both
cmp_out() {
	if [ -s "$3" ] && cmp -s "$2" "$3"; then
		lt_ok "$1"
	else
		lt_fail "$1"
		diff "$2" "$3" | head -n 20 | sed 's/^/#   (host < > guest) /'
	fi
}

n_seek_calls=0
n_alloc=0
n_dealloc=0
for t in $fslist; do
	b=${BACKING[$t]}
	lt_log "== $t: backing $b, exported as ${MNTPATH[$t]}"
	lt_check_eq "$t: vers=4.2 mount" ok "$(val "${t}_mount")"
	opts=",$(val "${t}_mount_opts"),"
	lt_check "$t: ... mounted as vers=4.2 (${opts:1:-1})" test "${opts/,vers=4.2,/}" != "$opts"

	# ---- SEEK: the guest's walk and probes = the backing file's
	for f in s1 s2 s3; do
		lt_check_eq "$t: $f: SEEK_DATA/SEEK_HOLE walk in the guest" ok "$(val "${t}_${f}_map")"
		"$SM" map "$b/$f" >"$LT_TMP/$t-$f.map.host" 2>&1
		sed "s/^/# $t $f map (guest): /" "$share/$t-$f.map"
		cmp_out "$t: $f: the map through NFS is the backing file's" \
			"$LT_TMP/$t-$f.map.host" "$share/$t-$f.map"
		np=$(val "${t}_${f}_probe")
		lt_check "$t: $f: probed ${np:-no} offsets in the guest" test "${np:-0}" -gt 5
		# shellcheck disable=SC2046 # one offset per word
		"$SM" probe "$b/$f" $(cut -d' ' -f1 "$share/$t-$f.probe") >"$LT_TMP/$t-$f.probe.host" 2>&1
		cmp_out "$t: $f: SEEK_DATA and SEEK_HOLE at each probe = the backing file's" \
			"$LT_TMP/$t-$f.probe.host" "$share/$t-$f.probe"
		n_seek_calls=$((n_seek_calls + 2 * ${np:-0}))
		lt_check_eq "$t: $f: contents through NFS (holes read as zeros)" ok "$(val "${t}_${f}_check")"
	done
	# the maps are the layouts' (else the comparison above proves little)
	lt_check_eq "$t: s1: backing map has its 4 data runs" 4 "$(grep -c '^data' "$LT_TMP/$t-s1.map.host")"
	lt_check_eq "$t: s2: backing map starts with a hole" hole "$(head -n 1 "$LT_TMP/$t-s2.map.host" | cut -d' ' -f1)"
	lt_check_eq "$t: s3: backing map is one hole" "hole 0 3145728 size 3145728" \
		"$(tr '\n' ' ' <"$LT_TMP/$t-s3.map.host" | sed 's/ $//')"

	# ---- ALLOCATE
	lt_check_eq "$t: fallocate -l 4M (a new file)" ok "$(val "${t}_fa1")"
	st=$(bstat "$b/fa1")
	lt_check_eq "$t: ... backing size" 4194304 "$(fld "$st" 1)"
	lt_check "$t: ... backing blocks ($(fld "$st" 2)) cover 4 MiB" test "$(fld "$st" 2)" -ge 8192
	gst=$(val "${t}_fa1_stat")
	lt_check_eq "$t: ... size seen by the client" 4194304 "$(fld "$gst" 1)"
	lt_check "$t: ... blocks seen by the client ($(fld "$gst" 2)) cover 4 MiB" \
		test "$(fld "$gst" 2)" -ge 8192
	lt_check_eq "$t: ... reads as zeros through NFS" ok "$(val "${t}_fa1_check")"
	lt_check "$t: ... the backing file reads as zeros" "$SM" check "$b/fa1" size=4M
	lt_check_eq "$t: fallocate -o 2M -l 1M inside a sparse file" ok "$(val "${t}_fa2_in")"
	lt_check_eq "$t: fallocate -o 8M -l 2M past its end" ok "$(val "${t}_fa2_past")"
	st=$(bstat "$b/fa2")
	b0=$(fld "$(val "${t}_fa2_stat0")" 2)
	lt_check_eq "$t: ... backing size grew to 10 MiB" 10485760 "$(fld "$st" 1)"
	lt_check_eq "$t: ... size seen by the client" 10485760 "$(fld "$(val "${t}_fa2_stat")" 1)"
	lt_check "$t: ... backing blocks grew by 3 MiB at least ($b0 -> $(fld "$st" 2))" \
		test "$(fld "$st" 2)" -ge $((${b0:-0} + 6144)) -a "${b0:-0}" -gt 0
	lt_check_eq "$t: ... contents through NFS (data kept, the rest zeros)" ok "$(val "${t}_fa2_check")"
	lt_check "$t: ... backing contents" "$SM" check "$b/fa2" "$L_FA2_AFTER"
	n_alloc=$((n_alloc + 3))

	# ---- DEALLOCATE
	for k in aligned unaligned tail; do
		lt_check_eq "$t: fallocate --punch-hole ($k)" ok "$(val "${t}_pu_$k")"
	done
	n_dealloc=$((n_dealloc + 3))
	st=$(bstat "$b/pu")
	b0=$(fld "$(val "${t}_pu_stat0")" 2)
	lt_check_eq "$t: ... backing size kept" 4194304 "$(fld "$st" 1)"
	lt_check_eq "$t: ... size seen by the client" 4194304 "$(fld "$(val "${t}_pu_stat")" 1)"
	# 1 MiB + 4 KiB + 512 KiB freed
	lt_check "$t: ... backing blocks shrank by 1.5 MiB at least ($b0 -> $(fld "$st" 2))" \
		test "$(fld "$st" 2)" -le $((${b0:-0} - 3080)) -a "${b0:-0}" -ge 8192
	lt_check "$t: ... blocks seen by the client shrank ($(val "${t}_pu_stat0") -> $(val "${t}_pu_stat"))" \
		test "$(fld "$(val "${t}_pu_stat")" 2)" -le $((${b0:-0} - 3080))
	lt_check_eq "$t: ... backing SEEK_HOLE 0 (the aligned punch)" 1048576 "$("$SM" seek "$b/pu" hole 0)"
	lt_check_eq "$t: ... backing SEEK_DATA 1M" 2097152 "$("$SM" seek "$b/pu" data 1M)"
	lt_check_eq "$t: ... backing SEEK_HOLE 3M (the whole block of the unaligned punch)" \
		$((3145728 + 4096)) "$("$SM" seek "$b/pu" hole 3M)"
	lt_check_eq "$t: ... backing SEEK_DATA 3.5M (the tail)" ENXIO "$("$SM" seek "$b/pu" data 3584k)"
	lt_check "$t: ... backing contents: the punched ranges read as zeros" \
		"$SM" check "$b/pu" "$L_PU_AFTER"
	lt_check_eq "$t: ... contents through NFS" ok "$(val "${t}_pu_check")"
	lt_check_eq "$t: ... SEEK walk after the punches" ok "$(val "${t}_pu_map")"
	"$SM" map "$b/pu" >"$LT_TMP/$t-pu.map.host" 2>&1
	sed "s/^/# $t pu map (guest): /" "$share/$t-pu.map"
	cmp_out "$t: ... the map through NFS is the backing file's" "$LT_TMP/$t-pu.map.host" "$share/$t-pu.map"
	np=$(val "${t}_pu_probe")
	# shellcheck disable=SC2046
	"$SM" probe "$b/pu" $(cut -d' ' -f1 "$share/$t-pu.probe") >"$LT_TMP/$t-pu.probe.host" 2>&1
	cmp_out "$t: ... SEEK_DATA and SEEK_HOLE at ${np:-no} probes = the backing file's" \
		"$LT_TMP/$t-pu.probe.host" "$share/$t-pu.probe"
	n_seek_calls=$((n_seek_calls + 2 * ${np:-0}))

	# ---- cp --sparse=always
	for f in s1:$S1_DATA s2:$S2_DATA; do
		data=$(kib "${f#*:}")
		f=${f%%:*}
		size=$(stat -c %s "$b/$f")
		sha=$(nfs_sha256 "$b/$f")
		lt_check_eq "$t: $f: cp --sparse=always from the mount" ok "$(val "${t}_${f}_cp")"
		lt_check_eq "$t: ... the copy has the same bytes (cmp)" ok "$(val "${t}_${f}_cp_cmp")"
		lt_check_eq "$t: ... and the backing file's SHA-256" "$sha" "$(val "${t}_${f}_sha")"
		gst=$(val "${t}_${f}_cp_stat")
		lt_check_eq "$t: ... the copy's size" "$size" "$(fld "$gst" 1)"
		nb=$(fld "$gst" 2)
		lt_check "$t: ... the copy keeps the holes: ${nb:-no} blocks for $data bytes of data in $size" \
			test $((${nb:-0} * 512)) -ge "$data" -a $((${nb:-0} * 512)) -le $((data + 65536))
		lt_check_eq "$t: ... the copy's map has the file's data runs" \
			"$(grep -c '^data' "$LT_TMP/$t-$f.map.host")" "$(grep -c '^data' "$share/$t-$f.copy.map")"
		lt_check_eq "$t: ... copied back to the mount" ok "$(val "${t}_${f}_back")"
		lt_check_eq "$t: ... read back through NFS" "$sha" "$(val "${t}_${f}_back_sha")"
		lt_check "$t: ... the backing copy has the same bytes" cmp "$b/$f" "$b/$f.back"
		nb=$(fld "$(bstat "$b/$f.back")" 2)
		lt_check "$t: ... the backing copy is sparse: ${nb:-no} blocks for $data bytes of data in $size" \
			test -n "$nb" -a $((${nb:-0} * 512)) -lt $((data + (size - data) / 2))
		lt_log "$t: $f.back backing map: $("$SM" map "$b/$f.back" | tr '\n' ' ')"
	done
	lt_check_eq "$t: umount" ok "$(val "${t}_umount")"
done

# ---- the server's own count of the operations
if [ -n "$stats" ]; then
	# rewritten once a second: wait for a version written after the VM
	sleep 1.5
	for ((i = 0; i < 50; i++)); do
		[ -s "$stats" ] && break
		sleep 0.1
	done
	sed 's/^/# stats: /' "$stats"
	opstat() { # opstat NAME count|errors
		awk -v n="$1" -v w="$2" '$1 == "op" && $2 == n {
			print (w == "count" ? $3 : $5); found = 1 }
			END { if (!found) print 0 }' "$stats"
	}
	c=$(opstat SEEK count)
	lt_check "lacunad counted $c SEEK operations, at least the guest's $n_seek_calls probing lseeks" \
		test "$c" -ge "$n_seek_calls" -a "$n_seek_calls" -gt 0
	lt_log "SEEK errors (NXIO at or past the end of file): $(opstat SEEK errors)"
	c=$(opstat ALLOCATE count)
	lt_check "lacunad counted $c ALLOCATE operations, at least the guest's $n_alloc" test "$c" -ge "$n_alloc"
	lt_check_eq "... none failed" 0 "$(opstat ALLOCATE errors)"
	c=$(opstat DEALLOCATE count)
	lt_check "lacunad counted $c DEALLOCATE operations, at least the guest's $n_dealloc" test "$c" -ge "$n_dealloc"
	lt_check_eq "... none failed" 0 "$(opstat DEALLOCATE errors)"
	lt_log "READ_PLUS: $(opstat READ_PLUS count) (6.1 never sends it, 6.12 does)"
fi
nfs_stop

# shellcheck source=/dev/null
[ -r "$LT_TMP/times" ] && . "$LT_TMP/times"
lt_log "qemu start to command: ${boot_s:-?} s, command ${cmd_s:-?} s, whole run ${total_s:-?} s"
lt_done
