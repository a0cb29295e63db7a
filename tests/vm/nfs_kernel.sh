#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# lacunad with the Linux kernel's NFS client, in the test VM (tests/vm).
# lacunad serves a lacunafs mount over ext4 on the host's 127.0.0.1; the
# guest reaches it as 10.0.2.2 (its connections arrive from 127.0.0.1).
#
# One boot. The guest mounts 10.0.2.2:/ with vers=4.2, then with
# vers=4.1 (TCP), and through each mount: mkdir, create, write and read
# back 1 MiB + 1 (page cache dropped in between), an overwrite inside a
# page, rename, hard link (nlink 2), symlink and readlink, chmod, truncate,
# unlink, mkdir/rmdir (and rmdir of a non-empty directory refused), ls -l,
# a file written by the other version's pass, and lseek(SEEK_DATA /
# SEEK_HOLE) on a sparse file made on the host, whose content is checked
# too (holes read as zeros); a sparse file the guest writes has, through
# SEEK, the backing file's map. Then, in a subdirectory: O_EXCL create
# (twice), touch -d, chown, rename over a file, across directories and
# of a directory, 255- and 256-byte names, a UTF-8 name, mkfifo,
# O_APPEND, truncate up, a byte at 5 GiB, reading an open unlinked file,
# running a script, a link into another directory, df, ls of a 3000-entry
# directory, flock, a user xattr (logged only: optional), and as uid
# 1000: no reading root's mode 600 file, listing its 700 directory,
# chmod of its file or removing it from a sticky directory, and files
# created in a 1777 directory owned by 1000:1000. Then it
# unmounts, signals the host, mounts vers=4.2 again and copies a 64 MiB
# file made on the host to a new file, reading the copy back after
# dropping its caches. About 100 s in all here (TCG).
#
# The host checks what the guest saw and what landed in the backing ext4
# filesystem: contents and SHA-256, modes, link counts, symlink targets,
# ownership (root, no_root_squash, chown), times, what is gone. lseek must give sane
# answers: either the file's real data/hole layout (when SEEK reached
# lacunad and it answered) or the generic answers (whole file data, the
# hole at EOF) when lacunad answers SEEK with NFS4ERR_NOTSUPP and the
# client falls back; the 4.1 mount has no SEEK and must be generic.
# Where tshark is installed, the small-operations phase is captured
# (not the 64 MiB copy): it must decode cleanly with a reply for every
# call, show minor versions 2 and 1 and the operations used, SEEK among
# them, with NFS4_OK or NFS4ERR_NOTSUPP, and no server-fault-like error.
#
# Skips (77) where the VM cannot run (no qemu, no kernel package).
# LT_NFS_SERVER=ganesha runs it against NFS-Ganesha (over the ext4 itself).

: "${top_srcdir:=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}"
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/vm/vm.sh"
. "$top_srcdir/tests/lib_nfs.sh"
lt_init
nfs_require_server
lt_require_cmd sha256sum
SM="$TOOLS/lt_seekmap"
[ -x "$SM" ] || lt_hard "lt_seekmap not built at $SM"
vm_require

LAYOUT="size=2M,data@0+64k,data@1M+64k"
LAYOUT_W="size=3M,data@1M+4k,data@2M+1"
SPARSE_SIZE=2097152
BIG_MIB=${LT_NFS_VM_BIG_MIB:-64}

nfs_make_export ext4 ext4
backing=$NFS_BACKING
dir=$NFS_EXPORT
share="$LT_TMP/share"
mkdir -p "$share"

# Made on the host before the server starts (through the lacunafs mount).
head -c $((BIG_MIB * 1048576)) /dev/urandom >"$dir/big-host" || lt_hard "making big-host"
"$SM" make "$dir/sparse" "$LAYOUT" || lt_hard "lt_seekmap make $dir/sparse"
big_sha=$(nfs_sha256 "$backing/big-host")
{ echo secret >"$dir/secret" && chmod 600 "$dir/secret"; } || lt_hard "making secret"
{ mkdir -m 1777 "$dir/pub" && echo r >"$dir/pub/rootfile"; } || lt_hard "making pub"
{ mkdir -m 700 "$dir/priv" && echo x >"$dir/priv/x"; } || lt_hard "making priv"
mkdir "$dir/many" || lt_hard "mkdir $dir/many"
for ((i = 0; i < 3000; i++)); do
	: >"$dir/many/entry-$i" || lt_hard "making $dir/many"
done

# The guest's lt_seekmap: a copy in the shared directory (the host's root
# is the guest's, but not its /tmp, where a build tree may be).
guest_sm=""
if cp "$SM" "$share/lt_seekmap" 2>/dev/null; then
	guest_sm=$share/lt_seekmap
