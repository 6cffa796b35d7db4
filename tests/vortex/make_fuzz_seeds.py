#!/usr/bin/env python3
"""Regenerate the seed corpora of fuzz/vortex_*.c from Vortex files written by our writer
(tests/data/vortex/worked_example.vortex and the CLI test's rows file, passed as arguments).
Usage: make_fuzz_seeds.py FILE.vortex..."""
import os
import struct
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")


def regions(d):
    """(dtype, layout, footer) byte ranges, read from the postscript with a tiny FB walker."""
    ps_len = struct.unpack_from("<H", d, len(d) - 6)[0]
    ps = d[len(d) - 8 - ps_len:len(d) - 8]

    def table(buf, pos):
        vt = pos - struct.unpack_from("<i", buf, pos)[0]
        vlen = struct.unpack_from("<H", buf, vt)[0]
        return vt, vlen

    def field(buf, pos, vt, vlen, slot):
        o = 4 + 2 * slot
        if o + 2 > vlen:
            return None
        v = struct.unpack_from("<H", buf, vt + o)[0]
        return pos + v if v else None

    root = struct.unpack_from("<I", ps, 0)[0]
    vt, vlen = table(ps, root)
    out = {}
    for name, slot in (("dtype", 0), ("layout", 1), ("footer", 3)):
        f = field(ps, root, vt, vlen, slot)
        sub = f + struct.unpack_from("<I", ps, f)[0]
        svt, svlen = table(ps, sub)
        off = struct.unpack_from("<Q", ps, field(ps, sub, svt, svlen, 0))[0]
        ln = struct.unpack_from("<I", ps, field(ps, sub, svt, svlen, 1))[0]
        out[name] = d[off:off + ln]
    return out


def write(target, name, data):
    p = os.path.join(ROOT, "fuzz", "corpus", target)
    os.makedirs(p, exist_ok=True)
    with open(os.path.join(p, name), "wb") as f:
        f.write(data)


def main(files):
    for i, path in enumerate(files):
        d = open(path, "rb").read()
        write("vortex_postscript", "file%d" % i, d)
        write("vortex_postscript", "trunc%d" % i, d[: len(d) // 2] + d[-8:])
        r = regions(d)
        write("vortex_footer", "footer%d" % i, r["footer"])
        write("vortex_layout", "layout%d" % i, b"\x00" + r["layout"])
        write("vortex_layout", "dtype%d" % i, b"\x01" + r["dtype"])
    # array seeds: [dtype selector][u16 rows][segment] for the worked example's flat segments
    # (id: i64 = selector 0, name: utf8? = 7, items: list<struct<a:i32,b:utf8?>>? = 15)
    import tempfile
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import structure_check as sc
    d = open(files[0], "rb").read()
    with tempfile.TemporaryDirectory() as t:
        ps_len = struct.unpack_from("<H", d, len(d) - 6)[0]
        ps = sc.flatc(t, "postscript", d[len(d) - 8 - ps_len:len(d) - 8], "ps")
        f = ps["footer"]
        foot = sc.flatc(t, "footer", d[f["offset"]:f["offset"] + f["length"]], "f")
    segs = [d[s["offset"]:s["offset"] + s["length"]] for s in foot["segment_specs"]]
    for name, sel, seg in (("we_id", 0, segs[0]), ("we_name", 7, segs[1]), ("we_items", 15, segs[2])):
        write("vortex_array", name, bytes([sel]) + struct.pack("<H", 5) + seg)
    write("vortex_array", "empty", b"\x00\x00\x00")
    write("vortex_roundtrip", "seed0", bytes(range(64)))
    write("vortex_roundtrip", "seed1", b"\x01\x07" + bytes((i * 37) & 255 for i in range(300)))
    write("vortex_roundtrip", "seed2", b"\x02\x03" + bytes((i * 11) & 255 for i in range(120)))
    write("vortex_roundtrip", "seed3", b"\x03\x21" + bytes((255 - i) & 255 for i in range(200)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
