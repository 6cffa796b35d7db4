#!/usr/bin/env bash
# (PCH_VALGRIND_LONG: the valgrind pass of scripts/run-tests.sh starts this suite first.)
# pchronicle-vortex trajectory projection (RFC-0006 §9, §10, §13.4, §15, §21.1) end to end:
#   1. round trips: the shared corpus (../shared/corpus/atif, required) and tests/data/atif,
#      built at the default tiers, with --hot-max 64 --cold-max 1024 (cold lane and blob
#      packs) and with tiny cluster/file/pack/shard sizes; every exported document and every
#      `get` is JSON-equal to its input, integers and floats kept apart (1 is not 1.0);
#   2. the golden fixtures of tests/data/vortex-projection (README.md there): empty/null/
#      absent values, observations without source_call_id, multimodal parts with an embedded
#      or referenced PNG, token ids and logprobs, llm_call_count, is_copied_context, unknown
#      members, non-monotonic step ids, a shared session id (exit 3), embedded subagents,
#      rejected documents, asset paths that escape or are missing; a generated huge
#      trajectory (3,000 steps, a 2 MiB message) for the cold and external tiers and preview;
#   3. verify (and get/export) on injected corruption, each on a fresh copy of a good root;
#   4. atomicity: kill -9 of a build, a stale concurrent commit, export into an existing
#      directory;
#   5. usage errors and exit codes (0 ok, 1 failure, 2 usage, 3 several candidates);
#   6. the independent flatc structure check (tests/vortex/structure_check.py) of the data,
#      directory and blob files of the built roots.
# PCH_VALGRIND=1 (the valgrind pass of scripts/run-tests.sh): the shared corpus is skipped
# and the generated inputs are small.
set -u
cd "$(dirname "$0")/../.." || exit 1
BUILD=${PCH_BUILD:-build}
VX=${PCH_VORTEX_CLI:-$PWD/$BUILD/pchronicle-vortex}   # run-tests.sh sets it to a valgrind wrapper
CLI=${PCH_CLI:-$PWD/$BUILD/pchronicle}
VG=${PCH_VALGRIND:-0}
D=tests/data/vortex-projection
G=$D/golden
CORPUS=../shared/corpus/atif
T=$(mktemp -d "${TMPDIR:-/tmp}/pch-vxp.XXXXXX") || exit 1
bg=""
trap '[ -n "$bg" ] && kill -9 $bg 2>/dev/null; rm -rf "$T"' EXIT
n=0; fail=0
started=$SECONDS

for tool in python3 flatc b3sum; do
    command -v $tool >/dev/null || { echo "FAIL: $tool is required (scripts/bootstrap.sh installs it)"; exit 1; }
done
[ -x "$VX" ] || { echo "FAIL: $VX not built"; exit 1; }
[ -d "$G" ] || { echo "FAIL: $G missing"; exit 1; }

full() { [ "$VG" != 1 ]; }   # not in the valgrind pass (it must stay within a few minutes)
ok() { n=$((n + 1)); }
bad() { n=$((n + 1)); fail=$((fail + 1)); echo "FAIL $*"; }
# run NAME RC CMD...: stdout to $T/NAME.out, stderr to $T/NAME.err; the exit status must be RC
run() {
    local name=$1 want=$2 rc; shift 2
    "$@" <"$T/empty" >"$T/$name.out" 2>"$T/$name.err"; rc=$?
    if [ "$rc" = "$want" ]; then ok; return 0; fi
    bad "$name: exit $rc, expected $want"; head -n 5 "$T/$name.err" | sed 's/^/    /'; return 1
}
# chk NAME CMD...: CMD must succeed (its output is shown when it does not)
chk() {
    local name=$1 out; shift
    if out=$("$@" 2>&1); then ok; else bad "$name"; printf '%s\n' "$out" | head -n 8 | sed 's/^/    /'; fi
}
# has NAME FILE REGEX: FILE has a line matching REGEX (grep -E); hasf: a fixed string
has() {
    if grep -Eq -- "$3" "$2"; then ok; else bad "$1: no line matching /$3/ in:"; head -n 8 "$2" | cut -c1-300 | sed 's/^/    /'; fi
}
hasf() {
    if grep -Fq -- "$3" "$2"; then ok; else bad "$1: no line containing '$3' in:"; head -n 8 "$2" | cut -c1-300 | sed 's/^/    /'; fi
}
: >"$T/empty"

# ---------------------------------------------------------------- python helpers
cat >"$T/vp.py" <<'PY'
"""Helpers of tests/cli/vortex_projection.sh. JSON values are compared with numbers tagged
by their JSON form: an integer is never equal to a float (1 vs 1.0), floats by value and sign."""
import json, math, os, sys


def loads(b):
    return json.loads(b.decode("utf-8") if isinstance(b, bytes) else b,
                      parse_int=lambda s: ("i", int(s)), parse_float=lambda s: ("f", float(s)))


def load(path):
    with open(path, "rb") as f:
        return loads(f.read())


def at(v, pointer):
    for p in [x for x in pointer.split("/") if x != ""]:
        v = v[int(p)] if isinstance(v, list) else v[p]
    return v


def diff(a, b, ptr=""):
    """First difference as 'pointer: what', or None."""
    where = ptr or "/"
    if isinstance(a, tuple) or isinstance(b, tuple):
        if not (isinstance(a, tuple) and isinstance(b, tuple)):
            return "%s: %r vs %r" % (where, a, b)
        if a[0] != b[0]:
            kind = {"i": "int", "f": "float"}
            return "%s: %s %r vs %s %r" % (where, kind[a[0]], a[1], kind[b[0]], b[1])
        if a[1] != b[1] or (a[0] == "f" and math.copysign(1, a[1]) != math.copysign(1, b[1])):
            return "%s: %r vs %r" % (where, a[1], b[1])
        return None
    if type(a) is not type(b):
        return "%s: %s vs %s" % (where, type(a).__name__, type(b).__name__)
    if isinstance(a, dict):
        if set(a) != set(b):
            return "%s: members only in the input %s, only in the output %s" % (where, sorted(set(a) - set(b)), sorted(set(b) - set(a)))
        for k in a:
            d = diff(a[k], b[k], ptr + "/" + k.replace("~", "~0").replace("/", "~1"))
            if d:
                return d
        return None
    if isinstance(a, list):
        if len(a) != len(b):
            return "%s: %d vs %d items" % (where, len(a), len(b))
        for i, (x, y) in enumerate(zip(a, b)):
            d = diff(x, y, "%s/%d" % (ptr, i))
            if d:
                return d
        return None
    return None if a == b else "%s: %r vs %r" % (where, a, b)


def source(spec):
    """FILE or FILE#/json/pointer"""
    path, _, ptr = spec.partition("#")
    return at(load(path), ptr)


def cmd_tree(src, out, want):
    """every *.json under src is JSON-equal to out/<same path>; want = expected count or -"""
    n = bad = 0
    for d, dirs, files in os.walk(src):
        dirs.sort()
        for f in sorted(files):
            if not f.endswith(".json"):
                continue
            a = os.path.join(d, f)
            b = os.path.join(out, os.path.relpath(a, src))
            n += 1
            if not os.path.exists(b):
                print("missing from the export:", os.path.relpath(a, src)); bad += 1; continue
            dd = diff(load(a), load(b))
            if dd:
                print("differs:", os.path.relpath(a, src), dd); bad += 1
    extra = sum(1 for d, _, fs in os.walk(out) for f in fs if f.endswith(".json")) - n
    if extra:
        print("%d documents in the export that are not in the input" % extra); bad += 1
    if want != "-" and n != int(want):
        print("%d documents compared, expected %s" % (n, want)); bad += 1
    return bad == 0


def cmd_get(out, *specs):
    """out: `get --compact` output, one document a line; equal (as a multiset) to the specs"""
    docs = [loads(l) for l in open(out, "rb").read().splitlines() if l.strip()]
    want = [source(s) for s in specs]
    if len(docs) != len(want):
        print("%d documents printed, expected %d" % (len(docs), len(want))); return False
    for s, w in zip(specs, want):
        for i, d in enumerate(docs):
            if d is not None and diff(w, d) is None:
                docs[i] = None; break
        else:
            near = [diff(w, d) for d in docs if d is not None]
            print("no printed document equals %s (%s)" % (s, near[0] if near else "")); return False
    return True


def cmd_flip(path, where):
    """flip one byte: at an offset, at 'mid', or inside the first of 'text:MARKER|MARKER...'
    found stored as is (exit 2: none is)"""
    b = bytearray(open(path, "rb").read())
    if where.startswith("text:"):
        for marker in where[5:].split("|"):
            i = b.find(marker.encode())
            if i >= 0:
                break
        else:
            return 2
        i += len(marker) // 2
        b[i] ^= 0x01
    else:
        i = len(b) // 2 if where == "mid" else int(where)
        b[i] ^= 0xff
    open(path, "wb").write(b)
    return 0


def cmd_json(path, ptr):
    v = at(load(path), ptr)
    print(v[1] if isinstance(v, tuple) else (json.dumps(v) if isinstance(v, (dict, list)) else v))


