#!/usr/bin/env bash
# Runs the Google Benchmark targets (planner, simulator and CPU kernel speed) and prints their figures
# against the targets of the Plan and simulator issues (the kernels have no target: they print GFLOP/s). Not part of `make test`: these are timings, not checks.
set -euo pipefail
build=${1:-build}
out="$build/benchmarks"
mkdir -p "$out"
echo "== planner, warm (Google Benchmark; the retired 2 ms / 20 ms figures are printed for comparison only)"
"$build/tests/perf/plan/zb_bench_plan" --benchmark_out="$out/plan.json" --benchmark_out_format=json
echo "== planner share of the iteration (at scale and over the scenario library) and the simulator at scale, cold in the CLI (rule: planner_seconds <= 2 % of the predicted iteration; 16384 GPUs within 60 s and 16 GiB)"
python3 scripts/scale-bench.py --bin "$build/cli/zeppelin-bench" --part all --max-tokens $((1 << 28)) --json "$out/scale.json"
echo "== an MoE model's cost to the tool: plan + simulate against its dense twin (issue 34 bound: at most 1.5x time and memory)"
python3 scripts/moe-cost-bench.py --bin "$build/cli/zeppelin-bench" --nodes 2 16 --json "$out/moe-cost.json"
echo "== simulator (targets: 16 x dgx-h200 <= 1 s, 128 x dgx-h200 <= 10 s per iteration; plan + verify + simulate of ring-cp on 64 GPUs <= 5 s)"
"$build/tests/perf/zb_bench_sim" --benchmark_out="$out/sim.json" --benchmark_out_format=json
echo "== CPU attention kernels, forward and backward (float32, single thread; no target)"
"$build/tests/perf/kernels/zb_bench_kernels_cpu" --benchmark_out="$out/kernels.json" --benchmark_out_format=json
echo "results: $out/plan.json $out/planner-cold.json $out/moe-cost.json $out/sim.json $out/kernels.json"
