#!/usr/bin/env python3
"""bench/vortex_queries.py - queries and training reads on the Vortex projection (issue on
RFC-0006 §13-§14), beside the peers' numbers on the same corpora (not part of make test).

For each corpus of ../shared/bench/traj (real, scaled, rl), on the roots bench/vortex_traj.sh
built ($VX_DIR/roots/vortex-<corpus>) and the shared run's results ($BENCH_DIR/results:
q-<corpus>-noindex.json for official Lance, duckdb-q-<corpus>.json for DuckDB/Parquet):

  narrow scans   the queries of ../shared/bench/traj/vortex-hook.js (steps by source, tool
                 calls by function, the Lance run's time windows + models): one
                 `pchronicle-vortex sql` process per query, RUNS runs, median (--stats: the
                 bytes read and checked), and warm in one process with `bench-sql` (p50 with
                 the rows printed as CSV, and the engine-only p50 with the rows produced but
                 not formatted; the path each statement took), beside official Lance with
                 BTree indexes (q-<corpus>-btree.json) and DuckDB/Parquet: warm, engine and
                 process p50; warm is set beside warm, engine beside engine;
  RL             `pchronicle-vortex rl --format count` with and without prompt ids;
  SFT            `pchronicle-vortex sft --stats --format F` for each F of SFT_FORMATS (default
                 atif; the JSON lines repeat each conversation so far, so a long trajectory's
                 lines grow with the square of its steps: a read over SFT_TIMEOUT seconds, default
                 600, is stopped and reported as timed out; `count` reads each conversation once).

  BUILD=build VX_DIR=/tmp/vortex-traj BENCH_DIR=/tmp/traj-bench CORPORA="real scaled rl" \
  RUNS=5 SFT=1 bench/vortex_queries.py
Prints one markdown table per part (docs/sql.md and docs/training.md hold the results); with
JSON_OUT=FILE also writes every figure as JSON (`scans`, `training` rows; bench/report reads it).
"""
import json, os, re, statistics, subprocess, sys, time

BUILD = os.environ.get("BUILD", "build")
VX = os.path.join(BUILD, "pchronicle-vortex")
VX_DIR = os.environ.get("VX_DIR", "/tmp/vortex-traj")
BENCH_DIR = os.environ.get("BENCH_DIR", "/tmp/traj-bench")
CORPORA = os.environ.get("CORPORA", "real scaled rl").split()
RUNS = int(os.environ.get("RUNS", "5"))
SFT = os.environ.get("SFT", "1") == "1"
JSON_OUT = os.environ.get("JSON_OUT", "")
SFT_FORMATS = os.environ.get("SFT_FORMATS", "atif").split()
SFT_TIMEOUT = float(os.environ.get("SFT_TIMEOUT", "600"))
RESULT = {"kind": "vortex-queries", "bin": VX, "runs": RUNS, "corpora": CORPORA, "scans": [], "training": [],
          "loadavg_start": list(os.getloadavg())}


