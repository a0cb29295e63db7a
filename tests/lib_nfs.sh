# SPDX-License-Identifier: GPL-2.0-or-later
#
# Helpers for the tests that drive lacunad with real NFS clients. Sourced
# after tests/lib.sh (and after lt_init):
#
#   nfs_require_server         skip/fail unless the server can be run here
#   nfs_require_libnfs         skip unless nfs-ls, nfs-cat, nfs-cp, python3
#   nfs_free_port              print a free loopback TCP port, reserved
#   nfs_make_export KIND NAME [SIZE]
#                              a directory to serve: KIND ext4 or xfs makes
#                              that filesystem (lt_make_fs, of SIZE, default
#                              1G) and mounts
#                              lacunafs over it, plain makes a directory;
#                              sets NFS_EXPORT (to serve) and NFS_BACKING
#                              (where the files really are)
#   nfs_start DIR [ARGS...]    serve DIR on 127.0.0.1:$NFS_PORT, wait until
#                              it listens; sets NFS_PID, NFS_PORT, NFS_LOG
#   nfs_start --config FILE [ARGS...]
#                              the same with lacunad's configuration FILE
#                              (several exports, stats_file), its listen
#                              address overridden (lacunad only); with
#                              NFS_NOFILE=N lacunad runs with RLIMIT_NOFILE N
#   nfs_stop                   SIGTERM, wait, check exit status 0 and that
#                              the log holds no sanitizer report
#   nfs_crash                  SIGKILL the server (no clean-up: a crash)
#   nfs_alive                  is the server still running?
#   nfs_run CMD...             run a client command with a time limit;
#                              once one hits it, the server is taken for
#                              hung: later ones fail at once (status 124)
#                              and nfs_stop fails the test
#   nfs_url PATH               libnfs URL of PATH (relative to the export)
#   nfs_put LOCAL PATH         upload with libnfs in WRITEs of <= 3 KiB
#   nfs_metric_at_least PORT NAME N
#                              lacunad's /metrics on PORT counts N or more
#
# The server is lacunad in one-export mode: DIR is the root clients see
# (server:/), so libnfs reaches DIR/a/b as nfs://127.0.0.1//a/b (the
# double slash: libnfs splits a URL into export path and file at the last
# slash, and "" is no export path). DIR is exported rw with
# no_root_squash: the tests run as root and check files as root
# (NFS_LISTEN_ADDR=ADDR: listen there instead of 127.0.0.1). The
# export is secure (lacunad's default, as exports(5)'s): the tests' clients
# connect from reserved ports, as root (tests/tools/resvport.py, libnfs);
# NFS_EXPORT_OPTS=OPTS adds options (insecure, for a test that opens more
# connections than there are reserved ports).
# ARGS are added to lacunad's command line (--threads 2, --lease-time 10).
# Unless ARGS give a --state-dir, each server gets a new state directory
# holding the file handle key of the test's first server, so that
# handles outlive restarts as they do for a server keeping its state
# directory, while no client records are carried over.
#
# With LT_NFS_SERVER=ganesha the same tests run against NFS-Ganesha (VFS
# backend, DIR as the pseudo root "/"), to tell a test's mistakes from a
# server's. Ganesha caches directory entries: make files before
# nfs_start.
#
# Each server is started with setsid and stopped by its PID; a cleanup
# registered with lt_push_cleanup stops it if the test ends early. Its
# log is $LT_TMP/lacunad.N.log, which lt_cleanup scans for sanitizer
# reports as well.

LACUNAD="$top_builddir/gateway/lacunad"
LT_LIBNFS="$top_srcdir/tests/py/lt_libnfs.py"
: "${LT_NFS_SERVER:=lacunad}"
# Ports tried by nfs_free_port (inclusive range).
: "${LT_NFS_PORTS:=25049-25099}"
# Seconds a client command may take before it counts as hung.
: "${LT_NFS_TIMEOUT:=120}"

