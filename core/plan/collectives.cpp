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
