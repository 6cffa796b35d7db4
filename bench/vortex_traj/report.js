#!/usr/bin/env node
"use strict";
// Markdown tables of bench/vortex_traj.sh: per corpus, our two projections next to official
// Lance and Parquet+DuckDB, with the Vortex goals (RFC-0006 §22.4 as set for this project):
//   bytes <= 0.8 x DuckDB/Parquet; cold get p50 <= 10 ms on scaled; build >= 5 x official Lance
//   (ATIF MiB/s) and >= 190 MiB/s; warm in-process point read p95 <= 0.5 x official Lance warm p95
//   (pchronicle-vortex bench-get, when the binary has it).
//   node report.js VX_RESULTS_DIR PEER_RESULTS_DIR corpus...
const path = require("path");
const L = require("./lib");

const [vxDir, peerDir, ...corpora] = process.argv.slice(2);
const vx = (f) => L.readJson(path.join(vxDir, f));
const peer = (f) => L.readJson(path.join(peerDir, f));
const mib = (b) => (b === null || b === undefined ? "-" : (b / 1048576).toFixed(b < 10 * 1048576 ? 2 : 1));
const ms = (x) => (x === undefined || x === null ? "-" : x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toFixed(2));
const f = (x, d = 1) => (x === undefined || x === null || Number.isNaN(x) ? "-" : Number(x).toFixed(d));
const verdict = (ok) => (ok === null ? "n/a" : ok ? "**PASS**" : "**FAIL**");
const out = [];
const row = (cells) => out.push(`| ${cells.join(" | ")} |`);

