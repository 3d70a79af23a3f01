#include "core/exec/reference/rank_runner.hpp"

#include <algorithm>

#include "core/exec/reference/attention_op.hpp"
#include "core/exec/reference/kv_parcel.hpp"
#include "kernels/gemm.hpp"

namespace zb::reference {
namespace {

bool is_compute(const plan::Op& op) { return op.kind == plan::OpKind::attention || op.kind == plan::OpKind::gemm; }

std::string rank_list(const std::vector<int>& ranks) {
  std::string text;
  for (const int r : ranks) text += (text.empty() ? "" : ", ") + std::to_string(r);
  return text;
}

}  // namespace

RankRunner::RankRunner(const RunInputs& inputs, int rank, Transport& transport)
    : state_(inputs, rank), transport_(transport), relay_(state_), lifetimes_(state_) {
  const auto& ops = inputs.plan.ranks.at(static_cast<std::size_t>(rank)).ops;
  status_.assign(ops.size(), OpStatus::waiting);
  started_at_.assign(ops.size(), 0.0);
  remap_index_.assign(ops.size(), -1);
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const plan::Op& op = ops[i];
    auto bad = [&](const std::string& what) { throw Error(ExitCode::runtime, rank_location(rank), state_.where(op) + ": " + what); };
    if (op.id != static_cast<int>(i)) bad("its id is not its index " + std::to_string(i));
    for (const int d : op.deps)
      if (d < 0 || d >= op.id) bad("depends on op " + std::to_string(d) + ", which is not an earlier op of this rank");
    if ((op.kind == plan::OpKind::send || op.kind == plan::OpKind::recv) &&
        (op.peer < 0 || op.peer >= transport.size() || op.peer == rank)) {
      bad("its peer is not another rank of the world of " + std::to_string(transport.size()));
    }
    if (op.kind == plan::OpKind::recv && !recv_op_of_.try_emplace({op.peer, op.tag}, op.id).second)
      bad("another recv of this rank has the same peer and tag");
  }
}

bool RankRunner::deps_done(const plan::Op& op) const {
  return std::all_of(op.deps.begin(), op.deps.end(),
                     [&](int d) { return status_[static_cast<std::size_t>(d)] == OpStatus::done; });
}

RankResult RankRunner::run() {
  const auto& ops = state_.in.plan.ranks[static_cast<std::size_t>(state_.rank)].ops;
  const std::chrono::milliseconds timeout = state_.in.options.receive_timeout;
  std::size_t first_open = 0;  // ops before it are all done
  while (first_open < ops.size()) {
    bool progress = relay_.pump(transport_);
    check_aborted();
    progress |= collect_kv_messages();
    for (std::size_t i = first_open; i < ops.size(); ++i)
      if (status_[i] != OpStatus::done && !is_compute(ops[i]) && deps_done(ops[i])) progress |= advance_comm(ops[i]);
    while (next_compute_ < ops.size() && (!is_compute(ops[next_compute_]) || status_[next_compute_] == OpStatus::done))
      ++next_compute_;
    if (next_compute_ < ops.size() && deps_done(ops[next_compute_])) {
      run_compute(ops[next_compute_]);
      progress = true;
    }
    while (first_open < ops.size() && status_[first_open] == OpStatus::done) ++first_open;
    if (!progress && first_open < ops.size() && !transport_.wait_for_message(timeout)) stalled();
  }
  say_finished_and_wait_for_all();
  check_no_strays();
  if (const std::string left = relay_.leftovers(); !left.empty()) {
    throw Error(ExitCode::runtime, rank_location(state_.rank),
                "received routed data no recv op took: " + left);
  }
  RankResult result;
  result.rank = state_.rank;
  result.verification = verify_outputs(state_, state_.in.options.tolerance);
  if (!state_.in.options.dump_dir.empty()) dump_outputs(state_, state_.in.options.dump_dir);
  result.events = std::move(state_.events);
  return result;
}