fi

cat >"$share/guest.sh" <<'GUEST'
# In the VM: everything goes through the kernel's NFS client.
m=/tmp/nfs
mkdir -p "$m"
r() { echo "$1=$2"; }
step() { echo "# $(cut -d' ' -f1 /proc/uptime) s: $*" >&2; }
drop() { sync; echo 3 >/proc/sys/vm/drop_caches; }
mnt() {
	timeout 120 mount -t nfs4 \
		-o "vers=$1,port=$PORT,addr=10.0.2.2,proto=tcp,soft,timeo=300,retrans=2" 10.0.2.2:/ "$m"
}
seekv() { # seekv FILE data|hole OFFSET: the offset lseek returns, or the errno name
	if [ -n "$SM" ]; then
		"$SM" seek "$1" "$2" "$3"
	else
		python3 -c 'import errno, os, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
w = os.SEEK_DATA if sys.argv[2] == "data" else os.SEEK_HOLE
try:
    print(os.lseek(fd, int(sys.argv[3]), w))
except OSError as e:
    print(errno.errorcode[e.errno])' "$1" "$2" "$3"
	fi
}

small_ops() { # small_ops TAG OTHER: TAG is this pass's directory, OTHER the other pass's
	local t=$1 d=$m/$1 o
	step "$t: small operations"
	mkdir "$d" && r "${t}_mkdir" ok
	echo "created by $t" >"$d/created" && r "${t}_create" ok
	drop
	r "${t}_readback" "$(cat "$d/created")"
	head -c 1048577 /dev/urandom >/tmp/w.bin
	cp /tmp/w.bin "$d/w.bin" && r "${t}_write" ok
	drop
	cmp -s /tmp/w.bin "$d/w.bin" && r "${t}_write_readback" ok
	printf 'XYZ' | dd of=/tmp/w.bin bs=1 seek=5000 conv=notrunc status=none
	printf 'XYZ' | dd of="$d/w.bin" bs=1 seek=5000 conv=notrunc status=none && r "${t}_overwrite" ok
	drop
	cmp -s /tmp/w.bin "$d/w.bin" && r "${t}_overwrite_readback" ok
	r "${t}_w_sha" "$(sha256sum </tmp/w.bin | cut -d' ' -f1)"
	mv "$d/created" "$d/renamed" && [ ! -e "$d/created" ] && [ -f "$d/renamed" ] &&
		r "${t}_rename" ok
	ln "$d/renamed" "$d/hardlink" && r "${t}_link" ok
	r "${t}_nlink" "$(stat -c %h "$d/renamed")"
	[ "$(stat -c %i "$d/renamed")" = "$(stat -c %i "$d/hardlink")" ] && r "${t}_link_same_ino" ok
	ln -s renamed "$d/sym" && r "${t}_symlink" ok
	drop
	r "${t}_readlink" "$(readlink "$d/sym")"
	r "${t}_symcat" "$(cat "$d/sym")"
	chmod 640 "$d/renamed" && r "${t}_chmod" ok
	r "${t}_mode" "$(stat -c %a "$d/renamed")"
	r "${t}_owner" "$(stat -c %u:%g "$d/renamed")"
	head -c 100000 /dev/urandom >"$d/trunc" && truncate -s 12345 "$d/trunc" && r "${t}_truncate" ok
	r "${t}_truncated_size" "$(stat -c %s "$d/trunc")"
	echo doomed >"$d/victim" && rm "$d/victim" && [ ! -e "$d/victim" ] && r "${t}_unlink" ok
	mkdir -p "$d/dir1/dir2" && rmdir "$d/dir1/dir2" && rmdir "$d/dir1" && [ ! -e "$d/dir1" ] &&
		r "${t}_mkdir_rmdir" ok
	mkdir "$d/full" && : >"$d/full/f"
	if rmdir "$d/full" 2>/tmp/rmdir.err; then
		r "${t}_rmdir_nonempty" removed
	else
		r "${t}_rmdir_nonempty" "$(grep -o 'not empty' /tmp/rmdir.err)"
	fi
	ls -l "$d" >"$SHARE/ls-$t.txt" && r "${t}_ls" ok
	r "${t}_ls_names" "$(ls "$d" | tr '\n' ' ')"
	o=$2
	[ -e "$m/$o/renamed" ] && r "${t}_sees_${o}" "$(cat "$m/$o/renamed")"
	step "$t: lseek"
	for o in 0 65536 1048576 $((SPARSE_SIZE - 1)) "$SPARSE_SIZE"; do
		r "${t}_seek_data_$o" "$(seekv "$m/sparse" data "$o")"
		r "${t}_seek_hole_$o" "$(seekv "$m/sparse" hole "$o")"
	done
	if [ -n "$SM" ]; then
		# a sparse file written by this client, its map taken while
		# its pages are still dirty here (the client flushes before SEEK)
		"$SM" make "$d/sparse-w" "$LAYOUT_W" && r "${t}_sparse_w_make" ok
		"$SM" map "$d/sparse-w" >"$SHARE/map-$t.txt" 2>&1
		"$SM" check "$d/sparse-w" "$LAYOUT_W" >&2 && r "${t}_sparse_w_check" ok
		"$SM" check "$m/sparse" "$LAYOUT" >&2 && r "${t}_sparse_content" ok
	else
		r "${t}_sparse_content" "$(python3 -c 'import sys
d = open(sys.argv[1], "rb").read()
print("zeros" if d[65536:1048576] == bytes(1048576 - 65536) and
      d[1114112:] == bytes(len(d) - 1114112) else "nonzero")' "$m/sparse")"
	fi
}

