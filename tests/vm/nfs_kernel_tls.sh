#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# RPC-with-TLS (RFC 9289) with the Linux kernel's own client, in the test
# VM (tests/vm): the 6.12 kernel (bookworm-backports) with `tlshd` from
# ktls-utils, fetched from Debian 13 (trixie) with `vm.sh pkg` (Debian 12
# has no ktls-utils; that build runs on Debian 12's glibc and GnuTLS).
# The guest sees tlshd in the cache (the host's root) and its
# configuration in the test's shared directory (tlshd -c).
#
# The test makes a CA, a server certificate for 10.0.2.2 (the address the
# guest mounts, which tlshd checks against the certificate's IP SANs) and
# a client certificate, all with openssl (tests/lib_tls.sh). lacunad
# serves a lacunafs mount over ext4 with two exports: `tls`
# (xprtsec=tls:mtls) and `clear` (xprtsec=none:tls). One 6.12 boot:
#
# - tlshd starts on the kernel's handshake netlink family (the tls module
#   loaded) and logs every handshake it completes.
# - A mount of `tls` without xprtsec is refused (the export wants TLS).
# - `tls` mounted with xprtsec=tls (/proc/mounts shows it): sparse files
#   read with READ_PLUS through the page cache and with O_DIRECT have the
#   backing file's SHA-256; a file written by the guest reads back after
#   its caches are dropped and lands in the backing file; a short fsx
#   (fsx_mini.py) on one file; a process holds an open file and an fcntl
#   lock while the host stops lacunad with SIGTERM and starts it again on
#   the same state directory: the client reconnects (a new handshake),
#   reclaims both in the grace period and goes on (write, read, the lock
#   still refused to another process); lacunad logs the reclaims.
# - `tls` mounted with xprtsec=mtls (the client certificate from
#   tlshd.conf): a sparse file reads right, a file written reads back.
# - mountstats: READ_PLUS > 0, READ 0; lacunad counted READ_PLUS and hole
#   bytes.
# - The host captures the port (dumpcap on lo: qemu's user network
#   connects from the host's loopback): after each AUTH_TLS probe the
#   stream is TLS 1.3 records; no NFS call or reply decodes (tshark with
#   the port decoded as RPC), and the marker strings in the files' data
#   and names written and read over TLS appear nowhere in the capture.
#
# Then one 6.1 boot (no RPC-with-TLS in its client): it mounts `clear` in
# the clear (xprtsec=none allowed) and reads and writes the marker there;
# its capture shows NFS and the marker in clear text, the control that
# the capture checks above can see clear text when there is some.
#
# Skips (77) where the VM cannot run or ktls-utils cannot be fetched
# (with the reason). About a minute here (TCG): 30-40 s of 6.12, 10-15 s
# of 6.1.

: "${top_srcdir:=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}"
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/vm/vm.sh"
. "$top_srcdir/tests/lib_nfs.sh"
. "$top_srcdir/tests/lib_tls.sh"
lt_init
[ "$LT_NFS_SERVER" = lacunad ] || lt_skip "RPC-with-TLS is lacunad's"
nfs_require_server
lt_require_cmd openssl python3 sha256sum
SM="$TOOLS/lt_seekmap"
[ -x "$SM" ] || lt_hard "lt_seekmap not built at $SM"
# the TLS part needs a client with RPC-with-TLS (6.5 and later)
K_TLS=6.12
K_CLEAR=6.1
LACUNA_VM_KERNEL=$K_TLS vm_require
LACUNA_VM_KERNEL=$K_CLEAR vm_require
tlshd_root=$(vm_pkg ktls-utils 2>"$LT_TMP/pkg.err")
case $? in
0) ;;
77) lt_skip "ktls-utils (tlshd) cannot be fetched from trixie: $(sed -n 's/.*SKIP: //p' "$LT_TMP/pkg.err")" ;;
*)
	cat "$LT_TMP/pkg.err"
	lt_hard "vm.sh pkg ktls-utils failed"
	;;
