#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# READ_PLUS from the Linux kernel's own client: 6.12 (bookworm-backports,
# tests/vm/README.md) sends READ_PLUS for every read over TCP, where 6.1
# has it compiled out. One boot, one vers=4.2 proto=tcp mount of lacunad
# serving lacunafs over ext4:
#
# - Sparse files of many layouts (lt_seekmap make): hundreds of 4 KiB
#   runs between holes, runs at unaligned offsets and of unaligned
#   lengths ending in data at an unaligned size, data then a hole to the
#   end, all hole, all data, a small file. Each is read through the page
#   cache (after dropping it) and with O_DIRECT (dd iflag=direct) in 4 KiB,
#   64 KiB and 1 MiB requests: every read has the backing file's SHA-256.
# - `cp --sparse=always` of each to the guest's tmpfs: same bytes, and the
#   copy holds no more blocks than the backing file (the all-hole one
#   none): the holes came through as holes.
# - Atomicity: two flippers on the host flip the 64 KiB regions of a 4 MiB
#   file between data (every byte one value) and hole, at once, each in
#   its own half of the file: tests/vm/rp_regions.py through the lacunafs
#   mount (one pwrite or a punch) in the first half, and
#   tests/vm/rp_nfsflip.py, a second NFSv4.2 client with its own session
#   to lacunad, in the second (one WRITE of a run of 1 to 4 regions, its
#   data at many unaligned offsets of the request, or one DEALLOCATE),
#   while the guest reads the file with O_DIRECT in 1 MiB requests. Every
#   region of every read must be all zeros or all one value, and both
#   states must have been seen in each half. The same checker, run on a
#   file made with a region half data, half hole, must report it torn, and
#   so must the same reads of a file whose regions both flippers write in
#   two halves 2 ms apart (two pwrites, two WRITEs, two punches, two
#   DEALLOCATEs: torn in the file itself for a while), in each half: the
#   check can see a tear of either flipper (the negative controls).
# - /proc/self/mountstats of the mount: READ_PLUS ops > 0, READ ops 0; and
#   lacunad's statistics file counts READ_PLUS and its hole bytes (at least
#   the all-hole file read four times).
#
# LT_RP_TORTURE_READS sets the number of torture reads (default 300).
# LT_RP_NO_RANGELOCK=1 runs lacunafs without its range lock and lacunad
# with plain pwrite WRITEs, by hand: the write_atomic checks then fail,
# but the torture rarely sees a tear, as every write of either flipper
# (64 KiB to 256 KiB) still reaches lacunafs as one FUSE write whose race
# with a read lasts microseconds; tests/integ/nfs_atomic.sh catches that
# race with many more reads. The halves 2 ms apart are the control here.
# LACUNA_VM_KERNEL picks the guest kernel (default 6.12; 6.1 has no
# READ_PLUS client and makes the test skip). Skips (77) where the VM or
# that kernel cannot be had. About 1-2 minutes here (TCG).

: "${top_srcdir:=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}"
export LACUNA_VM_KERNEL=${LACUNA_VM_KERNEL:-6.12}
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/vm/vm.sh"
. "$top_srcdir/tests/lib_nfs.sh"
lt_init
[ "$LT_NFS_SERVER" = lacunad ] || lt_skip "needs lacunad (statistics file, lacunafs)"
[ "$LACUNA_VM_KERNEL" != 6.1 ] || lt_skip "the 6.1 client has no READ_PLUS (CONFIG_NFS_V4_2_READ_PLUS)"
nfs_require_server
lt_require_cmd python3 sha256sum
SM="$TOOLS/lt_seekmap"
[ -x "$SM" ] || lt_hard "lt_seekmap not built at $SM"
vm_require

REGION=65536
# name:layout; the all-hole file is "hole"
LAYOUTS=(
	"many:size=16M,data@0+4k*200/80k"
	"unal:size=3000001,data@1000+5000*40/65537,data@2999000+1001"
	"tail:size=6M,data@0+1M,data@2M+100k,data@3M+1"
	"hole:size=5M"
	"dense:size=3M,data@0+3M"
	"small:size=10000,data@4096+100"
)
HOLE_SIZE=$((5 * 1048576))

share="$LT_TMP/share"
mkdir -p "$share"
cp "$top_srcdir/tests/vm/rp_regions.py" "$share/" || lt_hard "cp rp_regions.py"

