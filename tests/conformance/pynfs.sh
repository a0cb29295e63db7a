#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# lacunad under pynfs, an independent NFSv4 test suite (not in Debian,
# so not part of make check):
#
#   tests/conformance/pynfs.sh [PYNFS]
#
# PYNFS (the argument or the environment variable) is a pynfs checkout,
# built in place beforehand (./setup.py build, which needs python3-ply);
# nothing is fetched or built here. Without one the script skips (77).
# It makes an ext4 loop image, mounts lacunafs over it and serves it with
# lacunad's default settings on a free loopback port, then runs
#
#   4.0        nfs4.0/testserver.py --maketree all        (a fresh server)
#   4.1        nfs4.1/testserver.py --maketree --minorversion 2 all
#                                                         (a fresh server)
#   4.0+4.1    the two, back to back on one server
#
# and prints, per run, the counts of passed, failed and skipped tests and
# the codes of the failing ones. Exit status 0 when every run completed
# (whatever its failures: pynfs is a report, not a pass/fail gate), 1
# when pynfs itself could not run, 77 without pynfs, 99 on a set-up error.
#
# The export is "rw,no_root_squash" as the integration tests serve it
# (pynfs works as root and makes its tree in the export's root), and
# otherwise lacunad's defaults. pynfs's 4.0 client binds a reserved
# source port with --secure, which is passed: the 4.0 run's export stays
# "secure" (exports(5), the default). Its 4.1 client binds one for its
# first connection only (the trunking and connection tests open others
# from high ports), so the runs with 4.1 add "insecure". Set
# PYNFS_EXPORT_OPTIONS to serve every run with other options instead,
# PYNFS_LACUNAD_ARGS to more
# lacunad options (e.g. "--set max_clients=2048 --lease-time 15": the
# suites wait out the lease several times, 90 s by default), PYNFS_PYTHON
# to the interpreter pynfs runs under (default python3), PYNFS_KEEP to a
# directory that keeps pynfs's full output of each run, PYNFS_RUNS to a
# subset of "4.0 4.1 both" (the default: all three).

: "${top_srcdir:=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}"
if [ -z "${top_builddir:-}" ]; then
	top_builddir=$top_srcdir
	[ -x "$top_srcdir/gateway/lacunad" ] || [ ! -x "$top_srcdir/build/gateway/lacunad" ] ||
		top_builddir=$top_srcdir/build
fi
PYNFS=${1:-${PYNFS:-}}
if [ -z "$PYNFS" ]; then
	echo "SKIP: no pynfs checkout: give its path as PYNFS=/path or the first argument"
	exit 77
fi
for v in 0 1; do
	if [ ! -f "$PYNFS/nfs4.$v/testserver.py" ]; then
		echo "SKIP: $PYNFS is not a pynfs checkout (no nfs4.$v/testserver.py)"
		exit 77
	fi
	if [ ! -f "$PYNFS/nfs4.$v/xdrdef/nfs4_type.py" ]; then
		echo "SKIP: $PYNFS is not built: run ./setup.py build there (needs python3-ply)"
		exit 77
	fi
done

. "$top_srcdir/tests/lib.sh"
lt_init
. "$top_srcdir/tests/lib_nfs.sh"
[ "$LT_NFS_SERVER" = lacunad ] || lt_skip "runs lacunad only"
nfs_require_server
lt_require_fuse
PY=${PYNFS_PYTHON:-python3}
lt_require_cmd "$PY"
# a run of the whole 4.0 suite takes minutes; a hung one is stopped here
: "${PYNFS_TIMEOUT:=3600}"
: "${PYNFS_RUNS:=4.0 4.1 both}"

nfs_make_export ext4 pynfs 2G
EXP=$NFS_EXPORT

# pynfs_serve OPTIONS: a fresh lacunad serving the export with OPTIONS
pynfs_serve() {
	# shellcheck disable=SC2086 # options split at spaces
	nfs_start "$EXP" --export-options "${PYNFS_EXPORT_OPTIONS:-$1}" ${PYNFS_LACUNAD_ARGS:-}
}

RUNS_FAILED=0

# pynfs_run LABEL MINOR: one suite against the running server; prints
# its counts and failing codes.
pynfs_run() {
	local label=$1 minor=$2 out dir args rc=0
	out="$LT_TMP/pynfs-$label.out"
	if [ "$minor" = 0 ]; then
		dir=nfs4.0
		args=(--maketree --secure all)
	else
		dir=nfs4.1
		args=(--maketree --minorversion "$minor" all)
	fi
	# pynfs finds its modules relative to its own directory
	(cd "$PYNFS/$dir" &&
		lt_timeout "$PYNFS_TIMEOUT" "$PY" testserver.py "127.0.0.1:$NFS_PORT/" \
			"${args[@]}") >"$out" 2>&1 || rc=$?
	[ -z "${PYNFS_KEEP:-}" ] || { mkdir -p "$PYNFS_KEEP" && cp "$out" "$PYNFS_KEEP/pynfs-$label.out"; }
	pynfs_report "$label" "$out" "$rc"
}

# pynfs_report LABEL OUT RC: the counts of pynfs's summary ("Of those: 19
# Skipped, 161 Failed, 0 Warned, 411 Passed") and the failing codes (the
# lines "CODE    st_file.testName   : FAILURE").
pynfs_report() {
	local label=$1 out=$2 rc=$3 sum p f s w codes
	sum=$(grep -E '^Of those: ' "$out" | tail -n 1)
	if [ -z "$sum" ]; then
		echo "$label: pynfs did not complete (status $rc); its last lines:"
		tail -n 20 "$out" | sed 's/^/#   /'
		RUNS_FAILED=$((RUNS_FAILED + 1))
		return
	fi
	p=$(sed -E 's/.* ([0-9]+) Passed.*/\1/' <<<"$sum")
	f=$(sed -E 's/.* ([0-9]+) Failed.*/\1/' <<<"$sum")
	s=$(sed -E 's/.* ([0-9]+) Skipped.*/\1/' <<<"$sum")
	w=$(sed -E 's/.* ([0-9]+) Warned.*/\1/' <<<"$sum")
	codes=$(awk '$NF == "FAILURE" { print $1 }' "$out" | sort -u | tr '\n' ' ')
	printf '%s: %s passed, %s failed, %s skipped, %s warned\n' "$label" "$p" "$f" "$s" "$w"
	[ -z "$codes" ] || printf '%s: failing: %s\n' "$label" "$codes"
}

want() { [[ " $PYNFS_RUNS " == *" $1 "* ]]; }

# each suite on a fresh server
if want 4.0; then
	pynfs_serve no_root_squash
	pynfs_run 4.0 0
	lt_check "the server lives after the 4.0 suite" nfs_alive
	nfs_stop
fi
if want 4.1; then
	pynfs_serve no_root_squash,insecure
	pynfs_run 4.1 2
	lt_check "the server lives after the 4.1 suite" nfs_alive
	nfs_stop
fi
# both on one server
if want both; then
	pynfs_serve no_root_squash,insecure
	pynfs_run 4.0-then-4.1:4.0 0
	pynfs_run 4.0-then-4.1:4.1 2
	lt_check "the server lives after both suites" nfs_alive
	nfs_stop
fi
[ "$RUNS_FAILED" = 0 ] || lt_fail "$RUNS_FAILED pynfs run(s) did not complete"
lt_done
