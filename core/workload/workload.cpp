#include "core/workload/workload.hpp"

#include <algorithm>
#include <numeric>

#include "core/common/error.hpp"
#include "core/common/rng.hpp"
#include "core/workload/datasets.hpp"
#include "core/workload/lengths_file.hpp"
#include "core/workload/samplers.hpp"

namespace zb {
namespace {

Location workload_key(const char* key) {
  Location where;
  where.json_path = std::string("workload.") + key;
  return where;
}

void validate(const WorkloadSpec& spec) {
  ProblemList problems;
  if (spec.tokens_per_iteration < 1) problems.add(workload_key("tokens_per_iteration"), "must be ≥ 1 token");
  if (spec.max_seq_len < 1) problems.add(workload_key("max_seq_len"), "must be ≥ 1 token");
  if (spec.iterations < 0) problems.add(workload_key("iterations"), "must be ≥ 0");
  problems.throw_if_any();
}

std::shared_ptr<const LengthSampler> make_sampler(const WorkloadSpec& spec) {
  switch (spec.source) {
    case WorkloadSource::dataset: {
      const DatasetPreset* preset = find_dataset(spec.dataset);
      if (preset == nullptr) {
        throw_input_error(workload_key("dataset"), "unknown dataset '" + spec.dataset + "'",
                          "use one of: " + dataset_names());
      }
      return make_dataset_sampler(*preset);
    }
    case WorkloadSource::distribution:
      return make_distribution_sampler(spec.distribution);
    case WorkloadSource::lengths_file:
      return std::make_shared<EmpiricalSampler>(read_lengths_file(spec.lengths_file),
                                                spec.lengths_file.string());
  }
  throw_input_error(workload_key("source"), "no workload source is set");
}

// Appends `take` tokens of a document to the batch and reports whether the budget is now used up.
bool append_within_budget(std::vector<std::int64_t>& lengths, std::int64_t piece, std::int64_t& remaining) {
  const std::int64_t take = std::min(piece, remaining);
  lengths.push_back(take);
  remaining -= take;
  return remaining == 0;
}

}  // namespace

std::int64_t Batch::total_tokens() const {
  return std::accumulate(lengths.begin(), lengths.end(), std::int64_t{0});
}

Workload::Workload(const Scenario& scenario)
    : spec_(scenario.workload), seed_(scenario.seed), sampler_(nullptr) {
  validate(spec_);
  sampler_ = make_sampler(spec_);
}

Batch Workload::batch(int iteration) const {
  // Each iteration has its own stream, so iteration i is the same whether or not 0..i−1 were drawn.
  Rng rng(seed_, static_cast<std::uint64_t>(iteration));
  Batch batch;
  batch.iteration = iteration;
  std::int64_t remaining = spec_.tokens_per_iteration;
  const std::int64_t window = spec_.max_seq_len;
  bool budget_met = false;
  while (!budget_met) {
    const std::int64_t length = sampler_->draw(rng);
    switch (spec_.long_documents) {
      case LongDocuments::truncate:
        budget_met = append_within_budget(batch.lengths, std::min(length, window), remaining);
        break;
      case LongDocuments::keep:
        budget_met = append_within_budget(batch.lengths, length, remaining);
        break;
      case LongDocuments::split:
        // Window-sized pieces, then the remainder; the pieces are never materialised beyond the budget,
        // so a trillion-token draw costs no more than the budget does.
        for (std::int64_t left = length; left > 0 && !budget_met; left -= std::min(left, window)) {
          budget_met = append_within_budget(batch.lengths, std::min(left, window), remaining);
        }
        break;
    }
  }
  return batch;
}

std::string Workload::describe() const {
  std::string source;
  switch (spec_.source) {
    case WorkloadSource::dataset:
      source = "dataset " + spec_.dataset + ": ";
      break;
    case WorkloadSource::distribution:
      source = "distribution ";
      break;
    case WorkloadSource::lengths_file:
      source = "";
      break;
  }
  return source + sampler_->describe() + "\nmax_seq_len " + std::to_string(spec_.max_seq_len) + " (" +
         to_string(spec_.long_documents) + "), " + std::to_string(spec_.tokens_per_iteration) +
         " tokens per iteration, " + std::to_string(spec_.iterations) + " iterations, seed " +
         std::to_string(seed_);
}

}  // namespace zb
