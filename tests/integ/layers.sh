#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The include lines follow the layers (gateway/README.md): no include in
# lacunad points up the order xprt -> rpc -> nfs4 -> state -> export ->
# config -> common, and tools/ and lib/ include nothing of a daemon's
# folder. Then the checker itself is checked: a copy of the tree with one
# upward include, and one with tools/ reaching into gateway/, must fail
# and name the offending line. Every layer folder says what it owns.
. "$top_srcdir/tests/lib.sh"
lt_init

check="$top_srcdir/scripts/check-layers.py"
out="$LT_TMP/out"
command -v python3 >/dev/null || lt_skip "python3 is not installed"

if python3 "$check" "$top_srcdir" >"$out" 2>&1; then
	lt_ok "the tree follows the layers: $(tail -1 "$out")"
else
	lt_fail "includes against the layers:"
	cat "$out" >&2
fi

# copy_tree DIR: the checked folders of the source tree into DIR
copy_tree() {
	mkdir -p "$1"
	(cd "$top_srcdir" && tar cf - common include fusefs gateway lib tools) | tar xf - -C "$1"
}

# must_refuse DESC FILE LINE PATTERN: a copy with LINE added to FILE fails, naming FILE
must_refuse() {
	local desc=$1 file=$2 line=$3 pat=$4 tree="$LT_TMP/tree.$RANDOM" rc=0 n
	copy_tree "$tree"
	printf '%s\n' "$line" >>"$tree/$file"
	n=$(wc -l <"$tree/$file")
	python3 "$check" "$tree" >"$out" 2>&1 || rc=$?
	if [ $rc -ne 0 ] && grep -q "^$file:$n: .*$pat" "$out"; then
		lt_ok "$desc is refused: $(grep "^$file:$n: " "$out")"
	else
		lt_fail "$desc was not refused (exit $rc): $(tail -3 "$out")"
	fi
	rm -rf "$tree"
}

must_refuse "config/ including nfs4/" gateway/config/gw_config.c '#include "nfs4_compound.h"' "above"
must_refuse "state/ including xprt/" gateway/state/nfs4_state.h '#include "gw_xprt.h"' "above"
must_refuse "tools/ including gateway/" tools/lacuna_nfs.c '#include "gw_config.h"' "may not include"
must_refuse "lib/ including fusefs/" lib/liblacuna.c '#include "lfs.h"' "may not include"

for d in xprt rpc nfs4 state export config; do
	if [ -s "$top_srcdir/gateway/$d/README.md" ]; then
		lt_ok "gateway/$d/ says what it owns"
	else
		lt_fail "gateway/$d/README.md is missing"
	fi
done
lt_done