esac
TLSHD="$tlshd_root/usr/sbin/tlshd"
[ -x "$TLSHD" ] || lt_hard "ktls-utils has no usr/sbin/tlshd at $tlshd_root"
v=$("$TLSHD" -v 2>&1) || lt_skip "trixie's tlshd does not run on this host: $v"
lt_log "tlshd: $v"

share="$LT_TMP/share"
mkdir -p "$share"
cp "$top_srcdir/tests/vm/lock_holder.py" "$top_srcdir/tests/vm/fsx_mini.py" "$share/" ||
	lt_hard "copying the guest's scripts"

# ---- certificates (tests/lib_tls.sh): a CA, the server (10.0.2.2 for
# the guest), the client (named for lacunad's log of its identity)
pki="$share/pki"
CLIENT_CN="lacuna-vm-client"
TLS_SERVER_SANS=IP:10.0.2.2 TLS_CLIENT_NAME=$CLIENT_CN tls_make_certs "$pki"
cat >"$share/tlshd.conf" <<EOF
[debug]
loglevel=1
tls=0
nl=0

[authenticate.client]
x509.truststore=$pki/ca.crt
x509.certificate=$pki/client.crt
x509.private_key=$pki/client.key
EOF

# ---- the exports: tls (TLS or mutual TLS only) and clear (none or TLS)
MARK_W="LACUNA-CLEARTEXT-MARKER-WRITTEN"
MARK_R="LACUNA-CLEARTEXT-MARKER-ONDISK"
MARK_NAME="lacuna-cleartext-marker-name"
LAYOUTS=(
	"many:size=8M,data@0+4k*100/80k"
	"unal:size=3000001,data@1000+5000*40/65537,data@2999000+1001"
	"hole:size=5M"
	"small:size=10000,data@4096+100"
)
HOLE_SIZE=$((5 * 1048576))
nfs_make_export ext4 tls
e=$NFS_EXPORT
b=$NFS_BACKING
mkdir -p "$e/tls" "$e/clear" || lt_hard "mkdir the exports"
names=""
for l in "${LAYOUTS[@]}"; do
	"$SM" make "$e/tls/${l%%:*}" "${l#*:}" || lt_hard "lt_seekmap make ${l%%:*}"
	names+="${l%%:*} "
done
for d in tls clear; do
	{ for ((i = 0; i < 2000; i++)); do echo "$MARK_R $i"; done; } >"$e/$d/$MARK_NAME" ||
		lt_hard "making the marker file"
done
sync

stats="$LT_TMP/lacunad.stats"
state="$LT_TMP/state"
conf="$LT_TMP/lacunad.conf"
LEASE=15
{
	echo "threads = 2"
	echo "stats_file = $stats"
	echo "tls_cert = $pki/server.crt"
	echo "tls_key = $pki/server.key"
	echo "tls_ca = $pki/ca.crt"
	echo "$e/tls 127.0.0.0/8(rw,no_root_squash,$VM_EXPORT_OPTS,xprtsec=tls:mtls)"
	echo "$e/clear 127.0.0.0/8(rw,no_root_squash,$VM_EXPORT_OPTS,xprtsec=none:tls)"
} >"$conf"
nfs_start --config "$conf" --state-dir "$state" --lease-time "$LEASE"
PORT=$NFS_PORT
LACUNAD_PORT=$NFS_PORT

# restart: SIGTERM lacunad, start it again on the same port, state
# directory and configuration
restart() {
	local i
	nfs_stop
	NFS_N=$((NFS_N + 1))
	NFS_LOG="$LT_TMP/lacunad.$NFS_N.log"
	setsid "$LACUNAD" --config "$conf" --state-dir "$state" --lease-time "$LEASE" \
		--listen "127.0.0.1:$LACUNAD_PORT" -f </dev/null >"$NFS_LOG" 2>&1 &
	NFS_PID=$!
	NFS_PORT=$LACUNAD_PORT
	NFS_RUNNING[$NFS_PID]=1
	lt_push_cleanup "_nfs_kill $NFS_PID"
	for ((i = 0; i < 600; i++)); do
		ss -Hltn "sport = :$LACUNAD_PORT" | grep -q . && return 0
		kill -0 "$NFS_PID" 2>/dev/null || break
		sleep 0.1
	done
	sed 's/^/# server: /' "$NFS_LOG"
	lt_hard "lacunad did not start again on port $LACUNAD_PORT"
}

