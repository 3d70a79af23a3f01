#pragma once
// An Executor runs a Program (a Plan lowered by core/lower) and returns a Trace. One backend is one
// Executor: `sim` (SimGrid, the default), `reference` (CPU numerics), `cuda` (kernels + NCCL). Every
// executor runs the same Program under the execution rules of core/lower/program.hpp, and derives
// nothing of its own: relays, pairings, payloads and the backward pass are the Program's.
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/cost/cost_model.hpp"
#include "core/exec/trace.hpp"
#include "core/lower/program.hpp"

namespace zb {

// What an executor may know beyond the Program: the cost model (which holds the cluster, the model and the
// hardware profile), the scenario's seed and name, and the iteration. Not the Scenario: its systems,
// workload and options are the planner's business, and a backend that read them would run something other
// than the Program it was given. core/run/execute.hpp builds one from a Scenario (exec_context).
struct ExecContext {
  const CostModel& cost;
  std::uint64_t seed = 1;     // the scenario's seed: generated Q/K/V and the sim's compute jitter draw by it
  int iteration = 0;          // the iteration being run: the sim backend's seeded compute jitter draws by it
  std::string scenario_name;  // for messages only
  [[nodiscard]] const ClusterSpec& cluster() const { return cost.cluster(); }
  [[nodiscard]] const ModelSpec& model() const { return cost.model(); }
};

// What an executor asked this machine at run time about the software and the device it runs on, for the
// report's provenance (docs/REPORT_FORMAT.md, `provenance.runtime`): the versions of the driver and of the
// libraries this process loaded (which may differ from the headers the build saw) and the GPU. Empty for
// the backends that run on no device (sim, reference), so a simulated report claims none of it.
struct RuntimeFacts {
  std::string asked_by;  // "cuda backend, rank 0 (GPU 0)"
  // {"cuda_driver", "13.0"}, ..., in a fixed order; a value says "unavailable (…)" when the library
  // could not answer.
  std::vector<std::pair<std::string, std::string>> libraries;
  std::string gpu_name;
  int gpu_sm_count = 0;
  std::int64_t gpu_memory_bytes = 0;
  std::string gpu_compute_capability;  // "9.0"
  [[nodiscard]] bool empty() const { return libraries.empty() && gpu_name.empty(); }
};

class Executor {
 public:
  virtual ~Executor() = default;
  [[nodiscard]] virtual std::string backend() const = 0;
  // Called once on every process before the first plan of a run is made: a backend that cannot run here
  // says so now (the cuda backend: no usable device, exit 3; a launch that does not match the scenario,
  // exit 2), before any work, any report or any header claims a measurement, and even when every plan
  // turns out not to fit (then run() is never called). Nothing to do by default.
  virtual void prepare(const ClusterSpec& cluster) { (void)cluster; }
  // What prepare() asked at run time; empty for backends on no device.
  [[nodiscard]] virtual RuntimeFacts runtime_facts() const { return {}; }
  // Runs one iteration of the program (every layer, the program's passes). The program's plan is
  // feasible (a plan with `oom` is never lowered for running).
  [[nodiscard]] virtual Trace run(const lower::Program& program, const ExecContext& context) = 0;
  // Whether run() moves real rows, reading every message's slices: such an executor is given a Program
  // lowered with them (lower::Program::rows). One that times bytes alone (the simulator) runs the Program
  // the planner's estimate lowered, which lists none.
  [[nodiscard]] virtual bool reads_rows() const { return false; }
};

// The executor for a backend, from the backend registry (backend_registry.hpp, defined there: a binary
// that calls it links zb_backends); exit code 2 with a clear message when this build lacks it.
[[nodiscard]] std::unique_ptr<Executor> make_executor(Backend backend);

// Ends what a backend set up once for the whole process (the cuda backend's NCCL communicators, and MPI
// when the backend initialised it) while main is still running: left to static destructors, NCCL would be
// torn down after the CUDA runtime it needs may already be gone. `after_failure`: the run is ending on an
// error, so nothing may wait for the other ranks (communicators are aborted, not destroyed). Idempotent,
// and a no-op for backends with nothing set up. Returns what failed (empty when all went well) instead of
// throwing, so that it can run while an error is being reported.
[[nodiscard]] std::vector<std::string> shut_down_backends(bool after_failure);

}  // namespace zb