# More of what applications do, in a subdirectory x of the pass's own.
extra_ops() { # extra_ops TAG
	local t=$1 d=$m/$1/x long i
	step "$t: more operations"
	mkdir "$d" || return
	(set -C && echo one >"$d/excl") && r "${t}_excl_create" ok
	(set -C && echo two >"$d/excl") 2>/dev/null || r "${t}_excl_again" refused
	touch -d '2001-02-03 04:05:06' "$d/excl" && r "${t}_touch" ok
	r "${t}_mtime" "$(stat -c %Y "$d/excl")"
	chown 1234:5678 "$d/excl" && r "${t}_chown" ok
	r "${t}_chown_ids" "$(stat -c %u:%g "$d/excl")"
	echo new >"$d/src" && echo old >"$d/dst" && mv -f "$d/src" "$d/dst" &&
		r "${t}_rename_over" "$(cat "$d/dst")"
	mkdir "$d/a" "$d/b" && echo moved >"$d/a/f" && mv "$d/a/f" "$d/b/f" && mv "$d/b" "$d/c" &&
		r "${t}_rename_dir" "$(cat "$d/c/f")"
	long=$(printf 'n%.0s' {1..255})
	echo 255 >"$d/$long" && r "${t}_name255" "$(cat "$d/$long")"
	if { echo 256 >"$d/${long}x"; } 2>/tmp/long.err; then
		r "${t}_name256" created
	else
		r "${t}_name256" "$(grep -o 'File name too long' /tmp/long.err)"
	fi
	echo u >"$d/ünï cødé ☃" && r "${t}_unicode" "$(cat "$d/ünï cødé ☃")"
	mkfifo "$d/fifo" && r "${t}_fifo" "$(stat -c %F "$d/fifo")"
	echo a >>"$d/app" && echo b >>"$d/app" && r "${t}_append" "$(tr '\n' ' ' <"$d/app")"
	truncate -s 1M "$d/grow" && r "${t}_grow" "$(stat -c %s "$d/grow")"
	printf 'x' | dd of="$d/far" bs=1 seek=5368709120 conv=notrunc status=none &&
		r "${t}_far" "$(stat -c %s "$d/far")"
	echo silly >"$d/open-unlinked"
	exec 5<"$d/open-unlinked"
	rm "$d/open-unlinked" && r "${t}_open_unlinked" "$(cat <&5)"
	exec 5<&-
	printf '#!/bin/sh\necho ran\n' >"$d/script" && chmod 755 "$d/script" &&
		r "${t}_exec" "$("$d/script")"
	ln "$d/dst" "$d/c/dst-link" && r "${t}_link_other_dir" "$(stat -c %h "$d/dst")"
	r "${t}_df" "$(df -k --output=size "$m" | tail -n 1 | tr -d ' ')"
	r "${t}_many" "$(ls "$m/many" | wc -l)"
	flock -x "$d/lock" sh -c ": >'$d/held'; sleep 3" &
	for ((i = 0; i < 200; i++)); do
		[ -e "$d/held" ] && break
		sleep 0.1
	done
	if flock -n -x "$d/lock" true; then
		r "${t}_flock_conflict" granted
	else
		r "${t}_flock_conflict" refused
	fi
	wait
	flock -n -x "$d/lock" true && r "${t}_flock_after" granted
	if setfattr -n user.lacuna -v v42 "$d/dst" 2>/tmp/xattr.err; then
		r "${t}_xattr" "$(getfattr --only-values -n user.lacuna "$d/dst")"
	else
		r "${t}_xattr" "unsupported: $(head -c 80 /tmp/xattr.err)"
	fi
}