# ---- the capture of everything the guests send and get
cap="$LT_TMP/tls.pcapng"
have_cap=1
NFS_PORT=$PORT nfs_capture_start "$cap" || {
	have_cap=0
	lt_log "no capture: $NFS_CAP_WHY"
}

cat >"$share/guest612.sh" <<'GUEST'
r() { echo "$1=$2"; }
step() { echo "# $(cut -d' ' -f1 /proc/uptime) s: $*" >&2; }
sha() { sha256sum | cut -d' ' -f1; }
opts="vers=4.2,proto=tcp,port=$PORT,addr=10.0.2.2,soft,timeo=300,retrans=2"
step "tls module, tlshd"
modprobe tls && r tls_module ok
"$TLSHD" -s -c "$SHARE/tlshd.conf" </dev/null >"$SHARE/tlshd.log" 2>&1 &
tlshd=$!
# its last words before it listens on the handshake family's multicast group
for ((i = 0; i < 300; i++)); do
	grep -q "PSK SHA384 priority string" "$SHARE/tlshd.log" && break
	kill -0 $tlshd 2>/dev/null || break
	sleep 0.1
done
sleep 0.2
kill -0 $tlshd 2>/dev/null && r tlshd running

step "plain mount of the tls export (refused)"
mkdir -p /tmp/plain /tmp/tls /tmp/mtls
if timeout 60 mount -t nfs4 -o "$opts" "10.0.2.2:$EXPORT/tls" /tmp/plain 2>"$SHARE/plain.err"; then
	r plain_mount ok
	umount /tmp/plain
else
	r plain_mount refused
fi

m=/tmp/tls
step "mount xprtsec=tls"
timeout 120 mount -t nfs4 -o "$opts,xprtsec=tls" "10.0.2.2:$EXPORT/tls" $m 2>"$SHARE/tls.err" &&
	r tls_mount ok
r tls_mount_opts "$(awk -v m=$m '$2 == m { print $4 }' /proc/mounts)"
for f in $NAMES; do
	step "$f: reads"
	sync
	echo 3 >/proc/sys/vm/drop_caches
	r "${f}_cached" "$(sha <"$m/$f")"
	r "${f}_direct" "$(dd if="$m/$f" iflag=direct bs=1M status=none | sha)"
done
step "write and read back"
r marker_read "$(grep -c "$MARK_R" "$m/$MARK_NAME")"
head -c 3000000 /dev/urandom >/tmp/w
for ((i = 0; i < 2000; i++)); do echo "$MARK_W $i"; done >>/tmp/w
r w_sha "$(sha </tmp/w)"
cp /tmp/w "$m/written" && sync && r w_copy ok
echo 3 >/proc/sys/vm/drop_caches
r w_readback "$(sha <"$m/written")"
step "fsx"
timeout 600 python3 "$SHARE/fsx_mini.py" "$m/fsx" "$FSX_OPS" 7 | sed 's/^/fsx_/'

step "holder runs (the host restarts lacunad meanwhile)"
timeout 900 python3 "$SHARE/lock_holder.py" "$m/held" "$SHARE" tls | sed "s/^/grace_/"
r grace_lost_locks "$(dmesg | grep -c 'lost .* locks')"
r after_restart_ls "$(ls $m | tr '\n' ' ')"
awk -v m=$m '$1 == "device" { on = ($5 == m) } on' /proc/self/mountstats >"$SHARE/mountstats.tls"
umount $m && r tls_umount ok

m=/tmp/mtls
step "mount xprtsec=mtls"
timeout 120 mount -t nfs4 -o "$opts,xprtsec=mtls" "10.0.2.2:$EXPORT/tls" $m 2>"$SHARE/mtls.err" &&
	r mtls_mount ok
