#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The static tracepoints of docs/tracing.md:
#  - every probe the document's table lists is in the binary it names
#    (readelf -n, section .note.stapsdt), and the binaries have no probe
#    the document leaves out;
#  - where bpftrace can attach (root, a kernel with uprobes and BPF): with
#    bpftrace on lacunad:read__plus, `lacuna nfs-get` of a sparse file,
#    once in the clear and once over RPC-with-TLS, makes the probe report
#    exactly twice the file's hole bytes (as `lacuna map` sees them through
#    the mount), and twice as many data bytes as the file has data;
#    lacunafs:sparse__read fires for the same reads;
#  - in the same bpftrace run, with a TLS certificate given to lacunad
#    (tests/lib_tls.sh): the TLS copy and one `lacuna nfs-get` with the
#    wrong CA (the client aborts the handshake) fire lacunad:tls__probe
#    twice or more, tls__done once, without a client certificate (arg1 0)
#    and with a TLS 1.3 cipher suite (arg2, TLS_AES_...), and tls__fail
#    with a reason (arg2) among those docs/tracing.md lists.
# Skipped when the build has no probes (configure found no <sys/sdt.h>).

. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/lib_nfs.sh"
. "$top_srcdir/tests/lib_tls.sh"
lt_init
[ "$LT_NFS_SERVER" = lacunad ] || lt_skip "lacunad's own tracepoints"
grep -q '^#define HAVE_SYS_SDT_H 1' "$top_builddir/config.h" ||
	lt_skip "built without <sys/sdt.h> (install systemtap-sdt-dev and re-run configure)"
lt_require_cmd readelf python3
LACUNA="$top_builddir/tools/lacuna"

# the ELF file behind a libtool wrapper
elf_of() {
	local d b
	d=$(dirname "$1")
	b=$(basename "$1")
	if [ -x "$d/.libs/$b" ] && ! readelf -h "$1" >/dev/null 2>&1; then
		echo "$d/.libs/$b"
	else
		echo "$1"
	fi
}
LACUNAD_ELF=$(elf_of "$top_builddir/gateway/lacunad")
LACUNAFS_ELF=$(elf_of "$top_builddir/fusefs/lacunafs")

# provider:name of each probe of the document's table
mapfile -t documented < <(sed -nE 's/^\| `(lacunad|lacunafs):([a-z_]+)` \|.*/\1:\2/p' \
	"$top_srcdir/docs/tracing.md")
[ "${#documented[@]}" -gt 0 ] || lt_hard "no probe found in docs/tracing.md"
lt_log "docs/tracing.md lists ${#documented[@]} probes"
# provider:name of each probe in an ELF file
probes_in() {
	readelf -n "$1" | awk '/Provider:/ { p = $2 } /Name:/ && p { print p ":" $2; p = "" }' |
		sort -u
}
in_elf=$( (probes_in "$LACUNAD_ELF"; probes_in "$LACUNAFS_ELF") | sort -u)
for p in "${documented[@]}"; do
	lt_check "probe $p is in the binary" grep -qx "$p" <<<"$in_elf"
done
for p in $in_elf; do
	lt_check "probe $p of the binary is documented" \
		grep -qx "$p" < <(printf '%s\n' "${documented[@]}")
done

# bpftrace on read__plus while lacuna nfs-get copies a sparse file
nfs_require_server
lt_require_fuse
nfs_make_export ext4 t
f="$NFS_EXPORT/sparse"
dd if=/dev/urandom of="$f" bs=1M count=1 conv=notrunc status=none || lt_hard "dd"
dd if=/dev/urandom of="$f" bs=64K count=1 seek=80 conv=notrunc,fsync status=none ||
	lt_hard "dd"
truncate -s 9M "$f"
holes=$("$LACUNA" map --json "$f" | python3 -c 'import json,sys; print(json.load(sys.stdin)["hole_bytes"])')
data=$("$LACUNA" map --json "$f" | python3 -c 'import json,sys; print(json.load(sys.stdin)["data_bytes"])')
lt_log "the file: $data data bytes, $holes hole bytes"
# the reasons tls__fail may give: the backquoted words of its row
mapfile -t tls_reasons < <(sed -n 's/^| `lacunad:tls__fail` |//p' "$top_srcdir/docs/tracing.md" |
	grep -o '`[a-z_]*`' | tr -d '`' | grep -vx 'lacunad_tls_failures_total')
[ "${#tls_reasons[@]}" -gt 0 ] || lt_hard "no tls__fail reason found in docs/tracing.md"
C=$LT_TMP/certs
tls_make_certs "$C"
nfs_start "$NFS_EXPORT" --threads 2 --tls-cert "$C/server.crt" --tls-key "$C/server.key"

if ! command -v bpftrace >/dev/null; then
	lt_log "SKIP the bpftrace part: bpftrace not installed"
	nfs_stop
	lt_done
	exit
