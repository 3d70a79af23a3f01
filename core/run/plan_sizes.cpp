#include "core/run/plan_sizes.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "core/strategies/moe_layer.hpp"

namespace zb {
namespace {

using plan::Op;
using plan::OpKind;

// Rounding: a strategy casts each size to whole bytes once or twice (a head slice's share of a whole
// owner's bytes), and tensor parallelism cuts one more time per member.
constexpr double kRoundingBytes = 2.0;

class SizeCheck {
 public:
  SizeCheck(const plan::Plan& plan, const CostModel& cost, std::string file, std::size_t max_problems,
            const plan::OpSources& sources)
      : plan_(plan), cost_(cost), file_(std::move(file)), max_(max_problems), sources_(sources) {
    // A rank's tensor-parallel group: itself alone without tensor parallelism.
    group_of_.resize(static_cast<std::size_t>(plan.world_size));
    for (int r = 0; r < plan.world_size; ++r) group_of_[static_cast<std::size_t>(r)] = {r};
    for (const auto& group : plan.tensor_parallel_groups)
      for (const int r : group)
        if (r >= 0 && r < plan.world_size) group_of_[static_cast<std::size_t>(r)] = group;
    for (const plan::RankLayout& layout : plan.linear_layout)
      for (const plan::Shard& s : layout.shards)
        linear_tokens_[{layout.rank, plan.sequences[static_cast<std::size_t>(s.seq)].micro_batch}] +=
            s.size();
  }

  [[nodiscard]] bool full() const { return problems_.size() >= max_; }
  [[nodiscard]] std::vector<Problem> problems() && { return std::move(problems_); }

  void gemm(int rank, const Op& op) {
    // Tensor parallelism splits n (column-parallel: QKV, gate + up) or k (row-parallel: o_proj, down); the
    // MoE router neither (each member computes the logits of its sequence-parallel share of the rows).
    enum class Split { column, row, rows };
    struct Shape {
      std::int64_t n, k;
      Split split;
    };
    std::optional<Shape> shape;
    bool m_is_tokens = true;
    std::string names;
    for (const CostModel::GemmShape& g : cost_.layer_gemms()) {
      // An MoE model's FFN is its MoE layer's GEMMs (below), not mlp_up and mlp_down.
      const std::string_view name = g.name;
      if (cost_.model().has_experts() && (name == "mlp_up" || name == "mlp_down")) continue;
      names += (names.empty() ? "" : ", ") + std::string(g.name);
      if (op.name == g.name)
        shape = Shape{static_cast<std::int64_t>(g.n), static_cast<std::int64_t>(g.k),
                      op.name == "qkv" || op.name == "mlp_up" ? Split::column : Split::row};
    }
    if (cost_.model().has_experts()) {
      for (const MoeGemmShape& g : moe_gemm_shapes(cost_.model())) {
        names += ", " + std::string(g.name);
        if (op.name != g.name) continue;
        const std::string_view moe_name = g.name;
        shape = Shape{g.n, g.k,
                      moe_name == "router"                                 ? Split::rows
                      : moe_name == "shared_up" || moe_name == "expert_up" ? Split::column
                                                                           : Split::row};
        m_is_tokens = g.m_is_tokens;
      }
    }
    if (!shape) {
      add(rank, op, "name", fmt::format("GEMM \"{}\" is none of the layer's: {}", op.name, names));
      return;
    }
    const int t = width(rank);
    expect_share(rank, op, "n", op.n, shape->n, shape->split == Split::column ? t : 1);
    expect_share(rank, op, "k", op.k, shape->k, shape->split == Split::row ? t : 1);
    // m: the rows of the micro-batch the rank holds in the linear layout (a tensor-parallel group's members
    // each hold all of the group's rows); an expert GEMM's rows are the routing's, and so are a TP
    // member's router rows (its share of each document, core/strategies/moe_layer.hpp).
    if (!m_is_tokens || (shape->split == Split::rows && t > 1)) return;
    const auto found = linear_tokens_.find({rank, op.micro_batch});
    const std::int64_t tokens = found == linear_tokens_.end() ? 0 : found->second;
    if (op.m != tokens)
      add(rank, op, "m",
          fmt::format("m is {} but rank {} holds {} tokens in the linear layout of micro-batch {}", op.m,
                      rank, tokens, op.micro_batch));
  }

  void kv_message(const lower::Message& message, const Op& op) {
    std::int64_t rows = 0;
    double share = 1;
    for (const lower::Slice& slice : message.slices) {
      if (slice.tensor != lower::Tensor::K) continue;  // each K slice has its V twin of the same rows
      rows += slice.rows();
      share = kv_head_share(slice.heads);
    }
    const double expected = cost_.kv_bytes(static_cast<double>(rows)) * share;
    const int t = width(message.src);
    if (std::abs(static_cast<double>(op.bytes) - expected) > kRoundingBytes + (t > 1 ? t : 0))
      add(message.src, op, "bytes",
          fmt::format("the send carries rank {}'s K and V of {} rows{}, {:.0f} bytes on this model, not {}",
                      message.kv_owner, rows,
                      share < 1 ? fmt::format(" ({:.4g} of the K/V heads)", share) : "", expected, op.bytes),
          "set bytes (on the send and its recv) to the rows' size, or leave the sizes as `plan` printed "
          "them");
  }