r mtls_mount_opts "$(awk -v m=$m '$2 == m { print $4 }' /proc/mounts)"
echo 3 >/proc/sys/vm/drop_caches
r mtls_many "$(sha <"$m/many")"
cp /tmp/w "$m/written-mtls" && sync && r mtls_w_copy ok
echo 3 >/proc/sys/vm/drop_caches
r mtls_w_readback "$(sha <"$m/written-mtls")"
awk -v m=$m '$1 == "device" { on = ($5 == m) } on' /proc/self/mountstats >"$SHARE/mountstats.mtls"
umount $m && r mtls_umount ok
kill $tlshd
step done
GUEST

cat >"$share/guest61.sh" <<'GUEST'
r() { echo "$1=$2"; }
sha() { sha256sum | cut -d' ' -f1; }
m=/tmp/clear
mkdir -p $m
timeout 120 mount -t nfs4 -o "vers=4.2,proto=tcp,port=$PORT,addr=10.0.2.2,soft,timeo=300,retrans=2" \
	"10.0.2.2:$EXPORT/clear" $m 2>"$SHARE/clear.err" && r clear_mount ok
r clear_mount_opts "$(awk -v m=$m '$2 == m { print $4 }' /proc/mounts)"
r clear_marker_read "$(grep -c "$MARK_R" "$m/$MARK_NAME")"
for ((i = 0; i < 2000; i++)); do echo "$MARK_W $i"; done >/tmp/w
r clear_w_sha "$(sha </tmp/w)"
cp /tmp/w "$m/written-clear" && sync && r clear_w_copy ok
echo 3 >/proc/sys/vm/drop_caches
r clear_w_readback "$(sha <"$m/written-clear")"
umount $m && r clear_umount ok
GUEST

FSX_OPS=${LT_TLS_FSX_OPS:-600}
t0=$SECONDS
vm_pid=""
stop_vm() { [ -n "$vm_pid" ] && kill "$vm_pid" 2>/dev/null; }
lt_push_cleanup stop_vm
(cd "$share" && exec "$VM_SH" run --kernel "$K_TLS" --share "$share" --timeout 900 \
	--times "$LT_TMP/times" --env "PORT=$PORT" --env "SHARE=$share" --env "EXPORT=$e" \
	--env "NAMES=$names" --env "TLSHD=$TLSHD" --env "FSX_OPS=$FSX_OPS" \
	--env "MARK_R=$MARK_R" --env "MARK_W=$MARK_W" --env "MARK_NAME=$MARK_NAME" \
	-- bash "$share/guest612.sh") >"$LT_TMP/out" 2>"$LT_TMP/err" &
vm_pid=$!
# the restart while the guest holds its lock
while kill -0 $vm_pid 2>/dev/null && [ ! -e "$share/locked-tls" ]; do
	sleep 0.2
done
restarted=0
if [ -e "$share/locked-tls" ]; then
	lt_log "the guest holds its lock: lacunad stops (SIGTERM) and starts again"
	cp "$stats" "$LT_TMP/stats.before" 2>/dev/null
	restart
	restarted=1
	: >"$share/restarted-tls"
fi
wait $vm_pid
rc=$?
vm_pid=""
vm_report "$rc" $((SECONDS - t0)) "lacunad or tlshd"
sed 's/^/# tlshd: /' "$share/tlshd.log"
for f in plain tls mtls; do
	[ -s "$share/$f.err" ] && sed "s/^/# mount $f: /" "$share/$f.err"
done

lt_check "lacunad is alive after the kernel client" nfs_alive
lt_check_eq "the guest loaded the tls module" ok "$(val tls_module)"
lt_check_eq "tlshd runs in the guest" running "$(val tlshd)"
lt_check_eq "a mount of the tls:mtls export without TLS is refused" refused "$(val plain_mount)"

# ---- xprtsec=tls
lt_check_eq "mount xprtsec=tls" ok "$(val tls_mount)"
opts=",$(val tls_mount_opts),"
lt_check "... /proc/mounts shows vers=4.2 and xprtsec=tls (${opts:1:-1})" \
	test "${opts/,vers=4.2,/}" != "$opts" -a "${opts/,xprtsec=tls,/}" != "$opts"