for (const c of corpora) {
  const vb = vx(`vortex-build-${c}.json`), vp = vx(`vortex-point-${c}.json`);
  const sb = vx(`storyline-build-${c}.json`), sp = vx(`storyline-point-${c}.json`);
  const lb = peer(`build-${c}.json`), li = peer(`index-${c}.json`), lq = peer(`q-${c}-btree.json`), ln = peer(`q-${c}-noindex.json`);
  const db = peer(`duckdb-build-${c}.json`), dq = peer(`duckdb-q-${c}.json`);
  const any = vb || sb || lb || db;
  if (!any) { out.push(`### ${c}: no results`, ""); continue; }
  const jsonBytes = (vb || sb || lb || db).json_bytes;
  const head = vb || sb;
  out.push(`### ${c}: ${head ? `${head.docs} documents, ${head.trajectories} trajectories, ` : ""}${mib(jsonBytes)} MiB ATIF JSON${head ? ` (fingerprint ${head.fingerprint.slice(0, 16)})` : ""}`, "");
  row(["metric", "Vortex (`pchronicle-vortex build/get`)", "Storyline on our Lance (`pchronicle import/get`)", "official Lance 2.1 (lancedb 0.31.0, BTree)", "DuckDB 1.5.6 / Parquet zstd", "goal (Vortex)", "Vortex vs goal"]);
  row(Array(7).fill("---"));

  // build
  const bcell = (b, extra = "") => (b ? `${f(b.build_s, 2)} s (${f(b.build_mib_s)} MiB/s)${extra}` : "-");
  const vMiBs = vb ? vb.build_mib_s : null, lMiBs = lb ? lb.build_mib_s : null;
  row(["build: wall s (ATIF JSON MiB/s)",
    bcell(vb, vb && vb.status ? ` exit ${vb.status}` : ""), bcell(sb, sb && sb.status ? ` exit ${sb.status}` : ""),
    lb ? `${f(lb.build_s, 2)} s (${f(lb.build_mib_s)} MiB/s) = ingest ${f(lb.ingest_s, 1)} + optimize ${f(lb.optimize_s, 1)}${li ? `; +index ${f(li.index_build_s, 1)} s` : ""}` : "-",
    db ? `${f(db.build_s, 2)} s (${f(db.build_mib_s)} MiB/s) = stage ${f(db.stage_s, 1)} + COPY ${f(db.copy_s, 1)}` : "-",
    "≥ 190 MiB/s", vMiBs === null ? "-" : `${f(vMiBs)} MiB/s = ${f(vMiBs / 190, 2)}× goal ${verdict(vMiBs >= 190)}`]);
  row(["build speed vs official Lance", vMiBs && lMiBs ? `${f(vMiBs / lMiBs, 2)}×` : "-", sb && lMiBs ? `${f(sb.build_mib_s / lMiBs, 2)}×` : "-", "1×",
    db && lMiBs ? `${f(db.build_mib_s / lMiBs, 2)}×` : "-", "≥ 5× official Lance", vMiBs && lMiBs ? `${f(vMiBs / lMiBs, 2)}× ${verdict(vMiBs / lMiBs >= 5)}` : "-"]);
  row(["build: peak RSS MiB (CPU user+sys s)", vb ? `${vb.peak_rss_mib} (${f(vb.user_s + vb.sys_s, 1)})` : "-", sb ? `${sb.peak_rss_mib} (${f(sb.user_s + sb.sys_s, 1)})` : "-",
    lb ? `${lb.peak_rss_mib} (${f(lb.cpu_s, 1)})` : "-", db ? `${db.peak_rss_mib} (${f(db.cpu_s, 1)})` : "-", "reported", "-"]);

  // bytes
  const dBytes = db ? db.bytes.total : null, vBytes = vb ? vb.bytes.total : null;
  const bytesCell = (b, tot, extra = "") => (b ? `${mib(tot)} (${f(tot / jsonBytes, 3)}× JSON)${extra}` : "-");
  row(["bytes on disk MiB (× JSON)", bytesCell(vb, vBytes, vb ? `; data ${mib(vb.bytes.data)}, directories ${mib(vb.bytes.directories)}` : ""),
    bytesCell(sb, sb && sb.bytes.total), bytesCell(lb, lb && lb.bytes.total, li ? `; +indexes ${mib(li.bytes.indices)}` : ""), bytesCell(db, dBytes),
    dBytes ? `≤ 0.8× DuckDB = ${mib(0.8 * dBytes)} MiB` : "≤ 0.8× DuckDB",
    vBytes && dBytes ? `${f(vBytes / dBytes, 3)}× DuckDB ${verdict(vBytes <= 0.8 * dBytes)}` : "-"]);

  // cold point read
  const cp = (p) => (p ? `${ms(p.cold.process_wall.p50_ms)} / ${ms(p.cold.process_wall.p95_ms)} (process wall, n=${p.n}; spawn floor ${ms(p.spawn_floor.p50_ms)}${p.help_floor ? `, \`--help\` ${ms(p.help_floor.p50_ms)}` : ""}${p.first_touch_us != null ? `, first touch of a page ${p.first_touch_us.toFixed(1)} µs` : ""})` : "-");
  const pc = (q) => { const e = q && q.queries.point; return e && e.cold ? `${ms(e.cold.in_process.p50_ms)} / ${ms(e.cold.in_process.p95_ms)} (in-process open+query, n=${e.cold.in_process.n}; process wall p50 ${ms(e.cold.process_wall.p50_ms)})` : "-"; };
  const vCold = vp ? vp.cold.process_wall.p50_ms : null;
  row(["point read, cold: p50 / p95 ms", cp(vp), cp(sp), pc(lq), pc(dq), c === "scaled" ? "p50 ≤ 10 ms" : "p50 ≤ 10 ms (gated on scaled)",
    vCold === null ? "-" : `${f(vCold / 10, 2)}× goal ${c === "scaled" ? verdict(vCold <= 10) : "(n/a here)"}`]);
  // warm point read
  const pw = (q, noidx) => { const e = q && q.queries.point; if (!e) return "-"; const n = noidx && noidx.queries.point; return `${ms(e.warm.p50_ms)} / ${ms(e.warm.p95_ms)} (engine p50 ${ms(e.engine && e.engine.p50_ms)})${n ? `; no index ${ms(n.warm.p50_ms)} / ${ms(n.warm.p95_ms)}` : ""}`; };
  const lWarm95 = lq && lq.queries.point ? lq.queries.point.warm.p95_ms : null;
  const vw = vp && vp.warm && vp.warm.total ? vp.warm : null;
  const vwCell = vw ? `${ms(vw.total.p50_ms)} / ${ms(vw.total.p95_ms)} (\`bench-get\`, n=${vw.total.n}; lookup p50 ${ms(vw.lookup.p50_ms)}; open ${ms(vw.open_ms)})`
    : vp && vp.warm ? `**not measured**: ${vp.warm.unsupported || vp.warm.error}` : "**pending**: needs `pchronicle-vortex bench-get` (not measured)";
  const vwGoal = vw && lWarm95 ? `${f(vw.total.p95_ms / lWarm95, 2)}× Lance warm p95 ${verdict(vw.total.p95_ms <= 0.5 * lWarm95)}` : "pending";
  row(["point read, warm in-process: p50 / p95 ms", vwCell, "-", pw(lq, ln), pw(dq), lWarm95 ? `p95 ≤ 0.5× Lance warm p95 = ${ms(0.5 * lWarm95)} ms` : "p95 ≤ 0.5× Lance warm p95", vwGoal]);
  // round trip
  const rt = (v) => (v ? `${v.equal}/${v.checked}` : "-");
  const vOk = vp ? vp.verify.equal === vp.verify.checked && vp.verify.checked > 0 && (!vw || vw.verify.equal === vw.verify.checked) : null;
  row(["round trip (JSON-equal to the corpus doc)", `${rt(vp && vp.verify)}${vw && vw.verify ? ` cold, ${rt(vw.verify)} warm` : ""}`, rt(sp && sp.verify), rt(lq && lq.verify), rt(dq && dq.verify), "all equal", vp ? verdict(vOk) : "-"]);
  row(["key used", vp ? "root trajectory_key (mapped from run_id by doc path)" : "-", sp ? "root trajectory_key (mapped from run_id by doc path)" : "-", "run_id", "run_id", "", ""]);
  out.push("");
  const loads = [["vortex build", vb], ["vortex get", vp], ["vortex bench-get", vw], ["storyline build", sb], ["storyline get", sp], ["Lance build", lb], ["Lance queries", lq], ["DuckDB build", db], ["DuckDB queries", dq]]
    .filter(([, r]) => r).map(([n, r]) => `${n} ${r.loadavg_start ? (r.loadavg_start[0] ?? "-") : "-"}→${r.loadavg_end ? r.loadavg_end[0] : "-"}`);
  out.push(`1-min load average at start→end of each measurement: ${loads.join("; ")}.`);
  if (vp && vp.read_stats_mean) { const s = vp.read_stats_mean; out.push(`Vortex get --stats (mean of ${vp.read_stats_n}): files ${s.files_opened}, clusters ${s.clusters_read}, segments ${s.segments_read}, read requests ${s.read_requests}, bytes read ${s.bytes_read}, bytes decoded ${s.bytes_decoded}, blobs ${s.blobs_hydrated}; output ${vp.cold.out_bytes_mean} B/doc.`); }
  for (const [n, p] of [["Vortex", vp], ["Storyline", sp]]) {
    if (!p) continue;
    const k = p.key_map;
    out.push(`${n} keys: ${k.roots} index.jsonl roots, ${k.unmapped} without a root of ours; run_id accepted by get: ${k.run_id_is_one_of_our_keys}; our run key = session_id for ${k.run_key_eq_session_id}; root trajectory_key = session_id@path ${k.kinds.trajectory_key_eq_session_id}, = trajectory_id@path ${k.kinds.trajectory_key_eq_trajectory_id}, generated ${k.kinds.trajectory_key_generated}; ${k.roots_sharing_session_id} roots share ${k.shared_session_ids} session id(s).`);
    if (p.verify.mismatches.length) out.push(`${n} round-trip mismatch (first): ${JSON.stringify(p.verify.mismatches[0]).slice(0, 600)}`);
    if (p.cold.failures.length) out.push(`${n} get failures (first): ${JSON.stringify(p.cold.failures[0]).slice(0, 600)}`);
  }
  out.push("");
}
process.stdout.write(out.join("\n") + "\n");