NFS_PID=""
NFS_PORT=""
NFS_LOG=""
NFS_EXPORT=""
NFS_BACKING=""
NFS_N=0
declare -A NFS_RUNNING # PIDs of servers started and not yet stopped

nfs_require_server() {
	lt_require_cmd ss timeout
	case $LT_NFS_SERVER in
	lacunad) [ -x "$LACUNAD" ] || lt_hard "lacunad not built at $LACUNAD" ;;
	ganesha)
		command -v ganesha.nfsd >/dev/null ||
			lt_skip "ganesha.nfsd not installed (nfs-ganesha, nfs-ganesha-vfs)"
		;;
	*) lt_hard "LT_NFS_SERVER must be lacunad or ganesha, not $LT_NFS_SERVER" ;;
	esac
}

nfs_require_libnfs() {
	local c
	for c in nfs-ls nfs-cat nfs-cp; do
		command -v "$c" >/dev/null || lt_skip "$c not installed (package libnfs-utils)"
	done
	lt_require_cmd python3 sha256sum
}

# A port is free when no socket of any state uses it locally (a listener,
# a connection, TIME_WAIT). A reservation directory keeps two tests
# running at once from picking the same one before either listens.
_nfs_port_free() {
	[ -z "$(ss -Htan "sport = :$1" 2>/dev/null)" ]
}

_nfs_reserve() {
	local p=$1 d owner
	d="${TMPDIR:-/tmp}/lacuna-nfs-port.$p"
	if ! mkdir "$d" 2>/dev/null; then
		owner=$(cat "$d/pid" 2>/dev/null)
		# a reservation whose test is gone is taken over
		if [ -n "$owner" ] && kill -0 "$owner" 2>/dev/null; then
			return 1
		fi
		rm -rf "$d"
		mkdir "$d" 2>/dev/null || return 1
	fi
	echo $$ >"$d/pid"
}

# nfs_free_port runs in a command substitution: its reservations are
# found again by the owner's PID ($$ is the test's in a subshell too).
_nfs_unreserve() {
	local d
	for d in "${TMPDIR:-/tmp}"/lacuna-nfs-port.*; do
		[ "$(cat "$d/pid" 2>/dev/null)" = $$ ] && rm -rf "$d"
	done
	return 0
}
lt_push_cleanup _nfs_unreserve

nfs_free_port() {
	local lo=${LT_NFS_PORTS%-*} hi=${LT_NFS_PORTS#*-} n i p start=$RANDOM
	n=$((hi - lo + 1))
	for ((i = 0; i < n; i++)); do
		p=$((lo + (start + i) % n))
		_nfs_port_free "$p" || continue
		_nfs_reserve "$p" || continue
		echo "$p"
		return 0
	done
	return 1
}

nfs_make_export() {
	local kind=$1 name=$2 size=${3:-}
	case $kind in
	ext4 | xfs)
		[ "$LT_NFS_SERVER" = ganesha ] || lt_require_fuse
		lt_make_fs "$kind" "$name" "$size"
		NFS_BACKING=$LT_FS
		if [ "$LT_NFS_SERVER" = ganesha ]; then
			# Ganesha's VFS backend cannot export a FUSE mount
			NFS_EXPORT=$NFS_BACKING
		else
			NFS_EXPORT="$LT_TMP/mnt-$name"
			lt_mount_lacunafs "$NFS_BACKING" "$NFS_EXPORT"
		fi
		;;
	plain)
		NFS_BACKING="$LT_TMP/$name"
		NFS_EXPORT=$NFS_BACKING
		mkdir -p "$NFS_BACKING" || lt_hard "mkdir $NFS_BACKING"
		chmod 755 "$NFS_BACKING"
		;;
	*) lt_hard "nfs_make_export: unknown kind $kind" ;;
	esac
}

# (a flag file, not a variable: clients often run in command substitutions)
nfs_run() {
	local rc
	[ -e "$LT_TMP/nfs-hung" ] && return 124
	lt_timeout "$LT_NFS_TIMEOUT" "$@"
	rc=$?
	[ $rc = 124 ] && echo "$*" >"$LT_TMP/nfs-hung"
	return $rc
}