# As uid/gid 1000 (AUTH_SYS credentials the server must apply).
user_ops() { # user_ops TAG
	local t=$1 u="setpriv --reuid=1000 --regid=1000 --clear-groups"
	step "$t: as uid 1000"
	$u cat "$m/secret" >/dev/null 2>&1 && r "${t}_u_read_600" read || r "${t}_u_read_600" refused
	$u sh -c "echo mine >'$m/pub/user-$t'" && r "${t}_u_create" ok
	r "${t}_u_owner" "$(stat -c %u:%g "$m/pub/user-$t")"
	$u chmod 666 "$m/secret" 2>/dev/null && r "${t}_u_chmod" done || r "${t}_u_chmod" refused
	$u rm -f "$m/pub/rootfile" 2>/dev/null && r "${t}_u_sticky_rm" done ||
		r "${t}_u_sticky_rm" refused
	$u ls "$m/priv" >/dev/null 2>&1 && r "${t}_u_ls_700" listed || r "${t}_u_ls_700" refused
}

step "mount vers=4.2"
if mnt 4.2; then
	r mount_42 ok
	r mount_42_opts "$(awk -v m="$m" '$2 == m { print $4 }' /proc/mounts)"
	small_ops v42 v41
	extra_ops v42
	user_ops v42
	step "umount vers=4.2"
	umount "$m" && r umount_42 ok
fi
step "mount vers=4.1"
if mnt 4.1; then
	r mount_41 ok
	r mount_41_opts "$(awk -v m="$m" '$2 == m { print $4 }' /proc/mounts)"
	small_ops v41 v42
	extra_ops v41
	user_ops v41
	step "umount vers=4.1"
	umount "$m" && r umount_41 ok
fi

# Let the host stop its capture before the bulk copy.
: >"$SHARE/capture-done"
for ((i = 0; i < 300; i++)); do
	[ -e "$SHARE/capture-stopped" ] && break
	sleep 0.1
done

step "mount vers=4.2 for the copy"
if mnt 4.2; then
	step "copy ${BIG_MIB} MiB"
	cp "$m/big-host" "$m/v42/big-copy" && sync && r big_copy ok
	drop
	step "read the copy back"
	r big_copy_sha "$(sha256sum <"$m/v42/big-copy" | cut -d' ' -f1)"
	step "umount"
	umount "$m" && r umount_copy ok
fi
step "done"
GUEST

NFS_EXPORT_OPTS=$VM_EXPORT_OPTS nfs_start "$dir" --threads 2
cap="$LT_TMP/kernel.pcapng"
capturing=0
if nfs_capture_start "$cap"; then
	capturing=1
else
	lt_log "no capture: $NFS_CAP_WHY"
fi

# The VM runs in the background; the host stops the capture when the
# guest says the small operations are done.
t0=$SECONDS
vm_pid=""
stop_vm() { [ -n "$vm_pid" ] && kill "$vm_pid"; }
lt_push_cleanup stop_vm
(cd "$share" && exec "$VM_SH" run --share "$share" --timeout 420 --times "$LT_TMP/times" \
	--env "PORT=$NFS_PORT" --env "SHARE=$share" --env "SM=$guest_sm" \
	--env "LAYOUT=$LAYOUT" --env "LAYOUT_W=$LAYOUT_W" --env "SPARSE_SIZE=$SPARSE_SIZE" --env "BIG_MIB=$BIG_MIB" \
	-- bash "$share/guest.sh") >"$LT_TMP/out" 2>"$LT_TMP/err" &
vm_pid=$!
while kill -0 $vm_pid 2>/dev/null; do
	if [ -e "$share/capture-done" ] && [ ! -e "$share/capture-stopped" ]; then
		sleep 0.5
		nfs_capture_stop
		: >"$share/capture-stopped"
	fi
	sleep 0.2
done
wait $vm_pid
rc=$?
vm_pid=""
nfs_capture_stop
vm_report "$rc" $((SECONDS - t0)) "lacunad"
lt_check "lacunad is alive after the kernel client" nfs_alive
nfs_stop


