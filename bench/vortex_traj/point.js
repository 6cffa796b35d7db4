#!/usr/bin/env node
"use strict";
// Cold point reads of our projections on the trajectory benchmark's keys, plus the key mapping.
//
//   node point.js --kind vortex|storyline --bin BIN --root ROOT --corpus CORPUS_DIR/<name>
//        [--lance-keys q-<name>-noindex.keys.txt] [--n 200] [--verify 20] [--stats 5]
//        [--results FILE] [--keys-out FILE] [--warm auto|no]
//
// Keys. The benchmark's key is index.jsonl `run_id`: a UUID-shaped BLAKE3 of
// "<corpus>\n<doc path>" made by the generator. It is not stored anywhere in the documents, so
// our CLIs cannot be asked for it. It is mapped run_id -> doc (index.jsonl) -> the key our
// projection gave that document's root trajectory, matched on the document path:
//   vortex:    the trajectory directory of the current snapshot (`pchronicle-vortex dump` of the
//              directory files the manifest lists; columns doc_path, run_key, trajectory_key,
//              session_id, is_root). There is no public "list keys" command (see the report).
//   storyline: `pchronicle sql ROOT "SELECT doc_path, ... FROM runs WHERE preorder = 0"`.
// The key passed to `get` is that root's trajectory_key (unique per root; a session id is not:
// the real corpus has 5 documents with session_id NORMALIZED_SESSION_ID).
// Sample: the run_ids of the Lance run (q-<name>-noindex.keys.txt) when present, else the same
// list recomputed exactly as lance-queries.js makes it (seed "bench-v1/keys" over the roots).
//
// Timing: every read is a new process (`get ROOT KEY --compact`, stdout to a file), started and
// timed by cold_get.py (posix_spawn + waitpid); one untimed warm-up get first. The process floor
// (the same for /bin/true, ~1 ms) is reported so it can be subtracted. Round trip: the first --verify outputs parsed
// and compared with the corpus documents (key order ignored, nulls kept: canon(x, false) of the
// shared library, as the Lance and DuckDB harnesses compare).
//
// Warm (vortex, when the binary has `bench-get`): `pchronicle-vortex bench-get ROOT --keys FILE
// --warmup 1 --out-dir DIR` in one process over the same keys, FILE = the first key once more
// and then all N (so the untimed warm-up is the first key and all N are timed, as the Lance
// harness does: one untimed read of keys[0], then N timed); its first --verify documents are
// checked like the cold ones. The latencies are lookup + get (compact JSON in memory).
const fs = require("fs");
const path = require("path");
const { spawnSync } = require("child_process");
const L = require("./lib");

const args = L.parseArgs(process.argv.slice(2), {
  kind: "vortex", bin: "", root: "", corpus: "", lance_keys: "", n: 200, verify: 20, stats: 5,
  results: "", keys_out: "", seed: "bench-v1", traj_dir: "", warm: "auto",
});
if (!args.bin || !args.root || !args.corpus) {
  console.error("usage: point.js --kind vortex|storyline --bin BIN --root ROOT --corpus DIR [--lance-keys FILE] [--n N] [--verify K] [--results FILE]");
  process.exit(2);
}
const C = L.trajLib(args.traj_dir);
const log = (m) => process.stderr.write(`[point ${args.kind}] ${m}\n`);

function sh(bin, argv) {
  const r = spawnSync(bin, argv, { encoding: "buffer", maxBuffer: 1 << 30 });
  if (r.error) throw r.error;
  return r;
}

// ------------------------------------------------------------------ our keys per document path
function ourRoots() {
  const rows = [];
  {
    // the keys as the reader gives them (a directory shard leaves derived keys out since
    // 2026-12-07: docs/vortex-projection.md §5), through each side's SQL relation
    const sql = `SELECT doc_path, run_id AS run_key, trajectory_key, session_id, preorder FROM ${args.kind === "vortex" ? "trajectories" : "runs"}`;
    const r = sh(args.bin, ["sql", args.root, sql, "--format", "jsonl"]);
    if (r.status !== 0) throw new Error(`sql failed (${r.status}): ${r.stderr}`);
    for (const l of r.stdout.toString("utf8").split("\n").filter(Boolean)) { const x = JSON.parse(l); x.is_root = x.preorder === 0; rows.push(x); }
  }
  return rows;
}

