#!/usr/bin/env python3
"""Times one new process per key: BIN get ROOT KEY [ARGS...], stdout to a file.

    cold_get.py --keys FILE --out DIR --keep K -- BIN get ROOT {} --compact

Every line of FILE is one key; "{}" in the command is replaced by it. The process is started
with posix_spawn and waited for (the timing floor is ~1 ms; node's spawnSync costs 2-6 ms here).
The outputs of the first K keys stay in DIR/<i>.json for the round-trip check; the others are
written to DIR/scratch (overwritten). One untimed run of the first key warms the binary.
Prints JSON: {"ms": [...], "status": [...], "out_bytes": [...], "stderr": {i: text}, "floor_ms": [...]}.
"""
import json
import os
import sys
import time


def run(argv, out_path):
    fd = os.open(out_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    err_path = out_path + ".err"
    efd = os.open(err_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        t0 = time.perf_counter()
        pid = os.posix_spawn(argv[0], argv, os.environ, file_actions=[(os.POSIX_SPAWN_DUP2, fd, 1), (os.POSIX_SPAWN_DUP2, efd, 2)])
        _, st = os.waitpid(pid, 0)
        ms = (time.perf_counter() - t0) * 1000.0
    finally:
        os.close(fd)
        os.close(efd)
    return ms, os.waitstatus_to_exitcode(st), err_path


def main():
    a = sys.argv[1:]
    if "--" not in a:
        sys.exit(__doc__)
    opts, cmd = a[: a.index("--")], a[a.index("--") + 1:]
    o = dict(zip(opts[::2], opts[1::2]))
    keys = [k for k in open(o["--keys"], encoding="utf-8").read().split("\n") if k]
    out = o["--out"]
    keep = int(o.get("--keep", "0"))
    os.makedirs(out, exist_ok=True)
    scratch = os.path.join(out, "scratch")
    floor = []
    for i in range(21):
        ms, _, _ = run(["/bin/true"], scratch)
        if i:
            floor.append(ms)
    run([x if x != "{}" else keys[0] for x in cmd], scratch)   # warm-up
    res = {"ms": [], "status": [], "out_bytes": [], "stderr": {}, "floor_ms": floor}
    for i, k in enumerate(keys):
        p = os.path.join(out, f"{i}.json") if i < keep else scratch
        ms, rc, errp = run([x if x != "{}" else k for x in cmd], p)
        res["ms"].append(ms)
        res["status"].append(rc)
        res["out_bytes"].append(os.path.getsize(p))
        if rc != 0:
            with open(errp, encoding="utf-8", errors="replace") as f:
                res["stderr"][str(i)] = f.read()[:2000]
    json.dump(res, sys.stdout)


if __name__ == "__main__":
    main()
