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
# chunk), renames, removes, makes and removes directories, and unmounts;
# the mount's /proc/self/mountstats must show WRITE and READDIR sent and,
# over RDMA, the reads sent as READ and no READ_PLUS (RFC 8267 section 6:
# the Linux client never sends READ_PLUS over RDMA, also where it does
# over TCP). LACUNA_VM_KERNEL picks the guest kernel; tests/vm/k612/
# runs it all on 6.12.
#
# Then our own client, with no kernel mount: lt_seekmap makes sparse files
# on the lacunafs mount (mostly holes, dense, hundreds of small extents,
# a hole at the end, all hole, 5 bytes, empty; at most 16 MiB), and for
# each `lacuna nfs-map --rdma`, `nfs-map --rdma --seek` and `nfs-map` over
# TCP print what `lacuna map` prints of the file (but its first line, the
# name), also for a range (--offset/--length) of two of them; `lacuna
# nfs-get --rdma` copies it byte for byte (cmp) with its holes (the copy's
# `lacuna map` segments are the file's, no more blocks), and so does
# `nfs-get --rdma --read` (cmp).
#
# Then one NFS WRITE must be applied whole (tests/py/lt_rp_uniform.py): through
# a vers=4.2 mount the kernel client keeps writing one byte value, new
# each time, with O_DIRECT over an extent of [1 MiB, 2 MiB) of a file (1 MiB
# there, 1 MiB - 1000 bytes at an unaligned offset, 777,777 bytes at
# another; each one NFS WRITE, whose data lacunad pulls through a read
# chunk into its pool at the data's XDR position, not page-aligned) and
# punching it again (DEALLOCATE), while our own client reads the range
# with READ_PLUS over TCP (its own NFSv4.2 session: Linux never sends
# READ_PLUS over RDMA). Of at least 1000 replies none may be torn (all of
# it one write's value over that write's extent, or zeros and holes); the
# mount's counters show one WRITE per write and one DEALLOCATE per punch,
# lacunad's that the data came through read chunks (rdma_read_chunk_bytes
# grew by at least the bytes written) and was applied with its atomic
# write (write_atomic grew by the writes, write_not_atomic stayed 0).
#
# Last, with a vers=4.2 proto=rdma mount busy writing and reading a file
# with O_DIRECT in the background, tests/tools/rdma_hostile sends lacunad
# what it must refuse (14 cases, each reported); then the mount still
# writes and reads a new file, lacunad runs, and its log shows a refused
# transport header and a failed RDMA Read or Write.
#
# Then the RDMA connection limits, on a second lacunad in the guest
# (ports 2050 and 20050, nobody else connected, so the kernel client's
# mounts stay out of it; it pins a buffer pool of its own, so this VM has
# 2560 MiB), started twice: with
# max_rdma_connections_per_client = 4 and with max_rdma_connections = 3.
# Against each, `rdma_hostile --conn-limit N` opens the N connections
# allowed, is refused the next one while the N still answer NULL calls,
# and after closing one is accepted again (and refused the one after);
# lacunad's rdma_conns_refused must grow by the refusals rdma_hostile
# counted, its log name the limit, and it must exit 0 on SIGTERM.
#
# Then a guest process holds an open file and an fcntl lock on a vers=4.2
# proto=rdma mount while lacunad is killed (-9) and started again: the
# client reclaims both in the grace period, the holder's write and read
# succeed, another process is still refused the lock, the file holds
# what the holder wrote and the guest logs no lost locks.
#
# lacunad must still run at the end and exit 0 on SIGTERM; its log is
# printed when something failed.
#
# The negative control boots a second VM: the same world with lacunad
# started with LACUNA_TEST_PLAIN_WRITE=1 (plain pwrite through the mount,
# which the kernel cuts on the pages of lacunad's buffer), and the same
# writer and reader until the first torn reply. Not catching one within
# 3000 replies fails the test: the check must be able to see the tear.
# Timeouts (a VM's, the checker's 120 s per call) only catch hangs.
#
# LT_RDMA_PROTO=tcp runs the same checks over TCP (port 2049, same veth
# addresses; the client without --rdma; no hostile peers): a baseline for
# the harness itself. lacuna, lt_seekmap and rdma_hostile (make check
# builds them) missing is a hard error (99).
# Skips (77) without the VM (no qemu, no kernel package), when lacunad was
# built without RDMA (configure --without-rdma, or no libibverbs-dev and
# librdmacm-dev), and when soft-RoCE cannot be set up in the guest.
# About 5-6 minutes here (TCG), of which the atomic WRITE check takes 1-2
# and the negative control's VM under one.

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
# make check builds these (the tools staged into the guest by rg_stage)
[ -x "$top_builddir/tools/lacuna" ] || lt_hard "lacuna not built at $top_builddir/tools/lacuna"
[ -x "$TOOLS/lt_seekmap" ] || lt_hard "lt_seekmap not built at $TOOLS/lt_seekmap"
if [ "$LT_RDMA_PROTO" = rdma ] && [ ! -x "$TOOLS/rdma_hostile" ]; then
	lt_hard "rdma_hostile not built at $TOOLS/rdma_hostile"