def run(args, discard=False, timeout=None):
    """(ms, stdout, stderr) of a process that must succeed; (None, "", "") when it ran past timeout."""
    t0 = time.time()
    try:
        r = subprocess.run(args, stdout=subprocess.DEVNULL if discard else subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, "", ""
    ms = (time.time() - t0) * 1000
    if r.returncode != 0:
        sys.exit("failed: %s: %s" % (" ".join(args[:3]), r.stderr[-2000:]))
    return ms, r.stdout, r.stderr


def peer(path, q, kind):
    try:
        d = json.load(open(path))["queries"][q]
        if kind == "warm":
            return d["warm"]["p50_ms"]
        if kind == "engine":
            return d["engine"]["p50_ms"]
        return d["cold"]["process_wall"]["p50_ms"]
    except (OSError, KeyError, TypeError):
        return None


def fmt(x):
    return "—" if x is None else ("%.1f" % x if x < 100 else "%.0f" % x)


def ratio(peers, ours):
    peers = [x for x in peers if x is not None]
    return "%.2f×" % (min(peers) / ours) if peers and ours else "—"


def bench_sql(root, stmts):
    """Warm in-process p50s (ms) of each statement through `bench-sql` (one process): rows printed, rows
    discarded (engine-only), and the paths taken."""
    qf = os.path.join(VX_DIR, "results", "bench-sql.sql")
    os.makedirs(os.path.dirname(qf), exist_ok=True)
    with open(qf, "w") as f:
        f.write("\n".join(stmts) + "\n")
    _, out, _ = run([VX, "bench-sql", root, "--queries", qf, "--repeat", str(max(RUNS, 5))])
    rows = [json.loads(l) for l in out.splitlines() if l.strip()]
    return ([r["p50_ms"] for r in rows], [r["engine_p50_ms"] for r in rows],
            sorted({r["path"].split(":")[1].strip() for r in rows}))


print("| corpus | query | ours per process (ms) | ours warm / engine, bench-sql (ms) | path | bytes read / checked | official Lance BTree warm / engine / process | DuckDB warm / engine / process | warm: faster peer ÷ ours | engine: faster peer ÷ ours | process: faster peer ÷ ours |")
print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
for c in CORPORA:
    root = os.path.join(VX_DIR, "roots", "vortex-" + c)
    lance = os.path.join(BENCH_DIR, "results", "q-%s-btree.json" % c)
    duck = os.path.join(BENCH_DIR, "results", "duckdb-q-%s.json" % c)
    if not os.path.isdir(root) or not os.path.exists(lance):
        print("| %s | (missing %s or %s) | | | | | | | | | |" % (c, root, lance))
        continue
    tm = json.load(open(lance))["params"].get("time_model") or []
    qs = {
        "narrow_source": ["SELECT source, count(*) AS n FROM steps GROUP BY source"],
        "narrow_function": ["SELECT function_name, count(*) AS n FROM tool_calls GROUP BY function_name"],
        "time_model": ["SELECT run_id, step_id, timestamp_ms, model_name, source FROM steps WHERE timestamp_ms >= %d "
                       "AND timestamp_ms < %d AND model_name = '%s'" % (p["from"], p["to"], p["model"].replace("'", "''"))
                       for p in tm],
    }
    for name, stmts in qs.items():
        if not stmts:
            continue
        lat, rd, ck = [], [], []
        for i in range(RUNS):
            ms, _, err = run([VX, "sql", root, stmts[i % len(stmts)], "--format", "csv", "--stats"])
            lat.append(ms)
            m = re.search(r"bytes_read=(\d+) bytes_checked=(\d+)", err)
            if m:
                rd.append(int(m.group(1)))
                ck.append(int(m.group(2)))
        warm, eng, paths = bench_sql(root, stmts)
        mb = "%.1f / %.1f MB" % (statistics.median(rd) / 1e6, statistics.median(ck) / 1e6) if rd else "?"
        ours_p, ours_w, ours_e = statistics.median(lat), statistics.median(warm), statistics.median(eng)
        lw, le, lp = peer(lance, name, "warm"), peer(lance, name, "engine"), peer(lance, name, "cold")
        dw, de, dp = peer(duck, name, "warm"), peer(duck, name, "engine"), peer(duck, name, "cold")
        RESULT["scans"].append({"corpus": c, "query": name, "sql": stmts, "process_p50_ms": ours_p, "warm_p50_ms": ours_w,
                                "engine_p50_ms": ours_e, "paths": paths,
                                "bytes_read": statistics.median(rd) if rd else None, "bytes_checked": statistics.median(ck) if ck else None,
                                "lance": {"warm_p50_ms": lw, "engine_p50_ms": le, "process_p50_ms": lp},
                                "duckdb": {"warm_p50_ms": dw, "engine_p50_ms": de, "process_p50_ms": dp}})
        print("| %s | %s | %s | %s / %s | %s | %s | %s / %s / %s | %s / %s / %s | %s | %s | %s |" % (
            c, name, fmt(ours_p), fmt(ours_w), fmt(ours_e), ", ".join(paths), mb, fmt(lw), fmt(le), fmt(lp), fmt(dw), fmt(de), fmt(dp),
            ratio([lw, dw], ours_w), ratio([le, de], ours_e), ratio([lp, dp], ours_p)))

print()
print("| corpus | read | seconds | rate |")
print("| --- | --- | --- | --- |")
for c in CORPORA:
    root = os.path.join(VX_DIR, "roots", "vortex-" + c)
    if not os.path.isdir(root):
        continue
    for label, extra in (("rl: completion ids + logprobs", ["--no-prompt-ids"]), ("rl: + prompt ids", [])):
        ms, out, err = run([VX, "rl", root, "--format", "count", "--stats"] + extra)
        m = re.search(r"tokens_per_s=(\d+)", err)
        RESULT["training"].append({"corpus": c, "read": "rl_prompt" if not extra else "rl", "seconds": ms / 1000,
                                   "tokens_per_s": int(m.group(1)) if m else None, "stats": err.strip()[-2000:]})
        print("| %s | %s | %.2f | %.1f M completion tokens/s |" % (c, label, ms / 1000, int(m.group(1)) / 1e6 if m else 0))
    for fmt in SFT_FORMATS if SFT else []:
        ms, _, err = run([VX, "sft", root, "--stats", "--format", fmt], discard=True, timeout=SFT_TIMEOUT)
        read = "sft" if fmt == "atif" else "sft_" + fmt
        if ms is None:
            RESULT["training"].append({"corpus": c, "read": read, "timed_out_s": SFT_TIMEOUT})
            print("| %s | %s | > %.0f (stopped) | — |" % (c, read, SFT_TIMEOUT))
            continue
        m = re.search(r"message_mib_per_s=([\d.]+)", err)
        RESULT["training"].append({"corpus": c, "read": read, "seconds": ms / 1000,
                                   "message_mib_per_s": float(m.group(1)) if m else None, "stats": err.strip()[-2000:]})
        print("| %s | %s | %.2f | %s MiB/s of message text |" % (c, read, ms / 1000, m.group(1) if m else "?"))

RESULT["loadavg_end"] = list(os.getloadavg())
if JSON_OUT:
    with open(JSON_OUT, "w") as f:
        json.dump(RESULT, f, indent=1)
        f.write("\n")
