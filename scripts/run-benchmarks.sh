#!/usr/bin/env bash
# Runs the Google Benchmark targets (planner and simulator speed) and prints their figures against the
# targets of the Plan and simulator issues. Not part of `make test`: these are timings, not checks.
set -euo pipefail
build=${1:-build}
out="$build/benchmarks"
mkdir -p "$out"
echo "== planner (targets: zeppelin 16x8 1M tokens <= 2 ms, 128x8 8M tokens <= 20 ms; single thread)"
"$build/tests/perf/plan/zb_bench_plan" --benchmark_out="$out/plan.json" --benchmark_out_format=json
echo "== simulator (targets: 16 x dgx-h200 <= 1 s, 128 x dgx-h200 <= 10 s per iteration)"
"$build/tests/perf/zb_bench_sim" --benchmark_out="$out/sim.json" --benchmark_out_format=json
echo "results: $out/plan.json $out/sim.json"
