#!/usr/bin/env bash
# The `atr-validate` pre-commit hook: validates the files pre-commit passes, with the atr built
# from this checkout (pre-commit keeps it; cargo rebuilds only when the sources change), or
# with the one $ATR names (`ATR=/path/to/atr git commit`).
#
# The build is --locked (the checkout's Cargo.lock, never a newer dependency), and the binary is
# the one cargo says it built, wherever its target directory is (CARGO_TARGET_DIR, a
# .cargo/config.toml): cargo's own report, not a guessed path.
set -euo pipefail
if [ -z "${ATR:-}" ]; then
  root="$(cd "$(dirname "$0")/.." && pwd)"
  ATR="$(
    cargo build --quiet --release --locked --manifest-path "$root/Cargo.toml" --bin atr \
      --message-format=json-render-diagnostics |
      sed -n 's/.*"executable":"\([^"]*\)".*/\1/p' | tail -n 1
  )"
  if [ -z "$ATR" ] || [ ! -x "$ATR" ]; then
    echo "atr-validate: cargo built no atr binary; set ATR to an atr to use instead" >&2
    exit 2
  fi
fi
exec "$ATR" validate "$@"
