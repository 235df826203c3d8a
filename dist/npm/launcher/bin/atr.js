#!/usr/bin/env node
// Runs the atr binary of the platform package npm installed beside this one (an optional
// dependency per platform, of which npm installs the one whose os, cpu and libc match).
"use strict";

const { spawnSync } = require("node:child_process");
const { constants } = require("node:os");

// Keep in step with dist/build's PLATFORMS: process.platform and process.arch to a package.
const PACKAGES = {
  "linux x64": "agent-tool-result-cli-linux-x64-gnu",
};

function fail(message) {
  process.stderr.write(`atr: ${message}\n`);
  process.exit(2);
}

const platform = `${process.platform} ${process.arch}`;
const name = PACKAGES[platform];
if (!name) {
  fail(
    `no prebuilt binary for ${platform}; build one with Rust: cargo install agent-tool-result-cli --locked`,
  );
}
let binary;
try {
  binary = require.resolve(`${name}/bin/atr`);
} catch {
  fail(
    `the package ${name} is not installed: reinstall agent-tool-result-cli without omitting optional dependencies`,
  );
}
const run = spawnSync(binary, process.argv.slice(2), { stdio: "inherit" });
if (run.error) {
  fail(`cannot run ${binary}: ${run.error.message}`);
}
if (run.signal) {
  process.exit(128 + (constants.signals[run.signal] ?? 1));
}
process.exit(run.status ?? 2);
