#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Lacuna demo: make an XFS and an ext4 filesystem on loop images, mount
# lacunafs over each and export it over NFSv4.2 with lacunad, write files
# that look like real sparse files through the mount (a VM disk image
# with a few written regions, a database file with scattered pages), and
# show for each, side by side:
#   - its data/hole map taken locally (lacuna map, under lacunafs's
#     range lock) and over NFS (lacuna nfs-map, READ_PLUS from lacunad),
#     checked against the backing filesystem's own SEEK_DATA/SEEK_HOLE;
#   - copies over NFS with plain READ (lacuna nfs-get --read) next to
#     copies with READ_PLUS (lacuna nfs-get), three of each: bytes on the
#     wire (the headline: they do not vary), the median time and
#     throughput (of the file and on the wire), and the space the copy
#     takes, the last copy of each kind compared byte for byte with the file;
#   - at the end, an encrypted copy: the VM disk image on ext4 copied with
#     READ_PLUS over RPC-with-TLS (lacuna nfs-get --ca), its holes kept,
#     with a certificate made for the demo by openssl (skipped, with a
#     line saying why, when lacunad has no TLS or openssl is missing).
# It draws each file's layout as an SVG picture (scripts/map-svg.py) and
# at the end puts them into results/demo-DATE-TIME/ in the source tree,
# with the maps in JSON and a summary, and says where; an interrupted
# demo leaves nothing there. Everything it mounts or starts is undone at
# the end, on Ctrl-C and on failure. Once built it takes up to about two
# minutes on a busy 2-core machine (1 min 45 s at a load average of 12).
#
# Run as root from a build: top_builddir=BUILD scripts/demo.sh
# (scripts/quickstart.sh demo does that). LACUNA_DEMO_PORT sets the
# first TCP port tried for lacunad (default 29049).
set -euo pipefail
export LC_ALL=C

src=$(cd "$(dirname "$0")/.." && pwd)
: "${top_builddir:=$src/build}"
LACUNAFS="$top_builddir/fusefs/lacunafs"
LACUNAD="$top_builddir/gateway/lacunad"
LACUNA="$top_builddir/tools/lacuna"
MAPSVG="$src/scripts/map-svg.py"
PORT_NEXT=${LACUNA_DEMO_PORT:-29049}

die() {
	echo "demo: $*" >&2
	exit 1
}
[ "$(id -u)" = 0 ] || die "run as root (loop devices and mounts)"
for b in "$LACUNAFS" "$LACUNAD" "$LACUNA"; do
	[ -x "$b" ] || die "$(basename "$b") not built at $b (run scripts/quickstart.sh demo)"
done
"$LACUNA" nfs-get --help >/dev/null 2>&1 ||
	die "$LACUNA has no nfs-get command (rebuild: scripts/quickstart.sh demo)"
[ -c /dev/fuse ] || die "no /dev/fuse on this machine"
for c in mkfs.xfs mkfs.ext4 xfs_io fusermount3 python3 ss; do
	command -v $c >/dev/null || die "$c missing (scripts/install-deps.sh installs it)"
done