def cmd_huge(out, nsteps, big):
    """a huge trajectory (and a second document sharing its big message) under out/in;
    raw content values in out/*.txt for b3sum"""
    nsteps, big = int(nsteps), int(big)
    os.makedirs(os.path.join(out, "in", "huge"), exist_ok=True)
    words = ["alpha", "beta", "gamma", "delta", "epsilon", "\u00e9t\u00e9", "\u4e2d\u6587"]
    msg = "".join("%06d %s\n" % (i, words[i % 7] * (1 + i % 5)) for i in range(big // 16))
    while len(msg.encode()) < big:
        msg += "x"
    cold = "cold lane content " * 1200            # 21,600 bytes: 8 KiB <= n < 256 KiB
    result = "R" * 300000 + "\n"                    # external tool result
    reasoning = "\u00fc" * 50000                    # 100,000 bytes of UTF-8: cold
    ntok = max(1000, nsteps * 20)
    steps = [{"step_id": 1, "source": "user", "message": msg},
             {"step_id": 2, "source": "agent", "message": cold, "reasoning_content": reasoning,
              "tool_calls": [{"tool_call_id": "big", "function_name": "dump", "arguments": {"n": 1}},
                             {"tool_call_id": "cold-args", "function_name": "write", "arguments": {"text": "A" * 20000, "n": 2.5}},
                             {"tool_call_id": "big-args", "function_name": "write", "arguments": {"ids": list(range(60000))}}],
              "observation": {"results": [{"source_call_id": "big", "content": result}]},
              "metrics": {"prompt_tokens": ntok, "completion_tokens": ntok,
                          "prompt_token_ids": [(i * 7919) % 200003 for i in range(ntok)],
                          "completion_token_ids": [(i * 104729) % 150001 for i in range(ntok)],
                          "logprobs": [-(i % 97) / 64.0 if i % 3 else -((i % 89) * 0.0123456789) for i in range(ntok)]},
              "llm_call_count": 1}]
    for i in range(3, nsteps + 1):
        s = {"step_id": i, "source": "agent" if i % 3 else "user",
             "timestamp": "2026-03-%02dT%02d:%02d:%02d.%03dZ" % (1 + i % 28, i % 24, i % 60, (i * 7) % 60, i % 1000),
             "message": "step %d: %s" % (i, words[i % 7] * (i % 9))}
        if i % 3:
            s["tool_calls"] = [{"tool_call_id": "c%d" % i, "function_name": "tool_%d" % (i % 4), "arguments": {"i": i, "f": i / 8.0}},
                               {"tool_call_id": "d%d" % i, "function_name": "shell", "arguments": {"cmd": "echo %d" % i}}]
            s["observation"] = {"results": [{"source_call_id": "d%d" % i, "content": "out %d" % i},
                                            {"source_call_id": "c%d" % i, "content": [{"type": "text", "text": "part %d" % i}]},
                                            {"content": "system note %d" % i}]}
            s["metrics"] = {"prompt_tokens": i, "completion_tokens": 3, "cost_usd": i * 1e-6,
                            "completion_token_ids": [i, i + 1, i + 2], "logprobs": [-0.5, -0.25 * (i % 4), -1.0 / (i + 1)]}
            s["llm_call_count"] = i % 4
            if i % 4 == 0:
                del s["metrics"]
        steps.append(s)
    doc = {"schema_version": "ATIF-v1.7", "session_id": "vp-huge", "agent": {"name": "generated", "version": "1"},
           "steps": steps, "final_metrics": {"total_steps": nsteps}}
    with open(os.path.join(out, "in", "huge", "trajectory.json"), "w") as f:
        f.write(json.dumps(doc, ensure_ascii=False))
    dup = {"schema_version": "ATIF-v1.7", "session_id": "vp-huge-dup", "agent": {"name": "generated", "version": "1"},
           "steps": [{"step_id": 1, "source": "user", "message": msg}]}
    with open(os.path.join(out, "in", "dup.json"), "w") as f:
        f.write(json.dumps(dup))
    for name, text in (("msg", msg), ("cold", cold), ("result", result), ("reasoning", reasoning)):
        with open(os.path.join(out, name + ".txt"), "wb") as f:
            f.write(text.encode())


def cmd_preview(out, src, msg_id, result_id):
    """get --preview of the huge trajectory: exactly the cold and external values are marked
    previews (external ones with their BLAKE3, cold ones with their size and a prefix), the
    rest equals the input"""
    got, want = load(out), load(src)
    expect = {"/steps/0/message": ("external", msg_id),
              "/steps/1/observation/results/0/content": ("external", result_id),
              "/steps/1/tool_calls/2/arguments": ("external", None),
              "/steps/1/message": ("cold", None),
              "/steps/1/reasoning_content": ("cold", None),
              "/steps/1/tool_calls/1/arguments": ("cold", None)}
    seen = {}
    def walk(g, w, ptr):
        if isinstance(g, dict) and "pchronicle_preview" in g:
            seen[ptr] = g
            return None
        if isinstance(g, dict) and isinstance(w, dict):
            if set(g) != set(w):
                return "%s: members differ" % ptr
            for k in g:
                d = walk(g[k], w[k], ptr + "/" + k)
                if d:
                    return d
            return None
        if isinstance(g, list) and isinstance(w, list):
            if len(g) != len(w):
                return "%s: lengths differ" % ptr
            for i, (x, y) in enumerate(zip(g, w)):
                d = walk(x, y, "%s/%d" % (ptr, i))
                if d:
                    return d
            return None
        return diff(w, g, ptr)
    d = walk(got, want, "")
    if d:
        print("preview differs beyond the previews:", d); return False
    if set(seen) != set(expect):
        print("previews at", sorted(seen), "expected", sorted(expect)); return False
    for ptr, (kind, cid) in expect.items():
        g, w = seen[ptr], at(want, ptr)
        if kind == "external":
            ok = set(g) == {"pchronicle_preview", "content_id"} and g["pchronicle_preview"] == "external" and \
                isinstance(g["content_id"], str) and len(g["content_id"]) == 71 and g["content_id"].startswith("blake3:") and \
                (cid is None or g["content_id"] == "blake3:" + cid)
        else:
            ok = set(g) == {"pchronicle_preview", "bytes", "preview"} and g["pchronicle_preview"] == "cold" and \
                isinstance(g["bytes"], tuple) and g["bytes"][0] == "i" and isinstance(g["preview"], str) and g["preview"] != ""
            if ok and isinstance(w, str):
                ok = g["bytes"][1] == len(w.encode()) and w.startswith(g["preview"]) and len(g["preview"]) < len(w)
        if not ok:
            print("%s: %s preview is %s" % (ptr, kind, str(g)[:200])); return False
    return True


def cmd_tiers(out):
    """three values in each tier for the corruption and deleted-pack checks (64 / 1024)"""
    os.makedirs(out, exist_ok=True)
    doc = {"schema_version": "ATIF-v1.7", "session_id": "vp-tiers", "agent": {"name": "generated", "version": "1"},
           "steps": [{"step_id": 1, "source": "user", "message": "hot"},
                     {"step_id": 2, "source": "agent", "message": "cold " * 100},
                     {"step_id": 3, "source": "agent", "message": "external " * 600,
                      "reasoning_content": "external reasoning " * 300}]}
    with open(os.path.join(out, "tiers.json"), "w") as f:
        f.write(json.dumps(doc))


def cmd_bulk(out, ndocs, nsteps):
    """many similar documents: input big enough for a build to be killed while it runs"""
    os.makedirs(out, exist_ok=True)
    ndocs, nsteps = int(ndocs), int(nsteps)
    for d in range(ndocs):
        steps = []
        for i in range(1, nsteps + 1):
            s = {"step_id": i, "source": "agent" if i % 2 else "user", "message": "doc %d step %d %s" % (d, i, "lorem ipsum " * (i % 23))}
            if i % 2:
                s["tool_calls"] = [{"tool_call_id": "c%d" % i, "function_name": "f%d" % (i % 5), "arguments": {"n": i, "x": i / 3.0}}]
                s["observation"] = {"results": [{"source_call_id": "c%d" % i, "content": "r%d " % i * (i % 40)}]}
                s["metrics"] = {"prompt_tokens": i, "completion_tokens": 8, "completion_token_ids": list(range(i, i + 8)),
                                "logprobs": [-(k + i % 7) / 16.0 for k in range(8)]}
            steps.append(s)
        with open(os.path.join(out, "doc-%04d.json" % d), "w") as f:
            f.write(json.dumps({"schema_version": "ATIF-v1.7", "session_id": "bulk-%04d" % d, "agent": {"name": "gen", "version": "1"}, "steps": steps}))


def cmd_keys(corpus, count):
    """document-root keys of the corpus that name exactly one document: KEY<TAB>PATH"""
    docs = []
    for d, dirs, files in os.walk(corpus):
        dirs.sort()
        for f in sorted(files):
            if f.endswith(".json"):
                p = os.path.join(d, f)
                docs.append((os.path.relpath(p, corpus).encode(), p, json.load(open(p, "rb"))))
    docs.sort()
    seen = {}
    def ids(t, root):
        out = []
        if isinstance(t.get("trajectory_id"), str): out.append(t["trajectory_id"])
        if root and isinstance(t.get("session_id"), str): out.append(t["session_id"])
        for c in t.get("subagent_trajectories") or []:
            out += ids(c, False)
        return out
    for _, p, t in docs:
        for k in set(ids(t, True)):
            seen[k] = seen.get(k, 0) + 1
    picks = []
    for _, p, t in docs:
        key = t.get("trajectory_id") if isinstance(t.get("trajectory_id"), str) else t.get("session_id")
        if isinstance(key, str) and seen.get(key) == 1 and ids(t, True).count(key) == (2 if t.get("session_id") == t.get("trajectory_id") else 1):
            picks.append((key, p))
    step = max(1, len(picks) // int(count))
    for key, p in picks[::step][:int(count)]:
        print("%s\t%s" % (key, p))


def cmd_deep(out, depth):
    """one document whose embedded subagents nest depth levels deep"""
    os.makedirs(out, exist_ok=True)
    def node(d):
        return {"schema_version": "ATIF-v1.7", "trajectory_id": "vp-deep-%d" % d, "agent": {"name": "generated", "version": "1"},
                "steps": [{"step_id": 1, "source": "user", "message": "level %d" % d}]}
    root = cur = node(0)
    root["session_id"] = "vp-deep"
    for d in range(1, int(depth)):
        cur["subagent_trajectories"] = [node(d)]
        cur = cur["subagent_trajectories"][0]
    with open(os.path.join(out, "deep.json"), "w") as f:
        f.write(json.dumps(root))


def cmd_sizes(path):
    """ROOT/manifests/<snap>.json: 'data_files blob_packs trajectory_shards content_shards'"""
    m = json.load(open(path))
    print(len(m["data_files"]), len(m["blob_packs"]), len(m["trajectory_directory"]), len(m["content_directory"]))


if __name__ == "__main__":
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "cmp":
        d = diff(source(args[0]), load(args[1]))
        if d:
            print("differs:", d)
        sys.exit(1 if d else 0)
    if cmd == "tree":
        sys.exit(0 if cmd_tree(*args) else 1)
    if cmd == "get":
        sys.exit(0 if cmd_get(*args) else 1)
    if cmd == "flip":
        sys.exit(cmd_flip(*args))
    if cmd == "json":
        cmd_json(*args); sys.exit(0)
    if cmd == "preview":
        sys.exit(0 if cmd_preview(*args) else 1)
    globals()["cmd_" + cmd](*args)
PY
PY=$(python3 -c 'import sys; print(sys.executable)')   # the interpreter itself: no wrapper per call
vp() { "$PY" "$T/vp.py" "$@"; }
manifest() { echo "$1/$(vp json "$1/CURRENT" /manifest)"; }   # manifest ROOT: path of its live manifest
mval() { vp json "$(manifest "$1")" "$2"; }                      # mval ROOT /json/pointer
b3() { b3sum --no-names "$1"; }

# build NAME ROOT ARGS...: a build that must succeed and reject nothing
build() {
    local name=$1 root=$2; shift 2
    run "$name" 0 "$VX" build --to "$root" "$@" || return 1
    if grep -q 'rejected' "$T/$name.err" && ! grep -q '(0 rejected)' "$T/$name.err"; then
        bad "$name: documents were rejected"; grep rejected "$T/$name.err" | head -5; return 1
    fi
    return 0
}
# roundtrip NAME ROOT SRC COUNT: export ROOT and compare every document with SRC
roundtrip() {
    local name=$1 root=$2 src=$3 count=$4
    rm -rf "$T/$name.export"
    run "$name-export" 0 "$VX" export --from "$root" --output-format atif --to "$T/$name.export" || return 1
    chk "$name: export JSON-equal to the input" vp tree "$src" "$T/$name.export" "$count"
}
verify_ok() {  # verify_ok NAME ROOT
    run "$1-verify" 0 "$VX" verify "$2" && [ ! -s "$T/$1-verify.out" ] && return 0
    [ -s "$T/$1-verify.out" ] && { bad "$1: verify printed findings"; head -5 "$T/$1-verify.out"; }
    return 1
}

# ================================================================ 1. round trips
if [ "$VG" = 1 ]; then
    echo "valgrind pass: the shared corpus round trip is skipped"
elif [ ! -d "$CORPUS" ]; then
    bad "the shared corpus $CORPUS is missing (it is checked out beside the repository)"
else
    ncorpus=$(find "$CORPUS" -name '*.json' | wc -l)
    build corpus "$T/corpus" --from "$CORPUS" && {
        roundtrip corpus "$T/corpus" "$CORPUS" "$ncorpus"
        verify_ok corpus "$T/corpus"
    }
    build corpus-tiers "$T/corpus-tiers" --from "$CORPUS" --hot-max 64 --cold-max 1024 --quiet && {
        roundtrip corpus-tiers "$T/corpus-tiers" "$CORPUS" "$ncorpus"
        verify_ok corpus-tiers "$T/corpus-tiers"
        [ "$(mval "$T/corpus-tiers" /counts/blob_packs)" -ge 1 ] && [ "$(mval "$T/corpus-tiers" /bytes/cold)" -gt 0 ] &&
            [ "$(mval "$T/corpus-tiers" /bytes/external)" -gt 0 ] && ok || bad "corpus-tiers: no cold or external content in the manifest"
        # get of a handful of document keys equals the source document
        vp keys "$CORPUS" 8 >"$T/corpus.keys"
        [ "$(wc -l <"$T/corpus.keys")" -ge 5 ] && ok || bad "corpus: fewer than 5 unique keys found"
        while IFS=$'\t' read -r key path; do
            run "corpus-get" 0 "$VX" get "$T/corpus-tiers" "$key" --compact &&
                chk "corpus get $key" vp get "$T/corpus-get.out" "$path"
        done <"$T/corpus.keys"
        # the content directory in shards of consecutive ids (each manifest entry gives the
        # first 8 bytes of its first and last id): ordered and disjoint, and a point read that
        # hydrates external values loads only the shards those ids fall in
        cut -f1 "$T/corpus.keys" | while read -r key; do "$VX" get "$T/corpus-tiers" "$key" --compact --stats 2>&1 >/dev/null | tail -n 2 | tr '\n' ' '; echo; done >"$T/corpus-tiers.stats"
        "$PY" - "$(manifest "$T/corpus-tiers")" "$T/corpus-tiers.stats" <<'PY' && ok || bad "corpus-tiers: content directory shards"
import json, re, sys
m = json.load(open(sys.argv[1]))
cd = m["content_directory"]
assert len(cd) >= 2, len(cd)
for a, b in zip(cd, cd[1:]):
    assert a["id_lo"] <= a["id_hi"] < b["id_lo"] <= b["id_hi"], (a, b)
whole = sum(e["bytes"] for e in cd) + max(e["bytes"] for e in m["trajectory_directory"])
seen = 0
for line in open(sys.argv[2]):
    h = int(re.search(r"blobs_hydrated=(\d+)", line).group(1))
    r, b = map(int, re.search(r" directory=(\d+)/(\d+)", line).groups())
    if h:
        seen += 1
        assert r - 1 <= h and b < whole, (line, whole)
assert seen, "no key hydrated an external value"
PY
    }
    # gets_and_checks NAME: every key of corpus.keys read from $T/NAME equals its document, and
    # `check` decodes every segment of its data files
    gets_and_checks() {
        while IFS=$'\t' read -r key path; do
            run "$1-get" 0 "$VX" get "$T/$1" "$key" --compact && chk "$1 get $key" vp get "$T/$1-get.out" "$path"
        done <"$T/corpus.keys"
        for f in "$T/$1"/data/default/*.vortex; do run "$1-check" 0 "$VX" check "$f"; done
    }
    # tiny clusters, files, packs and directory shards: several of each, same documents
    build corpus-small "$T/corpus-small" --from "$CORPUS" --hot-max 64 --cold-max 1024 --cluster-bytes 256K \
        --file-bytes 1M --pack-bytes 1M --shard-rows 64 --quiet && {
        roundtrip corpus-small "$T/corpus-small" "$CORPUS" "$ncorpus"
        verify_ok corpus-small "$T/corpus-small"
        read -r nd np ns _ <<<"$(vp sizes "$(manifest "$T/corpus-small")")"
        [ "$nd" -gt 1 ] && [ "$np" -gt 1 ] && [ "$ns" -gt 1 ] && ok ||
            bad "corpus-small: expected several data files ($nd), blob packs ($np) and directory shards ($ns)"
        # the key index (§6): a lookup by trajectory key reads one index shard and the directory
        # shard it names, not every shard, and finds what the exact (run, trajectory) key finds
        "$VX" sql "$T/corpus-small" "SELECT run_id, trajectory_key FROM runs ORDER BY trajectory_key" --format csv | tail -n +2 |
            awk 'NR % 50 == 7' >"$T/ks.keys"
        [ -s "$T/ks.keys" ] && ok || bad "corpus-small: no keys"
        while IFS=, read -r run traj; do
            run ks-traj 0 "$VX" get "$T/corpus-small" --trajectory-key "$traj" --compact --preview --stats &&
                run ks-exact 0 "$VX" get "$T/corpus-small" --run-id "$run" --trajectory-key "$traj" --compact --preview &&
                cmp -s "$T/ks-traj.out" "$T/ks-exact.out" && ok || bad "corpus-small: --trajectory-key $traj is not the trajectory of its exact key"
            "$PY" - "$(manifest "$T/corpus-small")" "$T/ks-traj.err" <<'PY' && ok || bad "corpus-small: a --trajectory-key lookup read more than one key shard and one directory shard"
import json, re, sys
m = json.load(open(sys.argv[1]))
ki = m["key_index"]
assert ki and all(a["hash_lo"] <= a["hash_hi"] < b["hash_lo"] for a, b in zip(ki, ki[1:])), ki
r, b = map(int, re.search(r" directory=(\d+)/(\d+)", open(sys.argv[2]).read()).groups())
assert r <= 2 and b < sum(e["bytes"] for e in m["trajectory_directory"]), (r, b)
PY
        done <"$T/ks.keys"
    }
    # damaged_frame_reads COPY NAME REGEX: flip a byte in the middle of the largest segment of
    # COPY's first data file (a copy of corpus-frames), then read every trajectory of
    # $T/c-block.keys: ok when at least one point read fails with a message matching REGEX and
    # at least one answers as corpus-frames does ($failed, $answered: the counts)
    damaged_frame_reads() {
        local c=$1 name=$2 re=$3 f at run traj
        f=$(ls "$c"/data/default/*.vortex | head -n 1)
        at=$("$VX" inspect "$f" | awk '/segment=/{for (i = 1; i <= NF; i++) {if ($i ~ /^offset=/) o=substr($i, 8); if ($i ~ /^bytes=/) b=substr($i, 7); if ($i ~ /^rows=/) r=substr($i, 6)} if (r + 0 >= 4 && b + 0 > best) {best = b + 0; at = o + int(b / 2)}} END {print at}')
        python3 -c 'import sys; p, at = sys.argv[1], int(sys.argv[2]); b = bytearray(open(p, "rb").read()); b[at] ^= 0x20; open(p, "wb").write(b)' "$f" "$at"
        failed=0 answered=0
        while IFS=, read -r run traj; do
            if "$VX" get "$c" --run-id "$run" --trajectory-key "$traj" --compact >"$T/$name.out" 2>"$T/$name.err"; then
                "$VX" get "$T/corpus-frames" --run-id "$run" --trajectory-key "$traj" --compact 2>/dev/null | cmp -s - "$T/$name.out" &&
                    answered=$((answered + 1))
            elif grep -Eq "$re" "$T/$name.err"; then
                failed=$((failed + 1))
            fi
        done <"$T/c-block.keys"
        [ "$failed" -ge 1 ] && [ "$answered" -ge 1 ] && ok
    }
    # zstd frames of 256 bytes (§7.2): every lane chunk is cut into many frames at trajectory
    # boundaries; export and get (a point read decompresses only the frames of its rows) give
    # every document back, check decodes every segment, the structure check (6.) reads them
    build corpus-frames "$T/corpus-frames" --from "$CORPUS" --frame-bytes 256 --quiet && {
        roundtrip corpus-frames "$T/corpus-frames" "$CORPUS" "$ncorpus"
        verify_ok corpus-frames "$T/corpus-frames"
        [ "$(mval "$T/corpus-frames" /layout/frame_bytes)" = 256 ] && ok || bad "corpus-frames: manifest layout.frame_bytes is not 256"
        gets_and_checks corpus-frames
        # partial segment reads (§13.4): a point read reads only the bytes of a long segment
        # that hold its rows' frames, the rows it decodes checked against the segment table's
        # row digests (§6 "Row digests"), and --stats says where the bytes went
        IFS=$'\t' read -r key path <"$T/corpus.keys"
        run corpus-frames-stats 0 "$VX" get "$T/corpus-frames" "$key" --compact --stats
        has "corpus-frames: a point read reads segments in part" "$T/corpus-frames-stats.err" ' segments_partial=[1-9]'
        has "corpus-frames: a point read checks its row" "$T/corpus-frames-stats.err" ' rows_checked=[1-9]'
        has "corpus-frames: --stats breaks the bytes down" "$T/corpus-frames-stats.err" '^stats: io current=1/[0-9]+ manifest=1/[0-9]+ directory=[1-9][0-9]*/[0-9]+ footer=[1-9][0-9]*/[0-9]+ segment_tables=[1-9][0-9]*/[0-9]+ lanes=[1-9][0-9]*/[0-9]+ '
        # ... and totals them: every read of the open and of the lanes, and the blobs' bytes
        python3 -c 'import re, sys
m = re.search(r"^stats: io (.*)$", open(sys.argv[1]).read(), re.M)
io = {k: (int(r), int(b)) for k, r, b in re.findall(r"(\w+)=(\d+)/(\d+)", m.group(1))}
parts = ("current", "manifest", "directory", "footer", "segment_tables", "lanes", "blobs")
assert io["total"] == tuple(sum(io[p][i] for p in parts) for i in (0, 1)), io' "$T/corpus-frames-stats.err" &&
            ok || bad "corpus-frames: --stats total is not the sum of its parts: $(grep '^stats: io' "$T/corpus-frames-stats.err")"
        # a flipped byte in the largest segment: the point read of the trajectory whose frames
        # hold it fails naming its file and row (the decoded lanes are not the row digest's) or
        # the frame that no longer decompresses, point reads of the others still answer,
        # verify finds it
        c=$T/c-block; rm -rf "$c"; cp -a "$T/corpus-frames" "$c"
        "$VX" sql "$T/corpus-frames" "SELECT run_id, trajectory_key FROM runs" --format csv | tail -n +2 >"$T/c-block.keys"
        damaged_frame_reads "$c" c-block '\.vortex: (.*cluster [0-9]+ row [0-9]+: the decoded lanes do not match the row.s digest|vortex zstd: frame [0-9]+ does not decompress)' ||
            bad "damaged frame: $failed point reads refused by their row digests, $answered answered (want >= 1 each)"
        run c-block-verify 1 "$VX" verify "$c"
        has "verify finds the damaged segment" "$T/c-block-verify.out" 'segment [0-9]+ \(bytes [0-9]+\.\.[0-9]+\) does not match its digest'
        build corpus-frames0 "$T/corpus-frames0" --from "$CORPUS" --frame-bytes 0 --quiet &&
            [ "$(du -sb "$T/corpus-frames/data" | cut -f1)" -gt "$(du -sb "$T/corpus-frames0/data" | cut -f1)" ] && ok ||
            bad "corpus-frames: 256-byte frames are not larger than one frame per chunk (were frames cut?)"
    }
    # zstd dictionaries (--zstd-dict, standard vortex.zstd: the frames of a lane chunk share a
    # trained dictionary): one 64M cluster, so the content lanes are long enough to train one;
    # every document comes back through export and point reads, check decodes every segment,
    # the data files are smaller than the same build without dictionaries, the layout records
    # the size
    build corpus-dict "$T/corpus-dict" --from "$CORPUS" --cluster-bytes 64M --zstd-dict 16K --quiet &&
        build corpus-nodict "$T/corpus-nodict" --from "$CORPUS" --cluster-bytes 64M --quiet && {
        roundtrip corpus-dict "$T/corpus-dict" "$CORPUS" "$ncorpus"
        verify_ok corpus-dict "$T/corpus-dict"
        [ "$(mval "$T/corpus-dict" /layout/zstd_dict_bytes)" = 16384 ] && [ "$(mval "$T/corpus-nodict" /layout/zstd_dict_bytes)" = 0 ] &&
            ok || bad "corpus-dict: manifest layout.zstd_dict_bytes is not 16384 (and 0 without --zstd-dict)"
        gets_and_checks corpus-dict
        dsz=$(du -sb "$T/corpus-dict/data" | cut -f1) nsz=$(du -sb "$T/corpus-nodict/data" | cut -f1)
        [ "$dsz" -lt "$nsz" ] && ok || bad "corpus-dict: data files $dsz bytes with dictionaries, $nsz without"
    }
fi
# the repository's ATIF fixtures (one references a missing image: embed fails, reference works)
build atif "$T/atif" --from tests/data/atif --quiet && {
    roundtrip atif "$T/atif" tests/data/atif 10
    verify_ok atif "$T/atif"
}
# frames of small documents (--frame-ratio): every fixture document is small next to a ratio of
# 1024 (frames of at most 1,024 x its logical bytes, cut away from its neighbours): all come
# back and verify; the layout records the ratio (16 by default); a local manifest lists each
# cluster's range without a digest (object-storage roots list it, tests/cli/s3_vortex.sh)
build atif-ratio "$T/atif-ratio" --from tests/data/atif --frame-bytes 4M --frame-ratio 1024 --cluster-bytes 64K --quiet && {
    roundtrip atif-ratio "$T/atif-ratio" tests/data/atif 10
    verify_ok atif-ratio "$T/atif-ratio"
    [ "$(mval "$T/atif-ratio" /layout/frame_ratio)" = 1024 ] && [ "$(mval "$T/atif" /layout/frame_ratio)" = 16 ] &&
        ok || bad "atif-ratio: manifest layout.frame_ratio is not 1024 (and 16 by default)"
    ca=$(mval "$T/atif" /data_files/0/clusters_at/0)
    [ "$(grep -o '"i"' <<<"$ca" | wc -l)" = 2 ] && [[ "$ca" != *blake3* ]] && ok ||
        bad "atif: a local manifest lists a cluster as $ca (want [offset, length])"
}
run atif-ratio-big 2 "$VX" build --from tests/data/atif --to "$T/atif-ratio-big" --frame-ratio 1025 --quiet
has atif-ratio-big "$T/atif-ratio-big.err" 'frame-ratio must be at most 1024'
full && build atif-tiers "$T/atif-tiers" --from tests/data/atif --hot-max 64 --cold-max 1024 --quiet &&
    roundtrip atif-tiers "$T/atif-tiers" tests/data/atif 10
run atif-embed-missing 1 "$VX" build --from tests/data/atif --to "$T/atif-embed" --assets embed --quiet
has atif-embed-missing "$T/atif-embed-missing.err" 'images/workspace\.png'
[ ! -e "$T/atif-embed/CURRENT" ] && ok || bad "atif-embed: a failed build published CURRENT"
build atif-mm "$T/atif-mm" --from tests/data/atif/multimodal --assets embed --quiet && {
    roundtrip atif-mm "$T/atif-mm" tests/data/atif/multimodal 1
    [ "$(mval "$T/atif-mm" /counts/blobs)" = 2 ] && ok || bad "atif-mm: expected 2 blobs (a.png, hello.wav), manifest says $(mval "$T/atif-mm" /counts/blobs)"
}
# a Storyline root and a Compact JSONL dataset as input
if ! full; then
    :
elif [ -x "$CLI" ]; then
    if "$CLI" import --input-format atif --output-format storyline --from tests/data/atif --to "$T/story" >/dev/null 2>&1 &&
       "$CLI" import --output-format compact-jsonl --from tests/data/atif --to "$T/cj" >/dev/null 2>&1; then
        ok
        build from-storyline "$T/from-story" --from "$T/story" --quiet && roundtrip from-storyline "$T/from-story" tests/data/atif 10
        build from-cj "$T/from-cj" --from "$T/cj" --quiet && roundtrip from-cj "$T/from-cj" tests/data/atif 10
        # the restore goes to a directory of its own: another writer holding TMPDIR's lock
        # (a compact-jsonl writer locks its output's parent) does not make the build fail
        mkdir -p "$T/busy-tmp"
        flock -n "$T/busy-tmp" sleep 30 & lockp=$!
        sleep 0.2
        TMPDIR=$T/busy-tmp build from-cj-busy-tmp "$T/from-cj-busy" --from "$T/cj" --quiet
        kill $lockp 2>/dev/null; wait $lockp 2>/dev/null
        [ -z "$(ls -A "$T/busy-tmp")" ] && ok || bad "from-cj-busy-tmp: scratch left in TMPDIR: $(ls -A "$T/busy-tmp")"
    else
        bad "pchronicle import (storyline / compact-jsonl) of tests/data/atif"
    fi
else
    bad "$CLI not built (needed for the Storyline and Compact JSONL inputs)"
fi

# ================================================================ 2. golden fixtures
ngolden=$(find "$G" -name '*.json' | wc -l)
build golden "$T/golden" --from "$G" && {
    has golden-not-rejected "$T/golden.err" "^built snapshot .*: $ngolden documents \\(0 rejected\\)"
    roundtrip golden "$T/golden" "$G" "$ngolden"
    verify_ok golden "$T/golden"
    [ "$(mval "$T/golden" /layout/assets)" = reference ] && [ "$(mval "$T/golden" /counts/blobs)" = 0 ] && ok ||
        bad "golden (--assets reference): expected no blobs"
}
# the same fixtures with the image embedded and the cold and external tiers in use
cp -r "$G" "$T/in-tiers"; vp tiers "$T/in-tiers/generated"
ntiers=$((ngolden + 1))
R=$T/base
build base "$R" --from "$T/in-tiers" --assets embed --hot-max 64 --cold-max 1024 && {
    roundtrip base "$R" "$T/in-tiers" "$ntiers"
    verify_ok base "$R"
    run base-inspect 0 "$VX" inspect "$R"
    has base-inspect "$T/base-inspect.out" 'assets embed'
    has base-inspect "$T/base-inspect.out" 'blob_packs=1 blobs=[0-9]+'
    # the PNG is stored once (three references, content addressed), under its BLAKE3
    png=$G/multimodal/images/dot.png
    [ "$(mval "$R" /layout/assets)" = embed ] && ok || bad "base: manifest layout.assets is not embed"
    [ "$(mval "$R" /counts/blobs)" = 3 ] && ok || bad "base: expected 3 blobs (the PNG and two external texts), manifest says $(mval "$R" /counts/blobs)"
    [ "$(mval "$R" /bytes/dedup_hits)" = 2 ] && ok || bad "base: the PNG is referenced three times: expected 2 dedup hits, manifest says $(mval "$R" /bytes/dedup_hits)"
    [ "$(mval "$R" /bytes/cold)" -gt 0 ] && ok || bad "base: no cold content"
    run base-dump-content 0 "$VX" dump "$(ls "$R"/directories/content/*.vortex | head -n 1)" --columns content_id
    id=$("$PY" -c 'import base64, sys; print(base64.b64encode(bytes.fromhex(sys.argv[1])).decode())' "$(b3 "$png")")
    hasf base-png-in-content-directory "$T/base-dump-content.out" "{\"content_id\":{\"base64\":\"$id\"}}"
    run base-dump-pack 0 "$VX" dump "$(ls "$R"/blobs/*.vortex | head -n 1)" --columns content_id,media_type,raw_length
    hasf base-png-in-pack "$T/base-dump-pack.out" "{\"content_id\":{\"base64\":\"$id\"},\"media_type\":\"image/png\",\"raw_length\":$(stat -c %s "$png")}"
}
# get: every key form (§13.4): trajectory key, run key, embedded subagents, shared session
while read -r key spec; do
    full || case $key in vp-nulls|vp-metrics|vp-multimodal|vp-sub-run|vp-sub-child-2|vp-tiers) ;; *) continue ;; esac
    run "get-$key" 0 "$VX" get "$R" "$key" --compact && chk "get $key" vp get "$T/get-$key.out" "$spec"
done <<EOF
vp-empty $G/empty-values.json
vp-nulls $G/null-members.json
vp-observations $G/observations.json
vp-metrics $G/metrics.json
vp-llm-calls-main $G/llm-call-count.json
vp-llm-calls $G/llm-call-count.json
vp-extras-main $G/extras.json
vp-non-monotonic $G/non-monotonic.json
vp-multimodal $G/multimodal/trajectory.json
vp-cont $G/continuation/trajectory.json
vp-cont-1 $G/continuation/trajectory.cont-1.json
vp-sub-root $G/subagents.json
vp-sub-run $G/subagents.json
vp-sub-child-1 $G/subagents.json#/subagent_trajectories/0
vp-sub-child-2 $G/subagents.json#/subagent_trajectories/1
vp-sub-grandchild $G/subagents.json#/subagent_trajectories/1/subagent_trajectories/0
vp-shared-b $G/shared-session/b.json
vp-tiers $T/in-tiers/generated/tiers.json
EOF
# pretty output (the default) is the same value
run get-pretty 0 "$VX" get "$R" vp-sub-root && chk "get (pretty) vp-sub-root" vp cmp "$G/subagents.json" "$T/get-pretty.out"
# a session id shared by three documents: all of them, exit 3, candidates on stderr
if run get-shared 3 "$VX" get "$R" vp-shared --compact; then
    chk "get vp-shared: the three documents" vp get "$T/get-shared.out" "$G/shared-session/a.json" "$G/shared-session/b.json" "$G/shared-session/c.json"
    has get-shared "$T/get-shared.err" "'vp-shared' matches 3 trajectories"
    gen=$(sed -n 's/.*trajectory_key=\([^ ]*\) document=shared-session\/c\.json (alone: --trajectory-key \1)$/\1/p' "$T/get-shared.err")
    [ "$gen" = "vp-shared@shared-session/c.json" ] && ok || bad "get vp-shared: c.json's key is '$gen', not its session id with its path"
    if [ -n "$gen" ]; then
        ok
        run get-generated 0 "$VX" get "$R" "$gen" --compact && chk "get $gen" vp get "$T/get-generated.out" "$G/shared-session/c.json"
        run get-generated-flag 0 "$VX" get "$R" --trajectory-key "$gen" --compact &&
            chk "get --trajectory-key $gen" vp get "$T/get-generated-flag.out" "$G/shared-session/c.json"
    else
        bad "get vp-shared: no trajectory key for shared-session/c.json among the candidates"; cat "$T/get-shared.err"
    fi
fi
run get-unknown 1 "$VX" get "$R" no-such-key
# a trajectory key that is also other documents' run key (issue 18 item 6): a plain key gives
# every candidate (exit 3, each line naming the --trajectory-key that selects it alone);
# --trajectory-key / --run-id / --session-id say which identity the key is
A=tests/data/atif
if run key-any 3 "$VX" get "$T/atif" NORMALIZED_SESSION_ID --compact; then
    [ "$(wc -l < "$T/key-any.out")" -ge 3 ] && ok || bad "key-any: fewer than 3 documents"
    has key-any "$T/key-any.err" "document=context-summarization/trajectory.json \(alone: --trajectory-key NORMALIZED_SESSION_ID@context-summarization/trajectory.json\)"
    has key-any "$T/key-any.err" "document=linear-history/trajectory.json \(alone: --trajectory-key NORMALIZED_SESSION_ID@linear-history/trajectory.json\)"
fi
run key-trajectory 0 "$VX" get "$T/atif" --trajectory-key NORMALIZED_SESSION_ID@context-summarization/trajectory.json --compact &&
    chk "get --trajectory-key NORMALIZED_SESSION_ID@context-summarization/trajectory.json" vp get "$T/key-trajectory.out" "$A/context-summarization/trajectory.json"
run key-run 3 "$VX" get "$T/atif" --run-id NORMALIZED_SESSION_ID --compact &&
    has key-run "$T/key-run.err" "document=linear-history/trajectory.cont-1.json"
run key-session 0 "$VX" get "$T/atif" --session-id test-session-context-summarization-summarization-1-answers --compact &&
    chk "get --session-id" vp get "$T/key-session.out" "$A/context-summarization/trajectory.summarization-1-answers.json"
run key-session-miss 1 "$VX" get "$T/atif" --session-id NORMALIZED_SESSION_ID_NOT --compact &&
    has key-session-miss "$T/key-session-miss.err" "no session 'NORMALIZED_SESSION_ID_NOT'"
run key-no-value 2 "$VX" get "$T/atif" --run-id
run key-two 2 "$VX" get "$T/atif" --run-id a --session-id b
run key-pair 0 "$VX" get "$T/atif" --run-id harbor-golden-run --trajectory-key traj_child_golden@harbor_multiagent_v1_7.json --compact
run key-pair-miss 1 "$VX" get "$T/atif" --trajectory-key traj_child_golden@harbor_multiagent_v1_7.json --run-id no-such-run &&
    has key-pair-miss "$T/key-pair-miss.err" "no trajectory 'traj_child_golden@harbor_multiagent_v1_7.json' in run 'no-such-run'"
# one producer trajectory id in two documents and two runs (the same document under another
# session id): each keeps its own key (the id with its path, docs/atif.md "Stable keys"); the
# plain id gives both, each candidate naming the --trajectory-key that selects it alone
mkdir -p "$T/in-dupkey"; cp "$A/harbor_multiagent_v1_7.json" "$T/in-dupkey/a.json"
python3 - "$A/harbor_multiagent_v1_7.json" "$T/in-dupkey/b.json" <<'PY2'
import json, sys
d = json.load(open(sys.argv[1])); d["session_id"] = "other-run"; json.dump(d, open(sys.argv[2], "w"))
PY2
run dupkey-build 0 "$VX" build --from "$T/in-dupkey" --to "$T/dupkey" --quiet
if run dupkey 3 "$VX" get "$T/dupkey" traj_root_golden --compact; then
    has dupkey "$T/dupkey.err" "document=a.json \(alone: --trajectory-key traj_root_golden@a.json\)"
    has dupkey "$T/dupkey.err" "document=b.json \(alone: --trajectory-key traj_root_golden@b.json\)"
fi
run dupkey-one 0 "$VX" get "$T/dupkey" --trajectory-key traj_root_golden@b.json --compact &&
    chk "get --trajectory-key traj_root_golden@b.json" vp get "$T/dupkey-one.out" "$T/in-dupkey/b.json"
run dupkey-pair 0 "$VX" get "$T/dupkey" --run-id other-run --trajectory-key traj_root_golden@b.json --compact &&
    chk "get --run-id other-run --trajectory-key traj_root_golden@b.json" vp get "$T/dupkey-pair.out" "$T/in-dupkey/b.json"
run dupkey-flag 1 "$VX" get "$T/dupkey" --trajectory-key traj_root_golden --compact   # a producer id is no key
echo NORMALIZED_SESSION_ID@context-summarization/trajectory.json > "$T/keys-traj.txt"
echo NORMALIZED_SESSION_ID > "$T/keys-any.txt"
run key-bench 0 "$VX" bench-get "$T/atif" --keys "$T/keys-traj.txt" --key-kind trajectory --warmup 0
run key-bench-any 1 "$VX" bench-get "$T/atif" --keys "$T/keys-any.txt" --warmup 0 &&
    has key-bench-any "$T/key-bench-any.err" "candidates"
run key-bench-kind 2 "$VX" bench-get "$T/atif" --keys "$T/keys-any.txt" --key-kind nope
# rejected documents are reported and skipped; only rejected documents: the build fails
mkdir -p "$T/in-rejected"; cp "$D"/rejected/*.json "$G/metrics.json" "$T/in-rejected/"
run rejected 0 "$VX" build --from "$T/in-rejected" --to "$T/rejected"
for f in "$D"/rejected/*.json; do has "rejected $(basename "$f")" "$T/rejected.err" "rejected $(basename "$f"):/"; done
has rejected "$T/rejected.err" ': 1 documents \(4 rejected\)'
mkdir -p "$T/in-rejected-only"; cp "$D"/rejected/*.json "$T/in-rejected-only/"
run rejected-only 1 "$VX" build --from "$T/in-rejected-only" --to "$T/rejected-only" --quiet
[ ! -e "$T/rejected-only/CURRENT" ] && ok || bad "rejected-only: CURRENT published"
# assets that escape the input root, absolute paths, URLs, missing files: an embed build into
# the good root fails with exit 1 and a clear message, and the previous snapshot is served
cp "$R/CURRENT" "$T/base.CURRENT"
while read -r name msg; do
    mkdir -p "$T/in-$name/run"; cp "$D/bad-assets/$name.json" "$T/in-$name/run/trajectory.json"
    cp "$G/multimodal/images/dot.png" "$T/in-$name/x.png"   # ../x.png exists, but outside the input root
    run "asset-$name" 1 "$VX" build --from "$T/in-$name/run" --to "$R" --assets embed --quiet
    has "asset-$name" "$T/asset-$name.err" "$msg"
    cmp -s "$R/CURRENT" "$T/base.CURRENT" && ok || bad "asset-$name: CURRENT changed"
    # preserve-reference keeps such paths as written
    { full || [ $name = escape ]; } && build "asset-$name-reference" "$T/ref-$name" --from "$T/in-$name/run" --assets reference --quiet &&
        roundtrip "asset-$name-reference" "$T/ref-$name" "$T/in-$name/run" 1
done <<'EOF'
escape \.\./x\.png.*(leaves|outside).*root|root.*\.\./x\.png
absolute /nonexistent/x\.png
url https://example\.com/x\.png
missing images/missing-message\.png
missing-in-result images/missing-result\.png
EOF
run base-after-bad-assets 0 "$VX" get "$R" vp-multimodal --compact &&
    chk "base after the failed builds" vp get "$T/base-after-bad-assets.out" "$G/multimodal/trajectory.json"
verify_ok base-after-bad-assets "$R"

# the huge trajectory: cold and external tiers at the default thresholds, dedup, preview
if [ "$VG" = 1 ]; then vp huge "$T/huge" 300 300000; else vp huge "$T/huge" 3000 2097152; fi
H=$T/huge/root
build huge "$H" --from "$T/huge/in" --quiet && {
    roundtrip huge "$H" "$T/huge/in" 2
    verify_ok huge "$H"
    [ "$(mval "$H" /counts/steps)" -ge 300 ] && [ "$(mval "$H" /counts/blobs)" = 3 ] && [ "$(mval "$H" /bytes/dedup_hits)" = 1 ] && ok ||
        bad "huge: expected the big message, result and arguments as 3 blobs, the copy as 1 dedup hit: $(vp json "$(manifest "$H")" /counts) $(vp json "$(manifest "$H")" /bytes)"
    run huge-get 0 "$VX" get "$H" vp-huge --compact --stats && chk "get vp-huge" vp get "$T/huge-get.out" "$T/huge/in/huge/trajectory.json"
    has huge-get-stats "$T/huge-get.err" '^stats: .* blobs_hydrated=[1-9]'
    run huge-preview 0 "$VX" get "$H" vp-huge --preview --compact --stats &&
        chk "get --preview vp-huge" vp preview "$T/huge-preview.out" "$T/huge/in/huge/trajectory.json" "$(b3 "$T/huge/msg.txt")" "$(b3 "$T/huge/result.txt")"
    has huge-preview-stats "$T/huge-preview.err" '^stats: .* blobs_hydrated=0 blob_bytes=0$'
}

# the same trajectory paged (§7.2): at a 64 KiB cluster target its steps take several rows
# (page_index 1.., page_count) and clusters, with 2 KiB zstd frames; get, preview, export and
# verify read them back
HP=$T/huge/paged
build huge-paged "$HP" --from "$T/huge/in" --cluster-bytes 65536 --frame-bytes 2K --quiet && {
    roundtrip huge-paged "$HP" "$T/huge/in" 2
    verify_ok huge-paged "$HP"
    [ "$(mval "$HP" /data_files/0/rows)" -gt "$(mval "$HP" /counts/trajectories)" ] && [ "$(mval "$HP" /counts/clusters)" -gt 2 ] && ok ||
        bad "huge-paged: expected more rows than trajectories and several clusters: $(vp json "$(manifest "$HP")" /counts)"
    run huge-paged-get 0 "$VX" get "$HP" vp-huge --compact --stats &&
        chk "get vp-huge (paged)" vp get "$T/huge-paged-get.out" "$T/huge/in/huge/trajectory.json"
    has huge-paged-stats "$T/huge-paged-get.err" '^stats: .* clusters_read=([2-9]|[1-9][0-9]+) '
    run huge-paged-preview 0 "$VX" get "$HP" vp-huge --preview --compact &&
        chk "get --preview vp-huge (paged)" vp preview "$T/huge-paged-preview.out" "$T/huge/in/huge/trajectory.json" "$(b3 "$T/huge/msg.txt")" "$(b3 "$T/huge/result.txt")"
}

# deeply nested subagents (§16.1 bounds recursion): a build rejects the document, or get and
# export give it back
vp deep "$T/deep/in" 65
"$VX" build --from "$T/deep/in" --to "$T/deep/root" --quiet </dev/null >/dev/null 2>"$T/deep.err"; rc=$?
if [ $rc = 0 ] && ! grep -q rejected "$T/deep.err"; then
    run deep-export 0 "$VX" export --from "$T/deep/root" --output-format atif --to "$T/deep.export" &&
        chk "65 nested subagents: export" vp tree "$T/deep/in" "$T/deep.export" 1
    run deep-get 0 "$VX" get "$T/deep/root" vp-deep-1 --compact &&
        chk "65 nested subagents: get of a child" vp get "$T/deep-get.out" "$T/deep/in/deep.json#/subagent_trajectories/0"
else
    ok   # refused at build time: fine
fi

# ================================================================ 3. corruption
# each on a fresh copy of the good root; verify exits 1 with a finding that names the file
corrupt() {  # corrupt NAME FILE-GLOB(relative to the root) ACTION
    local name=$1 rel=$2 action=$3 c=$T/c-$1 f
    rm -rf "$c"; cp -a "$R" "$c"
    f=$(cd "$c" && ls $rel 2>/dev/null | head -n 1)
    [ -n "$f" ] || { bad "corrupt-$name: no file $rel in the root"; return 1; }
    case $action in
        flip) vp flip "$c/$f" mid ;;
        truncate) truncate -s $(($(stat -c %s "$c/$f") / 2)) "$c/$f" ;;
        delete) rm "$c/$f" ;;
    esac
    run "corrupt-$name" 1 "$VX" verify "$c"
    has "corrupt-$name finding" "$T/corrupt-$name.out" "$(printf '%s' "$f" | sed 's/[.]/\\./g')"
}
corrupt data-flip 'data/*/*.vortex' flip
corrupt blob-flip 'blobs/*.vortex' flip
corrupt segments-flip 'data/*/*.segments' flip
corrupt segments-delete 'data/*/*.segments' delete
corrupt trajectory-directory-flip 'directories/trajectory/*.vortex' flip
corrupt content-directory-flip 'directories/content/*.vortex' flip
# the key index (§6), on a root with enough directory shards to have one: a flipped byte in an
# index shard fails a lookup that needs it (naming the file) and verify finds it; an index
# that lacks keys of the directory (another layout's, listed with its own digests and ranges,
# the manifest and CURRENT re-signed) is found by verify, as lookups by those keys would miss
KR=$T/keys-root; rm -rf "$KR" "$T/keys-other"
run keys-root 0 "$VX" build --from tests/data/atif --to "$KR" --shard-rows 2 --quiet
run keys-other 0 "$VX" build --from tests/data/atif --to "$T/keys-other" --shard-rows 3 --quiet
[ -n "$(ls "$KR"/directories/keys/*.vortex 2>/dev/null)" ] && ok || bad "keys-root: no key index written for $(ls "$KR"/directories/trajectory | wc -l) shards"
c=$T/c-keyflip; rm -rf "$c"; cp -a "$KR" "$c"
for f in "$c"/directories/keys/*.vortex; do vp flip "$f" mid; done
tk=$("$VX" sql "$KR" "SELECT trajectory_key FROM runs ORDER BY trajectory_key LIMIT 1" --format csv | tail -n 1)
run keyflip-get 1 "$VX" get "$c" --trajectory-key "$tk" --compact
has "a damaged key index shard is named" "$T/keyflip-get.err" 'directories/keys/.*digest'
run keyflip-verify 1 "$VX" verify "$c"
has "verify names the damaged key index shard" "$T/keyflip-verify.out" 'directories/keys/'
c=$T/c-keys; rm -rf "$c"; cp -a "$KR" "$c"
cp "$T"/keys-other/directories/keys/*.vortex "$c/directories/keys/"
"$PY" - "$c" "$T/keys-other" <<'PY' && ok || bad "could not swap the key index"
import json, os, subprocess, sys
c, o = sys.argv[1:3]
cur = json.load(open(os.path.join(c, "CURRENT")))
mp = os.path.join(c, cur["manifest"])
m = json.load(open(mp))
mo = json.load(open(os.path.join(o, json.load(open(os.path.join(o, "CURRENT")))["manifest"])))
assert mo["key_index"] and m["key_index"] != mo["key_index"], "no other key index to swap in"
m["key_index"] = mo["key_index"]
open(mp, "w").write(json.dumps(m))
cur["manifest_digest"] = "blake3:" + subprocess.check_output(["b3sum", "--no-names", mp], text=True).strip()
open(os.path.join(c, "CURRENT"), "w").write(json.dumps(cur, separators=(",", ":")))
PY
run corrupt-keys 1 "$VX" verify "$c"
has "corrupt-keys finding" "$T/corrupt-keys.out" 'directories/keys.*the key index lacks'

corrupt manifest-flip "$(vp json "$R/CURRENT" /manifest)" flip
corrupt data-truncate 'data/*/*.vortex' truncate
corrupt data-delete 'data/*/*.vortex' delete
corrupt blob-delete 'blobs/*.vortex' delete
# a missing blob pack: full reads of its content fail, preview does not read packs
c=$T/c-blob-delete
run deleted-pack-get 1 "$VX" get "$c" vp-tiers
run deleted-pack-export 1 "$VX" export --from "$c" --output-format atif --to "$T/c-blob-delete.export"
[ ! -e "$T/c-blob-delete.export" ] && ok || bad "deleted-pack-export: a failed export left its directory"
run deleted-pack-preview 0 "$VX" get "$c" vp-tiers --preview --compact
has deleted-pack-preview "$T/deleted-pack-preview.out" '"pchronicle_preview":"external","content_id":"blake3:[0-9a-f]{64}"'
run deleted-pack-other 0 "$VX" get "$c" vp-metrics --compact && chk "deleted pack: a document without external content" vp get "$T/deleted-pack-other.out" "$G/metrics.json"
# CURRENT pointing at the manifest with a wrong digest: verify and readers fail closed
c=$T/c-current; rm -rf "$c"; cp -a "$R" "$c"
sed -i "s/\"manifest_digest\":\"blake3:[0-9a-f]*\"/\"manifest_digest\":\"blake3:$(b3 "$G/metrics.json")\"/" "$c/CURRENT"
grep -Eq '"manifest_digest":"blake3:[0-9a-f]{64}"' "$c/CURRENT" && ! cmp -s "$c/CURRENT" "$R/CURRENT" && ok || bad "could not rewrite the digest in CURRENT"
run corrupt-current 1 "$VX" verify "$c"
has "corrupt-current finding" "$T/corrupt-current.out" '(CURRENT|manifests/[^ ]*\.json).*digest|digest.*(CURRENT|manifests/)'
run corrupt-current-get 1 "$VX" get "$c" vp-metrics
c=$T/c-nocurrent; rm -rf "$c"; cp -a "$R" "$c"; rm "$c/CURRENT"
run corrupt-no-current 1 "$VX" verify "$c"
has "corrupt-no-current finding" "$T/corrupt-no-current.out" 'CURRENT'
# snapshots and --snapshot (RFC-0006 §10.2, §12.4): two builds, both listed oldest first with
# CURRENT marked; the older one stays readable by id
P=$T/snap-root; rm -rf "$P"
run snap-1 0 "$VX" build --from tests/data/atif/multimodal --to "$P" --quiet
first=$(vp json "$P/CURRENT" /snapshot_id)
run snap-2 0 "$VX" build --from tests/data/atif --to "$P" --quiet
second=$(vp json "$P/CURRENT" /snapshot_id)
run snaps 0 "$VX" snapshots "$P"
has "snapshots: the first, no parent, 1 document" "$T/snaps.out" "^$first +[0-9TZ:.-]+ +- +1 +1 +[0-9.]+ *$"
has "snapshots: the second, its parent, CURRENT" "$T/snaps.out" "^$second +[0-9TZ:.-]+ +$first +10 +11 +[0-9.]+ +CURRENT$"
run snaps-json 0 "$VX" snapshots "$P" --json
"$PY" - "$T/snaps-json.out" "$first" "$second" <<'PY' && ok || bad "snapshots --json"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
assert [r["snapshot_id"] for r in rows] == sys.argv[2:4], rows
assert [r["current"] for r in rows] == [False, True] and rows[1]["parent_snapshot_id"] == sys.argv[2], rows
assert rows[0]["parent_snapshot_id"] is None and all(r["readable"] for r in rows), rows
PY
run snap-get-old 0 "$VX" get "$P" mm-run-1 --snapshot "$first" --compact &&
    chk "get --snapshot (the older snapshot)" vp get "$T/snap-get-old.out" "tests/data/atif/multimodal/trajectory.json"
run snap-get-old-miss 1 "$VX" get "$P" agent-001 --snapshot "$first"
run snap-get-new 0 "$VX" get "$P" agent-001 --compact
run snap-export-old 0 "$VX" export --from "$P" --output-format atif --to "$T/snap-old-out" --snapshot "$first"
[ "$(find "$T/snap-old-out" -name '*.json' | wc -l)" = 1 ] && ok || bad "export --snapshot: not the one document of the older snapshot"
run snap-verify-old 0 "$VX" verify "$P" --snapshot "$first"
run snap-bad-id 1 "$VX" get "$P" mm-run-1 --snapshot nope
has snap-bad-id "$T/snap-bad-id.err" "'nope' is not a snapshot id"
run snap-no-such 1 "$VX" verify "$P" --snapshot 000000000000-00000000
has snap-no-such "$T/snap-no-such.out" "no snapshot 000000000000-00000000"
# CURRENT lost (§15): readers refuse ("source unavailable"), repair binds a snapshot a person
# names, only after verifying it whole, and never over a readable CURRENT
cp "$P/CURRENT" "$T/current.saved"; rm "$P/CURRENT"
run lost-get 1 "$VX" get "$P" mm-run-1
has lost-get "$T/lost-get.err" "source unavailable: no CURRENT, though manifests/ holds snapshots"
run lost-sql 1 "$VX" sql "$P" "SELECT count(*) FROM runs"
has lost-sql "$T/lost-sql.err" "source unavailable"
run repair-usage 2 "$VX" repair "$P"
c=$T/snap-damaged; rm -rf "$c"; cp -a "$P" "$c"
f=$(cd "$c" && "$PY" -c 'import json, sys; print(json.load(open(sys.argv[1]))["data_files"][0]["path"])' "manifests/$second.json")
"$PY" -c 'import sys; p = sys.argv[1]; b = bytearray(open(p, "rb").read()); b[len(b) // 3] ^= 0x40; open(p, "wb").write(b)' "$c/$f"
run repair-damaged 1 "$VX" repair "$c" --manifest "$second"
has repair-damaged "$T/repair-damaged.err" "snapshot $second is not healthy"
[ -s "$T/repair-damaged.out" ] && [ ! -e "$c/CURRENT" ] && ok || bad "repair of a damaged snapshot: findings not printed, or CURRENT written"
run repair 0 "$VX" repair "$P" --manifest "$second"
cmp -s "$P/CURRENT" "$T/current.saved" && ok || bad "repair did not write the CURRENT the build wrote"
run repair-readable 1 "$VX" repair "$P" --manifest "$first"
has repair-readable "$T/repair-readable.err" "CURRENT is readable \\(snapshot $second\\)"
# CURRENT damaged: the same, and repair may name an older snapshot
printf '{"format":"pchronicle-vortex-current/v1","snapsh' >"$P/CURRENT"
run damaged-get 1 "$VX" get "$P" mm-run-1
has damaged-get "$T/damaged-get.err" "source unavailable: CURRENT is not valid JSON"
run repair-older 0 "$VX" repair "$P" --manifest "$first"
run repaired-get 0 "$VX" get "$P" mm-run-1 --compact
run repaired-miss 1 "$VX" get "$P" agent-001
run repaired-verify 0 "$VX" verify "$P"
run repaired-build 0 "$VX" build --from tests/data/atif --to "$P" --quiet
[ "$(vp json "$P/manifests/$(vp json "$P/CURRENT" /snapshot_id).json" /parent_snapshot_id)" = "$first" ] && ok ||
    bad "a build after repair does not descend from the repaired snapshot"

# per-segment digests (§9.5): a flipped byte in a message segment fails every read that
# decodes it, naming the file and its byte range, while a narrow scan that never reads the
# message lanes answers as the good root does
c=$T/c-seg; rm -rf "$c"; cp -a "$R" "$c"
f=$(ls "$c"/data/*/*.vortex | head -n 1)
at=$("$VX" inspect "$f" | awk '/ message_hot: /{m=1; next} m && /segment=/{for (i = 1; i <= NF; i++) {if ($i ~ /^offset=/) o=substr($i, 8); if ($i ~ /^bytes=/) b=substr($i, 7)} print o + int(b / 2); exit}')
if [ -n "$at" ]; then
    python3 -c 'import sys; p, at = sys.argv[1], int(sys.argv[2]); b = bytearray(open(p, "rb").read()); b[at] ^= 0x20; open(p, "wb").write(b)' "$f" "$at"
    run seg-narrow 0 "$VX" sql "$c" "SELECT source, count(*) FROM steps GROUP BY 1 ORDER BY 1" --format csv
    "$VX" sql "$R" "SELECT source, count(*) FROM steps GROUP BY 1 ORDER BY 1" --format csv >"$T/seg-narrow.want" 2>&1
    chk "a narrow scan past a damaged message segment answers as the good root" cmp -s "$T/seg-narrow.out" "$T/seg-narrow.want"
    run seg-wide 1 "$VX" sql "$c" "SELECT count(message) FROM steps"
    has "a read of the damaged segment says so" "$T/seg-wide.err" 'segment [0-9]+ \(bytes [0-9]+\.\.[0-9]+\) does not match its digest'
    hasf "a read of the damaged segment names its file" "$T/seg-wide.err" "$(basename "$f")"
    run seg-verify 1 "$VX" verify "$c"
    has "verify names the damaged segment" "$T/seg-verify.out" 'segment [0-9]+ \(bytes [0-9]+\.\.[0-9]+\) does not match its digest'
else
    bad "no message_hot segment found in $(basename "$f")"
fi

# a data file of another schema, with every digest made consistent (a hostile root, not a
# damaged one): readers and verify refuse it before any lane of it is read by its model type
c=$T/c-schema; rm -rf "$c"; cp -a "$R" "$c"
f=$(cd "$c" && ls data/*/*.vortex | head -n 1)
rows=$("$PY" -c 'import json, sys; m = json.load(open(sys.argv[1])); print([d for d in m["data_files"] if d["path"] == sys.argv[2]][0]["rows"])' "$c/$(vp json "$c/CURRENT" /manifest)" "$f")
"$PY" -c 'import json, sys; [print(json.dumps({"x": i})) for i in range(int(sys.argv[1]))]' "$rows" >"$T/foreign.jsonl"
rm "$c/$f" && "$VX" convert --from "$T/foreign.jsonl" --to "$c/$f" --chunk-rows 100000000 >/dev/null 2>&1 || bad "could not write the foreign file"
m=$(vp json "$c/CURRENT" /manifest)
"$PY" - "$c" "$m" "$f" <<'PY'
import json, os, subprocess, sys
root, man, rel = sys.argv[1:4]
def b3(data): return "blake3:" + subprocess.run(["b3sum", "--no-names", "-"], input=data, capture_output=True, check=True).stdout.decode().split()[0]
data = open(os.path.join(root, rel), "rb").read()
m = json.load(open(os.path.join(root, man)))
for d in m["data_files"]:
    if d["path"] != rel: continue
    d.pop("segments", None)
    d["bytes"], d["digest"], d["clusters"], d["cluster_rows"] = len(data), b3(data), 1, [d["rows"]]
    d["clusters_at"] = [[4, 1, b3(data[4:5])]]
    d["tail"] = [5, len(data) - 5, b3(data[5:])]
json.dump(m, open(os.path.join(root, man), "w"))
PY
sed -i "s/\"manifest_digest\":\"blake3:[0-9a-f]*\"/\"manifest_digest\":\"blake3:$(b3 "$c/$m")\"/" "$c/CURRENT"
run schema-sql 1 "$VX" sql "$c" "SELECT source, count(*) FROM steps GROUP BY 1"
has "a foreign data file fails the narrow scan" "$T/schema-sql.err" "not the projection's data-file schema"
run schema-verify 1 "$VX" verify "$c"
has "verify names the foreign data file" "$T/schema-verify.out" "$(basename "$f").*not the projection's data-file schema"

# staging/ (RFC-0006 §11.5, §15): a writer that dies leaves its scratch directory; the next
# writer removes every one that no live writer holds (each holds a flock on its own) and
# keeps the one a live writer holds
S=$T/stage-root; rm -rf "$S"
run stage-first 0 "$VX" build --from tests/data/atif --to "$S" --quiet
mkdir -p "$S/staging/00dead/data" "$S/staging/00live"
head -c 200000 /dev/zero >"$S/staging/00dead/data/x.vortex"
flock -o "$S/staging/00live" sleep 60 & holder=$!     # -o: flock itself holds the lock, not sleep
for _ in $(seq 50); do flock -n "$S/staging/00live" true || break; sleep 0.1; done
run stage-next 0 "$VX" build --from tests/data/atif --to "$S"
hasf "build: the abandoned staging directory removed, and said" "$T/stage-next.err" "removed 1 staging directories (0.2 MiB)"
[ ! -e "$S/staging/00dead" ] && ok || bad "an abandoned staging directory was left"
[ -d "$S/staging/00live" ] && ok || bad "a live writer's staging directory was removed"
pkill -P "$holder" sleep; kill "$holder" 2>/dev/null; wait "$holder" 2>/dev/null
run stage-after-live 0 "$VX" build --from tests/data/atif --to "$S" --quiet
[ ! -e "$S/staging/00live" ] && ok || bad "a staging directory whose writer ended was left"
# builds killed with SIGKILL at several points once they have made their staging directory:
# each leaves it (and the root as it was); the next build leaves none
before=$(cat "$S/CURRENT"); finished=0
for t in 0 0.05 0.1; do
    old=$(ls "$S/staging")
    "$VX" build --from "$CORPUS" --to "$S" --quiet >/dev/null 2>&1 & pid=$!
    new=
    for _ in $(seq 1000); do
        new=$(ls "$S/staging" | grep -vxF -e "$old" || true)
        [ -n "$new" ] && break; sleep 0.01
    done
    sleep "$t"
    if kill -9 "$pid" 2>/dev/null; then
        wait "$pid" 2>/dev/null
        [ -n "$new" ] && [ -d "$S/staging/$new" ] && ok || bad "a build killed at +$t s left no staging directory ($new)"
    else wait "$pid"; finished=1; echo "note: the build finished before its kill at +$t s"
    fi
done
[ "$finished" = 1 ] || [ "$(cat "$S/CURRENT")" = "$before" ] && ok || bad "killed builds changed CURRENT"
run stage-killed-verify 0 "$VX" verify "$S"
run stage-after-kill 0 "$VX" build --from tests/data/atif --to "$S" --quiet
[ -z "$(find "$S/staging" -mindepth 1 -maxdepth 1 -type d)" ] && ok ||
    bad "staging after killed builds and one more: $(ls "$S/staging")"
run stage-final-verify 0 "$VX" verify "$S"

# a directory that holds a trajectory key twice (shard 0 copied over shard 1, digests made
# consistent): keys are unique in a snapshot (RFC-0006 §5.2, docs/atif.md), so verify and
# the readers refuse it, whether the fences were copied too (out of order) or not (rows
# that do not match their fences)
run dupkey-base 0 "$VX" build --from tests/data/atif --to "$T/c-dupkey-base" --shard-rows 1 --quiet
for fences in keep copy; do
    c=$T/c-dupkey-$fences; rm -rf "$c"; cp -a "$T/c-dupkey-base" "$c"
    "$PY" - "$c" "$fences" <<'PY' || bad "could not write a directory holding a key twice"
import json, os, subprocess, sys
root, fences = sys.argv[1:3]
def b3(data): return "blake3:" + subprocess.run(["b3sum", "--no-names", "-"], input=data, capture_output=True, check=True).stdout.decode().split()[0]
c = json.load(open(os.path.join(root, "CURRENT")))
p = os.path.join(root, c["manifest"])
m = json.load(open(p))
d0, d1 = m["trajectory_directory"][:2]
data = open(os.path.join(root, d0["path"]), "rb").read()
open(os.path.join(root, d1["path"]), "wb").write(data)
d1.update(bytes=len(data), digest=b3(data))
if fences == "copy": d1.update(first_key=d0["first_key"], last_key=d0["last_key"])
json.dump(m, open(p, "w"))
c["manifest_digest"] = b3(open(p, "rb").read())
open(os.path.join(root, "CURRENT"), "w").write(json.dumps(c) + "\n")
PY
    run dupkey-verify-$fences 1 "$VX" verify "$c"
    run dupkey-export-$fences 1 "$VX" export --from "$c" --output-format atif --to "$T/dupkey-out-$fences"
done
has "verify: a key held twice, fences kept" "$T/dupkey-verify-keep.out" "keys do not match the manifest's fence keys"
has "verify: a key held twice, fences copied" "$T/dupkey-verify-copy.out" "fence keys are not in order"
has "export refuses a key held twice, fences kept" "$T/dupkey-export-keep.err" "keys do not match the manifest's fence keys"
has "export refuses a key held twice, fences copied" "$T/dupkey-export-copy.err" "fence keys are not in order"

# a root built before segment tables (no "segments" in its manifest) is read through its
# cluster digests: same answers, and a damaged cluster still fails the read
c=$T/c-old; rm -rf "$c"; cp -a "$R" "$c"
m=$(vp json "$c/CURRENT" /manifest)
# (such a root lists each cluster's digest; roots with segment tables list only its range)
python3 - "$c" "$m" <<'PY' || bad "could not write a root without segment tables"
import json, os, subprocess, sys
root, man = sys.argv[1:3]
def b3(data): return "blake3:" + subprocess.run(["b3sum", "--no-names", "-"], input=data, capture_output=True, check=True).stdout.decode().split()[0]
p = os.path.join(root, man)
m = json.load(open(p))
for d in m["data_files"]:
    d.pop("segments")
    data = open(os.path.join(root, d["path"]), "rb").read()
    # a local build lists no cluster digests (its reads are checked by the segment tables;
    # object storage roots list them, tests/cli/s3_vortex.sh): a root from before the
    # segment tables listed each cluster's, the digest of its bytes
    assert all(len(c) == 2 for c in d["clusters_at"]), d["clusters_at"][:2]
    d["clusters_at"] = [[c[0], c[1], b3(data[c[0]:c[0] + c[1]])] for c in d["clusters_at"]]
json.dump(m, open(p, "w"))
PY
rm "$c"/data/*/*.segments
sed -i "s/\"manifest_digest\":\"blake3:[0-9a-f]*\"/\"manifest_digest\":\"blake3:$(b3 "$c/$m")\"/" "$c/CURRENT"
# the same without the cluster digests: nothing would check a cluster read, so it is refused
c2=$T/c-old-nodig; rm -rf "$c2"; cp -a "$c" "$c2"
python3 -c 'import json, sys; p = sys.argv[1]; m = json.load(open(p)); [d.update(clusters_at=[c[:2] for c in d["clusters_at"]]) for d in m["data_files"]]; json.dump(m, open(p, "w"))' "$c2/$m"
sed -i "s/\"manifest_digest\":\"blake3:[0-9a-f]*\"/\"manifest_digest\":\"blake3:$(b3 "$c2/$m")\"/" "$c2/CURRENT"
run old-nodig 1 "$VX" sql "$c2" "SELECT count(*) FROM steps"
has "a cluster without a digest and no segment table is refused" "$T/old-nodig.err" 'needs a segment table'
run old-verify 0 "$VX" verify "$c"
# a cluster digest the manifest gets wrong: verify names the cluster; a local read, checked by
# the segment table, still answers
c3=$T/c-wrongdig; rm -rf "$c3"; cp -a "$R" "$c3"
python3 -c 'import json, sys; p = sys.argv[1]; m = json.load(open(p)); c = m["data_files"][0]["clusters_at"][0]; c[2:] = ["blake3:" + "0" * 64]; json.dump(m, open(p, "w"))' "$c3/$m"
sed -i "s/\"manifest_digest\":\"blake3:[0-9a-f]*\"/\"manifest_digest\":\"blake3:$(b3 "$c3/$m")\"/" "$c3/CURRENT"
run wrongdig-verify 1 "$VX" verify "$c3"
has "verify names a cluster whose listed digest is wrong" "$T/wrongdig-verify.out" 'cluster 0 \(bytes from 4\) has digest blake3:[0-9a-f]{64}, the manifest says blake3:0{64}'
run wrongdig-sql 0 "$VX" sql "$c3" "SELECT source, count(*) FROM steps GROUP BY 1 ORDER BY 1" --format csv
chk "a wrong cluster digest does not change a local read" cmp -s "$T/wrongdig-sql.out" "$T/seg-narrow.want"
run old-narrow 0 "$VX" sql "$c" "SELECT source, count(*) FROM steps GROUP BY 1 ORDER BY 1" --format csv
chk "a root without segment tables answers as before" cmp -s "$T/old-narrow.out" "$T/seg-narrow.want"
f=$(ls "$c"/data/*/*.vortex | head -n 1)
[ -n "$at" ] && python3 -c 'import sys; p, at = sys.argv[1], int(sys.argv[2]); b = bytearray(open(p, "rb").read()); b[at] ^= 0x20; open(p, "wb").write(b)' "$f" "$at"
run old-damaged 1 "$VX" sql "$c" "SELECT source, count(*) FROM steps GROUP BY 1"
has "a damaged cluster of an old root fails the narrow read" "$T/old-damaged.err" 'cluster \(bytes [0-9]+\.\.[0-9]+\) has digest'

