#include "core/strategies/hydraulis_milp.hpp"

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <numeric>

#ifndef ZB_HAVE_CBC
#define ZB_HAVE_CBC 0
#endif

#if ZB_HAVE_CBC
#include <Cbc_C_Interface.h>

#include <memory>
#include <mutex>
#include <string>
#endif

namespace zb {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// The largest bin's Σ time, summed in item order, so that one packing always gets one value.
double makespan_of(const MinMaxPackingProblem& p, const std::vector<int>& bin_of) {
  if (bin_of.empty()) return 0.0;
  std::vector<double> load(static_cast<std::size_t>(p.bins), 0.0);
  for (std::size_t i = 0; i < bin_of.size(); ++i) load[static_cast<std::size_t>(bin_of[i])] += p.times[i];
  return *std::max_element(load.begin(), load.end());
}

// Whether `bin_of` places every item in a bin without exceeding any capacity, checked in exact integers
// (CBC's own checks allow a tolerance).
bool is_packing(const MinMaxPackingProblem& p, const std::vector<int>& bin_of) {
  if (p.bins < 1 || p.tokens.size() != p.times.size() || bin_of.size() != p.times.size()) return false;
  std::vector<std::int64_t> used(static_cast<std::size_t>(p.bins), 0);
  for (std::size_t i = 0; i < bin_of.size(); ++i) {
    if (bin_of[i] < 0 || bin_of[i] >= p.bins) return false;
    used[static_cast<std::size_t>(bin_of[i])] += p.tokens[i];
  }
  return std::all_of(used.begin(), used.end(), [&](std::int64_t u) { return u <= p.capacity; });
}

#if ZB_HAVE_CBC

// Replaces the answer with `bin_of` only when it is a packing and strictly better, so that ties keep
// the incumbent and the answer is never worse than it.
bool offer(const MinMaxPackingProblem& p, MinMaxPackingResult& out, std::vector<int> bin_of) {
  if (!is_packing(p, bin_of)) return false;
  const double makespan = makespan_of(p, bin_of);
  if ((out.bin_of.empty() && !p.times.empty()) || makespan < out.makespan)
    out.bin_of = std::move(bin_of), out.makespan = makespan;
  return true;
}

// Cbc_solve runs CbcMain1, which keeps its settings in static variables (CBC's own source says the calls
// are not thread-safe), so solves from several threads take turns.
std::mutex cbc_mutex;

struct ModelDeleter {
  void operator()(Cbc_Model* m) const { Cbc_deleteModel(m); }
};

void solve_with_cbc(const MinMaxPackingProblem& p, Clock::time_point start, double limit, int node_limit,
                    MinMaxPackingResult& out) {
  const std::size_t n = p.times.size();
  const auto v = static_cast<std::size_t>(p.bins);
  const std::int64_t total_tokens = std::accumulate(p.tokens.begin(), p.tokens.end(), std::int64_t{0});
  const bool too_big = std::any_of(p.tokens.begin(), p.tokens.end(), [&](auto t) { return t > p.capacity; });
  if (too_big || total_tokens > p.capacity * p.bins) {  // no packing exists: nothing to search
    out.optimal = out.bin_of.empty();
    return;
  }
  if (n <= v) {
    // One item per bin fits (every item fits alone) and reaches the lower bound max_i times_i.
    std::vector<int> alone(n);
    std::iota(alone.begin(), alone.end(), 0);
    offer(p, out, std::move(alone));
    out.optimal = true;
    return;
  }
  // A lower bound on any packing's makespan: the longest item, and the mean load.
  const double total_time = std::accumulate(p.times.begin(), p.times.end(), 0.0);
  const double bound = std::max(*std::max_element(p.times.begin(), p.times.end()), total_time / p.bins);
  if (!out.bin_of.empty() && out.makespan <= bound) {
    out.optimal = true;  // the incumbent meets the bound
    return;
  }
  if (seconds_since(start) >= limit) {
    out.timed_out = true;
    return;
  }

  // Items in descending time (then tokens), the order the symmetry breaking below refers to: position k
  // holds item order[k]. The costliest items come first, so the bins' first items, which the search
  // branches on early, are the ones that shape the makespan.
  std::vector<int> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    const auto ia = static_cast<std::size_t>(a), ib = static_cast<std::size_t>(b);
    return p.times[ia] != p.times[ib] ? p.times[ia] > p.times[ib] : p.tokens[ia] > p.tokens[ib];
  });
  // Times in units of the lower bound, so that z is about 1 whatever the time scale (seconds per layer
  // are small, and CBC's tolerances are absolute).
  const double scale = bound > 0 ? bound : 1.0;

  // Symmetry breaking. Bins are interchangeable (same capacity, same cost), so every packing has up to v!
  // labellings and the search would prove each bound once per labelling. Label the non-empty bins in
  // the order of their first item in `order`: bin 0 then holds item order[0], and bin b's first item
  // comes after those of bins 0..b − 1, so it sits at position b or later. Hence item k never needs a
  // bin above k, and the columns o[k][b] with b > k are left out. Every packing has such a labelling,
  // so the optimum survives. (Forcing that labelling exactly, with rows o[k][b] ≤ Σ_{j<k} o[j][b − 1],
  // adds O(n²v) nonzeros and measured slower on 12–16 items than this alone.)
  const std::lock_guard lock(cbc_mutex);
  const std::unique_ptr<Cbc_Model, ModelDeleter> model(Cbc_newModel());
  Cbc_Model* m = model.get();
  Cbc_setLogLevel(m, 0);  // CBC prints its progress to stdout otherwise

  std::string name;
  Cbc_addCol(m, "z", bound / scale, 1e30, 1.0, 0, 0, nullptr, nullptr);  // column 0: the makespan
  std::vector<std::vector<int>> col(n);                                  // col[k][b]: o[order[k]][b]
  for (std::size_t k = 0; k < n; ++k) {
    for (std::size_t b = 0; b <= std::min(k, v - 1); ++b) {
      col[k].push_back(Cbc_getNumCols(m));
      name = "o_" + std::to_string(k) + "_" + std::to_string(b);
      Cbc_addCol(m, name.c_str(), 0.0, 1.0, 0.0, 1, 0, nullptr, nullptr);
    }
  }
  std::vector<int> idx;
  std::vector<double> coef;
  auto add_row = [&](const std::string& kind, std::size_t i, char sense, double rhs) {
    name = kind + std::to_string(i);
    Cbc_addRow(m, name.c_str(), static_cast<int>(idx.size()), idx.data(), coef.data(), sense, rhs);
    idx.clear(), coef.clear();
  };
  for (std::size_t k = 0; k < n; ++k) {  // each item in exactly one bin
    for (const int c : col[k]) idx.push_back(c), coef.push_back(1.0);
    add_row("one_", k, 'E', 1.0);
  }
  for (std::size_t b = 0; b < v; ++b) {
    // z ≥ the bin's time.
    for (std::size_t k = b; k < n; ++k)
      idx.push_back(col[k][b]), coef.push_back(p.times[static_cast<std::size_t>(order[k])] / scale);
    idx.push_back(0), coef.push_back(-1.0);
    add_row("time_", b, 'L', 0.0);
    // The bin's tokens within the capacity; token counts are integers, exact in a double.
    std::int64_t reachable = 0;
    for (std::size_t k = b; k < n; ++k) {
      const std::int64_t t = p.tokens[static_cast<std::size_t>(order[k])];
      idx.push_back(col[k][b]), coef.push_back(static_cast<double>(t)), reachable += t;
    }
    if (reachable > p.capacity) {
      add_row("cap_", b, 'L', static_cast<double>(p.capacity));
    } else {
      idx.clear(), coef.clear();  // every item it may hold fits at once: the row could never bind
    }
  }

  // The incumbent as CBC's first solution, relabelled by first item in `order` so that the symmetry
  // breaking admits it: CBC then prunes every node that cannot beat it from the start.
  if (!out.bin_of.empty()) {
    std::vector<int> label(v, -1);
    int next = 0;
    std::vector<int> start_cols;
    std::vector<double> loads(v, 0.0);
    for (std::size_t k = 0; k < n; ++k) {
      const auto item = static_cast<std::size_t>(order[k]);
      int& b = label[static_cast<std::size_t>(out.bin_of[item])];
      if (b < 0) b = next++;
      start_cols.push_back(col[k][static_cast<std::size_t>(b)]);
      loads[static_cast<std::size_t>(b)] += p.times[item] / scale;
    }
    std::vector<double> values(start_cols.size(), 1.0);
    start_cols.push_back(0), values.push_back(*std::max_element(loads.begin(), loads.end()));
    Cbc_setMIPStartI(m, static_cast<int>(start_cols.size()), start_cols.data(), values.data());
  }

  // Wall-clock time, not CBC's default of CPU time, and what is left of the caller's limit.
  Cbc_setParameter(m, "timeMode", "elapsed");
  // Two settings keep CBC within the limit, which it checks only between nodes: root cut generation and,
  // on models under 500 rows + columns, "complete fathoming" (whole subtrees solved inside Clp) both
  // overran it, the latter by up to 1.9 s on a 0.5 s limit with 60 items and 6 bins (Cbc issue #487);
  // depthMiniBab -999 turns it off. Cuts barely raise this LP's bound (the mean load) anyway: without
  // them, 12 to 16 items proved optimal sooner, and 20 to 60 items found better packings within 0.5 s.
  // CBC stays single-threaded, its default.
  Cbc_setParameter(m, "cuts", "off");
  Cbc_setParameter(m, "depthMiniBab", "-999");
  Cbc_setMaximumSeconds(m, std::max(1e-3, limit - seconds_since(start)));
  // The node limit is the deterministic budget: a search it stops ends at the same node on every machine.
  if (node_limit > 0) Cbc_setMaximumNodes(m, node_limit);
  Cbc_solve(m);

  const double* x = Cbc_bestSolution(m);
  bool found = false;
  if (x != nullptr) {
    std::vector<int> bin_of(n, -1);
    for (std::size_t k = 0; k < n; ++k) {
      for (std::size_t b = 0; b < col[k].size(); ++b) {
        if (x[col[k][b]] > 0.5) bin_of[static_cast<std::size_t>(order[k])] = static_cast<int>(b);
      }
    }
    found = offer(p, out, std::move(bin_of));
  }
  // A proof counts only when the bound has met the solution (z is about 1 here): CBC has been seen to
  // report optimality after stopping on a limit (Cbc issue #364).
  const bool proven =
      Cbc_isProvenOptimal(m) != 0 && Cbc_getBestPossibleObjValue(m) >= Cbc_getObjValue(m) - 1e-9;
  if (proven) {
    out.optimal = found;  // the optimum, or the incumbent when it was as good
  } else if (Cbc_isProvenInfeasible(m) != 0) {
    out.optimal = out.bin_of.empty();  // proven that no packing exists
  }
  out.timed_out = !out.optimal && Cbc_isSecondsLimitReached(m) != 0;
  out.node_limited = !out.optimal && Cbc_isNodeLimitReached(m) != 0;
}

#endif  // ZB_HAVE_CBC

}  // namespace

MinMaxPackingResult solve_min_max_packing(const MinMaxPackingProblem& problem,
                                          const std::vector<int>& incumbent, double time_limit_seconds,
                                          int node_limit) {
  const auto start = Clock::now();
  MinMaxPackingResult out;
  if (is_packing(problem, incumbent)) out.bin_of = incumbent, out.makespan = makespan_of(problem, incumbent);
#if ZB_HAVE_CBC
  if (problem.bins >= 1 && problem.tokens.size() == problem.times.size()) {
    if (problem.times.empty()) {
      out.optimal = true;  // nothing to place: the empty packing
    } else {
      solve_with_cbc(problem, start, time_limit_seconds, node_limit, out);
    }
  }
#else
  (void)time_limit_seconds;
  (void)node_limit;
#endif
  out.seconds = seconds_since(start);
  return out;
}

bool min_max_packing_solver_available() {
  return ZB_HAVE_CBC != 0;
}

}  // namespace zb
