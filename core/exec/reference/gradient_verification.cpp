#include "core/exec/reference/gradient_verification.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <stdexcept>

#include "core/exec/reference/gradient_reference.hpp"
#include "core/exec/reference/wire.hpp"

namespace zb::reference {
namespace {

constexpr std::uint64_t kFnvOffset = 0xCBF29CE484222325ULL;

void fnv1a(std::uint64_t& hash, std::span<const float> values) {
  const auto* bytes = reinterpret_cast<const unsigned char*>(values.data());
  for (std::size_t i = 0; i < values.size_bytes(); ++i) {
    hash ^= bytes[i];
    hash *= 0x100000001B3ULL;
  }
}

// Compares one shard's rows of `tensor` with the reference; the first element beyond its bound becomes
// `failure` (tensor, sequence, token, head, dim, the figures).
void compare(lower::Tensor tensor, const layout::Shard& shard, std::span<const float> got,
             const ReferenceGradient& want, int heads, int head_dim, TensorCheck& check,
             std::string& failure) {
  const auto width = static_cast<std::size_t>(heads * head_dim);
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double error = std::abs(static_cast<double>(got[i]) - want.value[i]);
    const double ratio = error == 0 ? 0 : (want.bound[i] > 0 ? error / want.bound[i] : INFINITY);
    check.max_error = std::max(check.max_error, std::isfinite(error) ? error : INFINITY);
    check.max_reference = std::max(check.max_reference, std::abs(want.value[i]));
    check.worst_ratio = std::max(check.worst_ratio, std::isnan(ratio) ? INFINITY : ratio);
    if (!(ratio <= 1) && failure.empty()) {
      const std::size_t row = i / width, h = (i % width) / static_cast<std::size_t>(head_dim),
                        c = i % static_cast<std::size_t>(head_dim);
      char figures[160];
      std::snprintf(figures, sizeof figures, "%.9g vs %.9g: error %.3g > its rounding bound %.3g",
                    static_cast<double>(got[i]), want.value[i], error, want.bound[i]);
      failure = std::string(lower::to_string(tensor)) + " of sequence " + std::to_string(shard.seq) +
                " token " + std::to_string(shard.begin + static_cast<std::int64_t>(row)) + " head " +
                std::to_string(h) + " dim " + std::to_string(c) + " differs from the float64 reference (" +
                figures + "; a dropped or doubled partial gradient, or one added on the wrong rank)";
    }
  }
  check.rows += shard.size();
}

// Rows [begin, end) of the store that no shard of the rank's linear layout covers, first range only.
std::optional<std::pair<std::int64_t, std::int64_t>> outside(const RowStore::Range& range,
                                                             const std::vector<layout::Shard>& shards) {
  std::int64_t t = range.begin;
  while (t < range.end) {
    const auto covering = std::find_if(shards.begin(), shards.end(), [&](const layout::Shard& s) {
      return s.seq == range.seq && s.begin <= t && t < s.end;
    });
    if (covering == shards.end()) {
      std::int64_t stop = range.end;
      for (const layout::Shard& s : shards)
        if (s.seq == range.seq && s.begin > t) stop = std::min(stop, s.begin);
      return std::pair{t, stop};
    }
    t = covering->end;
  }
  return std::nullopt;
}

}  // namespace

