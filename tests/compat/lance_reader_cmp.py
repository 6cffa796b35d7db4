#!/usr/bin/env python3
"""Compare `pchronicle lance dump` (GOT) with the official reader's dump (WANT), row by row.
Header lines are skipped (their formats differ). JSON columns: the oracle prints the JSON
text as a string, pchronicle the JSON value; both are parsed before comparing. Floats: the
oracle prints float32 widened to float64, so numbers compare within 1e-6 relative; integers
(int64/uint64 beyond 2^53 included) compare exactly. Exit 1 with the first differences."""
import json, sys

want = open(sys.argv[1], encoding="utf-8").read().splitlines()
got = open(sys.argv[2], encoding="utf-8").read().splitlines()
hdr = json.loads(want[0])
jcols = {f["name"] for f in hdr["schema"]["fields"]
         if f.get("metadata", {}).get("ARROW:extension:name") == "arrow.json"}
want, got = want[1:], got[1:]
bad = 0
if len(want) != len(got):
    print("row count: want %d got %d" % (len(want), len(got)))
    bad += 1

def same(a, b):
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, int) and isinstance(b, int):
        return a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b or abs(a - b) <= abs(a) * 1e-6
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return a == b

for i, (w, g) in enumerate(zip(want, got)):
    w, g = json.loads(w), json.loads(g)
    for c in jcols:
        if isinstance(w.get(c), str):
            w[c] = json.loads(w[c])
    if list(w.keys()) != list(g.keys()):
        print("row %d: columns %s vs %s" % (i, list(w.keys()), list(g.keys())))
        bad += 1
        continue
    for k in w:
        if not same(w[k], g[k]):
            bad += 1
            if bad <= 8:
                print("row %d column %s: want %.120r got %.120r" % (i, k, w[k], g[k]))
print("%d rows, %d differences" % (len(got), bad))
sys.exit(1 if bad else 0)
