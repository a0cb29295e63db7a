#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Lacuna demo: make an XFS and an ext4 filesystem on loop images, mount
# lacunafs over each, write sparse files through the mount, and show that
# their holes and data look the same through lacunafs as on the backing
# filesystem. Everything is undone at the end, on Ctrl-C and on failure.
#
# Run as root from a build: top_builddir=BUILD scripts/demo.sh
# (scripts/quickstart.sh demo does that).
set -euo pipefail

src=$(cd "$(dirname "$0")/.." && pwd)
: "${top_builddir:=$src/build}"
LACUNAFS="$top_builddir/fusefs/lacunafs"
LACUNA="$top_builddir/tools/lacuna"

die() { echo "demo: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || die "run as root (loop devices and mounts)"
[ -x "$LACUNAFS" ] || die "lacunafs not built at $LACUNAFS (run scripts/quickstart.sh demo)"
[ -x "$LACUNA" ] || die "lacuna not built at $LACUNA (run scripts/quickstart.sh demo)"
[ -c /dev/fuse ] || die "no /dev/fuse on this machine"
for c in mkfs.xfs mkfs.ext4 xfs_io fusermount3; do
	command -v $c >/dev/null || die "$c missing (scripts/install-deps.sh installs it)"
done

T=$(mktemp -d /tmp/lacuna-demo.XXXXXX)
CLEANUP=()
cleanup() {
	local _c
	trap - EXIT INT TERM
	for ((_c = ${#CLEANUP[@]} - 1; _c >= 0; _c--)); do
		eval "${CLEANUP[$_c]}" || true
	done
	rm -rf "$T"
	echo "demo: cleaned up $T"
}
trap cleanup EXIT
trap 'echo; echo "demo: interrupted"; exit 130' INT TERM

# stop_lacunafs MOUNTPOINT PID: unmount, then wait for that daemon to exit
stop_lacunafs() {
	local n
	fusermount3 -u "$1" || umount -l "$1"
	for n in $(seq 100); do
		kill -0 "$2" 2>/dev/null || return 0
		sleep 0.05
	done
	kill "$2"
}

# seek_map FILE: "DATA off len" / "HOLE off len" lines from SEEK_DATA/SEEK_HOLE
seek_map() {
	local size
	size=$(stat -c %s "$1")
	xfs_io -r -c 'seek -a -r 0' "$1" | awk -v size="$size" '
		BEGIN { n = 0 }
		NR > 1 { kind[n] = $1; off[n] = $2; n++ }
		END {
			for (i = 0; i < n; i++) {
				end = (i + 1 < n) ? off[i + 1] : size
				if (end > off[i]) printf "%-4s %12d %12d\n", kind[i], off[i], end - off[i]
			}
		}'
}

# picture FILE: one line, '#' data and '.' hole, 64 columns wide
picture() {
	local size
	size=$(stat -c %s "$1")
	seek_map "$1" | awk -v size="$size" -v w=64 '
		{ k[NR] = $1; o[NR] = $2; l[NR] = $3; n = NR }
		END {
			s = ""
			for (c = 0; c < w; c++) {
				lo = size * c / w; hi = size * (c + 1) / w; ch = "."
				for (i = 1; i <= n; i++)
					if (k[i] == "DATA" && o[i] < hi && o[i] + l[i] > lo) ch = "#"
				s = s ch
			}
			print "[" s "]"
		}'
}

show() {
	local type=$1 name=$2 backing=$3 mnt=$4
	local via_mnt via_back
	via_mnt=$(seek_map "$mnt/$name")
	via_back=$(seek_map "$backing/$name")
	printf '\n%s: %s (%s bytes, %s KiB allocated)\n' "$type" "$name" \
		"$(stat -c %s "$mnt/$name")" "$(du -k "$backing/$name" | cut -f1)"
	printf '  through lacunafs  %s\n' "$(picture "$mnt/$name")"
	printf '  backing %-8s  %s\n' "$type" "$(picture "$backing/$name")"
	paste <(echo "$via_mnt") <(echo "$via_back") |
		awk 'BEGIN { printf "    %-32s | %s\n", "kind offset length (lacunafs)", "(backing)" }
		     { printf "    %-4s %12s %12s   | %-4s %12s %12s\n", $1, $2, $3, $4, $5, $6 }'
	# the atomic sparse read: the same map, taken under lacunafs's range lock
	"$LACUNA" map "$mnt/$name" | sed -n '1s/^/  lacuna map: /p;$s/^/  lacuna map: /p'
	if [ "$via_mnt" = "$via_back" ] && cmp -s "$mnt/$name" "$backing/$name"; then
		echo "  => same holes, same data"
	else
		echo "  => MISMATCH between lacunafs and the backing file"
		return 1
	fi
}

rc=0
for type in xfs ext4; do
	img="$T/$type.img"
	backing="$T/$type"
	mnt="$T/mnt-$type"
	mkdir -p "$backing" "$mnt"
	truncate -s 2G "$img"
	if [ $type = xfs ]; then mkfs.xfs -q -f "$img"; else mkfs.ext4 -q -F "$img"; fi
	mount -o loop "$img" "$backing"
	CLEANUP+=("umount '$backing'")
	setsid "$LACUNAFS" -f "$backing" "$mnt" >"$T/lacunafs-$type.log" 2>&1 &
	pid=$!
	CLEANUP+=("stop_lacunafs '$mnt' $pid")
	for i in $(seq 100); do mountpoint -q "$mnt" && break; sleep 0.05; done
	mountpoint -q "$mnt" || die "lacunafs did not mount (see $T/lacunafs-$type.log)"
	echo "== $type on $img, lacunafs (pid $pid) at $mnt"

	# A VM disk image: 1 GiB apparent, a boot sector, a partition table
	# copy at the end and a few written regions.
	f="$mnt/disk.img"
	truncate -s 1G "$f"
	head -c 512 /dev/urandom | dd of="$f" conv=notrunc status=none
	head -c 4M /dev/urandom | dd of="$f" bs=1M seek=64 conv=notrunc status=none
	head -c 16M /dev/urandom | dd of="$f" bs=1M seek=300 conv=notrunc status=none
	head -c 64K /dev/urandom | dd of="$f" bs=64K seek=$((1024 * 16 - 1)) conv=notrunc status=none
	show "$type" disk.img "$backing" "$mnt" || rc=1

	# A database file: 8 KiB pages, scattered, then one page punched out.
	f="$mnt/pages.db"
	truncate -s 64M "$f"
	for p in 0 1 2 97 1000 1001 4095 6000 8191; do
		head -c 8192 /dev/urandom | dd of="$f" bs=8192 seek=$p conv=notrunc status=none
	done
	fallocate --punch-hole --offset $((1000 * 8192)) --length 8192 "$f"
	show "$type" pages.db "$backing" "$mnt" || rc=1
done
echo
if [ $rc = 0 ]; then
	echo "demo: every file has the same holes and data through lacunafs as on ext4/XFS"
else
	echo "demo: FAILED"
fi
exit $rc