fi
exe=$(readlink -f "/proc/$NFS_PID/exe")
lfs_exe=$(readlink -f "/proc/$LT_LFS_PID/exe")
out="$LT_TMP/bpftrace.out"
setsid bpftrace -e "
usdt:$exe:lacunad:read__plus /pid == $NFS_PID/ { @data = sum(arg3); @hole = sum(arg4); @calls = count(); }
usdt:$lfs_exe:lacunafs:sparse__read /pid == $LT_LFS_PID/ { @sr = count(); }
usdt:$exe:lacunad:tls__probe /pid == $NFS_PID/ { @tls_probe = count(); }
usdt:$exe:lacunad:tls__done /pid == $NFS_PID/ { @tls_done[arg1, str(arg2)] = count(); }
usdt:$exe:lacunad:tls__fail /pid == $NFS_PID/ { @tls_fail[str(arg2)] = count(); printf(\"tls__fail fired\\n\"); }" \
	>"$out" 2>&1 </dev/null &
bt=$!
lt_push_cleanup "kill -INT $bt; wait $bt"
attached() { grep -q "^Attaching" "$out" || ! kill -0 "$bt" 2>/dev/null; }
lt_wait_for 120 "bpftrace to attach" attached || true
if ! kill -0 "$bt" 2>/dev/null || ! grep -q "^Attaching" "$out"; then
	sed 's/^/# bpftrace: /' "$out"
	wait "$bt"
	nfs_stop
	# a script bpftrace refuses is this test's bug, not a missing feature
	why=$(grep -v RLIMIT_MEMLOCK "$out" | grep -m1 ERROR)
	grep -qiE "attach|permission|not permitted|uprobe|bpf" <<<"$why" ||
		lt_hard "bpftrace refused the script: $why"
	lt_skip "bpftrace cannot attach here: $why"
fi
sleep 1 # attaching is announced before the uprobes are all in place
lt_check "lacuna nfs-get copies the file" \
	nfs_run "$LACUNA" nfs-get "nfs://127.0.0.1:$NFS_PORT/sparse" "$LT_TMP/copy"
lt_check "the copy is the file" cmp -s "$f" "$LT_TMP/copy"
rm -f "$LT_TMP/copy"
nfs_run "$LACUNA" nfs-get --ca "$C/ca.crt" "nfs://127.0.0.1:$NFS_PORT/sparse" \
	"$LT_TMP/copy" >"$LT_TMP/tls.out" 2>&1
lt_check_eq "lacuna nfs-get --ca copies the file over TLS: exit status" 0 "$?"
sed 's/^/# /' "$LT_TMP/tls.out"
lt_check "lacuna nfs-get --ca: over TLS 1.3" grep -q "over TLSv1.3" "$LT_TMP/tls.out"
lt_check "the TLS copy is the file" cmp -s "$f" "$LT_TMP/copy"
nfs_run "$LACUNA" nfs-get --ca "$C/other-ca.crt" "nfs://127.0.0.1:$NFS_PORT/sparse" \
	"$LT_TMP/copy2" >"$LT_TMP/tls.out" 2>&1
lt_check_eq "lacuna nfs-get with the wrong CA fails: exit status" 1 "$?"
sed 's/^/# /' "$LT_TMP/tls.out"
# the server sees the client's abort after the client has exited
fail_seen() { grep -q "^tls__fail fired" "$out" || ! kill -0 "$bt" 2>/dev/null; }
lt_wait_for 120 "tls__fail to fire" fail_seen || true
kill -INT "$bt"
done_bt() { ! kill -0 "$bt" 2>/dev/null; }
lt_wait_for 120 "bpftrace to exit" done_bt || kill -KILL "$bt"
wait "$bt"
sed 's/^/# bpftrace: /' "$out" | grep -v "^# bpftrace: $"
# bpftrace prints its maps at exit: "@name: value"
map() { sed -nE "s/^@$1: ([0-9]+)\$/\1/p" "$out"; }
calls=$(map calls)
lt_check_eq "read__plus hole bytes are twice the file's" "$((2 * holes))" "$(map hole)"
lt_check_eq "read__plus data bytes are twice the file's" "$((2 * data))" "$(map data)"
lt_check "read__plus fired (${calls:-0} calls)" test "${calls:-0}" -gt 0
lt_check "lacunafs sparse__read fired as often or more ($(map sr))" \
	test "$(map sr)" -ge "${calls:-1}"
tls_probe=$(map tls_probe)
lt_check "tls__probe fired twice or more (${tls_probe:-0} times)" test "${tls_probe:-0}" -ge 2
# "@tls_done[0, TLS_AES_256_GCM_SHA384]: 1"
done_lines=$(grep '^@tls_done\[' "$out")
lt_check_eq "tls__done fired for one connection" 1 "$(grep -c . <<<"$done_lines")"
lt_check "tls__done fired once, no client certificate (arg1 0), a TLS 1.3 suite" \
	grep -qE '^@tls_done\[0, TLS_AES_[A-Z0-9_]+\]: 1$' <<<"$done_lines"
fail_reasons=$(sed -nE 's/^@tls_fail\[(.*)\]: [0-9]+$/\1/p' "$out")
lt_check "tls__fail fired (reasons: ${fail_reasons:-none})" test -n "$fail_reasons"
for r in $fail_reasons; do
	lt_check "tls__fail reason $r is documented" \
		grep -qx -- "$r" < <(printf '%s\n' "${tls_reasons[@]}")
done

nfs_stop
lt_done
