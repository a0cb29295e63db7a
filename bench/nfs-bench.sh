#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# nfs-bench.sh: lacunad against NFS-Ganesha 4.3 on loopback, over ONE
# backing directory (a freshly made ext4 loop image), in one run. Not a
# test: `make check` never runs it. Needs root; takes about three minutes
# with the defaults. With --baseline, also lacunad against another build
# of itself (before and after a change, in turns in the same run).
#
# Servers (each serves its directory as the NFSv4 root, no root squash):
#   lacunad       BUILD_DIR/gateway/lacunad --export MNT, MNT being
#                 lacunafs mounted over the backing directory (its own
#                 default thread count unless --lacunad-threads)
#   lacunad-base  only with --baseline PATH: that lacunad binary (another
#                 build, e.g. the one before a change), run exactly as
#                 lacunad (same flags, same lacunafs mount and lacunafs
#                 binary, its own port and state directory): only the
#                 daemon differs. It must take the flags lacunad is given
#                 here (--export, --export-options, --listen, --threads,
#                 -f, --state-dir).
#   ganesha-ext4  ganesha.nfsd, FSAL VFS, exporting the backing directory
#                 itself: what one would deploy without Lacuna
#   ganesha-lfs   ganesha.nfsd, FSAL VFS, exporting the same lacunafs
#                 mount: the same filesystem stack as lacunad. The VFS
#                 FSAL takes a FUSE mount: it needs name_to_handle_at and
#                 open_by_handle_at, which FUSE provides for inodes the
#                 kernel still caches (lacunafs does not set
#                 FUSE_CAP_EXPORT_SUPPORT, so a handle whose inode was
#                 evicted would be ESTALE: nothing here evicts them).
#
# Figures (MB = 10^6 bytes; --size, default 1 GiB):
#   read, nfs-cp      `nfs-cp nfs://127.0.0.1//read.dat?version=4&nfsport=P
#                     SINK/out`: libnfs 4.0's NFSv4.0 client, one 1 MiB
#                     READ at a time, into a new file on a tmpfs (nfs-cp
#                     opens its destination O_EXCL, so /dev/null cannot be
#                     used); wall time of the whole command. The file is
#                     in the page cache (backing and, through lacunafs,
#                     the mount's): it was read once by every server
#                     before the first timed run.
#   read, depth 1/D   bench/nfs_readbench (NFSv4.1, one session), 1 MiB
#                     READs, one at a time, then --depth (default 16) in
#                     flight; one pass over the file; nothing written.
#   write, depth 1/D  nfs_readbench --write: a new file, 1 MiB UNSTABLE
#                     WRITEs, one at a time (the pattern of nfs-cp's
#                     upload loop) or --depth in flight; the WRITE phase is
#                     timed (cached writes); the COMMIT that follows is
#                     timed on its own and shown as "write+COMMIT"; then
#                     the file is removed (REMOVE) and `sync` runs, untimed.
#                     nfs-cp is not used for uploads: libnfs 4.0's NFSv4
#                     client fails any WRITE above ~4000 bytes before
#                     sending it ("ZDR error: Failed to encode
#                     COMPOUND4args"), whatever the server. The script
#                     probes nfs-cp with a 64 KiB upload and says so.
# Each figure is the median of --runs (default 3) runs; the order of the
# servers rotates between runs. Also shown: CPU seconds per GB used by the
# server process (and by lacunafs under it) in each phase, from
# /proc/PID/stat, and by the client (nfs-cp's user+system time, or
# nfs_readbench's CPU clock). Ratios are lacunad / each other server
# (lacunad / ganesha, lacunad / lacunad-base; above 1: lacunad faster).
# The issue's target: lacunad >= 2x Ganesha for sequential read (nfs-cp)
# and write (one at a time).
#
# Before each measured run the file is read once more through the backing
# directory and the lacunafs mount (cheap when it is cached), and a run
# during which anyone wrote /proc/sys/vm/drop_caches is thrown away and
# run again (counted in the output). Other load on the machine is not
# detected: the load average is printed.
#
# Everything runs one thing at a time on the same CPUs: client, server and
# lacunafs share them. --perf DIR profiles lacunad and lacunafs (perf
# record -g) during one extra nfs-cp read and one extra depth-1 write,
# after the table.
#
# --tls: instead of all that, lacunad alone, READ and READ_PLUS over
# RPC-with-TLS (RFC 9289) against plain TCP in one run, on the same
# server (one lacunad given --tls-cert and --tls-key serves both: its
# export allows none:tls:mtls). Certificates are made by openssl in the
# temp dir (a CA and a server certificate for 127.0.0.1). Files, --size
# each, written on the backing directory and cached:
#   read.dat      random bytes, no holes
#   holes90.dat   cut into 1 MiB runs, 10% of them (fixed seed) data, the
#                 other 90% holes
# Clients, each reading the whole file once, 1 MiB calls:
#   nfs-get       `lacuna nfs-get [--read] --depth D [--ca CA] URL /dev/null`
#                 (NFSv4.2, READ_PLUS or READ), at depth 1 and --depth; its
#                 own clock for the copy (session setup and handshake not
#                 included); throughput is the file's size over that time,
#                 so READ_PLUS of holes90.dat can pass the link's speed
#   nfs_readbench READ of read.dat, depth 1 and --depth, plain and --tls
# CPU: lacunad's and lacunafs's utime+stime (/proc/PID/stat) during each
# copy, in seconds per GB of file; the client's too (nfs-get's user+system
# time, session and handshake included; nfs_readbench's CPU clock). Every pair (plain, TLS) of a case runs
# back to back, which one first alternating between runs; the copies
# are checked byte for byte (cmp) in an untimed pass first. Targets (the
# issue's): TLS READ at depth D >= 0.6x plain; READ_PLUS of holes90.dat
# over TLS >= 5x READ of it over TLS (depth D).
#
# Exit status: 0 done (targets met or not), 1 usage or setup error,
# 130 interrupted.

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
NB_NAME=nfs-bench
# shellcheck source=bench/nfs-common.sh
. "$SCRIPT_DIR/nfs-common.sh"

