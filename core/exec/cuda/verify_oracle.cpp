#include "core/exec/cuda/verify_oracle.hpp"

#include <algorithm>
#include <cstdio>
#include <limits>
#include <optional>
#include <tuple>
#include <type_traits>

#include "core/common/error.hpp"
#include "kernels/attention_backward.hpp"
#include "kernels/gpucheck/elementwise.hpp"
#include "kernels/half.hpp"

namespace zb::cuda {

using kernels::gpucheck::Tolerance;
using lower::Tensor;
using reference::QkvTensor;

namespace {

// The bf16 tolerances of kernels/gpucheck (docs/KERNELS.md): O of either kernel; LSE of the own kernels
// (absolute) and of cuDNN; cuDNN's gradients.
constexpr Tolerance kOutput{0, 2e-2, 1e-2};
constexpr Tolerance kOwnLse{1e-3, 0, 0};
constexpr Tolerance kCudnnLse{2e-3, 1e-3, 0};
constexpr Tolerance kGradient{0, 3e-2, 1.5e-2};

std::optional<QkvTensor> generated_tensor(Tensor t) {
  switch (t) {
    case Tensor::Q:
      return QkvTensor::q;
    case Tensor::K:
      return QkvTensor::k;
    case Tensor::V:
      return QkvTensor::v;
    case Tensor::dO:
      return QkvTensor::d_o;
    default:
      return std::nullopt;
  }
}

// Rows [begin, end) of a generated tensor as the GPU holds them: bf16, and as float64 of those bits.
std::vector<double> rounded_rows(const QkvGenerator& g, QkvTensor t, int seq, std::int64_t begin,
                                 std::int64_t end) {
  const int heads = t == QkvTensor::k || t == QkvTensor::v ? g.dims().kv_heads : g.dims().heads;
  std::vector<float> rows(static_cast<std::size_t>((end - begin) * heads * g.dims().head_dim));
  g.fill(t, seq, begin, end, rows);
  std::vector<double> out(rows.size());
  for (std::size_t i = 0; i < rows.size(); ++i)
    out[i] = kernels::bf16_bits_to_float(kernels::float_to_bf16_bits(rows[i]));
  return out;
}

std::vector<std::uint16_t> to_bf16(const std::vector<double>& values) {
  std::vector<std::uint16_t> bits(values.size());
  for (std::size_t i = 0; i < values.size(); ++i)
    bits[i] = kernels::float_to_bf16_bits(static_cast<float>(values[i]));
  return bits;
}

template <typename T>
std::vector<double> widen(const std::vector<T>& values) {
  std::vector<double> out(values.size());
  for (std::size_t i = 0; i < values.size(); ++i) {
    if constexpr (std::is_same_v<T, std::uint16_t>)
      out[i] = kernels::bf16_bits_to_float(values[i]);
    else
      out[i] = static_cast<double>(values[i]);
  }
  return out;
}

// Packed Q, K and V of every block, all from the generator: what the blocks must see.
struct PackedValues {
  std::vector<double> q, k, v;
};
PackedValues expected_inputs(const AttentionOperands& a, const QkvGenerator& g) {
  const auto& s = a.packed.shape;
  const auto qw = static_cast<std::size_t>(s.heads * s.head_dim),
             kw = static_cast<std::size_t>(s.kv_heads * s.head_dim);
  PackedValues p{std::vector<double>(static_cast<std::size_t>(s.q_tokens) * qw),
                 std::vector<double>(static_cast<std::size_t>(s.kv_tokens) * kw),
                 std::vector<double>(static_cast<std::size_t>(s.kv_tokens) * kw)};
  for (std::size_t i = 0; i < a.packed.blocks.size(); ++i) {
    const layout::AttentionBlock& b = a.packed.blocks[i];
    const kernels::AttentionBlockDesc& d = a.packed.descs[i];
    const auto q = rounded_rows(g, QkvTensor::q, b.seq, b.q0, b.q1);
    std::copy(q.begin(), q.end(),
              p.q.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(d.q_row) * qw));
    for (const auto& [t, into] : {std::pair{QkvTensor::k, &p.k}, std::pair{QkvTensor::v, &p.v}}) {
      const auto rows = rounded_rows(g, t, b.seq, b.k0, b.k1);
      std::copy(rows.begin(), rows.end(),
                into->begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(d.kv_row) * kw));
    }
  }
  return p;
}

void throw_if(const kernels::Status& status, const char* what) {
  if (!status.ok())
    throw Error(ExitCode::runtime, Location{},
                std::string("backend cuda: the float64 oracle (") + what + "): " + status.message());
}

}  // namespace

