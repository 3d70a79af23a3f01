#include "core/run/preflight.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>

#include "core/common/error.hpp"
#include "core/common/rng.hpp"
#include "core/config/units.hpp"
#include "core/workload/batch_record.hpp"
#include "core/workload/workload.hpp"

namespace zb {
namespace {

// Enough draws that the mean piece length is within a few per cent for every preset and distribution,
// few enough to cost nothing; a stream of its own, so the estimate never shifts an iteration's batch.
constexpr int kLengthSamples = 4096;
constexpr std::uint64_t kEstimateStream = 0x9E3779B97F4A7C15ULL;

// Bytes per unit, from peak resident memory of `run` on this tree (zeppelin and ring-cp, llama-7b on
// dgx-h200, one iteration): 1009 documents on 16 ranks took 78 MB, 8350 documents 380 MB (about 41 KB
// more per document), 128 ranks 195 MB (about 1 MB more per rank). Rounded down several-fold: the
// estimate is meant to refuse what certainly cannot fit, not to gate runs that might (docs/SCENARIOS.md,
// "How big a run can be").
// Batches are drawn when their iteration runs and dropped after it (core/run/run_scenario.cpp): only the
// batch in flight is held, with its copy in the plan; each iteration leaves its BatchSummary.
constexpr double kBatchBytesPerDocument = 2 * sizeof(std::int64_t);
constexpr double kBatchSummaryBytes = sizeof(BatchSummary);
constexpr double kIterationBytesPerDocument = 4096;  // plan sequences, shards, ops and blocks, program, trace
constexpr double kIterationBytesPerRank =
    512 * 1024;                                    // per-rank layouts, ops, program streams, SimGrid hosts
constexpr double kResultBytesPerRank = 256;        // per-rank figures every iteration keeps
constexpr double kResultBytesPerIteration = 4096;  // the iteration's own figures and plan facts
// A ring over P ranks has P steps on each rank, each an attention op, a send and a recv with their
// instructions, both passes, and trace events: ring-cp over 400, 800 and 1600 GPUs (50, 100, 200
// dgx-h200 nodes, llama-7b, 1M tokens) peaked at 1.38, 4.26 and 15.8 GB, 8.6, 6.7 and 6.2 KB per
// (rank, ring step); rounded down three-fold.
constexpr double kRingStepBytes = 2048;

// The ranks one ring of `system` spans: its integer "degree", or every rank for ring-cp's "auto" (it
// keeps all GPUs); 1 (no floor) where the strategy sizes its groups per batch.
int ring_span(const SystemSpec& system, int ranks) {
  const auto degree = system.options.find("degree");
  if (degree != system.options.end() && degree->is_number_integer())
    return std::clamp(degree->get<int>(), 1, std::max(1, ranks));
  return system.name == "ring-cp" ? std::max(1, ranks) : 1;
}

const char* source_key(WorkloadSource source) {
  switch (source) {
    case WorkloadSource::dataset:
      return "workload.dataset";
    case WorkloadSource::distribution:
      return "workload.distribution";
    case WorkloadSource::lengths_file:
      return "workload.lengths_file";
  }
  return "workload";
}

// The workload as run builds it. Its source's problems (a lengths file's, which name that file and line)
// are restated at the scenario's key that named the source, so the user sees which input to fix.
Workload workload_of(const Scenario& scenario) {
  try {
    return Workload(scenario);
  } catch (const Error& error) {
    std::vector<Problem> problems;
    for (const Problem& p : error.problems()) {
      const std::string inner = p.where.json_path.empty() ? p.where.str() : "";
      problems.push_back(
          {Location{scenario.source_file.string(),
                    p.where.json_path.empty() ? source_key(scenario.workload.source) : p.where.json_path},
           inner.empty() ? p.what : inner + ": " + p.what, p.hint});
    }
    throw Error(error.code(), std::move(problems));
  }
}

// The mean length of a batch's entries after the max_seq_len policy: the batch holds about
// tokens_per_iteration / this many documents.
double mean_entry_length(const Workload& workload, const WorkloadSpec& spec, std::uint64_t seed) {
  Rng rng(seed, kEstimateStream);
  const auto window = static_cast<double>(spec.max_seq_len);
  double tokens = 0, entries = 0;
  for (int i = 0; i < kLengthSamples; ++i) {
    const double length = std::min(static_cast<double>(workload.sampler().draw(rng)),
                                   static_cast<double>(spec.tokens_per_iteration));
    switch (spec.long_documents) {
      case LongDocuments::truncate:
        tokens += std::min(length, window);
        entries += 1;
        break;
      case LongDocuments::keep:
        tokens += length;
        entries += 1;
        break;
      case LongDocuments::split:
        tokens += length;
        entries += std::ceil(length / window);
        break;
    }
  }
  return tokens / entries;
}

}  // namespace

RunSizeEstimate estimate_run_size(const Scenario& scenario) {
  const Workload workload = workload_of(scenario);
  const WorkloadSpec& spec = scenario.workload;
  RunSizeEstimate e;
  e.documents_per_iteration = std::ceil(static_cast<double>(spec.tokens_per_iteration) /
                                        mean_entry_length(workload, spec, scenario.seed));
  e.iterations = spec.iterations;
  e.ranks = scenario.cluster.world_size() / std::max(1, scenario.parallelism.tensor);
  e.systems = static_cast<int>(scenario.systems.size());
  const double iterations = e.iterations, ranks = e.ranks, systems = std::max(1, e.systems);
  e.batch_bytes = e.documents_per_iteration * kBatchBytesPerDocument + iterations * kBatchSummaryBytes;
  e.iteration_bytes = e.documents_per_iteration * kIterationBytesPerDocument + ranks * kIterationBytesPerRank;
  e.result_bytes = systems * iterations * (kResultBytesPerIteration + ranks * kResultBytesPerRank);
  for (std::size_t i = 0; i < scenario.systems.size(); ++i) {
    const int span = ring_span(scenario.systems[i], e.ranks);
    if (span <= 1 || span <= e.widest_ring) continue;
    e.widest_ring = span;
    e.widest_ring_system = static_cast<int>(i);
    e.ring_bytes = ranks * span * kRingStepBytes;
  }
  return e;
}

double machine_memory_bytes() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page_size = sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page_size > 0 ? static_cast<double>(pages) * static_cast<double>(page_size) : 0.0;
}

