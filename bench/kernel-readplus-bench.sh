#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# kernel-readplus-bench.sh: what READ_PLUS buys over READ for the Linux
# kernel's own NFS client reading from lacunad. Not a test: `make check`
# never runs it. Needs root and the test VM (tests/vm/README.md).
#
# World (bench/nfs-common.sh): a fresh ext4 loop image, lacunafs over it,
# lacunad exporting the lacunafs mount as "/" on 127.0.0.1 (10.0.2.2 in the
# guest) with its statistics file in a directory the guest sees. Two files
# of --size (default 1 GiB) are made on the backing directory with dd:
#   holes90   90% holes: in each 10 MiB one 1 MiB run of random bytes at a
#             scattered MiB offset (100 runs for 1 GiB), holes between
#   dense     random bytes throughout, no holes
# Both are read once on the host first, so lacunad reads them from the
# host's page cache: the figures are the client's and the wire's, not the
# disk's (the host's cache is never dropped).
#
# Cases, each one boot of tests/vm/vm.sh (TCG here) and one mount:
#   6.12         Debian's 6.12 (bookworm-backports), vers=4.2, proto=tcp:
#                the client sends READ_PLUS
#   6.12-v4.1    the same kernel with vers=4.1: NFSv4.1 has no READ_PLUS,
#                so the client sends READ (6.12 has no mount option that
#                turns READ_PLUS off in 4.2)
#   6.1          Debian 12's stock 6.1, vers=4.2: READ_PLUS is compiled
#                out of its client (CONFIG_NFS_V4_2_READ_PLUS unset), so
#                it sends READ
# In the guest, each file is read --runs (default 3) times with
# `dd if=FILE of=/dev/null iflag=direct bs=1M`, the guest's caches dropped
# before each; the time is dd's own. Around the runs of a file, the guest
# takes the mount's READ and READ_PLUS lines of /proc/self/mountstats (ops,
# bytes sent, bytes received, RPC headers included) and lacunad's
# statistics (read_plus_data_bytes, read_plus_hole_bytes, rewritten once a
# second: it waits for a fresh copy). The table gives the median time, the
# file's size over it (MB/s, 10^6 bytes), and those counts per dd (the
# difference over the runs divided by --runs).
#
# The table (markdown) goes to stdout and to RESULTS_DIR/kernel-readplus-
# DATE.md (--results-dir, default ${TMPDIR:-/tmp}/lacuna-bench-results).
#
# Exit status: 0 done, 1 usage or setup error, 77 a kernel or the VM cannot
# be had here (the reason on stderr), 99 a guest run failed, 130
# interrupted.

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TOP_SRCDIR=$(cd "$SCRIPT_DIR/.." && pwd)
NB_NAME=kernel-readplus-bench
# shellcheck source=bench/nfs-common.sh
. "$SCRIPT_DIR/nfs-common.sh"
VM_SH=$TOP_SRCDIR/tests/vm/vm.sh

SIZE=1G
RUNS=3
CASES="6.12,6.12-v4.1,6.1"
RESULTS_DIR=${TMPDIR:-/tmp}/lacuna-bench-results
BUILD_DIR=""
VM_TIMEOUT=${LACUNA_VM_TIMEOUT:-3600}

usage() {
	cat <<EOF
usage: $0 [options] [BUILD_DIR]

The Linux kernel NFS client reading a 90%-holes file and a dense file from
lacunad with dd iflag=direct bs=1M: READ_PLUS (6.12, vers=4.2) against
READ (6.12 with vers=4.1, and 6.1), in the test VM (tests/vm/vm.sh).

  --size SIZE        each file's size, a whole number of MiB, at least 16
                     (default $SIZE)
  --runs N           dd runs per file and case, median taken (default $RUNS)
  --cases LIST       comma-separated, of 6.12, 6.12-v4.1, 6.1
                     (default $CASES)
  --results-dir DIR  where the results file goes (default $RESULTS_DIR)
  -h, --help         this text

BUILD_DIR holds gateway/lacunad and fusefs/lacunafs (default:
\$top_builddir, else ./build under the source tree). Needs root.
Exit: 0 done, 1 usage or setup error, 77 a kernel or the VM cannot be had,
99 a guest run failed.
EOF
}