nfs_url() {
	local path=${1#/}
	echo "nfs://127.0.0.1//$path?version=4&nfsport=$NFS_PORT"
}

# _nfs_listening PID PORT: PID holds a listening socket on PORT.
_nfs_listening() {
	ss -Hltnp "sport = :$2" 2>/dev/null | grep -q "pid=$1,"
}

# _nfs_started: the server has said all it says at start. lacunad listens
# on TCP before it starts RPC-over-RDMA; its "serving" line comes after.
_nfs_started() {
	[ "$LT_NFS_SERVER" != lacunad ] || grep -q "lacunad .* serving NFSv4" "$NFS_LOG"
}

_nfs_ganesha_conf() {
	local dir=$1 conf=$2 port=$3
	mkdir -p "$LT_TMP/ganesha-recovery.$NFS_N"
	cat >"$conf" <<EOF
NFS_CORE_PARAM { Protocols = 4; NFS_Port = $port; Bind_addr = 127.0.0.1;
	Enable_NLM = false; Enable_RQUOTA = false; }
NFSv4 { Graceless = true; Minor_Versions = 0, 1, 2; RecoveryBackend = fs;
	RecoveryRoot = "$LT_TMP/ganesha-recovery.$NFS_N"; }
NFS_KRB5 { Active_krb5 = false; }
EXPORT { Export_Id = 1; Path = "$dir"; Pseudo = /; Access_Type = RW;
	Squash = No_Root_Squash; SecType = sys; Protocols = 4; Transports = TCP;
	FSAL { Name = VFS; } }
EOF
}

# nfs_start DIR [ARGS...] | nfs_start --config FILE [ARGS...]
nfs_start() {
	local dir=$1 try i port conf srv state
	shift
	[ -z "$NFS_PID" ] || lt_hard "nfs_start: a server is already running (PID $NFS_PID)"
	srv=(--export "$dir" --export-options "no_root_squash${NFS_EXPORT_OPTS:+,$NFS_EXPORT_OPTS}")
	if [ "$dir" = --config ]; then
		[ "$LT_NFS_SERVER" = lacunad ] || lt_hard "nfs_start --config: lacunad only"
		srv=(--config "$1")
		dir="the exports of $1"
		shift
	fi
	for ((try = 0; try < 5; try++)); do
		port=$(nfs_free_port) || lt_hard "no free TCP port in $LT_NFS_PORTS"
		NFS_N=$((NFS_N + 1))
		NFS_LOG="$LT_TMP/lacunad.$NFS_N.log"
		case $LT_NFS_SERVER in
		lacunad)
			# a state directory of its own, unless the test gives one,
			# with the file handle key of the test's first server: the
			# same server as far as handles go, without the client
			# records of the last one
			state=(--state-dir "$LT_TMP/lacunad-state.$NFS_N")
			if [[ " $* " == *" --state-dir "* ]]; then
				state=()
			elif [ -e "$LT_TMP/lacunad-fh-key" ]; then
				mkdir -m 700 "$LT_TMP/lacunad-state.$NFS_N" &&
					cp -p "$LT_TMP/lacunad-fh-key" "$LT_TMP/lacunad-state.$NFS_N/fh-key" ||
					lt_hard "copy the file handle key"
			fi
			# NFS_NOFILE: lacunad's RLIMIT_NOFILE (soft and hard) from its
			# start: io_uring's armed accept keeps the limit it saw then
			setsid ${NFS_NOFILE:+prlimit --nofile="$NFS_NOFILE:$NFS_NOFILE"} \
				"$LACUNAD" "${srv[@]}" "${state[@]}" \
				--listen "${NFS_LISTEN_ADDR:-127.0.0.1}:$port" -f "$@" </dev/null >"$NFS_LOG" 2>&1 &
			;;
		ganesha)
			conf="$LT_TMP/ganesha.$NFS_N.conf"
			_nfs_ganesha_conf "$dir" "$conf" "$port"
			setsid ganesha.nfsd -F -f "$conf" -L "$NFS_LOG" \
				-p "$LT_TMP/ganesha.$NFS_N.pid" </dev/null >/dev/null 2>&1 &
			;;
		esac
		NFS_PID=$!
		NFS_RUNNING[$NFS_PID]=1
		NFS_PORT=$port
		lt_push_cleanup "_nfs_kill $NFS_PID"
		for ((i = 0; i < 300; i++)); do
			if _nfs_listening "$NFS_PID" "$port" && _nfs_started; then
				[ -n "${state[*]:-}" ] && [ ! -e "$LT_TMP/lacunad-fh-key" ] &&
					cp -p "$LT_TMP/lacunad-state.$NFS_N/fh-key" "$LT_TMP/lacunad-fh-key"
				lt_log "$LT_NFS_SERVER (PID $NFS_PID) serves $dir on ${NFS_LISTEN_ADDR:-127.0.0.1}:$port"
				return 0
			fi
			kill -0 "$NFS_PID" 2>/dev/null || break
			sleep 0.05
		done
		if kill -0 "$NFS_PID" 2>/dev/null; then
			sed 's/^/# server: /' "$NFS_LOG"
			lt_hard "$LT_NFS_SERVER does not listen on ${NFS_LISTEN_ADDR:-127.0.0.1}:$port after 15 s"
		fi
		wait "$NFS_PID" 2>/dev/null
		unset "NFS_RUNNING[$NFS_PID]"
		NFS_PID=""
		# lost a race for the port: try another one
		grep -qi "address already in use" "$NFS_LOG" && continue
		sed 's/^/# server: /' "$NFS_LOG"
		lt_hard "$LT_NFS_SERVER exited at start (serving $dir on port $port)"
	done
	lt_hard "$LT_NFS_SERVER found no free port in 5 tries"
}