  // An MoE exchange's parts are whole hidden rows, and no more than every token of the batch choosing
  // top_k experts (the bound keeps a hand-edited part from asking an executor for terabytes).
  void exchange(int rank, const Op& op) {
    const auto row = static_cast<std::int64_t>(cost_.hidden_bytes(1.0));
    std::int64_t tokens = 0;
    for (const auto& [key, n] : linear_tokens_) tokens += n;
    const std::int64_t most = tokens * std::max(1, cost_.model().moe.top_k) * row;
    for (std::size_t j = 0; j < op.peer_bytes.size(); ++j) {
      const std::int64_t bytes = op.peer_bytes[j];
      if (row > 0 && bytes % row == 0 && bytes <= most) continue;
      add(rank, op, "peer_bytes",
          fmt::format("part {} is {} bytes: not whole hidden rows of {} bytes, or more than the batch's {} "
                      "tokens × top-{} rows",
                      j, bytes, row, tokens, std::max(1, cost_.model().moe.top_k)));
      return;
    }
  }

  void remap(int rank, const Op& op) {
    if (width(rank) > 1) return;
    const double per_token =
        op.direction == plan::RemapDirection::to_attention ? cost_.qkv_bytes(1.0) : cost_.hidden_bytes(1.0);
    std::int64_t out = 0, in = 0;
    for (const plan::RemapMove& mv : op.moves) {
      const auto bytes = static_cast<std::int64_t>(per_token * static_cast<double>(mv.range.size()));
      const int from = op.direction == plan::RemapDirection::to_linear ? mv.src : mv.dst;
      (from == rank ? out : in) += bytes;
    }
    if (op.bytes_out != out)
      add(rank, op, "bytes_out",
          fmt::format("bytes_out is {} but its moves send {} bytes on this model", op.bytes_out, out));
    if (op.bytes_in != in)
      add(rank, op, "bytes_in",
          fmt::format("bytes_in is {} but its moves bring {} bytes on this model", op.bytes_in, in));
  }

 private:
  [[nodiscard]] int width(int rank) const {
    return static_cast<int>(group_of_[static_cast<std::size_t>(rank)].size());
  }

  // The share of the model's K/V heads that query heads `range` read (GQA: a K/V head serves heads/kv_heads
  // query heads; a range inside one K/V head still moves all of it).
  [[nodiscard]] double kv_head_share(const plan::HeadRange& range) const {
    const ModelSpec& m = cost_.model();
    if (range.all() || m.heads <= 0 || m.kv_heads <= 0) return 1.0;
    const int per_kv = std::max(1, m.heads / m.kv_heads);
    const int end = range.end < 0 ? m.heads : range.end;
    if (end <= range.begin) return 0.0;
    const int touched = (end - 1) / per_kv - range.begin / per_kv + 1;
    return static_cast<double>(touched) / m.kv_heads;
  }

  // `value` is `total` cut into `parts` near-equal whole parts (any part: within one of total / parts).
  void expect_share(int rank, const Op& op, const char* key, std::int64_t value, std::int64_t total,
                    int parts) {
    const std::int64_t low = total / parts, high = (total + parts - 1) / parts;
    if (value >= low && value <= high) return;
    add(rank, op, key,
        parts == 1
            ? fmt::format("{} is {} but the model's {} GEMM has {} = {}", key, value, op.name, key, total)
            : fmt::format("{} is {} but the model's {} GEMM has {} = {}, cut among {} tensor-parallel ranks",
                          key, value, op.name, key, total, parts));
  }

  // The problem at the op's path in the file as read: a compact file's run stands for many ops, and the
  // user editing it must find the one meant (op_sources.hpp).
  void add(int rank, const Op& op, const char* key, std::string what, std::string hint = {}) {
    if (full()) return;
    if (hint.empty()) hint = "fix the op, or leave the sizes as `plan` printed them for this scenario";
    const auto id = static_cast<std::size_t>(op.id);
    const plan::OpSources::Place place = sources_.place_of(rank, id);
    if (place.in_run) {
      hint += fmt::format(
          "; the op (id {}) is repetition {} of op {} of the run at ranks[{}].ops[{}]: its {} is the run's "
          "ops[{}].{} in repetition 0, in the others the series vary[{}].{} where the run lists one",
          op.id, place.repetition, place.op, rank, place.entry, key, place.op, key, place.op, key);
    }
    problems_.push_back(
        {Location{file_, sources_.path_of(rank, id) + "." + key}, std::move(what), std::move(hint)});
  }

  const plan::Plan& plan_;
  const CostModel& cost_;
  std::string file_;
  std::size_t max_;
  const plan::OpSources& sources_;
  std::vector<std::vector<int>> group_of_;
  std::map<std::pair<int, int>, std::int64_t> linear_tokens_;  // (rank, micro-batch) → tokens
  std::vector<Problem> problems_;
};

}  // namespace

std::vector<Problem> plan_size_problems(const plan::Plan& plan, const lower::Program& program,
                                        const CostModel& cost, const std::string& plan_file,
                                        std::size_t max_problems, const plan::OpSources& sources) {
  SizeCheck check(plan, cost, plan_file, max_problems, sources);
  for (const plan::RankOps& rank : plan.ranks) {
    for (const Op& op : rank.ops) {
      if (check.full()) break;
      if (op.kind == OpKind::gemm) check.gemm(rank.rank, op);
      if (op.kind == OpKind::remap) check.remap(rank.rank, op);
      if (op.kind == OpKind::collective && op.collective == plan::CollectiveKind::all_to_all_v)
        check.exchange(rank.rank, op);
    }
  }
  for (const lower::Message& message : program.messages) {
    if (check.full()) break;
    if (message.pass != Pass::fwd || message.plan_op < 0 || message.kv_owner < 0) continue;
    check.kv_message(
        message,
        plan.ranks[static_cast<std::size_t>(message.src)].ops[static_cast<std::size_t>(message.plan_op)]);
  }
  return std::move(check).problems();
}

}  // namespace zb
