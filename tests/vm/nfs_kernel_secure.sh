#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The Linux kernel client on a secure export (exports(5)'s default), in
# the test VM (tests/vm): it connects from a reserved port, so lacunad
# serves it; mounted with noresvport it connects from an ordinary one,
# and lacunad refuses it NFS4ERR_PERM (the mount fails, the refusal is
# counted).
#
# The other VM tests reach lacunad through qemu's user-mode network,
# whose NAT gives every guest connection a host port of its own above
# 1023 (they set VM_EXPORT_OPTS, insecure). Here the guest sits on a tap
# interface this test makes (10.0.2.2 on the host, peer 10.0.2.15, the
# addresses the guest always takes), lacunad listens on 10.0.2.2, and the
# guest's source ports reach it unchanged. The export is a plain
# directory below pseudo directories, admitted to 10.0.2.15 only.
#
# Skips (77) where the VM cannot run, or without /dev/net/tun or ip(8);
# lacunad only. Tests using the tap addresses run one at a time (flock).

: "${top_srcdir:=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}"
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/vm/vm.sh"
. "$top_srcdir/tests/lib_nfs.sh"
lt_init
[ "$LT_NFS_SERVER" = lacunad ] || lt_skip "checks lacunad's own secure option"
nfs_require_server
lt_require_cmd ip flock
[ -c /dev/net/tun ] || lt_skip "no /dev/net/tun"
vm_require

TAP="ltsec$$"
TAP=${TAP:0:15}
# one tap holding 10.0.2.2 at a time on this host
exec {lock}>"${TMPDIR:-/tmp}/lacuna-vm-tap.lock" || lt_hard "open the tap lock"
flock "$lock" || lt_hard "flock the tap lock"
ip tuntap add dev "$TAP" mode tap || lt_skip "ip tuntap add failed (no tun support?)"
lt_push_cleanup "ip link del $TAP"
ip addr add 10.0.2.2 peer 10.0.2.15 dev "$TAP" || lt_hard "ip addr add on $TAP"
ip link set "$TAP" up || lt_hard "ip link set $TAP up"

share="$LT_TMP/share"
dir="$LT_TMP/export"
mkdir -p "$share" "$dir" || lt_hard "mkdir"
echo "secure-$$" >"$dir/file" || lt_hard "write $dir/file"
stats="$LT_TMP/stats" # where nfs_stat_at_least reads
conf="$LT_TMP/lacunad.conf"
printf '%s\n' "threads = 2" "grace = off" "stats_file = $stats" \
	"$dir 10.0.2.15(rw,no_root_squash)" >"$conf"
NFS_LISTEN_ADDR=10.0.2.2 nfs_start --config "$conf"

cat >"$share/guest.sh" <<'GUEST'
r() { echo "$1=$2"; }
m=/tmp/nfs
mkdir -p "$m"
# addr=: mount.nfs, which would fill it in, is not installed
o="vers=4.2,port=$PORT,addr=10.0.2.2,proto=tcp,soft,timeo=100,retrans=2"
if timeout 120 mount -t nfs4 -o "$o" "10.0.2.2:$DIR" "$m"; then
	r resv_mount ok
	r resv_read "$(cat "$m/file")"
	r resv_port "$(ss -Htn "dport = :$PORT" | awk '{ n = split($4, a, ":"); print a[n]; exit }')"
	umount "$m" && r resv_umount ok
fi
# noresvport: an ordinary source port; a secure export refuses it
if timeout 120 mount -t nfs4 -o "$o,noresvport" "10.0.2.2:$DIR" "$m" 2>"$SHARE/noresv.err"; then
	r noresv_mount ok
	umount "$m"
else
	r noresv_mount refused
fi
GUEST

t0=$SECONDS
(cd "$share" && exec "$VM_SH" run --share "$share" --tap "$TAP" --timeout 600 \
	--env "PORT=$NFS_PORT" --env "DIR=$dir" --env "SHARE=$share" \
	-- bash "$share/guest.sh") >"$LT_TMP/out" 2>"$LT_TMP/err"
rc=$?
vm_report "$rc" $((SECONDS - t0)) "the server"
sed 's/^/# guest mount: /' "$share/noresv.err" 2>/dev/null
lt_check "lacunad is alive after the kernel client" nfs_alive

lt_check_eq "mount from a reserved port (the kernel's default)" ok "$(val resv_mount)"
lt_check_eq "the file read through it" "secure-$$" "$(val resv_read)"
p=$(val resv_port)
lt_log "the guest's source port: ${p:-unknown}"
[ -z "$p" ] || lt_check "the guest's connection kept a reserved port ($p)" test "$p" -lt 1024
lt_check_eq "umount" ok "$(val resv_umount)"
lt_check_eq "mount with noresvport refused" refused "$(val noresv_mount)"
lt_check "lacunad counted the refusals" nfs_stat_at_least insecure_port_refused 1
lt_check "lacunad logged the insecure port" grep -q "request from insecure port 10\.0\.2\.15:" \
	"$NFS_LOG"
nfs_stop
lt_done