while [ $# -gt 0 ]; do
	case $1 in
	--size)
		[ $# -ge 2 ] || { usage >&2; exit 1; }
		SIZE=$2
		shift 2
		;;
	--runs)
		[ $# -ge 2 ] || { usage >&2; exit 1; }
		RUNS=$2
		shift 2
		;;
	--cases)
		[ $# -ge 2 ] || { usage >&2; exit 1; }
		CASES=$2
		shift 2
		;;
	--results-dir)
		[ $# -ge 2 ] || { usage >&2; exit 1; }
		RESULTS_DIR=$2
		shift 2
		;;
	-h | --help)
		usage
		exit 0
		;;
	-*)
		echo "$NB_NAME: unknown option $1" >&2
		usage >&2
		exit 1
		;;
	*)
		[ -z "$BUILD_DIR" ] || { usage >&2; exit 1; }
		BUILD_DIR=$1
		shift
		;;
	esac
done

[[ $RUNS =~ ^[1-9][0-9]*$ ]] || nb_die "--runs must be a positive number"
nb_size_mib "$SIZE"
IFS=, read -r -a CASE_LIST <<<"$CASES"
[ ${#CASE_LIST[@]} -gt 0 ] || nb_die "--cases is empty"
for c in "${CASE_LIST[@]}"; do
	case $c in
	6.12 | 6.12-v4.1 | 6.1) ;;
	*) nb_die "unknown case '$c' (6.12, 6.12-v4.1 or 6.1)" ;;
	esac
done
: "${BUILD_DIR:=${top_builddir:-$TOP_SRCDIR/build}}"
LACUNAD=$BUILD_DIR/gateway/lacunad
LACUNAFS=$BUILD_DIR/fusefs/lacunafs
[ -x "$LACUNAD" ] || nb_die "no lacunad at $LACUNAD (build first, or give BUILD_DIR)"
[ -x "$LACUNAFS" ] || nb_die "no lacunafs at $LACUNAFS"
[ -x "$VM_SH" ] || [ -r "$VM_SH" ] || nb_die "no $VM_SH"

# case_kernel CASE: the guest kernel of a case
case_kernel() { echo "${1%-v4.1}"; }
# case_vers CASE: its NFS minor version
case_vers() { case $1 in *-v4.1) echo 4.1 ;; *) echo 4.2 ;; esac; }

nb_init
nb_require fusermount3 mkfs.ext4 ss dd

# ---- the kernels first: nothing else is worth doing without them
declare -A PREPARED
for c in "${CASE_LIST[@]}"; do
	k=$(case_kernel "$c")
	[ -n "${PREPARED[$k]:-}" ] && continue
	bash "$VM_SH" prepare --kernel "$k" >"$NB_TMP/prepare-$k.log" 2>&1
	rc=$?
	if [ $rc = 77 ]; then
		sed 's/^/# /' "$NB_TMP/prepare-$k.log" >&2
		echo "$NB_NAME: SKIP: guest kernel $k cannot be had here (see above)" >&2
		exit 77
	fi
	[ $rc = 0 ] || {
		cat "$NB_TMP/prepare-$k.log" >&2
		nb_die "vm.sh prepare --kernel $k failed ($rc)"
	}
	PREPARED[$k]=1
	nb_log "kernel $k: $(bash "$VM_SH" info --kernel "$k" 2>/dev/null | sed -n 's/^kernel_release=//p')"
done

# ---- the world
nb_make_backing $((2 * SIZE_MIB + 512))
nb_mount_lacunafs "$LACUNAFS"
FILES="holes90 dense"
RUNS_N=$((SIZE_MIB / 10))
for ((i = 0; i < RUNS_N; i++)); do
	dd if=/dev/urandom of="$NB_BACKING/holes90" bs=1M count=1 \
		seek=$((i * 10 + i * 7 % 9)) conv=notrunc status=none ||
		nb_die "dd holes90 run $i"
done
truncate -s "${SIZE_MIB}M" "$NB_BACKING/holes90" || nb_die "truncate holes90"
dd if=/dev/urandom of="$NB_BACKING/dense" bs=1M count="$SIZE_MIB" status=none ||
	nb_die "dd dense"
sync
nb_log "holes90: $RUNS_N runs of 1 MiB, $(($(stat -c %b "$NB_BACKING/holes90") * 512)) bytes allocated of $SIZE_B"
nb_log "dense: $(($(stat -c %b "$NB_BACKING/dense") * 512)) bytes allocated of $SIZE_B"

