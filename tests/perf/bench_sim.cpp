// How fast the sim backend simulates one iteration (llama-7b, forward + backward, wikipedia lengths,
// Zeppelin's plan) on 16 and 128 × dgx-h200. Targets (issue 5): ≤ 1 s for 16 nodes with 1M tokens,
// ≤ 10 s for 128 nodes with 8M tokens. Planning happens once, outside the timed loop.
// BM_RunIteration64Gpus times what `run` does per iteration (plan, verify, simulate) at 64 GPUs, for
// ring CP over every GPU of 8 × a800-4nic, the case that took 50–65 s (issue 14, target ≤ 5 s).
//
// The simulation runs in a forked child (docs/SIMULATOR.md), which Google Benchmark's CPU column does
// not see: it counts this process only. `cpu_s` adds the reaped children's CPU time (getrusage), so it
// is the figure to compare on a shared machine where wall time depends on the load.
#include <sys/resource.h>

#include <benchmark/benchmark.h>

#include <cstdint>

#include "core/config/presets.hpp"
#include "core/exec/executor.hpp"
#include "core/metrics/metrics.hpp"
#include "core/plan/verify.hpp"
#include "core/run/execute.hpp"
#include "core/strategies/strategy.hpp"
#include "core/workload/workload.hpp"

namespace zb {
namespace {

// User + system CPU seconds of this process and of its children that have been waited for.
double cpu_seconds() {
  double total = 0;
  for (const int who : {RUSAGE_SELF, RUSAGE_CHILDREN}) {
    rusage usage{};
    getrusage(who, &usage);
    for (const timeval& tv : {usage.ru_utime, usage.ru_stime}) {
      total += static_cast<double>(tv.tv_sec) + static_cast<double>(tv.tv_usec) * 1e-6;
    }
  }
  return total;
}

Scenario bench_scenario(int nodes, std::int64_t tokens) {
  Scenario s;
  s.name = "bench-sim";
  s.cluster = find_cluster_preset("dgx-h200")->spec;
  s.cluster.nodes = nodes;
  s.model = find_model_preset("llama-7b")->spec;
  s.workload.source = WorkloadSource::dataset;
  s.workload.dataset = "wikipedia";
  s.workload.tokens_per_iteration = tokens;
  s.passes = Passes::fwd_bwd;
  return s;
}

void BM_SimulateIteration(benchmark::State& state) {
  const Scenario s = bench_scenario(static_cast<int>(state.range(0)), state.range(1));
  const CostModel cost(s.cluster, s.model);
  SystemSpec sys;
  sys.name = "zeppelin";
  sys.label = "zeppelin";
  const Batch batch = Workload(s).batch(0);
  const plan::Plan plan = make_strategy(sys, s, cost)->make_plan(batch);
  auto executor = make_executor(Backend::sim);
  Trace trace;
  const double cpu_before = cpu_seconds();
  for (auto _ : state) {
    trace = execute(*executor, plan, s, cost);
    benchmark::ClobberMemory();  // (DoNotOptimize on a double member mangles it with this GCC and benchmark)
  }
  const double cpu = (cpu_seconds() - cpu_before) / static_cast<double>(state.iterations());
  const RunMetrics m = compute_run_metrics(plan, trace, cost, s);
  std::size_t ops = 0;
  for (const auto& r : plan.ranks) ops += r.ops.size();
  state.counters["cpu_s"] = cpu;  // per iteration, simulation child included
  state.counters["gpus"] = s.cluster.world_size();
  state.counters["sequences"] = static_cast<double>(batch.lengths.size());
  state.counters["plan_ops"] = static_cast<double>(ops);
  state.counters["events"] = static_cast<double>(trace.events.size());
  state.counters["sim_iteration_s"] = trace.iteration_seconds;
  state.counters["mfu"] = m.mfu;
  state.counters["nic_util_mean"] = m.nic_utilization_mean;
}

BENCHMARK(BM_SimulateIteration)
    ->Args({16, 1 << 20})
    ->Args({128, 8 << 20})
    ->ArgNames({"nodes", "tokens"})
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1)
    ->UseRealTime();

void BM_RunIteration64Gpus(benchmark::State& state) {
  Scenario s = bench_scenario(8, 2 << 20);
  s.cluster = find_cluster_preset("a800-4nic")->spec;
  s.cluster.nodes = 8;
  s.model = find_model_preset("llama-3b")->spec;
  s.workload.dataset = "github";
  s.workload.max_seq_len = 32768;
  const CostModel cost(s.cluster, s.model);
  SystemSpec sys;
  sys.name = "ring-cp";
  sys.label = "ring-cp";
  const Batch batch = Workload(s).batch(0);
  const auto strategy = make_strategy(sys, s, cost);
  auto executor = make_executor(Backend::sim);
  Trace trace;
  std::size_t problems = 0;
  const double cpu_before = cpu_seconds();
  for (auto _ : state) {
    const plan::Plan plan = strategy->make_plan(batch);
    problems += plan::verify(plan, {.heads = s.model.heads}).size();
    trace = execute(*executor, plan, s, cost);
    benchmark::ClobberMemory();
  }
  if (problems != 0) state.SkipWithError("the plan failed verification");
  state.counters["cpu_s"] = (cpu_seconds() - cpu_before) / static_cast<double>(state.iterations());
  state.counters["gpus"] = s.cluster.world_size();
  state.counters["sequences"] = static_cast<double>(batch.lengths.size());
  state.counters["events"] = static_cast<double>(trace.events.size());
  state.counters["sim_iteration_s"] = trace.iteration_seconds;
}

BENCHMARK(BM_RunIteration64Gpus)->Unit(benchmark::kMillisecond)->Iterations(1)->UseRealTime();

}  // namespace
}  // namespace zb

BENCHMARK_MAIN();