# The cleanup of a server still running when the test ends (a PID
# already stopped and waited for may belong to someone else by now).
_nfs_kill() {
	local pid=$1 i
	[ -n "${NFS_RUNNING[$pid]:-}" ] || return 0
	kill -0 "$pid" 2>/dev/null || return 0
	kill -TERM "$pid" 2>/dev/null
	for ((i = 0; i < 100; i++)); do
		kill -0 "$pid" 2>/dev/null || return 0
		sleep 0.1
	done
	kill -KILL "$pid" 2>/dev/null
}

# nfs_crash: kill the server with SIGKILL (a crash: nothing is cleaned up)
nfs_crash() {
	local pid=$NFS_PID
	[ -n "$pid" ] || return 0
	NFS_PID=""
	unset "NFS_RUNNING[$pid]"
	kill -KILL "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	return 0
}

nfs_alive() {
	[ -n "$NFS_PID" ] && kill -0 "$NFS_PID" 2>/dev/null
}

# nfs_run_checks LABEL TIMEOUT COMMAND...: lt_run_checks, then the server
# must still be running (a hard error if not: nothing after can pass).
nfs_run_checks() {
	lt_run_checks "$@"
	if ! nfs_alive; then
		lt_fail "$1: the server died"
		sed 's/^/# server: /' "$NFS_LOG" | tail -n 30
		lt_hard "no server"
	fi
}

