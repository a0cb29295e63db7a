#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# File handles of lacunad stay valid across a restart of lacunad and an
# unmount and mount of lacunafs over the same backing filesystem (as
# kernel nfsd's do), name the same files after a rename, and turn into
# NFS4ERR_STALE once the file is removed. On ext4 and XFS.
#
# And no client can make one up: with lacunafs over a subdirectory of the
# filesystem (fs/export) and a file outside it (fs/secret/shadow), a
# handle in lacunad's layout carrying that file's backing handle
# (name_to_handle_at(2)) is NFS4ERR_BADHANDLE, with the dentry cache
# warm or dropped, and the file's bytes never come back; so is an issued
# handle with any one byte changed; untagged version 1 handles are
# NFS4ERR_STALE, and with legacy_handles = accept they still reach no
# file outside the export. lacunafs's own lookup by handle answers
# ENOENT for a directory or a (connected) file outside its backing
# directory. The handle key is made once (mode 0600), kept across
# restarts, and a damaged one stops lacunad from starting.
. "$top_srcdir/tests/lib.sh"
lt_init
. "$top_srcdir/tests/lib_nfs.sh"
nfs_require_server
lt_require_cmd python3
lt_require_fuse

HOSTILE="$top_srcdir/tests/tools/nfs_hostile.py"
FORGE="$top_srcdir/tests/py/lt_fh_forge.py"
STALE=70

fh_of() { python3 "$HOSTILE" get-fh --port "$NFS_PORT" "$1"; }
fh_check() { python3 "$HOSTILE" check-fh --port "$NFS_PORT" "$1"; }

run_fs() {
	local fs=$1 mnt fh_file fh_dir fh_sub ino_file ino_dir
	nfs_make_export "$fs" "h$fs"
	mnt=$NFS_EXPORT
	mkdir -p "$mnt/dir/sub" && echo data >"$mnt/dir/sub/file" && echo x >"$mnt/gone" ||
		lt_hard "populate $mnt"
	ino_file=$(stat -c %i "$NFS_BACKING/dir/sub/file")
	ino_dir=$(stat -c %i "$NFS_BACKING/dir")

	nfs_start "$mnt"
	fh_file=$(fh_of dir/sub/file)
	fh_dir=$(fh_of dir)
	fh_gone=$(fh_of gone)
	lt_check "$fs: handles obtained" test -n "$fh_file" -a -n "$fh_dir" -a -n "$fh_gone"
	lt_check_eq "$fs: handle resolves to the file" "0 $ino_file" "$(fh_check "$fh_file")"

	nfs_stop
	nfs_start "$mnt"
	lt_check_eq "$fs: file handle after a lacunad restart" "0 $ino_file" "$(fh_check "$fh_file")"
	lt_check_eq "$fs: directory handle after a lacunad restart" "0 $ino_dir" "$(fh_check "$fh_dir")"
	nfs_stop

	lt_stop_lacunafs "$mnt"
	lt_mount_lacunafs "$NFS_BACKING" "$mnt"
	nfs_start "$mnt"
	lt_check_eq "$fs: file handle after a lacunafs remount" "0 $ino_file" "$(fh_check "$fh_file")"
	mv "$mnt/dir/sub/file" "$mnt/renamed" || lt_hard "rename"
	lt_check_eq "$fs: handle after a rename" "0 $ino_file" "$(fh_check "$fh_file")"
	nfs_stop
	nfs_start "$mnt"
	lt_check_eq "$fs: handle after a rename, resolved afresh" "0 $ino_file" "$(fh_check "$fh_file")"
	rm "$mnt/gone" || lt_hard "rm"
	lt_check_eq "$fs: handle of a removed file" "$STALE" "$(fh_check "$fh_gone")"
	rm "$mnt/renamed" || lt_hard "rm"
	lt_check_eq "$fs: cached handle of a file removed later" "$STALE" "$(fh_check "$fh_file")"
	lt_check "$fs: server alive" nfs_alive
	nfs_stop
	lt_stop_lacunafs "$mnt"
}

forge() { python3 "$FORGE" forge "$NFS_PORT" "$@"; }
drop_caches() { sync && echo 3 >/proc/sys/vm/drop_caches; }
# flip's statuses: every changed handle BADHANDLE, the handle itself OK
only_badhandle() { [[ $1 =~ ^BADHANDLE\ [0-9]+\ unchanged:OK\ 1$ ]]; }

# Python clients connect from unprivileged ports
INSECURE=(--export-options no_root_squash,insecure)