# segs_down VERSION ROOT: rewrite every data file's segment table (written as version 3) as
# version VERSION (1: one entry per segment, no block digests, the manifest digest over the
# whole table; 2: no digests of the data file's tail), with the manifest and CURRENT to match
segs_down() {
    local m; m=$(vp json "$2/CURRENT" /manifest)
    python3 - "$1" "$2" "$m" <<'PY' || { bad "could not write version-$1 segment tables"; return 1; }
import json, os, struct, subprocess, sys
version, root, man = int(sys.argv[1]), sys.argv[2], sys.argv[3]
def b3(data): return "blake3:" + subprocess.run(["b3sum", "--no-names", "-"], input=data, capture_output=True, check=True).stdout.decode().split()[0]
mp = os.path.join(root, man)
m = json.load(open(mp))
for d in m["data_files"]:
    p = os.path.join(root, d["segments"]["path"])
    t = bytearray(open(p, "rb").read())
    size, n, block, per, pages = struct.unpack_from("<QIIII", t, 8)
    tail_blocks = struct.unpack_from("<I", t, 40)[0]
    head = 48 + 48 * pages
    if t[:8] == b"PCHSEGS4":   # drop the row page digests and the row digests: version 3
        nr, head3 = struct.unpack_from("<I", t, 44)[0], head + 32 * tail_blocks
        npg = (nr + 63) // 64
        v3 = bytearray(b"PCHSEGS3") + t[8:44] + bytes(4) + t[48:head3] + t[head3 + 32 * npg:len(t) - 32 * nr]
        for pg in range(pages):
            struct.pack_into("<Q", v3, 48 + 48 * pg, struct.unpack_from("<Q", v3, 48 + 48 * pg)[0] - 32 * npg)
        t = v3
    assert t[:8] == b"PCHSEGS3", t[:8]
    if version == 3:
        out, covered = t, head + 32 * tail_blocks
    elif version == 1:
        out = bytearray(b"PCHSEGS1" + struct.pack("<QII", size, n, 0))
        for pg in range(pages):
            po, pl = struct.unpack_from("<QI", t, 48 + 48 * pg)
            for i in range(min(per, n - pg * per)):
                off, ln, _, _ = struct.unpack_from("<QQII", t, po + 56 * i)
                out += struct.pack("<QQ", off, ln) + t[po + 56 * i + 24: po + 56 * i + 56]
        covered = len(out)
    else:
        out = bytearray(b"PCHSEGS2") + t[8:32] + bytes(16) + t[48:head]
        for pg in range(pages):
            po = struct.unpack_from("<Q", out, 48 + 48 * pg)[0]
            struct.pack_into("<Q", out, 48 + 48 * pg, po - 32 * tail_blocks)
        out += t[head + 32 * tail_blocks:]
        covered = head
    open(p, "wb").write(out)
    d["segments"]["bytes"], d["segments"]["digest"] = len(out), b3(bytes(out[:covered]))
json.dump(m, open(mp, "w"))
PY
    sed -i "s/\"manifest_digest\":\"blake3:[0-9a-f]*\"/\"manifest_digest\":\"blake3:$(b3 "$2/$m")\"/" "$2/CURRENT"
}

