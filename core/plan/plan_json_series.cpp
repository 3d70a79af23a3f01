// How a run prints one field's values across its repetitions (plan_runs.hpp): the shortest series that
// reproduces every value exactly. On a ring of P ranks the step, tag and deps advance by a constant, the
// KV owner steps back through the group's ranks and wraps, pairs and q_tokens are equal for all but a few
// steps (runs), and the KV bytes of each owner are listed: measured on ring CP over 1024 GPUs, listing all
// of them was 80 MB, these forms 30 (docs/PLAN_FORMAT.md, "Size").
#include <algorithm>
#include <cstring>
#include <map>

#include "core/plan/plan_json_writer.hpp"
#include "core/plan/plan_runs.hpp"

namespace zb::plan::detail {
namespace {

bool same_value(const ojson& a, const ojson& b) {
  if (a.is_number_float() && b.is_number_float()) {
    // Bitwise, so that 0.0 and -0.0 (printed differently) are not taken for one another.
    const double x = a.get<double>(), y = b.get<double>();
    return std::memcmp(&x, &y, sizeof x) == 0;
  }
  return a.type() == b.type() && a == b;
}

bool signed_integers(const std::vector<const ojson*>& values) {
  return std::all_of(values.begin(), values.end(),
                     [](const ojson* v) { return v->is_number_integer() && !v->is_number_unsigned(); });
}

// Whether v0 + m·by (wrapped into `within` when given) is values[m] for every m.
bool reproduces(const std::vector<std::int64_t>& values, std::int64_t by,
                std::optional<std::pair<std::int64_t, std::int64_t>> within) {
  for (std::size_t m = 1; m < values.size(); ++m) {
    if (stepped_value(values[0], static_cast<std::int64_t>(m), by, within) != values[m]) return false;
  }
  return true;
}

// The difference b − a when it is a step the reader takes (|d| <= max_run_step).
std::optional<std::int64_t> step_between(std::int64_t a, std::int64_t b) {
  const wide_int d = static_cast<wide_int>(b) - a;
  if (d > max_run_step || d < -max_run_step) return std::nullopt;
  return static_cast<std::int64_t>(d);
}

// {"by": d} or {"by": d, "within": [lo, hi]} for integers, when one reproduces them.
ojson stepped_series(const std::vector<std::int64_t>& v) {
  const auto first_step = step_between(v[0], v[1]);
  if (first_step && reproduces(v, *first_step, std::nullopt)) return {{"by", *first_step}};
  // Wrapping: the step is the most common difference (the wrap is the odd one), the range from the
  // smallest value to one step past the largest: the cycle a ring walks through its group's ranks.
  std::map<std::int64_t, int> steps;
  for (std::size_t m = 1; m < v.size(); ++m) {
    const auto d = step_between(v[m - 1], v[m]);
    if (!d) return nullptr;
    ++steps[*d];
  }
  const std::int64_t by = std::max_element(steps.begin(), steps.end(), [](const auto& a, const auto& b) {
                            return a.second < b.second;
                          })->first;
  const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
  const wide_int end = static_cast<wide_int>(*hi) + (by < 0 ? -static_cast<wide_int>(by) : by);
  if (by == 0 || end > INT64_MAX) return nullptr;
  const std::pair<std::int64_t, std::int64_t> within{*lo, static_cast<std::int64_t>(end)};
  if (reproduces(v, by, within)) return {{"by", by}, {"within", {within.first, within.second}}};
  return nullptr;
}

// The later values, listed or as runs of equal values, whichever prints shorter.
ojson listed_series(const std::vector<const ojson*>& values) {
  ojson listed = ojson::array();
  ojson runs = ojson::array();
  for (std::size_t m = 1; m < values.size(); ++m) {
    listed.push_back(*values[m]);
    if (!runs.empty() && same_value(runs.back()[0], *values[m])) {
      runs.back()[1] = runs.back()[1].get<std::size_t>() + 1;
    } else {
      runs.push_back({*values[m], 1});
    }
  }
  ojson as_runs{{"runs", std::move(runs)}};
  return as_runs.dump().size() < listed.dump().size() ? as_runs : listed;
}

}  // namespace

ojson series_json(const std::vector<const ojson*>& values, bool deps) {
  const bool constant = std::all_of(values.begin(), values.end(), [&](const ojson* v) {
    return deps ? *v == *values[0] : same_value(*v, *values[0]);
  });
  if (constant) return nullptr;
  if (deps) {
    // One step for every element: each dep moves on by the same number of ops per repetition.
    std::optional<std::int64_t> step;
    for (std::size_t e = 0; e < values[0]->size(); ++e) {
      std::vector<const ojson*> column;
      for (const ojson* v : values) column.push_back(&(*v)[e]);
      if (!signed_integers(column)) return listed_series(values);
      std::vector<std::int64_t> ints;
      for (const ojson* v : column) ints.push_back(v->get<std::int64_t>());
      const auto d = step_between(ints[0], ints[1]);
      if (!d || (step && *step != *d) || !reproduces(ints, *d, std::nullopt)) return listed_series(values);
      step = d;
    }
    return {{"by", step.value_or(0)}};
  }
  if (signed_integers(values)) {
    std::vector<std::int64_t> ints;
    for (const ojson* v : values) ints.push_back(v->get<std::int64_t>());
    if (ojson s = stepped_series(ints); !s.is_null()) return s;
  }
  return listed_series(values);
}

}  // namespace zb::plan::detail
