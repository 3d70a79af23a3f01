#pragma once
// Internal to plan::from_json: typed reads of plan JSON values on top of the scenario loader's
// ObjectReader (same messages: "missing required key", "expected an integer, got a string ("8")", unknown
// keys with "did you mean"). What it adds is references: a rank, sequence, group, micro-batch or op index
// is checked against what the plan has, so that verify and executors can index with it safely.
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/config/json_reader.hpp"
#include "core/plan/op_sources.hpp"
#include "core/plan/plan.hpp"

namespace zb::plan::detail {

// What an index refers to: "rank", and the sentence that says what exists ("world_size is 16").
struct Ref {
  std::string_view what;  // "rank", "sequence", "group", "micro-batch", "op"
  std::size_t count = 0;  // valid indices are 0..count-1
  std::string exists;     // "world_size is 16", "the plan has 37 sequences", ...
};

class PlanReader {
 public:
  static constexpr std::size_t max_problems = 20;

  explicit PlanReader(LoadContext& context) : context_(context) {}
  [[nodiscard]] LoadContext& context() const { return context_; }
  // True once enough problems are collected: readers stop early, so a wholly wrong file gives a short
  // message rather than one line per op.
  [[nodiscard]] bool enough() const { return context_.problems.size() >= max_problems; }

  // The plan's shape, set from the header before any reference is read.
  int schema_version = 0;
  int world_size = 0;
  int micro_batches = 1;
  std::size_t sequences = 0;
  std::size_t groups = 0;
  // Ops read so far (runs expanded) and the most a file may expand to (ReadLimits::max_ops).
  mutable std::size_t ops_read = 0;
  std::size_t max_ops = 0;
  // Where the runs of the file are, recorded for the caller of from_json when it asks (nullptr: not).
  OpSources* sources = nullptr;

  // Reports, at `path`, a schema-3 form (a run, a layout written "groups", a block as an array) in a file
  // of an older schema (the first one only); returns whether the file may have it.
  bool schema_3_form(const std::string& path, std::string_view form) const;

  [[nodiscard]] const Ref& ranks() const;
  [[nodiscard]] const Ref& sequence_ref() const;
  [[nodiscard]] const Ref& group_ref() const;
  [[nodiscard]] const Ref& micro_batch_ref() const;

  // An integer in [min, max] at `key`; absent → nullopt, reported when `required`.
  std::optional<std::int64_t> integer(const ObjectReader& o, std::string_view key, std::int64_t min,
                                      std::int64_t max, bool required) const;
  // A number ≥ 0 (seconds, FLOPs, pairs); absent → nullopt, reported when `required`.
  std::optional<double> non_negative(const ObjectReader& o, std::string_view key, bool required) const;
  std::optional<std::string> text(const ObjectReader& o, std::string_view key, bool required) const;
  // One of `choices` (an enum's printed names).
  std::optional<std::string> choice(const ObjectReader& o, std::string_view key,
                                    std::span<const std::string_view> choices, bool required) const;
  // An index into what `ref` describes, or nullopt; valid_index reports nothing, report_index says why not.
  [[nodiscard]] static std::optional<int> valid_index(const nlohmann::json& value, const Ref& ref);
  void report_index(const nlohmann::json& value, const std::string& path, const Ref& ref) const;
  std::optional<int> index(const nlohmann::json& value, const std::string& path, const Ref& ref) const;
  std::optional<int> index(const ObjectReader& o, std::string_view key, const Ref& ref, bool required) const;
  // An array of indices (ranks of a group, its sequences, deps, ...); nullopt when any element is wrong.
  std::optional<std::vector<int>> indices(const ObjectReader& o, std::string_view key, const Ref& ref,
                                          bool required) const;
  // An array of integers in [min, max] (route part bytes).
  std::optional<std::vector<std::int64_t>> integers(const ObjectReader& o, std::string_view key,
                                                    std::int64_t min, std::int64_t max, bool required) const;
  // `[a, b]` of two integers ≥ 0 (a token range of a block).
  std::optional<std::pair<std::int64_t, std::int64_t>> pair(const ObjectReader& o, std::string_view key,
                                                            bool required) const;
  // `[begin, end]` with 0 ≤ begin and end = −1 or end > begin; absent = every head.
  std::optional<HeadRange> heads(const ObjectReader& o) const;
  // The array at `key`; absent → nullptr, reported when `required`.
  const nlohmann::json* array(const ObjectReader& o, std::string_view key, bool required) const;

 private:
  const Ref& cached(std::optional<Ref>& slot, std::string_view what, std::size_t count,
                    const std::function<std::string()>& exists) const;

  LoadContext& context_;
  mutable bool older_schema_reported_ = false;
  mutable std::optional<Ref> rank_ref_, sequence_ref_, group_ref_, micro_batch_ref_;
};

}  // namespace zb::plan::detail

namespace zb::plan::detail {

// The key `key` of `value` read as one of `choices` before an ObjectReader is made for the object, because
// the keys it allows depend on it (an op's kind, a route's kind). Reports and returns nullopt when `value`
// is not an object or the key is missing, not a string, or not a choice.
std::optional<std::string> kind_of(const PlanReader& r, const nlohmann::json& value, const std::string& path,
                                   std::string_view key, std::span<const std::string_view> choices);

// Checks that an element's `key` (its id or rank) equals its position, as the writer prints them.
void expect_position(const PlanReader& r, const ObjectReader& o, std::string_view key, std::size_t position,
                     std::string_view list);

// One remap move {src, dst, seq, begin, end} (plan.remap and remap ops).
RemapMove read_move(const PlanReader& r, const nlohmann::json& value, const std::string& path);

// The ops of one rank, runs expanded. `plan` holds the sequences and groups already read (for derived
// fields).
std::vector<Op> read_ops(const PlanReader& r, const nlohmann::json& ops, const std::string& path, int rank,
                         const Plan& plan);

// One op whose id is `id`; `ops` names the rank's ops (what a dep may refer to).
Op read_op(const PlanReader& r, const nlohmann::json& v, const std::string& path, int rank, std::size_t id,
           const Ref& ops, const Plan& plan);

// How many ops a run at `path` expands to (0 when its `run` or `ops` is malformed: read_run reports it).
std::size_t run_length(const nlohmann::json& run);
// Reads the run `v` at `path`, whose first op has id `first_id`, into `out`: every repetition of every op
// is read as the op it stands for, and named `path.ops[j]@m` (repetition m of op j) in messages.
void read_run(const PlanReader& r, const nlohmann::json& v, const std::string& path, int rank,
              std::size_t first_id, const Ref& ops, const Plan& plan, std::vector<Op>& out);

}  // namespace zb::plan::detail