SIZE=1G
RUNS=3
DEPTH=16
SERVERS_OPT="lacunad,ganesha-ext4,ganesha-lfs"
BUILD_DIR=""
LACUNAD=""
BASELINE=""
LACUNAFS=""
LACUNAD_THREADS=""
PERF_DIR=""
TLS=""
LACUNAD_SET=()

usage() {
	cat <<EOF
usage: $0 [options] [BUILD_DIR]

Sequential NFS read and write throughput of lacunad against NFS-Ganesha
(and, with --baseline, against another build of lacunad)
on one loop image, on loopback. Needs root. The comment at the top of
this script explains every figure.

  BUILD_DIR              build directory with gateway/lacunad,
                         fusefs/lacunafs and bench/nfs_readbench
                         (default: \$top_builddir, else the directory above
                         this script)
  --size N[K|M|G]        file size (default 1G)
  --runs N               repetitions, medians shown (default 3)
  --depth D              calls in flight for the deep rows (default 16)
  --servers LIST         subset of lacunad,lacunad-base,ganesha-ext4,
                         ganesha-lfs (default lacunad,ganesha-ext4,
                         ganesha-lfs; --baseline adds lacunad-base to any
                         LIST, next to lacunad)
  --lacunad PATH         the lacunad binary (default BUILD_DIR/gateway/lacunad)
  --baseline PATH        another lacunad binary (e.g. the build before a
                         change), served as lacunad-base exactly as lacunad
                         is, in the same rotation; ratios lacunad/base
  --lacunafs PATH        the lacunafs binary (default BUILD_DIR/fusefs/lacunafs)
  --lacunad-threads N    lacunad --threads N (default: lacunad's own)
  --port-base P          first TCP port tried for the servers (default 26049)
  --perf DIR             profile lacunad and lacunafs after the table
  --set KEY=VALUE        with --tls: lacunad --set KEY=VALUE (repeatable), e.g.
                         tls_cipher_preference=aes128
  --tls                  instead: READ and READ_PLUS over RPC-with-TLS
                         against plain TCP, lacunad only (see the top of
                         this script)
  -h, --help             this help
EOF
}

while [ $# -gt 0 ]; do
	case $1 in
	-h | --help)
		usage
		exit 0
		;;
	--size) SIZE=${2:?}; shift ;;
	--size=*) SIZE=${1#*=} ;;
	--runs) RUNS=${2:?}; shift ;;
	--runs=*) RUNS=${1#*=} ;;
	--depth) DEPTH=${2:?}; shift ;;
	--depth=*) DEPTH=${1#*=} ;;
	--servers) SERVERS_OPT=${2:?}; shift ;;
	--servers=*) SERVERS_OPT=${1#*=} ;;
	--lacunad) LACUNAD=${2:?}; shift ;;
	--lacunad=*) LACUNAD=${1#*=} ;;
	--baseline) BASELINE=${2:?}; shift ;;
	--baseline=*) BASELINE=${1#*=} ;;
	--lacunafs) LACUNAFS=${2:?}; shift ;;
	--lacunafs=*) LACUNAFS=${1#*=} ;;
	--lacunad-threads) LACUNAD_THREADS=${2:?}; shift ;;
	--lacunad-threads=*) LACUNAD_THREADS=${1#*=} ;;
	--port-base) NB_PORT_NEXT=${2:?}; shift ;;
	--port-base=*) NB_PORT_NEXT=${1#*=} ;;
	--perf) PERF_DIR=${2:?}; shift ;;
	--perf=*) PERF_DIR=${1#*=} ;;
	--tls) TLS=1 ;;
	--set) LACUNAD_SET+=(--set "${2:?}"); shift ;;
	--set=*) LACUNAD_SET+=(--set "${1#*=}") ;;
	-*)
		usage >&2
		exit 1
		;;
	*)
		[ -z "$BUILD_DIR" ] || nb_die "more than one BUILD_DIR given"
		BUILD_DIR=$1
		;;
	esac
	shift
