#!/usr/bin/env python3
"""`zeppelin-bench report REPORT.json` (issue 37, item 5), as a specification:

* from a report.json alone (the HTML and traces deleted, as a CI artefact keeps it), `report` rebuilds
  report.html, one trace per system and, with --format gbench, gbench.json, in the report's own folder;
  the rebuilt report.json has the same figures (volatile fields aside) as the original;
* a report whose figures this build does not reproduce (one iteration time changed by 1 %) is refused
  with exit 2 naming the JSON path of that figure, and its folder is left as it was;
* a measured run (backend cuda) and a schema 1 report are refused with exit 2 before any work;
* --out DIR writes the rebuilt set elsewhere.

Usage: report_rebuild_test.py BENCH SCENARIO WORK_DIR
"""
import json
import os
import shutil
import subprocess
import sys

VOLATILE = ("provenance",)


def figures(report):
    """The sections `report` checks, planner times (measured wall-clock) and their shares left out."""
    out = {k: json.loads(json.dumps(v)) for k, v in report.items() if k not in VOLATILE + ("run", "schema_version")}
    for system in out.get("systems", []):
        for section in ("samples", "aggregates"):
            system.get(section, {}).pop("planner_seconds", None)
            system.get(section, {}).pop("planner_share", None)
        for it in system.get("per_iteration", []):
            it.pop("planner_seconds", None)
            it.pop("planner_share", None)
    return out


def bench(*args):
    return subprocess.run(list(args), capture_output=True, text=True, timeout=600)


def main():
    binary, scenario, work = sys.argv[1:4]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    failures = []
    folder = os.path.join(work, "run")
    made = bench(binary, "run", scenario, "--iterations", "2", "--system", "zeppelin|uniform-cp", "--out", folder, "-q")
    if made.returncode not in (0, 1):
        print(made.stdout, made.stderr)
        return 1
    original = json.load(open(os.path.join(folder, "report.json")))
    for name in os.listdir(folder):
        if name != "report.json":
            os.remove(os.path.join(folder, name))

    rebuilt = bench(binary, "report", os.path.join(folder, "report.json"), "--format", "gbench")
    if rebuilt.returncode != made.returncode:
        failures.append("report exited %d, the run %d: %s" % (rebuilt.returncode, made.returncode, rebuilt.stderr))
    names = sorted(os.listdir(folder))
    for expected in ("report.html", "gbench.json", "trace-zeppelin.json", "trace-uniform-cp.json"):
        if expected not in names:
            failures.append("report did not rebuild %s (the folder holds %s)" % (expected, names))
    if "the replay reproduced every figure" not in rebuilt.stdout:
        failures.append("report did not say it reproduced the figures:\n" + rebuilt.stdout)
    again = json.load(open(os.path.join(folder, "report.json")))
    if figures(again) != figures(original):
        failures.append("the rebuilt report.json's figures differ from the original's")

    # A figure this build does not reproduce: refused, naming it; the folder is untouched.
    tampered_folder = os.path.join(work, "tampered")
    os.makedirs(tampered_folder)
    tampered = json.loads(json.dumps(original))
    tampered["systems"][0]["per_iteration"][1]["metrics"]["iteration_seconds"] *= 1.01
    tampered_file = os.path.join(tampered_folder, "report.json")
    json.dump(tampered, open(tampered_file, "w"))
    refused = bench(binary, "report", tampered_file, "-q")
    if refused.returncode != 2 or "/systems/0/per_iteration/1/metrics/iteration_seconds" not in refused.stderr:
        failures.append("a tampered report: exit %d, %s" % (refused.returncode, refused.stderr))
    if os.listdir(tampered_folder) != ["report.json"]:
        failures.append("a refused report changed its folder: %s" % os.listdir(tampered_folder))

    for name, change in (("measured", lambda r: r["run"].update(simulated=False, backend="cuda")),
                         ("schema1", lambda r: r.update(schema_version=1))):
        report = json.loads(json.dumps(original))
        change(report)
        path = os.path.join(work, name + ".json")
        json.dump(report, open(path, "w"))
        answer = bench(binary, "report", path, "-q")
        if answer.returncode != 2 or "error:" not in answer.stderr:
            failures.append("%s report: exit %d, %s" % (name, answer.returncode, answer.stderr))

    elsewhere = os.path.join(work, "elsewhere")
    moved = bench(binary, "report", os.path.join(folder, "report.json"), "--out", elsewhere, "-q")
    if moved.returncode != made.returncode or not os.path.exists(os.path.join(elsewhere, "report.html")):
        failures.append("report --out: exit %d, %s" % (moved.returncode, moved.stderr))

    for failure in failures:
        print("FAIL:", failure)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