# lacunad's state directory holds its statistics file; the guest reads it
SHARE=$NB_TMP/share
mkdir -p "$SHARE"
NB_PORT[lacunad]=$(nb_free_port)
NB_SERVERS+=(lacunad)
setsid "$LACUNAD" --export "$NB_MNT" --export-options no_root_squash,fsid=root \
	--listen "127.0.0.1:${NB_PORT[lacunad]}" --threads 2 --grace off -f \
	--state-dir "$NB_TMP/lacunad.state" --stats-file "$SHARE/stats" \
	</dev/null >"$NB_TMP/lacunad.log" 2>&1 &
NB_PID[lacunad]=$!
nb_wait_listen lacunad

cat >"$SHARE/guest.sh" <<'GUEST'
# In the VM: one mount, every file read RUNS times with O_DIRECT.
r() { echo "$1=$2"; }
step() { echo "# $(cut -d' ' -f1 /proc/uptime) s: $*" >&2; }
m=/tmp/nfs
mkdir -p $m
step "mount vers=$VERS"
timeout 300 mount -t nfs4 -o "vers=$VERS,proto=tcp,port=$PORT,addr=10.0.2.2,soft,timeo=600,retrans=2" \
	10.0.2.2:/ $m || exit 1
r mount_opts "$(awk -v m=$m '$2 == m { print $4 }' /proc/mounts)"
# ops OP: "ops sent received" of OP's line in the mount's mountstats
ops() {
	awk -v m=$m -v op="$1:" '$1 == "device" { on = ($5 == m) }
		on && $1 == op { print $2, $5, $6; found = 1 } END { if (!found) print 0, 0, 0 }' \
		/proc/self/mountstats
}
# srv: lacunad's READ_PLUS data and hole bytes and READ, READ_PLUS ops,
# from a statistics file written after this call
srv() {
	local t0
	t0=$(stat -c %Y.%y "$SHARE/stats" 2>/dev/null)
	for ((i = 0; i < 100; i++)); do
		sleep 0.1
		[ "$(stat -c %Y.%y "$SHARE/stats" 2>/dev/null)" != "$t0" ] && break
	done
	sleep 0.2
	awk '$1 == "read_plus_data_bytes" { d = $2 } $1 == "read_plus_hole_bytes" { h = $2 }
		$1 == "op" && $2 == "READ" { r = $3 } $1 == "op" && $2 == "READ_PLUS" { rp = $3 }
		END { printf "%.0f %.0f %.0f %.0f\n", d, h, r, rp }' "$SHARE/stats"
}
for f in $FILES; do
	r "${f}_size" "$(stat -c %s "$m/$f")"
	r "${f}_before" "$(ops READ) $(ops READ_PLUS) $(srv)"
	for ((n = 1; n <= RUNS; n++)); do
		sync
		echo 3 >/proc/sys/vm/drop_caches
		step "$f: dd run $n"
		out=$(LC_ALL=C dd if="$m/$f" of=/dev/null iflag=direct bs=1M 2>&1)
		echo "$out" | sed 's/^/# dd: /' >&2
		r "${f}_run$n" "$(echo "$out" | sed -n 's/^\([0-9]*\) bytes .* copied, \([0-9.e+-]*\) s,.*/\1 \2/p')"
	done
	r "${f}_after" "$(ops READ) $(ops READ_PLUS) $(srv)"
done
umount $m && r umount ok
step done
GUEST

# val FILE KEY: the value of KEY=... in a guest's output
val() { sed -n "s/^$2=//p" "$1" | tail -n 1; }