for v in 42 41; do
	t=v$v
	vers="${v:0:1}.${v:1:1}"
	b="$backing/$t"
	lt_check_eq "vers=$vers: mount" ok "$(val "mount_$v")"
	opts=",$(val "mount_${v}_opts"),"
	if [[ $opts == *",vers=$vers,"* && $opts == *",proto=tcp,"* && $opts == *",port=$NFS_PORT,"* ]]; then
		lt_ok "vers=$vers: mounted as asked (${opts:1:-1})"
	else
		lt_fail "vers=$vers: mount options: $opts"
	fi
	lt_check_eq "vers=$vers: mkdir" ok "$(val "${t}_mkdir")"
	lt_check "vers=$vers: ... the directory is in the backing filesystem" test -d "$b"
	lt_check_eq "vers=$vers: create" ok "$(val "${t}_create")"
	lt_check_eq "vers=$vers: read back after dropping caches" "created by $t" "$(val "${t}_readback")"
	lt_check_eq "vers=$vers: write 1 MiB + 1" ok "$(val "${t}_write")"
	lt_check_eq "vers=$vers: ... reads back the same" ok "$(val "${t}_write_readback")"
	lt_check_eq "vers=$vers: overwrite 3 bytes inside a page" ok "$(val "${t}_overwrite")"
	lt_check_eq "vers=$vers: ... reads back" ok "$(val "${t}_overwrite_readback")"
	lt_check_eq "vers=$vers: ... backing file SHA-256" "$(val "${t}_w_sha")" \
		"$(nfs_sha256 "$b/w.bin" 2>/dev/null)"
	lt_check_eq "vers=$vers: rename" ok "$(val "${t}_rename")"
	lt_check "vers=$vers: ... backing: old name gone" test ! -e "$b/created"
	lt_check_eq "vers=$vers: ... backing: new name has the content" "created by $t" \
		"$(cat "$b/renamed" 2>/dev/null)"
	lt_check_eq "vers=$vers: link" ok "$(val "${t}_link")"
	lt_check_eq "vers=$vers: ... nlink 2 seen by the client" 2 "$(val "${t}_nlink")"
	lt_check_eq "vers=$vers: ... same inode number for both names" ok "$(val "${t}_link_same_ino")"
	lt_check_eq "vers=$vers: ... backing nlink" 2 "$(stat -c %h "$b/renamed" 2>/dev/null)"
	lt_check "vers=$vers: ... backing: one inode" test "$b/renamed" -ef "$b/hardlink"
	lt_check_eq "vers=$vers: symlink" ok "$(val "${t}_symlink")"
	lt_check_eq "vers=$vers: ... readlink" renamed "$(val "${t}_readlink")"
	lt_check_eq "vers=$vers: ... read through it" "created by $t" "$(val "${t}_symcat")"
	lt_check_eq "vers=$vers: ... backing symlink target" renamed "$(readlink "$b/sym" 2>/dev/null)"
	lt_check_eq "vers=$vers: chmod" ok "$(val "${t}_chmod")"
	lt_check_eq "vers=$vers: ... mode seen by the client" 640 "$(val "${t}_mode")"
	lt_check_eq "vers=$vers: ... backing mode" 640 "$(stat -c %a "$b/renamed" 2>/dev/null)"
	lt_check_eq "vers=$vers: owner seen by the client (root, no_root_squash)" 0:0 "$(val "${t}_owner")"
	lt_check_eq "vers=$vers: ... backing owner" 0:0 "$(stat -c %u:%g "$b/renamed" 2>/dev/null)"
	lt_check_eq "vers=$vers: truncate" ok "$(val "${t}_truncate")"
	lt_check_eq "vers=$vers: ... size seen by the client" 12345 "$(val "${t}_truncated_size")"
	lt_check_eq "vers=$vers: ... backing size" 12345 "$(stat -c %s "$b/trunc" 2>/dev/null)"
	lt_check_eq "vers=$vers: unlink" ok "$(val "${t}_unlink")"
	lt_check "vers=$vers: ... backing: gone" test ! -e "$b/victim"
	lt_check_eq "vers=$vers: mkdir -p, rmdir, rmdir" ok "$(val "${t}_mkdir_rmdir")"
	lt_check "vers=$vers: ... backing: gone" test ! -e "$b/dir1"
	lt_check_eq "vers=$vers: rmdir of a non-empty directory is refused (ENOTEMPTY)" \
		"not empty" "$(val "${t}_rmdir_nonempty")"
	lt_check "vers=$vers: ... backing: still there" test -f "$b/full/f"
	lt_check_eq "vers=$vers: ls -l" ok "$(val "${t}_ls")"
	lt_check_eq "vers=$vers: ls lists the directory" "$(cd "$b" && ls | grep -vxE 'big-copy|x|sparse-w' | tr '\n' ' ')" \
		"$(val "${t}_ls_names")"
	if [ -r "$share/ls-$t.txt" ]; then
		lt_check "vers=$vers: ls -l shows the symlink" grep -q ' sym -> renamed$' "$share/ls-$t.txt"
		lt_check "vers=$vers: ls -l shows mode and owner" \
			grep -qE '^-rw-r----- +2 root +root +[0-9]+ .* renamed$' "$share/ls-$t.txt"
		sed "s/^/# ls -l ($t): /" "$share/ls-$t.txt"
	else
		lt_fail "vers=$vers: no ls -l output"
	fi
	lt_check_eq "vers=$vers: sparse file content (holes read as zeros)" \
		"$([ -n "$guest_sm" ] && echo ok || echo zeros)" "$(val "${t}_sparse_content")"
	lt_check_eq "vers=$vers: umount" ok "$(val "umount_$v")"

	b="$backing/$t/x"
	lt_check_eq "vers=$vers: O_EXCL create" ok "$(val "${t}_excl_create")"
	lt_check_eq "vers=$vers: ... a second O_EXCL create is refused" refused "$(val "${t}_excl_again")"
	lt_check_eq "vers=$vers: ... content" one "$(cat "$b/excl" 2>/dev/null)"
	lt_check_eq "vers=$vers: touch -d" ok "$(val "${t}_touch")"
	lt_check_eq "vers=$vers: ... mtime seen by the client" "$(date -d '2001-02-03 04:05:06' +%s)" \
		"$(val "${t}_mtime")"
	lt_check_eq "vers=$vers: ... backing mtime" "$(date -d '2001-02-03 04:05:06' +%s)" \
		"$(stat -c %Y "$b/excl" 2>/dev/null)"
	lt_check_eq "vers=$vers: chown 1234:5678" ok "$(val "${t}_chown")"
	lt_check_eq "vers=$vers: ... ids seen by the client" 1234:5678 "$(val "${t}_chown_ids")"
	lt_check_eq "vers=$vers: ... backing ids" 1234:5678 "$(stat -c %u:%g "$b/excl" 2>/dev/null)"
	lt_check_eq "vers=$vers: rename over an existing file" new "$(val "${t}_rename_over")"
	lt_check "vers=$vers: ... backing: source gone" test ! -e "$b/src"
	lt_check_eq "vers=$vers: rename across directories, then of a directory" moved \
		"$(val "${t}_rename_dir")"
	lt_check_eq "vers=$vers: ... backing" moved "$(cat "$b/c/f" 2>/dev/null)"
	lt_check_eq "vers=$vers: a 255-byte name" 255 "$(val "${t}_name255")"
	lt_check_eq "vers=$vers: a 256-byte name is refused (ENAMETOOLONG)" "File name too long" \
		"$(val "${t}_name256")"
	lt_check_eq "vers=$vers: a UTF-8 name with a blank" u "$(val "${t}_unicode")"
	lt_check_eq "vers=$vers: ... backing" u "$(cat "$b/ünï cødé ☃" 2>/dev/null)"
	lt_check_eq "vers=$vers: mkfifo" fifo "$(val "${t}_fifo")"
	lt_check "vers=$vers: ... backing is a FIFO" test -p "$b/fifo"
	lt_check_eq "vers=$vers: O_APPEND writes" "a b " "$(val "${t}_append")"
	lt_check_eq "vers=$vers: truncate to grow" 1048576 "$(val "${t}_grow")"
	lt_check_eq "vers=$vers: a byte written at 5 GiB" 5368709121 "$(val "${t}_far")"
	lt_check_eq "vers=$vers: ... backing size" 5368709121 "$(stat -c %s "$b/far" 2>/dev/null)"
	lt_check_eq "vers=$vers: ... backing byte" x "$(tail -c 1 "$b/far" 2>/dev/null)"
	lt_check_eq "vers=$vers: read an open, unlinked file" silly "$(val "${t}_open_unlinked")"
	lt_check "vers=$vers: ... backing: no .nfs leftovers after close" \
		test -z "$(find "$b" -maxdepth 1 -name '.nfs*' -print -quit)"
	lt_check_eq "vers=$vers: execute a script from the export" ran "$(val "${t}_exec")"
	lt_check_eq "vers=$vers: link into another directory" 2 "$(val "${t}_link_other_dir")"
	# (the client counts in blocks of its wsize, 1 MiB here, rounding up)
	df_host=$(df -k --output=size "$backing" | tail -n 1 | tr -d ' ')
	df_guest=$(val "${t}_df")
	lt_check "vers=$vers: df size $df_guest KiB = the backing filesystem's $df_host KiB (to 1 MiB)" \
		test -n "$df_guest" -a "${df_guest:-0}" -ge "$df_host" -a "${df_guest:-0}" -lt $((df_host + 1024))
	lt_check_eq "vers=$vers: ls of a 3000-entry directory" 3000 "$(val "${t}_many")"
	lt_check_eq "vers=$vers: flock -n while another process holds it" refused \
		"$(val "${t}_flock_conflict")"
	lt_check_eq "vers=$vers: flock -n once it is released" granted "$(val "${t}_flock_after")"
	lt_log "vers=$vers: user xattr: $(val "${t}_xattr")"
	lt_check_eq "vers=$vers: uid 1000 cannot read a mode 600 file of root's" refused \
		"$(val "${t}_u_read_600")"
	lt_check_eq "vers=$vers: uid 1000 creates in a 1777 directory" ok "$(val "${t}_u_create")"
	lt_check_eq "vers=$vers: ... owned by 1000:1000 for the client" 1000:1000 "$(val "${t}_u_owner")"
	lt_check_eq "vers=$vers: ... and in the backing filesystem" 1000:1000 \
		"$(stat -c %u:%g "$backing/pub/user-$t" 2>/dev/null)"
	lt_check_eq "vers=$vers: uid 1000 cannot chmod root's file" refused "$(val "${t}_u_chmod")"
	lt_check_eq "vers=$vers: uid 1000 cannot remove root's file from a sticky directory" refused \
		"$(val "${t}_u_sticky_rm")"
	lt_check_eq "vers=$vers: uid 1000 cannot list a mode 700 directory of root's" refused \
		"$(val "${t}_u_ls_700")"
