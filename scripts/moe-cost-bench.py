#!/usr/bin/env python3
"""What an MoE model costs the tool (issue 34): planning and simulating an MoE scenario against the same
scenario with the model made dense, in wall time and peak memory.

For each cluster size, two fresh `zeppelin-bench run` processes (sim backend, one iteration, the systems
below): the MoE scenario (moe-8x550m, 8-way expert parallelism: the MoE layer in every plan, the router
run over every layer, the dispatch and combine simulated), and its dense twin: the same layers, hidden
size and heads with a dense SwiGLU FFN of the width a token passes through (top_k x expert_ffn_hidden),
the model every planner prices at balanced routing. Prints each process's wall seconds and peak resident
memory and the ratios MoE / dense (the issue's bound: at most 1.5x in both).

  scripts/moe-cost-bench.py --bin build/cli/zeppelin-bench [--nodes 2 16] [--json out.json]

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


def scenario(nodes, moe):
    model = {"preset": "moe-8x550m"} if moe else {
        "layers": 16, "hidden": 1536, "heads": 12, "kv_heads": 12, "ffn_hidden": 2 * 4096, "vocab": 32000}
    s = {"name": "moe-cost-%s-%d" % ("moe" if moe else "dense", nodes), "seed": 1,
         "cluster": {"preset": "a800-4nic", "nodes": nodes}, "model": model,
         "workload": {"dataset": "arxiv", "max_seq_len": 65536, "tokens_per_iteration": 8 * nodes * 65536,
                      "iterations": 1},
         "systems": SYSTEMS, "output": {"formats": ["json"]}}
    if moe:
        s["parallelism"] = {"expert": 8}
    return s


def measure(binary, spec, work):
    path = os.path.join(work, spec["name"] + ".json")
    with open(path, "w") as f:
        json.dump(spec, f)
    start = time.monotonic()
    proc = subprocess.Popen([binary, "run", path, "--out", os.path.join(work, spec["name"])],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.monotonic() - start
    err = proc.stderr.read().decode(errors="replace")
    proc.stderr.close()
    if os.waitstatus_to_exitcode(status) != 0:
        print("moe-cost-bench: %s failed: %s" % (spec["name"], err.strip()[-400:]), file=sys.stderr)
        sys.exit(3)
    return {"wall_seconds": wall, "cpu_seconds": usage.ru_utime + usage.ru_stime,
            "peak_rss_bytes": usage.ru_maxrss * 1024}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", default="build/cli/zeppelin-bench")
    ap.add_argument("--nodes", type=int, nargs="+", default=[2, 16])
    ap.add_argument("--json", help="also write the figures here")
    a = ap.parse_args()
    if not os.access(a.bin, os.X_OK):
        print("moe-cost-bench: no zeppelin-bench at %s (build first)" % a.bin, file=sys.stderr)
        sys.exit(2)
    rows = []
    print("%6s %5s | %9s %9s %6s | %10s %10s %6s" % ("nodes", "GPUs", "dense s", "MoE s", "ratio",
                                                    "dense MiB", "MoE MiB", "ratio"))
    with tempfile.TemporaryDirectory() as work:
        for nodes in a.nodes:
            dense = measure(a.bin, scenario(nodes, False), work)
            moe = measure(a.bin, scenario(nodes, True), work)
            t = moe["cpu_seconds"] / dense["cpu_seconds"]
            m = moe["peak_rss_bytes"] / dense["peak_rss_bytes"]
            rows.append({"nodes": nodes, "gpus": 8 * nodes, "dense": dense, "moe": moe,
                         "cpu_ratio": t, "memory_ratio": m})
            print("%6d %5d | %9.2f %9.2f %5.2fx | %10.0f %10.0f %5.2fx" % (
                nodes, 8 * nodes, dense["cpu_seconds"], moe["cpu_seconds"], t,
                dense["peak_rss_bytes"] / 2**20, moe["peak_rss_bytes"] / 2**20, m))
    print("seconds: CPU seconds (user + system) of the whole run process; MiB: its peak resident memory; "
          "systems %s, 1 iteration, sim backend (bound: MoE at most 1.5x the dense twin in both)" % ", ".join(SYSTEMS))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(rows, f, indent=2)


if __name__ == "__main__":
    main()
