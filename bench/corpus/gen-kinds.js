#!/usr/bin/env node
"use strict";
// The six corpus kinds of RFC-0006 §22.1, deterministic and seeded, in the layout of the
// shared generator (../shared/bench/traj/gen-corpus.js), so that its peers (official Lance,
// DuckDB/Parquet: run.sh with CORPORA=<kind>) and our bench read them unchanged:
//
//   OUT/<kind>/docs/**.json    one ATIF root document per file
//   OUT/<kind>/index.jsonl     one line per trajectory (run_id, trajectory_key, doc, ...)
//   OUT/<kind>/MANIFEST.json   counts, bytes before compression, field distributions,
//                              duplicate share, SHA-256 fingerprint, parameters (§22.1)
//
//   node bench/corpus/gen-kinds.js KIND [--out DIR] [--count N] [--seed S] [--src ATIF_DIR] [--tiny] [--force]
//   node bench/corpus/gen-kinds.js --list
//
// KIND (§22.1):
//   chat-heavy    many short messages, few tools, no token ids
//   tool-heavy    large tool arguments and results, mostly unique text
//   dedup-heavy   repeated system prompts, code and log fragments (whole and lightly edited)
//   rl            token/RL-heavy: prompt/completion ids, logprobs, reward — the shared
//                 generator's `rl` kind, run as it is
//   multi-agent   deep and wide embedded subagent trees; run/session ids shared by siblings
//                 and by groups of documents
//   pathological  one huge trajectory, huge blobs, explicit nulls everywhere they are allowed,
//                 high-cardinality model, function and extra-key strings
// Every text is drawn from the real ATIF documents of ../shared/corpus/atif (messages, tool
// names, arguments, results, system prompts), so the vocabulary is a producer's, not a
// generator's. Same inputs + seed + GENERATOR_VERSION => byte-identical documents.
// The default counts size each kind at about 100-250 MiB of ATIF JSON (two cores, minutes
// per system); --count scales it. --tiny shrinks what no count reaches (the huge trajectory to
// 1,500 steps, the huge blobs to 256 KiB-1 MiB) for the smoke run of make test.
const fs = require("fs");
const path = require("path");
const crypto = require("crypto");
const { execFileSync } = require("child_process");

const REPO = path.resolve(__dirname, "../..");
const TRAJ_DIR = path.resolve(process.env.TRAJ_DIR || path.join(REPO, "../shared/bench/traj"));
const C = require(path.join(TRAJ_DIR, "lib", "common.js"));

const GENERATOR_VERSION = "pch-corpus-kinds/1";
const KINDS = {
  "chat-heavy": { count: 12000, doc: chatDoc, what: "short messages, few tools, low token density" },
  "tool-heavy": { count: 300, doc: toolDoc, what: "large tool arguments/results, mostly unique text" },
  "dedup-heavy": { count: 3000, doc: dedupDoc, what: "repeated system prompts, code and log fragments" },
  rl: { count: 1000, doc: null, what: "prompt/completion token ids, logprobs, reward (the shared generator's rl)" },
  "multi-agent": { count: 2000, doc: multiDoc, what: "deep/wide subagent trees, shared run and session ids" },
  pathological: { count: 2000, doc: pathoDoc, what: "one huge trajectory, huge blobs, null-heavy columns, high-cardinality strings" },
};

let args;
try {
  args = C.parseArgs(process.argv.slice(2), { out: "/tmp/traj-corpus", src: path.resolve(TRAJ_DIR, "../../corpus/atif"),
                                              count: 0, seed: "", force: false, list: false, tiny: false });
} catch (e) { usage(e.message); }
function usage(msg) {
  if (msg) console.error(`gen-kinds: ${msg}`);
  console.error(`usage: gen-kinds.js KIND [--out DIR] [--count N] [--seed S] [--src ATIF_DIR] [--tiny] [--force]\n       gen-kinds.js --list\nKIND: ${Object.keys(KINDS).join(", ")}`);
  process.exit(2);
}
if (args.list) {
  for (const [k, v] of Object.entries(KINDS)) console.log(`${k}\t${v.count}\t${v.what}`);
  process.exit(0);
}
const kind = args._[0];
if (!KINDS[kind] || args._.length !== 1) usage(kind ? `unknown kind ${kind}` : "no kind given");
if (!Number.isInteger(args.count) || args.count < 0) usage(`--count ${args.count}: a whole number`);

