#!/usr/bin/env node
/** `agent-tool-result [--ndjson] FILE...`: see {@link main}. */
import { main } from "./capture.js";

process.exitCode = main(
  process.argv.slice(2),
  (text) => process.stdout.write(text),
  (text) => process.stderr.write(text),
);
