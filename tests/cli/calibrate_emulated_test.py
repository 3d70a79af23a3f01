#!/usr/bin/env python3
"""`calibrate` and the simulation ratio on the emulated two-node cluster (issue 16, items 2 and 3):

* calibrate, one MPI rank per GPU, fits both link classes (intra-node: GPU 0 ↔ GPU 1 of node 0 over the
  ranks' transport; inter-node: node 0 ↔ node 1 over rail 0) besides the kernels;
* a reference run of the model itself (ZB_REF_DIMS=model) on the cluster with that profile reports
  simulated/measured for every system; the figures are printed (the closing note quotes them).

Skips (exit 77) with the reason where network namespaces cannot be made or mpirun is missing.
Usage: calibrate_emulated_test.py BENCH SCENARIO WORK_DIR
"""
import json
import os
import shutil
import subprocess
import sys

from emulated_support import CLUSTER, cluster_env


def main():
    bench, scenario, work = sys.argv[1:4]
    env = cluster_env("zbc")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    profile = os.path.join(work, "profile.json")
    failures = []
    subprocess.run([CLUSTER, "up", "--rails", "2"], env=env, check=True)
    try:
        on_cluster = [CLUSTER, "run", "--gpus-per-node", "2", "--"]
        calibrated = subprocess.run(on_cluster + [bench, "calibrate", scenario, "--out", profile], env=env,
                                    capture_output=True, text=True, timeout=600)
        print(calibrated.stdout)
        if calibrated.returncode != 0:
            sys.exit(f"calibrate on the cluster: exit {calibrated.returncode}\n{calibrated.stderr[-3000:]}")
        fit = json.load(open(os.path.join(work, "profile.fit.json")))
        if fit["ranks"] != 4:
            failures.append(f"calibrate ran on {fit['ranks']} ranks, expected 4")
        for link in ("nvlink", "nic"):
            f = fit["fits"][link]
            if f is None or not f["bandwidth_bytes_per_second"] > 0 or len(f["points"]) != 3:
                failures.append(f"{link}: not fitted from three message sizes: {f}")
        run_env = dict(env, ZB_REF_DIMS="model")
        measured = subprocess.run(on_cluster + [bench, "run", scenario, "--profile", profile, "--quiet", "--out",
                                                os.path.join(work, "run")], env=run_env, capture_output=True, text=True,
                                  timeout=600)
        if measured.returncode != 0:
            failures.append(f"run on the cluster: exit {measured.returncode}\n{measured.stderr[-3000:]}")
        else:
            report = json.load(open(os.path.join(work, "run", "report.json")))
            for system in report["systems"]:
                sim = system["simulation"]
                ratio = sim["ratio"]
                print(f"{system['label']}: simulated/measured {ratio['mean']:.3f} (min {ratio['min']:.3f}, max {ratio['max']:.3f}; "
                      f"simulated {sim['simulated_layers_seconds']:.4f} s, measured {sim['measured_layers_seconds']:.4f} s)")
                if ratio["count"] != report["run"]["iterations"] or not ratio["mean"] > 0:
                    failures.append(f"{system['label']}: no simulation ratio per iteration: {sim}")
    finally:
        subprocess.run([CLUSTER, "down"], env=env)
    if failures:
        sys.exit("\n".join(failures))
    print("calibrate on the emulated cluster fits both link classes; the run reports simulated/measured")


if __name__ == "__main__":
    main()