// The token/RL kind is the shared generator's rl, the corpus its peers were tuned on.
if (kind === "rl") {
  const a = [path.join(TRAJ_DIR, "gen-corpus.js"), "rl", "--out", args.out, "--src", args.src, "--count", String(args.count || KINDS.rl.count)];
  if (args.seed) a.push("--seed", args.seed);
  if (args.force) a.push("--force");
  execFileSync(process.execPath, a, { stdio: "inherit" });
  process.exit(0);
}

const OUT = path.join(args.out, kind);
const DOCS = path.join(OUT, "docs");
if (fs.existsSync(path.join(OUT, "MANIFEST.json")) && !args.force) { console.error(`${OUT} exists (use --force)`); process.exit(0); }
fs.rmSync(OUT, { recursive: true, force: true });
fs.mkdirSync(DOCS, { recursive: true });
const t0 = C.nowMs();
const N = args.count || KINDS[kind].count;
const SEED = args.seed || `${kind}-v1`;
const HUGE_STEPS = args.tiny ? 1500 : 40000;                       // pathological: the huge trajectory
const BLOB_MIN = args.tiny ? 256 << 10 : 4 << 20, BLOB_MAX = args.tiny ? 1 << 20 : 12 << 20;   // and its blobs

// ------------------------------------------------------------------ material from real documents
// Strings of the template documents, by role: sentences of messages, system prompts, tool
// names with their argument objects, tool-result texts, words, model names.
function readMaterial(src) {
  const M = { sentences: [], systems: [], calls: [], results: [], words: new Set(), models: new Set(), docs: 0 };
  const addText = (s, into) => {
    if (typeof s !== "string" || !s) return;
    for (const w of s.split(/[^A-Za-z_]+/)) if (w.length >= 3 && w.length <= 16) M.words.add(w);
    if (into) into.push(s);
  };
  (function walkDir(d) {
    for (const e of fs.readdirSync(d, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) { walkDir(p); continue; }
      if (!e.name.endsWith(".json")) continue;
      let doc; try { doc = JSON.parse(fs.readFileSync(p, "utf8")); } catch { continue; }
      if (!doc || typeof doc.schema_version !== "string" || !doc.schema_version.startsWith("ATIF-") || !Array.isArray(doc.steps)) continue;
      M.docs++;
      (function walk(t) {
        if (t.agent && typeof t.agent.model_name === "string") M.models.add(t.agent.model_name);
        for (const s of t.steps) {
          if (typeof s.model_name === "string") M.models.add(s.model_name);
          const msg = typeof s.message === "string" ? s.message : "";
          if (s.source === "system") addText(msg, msg.length >= 200 ? M.systems : null);
          else for (const x of msg.split(/(?<=[.!?])\s+|\n+/)) if (x.length >= 12 && x.length <= 400) addText(x, M.sentences);
          for (const tc of s.tool_calls || [])
            if (typeof tc.function_name === "string" && tc.arguments && typeof tc.arguments === "object" && !Array.isArray(tc.arguments))
              M.calls.push({ name: tc.function_name, args: tc.arguments });
          for (const r of (s.observation && s.observation.results) || []) if (typeof r.content === "string" && r.content.length >= 16) addText(r.content, M.results);
        }
        (t.subagent_trajectories || []).forEach(walk);
      })(doc);
    }
  })(src);
  M.words = [...M.words].sort();
  M.models = [...M.models].sort();
  if (M.docs === 0 || M.sentences.length < 10 || M.calls.length < 2 || M.results.length < 2)
    throw new Error(`${src}: too few ATIF documents to draw from (${M.docs} documents)`);
  if (!M.systems.length) M.systems = M.sentences.slice(0, 8).map((s) => s.repeat(8));
  return M;
}
const M = readMaterial(args.src);