# a row digest that is not its row's (a hostile root: the table's page digests, the manifest and
# CURRENT made consistent with it): the point read of that row refuses it before returning
# anything, and verify names the row; the other rows still answer
c=$T/c-rowdig; rm -rf "$c"; cp -a "$R" "$c"
python3 - "$c" "$(vp json "$c/CURRENT" /manifest)" <<'PY' || bad "could not rewrite a row digest"
import json, os, struct, subprocess, sys
root, man = sys.argv[1], sys.argv[2]
def b3(data): return subprocess.run(["b3sum", "--no-names", "-"], input=data, capture_output=True, check=True).stdout.decode().split()[0]
m = json.load(open(os.path.join(root, man)))
d = m["data_files"][0]
p = os.path.join(root, d["segments"]["path"])
t = bytearray(open(p, "rb").read())
assert t[:8] == b"PCHSEGS4", t[:8]
pages, tail_blocks, nr = struct.unpack_from("<I", t, 28)[0], struct.unpack_from("<I", t, 40)[0], struct.unpack_from("<I", t, 44)[0]
head3 = 48 + 48 * pages + 32 * tail_blocks
rows_at = len(t) - 32 * nr
t[rows_at] ^= 0x01                                   # row 0's digest
t[head3:head3 + 32] = bytes.fromhex(b3(bytes(t[rows_at:rows_at + 32 * min(nr, 64)])))
open(p, "wb").write(t)
npg = (nr + 63) // 64
d["segments"]["digest"] = "blake3:" + b3(bytes(t[:head3 + 32 * npg]))
json.dump(m, open(os.path.join(root, man), "w"))
PY
sed -i "s/\"manifest_digest\":\"blake3:[0-9a-f]*\"/\"manifest_digest\":\"blake3:$(b3 "$c/$(vp json "$c/CURRENT" /manifest)")\"/" "$c/CURRENT"
first=$("$VX" sql "$R" "SELECT trajectory_key FROM trajectories" --format csv | tail -n +2 | while read -r t; do
    "$VX" get "$c" --trajectory-key "$t" --compact >/dev/null 2>"$T/rowdig.err" || { echo "$t"; break; }; done)