done

SIZE_B=$(nb_parse_size "$SIZE")
SIZE_MIB=$((SIZE_B / 1048576))
if [ "$((SIZE_MIB * 1048576))" != "$SIZE_B" ] || [ "$SIZE_MIB" = 0 ]; then
	nb_die "--size must be a whole number of MiB"
fi
for v in RUNS DEPTH; do
	[[ ${!v} =~ ^[1-9][0-9]*$ ]] || nb_die "--${v,,} must be a positive integer"
done
IFS=, read -r -a SERVERS <<<"$SERVERS_OPT"
[ ${#SERVERS[@]} -gt 0 ] || nb_die "--servers is empty"
has_server() {
	local s
	for s in "${SERVERS[@]}"; do
		[ "$s" = "$1" ] && return 0
	done
	return 1
}
for s in "${SERVERS[@]}"; do
	case $s in
	lacunad | lacunad-base | ganesha-ext4 | ganesha-lfs) ;;
	*) nb_die "unknown server '$s' in --servers" ;;
	esac
done
# --baseline adds lacunad-base, next to lacunad in the rotation
if [ -n "$BASELINE" ] && ! has_server lacunad-base; then
	for ((k = 0; k < ${#SERVERS[@]}; k++)); do
		[ "${SERVERS[$k]}" = lacunad ] && break
	done
	SERVERS=("${SERVERS[@]:0:k+1}" lacunad-base "${SERVERS[@]:k+1}")
fi
has_server lacunad-base && [ -z "$BASELINE" ] && nb_die "lacunad-base needs --baseline PATH"

: "${top_builddir:=$(cd "$SCRIPT_DIR/.." && pwd)}"
[ -n "$BUILD_DIR" ] && top_builddir=$BUILD_DIR
[ -n "$LACUNAD" ] || LACUNAD=$top_builddir/gateway/lacunad
[ -n "$LACUNAFS" ] || LACUNAFS=$top_builddir/fusefs/lacunafs
NFSRB=$top_builddir/bench/nfs_readbench
# the lacunad binary of each lacunad server
declare -A LACUNAD_BIN=([lacunad]=$LACUNAD [lacunad-base]=$BASELINE)

# ------------------------------------------------------------ --tls

LACUNA_TOOL=$top_builddir/tools/lacuna
# shellcheck disable=SC2317 # run through nb_guarded
tls_ticks() {
	echo $(($(nb_ticks "${NB_PID[lacunad]}") + $(nb_ticks "$NB_LFS_PID")))
}
# shellcheck disable=SC2317 # run through nb_guarded
m_get() { # file op depth tcp|tls
	local f=$1 op=$2 d=$3 x=$4 c0 c1 out args cpu TIMEFORMAT='%3U %3S'
	args=(--depth "$d")
	[ "$op" = READ ] && args+=(--read)
	[ "$x" = tls ] && args+=(--ca "$NB_TMP/ca.crt")
	c0=$(tls_ticks)
	{ time "$LACUNA_TOOL" nfs-get "${args[@]}" "nfs://127.0.0.1:${NB_PORT[lacunad]}/$f" \
		/dev/null >"$NB_TMP/get.out" 2>&1; } 2>"$NB_TMP/get.time" ||
		nb_die "nfs-get ${args[*]} $f failed: $(cat "$NB_TMP/get.out")"
	c1=$(tls_ticks)
	out=$(cat "$NB_TMP/get.out")
	cpu=$(awk '{ printf "%.0f", ($1 + $2) * 1e9 }' "$NB_TMP/get.time")
	case $out in *"over TLSv1.3"*) [ "$x" = tls ] ;; *) [ "$x" = tcp ] ;; esac ||
		nb_die "nfs-get ${args[*]} $f: not over $x: $out"
	awk -v b="$SIZE_B" -v t=$((c1 - c0)) -v c="$cpu" '/^time / {
		printf "MBps=%.1f ticks=%d client_cpu_ns=%s\n", b / $2 / 1e6, t, c }' <<<"$out"
}
# shellcheck disable=SC2317 # run through nb_guarded
m_rb_tls() { # depth tcp|tls
	local d=$1 x=$2 c0 c1 out args=()
	[ "$x" = tls ] && args=(--ca "$NB_TMP/ca.crt")
	c0=$(tls_ticks)
	out=$("$NFSRB" --port "${NB_PORT[lacunad]}" --depth "$d" --passes 1 "${args[@]}" \
		/read.dat 2>"$NB_TMP/rb.err") ||
		nb_die "nfs_readbench ${args[*]} failed: $(tail -n 3 "$NB_TMP/rb.err")"
	c1=$(tls_ticks)
	echo "$out ticks=$((c1 - c0))"
}

