// Reading 100,000 results from NDJSON to decisions, against JSON.parse alone on the same lines,
// side by side in one run (rounds interleaved): prints each one's best time and the ratio (the
// goal: within 2x). The lines are the repository's result documents and tools/call results
// (valid and broken), each also carried in a tools/call result, repeated to 100,000.
//
//     npm run build && node bench/ndjson.mjs
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

import { read } from "../dist/index.js";

const LINES = 100_000;
const ROUNDS = 7;
const root = fileURLToPath(new URL("../../..", import.meta.url));
const dirs = [
  "tests/fixtures/valid",
  "tests/fixtures/invalid",
  "tests/fixtures/guarantee/valid",
  "examples/results",
  "examples/results/guarantee",
  "examples/results/mcp",
];
const documents = [];
const encoder = new TextEncoder();
for (const dir of dirs) {
  for (const name of readdirSync(join(root, dir)).sort()) {
    if (!name.endsWith(".json")) continue;
    let value;
    try {
      value = JSON.parse(readFileSync(join(root, dir, name), "utf8"));
    } catch {
      continue;
    }
    documents.push(JSON.stringify(value));
    if (typeof value === "object" && value !== null && !("content" in value)) {
      documents.push(JSON.stringify({ content: [], structuredContent: value, isError: false }));
    }
  }
}
const lines = Array.from({ length: LINES }, (_, i) => encoder.encode(documents[i % documents.length]));
const decoder = new TextDecoder();
const best = { "JSON.parse": Infinity, read: Infinity };
let sink = 0;
for (let round = 0; round < ROUNDS; round++) {
  let start = performance.now();
  for (const line of lines) sink += JSON.parse(decoder.decode(line)) === null ? 1 : 0;
  best["JSON.parse"] = Math.min(best["JSON.parse"], performance.now() - start);
  start = performance.now();
  for (const line of lines) sink += read(line).decision.length;
  best.read = Math.min(best.read, performance.now() - start);
}
for (const [name, ms] of Object.entries(best)) console.log(`${name}: ${ms.toFixed(0)} ms for ${LINES.toLocaleString("en")} lines`);
console.log(`typescript, read / JSON.parse: ${(best.read / best["JSON.parse"]).toFixed(2)}x`);
if (sink < 0) console.log(sink);
