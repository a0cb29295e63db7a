#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# One command for a fresh Debian 12 machine, as root:
#   scripts/quickstart.sh demo   install what is missing, build, run the demo
#   scripts/quickstart.sh test   install what is missing, build, run the test suite
# The build goes to ./build (out of tree).
set -euo pipefail

usage() {
	echo "usage: $0 demo|test" >&2
	exit 2
}
[ $# -eq 1 ] || usage
case $1 in demo | test) ;; *) usage ;; esac

src=$(cd "$(dirname "$0")/.." && pwd)
cd "$src"
bash scripts/install-deps.sh

if [ ! -x configure ] || [ configure.ac -nt configure ] || [ Makefile.am -nt Makefile.in ]; then
	autoreconf -fi
fi
mkdir -p build
cd build
if [ ! -f Makefile ] || [ ../configure -nt config.status ]; then
	../configure --enable-werror
fi
make -j"$(nproc)"

case $1 in
demo)
	top_builddir=$PWD top_srcdir=$src exec bash "$src/scripts/demo.sh"
	;;
test)
	rc=0
	make -j2 check || rc=$?
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
