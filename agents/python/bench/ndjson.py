"""Reading 100,000 results from NDJSON to decisions, against json.loads alone on the same
lines, side by side in one run (rounds interleaved): prints each one's best time and the
ratio (the goal: within 3x).

    python bench/ndjson.py [CORPUS_DIR...]

The lines are the repository's result documents and tools/call results (valid and broken),
each also carried in a tools/call result, repeated to 100,000."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from agent_tool_result import read

LINES = 100_000
ROUNDS = 5


def corpus(dirs: list[Path]) -> list[bytes]:
    documents = []
    for directory in dirs:
        for path in sorted(directory.glob("*.json")):
            text = path.read_bytes()
            try:
                value = json.loads(text)
            except ValueError:
                continue
            documents.append(json.dumps(value, separators=(",", ":")).encode())
            if isinstance(value, dict) and "content" not in value:
                carried = {"content": [], "structuredContent": value, "isError": False}
                documents.append(json.dumps(carried, separators=(",", ":")).encode())
    return [documents[i % len(documents)] for i in range(LINES)]


def main() -> None:
    root = Path(__file__).resolve().parents[3]
    dirs = [Path(d) for d in sys.argv[1:]] or [
        root / "tests/fixtures/valid",
        root / "tests/fixtures/invalid",
        root / "tests/fixtures/guarantee/valid",
        root / "examples/results",
        root / "examples/results/guarantee",
        root / "examples/results/mcp",
    ]
    lines = corpus(dirs)
    best = {"json.loads": float("inf"), "read": float("inf")}
    for _ in range(ROUNDS):
        start = time.perf_counter()
        for line in lines:
            json.loads(line)
        best["json.loads"] = min(best["json.loads"], time.perf_counter() - start)
        start = time.perf_counter()
        decisions = [read(line).decision for line in lines]
        best["read"] = min(best["read"], time.perf_counter() - start)
    assert len(decisions) == LINES
    for name, seconds in best.items():
        print(f"{name}: {seconds * 1000:.0f} ms for {LINES:,} lines")
    print(f"python, read / json.loads: {best['read'] / best['json.loads']:.2f}x")


if __name__ == "__main__":
    main()
