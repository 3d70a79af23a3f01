#!/usr/bin/env python3
"""Measured NIC bytes on the emulated two-node cluster (issue 15, item 6), as a specification:

* every system's report lists each of the 2 x 4 rails with source "measured";
* on every rail, the bytes its counters moved agree with the bytes the Program's transfers put on it
  within 5 % (frames carry headers; MTU 9000 keeps them under 1 %);
* ring CP crosses nodes at the ring's two boundaries only, so one rail per node carries its
  inter-node traffic; Zeppelin's routing layer spreads a long document's K/V over every rail;
* the HTML report shows the measured table.

Skips (exit 77) with the reason where network namespaces cannot be made or mpirun is missing.
Usage: emulated_cluster_test.py BENCH SCENARIO WORK_DIR
"""
import json
import os
import shutil
import sys

from emulated_support import cluster_env, run_on_cluster


def main():
    bench, scenario, work = sys.argv[1:4]
    env = cluster_env("zbct")
    shutil.rmtree(work, ignore_errors=True)
    run = run_on_cluster(env, [bench, "run", scenario, "--quiet", "--out", work])
    if run.returncode != 0:
        print(run.stdout[-4000:], run.stderr[-4000:])
        sys.exit(f"the run on the emulated cluster exited {run.returncode}")

    report = json.load(open(os.path.join(work, "report.json")))
    failures = []
    rails_used = {}
    for system in report["systems"]:
        label = system["label"]
        nics = system["nic"]["per_nic"]
        if len(nics) != 8:
            failures.append(f"{label}: {len(nics)} NICs in the report, expected 2 nodes x 4 rails")
        # What the counters see besides the Program: MPI's own control traffic, TCP acknowledgements.
        noise = 0.02 * max(max(n["tx_bytes"], n["rx_bytes"]) for n in nics)
        for nic in nics:
            where = f"{label} n{nic['node']} nic{nic['nic']}"
            if nic["source"] != "measured":
                failures.append(f"{where}: source {nic['source']}, expected measured")
            for side in ("tx", "rx"):
                measured, expected = nic[f"{side}_bytes"], nic[f"expected_{side}_bytes"]
                print(f"{where} {side}: measured {measured:.0f} B, expected {expected:.0f} B")
                if expected > 0 and abs(measured / expected - 1) > 0.05:
                    failures.append(f"{where} {side}: measured {measured:.0f} B is not within 5 % of {expected:.0f} B")
                if expected == 0 and measured > noise:
                    failures.append(f"{where} {side}: {measured:.0f} B measured where the Program sends nothing")
        busy = {(n["node"], n["nic"]) for n in nics if n["expected_tx_bytes"] > 0}
        rails_used[label] = busy
    ring = next((v for k, v in rails_used.items() if k.startswith("ring-cp")), None)
    zeppelin = next((v for k, v in rails_used.items() if k.startswith("zeppelin")), None)
    if ring is None or zeppelin is None:
        failures.append(f"expected ring-cp and zeppelin in the report, got {sorted(rails_used)}")
    else:
        if len({nic for node, nic in ring if node == 0}) != 1 or len({nic for node, nic in ring if node == 1}) != 1:
            failures.append(f"ring-cp: inter-node bytes on rails {sorted(ring)}, expected one rail per node")
        if len(zeppelin) != 8:
            failures.append(f"zeppelin: inter-node bytes on rails {sorted(zeppelin)}, expected all 4 rails of both nodes")
    html = open(os.path.join(work, "report.html")).read()
    if "tx measured" not in html or "(measured: NIC byte counters)" not in html:
        failures.append("report.html has no measured NIC table")
    if failures:
        sys.exit("\n".join(failures))
    print("emulated cluster: measured NIC bytes agree with the Program")


if __name__ == "__main__":
    main()
