#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The test VM works as the NFS tests need it: one boot checks that the
# guest runs the Debian kernel from the cache, sees the host's root
# read-only, writes into a shared host directory, loads nfsv4 and the
# soft-RoCE driver, reaches a TCP listener on the host's 127.0.0.1 through
# 10.0.2.2 (and has no other route), keeps stdout, stderr, environment,
# working directory and exit status apart. Where NFS-Ganesha is installed,
# the guest also mounts an export of it from the host's loopback, the way
# the gateway's tests will. Boot and run times are logged. Skips (77)
# where qemu or the kernel package cannot be had.
: "${top_srcdir:=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}"
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/vm/vm.sh"
lt_init
lt_require_cmd python3
vm_require

kver=$("$VM_SH" info | sed -n 's/^kernel_release=//p')
[ -n "$kver" ] || lt_hard "vm.sh info names no kernel release"

share="$LT_TMP/share"
mkdir -p "$share"
token="tok-$$-$RANDOM"

# A one-shot TCP listener on the host's loopback: answers "pong LINE".
cat >"$LT_TMP/listener.py" <<'EOF'
import socket, sys
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(1)
s.settimeout(300)
with open(sys.argv[1] + ".tmp", "w") as f:
    f.write(str(s.getsockname()[1]))
import os
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
c, peer = s.accept()
c.settimeout(60)
line = c.makefile().readline().strip()
c.sendall(("pong " + line + "\n").encode())
c.close()
print("served", peer[0], line, flush=True)
EOF
setsid python3 "$LT_TMP/listener.py" "$LT_TMP/port" >"$LT_TMP/listener.log" 2>&1 &
lpid=$!
lt_push_cleanup "kill $lpid"
for ((i = 0; i < 100; i++)); do
	[ -s "$LT_TMP/port" ] && break
	sleep 0.05
done
port=$(cat "$LT_TMP/port" 2>/dev/null)
[ -n "$port" ] || lt_hard "the host listener did not start: $(cat "$LT_TMP/listener.log")"

# Optional: a comparison NFS server on the host's loopback.
nfsport=""
if command -v ganesha.nfsd >/dev/null; then
	nfsport=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	mkdir -p "$LT_TMP/export"
	echo "nfs-$token" >"$LT_TMP/export/hello"
	cat >"$LT_TMP/ganesha.conf" <<GANESHA
NFS_CORE_PARAM { Protocols = 4; NFS_Port = $nfsport; Bind_addr = 127.0.0.1;
	Enable_NLM = false; Enable_RQUOTA = false; }
NFSv4 { Graceless = true; Minor_Versions = 0, 1, 2; RecoveryBackend = fs;
	RecoveryRoot = "$LT_TMP/recovery"; }
NFS_KRB5 { Active_krb5 = false; }
EXPORT { Export_Id = 1; Path = $LT_TMP/export; Pseudo = /ex; Access_Type = RW;
	Squash = No_Root_Squash; SecType = sys; Protocols = 4; Transports = TCP;
	FSAL { Name = VFS; } }
GANESHA
	setsid ganesha.nfsd -F -f "$LT_TMP/ganesha.conf" -L "$LT_TMP/ganesha.out" \
		-p "$LT_TMP/ganesha.pid" </dev/null >/dev/null 2>&1 &
	gpid=$!
	lt_push_cleanup "kill $gpid; sleep 1; kill -KILL $gpid"
	for ((i = 0; i < 100; i++)); do
		ss -Hltn "sport = :$nfsport" | grep -q . && break
		sleep 0.1
	done
	ss -Hltn "sport = :$nfsport" | grep -q . ||
		lt_hard "ganesha.nfsd did not listen on 127.0.0.1:$nfsport: $(tail -n 5 "$LT_TMP/ganesha.out")"
else
	lt_log "ganesha.nfsd not installed: NFS mount check left out"
fi

cat >"$share/guest.sh" <<'EOF'
echo "kver=$(uname -r)"
echo "cwd=$(pwd)"
echo "token_env=$TOKEN"
# (not a file of the source tree: it may live under /tmp, which the guest
# covers with its own tmpfs)
echo "root_sum=$(sha256sum </etc/os-release | cut -d' ' -f1)"
if touch /usr/.lacuna-ro-probe 2>/dev/null; then
	echo "root=writable"
else
	echo "root=readonly"
