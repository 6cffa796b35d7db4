#!/usr/bin/env python3
"""Deterministic test data for tests/compat/lance_compat.sh (python3 stdlib only).

  lance_compat_gen.py OUTDIR

writes, for each case NAME, OUTDIR/NAME.schema.json (SCHEMA.json for `pchronicle lance
write`), OUTDIR/NAME.jsonl (rows in the form `pchronicle lance dump` prints) and, where the
official writer is used too, OUTDIR/NAME.spec.json / NAME-2.0.spec.json (the oracle's
`write` spec format: int64/uint64 as strings, JSON columns as JSON text):

  big     200,000 rows, every type, nulls in every nullable column (scattered and in long
          runs), written by us in several fragments
  huge    values of 0 B .. 5 MiB in utf8 / large_utf8 / binary / large_binary / json
  jsonf   JSON documents for the JSON filter functions (ours vs official writer)
  mixed   12,000 rows of every type for the official writer (2.0 and 2.1), read by us
  extra   rows the official writer appends to a dataset we wrote
"""
import base64
import json
import os
import random
import struct
import sys

TYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
         "float32", "float64", "utf8", "large_utf8", "binary", "large_binary", "json"]
BITS = {"int8": 8, "int16": 16, "int32": 32, "int64": 64,
        "uint8": 8, "uint16": 16, "uint32": 32, "uint64": 64}
TEXT = ["", "a", "hello", "δέλτα", "tab\there", "quote\"back\\slash", "new\nline", "\u0001ctl",
        "emoji 😀", "日本語テキスト", "x" * 40, "mixed ünï çødé"]


def f32(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]


def value(rng, t, i):
    if t == "bool":
        return rng.random() < 0.5
    if t in BITS:
        b = BITS[t]
        if t.startswith("u"):
            lo, hi = 0, (1 << b) - 1
        else:
            lo, hi = -(1 << (b - 1)), (1 << (b - 1)) - 1
        r = rng.random()
        if r < 0.05:
            return lo
        if r < 0.10:
            return hi
        if r < 0.5:
            return rng.randint(max(lo, -1000), min(hi, 1000))
        return rng.randint(lo, hi)
    if t == "float32":
        return f32(rng.uniform(-1e6, 1e6)) if rng.random() < 0.9 else rng.choice([0.0, 1.0, -2.5, f32(0.1)])
    if t == "float64":
        r = rng.random()
        if r < 0.02:
            return rng.choice([0.0, -0.0, 1e300, -1e-300, 5e-324, "NaN", "Infinity", "-Infinity"])
        if r < 0.5:
            return rng.uniform(-1e9, 1e9)
        return round(rng.uniform(-100, 100), rng.randint(0, 6))
    if t in ("utf8", "large_utf8"):
        s = rng.choice(TEXT)
        return s + str(i) if rng.random() < 0.5 else s
    if t in ("binary", "large_binary"):
        n = rng.choice([0, 1, 3, 8, 17, 40])
        return {"base64": base64.b64encode(bytes(rng.getrandbits(8) for _ in range(n))).decode()}
    if t == "json":
        return doc(rng, i)
    raise ValueError(t)


def doc(rng, i):
    r = rng.random()
    if r < 0.1:
        return rng.choice(["scalar", 0, -7, 2.5, True, False, [], {}, None])
    tags = rng.sample(["x", "y", "z", "w", "v"], rng.randint(0, 4))
    d = {"n": i % 10, "kind": rng.choice(["alpha", "beta", "gamma"]), "tags": tags,
         "score": round(rng.random(), 3), "flag": rng.random() < 0.5}
    if rng.random() < 0.3:
        d["user"] = {"name": rng.choice(["bob", "eve", "ann"]), "age": rng.randint(1, 99)}
    if rng.random() < 0.2:
        d["big"] = rng.choice([5000000000, -129, 70000, 2 ** 53 + 1])
    if rng.random() < 0.1:
        d["text"] = rng.choice(TEXT)
    return d


def schema_for(types, nullable=True):
    fields = [{"name": "id", "type": "int64", "nullable": False}]
    for t in types:
        fields.append({"name": "c_" + t, "type": t, "nullable": nullable})
    return {"fields": fields, "metadata": {"producer": "lance_compat_gen"}}


def dumps(v):
    return json.dumps(v, ensure_ascii=False, separators=(",", ":"))


def row_text(row):
    """One input line: NaN/Infinity as strings (our input form)."""
    return dumps(row)


