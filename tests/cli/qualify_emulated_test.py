#!/usr/bin/env python3
"""`zeppelin-bench qualify` on the emulated two-node cluster (issue 16), as a specification:

* on four healthy rails every figure is at or above its floor: exit 0, qualify.json "passed": true; on
  the way it prints one progress line per rank's compute probes (with the time to go) and one for the
  links, once (the reporting rank);
* with rail 2 slowed by tc (100 Mbit/s), qualify exits 1 and names it: the console's failure list
  and qualify.json's failing figures are the transfers that leave on NIC 2 (and the routed transfer,
  which crosses every NIC), and only those.

Skips (exit 77) with the reason where network namespaces cannot be made or mpirun is missing.
Usage: qualify_emulated_test.py BENCH SCENARIO WORK_DIR
"""
import json
import os
import shutil
import sys

from emulated_support import cluster_env, run_on_cluster


# The emulated cluster's 8 ranks share this machine's 2 cores, so a single figure can swing 2x with the
# scheduling; the default floor (0.5 x the median of its class) then fails a healthy link now and then. A
# quarter of the median tolerates that noise and still catches the rail slowed by tc, 25x below its peers.
FLOORS = {"relative_to_median": 0.25}


def qualify(env, bench, scenario, out, slow):
    os.makedirs(os.path.dirname(out), exist_ok=True)
    floors = os.path.join(os.path.dirname(out), "floors.json")
    with open(floors, "w") as f:
        json.dump(FLOORS, f)
    return run_on_cluster(env, [bench, "qualify", scenario, "--floors", floors, "--out", out], slow)


def main():
    bench, scenario, work = sys.argv[1:4]
    env = cluster_env("zbq")
    shutil.rmtree(work, ignore_errors=True)
    failures = []

    healthy = qualify(env, bench, scenario, os.path.join(work, "healthy"), None)
    print(healthy.stdout)
    report = json.load(open(os.path.join(work, "healthy", "qualify.json")))
    if healthy.returncode != 0 or not report["passed"]:
        failures.append(f"healthy cluster: exit {healthy.returncode}, passed {report['passed']}:\n{healthy.stdout[-3000:]}{healthy.stderr[-2000:]}")
    # It says where it is: one line per rank's compute probes (with an estimate from the second on), then
    # the links, from the reporting rank only.
    for line in ("qualify: compute probes of rank 0 of 8", "qualify: compute probes of rank 7 of 8", "s to go)",
                 "qualify: the links"):
        if healthy.stderr.count(line) != (1 if line != "s to go)" else 7):
            failures.append(f"healthy cluster: progress line {line!r} printed {healthy.stderr.count(line)} times:\n"
                            f"{healthy.stderr[-2000:]}")
    probes = {f["probe"] for f in report["figures"]}
    for probe in ("gemm", "attention", "p2p-intra", "p2p-rail", "all-rails", "routed"):
        if probe not in probes:
            failures.append(f"healthy cluster: no {probe} figure in qualify.json")
    if report["world_size"] != 8 or report["source"] != "measured":
        failures.append(f"healthy cluster: world {report['world_size']}, source {report['source']}")

    slowed = qualify(env, bench, scenario, os.path.join(work, "slowed"), "2=100mbit")
    print(slowed.stdout)
    report = json.load(open(os.path.join(work, "slowed", "qualify.json")))
    failing = [f for f in report["figures"] if not f["passed"]]
    if slowed.returncode != 1:
        failures.append(f"slowed rail: exit {slowed.returncode}, expected 1\n{slowed.stderr[-2000:]}")
    # The routed transfer crosses every NIC, the slowed one too, so it may fail with it.
    if not failing or any(f["nic"] != 2 and f["probe"] != "routed" for f in failing):
        failures.append("slowed rail: failing figures " + str([(f["probe"], f["subject"]) for f in failing]) +
                        ", expected only transfers on NIC 2")
    if not any(f["probe"] == "p2p-rail" and f["nic"] == 2 for f in failing):
        failures.append("slowed rail: the p2p-rail figure of NIC 2 did not fail")
    if "NOT QUALIFIED" not in slowed.stdout or "(NIC 2)" not in slowed.stdout.split("NOT QUALIFIED")[-1]:
        failures.append("slowed rail: the console does not name NIC 2 among the failures")
    if failures:
        sys.exit("\n".join(failures))
    print("qualify on the emulated cluster: passes healthy, names the slowed rail")


if __name__ == "__main__":
    main()