fi
echo "root_mount=$(awk '$2 == "/" { print $4 }' /proc/mounts | cut -d, -f1)"
echo "$TOKEN" >"$SHARE/from-guest" && echo "share_write=ok"
modprobe nfsv4 && [ -d /sys/module/nfsv4 ] && echo "nfsv4=ok"
modprobe crc32_generic && modprobe rdma_rxe && [ -d /sys/module/rdma_rxe ] && echo "rdma_rxe=ok"
if exec 3<>"/dev/tcp/10.0.2.2/$PORT"; then
	echo "ping $TOKEN" >&3
	read -r -t 30 reply <&3
	exec 3<&-
	echo "tcp_reply=$reply"
fi
echo "default_routes=$(ip route show default | wc -l)"
if [ -n "$NFSPORT" ]; then
	mkdir -p /tmp/m
	if mount -t nfs4 -o "vers=4.2,port=$NFSPORT,addr=10.0.2.2" 10.0.2.2:/ex /tmp/m; then
		echo "nfs_read=$(cat /tmp/m/hello)"
		echo "$TOKEN" >/tmp/m/from-guest
		umount /tmp/m && echo "nfs_umount=ok"
	fi
fi
echo "stderr-marker" >&2
exit 7
EOF

rc=0
(cd "$share" && "$VM_SH" run --share "$share" --timeout 600 --times "$LT_TMP/times" \
	--env "TOKEN=$token" --env "SRC=$top_srcdir" --env "SHARE=$share" --env "PORT=$port" --env "NFSPORT=$nfsport" \
	-- bash "$share/guest.sh") >"$LT_TMP/out" 2>"$LT_TMP/err" || rc=$?
sed 's/^/# guest: /' "$LT_TMP/out"
sed 's/^/# guest stderr: /' "$LT_TMP/err"
[ "$rc" = 77 ] && lt_skip "vm.sh run: $(tail -n 1 "$LT_TMP/err")"
[ "$rc" = 99 ] && lt_hard "the VM failed"
rm -f "$top_srcdir/tests/vm/.ro-probe"


lt_check_eq "exit status of the guest command reaches the host" 7 "$rc"
lt_check_eq "guest runs the cached Debian kernel" "$kver" "$(val kver)"
lt_check_eq "working directory carried into the guest" "$share" "$(val cwd)"
lt_check_eq "--env reaches the guest" "$token" "$(val token_env)"
lt_check_eq "host root visible in the guest" \
	"$(sha256sum </etc/os-release | cut -d' ' -f1)" "$(val root_sum)"
lt_check_eq "host root is read-only in the guest" readonly "$(val root)"
lt_check_eq "guest root mounted ro" ro "$(val root_mount)"
lt_check_eq "guest wrote into the share" ok "$(val share_write)"
lt_check_eq "file written by the guest appears on the host" "$token" \
	"$(cat "$share/from-guest" 2>/dev/null)"
lt_check_eq "modprobe nfsv4 in the guest" ok "$(val nfsv4)"
lt_check_eq "modprobe rdma_rxe in the guest" ok "$(val rdma_rxe)"
lt_check_eq "guest reaches host 127.0.0.1 via 10.0.2.2" "pong ping $token" "$(val tcp_reply)"
lt_check "host listener saw the guest's line" grep -q "served 127.0.0.1 ping $token" "$LT_TMP/listener.log"
lt_check_eq "guest has no default route" 0 "$(val default_routes)"
lt_check "guest stderr kept apart from stdout" grep -qx "stderr-marker" "$LT_TMP/err"
lt_check_fails "stdout has no stderr lines" grep -q "stderr-marker" "$LT_TMP/out"
if [ -n "$nfsport" ]; then
	lt_check_eq "guest mounts NFSv4.2 from host 127.0.0.1 and reads" "nfs-$token" "$(val nfs_read)"
	lt_check_eq "guest wrote through NFS" "$token" "$(cat "$LT_TMP/export/from-guest" 2>/dev/null)"
	lt_check_eq "guest unmounts NFS" ok "$(val nfs_umount)"
fi

# shellcheck source=/dev/null
[ -r "$LT_TMP/times" ] && . "$LT_TMP/times"
lt_log "qemu start to command: ${boot_s:-?} s (guest uptime ${guest_boot_s:-?} s)," \
	"command ${cmd_s:-?} s, whole run ${total_s:-?} s"
lt_done
