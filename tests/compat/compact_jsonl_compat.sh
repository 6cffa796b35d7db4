#!/usr/bin/env bash
# Official-reader check of compact-jsonl datasets (RFC-0014): the official Lance 8.0 reader
# (npm @lancedb/lancedb 0.31.0, the oracle installed by scripts/bootstrap.sh) must read the
# schema, metadata and every row we write (inline and offloaded rows, user JSON columns),
# and json_get_string()-style filters on `data` and on a user column must select the same
# rows as the input says. Fails loudly, never skips, when node or the oracle is missing.
set -uo pipefail
cd "$(dirname "$0")/../.."
REPO=$PWD
CLI=${PCH_CLI:-$REPO/build/pchronicle}
case $CLI in /*) ;; *) CLI=$REPO/$CLI ;; esac
ORACLE=${PCH_CACHE:-$REPO/.cache}/lance-oracle/oracle.js
die() { echo "compact_jsonl_compat: FAIL: $*" >&2; exit 1; }
command -v node >/dev/null || die "node is not installed (run scripts/bootstrap.sh)"
command -v python3 >/dev/null || die "python3 is not installed"
[ -f "$ORACLE" ] || die "the Lance oracle is missing at $ORACLE (run scripts/bootstrap.sh)"
[ -x "$CLI" ] || die "$CLI is not built"
T=$(mktemp -d "${TMPDIR:-/tmp}/pch-cj-compat.XXXXXX") || die "mktemp"
trap 'rm -rf "$T"' EXIT
cd "$T"
python3 - <<'PY'
import json, os, random
random.seed(14)
os.makedirs('in/logs/2024', exist_ok=True)
types = ['user', 'assistant', 'tool', 'system']
for f in range(6):
    lines = []
    for i in range(300):
        rec = {'id': 'r%d-%d' % (f, i), 'timestamp': '2024-05-%02dT12:%02d:00Z' % (f + 1, i % 60),
               'type': types[(i * 7 + f) % 4], 'message': {'role': types[i % 4], 'n': i, 'x': 1.5 * i},
               'text': 'é' * (i % 5) + 'z' * (5000 if i % 97 == 0 else i)}
        if i % 11 == 0: del rec['id']
        lines.append(json.dumps(rec, ensure_ascii=(i % 2 == 0)) + ('\r\n' if f % 2 else '\n'))
    open('in/logs/2024/s%d.jsonl' % f, 'w', newline='').write(''.join(lines))
open('in/doc.json', 'w').write('{"type": "user", "message": {"role": "doc"}}\n')
open('in/empty.ndjson', 'w').close()
PY
"$CLI" import --from in --to ds.lance --output-format compact-jsonl --column role='$.message.role' \
    --column msg='$.message' --offload-threshold 4096 --quiet || die "import failed"
node "$ORACLE" dump ds.lance > dump.jsonl 2> dump.err || { cat dump.err; die "the official reader rejected the dataset"; }
node "$ORACLE" dump ds.lance --where "json_get_string(data, 'type') = 'user'" > f1.jsonl 2>f1.err || { cat f1.err; die "filter on data failed"; }
node "$ORACLE" dump ds.lance --where "json_extract(role, '\$') = '\"tool\"'" > f2.jsonl 2>f2.err || { cat f2.err; die "filter on a user column failed"; }
node "$ORACLE" dump ds.lance --where "json_get_string(msg, 'role') = 'tool'" > f4.jsonl 2>f4.err || { cat f4.err; die "filter on a user column failed"; }
node "$ORACLE" dump ds.lance --where "json_get_int(msg, 'n') >= 290" > f3.jsonl 2>f3.err || { cat f3.err; die "json_get_int filter failed"; }
python3 - <<'PY' || die "official dump disagrees with the input"
import base64, json, os, sys, hashlib
def fail(m): print('mismatch:', m); sys.exit(1)
hdr, *rows = [json.loads(l) for l in open('dump.jsonl')]
f = hdr['schema']['fields']
want = [('id','Utf8',False),('timestamp','Utf8',False),('filename','Utf8',False),('data','Utf8',False),
        ('role','Utf8',True),('msg','Utf8',True),('_raw_','LargeBinary',True),('_offload_','Utf8',True)]
got = [(x['name'], x['type'], x['nullable']) for x in f]
if got != want: fail('schema %r' % got)
for i in (3, 4, 5, 7):
    if f[i]['metadata'].get('ARROW:extension:name') != 'arrow.json': fail('json extension on ' + f[i]['name'])
if f[2]['metadata'].get('role') != 'source-file': fail('filename metadata')
md = hdr['schema']['metadata']
if md.get('pchronicle.format') != 'compact-jsonl/v1': fail('format metadata %r' % md)
if json.loads(md['pchronicle.compact_jsonl.empty_files']) != ['empty.ndjson']: fail('empty_files')
# expected rows from the input, in byte order of relative names
files = sorted(os.path.relpath(os.path.join(d, n), 'in') for d, _, ns in os.walk('in') for n in ns)
exp = []
for rel in files:
    b = open(os.path.join('in', rel), 'rb').read()
    if rel.endswith('.json'): recs = [b]
    else: recs = b.splitlines(keepends=True)
    for ln, raw in enumerate(recs, 1):
        obj = json.loads(raw)
        exp.append((rel, ln, raw, obj))
if hdr['num_rows'] != len(exp) or len(rows) != len(exp): fail('rows %d vs %d' % (len(rows), len(exp)))
off = 0
for r, (rel, ln, raw, obj) in zip(rows, exp):
    gen = '%s#%d' % (rel, ln)
    if r['filename'] != rel: fail('filename %r' % r['filename'])
    if r['id'] != obj.get('id', gen) if isinstance(obj, dict) else r['id'] != gen: fail('id %r' % r['id'])
    ts = obj.get('timestamp', gen) if isinstance(obj, dict) else gen
    if r['timestamp'] != ts: fail('timestamp %r' % r['timestamp'])
    if len(raw) >= 4096:
        off += 1
        if r['_raw_'] is not None or json.loads(r['data']) is not None: fail('offloaded row state')
        d = json.loads(r['_offload_'])
        if d['path'] != 'objects' or len(d['key']) != 64: fail('descriptor %r' % d)
        if open(os.path.join('ds.lance', d['path'], d['key']), 'rb').read() != raw: fail('object bytes')
    else:
        if base64.b64decode(r['_raw_']['base64']) != raw: fail('raw bytes of %s#%d' % (rel, ln))
        if r['_offload_'] is not None: fail('inline row with descriptor')
        if json.loads(r['data']) != obj: fail('data of %s#%d' % (rel, ln))
    m = obj.get('message') if isinstance(obj, dict) else None
    if (json.loads(r['msg']) if r['msg'] is not None else None) != m: fail('msg column')
    role = m.get('role') if m else None
    if (json.loads(r['role']) if r['role'] is not None else None) != role: fail('role column')
if off == 0: fail('no offloaded rows exercised')
def count(fn): return json.loads(open(fn).readline())['matched_rows']
n1 = sum(1 for _, _, raw, o in exp if len(raw) < 4096 and isinstance(o, dict) and o.get('type') == 'user')
if count('f1.jsonl') != n1: fail('data filter matched %d, want %d (inline rows)' % (count('f1.jsonl'), n1))
n2 = sum(1 for _, _, _, o in exp if isinstance(o, dict) and (o.get('message') or {}).get('role') == 'tool')
if count('f2.jsonl') != n2: fail('user column filter matched %d, want %d' % (count('f2.jsonl'), n2))
if count('f4.jsonl') != n2: fail('user object column filter matched %d, want %d' % (count('f4.jsonl'), n2))
n3 = sum(1 for _, _, _, o in exp if isinstance(o, dict) and (o.get('message') or {}).get('n', -1) >= 290)
if count('f3.jsonl') != n3: fail('json_get_int filter matched %d, want %d' % (count('f3.jsonl'), n3))
print('rows', len(rows), 'offloaded', off, 'filters', count('f1.jsonl'), n2, n3)
PY
# and the official reader's view of our round trip stays byte-exact
"$CLI" export --from ds.lance --to out --output-format compact-jsonl --quiet || die "export failed"
diff -r in out >/dev/null || die "export differs from the input"
echo "compact_jsonl_compat: ok"
