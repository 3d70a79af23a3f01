#pragma once
// The `sim` backend: runs a Plan on a SimGrid model of the scenario's cluster (docs/SIMULATOR.md).
#include "core/exec/executor.hpp"

namespace zb::sim {

class SimExecutor final : public Executor {
 public:
  [[nodiscard]] std::string backend() const override { return "sim"; }
  // Simulates one layer forward (and backward when the scenario runs fwd_bwd) in a forked SimGrid
  // child and scales by the model's layers. A plan with `oom` is not run: its trace has no events and
  // a zero iteration time.
  [[nodiscard]] Trace run(const plan::Plan& plan, const RunContext& context) override;
};

}  // namespace zb::sim