// ------------------------------------------------------------------ sample (same as the Lance run)
const index = L.indexRoots(args.corpus);
const roots = index.filter((x) => x.depth === 0);
const byRun = new Map(roots.map((x) => [x.run_id, x]));
let runIds, keysSource;
if (args.lance_keys && fs.existsSync(args.lance_keys)) {
  runIds = fs.readFileSync(args.lance_keys, "utf8").split("\n").filter(Boolean).slice(0, args.n);
  keysSource = path.resolve(args.lance_keys);
} else {
  const R = C.rng(`${args.seed}/keys`);
  const pool = R.shuffle(roots.slice());
  runIds = Array.from({ length: args.n }, (_, i) => pool[i % pool.length].run_id);
  keysSource = `recomputed (lance-queries.js loadKeys, seed ${args.seed})`;
}

// ------------------------------------------------------------------ mapping + analysis
const all = ourRoots();
const ours = new Map();
for (const x of all) if (x.is_root) ours.set(x.doc_path, x);
const trajCount = new Map(), runCount = new Map(), sessCount = new Map();
const inc = (m, k) => { if (k !== null && k !== undefined) m.set(k, (m.get(k) || 0) + 1); };
for (const x of all) { inc(trajCount, x.trajectory_key); inc(runCount, x.run_key); }
for (const x of roots) inc(sessCount, x.session_id);
const anyKey = new Set([...trajCount.keys(), ...runCount.keys(), ...all.map((x) => x.session_id).filter(Boolean)]);
const kinds = { trajectory_key_eq_session_id: 0, trajectory_key_eq_trajectory_id: 0, trajectory_key_generated: 0, other: 0 };
const map = { roots: roots.length, our_rows: all.length, our_roots: ours.size, unmapped: 0, run_id_is_one_of_our_keys: 0,
  run_key_eq_session_id: 0, run_key_generated: 0, roots_sharing_session_id: 0, shared_session_ids: [...sessCount.values()].filter((n) => n > 1).length,
  roots_without_session_id: roots.filter((x) => !x.session_id).length, root_trajectory_key_not_unique: 0, kinds, examples: [] };
for (const x of roots) {
  const o = ours.get(x.doc);
  if (!o) { map.unmapped++; continue; }
  if (anyKey.has(x.run_id)) map.run_id_is_one_of_our_keys++;
  if (x.session_id && o.run_key === x.session_id) map.run_key_eq_session_id++;
  if (/^run:/.test(o.run_key)) map.run_key_generated++;
  if (x.session_id && sessCount.get(x.session_id) > 1) map.roots_sharing_session_id++;
  if (trajCount.get(o.trajectory_key) > 1) map.root_trajectory_key_not_unique++;
  if (/^traj:/.test(o.trajectory_key)) kinds.trajectory_key_generated++;
  // keys are "<producer id>@<document path>" (docs/atif.md "Stable keys")
  else if (x.trajectory_id && o.trajectory_key.startsWith(x.trajectory_id + "@")) kinds.trajectory_key_eq_trajectory_id++;
  else if (x.session_id && o.trajectory_key.startsWith(x.session_id + "@")) kinds.trajectory_key_eq_session_id++;
  else kinds.other++;
  if (map.examples.length < 3 && (/^traj:/.test(o.trajectory_key) || map.examples.length < 1))
    map.examples.push({ run_id: x.run_id, doc: x.doc, session_id: x.session_id, our_run_key: o.run_key, our_trajectory_key: o.trajectory_key });
}
const sample = runIds.map((rid) => {
  const x = byRun.get(rid);
  if (!x) throw new Error(`run_id ${rid} of the key list is not a root of ${args.corpus}/index.jsonl`);
  const o = ours.get(x.doc);
  if (!o) throw new Error(`document ${x.doc} (run_id ${rid}) has no root trajectory in ${args.root}`);
  return { run_id: rid, doc: x.doc, key: o.trajectory_key };
});
if (args.keys_out) { fs.mkdirSync(path.dirname(args.keys_out), { recursive: true }); fs.writeFileSync(args.keys_out, sample.map((s) => s.key).join("\n") + "\n"); }
log(`${roots.length} roots, ${map.unmapped} unmapped; root keys: ${JSON.stringify(kinds)}; run_id accepted as a key: ${map.run_id_is_one_of_our_keys}`);

