#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# One command for a fresh Debian 12 machine, as root:
#   scripts/quickstart.sh demo   install what is missing, build, run the demo
#   scripts/quickstart.sh test   install what is missing, build, run the test suite
# The build goes to ./build (out of tree). Each step before the demo or
# the tests prints one line; what apt, autoreconf, configure and make
# print goes to build/quickstart.log, named at the start, whose last lines
# are shown when a step fails (then it exits with the step's status).
set -euo pipefail

usage() {
	echo "usage: $0 demo|test" >&2
	exit 2
}
[ $# -eq 1 ] || usage
case $1 in demo | test) ;; *) usage ;; esac

src=$(cd "$(dirname "$0")/.." && pwd)
cd "$src"
mkdir -p build
LOG=$src/build/quickstart.log
: >"$LOG"
echo "quickstart: the output of the steps below goes to $LOG"

# step WHAT CMD...: run CMD, its output into the log, and say on one line
# how it went; on failure show the log's last lines and exit with CMD's status.
step() {
	local what=$1 rc=0
	shift
	printf '%s ... ' "$what"
	echo "==== $what: $*" >>"$LOG"
	"$@" >>"$LOG" 2>&1 </dev/null || rc=$?
	if [ $rc -eq 0 ]; then
		echo ok
		return
	fi
	echo "failed (exit status $rc)"
	{
		echo "---- the last lines of $LOG:"
		tail -n 40 "$LOG"
		echo "----"
		echo "quickstart: $what failed; all its output is in $LOG"
	} >&2
	exit $rc
}

# configure_build: autoreconf where configure is missing or stale, then
# configure build/ where it is not configured or configure is newer.
# Run under step's ||, where set -e does not act: each command checks.
configure_build() {
	if [ ! -x configure ] || [ configure.ac -nt configure ] || [ Makefile.am -nt Makefile.in ]; then
		echo "== autoreconf -fi"
		autoreconf -fi || return
	fi
	if [ ! -f build/Makefile ] || [ configure -nt build/config.status ]; then
		echo "== ../configure --enable-werror (in build/)"
		(cd build && ../configure --enable-werror) || return
	fi
}

step "installing packages" bash scripts/install-deps.sh
step "configuring" configure_build
step "building" make -C build -j"$(nproc)"
# the test programs too, here rather than in the test run (no test runs)
if [ "$1" = test ]; then
	step "building the tests" make -C build -j"$(nproc)" check TESTS=
fi
cd build

case $1 in
demo)
	echo "running the demo ..."
	top_builddir=$PWD top_srcdir=$src exec bash "$src/scripts/demo.sh"
	;;
test)
	echo "running the test suite (make check) ..."
	rc=0
	make -s -j2 check || rc=$?
	if [ $rc -ne 0 ] && [ -f test-suite.log ]; then
		echo "==== logs of the tests that did not pass ===="
		cat test-suite.log
	fi
	if [ -f test-suite.log ]; then
		n() { sed -n "s/^# $1: *//p" test-suite.log | head -1; }
		echo "==== summary: $(n TOTAL) tests ===="
		echo "$(n PASS) passed, $(($(n FAIL) + $(n ERROR) + $(n XPASS))) failed, $(n SKIP) skipped"
	fi
	exit $rc
	;;
esac