fi
lt_require_cmd sha256sum
vm_require

BIG_MIB=${LT_RDMA_BIG_MIB:-64}
NDIR=300
share="$LT_TMP/share"
mkdir -p "$share"

# ---- one NFS WRITE is applied whole (both VM runs use this)
mkdir -p "$share/py"
cp "$top_srcdir/tests/vm/lock_holder.py" "$share/" || lt_hard "copying lock_holder.py"
cp "$top_srcdir/tests/py/lt_rp_uniform.py" "$top_srcdir/tests/py/lt_nfs4raw.py" \
	"$top_srcdir/tests/tools/resvport.py" "$share/py/" ||
	lt_hard "copying the Python checker into $share/py failed"
cat >"$share/uniform.sh" <<'GUEST'
# In the VM, in rdma_guest.sh's world. uniform TAG ARGS...: the kernel
# client writes and punches through a vers=4.2 mount over $RG_PROTO while
# our own client reads the range with READ_PLUS over TCP, each reply
# checked (tests/py/lt_rp_uniform.py ARGS); prints TAG_KEY=VALUE lines: the
# checker's, its exit status, lacunad's counters before (_0) and after
# (_1), the guest's seconds.
ustat() { awk -v k="$1" '$1 == k { print $2 }' "$RG_DIR/stats" 2>/dev/null; }
uniform() {
	local t=$1 m=/tmp/nfsu k t0
	shift
	echo "# $(cut -d' ' -f1 /proc/uptime) s: $t: O_DIRECT writes and hole punches over" \
		"$RG_PROTO, READ_PLUS over TCP" >&2
	t0=$(cut -d' ' -f1 /proc/uptime)
	rg_mount 4.2 "$m" || return
	echo "${t}_mount_opts=$(awk -v m="$m" '$2 == m { print $4 }' /proc/mounts)"
	mkdir -p "$m/atomic"
	sleep 1.5 # (lacunad rewrites its stats file every second)
	for k in write_atomic write_not_atomic rdma_read_chunk_bytes; do
		echo "${t}_${k}_0=$(ustat "$k")"
	done
	timeout -k 10 900 python3 "$RG_DIR/py/lt_rp_uniform.py" "$m/atomic/f" "$RG_SERVER" 2049 \
		"$RG_EXPORT/atomic/f" "$@" >/tmp/uniform.out 2>/tmp/uniform.err
	echo "${t}_rc=$?"
	sed -n "s/^\([a-z_]*=\)/${t}_\1/p" /tmp/uniform.out
	grep '^#' /tmp/uniform.out >&2
	sed "s/^/# $t: /" /tmp/uniform.err >&2
	sleep 1.5
	for k in write_atomic write_not_atomic rdma_read_chunk_bytes; do
		echo "${t}_${k}_1=$(ustat "$k")"
	done
	rm -rf "$m/atomic"
	umount "$m" && echo "${t}_umount=ok"
	echo "${t}_s=$(awk -v t="$t0" '{ printf "%.0f", $1 - t }' /proc/uptime)"
}
GUEST

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
	# what the client sent: READ, WRITE, READDIR (READ_PLUS only over TCP)
	awk -v m="$m" '$1 == "device" { on = ($5 == m) } on' /proc/self/mountstats >/tmp/ms
	for n in READ READ_PLUS WRITE READDIR; do
		r "${t}_ms_$n" "$(awk -v n="$n:" '$1 == n { c = $2 } END { print c + 0 }' /tmp/ms)"
	done
	step "$t: umount"
	umount "$m" && r "${t}_umount" ok
}

# ---- our own client: lacuna nfs-map / nfs-get (--rdma unless over TCP)
# against lacuna map of the same files on the lacunafs mount
if [ "$RG_PROTO" = rdma ]; then
	XR=--rdma XURL=nfs://$RG_SERVER:20049
else
	XR= XURL=nfs://$RG_SERVER
