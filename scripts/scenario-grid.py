#!/usr/bin/env python3
"""Run a grid of scenarios and tabulate Zeppelin against the baselines.

For every scenario file it runs

    zeppelin-bench run FILE --out OUT/<name> --quiet --format json

reads OUT/<name>/report.json and prints, per scenario: each system's feasibility, mean iteration time
and prediction ratio (simulated / planner estimate); Zeppelin's mean iteration time; the best baseline
(the lowest mean among the baselines that fitted in every iteration); Zeppelin's speed-up over it and
over ring-cp (the default one, over all GPUs). Then summary statistics over the grid.

Default scenarios: scenarios/grid/*.json plus the library scenarios/*.json except reference-check.json
(the CPU reference backend, not a timing scenario). docs/SCENARIOS.md, "Scenario grid", describes both.

Exit codes: 0 ok; 1 when Zeppelin is more than --tolerance (default 2 %) slower than the best baseline
in some scenario, or runs out of memory where a baseline fits (a CI gate); 2 on bad input: a missing
binary, a missing scenario, a run that wrote no readable report (the message names the file).

Python 3.8+, standard library only.
"""

import argparse
import concurrent.futures
import fnmatch
import json
import math
import os
import re
import statistics
import subprocess
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_BIN = os.path.join("build", "cli", "zeppelin-bench")  # the Makefile's BUILD_DIR ?= build
DEFAULT_DIRS = [os.path.join("scenarios", "grid"), "scenarios"]
EXCLUDED = {"reference-check.json"}
RATIO_LO, RATIO_HI = 0.9, 1.1


class BadInput(Exception):
    """A problem that makes the run meaningless: exit code 2."""


# ---------------------------------------------------------------------------------------------- inputs

def repo_path(path):
    """Defaults are relative to the repository root; paths the user gives, to the current directory."""
    return path if os.path.isabs(path) else os.path.join(REPO, path)


def collect_scenarios(paths, only):
    """(name, file) for every scenario: files as given, folders' *.json (the default folders skip
    reference-check.json). The name is the file's stem, which is also its output folder."""
    files = []
    if paths:
        for p in paths:
            if os.path.isdir(p):
                files += sorted(os.path.join(p, f) for f in os.listdir(p) if f.endswith(".json"))
            elif os.path.isfile(p):
                files.append(p)
            else:
                raise BadInput(f"{p}: no such scenario file or folder")
    else:
        for d in DEFAULT_DIRS:
            d = repo_path(d)
            if not os.path.isdir(d):
                raise BadInput(f"{d}: default scenario folder missing (give scenario files or folders)")
            files += sorted(os.path.join(d, f) for f in os.listdir(d)
                            if f.endswith(".json") and f not in EXCLUDED)
    scenarios, seen = [], {}
    for f in files:
        name = os.path.splitext(os.path.basename(f))[0]
        if only and not any(matches(name, pat) for pat in only):
            continue
        if name in seen:
            raise BadInput(f"{f}: same name as {seen[name]}; both would write to the same output folder")
        seen[name] = f
        scenarios.append((name, f))
    if not scenarios:
        raise BadInput("no scenario to run" + (f" matches --only {' '.join(only)}" if only else ""))
    return scenarios


def matches(name, pattern):
    """A glob when the pattern has *, ? or [, a substring otherwise."""
    if any(c in pattern for c in "*?["):
        return fnmatch.fnmatchcase(name, pattern)
    return pattern in name


# ------------------------------------------------------------------------------------------------- run

