#!/usr/bin/env node
// Benchmark peer (bench/compact_jsonl.sh): the official Lance writer (npm @lancedb/lancedb
// 0.31.0, from the oracle's node_modules) writes the compact-jsonl base schema from the
// same .jsonl tree: id/timestamp/filename utf8, data JSON (arrow.json -> Lance JSONB),
// _raw_ large_binary, _offload_ JSON (all null). Rows go in batches of ~BATCH_ROWS.
//   node lance_write.js ROOT OUT_DIR
"use strict";
const fs = require("fs");
const os = require("os");
const path = require("path");
const lancedb = require("@lancedb/lancedb");
const arrow = require("apache-arrow");

const [root, out] = process.argv.slice(2);
const BATCH_ROWS = Number(process.env.BATCH_ROWS || 8192);
function walk(dir, rel, acc) {
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const r = rel ? rel + "/" + e.name : e.name;
    if (e.isDirectory()) walk(path.join(dir, e.name), r, acc);
    else if (e.isFile() && /\.(jsonl|ndjson|json)$/i.test(e.name)) acc.push(r);
  }
  return acc;
}
const files = walk(root, "", []).sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
const json = () => new Map([["ARROW:extension:name", "arrow.json"]]);
const fields = [
  new arrow.Field("id", new arrow.Utf8(), false), new arrow.Field("timestamp", new arrow.Utf8(), false),
  new arrow.Field("filename", new arrow.Utf8(), false, new Map([["role", "source-file"]])),
  new arrow.Field("data", new arrow.Utf8(), false, json()),
  new arrow.Field("_raw_", new arrow.LargeBinary(), true), new arrow.Field("_offload_", new arrow.Utf8(), true, json()),
];
const schema = new arrow.Schema(fields, new Map([["pchronicle.format", "compact-jsonl/v1"]]));
function table(rows) {
  const cols = [rows.map((r) => r[0]), rows.map((r) => r[1]), rows.map((r) => r[2]), rows.map((r) => r[3]),
                rows.map((r) => r[4]), rows.map(() => null)];
  const children = cols.map((c, i) => {
    const v = arrow.vectorFromArray(c, fields[i].type);
    return v.data.length === 1 ? v.data[0] : arrow.makeVector(v.data).data[0];
  });
  const data = arrow.makeData({ type: new arrow.Struct(fields), length: rows.length, nullCount: 0, children });
  return new arrow.Table([new arrow.RecordBatch(schema, data)]);
}
async function main() {
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "pch-bench-lance-"));
  const db = await lancedb.connect(scratch);
  let tbl = null, rows = [];
  const flush = async () => {
    if (!rows.length) return;
    if (!tbl) tbl = await db.createTable("ds", table(rows), { mode: "create" });
    else await tbl.add(table(rows));
    rows = [];
  };
  for (const rel of files) {
    const buf = fs.readFileSync(path.join(root, rel));
    let start = 0, line = 0;
    while (start < buf.length) {
      let nl = buf.indexOf(10, start);
      const end = nl < 0 ? buf.length : nl + 1;
      const raw = buf.subarray(start, end);
      line++;
      const text = raw.toString("utf8");
      const obj = JSON.parse(text);
      const gen = rel + "#" + line;
      const ts = typeof obj.timestamp === "string" && obj.timestamp ? obj.timestamp : gen;
      rows.push([gen, ts, rel, text.trim(), new Uint8Array(raw)]);
      if (rows.length >= BATCH_ROWS) await flush();
      start = end;
    }
  }
  await flush();
  tbl.close();
  fs.cpSync(path.join(scratch, "ds.lance"), out, { recursive: true });
  fs.rmSync(scratch, { recursive: true, force: true });
}
main().catch((e) => { process.stderr.write(String(e && e.stack || e) + "\n"); process.exit(1); });
