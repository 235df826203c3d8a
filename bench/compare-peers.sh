#!/usr/bin/env bash
# Validates one generated NDJSON corpus of result envelopes with `atr validate` and with peer
# JSON Schema validators, on the same schema, in one run; prints envelopes per second, peak
# memory and the ratio to atr, and checks that every tool finds the same invalid documents.
# Also measures atr against the floor (`ndjson_floor`: reading the same lines and parsing each
# into serde's IgnoredAny, validating nothing), on that corpus and on an all-valid one, and
# prints every command it ran so that any row can be rerun.
#
# Needs: cargo, python3 (with venv), node and npm. Peers are installed under bench/.peers.
# Usage: bash bench/compare-peers.sh [COUNT]   (default 100000 envelopes; ROUNDS=N runs the
# atr and floor rows N times each, interleaved, and keeps the fastest: default 10; ATR=PATH
# measures another atr binary against the same floor and peers; BASELINE=PATH times a second
# build, an earlier commit say, in the same interleaved rounds, for before and after)
set -euo pipefail
cd "$(dirname "$0")/.."

count="${1:-100000}"
peers="bench/.peers"
work="bench/.work"
mkdir -p "$peers" "$work"

cargo build --release --quiet --bin atr
cargo build --release --quiet -p agent-tool-result-cli --example ndjson_floor

if [ ! -x "$peers/node_modules/.bin/jsonschema" ] || [ ! -x "$peers/node_modules/.bin/ajv" ]; then
  npm install --silent --no-audit --no-fund --prefix "$peers" \
    @sourcemeta/jsonschema@16.11.0 ajv-cli@5.0.0 ajv@8.20.0 >/dev/null
fi
if [ ! -x "$peers/venv/bin/check-jsonschema" ]; then
  python3 -m venv "$peers/venv"
  "$peers/venv/bin/pip" install --quiet check-jsonschema==0.39.0
fi

python3 bench/gen-corpus.py "$work/corpus.ndjson" "$count"
python3 bench/gen-corpus.py "$work/valid.ndjson" "$count" --all-valid
exec python3 bench/compare-peers.py "$work" "$peers"