def run_one(binary, name, path, out_root, iterations, timeout):
    """Run one scenario; returns (report dict, seconds) or raises BadInput with the tool's message."""
    out_dir = os.path.join(out_root, name)
    report_path = os.path.join(out_dir, "report.json")
    if os.path.exists(report_path):
        os.remove(report_path)  # never read a previous run's report
    cmd = [binary, "run", path, "--out", out_dir, "--quiet", "--format", "json"]
    if iterations:
        cmd += ["--iterations", str(iterations)]
    start = time.monotonic()
    try:
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              timeout=timeout or None)
    except subprocess.TimeoutExpired:
        raise BadInput(f"{path}: zeppelin-bench run did not finish in {timeout} s")
    except OSError as e:
        raise BadInput(f"{binary}: cannot run it: {e}")
    seconds = time.monotonic() - start
    # 0 ok, 1 a scenario gate failed (the report is still written); 2 bad input, 3 runtime failure.
    if proc.returncode not in (0, 1):
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-5:]
        raise BadInput(f"{path}: zeppelin-bench run exited {proc.returncode}: " + " | ".join(tail))
    return read_report(report_path), seconds


def read_report(report_path):
    try:
        with open(report_path, encoding="utf-8") as f:
            report = json.load(f)
    except (OSError, ValueError) as e:
        raise BadInput(f"{report_path}: unreadable report: {e}")
    if not isinstance(report, dict) or not isinstance(report.get("systems"), list):
        raise BadInput(f"{report_path}: not a zeppelin-bench report (no systems[])")
    return report


# ------------------------------------------------------------------------------------------ evaluation

def number(x):
    return x if isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) else None


def agg_mean(system, key):
    agg = (system.get("aggregates") or {}).get(key) or {}
    return number(agg.get("mean"))


def world_size(report):
    m = re.search(r"\((\d+) GPUs?\)", str((report.get("scenario") or {}).get("cluster", "")))
    return int(m.group(1)) if m else None


def workload_of(report):
    """The effective workload: run.effective_scenario (schema 2) or context.scenario (schema 1)."""
    scenario = ((report.get("run") or {}).get("effective_scenario")
                or (report.get("context") or {}).get("scenario") or {})
    workload = scenario.get("workload") if isinstance(scenario, dict) else None
    if not isinstance(workload, dict):
        return {}
    return {k: workload[k] for k in ("dataset", "max_seq_len", "tokens_per_iteration", "iterations")
            if k in workload}


def summarise(name, path, report, tolerance):
    """One scenario's row: every system, Zeppelin, the best baseline, the speed-ups and the flags."""
    world = world_size(report)
    systems = []
    for s in report["systems"]:
        iters = s.get("iterations") or 0
        fit = s.get("feasible_iterations") or 0
        strategy = s.get("strategy") or ""
        systems.append({
            "label": s.get("label", "?"),
            "strategy": strategy,
            "baseline": bool(s.get("baseline", strategy != "zeppelin")),
            "options": s.get("options") or {},
            "iterations": iters,
            "feasible_iterations": fit,
            "feasible": iters > 0 and fit == iters,
            "mean_seconds": agg_mean(s, "iteration_seconds"),
            "prediction_ratio": agg_mean(s, "prediction_ratio"),
        })

    zep = next((s for s in systems if s["label"] == "zeppelin"), None) or \
        next((s for s in systems if s["strategy"] == "zeppelin"), None)
    baselines = [s for s in systems if s["baseline"]]
    ring = next((s for s in baselines if s["label"] == "ring-cp"), None) or \
        next((s for s in baselines if s["strategy"] == "ring-cp"
              and s["options"].get("degree", "auto") in ("auto", world)), None)
    fitting = [s for s in baselines if s["feasible"] and s["mean_seconds"] is not None]
    best = min(fitting, key=lambda s: s["mean_seconds"]) if fitting else None

    zep_ok = zep is not None and zep["feasible"] and zep["mean_seconds"]
    def speedup(b):
        if zep_ok and b is not None and b["feasible"] and b["mean_seconds"] is not None:
            return b["mean_seconds"] / zep["mean_seconds"]
        return None

    row = {
        "name": name, "file": os.path.relpath(path), "scenario": report.get("scenario") or {},
        "workload": workload_of(report),
        "gates_passed": (report.get("verdict") or {}).get("gates_passed"),
        "systems": systems,
        "zeppelin": zep and {"label": zep["label"], "feasible": zep["feasible"], "mean_seconds": zep["mean_seconds"]},
        "best_baseline": best and {"label": best["label"], "mean_seconds": best["mean_seconds"]},
        "ring_cp": ring and {"label": ring["label"], "feasible": ring["feasible"], "mean_seconds": ring["mean_seconds"]},
        "speedup_vs_best": speedup(best),
        "speedup_vs_ring_cp": speedup(ring),
        "flags": [],
    }
    if row["speedup_vs_best"] is not None and row["speedup_vs_best"] < 1.0 / (1.0 + tolerance):
        row["flags"].append("slower")
    if zep is not None and not zep["feasible"] and fitting:
        row["flags"].append("zeppelin-oom")
    if zep is None:
        row["flags"].append("no-zeppelin")
    row["ratio_outliers"] = [s["label"] for s in systems if s["prediction_ratio"] is not None
                             and not RATIO_LO <= s["prediction_ratio"] <= RATIO_HI]
    return row


