#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Server-side COPY through the Linux kernel's NFSv4.2 client, in the test
# VM (tests/vm): copy_file_range(2) on a vers=4.2 mount becomes COPY, and
# the copy must be made by lacunad, keep the source's holes and carry no
# data over the wire.
#
# lacunad serves two lacunafs mounts, one over ext4 and one over XFS (a
# small copy_sync_max, so that the client also continues short COPYs); the
# guest mounts both with vers=4.2 in one boot. On each, a sparse image
# made on the host (data runs at the start, in the middle and at the end,
# holes between them and a hole at the end) is copied in the guest:
#
# - with copy_file_range(2) of the whole file (python3
#   os.copy_file_range, continued while short): COPYs whose range spans
#   the holes, which lacunad must keep as holes itself;
# - with plain `cp`: coreutils 9.1 first asks for a CLONE (made on the
#   XFS export where it reflinks, refused on ext4), else copies a sparse
#   file with SEEK and read/write (its copy_file_range is for files
#   without holes), so this one only checks the bytes and logs what went
#   over the wire.
#
# On ext4 the same is done with a 1 GiB image, 90% holes (100 data runs
# of 1 MiB at scattered 4 KiB-aligned offsets, one in each 10 MiB), made on
# the host: the guest sees it only over NFS. First plain `cp` (under
# strace where the host has it: which of FICLONE, copy_file_range, SEEK
# and read/write it used) records whether coreutils sends COPY; then
# copy_file_range(2) of the whole 1 GiB, which must: copy the same bytes
# (SHA-256 of the backing files), keep the holes (the copy's map and
# blocks on the backing filesystem no more than the image's), and send
# COPY with no data over the wire (READ, READ_PLUS and WRITE bytes in the
# guest's mountstats under 1 MiB). Should `cp` send COPY, its copy is held
# to the same checks.
#
# Checked on the host: the copy_file_range copy has the source's bytes
# (cmp of the backing files), the same SEEK_DATA/SEEK_HOLE map on the
# backing filesystem and no more blocks than the data; the guest's
# /proc/self/mountstats count COPY calls for it and less than 1 MiB of
# READ and WRITE data (the data went through COPY, not through the
# client); the statistics file counts COPY operations without errors,
# the data of the copies and bytes of holes.
#
# LACUNA_VM_KERNEL picks the guest kernel (default 6.1; k612/ runs it on
# 6.12). Skips (77) where the VM cannot run; lacunad only.

: "${top_srcdir:=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}"
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/vm/vm.sh"
. "$top_srcdir/tests/lib_nfs.sh"
lt_init
[ "$LT_NFS_SERVER" = lacunad ] || lt_skip "checks lacunad's own COPY"
nfs_require_server
lt_require_cmd cmp
SM="$TOOLS/lt_seekmap"
[ -x "$SM" ] || lt_hard "lt_seekmap not built at $SM"
vm_require

# the image: 48 MiB, 7 MiB of data in four runs, a hole at the end
L_IMG="size=48M,data@0+1M,data@8M+4M,data@20M+64k*8/256k,data@40M+1536k"
IMG_DATA=$(((1024 + 4096 + 512 + 1536) * 1024))
SYNC_MAX=$((2 * 1024 * 1024))
# the 1 GiB image: in each 10 MiB a 1 MiB run at a 4 KiB-aligned offset
L_BIG=size=1G
for ((i = 0; i < 100; i++)); do
	L_BIG+=",data@$((i * 10485760 + i * 37 % 9 * 1048576 + i * 13 % 16 * 4096))+1M"
done
BIG_DATA=$((100 * 1048576))

share="$LT_TMP/share"
mkdir -p "$share"
fslist="ext4 xfs"
declare -A BACKING
stats="$LT_TMP/lacunad.stats"
conf="$LT_TMP/lacunad.conf"
{
	echo "threads = 2"
	echo "lease_time = 10"
	echo "grace = off"
	echo "copy_sync_max = $SYNC_MAX"
	echo "stats_file = $stats"
} >"$conf"
envs=()
for t in $fslist; do
	nfs_make_export "$t" "$t" 3G # room for the 1 GiB image's copies, were they not sparse
	BACKING[$t]=$NFS_BACKING
	"$SM" make "$NFS_EXPORT/img" "$L_IMG" || lt_hard "lt_seekmap make $NFS_EXPORT/img"
	if [ "$t" = ext4 ]; then
		"$SM" make "$NFS_EXPORT/big" "$L_BIG" || lt_hard "lt_seekmap make $NFS_EXPORT/big"
	fi
	echo "$NFS_EXPORT 127.0.0.0/8(rw,no_root_squash,$VM_EXPORT_OPTS)" >>"$conf"
	envs+=(--env "MNT_$t=$NFS_EXPORT")
