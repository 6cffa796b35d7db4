#!/usr/bin/env node
// Append rows to an EXISTING Lance dataset with the official implementation
// (@lancedb/lancedb 0.31.0 = Lance 8.0.0), for tests/compat/lance_compat.sh (d):
//
//   PCH_ORACLE_DIR=<oracle install dir> node lance_append.js DATASET_DIR SPEC.json
//
// SPEC.json is the oracle's write-spec format (fields + rows; int64/uint64 as strings,
// binary as {"base64":...}, JSON columns as JSON text with json_as_text). The dataset is
// reached through a symlink in a scratch root, as oracle.js does, so its parent directory
// is left untouched. CommonJS on purpose (see oracle.js).
"use strict";
const fs = require("fs");
const os = require("os");
const path = require("path");
const dir = process.env.PCH_ORACLE_DIR;
if (!dir) { process.stderr.write("lance_append: PCH_ORACLE_DIR is not set\n"); process.exit(2); }
const lancedb = require(path.join(dir, "node_modules", "@lancedb", "lancedb"));
const arrow = require(path.join(dir, "node_modules", "apache-arrow"));

const TYPES = {
  bool: () => new arrow.Bool(), int8: () => new arrow.Int8(), int16: () => new arrow.Int16(),
  int32: () => new arrow.Int32(), int64: () => new arrow.Int64(), uint8: () => new arrow.Uint8(),
  uint16: () => new arrow.Uint16(), uint32: () => new arrow.Uint32(), uint64: () => new arrow.Uint64(),
  float32: () => new arrow.Float32(), float64: () => new arrow.Float64(), utf8: () => new arrow.Utf8(),
  large_utf8: () => new arrow.LargeUtf8(), binary: () => new arrow.Binary(),
  large_binary: () => new arrow.LargeBinary(), json: () => new arrow.Utf8(),
};

function convert(f, v) {
  if (v === null || v === undefined) return null;
  if (f.type === "int64" || f.type === "uint64") return BigInt(v);
  if (f.type === "binary" || f.type === "large_binary") return new Uint8Array(Buffer.from(v.base64, "base64"));
  if (f.type === "json") return typeof v === "string" && f.json_as_text ? v : JSON.stringify(v);
  return v;
}

async function main() {
  const [dsDir, specPath] = process.argv.slice(2);
  if (!dsDir || !specPath) throw new Error("usage: lance_append.js DATASET_DIR SPEC.json");
  const spec = JSON.parse(fs.readFileSync(specPath, "utf8"));
  const fields = spec.fields.map((f) => {
    const md = new Map(Object.entries(f.metadata || {}));
    if (f.type === "json") md.set("ARROW:extension:name", "arrow.json");
    return new arrow.Field(f.name, TYPES[f.type](), f.nullable !== false, md);
  });
  const schema = new arrow.Schema(fields);
  const rows = spec.rows;
  const children = spec.fields.map((f, i) => {
    const vec = arrow.vectorFromArray(rows.map((r) => convert(f, r[f.name])), fields[i].type);
    return vec.data.length === 1 ? vec.data[0] : arrow.makeVector(vec.data).data[0];
  });
  const struct = arrow.makeData({ type: new arrow.Struct(fields), length: rows.length, nullCount: 0, children });
  const table = new arrow.Table([new arrow.RecordBatch(schema, struct)]);
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "lance-append-"));
  try {
    fs.symlinkSync(path.resolve(dsDir), path.join(root, "ds.lance"));
    const db = await lancedb.connect(root);
    const t = await db.openTable("ds");
    await t.add(table);
    process.stderr.write(`appended ${rows.length} rows, version ${await t.version()}\n`);
    t.close();
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
}

main().catch((e) => { process.stderr.write(`lance_append: ${e && e.stack ? e.stack : e}\n`); process.exit(1); });
