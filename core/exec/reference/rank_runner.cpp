#include "core/exec/reference/rank_runner.hpp"

#include <algorithm>
#include <cstring>

#include "core/exec/reference/all_to_all_v.hpp"
#include "core/exec/reference/gradient_ops.hpp"
#include "core/exec/reference/gradient_verification.hpp"
#include "core/exec/reference/leg_header.hpp"

namespace zb::reference {
namespace {

using lower::Instr;
using lower::InstrKind;

std::string rank_list(const std::vector<int>& ranks) {
  std::string text;
  for (const int r : ranks) text += (text.empty() ? "" : ", ") + std::to_string(r);
  return text;
}
}  // namespace

RankRunner::RankRunner(const RunInputs& inputs, int rank, Transport& transport)
    : state_(inputs, rank), transport_(transport) {
  const lower::RankProgram& mine = inputs.program.ranks.at(static_cast<std::size_t>(rank));
  const int size = static_cast<int>(mine.instrs.size());
  first_backward_ = std::clamp(mine.first_backward, 0, size);
  count_ = inputs.program.backward ? size : first_backward_;
  status_.assign(static_cast<std::size_t>(count_), Status::waiting);
  posted_at_.assign(static_cast<std::size_t>(count_), 0.0);
  check_program();
}

void RankRunner::fail(int id, const std::string& what) const {
  throw Error(ExitCode::runtime, rank_location(state_.rank),
              (id >= 0 ? state_.where(id) + ": " : std::string()) + what);
}

bool RankRunner::deps_done(int id) const {
  const auto& deps = state_.instr(id).deps;
  return std::all_of(deps.begin(), deps.end(),
                     [&](int d) { return status_[static_cast<std::size_t>(d)] == Status::done; });
}

void RankRunner::run_instructions(int begin, int end) {
  const std::chrono::milliseconds timeout = state_.in.options.receive_timeout;
  const auto count = static_cast<std::size_t>(end);
  std::size_t first_open = static_cast<std::size_t>(begin);  // instructions before it are all done
  next_compute_ = first_open;
  while (first_open < count) {
    check_aborted();
    bool progress = collect_arrivals();
    for (std::size_t i = first_open; i < count; ++i) {
      const int id = static_cast<int>(i);
      if (status_[i] != Status::done && !lower::is_compute(state_.instr(id)) && deps_done(id))
        progress |= advance_comm(id);
    }
    while (next_compute_ < count && (!lower::is_compute(state_.instr(static_cast<int>(next_compute_))) ||
                                     status_[next_compute_] == Status::done))
      ++next_compute_;
    if (next_compute_ < count && deps_done(static_cast<int>(next_compute_))) {
      run_compute(static_cast<int>(next_compute_));
      progress = true;
    }
    while (first_open < count && status_[first_open] == Status::done) ++first_open;
    if (!progress && first_open < count && !transport_.wait_for_message(timeout)) stalled();
  }
}

RankResult RankRunner::run() {
  run_instructions(0, first_backward_);
  if (state_.in.program.backward) {
    // The layer barrier of program.hpp: no rank starts its backward before every forward is done. Legs
    // that arrive early for backward recvs are kept meanwhile (collect_arrivals).
    barrier(MessageKind::pass_done, "its forward instructions");
    seed_output_gradients(state_);
    run_instructions(first_backward_, count_);
  }
  barrier(MessageKind::finished, "its instructions");
  collect_arrivals();  // every rank has sent all it will: anything arriving now is a stray (it throws)
  if (state_.in.options.samples_nics()) barrier(MessageKind::drained, "receiving its layer's transfers");
  if (on_layer_done_) on_layer_done_();
  RankResult result;
  result.rank = state_.rank;
  compute_([&] { result.verification = verify_outputs(state_, state_.in.options.tolerance); });
  if (state_.in.program.backward) {
    share_row_statistics(state_, transport_, compute_);
    compute_([&] { result.gradients = verify_gradients(state_); });
  }
  if (!state_.in.options.dump_dir.empty()) dump_outputs(state_, state_.in.options.dump_dir);
  result.events = std::move(state_.events);
  return result;
}

bool RankRunner::advance_comm(int id) {
  const auto i = static_cast<std::size_t>(id);
  bool progress = false;
  if (status_[i] == Status::waiting) {
    status_[i] = Status::posted;
    posted_at_[i] = state_.seconds_since_start();
    progress = true;
  }
  switch (state_.instr(id).kind) {
    case InstrKind::send:
      send_leg(id);
      return true;
    case InstrKind::recv:
      return complete_recv(id) || progress;
    case InstrKind::collective:
      return advance_collective(id) || progress;
    case InstrKind::wait:  // an event join: done once posted
      done(id);
      return true;
    default:
      return progress;
  }
}

void RankRunner::done(int id) {
  status_[static_cast<std::size_t>(id)] = Status::done;
  for (const int m : state_.instr(id).reads) {  // free what no instruction will read any more
    const auto it = state_.buffers.find(m);
    if (it != state_.buffers.end() && --it->second.readers_left <= 0 && it->second.complete)
      state_.buffers.erase(it);
  }
}

bool RankRunner::collect_arrivals() {
  bool any = false;
  while (std::optional<Envelope> m = transport_.try_recv_kind(MessageKind::transfer)) {
    any = true;
    const auto it = recv_of_.find({m->src, m->tag.id()});
    const bool expected = it != recv_of_.end() &&
                          status_[static_cast<std::size_t>(it->second)] != Status::done &&
                          !arrived_.contains(it->second);
    if (!expected) {
      throw Error(ExitCode::runtime, rank_location(state_.rank),
                  "received " + describe(m->tag) + " (" + leg_text(m->payload) + ") from rank " +
                      std::to_string(m->src) +
                      ", but none of its recv instructions expects it (or it came twice)",
                  "a send to the wrong peer, or a key used twice between two ranks");
    }
    arrived_.emplace(it->second, std::move(m->payload));
  }
  while (std::optional<Envelope> m = transport_.try_recv_kind(MessageKind::collective)) {
    any = true;
    const auto it = collective_in_.find({m->src, static_cast<int>(m->tag.id())});
    const bool expected = it != collective_in_.end() && !collective_arrived_.contains(it->second) &&
                          !collective_stored_.contains(it->second);
    if (!expected) {
      throw Error(
          ExitCode::runtime, rank_location(state_.rank),
          "received " + describe(m->tag) + " from rank " + std::to_string(m->src) +
              ", but none of its collective instructions expects rows from that rank (or they came twice)",
          "remap moves that the two ranks disagree on");
    }
    collective_arrived_.emplace(it->second, std::move(m->payload));
  }
  return any;
}

void RankRunner::barrier(MessageKind kind, const std::string& what) {
  for (int r = 0; r < transport_.size(); ++r) {
    if (r == state_.rank) continue;
    transport_.send(r, Tag::make(kind, 0), {});
    unfinished_peers_.push_back(r);
  }
  while (!unfinished_peers_.empty()) {
    bool progress = false;
    while (std::optional<Envelope> m = transport_.try_recv_kind(kind)) {
      std::erase(unfinished_peers_, m->src);
      progress = true;
    }
    check_aborted();
    // Legs arriving now: for a recv still to run they are kept; after the last pass, one has no recv
    // left to take it and throws.
    progress |= collect_arrivals();
    if (!unfinished_peers_.empty() && !progress &&
        !transport_.wait_for_message(state_.in.options.receive_timeout)) {
      throw RankStalled(state_.rank,
                        "finished " + what + ", but ranks " + rank_list(unfinished_peers_) +
                            " did not finish theirs within " +
                            std::to_string(state_.in.options.receive_timeout.count()) + " ms",
                        unfinished_peers_, true);
    }
  }
}

void RankRunner::check_aborted() {
  if (std::optional<Envelope> m = transport_.try_recv_kind(MessageKind::abort)) {
    throw PeerFailed(ExitCode::runtime, rank_location(state_.rank),
                     "stopped because rank " + std::to_string(m->src) + " failed: " +
                         std::string(reinterpret_cast<const char*>(m->payload.data()), m->payload.size()));
  }
}

void RankRunner::stalled() const {
  std::string waits;
  std::vector<int> awaited;
  auto add = [&](const std::string& item) { waits += (waits.empty() ? "" : "; ") + item; };
  for (int id = 0; id < count_; ++id) {
    if (status_[static_cast<std::size_t>(id)] != Status::posted) continue;
    const Instr& in = state_.instr(id);
    if (in.kind == InstrKind::recv) {
      add(state_.where(id) + ": " + describe(Tag::make(MessageKind::transfer, in.key)) + " from rank " +
          std::to_string(in.peer));
      awaited.push_back(in.peer);
    } else if (in.kind == InstrKind::collective) {
      std::vector<int> peers;
      if (const auto it = collectives_.find(id); it != collectives_.end())
        for (const int m : it->second.waiting) peers.push_back(state_.message(m).src);
      add(state_.where(id) + ": rows from ranks " + rank_list(peers));
      awaited.insert(awaited.end(), peers.begin(), peers.end());
    }
  }
  if (waits.empty()) {
    waits = "nothing it can name (a dependency that cannot complete";
    if (next_compute_ < static_cast<std::size_t>(count_))
      waits += ": " + state_.where(static_cast<int>(next_compute_)) + " waits for its deps";
    waits += ")";
  }
  throw RankStalled(state_.rank,
                    "waited " + std::to_string(state_.in.options.receive_timeout.count()) +
                        " ms and nothing arrived; it still waits for: " + waits,
                    std::move(awaited), false);
}

}  // namespace zb::reference