fi
TURL=nfs://$RG_SERVER # TCP, port 2049
# lt_seekmap layouts: NAME LAYOUT
LAYOUTS=(
	"holes size=16M,data@5M+64k,data@12M+4k,data@16777213+3"
	"dense data@0+8M"
	"extents data@0+4k*200/64k,data@13000000+5000*40/20000"
	"tailhole data@0+1M,data@2M+100000,size=7M"
	"allhole size=3M"
	"tiny data@0+5"
	"empty size=0"
)
# the range mapped with --offset/--length: FILE OFFSET LENGTH
RANGES=("extents 1000000 3000000" "holes 4000000 9000000")

# lm OUT ARGS...: lacuna ARGS into OUT without its first line (the file's
# name and where the map comes from); a failure is written into OUT too
lm() {
	local out=$1 rc
	shift
	lacuna "$@" >/tmp/lm.out 2>/tmp/lm.err
	rc=$?
	tail -n +2 /tmp/lm.out >"$out"
	if [ $rc != 0 ]; then
		echo "lacuna $*: exit $rc: $(head -c 300 /tmp/lm.err)" | tee -a "$out" >&2
	fi
}
# same KEY A B: KEY=same when files A and B are equal, else the difference
same() {
	if cmp -s "$2" "$3"; then
		r "$1" same
	else
		r "$1" differs
		{ echo "$1: $2 and $3 differ:"; diff "$2" "$3" | head -n 20; } >&2
	fi
}
segs() { lacuna map "$1" | grep -E '^(data|hole) '; }

client() {
	local e=$RG_EXPORT/client b=$RG_BACKING/client c=$RG_BACKING/copies l n f u t o len
	step "client: make ${#LAYOUTS[@]} sparse files on the lacunafs mount"
	mkdir -p "$e" "$c" /tmp/cl
	for l in "${LAYOUTS[@]}"; do
		lt_seekmap make "$e/${l%% *}" "${l#* }" && r "cl_${l%% *}_made" ok
	done
	sync
	for l in "${LAYOUTS[@]}"; do
		n=${l%% *} f=$e/$n t=/tmp/cl/$n
		u=$RG_EXPORT/client/$n
		step "client: $n"
		lm "$t.local" map "$f"
		lm "$t.tcp" nfs-map "$TURL$u"
		lm "$t.x" nfs-map $XR "$XURL$u"
		lm "$t.xseek" nfs-map $XR --seek "$XURL$u"
		same "cl_${n}_map_tcp" "$t.local" "$t.tcp"
		same "cl_${n}_map_x" "$t.local" "$t.x"
		same "cl_${n}_map_xseek" "$t.local" "$t.xseek"
		rm -f "$c/$n"
		lacuna nfs-get $XR "$XURL$u" "$c/$n" >"$t.get" 2>&1
		r "cl_${n}_get" "exit $? $(grep -c "with READ_PLUS${XR:+ over RDMA}," "$t.get")"
		head -n 1 "$t.get" >&2
		same "cl_${n}_get_cmp" "$b/$n" "$c/$n"
		segs "$b/$n" >"$t.segs"
		segs "$c/$n" >"$t.csegs"
		same "cl_${n}_get_holes" "$t.segs" "$t.csegs"
		r "cl_${n}_get_alloc" "$(($(stat -c '%b * %B' "$c/$n") <= $(stat -c '%b * %B' "$b/$n") + 65536))"
		rm -f "$c/$n"
		lacuna nfs-get $XR --read "$XURL$u" "$c/$n" >"$t.get" 2>&1
		r "cl_${n}_getread" "exit $? $(grep -c "with READ${XR:+ over RDMA}," "$t.get")"
		head -n 1 "$t.get" >&2
		same "cl_${n}_getread_cmp" "$b/$n" "$c/$n"
		rm -f "$c/$n"
	done
	for l in "${RANGES[@]}"; do
		read -r n o len <<<"$l"
		t=/tmp/cl/$n.range u=$RG_EXPORT/client/$n
		step "client: $n [$o, +$len)"
		lm "$t.local" map --offset "$o" --length "$len" "$e/$n"
		lm "$t.tcp" nfs-map --offset "$o" --length "$len" "$TURL$u"
		lm "$t.x" nfs-map $XR --offset "$o" --length "$len" "$XURL$u"
		lm "$t.xseek" nfs-map $XR --seek --offset "$o" --length "$len" "$XURL$u"
		same "cl_${n}_range_tcp" "$t.local" "$t.tcp"
		same "cl_${n}_range_x" "$t.local" "$t.x"
		same "cl_${n}_range_xseek" "$t.local" "$t.xseek"
	done
	rm -rf "$e" "$c" /tmp/cl && r cl_cleanup ok
}