def stats(values):
    if not values:
        return None
    return {"count": len(values), "mean": statistics.fmean(values), "median": statistics.median(values),
            "min": min(values), "max": max(values)}


# ---------------------------------------------------------------------------------------------- output

def fmt_s(x):
    return "-" if x is None else f"{x:.3f}"


def fmt_x(x):
    return "-" if x is None else f"{x:.2f}x"


def feasibility(s):
    if s["feasible"]:
        return "ok"
    if s["iterations"] == 0:
        return "not run"
    return f"OOM {s['iterations'] - s['feasible_iterations']}/{s['iterations']}"


def print_scenario(row, out):
    w = row["workload"]
    sc = row["scenario"]
    head = f"{sc.get('cluster', '?')}, {sc.get('model', '?')}"
    if w:
        head += (f", {w.get('dataset', '?')}, max_seq_len {w.get('max_seq_len', '?')}, "
                 f"{w.get('tokens_per_iteration', '?')} tokens x {w.get('iterations', '?')} it")
    print(f"== {row['name']}  ({head})", file=out)
    width = max([len(s["label"]) for s in row["systems"]] + [6])
    print(f"  {'system':<{width}}  {'fits':<8}  {'mean s':>9}  {'zep speed-up':>12}  {'pred ratio':>10}", file=out)
    zep_mean = row["zeppelin"]["mean_seconds"] if row["zeppelin"] and row["zeppelin"]["feasible"] else None
    for s in row["systems"]:
        sp = (s["mean_seconds"] / zep_mean if s["baseline"] and s["feasible"] and zep_mean
              and s["mean_seconds"] is not None else None)
        ratio = "-" if s["prediction_ratio"] is None else f"{s['prediction_ratio']:.3f}"
        if s["label"] in row["ratio_outliers"]:
            ratio += " !"
        print(f"  {s['label']:<{width}}  {feasibility(s):<8}  {fmt_s(s['mean_seconds']):>9}  "
              f"{fmt_x(sp):>12}  {ratio:>10}", file=out)
    z = row["zeppelin"]
    b = row["best_baseline"]
    line = f"  zeppelin {fmt_s(z['mean_seconds']) + ' s' if z and z['feasible'] else 'OOM' if z else 'absent'}"
    line += f" | best baseline {b['label']} {fmt_s(b['mean_seconds'])} s" if b else " | no baseline fits"
    line += f" | vs best {fmt_x(row['speedup_vs_best'])} | vs ring-cp {fmt_x(row['speedup_vs_ring_cp'])}"
    if row["flags"]:
        line += "  [" + ", ".join(row["flags"]) + "]"
    if row["gates_passed"] is False:
        line += "  (a scenario gate failed)"
    print(line, file=out)
    print(file=out)


