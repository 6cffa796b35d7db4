#!/usr/bin/env bash
# The training readers (RFC-0006 §13.5, docs/training.md): `pchronicle-vortex rl` and `sft`
# against what is computed directly from the ATIF documents in Python. Generated documents cover
# copied-context steps (excluded), steps without completion ids (excluded), float32-exact
# and float64 logprobs, absent logprobs and prompt ids, rewards, subagents, paged
# trajectories (small clusters: step ordinals continue across pages and clusters) and every
# filter (model, run, source, time window). The binary form is parsed back and compared;
# --format count agrees; usage errors and a missing root fail with the documented codes.
set -u
cd "$(dirname "$0")/../.."
VX=${PCH_VORTEX_CLI:-build/pchronicle-vortex}
[ -x "$VX" ] || { echo "missing $VX"; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/pch-vortex-train.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
fail=0
python3 - "$tmp/in" <<'PY'
import json, os, random, struct, sys
root = sys.argv[1]
rnd = random.Random(7)
os.makedirs(os.path.join(root, "runs"), exist_ok=True)
def f32(x): return struct.unpack("<f", struct.pack("<f", x))[0]
def step(i, t0, model, kind):
    s = {"step_id": i + 1, "timestamp": "2026-05-0%dT10:00:%02dZ" % (1 + t0 % 3, i % 60), "source": "agent" if i % 3 else "user",
         "message": "m%d" % i}
    if s["source"] == "agent":
        s["model_name"] = model
        if i % 5 == 1:                                          # tool calls and their results
            s["tool_calls"] = [{"tool_call_id": "c%d" % i, "function_name": "f%d" % (i % 3), "arguments": {"x": i}}]
            s["observation"] = {"results": [{"source_call_id": "c%d" % i, "content": "out %d" % i}, {"content": [{"type": "text", "text": "t"}]}]}
        if i % 7 == 2:                                          # a deterministic dispatch: no SFT example
            s["llm_call_count"] = 0                             # (and, per ATIF, no metrics or reasoning)
            return s
        if i % 4 == 3: s["reasoning_content"] = "because %d" % i
    if kind == "none" or s["source"] != "agent": return s      # metrics only on agent steps
    n = rnd.randint(1, 40)
    m = {"prompt_tokens": 100 + i, "completion_tokens": n, "completion_token_ids": [rnd.randrange(0, 1 << 32) for _ in range(n)]}
    if kind != "noprompt": m["prompt_token_ids"] = [rnd.randrange(0, 200000) for _ in range(rnd.randint(0, 60))]
    if kind == "f32": m["logprobs"] = [f32(-rnd.random() * 5) for _ in range(n)]
    if kind == "f64": m["logprobs"] = [-rnd.random() * 5 for _ in range(n)]
    if i % 4 == 0: m["extra"] = {"reward": [1.5, 0, -2, {"k": "v"}][i % 3]}
    s["metrics"] = m
    if kind == "copied": s["is_copied_context"] = True
    return s
kinds = ["f32", "f64", "nolp", "noprompt", "copied", "none", "f32"]
for d in range(12):
    n = 3 + d * 4 + (60 if d == 5 else 0)            # document 5 is long: it is paged
    doc = {"schema_version": "ATIF-v1.6", "session_id": "run-%02d" % d,
           "agent": {"name": "gen", "version": "1", "model_name": "model-%d" % (d % 3)},
           "steps": [step(i, d, "model-%d" % ((d + i) % 3), kinds[(d + i) % len(kinds)]) for i in range(n)]}
    if d == 3:                                      # a subagent with its own RL steps
        doc["steps"][1]["observation"] = {"results": [{"content": "sub", "subagent_trajectory_ref": [{"session_id": "sub-03"}]}]}
        doc["subagent_trajectories"] = [{"schema_version": "ATIF-v1.6", "session_id": "sub-03", "trajectory_id": "sub-03",
                                         "agent": {"name": "sub", "version": "1"},
                                         "steps": [step(i, 0, "model-sub", "f32") for i in range(5)]}]
    with open(os.path.join(root, "runs", "d%02d.json" % d), "w") as f:
        json.dump(doc, f)
PY
"$VX" build --from "$tmp/in" --to "$tmp/vx" --source-id gen --cluster-bytes 8K --quiet 2>"$tmp/build.err" || { echo "FAIL build"; cat "$tmp/build.err"; exit 1; }

# expected rows, computed from the documents; then each run of the reader compared to them
cat > "$tmp/check.py" <<'PY'
import json, struct, sys
docs_dir, got_path, mode = sys.argv[1], sys.argv[2], sys.argv[3]
flt = json.loads(sys.argv[4]) if len(sys.argv) > 4 else {}
import os, calendar, time
def ms(ts):
    return calendar.timegm(time.strptime(ts, "%Y-%m-%dT%H:%M:%SZ")) * 1000
want = []
def walk(t, rel):   # rel: the document path, which a key carries (docs/atif.md "Stable keys")
    for i, s in enumerate(t.get("steps", [])):
        m = s.get("metrics") or {}
        if "completion_token_ids" not in m or s.get("is_copied_context") is True: continue
        if flt.get("model") and s.get("model_name") != flt["model"]: continue
        if flt.get("run") and t["session_id"] not in flt["run"]: continue
        if "since" in flt and not (flt["since"] <= ms(s["timestamp"]) < flt["until"]): continue
        lp = m.get("logprobs")
        want.append({"source_id": "gen", "run_id": t["session_id"], "trajectory_key": (t.get("trajectory_id") or t["session_id"]) + "@" + rel,
                     "step_ordinal": i, "step_id": s["step_id"], "model_name": s.get("model_name"),
                     "prompt_token_ids": None if flt.get("no_prompt") else m.get("prompt_token_ids"),
                     "completion_token_ids": m["completion_token_ids"], "logprobs": lp,
                     "reward": (m.get("extra") or {}).get("reward")})
    for sub in t.get("subagent_trajectories", []): walk(sub, rel)
for dp, _, fs in os.walk(docs_dir):
    for f in sorted(fs): walk(json.load(open(os.path.join(dp, f))), os.path.relpath(os.path.join(dp, f), docs_dir))
if flt.get("source") == "other": want = []
key = lambda r: (r["trajectory_key"], r["step_ordinal"])
want.sort(key=key)
if mode == "jsonl":
    got = [json.loads(l) for l in open(got_path)]
elif mode == "binary":
    b = open(got_path, "rb").read()
    assert b[:8] == b"PCHRLv1\n" and b[-8:] == b"PCHRLEND", "magic"
    n, index_off, meta_off = struct.unpack_from("<QQQ", b, len(b) - 32)
    got = []
    for k in range(n):
        co, po, lo, mo, nc, np_, ml, fl = struct.unpack_from("<QQQQIIII", b, index_off + 48 * k)
        meta = json.loads(b[meta_off + mo: meta_off + mo + ml])
        meta["completion_token_ids"] = list(struct.unpack_from("<%dI" % nc, b, co))
        meta["prompt_token_ids"] = list(struct.unpack_from("<%dI" % np_, b, po)) if fl & 2 else None
        meta["logprobs"] = list(struct.unpack_from("<%df" % nc, b, lo)) if fl & 1 else None
        got.append(meta)
    for w in want:   # the binary stream carries logprobs as float32
        if w["logprobs"] is not None: w["logprobs"] = [struct.unpack("<f", struct.pack("<f", x))[0] for x in w["logprobs"]]
else:
    c = json.loads(open(got_path).read())
    exp = {"steps": len(want), "completion_tokens": sum(len(w["completion_token_ids"]) for w in want),
           "prompt_tokens": sum(len(w["prompt_token_ids"] or []) for w in want),
           "logprobs": sum(len(w["logprobs"] or []) for w in want)}
    bad = {k: (c.get(k), v) for k, v in exp.items() if c.get(k) != v}
    if bad: print("count differs:", bad); sys.exit(1)
    sys.exit(0)
got.sort(key=key)
if len(got) != len(want): print("rows: got %d want %d" % (len(got), len(want))); sys.exit(1)
for g, w in zip(got, want):
    if g != w:
        for k in w:
            if g.get(k) != w[k]: print("differs at", key(w), k, repr(g.get(k))[:200], "want", repr(w[k])[:200]); break
        sys.exit(1)
if not want and not flt.get("source"): print("no rows expected: the test is vacuous"); sys.exit(1)
PY
check() {  # check NAME MODE FILTER_JSON ARGS...
    local name=$1 mode=$2 flt=$3; shift 3
    local out=$tmp/$name.out
    if [ "$mode" = binary ]; then
        "$VX" rl "$tmp/vx" --format binary --to "$out" "$@" 2>"$tmp/$name.err" || { echo "FAIL $name: exit $?"; cat "$tmp/$name.err"; fail=1; return; }
    else
        "$VX" rl "$tmp/vx" --format "$mode" "$@" >"$out" 2>"$tmp/$name.err" || { echo "FAIL $name: exit $?"; cat "$tmp/$name.err"; fail=1; return; }
    fi
    python3 "$tmp/check.py" "$tmp/in" "$out" "$mode" "$flt" || { echo "FAIL $name"; fail=1; }
}
check all jsonl '{}'
check binary binary '{}'
check count count '{}'
check no_prompt jsonl '{"no_prompt": true}' --no-prompt-ids
check model jsonl '{"model": "model-1"}' --model model-1
check runs jsonl '{"run": ["run-03", "sub-03", "run-05"]}' --run run-03 --run sub-03 --run run-05
check window jsonl '{"since": 1777629600000, "until": 1777629630000}' --since 2026-05-01T10:00:00Z --until 1777629630000
check source jsonl '{"source": "other"}' --source-id other

# SFT: the conversation before every trainable agent step, from the documents
cat > "$tmp/sft.py" <<'PY'
import calendar, json, os, sys, time
docs_dir, got_path = sys.argv[1], sys.argv[2]
flt = json.loads(sys.argv[3]) if len(sys.argv) > 3 else {}
roles = {"system": "system", "user": "user", "agent": "assistant"}
def ms(ts): return calendar.timegm(time.strptime(ts, "%Y-%m-%dT%H:%M:%SZ")) * 1000
def msgs(s):
    m = {"role": roles[s["source"]], "content": s.get("message")}
    if "reasoning_content" in s: m["reasoning_content"] = s["reasoning_content"]
    if "tool_calls" in s:
        m["tool_calls"] = [{"id": c.get("tool_call_id"), "function_name": c.get("function_name"), "arguments": c.get("arguments")} for c in s["tool_calls"]]
    return [m] + [{"role": "tool", "tool_call_id": r.get("source_call_id"), "content": r.get("content")}
                  for r in (s.get("observation") or {}).get("results", [])]
want = []
def walk(t, rel):   # rel: the document path, which a key carries (docs/atif.md "Stable keys")
    conv = []
    for i, s in enumerate(t.get("steps", [])):
        ok = s["source"] == "agent" and s.get("is_copied_context") is not True and s.get("llm_call_count", 1) != 0
        if flt.get("model") and s.get("model_name") != flt["model"]: ok = False
        if flt.get("run") and t["session_id"] not in flt["run"]: ok = False
        if ok:
            want.append({"source_id": "gen", "run_id": t["session_id"], "trajectory_key": (t.get("trajectory_id") or t["session_id"]) + "@" + rel,
                         "step_ordinal": i, "step_id": s.get("step_id"), "model_name": s.get("model_name"),
                         "messages": list(conv), "completion": msgs(s)[0]})
        conv += msgs(s)
    for sub in t.get("subagent_trajectories", []): walk(sub, rel)
for dp, _, fs in os.walk(docs_dir):
    for f in sorted(fs): walk(json.load(open(os.path.join(dp, f))), os.path.relpath(os.path.join(dp, f), docs_dir))
key = lambda r: (r["trajectory_key"], r["step_ordinal"])
got = sorted((json.loads(l) for l in open(got_path)), key=key)
want.sort(key=key)
if not want: print("no examples expected: vacuous"); sys.exit(1)
if got != want:
    print("got %d examples, want %d" % (len(got), len(want)))
    for g, w in zip(got, want):
        if g != w: print("first difference at", key(w), json.dumps(g)[:300], "WANT", json.dumps(w)[:300]); break
    sys.exit(1)
PY
"$VX" sft "$tmp/vx" --to "$tmp/sft.out" 2>"$tmp/sft.err" && python3 "$tmp/sft.py" "$tmp/in" "$tmp/sft.out" || { echo "FAIL sft"; cat "$tmp/sft.err"; fail=1; }
"$VX" sft "$tmp/vx" --model model-2 --run run-04 --run run-07 >"$tmp/sft2.out" 2>"$tmp/sft2.err" &&
    python3 "$tmp/sft.py" "$tmp/in" "$tmp/sft2.out" '{"model": "model-2", "run": ["run-04", "run-07"]}' || { echo "FAIL sft with filters"; cat "$tmp/sft2.err"; fail=1; }
"$VX" sft "$tmp/vx" --format jsonl >/dev/null 2>&1; rc=$?
[ $rc = 2 ] || { echo "FAIL sft --format: exit $rc"; fail=1; }

# --to a device or a pipe is written straight, never replaced by a rename (a rename over
# /dev/null would replace the device for the whole machine)
mkfifo "$tmp/pipe"
cat "$tmp/pipe" >"$tmp/pipe.out" &
"$VX" sft "$tmp/vx" --to "$tmp/pipe" 2>"$tmp/pipe.err" || { echo "FAIL sft --to a pipe"; cat "$tmp/pipe.err"; fail=1; }
wait
cmp -s "$tmp/pipe.out" "$tmp/sft.out" || { echo "FAIL sft through a pipe differs from sft --to FILE"; fail=1; }
[ -p "$tmp/pipe" ] || { echo "FAIL the pipe was replaced"; fail=1; }
mkdir "$tmp/adir"
"$VX" sft "$tmp/vx" --to "$tmp/adir" >/dev/null 2>"$tmp/dir.err" && { echo "FAIL sft --to a directory succeeded"; fail=1; }
grep -q 'is a directory' "$tmp/dir.err" || { echo "FAIL sft --to a directory: $(cat "$tmp/dir.err")"; fail=1; }
"$VX" rl "$tmp/vx" --format binary --to /dev/null 2>"$tmp/null.err" || { echo "FAIL rl --to /dev/null"; cat "$tmp/null.err"; fail=1; }
[ -c /dev/null ] || { echo "FAIL /dev/null is no longer a character device"; fail=1; }

# the long documents really are paged (ordinals continue across pages)
"$VX" dump "$(find "$tmp/vx/data" -name '*.vortex' | head -1)" --columns id.page_count | grep -Eq '"id.page_count":([3-9]|[1-9][0-9])' ||
    { echo "FAIL the long document was not paged"; fail=1; }
n=$(python3 -c "import json; print(sum(1 for l in open('$tmp/all.out') if json.loads(l)['run_id']=='run-05' and json.loads(l)['step_ordinal']>40))")
[ "$n" -gt 0 ] || { echo "FAIL no late steps of the paged document"; fail=1; }
n=$(grep -c '"trajectory_key":"sub-03@runs/d03.json"' "$tmp/all.out")
[ "$n" -gt 0 ] || { echo "FAIL no steps of the subagent"; fail=1; }

# prompt-prefix lanes (§8.2): prompts that grow step by step are stored as (checkpoint base,
# prefix length, suffix); checkpoints every 16 prompts and where a prompt shares less than half
# with the last one; a row keeps the plain lists where the form saves less than 20 %. Paged
# (small clusters: bases never leave their row), a prompt sharing nothing with the one before,
# empty prompts, a trajectory of random prompts. rl, get/export and verify all rebuild them.
python3 - "$tmp/pin" <<'PY'
import json, os, random, sys
root = sys.argv[1]
rnd = random.Random(5)
os.makedirs(root, exist_ok=True)
def doc(d, n, grow):
    steps, prompt = [], [rnd.randrange(0, 50000) for _ in range(rnd.randint(20, 200))]
    for i in range(n):
        s = {"step_id": i + 1, "source": "agent" if i % 5 else "user", "message": "m%d" % i}
        if s["source"] == "agent":
            comp = [rnd.randrange(0, 50000) for _ in range(rnd.randint(1, 30))]
            if not grow or i % 23 == 7: prompt = [rnd.randrange(0, 50000) for _ in range(rnd.randint(0, 80))]   # shares nothing
            m = {"prompt_token_ids": list(prompt), "completion_token_ids": comp}
            if i % 9 == 4: m.pop("prompt_token_ids")
            s["metrics"] = m
            prompt = prompt + comp + [rnd.randrange(0, 50000) for _ in range(rnd.randint(0, 40))]
        steps.append(s)
    return {"schema_version": "ATIF-v1.6", "session_id": "p-%02d" % d, "agent": {"name": "g", "version": "1"}, "steps": steps}
for d in range(8):
    with open(os.path.join(root, "p%02d.json" % d), "w") as f:
        json.dump(doc(d, [10, 40, 90, 150, 3, 60, 25, 45][d], d != 6), f)
PY
"$VX" build --from "$tmp/pin" --to "$tmp/pvx" --source-id gen --cluster-bytes 16K --quiet 2>"$tmp/pbuild.err" ||
    { echo "FAIL build of the prefix corpus"; cat "$tmp/pbuild.err"; fail=1; }
"$VX" rl "$tmp/pvx" >"$tmp/prefix.out" 2>"$tmp/prefix.err" && python3 "$tmp/check.py" "$tmp/pin" "$tmp/prefix.out" jsonl '{}' ||
    { echo "FAIL rl over prompt-prefix lanes"; cat "$tmp/prefix.err"; fail=1; }
"$VX" rl "$tmp/pvx" --format count >"$tmp/prefix.count" 2>&1 && python3 "$tmp/check.py" "$tmp/pin" "$tmp/prefix.count" count '{}' ||
    { echo "FAIL rl --format count over prompt-prefix lanes"; cat "$tmp/prefix.count"; fail=1; }
"$VX" export --from "$tmp/pvx" --output-format atif --to "$tmp/pout" >/dev/null 2>"$tmp/pexp.err" &&
    python3 - "$tmp/pin" "$tmp/pout" <<'PY' || { echo "FAIL export over prompt-prefix lanes"; cat "$tmp/pexp.err"; fail=1; }
import json, os, sys
for f in sorted(os.listdir(sys.argv[1])):
    a, b = json.load(open(os.path.join(sys.argv[1], f))), json.load(open(os.path.join(sys.argv[2], f)))
    assert a == b, f
PY
"$VX" verify "$tmp/pvx" >"$tmp/pverify.out" 2>&1 || { echo "FAIL verify of the prefix corpus"; cat "$tmp/pverify.out"; fail=1; }
# the form is really used: some steps hold a base, the rows of random prompts (p-06) none,
# and no base is taken from another row (page) of a paged trajectory
for f in $(find "$tmp/pvx/data" -name '*.vortex'); do
    "$VX" dump "$f" --columns id.trajectory_key,id.page_index,tokens.prompt_base,tokens.prompt_ids_len
done >"$tmp/pdump.out" 2>&1
python3 - "$tmp/pdump.out" <<'PY' || { echo "FAIL the prompt-prefix form is not where it should be"; fail=1; }
import json, sys
rows = [r for r in (json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")) if "id.trajectory_key" in r]
used = {}
pages = {}
for r in rows:
    k = r["id.trajectory_key"].split("@")[0]    # "<session id>@<document path>"
    bases = [b for b in r["tokens.prompt_base"] if b is not None]
    used[k] = used.get(k, 0) + len(bases)
    pages[k] = max(pages.get(k, 0), r["id.page_index"] + 1)
    assert all(0 <= b < len(r["tokens.prompt_base"]) for b in bases), r
assert used.get("p-06", 0) == 0, used
assert used.get("p-03", 0) > 20 and pages.get("p-03", 1) > 1, (used, pages)
PY

# the parallel read-ahead (docs/training.md "Threads"): 1 to 4 decoding threads, each reading
# every N-th cluster of the scan, hand out the same steps in the same order, also where the
# summaries skip clusters (the model and window filters) and steps continue across pages
nclusters=$("$VX" inspect "$tmp/vx" | sed -n 's/.* clusters=\([0-9]*\) .*/\1/p' | head -1)
[ "${nclusters:-0}" -ge 5 ] || { echo "FAIL the training root has ${nclusters:-no} clusters, want >= 5 for the thread checks"; fail=1; }
# (under valgrind, PCH_VALGRIND=1, which serialises the threads anyway: 3 and 4 only)
threads="0 2 3 4"; [ "${PCH_VALGRIND:-0}" = 1 ] && threads="3 4"
for flt in "" "--model model-1" "--since 2026-05-01T10:00:00Z --until 1777629630000" "--no-prompt-ids --run run-05"; do
    "$VX" rl "$tmp/vx" $flt --threads 1 >"$tmp/t1.out" 2>"$tmp/t1.err" || { echo "FAIL rl $flt --threads 1: $(cat "$tmp/t1.err")"; fail=1; continue; }
    [ -s "$tmp/t1.out" ] || { echo "FAIL rl $flt: no steps"; fail=1; }
    for t in $threads; do
        "$VX" rl "$tmp/vx" $flt --threads $t 2>"$tmp/tn.err" | cmp -s - "$tmp/t1.out" ||
            { echo "FAIL rl $flt --threads $t differs from --threads 1 $(cat "$tmp/tn.err")"; fail=1; }
    done
done
for bad in 5 -1 x ""; do
    "$VX" rl "$tmp/vx" --threads "$bad" >/dev/null 2>"$tmp/e1"; rc=$?
    { [ $rc = 2 ] && grep -q -- '--threads takes 0..4' "$tmp/e1"; } || { echo "FAIL --threads '$bad': exit $rc"; cat "$tmp/e1"; fail=1; }
done

# errors
"$VX" rl "$tmp/nope" >/dev/null 2>"$tmp/e1"; rc=$?
{ [ $rc = 1 ] && grep -q 'no CURRENT' "$tmp/e1"; } || { echo "FAIL missing root: exit $rc"; cat "$tmp/e1"; fail=1; }
"$VX" rl "$tmp/vx" --format binary >/dev/null 2>&1; rc=$?
[ $rc = 2 ] || { echo "FAIL binary without --to: exit $rc"; fail=1; }
"$VX" rl "$tmp/vx" --format xml >/dev/null 2>&1; rc=$?
[ $rc = 2 ] || { echo "FAIL --format xml: exit $rc"; fail=1; }
"$VX" rl "$tmp/vx" --since yesterday >/dev/null 2>&1; rc=$?
[ $rc = 2 ] || { echo "FAIL --since yesterday: exit $rc"; fail=1; }
"$VX" rl --help | grep -q 'completion_token_ids' || { echo "FAIL --help"; fail=1; }
ls "$tmp"/*.tmp-* >/dev/null 2>&1 && { echo "FAIL a temporary output file was left behind"; fail=1; }

[ $fail = 0 ] && echo "vortex_train: ok"
exit $fail