run_forge() {
	local fs=$1 top back mnt state out
	lt_make_fs "$fs" "f$fs"
	top=$LT_FS
	back=$top/export
	mnt=$LT_TMP/mnt-f$fs
	state=$LT_TMP/state-f$fs
	mkdir -p "$back/dir" "$top/secret/deep" && echo "inside $fs" >"$back/dir/file" &&
		echo "the secret of $fs" >"$top/secret/shadow" || lt_hard "populate $top"
	lt_mount_lacunafs "$back" "$mnt"

	nfs_start "$mnt" --state-dir "$state" "${INSECURE[@]}"
	lt_check_eq "$fs: the handle key is made, mode 0600" 600 "$(stat -c %a "$state/fh-key")"
	cat "$top/secret/shadow" >/dev/null
	lt_check_eq "$fs: forged handle of a file outside the export" "BADHANDLE BADHANDLE noread" \
		"$(forge "$back" "$top/secret/shadow")"
	lt_check_eq "$fs: forged handle of a directory outside the export" \
		"BADHANDLE BADHANDLE noread" "$(forge "$back" "$top/secret/deep")"
	lt_check_eq "$fs: forged handle of a file inside the export" "BADHANDLE BADHANDLE noread" \
		"$(forge "$back" "$back/dir/file")"
	lt_check_eq "$fs: forged version 1 handle" "STALE STALE noread" \
		"$(forge "$back" "$top/secret/shadow" v1)"
	drop_caches
	lt_check_eq "$fs: forged handle, caches dropped" "BADHANDLE BADHANDLE noread" \
		"$(forge "$back" "$top/secret/shadow")"
	lt_check_eq "$fs: forged version 1 handle, caches dropped" "STALE STALE noread" \
		"$(forge "$back" "$top/secret/shadow" v1)"
	out=$(python3 "$FORGE" flip "$NFS_PORT" dir/file | paste -sd ' ')
	lt_check "$fs: every byte of an issued handle counts ($out)" \
		only_badhandle "$out"
	out=$(python3 "$FORGE" flip "$NFS_PORT" "" | paste -sd ' ')
	lt_check "$fs: every byte of the root's handle counts ($out)" \
		only_badhandle "$out"
	fh_file=$(fh_of dir/file)
	nfs_stop

	nfs_start "$mnt" --state-dir "$state" "${INSECURE[@]}"
	lt_check_eq "$fs: a handle after a restart with the same state_dir" \
		"0 $(stat -c %i "$back/dir/file")" "$(fh_check "$fh_file")"
	nfs_stop

	nfs_start "$mnt" --state-dir "$state" "${INSECURE[@]}" --legacy-handles accept
	lt_check_eq "$fs: legacy_handles = accept: a version 1 handle inside the export" \
		"OK OK read" "$(forge "$back" "$back/dir/file" v1)"
	cat "$top/secret/shadow" >/dev/null
	lt_check_eq "$fs: legacy_handles = accept: none of a file outside" "STALE STALE noread" \
		"$(forge "$back" "$top/secret/shadow" v1)"
	lt_check_eq "$fs: legacy_handles = accept: none of a directory outside" "STALE STALE noread" \
		"$(forge "$back" "$top/secret/deep" v1)"
	drop_caches
	lt_check_eq "$fs: legacy_handles = accept: none of a file outside, caches dropped" \
		"STALE STALE noread" "$(forge "$back" "$top/secret/shadow" v1)"
	lt_check "$fs: server alive" nfs_alive
	nfs_stop

	# lacunafs alone: root's lookup by handle stays inside the backing directory
	lt_check_eq "$fs: lacunafs: lookup by handle of a directory outside" ENOENT \
		"$(python3 "$FORGE" lfs-lookup "$mnt" "$top/secret/deep")"
	lt_check_eq "$fs: lacunafs: lookup by handle of the filesystem root" ENOENT \
		"$(python3 "$FORGE" lfs-lookup "$mnt" "$top")"
	cat "$top/secret/shadow" >/dev/null
	lt_check_eq "$fs: lacunafs: lookup by handle of a file outside" ENOENT \
		"$(python3 "$FORGE" lfs-lookup "$mnt" "$top/secret/shadow")"
	lt_check_eq "$fs: lacunafs: lookup by handle of a file inside" found \
		"$(python3 "$FORGE" lfs-lookup "$mnt" "$back/dir/file")"
	lt_check_eq "$fs: lacunafs: a directory inside is still not looked up by handle" EISDIR \
		"$(python3 "$FORGE" lfs-lookup "$mnt" "$back/dir")"
	lt_stop_lacunafs "$mnt"
}

# A damaged key stops lacunad: a new one would make every handle stale
check_bad_key() {
	local state=$LT_TMP/state-bad port out rc
	nfs_make_export plain badkey
	mkdir -m 700 "$state" && printf 'short' >"$state/fh-key" && chmod 600 "$state/fh-key" ||
		lt_hard "make $state"
	port=$(nfs_free_port) || lt_hard "no free port"
	out=$(lt_timeout 30 "$LACUNAD" --export "$NFS_EXPORT" --state-dir "$state" \
		--listen "127.0.0.1:$port" -f 2>&1 </dev/null)
	rc=$?
	lt_check "a damaged key: lacunad does not start (status $rc)" test "$rc" = 1
	lt_check "... and says why" grep -q "fh-key is not a file handle key" <<<"$out"
	lt_check_eq "... and leaves the file alone" short "$(cat "$state/fh-key")"
	chmod 644 "$state/fh-key"
	out=$(lt_timeout 30 "$LACUNAD" --export "$NFS_EXPORT" --state-dir "$state" \
		--listen "127.0.0.1:$port" -f 2>&1 </dev/null)
	lt_check "a key others may read: lacunad does not start" grep -q "readable by it alone" <<<"$out"
}

run_fs ext4
run_fs xfs
run_forge ext4
run_forge xfs
check_bad_key
lt_done