done
lt_check_eq "vers=4.1 sees the file written over vers=4.2" "created by v42" "$(val v41_sees_v42)"

# lseek: all real answers (SEEK reached the server and was answered) or
# all generic ones (no SEEK: the client's fallback), per mount.
seek_kind() { # seek_kind TAG: prints real, generic or mixed
	local t=$1 o s k g real=1 generic=1
	for o in 0 65536 1048576 $((SPARSE_SIZE - 1)) $SPARSE_SIZE; do
		for k in data hole; do
			s=$(val "${t}_seek_${k}_$o")
			[ "$s" = "$("$SM" seek "$backing/sparse" "$k" "$o")" ] || real=0
			if [ "$o" -lt $SPARSE_SIZE ]; then
				if [ $k = data ]; then g=$o; else g=$SPARSE_SIZE; fi
			else
				g=ENXIO
			fi
			[ "$s" = "$g" ] || generic=0
		done
	done
	if [ $real = 1 ]; then echo real; elif [ $generic = 1 ]; then echo generic; else echo mixed; fi
}
for t in v42 v41; do
	lt_log "$t lseek: $(sed -n "s/^${t}_seek_//p" "$LT_TMP/out" | tr '\n' ' ')"
done
kind42=$(seek_kind v42)
kind41=$(seek_kind v41)
lt_check "vers=4.2: lseek SEEK_DATA/SEEK_HOLE gives sane answers ($kind42)" \
	test "$kind42" = real -o "$kind42" = generic