std::vector<std::uint16_t> generated_payload(const lower::Message& message, const AttentionDims& dims,
                                             const QkvGenerator& generator) {
  const Payload payload = payload_of(message, dims);
  std::vector<std::uint16_t> bits(static_cast<std::size_t>(payload.bytes / 2), 0);
  if (!payload.rows) return bits;
  for (std::size_t i = 0; i < message.slices.size(); ++i) {
    const lower::Slice& s = message.slices[i];
    const auto t = generated_tensor(s.tensor);
    if (!t || s.rows() <= 0) continue;
    const auto rows = to_bf16(rounded_rows(generator, *t, s.seq, s.begin, s.end));
    std::copy(rows.begin(), rows.end(), bits.begin() + payload.slice_offset[i] / 2);
  }
  return bits;
}

HostOperands host_operands(const AttentionOperands& a, const QkvGenerator& g) {
  const auto& s = a.packed.shape;
  const auto kw = static_cast<std::size_t>(s.kv_heads * s.head_dim);
  const PackedValues all = expected_inputs(a, g);
  HostOperands h;
  h.q = to_bf16(all.q);
  std::vector<double> k(all.k.size(), 0.0), v(all.v.size(), 0.0);
  for (const auto& [runs, from, into] : {std::tuple{&a.k, &all.k, &k}, std::tuple{&a.v, &all.v, &v}}) {
    for (const OperandRun& r : *runs) {
      if (r.message >= 0) continue;  // copied in by the pass
      const auto first = static_cast<std::ptrdiff_t>(static_cast<std::size_t>(r.packed_row) * kw);
      std::copy(from->begin() + first,
                from->begin() + first + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(r.rows) * kw),
                into->begin() + first);
    }
  }
  h.k = to_bf16(k);
  h.v = to_bf16(v);
  if (!a.backward) return h;
  // The saved activations: each block's rows attend causally over their sequence's whole prefix.
  const auto qw = static_cast<std::size_t>(s.heads * s.head_dim), heads = static_cast<std::size_t>(s.heads);
  std::vector<double> o(all.q.size(), 0.0), d_o(all.q.size(), 0.0);
  h.lse.assign(static_cast<std::size_t>(s.out_rows) * heads, -std::numeric_limits<float>::infinity());
  for (std::size_t i = 0; i < a.packed.blocks.size(); ++i) {
    const layout::AttentionBlock& b = a.packed.blocks[i];
    const kernels::AttentionBlockDesc& d = a.packed.descs[i];
    if (b.q1 <= b.q0) continue;
    const kernels::AttentionShape row_shape{s.heads, s.kv_heads, s.head_dim, b.q1 - b.q0, b.q1, b.q1 - b.q0};
    const kernels::AttentionBlockDesc prefix{0, b.q1 - b.q0, 0, b.q1, b.q0, 0, kernels::AttentionMask::causal,
                                             0};
    const auto q = rounded_rows(g, QkvTensor::q, b.seq, b.q0, b.q1);
    const auto kp = rounded_rows(g, QkvTensor::k, b.seq, 0, b.q1),
               vp = rounded_rows(g, QkvTensor::v, b.seq, 0, b.q1);
    std::vector<double> ob(q.size()), lb(static_cast<std::size_t>(b.q1 - b.q0) * heads);
    throw_if(kernels::attention_forward(row_shape, std::span(&prefix, 1), std::span<const double>(q),
                                        std::span<const double>(kp), std::span<const double>(vp),
                                        std::span<double>(ob), std::span<double>(lb)),
             "the rows' full-prefix forward");
    const auto dob = rounded_rows(g, QkvTensor::d_o, b.seq, b.q0, b.q1);
    const auto row0 = static_cast<std::size_t>(d.out_row);
    std::copy(ob.begin(), ob.end(), o.begin() + static_cast<std::ptrdiff_t>(row0 * qw));
    std::copy(dob.begin(), dob.end(), d_o.begin() + static_cast<std::ptrdiff_t>(row0 * qw));
    for (std::size_t j = 0; j < lb.size(); ++j) h.lse[row0 * heads + j] = static_cast<float>(lb[j]);
  }
  h.o = to_bf16(o);
  h.d_o = to_bf16(d_o);
  return h;
}

