#!/usr/bin/env node
// Benchmark peer (bench/compact_jsonl.sh): DuckDB read_ndjson over the same .jsonl tree ->
// one Parquet file with zstd (npm @duckdb/node-api@1.5.6-r.1 from the bench cache).
//   node duckdb_parquet.js ROOT OUT.parquet
"use strict";
const { DuckDBInstance } = require("@duckdb/node-api");
const [root, out] = process.argv.slice(2);
async function main() {
  const db = await DuckDBInstance.create(":memory:", { threads: "1" });
  const c = await db.connect();
  const glob = root.replace(/'/g, "''") + "/**/*.jsonl";
  const q = (src) => `COPY (SELECT * FROM ${src}) TO '${out.replace(/'/g, "''")}' (FORMAT parquet, COMPRESSION zstd)`;
  try {
    await c.run(q(`read_ndjson('${glob}', union_by_name = true, maximum_object_size = 1073741824, sample_size = -1)`));
    process.stdout.write("typed\n");
  } catch (e) {   // schemas too heterogeneous for one table: keep each record as a JSON value
    await c.run(q(`read_ndjson_objects('${glob}', maximum_object_size = 1073741824)`));
    process.stdout.write("json-objects\n");
  }
}
main().catch((e) => { process.stderr.write(String(e && e.stack || e) + "\n"); process.exit(1); });