lt_check_eq "vers=4.1: lseek SEEK_DATA/SEEK_HOLE is the client's generic one" generic "$kind41"
if [ -n "$guest_sm" ]; then
	for t in v42 v41; do
		lt_check_eq "$t: a sparse file written by the client" ok "$(val "${t}_sparse_w_make")"
		lt_check_eq "$t: ... reads back with zeros in its holes" ok "$(val "${t}_sparse_w_check")"
		lt_check "$t: ... the backing file too" "$SM" check "$backing/$t/sparse-w" "$LAYOUT_W"
		sed "s/^/# map through NFS ($t): /" "$share/map-$t.txt"
	done
	# SEEK answered: the client's map is the backing file's; no SEEK
	# (4.1): one data segment and the hole at EOF
	if [ "$kind42" = real ]; then
		lt_check_eq "vers=4.2: the map of the client's sparse file through SEEK = the backing file's" \
			"$("$SM" map "$backing/v42/sparse-w")" "$(cat "$share/map-v42.txt")"
	fi
	lt_check_eq "vers=4.1: the map of the client's sparse file is all data" \
		"data 0 3145728 size 3145728" "$(tr '\n' ' ' <"$share/map-v41.txt" | sed 's/ $//')"
fi

lt_check_eq "copy of ${BIG_MIB} MiB" ok "$(val big_copy)"
lt_check_eq "... backing SHA-256 of the copy" "$big_sha" "$(nfs_sha256 "$backing/v42/big-copy" 2>/dev/null)"
lt_check_eq "... read back through NFS after dropping caches" "$big_sha" "$(val big_copy_sha)"
lt_check_eq "umount after the copy" ok "$(val umount_copy)"

