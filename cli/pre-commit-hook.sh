#!/usr/bin/env bash
# The `atr-validate` pre-commit hook: validates the files pre-commit passes, with the atr built
# from this checkout (pre-commit keeps it; cargo rebuilds only when the sources change), or
# with the one $ATR names.
set -euo pipefail
if [ -z "${ATR:-}" ]; then
  root="$(cd "$(dirname "$0")/.." && pwd)"
  cargo build --quiet --release --manifest-path "$root/Cargo.toml" --bin atr >&2
  ATR="$root/target/release/atr"
fi
exec "$ATR" validate "$@"
