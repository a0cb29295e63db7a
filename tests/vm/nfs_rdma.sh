#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# lacunad over RPC-over-RDMA with the Linux kernel client, over soft-RoCE
# in the test VM. The host has no RDMA: lacunafs, lacunad and the client
# all run in one guest (tests/vm/rdma_guest.sh builds that world: a veth
# pair with rxe0/rxe1 on its ends, ext4 on a loop device in the guest's
# RAM, lacunafs over it, lacunad exporting it to 10.77.0.0/24 with
# rdma = yes on port 20049).
#
# One boot. The guest mounts 10.77.0.1:EXPORT with vers=4.2,proto=rdma,
# port=20049, then again with vers=4.1, and through each mount: creates
# small files (sizes around the 1 KiB and 4 KiB inline thresholds, read
# back after dropping the caches), writes 8 MiB and 64 MiB of random data
# and reads them back (SHA-256 of the copy, of the file read through NFS
# after dropping caches, and of the backing file), writes and reads 16 MiB
# with O_DIRECT in 1 MiB requests and 1 MiB in 4 KiB requests (RDMA Read
# and Write chunks), makes a symlink and reads it, lists a 300-entry
# directory (a READDIR reply longer than the inline threshold: a Reply
# chunk), renames, removes, makes and removes directories, and unmounts.
# lacunad must still run at the end and exit 0 on SIGTERM; its log is
# printed when something failed.
#
# LT_RDMA_PROTO=tcp runs the same checks over TCP (port 2049, same veth
# addresses): a baseline for the harness itself.
# Skips (77) without the VM (no qemu, no kernel package), when lacunad was
# built without RDMA (configure --without-rdma, or no libibverbs-dev and
# librdmacm-dev), and when soft-RoCE cannot be set up in the guest. About 2-4 minutes here (TCG).

: "${top_srcdir:=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}"
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/vm/vm.sh"
lt_init
: "${LT_RDMA_PROTO:=rdma}"
RG="$top_srcdir/tests/vm/rdma_guest.sh"
# shellcheck source=tests/vm/rdma_guest.sh
. "$RG" # rg_lacunad_rdma, rg_stage (the CLI part runs only when executed)

case $LT_RDMA_PROTO in
rdma) why=$(rg_lacunad_rdma) || lt_skip "$why (LT_RDMA_PROTO=tcp runs the checks over TCP)" ;;
tcp) ;;
*) lt_hard "LT_RDMA_PROTO must be rdma or tcp, not $LT_RDMA_PROTO" ;;
esac
[ -x "$LACUNAFS" ] || lt_hard "lacunafs not built at $LACUNAFS"
lt_require_cmd sha256sum
vm_require

BIG_MIB=${LT_RDMA_BIG_MIB:-64}
NDIR=300
share="$LT_TMP/share"
mkdir -p "$share"

cat >"$share/checks.sh" <<'GUEST'
# In the VM, in rdma_guest.sh's world: everything on $m goes through the
# kernel's NFS client, over $RG_PROTO.
m=/tmp/nfs
r() { echo "$1=$2"; }
step() { echo "# $(cut -d' ' -f1 /proc/uptime) s: $*" >&2; }
sha() { sha256sum <"$1" | cut -d' ' -f1; }

src=/tmp/src
mkdir -p "$src"
for n in 100 1000 4096 5000 65537; do
	head -c "$n" /dev/urandom >"$src/s$n"
done
head -c $((8 * 1048576)) /dev/urandom >"$src/b8"
head -c $((BIG_MIB * 1048576)) /dev/urandom >"$src/b$BIG_MIB"
head -c $((16 * 1048576)) /dev/urandom >"$src/d16"
for f in "$src"/*; do
	r "src_${f##*/}" "$(sha "$f")"
done