# ---- hostile RPC-over-RDMA peers while the kernel client works
bgio() { # a 256 KiB file written and read back with O_DIRECT until told to stop
	local i=0 bad=0 want
	head -c 262144 /dev/urandom >/tmp/bg.src
	want=$(sha /tmp/bg.src)
	while [ ! -e /tmp/bg.stop ]; do
		dd if=/tmp/bg.src of="$1" bs=64k oflag=direct status=none || bad=$((bad + 1))
		[ "$(dd if="$1" bs=64k iflag=direct status=none | sha256sum | cut -d' ' -f1)" = "$want" ] ||
			bad=$((bad + 1))
		i=$((i + 1))
		sleep 0.1
	done
	echo "$i $bad" >/tmp/bg.result
}

hostile() {
	local m=/tmp/nfsh d=/tmp/nfsh/hostile bg
	step "hostile: mount vers=4.2 proto=rdma"
	rg_mount 4.2 "$m" || return
	r h_mount ok
	mkdir "$d" && r h_mkdir ok
	rm -f /tmp/bg.stop /tmp/bg.result
	bgio "$d/bg" &
	bg=$!
	step "hostile: rdma_hostile $RG_SERVER 20049"
	timeout -k 10 400 rdma_hostile "$RG_SERVER" 20049 >"$RG_DIR/hostile.out" 2>&1
	r h_rc $?
	step "hostile: done"
	touch /tmp/bg.stop
	wait "$bg"
	r h_bg "$(cat /tmp/bg.result 2>/dev/null)"
	head -c $((3 * 1048576 + 5)) /dev/urandom >/tmp/h.src
	r h_src "$(sha /tmp/h.src)"
	cp /tmp/h.src "$d/after" && r h_write ok
	rg_drop
	r h_read "$(sha "$d/after")"
	r h_ls "$(ls "$d" | tr '\n' ' ')"
	rm -rf "$d" && r h_rm ok
	umount "$m" && r h_umount ok
	r h_lacunad "$(kill -0 "$RG_LACUNAD_PID" 2>/dev/null && echo yes || echo no)"
}

# ---- max_rdma_connections(_per_client): a second lacunad with small limits
# limits TAG N SETTING: rdma_hostile --conn-limit N against it
limits() {
	local t=$1 n=$2 d=/tmp/lim-$1 pid i st
	step "limits $t: a second lacunad with $3"
	mkdir -p "$d"
	{
		echo "listen = 0.0.0.0:2050"
		echo "threads = 1"
		echo "stats_file = $d/stats"
		echo "state_dir = $d/state"
		echo "rdma = yes"
		echo "rdma_port = 20050"
		echo "$3"
		echo "$RG_EXPORT 10.77.0.0/24(rw,no_root_squash)"
	} >"$d/lacunad.conf"
	setsid lacunad --config "$d/lacunad.conf" -f </dev/null >"$RG_DIR/lacunad-$t.log" 2>&1 &
	pid=$!
	_rg_wait_tcp 2050 "$pid" && r "${t}_up" ok
	_rg_wait_rdma 20050 "$pid" || sleep 2
	sleep 1.5 # (the stats file is rewritten every second)
	r "${t}_refused_0" "$(awk '$1 == "rdma_conns_refused" { print $2 }' "$d/stats")"
	timeout -k 10 300 rdma_hostile --conn-limit "$n" "$RG_SERVER" 20050 \
		>"$RG_DIR/limit-$t.out" 2>&1
	r "${t}_rc" $?
	# (each lacunad pins its 544 MiB buffer pool)
	r "${t}_memavail" "$(awk '$1 == "MemAvailable:" { print int($2 / 1024) }' /proc/meminfo)"
	sleep 1.5
	r "${t}_refused_1" "$(awk '$1 == "rdma_conns_refused" { print $2 }' "$d/stats")"
	kill -TERM "$pid"
	for ((i = 0; i < 150; i++)); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	kill -0 "$pid" 2>/dev/null && kill -KILL "$pid"
	wait "$pid"
	st=$?
	r "${t}_exit" "$st"
}

pass v42 4.2
pass v41 4.1
# what the kernel client's traffic took (the stats file is rewritten every second)
sleep 1.5
for k in rdma_conns rdma_read_chunk_bytes rdma_write_chunk_bytes rdma_reply_chunk_replies \
	rdma_inline_replies rdma_errors; do
	r "k_$k" "$(awk -v k="$k" '$1 == k { print $2 }' "$RG_DIR/stats" 2>/dev/null)"