# nfs_stop: stop the server with SIGTERM; check that it exits in time with
# status 0 (lacunad only: Ganesha's status is not ours to check) and that
# its log has no sanitizer report.
nfs_stop() {
	local pid=$NFS_PID i rc
	[ -n "$pid" ] || return 0
	NFS_PID=""
	unset "NFS_RUNNING[$pid]"
	if [ -e "$LT_TMP/nfs-hung" ]; then
		lt_fail "a client timed out after ${LT_NFS_TIMEOUT} s (later ones were not run): $(cat "$LT_TMP/nfs-hung")"
		rm -f "$LT_TMP/nfs-hung"
	fi
	if ! kill -0 "$pid" 2>/dev/null; then
		wait "$pid" 2>/dev/null
		rc=$?
		lt_fail "$LT_NFS_SERVER was no longer running at stop (exit status $rc)"
		sed 's/^/# server: /' "$NFS_LOG" | tail -n 30
		return
	fi
	kill -TERM "$pid"
	for ((i = 0; i < 150; i++)); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$pid" 2>/dev/null; then
		lt_fail "$LT_NFS_SERVER still running 15 s after SIGTERM (killed)"
		kill -KILL "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
		return
	fi
	wait "$pid" 2>/dev/null
	rc=$?
	if [ "$LT_NFS_SERVER" = lacunad ]; then
		if [ "$rc" = 0 ]; then
			lt_ok "lacunad exits 0 on SIGTERM"
		else
			lt_fail "lacunad exit status on SIGTERM: $rc"
			sed 's/^/# server: /' "$NFS_LOG" | tail -n 30
		fi
	fi
	if grep -qE "ERROR: (Address|Leak|Thread)Sanitizer|runtime error:" "$NFS_LOG"; then
		lt_fail "sanitizer report in the $LT_NFS_SERVER log"
		grep -E -A30 "ERROR: (Address|Leak|Thread)Sanitizer|runtime error:" "$NFS_LOG" |
			sed 's/^/# server: /'
	fi
}

# nfs_put LOCAL PATH: upload LOCAL to PATH with the system's libnfs, in
# WRITEs small enough for libnfs 4.0 (see tests/py/lt_libnfs.py).
nfs_put() {
	nfs_run python3 "$LT_LIBNFS" put "$1" "$(nfs_url "$2")"
}

# nfs_sha256 FILE: the SHA-256 of FILE, alone.
nfs_sha256() {
	local s
	s=$(sha256sum <"$1") || return 1
	echo "${s%% *}"
}

# ---- packet capture (tshark) ----------------------------------------------
#   nfs_capture_start FILE   capture the server's port on lo into FILE;
#                            returns 1 with the reason in NFS_CAP_WHY when
#                            it cannot (no dumpcap/tshark, no capture on lo)
#   nfs_capture_stop         stop it (SIGTERM by PID), keep the file
#   nfs_ts FILE ARGS...      tshark on FILE as the checks read it
#   nfs_cap_check WHO FILE   checks: no malformed packet, no expert error,
#                            a reply for every call, every reply accepted
NFS_CAP_PID=""
NFS_CAP_WHY=""

nfs_capture_start() {
	local cap=$1 out=$1.dumpcap i size0
	NFS_CAP_WHY=""
	if ! command -v dumpcap >/dev/null || ! command -v tshark >/dev/null; then
		NFS_CAP_WHY="tshark/dumpcap not installed (package tshark)"
		return 1
	fi
	setsid dumpcap -i lo -B 256 -f "tcp port $NFS_PORT" -w "$cap" -q </dev/null >"$out" 2>&1 &
	NFS_CAP_PID=$!
	lt_push_cleanup nfs_capture_stop
	for ((i = 0; i < 200; i++)); do
		grep -q "Capturing on" "$out" && break
		kill -0 "$NFS_CAP_PID" 2>/dev/null || break
		sleep 0.05
	done
	if ! grep -q "Capturing on" "$out"; then
		NFS_CAP_WHY="dumpcap cannot capture on lo: $(head -c 300 "$out")"
		nfs_capture_stop
		return 1
	fi
	# "Capturing on" comes before packets are really caught: connect to
	# the server until the file grows past its headers.
	for ((i = 0; i < 100; i++)); do
		sleep 0.1
		size0=$(stat -c %s "$cap" 2>/dev/null || echo 0)
		(exec 3<>"/dev/tcp/127.0.0.1/$NFS_PORT") 2>/dev/null
		sleep 0.1
		if [ "$size0" -gt 0 ] && [ "$(stat -c %s "$cap" 2>/dev/null || echo 0)" -gt "$size0" ]; then
			return 0
		fi
	done
	NFS_CAP_WHY="dumpcap on lo did not capture a probe connection in 20 s"
	nfs_capture_stop
	return 1
}

