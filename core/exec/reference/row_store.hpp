#pragma once
// RowStore: the token rows a rank holds of one kind (Q, K|V, O, LSE), per sequence, with a presence
// flag per token. Lookups say exactly which token is missing, which is how a plan that forgot a
// transfer or a remap move is reported.
//
// Storage is sparse: only the token ranges a rank was given (or allocated as accumulators) are held,
// never whole sequences. A rank holds a few thousand tokens of a sequence that may be 64 Ki long, and
// a ring rank receives one K/V buffer per peer: dense per-sequence arrays made memory grow with
// ranks × buffers × sequence length (4.6 GB for 64 Ki tokens on 16 ranks). Stored ranges are kept as
// runs; runs that touch are merged, so any stored range without a gap is one contiguous span.
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <vector>

namespace zb::reference {

class RowStore {
 public:
  RowStore() = default;
  explicit RowStore(int width) : width_(width) {}

  [[nodiscard]] int width() const { return width_; }

  // Makes rows [begin, end) of `seq` stored (contiguously); rows not stored before start absent and
  // set to `fill`. Rows already stored keep their values and presence.
  void allocate(int seq, std::int64_t begin, std::int64_t end, float fill = 0.0F);
  // Copies rows [begin, end) in and marks them present.
  void put(int seq, std::int64_t begin, std::int64_t end, std::span<const float> rows);
  // Marks stored rows present without writing them (accumulators that are merged into in place).
  void mark_present(int seq, std::int64_t begin, std::int64_t end);
  // Drops rows [begin, end) and frees their storage (a remap sender no longer holds what it sent).
  void erase(int seq, std::int64_t begin, std::int64_t end);

  // The first token of [begin, end) that is not present, if any.
  [[nodiscard]] std::optional<std::int64_t> first_missing(int seq, std::int64_t begin,
                                                          std::int64_t end) const;
  // How many rows from `begin` on (up to `end`) are present without a gap.
  [[nodiscard]] std::int64_t present_run(int seq, std::int64_t begin, std::int64_t end) const;
  [[nodiscard]] bool has(int seq, std::int64_t begin, std::int64_t end) const {
    return !first_missing(seq, begin, end).has_value();
  }

  // Rows [begin, end) in place. They must be stored (allocate or put); presence is not checked.
  [[nodiscard]] std::span<float> rows(int seq, std::int64_t begin, std::int64_t end);
  [[nodiscard]] std::span<const float> rows(int seq, std::int64_t begin, std::int64_t end) const;

  // Rows stored over all sequences (present or not): what the store costs in memory, for tests.
  [[nodiscard]] std::int64_t stored_rows() const;

  // The stored runs, by sequence then first token: what a rank still holds (the check that no gradient
  // was left on a rank that does not own it).
  struct Range {
    int seq = 0;
    std::int64_t begin = 0, end = 0;
  };
  [[nodiscard]] std::vector<Range> ranges() const;

 private:
  struct Run {
    std::vector<float> values;           // rows · width
    std::vector<unsigned char> present;  // one flag per row; its size is the run's row count
    [[nodiscard]] std::int64_t rows() const { return static_cast<std::int64_t>(present.size()); }
  };
  using Runs = std::map<std::int64_t, Run>;  // first token → run; runs never overlap or touch

  // The run holding `token`, or end().
  static Runs::const_iterator run_at(const Runs& runs, std::int64_t token);
  // The run holding all of [begin, end) (end > begin); throws std::logic_error when none does.
  std::pair<std::int64_t, const Run*> containing(int seq, std::int64_t begin, std::int64_t end) const;

  int width_ = 0;
  std::map<int, Runs> sequences_;
};

}  // namespace zb::reference