InstrCheck check_attention(const AttentionOperands& a, const HostOperands& written,
                           const DeviceResults& results, const QkvGenerator& g, bool cudnn,
                           const std::string& where) {
  const auto& s = a.packed.shape;
  const PackedValues in = expected_inputs(a, g);
  const std::int64_t q_row = static_cast<std::int64_t>(s.heads) * s.head_dim,
                     kv_row = static_cast<std::int64_t>(s.kv_heads) * s.head_dim;
  struct Compared {
    const char* name;
    std::vector<double> gpu, ref;
    Tolerance tolerance;
    std::int64_t row;
  };
  std::vector<Compared> compared;
  if (!a.backward) {
    std::vector<double> o(in.q.size(), 0.0),
        lse(static_cast<std::size_t>(s.out_rows * s.heads), -std::numeric_limits<double>::infinity());
    throw_if(kernels::attention_forward(s, a.packed.descs, std::span<const double>(in.q),
                                        std::span<const double>(in.k), std::span<const double>(in.v),
                                        std::span<double>(o), std::span<double>(lse)),
             "forward");
    compared.push_back({"O", widen(results.o), std::move(o), kOutput, q_row});
    compared.push_back({"LSE", widen(results.lse), std::move(lse), cudnn ? kCudnnLse : kOwnLse, s.heads});
  } else {
    std::vector<double> dq(in.q.size(), 0.0), dk(in.k.size(), 0.0), dv(in.v.size(), 0.0);
    const auto o = widen(written.o), d_o = widen(written.d_o), lse = widen(written.lse);
    throw_if(kernels::attention_backward(s, a.packed.descs, std::span<const double>(in.q),
                                         std::span<const double>(in.k), std::span<const double>(in.v),
                                         std::span<const double>(o), std::span<const double>(d_o),
                                         std::span<const double>(lse), std::span<double>(dq),
                                         std::span<double>(dk), std::span<double>(dv)),
             "backward");
    compared.push_back({"dQ", widen(results.dq), std::move(dq), kGradient, q_row});
    compared.push_back({"dK", widen(results.dk), std::move(dk), kGradient, kv_row});
    compared.push_back({"dV", widen(results.dv), std::move(dv), kGradient, kv_row});
  }
  InstrCheck check;
  for (const Compared& c : compared) {
    const auto r = kernels::gpucheck::compare_elementwise(c.name, c.gpu, c.ref, c.tolerance, c.row);
    check.elements += static_cast<std::int64_t>(c.ref.size());
    check.worst_ratio = std::max(check.worst_ratio, r.worst_ratio);
    if (!r.passed && check.failure.empty())
      check.failure =
          where + ": " + r.detail + " (tolerance " + kernels::gpucheck::describe(c.tolerance) + ")";
  }
  return check;
}

}  // namespace zb::cuda

namespace zb::cuda {

std::vector<char> RankChecks::encode() const {
  char head[96];
  const int n = std::snprintf(head, sizeof head, "%d %lld %.17g\n", instructions,
                              static_cast<long long>(elements), worst_ratio);
  std::vector<char> bytes(head, head + n);
  bytes.insert(bytes.end(), failure.begin(), failure.end());
  return bytes;
}

RankChecks RankChecks::decode(const std::vector<char>& bytes) {
  const std::string text(bytes.begin(), bytes.end());
  const std::size_t newline = text.find('\n');
  RankChecks r;
  long long elements = 0;
  if (newline == std::string::npos || std::sscanf(text.substr(0, newline).c_str(), "%d %lld %lg",
                                                  &r.instructions, &elements, &r.worst_ratio) != 3)
    throw Error(ExitCode::runtime, Location{},
                "backend cuda: a rank's correctness-pass summary is malformed: '" + text + "'");
  r.elements = elements;
  r.failure = text.substr(newline + 1);
  return r;
}

RankChecks sum_checks(const std::vector<InstrCheck>& checks) {
  RankChecks r;
  for (const InstrCheck& c : checks) {
    ++r.instructions;
    r.elements += c.elements;
    r.worst_ratio = std::max(r.worst_ratio, c.worst_ratio);
    if (r.failure.empty()) r.failure = c.failure;
  }
  return r;
}

std::string verdict(const std::vector<RankChecks>& ranks, bool backward) {
  std::vector<Problem> failures;
  RankChecks all;
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    if (!ranks[r].failure.empty())
      failures.push_back({Location{}, "rank " + std::to_string(r) + ": " + ranks[r].failure, ""});
    all.instructions += ranks[r].instructions;
    all.elements += ranks[r].elements;
    all.worst_ratio = std::max(all.worst_ratio, ranks[r].worst_ratio);
  }
  if (!failures.empty()) {
    failures.front().hint =
        "the GPU computed attention outputs the float64 oracle does not give for the rows the plan sends: a "
        "kernel, a "
        "receive buffer or a transfer is wrong (ZB_CUDA_VERIFY=off runs the timing without this check)";
    throw Error(ExitCode::runtime, std::move(failures));
  }
  char ratio[32];
  std::snprintf(ratio, sizeof ratio, "%.3g", all.worst_ratio);
  return std::string("verified on the GPU: ") + std::to_string(all.instructions) +
         " attention instructions (" + (backward ? "O, LSE, dQ, dK, dV" : "O, LSE") +
         ") against the float64 oracle, " + std::to_string(all.elements) + " elements, worst error " + ratio +
         " of its bf16 tolerance";
}

}  // namespace zb::cuda
