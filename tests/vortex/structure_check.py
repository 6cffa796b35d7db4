#!/usr/bin/env python3
"""Independent structure check of Vortex files (vortex-format.md §1, §2, §6.1, §8 item 2).

Decodes the trailer with Python, then the postscript, dtype, layout and footer FlatBuffers and
the Array FlatBuffer of every flat segment with Debian's `flatc --json --raw-binary` against
the schemas in tests/vortex/fbs/ (written from the spec's field tables), and checks the
container rules: magic at both ends, version 1, postscript <= 65,527 bytes, regions inside
the body, segment map sorted and in bounds, declared alignments honoured physically, layout
and array encoding indices inside the spec tables, flat = one segment, chunked row counts
summing to the parent, buffer descriptors fitting before the Array FlatBuffer.

Usage: structure_check.py FILE.vortex...   (exit 0 = all files pass; prints one line each)
"""
import json
import os
import struct
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
FBS = os.path.join(HERE, "fbs")


class Bad(Exception):
    pass


def flatc(tmp, root, data, name):
    path = os.path.join(tmp, name + ".bin")
    with open(path, "wb") as f:
        f.write(data)
    r = subprocess.run(["flatc", "--json", "--raw-binary", "--strict-json", "--defaults-json",
                        "-o", tmp, os.path.join(FBS, root + ".fbs"), "--", path],
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise Bad("flatc could not decode %s: %s" % (name, (r.stderr or r.stdout).strip()[:200]))
    with open(os.path.join(tmp, name + ".json")) as f:
        return json.load(f)


def check_file(path):
    data = open(path, "rb").read()
    size = len(data)
    if size < 12 or data[:4] != b"VTXF" or data[-4:] != b"VTXF":
        raise Bad("magic")
    version, ps_len = struct.unpack_from("<HH", data, size - 8)
    if version != 1:
        raise Bad("version %d" % version)
    if ps_len > 65527 or ps_len > size - 12:
        raise Bad("postscript length %d" % ps_len)
    body_end = size - 8 - ps_len
    stats = {"segments": 0, "arrays": 0, "layouts": 0}
    with tempfile.TemporaryDirectory() as tmp:
        ps = flatc(tmp, "postscript", data[body_end:size - 8], "postscript")
        regions = {}
        for key in ("dtype", "layout", "footer"):
            seg = ps.get(key)
            if not seg:
                raise Bad("postscript lacks %s" % key)
            off, ln = seg["offset"], seg["length"]
            if off < 4 or off + ln > body_end:
                raise Bad("%s region outside the body" % key)
            regions[key] = data[off:off + ln]
        flatc(tmp, "dtype", regions["dtype"], "dtype")
        footer = flatc(tmp, "footer", regions["footer"], "footer")
        layout = flatc(tmp, "layout", regions["layout"], "layout")
        array_specs = [s["id"] for s in footer.get("array_specs", [])]
        layout_specs = [s["id"] for s in footer.get("layout_specs", [])]
        segs = footer.get("segment_specs")
        if segs is None:
            raise Bad("footer lacks segment_specs")
        prev = 0
        for i, s in enumerate(segs):
            if s["offset"] < prev:
                raise Bad("segment %d not sorted" % i)
            prev = s["offset"]
            if s["offset"] < 4 or s["offset"] + s["length"] > body_end:
                raise Bad("segment %d outside the body" % i)
            if s["offset"] % (1 << s["alignment_exponent"]):
                raise Bad("segment %d misaligned" % i)
            if s["compression"] or s["encryption"]:
                raise Bad("segment %d reserved fields set" % i)

        def walk_array(node, buffers, depth):
            stats["arrays"] += 1
            if depth > 64:
                raise Bad("array tree too deep")
            if node.get("encoding", 0) >= len(array_specs):
                raise Bad("array encoding index out of range")
            for b in node.get("buffers", []):
                if b >= len(buffers):
                    raise Bad("buffer index out of range")
            for c in node.get("children", []):
                walk_array(c, buffers, depth + 1)

        def walk_layout(node, depth):
            stats["layouts"] += 1
            if depth > 64:
                raise Bad("layout tree too deep")
            enc = node.get("encoding", 0)
            if enc >= len(layout_specs):
                raise Bad("layout encoding index out of range")
            lid = layout_specs[enc]
            kids = node.get("children", [])
            segments = node.get("segments", [])
            if lid == "vortex.flat":
                if len(segments) != 1 or kids:
                    raise Bad("flat layout with %d segments" % len(segments))
                sid = segments[0]
                if sid >= len(segs):
                    raise Bad("segment id out of range")
                s = segs[sid]
                seg = data[s["offset"]:s["offset"] + s["length"]]
                (fb_len,) = struct.unpack_from("<I", seg, len(seg) - 4)
                fb_start = len(seg) - 4 - fb_len
                if fb_start < 0:
                    raise Bad("array flatbuffer length")
                arr = flatc(tmp, "array", seg[fb_start:len(seg) - 4], "array%d" % sid)
                pos = 0
                for b in arr.get("buffers", []):
                    pos += b["padding"]
                    if pos % (1 << b["alignment_exponent"]) and s["alignment_exponent"] >= b["alignment_exponent"]:
                        raise Bad("buffer misaligned in segment %d" % sid)
                    if b["compression"]:
                        raise Bad("compressed buffer")
                    pos += b["length"]
                if pos > fb_start:
                    raise Bad("buffers overlap the array flatbuffer in segment %d" % sid)
                if "root" not in arr:
                    raise Bad("array without root")
                walk_array(arr["root"], arr.get("buffers", []), 1)
                stats["segments"] += 1
            elif lid == "vortex.chunked":
                if sum(k.get("row_count", 0) for k in kids) != node.get("row_count", 0):
                    raise Bad("chunked row counts do not sum")
            elif lid in ("vortex.struct", "vortex.stats", "vortex.dict"):
                if segments:
                    raise Bad("%s with segments" % lid)
            else:
                raise Bad("unexpected layout id %s" % lid)
            for k in kids:
                walk_layout(k, depth + 1)

        walk_layout(layout, 1)
    return stats


def main(argv):
    bad = 0
    for path in argv[1:]:
        try:
            st = check_file(path)
            print("ok   %s  (%d layouts, %d flat segments, %d array nodes)" %
                  (os.path.basename(path), st["layouts"], st["segments"], st["arrays"]))
        except (Bad, OSError, ValueError, KeyError, struct.error) as e:
            bad += 1
            print("FAIL %s: %s" % (path, e))
    return 1 if bad or len(argv) < 2 else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
