#include "core/exec/reference/row_store.hpp"

#include <algorithm>
#include <iterator>
#include <stdexcept>
#include <string>
#include <utility>

namespace zb::reference {
namespace {

std::string range_text(int seq, std::int64_t begin, std::int64_t end) {
  return "rows [" + std::to_string(begin) + ", " + std::to_string(end) + ") of sequence " +
         std::to_string(seq);
}

}  // namespace

RowStore::Runs::const_iterator RowStore::run_at(const Runs& runs, std::int64_t token) {
  auto it = runs.upper_bound(token);
  if (it == runs.begin()) return runs.end();
  --it;
  return token < it->first + it->second.rows() ? it : runs.end();
}

std::pair<std::int64_t, const RowStore::Run*> RowStore::containing(int seq, std::int64_t begin,
                                                                   std::int64_t end) const {
  const auto s = sequences_.find(seq);
  if (s != sequences_.end()) {
    const auto it = run_at(s->second, begin);
    if (it != s->second.end() && end <= it->first + it->second.rows()) return {it->first, &it->second};
  }
  throw std::logic_error("RowStore: " + range_text(seq, begin, end) + " are not stored");
}

void RowStore::allocate(int seq, std::int64_t begin, std::int64_t end, float fill) {
  if (begin < 0 || end < begin)
    throw std::logic_error("RowStore::allocate: bad " + range_text(seq, begin, end));
  if (end == begin) return;
  Runs& runs = sequences_[seq];
  // Every run that overlaps or touches [begin, end] is merged with it, so stored ranges stay one span.
  auto first = runs.upper_bound(begin);
  if (first != runs.begin()) {
    const auto before = std::prev(first);
    if (before->first + before->second.rows() >= begin) first = before;
  }
  auto stop = first;
  while (stop != runs.end() && stop->first <= end) ++stop;
  const auto w = static_cast<std::size_t>(width_);
  if (first == stop) {
    Run run;
    run.values.assign(static_cast<std::size_t>(end - begin) * w, fill);
    run.present.assign(static_cast<std::size_t>(end - begin), 0);
    runs.emplace(begin, std::move(run));
    return;
  }
  const auto last = std::prev(stop);
  const std::int64_t new_begin = std::min(begin, first->first);
  const std::int64_t new_end = std::max(end, last->first + last->second.rows());
  if (first == last && first->first == new_begin && first->second.rows() == new_end - new_begin)
    return;  // covered
  // Growing the leftmost run in place keeps appends (remap pieces in token order) amortised linear.
  Run merged;
  auto from = first;
  if (first->first == new_begin) merged = std::move((from++)->second);
  merged.values.resize(static_cast<std::size_t>(new_end - new_begin) * w, fill);
  merged.present.resize(static_cast<std::size_t>(new_end - new_begin), 0);
  for (auto r = from; r != stop; ++r) {
    const auto at = static_cast<std::size_t>(r->first - new_begin);
    std::copy(r->second.values.begin(), r->second.values.end(),
              merged.values.begin() + static_cast<std::ptrdiff_t>(at * w));
    std::copy(r->second.present.begin(), r->second.present.end(),
              merged.present.begin() + static_cast<std::ptrdiff_t>(at));
  }
  runs.erase(first, stop);
  runs.emplace(new_begin, std::move(merged));
}

void RowStore::put(int seq, std::int64_t begin, std::int64_t end, std::span<const float> rows_in) {
  if (end < begin || rows_in.size() != static_cast<std::size_t>((end - begin) * width_))
    throw std::logic_error("RowStore::put: row data does not match " + range_text(seq, begin, end));
  allocate(seq, begin, end);
  std::copy(rows_in.begin(), rows_in.end(), rows(seq, begin, end).begin());
  mark_present(seq, begin, end);
}

void RowStore::mark_present(int seq, std::int64_t begin, std::int64_t end) {
  if (end <= begin) return;
  const auto [first, run] = containing(seq, begin, end);
  auto& flags = const_cast<Run*>(run)->present;  // containing() is shared with the const readers
  std::fill(flags.begin() + (begin - first), flags.begin() + (end - first), 1);
}

void RowStore::erase(int seq, std::int64_t begin, std::int64_t end) {
  const auto s = sequences_.find(seq);
  if (s == sequences_.end() || end <= begin) return;
  Runs& runs = s->second;
  const auto w = static_cast<std::size_t>(width_);
  auto it = runs.upper_bound(begin);
  if (it != runs.begin() && std::prev(it)->first + std::prev(it)->second.rows() > begin) --it;
  std::vector<std::pair<std::int64_t, Run>> rights;  // parts after [begin, end), added after the walk
  while (it != runs.end() && it->first < end) {
    Run& run = it->second;
    const std::int64_t rb = it->first, re = rb + run.rows();
    if (re > end) {
      Run right;
      right.values.assign(
          run.values.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(end - rb) * w),
          run.values.end());
      right.present.assign(run.present.begin() + (end - rb), run.present.end());
      rights.emplace_back(end, std::move(right));
    }
    if (rb < begin) {  // keep the left part; shrink_to_fit so the dropped rows really return memory
      run.values.resize(static_cast<std::size_t>(begin - rb) * w);
      run.present.resize(static_cast<std::size_t>(begin - rb));
      run.values.shrink_to_fit();
      run.present.shrink_to_fit();
      ++it;
    } else {
      it = runs.erase(it);
    }
  }
  for (auto& [first, run] : rights) runs.emplace(first, std::move(run));
  if (runs.empty()) sequences_.erase(s);
}

