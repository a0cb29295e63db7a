#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The Linux kernel client keeps its open file and its fcntl lock across
# restarts of lacunad, in the test VM (tests/vm): lacunad serves a
# lacunafs mount over ext4, with its client records in a state directory
# of the test's own.
#
# For vers=4.0 and then vers=4.2 (each a mount of its own, hard), twice
# each, a guest process opens a file, writes to it and takes a write lock
# on the whole file with fcntl. The host then kills lacunad with SIGKILL
# (the first time) or stops it with SIGTERM (the second) and starts it
# again on the same port and state directory. The holder goes on: its next write and read must
# succeed (the client reclaims its open and lock in the grace period),
# another guest process must still be refused the lock, and the guest
# must not log "lost locks". Before each restart a process on the host is
# refused the lock through the lacunafs mount (lacunad holds the guest's
# lock as a real one). On the host the backing file holds exactly
# what the holder wrote, and lacunad's log shows the grace period and the
# reclaimed opens and locks.
#
# Last, a reboot of the server's side while a guest process has a file
# open on a vers=4.2 mount: lacunad stops, lacunafs and the backing ext4
# are unmounted, the host's caches dropped, and all come back; the guest,
# its own caches dropped, reads the same bytes through the same open
# file (the old file handle, resolved with nothing cached).
#
# Skips (77) where the VM cannot run (no qemu, no kernel package).
: "${top_srcdir:=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}"
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/vm/vm.sh"
. "$top_srcdir/tests/lib_nfs.sh"
lt_init
nfs_require_server
[ "$LT_NFS_SERVER" = lacunad ] || lt_skip "the grace period tested here is lacunad's"
lt_require_cmd python3
vm_require

nfs_make_export ext4 ext4
backing=$NFS_BACKING
dir=$NFS_EXPORT
share="$LT_TMP/share"
state="$LT_TMP/state"
mkdir -p "$share"
LEASE=15

cp "$top_srcdir/tests/vm/lock_holder.py" "$share/holder.py" || lt_hard "copying lock_holder.py"

cat >"$share/reader.py" <<'READER'
# reader.py FILE SHARE: open FILE, hash it, wait for the host's "reboot", drop caches, hash it again
import hashlib, os, sys, time
path, share = sys.argv[1:3]
def sha(fd):
    h, off = hashlib.sha256(), 0
    while True:
        b = os.pread(fd, 1 << 20, off)
        if not b:
            return h.hexdigest()
        h.update(b)
        off += len(b)
fd = os.open(path, os.O_RDONLY)
print("sha_before=%s" % sha(fd), flush=True)
open(os.path.join(share, "opened-reboot"), "w").close()
for _ in range(6000):
    if os.path.exists(os.path.join(share, "rebooted")):
        break
    time.sleep(0.1)
os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
with open("/proc/sys/vm/drop_caches", "w") as f:
    f.write("3\n")
try:
    print("sha_after=%s" % sha(fd), flush=True)
except OSError as e:
    print("sha_after=%s" % e.strerror, flush=True)
READER

cat >"$share/guest.sh" <<'GUEST'
m=/tmp/nfs
mkdir -p "$m"
r() { echo "$1=$2"; }
step() { echo "# $(cut -d' ' -f1 /proc/uptime) s: $*" >&2; }
for v in 4.0 4.2; do
	t=v${v/./}
	step "mount vers=$v"
	if ! timeout 120 mount -t nfs4 -o "vers=$v,port=$PORT,addr=10.0.2.2,proto=tcp,hard,timeo=100" \
		10.0.2.2:/ "$m"; then
		r "${t}_mount" fail
		continue
	fi
	r "${t}_mount" ok
	for how in crash stop; do
		step "holder runs (the host restarts lacunad meanwhile: $how)"
		timeout 900 python3 "$SHARE/holder.py" "$m/held-$t$how" "$SHARE" "$t$how" |
			sed "s/^/${t}${how}_/"
		r "${t}${how}_lost_locks" "$(dmesg | grep -c 'lost .* locks')"
	done
	step "umount"
	umount "$m" && r "${t}_umount" ok
done
t=reboot
step "mount vers=4.2 for the reboot"
if timeout 120 mount -t nfs4 -o "vers=4.2,port=$PORT,addr=10.0.2.2,proto=tcp,hard,timeo=100" 10.0.2.2:/ "$m"; then
	r reboot_mount ok
	step "reader runs (the host reboots the server's side meanwhile)"
	timeout 900 python3 "$SHARE/reader.py" "$m/data" "$SHARE" | sed "s/^/reboot_/"
	r reboot_ls "$(ls "$m" | tr '\n' ' ')"
	umount "$m" && r reboot_umount ok
fi
step "done"
GUEST

