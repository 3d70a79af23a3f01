#include "core/strategies/plan_builder.hpp"

#include <algorithm>
#include <numeric>

#include "core/strategies/predict.hpp"

namespace zb {

using plan::Level;
using plan::Op;
using plan::OpKind;

PlanBuilder::PlanBuilder(const CostModel& cost, std::string system, std::string strategy) : cost_(cost) {
  plan_.system = std::move(system);
  plan_.strategy = std::move(strategy);
  plan_.world_size = cost.cluster().world_size();
  plan_.gpus_per_node = cost.cluster().gpus_per_node;
  const auto n = static_cast<std::size_t>(plan_.world_size);
  plan_.attention_layout.resize(n);
  plan_.linear_layout.resize(n);
  plan_.ranks.resize(n);
  for (int r = 0; r < plan_.world_size; ++r) {
    plan_.attention_layout[static_cast<std::size_t>(r)].rank = r;
    plan_.linear_layout[static_cast<std::size_t>(r)].rank = r;
    plan_.ranks[static_cast<std::size_t>(r)].rank = r;
  }
}

int PlanBuilder::add_sequence(std::int64_t length, int micro_batch) {
  const int id = static_cast<int>(plan_.sequences.size());
  plan_.sequences.push_back({id, length, micro_batch});
  plan_.micro_batches = std::max(plan_.micro_batches, micro_batch + 1);
  return id;
}

void PlanBuilder::set_micro_batches(int n) {
  plan_.micro_batches = n;
}

int PlanBuilder::add_group(Level level, std::vector<int> ranks, std::vector<int> sequences, int micro_batch,
                           bool with_layout) {
  plan::Group g;
  g.id = static_cast<int>(plan_.groups.size());
  g.level = level;
  g.sharding = ranks.size() == 1 ? plan::Sharding::whole : plan::Sharding::zigzag;
  g.micro_batch = micro_batch;
  const int parts = static_cast<int>(ranks.size());
  for (std::size_t i = 0; with_layout && i < sequences.size(); ++i) {
    const int seq = sequences[i];
    const auto len = plan_.sequences[static_cast<std::size_t>(seq)].length;
    for (int pos = 0; pos < parts; ++pos) {
      auto& shards =
          plan_.attention_layout[static_cast<std::size_t>(ranks[static_cast<std::size_t>(pos)])].shards;
      const auto mine = plan::owned_shards(seq, len, parts, pos);
      shards.insert(shards.end(), mine.begin(), mine.end());
    }
  }
  g.ranks = std::move(ranks);
  g.sequences = std::move(sequences);
  plan_.groups.push_back(std::move(g));
  return plan_.groups.back().id;
}

void PlanBuilder::add_attention_shards(int rank, const std::vector<plan::Shard>& shards) {
  auto& mine = plan_.attention_layout[static_cast<std::size_t>(rank)].shards;
  mine.insert(mine.end(), shards.begin(), shards.end());
}

int PlanBuilder::add_op(int rank, Op op) {
  if (compute_only_ && op.kind != OpKind::attention && op.kind != OpKind::gemm) return -1;
  auto& ops = plan_.ranks[static_cast<std::size_t>(rank)].ops;
  op.id = static_cast<int>(ops.size());
  ops.push_back(std::move(op));
  return ops.back().id;
}

static std::int64_t chunk_size(std::int64_t len, int parts, int chunk) {
  return plan::zigzag_chunk(0, len, parts, chunk).size();
}

namespace {

// A group's sequences as (length, padded chunk size u = ⌈s/2P⌉), so that a chunk's size is two min()s
// instead of a division.
struct ChunkedSequence {
  std::int64_t length = 0;
  std::int64_t unit = 0;
  [[nodiscard]] double chunk(int c) const {
    return static_cast<double>(std::min((c + 1) * unit, length) - std::min(c * unit, length));
  }
};

std::vector<ChunkedSequence> chunked_sequences(const plan::Plan& plan, const plan::Group& g) {
  const std::int64_t n = 2LL * static_cast<std::int64_t>(g.ranks.size());
  std::vector<ChunkedSequence> out;
  out.reserve(g.sequences.size());
  for (int seq : g.sequences) {
    const auto len = plan.sequences[static_cast<std::size_t>(seq)].length;
    out.push_back({len, (len + n - 1) / n});
  }
  return out;
}

// Per sequence, the pairs of each of position i's two query chunks (a = chunk i, b = chunk 2P−1−i)
// against position j's key chunks; each chunk is one query tile of the varlen call.
PlanBuilder::StepPairs step_pairs_of(const std::vector<ChunkedSequence>& sequences, int p, int i, int j) {
  double pairs = 0;
  EquivalentQTokens q;
  for (const ChunkedSequence& s : sequences) {
    const double ci = s.chunk(i);
    if (ci == 0) continue;  // chunk i empty, so chunk 2P−1−i (later) too: no pairs, and add(0, ·) is a no-op
    const double cbi = s.chunk(2 * p - 1 - i);
    double a = 0, b = 0;
    if (j == i) {
      a = ci * (ci + 1) / 2;
      b = cbi * (cbi + 1) / 2 + cbi * ci;
    } else if (j < i) {
      a = ci * s.chunk(j);
      b = cbi * s.chunk(j);
    } else {
      b = cbi * (s.chunk(j) + s.chunk(2 * p - 1 - j));
    }
    pairs += a + b;
    q.add(a, ci);
    q.add(b, cbi);
  }
  return {pairs, q.value()};
}

}  // namespace

std::int64_t PlanBuilder::zigzag_rank_tokens(const plan::Group& g, int pos) const {
  const int p = static_cast<int>(g.ranks.size());
  std::int64_t tokens = 0;
  for (int seq : g.sequences) {
    const auto len = plan_.sequences[static_cast<std::size_t>(seq)].length;
    tokens += chunk_size(len, p, pos) + chunk_size(len, p, 2 * p - 1 - pos);
  }
  return tokens;
}

int PlanBuilder::add_local_attention(int group, const std::vector<int>& sequences, std::vector<int> deps) {
  const plan::Group& g = plan_.groups[static_cast<std::size_t>(group)];  // add_op never touches groups
  Op op;
  op.kind = OpKind::attention;
  op.group = group;
  op.micro_batch = g.micro_batch;
  op.name = "attn";
  EquivalentQTokens q;
  for (int seq : sequences) {
    const auto len = plan_.sequences[static_cast<std::size_t>(seq)].length;
    op.blocks.push_back({seq, 0, len, 0, len, plan::Mask::causal, {}});
    const double pairs = static_cast<double>(len) * static_cast<double>(len + 1) / 2;
    op.pairs += pairs;
    q.add(pairs, static_cast<double>(len));
  }
  op.q_tokens = q.value();
  op.deps = std::move(deps);
  return op.pairs > 0 ? add_op(g.ranks[0], std::move(op)) : -1;
}

std::vector<std::vector<int>> PlanBuilder::add_attention(int group, const std::vector<int>& ready,
                                                         const RouteFn& route, const StepHook& after_step) {
  // A copy: the hook may add groups.
  const plan::Group g = plan_.groups[static_cast<std::size_t>(group)];
  const int p = static_cast<int>(g.ranks.size());
  std::vector<std::vector<int>> attn(static_cast<std::size_t>(p));
  auto ready_deps = [&](int pos) {
    const int d = ready.empty() ? -1 : ready[static_cast<std::size_t>(pos)];
    return d >= 0 ? std::vector<int>{d} : std::vector<int>{};
  };

  if (p == 1) {
    const int id = add_local_attention(group, g.sequences, ready_deps(0));
    if (id >= 0) attn[0].push_back(id);
    return attn;
  }

  auto rank_at = [&](int pos) { return g.ranks[static_cast<std::size_t>(((pos % p) + p) % p)]; };
  const std::vector<ChunkedSequence> chunked = chunked_sequences(plan_, g);
  std::vector<std::int64_t> owner_tokens(static_cast<std::size_t>(p));  // what each position's KV holds
  for (int pos = 0; pos < p; ++pos) owner_tokens[static_cast<std::size_t>(pos)] = zigzag_rank_tokens(g, pos);
  // A position's pairs against an earlier position's keys are the same for every earlier position, term by
  // term, and so against every later one: a sequence's chunks are u = ⌈s/2P⌉ long up to its last nonempty
  // one, so where query chunk i (or 2P−1−i) holds tokens, every key chunk before it holds exactly u. So
  // position i's P − 1 steps take two sums over the sequences (`earlier`, `later`) instead of P − 1: a ring
  // over 128 GPUs asked P² of them.
  std::vector<StepPairs> earlier(static_cast<std::size_t>(p)), later(static_cast<std::size_t>(p));
  for (int pos = 0; pos < p; ++pos) {
    if (pos > 0) earlier[static_cast<std::size_t>(pos)] = step_pairs_of(chunked, p, pos, 0);
    if (pos < p - 1) later[static_cast<std::size_t>(pos)] = step_pairs_of(chunked, p, pos, p - 1);
  }
  auto add_step = [&](int pos, int step, std::vector<int> deps) {
    const int kv_pos = ((pos - step) % p + p) % p;
    Op op;
    op.kind = OpKind::attention;
    op.group = group;
    op.step = step;
    op.micro_batch = g.micro_batch;
    op.name = "attn";
    op.zigzag_kv_rank = rank_at(kv_pos);
    const StepPairs step_pairs = kv_pos == pos  ? step_pairs_of(chunked, p, pos, pos)
                                 : kv_pos < pos ? earlier[static_cast<std::size_t>(pos)]
                                                : later[static_cast<std::size_t>(pos)];
    op.pairs = step_pairs.pairs;
    op.q_tokens = step_pairs.q_tokens;
    op.deps = std::move(deps);
    if (op.pairs <= 0) return;
    const int id = add_op(rank_at(pos), std::move(op));
    attn[static_cast<std::size_t>(pos)].push_back(id);
    if (after_step) after_step(pos, step, id);
  };

  for (int pos = 0; pos < p; ++pos) add_step(pos, 0, ready_deps(pos));
  std::vector<int> last_recv(static_cast<std::size_t>(p), -1);
  std::vector<int> last_send(static_cast<std::size_t>(p), -1);
  for (int step = 1; step < p; ++step) {
    std::vector<int> recv_now(static_cast<std::size_t>(p), -1);
    for (int pos = 0; pos < p && !compute_only_; ++pos) {
      // At step t, position pos forwards the KV it used at step t−1 (owner pos−t+1) to pos+1.
      const int owner_pos = ((pos - step + 1) % p + p) % p;
      const int src = rank_at(pos), dst = rank_at(pos + 1);
      const auto bytes = static_cast<std::int64_t>(
          cost_.kv_bytes(static_cast<double>(owner_tokens[static_cast<std::size_t>(owner_pos)])));
      const int tag = next_tag_++;
      Op send;
      send.kind = OpKind::send;
      send.group = group;
      send.step = step;
      send.micro_batch = g.micro_batch;
      send.name = "kv";
      send.peer = dst;
      send.tag = tag;
      send.bytes = bytes;
      send.kv_owner = rank_at(owner_pos);
      // Like TransformerEngine, step t's send starts once step t−1's send and recv have both completed
      // (one KV buffer in flight per direction).
      send.deps = step == 1 ? ready_deps(pos)
                            : std::vector<int>{last_send[static_cast<std::size_t>(pos)],
                                               last_recv[static_cast<std::size_t>(pos)]};
      if (route && src / plan_.gpus_per_node != dst / plan_.gpus_per_node)
        send.route = route(src, dst, bytes, step);
      Op recv = send;
      recv.kind = OpKind::recv;
      recv.peer = src;
      recv.route = {};
      const int next_pos = (pos + 1) % p;
      recv.deps = ready_deps(next_pos);
      last_send[static_cast<std::size_t>(pos)] = add_op(src, std::move(send));
      recv_now[static_cast<std::size_t>(next_pos)] = add_op(dst, std::move(recv));
    }
    for (int pos = 0; pos < p; ++pos) add_step(pos, step, {recv_now[static_cast<std::size_t>(pos)]});
    last_recv = recv_now;
  }
  return attn;
}

int PlanBuilder::add_qkv_gemm(int rank, std::int64_t tokens, std::vector<int> deps, int micro_batch) {
  const CostModel::GemmShape qkv = cost_.layer_gemms()[0];
  Op op;
  op.kind = OpKind::gemm;
  op.name = qkv.name;
  op.micro_batch = micro_batch;
  op.m = tokens;
  op.n = static_cast<std::int64_t>(qkv.n);
  op.k = static_cast<std::int64_t>(qkv.k);
  op.deps = std::move(deps);
  return add_op(rank, std::move(op));
}

int PlanBuilder::add_output_gemms(int rank, std::int64_t tokens, std::vector<int> deps, int micro_batch) {
  // The cost model's shapes after QKV (O, gate + up, down): the GEMMs it prices are the ones planned.
  const auto shapes = cost_.layer_gemms();
  int last = -1;
  for (std::size_t g = 1; g < shapes.size(); ++g) {
    const CostModel::GemmShape& s = shapes[g];
    Op op;
    op.kind = OpKind::gemm;
    op.name = s.name;
    op.micro_batch = micro_batch;
    op.m = tokens;
    op.n = static_cast<std::int64_t>(s.n);
    op.k = static_cast<std::int64_t>(s.k);
    op.deps = last >= 0 ? std::vector<int>{last} : deps;
    last = add_op(rank, std::move(op));
  }
  return last;
}

std::vector<int> PlanBuilder::add_remap(const std::vector<plan::RemapMove>& moves,
                                        plan::RemapDirection direction,
                                        const std::vector<std::vector<int>>& deps, double bytes_per_token,
                                        int micro_batch) {
  const auto n = static_cast<std::size_t>(plan_.world_size);
  if (compute_only_) return std::vector<int>(n, -1);
  std::vector<Op> ops(n);
  for (const auto& mv : moves) {
    const int from = direction == plan::RemapDirection::to_linear ? mv.src : mv.dst;
    const int to = direction == plan::RemapDirection::to_linear ? mv.dst : mv.src;
    const auto bytes = static_cast<std::int64_t>(bytes_per_token * static_cast<double>(mv.range.size()));
    ops[static_cast<std::size_t>(from)].moves.push_back(mv);
    ops[static_cast<std::size_t>(from)].bytes_out += bytes;
    ops[static_cast<std::size_t>(to)].moves.push_back(mv);
    ops[static_cast<std::size_t>(to)].bytes_in += bytes;
  }
  std::vector<int> ids(n, -1);
  for (std::size_t r = 0; r < n; ++r) {
    if (ops[r].moves.empty()) continue;
    ops[r].kind = OpKind::remap;
    ops[r].direction = direction;
    ops[r].micro_batch = micro_batch;
    ops[r].name = direction == plan::RemapDirection::to_linear ? "remap to linear" : "remap to attention";
    ops[r].deps = deps[r];
    ids[r] = add_op(static_cast<int>(r), std::move(ops[r]));
  }
  return ids;
}

void PlanBuilder::add_linear_shards(int rank, const std::vector<plan::Shard>& shards) {
  auto& mine = plan_.linear_layout[static_cast<std::size_t>(rank)].shards;
  mine.insert(mine.end(), shards.begin(), shards.end());
  linear_set_ = true;
}

void PlanBuilder::add_remap_moves(const std::vector<plan::RemapMove>& moves) {
  plan_.remap.insert(plan_.remap.end(), moves.begin(), moves.end());
}

void PlanBuilder::add_info(const std::string& key, nlohmann::json value) {
  plan_.info[key] = std::move(value);
}

plan::Plan PlanBuilder::finish() {
  plan::Plan p = finish_unpredicted();
  predict(p, cost_, passes_);
  return p;
}

plan::Plan PlanBuilder::finish_unpredicted() {
  if (!linear_set_) plan_.linear_layout = plan_.attention_layout;
  return std::move(plan_);
}

plan::Plan oom_plan(const CostModel& cost, std::string system, std::string strategy,
                    const std::vector<std::int64_t>& lengths, std::vector<plan::OomReport> oom) {
  PlanBuilder b(cost, std::move(system), std::move(strategy));
  for (auto len : lengths) b.add_sequence(len, 0);
  plan::Plan p = b.finish();
  p.oom = std::move(oom);
  return p;
}

}  // namespace zb
