#!/usr/bin/env python3
"""Flatten ATIF documents (../shared/corpus/atif) into a steps-like table for bench/vortex.sh:
one JSON line per step, COPIES times (trajectory ids suffixed per copy), in trajectory order.
Writes OUT/steps.jsonl, OUT/lance_schema.json (pchronicle lance write) and OUT/vortex.schema.
Usage: steps.py CORPUS_DIR OUT_DIR COPIES"""
import glob
import json
import os
import sys

COLS = [("trajectory_id", "utf8", False), ("step_index", "int64", False), ("step_id", "int64", True),
        ("source", "utf8", True), ("timestamp", "utf8", True), ("model", "utf8", True),
        ("message", "utf8", True), ("reasoning", "utf8", True), ("tool_calls", "utf8", True),
        ("observation", "utf8", True), ("prompt_tokens", "int64", True),
        ("completion_tokens", "int64", True), ("cost_usd", "float64", True)]
VX = {"utf8": "utf8", "int64": "i64", "float64": "f64"}


def text(v):
    if v is None:
        return None
    return v if isinstance(v, str) else json.dumps(v, ensure_ascii=False, separators=(",", ":"))


def num(v, kind):
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    return int(v) if kind == "int64" and float(v).is_integer() else (float(v) if kind == "float64" else None)


def main(corpus, out, copies):
    docs = []
    for p in sorted(glob.glob(os.path.join(corpus, "**", "*.json"), recursive=True)):
        try:
            d = json.load(open(p, encoding="utf-8"))
        except (ValueError, UnicodeDecodeError):
            continue
        if isinstance(d, dict) and isinstance(d.get("steps"), list):
            docs.append((os.path.relpath(p, corpus), d))
    n = 0
    with open(os.path.join(out, "steps.jsonl"), "w", encoding="utf-8") as f:
        for c in range(copies):
            for rel, d in docs:
                tid = "%s#%d" % (d.get("session_id") or rel, c)
                for i, s in enumerate(d["steps"]):
                    if not isinstance(s, dict):
                        continue
                    m = s.get("metrics") or {}
                    row = {"trajectory_id": tid, "step_index": i, "step_id": num(s.get("step_id"), "int64"),
                           "source": text(s.get("source")), "timestamp": text(s.get("timestamp")),
                           "model": text(s.get("model_name")), "message": text(s.get("message")),
                           "reasoning": text(s.get("reasoning_content")), "tool_calls": text(s.get("tool_calls")),
                           "observation": text(s.get("observation")),
                           "prompt_tokens": num(m.get("prompt_tokens"), "int64"),
                           "completion_tokens": num(m.get("completion_tokens"), "int64"),
                           "cost_usd": num(m.get("cost_usd"), "float64")}
                    f.write(json.dumps(row, ensure_ascii=False, separators=(",", ":")) + "\n")
                    n += 1
    json.dump({"fields": [{"name": c, "type": t, "nullable": nl} for c, t, nl in COLS]},
              open(os.path.join(out, "lance_schema.json"), "w"))
    open(os.path.join(out, "vortex.schema"), "w").write(
        ",".join("%s:%s%s" % (c, VX[t], "?" if nl else "") for c, t, nl in COLS) + "\n")
    print("%d trajectories x %d copies, %d steps" % (len(docs), copies, n))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]))
