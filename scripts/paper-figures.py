#!/usr/bin/env python3
"""Print, as Markdown, the figures docs/REPRODUCTION.md sets beside the Zeppelin paper's, from a run of
the paper library:

    zeppelin-bench run scenarios/paper/ --out out/paper
    python3 scripts/paper-figures.py out/paper

It reads out/paper/combined.json (the headline grid) and the scenarios' report.json files (the ablation
ladder, the scaling study's throughput, the timeline cases' ring steps). Every figure is the tool's own
(docs/METRICS.md); this script only selects and arranges them.

Python 3.8+, standard library only. Exit code 2 when a file is missing or is not a report.
"""

import json
import os
import statistics
import sys


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        sys.exit("paper-figures: cannot read %s: %s" % (path, e))


def mean_seconds(system):
    agg = system["aggregates"]["iteration_seconds"]
    return agg["mean"] if agg else None


def folder_rows(combined, folder):
    """The combined table's rows of scenarios/paper/<folder>/ that ran, each with its report.json."""
    for r in combined["rows"]:
        if "/%s/" % folder in r.get("file", "") and "error" not in r:
            yield r, load(os.path.join(r["report_dir"], "report.json"))


def gpus_of(row):
    """The GPU count a row's cluster names: "16 × a800-4nic (128 GPUs)" -> 128."""
    return int(row["cluster"].rsplit("(", 1)[1].split()[0])


def ratio_stats(values):
    values = [v for v in values if v is not None]
    if not values:
        return "none"
    return "mean %.2fx, median %.2fx, min %.2fx, max %.2fx (%d scenarios)" % (
        statistics.mean(values), statistics.median(values), min(values), max(values), len(values))


def headline(combined):
    rows = [r for r in combined["rows"] if "/headline/" in r.get("file", "") and "error" not in r]
    node_local = []  # ring-cp at degree 8/t: TE CP inside a node, DP across
    every_gpu, best, losses = [], [], []
    for r in rows:
        s = r["speedups"]
        every_gpu.append(s.get("ring-cp"))
        node_local.append(next((v for k, v in s.items() if k.startswith("ring-cp[degree=")), None))
        best.append(r["speedup_vs_best"])
        if r["speedup_vs_best"] is not None and r["speedup_vs_best"] < 0.995:
            losses.append(r["scenario"])
    oom = [r["scenario"] for r in rows if r["subject_mean_iteration_seconds"] is None]
    print("## Headline grid (%d scenarios)\n" % len(rows))
    print("| zeppelin against | speed-up |")
    print("|---|---|")
    print("| TE CP over every GPU (`ring-cp`) | %s |" % ratio_stats(every_gpu))
    print("| TE CP inside a node, DP across (`ring-cp[degree=8/t]`) | %s |" % ratio_stats(node_local))
    print("| the best baseline of each scenario | %s |" % ratio_stats(best))
    print("\nzeppelin out of memory in: %s; slower than the best baseline in: %s\n" % (
        ", ".join(oom) or "none", ", ".join(losses) or "none"))
    counts = {}
    for r in rows:
        if r["best_baseline"]:
            counts[r["best_baseline"]] = counts.get(r["best_baseline"], 0) + 1
    print("best baseline, by scenarios: %s\n" % ", ".join("%s %d" % kv for kv in sorted(counts.items(), key=lambda kv: -kv[1])))


def ablation(combined):
    print("## Ablation (speed-up over ring-cp over every GPU)\n")
    print("| scenario | routing only | + partitioning and engine | + remap |")
    print("|---|---|---|---|")
    for r, report in folder_rows(combined, "ablation"):
        times = [mean_seconds(s) for s in report["systems"]]
        base = times[0]
        cells = ["%.2fx" % (base / t) if t else "OOM" for t in times[1:]]
        print("| %s | %s |" % (r["scenario"], " | ".join(cells)))
    print()


def scaling(combined):
    print("## Scaling (llama-3b, cluster A, tokens per second per GPU)\n")
    by_dataset = {}
    for r, report in folder_rows(combined, "scaling"):
        gpus = gpus_of(r)
        dataset = report["run"]["effective_scenario"]["workload"]["dataset"]
        for s in report["systems"]:
            agg = s["aggregates"]["tokens_per_second"]
            # No mean when the system fitted in no iteration (out of memory at this scale).
            mean = agg.get("mean") if agg else None
            by_dataset.setdefault(dataset, {}).setdefault(s["label"], {})[gpus] = mean / gpus if mean is not None else None
    for dataset, systems in sorted(by_dataset.items()):
        counts = sorted({g for per in systems.values() for g in per})
        print("%s:\n" % dataset)
        print("| system | " + " | ".join("%d GPUs" % g for g in counts) + " |")
        print("|---|" + "---|" * len(counts))
        for label, per in systems.items():
            print("| %s | %s |" % (label, " | ".join("%.0f" % per[g] if per.get(g) else "OOM" for g in counts)))
        print()


def timeline(combined):
    print("## Timeline cases (forward ring steps, one layer)\n")
    print("| scenario | system | inter-node steps | mean inter-node step | intra-node steps | iteration |")
    print("|---|---|---|---|---|---|")
    for r, report in folder_rows(combined, "timeline"):
        for s in report["systems"]:
            steps = {(x["level"], x["pass"]): x for x in s["ring_steps"]}
            inter = steps.get(("inter-node", "fwd"))
            intra = steps.get(("intra-node", "fwd"))
            print("| %s | %s | %d | %s | %d | %.2f s |" % (
                r["scenario"], s["label"], inter["count"] if inter else 0,
                "%.0f us" % (inter["mean_seconds"] * 1e6) if inter else "-", intra["count"] if intra else 0,
                mean_seconds(s)))
    print()


def sensitivity(combined):
    """Each system's speed-up over ring-cp (all GPUs: one group, so its plan does not depend on costs) at
    0, 5 and 10 % planner error, per scenario of scenarios/paper/sensitivity/ (issue 32, item 5)."""
    print("## Planner-error sensitivity (speed-up over ring-cp; mean iteration time ratio)\n")
    cases = {}  # scenario stem -> {error: {label: seconds}}
    for r, report in folder_rows(combined, "sensitivity"):
        error = report["run"].get("planner_error", 0.0)
        stem = r["scenario"].rsplit("-error", 1)[0]
        cases.setdefault(stem, {})[error] = {s["label"]: mean_seconds(s) for s in report["systems"]}
    for stem, by_error in sorted(cases.items()):
        errors = sorted(by_error)
        labels = list(next(iter(by_error.values())).keys())
        print("%s:\n" % stem)
        print("| system | " + " | ".join("%g %%" % (100 * e) for e in errors) + " |")
        print("|---|" + "---|" * len(errors))
        for label in labels:
            cells = []
            for e in errors:
                t, ring = by_error[e].get(label), by_error[e].get("ring-cp")
                cells.append("%.3fx" % (ring / t) if t and ring else "OOM")
            print("| %s | %s |" % (label, " | ".join(cells)))
        print()


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join("out", "paper")
    combined = load(os.path.join(out, "combined.json"))
    headline(combined)
    ablation(combined)
    scaling(combined)
    timeline(combined)
    sensitivity(combined)


if __name__ == "__main__":
    main()