void check_runnable(const Scenario& scenario, double memory_bytes) {
  const RunSizeEstimate e = estimate_run_size(scenario);
  if (memory_bytes <= 0 || e.total_bytes() <= memory_bytes) return;
  // Name the key whose change helps most: the one that scales the largest part of the estimate.
  // What every (system, iteration) leaves scales with the ranks too, but iterations are the knob for it.
  const double by_ranks = e.ranks * kIterationBytesPerRank;
  const double by_documents =
      e.documents_per_iteration * (kIterationBytesPerDocument + kBatchBytesPerDocument);
  const double by_iterations = e.result_bytes + e.iterations * kBatchSummaryBytes;
  std::string key = by_ranks >= by_documents && by_ranks >= by_iterations ? "cluster.nodes"
                    : by_iterations > by_documents                        ? "workload.iterations"
                                                                          : "workload.tokens_per_iteration";
  std::string rings,
      hint = "lower workload.tokens_per_iteration, workload.iterations (or --iterations) or cluster.nodes";
  if (e.widest_ring_system >= 0) {
    const SystemSpec& system = scenario.systems[static_cast<std::size_t>(e.widest_ring_system)];
    rings = fmt::format(", {} with groups of {} ranks ({:.3g} ring steps per layer)", system.label,
                        e.widest_ring, static_cast<double>(e.ranks) * e.widest_ring);
    // Rings over every rank (ring-cp's "auto") grow with the cluster; a given degree is the system's own.
    if (e.ring_bytes >= std::max({by_ranks, by_documents, by_iterations})) {
      const bool every_rank = e.widest_ring == e.ranks;
      key = every_rank ? "cluster.nodes" : fmt::format("systems[{}].degree", e.widest_ring_system);
      hint = fmt::format("give {} a smaller \"degree\" (rings inside a node: {}) or use fewer cluster.nodes",
                         system.label, scenario.cluster.gpus_per_node);
    }
  }
  throw_input_error(
      Location{scenario.source_file.string(), key},
      fmt::format("the run needs about {} of memory, more than this machine's {}: {:.3g} documents "
                  "per iteration, {} iterations, {} ranks, {} systems{}",
                  format_bytes(e.total_bytes()), format_bytes(memory_bytes), e.documents_per_iteration,
                  e.iterations, e.ranks, e.systems, rings),
      hint + "; docs/SCENARIOS.md, \"How big a run can be\", gives the estimate");
}

}  // namespace zb
