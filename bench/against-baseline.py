#!/usr/bin/env python3
"""The measuring half of against-baseline.sh: `atr validate --jobs 1` of this build against
another build's, pinned to one core, in interleaved pairs, with the floor in the same rounds.

Usage: against-baseline.py WORK ATR BASELINE FLOOR ROUNDS CPU
"""
import os
import statistics
import subprocess
import sys
import time

work, atr, baseline, floor, rounds, cpu = sys.argv[1:7]
rounds = int(rounds)


def timed(command, path):
    """Wall and CPU seconds (user and system, all threads) of one run, pinned to the core;
    its output is read and thrown away."""
    with open(f"{work}/out", "w") as out:
        start = time.perf_counter()
        child = subprocess.Popen(["taskset", "-c", cpu, *command, path], stdout=out)
        _, _, usage = os.wait4(child.pid, 0)
        wall = time.perf_counter() - start
        return wall, usage.ru_utime + usage.ru_stime


def validate(binary):
    return [binary, "validate", "--jobs", "1", "--ndjson", "--format", "json"]


corpora = {"mixed (one in ten invalid)": f"{work}/corpus.ndjson",
           "its valid lines": f"{work}/corpus-valid.ndjson"}
for name, path in corpora.items():
    runs = {"this": [], "baseline": [], "floor": []}
    for round_ in range(rounds):
        # Alternate which build goes first, so neither always meets a warm or cold cache.
        order = [("this", atr), ("baseline", baseline)]
        for key, binary in order if round_ % 2 == 0 else reversed(order):
            runs[key].append(timed(validate(binary), path))
        runs["floor"].append(timed([floor], path))
    lines = sum(1 for _ in open(path))
    print(f"{name}: {lines} lines, {rounds} interleaved pairs on core {cpu}")
    for measure, index in (("wall", 0), ("cpu", 1)):
        ratios = sorted(a[index] / b[index] for a, b in zip(runs["this"], runs["baseline"]))
        this, base, low = (statistics.median(run[index] for run in runs[key])
                           for key in ("this", "baseline", "floor"))
        print(f"  {measure}: this build / baseline: median {statistics.median(ratios):.3f}x "
              f"(pairs from {ratios[0]:.3f}x to {ratios[-1]:.3f}x); "
              f"this build / floor: {this / low:.2f}x; baseline / floor: {base / low:.2f}x")
