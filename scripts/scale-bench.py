#!/usr/bin/env python3
"""Planning and simulating at cluster scale, in the terms the product's rules state them (issue 38).

Two parts, each on fresh `zeppelin-bench` processes (cold: no page of the heap touched before):

planner    `zeppelin-bench plan SCENARIO --format json` of zeppelin on llama-7b, Wikipedia lengths,
           dgx-h200 clusters, for every GPU count x tokens per GPU x context x seed asked. Per case:
           planner_seconds (the plan's own wall-clock figure), the process's CPU seconds (user + system
           of the whole `plan` process: start, reading the lengths, planning, writing the JSON; an upper
           bound of the planner's own CPU time that a loaded machine does not inflate), the plan's predicted
           iteration, the SHARE = planner_seconds / predicted iteration (the rule: at most 2 %), the
           share by CPU seconds, the process's peak resident memory, and what the rule allows: its budget
           (2 % of the predicted iteration) in ms and in ns per document of the batch (every candidate
           partitions every document, so a planner cannot spend more on one). A case whose tokens exceed
           --max-tokens is listed as not run (say so rather than wait hours).
library    the same share for every zeppelin-family system (every label with "zeppelin" in it) of every
           scenario file under --library (default: the scenario library), iteration 0: the rule holds for
           the library too. Prints the plans above the limit and the largest shares; a file that is not a
           scenario (or has no such system) is skipped.
simulator  `zeppelin-bench run SCENARIO --backend sim` of the same scenario with 1 iteration and the
           one system, per GPU count at --sim-tokens-per-gpu: wall and CPU seconds and peak memory of the
           whole process (planning, lowering, simulating, reports), with time and memory per GPU x
           document, so that growth beyond linear in GPUs x documents shows as a rising column.

Each case runs under --timeout seconds; one that runs past it is reported as timed out with what it
reached, not dropped. Timings, not checks: exit 0 either way; 2 on bad input (a missing binary, a
nonsensical list), 3 when a case fails for another reason than its timeout (the message names it).

  scripts/scale-bench.py --bin build/cli/zeppelin-bench                 # defaults below
  scripts/scale-bench.py --gpus 1024 8192 --tokens-per-gpu 8192 --seeds 1 2 3 --part planner
  scripts/scale-bench.py --part simulator --sim-gpus 128 1024 8192 16384 --json out.json
  scripts/scale-bench.py --part library --library scenarios/paper

Python 3.8+, standard library only.
"""

import argparse
import glob
import json
import os
import re
import subprocess
import sys
import tempfile
import time

SHARE_LIMIT = 0.02  # planner_seconds at most 2 % of the predicted iteration (product decision)


def fail(message, code=2):
    print("scale-bench: " + message, file=sys.stderr)
    sys.exit(code)