[ -n "$first" ] && grep -Eq 'cluster 0 row 0: the decoded lanes do not match the row.s digest' "$T/rowdig.err" && ok ||
    bad "a wrong row digest: no point read refused with it ($(cat "$T/rowdig.err"))"
other=$("$VX" sql "$R" "SELECT trajectory_key FROM trajectories" --format csv | tail -n +2 | grep -vxF -- "${first:-none}" | tail -n 1)
run rowdig-other 0 "$VX" get "$c" --trajectory-key "$other" --compact
run rowdig-verify 1 "$VX" verify "$c"
has "verify names the row whose lanes do not match its digest" "$T/rowdig-verify.out" 'row 0: its lanes do not match its row digest'

# a root whose segment tables are version 3 (no row digests, written before PCHSEGS4) reads
# as before: a point read checks the blocks it reads, and a flipped byte in a frame fails
# the point reads of that block naming it, while the others answer
if [ -s "$T/c-block.keys" ] && [ -d "$T/corpus-frames" ]; then
    c=$T/c-block3; rm -rf "$c"; cp -a "$T/corpus-frames" "$c"
    segs_down 3 "$c"
    run segs3-verify 0 "$VX" verify "$c"
    damaged_frame_reads "$c" c-block3 'segment [0-9]+ block [0-9]+ \(bytes [0-9]+\.\.[0-9]+\) does not match its digest' ||
        bad "version-3 tables, damaged block: $failed point reads refused naming the block, $answered answered (want >= 1 each)"
