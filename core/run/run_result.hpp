#pragma once
// What `zeppelin-bench run` produced: for every system of the scenario and every iteration, the plan's
// facts, the executor's trace and the metrics derived from it. Reporters (JSON, HTML, Perfetto, console,
// gbench) read only this struct.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/config/scenario.hpp"
#include "core/exec/executor.hpp"
#include "core/exec/trace.hpp"
#include "core/metrics/long_documents.hpp"
#include "core/metrics/metrics.hpp"
#include "core/plan/plan.hpp"
#include "core/workload/batch_record.hpp"

namespace zb {

// One command-line flag that replaced a value of the scenario file. The report lists them and writes them
// into the file's JSON to give the scenario that actually ran.
struct ScenarioOverride {
  std::string flag;          // "--seed"
  std::string json_pointer;  // "/seed": where the value sits in a scenario file
  nlohmann::json value;      // 7
};

struct IterationResult {
  int iteration = 0;
  bool feasible = true;
  std::vector<plan::OomReport> oom;  // non-empty when the strategy could not fit the batch
  double planner_seconds = 0;        // wall-clock, measured (not simulated)
  double predicted_seconds = 0;      // the planner's own estimate of the iteration
  RunMetrics metrics;                // valid when feasible
  // The plan's strategy facts (plan::Plan::info): what the strategy resolved for this batch, e.g. the
  // degree "auto" chose. Kept per iteration because a choice may differ from batch to batch.
  nlohmann::json plan_info = nlohmann::json::object();
  std::vector<std::string> verification;  // plan::verify problems (empty = verified)
};

struct SystemResult {
  SystemSpec system;
  std::vector<IterationResult> iterations;
  Trace first_trace;      // the trace of the first feasible iteration (for timelines and Perfetto)
  plan::Plan first_plan;  // the plan of that iteration (per-GPU load charts)
  bool has_trace = false;
};

struct RunResult {
  Scenario scenario;
  std::string backend;  // "sim", "reference", "cuda"
  // What the executor asked at run time about the driver, the libraries and the GPU (the cuda backend;
  // empty for sim and reference): the report's provenance.runtime.
  RuntimeFacts runtime;
  BatchRecord workload;  // what the reports keep of every iteration's batch
  // Per batch, the shares in documents longer than one GPU's and one node's token capacity (the same
  // for every system): worked out when the batch is drawn, since the batch is dropped after.
  LongDocumentRecord long_documents;
  std::vector<SystemResult> systems;  // in scenario order
};

}  // namespace zb