for f in $names; do
	sha=$(nfs_sha256 "$b/tls/$f")
	lt_check_eq "$f: read through the page cache over TLS: the backing file's SHA-256" "$sha" "$(val "${f}_cached")"
	lt_check_eq "$f: dd iflag=direct bs=1M over TLS: the backing file's SHA-256" "$sha" "$(val "${f}_direct")"
done
lt_check_eq "the marker file reads whole over TLS" 2000 "$(val marker_read)"
lt_check_eq "a file written over TLS" ok "$(val w_copy)"
lt_check_eq "... reads back the same after dropping the caches" "$(val w_sha)" "$(val w_readback)"
lt_check_eq "... and is the backing file" "$(val w_sha)" "$(nfs_sha256 "$b/tls/written")"
lt_check_eq "fsx over TLS ($(val fsx_ops) operations)" ok "$(val fsx_fsx)"
sed -n 's/^fsx_\(fsx=FAIL\|# \)/# \1/p' "$LT_TMP/out"
lt_check_eq "... the backing file holds what fsx wrote" "$(val fsx_sha256)" "$(nfs_sha256 "$b/tls/fsx")"

# ---- the restart
lt_check "lacunad was restarted while the guest held its lock" test "$restarted" = 1
lt_check_eq "the holder locked its file over TLS" ok "$(val grace_locked)"
lt_check_eq "after the restart: the holder's write succeeds" ok "$(val grace_write_after)"
lt_check_eq "after the restart: its read gives what it wrote" ok "$(val grace_read_after)"
lt_check_eq "after the restart: another process is still refused the lock" refused "$(val grace_other_lock)"
lt_check_eq "after the restart: no lost locks in the guest's log" 0 "$(val grace_lost_locks)"
lt_check_eq "after the restart: the backing file holds what the holder wrote" \
	"before-tls after-tls" "$(tr '\n' ' ' <"$b/tls/held" | sed 's/ $//')"
lt_check "after the restart: lacunad started with a grace period" \
	grep -qE "grace period starts: [0-9]+ recorded client" "$NFS_LOG"
lt_check "after the restart: lacunad logged the reclaimed open and lock" \
	grep -qE "grace period ends: .*[1-9][0-9]* open\(s\), [1-9][0-9]* lock\(s\)" "$NFS_LOG"
sed -n 's/^/# lacunad: /; /grace/p' "$NFS_LOG"
lt_check_eq "guest umount of the xprtsec=tls mount" ok "$(val tls_umount)"

# ---- xprtsec=mtls
lt_check_eq "mount xprtsec=mtls" ok "$(val mtls_mount)"
opts=",$(val mtls_mount_opts),"
lt_check "... /proc/mounts shows xprtsec=mtls (${opts:1:-1})" test "${opts/,xprtsec=mtls,/}" != "$opts"
lt_check_eq "... a sparse file reads right over mutual TLS" "$(nfs_sha256 "$b/tls/many")" "$(val mtls_many)"
lt_check_eq "... a file written" ok "$(val mtls_w_copy)"
lt_check_eq "... reads back the same" "$(val w_sha)" "$(val mtls_w_readback)"
lt_check_eq "... and is the backing file" "$(val w_sha)" "$(nfs_sha256 "$b/tls/written-mtls")"
lt_check_eq "guest umount of the xprtsec=mtls mount" ok "$(val mtls_umount)"

# ---- tlshd's handshakes: one per mount and one more after the restart
hs=$(grep -c "Handshake with '\?10.0.2.2'\? (10.0.2.2) was successful" "$share/tlshd.log")
lt_check "tlshd completed ${hs:-no} handshakes with 10.0.2.2, at least 3 (tls, its reconnection, mtls)" \
	test "${hs:-0}" -ge 3
lt_check_eq "... and none failed" 0 "$(grep -c "failed" "$share/tlshd.log")"

