#!/usr/bin/env node
// Benchmark peer (bench/vortex.sh): the official Lance writer (npm @lancedb/lancedb from the
// oracle's node_modules) writes the steps table from steps.jsonl (utf8/int64/float64 columns).
//   node lance_write.js STEPS.jsonl OUT_DIR
"use strict";
const fs = require("fs");
const lancedb = require("@lancedb/lancedb");
const arrow = require("apache-arrow");
const [inp, out] = process.argv.slice(2);
const cols = [["trajectory_id", "utf8", false], ["step_index", "int64", false], ["step_id", "int64", true],
  ["source", "utf8", true], ["timestamp", "utf8", true], ["model", "utf8", true], ["message", "utf8", true],
  ["reasoning", "utf8", true], ["tool_calls", "utf8", true], ["observation", "utf8", true],
  ["prompt_tokens", "int64", true], ["completion_tokens", "int64", true], ["cost_usd", "float64", true]];
const typ = { utf8: () => new arrow.Utf8(), int64: () => new arrow.Int64(), float64: () => new arrow.Float64() };
async function main() {
  const rows = fs.readFileSync(inp, "utf8").split("\n").filter((l) => l).map((l) => JSON.parse(l));
  const db = await lancedb.connect(require("path").dirname(out));
  const batches = [];
  for (let i = 0; i < rows.length; i += 8192) {
    const part = rows.slice(i, i + 8192);
    const data = {};
    for (const [n, t] of cols) data[n] = part.map((r) => (r[n] === null || r[n] === undefined ? null : t === "int64" ? BigInt(r[n]) : r[n]));
    const vecs = {};
    for (const [n, t] of cols) vecs[n] = arrow.vectorFromArray(data[n], typ[t]());
    batches.push(new arrow.Table(vecs));
  }
  const tables = batches;
  const tbl = await db.createTable(require("path").basename(out).replace(/\.lance$/, ""), tables[0], { mode: "overwrite", storageOptions: {}, dataStorageVersion: "2.1" });
  for (const t of tables.slice(1)) await tbl.add(t);
}
main().catch((e) => { process.stderr.write(String(e && e.stack || e) + "\n"); process.exit(1); });
