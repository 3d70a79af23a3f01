// plan::from_json: the plan-wide sections (header, sequences, groups, layouts, remap, OOM, prediction);
// ops are read in plan_ops_from_json.cpp. Every element is read even after a problem, so one message lists
// what is wrong (up to PlanReader::max_problems); the Plan is returned only when nothing is.
#include <array>
#include <limits>

#include "core/config/document_limit.hpp"
#include "core/config/jsonc.hpp"
#include "core/plan/plan_format.hpp"
#include "core/plan/plan_layout_form.hpp"
#include "core/plan/plan_reader.hpp"

namespace zb::plan {
namespace {

using detail::PlanReader;
using nlohmann::json;

constexpr std::int64_t int64_max = std::numeric_limits<std::int64_t>::max();
constexpr std::int64_t int64_min = std::numeric_limits<std::int64_t>::min();
constexpr std::int64_t max_ranks = 1 << 20;  // a bound for world_size and micro_batches, far above real use

constexpr std::array<std::string_view, 3> level_names{"local", "intra-node", "inter-node"};
constexpr std::array<std::string_view, 2> sharding_names{"whole", "zigzag"};
constexpr std::array<std::string_view, 3> detail_names{"summary", "compact", "full"};

Level level_of(const std::string& s) {
  return s == "local" ? Level::local : s == "intra-node" ? Level::intra_node : Level::inter_node;
}

// Calls `element(value, path, index)` for each element of the array at `key`, stopping once the reader
// has collected enough problems.
template <typename F>
void for_each(const PlanReader& r, const ObjectReader& o, std::string_view key, bool required, F&& element) {
  const json* a = r.array(o, key, required);
  if (a == nullptr) return;
  for (std::size_t i = 0; i < a->size() && !r.enough(); ++i)
    element((*a)[i], index_path(o.path_of(key), i), i);
}

void read_header(PlanReader& r, const ObjectReader& top, Plan& plan) {
  // A summary has the shape of a plan but no ops: refused before its ranks read as broken op lists.
  if (const auto detail = r.choice(top, "detail", detail_names, false); detail == "summary") {
    r.context().add(top.path_of("detail"), "a summary plan lists no ops or layouts, so it cannot be run",
                    "print the plan with `zeppelin-bench plan --format json` (detail compact) or "
                    "`--detail full`");
  }
  if (const auto v = r.text(top, "system", false)) plan.system = *v;
  if (const auto v = r.text(top, "strategy", false)) plan.strategy = *v;
  const auto world = r.integer(top, "world_size", 1, max_ranks, true);
  const auto gpn = r.integer(top, "gpus_per_node", 1, max_ranks, true);
  const auto mbs = r.integer(top, "micro_batches", 1, max_ranks, true);
  if (world && gpn && *world % *gpn != 0) {
    r.context().add(top.path_of("gpus_per_node"), "world_size " + std::to_string(*world) +
                                                      " is not a whole number of nodes of " +
                                                      std::to_string(*gpn) + " GPUs");
  }
  plan.world_size = r.world_size = static_cast<int>(world.value_or(0));
  plan.gpus_per_node = static_cast<int>(gpn.value_or(0));
  plan.micro_batches = r.micro_batches = static_cast<int>(mbs.value_or(1));
}

void read_sequences(PlanReader& r, const ObjectReader& top, Plan& plan) {
  for_each(r, top, "sequences", true, [&](const json& v, const std::string& path, std::size_t i) {
    const ObjectReader o(v, path, r.context(), {"id", "length", "micro_batch"});
    detail::expect_position(r, o, "id", i, "sequences");
    Sequence s;
    s.id = static_cast<int>(i);
    // No longer than a scenario's documents can be (core/config/document_limit.hpp): verify counts the
    // causal pairs of a sequence in std::int64_t.
    s.length = r.integer(o, "length", 0, kMaxDocumentLength, true).value_or(0);
    s.micro_batch = r.index(o, "micro_batch", r.micro_batch_ref(), false).value_or(0);
    plan.sequences.push_back(s);
  });
  r.sequences = plan.sequences.size();
}

void read_groups(PlanReader& r, const ObjectReader& top, Plan& plan) {
  for_each(r, top, "groups", true, [&](const json& v, const std::string& path, std::size_t i) {
    const ObjectReader o(v, path, r.context(),
                         {"id", "level", "ranks", "sequences", "sharding", "micro_batch"});
    detail::expect_position(r, o, "id", i, "groups");
    Group g;
    g.id = static_cast<int>(i);
    if (const auto level = r.choice(o, "level", level_names, true)) g.level = level_of(*level);
    g.ranks = r.indices(o, "ranks", r.ranks(), true).value_or(std::vector<int>{});
    g.sequences = r.indices(o, "sequences", r.sequence_ref(), true).value_or(std::vector<int>{});
    if (const auto sharding = r.choice(o, "sharding", sharding_names, true)) {
      g.sharding = *sharding == "whole" ? Sharding::whole : Sharding::zigzag;
    }
    g.micro_batch = r.index(o, "micro_batch", r.micro_batch_ref(), true).value_or(0);
    plan.groups.push_back(std::move(g));
  });
  r.groups = plan.groups.size();
}

// A rank's shards: listed, or (schema 3) "groups" for the shards its groups imply (plan_layout_form.hpp),
// or, in the linear layout, "attention" for the same shards as its attention layout.
void read_layout(const PlanReader& r, const ObjectReader& top, std::string_view key, const Plan& plan,
                 std::vector<RankLayout>& out) {
  const bool linear = key == "linear_layout";
  const auto seats = detail::seats_of(plan);
  for_each(r, top, key, true, [&](const json& v, const std::string& path, std::size_t i) {
    const ObjectReader o(v, path, r.context(), {"rank", "shards"});
    detail::expect_position(r, o, "rank", i, key);
    RankLayout layout;
    layout.rank = static_cast<int>(i);
    const json* shards = o.get("shards");
    if (shards != nullptr && shards->is_string()) {
      if (!r.schema_3_form(o.path_of("shards"), "a layout written as a string")) return;
      if (*shards == "groups" && i < seats.size()) {
        detail::for_each_implied_shard(plan, seats[i], [&](const Shard& s) {
          layout.shards.push_back(s);
          return true;
        });
      } else if (*shards == "attention" && linear && i < plan.attention_layout.size()) {
        layout.shards = plan.attention_layout[i].shards;
      } else if (!(*shards == "groups") && !(linear && *shards == "attention")) {
        r.context().add(
            o.path_of("shards"), "unknown layout \"" + printable(shards->get<std::string>()) + "\"",
            linear ? "an array of shards, \"groups\" or \"attention\"" : "an array of shards or \"groups\"");
      }
      out.push_back(std::move(layout));
      return;
    }
    for_each(r, o, "shards", true, [&](const json& sv, const std::string& spath, std::size_t) {
      const ObjectReader s(sv, spath, r.context(), {"seq", "begin", "end"});
      Shard shard;
      shard.seq = r.index(s, "seq", r.sequence_ref(), true).value_or(0);
      shard.begin = r.integer(s, "begin", 0, int64_max, true).value_or(0);
      shard.end = r.integer(s, "end", 0, int64_max, true).value_or(0);
      layout.shards.push_back(shard);
    });
    out.push_back(std::move(layout));
  });
}

// A per-rank array has one entry per rank: printing a plan or verifying it indexes them by rank.
void expect_one_per_rank(const PlanReader& r, const ObjectReader& top, std::string_view key,
                         std::size_t entries, const char* what) {
  const auto world = static_cast<std::size_t>(std::max(r.world_size, 0));
  // An absent or malformed array has been reported already; no second problem for its emptiness.
  if (entries == world || r.enough() || (entries == 0 && !r.context().problems.empty())) return;
  r.context().add(top.path_of(key), std::string(key) + " has " + std::to_string(entries) + " " + what +
                                        ", but world_size is " + std::to_string(world) +
                                        ": give one per rank, in rank order");
}

void read_ranks(const PlanReader& r, const ObjectReader& top, Plan& plan) {
  for_each(r, top, "ranks", true, [&](const json& v, const std::string& path, std::size_t i) {
    const ObjectReader o(v, path, r.context(), {"rank", "ops"});
    detail::expect_position(r, o, "rank", i, "ranks");
    RankOps ops;
    ops.rank = static_cast<int>(i);
    if (const json* a = r.array(o, "ops", true))
      ops.ops = detail::read_ops(r, *a, o.path_of("ops"), ops.rank, plan);
    plan.ranks.push_back(std::move(ops));
  });
}

void read_outcome(const PlanReader& r, const ObjectReader& top, Plan& plan) {
  for_each(r, top, "oom", true, [&](const json& v, const std::string& path, std::size_t) {
    const ObjectReader o(v, path, r.context(), {"rank", "micro_batch", "tokens_needed", "token_capacity"});
    OomReport report;
    report.rank = r.index(o, "rank", r.ranks(), true).value_or(0);
    // Not checked against micro_batches: an infeasible plan may stop before it counts its micro-batches.
    report.micro_batch =
        static_cast<int>(r.integer(o, "micro_batch", 0, std::numeric_limits<int>::max(), true).value_or(0));
    report.tokens_needed = r.integer(o, "tokens_needed", int64_min, int64_max, true).value_or(0);
    report.token_capacity = r.integer(o, "token_capacity", int64_min, int64_max, true).value_or(0);
    plan.oom.push_back(report);
  });
  // `feasible` is derived from `oom` when printed; a file where the two disagree is wrong in one of them.
  if (const auto feasible = top.boolean("feasible");
      feasible && *feasible != plan.oom.empty() && !r.enough()) {
    r.context().add(top.path_of("feasible"),
                    std::string("is ") + (*feasible ? "true" : "false") + " but oom lists " +
                        std::to_string(plan.oom.size()) + " reports",
                    "a plan is feasible exactly when oom is empty");
  }
  if (const auto pred = top.object("predicted", {"iteration_seconds", "per_rank"})) {
    plan.predicted.iteration_seconds = r.non_negative(*pred, "iteration_seconds", true).value_or(0);
    for_each(r, *pred, "per_rank", true, [&](const json& v, const std::string& path, std::size_t) {
      const ObjectReader o(v, path, r.context(), {"attention_flops", "tokens", "seconds"});
      RankPrediction p;
      p.attention_flops = r.non_negative(o, "attention_flops", true).value_or(0);
      p.tokens = r.integer(o, "tokens", 0, int64_max, true).value_or(0);
      p.seconds = r.non_negative(o, "seconds", true).value_or(0);
      plan.predicted.per_rank.push_back(p);
    });
  }
  if (const json* info = top.get("info")) {
    if (info->is_object()) {
      plan.info = *info;
    } else {
      r.context().add(top.path_of("info"), "expected an object, got " + describe_json(*info));
    }
  }
  plan.planner_seconds = r.non_negative(top, "planner_seconds", false).value_or(0);
}

void read_tensor_parallel_groups(const PlanReader& r, const ObjectReader& top, Plan& plan) {
  for_each(r, top, "tensor_parallel_groups", false, [&](const json& v, const std::string& path, std::size_t) {
    if (!v.is_array()) {
      r.context().add(path, "expected an array of ranks, got " + describe_json(v));
      return;
    }
    std::vector<int> group;
    for (std::size_t i = 0; i < v.size(); ++i) {
      if (const auto rank = r.index(v[i], index_path(path, i), r.ranks())) group.push_back(*rank);
    }
    plan.tensor_parallel_groups.push_back(std::move(group));
  });
}

// A file of another schema is refused before anything else is read: its keys may mean other things.
void check_schema_version(const json& j, LoadContext& context) {
  if (!j.is_object() || !j.contains("schema_version")) return;  // reported by the readers below
  const json& v = j["schema_version"];
  if (v.is_number_integer() && v.get<std::int64_t>() >= plan_oldest_schema_version &&
      v.get<std::int64_t>() <= plan_schema_version) {
    return;
  }
  context.add("schema_version",
              "schema_version " + printable(v.dump()) + " is not supported: this build reads " +
                  std::to_string(plan_oldest_schema_version) + " to " + std::to_string(plan_schema_version),
              "write the plan with this build's `zeppelin-bench plan --format json`");
  context.problems.throw_if_any();
}

}  // namespace

namespace detail {

RemapMove read_move(const PlanReader& r, const json& value, const std::string& path) {
  const ObjectReader o(value, path, r.context(), {"src", "dst", "seq", "begin", "end"});
  RemapMove m;
  m.src = r.index(o, "src", r.ranks(), true).value_or(0);
  m.dst = r.index(o, "dst", r.ranks(), true).value_or(0);
  m.range.seq = r.index(o, "seq", r.sequence_ref(), true).value_or(0);
  m.range.begin = r.integer(o, "begin", 0, int64_max, true).value_or(0);
  m.range.end = r.integer(o, "end", 0, int64_max, true).value_or(0);
  return m;
}

}  // namespace detail

Plan from_json(const json& j, const std::string& file_for_messages, ReadLimits limits, OpSources* sources) {
  LoadContext context;
  context.file = file_for_messages;
  check_schema_version(j, context);
  const ObjectReader top(
      j, "", context,
      {"schema_version", "detail", "system", "strategy", "world_size", "gpus_per_node",
       "tensor_parallel_groups", "micro_batches", "feasible", "sequences", "groups", "attention_layout",
       "linear_layout", "remap", "ranks", "predicted", "oom", "info", "planner_seconds"});
  top.require("schema_version");
  PlanReader r(context);
  // Checked above when present; its absence is reported by require.
  r.schema_version =
      j.is_object() && j.contains("schema_version") ? j["schema_version"].get<int>() : plan_schema_version;
  r.max_ops = limits.max_ops;
  r.sources = sources;
  Plan plan;
  read_header(r, top, plan);
  // Everything below is judged against the header (ranks against world_size, ...).
  context.problems.throw_if_any();

  read_sequences(r, top, plan);
  read_groups(r, top, plan);
  read_tensor_parallel_groups(r, top, plan);
  read_layout(r, top, "attention_layout", plan, plan.attention_layout);
  read_layout(r, top, "linear_layout", plan, plan.linear_layout);
  expect_one_per_rank(r, top, "attention_layout", plan.attention_layout.size(), "layouts");
  expect_one_per_rank(r, top, "linear_layout", plan.linear_layout.size(), "layouts");
  for_each(r, top, "remap", true, [&](const json& v, const std::string& path, std::size_t) {
    plan.remap.push_back(detail::read_move(r, v, path));
  });
  read_ranks(r, top, plan);
  expect_one_per_rank(r, top, "ranks", plan.ranks.size(), "op lists");
  read_outcome(r, top, plan);
  if (r.enough())
    context.add("", "stopped reading after " + std::to_string(PlanReader::max_problems) + " problems");
  context.problems.throw_if_any();
  return plan;
}

Plan read_plan_file(const std::filesystem::path& file, OpSources* sources) {
  return from_json(read_jsonc_file(file, max_plan_file_bytes), file.string(), {}, sources);
}

}  // namespace zb::plan