def print_summary(rows, summary, tolerance, out):
    print("== grid summary", file=out)
    width = max(len(r["name"]) for r in rows)
    print(f"  {'scenario':<{width}}  {'zeppelin s':>10}  {'best baseline':<22}  {'best s':>9}  "
          f"{'vs best':>8}  {'vs ring-cp':>10}  flags", file=out)
    for r in rows:
        z, b = r["zeppelin"], r["best_baseline"]
        zs = fmt_s(z["mean_seconds"]) if z and z["feasible"] else ("OOM" if z else "absent")
        print(f"  {r['name']:<{width}}  {zs:>10}  {(b['label'] if b else '(none fits)'):<22}  "
              f"{fmt_s(b['mean_seconds'] if b else None):>9}  {fmt_x(r['speedup_vs_best']):>8}  "
              f"{fmt_x(r['speedup_vs_ring_cp']):>10}  {','.join(r['flags'])}", file=out)
    print(file=out)
    for key, title in (("speedup_vs_best", "zeppelin speed-up over the best baseline"),
                       ("speedup_vs_ring_cp", "zeppelin speed-up over ring-cp (all GPUs)")):
        st = summary[key]
        if st:
            print(f"  {title}: mean {st['mean']:.3f}x  median {st['median']:.3f}x  min {st['min']:.3f}x  "
                  f"max {st['max']:.3f}x  (over {st['count']} scenarios)", file=out)
        else:
            print(f"  {title}: no scenario where both fit", file=out)
    print(f"  scenarios: {summary['scenarios']}; zeppelin more than {tolerance * 100:g}% slower than the best "
          f"baseline: {summary['slower']}"
          + (f" ({', '.join(summary['slower_names'])})" if summary["slower_names"] else ""), file=out)
    print(f"  zeppelin out of memory where a baseline fits: {summary['zeppelin_oom']}"
          + (f" ({', '.join(summary['zeppelin_oom_names'])})" if summary["zeppelin_oom_names"] else ""), file=out)
    print(f"  no system fits: {summary['nothing_fits']}"
          + (f" ({', '.join(summary['nothing_fits_names'])})" if summary["nothing_fits_names"] else ""), file=out)
    print(f"  systems with prediction ratio outside [{RATIO_LO}, {RATIO_HI}]: {summary['ratio_outliers']} of "
          f"{summary['ratio_systems']} with a ratio", file=out)


def build_summary(rows):
    vs_best = [r["speedup_vs_best"] for r in rows if r["speedup_vs_best"] is not None]
    vs_ring = [r["speedup_vs_ring_cp"] for r in rows if r["speedup_vs_ring_cp"] is not None]
    slower = [r["name"] for r in rows if "slower" in r["flags"]]
    zoom = [r["name"] for r in rows if "zeppelin-oom" in r["flags"]]
    none_fit = [r["name"] for r in rows if not any(s["feasible"] for s in r["systems"])]
    with_ratio = sum(1 for r in rows for s in r["systems"] if s["prediction_ratio"] is not None)
    return {
        "scenarios": len(rows),
        "speedup_vs_best": stats(vs_best),
        "speedup_vs_ring_cp": stats(vs_ring),
        "slower": len(slower), "slower_names": slower,
        "zeppelin_oom": len(zoom), "zeppelin_oom_names": zoom,
        "nothing_fits": len(none_fit), "nothing_fits_names": none_fit,
        "ratio_outliers": sum(len(r["ratio_outliers"]) for r in rows),
        "ratio_systems": with_ratio,
    }


# ------------------------------------------------------------------------------------------------ main

