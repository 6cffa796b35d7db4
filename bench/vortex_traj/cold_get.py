#!/usr/bin/env python3
"""Times one new process per key: BIN get ROOT KEY [ARGS...], stdout to a file.

    cold_get.py --keys FILE --out DIR --keep K -- BIN get ROOT {} --compact

Every line of FILE is one key; "{}" in the command is replaced by it. The process is started
with posix_spawn and waited for (the timing floor is ~1 ms; node's spawnSync costs 2-6 ms here).
The outputs of the first K keys stay in DIR/<i>.json for the round-trip check; the others are
written to DIR/scratch (overwritten). One untimed run of the first key warms the binary.
Two floors are measured first, so that a report says how fast the machine was: an empty
process (/bin/true) and the same binary's `--help` (its loading and start-up: issue 18 asks
for it beside the cold get), 20 runs each; and the first write to a fresh 4 KiB page
(5 rounds of 1,024 pages of an anonymous mapping, microseconds a page): a cold process
first-touches every page it uses, and on some virtual machines that costs ~10 us a page.
Prints JSON: {"ms": [...], "status": [...], "out_bytes": [...], "stderr": {i: text},
"floor_ms": [...], "help_ms": [...], "first_touch_us": [...]}.
"""
import json
import mmap
import os
import sys
import time


def first_touch_us(pages=1024):
    """Microseconds a page for the first write to each page of a fresh anonymous mapping."""
    m = mmap.mmap(-1, pages * 4096)
    try:
        t0 = time.perf_counter()
        for i in range(0, pages * 4096, 4096):
            m[i] = 1
        return (time.perf_counter() - t0) * 1e6 / pages
    finally:
        m.close()


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


def floor_ms(argv, scratch):
    """20 timed runs of argv after one untimed."""
    return [run(argv, scratch)[0] for _ in range(21)][1:]


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
    floor = floor_ms(["/bin/true"], scratch)
    help_ms = floor_ms([cmd[0], "--help"], scratch)
    touch = [first_touch_us() for _ in range(5)]
    run([x if x != "{}" else keys[0] for x in cmd], scratch)   # warm-up
    res = {"ms": [], "status": [], "out_bytes": [], "stderr": {}, "floor_ms": floor, "help_ms": help_ms,
           "first_touch_us": touch}
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
