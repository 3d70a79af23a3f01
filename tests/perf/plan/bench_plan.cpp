// Planning speed (Plan issue §4): one batch of `wikipedia` on llama-7b, single thread.
// Targets on the 2-core development machine: 16 × dgx-h200 with 1M tokens ≤ 2 ms per batch;
// 128 × dgx-h200 with 8M tokens ≤ 20 ms. Run with `make bench` (not part of `make test`).
#include <benchmark/benchmark.h>

#include "core/config/presets.hpp"
#include "core/cost/cost_model.hpp"
#include "core/lower/estimate.hpp"
#include "core/lower/lower.hpp"
#include "core/strategies/strategy.hpp"
#include "core/workload/workload.hpp"

namespace {

zb::Scenario scenario(int nodes, std::int64_t tokens) {
  zb::Scenario s;
  s.name = "bench-plan";
  s.cluster = zb::find_cluster_preset("dgx-h200")->spec;
  s.cluster.nodes = nodes;
  s.model = zb::find_model_preset("llama-7b")->spec;
  s.workload.source = zb::WorkloadSource::dataset;
  s.workload.dataset = "wikipedia";
  s.workload.max_seq_len = 65536;
  s.workload.tokens_per_iteration = tokens;
  s.workload.iterations = 1;
  return s;
}

void plan_wikipedia(benchmark::State& state, const char* system, int nodes, std::int64_t tokens) {
  const zb::Scenario s = scenario(nodes, tokens);
  const zb::CostModel cost(s.cluster, s.model);
  const zb::Workload workload(s);
  const zb::Batch batch = workload.batch(0);
  zb::SystemSpec sys;
  sys.name = system;
  sys.label = system;
  const auto strategy = zb::make_strategy(sys, s, cost);
  std::size_t ops = 0;
  for (auto _ : state) {
    const zb::plan::Plan p = strategy->make_plan(batch);
    ops = 0;
    for (const auto& r : p.ranks) ops += r.ops.size();
    benchmark::DoNotOptimize(ops);
  }
  state.counters["sequences"] = static_cast<double>(batch.lengths.size());
  state.counters["ops"] = static_cast<double>(ops);
}

// The planner's share spent after planning: lowering the plan to its Program (forward and backward)
// and scheduling it (the estimate every plan carries). Counters give the Program's size.
void lower_wikipedia(benchmark::State& state, const char* system, int nodes, std::int64_t tokens, bool schedule) {
  const zb::Scenario s = scenario(nodes, tokens);
  const zb::CostModel cost(s.cluster, s.model);
  const zb::Workload workload(s);
  zb::SystemSpec sys;
  sys.name = system;
  sys.label = system;
  const zb::plan::Plan p = zb::make_strategy(sys, s, cost)->make_plan(workload.batch(0));
  std::size_t instrs = 0, messages = 0;
  for (auto _ : state) {
    const zb::lower::Program program = zb::lower::lower(p, cost, {.backward = true});
    if (schedule) benchmark::DoNotOptimize(zb::lower::estimate(program, zb::lower::nominal_transfers(program, cost)).forward);
    instrs = program.instruction_count();
    messages = program.messages.size();
  }
  state.counters["instructions"] = static_cast<double>(instrs);
  state.counters["messages"] = static_cast<double>(messages);
}

}  // namespace

BENCHMARK_CAPTURE(plan_wikipedia, zeppelin_16x8_1M, "zeppelin", 16, 1 << 20)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(plan_wikipedia, zeppelin_128x8_8M, "zeppelin", 128, 8 << 20)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(plan_wikipedia, uniform_cp8_16x8_1M, "uniform-cp", 16, 1 << 20)->Unit(benchmark::kMillisecond);

BENCHMARK_CAPTURE(lower_wikipedia, lower_zeppelin_128x8_8M, "zeppelin", 128, 8 << 20, false)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(lower_wikipedia, lower_estimate_zeppelin_128x8_8M, "zeppelin", 128, 8 << 20, true)->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