// ------------------------------------------------------------------ text helpers
function clip(s, n) { if (s.length <= n) return s; const cut = s.lastIndexOf(" ", n); return s.slice(0, cut > n / 2 ? cut : n); }
function para(R, lo, hi) {                          // prose of lo..hi characters from real sentences
  const n = R.int(lo, hi);
  let s = R.pick(M.sentences);
  while (s.length < n) s += " " + R.pick(M.sentences);
  return clip(s, n);
}
function ident(R) { return R.pick(M.words).toLowerCase() + "_" + R.pick(M.words).toLowerCase(); }
// Mostly unique text: lines of source-like or log-like text, each carrying values that do not
// repeat (ids, counters), so no two outputs share long runs; compressible like real output.
function uniqueText(R, bytes) {
  const out = [];
  let n = 0, line = R.int(1, 400);
  while (n < bytes) {
    let l;
    switch (R.int(0, 3)) {
      case 0: l = `${String(line).padStart(5)}  ${ident(R)}(${ident(R)}=${R.int(0, 99999)}, ${ident(R)}="${R.hex(R.int(6, 16))}")`; break;
      case 1: l = `[2026-${String(R.int(1, 12)).padStart(2, "0")}-${String(R.int(1, 28)).padStart(2, "0")} ${R.int(10, 23)}:${R.int(10, 59)}:${R.int(10, 59)}] ${R.pick(["INFO", "DEBUG", "WARN", "ERROR"])} ${R.pick(M.words)}: ${clip(R.pick(M.sentences), 120)} (${R.hex(8)})`; break;
      case 2: l = `    ${ident(R)} = ${ident(R)}.${R.pick(M.words)}(${R.int(0, 1 << 20)})  # ${clip(R.pick(M.sentences), 60)}`; break;
      default: l = `${R.pick(M.words)}/${R.pick(M.words)}/${ident(R)}.${R.pick(["py", "rs", "ts", "go", "c", "md"])}:${R.int(1, 9999)}: ${R.hex(R.int(4, 40))}`;
    }
    out.push(l);
    n += l.length + 1;
    line++;
  }
  return out.join("\n");
}
// A tool call taken from the templates; its argument strings replaced by `fill` where given.
function realCall(R, fill) {
  const c = R.pick(M.calls);
  const a = JSON.parse(JSON.stringify(c.args));
  if (fill) for (const k of Object.keys(a)) if (typeof a[k] === "string") a[k] = fill(k, a[k]);
  return { name: c.name, args: a };
}

// ------------------------------------------------------------------ ATIF builders (v1.7)
const T0 = Date.UTC(2026, 0, 1), SPAN = 90 * 86400000;   // corpus time axis, as the shared generator
function clock(i, R) { let ms = T0 + Math.floor((i / N) * SPAN) + R.int(0, 600000); return () => new Date((ms += R.int(200, 30000))).toISOString(); }
function agentOf(R, model) { return { name: R.pick(["terminus-2", "mini-swe-agent", "fast-agent", "openhands", "claude-code"]), version: `${R.int(0, 3)}.${R.int(0, 20)}.${R.int(0, 9)}`, model_name: model }; }
function trajectory(R, model, steps, ids) {
  const t = { schema_version: "ATIF-v1.7" };
  if (ids.session_id !== undefined) t.session_id = ids.session_id;
  if (ids.trajectory_id !== undefined) t.trajectory_id = ids.trajectory_id;
  t.agent = agentOf(R, model);
  steps.forEach((s, k) => { s.step_id = k + 1; });
  t.steps = steps.map((s) => Object.assign({ step_id: s.step_id }, s));
  let p = 0, c = 0, k = 0;
  for (const s of steps) if (s.metrics) { p += s.metrics.prompt_tokens || 0; c += s.metrics.completion_tokens || 0; k += s.metrics.cached_tokens || 0; }
  t.final_metrics = { total_prompt_tokens: p, total_completion_tokens: c, total_cached_tokens: k, total_steps: steps.length };
  return t;
}
const step = (source, ts, message, more) => Object.assign({ timestamp: ts, source, message }, more || {});
function agentStep(R, ts, model, message, ctx, calls, results, more) {
  const s = step("agent", ts, message, { model_name: model });
  if (more) Object.assign(s, more);
  if (calls && calls.length) s.tool_calls = calls;
  if (results && results.length) s.observation = { results };
  const completion = Math.max(1, Math.round(message.length / 4) + (calls || []).reduce((a, x) => a + JSON.stringify(x.arguments).length / 4, 0) | 0);
  s.metrics = { prompt_tokens: ctx.tokens, completion_tokens: completion, cached_tokens: Math.floor(ctx.tokens * 0.7) };
  s.llm_call_count = 1;
  // producers set it on some steps; a column of nulls only also trips the official-Lance peer's
  // Arrow writer ("Need at least N bytes for bitmap" on an all-null boolean batch)
  if (R() < 0.1) s.is_copied_context = false;
  ctx.tokens += completion + (results || []).reduce((a, r) => a + (typeof r.content === "string" ? r.content.length / 4 : 16), 0) | 0;
  return s;
}
function callOf(R, name, args) { return { tool_call_id: `call_${R.hex(24)}`, function_name: name, arguments: args }; }