tls_bench() {
	local r k d f op x o=$NB_TMP/m.out row i first
	local -a ROWS=() args
	local -A RES CPU CCPU MED
	nb_require mkfs.ext4 mount umount mountpoint setsid ss awk openssl cmp fusermount3
	[ -c /dev/fuse ] || nb_die "no /dev/fuse"
	for f in "$LACUNAD" "$LACUNAFS" "$LACUNA_TOOL" "$NFSRB"; do
		[ -x "$f" ] || nb_die "$f not built"
	done
	"$LACUNAD" --help 2>&1 | grep -q -- --tls-cert ||
		nb_die "$LACUNAD has no RPC-with-TLS (no --tls-cert)"
	nb_init
	nb_make_backing $((SIZE_MIB * 2 + 1024))
	nb_make_sink $((SIZE_MIB * 2 + 64))
	nb_mount_lacunafs "$LACUNAFS"
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
		-subj "/CN=nfs-bench CA" -keyout "$NB_TMP/ca.key" -out "$NB_TMP/ca.crt" \
		-addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign \
		2>/dev/null &&
		openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
			-subj "/CN=127.0.0.1" -keyout "$NB_TMP/srv.key" -out "$NB_TMP/srv.csr" \
			2>/dev/null &&
		openssl x509 -req -in "$NB_TMP/srv.csr" -CA "$NB_TMP/ca.crt" -CAkey "$NB_TMP/ca.key" \
			-CAcreateserial -days 2 -out "$NB_TMP/srv.crt" \
			-extfile <(printf 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n') \
			2>/dev/null || nb_die "openssl could not make the certificates"
	log_step() { nb_log "$*"; }
	log_step "writing read.dat and holes90.dat ($SIZE_MIB MiB each)"
	dd if=/dev/urandom of="$NB_BACKING/read.dat" bs=1M count="$SIZE_MIB" iflag=fullblock \
		status=none || nb_die "dd of read.dat failed"
	truncate -s "${SIZE_MIB}M" "$NB_BACKING/holes90.dat" || nb_die "truncate holes90.dat"
	RANDOM=9289
	for ((i = 0; i < SIZE_MIB; i++)); do
		((RANDOM % 10 == 0)) || continue
		dd if=/dev/urandom of="$NB_BACKING/holes90.dat" bs=1M seek="$i" count=1 \
			conv=notrunc status=none || nb_die "dd into holes90.dat failed"
	done
	sync
	NB_LACUNAD_ARGS=(--tls-cert "$NB_TMP/srv.crt" --tls-key "$NB_TMP/srv.key" "${LACUNAD_SET[@]}")
	nb_start_lacunad lacunad "$LACUNAD" "$NB_MNT" "$LACUNAD_THREADS"
	WARM="$NB_BACKING/read.dat $NB_BACKING/holes90.dat $NB_MNT/read.dat $NB_MNT/holes90.dat"
	# shellcheck disable=SC2086 # paths without blanks
	nb_warm $WARM
	for f in read.dat holes90.dat; do
		for op in READ READ_PLUS; do
			log_step "checking $f with $op over TLS"
			rm -f "$NB_SINK/out"
			args=(--ca "$NB_TMP/ca.crt")
			[ "$op" = READ ] && args+=(--read)
			"$LACUNA_TOOL" nfs-get "${args[@]}" "nfs://127.0.0.1:${NB_PORT[lacunad]}/$f" \
				"$NB_SINK/out" >"$NB_TMP/check.out" 2>&1 ||
				nb_die "nfs-get ${args[*]} $f: $(cat "$NB_TMP/check.out")"
			cmp -s "$NB_SINK/out" "$NB_BACKING/$f" || nb_die "nfs-get $op over TLS: $f differs"
		done
	done
	rm -f "$NB_SINK/out"

	for f in read.dat holes90.dat; do
		for op in READ READ_PLUS; do
			for d in 1 "$DEPTH"; do ROWS+=("get:$f:$op:$d"); done
		done
	done
	for d in 1 "$DEPTH"; do ROWS+=("rb:read.dat:READ:$d"); done
	LOAD0=$(cut -d' ' -f1-3 /proc/loadavg)
	for ((r = 0; r < RUNS; r++)); do
		log_step "run $((r + 1))/$RUNS"
		for row in "${ROWS[@]}"; do
			IFS=: read -r k f op d <<<"$row"
			first=tcp
			((r % 2)) && first=tls
			for x in $first $([ $first = tcp ] && echo tls || echo tcp); do
				if [ "$k" = get ]; then
					nb_guarded "$o" "$WARM" m_get "$f" "$op" "$d" "$x"
				else
					nb_guarded "$o" "$WARM" m_rb_tls "$d" "$x"
				fi
				RES[$row,$x]+="$(nb_field MBps <"$o") "
				CPU[$row,$x]+="$(nb_calc "($(nb_field ticks <"$o") / $NB_CLK_TCK) / ($SIZE_B / 1e9)") "
				CCPU[$row,$x]+="$(nb_calc "$(nb_field client_cpu_ns <"$o") / $SIZE_B") "
			done
		done
	done

	echo "nfs-bench --tls: lacunad, $SIZE_MIB MiB files on lacunafs over an ext4 loop image, cached;"
	echo "  $RUNS runs, medians; MB = 10^6 bytes of file per second; 1 MiB calls"
	echo "  kernel $(uname -r), $(nproc) CPUs; client, lacunad and lacunafs share them"
	echo "  TLS: $(grep -o 'TLSv1.3 [A-Z0-9_]*' "$NB_TMP/check.out" | head -n 1); lacunad says:"
	grep -i "tls" "$NB_TMP/lacunad.log" | head -n 3 | sed 's/^/    /'
	printf '%-40s %9s %9s %7s   %s\n' "MB/s" "TCP" "TLS" "TLS/TCP" \
		"CPU s/GB: lacunad+lacunafs TCP, TLS; client TCP, TLS"
	for row in "${ROWS[@]}"; do
		IFS=: read -r k f op d <<<"$row"
		for x in tcp tls; do
			MED[$row,$x]=$(echo "${RES[$row,$x]}" | nb_median)
		done
		printf '%-40s %9.1f %9.1f %7s   %6.2f %6.2f    %6.2f %6.2f\n' \
			"$f $op, $([ "$k" = get ] && echo nfs-get || echo nfs_readbench), depth $d" \
			"${MED[$row,tcp]}" "${MED[$row,tls]}" "$(nb_calc "${MED[$row,tls]} / ${MED[$row,tcp]}")" \
			"$(echo "${CPU[$row,tcp]}" | nb_median)" "$(echo "${CPU[$row,tls]}" | nb_median)" \
			"$(echo "${CCPU[$row,tcp]}" | nb_median)" "$(echo "${CCPU[$row,tls]}" | nb_median)"
	done
	echo
	verdict() { awk "BEGIN { exit !($1) }" && echo met || echo MISSED; }
	r=$(nb_calc "${MED[get:read.dat:READ:$DEPTH,tls]} / ${MED[get:read.dat:READ:$DEPTH,tcp]}")
	printf 'Target TLS READ (nfs-get, read.dat, depth %s) >= 0.6x plain: %sx %s\n' "$DEPTH" "$r" \
		"$(verdict "$r >= 0.6")"
	r=$(nb_calc "${MED[rb:read.dat:READ:$DEPTH,tls]} / ${MED[rb:read.dat:READ:$DEPTH,tcp]}")
	printf '       (nfs_readbench READ, depth %s: %sx)\n' "$DEPTH" "$r"
	r=$(nb_calc "${MED[get:holes90.dat:READ_PLUS:$DEPTH,tls]} / ${MED[get:holes90.dat:READ:$DEPTH,tls]}")
	printf 'Target holes90.dat READ_PLUS over TLS >= 5x READ over TLS (depth %s): %sx %s\n' \
		"$DEPTH" "$r" "$(verdict "$r >= 5")"
	echo "  runs discarded because someone dropped the page cache meanwhile: $NB_DISCARDED"
	echo "  load average at start: $LOAD0, at end: $(cut -d' ' -f1-3 /proc/loadavg)"
}

if [ -n "$TLS" ]; then
	tls_bench
	exit 0
fi

# ------------------------------------------------------------ requirements

nb_require mkfs.ext4 mount umount mountpoint setsid ss nfs-cp awk
[ -x "$NFSRB" ] || nb_die "$NFSRB not built (make -C $top_builddir bench/nfs_readbench)"
if has_server lacunad || has_server lacunad-base || has_server ganesha-lfs; then
	[ -c /dev/fuse ] || nb_die "no /dev/fuse"
	nb_require fusermount3
	[ -x "$LACUNAFS" ] || nb_die "lacunafs not built at $LACUNAFS"
fi
if has_server lacunad; then
	[ -x "$LACUNAD" ] ||
		nb_die "lacunad not built at $LACUNAD (give BUILD_DIR or --lacunad, or --servers ganesha-ext4,ganesha-lfs)"
fi
if has_server lacunad-base; then
	[ -x "$BASELINE" ] || nb_die "--baseline $BASELINE is not an executable lacunad"
fi
if has_server ganesha-ext4 || has_server ganesha-lfs; then
	nb_require ganesha.nfsd
fi
if [ -n "$PERF_DIR" ]; then
	has_server lacunad || nb_die "--perf profiles lacunad: keep it in --servers"
	nb_require perf
	mkdir -p "$PERF_DIR" || nb_die "cannot make $PERF_DIR"
	PERF_DIR=$(cd "$PERF_DIR" && pwd)
fi

# ------------------------------------------------------------ world

nb_init
NWRITES=$((RUNS * ${#SERVERS[@]} * 2 + 2))
# the read file, every write file (a server may keep a removed file open),
# room for ext4's metadata; the image is sparse
nb_make_backing $((SIZE_MIB * (NWRITES + 1) + 1024))
nb_make_sink $((SIZE_MIB * 2 + 64))
if has_server lacunad || has_server lacunad-base || has_server ganesha-lfs; then
	nb_mount_lacunafs "$LACUNAFS"
fi

FILE=read.dat
log_step() { nb_log "$*"; }
log_step "writing the $SIZE_MIB MiB read file"
dd if=/dev/urandom of="$NB_BACKING/$FILE" bs=1M count="$SIZE_MIB" iflag=fullblock status=none ||
	nb_die "dd of $NB_BACKING/$FILE failed"
cp "$NB_BACKING/$FILE" "$NB_SINK/src" || nb_die "cp to $NB_SINK/src failed"
head -c 65536 "$NB_SINK/src" >"$NB_SINK/probe"
sync
cat "$NB_BACKING/$FILE" >/dev/null

# files exist before Ganesha starts: it caches directory contents
for s in "${SERVERS[@]}"; do
	case $s in
	lacunad | lacunad-base) nb_start_lacunad "$s" "${LACUNAD_BIN[$s]}" "$NB_MNT" "$LACUNAD_THREADS" ;;
	ganesha-ext4) nb_start_ganesha ganesha-ext4 "$NB_BACKING" ;;
	ganesha-lfs) nb_start_ganesha ganesha-lfs "$NB_MNT" ;;
	esac
done

# pids whose CPU time counts for a server: itself, and lacunafs under it
# shellcheck disable=SC2317 # run through nb_guarded
server_pids() {
	case $1 in
	lacunad | lacunad-base | ganesha-lfs) echo "${NB_PID[$1]} $NB_LFS_PID" ;;
	*) echo "${NB_PID[$1]}" ;;
	esac
}
# shellcheck disable=SC2317 # run through nb_guarded
ticks_of() {
	local p t=0
	for p in $(server_pids "$1"); do
		t=$((t + $(nb_ticks "$p")))
	done
	echo "$t"
}
url() {
	echo "nfs://127.0.0.1/$2?version=4&nfsport=${NB_PORT[$1]}"
}