done
# the client's soft-RoCE device took the replies: client and server each on
# their own device, the packets across the veth pair
r rxe1_rcvd "$(cat /sys/class/infiniband/rxe1/ports/1/hw_counters/rcvd_pkts 2>/dev/null)"
r v1_rx "$(cat /sys/class/net/v1/statistics/rx_bytes)"
client
. "$RG_DIR/uniform.sh"
uniform u --replies 1000
if [ "$RG_PROTO" = rdma ]; then
	hostile
	limits lp 4 "max_rdma_connections_per_client = 4"
	limits la 3 "max_rdma_connections = 3"
fi
# the client keeps its open file and lock across a crash of lacunad
step "grace: mount vers=4.2 proto=$RG_PROTO"
if rg_mount 4.2 "$m"; then
	rm -f "$RG_DIR/locked-g" "$RG_DIR/restarted-g"
	python3 "$RG_DIR/lock_holder.py" "$m/held-g" "$RG_DIR" g >/tmp/holder.out 2>&1 &
	hp=$!
	for ((i = 0; i < 600; i++)); do
		[ -e "$RG_DIR/locked-g" ] && break
		sleep 0.1
	done
	step "grace: lacunad killed (-9) and started again"
	rg_restart_lacunad crash && r g_restarted ok
	: >"$RG_DIR/restarted-g"
	wait $hp
	sed 's/^/g_/' /tmp/holder.out
	r g_lost_locks "$(dmesg | grep -c 'lost .* locks')"
	r g_backing "$(tr '\n' ' ' <"$RG_BACKING/held-g")"
	umount "$m"
fi
r lacunad_running "$(kill -0 "$RG_LACUNAD_PID" 2>/dev/null && echo yes || echo no)"
r rxe "$RG_RXE"
step done
GUEST

t0=$SECONDS
# 2560 MiB: the limits' second lacunad pins a 544 MiB pool beside the first's
"$RG" run --proto "$LT_RDMA_PROTO" --dir "$share" --mem 2560 --timeout 900 \
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

