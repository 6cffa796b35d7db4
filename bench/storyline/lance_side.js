// Official-Lance side of bench/storyline.sh: read our four Storyline tables with the
// official reader (npm @lancedb/lancedb, the pinned oracle), write the same rows as new
// datasets with the official writer, then report their bytes and the latency of a point
// read of one trajectory (runs + steps + tool_calls filtered on trajectory_key; median of
// RUNS in-process queries after one warm-up). Output: one JSON line.
//   node lance_side.js NODE_MODULES OUR_ROOT SCRATCH KEY RUNS
const path = require("path");
const fs = require("fs");
const [nm, ourRoot, scratch, key, runsArg] = process.argv.slice(2);
const lancedb = require(path.join(nm, "@lancedb/lancedb"));
const arrow = require(path.join(nm, "apache-arrow"));

// Rebuild every column from its values (the reader hands back all-null Bool columns with an
// empty values buffer, which the writer then rejects); schema and field metadata are kept.
function rebuild(data) {
  const fields = data.schema.fields;
  const children = fields.map((f, i) => {
    const col = data.getChildAt(i);
    const vals = [];
    for (let r = 0; r < data.numRows; r++) vals.push(col.get(r));
    const v = arrow.vectorFromArray(vals, f.type);
    return v.data.length === 1 ? v.data[0] : arrow.makeVector(v.data).data[0];
  });
  const struct = arrow.makeData({ type: new arrow.Struct(fields), length: data.numRows, nullCount: 0, children });
  return new arrow.Table([new arrow.RecordBatch(new arrow.Schema(fields, data.schema.metadata), struct)]);
}
const tables = ["runs", "steps", "tool_calls", "objects"];

function duBytes(p) {
  let n = 0;
  for (const e of fs.readdirSync(p, { withFileTypes: true })) {
    const q = path.join(p, e.name);
    if (e.isDirectory()) n += duBytes(q); else if (e.isFile()) n += fs.statSync(q).size;
  }
  return n;
}

async function main() {
  const runs = Number(runsArg || 5);
  const src = path.join(scratch, "src");
  fs.mkdirSync(src, { recursive: true });
  for (const t of tables) fs.symlinkSync(path.resolve(ourRoot, t + ".lance"), path.join(src, t + ".lance"));
  const dbIn = await lancedb.connect(src);
  const dbOut = await lancedb.connect(path.join(scratch, "official"));
  const out = { bytes: {}, rows: {} };
  let t0 = process.hrtime.bigint();
  for (const t of tables) {
    const data = rebuild(await (await dbIn.openTable(t)).query().toArrow());
    out.rows[t] = data.numRows;
    const w0 = process.hrtime.bigint();
    const tbl = await dbOut.createTable(t, data, { mode: "create" });
    tbl.close();
    out.write_ms = (out.write_ms || 0) + Number(process.hrtime.bigint() - w0) / 1e6;
    out.bytes[t] = duBytes(path.join(scratch, "official", t + ".lance"));
  }
  out.read_and_write_ms = Number(process.hrtime.bigint() - t0) / 1e6;
  const q = async () => {
    const s = process.hrtime.bigint();
    let n = 0;
    for (const t of ["runs", "steps", "tool_calls"]) {
      const tbl = await dbOut.openTable(t);
      n += (await tbl.query().where(`trajectory_key = '${key.replace(/'/g, "''")}'`).toArrow()).numRows;
    }
    return [Number(process.hrtime.bigint() - s) / 1e6, n];
  };
  await q();
  const lat = [];
  let rows = 0;
  for (let i = 0; i < runs; i++) { const [ms, n] = await q(); lat.push(ms); rows = n; }
  lat.sort((a, b) => a - b);
  out.point_read_ms = lat[Math.floor(lat.length / 2)];
  out.point_read_rows = rows;
  process.stdout.write(JSON.stringify(out) + "\n");
}
main().catch((e) => { console.error(e); process.exit(1); });