nfs_capture_stop() {
	local i
	[ -n "$NFS_CAP_PID" ] || return 0
	kill -TERM "$NFS_CAP_PID" 2>/dev/null
	for ((i = 0; i < 100; i++)); do
		kill -0 "$NFS_CAP_PID" 2>/dev/null || break
		sleep 0.1
	done
	wait "$NFS_CAP_PID" 2>/dev/null
	NFS_CAP_PID=""
}

# Two passes (a call learns its reply's frame); a loopback capture can
# hold a stream's segments out of order (several CPUs), which tshark only
# reassembles when asked to.
nfs_ts() {
	local cap=$1
	shift
	tshark -r "$cap" -2 -o tcp.reassemble_out_of_order:TRUE \
		-d "tcp.port==$NFS_PORT,rpc" "$@" 2>>"$LT_TMP/tshark.err"
}

nfs_cap_check() {
	local who=$1 cap=$2 bad calls replies answered rejected
	bad=$(nfs_ts "$cap" -Y '_ws.malformed || _ws.expert.severity >= error')
	if [ -z "$bad" ]; then
		lt_ok "$who: tshark finds no malformed packet, no expert error"
	else
		lt_fail "$who: tshark finds malformed packets or expert errors:"
		nfs_ts "$cap" -Y '_ws.malformed || _ws.expert.severity >= error' -V |
			grep -E -B2 -A4 "Malformed|Expert Info \(Error" | head -n 60 | sed 's/^/#   /'
	fi
	# (Wireshark flags every stateid in a CLOSE reply, even the invalid
	# special one that RFC 8881 18.2.4 asks for: not listed)
	nfs_ts "$cap" -Y '(rpc || nfs) && _ws.expert.severity >= warning' -T fields \
		-e frame.number -e _ws.expert.message | grep -v "State ID deprecated in CLOSE" |
		sed 's/^/# expert warning: frame /' | head -n 10
	# Per frame: the type of each RPC message in it, the reply frame of
	# each call that has one, each reply's status words.
	nfs_ts "$cap" -Y rpc -T fields -E occurrence=a -E separator=';' \
		-e frame.number -e rpc.msgtyp -e rpc.reqframe -e rpc.replystat \
		-e rpc.state_accept >"$cap.rpc"
	read -r calls replies answered rejected < <(awk -F';' '
		function cnt(f, v,  a, n, i, k) {
			if (f == "") return 0
			n = split(f, a, ","); k = 0
			for (i = 1; i <= n; i++) if (v == "" || a[i] != v) k++
			return k
		}
		{ n = split($2, t, ","); for (i = 1; i <= n; i++) if (t[i] == 0) c++; else r++;
		  u += cnt($3, ""); bad += cnt($4, "0") + cnt($5, "0") }
		END { print c + 0, r + 0, u + 0, bad + 0 }' "$cap.rpc")
	lt_log "$who: RPC calls $calls, replies $replies"
	lt_check "$who: tshark decodes RPC calls" test "$calls" -gt 0
	lt_check_eq "$who: as many replies as calls" "$calls" "$replies"
	lt_check_eq "$who: every call has its reply" "$calls" "$answered"
	if [ "$calls" != "$answered" ] || [ "$calls" != "$replies" ]; then
		nfs_ts "$cap" -Y 'rpc.msgtyp == 0 && !rpc.reqframe' | head -n 10 | sed 's/^/# no reply: /'
	fi
	lt_check_eq "$who: every reply MSG_ACCEPTED with SUCCESS" 0 "$rejected"
	lt_check_eq "$who: no duplicate replies" "" "$(nfs_ts "$cap" -Y rpc.reply.dup -T fields -e frame.number)"
}

# nfs_cap_results FILE: "opcode status frame" for every op result of every
# COMPOUND reply. A frame may hold several replies: tshark then lists the
# fields of all of them in a row, which nfs.ops.count (one per reply)
# splits again: each reply has its COMPOUND status, then one status per op.
nfs_cap_results() {
	nfs_ts "$1" -Y 'nfs && rpc.msgtyp == 1 && rpc.procedure == 1' -T fields \
		-E occurrence=a -E separator=';' \
		-e frame.number -e nfs.ops.count -e nfs.opcode -e nfs.nfsstat4 |
		awk -F';' '{
			k = split($2, cnt, ","); split($3, op, ","); split($4, st, ",")
			o = 1; s = 1
			for (j = 1; j <= k; j++) {
				s++ # the COMPOUND status
				for (i = 1; i <= cnt[j]; i++)
					print op[o++], st[s++], $1
			}
		}'
}