RESULT_ROWS=()
for c in "${CASE_LIST[@]}"; do
	k=$(case_kernel "$c")
	v=$(case_vers "$c")
	# the server reads from its page cache, whatever ran since
	nb_warm "$NB_BACKING/holes90" "$NB_BACKING/dense"
	nb_log "case $c: kernel $k, vers=$v: booting"
	out=$NB_TMP/out-$c
	(cd "$SHARE" && exec bash "$VM_SH" run --kernel "$k" --share "$SHARE" --timeout "$VM_TIMEOUT" \
		--times "$NB_TMP/times-$c" --env "PORT=${NB_PORT[lacunad]}" --env "VERS=$v" \
		--env "SHARE=$SHARE" --env "FILES=$FILES" --env "RUNS=$RUNS" \
		-- bash "$SHARE/guest.sh") >"$out" 2>"$NB_TMP/err-$c"
	rc=$?
	sed 's/^/#   /' "$NB_TMP/err-$c" >&2
	if [ $rc = 77 ]; then
		echo "$NB_NAME: SKIP: the VM cannot run here (kernel $k)" >&2
		exit 77
	fi
	if [ $rc != 0 ]; then
		cat "$out" >&2
		echo "$NB_NAME: case $c: the guest run failed ($rc)" >&2
		exit 99
	fi
	kind=$(grep -m1 'guest kernel release' "$NB_TMP/err-$c" | sed 's/.*release: *//')
	nb_log "case $c: guest kernel ${kind:-?}, mount options: $(val "$out" mount_opts)"
	for f in $FILES; do
		times=""
		for ((n = 1; n <= RUNS; n++)); do
			read -r bytes secs <<<"$(val "$out" "${f}_run$n")"
			[ "${bytes:-0}" = "$SIZE_B" ] ||
				nb_die "case $c: $f: dd run $n read ${bytes:-nothing}, not $SIZE_B bytes"
			times+="$secs "
		done
		med=$(nb_median <<<"$times")
		# before/after: READ ops sent recv, READ_PLUS ops sent recv,
		# server rp_data rp_hole READ READ_PLUS
		read -r -a b <<<"$(val "$out" "${f}_before")"
		read -r -a a <<<"$(val "$out" "${f}_after")"
		if [ ${#a[@]} != 10 ] || [ ${#b[@]} != 10 ]; then
			nb_die "case $c: $f: no counts from the guest"
		fi
		d=()
		for ((i = 0; i < 10; i++)); do
			d[i]=$(((a[i] - b[i]) / RUNS))
		done
		if [ "${d[3]}" -gt 0 ]; then
			op=READ_PLUS
			o=3
		else
			op=READ
			o=0
		fi
		RESULT_ROWS+=("| $c | ${kind:-$k} | $v | $f | $op | $med | $(awk -v b="$SIZE_B" -v t="$med" 'BEGIN { printf "%.1f", b / t / 1e6 }') | ${d[o]} | ${d[o + 1]} | ${d[o + 2]} | ${d[6]} | ${d[7]} |")
		nb_log "case $c: $f: dd $times s; per dd: READ ${d[0]} ops ${d[2]} B received," \
			"READ_PLUS ${d[3]} ops ${d[5]} B received; lacunad READ ${d[8]}, READ_PLUS ${d[9]} ops"
	done
	# shellcheck source=/dev/null
	[ -r "$NB_TMP/times-$c" ] && . "$NB_TMP/times-$c"
	nb_log "case $c: qemu start to command ${boot_s:-?} s, command ${cmd_s:-?} s"
done

mkdir -p "$RESULTS_DIR" || nb_die "mkdir $RESULTS_DIR"
RESULT=$RESULTS_DIR/kernel-readplus-$(date -u +%Y%m%dT%H%M%SZ).md
accel=TCG
grep -q -- '-accel kvm\|accel=kvm\|enable-kvm' "$VM_SH" && [ -e /dev/kvm ] && accel=KVM
{
	echo "# kernel NFS client: READ_PLUS vs READ from lacunad"
	echo
	echo "$(date -u '+%F %H:%M') UTC, $(nproc) CPUs, qemu $accel, files of $SIZE_B bytes" \
		"(holes90: $RUNS_N runs of 1 MiB), $RUNS dd runs each" \
		"(\`dd if=FILE of=/dev/null iflag=direct bs=1M\`), the guest's caches dropped before each."
	echo "Time: median of dd's own; MB/s = 10^6 bytes/s. Per dd: the mount's mountstats for the op" \
		"(ops, bytes sent, bytes received) and lacunad's read_plus_data_bytes / read_plus_hole_bytes."
	echo
	echo "| case | guest kernel | vers | file | op | time (s) | MB/s | ops | sent (B) | received (B) | rp data (B) | rp holes (B) |"
	echo "| --- | --- | --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
	printf '%s\n' "${RESULT_ROWS[@]}"
} | tee "$RESULT"
nb_log "results in $RESULT"
