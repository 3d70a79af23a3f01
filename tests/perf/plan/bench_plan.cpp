// Planning speed (Plan issue §4): one batch of `wikipedia` on llama-7b, single thread.
// Targets on the 2-core development machine: 16 × dgx-h200 with 1M tokens ≤ 2 ms per batch;
// 128 × dgx-h200 with 8M tokens ≤ 20 ms. Every registered strategy (issue 13) plans 1M tokens on
// 16 × dgx-h200 (128 GPUs) in ≤ 20 ms, on `wikipedia` and on `prolong64k` (long documents, where the
// degree choices have most to weigh). Run with `make bench` (not part of `make test`).
#include <benchmark/benchmark.h>

#include "core/config/presets.hpp"
#include "core/cost/cost_model.hpp"
#include "core/lower/estimate.hpp"
#include "core/lower/lower.hpp"
#include "core/strategies/strategy.hpp"
#include "core/workload/workload.hpp"

namespace {

zb::Scenario scenario(int nodes, std::int64_t tokens, const char* dataset = "wikipedia") {
  zb::Scenario s;
  s.name = "bench-plan";
  s.cluster = zb::find_cluster_preset("dgx-h200")->spec;
  s.cluster.nodes = nodes;
  s.model = zb::find_model_preset("llama-7b")->spec;
  s.workload.source = zb::WorkloadSource::dataset;
  s.workload.dataset = dataset;
  s.workload.max_seq_len = 65536;
  s.workload.tokens_per_iteration = tokens;
  s.workload.iterations = 1;
  return s;
}

// One strategy with `options` (a JSON object, "{}" for the defaults) planning one batch of `dataset`.
void plan_dataset(benchmark::State& state, const char* system, const char* options, const char* dataset,
                  int nodes, std::int64_t tokens) {
  const zb::Scenario s = scenario(nodes, tokens, dataset);
  const zb::CostModel cost(s.cluster, s.model);
  const zb::Workload workload(s);
  const zb::Batch batch = workload.batch(0);
  zb::SystemSpec sys;
  sys.name = system;
  sys.label = system;
  sys.options = nlohmann::json::parse(options);
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

void plan_wikipedia(benchmark::State& state, const char* system, int nodes, std::int64_t tokens) {
  plan_dataset(state, system, "{}", "wikipedia", nodes, tokens);
}

// The planner's share spent after planning: lowering the plan to its Program (forward and backward)
// and scheduling it (the estimate every plan carries). Counters give the Program's size.
void lower_wikipedia(benchmark::State& state, const char* system, int nodes, std::int64_t tokens,
                     bool schedule) {
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
    if (schedule)
      benchmark::DoNotOptimize(
          zb::lower::estimate(program, zb::lower::nominal_transfers(program, cost)).forward);
    instrs = program.instruction_count();
    messages = program.messages.size();
  }
  state.counters["instructions"] = static_cast<double>(instrs);
  state.counters["messages"] = static_cast<double>(messages);
}

}  // namespace

BENCHMARK_CAPTURE(plan_wikipedia, zeppelin_16x8_1M, "zeppelin", 16, 1 << 20)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(plan_wikipedia, zeppelin_128x8_8M, "zeppelin", 128, 8 << 20)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(plan_wikipedia, uniform_cp8_16x8_1M, "uniform-cp", 16, 1 << 20)
    ->Unit(benchmark::kMillisecond);

// Issue 13: every strategy (and USP, fixed and auto) for 1M tokens on 128 GPUs, target ≤ 20 ms each.
#define ZB_PLAN_128(tag, system, options)                                                               \
  BENCHMARK_CAPTURE(plan_dataset, tag##_wikipedia_16x8_1M, system, options, "wikipedia", 16, 1 << 20)   \
      ->Unit(benchmark::kMillisecond);                                                                  \
  BENCHMARK_CAPTURE(plan_dataset, tag##_prolong64k_16x8_1M, system, options, "prolong64k", 16, 1 << 20) \
      ->Unit(benchmark::kMillisecond)
ZB_PLAN_128(zeppelin, "zeppelin", "{}");
ZB_PLAN_128(ring_cp, "ring-cp", "{}");
ZB_PLAN_128(ring_cp8, "ring-cp", R"({"degree": 8})");
ZB_PLAN_128(uniform_cp_auto, "uniform-cp", "{}");
ZB_PLAN_128(llama3_cp, "llama3-cp", "{}");
ZB_PLAN_128(packing_dp, "packing-dp", "{}");
ZB_PLAN_128(hybrid_dp, "hybrid-dp", "{}");
ZB_PLAN_128(dynamic_cp, "dynamic-cp", "{}");
ZB_PLAN_128(hydraulis, "hydraulis", "{}");
ZB_PLAN_128(ulysses, "ulysses", "{}");
ZB_PLAN_128(usp_4x2, "ulysses", R"({"degree": 4, "ring": 2})");
ZB_PLAN_128(usp_auto, "ulysses", R"({"ring": "auto"})");
#undef ZB_PLAN_128

BENCHMARK_CAPTURE(lower_wikipedia, lower_zeppelin_128x8_8M, "zeppelin", 128, 8 << 20, false)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(lower_wikipedia, lower_estimate_zeppelin_128x8_8M, "zeppelin", 128, 8 << 20, true)
    ->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
