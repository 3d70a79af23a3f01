#pragma once
// Internal to the plan JSON forms: what a run may vary, shared by the writer that folds ops into runs
// (plan_json_runs.cpp) and the reader that expands them (plan_runs_from_json.cpp).
//
// A run is `{"run": n, "ops": [k ops], "vary": [k objects]}`: the k ops repeated n times. `ops` holds the
// first repetition as ordinary ops; vary[j] maps each field of op j that changes to a series, the values of
// repetitions 1..n−1 (docs/PLAN_FORMAT.md, "Runs"):
//   {"by": d}                   v0 + m·d (integers; for `deps`, every element);
//   {"by": d, "within": [a, b]} the same, wrapped into [a, b): a ring's KV owner, stepping back through the
//                               group's ranks;
//   [v1, ..., vn−1]             listed;
//   {"runs": [[v, c], ...]}     listed as runs of c equal values (pairs, q_tokens: equal for most steps).
// Every field not in vary[j] is the same in all repetitions, and an op's id is its position in the
// expanded list, as everywhere.
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace zb::plan::detail {

// Every number an op prints except its id, and its deps. `kv_rank` is the zigzag form's
// (`zigzag.kv_rank`), the one field a ring step changes that sits in a nested object.
inline constexpr std::array<std::string_view, 18> run_fields{
    "micro_batch", "group", "step",     "seq",       "peer",     "tag", "bytes", "kv_owner", "kv_rank",
    "pairs",       "calls", "q_tokens", "bytes_out", "bytes_in", "m",   "n",     "k",        "deps"};

// A run folds at least this many repetitions (fewer read better as plain ops) of at most this many ops.
inline constexpr int min_run_repeats = 3;
inline constexpr int max_run_period = 8;
// At most this many repetitions, and steps of at most this size (no plan needs more; the bounds keep a
// run's arithmetic exact).
inline constexpr std::int64_t max_run_repeats = std::int64_t{1} << 24;
inline constexpr std::int64_t max_run_step = std::int64_t{1} << 53;

// The value of run field `field` in an op's JSON, or nullptr when the op has none.
template <typename Json>
Json* run_field(Json& op, std::string_view field) {
  if (!op.is_object()) return nullptr;
  if (field == "kv_rank") {
    const auto z = op.find("zigzag");
    if (z == op.end() || !z->is_object()) return nullptr;
    const auto v = z->find("kv_rank");
    return v == z->end() ? nullptr : &*v;
  }
  const auto v = op.find(std::string(field));
  return v == op.end() ? nullptr : &*v;
}

// 128-bit arithmetic, so that m·by and its wrap never overflow (m < 2^24, |by| <= 2^53).
__extension__ typedef __int128 wide_int;

// Repetition m's value of a stepped series: v0 + m·by, wrapped into [within.first, within.second) when
// given; nullopt when it leaves int64, or v0 lies outside the wrap range. Shared by the writer (which keeps
// a series only when it reproduces every value) and the reader.
[[nodiscard]] inline std::optional<std::int64_t> stepped_value(
    std::int64_t v0, std::int64_t m, std::int64_t by,
    std::optional<std::pair<std::int64_t, std::int64_t>> within) {
  const wide_int moved = static_cast<wide_int>(m) * by;
  if (!within) {
    const wide_int v = static_cast<wide_int>(v0) + moved;
    if (v > INT64_MAX || v < INT64_MIN) return std::nullopt;
    return static_cast<std::int64_t>(v);
  }
  const auto [lo, hi] = *within;
  if (hi <= lo || v0 < lo || v0 >= hi) return std::nullopt;
  const wide_int span = static_cast<wide_int>(hi) - lo;
  wide_int offset = (static_cast<wide_int>(v0) - lo + moved) % span;
  if (offset < 0) offset += span;
  return static_cast<std::int64_t>(lo + offset);
}

// The JSON of a series for `values` (repetition 0's value first), or null when all are the same; `deps`
// when the values are dep lists. Defined in plan_json_series.cpp.
nlohmann::ordered_json series_json(const std::vector<const nlohmann::ordered_json*>& values, bool deps);

}  // namespace zb::plan::detail