# what nb_guarded reads before each measurement, to refill the page caches
# the servers read from if someone dropped them
WARM="$NB_BACKING/$FILE"
[ -n "$NB_MNT" ] && WARM+=" $NB_MNT/$FILE"

# warm every server's path to the file, checking what it returns
for s in "${SERVERS[@]}"; do
	log_step "$s on port ${NB_PORT[$s]}: one untimed read, checked against the file"
	"$NFSRB" --port "${NB_PORT[$s]}" --passes 1 --verify "$NB_BACKING/$FILE" --label warm \
		"/$FILE" >"$NB_TMP/warm.$s" 2>"$NB_TMP/warm.$s.err" ||
		nb_die "$s: nfs_readbench --verify failed: $(tail -n 3 "$NB_TMP/warm.$s.err")"
done

# does nfs-cp upload? (libnfs 4.0: no, for anything past ~4000 bytes)
CP_UPLOAD_NOTE=""
for s in "${SERVERS[@]}"; do
	out=$(nfs-cp "$NB_SINK/probe" "$(url "$s" "/probe-$s.dat")" 2>&1) && continue
	CP_UPLOAD_NOTE="nfs-cp could not upload 64 KiB to $s ($(echo "$out" | head -n 1)): writes use nfs_readbench --write"
	break