// chat-heavy: a system prompt, then 4-40 short user/assistant turns; a tool in 1 of 20 turns.
const CHAT_SYSTEMS = (() => { const R = C.rng(`${SEED}/systems`); return Array.from({ length: 40 }, () => para(R, 80, 320)); })();
function chatDoc(i, R) {
  const ts = clock(i, R), model = R.pick(M.models), ctx = { tokens: R.int(200, 900) };
  const steps = [step("system", ts(), R.pick(CHAT_SYSTEMS))];
  for (let t = R.int(4, 40); t > 0; t--) {
    steps.push(step("user", ts(), para(R, 12, 220)));
    let calls = null, results = null;
    if (R() < 0.05) {
      const c = realCall(R, () => para(R, 8, 60));
      calls = [callOf(R, c.name, c.args)];
      results = [{ source_call_id: calls[0].tool_call_id, content: para(R, 20, 300) }];
    }
    steps.push(agentStep(R, ts(), model, para(R, 12, 420), ctx, calls, results));
  }
  return trajectory(R, model, steps, { session_id: R.uuid() });
}

// tool-heavy: a task, then 4-20 agent steps with 1-3 calls each: arguments of 0.2-16 KB and
// results of 1-48 KB of unique text.
function toolDoc(i, R) {
  const ts = clock(i, R), model = R.pick(M.models), ctx = { tokens: R.int(1000, 4000) };
  const steps = [step("system", ts(), para(R, 300, 1200)), step("user", ts(), para(R, 100, 600))];
  for (let a = R.int(4, 20); a > 0; a--) {
    const calls = [], results = [];
    for (let c = R.int(1, 3); c > 0; c--) {
      const big = R.int(200, 16384);
      const rc = realCall(R, (k, v) => (v.length > 40 || R() < 0.3 ? uniqueText(R, big) : v));
      const call = callOf(R, rc.name, rc.args);
      calls.push(call);
      results.push({ source_call_id: call.tool_call_id, content: uniqueText(R, R.int(1024, 48 * 1024)), extra: { is_error: R() < 0.08 } });
    }
    steps.push(agentStep(R, ts(), model, para(R, 20, 300), ctx, calls, results, R() < 0.5 ? { reasoning_content: para(R, 40, 600) } : null));
  }
  steps.push(agentStep(R, ts(), model, para(R, 40, 400), ctx));
  return trajectory(R, model, steps, { session_id: R.uuid() });
}

