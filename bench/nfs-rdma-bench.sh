#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# nfs-rdma-bench.sh: lacunad's sequential read over TCP against over
# RPC-over-RDMA, with the same client (the Linux kernel's NFSv4.2 client),
# the same server process and the same cached file, in one test VM. Not a
# test: `make check` never runs it. Needs root and what tests/vm/vm.sh
# needs (qemu-system-x86, busybox-static, cpio, kmod).
#
# The host has no RDMA, so it all happens inside one guest, in the world of
# tests/vm/rdma_guest.sh: soft-RoCE (rdma_rxe) on a veth pair, client
# and server each on their own end and device, the traffic routed across
# the pair as between two hosts, receive processing spread over every
# vCPU (RPS) as a multi-queue NIC spreads it over cores; ext4 on a
# loop device in the guest's RAM, lacunafs over it, lacunad exporting the
# lacunafs mount on TCP port 2049 and RDMA port 20049. The guest writes a
# --size MiB file (default 256) of random bytes through lacunafs and reads
# it once (the server side's page cache stays warm from then on). Then,
# for each transport, it mounts the export (vers=4.2, proto=tcp or
# proto=rdma) and runs --runs times (default 3)
#
#   dd if=MNT/file of=/dev/null bs=1M iflag=direct
#
# O_DIRECT: every run goes to the server (no client page cache), in 1 MiB
# READs, one at a time. Figures (MB = 10^6 bytes, GB = 10^9):
#
#   MB/s             bytes / dd's elapsed time, median of the runs
#   lacunad CPU s/GB user+system time of the lacunad process
#                    (/proc/PID/stat utime+stime) over the runs, per GB
#                    read; the same for lacunafs
#   guest CPU s/GB   all the guest's non-idle CPU time (/proc/stat) per GB:
#                    client, server, FUSE, and the kernel's share, which
#                    for soft-RoCE includes rxe's packet processing and
#                    CRCs (done in softirq and kernel threads, counted
#                    for no process)
#   veth bytes / bytes read   what the server's end of the veth pair
#                    sent per byte read: the data went across the pair
#   ratios           rdma / tcp (throughput above 1: RDMA faster;
#                    CPU below 1: RDMA cheaper)
#
#   of which soft-RoCE  the share of lacunad's samples, in one more
#                    profiled pass (perf record -g on lacunad, when perf
#                    is installed), whose call chain is inside rxe: the
#                    soft-RoCE device runs its requester (copy into
#                    packets, ICRC) inside lacunad's ibv_post_send, and
#                    the veth hands the packets on from there; an RNIC
#                    does that work in hardware
#   ... w/o rxe      lacunad CPU s/GB without that share: the server's
#                    own code path (for TCP, the share is 0: the kernel's
#                    TCP send is the server's own work on any hardware)
#
# The veth pair runs with MTU 9000 (rxe path MTU 4096), as RoCE networks
# run jumbo frames; TCP gets the same link.
#
# Caveats: the guest runs under TCG (emulated CPU, no KVM here), so the
# absolute numbers are far below real hardware and the ratios say more;
# soft-RoCE does in software what an RNIC does in hardware, so its CPU
# cost is not what RDMA costs on real hardware.
#
# When lacunad was built without RDMA (or with --no-rdma), both
# columns are measured over TCP and the output says so in every row
# header ("rdma(=tcp)") and in a NOTE line.
#
# Usage: bench/nfs-rdma-bench.sh [--size MIB] [--runs N] [--cpus N]
#          [--mem MIB] [--no-rdma] [-v] [BUILD_DIR]
# BUILD_DIR defaults to $top_builddir, else the directory above this
# script. LACUNAD_ARGS adds arguments to lacunad (e.g. "--threads 4").

set -u
export LC_ALL=C

SELF_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SRC_DIR=$(cd "$SELF_DIR/.." && pwd)
RG="$SRC_DIR/tests/vm/rdma_guest.sh"

size=256
runs=3
cpus=2
mem=""
rdma=1
verbose=()

usage() {
	sed -n '/^# Usage:/,/^# script\./p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
}

while [ $# -gt 0 ]; do
	case $1 in
	--size) size=$2; shift ;;
	--runs) runs=$2; shift ;;
	--cpus) cpus=$2; shift ;;
	--mem) mem=$2; shift ;;
	--no-rdma) rdma=0 ;;
	-v) verbose=(-v) ;;
	-h | --help) usage; exit 0 ;;
	-*) usage >&2; exit 2 ;;
	*) break ;;
	esac
	shift
