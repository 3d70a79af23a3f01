#pragma once
// Where each op of a plan read from JSON stands in the file (docs/PLAN_FORMAT.md, "Runs"). An op's id is its
// position in the rank's expanded list, but in a compact file one entry may be a run standing for many ops,
// so entry ranks[r].ops[e] is not op e. Checks made after reading (`run --plan`'s sizes) name an op where
// the file wrote it, in the reader's own words:
//   ranks[3].ops[7]            an op written whole: entry 7 of rank 3's ops;
//   ranks[3].ops[5].ops[1]@4   repetition 4 of op 1 of the run that is entry 5 (`@m` only for m ≥ 1).
// Only runs are recorded: between them, entries and ids advance together, so a plan without runs (the full
// form) costs nothing and every op's path is ranks[r].ops[id].
#include <cstddef>
#include <string>
#include <vector>

namespace zb::plan {

class OpSources {
 public:
  // Where op `id` of a rank is: entry `entry` of its ops, and in a run, op `op` of repetition `repetition`.
  struct Place {
    std::size_t entry = 0;
    bool in_run = false;
    std::size_t op = 0;
    std::size_t repetition = 0;
  };

  // Records that entry `entry` of rank `rank`'s ops is a run of `repeats` repetitions of `period` ops, the
  // first with id `first_id`. A rank's runs are recorded in file order.
  void add_run(int rank, std::size_t entry, std::size_t first_id, std::size_t period, std::size_t repeats);

  [[nodiscard]] Place place_of(int rank, std::size_t id) const;
  // The JSON path of op `id` of rank `rank` as the file wrote it: "ranks[3].ops[7]",
  // "ranks[3].ops[5].ops[1]@4".
  [[nodiscard]] std::string path_of(int rank, std::size_t id) const;

 private:
  struct Run {
    std::size_t entry, first_id, period, repeats;
  };
  std::vector<std::vector<Run>> runs_;  // per rank, in file order (so by first_id)
};

}  // namespace zb::plan
