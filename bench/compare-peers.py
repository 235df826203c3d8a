#!/usr/bin/env python3
"""The measuring half of compare-peers.sh: runs each validator on the corpus, side by side."""
import json
import os
import re
import shutil
import subprocess
import sys

work, peers = sys.argv[1], sys.argv[2]
corpus = os.path.join(work, "corpus.ndjson")
expected = {int(line) for line in open(os.path.join(work, "corpus.invalid"))}
count = sum(1 for _ in open(corpus))

# The same schema for everyone: atr's, and an array wrapper of it for the tools that take one
# JSON document (the envelope's definitions moved to the root so its references still hold).
schema_path = os.path.join(work, "schema.json")
with open(schema_path, "w") as f:
    subprocess.run(["target/release/atr", "schema"], stdout=f, check=True)
schema = json.load(open(schema_path))
definitions = schema.pop("$defs")
schema.pop("$id", None)
schema.pop("$schema", None)
definitions["envelope"] = schema
array_schema = os.path.join(work, "array-schema.json")
json.dump({"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "array",
           "items": {"$ref": "#/$defs/envelope"}, "$defs": definitions}, open(array_schema, "w"))
jsonl = os.path.join(work, "corpus.jsonl")
shutil.copyfile(corpus, jsonl)
array = os.path.join(work, "corpus.json")
with open(array, "w") as out, open(corpus) as lines:
    out.write("[")
    for i, line in enumerate(lines):
        out.write(("," if i else "") + line.rstrip("\n"))
    out.write("]")


def measure(command):
    """Runs a command under GNU time; returns wall seconds, peak RSS in MB and its output.

    Output goes to files, not pipes: node exits before a pipe drains, a file is written whole.
    """
    out_path, err_path, time_path = (os.path.join(work, name) for name in ("out", "err", "time"))
    with open(out_path, "w") as out, open(err_path, "w") as err:
        subprocess.run(["/usr/bin/time", "-o", time_path, "-f", "%e %M", *command], stdout=out, stderr=err)
    wall, rss_kb = open(time_path).read().strip().splitlines()[-1].split()
    return float(wall), int(rss_kb) / 1024, open(out_path).read() + "\n" + open(err_path).read()


def atr_invalid(output):
    lines = set()
    for line in output.splitlines():
        if line.startswith("{\"file\""):
            finding = json.loads(line)
            if finding["severity"] == "error":
                lines.add(finding["line"])
    return lines


def sourcemeta_invalid(output):
    return {int(n) for n in re.findall(r"^fail: .* \(entry #(\d+)\)", output, re.M)}


def ajv_invalid(output):
    start = output.find("[\n")
    if start < 0:
        return set()
    errors, _ = json.JSONDecoder().raw_decode(output, start)
    return {int(e["instancePath"].split("/")[1]) + 1 for e in errors if e["instancePath"]}


def check_jsonschema_invalid(output):
    report, _ = json.JSONDecoder().raw_decode(output, output.find("{"))
    return {int(re.match(r"\$\[(\d+)\]", e["path"]).group(1)) + 1 for e in report.get("errors", [])}


tools = [
    ("atr validate (2 cores)", ["target/release/atr", "validate", "--format", "json", corpus], atr_invalid),
    ("atr validate (1 core)", ["target/release/atr", "validate", "--jobs", "1", "--format", "json", corpus], atr_invalid),
    ("@sourcemeta/jsonschema validate --fast (JSONL)",
     [f"{peers}/node_modules/.bin/jsonschema", "validate", "--fast", "--continue", schema_path, jsonl],
     sourcemeta_invalid),
    ("ajv-cli 5 / ajv 8, draft 2020 (one array)",
     [f"{peers}/node_modules/.bin/ajv", "validate", "--spec=draft2020", "--all-errors", "--errors=json",
      "--strict=false", "-s", array_schema, "-d", array], ajv_invalid),
    ("check-jsonschema (one array)",
     [f"{peers}/venv/bin/check-jsonschema", "-o", "json", "--schemafile", array_schema, array],
     check_jsonschema_invalid),
]

rows = []
for name, command, parse in tools:
    wall, rss, output = measure(command)
    found = parse(output)
    rows.append((name, wall, rss, found == expected, len(found)))

# Peak memory does not grow with the input: atr on a tenth of the corpus.
tenth = os.path.join(work, "tenth.ndjson")
with open(corpus) as lines, open(tenth, "w") as out:
    for i, line in enumerate(lines):
        if i < count // 10:
            out.write(line)
_, tenth_rss, _ = measure(["target/release/atr", "validate", "--format", "json", tenth])

atr_wall = rows[0][1]
print(f"{count} envelopes, {os.path.getsize(corpus) / count:.0f} bytes each on average, "
      f"{len(expected)} invalid; {os.cpu_count()} cores\n")
print("| validator | envelopes/s | peak memory | time vs atr | same invalid documents |")
print("|---|---:|---:|---:|---|")
for name, wall, rss, agrees, found in rows:
    print(f"| {name} | {count / wall:,.0f} | {rss:.0f} MB | {wall / atr_wall:.2f}x | "
          f"{'yes' if agrees else f'NO ({found} found)'} |")
print(f"\natr's peak memory on a tenth of the corpus: {tenth_rss:.0f} MB "
      f"(on all of it: {rows[0][2]:.0f} MB)")
sys.exit(0 if all(agrees for _, _, _, agrees, _ in rows) else 1)
