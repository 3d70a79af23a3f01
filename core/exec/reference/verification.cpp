#include "core/exec/reference/verification.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <stdexcept>

#include "core/exec/reference/rank_location.hpp"

namespace zb::reference {
namespace {

void fnv1a(std::uint64_t& hash, std::span<const float> values) {
  const auto* bytes = reinterpret_cast<const unsigned char*>(values.data());
  for (std::size_t i = 0; i < values.size_bytes(); ++i) {
    hash ^= bytes[i];
    hash *= 0x100000001B3ULL;
  }
}

constexpr std::uint64_t kFnvOffset = 0xCBF29CE484222325ULL;

// Keys per step of the float64 reference: the working tile of K and V it generates at a time.
constexpr std::int64_t kReferenceKeyTile = 256;

// Float64 causal attention of queries [begin, end) of `seq` over keys [0, end). Written apart from the
// kernels on purpose, so that the oracle shares no code with what it checks, and streamed over key tiles
// so that its memory is the shard's rows plus one tile (never a sequence's whole K and V, nor a score
// matrix). Softmax is shift-invariant, and the generator bounds every logit: |q·k|·scale ≤ scale·Σ|q|
// because |k| < 1. Shifting each (row, head) by that bound keeps every exponent in [−2·bound, 0], so one
// pass sums exp(s − bound) exactly as a two-pass max-shifted softmax would, without rescaling: for
// head_dim 16 the bound is at most 16 and the largest term at least e^−32, far from underflow.
std::vector<double> reference_rows(const RankState& state, int seq, std::int64_t begin, std::int64_t end) {
  const AttentionDims& d = state.dims;
  const QkvGenerator& gen = state.in.generator;
  const auto rows = static_cast<std::size_t>(end - begin), heads = static_cast<std::size_t>(d.heads);
  const auto head_dim = static_cast<std::size_t>(d.head_dim),
             kv_width = static_cast<std::size_t>(d.kv_width());
  const std::size_t group = heads / static_cast<std::size_t>(d.kv_heads);  // query heads per kv head (GQA)
  const double scale = 1.0 / std::sqrt(static_cast<double>(d.head_dim));
  std::vector<double> q(rows * heads * head_dim), acc(q.size(), 0.0), sum(rows * heads, 0.0),
      shift(rows * heads, 0.0);
  gen.fill(QkvTensor::q, seq, begin, end, std::span<double>(q));
  for (std::size_t rh = 0; rh < rows * heads; ++rh)
    for (std::size_t i = 0; i < head_dim; ++i) shift[rh] += scale * std::abs(q[rh * head_dim + i]);
  std::vector<double> k(static_cast<std::size_t>(kReferenceKeyTile) * kv_width), v(k.size());
  for (std::int64_t k0 = 0; k0 < end; k0 += kReferenceKeyTile) {
    const std::int64_t k1 = std::min(end, k0 + kReferenceKeyTile);
    const auto tile = static_cast<std::size_t>(k1 - k0) * kv_width;
    gen.fill(QkvTensor::k, seq, k0, k1, std::span<double>(k).first(tile));
    gen.fill(QkvTensor::v, seq, k0, k1, std::span<double>(v).first(tile));
    for (std::int64_t pos = std::max(begin, k0); pos < end; ++pos) {  // rows before k0 see none of the tile
      const auto t = static_cast<std::size_t>(pos - begin);
      const std::int64_t last = std::min(k1, pos + 1);  // causal: keys up to the query's own position
      for (std::size_t h = 0; h < heads; ++h) {
        const std::size_t rh = t * heads + h;
        const double* qrow = &q[rh * head_dim];
        double* out = &acc[rh * head_dim];
        const std::size_t kv_at = (h / group) * head_dim;
        for (std::int64_t key = k0; key < last; ++key) {
          const std::size_t row = static_cast<std::size_t>(key - k0) * kv_width + kv_at;
          double dot = 0;
          for (std::size_t i = 0; i < head_dim; ++i) dot += qrow[i] * k[row + i];
          const double w = std::exp(dot * scale - shift[rh]);
          sum[rh] += w;
          for (std::size_t i = 0; i < head_dim; ++i) out[i] += w * v[row + i];
        }
      }
    }
  }
  for (std::size_t rh = 0; rh < rows * heads; ++rh) {
    if (!(sum[rh] > 0) || !std::isfinite(sum[rh]))  // only a generator with larger values could do this
      throw std::logic_error("the float64 reference's softmax sum of sequence " + std::to_string(seq) +
                             " left the double range; the fixed shift needs |K| < 1");
    for (std::size_t i = 0; i < head_dim; ++i) acc[rh * head_dim + i] /= sum[rh];
  }
  return acc;
}

}  // namespace

RankVerification verify_outputs(const RankState& state, double tolerance) {
  RankVerification result;
  result.checksum = kFnvOffset;
  const AttentionDims& d = state.dims;
  const auto head_dim = static_cast<std::size_t>(d.head_dim);
  for (const layout::Shard& shard : state.in.program.linear_layout.at(static_cast<std::size_t>(state.rank))) {
    if (shard.size() <= 0) continue;
    if (const auto missing = state.out().first_missing(shard.seq, shard.begin, shard.end)) {
      if (result.failure.empty()) {
        result.failure = "sequence " + std::to_string(shard.seq) + " token " + std::to_string(*missing) +
                         " has no attention output on this rank, which holds it in the linear layout "
                         "(no attention block computed it, or a remap move did not bring it)";
      }
      continue;
    }
    const auto got = state.out().rows(shard.seq, shard.begin, shard.end);
    fnv1a(result.checksum, got);
    const std::vector<double> want = reference_rows(state, shard.seq, shard.begin, shard.end);
    for (std::int64_t t = 0; t < shard.size(); ++t) {
      for (int h = 0; h < d.heads; ++h) {
        const std::size_t at =
            (static_cast<std::size_t>(t) * static_cast<std::size_t>(d.heads) + static_cast<std::size_t>(h)) *
            head_dim;
        double diff = 0, scale = 1e-30;
        for (std::size_t i = at; i < at + head_dim; ++i) {
          diff = std::max(diff, std::abs(static_cast<double>(got[i]) - want[i]));
          scale = std::max(scale, std::abs(want[i]));
        }
        const double rel = std::isfinite(diff) ? diff / scale : std::numeric_limits<double>::infinity();
        result.max_rel_error = std::max(result.max_rel_error, rel);
        ++result.rows_checked;
        if (!(rel <= tolerance) && result.failure.empty()) {
          char figures[96];
          std::snprintf(figures, sizeof figures, "relative error %.3g > tolerance %.3g", rel, tolerance);
          result.failure = "sequence " + std::to_string(shard.seq) + " token " +
                           std::to_string(shard.begin + t) + " head " + std::to_string(h) +
                           ": output differs from the float64 reference (" + figures +
                           "; a missing or doubled attention block, or KV from the wrong rank)";
        }
      }
    }
  }
  return result;
}

void dump_outputs(const RankState& state, const std::filesystem::path& root) {
  std::string system;  // the label as a folder name: {"routing":false} must not become a path
  for (const char c : state.in.program.system)
    system += std::isalnum(static_cast<unsigned char>(c)) || c == '-' ? c : '_';
  const auto dir = root / (system.empty() ? std::string("plan") : system);
  std::filesystem::create_directories(dir);
  const auto path = dir / ("rank-" + std::to_string(state.rank) + ".hex");
  std::ofstream out(path);
  std::uint64_t checksum = kFnvOffset;
  char word[24];
  const auto write_rows = [&](const RowStore& store, const layout::Shard& shard) {
    if (shard.size() <= 0 || !store.has(shard.seq, shard.begin, shard.end)) return;
    const auto rows = store.rows(shard.seq, shard.begin, shard.end);
    fnv1a(checksum, rows);
    const auto width = static_cast<std::size_t>(store.width());
    for (std::size_t i = 0; i < rows.size(); ++i) {
      std::uint32_t bits = 0;
      std::memcpy(&bits, &rows[i], sizeof bits);
      std::snprintf(word, sizeof word, "%08x", bits);
      out << word << ((i + 1) % width == 0 ? "\n" : " ");
    }
  };
  const auto& shards = state.in.program.linear_layout.at(static_cast<std::size_t>(state.rank));
  for (const layout::Shard& shard : shards) {
    out << "sequence " << shard.seq << " tokens " << shard.begin << " " << shard.end << "\n";
    write_rows(state.out(), shard);
  }
  if (state.in.program.backward) {  // the gradients of the same rows, after the backward pass
    for (const lower::Tensor t : {lower::Tensor::dQ, lower::Tensor::dK, lower::Tensor::dV}) {
      for (const layout::Shard& shard : shards) {
        out << lower::to_string(t) << " sequence " << shard.seq << " tokens " << shard.begin << " "
            << shard.end << "\n";
        write_rows(state.own.of(t), shard);
      }
    }
  }
  std::snprintf(word, sizeof word, "%016llx", static_cast<unsigned long long>(checksum));
  out << "checksum " << word << "\n";
  if (!out) {
    Location where;
    where.file = path.string();
    throw Error(ExitCode::runtime, where, "could not write the output dump");
  }
}

}  // namespace zb::reference