def write_case(out, name, schema, rows):
    with open(os.path.join(out, name + ".schema.json"), "w", encoding="utf-8") as f:
        f.write(dumps(schema))
    with open(os.path.join(out, name + ".jsonl"), "w", encoding="utf-8") as f:
        for r in rows:
            f.write(row_text(r) + "\n")


def spec_value(t, v):
    if v is None:
        return None
    if t in ("int64", "uint64"):
        return str(v)
    if t == "json":
        return dumps(v)
    if t in ("float32", "float64") and isinstance(v, str):
        return float(v.replace("Infinity", "inf"))  # json.dumps writes NaN/Infinity tokens
    return v


def write_spec(out, name, schema, rows, storage=None, appends=None):
    fields = []
    for f in schema["fields"]:
        g = dict(f)
        if f["type"] == "json":
            g["json_as_text"] = True
        fields.append(g)
    types = {f["name"]: f["type"] for f in schema["fields"]}

    def conv(r):
        return {k: spec_value(types[k], v) for k, v in r.items()}
    spec = {"fields": fields, "schema_metadata": schema.get("metadata", {}),
            "rows": [conv(r) for r in rows]}
    if appends:
        spec["appends"] = [[conv(r) for r in a] for a in appends]
    if storage:
        spec["storage_version"] = storage
    with open(os.path.join(out, name + ".spec.json"), "w", encoding="utf-8") as f:
        # NaN/Infinity are not JSON; the oracle (JSON.parse) could not read them
        f.write(json.dumps(spec, ensure_ascii=False, separators=(",", ":"), allow_nan=False))


def gen_rows(rng, types, n, null_every=11, runs=True, specials=True):
    rows = []
    for i in range(n):
        r = {"id": i - n // 2}
        for k, t in enumerate(types):
            c = "c_" + t
            nul = (i * 31 + k * 17) % null_every == 0
            if runs and 100000 <= i < 110000 and k % 3 == 0:
                nul = True
            if nul:
                if (i + k) % 2:
                    r[c] = None      # explicit null; otherwise the key is missing
                continue
            v = value(rng, t, i)
            if not specials and t in ("float32", "float64") and isinstance(v, str):
                v = 1.5
            r[c] = v
        rows.append(r)
    return rows


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)

    rng = random.Random(20240501)
    write_case(out, "big", schema_for(TYPES), gen_rows(rng, TYPES, 200000))

    # values from 0 bytes to several MiB (mini-block, full-zip, multi-page)
    var = ["utf8", "large_utf8", "binary", "large_binary", "json"]
    sizes = [0, 1, 255, 256, 4096, 65536, 1 << 20, 3 << 20, 5 << 20, 7, 300, 0]
    rows = []
    for i, n in enumerate(sizes):
        r = {"id": i}
        for k, t in enumerate(var):
            if (i + k) % 5 == 4:
                r["c_" + t] = None
                continue
            if t in ("utf8", "large_utf8"):
                r["c_" + t] = ("é" * (n // 2) + "z" * (n % 2))
            elif t == "json":
                r["c_" + t] = {"blob": "j" * n, "i": i}
            else:
                r["c_" + t] = {"base64": base64.b64encode(bytes((j * 7 + i) & 255 for j in range(n))).decode()}
        rows.append(r)
    write_case(out, "huge", schema_for(var), rows)

    # JSON filter data: identical rows for both writers
    rng = random.Random(7)
    jrows = [{"id": i, "doc": (None if i % 13 == 5 else doc(rng, i))} for i in range(3000)]
    jschema = {"fields": [{"name": "id", "type": "int64", "nullable": False},
                          {"name": "doc", "type": "json", "nullable": True}], "metadata": {}}
    write_case(out, "jsonf", jschema, jrows)
    write_spec(out, "jsonf", jschema, jrows)

    # official writer, every type, read by us (2.1 and 2.0)
    rng = random.Random(99)
    mrows = gen_rows(rng, TYPES, 12000, null_every=5, runs=False, specials=False)
    mschema = schema_for(TYPES)
    write_case(out, "mixed", mschema, mrows)
    write_spec(out, "mixed", mschema, mrows, storage="2.1")
    write_spec(out, "mixed-2.0", mschema, mrows, storage="2.0")

    # rows the official writer appends to our dataset
    rng = random.Random(5)
    erows = gen_rows(rng, TYPES, 3000, null_every=4, runs=False, specials=False)
    for r in erows:
        r["id"] += 1000000
    write_case(out, "extra", mschema, erows)
    write_spec(out, "extra", mschema, erows)


if __name__ == "__main__":
    main()