# ---- READ_PLUS, counted by the client and by lacunad
grep -hE ' (READ|READ_PLUS|WRITE):' "$share/mountstats.tls" | sed 's/^/# mountstats tls: /'
rp=$(awk '$1 == "READ_PLUS:" { print $2 }' "$share/mountstats.tls")
lt_check "mountstats: READ_PLUS ops ${rp:-none} > 0 over TLS" test "${rp:-0}" -gt 0
lt_check_eq "mountstats: READ ops over TLS" 0 "$(awk '$1 == "READ:" { print $2 }' "$share/mountstats.tls")"
# lacunad's counters before the restart (the xprtsec=tls reads: the
# all-hole file twice; the file is written once a second, so the last
# second may be missing) and after it (the mtls mount's reads, mostly
# holes)
st() { awk -v k="$1" -v o="$2" '$1 == k && o == "" { print $2 } $1 == k && o != "" && $2 == o { print $3 }' "$3"; }
sleep 1.5
c=$(st op READ_PLUS "$LT_TMP/stats.before")
hb=$(st read_plus_hole_bytes "" "$LT_TMP/stats.before")
lt_check "lacunad counted ${c:-no} READ_PLUS over xprtsec=tls" test "${c:-0}" -gt 0
lt_check "... and ${hb:-no} hole bytes, at least the all-hole file twice ($((2 * HOLE_SIZE)))" \
	test "${hb:-0}" -ge $((2 * HOLE_SIZE))
x=$(st xprtsec_refused "" "$LT_TMP/stats.before")
lt_check "lacunad counted ${x:-no} calls refused for their transport (the plain mount)" \
	test "${x:-0}" -gt 0
c=$(st op READ_PLUS "$stats")
hb=$(st read_plus_hole_bytes "" "$stats")
lt_check "lacunad counted ${c:-no} READ_PLUS after its restart (mtls)" test "${c:-0}" -gt 0
lt_check "... and ${hb:-no} hole bytes" test "${hb:-0}" -gt 0
sed -n 's/^/# lacunad: /; /[Tt][Ll][Ss]\|handshake/p' "$LT_TMP"/lacunad.*.log | head -n 20
lt_check "lacunad logged the mtls client's identity ($CLIENT_CN)" \
	grep -q "$CLIENT_CN" "$LT_TMP"/lacunad.*.log

# ---- the 6.1 client: the none:tls export in the clear
t0=$SECONDS
(cd "$share" && exec "$VM_SH" run --kernel "$K_CLEAR" --share "$share" --timeout 600 \
	--env "PORT=$PORT" --env "SHARE=$share" --env "EXPORT=$e" \
	--env "MARK_R=$MARK_R" --env "MARK_W=$MARK_W" --env "MARK_NAME=$MARK_NAME" \
	-- bash "$share/guest61.sh") >"$LT_TMP/out61" 2>"$LT_TMP/err"
rc=$?
cp "$LT_TMP/out61" "$LT_TMP/out"
vm_report "$rc" $((SECONDS - t0)) "lacunad"
lt_check_eq "6.1: mount of the none:tls export in the clear" ok "$(val clear_mount)"
opts=",$(val clear_mount_opts),"
lt_check "... no xprtsec in /proc/mounts (${opts:1:-1})" test "${opts/,xprtsec=/}" = "$opts"
lt_check_eq "... the marker file reads whole" 2000 "$(val clear_marker_read)"
lt_check_eq "... a file written reads back" "$(val clear_w_sha)" "$(val clear_w_readback)"
lt_check_eq "... and is the backing file" "$(val clear_w_sha)" "$(nfs_sha256 "$b/clear/written-clear")"
lt_check_eq "6.1: umount" ok "$(val clear_umount)"
nfs_stop

