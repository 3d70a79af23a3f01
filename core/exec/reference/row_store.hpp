#pragma once
// RowStore: the token rows a rank holds of one kind (Q, K|V, O, LSE), per sequence, dense over the
// sequence with a presence flag per token. Lookups say exactly which token is missing, which is how a
// plan that forgot a transfer or a remap move is reported.
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

  // Makes room for `length` rows of `seq` (idempotent); rows start absent and zero (or `fill`).
  void reserve(int seq, std::int64_t length, float fill = 0.0F);
  // Copies rows [begin, end) in and marks them present.
  void put(int seq, std::int64_t begin, std::int64_t end, std::span<const float> rows);
  // Marks rows present without writing them (accumulators that are merged into in place).
  void mark_present(int seq, std::int64_t begin, std::int64_t end);
  void erase(int seq, std::int64_t begin, std::int64_t end);

  // The first token of [begin, end) that is not present, if any.
  [[nodiscard]] std::optional<std::int64_t> first_missing(int seq, std::int64_t begin, std::int64_t end) const;
  // How many rows from `begin` on (up to `end`) are present without a gap.
  [[nodiscard]] std::int64_t present_run(int seq, std::int64_t begin, std::int64_t end) const;
  [[nodiscard]] bool has(int seq, std::int64_t begin, std::int64_t end) const {
    return !first_missing(seq, begin, end).has_value();
  }

  // Rows [begin, end) in place (the sequence must be reserved; presence is not checked).
  [[nodiscard]] std::span<float> rows(int seq, std::int64_t begin, std::int64_t end);
  [[nodiscard]] std::span<const float> rows(int seq, std::int64_t begin, std::int64_t end) const;

 private:
  struct SequenceRows {
    std::int64_t length = 0;
    std::vector<float> values;         // length · width
    std::vector<unsigned char> present;  // length
  };
  const SequenceRows* find(int seq) const;
  SequenceRows& at(int seq, std::int64_t begin, std::int64_t end);

  int width_ = 0;
  std::map<int, SequenceRows> sequences_;
};

}  // namespace zb::reference