# The negative control, in a VM of its own: lacunad started with
# LACUNA_TEST_PLAIN_WRITE=1 applies WRITEs with plain pwrite, which the
# kernel cuts on the pages of lacunad's buffer; the same check must catch
# a torn reply within 3000, or it proves nothing.
plain="$LT_TMP/plain"
mkdir -p "$plain/py"
if ! { cp "$share/uniform.sh" "$plain/" && cp "$share"/py/*.py "$plain/py/"; }; then
	lt_hard "copying the guest scripts into $plain failed"
fi
t0=$SECONDS
# shellcheck disable=SC2016 # expanded in the guest
LACUNAD_ENV=LACUNA_TEST_PLAIN_WRITE=1 "$RG" run --proto "$LT_RDMA_PROTO" --dir "$plain" \
	--timeout 900 -- bash -c '. "$RG_DIR/uniform.sh" && uniform p --until-torn 3000' \
	>"$LT_TMP/out-plain" 2>"$LT_TMP/err-plain"
prc=$?
lt_log "VM run, negative control: $((SECONDS - t0)) s (proto $LT_RDMA_PROTO)"
sed 's/^/# guest (plain write): /' "$LT_TMP/out-plain"
sed 's/^/# guest (plain write) stderr: /' "$LT_TMP/err-plain"
case $prc in
0) ;;
124) lt_fail "negative control: the VM timed out (lacunad or the client hung?)" ;;
*) lt_hard "negative control: the VM or the guest set-up failed (exit $prc)" ;;
esac


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
	# mountstats: the reads were READs over RDMA (RFC 8267 section 6: no
	# READ_PLUS there; the 6.12 client sends READ_PLUS over TCP alone)
	ms="READ=$(val "${t}_ms_READ") READ_PLUS=$(val "${t}_ms_READ_PLUS")"
	ms+=" WRITE=$(val "${t}_ms_WRITE") READDIR=$(val "${t}_ms_READDIR")"
	lt_log "vers=$vers: mountstats: $ms"
	lt_check "vers=$vers: mountstats: WRITE and READDIR sent ($ms)" \
		test "$(val "${t}_ms_WRITE")" -gt 0 -a "$(val "${t}_ms_READDIR")" -gt 0
	if [ "$LT_RDMA_PROTO" = rdma ]; then
		lt_check "vers=$vers: mountstats: the reads went as READ over RDMA ($ms)" \
			test "$(val "${t}_ms_READ")" -gt 0 -a "$(val "${t}_ms_READ_PLUS")" -eq 0
	fi
	lt_check_eq "vers=$vers: umount" ok "$(val "${t}_umount")"
done

# our own client
if [ "$LT_RDMA_PROTO" = rdma ]; then x=" --rdma" xget=" over RDMA"; else x="" xget=""; fi
for l in holes dense extents tailhole allhole tiny empty; do
	lt_check_eq "client $l: lt_seekmap makes it on the lacunafs mount" ok "$(val "cl_${l}_made")"
	lt_check_eq "client $l: lacuna nfs-map over TCP = lacuna map" same "$(val "cl_${l}_map_tcp")"
	lt_check_eq "client $l: lacuna nfs-map$x = lacuna map" same "$(val "cl_${l}_map_x")"
	lt_check_eq "client $l: lacuna nfs-map$x --seek = lacuna map" same "$(val "cl_${l}_map_xseek")"
	lt_check_eq "client $l: lacuna nfs-get$x copies it with READ_PLUS$xget" "exit 0 1" \
		"$(val "cl_${l}_get")"
	lt_check_eq "client $l: ... the copy is the file (cmp)" same "$(val "cl_${l}_get_cmp")"
	lt_check_eq "client $l: ... the copy has the file's data and holes (lacuna map)" same \
		"$(val "cl_${l}_get_holes")"
	lt_check_eq "client $l: ... no more blocks than the file (64 KiB slack)" 1 \
		"$(val "cl_${l}_get_alloc")"
	lt_check_eq "client $l: lacuna nfs-get$x --read copies it with READ$xget" "exit 0 1" \
		"$(val "cl_${l}_getread")"
	lt_check_eq "client $l: ... the copy is the file (cmp)" same "$(val "cl_${l}_getread_cmp")"
done
for l in extents holes; do
	lt_check_eq "client $l: nfs-map --offset --length over TCP = lacuna map --offset --length" \
		same "$(val "cl_${l}_range_tcp")"
	lt_check_eq "client $l: nfs-map$x --offset --length = lacuna map --offset --length" \
		same "$(val "cl_${l}_range_x")"
	lt_check_eq "client $l: nfs-map$x --seek --offset --length = lacuna map --offset --length" \
		same "$(val "cl_${l}_range_xseek")"
done
lt_check_eq "client: rm -rf of the files and copies" ok "$(val cl_cleanup)"

# grew_by A B N: whole numbers, N at least 2 and B = A + N
grew_by() {
	[[ $1 =~ ^[0-9]+$ && $2 =~ ^[0-9]+$ && $3 =~ ^[0-9]+$ ]] && [ "$3" -ge 2 ] &&
		[ $(($2 - $1)) = "$3" ]
}
# hostile peers beside a working kernel mount
if [ "$LT_RDMA_PROTO" = rdma ]; then
	lt_check_eq "hostile: vers=4.2 proto=rdma mount" ok "$(val h_mount)"
	lt_check_eq "hostile: mkdir" ok "$(val h_mkdir)"
	ncase=0
	while IFS= read -r line; do
		case $line in
		"ok "*:*) lt_ok "rdma_hostile ${line#ok }"; ncase=$((ncase + 1)) ;;
		"FAIL "*) lt_fail "rdma_hostile ${line#FAIL }"; ncase=$((ncase + 1)) ;;
		*) lt_log "rdma_hostile: $line" ;;
		esac
	done <"$share/hostile.out"
	lt_check_eq "rdma_hostile: all 14 cases reported" 14 "$ncase"
	lt_check_eq "rdma_hostile exits 0 (every case passed, lacunad answers)" 0 "$(val h_rc)"
	read -r bgn bgbad <<<"$(val h_bg)"
	if [ "${bgn:-0}" -gt 0 ] && [ "$bgbad" = 0 ]; then
		lt_ok "hostile: the kernel client's I/O meanwhile: $bgn rounds of O_DIRECT write + read, all good"
	else
		lt_fail "hostile: the kernel client's I/O meanwhile: rounds and failures: '$(val h_bg)'"
	fi
	lt_check_eq "hostile: then a new 3 MiB file writes" ok "$(val h_write)"
	lt_check_eq "hostile: ... and reads back (SHA-256, caches dropped)" "$(val h_src)" \
		"$(val h_read)"
	lt_check_eq "hostile: ... ls" "after bg " "$(val h_ls)"
	lt_check_eq "hostile: rm -rf" ok "$(val h_rm)"
	lt_check_eq "hostile: umount" ok "$(val h_umount)"
	lt_check_eq "hostile: lacunad is alive" yes "$(val h_lacunad)"
	lt_check "hostile: lacunad's log shows it refused a bad transport header" \
		grep -q "rdma: connection [0-9]*: bad transport header (xid .*, version 2," \
		"$share/lacunad.log"
	lt_check "hostile: lacunad's log shows a failed RDMA Read or Write (bad handles)" \
		grep -qE "rdma: connection [0-9]*: (RDMA Read of xid .* failed|RDMA (Read|Write) failed)" \
		"$share/lacunad.log"
	# max_rdma_connections(_per_client), on a second lacunad
	for l in "lp 4 max_rdma_connections_per_client" "la 3 max_rdma_connections"; do
		read -r t n k <<<"$l"
		w="$k = $n"
		lt_check_eq "$w: a second lacunad serves on ports 2050 and 20050" ok "$(val "${t}_up")"
		while IFS= read -r line; do
			case $line in
			"ok "*:*) lt_ok "$w: rdma_hostile ${line#ok }" ;;
			"FAIL "*) lt_fail "$w: rdma_hostile ${line#FAIL }" ;;
			*) lt_log "$w: rdma_hostile: $line" ;;
			esac
		done <"$share/limit-$t.out"
		lt_check_eq "$w: rdma_hostile --conn-limit $n exits 0" 0 "$(val "${t}_rc")"
		lt_log "$w: the guest's MemAvailable with two lacunad: $(val "${t}_memavail") MiB"
		rej=$(sed -n 's/^rejected=\([0-9]*\) .*/\1/p' "$share/limit-$t.out")
		a=$(val "${t}_refused_0") b=$(val "${t}_refused_1")
		lt_check "$w: rdma_conns_refused grew by the requests rejected ($a to $b; $rej rejected, at least 2)" \
			grew_by "$a" "$b" "$rej"
		lt_check "$w: lacunad's log names the limit" \
			grep -q "rdma: connection from .* refused: $k reached" "$share/lacunad-$t.log"
		lt_check_eq "$w: lacunad exits 0 on SIGTERM" 0 "$(val "${t}_exit")"
		if [ "$(val "${t}_rc")" != 0 ]; then
			tail -n 30 "$share/lacunad-$t.log" | sed "s/^/# lacunad ($w): /"
		fi
	done
	# the kernel client's passes used every way a call and a reply can travel
	for k in rdma_conns rdma_read_chunk_bytes rdma_write_chunk_bytes \
		rdma_reply_chunk_replies rdma_inline_replies; do
		lt_check "kernel client: stats $k > 0 ($(val "k_$k"))" test "$(val "k_$k")" -gt 0
	done
	lt_check_eq "kernel client: no RDMA_ERROR sent to it" 0 "$(val k_rdma_errors)"
	lt_check "kernel client: rxe1 received its packets ($(val rxe1_rcvd))" \
		test "$(val rxe1_rcvd)" -gt 10000
	lt_check "kernel client: the data crossed the veth pair ($(val v1_rx) bytes)" \
		test "$(val v1_rx)" -gt 180000000
	# what it said about the peers (a bounded excerpt)
	grep -E 'rdma: connection [0-9]+: ' "$share/lacunad.log" | head -n 30 | sed 's/^/# lacunad: /'
else
	lt_log "NOTE: proto=tcp: no hostile RDMA peers, and the client ran over TCP"
fi
# ---- one NFS WRITE applied whole (lt_rp_uniform.py in both runs)
# ge A B: both whole numbers and A >= B
ge() { [[ $1 =~ ^[0-9]+$ && $2 =~ ^[0-9]+$ ]] && [ "$1" -ge "$2" ]; }
# delta TAG KEY OUT: how much lacunad's counter KEY grew during the check
delta() {
	local a b
	a=$(val "$1_$2_0" "$3") b=$(val "$1_$2_1" "$3")
	if [[ $a =~ ^[0-9]+$ && $b =~ ^[0-9]+$ ]]; then echo $((b - a)); else echo "?"; fi
}
# urc TAG OUT: lt_rp_uniform.py's exit status, or what it means
urc() {
	case $(val "$1_rc" "$2") in
	3 | 124) echo "timed out" ;;
	2) echo "error (its messages are above)" ;;
	*) val "$1_rc" "$2" ;;
	esac
}
# uchecks TAG OUT WHAT: what both runs must show of the writer
uchecks() {
	local t=$1 o=$2 w=$3 n b
	n=$(val "${t}_writes" "$o")
	lt_check "$w: the writer wrote ($n times; by extent $(val "${t}_writes_by_extent" "$o"))" \
		ge "$n" 1
	lt_check_eq "$w: each O_DIRECT write went as one NFS WRITE (mountstats)" "$n" \
		"$(val "${t}_nfs_writes" "$o")"
	lt_check_eq "$w: each hole punch went as one DEALLOCATE (mountstats)" \
		"$(val "${t}_punches" "$o")" "$(val "${t}_nfs_deallocates" "$o")"
	if [ "$LT_RDMA_PROTO" = rdma ]; then
		b=$(delta "$t" rdma_read_chunk_bytes "$o")
		lt_check "$w: the WRITE data came through read chunks (rdma_read_chunk_bytes +$b, $(val "${t}_write_bytes" "$o") bytes written)" \
			ge "$b" "$(val "${t}_write_bytes" "$o")"
	fi
	lt_check_eq "$w: umount" ok "$(val "${t}_umount" "$o")"
}