# ---- what crossed the wire
if [ $have_cap = 1 ]; then
	nfs_capture_stop
	# the streams: TLS ones (after a probe) and clear ones (6.1's)
	ts() { tshark -r "$cap" -o tcp.reassemble_out_of_order:TRUE "$@" 2>>"$LT_TMP/tshark.err"; }
	ts -T fields -e tcp.stream -e tcp.len -Y "tcp.len > 0" |
		awk '{ n[$1] += $2 } END { for (s in n) print s, n[s] }' | sort -n >"$LT_TMP/streams"
	# a stream is TLS when its client sent the AUTH_TLS probe
	ts -2 -d "tcp.port==$PORT,rpc" -Y "rpc.msgtyp == 0 && rpc.auth.flavor == 7 && rpc.procedure == 0" \
		-T fields -e tcp.stream | sort -un >"$LT_TMP/tls-streams"
	ntls=$(wc -l <"$LT_TMP/tls-streams")
	lt_log "capture: $(wc -l <"$LT_TMP/streams") TCP streams with data, $ntls began with an AUTH_TLS probe"
	lt_check "capture: AUTH_TLS probes on at least 3 connections ($ntls)" test "$ntls" -ge 3
	tlsf="tcp.stream in {$(paste -sd, "$LT_TMP/tls-streams")}"
	ch=$(ts -d "tcp.port==$PORT,tls" -Y "$tlsf && tls.handshake.type == 1" | wc -l)
	sh13=$(ts -d "tcp.port==$PORT,tls" -Y "$tlsf && tls.handshake.type == 2 && tls.handshake.extensions.supported_version == 0x0304" | wc -l)
	app=$(ts -d "tcp.port==$PORT,tls" -Y "$tlsf && tls.record.opaque_type == 23" | wc -l)
	lt_check "capture: a ClientHello on each of them ($ch)" test "$ch" -ge "$ntls"
	lt_check "capture: TLS 1.3 ServerHellos ($sh13)" test "$sh13" -ge "$ntls"
	lt_check "capture: TLS application data records on them ($app frames)" test "$app" -gt 100
	# decoded as RPC, the TLS streams hold the probes and nothing else
	# (the probe is an NFS NULL call, its reply a NULL reply)
	nulls=$(ts -2 -d "tcp.port==$PORT,rpc" -Y "$tlsf && rpc.msgtyp" | wc -l)
	nfsc=$(ts -2 -d "tcp.port==$PORT,rpc" -Y "$tlsf && nfs && !(rpc.procedure == 0)" | wc -l)
	rpcc=$(ts -2 -d "tcp.port==$PORT,rpc" -Y "$tlsf && rpc.msgtyp && !(rpc.procedure == 0)" | wc -l)
	lt_check_eq "capture: the RPC messages on the TLS connections are the probes and their replies" \
		$((2 * ntls)) "$nulls"
	lt_check_eq "capture: no NFS decodes on them but the NULL probes" 0 "$nfsc"
	lt_check_eq "capture: no RPC message but the NULL probes decodes on them" 0 "$rpcc"
	# the markers: in the data and names the 6.12 guest read and wrote over TLS
	# (none) and in those the 6.1 guest read and wrote in the clear (there)
	tcp_bytes() { # FILTER: the TCP payload of the matching frames, as bytes
		ts -Y "tcp.len > 0 && ($1)" -T fields -e tcp.payload |
			python3 -c 'import sys; sys.stdout.buffer.write(bytes.fromhex(sys.stdin.read().replace(":", "").replace("\n", "")))'
	}
	notls="!($tlsf)"
	[ "$ntls" = 0 ] && tlsf="frame.number == 0" && notls="frame.number > 0"
	lt_check_eq "capture: the marker read and written over TLS appears in no TLS packet" 0 \
		"$(tcp_bytes "$tlsf" | grep -a -c -E "$MARK_R|$MARK_W|$MARK_NAME|written")"
	clear=$(tcp_bytes "$notls" | grep -a -c -E "$MARK_R|$MARK_W")
	lt_check "capture control: the 6.1 client's marker data in the clear ($clear lines)" \
		test "$clear" -gt 0
	nfs61=$(ts -2 -d "tcp.port==$PORT,rpc" -Y "($notls) && nfs" | wc -l)
	lt_check "capture control: NFS decodes on the clear connections ($nfs61 frames)" test "$nfs61" -gt 0
else
	lt_log "no capture checks: $NFS_CAP_WHY"
fi

# shellcheck source=/dev/null
[ -r "$LT_TMP/times" ] && . "$LT_TMP/times"
lt_log "6.12: qemu start to command: ${boot_s:-?} s, command ${cmd_s:-?} s, whole run ${total_s:-?} s"
lt_done
