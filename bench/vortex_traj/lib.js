"use strict";
// Helpers of bench/vortex_traj.sh: the shared trajectory-benchmark library (bench/traj/lib of
// the shared folder: PRNG, canonical JSON, percentiles), argument parsing, file sizes.
const fs = require("fs");
const path = require("path");
const os = require("os");
const crypto = require("crypto");

function trajLib(dir) {
  const d = dir || process.env.TRAJ_DIR;
  if (!d) throw new Error("TRAJ_DIR (bench/traj of the shared folder) is not set");
  return require(path.join(path.resolve(d), "lib", "common.js"));
}

// --name value / --flag (when the default is false); numbers when the default is a number
function parseArgs(argv, spec) {
  const out = { _: [] };
  Object.assign(out, spec);
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (!a.startsWith("--")) { out._.push(a); continue; }
    const k = a.slice(2).replace(/-/g, "_");
    if (!(k in spec)) throw new Error(`unknown option ${a}`);
    if (spec[k] === false) { out[k] = true; continue; }
    if (i + 1 >= argv.length) throw new Error(`${a} needs a value`);
    out[k] = typeof spec[k] === "number" ? Number(argv[++i]) : argv[++i];
  }
  return out;
}

// bytes of the regular files under p (what is on disk for the data, not directory blocks)
function fileBytes(p) {
  let n = 0;
  if (!fs.existsSync(p)) return 0;
  const st = fs.lstatSync(p);
  if (st.isFile()) return st.size;
  if (!st.isDirectory()) return 0;
  for (const e of fs.readdirSync(p, { withFileTypes: true })) {
    const q = path.join(p, e.name);
    if (e.isDirectory()) n += fileBytes(q);
    else if (e.isFile()) n += fs.statSync(q).size;
  }
  return n;
}
// bytes per top-level entry (data/, directories/, manifests/, runs.lance/, ...)
function bytesByTop(root) {
  const out = {};
  if (!fs.existsSync(root)) return out;
  for (const e of fs.readdirSync(root, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) out[e.name] = fileBytes(path.join(root, e.name));
  return out;
}
function sha256File(p) { return crypto.createHash("sha256").update(fs.readFileSync(p)).digest("hex"); }
function loadavg() { return os.loadavg().map((x) => +x.toFixed(2)); }
function readJson(p) { return fs.existsSync(p) ? JSON.parse(fs.readFileSync(p, "utf8")) : null; }
function writeJson(p, v) { fs.mkdirSync(path.dirname(p), { recursive: true }); fs.writeFileSync(p, JSON.stringify(v, null, 2) + "\n"); }
function indexRoots(corpusDir) {
  return fs.readFileSync(path.join(corpusDir, "index.jsonl"), "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l));
}

module.exports = { trajLib, parseArgs, fileBytes, bytesByTop, sha256File, loadavg, readJson, writeJson, indexRoots };
