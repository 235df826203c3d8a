#!/usr/bin/env python3
"""Writes a deterministic NDJSON corpus of result envelopes for bench/compare-peers.sh.

Usage: gen-corpus.py OUT.ndjson [COUNT] [--all-valid]

About 1 KB per envelope; one in ten breaks the contract in a way every JSON Schema validator
can see (no duplicate keys, which only atr reports). The numbers of the broken lines are
written to OUT.invalid, one per line. With --all-valid, every envelope is valid.
"""
import json
import random
import sys

CATEGORIES = ["timeout", "ambiguous-selector", "stale-element", "no-target", "invalid-argument",
              "capture-blank", "ocr-blank", "ocr-no-text", "focus", "elevation", "foreground",
              "internal"]
CODES = {"timeout": "wait-condition-timeout", "ambiguous-selector": "selector-matched-3",
         "stale-element": "element-stale", "no-target": "element-not-found",
         "invalid-argument": "bad-arguments", "capture-blank": "frame-all-black",
         "ocr-blank": "ocr-image-blank", "ocr-no-text": "ocr-text-not-found",
         "focus": "focus-not-confirmed", "elevation": "target-elevated",
         "foreground": "foreground-not-set", "internal": "unhandled-exception"}


def element(rng, i):
    return {"automationId": f"ctl{i}{rng.randrange(1000)}", "name": rng.choice(["OK", "Cancel", "Apply", "Help", "Save as..."]),
            "className": "Button", "controlType": "button",
            "bounds": [rng.randrange(2000), rng.randrange(1200), 80, 24], "enabled": rng.random() < 0.9}


def window(rng):
    return {"handle": rng.randrange(1 << 24), "title": "Untitled - Notepad", "className": "Notepad",
            "processName": "notepad", "processId": rng.randrange(65536), "x": rng.randrange(-100, 1900),
            "y": rng.randrange(0, 1000), "width": 1024, "height": 768}


def valid(rng, n):
    session = f"s-{rng.randrange(16 ** 8):08x}"
    if rng.random() < 0.6:
        doc = {"ok": True, "sessionId": session,
               "result": {"window": "Untitled - Notepad", "elements": [element(rng, i) for i in range(7)]}}
        if rng.random() < 0.3:
            doc["warnings"] = [{"code": "tree-truncated", "detail": "Tree clipped at 500 nodes; raise maxNodes."}]
        return doc
    category = rng.choice(CATEGORIES)
    return {"ok": False, "sessionId": session, "warnings": [{"code": "minimized-window", "detail": "Target was minimized; restored before the call."}],
            "error": {"code": CODES[category], "category": category,
                      "detail": f"Call {n} failed as {category}; see lastObservation for the state before it. " * 2,
                      "lastObservation": {"kind": "query", "window": window(rng), "nodes": rng.randrange(1000),
                                          "elements": [element(rng, i) for i in range(4)]}}}


def broken(rng, n):
    doc = valid(rng, n)
    kind = n % 8
    if kind == 0:
        doc = {"ok": False, "sessionId": doc["sessionId"]}                     # failure without error
    elif kind == 1:
        doc["ok"] = not doc["ok"]                                              # contradiction
    elif kind == 2:
        doc["command"] = "find"                                                # unknown field
    elif kind == 3:
        doc = {"ok": False, "error": {"code": "element-not-found", "category": "No_Target", "detail": "x"}}
    elif kind == 4:
        doc = {"ok": False, "error": {"code": "Element_Not_Found", "category": "no-target", "detail": "x"}}
    elif kind == 5:
        doc["ok"] = "true"                                                     # wrong type
    elif kind == 6:
        doc = {"ok": True, "result": "done", "sessionId": doc["sessionId"]}   # result not an object
    else:
        doc = {"ok": False, "error": {"code": "unhandled", "category": "internal", "detail": "x",
                                      "lastObservation": {"width": 1, "base64": "iVBORw0KGgo="}}}
    return doc


def main():
    args = [a for a in sys.argv[1:] if a != "--all-valid"]
    all_valid = len(args) < len(sys.argv) - 1
    out = args[0]
    count = int(args[1]) if len(args) > 1 else 100_000
    rng = random.Random(20261130)
    invalid = []
    with open(out, "w") as f:
        for n in range(1, count + 1):
            if n % 10 == 0 and not all_valid:
                doc = broken(rng, n // 10)
                invalid.append(n)
            else:
                doc = valid(rng, n)
            f.write(json.dumps(doc, separators=(",", ":")) + "\n")
    with open(out.rsplit(".", 1)[0] + ".invalid", "w") as f:
        f.write("".join(f"{n}\n" for n in invalid))


if __name__ == "__main__":
    main()
