#pragma once
// Hydraulis's stage 2 packing solved as the MILP Hetu solves (examples/hydraulis/strategy/new_dynamic.py,
// `solve_v_micro_batches`, PuLP/CBC with a time limit per solve): items with a time and a token size go
// into v bins of a token capacity, minimising the largest bin time. Here CBC is called through its C API
// when the build has it (ZB_HAVE_CBC), warm-started from a heuristic packing, and never returns anything
// worse than that packing.
#include <cstdint>
#include <vector>

namespace zb {

// One min-max packing problem: items with a time (≥ 0) and a token size, `bins` bins of `capacity`
// tokens each.
struct MinMaxPackingProblem {
  std::vector<double> times;
  std::vector<std::int64_t> tokens;
  int bins = 1;
  std::int64_t capacity = 0;
};

struct MinMaxPackingResult {
  std::vector<int> bin_of;  // the bin of each item, or empty when no packing was found
  double makespan = 0;      // the largest bin's Σ time of `bin_of` (0 when empty)
  // Proven optimal within the time limit; with an empty `bin_of`, proven that no packing exists.
  bool optimal = false;
  bool timed_out = false;     // the time limit stopped the search before it proved optimality
  bool node_limited = false;  // the node limit stopped it
  double seconds = 0;         // wall time spent in the call
};

// Solves the problem with CBC: binary o[i][b], Σ_b o[i][b] = 1, Σ_i tokens_i o[i][b] ≤ capacity,
// z ≥ Σ_i times_i o[i][b], minimise z. `incumbent` (a feasible assignment, e.g. LPT's; may be empty, and
// is ignored when it is not a feasible packing) is handed to CBC as its starting solution. The search
// stops after `time_limit_seconds` of wall time. Returns the best packing found, never worse than the
// incumbent: the incumbent itself when CBC finds nothing better, fails, or is not built in.
// `node_limit` (> 0) bounds the branch-and-bound nodes: deterministic, so a search it stops gives the same
// packing on every machine, where one cut short by the time limit returns whatever it had reached by
// then (machine-dependent). Callers that need reproducible plans set a node limit well inside the time.
[[nodiscard]] MinMaxPackingResult solve_min_max_packing(const MinMaxPackingProblem& problem,
                                                        const std::vector<int>& incumbent,
                                                        double time_limit_seconds, int node_limit = 0);

// Whether the build has CBC (ZB_HAVE_CBC); without it, solve_min_max_packing returns the incumbent with
// optimal = false.
[[nodiscard]] bool min_max_packing_solver_available();

}  // namespace zb
