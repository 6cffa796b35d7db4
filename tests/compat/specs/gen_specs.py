#!/usr/bin/env python3
"""Generate the oracle specs used by tests/compat/lance_reader.sh (deterministic).
Usage: gen_specs.py OUT_DIR   -> writes varied-2.0.json, varied-2.1.json, big-2.0.json, big-2.1.json"""
import json, random, sys, base64

def varied(n, rnd, u64max=2**64 - 1):
    ints = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
    rng = {"int8": (-128, 127), "int16": (-32768, 32767), "int32": (-2**31, 2**31 - 1),
           "int64": (-2**63, 2**63 - 1), "uint8": (0, 255), "uint16": (0, 65535),
           "uint32": (0, 2**32 - 1), "uint64": (0, u64max)}
    fields = [{"name": "id", "type": "int64", "nullable": False}]
    for t in ints:
        fields.append({"name": "s_" + t, "type": t})          # small range, bitpacking
        fields.append({"name": "x_" + t, "type": t})          # extremes, some nulls
    fields += [
        {"name": "b", "type": "bool"}, {"name": "bnn", "type": "bool", "nullable": False},
        {"name": "f32", "type": "float32"}, {"name": "f64", "type": "float64"},
        {"name": "dict_s", "type": "utf8"}, {"name": "text", "type": "large_utf8"},
        {"name": "bin", "type": "binary"}, {"name": "lbin", "type": "large_binary"},
        {"name": "doc", "type": "json"}, {"name": "allnull", "type": "int32"},
        {"name": "allnull_s", "type": "utf8"}, {"name": "const_i", "type": "int64", "nullable": False},
        {"name": "sparse", "type": "utf8"}, {"name": "dense_null", "type": "int64"},
    ]
    words = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa"]
    roles = ["user", "assistant", "system", "tool"]
    rows = []
    for i in range(n):
        r = {"id": i}
        for t in ints:
            lo, hi = rng[t]
            small = rnd.randint(max(lo, -5) if lo < 0 else 0, 60)
            r["s_" + t] = small if rnd.random() > 0.05 else None
            k = rnd.random()
            if k < 0.1: v = lo
            elif k < 0.2: v = hi
            elif k < 0.3: v = None
            else: v = rnd.randint(lo, hi)
            if v is not None and t in ("int64", "uint64"): v = str(v)
            r["x_" + t] = v
        r["b"] = None if i % 7 == 3 else (rnd.random() < 0.3)
        r["bnn"] = (i % 3 == 0)
        r["f32"] = None if i % 11 == 5 else round(rnd.uniform(-1000, 1000), 2)
        r["f64"] = None if i % 13 == 1 else rnd.choice([rnd.uniform(-1e9, 1e9), 0.5, -0.0, 1e300, 3.25])
        r["dict_s"] = None if i % 17 == 2 else rnd.choice(roles)
        r["text"] = " ".join(rnd.choice(words) for _ in range(rnd.randint(3, 30))) + " #%d" % i
        r["bin"] = {"base64": base64.b64encode(bytes(rnd.randrange(256) for _ in range(rnd.randint(0, 40)))).decode()} if i % 5 else None
        r["lbin"] = "payload-%d-" % i + "x" * rnd.randint(0, 100)
        r["doc"] = None if i % 9 == 4 else {"step": i, "role": rnd.choice(roles), "ok": rnd.random() < 0.5,
                                            "score": round(rnd.random(), 3), "tags": [rnd.choice(words) for _ in range(rnd.randint(0, 3))]}
        r["allnull"] = None
        r["allnull_s"] = None
        r["const_i"] = 42
        r["sparse"] = ("v%d" % i) if i % 97 == 0 else None
        r["dense_null"] = None if rnd.random() < 0.5 else rnd.randint(-100000, 100000)
        rows.append(r)
    return fields, rows

