#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# lacunafs lifecycle: clean unmount and exit on SIGTERM, SIGINT and
# fusermount3 -u; no fd leaked after many operations once the kernel
# forgets the inodes; filesystems mounted under the backing dir are
# refused with EXDEV without disturbing the rest; page-cache coherence
# between read-only opens and writes through the mount or the backing dir.
. "$top_srcdir/tests/lib.sh"
lt_init
lt_require_fuse

lt_make_fs ext4 ext4 512M
backing=$LT_FS
mnt="$LT_TMP/mnt"

# wait_exit PID: wait up to 5 s for PID (a child of this shell) to exit;
# sets ST to its exit status, or to "running"
wait_exit() {
	local i
	ST=running
	for ((i = 0; i < 100; i++)); do
		if ! kill -0 "$1" 2>/dev/null; then
			ST=0
			wait "$1" 2>/dev/null || ST=$?
			return 0
		fi
		sleep 0.05
	done
}

for how in TERM INT fusermount; do
	lt_mount_lacunafs "$backing" "$mnt"
	pid=$LT_LFS_PID
	echo data >"$mnt/f-$how"
	if [ $how = fusermount ]; then fusermount3 -u "$mnt"; else kill -$how "$pid"; fi
	wait_exit "$pid"
	lt_check_eq "$how: daemon exits 0" 0 "$ST"
	lt_check_fails "$how: mount is gone" mountpoint -q "$mnt"
	lt_check_eq "$how: data reached the backing dir" data "$(cat "$backing/f-$how")"
done

# --- fd leaks
lt_mount_lacunafs "$backing" "$mnt"
pid=$LT_LFS_PID
# fds the daemon holds on the backing filesystem (libfuse's per-thread
# splice pipes come and go with worker threads and are not counted)
nfd() { find "/proc/$pid/fd" -lname "$backing*" | wc -l; }
sync; echo 2 >/proc/sys/vm/drop_caches
base=$(nfd)
mkdir "$mnt/d"
for i in $(seq 300); do echo "$i" >"$mnt/d/f$i"; done
for i in $(seq 100); do ln "$mnt/d/f$i" "$mnt/d/h$i"; mv "$mnt/d/f$((i + 100))" "$mnt/d/r$i"; done
for i in $(seq 50); do rm "$mnt/d/h$i"; ln -s "f$i" "$mnt/d/s$i"; mkdir "$mnt/d/sub$i"; done
cat "$mnt"/d/f* >/dev/null
ls -lR "$mnt" >/dev/null
find "$mnt" -type f -exec stat {} + >/dev/null
busy=$(nfd)
sync; echo 2 >/proc/sys/vm/drop_caches; sleep 0.5
after=$(nfd)
lt_log "daemon fds: $base before, $busy with inodes cached, $after after the kernel forgot them"
lt_check "the kernel's cached inodes hold fds ($busy > $base + 300)" [ "$busy" -gt $((base + 300)) ]
rm -rf "$mnt/d"
sync; echo 2 >/proc/sys/vm/drop_caches; sleep 0.5
lt_check_eq "fds back to baseline after removing everything" "$base" "$(nfd)"
lt_check_eq "fds on the backing fs back to baseline" "$base" "$after"

# --- another filesystem under the backing dir
mkdir "$backing/nested"
mount -t tmpfs -o size=1M tmpfs "$backing/nested"
lt_push_cleanup "umount -l '$backing/nested'"
echo inside >"$backing/nested/file"
lt_check_fails "lookup into a nested mount is refused" stat "$mnt/nested/file"
err=$(stat "$mnt/nested" 2>&1 || true)
lt_check "the refusal is EXDEV" grep -q "Invalid cross-device link" <<<"$err"
lt_check "the name is still listed" grep -qx nested <(ls "$mnt")
echo still >"$mnt/other"
lt_check_eq "the rest of the mount keeps working" still "$(cat "$mnt/other")"
umount "$backing/nested"

# --- page cache: read-only opens see writes made through the mount
head -c 1M /dev/urandom >"$mnt/c"
md5sum <"$mnt/c" >/dev/null	# fill the page cache
printf 'NEWDATA' | dd of="$mnt/c" bs=1 seek=4096 conv=notrunc status=none
lt_check_eq "read-only open sees a write through the mount" NEWDATA \
	"$(dd if="$mnt/c" bs=1 skip=4096 count=7 status=none)"
truncate -s 4100 "$mnt/c"
lt_check_eq "read-only open sees a truncate through the mount" 4100 "$(cat "$mnt/c" | wc -c)"
fallocate --punch-hole --offset 0 --length 4096 "$mnt/c"
lt_check_eq "read-only open sees a punched hole" 0 \
	"$(head -c 4096 "$mnt/c" | tr -d '\0' | wc -c)"
# a change made behind the mount is seen once the attribute timeout passes
printf 'BEHIND!' | dd of="$backing/c" bs=1 seek=10 conv=notrunc status=none
sleep 1.2
lt_check_eq "a write to the backing file is seen after the timeout" BEHIND! \
	"$(dd if="$mnt/c" bs=1 skip=10 count=7 status=none)"

lt_done