# nfs_cap_opcounts FILE: "xid msgtyp nops" for every COMPOUND call and reply.
nfs_cap_opcounts() {
	nfs_ts "$1" -Y 'nfs && rpc.procedure == 1' -T fields -E occurrence=a -E separator=';' \
		-e rpc.xid -e rpc.msgtyp -e nfs.ops.count |
		awk -F';' '{
			k = split($1, x, ","); split($2, t, ","); n = split($3, c, ",")
			if (k != n) next # a NULL call beside a COMPOUND: not counted
			for (j = 1; j <= k; j++) print x[j], t[j], c[j]
		}'
}

# nfs_plain_conf [SETTING...]: write $LT_TMP/lacunad.conf exporting the
# plain directory $LT_TMP/export (made if missing) read-write to
# 127.0.0.0/8 (root stays root), with the stats file $LT_TMP/stats and
# each SETTING ("key = value") on a line of its own, and NFS_EXPORT_OPTS
# added to the options as nfs_start does; sets NFS_CONF and NFS_PLAIN_DIR.
nfs_plain_conf() {
	local s
	NFS_PLAIN_DIR="$LT_TMP/export"
	NFS_CONF="$LT_TMP/lacunad.conf"
	mkdir -p "$NFS_PLAIN_DIR" || lt_hard "mkdir $NFS_PLAIN_DIR"
	{
		echo "stats_file = $LT_TMP/stats"
		for s in "$@"; do echo "$s"; done
		echo "$NFS_PLAIN_DIR 127.0.0.0/8(rw,no_root_squash,fsid=root${NFS_EXPORT_OPTS:+,$NFS_EXPORT_OPTS})"
	} >"$NFS_CONF" || lt_hard "cannot write $NFS_CONF"
}

# nfs_stat_at_least KEY N: the counter KEY of the stats file
# $LT_TMP/stats (rewritten once a second) reaches N; gives up after 20 s
# with a message that says it timed out.
nfs_stat_at_least() {
	local i v
	for ((i = 0; i < 100; i++)); do
		v=$(awk -v k="$1" '$1 == k { print $2 }' "$LT_TMP/stats" 2>/dev/null)
		[ "${v:-0}" -ge "$2" ] && return 0
		sleep 0.2
	done
	echo "# stats: $1 is ${v:-missing}, not $2 or more after 20 s (timed out)"
	return 1
}

# nfs_metric_at_least PORT NAME N: the unlabelled counter NAME of lacunad's
# /metrics on 127.0.0.1:PORT is N or more.
nfs_metric_at_least() {
	python3 - "http://127.0.0.1:$1/metrics" "$2" "$3" <<'PY'
import re, sys, urllib.request
text = urllib.request.urlopen(sys.argv[1], timeout=60).read().decode()
m = re.search(r"^%s (\d+)$" % re.escape(sys.argv[2]), text, re.M)
print("# /metrics: %s" % (m.group(0) if m else "no " + sys.argv[2]))
sys.exit(0 if m and int(m.group(1)) >= int(sys.argv[3]) else 1)
PY
}
