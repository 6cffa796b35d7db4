#!/usr/bin/env bash
# (PCH_VALGRIND_LONG: the valgrind pass of scripts/run-tests.sh starts this suite first.)
# The lane-based SFT reader (RFC-0006 §13.5, docs/training.md "SFT"): `pchronicle-vortex sft
# --format messages` (OpenAI-style chat examples) and `--format atif` checked against what
# Python computes from the ATIF documents themselves. The documents cover system, user and
# agent steps, copied context (in the conversation, never an example), deterministic dispatch
# (llm_call_count 0), content parts, empty messages, reasoning, tool calls with arguments of
# every shape, empty tool_calls, results matched to their call, without a call
# id and with parts content, tool definitions (subagents with their own), content in all three
# tiers (hot, cold, blob packs), and paged trajectories in small clusters (conversations go on
# across pages and clusters; with a model filter the summaries skip clusters of them). Every
# filter is compared; usage errors fail with code 2.
set -u
cd "$(dirname "$0")/../.."
VX=${PCH_VORTEX_CLI:-build/pchronicle-vortex}
[ -x "$VX" ] || { echo "missing $VX"; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/pch-vortex-sft.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
fail=0
python3 - "$tmp/in" <<'PY'
import json, os, random, sys
root = sys.argv[1]
rnd = random.Random(11)
os.makedirs(os.path.join(root, "a"), exist_ok=True)
def text(i, big=False):
    n = rnd.choice([5, 40, 300, 2000]) if big else rnd.randint(1, 30)
    return ("t%d \u00e9\u4e2d \"q\"\n" % i) * (n // 10 + 1)
def step(i, model, k):
    src = "system" if i == 0 else ("user" if i % 4 == 1 else "agent")
    s = {"step_id": i + 1, "timestamp": "2026-06-0%dT08:%02d:00Z" % (1 + k % 3, i % 60), "source": src}
    if src != "agent":
        s["message"] = text(i, big=True)
        return s
    s["model_name"] = model
    r = (i + k) % 9
    if r == 0: s["message"] = [{"type": "text", "text": text(i, big=True)}, {"type": "image", "source": {"media_type": "image/png", "path": "x.png"}}]
    else: s["message"] = "" if r == 1 else text(i, big=True)   # r == 1: tool calls only
    if r in (2, 5): s["reasoning_content"] = text(i)
    if r in (1, 3, 6):
        calls = [{"tool_call_id": "c%d-%d" % (i, j), "function_name": "fn%d" % j,
                  "arguments": [{"path": text(i, big=True), "n": i}, {}, {"q": [1, 2.5, None], "s": "x\\ty"}][j % 3]} for j in range(1 + i % 3)]
        s["tool_calls"] = calls
        res = [{"source_call_id": c["tool_call_id"], "content": text(i, big=True)} for c in calls]
        res.append({"content": [{"type": "text", "text": "no id"}]})
        s["observation"] = {"results": res}
    if r == 4: s["tool_calls"] = []
    if r == 8 and i % 2: s["llm_call_count"] = 0; s.pop("reasoning_content", None)
    if (i + k) % 11 == 5: s["is_copied_context"] = True
    return s
tools = [{"type": "function", "function": {"name": "fn0", "description": "d", "parameters": {"type": "object"}}}]
for d in range(10):
    n = 4 + d * 3 + (80 if d in (4, 7) else 0)           # documents 4 and 7 are paged
    doc = {"schema_version": "ATIF-v1.6", "session_id": "run-%02d" % d,
           "steps": [step(i, "m-%d" % ((d + i) % 3) if d != 7 or i < 30 else "m-late", d) for i in range(n)]}
    doc["agent"] = {"name": "gen", "version": "1", "model_name": "m-0"}
    if d % 3 == 0: doc["agent"]["tool_definitions"] = tools
    if d == 6:
        doc["steps"][2]["observation"] = {"results": [{"content": "sub", "subagent_trajectory_ref": [{"session_id": "sub-06"}]}]}
        doc["subagent_trajectories"] = [{"schema_version": "ATIF-v1.6", "session_id": "sub-06", "trajectory_id": "sub-06",
                                         "agent": {"name": "sub", "version": "1", "tool_definitions": tools[:1] * 2},
                                         "steps": [step(i, "m-sub", 3) for i in range(7)]}]
    with open(os.path.join(root, "a", "d%02d.json" % d), "w") as f:
        json.dump(doc, f, indent=1 if d % 2 else None)     # raw argument text keeps its spaces
PY
[ $? = 0 ] || { echo "FAIL generating the documents"; exit 1; }
"$VX" build --from "$tmp/in" --to "$tmp/vx" --source-id gen --cluster-bytes 8K --hot-max 64 --cold-max 1K \
    --quiet 2>"$tmp/build.err" || { echo "FAIL build"; cat "$tmp/build.err"; exit 1; }
[ -s "$tmp/build.err" ] && { echo "FAIL the build rejected documents"; cat "$tmp/build.err"; exit 1; }
[ -n "$(find "$tmp/vx" -path '*blob*' -type f | head -1)" ] || [ -n "$(find "$tmp/vx" -name '*.pack' | head -1)" ] ||
    { echo "FAIL no content went to blob packs: the external tier is not covered"; ls -R "$tmp/vx" | head; fail=1; }

cat > "$tmp/sft.py" <<'PY'
import calendar, json, os, sys, time
docs_dir, got_path, fmt = sys.argv[1], sys.argv[2], sys.argv[3]
flt = json.loads(sys.argv[4]) if len(sys.argv) > 4 else {}
def ms(ts): return calendar.timegm(time.strptime(ts, "%Y-%m-%dT%H:%M:%SZ")) * 1000
class JsonText:           # an OpenAI arguments string: JSON text equal to this value
    def __init__(self, v): self.v = v
def msgs(s):
    role = {"system": "system", "user": "user", "agent": "assistant"}[s["source"]]
    m = {"role": role, "content": s.get("message")}
    if "reasoning_content" in s: m["reasoning_content"] = s["reasoning_content"]
    calls = s.get("tool_calls")
    if fmt == "messages" and calls:
        m["tool_calls"] = [{"id": c.get("tool_call_id"), "type": "function",
                            "function": {"name": c.get("function_name"),
                                         "arguments": c["arguments"] if isinstance(c.get("arguments"), str) else JsonText(c.get("arguments"))}}
                           for c in calls]
    elif fmt == "atif" and calls is not None:
        m["tool_calls"] = [{"id": c.get("tool_call_id"), "function_name": c.get("function_name"), "arguments": c.get("arguments")} for c in calls]
    return [m] + [{"role": "tool", "tool_call_id": r.get("source_call_id"), "content": r.get("content")}
                  for r in (s.get("observation") or {}).get("results", [])]
want = []
def walk(t, rel):   # rel: the document path, which a key carries (docs/atif.md "Stable keys")
    conv = []
    tools = (t.get("agent") or {}).get("tool_definitions", [])
    for i, s in enumerate(t.get("steps", [])):
        ok = s["source"] == "agent" and s.get("is_copied_context") is not True and s.get("llm_call_count", 1) != 0
        if flt.get("model") and s.get("model_name") != flt["model"]: ok = False
        if flt.get("run") and t["session_id"] not in flt["run"]: ok = False
        if "since" in flt and not (flt["since"] <= ms(s["timestamp"]) < flt["until"]): ok = False
        mine = msgs(s)
        if ok:
            if fmt == "messages":
                want.append({"messages": conv + mine[:1], "tools": tools})
            else:
                want.append({"source_id": "gen", "run_id": t["session_id"], "trajectory_key": (t.get("trajectory_id") or t["session_id"]) + "@" + rel,
                             "step_ordinal": i, "step_id": s.get("step_id"), "model_name": s.get("model_name"),
                             "messages": list(conv), "completion": mine[0]})
        conv = conv + mine
    for sub in t.get("subagent_trajectories", []): walk(sub, rel)
for dp, _, fs in sorted(os.walk(docs_dir)):
    for f in sorted(fs): walk(json.load(open(os.path.join(dp, f))), os.path.relpath(os.path.join(dp, f), docs_dir))
def same(g, w):
    if isinstance(w, JsonText): return isinstance(g, str) and json.loads(g) == w.v
    if isinstance(w, dict): return isinstance(g, dict) and g.keys() == w.keys() and all(same(g[k], w[k]) for k in w)
    if isinstance(w, list): return isinstance(g, list) and len(g) == len(w) and all(same(a, b) for a, b in zip(g, w))
    return type(g) == type(w) and g == w
got = [json.loads(l) for l in open(got_path)]
if not want and not flt.get("empty"): print("no examples expected: vacuous"); sys.exit(1)
if fmt == "atif":     # storage order is the documents' path order, subagents after their parent
    key = lambda r: (r["trajectory_key"], r["step_ordinal"])
    got.sort(key=key); want.sort(key=key)
else:                 # no identity in the messages form: compare as multisets of the JSON
    norm = lambda r: json.dumps(r, sort_keys=True)
    enc = lambda w: json.loads(json.dumps(w, default=lambda o: {"__json__": o.v}))
    got.sort(key=norm); want.sort(key=lambda w: norm(enc(w)))
if len(got) != len(want): print("got %d examples, want %d" % (len(got), len(want))); sys.exit(1)
for i, (g, w) in enumerate(zip(got, want)):
    if not same(g, w):
        print("example %d differs:\n got  %s\n want %s" % (i, json.dumps(g)[:600], json.dumps(enc(w) if fmt == "messages" else w)[:600]))
        sys.exit(1)
print("%d examples" % len(got))
PY
check() {  # check NAME FORMAT FILTER_JSON ARGS...
    local name=$1 fmt=$2 flt=$3; shift 3
    "$VX" sft "$tmp/vx" --format "$fmt" "$@" >"$tmp/$name.out" 2>"$tmp/$name.err" ||
        { echo "FAIL $name: exit $?"; cat "$tmp/$name.err"; fail=1; return; }
    python3 "$tmp/sft.py" "$tmp/in" "$tmp/$name.out" "$fmt" "$flt" >"$tmp/$name.py" || { echo "FAIL $name"; cat "$tmp/$name.py"; fail=1; }
}
for fmt in messages atif; do
    check "$fmt" $fmt '{}'
    check "$fmt-model" $fmt '{"model": "m-1"}' --model m-1
    check "$fmt-late" $fmt '{"model": "m-late"}' --model m-late
    check "$fmt-runs" $fmt '{"run": ["run-04", "sub-06", "run-09"]}' --run run-04 --run sub-06 --run run-09
    check "$fmt-window" $fmt '{"since": 1780300800000, "until": 1780302000000}' --since 2026-06-01T08:00:00Z --until 1780302000000
    check "$fmt-source" $fmt '{"empty": true, "run": ["none"]}' --source-id other
done
# the OpenAI form really has what the comparison relies on
grep -q '"type":"function","function":{"name":"fn0","arguments":"' "$tmp/messages.out" || { echo "FAIL no OpenAI tool call in the output"; fail=1; }
grep -q '"tools":\[{"type":"function"' "$tmp/messages.out" || { echo "FAIL no tool definitions in the output"; fail=1; }
grep -q '"tools":\[\]' "$tmp/messages.out" || { echo "FAIL no example without tool definitions"; fail=1; }
grep -q '"content":\[{"type":"text"' "$tmp/messages.out" || { echo "FAIL no content parts in the output"; fail=1; }
# count: the C API's batches hold the same examples
for f in "" "--model m-late"; do
    n=$(wc -l <"$tmp/messages${f:+-late}.out")
    "$VX" sft "$tmp/vx" --format count $f >"$tmp/count.out" 2>"$tmp/count.err" &&
        python3 -c "import json,sys; c=json.load(open(sys.argv[1])); sys.exit(0 if c['examples']==int(sys.argv[2])>0 and c['messages']>=c['examples'] and c['content_bytes']>=c['message_bytes']>0 else 1)" "$tmp/count.out" "$n" ||
        { echo "FAIL sft --format count $f: $(cat "$tmp/count.out" "$tmp/count.err") (want $n examples)"; fail=1; }
done
# the default format is atif
"$VX" sft "$tmp/vx" >"$tmp/default.out" 2>/dev/null && cmp -s "$tmp/default.out" "$tmp/atif.out" ||
    { echo "FAIL the default format is not atif"; fail=1; }
# --stats counts each content value once
"$VX" sft "$tmp/vx" --format messages --stats >/dev/null 2>"$tmp/stats.err" && grep -Eq '^stats: examples=[1-9][0-9]* message_mib=' "$tmp/stats.err" ||
    { echo "FAIL --stats: $(cat "$tmp/stats.err")"; fail=1; }
# the model filter on the late pages of a paged document: clusters before them are skipped
# by their summaries, yet the conversation of the late steps holds every earlier step
"$VX" sft "$tmp/vx" --format messages --model m-late --stats 2>"$tmp/late.err" | cmp -s - "$tmp/messages-late.out" ||
    { echo "FAIL sft --stats changes the output"; fail=1; }
grep -Eq ' clusters_summary_pruned=[1-9]' "$tmp/late.err" || { echo "FAIL --model m-late skipped no cluster: $(cat "$tmp/late.err")"; fail=1; }
python3 - "$tmp/messages-late.out" <<'PY' || { echo "FAIL m-late examples do not carry the whole conversation"; fail=1; }
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
assert rows and min(len(r["messages"]) for r in rows) > 30, [len(r["messages"]) for r in rows]
PY

# the parallel read-ahead: any number of decoding threads gives the same examples in the same
# order, also where the summaries skip clusters before the late pages of a paged conversation
threads="1 2 3 4"; [ "${PCH_VALGRIND:-0}" = 1 ] && threads="1 3"     # valgrind serialises threads
for t in $threads; do
    "$VX" sft "$tmp/vx" --format messages --threads $t 2>"$tmp/tn.err" | cmp -s - "$tmp/messages.out" ||
        { echo "FAIL sft --threads $t differs $(cat "$tmp/tn.err")"; fail=1; }
    "$VX" sft "$tmp/vx" --format messages --model m-late --threads $t --stats 2>"$tmp/tn.err" | cmp -s - "$tmp/messages-late.out" ||
        { echo "FAIL sft --model m-late --threads $t differs $(cat "$tmp/tn.err")"; fail=1; }
    grep -Eq ' clusters_summary_pruned=[1-9]' "$tmp/tn.err" || { echo "FAIL --threads $t: no cluster skipped: $(cat "$tmp/tn.err")"; fail=1; }
done

# a long conversation: each line repeats the conversation so far, so the lines of one 3,000-step
# trajectory total ~300 MB; the reader hands them out in pieces, and a process capped at 300 MB
# of address space writes them all (one buffer for a trajectory's lines ran out of memory)
if [ "${PCH_VALGRIND:-0}" != 1 ]; then
    python3 - "$tmp/long/in" <<'PY'
import json, os, sys
os.makedirs(sys.argv[1])
steps = [{"step_id": i + 1, "source": "user" if i % 2 == 0 else "agent", "message": "message %d " % i + "x" * 90} for i in range(3000)]
for s in steps:
    if s["source"] == "agent": s["model_name"] = "m"
json.dump({"schema_version": "ATIF-v1.6", "session_id": "long", "agent": {"name": "a", "version": "1"}, "steps": steps},
          open(os.path.join(sys.argv[1], "long.json"), "w"))
PY
    "$VX" build --from "$tmp/long/in" --to "$tmp/long/vx" --quiet || { echo "FAIL build of the long trajectory"; fail=1; }
    cap="ulimit -v 307200"     # a sanitizer's shadow memory needs the address space: no cap there
    ldd "$VX" 2>/dev/null | grep -Eq 'libasan|libubsan|clang_rt' && cap=:
    out=$( ($cap; "$VX" sft "$tmp/long/vx" --format messages) 2>"$tmp/long.err" | wc -lc)
    read -r lines bytes <<<"$out"
    { [ "$lines" = 1500 ] && [ "$bytes" -gt 250000000 ] && [ ! -s "$tmp/long.err" ]; } ||
        { echo "FAIL long conversation: $lines lines, $bytes bytes: $(head -c 300 "$tmp/long.err")"; fail=1; }
fi

# errors
"$VX" sft "$tmp/vx" --format jsonl >/dev/null 2>"$tmp/e1"; rc=$?
{ [ $rc = 2 ] && grep -q 'atif, messages or count' "$tmp/e1"; } || { echo "FAIL --format jsonl: exit $rc"; cat "$tmp/e1"; fail=1; }
"$VX" sft "$tmp/vx" --format >/dev/null 2>&1; rc=$?
[ $rc = 2 ] || { echo "FAIL --format without a value: exit $rc"; fail=1; }
"$VX" sft --help | grep -q 'tool_definitions' || { echo "FAIL --help"; fail=1; }

[ $fail = 0 ] && echo "vortex_sft: ok"
exit $fail
