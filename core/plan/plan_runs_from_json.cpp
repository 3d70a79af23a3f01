// plan::from_json, a run of ops (plan_runs.hpp): the run is checked as a whole first (its count, its ops,
// and each varied field against its op), then every repetition is built as the op JSON it stands for and
// read like any other op, so a run is held to exactly the rules of the ops it abbreviates. A repetition's
// problems are named `ranks[r].ops[i].ops[j]@m.key`: op j of the run at ranks[r].ops[i], in repetition m.
#include <algorithm>
#include <limits>
#include <optional>

#include "core/plan/plan_reader.hpp"
#include "core/plan/plan_runs.hpp"

namespace zb::plan::detail {
namespace {

using nlohmann::json;

std::vector<std::string_view> run_field_names() {
  return {run_fields.begin(), run_fields.end()};
}

std::optional<std::int64_t> as_int64(const json& v) {
  if (!v.is_number_integer()) return std::nullopt;
  if (v.is_number_unsigned() &&
      v.get<std::uint64_t>() > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
    return std::nullopt;
  return v.get<std::int64_t>();
}

// How a field changes: a step (wrapped or not) added per repetition, or the values of repetitions 1..n−1.
struct Series {
  std::string field;
  std::int64_t by = 0;
  std::optional<std::pair<std::int64_t, std::int64_t>> within;
  std::vector<const json*> later;  // listed values (runs expanded); empty for a step
};

// The numbers a step moves: the value, or every element of a dep list. Empty (and reported) when one is
// not an integer.
std::vector<std::int64_t> stepped_bases(const PlanReader& r, const json& base, const Series& s,
                                        const std::string& path) {
  std::vector<std::int64_t> out;
  for (const json& e : s.field == "deps" && base.is_array() ? base : json::array({base})) {
    const auto v = as_int64(e);
    if (!v) {
      r.context().add(
          path, "a step (\"by\") needs integers, but the op's " + s.field + " is " + describe_json(base),
          "list the later values instead");
      return {};
    }
    out.push_back(*v);
  }
  return out;
}

// {"by": d, "within"?: [lo, hi]}, checked against the op's value (which must lie in [lo, hi)).
bool read_step(const PlanReader& r, const json& value, const std::string& path, const json& base, Series& s) {
  const ObjectReader o(value, path, r.context(), {"by", "within"});
  const auto by = r.integer(o, "by", -max_run_step, max_run_step, true);
  if (!by) return false;
  s.by = *by;
  if (const json* within = o.get("within")) {
    std::int64_t lo = 0, hi = 0;
    bool pair = within->is_array() && within->size() == 2;
    if (pair) {
      const auto a = as_int64((*within)[0]), b = as_int64((*within)[1]);
      pair = a.has_value() && b.has_value();
      lo = a.value_or(0);
      hi = b.value_or(0);
    }
    if (!pair || hi <= lo) {
      r.context().add(o.path_of("within"),
                      "expected [low, high] with low < high, got " + describe_json(*within));
      return false;
    }
    s.within = std::pair{lo, hi};
  }
  const auto bases = stepped_bases(r, base, s, path);
  for (const std::int64_t b : bases) {
    if (s.within && (b < s.within->first || b >= s.within->second)) {
      r.context().add(o.path_of("within"),
                      "the op's " + s.field + " " + std::to_string(b) + " is outside the range it wraps in",
                      "the range is [low, high): low <= value < high");
      return false;
    }
  }
  return !bases.empty() || (s.field == "deps" && base.is_array() && base.empty());
}

// {"runs": [[value, count], ...]}: counts >= 1 that add up to the later repetitions.
bool read_value_runs(const PlanReader& r, const json& value, const std::string& path, std::int64_t later,
                     Series& s) {
  const ObjectReader o(value, path, r.context(), {"runs"});
  const json* runs = r.array(o, "runs", true);
  if (runs == nullptr) return false;
  std::int64_t total = 0;
  for (std::size_t i = 0; i < runs->size(); ++i) {
    const json& run = (*runs)[i];
    const auto count = run.is_array() && run.size() == 2 ? as_int64(run[1]) : std::nullopt;
    if (!count || *count < 1 || *count > later - total) {
      r.context().add(index_path(o.path_of("runs"), i),
                      "expected [value, count] with 1 <= count and the counts adding up to " +
                          std::to_string(later) + ", got " + describe_json(run));
      return false;
    }
    total += *count;
    s.later.insert(s.later.end(), static_cast<std::size_t>(*count), &run[0]);
  }
  if (total == later) return true;
  r.context().add(o.path_of("runs"), "the counts add up to " + std::to_string(total) + ", not " +
                                         std::to_string(later) + " (the repetitions after the first)");
  return false;
}

// One field's series, checked against the op's own value of it.
std::optional<Series> read_series(const PlanReader& r, const std::string& field, const json& value,
                                  const std::string& path, const json& base, std::int64_t repeats) {
  Series s;
  s.field = field;
  const std::int64_t later = repeats - 1;
  bool ok = false;
  if (value.is_object() && value.contains("runs")) {
    ok = read_value_runs(r, value, path, later, s);
  } else if (value.is_object()) {
    ok = read_step(r, value, path, base, s);
  } else if (value.is_array() && static_cast<std::int64_t>(value.size()) == later) {
    for (const json& v : value) s.later.push_back(&v);
    ok = true;
  } else {
    r.context().add(path,
                    "expected {\"by\": step}, {\"runs\": [[value, count], ...]} or an array of the values of "
                    "repetitions 1.." +
                        std::to_string(later) + ", got " + describe_json(value) +
                        (value.is_array() ? " of " + std::to_string(value.size()) : ""),
                    "the op itself holds repetition 0's value");
  }
  if (!ok) return std::nullopt;
  return s;
}

// Reads vary[j] against op j; returns nullopt after reporting what does not fit.
std::optional<std::vector<Series>> read_vary(const PlanReader& r, const json& vary, const std::string& path,
                                             const json& op, std::int64_t repeats) {
  const ObjectReader o(vary, path, r.context(), run_field_names());
  if (!o.valid()) return std::nullopt;
  std::vector<Series> out;
  bool ok = true;
  for (const auto& [field, value] : vary.items()) {
    if (std::find(run_fields.begin(), run_fields.end(), field) == run_fields.end()) continue;  // reported
    const json* base = run_field(op, field);
    if (base == nullptr) {
      r.context().add(o.path_of(field), "the op has no " + field + " to vary",
                      "give the field on the op itself, with repetition 0's value");
      ok = false;
      continue;
    }
    auto s = read_series(r, field, value, o.path_of(field), *base, repeats);
    ok = ok && s.has_value();
    if (s) out.push_back(std::move(*s));
  }
  if (!ok) return std::nullopt;
  return out;
}

// Repetition m of an op: the op with its series applied. Returns false (reported) when a step leaves the
// integers a plan holds.
bool apply(const PlanReader& r, json& op, const std::vector<Series>& series, std::int64_t m,
           const std::string& path) {
  for (const Series& s : series) {
    json& v = *run_field(op, s.field);
    if (!s.later.empty()) {
      v = *s.later[static_cast<std::size_t>(m - 1)];
      continue;
    }
    std::vector<json*> targets;  // a step moves every dep, or the one number
    if (s.field == "deps") {
      for (json& e : v) targets.push_back(&e);
    } else {
      targets.push_back(&v);
    }
    for (json* e : targets) {
      const auto next = stepped_value(e->get<std::int64_t>(), m, s.by, s.within);
      if (!next) {
        r.context().add(child_path(path, s.field), "repetition " + std::to_string(m) + " of " + e->dump() +
                                                       " by " + std::to_string(s.by) + " overflows");
        return false;
      }
      *e = *next;
    }
  }
  return true;
}

}  // namespace

std::size_t run_length(const json& run) {
  const auto n = run.find("run");
  const auto ops = run.find("ops");
  if (n == run.end() || ops == run.end() || !n->is_number_integer() || !ops->is_array()) return 0;
  // Parsed non-negative integers are unsigned; a giant one must not wrap to a small count.
  if (n->is_number_unsigned() && n->get<std::uint64_t>() > static_cast<std::uint64_t>(max_run_repeats))
    return 0;
  const auto repeats = n->get<std::int64_t>();
  if (repeats < 2 || repeats > max_run_repeats) return 0;
  return static_cast<std::size_t>(repeats) * ops->size();
}

void read_run(const PlanReader& r, const json& v, const std::string& path, int rank, std::size_t first_id,
              const Ref& ops, const Plan& plan, std::vector<Op>& out) {
  if (!r.schema_3_form(path, "a run of ops")) return;
  const ObjectReader o(v, path, r.context(), {"run", "ops", "vary"});
  const std::size_t problems = r.context().problems.size();
  const auto repeats = r.integer(o, "run", 2, max_run_repeats, true);
  const json* templates = r.array(o, "ops", true);
  if (templates != nullptr && templates->empty())
    r.context().add(o.path_of("ops"), "a run needs at least one op", "give the ops of its first repetition");
  const json* vary = r.array(o, "vary", false);
  const std::size_t period = templates == nullptr ? 0 : templates->size();
  if (vary != nullptr && vary->size() != period) {
    r.context().add(o.path_of("vary"),
                    "has " + std::to_string(vary->size()) + " entries for " + std::to_string(period) + " ops",
                    "give one object per op of the run");
  }
  if (r.context().problems.size() != problems) return;
  std::vector<std::vector<Series>> series(period);
  for (std::size_t j = 0; j < period; ++j) {
    if (vary == nullptr) continue;
    auto s = read_vary(r, (*vary)[j], index_path(o.path_of("vary"), j), (*templates)[j], *repeats);
    if (s) series[j] = std::move(*s);
  }
  if (r.context().problems.size() != problems) return;
  std::vector<std::string> op_paths;
  for (std::size_t j = 0; j < period; ++j) op_paths.push_back(index_path(o.path_of("ops"), j));
  for (std::int64_t m = 0; m < *repeats && !r.enough(); ++m) {
    const std::string repetition = m > 0 ? "@" + std::to_string(m) : "";
    for (std::size_t j = 0; j < period && !r.enough(); ++j) {
      const std::size_t id = first_id + static_cast<std::size_t>(m) * period + j;
      const std::string op_path = op_paths[j] + repetition;
      json op = (*templates)[j];
      if (m > 0 && !apply(r, op, series[j], m, op_path)) continue;
      // Repetition 0's id is the op's own, checked as any op's: its position in the expanded list.
      if (m > 0 && op.is_object() && op.contains("id")) op["id"] = id;
      out.push_back(read_op(r, op, op_path, rank, id, ops, plan));
    }
  }
}

}  // namespace zb::plan::detail