done
[ -n "$CP_UPLOAD_NOTE" ] || CP_UPLOAD_NOTE="nfs-cp uploads work here, but writes still use nfs_readbench --write for the same pattern on every server"

# ------------------------------------------------------------ runs

declare -A RES CPU
declare -A CCPU
record() { # server row value cpu_ticks [client_cpu_ns]
	RES[$1,$2]+="$3 "
	CPU[$1,$2]+="$(nb_calc "($4 / $NB_CLK_TCK) / ($SIZE_B / 1e9)") "
	[ -n "${5:-}" ] && CCPU[$1,$2]+="$(nb_calc "$5 / $SIZE_B") "
}

# One measurement each; each prints one key=value line (MBps, ticks, and
# nfs_readbench's fields) and is run under nb_guarded.
# shellcheck disable=SC2317 # run through nb_guarded
m_cp_read() { # server
	local s=$1 t0 t1 c0 c1 cpu TIMEFORMAT='%3U %3S'
	rm -f "$NB_SINK/out"
	c0=$(ticks_of "$s")
	t0=$(nb_now_ns)
	{ time nfs-cp "$(url "$s" "/$FILE")" "$NB_SINK/out" >"$NB_TMP/cp.out" 2>&1; } \
		2>"$NB_TMP/cp.time" || nb_die "$s: nfs-cp read failed: $(cat "$NB_TMP/cp.out")"
	t1=$(nb_now_ns)
	c1=$(ticks_of "$s")
	[ "$(stat -c %s "$NB_SINK/out")" = "$SIZE_B" ] || nb_die "$s: nfs-cp copied a short file"
	rm -f "$NB_SINK/out"
	cpu=$(awk '{ printf "%.0f", ($1 + $2) * 1e9 }' "$NB_TMP/cp.time")
	echo "MBps=$(nb_calc "$SIZE_B / (($t1 - $t0) / 1e9) / 1e6") ticks=$((c1 - c0)) client_cpu_ns=$cpu"
}
# shellcheck disable=SC2317 # run through nb_guarded
m_rb() { # server depth [--write name]
	local s=$1 d=$2 c0 c1 out
	shift 2
	c0=$(ticks_of "$s")
	out=$("$NFSRB" --port "${NB_PORT[$s]}" --depth "$d" --passes 1 "$@" 2>"$NB_TMP/rb.err") ||
		nb_die "$s: nfs_readbench $* failed: $(tail -n 3 "$NB_TMP/rb.err")"
	c1=$(ticks_of "$s")
	echo "$out ticks=$((c1 - c0))"
}
# shellcheck disable=SC2317 # run through nb_guarded
m_rb_write() { # server depth run: a new file per try
	m_rb "$1" "$2" --write "$SIZE_B" --remove "/w-$1-$3-d$2-$NB_TRY.dat"
}