bool RankRunner::advance_comm(const plan::Op& op) {
  const auto i = static_cast<std::size_t>(op.id);
  if (status_[i] == OpStatus::waiting) {
    status_[i] = OpStatus::started;
    started_at_[i] = state_.seconds_since_start();
  }
  switch (op.kind) {
    case plan::OpKind::send: {
      const Bytes payload = pack_kv_parcel(state_, op);
      if (op.route.kind == plan::RouteKind::routed) {
        relay_.send_routed(transport_, op, payload);
      } else {
        transport_.send(op.peer, Tag::make(MessageKind::kv, static_cast<std::uint64_t>(op.tag)), payload);
      }
      state_.record(op, Stream::comm, EventCategory::send, started_at_[i], static_cast<double>(payload.size()));
      status_[i] = OpStatus::done;
      lifetimes_.op_done(state_, op.id);
      return true;
    }
    case plan::OpKind::recv: {
      std::optional<Bytes> payload;
      if (const auto it = arrived_.find(op.id); it != arrived_.end()) {
        payload = std::move(it->second);
        arrived_.erase(it);
      } else {
        payload = relay_.take_assembled(op.peer, op.tag);
      }
      if (!payload) return false;
      unpack_kv_parcel(state_, op, *payload);
      state_.record(op, Stream::comm, EventCategory::recv, started_at_[i], static_cast<double>(payload->size()));
      status_[i] = OpStatus::done;
      lifetimes_.op_done(state_, op.id);
      return true;
    }
    case plan::OpKind::remap: {
      bool progress = false;
      if (remap_index_[i] < 0) {
        start_remap(op);
        progress = true;
      }
      RemapProgress& r = remaps_[static_cast<std::size_t>(remap_index_[i])];
      const std::size_t before = r.waiting.size();
      const RemapEndpoint endpoint{
          state_.rank,
          op.direction == plan::RemapDirection::to_linear ? std::vector<RowStore*>{&state_.out}
                                                          : std::vector<RowStore*>{&state_.q, &state_.kv},
          state_.where(op)};
      r.bytes += receive_remap_rows(transport_, r.tag, r.traffic, r.waiting, endpoint, state_.in.plan.sequences);
      if (r.waiting.empty()) {
        state_.record(op, Stream::comm, EventCategory::remap, started_at_[i], static_cast<double>(r.bytes));
        status_[i] = OpStatus::done;
      }
      return progress || r.waiting.size() != before;
    }
    default:
      return false;
  }
}

bool RankRunner::collect_kv_messages() {
  bool any = false;
  while (std::optional<Message> m = transport_.try_recv_kind(MessageKind::kv)) {
    any = true;
    const auto it = recv_op_of_.find({m->src, static_cast<int>(m->tag.id())});
    const bool expected = it != recv_op_of_.end() && status_[static_cast<std::size_t>(it->second)] != OpStatus::done &&
                          !arrived_.contains(it->second);
    if (!expected) {
      throw Error(ExitCode::runtime, rank_location(state_.rank),
                  "received " + describe(m->tag) + " from rank " + std::to_string(m->src) +
                      ", but none of its recv ops expects it (or it came twice)",
                  "a send to the wrong peer or a duplicate tag in the plan");
    }
    arrived_.emplace(it->second, std::move(m->payload));
  }
  return any;
}

void RankRunner::start_remap(const plan::Op& op) {
  // Both ends name a remap by (micro-batch, direction, how many such remaps came before on their list).
  const auto& ops = state_.in.plan.ranks[static_cast<std::size_t>(state_.rank)].ops;
  std::uint64_t ordinal = 0;
  for (int j = 0; j < op.id; ++j) {
    const plan::Op& o = ops[static_cast<std::size_t>(j)];
    if (o.kind == plan::OpKind::remap && o.micro_batch == op.micro_batch && o.direction == op.direction) ++ordinal;
  }
  RemapProgress r;
  r.tag = Tag::make(MessageKind::remap, (static_cast<std::uint64_t>(op.micro_batch) << 16) |
                                            (static_cast<std::uint64_t>(op.direction) << 15) | ordinal);
  r.traffic = remap_traffic(state_.rank, op.moves, op.direction);
  for (const auto& [peer, ranges] : r.traffic.incoming) r.waiting.push_back(peer);
  const RemapEndpoint endpoint{
      state_.rank,
      op.direction == plan::RemapDirection::to_linear ? std::vector<RowStore*>{&state_.out}
                                                      : std::vector<RowStore*>{&state_.q, &state_.kv},
      state_.where(op)};
  r.bytes = send_remap_rows(transport_, r.tag, r.traffic, endpoint);
  remap_index_[static_cast<std::size_t>(op.id)] = static_cast<int>(remaps_.size());
  remaps_.push_back(std::move(r));
}

