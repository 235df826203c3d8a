#!/usr/bin/env bash
# The cost of the telemetry features when nothing listens: benches/telemetry.rs built without
# them, with `tracing`, and with `tracing,metrics`, run in turns (ROUNDS rounds, each build
# once a round, so that the machine's drift falls on all alike), the median of each build and
# its ratio to the build without. Usage: bash bench/telemetry-overhead.sh [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-7}
declare -A binary
for features in replay replay,tracing replay,tracing,metrics; do
  binary[$features]=$(cargo bench -p agent-tool-result-tests --bench telemetry \
    --no-default-features --features "$features" --no-run 2>&1 |
    sed -n 's/.*Executable .*(\(.*\))$/\1/p' | tail -1)
done
declare -A runs
for _ in $(seq "$rounds"); do
  for features in replay replay,tracing replay,tracing,metrics; do
    nanos=$("${binary[$features]}" --bench | awk '{print $1}')
    runs[$features]="${runs[$features]:-} $nanos"
  done
done
median() { tr ' ' '\n' | sed '/^$/d' | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
base=$(echo "${runs[replay]}" | median)
for features in replay replay,tracing replay,tracing,metrics; do
  m=$(echo "${runs[$features]}" | median)
  awk -v f="$features" -v m="$m" -v b="$base" -v r="${runs[$features]}" \
    'BEGIN { printf "%-24s median %6d ns per pair   %.3fx   (runs:%s)\n", f, m, m / b, r }'
done
