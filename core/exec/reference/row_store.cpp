#include "core/exec/reference/row_store.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace zb::reference {

void RowStore::reserve(int seq, std::int64_t length, float fill) {
  auto [it, inserted] = sequences_.try_emplace(seq);
  if (!inserted) return;
  it->second.length = length;
  it->second.values.assign(static_cast<std::size_t>(length * width_), fill);
  it->second.present.assign(static_cast<std::size_t>(length), 0);
}

const RowStore::SequenceRows* RowStore::find(int seq) const {
  const auto it = sequences_.find(seq);
  return it == sequences_.end() ? nullptr : &it->second;
}

RowStore::SequenceRows& RowStore::at(int seq, std::int64_t begin, std::int64_t end) {
  const auto it = sequences_.find(seq);
  if (it == sequences_.end() || begin < 0 || end < begin || end > it->second.length) {
    throw std::logic_error("RowStore: rows [" + std::to_string(begin) + ", " + std::to_string(end) +
                           ") of sequence " + std::to_string(seq) + " are outside the reserved rows");
  }
  return it->second;
}

void RowStore::put(int seq, std::int64_t begin, std::int64_t end, std::span<const float> rows_in) {
  SequenceRows& s = at(seq, begin, end);
  const auto count = static_cast<std::size_t>((end - begin) * width_);
  if (rows_in.size() != count) throw std::logic_error("RowStore::put: row data does not match the range");
  std::copy(rows_in.begin(), rows_in.end(), s.values.begin() + begin * width_);
  std::fill(s.present.begin() + begin, s.present.begin() + end, 1);
}

void RowStore::mark_present(int seq, std::int64_t begin, std::int64_t end) {
  SequenceRows& s = at(seq, begin, end);
  std::fill(s.present.begin() + begin, s.present.begin() + end, 1);
}

void RowStore::erase(int seq, std::int64_t begin, std::int64_t end) {
  SequenceRows& s = at(seq, begin, end);
  std::fill(s.present.begin() + begin, s.present.begin() + end, 0);
}

std::optional<std::int64_t> RowStore::first_missing(int seq, std::int64_t begin, std::int64_t end) const {
  if (end <= begin) return std::nullopt;
  const SequenceRows* s = find(seq);
  if (s == nullptr) return begin;
  for (std::int64_t t = begin; t < end; ++t)
    if (t >= s->length || s->present[static_cast<std::size_t>(t)] == 0) return t;
  return std::nullopt;
}

std::int64_t RowStore::present_run(int seq, std::int64_t begin, std::int64_t end) const {
  const SequenceRows* s = find(seq);
  if (s == nullptr) return 0;
  std::int64_t t = begin;
  while (t < end && t < s->length && s->present[static_cast<std::size_t>(t)] != 0) ++t;
  return t - begin;
}

std::span<float> RowStore::rows(int seq, std::int64_t begin, std::int64_t end) {
  SequenceRows& s = at(seq, begin, end);
  return std::span<float>(s.values).subspan(static_cast<std::size_t>(begin * width_),
                                            static_cast<std::size_t>((end - begin) * width_));
}

std::span<const float> RowStore::rows(int seq, std::int64_t begin, std::int64_t end) const {
  const SequenceRows* s = find(seq);
  if (s == nullptr || begin < 0 || end < begin || end > s->length)
    throw std::logic_error("RowStore: rows of sequence " + std::to_string(seq) + " are not reserved");
  return std::span<const float>(s->values).subspan(static_cast<std::size_t>(begin * width_),
                                                   static_cast<std::size_t>((end - begin) * width_));
}

}  // namespace zb::reference
