"""Parses each line of standard input as an RFC 9651 list (the RateLimit and RateLimit-Policy
fields are lists of items) with `http_sf`, and prints one JSON line a field: its items, each
[value, {parameter: value}], or {"error": why}."""

import json
import sys

import http_sf

for line in sys.stdin.read().splitlines():
    try:
        items = http_sf.parse(line.encode("ascii"), tltype="list")
        print(json.dumps([[value, dict(params)] for value, params in items]))
    except Exception as error:  # the parser's refusal is the finding
        print(json.dumps({"error": f"{type(error).__name__}: {error}"}))