fi

# a root whose segment tables are version 1 (written before PCHSEGS2) reads as before, with
# whole segment reads, and a damaged segment still fails the read that decodes it
c=$T/c-segs1; rm -rf "$c"; cp -a "$R" "$c"
segs_down 1 "$c"
run segs1-verify 0 "$VX" verify "$c"
run segs1-get 0 "$VX" get "$c" vp-metrics --compact --stats &&
    chk "version-1 segment tables: get" vp get "$T/segs1-get.out" "$G/metrics.json"
has "version-1 segment tables: whole segment reads" "$T/segs1-get.err" ' segments_partial=0 '
f=$(ls "$c"/data/*/*.vortex | head -n 1)
[ -n "$at" ] && python3 -c 'import sys; p, at = sys.argv[1], int(sys.argv[2]); b = bytearray(open(p, "rb").read()); b[at] ^= 0x20; open(p, "wb").write(b)' "$f" "$at"
run segs1-damaged 1 "$VX" sql "$c" "SELECT count(message) FROM steps"
has "version-1 segment tables: a damaged segment fails the read" "$T/segs1-damaged.err" 'segment [0-9]+ \(bytes [0-9]+\.\.[0-9]+\) does not match its digest'

# a root whose segment tables are version 2 (no digests of the data files' tails, written
# before PCHSEGS3) reads as before: each data file's whole tail is read and checked against
# the manifest's digest at open; a version-3 root reads only blocks of it (the paged open)
c=$T/c-segs2; rm -rf "$c"; cp -a "$R" "$c"
segs_down 2 "$c"
run segs2-verify 0 "$VX" verify "$c"
run segs2-get 0 "$VX" get "$c" vp-metrics --compact --stats &&
    chk "version-2 segment tables: get" vp get "$T/segs2-get.out" "$G/metrics.json"
run segs3-get 0 "$VX" get "$R" vp-metrics --compact --stats
f2=$(grep -Eo ' footer=[0-9]+/[0-9]+ ' "$T/segs2-get.err" | cut -d/ -f2)
f3=$(grep -Eo ' footer=[0-9]+/[0-9]+ ' "$T/segs3-get.err" | cut -d/ -f2)
[ -n "$f2" ] && [ -n "$f3" ] && [ "$f3" -lt "$f2" ] && ok ||
    bad "a paged open reads less of the tail than a whole-tail open: ${f3:-?} bytes against ${f2:-?}"

# a flipped byte in a data file's tail (its postscript, read by every open): a point read's
# paged open refuses the block, a scan (which reads the whole tail) the tail's digest, and
# verify names the file
c=$T/c-tail; rm -rf "$c"; cp -a "$R" "$c"
f=$(ls "$c"/data/*/*.vortex | head -n 1)
python3 -c 'import sys; p = sys.argv[1]; b = bytearray(open(p, "rb").read()); b[len(b) - 12] ^= 0x01; open(p, "wb").write(b)' "$f"
k=$("$VX" sql "$R" "SELECT trajectory_key FROM trajectories LIMIT 1" --format csv | tail -n 1)
[ "$(ls "$c"/data/*/*.vortex | wc -l)" = 1 ] && ok || bad "tail flip: the base root has more than one data file"
# a row-checked point read (version-4 tables) reads the footer unchecked: the flip either fails
# it or leaves what it decodes equal to its row digests, so it answers as the good root
if "$VX" get "$c" "$k" --compact >"$T/tail-flip-get.out" 2>"$T/tail-flip-get.err"; then
    "$VX" get "$R" "$k" --compact 2>/dev/null | cmp -s - "$T/tail-flip-get.out" && ok ||
        bad "a point read past a damaged postscript answered differently from the good root"