run_server() {
	local s=$1 r=$2 o=$NB_TMP/m.out d
	nb_guarded "$o" "$WARM" m_cp_read "$s"
	record "$s" read_cp "$(nb_field MBps <"$o")" "$(nb_field ticks <"$o")" \
		"$(nb_field client_cpu_ns <"$o")"
	for d in 1 "$DEPTH"; do
		nb_guarded "$o" "$WARM" m_rb "$s" "$d" "/$FILE"
		record "$s" "read_d$d" "$(nb_field MBps <"$o")" "$(nb_field ticks <"$o")" \
				"$(nb_field client_cpu_ns <"$o")"
	done
	for d in 1 "$DEPTH"; do
		nb_guarded "$o" "$WARM" m_rb_write "$s" "$d" "$r"
		record "$s" "write_d$d" "$(nb_field MBps <"$o")" "$(nb_field ticks <"$o")" \
				"$(nb_field client_cpu_ns <"$o")"
		if [ "$d" = 1 ]; then
			record "$s" write_commit "$(awk -v b="$SIZE_B" '{
				for (i = 1; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
				printf "%.1f", b / ((f["ns"] + f["commit_ns"]) / 1e9) / 1e6 }' "$o")" 0
		fi
		sync
	done
}

LOAD0=$(cut -d' ' -f1-3 /proc/loadavg)
awk -v l="${LOAD0%% *}" 'BEGIN { exit !(l > 0.5) }' &&
	echo "$NB_NAME: warning: load average $LOAD0 at the start: figures will be noisy" >&2
