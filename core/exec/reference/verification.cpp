#include "core/exec/reference/verification.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>

#include "core/exec/reference/rank_location.hpp"
#include "kernels/attention.hpp"

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

// Float64 causal attention of queries [begin, end) of `seq` over keys [0, end).
std::vector<double> reference_rows(const RankState& state, int seq, std::int64_t begin, std::int64_t end) {
  const AttentionDims& d = state.dims;
  const QkvGenerator& gen = state.in.generator;
  std::vector<double> q(static_cast<std::size_t>((end - begin) * d.q_width()));
  std::vector<double> k(static_cast<std::size_t>(end * d.kv_width())), v(k.size());
  gen.fill(QkvTensor::q, seq, begin, end, std::span<double>(q));
  gen.fill(QkvTensor::k, seq, 0, end, std::span<double>(k));
  gen.fill(QkvTensor::v, seq, 0, end, std::span<double>(v));
  const kernels::AttentionShape shape{d.heads, d.kv_heads, d.head_dim, end - begin, end, end - begin};
  kernels::AttentionBlockDesc block;
  block.q_count = end - begin;
  block.kv_count = end;
  block.q_position = begin;
  block.kv_position = 0;
  block.mask = kernels::AttentionMask::causal;
  std::vector<double> o(q.size()), lse(static_cast<std::size_t>((end - begin) * d.heads));
  kernels::throw_if_error(kernels::attention_forward(shape, std::span(&block, 1), q, k, v, o, lse),
                          "rank " + std::to_string(state.rank) + " float64 reference of sequence " + std::to_string(seq));
  return o;
}

}  // namespace

RankVerification verify_outputs(const RankState& state, double tolerance) {
  RankVerification result;
  result.checksum = kFnvOffset;
  const AttentionDims& d = state.dims;
  const auto head_dim = static_cast<std::size_t>(d.head_dim);
  for (const plan::Shard& shard : state.in.plan.linear_layout.at(static_cast<std::size_t>(state.rank)).shards) {
    if (shard.size() <= 0) continue;
    if (const auto missing = state.out.first_missing(shard.seq, shard.begin, shard.end)) {
      if (result.failure.empty()) {
        result.failure = "sequence " + std::to_string(shard.seq) + " token " +
                         std::to_string(*missing) +
                         " has no attention output on this rank, which holds it in the linear layout "
                         "(no attention block computed it, or a remap move did not bring it)";
      }
      continue;
    }
    const auto got = state.out.rows(shard.seq, shard.begin, shard.end);
    fnv1a(result.checksum, got);
    const std::vector<double> want = reference_rows(state, shard.seq, shard.begin, shard.end);
    for (std::int64_t t = 0; t < shard.size(); ++t) {
      for (int h = 0; h < d.heads; ++h) {
        const std::size_t at = (static_cast<std::size_t>(t) * static_cast<std::size_t>(d.heads) + static_cast<std::size_t>(h)) * head_dim;
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
          result.failure = "sequence " + std::to_string(shard.seq) +
                           " token " + std::to_string(shard.begin + t) + " head " + std::to_string(h) +
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
  for (const char c : state.in.plan.system) system += std::isalnum(static_cast<unsigned char>(c)) || c == '-' ? c : '_';
  const auto dir = root / (system.empty() ? std::string("plan") : system);
  std::filesystem::create_directories(dir);
  const auto path = dir / ("rank-" + std::to_string(state.rank) + ".hex");
  std::ofstream out(path);
  std::uint64_t checksum = kFnvOffset;
  char word[24];
  for (const plan::Shard& shard : state.in.plan.linear_layout.at(static_cast<std::size_t>(state.rank)).shards) {
    out << "sequence " << shard.seq << " tokens " << shard.begin << " " << shard.end << "\n";
    if (shard.size() <= 0 || !state.out.has(shard.seq, shard.begin, shard.end)) continue;
    const auto rows = state.out.rows(shard.seq, shard.begin, shard.end);
    fnv1a(checksum, rows);
    const auto width = static_cast<std::size_t>(state.out.width());
    for (std::size_t i = 0; i < rows.size(); ++i) {
      std::uint32_t bits = 0;
      std::memcpy(&bits, &rows[i], sizeof bits);
      std::snprintf(word, sizeof word, "%08x", bits);
      out << word << ((i + 1) % width == 0 ? "\n" : " ");
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