void RankRunner::run_compute(const plan::Op& op) {
  const auto i = static_cast<std::size_t>(op.id);
  started_at_[i] = state_.seconds_since_start();
  if (op.kind == plan::OpKind::attention) {
    const double flops = run_attention_op(state_, op);
    state_.record(op, Stream::compute, EventCategory::attention, started_at_[i], 0, flops);
    lifetimes_.op_done(state_, op.id);
  } else {
    // A stand-in for the projection: the CPU GEMM on capped dims with fixed inputs. Its output is not
    // used (Q, K, V come from the generator), it keeps the compute stream's shape.
    const std::int64_t cap = state_.in.options.gemm_max_dim;
    const std::int64_t m = std::clamp<std::int64_t>(op.m, 1, cap), n = std::clamp<std::int64_t>(op.n, 1, cap),
                       k = std::clamp<std::int64_t>(op.k, 1, cap);
    std::vector<float> a(static_cast<std::size_t>(m * k)), b(static_cast<std::size_t>(k * n)), c(static_cast<std::size_t>(m * n));
    for (std::size_t j = 0; j < a.size(); ++j) a[j] = static_cast<float>(j % 7) * 0.125F - 0.375F;
    for (std::size_t j = 0; j < b.size(); ++j) b[j] = static_cast<float>(j % 5) * 0.25F - 0.5F;
    kernels::throw_if_error(kernels::gemm(m, n, k, a, b, c), state_.where(op));
    state_.record(op, Stream::compute, EventCategory::gemm, started_at_[i], 0, 2.0 * static_cast<double>(m * n * k));
  }
  status_[i] = OpStatus::done;
}

void RankRunner::say_finished_and_wait_for_all() {
  for (int r = 0; r < transport_.size(); ++r) {
    if (r == state_.rank) continue;
    transport_.send(r, Tag::make(MessageKind::finished, 0), {});
    unfinished_peers_.push_back(r);
  }
  while (!unfinished_peers_.empty()) {
    bool progress = relay_.pump(transport_);
    while (std::optional<Message> m = transport_.try_recv_kind(MessageKind::finished)) {
      std::erase(unfinished_peers_, m->src);
      progress = true;
    }
    check_aborted();
    check_no_strays();
    if (!unfinished_peers_.empty() && !progress && !transport_.wait_for_message(state_.in.options.receive_timeout)) {
      throw RankStalled(state_.rank,
                        "finished its ops, but ranks " + rank_list(unfinished_peers_) + " did not finish within " +
                            std::to_string(state_.in.options.receive_timeout.count()) + " ms",
                        unfinished_peers_, true);
    }
  }
}

void RankRunner::check_aborted() {
  if (std::optional<Message> m = transport_.try_recv_kind(MessageKind::abort)) {
    throw PeerFailed(ExitCode::runtime, rank_location(state_.rank),
                     "stopped because rank " + std::to_string(m->src) +
                         " failed: " + std::string(reinterpret_cast<const char*>(m->payload.data()), m->payload.size()));
  }
}

void RankRunner::check_no_strays() {
  // Called once every recv and remap of this rank is done: anything of those kinds that still arrives
  // was sent to the wrong rank, or twice.
  collect_kv_messages();
  if (std::optional<Message> m = transport_.try_recv_kind(MessageKind::remap)) {
    throw Error(ExitCode::runtime, rank_location(state_.rank),
                "received " + describe(m->tag) + " from rank " + std::to_string(m->src) +
                    " after its remaps were done, so none of its ops takes it",
                "remap moves that the two ranks' remap ops disagree on");
  }
}

void RankRunner::stalled() const {
  const auto& ops = state_.in.plan.ranks[static_cast<std::size_t>(state_.rank)].ops;
  std::string waits;
  std::vector<int> awaited;
  auto add = [&](const std::string& item) { waits += (waits.empty() ? "" : "; ") + item; };
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const plan::Op& op = ops[i];
    if (status_[i] != OpStatus::started) continue;
    if (op.kind == plan::OpKind::recv) {
      add("recv op " + std::to_string(op.id) + ": KV transfer tag " + std::to_string(op.tag) + " from rank " + std::to_string(op.peer));
      awaited.push_back(op.peer);
    }
    if (op.kind == plan::OpKind::remap && remap_index_[i] >= 0) {
      const auto& peers = remaps_[static_cast<std::size_t>(remap_index_[i])].waiting;
      add("remap op " + std::to_string(op.id) + ": rows from ranks " + rank_list(peers));
      awaited.insert(awaited.end(), peers.begin(), peers.end());
    }
  }
  if (waits.empty()) waits = "nothing it can name (a dependency that cannot complete)";
  throw RankStalled(state_.rank,
                    "waited " + std::to_string(state_.in.options.receive_timeout.count()) +
                        " ms and nothing arrived; it still waits for: " + waits,
                    std::move(awaited), false);
}

}  // namespace zb::reference