def big(n, rnd):
    fields = [{"name": "id", "type": "int64", "nullable": False},
              {"name": "blob", "type": "large_binary"},
              {"name": "note", "type": "utf8"},
              {"name": "doc", "type": "json"}]
    rows = []
    words = ["lorem", "ipsum", "dolor", "sit", "amet", "consectetur", "adipiscing", "elit"]
    for i in range(n):
        size = rnd.choice([300, 1000, 5000, 40000, 70000]) if i % 4 else 0
        blob = None if i % 10 == 7 else {"base64": base64.b64encode(bytes(((j * 31 + i) % 251) for j in range(size))).decode()}
        note = None if i % 6 == 1 else " ".join(rnd.choice(words) for _ in range(rnd.randint(40, 120)))
        doc = None if i % 8 == 3 else {"i": i, "text": " ".join(rnd.choice(words) for _ in range(rnd.randint(50, 200)))}
        rows.append({"id": i, "blob": blob, "note": note, "doc": doc})
    return fields, rows

def knobs(n, rnd):
    md = lambda **kw: {k.replace("_", "-").replace("lance-encoding-", "lance-encoding:"): v for k, v in kw.items()}
    fields = [{"name": "id", "type": "int64", "nullable": False},
              {"name": "z_text", "type": "utf8", "metadata": md(lance_encoding_compression="zstd")},
              {"name": "l_text", "type": "large_utf8", "metadata": md(lance_encoding_compression="lz4")},
              {"name": "z_int", "type": "int32", "metadata": md(lance_encoding_compression="zstd")},
              {"name": "bss_f", "type": "float64", "metadata": md(lance_encoding_bss="on")},
              {"name": "bss_f32", "type": "float32", "metadata": md(lance_encoding_bss="on", lance_encoding_compression="zstd")},
              {"name": "fz_int", "type": "int64", "metadata": md(lance_encoding_structural_encoding="fullzip")},
              {"name": "fz_text", "type": "utf8", "metadata": md(lance_encoding_structural_encoding="fullzip")},
              {"name": "fsst_text", "type": "binary", "metadata": md(lance_encoding_compression="fsst")},
              {"name": "nodict", "type": "utf8", "metadata": md(lance_encoding_dict_divisor="100000")},
              {"name": "u16s", "type": "uint16"}]
    words = ["agent", "tool_call", "observation", "thought", "final answer", "error: timeout", "retry"]
    rows = []
    for i in range(n):
        t = " ".join(rnd.choice(words) for _ in range(rnd.randint(1, 12)))
        rows.append({"id": i,
                     "z_text": None if i % 10 == 0 else t,
                     "l_text": t + str(i),
                     "z_int": None if i % 33 == 0 else rnd.randint(-1000000, 1000000),
                     "bss_f": None if i % 21 == 0 else rnd.uniform(-1, 1) * 10 ** rnd.randint(-5, 5),
                     "bss_f32": round(rnd.uniform(0, 100), 3),
                     "fz_int": None if i % 5 == 0 else rnd.randint(-2**40, 2**40),
                     "fz_text": None if i % 4 == 0 else t,
                     "fsst_text": None if i % 8 == 0 else t,
                     "nodict": rnd.choice(words),
                     "u16s": rnd.randint(0, 65535) if i % 2 else rnd.randint(0, 3)})
    return fields, rows

def main():
    out = sys.argv[1]
    for ver in ("2.0", "2.1"):
        f, r = varied(5000, random.Random(1))
        json.dump({"storage_version": ver, "fields": f, "rows": r}, open("%s/varied-%s.json" % (out, ver), "w"))
        f, r = varied(1100, random.Random(4), 2**63 - 1)
        json.dump({"storage_version": ver, "fields": f, "rows": r}, open("%s/small-%s.json" % (out, ver), "w"))
        f, r = knobs(3000, random.Random(3))
        json.dump({"storage_version": ver, "fields": f, "rows": r}, open("%s/knobs-%s.json" % (out, ver), "w"))
        f, r = big(120, random.Random(2))
        json.dump({"storage_version": ver, "fields": f, "rows": r}, open("%s/big-%s.json" % (out, ver), "w"))

main()
