#!/usr/bin/env python3
"""Zeppelin against every baseline the tool has, as an expert would check it (issue 31).

For every scenario file it writes a copy whose "systems" are Zeppelin (its own planner, and each variant
given with --variant) plus every baseline of `zeppelin-bench list systems` at its defaults, ring-cp also
at CP = one node, and USP (ulysses with "ring": "auto"); runs it on the simulator with --iterations N;
and reads the report. Per scenario it prints each Zeppelin variant's speed-up over the best baseline and
over the best ring-based baseline, with the layouts and partition classes its iterations used. Then the
aggregates: mean, median, min and max of each variant against the best baseline and against the best
ring-based baseline, the scenarios below --floor, and the share of iterations whose plan used each class
of the partition (local, intra-node, inter-node rings).

    scripts/versus-every-baseline.py scenarios/paper/headline scenarios/grid --iterations 10 --jobs 2 \\
        --variant '{"name": "zeppelin", "best_of": true}' --json out/versus.json

Exit codes: 0 every variant at least --floor (default 0.99) times the best ring-based baseline
everywhere; 1 otherwise; 2 on bad input (a missing binary or scenario, a run that wrote no report).
Python 3.8+, standard library only.
"""

import argparse
import concurrent.futures
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# The ring-based baselines: their attention is a ring (or an all-gather) over a CP group, or whole documents
# on one GPU; USP splits heads, and so does hydraulis by default (its TP replicas: issue 32), so it counts
# only as a baseline, not a ring-based one.
RING_BASED = ("ring-cp", "llama3-cp", "uniform-cp", "hybrid-dp", "dynamic-cp", "packing-dp")


class BadInput(Exception):
    pass


def strip_jsonc(text):
    """The scenario files are JSON with // and /* */ comments and trailing commas."""
    out, i, n, in_str = [], 0, len(text), False
    while i < n:
        c = text[i]
        if in_str:
            out.append(c)
            if c == "\\" and i + 1 < n:
                out.append(text[i + 1])
                i += 1
            elif c == '"':
                in_str = False
        elif c == '"':
            in_str = True
            out.append(c)
        elif text.startswith("//", i):
            while i < n and text[i] != "\n":
                i += 1
            continue
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            i = n if end < 0 else end + 2
            continue
        else:
            out.append(c)
        i += 1
    s = "".join(out)
    return re.sub(r",(\s*[}\]])", r"\1", s)


