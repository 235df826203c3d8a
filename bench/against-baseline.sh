#!/usr/bin/env bash
# `atr validate --jobs 1` of this build against an earlier commit's, on the corpus of
# compare-peers.sh (100,000 envelopes, one in ten invalid) and on its valid lines: pinned to
# one core, in interleaved pairs, each pair's ratio and their median, and both builds against
# the floor (`ndjson_floor`: the same lines parsed into IgnoredAny) timed in the same rounds.
#
# Usage: bash bench/against-baseline.sh REV   (ROUNDS=N pairs, default 21; CPU=N the core,
# default 1; COUNT=N envelopes, default 100000). The earlier build is made in a worktree under
# bench/.work and kept there for the next run.
set -euo pipefail
cd "$(dirname "$0")/.."

rev="$(git rev-parse --short "${1:?usage: against-baseline.sh REV}")"
work="bench/.work"
mkdir -p "$work"

cargo build --release --quiet --bin atr
cargo build --release --quiet -p agent-tool-result-cli --example ndjson_floor
baseline="$work/atr-$rev"
if [ ! -x "$baseline" ]; then
  git worktree add --force --detach "$work/tree-$rev" "$rev" >/dev/null
  (cd "$work/tree-$rev" && cargo build --release --quiet --bin atr --target-dir ../target-baseline)
  cp "$work/target-baseline/release/atr" "$baseline"
  git worktree remove --force "$work/tree-$rev"
fi

python3 bench/gen-corpus.py "$work/corpus.ndjson" "${COUNT:-100000}"
# The mixed corpus without its invalid lines.
awk 'NR==FNR { bad[$1] = 1; next } !(FNR in bad)' "$work/corpus.invalid" "$work/corpus.ndjson" \
  > "$work/corpus-valid.ndjson"
exec python3 bench/against-baseline.py "$work" target/release/atr "$baseline" \
  target/release/examples/ndjson_floor "${ROUNDS:-21}" "${CPU:-1}"
