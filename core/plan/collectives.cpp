#include "core/plan/collectives.hpp"

#include <algorithm>
#include <map>
#include <set>

namespace zb::plan {
namespace {

// "[0, 1, 2, 3]"; long lists are cut, the message only has to say which collective it is.
std::string ranks_str(const std::vector<int>& ranks) {
  std::string out = "[";
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    if (i == 8) {
      out += ", ... (" + std::to_string(ranks.size()) + " ranks)";
      break;
    }
    out += (i > 0 ? ", " : "") + std::to_string(ranks[i]);
  }
  return out + "]";
}

std::string describe(const Op& op) {
  return std::string(to_string(op.collective)) + " over ranks " + ranks_str(op.collective_ranks);
}

// The first op seen with a tag stands for the collective; the others must agree with it.
struct Collective {
  int rank = 0;
  const Op* op = nullptr;
  std::set<int> present;  // ranks whose op agrees with it
};

// An MoE exchange (all_to_all_v) states one part per member, none to itself, summing to its bytes; any
// other collective states none. Empty when the op is well formed.
std::string exchange_problem(const Op& op, int rank) {
  if (op.collective != CollectiveKind::all_to_all_v) {
    return op.peer_bytes.empty() ? "" : "peer_bytes belong to an all_to_all_v only";
  }
  if (op.peer_bytes.size() != op.collective_ranks.size()) {
    return "peer_bytes has " + std::to_string(op.peer_bytes.size()) + " parts for " +
           std::to_string(op.collective_ranks.size()) + " ranks";
  }
  std::int64_t sum = 0;
  for (std::size_t i = 0; i < op.peer_bytes.size(); ++i) {
    if (op.peer_bytes[i] < 0) return "peer_bytes[" + std::to_string(i) + "] is negative";
    if (op.collective_ranks[i] == rank && op.peer_bytes[i] != 0)
      return "peer_bytes sends " + std::to_string(op.peer_bytes[i]) + " bytes to the rank itself";
    sum += op.peer_bytes[i];
  }
  if (sum != op.bytes)
    return "peer_bytes sum to " + std::to_string(sum) + " but bytes is " + std::to_string(op.bytes);
  return "";
}

}  // namespace

void check_collectives(const Plan& plan, std::vector<std::string>& problems, std::size_t max_problems) {
  auto add = [&](std::string p) {
    if (problems.size() < max_problems) problems.push_back(std::move(p));
  };
  std::map<int, Collective> by_tag;
  for (const auto& r : plan.ranks) {
    for (const Op& op : r.ops) {
      if (op.kind != OpKind::collective) continue;
      const std::string where = "rank " + std::to_string(r.rank) + " op " + std::to_string(op.id) + " (" +
                                to_string(op.collective) + " tag " + std::to_string(op.tag) + ")";
      std::set<int> distinct;
      bool valid = true;
      for (int x : op.collective_ranks) {
        if (x < 0 || x >= plan.world_size) {
          add(where + ": names rank " + std::to_string(x) + ", outside world_size " +
              std::to_string(plan.world_size));
          valid = false;
        } else if (!distinct.insert(x).second) {
          add(where + ": lists rank " + std::to_string(x) + " twice");
          valid = false;
        }
      }
      if (!distinct.contains(r.rank)) {
        add(where + ": its ranks " + ranks_str(op.collective_ranks) + " do not include rank " +
            std::to_string(r.rank) + " itself");
        continue;
      }
      if (!valid) continue;
      if (const std::string wrong = exchange_problem(op, r.rank); !wrong.empty()) add(where + ": " + wrong);
      auto [it, first] = by_tag.try_emplace(op.tag, Collective{r.rank, &op, {}});
      Collective& c = it->second;
      if (!first && (c.op->collective != op.collective || c.op->collective_ranks != op.collective_ranks)) {
        add(where + ": is " + describe(op) + ", but rank " + std::to_string(c.rank) + " op " +
            std::to_string(c.op->id) + " with the same tag is " + describe(*c.op));
      } else if (!c.present.insert(r.rank).second) {
        add(where + ": rank " + std::to_string(r.rank) + " has two collective ops with tag " +
            std::to_string(op.tag));
      }
    }
  }
  for (const auto& [tag, c] : by_tag) {
    for (int x : c.op->collective_ranks) {
      if (!c.present.contains(x)) {
        add("collective tag " + std::to_string(tag) + " (" + describe(*c.op) +
            ") has no matching op on rank " + std::to_string(x));
      }
    }
  }
}

}  // namespace zb::plan
