#!/usr/bin/env python3
"""Compare two Lance row dumps for tests/compat/lance_compat.sh.

  lance_compat_cmp.py [--rows-only] WANT GOT

Each file is a header line then one JSON object per row, as printed by the oracle
(`oracle.js dump`), by `pchronicle lance dump`, or (header-less with --input) our JSONL
input. Normalisation, so that the comparison is about values and not spelling:
  * header: the oracle's Arrow type names (Int64, Utf8, LargeBinary, …; Utf8 +
    ARROW:extension:name=arrow.json = json) are mapped to ours; the JSON extension key is
    dropped from field metadata; version, num_rows, names, nullability, metadata compared.
    Headers are compared only when both files have one (--input: WANT has none).
  * rows: JSON columns — the oracle prints JSON text strings, we print the JSON value —
    are parsed; float32 columns compare after rounding to float32 (the oracle prints the
    float32 widened to float64); other numbers compare exactly (int64/uint64 included);
    a key missing from an input row means null.
Exit status 1 with the first differences."""
import json
import struct
import sys

ARROW = {"Bool": "bool", "Int8": "int8", "Int16": "int16", "Int32": "int32", "Int64": "int64",
         "Uint8": "uint8", "Uint16": "uint16", "Uint32": "uint32", "Uint64": "uint64",
         "Float32": "float32", "Float64": "float64", "Utf8": "utf8", "LargeUtf8": "large_utf8",
         "Binary": "binary", "LargeBinary": "large_binary"}
EXT = "ARROW:extension:name"


def norm_header(h):
    fields = []
    for f in h["schema"]["fields"]:
        md = dict(f.get("metadata", {}))
        t = f["type"]
        if md.get(EXT) in ("arrow.json", "lance.json"):
            t = "json"
            del md[EXT]
        t = ARROW.get(t, t)
        fields.append({"name": f["name"], "type": t, "nullable": f["nullable"], "metadata": md})
    return {"version": h["version"], "num_rows": h["num_rows"],
            "schema": {"fields": fields, "metadata": h["schema"].get("metadata", {})}}


def f32(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]


def same(a, b, t):
    if t == "float32" and isinstance(a, (int, float)) and isinstance(b, (int, float)) \
            and not isinstance(a, bool) and not isinstance(b, bool):
        return f32(float(a)) == f32(float(b))
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b and (isinstance(a, float) == isinstance(b, float) or t in ("float32", "float64", "json"))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k], "json" if t == "json" else None) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y, t) for x, y in zip(a, b))
    return a == b


def main():
    args = sys.argv[1:]
    rows_only = "--rows-only" in args
    is_input = "--input" in args
    args = [a for a in args if not a.startswith("--")]
    want = open(args[0], encoding="utf-8").read().splitlines()
    got = open(args[1], encoding="utf-8").read().splitlines()
    ghdr = norm_header(json.loads(got[0]))
    bad = []
    if not is_input:
        whdr = norm_header(json.loads(want[0]))
        want = want[1:]
        if not rows_only and whdr != ghdr:
            bad.append("header: want %s\n        got  %s" % (json.dumps(whdr), json.dumps(ghdr)))
    got = got[1:]
    types = {f["name"]: f["type"] for f in ghdr["schema"]["fields"]}
    names = [f["name"] for f in ghdr["schema"]["fields"]]
    if len(want) != len(got):
        bad.append("row count: want %d got %d" % (len(want), len(got)))
    for i, (w, g) in enumerate(zip(want, got)):
        w, g = json.loads(w), json.loads(g)
        for c in names:
            if types[c] == "json" and not is_input and isinstance(w.get(c), str):
                w[c] = json.loads(w[c])
        if is_input:
            w = {c: w.get(c) for c in names}
        if list(w.keys()) != list(g.keys()):
            bad.append("row %d: columns %s vs %s" % (i, list(w.keys()), list(g.keys())))
            continue
        for c in names:
            if not same(w[c], g[c], types[c]):
                bad.append("row %d column %s: want %.150r got %.150r" % (i, c, w[c], g[c]))
        if len(bad) > 10:
            break
    if bad:
        print("\n".join(bad[:10]))
        return 1
    print("%d rows equal" % len(got))
    return 0


if __name__ == "__main__":
    sys.exit(main())
