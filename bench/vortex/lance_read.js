#!/usr/bin/env node
// Benchmark peer (bench/vortex.sh): the official Lance reader (npm @lancedb/lancedb from the
// oracle's node_modules) scans a dataset RUNS times — all columns, then one narrow column —
// into Arrow tables in memory, timed inside the process (node start-up excluded; opening the
// table is included in each scan, as in bench/vortex_bench.c). Prints one line per mode:
//   <label> <sec/scan> <rows>
//   node lance_read.js DATASET_DIR NARROW_COLUMN RUNS LABEL
"use strict";
const path = require("path");
const lancedb = require("@lancedb/lancedb");
const [ds, col, runsArg, label] = process.argv.slice(2);
const runs = Math.max(1, parseInt(runsArg || "3", 10));
async function scan(cols) {
  const db = await lancedb.connect(path.dirname(ds));
  const tbl = await db.openTable(path.basename(ds).replace(/\.lance$/, ""));
  let q = tbl.query();
  if (cols) q = q.select(cols);
  const t = await q.toArrow();
  const n = t.numRows;
  tbl.close();
  return n;
}
async function main() {
  for (const cols of [null, [col]]) {
    await scan(cols);                         // warm-up (library load, page cache)
    const t0 = process.hrtime.bigint();
    let rows = 0;
    for (let r = 0; r < runs; r++) rows = await scan(cols);
    const sec = Number(process.hrtime.bigint() - t0) / 1e9 / runs;
    console.log(`${label}${cols ? ", one column" : ", all columns"}\t${sec.toFixed(6)}\t${rows}`);
  }
}
main().catch((e) => { process.stderr.write(String(e && e.stack || e) + "\n"); process.exit(1); });
