#pragma once
// The `sim` backend: runs a Program on a SimGrid model of the scenario's cluster (docs/SIMULATOR.md).
#include "core/exec/executor.hpp"

namespace zb::sim {

class SimExecutor final : public Executor {
 public:
  [[nodiscard]] std::string backend() const override { return "sim"; }
  // Simulates one layer forward (and backward when the program has it) in a forked SimGrid child and
  // scales by the model's layers.
  [[nodiscard]] Trace run(const lower::Program& program, const ExecContext& context) override;
};

}  // namespace zb::sim
