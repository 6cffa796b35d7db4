#!/usr/bin/env node
"use strict";
// Result JSON of one timed build (bench/vortex_traj.sh runs the build under /usr/bin/time -v).
//   node record.js --kind vortex|storyline --corpus DIR --root ROOT --time-file F --wall-s S
//        --log STDERR_FILE --command "..." --status RC [--loadavg-start "a b c"] --results FILE
// Build time = wall clock of the build process; MiB/s = ATIF JSON bytes (MANIFEST.json
// stats.json_bytes) / build time; bytes = sum of the regular files under ROOT (no directory
// blocks, like the shared harness's per-file sums); peak RSS = "Maximum resident set size".
const fs = require("fs");
const path = require("path");
const L = require("./lib");

const a = L.parseArgs(process.argv.slice(2), { kind: "", corpus: "", root: "", time_file: "", wall_s: 0, log: "", command: "", status: 0, loadavg_start: "", results: "", bin: "" });
const man = L.readJson(path.join(a.corpus, "MANIFEST.json"));
const tv = fs.existsSync(a.time_file) ? fs.readFileSync(a.time_file, "utf8") : "";
const field = (re) => { const m = re.exec(tv); return m ? Number(m[1]) : null; };
const rssKiB = field(/Maximum resident set size \(kbytes\): (\d+)/);
const logText = fs.existsSync(a.log) ? fs.readFileSync(a.log, "utf8") : "";
const lines = logText.split("\n").filter((l) => l.trim() && !/^\s*(Command being timed|User time|System time|Percent of CPU|Elapsed|Average|Maximum|Major|Minor|Voluntary|Involuntary|Swaps|File system|Socket|Signals|Page size|Exit status)/.test(l));
const jsonBytes = man.stats.json_bytes;
function buildStats(f) {
  if (!fs.existsSync(f)) return null;
  const l = fs.readFileSync(f, "utf8").split("\n").find((x) => x.startsWith("{"));
  try { return l ? JSON.parse(l) : null; } catch (e) { return null; }
}
const bytes = L.fileBytes(a.root);
const res = {
  kind: `${a.kind}-build`, corpus: man.corpus, corpus_dir: path.resolve(a.corpus), fingerprint: man.fingerprint_sha256,
  docs: man.stats.docs, trajectories: man.stats.trajectories, json_bytes: jsonBytes,
  root: path.resolve(a.root), command: a.command, status: a.status,
  bin: a.bin ? path.resolve(a.bin) : null, bin_sha256: a.bin && fs.existsSync(a.bin) ? L.sha256File(a.bin) : null,
  build_s: +a.wall_s.toFixed(3), build_mib_s: +((jsonBytes / 1048576) / a.wall_s).toFixed(1),
  user_s: field(/User time \(seconds\): ([\d.]+)/), sys_s: field(/System time \(seconds\): ([\d.]+)/),
  cpu_percent: field(/Percent of CPU this job got: (\d+)%/), peak_rss_mib: rssKiB === null ? null : Math.round(rssKiB / 1024),
  bytes: { total: bytes, ...L.bytesByTop(a.root) }, bytes_ratio_vs_json: +(bytes / jsonBytes).toFixed(4),
  summary: lines.slice(-3).join("\n"),
  // the build's own figures when it printed them (`pchronicle-vortex build --json` on stdout):
  // bytes written, write amplification, encode seconds (RFC-0006 §22.2)
  stats: buildStats(`${a.log}.out`),
  loadavg_start: a.loadavg_start ? a.loadavg_start.split(/\s+/).map(Number) : null, loadavg_end: L.loadavg(),
};
L.writeJson(a.results, res);
process.stderr.write(`[record ${a.kind}] ${man.corpus}: ${res.build_s} s (${res.build_mib_s} MiB/s), ${(bytes / 1048576).toFixed(2)} MiB (${res.bytes_ratio_vs_json}x JSON), peak RSS ${res.peak_rss_mib} MiB, exit ${a.status}\n`);