T=$(mktemp -d /tmp/lacuna-demo.XXXXXX)
chmod 755 "$T"
RES="$src/results/demo-$(date +%Y%m%d-%H%M%S)"
STAGE="$T/results" # moved to $RES when the demo is through
COPIES=3           # copies of each kind: the time shown is their median
CLEANUP=()
# shellcheck disable=SC2317 # run from the EXIT trap
cleanup() {
	local _c
	trap - EXIT INT TERM
	for ((_c = ${#CLEANUP[@]} - 1; _c >= 0; _c--)); do
		eval "${CLEANUP[$_c]}" || true
	done
	rm -rf "$T" "$RES.part"
	echo "demo: stopped lacunad and lacunafs, unmounted, removed $T"
}
trap cleanup EXIT
trap 'echo; echo "demo: interrupted"; exit 130' INT TERM

# stop_pid PID: SIGTERM, wait up to 5 s, then SIGKILL
# shellcheck disable=SC2317 # run from cleanup
stop_pid() {
	local n
	kill -TERM "$1" 2>/dev/null || return 0
	for n in $(seq 100); do
		kill -0 "$1" 2>/dev/null || return 0
		sleep 0.05
	done
	kill -KILL "$1" 2>/dev/null || true
}

# stop_lacunafs MOUNTPOINT PID: unmount, then wait for that daemon to exit
# shellcheck disable=SC2317 # run from cleanup
stop_lacunafs() {
	local n
	fusermount3 -u "$1" 2>/dev/null || umount -l "$1"
	for n in $(seq 100); do
		kill -0 "$2" 2>/dev/null || return 0
		sleep 0.05
	done
	kill "$2"
}

# free_port: the next TCP port from PORT_NEXT that nobody listens on
free_port() {
	local p
	for ((p = PORT_NEXT; p < PORT_NEXT + 50; p++)); do
		if ! ss -Hltn "sport = :$p" | grep -q .; then
			PORT_NEXT=$((p + 1))
			echo "$p"
			return 0
		fi
	done
	die "no free TCP port in $PORT_NEXT..$((PORT_NEXT + 49)) (set LACUNA_DEMO_PORT)"
}

# human BYTES: powers of 1024, as lacuna prints them
human() {
	awk -v b="$1" 'BEGIN {
		split("B KiB MiB GiB TiB", u, " "); i = 1
		while (b >= 1024 && i < 5) { b /= 1024; i++ }
		if (i == 1) printf "%d B", b; else printf "%.1f %s", b, u[i] }'
}

# put FILE OFFSET LENGTH: write LENGTH random bytes at OFFSET (bytes)
put() {
	head -c "$3" /dev/urandom |
		dd of="$1" bs=64K seek="$2" oflag=seek_bytes conv=notrunc status=none
}

# seek_map FILE: "data OFFSET LENGTH" / "hole OFFSET LENGTH" lines from the
# file's own SEEK_DATA/SEEK_HOLE (xfs_io), for the backing file
seek_map() {
	local size
	size=$(stat -c %s "$1")
	xfs_io -r -c 'seek -a -r 0' "$1" | awk -v size="$size" '
		BEGIN { n = 0 }
		NR > 1 { kind[n] = tolower($1); off[n] = $2; n++ }
		END {
			for (i = 0; i < n; i++) {
				end = (i + 1 < n) ? off[i + 1] : size
				if (end > off[i]) print kind[i], off[i], end - off[i]
			}
		}'
}

# rows MAP_TEXT: the segment lines of `lacuna map`/`lacuna nfs-map` output;
# data_of MAP_TEXT: its data bytes (from "size N (...), data N (...), ...")
rows() {
	awk '$1 == "data" || $1 == "hole" { print $1, $2, $3 }' <<<"$1"
}
data_of() { sed -n 's/^size .*, data \([0-9][0-9]*\) (.*/\1/p' <<<"$1"; }

# median: the middle one of the numbers on stdin, one per line
median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

# nfs-get's report (its last lines): "received: data N (...), holes N
# (...), on the wire N (...)" and "time S s: ..."
wire_of() { sed -n 's/^received:.* on the wire \([0-9][0-9]*\) (.*/\1/p' <<<"$1"; }
time_of() { sed -n 's/^time \([0-9.][0-9.]*\) s:.*/\1/p' <<<"$1"; }

declare -a SUMMARY
rc=0

# show TYPE NAME DESCRIPTION BACKING MNT PORT: the maps, the copies, the picture
show() {
	local type=$1 name=$2 desc=$3 backing=$4 mnt=$5 port=$6
	local url="nfs://127.0.0.1:$port/$name" base="$STAGE/$type-$name"
	local local_txt nfs_txt back_rows n mode out wire time du size fewer faster
	local -A WIRE TIME

	printf '\n--- %s on %s: %s\n' "$name" "$type" "$desc"
	local_txt=$("$LACUNA" map "$mnt/$name")
	"$LACUNA" map --json "$mnt/$name" >"$base.local.json"
	nfs_txt=$("$LACUNA" nfs-map "$url")
	"$LACUNA" nfs-map --json "$url" >"$base.nfs.json"
	printf '    %s\n' "$(tail -n 1 <<<"$local_txt")"
	printf '    local  %s\n' "$(grep '^\[' <<<"$local_txt")"
	printf '    NFS    %s\n' "$(grep '^\[' <<<"$nfs_txt")"
	grep '^(one column' <<<"$local_txt" | sed 's/^/           /' || true

	# the two segment tables side by side, the first rows of long ones
	n=$(rows "$local_txt" | wc -l)
	printf '    %-42s%s\n' "local: lacuna map (atomic, lacunafs)" "over NFS: lacuna nfs-map (READ_PLUS)"
	paste -d'|' <(rows "$local_txt") <(rows "$nfs_txt") | head -n 8 |
		awk -F'|' '{ split($1, a, " "); split($2, b, " ")
			printf "    %-4s %15s %15s      %-4s %15s %15s\n", a[1], a[2], a[3], b[1], b[2], b[3] }'
	[ "$n" -gt 8 ] && printf '    ... %d more segments\n' $((n - 8))
	back_rows=$(seek_map "$backing/$name")
	if [ "$(rows "$local_txt")" = "$(rows "$nfs_txt")" ] && [ "$(rows "$local_txt")" = "$back_rows" ]; then
		printf '    => the same %d segments locally, over NFS, and in the backing %s file\n' "$n" "$type"
	else
		printf '    => MISMATCH: the maps differ (local %d, NFS %d, backing %d segments)\n' \
			"$n" "$(rows "$nfs_txt" | wc -l)" "$(wc -l <<<"$back_rows")"
		rc=1
	fi

	# copies with plain READ, then with READ_PLUS, all from cached pages:
	# read the file once through the mount first (lacunad's READ reads
	# through it; READ_PLUS reads the backing file, cached already)
	cat "$mnt/$name" >/dev/null
	printf '    %-26s %12s %9s %12s %14s %10s  %s\n' "copy over NFS, $COPIES of each" \
		"on the wire" "time" "of file/s" "on the wire/s" "copy uses" "same bytes"
	size=$(stat -c %s "$mnt/$name")
	for mode in read read_plus; do
		local times="" wires="" same=yes
		for ((n = 0; n < COPIES; n++)); do
			rm -f "$SINK/$name"
			if [ $mode = read ]; then
				out=$("$LACUNA" nfs-get --read "$url" "$SINK/$name")
			else
				out=$("$LACUNA" nfs-get "$url" "$SINK/$name")
			fi
			wire=$(wire_of "$out")
			time=$(time_of "$out")
			if [ -z "$wire" ] || [ -z "$time" ]; then
				die "cannot read nfs-get's report: $out"
			fi
			times+="$time"$'\n'
			wires+="$wire"$'\n'
		done
		# the last copy, byte for byte (reading 1 GiB twice for each copy
		# would double the demo's time)
		cmp -s "$SINK/$name" "$backing/$name" || same=no
		[ $same = yes ] || rc=1
		WIRE[$mode]=$(median <<<"$wires")
		TIME[$mode]=$(median <<<"$times")
		du=$(du -B1 "$SINK/$name" | cut -f1)
		rm -f "$SINK/$name"
		printf '    %-26s %12s %8.3fs %10s/s %12s/s %10s  %s\n' \
			"$([ $mode = read ] && echo "READ      (nfs-get --read)" || echo "READ_PLUS (nfs-get)")" \
			"$(human "${WIRE[$mode]}")" "${TIME[$mode]}" \
			"$(human "$(awk -v b="$size" -v t="${TIME[$mode]}" 'BEGIN { printf "%.0f", (t > 0) ? b / t : 0 }')")" \
			"$(human "$(awk -v b="${WIRE[$mode]}" -v t="${TIME[$mode]}" 'BEGIN { printf "%.0f", (t > 0) ? b / t : 0 }')")" \
			"$(human "$du")" "$same"
	done
	fewer=$(awk -v a="${WIRE[read]}" -v b="${WIRE[read_plus]}" 'BEGIN { printf "%.0f", a / b }')
	faster=$(awk -v a="${TIME[read]}" -v b="${TIME[read_plus]}" 'BEGIN { printf "%.1f", (b > 0) ? a / b : 0 }')
	printf '    => READ_PLUS: %sx fewer bytes on the wire (%s instead of %s);\n' "$fewer" \
		"$(human "${WIRE[read_plus]}")" "$(human "${WIRE[read]}")"
	printf '       and the median copy was %sx faster (%d copies each; times vary from run to run)\n' \
		"$faster" "$COPIES"
	SUMMARY+=("$(printf '%-5s %-9s %10s %10s  %10s %7.3fs  %10s %7.3fs  %6s %7s' "$type" "$name" \
		"$(human "$size")" "$(human "$(data_of "$local_txt")")" \
		"$(human "${WIRE[read]}")" "${TIME[read]}" "$(human "${WIRE[read_plus]}")" \
		"${TIME[read_plus]}" "${fewer}x" "${faster}x")")

	python3 "$MAPSVG" -o "$base.svg" --title "$name on $type through lacunafs: $desc" \
		--map "local: lacuna map through the lacunafs mount" "$base.local.json" \
		--map "over NFS: lacuna nfs-map from lacunad" "$base.nfs.json" 2>"$T/svg.err" ||
		die "map-svg.py failed: $(cat "$T/svg.err")"
}

# RPC-with-TLS: a CA and a certificate for 127.0.0.1, made here
TLS_ARGS=()
TLS_SKIP=""
make_certs() {
	local d=$T/tls
	mkdir -p "$d" &&
		openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 \
			-subj "/CN=Lacuna demo CA" -keyout "$d/ca.key" -out "$d/ca.crt" \
			-addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign &&
		openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
			-subj "/CN=127.0.0.1" -keyout "$d/server.key" -out "$d/server.csr" &&
		openssl x509 -req -in "$d/server.csr" -CA "$d/ca.crt" -CAkey "$d/ca.key" \
			-CAcreateserial -days 1 -out "$d/server.crt" \
			-extfile <(printf 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n')
}
# (not a pipe into grep -q: with pipefail, lacunad's SIGPIPE would fail it)
if ! grep -q -- --tls-cert <<<"$("$LACUNAD" --help 2>&1 || true)"; then
	TLS_SKIP="this lacunad has no RPC-with-TLS (no --tls-cert)"
elif ! command -v openssl >/dev/null; then
	TLS_SKIP="openssl is missing (scripts/install-deps.sh installs it)"
elif ! make_certs >"$T/openssl.log" 2>&1; then
	TLS_SKIP="openssl could not make a certificate: $(tail -n 1 "$T/openssl.log")"
else
	# the export then admits none:tls:mtls: the copies above stay in the clear
	TLS_ARGS=(--tls-cert "$T/tls/server.crt" --tls-key "$T/tls/server.key")
fi

# tls_copy NAME BACKING PORT: the file copied with READ_PLUS over TLS
tls_copy() {
	local name=$1 backing=$2 port=$3 out line same=yes
	printf '\n--- %s over RPC-with-TLS (RFC 9289): an encrypted READ_PLUS copy\n' "$name"
	if [ -n "$TLS_SKIP" ]; then
		printf '    skipped: %s\n' "$TLS_SKIP"
		return 0
	fi
	printf '    lacuna nfs-get --ca ca.crt nfs://127.0.0.1:%s/%s (certificates made by openssl)\n' \
		"$port" "$name"
	rm -f "$SINK/$name"
	if ! out=$("$LACUNA" nfs-get --ca "$T/tls/ca.crt" "nfs://127.0.0.1:$port/$name" \
		"$SINK/$name" 2>&1); then
		printf '    FAILED: %s\n' "$out"
		rc=1
		return 0
	fi
	while IFS= read -r line; do printf '    %s\n' "$line"; done <<<"$out"
	cmp -s "$SINK/$name" "$backing/$name" || same=no
	[ $same = yes ] || rc=1
	printf '    => same bytes: %s; the copy uses %s of %s (holes kept); lacunad: %s\n' "$same" \
		"$(human "$(du -B1 "$SINK/$name" | cut -f1)")" "$(human "$(stat -c %s "$backing/$name")")" \
		"$(grep -o 'TLSv1.3 [A-Z0-9_]*' "$T/lacunad-ext4.log" | tail -n 1)"
	rm -f "$SINK/$name"
}

mkdir -p "$STAGE"
SINK="$T/copies"
mkdir -p "$SINK"
mount -t tmpfs -o size=1200m,mode=755 lacuna-demo-copies "$SINK"
CLEANUP+=("umount '$SINK'")

echo "Lacuna demo: lacunafs over XFS and ext4, exported by lacunad (NFSv4.2)."
echo "For each file: its layout ('#' data, '.' hole) and segment table taken locally"
echo "and over NFS, then $COPIES copies over NFS with READ and $COPIES with READ_PLUS (the"
echo "time shown is their median). The copies go to a tmpfs at $SINK,"
echo "a stand-in for the client's disk."
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
	for _ in $(seq 100); do mountpoint -q "$mnt" && break; sleep 0.05; done
	mountpoint -q "$mnt" || die "lacunafs did not mount (see $T/lacunafs-$type.log)"

	port=$(free_port)
	setsid "$LACUNAD" --export "$mnt" --export-options no_root_squash \
		--listen "127.0.0.1:$port" --state-dir "$T/lacunad-$type.state" \
		${TLS_ARGS[@]+"${TLS_ARGS[@]}"} -f </dev/null >"$T/lacunad-$type.log" 2>&1 &
	dpid=$!
	CLEANUP+=("stop_pid $dpid")
	for _ in $(seq 100); do
		ss -Hltn "sport = :$port" | grep -q . && break
		kill -0 $dpid 2>/dev/null || { cat "$T/lacunad-$type.log" >&2; die "lacunad exited"; }
		sleep 0.05
	done
	printf '\n=== %s: a 2 GiB %s loop image, lacunafs (pid %s) over it at %s,\n' "$type" "$type" "$pid" "$mnt"
	printf '    exported by lacunad (pid %s) as nfs://127.0.0.1:%s/\n' "$dpid" "$port"

	# A VM disk image, 1 GiB apparent: partition table and boot loader,
	# an EFI partition's start, a kernel and initrd in /boot, the root
	# filesystem's metadata every 128 MiB, a run of installed files, and
	# the backup partition table in the last 16 KiB.
	f="$mnt/disk.img"
	truncate -s 1G "$f"
	put "$f" 0 $((2 << 20))
	put "$f" $((64 << 20)) $((4 << 20))
	for g in 1 2 3 4 5 6 7; do
		put "$f" $((g * 128 << 20)) $((256 << 10))
	done
	put "$f" $((300 << 20)) $((16 << 20))
	put "$f" $(((1 << 30) - (16 << 10))) $((16 << 10))
	show "$type" disk.img "a VM disk image with a few written regions" "$backing" "$mnt" "$port"

	# A database file, 128 MiB of 8 KiB pages: a header, a table's first
	# extent, 40 pages scattered by inserts, then three pages of the table
	# freed (hole punched) as a vacuum would.
	f="$mnt/pages.db"
	truncate -s 128M "$f"
	put "$f" 0 $((4 * 8192))
	put "$f" $((100 * 8192)) $((64 * 8192))
	RANDOM=7
	for _ in $(seq 40); do
		put "$f" $(((RANDOM % 16384) * 8192)) 8192
	done
	for p in 110 111 140; do
		fallocate --punch-hole --offset $((p * 8192)) --length 8192 "$f"
	done
	show "$type" pages.db "a database file with scattered 8 KiB pages" "$backing" "$mnt" "$port"
done
# the last server (ext4) is still running
tls_copy disk.img "$backing" "$port"

{
	printf '%-5s %-9s %10s %10s  %19s  %19s  %6s %7s\n' "" "" "" "" "------- READ ------" \
		"---- READ_PLUS ----" "fewer" "faster"
	printf '%-5s %-9s %10s %10s  %10s %8s  %10s %8s  %6s %7s\n' fs file size data wire time \
		wire time bytes time
	printf '%s\n' "${SUMMARY[@]}"
	printf '(times: the median of %d copies each)\n' "$COPIES"
} >"$STAGE/summary.txt"
# complete or not at all: copied beside, then renamed
mkdir -p "$src/results"
cp -r "$STAGE" "$RES.part"
mv "$RES.part" "$RES"
echo
echo "=== Summary: bytes on the wire and time to copy each file over NFS"
sed 's/^/    /' "$RES/summary.txt"
echo
echo "Pictures of each file's layout (SVG, open in a browser), with the maps as JSON:"
echo "    $RES/"
find "$RES" -name '*.svg' -printf '      %f\n' | sort
echo
if [ $rc = 0 ]; then
	echo "demo: every map agreed and every copy was identical to its file"
else
	echo "demo: FAILED (see MISMATCH or 'same bytes: no' above)"
fi
exit $rc