# LT_RP_NO_RANGELOCK=1: lacunafs without its range lock, lacunad writing
# with pwrite (a negative control run by hand)
[ "${LT_RP_NO_RANGELOCK:-0}" = 1 ] && export LACUNA_TEST_DISABLE_RANGELOCK=1
nfs_make_export ext4 rp
unset LACUNA_TEST_DISABLE_RANGELOCK
e=$NFS_EXPORT
b=$NFS_BACKING
names=""
for l in "${LAYOUTS[@]}"; do
	"$SM" make "$e/${l%%:*}" "${l#*:}" || lt_hard "lt_seekmap make ${l%%:*}"
	names+="${l%%:*} "
done
# the torture file starts as a hole; the negative control's has region 1
# half data (one byte value, as the flipper writes it), half hole
truncate -s 4M "$e/flip" || lt_hard "truncate flip"
truncate -s 4M "$e/split" || lt_hard "truncate split"
truncate -s 1M "$e/torn" || lt_hard "truncate torn"
head -c 32768 /dev/zero | tr '\0' '\7' |
	dd of="$e/torn" bs=32k seek=2 conv=notrunc status=none || lt_hard "dd torn"
sync

stats="$LT_TMP/lacunad.stats"
conf="$LT_TMP/lacunad.conf"
printf '%s\n' "threads = 2" "grace = off" "stats_file = $stats" \
	"$e 127.0.0.0/8(rw,no_root_squash,$VM_EXPORT_OPTS)" >"$conf"
if [ "${LT_RP_NO_RANGELOCK:-0}" = 1 ]; then
	LACUNA_TEST_PLAIN_WRITE=1 nfs_start --config "$conf"
else
	nfs_start --config "$conf"
fi

# the host's flippers, each waiting for the guest's go: on "flip" as
# lacunafs and lacunad must keep it atomic, on "split" writing half regions
# (the negative control); the mount's in the first half of the file (part
# 0 of 2), the NFS client's in the second
declare -A FLIP_PID
for f in flip split; do
	mode=()
	[ $f = split ] && mode=(split)
	setsid python3 "$share/rp_regions.py" flip "$e/$f" $REGION "$share/$f.stop" "$share/$f.go" \
		0/2 "${mode[@]}" >"$LT_TMP/$f.out" 2>&1 &
	FLIP_PID[$f]=$!
	setsid python3 "$top_srcdir/tests/vm/rp_nfsflip.py" "$NFS_PORT" "$e/$f" $REGION \
		"$share/$f.stop" "$share/$f.go" 1/2 "${mode[@]}" >"$LT_TMP/nfs-$f.out" 2>&1 &
	FLIP_PID[nfs-$f]=$!
done
stop_flip() {
	local f i
	for f in "${!FLIP_PID[@]}"; do
		touch "$share/${f#nfs-}.stop"
		for ((i = 0; i < 600; i++)); do
			kill -0 "${FLIP_PID[$f]}" 2>/dev/null || break
			sleep 0.1
		done
		kill "${FLIP_PID[$f]}" 2>/dev/null
		wait "${FLIP_PID[$f]}" 2>/dev/null
		unset "FLIP_PID[$f]"
	done
}
lt_push_cleanup stop_flip

cat >"$share/guest.sh" <<'GUEST'
r() { echo "$1=$2"; }
step() { echo "# $(cut -d' ' -f1 /proc/uptime) s: $*" >&2; }
m=/tmp/nfs
mkdir -p $m
step mount
timeout 120 mount -t nfs4 -o "vers=4.2,proto=tcp,port=$PORT,addr=10.0.2.2,soft,timeo=300,retrans=2" \
	"10.0.2.2:$EXPORT" $m || exit 1
r mount ok
r mount_opts "$(awk -v m=$m '$2 == m { print $4 }' /proc/mounts)"
sha() { sha256sum | cut -d' ' -f1; }
for f in $NAMES; do
	step "$f: reads"
	sync
	echo 3 >/proc/sys/vm/drop_caches
	r "${f}_cached" "$(sha <"$m/$f")"
	for bs in 4k 64k 1M; do
		r "${f}_direct_$bs" "$(dd if="$m/$f" iflag=direct bs=$bs status=none | sha)"
	done
	step "$f: cp --sparse=always"
	cp --sparse=always "$m/$f" "/tmp/$f.copy" && r "${f}_cp" ok
	r "${f}_cp_sha" "$(sha <"/tmp/$f.copy")"
	r "${f}_cp_stat" "$(stat -c '%s %b' "/tmp/$f.copy")"
	rm -f "/tmp/$f.copy"