o=$LT_TMP/out
w="atomic WRITE under READ_PLUS"
lt_check_eq "$w: lt_rp_uniform.py ran to its end, no reply torn" 0 "$(urc u "$o")"
lt_check "$w: at least 1000 READ_PLUS replies checked ($(val u_replies))" ge "$(val u_replies)" 1000
lt_check_eq "$w: torn replies (of $(val u_replies))" 0 "$(val u_torn)"
lt_check "$w: the reader saw each extent written whole ($(val u_data_replies_by_extent) replies) while the writer wrote $(val u_writes) times" \
	grep -qE '^u_data_replies_by_extent=[1-9][0-9]*,[1-9][0-9]*,[1-9][0-9]*$' "$o"
lt_check "$w: ... and holes ($(val u_hole_replies) replies)" ge "$(val u_hole_replies)" 1
lt_check "$w: the writer wrote each of the 3 extents ($(val u_writes_by_extent) times)" \
	grep -qE '^u_writes_by_extent=[1-9][0-9]*,[1-9][0-9]*,[1-9][0-9]*$' "$o"
uchecks u "$o" "$w"
d=$(delta u write_atomic "$o")
lt_check "$w: lacunad applied them with its atomic write (write_atomic +$d, $(val u_writes) writes)" \
	ge "$d" "$(val u_writes)"