for ((r = 0; r < RUNS; r++)); do
	for ((k = 0; k < ${#SERVERS[@]}; k++)); do
		s=${SERVERS[$(((k + r) % ${#SERVERS[@]}))]}
		log_step "run $((r + 1))/$RUNS: $s"
		run_server "$s" "$r"
	done
done

# ------------------------------------------------------------ table

GVER=$(dpkg-query -W -f '${Version}' nfs-ganesha 2>/dev/null || echo "?")
echo "nfs-bench: $SIZE_MIB MiB file on an ext4 loop image; $RUNS runs, medians; MB = 10^6 bytes"
echo "  kernel $(uname -r), $(nproc) CPUs; client, servers and lacunafs share them"
for s in "${SERVERS[@]}"; do
	case $s in
	lacunad | lacunad-base) echo "  $s: ${LACUNAD_BIN[$s]} --export <lacunafs mount>${LACUNAD_THREADS:+ --threads $LACUNAD_THREADS}, port ${NB_PORT[$s]}" ;;
	ganesha-ext4) echo "  ganesha-ext4: NFS-Ganesha $GVER, FSAL VFS on the backing ext4 directory, port ${NB_PORT[$s]}" ;;
	ganesha-lfs) echo "  ganesha-lfs: NFS-Ganesha $GVER, FSAL VFS on the lacunafs mount, port ${NB_PORT[$s]}" ;;
	esac
done
echo "  $CP_UPLOAD_NOTE"
echo

ROWS=(read_cp read_d1 "read_d$DEPTH" write_d1 "write_d$DEPTH" write_commit)
row_name() {
	case $1 in
	read_cp) echo "read, nfs-cp to tmpfs (v4.0)" ;;
	read_d*) echo "read, nfs_readbench, ${1#read_d} in flight" ;;
	write_commit) echo "write+COMMIT, 1 in flight" ;;
	write_d*) echo "write, nfs_readbench, ${1#write_d} in flight" ;;
	esac
}
declare -A MED
printf '%-34s' "MB/s"
for s in "${SERVERS[@]}"; do printf ' %13s' "$s"; done
if has_server lacunad; then
	for s in "${SERVERS[@]}"; do [ "$s" = lacunad ] || printf ' %13s' "lacunad/${s#*-}"; done
fi
echo
for row in "${ROWS[@]}"; do
	printf '%-34s' "$(row_name "$row")"
	for s in "${SERVERS[@]}"; do
		MED[$s,$row]=$(echo "${RES[$s,$row]}" | nb_median)
		printf ' %13.1f' "${MED[$s,$row]}"
	done
	if has_server lacunad; then
		for s in "${SERVERS[@]}"; do
			[ "$s" = lacunad ] && continue
			printf ' %13s' "$(nb_calc "${MED[lacunad,$row]} / ${MED[$s,$row]}")"
		done
	fi
	echo
done
echo
printf '%-34s' "CPU s/GB: server (+lacunafs)"
for s in "${SERVERS[@]}"; do printf ' %13s' "$s"; done
printf '   client:'
for s in "${SERVERS[@]}"; do printf ' %13s' "$s"; done
echo
for row in "${ROWS[@]}"; do
	[ "$row" = write_commit ] && continue
	printf '%-34s' "$(row_name "$row")"
	for s in "${SERVERS[@]}"; do
		printf ' %13.2f' "$(echo "${CPU[$s,$row]}" | nb_median)"
	done
	printf '%10s' ""
	for s in "${SERVERS[@]}"; do
		printf ' %13.2f' "$(echo "${CCPU[$s,$row]}" | nb_median)"
	done
	echo
done
echo

if has_server lacunad; then
	verdict() { awk "BEGIN { exit !($1) }" && echo met || echo MISSED; }
	for s in "${SERVERS[@]}"; do
		[[ $s == ganesha-* ]] || continue
		rr=$(nb_calc "${MED[lacunad,read_cp]} / ${MED[$s,read_cp]}")
		rw=$(nb_calc "${MED[lacunad,write_d1]} / ${MED[$s,write_d1]}")
		printf 'Target lacunad >= 2x %s: read (nfs-cp) %sx %s, write (depth 1) %sx %s\n' \
			"$s" "$rr" "$(verdict "$rr >= 2")" "$rw" "$(verdict "$rw >= 2")"
	done
fi
echo "  runs discarded because someone dropped the page cache meanwhile: $NB_DISCARDED"
echo "  load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"

# ------------------------------------------------------------ profile

perf_phase() { # name command...
	local name=$1
	shift
	perf record -q -g -p "${NB_PID[lacunad]},$NB_LFS_PID" -o "$PERF_DIR/$name.data" \
		>/dev/null 2>&1 &
	NB_BG_PID=$!
	sleep 0.5
	"$@" >"$PERF_DIR/$name.out" 2>&1
	kill -INT "$NB_BG_PID" 2>/dev/null
	wait "$NB_BG_PID" 2>/dev/null
	NB_BG_PID=""
	perf report -q -i "$PERF_DIR/$name.data" --no-children --stdio --sort comm,dso,sym \
		--percent-limit 1 -g none 2>/dev/null | grep -v '^$' | head -30 >"$PERF_DIR/$name.top.txt"
	perf report -q -i "$PERF_DIR/$name.data" --no-children --stdio --sort sym \
		--percent-limit 3 -g caller,0.5,callee,function,percent 2>/dev/null |
		head -300 >"$PERF_DIR/$name.callers.txt"
}

if [ -n "$PERF_DIR" ]; then
	log_step "profiling lacunad and lacunafs into $PERF_DIR"
	rm -f "$NB_SINK/out"
	perf_phase read_cp nfs-cp "$(url lacunad "/$FILE")" "$NB_SINK/out"
	rm -f "$NB_SINK/out"
	perf_phase write_d1 "$NFSRB" --port "${NB_PORT[lacunad]}" --depth 1 --passes 1 \
		--write "$SIZE_B" --remove /w-perf.dat
	echo
	echo "Profiles in $PERF_DIR (perf record -g of lacunad and lacunafs; top symbols >= 1%)"
	for name in read_cp write_d1; do
		echo "  -- $name:"
		sed 's/^/    /' "$PERF_DIR/$name.top.txt" | head -20
	done
fi
exit 0
