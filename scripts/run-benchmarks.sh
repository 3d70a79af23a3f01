#!/usr/bin/env bash
# Runs the Google Benchmark targets (planner, simulator and CPU kernel speed) and prints their figures
# against the targets of the Plan and simulator issues (the kernels have no target: they print GFLOP/s). Not part of `make test`: these are timings, not checks.
set -euo pipefail
build=${1:-build}
out="$build/benchmarks"
mkdir -p "$out"
echo "== planner (targets: zeppelin 16x8 1M tokens <= 2 ms, 128x8 8M tokens <= 20 ms; every strategy 16x8 1M tokens <= 20 ms; single thread)"
"$build/tests/perf/plan/zb_bench_plan" --benchmark_out="$out/plan.json" --benchmark_out_format=json
echo "== planner, cold in the CLI (the targets' own terms: planner_seconds of a fresh process; median within target)"
python3 scripts/planner-speed.py --bin "$build/cli/zeppelin-bench" --json "$out/planner-cold.json"
echo "== simulator (targets: 16 x dgx-h200 <= 1 s, 128 x dgx-h200 <= 10 s per iteration; plan + verify + simulate of ring-cp on 64 GPUs <= 5 s)"
"$build/tests/perf/zb_bench_sim" --benchmark_out="$out/sim.json" --benchmark_out_format=json
echo "== CPU attention kernels, forward and backward (float32, single thread; no target)"
"$build/tests/perf/kernels/zb_bench_kernels_cpu" --benchmark_out="$out/kernels.json" --benchmark_out_format=json
echo "results: $out/plan.json $out/planner-cold.json $out/sim.json $out/kernels.json"
