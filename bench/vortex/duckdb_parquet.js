#!/usr/bin/env node
// Benchmark peer (bench/vortex.sh): DuckDB reads steps.jsonl with the explicit column types and
// writes one Parquet file with zstd; "read" mode times reading all columns / one column back
// RUNS times inside the process (node start-up excluded) and prints "<sec/scan> <rows>".
//   node duckdb_parquet.js write STEPS.jsonl OUT.parquet
//   node duckdb_parquet.js read OUT.parquet RUNS [COLUMN]
"use strict";
const { DuckDBInstance } = require("@duckdb/node-api");
const [mode, a, b, c2] = process.argv.slice(2);
const cols = "{trajectory_id:'VARCHAR',step_index:'BIGINT',step_id:'BIGINT',source:'VARCHAR',timestamp:'VARCHAR'," +
  "model:'VARCHAR',message:'VARCHAR',reasoning:'VARCHAR',tool_calls:'VARCHAR',observation:'VARCHAR'," +
  "prompt_tokens:'BIGINT',completion_tokens:'BIGINT',cost_usd:'DOUBLE'}";
const q = (s) => s.replace(/'/g, "''");
async function main() {
  const db = await DuckDBInstance.create(":memory:", { threads: "1" });
  const c = await db.connect();
  if (mode === "write") {
    await c.run(`COPY (SELECT * FROM read_json('${q(a)}', format='newline_delimited', columns=${cols}, maximum_object_size=1073741824)) TO '${q(b)}' (FORMAT parquet, COMPRESSION zstd)`);
  } else {
    const runs = Math.max(1, parseInt(b || "3", 10));
    // every value is touched (length of its text) so the scan cannot be skipped
    const sel = c2 ? `count(*), sum(length(CAST("${c2}" AS VARCHAR)))` : "count(*), sum(length(CAST(COLUMNS(*) AS VARCHAR)))";
    let rows = 0;
    await c.run(`SELECT ${sel} FROM read_parquet('${q(a)}')`);   // warm-up
    const t0 = process.hrtime.bigint();
    for (let r = 0; r < runs; r++) {
      const res = await c.runAndReadAll(`SELECT ${sel} FROM read_parquet('${q(a)}')`);
      rows = Number(res.getRows()[0][0]);
    }
    console.log(`${(Number(process.hrtime.bigint() - t0) / 1e9 / runs).toFixed(6)}\t${rows}`);
  }
}
main().catch((e) => { process.stderr.write(String(e && e.stack || e) + "\n"); process.exit(1); });
