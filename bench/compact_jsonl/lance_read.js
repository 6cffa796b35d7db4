#!/usr/bin/env node
// Benchmark peer (bench/compact_jsonl.sh): the official Lance reader (npm @lancedb/lancedb
// 0.31.0, from the oracle's node_modules) reads every row and column of a dataset, batch by
// batch, and touches each batch's `_raw_` bytes (the part an export writes out). Prints
// "ROWS RAW_BYTES". The dataset is reached through a symlink in a scratch root so that
// lancedb's connection directory stays outside it.
//   node lance_read.js DATASET_DIR
"use strict";
const fs = require("fs");
const os = require("os");
const path = require("path");
const lancedb = require("@lancedb/lancedb");

async function main() {
  const abs = path.resolve(process.argv[2]);
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "pch-bench-lance-r-"));
  try {
    fs.symlinkSync(abs, path.join(root, "ds.lance"));
    const db = await lancedb.connect(root);
    const tbl = await db.openTable("ds");
    let rows = 0, raw = 0;
    for await (const batch of await tbl.query().execute()) {
      rows += batch.numRows;
      const col = batch.getChild("_raw_");
      if (col) for (const d of col.data) raw += d.values ? d.values.length : 0;
    }
    tbl.close();
    process.stdout.write(`${rows} ${raw}\n`);
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
}
main().catch((e) => { process.stderr.write(String(e && e.stack || e) + "\n"); process.exit(1); });