def main(argv=None):
    ap = argparse.ArgumentParser(
        description="Run scenarios with zeppelin-bench and tabulate Zeppelin against the best baseline.",
        epilog="Exit codes: 0 ok; 1 zeppelin slower than the best baseline beyond the tolerance, or out of "
               "memory where a baseline fits; 2 bad input (missing binary or scenario, unreadable report).")
    ap.add_argument("paths", nargs="*",
                    help="scenario files or folders (default: scenarios/grid and scenarios/*.json except "
                         "reference-check.json)")
    ap.add_argument("--bin", default=None, help=f"zeppelin-bench binary (default: {DEFAULT_BIN})")
    ap.add_argument("--out", default=None, help="output root; each scenario writes OUT/<name> (default: out/grid)")
    ap.add_argument("--jobs", type=int, default=1, help="scenarios run in parallel (default 1)")
    ap.add_argument("--only", action="append", default=[], metavar="PATTERN",
                    help="run only scenarios whose name matches (glob with * ? [ ], else substring); repeatable")
    ap.add_argument("--json", metavar="FILE", help="also write the tables and summary as JSON to FILE")
    ap.add_argument("--iterations", type=int, default=None, help="override every scenario's iteration count")
    ap.add_argument("--tolerance", type=float, default=0.02,
                    help="how much slower than the best baseline zeppelin may be before the exit code is 1 "
                         "(default 0.02 = 2%%)")
    ap.add_argument("--timeout", type=float, default=900, help="seconds per scenario run, 0 = none (default 900)")
    ap.add_argument("--no-run", action="store_true",
                    help="do not run anything: read OUT/<name>/report.json from a previous run")
    args = ap.parse_args(argv)

    try:
        if args.jobs < 1:
            raise BadInput("--jobs must be at least 1")
        if args.iterations is not None and args.iterations < 1:
            raise BadInput("--iterations must be at least 1")
        scenarios = collect_scenarios(args.paths, args.only)
        out_root = args.out if args.out is not None else repo_path(os.path.join("out", "grid"))
        binary = args.bin if args.bin is not None else repo_path(DEFAULT_BIN)
        if not args.no_run and not (os.path.isfile(binary) and os.access(binary, os.X_OK)):
            raise BadInput(f"{binary}: zeppelin-bench binary not found or not executable "
                           "(build it with `make build`, or pass --bin)")
    except BadInput as e:
        print(f"scenario-grid: error: {e}", file=sys.stderr)
        return 2

    results, errors = {}, []
    started = time.monotonic()

    def task(item):
        name, path = item
        if args.no_run:
            return read_report(os.path.join(out_root, name, "report.json")), 0.0
        return run_one(binary, name, path, out_root, args.iterations, args.timeout)

    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        futures = {pool.submit(task, item): item for item in scenarios}
        done = 0
        for fut in concurrent.futures.as_completed(futures):
            name, path = futures[fut]
            done += 1
            try:
                report, seconds = fut.result()
                results[name] = summarise(name, path, report, args.tolerance)
                results[name]["run_seconds"] = seconds
                note = f"{seconds:.1f} s" if not args.no_run else "read"
            except BadInput as e:
                errors.append(str(e))
                note = "ERROR"
            print(f"[{done}/{len(scenarios)}] {name}: {note}", file=sys.stderr, flush=True)

    rows = [results[name] for name, _ in scenarios if name in results]
    out = sys.stdout
    for row in rows:
        print_scenario(row, out)
    summary = build_summary(rows) if rows else None
    if rows:
        print_summary(rows, summary, args.tolerance, out)
    if not args.no_run:
        print(f"  wall time: {time.monotonic() - started:.1f} s", file=out)
    for e in errors:
        print(f"scenario-grid: error: {e}", file=sys.stderr)

    code = 2 if errors else (1 if summary and (summary["slower"] or summary["zeppelin_oom"]) else 0)
    if args.json:
        doc = {"tolerance": args.tolerance, "prediction_ratio_band": [RATIO_LO, RATIO_HI],
               "scenarios": rows, "summary": summary, "errors": errors, "exit_code": code}
        try:
            with open(args.json, "w", encoding="utf-8") as f:
                json.dump(doc, f, indent=2)
                f.write("\n")
        except OSError as e:
            print(f"scenario-grid: error: {args.json}: cannot write: {e}", file=sys.stderr)
            return 2
    if code == 1:
        print("scenario-grid: FAIL: zeppelin is slower than the best baseline, or out of memory where a "
              "baseline fits, in some scenario (exit 1)", file=sys.stderr)
    return code


if __name__ == "__main__":
    sys.exit(main())