done
step "negative control: a torn region"
python3 "$SHARE/rp_regions.py" check "$m/torn" $REGION 4 1048576 >"$SHARE/torn.out" 2>&1
r torn_rc $?
step "torture: 1 MiB O_DIRECT reads while the host flips regions through the mount and NFS"
touch "$SHARE/flip.go"
sleep 1
python3 "$SHARE/rp_regions.py" check "$m/flip" $REGION "$TORTURE_READS" 1048576 2 >"$SHARE/flip.out" 2>&1
r flip_rc $?
touch "$SHARE/flip.stop"
step "negative control: the same reads while the host writes regions in halves"
touch "$SHARE/split.go"
sleep 1
python3 "$SHARE/rp_regions.py" check "$m/split" $REGION 200 1048576 2 >"$SHARE/split.out" 2>&1
r split_rc $?
touch "$SHARE/split.stop"
step mountstats
awk -v m=$m '$1 == "device" { on = ($5 == m) } on' /proc/self/mountstats >"$SHARE/mountstats"
r mountstat_read "$(awk '$1 == "READ:" { print $2 }' "$SHARE/mountstats")"
r mountstat_read_plus "$(awk '$1 == "READ_PLUS:" { print $2 }' "$SHARE/mountstats")"
umount $m && r umount ok
step done
GUEST

TORTURE_READS=${LT_RP_TORTURE_READS:-300}
t0=$SECONDS
(cd "$share" && exec "$VM_SH" run --share "$share" --timeout 900 --times "$LT_TMP/times" \
	--env "PORT=$NFS_PORT" --env "SHARE=$share" --env "EXPORT=$e" --env "NAMES=$names" \
	--env "REGION=$REGION" --env "TORTURE_READS=$TORTURE_READS" \
	-- bash "$share/guest.sh") >"$LT_TMP/out" 2>"$LT_TMP/err"
rc=$?
vm_report "$rc" $((SECONDS - t0)) "the server"
stop_flip
lt_check "lacunad is alive after the kernel client" nfs_alive
lt_check_eq "vers=4.2 proto=tcp mount" ok "$(val mount)"
opts=",$(val mount_opts),"
lt_check "... mounted as vers=4.2 over TCP (${opts:1:-1})" \
	test "${opts/,vers=4.2,/}" != "$opts" -a "${opts/,proto=tcp,/}" != "$opts"

# ---- every read = the backing file
for f in $names; do
	sha=$(nfs_sha256 "$b/$f")
	lt_log "$f: backing file: $("$SM" map "$b/$f" | awk '{ n[$1]++; l[$1] += $3 }
		END { printf "%d data runs (%d bytes), %d holes (%d bytes)", n["data"], l["data"], n["hole"], l["hole"] }')"
	lt_check_eq "$f: read through the page cache: the backing file's SHA-256" "$sha" "$(val "${f}_cached")"
	for bs in 4k 64k 1M; do
		lt_check_eq "$f: dd iflag=direct bs=$bs: the backing file's SHA-256" "$sha" "$(val "${f}_direct_$bs")"
	done
	lt_check_eq "$f: cp --sparse=always" ok "$(val "${f}_cp")"
	lt_check_eq "... the copy has the same bytes" "$sha" "$(val "${f}_cp_sha")"
	st=$(val "${f}_cp_stat")
	bst=$(stat -c '%s %b' "$b/$f")
	lt_check_eq "... and the same size" "${bst% *}" "${st% *}"
	if [ "$f" = hole ]; then
		lt_check_eq "... the all-hole file's copy has no blocks" 0 "${st#* }"
	else
		lt_check "... as sparse as the backing file: ${st#* } blocks, backing ${bst#* }" \
			test -n "${st#* }" -a "${st#* }" -le "${bst#* }"
	fi
done

