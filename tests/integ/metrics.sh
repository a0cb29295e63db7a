#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# lacunad's /metrics (--metrics-listen) and stats file (--stats-file):
#  - the page passes `promtool check metrics`, and so does lacunafs's
#    (-o metrics=), which counts exactly N arena sparse reads and N shared
#    range-lock waits for N READ_PLUS;
#  - after N READ_PLUS of a file with one data extent and one hole,
#    lacunad_ops_total{op="READ_PLUS",status="NFS4_OK"} grew by exactly N,
#    the READ_PLUS data and hole byte counters by exactly what the
#    replies carried (holes counted inside the range asked for), the READ_PLUS latency histogram by N, and the atomic
#    replies by N; the stats file shows the same count;
#  - the endpoint answers (and still validates) while a READ_PLUS load
#    runs;
#  - hostile HTTP (not HTTP, a NUL byte, an unknown path or method,
#    HTTP/2, 100 KB of headers, a request cut short, connections that
#    never send anything) gets 400/404/431 or a closed connection, and
#    afterwards /metrics and NFS still answer;
#  - `lacuna stats` on the page and on the stats file shows N READ_PLUS,
#    a p99 latency, the hole bytes; --json parses (python3 -m json.tool);
#    --watch --count gives one JSON line per interval under load.

. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/lib_nfs.sh"
lt_init
[ "$LT_NFS_SERVER" = lacunad ] || lt_skip "lacunad's own metrics"
nfs_require_server
lt_require_fuse
lt_require_cmd python3
command -v promtool >/dev/null || lt_skip "promtool not installed (package prometheus)"
M="$top_srcdir/tests/py/lt_metrics.py"
N=7

lt_make_fs ext4 m
NFS_BACKING=$LT_FS
NFS_EXPORT="$LT_TMP/mnt-m"
lport=$(nfs_free_port) || lt_hard "no free port for lacunafs's metrics"
lt_mount_lacunafs "$NFS_BACKING" "$NFS_EXPORT" -o "metrics=127.0.0.1:$lport"
LURL="http://127.0.0.1:$lport/metrics"
# one 64 KiB data extent, then a hole to 1 MiB
dd if=/dev/urandom of="$NFS_EXPORT/sparse" bs=64K count=1 conv=fsync status=none ||
	lt_hard "dd"
truncate -s 1M "$NFS_EXPORT/sparse"
mport=$(nfs_free_port) || lt_hard "no free port for the metrics"
nfs_start "$NFS_EXPORT" --threads 2 --metrics-listen "127.0.0.1:$mport" \
	--stats-file "$LT_TMP/stats"
URL="http://127.0.0.1:$mport/metrics"

scrape() { nfs_run python3 "$M" get "$URL" >"$1"; }
val() { python3 "$M" value "$1" "$2"; }
delta() { echo $(($(val "$2" "$3") - $(val "$1" "$3"))); }
# dcheck DESC EXPECTED BEFORE AFTER SAMPLE: SAMPLE grew by EXPECTED from page BEFORE to AFTER
dcheck() { lt_check_eq "$1" "$2" "$(delta "$LT_TMP/$3" "$LT_TMP/$4" "$5")"; }

lt_check "GET /metrics answers" scrape "$LT_TMP/m0"
lt_check "lacunafs's GET /metrics answers" sh -c "python3 '$M' get '$LURL' >'$LT_TMP/l0'"
lt_check "promtool check metrics accepts the page" \
	sh -c "promtool check metrics <'$LT_TMP/m0'"
