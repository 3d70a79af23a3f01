#pragma once
// The cases of the no-crash property test (issue 38, item 5): a point of the product hardware preset x model
// preset x GPU memory x nodes x tensor parallelism x batch x passes, turned into the scenario a user could
// write for it (read by the scenario loader, so only accepted input is tried) and a seeded batch.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/common/rng.hpp"
#include "core/config/scenario.hpp"
#include "core/cost/cost_model.hpp"

namespace zb::test {

enum class Memory {
  tiny,    // just above the model states of one GPU: room for a handful of tokens, or none
  preset,  // the preset's HBM
  huge     // ten thousand times the preset's: hundreds of millions of tokens per GPU
};
enum class BatchKind {
  short_documents,     // many documents of at most 2048 tokens
  longer_than_a_node,  // one document longer than a whole node holds, and a few short ones
  mixed                // a heavy-tailed batch, half the time with one document longer than a GPU holds
};

struct NoCrashCase {
  std::string cluster;
  std::string model;
  Memory memory = Memory::preset;
  int nodes = 1;
  bool tensor_parallel = false;  // TP over the node's GPUs (the widest the model's heads allow)
  BatchKind batch = BatchKind::short_documents;
  Passes passes = Passes::fwd_bwd;
  std::uint64_t seed = 1;
  [[nodiscard]] std::string str() const;
};

// The whole product, in a fixed order (seeds 1, 2, ... by position).
[[nodiscard]] std::vector<NoCrashCase> all_no_crash_cases();

// `count` cases of those on at most `most_nodes` nodes, drawn without replacement from `seed` (all of them
// when count >= their number).
[[nodiscard]] std::vector<NoCrashCase> sampled_no_crash_cases(std::size_t count, std::uint64_t seed,
                                                              int most_nodes);

// The case's scenario as the loader reads it, its systems every registered strategy at its defaults and
// with each option moved off its default (those the strategy's hook accepts on this grid); nullopt when
// the loader refuses the case (no TP width above 1 divides both the node's GPUs and the model's heads).
[[nodiscard]] std::optional<Scenario> no_crash_scenario(const NoCrashCase& c);

// The case's batch for the scenario's cost model (its capacities decide what "longer than a node" is).
[[nodiscard]] std::vector<std::int64_t> no_crash_batch(const NoCrashCase& c, const Scenario& s,
                                                       const CostModel& cost);

}  // namespace zb::test