def scenario(gpus, tokens_per_gpu, context, seed):
    return {
        "name": "scale-%dgpus-%dtok-%dctx-seed%d" % (gpus, tokens_per_gpu, context, seed),
        "seed": seed,
        "cluster": {"preset": "dgx-h200", "nodes": gpus // 8},
        "model": {"preset": "llama-7b"},
        "workload": {
            "dataset": "wikipedia",
            "max_seq_len": context,
            "tokens_per_iteration": gpus * tokens_per_gpu,
            "iterations": 1,
        },
        "systems": ["zeppelin"],
        "backend": "sim",
        "passes": "fwd+bwd",
    }


def measure(command, timeout, stdout_path):
    """Runs `command` with stdout to a file; returns (exit status or None on timeout, wall s, CPU s,
    peak RSS bytes, stderr) from the child's own rusage (os.wait4), so other processes do not count.
    stderr goes to a file too: a pipe nobody reads while polling would stall a chatty child."""
    with open(stdout_path, "w") as out, tempfile.TemporaryFile() as err:
        started = time.monotonic()
        child = subprocess.Popen(command, stdout=out, stderr=err)
        deadline = started + timeout
        status = None
        while True:
            pid, raw, usage = os.wait4(child.pid, os.WNOHANG)
            if pid == child.pid:
                status = os.waitstatus_to_exitcode(raw) if hasattr(os, "waitstatus_to_exitcode") else raw >> 8
                break
            if time.monotonic() > deadline:
                child.kill()
                _, raw, usage = os.wait4(child.pid, 0)
                break
            time.sleep(0.05)
        wall = time.monotonic() - started
        err.seek(0)
        stderr = err.read().decode(errors="replace")
    return status, wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss * 1024, stderr


def planner_case(args, folder, gpus, tpg, context, seed):
    case = {"gpus": gpus, "tokens_per_gpu": tpg, "context": context, "seed": seed}
    if gpus * tpg > args.max_tokens:
        case["status"] = "not run: %d tokens above --max-tokens %d" % (gpus * tpg, args.max_tokens)
        return case
    path = os.path.join(folder, "planner.json")
    with open(path, "w") as f:
        json.dump(scenario(gpus, tpg, context, seed), f)
    plan_path = os.path.join(folder, "plan.json")
    status, wall, cpu, rss, stderr = measure([args.bin, "plan", path, "--format", "json"], args.timeout,
                                             plan_path)
    case.update({"process_wall_s": wall, "process_cpu_s": cpu, "peak_rss_bytes": rss})
    if status is None:
        case["status"] = "timed out after %.0f s" % args.timeout
        return case
    if status != 0:
        fail("`%s plan` of %s exited %d: %s" % (args.bin, case, status, stderr.strip()[:400]), 3)
    with open(plan_path) as f:
        plan = json.load(f)
    case["plan_bytes"] = os.path.getsize(plan_path)
    case["documents"] = len(plan.get("sequences") or [])
    add_share(case, plan)
    if case["status"] == "ok":
        case["cpu_share"] = cpu / case["predicted_iteration_s"]
        # What the rule allows: its share of the iteration, and that per document of the batch (every
        # candidate partitions every document, so this bounds what one may cost in all).
        case["budget_s"] = SHARE_LIMIT * case["predicted_iteration_s"]
        if case["documents"]:
            case["budget_ns_per_document"] = 1e9 * case["budget_s"] / case["documents"]
    return case


def add_share(case, plan):
    """The plan's planner_seconds over its predicted iteration, into `case` (status "ok"), or why not."""
    planner = plan.get("planner_seconds")
    predicted = (plan.get("predicted") or {}).get("iteration_seconds")
    if planner is None or not predicted:
        case["status"] = "no planner_seconds or predicted iteration (out of memory?)"
        return
    case.update({"status": "ok", "planner_s": planner, "predicted_iteration_s": predicted,
                 "share": planner / predicted, "within_limit": planner / predicted <= SHARE_LIMIT})


def simulator_case(args, folder, gpus):
    tpg = args.sim_tokens_per_gpu
    case = {"gpus": gpus, "tokens_per_gpu": tpg, "context": args.sim_context, "seed": 1}
    if gpus * tpg > args.max_tokens:
        case["status"] = "not run: %d tokens above --max-tokens %d" % (gpus * tpg, args.max_tokens)
        return case
    path = os.path.join(folder, "sim.json")
    with open(path, "w") as f:
        json.dump(scenario(gpus, tpg, args.sim_context, 1), f)
    out = os.path.join(folder, "sim-out")
    status, wall, cpu, rss, stderr = measure(
        [args.bin, "run", path, "--out", out, "-q"], args.timeout, os.path.join(folder, "sim.stdout"))
    case.update({"process_wall_s": wall, "process_cpu_s": cpu, "peak_rss_bytes": rss})
    if status is None:
        case["status"] = "timed out after %.0f s" % args.timeout
        return case
    if status not in (0, 1):  # 1: a gate failed, the run itself completed
        fail("`%s run` of %s exited %d: %s" % (args.bin, case, status, stderr.strip()[:400]), 3)
    with open(os.path.join(out, "report.json")) as f:
        report = json.load(f)
    documents = report["workload"]["batches"][0]["documents"]
    system = report["systems"][0]
    case.update({"status": "ok", "documents": documents,
                 "simulated_iteration_s": system["aggregates"]["iteration_seconds"]["mean"],
                 "cpu_us_per_gpu_document": cpu / (gpus * documents) * 1e6,
                 "rss_bytes_per_gpu_document": rss / (gpus * documents)})
    return case


def system_labels(args, path):
    """The scenario's system labels with "zeppelin" in them. `plan --system` with a label no system has
    lists the labels in its error (the one place the CLI prints them); none when the file is not a
    scenario."""
    r = subprocess.run([args.bin, "plan", path, "--system", "\x01"], capture_output=True, text=True)
    m = re.search(r"use one of the labels: (.*)\)\s*$", r.stderr.strip())
    if not m:
        return []
    labels, depth, current = [], 0, ""
    for ch in m.group(1):  # labels hold commas inside their brackets: split at depth 0 only
        if ch in "[(":
            depth += 1
        elif ch in "])":
            depth -= 1
        if ch == "," and depth == 0:
            labels.append(current.strip())
            current = ""
        else:
            current += ch
    labels.append(current.strip())
    return [label for label in labels if "zeppelin" in label]


def library_cases(args):
    files = sorted(glob.glob(os.path.join(args.library, "**", "*.json"), recursive=True))
    if not files:
        fail("no scenario files under %s" % args.library)
    cases = []
    for path in files:
        for label in system_labels(args, path):
            case = {"file": path, "system": label}
            try:
                r = subprocess.run([args.bin, "plan", path, "--system", label, "--format", "json", "--detail",
                                    "summary"], capture_output=True, text=True, timeout=args.timeout)
            except subprocess.TimeoutExpired:
                case["status"] = "timed out after %.0f s" % args.timeout
            else:
                if r.returncode != 0:
                    case["status"] = "plan exited %d: %s" % (r.returncode, r.stderr.strip()[:200])
                else:
                    add_share(case, json.loads(r.stdout))
            cases.append(case)
    return cases


def positive_list(values, name):
    if not values or any(v <= 0 for v in values):
        fail("%s must be positive numbers, got %s" % (name, values))
    return values


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--bin", default="build/cli/zeppelin-bench", help="the zeppelin-bench binary")
    p.add_argument("--part", choices=["planner", "library", "simulator", "both", "all"], default="both",
                   help="both: planner and simulator; all: the three")
    p.add_argument("--gpus", type=int, nargs="+", default=[128, 1024, 8192, 16384])
    p.add_argument("--tokens-per-gpu", type=int, nargs="+", default=[8192, 65536])
    p.add_argument("--contexts", type=int, nargs="+", default=[131072])
    p.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    p.add_argument("--sim-gpus", type=int, nargs="+", default=[128, 512, 1024, 2048, 4096, 8192, 16384])
    p.add_argument("--sim-tokens-per-gpu", type=int, default=8192)
    p.add_argument("--sim-context", type=int, default=131072)
    p.add_argument("--max-tokens", type=int, default=1 << 30, help="cases above this many tokens are not run")
    p.add_argument("--timeout", type=float, default=600, help="seconds per case (default 600)")
    p.add_argument("--json", help="also write every figure to this file")
    p.add_argument("--library", default="scenarios", help="the folder the library part plans (default: scenarios)")
    args = p.parse_args()
    if not os.access(args.bin, os.X_OK):
        fail("no executable at %s (build first: make build, or pass --bin)" % args.bin)
    for values, name in [(args.gpus, "--gpus"), (args.sim_gpus, "--sim-gpus"), (args.seeds, "--seeds"),
                         (args.tokens_per_gpu, "--tokens-per-gpu"), (args.contexts, "--contexts")]:
        positive_list(values, name)
    if any(g % 8 for g in args.gpus + args.sim_gpus):
        fail("GPU counts must be whole dgx-h200 nodes (multiples of 8), got %s" % (args.gpus + args.sim_gpus))
    if args.timeout <= 0 or args.sim_tokens_per_gpu <= 0:
        fail("--timeout and --sim-tokens-per-gpu must be positive")

    results = {"binary": args.bin, "share_limit": SHARE_LIMIT, "planner": [], "library": [], "simulator": []}
    with tempfile.TemporaryDirectory(prefix="zb-scale-bench-") as folder:
        if args.part in ("planner", "both", "all"):
            print("planner share of the predicted iteration (zeppelin, llama-7b, wikipedia, dgx-h200; cold "
                  "CLI; limit %.0f %%)" % (SHARE_LIMIT * 100))
            print("%6s %8s %7s %4s  %10s %9s %11s %8s %9s %8s %9s %10s %9s  %s" % (
                "GPUs", "tok/GPU", "context", "seed", "planner s", "CPU s", "iteration s", "share",
                "CPU share", "peak GB", "documents", "budget ms", "ns/doc", "status"))
            for gpus in args.gpus:
                for tpg in args.tokens_per_gpu:
                    for context in args.contexts:
                        for seed in args.seeds:
                            c = planner_case(args, folder, gpus, tpg, context, seed)
                            results["planner"].append(c)
                            if c["status"] == "ok":
                                print("%6d %8d %7d %4d  %10.3f %9.3f %11.3f %7.1f%% %8.1f%% %8.2f %9d %10.1f %9.0f  %s" % (
                                    gpus, tpg, context, seed, c["planner_s"], c["process_cpu_s"],
                                    c["predicted_iteration_s"], 100 * c["share"], 100 * c["cpu_share"],
                                    c["peak_rss_bytes"] / 2**30, c["documents"], 1e3 * c["budget_s"],
                                    c.get("budget_ns_per_document", 0),
                                    "within" if c["within_limit"] else "ABOVE the limit"))
                            else:
                                print("%6d %8d %7d %4d  %s" % (gpus, tpg, context, seed, c["status"]))
                            sys.stdout.flush()
        if args.part in ("library", "all"):
            cases = library_cases(args)
            results["library"] = cases
            planned = [c for c in cases if c["status"] == "ok"]
            above = [c for c in planned if not c["within_limit"]]
            print("planner share of the predicted iteration, the scenario library under %s (iteration 0, every "
                  "zeppelin-family system; limit %.0f %%): %d plans, %d above the limit" % (
                      args.library, SHARE_LIMIT * 100, len(planned), len(above)))
            for c in sorted(planned, key=lambda c: -c["share"])[:max(8, len(above))]:
                print("  %6.2f%%  %8.4f s / %9.4f s  %s  %s%s" % (
                    100 * c["share"], c["planner_s"], c["predicted_iteration_s"], c["file"], c["system"],
                    "" if c["within_limit"] else "  ABOVE the limit"))
            for c in cases:
                if c["status"] != "ok":
                    print("  %s  %s: %s" % (c["file"], c["system"], c["status"]))
            sys.stdout.flush()
        if args.part in ("simulator", "both", "all"):
            print("simulator, one fwd+bwd iteration (whole `run` process: plan, lower, simulate, reports)")
            print("%6s %8s %9s %10s %9s %8s %15s %15s  %s" % (
                "GPUs", "tok/GPU", "documents", "wall s", "CPU s", "peak GB", "CPU us/(GPU*doc)",
                "bytes/(GPU*doc)", "status"))
            for gpus in args.sim_gpus:
                c = simulator_case(args, folder, gpus)
                results["simulator"].append(c)
                if c["status"] == "ok":
                    print("%6d %8d %9d %10.2f %9.2f %8.2f %15.3f %15.1f  ok" % (
                        gpus, c["tokens_per_gpu"], c["documents"], c["process_wall_s"], c["process_cpu_s"],
                        c["peak_rss_bytes"] / 2**30, c["cpu_us_per_gpu_document"],
                        c["rss_bytes_per_gpu_document"]))
                else:
                    print("%6d %8d  %s" % (gpus, c["tokens_per_gpu"], c["status"]))
                sys.stdout.flush()
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=2)
            f.write("\n")


if __name__ == "__main__":
    main()
