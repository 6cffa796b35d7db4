#!/usr/bin/env python3
"""Compare `pchronicle-vortex dump` of a converted Lance dataset (VORTEX) with
`pchronicle lance dump` (LANCE) and the official reader's dump (ORACLE) of that dataset.
Used by tests/compat/vortex_convert.sh. Usage: convert_cmp.py LANCE VORTEX ORACLE

Header: num_rows equal in all three; field names and nullability equal in order; types map
(Lance utf8/large_utf8/json -> utf8, binary/large_binary -> binary, others by name).
Rows against LANCE: strict equality (types and values; floats by repr). A Lance JSON column
is printed by `pchronicle lance dump` as the JSON value and by the Vortex dump as its text
(docs/vortex.md: Lance JSON columns become utf8 text), so that text is parsed first.
Lines without JSON columns must be byte-identical.
Rows against ORACLE: JSON text must be identical (the oracle prints Lance's JSON text);
float32 columns compare within 1e-6 relative (the oracle widens them to float64), all other
values strictly. Exit 1 with the first differences."""
import json
import math
import sys

lance = open(sys.argv[1], encoding="utf-8").read().splitlines()
vortex = open(sys.argv[2], encoding="utf-8").read().splitlines()
oracle = open(sys.argv[3], encoding="utf-8").read().splitlines()
bad = []


def note(msg):
    bad.append(msg)


TYPES = {"utf8": "utf8", "large_utf8": "utf8", "json": "utf8", "binary": "binary",
         "large_binary": "binary"}
lh, vh, oh = json.loads(lance[0]), json.loads(vortex[0]), json.loads(oracle[0])
for k in ("num_rows",):
    if not (lh[k] == vh[k] == oh[k]):
        note("header %s: lance %r vortex %r oracle %r" % (k, lh[k], vh[k], oh[k]))
lf, vf, of = lh["schema"]["fields"], vh["schema"]["fields"], oh["schema"]["fields"]
if [f["name"] for f in lf] != [f["name"] for f in vf] or [f["name"] for f in of] != [f["name"] for f in vf]:
    note("field names differ: %s / %s / %s" % ([f["name"] for f in lf], [f["name"] for f in vf], [f["name"] for f in of]))
else:
    for a, b, c in zip(lf, vf, of):
        want = TYPES.get(a["type"], a["type"])
        if b["type"] != want:
            note("field %s: vortex type %r, want %r (lance %r)" % (a["name"], b["type"], want, a["type"]))
        if not (a["nullable"] == b["nullable"] == c["nullable"]):
            note("field %s: nullable lance %r vortex %r oracle %r" % (a["name"], a["nullable"], b["nullable"], c["nullable"]))
        if set(b.keys()) != {"name", "type", "nullable", "metadata"}:
            note("field %s: vortex field keys %s" % (a["name"], sorted(b.keys())))
jcols = [f["name"] for f in lf if f["type"] == "json"]
f32 = {f["name"] for f in of if f["type"] == "Float32"}
lance, vortex, oracle = lance[1:], vortex[1:], oracle[1:]
if not (len(lance) == len(vortex) == len(oracle)):
    note("row lines: lance %d vortex %d oracle %d" % (len(lance), len(vortex), len(oracle)))


def strict(a, b):
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return repr(a) == repr(b)
    if isinstance(a, dict):
        return list(a.keys()) == list(b.keys()) and all(strict(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(strict(x, y) for x, y in zip(a, b))
    return a == b


def near(a, b):
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool) and not isinstance(b, bool):
        return a == b or (math.isfinite(a) and abs(a - b) <= abs(a) * 1e-6)
    return strict(a, b)


for i, (l, v, o) in enumerate(zip(lance, vortex, oracle)):
    if len(bad) > 8:
        break
    if not jcols and l != v:
        note("row %d: lance and vortex lines differ:\n  %.300s\n  %.300s" % (i, l, v))
        continue
    lr, vr, orr = json.loads(l), json.loads(v), json.loads(o)
    if not (list(lr.keys()) == list(vr.keys()) == list(orr.keys())):
        note("row %d: columns differ" % i)
        continue
    for k in vr:
        vv = vr[k]
        if k in jcols:
            if not strict(orr[k], vv):
                note("row %d column %s: oracle JSON text %.120r vortex %.120r" % (i, k, orr[k], vv))
            vv = json.loads(vv) if isinstance(vv, str) else vv
        elif not (near if k in f32 else strict)(orr[k], vv):
            note("row %d column %s: oracle %.120r vortex %.120r" % (i, k, orr[k], vv))
        if not strict(lr[k], vv):
            note("row %d column %s: lance %.120r vortex %.120r" % (i, k, lr[k], vr[k]))
for m in bad[:8]:
    print(m)
print("%d rows, %d columns, %d JSON columns, %d differences" % (len(vortex), len(vf), len(jcols), len(bad)))
sys.exit(1 if bad else 0)
