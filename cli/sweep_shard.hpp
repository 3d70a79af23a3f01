#pragma once
// A sweep (`run` over several scenarios) spread over processes: which share of the scenarios this process
// runs, and how its results are found by the process that writes the combined table. docs/SCENARIOS.md
// ("Sweeps over several processes") is the user's side; cli/run_many.cpp decides when a sweep is spread.
//
// The share is round-robin over the sweep's path order: shard I of N runs the scenarios at positions
// I, I + N, I + 2N, ... A library's names sort by cluster, then size, so neighbours differ and round-robin
// spreads the axes over the shards; an estimate of each scenario's cost would be one more model to keep
// true, and the order is the same on every machine without one.
#include <cstddef>
#include <filesystem>
#include <string>
#include <thread>

#include "core/exec/launch/launcher.hpp"

namespace zb::cli {

struct SweepShard {
  int index = 0;
  int count = 1;
  // The launcher's ranks spread the sweep (rank 0 then waits for the others and writes the table), as
  // against `--shard`, where each shard is its own command and `--combine` writes the table later.
  bool ranks = false;
  std::string label;  // "rank 1 of 2" or "shard 1 of 4": how the table and the messages name it
};

// `--shard I/N` (0 <= I < N) or `--shard slurm-array` (the task's place in its Slurm job array:
// SLURM_ARRAY_TASK_ID - SLURM_ARRAY_TASK_MIN over SLURM_ARRAY_TASK_STEP, of SLURM_ARRAY_TASK_COUNT).
// Throws zb::Error (exit 2) naming the flag or the variable: not a fraction, I out of range, outside a
// job array, or an array whose IDs are not one evenly stepped range.
[[nodiscard]] SweepShard parse_shard_flag(const std::string& text, const EnvLookup& env);

// The launcher's ranks as shards: rank R of W is shard R of W.
[[nodiscard]] SweepShard rank_shard(const Launch& launch);

// Whether the scenario at `position` of the sweep's list is this shard's.
[[nodiscard]] bool in_shard(std::size_t position, const SweepShard& shard);

// The launcher's name for this job (PMIX_NAMESPACE, OMPI_MCA_ess_base_jobid, SLURM_JOB_ID.SLURM_STEP_ID),
// "" when it gives none: rank 0 takes only results of its own job, not an earlier job's left in the folder.
[[nodiscard]] std::string launch_identity(const EnvLookup& env);

// `folder`/sweep-shard-I-of-N.json: the shard's results (cli/sweep_summary.hpp).
[[nodiscard]] std::filesystem::path shard_summary_path(const std::filesystem::path& folder, int index,
                                                       int count);
// `folder`/sweep-shard-I-of-N.alive: a counter its rank rewrites every second while it runs.
[[nodiscard]] std::filesystem::path shard_heartbeat_path(const std::filesystem::path& folder, int index,
                                                         int count);

// Makes the folder ready for this shard's files: removes this shard's earlier summary and heartbeat, and
// every shard file of a sweep of another shard count (never part of this sweep).
void clear_shard_files(const std::filesystem::path& folder, const SweepShard& shard);

// The shard count of the summaries in `folder` (for `--combine`). Exit 2 when there are none, or files
// of sweeps of different counts.
[[nodiscard]] int shard_count_in(const std::filesystem::path& folder);

// Rewrites the shard's heartbeat file every second from its own thread (open, write, close: no lock a
// forked SimGrid child could inherit held) until destroyed.
class Heartbeat {
 public:
  Heartbeat(const std::filesystem::path& folder, const SweepShard& shard);
  ~Heartbeat();
  Heartbeat(const Heartbeat&) = delete;
  Heartbeat& operator=(const Heartbeat&) = delete;

 private:
  std::string path_;
  std::jthread thread_;
};

}  // namespace zb::cli
