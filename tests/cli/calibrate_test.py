#!/usr/bin/env python3
"""`zeppelin-bench calibrate` and the simulation ratio (issue 16, items 2 and 3), in one process, as a
specification:

* --budget SECONDS prints the probe's estimate and cuts the shapes to it (a tiny budget: the smallest set,
  said to be over it); a budget of 0, or one on the cuda backend, is exit 2;
* calibrate writes a profile that `run --profile` accepts, and beside it the fit report: every measured
  point with its residual, each fit's constants; links are not measured without a launcher, and the
  profile's header and the report's notes say so;
* a reference run of the scenario's own model (ZB_REF_DIMS=model) under that profile reports, for every
  system, the simulator's layers time for the same Program over the measured one;
* with the reference's default small dims the report names what was computed instead and gives no ratio;
* --out naming a folder fails before any measuring (exit 3).

Usage: calibrate_test.py BENCH SCENARIO WORK_DIR
"""
import json
import os
import re
import shutil
import subprocess
import sys


def run(command, env=None):
    return subprocess.run(command, capture_output=True, text=True, timeout=900, env=dict(os.environ, **(env or {})))


def read_jsonc(path):
    return json.loads("\n".join(line for line in open(path) if not line.lstrip().startswith("//")))


def main():
    bench, scenario, work = sys.argv[1:4]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    failures = []
    profile = os.path.join(work, "profile.json")

    calibrated = run([bench, "calibrate", scenario, "--out", profile])
    print(calibrated.stdout, calibrated.stderr)
    if calibrated.returncode != 0:
        sys.exit(f"calibrate: exit {calibrated.returncode}\n{calibrated.stderr[-3000:]}")
    # Minutes of CPU kernels must not pass in silence: one line per shape, counted, on stderr.
    if "calibrate: shape 1 of " not in calibrated.stderr:
        failures.append("calibrate printed no progress line on stderr")
    values = read_jsonc(profile)
    header = "".join(line for line in open(profile) if line.startswith("//"))
    fit = json.load(open(os.path.join(work, "profile.fit.json")))
    if fit["schema"] != "zeppelin-bench/calibration/1":
        failures.append(f"fit report schema {fit['schema']}")
    for name in ("attention", "gemm"):
        f = fit["fits"][name]
        if not f["points"] or any(not isinstance(p["residual"], float) for p in f["points"]):
            failures.append(f"{name}: no points with residuals in the fit report")
        if not 0 < f["efficiency"] <= 1 or values[f"{name}_efficiency"] != min(f["efficiency"], 1.0):
            failures.append(f"{name}: efficiency {f['efficiency']} not written as the profile's {values[name + '_efficiency']}")
    if not values["backward_attention_factor"] > 0 or fit["fits"]["attention_backward"]["factor"] != values["backward_attention_factor"]:
        failures.append("the backward attention factor was not fitted into the profile")
    if fit["fits"]["nic"] is not None or fit["fits"]["nvlink"] is not None:
        failures.append("one process measured links?")
    if not any("not measured" in n for n in fit["notes"]) or "not measured" not in header:
        failures.append("the unmeasured links are not noted in the report and the profile's header")
    if "RMS residual" not in calibrated.stdout:
        failures.append("the console does not give the fits' residuals")

    measured = run([bench, "run", scenario, "--profile", profile, "--iterations", "1", "--quiet", "--out", os.path.join(work, "measured")],
                   {"ZB_REF_DIMS": "model", "ZB_REF_TRANSPORT": "threads"})
    if measured.returncode != 0:
        failures.append(f"run with the calibrated profile: exit {measured.returncode}\n{measured.stderr[-3000:]}")
    else:
        report = json.load(open(os.path.join(work, "measured", "report.json")))
        for system in report["systems"]:
            sim = system["simulation"]
            ratio = sim["ratio"]
            print(f"{system['label']}: simulated/measured {ratio['mean']} (simulated {sim['simulated_layers_seconds']}, "
                  f"measured {sim['measured_layers_seconds']})")
            if ratio["count"] != 1 or not ratio["mean"] > 0 or sim["stand_in"] is not None:
                failures.append(f"{system['label']}: no simulation ratio in a run of the model itself: {sim}")
            elif abs(sim["simulated_layers_seconds"] / sim["measured_layers_seconds"] - ratio["mean"]) > 1e-9 * ratio["mean"]:
                failures.append(f"{system['label']}: the ratio is not simulated / measured: {sim}")
        html = open(os.path.join(work, "measured", "report.html")).read()
        if "Simulator against this measurement" not in html:
            failures.append("the HTML report has no simulator-against-measurement section")

    small = run([bench, "run", scenario, "--iterations", "1", "--out", os.path.join(work, "small")], {"ZB_REF_TRANSPORT": "threads"})
    if small.returncode != 0:
        failures.append(f"run with the small dims: exit {small.returncode}\n{small.stderr[-3000:]}")
    else:
        report = json.load(open(os.path.join(work, "small", "report.json")))
        for system in report["systems"]:
            sim = system["simulation"]
            if sim["ratio"]["count"] != 0 or not sim["stand_in"] or "head" not in sim["stand_in"]:
                failures.append(f"{system['label']}: a stand-in run must name what it computed and give no ratio: {sim}")
        if not re.search(r"no simulated/measured ratio: the reference backend computed attention over 2 heads", small.stdout):
            failures.append("the console does not say why a small-dims run has no ratio:\n" + small.stdout[-2000:])

    folder = run([bench, "calibrate", scenario, "--out", work])
    if folder.returncode != 3 or "--out names a folder" not in folder.stderr:
        failures.append(f"--out a folder: exit {folder.returncode}: {folder.stderr[-500:]}")
    # --budget: a probe, the estimate said, the shapes cut to it (never below three of each kind), and a
    # profile written all the same; a budget of 0 or on the cuda backend is bad input.
    budgeted = run([bench, "calibrate", scenario, "--out", os.path.join(work, "budget.json"), "--budget", "0.001"])
    said = re.search(r"calibrate: --budget 0.001 s: about .* for (\d+) attention shapes, (\d+) GEMM shapes, (\d+) runs each",
                     budgeted.stderr)
    if budgeted.returncode != 0 or not said:
        failures.append(f"--budget: exit {budgeted.returncode}, no estimate line: {budgeted.stderr[-1500:]}")
    else:
        steps = re.findall(r"calibrate: shape \d+ of (\d+):", budgeted.stderr)
        expected = int(said.group(1)) + int(said.group(2))
        if not steps or int(steps[0]) != expected or said.group(1) != "3" or said.group(3) != "1":
            failures.append(f"--budget 0.001 s measured {steps[:1]} shapes, said {said.group(0)}")
        if "over the budget" not in budgeted.stderr:
            failures.append("--budget 0.001 s did not say the smallest set is over it")
    for flags in (["--budget", "0"], ["--budget", "5", "--backend", "cuda"]):
        refused = run([bench, "calibrate", scenario, "--out", os.path.join(work, "x.json")] + flags)
        if refused.returncode != 2:
            failures.append(f"calibrate {' '.join(flags)}: exit {refused.returncode}, expected 2")
    if failures:
        sys.exit("\n".join(failures))
    print("calibrate writes a profile run accepts; a run of the model itself reports simulated/measured")


if __name__ == "__main__":
    main()