def baselines(binary):
    proc = subprocess.run([binary, "list", "systems"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if proc.returncode != 0:
        raise BadInput(f"{binary} list systems exited {proc.returncode}: {proc.stderr.strip()}")
    names = []
    for line in proc.stdout.splitlines():
        word = line.strip().split(" ")[0] if line.strip() else ""
        if word in RING_BASED + ("ulysses", "hydraulis") and word not in names:
            names.append(word)
    if not names:
        raise BadInput(f"{binary} list systems named no baseline")
    return names


def systems_for(names, variants):
    """Zeppelin, the variants, every baseline at its defaults (ring-cp over every GPU, uniform-cp at its
    best degree) and USP (ulysses with the ring auto)."""
    out = ["zeppelin"] + variants
    for n in names:
        out.append(n)
        if n == "ulysses":
            out.append({"name": "ulysses", "ring": "auto"})
    return out


def run_one(binary, path, out_root, names, variants, iterations):
    with open(path, encoding="utf-8") as f:
        scenario = json.loads(strip_jsonc(f.read()))
    name = scenario["name"]
    scenario["systems"] = systems_for(names, variants)
    scenario.pop("gates", None)
    out_dir = os.path.join(out_root, name)
    scenario["output"] = {"dir": out_dir, "formats": ["json"]}
    os.makedirs(out_root, exist_ok=True)
    with tempfile.NamedTemporaryFile("w", suffix=".json", dir=out_root, delete=False) as tmp:
        json.dump(scenario, tmp)
    cmd = [binary, "run", tmp.name, "--out", out_dir, "--quiet", "--iterations", str(iterations)]
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    os.unlink(tmp.name)
    if proc.returncode not in (0, 1):
        raise BadInput(f"{path}: run exited {proc.returncode}: {(proc.stderr or proc.stdout).strip()[-400:]}")
    with open(os.path.join(out_dir, "report.json"), encoding="utf-8") as f:
        return name, json.load(f)


def mean_time(system):
    samples = system["samples"]["iteration_seconds"] or []
    if system["feasible_iterations"] < system["iterations"] or not samples:
        return None
    return statistics.fmean(samples)


def classes_of(system):
    """Per iteration: the classes of the partition the plan used, and its layout."""
    used, layouts = [], []
    for it in system.get("per_iteration", []):
        ro = it.get("resolved_options") or {}
        layouts.append(ro.get("layout", "?"))
        used.append({c for c in ("local", "intra_node", "inter_node", "head_parallel")
                     if (ro.get("documents_" + c) or 0) > 0})
    return used, layouts


def row_of(name, report, variant_labels):
    systems = report["systems"]
    base = [s for s in systems if s["baseline"]]
    times = {s["label"]: mean_time(s) for s in systems}
    feasible_base = [(times[s["label"]], s["label"], s["strategy"]) for s in base if times[s["label"]] is not None]
    best = min(feasible_base) if feasible_base else None
    ring = [b for b in feasible_base if b[2] in RING_BASED]
    best_ring = min(ring) if ring else None
    row = {"scenario": name, "best": best and best[1], "best_ring": best_ring and best_ring[1], "variants": {}}
    for label in variant_labels:
        s = next((x for x in systems if x["label"] == label), None)
        if s is None:
            continue
        t = times[label]
        used, layouts = classes_of(s)
        row["variants"][label] = {
            "seconds": t,
            "vs_best": best[0] / t if (t and best) else None,
            "vs_best_ring": best_ring[0] / t if (t and best_ring) else None,
            "oom_where_baseline_fits": t is None and best is not None,
            "layouts": layouts,
            "classes": [sorted(c) for c in used],
        }
    return row


def aggregate(values):
    v = [x for x in values if x is not None]
    if not v:
        return None
    return {"n": len(v), "mean": statistics.fmean(v), "median": statistics.median(v), "min": min(v), "max": max(v)}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("paths", nargs="+", help="scenario files or folders")
    ap.add_argument("--bin", default=os.path.join(REPO, "build", "cli", "zeppelin-bench"))
    ap.add_argument("--out", default=os.path.join(REPO, "out", "versus"))
    ap.add_argument("--iterations", type=int, default=10)
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--variant", action="append", default=[], help="another Zeppelin system entry (JSON)")
    ap.add_argument("--floor", type=float, default=0.99)
    ap.add_argument("--json", metavar="FILE")
    args = ap.parse_args()
    try:
        if not os.path.isfile(args.bin):
            raise BadInput(f"{args.bin}: no such binary (build first)")
        if args.iterations < 1:
            raise BadInput("--iterations must be at least 1")
        variants = [json.loads(v) for v in args.variant]
        files = []
        for p in args.paths:
            if os.path.isdir(p):
                files += sorted(os.path.join(p, f) for f in os.listdir(p) if f.endswith(".json"))
            elif os.path.isfile(p):
                files.append(p)
            else:
                raise BadInput(f"{p}: no such scenario file or folder")
        names = baselines(args.bin)
        rows, failed_runs = [], []
        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            futures = [pool.submit(run_one, args.bin, f, args.out, names, variants, args.iterations) for f in files]
            for fut in futures:
                try:
                    name, report = fut.result()
                except BadInput as e:  # one scenario's failure is reported, the others still count
                    print(f"versus-every-baseline: {e}", file=sys.stderr)
                    failed_runs.append(str(e))
                    continue
                labels = [s["label"] for s in report["systems"] if not s["baseline"]]
                rows.append(row_of(name, report, labels))
    except (BadInput, json.JSONDecodeError, OSError) as e:
        print(f"versus-every-baseline: {e}", file=sys.stderr)
        return 2
    labels = []
    for r in rows:
        for label in r["variants"]:
            if label not in labels:
                labels.append(label)
    failed = False
    summary = {}
    for label in labels:
        vs_best = [r["variants"][label]["vs_best"] for r in rows if label in r["variants"]]
        vs_ring = [r["variants"][label]["vs_best_ring"] for r in rows if label in r["variants"]]
        below = [r["scenario"] for r in rows if label in r["variants"]
                 and r["variants"][label]["vs_best_ring"] is not None
                 and r["variants"][label]["vs_best_ring"] < args.floor]
        # No speed-up: no ring-based baseline (or the variant) fitted in every iteration. An OOM of the
        # variant where a baseline fits is caught below; a batch that nothing fits compares nothing.
        uncompared = [r["scenario"] for r in rows if label in r["variants"]
                      and r["variants"][label]["vs_best_ring"] is None
                      and not r["variants"][label]["oom_where_baseline_fits"]]
        ooms = [r["scenario"] for r in rows if label in r["variants"] and r["variants"][label]["oom_where_baseline_fits"]]
        iterations = [c for r in rows if label in r["variants"] for c in r["variants"][label]["classes"]]
        share = {c: (sum(1 for used in iterations if c in used) / len(iterations) if iterations else None)
                 for c in ("local", "intra_node", "inter_node")}
        layouts = {}
        for r in rows:
            for lay in r["variants"].get(label, {}).get("layouts", []):
                layouts[lay] = layouts.get(lay, 0) + 1
        summary[label] = {"vs_best": aggregate(vs_best), "vs_best_ring": aggregate(vs_ring),
                          "below_floor_vs_ring": below, "uncompared": uncompared, "oom_where_baseline_fits": ooms,
                          "iterations_using_class": share, "layouts": layouts}
        failed = failed or bool(below) or bool(ooms)
    print(f"{'scenario':44} {'best baseline':26} " + " ".join(f"{l[:24]:>24}" for l in labels))
    for r in rows:
        cells = []
        for l in labels:
            v = r["variants"].get(l)
            text = "-" if not v or v["vs_best"] is None else "%.3fx" % v["vs_best"]
            cells.append(f"{text:>24}")
        print(f"{r['scenario'][:44]:44} {str(r['best'])[:26]:26} " + " ".join(cells))
    for l, s in summary.items():
        print(f"\n{l}:")
        for key in ("vs_best", "vs_best_ring"):
            a = s[key]
            if a:
                print(f"  {key:13} n={a['n']} mean {a['mean']:.3f} median {a['median']:.3f} "
                      f"min {a['min']:.3f} max {a['max']:.3f}")
        print(f"  below {args.floor} x best ring-based: {s['below_floor_vs_ring'] or 'none'}")
        print(f"  OOM where a baseline fits: {s['oom_where_baseline_fits'] or 'none'}")
        if s["uncompared"]:
            print(f"  no speed-up (no ring-based baseline fitted every iteration): {s['uncompared']}")
        print("  iterations using each class: " + ", ".join(
            f"{c} {v:.0%}" for c, v in s["iterations_using_class"].items() if v is not None))
        print(f"  layouts: {s['layouts']}")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump({"rows": rows, "summary": summary, "iterations": args.iterations}, f, indent=1)
    if failed_runs:
        return 2
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
