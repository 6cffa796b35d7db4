#!/usr/bin/env bash
# CLI tests of the compact-jsonl verbs (RFC-0014; docs/compact-jsonl.md): goldens of stdout,
# stderr and exit code for import/export/sync/inspect (tests/golden/compact-jsonl/<case>.txt;
# PCH_GOLDEN_UPDATE=1 rewrites them), byte-exact round trips (generated edge cases and the
# shared corpus when ../shared is present), every failure proving nothing was published,
# SIGINT / kill -9 during an import, sync --watch, and progress only on a TTY.
set -u
cd "$(dirname "$0")/../.."
REPO=$PWD
CLI=${PCH_CLI:-$REPO/build/pchronicle}
case $CLI in /*) ;; *) CLI=$REPO/$CLI ;; esac
G=$REPO/tests/golden/compact-jsonl
[ -x "$CLI" ] || { echo "missing $CLI"; exit 1; }
T=$(mktemp -d "${TMPDIR:-/tmp}/pch-cj-cli.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
cd "$T"
fail=0
bad() { echo "FAIL: $*"; fail=1; }

# golden NAME ARGS... : run the CLI in $T, compare stdout/stderr/exit with $G/NAME.txt
golden() {
    local name=$1; shift
    "$CLI" "$@" >"$T/.out" 2>"$T/.err"; local rc=$?
    { echo "\$ pchronicle $*"; echo "[stdout]"; cat "$T/.out"; echo "[stderr]"; cat "$T/.err"; echo "[exit] $rc"; } >"$T/.got"
    if [ "${PCH_GOLDEN_UPDATE:-0}" = 1 ]; then cp "$T/.got" "$G/$name.txt"; return; fi
    if ! cmp -s "$T/.got" "$G/$name.txt"; then
        bad "golden $name"; diff "$G/$name.txt" "$T/.got" | head -20
    fi
}
# nothing published and no staging left beside PATH
unpublished() {
    local p=$1 d; d=$(dirname "$p")
    [ -e "$p" ] && bad "$p was published"
    ls -A "$d" | grep -q '\.staging-' && bad "staging left in $d"
}
no_staging() { ls -A "${1:-.}" | grep -q '\.staging-' && bad "staging left in ${1:-.}"; true; }

# ---- inputs ----
mkdir -p in/sub in/deep/er
printf '{"id":"a1","timestamp":"2024-01-01T00:00:00Z","type":"user","m":{"role":"u"}}\n{"id":"a2","timestamp":1700000000,"type":"assistant"}\r\n{"type":"user","n":1.0e2}' > in/a.jsonl
printf '[1,2,{"x":"\xc3\xa9"}]\n' > in/sub/doc.json
: > in/deep/er/empty.NDJSON
printf '{"v":-0}\n{"v":18446744073709551616}\n' > in/sub/nums.ndjson
echo 'ignored' > in/notes.txt
ln -s a.jsonl in/link.jsonl
mkdir expect && cp -r in/a.jsonl in/sub in/deep expect/

# ---- help and usage ----
for v in import export sync inspect; do golden "help_$v" "$v" --help; done
golden usage_no_format import --from in --to x.lance
golden usage_bad_format import --from in --to x.lance --output-format parquet
golden usage_append import --from in --to x.lance --output-format compact-jsonl --append
golden usage_column import --from in --to x.lance --output-format compact-jsonl --column nopath
golden usage_zstd_level import --from in --to x.lance --output-format compact-jsonl --zstd-level 23
golden usage_zstd_level_zero import --from in --to x.lance --output-format compact-jsonl --zstd-level 0
golden usage_export_where export --from x.lance --to out --output-format compact-jsonl --where "id = 'a'"
golden usage_export_source export --from x.lance --to out --output-format compact-jsonl --source a.jsonl
unpublished x.lance

# ---- import / export / inspect ----
golden import_ok import --from in --to x.lance --output-format compact-jsonl --column type=\$.type --column role=\$.m.role --quiet
[ -d x.lance ] || bad "x.lance missing"
golden import_ok_summary import --from in --to y.lance --input-format compact-jsonl --offload-threshold 40
golden import_exists import --from in --to x.lance --output-format compact-jsonl
golden import_replace import --from in --to x.lance --output-format compact-jsonl --column type=\$.type --yes
no_staging
golden export_ok export --from x.lance --to out --output-format compact-jsonl
diff -r expect out >/dev/null || bad "export of x.lance differs from the input"
golden export_exists export --from x.lance --to out --output-format compact-jsonl
golden export_overwrite export --from y.lance --to out --output-format compact-jsonl --overwrite
diff -r expect out >/dev/null || bad "export of y.lance (offloaded) differs from the input"
no_staging
# no format flag: the dataset's metadata says it is compact-jsonl (export), and a flag that
# contradicts what --from is, or a path that is no dataset at all, is a usage error
rm -rf out-auto; "$CLI" export --from x.lance --to out-auto --quiet && diff -r expect out-auto >/dev/null || bad "export without a format flag"
golden export_auto_not_dataset export --from in --to out-nd
unpublished out-nd
golden export_contradicts export --from x.lance --to out-c --output-format atif
unpublished out-c
"$CLI" inspect y.lance | grep -v 'bytes' >"$T/inspect.txt"
if [ "${PCH_GOLDEN_UPDATE:-0}" = 1 ]; then cp "$T/inspect.txt" "$G/inspect_y.txt";
elif ! cmp -s "$T/inspect.txt" "$G/inspect_y.txt"; then bad "golden inspect_y"; diff "$G/inspect_y.txt" "$T/inspect.txt"; fi
golden inspect_not_dataset inspect in
# --zstd-level: level 1 and level 19 both restore every byte; on 3,000 compressible
# records level 19 writes fewer data-file bytes (the manifest's size varies with its
# timestamp, so only data files are compared; the small tree above compresses at no level)
mkdir -p zin && awk 'BEGIN { for (i = 0; i < 3000; i++)
    printf "{\"id\":\"z%d\",\"type\":\"%s\",\"text\":\"step %d of the %s run, tool %s\"}\n",
           i, (i % 3 ? "assistant" : "user"), i, (i % 7 ? "long" : "short"), (i % 5 ? "read" : "write") }' > zin/z.jsonl
data_bytes() { find "$1/data" -type f -printf '%s\n' | awk '{s += $1} END {print s + 0}'; }
for z in 1 19; do
    "$CLI" import --from zin --to z$z.lance --output-format compact-jsonl --zstd-level $z --quiet || bad "import --zstd-level $z"
    "$CLI" export --from z$z.lance --to out-z$z --output-format compact-jsonl --quiet || bad "export z$z"
    diff -r zin out-z$z >/dev/null || bad "export of z$z.lance differs from the input"
    "$CLI" import --from in --to zs$z.lance --output-format compact-jsonl --zstd-level $z --quiet || bad "import in --zstd-level $z"
    "$CLI" export --from zs$z.lance --to out-zs$z --output-format compact-jsonl --quiet || bad "export zs$z"
    diff -r expect out-zs$z >/dev/null || bad "export of zs$z.lance differs from the input"
done
[ "$(data_bytes z19.lance)" -lt "$(data_bytes z1.lance)" ] || bad "--zstd-level 19 wrote no fewer data bytes than level 1"
if [ -d "$REPO/../shared/fixtures/lance/events.lance" ]; then
    cp -r "$REPO/../shared/fixtures/lance/events.lance" events.lance
    golden export_not_compact export --from events.lance --to ev --output-format compact-jsonl
    unpublished ev
    golden export_auto_not_compact export --from events.lance --to ev
    unpublished ev
fi

# ---- failures: each names file, line, column; nothing is published ----
fcase() {  # fcase NAME FILE CONTENT [IMPORT ARGS...]
    local name=$1 file=$2 content=$3; shift 3
    rm -rf bad bad.lance; mkdir -p bad; printf "$content" > "bad/$file"
    golden "fail_$name" import --from bad --to bad.lance --output-format compact-jsonl "$@"
    unpublished bad.lance
}
fcase invalid_json a.jsonl '{"a":1}\n{"a":tru}\n'
fcase blank_line a.jsonl '{"a":1}\n\n'
fcase whitespace_line a.jsonl '{"a":1}\n \t \n{"a":2}'
fcase not_object a.jsonl '{"a":1}\n[1]\n'
fcase scalar_doc a.json '"text"'
fcase bom a.jsonl '\xef\xbb\xbf{"a":1}\n'
fcase nul a.jsonl '{"a":"\x00"}\n'
fcase bad_utf8 a.ndjson '{"a":"\xc3\x28"}\n'
fcase dup_id a.jsonl '{"id":"x"}\n{"id":"y"}\n{"id":"x"}\n'
fcase dup_key a.jsonl '{"k":1,"k":2}\n'
# a duplicate 3,000 rows apart with a 4 KiB id index: found in the merge of spilled runs
far=$(awk 'BEGIN { for (i = 0; i < 3000; i++) printf "{\"id\":\"r%d\"}\\n", i; printf "{\"id\":\"r7\"}\\n" }')
fcase dup_id_spilled a.jsonl "$far" --id-index-bytes 4096
fcase bad_id_index a.jsonl '{}\n' --id-index-bytes 0
fcase too_big a.jsonl '{"a":"0123456789"}\n' --max-record-bytes 10
fcase reserved_column a.jsonl '{}\n' --column data=\$.x
fcase bad_column_name a.jsonl '{}\n' --column 9x=\$.x
fcase dup_column a.jsonl '{}\n' --column x=\$.a --column x=\$.b
fcase bad_path a.jsonl '{}\n' --column x='$.a[*]'
fcase neg_index a.jsonl '{}\n' --column x='$.a[-1]'
golden fail_missing_root import --from nope --to n.lance --output-format compact-jsonl
unpublished n.lance
# replace with invalid input keeps the previous dataset
rm -rf bad; mkdir bad; printf '{"a":\n' > bad/a.jsonl
"$CLI" import --from bad --to x.lance --output-format compact-jsonl --yes >/dev/null 2>&1 && bad "invalid replace succeeded"
rm -rf out2; "$CLI" export --from x.lance --to out2 --output-format compact-jsonl --quiet && diff -r expect out2 >/dev/null || bad "previous dataset changed by a failed replace"
no_staging

# ---- offload tamper: export re-hashes ----
obj=$(ls y.lance/objects | head -n 1)
if [ -n "$obj" ]; then
    cp -r y.lance z.lance; chmod -R u+w z.lance; printf 'x' >> "z.lance/objects/$obj"
    "$CLI" export --from z.lance --to zout --output-format compact-jsonl >/dev/null 2>"$T/err"; rc=$?
    [ $rc = 1 ] && grep -q 'digest mismatch' "$T/err" || bad "tampered offload object not detected (exit $rc)"
    unpublished zout
else bad "y.lance has no offload objects"; fi

# ---- progress: silent when piped, drawn on a TTY ----
"$CLI" import --from in --to p.lance --output-format compact-jsonl 2>"$T/err" >/dev/null
[ -s "$T/err" ] && bad "import wrote to stderr when piped"
if command -v script >/dev/null; then
    script -qec "$CLI import --from in --to q.lance --output-format compact-jsonl" /dev/null >"$T/tty" 2>&1
    grep -q 'records' "$T/tty" || bad "no progress on a TTY"
fi

# ---- sync: one pass, then a change ----
cp -r in src
golden sync_once sync --from src --mirror m.lance --input-format compact-jsonl
printf '{"id":"new"}\n' > src/new.jsonl; rm src/sub/nums.ndjson; printf '{"id":"a9"}\n' > src/a.jsonl
golden sync_again sync --from src --mirror m.lance --quiet
golden sync_mirror_not_dataset sync --from src --mirror in --quiet
rm -rf mo; "$CLI" export --from m.lance --to mo --output-format compact-jsonl --quiet
mkdir -p se; (cd src && find . -type f \( -name '*.jsonl' -o -name '*.json' -o -iname '*.ndjson' \) -exec cp --parents {} ../se \;)
diff -r se mo >/dev/null || bad "sync mirror does not reflect adds/edits/deletes"
no_staging

# ---- sync --watch: each change becomes a snapshot; SIGINT stops cleanly ----
rm -rf w w.lance; mkdir w; printf '{"id":1}\n' > w/a.jsonl
"$CLI" sync --from w --mirror w.lance --input-format compact-jsonl --watch --debounce-ms 100 >"$T/watch.out" 2>"$T/watch.err" &
wp=$!
for i in $(seq 50); do [ -d w.lance ] && break; sleep 0.1; done
mkdir -p w/sub; printf '{"id":2}\n' > w/sub/b.jsonl
for i in $(seq 50); do [ "$(grep -c synced "$T/watch.out")" -ge 2 ] && break; sleep 0.1; done
kill -INT $wp; wait $wp; rc=$?
[ $rc = 0 ] || bad "sync --watch exit $rc after SIGINT"
rm -rf wo; "$CLI" export --from w.lance --to wo --output-format compact-jsonl --quiet
[ -f wo/sub/b.jsonl ] || bad "sync --watch did not pick up a new file in a new directory: $(cat "$T/watch.out" "$T/watch.err")"
no_staging

# ---- interruption: SIGINT and kill -9 during a large import ----
mkdir -p big
python3 - <<'PY'
import os
line = '{"id":"%d","timestamp":"t","pad":"' + 'x' * 2000 + '"}\n'
for f in range(40):
    with open('big/f%02d.jsonl' % f, 'w') as fh:
        fh.write(''.join(line.replace('%d', '%d-%d' % (f, i)) for i in range(1000)))
PY
# wait_staging NAME: until the hidden staging directory of NAME appears (the import is running)
wait_staging() { for i in $(seq 500); do ls -A . | grep -q "^\.$1\.staging-" && return; sleep 0.01; done; }
"$CLI" import --from big --to big.lance --output-format compact-jsonl --quiet 2>/dev/null & ip=$!
wait_staging big.lance; kill -INT $ip; wait $ip; rc=$?
if [ $rc = 0 ]; then echo "note: import finished before SIGINT"; rm -rf big.lance
else [ $rc = 130 ] || bad "SIGINT import exit $rc (want 130)"; unpublished big.lance; fi
# kill -9 while replacing x.lance: the old dataset stays complete; staging may remain hidden
"$CLI" import --from big --to x.lance --output-format compact-jsonl --yes --quiet & ip=$!
wait_staging x.lance; sleep 0.05; kill -9 $ip; wait $ip 2>/dev/null
rm -rf out3; "$CLI" export --from x.lance --to out3 --output-format compact-jsonl --quiet || bad "x.lance unreadable after kill -9"
diff -r expect out3 >/dev/null || diff -r big out3 >/dev/null || bad "x.lance is neither the old nor the new snapshot after kill -9"
# the next writer removes stale staging
"$CLI" import --from in --to x.lance --output-format compact-jsonl --yes --quiet || bad "import after kill -9"
no_staging

# ---- the shared corpus: the invalid file fails, the rest round-trips byte for byte ----
C=$REPO/../shared/corpus/jsonl
if [ -d "$C" ]; then
    "$CLI" import --from "$C" --to c.lance --output-format compact-jsonl --quiet 2>"$T/err"; rc=$?
    [ $rc = 1 ] && grep -q 'claude-code-log.edge_cases.jsonl line 13 column 1: top-level value must be an object' "$T/err" || bad "corpus import: exit $rc $(cat "$T/err")"
    unpublished c.lance
    mkdir corpus; (cd "$C" && find . -type f \( -iname '*.json' -o -iname '*.jsonl' -o -iname '*.ndjson' \) ! -name 'claude-code-log.edge_cases.jsonl' -exec cp --parents {} "$T/corpus" \;)
    "$CLI" import --from corpus --to c.lance --output-format compact-jsonl --column type=\$.type --offload-threshold 65536 --quiet || bad "corpus import"
    "$CLI" export --from c.lance --to cout --output-format compact-jsonl --quiet || bad "corpus export"
    diff -r corpus cout >/dev/null || bad "corpus round trip differs"
fi

[ $fail = 0 ] && echo "compact_jsonl: ok"
exit $fail