lt_check_eq "$w: write_not_atomic stayed 0" 0 "$(val u_write_not_atomic_1)"
lt_check_fails "$w: lacunad's atomic write was on (no LACUNA_TEST_PLAIN_WRITE in its log)" \
	grep -q "ATOMIC WRITE DISABLED FOR TESTING" "$share/lacunad.log"
lt_log "$w: $(val u_s) s in the guest"

o=$LT_TMP/out-plain
w="negative control, LACUNA_TEST_PLAIN_WRITE=1"
lt_check "$w: lacunad says its atomic write is off" \
	grep -q "ATOMIC WRITE DISABLED FOR TESTING" "$plain/lacunad.log"
case $(urc p "$o") in
0) lt_ok "$w: a torn reply caught after $(val p_replies "$o") replies and $(val p_writes "$o") writes: this run proves the check can see the tear" ;;
1) lt_fail "$w: no torn reply in $(val p_replies "$o") replies: the check did not see the tear it must see" ;;
*) lt_fail "$w: lt_rp_uniform.py: $(urc p "$o")" ;;
esac
uchecks p "$o" "$w"
d=$(delta p write_not_atomic "$o")
lt_check "$w: lacunad wrote with pwrite (write_not_atomic +$d, $(val p_writes "$o") writes)" \
	ge "$d" "$(val p_writes "$o")"
lt_check_eq "$w: lacunad exits 0 on SIGTERM" 0 "$(val rg_lacunad_exit "$o")"

w="grace, proto=$LT_RDMA_PROTO"
lt_check_eq "$w: lacunad killed and started again" ok "$(val g_restarted)"
lt_check_eq "$w: the holder's write after the restart succeeds" ok "$(val g_write_after)"
lt_check_eq "$w: its read gives what it wrote" ok "$(val g_read_after)"
lt_check_eq "$w: another process is still refused the lock" refused "$(val g_other_lock)"
lt_check_eq "$w: no lost locks in the guest's log" 0 "$(val g_lost_locks)"
lt_check_eq "$w: the backing file holds what the holder wrote" "before-g after-g " "$(val g_backing)"
lt_check "$w: lacunad reclaimed the open and the lock in its grace period" \
	grep -qE "grace period ends: .* [1-9][0-9]* open\(s\), [1-9][0-9]* lock\(s\)" "$share/lacunad.log"
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