pass() { # pass TAG VERS
	local t=$1 d=$m/$1 b=$RG_BACKING/$1 n f i
	step "$t: mount vers=$2 proto=$RG_PROTO"
	rg_mount "$2" "$m" || return
	r "${t}_mount" ok
	r "${t}_mount_opts" "$(awk -v m="$m" '$2 == m { print $4 }' /proc/mounts)"
	mkdir "$d" && r "${t}_mkdir" ok

	step "$t: small files"
	for n in 100 1000 4096 5000 65537; do
		cp "$src/s$n" "$d/s$n" || continue
	done
	rg_drop
	for n in 100 1000 4096 5000 65537; do
		r "${t}_s$n" "$(sha "$d/s$n")"
		r "${t}_s${n}_size" "$(stat -c %s "$d/s$n")"
	done

	step "$t: 8 MiB and ${BIG_MIB} MiB"
	for f in b8 "b$BIG_MIB"; do
		cp "$src/$f" "$d/$f" && sync && r "${t}_${f}_write" ok
	done
	rg_drop
	for f in b8 "b$BIG_MIB"; do
		r "${t}_${f}_read" "$(sha "$d/$f")"
		r "${t}_${f}_backing" "$(sha "$b/$f")"
	done

	step "$t: O_DIRECT"
	dd if="$src/d16" of="$d/d16" bs=1M oflag=direct status=none && r "${t}_dwrite" ok
	r "${t}_d16_backing" "$(sha "$b/d16")"
	r "${t}_dread" "$(dd if="$d/d16" bs=1M iflag=direct status=none | sha256sum | cut -d' ' -f1)"
	# 1 MiB of other data in 4 KiB requests, each way, at an offset of 1 MiB
	cp "$src/d16" /tmp/d16.expected
	dd if="$src/b8" of=/tmp/d16.expected bs=4k seek=256 count=256 conv=notrunc status=none
	r "${t}_d16_expected" "$(sha /tmp/d16.expected)"
	rm -f /tmp/d16.expected
	dd if="$src/b8" of="$d/d16" bs=4k seek=256 count=256 oflag=direct conv=notrunc \
		status=none && r "${t}_dwrite4k" ok
	r "${t}_dread4k" "$(dd if="$d/d16" bs=4k skip=256 count=256 iflag=direct status=none |
		sha256sum | cut -d' ' -f1)"
	r "${t}_b8_1m" "$(head -c 1048576 "$src/b8" | sha256sum | cut -d' ' -f1)"
	r "${t}_d16_backing2" "$(sha "$b/d16")"

	step "$t: names"
	ln -s s1000 "$d/sym" && r "${t}_symlink" ok
	rg_drop
	r "${t}_readlink" "$(readlink "$d/sym")"
	mkdir "$d/many" && for ((i = 0; i < NDIR; i++)); do
		: >"$d/many/entry-with-a-longish-name-$i" || break
	done
	rg_drop
	r "${t}_many" "$(ls "$d/many" | wc -l)"
	r "${t}_many_backing" "$(ls "$b/many" | wc -l)"
	mv "$d/s100" "$d/renamed" && r "${t}_rename" ok
	r "${t}_rename_seen" "$([ ! -e "$d/s100" ] && cat "$d/renamed" | sha256sum | cut -d' ' -f1)"
	rm "$d/s5000" && r "${t}_rm" "$([ -e "$d/s5000" ] && echo present || echo gone)"
	mkdir -p "$d/x/y" && rmdir "$d/x/y" "$d/x" && r "${t}_mkdir_rmdir" "$([ -e "$d/x" ] && echo present || echo gone)"
	r "${t}_ls" "$(ls "$d" | tr '\n' ' ')"
	# free the guest's RAM for the next pass
	rm -rf "$d/many" "$d/b$BIG_MIB" "$d/b8" && r "${t}_cleanup" ok
	step "$t: umount"
	umount "$m" && r "${t}_umount" ok
}

pass v42 4.2
pass v41 4.1
r lacunad_running "$(kill -0 "$RG_LACUNAD_PID" 2>/dev/null && echo yes || echo no)"
r rxe "$RG_RXE"
step done
GUEST

t0=$SECONDS
"$RG" run --proto "$LT_RDMA_PROTO" --dir "$share" --timeout 600 \
	-- env BIG_MIB="$BIG_MIB" NDIR="$NDIR" bash "$share/checks.sh" \
	>"$LT_TMP/out" 2>"$LT_TMP/err"
rc=$?
lt_log "VM run: $((SECONDS - t0)) s (proto $LT_RDMA_PROTO)"
sed 's/^/# guest: /' "$LT_TMP/out"
sed 's/^/# guest stderr: /' "$LT_TMP/err"
if [ "$rc" = 77 ]; then
	why=$(grep -h '^SKIP: ' "$LT_TMP/out" "$LT_TMP/err" | tail -n 1)
	lt_skip "${why#SKIP: }"
fi
[ "$rc" = 99 ] && lt_hard "the VM or the guest set-up failed"
[ "$rc" = 124 ] && lt_fail "the VM hit its time limit (lacunad or the client hung?)"
[ "$rc" = 0 ] || lt_log "the guest's checks script exited $rc"

val() { sed -n "s/^$1=//p" "$LT_TMP/out" | tail -n 1; }