out=$(nfs_run python3 "$M" readplus "$NFS_PORT" sparse "$N" 524288) || lt_hard "readplus: $out"
lt_log "replies: $out"
set -- $out
data=$2 hole=$4
lt_check "GET /metrics answers after traffic" scrape "$LT_TMP/m1"
lt_check "promtool check metrics accepts it" sh -c "promtool check metrics <'$LT_TMP/m1'"
dcheck "READ_PLUS counted exactly $N times" "$N" m0 m1 'lacunad_ops_total{op="READ_PLUS",status="NFS4_OK"}'
dcheck "READ_PLUS latency histogram counted $N" "$N" m0 m1 'lacunad_op_duration_seconds_count{op="READ_PLUS"}'
dcheck "READ_PLUS data bytes as sent" "$data" m0 m1 'lacunad_read_plus_bytes_total{kind="data"}'
dcheck "READ_PLUS hole bytes as sent" "$hole" m0 m1 'lacunad_read_plus_bytes_total{kind="hole"}'
lt_check_eq "the hole is the file's ($N x 448 KiB)" "$((N * 458752))" "$hole"
dcheck "READ_PLUS replies all atomic" "$N" m0 m1 'lacunad_read_plus_replies_total{atomic="yes"}'
lt_check_eq "one session open" 1 "$(val "$LT_TMP/m1" lacunad_sessions)"
lt_check "lacunafs's GET /metrics answers after traffic" \
	sh -c "python3 '$M' get '$LURL' >'$LT_TMP/l1'"
lt_check "promtool check metrics accepts lacunafs's page" \
	sh -c "promtool check metrics <'$LT_TMP/l1'"
dcheck "lacunafs counted $N arena sparse reads" "$N" l0 l1 'lacunafs_sparse_reads_total{mode="arena"}'
dcheck "lacunafs timed $N shared range-lock waits" "$N" l0 l1 'lacunafs_range_lock_wait_seconds_count{mode="shared"}'
dcheck "lacunafs's data bytes are lacunad's" "$data" l0 l1 'lacunafs_sparse_read_bytes_total{kind="data"}'
lt_check "+Inf bucket equals the count" sh -c "grep -q '^lacunad_op_duration_seconds_bucket{op=\"READ_PLUS\",le=\"+Inf\"} $N\$' '$LT_TMP/m1'"

stats_has() { grep -q "^op READ_PLUS $N errors 0\$" "$LT_TMP/stats"; }
lt_check "the stats file counts $N READ_PLUS" lt_wait_for 30 "the stats file" stats_has

# lacuna stats, on the page and on the stats file
LACUNA="$top_builddir/tools/lacuna"
# json_rp FILE FIELD: FIELD of the READ_PLUS row of a `lacuna stats --json` output
json_rp() {
	python3 -c 'import json,sys
d = json.load(open(sys.argv[1]))
r = [o for o in d["ops"] if o["op"] == "READ_PLUS"]
print(r[0][sys.argv[2]] if r else "none")' "$1" "$2"
}
lt_check "lacuna stats URL" sh -c "'$LACUNA' stats '$URL' >'$LT_TMP/st.txt'"
sed 's/^/# /' "$LT_TMP/st.txt"
lt_check "its table has a READ_PLUS row of $N calls" \
	grep -qE "^READ_PLUS +$N " "$LT_TMP/st.txt"
lt_check "it shows the hole bytes not sent" grep -q "of holes not sent" "$LT_TMP/st.txt"
lt_check "lacuna stats --json URL parses" \
	sh -c "'$LACUNA' stats --json '$URL' >'$LT_TMP/st.json' && python3 -m json.tool '$LT_TMP/st.json' >/dev/null"
lt_check_eq "--json: READ_PLUS calls" "$N" "$(json_rp "$LT_TMP/st.json" calls)"
p99=$(json_rp "$LT_TMP/st.json" p99_ms)
lt_check "--json: a READ_PLUS p99 latency from the buckets ($p99 ms)" \
	python3 -c "import sys; v = float(sys.argv[1]); sys.exit(not 0 < v <= 10000)" "$p99"
lt_check_eq "--json: hole bytes" "$hole" \
	"$(python3 -c 'import json,sys; print(int(json.load(open(sys.argv[1]))["read_plus"]["hole_bytes"]))' "$LT_TMP/st.json")"
