#include "core/plan/op_sources.hpp"

#include <algorithm>
#include <iterator>

namespace zb::plan {

void OpSources::add_run(int rank, std::size_t entry, std::size_t first_id, std::size_t period,
                        std::size_t repeats) {
  if (rank < 0 || period == 0 || repeats == 0) return;
  if (runs_.size() <= static_cast<std::size_t>(rank)) runs_.resize(static_cast<std::size_t>(rank) + 1);
  runs_[static_cast<std::size_t>(rank)].push_back({entry, first_id, period, repeats});
}

OpSources::Place OpSources::place_of(int rank, std::size_t id) const {
  if (rank < 0 || static_cast<std::size_t>(rank) >= runs_.size()) return {.entry = id};
  const std::vector<Run>& runs = runs_[static_cast<std::size_t>(rank)];
  // The last run that starts at or before the op.
  const auto after = std::upper_bound(runs.begin(), runs.end(), id,
                                      [](std::size_t value, const Run& run) { return value < run.first_id; });
  if (after == runs.begin()) return {.entry = id};  // no run before it: entries and ids agree
  const Run& run = *std::prev(after);
  const std::size_t offset = id - run.first_id;
  if (offset < run.period * run.repeats)
    return {.entry = run.entry, .in_run = true, .op = offset % run.period, .repetition = offset / run.period};
  // Past the run, each op is one entry again.
  return {.entry = run.entry + 1 + (offset - run.period * run.repeats)};
}

std::string OpSources::path_of(int rank, std::size_t id) const {
  const Place place = place_of(rank, id);
  std::string path = "ranks[" + std::to_string(rank) + "].ops[" + std::to_string(place.entry) + "]";
  if (!place.in_run) return path;
  path += ".ops[" + std::to_string(place.op) + "]";
  if (place.repetition > 0) path += "@" + std::to_string(place.repetition);
  return path;
}

}  // namespace zb::plan
