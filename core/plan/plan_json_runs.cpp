// A rank's op list in the compact form: stretches that repeat a pattern of up to max_run_period ops are
// printed once, with how each field changes per repetition (plan_runs.hpp). A ring's steps are the case
// this is for: each step is (recv, send, attention) with the same kinds, peers and keys, and only the
// step, tag, deps (+3 per step), the KV owner and the sizes change, so a ring over P ranks costs every
// rank its P−1 steps' irregular numbers instead of 3(P−1) whole ops.
#include <string>
#include <unordered_map>

#include "core/plan/plan_json_writer.hpp"
#include "core/plan/plan_runs.hpp"

namespace zb::plan::detail {
namespace {

// What must be equal for two ops to be repetitions of one another: the op without its id and with the
// run fields' values blanked (their presence stays), deps reduced to their count. Interned per rank, so
// comparing two ops is comparing two integers.
std::string shape_of(const ojson& op) {
  ojson s = op;
  s.erase("id");
  for (const std::string_view f : run_fields) {
    if (ojson* v = run_field(s, f)) *v = f == "deps" ? ojson(v->size()) : ojson(nullptr);
  }
  return s.dump();
}

// How field `f` of the run's op j changes: null when it does not.
ojson series_of(const std::vector<ojson>& printed, std::size_t first, int period, int repeats, int j,
                std::string_view f) {
  std::vector<const ojson*> values;
  for (int m = 0; m < repeats; ++m) {
    const ojson* v = run_field(printed[first + static_cast<std::size_t>(m * period + j)], f);
    if (v == nullptr) return nullptr;  // the op has no such field (shapes are equal: none has)
    values.push_back(v);
  }
  return series_json(values, f == "deps");
}

ojson run_json(const std::vector<ojson>& printed, std::size_t first, int period, int repeats) {
  ojson ops = ojson::array();
  ojson vary = ojson::array();
  bool varies = false;
  for (int j = 0; j < period; ++j) {
    ops.push_back(printed[first + static_cast<std::size_t>(j)]);
    ojson fields = ojson::object();
    for (const std::string_view f : run_fields) {
      ojson s = series_of(printed, first, period, repeats, j, f);
      if (!s.is_null()) fields[std::string(f)] = std::move(s);
    }
    varies = varies || !fields.empty();
    vary.push_back(std::move(fields));
  }
  ojson run{{"run", repeats}, {"ops", std::move(ops)}};
  if (varies) run["vary"] = std::move(vary);
  return run;
}

struct Fold {
  int period = 1;
  int repeats = 1;
};

// The longest stretch from `first` that repeats a pattern of up to max_run_period ops at least
// min_run_repeats times (ties: the shorter pattern).
Fold best_fold(const std::vector<int>& shapes, std::size_t first) {
  Fold best;
  for (int k = 1; k <= max_run_period; ++k) {
    const auto period = static_cast<std::size_t>(k);
    int repeats = 1;
    for (std::size_t next = first + period; next + period <= shapes.size() && repeats < max_run_repeats;
         next += period, ++repeats) {
      bool same = true;
      for (std::size_t j = 0; j < period && same; ++j) same = shapes[next + j] == shapes[first + j];
      if (!same) break;
    }
    if (repeats >= min_run_repeats && repeats * k > best.repeats * best.period) best = {k, repeats};
  }
  return best;
}

}  // namespace

void write_ops(JsonSink& sink, const std::vector<Op>& ops, Detail detail) {
  std::vector<ojson> printed;
  printed.reserve(ops.size());
  for (const Op& op : ops) printed.push_back(op_json(op, detail));
  if (detail != Detail::compact) {
    for (ojson& op : printed) sink.value("", std::move(op));
    return;
  }
  std::unordered_map<std::string, int> interned;
  std::vector<int> shapes;
  shapes.reserve(printed.size());
  for (const ojson& op : printed) {
    shapes.push_back(interned.emplace(shape_of(op), static_cast<int>(interned.size())).first->second);
  }
  for (std::size_t i = 0; i < printed.size();) {
    const Fold fold = best_fold(shapes, i);
    if (fold.repeats >= min_run_repeats) {
      sink.value("", run_json(printed, i, fold.period, fold.repeats));
      i += static_cast<std::size_t>(fold.period * fold.repeats);
    } else {
      sink.value("", std::move(printed[i]));
      ++i;
    }
  }
}

}  // namespace zb::plan::detail