done
sync
nfs_start --config "$conf"

cat >"$share/guest.sh" <<'GUEST'
# In the VM: /tmp/nfs-* go through the kernel's NFS client.
r() { echo "$1=$2"; }
step() { echo "# $(cut -d' ' -f1 /proc/uptime) s: $*" >&2; }
# opstat MNT OP FIELD: a field of OP's line in the mount's per-op statistics
# (2: calls; 5: bytes sent, 6: bytes received)
opstat() {
	awk -v m="$1" -v op="$2:" -v f="$3" '$1 == "device" { on = ($5 == m) }
		on && $1 == op { print $f; found = 1 } END { if (!found) print 0 }' /proc/self/mountstats
}
# snap T PHASE: the COPY calls and the READ, READ_PLUS and WRITE bytes so far
snap() {
	r "${1}_$2_copy" "$(opstat "$m" COPY 2)"
	r "${1}_$2_read" "$(($(opstat "$m" READ 6) + $(opstat "$m" READ_PLUS 6)))"
	r "${1}_$2_write" "$(opstat "$m" WRITE 5)"
}
# cfr SRC DST: copy_file_range(2) of all of SRC, continued while short;
# prints the calls and the bytes left
cfr() {
	python3 -c '
import os, sys
s, d = os.open(sys.argv[1], os.O_RDONLY), os.open(sys.argv[2], os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
left, calls = os.fstat(s).st_size, 0
while left:
    n = os.copy_file_range(s, d, left)
    calls += 1
    if n == 0:
        break
    left -= n
os.fsync(d)
print(calls, left)
' "$1" "$2"
}
for t in $FSLIST; do
	p=MNT_$t
	m=/tmp/nfs-$t
	mkdir -p "$m"
	step "$t: mount"
	timeout 120 mount -t nfs4 -o "vers=4.2,port=$PORT,addr=10.0.2.2,proto=tcp,soft,timeo=300,retrans=2" \
		"10.0.2.2:${!p}" "$m" || continue
	r "${t}_mount" ok
	snap "$t" start
	step "$t: copy_file_range"
	cfr "$m/img" "$m/img.cfr" >"$SHARE/$t-cfr" && r "${t}_cfr" "$(cat "$SHARE/$t-cfr")"
	snap "$t" cfr
	step "$t: cp"
	cp "$m/img" "$m/img.cp" && r "${t}_cp" ok
	snap "$t" cp
	if [ -e "$m/big" ]; then
		step "$t: cp of the 1 GiB image"
		st=()
		command -v strace >/dev/null &&
			st=(strace -f -qq -c -S name -o "$SHARE/$t-bigcp.strace"
				-e trace=ioctl,copy_file_range,lseek,read,write)
		t0=$(cut -d' ' -f1 /proc/uptime)
		"${st[@]}" cp "$m/big" "$m/big.cp" && r "${t}_bigcp" ok
		r "${t}_bigcp_s" "$(awk -v t="$t0" '{ print $1 - t }' /proc/uptime)"
		snap "$t" bigcp
		step "$t: copy_file_range of the 1 GiB image"
		t0=$(cut -d' ' -f1 /proc/uptime)
		cfr "$m/big" "$m/big.cfr" >"$SHARE/$t-bigcfr" && r "${t}_bigcfr" "$(cat "$SHARE/$t-bigcfr")"
		r "${t}_bigcfr_s" "$(awk -v t="$t0" '{ print $1 - t }' /proc/uptime)"
		snap "$t" bigcfr
	fi
	step "$t: umount"
	umount "$m" && r "${t}_umount" ok
done
step done
GUEST

t0=$SECONDS
(cd "$share" && exec "$VM_SH" run --share "$share" --timeout 900 --times "$LT_TMP/times" \
	--env "PORT=$NFS_PORT" --env "SHARE=$share" --env "FSLIST=$fslist" "${envs[@]}" \
	-- bash "$share/guest.sh") >"$LT_TMP/out" 2>"$LT_TMP/err"
rc=$?
vm_report "$rc" $((SECONDS - t0)) "the server"
lt_check "lacunad is alive after the kernel client" nfs_alive

# phase_bytes T PHASE PREV: "COPY-calls READ-bytes WRITE-bytes" between two snaps
phase_bytes() {
	echo "$(($(val "${1}_${2}_copy") - $(val "${1}_${3}_copy")))" \
		"$(($(val "${1}_${2}_read") - $(val "${1}_${3}_read")))" \
		"$(($(val "${1}_${2}_write") - $(val "${1}_${3}_write")))"
}

# check_big T: the 1 GiB image's copies on T
check_big() {
	local t=$1 b=${BACKING[$1]} c n rd wr nb sb sha prev=cp
	"$SM" map "$b/big" >"$LT_TMP/$t-big.map" 2>&1
	lt_check_eq "$t: the 1 GiB image has its 100 data runs" 100 "$(grep -c '^data' "$LT_TMP/$t-big.map")"
	sb=$(stat -c %b "$b/big")
	lt_log "$t: the 1 GiB image: $(stat -c %s "$b/big") bytes, $((sb * 512)) allocated, $BIG_DATA of data"
	sha=$(nfs_sha256 "$b/big")
	if [ -s "$share/$t-bigcp.strace" ]; then
		sed 's/^/# cp strace -c: /' "$share/$t-bigcp.strace"
	else
		lt_log "$t: no strace here: cp's system calls not recorded"
	fi
	for c in bigcp bigcfr; do
		read -r n rd wr <<<"$(phase_bytes "$t" $c $prev)"
		prev=$c
		lt_log "$t: $c: $n COPY calls, $rd bytes READ/READ_PLUS, $wr bytes WRITTEN (guest mountstats), $(val "${t}_${c}_s") s in the guest"
		if [ $c = bigcp ]; then
			lt_check_eq "$t: cp of the 1 GiB image in the guest" ok "$(val "${t}_bigcp")"
			lt_check_eq "$t: bigcp: the copy's SHA-256 is the image's" "$sha" "$(nfs_sha256 "$b/big.cp")"
			if [ "$n" = 0 ]; then
				lt_log "$t: bigcp: coreutils' cp ($(cp --version | head -n 1)) sent no COPY:" \
					"it copied through the client; copy_file_range(2) follows"
				lt_log "$t: bigcp: its copy allocates $(($(stat -c %b "$b/big.cp") * 512)) bytes"
				continue
			fi
			lt_log "$t: bigcp: cp sent COPY: held to copy_file_range's checks"
		else
			lt_check "$t: bigcfr: copy_file_range of all 1 GiB in the guest (calls, bytes left: $(val "${t}_bigcfr"))" \
				test -n "$(val "${t}_bigcfr")" -a "$(val "${t}_bigcfr" | cut -d' ' -f2)" = 0
			lt_check_eq "$t: bigcfr: the copy's SHA-256 is the image's" "$sha" "$(nfs_sha256 "$b/big.cfr")"
		fi
		"$SM" map "$b/big.${c#big}" >"$LT_TMP/$t-$c.map" 2>&1
		lt_check "$t: $c: the backing copy's SEEK_DATA/SEEK_HOLE map is the image's" \
			cmp -s "$LT_TMP/$t-big.map" "$LT_TMP/$t-$c.map"
		nb=$(stat -c %b "$b/big.${c#big}")
		lt_check "$t: $c: the copy allocates $((${nb:-0} * 512)) bytes, no more than the image's $((sb * 512))" \
			test "${nb:-0}" -le "$sb" -a "${nb:-0}" -gt 0
		lt_check "$t: $c: the guest sent COPY ($n calls)" test "$n" -gt 0
		lt_check "$t: $c: no data over the wire ($rd bytes READ/READ_PLUS, $wr WRITTEN, under 1 MiB)" \
			test "$rd" -lt 1048576 -a "$wr" -lt 1048576
	done
}

for t in $fslist; do
	b=${BACKING[$t]}
	lt_log "== $t: backing $b"
	lt_check_eq "$t: vers=4.2 mount" ok "$(val "${t}_mount")"
	"$SM" map "$b/img" >"$LT_TMP/$t-img.map" 2>&1
	lt_check_eq "$t: the image has its 11 data runs" 11 "$(grep -c '^data' "$LT_TMP/$t-img.map")"
	cfr=$(val "${t}_cfr")
	lt_check "$t: copy_file_range of the whole file in the guest (calls, bytes left: ${cfr:-none})" \
		test -n "$cfr" -a "${cfr#* }" = 0
	lt_check_eq "$t: cp in the guest" ok "$(val "${t}_cp")"
	for c in cfr cp; do
		lt_check "$t: $c: the backing copy has the image's bytes" cmp "$b/img" "$b/img.$c"
		[ $c = cfr ] || continue # cp went through WRITE: its sparseness is not COPY's
		"$SM" map "$b/img.$c" >"$LT_TMP/$t-$c.map" 2>&1
		if cmp -s "$LT_TMP/$t-img.map" "$LT_TMP/$t-$c.map"; then
			lt_ok "$t: $c: the backing copy's SEEK_DATA/SEEK_HOLE map is the image's"
		else
			lt_fail "$t: $c: the backing copy's SEEK_DATA/SEEK_HOLE map is the image's"
			diff "$LT_TMP/$t-img.map" "$LT_TMP/$t-$c.map" | head -n 20 | sed 's/^/#   (image < > copy) /'
		fi
		nb=$(stat -c %b "$b/img.$c")
		lt_check "$t: $c: the copy allocates ${nb:-no} blocks for $IMG_DATA bytes of data" \
			test $((${nb:-0} * 512)) -ge "$IMG_DATA" -a $((${nb:-0} * 512)) -le $((IMG_DATA + 1048576))
	done
	# per phase, from the guest's mountstats: COPY calls, READ and WRITE data
	prev=start
	for c in cfr cp; do
		n=$(($(val "${t}_${c}_copy") - $(val "${t}_${prev}_copy")))
		rd=$(($(val "${t}_${c}_read") - $(val "${t}_${prev}_read")))
		wr=$(($(val "${t}_${c}_write") - $(val "${t}_${prev}_write")))
		lt_log "$t: $c: $n COPY calls, $rd bytes READ/READ_PLUS, $wr bytes WRITTEN (guest mountstats)"
		if [ "$c" = cp ]; then
			: # coreutils copies a sparse file by SEEK and read/write: informational
		else
			lt_check "$t: $c: the guest sent COPY ($n calls)" test "$n" -gt 0
			lt_check "$t: $c: no image data over the wire ($rd bytes READ/READ_PLUS, $wr WRITTEN, under 1 MiB)" \
				test "$rd" -lt 1048576 -a "$wr" -lt 1048576
		fi
		prev=$c
	done
	[ "$t" = ext4 ] && check_big "$t"
	lt_check_eq "$t: umount" ok "$(val "${t}_umount")"
done

# ---- the server's own counts
sleep 1.5
sed 's/^/# stats: /' "$stats"
opstat() { # opstat NAME count|errors
	awk -v n="$1" -v w="$2" '$1 == "op" && $2 == n {
		print (w == "count" ? $3 : $5); found = 1 }
		END { if (!found) print 0 }' "$stats"
}
stat_of() { awk -v k="$1" '$1 == k { print $2 }' "$stats"; }
c=$(opstat COPY count)
lt_check "lacunad counted $c COPY operations" test "$c" -gt 0
lt_check_eq "... none failed" 0 "$(opstat COPY errors)"
data=$(stat_of copy_data_bytes)
holes=$(stat_of copy_hole_bytes)
lt_check "... COPY wrote ${data:-no} bytes of data, at least the 2 copies' $((2 * IMG_DATA))" \
	test "${data:-0}" -ge $((2 * IMG_DATA))
lt_check "... and kept ${holes:-no} bytes of holes" test "${holes:-0}" -gt 0
lt_log "READ_PLUS: $(opstat READ_PLUS count), READ: $(opstat READ count), WRITE: $(opstat WRITE count), SEEK: $(opstat SEEK count)"
nfs_stop

# shellcheck source=/dev/null
[ -r "$LT_TMP/times" ] && . "$LT_TMP/times"
lt_log "qemu start to command: ${boot_s:-?} s, command ${cmd_s:-?} s, whole run ${total_s:-?} s"
lt_done