# host_refused FILE: a process on the host is refused a write lock of FILE's first byte
host_refused() {
	PYTHONPATH="$top_srcdir/tests/py" python3 "$top_srcdir/tests/py/lt_locks_local.py" try "$1" w 0 1
	[ $? = 1 ]
}
start() {
	NFS_EXPORT_OPTS=$VM_EXPORT_OPTS nfs_start "$dir" --threads 2 --state-dir "$state" \
		--lease-time "$LEASE" "$@"
}
# restart HOW: stop lacunad (crash: SIGKILL, stop: SIGTERM, none: it is down),
# start it again on the same port
restart() {
	local port=$NFS_PORT i
	case $1 in
	crash) nfs_crash ;;
	stop) nfs_stop ;;
	esac
	NFS_N=$((NFS_N + 1))
	NFS_LOG="$LT_TMP/lacunad.$NFS_N.log"
	setsid "$LACUNAD" --export "$dir" --export-options "no_root_squash,$VM_EXPORT_OPTS" --threads 2 \
		--state-dir "$state" --lease-time "$LEASE" --listen "127.0.0.1:$port" -f \
		</dev/null >"$NFS_LOG" 2>&1 &
	NFS_PID=$!
	NFS_RUNNING[$NFS_PID]=1
	lt_push_cleanup "_nfs_kill $NFS_PID"
	for ((i = 0; i < 600; i++)); do
		ss -Hltn "sport = :$port" | grep -q . && return 0
		kill -0 "$NFS_PID" 2>/dev/null || break
		sleep 0.1
	done
	sed 's/^/# server: /' "$NFS_LOG"
	lt_hard "lacunad did not start again on port $port"
}

head -c $((3 * 1048576 + 12345)) /dev/urandom >"$dir/data" || lt_hard "making data"
start
logs=()
t0=$SECONDS
vm_pid=""
stop_vm() { [ -n "$vm_pid" ] && kill "$vm_pid"; }
lt_push_cleanup stop_vm
(cd "$share" && exec "$VM_SH" run --share "$share" --timeout 1500 \
	--env "PORT=$NFS_PORT" --env "SHARE=$share" \
	-- bash "$share/guest.sh") >"$LT_TMP/out" 2>"$LT_TMP/err" &
vm_pid=$!
for t in v40crash v40stop v42crash v42stop; do
	how=${t:3}
	while kill -0 $vm_pid 2>/dev/null && [ ! -e "$share/locked-$t" ]; do
		sleep 0.2
	done
	[ -e "$share/locked-$t" ] || break
	lt_log "$t: the guest holds its lock: lacunad $how and start"
	lt_check "$t: a process on the host is refused the guest's lock" host_refused "$dir/held-$t"
	logs+=("$NFS_LOG")
	restart $how
	logs+=("$NFS_LOG")
	: >"$share/restarted-$t"
	eval "log_$t=\$NFS_LOG"
done
# a reboot of the server's side: lacunad, lacunafs and the backing
# filesystem all go, the caches are dropped, all come back
while kill -0 $vm_pid 2>/dev/null && [ ! -e "$share/opened-reboot" ]; do
	sleep 0.2
done
if [ -e "$share/opened-reboot" ]; then
	lt_log "reboot: the guest has data open: lacunad, lacunafs and ext4 go and come back"
	nfs_stop
	lt_stop_lacunafs "$dir"
	umount "$backing" || lt_hard "umount $backing" # which drops what the host cached of it
	mount -o loop "$LT_TMP/ext4.img" "$backing" || lt_hard "mount $backing again"
	lt_mount_lacunafs "$backing" "$dir"
	restart none # the server is down already: start it
	: >"$share/rebooted"
fi
wait $vm_pid
rc=$?
vm_pid=""
vm_report "$rc" $((SECONDS - t0)) "lacunad"
lt_check "lacunad is alive after the restarts" nfs_alive
nfs_stop

for t in v40crash v40stop v42crash v42stop; do
	vers="${t:1:1}.${t:2:1}"
	how=${t:3}
	[ $how = stop ] || lt_check_eq "vers=$vers: mount" ok "$(val "${t:0:3}_mount")"
	lt_check_eq "vers=$vers: the holder locked the file" ok "$(val "${t}_locked")"
	lt_check_eq "vers=$vers, after a $how: the holder's write succeeds" ok "$(val "${t}_write_after")"
	lt_check_eq "vers=$vers, after a $how: its read gives what it wrote" ok "$(val "${t}_read_after")"
	lt_check_eq "vers=$vers, after a $how: another process is still refused the lock" \
		refused "$(val "${t}_other_lock")"
	lt_check_eq "vers=$vers, after a $how: no lost locks in the guest's log" 0 "$(val "${t}_lost_locks")"
	lt_check_eq "vers=$vers: the backing file holds what the holder wrote" \
		"before-$t after-$t" "$(tr '\n' ' ' <"$backing/held-$t" | sed 's/ $//')"
	log=$(eval echo "\${log_$t:-}")
	if [ -n "$log" ]; then
		lt_check "vers=$vers: lacunad started with a grace period" \
			grep -qE "grace period starts: [0-9]+ recorded client" "$log"
		lt_check "vers=$vers: lacunad logged the reclaimed open and lock" \
			grep -qE "grace period ends: .*[1-9][0-9]* open\(s\), [1-9][0-9]* lock\(s\)" "$log"
		sed -n 's/^/# lacunad: /; /grace/p' "$log"
	else
		lt_fail "vers=$vers: lacunad was not restarted (the guest never locked)"
	fi
done
lt_check_eq "reboot: mount" ok "$(val reboot_mount)"
lt_check_eq "reboot: the open file reads the same bytes after it" \
	"$(val reboot_sha_before)" "$(val reboot_sha_after)"
lt_check_eq "reboot: ... which are the file's" "$(sha256sum <"$backing/data" | cut -d' ' -f1)" \
	"$(val reboot_sha_after)"
lt_check "reboot: the mount lists the files" grep -q "data" <<<"$(val reboot_ls)"
lt_done