else
    [ -s "$T/tail-flip-get.err" ] && ok || bad "a point read past a damaged postscript failed without a message"
fi
run tail-flip-sql 1 "$VX" sql "$c" "SELECT count(*) FROM steps"
segs_down 3 "$c"
run tail-flip-get3 1 "$VX" get "$c" "$k"
has "version-3 tables: a damaged tail block fails a point read's open" "$T/tail-flip-get3.err" 'tail block [0-9]+ \(footer, layout\) does not match its digest'
has "a damaged tail fails a scan" "$T/tail-flip-sql.err" 'footer and dictionaries \(bytes [0-9]+\.\.[0-9]+\) has digest'
run tail-flip-verify 1 "$VX" verify "$c"
hasf "verify names the file with the damaged tail" "$T/tail-flip-verify.out" "$(basename "$f")"

# a flipped byte inside text stored as is: a full read (export) fails, or returns what the
# good root returns; never altered content (fail closed, RFC-0006 §9.5, §15)
c=$T/c-text; rm -rf "$c"; cp -a "$R" "$c"
f=$(ls "$c"/data/*/*.vortex | head -n 1)
vp flip "$f" "text:What is in this picture?|member order differs from the schema order|a, b, then ls|Delegating." || {
    echo "note: no stored text found in $(basename "$f"): flipping its middle byte"; vp flip "$f" mid; }
if "$VX" export --from "$c" --output-format atif --to "$T/c-text.export" >/dev/null 2>"$T/c-text.err"; then
    chk "a flipped byte in a data file: export exits 0, so it must equal the good root's" vp tree "$T/base.export" "$T/c-text.export" "$ntiers"
else
    ok
fi

# ================================================================ 4. atomicity
# input a build takes at least half a second over (104 MB; 40 x 1000 steps took 0.11 s once the
# build got faster, and the kill at 0.1 s raced its end)
if [ "$VG" = 1 ]; then bulk_docs=6; vp bulk "$T/bulk" 6 300; else bulk_docs=120; vp bulk "$T/bulk" 120 2000; fi
K=$T/kill
build kill-base "$K" --from "$G" --quiet
cp "$K/CURRENT" "$T/kill.CURRENT"
snap=$(vp json "$K/CURRENT" /snapshot_id)
# start_build ERRFILE: a build of the bulk input into $K in the background (pid in bg), returns
# once its staging directory exists (it has read CURRENT and is under way) or it has ended
start_build() {
    local before _i
    before=$(ls "$K/staging" | wc -l)
    "$VX" build --from "$T/bulk" --to "$K" --quiet </dev/null >/dev/null 2>"$1" &
    bg=$!
    for _i in $(seq 1200); do
        [ "$(ls "$K/staging" | wc -l)" -gt "$before" ] && break
        kill -0 $bg 2>/dev/null || break
        sleep 0.05
    done
}
# kill_build DELAY: start_build, sleep DELAY, kill -9; krc = its exit status (137: killed)
kill_build() {
    start_build /dev/null
    sleep "$1"
    { kill -9 $bg; wait $bg; } 2>/dev/null; krc=$?; bg=""
}
kill_build 0.1
[ "$krc" = 137 ] && ok || bad "kill: the build was not killed while running (exit $krc): input too small?"
cmp -s "$K/CURRENT" "$T/kill.CURRENT" && ok || bad "kill -9 during a build changed CURRENT"
verify_ok kill-after "$K"
run kill-get 0 "$VX" get "$K" vp-metrics --compact && chk "get after kill" vp get "$T/kill-get.out" "$G/metrics.json"
if full; then
    # later kills may hit the commit: CURRENT is then the old snapshot or a complete new one
    for delay in 0.9 1.3; do
        kill_build $delay
        verify_ok "kill-$delay" "$K"
        if cmp -s "$K/CURRENT" "$T/kill.CURRENT"; then ok; else
            [ "$krc" = 0 ] || [ "$(mval "$K" /counts/documents)" = "$bulk_docs" ] && ok || bad "kill at $delay s: CURRENT changed to an incomplete snapshot"
            cp "$K/CURRENT" "$T/kill.CURRENT"; snap=$(vp json "$K/CURRENT" /snapshot_id)
        fi
    done
fi
# the next build is not blocked by what the killed ones left, and names its parent
build kill-next "$K" --from "$G" --quiet && {
    [ "$(mval "$K" /parent_snapshot_id)" = "$snap" ] && ok || bad "kill-next: parent_snapshot_id is not $snap"
    verify_ok kill-next "$K"
    full && roundtrip kill-next "$K" "$T/golden.export" "$ngolden"   # the same as the first build's
}
# two writers: the one that started first and commits last fails as a stale commit (§10.2)
if full; then
    cp "$K/CURRENT" "$T/stale.CURRENT"
    start_build "$T/stale-a.err"
    build stale-b "$K" --from tests/data/atif --quiet
    cp "$K/CURRENT" "$T/stale-b.CURRENT"
    wait $bg; arc=$?; bg=""
    [ "$arc" = 1 ] && grep -q 'stale' "$T/stale-a.err" && ok || { bad "stale commit: the first writer exited $arc"; head -3 "$T/stale-a.err"; }
    cmp -s "$K/CURRENT" "$T/stale-b.CURRENT" && ok || bad "stale commit: CURRENT is not the second writer's"
    verify_ok stale "$K"
    roundtrip stale "$K" tests/data/atif 10
fi
# export into an existing directory fails and leaves it as it was
mkdir -p "$T/exp/existing" "$T/exp/empty"; echo keep >"$T/exp/existing/marker.json"
(cd "$T/exp" && ls -A && find existing empty -printf '%p %s %T@\n' | sort) >"$T/exp.before"
run export-existing 1 "$VX" export --from "$R" --output-format atif --to "$T/exp/existing"
run export-existing-empty 1 "$VX" export --from "$R" --output-format atif --to "$T/exp/empty"
(cd "$T/exp" && ls -A && find existing empty -printf '%p %s %T@\n' | sort) >"$T/exp.after"
cmp -s "$T/exp.before" "$T/exp.after" && ok || { bad "export into an existing directory changed it"; diff "$T/exp.before" "$T/exp.after" | head; }

# ================================================================ 5. usage errors
run usage-unknown-option 2 "$VX" build --from "$G" --to "$T/u" --frobnicate 1
has usage-unknown-option "$T/usage-unknown-option.err" 'unknown option --frobnicate'
run usage-unknown-flag 2 "$VX" build --from "$G" --to "$T/u" --frobnicate
run usage-missing-to 2 "$VX" build --from "$G"
run usage-missing-from 2 "$VX" build --to "$T/u"
run usage-bad-size 2 "$VX" build --from "$G" --to "$T/u" --hot-max 12Q
run usage-fraction-size 2 "$VX" build --from "$G" --to "$T/u" --cold-max 1.5K
run usage-negative-size 2 "$VX" build --from "$G" --to "$T/u" --cluster-bytes -1
run usage-overflow-size 2 "$VX" build --from "$G" --to "$T/u-overflow" --hot-max 18014398509481985K   # 2^64 + 1K
run usage-bad-assets 2 "$VX" build --from "$G" --to "$T/u" --assets bogus
[ ! -e "$T/u/CURRENT" ] && ok || bad "a build with bad options published CURRENT"
for o in "--cluster-bytes 0" "--shard-rows 0" "--hot-max 1M --cold-max 1K"; do
    "$VX" build --from "$G" --to "$T/u" --quiet $o >/dev/null 2>&1; rc=$?
    [ "$rc" = 1 ] || [ "$rc" = 2 ] && ok || bad "build $o: exit $rc, expected a failure"
done
[ ! -e "$T/u/CURRENT" ] && ok || bad "a build with bad sizes published CURRENT"
run usage-missing-input 1 "$VX" build --from "$T/no-such-dir" --to "$T/u" --quiet
run usage-get-no-args 2 "$VX" get
run usage-get-one-arg 2 "$VX" get "$R"
run usage-get-three-args 2 "$VX" get "$R" a b
run usage-get-option 2 "$VX" get "$R" vp-metrics --frobnicate
run usage-get-unknown-key 1 "$VX" get "$R" no-such-key
run usage-get-no-root 1 "$VX" get "$T/no-such-root" vp-metrics
run usage-export-no-to 2 "$VX" export --from "$R"
run usage-export-format 2 "$VX" export --from "$R" --output-format jsonl --to "$T/u-export"
run usage-export-no-root 1 "$VX" export --from "$T/no-such-root" --output-format atif --to "$T/u-export"
run usage-verify-no-args 2 "$VX" verify
run usage-verify-two-args 2 "$VX" verify "$R" "$R"
run usage-verify-no-root 1 "$VX" verify "$T/no-such-root"
# bench-get: warm in-process point reads, one JSON object; an ambiguous key is an error
printf 'vp-nulls\nvp-metrics\n' >"$T/bench.keys"
if run bench-get 0 "$VX" bench-get "$R" --keys "$T/bench.keys" --warmup 0 --repeat 2; then
    chk bench-get-json "$PY" -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["keys"] == 2 and d["total"]["n"] == 4 and len(d["lat_ms"]) == 4 and d["bytes"] > 0, d' "$T/bench-get.out"
fi
printf 'vp-shared\n' >"$T/bench-amb.keys"
run bench-get-ambiguous 1 "$VX" bench-get "$R" --keys "$T/bench-amb.keys"
run bench-get-usage 2 "$VX" bench-get "$R"
for verb in build get export verify inspect bench-get; do
    run "help-$verb" 0 "$VX" $verb --help && has "help-$verb" "$T/help-$verb.out" '^usage: '
done

# ================================================================ 5b. repeated content
# The default --dedup-min 256 on a local root: a value seen twice before goes to a blob pack,
# stored once (docs/vortex-projection.md §4). rep-1..rep-4 share a 600-byte message (rep-4
# twice), rep-5 repeats nothing: the first two sightings stay inline, the third is stored,
# the fourth and fifth are references.
D=$T/rep-in; mkdir -p "$D"
"$PY" - "$D" <<'PY'
import json, sys
rep = "A long instruction that every run of this task repeats word for word. " * 9
for i in range(1, 6):
    steps = [{"step_id": 1, "source": "user", "message": rep if i < 5 else "hello %d" % i},
             {"step_id": 2, "source": "agent", "message": "run %d answers in its own words, once." % i}]
    if i == 4: steps.append({"step_id": 3, "source": "user", "message": rep})
    doc = {"schema_version": "ATIF-v1.6", "session_id": "rep-%d" % i, "agent": {"name": "a", "version": "1"}, "steps": steps}
    open("%s/rep-%d.json" % (sys.argv[1], i), "w").write(json.dumps(doc))
PY
RP=$T/rep; RP0=$T/rep-off
if build rep "$RP" --from "$D" --quiet && build rep-off "$RP0" --from "$D" --dedup-min 0 --quiet; then
    [ "$(mval "$RP" /layout/dedup_min_bytes)" = 256 ] && [ "$(mval "$RP" /counts/blobs)" = 1 ] && [ "$(mval "$RP" /bytes/dedup_hits)" = 2 ] && ok ||
        bad "rep: expected dedup-min 256, 1 blob, 2 dedup hits: $(vp json "$(manifest "$RP")" /counts) $(vp json "$(manifest "$RP")" /bytes)"
    [ "$(mval "$RP0" /counts/blobs)" = 0 ] && ok || bad "rep-off: --dedup-min 0 stored $(mval "$RP0" /counts/blobs) blobs"
    roundtrip rep "$RP" "$D" 5
    verify_ok rep "$RP"
    # a point read reads the content directory only when it hydrates a value, and hydrates a
    # value it meets twice once
    run rep-get4 0 "$VX" get "$RP" rep-4 --compact --stats && chk "get rep-4" vp get "$T/rep-get4.out" "$D/rep-4.json"
    has "rep-4: one hydration for two references" "$T/rep-get4.err" ' blobs=1/630 '
    has "rep-4: the shard and the content directory" "$T/rep-get4.err" ' directory=2/'
    run rep-get5 0 "$VX" get "$RP" rep-5 --compact --stats && chk "get rep-5" vp get "$T/rep-get5.out" "$D/rep-5.json"
    has "rep-5: no content directory read" "$T/rep-get5.err" ' directory=1/.* blobs=0/0 '
    # training reads give the same answer with and without the repeats stored once
    run rep-sft 0 "$VX" sft "$RP" --format messages
    run rep-sft-off 0 "$VX" sft "$RP0" --format messages
    cmp -s "$T/rep-sft.out" "$T/rep-sft-off.out" && [ -s "$T/rep-sft.out" ] && ok || bad "rep: sft lines differ with --dedup-min 0"
    # a sync reuses what the parent stores externally: rep-6 repeats the stored value
    cp -r "$D" "$T/rep-in2"
    "$PY" -c 'import json,sys; d=json.load(open(sys.argv[1])); d["session_id"]="rep-6"; json.dump(d, open(sys.argv[2], "w"))' "$D/rep-3.json" "$T/rep-in2/rep-6.json"
    run rep-sync 0 "$VX" sync --from "$T/rep-in2" --to "$RP" --quiet
    [ "$(mval "$RP" /counts/blobs)" = 1 ] && [ "$(mval "$RP" /bytes/dedup_hits)" = 3 ] && ok ||
        bad "rep-sync: expected the parent's blob reused (1 blob, 3 dedup hits): $(vp json "$(manifest "$RP")" /counts) $(vp json "$(manifest "$RP")" /bytes)"
    run rep-get6 0 "$VX" get "$RP" rep-6 --compact --stats && chk "get rep-6" vp get "$T/rep-get6.out" "$T/rep-in2/rep-6.json"
    has "rep-6: hydrated from the parent's pack" "$T/rep-get6.err" ' blobs=1/630 '
    verify_ok rep-sync "$RP"
    # a damaged byte in the middle of the stored value: a hydration reads only its value's
    # blocks of the pack (no digests of their own), and the value's BLAKE3 check refuses it;
    # --preview does not read packs
    c=$T/c-rep-pack; rm -rf "$c"; cp -a "$RP" "$c"
    pk=$(ls "$c"/blobs/*.vortex | head -n 1)
    "$VX" dump "$pk" --columns payload --rows 0..1 | tail -n 1 >"$T/rep-pack.json"
    "$PY" -c '
import base64, json, sys
p, j = sys.argv[1], sys.argv[2]
v = base64.b64decode(json.load(open(j))["payload"]["base64"])
b = bytearray(open(p, "rb").read())
at = b.find(v)
assert at > 0 and b.find(v, at + 1) < 0, "the stored value is not in the pack exactly once"
b[at + len(v) // 2] ^= 0x20
open(p, "wb").write(b)' "$pk" "$T/rep-pack.json" || bad "rep: the stored value was not found in its pack"
    run rep-pack-dmg 1 "$VX" get "$c" rep-4 --compact
    has "rep: a damaged stored value is refused, naming its id" "$T/rep-pack-dmg.err" 'blake3:[0-9a-f]{64}'
    run rep-pack-preview 0 "$VX" get "$c" rep-4 --compact --preview
    # a damaged content directory fails the read that needs it, and only that one
    cd_file=$RP/$(vp json "$(manifest "$RP")" /content_directory/0/path)
    vp flip "$cd_file" mid
    run rep-dmg4 1 "$VX" get "$RP" rep-4 --compact
    has "rep: a damaged content directory is named" "$T/rep-dmg4.err" 'directories/content/.*digest'
    run rep-dmg5 0 "$VX" get "$RP" rep-5 --compact && chk "rep-5 reads past a damaged content directory" vp get "$T/rep-dmg5.out" "$D/rep-5.json"
    run rep-dmg-verify 1 "$VX" verify "$RP"
    hasf "rep: verify reports the content directory" "$T/rep-dmg-verify.out" 'directories/content'
fi

# ---------------------------------------------------------------- a multi-agent document read once
# A root with 30 nested subagents (4 deep, one cluster): the point read of the document
# decodes the root's row, then the rows from the first subagent on up to the last direct
# subagent known (write_rows' horizon: no rows of the documents after it), and writes every
# subagent it can from those rows (write_entry): 2 to 5 cluster reads, not one per trajectory
# with children. The document reads back equal to its input.
MA=$T/multiagent
"$PY" - "$MA/in" <<'PY'
import json, os, sys
os.makedirs(sys.argv[1])
n = [0]
def traj(depth, tid):
    subs, steps = [], [{"step_id": 1, "source": "user", "message": "task %s" % tid}]
    if depth < 4:
        for w in range(2 if depth else 3):
            n[0] += 1
            cid = "sub-%d-%d" % (depth + 1, n[0])
            steps.append({"step_id": len(steps) + 1, "source": "agent", "model_name": "m", "message": "delegate %s" % cid,
                          "tool_calls": [{"tool_call_id": "c%d" % n[0], "function_name": "task", "arguments": {"t": cid}}],
                          "observation": {"results": [{"source_call_id": "c%d" % n[0], "content": "done",
                                                       "subagent_trajectory_ref": [{"trajectory_id": cid}]}]}})
            subs.append(traj(depth + 1, cid))
    steps.append({"step_id": len(steps) + 1, "source": "agent", "model_name": "m", "message": "finished %s" % tid})
    t = {"schema_version": "ATIF-v1.7", "session_id": "ma-run", "trajectory_id": tid, "agent": {"name": "a", "version": "1"}, "steps": steps}
    if subs: t["subagent_trajectories"] = subs
    return t
json.dump(traj(0, "root-ma"), open(os.path.join(sys.argv[1], "doc.json"), "w"))
PY
"$VX" build --from "$MA/in" --to "$MA/vx" --quiet && ok || bad "multi-agent build"
"$VX" get "$MA/vx" --trajectory-key root-ma@doc.json --stats >"$MA/doc.out" 2>"$MA/stats.err" && ok || { bad "multi-agent get"; cat "$MA/stats.err"; }
ncr=$(grep -o ' clusters_read=[0-9]*' "$MA/stats.err" | cut -d= -f2)
[ -n "$ncr" ] && [ "$ncr" -ge 2 ] && [ "$ncr" -le 5 ] && ok || bad "multi-agent get: clusters_read=$ncr, want 2..5 (not one per trajectory with children)"
"$PY" -c 'import json, sys; a = json.load(open(sys.argv[1])); b = json.load(open(sys.argv[2])); sys.exit(a != b)' "$MA/in/doc.json" "$MA/doc.out" \
    && ok || bad "multi-agent get: not the input document"

# ================================================================ 6. structure check
files=$( (find "$R" "$H" "$T/atif-mm" "$KR" -name '*.vortex' -not -path '*/staging/*'
          [ -d "$T/corpus-frames/data" ] && find "$T/corpus-frames/data" -name '*.vortex'
          [ -d "$T/corpus-dict/data" ] && find "$T/corpus-dict/data" -name '*.vortex') | sort)
kinds=$(printf '%s\n' $files | sed -n 's|.*/\(data\)/.*|\1|p; s|.*/\(blobs\)/.*|\1|p; s|.*/directories/\([a-z]*\)/.*|\1|p' | sort -u | tr '\n' ' ')
[ "$kinds" = "blobs content data documents keys lanes trajectory " ] && ok || bad "structure check: file kinds found: $kinds"
# one process over every file: parallel checkers sharing one log lost a line under the load of
# the valgrind pass (11 "ok" lines for 12 passing files)
if "$PY" tests/vortex/structure_check.py $files >"$T/structure.log" 2>&1; then ok; else
    bad "structure check"; grep -v '^ok' "$T/structure.log" | head -20
fi
checked=$(grep -c '^ok' "$T/structure.log")
# and every one decodes with our own dump (all rows, all lanes)
dumped=0
for f in $files; do
    if "$VX" dump "$f" >/dev/null 2>"$T/dump.err"; then dumped=$((dumped + 1)); else bad "dump $f"; head -n 3 "$T/dump.err"; fi
done
[ "$dumped" = "$(printf '%s\n' $files | wc -l)" ] && ok || bad "dump: $dumped files decoded"
[ "$checked" = "$(printf '%s\n' $files | wc -l)" ] && ok || bad "structure check: $checked of $(printf '%s\n' $files | wc -l) files ok"

echo "vortex_projection: $checked files structure-checked, $((SECONDS - started)) s"
echo "$n checks, $fail failed"
[ "$fail" -eq 0 ]
