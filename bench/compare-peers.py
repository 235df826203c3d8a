#!/usr/bin/env python3
"""The measuring half of compare-peers.sh: runs each validator on the corpus, side by side."""
import json
import os
import re
import shutil
import shlex
import subprocess
import sys
import time

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
        start = time.perf_counter()
        subprocess.run(["/usr/bin/time", "-o", time_path, "-f", "%M", *command], stdout=out, stderr=err)
        wall = time.perf_counter() - start
    rss_kb = open(time_path).read().strip().splitlines()[-1]
    return wall, int(rss_kb) / 1024, open(out_path).read() + "\n" + open(err_path).read()


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


valid = os.path.join(work, "valid.ndjson")
floor = "target/release/examples/ndjson_floor"
atr = os.environ.get("ATR", "target/release/atr")
baseline = os.environ.get("BASELINE")
rounds = int(os.environ.get("ROUNDS", "10"))


def atr_jobs(jobs, path, binary=atr):
    return [binary, "validate", "--jobs", str(jobs), "--ndjson", "--format", "json", path]


# Two floors at once: what two busy cores of this machine give, the ceiling for --jobs 2.
both_floors = ["sh", "-c", f"{shlex.quote(floor)} {shlex.quote(corpus)} & "
               f"{shlex.quote(floor)} {shlex.quote(corpus)}; wait"]

# The floor and atr, timed side by side: every command once a round, the fastest round kept.
timed = {
    "floor": [floor, corpus],
    "two floors": both_floors,
    "atr 1": atr_jobs(1, corpus),
    "atr 2": atr_jobs(2, corpus),
    "floor valid": [floor, valid],
    "atr 1 valid": atr_jobs(1, valid),
    "atr 2 valid": atr_jobs(2, valid),
}
if baseline:
    # Another build (an earlier commit, say) in the same rounds: before and after, side by side.
    timed.update({
        "baseline 1": atr_jobs(1, corpus, baseline),
        "baseline 2": atr_jobs(2, corpus, baseline),
        "baseline 1 valid": atr_jobs(1, valid, baseline),
        "baseline 2 valid": atr_jobs(2, valid, baseline),
    })
best = {}
for _ in range(rounds):
    for key, command in timed.items():
        wall, rss, output = measure(command)
        prior = best.get(key)
        found = atr_invalid(output) if key.startswith(("atr", "baseline")) else None
        best[key] = (min(wall, prior[0]) if prior else wall, max(rss, prior[1]) if prior else rss,
                     found)

peer_tools = [
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
for key, name in [("atr 2", "atr validate --jobs 2"), ("atr 1", "atr validate --jobs 1")]:
    wall, rss, found = best[key]
    rows.append((name, timed[key], wall, rss, found == expected, len(found)))
for name, command, parse in peer_tools:
    wall, rss, output = measure(command)
    found = parse(output)
    rows.append((name, command, wall, rss, found == expected, len(found)))

atr_wall = rows[0][2]
print(f"{count} envelopes, {os.path.getsize(corpus) / count:.0f} bytes each on average, "
      f"{len(expected)} invalid; {os.cpu_count()} cores; atr and the floor: the fastest of "
      f"{rounds} interleaved rounds\n")
print("| validator | envelopes/s | peak memory | time vs atr | same invalid documents |")
print("|---|---:|---:|---:|---|")
for name, _, wall, rss, agrees, found in rows:
    print(f"| {name} | {count / wall:,.0f} | {rss:.0f} MB | {wall / atr_wall:.2f}x | "
          f"{'yes' if agrees else f'NO ({found} found)'} |")

print("\nAgainst the floor (reading the lines and parsing each into IgnoredAny, no validation):\n")
print("| corpus | floor | atr --jobs 1 | atr --jobs 2 | --jobs 1 / floor | --jobs 1 / --jobs 2 |")
print("|---|---:|---:|---:|---:|---:|")
builds = [("atr", "")] + ([("baseline", "baseline: ")] if baseline else [])
for build, prefix in builds:
    for label, suffix in [("one in ten invalid", ""), ("all valid", " valid")]:
        fl, one, two = (best[k + suffix][0] for k in ("floor", f"{build} 1", f"{build} 2"))
        print(f"| {prefix}{label} | {fl * 1000:.0f} ms | {one * 1000:.0f} ms | {two * 1000:.0f} ms | "
              f"{one / fl:.2f}x | {one / two:.2f}x |")
ceiling = 2 * best["floor"][0] / best["two floors"][0]
print(f"\nThis machine's own ceiling for two cores: two floors at once take "
      f"{best['two floors'][0] * 1000:.0f} ms, {ceiling:.2f}x the throughput of one.")
for build, prefix in builds:
    peak = max(best[k][1] for k in best if k.startswith(build))
    print(f"\n{prefix or 'atr: '}peak memory {peak:.0f} MB")

print("\nThe commands, from the repository root:\n\n```text")
for key, command in timed.items():
    print(shlex.join(command))
for _, command, _ in peer_tools:
    print(shlex.join(command))
print("```")
valid_agrees = not best["atr 1 valid"][2] and not best["atr 2 valid"][2]
if baseline:
    print(f"\nbaseline: {baseline}")
sys.exit(0 if all(row[4] for row in rows) and valid_agrees else 1)
