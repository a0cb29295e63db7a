#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Extended attributes through the Linux kernel's NFSv4.2 client (RFC
# 8276), in the test VM (tests/vm): setfattr/getfattr on a vers=4.2 mount
# of lacunad become SETXATTR, GETXATTR, LISTXATTRS and REMOVEXATTR, and
# what the guest sets must be the backing file's user.* attributes.
#
# lacunad serves one lacunafs mount over ext4. In the guest: setfattr of
# two names (one of them a 2000-byte value), getfattr of each and of all
# (--dump), setfattr -x of one, getfattr of the removed name (fails),
# setfattr of a name on a directory. On the host: the backing file holds
# exactly the attributes the guest left, with their values; one set on the
# backing file is what the guest reads. The statistics count the four
# operations.
#
# Skips (77) where the VM cannot run, or without setfattr/getfattr (attr);
# lacunad only.

: "${top_srcdir:=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}"
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/vm/vm.sh"
. "$top_srcdir/tests/lib_nfs.sh"
lt_init
[ "$LT_NFS_SERVER" = lacunad ] || lt_skip "checks lacunad's own xattr operations"
nfs_require_server
lt_require_cmd setfattr getfattr python3
vm_require

share="$LT_TMP/share"
mkdir -p "$share"
nfs_make_export ext4 ext4
echo data >"$NFS_EXPORT/f"
mkdir "$NFS_EXPORT/d"
setfattr -n user.fromhost -v hostvalue "$NFS_BACKING/f" || lt_hard "setfattr on $NFS_BACKING/f"
BIG=$(python3 -c 'print("x" * 2000)')
stats="$LT_TMP/lacunad.stats"
conf="$LT_TMP/lacunad.conf"
printf '%s\n' "threads = 2" "lease_time = 10" "grace = off" "stats_file = $stats" \
	"$NFS_EXPORT 127.0.0.0/8(rw,no_root_squash,$VM_EXPORT_OPTS)" >"$conf"
nfs_start --config "$conf"

cat >"$share/guest.sh" <<'GUEST'
r() { echo "$1=$2"; }
m=/tmp/nfs
mkdir -p "$m"
timeout 120 mount -t nfs4 -o "vers=4.2,port=$PORT,addr=10.0.2.2,proto=tcp,soft,timeo=300,retrans=2" \
	"10.0.2.2:$MNT" "$m" || exit 1
r mount ok
setfattr -n user.colour -v blue "$m/f" && r set1 ok
setfattr -n user.big -v "$BIG" "$m/f" && r set2 ok
r get1 "$(getfattr --absolute-names --only-values -n user.colour "$m/f")"
r get2 "$(getfattr --absolute-names --only-values -n user.big "$m/f" | wc -c)"
r gethost "$(getfattr --absolute-names --only-values -n user.fromhost "$m/f")"
r list "$(getfattr --absolute-names -d -m '^user\.' "$m/f" | sed -n 's/=.*//p' | grep . | sort | tr '\n' ' ')"
setfattr -x user.big "$m/f" && r remove ok
getfattr -n user.big "$m/f" >/dev/null 2>&1 || r get_removed fails
setfattr -n user.ondir -v 1 "$m/d" && r setdir ok
umount "$m" && r umount ok
GUEST

t0=$SECONDS
(cd "$share" && exec "$VM_SH" run --share "$share" --timeout 300 --times "$LT_TMP/times" \
	--env "PORT=$NFS_PORT" --env "MNT=$NFS_EXPORT" --env "BIG=$BIG" \
	-- bash "$share/guest.sh") >"$LT_TMP/out" 2>"$LT_TMP/err"
rc=$?
vm_report "$rc" $((SECONDS - t0)) "the server"
lt_check "lacunad is alive after the kernel client" nfs_alive

b=$NFS_BACKING
lt_check_eq "vers=4.2 mount" ok "$(val mount)"
lt_check_eq "setfattr user.colour in the guest" ok "$(val set1)"
lt_check_eq "setfattr user.big (2000 bytes) in the guest" ok "$(val set2)"
lt_check_eq "getfattr user.colour in the guest" blue "$(val get1)"
lt_check_eq "getfattr user.big in the guest: 2000 bytes" 2000 "$(val get2)"
lt_check_eq "the guest reads user.fromhost set on the backing file" hostvalue "$(val gethost)"
lt_check_eq "getfattr -d in the guest lists the three user attributes" \
	"user.big user.colour user.fromhost " "$(val list)"
lt_check_eq "setfattr -x user.big in the guest" ok "$(val remove)"
lt_check_eq "getfattr of the removed name fails in the guest" fails "$(val get_removed)"
lt_check_eq "setfattr on a directory in the guest" ok "$(val setdir)"
lt_check_eq "the backing file's user.colour" blue "$(getfattr --absolute-names --only-values -n user.colour "$b/f" 2>&1)"
lt_check_eq "the backing file's user attributes: colour and fromhost" "user.colour user.fromhost " \
	"$(getfattr --absolute-names -d -m '^user\.' "$b/f" | sed -n 's/=.*//p' | sort | tr '\n' ' ')"
lt_check_eq "the backing directory's user.ondir" 1 "$(getfattr --absolute-names --only-values -n user.ondir "$b/d" 2>&1)"
lt_check_eq "umount" ok "$(val umount)"

sleep 1.5
sed 's/^/# stats: /' "$stats" | grep -E "XATTR|op ACCESS"
for op in SETXATTR GETXATTR LISTXATTRS REMOVEXATTR; do
	n=$(awk -v o="$op" '$1 == "op" && $2 == o { print $3 }' "$stats")
	lt_check "lacunad counted ${n:-no} $op operations" test "${n:-0}" -gt 0
done
nfs_stop
lt_done
