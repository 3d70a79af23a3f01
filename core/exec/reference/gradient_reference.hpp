#pragma once
// The float64 reference of the attention backward, written apart from the kernels (it shares no code
// with what it checks), with the first-order rounding bound of every element derived in docs/REFERENCE.md
// ("Backward tolerance"). Per sequence, from the generator's Q, K, V and dO:
//   1. row statistics: each query row's float64 softmax over its whole causal prefix, streamed over key
//      tiles with the forward check's fixed shift (verification.cpp), giving its LSE, D = dO·O,
//      e = Σ|dO|·Ō and the error coefficients ε_P and ε_S of the bound. Each rank computes them for the
//      rows of its own linear layout (the cost of the forward check) and the ranks exchange them
//      (share_row_statistics), so that every rank has them for every row: the dK/dV of a key need the
//      statistics of every later query;
//   2. per rank, the gradients of its own rows from those statistics: dQ of query rows [begin, end)
//      over their prefix, dK and dV of key rows [begin, end) over every later query, each element with
//      its bound. Memory: the rows asked for plus one tile of the other side.
// The distributed forward merges a row's partials (one per forward block, merge_partials) on top of the
// single kernel's tile rescales; each merge is one more rescale, so the bound counts it like one: the
// number of forward blocks of the row (over every rank's attention ops) enters ε_L and ε_O.
#include <cstdint>
#include <map>
#include <mutex>
#include <vector>

#include "core/common/token_layout.hpp"
#include "core/exec/reference/qkv_generator.hpp"
#include "core/lower/program.hpp"

namespace zb::reference {

// Per (row, head) of one sequence, index row · heads + head.
struct RowStatistics {
  std::vector<double> lse, d, e, eps_p, eps_s;
};

// A reference gradient: values and per-element rounding bounds, shaped like the rows asked for.
struct ReferenceGradient {
  std::vector<double> value, bound;
};

class GradientReference {
 public:
  GradientReference(const lower::Program& program, const QkvGenerator& generator);
  ~GradientReference();
  GradientReference(const GradientReference&) = delete;
  GradientReference& operator=(const GradientReference&) = delete;

  // The statistics of rows [begin, end) of `seq`, index (row − begin) · heads + head.
  [[nodiscard]] RowStatistics compute(int seq, std::int64_t begin, std::int64_t end) const;
  // Stores computed statistics of rows [begin, begin + rows) of `seq` (thread-safe: the rank threads of
  // one process share one reference).
  void insert(int seq, std::int64_t begin, const RowStatistics& rows);
  // Every row's statistics of `seq`; throws std::logic_error when some rows were never inserted.
  [[nodiscard]] const RowStatistics& statistics(int seq) const;

  // dQ of query rows [begin, end) of `seq` (row, head, dim).
  [[nodiscard]] ReferenceGradient dq(int seq, std::int64_t begin, std::int64_t end) const;
  // dK and dV of key rows [begin, end) of `seq` (row, kv head, dim).
  [[nodiscard]] std::pair<ReferenceGradient, ReferenceGradient> dkv(int seq, std::int64_t begin,
                                                                    std::int64_t end) const;

 private:
  struct Entry {
    RowStatistics stats;        // every row of the sequence
    std::int64_t inserted = 0;  // rows inserted so far
  };

  const lower::Program& program_;
  const QkvGenerator& generator_;
  std::map<int, std::vector<int>> blocks_per_row_;  // seq → forward blocks covering each query row
  mutable std::mutex mutex_;
  std::map<int, Entry> entries_;
};

}  // namespace zb::reference
