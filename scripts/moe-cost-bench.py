#!/usr/bin/env python3
"""What an MoE model costs the tool (issue 34): planning and simulating an MoE scenario against the same
scenario with the model made dense, in wall time and peak memory.

For each cluster size, tokens per GPU and system below, two fresh `zeppelin-bench run` processes (sim
backend, one iteration, that system alone): the MoE scenario (moe-8x550m, 8-way expert parallelism: the MoE
layer in every plan, the router run over every layer, the dispatch and combine simulated), and its dense
twin: the same layers, hidden size and heads with a dense SwiGLU FFN of the width a token passes through
(top_k x expert_ffn_hidden), the model every planner prices at balanced routing. Prints each process's CPU
seconds and peak resident memory, the ratios MoE / dense (the issue's bound: at most 1.5x in both), and
each plan's shape (packs, micro-batches, ringed documents) from the run's report: the MoE model's larger
activations (dispatch and combine buffers, k routed copies) leave fewer tokens per GPU (52K against 88K at
these shapes), so at 64K tokens per GPU ring CP over all GPUs runs two packs where the dense twin runs one
-- twice the ring steps, in the simulated system as in the tool. The default sizes show both: 32K tokens
per GPU, where every system's plan has the same shape in both twins, and 64K.

  scripts/moe-cost-bench.py --bin build/cli/zeppelin-bench [--nodes 2 16] [--tokens-per-gpu 32768 65536]
                            [--json out.json]

Timings, not checks: exit 0 either way; 2 on bad input, 3 when a run fails. Python 3.8+, standard library.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

SYSTEMS = ["zeppelin", "ring-cp", "hybrid-dp"]


def scenario(nodes, moe, tokens_per_gpu, systems):
    model = {"preset": "moe-8x550m"} if moe else {
        "layers": 16, "hidden": 1536, "heads": 12, "kv_heads": 12, "ffn_hidden": 2 * 4096, "vocab": 32000}
    s = {"name": "moe-cost-%s-%d-%d-%s" % ("moe" if moe else "dense", nodes, tokens_per_gpu,
                                            "-".join(systems)),
         "seed": 1, "cluster": {"preset": "a800-4nic", "nodes": nodes}, "model": model,
         "workload": {"dataset": "arxiv", "max_seq_len": 65536,
                      "tokens_per_iteration": 8 * nodes * tokens_per_gpu, "iterations": 1},
         "systems": systems, "output": {"formats": ["json"]}}
    if moe:
        s["parallelism"] = {"expert": 8}
    return s


def shape(binary, path, report):
    """What of the system's plan grows its work: its micro-batches (from `plan`, untimed), the packs run
    one after another (ring CP, Hybrid DP) and the documents a partition rings (Zeppelin), from the run's
    own report."""
    planned = subprocess.run([binary, "plan", path, "--format", "json"], stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, check=False)
    parts = []
    if planned.returncode == 0:
        parts.append("micro-batches %d" % json.loads(planned.stdout)["micro_batches"])
    options = report["systems"][0]["per_iteration"][0].get("resolved_options") or {}
    keys = ("packs", "documents_intra_node", "documents_inter_node")
    parts += ["%s %s" % (k, options[k]) for k in keys if k in options]
    return ", ".join(parts) or "-"


def measure(binary, spec, work):
    path = os.path.join(work, spec["name"] + ".json")
    with open(path, "w") as f:
        json.dump(spec, f)
    out = os.path.join(work, spec["name"])
    start = time.monotonic()
    proc = subprocess.Popen([binary, "run", path, "--out", out],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.monotonic() - start
    err = proc.stderr.read().decode(errors="replace")
    proc.stderr.close()
    if os.waitstatus_to_exitcode(status) != 0:
        print("moe-cost-bench: %s failed: %s" % (spec["name"], err.strip()[-400:]), file=sys.stderr)
        sys.exit(3)
    plan_shape = "-"
    if len(spec["systems"]) == 1:
        with open(os.path.join(out, "report.json")) as f:
            plan_shape = shape(binary, path, json.load(f))
    return {"wall_seconds": wall, "cpu_seconds": usage.ru_utime + usage.ru_stime,
            "peak_rss_bytes": usage.ru_maxrss * 1024, "shape": plan_shape}


def row(gpus, tokens, system, dense, moe, shapes):
    print("%5d %7d %-10s | %8.2f %8.2f %5.2fx | %8.0f %8.0f %5.2fx | %s" % (
        gpus, tokens, system, dense["cpu_seconds"], moe["cpu_seconds"],
        moe["cpu_seconds"] / dense["cpu_seconds"], dense["peak_rss_bytes"] / 1e6,
        moe["peak_rss_bytes"] / 1e6, moe["peak_rss_bytes"] / dense["peak_rss_bytes"], shapes))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", default="build/cli/zeppelin-bench")
    ap.add_argument("--nodes", type=int, nargs="+", default=[2, 16])
    ap.add_argument("--tokens-per-gpu", type=int, nargs="+", default=[32768, 65536])
    ap.add_argument("--json", help="also write the figures here")
    a = ap.parse_args()
    if not os.access(a.bin, os.X_OK):
        print("moe-cost-bench: no zeppelin-bench at %s (build first)" % a.bin, file=sys.stderr)
        sys.exit(2)
    if min(a.nodes) < 1 or min(a.tokens_per_gpu) < 1:
        print("moe-cost-bench: --nodes and --tokens-per-gpu must be positive", file=sys.stderr)
        sys.exit(2)
    rows = []
    print("%5s %7s %-10s | %8s %8s %6s | %8s %8s %6s | %s" % (
        "GPUs", "tok/GPU", "system", "dense s", "MoE s", "ratio", "dense MB", "MoE MB", "ratio",
        "plan shape dense -> MoE"))
    with tempfile.TemporaryDirectory() as work:
        for nodes in a.nodes:
            for tokens in a.tokens_per_gpu:
                case = {"nodes": nodes, "gpus": 8 * nodes, "tokens_per_gpu": tokens, "systems": {}}
                same_shapes = True
                for system in SYSTEMS:
                    dense = measure(a.bin, scenario(nodes, False, tokens, [system]), work)
                    moe = measure(a.bin, scenario(nodes, True, tokens, [system]), work)
                    same_shapes = same_shapes and dense["shape"] == moe["shape"]
                    case["systems"][system] = {"dense": dense, "moe": moe}
                    row(8 * nodes, tokens, system, dense, moe,
                        dense["shape"] if dense["shape"] == moe["shape"]
                        else "%s -> %s" % (dense["shape"], moe["shape"]))
                # The bound's figure: every system in one run, as a user runs the scenario.
                dense = measure(a.bin, scenario(nodes, False, tokens, SYSTEMS), work)
                moe = measure(a.bin, scenario(nodes, True, tokens, SYSTEMS), work)
                case.update({"all": {"dense": dense, "moe": moe}, "same_plan_shapes": same_shapes,
                             "cpu_ratio": moe["cpu_seconds"] / dense["cpu_seconds"],
                             "memory_ratio": moe["peak_rss_bytes"] / dense["peak_rss_bytes"]})
                rows.append(case)
                row(8 * nodes, tokens, "all", dense, moe,
                    "same shapes" if same_shapes else "the MoE model's memory changes a plan's shape")
    print("seconds: CPU seconds (user + system) of the run process (a row per system alone, then all "
          "of them in one run); MB: its peak resident memory; 1 iteration, sim backend. Bound: MoE at most "
          "1.5x the dense twin in both where the plans have the same shape; where the MoE model's larger "
          "activations leave fewer tokens per GPU, a system runs more packs or micro-batches, more work "
          "that the simulated system does too (docs/MOE.md, 'What MoE costs the tool').")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(rows, f, indent=2)


if __name__ == "__main__":
    main()
