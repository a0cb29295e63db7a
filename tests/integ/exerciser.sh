#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Randomized file operations through lacunafs on ext4 and XFS: lt_exerciser
# mirrors pwrite, truncate, punch/zero/allocate, copy_file_range, syncs and
# reopens in a model and checks every result (see tests/tools/lt_exerciser.c).
# Each filesystem gets one run on the backing directory itself as a baseline
# and runs through the mount with fixed seeds; afterwards the file must be
# the same byte for byte and in size through the mount and on the backing
# filesystem, and, the runs being deterministic, equal to the baseline.
#
# LT_EXER_SEEDS and LT_EXER_OPS override the seeds and the operation count.
. "$top_srcdir/tests/lib.sh"
lt_init
lt_require_fuse

EXER="$TOOLS/lt_exerciser"
[ -x "$EXER" ] || lt_hard "lt_exerciser not built at $EXER"
SEEDS=${LT_EXER_SEEDS:-"1 424242"}
OPS=${LT_EXER_OPS:-3000}
BASE_SEED=${SEEDS%% *}

# run_exer DESCRIPTION SEED FILE: one check; shows the exerciser's summary,
# or everything it said on failure. Returns the exerciser's success.
run_exer() {
	local desc=$1 seed=$2 file=$3 log="$LT_TMP/exer.log" rc=0
	"$EXER" --seed "$seed" --ops "$OPS" "$file" >"$log" 2>&1 || rc=$?
	if [ "$rc" = 0 ]; then
		tail -n 1 "$log" | sed 's/^/# /'
		lt_ok "$desc"
	else
		sed 's/^/# /' "$log"
		lt_fail "$desc (exit status $rc)"
	fi
	[ "$rc" = 0 ]
}

size_of() { stat -c %s "$1" 2>/dev/null || echo missing; }

exer_fs() {
	local type=$1 backing=$2 mnt=$3 seed f same=1
	run_exer "$type: baseline on the backing fs, seed $BASE_SEED" \
		"$BASE_SEED" "$backing/native" || same=0
	for seed in $SEEDS; do
		f="ex-$seed"
		if ! run_exer "$type: through lacunafs, seed $seed, $OPS ops" "$seed" "$mnt/$f"; then
			[ "$seed" != "$BASE_SEED" ] || same=0
		fi
		lt_check_eq "$type: seed $seed: size via mount equals backing" \
			"$(size_of "$backing/$f")" "$(size_of "$mnt/$f")"
		lt_check "$type: seed $seed: contents via mount equal backing" \
			cmp "$mnt/$f" "$backing/$f"
		lt_check "$type: seed $seed: copy source via mount equals backing" \
			cmp "$mnt/$f.src" "$backing/$f.src"
	done
	# only meaningful when both runs went the whole way
	if [ "$same" = 1 ]; then
		lt_check "$type: seed $BASE_SEED: result through lacunafs equals the baseline" \
			cmp "$backing/ex-$BASE_SEED" "$backing/native"
	fi
}
lt_each_fs exer_fs

lt_done
