#!/usr/bin/env python3
"""scripts/planner-speed.py, as a specification (a check of the measuring, not of the figures: timings
belong to `make bench`):

* it plans both target cases in fresh processes and reports, per case, best <= median <= p90, all
  positive, the target (2 ms at 16 x dgx-h200 with 1M tokens, 20 ms at 128 x dgx-h200 with 8M) and
  whether the median is within it, on the console and in --json;
* a missing binary or a nonsensical --runs is bad input: exit 2 with a message naming it.

Usage: planner_speed_test.py SCRIPT BENCH WORK_DIR
"""
import json
import os
import shutil
import subprocess
import sys


def run(command):
    return subprocess.run([sys.executable] + command, capture_output=True, text=True, timeout=600)


def main():
    script, bench, work = sys.argv[1:4]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    failures = []
    figures = os.path.join(work, "planner-cold.json")

    measured = run([script, "--bin", bench, "--runs", "2", "--json", figures])
    print(measured.stdout, measured.stderr)
    if measured.returncode != 0:
        failures.append("planner-speed.py exited %d" % measured.returncode)
    else:
        cases = json.load(open(figures))["cases"]
        targets = sorted(c["target_ms"] for c in cases)
        if targets != [2.0, 20.0]:
            failures.append("targets %s, expected 2 ms and 20 ms" % targets)
        for c in cases:
            if not 0 < c["best_ms"] <= c["median_ms"] <= c["p90_ms"]:
                failures.append("%s: best %s, median %s, p90 %s out of order" %
                                (c["case"], c["best_ms"], c["median_ms"], c["p90_ms"]))
            if c["met"] != (c["median_ms"] <= c["target_ms"]):
                failures.append("%s: met=%s disagrees with its median and target" % (c["case"], c["met"]))
            if c["case"] not in measured.stdout:
                failures.append("%s missing from the console table" % c["case"])

    for bad, words in [(["--bin", os.path.join(work, "no-such-binary")], "no executable"),
                       (["--bin", bench, "--runs", "0"], "--runs must be at least 1")]:
        r = run([script] + bad)
        if r.returncode != 2 or words not in r.stderr:
            failures.append("%s: exit %d, stderr %r; expected exit 2 naming %r" % (bad, r.returncode, r.stderr, words))

    for f in failures:
        print("FAIL: " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
