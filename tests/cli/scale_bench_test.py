#!/usr/bin/env python3
"""scripts/scale-bench.py, as a specification (a check of the measuring, not of the figures: timings
belong to `make bench`):

* the planner part plans every case asked in a fresh process and reports, per case, planner_seconds,
  the process's CPU seconds and peak memory (positive), the plan's predicted iteration, and the share
  = planner_seconds / predicted iteration, judged against the 2 % limit, on the console and in --json,
  with what the limit allows: its seconds (2 % of the predicted iteration) and those per document of the
  batch (the plan's sequences);
* a case above --max-tokens is listed as not run, not dropped;
* the simulator part runs one iteration per GPU count and reports the batch's documents and the time
  and memory per GPU x document;
* nonsense is bad input: exit 2 naming it (a missing binary, GPU counts that are not whole nodes, a
  seed of 0).

Usage: scale_bench_test.py SCRIPT BENCH WORK_DIR
"""
import json
import math
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
    figures = os.path.join(work, "scale.json")
    measured = run([script, "--bin", bench, "--gpus", "16", "32", "--tokens-per-gpu", "2048",
                    "--seeds", "1", "2", "--sim-gpus", "16", "--sim-tokens-per-gpu", "2048",
                    "--max-tokens", "40000", "--json", figures])
    print(measured.stdout, measured.stderr)
    if measured.returncode != 0:
        failures.append("scale-bench.py exited %d" % measured.returncode)
    else:
        results = json.load(open(figures))
        planner = results["planner"]
        ran = [c for c in planner if c["status"] == "ok"]
        skipped = [c for c in planner if c["status"].startswith("not run")]
        if len(ran) != 2 or len(skipped) != 2 or any(c["gpus"] != 32 for c in skipped):
            failures.append("expected the two 16-GPU cases run and the two 32-GPU ones (65536 tokens, above "
                            "--max-tokens) listed as not run: %s" % [(c["gpus"], c["status"]) for c in planner])
        for c in ran:
            if not (c["planner_s"] > 0 and c["process_cpu_s"] > 0 and c["peak_rss_bytes"] > 0
                    and c["predicted_iteration_s"] > 0):
                failures.append("non-positive figure in %s" % c)
            if not math.isclose(c["share"], c["planner_s"] / c["predicted_iteration_s"], rel_tol=1e-12):
                failures.append("share is not planner_s / predicted_iteration_s in %s" % c)
            if c["within_limit"] != (c["share"] <= results["share_limit"]):
                failures.append("within_limit disagrees with the share in %s" % c)
            if not (c["documents"] > 0 and math.isclose(
                    c["budget_s"], results["share_limit"] * c["predicted_iteration_s"], rel_tol=1e-12)
                    and math.isclose(c["budget_ns_per_document"], 1e9 * c["budget_s"] / c["documents"],
                                     rel_tol=1e-12)):
                failures.append("the budget is not 2 %% of the iteration, per document of the batch: %s" % c)
        sim = results["simulator"]
        if len(sim) != 1 or sim[0]["status"] != "ok" or sim[0]["documents"] <= 0:
            failures.append("the simulator part did not run its one case: %s" % sim)
        elif not math.isclose(sim[0]["cpu_us_per_gpu_document"],
                              sim[0]["process_cpu_s"] / (16 * sim[0]["documents"]) * 1e6, rel_tol=1e-12):
            failures.append("CPU per GPU x document is not CPU / (GPUs x documents): %s" % sim[0])
        for words in ["planner share of the predicted iteration", "not run: 65536 tokens", "simulator, one",
                      "budget ms", "ns/doc"]:
            if words not in measured.stdout:
                failures.append("%r missing from the console" % words)

    for bad, words in [(["--bin", os.path.join(work, "no-such-binary")], "no executable"),
                       (["--bin", bench, "--gpus", "12"], "multiples of 8"),
                       (["--bin", bench, "--seeds", "0"], "--seeds must be positive")]:
        r = run([script] + bad)
        if r.returncode != 2 or words not in r.stderr:
            failures.append("%s: exit %d, stderr %r; expected exit 2 naming %r" % (bad, r.returncode, r.stderr, words))

    for f in failures:
        print("FAIL: " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