// dedup-heavy: pools made once from the seed; a document repeats them whole or lightly edited.
const POOLS = (() => {
  const R = C.rng(`${SEED}/pools`);
  const tools = JSON.stringify(M.calls.slice(0, 40).map((c) => ({ name: c.name, parameters: Object.keys(c.args) })));
  return {
    systems: Array.from({ length: 6 }, () => para(R, 4000, 14000) + "\n\nTools:\n" + tools),
    code: Array.from({ length: 120 }, () => uniqueText(R, R.int(1024, 8192))),
    logs: Array.from({ length: 120 }, () => uniqueText(R, R.int(1024, 8192))),
  };
})();
function zipf(R, n) { return Math.min(n - 1, Math.floor(Math.pow(R(), 2.2) * n)); }   // skewed toward the head
function edited(R, text) {                                       // one line changed
  const lines = text.split("\n");
  lines[R.int(0, lines.length - 1)] = `# edited ${R.hex(12)}`;
  return lines.join("\n");
}
function dedupDoc(i, R) {
  const ts = clock(i, R), model = R.pick(M.models), ctx = { tokens: R.int(3000, 6000) };
  const steps = [step("system", ts(), POOLS.systems[zipf(R, POOLS.systems.length)]), step("user", ts(), para(R, 60, 400))];
  for (let a = R.int(6, 24); a > 0; a--) {
    const u = R();
    const pool = R() < 0.5 ? POOLS.code : POOLS.logs;
    const frag = pool[zipf(R, pool.length)];
    const content = u < 0.6 ? frag : u < 0.8 ? edited(R, frag) : uniqueText(R, R.int(200, 2000));
    const rc = realCall(R, () => `${R.pick(M.words)}/${R.pick(M.words)}.${R.pick(["py", "log", "ts"])}`);
    const call = callOf(R, rc.name, rc.args);
    steps.push(agentStep(R, ts(), model, para(R, 20, 200), ctx, [call], [{ source_call_id: call.tool_call_id, content }]));
  }
  return trajectory(R, model, steps, { session_id: R.uuid() });
}

// multi-agent: a root whose delegating steps name embedded subagents (depth <= 4, fan-out <=
// 6, <= 40 trajectories a document); a subagent shares the run's session id or omits it
// (inherits), siblings collide; groups of 1-12 consecutive documents share one session id.
let groupLeft = 0, groupSession = "";
function multiDoc(i, R) {
  if (groupLeft-- <= 0) { groupLeft = R.int(0, 11); groupSession = `run-${R.hex(16)}`; }
  const ts = clock(i, R), budget = { left: R.int(3, 40) };
  function node(depth, tid) {
    const model = R.pick(M.models), ctx = { tokens: R.int(300, 3000) };
    const steps = [step("user", ts(), para(R, 30, 300))];
    const subs = [];
    for (let a = R.int(2, 8); a > 0; a--) {
      if (depth < 4 && budget.left > 0 && R() < (depth === 0 ? 0.6 : 0.35)) {
        const calls = [], results = [];
        for (let w = Math.min(budget.left, R.int(1, depth === 0 ? 6 : 3)); w > 0 && budget.left > 0; w--) {
          budget.left--;
          const id = `agent-${depth + 1}-${subs.length}-${R.hex(8)}`;
          const call = callOf(R, R.pick(["task", "delegate", "spawn_agent", "worker"]), { task: para(R, 20, 200), agent: R.pick(M.words) });
          calls.push(call);
          const ref = { trajectory_id: id };
          if (R() < 0.5) ref.session_id = groupSession;
          results.push({ source_call_id: call.tool_call_id, content: para(R, 20, 200), subagent_trajectory_ref: [ref] });
          subs.push(node(depth + 1, id));
        }
        steps.push(agentStep(R, ts(), model, para(R, 20, 200), ctx, calls, results));
      } else {
        let calls = null, results = null;
        if (R() < 0.5) {
          const c = realCall(R, (k, v) => clip(v, 200));
          calls = [callOf(R, c.name, c.args)];
          results = [{ source_call_id: calls[0].tool_call_id, content: clip(R.pick(M.results), R.int(100, 2000)) }];
        }
        steps.push(agentStep(R, ts(), model, para(R, 20, 300), ctx, calls, results));
      }
    }
    const ids = { trajectory_id: tid };
    if (depth === 0 || R() < 0.7) ids.session_id = groupSession;   // the rest inherit it
    const t = trajectory(R, model, steps, ids);
    if (subs.length) t.subagent_trajectories = subs;
    return t;
  }
  return node(0, `root-${R.hex(12)}`);
}