void share_row_statistics(const RankState& state, Transport& transport, const ComputeRunner& compute) {
  if (state.in.gradients == nullptr) return;  // verify_gradients reports it
  GradientReference& reference = *state.in.gradients;
  // Every member of a tensor-parallel group (Hydraulis's replicas) holds its group's rows, and the
  // reference computes every head on each: the group's first member alone gives their statistics, so
  // that the first members' linear layouts tile every sequence once.
  bool counts = true;
  for (const std::vector<int>& group : state.in.program.tensor_parallel_groups) {
    if (std::find(group.begin(), group.end(), state.rank) != group.end())
      counts = group.front() == state.rank;
  }
  ByteWriter w;
  compute([&] {
    for (const layout::Shard& shard :
         state.in.program.linear_layout.at(static_cast<std::size_t>(state.rank))) {
      if (shard.size() <= 0 || !counts) continue;
      const RowStatistics rows = reference.compute(shard.seq, shard.begin, shard.end);
      reference.insert(shard.seq, shard.begin, rows);
      if (state.in.one_process) continue;
      w.put<std::int32_t>(shard.seq);
      w.put<std::int64_t>(shard.begin);
      for (const auto* v : {&rows.lse, &rows.d, &rows.e, &rows.eps_p, &rows.eps_s}) w.put_span<double>(*v);
    }
  });
  const Bytes mine = w.take();
  const Tag tag = Tag::make(MessageKind::result, 2);
  for (int r = 0; r < transport.size(); ++r)
    if (r != state.rank) transport.send(r, tag, mine);
  // Ranks compute their statistics at different speeds (rows × prefix), and all have finished their
  // instructions: the wait is bounded compute, not a stall, so it lasts while the rank is alive.
  const auto heads = static_cast<std::size_t>(state.dims.heads);
  for (int r = 0; r < transport.size(); ++r) {
    if (r == state.rank) continue;
    const Bytes theirs = transport.recv_record(r, tag, state.in.options.receive_timeout);
    ByteReader in(theirs);
    while (!in.at_end()) {
      const auto seq = in.get<std::int32_t>();
      const auto begin = in.get<std::int64_t>();
      RowStatistics rows;
      for (auto* v : {&rows.lse, &rows.d, &rows.e, &rows.eps_p, &rows.eps_s}) {
        const auto bytes = in.get_span_bytes<double>();
        v->resize(bytes.size() / sizeof(double));
        if (!bytes.empty())
          std::memcpy(v->data(), bytes.data(), bytes.size());  // an empty vector's data() may be null
      }
      if (rows.lse.size() % heads != 0)
        throw std::runtime_error("malformed row statistics from rank " + std::to_string(r));
      reference.insert(seq, begin, rows);
    }
  }
}

void TensorCheck::merge(const TensorCheck& other) {
  max_error = std::max(max_error, other.max_error);
  max_reference = std::max(max_reference, other.max_reference);
  worst_ratio = std::max(worst_ratio, other.worst_ratio);
  rows += other.rows;
}

GradientVerification verify_gradients(const RankState& state) {
  GradientVerification result;
  result.ran = true;
  result.checksum = kFnvOffset;
  if (state.in.gradients == nullptr) {
    result.failure = "no float64 gradient reference was set up for this run";
    return result;
  }
  const GradientReference& reference = *state.in.gradients;
  const AttentionDims& d = state.dims;
  const std::vector<layout::Shard>& shards =
      state.in.program.linear_layout.at(static_cast<std::size_t>(state.rank));
  for (const layout::Shard& shard : shards) {
    if (shard.size() <= 0) continue;
    bool complete = true;
    for (const lower::Tensor t : {lower::Tensor::dQ, lower::Tensor::dK, lower::Tensor::dV}) {
      if (const auto missing = state.own.of(t).first_missing(shard.seq, shard.begin, shard.end)) {
        complete = false;
        if (result.failure.empty()) {
          result.failure =
              std::string("sequence ") + std::to_string(shard.seq) + " token " + std::to_string(*missing) +
              " has no " + lower::to_string(t) +
              " on this rank, which holds it in the linear layout (no backward block computed it, its "
              "accumulator never came home, or an inverse remap did not bring it)";
        }
      }
    }
    if (!complete) continue;
    const auto dq = state.own.of(lower::Tensor::dQ).rows(shard.seq, shard.begin, shard.end);
    const auto dk = state.own.of(lower::Tensor::dK).rows(shard.seq, shard.begin, shard.end);
    const auto dv = state.own.of(lower::Tensor::dV).rows(shard.seq, shard.begin, shard.end);
    for (const auto rows : {dq, dk, dv}) fnv1a(result.checksum, rows);
    compare(lower::Tensor::dQ, shard, dq, reference.dq(shard.seq, shard.begin, shard.end), d.heads,
            d.head_dim, result.dq, result.failure);
    const auto [want_dk, want_dv] = reference.dkv(shard.seq, shard.begin, shard.end);
    compare(lower::Tensor::dK, shard, dk, want_dk, d.kv_heads, d.head_dim, result.dk, result.failure);
    compare(lower::Tensor::dV, shard, dv, want_dv, d.kv_heads, d.head_dim, result.dv, result.failure);
  }
  for (const lower::Tensor t : {lower::Tensor::dQ, lower::Tensor::dK, lower::Tensor::dV}) {
    for (const RowStore::Range& range : state.own.of(t).ranges()) {
      if (const auto extra = outside(range, shards); extra && result.failure.empty()) {
        result.failure =
            std::string("holds ") + lower::to_string(t) + " rows of sequence " + std::to_string(range.seq) +
            " tokens [" + std::to_string(extra->first) + ", " + std::to_string(extra->second) +
            ") outside its linear layout: a partial gradient left on (or accumulated on) a rank that "
            "does not own those rows";
      }
    }
  }
  return result;
}

}  // namespace zb::reference