lt_check "lacuna stats STATS_FILE" sh -c "'$LACUNA' stats '$LT_TMP/stats' >'$LT_TMP/sf.txt'"
lt_check "its table has a READ_PLUS row of $N calls" \
	grep -qE "^READ_PLUS +$N " "$LT_TMP/sf.txt"
lt_check "lacuna stats --json STATS_FILE parses" \
	sh -c "'$LACUNA' stats --json '$LT_TMP/stats' >'$LT_TMP/sf.json' && python3 -m json.tool '$LT_TMP/sf.json' >/dev/null"
lt_check_eq "--json of the file: READ_PLUS calls" "$N" "$(json_rp "$LT_TMP/sf.json" calls)"
lt_check "lacuna stats of lacunafs's page shows the lock waits" \
	sh -c "'$LACUNA' stats '$LURL' | grep -qE '^lock_shared +$N '"
lt_check "lacuna stats of a closed port fails" \
	sh -c "! '$LACUNA' stats http://127.0.0.1:1/metrics 2>/dev/null"

# the endpoint under load
nfs_run python3 "$M" load "$NFS_PORT" sparse "$LT_TMP/stop-load" &
loadpid=$!
lt_push_cleanup "touch '$LT_TMP/stop-load'; wait $loadpid"
ok=0
for i in 1 2 3 4 5; do
	scrape "$LT_TMP/ml" && promtool check metrics <"$LT_TMP/ml" >/dev/null 2>&1 &&
		ok=$((ok + 1))
	sleep 0.5
done
nfs_run "$LACUNA" stats --watch 1 --count 2 --json "$URL" >"$LT_TMP/watch.json"
lt_check "lacuna stats --watch 1 --count 2 --json: two JSON lines of intervals" \
	python3 -c 'import json,sys
l = [json.loads(x) for x in open(sys.argv[1])]
sys.exit(not (len(l) == 2 and all(d["interval"] and d["seconds"] > 0 for d in l)))' "$LT_TMP/watch.json"
lt_check "load was running during the scrapes" kill -0 "$loadpid"
touch "$LT_TMP/stop-load"
wait "$loadpid"
lt_check_eq "5 scrapes under load answered and validated" 5 "$ok"

# hostile HTTP
hostile() { nfs_run python3 "$M" http 127.0.0.1 "$mport" "$1"; }
lt_check_eq "not HTTP: 400" "HTTP/1.1 400 Bad Request" "$(hostile garbage)"
lt_check_eq "HTTP/2.0 request line: 400" "HTTP/1.1 400 Bad Request" "$(hostile http2)"
lt_check_eq "another path: 404" "HTTP/1.1 404 Not Found" "$(hostile notfound)"
lt_check_eq "POST: 404" "HTTP/1.1 404 Not Found" "$(hostile post)"
lt_check_eq "a NUL byte: closed" "closed" "$(hostile nul)"
lt_check_eq "a request cut short: closed" "closed" "$(hostile half)"
r=$(hostile huge)
lt_check "100 KB of headers: 431 or closed (got '$r')" \
	test "$r" = "HTTP/1.1 431 Request Header Fields Too Large" -o "$r" = closed
lt_check_eq "HTTP/1.0 GET: 200" "HTTP/1.1 200 OK" "$(hostile ok10)"
# more idle connections than the responder keeps: it closes them at its timeout
nfs_run python3 "$M" idle 127.0.0.1 "$mport" 40 8 &
idlepid=$!
lt_push_cleanup "wait $idlepid"
sleep 1
lt_check "GET /metrics answers while 40 idle connections are held" scrape "$LT_TMP/m2"
wait "$idlepid"
lt_check "promtool accepts the page after all that" \
	sh -c "promtool check metrics <'$LT_TMP/m2'"
lt_check "NFS still answers" nfs_run python3 "$M" readplus "$NFS_PORT" sparse 1 4096
lt_check "lacunad still runs" kill -0 "$NFS_PID"

nfs_stop
lt_done