// pathological: document 0 is one huge trajectory (HUGE_STEPS steps); documents 1-6 each carry
// a 4-12 MiB tool result (BLOB_MIN..BLOB_MAX); the rest leave out every optional field they can
// (null cells in every typed column: metrics, token counts, content, call counts), hold explicit
// nulls inside `extra` objects and arguments, and have model, function and extra-key strings
// that are new at every step. Explicit nulls in typed fields are not used: the Storyline
// tables of the peers cannot tell them from absent fields (a capability difference, RFC-0006
// §21.2; our Vortex projection keeps them, tests/cli/vortex_projection.sh), and the peers'
// round-trip check would stop their run.
function pathoDoc(i, R) {
  const ts = clock(i, R), model = R.pick(M.models), ctx = { tokens: 100 };
  const steps = [step("user", ts(), para(R, 40, 400))];
  if (i === 0) {
    for (let a = 0; a < HUGE_STEPS; a++) {
      const c = realCall(R, (k, v) => clip(v, 120));
      const call = callOf(R, c.name, c.args);
      steps.push(agentStep(R, ts(), model, para(R, 10, 200), ctx, [call], [{ source_call_id: call.tool_call_id, content: clip(R.pick(M.results), R.int(50, 1200)) }]));
    }
    return trajectory(R, model, steps, { session_id: R.uuid(), trajectory_id: "huge-trajectory" });
  }
  if (i <= 6) {
    const c = realCall(R, null);
    const call = callOf(R, c.name, c.args);
    steps.push(agentStep(R, ts(), model, para(R, 20, 200), ctx, [call], [{ source_call_id: call.tool_call_id, content: uniqueText(R, R.int(BLOB_MIN, BLOB_MAX)) }]));
    return trajectory(R, model, steps, { session_id: R.uuid() });
  }
  for (let a = R.int(4, 60); a > 0; a--) {
    const fn = `fn_${R.hex(12)}`;
    const call = callOf(R, fn, { [`k_${R.hex(6)}`]: R() < 0.5 ? null : R.hex(R.int(8, 64)), v: null });
    const result = { source_call_id: call.tool_call_id };
    if (R() < 0.5) result.content = R.hex(R.int(16, 256));
    const s = agentStep(R, ts(), `model-${R.hex(10)}`, R() < 0.3 ? "" : para(R, 1, 80), ctx, [call], [result]);
    s.metrics = R() < 0.5 ? { extra: { [`x_${R.hex(8)}`]: null } } : { completion_tokens: R.int(0, 99) };
    if (R() < 0.5) delete s.llm_call_count;
    s.extra = { [`tag_${R.hex(10)}`]: R.hex(20), nothing: null };
    steps.push(s);
  }
  const t = trajectory(R, model, steps, { session_id: R.uuid() });
  t.final_metrics = { total_steps: steps.length };
  return t;
}

// ------------------------------------------------------------------ statistics (§22.1: field
// distributions, bytes before compression, duplicate share)
const stats = {
  docs: 0, trajectories: 0, subagent_trajectories: 0, max_depth: 0, steps: 0, tool_calls: 0, json_bytes: 0, max_doc_bytes: 0,
  max_steps_per_trajectory: 0, content_bytes: 0, duplicate_content_bytes: 0, null_values: 0,
  steps_by_source: {}, steps_per_trajectory: {}, distinct_models: 0, distinct_functions: 0, distinct_session_ids: 0,
};
const seen = new Set(), models = new Set(), functions = new Set(), sessions = new Set();
function countContent(v) {
  if (v === undefined || v === null) return;
  const s = typeof v === "string" ? v : JSON.stringify(v);
  const n = Buffer.byteLength(s);
  stats.content_bytes += n;
  if (n < 64) return;                          // as the shared generator: tiny values are not dedup material
  const h = crypto.createHash("sha1").update(s).digest("base64");
  if (seen.has(h)) stats.duplicate_content_bytes += n; else seen.add(h);
}
function countNulls(v) {
  if (v === null) { stats.null_values++; return; }
  if (Array.isArray(v)) v.forEach(countNulls);
  else if (typeof v === "object") for (const k of Object.keys(v)) countNulls(v[k]);
}
function record(doc, bytes) {
  stats.docs++; stats.json_bytes += bytes; stats.max_doc_bytes = Math.max(stats.max_doc_bytes, bytes);
  countNulls(doc);
  const inc = (o, k) => { o[k] = (o[k] || 0) + 1; };
  (function walk(t, depth) {
    stats.trajectories++; if (depth) stats.subagent_trajectories++;
    stats.max_depth = Math.max(stats.max_depth, depth);
    stats.max_steps_per_trajectory = Math.max(stats.max_steps_per_trajectory, t.steps.length);
    if (typeof t.session_id === "string") sessions.add(t.session_id);
    const n = t.steps.length;
    inc(stats.steps_per_trajectory, n < 5 ? "1-4" : n < 10 ? "5-9" : n < 20 ? "10-19" : n < 50 ? "20-49" : n < 1000 ? "50-999" : "1000+");
    for (const s of t.steps) {
      stats.steps++; inc(stats.steps_by_source, s.source);
      if (typeof s.model_name === "string") models.add(s.model_name);
      countContent(s.message); countContent(s.reasoning_content);
      for (const tc of s.tool_calls || []) { stats.tool_calls++; functions.add(tc.function_name); countContent(tc.arguments); }
      for (const r of (s.observation && s.observation.results) || []) countContent(r.content);
    }
    (t.subagent_trajectories || []).forEach((x) => walk(x, depth + 1));
  })(doc, 0);
}