# ---- the capture of the small operations ----------------------------------
if [ $capturing = 1 ]; then
	if [ -n "${LT_KEEP_CAPTURE:-}" ]; then
		cp "$cap" "$LT_KEEP_CAPTURE" && lt_log "capture kept as $LT_KEEP_CAPTURE"
	fi
	nfs_cap_check kernel "$cap"
	ts() { nfs_ts "$cap" "$@"; }
	lt_check "capture: op results decoded" test "$(nfs_cap_results "$cap" | grep -c .)" -gt 100
	mv=$(ts -Y 'nfs && rpc.msgtyp == 0 && rpc.procedure == 1' -T fields -E occurrence=a \
		-e nfs.minorversion | tr ',' '\n' | LC_ALL=C sort -u | tr '\n' ' ')
	lt_check_eq "capture: minor versions 1 and 2 in the calls" "1 2 " "$mv"
	ts -Y 'nfs && rpc.msgtyp == 0' -T fields -E occurrence=a -e nfs.opcode |
		tr ',' '\n' | LC_ALL=C sort -n | uniq >"$LT_TMP/call-ops"
	lt_log "ops in calls: $(tr '\n' ' ' <"$LT_TMP/call-ops")"
	for op in 3:ACCESS 4:CLOSE 6:CREATE 9:GETATTR 10:GETFH 11:LINK 15:LOOKUP 18:OPEN \
		22:PUTFH 24:PUTROOTFH 25:READ 26:READDIR 27:READLINK 28:REMOVE 29:RENAME \
		34:SETATTR 38:WRITE 42:EXCHANGE_ID 43:CREATE_SESSION 44:DESTROY_SESSION \
		53:SEQUENCE 57:DESTROY_CLIENTID 58:RECLAIM_COMPLETE 69:SEEK; do
		lt_check "capture: ${op#*:} in the calls" grep -qx "${op%%:*}" "$LT_TMP/call-ops"
	done
	# (opcode, status, frame) of every op of every reply that failed
	nfs_cap_results "$cap" | awk '$2 != 0' >"$LT_TMP/errors"
	lt_log "op errors (opcode status): $(awk '{ print $1 ":" $2 }' "$LT_TMP/errors" | sort | uniq -c | tr -s ' \n' '  ')"
	# (NXIO, 6, is SEEK's answer past the last data: not a failure)
	seek_st=$(awk '$1 == 69 && $2 != 6 { print $2 }' "$LT_TMP/errors" | sort -u | tr '\n' ' ')
	seek_ok=$(ts -Y 'nfs.opcode == 69 && rpc.msgtyp == 1' -T fields -e frame.number | grep -c .)
	case "$seek_st" in
	"") lt_ok "capture: SEEK answered NFS4_OK ($seek_ok replies)"
		lt_check_eq "vers=4.2: lseek gives the real layout when SEEK works" real "$kind42" ;;
	"10004 ") lt_ok "capture: SEEK answered NFS4ERR_NOTSUPP (clean fallback)"
		lt_check_eq "vers=4.2: lseek falls back to the generic answers" generic "$kind42" ;;
	*) lt_fail "capture: SEEK answered with status $seek_st" ;;
	esac
	# never acceptable: server faults, XDR or sequencing trouble, handles
	# the server itself gave out going bad, NOTSUPP for a required op.
	# Except: the client sends FREE_STATEID of a lock stateid on one slot
	# while the CLOSE of its open is on another; a CLOSE that runs first
	# releases the lock stateid (RFC 8881 18.2.4), so FREE_STATEID may
	# rightly find it gone (BAD_STATEID): the client ignores that.
	bad=$(awk '$2 == 10006 || $2 == 10036 || $2 == 10044 || $2 == 10001 || $2 == 70 ||
		($2 == 10025 && $1 != 45) || $2 == 10026 || $2 == 10063 || $2 == 10052 || $2 == 5 ||
		$2 == 10053 || $2 == 10071 || ($2 == 10004 && $1 != 69) { print "op " $1 " status " $2 " frame " $3 }' \
		"$LT_TMP/errors" | head -n 10)
	lt_check_eq "capture: no server fault, BADXDR, stale or bad handle, bad stateid/sequence, EIO" "" "$bad"
else
	lt_log "lseek on vers=4.2 was $kind42 (no capture to tell whether SEEK reached the server)"
fi

# shellcheck source=/dev/null
[ -r "$LT_TMP/times" ] && . "$LT_TMP/times"
lt_log "qemu start to command: ${boot_s:-?} s, command ${cmd_s:-?} s, whole run ${total_s:-?} s"
lt_done
