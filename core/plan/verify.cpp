#include "core/plan/verify.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "core/plan/collectives.hpp"
#include "core/plan/coverage.hpp"

namespace zb::plan {
namespace {

struct Checker {
  const Plan& plan;
  const VerifyOptions& options;
  std::vector<std::string> problems;

  bool full() const { return problems.size() >= options.max_problems; }
  void add(std::string p) {
    if (!full()) problems.push_back(std::move(p));
  }

  void check_shape() {
    const auto n = static_cast<std::size_t>(plan.world_size);
    if (plan.attention_layout.size() != n)
      add("attention_layout has " + std::to_string(plan.attention_layout.size()) + " ranks, expected " +
          std::to_string(n));
    if (plan.linear_layout.size() != n)
      add("linear_layout has " + std::to_string(plan.linear_layout.size()) + " ranks, expected " +
          std::to_string(n));
    if (plan.ranks.size() != n)
      add("ranks has " + std::to_string(plan.ranks.size()) + " op lists, expected " + std::to_string(n));
    for (std::size_t s = 0; s < plan.sequences.size(); ++s) {
      if (plan.sequences[s].id != static_cast<int>(s))
        add("sequence " + std::to_string(s) + " has id " + std::to_string(plan.sequences[s].id));
    }
  }

  void check_dag() {
    for (const auto& r : plan.ranks) {
      for (std::size_t i = 0; i < r.ops.size(); ++i) {
        const Op& op = r.ops[i];
        if (op.id != static_cast<int>(i))
          add("rank " + std::to_string(r.rank) + ": op at index " + std::to_string(i) + " has id " +
              std::to_string(op.id));
        for (int d : op.deps) {
          if (d < 0 || d >= op.id)
            add("rank " + std::to_string(r.rank) + ": op " + std::to_string(op.id) + " depends on op " +
                std::to_string(d) + ", which is not an earlier op");
        }
      }
    }
  }

  void check_matching() {
    // (src, dst, tag) -> bytes, for sends and recvs separately.
    std::map<std::tuple<int, int, int>, std::int64_t> sends, recvs;
    for (const auto& r : plan.ranks) {
      for (const Op& op : r.ops) {
        if (op.kind != OpKind::send && op.kind != OpKind::recv) continue;
        if (op.peer < 0 || op.peer >= plan.world_size || op.peer == r.rank) {
          add("rank " + std::to_string(r.rank) + ": op " + std::to_string(op.id) + " (" + to_string(op.kind) +
              ") has invalid peer " + std::to_string(op.peer));
          continue;
        }
        auto& table = op.kind == OpKind::send ? sends : recvs;
        const auto key = op.kind == OpKind::send ? std::tuple{r.rank, op.peer, op.tag}
                                                 : std::tuple{op.peer, r.rank, op.tag};
        if (!table.emplace(key, op.bytes).second)
          add("rank " + std::to_string(r.rank) + ": duplicate " + to_string(op.kind) + " tag " +
              std::to_string(op.tag));
        if (op.kind == OpKind::send && op.route.kind == RouteKind::routed) check_route(r.rank, op);
      }
    }
    for (const auto& [key, bytes] : sends) {
      const auto [src, dst, tag] = key;
      auto it = recvs.find(key);
      if (it == recvs.end()) {
        add("send " + std::to_string(src) + " -> " + std::to_string(dst) + " tag " + std::to_string(tag) +
            " has no matching recv on rank " + std::to_string(dst));
      } else if (it->second != bytes) {
        add("send " + std::to_string(src) + " -> " + std::to_string(dst) + " tag " + std::to_string(tag) +
            " carries " + std::to_string(bytes) + " bytes but the recv expects " +
            std::to_string(it->second));
      }
    }
    for (const auto& [key, bytes] : recvs) {
      if (!sends.contains(key)) {
        const auto [src, dst, tag] = key;
        add("recv on rank " + std::to_string(dst) + " from " + std::to_string(src) + " tag " +
            std::to_string(tag) + " has no matching send");
      }
    }
  }

  void check_route(int rank, const Op& op) {
    const Route& r = op.route;
    std::int64_t sum = 0;
    for (auto b : r.part_bytes) sum += b;
    if (r.proxies.size() != r.part_bytes.size() || r.peer_proxies.size() != r.part_bytes.size()) {
      add("rank " + std::to_string(rank) + ": routed send " + std::to_string(op.id) +
          " has mismatched proxy and part lists");
    } else if (sum != op.bytes) {
      add("rank " + std::to_string(rank) + ": routed send " + std::to_string(op.id) + " parts sum to " +
          std::to_string(sum) + " bytes, not " + std::to_string(op.bytes));
    }
    const int g = plan.gpus_per_node;
    for (std::size_t i = 0; i < r.proxies.size() && i < r.peer_proxies.size(); ++i) {
      if (r.proxies[i] / g != rank / g)
        add("rank " + std::to_string(rank) + ": proxy " + std::to_string(r.proxies[i]) + " of send " +
            std::to_string(op.id) + " is not on the source node");
      if (r.peer_proxies[i] / g != op.peer / g)
        add("rank " + std::to_string(rank) + ": peer proxy " + std::to_string(r.peer_proxies[i]) +
            " of send " + std::to_string(op.id) + " is not on the destination node");
    }
  }

  void check_memory() {
    if ((options.token_capacity < 0 && !options.capacity_of_tp_width) || !plan.oom.empty()) return;
    const std::vector<int> tp_width = plan.tensor_parallel_width_per_rank();
    for (const auto* layout : {&plan.attention_layout, &plan.linear_layout}) {
      for (const auto& rl : *layout) {
        const std::int64_t capacity =
            options.capacity_of_tp_width && rl.rank >= 0 && rl.rank < plan.world_size
                ? options.capacity_of_tp_width(tp_width[static_cast<std::size_t>(rl.rank)])
                : options.token_capacity;
        std::map<int, std::int64_t> per_mb;
        for (const auto& s : rl.shards)
          per_mb[plan.sequences.at(static_cast<std::size_t>(s.seq)).micro_batch] += s.size();
        for (const auto& [mb, tokens] : per_mb) {
          if (tokens > capacity) {
            add("rank " + std::to_string(rl.rank) + " holds " + std::to_string(tokens) +
                " tokens in micro-batch " + std::to_string(mb) + ", over its capacity of " +
                std::to_string(capacity) + " and no OOM was reported");
          }
        }
      }
    }
  }
};

}  // namespace

std::vector<std::string> verify(const Plan& plan, const VerifyOptions& options) {
  Checker c{plan, options, {}};
  c.check_shape();
  if (!c.problems.empty()) return c.problems;
  if (!plan.feasible()) return c.problems;  // an OOM plan has no ops to check
  c.check_dag();
  c.check_matching();
  check_collectives(plan, c.problems, options.max_problems);
  check_coverage_and_data(plan, options.heads, c.problems, options.max_problems);
  check_remap(plan, c.problems, options.max_problems);
  c.check_memory();
  return c.problems;
}

}  // namespace zb::plan