// ------------------------------------------------------------------ writing
const index = [];
const fp = crypto.createHash("sha256");
function emit(rel, doc) {
  const text = JSON.stringify(doc);
  const p = path.join(DOCS, rel);
  fs.mkdirSync(path.dirname(p), { recursive: true });
  fs.writeFileSync(p, text);
  fp.update(rel + "\0" + crypto.createHash("sha256").update(text).digest("hex") + "\n");
  const bytes = Buffer.byteLength(text);
  record(doc, bytes);
  const runId = C.runIdFor(kind, rel);
  for (const f of C.flatten(doc, runId)) {
    const t = f.traj;
    index.push(JSON.stringify({
      run_id: runId, trajectory_key: f.key, parent_trajectory_key: f.parentKey, depth: f.depth, doc: rel,
      session_id: t.session_id ?? null, trajectory_id: t.trajectory_id ?? null, steps: t.steps.length,
      tool_calls: t.steps.reduce((a, s) => a + (s.tool_calls ? s.tool_calls.length : 0), 0),
      doc_bytes: f.depth === 0 ? bytes : null,
    }));
  }
}
const prefix = kind.split("-")[0];
for (let i = 0; i < N; i++) {
  const R = C.rng(`${SEED}/${i}`);
  emit(`${String(Math.floor(i / 1000)).padStart(3, "0")}/${prefix}-${String(i).padStart(6, "0")}.json`, KINDS[kind].doc(i, R));
  if (i % 1000 === 999) process.stderr.write(`${kind}: ${i + 1}/${N} docs, ${(stats.json_bytes / 1048576).toFixed(0)} MiB, ${((C.nowMs() - t0) / 1000).toFixed(0)} s\n`);
}
stats.json_mib = +(stats.json_bytes / 1048576).toFixed(1);
stats.duplicate_rate = +(stats.duplicate_content_bytes / (stats.content_bytes || 1)).toFixed(4);
stats.distinct_models = models.size; stats.distinct_functions = functions.size; stats.distinct_session_ids = sessions.size;
fs.writeFileSync(path.join(OUT, "index.jsonl"), index.join("\n") + "\n");
const manifest = {
  corpus: kind, generator: GENERATOR_VERSION, node: process.version,
  params: { count: N, seed: SEED, tiny: args.tiny, huge_steps: HUGE_STEPS, blob_bytes: [BLOB_MIN, BLOB_MAX], what: KINDS[kind].what, template_docs: M.docs, template_src: path.relative(REPO, args.src) || "." },
  docs_dir: "docs", index: "index.jsonl",
  key_rule: "run_id = uuid-shaped BLAKE3(corpus + '\\n' + doc path); embedded subagents: trajectory_key = parent key + '/' + trajectory_id",
  fingerprint_sha256: fp.digest("hex"), stats, generated_in_s: +((C.nowMs() - t0) / 1000).toFixed(1),
};
fs.writeFileSync(path.join(OUT, "MANIFEST.json"), JSON.stringify(manifest, null, 2) + "\n");
console.error(`${kind}: ${stats.docs} docs, ${stats.trajectories} trajectories, ${stats.steps} steps, ${stats.json_mib} MiB, duplicate share ${stats.duplicate_rate} in ${manifest.generated_in_s} s -> ${OUT}`);