# ---- atomicity under flips
sed 's/^/# torn file: /' "$share/torn.out"
lt_check_eq "negative control: the checker reports the half-data region torn" 1 "$(val torn_rc)"
lt_check "... as one torn region" grep -q "^torn: offset 65536:" "$share/torn.out"
sed 's/^/# torture: /' "$share/flip.out"
sed 's/^/# mount flipper: /' "$LT_TMP/flip.out"
sed 's/^/# NFS flipper: /' "$LT_TMP/nfs-flip.out"
lt_check_eq "torture: no 1 MiB O_DIRECT read saw a region torn" 0 "$(val flip_rc)"
# n KEY [PART]: KEY's count in the checker's last line (or PART's line) of $res
n() {
	local l
	l=$(if [ -n "${2:-}" ]; then grep "^part=$2 " <<<"$res"; else tail -n 1 <<<"$res"; fi)
	tr ' ' '\n' <<<"$l" | sed -n "s/^$1=//p"
}
flips() { sed -n 's/^flips=\([0-9]*\).*/\1/p' "$1"; }
res=$(cat "$share/flip.out")
lt_check_eq "... all $TORTURE_READS reads done" "$TORTURE_READS" "$(n reads)"
lt_log "torture: $(n regions) regions checked, $(n torn) torn"
declare -A FLIPPER=([0]="the mount's half" [1]="the NFS client's half")
for p in 0 1; do
	lt_log "torture: ${FLIPPER[$p]}: $(n regions $p) regions checked, $(n torn $p) torn"
	lt_check_eq "... ${FLIPPER[$p]}: no region torn" 0 "$(n torn $p)"
	lt_check "... ${FLIPPER[$p]}: regions seen as holes ($(n holes $p)) and as data ($(n datas $p))" \
		test "$(n holes $p)" -gt 0 -a "$(n datas $p)" -gt 0
done
f=$(flips "$LT_TMP/flip.out")
lt_check "... the host flipped regions through the mount meanwhile (${f:-no} flips)" test "${f:-0}" -gt 0
f=$(flips "$LT_TMP/nfs-flip.out")
lt_check "... and through NFS (${f:-no} flips: WRITE and DEALLOCATE)" test "${f:-0}" -gt 0
sed 's/^/# split: /' "$share/split.out" "$LT_TMP/split.out" "$LT_TMP/nfs-split.out"
res=$(cat "$share/split.out")
lt_check_eq "negative control: the same reads see torn regions while the flippers write halves" \
	1 "$(val split_rc)"
lt_log "negative control: $(n regions) regions checked, $(n torn) torn"
for p in 0 1; do
	lt_check "... ${FLIPPER[$p]}: $(n torn $p) torn regions of $(n regions $p)" test "$(n torn $p)" -gt 0
done
lt_check "... split writes through NFS meanwhile ($(flips "$LT_TMP/nfs-split.out") flips)" \
	test "$(flips "$LT_TMP/nfs-split.out")" -gt 0

# ---- the client sent READ_PLUS, never READ
sed 's/^/# mountstats: /' "$share/mountstats" | grep -E ' (READ|READ_PLUS|WRITE):'
rp=$(val mountstat_read_plus)
lt_check "mountstats: READ_PLUS ops ${rp:-none} > 0" test "${rp:-0}" -gt 0
lt_check_eq "mountstats: READ ops" 0 "$(val mountstat_read)"

# ---- lacunad's own count
sleep 1.5
for ((i = 0; i < 50; i++)); do
	[ -s "$stats" ] && break
	sleep 0.1
done
grep -E '^(op (READ|WRITE|DEALLOCATE)|read_plus|write_)' "$stats" | sed 's/^/# stats: /'
w=$(awk '$1 == "write_atomic" { print $2 }' "$stats")
nw=$(($(sed -n 's/.* writes=\([0-9]*\).*/\1/p' "$LT_TMP/nfs-flip.out" "$LT_TMP/nfs-split.out" |
	paste -sd+)))
lt_check "lacunad wrote ${w:-no} WRITEs atomically, at least the NFS flippers' $nw" \
	test "${w:-0}" -ge "$nw" -a "$nw" -gt 0
lt_check_eq "... and none with pwrite" 0 "$(awk '$1 == "write_not_atomic" { print $2 }' "$stats")"
c=$(awk '$1 == "op" && $2 == "READ_PLUS" { print $3 }' "$stats")
lt_check "lacunad counted ${c:-no} READ_PLUS, at least the client's $rp" test "${c:-0}" -ge "${rp:-1}"
hb=$(awk '$1 == "read_plus_hole_bytes" { print $2 }' "$stats")
lt_check "lacunad sent ${hb:-no} hole bytes, at least the all-hole file four times ($((4 * HOLE_SIZE)))" \
	test "${hb:-0}" -ge $((4 * HOLE_SIZE))
lt_check_eq "guest umount" ok "$(val umount)"
nfs_stop

# shellcheck source=/dev/null
[ -r "$LT_TMP/times" ] && . "$LT_TMP/times"
lt_log "qemu start to command: ${boot_s:-?} s, command ${cmd_s:-?} s, whole run ${total_s:-?} s"
lt_done