// ------------------------------------------------------------------ timed cold gets (cold_get.py)
const getArgv = (key) => ["get", args.root, key, "--compact"];
const scratch = fs.mkdtempSync(path.join(require("os").tmpdir(), "vxbench-get-"));
fs.writeFileSync(path.join(scratch, "keys.txt"), sample.map((s) => s.key).join("\n") + "\n");
const loadStart = L.loadavg();
const t = sh("python3", [path.join(__dirname, "cold_get.py"), "--keys", path.join(scratch, "keys.txt"), "--out", path.join(scratch, "out"),
  "--keep", String(args.verify), "--", path.resolve(args.bin), ...getArgv("{}")]);
if (t.status !== 0) throw new Error(`cold_get.py failed (${t.status}): ${t.stderr}`);
const loadEnd = L.loadavg();
const T = JSON.parse(t.stdout.toString("utf8"));
const lat = T.ms, floor = T.floor_ms, rcs = {};
for (const rc of T.status) rcs[rc] = (rcs[rc] || 0) + 1;
const outBytes = T.out_bytes.reduce((a, b) => a + b, 0);
const failed = Object.entries(T.stderr).slice(0, 3).map(([i, e]) => ({ key: sample[i].key, doc: sample[i].doc, status: T.status[i], stderr: e }));
const verify = { checked: 0, equal: 0, mismatches: [] };
for (let i = 0; i < Math.min(args.verify, sample.length); i++) {
  const s = sample[i];
  verify.checked++;
  let ok = false, a = "", b = "";
  if (T.status[i] === 0) {
    const want = JSON.parse(fs.readFileSync(path.join(args.corpus, "docs", s.doc), "utf8"));
    try { a = JSON.stringify(C.canon(JSON.parse(fs.readFileSync(path.join(scratch, "out", `${i}.json`), "utf8")), false)); } catch (e) { a = `unparsable output: ${e.message}`; }
    b = JSON.stringify(C.canon(want, false));
    ok = a === b;
  } else a = `exit ${T.status[i]}: ${String(T.stderr[i]).slice(0, 300)}`;
  if (ok) verify.equal++;
  else if (verify.mismatches.length < 3) { let k = 0; while (k < a.length && a[k] === b[k]) k++; verify.mismatches.push({ run_id: s.run_id, key: s.key, doc: s.doc, at: k, got: a.slice(Math.max(0, k - 100), k + 100), want: b.slice(Math.max(0, k - 100), k + 100) }); }
}
fs.rmSync(scratch, { recursive: true, force: true });

