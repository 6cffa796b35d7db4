#!/usr/bin/env node
// duckdb_query.mjs PARQUET "SQL" RUNS: time one query in DuckDB (npm @duckdb/node-api, the
// version ../shared/bench/cj pins) over a Parquet file exposed as the view `objects`; prints
// one JSON line {open_s, runs: [s...], rows} (open + view creation not included in runs).
import { createRequire } from "module";
const require = createRequire(import.meta.url);
const { DuckDBInstance } = require("@duckdb/node-api");
const [pq, sql, runsArg] = process.argv.slice(2);
if (!pq || !sql) { process.stderr.write("usage: duckdb_query.mjs PARQUET SQL [RUNS]\n"); process.exit(2); }
const runs = Number(runsArg || 3);
const t0 = performance.now();
const inst = await DuckDBInstance.create(":memory:", { threads: "2" });
const c = await inst.connect();
await c.run(`create view objects as select * from read_parquet('${pq.replace(/'/g, "''")}')`);
const open_s = (performance.now() - t0) / 1000;
const times = [];
let rows = 0;
for (let i = 0; i < runs; i++) {
  const t = performance.now();
  const r = await c.runAndReadAll(sql);
  rows = r.getRows().length;
  times.push((performance.now() - t) / 1000);
}
process.stdout.write(JSON.stringify({ open_s, runs: times, rows }) + "\n");