if [ "$LT_RDMA_PROTO" = rdma ]; then port=20049; else port=2049; fi
for v in 42 41; do
	t=v$v
	vers="${v:0:1}.${v:1:1}"
	lt_check_eq "vers=$vers: mount over $LT_RDMA_PROTO" ok "$(val "${t}_mount")"
	opts=",$(val "${t}_mount_opts"),"
	# (the kernel leaves out port=2049, its default)
	if [[ $opts == *",vers=$vers,"* && $opts == *",proto=$LT_RDMA_PROTO,"* &&
		($opts == *",port=$port,"* || ($port = 2049 && $opts != *",port="*)) ]]; then
		lt_ok "vers=$vers: mounted as asked (${opts:1:-1})"
	else
		lt_fail "vers=$vers: mount options: $opts"
	fi
	lt_check_eq "vers=$vers: mkdir" ok "$(val "${t}_mkdir")"
	for n in 100 1000 4096 5000 65537; do
		lt_check_eq "vers=$vers: a $n-byte file reads back" "$(val "src_s$n")" "$(val "${t}_s$n")"
		lt_check_eq "vers=$vers: ... its size" "$n" "$(val "${t}_s${n}_size")"
	done
	for f in b8 "b$BIG_MIB"; do
		lt_check_eq "vers=$vers: write ${f#b} MiB" ok "$(val "${t}_${f}_write")"
		lt_check_eq "vers=$vers: ... reads back (SHA-256, caches dropped)" \
			"$(val "src_$f")" "$(val "${t}_${f}_read")"
		lt_check_eq "vers=$vers: ... backing file SHA-256" "$(val "src_$f")" "$(val "${t}_${f}_backing")"
	done
	lt_check_eq "vers=$vers: O_DIRECT write of 16 MiB in 1 MiB requests" ok "$(val "${t}_dwrite")"
	lt_check_eq "vers=$vers: ... backing file SHA-256" "$(val src_d16)" "$(val "${t}_d16_backing")"
	lt_check_eq "vers=$vers: ... O_DIRECT read back in 1 MiB requests" "$(val src_d16)" "$(val "${t}_dread")"
	lt_check_eq "vers=$vers: O_DIRECT rewrite of 1 MiB in 4 KiB requests" ok "$(val "${t}_dwrite4k")"
	lt_check_eq "vers=$vers: ... O_DIRECT read back in 4 KiB requests" "$(val "${t}_b8_1m")" \
		"$(val "${t}_dread4k")"
	lt_check_eq "vers=$vers: ... backing file SHA-256" "$(val "${t}_d16_expected")" \
		"$(val "${t}_d16_backing2")"
	lt_check_eq "vers=$vers: symlink" ok "$(val "${t}_symlink")"
	lt_check_eq "vers=$vers: ... readlink" s1000 "$(val "${t}_readlink")"
	lt_check_eq "vers=$vers: ls of a $NDIR-entry directory" "$NDIR" "$(val "${t}_many")"
	lt_check_eq "vers=$vers: ... all in the backing directory" "$NDIR" "$(val "${t}_many_backing")"
	lt_check_eq "vers=$vers: rename" ok "$(val "${t}_rename")"
	lt_check_eq "vers=$vers: ... old name gone, new name has the content" "$(val src_s100)" \
		"$(val "${t}_rename_seen")"
	lt_check_eq "vers=$vers: rm" gone "$(val "${t}_rm")"
	lt_check_eq "vers=$vers: mkdir -p, rmdir" gone "$(val "${t}_mkdir_rmdir")"
	lt_check_eq "vers=$vers: ls" "b$BIG_MIB b8 d16 many renamed s1000 s4096 s65537 sym " \
		"$(val "${t}_ls")"
	lt_check_eq "vers=$vers: rm -rf" ok "$(val "${t}_cleanup")"
	lt_check_eq "vers=$vers: umount" ok "$(val "${t}_umount")"
done
lt_check_eq "lacunad is alive after the kernel client" yes "$(val lacunad_running)"
lt_check_eq "lacunad is alive at teardown" yes "$(val rg_lacunad_alive)"
lt_check_eq "lacunad exits 0 on SIGTERM" 0 "$(val rg_lacunad_exit)"
lt_log "soft-RoCE in the guest: $(val rxe)"
if [ "$LT_RDMA_PROTO" = tcp ]; then
	lt_log "NOTE: proto=tcp: these checks ran over TCP, not RDMA"
fi
if [ "$LT_FAILS" != 0 ] && ! grep -q '^# ---- lacunad log' "$LT_TMP/err"; then
	sed 's/^/# lacunad: /' "$share/lacunad.log" 2>/dev/null | tail -n 60
fi
# shellcheck source=/dev/null
[ -r "$share/times" ] && . "$share/times"
lt_log "qemu start to command: ${boot_s:-?} s, command ${cmd_s:-?} s, whole run ${total_s:-?} s"
lt_done
