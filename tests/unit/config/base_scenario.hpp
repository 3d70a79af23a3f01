#pragma once
// A valid scenario that the loader tests start from and break one key at a time.
#include <string>

namespace zb::test {

inline const std::string base_scenario_text = R"({
  // comments are allowed
  "name": "base",
  "description": "the scenario the tests mutate",
  "seed": 7,
  "cluster": { "preset": "dgx-h200", "nodes": 2 },
  "model": { "preset": "llama-7b" },
  "workload": { "dataset": "wikipedia", "max_seq_len": 65536, "tokens_per_iteration": 1048576, "iterations": 3 },
  "systems": ["zeppelin", "ring-cp", { "name": "uniform-cp", "degree": 8 }],
  "backend": "sim",
  "passes": "fwd+bwd",
  "output": { "dir": "out/base", "formats": ["json", "html", "trace"] },
  "gates": [{ "metric": "speedup", "system": "zeppelin", "baseline": "ring-cp", "min": 1.2 }]
})";

}  // namespace zb::test