// ------------------------------------------------------------------ warm in-process (bench-get)
function matches(file, s) {
  const want = JSON.stringify(C.canon(JSON.parse(fs.readFileSync(path.join(args.corpus, "docs", s.doc), "utf8")), false));
  let got; try { got = JSON.stringify(C.canon(JSON.parse(fs.readFileSync(file, "utf8")), false)); } catch (e) { got = `unreadable: ${e.message}`; }
  return got === want;
}
let warm = null;
if (args.kind === "vortex" && args.warm !== "no") {
  if (spawnSync(args.bin, ["bench-get", "--help"]).status !== 0) warm = { unsupported: "this binary has no bench-get" };
  else {
    const wdir = fs.mkdtempSync(path.join(require("os").tmpdir(), "vxbench-warm-"));
    const kf = path.join(wdir, "keys.txt");
    fs.writeFileSync(kf, [sample[0].key, ...sample.map((s) => s.key)].join("\n") + "\n");
    const l0 = L.loadavg();
    const r = sh(args.bin, ["bench-get", args.root, "--keys", kf, "--warmup", "1", "--out-dir", path.join(wdir, "out")]);
    if (r.status !== 0) warm = { error: `bench-get exit ${r.status}: ${String(r.stderr).slice(0, 1000)}` };
    else {
      warm = JSON.parse(r.stdout.toString("utf8"));
      warm.command = `${path.basename(args.bin)} bench-get ROOT --keys FILE --warmup 1 --out-dir DIR (FILE = keys[0], then the ${sample.length} keys)`;
      const v = { checked: 0, equal: 0, mismatches: [] };
      for (let i = 0; i < Math.min(args.verify, sample.length); i++) {
        v.checked++;
        if (matches(path.join(wdir, "out", `${i + 2}.json`), sample[i])) v.equal++; else if (v.mismatches.length < 3) v.mismatches.push({ key: sample[i].key, doc: sample[i].doc });
      }
      warm.verify = v; warm.loadavg_start = l0; warm.loadavg_end = L.loadavg();
      log(`warm bench-get p50 ${warm.total.p50_ms} ms p95 ${warm.total.p95_ms} ms (n=${warm.total.n}, open ${warm.open_ms} ms); round trip ${v.equal}/${v.checked}`);
    }
    fs.rmSync(wdir, { recursive: true, force: true });
  }
}

// read statistics of a few gets (vortex --stats: files, clusters, segments, bytes read), untimed
const stats = [];
if (args.kind === "vortex") {
  for (const s of sample.slice(0, args.stats)) {
    const r = sh(args.bin, [...getArgv(s.key), "--stats"]);
    const line = String(r.stderr).split("\n").find((l) => l.startsWith("stats:"));
    if (line) stats.push(Object.fromEntries([...line.matchAll(/(\w+)=(\d+)/g)].map((m) => [m[1], Number(m[2])])));
  }
}
const statsMean = stats.length ? Object.fromEntries(Object.keys(stats[0]).map((k) => [k, Math.round(stats.reduce((a, s) => a + s[k], 0) / stats.length)])) : null;

const res = {
  kind: `${args.kind}-point`, bin: path.resolve(args.bin), bin_sha256: L.sha256File(args.bin), root: path.resolve(args.root), corpus: path.resolve(args.corpus),
  command: `${path.basename(args.bin)} get ROOT KEY --compact`, keys_source: keysSource, n: sample.length,
  cold: { process_wall: C.summarize(lat), exit_status: rcs, out_bytes_mean: Math.round(outBytes / sample.length), failures: failed },
  spawn_floor: C.summarize(floor), help_floor: T.help_ms ? C.summarize(T.help_ms) : null,
  first_touch_us: T.first_touch_us ? T.first_touch_us.slice().sort((a, b) => a - b)[Math.floor(T.first_touch_us.length / 2)] : null, verify, warm, read_stats_mean: statsMean, read_stats_n: stats.length,
  key_map: map, loadavg_start: loadStart, loadavg_end: loadEnd,
};
log(`cold get p50 ${res.cold.process_wall.p50_ms} ms p95 ${res.cold.process_wall.p95_ms} ms (floor p50 ${res.spawn_floor.p50_ms} ms${res.help_floor ? `, --help ${res.help_floor.p50_ms} ms` : ""}${res.first_touch_us !== null ? `, first touch ${res.first_touch_us.toFixed(1)} us a page` : ""}); exit ${JSON.stringify(rcs)}; round trip ${verify.equal}/${verify.checked}`);
if (args.results) L.writeJson(args.results, res);
process.stdout.write(JSON.stringify(res, null, 2) + "\n");
if (verify.equal !== verify.checked || Object.keys(rcs).some((k) => k !== "0")) process.exitCode = 1;
if (warm && (warm.error || (warm.verify && warm.verify.equal !== warm.verify.checked))) process.exitCode = 1;
