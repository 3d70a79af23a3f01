#include "core/exec/cuda/rendezvous_replay.hpp"

#include <algorithm>

namespace zb::cuda {

using lower::Instr;
using lower::InstrKind;

namespace {

class Replay {
 public:
  Replay(const lower::Program& program, const RankPosts& posts) : p_(program), posts_(posts) {
    const auto n = static_cast<std::size_t>(p_.world_size);
    done_.resize(n);
    posted_.resize(n);
    compute_.resize(n);
    waits_.resize(n);
    next_compute_.assign(n, 0);
    next_post_.assign(n, 0);
    launched_.assign(n, false);
    for (std::size_t r = 0; r < n; ++r) {
      const auto& list = p_.ranks[r].instrs;
      done_[r].assign(list.size(), false);
      posted_[r].assign(list.size(), false);
      for (std::size_t i = 0; i < list.size(); ++i) {
        if (list[i].pass == Pass::fwd) ++forward_left_;
        if (lower::is_compute(list[i])) compute_[r].push_back(static_cast<int>(i));
        if (list[i].kind == InstrKind::wait) waits_[r].push_back(static_cast<int>(i));
      }
    }
  }

  ReplayResult run() {
    for (bool progress = true; progress;) {
      progress = false;
      for (int r = 0; r < p_.world_size; ++r) progress |= advance(r);
    }
    ReplayResult result;
    for (int r = 0; r < p_.world_size; ++r) {
      const auto& list = p_.ranks[static_cast<std::size_t>(r)].instrs;
      for (std::size_t i = 0; i < list.size(); ++i) {
        if (done_[static_cast<std::size_t>(r)][i]) continue;
        int at = static_cast<int>(i);
        const auto& rank_posts = posts_.at(static_cast<std::size_t>(r));
        const std::size_t post = next_post_[static_cast<std::size_t>(r)];
        if (post < rank_posts.size()) at = rank_posts[post].front();
        result.complete = false;
        result.stuck.emplace_back(r, at);
        if (result.explanation.empty())
          result.explanation =
              lower::describe(p_, r, at) + " never completes (" +
              (launched_[static_cast<std::size_t>(r)] ? "posted, its peer never posts the counterpart"
                                                      : "its dependencies never finish") +
              ")";
        break;
      }
    }
    return result;
  }

 private:
  bool is_done(int r, int i) const { return done_[static_cast<std::size_t>(r)][static_cast<std::size_t>(i)]; }
  void finish(int r, int i) {
    auto&& slot = done_[static_cast<std::size_t>(r)][static_cast<std::size_t>(i)];
    if (slot) return;
    slot = true;
    if (p_.instr(r, i).pass == Pass::fwd) --forward_left_;
  }

  bool can_start(int r, int i) const {
    const Instr& in = p_.instr(r, i);
    if (in.pass == Pass::bwd && forward_left_ > 0) return false;  // the layer barrier
    return std::all_of(in.deps.begin(), in.deps.end(), [&](int d) { return is_done(r, d); });
  }

  // A posted call meets its counterpart: the peer's matching transfer, or every member of a collective.
  bool met(int r, int i) const {
    const Instr& in = p_.instr(r, i);
    if (in.kind == InstrKind::collective) {
      const lower::Collective& c = p_.collectives[static_cast<std::size_t>(in.collective)];
      for (std::size_t m = 0; m < c.ranks.size(); ++m)
        if (!posted_[static_cast<std::size_t>(c.ranks[m])][static_cast<std::size_t>(c.instrs[m])])
          return false;
      return true;
    }
    return posted_.at(static_cast<std::size_t>(in.peer)).at(static_cast<std::size_t>(in.match));
  }

  bool advance(int r) {
    const auto ri = static_cast<std::size_t>(r);
    bool progress = false;
    for (const int w : waits_[ri])
      if (!is_done(r, w) && can_start(r, w)) finish(r, w), progress = true;
    while (next_compute_[ri] < compute_[ri].size() && can_start(r, compute_[ri][next_compute_[ri]])) {
      finish(r, compute_[ri][next_compute_[ri]++]);
      progress = true;
    }
    const auto& rank_posts = posts_.at(ri);
    while (next_post_[ri] < rank_posts.size()) {
      const std::vector<int>& post = rank_posts[next_post_[ri]];
      if (!launched_[ri]) {
        if (!std::all_of(post.begin(), post.end(), [&](int i) { return can_start(r, i); })) break;
        launched_[ri] = true;
        for (const int i : post) posted_[ri][static_cast<std::size_t>(i)] = true;
        progress = true;
      }
      bool all = true;
      for (const int i : post) {
        if (is_done(r, i)) continue;
        if (!met(r, i)) {
          all = false;
          continue;
        }
        const Instr& in = p_.instr(r, i);
        finish(r, i);
        if (in.kind == InstrKind::collective) {
          const lower::Collective& c = p_.collectives[static_cast<std::size_t>(in.collective)];
          for (std::size_t m = 0; m < c.ranks.size(); ++m) finish(c.ranks[m], c.instrs[m]);
        } else {
          finish(in.peer, in.match);
        }
        progress = true;
      }
      if (!all) break;
      ++next_post_[ri];
      launched_[ri] = false;
    }
    return progress;
  }

  const lower::Program& p_;
  const RankPosts& posts_;
  std::vector<std::vector<bool>> done_, posted_;
  std::vector<std::vector<int>> compute_, waits_;
  std::vector<std::size_t> next_compute_, next_post_;
  std::vector<bool> launched_;
  long forward_left_ = 0;
};

}  // namespace

ReplayResult rendezvous_replay(const lower::Program& program, const RankPosts& posts) {
  return Replay(program, posts).run();
}

RankPosts posts_of(const GlobalOrder& order) {
  RankPosts posts(order.issue.size());
  for (std::size_t r = 0; r < order.issue.size(); ++r) {
    for (const IssueItem& item : order.issue[r]) {
      if (item.compute) continue;
      std::vector<int> post;
      for (const NcclCall& c : item.calls) post.push_back(c.instr);
      posts[r].push_back(std::move(post));
    }
  }
  return posts;
}

RankPosts naive_list_posts(const lower::Program& program) {
  RankPosts posts(program.ranks.size());
  for (std::size_t r = 0; r < program.ranks.size(); ++r) {
    const auto& list = program.ranks[r].instrs;
    for (std::size_t i = 0; i < list.size(); ++i) {
      const InstrKind k = list[i].kind;
      if (k == InstrKind::send || k == InstrKind::recv || k == InstrKind::collective)
        posts[r].push_back({static_cast<int>(i)});
    }
  }
  return posts;
}

}  // namespace zb::cuda