std::optional<std::int64_t> RowStore::first_missing(int seq, std::int64_t begin, std::int64_t end) const {
  if (end <= begin) return std::nullopt;
  const auto s = sequences_.find(seq);
  if (s == sequences_.end()) return begin;
  for (std::int64_t t = begin; t < end;) {
    const auto it = run_at(s->second, t);
    if (it == s->second.end()) return t;  // runs never touch: past a run's end is a gap
    const std::int64_t stop = std::min(end, it->first + it->second.rows());
    for (; t < stop; ++t)
      if (it->second.present[static_cast<std::size_t>(t - it->first)] == 0) return t;
  }
  return std::nullopt;
}

std::int64_t RowStore::present_run(int seq, std::int64_t begin, std::int64_t end) const {
  const auto s = sequences_.find(seq);
  if (s == sequences_.end()) return 0;
  const auto it = run_at(s->second, begin);
  if (it == s->second.end()) return 0;
  const std::int64_t stop = std::min(end, it->first + it->second.rows());
  std::int64_t t = begin;
  while (t < stop && it->second.present[static_cast<std::size_t>(t - it->first)] != 0) ++t;
  return std::max<std::int64_t>(0, t - begin);
}

std::span<float> RowStore::rows(int seq, std::int64_t begin, std::int64_t end) {
  const std::span<const float> view = std::as_const(*this).rows(seq, begin, end);
  return {const_cast<float*>(view.data()), view.size()};  // the store owns the rows; only constness is shared
}

std::span<const float> RowStore::rows(int seq, std::int64_t begin, std::int64_t end) const {
  if (end < begin) throw std::logic_error("RowStore::rows: bad " + range_text(seq, begin, end));
  if (end == begin) return {};
  const auto [first, run] = containing(seq, begin, end);
  const auto w = static_cast<std::size_t>(width_);
  return std::span<const float>(run->values)
      .subspan(static_cast<std::size_t>(begin - first) * w, static_cast<std::size_t>(end - begin) * w);
}

std::int64_t RowStore::stored_rows() const {
  std::int64_t total = 0;
  for (const auto& [seq, runs] : sequences_)
    for (const auto& [first, run] : runs) total += run.rows();
  return total;
}

std::vector<RowStore::Range> RowStore::ranges() const {
  std::vector<Range> out;
  for (const auto& [seq, runs] : sequences_)
    for (const auto& [first, run] : runs) out.push_back({seq, first, first + run.rows()});
  return out;
}

}  // namespace zb::reference