done
[ $# -le 1 ] || { usage >&2; exit 2; }
[ $# = 1 ] && top_builddir=$(cd "$1" && pwd)
: "${top_builddir:=$SRC_DIR}"
export top_builddir
[[ $size =~ ^[0-9]+$ && $runs =~ ^[1-9][0-9]*$ && $cpus =~ ^[1-9][0-9]*$ ]] ||
	{ echo "nfs-rdma-bench: --size, --runs and --cpus take numbers" >&2; exit 2; }
# the file lives in the guest's RAM twice (tmpfs image, page caches)
[ -n "$mem" ] || mem=$((1024 + 3 * size))
fs_mib=$((size + size / 4 + 128))

# shellcheck source=tests/vm/rdma_guest.sh
. "$RG"
note=""
if ((rdma)); then
	if why=$(rg_lacunad_rdma); then
		protos="tcp rdma"
		guest_proto=rdma
	else
		note="RDMA unavailable ($why): the rdma column was measured over TCP"
		rdma=0
	fi
else
	note="--no-rdma: the rdma column was measured over TCP"
fi
if ((!rdma)); then
	protos="tcp tcp"
	guest_proto=tcp
fi

dir=$(mktemp -d "${TMPDIR:-/tmp}/nfs-rdma-bench.XXXXXX") || exit 1
trap 'rm -rf "$dir"' EXIT

cat >"$dir/bench.sh" <<'GUEST'
# In the VM, in rdma_guest.sh's world.
set -u
hz=$(getconf CLK_TCK)
ticks() { # ticks PID: utime + stime of PID, in clock ticks
	awk '{ sub(/^.*\) /, ""); print $12 + $13 }' "/proc/$1/stat"
}
busy() { # busy: the guest's non-idle CPU time, in clock ticks
	awk '$1 == "cpu" { print $2 + $3 + $4 + $7 + $8 + $9 }' /proc/stat
}
wire() { # wire: bytes the server's end of the veth pair has sent
	cat /sys/class/net/v0/statistics/tx_bytes
}
# receive processing spread over every vCPU (RPS), as a multi-queue NIC
# spreads it over a host's cores
mask=$(printf %x $(((1 << $(nproc)) - 1)))
for d in v0 v1; do
	echo "$mask" >"/sys/class/net/$d/queues/rx-0/rps_cpus" || exit 1
done
f=$RG_EXPORT/file
echo "# $(cut -d' ' -f1 /proc/uptime) s: writing ${SIZE} MiB through lacunafs" >&2
head -c $((SIZE * 1048576)) /dev/urandom >"$f" || exit 1
sync
cat "$f" >/dev/null
echo "hz=$hz"
col=0
for p in $PROTOS; do
	col=$((col + 1))
	m=/tmp/bench-$col
	mkdir -p "$m"
	if [ "$p" = rdma ]; then port=20049; else port=2049; fi
	timeout 120 mount -t nfs -o "vers=4.2,proto=$p,port=$port" "$RG_SERVER:$RG_EXPORT" "$m" ||
		{ echo "mount proto=$p failed" >&2; exit 1; }
	echo "# mounted: $(awk -v m="$m" '$2 == m { print $4 }' /proc/mounts)" >&2
	# one untimed pass: the connection, the session, the server's caches
	dd if="$m/file" of=/dev/null bs=1M iflag=direct status=none
	for ((i = 1; i <= RUNS; i++)); do
		cat "$f" >/dev/null # the server side's caches stay warm
		d0=$(ticks "$RG_LACUNAD_PID")
		l0=$(ticks "$RG_LACUNAFS_PID")
		b0=$(busy)
		w0=$(wire)
		out=$(dd if="$m/file" of=/dev/null bs=1M iflag=direct 2>&1) || {
			echo "dd failed: $out" >&2
			exit 1
		}
		d1=$(ticks "$RG_LACUNAD_PID")
		l1=$(ticks "$RG_LACUNAFS_PID")
		b1=$(busy)
		w1=$(wire)
		# "N bytes (...) copied, S s, R MB/s"
		bytes=$(echo "$out" | awk '/copied/ { print $1 }')
		secs=$(echo "$out" | awk -F', ' '/copied/ { split($(NF - 1), a, " "); print a[1] }')
		echo "run col=$col proto=$p n=$i bytes=$bytes secs=$secs lacunad=$((d1 - d0))" \
			"lacunafs=$((l1 - l0)) guest=$((b1 - b0)) wire=$((w1 - w0))"
	done
	# one more pass, profiled: how much of lacunad's time is soft-RoCE's
	if command -v perf >/dev/null; then
		perf record -q -F 999 -g -p "$RG_LACUNAD_PID" -o "/tmp/perf.$col" -- \
			dd if="$m/file" of=/dev/null bs=1M iflag=direct status=none 2>/dev/null
		perf script -i "/tmp/perf.$col" -F comm,ip,sym 2>/dev/null | awk -v col="$col" '
			BEGIN { RS = "" }
			{ n++; if ($0 ~ /rxe_/) r++ }
			END { printf "prof col=%d samples=%d rxe=%d\n", col, n, r }'
	fi
	umount "$m" || exit 1
done
GUEST

echo "# nfs-rdma-bench: ${size} MiB, ${runs} runs per transport, guest ${cpus} vCPU(s), ${mem} MiB," \
	"lacunad from $top_builddir"
[ -n "$note" ] && echo "# NOTE: $note"
"$RG" run "${verbose[@]}" --proto "$guest_proto" --dir "$dir" --cpus "$cpus" --mem "$mem" \
	--fs-mib "$fs_mib" --timeout 1800 \
	-- env SIZE="$size" RUNS="$runs" PROTOS="$protos" bash "$dir/bench.sh" >"$dir/out" 2>"$dir/err"
rc=$?
if [ $rc != 0 ]; then
	cat "$dir/out" "$dir/err" >&2
	echo "nfs-rdma-bench: the guest run failed (exit $rc)" >&2
	exit 1
fi
grep '^# mounted' "$dir/err"
grep -E '^(run|prof) ' "$dir/out" | sed 's/^/# /'

# Per column: median MB/s, CPU s/GB over all runs; then the ratios.
awk -v rdma="$rdma" '
function med(s,  a, n, i, j, t) {
	n = split(s, a, " ")
	for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
	return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
/^hz=/ { hz = substr($0, 4) }
/^prof / {
	for (i = 2; i <= NF; i++) { split($i, kv, "="); p[kv[1]] = kv[2] }
	if (p["samples"] > 0) rxe[p["col"]] = p["rxe"] / p["samples"]
	next
}
/^run / {
	for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
	c = v["col"]
	if (v["secs"] > 0) rates[c] = rates[c] " " v["bytes"] / v["secs"] / 1e6
	bytes[c] += v["bytes"]; d[c] += v["lacunad"]; l[c] += v["lacunafs"]; g[c] += v["guest"]
	w[c] += v["wire"]
	n[c]++
}
END {
	if (!n[1] || !n[2] || !hz) { print "nfs-rdma-bench: no measurements" > "/dev/stderr"; exit 1 }
	name[1] = "tcp"; name[2] = rdma ? "rdma" : "rdma(=tcp)"
	for (c = 1; c <= 2; c++) {
		mb[c] = med(rates[c]); gb = bytes[c] / 1e9
		cd[c] = d[c] / hz / gb; cl[c] = l[c] / hz / gb; cg[c] = g[c] / hz / gb
	}
	printf "%-26s %12s %12s %10s\n", "", name[1], name[2], name[2] "/" name[1]
	printf "%-26s %12.1f %12.1f %10.2f\n", "seq read MB/s (median)", mb[1], mb[2], mb[1] ? mb[2] / mb[1] : 0
	printf "%-26s %12.2f %12.2f %10.2f\n", "lacunad CPU s/GB", cd[1], cd[2], cd[1] ? cd[2] / cd[1] : 0
	if ((1 in rxe) && (2 in rxe)) {
		for (c = 1; c <= 2; c++) own[c] = cd[c] * (1 - rxe[c])
		printf "%-26s %11.0f%% %11.0f%%\n", "  of which soft-RoCE (perf)", 100 * rxe[1], 100 * rxe[2]
		printf "%-26s %12.2f %12.2f %10.2f\n", "lacunad CPU s/GB w/o rxe", own[1], own[2], own[1] ? own[2] / own[1] : 0
	}
	printf "%-26s %12.2f %12.2f %10.2f\n", "lacunafs CPU s/GB", cl[1], cl[2], cl[1] ? cl[2] / cl[1] : 0
	printf "%-26s %12.2f %12.2f %10.2f\n", "guest CPU s/GB (all)", cg[1], cg[2], cg[1] ? cg[2] / cg[1] : 0
	printf "%-26s %12.3f %12.3f\n", "veth bytes / bytes read", w[1] / bytes[1], w[2] / bytes[2]
	printf "%-26s %12d %12d\n", "runs", n[1], n[2]
}' "$dir/out" || exit 1
[ -n "$note" ] && echo "NOTE: $note"
if [ -r "$dir/times" ]; then
	# shellcheck source=/dev/null
	. "$dir/times"
	echo "# VM: boot ${boot_s:-?} s, guest command ${cmd_s:-?} s, whole run ${total_s:-?} s"
fi
exit 0
